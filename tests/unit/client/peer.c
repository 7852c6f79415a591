/* The scripted peer: see peer.h. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "peer.h"

static int read_full(int fd, uint8_t *p, size_t n)
{
	while (n) {
		ssize_t r = read(fd, p, n);
		if (r <= 0) {
			if (r < 0 && errno == EINTR)
				continue;
			return -1;
		}
		p += r;
		n -= (size_t)r;
	}
	return 0;
}

int peer_recv(struct peer *p, uint8_t *buf, size_t cap, np_fcall *f)
{
	if (read_full(p->fd, buf, 4) < 0)
		return -1;
	uint32_t size = np_frame_size(buf);
	if (size < NP_HDRSZ || size > cap || read_full(p->fd, buf + 4, size - 4) < 0)
		return -1;
	if (np_decode(buf, size, NP_9P2000L, 0, f, NULL) < 0)
		return -1;
	pthread_mutex_lock(&p->lock);
	if (p->nreq < sizeof p->tags / sizeof p->tags[0])
		p->tags[p->nreq] = f->tag;
	p->nreq++;
	pthread_mutex_unlock(&p->lock);
	return 0;
}

void peer_send_raw(struct peer *p, const void *buf, size_t len)
{
	const uint8_t *b = buf;
	while (len) {
		ssize_t w = send(p->fd, b, len, MSG_NOSIGNAL);
		if (w <= 0)
			return;
		b += w;
		len -= (size_t)w;
	}
}

void peer_send(struct peer *p, const np_fcall *f)
{
	static __thread uint8_t buf[1 << 20];
	int n = np_encode(f, NP_9P2000L, buf, sizeof buf);
	if (n > 0)
		peer_send_raw(p, buf, (size_t)n);
}

static void *peer_main(void *arg)
{
	struct peer *p = arg;
	uint8_t *buf = malloc(1 << 20);
	np_fcall t;
	if (peer_recv(p, buf, 1 << 20, &t) == 0 && t.type == NP_TVERSION) {
		np_fcall r = {.type = NP_RVERSION, .tag = t.tag};
		r.version.msize = p->msize < t.version.msize ? p->msize : t.version.msize;
		r.version.version = np_strz(p->version ? p->version : "9P2000.L");
		peer_send(p, &r);
		while (peer_recv(p, buf, 1 << 20, &t) == 0)
			if (p->fn(p, &t) < 0)
				break;
	}
	free(buf);
	shutdown(p->fd, SHUT_RDWR);
	return NULL;
}

np_client *peer_start(struct peer *p, peer_fn fn, const struct np_client_opts *o, int *err)
{
	int sv[2];
	if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv) < 0)
		return NULL;
	p->fd = sv[1];
	p->fn = fn;
	if (!p->msize)
		p->msize = 65536;
	pthread_mutex_init(&p->lock, NULL);
	pthread_create(&p->th, NULL, peer_main, p);
	np_client *c = NULL;
	char msg[256];
	*err = np_client_connect_fd(sv[0], sv[0], o, &c, msg, sizeof msg);
	return c;
}

void peer_join(struct peer *p)
{
	pthread_join(p->th, NULL);
	close(p->fd);
	pthread_mutex_destroy(&p->lock);
}

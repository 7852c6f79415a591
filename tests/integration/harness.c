#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "harness.h"

static struct th *th_new(np_server *s)
{
	int sv[2];
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) < 0)
		return NULL;
	struct th *t = calloc(1, sizeof *t);
	t->tx = malloc(TH_BUFSZ);
	t->rx = malloc(TH_BUFSZ);
	t->srv = s;
	t->fd = sv[0];
	t->d = NP_9P2000L;
	t->msize = TH_BUFSZ;
	if (np_server_add_fds(s, sv[1], sv[1], "test") < 0) {
		close(sv[0]);
		close(sv[1]);
		free(t->tx);
		free(t->rx);
		free(t);
		return NULL;
	}
	return t;
}

struct th *th_start(const struct np_fs_ops *ops, void *fs, const struct np_server_opts *o)
{
	struct np_server_opts def = {.loops = 1, .workers = 2};
	np_server *s = np_server_new(ops, fs, o ? o : &def);
	if (!s)
		return NULL;
	/* A listener-less server stops after its last session; tests open and
	 * close sessions freely, so keep one idle socketpair end as a listener
	 * stand-in: a real listening socket on an abstract address. */
	char err[128];
	char addr[64];
	static int seq;
	snprintf(addr, sizeof addr, "unix:@ninep-test-%d-%d", (int)getpid(), seq++);
	if (np_server_listen(s, addr, err, sizeof err) < 0 || np_server_start(s) < 0) {
		np_server_free(s);
		return NULL;
	}
	return th_new(s);
}

struct th *th_connect(struct th *parent)
{
	return th_new(parent->srv);
}

void th_close(struct th *t)
{
	close(t->fd);
	free(t->tx);
	free(t->rx);
	free(t);
}

void th_stop(struct th *t)
{
	np_server *s = t->srv;
	th_close(t);
	np_server_free(s);
}

int th_send_raw(struct th *t, const void *buf, size_t len)
{
	const uint8_t *p = buf;
	while (len) {
		ssize_t n = send(t->fd, p, len, MSG_NOSIGNAL);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

int th_send(struct th *t, const np_fcall *f)
{
	int n = np_encode(f, t->d, t->tx, TH_BUFSZ);
	if (n < 0)
		return n;
	return th_send_raw(t, t->tx, (size_t)n);
}

static int read_full(struct th *t, uint8_t *p, size_t len, int timeout_ms)
{
	while (len) {
		struct pollfd pf = {.fd = t->fd, .events = POLLIN};
		int r = poll(&pf, 1, timeout_ms);
		if (r == 0)
			return -ETIMEDOUT;
		if (r < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		ssize_t n = read(t->fd, p, len);
		if (n == 0)
			return -ECONNRESET;
		if (n < 0) {
			if (errno == EINTR || errno == EAGAIN)
				continue;
			return -ECONNRESET;
		}
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

int th_recv(struct th *t, int timeout_ms)
{
	int r = read_full(t, t->rx, 4, timeout_ms);
	if (r < 0)
		return r;
	uint32_t size = np_frame_size(t->rx);
	if (size < NP_HDRSZ || size > TH_BUFSZ)
		return -EPROTO;
	r = read_full(t, t->rx + 4, size - 4, timeout_ms);
	if (r < 0)
		return r;
	if (np_decode(t->rx, size, t->d, 0, &t->r, NULL) < 0)
		return -EPROTO;
	return 0;
}

int th_rpc(struct th *t, const np_fcall *f)
{
	int r = th_send(t, f);
	return r < 0 ? r : th_recv(t, 5000);
}

int th_err(const struct th *t)
{
	if (t->r.type == NP_RLERROR)
		return (int)t->r.rlerror.ecode;
	if (t->r.type == NP_RERROR)
		return t->r.rerror.ecode ? (int)t->r.rerror.ecode : np_strerrno(t->r.rerror.ename);
	return 0;
}

int th_version(struct th *t, uint32_t msize, const char *version)
{
	np_fcall f = {.type = NP_TVERSION, .tag = NP_NOTAG};
	f.version.msize = msize;
	f.version.version = np_strz(version);
	int r = th_rpc(t, &f);
	if (r < 0)
		return r;
	if (t->r.type != NP_RVERSION)
		return -EPROTO;
	int d = np_dialect_parse(t->r.version.version.s, t->r.version.version.len);
	if (d >= 0)
		t->d = (enum np_dialect)d;
	t->msize = t->r.version.msize;
	return 0;
}

int th_attach(struct th *t, uint32_t fid, const char *uname, uint32_t n_uname, const char *aname)
{
	np_fcall f = {.type = NP_TATTACH, .tag = 1};
	f.tattach.fid = fid;
	f.tattach.afid = NP_NOFID;
	f.tattach.uname = np_strz(uname);
	f.tattach.aname = np_strz(aname);
	f.tattach.n_uname = n_uname;
	int r = th_rpc(t, &f);
	return r < 0 ? r : th_err(t);
}

int th_walk(struct th *t, uint32_t fid, uint32_t newfid, int n, const char *const *names)
{
	np_fcall f = {.type = NP_TWALK, .tag = 2};
	f.twalk.fid = fid;
	f.twalk.newfid = newfid;
	f.twalk.nwname = (uint16_t)n;
	for (int i = 0; i < n; i++)
		f.twalk.wname[i] = np_strz(names[i]);
	int r = th_rpc(t, &f);
	return r < 0 ? r : th_err(t);
}

int th_clunk(struct th *t, uint32_t fid)
{
	np_fcall f = {.type = NP_TCLUNK, .tag = 3};
	f.tclunk.fid = fid;
	int r = th_rpc(t, &f);
	return r < 0 ? r : th_err(t);
}

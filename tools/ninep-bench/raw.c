/* The transport's limit: a trivial echo peer in a forked process, and a
 * client that replays one 9P operation's exchange sizes against it with the
 * same depth, one write() per request (never batched, like a 9P client).
 *
 * Request frame: size[4] type[1] tag[2] rsize[4] padding; the peer answers
 * each with a frame of rsize bytes: size[4] type[1] tag[2] zeros. */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "bench.h"

#define RAW_BUF (9u << 20) /* above the largest msize (4 MiB) twice */

struct nb_raw {
	pid_t pid;
	np_addr addr;
	char addrstr[NP_ADDR_STRMAX];
	int lfd;
};

static void put32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)v;
	p[1] = (uint8_t)(v >> 8);
	p[2] = (uint8_t)(v >> 16);
	p[3] = (uint8_t)(v >> 24);
}

static int write_all(int fd, const uint8_t *p, size_t n)
{
	while (n) {
		ssize_t w = send(fd, p, n, MSG_NOSIGNAL);
		if (w < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		p += w;
		n -= (size_t)w;
	}
	return 0;
}

/* ---- the echo peer ----------------------------------------------------- */

static void *echo_conn(void *arg)
{
	int fd = (int)(intptr_t)arg;
	uint8_t *in = malloc(RAW_BUF), *out = calloc(1, RAW_BUF);
	size_t len = 0;
	if (!in || !out)
		goto done;
	for (;;) {
		ssize_t r = read(fd, in + len, RAW_BUF - len);
		if (r <= 0) {
			if (r < 0 && errno == EINTR)
				continue;
			break;
		}
		len += (size_t)r;
		size_t off = 0;
		while (len - off >= 11) {
			uint32_t size = np_frame_size(in + off);
			if (size < 11 || size > RAW_BUF / 2)
				goto done;
			if (len - off < size)
				break;
			uint32_t rsize = np_frame_size(in + off + 7);
			if (rsize < 7 || rsize > RAW_BUF)
				goto done;
			put32(out, rsize);
			memcpy(out + 4, in + off + 4, 3);
			if (write_all(fd, out, rsize) < 0)
				goto done;
			off += size;
		}
		memmove(in, in + off, len - off);
		len -= off;
	}
done:
	free(in);
	free(out);
	close(fd);
	return NULL;
}

static void echo_main(int lfd)
{
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	for (;;) {
		struct pollfd p = {.fd = lfd, .events = POLLIN};
		if (poll(&p, 1, -1) < 0 && errno != EINTR)
			_exit(1);
		np_peer peer;
		int fd = np_accept(lfd, &peer);
		if (fd < 0)
			continue;
		fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK);
		pthread_t th;
		if (pthread_create(&th, NULL, echo_conn, (void *)(intptr_t)fd) == 0)
			pthread_detach(th);
		else
			close(fd);
	}
}

struct nb_raw *nb_raw_start(const np_addr *kind, const char *tmpdir, char *err, size_t n)
{
	struct nb_raw *r = calloc(1, sizeof *r);
	static unsigned seq;
	if (!r)
		return NULL;
	if (kind->kind == NP_ADDR_UNIX) {
		r->addr.kind = NP_ADDR_UNIX;
		snprintf(r->addr.path, sizeof r->addr.path, "%s/raw.%ld.%u.sock", tmpdir,
			 (long)getpid(), seq++);
	} else if (kind->kind == NP_ADDR_TCP) {
		r->addr.kind = NP_ADDR_TCP;
		snprintf(r->addr.host, sizeof r->addr.host, "%s",
			 strchr(kind->host, ':') ? "::1" : "127.0.0.1");
		snprintf(r->addr.port, sizeof r->addr.port, "0");
	} else {
		snprintf(err, n, "the raw baseline supports unix and tcp addresses only");
		free(r);
		return NULL;
	}
	r->lfd = np_listen(&r->addr, NULL, err, n);
	if (r->lfd < 0) {
		free(r);
		return NULL;
	}
	if (r->addr.kind == NP_ADDR_TCP)
		np_addr_local(r->lfd, &r->addr);
	np_addr_format(&r->addr, r->addrstr, sizeof r->addrstr);
	fflush(NULL);
	r->pid = fork();
	if (r->pid == 0) {
		echo_main(r->lfd);
		_exit(0);
	}
	if (r->pid < 0) {
		snprintf(err, n, "fork: %s", strerror(errno));
		close(r->lfd);
		free(r);
		return NULL;
	}
	return r;
}

pid_t nb_raw_pid(const struct nb_raw *r)
{
	return r->pid;
}

const char *nb_raw_addr(const struct nb_raw *r)
{
	return r->addrstr;
}

void nb_raw_stop(struct nb_raw *r)
{
	if (!r)
		return;
	kill(r->pid, SIGKILL);
	waitpid(r->pid, NULL, 0);
	close(r->lfd);
	np_unlisten(&r->addr);
	free(r);
}

/* ---- the replaying client ---------------------------------------------- */

struct raw_slot {
	unsigned step;
	uint64_t t_sub;
};

struct raw_conn {
	struct nb_raw *raw;
	const struct nb_shape *shape;
	unsigned depth;
	int fd, cpu;
	uint64_t started, limit;
	unsigned active;
	int err;
	volatile int *stop;
	pthread_barrier_t *go;
	pthread_t th;
	struct raw_slot *slots;
	uint8_t *tx, *rx;
	struct nb_run run;
	uint64_t t0, t1, cpu0, cpu1;
};

static int raw_send(struct raw_conn *rc, unsigned slot)
{
	struct raw_slot *s = &rc->slots[slot];
	const struct nb_exch *x = &rc->shape->e[s->step];
	put32(rc->tx, x->tsize);
	rc->tx[4] = 0;
	rc->tx[5] = (uint8_t)slot;
	rc->tx[6] = (uint8_t)(slot >> 8);
	put32(rc->tx + 7, x->rsize);
	s->t_sub = nb_now_ns();
	return write_all(rc->fd, rc->tx, x->tsize);
}

static int may_start(struct raw_conn *rc)
{
	return !rc->err && !*rc->stop && (!rc->limit || rc->started < rc->limit);
}

static void start(struct raw_conn *rc, unsigned slot)
{
	rc->slots[slot].step = 0;
	rc->started++;
	rc->active++;
	if (raw_send(rc, slot) < 0) {
		rc->err = -EPIPE;
		rc->active--;
	}
}

static void *raw_main(void *arg)
{
	struct raw_conn *rc = arg;
	size_t len = 0;
	nb_pin_self_thread(rc->cpu);
	pthread_barrier_wait(rc->go);
	rc->cpu0 = nb_thread_cpu_ns();
	rc->t0 = nb_now_ns();
	for (unsigned k = 0; k < rc->depth && may_start(rc); k++)
		start(rc, k);
	while (rc->active > 0 && !rc->err) {
		ssize_t r = read(rc->fd, rc->rx + len, RAW_BUF - len);
		if (r <= 0) {
			if (r < 0 && errno == EINTR)
				continue;
			rc->err = -ECONNRESET;
			break;
		}
		len += (size_t)r;
		size_t off = 0;
		while (len - off >= 7) {
			uint32_t size = np_frame_size(rc->rx + off);
			if (len - off < size)
				break;
			unsigned slot = rc->rx[off + 5] | (unsigned)rc->rx[off + 6] << 8;
			off += size;
			if (slot >= rc->depth) {
				rc->err = -EPROTO;
				break;
			}
			struct raw_slot *s = &rc->slots[slot];
			nb_lat_add(&rc->run, nb_now_ns() - s->t_sub);
			rc->run.reqs++;
			if (++s->step < rc->shape->n) {
				if (raw_send(rc, slot) < 0)
					rc->err = -EPIPE;
				continue;
			}
			rc->run.ops++;
			rc->active--;
			if (may_start(rc))
				start(rc, slot);
		}
		memmove(rc->rx, rc->rx + off, len - off);
		len -= off;
	}
	rc->t1 = nb_now_ns();
	rc->cpu1 = nb_thread_cpu_ns();
	pthread_barrier_wait(rc->go);
	return NULL;
}

int nb_raw_run(struct nb_raw *raw, const struct nb_shape *shape, unsigned conns, unsigned depth,
	       double secs, uint64_t count, int cpu, struct nb_run *out)
{
	memset(out, 0, sizeof *out);
	if (!shape->n)
		return -EINVAL;
	struct raw_conn *rcs = calloc(conns, sizeof *rcs);
	volatile int stop = 0;
	pthread_barrier_t go;
	int err = 0;
	if (!rcs)
		return -ENOMEM;
	pthread_barrier_init(&go, NULL, conns + 1);
	uint32_t maxt = 0;
	for (unsigned i = 0; i < shape->n; i++)
		if (shape->e[i].tsize > maxt)
			maxt = shape->e[i].tsize;
	for (unsigned i = 0; i < conns; i++) {
		struct raw_conn *rc = &rcs[i];
		char e[256];
		int wfd;
		rc->raw = raw;
		rc->shape = shape;
		rc->depth = depth;
		rc->cpu = cpu;
		rc->stop = &stop;
		rc->go = &go;
		rc->limit = count ? (count + conns - 1) / conns : 0;
		rc->slots = calloc(depth, sizeof *rc->slots);
		rc->tx = calloc(1, maxt);
		rc->rx = malloc(RAW_BUF);
		if (!rc->slots || !rc->tx || !rc->rx || np_dial(&raw->addr, &rc->fd, &wfd, e, sizeof e) < 0) {
			fprintf(stderr, "ninep-bench: raw peer: %s\n", e);
			exit(1);
		}
	}
	struct nb_mon mon = {.pid = raw->pid};
	for (unsigned i = 0; i < conns; i++)
		pthread_create(&rcs[i].th, NULL, raw_main, &rcs[i]);
	nb_mon_begin(&mon);
	pthread_barrier_wait(&go);
	if (!count) {
		struct timespec ts = {(time_t)secs, (long)((secs - (double)(time_t)secs) * 1e9)};
		while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
			;
		stop = 1;
	}
	pthread_barrier_wait(&go);
	nb_mon_end(&mon, out);
	uint64_t first = UINT64_MAX, last = 0;
	for (unsigned i = 0; i < conns; i++) {
		struct raw_conn *rc = &rcs[i];
		pthread_join(rc->th, NULL);
		if (rc->t0 < first)
			first = rc->t0;
		if (rc->t1 > last)
			last = rc->t1;
		out->client_ns += rc->cpu1 - rc->cpu0;
		nb_run_merge(out, &rc->run);
		nb_run_free(&rc->run);
		if (rc->err && !err)
			err = rc->err;
		close(rc->fd);
		free(rc->slots);
		free(rc->tx);
		free(rc->rx);
	}
	pthread_barrier_destroy(&go);
	free(rcs);
	out->secs = (double)(last - first) / 1e9;
	if (err) {
		out->errors++;
		fprintf(stderr, "ninep-bench: raw baseline: %s\n", strerror(-err));
	}
	return err;
}

/* Server lifecycle: options, listeners, threads, stop. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "srv.h"

static void default_log(void *arg, int level, const char *msg)
{
	np_server *s = arg;
	/* Errors always; connection events and traces only when tracing. */
	if (level == 0 || s->o.trace)
		fprintf(stderr, "ninep: %s\n", msg);
}

void np_log(np_server *s, int level, const char *fmt, ...)
{
	char msg[1024];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	s->o.log(s->o.log_arg, level, msg);
}

np_server *np_server_new(const struct np_fs_ops *ops, void *fs, const struct np_server_opts *o)
{
	np_server *s = calloc(1, sizeof *s);
	if (!s)
		return NULL;
	s->ops = ops;
	s->fs = fs;
	if (o)
		s->o = *o;
	if (!s->o.msize)
		s->o.msize = 512 * 1024;
	if (s->o.msize < NP_MIN_MSIZE)
		s->o.msize = NP_MIN_MSIZE;
	if (s->o.loops <= 0) {
		long n = sysconf(_SC_NPROCESSORS_ONLN);
		s->o.loops = n > 0 ? (int)n : 1;
	}
	if (s->o.workers <= 0)
		s->o.workers = 4;
	if (!s->o.max_conns)
		s->o.max_conns = 16384;
	if (!s->o.max_fids)
		s->o.max_fids = 65536;
	if (!s->o.max_inflight)
		s->o.max_inflight = 64;
	if (!s->o.log) {
		s->o.log = default_log;
		s->o.log_arg = s;
	}
	s->fid_size = (sizeof(struct np_sfid) + ops->fid_priv_size + 15) & ~(size_t)15;
	pthread_mutex_init(&s->wlock, NULL);
	pthread_cond_init(&s->wcond, NULL);
	pthread_mutex_init(&s->wait_lock, NULL);
	pthread_cond_init(&s->wait_cond, NULL);
	s->loops = calloc((size_t)s->o.loops, sizeof *s->loops);
	if (!s->loops) {
		free(s);
		return NULL;
	}
	s->nloops = s->o.loops;
	for (int i = 0; i < s->nloops; i++) {
		s->loops[i].epfd = s->loops[i].efd = -1;
		if (np_loop_init(s, &s->loops[i]) < 0) {
			np_server_free(s);
			return NULL;
		}
	}
	return s;
}

void *np_server_fs(const np_server *s)
{
	return s->fs;
}

static int add_listener(np_server *s, int fd, const np_addr *a)
{
	struct np_listener *nl = realloc(s->lis, (size_t)(s->nlis + 1) * sizeof *nl);
	if (!nl)
		return -ENOMEM;
	if (s->lis != nl && atomic_load(&s->started)) {
		/* epoll holds pointers into the array: only grow before start */
		s->lis = nl;
		return -EBUSY;
	}
	s->lis = nl;
	struct np_listener *li = &s->lis[s->nlis++];
	memset(li, 0, sizeof *li);
	li->ev.kind = NP_EV_LISTEN;
	li->fd = fd;
	if (a) {
		li->addr = *a;
		li->has_addr = 1;
	}
	return 0;
}

int np_server_listen(np_server *s, const char *addr, char *err, size_t errlen)
{
	np_addr a;
	int r = np_addr_parse(addr, &a, err, errlen);
	if (r < 0)
		return r;
	if (a.kind == NP_ADDR_FD || a.kind == NP_ADDR_STDIO)
		return np_server_add_fds(s, a.rfd, a.wfd, addr);
	int fd = np_listen(&a, NULL, err, errlen);
	if (fd < 0)
		return fd;
	r = add_listener(s, fd, &a);
	if (r < 0) {
		close(fd);
		snprintf(err, errlen, "listen %s: %s", addr, strerror(-r));
	}
	return r;
}

int np_server_add_listener(np_server *s, int lfd)
{
	return add_listener(s, lfd, NULL);
}

int np_server_add_fds(np_server *s, int rfd, int wfd, const char *desc)
{
	np_peer peer;
	memset(&peer, 0, sizeof peer);
	snprintf(peer.desc, sizeof peer.desc, "%s", desc ? desc : "fd");
	unsigned i = atomic_fetch_add(&s->adopt_rr, 1) % (unsigned)s->nloops;
	struct np_conn *c = np_conn_new(s, &s->loops[i], rfd, wfd, &peer);
	if (!c)
		return -ENOMEM;
	atomic_fetch_add(&s->nconns, 1);
	s->had_conn = 1;
	np_loop_hand_over(&s->loops[i], c);
	return 0;
}

int np_server_start(np_server *s)
{
	int r = np_workers_start(s);
	if (r < 0)
		return r;
	for (int i = 0; i < s->nloops; i++)
		for (int j = 0; j < s->nlis; j++)
			np_loop_add_listener(&s->loops[i], &s->lis[j]);
	atomic_store(&s->started, 1);
	for (int i = 0; i < s->nloops; i++) {
		if (pthread_create(&s->loops[i].thr, NULL, np_loop_main, &s->loops[i]) != 0)
			return -EAGAIN;
		pthread_mutex_lock(&s->wait_lock);
		s->loops_running++;
		pthread_mutex_unlock(&s->wait_lock);
	}
	return 0;
}

static void wake_all(np_server *s)
{
	for (int i = 0; i < s->nloops; i++)
		np_loop_wake(&s->loops[i]);
}

void np_server_conn_gone(np_server *s)
{
	/* A server without listeners (stdio, fd:) ends with its sessions. */
	if (s->nlis == 0 && s->had_conn && atomic_load(&s->nconns) == 0 &&
	    !atomic_exchange(&s->stopping, 1))
		wake_all(s);
}

void np_server_wait(np_server *s)
{
	pthread_mutex_lock(&s->wait_lock);
	while (s->loops_running > 0)
		pthread_cond_wait(&s->wait_cond, &s->wait_lock);
	pthread_mutex_unlock(&s->wait_lock);
}

void np_server_stop(np_server *s)
{
	atomic_store(&s->stopping, 1);
	wake_all(s);
	np_server_wait(s);
}

void np_server_free(np_server *s)
{
	if (!s)
		return;
	if (atomic_load(&s->started)) {
		np_server_stop(s);
		for (int i = 0; i < s->nloops; i++)
			pthread_join(s->loops[i].thr, NULL);
		np_workers_stop(s);
	}
	for (int i = 0; i < s->nlis; i++) {
		close(s->lis[i].fd);
		if (s->lis[i].has_addr)
			np_unlisten(&s->lis[i].addr);
	}
	for (int i = 0; i < s->nloops; i++)
		np_loop_destroy(&s->loops[i]);
	free(s->loops);
	free(s->lis);
	pthread_mutex_destroy(&s->wlock);
	pthread_cond_destroy(&s->wcond);
	pthread_mutex_destroy(&s->wait_lock);
	pthread_cond_destroy(&s->wait_cond);
	free(s);
}

void np_server_stats(np_server *s, struct np_server_stats *st)
{
	memset(st, 0, sizeof *st);
	st->conns_accepted = atomic_load(&s->st_accepted);
	st->conns_open = atomic_load(&s->st_open);
	st->requests = atomic_load(&s->st_requests);
	st->errors = atomic_load(&s->st_errors);
	st->buf_gets = atomic_load(&s->st_buf_gets);
	st->buf_misses = atomic_load(&s->st_buf_misses);
}

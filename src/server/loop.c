/* The event loop: one per thread, each owning its connections.  Listening
 * sockets are in every loop's epoll with EPOLLEXCLUSIVE, so a connection
 * lives on whichever loop accepted it and never migrates. */
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "srv.h"

#define MAX_EVENTS 64
#define SWEEP_NS 1000000000ull
#define IDLE_TICKS 2          /* seconds without traffic before trimming */
#define STOP_GRACE_NS 5000000000ull

static struct np_ev wake_ev = {NP_EV_WAKE};

static uint64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC_COARSE, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

void np_loop_wake(struct np_loop *l)
{
	uint64_t one = 1;
	ssize_t n = write(l->efd, &one, sizeof one);
	(void)n; /* a full counter still wakes the loop */
}

void np_loop_mark_dirty(struct np_conn *c)
{
	if (c->dirty)
		return;
	c->dirty = 1;
	c->dirty_next = c->loop->dirty;
	c->loop->dirty = c;
}

static int is_socket(int fd)
{
	struct stat st;
	return fstat(fd, &st) == 0 && S_ISSOCK(st.st_mode);
}

struct np_conn *np_conn_new(np_server *s, struct np_loop *l, int rfd, int wfd,
			    const np_peer *peer)
{
	struct np_conn *c = calloc(1, sizeof *c);
	if (!c)
		return NULL;
	struct np_bufcache_opts bo = {.mode = (enum np_bufcache_mode)s->o.bufcache_mode, .idle_keep = 2};
	c->bc = np_bufcache_new(s->o.msize, &bo);
	if (!c->bc) {
		free(c);
		return NULL;
	}
	c->ev_r.kind = NP_EV_CONN;
	c->ev_w.kind = NP_EV_CONN_W;
	c->srv = s;
	c->loop = l;
	c->rfd = rfd;
	c->wfd = wfd;
	c->is_sock = is_socket(wfd);
	c->peer = *peer;
	c->dialect = NP_9P2000;
	c->msize = s->o.msize;
	c->id = atomic_fetch_add(&s->next_conn_id, 1) + 1;
	fcntl(rfd, F_SETFL, fcntl(rfd, F_GETFL) | O_NONBLOCK);
	if (wfd != rfd)
		fcntl(wfd, F_SETFL, fcntl(wfd, F_GETFL) | O_NONBLOCK);
	return c;
}

/* Make a connection this loop's (loop thread). */
static void adopt(struct np_loop *l, struct np_conn *c)
{
	np_server *s = l->srv;
	struct epoll_event e = {.events = EPOLLIN | EPOLLRDHUP, .data.ptr = &c->ev_r};
	c->loop = l;
	if (epoll_ctl(l->epfd, EPOLL_CTL_ADD, c->rfd, &e) < 0) {
		np_log(s, 0, "conn %u (%s): epoll: %s", c->id, c->peer.desc, strerror(errno));
		close(c->rfd);
		if (c->wfd != c->rfd)
			close(c->wfd);
		np_bufcache_free(c->bc);
		free(c);
		atomic_fetch_sub(&s->nconns, 1);
		return;
	}
	c->mask_r = e.events;
	if (c->is_sock)
		np_socket_fit_msize(c->wfd, s->o.msize);
	if (c->wfd != c->rfd) {
		struct epoll_event w = {.events = 0, .data.ptr = &c->ev_w};
		epoll_ctl(l->epfd, EPOLL_CTL_ADD, c->wfd, &w);
	}
	c->next = l->conns;
	if (l->conns)
		l->conns->prev = c;
	l->conns = c;
	l->nconns++;
	atomic_fetch_add(&s->st_accepted, 1);
	atomic_fetch_add(&s->st_open, 1);
	np_log(s, 1, "conn %u (%s): open", c->id, c->peer.desc);
}

static int uid_allowed(const np_server *s, const np_peer *p)
{
	if (!s->o.allow_uids)
		return 1;
	if (!p->has_cred)
		return 0;
	for (size_t i = 0; i < s->o.n_allow_uids; i++)
		if (s->o.allow_uids[i] == p->uid)
			return 1;
	return 0;
}

static void listener_pause(struct np_loop *l, int pause)
{
	np_server *s = l->srv;
	for (int i = 0; i < s->nlis; i++) {
		struct epoll_event e = {.events = EPOLLIN | EPOLLEXCLUSIVE, .data.ptr = &s->lis[i].ev};
		if (pause)
			epoll_ctl(l->epfd, EPOLL_CTL_DEL, s->lis[i].fd, NULL);
		else
			epoll_ctl(l->epfd, EPOLL_CTL_ADD, s->lis[i].fd, &e);
	}
	l->listeners_paused = (uint8_t)pause;
}

static void on_accept(struct np_loop *l, struct np_listener *li)
{
	np_server *s = l->srv;
	for (int i = 0; i < 32; i++) {
		np_peer peer;
		memset(&peer, 0, sizeof peer);
		int fd = np_accept(li->fd, &peer);
		if (fd == -EAGAIN || fd == -EINTR)
			return;
		if (fd < 0) {
			np_log(s, 0, "accept: %s", strerror(-fd));
			if (fd == -EMFILE || fd == -ENFILE || fd == -ENOBUFS || fd == -ENOMEM) {
				/* Level-triggered: the listener would wake us forever.
				 * Step back until the next tick; existing sessions go on. */
				listener_pause(l, 1);
			}
			return;
		}
		if (atomic_load(&s->nconns) >= s->o.max_conns) {
			np_log(s, 0, "refusing %s: %u connections (max_conns)", peer.desc,
			       atomic_load(&s->nconns));
			close(fd);
			continue;
		}
		if (!uid_allowed(s, &peer)) {
			np_log(s, 0, "refusing %s: uid not allowed", peer.desc);
			close(fd);
			continue;
		}
		struct np_conn *c = np_conn_new(s, l, fd, fd, &peer);
		if (!c) {
			np_log(s, 0, "refusing %s: out of memory", peer.desc);
			close(fd);
			continue;
		}
		atomic_fetch_add(&s->nconns, 1);
		s->had_conn = 1;
		adopt(l, c);
	}
}

static void drain_done(struct np_loop *l)
{
	struct np_sreq *q = atomic_exchange_explicit(&l->done, NULL, memory_order_acquire);
	struct np_sreq *fifo = NULL;
	while (q) { /* the stack is newest-first; complete in arrival order */
		struct np_sreq *nx = q->dnext;
		q->dnext = fifo;
		fifo = q;
		q = nx;
	}
	while (fifo) {
		struct np_sreq *nx = fifo->dnext;
		np_complete(fifo);
		fifo = nx;
	}
}

static void drain_adopt(struct np_loop *l)
{
	pthread_mutex_lock(&l->adopt_lock);
	struct np_conn *c = l->adopt;
	l->adopt = NULL;
	pthread_mutex_unlock(&l->adopt_lock);
	while (c) {
		struct np_conn *nx = c->next;
		c->next = NULL;
		adopt(l, c);
		c = nx;
	}
}

static void process_dirty(struct np_loop *l)
{
	struct np_conn *c;
	while ((c = l->dirty)) {
		l->dirty = c->dirty_next;
		c->dirty = 0;
		if (c->closing) {
			if (c->outstanding == 0)
				np_conn_free(c);
			continue;
		}
		if (c->needs_rx)
			np_conn_process_rx(c);
		if (c->txhead)
			np_conn_flush(c);
		np_conn_maybe_finish(c);
		if (l->stopping && !c->closing && c->outstanding == 0 && !c->txhead)
			np_conn_close(c, "server stopping");
	}
}

static void sweep(struct np_loop *l, uint64_t now)
{
	l->last_sweep = now;
	if (l->listeners_paused && !l->stopping)
		listener_pause(l, 0);
	for (struct np_conn *c = l->conns; c; c = c->next) {
		if (c->active) {
			c->active = 0;
			c->idle_ticks = 0;
		} else if (c->idle_ticks < 255 && ++c->idle_ticks == IDLE_TICKS) {
			np_conn_trim(c);
		}
	}
}

static void begin_stop(struct np_loop *l, uint64_t now)
{
	l->stopping = 1;
	l->stop_deadline = now + STOP_GRACE_NS;
	if (!l->listeners_paused)
		listener_pause(l, 1);
	for (struct np_conn *c = l->conns; c; c = c->next) {
		if (c->outstanding == 0 && !c->txhead)
			np_conn_close(c, "server stopping");
		else
			np_conn_update_events(c); /* stop reading; finish what is in flight */
	}
}

/* Busy-poll: check for events without sleeping until `us` have passed.
 * sched_yield() lets a client pinned to the same CPU run meanwhile. */
static int poll_events(struct np_loop *l, struct epoll_event *evs, uint32_t us)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	uint64_t end = (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec + us * 1000ull;
	for (;;) {
		int n = epoll_wait(l->epfd, evs, MAX_EVENTS, 0);
		if (n != 0)
			return n;
		clock_gettime(CLOCK_MONOTONIC, &ts);
		if ((uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec >= end)
			return 0;
		sched_yield();
	}
}

void *np_loop_main(void *arg)
{
	struct np_loop *l = arg;
	np_server *s = l->srv;
	struct epoll_event evs[MAX_EVENTS];
	sigset_t set;

	/* Writes to a vanished peer must fail with EPIPE, not kill us. */
	sigemptyset(&set);
	sigaddset(&set, SIGPIPE);
	pthread_sigmask(SIG_BLOCK, &set, NULL);
	l->last_sweep = now_ns();

	int busy = 0; /* the last wake-up carried traffic */
	for (;;) {
		int timeout = l->nconns || l->listeners_paused ? 1000 : -1;
		int n = busy && s->o.busy_poll_us ? poll_events(l, evs, s->o.busy_poll_us) : 0;
		if (n == 0)
			n = epoll_wait(l->epfd, evs, MAX_EVENTS, timeout);
		busy = n > 0;
		for (int i = 0; i < n; i++) {
			struct np_ev *ev = evs[i].data.ptr;
			uint32_t m = evs[i].events;
			switch (ev->kind) {
			case NP_EV_WAKE: {
				uint64_t v;
				ssize_t r = read(l->efd, &v, sizeof v);
				(void)r;
				break;
			}
			case NP_EV_LISTEN:
				if (!l->stopping)
					on_accept(l, (struct np_listener *)ev);
				break;
			case NP_EV_CONN: {
				struct np_conn *c = (struct np_conn *)((char *)ev - offsetof(struct np_conn, ev_r));
				if ((m & EPOLLOUT) && !c->closing)
					np_conn_flush(c);
				if (m & (EPOLLIN | EPOLLHUP | EPOLLERR | EPOLLRDHUP))
					np_conn_on_readable(c);
				if ((m & (EPOLLHUP | EPOLLERR)) && !c->closing && c->rd_paused)
					np_conn_close(c, "connection error");
				break;
			}
			case NP_EV_CONN_W: {
				struct np_conn *c = (struct np_conn *)((char *)ev - offsetof(struct np_conn, ev_w));
				if (!c->closing)
					np_conn_flush(c);
				break;
			}
			}
		}
		drain_done(l);
		drain_adopt(l);
		process_dirty(l);

		uint64_t now = now_ns();
		if (atomic_load(&s->stopping) && !l->stopping)
			begin_stop(l, now);
		if (l->stopping) {
			if (now > l->stop_deadline)
				for (struct np_conn *c = l->conns; c; c = c->next)
					np_conn_close(c, "server stopping (grace period over)");
			process_dirty(l);
			if (!l->conns)
				break;
		}
		if (now - l->last_sweep >= SWEEP_NS)
			sweep(l, now);
	}

	pthread_mutex_lock(&s->wait_lock);
	s->loops_running--;
	pthread_cond_broadcast(&s->wait_cond);
	pthread_mutex_unlock(&s->wait_lock);
	return NULL;
}

int np_loop_init(np_server *s, struct np_loop *l)
{
	l->srv = s;
	pthread_mutex_init(&l->adopt_lock, NULL);
	l->epfd = epoll_create1(EPOLL_CLOEXEC);
	if (l->epfd < 0)
		return -errno;
	l->efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (l->efd < 0)
		return -errno;
	struct epoll_event e = {.events = EPOLLIN, .data.ptr = &wake_ev};
	if (epoll_ctl(l->epfd, EPOLL_CTL_ADD, l->efd, &e) < 0)
		return -errno;
	return 0;
}

void np_loop_add_listener(struct np_loop *l, struct np_listener *li)
{
	struct epoll_event e = {.events = EPOLLIN | EPOLLEXCLUSIVE, .data.ptr = &li->ev};
	if (!l->listeners_paused)
		epoll_ctl(l->epfd, EPOLL_CTL_ADD, li->fd, &e);
}

void np_loop_hand_over(struct np_loop *l, struct np_conn *c)
{
	pthread_mutex_lock(&l->adopt_lock);
	c->next = l->adopt;
	l->adopt = c;
	pthread_mutex_unlock(&l->adopt_lock);
	np_loop_wake(l);
}

void np_loop_destroy(struct np_loop *l)
{
	if (l->epfd >= 0)
		close(l->epfd);
	if (l->efd >= 0)
		close(l->efd);
	pthread_mutex_destroy(&l->adopt_lock);
}

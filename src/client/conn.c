/* The client connection engine: version negotiation, tags, sending, and the
 * leader/follower reading scheme that matches replies to requests.
 *
 * Reading: at most one thread (the leader, c->reading) reads the socket at a
 * time.  A thread that needs a reply becomes the leader when nobody is, reads
 * one frame, dispatches it (waking its owner if it is someone else's), and
 * gives the role up again; when its own request completes it hands the role
 * to a sleeping waiter.  A lone synchronous caller thus reads its own reply
 * on its own CPU, with no thread switch.
 */
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "client/client_impl.h"
#include "ninep/transport.h"

#define NP_DEFAULT_MSIZE (1u << 20)
#define NP_DEFAULT_TAGS 256u
#define NP_DEFAULT_PIPELINE 8u
#define NP_MAX_PIPELINE 64u

static void seterr(char *err, size_t errlen, const char *what, int e)
{
	if (err && errlen)
		snprintf(err, errlen, "%s: %s", what, strerror(e));
}

/* ---- low-level I/O --------------------------------------------------- */

/* Callers hold c->wlock (or are alone, before any thread can share c). */
static int write_full(np_client *c, const uint8_t *p, size_t n)
{
	int fd = c->wfd;
	while (n) {
		ssize_t w;
		/* send() keeps a closed peer from raising SIGPIPE; fd transports
		 * may be pipes, where only write() works. */
		if (!c->w_notsock) {
			w = send(fd, p, n, MSG_NOSIGNAL);
			if (w < 0 && errno == ENOTSOCK) {
				c->w_notsock = 1;
				continue;
			}
		} else {
			w = write(fd, p, n);
		}
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

/* Read exactly n bytes: 0, -ECONNRESET at end of stream, -errno. */
static int read_full(int fd, uint8_t *p, size_t n)
{
	while (n) {
		ssize_t r = read(fd, p, n);
		if (r == 0)
			return -ECONNRESET;
		if (r < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		p += r;
		n -= (size_t)r;
	}
	return 0;
}

/* Leader only: make the staging buffer hold >= need bytes.  Returns 1, 0 on
 * timeout, -errno. */
static int fill(np_client *c, uint32_t need, int timeout_ms)
{
	while (c->rlen - c->roff < need) {
		if (c->roff) {
			memmove(c->rbuf, c->rbuf + c->roff, c->rlen - c->roff);
			c->rlen -= c->roff;
			c->roff = 0;
		}
		if (timeout_ms >= 0) {
			struct pollfd pfd = {.fd = c->rfd, .events = POLLIN};
			int p = poll(&pfd, 1, timeout_ms);
			if (p < 0 && errno != EINTR)
				return -errno;
			if (p <= 0)
				return 0;
		}
		ssize_t r = read(c->rfd, c->rbuf + c->rlen, NP_CLIENT_RBUF - c->rlen);
		if (r == 0)
			return -ECONNRESET;
		if (r < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		c->rlen += (uint32_t)r;
		timeout_ms = -1; /* once a frame started, finish it */
	}
	return 1;
}

/* Leader only, called unlocked: receive one whole frame into a buffer from
 * the cache.  Returns 1 with *out, 0 on timeout, -errno (EPROTO when the
 * framing cannot be trusted). */
static int recv_frame(np_client *c, np_buf **out, int timeout_ms)
{
	int r = fill(c, NP_HDRSZ, timeout_ms);
	if (r <= 0)
		return r;
	uint32_t size = np_frame_size(c->rbuf + c->roff);
	if (size < NP_HDRSZ || size > c->msize)
		return -EPROTO;
	pthread_mutex_lock(&c->lock);
	np_buf *b = np_buf_get(c->bc, size);
	pthread_mutex_unlock(&c->lock);
	if (!b)
		return -ENOMEM;
	uint32_t n = c->rlen - c->roff;
	if (n > size)
		n = size;
	memcpy(b->data, c->rbuf + c->roff, n);
	c->roff += n;
	if (n < size) {
		r = read_full(c->rfd, b->data + n, size - n);
		if (r < 0) {
			pthread_mutex_lock(&c->lock);
			np_buf_put(b);
			pthread_mutex_unlock(&c->lock);
			return r;
		}
	}
	b->len = size;
	*out = b;
	return 1;
}

/* ---- completion ------------------------------------------------------ */

static void complete(np_client *c, np_creq *r, int err)
{
	r->err = err;
	r->state = NP_RQ_DONE;
	c->inflight--;
	c->ncompleted++;
	if (r->cb) {
		r->next = NULL;
		*c->cbq_tail = r;
		c->cbq_tail = &r->next;
	} else if (r->waiting) {
		pthread_cond_signal(&r->cond);
	}
	if (c->nev_waiters)
		pthread_cond_broadcast(&c->evcond);
}

static void free_req_locked(np_client *c, np_creq *r)
{
	if (r->tx)
		np_buf_put(r->tx);
	if (r->rx)
		np_buf_put(r->rx);
	r->tx = r->rx = NULL;
	r->state = NP_RQ_FREE;
	r->has_reply = 0;
	r->release_deferred = 0;
	r->next = c->freereqs;
	c->freereqs = r;
	if (c->nev_waiters)
		pthread_cond_broadcast(&c->evcond);
}

static void release_locked(np_client *c, np_creq *r)
{
	if (r->flush_pending) {
		/* The server may still answer the Tflush naming this tag; the
		 * tag must not be reused before Rflush. */
		r->release_deferred = 1;
		return;
	}
	free_req_locked(c, r);
}

/* The connection is gone: fail everything in flight, now and later. */
static void mark_dead(np_client *c, int err)
{
	if (!c->dead) {
		c->dead = err;
		shutdown(c->rfd, SHUT_RDWR);
		if (c->wfd != c->rfd)
			shutdown(c->wfd, SHUT_RDWR);
	}
	for (uint32_t i = 0; i < c->ntags; i++) {
		np_creq *r = &c->reqs[i];
		if (r->state == NP_RQ_INFLIGHT)
			complete(c, r, c->dead);
		if (r->flush_pending) {
			r->flush_pending = 0;
			if (r->release_deferred)
				free_req_locked(c, r);
		}
	}
	pthread_cond_broadcast(&c->evcond);
}

/* Lock held, returns with it held (dropped while callbacks run). */
static void run_callbacks(np_client *c)
{
	while (c->cbq) {
		np_creq *r = c->cbq;
		c->cbq = r->next;
		if (!c->cbq)
			c->cbq_tail = &c->cbq;
		pthread_mutex_unlock(&c->lock);
		r->cb(r, r->arg);
		pthread_mutex_lock(&c->lock);
		release_locked(c, r);
	}
}

/* Lock held: match one received frame to its request. */
static void dispatch(np_client *c, np_buf *b)
{
	uint16_t tag = (uint16_t)(b->data[5] | b->data[6] << 8);
	if (tag >= c->ntags || c->reqs[tag].state != NP_RQ_INFLIGHT) {
		/* A reply to nothing: the peer and we disagree on the stream. */
		np_buf_put(b);
		mark_dead(c, EPROTO);
		return;
	}
	np_creq *r = &c->reqs[tag];
	r->rx = b;
	if (np_client_parse_reply(b->data, b->len, c->dialect, c->msize, &r->ex, &r->rc) < 0) {
		complete(c, r, EPROTO);
		return;
	}
	if (c->trace)
		c->trace(c->trace_arg, 'R', &r->rc, c->dialect);
	r->has_reply = 1;
	int err = np_reply_errno(&r->rc, c->dialect);
	np_creq *t = r->flush_target;
	if (t && r->ex.ttype == NP_TFLUSH) {
		r->flush_target = NULL;
		t->flush_pending = 0;
		if (t->state == NP_RQ_INFLIGHT)
			complete(c, t, ECANCELED);
		else if (t->release_deferred)
			free_req_locked(c, t);
	}
	complete(c, r, err);
}

/* Lock held, no leader: become leader for one frame.  Returns 1 after a
 * frame, 0 on timeout, -errno when the connection died. */
static int lead_step(np_client *c, int timeout_ms)
{
	np_buf *b = NULL;
	c->reading = 1;
	pthread_mutex_unlock(&c->lock);
	int r = recv_frame(c, &b, timeout_ms);
	pthread_mutex_lock(&c->lock);
	c->reading = 0;
	if (r > 0)
		dispatch(c, b);
	else if (r < 0)
		mark_dead(c, r == -ECONNRESET || r == -EPROTO || r == -ENOMEM ? -r : ECONNRESET);
	run_callbacks(c);
	return r < 0 ? -c->dead : r;
}

/* Lock held: the reader role is free; let someone who needs it take it. */
static void handoff(np_client *c)
{
	if (c->reading || !c->inflight)
		return;
	if (c->nwaiting) {
		for (uint32_t i = 0; i < c->ntags; i++) {
			np_creq *r = &c->reqs[i];
			if (r->waiting && r->state == NP_RQ_INFLIGHT) {
				pthread_cond_signal(&r->cond);
				break;
			}
		}
	}
	if (c->nev_waiters)
		pthread_cond_broadcast(&c->evcond);
}

/* ---- requests -------------------------------------------------------- */

static int submit(np_client *c, const np_fcall *t, np_creq_cb cb, void *arg,
		  np_creq *flush_target, np_creq **out)
{
	pthread_mutex_lock(&c->lock);
	while (!c->freereqs && !c->dead) {
		if (!c->reading && c->inflight) {
			lead_step(c, -1);
		} else {
			c->nev_waiters++;
			pthread_cond_wait(&c->evcond, &c->lock);
			c->nev_waiters--;
		}
	}
	if (c->dead) {
		int e = c->dead;
		handoff(c);
		pthread_mutex_unlock(&c->lock);
		return -e;
	}
	size_t need = np_msg_bufsize(t, c->dialect, c->msize);
	np_buf *tx = np_buf_get(c->bc, need);
	if (!tx) {
		pthread_mutex_unlock(&c->lock);
		return -ENOMEM;
	}
	np_creq *r = c->freereqs;
	c->freereqs = r->next;
	r->next = NULL;
	r->state = NP_RQ_INFLIGHT;
	r->err = 0;
	r->has_reply = 0;
	r->cb = cb;
	r->arg = arg;
	r->tx = tx;
	r->rx = NULL;
	r->flush_target = flush_target;
	np_expect_from(&r->ex, t);
	c->inflight++;
	pthread_mutex_unlock(&c->lock);

	np_fcall tt = *t;
	tt.tag = r->tag;
	int n = np_encode(&tt, c->dialect, tx->data, tx->cap);
	if (n < 0) {
		pthread_mutex_lock(&c->lock);
		r->state = NP_RQ_FREE;
		c->inflight--;
		np_buf_put(tx);
		r->tx = NULL;
		r->next = c->freereqs;
		c->freereqs = r;
		if (flush_target)
			flush_target->flush_pending = 0;
		pthread_mutex_unlock(&c->lock);
		return n;
	}
	tx->len = (uint32_t)n;
	if (out)
		*out = cb ? NULL : r; /* a callback request may be gone already */
	if (c->trace)
		c->trace(c->trace_arg, 'T', &tt, c->dialect);
	pthread_mutex_lock(&c->wlock);
	int w = write_full(c, tx->data, (size_t)n);
	pthread_mutex_unlock(&c->wlock);
	if (w < 0) {
		pthread_mutex_lock(&c->lock);
		mark_dead(c, EPIPE);
		run_callbacks(c);
		pthread_mutex_unlock(&c->lock);
	}
	return 0;
}

int np_client_submit(np_client *c, const np_fcall *t, np_creq_cb cb, void *arg, np_creq **out)
{
	if (t->type == NP_TVERSION || (t->type & 1))
		return -EINVAL;
	return submit(c, t, cb, arg, NULL, out);
}

int np_creq_wait(np_creq *r)
{
	np_client *c = r->c;
	pthread_mutex_lock(&c->lock);
	while (r->state == NP_RQ_INFLIGHT) {
		if (!c->reading) {
			lead_step(c, -1);
		} else {
			r->waiting = 1;
			c->nwaiting++;
			pthread_cond_wait(&r->cond, &c->lock);
			c->nwaiting--;
			r->waiting = 0;
		}
	}
	handoff(c);
	int e = r->err;
	pthread_mutex_unlock(&c->lock);
	return -e;
}

int np_creq_done(np_creq *r)
{
	pthread_mutex_lock(&r->c->lock);
	int d = r->state == NP_RQ_DONE;
	pthread_mutex_unlock(&r->c->lock);
	return d;
}

int np_creq_error(np_creq *r)
{
	return -r->err;
}

const np_fcall *np_creq_reply(np_creq *r)
{
	return r->has_reply ? &r->rc : NULL;
}

void np_creq_release(np_creq *r)
{
	np_client *c = r->c;
	pthread_mutex_lock(&c->lock);
	release_locked(c, r);
	pthread_mutex_unlock(&c->lock);
}

int np_creq_cancel(np_creq *r)
{
	np_client *c = r->c;
	pthread_mutex_lock(&c->lock);
	if (r->state != NP_RQ_INFLIGHT) {
		pthread_mutex_unlock(&c->lock);
		return 0;
	}
	r->flush_pending = 1;
	pthread_mutex_unlock(&c->lock);

	np_fcall t = {.type = NP_TFLUSH};
	t.tflush.oldtag = r->tag;
	np_creq *fr;
	int e = submit(c, &t, NULL, NULL, r, &fr);
	if (e < 0) {
		pthread_mutex_lock(&c->lock);
		r->flush_pending = 0;
		pthread_mutex_unlock(&c->lock);
		return e;
	}
	e = np_creq_wait(fr);
	np_creq_release(fr);
	/* After Rflush (or the connection's end) r is complete either way. */
	return e == -ECONNRESET || e == -EPIPE || e == -EPROTO ? e : 0;
}

int np_client_poll(np_client *c, int timeout_ms)
{
	struct timespec dl;
	clock_gettime(CLOCK_REALTIME, &dl);
	if (timeout_ms > 0) {
		dl.tv_sec += timeout_ms / 1000;
		dl.tv_nsec += (long)(timeout_ms % 1000) * 1000000L;
		if (dl.tv_nsec >= 1000000000L) {
			dl.tv_sec++;
			dl.tv_nsec -= 1000000000L;
		}
	}
	pthread_mutex_lock(&c->lock);
	uint64_t before = c->ncompleted;
	int ret = 0;
	while (c->ncompleted == before && !c->dead && c->inflight) {
		if (!c->reading) {
			struct timespec now;
			clock_gettime(CLOCK_REALTIME, &now);
			int left = -1;
			if (timeout_ms >= 0) {
				long ms = (dl.tv_sec - now.tv_sec) * 1000 + (dl.tv_nsec - now.tv_nsec) / 1000000;
				if (ms < 0)
					ms = 0;
				left = (int)ms;
			}
			if (lead_step(c, left) == 0)
				break;
		} else {
			c->nev_waiters++;
			int w = timeout_ms < 0 ? pthread_cond_wait(&c->evcond, &c->lock)
					       : pthread_cond_timedwait(&c->evcond, &c->lock, &dl);
			c->nev_waiters--;
			if (w == ETIMEDOUT)
				break;
		}
	}
	if (c->ncompleted != before)
		ret = (int)(c->ncompleted - before);
	else if (c->dead)
		ret = -c->dead;
	handoff(c);
	pthread_mutex_unlock(&c->lock);
	return ret;
}

int np_client_drain(np_client *c)
{
	pthread_mutex_lock(&c->lock);
	while (c->inflight && !c->dead) {
		if (!c->reading) {
			lead_step(c, -1);
		} else {
			c->nev_waiters++;
			pthread_cond_wait(&c->evcond, &c->lock);
			c->nev_waiters--;
		}
	}
	run_callbacks(c);
	int e = c->dead;
	handoff(c);
	pthread_mutex_unlock(&c->lock);
	return -e;
}

int np_rpc(np_client *c, const np_fcall *t, np_creq **out)
{
	np_creq *r;
	int e = submit(c, t, NULL, NULL, NULL, &r);
	if (e < 0)
		return e;
	e = np_creq_wait(r);
	if (e < 0) {
		np_creq_release(r);
		return e;
	}
	*out = r;
	return 0;
}

int np_rpc0(np_client *c, const np_fcall *t)
{
	np_creq *r;
	int e = np_rpc(c, t, &r);
	if (e == 0)
		np_creq_release(r);
	return e;
}

/* ---- setup ----------------------------------------------------------- */

static int negotiate(np_client *c, uint32_t msize, enum np_dialect want, char *err, size_t errlen)
{
	np_fcall t = {.type = NP_TVERSION, .tag = NP_NOTAG};
	t.version.msize = msize;
	t.version.version = np_strz(np_dialect_name(want));
	np_buf *b = np_buf_get(c->bc, NP_BUF_SMALL);
	if (!b)
		return -ENOMEM;
	int n = np_encode(&t, want, b->data, b->cap);
	if (c->trace)
		c->trace(c->trace_arg, 'T', &t, want);
	int e = n < 0 ? n : write_full(c, b->data, (size_t)n);
	np_buf_put(b);
	if (e < 0) {
		seterr(err, errlen, "Tversion", -e);
		return e;
	}
	b = NULL;
	e = recv_frame(c, &b, -1);
	if (e < 0) {
		seterr(err, errlen, "Rversion", -e);
		return e;
	}
	np_fcall rc;
	e = np_decode(b->data, b->len, want, msize, &rc, NULL);
	if (e == 0 && c->trace)
		c->trace(c->trace_arg, 'R', &rc, want);
	int ret = 0;
	if (e < 0 || (rc.type != NP_RVERSION && rc.type != NP_RERROR && rc.type != NP_RLERROR) ||
	    rc.tag != NP_NOTAG) {
		seterr(err, errlen, "Rversion: malformed reply", EPROTO);
		ret = -EPROTO;
	} else if (rc.type != NP_RVERSION) {
		ret = -np_reply_errno(&rc, want);
		seterr(err, errlen, "Tversion refused", -ret);
	} else {
		int d = np_dialect_parse(rc.version.version.s, rc.version.version.len);
		if (d < 0 || d > (int)want) {
			seterr(err, errlen, "server offers no usable 9P version", EPROTONOSUPPORT);
			ret = -EPROTONOSUPPORT;
		} else if (rc.version.msize > msize || rc.version.msize < NP_MIN_MSIZE) {
			seterr(err, errlen, "Rversion: unusable msize", EPROTO);
			ret = -EPROTO;
		} else {
			c->dialect = (enum np_dialect)d;
			c->msize = rc.version.msize;
		}
	}
	np_buf_put(b);
	if (ret == 0)
		np_bufcache_set_msize(c->bc, c->msize);
	return ret;
}

int np_client_connect_fd(int rfd, int wfd, const struct np_client_opts *opts,
			 np_client **out, char *err, size_t errlen)
{
	struct np_client_opts o = {0};
	if (opts)
		o = *opts;
	else
		o.dialect = -1;
	if (!o.msize)
		o.msize = NP_DEFAULT_MSIZE;
	if (o.msize < NP_MIN_MSIZE)
		o.msize = NP_MIN_MSIZE;
	if (o.dialect < 0 || o.dialect > NP_9P2000L)
		o.dialect = NP_9P2000L;
	if (!o.max_tags || o.max_tags > 65535)
		o.max_tags = o.max_tags ? 65535 : NP_DEFAULT_TAGS;
	if (!o.pipeline)
		o.pipeline = NP_DEFAULT_PIPELINE;
	if (o.pipeline > NP_MAX_PIPELINE)
		o.pipeline = NP_MAX_PIPELINE;

	np_client *c = calloc(1, sizeof *c);
	if (!c)
		goto nomem;
	c->rfd = rfd;
	c->wfd = wfd;
	c->msize = o.msize;
	c->dialect = (enum np_dialect)o.dialect;
	c->pipeline = o.pipeline;
	c->trace = o.trace;
	c->trace_arg = o.trace_arg;
	c->cbq_tail = &c->cbq;
	c->nextfid = 1;
	pthread_mutex_init(&c->lock, NULL);
	pthread_mutex_init(&c->wlock, NULL);
	pthread_cond_init(&c->evcond, NULL);
	c->rbuf = malloc(NP_CLIENT_RBUF);
	c->reqs = calloc(o.max_tags, sizeof *c->reqs);
	c->bc = np_bufcache_new(o.msize, NULL);
	if (!c->rbuf || !c->reqs || !c->bc) {
		np_client_free(c);
		goto nomem_closed;
	}
	c->ntags = o.max_tags;
	for (uint32_t i = o.max_tags; i-- > 0;) {
		np_creq *r = &c->reqs[i];
		r->c = c;
		r->tag = (uint16_t)i;
		pthread_cond_init(&r->cond, NULL);
		r->next = c->freereqs;
		c->freereqs = r;
	}
	int e = negotiate(c, o.msize, (enum np_dialect)o.dialect, err, errlen);
	if (e < 0) {
		np_client_free(c);
		return e;
	}
	np_socket_fit_msize(wfd, c->msize); /* not a socket: harmless no-op */
	*out = c;
	return 0;
nomem:
	close(rfd);
	if (wfd != rfd)
		close(wfd);
nomem_closed:
	seterr(err, errlen, "client", ENOMEM);
	return -ENOMEM;
}

int np_client_connect(const char *addr, const struct np_client_opts *opts, np_client **out,
		      char *err, size_t errlen)
{
	np_addr a;
	int rfd, wfd;
	int e = np_addr_parse(addr, &a, err, errlen);
	if (e < 0)
		return e;
	e = np_dial(&a, &rfd, &wfd, err, errlen);
	if (e < 0)
		return e;
	if (a.kind == NP_ADDR_TCP) {
		int one = 1;
		/* Small request/reply pairs must not wait for Nagle. */
		setsockopt(rfd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
	}
	e = np_client_connect_fd(rfd, wfd, opts, out, err, errlen);
	if (e < 0 && err && errlen) {
		char tmp[256];
		snprintf(tmp, sizeof tmp, "%s", err);
		snprintf(err, errlen, "%s: %s", addr, tmp);
	}
	return e;
}

void np_client_shutdown(np_client *c)
{
	pthread_mutex_lock(&c->lock);
	mark_dead(c, ECONNRESET);
	run_callbacks(c);
	pthread_mutex_unlock(&c->lock);
}

void np_client_free(np_client *c)
{
	if (!c)
		return;
	if (c->reqs) {
		for (uint32_t i = 0; i < c->ntags; i++) {
			np_creq *r = &c->reqs[i];
			if (c->bc) {
				if (r->tx)
					np_buf_put(r->tx);
				if (r->rx)
					np_buf_put(r->rx);
			}
			pthread_cond_destroy(&r->cond);
		}
		free(c->reqs);
	}
	while (c->freeslots) {
		struct np_cfid_slot *s = c->freeslots;
		c->freeslots = s->next;
		free(s);
	}
	if (c->bc)
		np_bufcache_free(c->bc);
	close(c->rfd);
	if (c->wfd != c->rfd)
		close(c->wfd);
	free(c->freefids);
	free(c->rbuf);
	pthread_cond_destroy(&c->evcond);
	pthread_mutex_destroy(&c->wlock);
	pthread_mutex_destroy(&c->lock);
	free(c);
}

uint32_t np_client_msize(const np_client *c)
{
	return c->msize;
}

enum np_dialect np_client_dialect(const np_client *c)
{
	return c->dialect;
}

int np_client_error(const np_client *c)
{
	np_client *m = (np_client *)c;
	pthread_mutex_lock(&m->lock);
	int e = m->dead;
	pthread_mutex_unlock(&m->lock);
	return -e;
}

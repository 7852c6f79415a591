/* One connection's byte streams: frames in, replies out, backpressure, and
 * an orderly end.  Loop thread only. */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>

#include "srv.h"

#define TX_IOV 64

/* May another frame be dispatched now? */
static int can_dispatch(const struct np_conn *c)
{
	const np_server *s = c->srv;
	return !c->closing && !c->version_req && c->outstanding < s->o.max_inflight &&
	       c->ntx < 2 * s->o.max_inflight;
}

/* Is there a frame in rx that processing would act on (dispatch it, or
 * close over its size)?  A partial frame only waits for more bytes. */
static int rx_actionable(const struct np_conn *c)
{
	const np_buf *rx = c->rx;
	if (!rx || rx->len - rx->off < 4)
		return 0;
	uint32_t fs = np_frame_size(rx->data + rx->off);
	return fs < NP_HDRSZ || fs > c->msize || rx->len - rx->off >= fs;
}

/* May we read more from the peer? */
static int want_in(const struct np_conn *c)
{
	return can_dispatch(c) && !c->eof && !c->loop->stopping;
}

static void set_mask(struct np_conn *c, int fd, struct np_ev *ev, uint32_t *cur, uint32_t mask)
{
	if (*cur == mask)
		return;
	struct epoll_event e = {.events = mask, .data.ptr = ev};
	epoll_ctl(c->loop->epfd, EPOLL_CTL_MOD, fd, &e);
	*cur = mask;
}

/* Register what the connection is ready for: reading unless held back,
 * writing only while a reply is stuck behind a full socket buffer. */
void np_conn_update_events(struct np_conn *c)
{
	if (c->closing)
		return;
	int in = want_in(c);
	if (can_dispatch(c) && (c->rd_paused || c->eof) && rx_actionable(c)) {
		/* Frames that arrived while we were held back: process them at
		 * the end of this loop iteration (not from inside a completion). */
		c->needs_rx = 1;
		np_loop_mark_dirty(c);
	}
	c->rd_paused = !in;
	if (c->rfd == c->wfd) {
		set_mask(c, c->rfd, &c->ev_r, &c->mask_r,
			 (in ? EPOLLIN | EPOLLRDHUP : 0) | (c->want_out ? EPOLLOUT : 0));
	} else {
		set_mask(c, c->rfd, &c->ev_r, &c->mask_r, in ? EPOLLIN | EPOLLRDHUP : 0);
		set_mask(c, c->wfd, &c->ev_w, &c->mask_w, c->want_out ? EPOLLOUT : 0);
	}
}

/* Parse and dispatch every whole frame in rx, as far as the limits allow. */
void np_conn_process_rx(struct np_conn *c)
{
	np_server *s = c->srv;
	np_buf *rx = c->rx;
	c->needs_rx = 0;
	while (rx && can_dispatch(c) && !c->loop->stopping) {
		uint32_t avail = rx->len - rx->off;
		if (avail < 4)
			break;
		uint32_t size = np_frame_size(rx->data + rx->off);
		uint32_t limit = c->versioned ? c->msize : s->o.msize;
		if (size < NP_HDRSZ || size > limit) {
			np_log(s, 0, "conn %u (%s): frame of %u bytes (msize %u): closing", c->id,
			       c->peer.desc, size, limit);
			np_conn_close(c, "bad frame size");
			return;
		}
		if (avail < size) {
			if (size > rx->cap) {
				/* A data-carrying frame: move to a large buffer. */
				np_buf *nb = np_buf_get(c->bc, size > s->o.msize ? size : c->msize);
				if (!nb) {
					np_conn_close(c, "out of memory");
					return;
				}
				memcpy(nb->data, rx->data + rx->off, avail);
				nb->len = avail;
				np_buf_put(rx);
				c->rx = rx = nb;
			} else if (rx->off + size > rx->cap) {
				memmove(rx->data, rx->data + rx->off, avail);
				rx->off = 0;
				rx->len = avail;
			}
			break;
		}
		np_dispatch(c, rx->data + rx->off, size);
		if (c->closing)
			return;
		rx->off += size;
	}
	if (rx && rx->off == rx->len)
		rx->off = rx->len = 0;
	np_conn_update_events(c);
}

void np_conn_on_readable(struct np_conn *c)
{
	if (c->closing || !want_in(c))
		return;
	if (!c->rx) {
		c->rx = np_buf_get(c->bc, NP_BUF_SMALL);
		if (!c->rx) {
			np_conn_close(c, "out of memory");
			return;
		}
	}
	np_buf *rx = c->rx;
	if (rx->off == rx->len) {
		rx->off = rx->len = 0;
	} else if (rx->len == rx->cap) {
		memmove(rx->data, rx->data + rx->off, rx->len - rx->off);
		rx->len -= rx->off;
		rx->off = 0;
	}
	size_t want = rx->cap - rx->len;
	if (rx->len - rx->off >= 4) {
		/* A large frame is under way: read up to its end and no further,
		 * so the next frame never has to be moved down behind it. */
		uint32_t fs = np_frame_size(rx->data + rx->off);
		if (fs > NP_BUF_SMALL && rx->off + fs <= rx->cap && rx->off + fs > rx->len)
			want = rx->off + fs - rx->len;
	}
	ssize_t n;
	do {
		n = read(c->rfd, rx->data + rx->len, want);
	} while (n < 0 && errno == EINTR);
	if (n == 0) {
		/* A peer that closed only its sending side still gets the
		 * replies to everything it sent (half-close, a script piped
		 * into stdio); the connection ends once they are written. */
		c->eof = 1;
		np_conn_update_events(c);
		np_conn_maybe_finish(c);
		return;
	}
	if (n < 0) {
		if (errno != EAGAIN)
			np_conn_close(c, strerror(errno));
		return;
	}
	c->active = 1;
	rx->len += (uint32_t)n;
	if (rx->len == rx->cap && rx->cap < c->msize && c->versioned) {
		/* The small buffer filled in one read: traffic is heavy, so read
		 * into an msize buffer until the connection goes idle. */
		np_buf *nb = np_buf_get(c->bc, c->msize);
		if (nb) {
			memcpy(nb->data, rx->data + rx->off, rx->len - rx->off);
			nb->len = rx->len - rx->off;
			np_buf_put(rx);
			c->rx = nb;
		}
	}
	np_conn_process_rx(c);
}

/* Write queued replies, as many as fit, in one writev/sendmsg. */
void np_conn_flush(struct np_conn *c)
{
	while (c->txhead && !c->closing) {
		struct iovec iov[TX_IOV];
		int cnt = 0;
		for (np_buf *b = c->txhead; b && cnt < TX_IOV; b = b->next) {
			iov[cnt].iov_base = b->data + b->off;
			iov[cnt].iov_len = b->len - b->off;
			cnt++;
		}
		ssize_t n;
		if (c->is_sock) {
			struct msghdr mh = {.msg_iov = iov, .msg_iovlen = (size_t)cnt};
			n = sendmsg(c->wfd, &mh, MSG_NOSIGNAL | MSG_DONTWAIT);
		} else {
			n = writev(c->wfd, iov, cnt);
		}
		if (n < 0) {
			if (errno == EINTR)
				continue;
			if (errno == EAGAIN) {
				c->want_out = 1;
				np_conn_update_events(c);
				return;
			}
			np_conn_close(c, strerror(errno));
			return;
		}
		size_t left = (size_t)n;
		while (c->txhead && left) {
			np_buf *b = c->txhead;
			size_t rest = b->len - b->off;
			if (left < rest) {
				b->off += (uint32_t)left;
				break;
			}
			left -= rest;
			c->txhead = b->next;
			if (!c->txhead)
				c->txtail = NULL;
			c->ntx--;
			np_buf_put(b);
		}
	}
	if (c->want_out || c->rd_paused) {
		c->want_out = 0;
		np_conn_update_events(c);
	}
}

static void drop_tx(struct np_conn *c)
{
	while (c->txhead) {
		np_buf *b = c->txhead;
		c->txhead = b->next;
		np_buf_put(b);
	}
	c->txtail = NULL;
	c->ntx = 0;
}

void np_conn_close(struct np_conn *c, const char *why)
{
	if (c->closing)
		return;
	c->closing = 1;
	np_log(c->srv, 1, "conn %u (%s): closed: %s", c->id, c->peer.desc, why);
	epoll_ctl(c->loop->epfd, EPOLL_CTL_DEL, c->rfd, NULL);
	close(c->rfd);
	if (c->wfd != c->rfd) {
		epoll_ctl(c->loop->epfd, EPOLL_CTL_DEL, c->wfd, NULL);
		close(c->wfd);
	}
	drop_tx(c);
	np_conn_abort(c);
	np_conn_maybe_free(c);
}

/* After EOF: close once every request is answered and every reply written
 * (and no whole frame is left to dispatch). */
void np_conn_maybe_finish(struct np_conn *c)
{
	if (c->eof && !c->closing && c->outstanding == 0 && !c->txhead && !c->needs_rx)
		np_conn_close(c, "peer closed the connection");
}

/* A closing connection is freed once its last request is back; the loop
 * does it at the end of its iteration, when nothing on the stack uses it. */
void np_conn_maybe_free(struct np_conn *c)
{
	if (c->closing && c->outstanding == 0)
		np_loop_mark_dirty(c);
}

void np_conn_free(struct np_conn *c)
{
	struct np_loop *l = c->loop;
	np_server *s = c->srv;
	np_fid_table_free(c);
	if (c->rx)
		np_buf_put(c->rx);
	drop_tx(c);
	np_req_pool_trim(c, 0);
	struct np_bufcache_stats bst;
	np_bufcache_stats(c->bc, &bst);
	atomic_fetch_add_explicit(&s->st_buf_gets, bst.gets, memory_order_relaxed);
	atomic_fetch_add_explicit(&s->st_buf_misses, bst.misses, memory_order_relaxed);
	np_bufcache_free(c->bc);
	if (c->prev)
		c->prev->next = c->next;
	else
		l->conns = c->next;
	if (c->next)
		c->next->prev = c->prev;
	l->nconns--;
	atomic_fetch_sub(&s->nconns, 1);
	atomic_fetch_sub(&s->st_open, 1);
	free(c);
	np_server_conn_gone(s);
}

/* Idle: give back what only busy connections need. */
void np_conn_trim(struct np_conn *c)
{
	if (c->rx && c->rx->len == c->rx->off) {
		np_buf_put(c->rx);
		c->rx = NULL;
	}
	np_bufcache_trim(c->bc);
	np_req_pool_trim(c, 2);
	np_fid_pool_trim(c, 4);
}

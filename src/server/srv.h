/* Server core internals.  How a request flows (docs/ARCHITECTURE.md):
 *   loop thread: read -> frame -> decode -> checks/fids -> handler inline, or
 *                copy frame + queue to a worker
 *   worker:      handler -> push onto the loop's completion stack -> eventfd
 *   loop thread: completion -> fid table updates -> encode -> tx queue ->
 *                one writev per connection per wake-up
 * Everything that belongs to a connection (fid table, tag table, buffer
 * cache, request and fid pools) is touched only by its loop thread; workers
 * only run handlers on requests they were handed.
 */
#ifndef NP_SERVER_SRV_H
#define NP_SERVER_SRV_H

#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "ninep/buf.h"
#include "ninep/server.h"

#define NP_TAGHASH 64 /* buckets; in-flight requests are few */

enum np_req_state {
	NP_RS_NEW,
	NP_RS_QUEUED,    /* on the worker queue */
	NP_RS_RUNNING,   /* handler running (worker, or async) */
	NP_RS_CANCELLED, /* flushed before it started: no reply */
	NP_RS_DONE,
};

/* What an epoll event points at. */
enum np_ev_kind { NP_EV_CONN, NP_EV_CONN_W, NP_EV_LISTEN, NP_EV_WAKE };
struct np_ev {
	uint8_t kind;
};

struct np_sfid {
	struct np_sfid *hnext;   /* fid hash chain / free list */
	int refs;                /* table + requests using it (loop thread only) */
	uint8_t live;            /* visible to requests (not pending) */
	/* 9P2000/.u sessions only (compat.c), loop thread only: the file's
	 * path from its attach root ("/", "/a/b": Tstat's name is the last
	 * element; Twstat renames find the parent by it), which attach (tree)
	 * it descends from, where a directory read stands (byte offset ->
	 * readdir cookie), and ORCLOSE (remove at clunk). */
	char *name;
	uint64_t dir_off, dir_cookie;
	uint32_t tree;
	uint8_t rclose;
	np_fid pub;              /* last: has the backend's flexible priv[] */
};

struct np_sreq {
	np_req pub;
	struct np_sreq *next;    /* pool free list / worker queue */
	struct np_sreq *dnext;   /* completion stack */
	struct np_sreq *hnext;   /* tag hash chain */
	struct np_sreq *flushers;/* Tflush requests waiting on this one */
	np_buf *rbuf;            /* reply buffer */
	np_buf *fbuf;            /* own copy of the request frame (off-loop) */
	np_handler handler;      /* what a worker runs */
	_Atomic int state;
	int err;
	uint8_t in_tags;         /* present in the tag table */
	uint8_t discard;         /* no reply (flushed while queued, Tversion, disconnect) */
	_Atomic uint8_t flushed; /* client asked to flush it */
	uint8_t op;              /* enum np_op, or NP_OP_COUNT for core-only */
	uint8_t drop_table_ref;  /* Tclunk/Tremove: the table's fid ref goes too */
	/* compat.c: every backend op a composite 9P2000/.u handler calls (the
	 * request runs inline only if all are inline-safe; 0: just `op`), its
	 * per-request state (freed at release), and, for a composite step
	 * built by the adapter rather than read from the wire, where
	 * np_respond() delivers (never the completion stack). */
	uint64_t need_ops;
	struct np_compat_req *compat;
	struct np_compat_sub *sub;
};

struct np_loop;

struct np_conn {
	struct np_ev ev_r;             /* rfd (and wfd when they are one socket) */
	struct np_ev ev_w;             /* wfd when it is a separate descriptor */
	uint32_t mask_r, mask_w;       /* events registered now */
	uint8_t needs_rx;              /* whole frames wait in rx (resume) */
	np_server *srv;
	struct np_loop *loop;
	struct np_conn *next, *prev;   /* the loop's connection list */
	struct np_conn *dirty_next;    /* loop's list of conns with tx to flush */
	int rfd, wfd;
	uint8_t is_sock;
	uint8_t closing;               /* no more reads; freed when quiet */
	uint8_t rd_paused;             /* EPOLLIN removed (backpressure) */
	uint8_t want_out;              /* EPOLLOUT registered */
	uint8_t dirty;                 /* on the dirty list */
	uint8_t versioned;
	uint8_t eof;                   /* peer closed its side: finish, then close */
	uint8_t active;                /* traffic since the last idle sweep */
	uint8_t idle_ticks;
	uint32_t ntx;                  /* replies queued, not yet written */
	uint32_t id;                   /* for log lines */
	np_peer peer;
	enum np_dialect dialect;
	uint32_t msize;
	struct np_bufcache *bc;
	np_buf *rx;
	np_buf *txhead, *txtail;
	struct np_sreq *tags[NP_TAGHASH];
	uint32_t ntags;
	uint32_t outstanding;          /* requests not yet finished (incl. discarded) */
	struct np_sreq *version_req;   /* a Tversion waiting for the session to drain */
	/* fid table: chained hash, grows by doubling */
	struct np_sfid **fidtab;
	uint32_t fidmask;
	uint32_t nfids;
	/* pools (bounded retention) */
	struct np_sreq *reqfree;
	uint32_t nreqfree;
	struct np_sfid *fidfree;
	uint32_t nfidfree;
};

struct np_loop {
	np_server *srv;
	pthread_t thr;
	int epfd;
	int efd;                       /* eventfd: completions, adoptions, stop */
	_Atomic(struct np_sreq *) done;/* completion stack from workers/async */
	struct np_conn *conns;
	uint32_t nconns;
	struct np_conn *dirty;
	pthread_mutex_t adopt_lock;    /* connections handed over from outside */
	struct np_conn *adopt;
	uint64_t last_sweep;
	uint64_t stop_deadline;
	uint8_t stopping;
	uint8_t listeners_paused;
};

struct np_listener {
	struct np_ev ev;
	int fd;
	uint8_t paused;                /* out of descriptors: retry at the next tick */
	np_addr addr;
	uint8_t has_addr;
};

struct np_server {
	const struct np_fs_ops *ops;
	void *fs;
	struct np_server_opts o;
	size_t fid_size;
	struct np_loop *loops;
	int nloops;
	/* worker pool */
	pthread_t *workers;
	int nworkers;
	pthread_mutex_t wlock;
	pthread_cond_t wcond;
	struct np_sreq *whead, *wtail;
	uint8_t wstop;
	/* listeners */
	struct np_listener *lis;
	int nlis;
	_Atomic int started;
	_Atomic int stopping;
	_Atomic unsigned adopt_rr;
	pthread_mutex_t wait_lock;
	pthread_cond_t wait_cond;
	int loops_running;
	_Atomic int had_conn;          /* stdio-style servers end with their last session */
	_Atomic uint32_t next_conn_id;
	_Atomic uint32_t nconns;
	/* statistics */
	_Atomic uint64_t st_accepted, st_open, st_requests, st_errors;
	_Atomic uint64_t st_buf_gets, st_buf_misses;
};

/* loop.c */
void *np_loop_main(void *arg);
void np_loop_wake(struct np_loop *l);
void np_loop_mark_dirty(struct np_conn *c);
struct np_conn *np_conn_new(np_server *s, struct np_loop *l, int rfd, int wfd,
			    const np_peer *peer);

int np_loop_init(np_server *s, struct np_loop *l);
void np_loop_add_listener(struct np_loop *l, struct np_listener *li);
void np_loop_hand_over(struct np_loop *l, struct np_conn *c);
void np_loop_destroy(struct np_loop *l);

/* server.c */
void np_server_conn_gone(np_server *s);

/* conn.c */
void np_conn_on_readable(struct np_conn *c);
void np_conn_process_rx(struct np_conn *c);
void np_conn_free(struct np_conn *c);
void np_conn_flush(struct np_conn *c);
void np_conn_close(struct np_conn *c, const char *why);
void np_conn_maybe_free(struct np_conn *c);
void np_conn_maybe_finish(struct np_conn *c);
void np_conn_trim(struct np_conn *c);
void np_conn_update_events(struct np_conn *c);

/* dispatch.c */
void np_dispatch(struct np_conn *c, const uint8_t *frame, uint32_t len);
void np_complete(struct np_sreq *q);   /* loop thread: finish a request */
void np_req_release(struct np_sreq *q);
void np_req_pool_trim(struct np_conn *c, uint32_t keep);
void np_conn_abort(struct np_conn *c);

/* fid.c */
struct np_sfid *np_fid_lookup(struct np_conn *c, uint32_t fid);
struct np_sfid *np_fid_create(struct np_conn *c, uint32_t fid, int *err);
void np_fid_unhash(struct np_conn *c, struct np_sfid *f);
void np_fid_put(struct np_conn *c, struct np_sfid *f);
void np_fid_clunk_all(struct np_conn *c);
void np_fid_pool_trim(struct np_conn *c, uint32_t keep);
void np_fid_table_free(struct np_conn *c);

/* worker.c */
int np_workers_start(np_server *s);
void np_workers_stop(np_server *s);
void np_workers_submit(np_server *s, struct np_sreq *q);

static inline struct np_sreq *np_sreq_of(np_req *r)
{
	return (struct np_sreq *)r;
}

static inline struct np_sfid *np_sfid_of(np_fid *f)
{
	return (struct np_sfid *)((char *)f - offsetof(struct np_sfid, pub));
}

#endif

/* ninep server library: serve any file tree over 9P.
 *
 * A backend (a "filesystem") is a table of handlers, one per 9P2000.L
 * operation.  Each handler takes the request, reads the decoded T-message in
 * r->ifcall and the fids the server resolved for it, fills r->ofcall (the
 * R-message, whose type the server has already set) and returns:
 *    0          reply with r->ofcall
 *    errno > 0  reply with an error (Rlerror, or Rerror for 9P2000/.u)
 *    NP_ASYNC   the handler keeps r and calls np_respond(r, err) later, from
 *               any thread (exactly once)
 *
 * The server core owns fids, tags, flush, the session (Tversion/Tattach
 * checks) and buffers; backends see only valid fids.  Plain 9P2000 and
 * 9P2000.u clients are served through an adapter onto the same handlers.
 *
 * Threads: handlers run either inline on the connection's event-loop thread
 * (operations the backend marks in `inline_ops`: they must not block) or on a
 * worker thread.  Two requests on the same fid may run at once on different
 * threads: handlers must keep per-fid state memory-safe under that (clients
 * that do it get whatever POSIX gives, never a crash).
 */
#ifndef NINEP_SERVER_H
#define NINEP_SERVER_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "ninep/proto.h"
#include "ninep/transport.h"

#ifdef __cplusplus
extern "C" {
#endif

#define NP_ASYNC (-1)

typedef struct np_server np_server;
typedef struct np_conn np_conn;
typedef struct np_req np_req;

typedef struct np_fid {
	uint32_t fid;
	np_qid qid;
	uint32_t uid;           /* n_uname of the attach (or the backend's choice) */
	uint8_t opened;         /* set by the core after a successful open/create */
	uint32_t open_flags;    /* Tlopen/Tlcreate flags when opened */
	np_conn *conn;
	void *user;             /* backend: per-attach identity, copied on walk */
	/* backend private storage: fid_priv_size bytes, zeroed for each new fid */
	uint64_t priv[];
} np_fid;

struct np_req {
	np_fcall ifcall;        /* decoded request; views are valid until the reply */
	np_fcall ofcall;        /* reply; type and tag preset */
	np_fid *fid;            /* the fid the message names (dfid for Tmkdir/
	                         * Tsymlink/Tmknod/Tlink, olddirfid for Trenameat,
	                         * dirfid for Tunlinkat) */
	np_fid *newfid;         /* Twalk/Txattrwalk newfid (== fid when equal),
	                         * Tattach fid */
	np_fid *fid2;           /* Tattach afid, Trename dfid, Tlink fid,
	                         * Trenameat newdirfid */
	np_conn *conn;
	void *fs;               /* the backend instance given to np_server_new */
	enum np_dialect dialect;
	uint32_t msize;
	void *aux;              /* backend's, for NP_ASYNC handlers */
};

/* Operation bits for np_fs_ops.inline_ops. */
enum np_op {
	NP_OP_ATTACH, NP_OP_WALK, NP_OP_LOPEN, NP_OP_LCREATE, NP_OP_READ,
	NP_OP_WRITE, NP_OP_CLUNK, NP_OP_REMOVE, NP_OP_READDIR, NP_OP_GETATTR,
	NP_OP_SETATTR, NP_OP_STATFS, NP_OP_SYMLINK, NP_OP_MKNOD, NP_OP_RENAME,
	NP_OP_READLINK, NP_OP_XATTRWALK, NP_OP_XATTRCREATE, NP_OP_FSYNC,
	NP_OP_LOCK, NP_OP_GETLOCK, NP_OP_LINK, NP_OP_MKDIR, NP_OP_RENAMEAT,
	NP_OP_UNLINKAT, NP_OP_AUTH, NP_OP_COUNT
};
#define NP_OP_BIT(op) (1ull << (op))
#define NP_OPS_ALL ((1ull << NP_OP_COUNT) - 1)

typedef int (*np_handler)(np_req *r);

struct np_fs_ops {
	/* Tattach: r->newfid is the new root fid (r->fid2 the afid, or NULL).
	 * Fill ofcall.rattach.qid and set r->newfid->qid/user/priv. */
	np_handler attach;
	/* Tauth: NULL means "no authentication required" (an error reply). */
	np_handler auth;
	/* Twalk: walk r->fid by ifcall.twalk.wname[0..nwname) into r->newfid
	 * (which is r->fid when fid == newfid; for nwname == 0 a clone).
	 * Fill ofcall.rwalk.  The core creates newfid only when every name was
	 * walked; a handler that walks some but not all names returns 0 with
	 * nwqid < nwname (and must leave newfid's state unused: the core
	 * discards it); failing on the first name returns the errno. */
	np_handler walk;
	/* Called when a fid is released (Tclunk, Tremove, disconnect, Tversion),
	 * after the last request using it finished.  Frees priv resources. */
	void (*destroy_fid)(np_fid *f);
	/* Tclunk: optional; its error is reported but the fid is released
	 * anyway (xattr writes commit here). */
	np_handler clunk;
	/* Tremove (9P2000): remove the file r->fid names; the fid is released
	 * whatever the result. */
	np_handler remove;
	np_handler lopen, lcreate;
	/* Tread/Treaddir: ofcall.rread.data points at the reply buffer where
	 * the payload goes (NP_RREAD_DATA), and ofcall.rread.count holds the
	 * room there (min(count, msize - NP_IOHDRSZ)).  Set count to what was
	 * produced.  Treaddir entries: np_dirent_encode(), whole entries only. */
	np_handler read, write, readdir;
	np_handler getattr, setattr, statfs;
	/* Treadlink: ofcall.rreadlink.target.s points at room in the reply
	 * buffer (target.len bytes of it, at offset 9 of the frame); write
	 * there and set len (or point it elsewhere; it is copied). */
	np_handler readlink;
	np_handler symlink, mknod, mkdir, link;
	np_handler rename, renameat, unlinkat;
	np_handler xattrwalk, xattrcreate;
	np_handler fsync, lock, getlock;

	uint64_t inline_ops;    /* NP_OP_BIT()s safe to run on the loop thread */
	size_t fid_priv_size;   /* bytes of np_fid.priv per fid */
};

/* Complete an NP_ASYNC request (any thread). */
void np_respond(np_req *r, int err);

/* Was this request flushed by the client while it ran?  A long-running
 * handler may poll this and give up with EINTR. */
int np_req_flushed(const np_req *r);

/* The identity of the peer of r's connection (SO_PEERCRED for unix). */
const np_peer *np_conn_peer(const np_conn *c);

struct np_server_opts {
	uint32_t msize;         /* largest msize offered; default 512 KiB */
	int loops;              /* event-loop threads; default: number of CPUs */
	int workers;            /* worker threads; default 4 */
	uint32_t max_conns;     /* default 16384 */
	uint32_t max_fids;      /* per connection; default 65536 */
	uint32_t max_inflight;  /* per connection; default 64 */
	int trace;              /* log every message in one line */
	/* After a wake-up with traffic, poll for the next request this many
	 * microseconds (yielding the CPU between polls) before sleeping in
	 * epoll: trades idle CPU for the cost of a cross-CPU wake-up.  0: off. */
	uint32_t busy_poll_us;
	/* enum np_bufcache_mode (ninep/buf.h): 0 caches message buffers; the
	 * malloc modes exist to measure what the cache saves. */
	int bufcache_mode;
	/* Admission: when allow_uids is non-NULL, unix peers whose uid is not in
	 * it (and every non-unix peer) are refused at accept. */
	const uid_t *allow_uids;
	size_t n_allow_uids;
	/* Log sink; default stderr.  level: 0 error, 1 info, 2 debug. */
	void (*log)(void *arg, int level, const char *msg);
	void *log_arg;
};

np_server *np_server_new(const struct np_fs_ops *ops, void *fs, const struct np_server_opts *o);
void *np_server_fs(const np_server *s);
/* Listen on an address string; may be called several times. */
int np_server_listen(np_server *s, const char *addr, char *err, size_t errlen);
/* Serve an already listening socket (systemd socket activation). */
int np_server_add_listener(np_server *s, int lfd);
/* Serve one session on a pair of descriptors (a pipe pair, stdio, a
 * connected socket).  The server closes them at the end. */
int np_server_add_fds(np_server *s, int rfd, int wfd, const char *desc);
/* Start the loop and worker threads and return. */
int np_server_start(np_server *s);
/* Stop accepting, let in-flight requests finish, close every connection,
 * join the threads.  Safe to call from a signal-handling thread. */
void np_server_stop(np_server *s);
/* Block until the server has stopped (np_server_stop, or, when every
 * listener is gone, the last connection closed). */
void np_server_wait(np_server *s);
void np_server_free(np_server *s);

struct np_server_stats {
	uint64_t conns_accepted, conns_open, requests, errors;
	/* message buffers of connections already closed: handed out, and of
	 * those, how many needed a malloc (the rest came from the cache) */
	uint64_t buf_gets, buf_misses;
};
void np_server_stats(np_server *s, struct np_server_stats *st);

void np_log(np_server *s, int level, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

#ifdef __cplusplus
}
#endif
#endif

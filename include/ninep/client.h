/* ninep client library: talk 9P2000.L, 9P2000.u or 9P2000 to a server.
 *
 * One np_client is one connection.  Any number of threads may issue requests
 * on it at once: each request takes a tag from a pool, replies are matched by
 * tag.  There is no reader thread: a thread waiting for its reply reads the
 * socket itself while no other thread does (leader/follower), dispatching
 * replies that belong to others and waking them, so a synchronous call from a
 * single thread never hops threads.
 *
 * Files are named by np_cfid handles (a fid plus what the client knows about
 * it).  A handle is used by one thread at a time; distinct handles on one
 * client may be used concurrently.
 *
 * Errors: every function returning int returns 0 (or a count) on success and
 * -errno on failure.  Server errors are errnos (Rlerror; Rerror's errno in .u;
 * np_strerrno() of the message in 9P2000).  A malformed or mismatched reply
 * fails its request with -EPROTO.  When the connection drops, every pending
 * request fails with -ECONNRESET (or -EPIPE when a write failed) and later
 * calls fail at once with the same error.
 */
#ifndef NINEP_CLIENT_H
#define NINEP_CLIENT_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <time.h>

#include "ninep/proto.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct np_client np_client;
typedef struct np_creq np_creq;

struct np_client_opts {
	uint32_t msize;          /* requested; default 1 MiB (servers cap it) */
	int dialect;             /* enum np_dialect; -1 = default 9P2000.L */
	uint32_t max_tags;       /* requests in flight; default 256, max 65535 */
	uint32_t pipeline;       /* read/write requests in flight per call;
	                          * default 8 */
	/* Called for every message sent (dir 'T') or received ('R'), for
	 * tracing; NULL for none.  Runs on the thread that sends/receives. */
	void (*trace)(void *arg, char dir, const np_fcall *f, enum np_dialect d);
	void *trace_arg;
};

/* Connect to an address string (see ninep/transport.h) and negotiate the
 * version.  opts may be NULL.  On failure returns -errno and writes a message
 * into err when err is not NULL. */
int np_client_connect(const char *addr, const struct np_client_opts *opts,
		      np_client **out, char *err, size_t errlen);
/* The same over already connected descriptors (rfd may equal wfd); the
 * client owns and closes them. */
int np_client_connect_fd(int rfd, int wfd, const struct np_client_opts *opts,
			 np_client **out, char *err, size_t errlen);
/* Close the connection and free everything.  No other thread may be using
 * the client, and every handle must have been clunked or removed first (on a
 * lost connection np_cfid_clunk only frees the handle). */
void np_client_free(np_client *c);
/* Drop the connection now: pending and later requests fail with
 * -ECONNRESET.  Safe to call from any thread (e.g. to interrupt waits). */
void np_client_shutdown(np_client *c);

uint32_t np_client_msize(const np_client *c);
enum np_dialect np_client_dialect(const np_client *c);
/* 0 while the connection is usable, else the -errno every call returns. */
int np_client_error(const np_client *c);

/* ---- Asynchronous requests ------------------------------------------
 * np_client_submit() sends one T-message (its tag is assigned by the library;
 * strings and payload are copied into the frame, so they may be freed once
 * submit returns).  Then either:
 *   - with a callback: cb(r, arg) runs once on whichever thread reads the
 *     reply (or fails the connection), without library locks held; r and its
 *     reply are valid during the callback and released after it returns;
 *   - without: the caller waits with np_creq_wait() (or polls with
 *     np_creq_done() + np_client_poll()) and must np_creq_release() it.
 * Completion is driven by waiting threads: with only callback requests in
 * flight, call np_client_poll() or np_client_drain() to make progress.
 */
typedef void (*np_creq_cb)(np_creq *r, void *arg);

/* Returns 0, or -errno when no request was made (connection lost, message
 * not encodable).  *out (may be NULL) receives the request only when it has
 * no callback.  A request whose sending fails completes with -EPIPE.  When
 * every tag is in use it waits for one, driving the connection meanwhile. */
int np_client_submit(np_client *c, const np_fcall *t, np_creq_cb cb, void *arg,
		     np_creq **out);
/* Wait for r to complete; returns its error (np_creq_error). */
int np_creq_wait(np_creq *r);
/* Non-blocking: 1 when r completed. */
int np_creq_done(np_creq *r);
/* 0, or -errno: a server error, -EPROTO, -ECANCELED (flushed),
 * -ECONNRESET/-EPIPE (connection lost). */
int np_creq_error(np_creq *r);
/* The reply (Rlerror/Rerror included), or NULL when the request failed
 * locally.  Views point into the reply buffer, valid until release. */
const np_fcall *np_creq_reply(np_creq *r);
/* Release a completed request: frees its tag and buffers. */
void np_creq_release(np_creq *r);
/* Cancel r: send Tflush and wait for Rflush.  If the reply to r arrives
 * first, r completes normally with it; otherwise r fails with -ECANCELED.
 * Only for requests without a callback, before their release.  Returns 0 or
 * the -errno of the flush itself (connection lost). */
int np_creq_cancel(np_creq *r);

/* Read and dispatch replies until at least one request completed, or
 * timeout_ms passed (-1: no limit).  Returns the number completed by this
 * call, 0 on timeout or when nothing is in flight, or -errno if the
 * connection is lost. */
int np_client_poll(np_client *c, int timeout_ms);
/* Drive the connection until no request is in flight. */
int np_client_drain(np_client *c);

/* ---- Fids ------------------------------------------------------------ */
typedef struct np_cfid {
	np_client *client;
	uint32_t fid;
	np_qid qid;
	uint32_t iounit;     /* from open/create; 0 = msize - NP_IOHDRSZ */
	int opened;          /* open or created */
} np_cfid;               /* read-only for users */

/* Attach: uname and/or n_uname (NP_NONUNAME for none) name the user, aname
 * the tree.  afid is always NOFID (no authentication). */
int np_client_attach(np_client *c, const char *uname, uint32_t n_uname,
		     const char *aname, np_cfid **root);
/* Walk nwname (<= NP_MAXWELEM) names from f to a new handle; 0 names clones.
 * A walk that stops early fails with -ENOENT. */
int np_cfid_walk(np_cfid *f, unsigned nwname, const char *const *names, np_cfid **out);
/* Walk a slash-separated path ("a/b/c"; empty and "." components skipped)
 * in walks of at most NP_MAXWELEM names.  "" clones. */
int np_client_walk_path(np_cfid *f, const char *path, np_cfid **out);
/* Tclunk and free the handle (always freed, even on error). */
int np_cfid_clunk(np_cfid *f);
/* Tremove and free the handle (the fid is gone either way). */
int np_cfid_remove(np_cfid *f);

/* Open with open(2) flags (O_RDONLY, O_WRONLY, O_RDWR, O_TRUNC, O_APPEND,
 * O_DIRECTORY...).  9P2000/.u map them onto Topen modes. */
int np_cfid_open(np_cfid *f, int flags);
/* Create `name` in directory f and open it with flags; on success f refers
 * to the new file (the protocol's semantics: clone first to keep the
 * directory).  mode: permission bits (and S_IFDIR etc. ignored); gid for .L
 * (NP_NONUNAME... use (uint32_t)-1 to let the server choose). */
int np_cfid_create(np_cfid *f, const char *name, int flags, uint32_t mode, uint32_t gid);

/* Read up to count bytes at offset; large reads are split into msize-sized
 * requests, several in flight.  Returns bytes read (short only at EOF) or
 * -errno. */
ssize_t np_cfid_pread(np_cfid *f, void *buf, size_t count, uint64_t offset);
/* Write count bytes at offset, split and pipelined likewise.  Returns bytes
 * written (the contiguous prefix that the server accepted) or -errno. */
ssize_t np_cfid_pwrite(np_cfid *f, const void *buf, size_t count, uint64_t offset);

/* File attributes, as 9P2000.L Rgetattr carries them (mode is st_mode). */
struct np_attr {
	uint64_t valid;      /* NP_GETATTR_* bits actually filled */
	np_qid qid;
	uint32_t mode, uid, gid;
	uint64_t nlink, rdev, size, blksize, blocks;
	struct timespec atime, mtime, ctime, btime;
	uint64_t gen, data_version;
};
/* Tgetattr (.L), or Tstat mapped onto np_attr (9P2000/.u). */
int np_cfid_getattr(np_cfid *f, uint64_t mask, struct np_attr *a);

struct np_setattr {
	uint32_t valid;      /* NP_SETATTR_* */
	uint32_t mode, uid, gid;
	uint64_t size;
	struct timespec atime, mtime; /* with NP_SETATTR_ATIME_SET/MTIME_SET */
};
/* Tsetattr (.L), or Twstat with "don't touch" fields (9P2000/.u: mode, size,
 * mtime, and uid/gid only in .u). */
int np_cfid_setattr(np_cfid *f, const struct np_setattr *s);

/* Tstat: the strings of *st are copied into strbuf (cap bytes) and point
 * there.  -ERANGE when they do not fit. */
int np_cfid_stat(np_cfid *f, np_stat *st, char *strbuf, size_t cap);
int np_cfid_wstat(np_cfid *f, const np_stat *st);

struct np_statfs {
	uint32_t type, bsize;
	uint64_t blocks, bfree, bavail, files, ffree, fsid;
	uint32_t namelen;
};
int np_cfid_statfs(np_cfid *f, struct np_statfs *s);
int np_cfid_fsync(np_cfid *f, int datasync);

/* ---- Directories ----------------------------------------------------- */
typedef struct np_readdir np_readdir;
struct np_direntry {
	np_qid qid;
	uint8_t type;        /* DT_* (derived from the qid/mode in 9P2000) */
	uint64_t offset;
	const char *name;    /* NUL-terminated; valid until the next call */
	const np_stat *stat; /* 9P2000/.u: the whole entry; NULL in .L */
};
/* Iterate an OPEN directory handle (Treaddir in .L, Tread of stat entries
 * otherwise).  The handle stays owned by the caller. */
int np_readdir_open(np_cfid *dir, np_readdir **out);
/* 1 with *e filled, 0 at the end, -errno. */
int np_readdir_next(np_readdir *d, struct np_direntry *e);
void np_readdir_close(np_readdir *d);

/* Directory operations; qid may be NULL.  9P2000/.u: mkdir uses Tcreate,
 * unlinkat uses walk + Tremove; the others need .L (-EOPNOTSUPP). */
int np_cfid_mkdir(np_cfid *dir, const char *name, uint32_t mode, uint32_t gid, np_qid *qid);
/* flags: 0 or NP_AT_REMOVEDIR.  Falls back to walk + Tremove when the server
 * answers Tunlinkat with EOPNOTSUPP. */
int np_cfid_unlinkat(np_cfid *dir, const char *name, uint32_t flags);
int np_cfid_rename(np_cfid *f, np_cfid *newdir, const char *newname);
/* Falls back to Trename when the server lacks Trenameat. */
int np_cfid_renameat(np_cfid *olddir, const char *oldname, np_cfid *newdir, const char *newname);
int np_cfid_symlink(np_cfid *dir, const char *name, const char *target, uint32_t gid, np_qid *qid);
/* Copies the target NUL-terminated; returns its length or -ERANGE. */
int np_cfid_readlink(np_cfid *f, char *buf, size_t cap);
int np_cfid_link(np_cfid *dir, np_cfid *target, const char *name);
int np_cfid_mknod(np_cfid *dir, const char *name, uint32_t mode, uint32_t major, uint32_t minor,
		  uint32_t gid, np_qid *qid);

/* ---- Extended attributes (.L) ----------------------------------------
 * get: value of `name` into buf; returns its size.  cap 0 only asks the
 * size; -ERANGE when it does not fit.  list: the NUL-separated name list
 * (like listxattr). */
ssize_t np_cfid_getxattr(np_cfid *f, const char *name, void *buf, size_t cap);
ssize_t np_cfid_listxattr(np_cfid *f, char *buf, size_t cap);
/* flags: 0, XATTR_CREATE or XATTR_REPLACE. */
int np_cfid_setxattr(np_cfid *f, const char *name, const void *value, size_t len, int flags);
int np_cfid_removexattr(np_cfid *f, const char *name);

/* ---- POSIX record locks (.L) ------------------------------------------ */
struct np_flock {
	uint8_t type;        /* NP_LOCK_TYPE_* */
	uint64_t start, length;
	uint32_t proc_id;
	const char *client_id;
};
/* Tlock; returns the NP_LOCK_* status (>= 0) or -errno. */
int np_cfid_lock(np_cfid *f, const struct np_flock *l, uint32_t flags);
/* Tgetlock: *l in, the conflicting lock (or type UNLCK) out; client_id is
 * copied into idbuf. */
int np_cfid_getlock(np_cfid *f, struct np_flock *l, char *idbuf, size_t idcap);

#ifdef __cplusplus
}
#endif
#endif

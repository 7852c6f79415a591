/* ninep ramfs: an in-memory file tree served through np_fs_ops, plus an
 * embedding API for synthetic files (control and status files whose
 * contents come from the program).
 *
 * The tree supports everything 9P2000.L can express: regular files (sparse:
 * holes cost no memory), directories, symlinks, hard links, device nodes,
 * fifos and sockets (metadata only), extended attributes, POSIX byte-range
 * locks (non-blocking: a conflict answers NP_LOCK_BLOCKED, which the Linux
 * client turns into a retry loop for F_SETLKW), stable readdir cookies and
 * unlink-while-open.
 *
 * Permissions (unless opts.noperm): the attaching uid (np_fid.uid, from
 * n_uname; uid 0 bypasses everything) is checked against the owner and
 * "other" permission bits: read/write on open and O_TRUNC, search (x) on
 * every walked directory, write+search on the directory for create, mkdir,
 * symlink, mknod, link, unlink, rename and remove, and the sticky bit on
 * unlink/rename.  ramfs has no group database, so the group class never
 * matches (a user who is not the owner gets the "other" bits).  chmod,
 * setting times explicitly and chgrp need ownership; chown needs root.
 * Atime is never updated by reads (like mounting with noatime), which keeps
 * the read path free of writes.
 *
 * Threads: every handler is non-blocking and safe to run concurrently from
 * any thread (one reader/writer lock protects the tree), so np_ramfs_ops
 * has inline_ops = NP_OPS_ALL.  Synthetic-file callbacks are called without
 * the lock held and may block only if they do so briefly: they run on the
 * event-loop thread; anything long should return NP_ASYNC.
 */
#ifndef NINEP_RAMFS_H
#define NINEP_RAMFS_H

#include <stddef.h>
#include <stdint.h>

#include "ninep/server.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct np_ramfs np_ramfs;

struct np_ramfs_opts {
	uint32_t root_mode;     /* permission bits of "/"; 0 means 0755 */
	uint32_t root_uid, root_gid;
	uint64_t max_bytes;     /* file data limit (ENOSPC); 0: no limit, and
	                         * statfs reports the machine's RAM */
	uint64_t max_nodes;     /* inode limit (ENOSPC); 0: no limit */
	int noperm;             /* skip every permission check */
};

/* A new empty tree (opts may be NULL).  NULL on allocation failure. */
np_ramfs *np_ramfs_new(const struct np_ramfs_opts *opts);
/* Free the tree.  Only after the server using it has stopped: every fid must
 * have been destroyed (or the fids are simply abandoned with the tree). */
void np_ramfs_free(np_ramfs *fs);

/* The handler table; pass the np_ramfs as the backend instance. */
extern const struct np_fs_ops np_ramfs_ops;

/* Statistics, e.g. for a status file or a test. */
struct np_ramfs_stats {
	uint64_t nodes;         /* live inodes, including unlinked open ones */
	uint64_t data_bytes;    /* memory holding file data */
};
void np_ramfs_stats(np_ramfs *fs, struct np_ramfs_stats *st);

/* ---- synthetic files ----------------------------------------------------
 *
 * A synthetic file is a regular file in the tree whose I/O goes to
 * callbacks.  Every callback is optional; a missing read or write makes the
 * file refuse opens for that access (EACCES).  Each returns 0, an errno, or
 * NP_ASYNC.
 *
 * open(r, arg, flags): Tlopen (flags are NP_L_O_* bits).  Must answer
 *   synchronously (0 or an errno; NP_ASYNC is treated as EINVAL).  It may
 *   keep per-open state in *np_synth_state(r).
 * read(r, arg, off, buf, count, got): fill buf[0..count) from offset off and
 *   set *got (0 means end of file).  buf is the reply buffer.
 * write(r, arg, off, data, count, wrote): consume data, set *wrote.
 * clunk(arg, state): the opened fid went away (Tclunk, Tremove, disconnect);
 *   state is the per-open state, to free.
 *
 * NP_ASYNC: read/write may keep r and finish later from any thread with
 * np_respond(r, err).  Before that call the handler must itself write the
 * payload into r->ofcall.rread.data (at most the room given as count, which
 * is also r->ofcall.rread.count on entry) and set r->ofcall.rread.count, or
 * set r->ofcall.rwrite.count for a write: got/wrote are ignored then.
 * r->aux is free for the handler's use.
 *
 * Reported size: 0 for np_ramfs_add_file files (readers read to EOF), the
 * content length for np_ramfs_add_static.  Truncation (O_TRUNC, setattr
 * size) is accepted and ignored, so `echo cmd > ctl` works.  Synthetic files
 * stay allocated until np_ramfs_free even if a client unlinks them, so their
 * ops/arg are never used after a removal races with a read.
 */
struct np_synth_ops {
	int (*open)(np_req *r, void *arg, uint32_t flags);
	int (*read)(np_req *r, void *arg, uint64_t off, uint8_t *buf, uint32_t count,
		    uint32_t *got);
	int (*write)(np_req *r, void *arg, uint64_t off, const uint8_t *data,
		     uint32_t count, uint32_t *wrote);
	void (*clunk)(void *arg, void *state);
};

/* Per-open state slot of the fid a synthetic-file request names (NULL
 * initially).  Valid in open/read/write callbacks. */
void **np_synth_state(np_req *r);

/* Create a synthetic file at an absolute path, creating missing parent
 * directories (mode 0755, owned by the root's owner).  mode: permission bits.
 * ops must stay valid until np_ramfs_free.  Returns 0 or -errno (-EEXIST,
 * -ENOTDIR, -EINVAL for a relative path or a bad name). */
int np_ramfs_add_file(np_ramfs *fs, const char *path, uint32_t mode,
		      const struct np_synth_ops *ops, void *arg);
/* A read-only synthetic file serving a copy of data[0..len). */
int np_ramfs_add_static(np_ramfs *fs, const char *path, uint32_t mode,
			const void *data, size_t len);
/* Create a directory (and its missing parents); an existing directory is
 * fine.  Returns 0 or -errno. */
int np_ramfs_mkdir(np_ramfs *fs, const char *path, uint32_t mode);

#ifdef __cplusplus
}
#endif
#endif

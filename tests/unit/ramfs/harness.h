/* Calls ramfs handlers directly, the way the server core will: a request
 * built by hand as the decoder would fill it, fids allocated with the
 * backend's private room, and the core's bookkeeping (opened flag, fid
 * release) done here. */
#ifndef RAMFS_TEST_HARNESS_H
#define RAMFS_TEST_HARNESS_H

#include <stdint.h>

#include "ninep/ramfs.h"

#define TH_MSIZE 65536u

np_fid *th_fid_new(uint32_t fidno);
/* Release a fid as the core does after its last request. */
void th_fid_release(np_fid *f);
/* A request of `type`, ofcall.type preset, for fs. */
void th_req_init(np_req *r, np_ramfs *fs, uint8_t type);

np_fid *th_attach(np_ramfs *fs, uint32_t uid, const char *aname, int *err);
/* Walk path ("a/b", "" to clone) from f into a new fid; NULL with *err set
 * on failure (partial walks count as ENOENT-like failures: *err = -nwqid
 * when some but not all names were walked). */
np_fid *th_walk(np_ramfs *fs, np_fid *f, const char *path, int *err);
/* Walk in place (newfid == fid). */
int th_walk_self(np_ramfs *fs, np_fid *f, const char *path, uint16_t *nwqid);
int th_lopen(np_ramfs *fs, np_fid *f, uint32_t flags);
int th_lcreate(np_ramfs *fs, np_fid *f, const char *name, uint32_t flags, uint32_t mode);
int th_read(np_ramfs *fs, np_fid *f, uint64_t off, void *buf, uint32_t count, uint32_t *got);
int th_write(np_ramfs *fs, np_fid *f, uint64_t off, const void *data, uint32_t count, uint32_t *wrote);
int th_readdir(np_ramfs *fs, np_fid *f, uint64_t off, void *buf, uint32_t count, uint32_t *got);
int th_mkdir(np_ramfs *fs, np_fid *d, const char *name, uint32_t mode, np_qid *qid);
int th_symlink(np_ramfs *fs, np_fid *d, const char *name, const char *target, np_qid *qid);
int th_mknod(np_ramfs *fs, np_fid *d, const char *name, uint32_t mode, uint32_t major, uint32_t minor);
int th_link(np_ramfs *fs, np_fid *d, np_fid *f, const char *name);
int th_rename(np_ramfs *fs, np_fid *f, np_fid *d, const char *name);
int th_renameat(np_ramfs *fs, np_fid *od, const char *on, np_fid *nd, const char *nn);
int th_unlinkat(np_ramfs *fs, np_fid *d, const char *name, uint32_t flags);
/* Tremove / Tclunk: the fid is released whatever the result. */
int th_remove(np_ramfs *fs, np_fid *f);
int th_clunk(np_ramfs *fs, np_fid *f);
int th_getattr(np_ramfs *fs, np_fid *f, np_fcall *out);
int th_setattr(np_ramfs *fs, np_fid *f, const np_fcall *in);
int th_readlink(np_ramfs *fs, np_fid *f, char *out, size_t cap);
int th_statfs(np_ramfs *fs, np_fid *f, np_fcall *out);
int th_fsync(np_ramfs *fs, np_fid *f);
np_fid *th_xattrwalk(np_ramfs *fs, np_fid *f, const char *name, uint64_t *size, int *err);
int th_xattrcreate(np_ramfs *fs, np_fid *f, const char *name, uint64_t size, uint32_t flags);
int th_lock(np_ramfs *fs, np_fid *f, uint8_t type, uint64_t start, uint64_t len,
	    uint32_t proc, const char *client, uint8_t *status);
int th_getlock(np_ramfs *fs, np_fid *f, uint8_t type, uint64_t start, uint64_t len,
	       uint32_t proc, const char *client, np_fcall *out);

/* Convenience: create path's file (in dir d) with contents, closed. */
void th_put(np_ramfs *fs, np_fid *d, const char *name, const char *contents);
/* Whole contents of a file reached by walking path from d. */
int th_get(np_ramfs *fs, np_fid *d, const char *path, char *out, size_t cap, uint32_t *len);

#endif

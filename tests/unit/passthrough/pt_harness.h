/* Test harness for the passthrough backend: a temporary export and calls
 * of its handlers with requests built the way the server core builds them
 * (until the core exists the handlers are driven directly). */
#ifndef PT_HARNESS_H
#define PT_HARNESS_H

#include <limits.h>
#include <stdint.h>

#include "ninep/passthrough.h"

struct h {
	np_passthrough *fs;
	const struct np_fs_ops *ops;
	char base[PATH_MAX];    /* mkdtemp directory holding the two below */
	char root[PATH_MAX];    /* base/export: what is exported */
	char outside[PATH_MAX]; /* base/outside: must stay unreachable */
	uint32_t msize;
};

/* Make base, export and outside (outside/secret holds "SECRET"), and open
 * the export with opts (root filled in). 0 or an errno. */
int h_setup(struct h *h, const struct np_passthrough_opts *opts);
/* Open another instance on the same export. */
int h_reopen(struct h *h, const struct np_passthrough_opts *opts);
void h_teardown(struct h *h);

/* "root/rel" or "outside/rel" into a static buffer (one at a time). */
const char *h_in(struct h *h, const char *rel);
const char *h_out(struct h *h, const char *rel);

np_fid *h_fid(struct h *h, uint32_t num);
/* A request as the core presents it to a handler (fs, dialect, msize,
 * ofcall type and tag preset; r->fid = f). */
void h_req(struct h *h, np_req *r, uint8_t type, np_fid *f);
/* Tclunk then release (destroy_fid) and free; returns the clunk error. */
int h_clunk(struct h *h, np_fid *f);

int h_attach(struct h *h, np_fid *f, const char *uname, uint32_t n_uname, const char *aname);
/* Walk f by the '/'-separated path into nf; *nwqid gets the count of
 * qids returned and *last the last one (either may be NULL). */
int h_walk(struct h *h, np_fid *f, np_fid *nf, const char *path, int *nwqid, np_qid *last);
int h_walkv(struct h *h, np_fid *f, np_fid *nf, int n, const char *const *names, int *nwqid);
/* Clone f by path into a fresh fid; NULL (and the fid freed) on failure. */
np_fid *h_walkto(struct h *h, np_fid *f, const char *path);

int h_lopen(struct h *h, np_fid *f, uint32_t flags, np_qid *q);
int h_lcreate(struct h *h, np_fid *f, const char *name, uint32_t flags, uint32_t mode,
	      uint32_t gid, np_qid *q);
int h_read(struct h *h, np_fid *f, uint64_t off, void *buf, uint32_t count, uint32_t *got);
int h_write(struct h *h, np_fid *f, uint64_t off, const void *data, uint32_t count,
	    uint32_t *wrote);
int h_readdir(struct h *h, np_fid *f, uint64_t off, void *buf, uint32_t count, uint32_t *got);
int h_getattr(struct h *h, np_fid *f, np_fcall *out);
int h_setattr(struct h *h, np_fid *f, uint32_t valid, uint32_t mode, uint32_t uid,
	      uint32_t gid, uint64_t size, uint64_t asec, uint64_t ansec, uint64_t msec,
	      uint64_t mnsec);
int h_statfs(struct h *h, np_fid *f, np_fcall *out);
int h_readlink(struct h *h, np_fid *f, char *buf, uint16_t room);
int h_mkdir(struct h *h, np_fid *d, const char *name, uint32_t mode, uint32_t gid, np_qid *q);
int h_symlink(struct h *h, np_fid *d, const char *name, const char *target, uint32_t gid,
	      np_qid *q);
int h_mknod(struct h *h, np_fid *d, const char *name, uint32_t mode, uint32_t major,
	    uint32_t minor, uint32_t gid, np_qid *q);
int h_link(struct h *h, np_fid *d, np_fid *f, const char *name);
int h_rename(struct h *h, np_fid *f, np_fid *d, const char *name);
int h_renameat(struct h *h, np_fid *od, const char *on, np_fid *nd, const char *nn);
int h_unlinkat(struct h *h, np_fid *d, const char *name, uint32_t flags);
/* Tremove, then the fid is released and freed whatever the result. */
int h_remove(struct h *h, np_fid *f);
int h_fsync(struct h *h, np_fid *f, uint32_t datasync);
int h_xattrwalk(struct h *h, np_fid *f, np_fid *nf, const char *name, uint64_t *size);
int h_xattrcreate(struct h *h, np_fid *f, const char *name, uint64_t size, uint32_t flags);
int h_lock(struct h *h, np_fid *f, uint8_t type, uint64_t start, uint64_t len, uint8_t *status);
int h_getlock(struct h *h, np_fid *f, uint8_t type, uint64_t start, uint64_t len, np_fcall *out);

/* Names in an Rreaddir payload, appended to names[] ('\n'-joined). */
int h_dirents(const uint8_t *data, uint32_t count, char *names, size_t cap, uint64_t *last_off);

/* Open descriptors of the process (to catch leaks). */
int h_nfds(void);

/* Read a whole local file (for checking effects); -1 if absent. */
long h_slurp(const char *path, char *buf, size_t cap);

#endif

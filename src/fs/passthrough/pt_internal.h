/* Internals of the passthrough backend shared by its source files. */
#ifndef NP_PT_INTERNAL_H
#define NP_PT_INTERNAL_H

#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <sys/stat.h>
#include <sys/types.h>

#include "ninep/passthrough.h"
#include "ninep/proto.h"
#include "ninep/server.h"

#define PT_HIDDEN __attribute__((visibility("hidden")))

/* A set of credentials requests run with.  Interned per instance, freed with
 * it; fid->user points at one (NULL: the server's own). */
struct pt_ident {
	uint64_t serial;        /* unique in the process; 0 = the server itself */
	uid_t uid;
	gid_t gid;
	struct pt_ident *next;
	int ngroups;
	gid_t groups[];
};

/* Filesystems met under the export, numbered for qid.path (dev index in the
 * top byte, inode in the rest).  Index 255 is shared by any beyond it. */
#define PT_MAXDEV 256

struct np_passthrough {
	struct np_fs_ops ops;
	int rootfd;             /* O_PATH of the export root */
	int procfd;             /* O_PATH of /proc/self/fd */
	dev_t rootdev;
	ino_t rootino;
	enum np_passthrough_identity idmode;
	int read_only, allow_special;
	uid_t *allow;
	size_t nallow;
	atomic_int no_openat2;

	pthread_mutex_t lock;   /* idents, devs (appends) */
	struct pt_ident *self;  /* the server's own credentials */
	struct pt_ident *squash;
	struct pt_ident *idents;
	dev_t devs[PT_MAXDEV];
	atomic_int ndevs;
};

/* xattr fids: a value read by Txattrwalk, or one being written after
 * Txattrcreate (committed at clunk). */
struct pt_xattr {
	int writing;
	int flags;
	uint64_t size;          /* bytes of data[] */
	uint64_t written;       /* writing: bytes received so far (in order) */
	char name[256];         /* XATTR_NAME_MAX + 1 */
	uint8_t data[];
};

/* np_fid.priv.  `live` is set once by attach/walk before the fid is
 * visible to other requests; the lock protects the rest against requests
 * running at once on the same fid (readers: ordinary operations; writers:
 * operations that change the fid's descriptors or name). */
struct pt_fid {
	pthread_rwlock_t lock;
	int live;
	int fd;                 /* O_PATH of the file */
	int ofd;                /* open file description after lopen/lcreate */
	int pfd;                /* O_PATH of the directory it was reached from, or -1 */
	mode_t type;            /* S_IFMT bits */
	dev_t dev;
	ino_t ino;
	uint32_t oflags;        /* open(2) flags of ofd */
	uint64_t dir_pos;       /* readdir: where ofd's position stands */
	struct pt_xattr *xa;
	char name[NAME_MAX + 1]; /* name in pfd ("" when unknown) */
};

static inline struct pt_fid *pt_fid(np_fid *f)
{
	return (struct pt_fid *)(void *)f->priv;
}

static inline np_passthrough *pt_fs(np_req *r)
{
	return (np_passthrough *)r->fs;
}

/* instance.c */
PT_HIDDEN np_qid np_pt_qid(np_passthrough *fs, const struct stat *st);
PT_HIDDEN uint64_t np_pt_qpath(np_passthrough *fs, dev_t dev, ino_t ino);
PT_HIDDEN uint8_t np_pt_qtype(mode_t mode);
/* Copy a protocol name into buf: errno for empty names, names with '/' or
 * NUL, "." and ".." (unless dots_ok), over NAME_MAX. */
PT_HIDDEN int np_pt_name(np_str s, char buf[NAME_MAX + 1], int dots_ok);
/* "/proc/self/fd/N" into buf[32]. */
PT_HIDDEN void np_pt_procpath(char buf[32], int fd);
/* Open one name beneath dirfd as O_PATH, never following a symlink.
 * Returns an fd or -errno. */
PT_HIDDEN int np_pt_lookup(np_passthrough *fs, int dirfd, const char *name);
/* Reopen the inode of an O_PATH fd with open(2) flags. fd or -errno. */
PT_HIDDEN int np_pt_reopen(np_passthrough *fs, int pathfd, int flags);
PT_HIDDEN int np_pt_is_root(np_passthrough *fs, const struct stat *st);

/* identity.c */
PT_HIDDEN int np_pt_become(np_passthrough *fs, const struct pt_ident *id);
/* Switch to the identity the fid was attached with. */
static inline int np_pt_enter(np_req *r, np_fid *f)
{
	np_passthrough *fs = pt_fs(r);
	return np_pt_become(fs, f->user ? (const struct pt_ident *)f->user : fs->self);
}
/* The start of most requests on a fid: EBADF unless the fid is live, then
 * the switch to its identity.  *pp is set when 0 is returned. */
static inline int np_pt_enter_fid(np_req *r, struct pt_fid **pp)
{
	struct pt_fid *p = pt_fid(r->fid);
	if (!p->live)
		return EBADF;
	*pp = p;
	return np_pt_enter(r, r->fid);
}
PT_HIDDEN struct pt_ident *np_pt_ident_self(uint64_t serial);
PT_HIDDEN int np_pt_ident_resolve(np_passthrough *fs, np_str uname, uint32_t n_uname,
				  uid_t *uid, struct pt_ident **id);
PT_HIDDEN struct pt_ident *np_pt_ident_for_uid(np_passthrough *fs, uid_t uid, gid_t gid,
					       const char *name);
PT_HIDDEN void np_pt_ident_free_all(np_passthrough *fs);
/* After creating a file: give it the group the client asked for when the
 * requester may (Tlcreate/Tmkdir/Tsymlink/Tmknod gid). */
PT_HIDDEN void np_pt_fix_gid(np_passthrough *fs, const struct pt_ident *id, int fd,
			     const struct stat *st, uint32_t gid);

/* fid.c */
PT_HIDDEN void np_pt_fid_init(struct pt_fid *p, int fd, int pfd, const char *name,
			      const struct stat *st);
PT_HIDDEN void np_pt_fid_release(struct pt_fid *p);
/* A directory descriptor and name that name p's file now (Tremove,
 * Trename).  *owned says whether the caller closes *dfd. */
PT_HIDDEN int np_pt_locate(np_passthrough *fs, struct pt_fid *p, int *dfd, int *owned,
			   char name[NAME_MAX + 1]);
PT_HIDDEN int np_pt_attach(np_req *r);
PT_HIDDEN int np_pt_walk(np_req *r);
PT_HIDDEN int np_pt_clunk(np_req *r);
PT_HIDDEN void np_pt_destroy_fid(np_fid *f);

/* io.c */
PT_HIDDEN int np_pt_oflags(uint32_t lflags, int create, int *out);
PT_HIDDEN int np_pt_lopen(np_req *r);
PT_HIDDEN int np_pt_lcreate(np_req *r);
PT_HIDDEN int np_pt_read(np_req *r);
PT_HIDDEN int np_pt_write(np_req *r);
PT_HIDDEN int np_pt_fsync(np_req *r);

/* readdir.c */
PT_HIDDEN int np_pt_readdir(np_req *r);

/* attr.c */
PT_HIDDEN int np_pt_getattr(np_req *r);
PT_HIDDEN int np_pt_setattr(np_req *r);
PT_HIDDEN int np_pt_statfs(np_req *r);
PT_HIDDEN int np_pt_readlink(np_req *r);

/* namespace.c */
PT_HIDDEN int np_pt_mkdir(np_req *r);
PT_HIDDEN int np_pt_symlink(np_req *r);
PT_HIDDEN int np_pt_mknod(np_req *r);
PT_HIDDEN int np_pt_link(np_req *r);
PT_HIDDEN int np_pt_rename(np_req *r);
PT_HIDDEN int np_pt_renameat(np_req *r);
PT_HIDDEN int np_pt_unlinkat(np_req *r);
PT_HIDDEN int np_pt_remove(np_req *r);

/* xattr.c */
PT_HIDDEN int np_pt_xattrwalk(np_req *r);
PT_HIDDEN int np_pt_xattrcreate(np_req *r);
PT_HIDDEN int np_pt_xattr_read(struct pt_xattr *xa, np_req *r);
PT_HIDDEN int np_pt_xattr_write(struct pt_xattr *xa, np_req *r);
PT_HIDDEN int np_pt_xattr_commit(np_passthrough *fs, struct pt_fid *p);

/* lock.c */
PT_HIDDEN int np_pt_lock(np_req *r);
PT_HIDDEN int np_pt_getlock(np_req *r);

#endif

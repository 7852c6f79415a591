/* ramfs internals shared by its source files.
 *
 * Locking: fs->lock (a rwlock) protects every node, every directory and the
 * per-fid state (struct rfid).  Handlers that only look take it shared;
 * anything that changes the tree, a reference count or fid state takes it
 * exclusive.  Synthetic-file callbacks run with it released.
 *
 * Lifetime: a node is freed when it has no directory entry (nlink == 0) and
 * no reference (refs == 0).  Fids hold one reference each; synthetic files
 * and the root hold a permanent one.
 */
#ifndef NINEP_RAMFS_INT_H
#define NINEP_RAMFS_INT_H

#include <pthread.h>
#include <stdint.h>
#include <sys/stat.h>
#include <time.h>

#include "ninep/ramfs.h"

#define RAMFS_CHUNK 16384u          /* file data allocation unit */
#define RAMFS_XATTR_NAME_MAX 255
#define RAMFS_XATTR_SIZE_MAX 65536
#define RAMFS_XATTR_LIST_MAX 65536
#define RAMFS_NAME_MAX 255
#define RAMFS_COOKIE_DOT 1          /* "." */
#define RAMFS_COOKIE_DOTDOT 2       /* ".." */
#define RAMFS_COOKIE_FIRST 3        /* first real entry */

enum rkind { RK_REG, RK_DIR, RK_LNK, RK_SPECIAL, RK_SYNTH };

struct rchunk {
	uint64_t idx;                /* offset / RAMFS_CHUNK */
	uint8_t *p;
};

/* Sparse file contents: chunks sorted by idx; holes read as zeros. */
struct rdata {
	struct rchunk *c;
	size_t n, cap;
};

struct rnode;

struct rdirent {
	struct rdirent *hnext;       /* hash chain */
	struct rnode *node;
	uint64_t cookie;
	uint32_t hash;
	uint16_t namelen;
	char name[];                 /* NUL-terminated */
};

/* Directory: entries sorted by cookie (a new entry always gets the largest,
 * so appending keeps the order) plus a name hash. */
struct rdir {
	struct rdirent **ents;
	size_t n, cap;
	struct rdirent **buckets;
	size_t nbuckets;             /* power of two, or 0 */
	uint64_t next_cookie;
};

struct rxattr {
	struct rxattr *next;
	uint8_t *value;
	uint32_t len;
	char name[];
};

struct rlock {
	struct rlock *next;
	uint64_t start, end;         /* inclusive; end UINT64_MAX: to EOF */
	uint8_t type;                /* NP_LOCK_TYPE_RDLCK/WRLCK */
	uint32_t proc_id;
	const char *client;          /* interned, lives as long as the fs */
	uint16_t client_len;
	const void *fid;             /* the fid that set it: released with it */
};

struct rsynth {
	const struct np_synth_ops *ops;
	void *arg;
	void *owned;                 /* freed with the node (static contents) */
	uint64_t size;               /* reported size */
};

struct rnode {
	struct rnode *all_next, *all_prev; /* every node of the fs */
	uint64_t ino;
	uint32_t version;
	uint32_t mode;               /* S_IFMT | permission bits */
	uint32_t uid, gid;
	uint64_t rdev;
	uint64_t size;               /* regular files */
	uint32_t nlink;
	uint32_t refs;
	enum rkind kind;
	struct timespec atime, mtime, ctime, btime;
	/* Directories: the containing directory (the root's is itself).  Other
	 * nodes: the directory of one of their links, or NULL; used by
	 * Tremove/Trename, which name a file by fid only. */
	struct rnode *parent;
	struct rxattr *xattrs;
	struct rlock *locks;
	union {
		struct rdata data;
		struct rdir dir;
		char *target;        /* symlink */
		struct rsynth synth;
	};
};

struct rintern {
	struct rintern *next;
	uint16_t len;
	char s[];
};

struct np_ramfs {
	pthread_rwlock_t lock;
	struct rnode *root;
	struct rnode all;            /* list head of every node */
	uint64_t next_ino;
	uint64_t nodes, data_bytes;
	uint64_t max_bytes, max_nodes;
	int noperm;
	struct rintern *interned;    /* lock owner names */
};

/* What a fid refers to. */
enum rfkind { RF_NODE = 0, RF_XATTR_READ, RF_XATTR_WRITE };

/* np_fid.priv. */
struct rfid {
	np_ramfs *fs;                /* destroy_fid has no request */
	struct rnode *node;          /* holds a reference; NULL before attach */
	enum rfkind kind;
	uint8_t opened;
	uint32_t oflags;             /* NP_L_O_* of the open */
	/* xattr fids: the value being read, or written */
	uint8_t *xbuf;
	uint64_t xlen;               /* bytes valid (read) / attr_size (write) */
	uint64_t xwritten;           /* highest byte written (write) */
	char *xname;
	uint32_t xflags;
	void *synth_state;
};

static inline struct rfid *rfid_of(np_fid *f)
{
	return (struct rfid *)(void *)f->priv;
}

static inline np_ramfs *fs_of(np_req *r)
{
	return (np_ramfs *)r->fs;
}

/* node.c */
struct rnode *rnode_new(np_ramfs *fs, enum rkind kind, uint32_t mode, uint32_t uid, uint32_t gid);
void rnode_ref(struct rnode *n);
void rnode_unref(np_ramfs *fs, struct rnode *n);
void rnode_maybe_free(np_ramfs *fs, struct rnode *n);
void rnode_destroy(np_ramfs *fs, struct rnode *n);
np_qid rnode_qid(const struct rnode *n);
void rnode_touch(struct rnode *n, int data); /* version++, ctime (+mtime) */
void ramfs_now(struct timespec *ts);
uint8_t rnode_dtype(const struct rnode *n);
/* Permission check: want is a mask of 4 (read), 2 (write), 1 (search). */
int rnode_access(const np_ramfs *fs, const struct rnode *n, uint32_t uid, int want);
/* May uid remove/rename entry `victim` of directory `dir` (sticky bit)? */
int rnode_may_delete(const np_ramfs *fs, const struct rnode *dir, const struct rnode *victim, uint32_t uid);

/* data.c */
int rdata_read(const struct rnode *n, uint64_t off, uint8_t *buf, uint32_t count, uint32_t *got);
int rdata_write(np_ramfs *fs, struct rnode *n, uint64_t off, const uint8_t *src, uint32_t count,
		uint32_t *wrote);
int rdata_truncate(np_ramfs *fs, struct rnode *n, uint64_t size);
void rdata_free(np_ramfs *fs, struct rnode *n);
uint64_t rdata_allocated(const struct rnode *n);

/* dir.c */
struct rdirent *rdir_lookup(const struct rnode *d, const char *name, uint16_t len);
int rdir_add(struct rnode *d, const char *name, uint16_t len, struct rnode *child);
void rdir_del(struct rnode *d, struct rdirent *e);
struct rdirent *rdir_find_node(const struct rnode *d, const struct rnode *child);
/* Index of the first entry with cookie > after. */
size_t rdir_first_after(const struct rnode *d, uint64_t after);
void rdir_free(struct rnode *d);
int ramfs_name_ok(const char *name, uint16_t len);
/* Link child as d/name (nlink, parent, times); unlink removes entry e. */
int ramfs_link_entry(np_ramfs *fs, struct rnode *d, const char *name, uint16_t len, struct rnode *child);
void ramfs_unlink_entry(np_ramfs *fs, struct rnode *d, struct rdirent *e);

/* ops_namespace.c */
int ramfs_can_create(np_ramfs *fs, struct rnode *d, np_str name, uint32_t uid);
/* Create and link d/name, checking permissions; *out is the new node. */
int ramfs_make(np_ramfs *fs, struct rnode *d, np_str name, uint32_t uid, uint32_t gid,
	       enum rkind kind, uint32_t mode, struct rnode **out);

/* xattr.c */
struct rxattr *rxattr_find(const struct rnode *n, const char *name);
int rxattr_set(struct rnode *n, const char *name, const uint8_t *value, uint32_t len, uint32_t flags);
int rxattr_remove(struct rnode *n, const char *name);
/* NUL-separated name list into a new buffer. */
int rxattr_list(const struct rnode *n, uint8_t **out, uint64_t *len);
void rxattr_free_all(struct rnode *n);

/* lock.c */
/* Returns NP_LOCK_SUCCESS/BLOCKED, or -errno. */
int rlock_set(np_ramfs *fs, struct rnode *n, const void *fid, uint8_t type, uint64_t start,
	      uint64_t length, uint32_t proc_id, np_str client);
/* Fill *conflict (type UNLCK if none). */
void rlock_get(const struct rnode *n, uint8_t type, uint64_t start, uint64_t length,
	       uint32_t proc_id, np_str client, struct rlock *conflict);
void rlock_release_fid(struct rnode *n, const void *fid);
void rlock_free_all(struct rnode *n);
void ramfs_intern_free(np_ramfs *fs);

/* handlers, grouped by file */
int ramfs_attach(np_req *r);
int ramfs_walk(np_req *r);
void ramfs_destroy_fid(np_fid *f);
int ramfs_clunk(np_req *r);
int ramfs_remove(np_req *r);
int ramfs_lopen(np_req *r);
int ramfs_lcreate(np_req *r);
int ramfs_read(np_req *r);
int ramfs_write(np_req *r);
int ramfs_readdir(np_req *r);
int ramfs_readlink(np_req *r);
int ramfs_fsync(np_req *r);
int ramfs_getattr(np_req *r);
int ramfs_setattr(np_req *r);
int ramfs_statfs(np_req *r);
int ramfs_symlink(np_req *r);
int ramfs_mknod(np_req *r);
int ramfs_mkdir(np_req *r);
int ramfs_link(np_req *r);
int ramfs_rename(np_req *r);
int ramfs_renameat(np_req *r);
int ramfs_unlinkat(np_req *r);
int ramfs_xattrwalk(np_req *r);
int ramfs_xattrcreate(np_req *r);
int ramfs_lock(np_req *r);
int ramfs_getlock(np_req *r);

/* synth.c: I/O on synthetic files, lock not held */
int rsynth_open(np_req *r, struct rnode *n, uint32_t flags);
int rsynth_read(np_req *r, struct rnode *n);
int rsynth_write(np_req *r, struct rnode *n);

#endif

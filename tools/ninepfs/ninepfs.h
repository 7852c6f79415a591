/* ninepfs: a FUSE file system backed by a 9P server.  Shared state of the
 * session (connection, inode table, open handles) and the operation tables
 * each ops_*.c file fills in. */
#ifndef NINEPFS_H
#define NINEPFS_H

#define FUSE_USE_VERSION 35

#include <fuse_lowlevel.h>
#include <pthread.h>
#include <stdint.h>
#include <sys/stat.h>

#include "ninep/client.h"

/* Command-line configuration. */
struct nfs_conf {
	char *addr;
	char *aname;
	char *uname;
	char *dialect;
	unsigned msize;
	double attr_timeout;
	double entry_timeout;
	int writeback;
	int reconnect;
	int ro;
	int no_default_permissions;
	int debug;
};

/* One dialled connection.  Retired connections stay allocated while open
 * handles still hold fids on them (np_client_free needs every handle gone). */
struct nfs_conn {
	np_client *client;
	unsigned long gen;       /* 1 for the first connection */
	unsigned handles;        /* open handles (fh) with fids on this client */
	int retired;
};

struct nfs_lockrec;

/* One file the kernel knows by a node id.  The node id is the address of
 * this struct (the root is FUSE_ROOT_ID); st_ino is the qid path. */
struct nfs_inode {
	uint64_t qpath;
	uint8_t qtype;
	mode_t type;             /* S_IFMT bits */
	np_cfid *fid;            /* never opened; NULL when stale after reconnect */
	uint64_t nlookup;        /* the kernel's references */
	unsigned refs;           /* 1 while nlookup > 0, plus one per child naming us */
	struct nfs_inode *parent;/* the last name seen, for re-walking on reconnect */
	char *name;
	struct timespec btime;   /* identity beyond qid.path, when the server has it */
	uint64_t gen;
	int hashed;              /* in the qid.path table */
	struct nfs_inode *qnext, *nnext;   /* qid.path and (parent, name) chains */
	struct nfs_inode *prev, *next;     /* every live inode */
	struct nfs_lockrec *locks;          /* locks granted through this mount */
	uint64_t nocaps_until;   /* CLOCK_MONOTONIC ns: security.capability known absent */
};

/* An open file or directory. */
struct nfs_fh {
	np_cfid *fid;            /* opened */
	struct nfs_conn *conn;   /* the connection the fid lives on */
	struct nfs_inode *ino;
	int flags;
	int has_locks;
	pthread_mutex_t lock;    /* directory listing state */
	/* 9P2000/.u directories: the listing, read whole at offset 0. */
	struct nfs_dent *ents;
	size_t nents;
};

struct nfs_dent {
	char *name;
	uint64_t ino;
	uint8_t type;
};

struct nfs {
	struct nfs_conf conf;
	enum np_dialect dialect;
	uint32_t msize;
	uint32_t iosize;         /* msize - NP_IOHDRSZ */
	uid_t uid;

	/* Operations hold connlock shared while they use the client; a
	 * reconnect holds it exclusive to swap connections and fids. */
	pthread_rwlock_t connlock;
	struct nfs_conn *conn;

	pthread_mutex_t itab_lock;  /* the inode table and every inode's links */
	struct nfs_inode root;
	struct nfs_inode **qhash, **nhash;
	size_t nbuckets;
	size_t ninodes;

	pthread_mutex_t lock_lock;  /* lock records */
	struct fuse_session *se;
};

/* ---- conn.c: the connection, errors and reconnecting ---- */
int nfs_connect(struct nfs *fs, char *err, size_t errlen);
void nfs_disconnect(struct nfs *fs);
/* Take the connection for an operation; returns its client.  Every
 * nfs_enter is paired with one nfs_leave. */
np_client *nfs_enter(struct nfs *fs);
/* Release it.  *err is the operation's -errno (or >= 0); a lost connection
 * is turned into -ENOTCONN, or, with -o reconnect, re-established; returns 1
 * when the caller should run the operation once more on the new one. */
int nfs_leave(struct nfs *fs, int *err, int attempt);
/* nfs_leave after an operation on an open handle, which is never retried:
 * after a reconnect the handle is gone (-EIO).  Returns the result. */
int nfs_leave_fh(struct nfs *fs, int err);
/* FUSE-safe positive errno for a client -errno. */
int nfs_errno(int err);
int nfs_conn_lost(int err);
/* Handles on retired connections keep them alive; release drops them. */
void nfs_conn_hold(struct nfs *fs, struct nfs_conn *c);
void nfs_conn_drop(struct nfs *fs, struct nfs_conn *c);

/* ---- inode.c: node ids, lookup counts, names ---- */
int nfs_itable_init(struct nfs *fs);
void nfs_itable_free(struct nfs *fs);
struct nfs_inode *nfs_inode_get(struct nfs *fs, fuse_ino_t ino);
fuse_ino_t nfs_inode_id(struct nfs *fs, const struct nfs_inode *i);
/* Enter a freshly walked fid for `name` in `parent` with attributes a;
 * the fid is consumed (kept or clunked).  Bumps nlookup.  NULL on ENOMEM. */
struct nfs_inode *nfs_inode_enter(struct nfs *fs, struct nfs_inode *parent, const char *name,
				  np_cfid *fid, const struct np_attr *a);
/* One more lookup of an inode already held (link). */
void nfs_inode_ref(struct nfs *fs, struct nfs_inode *i);
void nfs_inode_forget(struct nfs *fs, struct nfs_inode *i, uint64_t n);
/* Name bookkeeping after unlink/rmdir and rename. */
void nfs_inode_unlinked(struct nfs *fs, struct nfs_inode *parent, const char *name);
void nfs_inode_renamed(struct nfs *fs, struct nfs_inode *op, const char *on, struct nfs_inode *np,
		       const char *nn);
/* Reconnect: walk every live inode again on the new client (called with
 * connlock held exclusively). */
void nfs_itable_rewalk(struct nfs *fs, np_cfid *newroot);

/* ---- attrs.c: conversions shared by the operations ---- */
void nfs_attr_to_stat(const struct np_attr *a, struct stat *st);
/* Walk name from parent, getattr, enter in the table: a complete lookup. */
int nfs_do_lookup(struct nfs *fs, struct nfs_inode *parent, const char *name,
		  struct fuse_entry_param *e);
void nfs_fill_entry(struct nfs *fs, struct nfs_inode *i, const struct np_attr *a,
		    struct fuse_entry_param *e);
#define NFS_ATTR_MASK (NP_GETATTR_BASIC | NP_GETATTR_BTIME | NP_GETATTR_GEN)

/* ---- handles (ops_file.c) ---- */
struct nfs_fh *nfs_fh_open(struct nfs *fs, struct nfs_inode *i, int flags, int *err);
void nfs_fh_free(struct nfs *fs, struct nfs_fh *fh);
/* Not entered: free fh whose open reply the kernel never took (the
 * request was interrupted), since the kernel will not release it. */
void nfs_fh_abandon(struct nfs *fs, struct nfs_fh *fh);
/* The fid of fh when it is still on the current connection, else NULL
 * (the handle was opened before a reconnect: EIO). */
np_cfid *nfs_fh_fid(struct nfs *fs, struct nfs_fh *fh);

/* ---- locks (ops_lock.c) ---- */
/* Forget the locks of one owner (close) or, with owner 0, all (release);
 * called entered. */
void nfs_locks_drop_fh(struct nfs *fs, struct nfs_fh *fh, uint64_t owner);

/* ---- the operation table, filled in by each ops file ---- */
void nfs_ops_entry(struct fuse_lowlevel_ops *o);
void nfs_ops_dir(struct fuse_lowlevel_ops *o);
void nfs_ops_ns(struct fuse_lowlevel_ops *o);
void nfs_ops_file(struct fuse_lowlevel_ops *o);
void nfs_ops_xattr(struct fuse_lowlevel_ops *o);
void nfs_ops_lock(struct fuse_lowlevel_ops *o);

static inline struct nfs *nfs_of(fuse_req_t req)
{
	return fuse_req_userdata(req);
}

#endif

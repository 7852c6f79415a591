/* Open files: one opened fid per FUSE file handle (a walk clone of the
 * inode's fid, then Tlopen), and the I/O on it. */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>

#include "ninepfs.h"

struct nfs_fh *nfs_fh_open(struct nfs *fs, struct nfs_inode *i, int flags, int *err)
{
	if (!i->fid) {
		*err = -ESTALE;
		return NULL;
	}
	struct nfs_fh *fh = calloc(1, sizeof *fh);
	if (!fh) {
		*err = -ENOMEM;
		return NULL;
	}
	np_cfid *f;
	int e = np_cfid_walk(i->fid, 0, NULL, &f);
	if (e == 0) {
		e = np_cfid_open(f, flags);
		if (e < 0)
			np_cfid_clunk(f);
	}
	if (e < 0) {
		free(fh);
		*err = e;
		return NULL;
	}
	fh->fid = f;
	fh->conn = fs->conn;
	fh->ino = i;
	fh->flags = flags;
	pthread_mutex_init(&fh->lock, NULL);
	nfs_conn_hold(fs, fh->conn);
	*err = 0;
	return fh;
}

/* Called entered: the fid is clunked on its own connection, which on a
 * retired one only frees the handle. */
void nfs_fh_free(struct nfs *fs, struct nfs_fh *fh)
{
	np_cfid_clunk(fh->fid);
	nfs_conn_drop(fs, fh->conn);
	for (size_t k = 0; k < fh->nents; k++)
		free(fh->ents[k].name);
	free(fh->ents);
	pthread_mutex_destroy(&fh->lock);
	free(fh);
}

void nfs_fh_abandon(struct nfs *fs, struct nfs_fh *fh)
{
	int err = 0;
	nfs_enter(fs);
	nfs_fh_free(fs, fh);
	nfs_leave(fs, &err, 1);
}

np_cfid *nfs_fh_fid(struct nfs *fs, struct nfs_fh *fh)
{
	return fh->conn == fs->conn ? fh->fid : NULL;
}

static struct nfs_fh *fh_of(struct fuse_file_info *fi)
{
	return (struct nfs_fh *)(uintptr_t)fi->fh;
}

/* Open flags as sent to the server.  With the writeback cache the kernel
 * reads pages of files opened write-only and does O_APPEND itself. */
static int server_flags(struct nfs *fs, int flags)
{
	flags &= ~(O_CREAT | O_EXCL | O_NOCTTY | O_DIRECT);
	if (fs->conf.writeback) {
		if ((flags & O_ACCMODE) == O_WRONLY)
			flags = (flags & ~O_ACCMODE) | O_RDWR;
		flags &= ~O_APPEND;
	}
	return flags;
}

static void op_open(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	struct nfs *fs = nfs_of(req);
	struct nfs_inode *i = nfs_inode_get(fs, ino);
	struct nfs_fh *fh;
	int err, attempt = 0;
	do {
		nfs_enter(fs);
		int flags = server_flags(fs, fi->flags);
		fh = nfs_fh_open(fs, i, flags, &err);
		if (!fh && err == -EACCES && flags != (fi->flags & ~(O_CREAT | O_EXCL | O_NOCTTY | O_DIRECT)))
			/* write-only file: the kernel then cannot fill pages,
			 * but writes still work */
			fh = nfs_fh_open(fs, i, fi->flags & ~(O_CREAT | O_EXCL | O_NOCTTY | O_DIRECT | O_APPEND), &err);
	} while (nfs_leave(fs, &err, attempt++));
	if (!fh) {
		fuse_reply_err(req, nfs_errno(err));
		return;
	}
	fi->fh = (uint64_t)(uintptr_t)fh;
	if (fuse_reply_open(req, fi) == -ENOENT)
		nfs_fh_abandon(fs, fh);
}

static void op_create(fuse_req_t req, fuse_ino_t parent, const char *name, mode_t mode,
		      struct fuse_file_info *fi)
{
	struct nfs *fs = nfs_of(req);
	struct nfs_inode *p = nfs_inode_get(fs, parent);
	const struct fuse_ctx *ctx = fuse_req_ctx(req);
	struct fuse_entry_param e;
	struct nfs_fh *fh = NULL;
	int err, attempt = 0;
	do {
		nfs_enter(fs);
		np_cfid *nf = NULL;
		err = p->fid ? np_cfid_walk(p->fid, 0, NULL, &nf) : -ESTALE;
		if (err == 0) {
			int flags = server_flags(fs, fi->flags) | (fi->flags & O_EXCL);
			err = np_cfid_create(nf, name, flags, mode & 07777, (uint32_t)ctx->gid);
			if (err == 0)
				err = nfs_do_lookup(fs, p, name, &e);
			if (err == 0 && !(fh = calloc(1, sizeof *fh))) {
				err = -ENOMEM;
				nfs_inode_forget(fs, nfs_inode_get(fs, e.ino), 1);
			}
			if (err < 0) {
				np_cfid_clunk(nf);
			} else {
				fh->fid = nf;
				fh->conn = fs->conn;
				fh->ino = nfs_inode_get(fs, e.ino);
				fh->flags = flags;
				pthread_mutex_init(&fh->lock, NULL);
				nfs_conn_hold(fs, fh->conn);
			}
		}
	} while (nfs_leave(fs, &err, attempt++));
	if (err < 0) {
		fuse_reply_err(req, nfs_errno(err));
		return;
	}
	fi->fh = (uint64_t)(uintptr_t)fh;
	if (fuse_reply_create(req, &e, fi) == -ENOENT) {
		int e0 = 0;
		nfs_enter(fs);
		nfs_fh_free(fs, fh);
		nfs_inode_forget(fs, nfs_inode_get(fs, e.ino), 1);
		nfs_leave(fs, &e0, 1);
	}
}

static void op_read(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off, struct fuse_file_info *fi)
{
	(void)ino;
	struct nfs *fs = nfs_of(req);
	struct nfs_fh *fh = fh_of(fi);
	char *buf = malloc(size ? size : 1);
	if (!buf) {
		fuse_reply_err(req, ENOMEM);
		return;
	}
	ssize_t n;
	int err;
	nfs_enter(fs);
	np_cfid *f = nfs_fh_fid(fs, fh);
	n = f ? np_cfid_pread(f, buf, size, (uint64_t)off) : -EIO;
	err = nfs_leave_fh(fs, n < 0 ? (int)n : 0);
	if (err < 0)
		fuse_reply_err(req, nfs_errno(err));
	else
		fuse_reply_buf(req, buf, (size_t)n);
	free(buf);
}

static void op_write(fuse_req_t req, fuse_ino_t ino, const char *buf, size_t size, off_t off,
		     struct fuse_file_info *fi)
{
	(void)ino;
	struct nfs *fs = nfs_of(req);
	struct nfs_fh *fh = fh_of(fi);
	ssize_t n;
	int err;
	nfs_enter(fs);
	np_cfid *f = nfs_fh_fid(fs, fh);
	n = f ? np_cfid_pwrite(f, buf, size, (uint64_t)off) : -EIO;
	err = nfs_leave_fh(fs, n < 0 ? (int)n : 0);
	if (err < 0)
		fuse_reply_err(req, nfs_errno(err));
	else
		fuse_reply_write(req, (size_t)n);
}

/* close(2) of one descriptor: POSIX drops the closing owner's locks. */
static void op_flush(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	(void)ino;
	struct nfs *fs = nfs_of(req);
	struct nfs_fh *fh = fh_of(fi);
	int err = 0;
	if (fh->has_locks && fi->lock_owner) {
		nfs_enter(fs);
		nfs_locks_drop_fh(fs, fh, fi->lock_owner);
		nfs_leave(fs, &err, 1);
	}
	fuse_reply_err(req, 0);
}

static void op_release(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	(void)ino;
	struct nfs *fs = nfs_of(req);
	struct nfs_fh *fh = fh_of(fi);
	int err = 0;
	nfs_enter(fs);
	if (fh->has_locks)
		nfs_locks_drop_fh(fs, fh, 0);
	nfs_fh_free(fs, fh);
	nfs_leave(fs, &err, 1);
	fuse_reply_err(req, 0);
}

static void op_fsync(fuse_req_t req, fuse_ino_t ino, int datasync, struct fuse_file_info *fi)
{
	(void)ino;
	struct nfs *fs = nfs_of(req);
	struct nfs_fh *fh = fh_of(fi);
	int err;
	nfs_enter(fs);
	np_cfid *f = nfs_fh_fid(fs, fh);
	err = f ? np_cfid_fsync(f, datasync) : -EIO;
	err = nfs_leave_fh(fs, err);
	fuse_reply_err(req, nfs_errno(err));
}

void nfs_ops_file(struct fuse_lowlevel_ops *o)
{
	o->open = op_open;
	o->create = op_create;
	o->read = op_read;
	o->write = op_write;
	o->flush = op_flush;
	o->release = op_release;
	o->fsync = op_fsync;
	o->fsyncdir = op_fsync;
}

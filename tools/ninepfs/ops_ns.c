/* Name-space operations: mkdir, mknod, symlink, link, unlink, rmdir,
 * rename, readlink.  Creations end with a lookup of the new name, since
 * 9P answers them with a qid only. */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/sysmacros.h>

#include "ninepfs.h"

#ifndef RENAME_NOREPLACE
#define RENAME_NOREPLACE (1 << 0)
#endif

enum mk_kind { MK_DIR, MK_NOD, MK_SYMLINK };

static void make_node(fuse_req_t req, fuse_ino_t parent, const char *name, enum mk_kind kind, mode_t mode,
		      dev_t rdev, const char *target)
{
	struct nfs *fs = nfs_of(req);
	struct nfs_inode *p = nfs_inode_get(fs, parent);
	uint32_t gid = (uint32_t)fuse_req_ctx(req)->gid;
	struct fuse_entry_param e;
	int err, attempt = 0;
	do {
		nfs_enter(fs);
		if (!p->fid)
			err = -ESTALE;
		else if (kind == MK_DIR)
			err = np_cfid_mkdir(p->fid, name, mode & 07777, gid, NULL);
		else if (kind == MK_NOD)
			err = np_cfid_mknod(p->fid, name, mode, major(rdev), minor(rdev), gid, NULL);
		else
			err = np_cfid_symlink(p->fid, name, target, gid, NULL);
		if (err == 0)
			err = nfs_do_lookup(fs, p, name, &e);
	} while (nfs_leave(fs, &err, attempt++));
	if (err < 0)
		fuse_reply_err(req, nfs_errno(err));
	else
		fuse_reply_entry(req, &e);
}

static void op_mkdir(fuse_req_t req, fuse_ino_t parent, const char *name, mode_t mode)
{
	make_node(req, parent, name, MK_DIR, mode, 0, NULL);
}

static void op_mknod(fuse_req_t req, fuse_ino_t parent, const char *name, mode_t mode, dev_t rdev)
{
	make_node(req, parent, name, MK_NOD, mode, rdev, NULL);
}

static void op_symlink(fuse_req_t req, const char *link, fuse_ino_t parent, const char *name)
{
	make_node(req, parent, name, MK_SYMLINK, 0777, 0, link);
}

static void op_link(fuse_req_t req, fuse_ino_t ino, fuse_ino_t newparent, const char *newname)
{
	struct nfs *fs = nfs_of(req);
	struct nfs_inode *i = nfs_inode_get(fs, ino), *p = nfs_inode_get(fs, newparent);
	struct np_attr a;
	int err, attempt = 0;
	do {
		nfs_enter(fs);
		err = i->fid && p->fid ? np_cfid_link(p->fid, i->fid, newname) : -ESTALE;
		if (err == 0)
			err = np_cfid_getattr(i->fid, NFS_ATTR_MASK, &a);
		if (err == 0)
			nfs_inode_ref(fs, i);
	} while (nfs_leave(fs, &err, attempt++));
	if (err < 0) {
		fuse_reply_err(req, nfs_errno(err));
		return;
	}
	struct fuse_entry_param e;
	nfs_fill_entry(fs, i, &a, &e);
	fuse_reply_entry(req, &e);
}

static void remove_name(fuse_req_t req, fuse_ino_t parent, const char *name, uint32_t flags)
{
	struct nfs *fs = nfs_of(req);
	struct nfs_inode *p = nfs_inode_get(fs, parent);
	int err, attempt = 0;
	do {
		nfs_enter(fs);
		err = p->fid ? np_cfid_unlinkat(p->fid, name, flags) : -ESTALE;
		if (err == 0)
			nfs_inode_unlinked(fs, p, name);
	} while (nfs_leave(fs, &err, attempt++));
	fuse_reply_err(req, nfs_errno(err));
}

static void op_unlink(fuse_req_t req, fuse_ino_t parent, const char *name)
{
	remove_name(req, parent, name, 0);
}

static void op_rmdir(fuse_req_t req, fuse_ino_t parent, const char *name)
{
	remove_name(req, parent, name, NP_AT_REMOVEDIR);
}

/* 9P has no rename flags.  RENAME_NOREPLACE is checked with a walk first,
 * which races with other clients of the server (see the man page). */
static void op_rename(fuse_req_t req, fuse_ino_t parent, const char *name, fuse_ino_t newparent,
		      const char *newname, unsigned int flags)
{
	struct nfs *fs = nfs_of(req);
	struct nfs_inode *op = nfs_inode_get(fs, parent), *np = nfs_inode_get(fs, newparent);
	if (flags & ~(unsigned)RENAME_NOREPLACE) {
		fuse_reply_err(req, EINVAL);
		return;
	}
	/* 9P2000/.u rename by wstat, within the directory only; EXDEV
	 * makes mv(1) copy instead. */
	if (fs->dialect != NP_9P2000L && op != np) {
		fuse_reply_err(req, EXDEV);
		return;
	}
	int err, attempt = 0;
	do {
		nfs_enter(fs);
		err = op->fid && np->fid ? 0 : -ESTALE;
		if (err == 0 && (flags & RENAME_NOREPLACE)) {
			const char *names[1] = {newname};
			np_cfid *f;
			err = np_cfid_walk(np->fid, 1, names, &f);
			if (err == 0) {
				np_cfid_clunk(f);
				err = -EEXIST;
			} else if (err == -ENOENT) {
				err = 0;
			}
		}
		if (err == 0)
			err = np_cfid_renameat(op->fid, name, np->fid, newname);
		if (err == 0)
			nfs_inode_renamed(fs, op, name, np, newname);
	} while (nfs_leave(fs, &err, attempt++));
	fuse_reply_err(req, nfs_errno(err));
}

static void op_readlink(fuse_req_t req, fuse_ino_t ino)
{
	struct nfs *fs = nfs_of(req);
	struct nfs_inode *i = nfs_inode_get(fs, ino);
	char buf[PATH_MAX + 1];
	int err, attempt = 0;
	do {
		nfs_enter(fs);
		err = i->fid ? np_cfid_readlink(i->fid, buf, sizeof buf) : -ESTALE;
	} while (nfs_leave(fs, &err, attempt++));
	if (err == -ERANGE)
		err = -ENAMETOOLONG;
	if (err < 0)
		fuse_reply_err(req, nfs_errno(err));
	else
		fuse_reply_readlink(req, buf);
}

void nfs_ops_ns(struct fuse_lowlevel_ops *o)
{
	o->mkdir = op_mkdir;
	o->mknod = op_mknod;
	o->symlink = op_symlink;
	o->link = op_link;
	o->unlink = op_unlink;
	o->rmdir = op_rmdir;
	o->rename = op_rename;
	o->readlink = op_readlink;
}

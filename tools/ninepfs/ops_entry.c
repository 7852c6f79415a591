/* Per-inode operations: lookup, forget, getattr, setattr, access, statfs. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include "ninepfs.h"

static void op_lookup(fuse_req_t req, fuse_ino_t parent, const char *name)
{
	struct nfs *fs = nfs_of(req);
	struct nfs_inode *p = nfs_inode_get(fs, parent);
	struct fuse_entry_param e;
	int err, attempt = 0;
	do {
		nfs_enter(fs);
		err = nfs_do_lookup(fs, p, name, &e);
	} while (nfs_leave(fs, &err, attempt++));
	if (err < 0)
		fuse_reply_err(req, nfs_errno(err));
	else
		fuse_reply_entry(req, &e);
}

static void op_forget(fuse_req_t req, fuse_ino_t ino, uint64_t nlookup)
{
	struct nfs *fs = nfs_of(req);
	int err = 0;
	nfs_enter(fs);
	nfs_inode_forget(fs, nfs_inode_get(fs, ino), nlookup);
	nfs_leave(fs, &err, 1);
	fuse_reply_none(req);
}

static void op_forget_multi(fuse_req_t req, size_t count, struct fuse_forget_data *forgets)
{
	struct nfs *fs = nfs_of(req);
	int err = 0;
	nfs_enter(fs);
	for (size_t k = 0; k < count; k++)
		nfs_inode_forget(fs, nfs_inode_get(fs, forgets[k].ino), forgets[k].nlookup);
	nfs_leave(fs, &err, 1);
	fuse_reply_none(req);
}

static int getattr_ino(struct nfs_inode *i, struct np_attr *a)
{
	if (!i->fid)
		return -ESTALE;
	int err = np_cfid_getattr(i->fid, NFS_ATTR_MASK, a);
	if (err == 0 && !(a->valid & NP_GETATTR_INO))
		a->qid = i->fid->qid;
	return err;
}

static void reply_attr(fuse_req_t req, struct nfs *fs, const struct np_attr *a)
{
	struct stat st;
	nfs_attr_to_stat(a, &st);
	fuse_reply_attr(req, &st, fs->conf.attr_timeout);
}

static void op_getattr(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	struct nfs *fs = nfs_of(req);
	struct nfs_inode *i = nfs_inode_get(fs, ino);
	struct np_attr a;
	int err, attempt = 0;
	do {
		nfs_enter(fs);
		/* fstat: the open file answers even where a path-based server
		 * has lost the name (unlinked or renamed). */
		np_cfid *f = fi ? nfs_fh_fid(fs, (struct nfs_fh *)(uintptr_t)fi->fh) : NULL;
		if (f) {
			err = np_cfid_getattr(f, NFS_ATTR_MASK, &a);
			if (err == 0 && !(a.valid & NP_GETATTR_INO))
				a.qid = i->qpath == f->qid.path ? f->qid : a.qid;
		} else {
			err = getattr_ino(i, &a);
		}
	} while (nfs_leave(fs, &err, attempt++));
	if (err < 0)
		fuse_reply_err(req, nfs_errno(err));
	else
		reply_attr(req, fs, &a);
}

/* FUSE's setattr bits as Tsetattr valid bits: a time "now" is the bit
 * without its _SET companion (the server stamps it), UTIME_OMIT never
 * reaches us (the kernel leaves the bit out). */
static void to_setattr(const struct stat *attr, int to_set, struct np_setattr *s)
{
	memset(s, 0, sizeof *s);
	if (to_set & FUSE_SET_ATTR_MODE) {
		s->valid |= NP_SETATTR_MODE;
		s->mode = attr->st_mode & 07777;
	}
	if (to_set & FUSE_SET_ATTR_UID) {
		s->valid |= NP_SETATTR_UID;
		s->uid = attr->st_uid;
	}
	if (to_set & FUSE_SET_ATTR_GID) {
		s->valid |= NP_SETATTR_GID;
		s->gid = attr->st_gid;
	}
	if (to_set & FUSE_SET_ATTR_SIZE) {
		s->valid |= NP_SETATTR_SIZE;
		s->size = (uint64_t)attr->st_size;
	}
	if (to_set & FUSE_SET_ATTR_ATIME_NOW) {
		s->valid |= NP_SETATTR_ATIME;
	} else if (to_set & FUSE_SET_ATTR_ATIME) {
		s->valid |= NP_SETATTR_ATIME | NP_SETATTR_ATIME_SET;
		s->atime = attr->st_atim;
	}
	if (to_set & FUSE_SET_ATTR_MTIME_NOW) {
		s->valid |= NP_SETATTR_MTIME;
	} else if (to_set & FUSE_SET_ATTR_MTIME) {
		s->valid |= NP_SETATTR_MTIME | NP_SETATTR_MTIME_SET;
		s->mtime = attr->st_mtim;
	}
	if (to_set & FUSE_SET_ATTR_CTIME)
		s->valid |= NP_SETATTR_CTIME;
}

static void op_setattr(fuse_req_t req, fuse_ino_t ino, struct stat *attr, int to_set,
		       struct fuse_file_info *fi)
{
	struct nfs *fs = nfs_of(req);
	struct nfs_inode *i = nfs_inode_get(fs, ino);
	struct nfs_fh *fh = fi ? (struct nfs_fh *)(uintptr_t)fi->fh : NULL;
	struct np_setattr s;
	struct np_attr a;
	int err, attempt = 0;
	to_setattr(attr, to_set, &s);
	do {
		nfs_enter(fs);
		/* Truncating through the open file works whatever the mode
		 * says now (ftruncate semantics). */
		np_cfid *f = fh && (s.valid & NP_SETATTR_SIZE) ? nfs_fh_fid(fs, fh) : NULL;
		if (!f)
			f = i->fid;
		err = f ? np_cfid_setattr(f, &s) : -ESTALE;
		if (err == 0)
			err = getattr_ino(i, &a);
	} while (nfs_leave(fs, &err, attempt++));
	if (err < 0)
		fuse_reply_err(req, nfs_errno(err));
	else
		reply_attr(req, fs, &a);
}

/* access(2) when the kernel does not check permissions itself
 * (-o no_default_permissions): the mode bits against the caller. */
static int in_group(fuse_req_t req, gid_t gid, gid_t caller)
{
	if (gid == caller)
		return 1;
	gid_t groups[64];
	int n = fuse_req_getgroups(req, 64, groups);
	for (int k = 0; k < n && k < 64; k++)
		if (groups[k] == gid)
			return 1;
	return 0;
}

static void op_access(fuse_req_t req, fuse_ino_t ino, int mask)
{
	struct nfs *fs = nfs_of(req);
	struct nfs_inode *i = nfs_inode_get(fs, ino);
	const struct fuse_ctx *ctx = fuse_req_ctx(req);
	struct np_attr a;
	int err, attempt = 0;
	do {
		nfs_enter(fs);
		err = getattr_ino(i, &a);
	} while (nfs_leave(fs, &err, attempt++));
	if (err < 0) {
		fuse_reply_err(req, nfs_errno(err));
		return;
	}
	if (mask == F_OK) {
		fuse_reply_err(req, 0);
		return;
	}
	unsigned bits;
	if (ctx->uid == 0) {
		/* root: everything but executing a file nobody may execute */
		int ok = !(mask & X_OK) || S_ISDIR(a.mode) || (a.mode & 0111);
		fuse_reply_err(req, ok ? 0 : EACCES);
		return;
	}
	if (ctx->uid == a.uid)
		bits = (a.mode >> 6) & 7;
	else if (in_group(req, a.gid, ctx->gid))
		bits = (a.mode >> 3) & 7;
	else
		bits = a.mode & 7;
	unsigned want = ((mask & R_OK) ? 4 : 0) | ((mask & W_OK) ? 2 : 0) | ((mask & X_OK) ? 1 : 0);
	fuse_reply_err(req, (bits & want) == want ? 0 : EACCES);
}

static void op_statfs(fuse_req_t req, fuse_ino_t ino)
{
	struct nfs *fs = nfs_of(req);
	struct nfs_inode *i = nfs_inode_get(fs, ino);
	struct np_statfs s;
	int err, attempt = 0;
	do {
		nfs_enter(fs);
		np_cfid *f = i->fid ? i->fid : fs->root.fid;
		err = f ? np_cfid_statfs(f, &s) : -ESTALE;
	} while (nfs_leave(fs, &err, attempt++));
	struct statvfs sv;
	memset(&sv, 0, sizeof sv);
	if (err == -EOPNOTSUPP) {
		/* 9P2000/.u have no statfs: report an empty, nameable fs. */
		sv.f_bsize = sv.f_frsize = 4096;
		sv.f_namemax = 255;
		fuse_reply_statfs(req, &sv);
		return;
	}
	if (err < 0) {
		fuse_reply_err(req, nfs_errno(err));
		return;
	}
	sv.f_bsize = s.bsize;
	sv.f_frsize = s.bsize;
	sv.f_blocks = s.blocks;
	sv.f_bfree = s.bfree;
	sv.f_bavail = s.bavail;
	sv.f_files = s.files;
	sv.f_ffree = s.ffree;
	sv.f_favail = s.ffree;
	sv.f_fsid = (unsigned long)s.fsid;
	sv.f_namemax = s.namelen;
	fuse_reply_statfs(req, &sv);
}

void nfs_ops_entry(struct fuse_lowlevel_ops *o)
{
	o->lookup = op_lookup;
	o->forget = op_forget;
	o->forget_multi = op_forget_multi;
	o->getattr = op_getattr;
	o->setattr = op_setattr;
	o->access = op_access;
	o->statfs = op_statfs;
}

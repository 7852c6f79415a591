/* ramfs namespace changes: mkdir, symlink, mknod, link, rename, renameat,
 * unlinkat. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/sysmacros.h>

#include "ramfs_int.h"

/* Check that d can receive a new entry `name` from uid. */
int ramfs_can_create(np_ramfs *fs, struct rnode *d, np_str name, uint32_t uid)
{
	if (d->kind != RK_DIR)
		return ENOTDIR;
	if (d->nlink == 0)
		return ENOENT; /* removed while open */
	int err = ramfs_name_ok(name.s, name.len);
	if (err)
		return err;
	err = rnode_access(fs, d, uid, 3);
	if (err)
		return err;
	if (rdir_lookup(d, name.s, name.len))
		return EEXIST;
	return 0;
}

/* Create and link d/name; *out is the new node. */
int ramfs_make(np_ramfs *fs, struct rnode *d, np_str name, uint32_t uid, uint32_t gid,
	       enum rkind kind, uint32_t mode, struct rnode **out)
{
	int err = ramfs_can_create(fs, d, name, uid);
	if (err)
		return err;
	struct rnode *n = rnode_new(fs, kind, mode, uid, gid);
	if (!n)
		return fs->max_nodes && fs->nodes >= fs->max_nodes ? ENOSPC : ENOMEM;
	err = ramfs_link_entry(fs, d, name.s, name.len, n);
	if (err) {
		rnode_destroy(fs, n);
		return err;
	}
	*out = n;
	return 0;
}

int ramfs_mkdir(np_req *r)
{
	np_ramfs *fs = fs_of(r);
	struct rnode *n;
	pthread_rwlock_wrlock(&fs->lock);
	int err = ramfs_make(fs, rfid_of(r->fid)->node, r->ifcall.tmkdir.name, r->fid->uid,
			    r->ifcall.tmkdir.gid, RK_DIR, S_IFDIR | (r->ifcall.tmkdir.mode & 07777), &n);
	if (!err)
		r->ofcall.rqid.qid = rnode_qid(n);
	pthread_rwlock_unlock(&fs->lock);
	return err;
}

int ramfs_symlink(np_req *r)
{
	np_ramfs *fs = fs_of(r);
	np_str tgt = r->ifcall.tsymlink.symtgt;
	struct rnode *n;
	if (tgt.len == 0)
		return ENOENT;
	if (memchr(tgt.s, '\0', tgt.len))
		return EINVAL;
	char *copy = malloc(tgt.len + 1u);
	if (!copy)
		return ENOMEM;
	memcpy(copy, tgt.s, tgt.len);
	copy[tgt.len] = '\0';
	pthread_rwlock_wrlock(&fs->lock);
	int err = ramfs_make(fs, rfid_of(r->fid)->node, r->ifcall.tsymlink.name, r->fid->uid,
			    r->ifcall.tsymlink.gid, RK_LNK, S_IFLNK | 0777, &n);
	if (!err) {
		n->target = copy;
		n->size = tgt.len;
		r->ofcall.rqid.qid = rnode_qid(n);
	}
	pthread_rwlock_unlock(&fs->lock);
	if (err)
		free(copy);
	return err;
}

int ramfs_mknod(np_req *r)
{
	np_ramfs *fs = fs_of(r);
	uint32_t mode = r->ifcall.tmknod.mode;
	enum rkind kind;
	struct rnode *n;
	switch (mode & S_IFMT) {
	case 0:
		mode |= S_IFREG;
		kind = RK_REG;
		break;
	case S_IFREG:
		kind = RK_REG;
		break;
	case S_IFCHR: case S_IFBLK: case S_IFIFO: case S_IFSOCK:
		kind = RK_SPECIAL;
		break;
	default:
		return EINVAL;
	}
	pthread_rwlock_wrlock(&fs->lock);
	int err = ramfs_make(fs, rfid_of(r->fid)->node, r->ifcall.tmknod.name, r->fid->uid,
			    r->ifcall.tmknod.gid, kind, (mode & S_IFMT) | (mode & 07777), &n);
	if (!err) {
		if (kind == RK_SPECIAL)
			n->rdev = makedev(r->ifcall.tmknod.major, r->ifcall.tmknod.minor);
		r->ofcall.rqid.qid = rnode_qid(n);
	}
	pthread_rwlock_unlock(&fs->lock);
	return err;
}

int ramfs_link(np_req *r)
{
	np_ramfs *fs = fs_of(r);
	pthread_rwlock_wrlock(&fs->lock);
	struct rnode *d = rfid_of(r->fid)->node;
	struct rnode *n = rfid_of(r->fid2)->node;
	int err = 0;
	if (n->kind == RK_DIR)
		err = EPERM;
	else if (n->nlink == 0)
		err = ENOENT;
	else
		err = ramfs_can_create(fs, d, r->ifcall.tlink.name, r->fid->uid);
	if (!err)
		err = ramfs_link_entry(fs, d, r->ifcall.tlink.name.s, r->ifcall.tlink.name.len, n);
	if (!err)
		rnode_touch(n, 0);
	pthread_rwlock_unlock(&fs->lock);
	return err;
}

/* Is d inside the tree rooted at n (or n itself)? */
static int within(const np_ramfs *fs, const struct rnode *d, const struct rnode *n)
{
	for (const struct rnode *p = d; p; p = p->parent) {
		if (p == n)
			return 1;
		if (p == fs->root)
			break;
	}
	return 0;
}

/* Move entry oe of od to nd/name, replacing what is there. */
static int do_rename(np_ramfs *fs, uint32_t uid, struct rnode *od, struct rdirent *oe,
		     struct rnode *nd, np_str name)
{
	struct rnode *n = oe->node;
	if (nd->kind != RK_DIR)
		return ENOTDIR;
	if (nd->nlink == 0)
		return ENOENT;
	int err = ramfs_name_ok(name.s, name.len);
	if (!err)
		err = rnode_may_delete(fs, od, n, uid);
	if (!err)
		err = rnode_access(fs, nd, uid, 3);
	if (err)
		return err;
	if (n->kind == RK_DIR && within(fs, nd, n))
		return EINVAL;
	struct rdirent *ne = rdir_lookup(nd, name.s, name.len);
	if (ne) {
		struct rnode *t = ne->node;
		if (t == n)
			return 0; /* the same file: POSIX says do nothing */
		if (n->kind == RK_DIR && t->kind != RK_DIR)
			return ENOTDIR;
		if (n->kind != RK_DIR && t->kind == RK_DIR)
			return EISDIR;
		if (t->kind == RK_DIR && t->dir.n)
			return ENOTEMPTY;
		err = rnode_may_delete(fs, nd, t, uid);
		if (err)
			return err;
	}
	/* add first: the only step that can fail */
	err = rdir_add(nd, name.s, name.len, n);
	if (err)
		return err;
	if (ne)
		ramfs_unlink_entry(fs, nd, ne);
	rdir_del(od, oe);
	if (n->kind == RK_DIR) {
		od->nlink--;
		nd->nlink++;
	}
	n->parent = nd;
	rnode_touch(od, 1);
	if (nd != od)
		rnode_touch(nd, 1);
	rnode_touch(n, 0);
	return 0;
}

int ramfs_rename(np_req *r)
{
	np_ramfs *fs = fs_of(r);
	int err;
	pthread_rwlock_wrlock(&fs->lock);
	struct rnode *n = rfid_of(r->fid)->node;
	struct rnode *od = n->parent;
	struct rdirent *oe = NULL;
	if (n == fs->root)
		err = EBUSY;
	else if (!od || !(oe = rdir_find_node(od, n)))
		err = ENOENT;
	else
		err = do_rename(fs, r->fid->uid, od, oe, rfid_of(r->fid2)->node, r->ifcall.trename.name);
	pthread_rwlock_unlock(&fs->lock);
	return err;
}

int ramfs_renameat(np_req *r)
{
	np_ramfs *fs = fs_of(r);
	np_str on = r->ifcall.trenameat.oldname;
	int err;
	pthread_rwlock_wrlock(&fs->lock);
	struct rnode *od = rfid_of(r->fid)->node;
	struct rdirent *oe = NULL;
	if (od->kind != RK_DIR)
		err = ENOTDIR;
	else if ((err = ramfs_name_ok(on.s, on.len)) != 0)
		;
	else if (!(oe = rdir_lookup(od, on.s, on.len)))
		err = ENOENT;
	else
		err = do_rename(fs, r->fid->uid, od, oe, rfid_of(r->fid2)->node, r->ifcall.trenameat.newname);
	pthread_rwlock_unlock(&fs->lock);
	return err;
}

int ramfs_unlinkat(np_req *r)
{
	np_ramfs *fs = fs_of(r);
	np_str name = r->ifcall.tunlinkat.name;
	int rmdir = (r->ifcall.tunlinkat.flags & NP_AT_REMOVEDIR) != 0;
	int err;
	pthread_rwlock_wrlock(&fs->lock);
	struct rnode *d = rfid_of(r->fid)->node;
	struct rdirent *e = NULL;
	if (d->kind != RK_DIR)
		err = ENOTDIR;
	else if ((err = ramfs_name_ok(name.s, name.len)) != 0)
		;
	else if (!(e = rdir_lookup(d, name.s, name.len)))
		err = ENOENT;
	else if (rmdir && e->node->kind != RK_DIR)
		err = ENOTDIR;
	else if (!rmdir && e->node->kind == RK_DIR)
		err = EISDIR;
	else if (rmdir && e->node->dir.n)
		err = ENOTEMPTY;
	else
		err = rnode_may_delete(fs, d, e->node, r->fid->uid);
	if (!err)
		ramfs_unlink_entry(fs, d, e);
	pthread_rwlock_unlock(&fs->lock);
	return err;
}

/* 9P attributes as struct stat, and the lookup every name-creating
 * operation ends with (walk + getattr + enter in the inode table). */
#include <errno.h>
#include <string.h>

#include "ninepfs.h"

void nfs_attr_to_stat(const struct np_attr *a, struct stat *st)
{
	memset(st, 0, sizeof *st);
	st->st_ino = (ino_t)a->qid.path;
	st->st_mode = a->mode;
	st->st_nlink = (nlink_t)a->nlink;
	st->st_uid = a->uid;
	st->st_gid = a->gid;
	st->st_rdev = (dev_t)a->rdev;
	st->st_size = (off_t)a->size;
	st->st_blksize = (blksize_t)(a->blksize ? a->blksize : 4096);
	st->st_blocks = (blkcnt_t)a->blocks;
	st->st_atim = a->atime;
	st->st_mtim = a->mtime;
	st->st_ctim = a->ctime;
}

void nfs_fill_entry(struct nfs *fs, struct nfs_inode *i, const struct np_attr *a,
		    struct fuse_entry_param *e)
{
	memset(e, 0, sizeof *e);
	e->ino = nfs_inode_id(fs, i);
	e->generation = 0;
	nfs_attr_to_stat(a, &e->attr);
	e->attr_timeout = fs->conf.attr_timeout;
	e->entry_timeout = fs->conf.entry_timeout;
}

int nfs_do_lookup(struct nfs *fs, struct nfs_inode *parent, const char *name,
		  struct fuse_entry_param *e)
{
	if (!parent->fid)
		return -ESTALE;
	if (strlen(name) > 65535)
		return -ENAMETOOLONG;
	const char *names[1] = {name};
	np_cfid *f;
	int err = np_cfid_walk(parent->fid, 1, names, &f);
	if (err < 0)
		return err;
	struct np_attr a;
	err = np_cfid_getattr(f, NFS_ATTR_MASK, &a);
	if (err < 0) {
		np_cfid_clunk(f);
		return err;
	}
	if (!(a.valid & NP_GETATTR_INO))
		a.qid = f->qid;
	struct nfs_inode *i = nfs_inode_enter(fs, parent, name, f, &a);
	if (!i)
		return -ENOMEM;
	nfs_fill_entry(fs, i, &a, e);
	return 0;
}

/* ramfs instance life cycle and its handler table. */
#include <errno.h>
#include <stdlib.h>

#include "ramfs_int.h"

np_ramfs *np_ramfs_new(const struct np_ramfs_opts *o)
{
	struct np_ramfs_opts def = {0};
	if (!o)
		o = &def;
	np_ramfs *fs = calloc(1, sizeof(*fs));
	if (!fs)
		return NULL;
	if (pthread_rwlock_init(&fs->lock, NULL)) {
		free(fs);
		return NULL;
	}
	fs->all.all_next = fs->all.all_prev = &fs->all;
	fs->next_ino = 1;
	fs->max_bytes = o->max_bytes;
	fs->max_nodes = o->max_nodes;
	fs->noperm = o->noperm;
	uint32_t mode = o->root_mode ? o->root_mode & 07777 : 0755;
	fs->root = rnode_new(fs, RK_DIR, S_IFDIR | mode, o->root_uid, o->root_gid);
	if (!fs->root) {
		pthread_rwlock_destroy(&fs->lock);
		free(fs);
		return NULL;
	}
	fs->root->nlink = 2;
	fs->root->parent = fs->root;
	fs->root->refs = 1; /* the tree's own */
	return fs;
}

void np_ramfs_free(np_ramfs *fs)
{
	if (!fs)
		return;
	while (fs->all.all_next != &fs->all)
		rnode_destroy(fs, fs->all.all_next);
	ramfs_intern_free(fs);
	pthread_rwlock_destroy(&fs->lock);
	free(fs);
}

void np_ramfs_stats(np_ramfs *fs, struct np_ramfs_stats *st)
{
	pthread_rwlock_rdlock(&fs->lock);
	st->nodes = fs->nodes;
	st->data_bytes = fs->data_bytes;
	pthread_rwlock_unlock(&fs->lock);
}

const struct np_fs_ops np_ramfs_ops = {
	.attach = ramfs_attach,
	.auth = NULL, /* no authentication */
	.walk = ramfs_walk,
	.destroy_fid = ramfs_destroy_fid,
	.clunk = ramfs_clunk,
	.remove = ramfs_remove,
	.lopen = ramfs_lopen,
	.lcreate = ramfs_lcreate,
	.read = ramfs_read,
	.write = ramfs_write,
	.readdir = ramfs_readdir,
	.getattr = ramfs_getattr,
	.setattr = ramfs_setattr,
	.statfs = ramfs_statfs,
	.readlink = ramfs_readlink,
	.symlink = ramfs_symlink,
	.mknod = ramfs_mknod,
	.mkdir = ramfs_mkdir,
	.link = ramfs_link,
	.rename = ramfs_rename,
	.renameat = ramfs_renameat,
	.unlinkat = ramfs_unlinkat,
	.xattrwalk = ramfs_xattrwalk,
	.xattrcreate = ramfs_xattrcreate,
	.fsync = ramfs_fsync,
	.lock = ramfs_lock,
	.getlock = ramfs_getlock,
	.inline_ops = NP_OPS_ALL,
	.fid_priv_size = sizeof(struct rfid),
};

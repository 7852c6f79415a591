/* Extended attributes through Txattrwalk/Txattrcreate (9P2000.L). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ninepfs.h"

/* The kernel asks for security.capability before every write (to clear
 * it); a server round trip each time would double the cost of small
 * writes, so its absence is remembered for attr_timeout. */
static const char caps_name[] = "security.capability";

static uint64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static void caps_forget(struct nfs_inode *i)
{
	__atomic_store_n(&i->nocaps_until, 0, __ATOMIC_RELAXED);
}

/* get (name != NULL) or list; size 0 asks only for the size. */
static void get_or_list(fuse_req_t req, fuse_ino_t ino, const char *name, size_t size)
{
	struct nfs *fs = nfs_of(req);
	struct nfs_inode *i = nfs_inode_get(fs, ino);
	int caps = name && strcmp(name, caps_name) == 0;
	if (caps && now_ns() < __atomic_load_n(&i->nocaps_until, __ATOMIC_RELAXED)) {
		fuse_reply_err(req, ENODATA);
		return;
	}
	char *buf = size ? malloc(size) : NULL;
	if (size && !buf) {
		fuse_reply_err(req, ENOMEM);
		return;
	}
	ssize_t n;
	int err, attempt = 0;
	do {
		nfs_enter(fs);
		if (!i->fid)
			n = -ESTALE;
		else if (name)
			n = np_cfid_getxattr(i->fid, name, buf, size);
		else
			n = np_cfid_listxattr(i->fid, buf, size);
		err = n < 0 ? (int)n : 0;
	} while (nfs_leave(fs, &err, attempt++));
	if (caps && err == -ENODATA)
		__atomic_store_n(&i->nocaps_until, now_ns() + (uint64_t)(fs->conf.attr_timeout * 1e9),
				 __ATOMIC_RELAXED);
	if (err < 0)
		fuse_reply_err(req, nfs_errno(err));
	else if (!size)
		fuse_reply_xattr(req, (size_t)n);
	else
		fuse_reply_buf(req, buf, (size_t)n);
	free(buf);
}

static void op_getxattr(fuse_req_t req, fuse_ino_t ino, const char *name, size_t size)
{
	get_or_list(req, ino, name, size);
}

static void op_listxattr(fuse_req_t req, fuse_ino_t ino, size_t size)
{
	get_or_list(req, ino, NULL, size);
}

static void op_setxattr(fuse_req_t req, fuse_ino_t ino, const char *name, const char *value, size_t size,
			int flags)
{
	struct nfs *fs = nfs_of(req);
	struct nfs_inode *i = nfs_inode_get(fs, ino);
	int err, attempt = 0;
	do {
		nfs_enter(fs);
		err = i->fid ? np_cfid_setxattr(i->fid, name, value, size, flags) : -ESTALE;
	} while (nfs_leave(fs, &err, attempt++));
	caps_forget(i);
	fuse_reply_err(req, nfs_errno(err));
}

static void op_removexattr(fuse_req_t req, fuse_ino_t ino, const char *name)
{
	struct nfs *fs = nfs_of(req);
	struct nfs_inode *i = nfs_inode_get(fs, ino);
	int err, attempt = 0;
	do {
		nfs_enter(fs);
		err = i->fid ? np_cfid_removexattr(i->fid, name) : -ESTALE;
	} while (nfs_leave(fs, &err, attempt++));
	caps_forget(i);
	fuse_reply_err(req, nfs_errno(err));
}

void nfs_ops_xattr(struct fuse_lowlevel_ops *o)
{
	o->getxattr = op_getxattr;
	o->setxattr = op_setxattr;
	o->listxattr = op_listxattr;
	o->removexattr = op_removexattr;
}

/* ramfs I/O: Tlopen, Tlcreate, Tread, Twrite, Treaddir, Treadlink, Tfsync. */
#include <dirent.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "ramfs_int.h"

static int acc_read(uint32_t flags)
{
	uint32_t a = flags & 3;
	return a == NP_L_O_RDONLY || a == NP_L_O_RDWR;
}

static int acc_write(uint32_t flags)
{
	uint32_t a = flags & 3;
	return a == NP_L_O_WRONLY || a == NP_L_O_RDWR;
}

/* Checks and O_TRUNC for opening n; lock held exclusive. */
static int open_node(np_ramfs *fs, struct rfid *rf, struct rnode *n, uint32_t uid, uint32_t flags)
{
	int want = (acc_read(flags) ? 4 : 0) | (acc_write(flags) || (flags & NP_L_O_TRUNC) ? 2 : 0);
	if (n->kind == RK_LNK)
		return ELOOP;
	if (n->kind == RK_DIR && (want & 2))
		return EISDIR;
	if (n->kind != RK_DIR && (flags & NP_L_O_DIRECTORY))
		return ENOTDIR;
	int err = rnode_access(fs, n, uid, want);
	if (err)
		return err;
	if (n->kind == RK_SYNTH && (((want & 4) && !n->synth.ops->read) ||
				    (acc_write(flags) && !n->synth.ops->write)))
		return EACCES;
	if ((flags & NP_L_O_TRUNC) && n->kind == RK_REG && n->size) {
		err = rdata_truncate(fs, n, 0);
		if (err)
			return err;
		rnode_touch(n, 1);
	}
	rf->opened = 1;
	rf->oflags = flags;
	rf->synth_state = NULL;
	return 0;
}

/* After a successful open_node, outside the lock. */
static int open_finish(np_req *r, struct rfid *rf, struct rnode *n, uint32_t flags)
{
	if (n->kind == RK_SYNTH) {
		int err = rsynth_open(r, n, flags);
		if (err) {
			np_ramfs *fs = fs_of(r);
			pthread_rwlock_wrlock(&fs->lock);
			rf->opened = 0;
			pthread_rwlock_unlock(&fs->lock);
			return err;
		}
	}
	r->ofcall.ropen.qid = r->fid->qid;
	r->ofcall.ropen.iounit = 0; /* msize - NP_IOHDRSZ */
	return 0;
}

int ramfs_lopen(np_req *r)
{
	np_ramfs *fs = fs_of(r);
	struct rfid *rf = rfid_of(r->fid);
	uint32_t flags = r->ifcall.tlopen.flags;
	if (rf->kind != RF_NODE)
		return EINVAL;
	pthread_rwlock_wrlock(&fs->lock);
	struct rnode *n = rf->node;
	int err = rf->opened ? EBADF : open_node(fs, rf, n, r->fid->uid, flags);
	if (!err)
		r->fid->qid = rnode_qid(n);
	pthread_rwlock_unlock(&fs->lock);
	return err ? err : open_finish(r, rf, n, flags);
}

int ramfs_lcreate(np_req *r)
{
	np_ramfs *fs = fs_of(r);
	struct rfid *rf = rfid_of(r->fid);
	np_str name = r->ifcall.tlcreate.name;
	uint32_t flags = r->ifcall.tlcreate.flags;
	uint32_t uid = r->fid->uid;
	int err = 0;
	if (rf->kind != RF_NODE)
		return EINVAL;
	pthread_rwlock_wrlock(&fs->lock);
	struct rnode *d = rf->node, *n = NULL;
	struct rdirent *e;
	if (rf->opened)
		err = EBADF;
	else if (d->kind != RK_DIR)
		err = ENOTDIR;
	else if ((e = rdir_lookup(d, name.s, name.len)) != NULL) {
		/* open(O_CREAT) of an existing name: EEXIST only with O_EXCL */
		if (flags & NP_L_O_EXCL)
			err = EEXIST;
		else if (e->node->kind == RK_DIR)
			err = EISDIR;
		else
			n = e->node;
	} else {
		err = ramfs_make(fs, d, name, uid, r->ifcall.tlcreate.gid, RK_REG,
				 S_IFREG | (r->ifcall.tlcreate.mode & 07777), &n);
		if (!err) {
			/* a new file is opened with the access asked for, whatever
			 * its mode says (open(O_CREAT|O_RDWR, 0444) works) */
			flags &= ~(uint32_t)NP_L_O_TRUNC;
			rf->opened = 1;
			rf->oflags = flags;
			rf->synth_state = NULL;
		}
	}
	if (n && !rf->opened)
		err = open_node(fs, rf, n, uid, flags);
	if (!err) {
		/* the fid moves from the directory to the file */
		rnode_ref(n);
		rf->node = n;
		rnode_unref(fs, d);
		r->fid->qid = rnode_qid(n);
	}
	pthread_rwlock_unlock(&fs->lock);
	return err ? err : open_finish(r, rf, n, flags);
}

int ramfs_read(np_req *r)
{
	np_ramfs *fs = fs_of(r);
	struct rfid *rf = rfid_of(r->fid);
	uint8_t *buf = (uint8_t *)(uintptr_t)r->ofcall.rread.data;
	uint32_t room = r->ofcall.rread.count;
	uint64_t off = r->ifcall.tread.offset;
	uint32_t got = 0;
	int err = 0;

	pthread_rwlock_rdlock(&fs->lock);
	struct rnode *n = rf->node;
	if (rf->kind == RF_XATTR_READ) {
		if (off < rf->xlen) {
			got = rf->xlen - off < room ? (uint32_t)(rf->xlen - off) : room;
			memcpy(buf, rf->xbuf + off, got);
		}
	} else if (rf->kind != RF_NODE || !rf->opened || !acc_read(rf->oflags)) {
		err = EBADF;
	} else if (n->kind == RK_REG) {
		err = rdata_read(n, off, buf, room, &got);
	} else if (n->kind == RK_DIR) {
		err = EISDIR;
	} else if (n->kind == RK_SYNTH) {
		pthread_rwlock_unlock(&fs->lock);
		return rsynth_read(r, n); /* n is pinned */
	}
	pthread_rwlock_unlock(&fs->lock);
	if (!err)
		r->ofcall.rread.count = got;
	return err;
}

int ramfs_write(np_req *r)
{
	np_ramfs *fs = fs_of(r);
	struct rfid *rf = rfid_of(r->fid);
	const uint8_t *data = r->ifcall.twrite.data;
	uint32_t count = r->ifcall.twrite.count;
	uint64_t off = r->ifcall.twrite.offset;
	uint32_t done = 0;
	int err = 0;

	pthread_rwlock_wrlock(&fs->lock);
	struct rnode *n = rf->node;
	if (rf->kind == RF_XATTR_WRITE) {
		if (off > rf->xlen || count > rf->xlen - off) {
			err = ENOSPC;
		} else {
			memcpy(rf->xbuf + off, data, count);
			if (off + count > rf->xwritten)
				rf->xwritten = off + count;
			done = count;
		}
	} else if (rf->kind != RF_NODE || !rf->opened || !acc_write(rf->oflags)) {
		err = EBADF;
	} else if (n->kind == RK_REG) {
		if (rf->oflags & NP_L_O_APPEND)
			off = n->size;
		err = rdata_write(fs, n, off, data, count, &done);
		if (!err && done)
			rnode_touch(n, 1);
	} else if (n->kind == RK_DIR) {
		err = EISDIR;
	} else if (n->kind == RK_SYNTH) {
		pthread_rwlock_unlock(&fs->lock);
		return rsynth_write(r, n);
	} else {
		err = EINVAL; /* device nodes have no data here */
	}
	pthread_rwlock_unlock(&fs->lock);
	if (!err)
		r->ofcall.rwrite.count = done;
	return err;
}

/* Append one entry at *pos of the reply: 0 when it does not fit. */
static int put_dirent(uint8_t *buf, uint32_t room, uint32_t *pos, const np_dirent *de)
{
	size_t w = np_dirent_encode(buf + *pos, room - *pos, de);
	if (!w)
		return 0;
	*pos += (uint32_t)w;
	return 1;
}

int ramfs_readdir(np_req *r)
{
	np_ramfs *fs = fs_of(r);
	struct rfid *rf = rfid_of(r->fid);
	uint8_t *buf = (uint8_t *)(uintptr_t)r->ofcall.rread.data;
	uint32_t room = r->ofcall.rread.count;
	uint64_t off = r->ifcall.tread.offset;
	uint32_t pos = 0;
	int more = 0;
	int err = 0;

	pthread_rwlock_rdlock(&fs->lock);
	struct rnode *d = rf->node;
	if (rf->kind != RF_NODE || !rf->opened)
		err = EBADF;
	else if (d->kind != RK_DIR)
		err = ENOTDIR;
	if (err)
		goto out;
	np_dirent de;
	de.type = DT_DIR;
	if (off < RAMFS_COOKIE_DOT) {
		de.qid = rnode_qid(d);
		de.offset = RAMFS_COOKIE_DOT;
		de.name = np_str_make(".", 1);
		if (!put_dirent(buf, room, &pos, &de)) {
			more = 1;
			goto out;
		}
	}
	if (off < RAMFS_COOKIE_DOTDOT) {
		de.qid = rnode_qid(d->parent ? d->parent : d);
		de.offset = RAMFS_COOKIE_DOTDOT;
		de.name = np_str_make("..", 2);
		if (!put_dirent(buf, room, &pos, &de)) {
			more = 1;
			goto out;
		}
	}
	for (size_t i = rdir_first_after(d, off); i < d->dir.n; i++) {
		const struct rdirent *e = d->dir.ents[i];
		de.qid = rnode_qid(e->node);
		de.offset = e->cookie;
		de.type = rnode_dtype(e->node);
		de.name = np_str_make(e->name, e->namelen);
		if (!put_dirent(buf, room, &pos, &de)) {
			more = 1;
			break;
		}
	}
out:
	pthread_rwlock_unlock(&fs->lock);
	if (err)
		return err;
	/* an empty reply means end of directory: never send one when an entry
	 * is left that did not fit */
	if (pos == 0 && more)
		return EINVAL;
	r->ofcall.rread.count = pos;
	return 0;
}

int ramfs_readlink(np_req *r)
{
	np_ramfs *fs = fs_of(r);
	struct rfid *rf = rfid_of(r->fid);
	int err = 0;
	pthread_rwlock_rdlock(&fs->lock);
	struct rnode *n = rf->node;
	if (n->kind != RK_LNK) {
		err = EINVAL;
	} else if (n->size > r->ofcall.rreadlink.target.len) {
		err = ENAMETOOLONG;
	} else {
		memcpy((char *)(uintptr_t)r->ofcall.rreadlink.target.s, n->target, n->size);
		r->ofcall.rreadlink.target.len = (uint16_t)n->size;
	}
	pthread_rwlock_unlock(&fs->lock);
	return err;
}

int ramfs_fsync(np_req *r)
{
	(void)r; /* nothing is more durable than memory gets */
	return 0;
}

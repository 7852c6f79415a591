/* ramfs attributes: Tgetattr, Tsetattr, Tstatfs. */
#include <errno.h>
#include <string.h>
#include <unistd.h>

#include "ramfs_int.h"

#define TMPFS_MAGIC 0x01021994u
#define RAMFS_BSIZE 4096u

int ramfs_getattr(np_req *r)
{
	np_ramfs *fs = fs_of(r);
	struct rfid *rf = rfid_of(r->fid);
	pthread_rwlock_rdlock(&fs->lock);
	const struct rnode *n = rf->node;
	__typeof__(r->ofcall.rgetattr) *a = &r->ofcall.rgetattr;
	/* every field is cheap: fill them all whatever was asked */
	a->valid = NP_GETATTR_ALL;
	a->qid = rnode_qid(n);
	a->mode = n->mode;
	a->uid = n->uid;
	a->gid = n->gid;
	a->nlink = n->nlink;
	a->rdev = n->rdev;
	switch (n->kind) {
	case RK_REG: a->size = n->size; break;
	case RK_DIR: a->size = RAMFS_BSIZE; break;
	case RK_LNK: a->size = n->size; break;
	case RK_SYNTH: a->size = n->synth.size; break;
	case RK_SPECIAL: a->size = 0; break;
	}
	a->blksize = RAMFS_BSIZE;
	uint64_t used = 0;
	if (n->kind == RK_REG) {
		/* bytes actually held, but not a whole chunk for a small file */
		uint64_t alloc = rdata_allocated(n);
		uint64_t rounded = (n->size + RAMFS_BSIZE - 1) / RAMFS_BSIZE * RAMFS_BSIZE;
		used = alloc < rounded ? alloc : rounded;
	} else if (n->kind == RK_DIR) {
		used = RAMFS_BSIZE;
	}
	a->blocks = used / 512;
	a->atime_sec = (uint64_t)n->atime.tv_sec;
	a->atime_nsec = (uint64_t)n->atime.tv_nsec;
	a->mtime_sec = (uint64_t)n->mtime.tv_sec;
	a->mtime_nsec = (uint64_t)n->mtime.tv_nsec;
	a->ctime_sec = (uint64_t)n->ctime.tv_sec;
	a->ctime_nsec = (uint64_t)n->ctime.tv_nsec;
	a->btime_sec = (uint64_t)n->btime.tv_sec;
	a->btime_nsec = (uint64_t)n->btime.tv_nsec;
	a->gen = 0;
	a->data_version = n->version;
	pthread_rwlock_unlock(&fs->lock);
	return 0;
}

static struct timespec ts_make(uint64_t sec, uint64_t nsec)
{
	struct timespec t;
	t.tv_sec = (time_t)sec;
	t.tv_nsec = (long)(nsec % 1000000000u);
	return t;
}

/* All checks first, then all changes, so a refused setattr changes nothing. */
int ramfs_setattr(np_req *r)
{
	np_ramfs *fs = fs_of(r);
	struct rfid *rf = rfid_of(r->fid);
	const __typeof__(r->ifcall.tsetattr) *s = &r->ifcall.tsetattr;
	uint32_t v = s->valid;
	uint32_t uid = r->fid->uid;
	int err = 0;

	pthread_rwlock_wrlock(&fs->lock);
	struct rnode *n = rf->node;
	int owner = fs->noperm || uid == 0 || uid == n->uid;
	if ((v & NP_SETATTR_MODE) && !owner)
		err = EPERM;
	else if ((v & NP_SETATTR_UID) && s->uid != n->uid && !(fs->noperm || uid == 0))
		err = EPERM;
	else if ((v & NP_SETATTR_GID) && !owner)
		err = EPERM;
	else if ((v & (NP_SETATTR_ATIME_SET | NP_SETATTR_MTIME_SET)) && !owner)
		err = EPERM;
	else if ((v & (NP_SETATTR_ATIME | NP_SETATTR_MTIME)) && !owner &&
		 rnode_access(fs, n, uid, 2))
		err = EACCES;
	if (!err && (v & NP_SETATTR_SIZE)) {
		if (n->kind == RK_DIR)
			err = EISDIR;
		else if (n->kind != RK_REG && n->kind != RK_SYNTH)
			err = EINVAL;
		else if (s->size > INT64_MAX)
			err = EFBIG;
		else
			err = rnode_access(fs, n, uid, 2);
	}
	if (err)
		goto out;

	/* truncate first: the only change that can fail */
	if ((v & NP_SETATTR_SIZE) && n->kind == RK_REG) {
		err = rdata_truncate(fs, n, s->size);
		if (err)
			goto out;
	}
	struct timespec now;
	ramfs_now(&now);
	if (v & NP_SETATTR_MODE)
		n->mode = (n->mode & S_IFMT) | (s->mode & 07777);
	if (v & (NP_SETATTR_UID | NP_SETATTR_GID)) {
		if (v & NP_SETATTR_UID)
			n->uid = s->uid;
		if (v & NP_SETATTR_GID)
			n->gid = s->gid;
		/* chown drops set-id bits, as Linux does, unless a mode is set
		 * in the same call */
		if (!(v & NP_SETATTR_MODE) && n->kind != RK_DIR)
			n->mode &= ~(uint32_t)(S_ISUID | S_ISGID);
	}
	if (v & NP_SETATTR_ATIME)
		n->atime = (v & NP_SETATTR_ATIME_SET) ? ts_make(s->atime_sec, s->atime_nsec) : now;
	if (v & NP_SETATTR_MTIME)
		n->mtime = (v & NP_SETATTR_MTIME_SET) ? ts_make(s->mtime_sec, s->mtime_nsec) : now;
	if ((v & NP_SETATTR_SIZE) && !(v & NP_SETATTR_MTIME))
		n->mtime = now;
	/* any change (and NP_SETATTR_CTIME alone) sets ctime to now */
	if (v)
		n->ctime = now;
	n->version++;
out:
	pthread_rwlock_unlock(&fs->lock);
	return err;
}

int ramfs_statfs(np_req *r)
{
	np_ramfs *fs = fs_of(r);
	__typeof__(r->ofcall.rstatfs) *s = &r->ofcall.rstatfs;
	pthread_rwlock_rdlock(&fs->lock);
	uint64_t cap = fs->max_bytes;
	if (!cap)
		cap = (uint64_t)sysconf(_SC_PHYS_PAGES) * (uint64_t)sysconf(_SC_PAGESIZE);
	uint64_t used = fs->data_bytes < cap ? fs->data_bytes : cap;
	uint64_t files = fs->max_nodes ? fs->max_nodes : fs->nodes + cap / RAMFS_BSIZE;
	s->type = TMPFS_MAGIC;
	s->bsize = RAMFS_BSIZE;
	s->blocks = cap / RAMFS_BSIZE;
	s->bfree = (cap - used) / RAMFS_BSIZE;
	s->bavail = s->bfree;
	s->files = files;
	s->ffree = files > fs->nodes ? files - fs->nodes : 0;
	s->fsid = (uint64_t)(uintptr_t)fs;
	s->namelen = RAMFS_NAME_MAX;
	pthread_rwlock_unlock(&fs->lock);
	return 0;
}

/* Attributes: Tgetattr (statx), Tsetattr, Tstatfs, Treadlink. */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "pt_internal.h"

int np_pt_getattr(np_req *r)
{
	np_passthrough *fs = pt_fs(r);
	struct pt_fid *p;
	int e = np_pt_enter_fid(r, &p);
	if (e)
		return e;
	pthread_rwlock_rdlock(&p->lock);
	/* O_PATH descriptors stat fine, open-and-unlinked files included; no
	 * file is ever opened for this (special files stay untouched). */
	int fd = p->ofd >= 0 ? p->ofd : p->fd;
	struct statx sx;
	if (statx(fd, "", AT_EMPTY_PATH | AT_SYMLINK_NOFOLLOW | AT_STATX_SYNC_AS_STAT,
		  STATX_BASIC_STATS | STATX_BTIME, &sx) < 0)
		e = errno;
	pthread_rwlock_unlock(&p->lock);
	if (e)
		return e;

	typeof(r->ofcall.rgetattr) *a = &r->ofcall.rgetattr;
	dev_t dev = makedev(sx.stx_dev_major, sx.stx_dev_minor);
	a->valid = NP_GETATTR_BASIC;
	a->qid.type = np_pt_qtype(sx.stx_mode);
	a->qid.version = (uint32_t)sx.stx_mtime.tv_sec ^ sx.stx_mtime.tv_nsec;
	a->qid.path = np_pt_qpath(fs, dev, sx.stx_ino);
	a->mode = sx.stx_mode;
	a->uid = sx.stx_uid;
	a->gid = sx.stx_gid;
	a->nlink = sx.stx_nlink;
	a->rdev = makedev(sx.stx_rdev_major, sx.stx_rdev_minor);
	a->size = sx.stx_size;
	a->blksize = sx.stx_blksize;
	a->blocks = sx.stx_blocks;
	a->atime_sec = (uint64_t)sx.stx_atime.tv_sec;
	a->atime_nsec = sx.stx_atime.tv_nsec;
	a->mtime_sec = (uint64_t)sx.stx_mtime.tv_sec;
	a->mtime_nsec = sx.stx_mtime.tv_nsec;
	a->ctime_sec = (uint64_t)sx.stx_ctime.tv_sec;
	a->ctime_nsec = sx.stx_ctime.tv_nsec;
	if (sx.stx_mask & STATX_BTIME) {
		a->valid |= NP_GETATTR_BTIME;
		a->btime_sec = (uint64_t)sx.stx_btime.tv_sec;
		a->btime_nsec = sx.stx_btime.tv_nsec;
	} else {
		a->btime_sec = a->btime_nsec = 0;
	}
	a->gen = 0;
	a->data_version = 0;
	return 0;
}

static int set_size(np_passthrough *fs, struct pt_fid *p, uint64_t size)
{
	(void)fs;
	if (size > INT64_MAX)
		return EINVAL;
	if (p->ofd >= 0 && (p->oflags & O_ACCMODE) != O_RDONLY)
		return ftruncate(p->ofd, (off_t)size) < 0 ? errno : 0;
	if (p->type == S_IFDIR)
		return EISDIR;
	if (p->type != S_IFREG)
		return EINVAL; /* and never open a special file for this */
	/* truncate(2) through the magic link: the inode the fid holds, with
	 * the kernel's write-permission check for the caller. */
	char path[32];
	np_pt_procpath(path, p->fd);
	return truncate(path, (off_t)size) < 0 ? errno : 0;
}

int np_pt_setattr(np_req *r)
{
	np_passthrough *fs = pt_fs(r);
	struct pt_fid *p = pt_fid(r->fid);
	if (!p->live)
		return EBADF;
	typeof(r->ifcall.tsetattr) *s = &r->ifcall.tsetattr;
	uint32_t v = s->valid;
	if (v == 0)
		return 0;
	if (fs->read_only)
		return EROFS;
	int e = np_pt_enter(r, r->fid);
	if (e)
		return e;
	pthread_rwlock_rdlock(&p->lock);
	const int at = AT_EMPTY_PATH | AT_SYMLINK_NOFOLLOW;
	if (v & NP_SETATTR_MODE) {
		if (p->type == S_IFLNK) {
			e = EOPNOTSUPP; /* Linux has no symlink modes */
		} else {
			/* fchmod refuses O_PATH fds: chmod the magic link. */
			char path[32];
			np_pt_procpath(path, p->fd);
			if (chmod(path, s->mode & 07777) < 0)
				e = errno;
		}
		if (e)
			goto out;
	}
	if (v & (NP_SETATTR_UID | NP_SETATTR_GID)) {
		uid_t uid = (v & NP_SETATTR_UID) ? s->uid : (uid_t)-1;
		gid_t gid = (v & NP_SETATTR_GID) ? s->gid : (gid_t)-1;
		if (fchownat(p->fd, "", uid, gid, at) < 0) {
			e = errno;
			goto out;
		}
	}
	if (v & NP_SETATTR_SIZE) {
		e = set_size(fs, p, s->size);
		if (e)
			goto out;
	}
	if (v & (NP_SETATTR_ATIME | NP_SETATTR_MTIME)) {
		struct timespec ts[2];
		ts[0].tv_nsec = ts[1].tv_nsec = UTIME_OMIT;
		ts[0].tv_sec = ts[1].tv_sec = 0;
		if (v & NP_SETATTR_ATIME) {
			if (v & NP_SETATTR_ATIME_SET) {
				ts[0].tv_sec = (time_t)s->atime_sec;
				ts[0].tv_nsec = (long)s->atime_nsec;
			} else {
				ts[0].tv_nsec = UTIME_NOW;
			}
		}
		if (v & NP_SETATTR_MTIME) {
			if (v & NP_SETATTR_MTIME_SET) {
				ts[1].tv_sec = (time_t)s->mtime_sec;
				ts[1].tv_nsec = (long)s->mtime_nsec;
			} else {
				ts[1].tv_nsec = UTIME_NOW;
			}
		}
		if (utimensat(p->fd, "", ts, at) < 0) {
			e = errno;
			goto out;
		}
	} else if ((v & NP_SETATTR_CTIME) &&
		   !(v & (NP_SETATTR_MODE | NP_SETATTR_UID | NP_SETATTR_GID | NP_SETATTR_SIZE))) {
		/* ctime alone: a no-op chown is how to touch it (every other
		 * change above sets it anyway). */
		if (fchownat(p->fd, "", (uid_t)-1, (gid_t)-1, at) < 0)
			e = errno;
	}
out:
	pthread_rwlock_unlock(&p->lock);
	return e;
}

int np_pt_statfs(np_req *r)
{
	struct pt_fid *p;
	int e = np_pt_enter_fid(r, &p);
	if (e)
		return e;
	struct statfs sf;
	pthread_rwlock_rdlock(&p->lock);
	if (fstatfs(p->fd, &sf) < 0)
		e = errno;
	pthread_rwlock_unlock(&p->lock);
	if (e)
		return e;
	typeof(r->ofcall.rstatfs) *o = &r->ofcall.rstatfs;
	o->type = (uint32_t)sf.f_type;
	o->bsize = (uint32_t)sf.f_bsize;
	o->blocks = sf.f_blocks;
	o->bfree = sf.f_bfree;
	o->bavail = sf.f_bavail;
	o->files = sf.f_files;
	o->ffree = sf.f_ffree;
	uint32_t fsid[2];
	_Static_assert(sizeof(fsid) == sizeof(sf.f_fsid), "fsid is two words");
	memcpy(fsid, &sf.f_fsid, sizeof(fsid));
	o->fsid = (uint64_t)fsid[0] | (uint64_t)fsid[1] << 32;
	o->namelen = (uint32_t)sf.f_namelen;
	return 0;
}

int np_pt_readlink(np_req *r)
{
	struct pt_fid *p;
	int e = np_pt_enter_fid(r, &p);
	if (e)
		return e;
	char *buf = (char *)(uintptr_t)r->ofcall.rreadlink.target.s;
	size_t room = r->ofcall.rreadlink.target.len;
	pthread_rwlock_rdlock(&p->lock);
	ssize_t n = p->type != S_IFLNK ? (errno = EINVAL, -1) : readlinkat(p->fd, "", buf, room);
	if (n < 0)
		e = errno;
	pthread_rwlock_unlock(&p->lock);
	if (e)
		return e;
	if ((size_t)n >= room)
		return ENAMETOOLONG; /* it may have been cut */
	r->ofcall.rreadlink.target.len = (uint16_t)n;
	return 0;
}

/* Opening files (Tlopen, Tlcreate) and data I/O (Tread, Twrite, Tfsync). */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>

#include "pt_internal.h"

int np_pt_oflags(uint32_t l, int create, int *out)
{
	int f;
	switch (l & 3u) {
	case NP_L_O_RDONLY: f = O_RDONLY; break;
	case NP_L_O_WRONLY: f = O_WRONLY; break;
	case NP_L_O_RDWR: f = O_RDWR; break;
	default: return EINVAL; /* NOACCESS: ioctl-only opens have no use here */
	}
	/* The protocol fixes the Linux x86 values: translate bit by bit so
	 * the server is right on any ABI.  Dropped: CREATE/EXCL (lopen never
	 * creates), NOCTTY (a server has no terminal to acquire), FASYNC (no
	 * signals to the server), CLOEXEC (always set), NOFOLLOW (always
	 * refused to follow, see np_pt_reopen). */
	static const struct { uint32_t np; int os; } map[] = {
		{NP_L_O_TRUNC, O_TRUNC},       {NP_L_O_APPEND, O_APPEND},
		{NP_L_O_NONBLOCK, O_NONBLOCK}, {NP_L_O_DSYNC, O_DSYNC},
		{NP_L_O_DIRECT, O_DIRECT},     {NP_L_O_LARGEFILE, O_LARGEFILE},
		{NP_L_O_DIRECTORY, O_DIRECTORY}, {NP_L_O_NOATIME, O_NOATIME},
		{NP_L_O_SYNC, O_SYNC},
	};
	for (size_t i = 0; i < sizeof(map) / sizeof(map[0]); i++)
		if (l & map[i].np)
			f |= map[i].os;
	if (create) {
		f |= O_CREAT;
		if (l & NP_L_O_EXCL)
			f |= O_EXCL;
	}
	*out = f;
	return 0;
}

static int writes(int oflags)
{
	return (oflags & O_ACCMODE) != O_RDONLY || (oflags & O_TRUNC);
}

/* May the file of this type be opened for I/O? */
static int openable(np_passthrough *fs, mode_t type)
{
	if (type == S_IFLNK)
		return ELOOP; /* the client resolves symlinks */
	if (type != S_IFREG && type != S_IFDIR && !fs->allow_special)
		return EPERM; /* devices, FIFOs, sockets: never by default */
	return 0;
}

int np_pt_lopen(np_req *r)
{
	np_passthrough *fs = pt_fs(r);
	np_fid *f = r->fid;
	struct pt_fid *p = pt_fid(f);
	if (!p->live)
		return EBADF;
	int oflags, e = np_pt_oflags(r->ifcall.tlopen.flags, 0, &oflags);
	if (e)
		return e;
	if (fs->read_only && writes(oflags))
		return EROFS;
	e = np_pt_enter(r, f);
	if (e)
		return e;
	pthread_rwlock_wrlock(&p->lock);
	if (p->xa || p->ofd >= 0) {
		e = EBADF;
		goto out;
	}
	e = openable(fs, p->type);
	if (e)
		goto out;
	int fd = np_pt_reopen(fs, p->fd, oflags);
	if (fd < 0) {
		e = -fd;
		goto out;
	}
	struct stat st;
	if (fstat(fd, &st) < 0) {
		e = errno;
		close(fd);
		goto out;
	}
	p->ofd = fd;
	p->oflags = (uint32_t)oflags;
	p->dir_pos = 0;
	r->ofcall.ropen.qid = np_pt_qid(fs, &st);
	r->ofcall.ropen.iounit = 0;
out:
	pthread_rwlock_unlock(&p->lock);
	return e;
}

/* Create (or, without O_EXCL, open) name in dirfd without ever opening
 * something that is not a regular file: an existing FIFO or device under
 * that name must not be opened for I/O (CVE-2023-2861), nor a symlink
 * followed. Returns an fd or -errno. */
static int create_file(np_passthrough *fs, int dirfd, const char *name, int oflags, mode_t mode)
{
	int fd = openat(dirfd, name, oflags | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode);
	if (fd >= 0 || errno != EEXIST || (oflags & O_EXCL))
		return fd >= 0 ? fd : -errno;
	int pfd = np_pt_lookup(fs, dirfd, name);
	if (pfd < 0)
		return pfd;
	struct stat st;
	int e = fstat(pfd, &st) < 0 ? errno : 0;
	if (!e && S_ISDIR(st.st_mode))
		e = EISDIR;
	if (!e)
		e = openable(fs, st.st_mode & S_IFMT);
	if (!e) {
		fd = np_pt_reopen(fs, pfd, oflags & ~(O_CREAT | O_EXCL));
		if (fd < 0)
			e = -fd;
	}
	close(pfd);
	return e ? -e : fd;
}

int np_pt_lcreate(np_req *r)
{
	np_passthrough *fs = pt_fs(r);
	np_fid *f = r->fid;
	struct pt_fid *p = pt_fid(f);
	if (!p->live)
		return EBADF;
	char name[NAME_MAX + 1];
	int oflags, e = np_pt_name(r->ifcall.tlcreate.name, name, 0);
	if (!e)
		e = np_pt_oflags(r->ifcall.tlcreate.flags, 1, &oflags);
	if (e)
		return e;
	if (oflags & O_DIRECTORY)
		return EINVAL;
	if (fs->read_only)
		return EROFS;
	e = np_pt_enter(r, f);
	if (e)
		return e;
	pthread_rwlock_wrlock(&p->lock);
	if (p->xa || p->ofd >= 0) {
		e = EBADF;
		goto out;
	}
	if (p->type != S_IFDIR) {
		e = ENOTDIR;
		goto out;
	}
	int fd = create_file(fs, p->fd, name, oflags, r->ifcall.tlcreate.mode & 07777);
	if (fd < 0) {
		e = -fd;
		goto out;
	}
	struct stat st;
	int pathfd = np_pt_reopen(fs, fd, O_PATH);
	if (pathfd < 0 || fstat(fd, &st) < 0) {
		e = pathfd < 0 ? -pathfd : errno;
		if (pathfd >= 0)
			close(pathfd);
		close(fd);
		goto out;
	}
	np_pt_fix_gid(fs, f->user, pathfd, &st, r->ifcall.tlcreate.gid);
	/* The fid now names the new file; its directory becomes the parent. */
	if (p->pfd >= 0)
		close(p->pfd);
	p->pfd = p->fd;
	p->fd = pathfd;
	p->ofd = fd;
	p->oflags = (uint32_t)(oflags & ~(O_CREAT | O_EXCL));
	p->type = st.st_mode & S_IFMT;
	p->dev = st.st_dev;
	p->ino = st.st_ino;
	memcpy(p->name, name, sizeof(p->name));
	f->qid = np_pt_qid(fs, &st);
	r->ofcall.ropen.qid = f->qid;
	r->ofcall.ropen.iounit = 0;
out:
	pthread_rwlock_unlock(&p->lock);
	return e;
}

int np_pt_read(np_req *r)
{
	struct pt_fid *p = pt_fid(r->fid);
	if (!p->live)
		return EBADF;
	/* No identity switch: the open already checked access. */
	pthread_rwlock_rdlock(&p->lock);
	int e = 0;
	if (p->xa) {
		e = np_pt_xattr_read(p->xa, r);
	} else if (p->ofd < 0) {
		e = EBADF;
	} else if (r->ifcall.tread.offset > INT64_MAX) {
		e = EINVAL;
	} else {
		ssize_t n;
		/* Straight into the reply frame. */
		do
			n = pread(p->ofd, (void *)(uintptr_t)r->ofcall.rread.data,
				  r->ofcall.rread.count, (off_t)r->ifcall.tread.offset);
		while (n < 0 && errno == EINTR);
		if (n < 0)
			e = errno;
		else
			r->ofcall.rread.count = (uint32_t)n;
	}
	pthread_rwlock_unlock(&p->lock);
	return e;
}

int np_pt_write(np_req *r)
{
	np_fid *f = r->fid;
	struct pt_fid *p = pt_fid(f);
	if (!p->live)
		return EBADF;
	/* The writer's credentials decide whether set-id bits are cleared. */
	int e = np_pt_enter(r, f);
	if (e)
		return e;
	pthread_rwlock_rdlock(&p->lock);
	if (p->xa) {
		/* A pending xattr value: its write position is shared state. */
		pthread_rwlock_unlock(&p->lock);
		pthread_rwlock_wrlock(&p->lock);
		e = p->xa ? np_pt_xattr_write(p->xa, r) : EBADF;
	} else if (p->ofd < 0) {
		e = EBADF;
	} else if (pt_fs(r)->read_only) {
		e = EROFS;
	} else if (r->ifcall.twrite.offset > INT64_MAX) {
		e = EINVAL;
	} else {
		ssize_t n;
		do
			n = pwrite(p->ofd, r->ifcall.twrite.data, r->ifcall.twrite.count,
				   (off_t)r->ifcall.twrite.offset);
		while (n < 0 && errno == EINTR);
		if (n < 0)
			e = errno;
		else
			r->ofcall.rwrite.count = (uint32_t)n;
	}
	pthread_rwlock_unlock(&p->lock);
	return e;
}

int np_pt_fsync(np_req *r)
{
	struct pt_fid *p;
	int e = np_pt_enter_fid(r, &p);
	if (e)
		return e;
	pthread_rwlock_rdlock(&p->lock);
	if (p->ofd < 0)
		e = EBADF;
	else if ((r->ifcall.tfsync.datasync ? fdatasync(p->ofd) : fsync(p->ofd)) < 0)
		e = errno;
	pthread_rwlock_unlock(&p->lock);
	return e;
}

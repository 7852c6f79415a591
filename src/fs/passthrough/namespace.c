/* Directory entries: Tmkdir, Tsymlink, Tmknod, Tlink, Trename, Trenameat,
 * Tunlinkat, Tremove.  Every call is relative to a directory fid's O_PATH
 * descriptor with a single checked name, so a directory replaced by a
 * symlink since the walk changes nothing: the descriptor still denotes the
 * directory that was walked. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "pt_internal.h"

/* Read locks on two fids (one when the same).  glibc rwlocks prefer
 * readers by default, so taking two read locks cannot deadlock. */
static void rdlock2(struct pt_fid *a, struct pt_fid *b)
{
	pthread_rwlock_rdlock(&a->lock);
	if (b != a)
		pthread_rwlock_rdlock(&b->lock);
}

static void unlock2(struct pt_fid *a, struct pt_fid *b)
{
	if (b != a)
		pthread_rwlock_unlock(&b->lock);
	pthread_rwlock_unlock(&a->lock);
}

/* Common checks of a request that changes entries of the directory fid. */
static int dir_op(np_req *r, np_fid *f, np_str nm, char name[NAME_MAX + 1])
{
	struct pt_fid *p = pt_fid(f);
	if (!p->live)
		return EBADF;
	int e = np_pt_name(nm, name, 0);
	if (e)
		return e;
	if (pt_fs(r)->read_only)
		return EROFS;
	return np_pt_enter(r, f);
}

/* Reply with the qid of what was just created (and give it the group the
 * client asked for). */
static int created(np_req *r, int dirfd, const char *name, uint32_t gid)
{
	np_passthrough *fs = pt_fs(r);
	int fd = np_pt_lookup(fs, dirfd, name);
	if (fd < 0)
		return -fd;
	struct stat st;
	int e = fstat(fd, &st) < 0 ? errno : 0;
	if (!e) {
		np_pt_fix_gid(fs, r->fid->user, fd, &st, gid);
		r->ofcall.rqid.qid = np_pt_qid(fs, &st);
	}
	close(fd);
	return e;
}

int np_pt_mkdir(np_req *r)
{
	char name[NAME_MAX + 1];
	int e = dir_op(r, r->fid, r->ifcall.tmkdir.name, name);
	if (e)
		return e;
	struct pt_fid *p = pt_fid(r->fid);
	pthread_rwlock_rdlock(&p->lock);
	if (mkdirat(p->fd, name, r->ifcall.tmkdir.mode & 07777) < 0)
		e = errno;
	else
		e = created(r, p->fd, name, r->ifcall.tmkdir.gid);
	pthread_rwlock_unlock(&p->lock);
	return e;
}

int np_pt_symlink(np_req *r)
{
	char name[NAME_MAX + 1], target[PATH_MAX];
	int e = dir_op(r, r->fid, r->ifcall.tsymlink.name, name);
	if (e)
		return e;
	np_str t = r->ifcall.tsymlink.symtgt;
	if (t.len == 0)
		return ENOENT;
	if (memchr(t.s, '\0', t.len))
		return EINVAL;
	if (np_str_copy(target, sizeof(target), t) < 0)
		return ENAMETOOLONG;
	/* The target is stored, never resolved by the server. */
	struct pt_fid *p = pt_fid(r->fid);
	pthread_rwlock_rdlock(&p->lock);
	if (symlinkat(target, p->fd, name) < 0)
		e = errno;
	else
		e = created(r, p->fd, name, r->ifcall.tsymlink.gid);
	pthread_rwlock_unlock(&p->lock);
	return e;
}

int np_pt_mknod(np_req *r)
{
	char name[NAME_MAX + 1];
	int e = dir_op(r, r->fid, r->ifcall.tmknod.name, name);
	if (e)
		return e;
	mode_t mode = r->ifcall.tmknod.mode & (S_IFMT | 07777);
	if (S_ISDIR(mode) || S_ISLNK(mode))
		return EINVAL; /* Tmkdir and Tsymlink make those */
	struct pt_fid *p = pt_fid(r->fid);
	pthread_rwlock_rdlock(&p->lock);
	if (mknodat(p->fd, name, mode, makedev(r->ifcall.tmknod.major, r->ifcall.tmknod.minor)) < 0)
		e = errno;
	else
		e = created(r, p->fd, name, r->ifcall.tmknod.gid);
	pthread_rwlock_unlock(&p->lock);
	return e;
}

int np_pt_link(np_req *r)
{
	np_passthrough *fs = pt_fs(r);
	char name[NAME_MAX + 1];
	int e = dir_op(r, r->fid, r->ifcall.tlink.name, name);
	if (e)
		return e;
	struct pt_fid *d = pt_fid(r->fid), *s = r->fid2 ? pt_fid(r->fid2) : NULL;
	if (!s || !s->live)
		return EBADF;
	rdlock2(d, s);
	/* linkat(fd, "", AT_EMPTY_PATH) needs CAP_DAC_READ_SEARCH, which a
	 * switched fsuid drops; the /proc magic link of the source's O_PATH
	 * fd with AT_SYMLINK_FOLLOW links that very inode, no name looked
	 * up. */
	char num[16];
	snprintf(num, sizeof(num), "%d", s->fd);
	if (linkat(fs->procfd, num, d->fd, name, AT_SYMLINK_FOLLOW) < 0)
		e = errno;
	unlock2(d, s);
	return e;
}

int np_pt_rename(np_req *r)
{
	np_passthrough *fs = pt_fs(r);
	struct pt_fid *p = pt_fid(r->fid), *d = r->fid2 ? pt_fid(r->fid2) : NULL;
	char newname[NAME_MAX + 1], oldname[NAME_MAX + 1];
	if (!p->live || !d || !d->live)
		return EBADF;
	if (d == p)
		return EINVAL;
	int e = np_pt_name(r->ifcall.trename.name, newname, 0);
	if (e)
		return e;
	if (fs->read_only)
		return EROFS;
	e = np_pt_enter(r, r->fid);
	if (e)
		return e;
	/* The fid's own entry is updated on success: a write lock.  Two
	 * Trenames crossing the same two fids take them in address order. */
	if (p < d) {
		pthread_rwlock_wrlock(&p->lock);
		pthread_rwlock_rdlock(&d->lock);
	} else {
		pthread_rwlock_rdlock(&d->lock);
		pthread_rwlock_wrlock(&p->lock);
	}
	int dfd, owned;
	e = np_pt_locate(fs, p, &dfd, &owned, oldname);
	if (!e) {
		int nd = fcntl(d->fd, F_DUPFD_CLOEXEC, 0);
		if (nd < 0)
			e = errno;
		else if (renameat(dfd, oldname, d->fd, newname) < 0) {
			e = errno;
			close(nd);
		} else {
			if (p->pfd >= 0)
				close(p->pfd);
			p->pfd = nd;
			memcpy(p->name, newname, sizeof(p->name));
		}
		if (owned)
			close(dfd);
	}
	pthread_rwlock_unlock(&d->lock);
	pthread_rwlock_unlock(&p->lock);
	return e;
}

int np_pt_renameat(np_req *r)
{
	char oldname[NAME_MAX + 1], newname[NAME_MAX + 1];
	int e = dir_op(r, r->fid, r->ifcall.trenameat.oldname, oldname);
	if (e)
		return e;
	e = np_pt_name(r->ifcall.trenameat.newname, newname, 0);
	if (e)
		return e;
	struct pt_fid *o = pt_fid(r->fid), *n = r->fid2 ? pt_fid(r->fid2) : NULL;
	if (!n || !n->live)
		return EBADF;
	rdlock2(o, n);
	if (renameat(o->fd, oldname, n->fd, newname) < 0)
		e = errno;
	unlock2(o, n);
	return e;
}

int np_pt_unlinkat(np_req *r)
{
	char name[NAME_MAX + 1];
	int e = dir_op(r, r->fid, r->ifcall.tunlinkat.name, name);
	if (e)
		return e;
	uint32_t fl = r->ifcall.tunlinkat.flags;
	if (fl & ~(uint32_t)NP_AT_REMOVEDIR)
		return EINVAL;
	struct pt_fid *p = pt_fid(r->fid);
	pthread_rwlock_rdlock(&p->lock);
	if (unlinkat(p->fd, name, (fl & NP_AT_REMOVEDIR) ? AT_REMOVEDIR : 0) < 0)
		e = errno;
	pthread_rwlock_unlock(&p->lock);
	return e;
}

int np_pt_remove(np_req *r)
{
	np_passthrough *fs = pt_fs(r);
	struct pt_fid *p = pt_fid(r->fid);
	if (!p->live)
		return EBADF;
	if (fs->read_only)
		return EROFS;
	int e = np_pt_enter(r, r->fid);
	if (e)
		return e;
	pthread_rwlock_rdlock(&p->lock);
	int dfd, owned;
	char name[NAME_MAX + 1];
	e = np_pt_locate(fs, p, &dfd, &owned, name);
	if (!e) {
		if (unlinkat(dfd, name, p->type == S_IFDIR ? AT_REMOVEDIR : 0) < 0)
			e = errno;
		if (owned)
			close(dfd);
	}
	pthread_rwlock_unlock(&p->lock);
	return e;
}

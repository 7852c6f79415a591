/* Fids: attach, walk (confined, one name at a time), clunk, release, and
 * finding a fid's current directory entry. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "pt_internal.h"

void np_pt_fid_init(struct pt_fid *p, int fd, int pfd, const char *name, const struct stat *st)
{
	pthread_rwlock_init(&p->lock, NULL);
	p->fd = fd;
	p->ofd = -1;
	p->pfd = pfd;
	p->type = st->st_mode & S_IFMT;
	p->dev = st->st_dev;
	p->ino = st->st_ino;
	p->oflags = 0;
	p->dir_pos = 0;
	p->xa = NULL;
	size_t n = name ? strlen(name) : 0;
	if (n > NAME_MAX)
		n = 0;
	memcpy(p->name, name ? name : "", n);
	p->name[n] = '\0';
	p->live = 1;
}

void np_pt_fid_release(struct pt_fid *p)
{
	if (!p->live)
		return;
	if (p->fd >= 0)
		close(p->fd);
	if (p->ofd >= 0)
		close(p->ofd);
	if (p->pfd >= 0)
		close(p->pfd);
	free(p->xa);
	p->xa = NULL;
	p->fd = p->ofd = p->pfd = -1;
	pthread_rwlock_destroy(&p->lock);
	p->live = 0;
}

void np_pt_destroy_fid(np_fid *f)
{
	np_pt_fid_release(pt_fid(f));
}

int np_pt_clunk(np_req *r)
{
	struct pt_fid *p = pt_fid(r->fid);
	if (!p->live || !p->xa || !p->xa->writing)
		return 0;
	int e = np_pt_enter(r, r->fid);
	if (e)
		return e;
	pthread_rwlock_wrlock(&p->lock);
	e = np_pt_xattr_commit(pt_fs(r), p);
	pthread_rwlock_unlock(&p->lock);
	return e;
}

int np_pt_attach(np_req *r)
{
	np_passthrough *fs = pt_fs(r);
	np_fid *nf = r->newfid;
	uid_t uid;
	struct pt_ident *id;
	int e = np_pt_ident_resolve(fs, r->ifcall.tattach.uname, r->ifcall.tattach.n_uname, &uid, &id);
	if (e)
		return e;
	e = np_pt_become(fs, id ? id : fs->self);
	if (e)
		return e;

	int fd = fcntl(fs->rootfd, F_DUPFD_CLOEXEC, 0);
	if (fd < 0)
		return errno;
	/* aname: "" or "/" is the root, otherwise a path walked beneath it
	 * with the same confinement as Twalk ("." and ".." refused). */
	np_str an = r->ifcall.tattach.aname;
	uint16_t i = 0;
	int pfd = -1;
	char name[NAME_MAX + 1] = "";
	while (i < an.len) {
		while (i < an.len && an.s[i] == '/')
			i++;
		uint16_t j = i;
		while (j < an.len && an.s[j] != '/')
			j++;
		if (j == i)
			break;
		e = np_pt_name(np_str_make(an.s + i, (uint16_t)(j - i)), name, 0);
		if (e)
			e = ENOENT;
		int nfd = e ? -1 : np_pt_lookup(fs, fd, name);
		if (!e && nfd < 0)
			e = -nfd;
		if (e) {
			close(fd);
			if (pfd >= 0)
				close(pfd);
			return e;
		}
		if (pfd >= 0)
			close(pfd);
		pfd = fd;
		fd = nfd;
		i = j;
	}
	struct stat st;
	if (fstat(fd, &st) < 0) {
		e = errno;
		close(fd);
		if (pfd >= 0)
			close(pfd);
		return e;
	}
	np_pt_fid_init(pt_fid(nf), fd, pfd, pfd >= 0 ? name : "", &st);
	nf->user = id;
	nf->uid = uid;
	nf->qid = np_pt_qid(fs, &st);
	r->ofcall.rattach.qid = nf->qid;
	return 0;
}

/* One step of a walk from dirfd (whose stat is *cur). Returns an O_PATH fd
 * or -errno; *st gets the result's stat. */
static int walk1(np_passthrough *fs, int dirfd, const struct stat *cur, np_str wname,
		 char name[NAME_MAX + 1], struct stat *st)
{
	int e = np_pt_name(wname, name, 1);
	if (e)
		return -e;
	if (!S_ISDIR(cur->st_mode))
		return -ENOTDIR;
	int fd;
	if (strcmp(name, "..") == 0) {
		/* The root's parent is the root: never climb above the export. */
		if (np_pt_is_root(fs, cur))
			fd = fcntl(dirfd, F_DUPFD_CLOEXEC, 0);
		else
			fd = openat(dirfd, "..", O_PATH | O_DIRECTORY | O_CLOEXEC);
		if (fd < 0)
			return -errno;
	} else if (strcmp(name, ".") == 0) {
		fd = fcntl(dirfd, F_DUPFD_CLOEXEC, 0);
		if (fd < 0)
			return -errno;
	} else {
		fd = np_pt_lookup(fs, dirfd, name);
		if (fd < 0)
			return fd;
	}
	if (fstat(fd, st) < 0) {
		e = errno;
		close(fd);
		return -e;
	}
	return fd;
}

int np_pt_walk(np_req *r)
{
	np_passthrough *fs = pt_fs(r);
	np_fid *f = r->fid, *nf = r->newfid;
	struct pt_fid *p;
	int e = np_pt_enter_fid(r, &p);
	if (e)
		return e;
	uint16_t nw = r->ifcall.twalk.nwname;
	if (nw > NP_MAXWELEM)
		return EINVAL;
	int inplace = nf == f || !nf;
	if (inplace)
		pthread_rwlock_wrlock(&p->lock);
	else
		pthread_rwlock_rdlock(&p->lock);
	if (p->xa) {
		e = EINVAL; /* xattr fids are read, written and clunked only */
		goto out;
	}
	if (inplace && p->ofd >= 0) {
		e = EBUSY; /* an open fid cannot be moved */
		goto out;
	}

	/* The result: fd, the directory it was reached from (pfd) and its
	 * name there; both are unknown after "." or "..". */
	int fd = -1, pfd = -1;
	char name[NAME_MAX + 1] = "";
	struct stat st;
	if (fstat(p->fd, &st) < 0) {
		e = errno;
		goto out;
	}
	if (nw == 0) {
		fd = fcntl(p->fd, F_DUPFD_CLOEXEC, 0);
		pfd = p->pfd >= 0 ? fcntl(p->pfd, F_DUPFD_CLOEXEC, 0) : -1;
		if (fd < 0 || (p->pfd >= 0 && pfd < 0)) {
			e = errno;
			if (fd >= 0)
				close(fd);
			goto out;
		}
		memcpy(name, p->name, sizeof(name));
	}
	uint16_t i;
	for (i = 0; i < nw; i++) {
		int dirfd = i == 0 ? p->fd : fd;
		struct stat nst;
		int nfd = walk1(fs, dirfd, &st, r->ifcall.twalk.wname[i], name, &nst);
		if (nfd < 0) {
			e = -nfd;
			break;
		}
		if (pfd >= 0)
			close(pfd);
		pfd = -1;
		if (strcmp(name, ".") == 0 || strcmp(name, "..") == 0) {
			name[0] = '\0';
			if (i > 0)
				close(fd);
		} else if (i == 0) {
			pfd = fcntl(p->fd, F_DUPFD_CLOEXEC, 0);
			if (pfd < 0) {
				e = errno;
				close(nfd);
				break;
			}
		} else {
			pfd = fd; /* the directory we came from */
		}
		fd = nfd;
		st = nst;
		r->ofcall.rwalk.wqid[i] = np_pt_qid(fs, &st);
	}
	r->ofcall.rwalk.nwqid = i;
	if (i < nw) {
		/* Partial (or failed) walk: newfid is not touched. */
		if (fd >= 0 && nw > 0 && i > 0)
			close(fd);
		if (pfd >= 0)
			close(pfd);
		if (i > 0)
			e = 0;
		goto out;
	}
	e = 0;
	if (inplace) {
		close(p->fd);
		if (p->pfd >= 0)
			close(p->pfd);
		p->fd = fd;
		p->pfd = pfd;
		p->type = st.st_mode & S_IFMT;
		p->dev = st.st_dev;
		p->ino = st.st_ino;
		memcpy(p->name, name, sizeof(p->name));
		f->qid = np_pt_qid(fs, &st);
	} else {
		np_pt_fid_init(pt_fid(nf), fd, pfd, name, &st);
		nf->user = f->user;
		nf->uid = f->uid;
		nf->qid = np_pt_qid(fs, &st);
	}
out:
	pthread_rwlock_unlock(&p->lock);
	return e;
}

int np_pt_locate(np_passthrough *fs, struct pt_fid *p, int *dfd, int *owned,
		 char name[NAME_MAX + 1])
{
	struct stat st;
	*owned = 0;
	if (p->dev == fs->rootdev && p->ino == fs->rootino)
		return EBUSY; /* the export root has no entry inside the export */
	if (p->pfd >= 0 && p->name[0] &&
	    fstatat(p->pfd, p->name, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
	    st.st_dev == p->dev && st.st_ino == p->ino) {
		*dfd = p->pfd;
		memcpy(name, p->name, NAME_MAX + 1);
		return 0;
	}
	/* The recorded entry is gone or unknown (reached by ".."; renamed
	 * since).  A directory still knows its parent: find its entry there.
	 * Other files cannot be found again. */
	if (!S_ISDIR(p->type))
		return ESTALE;
	int par = openat(p->fd, "..", O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (par < 0)
		return errno;
	int rd = openat(par, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (rd < 0) {
		int e = errno;
		close(par);
		return e;
	}
	char buf[4096] __attribute__((aligned(8)));
	int found = 0;
	ssize_t n;
	while (!found && (n = getdents64(rd, buf, sizeof(buf))) > 0) {
		for (ssize_t off = 0; off < n;) {
			struct dirent64 *d = (struct dirent64 *)(void *)(buf + off);
			off += d->d_reclen;
			if (d->d_ino != p->ino || strcmp(d->d_name, ".") == 0 ||
			    strcmp(d->d_name, "..") == 0)
				continue;
			if (fstatat(par, d->d_name, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
			    st.st_dev == p->dev && st.st_ino == p->ino &&
			    strlen(d->d_name) <= NAME_MAX) {
				strcpy(name, d->d_name);
				found = 1;
				break;
			}
		}
	}
	close(rd);
	if (!found) {
		close(par);
		return ESTALE;
	}
	*dfd = par;
	*owned = 1;
	return 0;
}

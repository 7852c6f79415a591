/* Extended attributes: Txattrwalk (get, list) and Txattrcreate (set,
 * remove; committed when the fid is clunked). */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/xattr.h>
#include <unistd.h>

#include "pt_internal.h"

#define PT_XATTR_NAME_MAX 255
#define PT_XATTR_SIZE_MAX 65536

/* A NULL name lists.  O_PATH fds have no f*xattr form: use the magic
 * link, which (followed) is the fid's own inode, a symlink included, so the
 * kernel's rules (no user.* on symlinks and special files) apply. */
static ssize_t xget(struct pt_fid *p, const char *name, void *buf, size_t size)
{
	if (p->ofd >= 0)
		return name ? fgetxattr(p->ofd, name, buf, size) : flistxattr(p->ofd, buf, size);
	char path[32];
	np_pt_procpath(path, p->fd);
	return name ? getxattr(path, name, buf, size) : listxattr(path, buf, size);
}

static int xname(np_str s, char buf[PT_XATTR_NAME_MAX + 1])
{
	if (s.len > PT_XATTR_NAME_MAX)
		return ERANGE;
	if (memchr(s.s, '\0', s.len))
		return EINVAL;
	memcpy(buf, s.s, s.len);
	buf[s.len] = '\0';
	return 0;
}

int np_pt_xattrwalk(np_req *r)
{
	np_fid *f = r->fid, *nf = r->newfid ? r->newfid : r->fid;
	struct pt_fid *p = pt_fid(f);
	if (!p->live)
		return EBADF;
	char name[PT_XATTR_NAME_MAX + 1];
	int e = xname(r->ifcall.txattrwalk.name, name);
	if (e)
		return e;
	int list = name[0] == '\0';
	e = np_pt_enter(r, f);
	if (e)
		return e;
	if (nf == f)
		pthread_rwlock_wrlock(&p->lock);
	else
		pthread_rwlock_rdlock(&p->lock);
	struct pt_xattr *xa = NULL;
	if (p->xa) {
		e = EINVAL;
		goto out;
	}
	/* The value may change between sizing and reading it: retry. */
	for (int tries = 0; tries < 4; tries++) {
		ssize_t n = xget(p, list ? NULL : name, NULL, 0);
		if (n < 0) {
			e = errno;
			goto out;
		}
		free(xa);
		xa = calloc(1, sizeof(*xa) + (size_t)n + 1);
		if (!xa) {
			e = ENOMEM;
			goto out;
		}
		ssize_t got = n ? xget(p, list ? NULL : name, xa->data, (size_t)n) : 0;
		if (got >= 0) {
			xa->size = (uint64_t)got;
			e = 0;
			break;
		}
		e = errno;
		if (e != ERANGE)
			goto out;
	}
	if (e)
		goto out;
	memcpy(xa->name, name, sizeof(xa->name));
	if (nf == f) {
		p->xa = xa;
	} else {
		int fd = fcntl(p->fd, F_DUPFD_CLOEXEC, 0);
		if (fd < 0) {
			e = errno;
			goto out;
		}
		struct stat st = {0};
		st.st_mode = p->type;
		st.st_dev = p->dev;
		st.st_ino = p->ino;
		struct pt_fid *q = pt_fid(nf);
		np_pt_fid_init(q, fd, -1, "", &st);
		q->xa = xa;
		nf->user = f->user;
		nf->uid = f->uid;
		nf->qid = f->qid;
	}
	r->ofcall.rxattrwalk.size = xa->size;
	xa = NULL;
out:
	pthread_rwlock_unlock(&p->lock);
	free(xa);
	return e;
}

int np_pt_xattrcreate(np_req *r)
{
	np_passthrough *fs = pt_fs(r);
	struct pt_fid *p = pt_fid(r->fid);
	if (!p->live)
		return EBADF;
	char name[PT_XATTR_NAME_MAX + 1];
	int e = xname(r->ifcall.txattrcreate.name, name);
	if (e)
		return e;
	if (!name[0])
		return EINVAL;
	uint64_t size = r->ifcall.txattrcreate.attr_size;
	uint32_t flags = r->ifcall.txattrcreate.flags;
	if (size > PT_XATTR_SIZE_MAX)
		return E2BIG;
	if (flags & ~(uint32_t)(XATTR_CREATE | XATTR_REPLACE))
		return EINVAL;
	if (fs->read_only)
		return EROFS;
	struct pt_xattr *xa = calloc(1, sizeof(*xa) + (size_t)size + 1);
	if (!xa)
		return ENOMEM;
	xa->writing = 1;
	xa->flags = (int)flags;
	xa->size = size;
	memcpy(xa->name, name, sizeof(xa->name));
	pthread_rwlock_wrlock(&p->lock);
	if (p->xa) {
		e = EINVAL;
	} else {
		p->xa = xa;
		xa = NULL;
	}
	pthread_rwlock_unlock(&p->lock);
	free(xa);
	return e;
}

int np_pt_xattr_read(struct pt_xattr *xa, np_req *r)
{
	if (xa->writing)
		return EBADF;
	uint64_t off = r->ifcall.tread.offset;
	uint32_t n = 0;
	if (off < xa->size) {
		uint64_t left = xa->size - off;
		n = left < r->ofcall.rread.count ? (uint32_t)left : r->ofcall.rread.count;
		memcpy((void *)(uintptr_t)r->ofcall.rread.data, xa->data + off, n);
	}
	r->ofcall.rread.count = n;
	return 0;
}

int np_pt_xattr_write(struct pt_xattr *xa, np_req *r)
{
	if (!xa->writing)
		return EBADF;
	uint64_t off = r->ifcall.twrite.offset;
	uint32_t n = r->ifcall.twrite.count;
	/* The value arrives in order, as clients send it. */
	if (off != xa->written || n > xa->size - xa->written)
		return EINVAL;
	memcpy(xa->data + off, r->ifcall.twrite.data, n);
	xa->written += n;
	r->ofcall.rwrite.count = n;
	return 0;
}

int np_pt_xattr_commit(np_passthrough *fs, struct pt_fid *p)
{
	struct pt_xattr *xa = p->xa;
	if (!xa || !xa->writing)
		return 0;
	p->xa = NULL;
	int e = 0;
	if (xa->written != xa->size) {
		e = EINVAL; /* fewer bytes than Txattrcreate announced */
	} else if (fs->read_only) {
		e = EROFS;
	} else if (xa->size == 0 && !(xa->flags & XATTR_CREATE)) {
		/* Linux clients remove an attribute with an empty set. */
		int rc;
		if (p->ofd >= 0) {
			rc = fremovexattr(p->ofd, xa->name);
		} else {
			char path[32];
			np_pt_procpath(path, p->fd);
			rc = removexattr(path, xa->name);
		}
		if (rc < 0)
			e = errno;
	} else {
		int rc;
		if (p->ofd >= 0) {
			rc = fsetxattr(p->ofd, xa->name, xa->data, xa->size, xa->flags);
		} else {
			char path[32];
			np_pt_procpath(path, p->fd);
			rc = setxattr(path, xa->name, xa->data, xa->size, xa->flags);
		}
		if (rc < 0)
			e = errno;
	}
	free(xa);
	return e;
}

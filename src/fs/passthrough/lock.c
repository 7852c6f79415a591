/* Byte-range locks (Tlock, Tgetlock) as open-file-description locks on the
 * fid's open file: POSIX conflict rules between fids (and with local
 * processes), released when the fid's file is closed, and never blocking:
 * a conflict answers BLOCKED and the client retries.
 *
 * The owner of a lock is the fid's open file, not (client_id, proc_id):
 * processes of one client sharing one open fid do not conflict with each
 * other, which is how the Linux client uses fids anyway. */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <string.h>

#include "pt_internal.h"

static int to_flock(uint8_t type, uint64_t start, uint64_t length, struct flock *fl)
{
	memset(fl, 0, sizeof(*fl));
	switch (type) {
	case NP_LOCK_TYPE_RDLCK: fl->l_type = F_RDLCK; break;
	case NP_LOCK_TYPE_WRLCK: fl->l_type = F_WRLCK; break;
	case NP_LOCK_TYPE_UNLCK: fl->l_type = F_UNLCK; break;
	default: return EINVAL;
	}
	/* length 0 means "to the end of the file", as in fcntl. */
	if (start > INT64_MAX || length > INT64_MAX || (length && start + length - 1 > INT64_MAX))
		return EINVAL;
	fl->l_whence = SEEK_SET;
	fl->l_start = (off_t)start;
	fl->l_len = (off_t)length;
	fl->l_pid = 0; /* required for OFD locks */
	return 0;
}

int np_pt_lock(np_req *r)
{
	struct pt_fid *p = pt_fid(r->fid);
	if (!p->live)
		return EBADF;
	struct flock fl;
	int e = to_flock(r->ifcall.tlock.type, r->ifcall.tlock.start, r->ifcall.tlock.length, &fl);
	if (e)
		return e;
	pthread_rwlock_rdlock(&p->lock);
	if (p->ofd < 0) {
		e = EBADF;
	} else if (fcntl(p->ofd, F_OFD_SETLK, &fl) == 0) {
		r->ofcall.rlock.status = NP_LOCK_SUCCESS;
	} else if (errno == EAGAIN || errno == EACCES) {
		r->ofcall.rlock.status = NP_LOCK_BLOCKED;
	} else {
		e = errno;
	}
	pthread_rwlock_unlock(&p->lock);
	return e;
}

int np_pt_getlock(np_req *r)
{
	struct pt_fid *p = pt_fid(r->fid);
	if (!p->live)
		return EBADF;
	struct flock fl;
	typeof(r->ifcall.tgetlock) *t = &r->ifcall.tgetlock;
	int e = to_flock(t->type, t->start, t->length, &fl);
	if (e)
		return e;
	if (fl.l_type == F_UNLCK)
		return EINVAL;
	pthread_rwlock_rdlock(&p->lock);
	if (p->ofd < 0)
		e = EBADF;
	else if (fcntl(p->ofd, F_OFD_GETLK, &fl) < 0)
		e = errno;
	pthread_rwlock_unlock(&p->lock);
	if (e)
		return e;
	typeof(r->ofcall.rgetlock) *g = &r->ofcall.rgetlock;
	if (fl.l_type == F_UNLCK) {
		/* No conflict: the request comes back with type UNLCK. */
		g->type = NP_LOCK_TYPE_UNLCK;
		g->start = t->start;
		g->length = t->length;
		g->proc_id = t->proc_id;
	} else {
		g->type = fl.l_type == F_RDLCK ? NP_LOCK_TYPE_RDLCK : NP_LOCK_TYPE_WRLCK;
		g->start = (uint64_t)fl.l_start;
		g->length = (uint64_t)fl.l_len;
		/* OFD locks have no owning process (-1); classic ones do. */
		g->proc_id = fl.l_pid > 0 ? (uint32_t)fl.l_pid : 0;
	}
	g->client_id = t->client_id;
	return 0;
}

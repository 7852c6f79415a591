/* ramfs Tlock/Tgetlock on the byte-range lock table of lock.c. */
#include <errno.h>

#include "ramfs_int.h"

int ramfs_lock(np_req *r)
{
	np_ramfs *fs = fs_of(r);
	struct rfid *rf = rfid_of(r->fid);
	const __typeof__(r->ifcall.tlock) *t = &r->ifcall.tlock;
	if (rf->kind != RF_NODE)
		return EINVAL;
	pthread_rwlock_wrlock(&fs->lock);
	int st = rlock_set(fs, rf->node, r->fid, t->type, t->start, t->length, t->proc_id, t->client_id);
	pthread_rwlock_unlock(&fs->lock);
	if (st < 0)
		return -st;
	r->ofcall.rlock.status = (uint8_t)st;
	return 0;
}

int ramfs_getlock(np_req *r)
{
	np_ramfs *fs = fs_of(r);
	struct rfid *rf = rfid_of(r->fid);
	const __typeof__(r->ifcall.tgetlock) *t = &r->ifcall.tgetlock;
	__typeof__(r->ofcall.rgetlock) *o = &r->ofcall.rgetlock;
	struct rlock c;
	if (rf->kind != RF_NODE)
		return EINVAL;
	if (t->type != NP_LOCK_TYPE_RDLCK && t->type != NP_LOCK_TYPE_WRLCK)
		return EINVAL;
	pthread_rwlock_rdlock(&fs->lock);
	rlock_get(rf->node, t->type, t->start, t->length, t->proc_id, t->client_id, &c);
	pthread_rwlock_unlock(&fs->lock);
	if (c.type == NP_LOCK_TYPE_UNLCK) {
		/* no conflict: the request comes back with type UNLCK */
		o->type = NP_LOCK_TYPE_UNLCK;
		o->start = t->start;
		o->length = t->length;
		o->proc_id = t->proc_id;
		o->client_id = t->client_id;
		return 0;
	}
	o->type = c.type;
	o->start = c.start;
	o->length = c.end == UINT64_MAX ? 0 : c.end - c.start + 1;
	o->proc_id = c.proc_id;
	o->client_id = np_str_make(c.client, c.client_len); /* interned: stays valid */
	return 0;
}

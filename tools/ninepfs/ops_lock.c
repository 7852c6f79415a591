/* POSIX record locks on Tlock/Tgetlock, taken on the open file's fid.
 *
 * 9P has no blocking lock wait: a conflicting Tlock answers BLOCKED, so
 * F_SETLKW retries with a growing pause until it is granted or the caller
 * is interrupted.  The locks this mount holds are also recorded here, only
 * to name the holding process in F_GETLK answers when the server cannot
 * (its locks may have no owning process). */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "ninepfs.h"

struct nfs_lockrec {
	struct nfs_fh *fh;
	int type;            /* F_RDLCK or F_WRLCK */
	uint64_t start, end; /* inclusive */
	pid_t pid;
	uint64_t owner;      /* the kernel's lock owner (the process's file table) */
	struct nfs_lockrec *next;
};

static char client_id[64];

static void range_of(const struct flock *l, uint64_t *start, uint64_t *end)
{
	*start = (uint64_t)l->l_start;
	*end = l->l_len ? (uint64_t)l->l_start + (uint64_t)l->l_len - 1 : UINT64_MAX;
}

/* Cut [start, end] out of the records of (fh, owner) (unlock, or before a
 * new lock); owner 0 matches every owner. */
static void rec_cut(struct nfs_inode *i, struct nfs_fh *fh, uint64_t owner, uint64_t start, uint64_t end)
{
	for (struct nfs_lockrec **pp = &i->locks; *pp;) {
		struct nfs_lockrec *r = *pp;
		if (r->fh != fh || (owner && r->owner != owner) || r->end < start || r->start > end) {
			pp = &r->next;
			continue;
		}
		if (r->start < start && r->end > end) {
			/* split in two */
			struct nfs_lockrec *tail = malloc(sizeof *tail);
			if (tail) {
				*tail = *r;
				tail->start = end + 1;
				r->next = tail;
			}
			r->end = start - 1;
			pp = tail ? &tail->next : &r->next;
		} else if (r->start < start) {
			r->end = start - 1;
			pp = &r->next;
		} else if (r->end > end) {
			r->start = end + 1;
			pp = &r->next;
		} else {
			*pp = r->next;
			free(r);
		}
	}
}

static void rec_add(struct nfs *fs, struct nfs_fh *fh, uint64_t owner, const struct flock *l)
{
	uint64_t start, end;
	range_of(l, &start, &end);
	pthread_mutex_lock(&fs->lock_lock);
	struct nfs_inode *i = fh->ino;
	rec_cut(i, fh, owner, start, end);
	if (l->l_type != F_UNLCK) {
		struct nfs_lockrec *r = malloc(sizeof *r);
		if (r) {
			r->fh = fh;
			r->type = l->l_type;
			r->start = start;
			r->end = end;
			r->pid = l->l_pid;
			r->owner = owner;
			r->next = i->locks;
			i->locks = r;
		}
	}
	pthread_mutex_unlock(&fs->lock_lock);
}

static pid_t rec_holder(struct nfs *fs, struct nfs_fh *asker, uint64_t start, uint64_t end, int type)
{
	pid_t pid = 0;
	pthread_mutex_lock(&fs->lock_lock);
	for (struct nfs_lockrec *r = asker->ino->locks; r; r = r->next)
		if (r->fh != asker && r->start <= end && r->end >= start && r->type == type) {
			pid = r->pid;
			break;
		}
	pthread_mutex_unlock(&fs->lock_lock);
	return pid;
}

void nfs_locks_drop_fh(struct nfs *fs, struct nfs_fh *fh, uint64_t owner)
{
	if (!owner) {
		/* release: closing the fid drops the server's locks */
		pthread_mutex_lock(&fs->lock_lock);
		rec_cut(fh->ino, fh, 0, 0, UINT64_MAX);
		pthread_mutex_unlock(&fs->lock_lock);
		fh->has_locks = 0;
		return;
	}
	/* close(2) by one owner: unlock exactly its ranges, since every
	 * process sharing this open file is one owner to the server. */
	np_cfid *f = nfs_fh_fid(fs, fh);
	for (;;) {
		uint64_t start = 0, end = 0;
		int found = 0;
		pthread_mutex_lock(&fs->lock_lock);
		for (struct nfs_lockrec *r = fh->ino->locks; r; r = r->next)
			if (r->fh == fh && r->owner == owner) {
				start = r->start;
				end = r->end;
				found = 1;
				break;
			}
		if (found)
			rec_cut(fh->ino, fh, owner, start, end);
		pthread_mutex_unlock(&fs->lock_lock);
		if (!found)
			break;
		if (f) {
			struct np_flock l = {.type = NP_LOCK_TYPE_UNLCK, .start = start,
					     .length = end == UINT64_MAX ? 0 : end - start + 1,
					     .proc_id = (uint32_t)getpid(), .client_id = client_id};
			np_cfid_lock(f, &l, 0);
		}
	}
}

static uint8_t np_type(short t)
{
	return t == F_RDLCK ? NP_LOCK_TYPE_RDLCK : t == F_WRLCK ? NP_LOCK_TYPE_WRLCK : NP_LOCK_TYPE_UNLCK;
}

/* The kernel's lock request as the protocol's, from this client. */
static struct np_flock to_np_flock(const struct flock *lock)
{
	return (struct np_flock){.type = np_type(lock->l_type), .start = (uint64_t)lock->l_start,
				 .length = (uint64_t)lock->l_len, .proc_id = (uint32_t)lock->l_pid,
				 .client_id = client_id};
}

static void op_getlk(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi, struct flock *lock)
{
	(void)ino;
	struct nfs *fs = nfs_of(req);
	struct nfs_fh *fh = (struct nfs_fh *)(uintptr_t)fi->fh;
	struct np_flock l = to_np_flock(lock);
	char idbuf[256];
	int err;
	nfs_enter(fs);
	np_cfid *f = nfs_fh_fid(fs, fh);
	err = f ? np_cfid_getlock(f, &l, idbuf, sizeof idbuf) : -EIO;
	err = nfs_leave_fh(fs, err);
	if (err < 0) {
		fuse_reply_err(req, nfs_errno(err));
		return;
	}
	if (l.type == NP_LOCK_TYPE_UNLCK) {
		lock->l_type = F_UNLCK;
	} else {
		lock->l_type = l.type == NP_LOCK_TYPE_RDLCK ? F_RDLCK : F_WRLCK;
		lock->l_whence = SEEK_SET;
		lock->l_start = (off_t)l.start;
		lock->l_len = (off_t)l.length;
		lock->l_pid = (pid_t)l.proc_id;
		if (!lock->l_pid) {
			uint64_t s, e;
			range_of(lock, &s, &e);
			lock->l_pid = rec_holder(fs, fh, s, e, lock->l_type);
		}
	}
	fuse_reply_lock(req, lock);
}

static void op_setlk(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi, struct flock *lock, int sleep)
{
	(void)ino;
	struct nfs *fs = nfs_of(req);
	struct nfs_fh *fh = (struct nfs_fh *)(uintptr_t)fi->fh;
	struct np_flock l = to_np_flock(lock);
	long pause_us = 1000;
	for (;;) {
		int err;
		nfs_enter(fs);
		np_cfid *f = nfs_fh_fid(fs, fh);
		err = f ? np_cfid_lock(f, &l, sleep ? NP_LOCK_FLAGS_BLOCK : 0) : -EIO;
		err = nfs_leave_fh(fs, err);
		if (err < 0) {
			fuse_reply_err(req, nfs_errno(err));
			return;
		}
		if (err == NP_LOCK_SUCCESS) {
			if (l.type != NP_LOCK_TYPE_UNLCK)
				fh->has_locks = 1;
			rec_add(fs, fh, fi->lock_owner, lock);
			fuse_reply_err(req, 0);
			return;
		}
		if (err == NP_LOCK_ERROR) {
			fuse_reply_err(req, ENOLCK);
			return;
		}
		/* BLOCKED or GRACE */
		if (!sleep) {
			fuse_reply_err(req, EAGAIN);
			return;
		}
		if (fuse_req_interrupted(req)) {
			fuse_reply_err(req, EINTR);
			return;
		}
		struct timespec ts = {0, pause_us * 1000};
		nanosleep(&ts, NULL);
		if (pause_us < 100000)
			pause_us *= 2;
	}
}

void nfs_ops_lock(struct fuse_lowlevel_ops *o)
{
	if (!client_id[0] && gethostname(client_id, sizeof client_id - 1) != 0)
		strcpy(client_id, "ninepfs");
	o->getlk = op_getlk;
	o->setlk = op_setlk;
}

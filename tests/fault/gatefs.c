#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "gatefs.h"

struct np_fs_ops gatefs_ops;

static uint64_t gated_ops;
static unsigned jitter;
static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cv = PTHREAD_COND_INITIALIZER;
static int held;
static struct gatefs_counts cnt;
/* Where our marker lives in np_fid.priv: after the ramfs's own bytes. */
static size_t mark_idx;

enum { MARK_NONE = 0, MARK_BORN = 0x626f726e, MARK_DEAD = 0x64656164 };

static np_handler inner[NP_OP_COUNT];

static void reset_all(void);

static void gate(void)
{
	pthread_mutex_lock(&mu);
	cnt.entered++;
	cnt.inflight++;
	pthread_cond_broadcast(&cv);
	if (jitter) {
		pthread_mutex_unlock(&mu);
		usleep((useconds_t)(rand() % (int)jitter));
		pthread_mutex_lock(&mu);
	} else {
		while (held)
			pthread_cond_wait(&cv, &mu);
	}
	cnt.inflight--;
	pthread_mutex_unlock(&mu);
}

static void mark_born(np_fid *f)
{
	if (!f)
		return;
	pthread_mutex_lock(&mu);
	if (f->priv[mark_idx] != MARK_BORN) {
		f->priv[mark_idx] = MARK_BORN;
		cnt.born++;
	}
	pthread_mutex_unlock(&mu);
}

static void destroy_fid(np_fid *f)
{
	pthread_mutex_lock(&mu);
	uint64_t m = f->priv[mark_idx];
	if (m == MARK_BORN)
		cnt.destroyed++;
	else if (m == MARK_DEAD)
		cnt.double_destroy++;
	else
		cnt.destroyed_unborn++;
	f->priv[mark_idx] = MARK_DEAD;
	pthread_mutex_unlock(&mu);
	if (np_ramfs_ops.destroy_fid)
		np_ramfs_ops.destroy_fid(f);
}

/* One wrapper per op: gate if chosen, run the ramfs's handler, and record
 * a newfid the handler made live. */
static int run(np_req *r, int op)
{
	if (gated_ops & NP_OP_BIT(op))
		gate();
	int e = inner[op](r);
	if (e == 0 && (op == NP_OP_ATTACH || op == NP_OP_XATTRWALK ||
		       (op == NP_OP_WALK && r->newfid != r->fid &&
			r->ofcall.rwalk.nwqid == r->ifcall.twalk.nwname)))
		mark_born(r->newfid);
	return e;
}

#define W(name, op) static int w_##name(np_req *r) { return run(r, op); }
W(attach, NP_OP_ATTACH) W(walk, NP_OP_WALK) W(lopen, NP_OP_LOPEN) W(lcreate, NP_OP_LCREATE)
W(read, NP_OP_READ) W(write, NP_OP_WRITE) W(clunk, NP_OP_CLUNK) W(remove, NP_OP_REMOVE)
W(readdir, NP_OP_READDIR) W(getattr, NP_OP_GETATTR) W(setattr, NP_OP_SETATTR)
W(statfs, NP_OP_STATFS) W(symlink, NP_OP_SYMLINK) W(mknod, NP_OP_MKNOD) W(rename, NP_OP_RENAME)
W(readlink, NP_OP_READLINK) W(xattrwalk, NP_OP_XATTRWALK) W(xattrcreate, NP_OP_XATTRCREATE)
W(fsync, NP_OP_FSYNC) W(lock, NP_OP_LOCK) W(getlock, NP_OP_GETLOCK) W(link, NP_OP_LINK)
W(mkdir, NP_OP_MKDIR) W(renameat, NP_OP_RENAMEAT) W(unlinkat, NP_OP_UNLINKAT)
#undef W

void gatefs_init(np_ramfs *fs, uint64_t gated, unsigned jitter_us)
{
	(void)fs;
	const struct np_fs_ops *o = &np_ramfs_ops;
	gated_ops = gated;
	jitter = jitter_us;
	gatefs_ops = *o;
	mark_idx = (o->fid_priv_size + 7) / 8;
	gatefs_ops.fid_priv_size = (mark_idx + 1) * 8;
	gatefs_ops.inline_ops = o->inline_ops & ~gated;
	gatefs_ops.destroy_fid = destroy_fid;
#define SET(name, op) do { inner[op] = o->name; if (o->name) gatefs_ops.name = w_##name; } while (0)
	SET(attach, NP_OP_ATTACH); SET(walk, NP_OP_WALK); SET(lopen, NP_OP_LOPEN);
	SET(lcreate, NP_OP_LCREATE); SET(read, NP_OP_READ); SET(write, NP_OP_WRITE);
	SET(clunk, NP_OP_CLUNK); SET(remove, NP_OP_REMOVE); SET(readdir, NP_OP_READDIR);
	SET(getattr, NP_OP_GETATTR); SET(setattr, NP_OP_SETATTR); SET(statfs, NP_OP_STATFS);
	SET(symlink, NP_OP_SYMLINK); SET(mknod, NP_OP_MKNOD); SET(rename, NP_OP_RENAME);
	SET(readlink, NP_OP_READLINK); SET(xattrwalk, NP_OP_XATTRWALK);
	SET(xattrcreate, NP_OP_XATTRCREATE); SET(fsync, NP_OP_FSYNC); SET(lock, NP_OP_LOCK);
	SET(getlock, NP_OP_GETLOCK); SET(link, NP_OP_LINK); SET(mkdir, NP_OP_MKDIR);
	SET(renameat, NP_OP_RENAMEAT); SET(unlinkat, NP_OP_UNLINKAT);
#undef SET
	gatefs_hold(0);
	reset_all();
}

void gatefs_hold(int hold)
{
	pthread_mutex_lock(&mu);
	held = hold;
	pthread_cond_broadcast(&cv);
	pthread_mutex_unlock(&mu);
}

long gatefs_wait_entered(long n, int timeout_ms)
{
	struct timespec dl;
	clock_gettime(CLOCK_REALTIME, &dl);
	dl.tv_sec += timeout_ms / 1000;
	dl.tv_nsec += (long)(timeout_ms % 1000) * 1000000;
	if (dl.tv_nsec >= 1000000000) {
		dl.tv_sec++;
		dl.tv_nsec -= 1000000000;
	}
	pthread_mutex_lock(&mu);
	while (cnt.entered < n && pthread_cond_timedwait(&cv, &mu, &dl) == 0)
		;
	long e = cnt.entered;
	pthread_mutex_unlock(&mu);
	return e;
}

void gatefs_counts(struct gatefs_counts *c)
{
	pthread_mutex_lock(&mu);
	*c = cnt;
	pthread_mutex_unlock(&mu);
}

void gatefs_reset_entered(void)
{
	pthread_mutex_lock(&mu);
	cnt.entered = 0;
	pthread_mutex_unlock(&mu);
}

static void reset_all(void)
{
	pthread_mutex_lock(&mu);
	memset(&cnt, 0, sizeof cnt);
	pthread_mutex_unlock(&mu);
}

/* ramfs inodes: allocation, reference counting, qids, times, permissions. */
#include <dirent.h>
#include <errno.h>
#include <stdlib.h>

#include "ramfs_int.h"

void ramfs_now(struct timespec *ts)
{
	clock_gettime(CLOCK_REALTIME, ts);
}

struct rnode *rnode_new(np_ramfs *fs, enum rkind kind, uint32_t mode, uint32_t uid, uint32_t gid)
{
	if (fs->max_nodes && fs->nodes >= fs->max_nodes)
		return NULL;
	struct rnode *n = calloc(1, sizeof(*n));
	if (!n)
		return NULL;
	n->ino = fs->next_ino++;
	n->kind = kind;
	n->mode = mode;
	n->uid = uid;
	n->gid = gid;
	ramfs_now(&n->btime);
	n->atime = n->mtime = n->ctime = n->btime;
	if (kind == RK_DIR)
		n->dir.next_cookie = RAMFS_COOKIE_FIRST;
	n->all_next = fs->all.all_next;
	n->all_prev = &fs->all;
	fs->all.all_next->all_prev = n;
	fs->all.all_next = n;
	fs->nodes++;
	return n;
}

void rnode_destroy(np_ramfs *fs, struct rnode *n)
{
	n->all_prev->all_next = n->all_next;
	n->all_next->all_prev = n->all_prev;
	switch (n->kind) {
	case RK_REG: rdata_free(fs, n); break;
	case RK_DIR: rdir_free(n); break;
	case RK_LNK: free(n->target); break;
	case RK_SYNTH: free(n->synth.owned); break;
	case RK_SPECIAL: break;
	}
	rxattr_free_all(n);
	rlock_free_all(n);
	fs->nodes--;
	free(n);
}

void rnode_ref(struct rnode *n)
{
	n->refs++;
}

void rnode_maybe_free(np_ramfs *fs, struct rnode *n)
{
	if (n->refs == 0 && n->nlink == 0)
		rnode_destroy(fs, n);
}

void rnode_unref(np_ramfs *fs, struct rnode *n)
{
	n->refs--;
	rnode_maybe_free(fs, n);
}

np_qid rnode_qid(const struct rnode *n)
{
	np_qid q;
	q.type = n->kind == RK_DIR ? NP_QTDIR : n->kind == RK_LNK ? NP_QTSYMLINK : NP_QTFILE;
	q.version = n->version;
	q.path = n->ino;
	return q;
}

void rnode_touch(struct rnode *n, int data)
{
	n->version++;
	ramfs_now(&n->ctime);
	if (data)
		n->mtime = n->ctime;
}

uint8_t rnode_dtype(const struct rnode *n)
{
	switch (n->mode & S_IFMT) {
	case S_IFDIR: return DT_DIR;
	case S_IFLNK: return DT_LNK;
	case S_IFCHR: return DT_CHR;
	case S_IFBLK: return DT_BLK;
	case S_IFIFO: return DT_FIFO;
	case S_IFSOCK: return DT_SOCK;
	default: return DT_REG;
	}
}

int rnode_access(const np_ramfs *fs, const struct rnode *n, uint32_t uid, int want)
{
	if (fs->noperm || want == 0)
		return 0;
	if (uid == 0)
		return 0;
	uint32_t bits = uid == n->uid ? (n->mode >> 6) & 7 : n->mode & 7;
	return ((uint32_t)want & ~bits) ? EACCES : 0;
}

int rnode_may_delete(const np_ramfs *fs, const struct rnode *dir, const struct rnode *victim, uint32_t uid)
{
	int err = rnode_access(fs, dir, uid, 3);
	if (err)
		return err;
	if (!fs->noperm && uid != 0 && (dir->mode & S_ISVTX) && uid != dir->uid && uid != victim->uid)
		return EPERM;
	return 0;
}

/* The inode table: one struct (and one walked fid) per file the kernel
 * holds, found by qid.path so hard links and repeated lookups share it,
 * counted by the kernel's lookups and freed (fid clunked) on the last
 * forget.  Each inode also remembers its last (parent, name) so that a
 * reconnect can walk it again. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "ninepfs.h"

#define NBUCKETS (1u << 16)

int nfs_itable_init(struct nfs *fs)
{
	fs->nbuckets = NBUCKETS;
	fs->qhash = calloc(NBUCKETS, sizeof *fs->qhash);
	fs->nhash = calloc(NBUCKETS, sizeof *fs->nhash);
	if (!fs->qhash || !fs->nhash)
		return -ENOMEM;
	fs->root.refs = 1; /* never released */
	fs->root.prev = fs->root.next = &fs->root;
	return 0;
}

static size_t qbucket(const struct nfs *fs, uint64_t qpath)
{
	return (size_t)((qpath * 0x9e3779b97f4a7c15ull) >> 40) & (fs->nbuckets - 1);
}

static size_t nbucket(const struct nfs *fs, const struct nfs_inode *parent, const char *name)
{
	uint64_t h = 1469598103934665603ull ^ (uint64_t)(uintptr_t)parent;
	for (const unsigned char *p = (const unsigned char *)name; *p; p++)
		h = (h ^ *p) * 1099511628211ull;
	return (size_t)(h ^ (h >> 29)) & (fs->nbuckets - 1);
}

struct nfs_inode *nfs_inode_get(struct nfs *fs, fuse_ino_t ino)
{
	return ino == FUSE_ROOT_ID ? &fs->root : (struct nfs_inode *)(uintptr_t)ino;
}

fuse_ino_t nfs_inode_id(struct nfs *fs, const struct nfs_inode *i)
{
	return i == &fs->root ? FUSE_ROOT_ID : (fuse_ino_t)(uintptr_t)i;
}

static void qunhash(struct nfs *fs, struct nfs_inode *i)
{
	if (!i->hashed)
		return;
	struct nfs_inode **pp = &fs->qhash[qbucket(fs, i->qpath)];
	while (*pp && *pp != i)
		pp = &(*pp)->qnext;
	if (*pp)
		*pp = i->qnext;
	i->hashed = 0;
}

/* Detach the name; returns the parent whose reference the caller drops. */
static struct nfs_inode *nunhash(struct nfs *fs, struct nfs_inode *i)
{
	if (!i->name)
		return NULL;
	struct nfs_inode **pp = &fs->nhash[nbucket(fs, i->parent, i->name)];
	while (*pp && *pp != i)
		pp = &(*pp)->nnext;
	if (*pp)
		*pp = i->nnext;
	free(i->name);
	i->name = NULL;
	struct nfs_inode *p = i->parent;
	i->parent = NULL;
	return p;
}

static struct nfs_inode *nfind(struct nfs *fs, struct nfs_inode *parent, const char *name)
{
	for (struct nfs_inode *i = fs->nhash[nbucket(fs, parent, name)]; i; i = i->nnext)
		if (i->parent == parent && strcmp(i->name, name) == 0)
			return i;
	return NULL;
}

/* Drop one reference; inodes that reach zero (and the parents they then
 * release) go onto *dead for the caller to clunk and free unlocked. */
static void release(struct nfs *fs, struct nfs_inode *i, struct nfs_inode **dead)
{
	while (i && --i->refs == 0) {
		qunhash(fs, i);
		struct nfs_inode *p = nunhash(fs, i);
		i->prev->next = i->next;
		i->next->prev = i->prev;
		fs->ninodes--;
		i->next = *dead;
		*dead = i;
		i = p;
	}
}

static void bury(struct nfs_inode *dead)
{
	while (dead) {
		struct nfs_inode *n = dead->next;
		if (dead->fid)
			np_cfid_clunk(dead->fid);
		free(dead);
		dead = n;
	}
}

/* Give i the name (parent, name); a failed strdup just leaves it nameless
 * (only reconnect needs names). */
static void set_name(struct nfs *fs, struct nfs_inode *i, struct nfs_inode *parent, const char *name,
		     struct nfs_inode **dead)
{
	if (i->parent == parent && i->name && strcmp(i->name, name) == 0)
		return;
	struct nfs_inode *old = nunhash(fs, i);
	/* Another inode under this name is stale now. */
	struct nfs_inode *prev = nfind(fs, parent, name);
	if (prev)
		release(fs, nunhash(fs, prev), dead);
	i->name = strdup(name);
	if (i->name) {
		i->parent = parent;
		parent->refs++;
		size_t b = nbucket(fs, parent, name);
		i->nnext = fs->nhash[b];
		fs->nhash[b] = i;
	}
	release(fs, old, dead);
}

static int same_file(const struct nfs_inode *i, const struct np_attr *a)
{
	if (i->type != (a->mode & S_IFMT))
		return 0;
	if ((a->valid & NP_GETATTR_BTIME) &&
	    (i->btime.tv_sec != a->btime.tv_sec || i->btime.tv_nsec != a->btime.tv_nsec))
		return 0;
	if ((a->valid & NP_GETATTR_GEN) && i->gen != a->gen)
		return 0;
	return 1;
}

struct nfs_inode *nfs_inode_enter(struct nfs *fs, struct nfs_inode *parent, const char *name,
				  np_cfid *fid, const struct np_attr *a)
{
	struct nfs_inode *dead = NULL, *i;
	uint64_t qpath = fid->qid.path;
	pthread_mutex_lock(&fs->itab_lock);
	if (qpath == fs->root.qpath && fs->root.fid) {
		/* A name for the root (e.g. ".." of a top directory). */
		i = &fs->root;
		i->nlookup++;
		dead = NULL;
		pthread_mutex_unlock(&fs->itab_lock);
		np_cfid_clunk(fid);
		return i;
	}
	for (i = fs->qhash[qbucket(fs, qpath)]; i; i = i->qnext)
		if (i->qpath == qpath)
			break;
	if (i && (!i->fid || !same_file(i, a))) {
		/* qid.path reused by a new file: the old inode lives on
		 * until forgotten, but is no longer found. */
		qunhash(fs, i);
		i = NULL;
	}
	if (i) {
		if (i->nlookup++ == 0)
			i->refs++;
		set_name(fs, i, parent, name, &dead);
		pthread_mutex_unlock(&fs->itab_lock);
		np_cfid_clunk(fid);
		bury(dead);
		return i;
	}
	i = calloc(1, sizeof *i);
	if (!i) {
		pthread_mutex_unlock(&fs->itab_lock);
		np_cfid_clunk(fid);
		return NULL;
	}
	i->qpath = qpath;
	i->qtype = fid->qid.type;
	i->type = a->mode & S_IFMT;
	i->fid = fid;
	i->nlookup = 1;
	i->refs = 1;
	i->btime = a->btime;
	i->gen = a->gen;
	size_t b = qbucket(fs, qpath);
	i->qnext = fs->qhash[b];
	fs->qhash[b] = i;
	i->hashed = 1;
	i->next = fs->root.next;
	i->prev = &fs->root;
	fs->root.next->prev = i;
	fs->root.next = i;
	fs->ninodes++;
	set_name(fs, i, parent, name, &dead);
	pthread_mutex_unlock(&fs->itab_lock);
	bury(dead);
	return i;
}

void nfs_inode_ref(struct nfs *fs, struct nfs_inode *i)
{
	pthread_mutex_lock(&fs->itab_lock);
	if (i->nlookup++ == 0 && i != &fs->root)
		i->refs++;
	pthread_mutex_unlock(&fs->itab_lock);
}

void nfs_inode_forget(struct nfs *fs, struct nfs_inode *i, uint64_t n)
{
	struct nfs_inode *dead = NULL;
	pthread_mutex_lock(&fs->itab_lock);
	if (i == &fs->root) {
		i->nlookup = i->nlookup > n ? i->nlookup - n : 0;
	} else if (i->nlookup) {
		i->nlookup = i->nlookup > n ? i->nlookup - n : 0;
		if (i->nlookup == 0)
			release(fs, i, &dead);
	}
	pthread_mutex_unlock(&fs->itab_lock);
	bury(dead);
}

void nfs_inode_unlinked(struct nfs *fs, struct nfs_inode *parent, const char *name)
{
	struct nfs_inode *dead = NULL;
	pthread_mutex_lock(&fs->itab_lock);
	struct nfs_inode *i = nfind(fs, parent, name);
	if (i)
		release(fs, nunhash(fs, i), &dead);
	pthread_mutex_unlock(&fs->itab_lock);
	bury(dead);
}

void nfs_inode_renamed(struct nfs *fs, struct nfs_inode *op, const char *on, struct nfs_inode *np,
		       const char *nn)
{
	struct nfs_inode *dead = NULL;
	pthread_mutex_lock(&fs->itab_lock);
	struct nfs_inode *i = nfind(fs, op, on);
	if (i) {
		i->refs++; /* keep it while its old parent link goes */
		set_name(fs, i, np, nn, &dead);
		release(fs, i, &dead);
	} else {
		struct nfs_inode *t = nfind(fs, np, nn);
		if (t)
			release(fs, nunhash(fs, t), &dead);
	}
	pthread_mutex_unlock(&fs->itab_lock);
	bury(dead);
}

static int depth(const struct nfs_inode *i)
{
	int d = 0;
	for (; i && d < 4096; i = i->parent)
		d++;
	return d;
}

static int by_depth(const void *a, const void *b)
{
	int da = depth(*(struct nfs_inode *const *)a), db = depth(*(struct nfs_inode *const *)b);
	return (da > db) - (da < db);
}

void nfs_itable_rewalk(struct nfs *fs, np_cfid *newroot)
{
	pthread_mutex_lock(&fs->itab_lock);
	if (fs->root.fid)
		np_cfid_clunk(fs->root.fid);
	fs->root.fid = newroot;
	size_t n = 0;
	struct nfs_inode **all = malloc((fs->ninodes + 1) * sizeof *all);
	for (struct nfs_inode *i = fs->root.next; i != &fs->root; i = i->next) {
		if (i->fid) {
			np_cfid_clunk(i->fid); /* the old connection is down: frees only */
			i->fid = NULL;
		}
		if (all)
			all[n++] = i;
	}
	if (!all) {
		pthread_mutex_unlock(&fs->itab_lock);
		return;
	}
	/* Parents before children, so each walk starts from a live fid. */
	qsort(all, n, sizeof *all, by_depth);
	for (size_t k = 0; k < n; k++) {
		struct nfs_inode *i = all[k];
		if (!i->hashed || !i->name || !i->parent || !i->parent->fid)
			continue;
		const char *names[1] = {i->name};
		np_cfid *f;
		if (np_cfid_walk(i->parent->fid, 1, names, &f) < 0)
			continue;
		if (f->qid.path != i->qpath) {
			np_cfid_clunk(f);
			continue;
		}
		i->fid = f;
	}
	pthread_mutex_unlock(&fs->itab_lock);
	free(all);
}

void nfs_itable_free(struct nfs *fs)
{
	struct nfs_inode *i = fs->root.next;
	while (i && i != &fs->root) {
		struct nfs_inode *n = i->next;
		if (i->fid)
			np_cfid_clunk(i->fid);
		free(i->name);
		free(i);
		i = n;
	}
	fs->root.next = fs->root.prev = &fs->root;
	free(fs->qhash);
	free(fs->nhash);
	fs->qhash = fs->nhash = NULL;
}

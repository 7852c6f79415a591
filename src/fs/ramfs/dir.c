/* ramfs directories: a name hash for lookups and an array sorted by cookie
 * for readdir.  Every entry gets the directory's next cookie when it is
 * added, and cookies never repeat, so a readdir offset stays meaningful
 * however the directory changes between calls. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "ramfs_int.h"

static uint32_t name_hash(const char *s, uint16_t len)
{
	uint32_t h = 2166136261u; /* FNV-1a */
	for (uint16_t i = 0; i < len; i++) {
		h ^= (uint8_t)s[i];
		h *= 16777619u;
	}
	return h;
}

int ramfs_name_ok(const char *name, uint16_t len)
{
	if (len == 0 || (len == 1 && name[0] == '.') || (len == 2 && name[0] == '.' && name[1] == '.'))
		return EINVAL;
	if (len > RAMFS_NAME_MAX)
		return ENAMETOOLONG;
	if (memchr(name, '/', len) || memchr(name, '\0', len))
		return EINVAL;
	return 0;
}

struct rdirent *rdir_lookup(const struct rnode *d, const char *name, uint16_t len)
{
	const struct rdir *dir = &d->dir;
	if (!dir->nbuckets)
		return NULL;
	uint32_t h = name_hash(name, len);
	for (struct rdirent *e = dir->buckets[h & (dir->nbuckets - 1)]; e; e = e->hnext)
		if (e->hash == h && e->namelen == len && memcmp(e->name, name, len) == 0)
			return e;
	return NULL;
}

static int rehash(struct rdir *dir, size_t nb)
{
	struct rdirent **b = calloc(nb, sizeof(*b));
	if (!b)
		return ENOMEM;
	for (size_t i = 0; i < dir->n; i++) {
		struct rdirent *e = dir->ents[i];
		e->hnext = b[e->hash & (nb - 1)];
		b[e->hash & (nb - 1)] = e;
	}
	free(dir->buckets);
	dir->buckets = b;
	dir->nbuckets = nb;
	return 0;
}

int rdir_add(struct rnode *d, const char *name, uint16_t len, struct rnode *child)
{
	struct rdir *dir = &d->dir;
	if (dir->n == dir->cap) {
		size_t ncap = dir->cap ? dir->cap * 2 : 8;
		struct rdirent **ne = realloc(dir->ents, ncap * sizeof(*ne));
		if (!ne)
			return ENOMEM;
		dir->ents = ne;
		dir->cap = ncap;
	}
	if (dir->n + 1 > dir->nbuckets) {
		int err = rehash(dir, dir->nbuckets ? dir->nbuckets * 2 : 8);
		if (err)
			return err;
	}
	struct rdirent *e = malloc(sizeof(*e) + len + 1u);
	if (!e)
		return ENOMEM;
	memcpy(e->name, name, len);
	e->name[len] = '\0';
	e->namelen = len;
	e->hash = name_hash(name, len);
	e->node = child;
	e->cookie = dir->next_cookie++;
	size_t b = e->hash & (dir->nbuckets - 1);
	e->hnext = dir->buckets[b];
	dir->buckets[b] = e;
	dir->ents[dir->n++] = e;
	return 0;
}

size_t rdir_first_after(const struct rnode *d, uint64_t after)
{
	const struct rdir *dir = &d->dir;
	size_t lo = 0, hi = dir->n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (dir->ents[mid]->cookie <= after)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

void rdir_del(struct rnode *d, struct rdirent *e)
{
	struct rdir *dir = &d->dir;
	struct rdirent **pp = &dir->buckets[e->hash & (dir->nbuckets - 1)];
	while (*pp != e)
		pp = &(*pp)->hnext;
	*pp = e->hnext;
	size_t i = rdir_first_after(d, e->cookie - 1);
	memmove(&dir->ents[i], &dir->ents[i + 1], (dir->n - i - 1) * sizeof(*dir->ents));
	dir->n--;
	free(e);
}

struct rdirent *rdir_find_node(const struct rnode *d, const struct rnode *child)
{
	for (size_t i = 0; i < d->dir.n; i++)
		if (d->dir.ents[i]->node == child)
			return d->dir.ents[i];
	return NULL;
}

void rdir_free(struct rnode *d)
{
	for (size_t i = 0; i < d->dir.n; i++)
		free(d->dir.ents[i]);
	free(d->dir.ents);
	free(d->dir.buckets);
	d->dir.ents = NULL;
	d->dir.buckets = NULL;
	d->dir.n = d->dir.cap = d->dir.nbuckets = 0;
}

int ramfs_link_entry(np_ramfs *fs, struct rnode *d, const char *name, uint16_t len, struct rnode *child)
{
	(void)fs;
	int err = rdir_add(d, name, len, child);
	if (err)
		return err;
	child->nlink++;
	if (child->kind == RK_DIR) {
		child->nlink++; /* its own "." */
		d->nlink++;     /* its ".." */
	}
	child->parent = d;
	rnode_touch(d, 1);
	return 0;
}

void ramfs_unlink_entry(np_ramfs *fs, struct rnode *d, struct rdirent *e)
{
	struct rnode *child = e->node;
	rdir_del(d, e);
	if (child->kind == RK_DIR) {
		child->nlink = 0;
		d->nlink--;
	} else {
		child->nlink--;
	}
	if (child->parent == d) {
		/* another link may still be in d: keep pointing at it then */
		child->parent = (child->kind != RK_DIR && child->nlink && rdir_find_node(d, child)) ? d : NULL;
	}
	rnode_touch(d, 1);
	ramfs_now(&child->ctime);
	child->version++;
	rnode_maybe_free(fs, child);
}

/* Per-connection fid table: a chained hash that doubles as it fills (so a
 * million fids stay O(1)), fed from a small per-connection pool so steady
 * walk/clunk traffic does not touch the heap.  Loop thread only. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "srv.h"

#define FID_POOL_MAX 64

static inline uint32_t fid_hash(uint32_t fid)
{
	/* Clients allocate fids sequentially; a multiplicative hash spreads
	 * them without clustering. */
	return fid * 2654435761u;
}

struct np_sfid *np_fid_lookup(struct np_conn *c, uint32_t fid)
{
	if (!c->fidtab)
		return NULL;
	for (struct np_sfid *f = c->fidtab[fid_hash(fid) & c->fidmask]; f; f = f->hnext)
		if (f->pub.fid == fid)
			return f;
	return NULL;
}

static int fid_grow(struct np_conn *c)
{
	uint32_t n = c->fidtab ? (c->fidmask + 1) * 2 : 16;
	struct np_sfid **t = calloc(n, sizeof *t);
	if (!t)
		return -ENOMEM;
	if (c->fidtab) {
		for (uint32_t i = 0; i <= c->fidmask; i++) {
			struct np_sfid *f = c->fidtab[i], *nx;
			for (; f; f = nx) {
				nx = f->hnext;
				uint32_t b = fid_hash(f->pub.fid) & (n - 1);
				f->hnext = t[b];
				t[b] = f;
			}
		}
		free(c->fidtab);
	}
	c->fidtab = t;
	c->fidmask = n - 1;
	return 0;
}

/* A new fid in the table, not yet live (the request creating it is still
 * running).  One reference, owned by the table. */
struct np_sfid *np_fid_create(struct np_conn *c, uint32_t fid, int *err)
{
	np_server *s = c->srv;
	if (fid == NP_NOFID) {
		*err = EBADF;
		return NULL;
	}
	if (np_fid_lookup(c, fid)) {
		*err = EBADF; /* fid in use */
		return NULL;
	}
	if (c->nfids >= s->o.max_fids) {
		*err = EMFILE;
		return NULL;
	}
	if ((!c->fidtab || c->nfids >= (c->fidmask + 1) * 2) && fid_grow(c) < 0 && !c->fidtab) {
		*err = ENOMEM;
		return NULL;
	}
	struct np_sfid *f = c->fidfree;
	if (f) {
		c->fidfree = f->hnext;
		c->nfidfree--;
		memset(f, 0, s->fid_size);
	} else {
		f = calloc(1, s->fid_size);
		if (!f) {
			*err = ENOMEM;
			return NULL;
		}
	}
	f->pub.fid = fid;
	f->pub.conn = c;
	f->pub.uid = NP_NONUNAME;
	f->refs = 1;
	uint32_t b = fid_hash(fid) & c->fidmask;
	f->hnext = c->fidtab[b];
	c->fidtab[b] = f;
	c->nfids++;
	return f;
}

void np_fid_unhash(struct np_conn *c, struct np_sfid *f)
{
	struct np_sfid **pp = &c->fidtab[fid_hash(f->pub.fid) & c->fidmask];
	for (; *pp; pp = &(*pp)->hnext)
		if (*pp == f) {
			*pp = f->hnext;
			f->hnext = NULL;
			c->nfids--;
			return;
		}
}

/* Drop one reference; the last one lets the backend release its state. */
void np_fid_put(struct np_conn *c, struct np_sfid *f)
{
	if (--f->refs > 0)
		return;
	if (c->srv->ops->destroy_fid)
		c->srv->ops->destroy_fid(&f->pub);
	free(f->name);
	f->name = NULL;
	if (c->nfidfree < FID_POOL_MAX) {
		f->hnext = c->fidfree;
		c->fidfree = f;
		c->nfidfree++;
	} else {
		free(f);
	}
}

/* Tversion and disconnect: every fid goes, each exactly once. */
void np_fid_clunk_all(struct np_conn *c)
{
	if (!c->fidtab)
		return;
	for (uint32_t i = 0; i <= c->fidmask; i++) {
		struct np_sfid *f;
		while ((f = c->fidtab[i])) {
			c->fidtab[i] = f->hnext;
			f->hnext = NULL;
			c->nfids--;
			np_fid_put(c, f);
		}
	}
}

void np_fid_pool_trim(struct np_conn *c, uint32_t keep)
{
	while (c->nfidfree > keep) {
		struct np_sfid *f = c->fidfree;
		c->fidfree = f->hnext;
		c->nfidfree--;
		free(f);
	}
}

void np_fid_table_free(struct np_conn *c)
{
	np_fid_clunk_all(c);
	np_fid_pool_trim(c, 0);
	free(c->fidtab);
	c->fidtab = NULL;
	c->fidmask = 0;
}

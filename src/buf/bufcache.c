/* The per-connection message buffer cache (include/ninep/buf.h).
 *
 * Each buffer is one heap block: the np_buf header followed by its storage.
 * The owner thread keeps one LIFO free list per size class (LIFO so the
 * buffer handed out next is the one most likely still in the CPU cache).
 * Other threads return buffers through a Treiber stack: they only ever push,
 * and the owner takes the whole stack with a single atomic exchange, so no
 * node is popped individually and the ABA problem cannot arise. */
#include <errno.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>

#include "ninep/buf.h"
#include "poison.h"

enum { NP_BUF_CLS_SMALL = 0, NP_BUF_CLS_LARGE = 1, NP_BUF_NCLS = 2 };

/* np_buf.state: distinct non-zero values, so a put of something that never
 * came from np_buf_get() is likely to be recognised too. */
enum {
	NP_BUF_INUSE = 0x1b,  /* handed out */
	NP_BUF_CACHED = 0xca, /* on a free list */
	NP_BUF_REMOTE = 0x2e, /* on the remote-return stack */
};

#define NP_BUF_DEFAULT_MAX_CACHED 32u
#define NP_BUF_DEFAULT_IDLE_KEEP 2u

/* Storage starts after the header, 16-byte aligned like malloc's result. */
#define NP_BUF_HDR ((sizeof(np_buf) + 15u) & ~(size_t)15u)

struct np_buf_freelist {
	np_buf *head;
	uint32_t n;
};

struct np_bufcache {
	/* Written by other threads: kept away from the owner's fields so remote
	 * pushes do not keep stealing the owner's cache line. */
	_Atomic(np_buf *) remote;
	char pad[64 - sizeof(np_buf *)];

	uint32_t msize;
	enum np_bufcache_mode mode;
	uint32_t max_cached;
	uint32_t idle_keep;
	struct np_buf_freelist free[NP_BUF_NCLS];
	struct np_bufcache_stats st;
};

static void np_buf_die(const char *what, const np_buf *b)
{
	fprintf(stderr, "ninep: np_buf %p: %s\n", (const void *)b, what);
	abort();
}

static uint32_t np_buf_cls_cap(const struct np_bufcache *c, int cls)
{
	return cls == NP_BUF_CLS_SMALL ? NP_BUF_SMALL : c->msize;
}

static np_buf *np_buf_alloc(struct np_bufcache *c, int cls)
{
	uint32_t cap = np_buf_cls_cap(c, cls);
	np_buf *b = malloc(NP_BUF_HDR + cap);

	if (!b)
		return NULL;
	b->data = (uint8_t *)b + NP_BUF_HDR;
	b->cap = cap;
	b->cache = c;
	b->cls = (uint8_t)cls;
	c->st.misses++;
	c->st.bytes_current += NP_BUF_HDR + cap;
	if (c->st.bytes_current > c->st.bytes_peak)
		c->st.bytes_peak = c->st.bytes_current;
	return b;
}

/* The ablation modes: one malloc per message, of the size asked for, the
 * next power of two (never below 64 bytes), or msize. */
static np_buf *np_buf_alloc_uncached(struct np_bufcache *c, int cls, size_t need)
{
	size_t cap = need < 64 ? 64 : need;
	if (c->mode == NP_BUFCACHE_MALLOC_MSIZE) {
		cap = c->msize;
	} else if (c->mode == NP_BUFCACHE_MALLOC_POW2) {
		size_t p = 64;
		while (p < cap)
			p <<= 1;
		cap = p;
	}
	np_buf *b = malloc(NP_BUF_HDR + cap);
	if (!b)
		return NULL;
	b->data = (uint8_t *)b + NP_BUF_HDR;
	b->cap = (uint32_t)cap;
	b->cache = c;
	b->cls = (uint8_t)cls;
	c->st.misses++;
	c->st.bytes_current += NP_BUF_HDR + cap;
	if (c->st.bytes_current > c->st.bytes_peak)
		c->st.bytes_peak = c->st.bytes_current;
	return b;
}

static void np_buf_release(struct np_bufcache *c, np_buf *b)
{
	c->st.frees++;
	c->st.bytes_current -= NP_BUF_HDR + b->cap;
	np_buf_unpoison(b);
	free(b);
}

/* A returned buffer (already poisoned in debug mode): cache it, or free it
 * when its class is full or it is a large buffer of a previous msize. */
static void np_buf_recycle(struct np_bufcache *c, np_buf *b)
{
	struct np_buf_freelist *fl = &c->free[b->cls];

	c->st.in_use--;
	if (c->mode != NP_BUFCACHE_CACHED || fl->n >= c->max_cached ||
	    b->cap != np_buf_cls_cap(c, b->cls)) {
		np_buf_release(c, b);
		return;
	}
	b->state = NP_BUF_CACHED;
	b->next = fl->head;
	fl->head = b;
	fl->n++;
}

/* Take everything other threads returned since the last drain. */
static void np_bufcache_drain(struct np_bufcache *c)
{
	np_buf *b = atomic_exchange_explicit(&c->remote, NULL, memory_order_acquire);

	while (b) {
		np_buf *next = b->next;
		np_buf_recycle(c, b);
		b = next;
	}
}

static void np_buf_freelist_release(struct np_bufcache *c, struct np_buf_freelist *fl, uint32_t keep)
{
	np_buf **link = &fl->head;
	uint32_t i;

	/* Keep the first `keep` entries: the most recently returned ones. */
	for (i = 0; i < keep && *link; i++)
		link = &(*link)->next;
	while (*link) {
		np_buf *b = *link;
		*link = b->next;
		fl->n--;
		np_buf_release(c, b);
	}
}

struct np_bufcache *np_bufcache_new(uint32_t msize, const struct np_bufcache_opts *opts)
{
	struct np_bufcache *c;

	if (msize < NP_MIN_MSIZE) {
		errno = EINVAL;
		return NULL;
	}
	c = calloc(1, sizeof(*c));
	if (!c)
		return NULL;
	atomic_init(&c->remote, NULL);
	c->msize = msize;
	c->max_cached = NP_BUF_DEFAULT_MAX_CACHED;
	c->idle_keep = NP_BUF_DEFAULT_IDLE_KEEP;
	if (opts) {
		if (opts->max_cached)
			c->max_cached = opts->max_cached;
		c->idle_keep = opts->idle_keep;
	}
	if (c->idle_keep > c->max_cached)
		c->idle_keep = c->max_cached;
	return c;
}

void np_bufcache_set_msize(struct np_bufcache *c, uint32_t msize)
{
	if (msize == c->msize)
		return;
	c->msize = msize;
	/* Large buffers in use still carry the old cap; np_buf_recycle() frees
	 * them on return because their cap no longer matches. */
	np_buf_freelist_release(c, &c->free[NP_BUF_CLS_LARGE], 0);
}

uint32_t np_bufcache_msize(const struct np_bufcache *c)
{
	return c->msize;
}

void np_bufcache_free(struct np_bufcache *c)
{
	int cls;

	if (!c)
		return;
	np_bufcache_drain(c);
#ifdef NP_BUF_DEBUG
	if (c->st.in_use) {
		fprintf(stderr, "ninep: np_bufcache_free(%p): %u buffers still in use\n",
			(void *)c, c->st.in_use);
		abort();
	}
#endif
	for (cls = 0; cls < NP_BUF_NCLS; cls++)
		np_buf_freelist_release(c, &c->free[cls], 0);
	free(c);
}

np_buf *np_buf_get(struct np_bufcache *c, size_t need)
{
	struct np_buf_freelist *fl;
	np_buf *b;
	int cls;

	if (need > c->msize) {
		errno = EMSGSIZE; /* tells it apart from ENOMEM */
		return NULL;
	}
	/* A relaxed peek keeps the common no-returns case to a plain load. */
	if (atomic_load_explicit(&c->remote, memory_order_relaxed))
		np_bufcache_drain(c);
	/* Class by need alone: with msize <= NP_BUF_SMALL every request fits a
	 * small buffer and the large class simply stays empty. */
	cls = need <= NP_BUF_SMALL ? NP_BUF_CLS_SMALL : NP_BUF_CLS_LARGE;
	fl = &c->free[cls];
	b = fl->head;
	if (c->mode != NP_BUFCACHE_CACHED) {
		b = np_buf_alloc_uncached(c, cls, need);
		if (!b)
			return NULL;
	} else if (b) {
		if (b->state != NP_BUF_CACHED)
			np_buf_die("free list corrupted (buffer on it is not cached)", b);
		fl->head = b->next;
		fl->n--;
		c->st.hits++;
		np_buf_unpoison_check(b);
	} else {
		b = np_buf_alloc(c, cls);
		if (!b)
			return NULL;
	}
	b->state = NP_BUF_INUSE;
	b->len = 0;
	b->off = 0;
	b->next = NULL;
	c->st.gets++;
	c->st.in_use++;
	return b;
}

/* Common to both puts: reject what is not a handed-out buffer. */
static void np_buf_check_inuse(const np_buf *b)
{
	switch (b->state) {
	case NP_BUF_INUSE:
		return;
	case NP_BUF_CACHED:
	case NP_BUF_REMOTE:
		np_buf_die("returned twice (double put)", b);
		break;
	default:
		np_buf_die("returned but not a buffer from np_buf_get() (bad state)", b);
	}
}

void np_buf_put(np_buf *b)
{
	if (!b)
		return;
	np_buf_check_inuse(b);
	np_buf_poison(b);
	np_buf_recycle(b->cache, b);
}

void np_buf_put_remote(np_buf *b)
{
	struct np_bufcache *c;
	np_buf *head;

	if (!b)
		return;
	np_buf_check_inuse(b);
	b->state = NP_BUF_REMOTE;
	/* Poisoned here rather than at drain time, so a late write by this
	 * thread is caught at once; the header (b->next) is never poisoned. */
	np_buf_poison(b);
	c = b->cache;
	head = atomic_load_explicit(&c->remote, memory_order_relaxed);
	do {
		b->next = head;
	} while (!atomic_compare_exchange_weak_explicit(&c->remote, &head, b, memory_order_release,
							memory_order_relaxed));
}

void np_bufcache_trim(struct np_bufcache *c)
{
	np_bufcache_drain(c);
	np_buf_freelist_release(c, &c->free[NP_BUF_CLS_LARGE], 0);
	np_buf_freelist_release(c, &c->free[NP_BUF_CLS_SMALL], c->idle_keep);
}

void np_bufcache_stats(const struct np_bufcache *c, struct np_bufcache_stats *st)
{
	*st = c->st;
	st->cached_small = c->free[NP_BUF_CLS_SMALL].n;
	st->cached_large = c->free[NP_BUF_CLS_LARGE].n;
}

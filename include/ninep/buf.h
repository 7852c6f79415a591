/* Per-connection message buffer cache.
 *
 * Every 9P message lives in an np_buf taken from the cache of the connection
 * (server side) or client that carries it.  Two size classes:
 *   - small: NP_BUF_SMALL bytes, for every message whose size is bounded
 *     independently of msize (all but read/write/readdir payloads and
 *     unusually long strings; see np_msg_bufsize());
 *   - large: msize bytes, for data-carrying messages.
 * Steady-state traffic is served from per-class free lists and performs no
 * heap allocation.  Retention is bounded: at most `max_cached` buffers per
 * class are kept, and np_bufcache_trim() releases the large class (and the
 * small class beyond `idle_keep`) once a connection has been idle.
 *
 * Thread ownership rule: a cache has ONE owner thread (the connection's event
 * loop thread, or whoever serialises a client).  np_buf_get(), np_buf_put(),
 * np_bufcache_trim() and np_bufcache_free() are called only by the owner.
 * Any other thread (a worker that finished with a buffer) returns it with
 * np_buf_put_remote(): a lock-free push onto the cache's return stack, which
 * the owner drains on its next np_buf_get()/trim.  No global lock exists on
 * this path.
 *
 * Debug mode (-Dbufdebug=true, NP_BUF_DEBUG): freed buffers are filled with a
 * pattern and, under AddressSanitizer, poisoned; the pattern is checked when
 * the buffer is handed out again, and a mismatch (a write after free) aborts
 * with a message.  Double puts abort too.
 */
#ifndef NINEP_BUF_H
#define NINEP_BUF_H

#include <stddef.h>
#include <stdint.h>

#include "ninep/proto.h"

#ifdef __cplusplus
extern "C" {
#endif

#define NP_BUF_SMALL 8192u

struct np_bufcache;

typedef struct np_buf {
	uint8_t *data;          /* storage, cap bytes */
	uint32_t cap;
	uint32_t len;           /* bytes in use (owner's business) */
	uint32_t off;           /* bytes already consumed/written (owner's business) */
	struct np_buf *next;    /* free for the current holder to link queues */
	struct np_bufcache *cache;
	uint8_t cls;            /* internal: size class */
	uint8_t state;          /* internal: in use / cached (double-put check) */
} np_buf;

/* How buffers are obtained: from the cache (the default), or, to measure
 * what the cache saves, straight from malloc for every message (exact size,
 * or rounded up to a power of two), as the kernel client did before its
 * per-client fcall cache. */
enum np_bufcache_mode {
	NP_BUFCACHE_CACHED = 0,
	NP_BUFCACHE_MALLOC = 1,
	NP_BUFCACHE_MALLOC_POW2 = 2,
	NP_BUFCACHE_MALLOC_MSIZE = 3, /* msize bytes for every message, as before
				       * kernels sized buffers by message */
};

struct np_bufcache_opts {
	enum np_bufcache_mode mode;
	uint32_t max_cached;    /* per class; default 32 (also when 0) */
	uint32_t idle_keep;     /* small buffers kept after trim; default 2 when
				 * opts is NULL; taken as given otherwise (0 keeps
				 * none), at most max_cached */
};

struct np_bufcache_stats {
	uint64_t gets;          /* buffers handed out */
	uint64_t hits;          /* ... of which from a free list */
	uint64_t misses;        /* ... of which needed malloc */
	uint64_t frees;         /* buffers released to the heap */
	uint64_t bytes_current; /* heap bytes held (in use + cached) */
	uint64_t bytes_peak;
	uint32_t in_use;        /* buffers handed out, not yet returned (a remote
				 * return counts once the owner has drained it) */
	uint32_t cached_small, cached_large;
};

/* Create a cache for a connection with the given msize (>= NP_MIN_MSIZE).
 * opts may be NULL.  Returns NULL on allocation failure. */
struct np_bufcache *np_bufcache_new(uint32_t msize, const struct np_bufcache_opts *opts);
/* Change msize (after Tversion).  Cached large buffers of the old size are
 * released; large buffers still in use are freed when returned. */
void np_bufcache_set_msize(struct np_bufcache *c, uint32_t msize);
uint32_t np_bufcache_msize(const struct np_bufcache *c);
/* Free the cache and everything it holds.  Every buffer must have been
 * returned (debug mode aborts otherwise). */
void np_bufcache_free(struct np_bufcache *c);

/* A buffer of at least `need` bytes (need <= msize), len = off = 0.  NULL when
 * need > msize (errno EMSGSIZE) or the heap is exhausted (ENOMEM).  Every
 * buffer holds at least min(NP_BUF_SMALL, msize) bytes whatever `need` was,
 * so a buffer sized for a success reply always has room for an error reply. */
np_buf *np_buf_get(struct np_bufcache *c, size_t need);
/* Return a buffer (owner thread).  NULL is ignored. */
void np_buf_put(np_buf *b);
/* Return a buffer from any thread (lock-free). */
void np_buf_put_remote(np_buf *b);

/* Release what an idle connection should not keep: the large class entirely,
 * small buffers beyond idle_keep.  Also drains remote returns. */
void np_bufcache_trim(struct np_bufcache *c);
void np_bufcache_stats(const struct np_bufcache *c, struct np_bufcache_stats *st);

/* The buffer size a message needs, chosen from its type and counts before
 * anything is encoded (the analogue of the kernel's p9_msg_buf_size):
 * np_msg_bufsize() for a message about to be encoded, np_reply_bufsize() for
 * the worst-case reply to request `t` at msize.  Both are capped at msize (a
 * larger message cannot be sent: np_encode() then reports -EMSGSIZE). */
size_t np_msg_bufsize(const np_fcall *f, enum np_dialect d, uint32_t msize);
size_t np_reply_bufsize(const np_fcall *t, uint32_t msize);

#ifdef __cplusplus
}
#endif
#endif

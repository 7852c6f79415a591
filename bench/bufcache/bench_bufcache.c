/* Cost of a message buffer: the cache's get/put against malloc/free of the
 * same sizes, and the cross-thread return path.
 *
 *   bench_bufcache [msize] [iterations]
 *
 * Prints one line per case: nanoseconds per get+put pair. */
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ninep/buf.h"

static double now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

/* Keeps the compiler from dropping the buffers' use. */
static volatile uint8_t sink;

static void report(const char *what, double ns, unsigned long n)
{
	printf("%-34s %8.1f ns/op\n", what, ns / (double)n);
}

static void bench_cache(struct np_bufcache *c, size_t need, const char *what, unsigned long n)
{
	np_buf *b = np_buf_get(c, need); /* warm the class */
	np_buf_put(b);
	double t0 = now_ns();
	for (unsigned long i = 0; i < n; i++) {
		b = np_buf_get(c, need);
		b->data[0] = (uint8_t)i; /* a message header would be written */
		sink = b->data[0];
		np_buf_put(b);
	}
	report(what, now_ns() - t0, n);
}

static void bench_malloc(size_t size, const char *what, unsigned long n)
{
	void *(*volatile do_malloc)(size_t) = malloc;
	double t0 = now_ns();
	for (unsigned long i = 0; i < n; i++) {
		uint8_t *p = do_malloc(size);
		if (!p)
			abort();
		p[0] = (uint8_t)i;
		sink = p[0];
		free(p);
	}
	report(what, now_ns() - t0, n);
}

/* One worker returns every buffer with np_buf_put_remote(); the owner gets
 * them back through its drains.  A small ring carries buffers over. */
#define RING 256

struct remote_bench {
	struct np_bufcache *c;
	np_buf *_Atomic ring[RING];
	unsigned long n;
};

static void *remote_returner(void *arg)
{
	struct remote_bench *rb = arg;
	for (unsigned long i = 0; i < rb->n; i++) {
		np_buf *_Atomic *slot = &rb->ring[i % RING];
		np_buf *b;
		/* yield: on a busy 2-core box a pure spin would starve the owner */
		while (!(b = atomic_exchange_explicit(slot, NULL, memory_order_acquire)))
			sched_yield();
		np_buf_put_remote(b);
	}
	return NULL;
}

static void bench_remote(uint32_t msize, unsigned long n)
{
	struct np_bufcache_opts o = {.max_cached = 2 * RING};
	struct remote_bench rb = {.c = np_bufcache_new(msize, &o), .n = n};
	pthread_t th;

	for (unsigned i = 0; i < RING; i++)
		atomic_init(&rb.ring[i], NULL);
	if (pthread_create(&th, NULL, remote_returner, &rb))
		abort();
	double t0 = now_ns();
	for (unsigned long i = 0; i < n; i++) {
		np_buf *b;
		if (!(b = np_buf_get(rb.c, 100)))
			abort();
		np_buf *_Atomic *slot = &rb.ring[i % RING];
		/* wait for the worker to have taken the previous occupant */
		while (atomic_load_explicit(slot, memory_order_acquire))
			sched_yield();
		atomic_store_explicit(slot, b, memory_order_release);
	}
	pthread_join(th, NULL);
	double t = now_ns() - t0;
	np_bufcache_trim(rb.c);
	struct np_bufcache_stats st;
	np_bufcache_stats(rb.c, &st);
	report("get + remote put (2 threads)", t, n);
	printf("%-34s %8.4f\n", "  miss ratio", (double)st.misses / (double)st.gets);
	np_bufcache_free(rb.c);
}

int main(int argc, char **argv)
{
	uint32_t msize = argc > 1 ? (uint32_t)strtoul(argv[1], NULL, 0) : 512u * 1024;
	unsigned long n = argc > 2 ? strtoul(argv[2], NULL, 0) : 2000000ul;
	struct np_bufcache *c = np_bufcache_new(msize, NULL);
	char what[64];

	if (!c || msize <= NP_BUF_SMALL) {
		fprintf(stderr, "usage: %s [msize > %u] [iterations]\n", argv[0], NP_BUF_SMALL);
		return 2;
	}
	printf("msize %u, %lu iterations\n", msize, n);
	bench_cache(c, 100, "cache get/put small", n);
	snprintf(what, sizeof(what), "cache get/put large (%u)", msize);
	bench_cache(c, msize, what, n);
	snprintf(what, sizeof(what), "malloc/free %u", NP_BUF_SMALL);
	bench_malloc(NP_BUF_SMALL, what, n);
	snprintf(what, sizeof(what), "malloc/free %u", msize);
	bench_malloc(msize, what, n);
	np_bufcache_free(c);
	bench_remote(msize, n / 4);
	return 0;
}

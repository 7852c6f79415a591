/* Unit tests of the message buffer cache (include/ninep/buf.h). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "alloc_count.h"
#include "ninep/buf.h"

#if defined(__SANITIZE_ADDRESS__)
#define TEST_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define TEST_ASAN 1
#endif
#endif

#define MSIZE 65536u

static struct np_bufcache_stats stats_of(const struct np_bufcache *c)
{
	struct np_bufcache_stats st;
	np_bufcache_stats(c, &st);
	return st;
}

/* ---- size classes ---------------------------------------------------- */

static void test_class_choice(void **state)
{
	(void)state;
	struct np_bufcache *c = np_bufcache_new(MSIZE, NULL);
	assert_non_null(c);
	assert_int_equal(np_bufcache_msize(c), MSIZE);

	size_t needs[] = {0, 1, 100, NP_BUF_SMALL - 1, NP_BUF_SMALL};
	for (size_t i = 0; i < sizeof(needs) / sizeof(needs[0]); i++) {
		np_buf *b = np_buf_get(c, needs[i]);
		assert_non_null(b);
		assert_int_equal(b->cap, NP_BUF_SMALL);
		assert_int_equal(b->len, 0);
		assert_int_equal(b->off, 0);
		assert_ptr_equal(b->cache, c);
		/* the whole storage is usable */
		memset(b->data, 0x5a, b->cap);
		np_buf_put(b);
	}
	size_t large[] = {NP_BUF_SMALL + 1, MSIZE / 2, MSIZE};
	for (size_t i = 0; i < sizeof(large) / sizeof(large[0]); i++) {
		np_buf *b = np_buf_get(c, large[i]);
		assert_non_null(b);
		assert_int_equal(b->cap, MSIZE);
		memset(b->data, 0x5a, b->cap);
		np_buf_put(b);
	}
	errno = 0;
	assert_null(np_buf_get(c, MSIZE + 1));
	assert_int_equal(errno, EMSGSIZE);
	assert_null(np_buf_get(c, SIZE_MAX));

	struct np_bufcache_stats st = stats_of(c);
	assert_int_equal(st.gets, 8);
	assert_int_equal(st.misses, 2); /* one per class, then reuse */
	assert_int_equal(st.hits, 6);
	assert_int_equal(st.in_use, 0);
	assert_int_equal(st.cached_small, 1);
	assert_int_equal(st.cached_large, 1);
	np_bufcache_free(c);
}

/* With msize at or below the small size every request fits a small buffer. */
static void test_small_msize(void **state)
{
	(void)state;
	struct np_bufcache *c = np_bufcache_new(NP_MIN_MSIZE, NULL);
	assert_non_null(c);
	np_buf *b = np_buf_get(c, NP_MIN_MSIZE);
	assert_non_null(b);
	assert_true(b->cap >= NP_MIN_MSIZE);
	assert_null(np_buf_get(c, NP_MIN_MSIZE + 1));
	np_buf_put(b);
	struct np_bufcache_stats st = stats_of(c);
	assert_int_equal(st.cached_small, 1);
	assert_int_equal(st.cached_large, 0);
	np_bufcache_free(c);
}

static void test_new_rejects_tiny_msize(void **state)
{
	(void)state;
	errno = 0;
	assert_null(np_bufcache_new(NP_MIN_MSIZE - 1, NULL));
	assert_int_equal(errno, EINVAL);
	np_bufcache_free(NULL); /* like free(NULL) */
	np_buf_put(NULL);
	np_buf_put_remote(NULL);
}

/* ---- counting, retention, trim --------------------------------------- */

static void test_hit_miss(void **state)
{
	(void)state;
	struct np_bufcache *c = np_bufcache_new(MSIZE, NULL);
	np_buf *b[5];

	for (int i = 0; i < 5; i++)
		b[i] = np_buf_get(c, 10);
	struct np_bufcache_stats st = stats_of(c);
	assert_int_equal(st.gets, 5);
	assert_int_equal(st.misses, 5);
	assert_int_equal(st.hits, 0);
	assert_int_equal(st.in_use, 5);
	assert_true(st.bytes_current >= 5ull * NP_BUF_SMALL);
	assert_int_equal(st.bytes_peak, st.bytes_current);

	/* len/off are reset for the next user */
	b[4]->len = 77;
	b[4]->off = 12;
	for (int i = 0; i < 5; i++)
		np_buf_put(b[i]);
	st = stats_of(c);
	assert_int_equal(st.in_use, 0);
	assert_int_equal(st.cached_small, 5);

	/* LIFO: the most recently returned buffer comes back first */
	np_buf *again = np_buf_get(c, 10);
	assert_ptr_equal(again, b[4]);
	assert_int_equal(again->len, 0);
	assert_int_equal(again->off, 0);
	assert_null(again->next);
	np_buf_put(again);

	for (int i = 0; i < 5; i++)
		b[i] = np_buf_get(c, 4000);
	for (int i = 0; i < 5; i++)
		np_buf_put(b[i]);
	st = stats_of(c);
	assert_int_equal(st.gets, 11);
	assert_int_equal(st.misses, 5);
	assert_int_equal(st.hits, 6);
	assert_int_equal(st.frees, 0);
	np_bufcache_free(c);
}

static void test_retention_cap(void **state)
{
	(void)state;
	struct np_bufcache_opts o = {.max_cached = 4, .idle_keep = 2};
	struct np_bufcache *c = np_bufcache_new(MSIZE, &o);
	np_buf *s[10], *l[6];

	for (int i = 0; i < 10; i++)
		s[i] = np_buf_get(c, 1);
	for (int i = 0; i < 6; i++)
		l[i] = np_buf_get(c, MSIZE);
	struct np_bufcache_stats st = stats_of(c);
	uint64_t all = st.bytes_current;
	assert_int_equal(st.bytes_peak, all);
	for (int i = 0; i < 10; i++)
		np_buf_put(s[i]);
	for (int i = 0; i < 6; i++)
		np_buf_put(l[i]);

	st = stats_of(c);
	assert_int_equal(st.cached_small, 4);
	assert_int_equal(st.cached_large, 4);
	assert_int_equal(st.frees, 6 + 2);
	assert_int_equal(st.in_use, 0);
	assert_int_equal(st.bytes_peak, all);
	/* bytes_current is exactly the 4 + 4 cached buffers: with F the bytes
	 * freed (6 small + 2 large) and H those held (4 small + 4 large), one
	 * small buffer costs (2F - H) / 8 and one large (H - 4 small) / 4. */
	uint64_t freed = all - st.bytes_current, held = st.bytes_current;
	assert_int_equal((2 * freed - held) % 8, 0);
	uint64_t one_small = (2 * freed - held) / 8;
	uint64_t one_large = (held - 4 * one_small) / 4;
	assert_true(one_small >= NP_BUF_SMALL && one_small < NP_BUF_SMALL + 256);
	assert_true(one_large >= MSIZE && one_large < MSIZE + 256);
	assert_int_equal(one_large - one_small, MSIZE - NP_BUF_SMALL);
	np_bufcache_free(c);
}

static void test_trim(void **state)
{
	(void)state;
	struct np_bufcache_opts o = {.max_cached = 16, .idle_keep = 3};
	struct np_bufcache *c = np_bufcache_new(MSIZE, &o);
	np_buf *s[10], *l[5];

	for (int i = 0; i < 10; i++)
		s[i] = np_buf_get(c, 1);
	for (int i = 0; i < 5; i++)
		l[i] = np_buf_get(c, MSIZE);
	for (int i = 0; i < 10; i++)
		np_buf_put(s[i]);
	for (int i = 0; i < 4; i++)
		np_buf_put(l[i]);
	/* a remote return still pending is drained by trim */
	np_buf_put_remote(l[4]);
	struct np_bufcache_stats st = stats_of(c);
	assert_int_equal(st.in_use, 1);
	assert_int_equal(st.cached_small, 10);
	assert_int_equal(st.cached_large, 4);

	np_bufcache_trim(c);
	st = stats_of(c);
	assert_int_equal(st.in_use, 0);
	assert_int_equal(st.cached_small, 3);
	assert_int_equal(st.cached_large, 0);
	assert_int_equal(st.frees, 7 + 5);
	assert_true(st.bytes_current >= 3ull * NP_BUF_SMALL);
	assert_true(st.bytes_current < 3ull * (NP_BUF_SMALL + 256));

	/* the kept ones are the most recently returned */
	np_buf *k[3];
	for (int i = 0; i < 3; i++) {
		k[i] = np_buf_get(c, 1);
		assert_ptr_equal(k[i], s[9 - i]);
	}
	for (int i = 0; i < 3; i++)
		np_buf_put(k[i]);

	/* trimming twice changes nothing more */
	np_bufcache_trim(c);
	struct np_bufcache_stats st2 = stats_of(c);
	assert_int_equal(st2.cached_small, 3);
	assert_int_equal(st2.frees, st.frees);
	np_bufcache_free(c);
}

static void test_idle_keep_zero(void **state)
{
	(void)state;
	struct np_bufcache_opts o = {.max_cached = 8, .idle_keep = 0};
	struct np_bufcache *c = np_bufcache_new(MSIZE, &o);
	np_buf *b = np_buf_get(c, 1);
	np_buf_put(b);
	np_bufcache_trim(c);
	struct np_bufcache_stats st = stats_of(c);
	assert_int_equal(st.cached_small, 0);
	assert_int_equal(st.bytes_current, 0);
	assert_int_equal(st.frees, st.misses);
	np_bufcache_free(c);
}

static void test_set_msize(void **state)
{
	(void)state;
	struct np_bufcache *c = np_bufcache_new(MSIZE, NULL);
	np_buf *inuse = np_buf_get(c, MSIZE);
	np_buf *cached = np_buf_get(c, MSIZE);
	np_buf *small = np_buf_get(c, 1);
	np_buf_put(cached);
	np_buf_put(small);

	/* same msize: nothing happens */
	np_bufcache_set_msize(c, MSIZE);
	struct np_bufcache_stats st = stats_of(c);
	assert_int_equal(st.cached_large, 1);
	assert_int_equal(st.frees, 0);

	np_bufcache_set_msize(c, 2 * MSIZE);
	assert_int_equal(np_bufcache_msize(c), 2 * MSIZE);
	st = stats_of(c);
	assert_int_equal(st.cached_large, 0);
	assert_int_equal(st.cached_small, 1); /* the small class is unaffected */
	assert_int_equal(st.frees, 1);

	/* the old-size buffer still in use is freed on return, not cached */
	np_buf_put(inuse);
	st = stats_of(c);
	assert_int_equal(st.cached_large, 0);
	assert_int_equal(st.frees, 2);
	assert_int_equal(st.in_use, 0);

	np_buf *b = np_buf_get(c, 2 * MSIZE);
	assert_non_null(b);
	assert_int_equal(b->cap, 2 * MSIZE);
	memset(b->data, 1, b->cap);

	/* shrinking: the new-size buffer in use is dropped on return too, the
	 * same way through the remote path */
	np_bufcache_set_msize(c, MSIZE);
	assert_null(np_buf_get(c, MSIZE + 1));
	np_buf_put_remote(b);
	np_buf *b2 = np_buf_get(c, MSIZE); /* drains b, then allocates */
	assert_int_equal(b2->cap, MSIZE);
	st = stats_of(c);
	assert_int_equal(st.frees, 3);
	np_buf_put(b2);
	st = stats_of(c);
	assert_int_equal(st.cached_large, 1);
	assert_int_equal(st.misses - st.frees, 2); /* one small, one large held */
	np_bufcache_free(c);
}

/* ---- remote returns -------------------------------------------------- */

static void test_remote_put_basic(void **state)
{
	(void)state;
	struct np_bufcache *c = np_bufcache_new(MSIZE, NULL);
	np_buf *a = np_buf_get(c, 1);
	np_buf *b = np_buf_get(c, MSIZE);
	np_buf_put_remote(a);
	np_buf_put_remote(b);
	/* not drained yet: still counted in use */
	assert_int_equal(stats_of(c).in_use, 2);
	np_buf *x = np_buf_get(c, 1);
	assert_ptr_equal(x, a);
	struct np_bufcache_stats st = stats_of(c);
	assert_int_equal(st.in_use, 1);
	assert_int_equal(st.cached_large, 1);
	assert_int_equal(st.misses, 2);
	np_buf_put(x);
	np_bufcache_free(c);
}

#define NWORKERS 4
#define ROUNDS 40
#define PER_WORKER 600
#define LARGE_EVERY 7

struct remote_shared {
	struct np_bufcache *c;
	pthread_barrier_t start, done;
	atomic_uint returned;
	atomic_uint errors;
};

struct remote_worker {
	pthread_t th;
	unsigned id;
	struct remote_shared *sh;
	np_buf *bufs[PER_WORKER];
};

static uint64_t stamp(unsigned round, unsigned worker, unsigned i)
{
	return (uint64_t)round << 40 | (uint64_t)worker << 32 | i;
}

static void *remote_worker_main(void *arg)
{
	struct remote_worker *w = arg;
	struct remote_shared *sh = w->sh;

	for (unsigned r = 0; r < ROUNDS; r++) {
		pthread_barrier_wait(&sh->start);
		for (unsigned i = 0; i < PER_WORKER; i++) {
			np_buf *b = w->bufs[i];
			uint64_t v;
			memcpy(&v, b->data, sizeof(v));
			/* a buffer handed out twice would carry another stamp */
			if (v != stamp(r, w->id, i) || b->cap < (i % LARGE_EVERY ? 1 : MSIZE))
				atomic_fetch_add(&sh->errors, 1);
			/* the holder may write anywhere until it returns the buffer */
			b->data[b->cap - 1] = (uint8_t)i;
			b->len = 9;
			np_buf_put_remote(b);
			atomic_fetch_add_explicit(&sh->returned, 1, memory_order_relaxed);
		}
		pthread_barrier_wait(&sh->done);
	}
	return NULL;
}

/* Several threads return thousands of buffers at once while the owner keeps
 * draining them through np_buf_get(); run under TSan as well. */
static void test_remote_put_concurrent(void **state)
{
	(void)state;
	struct np_bufcache_opts o = {.max_cached = 4096, .idle_keep = 0};
	struct remote_shared sh = {.c = np_bufcache_new(MSIZE, &o)};
	struct remote_worker w[NWORKERS];
	unsigned nlarge = 0;

	assert_non_null(sh.c);
	atomic_init(&sh.returned, 0);
	atomic_init(&sh.errors, 0);
	assert_int_equal(pthread_barrier_init(&sh.start, NULL, NWORKERS + 1), 0);
	assert_int_equal(pthread_barrier_init(&sh.done, NULL, NWORKERS + 1), 0);
	for (unsigned i = 0; i < NWORKERS; i++) {
		w[i].id = i;
		w[i].sh = &sh;
		assert_int_equal(pthread_create(&w[i].th, NULL, remote_worker_main, &w[i]), 0);
	}
	for (unsigned i = 0; i < PER_WORKER; i++)
		nlarge += i % LARGE_EVERY == 0;

	for (unsigned r = 0; r < ROUNDS; r++) {
		for (unsigned k = 0; k < NWORKERS; k++) {
			for (unsigned i = 0; i < PER_WORKER; i++) {
				np_buf *b = np_buf_get(sh.c, i % LARGE_EVERY ? 100 : MSIZE);
				assert_non_null(b);
				uint64_t v = stamp(r, k, i);
				memcpy(b->data, &v, sizeof(v));
				w[k].bufs[i] = b;
			}
		}
		pthread_barrier_wait(&sh.start);
		/* drain while the workers push */
		while (atomic_load_explicit(&sh.returned, memory_order_relaxed) <
		       (r + 1) * NWORKERS * PER_WORKER) {
			np_buf *b = np_buf_get(sh.c, 64);
			assert_non_null(b);
			b->data[0] = 1;
			np_buf_put(b);
		}
		pthread_barrier_wait(&sh.done);
	}
	for (unsigned i = 0; i < NWORKERS; i++)
		pthread_join(w[i].th, NULL);
	assert_int_equal(atomic_load(&sh.errors), 0);

	np_bufcache_trim(sh.c);
	struct np_bufcache_stats st = stats_of(sh.c);
	uint64_t per_round = (uint64_t)NWORKERS * PER_WORKER;
	assert_int_equal(st.in_use, 0);
	assert_int_equal(st.hits + st.misses, st.gets);
	assert_true(st.gets >= ROUNDS * per_round);
	/* every buffer came back and was reused: after the first round all
	 * gets are hits (plus possibly one for the drain loop) */
	assert_true(st.misses >= per_round);
	assert_true(st.misses <= per_round + 1);
	/* conservation: everything malloc'd was freed by the final trim */
	assert_int_equal(st.cached_small + st.cached_large, 0);
	assert_int_equal(st.frees, st.misses);
	assert_int_equal(st.bytes_current, 0);
	assert_true(st.bytes_peak >= (uint64_t)NWORKERS * nlarge * MSIZE);
	pthread_barrier_destroy(&sh.start);
	pthread_barrier_destroy(&sh.done);
	np_bufcache_free(sh.c);
}

/* ---- misuse detection (in a child process) ---------------------------- */

/* Run fn in a child with its stderr captured into out; returns the wait
 * status. */
static int run_child(void (*fn)(void), char *out, size_t n)
{
	int fds[2];
	size_t got = 0;
	int status;

	assert_int_equal(pipe(fds), 0);
	fflush(stdout);
	fflush(stderr);
	pid_t pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		/* cmocka's handlers must not turn the abort into a test failure
		 * reported from the child */
		signal(SIGABRT, SIG_DFL);
		signal(SIGSEGV, SIG_DFL);
		close(fds[0]);
		dup2(fds[1], 2);
		fn();
		_exit(0);
	}
	close(fds[1]);
	for (;;) {
		ssize_t r = read(fds[0], out + got, n - 1 - got);
		if (r > 0 && got + (size_t)r < n - 1) {
			got += (size_t)r;
			continue;
		}
		if (r > 0)
			got += (size_t)r;
		if (r < 0 && errno == EINTR)
			continue;
		break;
	}
	out[got] = '\0';
	close(fds[0]);
	assert_int_equal(waitpid(pid, &status, 0), pid);
	return status;
}

static void assert_aborted(int status, const char *out, const char *msg)
{
	if (!WIFSIGNALED(status) || WTERMSIG(status) != SIGABRT || !strstr(out, msg))
		fail_msg("child status 0x%x, expected SIGABRT with \"%s\"; stderr: %s", status,
			 msg, out);
}

static void child_double_put(void)
{
	struct np_bufcache *c = np_bufcache_new(MSIZE, NULL);
	np_buf *b = np_buf_get(c, 1);
	np_buf_put(b);
	np_buf_put(b);
}

static void child_double_remote_put(void)
{
	struct np_bufcache *c = np_bufcache_new(MSIZE, NULL);
	np_buf *b = np_buf_get(c, MSIZE);
	np_buf_put_remote(b);
	np_buf_put_remote(b);
}

static void child_remote_put_after_put(void)
{
	struct np_bufcache *c = np_bufcache_new(MSIZE, NULL);
	np_buf *b = np_buf_get(c, 1);
	np_buf_put(b);
	np_buf_put_remote(b);
}

static void test_double_put_aborts(void **state)
{
	(void)state;
	char out[4096];

	assert_aborted(run_child(child_double_put, out, sizeof(out)), out, "returned twice");
	assert_aborted(run_child(child_double_remote_put, out, sizeof(out)), out,
		       "returned twice");
	assert_aborted(run_child(child_remote_put_after_put, out, sizeof(out)), out,
		       "returned twice");
}

#ifdef NP_BUF_DEBUG
static void child_write_after_free(void)
{
	struct np_bufcache *c = np_bufcache_new(MSIZE, NULL);
	np_buf *b = np_buf_get(c, 100);
	np_buf_put(b);
	((volatile uint8_t *)b->data)[17] = 0x42;
	np_buf_get(c, 100); /* the same buffer (LIFO): the check must fire */
}

static void child_write_after_remote_free(void)
{
	struct np_bufcache *c = np_bufcache_new(MSIZE, NULL);
	np_buf *b = np_buf_get(c, MSIZE);
	np_buf_put_remote(b);
	((volatile uint8_t *)b->data)[MSIZE - 1] = 0x42;
	np_buf_get(c, MSIZE);
}

static void child_free_with_inuse(void)
{
	struct np_bufcache *c = np_bufcache_new(MSIZE, NULL);
	np_buf_get(c, 1);
	np_bufcache_free(c);
}

static void assert_write_after_free_caught(int status, const char *out, const char *at)
{
#ifdef TEST_ASAN
	/* ASan stops the write itself, before the pattern check can run */
	(void)at;
	if (!(WIFEXITED(status) && WEXITSTATUS(status) != 0) && !WIFSIGNALED(status))
		fail_msg("child status 0x%x, expected an ASan error; stderr: %s", status, out);
	if (!strstr(out, "use-after-poison"))
		fail_msg("no use-after-poison report; stderr: %s", out);
#else
	assert_aborted(status, out, "write after free");
	assert_non_null(strstr(out, at));
#endif
}
#endif

static void test_write_after_free_aborts(void **state)
{
	(void)state;
#ifdef NP_BUF_DEBUG
	char out[16384];
	char at[64];

	assert_write_after_free_caught(run_child(child_write_after_free, out, sizeof(out)), out,
				       "byte 17 is 0x42");
	snprintf(at, sizeof(at), "byte %u is 0x42", MSIZE - 1);
	assert_write_after_free_caught(
		run_child(child_write_after_remote_free, out, sizeof(out)), out, at);
#else
	skip(); /* only built with -Dbufdebug=true */
#endif
}

static void test_free_with_inuse_aborts(void **state)
{
	(void)state;
#ifdef NP_BUF_DEBUG
	char out[4096];
	assert_aborted(run_child(child_free_with_inuse, out, sizeof(out)), out,
		       "1 buffers still in use");
#else
	skip(); /* only built with -Dbufdebug=true */
#endif
}

/* ---- zero allocations in steady state --------------------------------- */

#define CYCLES 100000
#define ZMSIZE 16384u

static void test_zero_alloc(void **state)
{
	(void)state;
	struct alloc_count before, after;

	if (!alloc_count_active())
		skip();
	struct np_bufcache *c = np_bufcache_new(ZMSIZE, NULL);
	assert_non_null(c);
	/* warm-up: one buffer of each class, plus one more small for the
	 * cycles that hold two */
	np_buf *w1 = np_buf_get(c, 1), *w2 = np_buf_get(c, 1), *w3 = np_buf_get(c, ZMSIZE);
	np_buf_put(w1);
	np_buf_put(w2);
	np_buf_put(w3);

	alloc_count_snapshot(&before);
	for (unsigned i = 0; i < CYCLES; i++) {
		np_buf *s = np_buf_get(c, 64 + i % 1000);
		np_buf *l = np_buf_get(c, NP_BUF_SMALL + 1 + i % 4000);
		np_buf *s2 = np_buf_get(c, NP_BUF_SMALL);
		if (!s || !l || !s2)
			fail_msg("get failed at cycle %u", i);
		s->data[0] = (uint8_t)i;
		l->data[l->cap - 1] = (uint8_t)i;
		np_buf_put(s2);
		np_buf_put(s);
		if (i & 1)
			np_buf_put_remote(l); /* drained by the next get */
		else
			np_buf_put(l);
	}
	alloc_count_snapshot(&after);
	assert_int_equal(after.allocs - before.allocs, 0);
	assert_int_equal(after.frees - before.frees, 0);

	struct np_bufcache_stats st = stats_of(c);
	assert_int_equal(st.misses, 3);
	assert_int_equal(st.gets, 3 + 3ull * CYCLES);

	/* and the counter does see the library's allocations */
	np_bufcache_trim(c); /* frees the cached large buffer */
	alloc_count_snapshot(&before);
	np_buf *l = np_buf_get(c, ZMSIZE);
	alloc_count_snapshot(&after);
	assert_int_equal(after.allocs - before.allocs, 1);
	np_buf_put(l);
	np_bufcache_free(c);
}

/* ---- message sizes ---------------------------------------------------- */

static np_fcall fc(uint8_t type)
{
	np_fcall f;
	memset(&f, 0, sizeof(f));
	f.type = type;
	f.tag = 1;
	return f;
}

static void assert_msg_size_exact(const np_fcall *f, enum np_dialect d)
{
	long exact = np_fcall_size(f, d);
	assert_true(exact > 0);
	assert_int_equal(np_msg_bufsize(f, d, 1u << 30), (size_t)exact);
	/* capped at msize when the message does not fit */
	if ((size_t)exact > NP_MIN_MSIZE)
		assert_int_equal(np_msg_bufsize(f, d, NP_MIN_MSIZE), NP_MIN_MSIZE);
}

static void test_msg_bufsize(void **state)
{
	(void)state;
	static uint8_t payload[200000];
	static char longname[40000];
	memset(longname, 'n', sizeof(longname));

	np_fcall f = fc(NP_TVERSION);
	f.version.msize = MSIZE;
	f.version.version = np_strz("9P2000.L");
	assert_msg_size_exact(&f, NP_9P2000L);

	f = fc(NP_TWALK);
	f.twalk.nwname = 3;
	f.twalk.wname[0] = np_strz("usr");
	f.twalk.wname[1] = np_strz("lib");
	f.twalk.wname[2] = np_str_make(longname, 30000);
	assert_msg_size_exact(&f, NP_9P2000L);

	unsigned counts[] = {0, 1, 100, 8192, 65536, 200000};
	for (size_t i = 0; i < sizeof(counts) / sizeof(counts[0]); i++) {
		f = fc(NP_TWRITE);
		f.twrite.fid = 3;
		f.twrite.count = counts[i];
		f.twrite.data = payload;
		assert_msg_size_exact(&f, NP_9P2000L);
		f = fc(NP_RREAD);
		f.rread.count = counts[i];
		f.rread.data = payload;
		assert_msg_size_exact(&f, NP_9P2000);
		f = fc(NP_RREADDIR);
		f.rread.count = counts[i];
		f.rread.data = payload;
		assert_msg_size_exact(&f, NP_9P2000L);
	}

	f = fc(NP_RSTAT);
	f.rstat.stat.name = np_strz("file");
	f.rstat.stat.uid = np_strz("glenda");
	f.rstat.stat.gid = np_strz("glenda");
	f.rstat.stat.muid = np_strz("glenda");
	f.rstat.stat.extension = np_strz("target");
	assert_msg_size_exact(&f, NP_9P2000U);
	assert_msg_size_exact(&f, NP_9P2000);

	f = fc(NP_TLCREATE);
	f.tlcreate.name = np_strz("newfile");
	assert_msg_size_exact(&f, NP_9P2000L);

	f = fc(NP_RLERROR);
	f.rlerror.ecode = ENOENT;
	assert_msg_size_exact(&f, NP_9P2000L);

	/* not encodable (too many names): small, np_encode says why */
	f = fc(NP_TWALK);
	f.twalk.nwname = NP_MAXWELEM + 1;
	assert_true(np_fcall_size(&f, NP_9P2000L) < 0);
	assert_true(np_msg_bufsize(&f, NP_9P2000L, MSIZE) <= NP_BUF_SMALL);
}

/* The bound must hold for the largest reply the codec can produce. */
static void test_reply_bufsize(void **state)
{
	(void)state;
	static uint8_t payload[1 << 20];
	static char path[4096];
	memset(path, 'p', sizeof(path));

	uint32_t msizes[] = {NP_MIN_MSIZE, 8192, MSIZE, 1u << 20};
	for (size_t m = 0; m < sizeof(msizes) / sizeof(msizes[0]); m++) {
		uint32_t msize = msizes[m];
		uint32_t counts[] = {0, 100, 4096, msize - NP_IOHDRSZ, msize, 1u << 30};
		for (size_t i = 0; i < sizeof(counts) / sizeof(counts[0]); i++) {
			np_fcall t = fc(NP_TREAD);
			t.tread.count = counts[i];
			size_t bound = np_reply_bufsize(&t, msize);
			uint32_t iounit = msize - NP_IOHDRSZ;
			np_fcall r = fc(NP_RREAD);
			r.rread.count = counts[i] < iounit ? counts[i] : iounit;
			r.rread.data = payload;
			assert_int_equal(bound, (size_t)np_fcall_size(&r, NP_9P2000L));
			assert_true(bound <= msize);
			t.type = NP_TREADDIR;
			r.type = NP_RREADDIR;
			assert_int_equal(np_reply_bufsize(&t, msize),
					 (size_t)np_fcall_size(&r, NP_9P2000L));
		}
		/* small reads of a big msize get a small buffer */
		np_fcall t = fc(NP_TREAD);
		t.tread.count = 4096;
		assert_true(np_reply_bufsize(&t, msize) <= NP_BUF_SMALL);

		for (uint16_t n = 0; n <= NP_MAXWELEM; n++) {
			t = fc(NP_TWALK);
			t.twalk.nwname = n;
			np_fcall r = fc(NP_RWALK);
			r.rwalk.nwqid = n;
			assert_int_equal(np_reply_bufsize(&t, msize),
					 (size_t)np_fcall_size(&r, NP_9P2000L));
		}

		t = fc(NP_TREADLINK);
		np_fcall r = fc(NP_RREADLINK);
		r.rreadlink.target = np_str_make(path, sizeof(path));
		size_t rl = (size_t)np_fcall_size(&r, NP_9P2000L);
		assert_int_equal(np_reply_bufsize(&t, msize), rl < msize ? rl : msize);

		t = fc(NP_TGETLOCK);
		t.tgetlock.client_id = np_str_make(path, 3000);
		r = fc(NP_RGETLOCK);
		r.rgetlock.client_id = t.tgetlock.client_id;
		size_t gl = (size_t)np_fcall_size(&r, NP_9P2000L);
		assert_true(np_reply_bufsize(&t, msize) >= (gl < msize ? gl : msize));

		/* fixed-size replies fit the default small bound */
		t = fc(NP_TGETATTR);
		r = fc(NP_RGETATTR);
		assert_true(np_reply_bufsize(&t, msize) >= (size_t)np_fcall_size(&r, NP_9P2000L));
		t = fc(NP_TSTATFS);
		r = fc(NP_RSTATFS);
		assert_true(np_reply_bufsize(&t, msize) >= (size_t)np_fcall_size(&r, NP_9P2000L));

		/* every reply bound is capped at msize */
		for (unsigned type = 0; type < 256; type++) {
			t = fc((uint8_t)type);
			t.tread.count = UINT32_MAX;
			assert_true(np_reply_bufsize(&t, msize) <= msize);
		}
	}

	/* the named cases */
	np_fcall t = fc(NP_TSTAT);
	assert_int_equal(np_reply_bufsize(&t, MSIZE), NP_BUF_SMALL);
	assert_int_equal(np_reply_bufsize(&t, NP_MIN_MSIZE), NP_MIN_MSIZE);
	t = fc(NP_TVERSION);
	assert_true(np_reply_bufsize(&t, MSIZE) <= NP_BUF_SMALL);
	t = fc(NP_TXATTRWALK);
	assert_true(np_reply_bufsize(&t, MSIZE) <= NP_BUF_SMALL);
	/* a client_id longer than the small class keeps its reply whole */
	static char big[20000];
	t = fc(NP_TGETLOCK);
	t.tgetlock.client_id = np_str_make(big, sizeof(big));
	np_fcall r = fc(NP_RGETLOCK);
	r.rgetlock.client_id = t.tgetlock.client_id;
	assert_int_equal(np_reply_bufsize(&t, MSIZE), (size_t)np_fcall_size(&r, NP_9P2000L));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_class_choice),
		cmocka_unit_test(test_small_msize),
		cmocka_unit_test(test_new_rejects_tiny_msize),
		cmocka_unit_test(test_hit_miss),
		cmocka_unit_test(test_retention_cap),
		cmocka_unit_test(test_trim),
		cmocka_unit_test(test_idle_keep_zero),
		cmocka_unit_test(test_set_msize),
		cmocka_unit_test(test_remote_put_basic),
		cmocka_unit_test(test_remote_put_concurrent),
		cmocka_unit_test(test_double_put_aborts),
		cmocka_unit_test(test_write_after_free_aborts),
		cmocka_unit_test(test_free_with_inuse_aborts),
		cmocka_unit_test(test_zero_alloc),
		cmocka_unit_test(test_msg_bufsize),
		cmocka_unit_test(test_reply_bufsize),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}

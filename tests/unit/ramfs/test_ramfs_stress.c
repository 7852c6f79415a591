/* ramfs under concurrency: threads creating, writing, reading, renaming,
 * listing and unlinking in one tree at once (meant for ThreadSanitizer as
 * well as for the final consistency checks). */
#include <errno.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "harness.h"

#define THREADS 6
#define ROUNDS 300

struct worker {
	np_ramfs *fs;
	int id;
	int failures;
};

static void *work(void *arg)
{
	struct worker *w = arg;
	int err;
	uint32_t n;
	char name[32], other[32], data[256], back[256];
	np_fid *root = th_attach(w->fs, 0, "", &err);
	np_fid *shared = th_walk(w->fs, root, "shared", &err);
	if (!root || !shared) {
		w->failures++;
		return NULL;
	}
	for (int i = 0; i < ROUNDS; i++) {
		snprintf(name, sizeof(name), "t%d-%d", w->id, i);
		int len = snprintf(data, sizeof(data), "thread %d round %d payload", w->id, i);
		np_fid *f = th_walk(w->fs, shared, "", &err);
		if (th_lcreate(w->fs, f, name, NP_L_O_RDWR | NP_L_O_EXCL, 0644)) {
			w->failures++;
			th_fid_release(f);
			continue;
		}
		/* write in two pieces, at a chunk-crossing offset too */
		if (th_write(w->fs, f, 0, data, (uint32_t)len, &n) || n != (uint32_t)len)
			w->failures++;
		if (th_write(w->fs, f, 16380, data, 8, &n) || n != 8)
			w->failures++;
		if (th_read(w->fs, f, 0, back, (uint32_t)len, &n) || n != (uint32_t)len ||
		    memcmp(back, data, (size_t)len))
			w->failures++;
		np_fcall a;
		if (th_getattr(w->fs, f, &a) || a.rgetattr.size != 16388)
			w->failures++;
		/* everybody's readdir of the shared directory */
		np_fid *d = th_walk(w->fs, shared, "", &err);
		uint8_t buf[512];
		uint64_t off = 0;
		if (!d || th_lopen(w->fs, d, NP_L_O_RDONLY)) {
			w->failures++;
		} else {
			for (int pages = 0; pages < 4; pages++) {
				uint32_t got, pos = 0;
				np_dirent de;
				if (th_readdir(w->fs, d, off, buf, sizeof(buf), &got)) {
					w->failures++;
					break;
				}
				if (got == 0)
					break;
				while (np_dirent_next(buf, got, &pos, &de) == 1)
					off = de.offset;
			}
		}
		if (d)
			th_clunk(w->fs, d);
		/* rename some, lock some, unlink while open */
		snprintf(other, sizeof(other), "r%d-%d", w->id, i);
		if ((i & 3) == 0 && th_renameat(w->fs, shared, name, shared, other))
			w->failures++;
		uint8_t st;
		if (th_lock(w->fs, f, NP_LOCK_TYPE_WRLCK, 0, 0, (uint32_t)w->id, "stress", &st) ||
		    st != NP_LOCK_SUCCESS)
			w->failures++;
		if (th_unlinkat(w->fs, shared, (i & 3) == 0 ? other : name, 0))
			w->failures++;
		if (th_read(w->fs, f, 0, back, (uint32_t)len, &n) || n != (uint32_t)len)
			w->failures++;
		th_clunk(w->fs, f);
	}
	th_fid_release(shared);
	th_fid_release(root);
	return NULL;
}

static void test_threads(void **state)
{
	(void)state;
	int err;
	np_ramfs *fs = np_ramfs_new(NULL);
	np_fid *root = th_attach(fs, 0, "", &err);
	assert_int_equal(th_mkdir(fs, root, "shared", 0777, NULL), 0);
	struct np_ramfs_stats before, after;
	np_ramfs_stats(fs, &before);
	pthread_t t[THREADS];
	struct worker w[THREADS];
	for (int i = 0; i < THREADS; i++) {
		w[i].fs = fs;
		w[i].id = i;
		w[i].failures = 0;
		assert_int_equal(pthread_create(&t[i], NULL, work, &w[i]), 0);
	}
	for (int i = 0; i < THREADS; i++) {
		pthread_join(t[i], NULL);
		assert_int_equal(w[i].failures, 0);
	}
	/* everything created was removed and freed */
	np_ramfs_stats(fs, &after);
	assert_int_equal(after.nodes, before.nodes);
	assert_int_equal(after.data_bytes, 0);
	np_fid *d = th_walk(fs, root, "shared", &err);
	assert_int_equal(th_lopen(fs, d, NP_L_O_RDONLY), 0);
	uint8_t buf[512];
	uint32_t got;
	assert_int_equal(th_readdir(fs, d, 2, buf, sizeof(buf), &got), 0);
	assert_int_equal(got, 0);
	th_clunk(fs, d);
	th_fid_release(root);
	np_ramfs_free(fs);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_threads),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}

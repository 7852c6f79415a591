/* ramfs readdir: ".", "..", paging with small counts, and cookies that stay
 * valid while the directory changes between calls. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <dirent.h>

#include <cmocka.h>

#include "harness.h"

#define MAXN 512

struct listing {
	int n;
	char names[MAXN][32];
	uint64_t cookies[MAXN];
	uint8_t types[MAXN];
};

/* Read one page from off; returns the number of entries, appends to l. */
static int page(np_ramfs *fs, np_fid *d, uint64_t off, uint32_t count, struct listing *l,
		uint64_t *next)
{
	uint8_t buf[8192];
	uint32_t got, pos = 0;
	assert_int_equal(th_readdir(fs, d, off, buf, count, &got), 0);
	assert_true(got <= count);
	np_dirent de;
	int k = 0;
	while (np_dirent_next(buf, got, &pos, &de) == 1) {
		assert_true(l->n < MAXN);
		assert_int_equal(np_str_copy(l->names[l->n], 32, de.name), 0);
		l->cookies[l->n] = de.offset;
		l->types[l->n] = de.type;
		l->n++;
		k++;
		*next = de.offset;
	}
	assert_int_equal(pos, got); /* whole entries only */
	return k;
}

static int find(const struct listing *l, const char *name)
{
	int hits = 0;
	for (int i = 0; i < l->n; i++)
		hits += strcmp(l->names[i], name) == 0;
	return hits;
}

static void test_dots_and_types(void **state)
{
	(void)state;
	int err;
	np_ramfs *fs = np_ramfs_new(NULL);
	np_fid *r = th_attach(fs, 0, "", &err);
	assert_int_equal(th_mkdir(fs, r, "sub", 0755, NULL), 0);
	th_put(fs, r, "file", "x");
	assert_int_equal(th_symlink(fs, r, "ln", "file", NULL), 0);
	np_fid *d = th_walk(fs, r, "", &err);
	/* not opened: EBADF; a file: ENOTDIR */
	struct listing l = {0};
	uint8_t buf[256];
	uint32_t got;
	assert_int_equal(th_readdir(fs, d, 0, buf, sizeof(buf), &got), EBADF);
	assert_int_equal(th_lopen(fs, d, NP_L_O_RDONLY), 0);
	uint64_t next = 0;
	assert_int_equal(page(fs, d, 0, 4096, &l, &next), 5);
	assert_string_equal(l.names[0], ".");
	assert_string_equal(l.names[1], "..");
	assert_int_equal(l.types[0], DT_DIR);
	assert_int_equal(find(&l, "sub"), 1);
	for (int i = 0; i < l.n; i++) {
		if (!strcmp(l.names[i], "sub"))
			assert_int_equal(l.types[i], DT_DIR);
		if (!strcmp(l.names[i], "file"))
			assert_int_equal(l.types[i], DT_REG);
		if (!strcmp(l.names[i], "ln"))
			assert_int_equal(l.types[i], DT_LNK);
		if (i)
			assert_true(l.cookies[i] > l.cookies[i - 1]);
	}
	/* the end: an empty reply */
	assert_int_equal(page(fs, d, next, 4096, &l, &next), 0);
	/* a count too small for one entry is an error, not a false end */
	assert_int_equal(th_readdir(fs, d, 0, buf, 10, &got), EINVAL);
	th_clunk(fs, d);
	np_fid *f = th_walk(fs, r, "file", &err);
	assert_int_equal(th_lopen(fs, f, NP_L_O_RDONLY), 0);
	assert_int_equal(th_readdir(fs, f, 0, buf, sizeof(buf), &got), ENOTDIR);
	th_clunk(fs, f);
	th_fid_release(r);
	np_ramfs_free(fs);
}

static void test_paging_small_counts(void **state)
{
	(void)state;
	int err;
	char name[32];
	np_ramfs *fs = np_ramfs_new(NULL);
	np_fid *r = th_attach(fs, 0, "", &err);
	for (int i = 0; i < 300; i++) {
		snprintf(name, sizeof(name), "entry-%03d", i);
		assert_int_equal(th_mkdir(fs, r, name, 0755, NULL), 0);
	}
	np_fid *d = th_walk(fs, r, "", &err);
	assert_int_equal(th_lopen(fs, d, NP_L_O_RDONLY), 0);
	/* 24 + 9 = 33 bytes per entry-NNN entry: counts of 40 and 70 give one
	 * and two entries per page */
	uint32_t counts[] = {40, 70, 100, 8192};
	for (size_t c = 0; c < 4; c++) {
		static struct listing l;
		memset(&l, 0, sizeof(l));
		uint64_t off = 0;
		int pages = 0;
		while (page(fs, d, off, counts[c], &l, &off) > 0)
			pages++;
		assert_int_equal(l.n, 302);
		for (int i = 0; i < 300; i++) {
			snprintf(name, sizeof(name), "entry-%03d", i);
			assert_int_equal(find(&l, name), 1);
		}
		if (counts[c] == 40)
			assert_int_equal(pages, 302);
	}
	th_clunk(fs, d);
	th_fid_release(r);
	np_ramfs_free(fs);
}

static void test_concurrent_changes(void **state)
{
	(void)state;
	int err;
	char name[32];
	np_ramfs *fs = np_ramfs_new(NULL);
	np_fid *r = th_attach(fs, 0, "", &err);
	for (int i = 0; i < 100; i++) {
		snprintf(name, sizeof(name), "old-%03d", i);
		th_put(fs, r, name, "x");
	}
	np_fid *d = th_walk(fs, r, "", &err);
	assert_int_equal(th_lopen(fs, d, NP_L_O_RDONLY), 0);
	static struct listing l;
	memset(&l, 0, sizeof(l));
	uint64_t off = 0;
	int step = 0;
	/* between pages: delete an entry not yet listed and one already
	 * listed, and create a new one */
	while (page(fs, d, off, 100, &l, &off) > 0) {
		step++;
		snprintf(name, sizeof(name), "old-%03d", 99 - step);
		if (step < 40)
			assert_int_equal(th_unlinkat(fs, r, name, 0), 0);
		snprintf(name, sizeof(name), "old-%03d", step);
		if (step < 40)
			assert_int_equal(th_unlinkat(fs, r, name, 0), 0);
		/* (only for a while: a listing that has caught up would see
		 * each new entry on its next page, forever) */
		snprintf(name, sizeof(name), "new-%03d", step);
		if (step < 30)
			th_put(fs, r, name, "y");
		assert_true(step < 1000);
	}
	/* every entry seen at most once; every old entry never deleted seen
	 * exactly once; deleted-before-listed ones never */
	for (int i = 0; i < l.n; i++)
		assert_int_equal(find(&l, l.names[i]), 1);
	for (int i = 40; i <= 59; i++) {
		snprintf(name, sizeof(name), "old-%03d", i);
		assert_int_equal(find(&l, name), 1);
	}
	for (int i = 0; i < l.n - 1; i++)
		assert_true(l.cookies[i] < l.cookies[i + 1]);
	/* new entries get cookies past every old one, so this listing, which
	 * started before them, sees every one of them */
	for (int i = 1; i < 30; i++) {
		snprintf(name, sizeof(name), "new-%03d", i);
		assert_int_equal(find(&l, name), 1);
	}
	th_clunk(fs, d);
	th_fid_release(r);
	np_ramfs_free(fs);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_dots_and_types),
		cmocka_unit_test(test_paging_small_counts),
		cmocka_unit_test(test_concurrent_changes),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}

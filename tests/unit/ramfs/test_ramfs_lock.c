/* ramfs POSIX byte-range locks: conflicts between owners, upgrades within
 * one owner, unlock splitting a range, getlock, release on fid destroy. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "harness.h"

struct ctx {
	np_ramfs *fs;
	np_fid *root, *a, *b; /* one file opened twice */
};

static int setup(void **state)
{
	struct ctx *c = calloc(1, sizeof(*c));
	int err;
	c->fs = np_ramfs_new(NULL);
	c->root = th_attach(c->fs, 0, "", &err);
	th_put(c->fs, c->root, "f", "0123456789");
	c->a = th_walk(c->fs, c->root, "f", &err);
	c->b = th_walk(c->fs, c->root, "f", &err);
	assert_int_equal(th_lopen(c->fs, c->a, NP_L_O_RDWR), 0);
	assert_int_equal(th_lopen(c->fs, c->b, NP_L_O_RDWR), 0);
	*state = c;
	return 0;
}

static int teardown(void **state)
{
	struct ctx *c = *state;
	if (c->a)
		th_fid_release(c->a);
	if (c->b)
		th_fid_release(c->b);
	th_fid_release(c->root);
	np_ramfs_free(c->fs);
	free(c);
	return 0;
}

#define RD NP_LOCK_TYPE_RDLCK
#define WR NP_LOCK_TYPE_WRLCK
#define UN NP_LOCK_TYPE_UNLCK

static uint8_t lk(struct ctx *c, np_fid *f, uint8_t type, uint64_t start, uint64_t len, uint32_t proc,
		  const char *client)
{
	uint8_t st = 0xff;
	assert_int_equal(th_lock(c->fs, f, type, start, len, proc, client, &st), 0);
	return st;
}

static void test_conflicts(void **state)
{
	struct ctx *c = *state;
	/* shared locks coexist; an exclusive one conflicts */
	assert_int_equal(lk(c, c->a, RD, 0, 100, 1, "hostA"), NP_LOCK_SUCCESS);
	assert_int_equal(lk(c, c->b, RD, 50, 100, 2, "hostA"), NP_LOCK_SUCCESS);
	assert_int_equal(lk(c, c->b, WR, 90, 5, 2, "hostA"), NP_LOCK_BLOCKED);
	/* same pid on another host is another owner */
	assert_int_equal(lk(c, c->b, WR, 0, 1, 1, "hostB"), NP_LOCK_BLOCKED);
	/* past the other owners' ranges: fine */
	assert_int_equal(lk(c, c->b, WR, 150, 10, 2, "hostA"), NP_LOCK_SUCCESS);
	/* the owner upgrades its own shared lock when nobody else holds it */
	assert_int_equal(lk(c, c->a, WR, 0, 50, 1, "hostA"), NP_LOCK_SUCCESS);
	/* length 0: to end of file, conflicts with everything after */
	assert_int_equal(lk(c, c->b, RD, 1000, 0, 3, "hostC"), NP_LOCK_SUCCESS);
	assert_int_equal(lk(c, c->a, WR, 1u << 30, 1, 1, "hostA"), NP_LOCK_BLOCKED);
	uint8_t st;
	assert_int_equal(th_lock(c->fs, c->a, 7, 0, 1, 1, "hostA", &st), EINVAL);

	np_fcall g;
	assert_int_equal(th_getlock(c->fs, c->b, WR, 10, 5, 9, "hostZ", &g), 0);
	assert_int_equal(g.rgetlock.type, WR);
	assert_int_equal(g.rgetlock.start, 0);
	assert_int_equal(g.rgetlock.length, 50);
	assert_int_equal(g.rgetlock.proc_id, 1);
	assert_true(np_str_eq(g.rgetlock.client_id, "hostA"));
	assert_int_equal(th_getlock(c->fs, c->b, WR, 5000, 0, 9, "hostZ", &g), 0);
	assert_int_equal(g.rgetlock.type, RD);
	assert_int_equal(g.rgetlock.length, 0);
	/* no conflict: UNLCK and the request echoed */
	assert_int_equal(th_getlock(c->fs, c->b, RD, 160, 5, 9, "hostZ", &g), 0);
	assert_int_equal(g.rgetlock.type, UN);
	assert_int_equal(g.rgetlock.start, 160);
	/* one's own locks never conflict */
	assert_int_equal(th_getlock(c->fs, c->a, WR, 0, 50, 1, "hostA", &g), 0);
	assert_int_equal(g.rgetlock.type, UN);
}

static void test_unlock_split(void **state)
{
	struct ctx *c = *state;
	np_fcall g;
	assert_int_equal(lk(c, c->a, WR, 0, 100, 1, "h"), NP_LOCK_SUCCESS);
	/* punch a hole in the middle: [0,40) and [60,100) stay locked */
	assert_int_equal(lk(c, c->a, UN, 40, 20, 1, "h"), NP_LOCK_SUCCESS);
	assert_int_equal(lk(c, c->b, WR, 40, 20, 2, "h"), NP_LOCK_SUCCESS);
	assert_int_equal(lk(c, c->b, WR, 39, 1, 2, "h"), NP_LOCK_BLOCKED);
	assert_int_equal(lk(c, c->b, WR, 60, 1, 2, "h"), NP_LOCK_BLOCKED);
	assert_int_equal(th_getlock(c->fs, c->b, RD, 70, 1, 2, "h", &g), 0);
	assert_int_equal(g.rgetlock.start, 60);
	assert_int_equal(g.rgetlock.length, 40);
	assert_int_equal(th_getlock(c->fs, c->b, RD, 0, 1, 2, "h", &g), 0);
	assert_int_equal(g.rgetlock.start, 0);
	assert_int_equal(g.rgetlock.length, 40);
	/* trim both ends */
	assert_int_equal(lk(c, c->a, UN, 0, 10, 1, "h"), NP_LOCK_SUCCESS);
	assert_int_equal(lk(c, c->a, UN, 90, 0, 1, "h"), NP_LOCK_SUCCESS);
	assert_int_equal(lk(c, c->b, WR, 0, 10, 3, "x"), NP_LOCK_SUCCESS);
	assert_int_equal(lk(c, c->b, WR, 90, 50, 3, "x"), NP_LOCK_SUCCESS);
	assert_int_equal(th_getlock(c->fs, c->b, WR, 60, 30, 9, "y", &g), 0);
	assert_int_equal(g.rgetlock.proc_id, 1); /* [60,90) still held by 1 */
	assert_int_equal(g.rgetlock.start, 60);
	assert_int_equal(g.rgetlock.length, 30);
	/* downgrade part of a write lock to read: others may share that part */
	assert_int_equal(lk(c, c->a, RD, 60, 10, 1, "h"), NP_LOCK_SUCCESS);
	assert_int_equal(lk(c, c->b, RD, 60, 10, 4, "z"), NP_LOCK_SUCCESS);
	assert_int_equal(lk(c, c->b, RD, 70, 1, 4, "z"), NP_LOCK_BLOCKED);
}

static void test_release_on_destroy(void **state)
{
	struct ctx *c = *state;
	int err;
	np_fid *a2 = th_walk(c->fs, c->root, "f", &err);
	assert_int_equal(th_lopen(c->fs, a2, NP_L_O_RDONLY), 0);
	assert_int_equal(lk(c, c->a, WR, 0, 10, 1, "h"), NP_LOCK_SUCCESS);
	assert_int_equal(lk(c, a2, RD, 100, 10, 5, "h"), NP_LOCK_SUCCESS);
	assert_int_equal(lk(c, c->b, WR, 5, 1, 2, "h"), NP_LOCK_BLOCKED);
	th_clunk(c->fs, c->a);
	c->a = NULL;
	/* a's locks are gone, a2's stay */
	assert_int_equal(lk(c, c->b, WR, 5, 1, 2, "h"), NP_LOCK_SUCCESS);
	assert_int_equal(lk(c, c->b, WR, 105, 1, 2, "h"), NP_LOCK_BLOCKED);
	th_clunk(c->fs, a2);
	assert_int_equal(lk(c, c->b, WR, 105, 1, 2, "h"), NP_LOCK_SUCCESS);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_conflicts, setup, teardown),
		cmocka_unit_test_setup_teardown(test_unlock_split, setup, teardown),
		cmocka_unit_test_setup_teardown(test_release_on_destroy, setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}

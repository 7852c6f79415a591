/* ramfs extended attributes: xattrwalk (value and name list), xattrcreate
 * with XATTR_CREATE/XATTR_REPLACE committed at clunk, removal by size 0. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/xattr.h>

#include <cmocka.h>

#include "harness.h"

/* setxattr as the Linux client does it: a fid walked from f, xattrcreate,
 * writes, clunk. */
static int set_x(np_ramfs *fs, np_fid *f, const char *name, const char *val, uint32_t flags)
{
	int err;
	uint32_t n;
	np_fid *x = th_walk(fs, f, "", &err);
	size_t len = val ? strlen(val) : 0;
	err = th_xattrcreate(fs, x, name, len, flags);
	if (err) {
		th_fid_release(x);
		return err;
	}
	/* two writes, to check offsets */
	if (len > 1) {
		assert_int_equal(th_write(fs, x, 0, val, 1, &n), 0);
		assert_int_equal(th_write(fs, x, 1, val + 1, (uint32_t)len - 1, &n), 0);
	} else if (len) {
		assert_int_equal(th_write(fs, x, 0, val, 1, &n), 0);
	}
	return th_clunk(fs, x);
}

static int get_x(np_ramfs *fs, np_fid *f, const char *name, char *out, size_t cap, uint64_t *size)
{
	int err;
	uint32_t n;
	np_fid *x = th_xattrwalk(fs, f, name, size, &err);
	if (!x)
		return err;
	assert_true(*size < cap);
	assert_int_equal(th_read(fs, x, 0, out, (uint32_t)cap, &n), 0);
	assert_int_equal(n, *size);
	th_clunk(fs, x);
	return 0;
}

static void test_xattrs(void **state)
{
	(void)state;
	int err;
	char buf[256];
	uint64_t sz;
	np_ramfs *fs = np_ramfs_new(NULL);
	np_fid *r = th_attach(fs, 0, "", &err);
	th_put(fs, r, "f", "data");
	np_fid *f = th_walk(fs, r, "f", &err);

	assert_int_equal(get_x(fs, f, "user.a", buf, sizeof(buf), &sz), ENODATA);
	assert_int_equal(set_x(fs, f, "user.a", "alpha", 0), 0);
	assert_int_equal(get_x(fs, f, "user.a", buf, sizeof(buf), &sz), 0);
	assert_int_equal(sz, 5);
	assert_memory_equal(buf, "alpha", 5);
	/* XATTR_CREATE on an existing name, XATTR_REPLACE on a missing one */
	assert_int_equal(set_x(fs, f, "user.a", "x", XATTR_CREATE), EEXIST);
	assert_int_equal(set_x(fs, f, "user.b", "x", XATTR_REPLACE), ENODATA);
	assert_int_equal(set_x(fs, f, "user.a", "beta!", XATTR_REPLACE), 0);
	assert_int_equal(get_x(fs, f, "user.a", buf, sizeof(buf), &sz), 0);
	assert_memory_equal(buf, "beta!", 5);
	assert_int_equal(set_x(fs, f, "user.b", "bb", XATTR_CREATE), 0);
	/* an empty value created explicitly */
	assert_int_equal(set_x(fs, f, "user.empty", NULL, XATTR_CREATE), 0);
	assert_int_equal(get_x(fs, f, "user.empty", buf, sizeof(buf), &sz), 0);
	assert_int_equal(sz, 0);

	/* the list: NUL-separated names */
	assert_int_equal(get_x(fs, f, "", buf, sizeof(buf), &sz), 0);
	assert_int_equal(sz, strlen("user.a") + strlen("user.b") + strlen("user.empty") + 3);
	int seen = 0;
	for (size_t p = 0; p < sz; p += strlen(buf + p) + 1) {
		seen += !strcmp(buf + p, "user.a") + !strcmp(buf + p, "user.b") +
			!strcmp(buf + p, "user.empty");
	}
	assert_int_equal(seen, 3);

	/* removal: size 0 with XATTR_REPLACE (removexattr) */
	assert_int_equal(set_x(fs, f, "user.b", NULL, XATTR_REPLACE), 0);
	assert_int_equal(get_x(fs, f, "user.b", buf, sizeof(buf), &sz), ENODATA);
	assert_int_equal(set_x(fs, f, "user.b", NULL, XATTR_REPLACE), ENODATA);
	assert_int_equal(set_x(fs, f, "user.a", NULL, 0), 0);
	assert_int_equal(get_x(fs, f, "user.a", buf, sizeof(buf), &sz), ENODATA);

	/* a short write is refused at clunk; a write past attr_size too */
	np_fid *x = th_walk(fs, f, "", &err);
	uint32_t n;
	assert_int_equal(th_xattrcreate(fs, x, "user.short", 4, 0), 0);
	assert_int_equal(th_write(fs, x, 0, "abcdef", 6, &n), ENOSPC);
	assert_int_equal(th_write(fs, x, 0, "ab", 2, &n), 0);
	assert_int_equal(th_clunk(fs, x), EINVAL);
	assert_int_equal(get_x(fs, f, "user.short", buf, sizeof(buf), &sz), ENODATA);
	/* bad sizes and names */
	x = th_walk(fs, f, "", &err);
	assert_int_equal(th_xattrcreate(fs, x, "user.big", 65537, 0), E2BIG);
	assert_int_equal(th_xattrcreate(fs, x, "", 1, 0), EINVAL);
	char longname[300];
	memset(longname, 'n', sizeof(longname) - 1);
	longname[sizeof(longname) - 1] = '\0';
	assert_int_equal(th_xattrcreate(fs, x, longname, 1, 0), ERANGE);
	assert_int_equal(th_xattrcreate(fs, x, "user.q", 1, 0x10), EINVAL);
	th_clunk(fs, x);
	/* a non-owner without write permission */
	np_fid *u = th_attach(fs, 1000, "", &err);
	np_fid *uf = th_walk(fs, u, "f", &err);
	assert_int_equal(set_x(fs, uf, "user.u", "v", 0), EACCES);
	th_fid_release(uf);
	th_fid_release(u);
	/* xattrs on a directory, and removal with the node */
	assert_int_equal(set_x(fs, r, "user.dir", "d", 0), 0);
	assert_int_equal(get_x(fs, r, "user.dir", buf, sizeof(buf), &sz), 0);
	assert_int_equal(sz, 1);
	th_fid_release(f);
	assert_int_equal(th_unlinkat(fs, r, "f", 0), 0);
	th_fid_release(r);
	np_ramfs_free(fs);
}

/* The reading fid holds a snapshot: a change after xattrwalk does not
 * alter what it reads. */
static void test_xattr_snapshot(void **state)
{
	(void)state;
	int err;
	uint64_t sz;
	uint32_t n;
	char buf[16];
	np_ramfs *fs = np_ramfs_new(NULL);
	np_fid *r = th_attach(fs, 0, "", &err);
	assert_int_equal(set_x(fs, r, "user.k", "before", 0), 0);
	np_fid *x = th_xattrwalk(fs, r, "user.k", &sz, &err);
	assert_non_null(x);
	assert_int_equal(set_x(fs, r, "user.k", "after!", 0), 0);
	assert_int_equal(th_read(fs, x, 2, buf, sizeof(buf), &n), 0);
	assert_int_equal(n, 4);
	assert_memory_equal(buf, "fore", 4);
	th_clunk(fs, x);
	th_fid_release(r);
	np_ramfs_free(fs);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_xattrs),
		cmocka_unit_test(test_xattr_snapshot),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}

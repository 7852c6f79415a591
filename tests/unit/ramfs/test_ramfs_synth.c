/* ramfs synthetic files: the embedding API, callbacks, per-open state,
 * NP_ASYNC pass-through, static files. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "harness.h"

struct counter {
	int opens, clunks, reads, writes;
	char last[64];
	np_req *pending;
};

static int c_open(np_req *r, void *arg, uint32_t flags)
{
	struct counter *c = arg;
	(void)flags;
	c->opens++;
	int *st = malloc(sizeof(int));
	*st = c->opens;
	*np_synth_state(r) = st;
	return 0;
}

static int c_read(np_req *r, void *arg, uint64_t off, uint8_t *buf, uint32_t count, uint32_t *got)
{
	struct counter *c = arg;
	char text[64];
	int len = snprintf(text, sizeof(text), "open %d reads %d\n", *(int *)*np_synth_state(r), ++c->reads);
	if (off >= (uint64_t)len) {
		*got = 0;
		return 0;
	}
	uint32_t n = (uint32_t)len - (uint32_t)off < count ? (uint32_t)len - (uint32_t)off : count;
	memcpy(buf, text + off, n);
	*got = n;
	return 0;
}

static int c_write(np_req *r, void *arg, uint64_t off, const uint8_t *data, uint32_t count,
		   uint32_t *wrote)
{
	struct counter *c = arg;
	(void)r;
	(void)off;
	if (count >= sizeof(c->last))
		return EMSGSIZE;
	memcpy(c->last, data, count);
	c->last[count] = '\0';
	c->writes++;
	*wrote = count;
	return 0;
}

static void c_clunk(void *arg, void *state)
{
	struct counter *c = arg;
	c->clunks++;
	free(state);
}

static const struct np_synth_ops counter_ops = {c_open, c_read, c_write, c_clunk};

static void test_synth_file(void **state)
{
	(void)state;
	int err;
	uint32_t n;
	char buf[128];
	struct counter cnt = {0};
	np_ramfs *fs = np_ramfs_new(NULL);
	assert_int_equal(np_ramfs_add_file(fs, "/sys/kernel/counter", 0666, &counter_ops, &cnt), 0);
	assert_int_equal(np_ramfs_add_file(fs, "/sys/kernel/counter", 0666, &counter_ops, &cnt), -EEXIST);
	assert_int_equal(np_ramfs_add_file(fs, "relative", 0666, &counter_ops, &cnt), -EINVAL);
	assert_int_equal(np_ramfs_add_file(fs, "/sys/kernel/counter/x", 0666, &counter_ops, &cnt), -ENOTDIR);
	assert_int_equal(np_ramfs_mkdir(fs, "/sys/kernel", 0755), 0);
	assert_int_equal(np_ramfs_mkdir(fs, "/", 0755), 0);
	assert_int_equal(np_ramfs_mkdir(fs, "/sys/kernel/counter", 0755), -EEXIST);

	np_fid *r = th_attach(fs, 1000, "", &err);
	np_fid *f = th_walk(fs, r, "sys/kernel/counter", &err);
	assert_non_null(f);
	np_fcall a;
	th_getattr(fs, f, &a);
	assert_int_equal(a.rgetattr.mode, 0100666);
	assert_int_equal(th_lopen(fs, f, NP_L_O_RDWR | NP_L_O_TRUNC), 0);
	assert_int_equal(cnt.opens, 1);
	assert_int_equal(th_read(fs, f, 0, buf, sizeof(buf), &n), 0);
	buf[n] = '\0';
	assert_string_equal(buf, "open 1 reads 1\n");
	/* a small count is honoured */
	assert_int_equal(th_read(fs, f, 5, buf, 1, &n), 0);
	assert_int_equal(n, 1);
	assert_int_equal(buf[0], '1');
	assert_int_equal(th_write(fs, f, 0, "echo hi", 7, &n), 0);
	assert_int_equal(n, 7);
	assert_string_equal(cnt.last, "echo hi");
	static char big[100];
	assert_int_equal(th_write(fs, f, 0, big, sizeof(big), &n), EMSGSIZE);
	/* truncation is accepted and ignored */
	np_fcall s = {0};
	s.tsetattr.valid = NP_SETATTR_SIZE;
	assert_int_equal(th_setattr(fs, f, &s), 0);
	/* a second open has its own state */
	np_fid *g = th_walk(fs, r, "sys/kernel/counter", &err);
	assert_int_equal(th_lopen(fs, g, NP_L_O_RDONLY), 0);
	assert_int_equal(th_read(fs, g, 0, buf, sizeof(buf), &n), 0);
	buf[n] = '\0';
	assert_string_equal(buf, "open 2 reads 3\n");
	th_clunk(fs, g);
	assert_int_equal(cnt.clunks, 1);
	/* unlinked by a client: the open fid keeps working, the node lives on */
	assert_int_equal(th_walk_self(fs, r, "sys/kernel", &(uint16_t){0}), 0);
	assert_int_equal(th_unlinkat(fs, r, "counter", 0), EACCES); /* 0755 root dir */
	np_fid *root0 = th_attach(fs, 0, "/sys/kernel", &err);
	assert_int_equal(th_unlinkat(fs, root0, "counter", 0), 0);
	assert_int_equal(th_read(fs, f, 0, buf, sizeof(buf), &n), 0);
	assert_true(n > 0);
	th_clunk(fs, f);
	assert_int_equal(cnt.clunks, 2);
	/* an unopened fid released: no clunk callback */
	th_fid_release(root0);
	th_fid_release(r);
	assert_int_equal(cnt.clunks, 2);
	np_ramfs_free(fs);
}

static int async_read(np_req *r, void *arg, uint64_t off, uint8_t *buf, uint32_t count, uint32_t *got)
{
	struct counter *c = arg;
	(void)off;
	(void)buf;
	(void)count;
	(void)got;
	c->pending = r;
	return NP_ASYNC;
}

static int bad_open(np_req *r, void *arg, uint32_t flags)
{
	(void)r;
	(void)arg;
	return flags & NP_L_O_TRUNC ? EPERM : 0;
}

static const struct np_synth_ops async_ops = {.open = bad_open, .read = async_read};

static void test_async_and_static(void **state)
{
	(void)state;
	int err;
	uint32_t n;
	char buf[64];
	struct counter cnt = {0};
	np_ramfs *fs = np_ramfs_new(NULL);
	assert_int_equal(np_ramfs_add_file(fs, "/slow", 0444, &async_ops, &cnt), 0);
	assert_int_equal(np_ramfs_add_static(fs, "/etc/motd", 0644, "welcome\n", 8), 0);
	np_fid *r = th_attach(fs, 0, "", &err);

	np_fid *f = th_walk(fs, r, "slow", &err);
	/* an open refused by the callback; a write open refused for lack of a
	 * write callback (even for root) */
	assert_int_equal(th_lopen(fs, f, NP_L_O_RDONLY | NP_L_O_TRUNC), EPERM);
	assert_int_equal(th_lopen(fs, f, NP_L_O_WRONLY), EACCES);
	assert_int_equal(th_lopen(fs, f, NP_L_O_RDONLY), 0);
	np_req req;
	th_req_init(&req, fs, NP_TREAD);
	req.fid = f;
	req.ifcall.tread.count = sizeof(buf);
	req.ofcall.rread.data = (const uint8_t *)buf;
	req.ofcall.rread.count = sizeof(buf);
	assert_int_equal(np_ramfs_ops.read(&req), NP_ASYNC);
	assert_ptr_equal(cnt.pending, &req);
	th_clunk(fs, f);

	f = th_walk(fs, r, "etc/motd", &err);
	np_fcall a;
	th_getattr(fs, f, &a);
	assert_int_equal(a.rgetattr.size, 8);
	assert_int_equal(a.rgetattr.mode, 0100444);
	assert_int_equal(th_lopen(fs, f, NP_L_O_RDWR), EACCES);
	th_fid_release(f);
	assert_int_equal(th_get(fs, r, "etc/motd", buf, sizeof(buf), &n), 0);
	assert_string_equal(buf, "welcome\n");
	th_fid_release(r);
	np_ramfs_free(fs);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_synth_file),
		cmocka_unit_test(test_async_and_static),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}

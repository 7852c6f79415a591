/* The buffer cache's promise, checked end to end: after warm-up, a steady
 * stream of requests through a server connection performs no heap
 * allocation at all (server, backend and the test's own client side). */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "alloc_count.h"
#include "harness.h"
#include "ninep/ramfs.h"

#define STEADY 100000

static struct th *t;
static np_ramfs *fs;
static uint8_t payload[4096];

static void rpc_ok(const np_fcall *f, uint8_t want)
{
	if (th_rpc(t, f) != 0 || t->r.type != want)
		fail_msg("%s: got type %u err %d", np_type_name(f->type), t->r.type, th_err(t));
}

/* One round of the four request kinds the issue names. */
static void round_trip(int i)
{
	np_fcall f;
	switch (i & 3) {
	case 0: /* small write, the kernel discussion's benchmark */
		f = (np_fcall){.type = NP_TWRITE, .tag = 1, .twrite = {2, 0, 16, payload}};
		rpc_ok(&f, NP_RWRITE);
		break;
	case 1:
		f = (np_fcall){.type = NP_TREAD, .tag = 2, .tread = {3, 0, 4096}};
		rpc_ok(&f, NP_RREAD);
		break;
	case 2:
		f = (np_fcall){.type = NP_TGETATTR, .tag = 3, .tgetattr = {2, NP_GETATTR_ALL}};
		rpc_ok(&f, NP_RGETATTR);
		break;
	case 3: {
		f = (np_fcall){.type = NP_TWALK, .tag = 4, .twalk = {1, 10, 1, {np_strz("small")}}};
		rpc_ok(&f, NP_RWALK);
		f = (np_fcall){.type = NP_TCLUNK, .tag = 5, .tclunk = {10}};
		rpc_ok(&f, NP_RCLUNK);
		break;
	}
	}
}

static void open_file(uint32_t fid, const char *name, uint32_t size)
{
	np_fcall f = {.type = NP_TWALK, .tag = 1, .twalk = {1, fid, 0, {{0}}}};
	rpc_ok(&f, NP_RWALK);
	f = (np_fcall){.type = NP_TLCREATE, .tag = 1,
		       .tlcreate = {fid, np_strz(name), NP_L_O_RDWR, 0644, 0}};
	rpc_ok(&f, NP_RLCREATE);
	if (size) {
		f = (np_fcall){.type = NP_TWRITE, .tag = 1, .twrite = {fid, 0, size, payload}};
		rpc_ok(&f, NP_RWRITE);
	}
}

static void test_zero_alloc_steady_state(void **state)
{
	(void)state;
	if (!alloc_count_active())
		skip();
	struct np_ramfs_opts ro = {.noperm = 1};
	fs = np_ramfs_new(&ro);
	struct np_server_opts so = {.loops = 1, .workers = 1, .msize = 65536};
	t = th_start(&np_ramfs_ops, fs, &so);
	assert_non_null(t);
	assert_int_equal(th_version(t, 65536, "9P2000.L"), 0);
	assert_int_equal(th_attach(t, 1, "root", 0, ""), 0);
	memset(payload, 'x', sizeof payload);
	open_file(2, "small", 16);
	open_file(3, "page", 4096);

	for (int i = 0; i < 4000; i++) /* warm-up: pools and free lists fill */
		round_trip(i);

	struct alloc_count a, b;
	alloc_count_snapshot(&a);
	for (int i = 0; i < STEADY; i++)
		round_trip(i);
	alloc_count_snapshot(&b);
	print_message("%d requests: %llu allocations, %llu frees\n", STEADY + STEADY / 4,
		      (unsigned long long)(b.allocs - a.allocs), (unsigned long long)(b.frees - a.frees));
	assert_int_equal(b.allocs - a.allocs, 0);
	assert_int_equal(b.frees - a.frees, 0);
	th_stop(t);
	np_ramfs_free(fs);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_zero_alloc_steady_state),
	};
	return cmocka_run_group_tests_name("alloc", tests, NULL, NULL);
}

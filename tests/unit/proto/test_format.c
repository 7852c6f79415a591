/* np_fcall_format(): exact renderings, escaping, snprintf semantics. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "fcall_samples.h"
#include "golden_frames.h"
#include "ninep/proto.h"

static void expect_format(const char *frame, const char *want)
{
	const struct golden_frame *g = golden_find(frame);
	np_fcall f;
	char out[512];
	assert_non_null(g);
	assert_int_equal(np_decode(g->bytes, g->len, g->dialect, 0, &f, NULL), 0);
	int n = np_fcall_format(out, sizeof out, &f, g->dialect);
	assert_string_equal(out, want);
	assert_int_equal(n, strlen(want));
}

static void test_exact(void **state)
{
	(void)state;
	expect_format("Twalk", "Twalk tag 3 fid 1 newfid 2 nwname 2 'usr' 'lib'");
	expect_format("Twalk.clone", "Twalk tag 5 fid 1 newfid 2 nwname 0");
	expect_format("Tversion", "Tversion tag 65535 msize 8192 '9P2000'");
	expect_format("Rwalk", "Rwalk tag 3 nwqid 2 (80 1 10) (00 7 11)");
	expect_format("Rerror", "Rerror tag 2 'file does not exist'");
	expect_format("Rerror.u", "Rerror tag 2 'No such file or directory' errno 2");
	expect_format("Tattach.L", "Tattach tag 1 fid 1 afid -1 '' '/tmp/9' n_uname 500");
	expect_format("Rlerror", "Rlerror tag 1 ecode 2");
	expect_format("Tread", "Tread tag 7 fid 2 offset 4294967296 count 8168");
	expect_format("Rread", "Rread tag 7 count 6");
	expect_format("Tclunk", "Tclunk tag 9 fid 2");
	expect_format("Rclunk", "Rclunk tag 9");
	expect_format("Tlcreate", "Tlcreate tag 1 fid 2 'foo' flags 0101101 mode 0100644 gid 500");
	expect_format("Tgetattr", "Tgetattr tag 1 fid 0 request_mask 0x7ff");
	expect_format("Tunlinkat", "Tunlinkat tag 1 dirfid 1 'newdir' flags 0x200");
}

static void test_unknown_type(void **state)
{
	(void)state;
	np_fcall f;
	char out[64];
	memset(&f, 0, sizeof f);
	f.type = 99;
	f.tag = 1;
	np_fcall_format(out, sizeof out, &f, NP_9P2000L);
	assert_string_equal(out, "type 99 tag 1");
}

static void format_walk_name(const char *name, size_t len, char *out, size_t cap)
{
	np_fcall f;
	memset(&f, 0, sizeof f);
	f.type = NP_TWALK;
	f.tag = 3;
	f.twalk.fid = 1;
	f.twalk.newfid = 2;
	f.twalk.nwname = 1;
	f.twalk.wname[0] = np_str_make(name, (uint16_t)len);
	np_fcall_format(out, cap, &f, NP_9P2000);
}

/* A hostile name cannot break the line, forge a quote or smuggle escapes. */
static void test_escapes(void **state)
{
	(void)state;
	char out[512];
	format_walk_name("a\nb", 3, out, sizeof out);
	assert_string_equal(out, "Twalk tag 3 fid 1 newfid 2 nwname 1 'a\\x0ab'");
	format_walk_name("it's", 4, out, sizeof out);
	assert_string_equal(out, "Twalk tag 3 fid 1 newfid 2 nwname 1 'it\\x27s'");
	format_walk_name("\\x41", 4, out, sizeof out);
	assert_string_equal(out, "Twalk tag 3 fid 1 newfid 2 nwname 1 '\\x5cx41'");
	format_walk_name("\x1b[2J\r\t\x7f", 7, out, sizeof out);
	assert_string_equal(out, "Twalk tag 3 fid 1 newfid 2 nwname 1 "
				 "'\\x1b[2J\\x0d\\x09\\x7f'");
	/* a NUL is shown, not taken as the end of the string */
	format_walk_name("a\0b", 3, out, sizeof out);
	assert_string_equal(out, "Twalk tag 3 fid 1 newfid 2 nwname 1 'a\\x00b'");
	/* bytes >= 0x80 (UTF-8) pass through */
	format_walk_name("caf\xc3\xa9", 5, out, sizeof out);
	assert_string_equal(out, "Twalk tag 3 fid 1 newfid 2 nwname 1 'caf\xc3\xa9'");
}

static void test_long_strings_cut(void **state)
{
	(void)state;
	char name[100], out[512], want[512];
	memset(name, 'x', sizeof name);
	format_walk_name(name, sizeof name, out, sizeof out);
	snprintf(want, sizeof want, "Twalk tag 3 fid 1 newfid 2 nwname 1 '%.*s'...(100)", 64,
		 name);
	assert_string_equal(out, want);
	format_walk_name(name, 64, out, sizeof out);
	snprintf(want, sizeof want, "Twalk tag 3 fid 1 newfid 2 nwname 1 '%.*s'", 64, name);
	assert_string_equal(out, want);
}

/* snprintf semantics: the return value is the full length whatever the
 * buffer, the output is always terminated, nothing is written past n. */
static void test_truncation(void **state)
{
	(void)state;
	const char *want = "Twalk tag 3 fid 1 newfid 2 nwname 2 'usr' 'lib'";
	size_t wl = strlen(want);
	const struct golden_frame *g = golden_find("Twalk");
	np_fcall f;
	assert_int_equal(np_decode(g->bytes, g->len, g->dialect, 0, &f, NULL), 0);
	assert_int_equal(np_fcall_format(NULL, 0, &f, NP_9P2000), wl);
	for (size_t cap = 1; cap <= wl + 2; cap++) {
		char out[128];
		memset(out, '#', sizeof out);
		assert_int_equal(np_fcall_format(out, cap, &f, NP_9P2000), wl);
		size_t got = strlen(out);
		assert_int_equal(got, cap - 1 < wl ? cap - 1 : wl);
		assert_memory_equal(out, want, got);
		assert_true(out[cap] == '#');
	}
}

/* Every message of every dialect renders as its name, then its tag, on one
 * clean line, and the length matches a second rendering into a NULL buffer. */
static void test_every_type(void **state)
{
	(void)state;
	static const enum np_dialect ds[] = {NP_9P2000, NP_9P2000U, NP_9P2000L};
	for (size_t i = 0; i < fcall_ntypes; i++)
		for (size_t k = 0; k < 3; k++) {
			if (!fcall_type_in_dialect(fcall_types[i], ds[k]))
				continue;
			for (int v = 0; v < FCALL_NVARIANTS; v++) {
				np_fcall f;
				char out[4096], prefix[64];
				fcall_sample(fcall_types[i], v, &f);
				int n = np_fcall_format(out, sizeof out, &f, ds[k]);
				assert_true(n > 0 && (size_t)n < sizeof out);
				assert_int_equal(np_fcall_format(NULL, 0, &f, ds[k]), n);
				assert_int_equal(strlen(out), n);
				snprintf(prefix, sizeof prefix, "%s tag %u", np_type_name(f.type),
					 f.tag);
				assert_memory_equal(out, prefix, strlen(prefix));
				for (int c = 0; c < n; c++)
					assert_true((unsigned char)out[c] >= 0x20 && out[c] != 0x7f);
			}
		}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_exact),
		cmocka_unit_test(test_unknown_type),
		cmocka_unit_test(test_escapes),
		cmocka_unit_test(test_long_strings_cut),
		cmocka_unit_test(test_truncation),
		cmocka_unit_test(test_every_type),
	};
	return cmocka_run_group_tests_name("format", tests, NULL, NULL);
}

/* The small public helpers of the codec: names, dialects, counted strings,
 * error strings, stat and readdir entry helpers. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <errno.h>

#include <cmocka.h>

#include "fcall_samples.h"
#include "ninep/proto.h"

static void test_type_names(void **state)
{
	(void)state;
	for (size_t i = 0; i < fcall_ntypes; i++) {
		const char *n = np_type_name(fcall_types[i]);
		assert_non_null(n);
		assert_true(n[0] == (fcall_types[i] & 1 ? 'R' : 'T'));
		for (size_t j = 0; j < i; j++)
			assert_string_not_equal(n, np_type_name(fcall_types[j]));
	}
	assert_string_equal(np_type_name(NP_TWALK), "Twalk");
	assert_string_equal(np_type_name(NP_RLERROR), "Rlerror");
	assert_string_equal(np_type_name(NP_TGETATTR), "Tgetattr");
	assert_null(np_type_name(0));
	assert_null(np_type_name(99));
	assert_null(np_type_name(128));
	assert_null(np_type_name(255));
}

static void test_dialects(void **state)
{
	(void)state;
	assert_string_equal(np_dialect_name(NP_9P2000), "9P2000");
	assert_string_equal(np_dialect_name(NP_9P2000U), "9P2000.u");
	assert_string_equal(np_dialect_name(NP_9P2000L), "9P2000.L");
	assert_int_equal(np_dialect_parse("9P2000.L", 8), NP_9P2000L);
	assert_int_equal(np_dialect_parse("9P2000.u", 8), NP_9P2000U);
	assert_int_equal(np_dialect_parse("9P2000", 6), NP_9P2000);
	/* version(5): an unknown "9P2000.x" may be answered with 9P2000 */
	assert_int_equal(np_dialect_parse("9P2000.x", 8), NP_9P2000);
	assert_int_equal(np_dialect_parse("9P2000.U", 8), NP_9P2000);
	assert_int_equal(np_dialect_parse("9P2000.L.extra", 14), NP_9P2000);
	/* the length counts, not a NUL */
	assert_int_equal(np_dialect_parse("9P2000.Lxx", 8), NP_9P2000L);
	assert_int_equal(np_dialect_parse("9P2000L", 7), -1);
	assert_int_equal(np_dialect_parse("9P2001", 6), -1);
	assert_int_equal(np_dialect_parse("9P200", 5), -1);
	assert_int_equal(np_dialect_parse("", 0), -1);
	assert_int_equal(np_dialect_parse("unknown", 7), -1);
}

static void test_strings(void **state)
{
	(void)state;
	char buf[8];
	np_str s = np_strz("hello");
	assert_int_equal(s.len, 5);
	assert_int_equal(np_strz(NULL).len, 0);
	assert_true(np_str_eq(s, "hello"));
	assert_false(np_str_eq(s, "hell"));
	assert_false(np_str_eq(s, "hello!"));
	assert_true(np_str_eq(np_str_make(NULL, 0), ""));
	assert_int_equal(np_str_copy(buf, sizeof buf, s), 0);
	assert_string_equal(buf, "hello");
	assert_int_equal(np_str_copy(buf, 6, s), 0);
	assert_int_equal(np_str_copy(buf, 5, s), -ENAMETOOLONG);
	assert_int_equal(np_str_copy(buf, 0, s), -ENAMETOOLONG);
	assert_int_equal(np_str_copy(buf, 1, np_str_make(NULL, 0)), 0);
	assert_string_equal(buf, "");
}

static void test_errstr(void **state)
{
	(void)state;
	static const int errs[] = {EPERM, ENOENT, EIO, EBADF, EACCES, EEXIST, ENOTDIR,
				   EISDIR, EINVAL, ENOSPC, EROFS, ENAMETOOLONG, ENOTEMPTY,
				   ELOOP, ENOTSUP, EMSGSIZE, EPROTO};
	for (size_t i = 0; i < sizeof errs / sizeof errs[0]; i++) {
		const char *s = np_errstr(errs[i]);
		assert_non_null(s);
		int back = np_strerrno(np_strz(s));
		/* EOPNOTSUPP == ENOTSUP on Linux */
		assert_int_equal(back, errs[i]);
	}
	/* Plan 9 spellings map too */
	assert_int_equal(np_strerrno(np_strz("file does not exist")), ENOENT);
	assert_int_equal(np_strerrno(np_strz("permission denied")), EACCES);
	assert_int_equal(np_strerrno(np_strz("no such thing at all")), EIO);
	assert_int_equal(np_strerrno(np_str_make("No such file or directoryX", 25)), ENOENT);
	assert_string_equal(np_errstr(123456), "Input/output error");
}

static void test_stat_helpers(void **state)
{
	(void)state;
	static const enum np_dialect ds[] = {NP_9P2000, NP_9P2000U, NP_9P2000L};
	np_fcall f;
	uint8_t buf[2048];
	fcall_sample(NP_RSTAT, 0, &f);
	const np_stat *st = &f.rstat.stat;
	for (size_t k = 0; k < 3; k++) {
		size_t n = np_stat_size(st, ds[k]);
		assert_int_equal(np_stat_encode(st, ds[k], buf, sizeof buf), n);
		assert_int_equal(buf[0] | buf[1] << 8, n - 2);
		for (size_t cap = 0; cap < n; cap++)
			assert_int_equal(np_stat_encode(st, ds[k], buf, cap), 0);
		np_stat_encode(st, ds[k], buf, sizeof buf);
		np_stat d;
		assert_int_equal(np_stat_decode(buf, n, ds[k], &d), (long)n);
		assert_true(np_str_eq(d.name, "name") && np_str_eq(d.muid, "muid"));
		assert_int_equal(d.length, st->length);
		if (ds[k] == NP_9P2000) {
			assert_int_equal(d.n_uid, NP_NONUNAME);
		} else {
			assert_true(np_str_eq(d.extension, "ext"));
			assert_int_equal(d.n_muid, 1002);
		}
		/* a directory read holds stats back to back */
		memcpy(buf + n, buf, n);
		assert_int_equal(np_stat_decode(buf, 2 * n, ds[k], &d), (long)n);
		assert_int_equal(np_stat_decode(buf + n, n, ds[k], &d), (long)n);
	}
}

static void test_dirent_helpers(void **state)
{
	(void)state;
	uint8_t buf[256];
	np_dirent in[3] = {
		{{NP_QTDIR, 1, 2}, 1, 4, {".", 1}},
		{{NP_QTFILE, 3, 0xffffffffffffffffull}, 0x7fffffffffffffffull, 8, {"file", 4}},
		{{NP_QTSYMLINK, 0, 5}, 3, 10, {"", 0}},
	};
	size_t pos = 0;
	for (int i = 0; i < 3; i++) {
		size_t want = 13 + 8 + 1 + 2 + in[i].name.len;
		for (size_t cap = 0; cap < want; cap++)
			assert_int_equal(np_dirent_encode(buf + pos, cap, &in[i]), 0);
		assert_int_equal(np_dirent_encode(buf + pos, sizeof buf - pos, &in[i]), want);
		pos += want;
	}
	uint32_t at = 0;
	np_dirent de;
	for (int i = 0; i < 3; i++) {
		assert_int_equal(np_dirent_next(buf, (uint32_t)pos, &at, &de), 1);
		assert_int_equal(de.qid.type, in[i].qid.type);
		assert_int_equal(de.qid.version, in[i].qid.version);
		assert_int_equal(de.qid.path, in[i].qid.path);
		assert_int_equal(de.offset, in[i].offset);
		assert_int_equal(de.type, in[i].type);
		assert_int_equal(de.name.len, in[i].name.len);
		assert_memory_equal(de.name.s, in[i].name.s, in[i].name.len);
	}
	assert_int_equal(at, pos);
	assert_int_equal(np_dirent_next(buf, (uint32_t)pos, &at, &de), 0);
	/* a position past the end is the end, not an overread */
	at = (uint32_t)pos + 100;
	assert_int_equal(np_dirent_next(buf, (uint32_t)pos, &at, &de), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_type_names),
		cmocka_unit_test(test_dialects),
		cmocka_unit_test(test_strings),
		cmocka_unit_test(test_errstr),
		cmocka_unit_test(test_stat_helpers),
		cmocka_unit_test(test_dirent_helpers),
	};
	return cmocka_run_group_tests_name("helpers", tests, NULL, NULL);
}

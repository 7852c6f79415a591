/* Round trips of every message type in every dialect it exists in:
 * encode -> decode -> compare every field -> re-encode -> same bytes, plus
 * the encoder's size accounting and its refusal of what it cannot send. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <errno.h>

#include <cmocka.h>

#include "fcall_compare.h"
#include "fcall_samples.h"
#include "ninep/proto.h"

#define MSIZE (1u << 20)

static const enum np_dialect dialects[] = {NP_9P2000, NP_9P2000U, NP_9P2000L};

static void fail_diff(const np_fcall *f, enum np_dialect d, int v, const char *what,
		      const char *field)
{
	fail_msg("%s %s variant %d: %s (%s)", np_type_name(f->type), np_dialect_name(d), v,
		 what, field ? field : "");
}

/* The whole cycle for one message; returns the frame length. */
static size_t roundtrip(const np_fcall *f, enum np_dialect d, int v, uint32_t msize)
{
	long n = np_fcall_size(f, d);
	if (n <= 0)
		fail_diff(f, d, v, "np_fcall_size failed", NULL);
	/* exactly n bytes, so ASan sees any write past the frame */
	uint8_t *buf = malloc((size_t)n);
	uint8_t *buf2 = malloc((size_t)n);
	assert_non_null(buf);
	assert_non_null(buf2);
	int r = np_encode(f, d, buf, (size_t)n);
	if (r != n)
		fail_diff(f, d, v, "encode length differs from np_fcall_size", NULL);
	assert_int_equal(np_frame_size(buf), n);
	assert_int_equal(buf[4], f->type);
	assert_int_equal(buf[5] | buf[6] << 8, f->tag);

	np_fcall g;
	np_decode_error e = {0};
	memset(&g, 0xcc, sizeof g);
	r = np_decode(buf, (size_t)n, d, msize, &g, &e);
	if (r != 0)
		fail_diff(f, d, v, "decode failed", e.field);
	const char *field = fcall_diff(f, &g, d);
	if (field)
		fail_diff(f, d, v, "decoded field differs", field);

	r = np_encode(&g, d, buf2, (size_t)n);
	if (r != n || memcmp(buf, buf2, (size_t)n) != 0)
		fail_diff(f, d, v, "re-encoding differs", NULL);
	free(buf);
	free(buf2);
	return (size_t)n;
}

static void test_every_type_every_dialect(void **state)
{
	(void)state;
	size_t cycles = 0;
	for (size_t i = 0; i < fcall_ntypes; i++) {
		for (size_t k = 0; k < 3; k++) {
			enum np_dialect d = dialects[k];
			if (!fcall_type_in_dialect(fcall_types[i], d))
				continue;
			assert_true(np_type_valid(fcall_types[i], d));
			for (int v = 0; v < FCALL_NVARIANTS; v++) {
				np_fcall f;
				assert_int_equal(fcall_sample(fcall_types[i], v, &f), 0);
				roundtrip(&f, d, v, MSIZE);
				cycles++;
			}
		}
	}
	/* 27 messages of 9P2000 in 3 dialects, 39 of .L in one, 3 variants */
	assert_int_equal(cycles, (27 * 3 + 39) * FCALL_NVARIANTS);
}

/* The .u/.L extension fields are on the wire exactly when the dialect has
 * them: the same message is 4 bytes (n_uname, errno) or 2 bytes + string
 * (extension) longer. */
static void test_dotu_fields_size(void **state)
{
	(void)state;
	np_fcall f;
	fcall_sample(NP_TATTACH, 0, &f);
	assert_int_equal(np_fcall_size(&f, NP_9P2000U), np_fcall_size(&f, NP_9P2000) + 4);
	assert_int_equal(np_fcall_size(&f, NP_9P2000L), np_fcall_size(&f, NP_9P2000) + 4);
	fcall_sample(NP_TAUTH, 0, &f);
	assert_int_equal(np_fcall_size(&f, NP_9P2000U), np_fcall_size(&f, NP_9P2000) + 4);
	fcall_sample(NP_RERROR, 0, &f);
	assert_int_equal(np_fcall_size(&f, NP_9P2000U), np_fcall_size(&f, NP_9P2000) + 4);
	fcall_sample(NP_TCREATE, 0, &f);
	assert_int_equal(np_fcall_size(&f, NP_9P2000U),
			 np_fcall_size(&f, NP_9P2000) + 2 + f.tcreate.extension.len);
	fcall_sample(NP_RSTAT, 0, &f);
	assert_int_equal(np_fcall_size(&f, NP_9P2000U),
			 np_fcall_size(&f, NP_9P2000) + 2 + f.rstat.stat.extension.len + 12);
	assert_int_equal(np_stat_size(&f.rstat.stat, NP_9P2000U),
			 np_stat_size(&f.rstat.stat, NP_9P2000) + 2 + f.rstat.stat.extension.len + 12);
}

/* Plain 9P2000 decoding fills the absent .u fields with "none". */
static void test_dotu_defaults_in_9p2000(void **state)
{
	(void)state;
	uint8_t buf[512];
	np_fcall f, g;
	fcall_sample(NP_TATTACH, 0, &f);
	int n = np_encode(&f, NP_9P2000, buf, sizeof buf);
	assert_true(n > 0);
	assert_int_equal(np_decode(buf, (size_t)n, NP_9P2000, 0, &g, NULL), 0);
	assert_int_equal(g.tattach.n_uname, NP_NONUNAME);
	fcall_sample(NP_RERROR, 0, &f);
	n = np_encode(&f, NP_9P2000, buf, sizeof buf);
	assert_int_equal(np_decode(buf, (size_t)n, NP_9P2000, 0, &g, NULL), 0);
	assert_int_equal(g.rerror.ecode, 0);
	fcall_sample(NP_TCREATE, 0, &f);
	n = np_encode(&f, NP_9P2000, buf, sizeof buf);
	assert_int_equal(np_decode(buf, (size_t)n, NP_9P2000, 0, &g, NULL), 0);
	assert_int_equal(g.tcreate.extension.len, 0);
	fcall_sample(NP_TWSTAT, 0, &f);
	n = np_encode(&f, NP_9P2000, buf, sizeof buf);
	assert_int_equal(np_decode(buf, (size_t)n, NP_9P2000, 0, &g, NULL), 0);
	assert_int_equal(g.twstat.stat.extension.len, 0);
	assert_int_equal(g.twstat.stat.n_uid, NP_NONUNAME);
	assert_int_equal(g.twstat.stat.n_gid, NP_NONUNAME);
	assert_int_equal(g.twstat.stat.n_muid, NP_NONUNAME);
}

/* Encoding into every buffer size below the frame length fails with
 * -EMSGSIZE and writes nothing past the given capacity. */
static void test_encode_too_small(void **state)
{
	(void)state;
	enum { CANARY = 0xa5, SLACK = 16 };
	for (size_t i = 0; i < fcall_ntypes; i++) {
		for (size_t k = 0; k < 3; k++) {
			enum np_dialect d = dialects[k];
			if (!fcall_type_in_dialect(fcall_types[i], d))
				continue;
			for (int v = 0; v < FCALL_NVARIANTS; v++) {
				np_fcall f;
				fcall_sample(fcall_types[i], v, &f);
				long n = np_fcall_size(&f, d);
				assert_true(n >= NP_HDRSZ);
				uint8_t *buf = malloc((size_t)n + SLACK);
				uint8_t *ref = malloc((size_t)n + SLACK);
				memset(buf, CANARY, (size_t)n + SLACK);
				memset(ref, CANARY, (size_t)n + SLACK);
				for (size_t cap = 0; cap < (size_t)n; cap++) {
					int r = np_encode(&f, d, buf, cap);
					if (r != -EMSGSIZE)
						fail_msg("%s %s v%d cap %zu: %d", np_type_name(f.type),
							 np_dialect_name(d), v, cap, r);
					if (memcmp(buf + cap, ref, (size_t)n + SLACK - cap) != 0)
						fail_msg("%s cap %zu: wrote past the buffer",
							 np_type_name(f.type), cap);
				}
				assert_int_equal(np_encode(&f, d, buf, (size_t)n), n);
				assert_memory_equal(buf + n, ref, SLACK);
				free(buf);
				free(ref);
			}
		}
	}
}

/* Types a dialect does not have are refused by encode and size alike. */
static void test_encode_wrong_dialect(void **state)
{
	(void)state;
	uint8_t buf[16384];
	np_fcall f;
	for (size_t i = 0; i < fcall_ntypes; i++) {
		fcall_sample(fcall_types[i], 0, &f);
		for (size_t k = 0; k < 3; k++) {
			if (fcall_type_in_dialect(fcall_types[i], dialects[k]))
				continue;
			assert_false(np_type_valid(fcall_types[i], dialects[k]));
			assert_int_equal(np_encode(&f, dialects[k], buf, sizeof buf), -EINVAL);
			assert_int_equal(np_fcall_size(&f, dialects[k]), -EINVAL);
		}
	}
	/* never sendable: Terror, Tlerror, gaps in the numbering, > 127 */
	static const uint8_t bogus[] = {0, 1, 5, NP_TLERROR, 10, 11, 28, 29, 34, 39, 42,
					49, 56, 69, 78, 99, NP_TERROR, 128, 200, 255};
	memset(&f, 0, sizeof f);
	for (size_t i = 0; i < sizeof bogus; i++) {
		f.type = bogus[i];
		for (size_t k = 0; k < 3; k++) {
			assert_int_equal(np_encode(&f, dialects[k], buf, sizeof buf), -EINVAL);
			assert_int_equal(np_fcall_size(&f, dialects[k]), -EINVAL);
		}
	}
}

static void test_encode_walk_limits(void **state)
{
	(void)state;
	uint8_t buf[1024];
	np_fcall f;
	fcall_sample(NP_TWALK, 0, &f);
	f.twalk.nwname = NP_MAXWELEM + 1;
	assert_int_equal(np_encode(&f, NP_9P2000L, buf, sizeof buf), -EINVAL);
	assert_int_equal(np_fcall_size(&f, NP_9P2000L), -EINVAL);
	fcall_sample(NP_RWALK, 0, &f);
	f.rwalk.nwqid = 0xffff;
	assert_int_equal(np_encode(&f, NP_9P2000, buf, sizeof buf), -EINVAL);
	assert_int_equal(np_fcall_size(&f, NP_9P2000), -EINVAL);
}

/* Payloads (and a readlink target) already in place in the output buffer
 * are not copied over themselves, and the result is the same frame. */
static void test_encode_in_place(void **state)
{
	(void)state;
	uint8_t a[8192], b[8192];
	np_fcall f;
	fcall_sample(NP_TWRITE, 0, &f);
	int n = np_encode(&f, NP_9P2000L, a, sizeof a);
	assert_true(n > 0);
	memcpy(b + NP_TWRITE_DATA, f.twrite.data, f.twrite.count);
	f.twrite.data = b + NP_TWRITE_DATA;
	assert_int_equal(np_encode(&f, NP_9P2000L, b, sizeof b), n);
	assert_memory_equal(a, b, (size_t)n);

	fcall_sample(NP_RREAD, 0, &f);
	n = np_encode(&f, NP_9P2000L, a, sizeof a);
	memcpy(b + NP_RREAD_DATA, f.rread.data, f.rread.count);
	f.rread.data = b + NP_RREAD_DATA;
	assert_int_equal(np_encode(&f, NP_9P2000L, b, sizeof b), n);
	assert_memory_equal(a, b, (size_t)n);

	/* Rreadlink: size[4] type[1] tag[2] len[2] target */
	fcall_sample(NP_RREADLINK, 0, &f);
	n = np_encode(&f, NP_9P2000L, a, sizeof a);
	memcpy(b + 9, f.rreadlink.target.s, f.rreadlink.target.len);
	f.rreadlink.target.s = (const char *)b + 9;
	assert_int_equal(np_encode(&f, NP_9P2000L, b, sizeof b), n);
	assert_memory_equal(a, b, (size_t)n);
}

/* Strings of the maximum length (65535) survive a round trip. */
static void test_max_strings(void **state)
{
	(void)state;
	char *big = malloc(0xffff);
	memset(big, 'z', 0xffff);
	np_fcall f;
	memset(&f, 0, sizeof f);
	f.type = NP_RREADLINK;
	f.tag = 9;
	f.rreadlink.target = np_str_make(big, 0xffff);
	assert_int_equal(roundtrip(&f, NP_9P2000L, 0, 0), 7 + 2 + 0xffff);

	memset(&f, 0, sizeof f);
	f.type = NP_TWALK;
	f.twalk.nwname = NP_MAXWELEM;
	for (int i = 0; i < NP_MAXWELEM; i++)
		f.twalk.wname[i] = np_str_make(big, 0xffff);
	assert_int_equal(roundtrip(&f, NP_9P2000, 0, 0), 17 + NP_MAXWELEM * (2 + 0xffff));
	free(big);
}

/* A stat is limited twice: its own size[2] and, in Rstat/Twstat, the n[2]
 * in front of it.  Encoding must refuse a stat whose total does not fit in
 * n[2] instead of sending a frame no one can decode. */
static void test_stat_limits(void **state)
{
	(void)state;
	char *big = calloc(1, 0x10000);
	memset(big, 'n', 0x10000);
	np_fcall f;
	uint8_t *buf = malloc(0x20000);
	memset(&f, 0, sizeof f);
	f.type = NP_RSTAT;
	/* empty 9P2000 stat: 2+2+4+13+4+4+4+8 + 4*2 = 49 bytes */
	f.rstat.stat.name = np_str_make(big, 0);
	assert_int_equal(np_stat_size(&f.rstat.stat, NP_9P2000), 49);
	/* the largest stat n[2] can describe */
	f.rstat.stat.name.len = 0xffff - 49;
	assert_int_equal(roundtrip(&f, NP_9P2000, 0, 0), 7 + 2 + 0xffff);
	/* one byte more: the stat's own size (0xfffe) still fits, n does not */
	f.rstat.stat.name.len = 0xffff - 49 + 1;
	assert_int_equal(np_encode(&f, NP_9P2000, buf, 0x20000), -EINVAL);
	assert_int_equal(np_fcall_size(&f, NP_9P2000), -EINVAL);
	f.rstat.stat.name.len = 0xffff - 49 + 2;
	assert_int_equal(np_encode(&f, NP_9P2000, buf, 0x20000), -EINVAL);
	f.rstat.stat.name.len = 0xffff;
	f.rstat.stat.uid = np_str_make(big, 0xffff);
	assert_int_equal(np_encode(&f, NP_9P2000, buf, 0x20000), -EINVAL);

	memset(&f, 0, sizeof f);
	f.type = NP_TWSTAT;
	f.twstat.stat.extension = np_str_make(big, 0xffff - 49 - 14 + 1);
	assert_int_equal(np_encode(&f, NP_9P2000U, buf, 0x20000), -EINVAL);
	f.twstat.stat.extension.len--;
	assert_int_equal(roundtrip(&f, NP_9P2000U, 0, 0), 7 + 4 + 2 + 0xffff);
	/* the same stat is 14 bytes smaller on a 9P2000 wire */
	assert_int_equal(roundtrip(&f, NP_9P2000, 0, 0), 7 + 4 + 2 + 0xffff - 14 - f.twstat.stat.extension.len);
	free(buf);
	free(big);
}

/* Frames beyond what size[4] can express are not encodable; np_fcall_size
 * reports large but legal frames exactly. */
static void test_size_limits(void **state)
{
	(void)state;
	np_fcall f;
	memset(&f, 0, sizeof f);
	f.type = NP_TWRITE;
	f.twrite.count = 0x80000000u;
	assert_int_equal(np_fcall_size(&f, NP_9P2000L), 0x80000000l + NP_TWRITE_DATA);
	f.twrite.count = UINT32_MAX - NP_TWRITE_DATA;
	assert_int_equal(np_fcall_size(&f, NP_9P2000L), (long)UINT32_MAX);
	f.twrite.count = UINT32_MAX - NP_TWRITE_DATA + 1;
	assert_int_equal(np_fcall_size(&f, NP_9P2000L), -EINVAL);
	f.twrite.count = UINT32_MAX;
	assert_int_equal(np_fcall_size(&f, NP_9P2000L), -EINVAL);
	f.type = NP_RREAD;
	f.rread.count = UINT32_MAX;
	assert_int_equal(np_fcall_size(&f, NP_9P2000), -EINVAL);
	/* and a 2 GiB frame does not fit a small buffer, whatever int says */
	uint8_t buf[64];
	f.type = NP_TWRITE;
	f.twrite.count = 0x80000000u;
	f.twrite.data = buf;
	assert_int_equal(np_encode(&f, NP_9P2000L, buf, sizeof buf), -EMSGSIZE);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_every_type_every_dialect),
		cmocka_unit_test(test_dotu_fields_size),
		cmocka_unit_test(test_dotu_defaults_in_9p2000),
		cmocka_unit_test(test_encode_too_small),
		cmocka_unit_test(test_encode_wrong_dialect),
		cmocka_unit_test(test_encode_walk_limits),
		cmocka_unit_test(test_encode_in_place),
		cmocka_unit_test(test_max_strings),
		cmocka_unit_test(test_stat_limits),
		cmocka_unit_test(test_size_limits),
	};
	return cmocka_run_group_tests_name("roundtrip", tests, NULL, NULL);
}

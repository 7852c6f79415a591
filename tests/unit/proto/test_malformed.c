/* Malformed input: the decoder refuses it with the documented errno, names
 * the field, and never reads outside the frame (frames are copied into
 * exactly-sized heap buffers so ASan sees any overread). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <errno.h>

#include <cmocka.h>

#include "fcall_samples.h"
#include "golden_frames.h"
#include "ninep/proto.h"

#define MSIZE 8192

static const enum np_dialect dialects[] = {NP_9P2000, NP_9P2000U, NP_9P2000L};

static void put32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)v;
	p[1] = (uint8_t)(v >> 8);
	p[2] = (uint8_t)(v >> 16);
	p[3] = (uint8_t)(v >> 24);
}

static void put16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)v;
	p[1] = (uint8_t)(v >> 8);
}

/* A heap copy of len bytes of src (len may be 0). */
static uint8_t *dup_bytes(const uint8_t *src, size_t len)
{
	uint8_t *p = malloc(len ? len : 1);
	assert_non_null(p);
	if (len)
		memcpy(p, src, len);
	return p;
}

static const struct golden_frame *golden(const char *name)
{
	const struct golden_frame *g = golden_find(name);
	if (!g)
		fail_msg("no golden frame %s", name);
	return g;
}

/* Decode buf[0..len) and expect -err with the named field. */
static void expect_fail(const uint8_t *bytes, size_t len, enum np_dialect d, uint32_t msize,
			int err, const char *field)
{
	uint8_t *buf = dup_bytes(bytes, len);
	np_fcall f;
	np_decode_error e = {0};
	int r = np_decode(buf, len, d, msize, &f, &e);
	if (r != -err)
		fail_msg("expected %d (%s), got %d (field %s)", -err, field, r,
			 e.field ? e.field : "none");
	assert_int_equal(e.err, err);
	assert_non_null(e.field);
	if (field && strcmp(e.field, field) != 0)
		fail_msg("expected field %s, got %s", field, e.field);
	assert_true(e.offset <= len);
	/* without an error report it fails the same way */
	assert_int_equal(np_decode(buf, len, d, msize, &f, NULL), -err);
	free(buf);
}

static void expect_ok(const uint8_t *bytes, size_t len, enum np_dialect d, uint32_t msize,
		      np_fcall *f)
{
	uint8_t *buf = dup_bytes(bytes, len);
	np_decode_error e = {0};
	int r = np_decode(buf, len, d, msize, f, &e);
	if (r != 0)
		fail_msg("decode failed: %d field %s", r, e.field ? e.field : "?");
	free(buf);
	/* f's views pointed into buf: callers look only at integers */
}

/* Every golden frame cut at every byte offset, both with its original size
 * field (the frame is shorter than it says) and with the size field patched
 * to the cut length (the body is shorter than its fields say). */
static void test_truncated_everywhere(void **state)
{
	(void)state;
	size_t cuts = 0;
	for (size_t i = 0; i < golden_nframes; i++) {
		const struct golden_frame *g = &golden_frames[i];
		for (size_t k = 0; k < g->len; k++) {
			expect_fail(g->bytes, k, g->dialect, MSIZE, EPROTO, "size");
			if (k < 4)
				continue;
			uint8_t *cut = dup_bytes(g->bytes, k);
			put32(cut, (uint32_t)k);
			np_fcall f;
			np_decode_error e = {0};
			int r = np_decode(cut, k, g->dialect, MSIZE, &f, &e);
			if (r != -EPROTO)
				fail_msg("%s cut at %zu with size patched: %d (%s)", g->name, k, r,
					 e.field ? e.field : "?");
			assert_true(e.offset <= k);
			free(cut);
			cuts++;
		}
	}
	assert_true(cuts > 1000);
}

/* size[4] that disagrees with the bytes received. */
static void test_lying_size(void **state)
{
	(void)state;
	const struct golden_frame *g = golden("Twalk");
	static const uint32_t lies[] = {0, 1, 6, 7, 26, 28, 0x7fffffff, 0xffffffff};
	uint8_t *buf = dup_bytes(g->bytes, g->len);
	for (size_t i = 0; i < sizeof lies / sizeof lies[0]; i++) {
		put32(buf, lies[i]);
		expect_fail(buf, g->len, g->dialect, MSIZE, EPROTO, "size");
		expect_fail(buf, g->len, g->dialect, 0, EPROTO, "size");
	}
	free(buf);
	/* a frame smaller than a header, whatever it says */
	static const uint8_t tiny[] = {0x06, 0x00, 0x00, 0x00, 121, 0x01};
	for (size_t k = 0; k <= sizeof tiny; k++)
		expect_fail(tiny, k, NP_9P2000, MSIZE, EPROTO, "size");
}

static void test_size_over_msize(void **state)
{
	(void)state;
	const struct golden_frame *g = golden("Twrite"); /* 29 bytes */
	np_fcall f;
	expect_fail(g->bytes, g->len, NP_9P2000L, 28, EMSGSIZE, "size");
	expect_fail(g->bytes, g->len, NP_9P2000L, 8, EMSGSIZE, "size");
	expect_ok(g->bytes, g->len, NP_9P2000L, 53, &f);
	/* msize 0: before negotiation there is no limit */
	expect_ok(g->bytes, g->len, NP_9P2000L, 0, &f);
	assert_int_equal(f.twrite.count, 6);
}

/* Counts and lengths far beyond the frame. */
static void test_huge_counts(void **state)
{
	(void)state;
	/* Rread count 0xffffffff with 6 bytes of data */
	uint8_t *b = dup_bytes(golden("Rread")->bytes, 17);
	put32(b + 7, 0xffffffff);
	expect_fail(b, 17, NP_9P2000, MSIZE, EPROTO, "data");
	expect_fail(b, 17, NP_9P2000, 0, EPROTO, "data");
	put32(b + 7, 7); /* one byte too many */
	expect_fail(b, 17, NP_9P2000, MSIZE, EPROTO, "data");
	put32(b + 7, 5); /* one too few: a trailing byte */
	expect_fail(b, 17, NP_9P2000, MSIZE, EPROTO, "trailing bytes");
	free(b);

	b = dup_bytes(golden("Twrite")->bytes, 29);
	put32(b + 19, 0xfffffff0);
	expect_fail(b, 29, NP_9P2000L, 0, EPROTO, "data");
	free(b);

	b = dup_bytes(golden("Rreaddir")->bytes, 62);
	put32(b + 7, 0x80000000);
	expect_fail(b, 62, NP_9P2000L, 0, EPROTO, "data");
	free(b);

	/* string lengths: the first walk name says 0xffff */
	b = dup_bytes(golden("Twalk")->bytes, 27);
	put16(b + 17, 0xffff);
	expect_fail(b, 27, NP_9P2000, MSIZE, EPROTO, "wname");
	put16(b + 17, 4); /* "usr" plus the next length byte: misaligns the rest */
	expect_fail(b, 27, NP_9P2000, MSIZE, EPROTO, NULL);
	free(b);

	b = dup_bytes(golden("Tversion")->bytes, 19);
	put16(b + 11, 0xffff);
	expect_fail(b, 19, NP_9P2000, 0, EPROTO, "version");
	free(b);

	b = dup_bytes(golden("Tlock")->bytes, 42);
	put16(b + 36, 5); /* client_id "host" claims 5 */
	expect_fail(b, 42, NP_9P2000L, MSIZE, EPROTO, "client_id");
	free(b);

	/* Rwalk: more qids than the limit, and more than the frame holds */
	b = dup_bytes(golden("Rwalk")->bytes, 35);
	put16(b + 7, 0xffff);
	expect_fail(b, 35, NP_9P2000, MSIZE, EINVAL, "nwqid");
	put16(b + 7, NP_MAXWELEM + 1);
	expect_fail(b, 35, NP_9P2000, MSIZE, EINVAL, "nwqid");
	put16(b + 7, 3);
	expect_fail(b, 35, NP_9P2000, MSIZE, EPROTO, "wqid");
	free(b);
}

/* The stat's two length fields: n[2] before it and its own size[2]. */
static void test_stat_lengths(void **state)
{
	(void)state;
	const struct golden_frame *g = golden("Rstat"); /* n at 7, size at 9 */
	uint8_t *b = dup_bytes(g->bytes, g->len);
	static const uint16_t bad[] = {0, 2, 58, 60, 0xffff};
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		memcpy(b, g->bytes, g->len);
		put16(b + 7, bad[i]);
		expect_fail(b, g->len, NP_9P2000, MSIZE, EPROTO, NULL);
		memcpy(b, g->bytes, g->len);
		put16(b + 9, bad[i]);
		expect_fail(b, g->len, NP_9P2000, MSIZE, EPROTO, NULL);
	}
	/* a string running past the stat's own size, though not past the frame */
	memcpy(b, g->bytes, g->len);
	put16(b + 9, 56);
	put16(b + 7, 58);
	expect_fail(b, g->len, NP_9P2000, MSIZE, EPROTO, "stat.muid");
	free(b);

	/* a 9P2000.u stat that is too short for the .u fields */
	g = golden("Rstat");
	expect_fail(g->bytes, g->len, NP_9P2000U, MSIZE, EPROTO, "stat.extension");
}

static size_t twalk_frame(uint8_t *buf, uint16_t nwname, const char *const *names)
{
	size_t n = 7;
	buf[4] = NP_TWALK;
	put16(buf + 5, 1);
	put32(buf + 7, 1);
	put32(buf + 11, 2);
	put16(buf + 15, nwname);
	n = 17;
	for (uint16_t i = 0; i < nwname; i++) {
		size_t l = strlen(names[i]);
		put16(buf + n, (uint16_t)l);
		memcpy(buf + n + 2, names[i], l);
		n += 2 + l;
	}
	put32(buf, (uint32_t)n);
	return n;
}

static void test_walk_limits(void **state)
{
	(void)state;
	uint8_t buf[512];
	const char *names[NP_MAXWELEM + 1];
	for (int i = 0; i <= NP_MAXWELEM; i++)
		names[i] = "a";
	np_fcall f;
	size_t n = twalk_frame(buf, NP_MAXWELEM, names);
	expect_ok(buf, n, NP_9P2000, MSIZE, &f);
	assert_int_equal(f.twalk.nwname, NP_MAXWELEM);
	n = twalk_frame(buf, NP_MAXWELEM + 1, names);
	for (size_t k = 0; k < 3; k++)
		expect_fail(buf, n, dialects[k], MSIZE, EINVAL, "nwname");
	/* nwname 17 with no names following: refused on the count alone */
	n = twalk_frame(buf, 0, names);
	put16(buf + 15, 17);
	expect_fail(buf, n, NP_9P2000, MSIZE, EINVAL, "nwname");
	put16(buf + 15, 0xffff);
	expect_fail(buf, n, NP_9P2000, MSIZE, EINVAL, "nwname");
}

/* Walk elements are single path components. */
static void test_walk_names(void **state)
{
	(void)state;
	uint8_t buf[512];
	static const char *const bad[] = {"", ".", "/", "a/b", "/etc", "usr/", "//"};
	static const char *const good[] = {"..", "...", ".a", "a.", "-", " ", "\xff\xfe"};
	np_fcall f;
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		const char *names[3] = {"usr", bad[i], "lib"};
		size_t n = twalk_frame(buf, 3, names);
		for (size_t k = 0; k < 3; k++)
			expect_fail(buf, n, dialects[k], MSIZE, EINVAL, "wname");
		n = twalk_frame(buf, 1, &bad[i]);
		expect_fail(buf, n, NP_9P2000L, MSIZE, EINVAL, "wname");
	}
	for (size_t i = 0; i < sizeof good / sizeof good[0]; i++) {
		size_t n = twalk_frame(buf, 1, &good[i]);
		expect_ok(buf, n, NP_9P2000L, MSIZE, &f);
		assert_int_equal(f.twalk.nwname, 1);
	}
}

/* A NUL inside a string would silently truncate it in C. */
static void test_embedded_nul(void **state)
{
	(void)state;
	uint8_t *b = dup_bytes(golden("Twalk")->bytes, 27);
	b[20] = 0; /* 'u' 's' 'r' -> 'u' 's' '\0' */
	for (size_t k = 0; k < 3; k++)
		expect_fail(b, 27, dialects[k], MSIZE, EINVAL, "wname");
	free(b);

	b = dup_bytes(golden("Tattach")->bytes, 25);
	b[17] = 0; /* gl\0nda */
	expect_fail(b, 25, NP_9P2000, MSIZE, EINVAL, "uname");
	free(b);

	b = dup_bytes(golden("Rerror")->bytes, 28);
	b[9] = 0;
	expect_fail(b, 28, NP_9P2000, MSIZE, EINVAL, "ename");
	free(b);

	b = dup_bytes(golden("Tsymlink")->bytes, 42);
	b[41 - 4] = 0; /* last byte of symtgt */
	expect_fail(b, 42, NP_9P2000L, MSIZE, EINVAL, "symtgt");
	free(b);

	b = dup_bytes(golden("Rstat")->bytes, 68);
	b[68 - 1] = 0; /* muid "sy\0" */
	expect_fail(b, 68, NP_9P2000, MSIZE, EINVAL, "stat.muid");
	free(b);

	/* payloads are binary and may hold NULs */
	b = dup_bytes(golden("Twrite")->bytes, 29);
	b[23] = 0;
	np_fcall f;
	expect_ok(b, 29, NP_9P2000L, MSIZE, &f);
	free(b);
}

/* Names that create, rename or remove entries. */
static void test_entry_names(void **state)
{
	(void)state;
	static const struct {
		const char *frame;
		size_t name_at; /* offset of the name's len[2] */
		const char *field;
	} cases[] = {
		{"Tcreate", 11, "name"}, {"Tlcreate", 11, "name"}, {"Tmkdir", 11, "name"},
		{"Tmknod", 11, "name"}, {"Tsymlink", 11, "name"}, {"Tlink", 15, "name"},
		{"Trename", 15, "name"}, {"Tunlinkat", 11, "name"},
		{"Trenameat", 11, "oldname"}, {"Trenameat", 18, "newname"},
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		const struct golden_frame *g = golden(cases[i].frame);
		uint8_t buf[256];
		uint16_t old = (uint16_t)(g->bytes[cases[i].name_at] |
					  g->bytes[cases[i].name_at + 1] << 8);
		size_t head = cases[i].name_at, tail = g->len - head - 2 - old;
		static const char *const bad[] = {"", ".", "..", "a/b", "/"};
		for (size_t k = 0; k < sizeof bad / sizeof bad[0]; k++) {
			size_t l = strlen(bad[k]);
			memcpy(buf, g->bytes, head);
			put16(buf + head, (uint16_t)l);
			memcpy(buf + head + 2, bad[k], l);
			memcpy(buf + head + 2 + l, g->bytes + head + 2 + old, tail);
			size_t n = head + 2 + l + tail;
			put32(buf, (uint32_t)n);
			expect_fail(buf, n, g->dialect, MSIZE, EINVAL, cases[i].field);
		}
		/* and the unmodified frame is fine */
		np_fcall f;
		expect_ok(g->bytes, g->len, g->dialect, MSIZE, &f);
	}
}

/* One byte more than the layout: the size says so, the layout does not. */
static void test_trailing_bytes(void **state)
{
	(void)state;
	for (size_t i = 0; i < golden_nframes; i++) {
		const struct golden_frame *g = &golden_frames[i];
		for (size_t extra = 1; extra <= 3; extra++) {
			uint8_t *b = malloc(g->len + extra);
			memcpy(b, g->bytes, g->len);
			memset(b + g->len, 0x41, extra);
			put32(b, (uint32_t)(g->len + extra));
			np_fcall f;
			np_decode_error e = {0};
			if (np_decode(b, g->len + extra, g->dialect, MSIZE, &f, &e) != -EPROTO ||
			    strcmp(e.field, "trailing bytes") != 0)
				fail_msg("%s + %zu bytes: %s", g->name, extra,
					 e.field ? e.field : "accepted");
			assert_int_equal(e.offset, g->len);
			free(b);
		}
	}
}

static void test_unknown_types(void **state)
{
	(void)state;
	static const uint8_t bogus[] = {0, 1, 5, NP_TLERROR, 10, 11, 28, 29, 34, 39,
					42, 56, 69, 78, 99, NP_TERROR, 128, 129, 200, 255};
	uint8_t *b = dup_bytes(golden("Tclunk")->bytes, 11);
	for (size_t i = 0; i < sizeof bogus; i++) {
		b[4] = bogus[i];
		for (size_t k = 0; k < 3; k++) {
			np_fcall f;
			np_decode_error e = {0};
			assert_int_equal(np_decode(b, 11, dialects[k], MSIZE, &f, &e), -EOPNOTSUPP);
			assert_string_equal(e.field, "type");
			assert_int_equal(e.offset, 4);
		}
	}
	free(b);
	/* every 9P2000.L message is unknown to 9P2000 and 9P2000.u */
	size_t n = 0;
	for (size_t i = 0; i < golden_nframes; i++) {
		const struct golden_frame *g = &golden_frames[i];
		if (fcall_type_in_dialect(g->bytes[4], NP_9P2000))
			continue;
		expect_fail(g->bytes, g->len, NP_9P2000, MSIZE, EOPNOTSUPP, "type");
		expect_fail(g->bytes, g->len, NP_9P2000U, MSIZE, EOPNOTSUPP, "type");
		n++;
	}
	assert_true(n >= 30);
}

/* Twrite and Rread data must leave room for their header below msize. */
static void test_io_count_vs_msize(void **state)
{
	(void)state;
	enum { M = 4096 };
	uint8_t *b = calloc(1, M);
	np_fcall f;
	/* Twrite: 23 + count bytes; count may be at most msize - 24 */
	b[4] = NP_TWRITE;
	put32(b, M - 1);
	put32(b + 19, M - 24);
	expect_ok(b, M - 1, NP_9P2000L, M, &f);
	assert_int_equal(f.twrite.count, M - 24);
	put32(b, M);
	put32(b + 19, M - 23);
	expect_fail(b, M, NP_9P2000L, M, EMSGSIZE, "count");
	expect_fail(b, M, NP_9P2000, M, EMSGSIZE, "count");
	/* Rread: 11 + count bytes */
	memset(b, 0, M);
	b[4] = NP_RREAD;
	put32(b, 11 + M - 24);
	put32(b + 7, M - 24);
	expect_ok(b, 11 + M - 24, NP_9P2000U, M, &f);
	put32(b, 11 + M - 23);
	put32(b + 7, M - 23);
	expect_fail(b, 11 + M - 23, NP_9P2000U, M, EMSGSIZE, "count");
	/* Rreaddir likewise, checked before its entries */
	b[4] = NP_RREADDIR;
	expect_fail(b, 11 + M - 23, NP_9P2000L, M, EMSGSIZE, "count");
	free(b);
}

/* Rreaddir payloads are checked entry by entry. */
static void test_bad_readdir(void **state)
{
	(void)state;
	const struct golden_frame *g = golden("Rreaddir"); /* entries at 11 and 36 */
	uint8_t *b = malloc(g->len);
	np_fcall f;

	/* count cut inside the second entry, frame shortened to match */
	for (uint32_t c = 26; c < 51; c++) {
		memcpy(b, g->bytes, g->len);
		put32(b, 11 + c);
		put32(b + 7, c);
		expect_fail(b, 11 + c, NP_9P2000L, MSIZE, EPROTO, "dirent");
	}
	/* the first entry's name claims more than the payload has */
	memcpy(b, g->bytes, g->len);
	put16(b + 11 + 22, 0x30);
	expect_fail(b, g->len, NP_9P2000L, MSIZE, EPROTO, "dirent");
	/* second entry name "." "\0" */
	memcpy(b, g->bytes, g->len);
	b[g->len - 1] = 0;
	expect_fail(b, g->len, NP_9P2000L, MSIZE, EPROTO, "dirent");
	/* a lone byte after the last entry */
	uint8_t *c = malloc(g->len + 1);
	memcpy(c, g->bytes, g->len);
	c[g->len] = 0x80;
	put32(c, (uint32_t)g->len + 1);
	put32(c + 7, 52);
	expect_fail(c, g->len + 1, NP_9P2000L, MSIZE, EPROTO, "dirent");
	free(c);
	/* the same bytes as Rread are not checked: a file may hold anything */
	memcpy(b, g->bytes, g->len);
	put16(b + 11 + 22, 0x30);
	b[4] = NP_RREAD;
	expect_ok(b, g->len, NP_9P2000L, MSIZE, &f);
	free(b);
}

/* np_dirent_next on its own, over every cut of a valid payload. */
static void test_dirent_next_cuts(void **state)
{
	(void)state;
	const struct golden_frame *g = golden("Rreaddir");
	const uint8_t *data = g->bytes + 11;
	for (uint32_t cnt = 0; cnt <= 51; cnt++) {
		uint8_t *p = dup_bytes(data, cnt);
		uint32_t pos = 0;
		np_dirent de;
		int r, n = 0;
		while ((r = np_dirent_next(p, cnt, &pos, &de)) == 1)
			n++;
		if (cnt == 0 || cnt == 25 || cnt == 51) {
			assert_int_equal(r, 0);
			assert_int_equal(n, cnt == 0 ? 0 : cnt == 25 ? 1 : 2);
			assert_int_equal(pos, cnt);
		} else {
			assert_int_equal(r, -EPROTO);
			assert_int_equal(n, cnt < 25 ? 0 : 1);
		}
		free(p);
	}
}

/* np_stat_decode on every cut of a valid stat. */
static void test_stat_decode_cuts(void **state)
{
	(void)state;
	const struct golden_frame *g = golden("Rstat.u");
	const uint8_t *st = g->bytes + 9; /* after n[2] */
	size_t len = g->len - 9;
	np_stat s;
	for (size_t k = 0; k < len; k++) {
		uint8_t *p = dup_bytes(st, k);
		assert_int_equal(np_stat_decode(p, k, NP_9P2000U, &s), -EPROTO);
		free(p);
	}
	assert_int_equal(np_stat_decode(st, len, NP_9P2000U, &s), (long)len);
	assert_int_equal(s.n_gid, 1001);
	/* the same bytes as a 9P2000 stat: the size says 64, the fields 50 */
	assert_int_equal(np_stat_decode(st, len, NP_9P2000, &s), -EPROTO);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_truncated_everywhere),
		cmocka_unit_test(test_lying_size),
		cmocka_unit_test(test_size_over_msize),
		cmocka_unit_test(test_huge_counts),
		cmocka_unit_test(test_stat_lengths),
		cmocka_unit_test(test_walk_limits),
		cmocka_unit_test(test_walk_names),
		cmocka_unit_test(test_embedded_nul),
		cmocka_unit_test(test_entry_names),
		cmocka_unit_test(test_trailing_bytes),
		cmocka_unit_test(test_unknown_types),
		cmocka_unit_test(test_io_count_vs_msize),
		cmocka_unit_test(test_bad_readdir),
		cmocka_unit_test(test_dirent_next_cuts),
		cmocka_unit_test(test_stat_decode_cuts),
	};
	return cmocka_run_group_tests_name("malformed", tests, NULL, NULL);
}

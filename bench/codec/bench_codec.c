/* bench-codec: codec micro-benchmark.
 *
 * Each operation runs for about --ms milliseconds per run (default 100),
 * --runs times (default 7); the median ns/op and messages per second are
 * printed, and the best run, which is what is left of the cost when other
 * processes share the CPU.  Before timing, each operation's result is checked once, so a
 * broken codec fails the benchmark instead of timing an error path.
 * --quick: 3 short runs (a smoke test, not a measurement). */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ninep/proto.h"

#define PAYLOAD 4096

static uint8_t payload[PAYLOAD];
static uint8_t twrite_frame[NP_TWRITE_DATA + PAYLOAD];
static int twrite_len;
static uint8_t walk_frame[256];
static int walk_len;
static uint8_t getattr_frame[256];
static int getattr_len;
static np_fcall twrite_f, walk_f, getattr_f;
static uint8_t out[NP_TWRITE_DATA + PAYLOAD];
static volatile uint32_t sink;

static void setup(void)
{
	for (int i = 0; i < PAYLOAD; i++)
		payload[i] = (uint8_t)(i * 31 + 7);

	memset(&twrite_f, 0, sizeof twrite_f);
	twrite_f.type = NP_TWRITE;
	twrite_f.tag = 17;
	twrite_f.twrite.fid = 42;
	twrite_f.twrite.offset = 1 << 20;
	twrite_f.twrite.count = PAYLOAD;
	twrite_f.twrite.data = payload;
	twrite_len = np_encode(&twrite_f, NP_9P2000L, twrite_frame, sizeof twrite_frame);

	static const char *const names[4] = {"usr", "share", "doc", "README"};
	memset(&walk_f, 0, sizeof walk_f);
	walk_f.type = NP_TWALK;
	walk_f.tag = 3;
	walk_f.twalk.fid = 1;
	walk_f.twalk.newfid = 2;
	walk_f.twalk.nwname = 4;
	for (int i = 0; i < 4; i++)
		walk_f.twalk.wname[i] = np_strz(names[i]);
	walk_len = np_encode(&walk_f, NP_9P2000L, walk_frame, sizeof walk_frame);

	memset(&getattr_f, 0, sizeof getattr_f);
	getattr_f.type = NP_RGETATTR;
	getattr_f.tag = 5;
	getattr_f.rgetattr.valid = NP_GETATTR_BASIC;
	getattr_f.rgetattr.qid = (np_qid){NP_QTFILE, 3, 0x2c1fac};
	getattr_f.rgetattr.mode = 0100644;
	getattr_f.rgetattr.uid = 1000;
	getattr_f.rgetattr.gid = 1000;
	getattr_f.rgetattr.nlink = 1;
	getattr_f.rgetattr.size = 123456;
	getattr_f.rgetattr.blksize = 4096;
	getattr_f.rgetattr.blocks = 248;
	getattr_f.rgetattr.atime_sec = getattr_f.rgetattr.mtime_sec =
		getattr_f.rgetattr.ctime_sec = 1700000000;
	getattr_len = np_encode(&getattr_f, NP_9P2000L, getattr_frame, sizeof getattr_frame);
}

/* Operations: each returns something derived from its result so that the
 * work cannot be dropped, and a negative value on failure. */
static long op_twrite_decode(void)
{
	np_fcall f;
	if (np_decode(twrite_frame, (size_t)twrite_len, NP_9P2000L, 8192, &f, NULL) != 0)
		return -1;
	return f.twrite.count;
}

static long op_twrite_encode_copy(void)
{
	return np_encode(&twrite_f, NP_9P2000L, out, sizeof out);
}

static long op_twrite_encode_inplace(void)
{
	static np_fcall f;
	static int init;
	if (!init) {
		f = twrite_f;
		memcpy(out + NP_TWRITE_DATA, payload, PAYLOAD);
		f.twrite.data = out + NP_TWRITE_DATA;
		init = 1;
	}
	return np_encode(&f, NP_9P2000L, out, sizeof out);
}

static long op_twalk4_encode(void)
{
	return np_encode(&walk_f, NP_9P2000L, out, sizeof out);
}

static long op_twalk4_decode(void)
{
	np_fcall f;
	if (np_decode(walk_frame, (size_t)walk_len, NP_9P2000L, 8192, &f, NULL) != 0)
		return -1;
	return f.twalk.wname[3].len;
}

static long op_rgetattr_encode(void)
{
	return np_encode(&getattr_f, NP_9P2000L, out, sizeof out);
}

static long op_rgetattr_decode(void)
{
	np_fcall f;
	if (np_decode(getattr_frame, (size_t)getattr_len, NP_9P2000L, 8192, &f, NULL) != 0)
		return -1;
	return (long)f.rgetattr.size;
}

static long op_rgetattr_roundtrip(void)
{
	np_fcall f;
	int n = np_encode(&getattr_f, NP_9P2000L, out, sizeof out);
	if (n < 0 || np_decode(out, (size_t)n, NP_9P2000L, 8192, &f, NULL) != 0)
		return -1;
	return (long)f.rgetattr.blocks;
}

static const struct op {
	const char *name;
	long (*fn)(void);
	long expect; /* the value a correct codec returns */
} ops[] = {
	{"twrite-4k-decode", op_twrite_decode, PAYLOAD},
	{"twrite-4k-encode-copy", op_twrite_encode_copy, NP_TWRITE_DATA + PAYLOAD},
	{"twrite-4k-encode-inplace", op_twrite_encode_inplace, NP_TWRITE_DATA + PAYLOAD},
	{"twalk-4names-encode", op_twalk4_encode, 17 + 5 + 7 + 5 + 8},
	{"twalk-4names-decode", op_twalk4_decode, 6},
	{"rgetattr-encode", op_rgetattr_encode, 160},
	{"rgetattr-decode", op_rgetattr_decode, 123456},
	{"rgetattr-encode+decode", op_rgetattr_roundtrip, 248},
};

static double now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

static double run_ns_per_op(long (*fn)(void), long iters)
{
	uint32_t acc = 0;
	double t0 = now_ns();
	for (long i = 0; i < iters; i++)
		acc += (uint32_t)fn();
	double t1 = now_ns();
	sink = acc;
	return (t1 - t0) / (double)iters;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

static void usage(const char *argv0)
{
	fprintf(stderr, "usage: %s [--quick] [--runs N] [--ms MS] [FILTER]\n", argv0);
	exit(2);
}

int main(int argc, char **argv)
{
	int runs = 7;
	double ms = 100;
	const char *filter = NULL;
	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--quick") == 0) {
			runs = 3;
			ms = 2;
		} else if (strcmp(argv[i], "--runs") == 0 && i + 1 < argc) {
			runs = atoi(argv[++i]);
		} else if (strcmp(argv[i], "--ms") == 0 && i + 1 < argc) {
			ms = atof(argv[++i]);
		} else if (argv[i][0] != '-' && !filter) {
			filter = argv[i];
		} else {
			usage(argv[0]);
		}
	}
	if (runs < 1 || runs > 101 || ms <= 0)
		usage(argv[0]);

	setup();
	if (twrite_len != NP_TWRITE_DATA + PAYLOAD || walk_len <= 0 || getattr_len != 160) {
		fprintf(stderr, "bench-codec: setup encode failed\n");
		return 1;
	}
	printf("bench-codec: median of %d runs of ~%.0f ms each\n", runs, ms);
	printf("%-26s %10s %14s %10s\n", "operation", "ns/op", "msgs/s", "best ns");
	int bad = 0;
	for (size_t k = 0; k < sizeof ops / sizeof ops[0]; k++) {
		const struct op *o = &ops[k];
		if (filter && !strstr(o->name, filter))
			continue;
		long got = o->fn();
		if (got != o->expect) {
			fprintf(stderr, "bench-codec: %s returned %ld, expected %ld\n", o->name, got,
				o->expect);
			bad = 1;
			continue;
		}
		/* calibrate: grow the iteration count until one run takes ~ms */
		long iters = 1000;
		double per = run_ns_per_op(o->fn, iters);
		while (per * (double)iters < ms * 1e6 / 4 && iters < (1L << 40))
			per = run_ns_per_op(o->fn, iters *= 4);
		iters = (long)(ms * 1e6 / (per > 0.1 ? per : 0.1)) + 1;
		double res[101];
		for (int r = 0; r < runs; r++)
			res[r] = run_ns_per_op(o->fn, iters);
		qsort(res, (size_t)runs, sizeof res[0], cmp_double);
		double med = res[runs / 2];
		printf("%-26s %10.1f %14.0f %10.1f\n", o->name, med, 1e9 / med, res[0]);
	}
	return bad;
}

/* Client library against a scripted peer: malformed replies, dropped
 * connections, flush, tag reuse, pipelining, and the reply parser itself. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cmocka.h>

#include "client/reply.h"
#include "peer.h"

/* ---- handlers ---- */

/* A well-behaved server for attach/walk/getattr/clunk/read. */
static int h_good(struct peer *p, const np_fcall *t)
{
	np_fcall r = {.type = (uint8_t)(t->type + 1), .tag = t->tag};
	static uint8_t data[65536];
	switch (t->type) {
	case NP_TATTACH:
		r.rattach.qid = (np_qid){NP_QTDIR, 0, 1};
		break;
	case NP_TWALK:
		r.rwalk.nwqid = t->twalk.nwname;
		for (int i = 0; i < t->twalk.nwname; i++)
			r.rwalk.wqid[i] = (np_qid){0, 0, 100u + (unsigned)i};
		break;
	case NP_TGETATTR:
		/* Echo the fid so concurrent callers can check they got theirs. */
		r.rgetattr.valid = NP_GETATTR_BASIC;
		r.rgetattr.size = t->tgetattr.fid;
		r.rgetattr.mode = 0100644;
		break;
	case NP_TREAD: {
		/* Byte i of the file is (offset + i) & 0xff; EOF at 1 MiB. */
		uint64_t end = 1u << 20, off = t->tread.offset;
		uint32_t n = off >= end ? 0 : (uint32_t)(end - off < t->tread.count ? end - off : t->tread.count);
		for (uint32_t i = 0; i < n; i++)
			data[i] = (uint8_t)(off + i);
		r.rread.count = n;
		r.rread.data = data;
		break;
	}
	case NP_TWRITE:
		r.rwrite.count = t->twrite.count;
		break;
	case NP_TCLUNK:
	case NP_TLOPEN:
	default:
		break;
	}
	peer_send(p, &r);
	return 0;
}

static np_client *start_opts(struct peer *p, peer_fn fn, const struct np_client_opts *o)
{
	int err;
	memset(p, 0, sizeof *p);
	np_client *c = peer_start(p, fn, o, &err);
	assert_int_equal(err, 0);
	assert_non_null(c);
	return c;
}

static np_client *start(struct peer *p, peer_fn fn)
{
	return start_opts(p, fn, NULL);
}

static void stop(struct peer *p, np_client *c)
{
	np_client_free(c);
	peer_join(p);
}

static void test_version_and_attach(void **state)
{
	(void)state;
	struct peer p;
	memset(&p, 0, sizeof p);
	p.msize = 8192;
	int err;
	np_client *c = peer_start(&p, h_good, NULL, &err);
	assert_int_equal(err, 0);
	assert_int_equal(np_client_msize(c), 8192);
	assert_int_equal(np_client_dialect(c), NP_9P2000L);
	np_cfid *root;
	assert_int_equal(np_client_attach(c, "u", 0, "", &root), 0);
	assert_int_equal(root->qid.type, NP_QTDIR);
	np_cfid *f;
	assert_int_equal(np_client_walk_path(root, "a/./b//c", &f), 0);
	assert_int_equal(f->qid.path, 102);
	assert_int_equal(np_cfid_clunk(f), 0);
	assert_int_equal(np_cfid_clunk(root), 0);
	stop(&p, c);
}

static void test_version_unknown(void **state)
{
	(void)state;
	struct peer p;
	memset(&p, 0, sizeof p);
	p.version = "unknown";
	int err;
	np_client *c = peer_start(&p, h_good, NULL, &err);
	assert_null(c);
	assert_int_equal(err, -EPROTONOSUPPORT);
	peer_join(&p);
}

/* A long path is walked in several Twalks of at most 16 names. */
static void test_walk_path_long(void **state)
{
	(void)state;
	struct peer p;
	np_client *c = start(&p, h_good);
	np_cfid *root, *f;
	assert_int_equal(np_client_attach(c, "u", 0, "", &root), 0);
	char path[200] = "";
	for (int i = 0; i < 40; i++)
		strcat(path, "d/");
	assert_int_equal(np_client_walk_path(root, path, &f), 0);
	/* version + attach + 3 walks (16+16+8) + 2 clunks of intermediate fids */
	assert_int_equal(p.nreq, 7);
	assert_int_equal(f->qid.path, 107);
	np_cfid_clunk(f);
	np_cfid_clunk(root);
	stop(&p, c);
}

/* ---- malformed replies ---- */

static int h_bad_counts(struct peer *p, const np_fcall *t)
{
	np_fcall r = {.type = (uint8_t)(t->type + 1), .tag = t->tag};
	static uint8_t data[64];
	if (t->type == NP_TREAD) {
		r.rread.count = t->tread.count + 1; /* more than asked */
		r.rread.data = data;
	} else if (t->type == NP_TWALK) {
		r.rwalk.nwqid = (uint16_t)(t->twalk.nwname + 1);
	} else if (t->type == NP_TWRITE) {
		r.rwrite.count = t->twrite.count + 1;
	} else if (t->type == NP_TGETATTR) {
		r.type = NP_RSTATFS; /* the wrong reply type */
	} else if (t->type == NP_TATTACH) {
		r.rattach.qid = (np_qid){NP_QTDIR, 0, 1};
	}
	peer_send(p, &r);
	return 0;
}

static void test_malformed_counts(void **state)
{
	(void)state;
	struct peer p;
	np_client *c = start(&p, h_bad_counts);
	np_cfid *root, *f;
	assert_int_equal(np_client_attach(c, "u", 0, "", &root), 0);
	uint8_t buf[32] = {0}; /* pwrite sends it: no uninitialised bytes on the wire */
	assert_int_equal(np_cfid_pread(root, buf, 16, 0), -EPROTO);
	assert_int_equal(np_cfid_pwrite(root, buf, 16, 0), -EPROTO);
	const char *names[1] = {"x"};
	assert_int_equal(np_cfid_walk(root, 1, names, &f), -EPROTO);
	struct np_attr a;
	assert_int_equal(np_cfid_getattr(root, NP_GETATTR_BASIC, &a), -EPROTO);
	/* Per-request protocol errors leave the connection usable. */
	assert_int_equal(np_client_error(c), 0);
	assert_int_equal(np_cfid_clunk(root), 0);
	stop(&p, c);
}

static int h_oversize(struct peer *p, const np_fcall *t)
{
	if (t->type == NP_TATTACH) {
		np_fcall r = {.type = NP_RATTACH, .tag = t->tag};
		peer_send(p, &r);
		return 0;
	}
	/* A frame header claiming more than msize. */
	uint8_t hdr[7] = {0, 0, 0x10, 0, NP_RREAD, (uint8_t)t->tag, (uint8_t)(t->tag >> 8)};
	peer_send_raw(p, hdr, sizeof hdr);
	return 0;
}

static void test_oversize_frame(void **state)
{
	(void)state;
	struct peer p;
	np_client *c = start(&p, h_oversize);
	np_cfid *root;
	assert_int_equal(np_client_attach(c, "u", 0, "", &root), 0);
	uint8_t buf[16];
	assert_int_equal(np_cfid_pread(root, buf, sizeof buf, 0), -EPROTO);
	/* The framing is lost: the connection is dead and stays so. */
	assert_int_equal(np_client_error(c), -EPROTO);
	struct np_attr a;
	assert_int_equal(np_cfid_getattr(root, 0, &a), -EPROTO);
	np_cfid_clunk(root);
	stop(&p, c);
}

static int h_garbage_body(struct peer *p, const np_fcall *t)
{
	/* Rread whose count runs past the frame: 4 data bytes claimed, 1 sent. */
	uint8_t f[12] = {12, 0, 0, 0, NP_RREAD, (uint8_t)t->tag, (uint8_t)(t->tag >> 8), 4, 0, 0, 0, 'x'};
	peer_send_raw(p, f, sizeof f);
	return 0;
}

static void test_truncated_body(void **state)
{
	(void)state;
	struct peer p;
	np_client *c = start(&p, h_garbage_body);
	np_fcall t = {.type = NP_TREAD};
	t.tread.count = 100;
	np_creq *r;
	assert_int_equal(np_client_submit(c, &t, NULL, NULL, &r), 0);
	assert_int_equal(np_creq_wait(r), -EPROTO);
	assert_null(np_creq_reply(r));
	np_creq_release(r);
	stop(&p, c);
}

static int h_unknown_tag(struct peer *p, const np_fcall *t)
{
	np_fcall r = {.type = NP_RCLUNK, .tag = (uint16_t)(t->tag + 1000)};
	peer_send(p, &r);
	return 0;
}

static void test_unknown_tag(void **state)
{
	(void)state;
	struct peer p;
	np_client *c = start(&p, h_unknown_tag);
	np_fcall t = {.type = NP_TCLUNK};
	np_creq *r;
	assert_int_equal(np_client_submit(c, &t, NULL, NULL, &r), 0);
	assert_int_equal(np_creq_wait(r), -EPROTO);
	np_creq_release(r);
	stop(&p, c);
}

static int h_lerror(struct peer *p, const np_fcall *t)
{
	np_fcall r = {.type = NP_RLERROR, .tag = t->tag};
	r.rlerror.ecode = ENOENT;
	peer_send(p, &r);
	return 0;
}

static void test_server_error(void **state)
{
	(void)state;
	struct peer p;
	np_client *c = start(&p, h_lerror);
	np_cfid *root;
	assert_int_equal(np_client_attach(c, "u", 0, "", &root), -ENOENT);
	stop(&p, c);
}

/* ---- dropped connection ---- */

static int h_drop_after_three(struct peer *p, const np_fcall *t)
{
	(void)t;
	return p->nreq >= 3 ? -1 : 0; /* never answers; hangs up at the third */
}

static void test_dropped_connection(void **state)
{
	(void)state;
	struct peer p;
	np_client *c = start(&p, h_drop_after_three);
	np_creq *r[3];
	np_fcall t = {.type = NP_TCLUNK};
	for (int i = 0; i < 3; i++)
		assert_int_equal(np_client_submit(c, &t, NULL, NULL, &r[i]), 0);
	/* The peer hangs up right after reading the third request: the client
	 * notices either on its next read (ECONNRESET) or, if the third write
	 * races the close, on that write (EPIPE); client.h allows both, and
	 * every request must fail with the same one. */
	int first = np_creq_wait(r[0]);
	assert_true(first == -ECONNRESET || first == -EPIPE);
	np_creq_release(r[0]);
	for (int i = 1; i < 3; i++) {
		assert_int_equal(np_creq_wait(r[i]), first);
		np_creq_release(r[i]);
	}
	/* Later calls fail at once. */
	np_creq *r4;
	assert_int_equal(np_client_submit(c, &t, NULL, NULL, &r4), first);
	stop(&p, c);
}

/* ---- flush ---- */

/* Holds Tread; on Tflush answers Rflush, or (flush_reply_first) the Rread
 * first and then the Rflush. */
static int flush_reply_first;
static int h_flush(struct peer *p, const np_fcall *t)
{
	static uint16_t held = NP_NOTAG;
	if (t->type == NP_TREAD) {
		held = t->tag;
		return 0;
	}
	if (t->type == NP_TFLUSH) {
		assert_int_equal(t->tflush.oldtag, held);
		if (flush_reply_first) {
			static uint8_t d[4] = "abc";
			np_fcall rr = {.type = NP_RREAD, .tag = held};
			rr.rread.count = 3;
			rr.rread.data = d;
			peer_send(p, &rr);
		}
		np_fcall rf = {.type = NP_RFLUSH, .tag = t->tag};
		peer_send(p, &rf);
		return 0;
	}
	return h_good(p, t);
}

static void flush_case(int reply_first)
{
	struct peer p;
	flush_reply_first = reply_first;
	np_client *c = start(&p, h_flush);
	np_fcall t = {.type = NP_TREAD};
	t.tread.count = 10;
	np_creq *r;
	assert_int_equal(np_client_submit(c, &t, NULL, NULL, &r), 0);
	assert_int_equal(np_creq_cancel(r), 0);
	assert_true(np_creq_done(r));
	if (reply_first) {
		assert_int_equal(np_creq_error(r), 0);
		assert_int_equal(np_creq_reply(r)->rread.count, 3);
	} else {
		assert_int_equal(np_creq_error(r), -ECANCELED);
	}
	np_creq_release(r);
	/* The connection carries on. */
	np_cfid *root;
	assert_int_equal(np_client_attach(c, "u", 0, "", &root), 0);
	np_cfid_clunk(root);
	stop(&p, c);
}

static void test_flush_cancels(void **state)
{
	(void)state;
	flush_case(0);
}

static void test_flush_reply_first(void **state)
{
	(void)state;
	flush_case(1);
}

/* ---- tags ---- */

static void test_tag_reuse(void **state)
{
	(void)state;
	struct peer p;
	np_client *c = start(&p, h_good);
	np_fcall t = {.type = NP_TCLUNK};
	np_creq *a, *b;
	assert_int_equal(np_client_submit(c, &t, NULL, NULL, &a), 0);
	assert_int_equal(np_client_submit(c, &t, NULL, NULL, &b), 0);
	assert_int_equal(np_creq_wait(a), 0);
	assert_int_equal(np_creq_wait(b), 0);
	/* Two requests in flight have distinct tags (tags[0] is Tversion's). */
	assert_int_not_equal(p.tags[1], p.tags[2]);
	np_creq_release(b);
	np_creq *d;
	assert_int_equal(np_client_submit(c, &t, NULL, NULL, &d), 0);
	assert_int_equal(np_creq_wait(d), 0);
	/* A released tag is taken again; a held one is not. */
	assert_int_equal(p.tags[3], p.tags[2]);
	np_creq_release(a);
	np_creq_release(d);
	stop(&p, c);
}

/* ---- pipelining and async ---- */

/* Reads every request already queued before answering any, and records
 * the largest batch: >1 proves requests were pipelined. */
static unsigned max_batch;
static int batch_reverse;
static int h_batch(struct peer *p, const np_fcall *t)
{
	static uint8_t buf[16][65536];
	np_fcall q[16];
	unsigned n = 1;
	q[0] = *t;
	if (t->type == NP_TWRITE) { /* keep payload views valid */
		memcpy(buf[0], t->twrite.data, t->twrite.count);
		q[0].twrite.data = buf[0];
	}
	for (;;) {
		usleep(300);
		uint8_t peek;
		if (n == 16 || recv(p->fd, &peek, 1, MSG_PEEK | MSG_DONTWAIT) != 1)
			break;
		if (peer_recv(p, buf[n], sizeof buf[n], &q[n]) < 0)
			return -1;
		n++;
	}
	if (n > max_batch)
		max_batch = n;
	for (unsigned i = 0; i < n; i++)
		h_good(p, &q[batch_reverse ? n - 1 - i : i]);
	return 0;
}

static void test_pipelined_read(void **state)
{
	(void)state;
	struct peer p;
	max_batch = 0;
	np_client *c = start(&p, h_batch);
	np_cfid *root;
	assert_int_equal(np_client_attach(c, "u", 0, "", &root), 0);
	size_t len = (1u << 20) + 1000; /* past EOF: must come back short */
	uint8_t *buf = malloc(len);
	ssize_t n = np_cfid_pread(root, buf, len, 0);
	assert_int_equal(n, 1u << 20);
	for (size_t i = 0; i < (size_t)n; i++)
		if (buf[i] != (uint8_t)i)
			fail_msg("byte %zu is %u", i, buf[i]);
	assert_true(max_batch > 1);
	uint32_t before = p.nreq;
	assert_int_equal(np_cfid_pwrite(root, buf, 300000, 0), 300000);
	uint32_t io = np_client_msize(c) - NP_IOHDRSZ;
	assert_int_equal(p.nreq - before, (300000 + io - 1) / io);
	free(buf);
	np_cfid_clunk(root);
	stop(&p, c);
}

static void count_cb(np_creq *r, void *arg)
{
	int *n = arg;
	if (np_creq_error(r) == 0 && np_creq_reply(r)->type == NP_RCLUNK)
		(*n)++;
}

static void test_async_callbacks(void **state)
{
	(void)state;
	struct peer p;
	np_client *c = start(&p, h_good);
	int done = 0;
	np_fcall t = {.type = NP_TCLUNK};
	for (int i = 0; i < 20; i++)
		assert_int_equal(np_client_submit(c, &t, count_cb, &done, NULL), 0);
	assert_int_equal(np_client_drain(c), 0);
	assert_int_equal(done, 20);
	assert_int_equal(np_client_poll(c, 10), 0); /* nothing in flight */
	stop(&p, c);
}

/* ---- concurrency ---- */

/* Answers in reverse order of arrival so replies cross between threads. */
static int h_reverse(struct peer *p, const np_fcall *t)
{
	batch_reverse = 1;
	return h_batch(p, t);
}

struct worker {
	np_cfid *root;
	int fails;
};

static void *worker_main(void *arg)
{
	struct worker *w = arg;
	for (int i = 0; i < 100; i++) {
		np_cfid *f;
		struct np_attr a;
		if (np_cfid_walk(w->root, 0, NULL, &f) < 0) {
			w->fails++;
			continue;
		}
		if (np_cfid_getattr(f, NP_GETATTR_BASIC, &a) < 0 || a.size != f->fid)
			w->fails++;
		np_cfid_clunk(f);
	}
	return NULL;
}

static void run_threads(const struct np_client_opts *o)
{
	struct peer p;
	np_client *c = start_opts(&p, h_reverse, o);
	np_cfid *root;
	assert_int_equal(np_client_attach(c, "u", 0, "", &root), 0);
	enum { N = 6 };
	pthread_t th[N];
	struct worker w[N];
	for (int i = 0; i < N; i++) {
		w[i] = (struct worker){.root = root};
		pthread_create(&th[i], NULL, worker_main, &w[i]);
	}
	for (int i = 0; i < N; i++) {
		pthread_join(th[i], NULL);
		assert_int_equal(w[i].fails, 0);
	}
	np_cfid_clunk(root);
	stop(&p, c);
}

static void test_threads(void **state)
{
	(void)state;
	run_threads(NULL);
}

/* Two tags, six threads: submitters wait for tags and all still finish. */
static void test_tag_exhaustion(void **state)
{
	(void)state;
	struct np_client_opts o = {.max_tags = 2, .dialect = -1};
	run_threads(&o);
}

/* ---- the reply parser, as a fuzz target sees it ---- */

static void test_parse_reply(void **state)
{
	(void)state;
	uint8_t buf[256];
	np_fcall r = {.type = NP_RWALK, .tag = 1}, out;
	r.rwalk.nwqid = 2;
	int n = np_encode(&r, NP_9P2000L, buf, sizeof buf);
	struct np_expect ex = {.ttype = NP_TWALK, .nwname = 2};
	assert_int_equal(np_client_parse_reply(buf, (size_t)n, NP_9P2000L, 8192, &ex, &out), 0);
	ex.nwname = 1;
	assert_int_equal(np_client_parse_reply(buf, (size_t)n, NP_9P2000L, 8192, &ex, &out), -EPROTO);
	ex.ttype = NP_TREAD;
	assert_int_equal(np_client_parse_reply(buf, (size_t)n, NP_9P2000L, 8192, &ex, &out), -EPROTO);
	/* Every truncation of a valid frame is rejected without overrun. */
	ex = (struct np_expect){.ttype = NP_TWALK, .nwname = 2};
	for (int len = 0; len < n; len++)
		assert_int_equal(np_client_parse_reply(buf, (size_t)len, NP_9P2000L, 8192, &ex, &out), -EPROTO);
	np_fcall e = {.type = NP_RLERROR, .tag = 1};
	e.rlerror.ecode = EACCES;
	n = np_encode(&e, NP_9P2000L, buf, sizeof buf);
	assert_int_equal(np_client_parse_reply(buf, (size_t)n, NP_9P2000L, 8192, &ex, &out), 0);
	assert_int_equal(np_reply_errno(&out, NP_9P2000L), EACCES);
	np_fcall e9 = {.type = NP_RERROR, .tag = 1};
	e9.rerror.ename = np_strz("file does not exist");
	n = np_encode(&e9, NP_9P2000, buf, sizeof buf);
	assert_int_equal(np_client_parse_reply(buf, (size_t)n, NP_9P2000, 8192, &ex, &out), 0);
	assert_int_equal(np_reply_errno(&out, NP_9P2000), ENOENT);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_version_and_attach),
		cmocka_unit_test(test_version_unknown),
		cmocka_unit_test(test_walk_path_long),
		cmocka_unit_test(test_malformed_counts),
		cmocka_unit_test(test_oversize_frame),
		cmocka_unit_test(test_truncated_body),
		cmocka_unit_test(test_unknown_tag),
		cmocka_unit_test(test_server_error),
		cmocka_unit_test(test_dropped_connection),
		cmocka_unit_test(test_flush_cancels),
		cmocka_unit_test(test_flush_reply_first),
		cmocka_unit_test(test_tag_reuse),
		cmocka_unit_test(test_pipelined_read),
		cmocka_unit_test(test_async_callbacks),
		cmocka_unit_test(test_threads),
		cmocka_unit_test(test_tag_exhaustion),
		cmocka_unit_test(test_parse_reply),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}

/* The server core driven with raw frames: session rules, fids, tags, flush,
 * version resets, bad input, many connections and abrupt disconnects. */
#include <errno.h>
#include <pthread.h>
#include <semaphore.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cmocka.h>

#include "harness.h"
#include "ninep/ramfs.h"

/* ---- a ramfs whose Tfsync blocks on a gate, on a worker thread ---- */

static struct np_fs_ops gated_ops;
static pthread_mutex_t gate_mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t gate_cv = PTHREAD_COND_INITIALIZER;
static int gate_open;
static sem_t gate_entered;

static int gated_fsync(np_req *r)
{
	(void)r;
	sem_post(&gate_entered);
	pthread_mutex_lock(&gate_mu);
	while (!gate_open)
		pthread_cond_wait(&gate_cv, &gate_mu);
	pthread_mutex_unlock(&gate_mu);
	return 0;
}

static void gate_set(int open)
{
	pthread_mutex_lock(&gate_mu);
	gate_open = open;
	pthread_cond_broadcast(&gate_cv);
	pthread_mutex_unlock(&gate_mu);
}

struct fixture {
	np_ramfs *fs;
	struct th *t;
};

static int setup_opts(void **state, int workers)
{
	struct fixture *fx = calloc(1, sizeof *fx);
	struct np_ramfs_opts ro = {.noperm = 1};
	fx->fs = np_ramfs_new(&ro);
	gated_ops = np_ramfs_ops;
	gated_ops.fsync = gated_fsync;
	gated_ops.inline_ops &= ~NP_OP_BIT(NP_OP_FSYNC);
	struct np_server_opts so = {.loops = 1, .workers = workers, .msize = 65536};
	fx->t = th_start(&gated_ops, fx->fs, &so);
	gate_set(0);
	sem_init(&gate_entered, 0, 0);
	if (!fx->t)
		return -1;
	*state = fx;
	return 0;
}

static int setup(void **state)
{
	return setup_opts(state, 2);
}

static int setup_one_worker(void **state)
{
	return setup_opts(state, 1);
}

static int teardown(void **state)
{
	struct fixture *fx = *state;
	gate_set(1);
	th_stop(fx->t);
	np_ramfs_free(fx->fs);
	sem_destroy(&gate_entered);
	free(fx);
	return 0;
}

static void session(struct th *t)
{
	assert_int_equal(th_version(t, 65536, "9P2000.L"), 0);
	assert_int_equal(th_attach(t, 1, "root", 0, ""), 0);
}

static int lcreate(struct th *t, uint32_t dirfid, uint32_t fid, const char *name)
{
	const char *none[1];
	(void)none;
	assert_int_equal(th_walk(t, dirfid, fid, 0, NULL), 0);
	np_fcall f = {.type = NP_TLCREATE, .tag = 5};
	f.tlcreate.fid = fid;
	f.tlcreate.name = np_strz(name);
	f.tlcreate.flags = NP_L_O_RDWR;
	f.tlcreate.mode = 0644;
	assert_int_equal(th_rpc(t, &f), 0);
	return th_err(t);
}

/* ---- version ---- */

static void test_version(void **state)
{
	struct th *t = ((struct fixture *)*state)->t;
	assert_int_equal(th_version(t, 1u << 30, "9P2000.L"), 0);
	assert_int_equal(t->r.version.msize, 65536); /* the server's cap */
	assert_true(np_str_eq(t->r.version.version, "9P2000.L"));
	assert_int_equal(th_version(t, 8192, "9P2000.u"), 0);
	assert_int_equal(t->r.version.msize, 8192);
	assert_true(np_str_eq(t->r.version.version, "9P2000.u"));
	assert_int_equal(th_version(t, 8192, "9P2000.x"), 0);
	assert_true(np_str_eq(t->r.version.version, "9P2000"));
	assert_int_equal(th_version(t, 8192, "foo"), 0);
	assert_true(np_str_eq(t->r.version.version, "unknown"));
	assert_int_equal(th_version(t, 100, "9P2000.L"), 0);
	assert_true(np_str_eq(t->r.version.version, "unknown"));
}

static void test_attach_rules(void **state)
{
	struct th *t = ((struct fixture *)*state)->t;
	/* No session before Tversion (answered in plain 9P2000 form). */
	t->d = NP_9P2000;
	assert_int_equal(th_attach(t, 1, "root", 0, ""), EPROTO);
	assert_int_equal(th_version(t, 65536, "9P2000.L"), 0);
	assert_int_equal(th_attach(t, 1, "root", 0, ""), 0);
	assert_int_equal(t->r.type, NP_RATTACH);
	assert_int_equal(t->r.rattach.qid.type, NP_QTDIR);
	/* Onto a fid already in use. */
	assert_int_equal(th_attach(t, 1, "root", 0, ""), EBADF);
	/* NOFID is never a fid. */
	assert_int_equal(th_attach(t, NP_NOFID, "root", 0, ""), EBADF);
	/* Auth: none configured. */
	np_fcall f = {.type = NP_TAUTH, .tag = 9};
	f.tauth.afid = 7;
	f.tauth.uname = np_strz("root");
	f.tauth.aname = np_strz("");
	assert_int_equal(th_rpc(t, &f), 0);
	assert_int_equal(t->r.type, NP_RLERROR);
}

static void test_walk_rules(void **state)
{
	struct th *t = ((struct fixture *)*state)->t;
	session(t);
	assert_int_equal(lcreate(t, 1, 2, "file"), 0);
	assert_int_equal(th_clunk(t, 2), 0);
	np_fcall f = {.type = NP_TMKDIR, .tag = 4};
	f.tmkdir.dfid = 1;
	f.tmkdir.name = np_strz("dir");
	f.tmkdir.mode = 0755;
	assert_int_equal(th_rpc(t, &f), 0);
	assert_int_equal(th_err(t), 0);

	/* Clone. */
	assert_int_equal(th_walk(t, 1, 10, 0, NULL), 0);
	assert_int_equal(t->r.rwalk.nwqid, 0);
	/* newfid in use. */
	assert_int_equal(th_walk(t, 1, 10, 0, NULL), EBADF);
	/* Unknown fid. */
	assert_int_equal(th_walk(t, 99, 11, 0, NULL), EBADF);
	/* First element missing: error, no newfid. */
	const char *miss[] = {"nope"};
	assert_int_equal(th_walk(t, 1, 11, 1, miss), ENOENT);
	assert_int_equal(th_clunk(t, 11), EBADF);
	/* Partial walk: qids for what was walked, and no newfid. */
	const char *part[] = {"dir", "nope", "x"};
	assert_int_equal(th_walk(t, 1, 12, 3, part), 0);
	assert_int_equal(t->r.type, NP_RWALK);
	assert_int_equal(t->r.rwalk.nwqid, 1);
	assert_int_equal(th_clunk(t, 12), EBADF);
	/* Walking past a file stops there (a partial walk)... */
	const char *past[] = {"file", "x"};
	assert_int_equal(th_walk(t, 1, 13, 2, past), 0);
	assert_int_equal(t->r.rwalk.nwqid, 1);
	/* ...and walking from a file is an error. */
	const char *file[] = {"file"};
	const char *x[] = {"x"};
	assert_int_equal(th_walk(t, 1, 13, 1, file), 0);
	assert_int_equal(th_walk(t, 13, 17, 1, x), ENOTDIR);
	assert_int_equal(th_clunk(t, 13), 0);
	/* Full walk, then fid == newfid walks in place. */
	const char *dir[] = {"dir"};
	assert_int_equal(th_walk(t, 1, 14, 1, dir), 0);
	const char *up[] = {".."};
	assert_int_equal(th_walk(t, 14, 14, 1, up), 0);
	assert_int_equal(t->r.rwalk.nwqid, 1);
	assert_int_equal(t->r.rwalk.wqid[0].type, NP_QTDIR);
	/* ".." at the root stays at the root. */
	assert_int_equal(th_walk(t, 1, 15, 1, up), 0);
	/* Bad names are refused by the codec with EINVAL. */
	const char *slash[] = {"a/b"};
	assert_int_equal(th_walk(t, 1, 16, 1, slash), EINVAL);
	const char *dot[] = {"."};
	assert_int_equal(th_walk(t, 1, 16, 1, dot), EINVAL);
	/* Session still fine. */
	assert_int_equal(th_clunk(t, 15), 0);
	assert_int_equal(th_clunk(t, 14), 0);
	assert_int_equal(th_clunk(t, 10), 0);
	assert_int_equal(th_clunk(t, 10), EBADF);
}

static void test_io(void **state)
{
	struct th *t = ((struct fixture *)*state)->t;
	session(t);
	assert_int_equal(lcreate(t, 1, 2, "data"), 0);
	np_fcall f = {.type = NP_TWRITE, .tag = 6};
	f.twrite.fid = 2;
	f.twrite.offset = 0;
	f.twrite.count = 11;
	f.twrite.data = (const uint8_t *)"hello world";
	assert_int_equal(th_rpc(t, &f), 0);
	assert_int_equal(t->r.type, NP_RWRITE);
	assert_int_equal(t->r.rwrite.count, 11);

	np_fcall rd = {.type = NP_TREAD, .tag = 7};
	rd.tread.fid = 2;
	rd.tread.offset = 6;
	rd.tread.count = 1u << 30; /* more than fits: clamped */
	assert_int_equal(th_rpc(t, &rd), 0);
	assert_int_equal(t->r.type, NP_RREAD);
	assert_int_equal(t->r.rread.count, 5);
	assert_memory_equal(t->r.rread.data, "world", 5);

	/* Reading an unopened fid. */
	assert_int_equal(th_walk(t, 1, 3, 0, NULL), 0);
	rd.tread.fid = 3;
	assert_int_equal(th_rpc(t, &rd), 0);
	assert_int_equal(th_err(t), EBADF);

	/* getattr on an unknown fid. */
	np_fcall ga = {.type = NP_TGETATTR, .tag = 8};
	ga.tgetattr.fid = 77;
	ga.tgetattr.request_mask = NP_GETATTR_ALL;
	assert_int_equal(th_rpc(t, &ga), 0);
	assert_int_equal(th_err(t), EBADF);
	ga.tgetattr.fid = 2;
	assert_int_equal(th_rpc(t, &ga), 0);
	assert_int_equal(t->r.type, NP_RGETATTR);
	assert_int_equal(t->r.rgetattr.size, 11);

	/* readdir of the root lists the file. */
	np_fcall od = {.type = NP_TLOPEN, .tag = 9};
	od.tlopen.fid = 3;
	od.tlopen.flags = NP_L_O_RDONLY;
	assert_int_equal(th_rpc(t, &od), 0);
	assert_int_equal(t->r.type, NP_RLOPEN);
	/* Opening twice is refused. */
	assert_int_equal(th_rpc(t, &od), 0);
	assert_int_equal(th_err(t), EBADF);
	np_fcall rdd = {.type = NP_TREADDIR, .tag = 10};
	rdd.tread.fid = 3;
	rdd.tread.count = 8192;
	assert_int_equal(th_rpc(t, &rdd), 0);
	assert_int_equal(t->r.type, NP_RREADDIR);
	np_dirent de;
	uint32_t pos = 0;
	int found = 0, r;
	while ((r = np_dirent_next(t->r.rread.data, t->r.rread.count, &pos, &de)) > 0)
		found |= np_str_eq(de.name, "data");
	assert_int_equal(r, 0);
	assert_true(found);
}

/* A malformed message gets an error for its tag and the session goes on; a
 * frame over msize ends the connection (its boundary cannot be trusted). */
static void test_bad_input(void **state)
{
	struct th *t = ((struct fixture *)*state)->t;
	session(t);
	/* Twalk with an embedded NUL in a name. */
	uint8_t bad[] = {0, 0, 0, 0, NP_TWALK, 42, 0, 1, 0, 0, 0, 2, 0, 0, 0, 1, 0, 3, 0, 'a', 0, 'b'};
	bad[0] = sizeof bad;
	assert_int_equal(th_send_raw(t, bad, sizeof bad), 0);
	assert_int_equal(th_recv(t, 5000), 0);
	assert_int_equal(t->r.tag, 42);
	assert_int_equal(th_err(t), EINVAL);
	/* An R-message as a request. */
	np_fcall rf = {.type = NP_RCLUNK, .tag = 43};
	assert_int_equal(th_rpc(t, &rf), 0);
	assert_int_equal(th_err(t), EOPNOTSUPP);
	/* Unknown type number. */
	uint8_t unk[] = {7, 0, 0, 0, 200, 44, 0};
	assert_int_equal(th_send_raw(t, unk, sizeof unk), 0);
	assert_int_equal(th_recv(t, 5000), 0);
	assert_int_equal(t->r.tag, 44);
	assert_int_equal(th_err(t), EOPNOTSUPP);
	/* Still serving. */
	assert_int_equal(th_walk(t, 1, 2, 0, NULL), 0);
	/* Oversized frame: closed. */
	uint8_t huge[7] = {0, 0, 0, 0x10, NP_TCLUNK, 1, 0};
	assert_int_equal(th_send_raw(t, huge, sizeof huge), 0);
	assert_int_equal(th_recv(t, 5000), -ECONNRESET);
	/* Other sessions are unaffected. */
	struct th *t2 = th_connect(t);
	session(t2);
	th_close(t2);
}

static void test_flush_unknown(void **state)
{
	struct th *t = ((struct fixture *)*state)->t;
	session(t);
	np_fcall f = {.type = NP_TFLUSH, .tag = 5};
	f.tflush.oldtag = 1234;
	assert_int_equal(th_rpc(t, &f), 0);
	assert_int_equal(t->r.type, NP_RFLUSH);
	assert_int_equal(t->r.tag, 5);
}

static void send_fsync(struct th *t, uint16_t tag, uint32_t fid)
{
	np_fcall f = {.type = NP_TFSYNC, .tag = tag};
	f.tfsync.fid = fid;
	assert_int_equal(th_send(t, &f), 0);
}

/* A running request completes and its reply precedes Rflush. */
static void test_flush_running(void **state)
{
	struct th *t = ((struct fixture *)*state)->t;
	session(t);
	assert_int_equal(lcreate(t, 1, 2, "f"), 0);
	send_fsync(t, 10, 2);
	sem_wait(&gate_entered);
	np_fcall fl = {.type = NP_TFLUSH, .tag = 11};
	fl.tflush.oldtag = 10;
	assert_int_equal(th_send(t, &fl), 0);
	assert_int_equal(th_recv(t, 200), -ETIMEDOUT); /* Rflush must wait */
	gate_set(1);
	assert_int_equal(th_recv(t, 5000), 0);
	assert_int_equal(t->r.type, NP_RFSYNC);
	assert_int_equal(t->r.tag, 10);
	assert_int_equal(th_recv(t, 5000), 0);
	assert_int_equal(t->r.type, NP_RFLUSH);
	assert_int_equal(t->r.tag, 11);
}

/* A queued request is cancelled: Rflush at once, never a reply for it. */
static void test_flush_queued(void **state)
{
	struct th *t = ((struct fixture *)*state)->t;
	session(t);
	assert_int_equal(lcreate(t, 1, 2, "f"), 0);
	send_fsync(t, 10, 2); /* occupies the only worker */
	sem_wait(&gate_entered);
	send_fsync(t, 11, 2); /* queued behind it */
	np_fcall fl = {.type = NP_TFLUSH, .tag = 12};
	fl.tflush.oldtag = 11;
	assert_int_equal(th_rpc(t, &fl), 0);
	assert_int_equal(t->r.type, NP_RFLUSH);
	assert_int_equal(t->r.tag, 12);
	/* The tag is free again at once. */
	np_fcall ga = {.type = NP_TGETATTR, .tag = 11};
	ga.tgetattr.fid = 2;
	ga.tgetattr.request_mask = NP_GETATTR_BASIC;
	assert_int_equal(th_rpc(t, &ga), 0);
	assert_int_equal(t->r.type, NP_RGETATTR);
	gate_set(1);
	assert_int_equal(th_recv(t, 5000), 0);
	assert_int_equal(t->r.tag, 10);
	assert_int_equal(t->r.type, NP_RFSYNC);
	assert_int_equal(th_recv(t, 300), -ETIMEDOUT); /* nothing for tag 11 */
}

static void test_duplicate_tag(void **state)
{
	struct th *t = ((struct fixture *)*state)->t;
	session(t);
	assert_int_equal(lcreate(t, 1, 2, "f"), 0);
	send_fsync(t, 10, 2);
	sem_wait(&gate_entered);
	send_fsync(t, 10, 2);
	assert_int_equal(th_recv(t, 5000), -ECONNRESET);
	gate_set(1); /* the running handler finishes into a closed connection */
	struct th *t2 = th_connect(t);
	session(t2);
	th_close(t2);
}

/* Tversion mid-session: in-flight replies are dropped, fids are clunked. */
static void test_version_reset(void **state)
{
	struct th *t = ((struct fixture *)*state)->t;
	session(t);
	assert_int_equal(lcreate(t, 1, 2, "f"), 0);
	send_fsync(t, 10, 2);
	sem_wait(&gate_entered);
	np_fcall v = {.type = NP_TVERSION, .tag = NP_NOTAG};
	v.version.msize = 8192;
	v.version.version = np_strz("9P2000.L");
	assert_int_equal(th_send(t, &v), 0);
	assert_int_equal(th_recv(t, 200), -ETIMEDOUT); /* waits for the worker */
	gate_set(1);
	assert_int_equal(th_recv(t, 5000), 0);
	assert_int_equal(t->r.type, NP_RVERSION); /* and no Rfsync before it */
	assert_int_equal(t->r.version.msize, 8192);
	assert_int_equal(th_clunk(t, 2), EBADF);
	assert_int_equal(th_clunk(t, 1), EBADF);
	assert_int_equal(th_attach(t, 1, "root", 0, ""), 0);
}

static void test_disconnect_in_flight(void **state)
{
	struct fixture *fx = *state;
	struct th *t = th_connect(fx->t);
	session(t);
	assert_int_equal(lcreate(t, 1, 2, "f"), 0);
	send_fsync(t, 10, 2);
	sem_wait(&gate_entered);
	send_fsync(t, 11, 2); /* queued */
	th_close(t);
	usleep(50000);
	gate_set(1);
	/* The server goes on. */
	session(fx->t);
}

/* A scripted session cut at every byte: each prefix, then close.  Under
 * ASan this proves every fid/buffer is released exactly once. */
static void test_disconnect_every_step(void **state)
{
	struct fixture *fx = *state;
	uint8_t script[4096];
	size_t len = 0;
	np_fcall f;
	const char *name[] = {"x"};
#define ADD(...) do { f = (np_fcall){__VA_ARGS__}; int n = np_encode(&f, NP_9P2000L, script + len, sizeof script - len); assert_true(n > 0); len += (size_t)n; } while (0)
	ADD(.type = NP_TVERSION, .tag = NP_NOTAG, .version = {65536, np_strz("9P2000.L")});
	ADD(.type = NP_TATTACH, .tag = 1, .tattach = {1, NP_NOFID, np_strz("root"), np_strz(""), 0});
	ADD(.type = NP_TWALK, .tag = 2, .twalk = {1, 2, 0, {{0}}});
	ADD(.type = NP_TLCREATE, .tag = 3, .tlcreate = {2, np_strz("x"), NP_L_O_RDWR, 0644, 0});
	ADD(.type = NP_TWRITE, .tag = 4, .twrite = {2, 0, 5, (const uint8_t *)"hello"});
	ADD(.type = NP_TFSYNC, .tag = 5, .tfsync = {2, 0});
	ADD(.type = NP_TWALK, .tag = 6, .twalk = {1, 3, 1, {np_strz(name[0])}});
	ADD(.type = NP_TXATTRWALK, .tag = 7, .txattrwalk = {3, 4, np_strz("")});
	ADD(.type = NP_TREAD, .tag = 8, .tread = {2, 0, 100});
	ADD(.type = NP_TCLUNK, .tag = 9, .tclunk = {2});
#undef ADD
	gate_set(1); /* fsync passes through */
	for (size_t cut = 0; cut <= len; cut++) {
		struct th *t = th_connect(fx->t);
		assert_non_null(t);
		assert_int_equal(th_send_raw(t, script, cut), 0);
		th_close(t);
	}
	session(fx->t);
	/* Let the server notice the last closes before teardown checks leaks. */
	usleep(100000);
}

/* A client that sends its requests and closes its sending side still gets
 * every reply (even one held on a worker), then EOF. */
static void test_half_close(void **state)
{
	struct fixture *fx = *state;
	struct th *t = th_connect(fx->t);
	session(t);
	assert_int_equal(lcreate(t, 1, 2, "f"), 0);
	send_fsync(t, 10, 2); /* on a worker, gated */
	np_fcall f = {.type = NP_TWALK, .tag = 11, .twalk = {1, 3, 0, {{0}}}};
	assert_int_equal(th_send(t, &f), 0);
	f = (np_fcall){.type = NP_TCLUNK, .tag = 12, .tclunk = {3}};
	assert_int_equal(th_send(t, &f), 0);
	assert_int_equal(shutdown(t->fd, SHUT_WR), 0);
	sem_wait(&gate_entered);
	int seen = 0;
	for (int i = 0; i < 2; i++) { /* walk and clunk answer first */
		assert_int_equal(th_recv(t, 5000), 0);
		seen |= 1 << (t->r.tag - 10);
	}
	gate_set(1);
	assert_int_equal(th_recv(t, 5000), 0);
	assert_int_equal(t->r.type, NP_RFSYNC);
	seen |= 1 << (t->r.tag - 10);
	assert_int_equal(seen, 7);
	assert_int_equal(th_recv(t, 5000), -ECONNRESET); /* then EOF */
	th_close(t);
}

struct cworker {
	struct th *parent;
	int ok;
};

static void *conn_worker(void *arg)
{
	struct cworker *w = arg;
	struct th *t = th_connect(w->parent);
	if (!t)
		return NULL;
	if (th_version(t, 65536, "9P2000.L") == 0 && th_attach(t, 1, "root", 0, "") == 0 &&
	    th_walk(t, 1, 2, 0, NULL) == 0 && th_clunk(t, 2) == 0)
		w->ok = 1;
	th_close(t);
	return NULL;
}

static void test_many_connections(void **state)
{
	struct fixture *fx = *state;
	enum { N = 1000, BATCH = 50 };
	static struct cworker w[N];
	pthread_t th[BATCH];
	for (int i = 0; i < N; i += BATCH) {
		for (int j = 0; j < BATCH; j++) {
			w[i + j].parent = fx->t;
			pthread_create(&th[j], NULL, conn_worker, &w[i + j]);
		}
		for (int j = 0; j < BATCH; j++)
			pthread_join(th[j], NULL);
	}
	int ok = 0;
	for (int i = 0; i < N; i++)
		ok += w[i].ok;
	assert_int_equal(ok, N);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_version, setup, teardown),
		cmocka_unit_test_setup_teardown(test_attach_rules, setup, teardown),
		cmocka_unit_test_setup_teardown(test_walk_rules, setup, teardown),
		cmocka_unit_test_setup_teardown(test_io, setup, teardown),
		cmocka_unit_test_setup_teardown(test_bad_input, setup, teardown),
		cmocka_unit_test_setup_teardown(test_flush_unknown, setup, teardown),
		cmocka_unit_test_setup_teardown(test_flush_running, setup, teardown),
		cmocka_unit_test_setup_teardown(test_flush_queued, setup_one_worker, teardown),
		cmocka_unit_test_setup_teardown(test_duplicate_tag, setup, teardown),
		cmocka_unit_test_setup_teardown(test_version_reset, setup, teardown),
		cmocka_unit_test_setup_teardown(test_disconnect_in_flight, setup_one_worker, teardown),
		cmocka_unit_test_setup_teardown(test_disconnect_every_step, setup, teardown),
		cmocka_unit_test_setup_teardown(test_half_close, setup, teardown),
		cmocka_unit_test_setup_teardown(test_many_connections, setup, teardown),
	};
	return cmocka_run_group_tests_name("server", tests, NULL, NULL);
}

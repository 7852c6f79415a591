/* The 9P2000 / 9P2000.u adapter driven with raw frames against ramfs: every
 * test runs in both dialects, with the backend's handlers inline on the
 * loop thread and (inline_ops = 0) on workers. */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <unistd.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "harness.h"
#include "ninep/ramfs.h"

struct fixture {
	np_ramfs *fs;
	struct np_fs_ops ops;
	struct th *t;
	const char *version;
	int dotu;
};

static int setup_with(void **state, const char *version, int inline_ok)
{
	struct fixture *fx = calloc(1, sizeof *fx);
	struct np_ramfs_opts ro = {.root_mode = 0755};
	fx->fs = np_ramfs_new(&ro);
	fx->ops = np_ramfs_ops;
	if (!inline_ok)
		fx->ops.inline_ops = 0; /* every handler, composite or not, on a worker */
	struct np_server_opts so = {.loops = 1, .workers = 2, .msize = 65536};
	fx->t = th_start(&fx->ops, fx->fs, &so);
	fx->version = version;
	fx->dotu = strcmp(version, "9P2000.u") == 0;
	if (!fx->t)
		return -1;
	*state = fx;
	return 0;
}

static int setup_plain_inline(void **state) { return setup_with(state, "9P2000", 1); }
static int setup_u_inline(void **state) { return setup_with(state, "9P2000.u", 1); }
static int setup_plain_worker(void **state) { return setup_with(state, "9P2000", 0); }
static int setup_u_worker(void **state) { return setup_with(state, "9P2000.u", 0); }

static int teardown(void **state)
{
	struct fixture *fx = *state;
	th_stop(fx->t);
	np_ramfs_free(fx->fs);
	free(fx);
	return 0;
}

/* ---- helpers ---- */

static struct th *session(void **state)
{
	struct fixture *fx = *state;
	struct th *t = fx->t;
	assert_int_equal(th_version(t, 65536, fx->version), 0);
	assert_true(np_str_eq(t->r.version.version, fx->version));
	assert_int_equal(t->d, fx->dotu ? NP_9P2000U : NP_9P2000);
	/* plain 9P2000 has no n_uname: ramfs maps the name "root" */
	assert_int_equal(th_attach(t, 1, "root", fx->dotu ? 0 : NP_NONUNAME, ""), 0);
	return t;
}

static int rpc(struct th *t, const np_fcall *f)
{
	assert_int_equal(th_rpc(t, f), 0);
	assert_int_equal(t->r.tag, f->tag);
	return th_err(t);
}

static int walk1(struct th *t, uint32_t from, uint32_t to, const char *name)
{
	const char *n[] = {name};
	return th_walk(t, from, to, 1, n);
}

/* Clone dirfid into fid and Tcreate there; the clone is clunked on error.
 * On success t->r is the Rcreate. */
static int create(struct th *t, uint32_t dirfid, uint32_t fid, const char *name, uint32_t perm,
		  uint8_t mode, const char *ext)
{
	assert_int_equal(th_walk(t, dirfid, fid, 0, NULL), 0);
	np_fcall f = {.type = NP_TCREATE, .tag = 10};
	f.tcreate.fid = fid;
	f.tcreate.name = np_strz(name);
	f.tcreate.perm = perm;
	f.tcreate.mode = mode;
	f.tcreate.extension = np_strz(ext ? ext : "");
	int e = rpc(t, &f);
	if (e)
		assert_int_equal(th_clunk(t, fid), 0);
	else
		assert_int_equal(t->r.type, NP_RCREATE);
	return e;
}

static int topen(struct th *t, uint32_t fid, uint8_t mode)
{
	np_fcall f = {.type = NP_TOPEN, .tag = 11};
	f.topen.fid = fid;
	f.topen.mode = mode;
	int e = rpc(t, &f);
	if (!e)
		assert_int_equal(t->r.type, NP_ROPEN);
	return e;
}

static void twrite(struct th *t, uint32_t fid, uint64_t off, const char *data)
{
	np_fcall f = {.type = NP_TWRITE, .tag = 12};
	f.twrite.fid = fid;
	f.twrite.offset = off;
	f.twrite.count = (uint32_t)strlen(data);
	f.twrite.data = (const uint8_t *)data;
	assert_int_equal(rpc(t, &f), 0);
	assert_int_equal(t->r.rwrite.count, strlen(data));
}

/* Tread; the payload is t->r.rread. */
static int tread(struct th *t, uint32_t fid, uint64_t off, uint32_t count)
{
	np_fcall f = {.type = NP_TREAD, .tag = 13};
	f.tread.fid = fid;
	f.tread.offset = off;
	f.tread.count = count;
	int e = rpc(t, &f);
	if (!e)
		assert_int_equal(t->r.type, NP_RREAD);
	return e;
}

/* Tstat; *st views the reply (valid until the next message). */
static int tstat(struct th *t, uint32_t fid, np_stat *st)
{
	np_fcall f = {.type = NP_TSTAT, .tag = 14};
	f.tclunk.fid = fid;
	int e = rpc(t, &f);
	if (!e) {
		assert_int_equal(t->r.type, NP_RSTAT);
		*st = t->r.rstat.stat;
	}
	return e;
}

static int twstat(struct th *t, uint32_t fid, const np_stat *st)
{
	np_fcall f = {.type = NP_TWSTAT, .tag = 15};
	f.twstat.fid = fid;
	f.twstat.stat = *st;
	int e = rpc(t, &f);
	if (!e)
		assert_int_equal(t->r.type, NP_RWSTAT);
	return e;
}

static int tremove(struct th *t, uint32_t fid)
{
	np_fcall f = {.type = NP_TREMOVE, .tag = 16};
	f.tclunk.fid = fid;
	return rpc(t, &f);
}

/* A stat that touches nothing. */
static np_stat blank(void)
{
	np_stat st;
	memset(&st, 0xff, sizeof st);
	st.name = st.uid = st.gid = st.muid = st.extension = np_str_make("", 0);
	return st;
}

/* The error reply in t->r is `err` in the session's form. */
static void assert_rerror(struct fixture *fx, int err)
{
	struct th *t = fx->t;
	assert_int_equal(t->r.type, NP_RERROR);
	assert_true(np_str_eq(t->r.rerror.ename, np_errstr(err)));
	if (fx->dotu)
		assert_int_equal(t->r.rerror.ecode, err);
}

static int exists(struct th *t, const char *name)
{
	int e = walk1(t, 1, 99, name);
	if (e == 0)
		assert_int_equal(th_clunk(t, 99), 0);
	return e == 0;
}

/* ---- tests ---- */

static void test_version_attach(void **state)
{
	struct fixture *fx = *state;
	struct th *t = session(state);
	assert_int_equal(t->r.type, NP_RATTACH);
	assert_int_equal(t->r.rattach.qid.type, NP_QTDIR);
	/* A 9P2000.L session has the .L messages for these. */
	assert_int_equal(th_version(t, 65536, "9P2000.L"), 0);
	assert_int_equal(th_attach(t, 1, "root", 0, ""), 0);
	np_stat st;
	assert_int_equal(tstat(t, 1, &st), EOPNOTSUPP);
	assert_int_equal(t->r.type, NP_RLERROR);
	/* And back. */
	assert_int_equal(th_version(t, 8192, fx->version), 0);
	assert_int_equal(t->r.version.msize, 8192);
	assert_int_equal(th_attach(t, 1, "root", fx->dotu ? 0 : NP_NONUNAME, ""), 0);
	assert_int_equal(tstat(t, 1, &st), 0);
	assert_true(np_str_eq(st.name, "/"));
}

static void test_create_file(void **state)
{
	struct fixture *fx = *state;
	struct th *t = session(state);
	assert_int_equal(create(t, 1, 2, "f", 0640, NP_ORDWR, NULL), 0);
	assert_int_equal(t->r.ropen.qid.type, NP_QTFILE);
	twrite(t, 2, 0, "hello");
	assert_int_equal(tread(t, 2, 0, 100), 0);
	assert_int_equal(t->r.rread.count, 5);
	assert_memory_equal(t->r.rread.data, "hello", 5);
	np_stat st;
	assert_int_equal(tstat(t, 2, &st), 0);
	assert_true(np_str_eq(st.name, "f"));
	assert_int_equal(st.mode, 0640);
	assert_int_equal(st.length, 5);
	assert_int_equal(st.qid.type, NP_QTFILE);
	/* An existing name is an error, not a truncation. */
	assert_int_equal(create(t, 1, 3, "f", 0644, NP_OWRITE, NULL), EEXIST);
	assert_int_equal(th_clunk(t, 2), 0);
	assert_int_equal(walk1(t, 1, 2, "f"), 0);
	assert_int_equal(tstat(t, 2, &st), 0);
	assert_int_equal(st.length, 5);
	/* Tcreate needs a directory fid that is not open. */
	assert_int_equal(topen(t, 2, NP_OREAD), 0);
	np_fcall f = {.type = NP_TCREATE, .tag = 10};
	f.tcreate.fid = 2;
	f.tcreate.name = np_strz("x");
	f.tcreate.perm = 0644;
	assert_int_equal(rpc(t, &f), EBADF);
	assert_rerror(fx, EBADF);
	assert_int_equal(th_clunk(t, 2), 0);
	assert_int_equal(walk1(t, 1, 2, "f"), 0);
	assert_int_equal(rpc(t, &f), ENOTDIR);
	assert_rerror(fx, ENOTDIR);
}

static void test_create_dir(void **state)
{
	struct fixture *fx = *state;
	struct th *t = session(state);
	assert_int_equal(create(t, 1, 2, "d", NP_DMDIR | 0750, NP_OREAD, NULL), 0);
	assert_int_equal(t->r.ropen.qid.type, NP_QTDIR);
	/* the fid is the new directory, open for reading: empty in 9P2000,
	 * just "." and ".." in .u (what a Unix client lists) */
	assert_int_equal(tread(t, 2, 0, 4096), 0);
	if (fx->dotu) {
		np_stat d1, d2;
		long u1 = np_stat_decode(t->r.rread.data, t->r.rread.count, t->d, &d1);
		assert_true(u1 > 0);
		long u2 = np_stat_decode(t->r.rread.data + u1, t->r.rread.count - (size_t)u1, t->d, &d2);
		assert_int_equal(u1 + u2, t->r.rread.count);
		assert_true(np_str_eq(d1.name, ".") && np_str_eq(d2.name, ".."));
		assert_true(np_str_eq(d1.extension, "HARDLINKCOUNT 2"));
	} else {
		assert_int_equal(t->r.rread.count, 0);
	}
	np_stat st;
	assert_int_equal(tstat(t, 2, &st), 0);
	assert_true(np_str_eq(st.name, "d"));
	assert_int_equal(st.mode, NP_DMDIR | 0750);
	assert_int_equal(st.length, 0);
	/* a file inside it, through a walk */
	assert_int_equal(walk1(t, 1, 3, "d"), 0);
	assert_int_equal(create(t, 3, 4, "inner", 0600, NP_OWRITE, NULL), 0);
	assert_int_equal(th_clunk(t, 4), 0);
	const char *p[] = {"d", "inner"};
	assert_int_equal(th_walk(t, 1, 4, 2, p), 0);
	assert_int_equal(tstat(t, 4, &st), 0);
	assert_true(np_str_eq(st.name, "inner"));
	/* directories are only ever open for reading; nothing is left behind */
	assert_int_equal(create(t, 1, 5, "w", NP_DMDIR | 0755, NP_OWRITE, NULL), EISDIR);
	assert_false(exists(t, "w"));
	assert_int_equal(create(t, 1, 5, "d", NP_DMDIR | 0755, NP_OREAD, NULL), EEXIST);
	/* the directory bit goes with no .u file type */
	if (fx->dotu)
		assert_int_equal(create(t, 1, 5, "x", NP_DMDIR | NP_DMSYMLINK, 0, "t"), EINVAL);
}

static void test_create_special(void **state)
{
	struct fixture *fx = *state;
	struct th *t = session(state);
	np_stat st;
	if (!fx->dotu) {
		/* plain 9P2000 has no symlinks, devices or links */
		assert_int_equal(create(t, 1, 2, "l", NP_DMSYMLINK | 0777, 0, NULL), EINVAL);
		assert_int_equal(create(t, 1, 2, "p", NP_DMNAMEDPIPE | 0600, 0, NULL), EINVAL);
		assert_false(exists(t, "l"));
		return;
	}
	assert_int_equal(create(t, 1, 2, "l", NP_DMSYMLINK | 0777, NP_OREAD, "some/target"), 0);
	assert_int_equal(tstat(t, 2, &st), 0);
	assert_true(np_str_eq(st.name, "l"));
	assert_int_equal(st.mode & NP_DMSYMLINK, NP_DMSYMLINK);
	assert_true(np_str_eq(st.extension, "some/target"));

	assert_int_equal(create(t, 1, 3, "cdev", NP_DMDEVICE | 0620, NP_OREAD, "c 4 64"), 0);
	assert_int_equal(tstat(t, 3, &st), 0);
	assert_int_equal(st.mode, NP_DMDEVICE | 0620);
	assert_true(np_str_eq(st.extension, "c 4 64"));
	assert_int_equal(create(t, 1, 4, "bdev", NP_DMDEVICE | 0600, NP_OREAD, "b 8 1"), 0);
	assert_int_equal(tstat(t, 4, &st), 0);
	assert_true(np_str_eq(st.extension, "b 8 1"));
	assert_int_equal(create(t, 1, 5, "bad", NP_DMDEVICE | 0600, NP_OREAD, "x 1 2"), EINVAL);
	assert_int_equal(create(t, 1, 5, "bad", NP_DMDEVICE | 0600, NP_OREAD, "c 1"), EINVAL);
	assert_false(exists(t, "bad"));

	assert_int_equal(create(t, 1, 5, "fifo", NP_DMNAMEDPIPE | 0644, NP_OREAD, NULL), 0);
	assert_int_equal(tstat(t, 5, &st), 0);
	assert_int_equal(st.mode, NP_DMNAMEDPIPE | 0644);
	assert_int_equal(create(t, 1, 6, "sock", NP_DMSOCKET | 0755, NP_OREAD, NULL), 0);
	assert_int_equal(tstat(t, 6, &st), 0);
	assert_int_equal(st.mode, NP_DMSOCKET | 0755);

	/* a hard link: the extension names the target's fid */
	assert_int_equal(create(t, 1, 7, "orig", 0644, NP_ORDWR, NULL), 0);
	twrite(t, 7, 0, "linked data");
	assert_int_equal(create(t, 1, 8, "hl", NP_DMLINK, NP_OREAD, "7"), 0);
	assert_int_equal(tstat(t, 8, &st), 0);
	assert_true(np_str_eq(st.name, "hl"));
	assert_int_equal(st.length, 11);
	uint64_t path = st.qid.path;
	assert_int_equal(tstat(t, 7, &st), 0);
	assert_int_equal(st.qid.path, path);
	assert_int_equal(create(t, 1, 9, "hl2", NP_DMLINK, NP_OREAD, "4242"), EBADF);
	assert_int_equal(create(t, 1, 9, "hl2", NP_DMLINK, NP_OREAD, "seven"), EINVAL);
	/* one file type at a time */
	assert_int_equal(create(t, 1, 9, "two", NP_DMSOCKET | NP_DMNAMEDPIPE, 0, NULL), EINVAL);
}

static void test_open_trunc(void **state)
{
	struct fixture *fx = *state;
	struct th *t = session(state);
	np_stat st;
	assert_int_equal(create(t, 1, 2, "f", 0644, NP_OWRITE, NULL), 0);
	twrite(t, 2, 0, "0123456789");
	assert_int_equal(th_clunk(t, 2), 0);

	assert_int_equal(walk1(t, 1, 2, "f"), 0);
	assert_int_equal(topen(t, 2, NP_OREAD), 0);
	assert_int_equal(t->r.ropen.qid.type, NP_QTFILE);
	assert_int_equal(tread(t, 2, 2, 3), 0);
	assert_memory_equal(t->r.rread.data, "234", 3);
	/* opened once only */
	assert_int_equal(topen(t, 2, NP_OREAD), EBADF);
	assert_rerror(fx, EBADF);
	assert_int_equal(th_clunk(t, 2), 0);

	assert_int_equal(walk1(t, 1, 2, "f"), 0);
	assert_int_equal(topen(t, 2, NP_OWRITE | NP_OTRUNC), 0);
	assert_int_equal(tstat(t, 2, &st), 0);
	assert_int_equal(st.length, 0);
	/* opened for writing only */
	assert_int_equal(tread(t, 2, 0, 10), EBADF);
	assert_int_equal(th_clunk(t, 2), 0);

	/* OEXEC reads */
	assert_int_equal(walk1(t, 1, 2, "f"), 0);
	assert_int_equal(topen(t, 2, NP_OEXEC), 0);
	assert_int_equal(tread(t, 2, 0, 10), 0);
	assert_int_equal(t->r.rread.count, 0);
	assert_int_equal(th_clunk(t, 2), 0);

	/* a directory is not opened for writing */
	assert_int_equal(th_walk(t, 1, 3, 0, NULL), 0);
	assert_int_equal(topen(t, 3, NP_OWRITE), EISDIR);
	assert_rerror(fx, EISDIR);
	assert_int_equal(topen(t, 3, NP_OREAD), 0);
	assert_int_equal(t->r.ropen.qid.type, NP_QTDIR);
	/* unknown fid */
	assert_int_equal(topen(t, 77, NP_OREAD), EBADF);
}

static void test_orclose(void **state)
{
	struct th *t = session(state);
	assert_int_equal(create(t, 1, 2, "tmp", 0600, NP_ORDWR | NP_ORCLOSE, NULL), 0);
	twrite(t, 2, 0, "scratch");
	assert_true(exists(t, "tmp"));
	assert_int_equal(th_clunk(t, 2), 0);
	assert_false(exists(t, "tmp"));

	/* Topen with ORCLOSE too, and a plain open leaves the file alone */
	assert_int_equal(create(t, 1, 2, "keep", 0600, NP_OWRITE, NULL), 0);
	assert_int_equal(th_clunk(t, 2), 0);
	assert_int_equal(walk1(t, 1, 2, "keep"), 0);
	assert_int_equal(topen(t, 2, NP_OREAD), 0);
	assert_int_equal(th_clunk(t, 2), 0);
	assert_true(exists(t, "keep"));
	assert_int_equal(walk1(t, 1, 2, "keep"), 0);
	assert_int_equal(topen(t, 2, NP_OREAD | NP_ORCLOSE), 0);
	assert_true(exists(t, "keep"));
	assert_int_equal(th_clunk(t, 2), 0);
	assert_false(exists(t, "keep"));
	assert_int_equal(th_clunk(t, 2), EBADF);
}

static void test_stat_fields(void **state)
{
	struct fixture *fx = *state;
	struct th *t = session(state);
	np_stat st;
	assert_int_equal(tstat(t, 1, &st), 0);
	assert_true(np_str_eq(st.name, "/"));
	assert_int_equal(st.mode, NP_DMDIR | 0755);
	assert_int_equal(st.qid.type, NP_QTDIR);
	assert_int_equal(st.length, 0);
	assert_int_equal(st.type, 0);
	assert_int_equal(st.dev, 0);
	/* uid 0 and gid 0 have names on any Linux */
	assert_true(np_str_eq(st.uid, "root"));
	assert_true(np_str_eq(st.gid, "root"));
	assert_true(np_str_eq(st.muid, "root"));
	if (fx->dotu) {
		assert_int_equal(st.n_uid, 0);
		assert_int_equal(st.n_gid, 0);
		/* the link count, as Linux's v9fs reads it from .u stats */
		assert_true(st.extension.len > 14 && memcmp(st.extension.s, "HARDLINKCOUNT ", 14) == 0);
	}

	assert_int_equal(create(t, 1, 2, "f", 0640, NP_ORDWR, NULL), 0);
	twrite(t, 2, 0, "abc");
	assert_int_equal(tstat(t, 2, &st), 0);
	assert_int_equal(st.mode, 0640);
	assert_int_equal(st.length, 3);
	assert_true(st.mtime > 1600000000u);
	assert_true(st.atime > 1600000000u);

	/* set-id bits are .u only */
	np_stat w = blank();
	w.mode = 04755 & 0777;
	if (fx->dotu)
		w.mode |= NP_DMSETUID;
	assert_int_equal(twstat(t, 2, &w), 0);
	assert_int_equal(tstat(t, 2, &st), 0);
	assert_int_equal(st.mode, fx->dotu ? (NP_DMSETUID | 0755) : 0755);

	/* an owner with no user name shows as a number */
	w = blank();
	if (fx->dotu)
		w.n_uid = 54321;
	else
		w.uid = np_strz("54321");
	assert_int_equal(twstat(t, 2, &w), 0);
	assert_int_equal(tstat(t, 2, &st), 0);
	assert_true(np_str_eq(st.uid, "54321"));
	assert_true(np_str_eq(st.muid, "54321"));
	assert_true(np_str_eq(st.gid, "root"));
	if (fx->dotu)
		assert_int_equal(st.n_uid, 54321);
	/* and back by name */
	w = blank();
	w.uid = np_strz("root");
	assert_int_equal(twstat(t, 2, &w), 0);
	assert_int_equal(tstat(t, 2, &st), 0);
	assert_true(np_str_eq(st.uid, "root"));
	w.uid = np_strz("no-such-user-here");
	assert_int_equal(twstat(t, 2, &w), EINVAL);
	assert_int_equal(tstat(t, 77, &st), EBADF);
	assert_rerror(fx, EBADF);
}

static void test_wstat(void **state)
{
	struct fixture *fx = *state;
	struct th *t = session(state);
	np_stat st, w;
	assert_int_equal(create(t, 1, 2, "f", 0644, NP_ORDWR, NULL), 0);
	twrite(t, 2, 0, "0123456789");

	w = blank();
	w.mode = 0600;
	assert_int_equal(twstat(t, 2, &w), 0);
	w = blank();
	w.length = 4;
	assert_int_equal(twstat(t, 2, &w), 0);
	w = blank();
	w.mtime = 1000000000u;
	w.atime = 1000000001u;
	assert_int_equal(twstat(t, 2, &w), 0);
	assert_int_equal(tstat(t, 2, &st), 0);
	assert_int_equal(st.mode, 0600);
	assert_int_equal(st.length, 4);
	assert_int_equal(st.mtime, 1000000000u);
	assert_int_equal(st.atime, 1000000001u);

	/* "don't touch" everything changes nothing */
	w = blank();
	assert_int_equal(twstat(t, 2, &w), 0);
	np_stat again;
	assert_int_equal(tstat(t, 2, &again), 0);
	assert_int_equal(again.mode, 0600);
	assert_int_equal(again.length, 4);
	assert_int_equal(again.mtime, 1000000000u);
	assert_true(np_str_eq(again.name, "f"));

	/* a whole stat sent back unchanged is fine, also for a directory */
	assert_int_equal(tstat(t, 2, &st), 0);
	np_stat copy = st;
	assert_int_equal(twstat(t, 2, &copy), 0);
	assert_int_equal(tstat(t, 1, &st), 0);
	copy = st;
	assert_int_equal(twstat(t, 1, &copy), 0);

	/* what 9P2000 does not let change */
	w = blank();
	w.mode = NP_DMDIR | 0755;
	assert_int_equal(twstat(t, 2, &w), EPERM);
	assert_rerror(fx, EPERM);
	w = blank();
	w.type = 3;
	assert_int_equal(twstat(t, 2, &w), EINVAL);
	w = blank();
	w.qid.type = 0;
	w.qid.version = 0;
	w.qid.path = 12345;
	assert_int_equal(twstat(t, 2, &w), EINVAL);
	/* nothing of a refused wstat happened */
	w = blank();
	w.mode = NP_DMDIR | 0777;
	w.length = 0;
	assert_int_equal(twstat(t, 2, &w), EPERM);
	assert_int_equal(tstat(t, 2, &st), 0);
	assert_int_equal(st.mode, 0600);
	assert_int_equal(st.length, 4);

	/* rename in the root */
	w = blank();
	w.name = np_strz("g");
	assert_int_equal(twstat(t, 2, &w), 0);
	assert_false(exists(t, "f"));
	assert_true(exists(t, "g"));
	assert_int_equal(tstat(t, 2, &st), 0);
	assert_true(np_str_eq(st.name, "g"));
	w.name = np_strz("a/b");
	assert_int_equal(twstat(t, 2, &w), EINVAL);
	w.name = np_strz("..");
	assert_int_equal(twstat(t, 2, &w), EINVAL);
	/* the root is not renamed */
	w.name = np_strz("newroot");
	assert_int_equal(twstat(t, 1, &w), EBUSY);

	/* rename and mode in one, below a directory that is itself renamed */
	assert_int_equal(create(t, 1, 3, "d", NP_DMDIR | 0755, NP_OREAD, NULL), 0);
	assert_int_equal(th_clunk(t, 3), 0);
	assert_int_equal(walk1(t, 1, 3, "d"), 0);
	assert_int_equal(create(t, 3, 4, "x", 0644, NP_OWRITE, NULL), 0);
	assert_int_equal(th_clunk(t, 4), 0);
	const char *dx[] = {"d", "x"};
	assert_int_equal(th_walk(t, 1, 4, 2, dx), 0);
	w = blank();
	w.name = np_strz("e");
	assert_int_equal(twstat(t, 3, &w), 0); /* d -> e, while fid 4 is e/x */
	w = blank();
	w.name = np_strz("y");
	w.mode = 0640;
	assert_int_equal(twstat(t, 4, &w), 0);
	const char *ey[] = {"e", "y"};
	assert_int_equal(th_walk(t, 1, 5, 2, ey), 0);
	assert_int_equal(tstat(t, 5, &st), 0);
	assert_true(np_str_eq(st.name, "y"));
	assert_int_equal(st.mode, 0640);
	/* a wstat refused on its checks renames nothing */
	w = blank();
	w.name = np_strz("w");
	w.length = 5;
	w.mode = 0755 | NP_DMDIR;
	assert_int_equal(twstat(t, 5, &w), EPERM);
	const char *ew[] = {"e", "w"};
	assert_int_equal(th_walk(t, 1, 6, 2, ew), 0);
	assert_int_equal(t->r.rwalk.nwqid, 1); /* e, but no w */
	/* setattr refused after the rename (a fifo has no size): undone */
	if (fx->dotu) {
		assert_int_equal(create(t, 3, 6, "p", NP_DMNAMEDPIPE | 0644, 0, NULL), 0);
		w = blank();
		w.name = np_strz("q");
		w.length = 5;
		assert_int_equal(twstat(t, 6, &w), EINVAL);
		const char *ep[] = {"e", "p"};
		assert_int_equal(th_walk(t, 1, 7, 2, ep), 0);
		assert_int_equal(th_clunk(t, 7), 0);
	}
}

/* Read the whole directory fid with reads of `count`; returns the number
 * of reads, fills seen[] (index from the name "fNNN"). */
static int read_all(struct th *t, uint32_t fid, uint32_t count, enum np_dialect d, int *seen, int n)
{
	uint64_t off = 0;
	int reads = 0;
	for (;;) {
		assert_int_equal(tread(t, fid, off, count), 0);
		uint32_t got = t->r.rread.count;
		assert_true(got <= count);
		if (got == 0)
			break;
		reads++;
		long pos = 0;
		while (pos < got) {
			np_stat st;
			long used = np_stat_decode(t->r.rread.data + pos, got - (size_t)pos, d, &st);
			assert_true(used > 0); /* whole entries only */
			pos += used;
			if (np_str_eq(st.name, ".") || np_str_eq(st.name, "..")) {
				/* only .u lists them, each once (seen[n], seen[n + 1]) */
				assert_int_equal(d, NP_9P2000U);
				seen[n + (st.name.len == 2)]++;
				continue;
			}
			char name[32];
			assert_int_equal(np_str_copy(name, sizeof name, st.name), 0);
			int i = atoi(name + 1);
			assert_true(name[0] == 'f' && i >= 0 && i < n);
			assert_int_equal(st.mode, 0600);
			assert_true(np_str_eq(st.uid, "root"));
			seen[i]++;
		}
		off += got;
	}
	return reads;
}

static void test_dirread(void **state)
{
	struct fixture *fx = *state;
	struct th *t = session(state);
	enum { N = 200 };
	int seen[N + 2];
	assert_int_equal(create(t, 1, 2, "big", NP_DMDIR | 0755, NP_OREAD, NULL), 0);
	assert_int_equal(th_clunk(t, 2), 0);
	assert_int_equal(walk1(t, 1, 2, "big"), 0);
	for (int i = 0; i < N; i++) {
		char name[16];
		snprintf(name, sizeof name, "f%03d", i);
		assert_int_equal(create(t, 2, 3, name, 0600, NP_OWRITE, NULL), 0);
		assert_int_equal(th_clunk(t, 3), 0);
	}
	assert_int_equal(topen(t, 2, NP_OREAD), 0);
	memset(seen, 0, sizeof seen);
	int reads = read_all(t, 2, 300, t->d, seen, N);
	assert_true(reads >= 20); /* a stat is ~60-80 bytes */
	for (int i = 0; i < N; i++)
		assert_int_equal(seen[i], 1);
	assert_int_equal(seen[N], fx->dotu);
	assert_int_equal(seen[N + 1], fx->dotu);
	/* at the end it stays at the end */
	assert_int_equal(tread(t, 2, 0, 300), 0);
	uint32_t first = t->r.rread.count;
	assert_true(first > 0);
	/* an offset that is neither 0 nor where the last read ended */
	assert_int_equal(tread(t, 2, 7, 300), EINVAL);
	assert_rerror(fx, EINVAL);
	/* the next read continues after the first, and 0 restarts */
	assert_int_equal(tread(t, 2, first, 300), 0);
	assert_true(t->r.rread.count > 0);
	assert_int_equal(tread(t, 2, 0, 300), 0);
	assert_int_equal(t->r.rread.count, first);
	/* room for no entry at all */
	assert_int_equal(tread(t, 2, 0, 20), EINVAL);
	/* a big read gets everything at once */
	memset(seen, 0, sizeof seen);
	reads = read_all(t, 2, 60000, t->d, seen, N);
	assert_int_equal(reads, 1);
	for (int i = 0; i < N; i++)
		assert_int_equal(seen[i], 1);
	/* a directory fid that is not open is not read */
	assert_int_equal(walk1(t, 1, 3, "big"), 0);
	assert_int_equal(tread(t, 3, 0, 300), EBADF);
	/* entries removed between reads are not listed, the rest still are */
	assert_int_equal(tread(t, 2, 0, 300), 0);
	uint64_t off = t->r.rread.count;
	for (int i = 100; i < 150; i++) {
		char name[16];
		snprintf(name, sizeof name, "f%03d", i);
		assert_int_equal(walk1(t, 3, 4, name), 0);
		assert_int_equal(tremove(t, 4), 0);
	}
	int count = 0;
	for (;;) {
		assert_int_equal(tread(t, 2, off, 300), 0);
		if (!t->r.rread.count)
			break;
		off += t->r.rread.count;
		long pos = 0;
		while (pos < t->r.rread.count) {
			np_stat st;
			long used = np_stat_decode(t->r.rread.data + pos, t->r.rread.count - (size_t)pos,
						   t->d, &st);
			assert_true(used > 0);
			pos += used;
			char name[32];
			assert_int_equal(np_str_copy(name, sizeof name, st.name), 0);
			int i = atoi(name + 1);
			assert_false(i >= 100 && i < 150);
			count++;
		}
	}
	assert_true(count > 0);
}

static void test_remove(void **state)
{
	struct fixture *fx = *state;
	struct th *t = session(state);
	assert_int_equal(create(t, 1, 2, "f", 0644, NP_OWRITE, NULL), 0);
	assert_int_equal(tremove(t, 2), 0);
	assert_int_equal(t->r.type, NP_RREMOVE);
	assert_false(exists(t, "f"));
	assert_int_equal(th_clunk(t, 2), EBADF); /* the fid went with it */

	assert_int_equal(create(t, 1, 2, "d", NP_DMDIR | 0755, NP_OREAD, NULL), 0);
	assert_int_equal(create(t, 2, 3, "x", 0644, NP_OWRITE, NULL), 0);
	assert_int_equal(th_clunk(t, 3), 0);
	assert_int_equal(tremove(t, 2), ENOTEMPTY); /* refused, fid gone anyway */
	assert_rerror(fx, ENOTEMPTY);
	assert_int_equal(th_clunk(t, 2), EBADF);
	assert_true(exists(t, "d"));
}

static void test_errors(void **state)
{
	struct fixture *fx = *state;
	struct th *t = session(state);
	assert_int_equal(walk1(t, 1, 2, "missing"), ENOENT);
	assert_rerror(fx, ENOENT);
	assert_true(np_str_eq(t->r.rerror.ename, "No such file or directory"));
	assert_int_equal(th_clunk(t, 42), EBADF);
	assert_rerror(fx, EBADF);
	/* .L messages do not exist in these dialects: the codec refuses them */
	uint8_t lopen[] = {15, 0, 0, 0, NP_TLOPEN, 9, 0, 1, 0, 0, 0, 0, 0, 0, 0};
	assert_int_equal(th_send_raw(t, lopen, sizeof lopen), 0);
	assert_int_equal(th_recv(t, 5000), 0);
	assert_int_equal(t->r.tag, 9);
	assert_int_equal(th_err(t), EOPNOTSUPP);
	assert_int_equal(t->r.type, NP_RERROR);
	/* still serving */
	np_stat st;
	assert_int_equal(tstat(t, 1, &st), 0);
}

/* ---- a backend whose getattr answers NP_ASYNC (from another thread) ---- */

/* Each NP_ASYNC getattr answers from a thread of its own (detached; a
 * directory read makes one per entry); the test waits until all are done. */
static _Atomic int async_running;

static void *async_getattr_main(void *arg)
{
	np_req *r = arg;
	np_respond(r, np_ramfs_ops.getattr(r));
	atomic_fetch_sub(&async_running, 1);
	return NULL;
}

static int async_getattr(np_req *r)
{
	pthread_t thr;
	pthread_attr_t at;
	pthread_attr_init(&at);
	pthread_attr_setdetachstate(&at, PTHREAD_CREATE_DETACHED);
	atomic_fetch_add(&async_running, 1);
	assert_int_equal(pthread_create(&thr, &at, async_getattr_main, r), 0);
	pthread_attr_destroy(&at);
	return NP_ASYNC;
}

static void async_join(void)
{
	while (atomic_load(&async_running) > 0)
		usleep(1000);
}

static int setup_async(void **state)
{
	int e = setup_with(state, "9P2000.u", 1);
	struct fixture *fx = *state;
	fx->ops.getattr = async_getattr;
	fx->ops.inline_ops &= ~NP_OP_BIT(NP_OP_GETATTR);
	return e;
}

/* A composite step that goes asynchronous fails the operation with EIO
 * (after the backend responded: nothing it holds is freed under it). */
static void test_async_step(void **state)
{
	struct fixture *fx = *state;
	struct th *t = session(state);
	np_stat st;
	assert_int_equal(tstat(t, 1, &st), EIO);
	async_join();
	assert_rerror(fx, EIO);
	assert_int_equal(create(t, 1, 2, "f", 0644, NP_OWRITE, NULL), EIO);
	async_join();
	assert_false(exists(t, "f"));
	/* the same handler serves 9P2000.L fine */
	assert_int_equal(th_version(t, 65536, "9P2000.L"), 0);
	assert_int_equal(th_attach(t, 1, "root", 0, ""), 0);
	np_fcall ga = {.type = NP_TGETATTR, .tag = 8};
	ga.tgetattr.fid = 1;
	ga.tgetattr.request_mask = NP_GETATTR_BASIC;
	assert_int_equal(rpc(t, &ga), 0);
	async_join();
	assert_int_equal(t->r.type, NP_RGETATTR);
	assert_int_equal(t->r.rgetattr.mode & 0777, 0755);
}

#define ALL4(fn)                                                              \
	cmocka_unit_test_setup_teardown(fn, setup_plain_inline, teardown),    \
	cmocka_unit_test_setup_teardown(fn, setup_u_inline, teardown),        \
	cmocka_unit_test_setup_teardown(fn, setup_plain_worker, teardown),    \
	cmocka_unit_test_setup_teardown(fn, setup_u_worker, teardown)

int main(void)
{
	const struct CMUnitTest tests[] = {
		ALL4(test_version_attach),
		ALL4(test_create_file),
		ALL4(test_create_dir),
		ALL4(test_create_special),
		ALL4(test_open_trunc),
		ALL4(test_orclose),
		ALL4(test_stat_fields),
		ALL4(test_wstat),
		ALL4(test_dirread),
		ALL4(test_remove),
		ALL4(test_errors),
		cmocka_unit_test_setup_teardown(test_async_step, setup_async, teardown),
	};
	return cmocka_run_group_tests_name("compat", tests, NULL, NULL);
}

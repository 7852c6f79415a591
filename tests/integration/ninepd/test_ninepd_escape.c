/* The escape catalogue through a real ninepd (passthrough): every way a
 * client could try to reach outside the export, including a local process
 * swapping names for symlinks between requests.  The test ends by checking
 * that nothing outside the export was created, changed or read. */
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <cmocka.h>

#include "daemon.h"

#define SECRET "SECRET-DATA-outside-the-export"

static char top[64], exp_[128];
static char snap_buf[65536];
static size_t snap_len;

static int snap_one(const char *p, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)flag;
	(void)ftw;
	if (strncmp(p, exp_, strlen(exp_)) == 0)
		return 0; /* the export itself may change */
	snap_len += (size_t)snprintf(snap_buf + snap_len, sizeof snap_buf - snap_len,
				     "%s %o %lld %lu %lld.%ld\n", p, st->st_mode,
				     (long long)st->st_size, (unsigned long)st->st_nlink,
				     (long long)st->st_mtim.tv_sec, st->st_mtim.tv_nsec);
	return 0;
}

/* Everything outside the export: names, types, sizes, links, mtimes. */
static char *snapshot(void)
{
	snap_len = 0;
	snap_buf[0] = 0;
	nftw(top, snap_one, 16, FTW_PHYS);
	return strdup(snap_buf);
}

static void put(const char *path, const char *data)
{
	int fd = open(path, O_CREAT | O_WRONLY | O_TRUNC, 0644);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, data, strlen(data)), (ssize_t)strlen(data));
	close(fd);
}

static char *hp(const char *rel)
{
	static char p[4][512];
	static int i;
	i = (i + 1) % 4;
	snprintf(p[i], sizeof p[i], "%s/%s", exp_, rel);
	return p[i];
}

/* A walk that reached every name (not a partial walk, not an error). */
static int walk_full(struct wc *w, uint32_t fid, uint32_t newfid, int n, const char *const *names)
{
	int e = wc_walk(w, fid, newfid, n, names);
	if (e)
		return e;
	return w->r.rwalk.nwqid == n ? 0 : -1;
}

/* No reply anywhere may carry the secret. */
static void no_secret(const struct wc *w)
{
	uint32_t size = np_frame_size(w->rx);
	assert_null(memmem(w->rx, size, SECRET, strlen(SECRET)));
}

static void test_escapes(void **state)
{
	(void)state;
	snprintf(top, sizeof top, "/tmp/ninepd-esc.XXXXXX");
	assert_non_null(mkdtemp(top));
	char p[512], q[512];
	snprintf(exp_, sizeof exp_, "%s/export", top);
	assert_int_equal(mkdir(exp_, 0755), 0);
	snprintf(p, sizeof p, "%s/secret", top);
	put(p, SECRET);
	snprintf(p, sizeof p, "%s/outside", top);
	assert_int_equal(mkdir(p, 0755), 0);
	/* Links out of the export, planted by someone with local access. */
	snprintf(p, sizeof p, "%s/secret", top);
	assert_int_equal(symlink(p, hp("abs")), 0);
	assert_int_equal(symlink("../secret", hp("rel")), 0);
	assert_int_equal(symlink("../outside", hp("reldir")), 0);
	snprintf(p, sizeof p, "%s/outside", top);
	assert_int_equal(symlink(p, hp("absdir")), 0);
	assert_int_equal(mkdir(hp("d"), 0755), 0);
	put(hp("d/file"), "inside");
	put(hp("d/sw"), "inside");
	assert_int_equal(mkfifo(hp("fifo"), 0666), 0);
	int have_dev = mknod(hp("null"), S_IFCHR | 0666, makedev(1, 3)) == 0;
	char *before = snapshot();

	struct nd d;
	const char *args[] = {exp_, NULL};
	assert_int_equal(nd_start(&d, args, 0), 0);
	struct wc *w = wc_dial(d.sock);
	assert_int_equal(wc_version(w, 65536, "9P2000.L"), 0);
	assert_int_equal(wc_attach(w, 1, "root", 0, ""), 0);
	np_qid rootq = w->r.rattach.qid;

	/* 1. ".." chains from the root stay at the root. */
	const char *up[16];
	for (int i = 0; i < 16; i++)
		up[i] = "..";
	assert_int_equal(walk_full(w, 1, 2, 16, up), 0);
	for (int i = 0; i < 16; i++)
		assert_int_equal(w->r.rwalk.wqid[i].path, rootq.path);
	const char *up_secret[] = {"..", "..", "secret"};
	assert_int_not_equal(walk_full(w, 1, 3, 3, up_secret), 0);
	const char *up_out[] = {"..", "outside"};
	assert_int_not_equal(walk_full(w, 1, 3, 2, up_out), 0);
	const char *d_up_up[] = {"d", "..", "..", "secret"};
	if (walk_full(w, 1, 3, 4, d_up_up) == 0) {
		for (int i = 0; i < 4; i++)
			print_message("wqid[%d] type %x path %llx (root %llx)\n", i, w->r.rwalk.wqid[i].type,
				      (unsigned long long)w->r.rwalk.wqid[i].path, (unsigned long long)rootq.path);
		fail_msg("walked d/../../secret");
	}
	/* ... and in attach names. */
	assert_int_not_equal(wc_attach(w, 4, "root", 0, "../secret"), 0);
	assert_int_not_equal(wc_attach(w, 4, "root", 0, "/../outside"), 0);
	/* An aname naming a symlink gives (at most) the link itself: nothing
	 * can be walked beneath it. */
	if (wc_attach(w, 4, "root", 0, "absdir") == 0) {
		assert_int_equal(w->r.rattach.qid.type, NP_QTSYMLINK);
		const char *any[] = {"x"};
		assert_int_not_equal(walk_full(w, 4, 7, 1, any), 0);
		assert_int_equal(wc_clunk(w, 4), 0);
	}

	/* 2. Symlinks are never followed: walking onto one gives the link
	 * itself, walking through one fails, opening one fails. */
	const char *abs[] = {"abs"};
	assert_int_equal(walk_full(w, 1, 5, 1, abs), 0);
	assert_int_equal(w->r.rwalk.wqid[0].type, NP_QTSYMLINK);
	assert_int_not_equal(wc_lopen(w, 5, NP_L_O_RDONLY), 0);
	assert_int_equal(wc_getattr(w, 5), 0);
	assert_true(S_ISLNK(w->r.rgetattr.mode));
	const char *thru[][2] = {{"absdir", "x"}, {"reldir", "x"}, {"absdir", ".."}};
	for (int i = 0; i < 3; i++)
		assert_int_not_equal(walk_full(w, 1, 6, 2, thru[i]), 0);
	const char *rel[] = {"rel"};
	assert_int_equal(walk_full(w, 1, 6, 1, rel), 0);
	assert_int_not_equal(wc_lopen(w, 6, NP_L_O_RDONLY), 0);
	assert_int_equal(wc_clunk(w, 6), 0);
	const char *reldir[] = {"reldir"};
	assert_int_equal(walk_full(w, 1, 6, 1, reldir), 0);
	assert_int_not_equal(wc_lcreate(w, 6, "planted", NP_L_O_RDWR, 0644), 0);
	assert_int_not_equal(wc_mkdir(w, 6, "planted", 0755), 0);
	assert_int_equal(wc_clunk(w, 6), 0);

	/* 3. A directory swapped for a symlink after the walk: operations
	 * through the walked fid stay on the directory it reached. */
	const char *dn[] = {"d"};
	assert_int_equal(walk_full(w, 1, 10, 1, dn), 0);
	assert_int_equal(rename(hp("d"), hp("d.old")), 0);
	snprintf(p, sizeof p, "%s/outside", top);
	assert_int_equal(symlink(p, hp("d")), 0);
	assert_int_equal(walk_full(w, 10, 11, 0, NULL), 0);
	assert_int_equal(wc_lcreate(w, 11, "new1", NP_L_O_RDWR, 0644), 0);
	assert_int_equal(access(hp("d.old/new1"), F_OK), 0);
	assert_int_equal(wc_mkdir(w, 10, "nd", 0755), 0);
	assert_int_equal(access(hp("d.old/nd"), F_OK), 0);
	assert_int_equal(wc_unlinkat(w, 10, "file", 0), 0);
	assert_int_equal(access(hp("d.old/file"), F_OK), -1);
	np_fcall ra = {.type = NP_TRENAMEAT, .tag = 12};
	ra.trenameat.olddirfid = 10;
	ra.trenameat.oldname = np_strz("new1");
	ra.trenameat.newdirfid = 10;
	ra.trenameat.newname = np_strz("new2");
	assert_int_equal(wc_rpc(w, &ra), 0);
	assert_int_equal(wc_err(w), 0);
	assert_int_equal(access(hp("d.old/new2"), F_OK), 0);
	/* A fresh walk meets the symlink and stops there. */
	const char *dx[] = {"d", "new2"};
	assert_int_not_equal(walk_full(w, 1, 13, 2, dx), 0);
	/* A file swapped for a symlink between walk and open: the open is of
	 * the file the walk reached. */
	const char *sw[] = {"sw"};
	assert_int_equal(walk_full(w, 10, 14, 1, sw), 0);
	assert_int_equal(rename(hp("d.old/sw"), hp("d.old/sw.old")), 0);
	snprintf(p, sizeof p, "%s/secret", top);
	assert_int_equal(symlink(p, hp("d.old/sw")), 0);
	assert_int_equal(wc_lopen(w, 14, NP_L_O_RDONLY), 0);
	assert_int_equal(wc_read(w, 14, 0, 100), 0);
	no_secret(w);
	assert_int_equal(w->r.rread.count, 6);
	assert_memory_equal(w->r.rread.data, "inside", 6);
	/* Creating through a name that is now a symlink does not follow it. */
	assert_int_equal(walk_full(w, 10, 15, 0, NULL), 0);
	assert_int_not_equal(wc_lcreate(w, 15, "sw", NP_L_O_RDWR | NP_L_O_CREATE, 0644), 0);
	np_fcall tr = {.type = NP_TLCREATE, .tag = 13};
	(void)tr;

	/* 4. Hard links: linking a symlink links the symlink, never its
	 * target; the outside file keeps its single link. */
	np_fcall ln = {.type = NP_TLINK, .tag = 14};
	ln.tlink.dfid = 1;
	ln.tlink.fid = 5; /* "abs" */
	ln.tlink.name = np_strz("hl");
	assert_int_equal(wc_rpc(w, &ln), 0);
	struct stat st;
	snprintf(p, sizeof p, "%s/secret", top);
	assert_int_equal(stat(p, &st), 0);
	assert_int_equal(st.st_nlink, 1);
	if (lstat(hp("hl"), &st) == 0)
		assert_true(S_ISLNK(st.st_mode));

	/* 5. Special files: walk and getattr yes, open no (no --allow-special),
	 * including ones the client makes itself. */
	const char *fifo[] = {"fifo"};
	assert_int_equal(walk_full(w, 1, 20, 1, fifo), 0);
	assert_int_equal(wc_getattr(w, 20), 0);
	assert_true(S_ISFIFO(w->r.rgetattr.mode));
	assert_int_equal(wc_lopen(w, 20, NP_L_O_RDONLY), EPERM);
	if (have_dev) {
		const char *nul[] = {"null"};
		assert_int_equal(walk_full(w, 1, 21, 1, nul), 0);
		assert_int_equal(wc_getattr(w, 21), 0);
		assert_true(S_ISCHR(w->r.rgetattr.mode));
		assert_int_equal(wc_lopen(w, 21, NP_L_O_RDWR), EPERM);
	}
	np_fcall mk = {.type = NP_TMKNOD, .tag = 15};
	mk.tmknod.dfid = 1;
	mk.tmknod.name = np_strz("mydev");
	mk.tmknod.mode = S_IFBLK | 0666;
	mk.tmknod.major = 7; /* a loop device */
	mk.tmknod.minor = 0;
	mk.tmknod.gid = 0;
	assert_int_equal(wc_rpc(w, &mk), 0);
	if (wc_err(w) == 0) {
		const char *md[] = {"mydev"};
		assert_int_equal(walk_full(w, 1, 22, 1, md), 0);
		assert_int_equal(wc_lopen(w, 22, NP_L_O_RDONLY), EPERM);
	}

	/* 6. Names with '/' or dot-dot never reach the file system. */
	const char *slash[] = {"d.old/new2"};
	assert_int_equal(wc_walk(w, 1, 30, 1, slash), EINVAL);
	assert_int_equal(walk_full(w, 1, 30, 0, NULL), 0);
	assert_int_not_equal(wc_lcreate(w, 30, "../escaped", NP_L_O_RDWR, 0644), 0);
	assert_int_not_equal(wc_lcreate(w, 30, "..", NP_L_O_RDWR, 0644), 0);
	assert_int_equal(wc_mkdir(w, 1, "../escaped", 0755), EINVAL);
	assert_int_not_equal(wc_mkdir(w, 1, "..", 0755), 0);
	assert_int_not_equal(wc_unlinkat(w, 1, "../secret", 0), 0);
	assert_int_not_equal(wc_unlinkat(w, 1, "..", AT_REMOVEDIR), 0);
	ra.trenameat.olddirfid = 10;
	ra.trenameat.oldname = np_strz("new2");
	ra.trenameat.newdirfid = 1;
	ra.trenameat.newname = np_strz("../escaped");
	assert_int_equal(wc_rpc(w, &ra), 0);
	assert_int_not_equal(wc_err(w), 0);
	np_fcall sl = {.type = NP_TSYMLINK, .tag = 16};
	sl.tsymlink.fid = 1;
	sl.tsymlink.name = np_strz("../escaped");
	sl.tsymlink.symtgt = np_strz("x");
	assert_int_equal(wc_rpc(w, &sl), 0);
	assert_int_not_equal(wc_err(w), 0);

	/* 7. Reading every file the walks reached shows nothing from outside. */
	const char *names[] = {"abs", "rel", "d", "hl", "reldir", "absdir"};
	for (int i = 0; i < 6; i++) {
		const char *nm[] = {names[i]};
		if (walk_full(w, 1, 40, 1, nm) != 0)
			continue;
		if (wc_lopen(w, 40, NP_L_O_RDONLY) == 0 && wc_read(w, 40, 0, 4096) == 0)
			no_secret(w);
		np_fcall rl = {.type = NP_TREADLINK, .tag = 17};
		rl.tclunk.fid = 40;
		wc_rpc(w, &rl); /* a link's text is fine: it is not the target */
		assert_int_equal(wc_clunk(w, 40), 0);
	}

	wc_close(w);
	assert_int_equal(nd_stop(&d), 0);
	nd_cleanup(&d);

	/* Zero escapes: outside the export nothing changed. */
	char *after = snapshot();
	if (strcmp(before, after) != 0)
		fail_msg("outside the export changed:\n--- before\n%s--- after\n%s", before, after);
	snprintf(p, sizeof p, "%s/outside", top);
	snprintf(q, sizeof q, "%s/escaped", top);
	assert_int_equal(access(q, F_OK), -1);
	free(before);
	free(after);
	char cmd[128];
	snprintf(cmd, sizeof cmd, "rm -rf '%s'", top);
	assert_int_equal(system(cmd), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_escapes),
	};
	return cmocka_run_group_tests_name("ninepd-escape", tests, NULL, NULL);
}

/* Every 9P2000.L operation of the passthrough backend against a temporary
 * directory, checked against what the local file system then holds. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/resource.h>
#include <sys/sysmacros.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "pt_harness.h"

struct t {
	int nfds;
	struct h h;
	np_fid *root;
};

static int setup(void **state)
{
	struct t *t = calloc(1, sizeof(*t));
	assert_non_null(t);
	t->nfds = h_nfds();
	assert_int_equal(h_setup(&t->h, NULL), 0);
	t->root = h_fid(&t->h, 1);
	assert_int_equal(h_attach(&t->h, t->root, "root", 0, ""), 0);
	*state = t;
	return 0;
}

static int teardown(void **state)
{
	struct t *t = *state;
	h_clunk(&t->h, t->root);
	h_teardown(&t->h);
	/* Every descriptor a fid held was closed with it. */
	assert_int_equal(h_nfds(), t->nfds);
	free(t);
	return 0;
}

/* Create root/name with contents through the protocol. */
static np_fid *mkfile(struct t *t, const char *dir, const char *name, const char *data)
{
	np_fid *d = h_walkto(&t->h, t->root, dir);
	assert_non_null(d);
	assert_int_equal(h_lcreate(&t->h, d, name, NP_L_O_RDWR, 0644, NP_NONUNAME, NULL), 0);
	uint32_t n;
	if (data) {
		assert_int_equal(h_write(&t->h, d, 0, data, (uint32_t)strlen(data), &n), 0);
		assert_int_equal(n, strlen(data));
	}
	return d; /* now the open file */
}

static void test_attach_getattr(void **state)
{
	struct t *t = *state;
	struct stat st;
	assert_int_equal(stat(t->h.root, &st), 0);
	np_fcall a;
	assert_int_equal(h_getattr(&t->h, t->root, &a), 0);
	assert_int_equal(a.rgetattr.qid.type, NP_QTDIR);
	assert_int_equal(a.rgetattr.qid.path, st.st_ino);
	assert_true(S_ISDIR(a.rgetattr.mode));
	assert_int_equal(a.rgetattr.nlink, st.st_nlink);
	assert_int_equal(a.rgetattr.mtime_nsec, st.st_mtim.tv_nsec);
	assert_int_equal(a.rgetattr.blksize, st.st_blksize);
	assert_true(a.rgetattr.valid & NP_GETATTR_BASIC);
	assert_int_equal(t->root->qid.path, st.st_ino);

	/* aname selects a subdirectory; one that is not there fails. */
	assert_int_equal(mkdir(h_in(&t->h, "sub"), 0755), 0);
	np_fid *f = h_fid(&t->h, 2);
	assert_int_equal(h_attach(&t->h, f, "root", 0, "/sub"), 0);
	assert_int_equal(stat(h_in(&t->h, "sub"), &st), 0);
	assert_int_equal(f->qid.path, st.st_ino);
	h_clunk(&t->h, f);
	f = h_fid(&t->h, 3);
	assert_int_equal(h_attach(&t->h, f, "root", 0, "nope"), ENOENT);
	free(f);
}

static void test_create_write_read(void **state)
{
	struct t *t = *state;
	np_fid *f = mkfile(t, "", "hello", "hello world");
	char buf[64];
	assert_int_equal(h_slurp(h_in(&t->h, "hello"), buf, sizeof(buf)), 11);
	assert_string_equal(buf, "hello world");
	uint32_t n;
	assert_int_equal(h_read(&t->h, f, 6, buf, sizeof(buf), &n), 0);
	assert_int_equal(n, 5);
	assert_memory_equal(buf, "world", 5);
	np_fcall a;
	assert_int_equal(h_getattr(&t->h, f, &a), 0);
	assert_int_equal(a.rgetattr.size, 11);
	assert_int_equal(a.rgetattr.mode & 07777, 0644 & ~0); /* umask may apply */
	h_clunk(&t->h, f);

	/* EXCL on an existing name. */
	np_fid *d = h_walkto(&t->h, t->root, "");
	assert_int_equal(h_lcreate(&t->h, d, "hello", NP_L_O_RDWR | NP_L_O_EXCL, 0644, NP_NONUNAME, NULL),
			 EEXIST);
	/* Without EXCL an existing regular file is opened (and truncated). */
	assert_int_equal(h_lcreate(&t->h, d, "hello", NP_L_O_WRONLY | NP_L_O_TRUNC, 0644, NP_NONUNAME,
				   NULL), 0);
	h_clunk(&t->h, d);
	assert_int_equal(h_slurp(h_in(&t->h, "hello"), buf, sizeof(buf)), 0);

	/* lopen: O_TRUNC, O_APPEND, reading a write-only fid. */
	f = h_walkto(&t->h, t->root, "hello");
	assert_int_equal(h_lopen(&t->h, f, NP_L_O_WRONLY | NP_L_O_APPEND, NULL), 0);
	assert_int_equal(h_write(&t->h, f, 0, "ab", 2, &n), 0);
	assert_int_equal(h_write(&t->h, f, 0, "cd", 2, &n), 0);
	assert_int_equal(h_read(&t->h, f, 0, buf, sizeof(buf), &n), EBADF);
	h_clunk(&t->h, f);
	assert_int_equal(h_slurp(h_in(&t->h, "hello"), buf, sizeof(buf)), 4);
	assert_string_equal(buf, "abcd");
	f = h_walkto(&t->h, t->root, "hello");
	assert_int_equal(h_lopen(&t->h, f, NP_L_O_RDWR | NP_L_O_TRUNC | NP_L_O_CREATE | NP_L_O_NOCTTY, NULL), 0);
	h_clunk(&t->h, f);
	assert_int_equal(h_slurp(h_in(&t->h, "hello"), buf, sizeof(buf)), 0);

	/* Reading an unopened fid, opening a directory for writing. */
	f = h_walkto(&t->h, t->root, "hello");
	assert_int_equal(h_read(&t->h, f, 0, buf, sizeof(buf), &n), EBADF);
	h_clunk(&t->h, f);
	f = h_walkto(&t->h, t->root, "");
	assert_int_equal(h_lopen(&t->h, f, NP_L_O_WRONLY, NULL), EISDIR);
	assert_int_equal(h_lopen(&t->h, f, 3, NULL), EINVAL);
	h_clunk(&t->h, f);
}

static void test_walk(void **state)
{
	struct t *t = *state;
	assert_int_equal(mkdir(h_in(&t->h, "a"), 0755), 0);
	assert_int_equal(mkdir(h_in(&t->h, "a/b"), 0755), 0);
	close(open(h_in(&t->h, "a/b/f"), O_CREAT | O_WRONLY, 0644));
	struct stat st;
	assert_int_equal(stat(h_in(&t->h, "a/b/f"), &st), 0);
	np_fid *f = h_fid(&t->h, 10);
	int nw;
	np_qid q;
	assert_int_equal(h_walk(&t->h, t->root, f, "a/b/f", &nw, &q), 0);
	assert_int_equal(nw, 3);
	assert_int_equal(q.path, st.st_ino);
	assert_int_equal(q.type, NP_QTFILE);
	assert_int_equal(f->qid.path, st.st_ino);
	/* Walking from a file, a missing first name, a partial walk. */
	np_fid *g = h_fid(&t->h, 11);
	assert_int_equal(h_walk(&t->h, f, g, "x", &nw, NULL), ENOTDIR);
	assert_int_equal(h_walk(&t->h, t->root, g, "nope", &nw, NULL), ENOENT);
	assert_int_equal(h_walk(&t->h, t->root, g, "a/nope/x", &nw, NULL), -1);
	assert_int_equal(nw, 1);
	/* The partial walk left g unused: it is not a fid of the backend. */
	assert_int_equal(h_getattr(&t->h, g, NULL), EBADF);
	/* fid == newfid walks in place; nwname 0 clones. */
	np_fid *c = h_fid(&t->h, 12);
	assert_int_equal(h_walk(&t->h, t->root, c, "", &nw, NULL), 0);
	assert_int_equal(nw, 0);
	assert_int_equal(c->qid.path, t->root->qid.path);
	assert_int_equal(h_walk(&t->h, c, c, "a/b", &nw, &q), 0);
	assert_int_equal(stat(h_in(&t->h, "a/b"), &st), 0);
	assert_int_equal(c->qid.path, st.st_ino);
	assert_int_equal(q.type, NP_QTDIR);
	assert_int_equal(h_walk(&t->h, c, c, "..", &nw, &q), 0);
	assert_int_equal(stat(h_in(&t->h, "a"), &st), 0);
	assert_int_equal(q.path, st.st_ino);
	/* An opened fid cannot be walked in place. */
	assert_int_equal(h_lopen(&t->h, f, NP_L_O_RDONLY, NULL), 0);
	assert_int_equal(h_walk(&t->h, f, f, "", &nw, NULL), EBUSY);
	h_clunk(&t->h, c);
	h_clunk(&t->h, f);
	free(g);
}

static void test_readdir(void **state)
{
	struct t *t = *state;
	/* Enough entries with long names for many small Treaddirs. */
	enum { N = 300 };
	char name[128];
	for (int i = 0; i < N; i++) {
		snprintf(name, sizeof(name), "file-%03d-%s", i,
			 "padding-padding-padding-padding-padding-padding");
		close(open(h_in(&t->h, name), O_CREAT | O_WRONLY, 0644));
	}
	assert_int_equal(mkdir(h_in(&t->h, "dir"), 0755), 0);
	assert_int_equal(symlink("x", h_in(&t->h, "lnk")), 0);
	np_fid *d = h_walkto(&t->h, t->root, "");
	assert_int_equal(h_lopen(&t->h, d, NP_L_O_RDONLY | NP_L_O_DIRECTORY, NULL), 0);
	size_t cap = (N + 10) * 128;
	char *names = calloc(1, cap);
	uint8_t buf[600];
	uint64_t off = 0;
	int total = 0, calls = 0;
	for (;;) {
		uint32_t got;
		assert_int_equal(h_readdir(&t->h, d, off, buf, sizeof(buf), &got), 0);
		if (got == 0)
			break;
		/* Whole entries only: the payload parses exactly. */
		int n = h_dirents(buf, got, names, cap, &off);
		assert_true(n > 0);
		total += n;
		calls++;
		/* Types come from d_type. */
		uint32_t pos = 0;
		np_dirent de;
		while (np_dirent_next(buf, got, &pos, &de) == 1) {
			if (np_str_eq(de.name, "dir") || np_str_eq(de.name, ".") || np_str_eq(de.name, "..")) {
				assert_int_equal(de.qid.type, NP_QTDIR);
			} else if (np_str_eq(de.name, "lnk")) {
				assert_int_equal(de.qid.type, NP_QTSYMLINK);
			} else {
				assert_int_equal(de.qid.type, NP_QTFILE);
				assert_int_equal(de.type, DT_REG);
			}
		}
	}
	assert_int_equal(total, N + 4);
	assert_true(calls > 10);
	assert_non_null(strstr(names, ".\n"));
	assert_non_null(strstr(names, "..\n"));
	assert_non_null(strstr(names, "lnk\n"));
	for (int i = 0; i < N; i++) {
		snprintf(name, sizeof(name), "file-%03d-", i);
		char *p = strstr(names, name);
		assert_non_null(p);
		assert_null(strstr(p + 1, name)); /* exactly once */
	}
	/* Restarting from a remembered cookie gives the same continuation,
	 * whatever was read in between. */
	uint32_t g1, g2;
	uint8_t b1[600], b2[600];
	assert_int_equal(h_readdir(&t->h, d, 0, b1, sizeof(b1), &g1), 0);
	uint64_t mid = 0;
	char tmp[4096] = "";
	h_dirents(b1, g1, tmp, sizeof(tmp), &mid);
	assert_int_equal(h_readdir(&t->h, d, mid, b1, sizeof(b1), &g1), 0);
	assert_int_equal(h_readdir(&t->h, d, 0, b2, sizeof(b2), &g2), 0);
	assert_int_equal(h_readdir(&t->h, d, mid, b2, sizeof(b2), &g2), 0);
	assert_int_equal(g1, g2);
	assert_memory_equal(b1, b2, g1);
	/* A count too small for one entry is an error, not an end. */
	assert_int_equal(h_readdir(&t->h, d, 0, b1, 20, &g1), EINVAL);
	free(names);
	h_clunk(&t->h, d);
	/* Unopened: EBADF. */
	d = h_walkto(&t->h, t->root, "");
	assert_int_equal(h_readdir(&t->h, d, 0, buf, sizeof(buf), &g1), EBADF);
	h_clunk(&t->h, d);
}

static void test_setattr(void **state)
{
	struct t *t = *state;
	np_fid *f = mkfile(t, "", "f", "0123456789");
	h_clunk(&t->h, f);
	f = h_walkto(&t->h, t->root, "f");
	struct stat st;
	/* mode */
	assert_int_equal(h_setattr(&t->h, f, NP_SETATTR_MODE, 0604, 0, 0, 0, 0, 0, 0, 0), 0);
	assert_int_equal(stat(h_in(&t->h, "f"), &st), 0);
	assert_int_equal(st.st_mode & 07777, 0604);
	/* size on an unopened fid, then on an opened one */
	assert_int_equal(h_setattr(&t->h, f, NP_SETATTR_SIZE, 0, 0, 0, 4, 0, 0, 0, 0), 0);
	assert_int_equal(stat(h_in(&t->h, "f"), &st), 0);
	assert_int_equal(st.st_size, 4);
	np_fid *o = h_walkto(&t->h, t->root, "f");
	assert_int_equal(h_lopen(&t->h, o, NP_L_O_RDWR, NULL), 0);
	assert_int_equal(h_setattr(&t->h, o, NP_SETATTR_SIZE, 0, 0, 0, 100000, 0, 0, 0, 0), 0);
	assert_int_equal(stat(h_in(&t->h, "f"), &st), 0);
	assert_int_equal(st.st_size, 100000);
	h_clunk(&t->h, o);
	/* explicit times with nanoseconds */
	assert_int_equal(h_setattr(&t->h, f,
				   NP_SETATTR_ATIME | NP_SETATTR_ATIME_SET | NP_SETATTR_MTIME |
					   NP_SETATTR_MTIME_SET,
				   0, 0, 0, 0, 1000000000, 123456789, 1100000000, 987654321),
			 0);
	assert_int_equal(stat(h_in(&t->h, "f"), &st), 0);
	assert_int_equal(st.st_atim.tv_sec, 1000000000);
	assert_int_equal(st.st_atim.tv_nsec, 123456789);
	assert_int_equal(st.st_mtim.tv_sec, 1100000000);
	assert_int_equal(st.st_mtim.tv_nsec, 987654321);
	np_fcall a;
	assert_int_equal(h_getattr(&t->h, f, &a), 0);
	assert_int_equal(a.rgetattr.mtime_sec, 1100000000);
	assert_int_equal(a.rgetattr.mtime_nsec, 987654321);
	assert_int_equal(a.rgetattr.atime_nsec, 123456789);
	assert_int_equal(a.rgetattr.qid.version, (uint32_t)1100000000 ^ 987654321u);
	/* "now" without _SET; mtime only leaves atime alone */
	time_t now = time(NULL);
	assert_int_equal(h_setattr(&t->h, f, NP_SETATTR_MTIME, 0, 0, 0, 0, 0, 0, 0, 0), 0);
	assert_int_equal(stat(h_in(&t->h, "f"), &st), 0);
	assert_true(st.st_mtim.tv_sec >= now - 1 && st.st_mtim.tv_sec <= now + 5);
	assert_int_equal(st.st_atim.tv_sec, 1000000000);
	/* ctime alone moves ctime */
	struct stat before;
	assert_int_equal(stat(h_in(&t->h, "f"), &before), 0);
	struct timespec ts = {0, 20 * 1000 * 1000};
	nanosleep(&ts, NULL);
	assert_int_equal(h_setattr(&t->h, f, NP_SETATTR_CTIME, 0, 0, 0, 0, 0, 0, 0, 0), 0);
	assert_int_equal(stat(h_in(&t->h, "f"), &st), 0);
	assert_true(st.st_ctim.tv_sec > before.st_ctim.tv_sec ||
		    (st.st_ctim.tv_sec == before.st_ctim.tv_sec &&
		     st.st_ctim.tv_nsec > before.st_ctim.tv_nsec));
	/* uid/gid (the tests may run unprivileged: then EPERM for others) */
	if (geteuid() == 0) {
		assert_int_equal(h_setattr(&t->h, f, NP_SETATTR_UID | NP_SETATTR_GID, 0, 1234, 5678, 0,
					   0, 0, 0, 0),
				 0);
		assert_int_equal(stat(h_in(&t->h, "f"), &st), 0);
		assert_int_equal(st.st_uid, 1234);
		assert_int_equal(st.st_gid, 5678);
		assert_int_equal(h_setattr(&t->h, f, NP_SETATTR_GID, 0, 0, 42, 0, 0, 0, 0, 0), 0);
		assert_int_equal(stat(h_in(&t->h, "f"), &st), 0);
		assert_int_equal(st.st_uid, 1234);
		assert_int_equal(st.st_gid, 42);
	} else {
		assert_int_equal(h_setattr(&t->h, f, NP_SETATTR_UID, 0, 1234, 0, 0, 0, 0, 0, 0), EPERM);
	}
	/* a directory's size cannot be set */
	np_fid *d = h_walkto(&t->h, t->root, "");
	assert_int_equal(h_setattr(&t->h, d, NP_SETATTR_SIZE, 0, 0, 0, 0, 0, 0, 0, 0), EISDIR);
	h_clunk(&t->h, d);
	h_clunk(&t->h, f);
}

static void test_namespace(void **state)
{
	struct t *t = *state;
	struct stat st;
	np_qid q;
	char buf[256];
	/* mkdir */
	assert_int_equal(h_mkdir(&t->h, t->root, "d", 0750, NP_NONUNAME, &q), 0);
	assert_int_equal(stat(h_in(&t->h, "d"), &st), 0);
	assert_true(S_ISDIR(st.st_mode));
	assert_int_equal(q.path, st.st_ino);
	assert_int_equal(q.type, NP_QTDIR);
	assert_int_equal(h_mkdir(&t->h, t->root, "d", 0750, NP_NONUNAME, &q), EEXIST);
	/* symlink + readlink */
	assert_int_equal(h_symlink(&t->h, t->root, "s", "some/where/../else", NP_NONUNAME, &q), 0);
	assert_int_equal(q.type, NP_QTSYMLINK);
	assert_int_equal(readlink(h_in(&t->h, "s"), buf, sizeof(buf)), 18);
	np_fid *s = h_walkto(&t->h, t->root, "s");
	assert_non_null(s);
	assert_int_equal(s->qid.type, NP_QTSYMLINK);
	assert_int_equal(h_readlink(&t->h, s, buf, sizeof(buf)), 0);
	assert_string_equal(buf, "some/where/../else");
	assert_int_equal(h_readlink(&t->h, s, buf, 5), ENAMETOOLONG);
	assert_int_equal(h_readlink(&t->h, t->root, buf, sizeof(buf)), EINVAL);
	h_clunk(&t->h, s);
	/* mknod: a FIFO (no privilege needed) */
	assert_int_equal(h_mknod(&t->h, t->root, "p", S_IFIFO | 0600, 0, 0, NP_NONUNAME, &q), 0);
	assert_int_equal(lstat(h_in(&t->h, "p"), &st), 0);
	assert_true(S_ISFIFO(st.st_mode));
	if (geteuid() == 0) {
		assert_int_equal(h_mknod(&t->h, t->root, "null", S_IFCHR | 0666, 1, 3, NP_NONUNAME, &q), 0);
		assert_int_equal(lstat(h_in(&t->h, "null"), &st), 0);
		assert_true(S_ISCHR(st.st_mode));
		assert_int_equal(st.st_rdev, makedev(1, 3));
		np_fid *n = h_walkto(&t->h, t->root, "null");
		np_fcall a;
		assert_int_equal(h_getattr(&t->h, n, &a), 0);
		assert_int_equal(a.rgetattr.rdev, makedev(1, 3));
		h_clunk(&t->h, n);
	}
	/* link */
	np_fid *f = mkfile(t, "", "orig", "data");
	h_clunk(&t->h, f);
	f = h_walkto(&t->h, t->root, "orig");
	assert_int_equal(h_link(&t->h, t->root, f, "hard"), 0);
	struct stat a1, a2;
	assert_int_equal(stat(h_in(&t->h, "orig"), &a1), 0);
	assert_int_equal(stat(h_in(&t->h, "hard"), &a2), 0);
	assert_int_equal(a1.st_ino, a2.st_ino);
	assert_int_equal(a1.st_nlink, 2);
	np_fcall ga;
	assert_int_equal(h_getattr(&t->h, f, &ga), 0);
	assert_int_equal(ga.rgetattr.nlink, 2);
	/* Trename moves the fid's file; the fid follows it */
	np_fid *d = h_walkto(&t->h, t->root, "d");
	assert_int_equal(h_rename(&t->h, f, d, "moved"), 0);
	assert_int_equal(access(h_in(&t->h, "orig"), F_OK), -1);
	assert_int_equal(stat(h_in(&t->h, "d/moved"), &st), 0);
	assert_int_equal(st.st_ino, a1.st_ino);
	assert_int_equal(h_rename(&t->h, f, t->root, "back"), 0);
	assert_int_equal(stat(h_in(&t->h, "back"), &st), 0);
	/* renameat */
	assert_int_equal(h_renameat(&t->h, t->root, "back", d, "again"), 0);
	assert_int_equal(stat(h_in(&t->h, "d/again"), &st), 0);
	assert_int_equal(h_renameat(&t->h, t->root, "back", d, "x"), ENOENT);
	/* Trename kept f's entry up to date, but renameat (by name) moved
	 * the file behind its back: a file cannot be found again. */
	assert_int_equal(h_remove(&t->h, f), ESTALE);
	/* unlinkat */
	assert_int_equal(h_unlinkat(&t->h, t->root, "d", NP_AT_REMOVEDIR), ENOTEMPTY);
	assert_int_equal(h_unlinkat(&t->h, d, "again", 0), 0);
	assert_int_equal(h_unlinkat(&t->h, d, "again", 0), ENOENT);
	assert_int_equal(h_unlinkat(&t->h, t->root, "hard", 0x1), EINVAL);
	assert_int_equal(h_unlinkat(&t->h, t->root, "hard", 0), 0);
	/* Tremove of a directory reached by "..": found by inode */
	assert_int_equal(mkdir(h_in(&t->h, "d/sub"), 0755), 0);
	np_fid *up = h_walkto(&t->h, t->root, "d/sub/..");
	assert_non_null(up);
	assert_int_equal(h_remove(&t->h, up), ENOTEMPTY);
	assert_int_equal(rmdir(h_in(&t->h, "d/sub")), 0);
	up = h_walkto(&t->h, t->root, "d/.");
	assert_int_equal(h_remove(&t->h, up), 0);
	assert_int_equal(access(h_in(&t->h, "d"), F_OK), -1);
	h_clunk(&t->h, d);
	/* Tremove of a file, and of the root */
	f = mkfile(t, "", "gone", NULL);
	assert_int_equal(h_remove(&t->h, f), 0);
	assert_int_equal(access(h_in(&t->h, "gone"), F_OK), -1);
	np_fid *r2 = h_walkto(&t->h, t->root, "");
	assert_int_equal(h_remove(&t->h, r2), EBUSY);
}

static void test_unlinked_open(void **state)
{
	struct t *t = *state;
	np_fid *f = mkfile(t, "", "tmp", "still here");
	assert_int_equal(h_unlinkat(&t->h, t->root, "tmp", 0), 0);
	np_fcall a;
	assert_int_equal(h_getattr(&t->h, f, &a), 0);
	assert_int_equal(a.rgetattr.nlink, 0);
	assert_int_equal(a.rgetattr.size, 10);
	char buf[32];
	uint32_t n;
	assert_int_equal(h_read(&t->h, f, 0, buf, sizeof(buf), &n), 0);
	assert_int_equal(n, 10);
	assert_int_equal(h_setattr(&t->h, f, NP_SETATTR_SIZE, 0, 0, 0, 5, 0, 0, 0, 0), 0);
	assert_int_equal(h_getattr(&t->h, f, &a), 0);
	assert_int_equal(a.rgetattr.size, 5);
	h_clunk(&t->h, f);
}

static void test_statfs_fsync(void **state)
{
	struct t *t = *state;
	np_fcall s;
	assert_int_equal(h_statfs(&t->h, t->root, &s), 0);
	assert_true(s.rstatfs.bsize > 0);
	assert_true(s.rstatfs.blocks > 0);
	assert_true(s.rstatfs.namelen >= 255);
	np_fid *f = mkfile(t, "", "sync", "x");
	assert_int_equal(h_fsync(&t->h, f, 0), 0);
	assert_int_equal(h_fsync(&t->h, f, 1), 0);
	h_clunk(&t->h, f);
	assert_int_equal(h_fsync(&t->h, t->root, 0), EBADF);
}

static void test_xattr(void **state)
{
	struct t *t = *state;
	np_fid *f = mkfile(t, "", "x", "");
	h_clunk(&t->h, f);
	f = h_walkto(&t->h, t->root, "x");
	/* set: xattrcreate on a clone, write, clunk commits */
	np_fid *w = h_walkto(&t->h, f, "");
	assert_int_equal(h_xattrcreate(&t->h, w, "user.greeting", 5, 0), 0);
	uint32_t n;
	assert_int_equal(h_write(&t->h, w, 0, "hel", 3, &n), 0);
	assert_int_equal(h_write(&t->h, w, 3, "lo", 2, &n), 0);
	assert_int_equal(h_clunk(&t->h, w), 0);
	char buf[256];
	assert_int_equal(getxattr(h_in(&t->h, "x"), "user.greeting", buf, sizeof(buf)), 5);
	assert_memory_equal(buf, "hello", 5);
	/* get */
	np_fid *g = h_fid(&t->h, 50);
	uint64_t size;
	assert_int_equal(h_xattrwalk(&t->h, f, g, "user.greeting", &size), 0);
	assert_int_equal(size, 5);
	assert_int_equal(h_read(&t->h, g, 0, buf, sizeof(buf), &n), 0);
	assert_int_equal(n, 5);
	assert_memory_equal(buf, "hello", 5);
	assert_int_equal(h_read(&t->h, g, 3, buf, sizeof(buf), &n), 0);
	assert_int_equal(n, 2);
	h_clunk(&t->h, g);
	/* list */
	assert_int_equal(setxattr(h_in(&t->h, "x"), "user.other", "1", 1, 0), 0);
	g = h_fid(&t->h, 51);
	assert_int_equal(h_xattrwalk(&t->h, f, g, "", &size), 0);
	memset(buf, 0, sizeof(buf));
	assert_int_equal(h_read(&t->h, g, 0, buf, sizeof(buf), &n), 0);
	assert_int_equal(n, size);
	int seen = 0;
	for (char *p = buf; p < buf + n; p += strlen(p) + 1)
		seen += !strcmp(p, "user.greeting") + !strcmp(p, "user.other");
	assert_int_equal(seen, 2);
	h_clunk(&t->h, g);
	/* XATTR_CREATE on an existing name fails at commit */
	w = h_walkto(&t->h, f, "");
	assert_int_equal(h_xattrcreate(&t->h, w, "user.other", 1, XATTR_CREATE), 0);
	assert_int_equal(h_write(&t->h, w, 0, "2", 1, &n), 0);
	assert_int_equal(h_clunk(&t->h, w), EEXIST);
	/* short value: refused at clunk, nothing set */
	w = h_walkto(&t->h, f, "");
	assert_int_equal(h_xattrcreate(&t->h, w, "user.short", 10, 0), 0);
	assert_int_equal(h_write(&t->h, w, 0, "abc", 3, &n), 0);
	assert_int_equal(h_write(&t->h, w, 7, "abc", 3, &n), EINVAL);
	assert_int_equal(h_clunk(&t->h, w), EINVAL);
	assert_int_equal(getxattr(h_in(&t->h, "x"), "user.short", buf, sizeof(buf)), -1);
	/* remove: an empty set */
	w = h_walkto(&t->h, f, "");
	assert_int_equal(h_xattrcreate(&t->h, w, "user.other", 0, XATTR_REPLACE), 0);
	assert_int_equal(h_clunk(&t->h, w), 0);
	assert_int_equal(getxattr(h_in(&t->h, "x"), "user.other", buf, sizeof(buf)), -1);
	assert_int_equal(errno, ENODATA);
	g = h_fid(&t->h, 52);
	assert_int_equal(h_xattrwalk(&t->h, f, g, "user.other", &size), ENODATA);
	free(g);
	/* too large, bad flags */
	w = h_walkto(&t->h, f, "");
	assert_int_equal(h_xattrcreate(&t->h, w, "user.big", 65537, 0), E2BIG);
	assert_int_equal(h_xattrcreate(&t->h, w, "user.big", 1, 0x10), EINVAL);
	h_clunk(&t->h, w);
	/* user.* on a symlink: refused as Linux does */
	assert_int_equal(symlink("x", h_in(&t->h, "sl")), 0);
	np_fid *s = h_walkto(&t->h, t->root, "sl");
	w = h_walkto(&t->h, s, "");
	assert_int_equal(h_xattrcreate(&t->h, w, "user.a", 1, 0), 0);
	assert_int_equal(h_write(&t->h, w, 0, "a", 1, &n), 0);
	assert_int_equal(h_clunk(&t->h, w), EPERM);
	assert_int_equal(getxattr(h_in(&t->h, "x"), "user.a", buf, sizeof(buf)), -1);
	h_clunk(&t->h, s);
	h_clunk(&t->h, f);
}

static void test_locks(void **state)
{
	struct t *t = *state;
	np_fid *a = mkfile(t, "", "l", "0123456789");
	np_fid *b = h_walkto(&t->h, t->root, "l");
	assert_int_equal(h_lopen(&t->h, b, NP_L_O_RDWR, NULL), 0);
	uint8_t st;
	assert_int_equal(h_lock(&t->h, a, NP_LOCK_TYPE_WRLCK, 0, 5, &st), 0);
	assert_int_equal(st, NP_LOCK_SUCCESS);
	/* conflicting: BLOCKED at once, never a wait */
	assert_int_equal(h_lock(&t->h, b, NP_LOCK_TYPE_RDLCK, 2, 1, &st), 0);
	assert_int_equal(st, NP_LOCK_BLOCKED);
	/* not overlapping */
	assert_int_equal(h_lock(&t->h, b, NP_LOCK_TYPE_WRLCK, 5, 5, &st), 0);
	assert_int_equal(st, NP_LOCK_SUCCESS);
	np_fcall g;
	assert_int_equal(h_getlock(&t->h, b, NP_LOCK_TYPE_WRLCK, 0, 0, &g), 0);
	assert_int_equal(g.rgetlock.type, NP_LOCK_TYPE_WRLCK);
	assert_int_equal(g.rgetlock.start, 0);
	assert_int_equal(g.rgetlock.length, 5);
	/* a split: unlocking the middle of a's range frees exactly it */
	assert_int_equal(h_lock(&t->h, a, NP_LOCK_TYPE_UNLCK, 1, 2, &st), 0);
	assert_int_equal(h_lock(&t->h, b, NP_LOCK_TYPE_WRLCK, 1, 2, &st), 0);
	assert_int_equal(st, NP_LOCK_SUCCESS);
	assert_int_equal(h_lock(&t->h, b, NP_LOCK_TYPE_WRLCK, 3, 1, &st), 0);
	assert_int_equal(st, NP_LOCK_BLOCKED);
	/* a clunked fid's locks go with it */
	h_clunk(&t->h, a);
	assert_int_equal(h_lock(&t->h, b, NP_LOCK_TYPE_WRLCK, 0, 0, &st), 0);
	assert_int_equal(st, NP_LOCK_SUCCESS);
	np_fid *c = h_walkto(&t->h, t->root, "l");
	assert_int_equal(h_lopen(&t->h, c, NP_L_O_RDONLY, NULL), 0);
	assert_int_equal(h_getlock(&t->h, c, NP_LOCK_TYPE_RDLCK, 100, 1, &g), 0);
	assert_int_equal(g.rgetlock.type, NP_LOCK_TYPE_WRLCK);
	assert_int_equal(h_lock(&t->h, b, NP_LOCK_TYPE_UNLCK, 0, 0, &st), 0);
	assert_int_equal(h_getlock(&t->h, c, NP_LOCK_TYPE_RDLCK, 100, 1, &g), 0);
	assert_int_equal(g.rgetlock.type, NP_LOCK_TYPE_UNLCK);
	/* a write lock on a read-only open is the kernel's EBADF */
	assert_int_equal(h_lock(&t->h, c, NP_LOCK_TYPE_WRLCK, 0, 1, &st), EBADF);
	assert_int_equal(h_lock(&t->h, c, 9, 0, 1, &st), EINVAL);
	h_clunk(&t->h, c);
	h_clunk(&t->h, b);
	assert_int_equal(h_lock(&t->h, t->root, NP_LOCK_TYPE_RDLCK, 0, 1, &st), EBADF);
}

static void test_qids(void **state)
{
	struct t *t = *state;
	np_fid *a = mkfile(t, "", "qa", "x");
	np_fid *b = mkfile(t, "", "qb", "y");
	assert_int_not_equal(a->qid.path, b->qid.path);
	struct stat st;
	assert_int_equal(stat(h_in(&t->h, "qa"), &st), 0);
	assert_int_equal(a->qid.path, st.st_ino);
	h_clunk(&t->h, a);
	h_clunk(&t->h, b);
	/* A second file system under the export gets a device index in the
	 * top byte (needs root and mount(2); checked only where possible). */
	assert_int_equal(mkdir(h_in(&t->h, "mnt"), 0755), 0);
	if (geteuid() != 0 || mount("none", h_in(&t->h, "mnt"), "tmpfs", 0, "size=1m") != 0)
		return;
	close(open(h_in(&t->h, "mnt/inner"), O_CREAT | O_WRONLY, 0644));
	assert_int_equal(stat(h_in(&t->h, "mnt/inner"), &st), 0);
	np_fid *m = h_walkto(&t->h, t->root, "mnt/inner");
	assert_non_null(m);
	assert_int_equal(m->qid.path & 0x00FFFFFFFFFFFFFFull, st.st_ino);
	assert_int_not_equal(m->qid.path >> 56, 0);
	np_fid *m2 = h_walkto(&t->h, t->root, "mnt/inner");
	assert_int_equal(m2->qid.path, m->qid.path);
	h_clunk(&t->h, m2);
	h_clunk(&t->h, m);
	assert_int_equal(umount(h_in(&t->h, "mnt")), 0);
}

static void test_read_only(void **state)
{
	struct t *t = *state;
	np_fid *f = mkfile(t, "", "ro", "data");
	h_clunk(&t->h, f);
	assert_int_equal(mkdir(h_in(&t->h, "rodir"), 0755), 0);
	struct np_passthrough_opts o = {.read_only = 1};
	h_clunk(&t->h, t->root);
	assert_int_equal(h_reopen(&t->h, &o), 0);
	t->root = h_fid(&t->h, 1);
	assert_int_equal(h_attach(&t->h, t->root, "root", 0, ""), 0);
	np_fid *d = h_walkto(&t->h, t->root, "");
	assert_int_equal(h_lcreate(&t->h, d, "new", NP_L_O_RDWR, 0644, NP_NONUNAME, NULL), EROFS);
	np_qid q;
	assert_int_equal(h_mkdir(&t->h, d, "nd", 0755, NP_NONUNAME, &q), EROFS);
	assert_int_equal(h_symlink(&t->h, d, "ns", "x", NP_NONUNAME, &q), EROFS);
	assert_int_equal(h_mknod(&t->h, d, "nn", S_IFIFO | 0644, 0, 0, NP_NONUNAME, &q), EROFS);
	assert_int_equal(h_unlinkat(&t->h, d, "ro", 0), EROFS);
	assert_int_equal(h_renameat(&t->h, d, "ro", d, "ro2"), EROFS);
	f = h_walkto(&t->h, t->root, "ro");
	assert_int_equal(h_link(&t->h, d, f, "ro3"), EROFS);
	assert_int_equal(h_rename(&t->h, f, d, "ro4"), EROFS);
	assert_int_equal(h_setattr(&t->h, f, NP_SETATTR_MODE, 0777, 0, 0, 0, 0, 0, 0, 0), EROFS);
	assert_int_equal(h_lopen(&t->h, f, NP_L_O_WRONLY, NULL), EROFS);
	assert_int_equal(h_lopen(&t->h, f, NP_L_O_RDONLY | NP_L_O_TRUNC, NULL), EROFS);
	np_fid *w = h_walkto(&t->h, f, "");
	assert_int_equal(h_xattrcreate(&t->h, w, "user.x", 1, 0), EROFS);
	h_clunk(&t->h, w);
	assert_int_equal(h_lopen(&t->h, f, NP_L_O_RDONLY, NULL), 0);
	char buf[16];
	uint32_t n;
	assert_int_equal(h_read(&t->h, f, 0, buf, sizeof(buf), &n), 0);
	assert_int_equal(n, 4);
	w = h_walkto(&t->h, t->root, "ro");
	assert_int_equal(h_remove(&t->h, w), EROFS);
	h_clunk(&t->h, f);
	h_clunk(&t->h, d);
	struct stat st;
	assert_int_equal(stat(h_in(&t->h, "ro"), &st), 0);
	assert_int_equal(st.st_size, 4);
	assert_int_equal(access(h_in(&t->h, "new"), F_OK), -1);
}

static void test_fd_exhaustion(void **state)
{
	struct t *t = *state;
	/* EMFILE is answered as an error, and the backend serves on. */
	struct rlimit old, lim;
	assert_int_equal(getrlimit(RLIMIT_NOFILE, &old), 0);
	int probe = dup(0);
	assert_true(probe >= 0);
	close(probe);
	lim = old;
	lim.rlim_cur = (rlim_t)probe; /* no descriptor left above the used ones */
	assert_int_equal(setrlimit(RLIMIT_NOFILE, &lim), 0);
	np_fid *f = h_fid(&t->h, 77);
	int e = h_walk(&t->h, t->root, f, "", NULL, NULL);
	assert_int_equal(setrlimit(RLIMIT_NOFILE, &old), 0);
	assert_int_equal(e, EMFILE);
	assert_int_equal(h_walk(&t->h, t->root, f, "", NULL, NULL), 0);
	h_clunk(&t->h, f);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_attach_getattr, setup, teardown),
		cmocka_unit_test_setup_teardown(test_create_write_read, setup, teardown),
		cmocka_unit_test_setup_teardown(test_walk, setup, teardown),
		cmocka_unit_test_setup_teardown(test_readdir, setup, teardown),
		cmocka_unit_test_setup_teardown(test_setattr, setup, teardown),
		cmocka_unit_test_setup_teardown(test_namespace, setup, teardown),
		cmocka_unit_test_setup_teardown(test_unlinked_open, setup, teardown),
		cmocka_unit_test_setup_teardown(test_statfs_fsync, setup, teardown),
		cmocka_unit_test_setup_teardown(test_xattr, setup, teardown),
		cmocka_unit_test_setup_teardown(test_locks, setup, teardown),
		cmocka_unit_test_setup_teardown(test_qids, setup, teardown),
		cmocka_unit_test_setup_teardown(test_read_only, setup, teardown),
		cmocka_unit_test_setup_teardown(test_fd_exhaustion, setup, teardown),
	};
	umask(022);
	return cmocka_run_group_tests_name("passthrough_ops", tests, NULL, NULL);
}

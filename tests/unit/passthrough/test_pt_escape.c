/* The escape catalogue: every way a client (helped by a local process that
 * swaps names under it) could reach outside the export.  base/outside sits
 * next to the export; after each test it must hold exactly what it held
 * before: zero escapes. */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/xattr.h>
#include <unistd.h>

#include <cmocka.h>

#include "pt_harness.h"

struct t {
	int nfds;
	struct h h;
	np_fid *root;
	np_qid rootq;
};

static int setup(void **state)
{
	struct t *t = calloc(1, sizeof(*t));
	assert_non_null(t);
	t->nfds = h_nfds();
	assert_int_equal(h_setup(&t->h, NULL), 0);
	t->root = h_fid(&t->h, 1);
	assert_int_equal(h_attach(&t->h, t->root, "root", 0, ""), 0);
	t->rootq = t->root->qid;
	*state = t;
	return 0;
}

/* outside/ must still hold only "secret" with its contents, and the base
 * directory only export/ and outside/. */
static void assert_outside_intact(struct t *t)
{
	char buf[64];
	assert_int_equal(h_slurp(h_out(&t->h, "secret"), buf, sizeof(buf)), 6);
	assert_string_equal(buf, "SECRET");
	struct stat st;
	assert_int_equal(lstat(h_out(&t->h, "secret"), &st), 0);
	assert_int_equal(st.st_mode & 07777, 0644);
	assert_int_equal(st.st_nlink, 1);
	char cmd[PATH_MAX * 3];
	snprintf(cmd, sizeof(cmd), "test $(ls -A '%s' | wc -l) -eq 1 && test $(ls -A '%s' | wc -l) -eq 2",
		 t->h.outside, t->h.base);
	assert_int_equal(system(cmd), 0);
	assert_int_equal(getxattr(h_out(&t->h, "secret"), "user.pwn", buf, sizeof(buf)), -1);
}

static int teardown(void **state)
{
	struct t *t = *state;
	assert_outside_intact(t);
	h_clunk(&t->h, t->root);
	h_teardown(&t->h);
	/* Every descriptor a fid held was closed with it. */
	assert_int_equal(h_nfds(), t->nfds);
	free(t);
	return 0;
}

static void test_dotdot_at_root(void **state)
{
	struct t *t = *state;
	np_fid *f = h_fid(&t->h, 2);
	int nw;
	np_qid q;
	assert_int_equal(h_walk(&t->h, t->root, f, "..", &nw, &q), 0);
	assert_int_equal(nw, 1);
	assert_int_equal(q.path, t->rootq.path);
	assert_int_equal(f->qid.path, t->rootq.path);
	/* ../outside/secret: ".." stays at the root, "outside" is not there. */
	np_fid *g = h_fid(&t->h, 3);
	assert_int_equal(h_walk(&t->h, t->root, g, "../outside/secret", &nw, NULL), -1);
	assert_int_equal(nw, 1);
	assert_int_equal(h_getattr(&t->h, g, NULL), EBADF); /* not made */
	/* The stay-at-root fid creates inside the export. */
	assert_int_equal(h_lcreate(&t->h, f, "made", NP_L_O_RDWR, 0644, NP_NONUNAME, NULL), 0);
	assert_int_equal(access(h_in(&t->h, "made"), F_OK), 0);
	h_clunk(&t->h, f);
	free(g);
	/* Attach names are confined the same way. */
	f = h_fid(&t->h, 4);
	assert_int_equal(h_attach(&t->h, f, "root", 0, "../outside"), ENOENT);
	assert_int_equal(h_attach(&t->h, f, "root", 0, "/.."), ENOENT);
	free(f);
}

static void test_dotdot_chains(void **state)
{
	struct t *t = *state;
	assert_int_equal(mkdir(h_in(&t->h, "a"), 0755), 0);
	assert_int_equal(mkdir(h_in(&t->h, "a/b"), 0755), 0);
	np_fid *f = h_fid(&t->h, 2);
	int nw;
	np_qid q;
	assert_int_equal(h_walk(&t->h, t->root, f, "a/b/../../../../../..", &nw, &q), 0);
	assert_int_equal(nw, 8);
	assert_int_equal(q.path, t->rootq.path);
	/* Walking on from there stays inside. */
	np_fid *g = h_fid(&t->h, 3);
	assert_int_equal(h_walk(&t->h, f, g, "../../outside", &nw, NULL), -1);
	assert_int_equal(nw, 2);
	free(g);
	/* In-place walks up a deep chain, sixteen names at a time. */
	assert_int_equal(h_walk(&t->h, f, f, "a/b/../b/../../..", &nw, &q), 0);
	assert_int_equal(q.path, t->rootq.path);
	for (int i = 0; i < 3; i++)
		assert_int_equal(h_walk(&t->h, f, f, "../../../../../../../../../../../../../../../..",
					&nw, &q),
				 0);
	assert_int_equal(q.path, t->rootq.path);
	assert_int_equal(h_mkdir(&t->h, f, "up", 0755, NP_NONUNAME, NULL), 0);
	assert_int_equal(access(h_in(&t->h, "up"), F_OK), 0);
	/* Readdir of the root reports ".." as the root itself. */
	assert_int_equal(h_lopen(&t->h, f, NP_L_O_RDONLY, NULL), 0);
	uint8_t buf[4096];
	uint32_t got, pos = 0;
	assert_int_equal(h_readdir(&t->h, f, 0, buf, sizeof(buf), &got), 0);
	np_dirent de;
	int seen = 0;
	while (np_dirent_next(buf, got, &pos, &de) == 1)
		if (np_str_eq(de.name, "..")) {
			assert_int_equal(de.qid.path, t->rootq.path);
			seen = 1;
		}
	assert_true(seen);
	h_clunk(&t->h, f);
}

static void test_symlinks_not_followed(void **state)
{
	struct t *t = *state;
	assert_int_equal(symlink(t->h.outside, h_in(&t->h, "abs")), 0);
	assert_int_equal(symlink("../outside", h_in(&t->h, "rel")), 0);
	assert_int_equal(symlink(h_out(&t->h, "secret"), h_in(&t->h, "absfile")), 0);
	assert_int_equal(symlink("../outside/secret", h_in(&t->h, "relfile")), 0);
	assert_int_equal(symlink("../outside/new", h_in(&t->h, "dangling")), 0);
	const char *links[] = {"abs", "rel", "absfile", "relfile", "dangling"};
	for (size_t i = 0; i < sizeof(links) / sizeof(links[0]); i++) {
		np_fid *f = h_fid(&t->h, 2);
		int nw;
		np_qid q;
		/* Walking onto the symlink gives the symlink. */
		assert_int_equal(h_walk(&t->h, t->root, f, links[i], &nw, &q), 0);
		assert_int_equal(q.type, NP_QTSYMLINK);
		/* Walking through it goes nowhere. */
		np_fid *g = h_fid(&t->h, 3);
		char path[64];
		snprintf(path, sizeof(path), "%s/secret", links[i]);
		assert_int_equal(h_walk(&t->h, t->root, g, path, &nw, NULL), -1);
		assert_int_equal(nw, 1);
		free(g);
		/* Opening it is ELOOP; its attributes are its own. */
		assert_int_equal(h_lopen(&t->h, f, NP_L_O_RDONLY, NULL), ELOOP);
		assert_int_equal(h_lopen(&t->h, f, NP_L_O_RDWR | NP_L_O_TRUNC, NULL), ELOOP);
		np_fcall a;
		assert_int_equal(h_getattr(&t->h, f, &a), 0);
		assert_true(S_ISLNK(a.rgetattr.mode));
		/* setattr acts on the link, never on its target. */
		assert_int_equal(h_setattr(&t->h, f, NP_SETATTR_SIZE, 0, 0, 0, 0, 0, 0, 0, 0), EINVAL);
		assert_int_equal(h_setattr(&t->h, f, NP_SETATTR_MODE, 0777, 0, 0, 0, 0, 0, 0, 0),
				 EOPNOTSUPP);
		assert_int_equal(h_setattr(&t->h, f, NP_SETATTR_MTIME | NP_SETATTR_MTIME_SET, 0, 0, 0, 0,
					   0, 0, 12345, 0),
				 0);
		struct stat st;
		assert_int_equal(lstat(h_in(&t->h, links[i]), &st), 0);
		assert_int_equal(st.st_mtim.tv_sec, 12345);
		if (geteuid() == 0)
			assert_int_equal(h_setattr(&t->h, f, NP_SETATTR_UID, 0, 4321, 0, 0, 0, 0, 0, 0), 0);
		/* xattrs: the link's own (none of user.* on a symlink). */
		np_fid *x = h_fid(&t->h, 4);
		uint64_t size;
		assert_int_not_equal(h_xattrwalk(&t->h, f, x, "user.pwn", &size), 0);
		free(x);
		x = h_walkto(&t->h, f, "");
		assert_int_equal(h_xattrcreate(&t->h, x, "user.pwn", 1, 0), 0);
		uint32_t n;
		assert_int_equal(h_write(&t->h, x, 0, "p", 1, &n), 0);
		assert_int_not_equal(h_clunk(&t->h, x), 0);
		/* A hard link of the symlink is a symlink. */
		char name[32];
		snprintf(name, sizeof(name), "hl-%zu", i);
		assert_int_equal(h_link(&t->h, t->root, f, name), 0);
		assert_int_equal(lstat(h_in(&t->h, name), &st), 0);
		assert_true(S_ISLNK(st.st_mode));
		/* readlink gives the text, for the client to resolve. */
		char target[256];
		assert_int_equal(h_readlink(&t->h, f, target, sizeof(target)), 0);
		h_clunk(&t->h, f);
	}
	/* Creating through a symlink name: never follows. */
	np_fid *d = h_walkto(&t->h, t->root, "");
	assert_int_equal(h_lcreate(&t->h, d, "dangling", NP_L_O_RDWR, 0644, NP_NONUNAME, NULL), ELOOP);
	assert_int_equal(h_lcreate(&t->h, d, "absfile", NP_L_O_WRONLY | NP_L_O_TRUNC, 0644, NP_NONUNAME,
				   NULL),
			 ELOOP);
	assert_int_equal(h_mkdir(&t->h, d, "dangling", 0755, NP_NONUNAME, NULL), EEXIST);
	assert_int_equal(access(h_out(&t->h, "new"), F_OK), -1);
	/* Entry operations on symlink names act on the links. */
	assert_int_equal(h_renameat(&t->h, d, "abs", d, "abs2"), 0);
	assert_int_equal(h_unlinkat(&t->h, d, "abs2", 0), 0);
	assert_int_equal(h_unlinkat(&t->h, d, "rel", NP_AT_REMOVEDIR), ENOTDIR);
	h_clunk(&t->h, d);
}

/* QEMU CVE-2016-9602: a directory fid walked before a local process
 * replaced the directory's name with a symlink to outside.  Every
 * operation through that fid must act on the original directory. */
static void test_swapped_symlink(void **state)
{
	struct t *t = *state;
	assert_int_equal(mkdir(h_in(&t->h, "d"), 0755), 0);
	close(open(h_in(&t->h, "d/inner"), O_CREAT | O_WRONLY, 0644));
	np_fid *dir = h_walkto(&t->h, t->root, "d");
	np_fid *file = h_walkto(&t->h, t->root, "d/inner");
	assert_non_null(dir);
	assert_non_null(file);
	/* The swap. */
	char moved[PATH_MAX * 2];
	snprintf(moved, sizeof(moved), "%s/d.orig", t->h.root);
	assert_int_equal(rename(h_in(&t->h, "d"), moved), 0);
	assert_int_equal(symlink(t->h.outside, h_in(&t->h, "d")), 0);

	np_fid *c = h_walkto(&t->h, dir, "");
	assert_int_equal(h_lcreate(&t->h, c, "x", NP_L_O_RDWR, 0644, NP_NONUNAME, NULL), 0);
	h_clunk(&t->h, c);
	c = h_walkto(&t->h, dir, "");
	assert_int_equal(h_lcreate(&t->h, c, "secret", NP_L_O_RDWR | NP_L_O_TRUNC, 0644, NP_NONUNAME, NULL),
			 0);
	h_clunk(&t->h, c);
	assert_int_equal(h_mkdir(&t->h, dir, "y", 0755, NP_NONUNAME, NULL), 0);
	assert_int_equal(h_symlink(&t->h, dir, "z", "/etc/passwd", NP_NONUNAME, NULL), 0);
	assert_int_equal(h_mknod(&t->h, dir, "fifo", S_IFIFO | 0600, 0, 0, NP_NONUNAME, NULL), 0);
	assert_int_equal(h_unlinkat(&t->h, dir, "secret", 0), 0); /* the one just made inside */
	assert_int_equal(h_unlinkat(&t->h, dir, "secret", 0), ENOENT);
	assert_int_equal(h_renameat(&t->h, dir, "x", dir, "x2"), 0);
	assert_int_equal(h_link(&t->h, dir, file, "inner-link"), 0);
	/* The file fid still opens the file it walked to. */
	assert_int_equal(h_lopen(&t->h, file, NP_L_O_RDWR, NULL), 0);
	uint32_t n;
	assert_int_equal(h_write(&t->h, file, 0, "inside", 6, &n), 0);
	char buf[64];
	snprintf(buf, sizeof(buf), "d.orig/inner");
	char got[64];
	assert_int_equal(h_slurp(h_in(&t->h, buf), got, sizeof(got)), 6);
	/* Everything landed in d.orig. */
	const char *expect[] = {"x2", "y", "z", "fifo", "inner-link"};
	for (size_t i = 0; i < sizeof(expect) / sizeof(expect[0]); i++) {
		char p[64];
		snprintf(p, sizeof(p), "d.orig/%s", expect[i]);
		struct stat st;
		assert_int_equal(lstat(h_in(&t->h, p), &st), 0);
	}
	/* Trename/Tremove of a fid whose name was swapped for a symlink:
	 * refused, the symlink (and what it points at) untouched. */
	close(open(h_in(&t->h, "f"), O_CREAT | O_WRONLY, 0644));
	np_fid *f = h_walkto(&t->h, t->root, "f");
	snprintf(moved, sizeof(moved), "%s/f.orig", t->h.root);
	assert_int_equal(rename(h_in(&t->h, "f"), moved), 0);
	assert_int_equal(symlink(h_out(&t->h, "secret"), h_in(&t->h, "f")), 0);
	assert_int_equal(h_rename(&t->h, f, t->root, "g"), ESTALE);
	np_fid *f2 = h_walkto(&t->h, f, "");
	assert_int_equal(h_remove(&t->h, f2), ESTALE);
	struct stat st;
	assert_int_equal(lstat(h_in(&t->h, "f"), &st), 0);
	assert_true(S_ISLNK(st.st_mode));
	/* setattr on the fid acts on f.orig. */
	assert_int_equal(h_setattr(&t->h, f, NP_SETATTR_SIZE | NP_SETATTR_MODE, 0600, 0, 0, 3, 0, 0, 0, 0),
			 0);
	assert_int_equal(stat(h_in(&t->h, "f.orig"), &st), 0);
	assert_int_equal(st.st_size, 3);
	assert_int_equal(st.st_mode & 07777, 0600);
	/* xattrs of the fid land on f.orig too. */
	np_fid *x = h_walkto(&t->h, f, "");
	assert_int_equal(h_xattrcreate(&t->h, x, "user.pwn", 1, 0), 0);
	assert_int_equal(h_write(&t->h, x, 0, "p", 1, &n), 0);
	assert_int_equal(h_clunk(&t->h, x), 0);
	assert_int_equal(getxattr(h_in(&t->h, "f.orig"), "user.pwn", got, sizeof(got)), 1);
	/* ...and a hard link of it. */
	assert_int_equal(h_link(&t->h, t->root, f, "f-link"), 0);
	struct stat l1, l2;
	assert_int_equal(stat(h_in(&t->h, "f.orig"), &l1), 0);
	assert_int_equal(stat(h_in(&t->h, "f-link"), &l2), 0);
	assert_int_equal(l1.st_ino, l2.st_ino);
	h_clunk(&t->h, f);
	h_clunk(&t->h, file);
	h_clunk(&t->h, dir);
}

/* A hard link to an outside file can only be made from outside the
 * export; walking it reaches that one inode and nothing beyond. */
static void test_hard_link_from_outside(void **state)
{
	struct t *t = *state;
	assert_int_equal(link(h_out(&t->h, "secret"), h_in(&t->h, "hl")), 0);
	np_fid *f = h_walkto(&t->h, t->root, "hl");
	assert_non_null(f);
	np_fid *g = h_fid(&t->h, 9);
	int nw;
	assert_int_equal(h_walk(&t->h, f, g, "..", &nw, NULL), ENOTDIR);
	assert_int_equal(h_walk(&t->h, t->root, g, "hl/..", &nw, NULL), -1);
	free(g);
	assert_int_equal(h_lopen(&t->h, f, NP_L_O_RDONLY, NULL), 0);
	char buf[16];
	uint32_t n;
	assert_int_equal(h_read(&t->h, f, 0, buf, sizeof(buf), &n), 0);
	assert_int_equal(n, 6); /* the linked file's own data, as intended */
	/* Tremove removes the name inside the export only. */
	np_fid *r = h_walkto(&t->h, t->root, "hl");
	assert_int_equal(h_remove(&t->h, r), 0);
	assert_int_equal(access(h_in(&t->h, "hl"), F_OK), -1);
	h_clunk(&t->h, f);
}

/* CVE-2023-2861: special files are never opened by walk or getattr, and
 * lopen/lcreate refuse them unless allowed. */
static void test_special_files(void **state)
{
	struct t *t = *state;
	assert_int_equal(mkfifo(h_in(&t->h, "fifo"), 0666), 0);
	np_fid *f = h_walkto(&t->h, t->root, "fifo"); /* would block if opened */
	assert_non_null(f);
	np_fcall a;
	assert_int_equal(h_getattr(&t->h, f, &a), 0);
	assert_true(S_ISFIFO(a.rgetattr.mode));
	assert_int_equal(h_lopen(&t->h, f, NP_L_O_RDONLY, NULL), EPERM);
	assert_int_equal(h_lopen(&t->h, f, NP_L_O_WRONLY | NP_L_O_NONBLOCK, NULL), EPERM);
	np_fid *d = h_walkto(&t->h, t->root, "");
	assert_int_equal(h_lcreate(&t->h, d, "fifo", NP_L_O_RDONLY, 0644, NP_NONUNAME, NULL), EPERM);
	/* xattr get on it does not open it either. */
	np_fid *x = h_fid(&t->h, 5);
	uint64_t size;
	assert_int_equal(h_xattrwalk(&t->h, f, x, "user.a", &size), ENODATA);
	free(x);
	h_clunk(&t->h, f);
	h_clunk(&t->h, d);
	if (geteuid() == 0) {
		/* a device node: walking and stat are harmless, opening refused */
		assert_int_equal(mknod(h_in(&t->h, "zero"), S_IFCHR | 0666, makedev(1, 5)), 0);
		f = h_walkto(&t->h, t->root, "zero");
		assert_int_equal(h_lopen(&t->h, f, NP_L_O_RDONLY, NULL), EPERM);
		h_clunk(&t->h, f);
	}
	/* With allow_special, a FIFO opens (O_RDWR does not wait). */
	struct np_passthrough_opts o = {.allow_special = 1};
	h_clunk(&t->h, t->root);
	assert_int_equal(h_reopen(&t->h, &o), 0);
	assert_int_equal(t->h.ops->inline_ops & NP_OP_BIT(NP_OP_LOPEN), 0);
	t->root = h_fid(&t->h, 1);
	assert_int_equal(h_attach(&t->h, t->root, "root", 0, ""), 0);
	f = h_walkto(&t->h, t->root, "fifo");
	assert_int_equal(h_lopen(&t->h, f, NP_L_O_RDWR, NULL), 0);
	h_clunk(&t->h, f);
}

static void test_bad_names(void **state)
{
	struct t *t = *state;
	assert_int_equal(mkdir(h_in(&t->h, "a"), 0755), 0);
	const char *bad[] = {"a/..", "../outside", "/", "", "x/y"};
	np_fid *d = h_walkto(&t->h, t->root, "a");
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		const char *nm = bad[i];
		np_fid *f = h_fid(&t->h, 2);
		int nw;
		assert_int_equal(h_walkv(&t->h, t->root, f, 1, &nm, &nw), EINVAL);
		free(f);
		assert_int_equal(h_lcreate(&t->h, d, nm, NP_L_O_RDWR, 0644, NP_NONUNAME, NULL), EINVAL);
		assert_int_equal(h_mkdir(&t->h, d, nm, 0755, NP_NONUNAME, NULL), EINVAL);
		assert_int_equal(h_symlink(&t->h, d, nm, "x", NP_NONUNAME, NULL), EINVAL);
		assert_int_equal(h_mknod(&t->h, d, nm, S_IFIFO | 0644, 0, 0, NP_NONUNAME, NULL), EINVAL);
		assert_int_equal(h_unlinkat(&t->h, d, nm, 0), EINVAL);
		assert_int_equal(h_renameat(&t->h, d, "x", d, nm), EINVAL);
		assert_int_equal(h_renameat(&t->h, d, nm, d, "x"), EINVAL);
		assert_int_equal(h_link(&t->h, d, d, nm), EINVAL);
		assert_int_equal(h_rename(&t->h, d, t->root, nm), EINVAL);
	}
	/* "." and ".." are walkable, but never names to create or remove
	 * (at the root, ".." would be the directory above it). */
	const char *dots[] = {".", ".."};
	for (size_t i = 0; i < 2; i++) {
		assert_int_equal(h_lcreate(&t->h, t->root, dots[i], NP_L_O_RDWR, 0644, NP_NONUNAME, NULL),
				 EINVAL);
		assert_int_equal(h_mkdir(&t->h, t->root, dots[i], 0755, NP_NONUNAME, NULL), EINVAL);
		assert_int_equal(h_unlinkat(&t->h, t->root, dots[i], NP_AT_REMOVEDIR), EINVAL);
		assert_int_equal(h_renameat(&t->h, t->root, dots[i], t->root, "z"), EINVAL);
		assert_int_equal(h_symlink(&t->h, t->root, dots[i], "x", NP_NONUNAME, NULL), EINVAL);
	}
	/* A NUL inside a counted name would cut it short: refused. */
	static const char nul[] = {'a', '\0', 'b'};
	np_req r;
	h_req(&t->h, &r, NP_TMKDIR, d);
	r.ifcall.tmkdir.name = np_str_make(nul, 3);
	r.ifcall.tmkdir.mode = 0755;
	r.ifcall.tmkdir.gid = NP_NONUNAME;
	assert_int_equal(t->h.ops->mkdir(&r), EINVAL);
	assert_int_equal(access(h_in(&t->h, "a/a"), F_OK), -1);
	h_req(&t->h, &r, NP_TLCREATE, d);
	r.ifcall.tlcreate.name = np_str_make(nul, 3);
	r.ifcall.tlcreate.flags = NP_L_O_RDWR;
	assert_int_equal(t->h.ops->lcreate(&r), EINVAL);
	assert_int_equal(access(h_in(&t->h, "a/a"), F_OK), -1);
	assert_int_equal(access(h_in(&t->h, "../x"), F_OK), -1);
	h_clunk(&t->h, d);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_dotdot_at_root, setup, teardown),
		cmocka_unit_test_setup_teardown(test_dotdot_chains, setup, teardown),
		cmocka_unit_test_setup_teardown(test_symlinks_not_followed, setup, teardown),
		cmocka_unit_test_setup_teardown(test_swapped_symlink, setup, teardown),
		cmocka_unit_test_setup_teardown(test_hard_link_from_outside, setup, teardown),
		cmocka_unit_test_setup_teardown(test_special_files, setup, teardown),
		cmocka_unit_test_setup_teardown(test_bad_names, setup, teardown),
	};
	umask(022);
	return cmocka_run_group_tests_name("passthrough_escape", tests, NULL, NULL);
}

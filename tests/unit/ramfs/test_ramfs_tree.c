/* ramfs: attach, walk, create, open, read/write, attributes, namespace
 * operations and their error paths, by direct handler calls. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>

#include <cmocka.h>

#include "harness.h"

struct ctx {
	np_ramfs *fs;
	np_fid *root;
};

static int setup(void **state)
{
	struct ctx *c = calloc(1, sizeof(*c));
	struct np_ramfs_opts o = {.root_mode = 0777};
	int err;
	c->fs = np_ramfs_new(&o);
	c->root = th_attach(c->fs, 0, "", &err);
	assert_int_equal(err, 0);
	*state = c;
	return 0;
}

static int teardown(void **state)
{
	struct ctx *c = *state;
	th_fid_release(c->root);
	np_ramfs_free(c->fs);
	free(c);
	return 0;
}

static void test_attach_aname(void **state)
{
	struct ctx *c = *state;
	int err;
	assert_int_equal(th_mkdir(c->fs, c->root, "srv", 0755, NULL), 0);
	np_fid *s = th_walk(c->fs, c->root, "srv", &err);
	assert_int_equal(th_mkdir(c->fs, s, "data", 0755, NULL), 0);
	th_fid_release(s);

	np_fid *a = th_attach(c->fs, 0, "/", &err);
	assert_non_null(a);
	assert_int_equal(a->qid.path, c->root->qid.path);
	assert_int_equal(a->qid.type, NP_QTDIR);
	np_fid *b = th_attach(c->fs, 0, "/srv/data", &err);
	assert_non_null(b);
	assert_int_not_equal(b->qid.path, c->root->qid.path);
	assert_null(th_attach(c->fs, 0, "/nope", &err));
	assert_int_equal(err, ENOENT);
	th_fid_release(a);
	th_fid_release(b);
}

static void test_walk(void **state)
{
	struct ctx *c = *state;
	int err;
	uint16_t nq;
	assert_int_equal(th_mkdir(c->fs, c->root, "a", 0755, NULL), 0);
	np_fid *a = th_walk(c->fs, c->root, "a", &err);
	assert_int_equal(th_mkdir(c->fs, a, "b", 0755, NULL), 0);
	th_put(c->fs, a, "f", "x");

	np_fid *b = th_walk(c->fs, c->root, "a/b/../b", &err);
	assert_non_null(b);
	/* '..' at the root stays at the root */
	np_fid *r2 = th_walk(c->fs, c->root, "../..", &err);
	assert_non_null(r2);
	assert_int_equal(r2->qid.path, c->root->qid.path);
	/* first name fails: the errno */
	assert_null(th_walk(c->fs, c->root, "zz", &err));
	assert_int_equal(err, ENOENT);
	assert_null(th_walk(c->fs, a, "f/x", &err));
	assert_int_equal(err, -2); /* partial: walked one name, then ENOTDIR */
	np_fid *f = th_walk(c->fs, a, "f", &err);
	assert_null(th_walk(c->fs, f, "x", &err));
	assert_int_equal(err, ENOTDIR);
	/* partial walk in place leaves the fid where it was */
	uint64_t before = a->qid.path;
	assert_int_equal(th_walk_self(c->fs, a, "b/nope", &nq), -2);
	assert_int_equal(a->qid.path, before);
	assert_int_equal(th_walk_self(c->fs, a, "b", &nq), 0);
	assert_int_equal(a->qid.path, b->qid.path);
	/* a clone shares the node */
	np_fid *cl = th_walk(c->fs, b, "", &err);
	assert_int_equal(cl->qid.path, b->qid.path);
	th_fid_release(cl);
	th_fid_release(f);
	th_fid_release(r2);
	th_fid_release(b);
	th_fid_release(a);
}

static void test_create_open_rw(void **state)
{
	struct ctx *c = *state;
	int err;
	uint32_t n;
	char buf[64];
	np_fid *f = th_walk(c->fs, c->root, "", &err);
	assert_int_equal(th_lcreate(c->fs, f, "file", NP_L_O_RDWR, 0640), 0);
	assert_int_equal(f->qid.type, NP_QTFILE);
	assert_int_equal(th_write(c->fs, f, 0, "hello world", 11, &n), 0);
	assert_int_equal(n, 11);
	assert_int_equal(th_read(c->fs, f, 6, buf, sizeof(buf), &n), 0);
	assert_int_equal(n, 5);
	assert_memory_equal(buf, "world", 5);
	assert_int_equal(th_read(c->fs, f, 11, buf, sizeof(buf), &n), 0);
	assert_int_equal(n, 0);
	th_clunk(c->fs, f);

	/* EEXIST only with O_EXCL; without it the existing file opens */
	f = th_walk(c->fs, c->root, "", &err);
	assert_int_equal(th_lcreate(c->fs, f, "file", NP_L_O_RDWR | NP_L_O_EXCL, 0640), EEXIST);
	assert_int_equal(th_lcreate(c->fs, f, "file", NP_L_O_RDONLY, 0640), 0);
	assert_int_equal(th_read(c->fs, f, 0, buf, sizeof(buf), &n), 0);
	assert_int_equal(n, 11);
	/* opened read-only: writing is EBADF */
	assert_int_equal(th_write(c->fs, f, 0, "x", 1, &n), EBADF);
	th_clunk(c->fs, f);

	/* O_TRUNC */
	f = th_walk(c->fs, c->root, "file", &err);
	assert_int_equal(th_lopen(c->fs, f, NP_L_O_WRONLY | NP_L_O_TRUNC), 0);
	assert_int_equal(th_read(c->fs, f, 0, buf, sizeof(buf), &n), EBADF);
	np_fcall a;
	assert_int_equal(th_getattr(c->fs, f, &a), 0);
	assert_int_equal(a.rgetattr.size, 0);
	/* O_APPEND writes at the end whatever the offset */
	th_clunk(c->fs, f);
	f = th_walk(c->fs, c->root, "file", &err);
	assert_int_equal(th_lopen(c->fs, f, NP_L_O_WRONLY | NP_L_O_APPEND), 0);
	assert_int_equal(th_write(c->fs, f, 0, "ab", 2, &n), 0);
	assert_int_equal(th_write(c->fs, f, 0, "cd", 2, &n), 0);
	th_clunk(c->fs, f);
	assert_int_equal(th_get(c->fs, c->root, "file", buf, sizeof(buf), &n), 0);
	assert_string_equal(buf, "abcd");

	/* directories: EISDIR for writing, fine for reading */
	assert_int_equal(th_mkdir(c->fs, c->root, "d", 0755, NULL), 0);
	f = th_walk(c->fs, c->root, "d", &err);
	assert_int_equal(th_lopen(c->fs, f, NP_L_O_RDWR), EISDIR);
	assert_int_equal(th_lopen(c->fs, f, NP_L_O_RDONLY | NP_L_O_DIRECTORY), 0);
	assert_int_equal(th_read(c->fs, f, 0, buf, sizeof(buf), &n), EISDIR);
	th_clunk(c->fs, f);
	f = th_walk(c->fs, c->root, "file", &err);
	assert_int_equal(th_lopen(c->fs, f, NP_L_O_RDONLY | NP_L_O_DIRECTORY), ENOTDIR);
	th_clunk(c->fs, f);
	/* lcreate over a directory name */
	f = th_walk(c->fs, c->root, "", &err);
	assert_int_equal(th_lcreate(c->fs, f, "d", NP_L_O_RDWR, 0644), EISDIR);
	assert_int_equal(th_lcreate(c->fs, f, "a/b", NP_L_O_RDWR, 0644), EINVAL);
	th_clunk(c->fs, f);
}

static void test_sparse(void **state)
{
	struct ctx *c = *state;
	int err;
	uint32_t n;
	static uint8_t buf[70000];
	np_fid *f = th_walk(c->fs, c->root, "", &err);
	assert_int_equal(th_lcreate(c->fs, f, "sparse", NP_L_O_RDWR, 0644), 0);
	uint64_t far = 1ull << 40; /* 1 TiB: only one chunk may be allocated */
	assert_int_equal(th_write(c->fs, f, far, "end", 3, &n), 0);
	struct np_ramfs_stats st;
	np_ramfs_stats(c->fs, &st);
	assert_true(st.data_bytes <= 2 * 16384);
	np_fcall a;
	th_getattr(c->fs, f, &a);
	assert_int_equal(a.rgetattr.size, far + 3);
	assert_true(a.rgetattr.blocks * 512 <= 2 * 16384);
	memset(buf, 0xAA, sizeof(buf));
	assert_int_equal(th_read(c->fs, f, 12345, buf, sizeof(buf), &n), 0);
	assert_int_equal(n, sizeof(buf));
	for (size_t i = 0; i < sizeof(buf); i++)
		assert_int_equal(buf[i], 0);
	/* a write across chunk boundaries, then a read of it */
	for (size_t i = 0; i < sizeof(buf); i++)
		buf[i] = (uint8_t)(i * 7);
	assert_int_equal(th_write(c->fs, f, 1000, buf, sizeof(buf), &n), 0);
	static uint8_t back[70000];
	assert_int_equal(th_read(c->fs, f, 1000, back, sizeof(back), &n), 0);
	assert_memory_equal(buf, back, sizeof(buf));
	/* truncate down into a chunk, then up: the tail reads as zeros */
	np_fcall s = {0};
	s.tsetattr.valid = NP_SETATTR_SIZE;
	s.tsetattr.size = 1010;
	assert_int_equal(th_setattr(c->fs, f, &s), 0);
	s.tsetattr.size = 3000;
	assert_int_equal(th_setattr(c->fs, f, &s), 0);
	assert_int_equal(th_read(c->fs, f, 1000, back, 2000, &n), 0);
	assert_int_equal(n, 2000);
	assert_memory_equal(back, buf, 10);
	for (size_t i = 10; i < 2000; i++)
		assert_int_equal(back[i], 0);
	th_clunk(c->fs, f);
}

static void test_getattr_setattr(void **state)
{
	struct ctx *c = *state;
	int err;
	np_fcall a, b;
	th_put(c->fs, c->root, "f", "12345");
	np_fid *f = th_walk(c->fs, c->root, "f", &err);
	assert_int_equal(th_getattr(c->fs, f, &a), 0);
	assert_int_equal(a.rgetattr.valid & NP_GETATTR_ALL, NP_GETATTR_ALL);
	assert_int_equal(a.rgetattr.mode, S_IFREG | 0644);
	assert_int_equal(a.rgetattr.nlink, 1);
	assert_int_equal(a.rgetattr.size, 5);
	assert_int_equal(a.rgetattr.blksize, 4096);
	assert_int_equal(a.rgetattr.blocks, 8);
	assert_int_equal(a.rgetattr.qid.path, f->qid.path);
	assert_true(a.rgetattr.mtime_sec > 0);

	np_fcall s = {0};
	s.tsetattr.valid = NP_SETATTR_MODE | NP_SETATTR_UID | NP_SETATTR_GID |
			   NP_SETATTR_ATIME | NP_SETATTR_ATIME_SET | NP_SETATTR_MTIME |
			   NP_SETATTR_MTIME_SET | NP_SETATTR_CTIME;
	s.tsetattr.mode = S_IFDIR | 04711; /* the type part is ignored */
	s.tsetattr.uid = 1000;
	s.tsetattr.gid = 100;
	s.tsetattr.atime_sec = 1000000000;
	s.tsetattr.atime_nsec = 123456789;
	s.tsetattr.mtime_sec = 1100000000;
	s.tsetattr.mtime_nsec = 987654321;
	assert_int_equal(th_setattr(c->fs, f, &s), 0);
	assert_int_equal(th_getattr(c->fs, f, &b), 0);
	assert_int_equal(b.rgetattr.mode, S_IFREG | 04711);
	assert_int_equal(b.rgetattr.uid, 1000);
	assert_int_equal(b.rgetattr.gid, 100);
	assert_int_equal(b.rgetattr.atime_sec, 1000000000);
	assert_int_equal(b.rgetattr.atime_nsec, 123456789);
	assert_int_equal(b.rgetattr.mtime_sec, 1100000000);
	assert_int_equal(b.rgetattr.mtime_nsec, 987654321);
	assert_true(b.rgetattr.qid.version != a.rgetattr.qid.version);
	assert_true(b.rgetattr.ctime_sec >= a.rgetattr.ctime_sec);

	/* times without _SET: now */
	s.tsetattr.valid = NP_SETATTR_ATIME | NP_SETATTR_MTIME;
	assert_int_equal(th_setattr(c->fs, f, &s), 0);
	assert_int_equal(th_getattr(c->fs, f, &b), 0);
	assert_true(b.rgetattr.atime_sec > 1100000000);
	assert_true(b.rgetattr.mtime_sec > 1100000000);

	/* size: extend then shrink */
	s.tsetattr.valid = NP_SETATTR_SIZE;
	s.tsetattr.size = 100000;
	assert_int_equal(th_setattr(c->fs, f, &s), 0);
	assert_int_equal(th_getattr(c->fs, f, &b), 0);
	assert_int_equal(b.rgetattr.size, 100000);
	s.tsetattr.size = 2;
	assert_int_equal(th_setattr(c->fs, f, &s), 0);
	char buf[16];
	uint32_t n;
	assert_int_equal(th_get(c->fs, c->root, "f", buf, sizeof(buf), &n), 0);
	assert_string_equal(buf, "12");

	/* a chown by a non-root owner to someone else: EPERM; chmod by a
	 * stranger: EPERM; nothing changes on a refused call */
	np_fid *u = th_attach(c->fs, 1000, "", &err);
	np_fid *uf = th_walk(c->fs, u, "f", &err);
	s.tsetattr.valid = NP_SETATTR_UID | NP_SETATTR_MODE;
	s.tsetattr.uid = 0;
	s.tsetattr.mode = 0777;
	assert_int_equal(th_setattr(c->fs, uf, &s), EPERM);
	assert_int_equal(th_getattr(c->fs, f, &b), 0);
	assert_int_equal(b.rgetattr.mode & 07777, 04711);
	np_fid *v = th_attach(c->fs, 2000, "", &err);
	np_fid *vf = th_walk(c->fs, v, "f", &err);
	s.tsetattr.valid = NP_SETATTR_MODE;
	assert_int_equal(th_setattr(c->fs, vf, &s), EPERM);
	s.tsetattr.valid = NP_SETATTR_SIZE;
	s.tsetattr.size = 0;
	assert_int_equal(th_setattr(c->fs, vf, &s), EACCES); /* mode 4711: no w for others */
	/* the owner can chmod; chown by root drops setuid */
	s.tsetattr.valid = NP_SETATTR_MODE;
	s.tsetattr.mode = 04755;
	assert_int_equal(th_setattr(c->fs, uf, &s), 0);
	s.tsetattr.valid = NP_SETATTR_UID;
	s.tsetattr.uid = 1001;
	assert_int_equal(th_setattr(c->fs, f, &s), 0);
	assert_int_equal(th_getattr(c->fs, f, &b), 0);
	assert_int_equal(b.rgetattr.mode, S_IFREG | 0755);
	th_fid_release(vf);
	th_fid_release(v);
	th_fid_release(uf);
	th_fid_release(u);
	th_fid_release(f);

	/* setattr size on a directory */
	assert_int_equal(th_mkdir(c->fs, c->root, "d", 0755, NULL), 0);
	np_fid *d = th_walk(c->fs, c->root, "d", &err);
	s.tsetattr.valid = NP_SETATTR_SIZE;
	assert_int_equal(th_setattr(c->fs, d, &s), EISDIR);
	th_fid_release(d);
}

static void test_version_bumps(void **state)
{
	struct ctx *c = *state;
	int err;
	uint32_t n;
	np_fid *f = th_walk(c->fs, c->root, "", &err);
	assert_int_equal(th_lcreate(c->fs, f, "v", NP_L_O_RDWR, 0644), 0);
	np_fcall a, b;
	th_getattr(c->fs, f, &a);
	th_write(c->fs, f, 0, "x", 1, &n);
	th_getattr(c->fs, f, &b);
	assert_true(b.rgetattr.qid.version != a.rgetattr.qid.version);
	/* reading changes nothing */
	char buf[4];
	th_read(c->fs, f, 0, buf, 4, &n);
	th_getattr(c->fs, f, &a);
	assert_int_equal(a.rgetattr.qid.version, b.rgetattr.qid.version);
	/* creating an entry changes the directory */
	th_getattr(c->fs, c->root, &a);
	assert_int_equal(th_mkdir(c->fs, c->root, "vd", 0755, NULL), 0);
	th_getattr(c->fs, c->root, &b);
	assert_true(b.rgetattr.qid.version != a.rgetattr.qid.version);
	assert_int_equal(b.rgetattr.nlink, a.rgetattr.nlink + 1);
	th_clunk(c->fs, f);
}

static void test_symlink_mknod_link(void **state)
{
	struct ctx *c = *state;
	int err;
	np_qid q;
	char buf[128];
	np_fcall a;
	assert_int_equal(th_symlink(c->fs, c->root, "ln", "some/where", &q), 0);
	assert_int_equal(q.type, NP_QTSYMLINK);
	assert_int_equal(th_symlink(c->fs, c->root, "ln", "x", NULL), EEXIST);
	np_fid *l = th_walk(c->fs, c->root, "ln", &err);
	assert_int_equal(th_readlink(c->fs, l, buf, sizeof(buf)), 0);
	assert_string_equal(buf, "some/where");
	th_getattr(c->fs, l, &a);
	assert_int_equal(a.rgetattr.mode, S_IFLNK | 0777);
	assert_int_equal(a.rgetattr.size, 10);
	assert_int_equal(th_lopen(c->fs, l, NP_L_O_RDONLY), ELOOP);
	th_fid_release(l);
	assert_int_equal(th_readlink(c->fs, c->root, buf, sizeof(buf)), EINVAL);

	assert_int_equal(th_mknod(c->fs, c->root, "tty", S_IFCHR | 0620, 4, 1), 0);
	assert_int_equal(th_mknod(c->fs, c->root, "fifo", S_IFIFO | 0600, 0, 0), 0);
	assert_int_equal(th_mknod(c->fs, c->root, "sock", S_IFSOCK | 0600, 0, 0), 0);
	assert_int_equal(th_mknod(c->fs, c->root, "bad", S_IFDIR | 0600, 0, 0), EINVAL);
	np_fid *t = th_walk(c->fs, c->root, "tty", &err);
	th_getattr(c->fs, t, &a);
	assert_int_equal(a.rgetattr.mode, S_IFCHR | 0620);
	assert_int_equal(a.rgetattr.rdev, makedev(4, 1));
	th_fid_release(t);

	th_put(c->fs, c->root, "orig", "data");
	np_fid *o = th_walk(c->fs, c->root, "orig", &err);
	assert_int_equal(th_mkdir(c->fs, c->root, "sub", 0755, NULL), 0);
	np_fid *sub = th_walk(c->fs, c->root, "sub", &err);
	assert_int_equal(th_link(c->fs, sub, o, "hard"), 0);
	assert_int_equal(th_link(c->fs, sub, o, "hard"), EEXIST);
	assert_int_equal(th_link(c->fs, c->root, sub, "dirlink"), EPERM);
	th_getattr(c->fs, o, &a);
	assert_int_equal(a.rgetattr.nlink, 2);
	np_fid *h = th_walk(c->fs, sub, "hard", &err);
	assert_int_equal(h->qid.path, o->qid.path);
	assert_int_equal(th_unlinkat(c->fs, c->root, "orig", 0), 0);
	th_getattr(c->fs, o, &a);
	assert_int_equal(a.rgetattr.nlink, 1);
	uint32_t n;
	assert_int_equal(th_get(c->fs, sub, "hard", buf, sizeof(buf), &n), 0);
	assert_string_equal(buf, "data");
	/* Tremove through a fid reached by the other name */
	assert_int_equal(th_remove(c->fs, h), 0);
	assert_null(th_walk(c->fs, sub, "hard", &err));
	assert_int_equal(err, ENOENT);
	th_fid_release(o);
	th_fid_release(sub);
}

static void test_unlink_errors(void **state)
{
	struct ctx *c = *state;
	int err;
	assert_int_equal(th_mkdir(c->fs, c->root, "d", 0755, NULL), 0);
	assert_int_equal(th_mkdir(c->fs, c->root, "d", 0755, NULL), EEXIST);
	np_fid *d = th_walk(c->fs, c->root, "d", &err);
	th_put(c->fs, d, "f", "x");
	assert_int_equal(th_unlinkat(c->fs, c->root, "d", NP_AT_REMOVEDIR), ENOTEMPTY);
	assert_int_equal(th_unlinkat(c->fs, c->root, "d", 0), EISDIR);
	assert_int_equal(th_unlinkat(c->fs, d, "f", NP_AT_REMOVEDIR), ENOTDIR);
	assert_int_equal(th_unlinkat(c->fs, d, "nope", 0), ENOENT);
	np_fid *f = th_walk(c->fs, d, "f", &err);
	assert_int_equal(th_unlinkat(c->fs, f, "x", 0), ENOTDIR);
	assert_int_equal(th_mkdir(c->fs, f, "x", 0755, NULL), ENOTDIR);
	th_fid_release(f);
	assert_int_equal(th_unlinkat(c->fs, d, "f", 0), 0);
	assert_int_equal(th_unlinkat(c->fs, c->root, "d", NP_AT_REMOVEDIR), 0);
	/* creating in a removed directory */
	assert_int_equal(th_mkdir(c->fs, d, "y", 0755, NULL), ENOENT);
	assert_null(th_walk(c->fs, d, "..", &err));
	th_fid_release(d);
	/* Tremove of a non-empty directory and of the root */
	assert_int_equal(th_mkdir(c->fs, c->root, "e", 0755, NULL), 0);
	np_fid *e = th_walk(c->fs, c->root, "e", &err);
	assert_int_equal(th_mkdir(c->fs, e, "sub", 0755, NULL), 0);
	np_fid *e2 = th_walk(c->fs, c->root, "e", &err);
	assert_int_equal(th_remove(c->fs, e2), ENOTEMPTY);
	assert_int_equal(th_unlinkat(c->fs, e, "sub", NP_AT_REMOVEDIR), 0);
	assert_int_equal(th_remove(c->fs, e), 0);
	np_fid *r = th_walk(c->fs, c->root, "", &err);
	assert_int_equal(th_remove(c->fs, r), EBUSY);
}

static void test_unlink_while_open(void **state)
{
	struct ctx *c = *state;
	int err;
	uint32_t n;
	char buf[32];
	struct np_ramfs_stats before, mid, after;
	np_ramfs_stats(c->fs, &before);
	th_put(c->fs, c->root, "tmp", "still here");
	np_fid *f = th_walk(c->fs, c->root, "tmp", &err);
	assert_int_equal(th_lopen(c->fs, f, NP_L_O_RDWR), 0);
	assert_int_equal(th_unlinkat(c->fs, c->root, "tmp", 0), 0);
	assert_null(th_walk(c->fs, c->root, "tmp", &err));
	assert_int_equal(th_read(c->fs, f, 0, buf, sizeof(buf), &n), 0);
	assert_int_equal(n, 10);
	assert_memory_equal(buf, "still here", 10);
	assert_int_equal(th_write(c->fs, f, 10, "!", 1, &n), 0);
	np_fcall a;
	th_getattr(c->fs, f, &a);
	assert_int_equal(a.rgetattr.nlink, 0);
	assert_int_equal(a.rgetattr.size, 11);
	/* link(2) of an unlinked file is refused */
	assert_int_equal(th_link(c->fs, c->root, f, "back"), ENOENT);
	np_ramfs_stats(c->fs, &mid);
	assert_int_equal(mid.nodes, before.nodes + 1);
	th_clunk(c->fs, f);
	np_ramfs_stats(c->fs, &after);
	assert_int_equal(after.nodes, before.nodes);
	assert_int_equal(after.data_bytes, before.data_bytes);
}

static void test_rename(void **state)
{
	struct ctx *c = *state;
	int err;
	uint32_t n;
	char buf[32];
	assert_int_equal(th_mkdir(c->fs, c->root, "a", 0755, NULL), 0);
	assert_int_equal(th_mkdir(c->fs, c->root, "b", 0755, NULL), 0);
	np_fid *a = th_walk(c->fs, c->root, "a", &err);
	np_fid *b = th_walk(c->fs, c->root, "b", &err);
	th_put(c->fs, a, "f1", "one");
	th_put(c->fs, b, "f2", "two");
	/* over an existing file */
	assert_int_equal(th_renameat(c->fs, a, "f1", b, "f2"), 0);
	assert_int_equal(th_get(c->fs, b, "f2", buf, sizeof(buf), &n), 0);
	assert_string_equal(buf, "one");
	assert_null(th_walk(c->fs, a, "f1", &err));
	assert_int_equal(th_renameat(c->fs, a, "f1", b, "x"), ENOENT);
	/* same file: nothing happens */
	np_fid *f = th_walk(c->fs, b, "f2", &err);
	assert_int_equal(th_link(c->fs, b, f, "f2link"), 0);
	assert_int_equal(th_renameat(c->fs, b, "f2", b, "f2link"), 0);
	np_fid *chk = th_walk(c->fs, b, "f2", &err);
	assert_non_null(chk);
	th_fid_release(chk);
	/* Trename through a fid */
	assert_int_equal(th_rename(c->fs, f, a, "moved"), 0);
	assert_int_equal(th_get(c->fs, a, "moved", buf, sizeof(buf), &n), 0);
	assert_string_equal(buf, "one");
	th_fid_release(f);

	/* directory over an empty directory; over a non-empty one; file over
	 * a directory and back */
	np_qid q;
	assert_int_equal(th_mkdir(c->fs, a, "dsrc", 0755, &q), 0);
	assert_int_equal(th_mkdir(c->fs, b, "dempty", 0755, NULL), 0);
	assert_int_equal(th_mkdir(c->fs, b, "dfull", 0755, NULL), 0);
	np_fid *full = th_walk(c->fs, b, "dfull", &err);
	th_put(c->fs, full, "x", "x");
	th_fid_release(full);
	np_fcall ga, gb;
	th_getattr(c->fs, a, &ga);
	assert_int_equal(th_renameat(c->fs, a, "dsrc", b, "dfull"), ENOTEMPTY);
	assert_int_equal(th_renameat(c->fs, a, "dsrc", b, "f2link"), ENOTDIR);
	assert_int_equal(th_renameat(c->fs, b, "f2link", b, "dempty"), EISDIR);
	assert_int_equal(th_renameat(c->fs, a, "dsrc", b, "dempty"), 0);
	np_fid *moved = th_walk(c->fs, b, "dempty", &err);
	assert_int_equal(moved->qid.path, q.path);
	th_getattr(c->fs, a, &gb);
	assert_int_equal(gb.rgetattr.nlink, ga.rgetattr.nlink - 1);
	/* '..' of the moved directory is its new parent */
	np_fid *up = th_walk(c->fs, moved, "..", &err);
	assert_int_equal(up->qid.path, b->qid.path);
	th_fid_release(up);
	/* into its own subtree: EINVAL */
	assert_int_equal(th_mkdir(c->fs, moved, "inner", 0755, NULL), 0);
	np_fid *inner = th_walk(c->fs, moved, "inner", &err);
	assert_int_equal(th_renameat(c->fs, b, "dempty", inner, "loop"), EINVAL);
	assert_int_equal(th_renameat(c->fs, b, "dempty", moved, "self"), EINVAL);
	assert_int_equal(th_rename(c->fs, moved, inner, "loop"), EINVAL);
	/* renaming the root */
	assert_int_equal(th_rename(c->fs, c->root, a, "root"), EBUSY);
	assert_int_equal(th_renameat(c->fs, a, "moved", a, ".."), EINVAL);
	assert_int_equal(th_renameat(c->fs, a, "moved", inner, "x/y"), EINVAL);
	th_fid_release(inner);
	th_fid_release(moved);
	th_fid_release(a);
	th_fid_release(b);
}

static void test_permissions(void **state)
{
	struct ctx *c = *state;
	int err;
	uint32_t n;
	/* a directory owned by root, 0755: user 1000 can read but not create */
	assert_int_equal(th_mkdir(c->fs, c->root, "ro", 0755, NULL), 0);
	np_fid *ro = th_walk(c->fs, c->root, "ro", &err);
	th_put(c->fs, ro, "secret", "s");
	np_fid *sf = th_walk(c->fs, ro, "secret", &err);
	np_fcall s = {0};
	s.tsetattr.valid = NP_SETATTR_MODE;
	s.tsetattr.mode = 0600;
	assert_int_equal(th_setattr(c->fs, sf, &s), 0);
	th_fid_release(sf);

	np_fid *u = th_attach(c->fs, 1000, "", &err);
	np_fid *uro = th_walk(c->fs, u, "ro", &err);
	assert_int_equal(th_mkdir(c->fs, uro, "x", 0755, NULL), EACCES);
	np_fid *t = th_walk(c->fs, uro, "", &err);
	assert_int_equal(th_lcreate(c->fs, t, "x", NP_L_O_RDWR, 0644), EACCES);
	th_fid_release(t);
	assert_int_equal(th_unlinkat(c->fs, uro, "secret", 0), EACCES);
	np_fid *us = th_walk(c->fs, uro, "secret", &err);
	assert_int_equal(th_lopen(c->fs, us, NP_L_O_RDONLY), EACCES);
	th_fid_release(us);
	/* the user's own files in a world-writable directory (the root is 0777
	 * here) */
	np_fid *ud = th_walk(c->fs, u, "", &err);
	assert_int_equal(th_lcreate(c->fs, ud, "mine", NP_L_O_RDWR, 0400), 0);
	assert_int_equal(th_write(c->fs, ud, 0, "m", 1, &n), 0); /* new file: access asked for */
	np_fcall a;
	th_getattr(c->fs, ud, &a);
	assert_int_equal(a.rgetattr.uid, 1000);
	th_clunk(c->fs, ud);
	np_fid *m = th_walk(c->fs, u, "mine", &err);
	assert_int_equal(th_lopen(c->fs, m, NP_L_O_WRONLY), EACCES);
	th_fid_release(m);
	/* search permission on walk */
	s.tsetattr.mode = 0700;
	assert_int_equal(th_setattr(c->fs, ro, &s), 0);
	assert_null(th_walk(c->fs, u, "ro/secret", &err));
	assert_int_equal(err, -2);
	/* root bypasses */
	m = th_walk(c->fs, c->root, "ro/secret", &err);
	assert_int_equal(th_lopen(c->fs, m, NP_L_O_RDWR), 0);
	th_clunk(c->fs, m);
	th_fid_release(uro);
	th_fid_release(ro);
	th_fid_release(u);
}

static void test_statfs_fsync(void **state)
{
	struct ctx *c = *state;
	np_fcall s;
	assert_int_equal(th_statfs(c->fs, c->root, &s), 0);
	assert_int_equal(s.rstatfs.bsize, 4096);
	assert_true(s.rstatfs.blocks > 0);
	assert_true(s.rstatfs.bfree <= s.rstatfs.blocks);
	assert_true(s.rstatfs.ffree > 0);
	assert_int_equal(s.rstatfs.namelen, 255);
	assert_int_equal(th_fsync(c->fs, c->root), 0);

	/* limits: max_bytes gives ENOSPC and shows in statfs */
	struct np_ramfs_opts o = {.max_bytes = 65536, .max_nodes = 3};
	np_ramfs *small = np_ramfs_new(&o);
	int err;
	uint32_t n;
	np_fid *r = th_attach(small, 0, "", &err);
	np_fid *f = th_walk(small, r, "", &err);
	assert_int_equal(th_lcreate(small, f, "big", NP_L_O_RDWR, 0644), 0);
	static uint8_t buf[100000];
	assert_int_equal(th_write(small, f, 0, buf, sizeof(buf), &n), 0);
	assert_int_equal(n, 65536); /* short write */
	assert_int_equal(th_write(small, f, n, buf, 10, &n), ENOSPC);
	assert_int_equal(th_statfs(small, r, &s), 0);
	assert_int_equal(s.rstatfs.blocks, 16);
	assert_int_equal(s.rstatfs.bfree, 0);
	assert_int_equal(th_mkdir(small, r, "d1", 0755, NULL), 0);
	assert_int_equal(th_mkdir(small, r, "d2", 0755, NULL), ENOSPC);
	th_clunk(small, f);
	th_fid_release(r);
	np_ramfs_free(small);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_attach_aname, setup, teardown),
		cmocka_unit_test_setup_teardown(test_walk, setup, teardown),
		cmocka_unit_test_setup_teardown(test_create_open_rw, setup, teardown),
		cmocka_unit_test_setup_teardown(test_sparse, setup, teardown),
		cmocka_unit_test_setup_teardown(test_getattr_setattr, setup, teardown),
		cmocka_unit_test_setup_teardown(test_version_bumps, setup, teardown),
		cmocka_unit_test_setup_teardown(test_symlink_mknod_link, setup, teardown),
		cmocka_unit_test_setup_teardown(test_unlink_errors, setup, teardown),
		cmocka_unit_test_setup_teardown(test_unlink_while_open, setup, teardown),
		cmocka_unit_test_setup_teardown(test_rename, setup, teardown),
		cmocka_unit_test_setup_teardown(test_permissions, setup, teardown),
		cmocka_unit_test_setup_teardown(test_statfs_fsync, setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}

/* Every 9P2000.L operation through a real ninepd (passthrough) with the
 * client library, each result checked on the host file system; and an
 * orderly stop (SIGTERM) with a request in flight. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/xattr.h>
#include <unistd.h>

#include <cmocka.h>

#include "daemon.h"
#include "ninep/client.h"

struct env {
	char top[64];      /* temp dir */
	char exp[96];      /* the export */
	struct nd d;
	np_client *c;
	np_cfid *root;
};

static char *host(struct env *e, const char *rel)
{
	static char p[4][512];
	static int i;
	i = (i + 1) % 4;
	snprintf(p[i], sizeof p[i], "%s/%s", e->exp, rel);
	return p[i];
}

static int setup(void **state)
{
	struct env *e = calloc(1, sizeof *e);
	snprintf(e->top, sizeof e->top, "/tmp/ninepd-ops.XXXXXX");
	if (!mkdtemp(e->top))
		return -1;
	snprintf(e->exp, sizeof e->exp, "%s/export", e->top);
	mkdir(e->exp, 0755);
	const char *args[] = {e->exp, NULL};
	if (nd_start(&e->d, args, 0) < 0)
		return -1;
	char err[256];
	if (np_client_connect(e->d.addr, NULL, &e->c, err, sizeof err) < 0) {
		fprintf(stderr, "%s\n", err);
		return -1;
	}
	if (np_client_attach(e->c, "root", 0, "", &e->root) < 0)
		return -1;
	*state = e;
	return 0;
}

static int teardown(void **state)
{
	struct env *e = *state;
	if (e->root)
		np_cfid_clunk(e->root);
	if (e->c)
		np_client_free(e->c);
	int st = e->d.pid > 0 ? nd_stop(&e->d) : 0;
	nd_cleanup(&e->d);
	char cmd[128];
	snprintf(cmd, sizeof cmd, "rm -rf '%s'", e->top);
	if (system(cmd) != 0)
		st = -1;
	free(e);
	return st;
}

static np_cfid *walk(np_cfid *from, const char *path)
{
	np_cfid *f = NULL;
	int r = np_client_walk_path(from, path, &f);
	if (r < 0)
		fail_msg("walk %s: %s", path, strerror(-r));
	return f;
}

static void test_files(void **state)
{
	struct env *e = *state;
	struct stat st;
	/* Tmkdir */
	assert_int_equal(np_cfid_mkdir(e->root, "dir", 0750, (uint32_t)-1, NULL), 0);
	assert_int_equal(stat(host(e, "dir"), &st), 0);
	assert_true(S_ISDIR(st.st_mode));
	assert_int_equal(st.st_mode & 07777, 0750);
	/* Tlcreate + Twrite + Tfsync */
	np_cfid *d = walk(e->root, "dir");
	np_cfid *f = walk(d, "");
	assert_int_equal(np_cfid_create(f, "file", O_RDWR, 0640, (uint32_t)-1), 0);
	static char big[200000];
	for (size_t i = 0; i < sizeof big; i++)
		big[i] = (char)('a' + i % 26);
	assert_int_equal(np_cfid_pwrite(f, big, sizeof big, 0), (ssize_t)sizeof big);
	assert_int_equal(np_cfid_fsync(f, 0), 0);
	assert_int_equal(stat(host(e, "dir/file"), &st), 0);
	assert_int_equal(st.st_size, sizeof big);
	assert_int_equal(st.st_mode & 0777, 0640);
	/* Tread */
	static char back[200000];
	assert_int_equal(np_cfid_pread(f, back, sizeof back, 0), (ssize_t)sizeof back);
	assert_memory_equal(back, big, sizeof big);
	/* Tgetattr */
	struct np_attr a;
	assert_int_equal(np_cfid_getattr(f, NP_GETATTR_ALL, &a), 0);
	assert_int_equal(a.size, sizeof big);
	assert_int_equal(a.mode, st.st_mode);
	assert_int_equal(a.uid, st.st_uid);
	assert_int_equal(a.nlink, 1);
	/* Tsetattr: mode, size, times, owner */
	struct np_setattr sa = {.valid = NP_SETATTR_MODE, .mode = 0604};
	assert_int_equal(np_cfid_setattr(f, &sa), 0);
	sa = (struct np_setattr){.valid = NP_SETATTR_SIZE, .size = 1234};
	assert_int_equal(np_cfid_setattr(f, &sa), 0);
	sa = (struct np_setattr){.valid = NP_SETATTR_MTIME | NP_SETATTR_MTIME_SET | NP_SETATTR_ATIME |
					   NP_SETATTR_ATIME_SET,
				 .mtime = {1000000000, 5}, .atime = {999999999, 7}};
	assert_int_equal(np_cfid_setattr(f, &sa), 0);
	sa = (struct np_setattr){.valid = NP_SETATTR_UID | NP_SETATTR_GID, .uid = 4242, .gid = 4343};
	assert_int_equal(np_cfid_setattr(f, &sa), 0);
	assert_int_equal(stat(host(e, "dir/file"), &st), 0);
	assert_int_equal(st.st_mode & 07777, 0604);
	assert_int_equal(st.st_size, 1234);
	assert_int_equal(st.st_mtim.tv_sec, 1000000000);
	assert_int_equal(st.st_mtim.tv_nsec, 5);
	assert_int_equal(st.st_atim.tv_sec, 999999999);
	assert_int_equal(st.st_uid, 4242);
	assert_int_equal(st.st_gid, 4343);
	/* Tlock / Tgetlock */
	struct np_flock l = {.type = NP_LOCK_TYPE_WRLCK, .start = 0, .length = 10, .proc_id = 7,
			     .client_id = "ops"};
	assert_int_equal(np_cfid_lock(f, &l, 0), NP_LOCK_SUCCESS);
	struct np_flock q = {.type = NP_LOCK_TYPE_WRLCK, .start = 0, .length = 10, .proc_id = 8,
			     .client_id = "other"};
	char idbuf[64];
	assert_int_equal(np_cfid_getlock(f, &q, idbuf, sizeof idbuf), 0);
	/* Same open file description: no conflict with ourselves, or the
	 * holder reported; both are what POSIX gives. */
	assert_true(q.type == NP_LOCK_TYPE_UNLCK || q.type == NP_LOCK_TYPE_WRLCK);
	l.type = NP_LOCK_TYPE_UNLCK;
	assert_int_equal(np_cfid_lock(f, &l, 0), NP_LOCK_SUCCESS);
	assert_int_equal(np_cfid_clunk(f), 0);
	/* Tlopen of an existing file with O_TRUNC */
	f = walk(e->root, "dir/file");
	assert_int_equal(np_cfid_open(f, O_WRONLY | O_TRUNC), 0);
	assert_int_equal(np_cfid_pwrite(f, "xyz", 3, 0), 3);
	assert_int_equal(np_cfid_clunk(f), 0);
	assert_int_equal(stat(host(e, "dir/file"), &st), 0);
	assert_int_equal(st.st_size, 3);
	/* Tstatfs */
	struct np_statfs sf;
	assert_int_equal(np_cfid_statfs(e->root, &sf), 0);
	assert_true(sf.bsize > 0 && sf.blocks > 0);
	assert_int_equal(np_cfid_clunk(d), 0);
}

static void test_names(void **state)
{
	struct env *e = *state;
	struct stat st;
	char buf[256];
	assert_int_equal(mkdir(host(e, "a"), 0755), 0);
	int fd = open(host(e, "a/f"), O_CREAT | O_WRONLY, 0644);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, "hello", 5), 5);
	close(fd);
	np_cfid *a = walk(e->root, "a");
	/* Tsymlink / Treadlink */
	assert_int_equal(np_cfid_symlink(a, "ln", "f", (uint32_t)-1, NULL), 0);
	ssize_t n = readlink(host(e, "a/ln"), buf, sizeof buf);
	assert_int_equal(n, 1);
	assert_memory_equal(buf, "f", 1);
	np_cfid *ln = walk(a, "ln");
	assert_int_equal(np_cfid_readlink(ln, buf, sizeof buf), 1);
	assert_string_equal(buf, "f");
	assert_int_equal(np_cfid_clunk(ln), 0);
	/* Tmknod (a fifo) */
	assert_int_equal(np_cfid_mknod(a, "fifo", S_IFIFO | 0644, 0, 0, (uint32_t)-1, NULL), 0);
	assert_int_equal(lstat(host(e, "a/fifo"), &st), 0);
	assert_true(S_ISFIFO(st.st_mode));
	/* Tlink */
	np_cfid *f = walk(a, "f");
	assert_int_equal(np_cfid_link(a, f, "hard"), 0);
	struct stat s1, s2;
	assert_int_equal(stat(host(e, "a/f"), &s1), 0);
	assert_int_equal(stat(host(e, "a/hard"), &s2), 0);
	assert_int_equal(s1.st_ino, s2.st_ino);
	assert_int_equal(s1.st_nlink, 2);
	/* Trename (fid-based): f moves, the handle follows */
	assert_int_equal(np_cfid_rename(f, e->root, "moved"), 0);
	assert_int_equal(access(host(e, "a/f"), F_OK), -1);
	assert_int_equal(stat(host(e, "moved"), &st), 0);
	assert_int_equal(st.st_ino, s1.st_ino);
	struct np_attr at;
	assert_int_equal(np_cfid_getattr(f, NP_GETATTR_BASIC, &at), 0);
	assert_int_equal(at.size, 5);
	/* Trenameat */
	assert_int_equal(np_cfid_renameat(e->root, "moved", a, "back"), 0);
	assert_int_equal(stat(host(e, "a/back"), &st), 0);
	assert_int_equal(st.st_ino, s1.st_ino);
	/* Treaddir */
	np_cfid *dir = walk(a, "");
	assert_int_equal(np_cfid_open(dir, O_RDONLY | O_DIRECTORY), 0);
	np_readdir *rd;
	assert_int_equal(np_readdir_open(dir, &rd), 0);
	struct np_direntry de;
	int seen = 0, r;
	while ((r = np_readdir_next(rd, &de)) > 0) {
		if (!strcmp(de.name, "back"))
			seen |= 1;
		else if (!strcmp(de.name, "hard"))
			seen |= 2;
		else if (!strcmp(de.name, "ln"))
			seen |= 4, assert_int_equal(de.type, DT_LNK);
		else if (!strcmp(de.name, "fifo"))
			seen |= 8, assert_int_equal(de.type, DT_FIFO);
	}
	assert_int_equal(r, 0);
	assert_int_equal(seen, 15);
	np_readdir_close(rd);
	assert_int_equal(np_cfid_clunk(dir), 0);
	/* Tunlinkat: a file, then a directory */
	assert_int_equal(np_cfid_unlinkat(a, "hard", 0), 0);
	assert_int_equal(access(host(e, "a/hard"), F_OK), -1);
	assert_int_equal(np_cfid_mkdir(a, "sub", 0755, (uint32_t)-1, NULL), 0);
	assert_int_equal(np_cfid_unlinkat(a, "sub", 0), -EISDIR);
	assert_int_equal(np_cfid_unlinkat(a, "sub", NP_AT_REMOVEDIR), 0);
	assert_int_equal(access(host(e, "a/sub"), F_OK), -1);
	assert_int_equal(np_cfid_unlinkat(a, "nope", 0), -ENOENT);
	/* Tremove through a handle whose file was renamed behind its back (by
	 * Trenameat on another fid), with another file now at its old name:
	 * the server must not remove the wrong file. */
	fd = open(host(e, "moved"), O_CREAT | O_WRONLY, 0644);
	close(fd);
	r = np_cfid_remove(f);
	assert_true(r == 0 || r == -ESTALE);
	assert_int_equal(access(host(e, "moved"), F_OK), 0);
	if (r == 0)
		assert_int_equal(access(host(e, "a/back"), F_OK), -1);
	/* Tremove */
	f = walk(a, "back");
	assert_int_equal(np_cfid_remove(f), 0);
	assert_int_equal(access(host(e, "a/back"), F_OK), -1);
	assert_int_equal(np_cfid_clunk(a), 0);
}

static void test_xattrs(void **state)
{
	struct env *e = *state;
	int fd = open(host(e, "x"), O_CREAT | O_WRONLY, 0644);
	close(fd);
	if (setxattr(host(e, "x"), "user.probe", "1", 1, 0) < 0) {
		print_message("no user xattrs on %s: skipped\n", e->exp);
		skip();
	}
	np_cfid *f = walk(e->root, "x");
	/* Txattrcreate (+ write + clunk commits) */
	assert_int_equal(np_cfid_setxattr(f, "user.color", "blue", 4, 0), 0);
	char v[64];
	ssize_t n = getxattr(host(e, "x"), "user.color", v, sizeof v);
	assert_int_equal(n, 4);
	assert_memory_equal(v, "blue", 4);
	/* Txattrwalk: get and list */
	assert_int_equal(np_cfid_getxattr(f, "user.color", v, sizeof v), 4);
	assert_memory_equal(v, "blue", 4);
	assert_int_equal(np_cfid_getxattr(f, "user.none", v, sizeof v), -ENODATA);
	char list[256];
	n = np_cfid_listxattr(f, list, sizeof list);
	assert_true(n > 0);
	int found = 0;
	for (char *p = list; p < list + n; p += strlen(p) + 1)
		found |= !strcmp(p, "user.color");
	assert_true(found);
	assert_int_equal(np_cfid_removexattr(f, "user.color"), 0);
	assert_int_equal(getxattr(host(e, "x"), "user.color", v, sizeof v), -1);
	assert_int_equal(errno, ENODATA);
	assert_int_equal(np_cfid_clunk(f), 0);
}

/* SIGTERM with a request in flight: the reply still comes, then the daemon
 * closes the connection, exits 0 and removes its socket file; new clients
 * are refused. */
static void test_sigterm_inflight(void **state)
{
	struct env *e = *state;
	/* Dirty data makes Tfsync (a worker operation) take a while. */
	int fd = open(host(e, "dirty"), O_CREAT | O_WRONLY, 0644);
	static char chunk[1 << 20];
	memset(chunk, 'd', sizeof chunk);
	for (int i = 0; i < 64; i++)
		assert_int_equal(write(fd, chunk, sizeof chunk), (ssize_t)sizeof chunk);
	close(fd);
	struct wc *w = wc_dial(e->d.sock);
	assert_int_equal(wc_version(w, 65536, "9P2000.L"), 0);
	assert_int_equal(wc_attach(w, 1, "root", 0, ""), 0);
	const char *nm[] = {"dirty"};
	assert_int_equal(wc_walk(w, 1, 2, 1, nm), 0);
	assert_int_equal(wc_lopen(w, 2, NP_L_O_RDWR), 0);
	np_fcall s = {.type = NP_TFSYNC, .tag = 77};
	s.tfsync.fid = 2;
	assert_int_equal(wc_send(w, &s), 0);
	usleep(2000);
	kill(e->d.pid, SIGTERM);
	assert_int_equal(wc_recv(w, 10000), 0);
	assert_int_equal(w->r.type, NP_RFSYNC);
	assert_int_equal(w->r.tag, 77);
	assert_int_equal(wc_recv(w, 10000), -ECONNRESET);
	wc_close(w);
	int st = nd_stop(&e->d); /* already terminating: collects the status */
	assert_int_equal(st, 0);
	assert_int_equal(access(e->d.sock, F_OK), -1);
	assert_null(wc_dial(e->d.sock));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_files, setup, teardown),
		cmocka_unit_test_setup_teardown(test_names, setup, teardown),
		cmocka_unit_test_setup_teardown(test_xattrs, setup, teardown),
		cmocka_unit_test_setup_teardown(test_sigterm_inflight, setup, teardown),
	};
	return cmocka_run_group_tests_name("ninepd-ops", tests, NULL, NULL);
}

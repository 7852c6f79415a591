/* Namespace cases: rename, hard and symbolic links, nested mkdir/rmdir,
 * rmdir of a non-empty directory and large directory listings. */
#include "posix_suite.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static int read_small(const char *path, char *buf, size_t cap)
{
	int fd = open(path, O_RDONLY);
	if (fd < 0)
		return -1;
	ssize_t n = ps_read_all(fd, buf, cap - 1);
	close(fd);
	if (n < 0)
		return -1;
	buf[n] = '\0';
	return (int)n;
}

enum ps_result ps_case_rename_over_file(struct ps_ctx *ctx)
{
	const char *a = ps_path(ctx, "a"), *b = ps_path(ctx, "b");
	PS_CHECK(ctx, ps_write_file(a, "AAA", 3) == 0, "create a: %s", strerror(errno));
	PS_CHECK(ctx, ps_write_file(b, "BBBBB", 5) == 0, "create b: %s", strerror(errno));
	struct stat sa, sb;
	PS_CHECK(ctx, stat(a, &sa) == 0, "stat a: %s", strerror(errno));
	/* Keep the target open: its data must survive being replaced. */
	int fdb = open(b, O_RDONLY);
	PS_CHECK(ctx, fdb >= 0, "open b: %s", strerror(errno));
	int rc = rename(a, b);
	int e = errno;
	char buf[16] = {0};
	ssize_t n = pread(fdb, buf, sizeof(buf) - 1, 0);
	close(fdb);
	PS_CHECK(ctx, rc == 0, "rename a -> b: %s", strerror(e));
	PS_CHECK(ctx, n == 5 && strcmp(buf, "BBBBB") == 0, "replaced file read through old fd: '%s'", buf);
	PS_CHECK(ctx, access(a, F_OK) != 0 && errno == ENOENT, "source name still exists");
	PS_CHECK(ctx, stat(b, &sb) == 0, "stat b: %s", strerror(errno));
	PS_CHECK(ctx, sb.st_ino == sa.st_ino, "target inode %llu, want source inode %llu",
		 (unsigned long long)sb.st_ino, (unsigned long long)sa.st_ino);
	PS_CHECK(ctx, read_small(b, buf, sizeof(buf)) == 3 && strcmp(buf, "AAA") == 0,
		 "target content '%s', want 'AAA'", buf);
	/* Renaming a file onto itself is a no-op. */
	PS_CHECK(ctx, rename(b, b) == 0, "rename b -> b: %s", strerror(errno));
	return PS_PASS;
}

enum ps_result ps_case_rename_dir(struct ps_ctx *ctx)
{
	const char *d1 = ps_path(ctx, "d1"), *inner = ps_path(ctx, "d1/sub");
	PS_CHECK(ctx, mkdir(d1, 0755) == 0, "mkdir d1: %s", strerror(errno));
	PS_CHECK(ctx, mkdir(inner, 0755) == 0, "mkdir d1/sub: %s", strerror(errno));
	PS_CHECK(ctx, ps_write_file(ps_path(ctx, "d1/sub/f"), "x", 1) == 0, "create file: %s", strerror(errno));
	const char *d2 = ps_path(ctx, "d2");
	PS_CHECK(ctx, rename(d1, d2) == 0, "rename d1 -> d2: %s", strerror(errno));
	char buf[8];
	PS_CHECK(ctx, read_small(ps_path(ctx, "d2/sub/f"), buf, sizeof(buf)) == 1, "d2/sub/f after rename: %s",
		 strerror(errno));
	PS_CHECK(ctx, access(ps_path(ctx, "d1"), F_OK) != 0, "old directory name still exists");

	/* Over an empty directory: allowed. Over a non-empty one: refused. */
	PS_CHECK(ctx, mkdir(ps_path(ctx, "empty"), 0755) == 0, "mkdir empty: %s", strerror(errno));
	PS_CHECK(ctx, rename(ps_path(ctx, "d2"), ps_path(ctx, "empty")) == 0, "rename over empty dir: %s",
		 strerror(errno));
	PS_CHECK(ctx, mkdir(ps_path(ctx, "full"), 0755) == 0, "mkdir full: %s", strerror(errno));
	PS_CHECK(ctx, ps_write_file(ps_path(ctx, "full/f"), "y", 1) == 0, "create full/f: %s", strerror(errno));
	int rc = rename(ps_path(ctx, "empty"), ps_path(ctx, "full"));
	int e = errno;
	PS_CHECK(ctx, rc != 0 && (e == ENOTEMPTY || e == EEXIST), "rename over non-empty dir: %s",
		 rc == 0 ? "succeeded" : strerror(e));
	/* A directory cannot move inside itself. */
	rc = rename(ps_path(ctx, "empty"), ps_path(ctx, "empty/sub/inside"));
	e = errno;
	PS_CHECK(ctx, rc != 0 && e == EINVAL, "rename dir into itself: %s, want EINVAL",
		 rc == 0 ? "succeeded" : strerror(e));
	return PS_PASS;
}

enum ps_result ps_case_hardlinks(struct ps_ctx *ctx)
{
	const char *f = ps_path(ctx, "f"), *l1 = ps_path(ctx, "l1"), *l2 = ps_path(ctx, "l2");
	PS_CHECK(ctx, ps_write_file(f, "data", 4) == 0, "create: %s", strerror(errno));
	PS_CHECK(ctx, link(f, l1) == 0, "link l1: %s", strerror(errno));
	PS_CHECK(ctx, link(f, l2) == 0, "link l2: %s", strerror(errno));
	struct stat s0, s1, s2;
	PS_CHECK(ctx, stat(f, &s0) == 0 && stat(l1, &s1) == 0 && stat(l2, &s2) == 0, "stat: %s", strerror(errno));
	PS_CHECK(ctx, s0.st_nlink == 3 && s1.st_nlink == 3, "nlink %lu, want 3", (unsigned long)s0.st_nlink);
	PS_CHECK(ctx, s0.st_ino == s1.st_ino && s1.st_ino == s2.st_ino, "links have different inode numbers");
	/* Writing through one name is visible through the others. */
	PS_CHECK(ctx, ps_write_file(l2, "changed", 7) == 0, "write via l2: %s", strerror(errno));
	char buf[16];
	PS_CHECK(ctx, read_small(f, buf, sizeof(buf)) == 7 && strcmp(buf, "changed") == 0,
		 "content via f '%s', want 'changed'", buf);
	PS_CHECK(ctx, unlink(f) == 0, "unlink f: %s", strerror(errno));
	PS_CHECK(ctx, stat(l1, &s1) == 0 && s1.st_nlink == 2, "nlink after unlink %lu, want 2",
		 (unsigned long)s1.st_nlink);
	int rc = link(l1, l2);
	int e = errno;
	PS_CHECK(ctx, rc != 0 && e == EEXIST, "link onto existing name: %s, want EEXIST",
		 rc == 0 ? "succeeded" : strerror(e));
	PS_CHECK(ctx, mkdir(ps_path(ctx, "d"), 0755) == 0, "mkdir: %s", strerror(errno));
	rc = link(ps_path(ctx, "d"), ps_path(ctx, "dlink"));
	e = errno;
	PS_CHECK(ctx, rc != 0 && e == EPERM, "hard link to a directory: %s, want EPERM",
		 rc == 0 ? "succeeded" : strerror(e));
	return PS_PASS;
}

enum ps_result ps_case_symlinks(struct ps_ctx *ctx)
{
	const char *f = ps_path(ctx, "target"), *l = ps_path(ctx, "link");
	PS_CHECK(ctx, ps_write_file(f, "0123456789", 10) == 0, "create: %s", strerror(errno));
	PS_CHECK(ctx, symlink("target", l) == 0, "symlink: %s", strerror(errno));
	char buf[PATH_MAX];
	ssize_t n = readlink(l, buf, sizeof(buf));
	PS_CHECK(ctx, n == 6 && memcmp(buf, "target", 6) == 0, "readlink returned %zd '%.*s'", n,
		 (int)(n > 0 ? n : 0), buf);
	struct stat ls, ss;
	PS_CHECK(ctx, lstat(l, &ls) == 0, "lstat: %s", strerror(errno));
	PS_CHECK(ctx, stat(l, &ss) == 0, "stat: %s", strerror(errno));
	PS_CHECK(ctx, S_ISLNK(ls.st_mode) && ls.st_size == 6, "lstat: mode %o size %lld, want link of 6",
		 ls.st_mode, (long long)ls.st_size);
	PS_CHECK(ctx, S_ISREG(ss.st_mode) && ss.st_size == 10, "stat through link: mode %o size %lld",
		 ss.st_mode, (long long)ss.st_size);
	/* A long target, near the usual limits of one message. */
	char longt[1001];
	memset(longt, 'x', 1000);
	longt[1000] = '\0';
	PS_CHECK(ctx, symlink(longt, ps_path(ctx, "long")) == 0, "long symlink: %s", strerror(errno));
	n = readlink(ps_path(ctx, "long"), buf, sizeof(buf));
	PS_CHECK(ctx, n == 1000 && memcmp(buf, longt, 1000) == 0, "long readlink returned %zd", n);
	/* Dangling links: lstat works, stat fails with ENOENT. */
	PS_CHECK(ctx, symlink("missing", ps_path(ctx, "dangle")) == 0, "dangling symlink: %s", strerror(errno));
	PS_CHECK(ctx, lstat(ps_path(ctx, "dangle"), &ls) == 0, "lstat dangling: %s", strerror(errno));
	int rc = stat(ps_path(ctx, "dangle"), &ss);
	PS_CHECK(ctx, rc != 0 && errno == ENOENT, "stat dangling: %s", rc == 0 ? "succeeded" : strerror(errno));
	n = readlink(f, buf, sizeof(buf));
	PS_CHECK(ctx, n < 0 && errno == EINVAL, "readlink of a regular file: want EINVAL");
	return PS_PASS;
}

enum ps_result ps_case_mkdir_rmdir_nested(struct ps_ctx *ctx)
{
	char rel[PATH_MAX] = "n";
	/* Twenty levels deep (ten with --quick), then remove from the leaf up. */
	for (int i = 0; i < (ctx->quick ? 10 : 20); i++) {
		PS_CHECK(ctx, mkdir(ps_path(ctx, rel), 0755) == 0, "mkdir %s: %s", rel, strerror(errno));
		strcat(rel, "/n");
	}
	struct stat st;
	rel[strlen(rel) - 2] = '\0';
	PS_CHECK(ctx, stat(ps_path(ctx, rel), &st) == 0 && S_ISDIR(st.st_mode), "leaf missing: %s",
		 strerror(errno));
	PS_CHECK(ctx, mkdir(ps_path(ctx, "n"), 0755) != 0 && errno == EEXIST, "mkdir of existing dir: want EEXIST");
	/* Two subdirectories add two links to their parent. */
	PS_CHECK(ctx, mkdir(ps_path(ctx, "p"), 0755) == 0, "mkdir p: %s", strerror(errno));
	PS_CHECK(ctx, mkdir(ps_path(ctx, "p/a"), 0755) == 0 && mkdir(ps_path(ctx, "p/b"), 0755) == 0,
		 "mkdir p/a p/b: %s", strerror(errno));
	PS_CHECK(ctx, stat(ps_path(ctx, "p"), &st) == 0, "stat p: %s", strerror(errno));
	PS_CHECK(ctx, st.st_nlink == 4 || st.st_nlink == 1, "nlink of dir with 2 subdirs %lu, want 4",
		 (unsigned long)st.st_nlink);
	for (;;) {
		PS_CHECK(ctx, rmdir(ps_path(ctx, rel)) == 0, "rmdir %s: %s", rel, strerror(errno));
		char *slash = strrchr(rel, '/');
		if (!slash)
			break;
		*slash = '\0';
	}
	PS_CHECK(ctx, stat(ps_path(ctx, "n"), &st) != 0 && errno == ENOENT, "top dir remains after rmdir");
	int rc = rmdir(ps_path(ctx, "n"));
	PS_CHECK(ctx, rc != 0 && errno == ENOENT, "rmdir of missing dir: want ENOENT");
	PS_CHECK(ctx, ps_write_file(ps_path(ctx, "file"), "", 0) == 0, "create: %s", strerror(errno));
	rc = rmdir(ps_path(ctx, "file"));
	PS_CHECK(ctx, rc != 0 && errno == ENOTDIR, "rmdir of a file: %s, want ENOTDIR",
		 rc == 0 ? "succeeded" : strerror(errno));
	return PS_PASS;
}

enum ps_result ps_case_rmdir_nonempty(struct ps_ctx *ctx)
{
	PS_CHECK(ctx, mkdir(ps_path(ctx, "d"), 0755) == 0, "mkdir: %s", strerror(errno));
	PS_CHECK(ctx, ps_write_file(ps_path(ctx, "d/f"), "1", 1) == 0, "create: %s", strerror(errno));
	int rc = rmdir(ps_path(ctx, "d"));
	int e = errno;
	PS_CHECK(ctx, rc != 0 && (e == ENOTEMPTY || e == EEXIST), "rmdir non-empty: %s, want ENOTEMPTY",
		 rc == 0 ? "succeeded" : strerror(e));
	PS_CHECK(ctx, access(ps_path(ctx, "d/f"), F_OK) == 0, "content vanished after failed rmdir");
	PS_CHECK(ctx, unlink(ps_path(ctx, "d/f")) == 0, "unlink: %s", strerror(errno));
	PS_CHECK(ctx, rmdir(ps_path(ctx, "d")) == 0, "rmdir now empty: %s", strerror(errno));
	return PS_PASS;
}

enum ps_result ps_case_readdir_many(struct ps_ctx *ctx)
{
	/* Emulated VMs pay milliseconds per round trip: --quick keeps it short. */
	const int count = ctx->entries ? ctx->entries : ctx->quick ? 200 : 10000;
	/* Long-ish names make the listing span many Treaddir replies. */
	char name[64];
	PS_CHECK(ctx, mkdir(ps_path(ctx, "d"), 0755) == 0, "mkdir: %s", strerror(errno));
	/* mknod creates an empty file in fewer round trips than open+close,
	 * which matters at 10,000 entries under emulation; where it is refused
	 * (protocols without Tmknod) fall back to creat. */
	bool use_mknod = true;
	for (int i = 0; i < count; i++) {
		snprintf(name, sizeof(name), "d/entry-with-a-longer-name-%05d", i);
		const char *p = ps_path(ctx, name);
		if (use_mknod && mknod(p, S_IFREG | 0644, 0) == 0)
			continue;
		if (use_mknod && i == 0 && (errno == EPERM || errno == ENOSYS || errno == EOPNOTSUPP))
			use_mknod = false;
		else if (use_mknod)
			return ps_fail(ctx, "mknod %s: %s", name, strerror(errno));
		int fd = open(p, O_WRONLY | O_CREAT | O_EXCL, 0644);
		PS_CHECK(ctx, fd >= 0, "create %s: %s", name, strerror(errno));
		close(fd);
	}
	unsigned char *seen = calloc((size_t)count, 1);
	PS_CHECK(ctx, seen != NULL, "out of memory");
	DIR *d = opendir(ps_path(ctx, "d"));
	if (!d) {
		free(seen);
		return ps_fail(ctx, "opendir: %s", strerror(errno));
	}
	int total = 0, dots = 0, dup = -1, bad = 0;
	struct dirent *de;
	errno = 0;
	while ((de = readdir(d)) != NULL) {
		if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0) {
			dots++;
			continue;
		}
		int idx;
		if (sscanf(de->d_name, "entry-with-a-longer-name-%05d", &idx) != 1 || idx < 0 || idx >= count) {
			bad++;
			continue;
		}
		if (seen[idx] && dup < 0)
			dup = idx;
		seen[idx] = 1;
		total++;
	}
	int e = errno;
	closedir(d);
	int missing = -1;
	for (int i = 0; i < count && missing < 0; i++)
		if (!seen[i])
			missing = i;
	free(seen);
	PS_CHECK(ctx, e == 0, "readdir: %s", strerror(e));
	PS_CHECK(ctx, bad == 0, "%d unexpected names in listing", bad);
	PS_CHECK(ctx, dup < 0, "entry %d listed twice", dup);
	PS_CHECK(ctx, missing < 0, "entry %d missing from listing (%d of %d seen)", missing, total, count);
	PS_CHECK(ctx, total == count, "listed %d entries, want %d", total, count);
	PS_CHECK(ctx, dots == 2, "listed %d of '.' and '..', want 2", dots);
	return PS_PASS;
}

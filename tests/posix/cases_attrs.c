/* Metadata cases: ownership and mode, permission checks for another user,
 * user.* extended attributes, statfs and timestamps. */
#include "posix_suite.h"

#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/wait.h>
#include <sys/xattr.h>
#include <time.h>
#include <unistd.h>

/* The unprivileged identity used when running as root. */
#define PS_OTHER_UID 65534
#define PS_OTHER_GID 65534

enum ps_result ps_case_chown_chmod(struct ps_ctx *ctx)
{
	const char *f = ps_path(ctx, "f");
	PS_CHECK(ctx, ps_write_file(f, "x", 1) == 0, "create: %s", strerror(errno));
	struct stat st;
	static const mode_t modes[] = {0640, 0000, 0777, 01755, 0604};
	for (size_t i = 0; i < sizeof(modes) / sizeof(modes[0]); i++) {
		PS_CHECK(ctx, chmod(f, modes[i]) == 0, "chmod %o: %s", modes[i], strerror(errno));
		PS_CHECK(ctx, stat(f, &st) == 0, "stat: %s", strerror(errno));
		PS_CHECK(ctx, (st.st_mode & 07777) == modes[i], "mode %o after chmod %o", st.st_mode & 07777,
			 modes[i]);
	}
	int fd = open(f, O_RDONLY);
	PS_CHECK(ctx, fd >= 0, "open: %s", strerror(errno));
	int rc = fchmod(fd, 0600);
	int e = errno;
	int s = fstat(fd, &st);
	close(fd);
	PS_CHECK(ctx, rc == 0, "fchmod: %s", strerror(e));
	PS_CHECK(ctx, s == 0 && (st.st_mode & 07777) == 0600, "mode %o after fchmod 600", st.st_mode & 07777);

	uid_t uid = geteuid();
	gid_t gid = getegid();
	if (uid == 0) {
		uid = PS_OTHER_UID;
		gid = PS_OTHER_GID;
	}
	PS_CHECK(ctx, chown(f, uid, gid) == 0, "chown %u:%u: %s", uid, gid, strerror(errno));
	PS_CHECK(ctx, stat(f, &st) == 0, "stat: %s", strerror(errno));
	PS_CHECK(ctx, st.st_uid == uid && st.st_gid == gid, "owner %u:%u after chown %u:%u", st.st_uid, st.st_gid,
		 uid, gid);
	/* -1 leaves that id unchanged. */
	PS_CHECK(ctx, chown(f, (uid_t)-1, getegid()) == 0, "chown -1:%u: %s", getegid(), strerror(errno));
	PS_CHECK(ctx, stat(f, &st) == 0 && st.st_uid == uid && st.st_gid == getegid(),
		 "owner %u:%u after chown -1:%u", st.st_uid, st.st_gid, getegid());
	PS_CHECK(ctx, lchown(f, uid, gid) == 0, "lchown: %s", strerror(errno));
	return PS_PASS;
}

/* Runs in the child: drop to the other user, then probe. Returns the
 * exit code; writes a reason to FD on failure. */
static int probe_as_other(int fd, const char *secret, const char *dir, const char *shared)
{
	char why[256] = "";
	int code = 0;
	if (setgroups(0, NULL) != 0 || setresgid(PS_OTHER_GID, PS_OTHER_GID, PS_OTHER_GID) != 0 ||
	    setresuid(PS_OTHER_UID, PS_OTHER_UID, PS_OTHER_UID) != 0) {
		snprintf(why, sizeof(why), "cannot drop privileges: %s", strerror(errno));
		code = 2;
		goto out;
	}
	/* Not a finding about the file system: some ancestor is closed to us. */
	if (access(dir, X_OK) != 0) {
		snprintf(why, sizeof(why), "scratch directory not reachable by uid %d: %s", PS_OTHER_UID,
			 strerror(errno));
		code = 4;
		goto out;
	}
	int f = open(secret, O_RDONLY);
	if (f >= 0 || errno != EACCES) {
		snprintf(why, sizeof(why), "open of another user's 0600 file: %s, want EACCES",
			 f >= 0 ? "succeeded" : strerror(errno));
		code = 1;
		goto out;
	}
	f = open(secret, O_WRONLY | O_TRUNC);
	if (f >= 0 || errno != EACCES) {
		snprintf(why, sizeof(why), "open O_WRONLY of another user's 0600 file: %s, want EACCES",
			 f >= 0 ? "succeeded" : strerror(errno));
		code = 1;
		goto out;
	}
	char p[PATH_MAX];
	snprintf(p, sizeof(p), "%s/new", dir);
	f = open(p, O_WRONLY | O_CREAT, 0644);
	if (f >= 0 || errno != EACCES) {
		snprintf(why, sizeof(why), "create in root's 0755 directory: %s, want EACCES",
			 f >= 0 ? "succeeded" : strerror(errno));
		code = 1;
		goto out;
	}
	/* A file the other user owns must be readable: the denial was about ownership. */
	f = open(shared, O_RDONLY);
	if (f < 0) {
		snprintf(why, sizeof(why), "open of own 0600 file: %s", strerror(errno));
		code = 1;
		goto out;
	}
	char buf[8];
	ssize_t n = read(f, buf, sizeof(buf));
	close(f);
	if (n != 4 || memcmp(buf, "mine", 4) != 0) {
		snprintf(why, sizeof(why), "read of own file returned %zd", n);
		code = 1;
	}
out:
	if (why[0] && write(fd, why, strlen(why)) < 0)
		code = 3;
	return code;
}

enum ps_result ps_case_eacces_other_user(struct ps_ctx *ctx)
{
	if (geteuid() != 0)
		return ps_skip(ctx, "needs root to switch to uid %d", PS_OTHER_UID);
	const char *secret = ps_path(ctx, "secret"), *shared = ps_path(ctx, "theirs");
	PS_CHECK(ctx, ps_write_file(secret, "root", 4) == 0, "create: %s", strerror(errno));
	PS_CHECK(ctx, chmod(secret, 0600) == 0, "chmod: %s", strerror(errno));
	PS_CHECK(ctx, ps_write_file(shared, "mine", 4) == 0, "create: %s", strerror(errno));
	PS_CHECK(ctx, chown(shared, PS_OTHER_UID, PS_OTHER_GID) == 0 && chmod(shared, 0600) == 0,
		 "chown/chmod: %s", strerror(errno));
	PS_CHECK(ctx, chmod(ctx->dir, 0755) == 0, "chmod dir: %s", strerror(errno));
	int pfd[2];
	PS_CHECK(ctx, pipe(pfd) == 0, "pipe: %s", strerror(errno));
	fflush(NULL);
	pid_t pid = fork();
	PS_CHECK(ctx, pid >= 0, "fork: %s", strerror(errno));
	if (pid == 0) {
		close(pfd[0]);
		_exit(probe_as_other(pfd[1], secret, ctx->dir, shared));
	}
	close(pfd[1]);
	char why[256] = "";
	ssize_t n = ps_read_all(pfd[0], why, sizeof(why) - 1);
	close(pfd[0]);
	why[n > 0 ? n : 0] = '\0';
	int status;
	PS_CHECK(ctx, waitpid(pid, &status, 0) == pid, "waitpid: %s", strerror(errno));
	if (WIFEXITED(status) && WEXITSTATUS(status) == 4)
		return ps_skip(ctx, "%s", why);
	PS_CHECK(ctx, WIFEXITED(status) && WEXITSTATUS(status) == 0, "as uid %d: %s", PS_OTHER_UID,
		 why[0] ? why : "child died");
	return PS_PASS;
}

enum ps_result ps_case_xattr_user(struct ps_ctx *ctx)
{
	const char *f = ps_path(ctx, "f");
	PS_CHECK(ctx, ps_write_file(f, "x", 1) == 0, "create: %s", strerror(errno));
	if (setxattr(f, "user.ninep.a", "alpha", 5, XATTR_CREATE) != 0) {
		if (errno == EOPNOTSUPP || errno == ENOTSUP)
			return ps_skip(ctx, "unsupported (setxattr answered EOPNOTSUPP)");
		return ps_fail(ctx, "setxattr: %s", strerror(errno));
	}
	/* A larger binary value with embedded NULs. */
	unsigned char big[3000];
	for (size_t i = 0; i < sizeof(big); i++)
		big[i] = (unsigned char)(i * 7);
	PS_CHECK(ctx, setxattr(f, "user.ninep.b", big, sizeof(big), 0) == 0, "setxattr big: %s", strerror(errno));
	int rc = setxattr(f, "user.ninep.a", "again", 5, XATTR_CREATE);
	PS_CHECK(ctx, rc != 0 && errno == EEXIST, "XATTR_CREATE on existing attribute: %s, want EEXIST",
		 rc == 0 ? "succeeded" : strerror(errno));
	PS_CHECK(ctx, setxattr(f, "user.ninep.a", "beta!", 5, XATTR_REPLACE) == 0, "XATTR_REPLACE: %s",
		 strerror(errno));
	char val[4096];
	ssize_t n = getxattr(f, "user.ninep.a", val, sizeof(val));
	PS_CHECK(ctx, n == 5 && memcmp(val, "beta!", 5) == 0, "getxattr a returned %zd", n);
	n = getxattr(f, "user.ninep.a", NULL, 0);
	PS_CHECK(ctx, n == 5, "getxattr size query returned %zd, want 5", n);
	n = getxattr(f, "user.ninep.b", val, sizeof(val));
	PS_CHECK(ctx, n == (ssize_t)sizeof(big) && memcmp(val, big, sizeof(big)) == 0,
		 "getxattr big returned %zd or different bytes", n);
	n = getxattr(f, "user.ninep.a", val, 2);
	PS_CHECK(ctx, n < 0 && errno == ERANGE, "getxattr into short buffer: want ERANGE");

	char list[4096];
	n = listxattr(f, list, sizeof(list));
	PS_CHECK(ctx, n > 0, "listxattr: %s", strerror(errno));
	bool has_a = false, has_b = false;
	for (char *p = list; p < list + n; p += strlen(p) + 1) {
		has_a |= strcmp(p, "user.ninep.a") == 0;
		has_b |= strcmp(p, "user.ninep.b") == 0;
	}
	PS_CHECK(ctx, has_a && has_b, "listxattr lacks %s", has_a ? "user.ninep.b" : "user.ninep.a");
	PS_CHECK(ctx, removexattr(f, "user.ninep.a") == 0, "removexattr: %s", strerror(errno));
	n = getxattr(f, "user.ninep.a", val, sizeof(val));
	PS_CHECK(ctx, n < 0 && errno == ENODATA, "getxattr after remove: %s, want ENODATA",
		 n >= 0 ? "found" : strerror(errno));
	rc = removexattr(f, "user.ninep.missing");
	PS_CHECK(ctx, rc != 0 && errno == ENODATA, "removexattr of missing: want ENODATA");
	return PS_PASS;
}

enum ps_result ps_case_statfs(struct ps_ctx *ctx)
{
	struct statfs a, b;
	PS_CHECK(ctx, statfs(ctx->dir, &a) == 0, "statfs: %s", strerror(errno));
	PS_CHECK(ctx, a.f_bsize > 0, "f_bsize %ld", (long)a.f_bsize);
	PS_CHECK(ctx, a.f_blocks > 0, "f_blocks is 0");
	PS_CHECK(ctx, a.f_bfree <= a.f_blocks && a.f_bavail <= a.f_blocks, "free %llu/avail %llu exceed total %llu",
		 (unsigned long long)a.f_bfree, (unsigned long long)a.f_bavail, (unsigned long long)a.f_blocks);
	PS_CHECK(ctx, a.f_namelen >= 255, "f_namelen %ld, want >= 255", (long)a.f_namelen);
	int fd = open(ctx->dir, O_RDONLY | O_DIRECTORY);
	PS_CHECK(ctx, fd >= 0, "open dir: %s", strerror(errno));
	int rc = fstatfs(fd, &b);
	close(fd);
	PS_CHECK(ctx, rc == 0, "fstatfs: %s", strerror(errno));
	PS_CHECK(ctx, a.f_type == b.f_type && a.f_blocks == b.f_blocks && a.f_bsize == b.f_bsize,
		 "statfs and fstatfs disagree");
	return PS_PASS;
}

enum ps_result ps_case_utimensat(struct ps_ctx *ctx)
{
	const char *f = ps_path(ctx, "f");
	PS_CHECK(ctx, ps_write_file(f, "x", 1) == 0, "create: %s", strerror(errno));
	struct timespec ts[2] = {{1000000000, 123456789}, {1200000000, 987654321}};
	PS_CHECK(ctx, utimensat(AT_FDCWD, f, ts, 0) == 0, "utimensat explicit: %s", strerror(errno));
	struct stat st;
	PS_CHECK(ctx, stat(f, &st) == 0, "stat: %s", strerror(errno));
	PS_CHECK(ctx, st.st_atim.tv_sec == ts[0].tv_sec && st.st_atim.tv_nsec == ts[0].tv_nsec,
		 "atime %lld.%09ld, want %lld.%09ld", (long long)st.st_atim.tv_sec, st.st_atim.tv_nsec,
		 (long long)ts[0].tv_sec, ts[0].tv_nsec);
	PS_CHECK(ctx, st.st_mtim.tv_sec == ts[1].tv_sec && st.st_mtim.tv_nsec == ts[1].tv_nsec,
		 "mtime %lld.%09ld, want %lld.%09ld", (long long)st.st_mtim.tv_sec, st.st_mtim.tv_nsec,
		 (long long)ts[1].tv_sec, ts[1].tv_nsec);

	/* UTIME_OMIT keeps atime; UTIME_NOW sets mtime to the current time. The
	 * server's clock may be another machine's, so allow some skew. */
	struct timespec now;
	clock_gettime(CLOCK_REALTIME, &now);
	struct timespec ts2[2] = {{0, UTIME_OMIT}, {0, UTIME_NOW}};
	PS_CHECK(ctx, utimensat(AT_FDCWD, f, ts2, 0) == 0, "utimensat OMIT/NOW: %s", strerror(errno));
	PS_CHECK(ctx, stat(f, &st) == 0, "stat: %s", strerror(errno));
	PS_CHECK(ctx, st.st_atim.tv_sec == ts[0].tv_sec && st.st_atim.tv_nsec == ts[0].tv_nsec,
		 "UTIME_OMIT changed atime to %lld.%09ld", (long long)st.st_atim.tv_sec, st.st_atim.tv_nsec);
	long long skew = (long long)st.st_mtim.tv_sec - (long long)now.tv_sec;
	PS_CHECK(ctx, skew > -30 && skew < 30, "UTIME_NOW mtime is %lld s away from now", skew);

	/* Both omitted: nothing changes. Then through an fd with futimens. */
	struct stat before = st;
	struct timespec omit[2] = {{0, UTIME_OMIT}, {0, UTIME_OMIT}};
	PS_CHECK(ctx, utimensat(AT_FDCWD, f, omit, 0) == 0, "utimensat OMIT/OMIT: %s", strerror(errno));
	PS_CHECK(ctx, stat(f, &st) == 0, "stat: %s", strerror(errno));
	PS_CHECK(ctx, st.st_mtim.tv_sec == before.st_mtim.tv_sec && st.st_mtim.tv_nsec == before.st_mtim.tv_nsec,
		 "UTIME_OMIT for both changed mtime");
	int fd = open(f, O_RDONLY);
	PS_CHECK(ctx, fd >= 0, "open: %s", strerror(errno));
	struct timespec ts3[2] = {{0, UTIME_NOW}, {1500000000, 5}};
	int rc = futimens(fd, ts3);
	int e = errno;
	close(fd);
	PS_CHECK(ctx, rc == 0, "futimens: %s", strerror(e));
	PS_CHECK(ctx, stat(f, &st) == 0, "stat: %s", strerror(errno));
	PS_CHECK(ctx, st.st_mtim.tv_sec == 1500000000 && st.st_mtim.tv_nsec == 5, "futimens mtime %lld.%09ld",
		 (long long)st.st_mtim.tv_sec, st.st_mtim.tv_nsec);
	skew = (long long)st.st_atim.tv_sec - (long long)now.tv_sec;
	PS_CHECK(ctx, skew > -30 && skew < 30, "UTIME_NOW atime is %lld s away from now", skew);
	return PS_PASS;
}

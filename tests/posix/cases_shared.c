/* Cases about sharing a file between processes or mappings: POSIX record
 * locks seen from a second process, and MAP_SHARED writes seen by read(). */
#include "posix_suite.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

/* Child side of the lock case. Phase 1: conflicts are reported while the
 * parent holds the lock. Phase 2 (after the parent unlocks): the lock is free. */
static int lock_child(const char *path, pid_t holder, int report, int go)
{
	char why[256] = "";
	int code = 0;
	int fd = open(path, O_RDWR);
	if (fd < 0) {
		snprintf(why, sizeof(why), "child open: %s", strerror(errno));
		code = 1;
		goto out;
	}
	struct flock fl = {.l_type = F_WRLCK, .l_whence = SEEK_SET, .l_start = 50, .l_len = 10};
	int rc = fcntl(fd, F_SETLK, &fl);
	if (rc == 0 || (errno != EAGAIN && errno != EACCES)) {
		snprintf(why, sizeof(why), "conflicting F_SETLK in child: %s, want EAGAIN",
			 rc == 0 ? "succeeded" : strerror(errno));
		code = 1;
		goto out;
	}
	fl = (struct flock){.l_type = F_RDLCK, .l_whence = SEEK_SET, .l_start = 0, .l_len = 1};
	if (fcntl(fd, F_GETLK, &fl) != 0) {
		snprintf(why, sizeof(why), "F_GETLK: %s", strerror(errno));
		code = 1;
		goto out;
	}
	if (fl.l_type != F_WRLCK || fl.l_pid != holder || fl.l_start != 0 || fl.l_len != 100) {
		snprintf(why, sizeof(why), "F_GETLK: type %d pid %d range %lld+%lld, want WRLCK by %d on 0+100",
			 fl.l_type, (int)fl.l_pid, (long long)fl.l_start, (long long)fl.l_len, (int)holder);
		code = 1;
		goto out;
	}
	/* Outside the locked range there is no conflict. */
	fl = (struct flock){.l_type = F_WRLCK, .l_whence = SEEK_SET, .l_start = 200, .l_len = 10};
	if (fcntl(fd, F_SETLK, &fl) != 0) {
		snprintf(why, sizeof(why), "non-overlapping F_SETLK: %s", strerror(errno));
		code = 1;
		goto out;
	}
	if (write(report, "1", 1) != 1 || read(go, why, 1) != 1) {
		snprintf(why, sizeof(why), "lost contact with parent");
		code = 1;
		goto out;
	}
	why[0] = '\0';
	fl = (struct flock){.l_type = F_WRLCK, .l_whence = SEEK_SET, .l_start = 50, .l_len = 10};
	if (fcntl(fd, F_SETLK, &fl) != 0) {
		snprintf(why, sizeof(why), "F_SETLK after parent unlocked: %s", strerror(errno));
		code = 1;
	}
out:
	if (code && write(report, why, strlen(why)) < 0)
		code = 2;
	return code;
}

enum ps_result ps_case_fcntl_locks(struct ps_ctx *ctx)
{
	const char *p = ps_path(ctx, "locked");
	char zero[300] = {0};
	PS_CHECK(ctx, ps_write_file(p, zero, sizeof(zero)) == 0, "create: %s", strerror(errno));
	int fd = open(p, O_RDWR);
	PS_CHECK(ctx, fd >= 0, "open: %s", strerror(errno));
	struct flock fl = {.l_type = F_WRLCK, .l_whence = SEEK_SET, .l_start = 0, .l_len = 100};
	if (fcntl(fd, F_SETLK, &fl) != 0) {
		int e = errno;
		close(fd);
		return ps_fail(ctx, "F_SETLK: %s", strerror(e));
	}
	int up[2], down[2];
	if (pipe(up) != 0 || pipe(down) != 0) {
		close(fd);
		return ps_fail(ctx, "pipe: %s", strerror(errno));
	}
	fflush(NULL);
	pid_t me = getpid();
	pid_t pid = fork();
	if (pid == 0) {
		close(up[0]);
		close(down[1]);
		close(fd);
		_exit(lock_child(p, me, up[1], down[0]));
	}
	close(up[1]);
	close(down[0]);
	enum ps_result r = PS_PASS;
	char msg[256] = "";
	ssize_t n = read(up[0], msg, 1);
	if (n == 1 && msg[0] == '1') {
		fl.l_type = F_UNLCK;
		if (fcntl(fd, F_SETLK, &fl) != 0)
			r = ps_fail(ctx, "F_UNLCK: %s", strerror(errno));
		if (write(down[1], "g", 1) != 1 && r == PS_PASS)
			r = ps_fail(ctx, "pipe write: %s", strerror(errno));
		n = 0;
	}
	close(down[1]);
	ssize_t more = ps_read_all(up[0], msg + (n > 0 ? n : 0), sizeof(msg) - 1 - (size_t)(n > 0 ? n : 0));
	msg[(n > 0 ? n : 0) + (more > 0 ? more : 0)] = '\0';
	close(up[0]);
	int status = 0;
	waitpid(pid, &status, 0);
	close(fd);
	if (r == PS_PASS && !(WIFEXITED(status) && WEXITSTATUS(status) == 0))
		r = ps_fail(ctx, "%s", msg[0] ? msg : "child died");
	return r;
}

enum ps_result ps_case_mmap_shared(struct ps_ctx *ctx)
{
	const size_t len = 3 * 4096 + 100;
	const char *p = ps_path(ctx, "mapped");
	int fd = open(p, O_RDWR | O_CREAT | O_TRUNC, 0644);
	PS_CHECK(ctx, fd >= 0, "create: %s", strerror(errno));
	if (ftruncate(fd, (off_t)len) != 0) {
		close(fd);
		return ps_fail(ctx, "ftruncate: %s", strerror(errno));
	}
	/* Data written with write() must be visible in the mapping. */
	if (pwrite(fd, "before", 6, 4096) != 6) {
		close(fd);
		return ps_fail(ctx, "pwrite: %s", strerror(errno));
	}
	unsigned char *m = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (m == MAP_FAILED) {
		int e = errno;
		close(fd);
		/* Some mounts (9p cache=none) only allow read-only shared mappings. */
		if (e == EINVAL || e == ENODEV)
			return ps_skip(ctx, "writable MAP_SHARED mappings refused (%s)", strerror(e));
		return ps_fail(ctx, "mmap MAP_SHARED read/write: %s", strerror(e));
	}
	enum ps_result r = PS_PASS;
	if (memcmp(m + 4096, "before", 6) != 0) {
		r = ps_fail(ctx, "mapping does not show data written before mmap");
		goto out;
	}
	for (size_t i = 0; i < len; i++)
		m[i] = (unsigned char)(i % 251 + 1);
	if (msync(m, len, MS_SYNC) != 0) {
		r = ps_fail(ctx, "msync: %s", strerror(errno));
		goto out;
	}
	/* Read back through a separate descriptor, as another reader would. */
	int fd2 = open(p, O_RDONLY);
	if (fd2 < 0) {
		r = ps_fail(ctx, "reopen: %s", strerror(errno));
		goto out;
	}
	unsigned char buf[3 * 4096 + 200];
	ssize_t n = ps_read_all(fd2, buf, sizeof(buf));
	close(fd2);
	if (n != (ssize_t)len) {
		r = ps_fail(ctx, "read after msync returned %zd bytes, want %zu", n, len);
		goto out;
	}
	for (size_t i = 0; i < len; i++) {
		if (buf[i] != (unsigned char)(i % 251 + 1)) {
			r = ps_fail(ctx, "byte %zu read back as %u, want %u", i, buf[i], (unsigned)(i % 251 + 1));
			goto out;
		}
	}
out:
	munmap(m, len);
	close(fd);
	return r;
}

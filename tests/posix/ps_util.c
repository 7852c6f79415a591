/* Helpers shared by the POSIX suite cases: result reporting, scratch paths,
 * whole-buffer I/O and tree removal. */
#include "posix_suite.h"

#include <errno.h>
#include <fcntl.h>
#include <dirent.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static enum ps_result set_msg(struct ps_ctx *ctx, enum ps_result r, const char *fmt, va_list ap)
	__attribute__((format(printf, 3, 0)));
static enum ps_result set_msg(struct ps_ctx *ctx, enum ps_result r, const char *fmt, va_list ap)
{
	vsnprintf(ctx->msg, sizeof(ctx->msg), fmt, ap);
	return r;
}

enum ps_result ps_fail(struct ps_ctx *ctx, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	enum ps_result r = set_msg(ctx, PS_FAIL, fmt, ap);
	va_end(ap);
	return r;
}

enum ps_result ps_skip(struct ps_ctx *ctx, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	enum ps_result r = set_msg(ctx, PS_SKIP, fmt, ap);
	va_end(ap);
	return r;
}

const char *ps_path(struct ps_ctx *ctx, const char *name)
{
	/* Rotating buffers let a case hold a few paths at once (rename, link). */
	static char bufs[16][PATH_MAX];
	static unsigned next;
	char *b = bufs[next++ % 16];
	/* An over-long path becomes empty, so the case fails with ENOENT. */
	int n = snprintf(b, PATH_MAX, "%s/%s", ctx->dir, name);
	if (n < 0 || n >= PATH_MAX)
		b[0] = '\0';
	return b;
}

ssize_t ps_write_all(int fd, const void *buf, size_t len)
{
	const char *p = buf;
	size_t done = 0;
	while (done < len) {
		ssize_t n = write(fd, p + done, len - done);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -1;
		}
		if (n == 0) {
			errno = EIO;
			return -1;
		}
		done += (size_t)n;
	}
	return (ssize_t)done;
}

ssize_t ps_read_all(int fd, void *buf, size_t len)
{
	char *p = buf;
	size_t done = 0;
	while (done < len) {
		ssize_t n = read(fd, p + done, len - done);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -1;
		}
		if (n == 0)
			break;
		done += (size_t)n;
	}
	return (ssize_t)done;
}

int ps_write_file(const char *path, const void *content, size_t len)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	if (fd < 0)
		return -1;
	if (ps_write_all(fd, content, len) < 0) {
		int e = errno;
		close(fd);
		errno = e;
		return -1;
	}
	return close(fd);
}

static void remove_contents(int dfd, int depth);

/* Remove the contents of directory DFD. Entries are unlinked without a stat
 * first (a stat is a round trip on a network file system); only what turns
 * out to be a directory is descended into. Returns how many entries went. */
static int remove_pass(int dfd, int depth)
{
	int removed = 0;
	DIR *d = fdopendir(dfd);
	if (!d) {
		close(dfd);
		return 0;
	}
	struct dirent *de;
	while ((de = readdir(d)) != NULL) {
		if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
			continue;
		if (de->d_type != DT_DIR && unlinkat(dirfd(d), de->d_name, 0) == 0) {
			removed++;
			continue;
		}
		if (depth > 64)
			continue;
		int sub = openat(dirfd(d), de->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW);
		if (sub >= 0)
			remove_contents(sub, depth + 1);
		if (unlinkat(dirfd(d), de->d_name, AT_REMOVEDIR) == 0)
			removed++;
	}
	closedir(d);
	return removed;
}

/* Removing entries while listing may shift a server's directory offsets, so
 * list again until a pass finds nothing left to remove. */
static void remove_contents(int dfd, int depth)
{
	for (int pass = 0; pass < 8; pass++) {
		int fd = dup(dfd);
		if (fd < 0 || lseek(fd, 0, SEEK_SET) < 0 || remove_pass(fd, depth) == 0)
			break;
	}
	close(dfd);
}

void ps_remove_tree(const char *path)
{
	int fd = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW);
	if (fd >= 0)
		remove_contents(fd, 0);
	rmdir(path);
}

/* File content cases: create/read/write, append, truncate, O_APPEND,
 * O_EXCL, sparse files and I/O on an unlinked-but-open file. */
#include "posix_suite.h"

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* A deterministic, position-dependent byte pattern, so misplaced data shows. */
static void fill_pattern(unsigned char *buf, size_t len, unsigned seed)
{
	for (size_t i = 0; i < len; i++)
		buf[i] = (unsigned char)((i * 131u + seed * 7u + (i >> 8)) & 0xff);
}

enum ps_result ps_case_create_rw(struct ps_ctx *ctx)
{
	/* Larger than any msize we test, so the client must split the I/O. */
	const size_t len = 1536 * 1024 + 333;
	unsigned char *out = malloc(len), *in = malloc(len);
	enum ps_result r = PS_PASS;
	if (!out || !in) {
		r = ps_fail(ctx, "out of memory");
		goto done;
	}
	fill_pattern(out, len, 1);
	const char *p = ps_path(ctx, "f");
	int fd = open(p, O_RDWR | O_CREAT | O_EXCL, 0644);
	if (fd < 0) {
		r = ps_fail(ctx, "create: %s", strerror(errno));
		goto done;
	}
	if (ps_write_all(fd, out, len) < 0) {
		r = ps_fail(ctx, "write: %s", strerror(errno));
		close(fd);
		goto done;
	}
	struct stat st;
	if (fstat(fd, &st) != 0 || st.st_size != (off_t)len || !S_ISREG(st.st_mode)) {
		r = ps_fail(ctx, "fstat after write: size %lld, want %zu", (long long)st.st_size, len);
		close(fd);
		goto done;
	}
	/* Overwrite a range in the middle through pwrite, then read the whole file. */
	memset(out + 4000, 'Z', 10000);
	if (pwrite(fd, out + 4000, 10000, 4000) != 10000) {
		r = ps_fail(ctx, "pwrite: %s", strerror(errno));
		close(fd);
		goto done;
	}
	close(fd);
	fd = open(p, O_RDONLY);
	if (fd < 0) {
		r = ps_fail(ctx, "reopen: %s", strerror(errno));
		goto done;
	}
	ssize_t n = ps_read_all(fd, in, len);
	char extra;
	ssize_t tail = read(fd, &extra, 1);
	close(fd);
	if (n != (ssize_t)len || tail != 0) {
		r = ps_fail(ctx, "read back %zd bytes (+%zd past end), want %zu", n, tail, len);
		goto done;
	}
	for (size_t i = 0; i < len; i++) {
		if (in[i] != out[i]) {
			r = ps_fail(ctx, "content differs at offset %zu", i);
			goto done;
		}
	}
done:
	free(out);
	free(in);
	return r;
}

enum ps_result ps_case_append(struct ps_ctx *ctx)
{
	const char *p = ps_path(ctx, "a");
	PS_CHECK(ctx, ps_write_file(p, "hello", 5) == 0, "create: %s", strerror(errno));
	int fd = open(p, O_WRONLY | O_APPEND);
	PS_CHECK(ctx, fd >= 0, "open O_APPEND: %s", strerror(errno));
	/* Seeking must not matter for O_APPEND writes. */
	lseek(fd, 0, SEEK_SET);
	ssize_t w = write(fd, " world", 6);
	off_t pos = lseek(fd, 0, SEEK_CUR);
	close(fd);
	PS_CHECK(ctx, w == 6, "append write: %s", strerror(errno));
	PS_CHECK(ctx, pos == 11, "offset after append %lld, want 11", (long long)pos);
	char buf[32] = {0};
	fd = open(p, O_RDONLY);
	PS_CHECK(ctx, fd >= 0, "open: %s", strerror(errno));
	ssize_t n = ps_read_all(fd, buf, sizeof(buf));
	close(fd);
	PS_CHECK(ctx, n == 11 && memcmp(buf, "hello world", 11) == 0,
		 "content '%.*s' (%zd bytes), want 'hello world'", (int)(n > 0 ? n : 0), buf, n);
	return PS_PASS;
}

enum ps_result ps_case_truncate(struct ps_ctx *ctx)
{
	const char *p = ps_path(ctx, "t");
	unsigned char data[8192];
	fill_pattern(data, sizeof(data), 3);
	PS_CHECK(ctx, ps_write_file(p, data, sizeof(data)) == 0, "create: %s", strerror(errno));

	/* Shrink by path, then grow through an fd: the grown part reads as zeros. */
	PS_CHECK(ctx, truncate(p, 1000) == 0, "truncate shrink: %s", strerror(errno));
	struct stat st;
	PS_CHECK(ctx, stat(p, &st) == 0 && st.st_size == 1000, "size after shrink %lld, want 1000",
		 (long long)st.st_size);
	int fd = open(p, O_RDWR);
	PS_CHECK(ctx, fd >= 0, "open: %s", strerror(errno));
	if (ftruncate(fd, 20000) != 0) {
		close(fd);
		return ps_fail(ctx, "ftruncate grow: %s", strerror(errno));
	}
	unsigned char buf[20001];
	ssize_t n = pread(fd, buf, sizeof(buf), 0);
	int e = errno;
	struct stat fst;
	int fs = fstat(fd, &fst);
	close(fd);
	PS_CHECK(ctx, n == 20000, "read after grow returned %zd (%s), want 20000", n, strerror(e));
	PS_CHECK(ctx, fs == 0 && fst.st_size == 20000, "fstat size %lld, want 20000", (long long)fst.st_size);
	PS_CHECK(ctx, memcmp(buf, data, 1000) == 0, "kept prefix changed after shrink+grow");
	for (size_t i = 1000; i < 20000; i++)
		PS_CHECK(ctx, buf[i] == 0, "byte %zu of grown area is %u, want 0", i, buf[i]);

	/* O_TRUNC on open empties the file. */
	fd = open(p, O_WRONLY | O_TRUNC);
	PS_CHECK(ctx, fd >= 0, "open O_TRUNC: %s", strerror(errno));
	close(fd);
	PS_CHECK(ctx, stat(p, &st) == 0 && st.st_size == 0, "size after O_TRUNC %lld", (long long)st.st_size);
	return PS_PASS;
}

enum ps_result ps_case_o_append_two_fds(struct ps_ctx *ctx)
{
	const char *p = ps_path(ctx, "two");
	int a = open(p, O_WRONLY | O_CREAT | O_APPEND, 0644);
	PS_CHECK(ctx, a >= 0, "open a: %s", strerror(errno));
	int b = open(p, O_WRONLY | O_APPEND);
	if (b < 0) {
		close(a);
		return ps_fail(ctx, "open b: %s", strerror(errno));
	}
	/* Interleaved appends through two descriptors must never overwrite. */
	char rec[16];
	bool ok = true;
	for (int i = 0; i < 100 && ok; i++) {
		snprintf(rec, sizeof(rec), "%c%03d\n", i % 2 ? 'b' : 'a', i);
		ok = write(i % 2 ? b : a, rec, 5) == 5;
	}
	close(a);
	close(b);
	PS_CHECK(ctx, ok, "append write: %s", strerror(errno));
	char buf[600];
	int fd = open(p, O_RDONLY);
	PS_CHECK(ctx, fd >= 0, "open: %s", strerror(errno));
	ssize_t n = ps_read_all(fd, buf, sizeof(buf));
	close(fd);
	PS_CHECK(ctx, n == 500, "file has %zd bytes, want 500", n);
	for (int i = 0; i < 100; i++) {
		snprintf(rec, sizeof(rec), "%c%03d\n", i % 2 ? 'b' : 'a', i);
		PS_CHECK(ctx, memcmp(buf + i * 5, rec, 5) == 0, "record %d is '%.4s', want '%.4s'", i,
			 buf + i * 5, rec);
	}
	return PS_PASS;
}

enum ps_result ps_case_o_excl(struct ps_ctx *ctx)
{
	const char *p = ps_path(ctx, "x");
	int fd = open(p, O_WRONLY | O_CREAT | O_EXCL, 0600);
	PS_CHECK(ctx, fd >= 0, "first O_EXCL create: %s", strerror(errno));
	close(fd);
	fd = open(p, O_WRONLY | O_CREAT | O_EXCL, 0600);
	int e = errno;
	if (fd >= 0)
		close(fd);
	PS_CHECK(ctx, fd < 0 && e == EEXIST, "second O_EXCL create: %s, want EEXIST",
		 fd >= 0 ? "succeeded" : strerror(e));
	/* O_EXCL must also refuse a dangling symlink rather than follow it. */
	const char *l = ps_path(ctx, "dangling");
	PS_CHECK(ctx, symlink("nowhere", l) == 0, "symlink: %s", strerror(errno));
	fd = open(l, O_WRONLY | O_CREAT | O_EXCL, 0600);
	e = errno;
	if (fd >= 0)
		close(fd);
	PS_CHECK(ctx, fd < 0 && e == EEXIST, "O_EXCL through dangling symlink: %s, want EEXIST",
		 fd >= 0 ? "succeeded" : strerror(e));
	return PS_PASS;
}

enum ps_result ps_case_sparse(struct ps_ctx *ctx)
{
	const off_t gib = (off_t)1 << 30;
	const char *p = ps_path(ctx, "sparse");
	int fd = open(p, O_RDWR | O_CREAT | O_TRUNC, 0644);
	PS_CHECK(ctx, fd >= 0, "create: %s", strerror(errno));
	ssize_t w = pwrite(fd, "END", 3, gib);
	int e = errno;
	struct stat st;
	int s = fstat(fd, &st);
	unsigned char hole[4096], tail[8];
	memset(hole, 0xaa, sizeof(hole));
	ssize_t h = pread(fd, hole, sizeof(hole), gib / 2);
	ssize_t t = pread(fd, tail, sizeof(tail), gib);
	close(fd);
	PS_CHECK(ctx, w == 3, "pwrite at 1 GiB: %s", strerror(e));
	PS_CHECK(ctx, s == 0 && st.st_size == gib + 3, "size %lld, want %lld", (long long)st.st_size,
		 (long long)(gib + 3));
	PS_CHECK(ctx, h == (ssize_t)sizeof(hole), "read in hole returned %zd", h);
	for (size_t i = 0; i < sizeof(hole); i++)
		PS_CHECK(ctx, hole[i] == 0, "hole byte %zu is %u, want 0", i, hole[i]);
	PS_CHECK(ctx, t == 3 && memcmp(tail, "END", 3) == 0, "tail read %zd bytes", t);
	return PS_PASS;
}

enum ps_result ps_case_unlink_open(struct ps_ctx *ctx)
{
	const char *p = ps_path(ctx, "gone");
	int fd = open(p, O_RDWR | O_CREAT | O_TRUNC, 0644);
	PS_CHECK(ctx, fd >= 0, "create: %s", strerror(errno));
	enum ps_result r = PS_PASS;
	if (ps_write_all(fd, "0123456789", 10) != 10) {
		r = ps_fail(ctx, "write: %s", strerror(errno));
		goto out;
	}
	if (unlink(p) != 0) {
		r = ps_fail(ctx, "unlink: %s", strerror(errno));
		goto out;
	}
	struct stat st;
	if (stat(p, &st) == 0 || errno != ENOENT) {
		r = ps_fail(ctx, "name still visible after unlink");
		goto out;
	}
	/* The open descriptor keeps the file alive: every operation still works. */
	if (fstat(fd, &st) != 0) {
		r = ps_fail(ctx, "fstat after unlink: %s", strerror(errno));
		goto out;
	}
	if (st.st_size != 10 || st.st_nlink != 0) {
		r = ps_fail(ctx, "fstat after unlink: size %lld nlink %lu, want 10 and 0",
			    (long long)st.st_size, (unsigned long)st.st_nlink);
		goto out;
	}
	if (pwrite(fd, "abc", 3, 10) != 3) {
		r = ps_fail(ctx, "write after unlink: %s", strerror(errno));
		goto out;
	}
	if (ftruncate(fd, 12) != 0) {
		r = ps_fail(ctx, "ftruncate after unlink: %s", strerror(errno));
		goto out;
	}
	char buf[32];
	ssize_t n = pread(fd, buf, sizeof(buf), 0);
	if (n != 12 || memcmp(buf, "0123456789ab", 12) != 0) {
		r = ps_fail(ctx, "read after unlink: %zd bytes '%.*s', want '0123456789ab'", n,
			    (int)(n > 0 ? n : 0), buf);
		goto out;
	}
	if (fstat(fd, &st) != 0 || st.st_size != 12)
		r = ps_fail(ctx, "size after ftruncate on unlinked file %lld, want 12", (long long)st.st_size);
out:
	close(fd);
	return r;
}

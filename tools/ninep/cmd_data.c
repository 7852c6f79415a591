/* Data commands: cat, get, put, write. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ninep.h"

#define CHUNK (4u << 20) /* per pipelined pread/pwrite call */

static int write_all(int fd, const char *p, size_t n)
{
	while (n) {
		ssize_t w = write(fd, p, n);
		if (w < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		p += w;
		n -= (size_t)w;
	}
	return 0;
}

/* Copy remote f to local fd.  Returns 0 or -errno; *local_err tells which
 * side failed. */
static int copy_out(np_cfid *f, int fd, const char *name, int *local_err)
{
	char *buf = malloc(CHUNK);
	if (!buf)
		return -ENOMEM;
	struct progress p;
	int64_t size = file_size(f);
	progress_start(&p, name, size > 0 ? (uint64_t)size : 0);
	uint64_t off = 0;
	int e = 0;
	*local_err = 0;
	for (;;) {
		ssize_t n = np_cfid_pread(f, buf, CHUNK, off);
		if (n < 0) {
			e = (int)n;
			break;
		}
		if (n == 0)
			break;
		if ((e = write_all(fd, buf, (size_t)n)) < 0) {
			*local_err = 1;
			break;
		}
		off += (uint64_t)n;
		progress_update(&p, off);
	}
	progress_end(&p);
	free(buf);
	return e;
}

/* Copy local fd to remote f from offset 0. */
static int copy_in(int fd, np_cfid *f, const char *name, uint64_t total, int *local_err)
{
	char *buf = malloc(CHUNK);
	if (!buf)
		return -ENOMEM;
	struct progress p;
	progress_start(&p, name, total);
	uint64_t off = 0;
	int e = 0;
	*local_err = 0;
	for (;;) {
		size_t have = 0;
		/* Fill a whole chunk so the remote writes stay msize-sized. */
		while (have < CHUNK) {
			ssize_t r = read(fd, buf + have, CHUNK - have);
			if (r < 0 && errno == EINTR)
				continue;
			if (r < 0) {
				e = -errno;
				*local_err = 1;
				break;
			}
			if (r == 0)
				break;
			have += (size_t)r;
		}
		if (e < 0 || have == 0)
			break;
		ssize_t w = np_cfid_pwrite(f, buf, have, off);
		if (w < 0) {
			e = (int)w;
			break;
		}
		if ((size_t)w != have) {
			e = -EIO;
			break;
		}
		off += have;
		progress_update(&p, off);
	}
	progress_end(&p);
	free(buf);
	return e;
}

int cmd_cat(struct tool *t, int argc, char **argv)
{
	if (argc < 2)
		return usage_err("cat", "PATH...");
	int rc = 0;
	for (int i = 1; i < argc; i++) {
		np_cfid *f;
		int le = 0, e = walk_open(t, argv[i], O_RDONLY, &f);
		if (e < 0) {
			rc = fail("cat", argv[i], e);
			continue;
		}
		e = copy_out(f, 1, argv[i], &le);
		np_cfid_clunk(f);
		if (e < 0) {
			if (le)
				return fail("cat", "write error", e);
			rc = fail("cat", argv[i], e);
		}
	}
	return rc;
}

int cmd_get(struct tool *t, int argc, char **argv)
{
	if (argc != 3)
		return usage_err("get", "REMOTE LOCAL");
	np_cfid *f;
	int le = 0, e = walk_open(t, argv[1], O_RDONLY, &f);
	if (e < 0)
		return fail("get", argv[1], e);
	int fd = strcmp(argv[2], "-") == 0 ? 1 : open(argv[2], O_WRONLY | O_CREAT | O_TRUNC, 0666);
	if (fd < 0) {
		e = -errno;
		np_cfid_clunk(f);
		return fail("get", argv[2], e);
	}
	e = copy_out(f, fd, argv[1], &le);
	np_cfid_clunk(f);
	if (fd != 1 && close(fd) < 0 && e == 0) {
		e = -errno;
		le = 1;
	}
	if (e < 0)
		return fail("get", le ? argv[2] : argv[1], e);
	return 0;
}

int cmd_put(struct tool *t, int argc, char **argv)
{
	if (argc != 3)
		return usage_err("put", "LOCAL REMOTE");
	int fd = strcmp(argv[1], "-") == 0 ? 0 : open(argv[1], O_RDONLY);
	if (fd < 0)
		return fail("put", argv[1], -errno);
	uint64_t total = 0;
	off_t end = lseek(fd, 0, SEEK_END);
	if (end > 0 && lseek(fd, 0, SEEK_SET) == 0)
		total = (uint64_t)end;
	np_cfid *f;
	int le, e = open_for_write(t, argv[2], &f);
	if (e < 0) {
		if (fd)
			close(fd);
		return fail("put", argv[2], e);
	}
	e = copy_in(fd, f, argv[2], total, &le);
	int ce = np_cfid_clunk(f);
	if (fd)
		close(fd);
	if (e < 0)
		return fail("put", le ? argv[1] : argv[2], e);
	if (ce < 0)
		return fail("put", argv[2], ce);
	return 0;
}

int cmd_write(struct tool *t, int argc, char **argv)
{
	if (argc != 2)
		return usage_err("write", "PATH");
	np_cfid *f;
	int le, e = open_for_write(t, argv[1], &f);
	if (e < 0)
		return fail("write", argv[1], e);
	e = copy_in(0, f, argv[1], 0, &le);
	int ce = np_cfid_clunk(f);
	if (e < 0)
		return fail("write", le ? "stdin" : argv[1], e);
	if (ce < 0)
		return fail("write", argv[1], ce);
	return 0;
}

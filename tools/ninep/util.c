/* Helpers shared by the subcommands: error reports, path walking, progress. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "ninep.h"

int fail(const char *cmd, const char *path, int err)
{
	if (path)
		fprintf(stderr, "ninep: %s %s: %s\n", cmd, path, strerror(-err));
	else
		fprintf(stderr, "ninep: %s: %s\n", cmd, strerror(-err));
	return 1;
}

int usage_err(const char *cmd, const char *usage)
{
	fprintf(stderr, "usage: ninep %s %s\n", cmd, usage);
	return 2;
}

int walk(struct tool *t, const char *path, np_cfid **out)
{
	return np_client_walk_path(t->root, path, out);
}

int walk_parent(struct tool *t, const char *path, np_cfid **dir, char *name, size_t cap)
{
	size_t len = strlen(path);
	while (len > 1 && path[len - 1] == '/')
		len--;
	char *p = strndup(path, len);
	if (!p)
		return -ENOMEM;
	char *slash = strrchr(p, '/');
	const char *base = slash ? slash + 1 : p;
	if (!*base || strcmp(base, ".") == 0 || strcmp(base, "..") == 0) {
		free(p);
		return -EINVAL;
	}
	if (strlen(base) >= cap) {
		free(p);
		return -ENAMETOOLONG;
	}
	strcpy(name, base);
	if (slash)
		slash[1] = '\0';
	else
		p[0] = '\0';
	int e = walk(t, p, dir);
	free(p);
	return e;
}

int walk_open(struct tool *t, const char *path, int flags, np_cfid **out)
{
	np_cfid *f;
	int e = walk(t, path, &f);
	if (e < 0)
		return e;
	if ((e = np_cfid_open(f, flags)) < 0) {
		np_cfid_clunk(f);
		return e;
	}
	*out = f;
	return 0;
}

int open_for_write(struct tool *t, const char *path, np_cfid **out)
{
	int e = walk_open(t, path, O_WRONLY | O_TRUNC, out);
	if (e != -ENOENT)
		return e;
	np_cfid *dir;
	char name[4096];
	if ((e = walk_parent(t, path, &dir, name, sizeof name)) < 0)
		return e;
	mode_t um = umask(0);
	umask(um);
	if ((e = np_cfid_create(dir, name, O_WRONLY | O_TRUNC, 0666 & ~um, (uint32_t)-1)) < 0) {
		np_cfid_clunk(dir);
		return e;
	}
	*out = dir; /* now the new, open file */
	return 0;
}

int64_t file_size(np_cfid *f)
{
	struct np_attr a;
	int e = np_cfid_getattr(f, NP_GETATTR_SIZE, &a);
	return e < 0 ? e : (int64_t)a.size;
}

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

void progress_start(struct progress *p, const char *name, uint64_t total)
{
	memset(p, 0, sizeof *p);
	p->on = isatty(2);
	p->name = name;
	p->total = total;
	p->start = p->last = now();
}

static void progress_draw(struct progress *p, double t)
{
	double el = t - p->start;
	double rate = el > 0 ? (double)p->done / el : 0;
	if (p->total)
		fprintf(stderr, "\r%s: %3d%% %llu/%llu bytes %.1f MiB/s ", p->name,
			(int)(100.0 * (double)p->done / (double)p->total),
			(unsigned long long)p->done, (unsigned long long)p->total, rate / 1048576.0);
	else
		fprintf(stderr, "\r%s: %llu bytes %.1f MiB/s ", p->name,
			(unsigned long long)p->done, rate / 1048576.0);
}

void progress_update(struct progress *p, uint64_t done)
{
	p->done = done;
	if (!p->on)
		return;
	double t = now();
	/* Only long transfers: nothing in the first second, then 5 times a second. */
	if (t - p->start < 1.0 || t - p->last < 0.2)
		return;
	p->last = t;
	progress_draw(p, t);
}

void progress_end(struct progress *p)
{
	if (p->on && p->last > p->start) {
		progress_draw(p, now());
		fputc('\n', stderr);
	}
}

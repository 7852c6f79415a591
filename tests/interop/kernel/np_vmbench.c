/* np-vmbench: small benchmark run inside the VM on a 9P mount. It measures
 * request-bound work (small writes, stat) in operations per second and bulk
 * transfer (sequential write and read) in MB/s, and prints one line per
 * measurement: BENCH <name> <value> <unit>.
 *
 * usage: np-vmbench DIR [-n small-ops] [-s bulk-MiB] */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void fail(const char *what)
{
	fprintf(stderr, "np-vmbench: %s: %s\n", what, strerror(errno));
	exit(1);
}

static void small_writes(const char *dir, size_t size, long n)
{
	char path[4096], name[32];
	snprintf(name, sizeof(name), "write%zu", size);
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	if (fd < 0)
		fail(path);
	char buf[4096];
	memset(buf, 'w', sizeof(buf));
	double t = now();
	for (long i = 0; i < n; i++)
		if (pwrite(fd, buf, size, (off_t)(i * (long)size)) != (ssize_t)size)
			fail("pwrite");
	t = now() - t;
	close(fd);
	unlink(path);
	printf("BENCH %s %.0f ops/s\n", name, (double)n / t);
}

static void stats(const char *dir, long n)
{
	char path[4096];
	snprintf(path, sizeof(path), "%s/statme", dir);
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	if (fd < 0)
		fail(path);
	close(fd);
	struct stat st;
	double t = now();
	for (long i = 0; i < n; i++)
		if (stat(path, &st) != 0)
			fail("stat");
	t = now() - t;
	unlink(path);
	printf("BENCH stat %.0f ops/s\n", (double)n / t);
}

static void bulk(const char *dir, long mib)
{
	char path[4096];
	snprintf(path, sizeof(path), "%s/bulk", dir);
	const size_t chunk = 1 << 20;
	char *buf = malloc(chunk);
	if (!buf)
		fail("malloc");
	memset(buf, 'b', chunk);
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	if (fd < 0)
		fail(path);
	double t = now();
	for (long i = 0; i < mib; i++)
		if (write(fd, buf, chunk) != (ssize_t)chunk)
			fail("write");
	if (fsync(fd) != 0)
		fail("fsync");
	t = now() - t;
	close(fd);
	printf("BENCH seqwrite %.1f MB/s\n", (double)mib * 1.048576 / t);
	fd = open(path, O_RDONLY);
	if (fd < 0)
		fail(path);
	t = now();
	ssize_t r;
	long total = 0;
	while ((r = read(fd, buf, chunk)) > 0)
		total += r;
	if (r < 0)
		fail("read");
	t = now() - t;
	close(fd);
	unlink(path);
	if (total != mib * (long)chunk) {
		fprintf(stderr, "np-vmbench: read back %ld bytes, want %ld\n", total, mib * (long)chunk);
		exit(1);
	}
	printf("BENCH seqread %.1f MB/s\n", (double)mib * 1.048576 / t);
	free(buf);
}

int main(int argc, char **argv)
{
	long n = 2000, mib = 32;
	const char *dir = NULL;
	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "-n") == 0 && i + 1 < argc)
			n = atol(argv[++i]);
		else if (strcmp(argv[i], "-s") == 0 && i + 1 < argc)
			mib = atol(argv[++i]);
		else if (!dir && argv[i][0] != '-')
			dir = argv[i];
		else
			dir = NULL, i = argc;
	}
	if (!dir || n <= 0 || mib <= 0) {
		fprintf(stderr, "usage: np-vmbench DIR [-n small-ops] [-s bulk-MiB]\n");
		return 2;
	}
	small_writes(dir, 4096, n);
	small_writes(dir, 32, n);
	stats(dir, n);
	bulk(dir, mib);
	return 0;
}

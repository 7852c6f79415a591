/* np-fsx: random-operation data integrity checker in the spirit of fsx.
 * It applies writes, truncates, reads, mmap reads and writes, fsyncs and
 * reopens to one file, mirrors every change in an in-memory model, and checks
 * each read (and the file size) against the model. The run is a pure
 * function of the seed, so a failure replays with the same -S. */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

enum op_kind { OP_WRITE, OP_TRUNCATE, OP_READ, OP_MAPREAD, OP_MAPWRITE, OP_FSYNC, OP_REOPEN, OP_KINDS };

static const char *const op_names[OP_KINDS] = {"write", "truncate", "read", "mapread", "mapwrite", "fsync",
					       "reopen"};

struct op_rec {
	unsigned long n;
	enum op_kind kind;
	uint64_t off, len;
	uint64_t size_after;
};

#define LOG_SIZE 64

struct fsx {
	const char *path;
	int fd;
	uint64_t rng;
	uint64_t maxlen, maxop;
	bool mmap_ok;
	unsigned char *model;   /* expected contents, maxlen bytes */
	unsigned char *scratch; /* read buffer and new data */
	uint64_t size;          /* expected file size */
	struct op_rec log[LOG_SIZE];
	unsigned long nops;
	size_t page;
};

/* splitmix64: small, fast, and fully determined by the seed. */
static uint64_t rnd(struct fsx *f)
{
	uint64_t z = (f->rng += 0x9e3779b97f4a7c15ull);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

/* New data for writes: eight random bytes per draw. */
static void fill_random(struct fsx *f, unsigned char *buf, uint64_t len)
{
	for (uint64_t i = 0; i < len; i += 8) {
		uint64_t r = rnd(f);
		memcpy(buf + i, &r, len - i < 8 ? len - i : 8);
	}
}

static uint64_t rnd_below(struct fsx *f, uint64_t n)
{
	return n ? rnd(f) % n : 0;
}

static void dump_log(const struct fsx *f)
{
	unsigned long first = f->nops > LOG_SIZE ? f->nops - LOG_SIZE : 0;
	fprintf(stderr, "np-fsx: last %lu operations (oldest first):\n", f->nops - first);
	for (unsigned long i = first; i < f->nops; i++) {
		const struct op_rec *r = &f->log[i % LOG_SIZE];
		fprintf(stderr, "  %6lu %-8s off 0x%-8" PRIx64 " len 0x%-6" PRIx64 " size after 0x%" PRIx64 "\n", r->n,
			op_names[r->kind], r->off, r->len, r->size_after);
	}
}

static void die(struct fsx *f, const char *fmt, ...) __attribute__((format(printf, 2, 3), noreturn));
static void die(struct fsx *f, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	fprintf(stderr, "np-fsx: FAIL at op %lu: ", f->nops ? f->nops - 1 : 0);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	va_end(ap);
	dump_log(f);
	exit(1);
}

static void record(struct fsx *f, enum op_kind kind, uint64_t off, uint64_t len)
{
	struct op_rec *r = &f->log[f->nops % LOG_SIZE];
	*r = (struct op_rec){f->nops, kind, off, len, f->size};
	f->nops++;
}

/* Compare LEN bytes read at OFF with the model; report the first mismatch. */
static void check(struct fsx *f, const unsigned char *got, uint64_t off, uint64_t len, const char *how)
{
	if (memcmp(got, f->model + off, len) == 0)
		return;
	uint64_t i = 0;
	while (got[i] == f->model[off + i])
		i++;
	uint64_t bad = i;
	while (bad < len && got[bad] != f->model[off + bad])
		bad++;
	die(f, "%s: data mismatch at file offset 0x%" PRIx64 " (byte %" PRIu64 " of a 0x%" PRIx64
	       "-byte read at 0x%" PRIx64 "): got 0x%02x, expected 0x%02x; %" PRIu64 " bad bytes follow",
	    how, off + i, i, len, off, got[i], f->model[off + i], bad - i);
}

static void check_size(struct fsx *f, const char *when)
{
	struct stat st;
	if (fstat(f->fd, &st) != 0)
		die(f, "fstat %s: %s", when, strerror(errno));
	if ((uint64_t)st.st_size != f->size)
		die(f, "size %s is 0x%llx, expected 0x%" PRIx64, when, (long long)st.st_size, f->size);
}

static void do_write(struct fsx *f, uint64_t off, uint64_t len)
{
	fill_random(f, f->scratch, len);
	record(f, OP_WRITE, off, len);
	uint64_t done = 0;
	while (done < len) {
		ssize_t n = pwrite(f->fd, f->scratch + done, len - done, (off_t)(off + done));
		if (n <= 0)
			die(f, "pwrite 0x%" PRIx64 "+0x%" PRIx64 ": %s", off, len, n < 0 ? strerror(errno) : "wrote 0");
		done += (uint64_t)n;
	}
	/* The model: a gap between the old end and OFF reads as zeros. */
	if (off > f->size)
		memset(f->model + f->size, 0, off - f->size);
	memcpy(f->model + off, f->scratch, len);
	if (off + len > f->size)
		f->size = off + len;
	f->log[(f->nops - 1) % LOG_SIZE].size_after = f->size;
}

static void do_truncate(struct fsx *f, uint64_t size)
{
	record(f, OP_TRUNCATE, size, 0);
	if (ftruncate(f->fd, (off_t)size) != 0)
		die(f, "ftruncate to 0x%" PRIx64 ": %s", size, strerror(errno));
	if (size > f->size)
		memset(f->model + f->size, 0, size - f->size);
	f->size = size;
	f->log[(f->nops - 1) % LOG_SIZE].size_after = f->size;
	check_size(f, "after truncate");
}

static void do_read(struct fsx *f, uint64_t off, uint64_t len)
{
	record(f, OP_READ, off, len);
	uint64_t want = off >= f->size ? 0 : (off + len > f->size ? f->size - off : len);
	uint64_t done = 0;
	for (;;) {
		ssize_t n = pread(f->fd, f->scratch + done, len - done, (off_t)(off + done));
		if (n < 0)
			die(f, "pread 0x%" PRIx64 "+0x%" PRIx64 ": %s", off, len, strerror(errno));
		if (n == 0)
			break;
		done += (uint64_t)n;
		if (done == len)
			break;
	}
	if (done != want)
		die(f, "read 0x%" PRIx64 "+0x%" PRIx64 " returned 0x%" PRIx64 " bytes, expected 0x%" PRIx64
		       " (size 0x%" PRIx64 ")",
		    off, len, done, want, f->size);
	check(f, f->scratch, off, want, "read");
}

static void do_mapread(struct fsx *f, uint64_t off, uint64_t len)
{
	if (f->size == 0)
		return;
	off %= f->size;
	if (off + len > f->size)
		len = f->size - off;
	record(f, OP_MAPREAD, off, len);
	uint64_t pg = off & ~(uint64_t)(f->page - 1);
	size_t maplen = (size_t)(off + len - pg);
	unsigned char *m = mmap(NULL, maplen, PROT_READ, MAP_SHARED, f->fd, (off_t)pg);
	if (m == MAP_FAILED)
		die(f, "mmap read 0x%" PRIx64 "+0x%zx: %s", pg, maplen, strerror(errno));
	check(f, m + (off - pg), off, len, "mapread");
	munmap(m, maplen);
}

static void do_mapwrite(struct fsx *f, uint64_t off, uint64_t len)
{
	/* A mapping cannot extend the file: grow it first, as fsx does. */
	if (off + len > f->size) {
		if (ftruncate(f->fd, (off_t)(off + len)) != 0)
			die(f, "ftruncate before mapwrite: %s", strerror(errno));
		memset(f->model + f->size, 0, off + len - f->size);
		f->size = off + len;
	}
	record(f, OP_MAPWRITE, off, len);
	fill_random(f, f->scratch, len);
	uint64_t pg = off & ~(uint64_t)(f->page - 1);
	size_t maplen = (size_t)(off + len - pg);
	unsigned char *m = mmap(NULL, maplen, PROT_READ | PROT_WRITE, MAP_SHARED, f->fd, (off_t)pg);
	if (m == MAP_FAILED)
		die(f, "mmap write 0x%" PRIx64 "+0x%zx: %s", pg, maplen, strerror(errno));
	memcpy(m + (off - pg), f->scratch, len);
	if (msync(m, maplen, MS_SYNC) != 0)
		die(f, "msync: %s", strerror(errno));
	munmap(m, maplen);
	memcpy(f->model + off, f->scratch, len);
}

static void do_reopen(struct fsx *f)
{
	record(f, OP_REOPEN, 0, 0);
	if (close(f->fd) != 0)
		die(f, "close: %s", strerror(errno));
	f->fd = open(f->path, O_RDWR);
	if (f->fd < 0)
		die(f, "reopen: %s", strerror(errno));
	check_size(f, "after reopen");
}

static void full_check(struct fsx *f, const char *when)
{
	check_size(f, when);
	for (uint64_t off = 0; off < f->size; off += f->maxop) {
		uint64_t len = f->size - off < f->maxop ? f->size - off : f->maxop;
		do_read(f, off, len);
	}
}

static void usage(void)
{
	fprintf(stderr, "usage: np-fsx FILE|DIR [-N ops] [-S seed] [-l maxlen] [-o maxoplen] [--no-mmap]\n");
	exit(2);
}

static uint64_t parse_num(const char *s)
{
	char *end;
	errno = 0;
	unsigned long long v = strtoull(s, &end, 0);
	if (errno || *end || end == s)
		usage();
	return v;
}

int main(int argc, char **argv)
{
	struct fsx f = {.maxlen = 256 * 1024, .maxop = 64 * 1024, .mmap_ok = true};
	unsigned long nops = 10000;
	uint64_t seed = 1;
	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "-N") == 0 && i + 1 < argc)
			nops = (unsigned long)parse_num(argv[++i]);
		else if (strcmp(argv[i], "-S") == 0 && i + 1 < argc)
			seed = parse_num(argv[++i]);
		else if (strcmp(argv[i], "-l") == 0 && i + 1 < argc)
			f.maxlen = parse_num(argv[++i]);
		else if (strcmp(argv[i], "-o") == 0 && i + 1 < argc)
			f.maxop = parse_num(argv[++i]);
		else if (strcmp(argv[i], "--no-mmap") == 0)
			f.mmap_ok = false;
		else if (argv[i][0] == '-' || f.path)
			usage();
		else
			f.path = argv[i];
	}
	if (!f.path || f.maxlen == 0 || f.maxop == 0 || f.maxop > f.maxlen)
		usage();
	f.rng = seed;
	f.page = (size_t)sysconf(_SC_PAGESIZE);
	f.model = calloc(f.maxlen, 1);
	f.scratch = malloc(f.maxop);
	if (!f.model || !f.scratch) {
		fprintf(stderr, "np-fsx: out of memory\n");
		return 2;
	}
	/* A directory argument gets a private file, so parallel runs never collide. */
	static char own[PATH_MAX];
	struct stat dst;
	if (stat(f.path, &dst) == 0 && S_ISDIR(dst.st_mode)) {
		int n = snprintf(own, sizeof(own), "%s/np-fsx.%d", f.path, (int)getpid());
		if (n < 0 || n >= (int)sizeof(own))
			usage();
		f.path = own;
	}
	f.fd = open(f.path, O_RDWR | O_CREAT | O_TRUNC, 0644);
	if (f.fd < 0) {
		fprintf(stderr, "np-fsx: cannot create %s: %s\n", f.path, strerror(errno));
		return 2;
	}

	/* Weights: mostly data movement, with structure changes mixed in. */
	static const struct {
		enum op_kind kind;
		unsigned weight;
	} mix[] = {{OP_WRITE, 30}, {OP_READ, 25}, {OP_TRUNCATE, 8}, {OP_MAPREAD, 12},
		   {OP_MAPWRITE, 12}, {OP_FSYNC, 4}, {OP_REOPEN, 3}};
	unsigned total = 0;
	for (size_t i = 0; i < sizeof(mix) / sizeof(mix[0]); i++)
		total += mix[i].weight;

	for (unsigned long n = 0; n < nops; n++) {
		unsigned pick = (unsigned)rnd_below(&f, total);
		enum op_kind kind = OP_WRITE;
		for (size_t i = 0; i < sizeof(mix) / sizeof(mix[0]); i++) {
			if (pick < mix[i].weight) {
				kind = mix[i].kind;
				break;
			}
			pick -= mix[i].weight;
		}
		/* Offsets and lengths are drawn even when unused so that the
		 * random stream does not depend on --no-mmap. */
		uint64_t len = 1 + rnd_below(&f, f.maxop);
		uint64_t off = rnd_below(&f, f.maxlen - len + 1);
		switch (kind) {
		case OP_WRITE:
			do_write(&f, off, len);
			break;
		case OP_READ:
			do_read(&f, f.size ? off % (f.size + 1) : 0, len);
			break;
		case OP_TRUNCATE:
			do_truncate(&f, rnd_below(&f, f.maxlen + 1));
			break;
		case OP_MAPREAD:
			if (f.mmap_ok)
				do_mapread(&f, off, len);
			else
				do_read(&f, f.size ? off % (f.size + 1) : 0, len);
			break;
		case OP_MAPWRITE:
			if (f.mmap_ok)
				do_mapwrite(&f, off, len);
			else
				do_write(&f, off, len);
			break;
		case OP_FSYNC:
			record(&f, OP_FSYNC, 0, 0);
			if (fsync(f.fd) != 0)
				die(&f, "fsync: %s", strerror(errno));
			break;
		case OP_REOPEN:
			do_reopen(&f);
			break;
		case OP_KINDS:
			break;
		}
	}
	full_check(&f, "at the end");
	close(f.fd);
	unlink(f.path);
	printf("np-fsx: %lu operations passed (seed %" PRIu64 ", final size 0x%" PRIx64 "%s)\n", nops, seed, f.size,
	       f.mmap_ok ? "" : ", no mmap");
	free(f.model);
	free(f.scratch);
	return 0;
}

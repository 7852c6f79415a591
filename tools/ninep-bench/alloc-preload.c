/* A counting allocator for --alloc: LD_PRELOADed into a spawned server, it
 * forwards to glibc's allocator and counts calls in a page shared with
 * ninep-bench (a file named by NB_ALLOC_FILE), which reads the counters
 * before and after each run.  [0] allocations, [1] frees, [2] bytes. */
#include <fcntl.h>
#include <malloc.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

extern void *__libc_malloc(size_t n);
extern void *__libc_calloc(size_t n, size_t m);
extern void *__libc_realloc(void *p, size_t n);
extern void *__libc_memalign(size_t a, size_t n);
extern void __libc_free(void *p);

static uint64_t early[3];            /* before the constructor ran */
static uint64_t *ctr = early;

__attribute__((constructor)) static void nb_alloc_init(void)
{
	const char *path = getenv("NB_ALLOC_FILE");
	if (!path)
		return;
	int fd = open(path, O_RDWR | O_CLOEXEC);
	if (fd < 0)
		return;
	void *p = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	close(fd);
	if (p != MAP_FAILED)
		ctr = p;
}

static void count(size_t n)
{
	__atomic_fetch_add(&ctr[0], 1, __ATOMIC_RELAXED);
	__atomic_fetch_add(&ctr[2], n, __ATOMIC_RELAXED);
}

void *malloc(size_t n)
{
	count(n);
	return __libc_malloc(n);
}

void *calloc(size_t n, size_t m)
{
	count(n * m);
	return __libc_calloc(n, m);
}

void *realloc(void *p, size_t n)
{
	count(n);
	if (p)
		__atomic_fetch_add(&ctr[1], 1, __ATOMIC_RELAXED);
	return __libc_realloc(p, n);
}

void free(void *p)
{
	if (p)
		__atomic_fetch_add(&ctr[1], 1, __ATOMIC_RELAXED);
	__libc_free(p);
}

void *memalign(size_t a, size_t n)
{
	count(n);
	return __libc_memalign(a, n);
}

void *aligned_alloc(size_t a, size_t n)
{
	return memalign(a, n);
}

int posix_memalign(void **out, size_t a, size_t n)
{
	if (a < sizeof(void *) || (a & (a - 1)))
		return 22; /* EINVAL */
	void *p = memalign(a, n);
	if (!p)
		return 12; /* ENOMEM */
	*out = p;
	return 0;
}

void *valloc(size_t n)
{
	return memalign((size_t)sysconf(_SC_PAGESIZE), n);
}

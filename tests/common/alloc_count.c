/* Counting allocator for zero-allocation tests (see alloc_count.h). */
#include "alloc_count.h"

#include <errno.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdlib.h>

static _Atomic uint64_t allocs, frees;

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define ALLOC_COUNT_SANITIZER 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer) || \
	__has_feature(memory_sanitizer)
#define ALLOC_COUNT_SANITIZER 1
#endif
#endif

static void count_alloc(void)
{
	atomic_fetch_add_explicit(&allocs, 1, memory_order_relaxed);
}

static void count_free(void)
{
	atomic_fetch_add_explicit(&frees, 1, memory_order_relaxed);
}

#ifdef ALLOC_COUNT_SANITIZER

/* The sanitizer runtime owns malloc (defining it here would bypass its
 * allocator); it offers hooks on every allocation and release instead.
 * Declared here because gcc does not ship <sanitizer/allocator_interface.h>. */
int __sanitizer_install_malloc_and_free_hooks(void (*malloc_hook)(const volatile void *, size_t),
					      void (*free_hook)(const volatile void *));

static bool hooks_installed;

static void malloc_hook(const volatile void *p, size_t n)
{
	(void)p;
	(void)n;
	count_alloc();
}

static void free_hook(const volatile void *p)
{
	if (p)
		count_free();
}

__attribute__((constructor)) static void alloc_count_install(void)
{
	hooks_installed = __sanitizer_install_malloc_and_free_hooks(malloc_hook, free_hook) != 0;
}

static bool alloc_count_hooked(void)
{
	return hooks_installed;
}

#else

#include <malloc.h>

/* glibc's allocator under its exported internal names: what the public
 * names would have resolved to without this file. */
extern void *__libc_malloc(size_t n);
extern void *__libc_calloc(size_t nmemb, size_t n);
extern void *__libc_realloc(void *p, size_t n);
extern void *__libc_memalign(size_t align, size_t n);
extern void *__libc_valloc(size_t n);
extern void __libc_free(void *p);

void *malloc(size_t n)
{
	count_alloc();
	return __libc_malloc(n);
}

void *calloc(size_t nmemb, size_t n)
{
	count_alloc();
	return __libc_calloc(nmemb, n);
}

void *realloc(void *p, size_t n)
{
	count_alloc();
	return __libc_realloc(p, n);
}

void free(void *p)
{
	if (p)
		count_free();
	__libc_free(p);
}

void *memalign(size_t align, size_t n)
{
	count_alloc();
	return __libc_memalign(align, n);
}

void *aligned_alloc(size_t align, size_t n)
{
	count_alloc();
	return __libc_memalign(align, n);
}

void *valloc(size_t n)
{
	count_alloc();
	return __libc_valloc(n);
}

int posix_memalign(void **out, size_t align, size_t n)
{
	void *p;

	if (align < sizeof(void *) || (align & (align - 1)))
		return EINVAL;
	count_alloc();
	p = __libc_memalign(align, n);
	if (!p)
		return ENOMEM;
	*out = p;
	return 0;
}

static bool alloc_count_hooked(void)
{
	return true;
}

#endif

/* Prove the counter moves rather than trust the build: Valgrind, for one,
 * replaces malloc even when the executable defines it. */
bool alloc_count_active(void)
{
	void *(*volatile do_malloc)(size_t) = malloc;
	uint64_t before = atomic_load(&allocs);
	void *p;
	bool moved;

	if (!alloc_count_hooked())
		return false;
	p = do_malloc(1);
	moved = atomic_load(&allocs) != before;
	free(p);
	return moved;
}

void alloc_count_snapshot(struct alloc_count *out)
{
	out->allocs = atomic_load_explicit(&allocs, memory_order_relaxed);
	out->frees = atomic_load_explicit(&frees, memory_order_relaxed);
}

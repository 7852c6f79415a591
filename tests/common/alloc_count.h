/* Counting allocator for zero-allocation tests.
 *
 * Linking alloc_count.c into a test executable counts every heap allocation
 * and release made by the whole process (all threads, the library included):
 *   - normal builds: malloc/calloc/realloc/free/posix_memalign/aligned_alloc/
 *     memalign are defined here and forward to glibc's __libc_* entry points;
 *   - ASan/TSan builds: the sanitizer owns malloc, so its allocator hooks
 *     (__sanitizer_install_malloc_and_free_hooks) count instead.
 * Counters are process-wide atomics: take a snapshot before and after the
 * code under test and compare.  Typical use:
 *
 *     struct alloc_count a, b;
 *     assert_true(alloc_count_active());
 *     alloc_count_snapshot(&a);
 *     ... 100,000 requests ...
 *     alloc_count_snapshot(&b);
 *     assert_int_equal(b.allocs - a.allocs, 0);
 */
#ifndef NINEP_TESTS_ALLOC_COUNT_H
#define NINEP_TESTS_ALLOC_COUNT_H

#include <stdbool.h>
#include <stdint.h>

struct alloc_count {
	uint64_t allocs; /* malloc, calloc, realloc, aligned allocations */
	uint64_t frees;  /* free of a non-NULL pointer */
};

/* Whether counting works here, checked by making an allocation and seeing it
 * counted (false under Valgrind, which replaces malloc even in the
 * executable, or if the sanitizer refused the hooks).  A test should skip
 * rather than pass vacuously when false. */
bool alloc_count_active(void);
void alloc_count_snapshot(struct alloc_count *out);

#endif

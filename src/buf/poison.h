/* Internal: debug-mode handling of a buffer's storage while it is cached.
 *
 * With NP_BUF_DEBUG, a returned buffer's storage is filled with a pattern and
 * made inaccessible to AddressSanitizer (and Valgrind when its headers are
 * available); np_buf_get() makes it accessible again and checks the pattern,
 * so a write after free is caught either at the write (ASan, Valgrind) or at
 * the next reuse (pattern).  Only the storage is ever poisoned: the np_buf
 * header, whose `next` links the free lists and the remote-return stack,
 * stays accessible.  Without NP_BUF_DEBUG every helper compiles to nothing. */
#ifndef NP_BUF_POISON_H
#define NP_BUF_POISON_H

#include <stddef.h>
#include <stdint.h>

#include "ninep/buf.h"

#if defined(__SANITIZE_ADDRESS__)
#define NP_BUF_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define NP_BUF_ASAN 1
#endif
#endif

#ifdef NP_BUF_DEBUG

#define NP_BUF_PATTERN 0xDBu

#ifdef NP_BUF_ASAN
#include <sanitizer/asan_interface.h>
#define NP_BUF_NOACCESS(p, n) ASAN_POISON_MEMORY_REGION((p), (n))
#define NP_BUF_ACCESS(p, n) ASAN_UNPOISON_MEMORY_REGION((p), (n))
#elif defined(__has_include)
#if __has_include(<valgrind/memcheck.h>)
#include <valgrind/memcheck.h>
#define NP_BUF_NOACCESS(p, n) ((void)VALGRIND_MAKE_MEM_NOACCESS((p), (n)))
#define NP_BUF_ACCESS(p, n) ((void)VALGRIND_MAKE_MEM_DEFINED((p), (n)))
#endif
#endif
#ifndef NP_BUF_NOACCESS
#define NP_BUF_NOACCESS(p, n) ((void)(p), (void)(n))
#define NP_BUF_ACCESS(p, n) ((void)(p), (void)(n))
#endif

/* The buffer is being returned: fill and hide its storage. */
void np_buf_poison(np_buf *b);
/* The buffer is handed out again: expose its storage and abort if the
 * pattern was disturbed while it was cached. */
void np_buf_unpoison_check(np_buf *b);
/* The buffer goes back to the heap: expose its storage so the allocator
 * (and ASan's own bookkeeping) may touch it again. */
static inline void np_buf_unpoison(np_buf *b)
{
	NP_BUF_ACCESS(b->data, b->cap);
}

#else

static inline void np_buf_poison(np_buf *b)
{
	(void)b;
}
static inline void np_buf_unpoison_check(np_buf *b)
{
	(void)b;
}
static inline void np_buf_unpoison(np_buf *b)
{
	(void)b;
}

#endif
#endif

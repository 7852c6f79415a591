/* Debug-mode pattern fill and check of cached buffers (see poison.h). */
#include "poison.h"

#ifdef NP_BUF_DEBUG

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void np_buf_poison(np_buf *b)
{
	memset(b->data, NP_BUF_PATTERN, b->cap);
	NP_BUF_NOACCESS(b->data, b->cap);
}

/* First byte differing from the pattern, or cap.  Word-wise in the common
 * case: this runs on every get of a debug build, over up to msize bytes. */
static size_t np_buf_pattern_mismatch(const uint8_t *p, size_t n)
{
	const uint64_t word = 0x0101010101010101ull * NP_BUF_PATTERN;
	size_t i = 0;

	for (; i + 8 <= n; i += 8) {
		uint64_t w;
		memcpy(&w, p + i, 8);
		if (w != word)
			break;
	}
	for (; i < n; i++)
		if (p[i] != NP_BUF_PATTERN)
			return i;
	return n;
}

void np_buf_unpoison_check(np_buf *b)
{
	size_t at;

	NP_BUF_ACCESS(b->data, b->cap);
	at = np_buf_pattern_mismatch(b->data, b->cap);
	if (at == b->cap)
		return;
	fprintf(stderr,
		"ninep: np_buf %p (cap %u, %s class) was written after it was returned: "
		"byte %zu is 0x%02x, expected 0x%02x (write after free)\n",
		(void *)b, b->cap, b->cls ? "large" : "small", at, b->data[at], NP_BUF_PATTERN);
	abort();
}

#else
/* ISO C wants at least one declaration in a translation unit. */
typedef int np_buf_poison_unused;
#endif

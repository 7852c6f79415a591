/* Wire frames written out byte by byte from the protocol documents (Plan 9
 * manual section 5, the 9P2000.u draft, diod's protocol.md, the type numbers
 * of Linux include/net/9p/9p.h), not produced by our encoder. */
#ifndef NP_TEST_GOLDEN_FRAMES_H
#define NP_TEST_GOLDEN_FRAMES_H

#include <stddef.h>
#include <stdint.h>

#include "ninep/proto.h"

struct golden_frame {
	const char *name; /* unique, e.g. "Twalk" or "Rerror.u" */
	enum np_dialect dialect;
	const uint8_t *bytes;
	size_t len;
};

extern const struct golden_frame golden_frames[];
extern const size_t golden_nframes;

/* The frame called name, or NULL. */
const struct golden_frame *golden_find(const char *name);

#endif

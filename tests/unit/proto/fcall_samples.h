/* Sample messages of every type, filled field by field (not by the codec), for
 * the round-trip and size tests, the fuzz seed corpus and the benchmark. */
#ifndef NP_TEST_FCALL_SAMPLES_H
#define NP_TEST_FCALL_SAMPLES_H

#include <stddef.h>
#include <stdint.h>

#include "ninep/proto.h"

/* Every message type the codec knows, 9P2000 first, then 9P2000.L. */
extern const uint8_t fcall_types[];
extern const size_t fcall_ntypes;

/* Variants: 0 typical values, 1 extremes (all-ones integers, NOTAG, 16 walk
 * elements, 300-byte strings, large payloads), 2 minimal (zeros, empty
 * strings where the protocol allows them, empty payloads). */
#define FCALL_NVARIANTS 3

/* Fill *f with variant `variant` of message `type`.  Strings and payloads
 * point at static storage.  Returns 0, or -1 for an unknown type. */
int fcall_sample(uint8_t type, int variant, np_fcall *f);

/* Does `type` exist in dialect d (independently of np_type_valid)? */
int fcall_type_in_dialect(uint8_t type, enum np_dialect d);

#endif

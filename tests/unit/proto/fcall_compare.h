/* Field-by-field comparison of two messages, independent of the codec. */
#ifndef NP_TEST_FCALL_COMPARE_H
#define NP_TEST_FCALL_COMPARE_H

#include "ninep/proto.h"

/* NULL when a and b carry the same message as seen on the wire in dialect d
 * (fields that dialect does not transmit are ignored), else the name of the
 * first field that differs. */
const char *fcall_diff(const np_fcall *a, const np_fcall *b, enum np_dialect d);

#endif

/* Internal: validation of one reply frame against the request it answers.
 * Kept apart from the connection engine so that a fuzz target can feed it
 * raw bytes without a socket. */
#ifndef NP_CLIENT_REPLY_H
#define NP_CLIENT_REPLY_H

#include <stddef.h>
#include <stdint.h>

#include "ninep/proto.h"

/* What a reply must agree with: the request's type and its counts. */
struct np_expect {
	uint8_t ttype;    /* the T-message type */
	uint16_t nwname;  /* Twalk */
	uint32_t count;   /* Tread/Treaddir/Twrite */
};

void np_expect_from(struct np_expect *ex, const np_fcall *t);

/* Decode the frame buf[0..len) as the reply to ex in dialect d at msize and
 * check it: the type is the request's R-type or an error reply, and counts
 * stay within what was asked (Rread/Rreaddir count <= Tread count, Rwrite
 * count <= Twrite count, 1 <= Rwalk nwqid <= nwname when nwname > 0, none when
 * 0).  Returns 0 with *rc filled (rc may be an Rlerror/Rerror) or -EPROTO.
 * Never reads outside buf[0..len). */
int np_client_parse_reply(const uint8_t *buf, size_t len, enum np_dialect d, uint32_t msize,
			  const struct np_expect *ex, np_fcall *rc);

/* The errno of an error reply (Rlerror, or Rerror: its ecode in .u/.L when
 * non-zero, else np_strerrno of the message), 0 for any other reply. */
int np_reply_errno(const np_fcall *rc, enum np_dialect d);

#endif

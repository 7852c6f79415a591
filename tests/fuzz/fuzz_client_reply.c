/* libFuzzer target for the client's reply checks (np_client_parse_reply).
 *
 * Input: an 8-byte header, then the reply frame.
 *   byte 0     bits 0-1 dialect (3 also means 9P2000.L), bits 2-3 msize:
 *              65536, 8192, 4096, 64
 *   byte 1     the request's type (any byte: a client bug could ask anything)
 *   bytes 2-3  Twalk nwname (little-endian)
 *   bytes 4-7  Tread/Treaddir/Twrite count
 * The expectation comes from np_expect_from() on that request.  The reply is
 * copied into a buffer of its own size so ASan sees any read outside it.  A
 * refused reply must be refused with -EPROTO; an accepted one must be a whole
 * frame within msize, the request's R-type or an error reply of a meaningful
 * errno, stay within the counts asked for (Rread/Rreaddir/Rwrite count,
 * Rwalk nwqid), and every view it holds must point inside the frame. */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "client/reply.h"
#include "ninep/proto.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define HDR 8

static void die(const char *what, const np_fcall *rc, enum np_dialect d)
{
	char line[512] = "";
	if (rc)
		np_fcall_format(line, sizeof line, rc, d);
	fprintf(stderr, "fuzz-client-reply: %s (%s): %s\n", what, np_dialect_name(d), line);
	abort();
}

static int inside(const void *p, size_t n, const uint8_t *buf, size_t len)
{
	const uint8_t *q = p;
	if (n == 0)
		return 1;
	return q >= buf && q <= buf + len && n <= (size_t)(buf + len - q);
}

static void check_str(np_str s, const uint8_t *buf, size_t len, const np_fcall *rc,
		      enum np_dialect d)
{
	if (!inside(s.s, s.len, buf, len))
		die("a string points outside the frame", rc, d);
}

static void check_views(const np_fcall *rc, enum np_dialect d, const uint8_t *buf, size_t len)
{
	switch (rc->type) {
	case NP_RVERSION:
		check_str(rc->version.version, buf, len, rc, d);
		break;
	case NP_RERROR:
		check_str(rc->rerror.ename, buf, len, rc, d);
		break;
	case NP_RREAD:
	case NP_RREADDIR:
		if (!inside(rc->rread.data, rc->rread.count, buf, len))
			die("Rread data outside the frame", rc, d);
		break;
	case NP_RREADLINK:
		check_str(rc->rreadlink.target, buf, len, rc, d);
		break;
	case NP_RGETLOCK:
		check_str(rc->rgetlock.client_id, buf, len, rc, d);
		break;
	case NP_RSTAT:
		check_str(rc->rstat.stat.name, buf, len, rc, d);
		check_str(rc->rstat.stat.uid, buf, len, rc, d);
		check_str(rc->rstat.stat.gid, buf, len, rc, d);
		check_str(rc->rstat.stat.muid, buf, len, rc, d);
		check_str(rc->rstat.stat.extension, buf, len, rc, d);
		break;
	default:
		break;
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const uint32_t msizes[] = {65536, 8192, 4096, 64};
	if (size < HDR)
		return 0;
	enum np_dialect d = (data[0] & 3) == 3 ? NP_9P2000L : (enum np_dialect)(data[0] & 3);
	uint32_t msize = msizes[(data[0] >> 2) & 3];
	np_fcall t;
	memset(&t, 0, sizeof t);
	t.type = data[1];
	uint16_t nwname = (uint16_t)(data[2] | data[3] << 8);
	uint32_t count = (uint32_t)data[4] | (uint32_t)data[5] << 8 | (uint32_t)data[6] << 16 |
			 (uint32_t)data[7] << 24;
	if (t.type == NP_TWALK)
		t.twalk.nwname = nwname;
	else if (t.type == NP_TWRITE)
		t.twrite.count = count;
	else
		t.tread.count = count;

	struct np_expect ex;
	np_expect_from(&ex, &t);
	if (ex.ttype != t.type ||
	    ex.nwname != (t.type == NP_TWALK ? nwname : 0) ||
	    ex.count != (t.type == NP_TREAD || t.type == NP_TREADDIR || t.type == NP_TWRITE ? count : 0))
		die("np_expect_from lost or invented a field", NULL, d);

	size_t len = size - HDR;
	uint8_t *buf = malloc(len ? len : 1);
	if (!buf)
		abort();
	memcpy(buf, data + HDR, len);
	np_fcall rc;
	int r = np_client_parse_reply(buf, len, d, msize, &ex, &rc);
	if (r != 0) {
		if (r != -EPROTO)
			die("refused with something other than -EPROTO", NULL, d);
		free(buf);
		return 0;
	}

	if (len < NP_HDRSZ || np_frame_size(buf) != len || len > msize)
		die("accepted a frame that is not whole or exceeds msize", &rc, d);
	if (rc.type != buf[4] || rc.tag != (uint16_t)(buf[5] | buf[6] << 8))
		die("type or tag differ from the frame's", &rc, d);
	int e = np_reply_errno(&rc, d);
	if (rc.type == NP_RLERROR || rc.type == NP_RERROR) {
		if (e < 1 || e > 4095)
			die("an error reply that maps to no errno", &rc, d);
	} else {
		if (e != 0)
			die("a non-error reply with an errno", &rc, d);
		if ((unsigned)ex.ttype + 1 != rc.type)
			die("accepted a reply of another type", &rc, d);
	}
	switch (rc.type) {
	case NP_RREAD:
	case NP_RREADDIR:
		if (rc.rread.count > ex.count)
			die("accepted more data than asked for", &rc, d);
		break;
	case NP_RWRITE:
		if (rc.rwrite.count > ex.count)
			die("accepted a write of more than was sent", &rc, d);
		break;
	case NP_RWALK:
		if (rc.rwalk.nwqid > ex.nwname || rc.rwalk.nwqid > NP_MAXWELEM ||
		    (ex.nwname > 0 && rc.rwalk.nwqid == 0))
			die("accepted an Rwalk inconsistent with nwname", &rc, d);
		break;
	default:
		break;
	}
	check_views(&rc, d, buf, len);
	if (rc.type == NP_RREADDIR) {
		/* the client walks the entries next: they must be whole */
		uint32_t pos = 0;
		np_dirent de;
		int k;
		while ((k = np_dirent_next(rc.rread.data, rc.rread.count, &pos, &de)) == 1)
			if (!inside(de.name.s, de.name.len, buf, len))
				die("a directory entry name outside the frame", &rc, d);
		if (k != 0 || pos != rc.rread.count)
			die("accepted an Rreaddir with a broken entry", &rc, d);
	}
	char line[256];
	if (np_fcall_format(line, sizeof line, &rc, d) <= 0)
		die("cannot format an accepted reply", &rc, d);
	free(buf);
	return 0;
}

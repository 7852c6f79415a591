/* Reply validation: everything a client must check before trusting a reply. */
#include <errno.h>
#include <string.h>

#include "client/reply.h"

void np_expect_from(struct np_expect *ex, const np_fcall *t)
{
	memset(ex, 0, sizeof *ex);
	ex->ttype = t->type;
	switch (t->type) {
	case NP_TWALK:
		ex->nwname = t->twalk.nwname;
		break;
	case NP_TREAD:
	case NP_TREADDIR:
		ex->count = t->tread.count;
		break;
	case NP_TWRITE:
		ex->count = t->twrite.count;
		break;
	default:
		break;
	}
}

int np_client_parse_reply(const uint8_t *buf, size_t len, enum np_dialect d, uint32_t msize,
			  const struct np_expect *ex, np_fcall *rc)
{
	if (np_decode(buf, len, d, msize, rc, NULL) < 0)
		return -EPROTO;
	if (rc->type == NP_RLERROR || rc->type == NP_RERROR)
		return 0;
	if (rc->type != ex->ttype + 1)
		return -EPROTO;
	switch (rc->type) {
	case NP_RREAD:
	case NP_RREADDIR:
		if (rc->rread.count > ex->count)
			return -EPROTO;
		break;
	case NP_RWRITE:
		if (rc->rwrite.count > ex->count)
			return -EPROTO;
		break;
	case NP_RWALK:
		if (rc->rwalk.nwqid > ex->nwname || (ex->nwname > 0 && rc->rwalk.nwqid == 0))
			return -EPROTO;
		break;
	default:
		break;
	}
	return 0;
}

int np_reply_errno(const np_fcall *rc, enum np_dialect d)
{
	int e;
	if (rc->type == NP_RLERROR)
		e = (int)rc->rlerror.ecode;
	else if (rc->type == NP_RERROR)
		e = (d != NP_9P2000 && rc->rerror.ecode) ? (int)rc->rerror.ecode
							  : np_strerrno(rc->rerror.ename);
	else
		return 0;
	/* A server error of 0 or an absurd value must still read as failure. */
	if (e <= 0 || e > 4095)
		e = EIO;
	return e;
}

/* Buffer size of a message before it is encoded, so the cache can pick the
 * size class first (the user-space analogue of the kernel's p9_msg_buf_size):
 * only data-carrying messages need an msize buffer. */
#include "ninep/buf.h"

/* Longest symlink target a Rreadlink carries (Linux PATH_MAX). */
#define NP_READLINK_MAX 4096u

static size_t np_cap_msize(size_t n, uint32_t msize)
{
	return msize && n > msize ? msize : n;
}

size_t np_msg_bufsize(const np_fcall *f, enum np_dialect d, uint32_t msize)
{
	long n;

	switch (f->type) {
	/* The hot, payload-carrying messages: header plus count, no walk. */
	case NP_TWRITE:
		return np_cap_msize((size_t)NP_TWRITE_DATA + f->twrite.count, msize);
	case NP_RREAD:
	case NP_RREADDIR:
		return np_cap_msize((size_t)NP_RREAD_DATA + f->rread.count, msize);
	default:
		break;
	}
	n = np_fcall_size(f, d);
	/* Not encodable: np_encode() will say -EINVAL whatever the buffer, so a
	 * small one is enough to let it. */
	if (n < 0)
		return np_cap_msize(NP_BUF_SMALL, msize);
	/* Over msize the message cannot be sent on this connection; an msize
	 * buffer lets np_encode() report -EMSGSIZE instead of np_buf_get()
	 * failing as if the heap were exhausted. */
	return np_cap_msize((size_t)n, msize);
}

size_t np_reply_bufsize(const np_fcall *t, uint32_t msize)
{
	size_t n;

	switch (t->type) {
	case NP_TREAD:
	case NP_TREADDIR: {
		/* Rread/Rreaddir: the server never returns more than the iounit. */
		uint32_t room = msize > NP_IOHDRSZ ? msize - NP_IOHDRSZ : 0;
		uint32_t count = t->tread.count < room ? t->tread.count : room;
		n = (size_t)NP_RREAD_DATA + count;
		break;
	}
	case NP_TWALK:
		/* Rwalk: size[4] type[1] tag[2] nwqid[2] nwqid*qid[13] */
		n = NP_HDRSZ + 2 + 13 * (size_t)t->twalk.nwname;
		break;
	case NP_TREADLINK:
		/* Rreadlink: size[4] type[1] tag[2] target[s] */
		n = NP_HDRSZ + 2 + NP_READLINK_MAX;
		break;
	case NP_TGETLOCK:
		/* Rgetlock echoes the client's client_id, which only the request
		 * frame (<= msize) bounds:
		 * size[4] type[1] tag[2] type[1] start[8] length[8] proc_id[4]
		 * client_id[s] */
		n = NP_HDRSZ + 1 + 8 + 8 + 4 + 2 + (size_t)t->tgetlock.client_id.len;
		if (n < NP_BUF_SMALL)
			n = NP_BUF_SMALL;
		break;
	default:
		/* Every other reply is bounded independently of msize: fixed
		 * layouts, or (Rstat, Rversion, Rerror) strings the server
		 * produces itself. */
		n = NP_BUF_SMALL;
		break;
	}
	return np_cap_msize(n, msize);
}

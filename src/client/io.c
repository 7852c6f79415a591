/* Reads and writes: a large transfer is cut into iosize pieces and up to
 * c->pipeline of them are in flight at once; replies are consumed in order
 * so the result is the contiguous prefix the server honoured. */
#include <errno.h>
#include <stdbool.h>
#include <string.h>

#include "client/client_impl.h"

#define NP_PIPE_MAX 64

struct piece {
	np_creq *r;
	size_t pos;
	uint32_t want;
};

/* Reads and writes share one pipeline: they differ only in the request
 * built for a piece and in what is done with the reply's count.  A read
 * fills rbuf, a write sends wbuf. */
static ssize_t transfer(np_cfid *f, bool writing, uint8_t *rbuf,
			const uint8_t *wbuf, size_t count, uint64_t offset)
{
	np_client *c = f->client;
	struct piece q[NP_PIPE_MAX];
	uint32_t iosz = np_cfid_iosize(f);
	unsigned window = c->pipeline, head = 0, nq = 0;
	size_t sent = 0, total = 0;
	int err = 0, shortio = 0;

	if (count == 0)
		return 0;
	for (;;) {
		while (!shortio && !err && nq < window && sent < count) {
			np_fcall t;
			uint32_t want = count - sent < iosz ? (uint32_t)(count - sent) : iosz;
			if (writing) {
				t = (np_fcall){.type = NP_TWRITE};
				t.twrite.fid = f->fid;
				t.twrite.offset = offset + sent;
				t.twrite.count = want;
				t.twrite.data = wbuf + sent;
			} else {
				t = (np_fcall){.type = NP_TREAD};
				t.tread.fid = f->fid;
				t.tread.offset = offset + sent;
				t.tread.count = want;
			}
			struct piece *p = &q[(head + nq) % NP_PIPE_MAX];
			int e = np_client_submit(c, &t, NULL, NULL, &p->r);
			if (e < 0) {
				err = e;
				break;
			}
			p->pos = sent;
			p->want = want;
			sent += want;
			nq++;
		}
		if (!nq)
			break;
		struct piece *p = &q[head];
		head = (head + 1) % NP_PIPE_MAX;
		nq--;
		int e = np_creq_wait(p->r);
		if (e < 0) {
			if (!err && !shortio)
				err = e;
		} else if (!err && !shortio) {
			uint32_t n;
			if (writing) {
				n = p->r->rc.rwrite.count;
			} else {
				n = p->r->rc.rread.count;
				memcpy(rbuf + p->pos, p->r->rc.rread.data, n);
			}
			total = p->pos + n;
			/* A short piece ends the transfer (end of file, or the
			 * server took less): later replies are ignored. */
			if (n < p->want)
				shortio = 1;
		}
		np_creq_release(p->r);
	}
	if (err && total == 0)
		return err;
	return (ssize_t)total;
}

ssize_t np_cfid_pread(np_cfid *f, void *buf, size_t count, uint64_t offset)
{
	return transfer(f, false, buf, NULL, count, offset);
}

ssize_t np_cfid_pwrite(np_cfid *f, const void *buf, size_t count, uint64_t offset)
{
	return transfer(f, true, NULL, buf, count, offset);
}

/* Reads and writes: a large transfer is cut into iosize pieces and up to
 * c->pipeline of them are in flight at once; replies are consumed in order
 * so the result is the contiguous prefix the server honoured. */
#include <errno.h>
#include <string.h>

#include "client/client_impl.h"

#define NP_PIPE_MAX 64

struct piece {
	np_creq *r;
	size_t pos;
	uint32_t want;
};

ssize_t np_cfid_pread(np_cfid *f, void *buf, size_t count, uint64_t offset)
{
	np_client *c = f->client;
	struct piece q[NP_PIPE_MAX];
	uint32_t iosz = np_cfid_iosize(f);
	unsigned window = c->pipeline, head = 0, nq = 0;
	size_t sent = 0, total = 0;
	int err = 0, eof = 0;

	if (count == 0)
		return 0;
	for (;;) {
		while (!eof && !err && nq < window && sent < count) {
			np_fcall t = {.type = NP_TREAD};
			uint32_t want = count - sent < iosz ? (uint32_t)(count - sent) : iosz;
			t.tread.fid = f->fid;
			t.tread.offset = offset + sent;
			t.tread.count = want;
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
			if (!err && !eof)
				err = e;
		} else if (!err && !eof) {
			uint32_t n = p->r->rc.rread.count;
			memcpy((char *)buf + p->pos, p->r->rc.rread.data, n);
			total = p->pos + n;
			if (n < p->want)
				eof = 1; /* later pieces lie past the end: ignore them */
		}
		np_creq_release(p->r);
	}
	if (err && total == 0)
		return err;
	return (ssize_t)total;
}

ssize_t np_cfid_pwrite(np_cfid *f, const void *buf, size_t count, uint64_t offset)
{
	np_client *c = f->client;
	struct piece q[NP_PIPE_MAX];
	uint32_t iosz = np_cfid_iosize(f);
	unsigned window = c->pipeline, head = 0, nq = 0;
	size_t sent = 0, total = 0;
	int err = 0, shortw = 0;

	if (count == 0)
		return 0;
	for (;;) {
		while (!shortw && !err && nq < window && sent < count) {
			np_fcall t = {.type = NP_TWRITE};
			uint32_t want = count - sent < iosz ? (uint32_t)(count - sent) : iosz;
			t.twrite.fid = f->fid;
			t.twrite.offset = offset + sent;
			t.twrite.count = want;
			t.twrite.data = (const uint8_t *)buf + sent;
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
			if (!err && !shortw)
				err = e;
		} else if (!err && !shortw) {
			uint32_t n = p->r->rc.rwrite.count;
			total = p->pos + n;
			if (n < p->want)
				shortw = 1;
		}
		np_creq_release(p->r);
	}
	if (err && total == 0)
		return err;
	return (ssize_t)total;
}

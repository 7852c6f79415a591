/* Internal: the pack/unpack cursor.  One function per message layout walks the
 * fields with these primitives; the cursor's mode decides whether they encode,
 * decode, or only count bytes, so the encoder and decoder cannot drift apart. */
#ifndef NP_PROTO_PU_H
#define NP_PROTO_PU_H

#include <endian.h>
#include <errno.h>
#include <stdint.h>
#include <string.h>

#include "ninep/proto.h"

enum np_pu_mode { NP_PU_DECODE, NP_PU_ENCODE, NP_PU_SIZE };

struct np_pu {
	uint8_t *base;
	uint8_t *p;
	uint8_t *end;
	size_t counted; /* NP_PU_SIZE: bytes so far (p stays put: it may be NULL) */
	enum np_pu_mode mode;
	enum np_dialect dialect;
	int err; /* positive errno once something failed; later calls do nothing */
	const char *field;
	uint32_t err_off;
};

static inline void np_pu_fail(struct np_pu *pu, int err, const char *field)
{
	if (pu->err)
		return;
	pu->err = err;
	pu->field = field;
	pu->err_off = (uint32_t)(pu->p - pu->base);
}

/* Room for n more bytes?  Decoding short is a protocol error (the frame lies
 * about its contents); encoding short means the buffer is too small.  When
 * only sizing, the bytes are counted and 0 is returned so that the caller
 * neither touches nor advances p (no arithmetic on a NULL buffer). */
static inline int np_pu_room(struct np_pu *pu, uint64_t n, const char *field)
{
	if (pu->err)
		return 0;
	if (pu->mode == NP_PU_SIZE) {
		pu->counted += n;
		return 0;
	}
	if ((uint64_t)(pu->end - pu->p) < n) {
		np_pu_fail(pu, pu->mode == NP_PU_DECODE ? EPROTO : EMSGSIZE, field);
		return 0;
	}
	return 1;
}

static inline void pu8(struct np_pu *pu, uint8_t *v, const char *field)
{
	if (!np_pu_room(pu, 1, field))
		return;
	if (pu->mode == NP_PU_DECODE)
		*v = pu->p[0];
	else if (pu->mode == NP_PU_ENCODE)
		pu->p[0] = *v;
	pu->p += 1;
}

static inline void pu16(struct np_pu *pu, uint16_t *v, const char *field)
{
	if (!np_pu_room(pu, 2, field))
		return;
	if (pu->mode == NP_PU_DECODE) {
		*v = (uint16_t)(pu->p[0] | pu->p[1] << 8);
	} else if (pu->mode == NP_PU_ENCODE) {
		pu->p[0] = (uint8_t)*v;
		pu->p[1] = (uint8_t)(*v >> 8);
	}
	pu->p += 2;
}

static inline void pu32(struct np_pu *pu, uint32_t *v, const char *field)
{
	if (!np_pu_room(pu, 4, field))
		return;
	if (pu->mode == NP_PU_DECODE) {
		uint32_t x;
		memcpy(&x, pu->p, 4);
		*v = le32toh(x);
	} else if (pu->mode == NP_PU_ENCODE) {
		uint32_t x = htole32(*v);
		memcpy(pu->p, &x, 4);
	}
	pu->p += 4;
}

static inline void pu64(struct np_pu *pu, uint64_t *v, const char *field)
{
	if (!np_pu_room(pu, 8, field))
		return;
	if (pu->mode == NP_PU_DECODE) {
		uint64_t x;
		memcpy(&x, pu->p, 8);
		*v = le64toh(x);
	} else if (pu->mode == NP_PU_ENCODE) {
		uint64_t x = htole64(*v);
		memcpy(pu->p, &x, 8);
	}
	pu->p += 8;
}

/* Strings may not contain NUL: a C server would silently truncate them. */
static inline void pustr(struct np_pu *pu, np_str *s, const char *field)
{
	uint16_t len = s->len;
	pu16(pu, &len, field);
	if (!np_pu_room(pu, len, field))
		return;
	if (pu->mode == NP_PU_DECODE) {
		s->s = (const char *)pu->p;
		s->len = len;
		if (len && memchr(pu->p, 0, len)) {
			np_pu_fail(pu, EINVAL, field);
			return;
		}
	} else if (pu->mode == NP_PU_ENCODE && len && (const uint8_t *)s->s != pu->p) {
		/* A handler may have produced the string in place (Rreadlink). */
		memmove(pu->p, s->s, len);
	}
	pu->p += len;
}

static inline void puqid(struct np_pu *pu, np_qid *q, const char *field)
{
	pu8(pu, &q->type, field);
	pu32(pu, &q->version, field);
	pu64(pu, &q->path, field);
}

/* A payload of count bytes: a view on decode, a copy (unless already in
 * place) on encode. */
static inline void pudata(struct np_pu *pu, const uint8_t **data, uint32_t count,
			  const char *field)
{
	if (!np_pu_room(pu, count, field))
		return;
	if (pu->mode == NP_PU_DECODE)
		*data = pu->p;
	else if (pu->mode == NP_PU_ENCODE && count && *data != pu->p)
		memmove(pu->p, *data, count);
	pu->p += count;
}

void np_pu_stat(struct np_pu *pu, np_stat *st);

#endif

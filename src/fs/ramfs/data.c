/* ramfs file contents: fixed-size chunks kept sorted by index, so holes (from
 * seeking past the end or truncating up) cost nothing and read as zeros. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "ramfs_int.h"

/* Index of the first chunk with idx >= want. */
static size_t chunk_lower(const struct rdata *d, uint64_t want)
{
	size_t lo = 0, hi = d->n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (d->c[mid].idx < want)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

uint64_t rdata_allocated(const struct rnode *n)
{
	return (uint64_t)n->data.n * RAMFS_CHUNK;
}

int rdata_read(const struct rnode *n, uint64_t off, uint8_t *buf, uint32_t count, uint32_t *got)
{
	const struct rdata *d = &n->data;
	if (off >= n->size) {
		*got = 0;
		return 0;
	}
	if (count > n->size - off)
		count = (uint32_t)(n->size - off);
	size_t i = chunk_lower(d, off / RAMFS_CHUNK);
	uint32_t done = 0;
	while (done < count) {
		uint64_t pos = off + done;
		uint64_t idx = pos / RAMFS_CHUNK;
		uint32_t in = (uint32_t)(pos % RAMFS_CHUNK);
		uint32_t len = RAMFS_CHUNK - in;
		if (len > count - done)
			len = count - done;
		while (i < d->n && d->c[i].idx < idx)
			i++;
		if (i < d->n && d->c[i].idx == idx)
			memcpy(buf + done, d->c[i].p + in, len);
		else
			memset(buf + done, 0, len);
		done += len;
	}
	*got = count;
	return 0;
}

/* The chunk for idx, allocated (zeroed) when missing; *i is a hint that
 * advances monotonically during one write. */
static uint8_t *chunk_get(np_ramfs *fs, struct rdata *d, uint64_t idx, size_t *i)
{
	while (*i < d->n && d->c[*i].idx < idx)
		(*i)++;
	if (*i < d->n && d->c[*i].idx == idx)
		return d->c[*i].p;
	if (fs->max_bytes && fs->data_bytes + RAMFS_CHUNK > fs->max_bytes)
		return NULL;
	if (d->n == d->cap) {
		size_t ncap = d->cap ? d->cap * 2 : 4;
		struct rchunk *nc = realloc(d->c, ncap * sizeof(*nc));
		if (!nc)
			return NULL;
		d->c = nc;
		d->cap = ncap;
	}
	uint8_t *p = calloc(1, RAMFS_CHUNK);
	if (!p)
		return NULL;
	memmove(&d->c[*i + 1], &d->c[*i], (d->n - *i) * sizeof(*d->c));
	d->c[*i].idx = idx;
	d->c[*i].p = p;
	d->n++;
	fs->data_bytes += RAMFS_CHUNK;
	return p;
}

int rdata_write(np_ramfs *fs, struct rnode *n, uint64_t off, const uint8_t *src, uint32_t count,
		uint32_t *wrote)
{
	struct rdata *d = &n->data;
	*wrote = 0;
	if (count == 0)
		return 0;
	if (off > INT64_MAX || count > INT64_MAX - off)
		return EFBIG;
	size_t i = chunk_lower(d, off / RAMFS_CHUNK);
	uint32_t done = 0;
	while (done < count) {
		uint64_t pos = off + done;
		uint32_t in = (uint32_t)(pos % RAMFS_CHUNK);
		uint32_t len = RAMFS_CHUNK - in;
		if (len > count - done)
			len = count - done;
		uint8_t *p = chunk_get(fs, d, pos / RAMFS_CHUNK, &i);
		if (!p) {
			/* a short write is still a write */
			if (done == 0)
				return ENOSPC;
			break;
		}
		memcpy(p + in, src + done, len);
		done += len;
	}
	if (off + done > n->size)
		n->size = off + done;
	*wrote = done;
	return 0;
}

int rdata_truncate(np_ramfs *fs, struct rnode *n, uint64_t size)
{
	struct rdata *d = &n->data;
	if (size > INT64_MAX)
		return EFBIG;
	if (size < n->size) {
		/* drop whole chunks past the end, zero the tail of the last one so
		 * that growing again reads zeros */
		uint64_t keep = (size + RAMFS_CHUNK - 1) / RAMFS_CHUNK;
		size_t i = chunk_lower(d, keep);
		for (size_t j = i; j < d->n; j++) {
			free(d->c[j].p);
			fs->data_bytes -= RAMFS_CHUNK;
		}
		d->n = i;
		uint32_t in = (uint32_t)(size % RAMFS_CHUNK);
		if (in && d->n && d->c[d->n - 1].idx == size / RAMFS_CHUNK)
			memset(d->c[d->n - 1].p + in, 0, RAMFS_CHUNK - in);
	}
	n->size = size;
	return 0;
}

void rdata_free(np_ramfs *fs, struct rnode *n)
{
	struct rdata *d = &n->data;
	for (size_t j = 0; j < d->n; j++)
		free(d->c[j].p);
	fs->data_bytes -= (uint64_t)d->n * RAMFS_CHUNK;
	free(d->c);
	d->c = NULL;
	d->n = d->cap = 0;
}

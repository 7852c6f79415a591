/* libFuzzer target for the frame decoder, all three dialects.
 *
 * Input: one selector byte, then one frame.  The selector's low two bits pick
 * the dialect (3 also means 9P2000.L), the next two the msize to enforce.
 * Whatever decodes must size, re-encode to the very same bytes, refuse a
 * buffer one byte short, decode again to the same fields and print; whatever
 * does not decode must fail with one of the documented errnos, naming a
 * field inside the frame.  Any violation aborts. */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fcall_compare.h"
#include "ninep/proto.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void die(const char *what, const np_fcall *f, enum np_dialect d)
{
	char line[512];
	np_fcall_format(line, sizeof line, f, d);
	fprintf(stderr, "fuzz-codec: %s (%s): %s\n", what, np_dialect_name(d), line);
	abort();
}

static void check_readdir(const np_fcall *f)
{
	uint32_t pos = 0, last = 0;
	np_dirent de;
	int r;
	while ((r = np_dirent_next(f->rread.data, f->rread.count, &pos, &de)) == 1) {
		if (pos <= last || pos > f->rread.count)
			abort();
		last = pos;
	}
	if (r != 0 || pos != f->rread.count)
		abort(); /* the decoder validated every entry */
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const uint32_t msizes[] = {0, 65536, 4096, 64};
	if (size < 1)
		return 0;
	enum np_dialect d = (data[0] & 3) == 3 ? NP_9P2000L : (enum np_dialect)(data[0] & 3);
	uint32_t msize = msizes[(data[0] >> 2) & 3];
	size_t len = size - 1;
	/* the frame in a buffer of its own size, so ASan sees any overread */
	uint8_t *frame = malloc(len ? len : 1);
	if (!frame)
		return 0;
	memcpy(frame, data + 1, len);

	np_fcall f;
	np_decode_error e = {0};
	int r = np_decode(frame, len, d, msize, &f, &e);
	if (r != 0) {
		if (r != -EPROTO && r != -EMSGSIZE && r != -EINVAL && r != -EOPNOTSUPP)
			abort();
		if (e.err != -r || !e.field || e.offset > len)
			abort();
		free(frame);
		return 0;
	}

	if (np_fcall_size(&f, d) != (long)len)
		die("np_fcall_size differs from the frame length", &f, d);
	uint8_t *out = malloc(len);
	if (!out)
		abort();
	if (np_encode(&f, d, out, len - 1) != -EMSGSIZE)
		die("encode into a buffer one byte short did not fail", &f, d);
	if (np_encode(&f, d, out, len) != (int)len)
		die("re-encode length differs", &f, d);
	if (memcmp(out, frame, len) != 0)
		die("re-encode bytes differ", &f, d);

	np_fcall g;
	if (np_decode(out, len, d, msize, &g, NULL) != 0)
		die("re-encoded frame does not decode", &f, d);
	const char *field = fcall_diff(&f, &g, d);
	if (field)
		die(field, &f, d);
	if (f.type == NP_RREADDIR)
		check_readdir(&f);

	char line[256];
	int n = np_fcall_format(line, sizeof line, &f, d);
	if (n <= 0 || np_fcall_format(NULL, 0, &f, d) != n)
		die("format length", &f, d);
	free(out);
	free(frame);
	return 0;
}

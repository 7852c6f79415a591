/* Seeds for fuzz-client-reply: every sample reply (each type, variant and
 * dialect it exists in) behind the 8-byte header of fuzz_client_reply.c,
 * naming the request it answers with counts it satisfies exactly, plus
 * replies that exceed their request by one (which the client must refuse). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fcall_samples.h"
#include "gen_corpus.h"
#include "ninep/proto.h"

static void put(const char *name, enum np_dialect d, uint8_t ttype, uint16_t nwname,
		uint32_t count, const uint8_t *frame, size_t len)
{
	uint8_t *seed = malloc(len + 8);
	if (!seed)
		exit(1);
	seed[0] = (uint8_t)d; /* msize 65536 */
	seed[1] = ttype;
	seed[2] = (uint8_t)nwname;
	seed[3] = (uint8_t)(nwname >> 8);
	for (int i = 0; i < 4; i++)
		seed[4 + i] = (uint8_t)(count >> (8 * i));
	memcpy(seed + 8, frame, len);
	seed_emit(name, seed, len + 8);
	free(seed);
}

void seeds_client_reply(void)
{
	static const enum np_dialect ds[] = {NP_9P2000, NP_9P2000U, NP_9P2000L};
	static const char *const dn[] = {"9p2000", "9p2000u", "9p2000L"};
	static uint8_t buf[1 << 16];
	for (size_t i = 0; i < fcall_ntypes; i++) {
		uint8_t type = fcall_types[i];
		if (!(type & 1))
			continue; /* requests */
		for (size_t k = 0; k < 3; k++) {
			if (!fcall_type_in_dialect(type, ds[k]))
				continue;
			for (int v = 0; v < FCALL_NVARIANTS; v++) {
				np_fcall f;
				char name[128];
				fcall_sample(type, v, &f);
				int n = np_encode(&f, ds[k], buf, sizeof buf);
				if (n < 0) {
					fprintf(stderr, "cannot encode %s: %d\n", np_type_name(type), n);
					exit(1);
				}
				/* error replies answer anything: a Twalk here */
				uint8_t ttype = type == NP_RERROR || type == NP_RLERROR
							? NP_TWALK : (uint8_t)(type - 1);
				uint16_t nwname = type == NP_RWALK ? f.rwalk.nwqid : 0;
				uint32_t count = type == NP_RREAD || type == NP_RREADDIR ? f.rread.count
						 : type == NP_RWRITE ? f.rwrite.count : 0;
				snprintf(name, sizeof name, "%s-%s-v%d", dn[k], np_type_name(type), v);
				put(name, ds[k], ttype, nwname, count, buf, (size_t)n);
				if ((nwname > 1 || count > 0) && v == 0) {
					snprintf(name, sizeof name, "%s-%s-v%d-exceeds", dn[k],
						 np_type_name(type), v);
					put(name, ds[k], ttype, nwname ? nwname - 1 : 0,
					    count ? count - 1 : 0, buf, (size_t)n);
				}
			}
		}
	}
}

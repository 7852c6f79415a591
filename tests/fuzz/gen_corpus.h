/* The seed-corpus generator (gen_corpus.c) and its per-target seed sets. */
#ifndef NINEP_FUZZ_GEN_CORPUS_H
#define NINEP_FUZZ_GEN_CORPUS_H

#include <stddef.h>
#include <stdint.h>

/* Write (or, with --check, compare) one seed file NAME in the target's
 * corpus directory. */
void seed_emit(const char *name, const uint8_t *seed, size_t len);

/* gen_seeds_session.c: session scripts for fuzz-server-BACKEND ("ramfs" adds
 * seeds that use its option bits). */
void seeds_session(const char *backend);
/* gen_seeds_reply.c: replies with their requests for fuzz-client-reply. */
void seeds_client_reply(void);

#endif

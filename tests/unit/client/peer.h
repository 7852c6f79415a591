/* A scripted 9P peer on one end of a socketpair, for testing how the client
 * copes with servers good and bad.  It answers Tversion itself, then hands
 * every request to the test's handler. */
#ifndef NP_TEST_PEER_H
#define NP_TEST_PEER_H

#include <pthread.h>
#include <stdint.h>

#include "ninep/client.h"

struct peer;
/* Handle one request; return 0 to go on, -1 to drop the connection. */
typedef int (*peer_fn)(struct peer *p, const np_fcall *t);

struct peer {
	int fd;
	uint32_t msize;        /* offered in Rversion */
	const char *version;   /* offered in Rversion */
	peer_fn fn;
	void *arg;
	pthread_t th;
	pthread_mutex_t lock;
	uint32_t nreq;         /* requests seen */
	uint16_t tags[4096];   /* their tags, in order */
};

/* Start the peer and connect a client to it with opts (may be NULL). */
np_client *peer_start(struct peer *p, peer_fn fn, const struct np_client_opts *o, int *err);
/* Join the peer thread (after the client is freed or the peer dropped). */
void peer_join(struct peer *p);

/* Send a reply frame built from f, or raw bytes. */
void peer_send(struct peer *p, const np_fcall *f);
void peer_send_raw(struct peer *p, const void *buf, size_t len);
/* Read one request (used by handlers that want several in hand). */
int peer_recv(struct peer *p, uint8_t *buf, size_t cap, np_fcall *f);

#endif

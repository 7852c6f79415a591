/* Internal: the client connection state shared by the src/client files. */
#ifndef NP_CLIENT_IMPL_H
#define NP_CLIENT_IMPL_H

#include <pthread.h>
#include <stdint.h>

#include "ninep/buf.h"
#include "ninep/client.h"
#include "client/reply.h"

enum { NP_RQ_FREE, NP_RQ_INFLIGHT, NP_RQ_DONE };

struct np_creq {
	np_client *c;
	uint16_t tag;
	uint8_t state;
	uint8_t waiting;         /* a thread sleeps on cond for it */
	uint8_t has_reply;       /* rc holds a decoded reply */
	uint8_t flush_pending;   /* a Tflush names our tag: keep it reserved */
	uint8_t release_deferred;/* released while flush_pending */
	int err;                 /* positive errno once done */
	struct np_expect ex;
	np_buf *tx, *rx;
	np_fcall rc;
	np_creq_cb cb;
	void *arg;
	np_creq *flush_target;   /* for a Tflush: the request it cancels */
	pthread_cond_t cond;
	np_creq *next;           /* free list, callback queue */
};

/* A pooled handle: np_cfid plus a free-list link. */
struct np_cfid_slot {
	np_cfid f;
	struct np_cfid_slot *next;
};

#define NP_CLIENT_RBUF 8192u

struct np_client {
	int rfd, wfd;
	enum np_dialect dialect;
	uint32_t msize;
	uint32_t pipeline;
	void (*trace)(void *, char, const np_fcall *, enum np_dialect);
	void *trace_arg;

	pthread_mutex_t lock;    /* everything below except the leader's staging */
	pthread_mutex_t wlock;   /* one frame written at a time */
	pthread_cond_t evcond;   /* pollers, tag waiters, drainers */
	struct np_bufcache *bc;  /* owned by whoever holds lock */

	np_creq *reqs;           /* indexed by tag */
	uint32_t ntags;
	np_creq *freereqs;
	np_creq *cbq, **cbq_tail;/* completed callback requests */
	uint32_t inflight;
	uint32_t nwaiting;       /* threads asleep in np_creq_wait */
	uint32_t nev_waiters;    /* threads asleep on evcond */
	uint64_t ncompleted;
	int reading;             /* a leader owns the read side */
	int dead;                /* errno once the connection is lost */
	int no_unlinkat, no_renameat; /* the server refused them once */

	uint32_t *freefids;
	uint32_t nfreefids, capfreefids, nextfid;
	struct np_cfid_slot *freeslots;

	int w_notsock;           /* under wlock: wfd is not a socket */

	/* read staging: touched only by the current leader */
	uint8_t *rbuf;
	uint32_t rlen, roff;
};

/* Send t and wait for the reply.  Returns 0 with *out holding a successful
 * reply (release it with np_creq_release), or -errno with nothing held. */
int np_rpc(np_client *c, const np_fcall *t, np_creq **out);
/* np_rpc for requests whose reply carries nothing the caller needs. */
int np_rpc0(np_client *c, const np_fcall *t);
/* np_rpc for a request whose one field is f's fid (Tstat, Tstatfs,
 * Treadlink). */
int np_rpc_fid(np_cfid *f, uint8_t type, np_creq **out);

/* Handle and fid numbers from the client's pools. */
np_cfid *np_cfid_alloc(np_client *c);
void np_cfid_free(np_cfid *f);

/* Bytes of payload per read/write request on f. */
uint32_t np_cfid_iosize(const np_cfid *f);

/* Host open(2) flags to 9P2000.L flags / 9P2000 Topen mode. */
uint32_t np_oflags_to_l(int flags);
uint8_t np_oflags_to_mode(int flags);

#endif

/* Raw-frame test harness: an in-process server on one end of a socketpair,
 * the test speaking 9P bytes on the other.  Nothing here interprets the
 * protocol beyond the codec, so a test sees exactly what a client would. */
#ifndef NINEP_TESTS_HARNESS_H
#define NINEP_TESTS_HARNESS_H

#include <stdint.h>

#include "ninep/proto.h"
#include "ninep/server.h"

#define TH_BUFSZ (1u << 20)

struct th {
	np_server *srv;
	int fd;                  /* our end */
	enum np_dialect d;
	uint32_t msize;
	uint8_t *tx, *rx;        /* TH_BUFSZ each */
	np_fcall r;              /* last reply (views into rx) */
};

/* A server with `ops`/`fs` (options may be NULL) and one connection. */
struct th *th_start(const struct np_fs_ops *ops, void *fs, const struct np_server_opts *o);
/* Another connection to the same server. */
struct th *th_connect(struct th *parent);
void th_close(struct th *t);           /* drop the connection only */
void th_stop(struct th *t);            /* connection and server */

/* Send one message (tag as given); -errno on failure. */
int th_send(struct th *t, const np_fcall *f);
/* Send raw bytes. */
int th_send_raw(struct th *t, const void *buf, size_t len);
/* Receive one reply into t->r (timeout in ms).  0, -ETIMEDOUT, -ECONNRESET
 * (the server closed), or -EPROTO (undecodable). */
int th_recv(struct th *t, int timeout_ms);
/* Send and receive; returns th_recv's result. */
int th_rpc(struct th *t, const np_fcall *f);

/* Common steps (assert inside via the return value). */
int th_version(struct th *t, uint32_t msize, const char *version);
int th_attach(struct th *t, uint32_t fid, const char *uname, uint32_t n_uname, const char *aname);
int th_walk(struct th *t, uint32_t fid, uint32_t newfid, int n, const char *const *names);
int th_clunk(struct th *t, uint32_t fid);
/* The errno of an Rlerror/Rerror reply in t->r, 0 if not an error. */
int th_err(const struct th *t);

#endif

/* A ramfs wrapped for fault tests: chosen operations run on worker threads
 * and block on a gate (or sleep a random while), and every fid's life is
 * recorded so a test can check that each one was destroyed exactly once. */
#ifndef NINEP_TESTS_GATEFS_H
#define NINEP_TESTS_GATEFS_H

#include <stdatomic.h>
#include <stdint.h>

#include "ninep/ramfs.h"
#include "ninep/server.h"

struct gatefs_counts {
	long born;         /* fids a handler made (attach, walk, xattrwalk newfid) */
	long destroyed;    /* destroy_fid calls on those */
	long destroyed_unborn; /* destroy_fid of fids no handler made (cancelled) */
	long double_destroy;   /* destroy_fid twice without reuse: must stay 0 */
	long entered;      /* gated handlers that started */
	long inflight;     /* gated handlers running now */
};

/* Build the ops table: ramfs with the NP_OP_BIT()s in `gated` taken off the
 * inline set and wrapped.  jitter_us > 0: gated ops sleep 0..jitter_us
 * instead of waiting on the gate. */
void gatefs_init(np_ramfs *fs, uint64_t gated, unsigned jitter_us);
extern struct np_fs_ops gatefs_ops;

/* Close (1) or open (0) the gate; opening releases every waiter. */
void gatefs_hold(int hold);
/* Wait until at least n gated handlers have entered since the last reset,
 * up to timeout_ms (since gatefs_reset_entered).  Returns the number entered. */
long gatefs_wait_entered(long n, int timeout_ms);
void gatefs_counts(struct gatefs_counts *c);
/* The fid ledger is kept from gatefs_init on; only `entered` restarts. */
void gatefs_reset_entered(void);

#endif

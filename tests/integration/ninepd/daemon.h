/* Test support: run a real ninepd in a child process and speak raw 9P to it
 * over its unix socket.  Shared by the end-to-end daemon tests and the fault
 * tests (tests/fault), which need the daemon's own limits and process. */
#ifndef NINEP_TESTS_DAEMON_H
#define NINEP_TESTS_DAEMON_H

#include <stdint.h>
#include <sys/types.h>

#include "ninep/proto.h"

struct nd {
	pid_t pid;
	char dir[64];       /* private temp dir (socket, logs) */
	char sock[128];     /* socket path */
	char addr[160];     /* "unix:<sock>" */
	char log[128];      /* the daemon's stderr */
};

/* Start ninepd (path from $NINEPD, else the build's) with `args` (a NULL-
 * terminated list of options and the directory, or --ramfs), listening on a
 * fresh socket.  nofile > 0 sets RLIMIT_NOFILE in the child before exec.
 * Waits until the socket answers.  0 or -errno. */
int nd_start(struct nd *d, const char *const *args, long nofile);
/* SIGTERM and wait; returns the exit status (or 128 + signal). */
int nd_stop(struct nd *d);
/* SIGKILL and wait. */
void nd_kill(struct nd *d);
/* Remove the private directory. */
void nd_cleanup(struct nd *d);
/* Raise our own RLIMIT_NOFILE to n (root may raise the hard limit). */
int nd_raise_nofile(long n);

/* A raw-frame client connection. */
#define WC_BUFSZ (1u << 20)
struct wc {
	int fd;
	enum np_dialect d;
	uint32_t msize;
	uint8_t *tx, *rx;
	np_fcall r;         /* last reply, views into rx */
};

/* Connect to a unix socket path; NULL with errno on failure. */
struct wc *wc_dial(const char *path);
void wc_close(struct wc *w);
int wc_send(struct wc *w, const np_fcall *f);
int wc_send_raw(struct wc *w, const void *buf, size_t len);
/* 0, -ETIMEDOUT, -ECONNRESET, -EPROTO. */
int wc_recv(struct wc *w, int timeout_ms);
int wc_rpc(struct wc *w, const np_fcall *f);
/* errno of an error reply in w->r, 0 otherwise. */
int wc_err(const struct wc *w);

int wc_version(struct wc *w, uint32_t msize, const char *version);
/* Return 0 or the reply's errno (negative: transport failure). */
int wc_attach(struct wc *w, uint32_t fid, const char *uname, uint32_t n_uname, const char *aname);
int wc_walk(struct wc *w, uint32_t fid, uint32_t newfid, int n, const char *const *names);
int wc_clunk(struct wc *w, uint32_t fid);
int wc_lopen(struct wc *w, uint32_t fid, uint32_t flags);
int wc_lcreate(struct wc *w, uint32_t fid, const char *name, uint32_t flags, uint32_t mode);
int wc_mkdir(struct wc *w, uint32_t dfid, const char *name, uint32_t mode);
int wc_write(struct wc *w, uint32_t fid, uint64_t off, const void *data, uint32_t count);
int wc_read(struct wc *w, uint32_t fid, uint64_t off, uint32_t count);
int wc_getattr(struct wc *w, uint32_t fid);
int wc_fsync(struct wc *w, uint32_t fid);
int wc_unlinkat(struct wc *w, uint32_t dfid, const char *name, uint32_t flags);

#endif

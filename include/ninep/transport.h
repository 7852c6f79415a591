/* Transports: addresses as strings, listening, dialing, accepting.
 *
 *   unix:/path          a unix stream socket (filesystem)
 *   unix:@name          ... in the abstract namespace
 *   tcp:HOST:PORT       TCP over IPv4 or IPv6 (tcp:[::1]:564 for literals)
 *   vsock:CID:PORT      AF_VSOCK (CID may be "any", "host", "local")
 *   fd:RFD,WFD          one session on two already open descriptors
 *   stdio               fd:0,1
 *
 * Every error is reported as -errno plus a message naming the address.
 */
#ifndef NINEP_TRANSPORT_H
#define NINEP_TRANSPORT_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#ifdef __cplusplus
extern "C" {
#endif

enum np_addr_kind {
	NP_ADDR_UNIX,
	NP_ADDR_TCP,
	NP_ADDR_VSOCK,
	NP_ADDR_FD,
	NP_ADDR_STDIO,
};

typedef struct np_addr {
	enum np_addr_kind kind;
	char path[108];   /* unix: socket path, without the '@' when abstract */
	int abstract;     /* unix: abstract namespace */
	char host[256];   /* tcp: host name or literal, brackets removed */
	char port[32];    /* tcp: service or number */
	uint32_t cid;     /* vsock */
	uint32_t vport;   /* vsock */
	int rfd, wfd;     /* fd / stdio */
} np_addr;

/* Parse `s`.  Returns 0 or -EINVAL with a message in err ("bad address
 * 'tcp:x': missing port"). */
int np_addr_parse(const char *s, np_addr *a, char *err, size_t errlen);
/* Render back to the canonical string.  Returns its length, or -ENOSPC when
 * `n` is too small (NP_ADDR_STRMAX always suffices). */
int np_addr_format(const np_addr *a, char *out, size_t n);
#define NP_ADDR_STRMAX 320

/* The address a socket is bound to: tells the port the kernel picked for
 * tcp:HOST:0, e.g. to print where a server listens.  0 or -errno. */
int np_addr_local(int fd, np_addr *a);

struct np_listen_opts {
	int backlog;      /* default 512 */
	int mode;         /* unix: chmod of the socket file, -1 to leave the umask's */
};

/* Listen on a socket address (unix, tcp, vsock).  For unix sockets an
 * existing socket file is removed only when nothing answers on it (stale);
 * a live one is refused with -EADDRINUSE; a non-socket file is never removed.
 * Returns a non-blocking, close-on-exec listening fd or -errno. */
int np_listen(const np_addr *a, const struct np_listen_opts *o, char *err, size_t errlen);

/* Remove the socket file of a unix listener (at shutdown). */
void np_unlisten(const np_addr *a);

/* Peer identity of an accepted connection. */
typedef struct np_peer {
	int has_cred;     /* SO_PEERCRED available (unix sockets) */
	pid_t pid;
	uid_t uid;
	gid_t gid;
	char desc[128];   /* "unix pid 42 uid 1000", "tcp 127.0.0.1:5000" */
} np_peer;

/* Accept one connection: returns a non-blocking, close-on-exec fd with
 * TCP_NODELAY set for TCP, or -errno (-EAGAIN when none is pending). */
int np_accept(int lfd, np_peer *peer);

/* Connect (blocking) to an address.  For fd/stdio returns the given
 * descriptors; for sockets *rfd == *wfd.  Returns 0 or -errno. */
int np_dial(const np_addr *a, int *rfd, int *wfd, char *err, size_t errlen);

/* Let one write queue a whole message of msize bytes (and a bit) on a
 * socket, so large replies and Twrites go out in one call.  Best effort. */
void np_socket_fit_msize(int fd, uint32_t msize);

#ifdef __cplusplus
}
#endif
#endif

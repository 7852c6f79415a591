/* Internal to the transport layer: error messages and socket addresses built
 * from an np_addr, shared by listen, accept and dial. */
#ifndef NP_TRANSPORT_TR_H
#define NP_TRANSPORT_TR_H

#include <stddef.h>
#include <sys/socket.h>
#include <sys/un.h>

#include "ninep/transport.h"

/* Write a message into err (which may be NULL or empty). */
void np_tr_err(char *err, size_t errlen, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* The canonical string of a, for messages; never fails (falls back to a
 * placeholder for a corrupt np_addr). */
const char *np_tr_str(const np_addr *a, char *buf, size_t n);

/* Fill a sockaddr_un for a unix address; returns the length to pass to
 * bind/connect (abstract names are not NUL-terminated). */
socklen_t np_tr_unix_sockaddr(const np_addr *a, struct sockaddr_un *sun);

/* Fill a sockaddr_vm for a vsock address; returns its length. */
socklen_t np_tr_vsock_sockaddr(const np_addr *a, struct sockaddr_storage *ss);

/* Turn a socket address back into an np_addr (tcp, unix, vsock). */
int np_tr_from_sockaddr(const struct sockaddr *sa, socklen_t len, np_addr *a);

/* getaddrinfo for a tcp address; on failure writes "resolve ADDR: why" and
 * returns -errno. */
struct addrinfo;
int np_tr_resolve(const np_addr *a, int passive, struct addrinfo **res,
		  char *err, size_t errlen);

#endif

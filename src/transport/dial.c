/* Connecting to an address (the client side). */
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <linux/vm_sockets.h>

#include "ninep/transport.h"
#include "tr.h"

/* connect() that survives signals: after EINTR the connection goes on in
 * the background, so wait for it instead of calling connect() again.
 * Returns 0 or a positive errno. */
static int connect_wait(int fd, const struct sockaddr *sa, socklen_t len)
{
	struct pollfd pfd = { .fd = fd, .events = POLLOUT };
	socklen_t el = sizeof(int);
	int e = 0;

	if (connect(fd, sa, len) == 0)
		return 0;
	if (errno != EINTR)
		return errno;
	while (poll(&pfd, 1, -1) < 0)
		if (errno != EINTR)
			return errno;
	if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &e, &el) < 0)
		return errno;
	return e;
}

static int dial_sockaddr(int family, const struct sockaddr *sa, socklen_t len,
			 const char *as, char *err, size_t errlen)
{
	int fd, e;

	fd = socket(family, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0) {
		e = errno;
		np_tr_err(err, errlen, "socket %s: %s", as, strerror(e));
		return -e;
	}
	e = connect_wait(fd, sa, len);
	if (e) {
		close(fd);
		np_tr_err(err, errlen, "connect %s: %s", as, strerror(e));
		return -e;
	}
	return fd;
}

static int dial_tcp(const np_addr *a, const char *as, char *err, size_t errlen)
{
	struct addrinfo *res, *ai;
	int fd = -1, e = EHOSTUNREACH, one = 1, rc;

	rc = np_tr_resolve(a, 0, &res, err, errlen);
	if (rc < 0)
		return rc;
	/* Try every address the name has (::1 then 127.0.0.1 for
	 * "localhost"); report the last failure. */
	for (ai = res; ai; ai = ai->ai_next) {
		fd = socket(ai->ai_family, SOCK_STREAM | SOCK_CLOEXEC, ai->ai_protocol);
		if (fd < 0) {
			e = errno;
			continue;
		}
		e = connect_wait(fd, ai->ai_addr, ai->ai_addrlen);
		if (e == 0)
			break;
		close(fd);
		fd = -1;
	}
	freeaddrinfo(res);
	if (fd < 0) {
		np_tr_err(err, errlen, "connect %s: %s", as, strerror(e));
		return -e;
	}
	/* Small request/response messages: Nagle only adds latency, and a
	 * failure to turn it off costs nothing else. */
	(void)setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
	return fd;
}

static int check_open(int fd, const char *as, char *err, size_t errlen)
{
	if (fcntl(fd, F_GETFD) < 0) {
		np_tr_err(err, errlen, "%s: descriptor %d is not open", as, fd);
		return -EBADF;
	}
	return 0;
}

int np_dial(const np_addr *a, int *rfd, int *wfd, char *err, size_t errlen)
{
	char as[NP_ADDR_STRMAX];
	struct sockaddr_un sun;
	struct sockaddr_storage ss;
	socklen_t len;
	int fd, rc;

	if (!a || !rfd || !wfd) {
		np_tr_err(err, errlen, "dial: no address");
		return -EINVAL;
	}
	*rfd = *wfd = -1;
	np_tr_str(a, as, sizeof as);
	switch (a->kind) {
	case NP_ADDR_UNIX:
		len = np_tr_unix_sockaddr(a, &sun);
		fd = dial_sockaddr(AF_UNIX, (struct sockaddr *)&sun, len, as, err, errlen);
		break;
	case NP_ADDR_TCP:
		fd = dial_tcp(a, as, err, errlen);
		break;
	case NP_ADDR_VSOCK:
		len = np_tr_vsock_sockaddr(a, &ss);
		fd = dial_sockaddr(AF_VSOCK, (struct sockaddr *)&ss, len, as, err, errlen);
		break;
	case NP_ADDR_FD:
	case NP_ADDR_STDIO:
		/* Nothing to connect; but a closed descriptor is better
		 * reported now, naming the address, than as EBADF later. */
		rc = check_open(a->rfd, as, err, errlen);
		if (rc == 0)
			rc = check_open(a->wfd, as, err, errlen);
		if (rc < 0)
			return rc;
		*rfd = a->rfd;
		*wfd = a->wfd;
		return 0;
	default:
		np_tr_err(err, errlen, "dial %s: unknown address kind", as);
		return -EINVAL;
	}
	if (fd < 0)
		return fd;
	*rfd = *wfd = fd;
	return 0;
}

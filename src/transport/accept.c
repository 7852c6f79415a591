/* Accepting a connection and describing who is on the other end. */
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "ninep/transport.h"
#include "tr.h"

static void describe(int fd, const struct sockaddr *sa, socklen_t len, np_peer *p)
{
	np_addr a;

	if (sa->sa_family == AF_UNIX) {
		struct ucred uc;
		socklen_t ul = sizeof uc;

		/* The peer's address is normally unnamed; who it is comes
		 * from the kernel's credentials of the connecting process. */
		if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &uc, &ul) == 0 && ul == sizeof uc) {
			p->has_cred = 1;
			p->pid = uc.pid;
			p->uid = uc.uid;
			p->gid = uc.gid;
			snprintf(p->desc, sizeof p->desc, "unix pid %ld uid %lu", (long)uc.pid,
				 (unsigned long)uc.uid);
		} else {
			snprintf(p->desc, sizeof p->desc, "unix");
		}
		return;
	}
	if (np_tr_from_sockaddr(sa, len, &a) < 0) {
		snprintf(p->desc, sizeof p->desc, "family %d", sa->sa_family);
		return;
	}
	if (a.kind == NP_ADDR_TCP)
		snprintf(p->desc, sizeof p->desc, strchr(a.host, ':') ? "tcp [%s]:%s" : "tcp %s:%s",
			 a.host, a.port);
	else
		snprintf(p->desc, sizeof p->desc, "vsock %u:%u", a.cid, a.vport);
}

int np_accept(int lfd, np_peer *peer)
{
	struct sockaddr_storage ss;
	socklen_t len;
	int fd, one = 1;

	for (;;) {
		len = sizeof ss;
		memset(&ss, 0, sizeof ss);
		fd = accept4(lfd, (struct sockaddr *)&ss, &len, SOCK_NONBLOCK | SOCK_CLOEXEC);
		if (fd >= 0)
			break;
		/* A client that gave up before we got to it is not the
		 * listener's failure: look for the next one. */
		if (errno != EINTR && errno != ECONNABORTED)
			return -errno;
	}
	/* 9P is request/response with small messages: Nagle would only add
	 * latency.  Failing to set it is harmless, so it is not an error. */
	if (ss.ss_family == AF_INET || ss.ss_family == AF_INET6)
		(void)setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
	if (peer) {
		memset(peer, 0, sizeof *peer);
		describe(fd, (struct sockaddr *)&ss, len, peer);
	}
	return fd;
}

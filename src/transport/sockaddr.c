/* Conversions between np_addr and kernel socket addresses, and name
 * resolution for tcp addresses. */
#include <arpa/inet.h>
#include <errno.h>
#include <net/if.h>
#include <netdb.h>
#include <netinet/in.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>

#include <linux/vm_sockets.h>

#include "ninep/transport.h"
#include "tr.h"

socklen_t np_tr_unix_sockaddr(const np_addr *a, struct sockaddr_un *sun)
{
	size_t len = strnlen(a->path, sizeof a->path - 1);

	memset(sun, 0, sizeof *sun);
	sun->sun_family = AF_UNIX;
	if (a->abstract) {
		/* Abstract names start with a NUL and are exactly `len` bytes
		 * long: a trailing NUL would become part of the name. */
		memcpy(sun->sun_path + 1, a->path, len);
		return (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 + len);
	}
	memcpy(sun->sun_path, a->path, len);
	return (socklen_t)(offsetof(struct sockaddr_un, sun_path) + len + 1);
}

socklen_t np_tr_vsock_sockaddr(const np_addr *a, struct sockaddr_storage *ss)
{
	struct sockaddr_vm *svm = (struct sockaddr_vm *)ss;

	memset(ss, 0, sizeof *ss);
	svm->svm_family = AF_VSOCK;
	svm->svm_cid = a->cid;
	svm->svm_port = a->vport;
	return sizeof *svm;
}

static int from_unix(const struct sockaddr_un *sun, socklen_t len, np_addr *a)
{
	size_t off = offsetof(struct sockaddr_un, sun_path);
	size_t n;

	if (len <= off)
		return -ENOENT; /* unnamed (a socketpair or unbound client) */
	n = len - off;
	if (n > sizeof sun->sun_path)
		n = sizeof sun->sun_path;
	if (sun->sun_path[0] == '\0') {
		/* Abstract: the name is exactly the remaining bytes. */
		n--;
		if (n == 0 || n > sizeof a->path - 1 || memchr(sun->sun_path + 1, '\0', n))
			return -ENAMETOOLONG; /* not representable as a string */
		a->abstract = 1;
		memcpy(a->path, sun->sun_path + 1, n);
		a->path[n] = '\0';
		return 0;
	}
	n = strnlen(sun->sun_path, n);
	if (n > sizeof a->path - 1)
		return -ENAMETOOLONG;
	memcpy(a->path, sun->sun_path, n);
	a->path[n] = '\0';
	return 0;
}

int np_tr_from_sockaddr(const struct sockaddr *sa, socklen_t len, np_addr *a)
{
	memset(a, 0, sizeof *a);
	a->rfd = a->wfd = -1;
	if (len < sizeof sa->sa_family)
		return -EINVAL;
	switch (sa->sa_family) {
	case AF_UNIX:
		a->kind = NP_ADDR_UNIX;
		return from_unix((const struct sockaddr_un *)sa, len, a);
	case AF_INET: {
		const struct sockaddr_in *in = (const struct sockaddr_in *)sa;

		if (len < sizeof *in)
			return -EINVAL;
		a->kind = NP_ADDR_TCP;
		inet_ntop(AF_INET, &in->sin_addr, a->host, sizeof a->host);
		snprintf(a->port, sizeof a->port, "%u", ntohs(in->sin_port));
		return 0;
	}
	case AF_INET6: {
		const struct sockaddr_in6 *in6 = (const struct sockaddr_in6 *)sa;
		char ifname[IF_NAMESIZE];
		size_t hl;

		if (len < sizeof *in6)
			return -EINVAL;
		a->kind = NP_ADDR_TCP;
		inet_ntop(AF_INET6, &in6->sin6_addr, a->host, sizeof a->host);
		/* Link-local addresses are meaningless without their zone. */
		if (in6->sin6_scope_id) {
			hl = strlen(a->host);
			if (if_indextoname(in6->sin6_scope_id, ifname))
				snprintf(a->host + hl, sizeof a->host - hl, "%%%s", ifname);
			else
				snprintf(a->host + hl, sizeof a->host - hl, "%%%u",
					 in6->sin6_scope_id);
		}
		snprintf(a->port, sizeof a->port, "%u", ntohs(in6->sin6_port));
		return 0;
	}
	case AF_VSOCK: {
		const struct sockaddr_vm *svm = (const struct sockaddr_vm *)sa;

		if (len < sizeof *svm)
			return -EINVAL;
		a->kind = NP_ADDR_VSOCK;
		a->cid = svm->svm_cid;
		a->vport = svm->svm_port;
		return 0;
	}
	default:
		return -EAFNOSUPPORT;
	}
}

int np_addr_local(int fd, np_addr *a)
{
	struct sockaddr_storage ss;
	socklen_t len = sizeof ss;

	if (!a)
		return -EINVAL;
	if (getsockname(fd, (struct sockaddr *)&ss, &len) < 0)
		return -errno;
	return np_tr_from_sockaddr((struct sockaddr *)&ss, len, a);
}

/* getaddrinfo reports its own codes; the message carries the detail, the
 * errno only has to be a fair summary. */
static int gai_errno(int eai, int sys_errno)
{
	switch (eai) {
	case EAI_SYSTEM:
		return sys_errno ? sys_errno : EIO;
	case EAI_MEMORY:
		return ENOMEM;
	case EAI_AGAIN:
		return EAGAIN;
	case EAI_SERVICE:
	case EAI_SOCKTYPE:
	case EAI_BADFLAGS:
		return EINVAL;
	case EAI_FAMILY:
		return EAFNOSUPPORT;
	default: /* EAI_NONAME, EAI_NODATA, EAI_ADDRFAMILY, EAI_FAIL */
		return EHOSTUNREACH;
	}
}

int np_tr_resolve(const np_addr *a, int passive, struct addrinfo **res,
		  char *err, size_t errlen)
{
	struct addrinfo hints;
	char as[NP_ADDR_STRMAX];
	int rc, e;

	memset(&hints, 0, sizeof hints);
	hints.ai_family = AF_UNSPEC;
	hints.ai_socktype = SOCK_STREAM;
	hints.ai_protocol = IPPROTO_TCP;
	hints.ai_flags = passive ? AI_PASSIVE : 0;
	errno = 0;
	rc = getaddrinfo(a->host, a->port, &hints, res);
	if (rc == 0)
		return 0;
	e = gai_errno(rc, errno);
	np_tr_err(err, errlen, "resolve %s: %s", np_tr_str(a, as, sizeof as),
		  rc == EAI_SYSTEM ? strerror(e) : gai_strerror(rc));
	*res = NULL;
	return -e;
}

/* Listening sockets for unix, tcp and vsock addresses, and the cleanup of
 * unix socket files. */
#include <errno.h>
#include <netdb.h>
#include <netinet/in.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <linux/vm_sockets.h>

#include "ninep/transport.h"
#include "tr.h"

#define LISTEN_FLAGS (SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC)

/* An existing file at a unix socket path: a socket nobody answers on is a
 * leftover of a server that died and may go; a live one or anything that is
 * not a socket is left alone.  Returns 0 when the path is free.
 * Two servers started at the same instant on the same stale path can still
 * race between the probe and bind(); closing that would need a lock file,
 * which is more machinery than the case deserves. */
static int clear_stale(const np_addr *a, const char *as, char *err, size_t errlen)
{
	struct sockaddr_un sun;
	socklen_t len = np_tr_unix_sockaddr(a, &sun);
	struct stat st;
	int probe, rc, e;

	if (lstat(a->path, &st) < 0) {
		if (errno == ENOENT)
			return 0;
		e = errno;
		np_tr_err(err, errlen, "stat %s: %s", as, strerror(e));
		return -e;
	}
	if (!S_ISSOCK(st.st_mode)) {
		np_tr_err(err, errlen, "refusing to replace %s: the path exists and is not a socket", as);
		return -EEXIST;
	}
	/* Non-blocking, so a live server with a full backlog answers EAGAIN
	 * at once instead of making us wait. */
	probe = socket(AF_UNIX, LISTEN_FLAGS, 0);
	if (probe < 0) {
		e = errno;
		np_tr_err(err, errlen, "socket %s: %s", as, strerror(e));
		return -e;
	}
	rc = connect(probe, (struct sockaddr *)&sun, len);
	e = rc < 0 ? errno : 0;
	close(probe);
	if (rc == 0 || e == EAGAIN || e == EINPROGRESS) {
		np_tr_err(err, errlen, "address in use: another server is listening on %s", as);
		return -EADDRINUSE;
	}
	if (e == ENOENT)
		return 0; /* removed meanwhile */
	if (e != ECONNREFUSED) {
		np_tr_err(err, errlen, "probe existing socket %s: %s", as, strerror(e));
		return -e;
	}
	if (unlink(a->path) < 0 && errno != ENOENT) {
		e = errno;
		np_tr_err(err, errlen, "remove stale socket %s: %s", as, strerror(e));
		return -e;
	}
	return 0;
}

static int listen_unix(const np_addr *a, const char *as, int backlog, int mode,
		       char *err, size_t errlen)
{
	struct sockaddr_un sun;
	socklen_t len = np_tr_unix_sockaddr(a, &sun);
	int fd, rc, e;

	if (!a->abstract) {
		rc = clear_stale(a, as, err, errlen);
		if (rc < 0)
			return rc;
	}
	fd = socket(AF_UNIX, LISTEN_FLAGS, 0);
	if (fd < 0) {
		e = errno;
		np_tr_err(err, errlen, "socket %s: %s", as, strerror(e));
		return -e;
	}
	if (bind(fd, (struct sockaddr *)&sun, len) < 0) {
		e = errno;
		close(fd);
		if (e == EADDRINUSE)
			np_tr_err(err, errlen, "address in use: another server is listening on %s", as);
		else
			np_tr_err(err, errlen, "bind %s: %s", as, strerror(e));
		return -e;
	}
	/* chmod the path: fchmod on a socket fd does not touch the file.
	 * Done before listen() so nobody can connect under the umask's
	 * permissions in between.  Abstract sockets have no file and no
	 * permissions at all. */
	if (!a->abstract && mode >= 0 && chmod(a->path, (mode_t)mode) < 0) {
		e = errno;
		unlink(a->path);
		close(fd);
		np_tr_err(err, errlen, "chmod %s: %s", as, strerror(e));
		return -e;
	}
	if (listen(fd, backlog) < 0) {
		e = errno;
		if (!a->abstract)
			unlink(a->path);
		close(fd);
		np_tr_err(err, errlen, "listen %s: %s", as, strerror(e));
		return -e;
	}
	return fd;
}

static int listen_tcp(const np_addr *a, const char *as, int backlog, char *err,
		      size_t errlen)
{
	struct addrinfo *res, *ai;
	const char *step = "bind";
	int fd = -1, e = EADDRNOTAVAIL, one = 1, rc;

	rc = np_tr_resolve(a, 1, &res, err, errlen);
	if (rc < 0)
		return rc;
	/* One fd is returned, so the first address that works wins (a name
	 * may resolve to several). */
	for (ai = res; ai; ai = ai->ai_next) {
		fd = socket(ai->ai_family, LISTEN_FLAGS, ai->ai_protocol);
		if (fd < 0) {
			e = errno;
			step = "socket";
			continue;
		}
		/* A restarted server must not wait out TIME_WAIT connections. */
		if (setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one) < 0) {
			e = errno;
			step = "setsockopt SO_REUSEADDR";
		} else if (bind(fd, ai->ai_addr, ai->ai_addrlen) < 0) {
			e = errno;
			step = "bind";
		} else if (listen(fd, backlog) < 0) {
			e = errno;
			step = "listen";
		} else {
			break;
		}
		close(fd);
		fd = -1;
	}
	freeaddrinfo(res);
	if (fd < 0) {
		np_tr_err(err, errlen, "%s %s: %s", step, as, strerror(e));
		return -e;
	}
	return fd;
}

static int listen_vsock(const np_addr *a, const char *as, int backlog, char *err,
			size_t errlen)
{
	struct sockaddr_storage ss;
	socklen_t len = np_tr_vsock_sockaddr(a, &ss);
	const char *step;
	int fd, e;

	fd = socket(AF_VSOCK, LISTEN_FLAGS, 0);
	if (fd < 0) {
		e = errno;
		np_tr_err(err, errlen, "socket %s: %s%s", as, strerror(e),
			  e == EAFNOSUPPORT ? " (no vsock support in this kernel)" : "");
		return -e;
	}
	if (bind(fd, (struct sockaddr *)&ss, len) < 0)
		step = "bind";
	else if (listen(fd, backlog) < 0)
		step = "listen";
	else
		return fd;
	e = errno;
	close(fd);
	np_tr_err(err, errlen, "%s %s: %s", step, as, strerror(e));
	return -e;
}

int np_listen(const np_addr *a, const struct np_listen_opts *o, char *err, size_t errlen)
{
	char as[NP_ADDR_STRMAX];
	int backlog = o && o->backlog > 0 ? o->backlog : 512;
	int mode = o ? o->mode : -1;

	if (!a) {
		np_tr_err(err, errlen, "listen: no address");
		return -EINVAL;
	}
	np_tr_str(a, as, sizeof as);
	if (mode > 07777) {
		np_tr_err(err, errlen, "listen %s: bad mode %o", as, (unsigned)mode);
		return -EINVAL;
	}
	switch (a->kind) {
	case NP_ADDR_UNIX:
		return listen_unix(a, as, backlog, mode, err, errlen);
	case NP_ADDR_TCP:
		return listen_tcp(a, as, backlog, err, errlen);
	case NP_ADDR_VSOCK:
		return listen_vsock(a, as, backlog, err, errlen);
	default:
		np_tr_err(err, errlen, "cannot listen on %s: not a socket address", as);
		return -EINVAL;
	}
}

void np_unlisten(const np_addr *a)
{
	struct stat st;

	if (!a || a->kind != NP_ADDR_UNIX || a->abstract || !a->path[0])
		return;
	/* Only a socket: the path may have been replaced since we bound it. */
	if (lstat(a->path, &st) == 0 && S_ISSOCK(st.st_mode))
		unlink(a->path);
}

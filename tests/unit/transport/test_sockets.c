/* Listening, dialing and accepting for real over unix sockets and loopback
 * TCP, including the care taken with existing unix socket files.
 *
 * vsock cannot be exercised end to end here: there is no vsock loopback
 * transport (nor vhost-vsock), so a connection could only leave the machine
 * through a guest transport to the hypervisor, or wait for the connect
 * timeout.  The vsock test therefore checks what can be checked locally:
 * listening works or fails with a clear message, and dialing fails clearly
 * when the kernel has no AF_VSOCK at all. */
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <cmocka.h>
#include <linux/vm_sockets.h>

#include "ninep/transport.h"

static char dir[64];

static int setup_dir(void **state)
{
	(void)state;
	strcpy(dir, "/tmp/np-transport-XXXXXX");
	return mkdtemp(dir) ? 0 : -1;
}

static int remove_dir(void **state)
{
	(void)state;
	return rmdir(dir);
}

static np_addr parse(const char *s)
{
	char err[256];
	np_addr a;

	if (np_addr_parse(s, &a, err, sizeof err) != 0)
		fail_msg("%s", err);
	return a;
}

static np_addr parsef(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static np_addr parsef(const char *fmt, ...)
{
	char s[NP_ADDR_STRMAX];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(s, sizeof s, fmt, ap);
	va_end(ap);
	return parse(s);
}

static int listen_ok(const np_addr *a, const struct np_listen_opts *o)
{
	char err[256];
	int fd = np_listen(a, o, err, sizeof err);

	if (fd < 0)
		fail_msg("np_listen: %d %s", fd, err);
	return fd;
}

static int dial_ok(const np_addr *a)
{
	char err[256];
	int rfd, wfd;
	int rc = np_dial(a, &rfd, &wfd, err, sizeof err);

	if (rc != 0)
		fail_msg("np_dial: %d %s", rc, err);
	assert_int_equal(rfd, wfd);
	return rfd;
}

static void assert_flags(int fd, int nonblock)
{
	int fl = fcntl(fd, F_GETFL);
	int fdfl = fcntl(fd, F_GETFD);

	assert_true(fl >= 0 && fdfl >= 0);
	assert_int_equal(!!(fl & O_NONBLOCK), nonblock);
	assert_true(fdfl & FD_CLOEXEC);
}

static void assert_nodelay(int fd)
{
	int v = 0;
	socklen_t l = sizeof v;

	assert_int_equal(getsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &v, &l), 0);
	assert_int_not_equal(v, 0);
}

/* Read exactly n bytes from a possibly non-blocking fd, waiting at most a
 * few seconds. */
static void read_exact(int fd, char *buf, size_t n)
{
	size_t got = 0;

	while (got < n) {
		struct pollfd p = { .fd = fd, .events = POLLIN };

		assert_int_equal(poll(&p, 1, 5000), 1);
		ssize_t r = read(fd, buf + got, n - got);
		assert_true(r > 0);
		got += (size_t)r;
	}
}

/* Bytes go both ways between the dialed and the accepted end. */
static void exchange(int cfd, int sfd)
{
	char buf[8];

	assert_int_equal(write(cfd, "Tping", 5), 5);
	read_exact(sfd, buf, 5);
	assert_memory_equal(buf, "Tping", 5);
	assert_int_equal(write(sfd, "Rpong", 5), 5);
	read_exact(cfd, buf, 5);
	assert_memory_equal(buf, "Rpong", 5);
}

/* Dial, accept, check both ends; returns the peer seen by the server. */
static np_peer connect_pair(int lfd, const np_addr *a, int *cfd, int *sfd)
{
	np_peer peer;

	*cfd = dial_ok(a);
	assert_flags(*cfd, 0);
	*sfd = np_accept(lfd, &peer);
	assert_true(*sfd >= 0);
	assert_flags(*sfd, 1);
	exchange(*cfd, *sfd);
	return peer;
}

static void test_unix_path(void **state)
{
	char want[128];
	np_addr a = parsef("unix:%s/s", dir), got;
	struct stat st;
	np_peer peer;
	int lfd, cfd, sfd;

	(void)state;
	lfd = listen_ok(&a, NULL);
	assert_flags(lfd, 1);
	assert_int_equal(lstat(a.path, &st), 0);
	assert_true(S_ISSOCK(st.st_mode));
	assert_int_equal(np_addr_local(lfd, &got), 0);
	assert_memory_equal(&got, &a, sizeof a);

	assert_int_equal(np_accept(lfd, &peer), -EAGAIN);

	peer = connect_pair(lfd, &a, &cfd, &sfd);
	assert_int_equal(peer.has_cred, 1);
	assert_int_equal(peer.pid, getpid());
	assert_int_equal(peer.uid, getuid());
	assert_int_equal(peer.gid, getgid());
	snprintf(want, sizeof want, "unix pid %d uid %u", (int)getpid(), (unsigned)getuid());
	assert_string_equal(peer.desc, want);

	/* The peer is optional. */
	int c2 = dial_ok(&a);
	int s2 = np_accept(lfd, NULL);
	assert_true(s2 >= 0);
	exchange(c2, s2);
	close(c2);
	close(s2);

	close(cfd);
	close(sfd);
	close(lfd);
	np_unlisten(&a);
	assert_int_equal(lstat(a.path, &st), -1);
	assert_int_equal(errno, ENOENT);
}

static void test_unix_abstract(void **state)
{
	char name[64], err[256], want[300];
	np_addr a, got;
	np_peer peer;
	int lfd, cfd, sfd;

	(void)state;
	snprintf(name, sizeof name, "unix:@ninep-test-%d", (int)getpid());
	a = parse(name);
	lfd = listen_ok(&a, NULL);
	assert_flags(lfd, 1);
	assert_int_equal(np_addr_local(lfd, &got), 0);
	assert_memory_equal(&got, &a, sizeof a);

	peer = connect_pair(lfd, &a, &cfd, &sfd);
	assert_int_equal(peer.has_cred, 1);
	assert_int_equal(peer.pid, getpid());

	/* The name is taken while the first listener lives. */
	assert_int_equal(np_listen(&a, NULL, err, sizeof err), -EADDRINUSE);
	snprintf(want, sizeof want, "address in use: another server is listening on %s", name);
	assert_string_equal(err, want);

	close(cfd);
	close(sfd);
	close(lfd);
	np_unlisten(&a); /* nothing to remove; must not touch the filesystem */

	/* Abstract names vanish with the socket: listening again works. */
	lfd = listen_ok(&a, NULL);
	close(lfd);
}

static void test_tcp_ipv4(void **state)
{
	char want[128];
	np_addr a = parse("tcp:127.0.0.1:0"), bound, dial, caddr;
	np_peer peer;
	int lfd, cfd, sfd;

	(void)state;
	lfd = listen_ok(&a, NULL);
	assert_flags(lfd, 1);
	assert_int_equal(np_addr_local(lfd, &bound), 0);
	assert_int_equal(bound.kind, NP_ADDR_TCP);
	assert_string_equal(bound.host, "127.0.0.1");
	assert_int_not_equal(atoi(bound.port), 0);

	dial = parsef("tcp:127.0.0.1:%s", bound.port);
	peer = connect_pair(lfd, &dial, &cfd, &sfd);
	assert_nodelay(cfd);
	assert_nodelay(sfd);
	assert_int_equal(peer.has_cred, 0);
	assert_int_equal(np_addr_local(cfd, &caddr), 0);
	snprintf(want, sizeof want, "tcp 127.0.0.1:%s", caddr.port);
	assert_string_equal(peer.desc, want);
	close(cfd);
	close(sfd);

	/* By name: resolution is part of dialing. */
	dial = parsef("tcp:localhost:%s", bound.port);
	connect_pair(lfd, &dial, &cfd, &sfd);
	close(cfd);
	close(sfd);
	close(lfd);
}

static void test_tcp_ipv6(void **state)
{
	char err[256], want[128];
	np_addr a = parse("tcp:[::1]:0"), bound, dial, caddr;
	np_peer peer;
	int lfd, cfd, sfd;

	(void)state;
	lfd = np_listen(&a, NULL, err, sizeof err);
	if (lfd == -EADDRNOTAVAIL || lfd == -EAFNOSUPPORT) {
		print_message("no IPv6 loopback here (%s); skipping\n", err);
		skip();
	}
	if (lfd < 0)
		fail_msg("np_listen: %s", err);
	assert_int_equal(np_addr_local(lfd, &bound), 0);
	assert_string_equal(bound.host, "::1");

	dial = parsef("tcp:[::1]:%s", bound.port);
	peer = connect_pair(lfd, &dial, &cfd, &sfd);
	assert_nodelay(cfd);
	assert_nodelay(sfd);
	assert_int_equal(np_addr_local(cfd, &caddr), 0);
	snprintf(want, sizeof want, "tcp [::1]:%s", caddr.port);
	assert_string_equal(peer.desc, want);
	close(cfd);
	close(sfd);
	close(lfd);
}

static void test_tcp_errors(void **state)
{
	char err[256], want[300];
	np_addr a = parse("tcp:127.0.0.1:0"), bound;
	int lfd, rfd = 7, wfd = 7;

	(void)state;
	lfd = listen_ok(&a, NULL);
	assert_int_equal(np_addr_local(lfd, &bound), 0);

	/* The port is taken. */
	a = parsef("tcp:127.0.0.1:%s", bound.port);
	assert_int_equal(np_listen(&a, NULL, err, sizeof err), -EADDRINUSE);
	snprintf(want, sizeof want, "bind tcp:127.0.0.1:%s: Address already in use", bound.port);
	assert_string_equal(err, want);

	/* Nobody listens any more. */
	close(lfd);
	assert_int_equal(np_dial(&a, &rfd, &wfd, err, sizeof err), -ECONNREFUSED);
	snprintf(want, sizeof want, "connect tcp:127.0.0.1:%s: Connection refused", bound.port);
	assert_string_equal(err, want);
	assert_int_equal(rfd, -1);
	assert_int_equal(wfd, -1);

	/* A service name that does not exist (resolved from /etc/services,
	 * no network involved). */
	a = parse("tcp:127.0.0.1:no-such-service");
	assert_int_equal(np_dial(&a, &rfd, &wfd, err, sizeof err), -EINVAL);
	assert_non_null(strstr(err, "resolve tcp:127.0.0.1:no-such-service: "));
	assert_int_equal(np_listen(&a, NULL, err, sizeof err), -EINVAL);
	assert_non_null(strstr(err, "resolve tcp:127.0.0.1:no-such-service: "));
}

/* A socket file left behind by a server that died is replaced. */
static void test_unix_stale(void **state)
{
	np_addr a = parsef("unix:%s/stale", dir);
	struct sockaddr_un sun = { .sun_family = AF_UNIX };
	struct stat st;
	int old, lfd, cfd, sfd;

	(void)state;
	strcpy(sun.sun_path, a.path);
	old = socket(AF_UNIX, SOCK_STREAM, 0);
	assert_true(old >= 0);
	assert_int_equal(bind(old, (struct sockaddr *)&sun, sizeof sun), 0);
	close(old);
	assert_int_equal(lstat(a.path, &st), 0);

	lfd = listen_ok(&a, NULL);
	connect_pair(lfd, &a, &cfd, &sfd);
	close(cfd);
	close(sfd);
	close(lfd);
	np_unlisten(&a);
}

/* A socket somebody is listening on is never taken over. */
static void test_unix_live(void **state)
{
	char err[256], want[300], c;
	np_addr a = parsef("unix:%s/live", dir);
	int lfd, cfd, sfd, probe;

	(void)state;
	lfd = listen_ok(&a, NULL);
	assert_int_equal(np_listen(&a, NULL, err, sizeof err), -EADDRINUSE);
	snprintf(want, sizeof want, "address in use: another server is listening on unix:%s/live", dir);
	assert_string_equal(err, want);

	/* The first server keeps its socket; it saw the probe as a
	 * connection closed at once. */
	probe = np_accept(lfd, NULL);
	assert_true(probe >= 0);
	struct pollfd p = { .fd = probe, .events = POLLIN };
	assert_int_equal(poll(&p, 1, 5000), 1);
	assert_int_equal(read(probe, &c, 1), 0);
	close(probe);
	connect_pair(lfd, &a, &cfd, &sfd);
	close(cfd);
	close(sfd);
	close(lfd);
	np_unlisten(&a);
}

static void assert_file_holds(const char *path, const char *content)
{
	char buf[64] = "";
	int fd = open(path, O_RDONLY);

	assert_true(fd >= 0);
	assert_int_equal(read(fd, buf, sizeof buf - 1), (ssize_t)strlen(content));
	assert_string_equal(buf, content);
	close(fd);
}

/* Whatever is at the path and is not a socket is left alone. */
static void test_unix_not_socket(void **state)
{
	char err[256], want[300], link[100];
	np_addr a = parsef("unix:%s/file", dir), l;
	struct sockaddr_un sun = { .sun_family = AF_UNIX };
	struct stat st;
	int fd, s;

	(void)state;
	fd = open(a.path, O_WRONLY | O_CREAT | O_EXCL, 0644);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, "keep me", 7), 7);
	close(fd);

	assert_int_equal(np_listen(&a, NULL, err, sizeof err), -EEXIST);
	snprintf(want, sizeof want,
		 "refusing to replace unix:%s/file: the path exists and is not a socket", dir);
	assert_string_equal(err, want);
	np_unlisten(&a);
	assert_file_holds(a.path, "keep me");

	/* A symlink, even to a stale socket, is not followed. */
	snprintf(link, sizeof link, "%s/link", dir);
	l = parse("unix:x");
	snprintf(l.path, sizeof l.path, "%s/target", dir);
	strcpy(sun.sun_path, l.path);
	s = socket(AF_UNIX, SOCK_STREAM, 0);
	assert_int_equal(bind(s, (struct sockaddr *)&sun, sizeof sun), 0);
	close(s);
	assert_int_equal(symlink(l.path, link), 0);
	l = parsef("unix:%s", link);
	assert_int_equal(np_listen(&l, NULL, err, sizeof err), -EEXIST);
	np_unlisten(&l);
	assert_int_equal(lstat(link, &st), 0);
	assert_true(S_ISLNK(st.st_mode));
	assert_int_equal(stat(link, &st), 0);
	assert_true(S_ISSOCK(st.st_mode));

	unlink(link);
	snprintf(link, sizeof link, "%s/target", dir);
	unlink(link);
	unlink(a.path);
}

static void test_unix_mode(void **state)
{
	struct np_listen_opts o = { .backlog = 4, .mode = 0600 };
	np_addr a = parsef("unix:%s/mode", dir);
	struct stat st;
	mode_t old = umask(022);
	int lfd, cfd, sfd;

	(void)state;
	lfd = listen_ok(&a, &o);
	assert_int_equal(stat(a.path, &st), 0);
	assert_int_equal(st.st_mode & 07777, 0600);
	connect_pair(lfd, &a, &cfd, &sfd);
	close(cfd);
	close(sfd);
	close(lfd);
	np_unlisten(&a);

	o.mode = 0666; /* wider than the umask allows */
	lfd = listen_ok(&a, &o);
	assert_int_equal(stat(a.path, &st), 0);
	assert_int_equal(st.st_mode & 07777, 0666);
	close(lfd);
	np_unlisten(&a);

	o.mode = -1; /* the umask decides */
	lfd = listen_ok(&a, &o);
	assert_int_equal(stat(a.path, &st), 0);
	assert_int_equal(st.st_mode & 07777, 0755);
	close(lfd);
	np_unlisten(&a);

	umask(077);
	lfd = listen_ok(&a, NULL);
	assert_int_equal(stat(a.path, &st), 0);
	assert_int_equal(st.st_mode & 07777, 0700);
	close(lfd);
	np_unlisten(&a);

	char err[256];
	o.mode = 010000;
	assert_int_equal(np_listen(&a, &o, err, sizeof err), -EINVAL);
	umask(old);
}

static void test_unix_dial_missing(void **state)
{
	char err[256], want[300];
	np_addr a = parsef("unix:%s/nobody", dir);
	int rfd, wfd;

	(void)state;
	assert_int_equal(np_dial(&a, &rfd, &wfd, err, sizeof err), -ENOENT);
	snprintf(want, sizeof want, "connect unix:%s/nobody: No such file or directory", dir);
	assert_string_equal(err, want);
}

static void test_fd_and_stdio(void **state)
{
	char err[256], want[128];
	np_addr a;
	int sv[2], rfd, wfd, c1, c2;

	(void)state;
	assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv), 0);
	a = parsef("fd:%d,%d", sv[0], sv[1]);
	assert_int_equal(np_dial(&a, &rfd, &wfd, err, sizeof err), 0);
	assert_int_equal(rfd, sv[0]);
	assert_int_equal(wfd, sv[1]);
	assert_int_equal(np_listen(&a, NULL, err, sizeof err), -EINVAL);
	snprintf(want, sizeof want, "cannot listen on fd:%d,%d: not a socket address", sv[0], sv[1]);
	assert_string_equal(err, want);

	/* Descriptors that are not open are refused, naming them. */
	c1 = dup(sv[0]);
	c2 = dup(sv[1]);
	close(c1);
	close(c2);
	a = parsef("fd:%d,%d", sv[0], c2);
	assert_int_equal(np_dial(&a, &rfd, &wfd, err, sizeof err), -EBADF);
	snprintf(want, sizeof want, "fd:%d,%d: descriptor %d is not open", sv[0], c2, c2);
	assert_string_equal(err, want);
	close(sv[0]);
	close(sv[1]);

	a = parse("stdio");
	assert_int_equal(np_listen(&a, NULL, err, sizeof err), -EINVAL);
	assert_string_equal(err, "cannot listen on stdio: not a socket address");
	/* Standard input may be closed where tests run: then it is named. */
	int rc = np_dial(&a, &rfd, &wfd, err, sizeof err);
	if (fcntl(0, F_GETFD) >= 0 && fcntl(1, F_GETFD) >= 0) {
		assert_int_equal(rc, 0);
		assert_int_equal(rfd, 0);
		assert_int_equal(wfd, 1);
	} else {
		assert_int_equal(rc, -EBADF);
		assert_non_null(strstr(err, "stdio: descriptor"));
	}
}

static void test_accept_errors(void **state)
{
	int sv[2];

	(void)state;
	assert_int_equal(np_accept(-1, NULL), -EBADF);
	assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
	assert_int_equal(np_accept(sv[0], NULL), -EINVAL); /* not listening */
	close(sv[0]);
	close(sv[1]);
}

static void test_vsock(void **state)
{
	char err[256], want[300];
	np_addr a = parse("vsock:any:4294967295"), got;
	int lfd, rfd, wfd, probe;

	(void)state;
	lfd = np_listen(&a, NULL, err, sizeof err);
	if (lfd >= 0) {
		/* A guest transport exists: listening works even though
		 * nothing can reach us from here. */
		assert_flags(lfd, 1);
		assert_int_equal(np_addr_local(lfd, &got), 0);
		assert_int_equal(got.kind, NP_ADDR_VSOCK);
		assert_int_not_equal(got.vport, VMADDR_PORT_ANY);
		assert_int_equal(np_accept(lfd, NULL), -EAGAIN);
		close(lfd);
	} else {
		snprintf(want, sizeof want, "vsock:any:4294967295: %s", strerror(-lfd));
		print_message("vsock listen: %s\n", err);
		assert_non_null(strstr(err, want));
	}

	/* Dialing is only tried where it cannot leave the machine: without
	 * AF_VSOCK the socket itself fails. */
	probe = socket(AF_VSOCK, SOCK_STREAM, 0);
	if (probe >= 0) {
		close(probe);
		return;
	}
	int e = errno;
	a = parse("vsock:local:564");
	assert_int_equal(np_dial(&a, &rfd, &wfd, err, sizeof err), -e);
	snprintf(want, sizeof want, "socket vsock:local:564: %s", strerror(e));
	assert_string_equal(err, want);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_unix_path),
		cmocka_unit_test(test_unix_abstract),
		cmocka_unit_test(test_tcp_ipv4),
		cmocka_unit_test(test_tcp_ipv6),
		cmocka_unit_test(test_tcp_errors),
		cmocka_unit_test(test_unix_stale),
		cmocka_unit_test(test_unix_live),
		cmocka_unit_test(test_unix_not_socket),
		cmocka_unit_test(test_unix_mode),
		cmocka_unit_test(test_unix_dial_missing),
		cmocka_unit_test(test_fd_and_stdio),
		cmocka_unit_test(test_accept_errors),
		cmocka_unit_test(test_vsock),
	};
	return cmocka_run_group_tests(tests, setup_dir, remove_dir);
}

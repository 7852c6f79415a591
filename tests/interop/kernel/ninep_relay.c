/* ninep-relay: mounts a 9P file system in the guest over a virtio-serial
 * port. The kernel's fd transport needs a file with read_iter/write_iter,
 * which a virtio console port lacks (mount fails with EINVAL), so we give
 * the kernel one end of a socketpair and copy bytes between the other end
 * and the port in a background process. When the file system is unmounted
 * the kernel closes its end; the copier sees EOF and exits, freeing the port
 * for the next mount (which starts a new 9P session on the same stream).
 *
 * usage: ninep-relay PORTNAME MOUNTPOINT OPTIONS
 * OPTIONS are passed to mount(2) after trans=fd,rfdno=N,wfdno=N. */
#include <errno.h>
#include <fcntl.h>
#include <glob.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static void die(const char *what)
{
	fprintf(stderr, "ninep-relay: %s: %s\n", what, strerror(errno));
	exit(1);
}

/* Without udev there is no /dev/virtio-ports/NAME: find the port whose sysfs
 * name matches and create its device node from the dev file. */
static int find_port(const char *name, char *node, size_t cap)
{
	glob_t g;
	if (glob("/sys/class/virtio-ports/*/name", 0, NULL, &g) != 0)
		return -1;
	int found = -1;
	for (size_t i = 0; i < g.gl_pathc && found < 0; i++) {
		char buf[128] = "";
		FILE *f = fopen(g.gl_pathv[i], "r");
		if (!f)
			continue;
		if (!fgets(buf, sizeof(buf), f))
			buf[0] = '\0';
		fclose(f);
		buf[strcspn(buf, "\n")] = '\0';
		if (strcmp(buf, name) != 0)
			continue;
		/* /sys/class/virtio-ports/vportNpM/name: the directory names the device. */
		char dir[512], devfile[600];
		snprintf(dir, sizeof(dir), "%s", g.gl_pathv[i]);
		*strrchr(dir, '/') = '\0';
		snprintf(devfile, sizeof(devfile), "%s/dev", dir);
		unsigned maj, min;
		f = fopen(devfile, "r");
		if (!f)
			continue;
		int ok = fscanf(f, "%u:%u", &maj, &min) == 2;
		fclose(f);
		if (!ok)
			continue;
		snprintf(node, cap, "/dev/%s", strrchr(dir, '/') + 1);
		if (mknod(node, S_IFCHR | 0600, makedev(maj, min)) != 0 && errno != EEXIST)
			break;
		found = 0;
	}
	globfree(&g);
	return found;
}

/* The port is exclusive: a previous session's copier may still be closing it. */
static int open_port(const char *node)
{
	for (int i = 0; i < 500; i++) {
		int fd = open(node, O_RDWR | O_CLOEXEC);
		if (fd >= 0 || errno != EBUSY)
			return fd;
		struct timespec ts = {0, 20 * 1000 * 1000};
		nanosleep(&ts, NULL);
	}
	errno = EBUSY;
	return -1;
}

/* Copy whatever is readable from IN to OUT; 0 on EOF, -1 on error. */
static int pump_once(int in, int out, char *buf, size_t cap)
{
	ssize_t n = read(in, buf, cap);
	if (n == 0)
		return 0;
	if (n < 0)
		return errno == EINTR || errno == EAGAIN ? 1 : -1;
	for (ssize_t done = 0; done < n;) {
		ssize_t w = write(out, buf + done, (size_t)(n - done));
		if (w < 0) {
			if (errno == EINTR)
				continue;
			return -1;
		}
		done += w;
	}
	return 1;
}

static void copier(int port, int sock)
{
	static char buf[1 << 20];
	struct pollfd p[2] = {{.fd = port, .events = POLLIN}, {.fd = sock, .events = POLLIN}};
	for (;;) {
		if (poll(p, 2, -1) < 0) {
			if (errno == EINTR)
				continue;
			_exit(1);
		}
		if (p[1].revents & (POLLIN | POLLHUP | POLLERR)) {
			if (pump_once(sock, port, buf, sizeof(buf)) <= 0)
				_exit(0); /* unmounted: the kernel closed its end */
		}
		if (p[0].revents & POLLIN) {
			if (pump_once(port, sock, buf, sizeof(buf)) < 0)
				_exit(1);
		} else if (p[0].revents & (POLLHUP | POLLERR)) {
			/* Host side gone: nothing more will arrive. Exiting closes our
			 * socket end, so the kernel sees an error rather than a hang. */
			_exit(1);
		}
	}
}

int main(int argc, char **argv)
{
	if (argc != 4) {
		fprintf(stderr, "usage: ninep-relay PORTNAME MOUNTPOINT OPTIONS\n");
		return 2;
	}
	char node[256];
	if (find_port(argv[1], node, sizeof(node)) != 0) {
		fprintf(stderr, "ninep-relay: no virtio port named %s\n", argv[1]);
		return 1;
	}
	int port = open_port(node);
	if (port < 0)
		die(node);
	int sv[2];
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0)
		die("socketpair");
	pid_t pid = fork();
	if (pid < 0)
		die("fork");
	if (pid == 0) {
		close(sv[0]);
		setsid();
		signal(SIGHUP, SIG_IGN);
		copier(port, sv[1]);
	}
	close(port);
	close(sv[1]);
	char opts[4096];
	snprintf(opts, sizeof(opts), "trans=fd,rfdno=%d,wfdno=%d,%s", sv[0], sv[0], argv[3]);
	if (mount("ninep", argv[2], "9p", 0, opts) != 0) {
		int e = errno;
		kill(pid, SIGKILL);
		waitpid(pid, NULL, 0);
		errno = e;
		fprintf(stderr, "ninep-relay: mount -t 9p -o %s: %s\n", opts, strerror(e));
		return 1;
	}
	/* The mount holds its own references to the socket. */
	close(sv[0]);
	return 0;
}

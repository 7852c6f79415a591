/* Fault tests against a real ninepd process: its limits, descriptor
 * exhaustion, a full file system, thousands of connections, and writes that
 * must survive the daemon being killed. */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "daemon.h"

static uint64_t now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

static void rm_rf(const char *path)
{
	char cmd[512];
	snprintf(cmd, sizeof cmd, "rm -rf '%s'", path);
	if (system(cmd) != 0)
		fprintf(stderr, "cannot remove %s\n", path);
}

static void show_log(const struct nd *d)
{
	char cmd[256];
	snprintf(cmd, sizeof cmd, "tail -5 '%s' >&2", d->log);
	if (system(cmd) != 0)
		return;
}

static int log_has(const struct nd *d, const char *what)
{
	FILE *f = fopen(d->log, "r");
	char line[1024];
	int found = 0;
	while (f && fgets(line, sizeof line, f))
		found |= strstr(line, what) != NULL;
	if (f)
		fclose(f);
	return found;
}

/* ---- fid limit through the daemon's option ----
 * ninepd --max-fids 4: the fifth fid is refused with EMFILE, the session
 * goes on, and a clunk makes room. */
static void test_max_fids(void **state)
{
	(void)state;
	struct nd d;
	const char *args[] = {"--max-fids", "4", "--ramfs", NULL};
	assert_int_equal(nd_start(&d, args, 0), 0);
	struct wc *w = wc_dial(d.sock);
	assert_non_null(w);
	assert_int_equal(wc_version(w, 65536, "9P2000.L"), 0);
	assert_int_equal(wc_attach(w, 1, "root", 0, ""), 0);
	for (uint32_t f = 2; f <= 4; f++)
		assert_int_equal(wc_walk(w, 1, f, 0, NULL), 0);
	assert_int_equal(wc_walk(w, 1, 5, 0, NULL), EMFILE);
	assert_int_equal(wc_clunk(w, 3), 0);
	assert_int_equal(wc_walk(w, 1, 5, 0, NULL), 0);
	assert_int_equal(wc_getattr(w, 5), 0);
	wc_close(w);
	assert_int_equal(nd_stop(&d), 0);
	nd_cleanup(&d);
}

/* ---- descriptor exhaustion ----
 * ninepd (passthrough) with RLIMIT_NOFILE 64: walking (each fid holds a
 * descriptor) ends in EMFILE/ENFILE errors as Rlerror, not a crash or a
 * dropped connection; a client connecting meanwhile (accept() fails with
 * EMFILE) is served once descriptors are free again; clunks make walks work
 * again. */
static void test_fd_exhaustion(void **state)
{
	(void)state;
	char exp[] = "/tmp/ninep-fdx.XXXXXX";
	assert_non_null(mkdtemp(exp));
	char p[600];
	snprintf(p, sizeof p, "%s/sub", exp);
	assert_int_equal(mkdir(p, 0755), 0);
	struct nd d;
	const char *args[] = {"--threads", "1", exp, NULL};
	assert_int_equal(nd_start(&d, args, 64), 0);
	struct wc *a = wc_dial(d.sock);
	assert_non_null(a);
	assert_int_equal(wc_version(a, 65536, "9P2000.L"), 0);
	assert_int_equal(wc_attach(a, 1, "root", 0, ""), 0);
	const char *sub[] = {"sub"};
	uint32_t fid = 2;
	int err = 0;
	for (; fid < 300; fid++) {
		err = wc_walk(a, 1, fid, 1, sub);
		if (err)
			break;
	}
	print_message("walk %u: errno %d\n", fid, err);
	assert_true(err == EMFILE || err == ENFILE);
	/* The session survives the error. */
	assert_int_equal(wc_getattr(a, 1), 0);

	/* A new client while no descriptor is left: its connect lands in the
	 * backlog; accept() fails with EMFILE until we give some back. */
	struct wc *b = wc_dial(d.sock);
	assert_non_null(b);
	np_fcall v = {.type = NP_TVERSION, .tag = NP_NOTAG};
	v.version.msize = 65536;
	v.version.version = np_strz("9P2000.L");
	assert_int_equal(wc_send(b, &v), 0);
	usleep(300000);
	for (uint32_t f = 2; f < 12; f++)
		assert_int_equal(wc_clunk(a, f), 0);
	uint64_t t0 = now_ms();
	assert_int_equal(wc_recv(b, 5000), 0);
	assert_int_equal(b->r.type, NP_RVERSION);
	print_message("late client answered after %llu ms\n", (unsigned long long)(now_ms() - t0));
	/* The scenario really happened: accept() failed for lack of
	 * descriptors (the daemon logs it) and was retried later. */
	assert_true(log_has(&d, "accept: Too many open files"));
	b->d = NP_9P2000L;
	assert_int_equal(wc_attach(b, 1, "root", 0, ""), 0);
	assert_int_equal(wc_walk(b, 1, 2, 1, sub), 0);
	assert_int_equal(wc_walk(a, 1, 2, 1, sub), 0);
	wc_close(b);
	wc_close(a);
	assert_int_equal(nd_stop(&d), 0);
	nd_cleanup(&d);
	rm_rf(exp);
}

/* ---- a full file system ----
 * Export a 1 MiB tmpfs: writes end in ENOSPC, the server keeps serving
 * (this and other connections), and deleting the file makes writes work
 * again. */
static void test_enospc(void **state)
{
	(void)state;
	char mnt[] = "/tmp/ninep-nospc.XXXXXX";
	assert_non_null(mkdtemp(mnt));
	if (mount("tmpfs", mnt, "tmpfs", 0, "size=1m,mode=0755") < 0) {
		rmdir(mnt);
		print_message("cannot mount tmpfs (%s): skipped\n", strerror(errno));
		skip();
	}
	struct nd d;
	const char *args[] = {mnt, NULL};
	assert_int_equal(nd_start(&d, args, 0), 0);
	struct wc *w = wc_dial(d.sock);
	assert_non_null(w);
	assert_int_equal(wc_version(w, 65536, "9P2000.L"), 0);
	assert_int_equal(wc_attach(w, 1, "root", 0, ""), 0);
	assert_int_equal(wc_walk(w, 1, 2, 0, NULL), 0);
	assert_int_equal(wc_lcreate(w, 2, "big", NP_L_O_RDWR, 0644), 0);
	static uint8_t chunk[32768];
	memset(chunk, 0xab, sizeof chunk);
	uint64_t off = 0;
	int err = 0;
	for (int i = 0; i < 200; i++) {
		err = wc_write(w, 2, off, chunk, sizeof chunk);
		if (err)
			break;
		assert_int_equal(w->r.type, NP_RWRITE);
		assert_true(w->r.rwrite.count > 0);
		off += w->r.rwrite.count;
	}
	print_message("wrote %llu bytes, then errno %d\n", (unsigned long long)off, err);
	assert_int_equal(err, ENOSPC);
	assert_true(off >= 512 * 1024 && off <= 1024 * 1024);
	/* Still serving, here and elsewhere. */
	assert_int_equal(wc_getattr(w, 2), 0);
	assert_int_equal(w->r.rgetattr.size, off);
	struct wc *o = wc_dial(d.sock);
	assert_int_equal(wc_version(o, 65536, "9P2000.L"), 0);
	assert_int_equal(wc_attach(o, 1, "root", 0, ""), 0);
	assert_int_equal(wc_walk(o, 1, 2, 0, NULL), 0);
	assert_int_equal(wc_lcreate(o, 2, "small", NP_L_O_RDWR, 0644), 0);
	assert_int_equal(wc_write(o, 2, 0, chunk, sizeof chunk), ENOSPC);
	/* Deleting frees the space. */
	assert_int_equal(wc_clunk(w, 2), 0);
	assert_int_equal(wc_unlinkat(w, 1, "big", 0), 0);
	assert_int_equal(wc_write(o, 2, 0, chunk, sizeof chunk), 0);
	assert_int_equal(o->r.rwrite.count, sizeof chunk);
	wc_close(o);
	wc_close(w);
	assert_int_equal(nd_stop(&d), 0);
	nd_cleanup(&d);
	umount2(mnt, MNT_DETACH);
	rmdir(mnt);
}

/* ---- durability ----
 * Data acknowledged by Rwrite and made durable by Rfsync is in the file after
 * the daemon is killed with SIGKILL (no chance to flush anything itself). */
static void test_durability(void **state)
{
	(void)state;
	char exp[] = "/tmp/ninep-dur.XXXXXX";
	assert_non_null(mkdtemp(exp));
	struct nd d;
	const char *args[] = {exp, NULL};
	assert_int_equal(nd_start(&d, args, 0), 0);
	struct wc *w = wc_dial(d.sock);
	assert_int_equal(wc_version(w, 65536, "9P2000.L"), 0);
	assert_int_equal(wc_attach(w, 1, "root", 0, ""), 0);
	assert_int_equal(wc_walk(w, 1, 2, 0, NULL), 0);
	assert_int_equal(wc_lcreate(w, 2, "durable", NP_L_O_WRONLY, 0644), 0);
	enum { LEN = 300000 };
	uint8_t *data = malloc(LEN);
	for (int i = 0; i < LEN; i++)
		data[i] = (uint8_t)(i * 7 + i / 251);
	for (uint32_t off = 0; off < LEN;) {
		uint32_t n = LEN - off < 60000 ? LEN - off : 60000;
		assert_int_equal(wc_write(w, 2, off, data + off, n), 0);
		assert_int_equal(w->r.rwrite.count, n);
		off += n;
	}
	assert_int_equal(wc_fsync(w, 2), 0);
	assert_int_equal(w->r.type, NP_RFSYNC);
	nd_kill(&d);
	wc_close(w);
	char p[600];
	snprintf(p, sizeof p, "%s/durable", exp);
	int fd = open(p, O_RDONLY);
	assert_true(fd >= 0);
	uint8_t *back = malloc(LEN + 1);
	ssize_t got = 0, n;
	while ((n = read(fd, back + got, (size_t)(LEN + 1 - got))) > 0)
		got += n;
	close(fd);
	assert_int_equal(got, LEN);
	assert_memory_equal(back, data, LEN);
	free(back);
	free(data);
	nd_cleanup(&d);
	rm_rf(exp);
}

/* ---- 10,000 connections ----
 * Ten thousand clients connect, each negotiates and attaches, then all work
 * at once (clone, getattr, clunk, pipelined); a fresh client is answered
 * promptly throughout. */
enum { NCONN = 10000 };

static int raw_send(int fd, const np_fcall *f)
{
	uint8_t buf[256];
	int n = np_encode(f, NP_9P2000L, buf, sizeof buf);
	if (n < 0)
		return n;
	for (int off = 0; off < n;) {
		ssize_t k = send(fd, buf + off, (size_t)(n - off), MSG_NOSIGNAL);
		if (k < 0)
			return -errno;
		off += (int)k;
	}
	return 0;
}

/* One reply of the expected type. */
static int raw_recv(int fd, uint8_t type)
{
	uint8_t buf[512];
	size_t got = 0, want = 4;
	while (got < want) {
		struct pollfd pf = {.fd = fd, .events = POLLIN};
		if (poll(&pf, 1, 10000) <= 0)
			return -ETIMEDOUT;
		ssize_t k = read(fd, buf + got, want - got);
		if (k <= 0)
			return -ECONNRESET;
		got += (size_t)k;
		if (got == 4) {
			want = np_frame_size(buf);
			if (want < NP_HDRSZ || want > sizeof buf)
				return -EPROTO;
		}
	}
	np_fcall r;
	if (np_decode(buf, want, NP_9P2000L, 0, &r, NULL) < 0)
		return -EPROTO;
	return r.type == type ? 0 : -EPROTO;
}

static uint64_t probe(const char *sock)
{
	uint64_t t0 = now_ms();
	struct wc *w = wc_dial(sock);
	assert_non_null(w);
	assert_int_equal(wc_version(w, 65536, "9P2000.L"), 0);
	assert_int_equal(wc_attach(w, 1, "probe", 0, ""), 0);
	assert_int_equal(wc_getattr(w, 1), 0);
	wc_close(w);
	return now_ms() - t0;
}

static void test_10k_connections(void **state)
{
	(void)state;
	if (nd_raise_nofile(NCONN + 1000) < 0) {
		print_message("cannot raise RLIMIT_NOFILE: skipped\n");
		skip();
	}
	struct nd d;
	const char *args[] = {"--ramfs", NULL};
	assert_int_equal(nd_start(&d, args, NCONN + 2000), 0);
	int *fds = malloc(NCONN * sizeof *fds);
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	assert_true(strlen(d.sock) < sizeof sa.sun_path);
	memcpy(sa.sun_path, d.sock, strlen(d.sock) + 1);
	uint64_t t0 = now_ms();
	np_fcall v = {.type = NP_TVERSION, .tag = NP_NOTAG};
	v.version.msize = 8192;
	v.version.version = np_strz("9P2000.L");
	for (int i = 0; i < NCONN; i++) {
		fds[i] = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
		assert_true(fds[i] >= 0);
		if (connect(fds[i], (struct sockaddr *)&sa, sizeof sa) < 0)
			fail_msg("connect %d: %s", i, strerror(errno));
		assert_int_equal(raw_send(fds[i], &v), 0);
	}
	for (int i = 0; i < NCONN; i++)
		if (raw_recv(fds[i], NP_RVERSION))
			fail_msg("Rversion %d", i);
	uint64_t t1 = now_ms();
	for (int i = 0; i < NCONN; i++) {
		np_fcall a = {.type = NP_TATTACH, .tag = 1};
		a.tattach.fid = 1;
		a.tattach.afid = NP_NOFID;
		a.tattach.uname = np_strz("u");
		a.tattach.aname = np_strz("");
		a.tattach.n_uname = (uint32_t)i;
		assert_int_equal(raw_send(fds[i], &a), 0);
	}
	for (int i = 0; i < NCONN; i++)
		if (raw_recv(fds[i], NP_RATTACH))
			fail_msg("Rattach %d", i);
	uint64_t p1 = probe(d.sock);
	uint64_t t2 = now_ms();
	/* All work at once: three pipelined requests each. */
	for (int i = 0; i < NCONN; i++) {
		np_fcall w = {.type = NP_TWALK, .tag = 2};
		w.twalk.fid = 1;
		w.twalk.newfid = 2;
		np_fcall g = {.type = NP_TGETATTR, .tag = 3};
		g.tgetattr.fid = 2;
		g.tgetattr.request_mask = NP_GETATTR_BASIC;
		np_fcall c = {.type = NP_TCLUNK, .tag = 4};
		c.tclunk.fid = 2;
		assert_int_equal(raw_send(fds[i], &w), 0);
		assert_int_equal(raw_send(fds[i], &g), 0);
		assert_int_equal(raw_send(fds[i], &c), 0);
	}
	uint64_t p2 = probe(d.sock);
	for (int i = 0; i < NCONN; i++)
		if (raw_recv(fds[i], NP_RWALK) || raw_recv(fds[i], NP_RGETATTR) ||
		    raw_recv(fds[i], NP_RCLUNK))
			fail_msg("work %d", i);
	uint64_t t3 = now_ms();
	print_message("%d conns: version %llu ms, attach %llu ms, work %llu ms; probes %llu, %llu ms\n",
		      NCONN, (unsigned long long)(t1 - t0), (unsigned long long)(t2 - t1),
		      (unsigned long long)(t3 - t2), (unsigned long long)p1, (unsigned long long)p2);
	assert_true(p1 < 3000 && p2 < 3000);
	for (int i = 0; i < NCONN; i++)
		close(fds[i]);
	free(fds);
	/* And after they all left. */
	usleep(200000);
	assert_true(probe(d.sock) < 3000);
	int st = nd_stop(&d);
	if (st != 0)
		show_log(&d);
	assert_int_equal(st, 0);
	nd_cleanup(&d);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest quick[] = {
		cmocka_unit_test(test_max_fids),
		cmocka_unit_test(test_fd_exhaustion),
		cmocka_unit_test(test_enospc),
		cmocka_unit_test(test_durability),
	};
	const struct CMUnitTest slow[] = {
		cmocka_unit_test(test_10k_connections),
	};
	if (argc > 1 && strcmp(argv[1], "--slow") == 0)
		return cmocka_run_group_tests_name("fault-daemon-slow", slow, NULL, NULL);
	return cmocka_run_group_tests_name("fault-daemon", quick, NULL, NULL);
}

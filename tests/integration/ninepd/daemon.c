#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "daemon.h"

int nd_raise_nofile(long n)
{
	struct rlimit rl;
	if (getrlimit(RLIMIT_NOFILE, &rl) < 0)
		return -errno;
	if ((long)rl.rlim_cur >= n)
		return 0;
	rl.rlim_cur = (rlim_t)n;
	if ((long)rl.rlim_max < n)
		rl.rlim_max = (rlim_t)n;
	return setrlimit(RLIMIT_NOFILE, &rl) < 0 ? -errno : 0;
}

static int try_connect(const char *path)
{
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	snprintf(sa.sun_path, sizeof sa.sun_path, "%s", path);
	if (connect(fd, (struct sockaddr *)&sa, sizeof sa) < 0) {
		int e = errno;
		close(fd);
		return -e;
	}
	return fd;
}

int nd_start(struct nd *d, const char *const *args, long nofile)
{
	memset(d, 0, sizeof *d);
	snprintf(d->dir, sizeof d->dir, "/tmp/ninepd-test.XXXXXX");
	if (!mkdtemp(d->dir))
		return -errno;
	snprintf(d->sock, sizeof d->sock, "%s/sock", d->dir);
	snprintf(d->addr, sizeof d->addr, "unix:%s", d->sock);
	snprintf(d->log, sizeof d->log, "%s/log", d->dir);
	const char *bin = getenv("NINEPD");
	if (!bin)
		bin = "ninepd";
	const char *argv[64];
	int n = 0;
	argv[n++] = bin;
	argv[n++] = "--listen";
	argv[n++] = d->addr;
	for (int i = 0; args[i] && n < 62; i++)
		argv[n++] = args[i];
	argv[n] = NULL;

	pid_t pid = fork();
	if (pid < 0)
		return -errno;
	if (pid == 0) {
		int lfd = open(d->log, O_WRONLY | O_CREAT | O_TRUNC, 0644);
		if (lfd >= 0) {
			dup2(lfd, 1);
			dup2(lfd, 2);
			close(lfd);
		}
		/* A test that fails half-way must not leave daemons behind. */
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		if (nofile > 0) {
			/* Soft and hard: the daemon cannot raise it back itself. */
			struct rlimit rl = {(rlim_t)nofile, (rlim_t)nofile};
			setrlimit(RLIMIT_NOFILE, &rl);
		}
		execvp(bin, (char *const *)argv);
		_exit(127);
	}
	d->pid = pid;
	/* Wait until it answers (or died). */
	for (int i = 0; i < 500; i++) {
		int st;
		if (waitpid(pid, &st, WNOHANG) == pid) {
			d->pid = 0;
			return -ECHILD;
		}
		int fd = try_connect(d->sock);
		if (fd >= 0) {
			close(fd);
			return 0;
		}
		usleep(10000);
	}
	nd_kill(d);
	return -ETIMEDOUT;
}

int nd_stop(struct nd *d)
{
	if (d->pid <= 0)
		return -1;
	kill(d->pid, SIGTERM);
	int st = 0;
	while (waitpid(d->pid, &st, 0) < 0 && errno == EINTR)
		;
	d->pid = 0;
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

void nd_kill(struct nd *d)
{
	if (d->pid <= 0)
		return;
	kill(d->pid, SIGKILL);
	while (waitpid(d->pid, NULL, 0) < 0 && errno == EINTR)
		;
	d->pid = 0;
}

void nd_cleanup(struct nd *d)
{
	if (!d->dir[0])
		return;
	unlink(d->sock);
	unlink(d->log);
	rmdir(d->dir);
	d->dir[0] = '\0';
}

/* ---- raw-frame client ---- */

struct wc *wc_dial(const char *path)
{
	int fd = try_connect(path);
	if (fd < 0) {
		errno = -fd;
		return NULL;
	}
	struct wc *w = calloc(1, sizeof *w);
	w->fd = fd;
	w->d = NP_9P2000L;
	w->msize = WC_BUFSZ;
	w->tx = malloc(WC_BUFSZ);
	w->rx = malloc(WC_BUFSZ);
	return w;
}

void wc_close(struct wc *w)
{
	if (!w)
		return;
	close(w->fd);
	free(w->tx);
	free(w->rx);
	free(w);
}

int wc_send_raw(struct wc *w, const void *buf, size_t len)
{
	const uint8_t *p = buf;
	while (len) {
		ssize_t n = send(w->fd, p, len, MSG_NOSIGNAL);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

int wc_send(struct wc *w, const np_fcall *f)
{
	int n = np_encode(f, w->d, w->tx, WC_BUFSZ);
	return n < 0 ? n : wc_send_raw(w, w->tx, (size_t)n);
}

static int read_full(int fd, uint8_t *p, size_t len, int timeout_ms)
{
	while (len) {
		struct pollfd pf = {.fd = fd, .events = POLLIN};
		int r = poll(&pf, 1, timeout_ms);
		if (r == 0)
			return -ETIMEDOUT;
		if (r < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		ssize_t n = read(fd, p, len);
		if (n == 0)
			return -ECONNRESET;
		if (n < 0) {
			if (errno == EINTR || errno == EAGAIN)
				continue;
			return -ECONNRESET;
		}
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

int wc_recv(struct wc *w, int timeout_ms)
{
	int r = read_full(w->fd, w->rx, 4, timeout_ms);
	if (r < 0)
		return r;
	uint32_t size = np_frame_size(w->rx);
	if (size < NP_HDRSZ || size > WC_BUFSZ)
		return -EPROTO;
	r = read_full(w->fd, w->rx + 4, size - 4, timeout_ms);
	if (r < 0)
		return r;
	return np_decode(w->rx, size, w->d, 0, &w->r, NULL) < 0 ? -EPROTO : 0;
}

int wc_rpc(struct wc *w, const np_fcall *f)
{
	int r = wc_send(w, f);
	return r < 0 ? r : wc_recv(w, 10000);
}

int wc_err(const struct wc *w)
{
	if (w->r.type == NP_RLERROR)
		return (int)w->r.rlerror.ecode;
	if (w->r.type == NP_RERROR)
		return w->r.rerror.ecode ? (int)w->r.rerror.ecode : np_strerrno(w->r.rerror.ename);
	return 0;
}

static int rpc_err(struct wc *w, const np_fcall *f)
{
	int r = wc_rpc(w, f);
	return r < 0 ? r : wc_err(w);
}

int wc_version(struct wc *w, uint32_t msize, const char *version)
{
	np_fcall f = {.type = NP_TVERSION, .tag = NP_NOTAG};
	f.version.msize = msize;
	f.version.version = np_strz(version);
	int r = wc_rpc(w, &f);
	if (r < 0)
		return r;
	if (w->r.type != NP_RVERSION)
		return -EPROTO;
	int d = np_dialect_parse(w->r.version.version.s, w->r.version.version.len);
	if (d >= 0)
		w->d = (enum np_dialect)d;
	w->msize = w->r.version.msize;
	return 0;
}

int wc_attach(struct wc *w, uint32_t fid, const char *uname, uint32_t n_uname, const char *aname)
{
	np_fcall f = {.type = NP_TATTACH, .tag = 1};
	f.tattach.fid = fid;
	f.tattach.afid = NP_NOFID;
	f.tattach.uname = np_strz(uname);
	f.tattach.aname = np_strz(aname);
	f.tattach.n_uname = n_uname;
	return rpc_err(w, &f);
}

int wc_walk(struct wc *w, uint32_t fid, uint32_t newfid, int n, const char *const *names)
{
	np_fcall f = {.type = NP_TWALK, .tag = 2};
	f.twalk.fid = fid;
	f.twalk.newfid = newfid;
	f.twalk.nwname = (uint16_t)n;
	for (int i = 0; i < n; i++)
		f.twalk.wname[i] = np_strz(names[i]);
	return rpc_err(w, &f);
}

int wc_clunk(struct wc *w, uint32_t fid)
{
	np_fcall f = {.type = NP_TCLUNK, .tag = 3};
	f.tclunk.fid = fid;
	return rpc_err(w, &f);
}

int wc_lopen(struct wc *w, uint32_t fid, uint32_t flags)
{
	np_fcall f = {.type = NP_TLOPEN, .tag = 4};
	f.tlopen.fid = fid;
	f.tlopen.flags = flags;
	return rpc_err(w, &f);
}

int wc_lcreate(struct wc *w, uint32_t fid, const char *name, uint32_t flags, uint32_t mode)
{
	np_fcall f = {.type = NP_TLCREATE, .tag = 5};
	f.tlcreate.fid = fid;
	f.tlcreate.name = np_strz(name);
	f.tlcreate.flags = flags;
	f.tlcreate.mode = mode;
	f.tlcreate.gid = NP_NONUNAME;
	return rpc_err(w, &f);
}

int wc_mkdir(struct wc *w, uint32_t dfid, const char *name, uint32_t mode)
{
	np_fcall f = {.type = NP_TMKDIR, .tag = 6};
	f.tmkdir.dfid = dfid;
	f.tmkdir.name = np_strz(name);
	f.tmkdir.mode = mode;
	f.tmkdir.gid = NP_NONUNAME;
	return rpc_err(w, &f);
}

int wc_write(struct wc *w, uint32_t fid, uint64_t off, const void *data, uint32_t count)
{
	np_fcall f = {.type = NP_TWRITE, .tag = 7};
	f.twrite.fid = fid;
	f.twrite.offset = off;
	f.twrite.count = count;
	f.twrite.data = data;
	return rpc_err(w, &f);
}

int wc_read(struct wc *w, uint32_t fid, uint64_t off, uint32_t count)
{
	np_fcall f = {.type = NP_TREAD, .tag = 8};
	f.tread.fid = fid;
	f.tread.offset = off;
	f.tread.count = count;
	return rpc_err(w, &f);
}

int wc_getattr(struct wc *w, uint32_t fid)
{
	np_fcall f = {.type = NP_TGETATTR, .tag = 9};
	f.tgetattr.fid = fid;
	f.tgetattr.request_mask = NP_GETATTR_ALL;
	return rpc_err(w, &f);
}

int wc_fsync(struct wc *w, uint32_t fid)
{
	np_fcall f = {.type = NP_TFSYNC, .tag = 10};
	f.tfsync.fid = fid;
	return rpc_err(w, &f);
}

int wc_unlinkat(struct wc *w, uint32_t dfid, const char *name, uint32_t flags)
{
	np_fcall f = {.type = NP_TUNLINKAT, .tag = 11};
	f.tunlinkat.dirfid = dfid;
	f.tunlinkat.name = np_strz(name);
	f.tunlinkat.flags = flags;
	return rpc_err(w, &f);
}

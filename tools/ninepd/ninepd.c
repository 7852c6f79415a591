/* ninepd: serve a local directory (or an in-memory tree) over 9P. */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <grp.h>
#include <limits.h>
#include <pthread.h>
#include <pwd.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <syslog.h>
#include <unistd.h>

#include "ninep/buf.h"
#include "ninep/passthrough.h"
#include "ninep/ramfs.h"
#include "ninep/server.h"

#define MAX_LISTEN 16
#define MAX_USERS 256

static const char *prog = "ninepd";

static void usage(FILE *f)
{
	fprintf(f,
		"usage: %s [options] DIR\n"
		"       %s [options] --ramfs\n"
		"Serve DIR over 9P2000.L (and 9P2000.u / 9P2000).\n"
		"  -l, --listen ADDR      unix:/path, unix:@name, tcp:HOST:PORT, vsock:CID:PORT,\n"
		"                         fd:R,W or stdio (repeatable; default unix:%s)\n"
		"  -m, --msize BYTES      largest message size offered (default 524288)\n"
		"  -t, --threads N        event-loop threads (default: CPUs)\n"
		"  -w, --workers N        worker threads for blocking operations (default 4)\n"
		"  -r, --read-only        refuse every modification (EROFS)\n"
		"      --multi-user       (root) run each request as the attaching user\n"
		"      --squash USER      (root) run every request as USER\n"
		"      --allow-users LIST only these users (names or uids, comma-separated) may attach\n"
		"      --allow-uids LIST  only unix-socket peers with these uids may connect\n"
		"      --allow-special    allow opening device nodes, FIFOs and sockets\n"
		"      --blocking-io      run read/write/readdir on worker threads (slow disks)\n"
		"      --ramfs            serve an in-memory tree instead of DIR\n"
		"      --max-conns N      connections (default 16384)\n"
		"      --max-fids N       fids per connection (default 65536)\n"
		"      --max-inflight N   requests in flight per connection (default 64)\n"
		"      --socket-mode MODE permissions of unix socket files (octal)\n"
		"      --busy-poll US     poll this long for the next request before sleeping\n"
		"      --bufcache MODE    message buffers: cached (default), or malloc / pow2 / msize\n"
		"                         (a malloc per message: for benchmarks only)\n"
		"  -v, --verbose          log connections as they open and close\n"
		"  -d, --debug            trace every message on one line (implies -v)\n"
		"      --log stderr|syslog\n"
		"      --daemon           detach (default: stay in the foreground)\n"
		"      --pidfile FILE     write the process id to FILE\n"
		"  -h, --help\n",
		prog, prog, "$XDG_RUNTIME_DIR/ninepd.sock");
}

static void die(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));
static void die(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	fprintf(stderr, "%s: ", prog);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	exit(1);
}

static void usage_error(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));
static void usage_error(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	fprintf(stderr, "%s: ", prog);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, "\nTry '%s --help'.\n", prog);
	exit(2);
}

static unsigned long parse_num(const char *opt, const char *s, unsigned long min, unsigned long max)
{
	char *end;
	errno = 0;
	unsigned long v = strtoul(s, &end, 0);
	if (errno || end == s || *end || v < min || v > max || s[0] == '-')
		usage_error("%s: bad number '%s' (expected %lu..%lu)", opt, s, min, max);
	return v;
}

static int resolve_user(const char *s, uid_t *uid, gid_t *gid)
{
	char *end;
	unsigned long v = strtoul(s, &end, 10);
	struct passwd *pw;
	if (*s && !*end) {
		pw = getpwuid((uid_t)v);
		*uid = (uid_t)v;
		*gid = pw ? pw->pw_gid : (gid_t)v;
		return 0;
	}
	pw = getpwnam(s);
	if (!pw)
		return -1;
	*uid = pw->pw_uid;
	*gid = pw->pw_gid;
	return 0;
}

static size_t parse_users(const char *opt, const char *list, uid_t *out)
{
	char *dup = strdup(list), *save = NULL;
	size_t n = 0;
	if (!dup)
		die("out of memory");
	for (char *t = strtok_r(dup, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
		gid_t g;
		if (n == MAX_USERS)
			usage_error("%s: too many users", opt);
		if (resolve_user(t, &out[n], &g) < 0)
			usage_error("%s: unknown user '%s'", opt, t);
		n++;
	}
	free(dup);
	if (!n)
		usage_error("%s: empty list", opt);
	return n;
}

static int use_syslog;
static int verbosity; /* 0: errors and start/stop, 1: connections (-v), 2: messages (-d) */

static void log_sink(void *arg, int level, const char *msg)
{
	(void)arg;
	if (level > verbosity)
		return;
	if (use_syslog)
		syslog(level == 0 ? LOG_ERR : level == 1 ? LOG_INFO : LOG_DEBUG, "%s", msg);
	else
		fprintf(stderr, "%s: %s\n", prog, msg);
}

/* systemd socket activation: LISTEN_PID/LISTEN_FDS, descriptors from 3. */
static int socket_activation_fds(void)
{
	const char *pid = getenv("LISTEN_PID"), *fds = getenv("LISTEN_FDS");
	if (!pid || !fds || (pid_t)strtol(pid, NULL, 10) != getpid())
		return 0;
	int n = (int)strtol(fds, NULL, 10);
	unsetenv("LISTEN_PID");
	unsetenv("LISTEN_FDS");
	unsetenv("LISTEN_FDNAMES");
	return n > 0 ? n : 0;
}

static void default_listen(char *out, size_t n)
{
	const char *rt = getenv("XDG_RUNTIME_DIR");
	snprintf(out, n, "unix:%s/ninepd.sock", rt && *rt ? rt : "/run");
}

static void write_pidfile(const char *path)
{
	FILE *f = fopen(path, "w");
	if (!f)
		die("pidfile %s: %s", path, strerror(errno));
	fprintf(f, "%ld\n", (long)getpid());
	if (fclose(f) != 0)
		die("pidfile %s: %s", path, strerror(errno));
}

static np_server *g_srv;

static void *signal_thread(void *arg)
{
	sigset_t *set = arg;
	int sig;
	while (sigwait(set, &sig) == 0) {
		if (sig == SIGTERM || sig == SIGINT) {
			np_log(g_srv, 0, "%s: stopping", strsignal(sig));
			np_server_stop(g_srv);
			return NULL;
		}
	}
	return NULL;
}

enum {
	OPT_MULTI = 1000, OPT_SQUASH, OPT_ALLOW_USERS, OPT_ALLOW_UIDS, OPT_SPECIAL,
	OPT_BLOCKING, OPT_RAMFS, OPT_MAXCONNS, OPT_MAXFIDS, OPT_MAXINFLIGHT, OPT_LOG,
	OPT_DAEMON, OPT_PIDFILE, OPT_SOCKMODE, OPT_BUSYPOLL, OPT_BUFCACHE,
};

int main(int argc, char **argv)
{
	static const struct option lopts[] = {
		{"listen", required_argument, NULL, 'l'},
		{"msize", required_argument, NULL, 'm'},
		{"threads", required_argument, NULL, 't'},
		{"workers", required_argument, NULL, 'w'},
		{"read-only", no_argument, NULL, 'r'},
		{"debug", no_argument, NULL, 'd'},
		{"verbose", no_argument, NULL, 'v'},
		{"help", no_argument, NULL, 'h'},
		{"multi-user", no_argument, NULL, OPT_MULTI},
		{"squash", required_argument, NULL, OPT_SQUASH},
		{"allow-users", required_argument, NULL, OPT_ALLOW_USERS},
		{"allow-uids", required_argument, NULL, OPT_ALLOW_UIDS},
		{"allow-special", no_argument, NULL, OPT_SPECIAL},
		{"blocking-io", no_argument, NULL, OPT_BLOCKING},
		{"ramfs", no_argument, NULL, OPT_RAMFS},
		{"max-conns", required_argument, NULL, OPT_MAXCONNS},
		{"max-fids", required_argument, NULL, OPT_MAXFIDS},
		{"max-inflight", required_argument, NULL, OPT_MAXINFLIGHT},
		{"log", required_argument, NULL, OPT_LOG},
		{"daemon", no_argument, NULL, OPT_DAEMON},
		{"pidfile", required_argument, NULL, OPT_PIDFILE},
		{"socket-mode", required_argument, NULL, OPT_SOCKMODE},
		{"busy-poll", required_argument, NULL, OPT_BUSYPOLL},
		{"bufcache", required_argument, NULL, OPT_BUFCACHE},
		{0, 0, 0, 0},
	};
	const char *listen[MAX_LISTEN];
	int nlisten = 0, ramfs = 0, daemonize = 0, sockmode = -1;
	const char *pidfile = NULL;
	static uid_t allow_users[MAX_USERS], allow_uids[MAX_USERS];
	size_t n_allow_users = 0, n_allow_uids = 0;
	struct np_server_opts so = {0};
	struct np_passthrough_opts po = {0};
	int c;

	while ((c = getopt_long(argc, argv, "l:m:t:w:rdvh", lopts, NULL)) != -1) {
		switch (c) {
		case 'l':
			if (nlisten == MAX_LISTEN)
				usage_error("too many --listen addresses");
			listen[nlisten++] = optarg;
			break;
		case 'm':
			so.msize = (uint32_t)parse_num("--msize", optarg, NP_MIN_MSIZE, 64u << 20);
			break;
		case 't':
			so.loops = (int)parse_num("--threads", optarg, 1, 256);
			break;
		case 'w':
			so.workers = (int)parse_num("--workers", optarg, 1, 1024);
			break;
		case 'r':
			po.read_only = 1;
			break;
		case 'd':
			so.trace = 1;
			verbosity = 2;
			break;
		case 'v':
			if (verbosity < 1)
				verbosity = 1;
			break;
		case 'h':
			usage(stdout);
			return 0;
		case OPT_MULTI:
			po.identity = NP_PT_ID_MULTI_USER;
			break;
		case OPT_SQUASH:
			po.identity = NP_PT_ID_SQUASH;
			if (resolve_user(optarg, &po.squash_uid, &po.squash_gid) < 0)
				usage_error("--squash: unknown user '%s'", optarg);
			break;
		case OPT_ALLOW_USERS:
			n_allow_users = parse_users("--allow-users", optarg, allow_users);
			break;
		case OPT_ALLOW_UIDS:
			n_allow_uids = parse_users("--allow-uids", optarg, allow_uids);
			break;
		case OPT_SPECIAL:
			po.allow_special = 1;
			break;
		case OPT_BLOCKING:
			po.blocking_io = 1;
			break;
		case OPT_RAMFS:
			ramfs = 1;
			break;
		case OPT_MAXCONNS:
			so.max_conns = (uint32_t)parse_num("--max-conns", optarg, 1, 1u << 24);
			break;
		case OPT_MAXFIDS:
			so.max_fids = (uint32_t)parse_num("--max-fids", optarg, 1, 1u << 26);
			break;
		case OPT_MAXINFLIGHT:
			so.max_inflight = (uint32_t)parse_num("--max-inflight", optarg, 1, 65535);
			break;
		case OPT_LOG:
			if (strcmp(optarg, "syslog") == 0)
				use_syslog = 1;
			else if (strcmp(optarg, "stderr") != 0)
				usage_error("--log: expected stderr or syslog, not '%s'", optarg);
			break;
		case OPT_DAEMON:
			daemonize = 1;
			break;
		case OPT_PIDFILE:
			pidfile = optarg;
			break;
		case OPT_SOCKMODE:
			sockmode = (int)parse_num("--socket-mode", optarg, 0, 07777);
			break;
		case OPT_BUSYPOLL:
			so.busy_poll_us = (uint32_t)parse_num("--busy-poll", optarg, 0, 1000000);
			break;
		case OPT_BUFCACHE:
			if (strcmp(optarg, "cached") == 0)
				so.bufcache_mode = NP_BUFCACHE_CACHED;
			else if (strcmp(optarg, "malloc") == 0)
				so.bufcache_mode = NP_BUFCACHE_MALLOC;
			else if (strcmp(optarg, "pow2") == 0)
				so.bufcache_mode = NP_BUFCACHE_MALLOC_POW2;
			else if (strcmp(optarg, "msize") == 0)
				so.bufcache_mode = NP_BUFCACHE_MALLOC_MSIZE;
			else
				usage_error("--bufcache: expected cached, malloc, pow2 or msize, not '%s'", optarg);
			break;
		default:
			fprintf(stderr, "Try '%s --help'.\n", prog);
			return 2;
		}
	}
	if (ramfs ? optind != argc : optind != argc - 1)
		usage_error(ramfs ? "--ramfs takes no directory" : "expected one directory to export");
	if (po.identity != NP_PT_ID_SERVER && geteuid() != 0)
		usage_error("--multi-user and --squash need root");
	if (use_syslog)
		openlog(prog, LOG_PID, LOG_DAEMON);

	so.log = log_sink;
	so.allow_uids = n_allow_uids ? allow_uids : NULL;
	so.n_allow_uids = n_allow_uids;
	po.allow_users = n_allow_users ? allow_users : NULL;
	po.n_allow_users = n_allow_users;

	void *fs;
	const struct np_fs_ops *ops;
	np_passthrough *pt = NULL;
	np_ramfs *rfs = NULL;
	char err[512];
	const char *what;
	if (ramfs) {
		rfs = np_ramfs_new(NULL);
		if (!rfs)
			die("out of memory");
		fs = rfs;
		ops = &np_ramfs_ops;
		what = "an in-memory tree";
	} else {
		po.root = argv[optind];
		int r = np_passthrough_new(&po, &pt, err, sizeof err);
		if (r != 0)
			die("%s", err);
		fs = pt;
		ops = np_passthrough_ops(pt);
		what = po.root;
	}

	/* The passthrough backend keeps a descriptor per fid, and a kernel or
	 * FUSE client keeps a fid per cached inode: the 1,024 soft default runs
	 * out after a thousand files.  Take what the hard limit allows (as
	 * file servers like virtiofsd do); running out is still answered
	 * with EMFILE, never a crash. */
	struct rlimit nofile;
	if (getrlimit(RLIMIT_NOFILE, &nofile) == 0 && nofile.rlim_cur < nofile.rlim_max) {
		nofile.rlim_cur = nofile.rlim_max;
		setrlimit(RLIMIT_NOFILE, &nofile);
	}

	/* Threads inherit this mask: only the signal thread sees them. */
	static sigset_t sigs;
	sigemptyset(&sigs);
	sigaddset(&sigs, SIGTERM);
	sigaddset(&sigs, SIGINT);
	sigaddset(&sigs, SIGHUP);
	pthread_sigmask(SIG_BLOCK, &sigs, NULL);
	signal(SIGPIPE, SIG_IGN);

	g_srv = np_server_new(ops, fs, &so);
	if (!g_srv)
		die("cannot create the server: %s", strerror(errno ? errno : ENOMEM));

	int nact = socket_activation_fds();
	for (int i = 0; i < nact; i++)
		if (np_server_add_listener(g_srv, 3 + i) < 0)
			die("socket activation: cannot use descriptor %d", 3 + i);
	char defaddr[PATH_MAX + 8];
	if (!nlisten && !nact) {
		default_listen(defaddr, sizeof defaddr);
		listen[nlisten++] = defaddr;
	}
	for (int i = 0; i < nlisten; i++) {
		int r;
		if (sockmode >= 0 && strncmp(listen[i], "unix:", 5) == 0) {
			np_addr a;
			r = np_addr_parse(listen[i], &a, err, sizeof err);
			if (r == 0) {
				struct np_listen_opts lo = {.mode = sockmode};
				int fd = np_listen(&a, &lo, err, sizeof err);
				r = fd < 0 ? fd : np_server_add_listener(g_srv, fd);
			}
		} else {
			r = np_server_listen(g_srv, listen[i], err, sizeof err);
		}
		if (r < 0)
			die("%s", err);
	}

	if (daemonize && daemon(0, 0) < 0)
		die("daemon: %s", strerror(errno));
	if (pidfile)
		write_pidfile(pidfile);

	if (np_server_start(g_srv) < 0)
		die("cannot start threads: %s", strerror(errno));
	for (int i = 0; i < nlisten; i++)
		np_log(g_srv, 0, "serving %s on %s", what, listen[i]);

	pthread_t st;
	pthread_create(&st, NULL, signal_thread, &sigs);
	pthread_detach(st);
	np_server_wait(g_srv);
	np_server_free(g_srv);
	for (int i = 0; i < nlisten; i++)
		if (strncmp(listen[i], "unix:", 5) == 0 && sockmode >= 0) {
			np_addr a;
			if (np_addr_parse(listen[i], &a, err, sizeof err) == 0)
				np_unlisten(&a);
		}
	if (pt)
		np_passthrough_free(pt);
	if (rfs)
		np_ramfs_free(rfs);
	if (pidfile)
		unlink(pidfile);
	return 0;
}

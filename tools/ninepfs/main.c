/* ninepfs: mount a 9P file server through FUSE.
 *
 *   ninepfs [options] ADDR MOUNTPOINT
 *
 * Options are parsed in two layers: ours (-o aname=, msize=, ...) first,
 * then libfuse's own (-f, -d, -s, -o allow_other, ...). */
#include <errno.h>
#include <limits.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ninepfs.h"

enum { KEY_HELP, KEY_VERSION, KEY_RO, KEY_DEBUG };

#define OPT(t, field, v) {t, offsetof(struct nfs_conf, field), v}
static const struct fuse_opt nfs_opts[] = {
	OPT("aname=%s", aname, 0),
	OPT("uname=%s", uname, 0),
	OPT("msize=%u", msize, 0),
	OPT("dialect=%s", dialect, 0),
	OPT("attr_timeout=%lf", attr_timeout, 0),
	OPT("entry_timeout=%lf", entry_timeout, 0),
	OPT("writeback", writeback, 1),
	OPT("no_writeback", writeback, 0),
	OPT("reconnect", reconnect, 1),
	OPT("no_reconnect", reconnect, 0),
	OPT("no_default_permissions", no_default_permissions, 1),
	FUSE_OPT_KEY("ro", KEY_RO),
	FUSE_OPT_KEY("-d", KEY_DEBUG),
	FUSE_OPT_KEY("--debug", KEY_DEBUG),
	FUSE_OPT_KEY("debug", KEY_DEBUG),
	FUSE_OPT_KEY("-h", KEY_HELP),
	FUSE_OPT_KEY("--help", KEY_HELP),
	FUSE_OPT_KEY("-V", KEY_VERSION),
	FUSE_OPT_KEY("--version", KEY_VERSION),
	FUSE_OPT_END,
};

static void usage(const char *prog)
{
	printf("usage: %s [options] ADDR MOUNTPOINT\n"
	       "Mount the 9P server at ADDR (unix:/path, unix:@name, tcp:HOST:PORT, vsock:CID:PORT).\n"
	       "\n"
	       "ninepfs options:\n"
	       "    -o aname=NAME          tree to attach (diod: the exported directory)\n"
	       "    -o uname=USER          user to attach as (default: the invoking user)\n"
	       "    -o msize=BYTES         requested message size (default 1048576)\n"
	       "    -o dialect=D           9P2000.L (default), 9P2000.u or 9P2000\n"
	       "    -o attr_timeout=SECS   attribute cache time (default 1)\n"
	       "    -o entry_timeout=SECS  name cache time (default 1)\n"
	       "    -o writeback           kernel writeback cache\n"
	       "    -o reconnect           re-dial a lost server and walk known files again\n"
	       "    -o ro                  read-only mount\n"
	       "    -o no_default_permissions  let the server alone check permissions\n"
	       "    -d                     debug: FUSE requests and 9P messages on stderr\n"
	       "\n",
	       prog);
}

static int opt_proc(void *data, const char *arg, int key, struct fuse_args *outargs)
{
	struct nfs_conf *c = data;
	(void)outargs;
	switch (key) {
	case FUSE_OPT_KEY_NONOPT:
		if (!c->addr) {
			c->addr = strdup(arg);
			return 0;
		}
		return 1; /* the mount point, for fuse_parse_cmdline */
	case KEY_RO:
		c->ro = 1;
		return 1; /* also a mount option */
	case KEY_DEBUG:
		c->debug = 1;
		return 1;
	case KEY_HELP:
		usage(outargs->argv[0]);
		fuse_cmdline_help();
		fuse_lowlevel_help();
		exit(0);
	case KEY_VERSION:
		printf("ninepfs 0.1.0, FUSE library %s\n", fuse_pkgversion());
		fuse_lowlevel_version();
		exit(0);
	default:
		return 1;
	}
}

static void op_init(void *userdata, struct fuse_conn_info *conn)
{
	struct nfs *fs = userdata;
	/* One FUSE read or write becomes one 9P message when it can. */
	unsigned io = fs->iosize;
	if (conn->max_write > io || conn->max_write == 0)
		conn->max_write = io;
	conn->max_read = io;
	if (fs->conf.writeback && (conn->capable & FUSE_CAP_WRITEBACK_CACHE))
		conn->want |= FUSE_CAP_WRITEBACK_CACHE;
	else
		conn->want &= ~FUSE_CAP_WRITEBACK_CACHE;
	/* Locks go to the server; flock(2) stays local to this mount. */
	if (fs->dialect == NP_9P2000L && (conn->capable & FUSE_CAP_POSIX_LOCKS))
		conn->want |= FUSE_CAP_POSIX_LOCKS;
	else
		conn->want &= ~FUSE_CAP_POSIX_LOCKS;
	conn->want &= ~FUSE_CAP_FLOCK_LOCKS;
}

static void op_destroy(void *userdata)
{
	(void)userdata;
}

/* The mount table shows ADDR as the source; ',' would split the option. */
static char *escape_commas(const char *s)
{
	char *out = malloc(strlen(s) * 2 + 1), *p = out;
	if (!out)
		return NULL;
	for (; *s; s++) {
		if (*s == ',' || *s == '\\')
			*p++ = '\\';
		*p++ = *s;
	}
	*p = '\0';
	return out;
}

int main(int argc, char **argv)
{
	struct fuse_args args = FUSE_ARGS_INIT(argc, argv);
	static struct nfs fs;
	fs.conf.attr_timeout = 1.0;
	fs.conf.entry_timeout = 1.0;
	fs.conf.msize = 1u << 20;
	fs.uid = getuid();

	if (fuse_opt_parse(&args, &fs.conf, nfs_opts, opt_proc) != 0)
		return 2;
	struct fuse_cmdline_opts copts;
	if (fuse_parse_cmdline(&args, &copts) != 0)
		return 2;
	if (!fs.conf.addr || !copts.mountpoint) {
		fprintf(stderr, "usage: %s [options] ADDR MOUNTPOINT (see --help)\n", argv[0]);
		return 2;
	}
	if (fs.conf.msize < NP_MIN_MSIZE) {
		fprintf(stderr, "ninepfs: msize must be at least %u\n", NP_MIN_MSIZE);
		return 2;
	}
	if (fs.conf.attr_timeout < 0 || fs.conf.entry_timeout < 0) {
		fprintf(stderr, "ninepfs: timeouts cannot be negative\n");
		return 2;
	}
	fs.conf.debug |= copts.debug;

	pthread_rwlockattr_t rwa;
	pthread_rwlockattr_init(&rwa);
	/* A waiting reconnect must not starve behind a stream of operations. */
	pthread_rwlockattr_setkind_np(&rwa, PTHREAD_RWLOCK_PREFER_WRITER_NONRECURSIVE_NP);
	pthread_rwlock_init(&fs.connlock, &rwa);
	pthread_rwlockattr_destroy(&rwa);
	pthread_mutex_init(&fs.itab_lock, NULL);
	pthread_mutex_init(&fs.lock_lock, NULL);
	if (nfs_itable_init(&fs) < 0) {
		fprintf(stderr, "ninepfs: out of memory\n");
		return 1;
	}

	char err[512];
	if (nfs_connect(&fs, err, sizeof err) < 0) {
		fprintf(stderr, "ninepfs: %s: %s\n", fs.conf.addr, err);
		return 1;
	}

	char *src = escape_commas(fs.conf.addr);
	char fsname[PATH_MAX + 64], maxread[64];
	snprintf(fsname, sizeof fsname, "-ofsname=%s", src ? src : "9p");
	snprintf(maxread, sizeof maxread, "-omax_read=%u", fs.iosize);
	int ok = src && fuse_opt_add_arg(&args, fsname) == 0 && fuse_opt_add_arg(&args, maxread) == 0 &&
		 (fs.conf.no_default_permissions || fuse_opt_add_arg(&args, "-odefault_permissions") == 0);
	free(src);
	if (!ok) {
		fprintf(stderr, "ninepfs: out of memory\n");
		return 1;
	}

	struct fuse_lowlevel_ops ops;
	memset(&ops, 0, sizeof ops);
	ops.init = op_init;
	ops.destroy = op_destroy;
	nfs_ops_entry(&ops);
	nfs_ops_dir(&ops);
	nfs_ops_ns(&ops);
	nfs_ops_file(&ops);
	nfs_ops_xattr(&ops);
	if (fs.dialect == NP_9P2000L)
		nfs_ops_lock(&ops);

	int ret = 1;
	struct fuse_session *se = fuse_session_new(&args, &ops, sizeof ops, &fs);
	if (!se)
		goto out;
	fs.se = se;
	if (fuse_set_signal_handlers(se) != 0)
		goto out_session;
	if (fuse_session_mount(se, copts.mountpoint) != 0)
		goto out_signals;
	fuse_daemonize(copts.foreground);
	if (copts.singlethread) {
		ret = fuse_session_loop(se);
	} else {
		struct fuse_loop_config lc = {.clone_fd = copts.clone_fd,
					      .max_idle_threads = copts.max_idle_threads};
		ret = fuse_session_loop_mt(se, &lc);
	}
	fuse_session_unmount(se);
out_signals:
	fuse_remove_signal_handlers(se);
out_session:
	fuse_session_destroy(se);
out:
	/* Every handle and inode is gone with the session. */
	nfs_itable_free(&fs);
	nfs_disconnect(&fs);
	free(copts.mountpoint);
	fuse_opt_free_args(&args);
	return ret ? 1 : 0;
}

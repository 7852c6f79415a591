/* fuzz-server-ramfs: the session target (fuzz_server.c) serving a ramfs.
 *
 * Every input gets a fresh tree, so a crash never depends on what earlier
 * inputs created and the tree cannot grow without bound.  The server is
 * made once, so its handler table is np_ramfs_ops with each handler behind a
 * forwarder that points the request at this input's tree (ramfs finds its
 * instance in r->fs, and each fid remembers its own).  The forwarders also
 * move read, write, readdir, fsync and lock to the worker thread: ramfs runs
 * everything inline, which would leave Tflush of a running request and
 * worker completions unreachable.
 *
 * Backend option bits (input byte 0, bits 5-7):
 *   1  noperm: no permission checks
 *   2  limits: 12 inodes, 64 KiB of file data (ENOSPC paths)
 *   4  "/" owned by uid 1000, mode 0700 (attaches as other users fail
 *      the search check, as uid 1000 they own it) */
#include <stdio.h>
#include <stdlib.h>

#include "fuzz_server.h"
#include "ninep/ramfs.h"

static np_ramfs *cur;
static struct np_fs_ops ops;

#define FWD(op)                                   \
	static int fwd_##op(np_req *r)            \
	{                                         \
		r->fs = cur;                      \
		return np_ramfs_ops.op(r);        \
	}
FWD(attach) FWD(auth) FWD(walk) FWD(clunk) FWD(remove) FWD(lopen) FWD(lcreate)
FWD(read) FWD(write) FWD(readdir) FWD(getattr) FWD(setattr) FWD(statfs)
FWD(readlink) FWD(symlink) FWD(mknod) FWD(mkdir) FWD(link) FWD(rename)
FWD(renameat) FWD(unlinkat) FWD(xattrwalk) FWD(xattrcreate) FWD(fsync)
FWD(lock) FWD(getlock)
#undef FWD

static int rf_init(const struct np_fs_ops **out, void **fs)
{
	ops = np_ramfs_ops;
#define SET(op) ops.op = np_ramfs_ops.op ? fwd_##op : NULL
	SET(attach); SET(auth); SET(walk); SET(clunk); SET(remove); SET(lopen);
	SET(lcreate); SET(read); SET(write); SET(readdir); SET(getattr);
	SET(setattr); SET(statfs); SET(readlink); SET(symlink); SET(mknod);
	SET(mkdir); SET(link); SET(rename); SET(renameat); SET(unlinkat);
	SET(xattrwalk); SET(xattrcreate); SET(fsync); SET(lock); SET(getlock);
#undef SET
	ops.inline_ops = np_ramfs_ops.inline_ops &
			 ~(NP_OP_BIT(NP_OP_READ) | NP_OP_BIT(NP_OP_WRITE) | NP_OP_BIT(NP_OP_READDIR) |
			   NP_OP_BIT(NP_OP_FSYNC) | NP_OP_BIT(NP_OP_LOCK));
	*out = &ops;
	*fs = NULL; /* every request is pointed at `cur` by its forwarder */
	return 0;
}

static void rf_begin(unsigned opts)
{
	struct np_ramfs_opts o = {0};
	o.noperm = opts & 1;
	if (opts & 2) {
		o.max_nodes = 12;
		o.max_bytes = 65536;
	}
	if (opts & 4) {
		o.root_uid = o.root_gid = 1000;
		o.root_mode = 0700;
	}
	cur = np_ramfs_new(&o);
	if (!cur)
		abort();
}

static void rf_end(void)
{
	/* The session's fids are destroyed: nothing refers to the tree. */
	np_ramfs_free(cur);
	cur = NULL;
}

static void rf_fini(void)
{
}

const struct fuzz_backend fuzz_backend = {
	.name = "ramfs",
	.init = rf_init,
	.begin = rf_begin,
	.end = rf_end,
	.fini = rf_fini,
};

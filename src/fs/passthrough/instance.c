/* Passthrough instance: opening the export, the handler table, and the small
 * helpers every operation shares (qids, name checks, confined lookup). */
#include <errno.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "pt_internal.h"

static const struct np_fs_ops pt_ops_template = {
	.attach = np_pt_attach,
	.walk = np_pt_walk,
	.destroy_fid = np_pt_destroy_fid,
	.clunk = np_pt_clunk,
	.remove = np_pt_remove,
	.lopen = np_pt_lopen,
	.lcreate = np_pt_lcreate,
	.read = np_pt_read,
	.write = np_pt_write,
	.readdir = np_pt_readdir,
	.getattr = np_pt_getattr,
	.setattr = np_pt_setattr,
	.statfs = np_pt_statfs,
	.readlink = np_pt_readlink,
	.symlink = np_pt_symlink,
	.mknod = np_pt_mknod,
	.mkdir = np_pt_mkdir,
	.link = np_pt_link,
	.rename = np_pt_rename,
	.renameat = np_pt_renameat,
	.unlinkat = np_pt_unlinkat,
	.xattrwalk = np_pt_xattrwalk,
	.xattrcreate = np_pt_xattrcreate,
	.fsync = np_pt_fsync,
	.lock = np_pt_lock,
	.getlock = np_pt_getlock,
	.fid_priv_size = sizeof(struct pt_fid),
};

static int fail(char *err, size_t errlen, int e, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
static int fail(char *err, size_t errlen, int e, const char *fmt, ...)
{
	if (err && errlen) {
		va_list ap;
		va_start(ap, fmt);
		vsnprintf(err, errlen, fmt, ap);
		va_end(ap);
	}
	return e;
}

static uint64_t pt_inline_ops(const struct np_passthrough_opts *o)
{
	/* Local file system calls are quick: run them on the loop thread.
	 * fsync waits for the disk; lock never blocks (F_OFD_SETLK). */
	uint64_t ops = NP_OPS_ALL & ~NP_OP_BIT(NP_OP_FSYNC);
	if (o->identity != NP_PT_ID_SERVER || o->allow_users)
		ops &= ~NP_OP_BIT(NP_OP_ATTACH); /* user database look-ups may block */
	if (o->allow_special)
		ops &= ~NP_OP_BIT(NP_OP_LOPEN); /* opening a FIFO waits for a peer */
	if (o->blocking_io)
		ops &= ~(NP_OP_BIT(NP_OP_READ) | NP_OP_BIT(NP_OP_WRITE) |
			 NP_OP_BIT(NP_OP_READDIR));
	return ops;
}

int np_passthrough_new(const struct np_passthrough_opts *o, np_passthrough **out,
		       char *err, size_t errlen)
{
	*out = NULL;
	if (!o || !o->root || !*o->root)
		return fail(err, errlen, EINVAL, "no export root given");
	if (o->identity != NP_PT_ID_SERVER && geteuid() != 0)
		return fail(err, errlen, EPERM,
			    "multi-user and squash identities need the server to run as root");
	if (o->identity > NP_PT_ID_SQUASH)
		return fail(err, errlen, EINVAL, "unknown identity mode");

	np_passthrough *fs = calloc(1, sizeof(*fs));
	if (!fs)
		return fail(err, errlen, ENOMEM, "out of memory");
	fs->rootfd = fs->procfd = -1;
	pthread_mutex_init(&fs->lock, NULL);
	fs->ops = pt_ops_template;
	fs->ops.inline_ops = pt_inline_ops(o);
	fs->idmode = o->identity;
	fs->read_only = !!o->read_only;
	fs->allow_special = !!o->allow_special;
	int e;

	fs->rootfd = open(o->root, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (fs->rootfd < 0) {
		e = fail(err, errlen, errno, "%s: %s", o->root, strerror(errno));
		goto bad;
	}
	struct stat st;
	if (fstat(fs->rootfd, &st) < 0) {
		e = fail(err, errlen, errno, "%s: %s", o->root, strerror(errno));
		goto bad;
	}
	fs->rootdev = st.st_dev;
	fs->rootino = st.st_ino;
	fs->devs[0] = st.st_dev;
	atomic_store(&fs->ndevs, 1);

	/* Reopening a walked file (lopen), and the few calls that have no
	 * descriptor form for O_PATH fds, go through /proc/self/fd. */
	fs->procfd = open("/proc/self/fd", O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (fs->procfd < 0) {
		e = fail(err, errlen, errno, "/proc/self/fd: %s (is /proc mounted?)",
			 strerror(errno));
		goto bad;
	}

	if (o->allow_users && o->n_allow_users) {
		fs->allow = calloc(o->n_allow_users, sizeof(uid_t));
		if (!fs->allow) {
			e = fail(err, errlen, ENOMEM, "out of memory");
			goto bad;
		}
		memcpy(fs->allow, o->allow_users, o->n_allow_users * sizeof(uid_t));
		fs->nallow = o->n_allow_users;
	} else if (o->allow_users) {
		/* An empty allow list lets nobody in. */
		fs->allow = calloc(1, sizeof(uid_t));
		if (!fs->allow) {
			e = fail(err, errlen, ENOMEM, "out of memory");
			goto bad;
		}
		fs->nallow = 0;
	}

	fs->self = np_pt_ident_self(0);
	if (!fs->self) {
		e = fail(err, errlen, errno ? errno : ENOMEM, "reading the server's groups failed");
		goto bad;
	}
	if (o->identity == NP_PT_ID_SQUASH) {
		fs->squash = np_pt_ident_for_uid(fs, o->squash_uid, o->squash_gid, NULL);
		if (!fs->squash) {
			e = fail(err, errlen, ENOMEM, "out of memory");
			goto bad;
		}
	}
	*out = fs;
	return 0;
bad:
	np_passthrough_free(fs);
	return e;
}

void np_passthrough_free(np_passthrough *fs)
{
	if (!fs)
		return;
	if (fs->rootfd >= 0)
		close(fs->rootfd);
	if (fs->procfd >= 0)
		close(fs->procfd);
	np_pt_ident_free_all(fs);
	free(fs->self);
	free(fs->allow);
	pthread_mutex_destroy(&fs->lock);
	free(fs);
}

const struct np_fs_ops *np_passthrough_ops(const np_passthrough *fs)
{
	return &fs->ops;
}

static unsigned pt_devindex(np_passthrough *fs, dev_t dev)
{
	int n = atomic_load_explicit(&fs->ndevs, memory_order_acquire);
	for (int i = 0; i < n; i++)
		if (fs->devs[i] == dev)
			return (unsigned)i;
	pthread_mutex_lock(&fs->lock);
	n = atomic_load_explicit(&fs->ndevs, memory_order_relaxed);
	unsigned idx = PT_MAXDEV - 1;
	for (int i = 0; i < n; i++)
		if (fs->devs[i] == dev) {
			idx = (unsigned)i;
			goto out;
		}
	if (n < PT_MAXDEV - 1) {
		/* Publish the slot before the count so lock-free readers
		 * never see an unwritten entry. */
		fs->devs[n] = dev;
		atomic_store_explicit(&fs->ndevs, n + 1, memory_order_release);
		idx = (unsigned)n;
	}
out:
	pthread_mutex_unlock(&fs->lock);
	return idx;
}

uint64_t np_pt_qpath(np_passthrough *fs, dev_t dev, ino_t ino)
{
	/* The export's own file system maps to index 0: qid.path == inode. */
	uint64_t idx = dev == fs->rootdev ? 0 : pt_devindex(fs, dev);
	return idx << 56 | ((uint64_t)ino & 0x00FFFFFFFFFFFFFFull);
}

uint8_t np_pt_qtype(mode_t mode)
{
	if (S_ISDIR(mode))
		return NP_QTDIR;
	if (S_ISLNK(mode))
		return NP_QTSYMLINK;
	return NP_QTFILE;
}

np_qid np_pt_qid(np_passthrough *fs, const struct stat *st)
{
	np_qid q;
	q.type = np_pt_qtype(st->st_mode);
	q.version = (uint32_t)st->st_mtim.tv_sec ^ (uint32_t)st->st_mtim.tv_nsec;
	q.path = np_pt_qpath(fs, st->st_dev, st->st_ino);
	return q;
}

int np_pt_is_root(np_passthrough *fs, const struct stat *st)
{
	return st->st_dev == fs->rootdev && st->st_ino == fs->rootino;
}

int np_pt_name(np_str s, char buf[NAME_MAX + 1], int dots_ok)
{
	/* The codec refuses such names already; a backend must not rely on
	 * it, as a '/' here would turn a name into a path. */
	if (s.len == 0)
		return EINVAL;
	if (s.len > NAME_MAX)
		return ENAMETOOLONG;
	if (memchr(s.s, '/', s.len) || memchr(s.s, '\0', s.len))
		return EINVAL;
	memcpy(buf, s.s, s.len);
	buf[s.len] = '\0';
	if (!dots_ok && (strcmp(buf, ".") == 0 || strcmp(buf, "..") == 0))
		return EINVAL;
	return 0;
}

void np_pt_procpath(char buf[32], int fd)
{
	snprintf(buf, 32, "/proc/self/fd/%d", fd);
}

int np_pt_lookup(np_passthrough *fs, int dirfd, const char *name)
{
	int fd;
	if (!atomic_load_explicit(&fs->no_openat2, memory_order_relaxed)) {
		struct open_how how = {
			.flags = O_PATH | O_NOFOLLOW | O_CLOEXEC,
			.resolve = RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS | RESOLVE_NO_SYMLINKS,
		};
		fd = (int)syscall(SYS_openat2, dirfd, name, &how, sizeof(how));
		if (fd >= 0)
			return fd;
		if (errno != ENOSYS)
			return -errno;
		atomic_store(&fs->no_openat2, 1);
	}
	/* One component, no '/', never "..": O_NOFOLLOW alone keeps the
	 * look-up inside dirfd and returns a final symlink itself. */
	fd = openat(dirfd, name, O_PATH | O_NOFOLLOW | O_CLOEXEC);
	return fd >= 0 ? fd : -errno;
}

int np_pt_reopen(np_passthrough *fs, int pathfd, int flags)
{
	/* Why /proc/self/fd/N: the O_PATH fd names exactly the inode the
	 * client walked to (reached one name at a time, no symlink followed);
	 * opening its magic link re-opens that inode with no look-up of any
	 * client-controlled name, so a rename or a symlink swapped in since
	 * the walk cannot redirect it (openat(parent, name) could).  The
	 * kernel still checks permissions against the caller's fsuid.  The
	 * caller has refused symlinks and special files from the O_PATH fd's
	 * type before (O_NOFOLLOW cannot be used: the magic link is itself a
	 * symlink). */
	char num[16];
	snprintf(num, sizeof(num), "%d", pathfd);
	int fd = openat(fs->procfd, num, (flags | O_CLOEXEC) & ~(O_CREAT | O_EXCL | O_NOFOLLOW));
	return fd >= 0 ? fd : -errno;
}

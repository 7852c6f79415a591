/* The 9P connection behind the mount: dialling, attaching, tracing, turning
 * client errors into FUSE errors, and (-o reconnect) replacing a lost
 * connection while operations wait. */
#include <errno.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ninepfs.h"

static void trace_msg(void *arg, char dir, const np_fcall *f, enum np_dialect d)
{
	(void)arg;
	char line[512];
	np_fcall_format(line, sizeof line, f, d);
	fprintf(stderr, "9P %s %s\n", dir == 'T' ? "->" : "<-", line);
}

static const char *attach_user(struct nfs *fs, uint32_t *n_uname)
{
	*n_uname = fs->dialect == NP_9P2000 ? NP_NONUNAME : (uint32_t)fs->uid;
	if (fs->conf.uname) {
		struct passwd *pw = getpwnam(fs->conf.uname);
		if (pw && fs->dialect != NP_9P2000)
			*n_uname = (uint32_t)pw->pw_uid;
		return fs->conf.uname;
	}
	struct passwd *pw = getpwuid(fs->uid);
	return pw ? pw->pw_name : "";
}

/* Dial, negotiate and attach; on success *cp and *rootp are new. */
static int dial(struct nfs *fs, struct nfs_conn **cp, np_cfid **rootp, char *err, size_t errlen)
{
	struct np_client_opts o = {0};
	o.msize = fs->conf.msize;
	o.dialect = fs->conf.dialect ? np_dialect_parse(fs->conf.dialect, strlen(fs->conf.dialect)) : -1;
	if (fs->conf.dialect && o.dialect < 0) {
		snprintf(err, errlen, "unknown dialect '%s' (9P2000.L, 9P2000.u or 9P2000)", fs->conf.dialect);
		return -EINVAL;
	}
	if (fs->conf.debug)
		o.trace = trace_msg;
	struct nfs_conn *c = calloc(1, sizeof *c);
	if (!c) {
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	int e = np_client_connect(fs->conf.addr, &o, &c->client, err, errlen);
	if (e < 0) {
		free(c);
		return e;
	}
	fs->dialect = np_client_dialect(c->client);
	uint32_t n_uname;
	const char *uname = attach_user(fs, &n_uname);
	e = np_client_attach(c->client, uname, n_uname, fs->conf.aname ? fs->conf.aname : "", rootp);
	if (e < 0) {
		snprintf(err, errlen, "attach to '%s' as %s: %s", fs->conf.aname ? fs->conf.aname : "", uname,
			 strerror(-e));
		np_client_free(c->client);
		free(c);
		return e;
	}
	*cp = c;
	return 0;
}

int nfs_connect(struct nfs *fs, char *err, size_t errlen)
{
	struct nfs_conn *c;
	np_cfid *root;
	int e = dial(fs, &c, &root, err, errlen);
	if (e < 0)
		return e;
	c->gen = 1;
	fs->conn = c;
	fs->msize = np_client_msize(c->client);
	fs->iosize = fs->msize - NP_IOHDRSZ;
	fs->root.fid = root;
	fs->root.qpath = root->qid.path;
	fs->root.qtype = root->qid.type;
	fs->root.type = S_IFDIR;
	return 0;
}

static void conn_free(struct nfs_conn *c)
{
	np_client_free(c->client);
	free(c);
}

void nfs_disconnect(struct nfs *fs)
{
	if (!fs->conn)
		return;
	if (fs->root.fid) {
		np_cfid_clunk(fs->root.fid);
		fs->root.fid = NULL;
	}
	conn_free(fs->conn);
	fs->conn = NULL;
}

np_client *nfs_enter(struct nfs *fs)
{
	pthread_rwlock_rdlock(&fs->connlock);
	return fs->conn->client;
}

int nfs_conn_lost(int err)
{
	return err == -ECONNRESET || err == -EPIPE;
}

int nfs_errno(int err)
{
	if (err >= 0)
		return 0;
	switch (-err) {
	case ECONNRESET:
	case EPIPE:
		return ENOTCONN;
	case EPROTO:
		return EIO;
	case ENOSYS:
		/* ENOSYS would make the kernel stop asking for good. */
		return EOPNOTSUPP;
	default:
		return -err;
	}
}

void nfs_conn_hold(struct nfs *fs, struct nfs_conn *c)
{
	pthread_mutex_lock(&fs->itab_lock);
	c->handles++;
	pthread_mutex_unlock(&fs->itab_lock);
}

void nfs_conn_drop(struct nfs *fs, struct nfs_conn *c)
{
	pthread_mutex_lock(&fs->itab_lock);
	int last = --c->handles == 0 && c->retired;
	pthread_mutex_unlock(&fs->itab_lock);
	if (last)
		conn_free(c);
}

/* With connlock held exclusively: dial again and move every inode over. */
static int reconnect_locked(struct nfs *fs)
{
	struct nfs_conn *old = fs->conn, *c;
	np_cfid *root;
	char err[256];
	np_client_shutdown(old->client);
	int e = dial(fs, &c, &root, err, sizeof err);
	if (e < 0) {
		fprintf(stderr, "ninepfs: reconnect to %s failed: %s\n", fs->conf.addr, err);
		return e;
	}
	if (np_client_msize(c->client) < fs->msize) {
		/* The kernel was promised max_read/max_write for the old size. */
		fprintf(stderr, "ninepfs: reconnect: msize shrank from %u to %u\n", fs->msize,
			np_client_msize(c->client));
		np_cfid_clunk(root);
		np_client_free(c->client);
		free(c);
		return -EPROTO;
	}
	c->gen = old->gen + 1;
	/* Old inode fids go before the old client; rewalk clunks them. */
	nfs_itable_rewalk(fs, root);
	pthread_mutex_lock(&fs->itab_lock);
	old->retired = 1;
	int gone = old->handles == 0;
	pthread_mutex_unlock(&fs->itab_lock);
	if (gone)
		conn_free(old);
	fs->conn = c;
	fprintf(stderr, "ninepfs: reconnected to %s\n", fs->conf.addr);
	return 0;
}

int nfs_leave(struct nfs *fs, int *err, int attempt)
{
	struct nfs_conn *used = fs->conn;
	pthread_rwlock_unlock(&fs->connlock);
	if (*err >= 0 || !nfs_conn_lost(*err))
		return 0;
	if (!fs->conf.reconnect || attempt > 0) {
		*err = -ENOTCONN;
		return 0;
	}
	pthread_rwlock_wrlock(&fs->connlock);
	int e = fs->conn == used ? reconnect_locked(fs) : 0;
	pthread_rwlock_unlock(&fs->connlock);
	if (e < 0) {
		*err = -ENOTCONN;
		return 0;
	}
	return 1;
}

int nfs_leave_fh(struct nfs *fs, int err)
{
	if (nfs_leave(fs, &err, 0))
		err = -EIO;
	return err;
}

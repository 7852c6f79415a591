/* Directories: the readdir iterator and the name-space operations (mkdir,
 * unlinkat, rename, symlink, readlink, link, mknod). */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "client/client_impl.h"

struct np_readdir {
	np_cfid *f;
	np_creq *r;          /* the reply being iterated */
	uint32_t pos;
	uint64_t offset;     /* next request's offset */
	int eof;
	char *name;
	size_t namecap;
	np_stat st;
};

int np_readdir_open(np_cfid *dir, np_readdir **out)
{
	np_readdir *d = calloc(1, sizeof *d);
	if (!d)
		return -ENOMEM;
	d->f = dir;
	*out = d;
	return 0;
}

static int set_name(np_readdir *d, np_str s)
{
	if ((size_t)s.len + 1 > d->namecap) {
		char *n = realloc(d->name, (size_t)s.len + 1);
		if (!n)
			return -ENOMEM;
		d->name = n;
		d->namecap = (size_t)s.len + 1;
	}
	memcpy(d->name, s.s, s.len);
	d->name[s.len] = '\0';
	return 0;
}

static uint8_t qid_dtype(const np_qid *q)
{
	if (q->type & NP_QTDIR)
		return DT_DIR;
	if (q->type & NP_QTSYMLINK)
		return DT_LNK;
	return DT_REG;
}

int np_readdir_next(np_readdir *d, struct np_direntry *e)
{
	np_client *c = d->f->client;
	for (;;) {
		if (d->r) {
			const np_fcall *rc = &d->r->rc;
			if (d->pos < rc->rread.count) {
				memset(e, 0, sizeof *e);
				if (c->dialect == NP_9P2000L) {
					np_dirent de;
					/* The reply was validated whole on receipt. */
					if (np_dirent_next(rc->rread.data, rc->rread.count, &d->pos, &de) <= 0)
						return -EPROTO;
					if (set_name(d, de.name) < 0)
						return -ENOMEM;
					e->qid = de.qid;
					e->type = de.type;
					e->offset = de.offset;
					d->offset = de.offset;
				} else {
					long n = np_stat_decode(rc->rread.data + d->pos,
								rc->rread.count - d->pos, c->dialect, &d->st);
					if (n < 0)
						return -EPROTO;
					d->pos += (uint32_t)n;
					if (set_name(d, d->st.name) < 0)
						return -ENOMEM;
					e->qid = d->st.qid;
					e->type = qid_dtype(&d->st.qid);
					e->offset = d->offset - rc->rread.count + d->pos;
					e->stat = &d->st;
				}
				e->name = d->name;
				return 1;
			}
			np_creq_release(d->r);
			d->r = NULL;
		}
		if (d->eof)
			return 0;
		np_fcall t;
		memset(&t, 0, sizeof t);
		t.type = c->dialect == NP_9P2000L ? NP_TREADDIR : NP_TREAD;
		t.tread.fid = d->f->fid;
		t.tread.offset = d->offset;
		t.tread.count = np_cfid_iosize(d->f);
		int err = np_rpc(c, &t, &d->r);
		if (err < 0)
			return err;
		d->pos = 0;
		if (d->r->rc.rread.count == 0) {
			d->eof = 1;
		} else if (c->dialect != NP_9P2000L) {
			d->offset += d->r->rc.rread.count;
		}
	}
}

void np_readdir_close(np_readdir *d)
{
	if (!d)
		return;
	if (d->r)
		np_creq_release(d->r);
	free(d->name);
	free(d);
}

/* 9P2000/.u: create name in dir with perm and extension, via a clone so
 * dir keeps naming the directory. */
static int create_u(np_cfid *dir, const char *name, uint32_t perm, const char *ext, np_qid *qid)
{
	np_cfid *nf;
	int e = np_cfid_walk(dir, 0, NULL, &nf);
	if (e < 0)
		return e;
	np_fcall t = {.type = NP_TCREATE};
	t.tcreate.fid = nf->fid;
	t.tcreate.name = np_strz(name);
	t.tcreate.perm = perm;
	t.tcreate.mode = NP_OREAD;
	t.tcreate.extension = np_strz(ext);
	np_creq *r;
	e = np_rpc(dir->client, &t, &r);
	if (e == 0) {
		if (qid)
			*qid = r->rc.ropen.qid;
		np_creq_release(r);
	}
	np_cfid_clunk(nf);
	return e;
}

static int rqid(np_client *c, const np_fcall *t, np_qid *qid)
{
	np_creq *r;
	int e = np_rpc(c, t, &r);
	if (e < 0)
		return e;
	if (qid)
		*qid = r->rc.rqid.qid;
	np_creq_release(r);
	return 0;
}

int np_cfid_mkdir(np_cfid *dir, const char *name, uint32_t mode, uint32_t gid, np_qid *qid)
{
	np_client *c = dir->client;
	if (c->dialect != NP_9P2000L)
		return create_u(dir, name, NP_DMDIR | (mode & 0777), "", qid);
	np_fcall t = {.type = NP_TMKDIR};
	t.tmkdir.dfid = dir->fid;
	t.tmkdir.name = np_strz(name);
	t.tmkdir.mode = mode & 07777;
	t.tmkdir.gid = gid;
	return rqid(c, &t, qid);
}

int np_cfid_unlinkat(np_cfid *dir, const char *name, uint32_t flags)
{
	np_client *c = dir->client;
	if (c->dialect == NP_9P2000L && !c->no_unlinkat) {
		np_fcall t = {.type = NP_TUNLINKAT};
		t.tunlinkat.dirfid = dir->fid;
		t.tunlinkat.name = np_strz(name);
		t.tunlinkat.flags = flags;
		int e = np_rpc0(c, &t);
		if (e != -EOPNOTSUPP && e != -ENOSYS)
			return e;
		c->no_unlinkat = 1; /* benign race: only skips a doomed request */
	}
	/* Fallback: walk to the entry and Tremove it.  The type check that
	 * unlinkat's flag implies is done from the walked qid. */
	const char *names[1] = {name};
	np_cfid *f;
	int e = np_cfid_walk(dir, 1, names, &f);
	if (e < 0)
		return e;
	int isdir = (f->qid.type & NP_QTDIR) != 0;
	if (isdir != ((flags & NP_AT_REMOVEDIR) != 0)) {
		np_cfid_clunk(f);
		return isdir ? -EISDIR : -ENOTDIR;
	}
	return np_cfid_remove(f);
}

int np_cfid_rename(np_cfid *f, np_cfid *newdir, const char *newname)
{
	np_client *c = f->client;
	if (c->dialect != NP_9P2000L) {
		/* 9P2000 renames within the directory only, through wstat. */
		np_stat st;
		memset(&st, 0xff, sizeof st);
		st.uid = st.gid = st.muid = st.extension = np_strz("");
		st.name = np_strz(newname);
		(void)newdir;
		return np_cfid_wstat(f, &st);
	}
	np_fcall t = {.type = NP_TRENAME};
	t.trename.fid = f->fid;
	t.trename.dfid = newdir->fid;
	t.trename.name = np_strz(newname);
	return np_rpc0(c, &t);
}

int np_cfid_renameat(np_cfid *olddir, const char *oldname, np_cfid *newdir, const char *newname)
{
	np_client *c = olddir->client;
	if (c->dialect == NP_9P2000L && !c->no_renameat) {
		np_fcall t = {.type = NP_TRENAMEAT};
		t.trenameat.olddirfid = olddir->fid;
		t.trenameat.oldname = np_strz(oldname);
		t.trenameat.newdirfid = newdir->fid;
		t.trenameat.newname = np_strz(newname);
		int e = np_rpc0(c, &t);
		if (e != -EOPNOTSUPP && e != -ENOSYS)
			return e;
		c->no_renameat = 1;
	}
	const char *names[1] = {oldname};
	np_cfid *f;
	int e = np_cfid_walk(olddir, 1, names, &f);
	if (e < 0)
		return e;
	e = np_cfid_rename(f, newdir, newname);
	np_cfid_clunk(f);
	return e;
}

int np_cfid_symlink(np_cfid *dir, const char *name, const char *target, uint32_t gid, np_qid *qid)
{
	np_client *c = dir->client;
	if (c->dialect == NP_9P2000U)
		return create_u(dir, name, NP_DMSYMLINK | 0777, target, qid);
	if (c->dialect != NP_9P2000L)
		return -EOPNOTSUPP;
	np_fcall t = {.type = NP_TSYMLINK};
	t.tsymlink.fid = dir->fid;
	t.tsymlink.name = np_strz(name);
	t.tsymlink.symtgt = np_strz(target);
	t.tsymlink.gid = gid;
	return rqid(c, &t, qid);
}

int np_cfid_readlink(np_cfid *f, char *buf, size_t cap)
{
	np_client *c = f->client;
	np_creq *r;
	np_str s;
	int e;
	if (c->dialect == NP_9P2000L) {
		if ((e = np_rpc_fid(f, NP_TREADLINK, &r)) < 0)
			return e;
		s = r->rc.rreadlink.target;
	} else if (c->dialect == NP_9P2000U) {
		if ((e = np_rpc_fid(f, NP_TSTAT, &r)) < 0)
			return e;
		if (!(r->rc.rstat.stat.mode & NP_DMSYMLINK)) {
			np_creq_release(r);
			return -EINVAL;
		}
		s = r->rc.rstat.stat.extension;
	} else {
		return -EOPNOTSUPP;
	}
	e = np_str_copy(buf, cap, s) < 0 ? -ERANGE : s.len;
	np_creq_release(r);
	return e;
}

int np_cfid_link(np_cfid *dir, np_cfid *target, const char *name)
{
	if (dir->client->dialect != NP_9P2000L)
		return -EOPNOTSUPP;
	np_fcall t = {.type = NP_TLINK};
	t.tlink.dfid = dir->fid;
	t.tlink.fid = target->fid;
	t.tlink.name = np_strz(name);
	return np_rpc0(dir->client, &t);
}

int np_cfid_mknod(np_cfid *dir, const char *name, uint32_t mode, uint32_t major, uint32_t minor,
		  uint32_t gid, np_qid *qid)
{
	if (dir->client->dialect != NP_9P2000L)
		return -EOPNOTSUPP;
	np_fcall t = {.type = NP_TMKNOD};
	t.tmknod.dfid = dir->fid;
	t.tmknod.name = np_strz(name);
	t.tmknod.mode = mode;
	t.tmknod.major = major;
	t.tmknod.minor = minor;
	t.tmknod.gid = gid;
	return rqid(dir->client, &t, qid);
}

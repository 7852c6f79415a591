/* Attributes: getattr/setattr (.L) with their stat/wstat equivalents for
 * 9P2000 and 9P2000.u, statfs and fsync. */
#include <errno.h>
#include <string.h>
#include <sys/stat.h>

#include "client/client_impl.h"

/* 9P2000(.u) stat mode to st_mode. */
static uint32_t dm_to_mode(const np_stat *st)
{
	uint32_t m = st->mode & 0777;
	if (st->mode & NP_DMSETUID)
		m |= S_ISUID;
	if (st->mode & NP_DMSETGID)
		m |= S_ISGID;
	if (st->mode & NP_DMDIR)
		m |= S_IFDIR;
	else if (st->mode & NP_DMSYMLINK)
		m |= S_IFLNK;
	else if (st->mode & NP_DMNAMEDPIPE)
		m |= S_IFIFO;
	else if (st->mode & NP_DMSOCKET)
		m |= S_IFSOCK;
	else if (st->mode & NP_DMDEVICE)
		m |= (st->extension.len && st->extension.s[0] == 'b') ? S_IFBLK : S_IFCHR;
	else
		m |= S_IFREG;
	return m;
}

int np_cfid_getattr(np_cfid *f, uint64_t mask, struct np_attr *a)
{
	np_client *c = f->client;
	np_creq *r;
	int e;
	memset(a, 0, sizeof *a);
	if (c->dialect == NP_9P2000L) {
		np_fcall t = {.type = NP_TGETATTR};
		t.tgetattr.fid = f->fid;
		t.tgetattr.request_mask = mask;
		if ((e = np_rpc(c, &t, &r)) < 0)
			return e;
		const typeof(r->rc.rgetattr) *g = &r->rc.rgetattr;
		a->valid = g->valid;
		a->qid = g->qid;
		a->mode = g->mode;
		a->uid = g->uid;
		a->gid = g->gid;
		a->nlink = g->nlink;
		a->rdev = g->rdev;
		a->size = g->size;
		a->blksize = g->blksize;
		a->blocks = g->blocks;
		a->atime = (struct timespec){(time_t)g->atime_sec, (long)g->atime_nsec};
		a->mtime = (struct timespec){(time_t)g->mtime_sec, (long)g->mtime_nsec};
		a->ctime = (struct timespec){(time_t)g->ctime_sec, (long)g->ctime_nsec};
		a->btime = (struct timespec){(time_t)g->btime_sec, (long)g->btime_nsec};
		a->gen = g->gen;
		a->data_version = g->data_version;
		np_creq_release(r);
		return 0;
	}
	if ((e = np_rpc_fid(f, NP_TSTAT, &r)) < 0)
		return e;
	const np_stat *st = &r->rc.rstat.stat;
	a->valid = NP_GETATTR_MODE | NP_GETATTR_NLINK | NP_GETATTR_SIZE | NP_GETATTR_ATIME |
		   NP_GETATTR_MTIME | NP_GETATTR_CTIME | NP_GETATTR_INO;
	a->qid = st->qid;
	a->mode = dm_to_mode(st);
	a->nlink = 1;
	a->size = st->length;
	a->blksize = 4096;
	a->blocks = (st->length + 511) / 512;
	a->atime.tv_sec = st->atime;
	a->mtime.tv_sec = st->mtime;
	a->ctime.tv_sec = st->mtime;
	if (c->dialect == NP_9P2000U) {
		a->uid = st->n_uid;
		a->gid = st->n_gid;
		a->valid |= NP_GETATTR_UID | NP_GETATTR_GID;
	}
	np_creq_release(r);
	return 0;
}

/* A stat whose every field means "don't touch" (9P2000 wstat). */
static void stat_dont_touch(np_stat *st)
{
	memset(st, 0xff, sizeof *st);
	st->name = st->uid = st->gid = st->muid = st->extension = np_strz("");
}

int np_cfid_setattr(np_cfid *f, const struct np_setattr *s)
{
	np_client *c = f->client;
	if (c->dialect == NP_9P2000L) {
		np_fcall t = {.type = NP_TSETATTR};
		t.tsetattr.fid = f->fid;
		t.tsetattr.valid = s->valid;
		t.tsetattr.mode = s->mode;
		t.tsetattr.uid = s->uid;
		t.tsetattr.gid = s->gid;
		t.tsetattr.size = s->size;
		t.tsetattr.atime_sec = (uint64_t)s->atime.tv_sec;
		t.tsetattr.atime_nsec = (uint64_t)s->atime.tv_nsec;
		t.tsetattr.mtime_sec = (uint64_t)s->mtime.tv_sec;
		t.tsetattr.mtime_nsec = (uint64_t)s->mtime.tv_nsec;
		return np_rpc0(c, &t);
	}
	np_stat st;
	stat_dont_touch(&st);
	if (s->valid & NP_SETATTR_MODE)
		st.mode = (s->mode & 0777) | ((f->qid.type & NP_QTDIR) ? NP_DMDIR : 0);
	if (s->valid & NP_SETATTR_SIZE)
		st.length = s->size;
	if (s->valid & NP_SETATTR_MTIME_SET)
		st.mtime = (uint32_t)s->mtime.tv_sec;
	if (s->valid & (NP_SETATTR_UID | NP_SETATTR_GID)) {
		if (c->dialect != NP_9P2000U)
			return -EOPNOTSUPP;
		if (s->valid & NP_SETATTR_UID)
			st.n_uid = s->uid;
		if (s->valid & NP_SETATTR_GID)
			st.n_gid = s->gid;
	}
	return np_cfid_wstat(f, &st);
}

static int copy_str(np_str *dst, np_str src, char *buf, size_t cap, size_t *used)
{
	if (cap - *used < (size_t)src.len + 1)
		return -ERANGE;
	memcpy(buf + *used, src.s, src.len);
	buf[*used + src.len] = '\0';
	*dst = np_str_make(buf + *used, src.len);
	*used += (size_t)src.len + 1;
	return 0;
}

int np_cfid_stat(np_cfid *f, np_stat *st, char *strbuf, size_t cap)
{
	np_creq *r;
	int e = np_rpc_fid(f, NP_TSTAT, &r);
	if (e < 0)
		return e;
	const np_stat *s = &r->rc.rstat.stat;
	size_t used = 0;
	*st = *s;
	if ((e = copy_str(&st->name, s->name, strbuf, cap, &used)) == 0 &&
	    (e = copy_str(&st->uid, s->uid, strbuf, cap, &used)) == 0 &&
	    (e = copy_str(&st->gid, s->gid, strbuf, cap, &used)) == 0 &&
	    (e = copy_str(&st->muid, s->muid, strbuf, cap, &used)) == 0)
		e = copy_str(&st->extension, s->extension, strbuf, cap, &used);
	np_creq_release(r);
	return e;
}

int np_cfid_wstat(np_cfid *f, const np_stat *st)
{
	np_fcall t = {.type = NP_TWSTAT};
	t.twstat.fid = f->fid;
	t.twstat.stat = *st;
	return np_rpc0(f->client, &t);
}

int np_cfid_statfs(np_cfid *f, struct np_statfs *s)
{
	if (f->client->dialect != NP_9P2000L)
		return -EOPNOTSUPP;
	np_creq *r;
	int e = np_rpc_fid(f, NP_TSTATFS, &r);
	if (e < 0)
		return e;
	s->type = r->rc.rstatfs.type;
	s->bsize = r->rc.rstatfs.bsize;
	s->blocks = r->rc.rstatfs.blocks;
	s->bfree = r->rc.rstatfs.bfree;
	s->bavail = r->rc.rstatfs.bavail;
	s->files = r->rc.rstatfs.files;
	s->ffree = r->rc.rstatfs.ffree;
	s->fsid = r->rc.rstatfs.fsid;
	s->namelen = r->rc.rstatfs.namelen;
	np_creq_release(r);
	return 0;
}

int np_cfid_fsync(np_cfid *f, int datasync)
{
	if (f->client->dialect != NP_9P2000L) {
		/* 9P2000: a wstat that changes nothing asks for a sync. */
		np_stat st;
		stat_dont_touch(&st);
		return np_cfid_wstat(f, &st);
	}
	np_fcall t = {.type = NP_TFSYNC};
	t.tfsync.fid = f->fid;
	t.tfsync.datasync = datasync ? 1 : 0;
	return np_rpc0(f->client, &t);
}

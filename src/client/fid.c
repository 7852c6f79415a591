/* Fid handles: the fid number pool, attach, walk, clunk, remove, open and
 * create. */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "client/client_impl.h"

np_cfid *np_cfid_alloc(np_client *c)
{
	pthread_mutex_lock(&c->lock);
	struct np_cfid_slot *s = c->freeslots;
	if (s)
		c->freeslots = s->next;
	pthread_mutex_unlock(&c->lock);
	if (!s && !(s = malloc(sizeof *s)))
		return NULL;
	pthread_mutex_lock(&c->lock);
	uint32_t fid;
	if (c->nfreefids)
		fid = c->freefids[--c->nfreefids];
	else if (c->nextfid == NP_NOFID)
		fid = NP_NOFID;
	else
		fid = c->nextfid++;
	pthread_mutex_unlock(&c->lock);
	if (fid == NP_NOFID) {
		free(s);
		return NULL;
	}
	memset(&s->f, 0, sizeof s->f);
	s->f.client = c;
	s->f.fid = fid;
	return &s->f;
}

void np_cfid_free(np_cfid *f)
{
	np_client *c = f->client;
	struct np_cfid_slot *s = (struct np_cfid_slot *)f;
	pthread_mutex_lock(&c->lock);
	if (c->nfreefids == c->capfreefids) {
		uint32_t ncap = c->capfreefids ? c->capfreefids * 2 : 64;
		uint32_t *n = realloc(c->freefids, ncap * sizeof *n);
		if (!n) {
			/* Losing one fid number is better than reusing a live one. */
			pthread_mutex_unlock(&c->lock);
			free(s);
			return;
		}
		c->freefids = n;
		c->capfreefids = ncap;
	}
	c->freefids[c->nfreefids++] = f->fid;
	s->next = c->freeslots;
	c->freeslots = s;
	pthread_mutex_unlock(&c->lock);
}

uint32_t np_cfid_iosize(const np_cfid *f)
{
	uint32_t max = f->client->msize - NP_IOHDRSZ;
	return f->iounit && f->iounit < max ? f->iounit : max;
}

int np_client_attach(np_client *c, const char *uname, uint32_t n_uname, const char *aname,
		     np_cfid **root)
{
	np_cfid *f = np_cfid_alloc(c);
	if (!f)
		return -ENOMEM;
	np_fcall t = {.type = NP_TATTACH};
	t.tattach.fid = f->fid;
	t.tattach.afid = NP_NOFID;
	t.tattach.uname = np_strz(uname ? uname : "");
	t.tattach.aname = np_strz(aname ? aname : "");
	t.tattach.n_uname = n_uname;
	np_creq *r;
	int e = np_rpc(c, &t, &r);
	if (e < 0) {
		np_cfid_free(f);
		return e;
	}
	f->qid = r->rc.rattach.qid;
	np_creq_release(r);
	*root = f;
	return 0;
}

int np_cfid_walk(np_cfid *f, unsigned nwname, const char *const *names, np_cfid **out)
{
	if (nwname > NP_MAXWELEM)
		return -EINVAL;
	np_client *c = f->client;
	np_cfid *nf = np_cfid_alloc(c);
	if (!nf)
		return -ENOMEM;
	np_fcall t = {.type = NP_TWALK};
	t.twalk.fid = f->fid;
	t.twalk.newfid = nf->fid;
	t.twalk.nwname = (uint16_t)nwname;
	for (unsigned i = 0; i < nwname; i++) {
		size_t l = strlen(names[i]);
		if (l > 65535) {
			np_cfid_free(nf);
			return -ENAMETOOLONG;
		}
		t.twalk.wname[i] = np_str_make(names[i], (uint16_t)l);
	}
	np_creq *r;
	int e = np_rpc(c, &t, &r);
	if (e < 0) {
		np_cfid_free(nf);
		return e;
	}
	if (r->rc.rwalk.nwqid < nwname) {
		/* Partial walk: newfid was not created. */
		np_creq_release(r);
		np_cfid_free(nf);
		return -ENOENT;
	}
	nf->qid = nwname ? r->rc.rwalk.wqid[nwname - 1] : f->qid;
	np_creq_release(r);
	*out = nf;
	return 0;
}

int np_client_walk_path(np_cfid *f, const char *path, np_cfid **out)
{
	const char *names[NP_MAXWELEM];
	char *copy = strdup(path ? path : "");
	if (!copy)
		return -ENOMEM;
	np_cfid *cur = f;
	unsigned n = 0;
	int e = 0, walked = 0;
	char *save = NULL;
	for (char *tok = strtok_r(copy, "/", &save);; tok = strtok_r(NULL, "/", &save)) {
		if (tok && strcmp(tok, ".") == 0)
			continue;
		if (tok)
			names[n++] = tok;
		if (n == NP_MAXWELEM || (!tok && (n || !walked))) {
			np_cfid *nf;
			e = np_cfid_walk(cur, n, names, &nf);
			if (cur != f)
				np_cfid_clunk(cur);
			if (e < 0)
				break;
			cur = nf;
			walked = 1;
			n = 0;
		}
		if (!tok)
			break;
	}
	free(copy);
	if (e < 0)
		return e;
	*out = cur;
	return 0;
}

int np_rpc_fid(np_cfid *f, uint8_t type, np_creq **out)
{
	/* Every fid-only request has the layout of Tclunk's. */
	np_fcall t = {.type = type};
	t.tclunk.fid = f->fid;
	return np_rpc(f->client, &t, out);
}

/* Tclunk and Tremove: the fid is gone after either, whatever the reply. */
static int retire(np_cfid *f, uint8_t type)
{
	np_fcall t = {.type = type};
	t.tclunk.fid = f->fid;
	int e = np_rpc0(f->client, &t);
	np_cfid_free(f);
	return e;
}

int np_cfid_clunk(np_cfid *f)
{
	return retire(f, NP_TCLUNK);
}

int np_cfid_remove(np_cfid *f)
{
	return retire(f, NP_TREMOVE);
}

/* The protocol fixes 9P2000.L flags at their x86 Linux values; translate
 * so this also holds on hosts whose O_* differ. */
uint32_t np_oflags_to_l(int flags)
{
	static const struct { int o; uint32_t l; } map[] = {
		{O_CREAT, NP_L_O_CREATE}, {O_EXCL, NP_L_O_EXCL},
		{O_NOCTTY, NP_L_O_NOCTTY}, {O_TRUNC, NP_L_O_TRUNC},
		{O_APPEND, NP_L_O_APPEND}, {O_NONBLOCK, NP_L_O_NONBLOCK},
		{O_DSYNC, NP_L_O_DSYNC}, {O_DIRECT, NP_L_O_DIRECT},
		{O_DIRECTORY, NP_L_O_DIRECTORY}, {O_NOFOLLOW, NP_L_O_NOFOLLOW},
		{O_NOATIME, NP_L_O_NOATIME}, {O_CLOEXEC, NP_L_O_CLOEXEC},
	};
	uint32_t l;
	switch (flags & O_ACCMODE) {
	case O_WRONLY: l = NP_L_O_WRONLY; break;
	case O_RDWR: l = NP_L_O_RDWR; break;
	default: l = NP_L_O_RDONLY; break;
	}
	for (size_t i = 0; i < sizeof map / sizeof map[0]; i++)
		if ((flags & map[i].o) == map[i].o)
			l |= map[i].l;
	/* O_SYNC contains O_DSYNC's bit on Linux: test it whole. */
	if ((flags & O_SYNC) == O_SYNC)
		l |= NP_L_O_SYNC;
	return l;
}

uint8_t np_oflags_to_mode(int flags)
{
	uint8_t m;
	switch (flags & O_ACCMODE) {
	case O_WRONLY: m = NP_OWRITE; break;
	case O_RDWR: m = NP_ORDWR; break;
	default: m = NP_OREAD; break;
	}
	if (flags & O_TRUNC)
		m |= NP_OTRUNC;
	return m;
}

/* Send an open or create of either dialect: all four replies carry the
 * qid and iounit the fid is now open with. */
static int open_rpc(np_cfid *f, const np_fcall *t)
{
	np_creq *r;
	int e = np_rpc(f->client, t, &r);
	if (e < 0)
		return e;
	f->qid = r->rc.ropen.qid;
	f->iounit = r->rc.ropen.iounit;
	f->opened = 1;
	np_creq_release(r);
	return 0;
}

int np_cfid_open(np_cfid *f, int flags)
{
	np_fcall t;
	memset(&t, 0, sizeof t);
	if (f->client->dialect == NP_9P2000L) {
		t.type = NP_TLOPEN;
		t.tlopen.fid = f->fid;
		t.tlopen.flags = np_oflags_to_l(flags & ~(O_CREAT | O_EXCL));
	} else {
		t.type = NP_TOPEN;
		t.topen.fid = f->fid;
		t.topen.mode = np_oflags_to_mode(flags);
	}
	return open_rpc(f, &t);
}

int np_cfid_create(np_cfid *f, const char *name, int flags, uint32_t mode, uint32_t gid)
{
	np_fcall t;
	memset(&t, 0, sizeof t);
	if (f->client->dialect == NP_9P2000L) {
		t.type = NP_TLCREATE;
		t.tlcreate.fid = f->fid;
		t.tlcreate.name = np_strz(name);
		t.tlcreate.flags = np_oflags_to_l(flags | O_CREAT);
		t.tlcreate.mode = mode & 07777;
		t.tlcreate.gid = gid;
	} else {
		t.type = NP_TCREATE;
		t.tcreate.fid = f->fid;
		t.tcreate.name = np_strz(name);
		t.tcreate.perm = mode & 0777;
		if (S_ISDIR(mode))
			t.tcreate.perm |= NP_DMDIR;
		t.tcreate.mode = np_oflags_to_mode(flags);
		t.tcreate.extension = np_strz("");
	}
	return open_rpc(f, &t);
}

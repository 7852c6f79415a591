/* Extended attributes through xattrwalk/xattrcreate fids, and POSIX record
 * locks (9P2000.L only). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/xattr.h>

#include "client/client_impl.h"

/* Open an xattr fid for reading `name` ("" lists); *size gets its size. */
static int xattr_walk(np_cfid *f, const char *name, np_cfid **out, uint64_t *size)
{
	np_client *c = f->client;
	if (c->dialect != NP_9P2000L)
		return -EOPNOTSUPP;
	np_cfid *xf = np_cfid_alloc(c);
	if (!xf)
		return -ENOMEM;
	np_fcall t = {.type = NP_TXATTRWALK};
	t.txattrwalk.fid = f->fid;
	t.txattrwalk.newfid = xf->fid;
	t.txattrwalk.name = np_strz(name);
	np_creq *r;
	int e = np_rpc(c, &t, &r);
	if (e < 0) {
		np_cfid_free(xf);
		return e;
	}
	*size = r->rc.rxattrwalk.size;
	np_creq_release(r);
	*out = xf;
	return 0;
}

ssize_t np_cfid_getxattr(np_cfid *f, const char *name, void *buf, size_t cap)
{
	np_cfid *xf;
	uint64_t size;
	int e = xattr_walk(f, name, &xf, &size);
	if (e < 0)
		return e;
	ssize_t ret;
	if (cap == 0)
		ret = (ssize_t)size;
	else if (size > cap)
		ret = -ERANGE;
	else if (size == 0)
		ret = 0;
	else {
		ret = np_cfid_pread(xf, buf, (size_t)size, 0);
		if (ret >= 0 && (uint64_t)ret != size)
			ret = -EPROTO; /* the server announced more than it gave */
	}
	np_cfid_clunk(xf);
	return ret;
}

ssize_t np_cfid_listxattr(np_cfid *f, char *buf, size_t cap)
{
	return np_cfid_getxattr(f, "", buf, cap);
}

int np_cfid_setxattr(np_cfid *f, const char *name, const void *value, size_t len, int flags)
{
	np_client *c = f->client;
	if (c->dialect != NP_9P2000L)
		return -EOPNOTSUPP;
	np_cfid *xf;
	int e = np_cfid_walk(f, 0, NULL, &xf);
	if (e < 0)
		return e;
	np_fcall t = {.type = NP_TXATTRCREATE};
	t.txattrcreate.fid = xf->fid;
	t.txattrcreate.name = np_strz(name);
	t.txattrcreate.attr_size = len;
	t.txattrcreate.flags = (uint32_t)flags;
	e = np_rpc0(c, &t);
	if (e == 0 && len) {
		ssize_t w = np_cfid_pwrite(xf, value, len, 0);
		if (w < 0)
			e = (int)w;
		else if ((size_t)w != len)
			e = -EIO;
	}
	/* The attribute is set when the fid is clunked: that is the result. */
	int ce = np_cfid_clunk(xf);
	return e ? e : ce;
}

int np_cfid_removexattr(np_cfid *f, const char *name)
{
	/* Linux v9fs removes with an empty value and XATTR_REPLACE. */
	return np_cfid_setxattr(f, name, NULL, 0, XATTR_REPLACE);
}

int np_cfid_lock(np_cfid *f, const struct np_flock *l, uint32_t flags)
{
	if (f->client->dialect != NP_9P2000L)
		return -EOPNOTSUPP;
	np_fcall t = {.type = NP_TLOCK};
	t.tlock.fid = f->fid;
	t.tlock.type = l->type;
	t.tlock.flags = flags;
	t.tlock.start = l->start;
	t.tlock.length = l->length;
	t.tlock.proc_id = l->proc_id;
	t.tlock.client_id = np_strz(l->client_id ? l->client_id : "");
	np_creq *r;
	int e = np_rpc(f->client, &t, &r);
	if (e < 0)
		return e;
	e = r->rc.rlock.status;
	np_creq_release(r);
	return e;
}

int np_cfid_getlock(np_cfid *f, struct np_flock *l, char *idbuf, size_t idcap)
{
	if (f->client->dialect != NP_9P2000L)
		return -EOPNOTSUPP;
	np_fcall t = {.type = NP_TGETLOCK};
	t.tgetlock.fid = f->fid;
	t.tgetlock.type = l->type;
	t.tgetlock.start = l->start;
	t.tgetlock.length = l->length;
	t.tgetlock.proc_id = l->proc_id;
	t.tgetlock.client_id = np_strz(l->client_id ? l->client_id : "");
	np_creq *r;
	int e = np_rpc(f->client, &t, &r);
	if (e < 0)
		return e;
	l->type = r->rc.rgetlock.type;
	l->start = r->rc.rgetlock.start;
	l->length = r->rc.rgetlock.length;
	l->proc_id = r->rc.rgetlock.proc_id;
	if (idbuf && np_str_copy(idbuf, idcap, r->rc.rgetlock.client_id) == 0)
		l->client_id = idbuf;
	else
		l->client_id = NULL;
	np_creq_release(r);
	return 0;
}

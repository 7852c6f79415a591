/* ramfs fid life cycle: Tattach, Twalk, Tclunk, Tremove and fid release. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "ramfs_int.h"

/* The numeric uid of an attach: n_uname when given, else a numeric uname,
 * "root", or nobody. */
static uint32_t attach_uid(const np_fcall *t)
{
	if (t->tattach.n_uname != NP_NONUNAME)
		return t->tattach.n_uname;
	np_str u = t->tattach.uname;
	if (np_str_eq(u, "root"))
		return 0;
	if (u.len == 0 || u.len > 9)
		return 65534;
	uint32_t v = 0;
	for (uint16_t i = 0; i < u.len; i++) {
		if (u.s[i] < '0' || u.s[i] > '9')
			return 65534;
		v = v * 10 + (uint32_t)(u.s[i] - '0');
	}
	return v;
}

/* One walk step from *cur by name; 0 or errno. */
static int step(np_ramfs *fs, struct rnode **cur, const char *name, uint16_t len, uint32_t uid)
{
	struct rnode *d = *cur;
	if (d->kind != RK_DIR)
		return ENOTDIR;
	int err = rnode_access(fs, d, uid, 1);
	if (err)
		return err;
	if (len == 2 && name[0] == '.' && name[1] == '.') {
		if (!d->parent)
			return ENOENT; /* d was removed */
		*cur = d->parent;   /* the root is its own parent */
		return 0;
	}
	if (len == 1 && name[0] == '.')
		return 0;
	struct rdirent *e = rdir_lookup(d, name, len);
	if (!e)
		return ENOENT;
	*cur = e->node;
	return 0;
}

int ramfs_attach(np_req *r)
{
	np_ramfs *fs = fs_of(r);
	np_fid *f = r->newfid;
	struct rfid *rf = rfid_of(f);
	uint32_t uid = attach_uid(&r->ifcall);
	np_str an = r->ifcall.tattach.aname;
	int err = 0;

	pthread_rwlock_wrlock(&fs->lock);
	struct rnode *n = fs->root;
	for (uint16_t i = 0; i < an.len && !err;) {
		if (an.s[i] == '/') {
			i++;
			continue;
		}
		uint16_t j = i;
		while (j < an.len && an.s[j] != '/')
			j++;
		err = step(fs, &n, an.s + i, (uint16_t)(j - i), uid);
		i = j;
	}
	if (!err && n->kind != RK_DIR)
		err = ENOTDIR;
	if (!err) {
		rnode_ref(n);
		rf->fs = fs;
		rf->node = n;
		rf->kind = RF_NODE;
		f->uid = uid;
		f->qid = rnode_qid(n);
		r->ofcall.rattach.qid = f->qid;
	}
	pthread_rwlock_unlock(&fs->lock);
	return err;
}

int ramfs_walk(np_req *r)
{
	np_ramfs *fs = fs_of(r);
	struct rfid *rf = rfid_of(r->fid);
	uint16_t nw = r->ifcall.twalk.nwname;
	uint16_t i;
	int err = 0;

	if (rf->kind != RF_NODE)
		return EINVAL;
	pthread_rwlock_wrlock(&fs->lock);
	struct rnode *cur = rf->node;
	for (i = 0; i < nw; i++) {
		np_str w = r->ifcall.twalk.wname[i];
		err = step(fs, &cur, w.s, w.len, r->fid->uid);
		if (err)
			break;
		r->ofcall.rwalk.wqid[i] = rnode_qid(cur);
	}
	r->ofcall.rwalk.nwqid = i;
	if (i < nw) {
		pthread_rwlock_unlock(&fs->lock);
		return i == 0 ? err : 0;
	}
	np_fid *nf = r->newfid;
	struct rfid *nrf = rfid_of(nf);
	rnode_ref(cur);
	if (nrf->node)
		rnode_unref(fs, nrf->node); /* newfid == fid: moves */
	nrf->fs = fs;
	nrf->node = cur;
	nrf->kind = RF_NODE;
	nf->qid = rnode_qid(cur);
	if (nf != r->fid) {
		nf->uid = r->fid->uid;
		nf->user = r->fid->user;
	}
	pthread_rwlock_unlock(&fs->lock);
	return 0;
}

void ramfs_destroy_fid(np_fid *f)
{
	struct rfid *rf = rfid_of(f);
	struct rnode *n = rf->node;
	if (!n)
		return; /* never attached, or a walk that did not complete */
	np_ramfs *fs = rf->fs;
	/* synthetic nodes are never freed before the fs, so their ops can be
	 * called without the lock */
	if (n->kind == RK_SYNTH && rf->opened && n->synth.ops->clunk)
		n->synth.ops->clunk(n->synth.arg, rf->synth_state);
	pthread_rwlock_wrlock(&fs->lock);
	if (n->locks)
		rlock_release_fid(n, f);
	free(rf->xbuf);
	free(rf->xname);
	rf->xbuf = NULL;
	rf->xname = NULL;
	rf->node = NULL;
	rnode_unref(fs, n);
	pthread_rwlock_unlock(&fs->lock);
}

/* Commit a pending xattr write (Txattrcreate + Twrite), as the protocol says
 * it happens at clunk.  The written length must equal attr_size.  Size 0
 * removes the attribute (Linux sends removexattr this way, with
 * XATTR_REPLACE), except with XATTR_CREATE, which can only mean "create an
 * empty value". */
static int xattr_commit(np_ramfs *fs, struct rfid *rf)
{
	struct rnode *n = rf->node;
	int err;
	if (rf->xwritten != rf->xlen)
		return EINVAL;
	if (rf->xlen == 0 && !(rf->xflags & 1 /* XATTR_CREATE */))
		err = rxattr_remove(n, rf->xname);
	else
		err = rxattr_set(n, rf->xname, rf->xbuf, (uint32_t)rf->xlen, rf->xflags);
	if (!err)
		rnode_touch(n, 0);
	(void)fs;
	return err;
}

int ramfs_clunk(np_req *r)
{
	np_ramfs *fs = fs_of(r);
	struct rfid *rf = rfid_of(r->fid);
	int err = 0;
	if (rf->kind != RF_XATTR_WRITE)
		return 0;
	pthread_rwlock_wrlock(&fs->lock);
	if (rf->kind == RF_XATTR_WRITE) {
		err = xattr_commit(fs, rf);
		rf->kind = RF_NODE; /* commit once */
	}
	pthread_rwlock_unlock(&fs->lock);
	return err;
}

int ramfs_remove(np_req *r)
{
	np_ramfs *fs = fs_of(r);
	struct rfid *rf = rfid_of(r->fid);
	int err = 0;
	pthread_rwlock_wrlock(&fs->lock);
	struct rnode *n = rf->node;
	struct rnode *d = n->parent;
	struct rdirent *e = NULL;
	if (n == fs->root)
		err = EBUSY;
	else if (!d || !(e = rdir_find_node(d, n)))
		err = ENOENT;
	else if (n->kind == RK_DIR && n->dir.n)
		err = ENOTEMPTY;
	else
		err = rnode_may_delete(fs, d, n, r->fid->uid);
	if (!err)
		ramfs_unlink_entry(fs, d, e);
	pthread_rwlock_unlock(&fs->lock);
	return err;
}

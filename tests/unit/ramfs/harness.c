/* Direct-call harness for ramfs handlers (see harness.h). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"

np_fid *th_fid_new(uint32_t fidno)
{
	np_fid *f = calloc(1, sizeof(np_fid) + np_ramfs_ops.fid_priv_size);
	if (f)
		f->fid = fidno;
	return f;
}

void th_fid_release(np_fid *f)
{
	if (!f)
		return;
	np_ramfs_ops.destroy_fid(f);
	free(f);
}

void th_req_init(np_req *r, np_ramfs *fs, uint8_t type)
{
	memset(r, 0, sizeof(*r));
	r->ifcall.type = type;
	r->ofcall.type = (uint8_t)(type + 1);
	r->fs = fs;
	r->dialect = NP_9P2000L;
	r->msize = TH_MSIZE;
}

np_fid *th_attach(np_ramfs *fs, uint32_t uid, const char *aname, int *err)
{
	np_req r;
	th_req_init(&r, fs, NP_TATTACH);
	np_fid *f = th_fid_new(1);
	r.ifcall.tattach.fid = 1;
	r.ifcall.tattach.afid = NP_NOFID;
	r.ifcall.tattach.uname = np_strz("user");
	r.ifcall.tattach.aname = np_strz(aname ? aname : "");
	r.ifcall.tattach.n_uname = uid;
	r.newfid = f;
	*err = np_ramfs_ops.attach(&r);
	if (*err) {
		th_fid_release(f);
		return NULL;
	}
	return f;
}

static uint16_t split(const char *path, np_str *w)
{
	uint16_t n = 0;
	const char *p = path;
	while (*p && n < NP_MAXWELEM) {
		const char *q = strchr(p, '/');
		size_t len = q ? (size_t)(q - p) : strlen(p);
		w[n++] = np_str_make(p, (uint16_t)len);
		if (!q)
			break;
		p = q + 1;
	}
	return n;
}

static int do_walk(np_ramfs *fs, np_fid *f, np_fid *nf, const char *path, uint16_t *nwqid)
{
	np_req r;
	th_req_init(&r, fs, NP_TWALK);
	r.ifcall.twalk.nwname = split(path, r.ifcall.twalk.wname);
	r.fid = f;
	r.newfid = nf;
	int err = np_ramfs_ops.walk(&r);
	*nwqid = r.ofcall.rwalk.nwqid;
	if (!err && r.ofcall.rwalk.nwqid < r.ifcall.twalk.nwname)
		return -(int)r.ofcall.rwalk.nwqid - 1; /* partial */
	return err;
}

np_fid *th_walk(np_ramfs *fs, np_fid *f, const char *path, int *err)
{
	np_fid *nf = th_fid_new(f->fid + 1000);
	uint16_t nq;
	*err = do_walk(fs, f, nf, path, &nq);
	if (*err) {
		/* the core discards a newfid that was not fully walked */
		th_fid_release(nf);
		return NULL;
	}
	return nf;
}

int th_walk_self(np_ramfs *fs, np_fid *f, const char *path, uint16_t *nwqid)
{
	return do_walk(fs, f, f, path, nwqid);
}

int th_lopen(np_ramfs *fs, np_fid *f, uint32_t flags)
{
	np_req r;
	th_req_init(&r, fs, NP_TLOPEN);
	r.ifcall.tlopen.fid = f->fid;
	r.ifcall.tlopen.flags = flags;
	r.fid = f;
	int err = np_ramfs_ops.lopen(&r);
	if (!err) {
		f->opened = 1;
		f->open_flags = flags;
	}
	return err;
}

int th_lcreate(np_ramfs *fs, np_fid *f, const char *name, uint32_t flags, uint32_t mode)
{
	np_req r;
	th_req_init(&r, fs, NP_TLCREATE);
	r.ifcall.tlcreate.fid = f->fid;
	r.ifcall.tlcreate.name = np_strz(name);
	r.ifcall.tlcreate.flags = flags;
	r.ifcall.tlcreate.mode = mode;
	r.ifcall.tlcreate.gid = 0;
	r.fid = f;
	int err = np_ramfs_ops.lcreate(&r);
	if (!err) {
		f->opened = 1;
		f->open_flags = flags;
	}
	return err;
}

int th_read(np_ramfs *fs, np_fid *f, uint64_t off, void *buf, uint32_t count, uint32_t *got)
{
	np_req r;
	th_req_init(&r, fs, NP_TREAD);
	r.ifcall.tread.fid = f->fid;
	r.ifcall.tread.offset = off;
	r.ifcall.tread.count = count;
	r.ofcall.rread.data = buf;
	r.ofcall.rread.count = count;
	r.fid = f;
	int err = np_ramfs_ops.read(&r);
	*got = err ? 0 : r.ofcall.rread.count;
	return err;
}

int th_write(np_ramfs *fs, np_fid *f, uint64_t off, const void *data, uint32_t count, uint32_t *wrote)
{
	np_req r;
	th_req_init(&r, fs, NP_TWRITE);
	r.ifcall.twrite.fid = f->fid;
	r.ifcall.twrite.offset = off;
	r.ifcall.twrite.count = count;
	r.ifcall.twrite.data = data;
	r.fid = f;
	int err = np_ramfs_ops.write(&r);
	*wrote = err ? 0 : r.ofcall.rwrite.count;
	return err;
}

int th_readdir(np_ramfs *fs, np_fid *f, uint64_t off, void *buf, uint32_t count, uint32_t *got)
{
	np_req r;
	th_req_init(&r, fs, NP_TREADDIR);
	r.ifcall.tread.fid = f->fid;
	r.ifcall.tread.offset = off;
	r.ifcall.tread.count = count;
	r.ofcall.rread.data = buf;
	r.ofcall.rread.count = count;
	r.fid = f;
	int err = np_ramfs_ops.readdir(&r);
	*got = err ? 0 : r.ofcall.rread.count;
	return err;
}

int th_mkdir(np_ramfs *fs, np_fid *d, const char *name, uint32_t mode, np_qid *qid)
{
	np_req r;
	th_req_init(&r, fs, NP_TMKDIR);
	r.ifcall.tmkdir.dfid = d->fid;
	r.ifcall.tmkdir.name = np_strz(name);
	r.ifcall.tmkdir.mode = mode;
	r.fid = d;
	int err = np_ramfs_ops.mkdir(&r);
	if (!err && qid)
		*qid = r.ofcall.rqid.qid;
	return err;
}

int th_symlink(np_ramfs *fs, np_fid *d, const char *name, const char *target, np_qid *qid)
{
	np_req r;
	th_req_init(&r, fs, NP_TSYMLINK);
	r.ifcall.tsymlink.fid = d->fid;
	r.ifcall.tsymlink.name = np_strz(name);
	r.ifcall.tsymlink.symtgt = np_strz(target);
	r.fid = d;
	int err = np_ramfs_ops.symlink(&r);
	if (!err && qid)
		*qid = r.ofcall.rqid.qid;
	return err;
}

int th_mknod(np_ramfs *fs, np_fid *d, const char *name, uint32_t mode, uint32_t major, uint32_t minor)
{
	np_req r;
	th_req_init(&r, fs, NP_TMKNOD);
	r.ifcall.tmknod.dfid = d->fid;
	r.ifcall.tmknod.name = np_strz(name);
	r.ifcall.tmknod.mode = mode;
	r.ifcall.tmknod.major = major;
	r.ifcall.tmknod.minor = minor;
	r.fid = d;
	return np_ramfs_ops.mknod(&r);
}

int th_link(np_ramfs *fs, np_fid *d, np_fid *f, const char *name)
{
	np_req r;
	th_req_init(&r, fs, NP_TLINK);
	r.ifcall.tlink.dfid = d->fid;
	r.ifcall.tlink.fid = f->fid;
	r.ifcall.tlink.name = np_strz(name);
	r.fid = d;
	r.fid2 = f;
	return np_ramfs_ops.link(&r);
}

int th_rename(np_ramfs *fs, np_fid *f, np_fid *d, const char *name)
{
	np_req r;
	th_req_init(&r, fs, NP_TRENAME);
	r.ifcall.trename.fid = f->fid;
	r.ifcall.trename.dfid = d->fid;
	r.ifcall.trename.name = np_strz(name);
	r.fid = f;
	r.fid2 = d;
	return np_ramfs_ops.rename(&r);
}

int th_renameat(np_ramfs *fs, np_fid *od, const char *on, np_fid *nd, const char *nn)
{
	np_req r;
	th_req_init(&r, fs, NP_TRENAMEAT);
	r.ifcall.trenameat.olddirfid = od->fid;
	r.ifcall.trenameat.oldname = np_strz(on);
	r.ifcall.trenameat.newdirfid = nd->fid;
	r.ifcall.trenameat.newname = np_strz(nn);
	r.fid = od;
	r.fid2 = nd;
	return np_ramfs_ops.renameat(&r);
}

int th_unlinkat(np_ramfs *fs, np_fid *d, const char *name, uint32_t flags)
{
	np_req r;
	th_req_init(&r, fs, NP_TUNLINKAT);
	r.ifcall.tunlinkat.dirfid = d->fid;
	r.ifcall.tunlinkat.name = np_strz(name);
	r.ifcall.tunlinkat.flags = flags;
	r.fid = d;
	return np_ramfs_ops.unlinkat(&r);
}

int th_remove(np_ramfs *fs, np_fid *f)
{
	np_req r;
	th_req_init(&r, fs, NP_TREMOVE);
	r.ifcall.tclunk.fid = f->fid;
	r.fid = f;
	int err = np_ramfs_ops.remove(&r);
	th_fid_release(f);
	return err;
}

int th_clunk(np_ramfs *fs, np_fid *f)
{
	np_req r;
	th_req_init(&r, fs, NP_TCLUNK);
	r.ifcall.tclunk.fid = f->fid;
	r.fid = f;
	int err = np_ramfs_ops.clunk(&r);
	th_fid_release(f);
	return err;
}

int th_getattr(np_ramfs *fs, np_fid *f, np_fcall *out)
{
	np_req r;
	th_req_init(&r, fs, NP_TGETATTR);
	r.ifcall.tgetattr.fid = f->fid;
	r.ifcall.tgetattr.request_mask = NP_GETATTR_ALL;
	r.fid = f;
	int err = np_ramfs_ops.getattr(&r);
	*out = r.ofcall;
	return err;
}

int th_setattr(np_ramfs *fs, np_fid *f, const np_fcall *in)
{
	np_req r;
	th_req_init(&r, fs, NP_TSETATTR);
	r.ifcall.tsetattr = in->tsetattr;
	r.ifcall.tsetattr.fid = f->fid;
	r.fid = f;
	return np_ramfs_ops.setattr(&r);
}

int th_readlink(np_ramfs *fs, np_fid *f, char *out, size_t cap)
{
	np_req r;
	char room[4096];
	th_req_init(&r, fs, NP_TREADLINK);
	r.ifcall.tclunk.fid = f->fid;
	r.ofcall.rreadlink.target = np_str_make(room, sizeof(room));
	r.fid = f;
	int err = np_ramfs_ops.readlink(&r);
	if (!err)
		err = np_str_copy(out, cap, r.ofcall.rreadlink.target) ? ENAMETOOLONG : 0;
	return err;
}

int th_statfs(np_ramfs *fs, np_fid *f, np_fcall *out)
{
	np_req r;
	th_req_init(&r, fs, NP_TSTATFS);
	r.ifcall.tclunk.fid = f->fid;
	r.fid = f;
	int err = np_ramfs_ops.statfs(&r);
	*out = r.ofcall;
	return err;
}

int th_fsync(np_ramfs *fs, np_fid *f)
{
	np_req r;
	th_req_init(&r, fs, NP_TFSYNC);
	r.ifcall.tfsync.fid = f->fid;
	r.fid = f;
	return np_ramfs_ops.fsync(&r);
}

np_fid *th_xattrwalk(np_ramfs *fs, np_fid *f, const char *name, uint64_t *size, int *err)
{
	np_req r;
	np_fid *nf = th_fid_new(f->fid + 2000);
	th_req_init(&r, fs, NP_TXATTRWALK);
	r.ifcall.txattrwalk.fid = f->fid;
	r.ifcall.txattrwalk.newfid = nf->fid;
	r.ifcall.txattrwalk.name = np_strz(name);
	r.fid = f;
	r.newfid = nf;
	*err = np_ramfs_ops.xattrwalk(&r);
	if (*err) {
		th_fid_release(nf);
		return NULL;
	}
	*size = r.ofcall.rxattrwalk.size;
	return nf;
}

int th_xattrcreate(np_ramfs *fs, np_fid *f, const char *name, uint64_t size, uint32_t flags)
{
	np_req r;
	th_req_init(&r, fs, NP_TXATTRCREATE);
	r.ifcall.txattrcreate.fid = f->fid;
	r.ifcall.txattrcreate.name = np_strz(name);
	r.ifcall.txattrcreate.attr_size = size;
	r.ifcall.txattrcreate.flags = flags;
	r.fid = f;
	return np_ramfs_ops.xattrcreate(&r);
}

int th_lock(np_ramfs *fs, np_fid *f, uint8_t type, uint64_t start, uint64_t len,
	    uint32_t proc, const char *client, uint8_t *status)
{
	np_req r;
	th_req_init(&r, fs, NP_TLOCK);
	r.ifcall.tlock.fid = f->fid;
	r.ifcall.tlock.type = type;
	r.ifcall.tlock.start = start;
	r.ifcall.tlock.length = len;
	r.ifcall.tlock.proc_id = proc;
	r.ifcall.tlock.client_id = np_strz(client);
	r.fid = f;
	int err = np_ramfs_ops.lock(&r);
	*status = r.ofcall.rlock.status;
	return err;
}

int th_getlock(np_ramfs *fs, np_fid *f, uint8_t type, uint64_t start, uint64_t len,
	       uint32_t proc, const char *client, np_fcall *out)
{
	np_req r;
	th_req_init(&r, fs, NP_TGETLOCK);
	r.ifcall.tgetlock.fid = f->fid;
	r.ifcall.tgetlock.type = type;
	r.ifcall.tgetlock.start = start;
	r.ifcall.tgetlock.length = len;
	r.ifcall.tgetlock.proc_id = proc;
	r.ifcall.tgetlock.client_id = np_strz(client);
	r.fid = f;
	int err = np_ramfs_ops.getlock(&r);
	*out = r.ofcall;
	return err;
}

void th_put(np_ramfs *fs, np_fid *d, const char *name, const char *contents)
{
	int err;
	uint32_t w;
	np_fid *f = th_walk(fs, d, "", &err);
	if (!f)
		abort();
	if (th_lcreate(fs, f, name, NP_L_O_RDWR, 0644) ||
	    th_write(fs, f, 0, contents, (uint32_t)strlen(contents), &w) || w != strlen(contents))
		abort();
	th_clunk(fs, f);
}

int th_get(np_ramfs *fs, np_fid *d, const char *path, char *out, size_t cap, uint32_t *len)
{
	int err;
	np_fid *f = th_walk(fs, d, path, &err);
	if (!f)
		return err;
	err = th_lopen(fs, f, NP_L_O_RDONLY);
	uint32_t total = 0, got = 1;
	while (!err && got && total + 1 < cap) {
		err = th_read(fs, f, total, out + total, (uint32_t)(cap - 1 - total), &got);
		total += got;
	}
	out[total] = '\0';
	*len = total;
	th_clunk(fs, f);
	return err;
}

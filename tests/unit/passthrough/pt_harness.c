/* Request building and temporary exports for the passthrough tests. */
#include "pt_harness.h"

#include <errno.h>
#include <fcntl.h>
#include <dirent.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int h_setup(struct h *h, const struct np_passthrough_opts *opts)
{
	memset(h, 0, sizeof(*h));
	h->msize = 65536;
	snprintf(h->base, sizeof(h->base), "/tmp/np-pt-XXXXXX");
	if (!mkdtemp(h->base))
		return errno;
	/* base is short (mkdtemp of a fixed template): these always fit. */
	size_t bl = strlen(h->base);
	memcpy(h->root, h->base, bl);
	memcpy(h->root + bl, "/export", 8);
	memcpy(h->outside, h->base, bl);
	memcpy(h->outside + bl, "/outside", 9);
	if (mkdir(h->root, 0755) < 0 || mkdir(h->outside, 0755) < 0)
		return errno;
	char p[PATH_MAX + 16];
	snprintf(p, sizeof(p), "%s/secret", h->outside);
	int fd = open(p, O_WRONLY | O_CREAT | O_EXCL, 0644);
	if (fd < 0)
		return errno;
	if (write(fd, "SECRET", 6) != 6) {
		close(fd);
		return EIO;
	}
	close(fd);
	return h_reopen(h, opts);
}

int h_reopen(struct h *h, const struct np_passthrough_opts *opts)
{
	struct np_passthrough_opts o = {0};
	if (opts)
		o = *opts;
	o.root = h->root;
	if (h->fs)
		np_passthrough_free(h->fs);
	h->fs = NULL;
	char err[256];
	int e = np_passthrough_new(&o, &h->fs, err, sizeof(err));
	if (e) {
		fprintf(stderr, "np_passthrough_new: %s\n", err);
		return e;
	}
	h->ops = np_passthrough_ops(h->fs);
	return 0;
}

static int rm1(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	(void)ftw;
	if (flag == FTW_DP)
		rmdir(path);
	else
		unlink(path);
	return 0;
}

void h_teardown(struct h *h)
{
	np_passthrough_thread_reset();
	if (h->fs)
		np_passthrough_free(h->fs);
	h->fs = NULL;
	if (h->base[0])
		nftw(h->base, rm1, 32, FTW_DEPTH | FTW_PHYS);
}

const char *h_in(struct h *h, const char *rel)
{
	static char buf[PATH_MAX * 2];
	snprintf(buf, sizeof(buf), "%s/%s", h->root, rel);
	return buf;
}

const char *h_out(struct h *h, const char *rel)
{
	static char buf[PATH_MAX * 2];
	snprintf(buf, sizeof(buf), "%s/%s", h->outside, rel);
	return buf;
}

np_fid *h_fid(struct h *h, uint32_t num)
{
	np_fid *f = calloc(1, sizeof(np_fid) + h->ops->fid_priv_size);
	if (f)
		f->fid = num;
	return f;
}

void h_req(struct h *h, np_req *r, uint8_t type, np_fid *f)
{
	memset(r, 0, sizeof(*r));
	r->ifcall.type = type;
	r->ifcall.tag = 1;
	r->ofcall.type = (uint8_t)(type + 1);
	r->ofcall.tag = 1;
	r->fid = f;
	r->fs = h->fs;
	r->dialect = NP_9P2000L;
	r->msize = h->msize;
}

static np_str S(const char *s)
{
	return np_strz(s);
}

int h_clunk(struct h *h, np_fid *f)
{
	if (!f)
		return 0;
	np_req r;
	h_req(h, &r, NP_TCLUNK, f);
	r.ifcall.tclunk.fid = f->fid;
	int e = h->ops->clunk ? h->ops->clunk(&r) : 0;
	h->ops->destroy_fid(f);
	free(f);
	return e;
}

int h_attach(struct h *h, np_fid *f, const char *uname, uint32_t n_uname, const char *aname)
{
	np_req r;
	h_req(h, &r, NP_TATTACH, NULL);
	r.newfid = f;
	r.ifcall.tattach.fid = f->fid;
	r.ifcall.tattach.afid = NP_NOFID;
	r.ifcall.tattach.uname = S(uname ? uname : "");
	r.ifcall.tattach.aname = S(aname ? aname : "");
	r.ifcall.tattach.n_uname = n_uname;
	return h->ops->attach(&r);
}

int h_walkv(struct h *h, np_fid *f, np_fid *nf, int n, const char *const *names, int *nwqid)
{
	np_req r;
	h_req(h, &r, NP_TWALK, f);
	r.newfid = nf;
	r.ifcall.twalk.fid = f->fid;
	r.ifcall.twalk.newfid = nf->fid;
	r.ifcall.twalk.nwname = (uint16_t)n;
	for (int i = 0; i < n; i++)
		r.ifcall.twalk.wname[i] = S(names[i]);
	int e = h->ops->walk(&r);
	if (nwqid)
		*nwqid = e ? 0 : r.ofcall.rwalk.nwqid;
	return e;
}

int h_walk(struct h *h, np_fid *f, np_fid *nf, const char *path, int *nwqid, np_qid *last)
{
	char buf[PATH_MAX];
	const char *names[NP_MAXWELEM];
	int n = 0;
	snprintf(buf, sizeof(buf), "%s", path);
	for (char *save = NULL, *t = strtok_r(buf, "/", &save); t && n < NP_MAXWELEM;
	     t = strtok_r(NULL, "/", &save))
		names[n++] = t;
	np_req r;
	h_req(h, &r, NP_TWALK, f);
	r.newfid = nf;
	r.ifcall.twalk.fid = f->fid;
	r.ifcall.twalk.newfid = nf->fid;
	r.ifcall.twalk.nwname = (uint16_t)n;
	for (int i = 0; i < n; i++)
		r.ifcall.twalk.wname[i] = S(names[i]);
	int e = h->ops->walk(&r);
	if (nwqid)
		*nwqid = e ? 0 : r.ofcall.rwalk.nwqid;
	if (last && !e && r.ofcall.rwalk.nwqid)
		*last = r.ofcall.rwalk.wqid[r.ofcall.rwalk.nwqid - 1];
	if (!e && r.ofcall.rwalk.nwqid < n)
		return -1; /* partial: for callers, "did not get there" */
	return e;
}

np_fid *h_walkto(struct h *h, np_fid *f, const char *path)
{
	static uint32_t next = 1000;
	np_fid *nf = h_fid(h, next++);
	if (h_walk(h, f, nf, path, NULL, NULL) != 0) {
		h->ops->destroy_fid(nf);
		free(nf);
		return NULL;
	}
	return nf;
}

int h_lopen(struct h *h, np_fid *f, uint32_t flags, np_qid *q)
{
	np_req r;
	h_req(h, &r, NP_TLOPEN, f);
	r.ifcall.tlopen.fid = f->fid;
	r.ifcall.tlopen.flags = flags;
	int e = h->ops->lopen(&r);
	if (!e) {
		f->opened = 1;
		f->open_flags = flags;
		if (q)
			*q = r.ofcall.ropen.qid;
	}
	return e;
}

int h_lcreate(struct h *h, np_fid *f, const char *name, uint32_t flags, uint32_t mode,
	      uint32_t gid, np_qid *q)
{
	np_req r;
	h_req(h, &r, NP_TLCREATE, f);
	r.ifcall.tlcreate.fid = f->fid;
	r.ifcall.tlcreate.name = S(name);
	r.ifcall.tlcreate.flags = flags;
	r.ifcall.tlcreate.mode = mode;
	r.ifcall.tlcreate.gid = gid;
	int e = h->ops->lcreate(&r);
	if (!e) {
		f->opened = 1;
		if (q)
			*q = r.ofcall.ropen.qid;
	}
	return e;
}

int h_read(struct h *h, np_fid *f, uint64_t off, void *buf, uint32_t count, uint32_t *got)
{
	np_req r;
	h_req(h, &r, NP_TREAD, f);
	r.ifcall.tread.fid = f->fid;
	r.ifcall.tread.offset = off;
	r.ifcall.tread.count = count;
	r.ofcall.rread.data = buf;
	r.ofcall.rread.count = count;
	int e = h->ops->read(&r);
	if (got)
		*got = e ? 0 : r.ofcall.rread.count;
	return e;
}

int h_write(struct h *h, np_fid *f, uint64_t off, const void *data, uint32_t count,
	    uint32_t *wrote)
{
	np_req r;
	h_req(h, &r, NP_TWRITE, f);
	r.ifcall.twrite.fid = f->fid;
	r.ifcall.twrite.offset = off;
	r.ifcall.twrite.count = count;
	r.ifcall.twrite.data = data;
	int e = h->ops->write(&r);
	if (wrote)
		*wrote = e ? 0 : r.ofcall.rwrite.count;
	return e;
}

int h_readdir(struct h *h, np_fid *f, uint64_t off, void *buf, uint32_t count, uint32_t *got)
{
	np_req r;
	h_req(h, &r, NP_TREADDIR, f);
	r.ifcall.tread.fid = f->fid;
	r.ifcall.tread.offset = off;
	r.ifcall.tread.count = count;
	r.ofcall.rread.data = buf;
	r.ofcall.rread.count = count;
	int e = h->ops->readdir(&r);
	if (got)
		*got = e ? 0 : r.ofcall.rread.count;
	return e;
}

int h_getattr(struct h *h, np_fid *f, np_fcall *out)
{
	np_req r;
	h_req(h, &r, NP_TGETATTR, f);
	r.ifcall.tgetattr.fid = f->fid;
	r.ifcall.tgetattr.request_mask = NP_GETATTR_ALL;
	int e = h->ops->getattr(&r);
	if (out)
		*out = r.ofcall;
	return e;
}

int h_setattr(struct h *h, np_fid *f, uint32_t valid, uint32_t mode, uint32_t uid,
	      uint32_t gid, uint64_t size, uint64_t asec, uint64_t ansec, uint64_t msec,
	      uint64_t mnsec)
{
	np_req r;
	h_req(h, &r, NP_TSETATTR, f);
	r.ifcall.tsetattr.fid = f->fid;
	r.ifcall.tsetattr.valid = valid;
	r.ifcall.tsetattr.mode = mode;
	r.ifcall.tsetattr.uid = uid;
	r.ifcall.tsetattr.gid = gid;
	r.ifcall.tsetattr.size = size;
	r.ifcall.tsetattr.atime_sec = asec;
	r.ifcall.tsetattr.atime_nsec = ansec;
	r.ifcall.tsetattr.mtime_sec = msec;
	r.ifcall.tsetattr.mtime_nsec = mnsec;
	return h->ops->setattr(&r);
}

int h_statfs(struct h *h, np_fid *f, np_fcall *out)
{
	np_req r;
	h_req(h, &r, NP_TSTATFS, f);
	r.ifcall.tclunk.fid = f->fid;
	int e = h->ops->statfs(&r);
	if (out)
		*out = r.ofcall;
	return e;
}

int h_readlink(struct h *h, np_fid *f, char *buf, uint16_t room)
{
	np_req r;
	h_req(h, &r, NP_TREADLINK, f);
	r.ifcall.tclunk.fid = f->fid;
	r.ofcall.rreadlink.target.s = buf;
	r.ofcall.rreadlink.target.len = (uint16_t)(room - 1);
	int e = h->ops->readlink(&r);
	if (!e) {
		if (r.ofcall.rreadlink.target.s != buf)
			memmove(buf, r.ofcall.rreadlink.target.s, r.ofcall.rreadlink.target.len);
		buf[r.ofcall.rreadlink.target.len] = '\0';
	}
	return e;
}

int h_mkdir(struct h *h, np_fid *d, const char *name, uint32_t mode, uint32_t gid, np_qid *q)
{
	np_req r;
	h_req(h, &r, NP_TMKDIR, d);
	r.ifcall.tmkdir.dfid = d->fid;
	r.ifcall.tmkdir.name = S(name);
	r.ifcall.tmkdir.mode = mode;
	r.ifcall.tmkdir.gid = gid;
	int e = h->ops->mkdir(&r);
	if (!e && q)
		*q = r.ofcall.rqid.qid;
	return e;
}

int h_symlink(struct h *h, np_fid *d, const char *name, const char *target, uint32_t gid,
	      np_qid *q)
{
	np_req r;
	h_req(h, &r, NP_TSYMLINK, d);
	r.ifcall.tsymlink.fid = d->fid;
	r.ifcall.tsymlink.name = S(name);
	r.ifcall.tsymlink.symtgt = S(target);
	r.ifcall.tsymlink.gid = gid;
	int e = h->ops->symlink(&r);
	if (!e && q)
		*q = r.ofcall.rqid.qid;
	return e;
}

int h_mknod(struct h *h, np_fid *d, const char *name, uint32_t mode, uint32_t major,
	    uint32_t minor, uint32_t gid, np_qid *q)
{
	np_req r;
	h_req(h, &r, NP_TMKNOD, d);
	r.ifcall.tmknod.dfid = d->fid;
	r.ifcall.tmknod.name = S(name);
	r.ifcall.tmknod.mode = mode;
	r.ifcall.tmknod.major = major;
	r.ifcall.tmknod.minor = minor;
	r.ifcall.tmknod.gid = gid;
	int e = h->ops->mknod(&r);
	if (!e && q)
		*q = r.ofcall.rqid.qid;
	return e;
}

int h_link(struct h *h, np_fid *d, np_fid *f, const char *name)
{
	np_req r;
	h_req(h, &r, NP_TLINK, d);
	r.fid2 = f;
	r.ifcall.tlink.dfid = d->fid;
	r.ifcall.tlink.fid = f->fid;
	r.ifcall.tlink.name = S(name);
	return h->ops->link(&r);
}

int h_rename(struct h *h, np_fid *f, np_fid *d, const char *name)
{
	np_req r;
	h_req(h, &r, NP_TRENAME, f);
	r.fid2 = d;
	r.ifcall.trename.fid = f->fid;
	r.ifcall.trename.dfid = d->fid;
	r.ifcall.trename.name = S(name);
	return h->ops->rename(&r);
}

int h_renameat(struct h *h, np_fid *od, const char *on, np_fid *nd, const char *nn)
{
	np_req r;
	h_req(h, &r, NP_TRENAMEAT, od);
	r.fid2 = nd;
	r.ifcall.trenameat.olddirfid = od->fid;
	r.ifcall.trenameat.oldname = S(on);
	r.ifcall.trenameat.newdirfid = nd->fid;
	r.ifcall.trenameat.newname = S(nn);
	return h->ops->renameat(&r);
}

int h_unlinkat(struct h *h, np_fid *d, const char *name, uint32_t flags)
{
	np_req r;
	h_req(h, &r, NP_TUNLINKAT, d);
	r.ifcall.tunlinkat.dirfid = d->fid;
	r.ifcall.tunlinkat.name = S(name);
	r.ifcall.tunlinkat.flags = flags;
	return h->ops->unlinkat(&r);
}

int h_remove(struct h *h, np_fid *f)
{
	np_req r;
	h_req(h, &r, NP_TREMOVE, f);
	r.ifcall.tclunk.fid = f->fid;
	int e = h->ops->remove(&r);
	h->ops->destroy_fid(f);
	free(f);
	return e;
}

int h_fsync(struct h *h, np_fid *f, uint32_t datasync)
{
	np_req r;
	h_req(h, &r, NP_TFSYNC, f);
	r.ifcall.tfsync.fid = f->fid;
	r.ifcall.tfsync.datasync = datasync;
	return h->ops->fsync(&r);
}

int h_xattrwalk(struct h *h, np_fid *f, np_fid *nf, const char *name, uint64_t *size)
{
	np_req r;
	h_req(h, &r, NP_TXATTRWALK, f);
	r.newfid = nf;
	r.ifcall.txattrwalk.fid = f->fid;
	r.ifcall.txattrwalk.newfid = nf->fid;
	r.ifcall.txattrwalk.name = S(name);
	int e = h->ops->xattrwalk(&r);
	if (!e && size)
		*size = r.ofcall.rxattrwalk.size;
	return e;
}

int h_xattrcreate(struct h *h, np_fid *f, const char *name, uint64_t size, uint32_t flags)
{
	np_req r;
	h_req(h, &r, NP_TXATTRCREATE, f);
	r.ifcall.txattrcreate.fid = f->fid;
	r.ifcall.txattrcreate.name = S(name);
	r.ifcall.txattrcreate.attr_size = size;
	r.ifcall.txattrcreate.flags = flags;
	return h->ops->xattrcreate(&r);
}

int h_lock(struct h *h, np_fid *f, uint8_t type, uint64_t start, uint64_t len, uint8_t *status)
{
	np_req r;
	h_req(h, &r, NP_TLOCK, f);
	r.ifcall.tlock.fid = f->fid;
	r.ifcall.tlock.type = type;
	r.ifcall.tlock.flags = NP_LOCK_FLAGS_BLOCK;
	r.ifcall.tlock.start = start;
	r.ifcall.tlock.length = len;
	r.ifcall.tlock.proc_id = 42;
	r.ifcall.tlock.client_id = S("test");
	int e = h->ops->lock(&r);
	if (!e && status)
		*status = r.ofcall.rlock.status;
	return e;
}

int h_getlock(struct h *h, np_fid *f, uint8_t type, uint64_t start, uint64_t len, np_fcall *out)
{
	np_req r;
	h_req(h, &r, NP_TGETLOCK, f);
	r.ifcall.tgetlock.fid = f->fid;
	r.ifcall.tgetlock.type = type;
	r.ifcall.tgetlock.start = start;
	r.ifcall.tgetlock.length = len;
	r.ifcall.tgetlock.proc_id = 7;
	r.ifcall.tgetlock.client_id = S("test");
	int e = h->ops->getlock(&r);
	if (out)
		*out = r.ofcall;
	return e;
}

int h_dirents(const uint8_t *data, uint32_t count, char *names, size_t cap, uint64_t *last_off)
{
	uint32_t pos = 0;
	np_dirent de;
	int n = 0, rc;
	size_t len = strlen(names);
	while ((rc = np_dirent_next(data, count, &pos, &de)) == 1) {
		if (len + de.name.len + 2 < cap) {
			memcpy(names + len, de.name.s, de.name.len);
			len += de.name.len;
			names[len++] = '\n';
			names[len] = '\0';
		}
		if (last_off)
			*last_off = de.offset;
		n++;
	}
	return rc < 0 ? rc : n;
}

long h_slurp(const char *path, char *buf, size_t cap)
{
	int fd = open(path, O_RDONLY | O_NOFOLLOW);
	if (fd < 0)
		return -1;
	ssize_t n = read(fd, buf, cap - 1);
	close(fd);
	if (n < 0)
		return -1;
	buf[n] = '\0';
	return n;
}

int h_nfds(void)
{
	DIR *d = opendir("/proc/self/fd");
	int n = 0;
	if (!d)
		return -1;
	while (readdir(d))
		n++;
	closedir(d);
	return n;
}

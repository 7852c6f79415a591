/* Directory listing: opendir/readdir/readdirplus/releasedir.  In 9P2000.L
 * every FUSE readdir is one Treaddir at the kernel's offset, which is the
 * server's cookie of the last entry it got; in 9P2000/.u (byte offsets
 * into a stream of stat entries, not resumable at will) the listing is read
 * whole when the kernel starts at 0 and served by index. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>

#include "ninepfs.h"

static void op_opendir(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	struct nfs *fs = nfs_of(req);
	struct nfs_inode *i = nfs_inode_get(fs, ino);
	struct nfs_fh *fh;
	int err, attempt = 0;
	do {
		nfs_enter(fs);
		fh = nfs_fh_open(fs, i, O_RDONLY | O_DIRECTORY, &err);
	} while (nfs_leave(fs, &err, attempt++));
	if (!fh) {
		fuse_reply_err(req, nfs_errno(err));
		return;
	}
	fi->fh = (uint64_t)(uintptr_t)fh;
	if (fuse_reply_open(req, fi) == -ENOENT)
		nfs_fh_abandon(fs, fh);
}

static void op_releasedir(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	(void)ino;
	struct nfs *fs = nfs_of(req);
	int err = 0;
	nfs_enter(fs);
	nfs_fh_free(fs, (struct nfs_fh *)(uintptr_t)fi->fh);
	nfs_leave(fs, &err, 1);
	fuse_reply_err(req, 0);
}

static int dot_or_dotdot(const char *n)
{
	return n[0] == '.' && (n[1] == '\0' || (n[1] == '.' && n[2] == '\0'));
}

/* A reply buffer being filled. */
struct fill {
	fuse_req_t req;
	struct nfs *fs;
	struct nfs_inode *dir;
	int plus;
	char *buf;
	size_t size, used;
};

/* Add one entry; 0 when it did not fit (the listing stops there). */
static int add_entry(struct fill *b, const char *name, uint64_t qpath, uint8_t dtype, uint64_t next)
{
	size_t rem = b->size - b->used, n;
	if (!b->plus) {
		struct stat st;
		memset(&st, 0, sizeof st);
		st.st_ino = (ino_t)qpath;
		st.st_mode = (mode_t)dtype << 12;
		n = fuse_add_direntry(b->req, b->buf + b->used, rem, name, &st, (off_t)next);
		if (n > rem)
			return 0;
		b->used += n;
		return 1;
	}
	struct fuse_entry_param e;
	int looked_up = 0;
	if (!dot_or_dotdot(name) && nfs_do_lookup(b->fs, b->dir, name, &e) == 0) {
		looked_up = 1;
	} else {
		/* Node id 0: the kernel takes the name without attributes. */
		memset(&e, 0, sizeof e);
		e.attr.st_ino = (ino_t)qpath;
		e.attr.st_mode = (mode_t)dtype << 12;
	}
	n = fuse_add_direntry_plus(b->req, b->buf + b->used, rem, name, &e, (off_t)next);
	if (n > rem) {
		if (looked_up)
			nfs_inode_forget(b->fs, nfs_inode_get(b->fs, e.ino), 1);
		return 0;
	}
	b->used += n;
	return 1;
}

static int readdir_l(struct fill *b, np_client *c, np_cfid *f, off_t off)
{
	np_fcall t;
	memset(&t, 0, sizeof t);
	t.type = NP_TREADDIR;
	t.tread.fid = f->fid;
	t.tread.offset = (uint64_t)off;
	/* Plus entries are ~4x larger in the reply than on the wire. */
	size_t want = b->plus ? b->size / 3 : b->size;
	if (want < 512)
		want = 512;
	t.tread.count = (uint32_t)(want < b->fs->iosize ? want : b->fs->iosize);
	np_creq *r;
	int err = np_client_submit(c, &t, NULL, NULL, &r);
	if (err < 0)
		return err;
	err = np_creq_wait(r);
	if (err == 0) {
		const np_fcall *rc = np_creq_reply(r);
		uint32_t pos = 0;
		np_dirent de;
		char name[256 + 1];
		int k;
		while ((k = np_dirent_next(rc->rread.data, rc->rread.count, &pos, &de)) > 0) {
			if (np_str_copy(name, sizeof name, de.name) < 0 || !de.name.len)
				continue; /* no Linux name is longer */
			if (!add_entry(b, name, de.qid.path, de.type, de.offset))
				break;
		}
		if (k < 0)
			err = k;
	}
	np_creq_release(r);
	return err;
}

static int load_listing(struct nfs_fh *fh, np_cfid *f)
{
	for (size_t k = 0; k < fh->nents; k++)
		free(fh->ents[k].name);
	fh->nents = 0;
	np_readdir *d;
	int err = np_readdir_open(f, &d);
	if (err < 0)
		return err;
	size_t cap = 0;
	struct np_direntry de;
	while ((err = np_readdir_next(d, &de)) > 0) {
		if (fh->nents == cap) {
			size_t ncap = cap ? cap * 2 : 64;
			struct nfs_dent *n = realloc(fh->ents, ncap * sizeof *n);
			if (!n) {
				err = -ENOMEM;
				break;
			}
			fh->ents = n;
			cap = ncap;
		}
		struct nfs_dent *e = &fh->ents[fh->nents];
		if (!(e->name = strdup(de.name))) {
			err = -ENOMEM;
			break;
		}
		e->ino = de.qid.path;
		e->type = de.type;
		fh->nents++;
	}
	np_readdir_close(d);
	return err < 0 ? err : 0;
}

static int readdir_u(struct fill *b, struct nfs_fh *fh, np_cfid *f, off_t off)
{
	int err = 0;
	pthread_mutex_lock(&fh->lock);
	/* Offset 0 is a (re)start: rewinddir sees a fresh listing. */
	if (off == 0)
		err = load_listing(fh, f);
	for (size_t k = (size_t)off; err == 0 && k < fh->nents; k++)
		if (!add_entry(b, fh->ents[k].name, fh->ents[k].ino, fh->ents[k].type, k + 1))
			break;
	pthread_mutex_unlock(&fh->lock);
	return err;
}

static void do_readdir(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off, struct fuse_file_info *fi,
		       int plus)
{
	struct nfs *fs = nfs_of(req);
	struct nfs_fh *fh = (struct nfs_fh *)(uintptr_t)fi->fh;
	struct fill b = {.req = req, .fs = fs, .dir = nfs_inode_get(fs, ino), .plus = plus, .size = size};
	b.buf = malloc(size ? size : 1);
	if (!b.buf) {
		fuse_reply_err(req, ENOMEM);
		return;
	}
	int err;
	np_client *c = nfs_enter(fs);
	np_cfid *f = nfs_fh_fid(fs, fh);
	if (!f)
		err = -EIO;
	else if (fs->dialect == NP_9P2000L)
		err = readdir_l(&b, c, f, off);
	else
		err = readdir_u(&b, fh, f, off);
	err = nfs_leave_fh(fs, err);
	/* Entries already added (and looked up) must reach the kernel. */
	if (err < 0 && b.used == 0)
		fuse_reply_err(req, nfs_errno(err));
	else
		fuse_reply_buf(req, b.buf, b.used);
	free(b.buf);
}

static void op_readdir(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off, struct fuse_file_info *fi)
{
	do_readdir(req, ino, size, off, fi, 0);
}

static void op_readdirplus(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off,
			   struct fuse_file_info *fi)
{
	do_readdir(req, ino, size, off, fi, 1);
}

void nfs_ops_dir(struct fuse_lowlevel_ops *o)
{
	o->opendir = op_opendir;
	o->readdir = op_readdir;
	o->readdirplus = op_readdirplus;
	o->releasedir = op_releasedir;
}

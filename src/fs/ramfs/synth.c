/* ramfs synthetic files: the embedding API (np_ramfs_add_file and friends)
 * and the I/O path that hands requests to the program's callbacks. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "ramfs_int.h"

void **np_synth_state(np_req *r)
{
	return &rfid_of(r->fid)->synth_state;
}

int rsynth_open(np_req *r, struct rnode *n, uint32_t flags)
{
	if (!n->synth.ops->open)
		return 0;
	int err = n->synth.ops->open(r, n->synth.arg, flags);
	return err == NP_ASYNC ? EINVAL : err;
}

int rsynth_read(np_req *r, struct rnode *n)
{
	uint32_t room = r->ofcall.rread.count, got = 0;
	int err = n->synth.ops->read(r, n->synth.arg, r->ifcall.tread.offset,
				     (uint8_t *)(uintptr_t)r->ofcall.rread.data, room, &got);
	if (err == 0)
		r->ofcall.rread.count = got < room ? got : room;
	return err;
}

int rsynth_write(np_req *r, struct rnode *n)
{
	uint32_t count = r->ifcall.twrite.count, wrote = 0;
	int err = n->synth.ops->write(r, n->synth.arg, r->ifcall.twrite.offset,
				      r->ifcall.twrite.data, count, &wrote);
	if (err == 0)
		r->ofcall.rwrite.count = wrote < count ? wrote : count;
	return err;
}

/* Walk an absolute path, creating missing directories; the last component
 * is returned in *last (not created).  Lock held exclusive. */
static int walk_parents(np_ramfs *fs, const char *path, struct rnode **dir, np_str *last)
{
	if (!path || path[0] != '/')
		return EINVAL;
	struct rnode *d = fs->root;
	const char *p = path;
	for (;;) {
		while (*p == '/')
			p++;
		const char *q = p;
		while (*q && *q != '/')
			q++;
		size_t len = (size_t)(q - p);
		const char *rest = q;
		while (*rest == '/')
			rest++;
		if (len > RAMFS_NAME_MAX)
			return ENAMETOOLONG;
		np_str name = np_str_make(p, (uint16_t)len);
		if (*rest == '\0') {
			*dir = d;
			*last = name;
			return len ? ramfs_name_ok(p, (uint16_t)len) : EINVAL;
		}
		int err = ramfs_name_ok(p, (uint16_t)len);
		if (err)
			return err;
		struct rdirent *e = rdir_lookup(d, p, (uint16_t)len);
		if (e) {
			if (e->node->kind != RK_DIR)
				return ENOTDIR;
			d = e->node;
		} else {
			struct rnode *nd;
			err = ramfs_make(fs, d, name, fs->root->uid, fs->root->gid, RK_DIR,
					 S_IFDIR | 0755, &nd);
			if (err)
				return err;
			d = nd;
		}
		p = rest;
	}
}

static int add_synth(np_ramfs *fs, const char *path, uint32_t mode, const struct np_synth_ops *ops,
		     void *arg, void *owned, uint64_t size)
{
	struct rnode *d, *n;
	np_str name;
	pthread_rwlock_wrlock(&fs->lock);
	int err = walk_parents(fs, path, &d, &name);
	if (!err)
		err = ramfs_make(fs, d, name, fs->root->uid, fs->root->gid, RK_SYNTH,
				 S_IFREG | (mode & 07777), &n);
	if (!err) {
		n->synth.ops = ops;
		n->synth.arg = arg;
		n->synth.owned = owned;
		n->synth.size = size;
		rnode_ref(n); /* pinned until np_ramfs_free */
	}
	pthread_rwlock_unlock(&fs->lock);
	return -err;
}

int np_ramfs_add_file(np_ramfs *fs, const char *path, uint32_t mode,
		      const struct np_synth_ops *ops, void *arg)
{
	if (!ops)
		return -EINVAL;
	return add_synth(fs, path, mode, ops, arg, NULL, 0);
}

struct static_data {
	size_t len;
	uint8_t data[];
};

static int static_read(np_req *r, void *arg, uint64_t off, uint8_t *buf, uint32_t count,
		       uint32_t *got)
{
	(void)r;
	const struct static_data *sd = arg;
	if (off >= sd->len) {
		*got = 0;
		return 0;
	}
	size_t n = sd->len - off < count ? sd->len - (size_t)off : count;
	memcpy(buf, sd->data + off, n);
	*got = (uint32_t)n;
	return 0;
}

static const struct np_synth_ops static_ops = {.read = static_read};

int np_ramfs_add_static(np_ramfs *fs, const char *path, uint32_t mode, const void *data, size_t len)
{
	struct static_data *sd = malloc(sizeof(*sd) + len);
	if (!sd)
		return -ENOMEM;
	sd->len = len;
	if (len)
		memcpy(sd->data, data, len);
	int err = add_synth(fs, path, mode & ~0222u, &static_ops, sd, sd, len);
	if (err)
		free(sd);
	return err;
}

int np_ramfs_mkdir(np_ramfs *fs, const char *path, uint32_t mode)
{
	struct rnode *d, *n;
	np_str name;
	pthread_rwlock_wrlock(&fs->lock);
	int err = walk_parents(fs, path, &d, &name);
	if (err == EINVAL && path && path[0] == '/' && strspn(path, "/") == strlen(path))
		err = 0; /* "/" itself: exists */
	else if (!err) {
		struct rdirent *e = rdir_lookup(d, name.s, name.len);
		if (e)
			err = e->node->kind == RK_DIR ? 0 : EEXIST;
		else
			err = ramfs_make(fs, d, name, fs->root->uid, fs->root->gid, RK_DIR,
					 S_IFDIR | (mode & 07777), &n);
	}
	pthread_rwlock_unlock(&fs->lock);
	return -err;
}

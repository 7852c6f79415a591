/* ramfs Txattrwalk/Txattrcreate: turn a fid into an xattr value to read, or
 * a pending value to write (committed at clunk, see ops_fid.c). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/xattr.h>

#include "ramfs_int.h"

/* Copy an attribute name; 0 or errno. */
static int xname(np_str s, char *out)
{
	if (s.len == 0)
		return EINVAL;
	if (s.len > RAMFS_XATTR_NAME_MAX)
		return ERANGE;
	if (memchr(s.s, '\0', s.len))
		return EINVAL;
	memcpy(out, s.s, s.len);
	out[s.len] = '\0';
	return 0;
}

int ramfs_xattrwalk(np_req *r)
{
	np_ramfs *fs = fs_of(r);
	struct rfid *rf = rfid_of(r->fid);
	np_str name = r->ifcall.txattrwalk.name;
	char nm[RAMFS_XATTR_NAME_MAX + 1];
	uint8_t *buf = NULL;
	uint64_t len = 0;
	int err = 0;

	if (rf->kind != RF_NODE)
		return EINVAL;
	if (name.len && (err = xname(name, nm)) != 0)
		return err;
	pthread_rwlock_wrlock(&fs->lock);
	struct rnode *n = rf->node;
	if (name.len == 0) {
		err = rxattr_list(n, &buf, &len);
	} else {
		const struct rxattr *x = rxattr_find(n, nm);
		if (!x)
			err = ENODATA;
		else if (!(buf = malloc(x->len ? x->len : 1)))
			err = ENOMEM;
		else {
			memcpy(buf, x->value, x->len);
			len = x->len;
		}
	}
	if (!err) {
		np_fid *nf = r->newfid;
		struct rfid *nrf = rfid_of(nf);
		if (nf != r->fid) {
			rnode_ref(n);
			nrf->fs = fs;
			nrf->node = n;
			nf->uid = r->fid->uid;
			nf->user = r->fid->user;
			nf->qid = rnode_qid(n);
		}
		nrf->kind = RF_XATTR_READ;
		nrf->xbuf = buf;
		nrf->xlen = len;
		r->ofcall.rxattrwalk.size = len;
	}
	pthread_rwlock_unlock(&fs->lock);
	return err;
}

int ramfs_xattrcreate(np_req *r)
{
	np_ramfs *fs = fs_of(r);
	struct rfid *rf = rfid_of(r->fid);
	uint64_t size = r->ifcall.txattrcreate.attr_size;
	uint32_t flags = r->ifcall.txattrcreate.flags;
	char nm[RAMFS_XATTR_NAME_MAX + 1];
	int err;

	if (rf->kind != RF_NODE || rf->opened)
		return EINVAL;
	if (flags & ~(uint32_t)(XATTR_CREATE | XATTR_REPLACE))
		return EINVAL;
	if (size > RAMFS_XATTR_SIZE_MAX)
		return E2BIG;
	if ((err = xname(r->ifcall.txattrcreate.name, nm)) != 0)
		return err;
	char *namecopy = strdup(nm);
	uint8_t *buf = malloc(size ? size : 1);
	if (!namecopy || !buf) {
		free(namecopy);
		free(buf);
		return ENOMEM;
	}
	pthread_rwlock_wrlock(&fs->lock);
	struct rnode *n = rf->node;
	const struct rxattr *x = rxattr_find(n, nm);
	uint32_t uid = r->fid->uid;
	/* writing an attribute needs write permission (or ownership) */
	if (!fs->noperm && uid != 0 && uid != n->uid && rnode_access(fs, n, uid, 2))
		err = EACCES;
	else if (x && (flags & XATTR_CREATE))
		err = EEXIST;
	else if (!x && (flags & XATTR_REPLACE))
		err = ENODATA;
	if (!err) {
		/* flags are checked again at commit, where they count */
		rf->kind = RF_XATTR_WRITE;
		rf->xbuf = buf;
		rf->xname = namecopy;
		rf->xlen = size;
		rf->xwritten = 0;
		rf->xflags = flags;
	}
	pthread_rwlock_unlock(&fs->lock);
	if (err) {
		free(namecopy);
		free(buf);
	}
	return err;
}

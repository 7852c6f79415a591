/* Treaddir: getdents64 on the fid's open directory, d_off as the cookie. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>

#include "pt_internal.h"

static uint8_t dt_qtype(unsigned char t)
{
	return t == DT_DIR ? NP_QTDIR : t == DT_LNK ? NP_QTSYMLINK : NP_QTFILE;
}

int np_pt_readdir(np_req *r)
{
	np_passthrough *fs = pt_fs(r);
	struct pt_fid *p;
	int e = np_pt_enter_fid(r, &p);
	if (e)
		return e;
	uint64_t off = r->ifcall.tread.offset;
	if (off > INT64_MAX)
		return EINVAL;
	/* The directory position is state shared by the fid's requests. */
	pthread_rwlock_wrlock(&p->lock);
	if (p->ofd < 0) {
		e = EBADF;
		goto out;
	}
	if (p->type != S_IFDIR) {
		e = ENOTDIR;
		goto out;
	}
	/* Cookies are the file system's own d_off values, which lseek takes
	 * back: valid across calls.  Sequential reads skip the seek. */
	if (off != p->dir_pos) {
		if (lseek(p->ofd, (off_t)off, SEEK_SET) < 0) {
			e = errno;
			p->dir_pos = UINT64_MAX;
			goto out;
		}
		p->dir_pos = off;
	}
	int at_root = p->dev == fs->rootdev && p->ino == fs->rootino;
	uint8_t *data = (uint8_t *)(uintptr_t)r->ofcall.rread.data;
	uint32_t room = r->ofcall.rread.count, used = 0;
	uint64_t pos = off;     /* cookie after the last entry returned */
	int full = 0, eof = 0;
	char buf[8192] __attribute__((aligned(8)));
	while (!full && !eof) {
		ssize_t n = getdents64(p->ofd, buf, sizeof(buf));
		if (n < 0) {
			if (used == 0)
				e = errno;
			full = 1; /* reposition below */
			break;
		}
		if (n == 0) {
			eof = 1;
			break;
		}
		for (ssize_t o = 0; o < n;) {
			struct dirent64 *d = (struct dirent64 *)(void *)(buf + o);
			o += d->d_reclen;
			size_t nl = strlen(d->d_name);
			np_dirent de;
			de.type = d->d_type;
			de.qid.version = 0;
			de.qid.path = np_pt_qpath(fs, p->dev, d->d_ino);
			if (de.type == DT_UNKNOWN) {
				struct stat st;
				if (fstatat(p->ofd, d->d_name, &st, AT_SYMLINK_NOFOLLOW) == 0)
					de.type = (uint8_t)IFTODT(st.st_mode);
			}
			if (at_root && strcmp(d->d_name, "..") == 0) {
				/* The root's parent is itself, as Twalk sees it. */
				de.qid.path = np_pt_qpath(fs, fs->rootdev, fs->rootino);
				de.type = DT_DIR;
			}
			de.qid.type = dt_qtype(de.type);
			de.offset = (uint64_t)d->d_off;
			de.name = np_str_make(d->d_name, (uint16_t)nl);
			size_t sz = np_dirent_encode(data + used, room - used, &de);
			if (!sz) {
				full = 1;
				break;
			}
			used += (uint32_t)sz;
			pos = de.offset;
		}
	}
	if (full) {
		/* getdents went past what fitted: go back to the first entry
		 * not returned. */
		if (lseek(p->ofd, (off_t)pos, SEEK_SET) < 0)
			p->dir_pos = UINT64_MAX;
		else
			p->dir_pos = pos;
	} else {
		/* At the end the position is the file system's end marker,
		 * not the last cookie: seek next time. */
		p->dir_pos = UINT64_MAX;
	}
	if (!e && used == 0 && full && room > 0)
		e = EINVAL; /* not even one entry fits in count */
	if (!e)
		r->ofcall.rread.count = used;
out:
	pthread_rwlock_unlock(&p->lock);
	return e;
}

/* The single description of every message's layout.  np_pu_body() walks the
 * fields of one message in wire order; the same walk encodes, decodes and
 * sizes (see pu.h).  Semantic checks that only make sense on input (walk
 * names, counts against msize) follow the walk in np_decode(). */
#include <errno.h>
#include <limits.h>
#include <string.h>

#include "pu.h"

static int dotu(const struct np_pu *pu)
{
	return pu->dialect != NP_9P2000;
}

void np_pu_stat(struct np_pu *pu, np_stat *st)
{
	/* size[2] counts the bytes after itself. */
	uint16_t size = 0;
	uint8_t *start = pu->p;
	if (pu->mode != NP_PU_DECODE) {
		size_t n = np_stat_size(st, pu->dialect) - 2;
		if (n > 0xFFFF) {
			np_pu_fail(pu, EINVAL, "stat.size");
			return;
		}
		size = (uint16_t)n;
	}
	pu16(pu, &size, "stat.size");
	if (pu->err)
		return;
	uint8_t *end_save = pu->end;
	if (pu->mode == NP_PU_DECODE) {
		if ((size_t)(pu->end - pu->p) < size) {
			np_pu_fail(pu, EPROTO, "stat.size");
			return;
		}
		pu->end = pu->p + size; /* fields may not run past the stat */
	}
	pu16(pu, &st->type, "stat.type");
	pu32(pu, &st->dev, "stat.dev");
	puqid(pu, &st->qid, "stat.qid");
	pu32(pu, &st->mode, "stat.mode");
	pu32(pu, &st->atime, "stat.atime");
	pu32(pu, &st->mtime, "stat.mtime");
	pu64(pu, &st->length, "stat.length");
	pustr(pu, &st->name, "stat.name");
	pustr(pu, &st->uid, "stat.uid");
	pustr(pu, &st->gid, "stat.gid");
	pustr(pu, &st->muid, "stat.muid");
	if (dotu(pu)) {
		pustr(pu, &st->extension, "stat.extension");
		pu32(pu, &st->n_uid, "stat.n_uid");
		pu32(pu, &st->n_gid, "stat.n_gid");
		pu32(pu, &st->n_muid, "stat.n_muid");
	} else if (pu->mode == NP_PU_DECODE) {
		st->extension.s = NULL;
		st->extension.len = 0;
		st->n_uid = st->n_gid = st->n_muid = NP_NONUNAME;
	}
	if (pu->mode == NP_PU_DECODE) {
		if (!pu->err && pu->p != start + 2 + size)
			np_pu_fail(pu, EPROTO, "stat.size");
		pu->end = end_save;
	}
}

size_t np_stat_size(const np_stat *st, enum np_dialect d)
{
	size_t n = 2 + 2 + 4 + 13 + 4 + 4 + 4 + 8 + 4 * 2 + st->name.len + st->uid.len +
		   st->gid.len + st->muid.len;
	if (d != NP_9P2000)
		n += 2 + st->extension.len + 3 * 4;
	return n;
}

/* The n[2] in front of the stat in Rstat/Twstat counts the whole stat, its
 * own size[2] included, so a stat can be 2 bytes too big for it while its
 * size[2] still fits: refuse it rather than send a truncated count. */
static uint16_t stat_nsize(struct np_pu *pu, const np_stat *st)
{
	size_t n = np_stat_size(st, pu->dialect);
	if (n > 0xFFFF) {
		np_pu_fail(pu, EINVAL, "nstat");
		return 0;
	}
	return (uint16_t)n;
}

/* Walk one message body.  Returns nothing: errors land in pu->err. */
static void np_pu_body(struct np_pu *pu, np_fcall *f)
{
	switch (f->type) {
	case NP_TVERSION:
	case NP_RVERSION:
		pu32(pu, &f->version.msize, "msize");
		pustr(pu, &f->version.version, "version");
		break;
	case NP_TAUTH:
		pu32(pu, &f->tauth.afid, "afid");
		pustr(pu, &f->tauth.uname, "uname");
		pustr(pu, &f->tauth.aname, "aname");
		if (dotu(pu))
			pu32(pu, &f->tauth.n_uname, "n_uname");
		else if (pu->mode == NP_PU_DECODE)
			f->tauth.n_uname = NP_NONUNAME;
		break;
	case NP_RAUTH:
		puqid(pu, &f->rauth.aqid, "aqid");
		break;
	case NP_TATTACH:
		pu32(pu, &f->tattach.fid, "fid");
		pu32(pu, &f->tattach.afid, "afid");
		pustr(pu, &f->tattach.uname, "uname");
		pustr(pu, &f->tattach.aname, "aname");
		if (dotu(pu))
			pu32(pu, &f->tattach.n_uname, "n_uname");
		else if (pu->mode == NP_PU_DECODE)
			f->tattach.n_uname = NP_NONUNAME;
		break;
	case NP_RATTACH:
		puqid(pu, &f->rattach.qid, "qid");
		break;
	case NP_RERROR:
		pustr(pu, &f->rerror.ename, "ename");
		if (dotu(pu))
			pu32(pu, &f->rerror.ecode, "errno");
		else if (pu->mode == NP_PU_DECODE)
			f->rerror.ecode = 0;
		break;
	case NP_RLERROR:
		pu32(pu, &f->rlerror.ecode, "ecode");
		break;
	case NP_TFLUSH:
		pu16(pu, &f->tflush.oldtag, "oldtag");
		break;
	case NP_TWALK:
		pu32(pu, &f->twalk.fid, "fid");
		pu32(pu, &f->twalk.newfid, "newfid");
		pu16(pu, &f->twalk.nwname, "nwname");
		if (!pu->err && f->twalk.nwname > NP_MAXWELEM) {
			np_pu_fail(pu, EINVAL, "nwname");
			break;
		}
		for (int i = 0; i < f->twalk.nwname && !pu->err; i++)
			pustr(pu, &f->twalk.wname[i], "wname");
		break;
	case NP_RWALK:
		pu16(pu, &f->rwalk.nwqid, "nwqid");
		if (!pu->err && f->rwalk.nwqid > NP_MAXWELEM) {
			np_pu_fail(pu, EINVAL, "nwqid");
			break;
		}
		for (int i = 0; i < f->rwalk.nwqid && !pu->err; i++)
			puqid(pu, &f->rwalk.wqid[i], "wqid");
		break;
	case NP_TOPEN:
		pu32(pu, &f->topen.fid, "fid");
		pu8(pu, &f->topen.mode, "mode");
		break;
	case NP_ROPEN:
	case NP_RCREATE:
	case NP_RLOPEN:
	case NP_RLCREATE:
		puqid(pu, &f->ropen.qid, "qid");
		pu32(pu, &f->ropen.iounit, "iounit");
		break;
	case NP_TCREATE:
		pu32(pu, &f->tcreate.fid, "fid");
		pustr(pu, &f->tcreate.name, "name");
		pu32(pu, &f->tcreate.perm, "perm");
		pu8(pu, &f->tcreate.mode, "mode");
		if (dotu(pu))
			pustr(pu, &f->tcreate.extension, "extension");
		else if (pu->mode == NP_PU_DECODE)
			f->tcreate.extension = np_str_make(NULL, 0);
		break;
	case NP_TREAD:
	case NP_TREADDIR:
		pu32(pu, &f->tread.fid, "fid");
		pu64(pu, &f->tread.offset, "offset");
		pu32(pu, &f->tread.count, "count");
		break;
	case NP_RREAD:
	case NP_RREADDIR:
		pu32(pu, &f->rread.count, "count");
		pudata(pu, &f->rread.data, f->rread.count, "data");
		break;
	case NP_TWRITE:
		pu32(pu, &f->twrite.fid, "fid");
		pu64(pu, &f->twrite.offset, "offset");
		pu32(pu, &f->twrite.count, "count");
		pudata(pu, &f->twrite.data, f->twrite.count, "data");
		break;
	case NP_RWRITE:
		pu32(pu, &f->rwrite.count, "count");
		break;
	case NP_TCLUNK:
	case NP_TREMOVE:
	case NP_TSTAT:
	case NP_TSTATFS:
	case NP_TREADLINK:
		pu32(pu, &f->tclunk.fid, "fid");
		break;
	case NP_RSTAT: {
		/* Rstat carries an extra size[2] before the stat (a historical
		 * wart every implementation keeps). */
		uint16_t n = 0;
		if (pu->mode != NP_PU_DECODE)
			n = stat_nsize(pu, &f->rstat.stat);
		pu16(pu, &n, "nstat");
		uint8_t *at = pu->p;
		np_pu_stat(pu, &f->rstat.stat);
		if (pu->mode == NP_PU_DECODE && !pu->err && pu->p - at != n)
			np_pu_fail(pu, EPROTO, "nstat");
		break;
	}
	case NP_TWSTAT: {
		uint16_t n = 0;
		pu32(pu, &f->twstat.fid, "fid");
		if (pu->mode != NP_PU_DECODE)
			n = stat_nsize(pu, &f->twstat.stat);
		pu16(pu, &n, "nstat");
		uint8_t *at = pu->p;
		np_pu_stat(pu, &f->twstat.stat);
		if (pu->mode == NP_PU_DECODE && !pu->err && pu->p - at != n)
			np_pu_fail(pu, EPROTO, "nstat");
		break;
	}
	case NP_RSTATFS:
		pu32(pu, &f->rstatfs.type, "type");
		pu32(pu, &f->rstatfs.bsize, "bsize");
		pu64(pu, &f->rstatfs.blocks, "blocks");
		pu64(pu, &f->rstatfs.bfree, "bfree");
		pu64(pu, &f->rstatfs.bavail, "bavail");
		pu64(pu, &f->rstatfs.files, "files");
		pu64(pu, &f->rstatfs.ffree, "ffree");
		pu64(pu, &f->rstatfs.fsid, "fsid");
		pu32(pu, &f->rstatfs.namelen, "namelen");
		break;
	case NP_TLOPEN:
		pu32(pu, &f->tlopen.fid, "fid");
		pu32(pu, &f->tlopen.flags, "flags");
		break;
	case NP_TLCREATE:
		pu32(pu, &f->tlcreate.fid, "fid");
		pustr(pu, &f->tlcreate.name, "name");
		pu32(pu, &f->tlcreate.flags, "flags");
		pu32(pu, &f->tlcreate.mode, "mode");
		pu32(pu, &f->tlcreate.gid, "gid");
		break;
	case NP_TSYMLINK:
		pu32(pu, &f->tsymlink.fid, "fid");
		pustr(pu, &f->tsymlink.name, "name");
		pustr(pu, &f->tsymlink.symtgt, "symtgt");
		pu32(pu, &f->tsymlink.gid, "gid");
		break;
	case NP_RSYMLINK:
	case NP_RMKNOD:
	case NP_RMKDIR:
		puqid(pu, &f->rqid.qid, "qid");
		break;
	case NP_TMKNOD:
		pu32(pu, &f->tmknod.dfid, "dfid");
		pustr(pu, &f->tmknod.name, "name");
		pu32(pu, &f->tmknod.mode, "mode");
		pu32(pu, &f->tmknod.major, "major");
		pu32(pu, &f->tmknod.minor, "minor");
		pu32(pu, &f->tmknod.gid, "gid");
		break;
	case NP_TRENAME:
		pu32(pu, &f->trename.fid, "fid");
		pu32(pu, &f->trename.dfid, "dfid");
		pustr(pu, &f->trename.name, "name");
		break;
	case NP_RREADLINK:
		pustr(pu, &f->rreadlink.target, "target");
		break;
	case NP_TGETATTR:
		pu32(pu, &f->tgetattr.fid, "fid");
		pu64(pu, &f->tgetattr.request_mask, "request_mask");
		break;
	case NP_RGETATTR:
		pu64(pu, &f->rgetattr.valid, "valid");
		puqid(pu, &f->rgetattr.qid, "qid");
		pu32(pu, &f->rgetattr.mode, "mode");
		pu32(pu, &f->rgetattr.uid, "uid");
		pu32(pu, &f->rgetattr.gid, "gid");
		pu64(pu, &f->rgetattr.nlink, "nlink");
		pu64(pu, &f->rgetattr.rdev, "rdev");
		pu64(pu, &f->rgetattr.size, "size");
		pu64(pu, &f->rgetattr.blksize, "blksize");
		pu64(pu, &f->rgetattr.blocks, "blocks");
		pu64(pu, &f->rgetattr.atime_sec, "atime_sec");
		pu64(pu, &f->rgetattr.atime_nsec, "atime_nsec");
		pu64(pu, &f->rgetattr.mtime_sec, "mtime_sec");
		pu64(pu, &f->rgetattr.mtime_nsec, "mtime_nsec");
		pu64(pu, &f->rgetattr.ctime_sec, "ctime_sec");
		pu64(pu, &f->rgetattr.ctime_nsec, "ctime_nsec");
		pu64(pu, &f->rgetattr.btime_sec, "btime_sec");
		pu64(pu, &f->rgetattr.btime_nsec, "btime_nsec");
		pu64(pu, &f->rgetattr.gen, "gen");
		pu64(pu, &f->rgetattr.data_version, "data_version");
		break;
	case NP_TSETATTR:
		pu32(pu, &f->tsetattr.fid, "fid");
		pu32(pu, &f->tsetattr.valid, "valid");
		pu32(pu, &f->tsetattr.mode, "mode");
		pu32(pu, &f->tsetattr.uid, "uid");
		pu32(pu, &f->tsetattr.gid, "gid");
		pu64(pu, &f->tsetattr.size, "size");
		pu64(pu, &f->tsetattr.atime_sec, "atime_sec");
		pu64(pu, &f->tsetattr.atime_nsec, "atime_nsec");
		pu64(pu, &f->tsetattr.mtime_sec, "mtime_sec");
		pu64(pu, &f->tsetattr.mtime_nsec, "mtime_nsec");
		break;
	case NP_TXATTRWALK:
		pu32(pu, &f->txattrwalk.fid, "fid");
		pu32(pu, &f->txattrwalk.newfid, "newfid");
		pustr(pu, &f->txattrwalk.name, "name");
		break;
	case NP_RXATTRWALK:
		pu64(pu, &f->rxattrwalk.size, "size");
		break;
	case NP_TXATTRCREATE:
		pu32(pu, &f->txattrcreate.fid, "fid");
		pustr(pu, &f->txattrcreate.name, "name");
		pu64(pu, &f->txattrcreate.attr_size, "attr_size");
		pu32(pu, &f->txattrcreate.flags, "flags");
		break;
	case NP_TFSYNC:
		pu32(pu, &f->tfsync.fid, "fid");
		pu32(pu, &f->tfsync.datasync, "datasync");
		break;
	case NP_TLOCK:
		pu32(pu, &f->tlock.fid, "fid");
		pu8(pu, &f->tlock.type, "type");
		pu32(pu, &f->tlock.flags, "flags");
		pu64(pu, &f->tlock.start, "start");
		pu64(pu, &f->tlock.length, "length");
		pu32(pu, &f->tlock.proc_id, "proc_id");
		pustr(pu, &f->tlock.client_id, "client_id");
		break;
	case NP_RLOCK:
		pu8(pu, &f->rlock.status, "status");
		break;
	case NP_TGETLOCK:
		pu32(pu, &f->tgetlock.fid, "fid");
		pu8(pu, &f->tgetlock.type, "type");
		pu64(pu, &f->tgetlock.start, "start");
		pu64(pu, &f->tgetlock.length, "length");
		pu32(pu, &f->tgetlock.proc_id, "proc_id");
		pustr(pu, &f->tgetlock.client_id, "client_id");
		break;
	case NP_RGETLOCK:
		pu8(pu, &f->rgetlock.type, "type");
		pu64(pu, &f->rgetlock.start, "start");
		pu64(pu, &f->rgetlock.length, "length");
		pu32(pu, &f->rgetlock.proc_id, "proc_id");
		pustr(pu, &f->rgetlock.client_id, "client_id");
		break;
	case NP_TLINK:
		pu32(pu, &f->tlink.dfid, "dfid");
		pu32(pu, &f->tlink.fid, "fid");
		pustr(pu, &f->tlink.name, "name");
		break;
	case NP_TMKDIR:
		pu32(pu, &f->tmkdir.dfid, "dfid");
		pustr(pu, &f->tmkdir.name, "name");
		pu32(pu, &f->tmkdir.mode, "mode");
		pu32(pu, &f->tmkdir.gid, "gid");
		break;
	case NP_TRENAMEAT:
		pu32(pu, &f->trenameat.olddirfid, "olddirfid");
		pustr(pu, &f->trenameat.oldname, "oldname");
		pu32(pu, &f->trenameat.newdirfid, "newdirfid");
		pustr(pu, &f->trenameat.newname, "newname");
		break;
	case NP_TUNLINKAT:
		pu32(pu, &f->tunlinkat.dirfid, "dirfid");
		pustr(pu, &f->tunlinkat.name, "name");
		pu32(pu, &f->tunlinkat.flags, "flags");
		break;
	case NP_RFLUSH:
	case NP_RCLUNK:
	case NP_RREMOVE:
	case NP_RWSTAT:
	case NP_RRENAME:
	case NP_RSETATTR:
	case NP_RXATTRCREATE:
	case NP_RFSYNC:
	case NP_RLINK:
	case NP_RRENAMEAT:
	case NP_RUNLINKAT:
		break;
	default:
		np_pu_fail(pu, EOPNOTSUPP, "type");
		break;
	}
}

int np_type_valid(uint8_t type, enum np_dialect d)
{
	if (type >= NP_TVERSION && type <= NP_RWSTAT)
		return type != NP_TERROR;
	if (d != NP_9P2000L)
		return 0;
	switch (type) {
	case NP_RLERROR:
	case NP_TSTATFS: case NP_RSTATFS:
	case NP_TLOPEN: case NP_RLOPEN:
	case NP_TLCREATE: case NP_RLCREATE:
	case NP_TSYMLINK: case NP_RSYMLINK:
	case NP_TMKNOD: case NP_RMKNOD:
	case NP_TRENAME: case NP_RRENAME:
	case NP_TREADLINK: case NP_RREADLINK:
	case NP_TGETATTR: case NP_RGETATTR:
	case NP_TSETATTR: case NP_RSETATTR:
	case NP_TXATTRWALK: case NP_RXATTRWALK:
	case NP_TXATTRCREATE: case NP_RXATTRCREATE:
	case NP_TREADDIR: case NP_RREADDIR:
	case NP_TFSYNC: case NP_RFSYNC:
	case NP_TLOCK: case NP_RLOCK:
	case NP_TGETLOCK: case NP_RGETLOCK:
	case NP_TLINK: case NP_RLINK:
	case NP_TMKDIR: case NP_RMKDIR:
	case NP_TRENAMEAT: case NP_RRENAMEAT:
	case NP_TUNLINKAT: case NP_RUNLINKAT:
		return 1;
	default:
		return 0;
	}
}

/* A single path component as a client may name it in walk: not empty, not
 * ".", no '/'.  ".." is legal (the server keeps it inside the export). */
static int bad_wname(np_str s)
{
	if (s.len == 0 || (s.len == 1 && s.s[0] == '.'))
		return 1;
	return memchr(s.s, '/', s.len) != NULL;
}

/* A name that creates, renames or removes a directory entry: not empty, no
 * '/', and not "." or ".." (create(5): "it is illegal to create files with
 * these names"; renaming or unlinking them would act on another directory). */
static int bad_name(np_str s)
{
	if (s.len == 0 || (s.len == 1 && s.s[0] == '.') ||
	    (s.len == 2 && s.s[0] == '.' && s.s[1] == '.'))
		return 1;
	return memchr(s.s, '/', s.len) != NULL;
}

/* Checks that only apply to input from a peer. */
static void np_decode_check(struct np_pu *pu, np_fcall *f, uint32_t msize)
{
	uint32_t iomax = msize ? msize - NP_IOHDRSZ : UINT32_MAX;
	switch (f->type) {
	case NP_TWALK:
		for (int i = 0; i < f->twalk.nwname; i++)
			if (bad_wname(f->twalk.wname[i])) {
				np_pu_fail(pu, EINVAL, "wname");
				return;
			}
		break;
	case NP_TWRITE:
		if (f->twrite.count > iomax)
			np_pu_fail(pu, EMSGSIZE, "count");
		break;
	case NP_RREAD:
		if (f->rread.count > iomax)
			np_pu_fail(pu, EMSGSIZE, "count");
		break;
	case NP_RREADDIR: {
		np_dirent de;
		uint32_t pos = 0;
		int r;
		if (f->rread.count > iomax) {
			np_pu_fail(pu, EMSGSIZE, "count");
			return;
		}
		while ((r = np_dirent_next(f->rread.data, f->rread.count, &pos, &de)) > 0)
			;
		if (r < 0)
			np_pu_fail(pu, EPROTO, "dirent");
		break;
	}
	case NP_TCREATE:
		if (bad_name(f->tcreate.name))
			np_pu_fail(pu, EINVAL, "name");
		break;
	case NP_TLCREATE:
		if (bad_name(f->tlcreate.name))
			np_pu_fail(pu, EINVAL, "name");
		break;
	case NP_TSYMLINK:
		if (bad_name(f->tsymlink.name))
			np_pu_fail(pu, EINVAL, "name");
		break;
	case NP_TMKNOD:
		if (bad_name(f->tmknod.name))
			np_pu_fail(pu, EINVAL, "name");
		break;
	case NP_TRENAME:
		if (bad_name(f->trename.name))
			np_pu_fail(pu, EINVAL, "name");
		break;
	case NP_TLINK:
		if (bad_name(f->tlink.name))
			np_pu_fail(pu, EINVAL, "name");
		break;
	case NP_TMKDIR:
		if (bad_name(f->tmkdir.name))
			np_pu_fail(pu, EINVAL, "name");
		break;
	case NP_TRENAMEAT:
		if (bad_name(f->trenameat.oldname))
			np_pu_fail(pu, EINVAL, "oldname");
		else if (bad_name(f->trenameat.newname))
			np_pu_fail(pu, EINVAL, "newname");
		break;
	case NP_TUNLINKAT:
		if (bad_name(f->tunlinkat.name))
			np_pu_fail(pu, EINVAL, "name");
		break;
	default:
		break;
	}
}

int np_decode(const uint8_t *buf, size_t len, enum np_dialect d, uint32_t msize,
	      np_fcall *f, np_decode_error *e)
{
	struct np_pu pu = {
		.base = (uint8_t *)buf, /* decode never writes */
		.p = (uint8_t *)buf,
		.end = (uint8_t *)buf + len,
		.mode = NP_PU_DECODE,
		.dialect = d,
	};
	uint32_t size = 0;

	if (len < NP_HDRSZ) {
		np_pu_fail(&pu, EPROTO, "size");
		goto out;
	}
	pu32(&pu, &size, "size");
	if (size != len) {
		np_pu_fail(&pu, EPROTO, "size");
		goto out;
	}
	if (msize && len > msize) {
		np_pu_fail(&pu, EMSGSIZE, "size");
		goto out;
	}
	pu8(&pu, &f->type, "type");
	pu16(&pu, &f->tag, "tag");
	if (!np_type_valid(f->type, d)) {
		pu.p = pu.base + 4;
		np_pu_fail(&pu, EOPNOTSUPP, "type");
		goto out;
	}
	np_pu_body(&pu, f);
	if (!pu.err && pu.p != pu.end)
		np_pu_fail(&pu, EPROTO, "trailing bytes");
	if (!pu.err)
		np_decode_check(&pu, f, msize);
out:
	if (pu.err && e) {
		e->err = pu.err;
		e->field = pu.field;
		e->offset = pu.err_off;
	}
	return pu.err ? -pu.err : 0;
}

static long np_encode_mode(const np_fcall *fc, enum np_dialect d, uint8_t *buf, size_t cap,
			   enum np_pu_mode mode)
{
	/* The walk takes non-const pointers for both directions; encoding and
	 * sizing only read through them. */
	np_fcall *f = (np_fcall *)fc;
	struct np_pu pu = {
		.base = buf,
		.p = buf,
		.end = buf ? buf + cap : NULL,
		.mode = mode,
		.dialect = d,
	};
	uint32_t size = 0;
	uint8_t type = f->type;
	uint16_t tag = f->tag;

	if (!np_type_valid(type, d))
		return -EINVAL;
	if ((type == NP_TWALK && f->twalk.nwname > NP_MAXWELEM) ||
	    (type == NP_RWALK && f->rwalk.nwqid > NP_MAXWELEM))
		return -EINVAL;
	pu32(&pu, &size, "size");
	pu8(&pu, &type, "type");
	pu16(&pu, &tag, "tag");
	np_pu_body(&pu, f);
	if (pu.err)
		return -pu.err;
	size_t n = mode == NP_PU_SIZE ? pu.counted : (size_t)(pu.p - pu.base);
	if (n > UINT32_MAX) /* size[4] cannot say it */
		return -EINVAL;
	if (mode == NP_PU_ENCODE) {
		uint32_t le = htole32((uint32_t)n);
		memcpy(buf, &le, 4);
	}
	return (long)n;
}

int np_encode(const np_fcall *f, enum np_dialect d, uint8_t *buf, size_t cap)
{
	/* The length is returned as an int: a frame that would not fit one
	 * does not fit the buffer either. */
	if (cap > INT_MAX)
		cap = INT_MAX;
	return (int)np_encode_mode(f, d, buf, cap, NP_PU_ENCODE);
}

long np_fcall_size(const np_fcall *f, enum np_dialect d)
{
	return np_encode_mode(f, d, NULL, 0, NP_PU_SIZE);
}

size_t np_stat_encode(const np_stat *st, enum np_dialect d, uint8_t *buf, size_t cap)
{
	struct np_pu pu = {
		.base = buf, .p = buf, .end = buf + cap, .mode = NP_PU_ENCODE, .dialect = d,
	};
	np_pu_stat(&pu, (np_stat *)st);
	return pu.err ? 0 : (size_t)(pu.p - buf);
}

long np_stat_decode(const uint8_t *buf, size_t len, enum np_dialect d, np_stat *st)
{
	struct np_pu pu = {
		.base = (uint8_t *)buf,
		.p = (uint8_t *)buf,
		.end = (uint8_t *)buf + len,
		.mode = NP_PU_DECODE,
		.dialect = d,
	};
	np_pu_stat(&pu, st);
	return pu.err ? -pu.err : (long)(pu.p - buf);
}

size_t np_dirent_encode(uint8_t *buf, size_t cap, const np_dirent *de)
{
	struct np_pu pu = {
		.base = buf, .p = buf, .end = buf + cap, .mode = NP_PU_ENCODE,
	};
	np_dirent *d = (np_dirent *)de;
	puqid(&pu, &d->qid, "qid");
	pu64(&pu, &d->offset, "offset");
	pu8(&pu, &d->type, "type");
	pustr(&pu, &d->name, "name");
	return pu.err ? 0 : (size_t)(pu.p - buf);
}

int np_dirent_next(const uint8_t *data, uint32_t count, uint32_t *pos, np_dirent *de)
{
	if (*pos >= count)
		return 0;
	struct np_pu pu = {
		.base = (uint8_t *)data,
		.p = (uint8_t *)data + *pos,
		.end = (uint8_t *)data + count,
		.mode = NP_PU_DECODE,
	};
	puqid(&pu, &de->qid, "qid");
	pu64(&pu, &de->offset, "offset");
	pu8(&pu, &de->type, "type");
	pustr(&pu, &de->name, "name");
	if (pu.err)
		return -EPROTO;
	*pos = (uint32_t)(pu.p - pu.base);
	return 1;
}

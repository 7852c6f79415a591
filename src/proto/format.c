/* One-line rendering of any message, for `ninepd -d` and `ninep -d`. */
#include <stdarg.h>
#include <stdio.h>

#include "ninep/proto.h"

struct out {
	char *buf;
	size_t cap;
	size_t len; /* what would have been written */
};

static void put(struct out *o, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void put(struct out *o, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	size_t room = o->len < o->cap ? o->cap - o->len : 0;
	int n = vsnprintf(room ? o->buf + o->len : NULL, room, fmt, ap);
	va_end(ap);
	if (n > 0)
		o->len += (size_t)n;
}

/* Strings are quoted; control characters and quotes are escaped so a hostile
 * name cannot forge log lines.  Long strings are cut. */
static void putstr(struct out *o, np_str s)
{
	put(o, " '");
	size_t n = s.len > 64 ? 64 : s.len;
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)s.s[i];
		if (c < 0x20 || c == 0x7f || c == '\'' || c == '\\')
			put(o, "\\x%02x", c);
		else
			put(o, "%c", c);
	}
	put(o, s.len > n ? "'...(%u)" : "'", s.len);
}

static void putqid(struct out *o, const np_qid *q)
{
	put(o, " (%02x %u %llx)", q->type, q->version, (unsigned long long)q->path);
}

static void putstat(struct out *o, const np_stat *st, enum np_dialect d)
{
	put(o, " stat type %u dev %u", st->type, st->dev);
	putqid(o, &st->qid);
	put(o, " mode %o atime %u mtime %u length %llu", st->mode, st->atime, st->mtime,
	    (unsigned long long)st->length);
	putstr(o, st->name);
	putstr(o, st->uid);
	putstr(o, st->gid);
	putstr(o, st->muid);
	if (d != NP_9P2000) {
		putstr(o, st->extension);
		put(o, " n_uid %u n_gid %u n_muid %u", st->n_uid, st->n_gid, st->n_muid);
	}
}

int np_fcall_format(char *buf, size_t cap, const np_fcall *f, enum np_dialect d)
{
	struct out o = {buf, cap, 0};
	const char *name = np_type_name(f->type);
	if (cap)
		buf[0] = '\0';
	if (name)
		put(&o, "%s tag %u", name, f->tag);
	else
		put(&o, "type %u tag %u", f->type, f->tag);

	switch (f->type) {
	case NP_TVERSION:
	case NP_RVERSION:
		put(&o, " msize %u", f->version.msize);
		putstr(&o, f->version.version);
		break;
	case NP_TAUTH:
		put(&o, " afid %u", f->tauth.afid);
		putstr(&o, f->tauth.uname);
		putstr(&o, f->tauth.aname);
		if (d != NP_9P2000)
			put(&o, " n_uname %u", f->tauth.n_uname);
		break;
	case NP_RAUTH:
		putqid(&o, &f->rauth.aqid);
		break;
	case NP_TATTACH:
		put(&o, " fid %u afid %d", f->tattach.fid, (int)f->tattach.afid);
		putstr(&o, f->tattach.uname);
		putstr(&o, f->tattach.aname);
		if (d != NP_9P2000)
			put(&o, " n_uname %d", (int)f->tattach.n_uname);
		break;
	case NP_RATTACH:
	case NP_RSYMLINK:
	case NP_RMKNOD:
	case NP_RMKDIR:
		putqid(&o, &f->rqid.qid);
		break;
	case NP_RERROR:
		putstr(&o, f->rerror.ename);
		if (d != NP_9P2000)
			put(&o, " errno %u", f->rerror.ecode);
		break;
	case NP_RLERROR:
		put(&o, " ecode %u", f->rlerror.ecode);
		break;
	case NP_TFLUSH:
		put(&o, " oldtag %u", f->tflush.oldtag);
		break;
	case NP_TWALK:
		put(&o, " fid %u newfid %u nwname %u", f->twalk.fid, f->twalk.newfid,
		    f->twalk.nwname);
		for (int i = 0; i < f->twalk.nwname && i < NP_MAXWELEM; i++)
			putstr(&o, f->twalk.wname[i]);
		break;
	case NP_RWALK:
		put(&o, " nwqid %u", f->rwalk.nwqid);
		for (int i = 0; i < f->rwalk.nwqid && i < NP_MAXWELEM; i++)
			putqid(&o, &f->rwalk.wqid[i]);
		break;
	case NP_TOPEN:
		put(&o, " fid %u mode %u", f->topen.fid, f->topen.mode);
		break;
	case NP_ROPEN:
	case NP_RCREATE:
	case NP_RLOPEN:
	case NP_RLCREATE:
		putqid(&o, &f->ropen.qid);
		put(&o, " iounit %u", f->ropen.iounit);
		break;
	case NP_TCREATE:
		put(&o, " fid %u", f->tcreate.fid);
		putstr(&o, f->tcreate.name);
		put(&o, " perm %o mode %u", f->tcreate.perm, f->tcreate.mode);
		if (d != NP_9P2000)
			putstr(&o, f->tcreate.extension);
		break;
	case NP_TREAD:
	case NP_TREADDIR:
		put(&o, " fid %u offset %llu count %u", f->tread.fid,
		    (unsigned long long)f->tread.offset, f->tread.count);
		break;
	case NP_RREAD:
	case NP_RREADDIR:
		put(&o, " count %u", f->rread.count);
		break;
	case NP_TWRITE:
		put(&o, " fid %u offset %llu count %u", f->twrite.fid,
		    (unsigned long long)f->twrite.offset, f->twrite.count);
		break;
	case NP_RWRITE:
		put(&o, " count %u", f->rwrite.count);
		break;
	case NP_TCLUNK:
	case NP_TREMOVE:
	case NP_TSTAT:
	case NP_TSTATFS:
	case NP_TREADLINK:
		put(&o, " fid %u", f->tclunk.fid);
		break;
	case NP_RSTAT:
		putstat(&o, &f->rstat.stat, d);
		break;
	case NP_TWSTAT:
		put(&o, " fid %u", f->twstat.fid);
		putstat(&o, &f->twstat.stat, d);
		break;
	case NP_RSTATFS:
		put(&o, " type %x bsize %u blocks %llu bfree %llu bavail %llu files %llu ffree %llu fsid %llx namelen %u",
		    f->rstatfs.type, f->rstatfs.bsize, (unsigned long long)f->rstatfs.blocks,
		    (unsigned long long)f->rstatfs.bfree, (unsigned long long)f->rstatfs.bavail,
		    (unsigned long long)f->rstatfs.files, (unsigned long long)f->rstatfs.ffree,
		    (unsigned long long)f->rstatfs.fsid, f->rstatfs.namelen);
		break;
	case NP_TLOPEN:
		put(&o, " fid %u flags 0%o", f->tlopen.fid, f->tlopen.flags);
		break;
	case NP_TLCREATE:
		put(&o, " fid %u", f->tlcreate.fid);
		putstr(&o, f->tlcreate.name);
		put(&o, " flags 0%o mode 0%o gid %u", f->tlcreate.flags, f->tlcreate.mode,
		    f->tlcreate.gid);
		break;
	case NP_TSYMLINK:
		put(&o, " fid %u", f->tsymlink.fid);
		putstr(&o, f->tsymlink.name);
		putstr(&o, f->tsymlink.symtgt);
		put(&o, " gid %u", f->tsymlink.gid);
		break;
	case NP_TMKNOD:
		put(&o, " dfid %u", f->tmknod.dfid);
		putstr(&o, f->tmknod.name);
		put(&o, " mode 0%o major %u minor %u gid %u", f->tmknod.mode, f->tmknod.major,
		    f->tmknod.minor, f->tmknod.gid);
		break;
	case NP_TRENAME:
		put(&o, " fid %u dfid %u", f->trename.fid, f->trename.dfid);
		putstr(&o, f->trename.name);
		break;
	case NP_RREADLINK:
		putstr(&o, f->rreadlink.target);
		break;
	case NP_TGETATTR:
		put(&o, " fid %u request_mask 0x%llx", f->tgetattr.fid,
		    (unsigned long long)f->tgetattr.request_mask);
		break;
	case NP_RGETATTR:
		put(&o, " valid 0x%llx", (unsigned long long)f->rgetattr.valid);
		putqid(&o, &f->rgetattr.qid);
		put(&o, " mode 0%o uid %u gid %u nlink %llu rdev %llu size %llu blksize %llu blocks %llu"
			" atime %llu.%09llu mtime %llu.%09llu ctime %llu.%09llu",
		    f->rgetattr.mode, f->rgetattr.uid, f->rgetattr.gid,
		    (unsigned long long)f->rgetattr.nlink, (unsigned long long)f->rgetattr.rdev,
		    (unsigned long long)f->rgetattr.size, (unsigned long long)f->rgetattr.blksize,
		    (unsigned long long)f->rgetattr.blocks,
		    (unsigned long long)f->rgetattr.atime_sec, (unsigned long long)f->rgetattr.atime_nsec,
		    (unsigned long long)f->rgetattr.mtime_sec, (unsigned long long)f->rgetattr.mtime_nsec,
		    (unsigned long long)f->rgetattr.ctime_sec, (unsigned long long)f->rgetattr.ctime_nsec);
		break;
	case NP_TSETATTR:
		put(&o, " fid %u valid 0x%x mode 0%o uid %d gid %d size %llu atime %llu.%09llu mtime %llu.%09llu",
		    f->tsetattr.fid, f->tsetattr.valid, f->tsetattr.mode, (int)f->tsetattr.uid,
		    (int)f->tsetattr.gid, (unsigned long long)f->tsetattr.size,
		    (unsigned long long)f->tsetattr.atime_sec, (unsigned long long)f->tsetattr.atime_nsec,
		    (unsigned long long)f->tsetattr.mtime_sec, (unsigned long long)f->tsetattr.mtime_nsec);
		break;
	case NP_TXATTRWALK:
		put(&o, " fid %u newfid %u", f->txattrwalk.fid, f->txattrwalk.newfid);
		putstr(&o, f->txattrwalk.name);
		break;
	case NP_RXATTRWALK:
		put(&o, " size %llu", (unsigned long long)f->rxattrwalk.size);
		break;
	case NP_TXATTRCREATE:
		put(&o, " fid %u", f->txattrcreate.fid);
		putstr(&o, f->txattrcreate.name);
		put(&o, " attr_size %llu flags %u", (unsigned long long)f->txattrcreate.attr_size,
		    f->txattrcreate.flags);
		break;
	case NP_TFSYNC:
		put(&o, " fid %u datasync %u", f->tfsync.fid, f->tfsync.datasync);
		break;
	case NP_TLOCK:
		put(&o, " fid %u type %u flags %u start %llu length %llu proc_id %u", f->tlock.fid,
		    f->tlock.type, f->tlock.flags, (unsigned long long)f->tlock.start,
		    (unsigned long long)f->tlock.length, f->tlock.proc_id);
		putstr(&o, f->tlock.client_id);
		break;
	case NP_RLOCK:
		put(&o, " status %u", f->rlock.status);
		break;
	case NP_TGETLOCK:
		put(&o, " fid %u type %u start %llu length %llu proc_id %u", f->tgetlock.fid,
		    f->tgetlock.type, (unsigned long long)f->tgetlock.start,
		    (unsigned long long)f->tgetlock.length, f->tgetlock.proc_id);
		putstr(&o, f->tgetlock.client_id);
		break;
	case NP_RGETLOCK:
		put(&o, " type %u start %llu length %llu proc_id %u", f->rgetlock.type,
		    (unsigned long long)f->rgetlock.start, (unsigned long long)f->rgetlock.length,
		    f->rgetlock.proc_id);
		putstr(&o, f->rgetlock.client_id);
		break;
	case NP_TLINK:
		put(&o, " dfid %u fid %u", f->tlink.dfid, f->tlink.fid);
		putstr(&o, f->tlink.name);
		break;
	case NP_TMKDIR:
		put(&o, " dfid %u", f->tmkdir.dfid);
		putstr(&o, f->tmkdir.name);
		put(&o, " mode 0%o gid %u", f->tmkdir.mode, f->tmkdir.gid);
		break;
	case NP_TRENAMEAT:
		put(&o, " olddirfid %u", f->trenameat.olddirfid);
		putstr(&o, f->trenameat.oldname);
		put(&o, " newdirfid %u", f->trenameat.newdirfid);
		putstr(&o, f->trenameat.newname);
		break;
	case NP_TUNLINKAT:
		put(&o, " dirfid %u", f->tunlinkat.dirfid);
		putstr(&o, f->tunlinkat.name);
		put(&o, " flags 0x%x", f->tunlinkat.flags);
		break;
	default:
		break;
	}
	return (int)o.len;
}

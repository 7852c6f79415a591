/* Field-by-field comparison: memcmp cannot be used on np_fcall (union
 * padding, string views into different frames). */
#include "fcall_compare.h"

#include <string.h>

static int str_same(np_str a, np_str b)
{
	return a.len == b.len && (a.len == 0 || memcmp(a.s, b.s, a.len) == 0);
}

static int qid_same(const np_qid *a, const np_qid *b)
{
	return a->type == b->type && a->version == b->version && a->path == b->path;
}

static int data_same(const uint8_t *a, const uint8_t *b, uint32_t n)
{
	return n == 0 || memcmp(a, b, n) == 0;
}

#define F(x)                          \
	do {                          \
		if (a->x != b->x)     \
			return #x;    \
	} while (0)
#define STR(x)                                 \
	do {                                   \
		if (!str_same(a->x, b->x))     \
			return #x;             \
	} while (0)
#define QID(x)                                  \
	do {                                    \
		if (!qid_same(&a->x, &b->x))    \
			return #x;              \
	} while (0)

static const char *stat_diff(const np_stat *a, const np_stat *b, enum np_dialect d)
{
	F(type);
	F(dev);
	QID(qid);
	F(mode);
	F(atime);
	F(mtime);
	F(length);
	STR(name);
	STR(uid);
	STR(gid);
	STR(muid);
	if (d != NP_9P2000) {
		STR(extension);
		F(n_uid);
		F(n_gid);
		F(n_muid);
	}
	return NULL;
}

const char *fcall_diff(const np_fcall *a, const np_fcall *b, enum np_dialect d)
{
	int dotu = d != NP_9P2000;
	F(type);
	F(tag);
	switch (a->type) {
	case NP_TVERSION:
	case NP_RVERSION:
		F(version.msize);
		STR(version.version);
		break;
	case NP_TAUTH:
		F(tauth.afid);
		STR(tauth.uname);
		STR(tauth.aname);
		if (dotu)
			F(tauth.n_uname);
		break;
	case NP_RAUTH:
		QID(rauth.aqid);
		break;
	case NP_TATTACH:
		F(tattach.fid);
		F(tattach.afid);
		STR(tattach.uname);
		STR(tattach.aname);
		if (dotu)
			F(tattach.n_uname);
		break;
	case NP_RATTACH:
		QID(rattach.qid);
		break;
	case NP_RSYMLINK:
	case NP_RMKNOD:
	case NP_RMKDIR:
		QID(rqid.qid);
		break;
	case NP_RERROR:
		STR(rerror.ename);
		if (dotu)
			F(rerror.ecode);
		break;
	case NP_RLERROR:
		F(rlerror.ecode);
		break;
	case NP_TFLUSH:
		F(tflush.oldtag);
		break;
	case NP_TWALK:
		F(twalk.fid);
		F(twalk.newfid);
		F(twalk.nwname);
		for (int i = 0; i < a->twalk.nwname && i < NP_MAXWELEM; i++)
			if (!str_same(a->twalk.wname[i], b->twalk.wname[i]))
				return "twalk.wname";
		break;
	case NP_RWALK:
		F(rwalk.nwqid);
		for (int i = 0; i < a->rwalk.nwqid && i < NP_MAXWELEM; i++)
			if (!qid_same(&a->rwalk.wqid[i], &b->rwalk.wqid[i]))
				return "rwalk.wqid";
		break;
	case NP_TOPEN:
		F(topen.fid);
		F(topen.mode);
		break;
	case NP_ROPEN:
	case NP_RCREATE:
	case NP_RLOPEN:
	case NP_RLCREATE:
		QID(ropen.qid);
		F(ropen.iounit);
		break;
	case NP_TCREATE:
		F(tcreate.fid);
		STR(tcreate.name);
		F(tcreate.perm);
		F(tcreate.mode);
		if (dotu)
			STR(tcreate.extension);
		break;
	case NP_TREAD:
	case NP_TREADDIR:
		F(tread.fid);
		F(tread.offset);
		F(tread.count);
		break;
	case NP_RREAD:
	case NP_RREADDIR:
		F(rread.count);
		if (!data_same(a->rread.data, b->rread.data, a->rread.count))
			return "rread.data";
		break;
	case NP_TWRITE:
		F(twrite.fid);
		F(twrite.offset);
		F(twrite.count);
		if (!data_same(a->twrite.data, b->twrite.data, a->twrite.count))
			return "twrite.data";
		break;
	case NP_RWRITE:
		F(rwrite.count);
		break;
	case NP_TCLUNK:
	case NP_TREMOVE:
	case NP_TSTAT:
	case NP_TSTATFS:
	case NP_TREADLINK:
		F(tclunk.fid);
		break;
	case NP_RSTAT:
		return stat_diff(&a->rstat.stat, &b->rstat.stat, d);
	case NP_TWSTAT:
		F(twstat.fid);
		return stat_diff(&a->twstat.stat, &b->twstat.stat, d);
	case NP_RSTATFS:
		F(rstatfs.type);
		F(rstatfs.bsize);
		F(rstatfs.blocks);
		F(rstatfs.bfree);
		F(rstatfs.bavail);
		F(rstatfs.files);
		F(rstatfs.ffree);
		F(rstatfs.fsid);
		F(rstatfs.namelen);
		break;
	case NP_TLOPEN:
		F(tlopen.fid);
		F(tlopen.flags);
		break;
	case NP_TLCREATE:
		F(tlcreate.fid);
		STR(tlcreate.name);
		F(tlcreate.flags);
		F(tlcreate.mode);
		F(tlcreate.gid);
		break;
	case NP_TSYMLINK:
		F(tsymlink.fid);
		STR(tsymlink.name);
		STR(tsymlink.symtgt);
		F(tsymlink.gid);
		break;
	case NP_TMKNOD:
		F(tmknod.dfid);
		STR(tmknod.name);
		F(tmknod.mode);
		F(tmknod.major);
		F(tmknod.minor);
		F(tmknod.gid);
		break;
	case NP_TRENAME:
		F(trename.fid);
		F(trename.dfid);
		STR(trename.name);
		break;
	case NP_RREADLINK:
		STR(rreadlink.target);
		break;
	case NP_TGETATTR:
		F(tgetattr.fid);
		F(tgetattr.request_mask);
		break;
	case NP_RGETATTR:
		F(rgetattr.valid);
		QID(rgetattr.qid);
		F(rgetattr.mode);
		F(rgetattr.uid);
		F(rgetattr.gid);
		F(rgetattr.nlink);
		F(rgetattr.rdev);
		F(rgetattr.size);
		F(rgetattr.blksize);
		F(rgetattr.blocks);
		F(rgetattr.atime_sec);
		F(rgetattr.atime_nsec);
		F(rgetattr.mtime_sec);
		F(rgetattr.mtime_nsec);
		F(rgetattr.ctime_sec);
		F(rgetattr.ctime_nsec);
		F(rgetattr.btime_sec);
		F(rgetattr.btime_nsec);
		F(rgetattr.gen);
		F(rgetattr.data_version);
		break;
	case NP_TSETATTR:
		F(tsetattr.fid);
		F(tsetattr.valid);
		F(tsetattr.mode);
		F(tsetattr.uid);
		F(tsetattr.gid);
		F(tsetattr.size);
		F(tsetattr.atime_sec);
		F(tsetattr.atime_nsec);
		F(tsetattr.mtime_sec);
		F(tsetattr.mtime_nsec);
		break;
	case NP_TXATTRWALK:
		F(txattrwalk.fid);
		F(txattrwalk.newfid);
		STR(txattrwalk.name);
		break;
	case NP_RXATTRWALK:
		F(rxattrwalk.size);
		break;
	case NP_TXATTRCREATE:
		F(txattrcreate.fid);
		STR(txattrcreate.name);
		F(txattrcreate.attr_size);
		F(txattrcreate.flags);
		break;
	case NP_TFSYNC:
		F(tfsync.fid);
		F(tfsync.datasync);
		break;
	case NP_TLOCK:
		F(tlock.fid);
		F(tlock.type);
		F(tlock.flags);
		F(tlock.start);
		F(tlock.length);
		F(tlock.proc_id);
		STR(tlock.client_id);
		break;
	case NP_RLOCK:
		F(rlock.status);
		break;
	case NP_TGETLOCK:
		F(tgetlock.fid);
		F(tgetlock.type);
		F(tgetlock.start);
		F(tgetlock.length);
		F(tgetlock.proc_id);
		STR(tgetlock.client_id);
		break;
	case NP_RGETLOCK:
		F(rgetlock.type);
		F(rgetlock.start);
		F(rgetlock.length);
		F(rgetlock.proc_id);
		STR(rgetlock.client_id);
		break;
	case NP_TLINK:
		F(tlink.dfid);
		F(tlink.fid);
		STR(tlink.name);
		break;
	case NP_TMKDIR:
		F(tmkdir.dfid);
		STR(tmkdir.name);
		F(tmkdir.mode);
		F(tmkdir.gid);
		break;
	case NP_TRENAMEAT:
		F(trenameat.olddirfid);
		STR(trenameat.oldname);
		F(trenameat.newdirfid);
		STR(trenameat.newname);
		break;
	case NP_TUNLINKAT:
		F(tunlinkat.dirfid);
		STR(tunlinkat.name);
		F(tunlinkat.flags);
		break;
	default:
		break; /* bodiless replies: type and tag say it all */
	}
	return NULL;
}

/* Sample messages of every type.  Values are chosen so that a field swapped
 * with its neighbour, or encoded with the wrong width, changes the result:
 * every integer is distinct and uses several bytes. */
#include "fcall_samples.h"

#include <errno.h>
#include <string.h>

const uint8_t fcall_types[] = {
	NP_TVERSION, NP_RVERSION, NP_TAUTH, NP_RAUTH, NP_TATTACH, NP_RATTACH,
	NP_RERROR, NP_TFLUSH, NP_RFLUSH, NP_TWALK, NP_RWALK, NP_TOPEN, NP_ROPEN,
	NP_TCREATE, NP_RCREATE, NP_TREAD, NP_RREAD, NP_TWRITE, NP_RWRITE,
	NP_TCLUNK, NP_RCLUNK, NP_TREMOVE, NP_RREMOVE, NP_TSTAT, NP_RSTAT,
	NP_TWSTAT, NP_RWSTAT,
	NP_RLERROR, NP_TSTATFS, NP_RSTATFS, NP_TLOPEN, NP_RLOPEN, NP_TLCREATE,
	NP_RLCREATE, NP_TSYMLINK, NP_RSYMLINK, NP_TMKNOD, NP_RMKNOD, NP_TRENAME,
	NP_RRENAME, NP_TREADLINK, NP_RREADLINK, NP_TGETATTR, NP_RGETATTR,
	NP_TSETATTR, NP_RSETATTR, NP_TXATTRWALK, NP_RXATTRWALK, NP_TXATTRCREATE,
	NP_RXATTRCREATE, NP_TREADDIR, NP_RREADDIR, NP_TFSYNC, NP_RFSYNC, NP_TLOCK,
	NP_RLOCK, NP_TGETLOCK, NP_RGETLOCK, NP_TLINK, NP_RLINK, NP_TMKDIR,
	NP_RMKDIR, NP_TRENAMEAT, NP_RRENAMEAT, NP_TUNLINKAT, NP_RUNLINKAT,
};
const size_t fcall_ntypes = sizeof fcall_types;

int fcall_type_in_dialect(uint8_t type, enum np_dialect d)
{
	/* The 9P2000 messages (100..127 without Terror) exist everywhere;
	 * everything else in the table is 9P2000.L only. */
	if (type >= 100 && type <= 127)
		return type != NP_TERROR;
	for (size_t i = 0; i < fcall_ntypes; i++)
		if (fcall_types[i] == type)
			return d == NP_9P2000L;
	return 0;
}

#define LONG_LEN 300
#define DATA_LEN 8000

static char long_a[LONG_LEN], long_b[LONG_LEN];
static uint8_t payload[DATA_LEN + 3]; /* Twrite data starts 3 bytes in: unaligned */
static uint8_t dirents[2048];
static uint32_t dirents_len;
static uint8_t dirents_long[4096];
static uint32_t dirents_long_len;

/* Little-endian stores for the hand-built Rreaddir payload: the samples must
 * not depend on the code under test. */
static uint8_t *put_le(uint8_t *p, uint64_t v, int n)
{
	for (int i = 0; i < n; i++)
		*p++ = (uint8_t)(v >> (8 * i));
	return p;
}

static uint8_t *put_dirent(uint8_t *p, uint8_t qtype, uint32_t qvers, uint64_t qpath,
			   uint64_t off, uint8_t dtype, const char *name, size_t nlen)
{
	p = put_le(p, qtype, 1);
	p = put_le(p, qvers, 4);
	p = put_le(p, qpath, 8);
	p = put_le(p, off, 8);
	p = put_le(p, dtype, 1);
	p = put_le(p, nlen, 2);
	memcpy(p, name, nlen);
	return p + nlen;
}

static void init_static(void)
{
	static int done;
	if (done)
		return;
	done = 1;
	for (int i = 0; i < LONG_LEN; i++) {
		long_a[i] = (char)('a' + i % 26);
		long_b[i] = (char)('A' + i % 26);
	}
	for (int i = 0; i < DATA_LEN + 3; i++)
		payload[i] = (uint8_t)(i * 7 + 1); /* includes 0 bytes: payloads are binary */
	uint8_t *p = dirents;
	p = put_dirent(p, NP_QTDIR, 1, 0x1122334455667788ull, 1, 4, ".", 1);
	p = put_dirent(p, NP_QTDIR, 2, 0x0102030405060708ull, 2, 4, "..", 2);
	p = put_dirent(p, NP_QTFILE, 3, 0xfedcba9876543210ull, 0x7fffffffffffffffull, 8,
		       "file.txt", 8);
	dirents_len = (uint32_t)(p - dirents);
	p = dirents_long;
	for (int i = 0; i < 10; i++)
		p = put_dirent(p, (uint8_t)(i & 1 ? NP_QTDIR : NP_QTSYMLINK), 0xffffffffu,
			       UINT64_MAX - (uint64_t)i, UINT64_MAX - 1 - (uint64_t)i, 0xff,
			       long_a, 300);
	dirents_long_len = (uint32_t)(p - dirents_long);
}

static np_str S(const char *s)
{
	return np_str_make(s, (uint16_t)strlen(s));
}

static np_str LA(void)
{
	return np_str_make(long_a, LONG_LEN);
}

static np_str LB(void)
{
	return np_str_make(long_b, LONG_LEN);
}

static np_str E(void)
{
	return np_str_make("", 0);
}

/* A string field that may be empty: typical, long, empty by variant. */
static np_str vs(int v, const char *typical)
{
	return v == 0 ? S(typical) : v == 1 ? LA() : E();
}

/* A name that must not be empty (created/removed entries, walk elements). */
static np_str vname(int v, const char *typical)
{
	return v == 0 ? S(typical) : v == 1 ? LB() : S("x");
}

static uint32_t v32(int v, uint32_t typical)
{
	return v == 0 ? typical : v == 1 ? UINT32_MAX : 0;
}

static uint64_t v64(int v, uint64_t typical)
{
	return v == 0 ? typical : v == 1 ? UINT64_MAX : 0;
}

static uint8_t v8(int v, uint8_t typical)
{
	return v == 0 ? typical : v == 1 ? 0xff : 0;
}

static np_qid vqid(int v, uint8_t type, uint32_t version, uint64_t path)
{
	np_qid q = {v8(v, type), v32(v, version), v64(v, path)};
	return q;
}

static void vstat(int v, np_stat *st)
{
	st->type = (uint16_t)v32(v, 0x0102);
	st->dev = v32(v, 0x03040506);
	st->qid = vqid(v, NP_QTDIR, 0x0708090a, 0x0b0c0d0e0f101112ull);
	st->mode = v32(v, NP_DMDIR | 0755);
	st->atime = v32(v, 0x13141516);
	st->mtime = v32(v, 0x1718191a);
	st->length = v64(v, 0x1b1c1d1e1f202122ull);
	st->name = vs(v, "name");
	st->uid = vs(v, "uid");
	st->gid = vs(v, "gid");
	st->muid = vs(v, "muid");
	st->extension = vs(v, "ext");
	st->n_uid = v32(v, 1000);
	st->n_gid = v32(v, 1001);
	st->n_muid = v32(v, 1002);
}

int fcall_sample(uint8_t type, int v, np_fcall *f)
{
	init_static();
	memset(f, 0, sizeof *f);
	f->type = type;
	f->tag = v == 0 ? 0x1234 : v == 1 ? NP_NOTAG : 0;

	switch (type) {
	case NP_TVERSION:
	case NP_RVERSION:
		f->version.msize = v32(v, 65560);
		f->version.version = vs(v, "9P2000.L");
		break;
	case NP_TAUTH:
		f->tauth.afid = v32(v, 0x01020304);
		f->tauth.uname = vs(v, "glenda");
		f->tauth.aname = vs(v, "/srv");
		f->tauth.n_uname = v32(v, 1000);
		break;
	case NP_RAUTH:
		f->rauth.aqid = vqid(v, NP_QTAUTH, 0x05060708, 0x090a0b0c0d0e0f10ull);
		break;
	case NP_TATTACH:
		f->tattach.fid = v32(v, 0x11121314);
		f->tattach.afid = v == 0 ? NP_NOFID : v32(v, 0);
		f->tattach.uname = vs(v, "root");
		f->tattach.aname = vs(v, "/tmp/export");
		f->tattach.n_uname = v32(v, 0);
		break;
	case NP_RATTACH:
	case NP_RSYMLINK:
	case NP_RMKNOD:
	case NP_RMKDIR:
		f->rqid.qid = vqid(v, type == NP_RSYMLINK ? NP_QTSYMLINK : NP_QTDIR, 0x15161718,
				   0x191a1b1c1d1e1f20ull + type);
		break;
	case NP_RERROR:
		f->rerror.ename = vs(v, "No such file or directory");
		f->rerror.ecode = v32(v, ENOENT);
		break;
	case NP_RLERROR:
		f->rlerror.ecode = v32(v, EACCES);
		break;
	case NP_TFLUSH:
		f->tflush.oldtag = (uint16_t)v32(v, 0x4321);
		break;
	case NP_TWALK:
		f->twalk.fid = v32(v, 0x21222324);
		f->twalk.newfid = v32(v, 0x25262728);
		f->twalk.nwname = v == 0 ? 3 : v == 1 ? NP_MAXWELEM : 0;
		for (int i = 0; i < f->twalk.nwname; i++)
			f->twalk.wname[i] = v == 0 ? S(i == 0 ? "usr" : i == 1 ? ".." : "lib")
						  : (i & 1 ? LA() : LB());
		break;
	case NP_RWALK:
		f->rwalk.nwqid = v == 0 ? 3 : v == 1 ? NP_MAXWELEM : 0;
		for (int i = 0; i < f->rwalk.nwqid; i++)
			f->rwalk.wqid[i] = vqid(v == 1 ? (i & 1) : 0, (uint8_t)(i ? 0 : NP_QTDIR),
						(uint32_t)(0x30 + i), 0x3132333435363738ull + (uint64_t)i);
		break;
	case NP_TOPEN:
		f->topen.fid = v32(v, 0x41424344);
		f->topen.mode = v8(v, NP_ORDWR | NP_OTRUNC);
		break;
	case NP_ROPEN:
	case NP_RCREATE:
	case NP_RLOPEN:
	case NP_RLCREATE:
		f->ropen.qid = vqid(v, NP_QTFILE, 0x45464748, 0x494a4b4c4d4e4f50ull + type);
		f->ropen.iounit = v32(v, 65536 - 24);
		break;
	case NP_TCREATE:
		f->tcreate.fid = v32(v, 0x51525354);
		f->tcreate.name = vname(v, "new.txt");
		f->tcreate.perm = v32(v, NP_DMSYMLINK | 0777);
		f->tcreate.mode = v8(v, NP_OWRITE);
		f->tcreate.extension = vs(v, "/target");
		break;
	case NP_TREAD:
	case NP_TREADDIR:
		f->tread.fid = v32(v, 0x55565758);
		f->tread.offset = v64(v, 0x595a5b5c5d5e5f60ull);
		f->tread.count = v32(v, 8168);
		break;
	case NP_RREAD:
		f->rread.count = v == 0 ? 512 : v == 1 ? DATA_LEN : 0;
		f->rread.data = payload;
		break;
	case NP_RREADDIR:
		f->rread.count = v == 0 ? dirents_len : v == 1 ? dirents_long_len : 0;
		f->rread.data = v == 1 ? dirents_long : dirents;
		break;
	case NP_TWRITE:
		f->twrite.fid = v32(v, 0x61626364);
		f->twrite.offset = v64(v, 0x65666768696a6b6cull);
		f->twrite.count = v == 0 ? 4096 : v == 1 ? DATA_LEN : 0;
		f->twrite.data = payload + 3;
		break;
	case NP_RWRITE:
		f->rwrite.count = v32(v, 4096);
		break;
	case NP_TCLUNK:
	case NP_TREMOVE:
	case NP_TSTAT:
	case NP_TSTATFS:
	case NP_TREADLINK:
		f->tclunk.fid = v32(v, 0x71727374u + type);
		break;
	case NP_RSTAT:
		vstat(v, &f->rstat.stat);
		break;
	case NP_TWSTAT:
		f->twstat.fid = v32(v, 0x75767778);
		vstat(v, &f->twstat.stat);
		break;
	case NP_RSTATFS:
		f->rstatfs.type = v32(v, 0x01021997);
		f->rstatfs.bsize = v32(v, 4096);
		f->rstatfs.blocks = v64(v, 0x8182838485868788ull);
		f->rstatfs.bfree = v64(v, 0x898a8b8c8d8e8f90ull);
		f->rstatfs.bavail = v64(v, 0x9192939495969798ull);
		f->rstatfs.files = v64(v, 0x999a9b9c9d9e9fa0ull);
		f->rstatfs.ffree = v64(v, 0xa1a2a3a4a5a6a7a8ull);
		f->rstatfs.fsid = v64(v, 0xa9aaabacadaeafb0ull);
		f->rstatfs.namelen = v32(v, 255);
		break;
	case NP_TLOPEN:
		f->tlopen.fid = v32(v, 0xb1b2b3b4);
		f->tlopen.flags = v32(v, NP_L_O_RDWR | NP_L_O_LARGEFILE | NP_L_O_NOFOLLOW);
		break;
	case NP_TLCREATE:
		f->tlcreate.fid = v32(v, 0xb5b6b7b8);
		f->tlcreate.name = vname(v, "foo");
		f->tlcreate.flags = v32(v, NP_L_O_CREATE | NP_L_O_WRONLY | NP_L_O_TRUNC);
		f->tlcreate.mode = v32(v, 0100644);
		f->tlcreate.gid = v32(v, 500);
		break;
	case NP_TSYMLINK:
		f->tsymlink.fid = v32(v, 0xb9babbbc);
		f->tsymlink.name = vname(v, "link");
		f->tsymlink.symtgt = vs(v, "../target/file");
		f->tsymlink.gid = v32(v, 501);
		break;
	case NP_TMKNOD:
		f->tmknod.dfid = v32(v, 0xbdbebfc0);
		f->tmknod.name = vname(v, "null");
		f->tmknod.mode = v32(v, 020666);
		f->tmknod.major = v32(v, 1);
		f->tmknod.minor = v32(v, 3);
		f->tmknod.gid = v32(v, 502);
		break;
	case NP_TRENAME:
		f->trename.fid = v32(v, 0xc1c2c3c4);
		f->trename.dfid = v32(v, 0xc5c6c7c8);
		f->trename.name = vname(v, "renamed");
		break;
	case NP_RREADLINK:
		f->rreadlink.target = vs(v, "/tmp/9/newdir");
		break;
	case NP_TGETATTR:
		f->tgetattr.fid = v32(v, 0xc9cacbcc);
		f->tgetattr.request_mask = v64(v, NP_GETATTR_ALL);
		break;
	case NP_RGETATTR:
		f->rgetattr.valid = v64(v, NP_GETATTR_BASIC);
		f->rgetattr.qid = vqid(v, NP_QTFILE, 0xcdcecfd0, 0xd1d2d3d4d5d6d7d8ull);
		f->rgetattr.mode = v32(v, 0100644);
		f->rgetattr.uid = v32(v, 1000);
		f->rgetattr.gid = v32(v, 1001);
		f->rgetattr.nlink = v64(v, 0x0101010101010102ull);
		f->rgetattr.rdev = v64(v, 0x0101010101010103ull);
		f->rgetattr.size = v64(v, 0x0101010101010104ull);
		f->rgetattr.blksize = v64(v, 0x0101010101010105ull);
		f->rgetattr.blocks = v64(v, 0x0101010101010106ull);
		f->rgetattr.atime_sec = v64(v, 0x0101010101010107ull);
		f->rgetattr.atime_nsec = v64(v, 0x0101010101010108ull);
		f->rgetattr.mtime_sec = v64(v, 0x0101010101010109ull);
		f->rgetattr.mtime_nsec = v64(v, 0x010101010101010aull);
		f->rgetattr.ctime_sec = v64(v, 0x010101010101010bull);
		f->rgetattr.ctime_nsec = v64(v, 0x010101010101010cull);
		f->rgetattr.btime_sec = v64(v, 0x010101010101010dull);
		f->rgetattr.btime_nsec = v64(v, 0x010101010101010eull);
		f->rgetattr.gen = v64(v, 0x010101010101010full);
		f->rgetattr.data_version = v64(v, 0x0101010101010110ull);
		break;
	case NP_TSETATTR:
		f->tsetattr.fid = v32(v, 0xd9dadbdc);
		f->tsetattr.valid = v32(v, NP_SETATTR_MODE | NP_SETATTR_MTIME_SET);
		f->tsetattr.mode = v32(v, 0640);
		f->tsetattr.uid = v32(v, 1000);
		f->tsetattr.gid = v32(v, 1001);
		f->tsetattr.size = v64(v, 0x0202020202020201ull);
		f->tsetattr.atime_sec = v64(v, 0x0202020202020202ull);
		f->tsetattr.atime_nsec = v64(v, 0x0202020202020203ull);
		f->tsetattr.mtime_sec = v64(v, 0x0202020202020204ull);
		f->tsetattr.mtime_nsec = v64(v, 0x0202020202020205ull);
		break;
	case NP_TXATTRWALK:
		f->txattrwalk.fid = v32(v, 0xdddedfe0);
		f->txattrwalk.newfid = v32(v, 0xe1e2e3e4);
		f->txattrwalk.name = vs(v, "user.comment");
		break;
	case NP_RXATTRWALK:
		f->rxattrwalk.size = v64(v, 0x0303030303030301ull);
		break;
	case NP_TXATTRCREATE:
		f->txattrcreate.fid = v32(v, 0xe5e6e7e8);
		f->txattrcreate.name = vs(v, "user.comment");
		f->txattrcreate.attr_size = v64(v, 0x0303030303030302ull);
		f->txattrcreate.flags = v32(v, 1);
		break;
	case NP_TFSYNC:
		f->tfsync.fid = v32(v, 0xe9eaebec);
		f->tfsync.datasync = v32(v, 1);
		break;
	case NP_TLOCK:
		f->tlock.fid = v32(v, 0xedeeeff0);
		f->tlock.type = v8(v, NP_LOCK_TYPE_WRLCK);
		f->tlock.flags = v32(v, NP_LOCK_FLAGS_BLOCK);
		f->tlock.start = v64(v, 0x0404040404040401ull);
		f->tlock.length = v64(v, 0x0404040404040402ull);
		f->tlock.proc_id = v32(v, 4242);
		f->tlock.client_id = vs(v, "client.example");
		break;
	case NP_RLOCK:
		f->rlock.status = v8(v, NP_LOCK_BLOCKED);
		break;
	case NP_TGETLOCK:
		f->tgetlock.fid = v32(v, 0xf1f2f3f4);
		f->tgetlock.type = v8(v, NP_LOCK_TYPE_RDLCK);
		f->tgetlock.start = v64(v, 0x0505050505050501ull);
		f->tgetlock.length = v64(v, 0x0505050505050502ull);
		f->tgetlock.proc_id = v32(v, 4343);
		f->tgetlock.client_id = vs(v, "client.example");
		break;
	case NP_RGETLOCK:
		f->rgetlock.type = v8(v, NP_LOCK_TYPE_UNLCK);
		f->rgetlock.start = v64(v, 0x0606060606060601ull);
		f->rgetlock.length = v64(v, 0x0606060606060602ull);
		f->rgetlock.proc_id = v32(v, 4444);
		f->rgetlock.client_id = vs(v, "other.example");
		break;
	case NP_TLINK:
		f->tlink.dfid = v32(v, 0xf5f6f7f8);
		f->tlink.fid = v32(v, 0xf9fafbfc);
		f->tlink.name = vname(v, "hardlink");
		break;
	case NP_TMKDIR:
		f->tmkdir.dfid = v32(v, 0xfdfeff01);
		f->tmkdir.name = vname(v, "newdir");
		f->tmkdir.mode = v32(v, 040755);
		f->tmkdir.gid = v32(v, 503);
		break;
	case NP_TRENAMEAT:
		f->trenameat.olddirfid = v32(v, 0x02030405);
		f->trenameat.oldname = vname(v, "old");
		f->trenameat.newdirfid = v32(v, 0x06070809);
		f->trenameat.newname = v == 1 ? LA() : vname(v, "new");
		break;
	case NP_TUNLINKAT:
		f->tunlinkat.dirfid = v32(v, 0x0a0b0c0d);
		f->tunlinkat.name = vname(v, "gone");
		f->tunlinkat.flags = v32(v, NP_AT_REMOVEDIR);
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
		return -1;
	}
	return 0;
}

/* Golden vectors: hand-written frames decode to the documented fields and
 * re-encode to exactly the same bytes. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "golden_frames.h"
#include "ninep/proto.h"

#define MSIZE 8192

static void assert_str(np_str s, const char *want)
{
	size_t n = strlen(want);
	assert_int_equal(s.len, n);
	if (n)
		assert_memory_equal(s.s, want, n);
}

static void assert_qid(const np_qid *q, uint8_t type, uint32_t version, uint64_t path)
{
	assert_int_equal(q->type, type);
	assert_int_equal(q->version, version);
	assert_int_equal(q->path, path);
}

#define CHECK(fn) static void fn(const np_fcall *f)

CHECK(c_Tversion)
{
	assert_int_equal(f->type, NP_TVERSION);
	assert_int_equal(f->tag, NP_NOTAG);
	assert_int_equal(f->version.msize, 8192);
	assert_str(f->version.version, "9P2000");
}
CHECK(c_Rversion)
{
	assert_int_equal(f->type, NP_RVERSION);
	assert_int_equal(f->tag, NP_NOTAG);
	assert_int_equal(f->version.msize, 8192);
	assert_str(f->version.version, "9P2000");
}
CHECK(c_Tauth)
{
	assert_int_equal(f->type, NP_TAUTH);
	assert_int_equal(f->tag, 1);
	assert_int_equal(f->tauth.afid, 5);
	assert_str(f->tauth.uname, "glenda");
	assert_str(f->tauth.aname, "");
	assert_int_equal(f->tauth.n_uname, NP_NONUNAME); /* not on a 9P2000 wire */
}
CHECK(c_Rauth)
{
	assert_int_equal(f->type, NP_RAUTH);
	assert_qid(&f->rauth.aqid, NP_QTAUTH, 0, 1);
}
CHECK(c_Tattach)
{
	assert_int_equal(f->type, NP_TATTACH);
	assert_int_equal(f->tattach.fid, 0);
	assert_int_equal(f->tattach.afid, NP_NOFID);
	assert_str(f->tattach.uname, "glenda");
	assert_str(f->tattach.aname, "");
	assert_int_equal(f->tattach.n_uname, NP_NONUNAME);
}
CHECK(c_Rattach)
{
	assert_int_equal(f->type, NP_RATTACH);
	assert_int_equal(f->tag, 1);
	assert_qid(&f->rattach.qid, NP_QTDIR, 0, 0x2c1fac);
}
CHECK(c_Rerror)
{
	assert_int_equal(f->type, NP_RERROR);
	assert_int_equal(f->tag, 2);
	assert_str(f->rerror.ename, "file does not exist");
	assert_int_equal(f->rerror.ecode, 0);
}
CHECK(c_Tflush)
{
	assert_int_equal(f->type, NP_TFLUSH);
	assert_int_equal(f->tag, 4);
	assert_int_equal(f->tflush.oldtag, 3);
}
CHECK(c_Rflush)
{
	assert_int_equal(f->type, NP_RFLUSH);
	assert_int_equal(f->tag, 4);
}
CHECK(c_Twalk)
{
	assert_int_equal(f->type, NP_TWALK);
	assert_int_equal(f->tag, 3);
	assert_int_equal(f->twalk.fid, 1);
	assert_int_equal(f->twalk.newfid, 2);
	assert_int_equal(f->twalk.nwname, 2);
	assert_str(f->twalk.wname[0], "usr");
	assert_str(f->twalk.wname[1], "lib");
}
CHECK(c_Twalk_clone)
{
	assert_int_equal(f->type, NP_TWALK);
	assert_int_equal(f->tag, 5);
	assert_int_equal(f->twalk.fid, 1);
	assert_int_equal(f->twalk.newfid, 2);
	assert_int_equal(f->twalk.nwname, 0);
}
CHECK(c_Rwalk)
{
	assert_int_equal(f->type, NP_RWALK);
	assert_int_equal(f->rwalk.nwqid, 2);
	assert_qid(&f->rwalk.wqid[0], NP_QTDIR, 1, 0x10);
	assert_qid(&f->rwalk.wqid[1], NP_QTFILE, 7, 0x11);
}
CHECK(c_Topen)
{
	assert_int_equal(f->type, NP_TOPEN);
	assert_int_equal(f->tag, 5);
	assert_int_equal(f->topen.fid, 2);
	assert_int_equal(f->topen.mode, NP_OWRITE | NP_OTRUNC);
}
CHECK(c_Ropen)
{
	assert_int_equal(f->type, NP_ROPEN);
	assert_qid(&f->ropen.qid, NP_QTFILE, 3, 0x11);
	assert_int_equal(f->ropen.iounit, 8168);
}
CHECK(c_Tcreate)
{
	assert_int_equal(f->type, NP_TCREATE);
	assert_int_equal(f->tag, 6);
	assert_int_equal(f->tcreate.fid, 2);
	assert_str(f->tcreate.name, "new");
	assert_int_equal(f->tcreate.perm, 0644);
	assert_int_equal(f->tcreate.mode, NP_ORDWR);
	assert_int_equal(f->tcreate.extension.len, 0);
}
CHECK(c_Rcreate)
{
	assert_int_equal(f->type, NP_RCREATE);
	assert_qid(&f->ropen.qid, NP_QTFILE, 0, 0x12);
	assert_int_equal(f->ropen.iounit, 0);
}
CHECK(c_Tread)
{
	assert_int_equal(f->type, NP_TREAD);
	assert_int_equal(f->tag, 7);
	assert_int_equal(f->tread.fid, 2);
	assert_int_equal(f->tread.offset, 0x100000000ull);
	assert_int_equal(f->tread.count, 8168);
}
CHECK(c_Rread)
{
	assert_int_equal(f->type, NP_RREAD);
	assert_int_equal(f->rread.count, 6);
	assert_memory_equal(f->rread.data, "hello\n", 6);
}
CHECK(c_Rread_eof)
{
	assert_int_equal(f->type, NP_RREAD);
	assert_int_equal(f->rread.count, 0);
}
CHECK(c_Twrite)
{
	assert_int_equal(f->type, NP_TWRITE);
	assert_int_equal(f->tag, 8);
	assert_int_equal(f->twrite.fid, 2);
	assert_int_equal(f->twrite.offset, 0);
	assert_int_equal(f->twrite.count, 6);
	assert_memory_equal(f->twrite.data, "hello\n", 6);
}
CHECK(c_Rwrite)
{
	assert_int_equal(f->type, NP_RWRITE);
	assert_int_equal(f->rwrite.count, 6);
}
CHECK(c_Tclunk)
{
	assert_int_equal(f->type, NP_TCLUNK);
	assert_int_equal(f->tag, 9);
	assert_int_equal(f->tclunk.fid, 2);
}
CHECK(c_Rclunk)
{
	assert_int_equal(f->type, NP_RCLUNK);
	assert_int_equal(f->tag, 9);
}
CHECK(c_Tremove)
{
	assert_int_equal(f->type, NP_TREMOVE);
	assert_int_equal(f->tclunk.fid, 3);
}
CHECK(c_Rremove)
{
	assert_int_equal(f->type, NP_RREMOVE);
	assert_int_equal(f->tag, 10);
}
CHECK(c_Tstat)
{
	assert_int_equal(f->type, NP_TSTAT);
	assert_int_equal(f->tclunk.fid, 1);
}
CHECK(c_Rstat)
{
	const np_stat *st = &f->rstat.stat;
	assert_int_equal(f->type, NP_RSTAT);
	assert_int_equal(f->tag, 11);
	assert_int_equal(st->type, 0);
	assert_int_equal(st->dev, 0);
	assert_qid(&st->qid, NP_QTDIR, 0, 1);
	assert_int_equal(st->mode, NP_DMDIR | 0775);
	assert_int_equal(st->atime, 0x5f5e1000);
	assert_int_equal(st->mtime, 0x5f5e0fff);
	assert_int_equal(st->length, 0);
	assert_str(st->name, "/");
	assert_str(st->uid, "sys");
	assert_str(st->gid, "sys");
	assert_str(st->muid, "sys");
	assert_int_equal(st->extension.len, 0);
	assert_int_equal(st->n_uid, NP_NONUNAME);
}
CHECK(c_Twstat)
{
	const np_stat *st = &f->twstat.stat;
	assert_int_equal(f->type, NP_TWSTAT);
	assert_int_equal(f->twstat.fid, 4);
	assert_int_equal(st->type, 0xffff);
	assert_int_equal(st->dev, 0xffffffffu);
	assert_qid(&st->qid, 0xff, 0xffffffffu, UINT64_MAX);
	assert_int_equal(st->mode, 0xffffffffu);
	assert_int_equal(st->atime, 0xffffffffu);
	assert_int_equal(st->mtime, 0xffffffffu);
	assert_int_equal(st->length, UINT64_MAX);
	assert_str(st->name, "b");
	assert_str(st->uid, "");
	assert_str(st->gid, "");
	assert_str(st->muid, "");
}
CHECK(c_Rwstat)
{
	assert_int_equal(f->type, NP_RWSTAT);
	assert_int_equal(f->tag, 12);
}
CHECK(c_Tauth_u)
{
	assert_int_equal(f->type, NP_TAUTH);
	assert_int_equal(f->tauth.afid, 7);
	assert_str(f->tauth.uname, "");
	assert_str(f->tauth.aname, "");
	assert_int_equal(f->tauth.n_uname, 0);
}
CHECK(c_Tattach_u)
{
	assert_int_equal(f->type, NP_TATTACH);
	assert_int_equal(f->tattach.fid, 0);
	assert_int_equal(f->tattach.afid, NP_NOFID);
	assert_str(f->tattach.uname, "");
	assert_str(f->tattach.aname, "/srv");
	assert_int_equal(f->tattach.n_uname, 1000);
}
CHECK(c_Rerror_u)
{
	assert_int_equal(f->type, NP_RERROR);
	assert_str(f->rerror.ename, "No such file or directory");
	assert_int_equal(f->rerror.ecode, 2);
}
CHECK(c_Tcreate_u)
{
	assert_int_equal(f->type, NP_TCREATE);
	assert_int_equal(f->tcreate.fid, 2);
	assert_str(f->tcreate.name, "lnk");
	assert_int_equal(f->tcreate.perm, NP_DMSYMLINK | 0777);
	assert_int_equal(f->tcreate.mode, NP_OREAD);
	assert_str(f->tcreate.extension, "target");
}
CHECK(c_Rstat_u)
{
	const np_stat *st = &f->rstat.stat;
	assert_int_equal(f->type, NP_RSTAT);
	assert_int_equal(f->tag, 13);
	assert_qid(&st->qid, NP_QTFILE, 1, 0x20);
	assert_int_equal(st->mode, 0644);
	assert_int_equal(st->atime, 1);
	assert_int_equal(st->mtime, 2);
	assert_int_equal(st->length, 5);
	assert_str(st->name, "f");
	assert_str(st->uid, "u");
	assert_str(st->gid, "g");
	assert_str(st->muid, "");
	assert_str(st->extension, "");
	assert_int_equal(st->n_uid, 1000);
	assert_int_equal(st->n_gid, 1001);
	assert_int_equal(st->n_muid, 0);
}
CHECK(c_Tversion_L)
{
	assert_int_equal(f->type, NP_TVERSION);
	assert_int_equal(f->version.msize, 65560);
	assert_str(f->version.version, "9P2000.L");
}
CHECK(c_Tattach_L)
{
	assert_int_equal(f->type, NP_TATTACH);
	assert_int_equal(f->tattach.fid, 1);
	assert_int_equal(f->tattach.afid, NP_NOFID);
	assert_str(f->tattach.uname, "");
	assert_str(f->tattach.aname, "/tmp/9");
	assert_int_equal(f->tattach.n_uname, 500);
}
CHECK(c_Rlerror)
{
	assert_int_equal(f->type, NP_RLERROR);
	assert_int_equal(f->tag, 1);
	assert_int_equal(f->rlerror.ecode, 2);
}
CHECK(c_Tstatfs)
{
	assert_int_equal(f->type, NP_TSTATFS);
	assert_int_equal(f->tclunk.fid, 0);
}
CHECK(c_Rstatfs)
{
	assert_int_equal(f->type, NP_RSTATFS);
	assert_int_equal(f->rstatfs.type, 0x01021997);
	assert_int_equal(f->rstatfs.bsize, 4096);
	assert_int_equal(f->rstatfs.blocks, 1000);
	assert_int_equal(f->rstatfs.bfree, 500);
	assert_int_equal(f->rstatfs.bavail, 400);
	assert_int_equal(f->rstatfs.files, 100);
	assert_int_equal(f->rstatfs.ffree, 50);
	assert_int_equal(f->rstatfs.fsid, 0x1234);
	assert_int_equal(f->rstatfs.namelen, 255);
}
CHECK(c_Tlopen)
{
	assert_int_equal(f->type, NP_TLOPEN);
	assert_int_equal(f->tlopen.fid, 2);
	assert_int_equal(f->tlopen.flags, NP_L_O_RDONLY | NP_L_O_NONBLOCK | NP_L_O_LARGEFILE |
						  NP_L_O_DIRECTORY | NP_L_O_CLOEXEC);
}
CHECK(c_Rlopen)
{
	assert_int_equal(f->type, NP_RLOPEN);
	assert_qid(&f->ropen.qid, NP_QTDIR, 0, 0x2c1fac);
	assert_int_equal(f->ropen.iounit, 0);
}
CHECK(c_Tlcreate)
{
	assert_int_equal(f->type, NP_TLCREATE);
	assert_int_equal(f->tlcreate.fid, 2);
	assert_str(f->tlcreate.name, "foo");
	assert_int_equal(f->tlcreate.flags, 0x8241);
	assert_int_equal(f->tlcreate.mode, 0100644);
	assert_int_equal(f->tlcreate.gid, 500);
}
CHECK(c_Rlcreate)
{
	assert_int_equal(f->type, NP_RLCREATE);
	assert_qid(&f->ropen.qid, NP_QTFILE, 0, 0x2c1bd1);
	assert_int_equal(f->ropen.iounit, 4096);
}
CHECK(c_Tsymlink)
{
	assert_int_equal(f->type, NP_TSYMLINK);
	assert_int_equal(f->tsymlink.fid, 1);
	assert_str(f->tsymlink.name, "newsymlink");
	assert_str(f->tsymlink.symtgt, "/tmp/9/newdir");
	assert_int_equal(f->tsymlink.gid, 500);
}
CHECK(c_Rsymlink)
{
	assert_int_equal(f->type, NP_RSYMLINK);
	assert_qid(&f->rqid.qid, NP_QTSYMLINK, 0, 0x2c1de3);
}
CHECK(c_Tmknod)
{
	assert_int_equal(f->type, NP_TMKNOD);
	assert_int_equal(f->tmknod.dfid, 1);
	assert_str(f->tmknod.name, "null");
	assert_int_equal(f->tmknod.mode, 020666);
	assert_int_equal(f->tmknod.major, 1);
	assert_int_equal(f->tmknod.minor, 3);
	assert_int_equal(f->tmknod.gid, 0);
}
CHECK(c_Trename)
{
	assert_int_equal(f->type, NP_TRENAME);
	assert_int_equal(f->trename.fid, 3);
	assert_int_equal(f->trename.dfid, 1);
	assert_str(f->trename.name, "b");
}
CHECK(c_Rrename)
{
	assert_int_equal(f->type, NP_RRENAME);
}
CHECK(c_Treadlink)
{
	assert_int_equal(f->type, NP_TREADLINK);
	assert_int_equal(f->tclunk.fid, 4);
}
CHECK(c_Rreadlink)
{
	assert_int_equal(f->type, NP_RREADLINK);
	assert_str(f->rreadlink.target, "/tmp/9/newdir");
}
CHECK(c_Tgetattr)
{
	assert_int_equal(f->type, NP_TGETATTR);
	assert_int_equal(f->tgetattr.fid, 0);
	assert_int_equal(f->tgetattr.request_mask, NP_GETATTR_BASIC);
}
CHECK(c_Rgetattr)
{
	assert_int_equal(f->type, NP_RGETATTR);
	assert_int_equal(f->rgetattr.valid, NP_GETATTR_BASIC);
	assert_qid(&f->rgetattr.qid, NP_QTDIR, 0, 0x2c1fac);
	assert_int_equal(f->rgetattr.mode, 040755);
	assert_int_equal(f->rgetattr.uid, 500);
	assert_int_equal(f->rgetattr.gid, 500);
	assert_int_equal(f->rgetattr.nlink, 56);
	assert_int_equal(f->rgetattr.rdev, 0);
	assert_int_equal(f->rgetattr.size, 4096);
	assert_int_equal(f->rgetattr.blksize, 4096);
	assert_int_equal(f->rgetattr.blocks, 8);
	assert_int_equal(f->rgetattr.atime_sec, 0x4d4c2e0e);
	assert_int_equal(f->rgetattr.atime_nsec, 1);
	assert_int_equal(f->rgetattr.mtime_sec, 0x4d4c2b33);
	assert_int_equal(f->rgetattr.mtime_nsec, 2);
	assert_int_equal(f->rgetattr.ctime_sec, 0x4d4fb808);
	assert_int_equal(f->rgetattr.ctime_nsec, 3);
	assert_int_equal(f->rgetattr.btime_sec, 0);
	assert_int_equal(f->rgetattr.btime_nsec, 0);
	assert_int_equal(f->rgetattr.gen, 10);
	assert_int_equal(f->rgetattr.data_version, 11);
}
CHECK(c_Tsetattr)
{
	assert_int_equal(f->type, NP_TSETATTR);
	assert_int_equal(f->tsetattr.fid, 2);
	assert_int_equal(f->tsetattr.valid,
			 NP_SETATTR_SIZE | NP_SETATTR_MTIME | NP_SETATTR_MTIME_SET);
	assert_int_equal(f->tsetattr.mode, 0);
	assert_int_equal(f->tsetattr.uid, 0);
	assert_int_equal(f->tsetattr.gid, 0);
	assert_int_equal(f->tsetattr.size, 6);
	assert_int_equal(f->tsetattr.atime_sec, 0);
	assert_int_equal(f->tsetattr.atime_nsec, 0);
	assert_int_equal(f->tsetattr.mtime_sec, 0x4d4fb808);
	assert_int_equal(f->tsetattr.mtime_nsec, 500000000);
}
CHECK(c_Rsetattr)
{
	assert_int_equal(f->type, NP_RSETATTR);
}
CHECK(c_Txattrwalk)
{
	assert_int_equal(f->type, NP_TXATTRWALK);
	assert_int_equal(f->txattrwalk.fid, 1);
	assert_int_equal(f->txattrwalk.newfid, 5);
	assert_str(f->txattrwalk.name, "user.foo");
}
CHECK(c_Rxattrwalk)
{
	assert_int_equal(f->type, NP_RXATTRWALK);
	assert_int_equal(f->rxattrwalk.size, 3);
}
CHECK(c_Txattrcreate)
{
	assert_int_equal(f->type, NP_TXATTRCREATE);
	assert_int_equal(f->txattrcreate.fid, 5);
	assert_str(f->txattrcreate.name, "user.foo");
	assert_int_equal(f->txattrcreate.attr_size, 3);
	assert_int_equal(f->txattrcreate.flags, 1);
}
CHECK(c_Treaddir)
{
	assert_int_equal(f->type, NP_TREADDIR);
	assert_int_equal(f->tread.fid, 2);
	assert_int_equal(f->tread.offset, 0);
	assert_int_equal(f->tread.count, 65488);
}
CHECK(c_Rreaddir)
{
	np_dirent de;
	uint32_t pos = 0;
	assert_int_equal(f->type, NP_RREADDIR);
	assert_int_equal(f->rread.count, 51);
	assert_int_equal(np_dirent_next(f->rread.data, f->rread.count, &pos, &de), 1);
	assert_qid(&de.qid, NP_QTDIR, 0, 0x2c1fac);
	assert_int_equal(de.offset, 1);
	assert_int_equal(de.type, 4);
	assert_str(de.name, ".");
	assert_int_equal(pos, 25);
	assert_int_equal(np_dirent_next(f->rread.data, f->rread.count, &pos, &de), 1);
	assert_qid(&de.qid, NP_QTDIR, 0, 0x2c1d00);
	assert_int_equal(de.offset, 2);
	assert_int_equal(de.type, 4);
	assert_str(de.name, "..");
	assert_int_equal(pos, 51);
	assert_int_equal(np_dirent_next(f->rread.data, f->rread.count, &pos, &de), 0);
}
CHECK(c_Tfsync)
{
	assert_int_equal(f->type, NP_TFSYNC);
	assert_int_equal(f->tfsync.fid, 2);
	assert_int_equal(f->tfsync.datasync, 1);
}
CHECK(c_Tlock)
{
	assert_int_equal(f->type, NP_TLOCK);
	assert_int_equal(f->tlock.fid, 2);
	assert_int_equal(f->tlock.type, NP_LOCK_TYPE_WRLCK);
	assert_int_equal(f->tlock.flags, NP_LOCK_FLAGS_BLOCK);
	assert_int_equal(f->tlock.start, 0x1000);
	assert_int_equal(f->tlock.length, 0x200);
	assert_int_equal(f->tlock.proc_id, 1234);
	assert_str(f->tlock.client_id, "host");
}
CHECK(c_Rlock)
{
	assert_int_equal(f->type, NP_RLOCK);
	assert_int_equal(f->rlock.status, NP_LOCK_BLOCKED);
}
CHECK(c_Tgetlock)
{
	assert_int_equal(f->type, NP_TGETLOCK);
	assert_int_equal(f->tgetlock.fid, 2);
	assert_int_equal(f->tgetlock.type, NP_LOCK_TYPE_RDLCK);
	assert_int_equal(f->tgetlock.start, 10);
	assert_int_equal(f->tgetlock.length, 20);
	assert_int_equal(f->tgetlock.proc_id, 99);
	assert_str(f->tgetlock.client_id, "");
}
CHECK(c_Rgetlock)
{
	assert_int_equal(f->type, NP_RGETLOCK);
	assert_int_equal(f->rgetlock.type, NP_LOCK_TYPE_UNLCK);
	assert_int_equal(f->rgetlock.start, 10);
	assert_int_equal(f->rgetlock.length, 20);
	assert_int_equal(f->rgetlock.proc_id, 0);
	assert_str(f->rgetlock.client_id, "");
}
CHECK(c_Tlink)
{
	assert_int_equal(f->type, NP_TLINK);
	assert_int_equal(f->tlink.dfid, 1);
	assert_int_equal(f->tlink.fid, 3);
	assert_str(f->tlink.name, "hard");
}
CHECK(c_Rlink)
{
	assert_int_equal(f->type, NP_RLINK);
}
CHECK(c_Tmkdir)
{
	assert_int_equal(f->type, NP_TMKDIR);
	assert_int_equal(f->tmkdir.dfid, 1);
	assert_str(f->tmkdir.name, "newdir");
	assert_int_equal(f->tmkdir.mode, 040755);
	assert_int_equal(f->tmkdir.gid, 500);
}
CHECK(c_Rmkdir)
{
	assert_int_equal(f->type, NP_RMKDIR);
	assert_qid(&f->rqid.qid, NP_QTDIR, 0, 0x2c1bd1);
}
CHECK(c_Trenameat)
{
	assert_int_equal(f->type, NP_TRENAMEAT);
	assert_int_equal(f->trenameat.olddirfid, 1);
	assert_str(f->trenameat.oldname, "a");
	assert_int_equal(f->trenameat.newdirfid, 2);
	assert_str(f->trenameat.newname, "b");
}
CHECK(c_Tunlinkat)
{
	assert_int_equal(f->type, NP_TUNLINKAT);
	assert_int_equal(f->tunlinkat.dirfid, 1);
	assert_str(f->tunlinkat.name, "newdir");
	assert_int_equal(f->tunlinkat.flags, NP_AT_REMOVEDIR);
}
CHECK(c_Runlinkat)
{
	assert_int_equal(f->type, NP_RUNLINKAT);
}

static const struct {
	const char *name;
	void (*check)(const np_fcall *f);
} checks[] = {
	{"Tversion", c_Tversion}, {"Rversion", c_Rversion}, {"Tauth", c_Tauth},
	{"Rauth", c_Rauth}, {"Tattach", c_Tattach}, {"Rattach", c_Rattach},
	{"Rerror", c_Rerror}, {"Tflush", c_Tflush}, {"Rflush", c_Rflush},
	{"Twalk", c_Twalk}, {"Twalk.clone", c_Twalk_clone}, {"Rwalk", c_Rwalk},
	{"Topen", c_Topen}, {"Ropen", c_Ropen}, {"Tcreate", c_Tcreate},
	{"Rcreate", c_Rcreate}, {"Tread", c_Tread}, {"Rread", c_Rread},
	{"Rread.eof", c_Rread_eof}, {"Twrite", c_Twrite}, {"Rwrite", c_Rwrite},
	{"Tclunk", c_Tclunk}, {"Rclunk", c_Rclunk}, {"Tremove", c_Tremove},
	{"Rremove", c_Rremove}, {"Tstat", c_Tstat}, {"Rstat", c_Rstat},
	{"Twstat", c_Twstat}, {"Rwstat", c_Rwstat}, {"Tauth.u", c_Tauth_u},
	{"Tattach.u", c_Tattach_u}, {"Rerror.u", c_Rerror_u}, {"Tcreate.u", c_Tcreate_u},
	{"Rstat.u", c_Rstat_u}, {"Tversion.L", c_Tversion_L}, {"Tattach.L", c_Tattach_L},
	{"Rlerror", c_Rlerror}, {"Tstatfs", c_Tstatfs}, {"Rstatfs", c_Rstatfs},
	{"Tlopen", c_Tlopen}, {"Rlopen", c_Rlopen}, {"Tlcreate", c_Tlcreate},
	{"Rlcreate", c_Rlcreate}, {"Tsymlink", c_Tsymlink}, {"Rsymlink", c_Rsymlink},
	{"Tmknod", c_Tmknod}, {"Trename", c_Trename}, {"Rrename", c_Rrename},
	{"Treadlink", c_Treadlink}, {"Rreadlink", c_Rreadlink}, {"Tgetattr", c_Tgetattr},
	{"Rgetattr", c_Rgetattr}, {"Tsetattr", c_Tsetattr}, {"Rsetattr", c_Rsetattr},
	{"Txattrwalk", c_Txattrwalk}, {"Rxattrwalk", c_Rxattrwalk},
	{"Txattrcreate", c_Txattrcreate}, {"Treaddir", c_Treaddir},
	{"Rreaddir", c_Rreaddir}, {"Tfsync", c_Tfsync}, {"Tlock", c_Tlock},
	{"Rlock", c_Rlock}, {"Tgetlock", c_Tgetlock}, {"Rgetlock", c_Rgetlock},
	{"Tlink", c_Tlink}, {"Rlink", c_Rlink}, {"Tmkdir", c_Tmkdir}, {"Rmkdir", c_Rmkdir},
	{"Trenameat", c_Trenameat}, {"Tunlinkat", c_Tunlinkat}, {"Runlinkat", c_Runlinkat},
};
#define NCHECKS (sizeof checks / sizeof checks[0])

/* Every frame has exactly one check and the set is large enough. */
static void test_golden_table(void **state)
{
	(void)state;
	assert_true(golden_nframes >= 30);
	assert_int_equal(golden_nframes, NCHECKS);
	for (size_t i = 0; i < NCHECKS; i++)
		assert_non_null(golden_find(checks[i].name));
	for (size_t i = 0; i < golden_nframes; i++) {
		const struct golden_frame *g = &golden_frames[i];
		/* the vector's own size field must match its length */
		assert_int_equal(np_frame_size(g->bytes), g->len);
		assert_true(golden_find(g->name) == g); /* names are unique */
	}
}

/* Decode, check the fields, re-encode byte for byte.  state: index in checks. */
static void test_golden_frame(void **state)
{
	size_t i = (size_t)(uintptr_t)*state;
	const struct golden_frame *g = golden_find(checks[i].name);
	np_fcall f;
	np_decode_error e = {0};
	uint8_t out[512];
	assert_non_null(g);
	int r = np_decode(g->bytes, g->len, g->dialect, MSIZE, &f, &e);
	if (r != 0)
		fail_msg("%s: decode failed: %d field %s offset %u", g->name, r,
			 e.field ? e.field : "?", e.offset);
	checks[i].check(&f);
	assert_int_equal(np_fcall_size(&f, g->dialect), g->len);
	r = np_encode(&f, g->dialect, out, sizeof out);
	assert_int_equal(r, g->len);
	assert_memory_equal(out, g->bytes, g->len);
}

/* A frame of one dialect read as another either fails or, where the layouts
 * coincide, yields the same bytes again: .u fields never appear from nowhere. */
static void test_golden_other_dialects(void **state)
{
	(void)state;
	static const char *const only_dotu[] = {"Tauth.u", "Tattach.u", "Rerror.u",
						"Tcreate.u", "Rstat.u", "Tattach.L"};
	static const char *const only_plain[] = {"Tauth", "Tattach", "Rerror", "Tcreate",
						 "Rstat", "Twstat"};
	np_fcall f;
	for (size_t i = 0; i < sizeof only_dotu / sizeof only_dotu[0]; i++) {
		const struct golden_frame *g = golden_find(only_dotu[i]);
		assert_int_not_equal(np_decode(g->bytes, g->len, NP_9P2000, MSIZE, &f, NULL), 0);
	}
	for (size_t i = 0; i < sizeof only_plain / sizeof only_plain[0]; i++) {
		const struct golden_frame *g = golden_find(only_plain[i]);
		assert_int_not_equal(np_decode(g->bytes, g->len, NP_9P2000U, MSIZE, &f, NULL), 0);
		assert_int_not_equal(np_decode(g->bytes, g->len, NP_9P2000L, MSIZE, &f, NULL), 0);
	}
}

int main(void)
{
	static struct CMUnitTest tests[NCHECKS + 2];
	size_t n = 0;
	tests[n++] = (struct CMUnitTest)cmocka_unit_test(test_golden_table);
	tests[n++] = (struct CMUnitTest)cmocka_unit_test(test_golden_other_dialects);
	for (size_t i = 0; i < NCHECKS; i++) {
		tests[n].name = checks[i].name;
		tests[n].test_func = test_golden_frame;
		tests[n].initial_state = (void *)(uintptr_t)i;
		n++;
	}
	return _cmocka_run_group_tests("golden", tests, n, NULL, NULL);
}

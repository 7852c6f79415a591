/* Seeds for the server-session targets (fuzz_server.c): valid sessions that
 * reach every operation, in each dialect, so that mutations start deep in
 * the server rather than at Tversion.  Each seed is the header byte of
 * fuzz_server.c and the frames, encoded by the codec, with distinct tags
 * (a tag reused while in flight ends the session). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gen_corpus.h"
#include "ninep/proto.h"

/* fuzz_server.c header bits */
#define H_AUTO_L 3        /* the target sends Tversion 9P2000.L itself */
#define H_MSIZE_4096 (2 << 2)
#define H_RAW 0x10
#define H_RAMFS_NOPERM (1 << 5)
#define H_RAMFS_LIMITS (2 << 5)
#define H_RAMFS_ROOT1000 (4 << 5)

#define ALLBITS32 0xFFFFFFFFu

struct script {
	uint8_t buf[1 << 16];
	size_t len;
	enum np_dialect d;
	uint16_t tag;
};

static void start(struct script *s, uint8_t hdr, enum np_dialect d)
{
	s->buf[0] = hdr;
	s->len = 1;
	s->d = d;
	s->tag = 1;
}

/* Append f with the next tag (Tversion: NOTAG); returns the tag. */
static uint16_t add(struct script *s, np_fcall *f)
{
	f->tag = f->type == NP_TVERSION ? NP_NOTAG : s->tag++;
	int n = np_encode(f, s->d, s->buf + s->len, sizeof s->buf - s->len);
	if (n < 0) {
		fprintf(stderr, "seed: cannot encode %s: %d\n", np_type_name(f->type), n);
		exit(1);
	}
	s->len += (size_t)n;
	return f->tag;
}

static void finish(struct script *s, const char *name)
{
	char full[128];
	snprintf(full, sizeof full, "%s-%s", name,
		 s->d == NP_9P2000L ? "L" : s->d == NP_9P2000U ? "u" : "9p2000");
	seed_emit(full, s->buf, s->len);
}

/* ---- one helper per message ---- */

static void version(struct script *s, uint32_t msize, const char *v)
{
	np_fcall f = {.type = NP_TVERSION};
	f.version.msize = msize;
	f.version.version = np_strz(v);
	add(s, &f);
}

static void attach(struct script *s, uint32_t fid, const char *uname, uint32_t n_uname)
{
	np_fcall f = {.type = NP_TATTACH};
	f.tattach.fid = fid;
	f.tattach.afid = NP_NOFID;
	f.tattach.uname = np_strz(uname);
	f.tattach.aname = np_strz("");
	f.tattach.n_uname = n_uname;
	add(s, &f);
}

static void walk(struct script *s, uint32_t fid, uint32_t newfid, int n, const char *const *names)
{
	np_fcall f = {.type = NP_TWALK};
	f.twalk.fid = fid;
	f.twalk.newfid = newfid;
	f.twalk.nwname = (uint16_t)n;
	for (int i = 0; i < n; i++)
		f.twalk.wname[i] = np_strz(names[i]);
	add(s, &f);
}
#define WALK(s, fid, newfid, ...) \
	walk(s, fid, newfid, (int)(sizeof((const char *const[]){__VA_ARGS__}) / sizeof(char *)), \
	     (const char *const[]){__VA_ARGS__})

static void fidop(struct script *s, uint8_t type, uint32_t fid)
{
	np_fcall f = {.type = type};
	f.tclunk.fid = fid; /* Tclunk, Tremove, Tstat, Tstatfs, Treadlink */
	add(s, &f);
}

static void lopen(struct script *s, uint32_t fid, uint32_t flags)
{
	np_fcall f = {.type = NP_TLOPEN};
	f.tlopen.fid = fid;
	f.tlopen.flags = flags;
	add(s, &f);
}

static void lcreate(struct script *s, uint32_t fid, const char *name, uint32_t flags, uint32_t mode)
{
	np_fcall f = {.type = NP_TLCREATE};
	f.tlcreate.fid = fid;
	f.tlcreate.name = np_strz(name);
	f.tlcreate.flags = flags;
	f.tlcreate.mode = mode;
	add(s, &f);
}

static uint16_t rd(struct script *s, uint8_t type, uint32_t fid, uint64_t off, uint32_t count)
{
	np_fcall f = {.type = type}; /* Tread or Treaddir */
	f.tread.fid = fid;
	f.tread.offset = off;
	f.tread.count = count;
	return add(s, &f);
}

static void wr(struct script *s, uint32_t fid, uint64_t off, const char *data)
{
	np_fcall f = {.type = NP_TWRITE};
	f.twrite.fid = fid;
	f.twrite.offset = off;
	f.twrite.count = (uint32_t)strlen(data);
	f.twrite.data = (const uint8_t *)data;
	add(s, &f);
}

static void getattr(struct script *s, uint32_t fid)
{
	np_fcall f = {.type = NP_TGETATTR};
	f.tgetattr.fid = fid;
	f.tgetattr.request_mask = NP_GETATTR_ALL;
	add(s, &f);
}

static void setattr(struct script *s, uint32_t fid, uint32_t valid, uint32_t mode, uint64_t size)
{
	np_fcall f = {.type = NP_TSETATTR};
	f.tsetattr.fid = fid;
	f.tsetattr.valid = valid;
	f.tsetattr.mode = mode;
	f.tsetattr.uid = 1000;
	f.tsetattr.gid = 1000;
	f.tsetattr.size = size;
	f.tsetattr.atime_sec = 1000000000;
	f.tsetattr.mtime_sec = 1000000000;
	add(s, &f);
}

static void mkdir_(struct script *s, uint32_t dfid, const char *name, uint32_t mode)
{
	np_fcall f = {.type = NP_TMKDIR};
	f.tmkdir.dfid = dfid;
	f.tmkdir.name = np_strz(name);
	f.tmkdir.mode = mode;
	add(s, &f);
}

static void symlink_(struct script *s, uint32_t dfid, const char *name, const char *target)
{
	np_fcall f = {.type = NP_TSYMLINK};
	f.tsymlink.fid = dfid;
	f.tsymlink.name = np_strz(name);
	f.tsymlink.symtgt = np_strz(target);
	add(s, &f);
}

static void mknod_(struct script *s, uint32_t dfid, const char *name, uint32_t mode, uint32_t major,
		   uint32_t minor)
{
	np_fcall f = {.type = NP_TMKNOD};
	f.tmknod.dfid = dfid;
	f.tmknod.name = np_strz(name);
	f.tmknod.mode = mode;
	f.tmknod.major = major;
	f.tmknod.minor = minor;
	add(s, &f);
}

static void link_(struct script *s, uint32_t dfid, uint32_t fid, const char *name)
{
	np_fcall f = {.type = NP_TLINK};
	f.tlink.dfid = dfid;
	f.tlink.fid = fid;
	f.tlink.name = np_strz(name);
	add(s, &f);
}

static void renameat_(struct script *s, uint32_t od, const char *on, uint32_t nd, const char *nn)
{
	np_fcall f = {.type = NP_TRENAMEAT};
	f.trenameat.olddirfid = od;
	f.trenameat.oldname = np_strz(on);
	f.trenameat.newdirfid = nd;
	f.trenameat.newname = np_strz(nn);
	add(s, &f);
}

static void rename_(struct script *s, uint32_t fid, uint32_t dfid, const char *name)
{
	np_fcall f = {.type = NP_TRENAME};
	f.trename.fid = fid;
	f.trename.dfid = dfid;
	f.trename.name = np_strz(name);
	add(s, &f);
}

static void unlinkat_(struct script *s, uint32_t dfid, const char *name, uint32_t flags)
{
	np_fcall f = {.type = NP_TUNLINKAT};
	f.tunlinkat.dirfid = dfid;
	f.tunlinkat.name = np_strz(name);
	f.tunlinkat.flags = flags;
	add(s, &f);
}

static void fsync_(struct script *s, uint32_t fid)
{
	np_fcall f = {.type = NP_TFSYNC};
	f.tfsync.fid = fid;
	add(s, &f);
}

static void xattrwalk(struct script *s, uint32_t fid, uint32_t newfid, const char *name)
{
	np_fcall f = {.type = NP_TXATTRWALK};
	f.txattrwalk.fid = fid;
	f.txattrwalk.newfid = newfid;
	f.txattrwalk.name = np_strz(name);
	add(s, &f);
}

static void xattrcreate(struct script *s, uint32_t fid, const char *name, uint64_t size,
			uint32_t flags)
{
	np_fcall f = {.type = NP_TXATTRCREATE};
	f.txattrcreate.fid = fid;
	f.txattrcreate.name = np_strz(name);
	f.txattrcreate.attr_size = size;
	f.txattrcreate.flags = flags;
	add(s, &f);
}

static void lock(struct script *s, uint32_t fid, uint8_t type, uint64_t start, uint64_t len,
		 uint32_t proc)
{
	np_fcall f = {.type = NP_TLOCK};
	f.tlock.fid = fid;
	f.tlock.type = type;
	f.tlock.start = start;
	f.tlock.length = len;
	f.tlock.proc_id = proc;
	f.tlock.client_id = np_strz("fuzzclient");
	add(s, &f);
}

static void getlock(struct script *s, uint32_t fid, uint8_t type, uint64_t start, uint64_t len,
		    uint32_t proc)
{
	np_fcall f = {.type = NP_TGETLOCK};
	f.tgetlock.fid = fid;
	f.tgetlock.type = type;
	f.tgetlock.start = start;
	f.tgetlock.length = len;
	f.tgetlock.proc_id = proc;
	f.tgetlock.client_id = np_strz("fuzzclient");
	add(s, &f);
}

static void flush(struct script *s, uint16_t oldtag)
{
	np_fcall f = {.type = NP_TFLUSH};
	f.tflush.oldtag = oldtag;
	add(s, &f);
}

/* 9P2000 / .u */
static void attach_u(struct script *s, uint32_t fid)
{
	np_fcall f = {.type = NP_TATTACH};
	f.tattach.fid = fid;
	f.tattach.afid = NP_NOFID;
	f.tattach.uname = np_strz("root");
	f.tattach.aname = np_strz("");
	f.tattach.n_uname = s->d == NP_9P2000U ? 0 : NP_NONUNAME;
	add(s, &f);
}

static void open9(struct script *s, uint32_t fid, uint8_t mode)
{
	np_fcall f = {.type = NP_TOPEN};
	f.topen.fid = fid;
	f.topen.mode = mode;
	add(s, &f);
}

static void create9(struct script *s, uint32_t fid, const char *name, uint32_t perm, uint8_t mode,
		    const char *ext)
{
	np_fcall f = {.type = NP_TCREATE};
	f.tcreate.fid = fid;
	f.tcreate.name = np_strz(name);
	f.tcreate.perm = perm;
	f.tcreate.mode = mode;
	f.tcreate.extension = np_strz(ext);
	add(s, &f);
}

/* Twstat: "don't touch" everywhere except the name and the length. */
static void wstat(struct script *s, uint32_t fid, const char *name, uint64_t length)
{
	np_fcall f = {.type = NP_TWSTAT};
	np_stat *st = &f.twstat.stat;
	f.twstat.fid = fid;
	st->type = 0xFFFF;
	st->dev = ALLBITS32;
	st->qid.type = 0xFF;
	st->qid.version = ALLBITS32;
	st->qid.path = ~0ull;
	st->mode = ALLBITS32;
	st->atime = ALLBITS32;
	st->mtime = ALLBITS32;
	st->length = length;
	st->name = np_strz(name);
	st->uid = st->gid = st->muid = st->extension = np_strz("");
	st->n_uid = st->n_gid = st->n_muid = ALLBITS32;
	add(s, &f);
}

/* ---- the scripts ---- */

static void l_files(uint8_t hdr, const char *name)
{
	static struct script s;
	start(&s, hdr, NP_9P2000L);
	if (!(hdr & 3))
		version(&s, 65536, "9P2000.L");
	attach(&s, 0, "root", 0);
	getattr(&s, 0);
	WALK(&s, 0, 1, "."); /* a clone via "." */
	lcreate(&s, 1, "file", NP_L_O_RDWR, 0644);
	wr(&s, 1, 0, "hello, world");
	wr(&s, 1, 100000, "sparse");
	rd(&s, NP_TREAD, 1, 0, 4096);
	fsync_(&s, 1);
	getattr(&s, 1);
	setattr(&s, 1, NP_SETATTR_SIZE | NP_SETATTR_MODE | NP_SETATTR_MTIME_SET, 0600, 5);
	rd(&s, NP_TREAD, 1, 0, 100);
	fidop(&s, NP_TCLUNK, 1);
	WALK(&s, 0, 2, "file");
	lopen(&s, 2, NP_L_O_RDONLY);
	rd(&s, NP_TREAD, 2, 2, 8);
	fidop(&s, NP_TCLUNK, 2);
	WALK(&s, 0, 3, "file");
	lopen(&s, 3, NP_L_O_WRONLY | NP_L_O_APPEND | NP_L_O_TRUNC);
	wr(&s, 3, 0, "appended");
	fidop(&s, NP_TCLUNK, 3);
	fidop(&s, NP_TSTATFS, 0);
	fidop(&s, NP_TCLUNK, 0);
	finish(&s, name);
}

static void l_dirs(void)
{
	static struct script s;
	start(&s, 0, NP_9P2000L);
	version(&s, 65536, "9P2000.L");
	attach(&s, 0, "root", 0);
	mkdir_(&s, 0, "d", 0755);
	WALK(&s, 0, 1, "d");
	lcreate(&s, 1, "x", NP_L_O_RDWR, 0600);
	wr(&s, 1, 0, "x data");
	fidop(&s, NP_TCLUNK, 1);
	WALK(&s, 0, 2, "d");
	lopen(&s, 2, NP_L_O_RDONLY | NP_L_O_DIRECTORY);
	rd(&s, NP_TREADDIR, 2, 0, 8192);
	rd(&s, NP_TREADDIR, 2, 3, 64);
	fidop(&s, NP_TCLUNK, 2);
	symlink_(&s, 0, "s", "d/x");
	WALK(&s, 0, 3, "s");
	fidop(&s, NP_TREADLINK, 3);
	fidop(&s, NP_TCLUNK, 3);
	WALK(&s, 0, 4, "d", "x");
	link_(&s, 0, 4, "hard");
	renameat_(&s, 0, "hard", 0, "hard2");
	WALK(&s, 0, 5, "d");
	rename_(&s, 4, 5, "moved");
	getattr(&s, 4);
	unlinkat_(&s, 0, "hard2", 0);
	unlinkat_(&s, 0, "d", NP_AT_REMOVEDIR); /* not empty */
	mknod_(&s, 0, "fifo", 0010644, 0, 0);
	mknod_(&s, 0, "null", 0020600, 1, 3);
	WALK(&s, 0, 6, "d", "..", "d", "moved");
	WALK(&s, 0, 7, "..", "..");
	WALK(&s, 0, 8, "d", "nonexistent", "x");
	fidop(&s, NP_TREMOVE, 6);
	unlinkat_(&s, 5, ".", 0);
	unlinkat_(&s, 0, "d", NP_AT_REMOVEDIR);
	rd(&s, NP_TREADDIR, 0, 0, 8192); /* not opened */
	WALK(&s, 0, 9);
	lopen(&s, 9, NP_L_O_RDONLY);
	rd(&s, NP_TREADDIR, 9, 0, 8192);
	for (uint32_t fid = 0; fid <= 9; fid++)
		fidop(&s, NP_TCLUNK, fid);
	finish(&s, "dirs");
}

static void l_xattr(void)
{
	static struct script s;
	start(&s, 0, NP_9P2000L);
	version(&s, 65536, "9P2000.L");
	attach(&s, 0, "root", 0);
	WALK(&s, 0, 1);
	lcreate(&s, 1, "f", NP_L_O_RDWR, 0644);
	fidop(&s, NP_TCLUNK, 1);
	WALK(&s, 0, 2, "f");
	xattrcreate(&s, 2, "user.k", 5, 0);
	wr(&s, 2, 0, "value");
	fidop(&s, NP_TCLUNK, 2);
	WALK(&s, 0, 3, "f");
	xattrwalk(&s, 3, 4, "user.k");
	rd(&s, NP_TREAD, 4, 0, 100);
	fidop(&s, NP_TCLUNK, 4);
	xattrwalk(&s, 3, 5, ""); /* the list of names */
	rd(&s, NP_TREAD, 5, 0, 100);
	fidop(&s, NP_TCLUNK, 5);
	xattrwalk(&s, 3, 6, "user.missing");
	WALK(&s, 0, 7, "f");
	xattrcreate(&s, 7, "user.k", 0, 0); /* size 0: remove */
	fidop(&s, NP_TCLUNK, 7);
	WALK(&s, 0, 8, "f");
	xattrcreate(&s, 8, "user.short", 10, 1); /* XATTR_CREATE, written short */
	wr(&s, 8, 0, "abc");
	fidop(&s, NP_TCLUNK, 8);
	xattrwalk(&s, 0, 9, "user.none");
	fidop(&s, NP_TCLUNK, 3);
	fidop(&s, NP_TCLUNK, 0);
	finish(&s, "xattr");
}

static void l_locks(void)
{
	static struct script s;
	start(&s, 0, NP_9P2000L);
	version(&s, 65536, "9P2000.L");
	attach(&s, 0, "root", 0);
	WALK(&s, 0, 1);
	lcreate(&s, 1, "f", NP_L_O_RDWR, 0644);
	lock(&s, 1, NP_LOCK_TYPE_WRLCK, 0, 10, 1);
	WALK(&s, 0, 2, "f");
	lopen(&s, 2, NP_L_O_RDWR);
	getlock(&s, 2, NP_LOCK_TYPE_WRLCK, 0, 10, 2);
	lock(&s, 2, NP_LOCK_TYPE_RDLCK, 5, 5, 2);
	lock(&s, 1, NP_LOCK_TYPE_UNLCK, 0, 0, 1);
	lock(&s, 2, NP_LOCK_TYPE_RDLCK, 5, 5, 2);
	getlock(&s, 1, NP_LOCK_TYPE_WRLCK, 0, 0, 1);
	lock(&s, 2, NP_LOCK_TYPE_WRLCK, 0, 0, 2); /* to EOF */
	fidop(&s, NP_TCLUNK, 2);
	fidop(&s, NP_TCLUNK, 1);
	fidop(&s, NP_TCLUNK, 0);
	finish(&s, "locks");
}

static void l_flush(void)
{
	static struct script s;
	start(&s, 0, NP_9P2000L);
	version(&s, 65536, "9P2000.L");
	attach(&s, 0, "root", 0);
	WALK(&s, 0, 1);
	lcreate(&s, 1, "f", NP_L_O_RDWR, 0644);
	wr(&s, 1, 0, "some data to read back");
	uint16_t t = rd(&s, NP_TREAD, 1, 0, 65536);
	flush(&s, t);
	t = rd(&s, NP_TREAD, 1, 0, 10);
	flush(&s, t);
	flush(&s, t); /* twice */
	flush(&s, 999); /* nothing in flight */
	WALK(&s, 0, 2);
	lopen(&s, 2, NP_L_O_RDONLY);
	t = rd(&s, NP_TREADDIR, 2, 0, 4096);
	flush(&s, t);
	fidop(&s, NP_TCLUNK, 1);
	fidop(&s, NP_TCLUNK, 2);
	finish(&s, "flush");
}

/* Session rules: requests before Tversion, fids in use or unknown, opens
 * twice, Tauth, an R-message as a request, a re-Tversion mid-session. */
static void l_rules(void)
{
	static struct script s;
	start(&s, 0, NP_9P2000L);
	attach(&s, 0, "root", 0); /* before Tversion */
	version(&s, 8192, "9P2000.L");
	attach(&s, 0, "root", 0);
	attach(&s, 0, "root", 0); /* fid in use */
	WALK(&s, 42, 43);         /* unknown fid */
	WALK(&s, 0, 0);           /* newfid == fid */
	rd(&s, NP_TREAD, 0, 0, 10); /* not opened */
	lopen(&s, 0, NP_L_O_RDONLY);
	lopen(&s, 0, NP_L_O_RDONLY); /* twice */
	{
		np_fcall f = {.type = NP_TAUTH};
		f.tauth.afid = 5;
		f.tauth.uname = np_strz("root");
		f.tauth.aname = np_strz("");
		add(&s, &f);
	}
	{
		np_fcall f = {.type = NP_TATTACH};
		f.tattach.fid = 6;
		f.tattach.afid = 5;
		f.tattach.uname = np_strz("root");
		f.tattach.aname = np_strz("");
		add(&s, &f);
	}
	{
		np_fcall f = {.type = NP_RCLUNK};
		add(&s, &f);
	}
	WALK(&s, 0, 1, "a", "b", "c", "d", "e", "f", "g", "h", "i", "j", "k", "l", "m", "n",
	     "o", "p");
	fidop(&s, NP_TCLUNK, 0);
	fidop(&s, NP_TCLUNK, 0); /* twice */
	attach(&s, 1, "root", 0);
	version(&s, 65536, "9P2000.L"); /* drops fid 1 */
	fidop(&s, NP_TCLUNK, 1);
	version(&s, 65536, "9P2000.x"); /* unknown: no session */
	attach(&s, 2, "root", 0);
	finish(&s, "rules");
}

/* A user other than root: permission checks. */
static void l_user(uint8_t hdr, const char *name, uint32_t uid)
{
	static struct script s;
	start(&s, hdr, NP_9P2000L);
	version(&s, 65536, "9P2000.L");
	attach(&s, 0, "user", uid);
	mkdir_(&s, 0, "d", 0700);
	WALK(&s, 0, 1);
	lcreate(&s, 1, "f", NP_L_O_RDWR, 0600);
	wr(&s, 1, 0, "mine");
	setattr(&s, 1, NP_SETATTR_UID | NP_SETATTR_GID, 0, 0);
	fidop(&s, NP_TCLUNK, 1);
	WALK(&s, 0, 2, "f");
	setattr(&s, 2, NP_SETATTR_MODE, 0, 0);
	lopen(&s, 2, NP_L_O_RDONLY);
	fidop(&s, NP_TCLUNK, 2);
	unlinkat_(&s, 0, "f", 0);
	fidop(&s, NP_TCLUNK, 0);
	finish(&s, name);
}

/* 9P2000 and 9P2000.u: the adapter onto the .L handlers. */
static void legacy(enum np_dialect d)
{
	static struct script s;
	int u = d == NP_9P2000U;
	start(&s, 0, d);
	version(&s, 65536, u ? "9P2000.u" : "9P2000");
	attach_u(&s, 0);
	WALK(&s, 0, 1);
	create9(&s, 1, "f", 0644, NP_ORDWR, "");
	wr(&s, 1, 0, "hello");
	rd(&s, NP_TREAD, 1, 0, 100);
	fidop(&s, NP_TSTAT, 1);
	fidop(&s, NP_TCLUNK, 1);
	WALK(&s, 0, 2, "f");
	open9(&s, 2, NP_OREAD);
	rd(&s, NP_TREAD, 2, 1, 3);
	wstat(&s, 2, "g", ~0ull);
	wstat(&s, 2, "", 2);
	fidop(&s, NP_TSTAT, 2);
	fidop(&s, NP_TCLUNK, 2);
	WALK(&s, 0, 3);
	create9(&s, 3, "dir", NP_DMDIR | 0755, NP_OREAD, "");
	rd(&s, NP_TREAD, 3, 0, 8192);
	fidop(&s, NP_TCLUNK, 3);
	WALK(&s, 0, 4);
	open9(&s, 4, NP_OREAD);
	rd(&s, NP_TREAD, 4, 0, 8192);
	rd(&s, NP_TREAD, 4, 60, 8192);
	fidop(&s, NP_TCLUNK, 4);
	if (u) {
		WALK(&s, 0, 5);
		create9(&s, 5, "sym", NP_DMSYMLINK | 0777, NP_OREAD, "g");
		fidop(&s, NP_TCLUNK, 5);
		WALK(&s, 0, 6);
		create9(&s, 6, "dev", NP_DMDEVICE | 0600, NP_OREAD, "c 1 3");
		fidop(&s, NP_TCLUNK, 6);
		WALK(&s, 0, 7);
		create9(&s, 7, "hl", NP_DMLINK | 0644, NP_OREAD, "0"); /* hard link to fid 0 */
		fidop(&s, NP_TCLUNK, 7);
		WALK(&s, 0, 8, "sym");
		fidop(&s, NP_TSTAT, 8);
		fidop(&s, NP_TCLUNK, 8);
	}
	WALK(&s, 0, 9);
	create9(&s, 9, "tmp", 0600, NP_OWRITE | NP_ORCLOSE, "");
	uint16_t t = rd(&s, NP_TREAD, 9, 0, 10);
	flush(&s, t);
	fidop(&s, NP_TCLUNK, 9); /* removes it */
	WALK(&s, 0, 10, "g");
	fidop(&s, NP_TREMOVE, 10);
	WALK(&s, 0, 11, "dir");
	open9(&s, 11, NP_OWRITE); /* a directory */
	fidop(&s, NP_TREMOVE, 11);
	fidop(&s, NP_TCLUNK, 0);
	finish(&s, "files");
}

/* A .L request in a 9P2000 session, and garbage framing. */
static void odd(void)
{
	static struct script s;
	start(&s, 0, NP_9P2000L);
	version(&s, 65536, "9P2000");
	attach(&s, 0, "root", 0);
	getattr(&s, 0); /* not 9P2000 */
	finish(&s, "dialect-mismatch");

	start(&s, H_RAW, NP_9P2000L);
	version(&s, 65536, "9P2000.L");
	attach(&s, 0, "root", 0);
	/* a frame claiming more than it has, then EOF */
	static const uint8_t partial[] = {0x40, 0, 0, 0, NP_TGETATTR, 9, 0, 0, 0};
	memcpy(s.buf + s.len, partial, sizeof partial);
	s.len += sizeof partial;
	finish(&s, "raw-partial");

	start(&s, H_RAW, NP_9P2000L);
	version(&s, 65536, "9P2000.L");
	static const uint8_t tiny[] = {3, 0, 0, 0, 0, 0, 0};
	memcpy(s.buf + s.len, tiny, sizeof tiny);
	s.len += sizeof tiny;
	finish(&s, "raw-tiny-frame");
}

void seeds_session(const char *backend)
{
	l_files(0, "files");
	l_files(H_AUTO_L, "files-autoversion");
	l_files(H_AUTO_L | H_MSIZE_4096, "files-autoversion-4096");
	l_dirs();
	l_xattr();
	l_locks();
	l_flush();
	l_rules();
	l_user(0, "user-1000", 1000);
	legacy(NP_9P2000);
	legacy(NP_9P2000U);
	odd();
	if (strcmp(backend, "ramfs") == 0) {
		l_files(H_RAMFS_LIMITS, "files-limits");
		l_user(H_RAMFS_ROOT1000, "user-1000-owns-root", 1000);
		l_user(H_RAMFS_ROOT1000, "user-65534-root-0700", 65534);
		l_user(H_RAMFS_NOPERM, "user-65534-noperm", 65534);
	}
}

/* ninep wire codec: 9P2000, 9P2000.u and 9P2000.L.
 *
 * The codec knows nothing of files or connections: it turns a frame into an
 * np_fcall and back.  Decoding never reads past the given length and never
 * allocates: strings and payloads in a decoded np_fcall are views into the
 * frame (np_str is NOT NUL-terminated).  Encoding writes into a caller-given
 * buffer and fails cleanly with -EMSGSIZE when it does not fit.
 */
#ifndef NINEP_PROTO_H
#define NINEP_PROTO_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define NP_NOTAG 0xFFFFu
#define NP_NOFID 0xFFFFFFFFu
#define NP_NONUNAME 0xFFFFFFFFu /* n_uname meaning "no numeric uid" */
#define NP_MAXWELEM 16
#define NP_HDRSZ 7     /* size[4] type[1] tag[2] */
#define NP_IOHDRSZ 24  /* room kept below msize for Twrite/Rread headers */
#define NP_RREAD_DATA 11  /* offset of Rread/Rreaddir data in a frame */
#define NP_TWRITE_DATA 23 /* offset of Twrite data in a frame */
#define NP_MIN_MSIZE 4096

enum np_dialect {
	NP_9P2000 = 0,
	NP_9P2000U = 1, /* Unix extensions */
	NP_9P2000L = 2, /* Linux: a superset of .u for the legacy messages */
};

enum np_msgtype {
	NP_TLERROR = 6, NP_RLERROR,
	NP_TSTATFS = 8, NP_RSTATFS,
	NP_TLOPEN = 12, NP_RLOPEN,
	NP_TLCREATE = 14, NP_RLCREATE,
	NP_TSYMLINK = 16, NP_RSYMLINK,
	NP_TMKNOD = 18, NP_RMKNOD,
	NP_TRENAME = 20, NP_RRENAME,
	NP_TREADLINK = 22, NP_RREADLINK,
	NP_TGETATTR = 24, NP_RGETATTR,
	NP_TSETATTR = 26, NP_RSETATTR,
	NP_TXATTRWALK = 30, NP_RXATTRWALK,
	NP_TXATTRCREATE = 32, NP_RXATTRCREATE,
	NP_TREADDIR = 40, NP_RREADDIR,
	NP_TFSYNC = 50, NP_RFSYNC,
	NP_TLOCK = 52, NP_RLOCK,
	NP_TGETLOCK = 54, NP_RGETLOCK,
	NP_TLINK = 70, NP_RLINK,
	NP_TMKDIR = 72, NP_RMKDIR,
	NP_TRENAMEAT = 74, NP_RRENAMEAT,
	NP_TUNLINKAT = 76, NP_RUNLINKAT,
	NP_TVERSION = 100, NP_RVERSION,
	NP_TAUTH = 102, NP_RAUTH,
	NP_TATTACH = 104, NP_RATTACH,
	NP_TERROR = 106, NP_RERROR,
	NP_TFLUSH = 108, NP_RFLUSH,
	NP_TWALK = 110, NP_RWALK,
	NP_TOPEN = 112, NP_ROPEN,
	NP_TCREATE = 114, NP_RCREATE,
	NP_TREAD = 116, NP_RREAD,
	NP_TWRITE = 118, NP_RWRITE,
	NP_TCLUNK = 120, NP_RCLUNK,
	NP_TREMOVE = 122, NP_RREMOVE,
	NP_TSTAT = 124, NP_RSTAT,
	NP_TWSTAT = 126, NP_RWSTAT,
};

/* qid.type bits */
#define NP_QTDIR 0x80
#define NP_QTAPPEND 0x40
#define NP_QTEXCL 0x20
#define NP_QTMOUNT 0x10
#define NP_QTAUTH 0x08
#define NP_QTTMP 0x04
#define NP_QTSYMLINK 0x02
#define NP_QTLINK 0x01
#define NP_QTFILE 0x00

/* 9P2000(.u) mode bits (stat.mode, Tcreate perm) */
#define NP_DMDIR 0x80000000u
#define NP_DMAPPEND 0x40000000u
#define NP_DMEXCL 0x20000000u
#define NP_DMMOUNT 0x10000000u
#define NP_DMAUTH 0x08000000u
#define NP_DMTMP 0x04000000u
#define NP_DMSYMLINK 0x02000000u /* .u */
#define NP_DMLINK 0x01000000u    /* .u */
#define NP_DMDEVICE 0x00800000u  /* .u */
#define NP_DMNAMEDPIPE 0x00200000u /* .u */
#define NP_DMSOCKET 0x00100000u  /* .u */
#define NP_DMSETUID 0x00080000u  /* .u */
#define NP_DMSETGID 0x00040000u  /* .u */

/* Topen/Tcreate mode */
#define NP_OREAD 0
#define NP_OWRITE 1
#define NP_ORDWR 2
#define NP_OEXEC 3
#define NP_OTRUNC 0x10
#define NP_ORCLOSE 0x40

/* 9P2000.L open flags (Tlopen/Tlcreate): Linux x86 values, fixed by the
 * protocol so servers on other ABIs translate them explicitly. */
#define NP_L_O_RDONLY 00000000
#define NP_L_O_WRONLY 00000001
#define NP_L_O_RDWR 00000002
#define NP_L_O_NOACCESS 00000003
#define NP_L_O_CREATE 00000100
#define NP_L_O_EXCL 00000200
#define NP_L_O_NOCTTY 00000400
#define NP_L_O_TRUNC 00001000
#define NP_L_O_APPEND 00002000
#define NP_L_O_NONBLOCK 00004000
#define NP_L_O_DSYNC 00010000
#define NP_L_O_FASYNC 00020000
#define NP_L_O_DIRECT 00040000
#define NP_L_O_LARGEFILE 00100000
#define NP_L_O_DIRECTORY 00200000
#define NP_L_O_NOFOLLOW 00400000
#define NP_L_O_NOATIME 01000000
#define NP_L_O_CLOEXEC 02000000
#define NP_L_O_SYNC 04000000

/* Tgetattr request_mask / Rgetattr valid */
#define NP_GETATTR_MODE 0x00000001ull
#define NP_GETATTR_NLINK 0x00000002ull
#define NP_GETATTR_UID 0x00000004ull
#define NP_GETATTR_GID 0x00000008ull
#define NP_GETATTR_RDEV 0x00000010ull
#define NP_GETATTR_ATIME 0x00000020ull
#define NP_GETATTR_MTIME 0x00000040ull
#define NP_GETATTR_CTIME 0x00000080ull
#define NP_GETATTR_INO 0x00000100ull
#define NP_GETATTR_SIZE 0x00000200ull
#define NP_GETATTR_BLOCKS 0x00000400ull
#define NP_GETATTR_BTIME 0x00000800ull
#define NP_GETATTR_GEN 0x00001000ull
#define NP_GETATTR_DATA_VERSION 0x00002000ull
#define NP_GETATTR_BASIC 0x000007ffull
#define NP_GETATTR_ALL 0x00003fffull

/* Tsetattr valid */
#define NP_SETATTR_MODE 0x00000001u
#define NP_SETATTR_UID 0x00000002u
#define NP_SETATTR_GID 0x00000004u
#define NP_SETATTR_SIZE 0x00000008u
#define NP_SETATTR_ATIME 0x00000010u
#define NP_SETATTR_MTIME 0x00000020u
#define NP_SETATTR_CTIME 0x00000040u
#define NP_SETATTR_ATIME_SET 0x00000080u
#define NP_SETATTR_MTIME_SET 0x00000100u

/* Tlock type / Rgetlock type */
#define NP_LOCK_TYPE_RDLCK 0
#define NP_LOCK_TYPE_WRLCK 1
#define NP_LOCK_TYPE_UNLCK 2
/* Tlock flags */
#define NP_LOCK_FLAGS_BLOCK 1
#define NP_LOCK_FLAGS_RECLAIM 2
/* Rlock status */
#define NP_LOCK_SUCCESS 0
#define NP_LOCK_BLOCKED 1
#define NP_LOCK_ERROR 2
#define NP_LOCK_GRACE 3

/* Tunlinkat flags */
#define NP_AT_REMOVEDIR 0x200

/* A counted string.  In a decoded message it points into the frame and is
 * not NUL-terminated. */
typedef struct np_str {
	const char *s;
	uint16_t len;
} np_str;

typedef struct np_qid {
	uint8_t type;
	uint32_t version;
	uint64_t path;
} np_qid;

/* The 9P2000 stat structure, with the .u extension fields (which are only on
 * the wire when the dialect is .u or .L). */
typedef struct np_stat {
	uint16_t type;
	uint32_t dev;
	np_qid qid;
	uint32_t mode;
	uint32_t atime;
	uint32_t mtime;
	uint64_t length;
	np_str name, uid, gid, muid;
	np_str extension; /* .u */
	uint32_t n_uid, n_gid, n_muid; /* .u */
} np_stat;

typedef struct np_fcall {
	uint8_t type;
	uint16_t tag;
	union {
		struct { uint32_t msize; np_str version; } version; /* T and R */
		struct { uint32_t afid; np_str uname, aname; uint32_t n_uname; } tauth;
		struct { np_qid aqid; } rauth;
		struct { uint32_t fid, afid; np_str uname, aname; uint32_t n_uname; } tattach;
		struct { np_qid qid; } rattach;
		struct { np_str ename; uint32_t ecode; } rerror; /* ecode: .u/.L */
		struct { uint32_t ecode; } rlerror;
		struct { uint16_t oldtag; } tflush;
		struct { uint32_t fid, newfid; uint16_t nwname; np_str wname[NP_MAXWELEM]; } twalk;
		struct { uint16_t nwqid; np_qid wqid[NP_MAXWELEM]; } rwalk;
		struct { uint32_t fid; uint8_t mode; } topen;
		struct { np_qid qid; uint32_t iounit; } ropen; /* also Rcreate, Rlopen, Rlcreate */
		struct { uint32_t fid; np_str name; uint32_t perm; uint8_t mode; np_str extension; } tcreate;
		struct { uint32_t fid; uint64_t offset; uint32_t count; } tread; /* also Treaddir */
		struct { uint32_t count; const uint8_t *data; } rread; /* also Rreaddir */
		struct { uint32_t fid; uint64_t offset; uint32_t count; const uint8_t *data; } twrite;
		struct { uint32_t count; } rwrite;
		struct { uint32_t fid; } tclunk; /* also Tremove, Tstat, Tstatfs, Treadlink */
		struct { np_stat stat; } rstat;
		struct { uint32_t fid; np_stat stat; } twstat;
		struct {
			uint32_t type, bsize;
			uint64_t blocks, bfree, bavail, files, ffree, fsid;
			uint32_t namelen;
		} rstatfs;
		struct { uint32_t fid, flags; } tlopen;
		struct { uint32_t fid; np_str name; uint32_t flags, mode, gid; } tlcreate;
		struct { uint32_t fid; np_str name, symtgt; uint32_t gid; } tsymlink;
		struct { np_qid qid; } rqid; /* Rsymlink, Rmknod, Rmkdir */
		struct { uint32_t dfid; np_str name; uint32_t mode, major, minor, gid; } tmknod;
		struct { uint32_t fid, dfid; np_str name; } trename;
		struct { np_str target; } rreadlink;
		struct { uint32_t fid; uint64_t request_mask; } tgetattr;
		struct {
			uint64_t valid;
			np_qid qid;
			uint32_t mode, uid, gid;
			uint64_t nlink, rdev, size, blksize, blocks;
			uint64_t atime_sec, atime_nsec, mtime_sec, mtime_nsec;
			uint64_t ctime_sec, ctime_nsec, btime_sec, btime_nsec;
			uint64_t gen, data_version;
		} rgetattr;
		struct {
			uint32_t fid, valid, mode, uid, gid;
			uint64_t size, atime_sec, atime_nsec, mtime_sec, mtime_nsec;
		} tsetattr;
		struct { uint32_t fid, newfid; np_str name; } txattrwalk;
		struct { uint64_t size; } rxattrwalk;
		struct { uint32_t fid; np_str name; uint64_t attr_size; uint32_t flags; } txattrcreate;
		struct { uint32_t fid, datasync; } tfsync;
		struct {
			uint32_t fid;
			uint8_t type;
			uint32_t flags;
			uint64_t start, length;
			uint32_t proc_id;
			np_str client_id;
		} tlock;
		struct { uint8_t status; } rlock;
		struct {
			uint32_t fid;
			uint8_t type;
			uint64_t start, length;
			uint32_t proc_id;
			np_str client_id;
		} tgetlock;
		struct {
			uint8_t type;
			uint64_t start, length;
			uint32_t proc_id;
			np_str client_id;
		} rgetlock;
		struct { uint32_t dfid, fid; np_str name; } tlink;
		struct { uint32_t dfid; np_str name; uint32_t mode, gid; } tmkdir;
		struct { uint32_t olddirfid; np_str oldname; uint32_t newdirfid; np_str newname; } trenameat;
		struct { uint32_t dirfid; np_str name; uint32_t flags; } tunlinkat;
	};
} np_fcall;

/* Where decoding failed: the errno (EPROTO, EMSGSIZE, EINVAL, ENAMETOOLONG,
 * EOPNOTSUPP for an unknown type) and the field being read. */
typedef struct np_decode_error {
	int err;
	const char *field;
	uint32_t offset; /* byte offset in the frame */
} np_decode_error;

/* Decode one whole frame (buf[0..len) starting at size[4]).  size[4] must equal
 * len, and len must not exceed msize (0 means "no limit", only for Tversion
 * before negotiation).  Returns 0, or -errno with *e filled when e is not
 * NULL.  Views in *f point into buf. */
int np_decode(const uint8_t *buf, size_t len, enum np_dialect d, uint32_t msize,
	      np_fcall *f, np_decode_error *e);

/* Encode f into buf[0..cap).  Returns the frame length, or -EMSGSIZE if it does
 * not fit, -EINVAL if f is not encodable (unknown type, counts over limits).
 * Payload pointers (twrite.data, rread.data) may already point at their place
 * in buf (NP_TWRITE_DATA / NP_RREAD_DATA): then nothing is copied. */
int np_encode(const np_fcall *f, enum np_dialect d, uint8_t *buf, size_t cap);

/* The exact encoded length of f, or -EINVAL. */
long np_fcall_size(const np_fcall *f, enum np_dialect d);

/* Frame header access: size[4] at buf[0..4).  Callers must ensure 4 bytes. */
static inline uint32_t np_frame_size(const uint8_t *buf)
{
	return (uint32_t)buf[0] | (uint32_t)buf[1] << 8 | (uint32_t)buf[2] << 16 |
	       (uint32_t)buf[3] << 24;
}

/* Is `type` a message of dialect d?  Pure type check (T or R). */
int np_type_valid(uint8_t type, enum np_dialect d);
const char *np_type_name(uint8_t type); /* "Twalk", or NULL */
const char *np_dialect_name(enum np_dialect d); /* "9P2000.L" */
/* Parse a version string ("9P2000.L", "9P2000.u", "9P2000", or "9P2000.x" ->
 * 9P2000 as the spec allows); -1 when unknown. */
int np_dialect_parse(const char *s, size_t len);

/* Render one message on one line for tracing ("Twalk tag 3 fid 1 newfid 2
 * nwname 2 'usr' 'lib'").  Returns what snprintf would. */
int np_fcall_format(char *out, size_t n, const np_fcall *f, enum np_dialect d);

/* np_str helpers */
static inline np_str np_str_make(const char *s, uint16_t len)
{
	np_str r = {s, len};
	return r;
}
np_str np_strz(const char *s); /* from a NUL-terminated string (<= 65535) */
/* Copy into a NUL-terminated buffer; -ENAMETOOLONG if it does not fit. */
int np_str_copy(char *dst, size_t cap, np_str s);
int np_str_eq(np_str a, const char *z);

/* Encoded size of one stat structure (including its own size[2]). */
size_t np_stat_size(const np_stat *st, enum np_dialect d);
/* Encode/decode one stat as found in a 9P2000 directory read.  Encode returns
 * bytes written or 0 when it does not fit; decode returns bytes consumed or
 * -errno. */
size_t np_stat_encode(const np_stat *st, enum np_dialect d, uint8_t *buf, size_t cap);
long np_stat_decode(const uint8_t *buf, size_t len, enum np_dialect d, np_stat *st);

/* 9P2000.L readdir entries: qid[13] offset[8] type[1] name[s]. */
typedef struct np_dirent {
	np_qid qid;
	uint64_t offset; /* cookie to pass as the next Treaddir offset */
	uint8_t type;    /* DT_* */
	np_str name;
} np_dirent;
/* Append one entry; returns bytes written, 0 if it does not fit whole. */
size_t np_dirent_encode(uint8_t *buf, size_t cap, const np_dirent *de);
/* Iterate entries of an Rreaddir payload: returns 1 with *de filled and *pos
 * advanced, 0 at the end, -EPROTO on a truncated or malformed entry. */
int np_dirent_next(const uint8_t *data, uint32_t count, uint32_t *pos, np_dirent *de);

/* Errno <-> 9P2000 error strings (for Rerror to/from plain 9P2000 peers). */
const char *np_errstr(int err);
int np_strerrno(np_str ename); /* best effort; EIO when unknown */

#ifdef __cplusplus
}
#endif
#endif

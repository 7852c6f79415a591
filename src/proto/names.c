/* Type and dialect names, counted-string helpers, errno <-> error strings. */
#include <errno.h>
#include <string.h>

#include "ninep/proto.h"

static const char *const type_names[128] = {
	[NP_TLERROR] = "Tlerror", [NP_RLERROR] = "Rlerror",
	[NP_TSTATFS] = "Tstatfs", [NP_RSTATFS] = "Rstatfs",
	[NP_TLOPEN] = "Tlopen", [NP_RLOPEN] = "Rlopen",
	[NP_TLCREATE] = "Tlcreate", [NP_RLCREATE] = "Rlcreate",
	[NP_TSYMLINK] = "Tsymlink", [NP_RSYMLINK] = "Rsymlink",
	[NP_TMKNOD] = "Tmknod", [NP_RMKNOD] = "Rmknod",
	[NP_TRENAME] = "Trename", [NP_RRENAME] = "Rrename",
	[NP_TREADLINK] = "Treadlink", [NP_RREADLINK] = "Rreadlink",
	[NP_TGETATTR] = "Tgetattr", [NP_RGETATTR] = "Rgetattr",
	[NP_TSETATTR] = "Tsetattr", [NP_RSETATTR] = "Rsetattr",
	[NP_TXATTRWALK] = "Txattrwalk", [NP_RXATTRWALK] = "Rxattrwalk",
	[NP_TXATTRCREATE] = "Txattrcreate", [NP_RXATTRCREATE] = "Rxattrcreate",
	[NP_TREADDIR] = "Treaddir", [NP_RREADDIR] = "Rreaddir",
	[NP_TFSYNC] = "Tfsync", [NP_RFSYNC] = "Rfsync",
	[NP_TLOCK] = "Tlock", [NP_RLOCK] = "Rlock",
	[NP_TGETLOCK] = "Tgetlock", [NP_RGETLOCK] = "Rgetlock",
	[NP_TLINK] = "Tlink", [NP_RLINK] = "Rlink",
	[NP_TMKDIR] = "Tmkdir", [NP_RMKDIR] = "Rmkdir",
	[NP_TRENAMEAT] = "Trenameat", [NP_RRENAMEAT] = "Rrenameat",
	[NP_TUNLINKAT] = "Tunlinkat", [NP_RUNLINKAT] = "Runlinkat",
	[NP_TVERSION] = "Tversion", [NP_RVERSION] = "Rversion",
	[NP_TAUTH] = "Tauth", [NP_RAUTH] = "Rauth",
	[NP_TATTACH] = "Tattach", [NP_RATTACH] = "Rattach",
	[NP_TERROR] = "Terror", [NP_RERROR] = "Rerror",
	[NP_TFLUSH] = "Tflush", [NP_RFLUSH] = "Rflush",
	[NP_TWALK] = "Twalk", [NP_RWALK] = "Rwalk",
	[NP_TOPEN] = "Topen", [NP_ROPEN] = "Ropen",
	[NP_TCREATE] = "Tcreate", [NP_RCREATE] = "Rcreate",
	[NP_TREAD] = "Tread", [NP_RREAD] = "Rread",
	[NP_TWRITE] = "Twrite", [NP_RWRITE] = "Rwrite",
	[NP_TCLUNK] = "Tclunk", [NP_RCLUNK] = "Rclunk",
	[NP_TREMOVE] = "Tremove", [NP_RREMOVE] = "Rremove",
	[NP_TSTAT] = "Tstat", [NP_RSTAT] = "Rstat",
	[NP_TWSTAT] = "Twstat", [NP_RWSTAT] = "Rwstat",
};

const char *np_type_name(uint8_t type)
{
	return type < 128 ? type_names[type] : NULL;
}

const char *np_dialect_name(enum np_dialect d)
{
	switch (d) {
	case NP_9P2000L:
		return "9P2000.L";
	case NP_9P2000U:
		return "9P2000.u";
	default:
		return "9P2000";
	}
}

int np_dialect_parse(const char *s, size_t len)
{
	if (len == 8 && memcmp(s, "9P2000.L", 8) == 0)
		return NP_9P2000L;
	if (len == 8 && memcmp(s, "9P2000.u", 8) == 0)
		return NP_9P2000U;
	/* The spec: a version "9P2000.x" the server does not know may be
	 * answered with plain "9P2000". */
	if (len >= 6 && memcmp(s, "9P2000", 6) == 0 && (len == 6 || s[6] == '.'))
		return NP_9P2000;
	return -1;
}

np_str np_strz(const char *s)
{
	size_t n = s ? strlen(s) : 0;
	if (n > 0xFFFF)
		n = 0xFFFF;
	return np_str_make(s, (uint16_t)n);
}

int np_str_copy(char *dst, size_t cap, np_str s)
{
	if (cap == 0 || s.len >= cap)
		return -ENAMETOOLONG;
	if (s.len)
		memcpy(dst, s.s, s.len);
	dst[s.len] = '\0';
	return 0;
}

int np_str_eq(np_str a, const char *z)
{
	size_t n = strlen(z);
	return a.len == n && (n == 0 || memcmp(a.s, z, n) == 0);
}

/* 9P2000 peers speak error strings.  Plan 9's and Linux's strerror() texts for
 * the errnos a file server produces, both ways. */
static const struct {
	int err;
	const char *str;
} errtab[] = {
	{EPERM, "Operation not permitted"},
	{ENOENT, "No such file or directory"},
	{ENOENT, "file does not exist"},
	{ENOENT, "file not found"},
	{EIO, "Input/output error"},
	{ENXIO, "No such device or address"},
	{E2BIG, "Argument list too long"},
	{EBADF, "Bad file descriptor"},
	{EBADF, "unknown fid"},
	{EAGAIN, "Resource temporarily unavailable"},
	{ENOMEM, "Cannot allocate memory"},
	{EACCES, "Permission denied"},
	{EACCES, "permission denied"},
	{EFAULT, "Bad address"},
	{EBUSY, "Device or resource busy"},
	{EEXIST, "File exists"},
	{EEXIST, "file already exists"},
	{EXDEV, "Invalid cross-device link"},
	{ENODEV, "No such device"},
	{ENOTDIR, "Not a directory"},
	{ENOTDIR, "not a directory"},
	{EISDIR, "Is a directory"},
	{EISDIR, "is a directory"},
	{EINVAL, "Invalid argument"},
	{ENFILE, "Too many open files in system"},
	{EMFILE, "Too many open files"},
	{ETXTBSY, "Text file busy"},
	{EFBIG, "File too large"},
	{ENOSPC, "No space left on device"},
	{ESPIPE, "Illegal seek"},
	{EROFS, "Read-only file system"},
	{EMLINK, "Too many links"},
	{EPIPE, "Broken pipe"},
	{ERANGE, "Numerical result out of range"},
	{EDEADLK, "Resource deadlock avoided"},
	{ENAMETOOLONG, "File name too long"},
	{ENOLCK, "No locks available"},
	{ENOSYS, "Function not implemented"},
	{ENOTEMPTY, "Directory not empty"},
	{ENOTEMPTY, "directory not empty"},
	{ELOOP, "Too many levels of symbolic links"},
	{ENODATA, "No data available"},
	{EPROTO, "Protocol error"},
	{EBADMSG, "Bad message"},
	{EOVERFLOW, "Value too large for defined data type"},
	{EOPNOTSUPP, "Operation not supported"},
	{ENOTSUP, "Operation not supported"},
	{EMSGSIZE, "Message too long"},
	{ENOTCONN, "Transport endpoint is not connected"},
	{ECONNRESET, "Connection reset by peer"},
	{ETIMEDOUT, "Connection timed out"},
	{EDQUOT, "Disk quota exceeded"},
	{ESTALE, "Stale file handle"},
	{ECANCELED, "Operation canceled"},
	{EINTR, "Interrupted system call"},
};

const char *np_errstr(int err)
{
	for (size_t i = 0; i < sizeof errtab / sizeof errtab[0]; i++)
		if (errtab[i].err == err)
			return errtab[i].str;
	return "Input/output error";
}

int np_strerrno(np_str ename)
{
	for (size_t i = 0; i < sizeof errtab / sizeof errtab[0]; i++)
		if (np_str_eq(ename, errtab[i].str))
			return errtab[i].err;
	return EIO;
}

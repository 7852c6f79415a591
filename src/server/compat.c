/* 9P2000 and 9P2000.u on top of 9P2000.L handlers.
 *
 * Message by message:
 *   Topen      -> lopen (mode translated; ORCLOSE remembered on the fid)
 *   Tcreate    -> getattr of the directory (the new file takes its group),
 *                 then lcreate; or mkdir + walk + lopen (DMDIR); or
 *                 symlink / mknod / link + walk (.u special files)
 *   Tstat      -> getattr (+ readlink for a .u symlink)
 *   Twstat     -> getattr, then rename (a parent fid found by path) and one
 *                 setattr
 *   Tread of a directory -> readdir, then walk + getattr per entry
 *   Tclunk of an ORCLOSE fid -> clunk + remove
 *
 * The fid state the adapter keeps (path, tree, ORCLOSE, directory position;
 * see struct np_sfid) is touched on the loop thread only: prepare snapshots
 * what a handler needs into the request (struct np_compat_req), and
 * np_compat_post() applies the results.  Handlers run inline or on a worker
 * like any other (q->need_ops says which backend ops they call), and call
 * the backend directly with requests built here (struct np_compat_sub) on
 * temporary fids that never enter the fid table.
 */
#include <errno.h>
#include <grp.h>
#include <pthread.h>
#include <pwd.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <time.h>
#include <unistd.h>

#include "compat.h"

#define CX_DMSETVTX 0x00010000u /* .u sticky bit (Linux's P9_DMSETVTX) */
#define CX_SPECIAL (NP_DMSYMLINK | NP_DMLINK | NP_DMDEVICE | NP_DMNAMEDPIPE | NP_DMSOCKET)
#define CX_IDLEN 64             /* user/group names longer than this go numeric */
#define CX_LINK_MAX 4096        /* symlink targets in stat extensions */
#define CX_DIRBATCH 8192        /* backend readdir bytes per step */

typedef __typeof__(((np_fcall *)0)->rgetattr) cx_attr;
typedef __typeof__(((np_fcall *)0)->tsetattr) cx_setattr;

/* Per-request state, allocated by prepare (loop thread), freed at release. */
struct np_compat_req {
	char *path;       /* the fid's path when prepared (NULL: unknown) */
	/* Twstat rename: the components from fid2 down to the parent */
	char *walk;
	uint8_t rename;
	/* directory read: in, the position the read starts at; out, where the
	 * next one continues */
	uint64_t off, cookie;
	/* reply strings of one stat (an Rstat's live until the reply is sent) */
	char uname[CX_IDLEN], gname[CX_IDLEN], dev[48];
	char *link;       /* CX_LINK_MAX + 1 bytes, when a symlink is met */
};

/* A composite step: a request the adapter hands a backend handler. */
struct np_compat_sub {
	struct np_sreq q;
	pthread_mutex_t mu;
	pthread_cond_t cv;
	int done, err;
};

void np_compat_error(np_fcall *ef, enum np_dialect d, int err)
{
	if (d == NP_9P2000L) {
		ef->type = NP_RLERROR;
		ef->rlerror.ecode = (uint32_t)err;
	} else {
		ef->type = NP_RERROR;
		ef->rerror.ename = np_strz(np_errstr(err));
		ef->rerror.ecode = (uint32_t)err;
	}
}

static const struct np_fs_ops *ops_of(const np_req *r)
{
	return r->conn->srv->ops;
}

static struct np_compat_req *cx_of(np_req *r)
{
	return np_sreq_of(r)->compat;
}

/* ---- composite steps ---- */

static void sub_init(struct np_compat_sub *s, const np_req *parent, uint8_t type, np_fid *fid)
{
	memset(&s->q, 0, sizeof s->q);
	np_req *r = &s->q.pub;
	r->ifcall.type = type;
	r->ifcall.tag = parent->ifcall.tag;
	r->ofcall.type = (uint8_t)(type + 1);
	r->ofcall.tag = parent->ifcall.tag;
	r->fid = fid;
	r->conn = parent->conn;
	r->fs = parent->fs;
	r->dialect = parent->dialect;
	r->msize = parent->msize;
	s->q.op = NP_OP_COUNT;
	s->q.sub = s;
	pthread_mutex_init(&s->mu, NULL);
	pthread_cond_init(&s->cv, NULL);
	s->done = 0;
	s->err = 0;
}

void np_compat_sub_respond(struct np_compat_sub *s, int err)
{
	pthread_mutex_lock(&s->mu);
	s->err = err;
	s->done = 1;
	pthread_cond_signal(&s->cv);
	pthread_mutex_unlock(&s->mu);
}

/* Run one step to its end.  A handler that went asynchronous still owns the
 * step's request (and its fids) until it responds, so wait for that; the
 * operation then fails: the adapter needs synchronous handlers. */
static int sub_run(struct np_compat_sub *s, np_handler h)
{
	int err = h ? h(&s->q.pub) : EOPNOTSUPP;
	if (err == NP_ASYNC) {
		pthread_mutex_lock(&s->mu);
		while (!s->done)
			pthread_cond_wait(&s->cv, &s->mu);
		pthread_mutex_unlock(&s->mu);
		np_log(s->q.pub.conn->srv, 0,
		       "conn %u: the backend's %s answered NP_ASYNC inside a 9P2000 operation: "
		       "the adapter needs synchronous handlers (EIO)",
		       s->q.pub.conn->id, np_type_name(s->q.pub.ifcall.type));
		err = EIO;
	}
	pthread_mutex_destroy(&s->mu);
	pthread_cond_destroy(&s->cv);
	return err;
}

/* A fid outside the table, for one composite operation. */
static np_fid *tmp_new(const np_req *r, const np_fid *from)
{
	struct np_sfid *f = calloc(1, r->conn->srv->fid_size);
	if (!f)
		return NULL;
	f->refs = 1;
	f->live = 1;
	f->pub.fid = NP_NOFID;
	f->pub.conn = r->conn;
	f->pub.uid = from->uid;
	f->pub.user = from->user;
	return &f->pub;
}

static void tmp_free(const np_req *r, np_fid *f)
{
	if (!f)
		return;
	if (ops_of(r)->destroy_fid)
		ops_of(r)->destroy_fid(f);
	free(np_sfid_of(f));
}

/* Walk `from` by names[0..n) into `to` (which may be `from`); every name
 * must be walked.  *qid: where it arrived (n > 0). */
static int step_walk(np_req *r, np_fid *from, np_fid *to, uint16_t n, const np_str *names,
		     np_qid *qid)
{
	struct np_compat_sub s;
	sub_init(&s, r, NP_TWALK, from);
	np_req *w = &s.q.pub;
	w->newfid = to;
	w->ifcall.twalk.fid = from->fid;
	w->ifcall.twalk.newfid = to->fid;
	w->ifcall.twalk.nwname = n;
	for (uint16_t i = 0; i < n; i++)
		w->ifcall.twalk.wname[i] = names[i];
	int err = sub_run(&s, ops_of(r)->walk);
	if (!err && w->ofcall.rwalk.nwqid != n)
		err = ENOENT; /* a partial walk: the name after the last qid is missing */
	if (!err && n) {
		if (to != from)
			to->qid = w->ofcall.rwalk.wqid[n - 1];
		if (qid)
			*qid = w->ofcall.rwalk.wqid[n - 1];
	}
	return err;
}

static int step_getattr(np_req *r, np_fid *f, cx_attr *a)
{
	struct np_compat_sub s;
	sub_init(&s, r, NP_TGETATTR, f);
	s.q.pub.ifcall.tgetattr.fid = f->fid;
	s.q.pub.ifcall.tgetattr.request_mask = NP_GETATTR_BASIC;
	int err = sub_run(&s, ops_of(r)->getattr);
	if (!err)
		*a = s.q.pub.ofcall.rgetattr;
	return err;
}

/* The target of symlink f, into cx->link. */
static int step_readlink(np_req *r, struct np_compat_req *cx, np_fid *f, np_str *out)
{
	if (!cx->link && !(cx->link = malloc(CX_LINK_MAX + 1)))
		return ENOMEM;
	struct np_compat_sub s;
	sub_init(&s, r, NP_TREADLINK, f);
	s.q.pub.ifcall.tclunk.fid = f->fid;
	s.q.pub.ofcall.rreadlink.target = np_str_make(cx->link, CX_LINK_MAX);
	int err = sub_run(&s, ops_of(r)->readlink);
	if (err)
		return err;
	np_str t = s.q.pub.ofcall.rreadlink.target;
	uint16_t len = t.len < CX_LINK_MAX ? t.len : CX_LINK_MAX;
	if (t.s != cx->link)
		memmove(cx->link, t.s, len); /* the handler pointed elsewhere */
	cx->link[len] = '\0';
	*out = np_str_make(cx->link, len);
	return 0;
}

static void step_unlink(np_req *r, np_fid *dir, np_str name, uint32_t flags)
{
	if (!ops_of(r)->unlinkat)
		return;
	struct np_compat_sub s;
	sub_init(&s, r, NP_TUNLINKAT, dir);
	s.q.pub.ifcall.tunlinkat.dirfid = dir->fid;
	s.q.pub.ifcall.tunlinkat.name = name;
	s.q.pub.ifcall.tunlinkat.flags = flags;
	(void)sub_run(&s, ops_of(r)->unlinkat);
}

static int step_rename(np_req *r, np_fid *f, np_fid *dir, np_str name)
{
	struct np_compat_sub s;
	sub_init(&s, r, NP_TRENAME, f);
	s.q.pub.fid2 = dir;
	s.q.pub.ifcall.trename.fid = f->fid;
	s.q.pub.ifcall.trename.dfid = dir->fid;
	s.q.pub.ifcall.trename.name = name;
	return sub_run(&s, ops_of(r)->rename);
}

/* ---- translations ---- */

/* Topen/Tcreate mode -> Tlopen flags (OEXEC reads; ORCLOSE is the adapter's). */
static uint32_t lflags_of(uint8_t mode)
{
	uint32_t f = NP_L_O_RDONLY;
	if ((mode & 3) == NP_OWRITE)
		f = NP_L_O_WRONLY;
	else if ((mode & 3) == NP_ORDWR)
		f = NP_L_O_RDWR;
	if (mode & NP_OTRUNC)
		f |= NP_L_O_TRUNC;
	return f;
}

/* Tcreate/Twstat permission bits -> POSIX mode bits (set-id and sticky are
 * only expressible in .u). */
static uint32_t mode_of_perm(uint32_t perm, enum np_dialect d)
{
	uint32_t m = perm & 0777;
	if (d != NP_9P2000) {
		if (perm & NP_DMSETUID)
			m |= S_ISUID;
		if (perm & NP_DMSETGID)
			m |= S_ISGID;
		if (perm & CX_DMSETVTX)
			m |= S_ISVTX;
	}
	return m;
}

/* POSIX mode -> stat.mode.  Plain 9P2000 knows only directories. */
static uint32_t dm_of_mode(uint32_t m, enum np_dialect d)
{
	uint32_t dm = m & 0777;
	if (S_ISDIR(m))
		dm |= NP_DMDIR;
	if (d == NP_9P2000)
		return dm;
	switch (m & S_IFMT) {
	case S_IFLNK: dm |= NP_DMSYMLINK; break;
	case S_IFCHR:
	case S_IFBLK: dm |= NP_DMDEVICE; break;
	case S_IFIFO: dm |= NP_DMNAMEDPIPE; break;
	case S_IFSOCK: dm |= NP_DMSOCKET; break;
	default: break;
	}
	if (m & S_ISUID)
		dm |= NP_DMSETUID;
	if (m & S_ISGID)
		dm |= NP_DMSETGID;
	if (m & S_ISVTX)
		dm |= CX_DMSETVTX;
	return dm;
}

/* A decimal number, all of s; 0 or EINVAL. */
static int parse_u32(const char *s, size_t len, uint32_t *out)
{
	uint64_t v = 0;
	if (len == 0 || len > 10)
		return EINVAL;
	for (size_t i = 0; i < len; i++) {
		if (s[i] < '0' || s[i] > '9')
			return EINVAL;
		v = v * 10 + (uint64_t)(s[i] - '0');
	}
	if (v > UINT32_MAX)
		return EINVAL;
	*out = (uint32_t)v;
	return 0;
}

/* A .u device extension: "b MAJ MIN" or "c MAJ MIN". */
static int parse_dev(np_str e, uint32_t *type, uint32_t *maj, uint32_t *min)
{
	const char *s = e.s, *end = e.s + e.len;
	if (e.len < 5 || (s[0] != 'b' && s[0] != 'c') || s[1] != ' ')
		return EINVAL;
	*type = s[0] == 'b' ? S_IFBLK : S_IFCHR;
	const char *a = s + 2, *sp = memchr(a, ' ', (size_t)(end - a));
	if (!sp || parse_u32(a, (size_t)(sp - a), maj) ||
	    parse_u32(sp + 1, (size_t)(end - sp - 1), min))
		return EINVAL;
	return 0;
}

/* ---- user and group names ---- */

/* uid/gid -> name lookups go through NSS and may be slow, and a directory
 * read asks for the same few ids over and over: a small cache, entries
 * trusted for a minute. */
#define IDC_SLOTS 64
#define IDC_TTL 60

static struct idc_ent {
	uint32_t id;
	uint8_t group, used;
	time_t when;
	char name[CX_IDLEN];
} idc[IDC_SLOTS];
static pthread_mutex_t idc_mu = PTHREAD_MUTEX_INITIALIZER;

static time_t mono_now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec;
}

static void id_lookup(uint32_t id, int group, char *out)
{
	long n = sysconf(group ? _SC_GETGR_R_SIZE_MAX : _SC_GETPW_R_SIZE_MAX);
	size_t cap = n > 1024 ? (size_t)n : 1024;
	snprintf(out, CX_IDLEN, "%u", id);
	for (;;) {
		char *buf = malloc(cap);
		if (!buf)
			return;
		const char *name = NULL;
		int rc;
		struct passwd pw, *pwr = NULL;
		struct group gr, *grr = NULL;
		if (group) {
			rc = getgrgid_r((gid_t)id, &gr, buf, cap, &grr);
			if (!rc && grr)
				name = grr->gr_name;
		} else {
			rc = getpwuid_r((uid_t)id, &pw, buf, cap, &pwr);
			if (!rc && pwr)
				name = pwr->pw_name;
		}
		if (name && strlen(name) < CX_IDLEN)
			strcpy(out, name);
		free(buf);
		if (rc != ERANGE || cap >= (1u << 20))
			return;
		cap *= 2;
	}
}

/* The name of a uid (group 0) or gid (group 1), else its number. */
static void id_name(uint32_t id, int group, char *out)
{
	struct idc_ent *e = &idc[((id * 2654435761u) >> 26 ^ (uint32_t)group) % IDC_SLOTS];
	time_t now = mono_now();
	pthread_mutex_lock(&idc_mu);
	if (e->used && e->id == id && e->group == group && now - e->when < IDC_TTL) {
		memcpy(out, e->name, CX_IDLEN);
		pthread_mutex_unlock(&idc_mu);
		return;
	}
	pthread_mutex_unlock(&idc_mu);
	id_lookup(id, group, out);
	pthread_mutex_lock(&idc_mu);
	e->id = id;
	e->group = (uint8_t)group;
	e->used = 1;
	e->when = now;
	memcpy(e->name, out, CX_IDLEN);
	pthread_mutex_unlock(&idc_mu);
}

/* A Twstat uid/gid string: a number, or a user/group name. */
static int id_parse(np_str s, int group, uint32_t *out)
{
	char name[256];
	if (parse_u32(s.s, s.len, out) == 0)
		return 0;
	if (np_str_copy(name, sizeof name, s) < 0 || memchr(s.s, '\0', s.len))
		return EINVAL;
	long n = sysconf(group ? _SC_GETGR_R_SIZE_MAX : _SC_GETPW_R_SIZE_MAX);
	size_t cap = n > 1024 ? (size_t)n : 1024;
	for (;;) {
		char *buf = malloc(cap);
		if (!buf)
			return ENOMEM;
		int rc, found = 0;
		if (group) {
			struct group gr, *grr = NULL;
			rc = getgrnam_r(name, &gr, buf, cap, &grr);
			if (!rc && grr) {
				*out = grr->gr_gid;
				found = 1;
			}
		} else {
			struct passwd pw, *pwr = NULL;
			rc = getpwnam_r(name, &pw, buf, cap, &pwr);
			if (!rc && pwr) {
				*out = pwr->pw_uid;
				found = 1;
			}
		}
		free(buf);
		if (found)
			return 0;
		if (rc != ERANGE || cap >= (1u << 20))
			return EINVAL; /* no such user or group */
		cap *= 2;
	}
}

/* ---- paths ---- */

/* The last element of a path ("/" for the root). */
static const char *path_base(const char *p)
{
	if (!p)
		return "";
	if (strcmp(p, "/") == 0)
		return p;
	const char *s = strrchr(p, '/');
	return s ? s + 1 : p;
}

/* base walked by names[0..n) (".." goes up, never above "/"); malloc'd,
 * NULL when base is unknown or memory is short. */
static char *path_walk(const char *base, uint16_t n, const np_str *names)
{
	if (!base)
		return NULL;
	size_t len = strlen(base), cap = len + 1;
	for (uint16_t i = 0; i < n; i++)
		cap += names[i].len + 1u;
	char *p = malloc(cap);
	if (!p)
		return NULL;
	memcpy(p, base, len + 1);
	for (uint16_t i = 0; i < n; i++) {
		if (names[i].len == 2 && names[i].s[0] == '.' && names[i].s[1] == '.') {
			char *s = strrchr(p, '/');
			len = s && s != p ? (size_t)(s - p) : 1;
			p[len] = '\0';
			continue;
		}
		if (len > 1)
			p[len++] = '/';
		memcpy(p + len, names[i].s, names[i].len);
		len += names[i].len;
		p[len] = '\0';
	}
	return p;
}

/* Is `anc` the path of p or of one of its ancestors? */
static int path_within(const char *p, const char *anc)
{
	size_t n = strlen(anc);
	if (n == 1)
		return 1; /* "/" */
	return strncmp(p, anc, n) == 0 && (p[n] == '\0' || p[n] == '/');
}

static uint32_t next_tree(void)
{
	static _Atomic uint32_t seq;
	return atomic_fetch_add_explicit(&seq, 1, memory_order_relaxed) + 1;
}

/* ---- stat ---- */

/* Fill st for the file f names, called `name`; strings live in cx (and in
 * name's storage) until the next build_stat. */
static int build_stat(np_req *r, struct np_compat_req *cx, np_fid *f, np_str name, np_stat *st)
{
	cx_attr a;
	int err = step_getattr(r, f, &a);
	if (err)
		return err;
	memset(st, 0, sizeof *st);
	st->qid = a.qid;
	st->mode = dm_of_mode(a.mode, r->dialect);
	st->atime = (uint32_t)a.atime_sec;
	st->mtime = (uint32_t)a.mtime_sec;
	st->length = S_ISDIR(a.mode) ? 0 : a.size; /* 9P: directories have length 0 */
	st->name = name;
	id_name(a.uid, 0, cx->uname);
	id_name(a.gid, 1, cx->gname);
	st->uid = np_strz(cx->uname);
	st->gid = np_strz(cx->gname);
	st->muid = st->uid; /* the last modifier is not recorded: the owner */
	st->extension = np_str_make("", 0);
	if (r->dialect == NP_9P2000)
		return 0;
	st->n_uid = a.uid;
	st->n_gid = a.gid;
	st->n_muid = a.uid;
	if (S_ISLNK(a.mode) && ops_of(r)->readlink) {
		np_str t;
		if (step_readlink(r, cx, f, &t) == 0)
			st->extension = t;
	} else if (S_ISCHR(a.mode) || S_ISBLK(a.mode)) {
		snprintf(cx->dev, sizeof cx->dev, "%c %u %u", S_ISCHR(a.mode) ? 'c' : 'b',
			 major((dev_t)a.rdev), minor((dev_t)a.rdev));
		st->extension = np_strz(cx->dev);
	} else if (S_ISREG(a.mode) || S_ISDIR(a.mode)) {
		/* The .u convention Linux reads for the link count of files and
		 * directories (v9fs_stat2inode); without it every file has one. */
		snprintf(cx->dev, sizeof cx->dev, "HARDLINKCOUNT %llu", (unsigned long long)a.nlink);
		st->extension = np_strz(cx->dev);
	}
	return 0;
}

/* ---- handlers (loop thread or worker) ---- */

static int cx_open(np_req *r)
{
	struct np_compat_sub s;
	sub_init(&s, r, NP_TLOPEN, r->fid);
	s.q.pub.ifcall.tlopen.fid = r->fid->fid;
	s.q.pub.ifcall.tlopen.flags = lflags_of(r->ifcall.topen.mode);
	int err = sub_run(&s, ops_of(r)->lopen);
	if (!err)
		r->ofcall.ropen = s.q.pub.ofcall.ropen;
	return err;
}

/* mkdir / symlink / mknod / link of tcreate's name in r->fid.  *rmflags:
 * how to undo it. */
static int create_special(np_req *r, uint32_t gid, uint32_t *rmflags)
{
	const struct np_fs_ops *ops = ops_of(r);
	const __typeof__(r->ifcall.tcreate) *t = &r->ifcall.tcreate;
	uint32_t fmode = mode_of_perm(t->perm, r->dialect);
	np_fid *d = r->fid;
	struct np_compat_sub s;
	*rmflags = 0;
	if (t->perm & NP_DMDIR) {
		sub_init(&s, r, NP_TMKDIR, d);
		s.q.pub.ifcall.tmkdir.dfid = d->fid;
		s.q.pub.ifcall.tmkdir.name = t->name;
		s.q.pub.ifcall.tmkdir.mode = fmode;
		s.q.pub.ifcall.tmkdir.gid = gid;
		*rmflags = NP_AT_REMOVEDIR;
		return sub_run(&s, ops->mkdir);
	}
	if (t->perm & NP_DMSYMLINK) {
		sub_init(&s, r, NP_TSYMLINK, d);
		s.q.pub.ifcall.tsymlink.fid = d->fid;
		s.q.pub.ifcall.tsymlink.name = t->name;
		s.q.pub.ifcall.tsymlink.symtgt = t->extension;
		s.q.pub.ifcall.tsymlink.gid = gid;
		return sub_run(&s, ops->symlink);
	}
	if (t->perm & NP_DMLINK) {
		sub_init(&s, r, NP_TLINK, d);
		s.q.pub.fid2 = r->fid2;
		s.q.pub.ifcall.tlink.dfid = d->fid;
		s.q.pub.ifcall.tlink.fid = r->fid2->fid;
		s.q.pub.ifcall.tlink.name = t->name;
		return sub_run(&s, ops->link);
	}
	uint32_t type, maj = 0, min = 0;
	if (t->perm & NP_DMDEVICE) {
		if (parse_dev(t->extension, &type, &maj, &min))
			return EINVAL;
	} else {
		type = (t->perm & NP_DMNAMEDPIPE) ? S_IFIFO : S_IFSOCK;
	}
	sub_init(&s, r, NP_TMKNOD, d);
	s.q.pub.ifcall.tmknod.dfid = d->fid;
	s.q.pub.ifcall.tmknod.name = t->name;
	s.q.pub.ifcall.tmknod.mode = type | fmode;
	s.q.pub.ifcall.tmknod.major = maj;
	s.q.pub.ifcall.tmknod.minor = min;
	s.q.pub.ifcall.tmknod.gid = gid;
	return sub_run(&s, ops->mknod);
}

static int cx_create(np_req *r)
{
	const struct np_fs_ops *ops = ops_of(r);
	const __typeof__(r->ifcall.tcreate) *t = &r->ifcall.tcreate;
	np_fid *d = r->fid;
	uint32_t gid = 0;
	int err;

	if (!(t->perm & NP_DMLINK)) {
		cx_attr a;
		if ((err = step_getattr(r, d, &a)))
			return err;
		gid = a.gid; /* as in Plan 9: the group of the directory */
	}
	if (!(t->perm & (NP_DMDIR | CX_SPECIAL))) {
		struct np_compat_sub s;
		sub_init(&s, r, NP_TLCREATE, d);
		s.q.pub.ifcall.tlcreate.fid = d->fid;
		s.q.pub.ifcall.tlcreate.name = t->name;
		/* 9P2000 create of an existing name is an error, never a truncate */
		s.q.pub.ifcall.tlcreate.flags = lflags_of(t->mode) | NP_L_O_CREATE | NP_L_O_EXCL;
		s.q.pub.ifcall.tlcreate.mode = mode_of_perm(t->perm, r->dialect);
		s.q.pub.ifcall.tlcreate.gid = gid;
		err = sub_run(&s, ops->lcreate);
		if (!err)
			r->ofcall.ropen = s.q.pub.ofcall.ropen;
		return err;
	}

	uint32_t rmflags;
	if ((err = create_special(r, gid, &rmflags)))
		return err;
	/* The fid moves to the new file. */
	np_qid qid;
	if ((err = step_walk(r, d, d, 1, &t->name, &qid))) {
		step_unlink(r, d, t->name, rmflags);
		return err;
	}
	if (!(t->perm & NP_DMDIR)) {
		/* Special files are not opened (a fifo would block): the fid
		 * just names the new file. */
		r->ofcall.ropen.qid = qid;
		r->ofcall.ropen.iounit = 0;
		return 0;
	}
	struct np_compat_sub s;
	sub_init(&s, r, NP_TLOPEN, d);
	s.q.pub.ifcall.tlopen.fid = d->fid;
	s.q.pub.ifcall.tlopen.flags = lflags_of(t->mode);
	err = sub_run(&s, ops->lopen);
	if (!err) {
		r->ofcall.ropen = s.q.pub.ofcall.ropen;
		return 0;
	}
	/* Undo: back to the parent (the core still thinks the fid is there). */
	np_str up = np_strz("..");
	if (step_walk(r, d, d, 1, &up, NULL) == 0)
		step_unlink(r, d, t->name, rmflags);
	else
		np_log(r->conn->srv, 0, "conn %u: Tcreate of a directory failed and fid %u "
		       "could not walk back to its parent", r->conn->id, d->fid);
	return err;
}

static int cx_stat(np_req *r)
{
	struct np_compat_req *cx = cx_of(r);
	return build_stat(r, cx, r->fid, np_strz(path_base(cx->path)), &r->ofcall.rstat.stat);
}

/* Twstat's rename: find the parent from fid2 by path, make sure it is this
 * file's parent, rename.  *parent: the parent fid (to undo with). */
static int wstat_rename(np_req *r, struct np_compat_req *cx, const cx_attr *cur, np_fid **parent)
{
	np_fid *p = tmp_new(r, r->fid2);
	if (!p)
		return ENOMEM;
	np_str names[NP_MAXWELEM];
	uint16_t n = 0;
	np_fid *from = r->fid2;
	const char *w = cx->walk;
	int err = 0, walked = 0;
	while (!err) {
		while (*w == '/')
			w++;
		if (*w) {
			const char *e = strchr(w, '/');
			size_t len = e ? (size_t)(e - w) : strlen(w);
			names[n++] = np_str_make(w, (uint16_t)len);
			w += len;
		}
		if (n == NP_MAXWELEM || (!*w && (n || !walked))) {
			err = step_walk(r, from, p, n, names, NULL);
			from = p;
			walked = 1;
			n = 0;
		}
		if (!*w && walked)
			break;
	}
	if (err == ENOENT || err == ENOTDIR)
		err = EXDEV; /* the recorded path is stale */
	np_qid q = {0};
	if (!err) {
		/* A path goes stale when a directory above is renamed: check
		 * that this really is the parent before moving anything. */
		np_fid *chk = tmp_new(r, p);
		np_str old = np_strz(path_base(cx->path));
		err = chk ? step_walk(r, p, chk, 1, &old, &q) : ENOMEM;
		tmp_free(r, chk);
		if (!err && q.path != cur->qid.path)
			err = EXDEV;
		else if (err == ENOENT || err == ENOTDIR)
			err = EXDEV;
	}
	if (!err)
		err = step_rename(r, r->fid, p, r->ifcall.twstat.stat.name);
	if (err) {
		tmp_free(r, p);
		return err;
	}
	*parent = p;
	return 0;
}

static int cx_wstat(np_req *r)
{
	struct np_compat_req *cx = cx_of(r);
	const np_stat *ns = &r->ifcall.twstat.stat;
	const uint32_t none32 = ~0u;
	cx_attr cur;
	int err = step_getattr(r, r->fid, &cur);
	if (err)
		return err;

	/* What 9P2000 does not let a client change (a client may send back a
	 * whole stat it read: unchanged values are fine). */
	if ((ns->type != 0xFFFF && ns->type != 0) || (ns->dev != none32 && ns->dev != 0))
		return EINVAL;
	if (!(ns->qid.type == 0xFF && ns->qid.version == none32 && ns->qid.path == ~0ull) &&
	    (ns->qid.type != cur.qid.type || ns->qid.path != cur.qid.path))
		return EINVAL;

	cx_setattr s;
	memset(&s, 0, sizeof s);
	s.fid = r->fid->fid;
	if (ns->mode != none32) {
		if (!(ns->mode & NP_DMDIR) != !S_ISDIR(cur.mode))
			return EPERM; /* the directory bit is fixed */
		uint32_t m = mode_of_perm(ns->mode, r->dialect);
		if (r->dialect == NP_9P2000)
			m |= cur.mode & 07000; /* bits plain 9P2000 cannot express stay */
		if (m != (cur.mode & 07777)) {
			s.valid |= NP_SETATTR_MODE;
			s.mode = m;
		}
	}
	if (ns->atime != none32 && ns->atime != (uint32_t)cur.atime_sec) {
		s.valid |= NP_SETATTR_ATIME | NP_SETATTR_ATIME_SET;
		s.atime_sec = ns->atime;
	}
	if (ns->mtime != none32 && ns->mtime != (uint32_t)cur.mtime_sec) {
		s.valid |= NP_SETATTR_MTIME | NP_SETATTR_MTIME_SET;
		s.mtime_sec = ns->mtime;
	}
	if (ns->length != ~0ull && ns->length != (S_ISDIR(cur.mode) ? 0 : cur.size)) {
		s.valid |= NP_SETATTR_SIZE;
		s.size = ns->length;
	}
	uint32_t id;
	int have = 0;
	if (r->dialect != NP_9P2000 && ns->n_uid != none32)
		id = ns->n_uid, have = 1;
	else if (ns->uid.len && !(err = id_parse(ns->uid, 0, &id)))
		have = 1;
	if (err)
		return err;
	if (have && id != cur.uid) {
		s.valid |= NP_SETATTR_UID;
		s.uid = id;
	}
	have = 0;
	if (r->dialect != NP_9P2000 && ns->n_gid != none32)
		id = ns->n_gid, have = 1;
	else if (ns->gid.len && !(err = id_parse(ns->gid, 1, &id)))
		have = 1;
	if (err)
		return err;
	if (have && id != cur.gid) {
		s.valid |= NP_SETATTR_GID;
		s.gid = id;
	}

	/* 9P2000 wants all or nothing: the rename (the likelier failure)
	 * first, undone if the attributes are then refused. */
	np_fid *parent = NULL;
	if (cx->rename && (err = wstat_rename(r, cx, &cur, &parent)))
		return err;
	if (s.valid) {
		struct np_compat_sub sub;
		sub_init(&sub, r, NP_TSETATTR, r->fid);
		sub.q.pub.ifcall.tsetattr = s;
		err = sub_run(&sub, ops_of(r)->setattr);
		if (err && parent)
			(void)step_rename(r, r->fid, parent, np_strz(path_base(cx->path)));
	}
	tmp_free(r, parent);
	return err;
}

/* One directory entry as a stat into buf[0..cap): *w bytes, 0 if it does
 * not fit. */
static int dir_entry(np_req *r, struct np_compat_req *cx, const np_dirent *de, uint8_t *buf,
		     size_t cap, size_t *w)
{
	np_fid *f = tmp_new(r, r->fid);
	if (!f)
		return ENOMEM;
	np_stat st;
	/* "." is the directory itself: a clone, not a walk by name. */
	int dot = de->name.len == 1 && de->name.s[0] == '.';
	int err = step_walk(r, r->fid, f, dot ? 0 : 1, &de->name, NULL);
	if (!err)
		err = build_stat(r, cx, f, de->name, &st);
	if (!err)
		*w = np_stat_encode(&st, r->dialect, buf, cap);
	tmp_free(r, f);
	return err;
}

static int is_dot(np_str n)
{
	return (n.len == 1 && n.s[0] == '.') || (n.len == 2 && n.s[0] == '.' && n.s[1] == '.');
}

/* A 9P2000 directory read: whole stat entries from where the last read
 * stopped (cx->cookie), never skipping one that did not fit. */
static int cx_dirread(np_req *r)
{
	struct np_compat_req *cx = cx_of(r);
	uint8_t *out = (uint8_t *)(uintptr_t)r->ofcall.rread.data;
	uint32_t room = r->ofcall.rread.count, pos = 0;
	uint64_t cookie = cx->cookie;
	int err = 0, full = 0;
	uint8_t *batch = malloc(CX_DIRBATCH);
	if (!batch)
		return ENOMEM;
	while (!full && !err) {
		struct np_compat_sub s;
		sub_init(&s, r, NP_TREADDIR, r->fid);
		np_req *rd = &s.q.pub;
		rd->ifcall.tread.fid = r->fid->fid;
		rd->ifcall.tread.offset = cookie;
		rd->ifcall.tread.count = CX_DIRBATCH;
		rd->ofcall.rread.data = batch;
		rd->ofcall.rread.count = CX_DIRBATCH;
		if ((err = sub_run(&s, ops_of(r)->readdir)))
			break;
		uint32_t n = rd->ofcall.rread.count, at = 0;
		if (n == 0)
			break; /* the end of the directory */
		uint64_t before = cookie;
		np_dirent de;
		int k;
		while ((k = np_dirent_next(batch, n, &at, &de)) > 0) {
			size_t w = 0;
			/* Plan 9 directories have no "." and "..", but Unix clients
			 * (the kernel's v9fs on 9P2000.u) list only what we send. */
			if (!is_dot(de.name) || r->dialect == NP_9P2000U) {
				err = dir_entry(r, cx, &de, out + pos, room - pos, &w);
				if (err == ENOENT)
					err = 0; /* removed since the readdir: gone */
				else if (err)
					break;
				else if (w == 0) {
					full = 1;
					break;
				}
			}
			pos += (uint32_t)w;
			cookie = de.offset;
		}
		if (!err && !full && (k < 0 || cookie == before))
			err = EIO; /* the backend's readdir does not advance */
	}
	free(batch);
	if (pos == 0 && err)
		return err;
	if (pos == 0 && full)
		return EINVAL; /* count is too small for the next entry */
	/* Entries read so far stand; an error comes back on the next read. */
	r->ofcall.rread.count = pos;
	cx->off += pos;
	cx->cookie = cookie;
	return 0;
}

/* Tclunk of an ORCLOSE fid. */
static int cx_rclose(np_req *r)
{
	const struct np_fs_ops *ops = ops_of(r);
	struct np_compat_sub s;
	int err = 0;
	if (ops->clunk) {
		sub_init(&s, r, NP_TCLUNK, r->fid);
		s.q.pub.ifcall.tclunk.fid = r->fid->fid;
		err = sub_run(&s, ops->clunk);
	}
	sub_init(&s, r, NP_TREMOVE, r->fid);
	s.q.pub.ifcall.tclunk.fid = r->fid->fid;
	int rerr = sub_run(&s, ops->remove);
	return err ? err : rerr;
}

/* ---- prepare (loop thread) ---- */

static int hold_fid(struct np_conn *c, uint32_t fidno, np_fid **slot)
{
	struct np_sfid *f = np_fid_lookup(c, fidno);
	if (!f || !f->live)
		return EBADF;
	f->refs++;
	*slot = &f->pub;
	return 0;
}

static struct np_compat_req *cx_new(struct np_sreq *q, const np_fid *f)
{
	q->compat = calloc(1, sizeof *q->compat);
	if (q->compat && f) {
		const char *p = np_sfid_of((np_fid *)(uintptr_t)f)->name;
		if (p && !(q->compat->path = strdup(p))) {
			free(q->compat);
			q->compat = NULL;
		}
	}
	return q->compat;
}

#define OPB(op) NP_OP_BIT(NP_OP_##op)

static np_handler prep_open(struct np_conn *c, struct np_sreq *q, int *err)
{
	np_req *r = &q->pub;
	q->op = NP_OP_LOPEN;
	if ((*err = hold_fid(c, r->ifcall.topen.fid, &r->fid)))
		return NULL;
	if (r->fid->opened) {
		*err = EBADF;
		return NULL;
	}
	return c->srv->ops->lopen ? cx_open : NULL;
}

static np_handler prep_create(struct np_conn *c, struct np_sreq *q, int *err)
{
	const struct np_fs_ops *ops = c->srv->ops;
	np_req *r = &q->pub;
	const __typeof__(r->ifcall.tcreate) *t = &r->ifcall.tcreate;
	uint32_t special = t->perm & CX_SPECIAL;
	np_handler step;

	q->op = NP_OP_LCREATE;
	if ((*err = hold_fid(c, t->fid, &r->fid)))
		return NULL;
	if (r->fid->opened) {
		*err = EBADF;
		return NULL;
	}
	if (!(r->fid->qid.type & NP_QTDIR)) {
		*err = ENOTDIR;
		return NULL;
	}
	/* The .u file types: not in plain 9P2000, one at a time, never with
	 * DMDIR. */
	if (special && (c->dialect == NP_9P2000 || (t->perm & NP_DMDIR) ||
			(special & (special - 1)))) {
		*err = EINVAL;
		return NULL;
	}
	uint64_t need = OPB(GETATTR);
	if (t->perm & NP_DMDIR) {
		if ((t->mode & 3) == NP_OWRITE || (t->mode & 3) == NP_ORDWR || (t->mode & NP_OTRUNC)) {
			*err = EISDIR; /* a directory is only ever open for reading */
			return NULL;
		}
		need |= OPB(MKDIR) | OPB(WALK) | OPB(LOPEN) | OPB(UNLINKAT);
		step = ops->lopen ? ops->mkdir : NULL;
	} else if (t->perm & NP_DMSYMLINK) {
		need |= OPB(SYMLINK) | OPB(WALK) | OPB(UNLINKAT);
		step = ops->symlink;
	} else if (t->perm & NP_DMLINK) {
		uint32_t target;
		size_t n = t->extension.len;
		while (n && (t->extension.s[n - 1] == '\n' || t->extension.s[n - 1] == ' '))
			n--; /* Linux sends "%d\n" */
		if (parse_u32(t->extension.s, n, &target)) {
			*err = EINVAL;
			return NULL;
		}
		if ((*err = hold_fid(c, target, &r->fid2)))
			return NULL;
		need = OPB(LINK) | OPB(WALK) | OPB(UNLINKAT);
		step = ops->link;
	} else if (special) {
		need |= OPB(MKNOD) | OPB(WALK) | OPB(UNLINKAT);
		step = ops->mknod;
	} else {
		need |= OPB(LCREATE);
		step = ops->lcreate;
	}
	if (!step || !ops->getattr || ((need & OPB(WALK)) && !ops->walk)) {
		*err = EOPNOTSUPP;
		return NULL;
	}
	q->need_ops = need;
	return cx_create;
}

static np_handler prep_stat(struct np_conn *c, struct np_sreq *q, int *err)
{
	const struct np_fs_ops *ops = c->srv->ops;
	np_req *r = &q->pub;
	q->op = NP_OP_GETATTR;
	if ((*err = hold_fid(c, r->ifcall.tclunk.fid, &r->fid)))
		return NULL;
	if (!ops->getattr)
		return NULL;
	if (!cx_new(q, r->fid)) {
		*err = ENOMEM;
		return NULL;
	}
	q->need_ops = OPB(GETATTR) | (c->dialect == NP_9P2000U && ops->readlink ? OPB(READLINK) : 0);
	return cx_stat;
}

/* The table's fid of the same attach whose path is the longest ancestor of
 * `dir` (the fid renamed is never one: it is below dir). */
static struct np_sfid *find_ancestor(struct np_conn *c, uint32_t tree, const char *dir)
{
	struct np_sfid *best = NULL;
	size_t bestlen = 0;
	for (uint32_t i = 0; c->fidtab && i <= c->fidmask; i++)
		for (struct np_sfid *f = c->fidtab[i]; f; f = f->hnext) {
			if (!f->live || f->tree != tree || !f->name || !(f->pub.qid.type & NP_QTDIR) ||
			    !path_within(dir, f->name))
				continue;
			size_t len = strlen(f->name);
			if (!best || len > bestlen) {
				best = f;
				bestlen = len;
			}
		}
	return best;
}

static int valid_name(np_str n)
{
	return n.len && !is_dot(n) && !memchr(n.s, '/', n.len) && !memchr(n.s, '\0', n.len);
}

static np_handler prep_wstat(struct np_conn *c, struct np_sreq *q, int *err)
{
	const struct np_fs_ops *ops = c->srv->ops;
	np_req *r = &q->pub;
	np_str nn = r->ifcall.twstat.stat.name;
	q->op = NP_OP_SETATTR;
	if ((*err = hold_fid(c, r->ifcall.twstat.fid, &r->fid)))
		return NULL;
	if (!ops->getattr || !ops->setattr)
		return NULL;
	struct np_compat_req *cx = cx_new(q, r->fid);
	if (!cx) {
		*err = ENOMEM;
		return NULL;
	}
	q->need_ops = OPB(GETATTR) | OPB(SETATTR);
	if (!nn.len || (cx->path && np_str_eq(nn, path_base(cx->path))))
		return cx_wstat; /* no rename */
	if (!valid_name(nn)) {
		*err = EINVAL;
		return NULL;
	}
	if (!ops->rename || !ops->walk) {
		*err = EOPNOTSUPP;
		return NULL;
	}
	if (cx->path && strcmp(cx->path, "/") == 0) {
		*err = EBUSY; /* the root of the tree */
		return NULL;
	}
	/* The parent is found by path from a fid the client holds above it
	 * (its attach fid at least); none means a move we cannot do here. */
	struct np_sfid *anc = NULL;
	const char *slash = cx->path ? strrchr(cx->path, '/') : NULL;
	if (slash) {
		size_t dlen = slash == cx->path ? 1 : (size_t)(slash - cx->path);
		char *dir = strndup(cx->path, dlen);
		if (!dir) {
			*err = ENOMEM;
			return NULL;
		}
		anc = find_ancestor(c, np_sfid_of(r->fid)->tree, dir);
		if (anc)
			cx->walk = strdup(dir + (strlen(anc->name) == 1 ? 0 : strlen(anc->name)));
		free(dir);
		if (anc && !cx->walk) {
			*err = ENOMEM;
			return NULL;
		}
	}
	if (!anc) {
		*err = EXDEV;
		return NULL;
	}
	anc->refs++;
	r->fid2 = &anc->pub;
	cx->rename = 1;
	q->need_ops |= OPB(WALK) | OPB(RENAME);
	return cx_wstat;
}

/* Tread of an open directory fid (resolved by prepare()). */
static np_handler prep_dirread(struct np_conn *c, struct np_sreq *q, int *err)
{
	const struct np_fs_ops *ops = c->srv->ops;
	np_req *r = &q->pub;
	struct np_sfid *sf = np_sfid_of(r->fid);
	uint64_t off = r->ifcall.tread.offset;
	q->op = NP_OP_READDIR;
	if (!ops->readdir || !ops->walk || !ops->getattr)
		return NULL;
	/* 9P2000: a directory is read from its start or from where the last
	 * read ended; anything else would land inside an entry. */
	if (off != 0 && off != sf->dir_off) {
		*err = EINVAL;
		return NULL;
	}
	struct np_compat_req *cx = cx_new(q, NULL);
	if (!cx) {
		*err = ENOMEM;
		return NULL;
	}
	cx->off = off;
	cx->cookie = off ? sf->dir_cookie : 0;
	uint32_t n = r->ifcall.tread.count;
	uint32_t max = c->msize - NP_IOHDRSZ, room = q->rbuf->cap - NP_RREAD_DATA;
	if (n > max)
		n = max;
	if (n > room)
		n = room;
	r->ofcall.rread.data = q->rbuf->data + NP_RREAD_DATA;
	r->ofcall.rread.count = n;
	q->need_ops = OPB(READDIR) | OPB(WALK) | OPB(GETATTR) |
		      (c->dialect == NP_9P2000U && ops->readlink ? OPB(READLINK) : 0);
	return cx_dirread;
}

np_handler np_compat_prepare(struct np_conn *c, struct np_sreq *q, int *err)
{
	const struct np_fs_ops *ops = c->srv->ops;
	np_req *r = &q->pub;
	np_handler h = NULL;
	int e = 0;

	if (c->dialect == NP_9P2000L) {
		/* .L has Tlopen, Tgetattr, ... for these. */
		*err = EOPNOTSUPP;
		return NULL;
	}
	switch (r->ifcall.type) {
	case NP_TOPEN:
		h = prep_open(c, q, &e);
		break;
	case NP_TCREATE:
		h = prep_create(c, q, &e);
		break;
	case NP_TSTAT:
		h = prep_stat(c, q, &e);
		break;
	case NP_TWSTAT:
		h = prep_wstat(c, q, &e);
		break;
	case NP_TREAD:
		h = prep_dirread(c, q, &e);
		break;
	case NP_TCLUNK:
		/* ORCLOSE: the fid is already out of the table (prepare()). */
		q->op = NP_OP_CLUNK;
		if (!ops->remove) {
			*err = 0;
			return ops->clunk; /* NULL is fine: the core releases the fid */
		}
		q->need_ops = OPB(REMOVE) | (ops->clunk ? OPB(CLUNK) : 0);
		return cx_rclose;
	default:
		break;
	}
	*err = h ? 0 : (e ? e : EOPNOTSUPP);
	return h;
}

/* ---- after completion (loop thread) ---- */

static void set_path(struct np_sfid *f, char *p)
{
	free(f->name);
	f->name = p;
}

/* A rename moved cx->path: every fid of the tree at or below it follows. */
static void rename_paths(struct np_conn *c, struct np_sreq *q)
{
	struct np_compat_req *cx = q->compat;
	const char *old = cx->path;
	np_str nn = q->pub.ifcall.twstat.stat.name;
	uint32_t tree = np_sfid_of(q->pub.fid)->tree;
	if (!old || strcmp(old, "/") == 0)
		return;
	const char *slash = strrchr(old, '/');
	size_t dlen = (size_t)(slash - old), oldlen = strlen(old);
	for (uint32_t i = 0; c->fidtab && i <= c->fidmask; i++)
		for (struct np_sfid *f = c->fidtab[i]; f; f = f->hnext) {
			if (f->tree != tree || !f->name || !path_within(f->name, old))
				continue;
			const char *rest = f->name + oldlen;
			size_t n = dlen + 1 + nn.len + strlen(rest) + 1;
			char *p = malloc(n);
			if (p) {
				memcpy(p, old, dlen);
				p[dlen] = '/';
				memcpy(p + dlen + 1, nn.s, nn.len);
				strcpy(p + dlen + 1 + nn.len, rest);
			}
			set_path(f, p);
		}
}

void np_compat_post(struct np_conn *c, struct np_sreq *q, int ok)
{
	np_req *r = &q->pub;
	const np_fcall *t = &r->ifcall;
	struct np_sfid *f;
	if (!ok)
		return;
	switch (t->type) {
	case NP_TATTACH:
		f = np_sfid_of(r->newfid);
		set_path(f, strdup("/"));
		f->tree = next_tree();
		break;
	case NP_TWALK:
		if (r->ofcall.rwalk.nwqid != t->twalk.nwname)
			break; /* partial: nothing moved */
		f = np_sfid_of(r->newfid);
		set_path(f, path_walk(np_sfid_of(r->fid)->name, t->twalk.nwname, t->twalk.wname));
		f->tree = np_sfid_of(r->fid)->tree;
		break;
	case NP_TOPEN:
	case NP_TCREATE: {
		uint8_t mode = t->type == NP_TOPEN ? t->topen.mode : t->tcreate.mode;
		f = np_sfid_of(r->fid);
		r->fid->open_flags = lflags_of(mode); /* what the backend was asked */
		f->rclose = (mode & NP_ORCLOSE) != 0;
		f->dir_off = f->dir_cookie = 0;
		if (t->type == NP_TCREATE)
			set_path(f, path_walk(f->name, 1, &t->tcreate.name));
		break;
	}
	case NP_TWSTAT:
		if (q->compat && q->compat->rename)
			rename_paths(c, q);
		break;
	case NP_TREAD:
		if (q->compat) { /* a directory read */
			f = np_sfid_of(r->fid);
			f->dir_off = q->compat->off;
			f->dir_cookie = q->compat->cookie;
		}
		break;
	default:
		break;
	}
}

void np_compat_release(struct np_sreq *q)
{
	struct np_compat_req *cx = q->compat;
	q->compat = NULL;
	free(cx->path);
	free(cx->walk);
	free(cx->link);
	free(cx);
}

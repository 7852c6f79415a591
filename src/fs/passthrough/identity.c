/* Who a request runs as: attach-time user resolution and per-thread
 * fsuid/fsgid/groups switching. */
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <pwd.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "pt_internal.h"

/* The identity the calling thread currently has; UINT64_MAX: not known (a
 * new thread inherits whatever its creator had). */
static _Thread_local uint64_t pt_cur_serial = UINT64_MAX;
static atomic_uint_fast64_t pt_next_serial = 1;

static struct pt_ident *ident_alloc(uid_t uid, gid_t gid, const gid_t *groups, int n)
{
	struct pt_ident *id = calloc(1, sizeof(*id) + (size_t)n * sizeof(gid_t));
	if (!id)
		return NULL;
	id->uid = uid;
	id->gid = gid;
	id->ngroups = n;
	if (n)
		memcpy(id->groups, groups, (size_t)n * sizeof(gid_t));
	return id;
}

struct pt_ident *np_pt_ident_self(uint64_t serial)
{
	int n = getgroups(0, NULL);
	if (n < 0)
		return NULL;
	gid_t *g = calloc((size_t)n + 1, sizeof(gid_t));
	if (!g)
		return NULL;
	n = getgroups(n, g);
	struct pt_ident *id = n < 0 ? NULL : ident_alloc(geteuid(), getegid(), g, n);
	free(g);
	if (id)
		id->serial = serial;
	return id;
}

int np_pt_become(np_passthrough *fs, const struct pt_ident *id)
{
	if (pt_cur_serial == id->serial)
		return 0;
	if (id->serial == 0 && fs->self->uid != 0) {
		/* An unprivileged server never switched: nothing to restore. */
		pt_cur_serial = 0;
		return 0;
	}
	/* Raw system calls: the glibc wrappers would change every thread of
	 * the process (they broadcast the change for POSIX semantics). */
	pt_cur_serial = UINT64_MAX;
	if (syscall(SYS_setgroups, (size_t)id->ngroups, id->groups) < 0)
		return errno;
	syscall(SYS_setfsgid, id->gid);
	syscall(SYS_setfsuid, id->uid);
	/* setfs*id() report no error: check by reading the values back. */
	if ((uid_t)syscall(SYS_setfsuid, (uid_t)-1) != id->uid ||
	    (gid_t)syscall(SYS_setfsgid, (gid_t)-1) != id->gid)
		return EPERM;
	pt_cur_serial = id->serial;
	return 0;
}

void np_passthrough_thread_reset(void)
{
	if (pt_cur_serial == 0 || pt_cur_serial == UINT64_MAX)
		return;
	struct pt_ident *self = np_pt_ident_self(0);
	if (!self)
		return;
	if (self->uid == 0) {
		syscall(SYS_setgroups, (size_t)self->ngroups, self->groups);
		syscall(SYS_setfsgid, self->gid);
		syscall(SYS_setfsuid, self->uid);
	}
	pt_cur_serial = 0;
	free(self);
}

/* getpw*_r with a growing buffer; 0 with *pw filled (and *buf owned by the
 * caller), ENOENT when there is no such user, another errno on failure. */
static int pw_lookup(const char *name, uid_t uid, struct passwd *pw, char **buf)
{
	size_t len = 4096;
	for (;;) {
		char *b = malloc(len);
		if (!b)
			return ENOMEM;
		struct passwd *res = NULL;
		int e = name ? getpwnam_r(name, pw, b, len, &res) : getpwuid_r(uid, pw, b, len, &res);
		if (e == ERANGE && len < (1u << 20)) {
			free(b);
			len *= 2;
			continue;
		}
		if (e || !res) {
			free(b);
			return e ? e : ENOENT;
		}
		*buf = b;
		return 0;
	}
}

static struct pt_ident *ident_find(np_passthrough *fs, uid_t uid, gid_t gid)
{
	for (struct pt_ident *id = fs->idents; id; id = id->next)
		if (id->uid == uid && id->gid == gid)
			return id;
	return NULL;
}

struct pt_ident *np_pt_ident_for_uid(np_passthrough *fs, uid_t uid, gid_t gid, const char *name)
{
	pthread_mutex_lock(&fs->lock);
	struct pt_ident *id = ident_find(fs, uid, gid);
	pthread_mutex_unlock(&fs->lock);
	if (id)
		return id;

	/* Supplementary groups from the user database (outside the lock: it
	 * may be slow); a user without an entry gets only its gid. */
	struct passwd pw;
	char *pwbuf = NULL;
	if (!name && pw_lookup(NULL, uid, &pw, &pwbuf) == 0)
		name = pw.pw_name;
	int n = 1;
	gid_t *groups = calloc(1, sizeof(gid_t));
	if (groups)
		groups[0] = gid;
	if (groups && name) {
		int want = 32;
		for (int tries = 0; tries < 8; tries++) {
			gid_t *g = realloc(groups, (size_t)want * sizeof(gid_t));
			if (!g)
				break;
			groups = g;
			int got = want;
			if (getgrouplist(name, gid, groups, &got) >= 0) {
				n = got;
				break;
			}
			want = got > want ? got : want * 2;
		}
	}
	struct pt_ident *nid = groups ? ident_alloc(uid, gid, groups, n) : NULL;
	free(groups);
	free(pwbuf);
	if (!nid)
		return NULL;
	nid->serial = atomic_fetch_add(&pt_next_serial, 1);

	pthread_mutex_lock(&fs->lock);
	id = ident_find(fs, uid, gid);
	if (!id) {
		nid->next = fs->idents;
		fs->idents = nid;
		id = nid;
		nid = NULL;
	}
	pthread_mutex_unlock(&fs->lock);
	free(nid);
	return id;
}

void np_pt_ident_free_all(np_passthrough *fs)
{
	struct pt_ident *id = fs->idents;
	while (id) {
		struct pt_ident *next = id->next;
		free(id);
		id = next;
	}
	fs->idents = NULL;
	fs->squash = NULL;
}

int np_pt_ident_resolve(np_passthrough *fs, np_str uname, uint32_t n_uname, uid_t *uid,
			struct pt_ident **out)
{
	*out = NULL;
	int need_db = fs->idmode == NP_PT_ID_MULTI_USER || fs->allow;
	struct passwd pw;
	char *pwbuf = NULL;
	int have_pw = 0;

	if (n_uname != NP_NONUNAME) {
		*uid = n_uname;
	} else if (need_db) {
		char name[256];
		if (uname.len == 0 || np_str_copy(name, sizeof(name), uname) < 0 ||
		    memchr(uname.s, '\0', uname.len))
			return EACCES;
		int e = pw_lookup(name, 0, &pw, &pwbuf);
		if (e)
			return e == ENOENT ? EACCES : e;
		have_pw = 1;
		*uid = pw.pw_uid;
	} else {
		*uid = NP_NONUNAME;
	}

	if (fs->allow) {
		size_t i;
		for (i = 0; i < fs->nallow; i++)
			if (fs->allow[i] == *uid)
				break;
		if (i == fs->nallow) {
			free(pwbuf);
			return EACCES;
		}
	}

	int e = 0;
	switch (fs->idmode) {
	case NP_PT_ID_SERVER:
		break;
	case NP_PT_ID_SQUASH:
		*out = fs->squash;
		break;
	case NP_PT_ID_MULTI_USER:
		if (!have_pw) {
			e = pw_lookup(NULL, *uid, &pw, &pwbuf);
			if (e) {
				/* Unknown users have no group to run with. */
				e = e == ENOENT ? EACCES : e;
				break;
			}
		}
		*out = np_pt_ident_for_uid(fs, pw.pw_uid, pw.pw_gid, pw.pw_name);
		if (!*out)
			e = ENOMEM;
		break;
	}
	free(pwbuf);
	return e;
}

void np_pt_fix_gid(np_passthrough *fs, const struct pt_ident *id, int fd, const struct stat *st,
		   uint32_t gid)
{
	(void)fs;
	if (gid == NP_NONUNAME || gid == st->st_gid)
		return;
	/* The kernel (running with fsuid/groups of the user) refuses a group
	 * the user is not in; with the server's own credentials as root the
	 * client is trusted like the server itself.  Best effort: the file
	 * exists already, and keeps the group it was created with on error. */
	if (id && id->uid != 0) {
		int ok = gid == id->gid;
		for (int i = 0; !ok && i < id->ngroups; i++)
			ok = id->groups[i] == gid;
		if (!ok)
			return;
	}
	if (fchownat(fd, "", (uid_t)-1, gid, AT_EMPTY_PATH | AT_SYMLINK_NOFOLLOW) < 0)
		return;
}

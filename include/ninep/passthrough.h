/* ninep passthrough backend: export a local directory over 9P2000.L.
 *
 * Every fid holds an O_PATH descriptor of its file, obtained one name at a
 * time beneath the export root without following symlinks, and every
 * operation is a *at() call relative to such descriptors: the export root
 * cannot be escaped by "..", symlinks (the client resolves them) or names
 * swapped between two requests.  Device nodes, FIFOs and sockets are never
 * opened for I/O unless allow_special is set.
 *
 *     struct np_passthrough_opts o = { .root = "/srv/export" };
 *     np_passthrough *fs;
 *     char err[256];
 *     if (np_passthrough_new(&o, &fs, err, sizeof err) != 0) ...
 *     np_server *s = np_server_new(np_passthrough_ops(fs), fs, &sopts);
 *     ... np_server_free(s); np_passthrough_free(fs);
 */
#ifndef NINEP_PASSTHROUGH_H
#define NINEP_PASSTHROUGH_H

#include <stddef.h>
#include <sys/types.h>

#include "ninep/server.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct np_passthrough np_passthrough;

/* Whose credentials file system calls are made with. */
enum np_passthrough_identity {
	/* Every request runs as the server process itself. */
	NP_PT_ID_SERVER = 0,
	/* (root only) Each request runs with the attaching user's fsuid, fsgid
	 * and supplementary groups (n_uname, else uname via the user database;
	 * unknown users are refused with EACCES). */
	NP_PT_ID_MULTI_USER,
	/* (root only) Everyone runs as squash_uid/squash_gid (plus the
	 * supplementary groups of squash_uid's user database entry). */
	NP_PT_ID_SQUASH,
};

struct np_passthrough_opts {
	const char *root;       /* the directory to export (required) */
	enum np_passthrough_identity identity;
	uid_t squash_uid;       /* NP_PT_ID_SQUASH */
	gid_t squash_gid;
	/* When non-NULL, only these uids may attach (others get EACCES).  The
	 * uid is the attach's n_uname, else its uname looked up by name. */
	const uid_t *allow_users;
	size_t n_allow_users;
	int read_only;          /* refuse every modification with EROFS */
	/* Allow Tlopen of device nodes, FIFOs and sockets (refused with EPERM
	 * otherwise).  Opening a FIFO may block: lopen then leaves the inline
	 * set. */
	int allow_special;
	/* Slow disks: run read, write and readdir on worker threads instead of
	 * the connection's loop thread. */
	int blocking_io;
};

/* Open the export.  Returns 0, or an errno with a message in err. */
int np_passthrough_new(const struct np_passthrough_opts *o, np_passthrough **out,
		       char *err, size_t errlen);
/* After the server using it is freed. */
void np_passthrough_free(np_passthrough *fs);
/* The handler table for np_server_new (inline_ops reflect the options). */
const struct np_fs_ops *np_passthrough_ops(const np_passthrough *fs);

/* Handlers switch the calling thread's fsuid/fsgid/groups (multi-user and
 * squash modes) and leave them set, so that the next request of the same
 * user costs no system call.  A thread that ran handlers and then wants to
 * touch files as the process (or create threads) calls this first. */
void np_passthrough_thread_reset(void);

#ifdef __cplusplus
}
#endif
#endif

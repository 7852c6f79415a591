/* fuzz-server-passthrough: the session target (fuzz_server.c) serving a
 * temporary directory through the passthrough backend.
 *
 * Once per process: TMP=$TMPDIR/ninep-fuzz-XXXXXX and the export TMP/export,
 * served with blocking_io (read, write and readdir on the worker thread, so
 * Tflush meets running requests).  After every input the target checks that
 * TMP holds nothing but export/ (nothing was created, renamed or linked
 * outside the export), then empties the export and puts its root back as it
 * was (mode, owner, extended attributes), so every input starts from the
 * same empty directory.  The backend option bits are not used. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <unistd.h>

#include "fuzz_server.h"
#include "ninep/passthrough.h"

static char tmp[4096], export[4200];
static np_passthrough *pt;
static struct stat root_st;

static int rm_one(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	if (ftw->level == 0)
		return 0; /* the export root itself stays */
	if ((flag == FTW_DP ? rmdir(path) : unlink(path)) != 0) {
		fprintf(stderr, "fuzz-server-passthrough: cannot remove %s: %s\n", path,
			strerror(errno));
		abort();
	}
	return 0;
}

static int open_up(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)ftw;
	if (flag == FTW_D && (st->st_mode & 0700) != 0700)
		chmod(path, (st->st_mode & 07777) | 0700);
	return 0;
}

static void empty_dir(const char *dir)
{
	/* Directories the session made unreadable or unsearchable are opened
	 * up first (pre-order: before nftw reads them), for a non-root run. */
	if (geteuid() != 0)
		nftw(dir, open_up, 16, FTW_PHYS | FTW_MOUNT);
	/* FTW_PHYS: symlinks are removed, never followed; FTW_MOUNT: stay on
	 * this file system */
	if (nftw(dir, rm_one, 16, FTW_DEPTH | FTW_PHYS | FTW_MOUNT) != 0) {
		fprintf(stderr, "fuzz-server-passthrough: cannot empty %s\n", dir);
		abort();
	}
}

static int pt_init(const struct np_fs_ops **ops, void **fs)
{
	const char *base = getenv("TMPDIR");
	snprintf(tmp, sizeof tmp, "%s/ninep-fuzz-XXXXXX", base && *base ? base : "/tmp");
	if (!mkdtemp(tmp))
		return -1;
	snprintf(export, sizeof export, "%s/export", tmp);
	if (mkdir(export, 0755) != 0 || lstat(export, &root_st) != 0)
		return -1;
	struct np_passthrough_opts o = {.root = export, .blocking_io = 1};
	char err[256];
	if (np_passthrough_new(&o, &pt, err, sizeof err) != 0) {
		fprintf(stderr, "fuzz-server-passthrough: %s\n", err);
		return -1;
	}
	*ops = np_passthrough_ops(pt);
	*fs = pt;
	return 0;
}

static void pt_begin(unsigned opts)
{
	(void)opts;
}

static void check_confined(void)
{
	DIR *d = opendir(tmp);
	struct dirent *de;
	if (!d)
		abort();
	while ((de = readdir(d)) != NULL) {
		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, "..") ||
		    !strcmp(de->d_name, "export"))
			continue;
		fprintf(stderr, "fuzz-server-passthrough: %s/%s appeared outside the export\n",
			tmp, de->d_name);
		abort();
	}
	closedir(d);
	struct stat st;
	if (lstat(export, &st) != 0 || st.st_ino != root_st.st_ino || !S_ISDIR(st.st_mode)) {
		fprintf(stderr, "fuzz-server-passthrough: the export root was replaced\n");
		abort();
	}
}

static void reset_root(void)
{
	char names[65536];
	ssize_t n = llistxattr(export, names, sizeof names);
	for (ssize_t i = 0; i < n; i += (ssize_t)strlen(names + i) + 1)
		lremovexattr(export, names + i); /* security.* may refuse: harmless */
	chmod(export, root_st.st_mode & 07777);
	if (geteuid() == 0 && lchown(export, root_st.st_uid, root_st.st_gid) != 0)
		abort();
}

static void pt_end(void)
{
	check_confined();
	empty_dir(export);
	reset_root();
}

static void pt_fini(void)
{
	np_passthrough_free(pt);
	pt = NULL;
	if (*tmp) {
		empty_dir(export);
		rmdir(export);
		rmdir(tmp);
	}
}

const struct fuzz_backend fuzz_backend = {
	.name = "passthrough",
	.init = pt_init,
	.begin = pt_begin,
	.end = pt_end,
	.fini = pt_fini,
};

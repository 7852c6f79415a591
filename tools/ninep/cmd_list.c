/* Listing commands: ls, stat, tree. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <time.h>
#include <unistd.h>

#include "ninep.h"

struct entry {
	char *name;
	uint8_t type;
};

static int by_name(const void *a, const void *b)
{
	return strcmp(((const struct entry *)a)->name, ((const struct entry *)b)->name);
}

/* Read a whole directory (f is walked, not open) into a sorted array. */
static int read_dir(np_cfid *f, int all, struct entry **out, size_t *n)
{
	np_cfid *d;
	int e = np_cfid_walk(f, 0, NULL, &d);
	if (e < 0)
		return e;
	if ((e = np_cfid_open(d, O_RDONLY | O_DIRECTORY)) < 0) {
		np_cfid_clunk(d);
		return e;
	}
	np_readdir *it;
	if ((e = np_readdir_open(d, &it)) < 0) {
		np_cfid_clunk(d);
		return e;
	}
	struct entry *v = NULL;
	size_t cnt = 0, cap = 0;
	struct np_direntry de;
	while ((e = np_readdir_next(it, &de)) > 0) {
		int dot = strcmp(de.name, ".") == 0 || strcmp(de.name, "..") == 0;
		if ((!all && de.name[0] == '.') || (dot && all < 0))
			continue;
		if (cnt == cap) {
			cap = cap ? cap * 2 : 64;
			struct entry *nv = realloc(v, cap * sizeof *v);
			if (!nv) {
				e = -ENOMEM;
				break;
			}
			v = nv;
		}
		v[cnt].name = strdup(de.name);
		v[cnt].type = de.type;
		if (!v[cnt].name) {
			e = -ENOMEM;
			break;
		}
		cnt++;
	}
	np_readdir_close(it);
	np_cfid_clunk(d);
	if (e < 0) {
		for (size_t i = 0; i < cnt; i++)
			free(v[i].name);
		free(v);
		return e;
	}
	if (cnt)
		qsort(v, cnt, sizeof *v, by_name);
	*out = v;
	*n = cnt;
	return 0;
}

static void free_entries(struct entry *v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(v[i].name);
	free(v);
}

static void mode_string(uint32_t m, char s[11])
{
	s[0] = S_ISDIR(m) ? 'd' : S_ISLNK(m) ? 'l' : S_ISCHR(m) ? 'c' : S_ISBLK(m) ? 'b'
	     : S_ISFIFO(m) ? 'p' : S_ISSOCK(m) ? 's' : '-';
	const char *rwx = "rwxrwxrwx";
	for (int i = 0; i < 9; i++)
		s[i + 1] = (m & (0400u >> i)) ? rwx[i] : '-';
	if (m & S_ISUID)
		s[3] = (m & 0100) ? 's' : 'S';
	if (m & S_ISGID)
		s[6] = (m & 0010) ? 's' : 'S';
	if (m & S_ISVTX)
		s[9] = (m & 0001) ? 't' : 'T';
	s[10] = '\0';
}

static const char *user_name(uint32_t uid, char *buf, size_t n)
{
	struct passwd *pw = getpwuid(uid);
	if (pw)
		return pw->pw_name;
	snprintf(buf, n, "%u", uid);
	return buf;
}

static const char *group_name(uint32_t gid, char *buf, size_t n)
{
	struct group *gr = getgrgid(gid);
	if (gr)
		return gr->gr_name;
	snprintf(buf, n, "%u", gid);
	return buf;
}

/* One `ls -l` line for f, shown as `name`. */
static void long_line(np_cfid *f, const struct np_attr *a, const char *name)
{
	char ms[11], tb[32], ub[16], gb[16];
	mode_string(a->mode, ms);
	time_t mt = a->mtime.tv_sec, now = time(NULL);
	struct tm tm;
	localtime_r(&mt, &tm);
	/* coreutils: the year instead of the time beyond six months. */
	if (mt > now - 15778476 && mt <= now + 60)
		strftime(tb, sizeof tb, "%b %e %H:%M", &tm);
	else
		strftime(tb, sizeof tb, "%b %e  %Y", &tm);
	printf("%s %lu %s %s ", ms, (unsigned long)a->nlink, user_name(a->uid, ub, sizeof ub),
	       group_name(a->gid, gb, sizeof gb));
	if (S_ISCHR(a->mode) || S_ISBLK(a->mode))
		printf("%u, %u ", major((dev_t)a->rdev), minor((dev_t)a->rdev));
	else
		printf("%llu ", (unsigned long long)a->size);
	printf("%s %s", tb, name);
	if (S_ISLNK(a->mode)) {
		char target[4096];
		if (np_cfid_readlink(f, target, sizeof target) >= 0)
			printf(" -> %s", target);
	}
	putchar('\n');
}

static int ls_dir(struct tool *t, np_cfid *f, const char *path, int lng, int all)
{
	struct entry *v;
	size_t n;
	int e = read_dir(f, all, &v, &n);
	if (e < 0)
		return fail("ls", path, e);
	int rc = 0;
	if (!lng) {
		for (size_t i = 0; i < n; i++)
			printf("%s\n", v[i].name);
		free_entries(v, n);
		return 0;
	}
	struct np_attr *as = calloc(n ? n : 1, sizeof *as);
	int *ok = calloc(n ? n : 1, sizeof *ok);
	uint64_t blocks = 0;
	for (size_t i = 0; as && ok && i < n; i++) {
		const char *nm[1] = {v[i].name};
		np_cfid *c;
		/* "." and ".." are walkable names, but the walk would leave
		 * the export for ".." at the root: stat them from here. */
		if (strcmp(nm[0], ".") == 0)
			e = np_cfid_walk(f, 0, NULL, &c);
		else
			e = np_cfid_walk(f, 1, nm, &c);
		if (e == 0) {
			e = np_cfid_getattr(c, NP_GETATTR_BASIC, &as[i]);
			np_cfid_clunk(c);
		}
		if (e < 0) {
			char p[4096];
			snprintf(p, sizeof p, "%s/%s", path, v[i].name);
			rc = fail("ls", p, e);
			continue;
		}
		ok[i] = 1;
		blocks += as[i].blocks;
	}
	(void)t;
	printf("total %llu\n", (unsigned long long)(blocks / 2));
	for (size_t i = 0; as && ok && i < n; i++) {
		if (!ok[i])
			continue;
		const char *nm[1] = {v[i].name};
		np_cfid *c = NULL;
		if (S_ISLNK(as[i].mode) && np_cfid_walk(f, 1, nm, &c) < 0)
			c = NULL;
		long_line(c, &as[i], v[i].name);
		if (c)
			np_cfid_clunk(c);
	}
	free(as);
	free(ok);
	free_entries(v, n);
	return rc;
}

int cmd_ls(struct tool *t, int argc, char **argv)
{
	int lng = 0, all = 0, opt;
	while ((opt = getopt(argc, argv, "+la")) != -1) {
		if (opt == 'l')
			lng = 1;
		else if (opt == 'a')
			all = 1;
		else
			return usage_err("ls", "[-l] [-a] [PATH...]");
	}
	char *dflt[] = {(char *)"/"};
	char **paths = optind < argc ? argv + optind : dflt;
	int np = optind < argc ? argc - optind : 1;
	int rc = 0, shown = 0;
	/* Like ls: files first, then each directory (with a header when
	 * several are named). */
	for (int pass = 0; pass < 2; pass++) {
		for (int i = 0; i < np; i++) {
			np_cfid *f;
			struct np_attr a;
			int e = walk(t, paths[i], &f);
			if (e == 0 && (e = np_cfid_getattr(f, NP_GETATTR_BASIC, &a)) < 0)
				np_cfid_clunk(f);
			if (e < 0) {
				if (pass == 0)
					rc = fail("ls", paths[i], e);
				continue;
			}
			int isdir = S_ISDIR(a.mode);
			if (pass == 0 && !isdir) {
				if (lng)
					long_line(f, &a, paths[i]);
				else
					printf("%s\n", paths[i]);
				shown++;
			} else if (pass == 1 && isdir) {
				if (np > 1)
					printf("%s%s:\n", shown++ ? "\n" : "", paths[i]);
				if (ls_dir(t, f, paths[i], lng, all))
					rc = 1;
			}
			np_cfid_clunk(f);
		}
	}
	return rc;
}

static const char *type_name(uint32_t m)
{
	return S_ISDIR(m) ? "directory" : S_ISLNK(m) ? "symbolic link" : S_ISCHR(m) ? "character special file"
	     : S_ISBLK(m) ? "block special file" : S_ISFIFO(m) ? "fifo" : S_ISSOCK(m) ? "socket"
	     : "regular file";
}

static void print_time(const char *label, const struct timespec *ts)
{
	char b[64], z[16];
	struct tm tm;
	localtime_r(&ts->tv_sec, &tm);
	strftime(b, sizeof b, "%Y-%m-%d %H:%M:%S", &tm);
	strftime(z, sizeof z, "%z", &tm);
	printf("%s: %s.%09ld %s\n", label, b, ts->tv_nsec, z);
}

int cmd_stat(struct tool *t, int argc, char **argv)
{
	if (argc < 2)
		return usage_err("stat", "PATH...");
	int rc = 0;
	for (int i = 1; i < argc; i++) {
		np_cfid *f;
		struct np_attr a;
		int e = walk(t, argv[i], &f);
		if (e == 0) {
			e = np_cfid_getattr(f, NP_GETATTR_ALL, &a);
			if (e < 0)
				np_cfid_clunk(f);
		}
		if (e < 0) {
			rc = fail("stat", argv[i], e);
			continue;
		}
		char ms[11], ub[16], gb[16], target[4096];
		mode_string(a.mode, ms);
		if (S_ISLNK(a.mode) && np_cfid_readlink(f, target, sizeof target) >= 0)
			printf("  File: %s -> %s\n", argv[i], target);
		else
			printf("  File: %s\n", argv[i]);
		printf("  Size: %-15llu Blocks: %-10llu IO Block: %-6llu %s\n",
		       (unsigned long long)a.size, (unsigned long long)a.blocks,
		       (unsigned long long)a.blksize, type_name(a.mode));
		printf("  Qid: %02x.%u.%016llx  Links: %llu\n", a.qid.type, a.qid.version,
		       (unsigned long long)a.qid.path, (unsigned long long)a.nlink);
		printf("Access: (%04o/%s)  Uid: (%5u/%8s)   Gid: (%5u/%8s)\n", a.mode & 07777, ms,
		       a.uid, user_name(a.uid, ub, sizeof ub), a.gid, group_name(a.gid, gb, sizeof gb));
		print_time("Access", &a.atime);
		print_time("Modify", &a.mtime);
		print_time("Change", &a.ctime);
		if ((a.valid & NP_GETATTR_BTIME) && (a.btime.tv_sec || a.btime.tv_nsec))
			print_time(" Birth", &a.btime);
		else
			printf(" Birth: -\n");
		np_cfid_clunk(f);
	}
	return rc;
}

static int tree_walk(np_cfid *f, const char *path, char *prefix, size_t plen, size_t cap,
		     unsigned long *ndirs, unsigned long *nfiles)
{
	struct entry *v;
	size_t n;
	int e = read_dir(f, 0, &v, &n);
	if (e < 0)
		return fail("tree", path, e);
	int rc = 0;
	for (size_t i = 0; i < n; i++) {
		int last = i + 1 == n;
		printf("%.*s%s%s", (int)plen, prefix, last ? "\u2514\u2500\u2500 " : "\u251c\u2500\u2500 ",
		       v[i].name);
		if (v[i].type == DT_LNK) {
			const char *nm[1] = {v[i].name};
			np_cfid *c;
			char target[4096];
			if (np_cfid_walk(f, 1, nm, &c) == 0) {
				if (np_cfid_readlink(c, target, sizeof target) >= 0)
					printf(" -> %s", target);
				np_cfid_clunk(c);
			}
		}
		putchar('\n');
		if (v[i].type != DT_DIR) {
			(*nfiles)++;
			continue;
		}
		(*ndirs)++;
		const char *seg = last ? "    " : "\u2502   ";
		size_t sl = strlen(seg);
		const char *nm[1] = {v[i].name};
		np_cfid *c;
		if (plen + sl >= cap || np_cfid_walk(f, 1, nm, &c) < 0)
			continue;
		memcpy(prefix + plen, seg, sl);
		char sub[4096];
		snprintf(sub, sizeof sub, "%s/%s", path, v[i].name);
		if (tree_walk(c, sub, prefix, plen + sl, cap, ndirs, nfiles))
			rc = 1;
		np_cfid_clunk(c);
	}
	free_entries(v, n);
	return rc;
}

int cmd_tree(struct tool *t, int argc, char **argv)
{
	if (argc > 2)
		return usage_err("tree", "[PATH]");
	const char *path = argc == 2 ? argv[1] : ".";
	np_cfid *f;
	int e = walk(t, argc == 2 ? argv[1] : "", &f);
	if (e < 0)
		return fail("tree", path, e);
	char prefix[4096];
	unsigned long ndirs = 0, nfiles = 0;
	printf("%s\n", path);
	int rc = tree_walk(f, path, prefix, 0, sizeof prefix, &ndirs, &nfiles);
	np_cfid_clunk(f);
	printf("\n%lu director%s, %lu file%s\n", ndirs, ndirs == 1 ? "y" : "ies", nfiles,
	       nfiles == 1 ? "" : "s");
	return rc;
}

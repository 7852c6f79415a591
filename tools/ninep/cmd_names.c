/* Name-space commands: mkdir, rm, mv, ln, readlink. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ninep.h"

static uint32_t dir_mode(void)
{
	mode_t um = umask(0);
	umask(um);
	return 0777 & ~um;
}

static int mkdir_p(struct tool *t, const char *path)
{
	char *copy = strdup(path);
	if (!copy)
		return -ENOMEM;
	np_cfid *cur;
	int e = np_cfid_walk(t->root, 0, NULL, &cur);
	char *save = NULL;
	for (char *tok = strtok_r(copy, "/", &save); e == 0 && tok; tok = strtok_r(NULL, "/", &save)) {
		if (strcmp(tok, ".") == 0)
			continue;
		const char *nm[1] = {tok};
		np_cfid *next;
		e = np_cfid_walk(cur, 1, nm, &next);
		if (e == -ENOENT) {
			e = np_cfid_mkdir(cur, tok, dir_mode(), (uint32_t)-1, NULL);
			if (e == 0 || e == -EEXIST) /* EEXIST: someone else made it */
				e = np_cfid_walk(cur, 1, nm, &next);
		}
		if (e == 0 && !(next->qid.type & NP_QTDIR)) {
			np_cfid_clunk(next);
			e = -ENOTDIR;
		}
		np_cfid_clunk(cur);
		if (e == 0)
			cur = next;
	}
	if (e == 0)
		np_cfid_clunk(cur);
	free(copy);
	return e;
}

int cmd_mkdir(struct tool *t, int argc, char **argv)
{
	int p = 0, opt;
	while ((opt = getopt(argc, argv, "+p")) != -1) {
		if (opt != 'p')
			return usage_err("mkdir", "[-p] PATH...");
		p = 1;
	}
	if (optind >= argc)
		return usage_err("mkdir", "[-p] PATH...");
	int rc = 0;
	for (int i = optind; i < argc; i++) {
		int e;
		if (p) {
			e = mkdir_p(t, argv[i]);
		} else {
			np_cfid *dir;
			char name[4096];
			e = walk_parent(t, argv[i], &dir, name, sizeof name);
			if (e == 0) {
				e = np_cfid_mkdir(dir, name, dir_mode(), (uint32_t)-1, NULL);
				np_cfid_clunk(dir);
			}
		}
		if (e < 0)
			rc = fail("mkdir", argv[i], e);
	}
	return rc;
}

/* Remove name in dir; recurse into directories when r. */
static int rm_entry(np_cfid *dir, const char *name, const char *path, int r)
{
	const char *nm[1] = {name};
	np_cfid *f;
	int e = np_cfid_walk(dir, 1, nm, &f);
	if (e < 0)
		return fail("rm", path, e);
	if (!(f->qid.type & NP_QTDIR)) {
		np_cfid_clunk(f);
		e = np_cfid_unlinkat(dir, name, 0);
		return e < 0 ? fail("rm", path, e) : 0;
	}
	if (!r) {
		np_cfid_clunk(f);
		return fail("rm", path, -EISDIR);
	}
	/* Collect the names first: removing while reading a directory would
	 * make the server's readdir offsets shift under us. */
	char **names = NULL;
	size_t n = 0, cap = 0;
	np_cfid *d;
	e = np_cfid_walk(f, 0, NULL, &d);
	if (e == 0 && (e = np_cfid_open(d, O_RDONLY | O_DIRECTORY)) < 0)
		np_cfid_clunk(d);
	if (e == 0) {
		np_readdir *it;
		if ((e = np_readdir_open(d, &it)) == 0) {
			struct np_direntry de;
			while ((e = np_readdir_next(it, &de)) > 0) {
				if (strcmp(de.name, ".") == 0 || strcmp(de.name, "..") == 0)
					continue;
				if (n == cap) {
					cap = cap ? cap * 2 : 32;
					char **nn = realloc(names, cap * sizeof *nn);
					if (!nn) {
						e = -ENOMEM;
						break;
					}
					names = nn;
				}
				if (!(names[n] = strdup(de.name))) {
					e = -ENOMEM;
					break;
				}
				n++;
			}
			np_readdir_close(it);
		}
		np_cfid_clunk(d);
	}
	int rc = 0;
	if (e < 0)
		rc = fail("rm", path, e);
	for (size_t i = 0; i < n; i++) {
		char sub[4096];
		snprintf(sub, sizeof sub, "%s/%s", path, names[i]);
		if (rm_entry(f, names[i], sub, r))
			rc = 1;
		free(names[i]);
	}
	free(names);
	np_cfid_clunk(f);
	if (rc)
		return rc;
	e = np_cfid_unlinkat(dir, name, NP_AT_REMOVEDIR);
	return e < 0 ? fail("rm", path, e) : 0;
}

int cmd_rm(struct tool *t, int argc, char **argv)
{
	int r = 0, opt;
	while ((opt = getopt(argc, argv, "+rRf")) != -1) {
		if (opt == 'r' || opt == 'R')
			r = 1;
		else if (opt != 'f')
			return usage_err("rm", "[-r] PATH...");
	}
	if (optind >= argc)
		return usage_err("rm", "[-r] PATH...");
	int rc = 0;
	for (int i = optind; i < argc; i++) {
		np_cfid *dir;
		char name[4096];
		int e = walk_parent(t, argv[i], &dir, name, sizeof name);
		if (e < 0) {
			rc = fail("rm", argv[i], e);
			continue;
		}
		if (rm_entry(dir, name, argv[i], r))
			rc = 1;
		np_cfid_clunk(dir);
	}
	return rc;
}

int cmd_mv(struct tool *t, int argc, char **argv)
{
	if (argc != 3)
		return usage_err("mv", "SRC DST");
	np_cfid *sdir, *ddir, *dst;
	char sname[4096], dname[4096];
	int e = walk_parent(t, argv[1], &sdir, sname, sizeof sname);
	if (e < 0)
		return fail("mv", argv[1], e);
	/* Like mv: an existing directory as DST receives SRC under its name. */
	if (walk(t, argv[2], &dst) == 0) {
		if (dst->qid.type & NP_QTDIR) {
			ddir = dst;
			strcpy(dname, sname);
		} else {
			np_cfid_clunk(dst);
			dst = NULL;
		}
	} else {
		dst = NULL;
	}
	if (!dst && (e = walk_parent(t, argv[2], &ddir, dname, sizeof dname)) < 0) {
		np_cfid_clunk(sdir);
		return fail("mv", argv[2], e);
	}
	e = np_cfid_renameat(sdir, sname, ddir, dname);
	np_cfid_clunk(sdir);
	np_cfid_clunk(ddir);
	return e < 0 ? fail("mv", argv[1], e) : 0;
}

int cmd_ln(struct tool *t, int argc, char **argv)
{
	int s = 0, opt;
	while ((opt = getopt(argc, argv, "+s")) != -1) {
		if (opt != 's')
			return usage_err("ln", "[-s] TARGET NAME");
		s = 1;
	}
	if (argc - optind != 2)
		return usage_err("ln", "[-s] TARGET NAME");
	const char *target = argv[optind], *path = argv[optind + 1];
	np_cfid *dir;
	char name[4096];
	int e = walk_parent(t, path, &dir, name, sizeof name);
	if (e < 0)
		return fail("ln", path, e);
	if (s) {
		e = np_cfid_symlink(dir, name, target, (uint32_t)-1, NULL);
	} else {
		np_cfid *f;
		if ((e = walk(t, target, &f)) < 0) {
			np_cfid_clunk(dir);
			return fail("ln", target, e);
		}
		e = np_cfid_link(dir, f, name);
		np_cfid_clunk(f);
	}
	np_cfid_clunk(dir);
	return e < 0 ? fail("ln", path, e) : 0;
}

int cmd_readlink(struct tool *t, int argc, char **argv)
{
	if (argc < 2)
		return usage_err("readlink", "PATH...");
	int rc = 0;
	for (int i = 1; i < argc; i++) {
		np_cfid *f;
		char target[4096];
		int e = walk(t, argv[i], &f);
		if (e == 0) {
			e = np_cfid_readlink(f, target, sizeof target);
			np_cfid_clunk(f);
		}
		if (e < 0)
			rc = fail("readlink", argv[i], e);
		else
			printf("%s\n", target);
	}
	return rc;
}

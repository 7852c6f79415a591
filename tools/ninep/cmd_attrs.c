/* Attribute commands: chmod, chown, truncate, df, getfattr, setfattr. */
#include <ctype.h>
#include <errno.h>
#include <grp.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ninep.h"

static int setattr_path(struct tool *t, const char *cmd, const char *path,
			const struct np_setattr *s)
{
	np_cfid *f;
	int e = walk(t, path, &f);
	if (e == 0) {
		e = np_cfid_setattr(f, s);
		np_cfid_clunk(f);
	}
	return e < 0 ? fail(cmd, path, e) : 0;
}

int cmd_chmod(struct tool *t, int argc, char **argv)
{
	if (argc < 3)
		return usage_err("chmod", "MODE PATH...");
	char *end;
	unsigned long m = strtoul(argv[1], &end, 8);
	if (!*argv[1] || *end || m > 07777)
		return usage_err("chmod", "MODE PATH...  (MODE in octal)");
	struct np_setattr s = {.valid = NP_SETATTR_MODE, .mode = (uint32_t)m};
	int rc = 0;
	for (int i = 2; i < argc; i++)
		rc |= setattr_path(t, "chmod", argv[i], &s);
	return rc;
}

static int parse_id(const char *s, int group, uint32_t *id)
{
	char *end;
	unsigned long v = strtoul(s, &end, 10);
	if (*s && !*end) {
		*id = (uint32_t)v;
		return 0;
	}
	if (group) {
		struct group *g = getgrnam(s);
		if (!g)
			return -1;
		*id = (uint32_t)g->gr_gid;
	} else {
		struct passwd *p = getpwnam(s);
		if (!p)
			return -1;
		*id = (uint32_t)p->pw_uid;
	}
	return 0;
}

int cmd_chown(struct tool *t, int argc, char **argv)
{
	if (argc < 3)
		return usage_err("chown", "UID[:GID] PATH...");
	struct np_setattr s = {0};
	char *spec = strdup(argv[1]);
	if (!spec)
		return fail("chown", NULL, -ENOMEM);
	char *colon = strchr(spec, ':');
	if (colon)
		*colon++ = '\0';
	int bad = 0;
	if (*spec) {
		s.valid |= NP_SETATTR_UID;
		bad |= parse_id(spec, 0, &s.uid);
	}
	if (colon && *colon) {
		s.valid |= NP_SETATTR_GID;
		bad |= parse_id(colon, 1, &s.gid);
	}
	free(spec);
	if (bad || !s.valid) {
		fprintf(stderr, "ninep: chown: invalid owner '%s'\n", argv[1]);
		return usage_err("chown", "UID[:GID] PATH...");
	}
	int rc = 0;
	for (int i = 2; i < argc; i++)
		rc |= setattr_path(t, "chown", argv[i], &s);
	return rc;
}

/* "10", "4K", "1M", "2G" (powers of 1024, like truncate -s). */
static int parse_size(const char *s, uint64_t *out)
{
	char *end;
	errno = 0;
	unsigned long long v = strtoull(s, &end, 10);
	if (!isdigit((unsigned char)*s) || errno)
		return -1;
	unsigned shift = 0;
	if (*end) {
		const char *u = "KMGTPE";
		const char *p = strchr(u, toupper((unsigned char)*end));
		if (!p || (end[1] && strcmp(end + 1, "iB") != 0 && strcmp(end + 1, "B") != 0))
			return -1;
		shift = 10 * (unsigned)(p - u + 1);
	}
	if (shift && v > (UINT64_MAX >> shift))
		return -1;
	*out = (uint64_t)v << shift;
	return 0;
}

int cmd_truncate(struct tool *t, int argc, char **argv)
{
	const char *size = NULL;
	int opt;
	while ((opt = getopt(argc, argv, "+s:")) != -1) {
		if (opt != 's')
			return usage_err("truncate", "-s SIZE PATH...");
		size = optarg;
	}
	struct np_setattr s = {.valid = NP_SETATTR_SIZE};
	if (!size || optind >= argc || parse_size(size, &s.size) < 0)
		return usage_err("truncate", "-s SIZE PATH...");
	int rc = 0;
	for (int i = optind; i < argc; i++) {
		np_cfid *f;
		int e = walk(t, argv[i], &f);
		if (e == -ENOENT) {
			/* Like truncate(1): a missing file is created. */
			if ((e = open_for_write(t, argv[i], &f)) == 0)
				e = np_cfid_clunk(f);
			if (e == 0)
				e = walk(t, argv[i], &f);
		}
		if (e == 0) {
			e = np_cfid_setattr(f, &s);
			np_cfid_clunk(f);
		}
		if (e < 0)
			rc = fail("truncate", argv[i], e);
	}
	return rc;
}

int cmd_df(struct tool *t, int argc, char **argv)
{
	(void)argv;
	if (argc != 1)
		return usage_err("df", "");
	struct np_statfs s;
	int e = np_cfid_statfs(t->root, &s);
	if (e < 0)
		return fail("df", NULL, e);
	uint64_t k = s.bsize / 1024 ? s.bsize / 1024 : 1;
	uint64_t total = s.blocks * s.bsize / 1024, avail = s.bavail * s.bsize / 1024;
	uint64_t used = (s.blocks - s.bfree) * s.bsize / 1024;
	(void)k;
	/* coreutils rounds the percentage up. */
	uint64_t denom = used + avail;
	unsigned pct = denom ? (unsigned)((used * 100 + denom - 1) / denom) : 0;
	const char *fs = t->addr;
	int w = (int)strlen(fs) > 14 ? (int)strlen(fs) : 14;
	printf("%-*s %9s %9s %9s %4s %s\n", w, "Filesystem", "1K-blocks", "Used", "Available", "Use%",
	       "Mounted on");
	char pcts[8];
	if (denom)
		snprintf(pcts, sizeof pcts, "%u%%", pct);
	else
		snprintf(pcts, sizeof pcts, "-");
	printf("%-*s %9llu %9llu %9llu %4s %s\n", w, fs, (unsigned long long)total,
	       (unsigned long long)used, (unsigned long long)avail, pcts,
	       *t->aname ? t->aname : "/");
	return 0;
}

/* Print an attribute value like getfattr: quoted text, else 0x hex. */
static void print_value(const char *name, const unsigned char *v, size_t n)
{
	int text = 1;
	for (size_t i = 0; i < n; i++)
		if (!isprint(v[i]) && !(v[i] == 0 && i + 1 == n))
			text = 0;
	printf("%s=", name);
	if (text) {
		putchar('"');
		for (size_t i = 0; i < n && v[i]; i++) {
			if (v[i] == '"' || v[i] == '\\')
				putchar('\\');
			putchar(v[i]);
		}
		putchar('"');
	} else {
		printf("0x");
		for (size_t i = 0; i < n; i++)
			printf("%02x", v[i]);
	}
	putchar('\n');
}

static int show_xattr(np_cfid *f, const char *path, const char *name)
{
	ssize_t n = np_cfid_getxattr(f, name, NULL, 0);
	if (n < 0)
		return fail("getfattr", path, (int)n);
	unsigned char *v = malloc((size_t)n + 1);
	if (!v)
		return fail("getfattr", path, -ENOMEM);
	if (n > 0 && (n = np_cfid_getxattr(f, name, v, (size_t)n)) < 0) {
		free(v);
		return fail("getfattr", path, (int)n);
	}
	print_value(name, v, (size_t)n);
	free(v);
	return 0;
}

int cmd_getfattr(struct tool *t, int argc, char **argv)
{
	const char *name = NULL;
	int opt;
	while ((opt = getopt(argc, argv, "+n:d")) != -1) {
		if (opt == 'n')
			name = optarg;
		else if (opt != 'd')
			return usage_err("getfattr", "[-n NAME] PATH...");
	}
	if (optind >= argc)
		return usage_err("getfattr", "[-n NAME] PATH...");
	int rc = 0;
	for (int i = optind; i < argc; i++) {
		np_cfid *f;
		int e = walk(t, argv[i], &f);
		if (e < 0) {
			rc = fail("getfattr", argv[i], e);
			continue;
		}
		if (name) {
			printf("# file: %s\n", argv[i]);
			rc |= show_xattr(f, argv[i], name);
		} else {
			ssize_t n = np_cfid_listxattr(f, NULL, 0);
			char *list = n > 0 ? malloc((size_t)n) : NULL;
			if (n > 0 && !list)
				n = -ENOMEM;
			if (n > 0)
				n = np_cfid_listxattr(f, list, (size_t)n);
			if (n < 0) {
				rc = fail("getfattr", argv[i], (int)n);
			} else if (n > 0) {
				printf("# file: %s\n", argv[i]);
				for (ssize_t p = 0; p < n; p += (ssize_t)strnlen(list + p, (size_t)(n - p)) + 1)
					if (list[p])
						rc |= show_xattr(f, argv[i], list + p);
			}
			free(list);
		}
		putchar('\n');
		np_cfid_clunk(f);
	}
	return rc;
}

int cmd_setfattr(struct tool *t, int argc, char **argv)
{
	const char *name = NULL, *value = NULL, *rm = NULL;
	int opt;
	const char *u = "-n NAME -v VALUE PATH... | -x NAME PATH...";
	while ((opt = getopt(argc, argv, "+n:v:x:")) != -1) {
		if (opt == 'n')
			name = optarg;
		else if (opt == 'v')
			value = optarg;
		else if (opt == 'x')
			rm = optarg;
		else
			return usage_err("setfattr", u);
	}
	if (optind >= argc || (!rm && !name) || (rm && (name || value)))
		return usage_err("setfattr", u);
	int rc = 0;
	for (int i = optind; i < argc; i++) {
		np_cfid *f;
		int e = walk(t, argv[i], &f);
		if (e == 0) {
			if (rm)
				e = np_cfid_removexattr(f, rm);
			else
				e = np_cfid_setxattr(f, name, value ? value : "", value ? strlen(value) : 0, 0);
			np_cfid_clunk(f);
		}
		if (e < 0)
			rc = fail("setfattr", argv[i], e);
	}
	return rc;
}

/* posix-suite: runs named POSIX behaviour cases in a directory and prints
 * one PASS/FAIL/SKIP line per case. With --expect, a case that passed in a
 * reference run (normally on a local file system) must pass here too. */
#include "posix_suite.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static const struct ps_case cases[] = {
	{"create_rw", ps_case_create_rw},
	{"append", ps_case_append},
	{"truncate", ps_case_truncate},
	{"o_append_two_fds", ps_case_o_append_two_fds},
	{"o_excl", ps_case_o_excl},
	{"sparse", ps_case_sparse},
	{"unlink_open", ps_case_unlink_open},
	{"rename_over_file", ps_case_rename_over_file},
	{"rename_dir", ps_case_rename_dir},
	{"hardlinks", ps_case_hardlinks},
	{"symlinks", ps_case_symlinks},
	{"mkdir_rmdir_nested", ps_case_mkdir_rmdir_nested},
	{"rmdir_nonempty", ps_case_rmdir_nonempty},
	{"readdir_many", ps_case_readdir_many},
	{"chown_chmod", ps_case_chown_chmod},
	{"eacces_other_user", ps_case_eacces_other_user},
	{"xattr_user", ps_case_xattr_user},
	{"statfs", ps_case_statfs},
	{"utimensat", ps_case_utimensat},
	{"fcntl_locks", ps_case_fcntl_locks},
	{"mmap_shared", ps_case_mmap_shared},
};
#define NCASES (sizeof(cases) / sizeof(cases[0]))

/* What the reference run said about each case: 0 unknown, else a result + 1. */
static int expected[NCASES];
/* Cases allowed to skip even where the reference passed (--may-skip): a
 * known, documented limitation of the mount configuration under test. */
static bool may_skip[NCASES];

static int find_case(const char *name)
{
	for (size_t i = 0; i < NCASES; i++)
		if (strcmp(cases[i].name, name) == 0)
			return (int)i;
	return -1;
}

static int load_expect(const char *file)
{
	FILE *f = fopen(file, "r");
	if (!f) {
		fprintf(stderr, "posix-suite: cannot read %s: %s\n", file, strerror(errno));
		return -1;
	}
	char line[1024], word[16], name[256];
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%15s %255[^:\n]", word, name) != 2)
			continue;
		int idx = find_case(name);
		if (idx < 0)
			continue;
		if (strcmp(word, "PASS") == 0)
			expected[idx] = PS_PASS + 1;
		else if (strcmp(word, "SKIP") == 0)
			expected[idx] = PS_SKIP + 1;
		else if (strcmp(word, "FAIL") == 0)
			expected[idx] = PS_FAIL + 1;
	}
	fclose(f);
	return 0;
}

static void usage(void)
{
	fprintf(stderr, "usage: posix-suite DIR [--case NAME]... [--quick] [--entries N] [--expect FILE [--may-skip NAME]...] [--times] [--keep-files] [--list]\n");
}

int main(int argc, char **argv)
{
	struct ps_ctx ctx = {0};
	bool selected[NCASES] = {false};
	bool any_selected = false, have_expect = false, times = false, keep = false;

	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--quick") == 0) {
			ctx.quick = true;
		} else if (strcmp(argv[i], "--entries") == 0 && i + 1 < argc) {
			ctx.entries = atoi(argv[++i]);
			if (ctx.entries < 1) {
				fprintf(stderr, "posix-suite: --entries needs a positive count\n");
				return 2;
			}
		} else if (strcmp(argv[i], "--list") == 0) {
			for (size_t c = 0; c < NCASES; c++)
				printf("%s\n", cases[c].name);
			return 0;
		} else if (strcmp(argv[i], "--case") == 0 && i + 1 < argc) {
			int idx = find_case(argv[++i]);
			if (idx < 0) {
				fprintf(stderr, "posix-suite: no case named %s (see --list)\n", argv[i]);
				return 2;
			}
			selected[idx] = any_selected = true;
		} else if (strcmp(argv[i], "--times") == 0) {
			times = true;
		} else if (strcmp(argv[i], "--keep-files") == 0) {
			keep = true;
		} else if (strcmp(argv[i], "--may-skip") == 0 && i + 1 < argc) {
			int idx = find_case(argv[++i]);
			if (idx < 0) {
				fprintf(stderr, "posix-suite: no case named %s (see --list)\n", argv[i]);
				return 2;
			}
			may_skip[idx] = true;
		} else if (strcmp(argv[i], "--expect") == 0 && i + 1 < argc) {
			if (load_expect(argv[++i]) != 0)
				return 2;
			have_expect = true;
		} else if (argv[i][0] == '-' || ctx.root) {
			usage();
			return 2;
		} else {
			ctx.root = argv[i];
		}
	}
	if (!ctx.root) {
		usage();
		return 2;
	}
	/* Permission cases need the scratch directories to be reachable by
	 * another user, whatever umask we inherited. */
	umask(022);

	int passed = 0, failed = 0, skipped = 0;
	for (size_t c = 0; c < NCASES; c++) {
		if (any_selected && !selected[c])
			continue;
		snprintf(ctx.dir, sizeof(ctx.dir), "%s/ps.%d.%s", ctx.root, (int)getpid(), cases[c].name);
		ctx.msg[0] = '\0';
		enum ps_result r;
		struct timespec t0, t1;
		clock_gettime(CLOCK_MONOTONIC, &t0);
		if (mkdir(ctx.dir, 0755) != 0) {
			r = ps_fail(&ctx, "cannot create scratch directory %s: %s", ctx.dir, strerror(errno));
		} else {
			r = cases[c].fn(&ctx);
			/* Removal costs as much as creation on a slow mount; a caller
			 * that discards the whole tree anyway can skip it. */
			if (!keep)
				ps_remove_tree(ctx.dir);
		}
		clock_gettime(CLOCK_MONOTONIC, &t1);
		if (times)
			fprintf(stderr, "posix-suite: %s took %.2f s\n", cases[c].name,
				(double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9);
		/* Holding the mount to the reference: a skip where the reference
		 * passed means a missing feature, not an unsupported one. */
		if (have_expect && r == PS_SKIP && expected[c] == PS_PASS + 1 && !may_skip[c]) {
			char why[sizeof(ctx.msg)];
			snprintf(why, sizeof(why), "%s", ctx.msg);
			r = ps_fail(&ctx, "skipped here (%s) but passed in the reference run", why);
		}
		if (have_expect && r == PS_PASS && expected[c] == 0)
			fprintf(stderr, "posix-suite: note: %s is not in the reference run\n", cases[c].name);
		switch (r) {
		case PS_PASS:
			printf("PASS %s\n", cases[c].name);
			passed++;
			break;
		case PS_FAIL:
			printf("FAIL %s: %s\n", cases[c].name, ctx.msg);
			failed++;
			break;
		case PS_SKIP:
			printf("SKIP %s: %s\n", cases[c].name, ctx.msg);
			skipped++;
			break;
		}
		fflush(stdout);
	}
	printf("%d passed, %d failed, %d skipped\n", passed, failed, skipped);
	return failed ? 1 : 0;
}

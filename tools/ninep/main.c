/* ninep: a command-line 9P client.  Parses the global options, connects,
 * attaches, and runs one subcommand. */
#include <errno.h>
#include <getopt.h>
#include <pwd.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ninep.h"

#define USAGE "usage: ninep [-a ADDR] [-A ANAME] [-u USER] [-m MSIZE] " \
	      "[-V 9P2000.L|9P2000.u|9P2000] [-d] COMMAND [ARGS...]"

static const struct {
	const char *name;
	int (*fn)(struct tool *, int, char **);
} commands[] = {
	{"ls", cmd_ls}, {"stat", cmd_stat}, {"tree", cmd_tree},
	{"cat", cmd_cat}, {"get", cmd_get}, {"put", cmd_put}, {"write", cmd_write},
	{"mkdir", cmd_mkdir}, {"rm", cmd_rm}, {"mv", cmd_mv}, {"ln", cmd_ln},
	{"readlink", cmd_readlink}, {"chmod", cmd_chmod}, {"chown", cmd_chown},
	{"truncate", cmd_truncate}, {"df", cmd_df}, {"getfattr", cmd_getfattr},
	{"setfattr", cmd_setfattr},
};

static void trace(void *arg, char dir, const np_fcall *f, enum np_dialect d)
{
	char line[512];
	(void)arg;
	np_fcall_format(line, sizeof line, f, d);
	fprintf(stderr, "%s %s\n", dir == 'T' ? "->" : "<-", line);
}

static void usage_full(FILE *o)
{
	fprintf(o, "%s\n", USAGE);
	fprintf(o, "commands: ls [-l] [-a] PATH..., stat PATH..., cat PATH..., get REMOTE LOCAL,\n"
		   "  put LOCAL REMOTE, write PATH, mkdir [-p] PATH..., rm [-r] PATH...,\n"
		   "  mv SRC DST, ln [-s] TARGET NAME, readlink PATH, chmod MODE PATH,\n"
		   "  chown UID[:GID] PATH, truncate -s SIZE PATH, df, tree [PATH],\n"
		   "  getfattr [-n NAME] PATH, setfattr -n NAME -v VALUE PATH | -x NAME PATH\n"
		   "ADDR defaults to $NINEP_ADDRESS (unix:/path, tcp:HOST:PORT, ...)\n");
}

int main(int argc, char **argv)
{
	struct np_client_opts o = {.dialect = -1};
	const char *addr = getenv("NINEP_ADDRESS"), *aname = "", *user = NULL;
	int opt;

	while ((opt = getopt(argc, argv, "+a:A:u:m:V:dh")) != -1) {
		switch (opt) {
		case 'a': addr = optarg; break;
		case 'A': aname = optarg; break;
		case 'u': user = optarg; break;
		case 'm': {
			char *end;
			unsigned long m = strtoul(optarg, &end, 0);
			if (*end || m < NP_MIN_MSIZE || m > 0x7fffffffUL) {
				fprintf(stderr, "ninep: bad msize '%s'\n%s\n", optarg, USAGE);
				return 2;
			}
			o.msize = (uint32_t)m;
			break;
		}
		case 'V': {
			int d = np_dialect_parse(optarg, strlen(optarg));
			if (d < 0 || strcmp(np_dialect_name((enum np_dialect)d), optarg) != 0) {
				fprintf(stderr, "ninep: bad version '%s'\n%s\n", optarg, USAGE);
				return 2;
			}
			o.dialect = d;
			break;
		}
		case 'd': o.trace = trace; break;
		case 'h': usage_full(stdout); return 0;
		default: fprintf(stderr, "%s\n", USAGE); return 2;
		}
	}
	if (optind >= argc) {
		fprintf(stderr, "%s\n", USAGE);
		return 2;
	}
	int (*fn)(struct tool *, int, char **) = NULL;
	for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
		if (strcmp(argv[optind], commands[i].name) == 0)
			fn = commands[i].fn;
	if (!fn) {
		fprintf(stderr, "ninep: unknown command '%s'\n%s\n", argv[optind], USAGE);
		return 2;
	}
	if (!addr || !*addr) {
		fprintf(stderr, "ninep: no address: give -a ADDR or set NINEP_ADDRESS\n%s\n", USAGE);
		return 2;
	}

	/* The numeric uid is ours when USER is our own name (or not given);
	 * another name is looked up locally, else sent without a number. */
	uint32_t n_uname = NP_NONUNAME;
	struct passwd *pw = getpwuid(getuid());
	if (!user) {
		user = pw ? pw->pw_name : getenv("USER");
		n_uname = (uint32_t)getuid();
	} else if (pw && strcmp(user, pw->pw_name) == 0) {
		n_uname = (uint32_t)getuid();
	} else if ((pw = getpwnam(user)) != NULL) {
		n_uname = (uint32_t)pw->pw_uid;
	} else if (user[strspn(user, "0123456789")] == '\0') {
		n_uname = (uint32_t)strtoul(user, NULL, 10);
	}
	if (!user)
		user = "nobody";

	/* A closed stdout (ninep cat | head) must end quietly with an error
	 * status, not kill us mid-message. */
	signal(SIGPIPE, SIG_IGN);

	struct tool t = {.addr = addr, .aname = aname};
	char err[512];
	int e = np_client_connect(addr, &o, &t.c, err, sizeof err);
	if (e < 0) {
		fprintf(stderr, "ninep: %s\n", err);
		return 1;
	}
	e = np_client_attach(t.c, user, n_uname, aname, &t.root);
	if (e < 0) {
		fprintf(stderr, "ninep: attach '%s' as %s: %s\n", aname, user, strerror(-e));
		np_client_free(t.c);
		return 1;
	}
	int ac = argc - optind;
	char **av = argv + optind;
	optind = 0;
	int rc = fn(&t, ac, av);
	np_cfid_clunk(t.root);
	np_client_free(t.c);
	if (fflush(stdout) != 0 && rc == 0) {
		fprintf(stderr, "ninep: write error: %s\n", strerror(errno));
		rc = 1;
	}
	return rc;
}

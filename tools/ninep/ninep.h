/* The ninep command: shared state and helpers of the subcommands. */
#ifndef NINEP_TOOL_H
#define NINEP_TOOL_H

#include <stddef.h>
#include <stdint.h>

#include "ninep/client.h"

struct tool {
	np_client *c;
	np_cfid *root;
	const char *addr;
	const char *aname;
};

/* Report "ninep: CMD PATH: strerror(-err)" and return 1 (the exit status). */
int fail(const char *cmd, const char *path, int err);
/* Report a usage error and return 2. */
int usage_err(const char *cmd, const char *usage);

/* Walk from the attach root; leading slashes ignored, "" or "/" clones. */
int walk(struct tool *t, const char *path, np_cfid **out);
/* Split path into its parent (walked) and the last name (into name[]).
 * Fails with -EINVAL for the root itself. */
int walk_parent(struct tool *t, const char *path, np_cfid **dir, char *name, size_t cap);
/* Walk and open. */
int walk_open(struct tool *t, const char *path, int flags, np_cfid **out);
/* Open an existing file for writing (truncating), or create it. */
int open_for_write(struct tool *t, const char *path, np_cfid **out);
/* The whole-file size of f, or -errno. */
int64_t file_size(np_cfid *f);

/* Progress on stderr for long transfers when stderr is a terminal. */
struct progress {
	int on;
	uint64_t total, done;
	double start, last;
	const char *name;
};
void progress_start(struct progress *p, const char *name, uint64_t total);
void progress_update(struct progress *p, uint64_t done);
void progress_end(struct progress *p);

/* Subcommands: argv[0] is the command name.  Return the exit status. */
int cmd_ls(struct tool *t, int argc, char **argv);
int cmd_stat(struct tool *t, int argc, char **argv);
int cmd_tree(struct tool *t, int argc, char **argv);
int cmd_cat(struct tool *t, int argc, char **argv);
int cmd_get(struct tool *t, int argc, char **argv);
int cmd_put(struct tool *t, int argc, char **argv);
int cmd_write(struct tool *t, int argc, char **argv);
int cmd_mkdir(struct tool *t, int argc, char **argv);
int cmd_rm(struct tool *t, int argc, char **argv);
int cmd_mv(struct tool *t, int argc, char **argv);
int cmd_ln(struct tool *t, int argc, char **argv);
int cmd_readlink(struct tool *t, int argc, char **argv);
int cmd_chmod(struct tool *t, int argc, char **argv);
int cmd_chown(struct tool *t, int argc, char **argv);
int cmd_truncate(struct tool *t, int argc, char **argv);
int cmd_df(struct tool *t, int argc, char **argv);
int cmd_getfattr(struct tool *t, int argc, char **argv);
int cmd_setfattr(struct tool *t, int argc, char **argv);

#endif

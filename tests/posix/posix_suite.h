/* Shared definitions for the POSIX behaviour suite: one context per run,
 * one function per case, and the small helpers every case needs. */
#ifndef NINEP_POSIX_SUITE_H
#define NINEP_POSIX_SUITE_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

enum ps_result { PS_PASS, PS_FAIL, PS_SKIP };

struct ps_ctx {
	const char *root;      /* directory under test */
	bool quick;            /* smaller workloads (200-entry listing, shallower trees) */
	int entries;           /* --entries N: size of the directory listing case (0: default) */
	char dir[PATH_MAX];    /* fresh scratch directory for the current case */
	char msg[512];         /* reason for FAIL or SKIP */
};

typedef enum ps_result (*ps_case_fn)(struct ps_ctx *ctx);

struct ps_case {
	const char *name;
	ps_case_fn fn;
};

/* Record a reason and return the matching result. */
enum ps_result ps_fail(struct ps_ctx *ctx, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
enum ps_result ps_skip(struct ps_ctx *ctx, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* Path of NAME inside the case's scratch directory (static rotating buffers,
 * so a handful may be live at once). */
const char *ps_path(struct ps_ctx *ctx, const char *name);

/* Create NAME with CONTENT (len bytes) and mode 0644; -1 with errno on error. */
int ps_write_file(const char *path, const void *content, size_t len);
/* Whole-buffer I/O that retries short transfers; -1 with errno on error. */
ssize_t ps_write_all(int fd, const void *buf, size_t len);
ssize_t ps_read_all(int fd, void *buf, size_t len);
/* Remove a tree (best effort, used for cleanup). */
void ps_remove_tree(const char *path);

/* Fail the case with the expression text and errno when COND is false. */
#define PS_CHECK(ctx, cond, ...)                                                   \
	do {                                                                       \
		if (!(cond))                                                       \
			return ps_fail((ctx), __VA_ARGS__);                        \
	} while (0)

/* Cases, grouped by file. */
enum ps_result ps_case_create_rw(struct ps_ctx *ctx);
enum ps_result ps_case_append(struct ps_ctx *ctx);
enum ps_result ps_case_truncate(struct ps_ctx *ctx);
enum ps_result ps_case_o_append_two_fds(struct ps_ctx *ctx);
enum ps_result ps_case_o_excl(struct ps_ctx *ctx);
enum ps_result ps_case_sparse(struct ps_ctx *ctx);
enum ps_result ps_case_unlink_open(struct ps_ctx *ctx);

enum ps_result ps_case_rename_over_file(struct ps_ctx *ctx);
enum ps_result ps_case_rename_dir(struct ps_ctx *ctx);
enum ps_result ps_case_hardlinks(struct ps_ctx *ctx);
enum ps_result ps_case_symlinks(struct ps_ctx *ctx);
enum ps_result ps_case_mkdir_rmdir_nested(struct ps_ctx *ctx);
enum ps_result ps_case_rmdir_nonempty(struct ps_ctx *ctx);
enum ps_result ps_case_readdir_many(struct ps_ctx *ctx);

enum ps_result ps_case_chown_chmod(struct ps_ctx *ctx);
enum ps_result ps_case_eacces_other_user(struct ps_ctx *ctx);
enum ps_result ps_case_xattr_user(struct ps_ctx *ctx);
enum ps_result ps_case_statfs(struct ps_ctx *ctx);
enum ps_result ps_case_utimensat(struct ps_ctx *ctx);

enum ps_result ps_case_fcntl_locks(struct ps_ctx *ctx);
enum ps_result ps_case_mmap_shared(struct ps_ctx *ctx);

#endif

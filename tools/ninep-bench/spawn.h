/* --spawn: start a server with placeholders filled, wait until it answers. */
#ifndef NINEP_BENCH_SPAWN_H
#define NINEP_BENCH_SPAWN_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct nb_spawned;

/* cmd and addr_tmpl may use {sock}, {dir} and {port}; the filled address is
 * written to addr_out.  preload (may be NULL): a counting allocator to
 * LD_PRELOAD into the server.  Returns NULL after printing why. */
struct nb_spawned *nb_spawn(const char *cmd, const char *addr_tmpl, const char *tmpdir,
			    unsigned idx, const char *preload, char *addr_out, size_t n);
pid_t nb_spawn_pid(const struct nb_spawned *s);
/* The allocation counters page: [0] allocations, [1] frees, [2] bytes. */
volatile const uint64_t *nb_spawn_alloc_counters(const struct nb_spawned *s);
/* aname with {dir} replaced (owned by the spawn record, or aname itself). */
const char *nb_spawn_subst_aname(const struct nb_spawned *s, const char *aname);
/* Stop every spawned server (SIGTERM, then SIGKILL) and remove its files. */
void nb_spawn_kill_all(void);

#endif

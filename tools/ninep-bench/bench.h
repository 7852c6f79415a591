/* ninep-bench: shared definitions of the benchmark tool. */
#ifndef NINEP_BENCH_H
#define NINEP_BENCH_H

#include <pthread.h>
#include <stddef.h>
#include <stdio.h>
#include <stdint.h>
#include <sys/types.h>

#include "ninep/client.h"
#include "ninep/transport.h"

#define NB_MAXSERIES 4   /* two addresses and their raw peers */
#define NB_MAXCONNS 64
#define NB_MAXDEPTH 1024
#define NB_FIDBASE 0x40000000u /* slot fids: far above the library's own */
#define NB_DIRENTS 10000

enum nb_wl {
	WL_WRITE, WL_READ, WL_GETATTR, WL_WALKCLUNK, WL_OPENCLOSE,
	WL_CREATEUNLINK, WL_READDIR, WL_SEQWRITE, WL_SEQREAD, WL_COUNT
};

/* One request/reply exchange of an operation, as frame sizes on the wire. */
struct nb_exch {
	uint32_t tsize, rsize;
};

/* The wire shape of one operation: what the raw baseline replays. */
struct nb_shape {
	unsigned n;
	struct nb_exch e[4096];
};

struct nb_cfg {
	unsigned wl_mask;
	enum nb_wl order[WL_COUNT];
	unsigned nwl;
	uint32_t size;         /* -s: write/read payload */
	uint32_t msize;        /* -m */
	unsigned depth;        /* -q */
	unsigned conns;        /* -c */
	double duration;       /* -t seconds per run */
	uint64_t count;        /* -n ops per run (all connections), 0 = timed */
	double warmup;         /* seconds */
	unsigned runs;         /* -r */
	const char *aname, *uname;
	uint64_t file_size;    /* seqread/seqwrite file */
	int baseline;
	int cpu_client, cpu_server; /* CPUs used by --pin */
};

/* Per-run measurement of one series (an address or the raw peer). */
struct nb_run {
	double secs;
	uint64_t ops, reqs, bytes, errors;
	uint64_t client_ns;    /* CPU of the client threads */
	uint64_t server_ns;    /* CPU of the server (or echo peer); 0 unknown */
	uint64_t server_cs;    /* context switches of the server */
	uint64_t allocs;       /* heap allocations of the server (--alloc) */
	int have_server, have_allocs;
	uint32_t *lat;         /* per-request latency, ns (saturated) */
	size_t nlat, caplat;
};

/* Latency sample store: one per connection thread, merged after a run. */
void nb_lat_add(struct nb_run *r, uint64_t ns);
void nb_run_merge(struct nb_run *dst, struct nb_run *src);
void nb_run_free(struct nb_run *r);

/* ---- time, CPU, process statistics (procstat.c) ---------------------- */
uint64_t nb_now_ns(void);
uint64_t nb_thread_cpu_ns(void);                /* calling thread */
int nb_proc_cpu_ns(pid_t pid, uint64_t *ns);    /* sum over /proc/PID/task/ */
int nb_proc_ctxsw(pid_t pid, uint64_t *n);
long nb_proc_rss_kb(pid_t pid);
/* Pin every task of pid (cpu < 0: allow all CPUs).  Returns tasks pinned
 * or -errno. */
int nb_pin_proc(pid_t pid, int cpu);
int nb_pin_self_thread(int cpu);
/* The pid at the other end of a unix socket address, or -errno. */
pid_t nb_unix_peer_pid(const char *addr);

/* What is sampled around a run of a server (or echo peer) process. */
struct nb_task_sample {
	pid_t tid;
	uint64_t ns, cs;
};
struct nb_mon {
	pid_t pid;                        /* 0: unknown, nothing sampled */
	volatile const uint64_t *allocs;  /* --alloc counter page, or NULL */
	uint64_t al0;
	/* Per-thread figures at the start: a thread that exits during the run
	 * must not take its whole history out of the sum. */
	struct nb_task_sample *t0;
	size_t n0;
};
void nb_mon_begin(struct nb_mon *m);
void nb_mon_end(struct nb_mon *m, struct nb_run *r);

/* ---- the 9P side (ninep_run.c) --------------------------------------- */
struct nb_target;  /* one address: setup connections and slots */
struct nb_target *nb_target_open(const char *addr, const struct nb_cfg *cfg, char *err, size_t n);
void nb_target_close(struct nb_target *t);
/* Prepare the files a workload needs; connects cfg->conns clients. */
int nb_target_setup(struct nb_target *t, enum nb_wl w, uint32_t msize, char *err, size_t n);
void nb_target_teardown(struct nb_target *t);
/* One measured run (cfg->duration or cfg->count); shape may be NULL,
 * otherwise receives one operation's exchange sizes. */
int nb_target_run(struct nb_target *t, double secs, uint64_t count, int cpu,
		  struct nb_mon *mon, struct nb_run *out, struct nb_shape *shape);
const char *nb_target_desc(const struct nb_target *t);
uint32_t nb_target_msize(const struct nb_target *t);
unsigned nb_wl_reqs_per_op(enum nb_wl w); /* 0 when variable (readdir) */

/* ---- the raw transport baseline (raw.c) ------------------------------ */
struct nb_raw;
/* Start an echo peer process listening on the same transport kind as
 * addr (unix: a fresh socket in tmpdir; tcp: 127.0.0.1:0). */
struct nb_raw *nb_raw_start(const np_addr *kind, const char *tmpdir, char *err, size_t n);
pid_t nb_raw_pid(const struct nb_raw *r);
const char *nb_raw_addr(const struct nb_raw *r);
int nb_raw_run(struct nb_raw *r, const struct nb_shape *shape, unsigned conns, unsigned depth,
	       double secs, uint64_t count, int cpu, struct nb_run *out);
void nb_raw_stop(struct nb_raw *r);

/* ---- statistics and reports (stats.c, report.c, json.c, svg.c) ------- */
double nb_median(const double *v, size_t n);
double nb_min(const double *v, size_t n);
double nb_max(const double *v, size_t n);
/* Percentile (0..100) of a latency set; sorts in place. */
uint32_t nb_pct(uint32_t *v, size_t n, double p);
void nb_histogram(FILE *f, const double *v, size_t n, const char *indent);

const char *nb_wl_name(enum nb_wl w);
int nb_wl_parse(const char *s, enum nb_wl *w);

/* Everything measured for one workload under one placement. */
struct nb_series {
	const char *label;     /* "raw", address strings */
	int is_raw;
	int raw_index;         /* series index of the raw peer for this one, -1 */
	struct nb_run *runs;   /* cfg->runs */
	unsigned nruns;
	struct nb_run all;     /* latencies of every run pooled */
};

struct nb_result {
	enum nb_wl wl;
	const char *placement;
	uint32_t size, msize;
	unsigned depth, conns, reqs_per_op;
	unsigned nseries;
	struct nb_series s[NB_MAXSERIES];
};

void nb_report_text(FILE *f, struct nb_result *r);
int nb_json_open(const char *path);
void nb_json_add(const struct nb_result *r, const struct nb_cfg *cfg);
int nb_json_close(void);
int nb_svg_write(const char *path, struct nb_result *const *res, size_t n);

/* Per-run figures derived from a run. */
double nb_rate(const struct nb_run *r);       /* ops/s */
double nb_bw(const struct nb_run *r);         /* bytes/s */
double nb_srv_us(const struct nb_run *r);     /* server CPU us per op, or -1 */
double nb_cli_us(const struct nb_run *r);
double nb_srv_cs(const struct nb_run *r);     /* server ctx switches per op */
double nb_allocs(const struct nb_run *r);     /* server allocations per op */

#endif

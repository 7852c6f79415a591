/* ninep-bench: measure 9P servers against the transport's limit and against
 * each other, in the same run, with CPU cost and distributions. */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <pwd.h>
#include <signal.h>
#include <stdarg.h>
#include <sys/resource.h>
#include <time.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <fcntl.h>
#include <unistd.h>

#include "bench.h"
#include "spawn.h"

#ifndef NB_ALLOC_PRELOAD
#define NB_ALLOC_PRELOAD ""
#endif

#define MAXADDR 2

static void usage(FILE *f)
{
	fprintf(f,
		"usage: ninep-bench [options] ADDR [ADDR2]\n"
		"Workloads (-w, comma list or repeated): write read getattr walk-clunk open-close\n"
		"  create-unlink readdir seqwrite seqread (default: write)\n"
		"  -s BYTES          write/read size (default 4096)\n"
		"  -m BYTES          msize (default 65536; seqread/seqwrite 1 MiB)\n"
		"  -q N              requests in flight per connection (default 1)\n"
		"  -c N              connections, one thread each (default 1)\n"
		"  -t SECS           duration of one run (default 1)\n"
		"  -n COUNT          operations per run instead of a duration\n"
		"  -r RUNS           runs per series (default 10)\n"
		"      --warmup SECS warm-up before the runs of each workload (default 0.3)\n"
		"  -A ANAME          attach name (repeat: one per address)\n"
		"  -u UNAME          user name (default: the current user)\n"
		"      --baseline    also run a raw echo peer over the same transport\n"
		"      --pin LIST    same,split,none (default same)\n"
		"      --cpus C,S    CPUs of client and server for --pin (default 0,1)\n"
		"      --server-pid PID  the server of each address (repeat); unix\n"
		"                    sockets are found through SO_PEERCRED\n"
		"      --spawn CMD   start the server of each address (repeat) with {sock},\n"
		"                    {dir} and {port} substituted, also in ADDR (default\n"
		"                    unix:{sock})\n"
		"      --alloc       count the spawned servers' heap allocations (LD_PRELOAD)\n"
		"      --alloc-preload PATH  the counting allocator (default: the built one)\n"
		"      --idle-conns N  open N idle connections and report server RSS per\n"
		"                    connection after the idle trim (--idle-wait SECS, 3.5)\n"
		"      --file-size BYTES  seqread/seqwrite file (default 64 MiB)\n"
		"      --tmpdir DIR  sockets and exported dirs (default /dev/shm)\n"
		"      --json FILE   --svg FILE\n");
}

static void die(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));
static void die(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	fprintf(stderr, "ninep-bench: ");
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	nb_spawn_kill_all();
	exit(1);
}

static double parse_d(const char *opt, const char *s)
{
	char *e;
	double v = strtod(s, &e);
	if (e == s || *e || !(v >= 0))
		die("%s: bad number '%s'", opt, s);
	return v;
}

static uint64_t parse_u(const char *opt, const char *s)
{
	char *e;
	errno = 0;
	unsigned long long v = strtoull(s, &e, 0);
	if (errno || e == s || s[0] == '-')
		die("%s: bad number '%s'", opt, s);
	if (*e == 'k' || *e == 'K')
		v <<= 10, e++;
	else if (*e == 'm' || *e == 'M')
		v <<= 20, e++;
	if (*e)
		die("%s: bad number '%s'", opt, s);
	return v;
}

static void add_workloads(struct nb_cfg *cfg, const char *list)
{
	char *dup = strdup(list), *save = NULL;
	for (char *t = strtok_r(dup, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
		enum nb_wl w;
		if (nb_wl_parse(t, &w) < 0)
			die("-w: unknown workload '%s'", t);
		if (!(cfg->wl_mask & (1u << w)))
			cfg->order[cfg->nwl++] = w;
		cfg->wl_mask |= 1u << w;
	}
	free(dup);
}

/* ---- idle connections ---------------------------------------------------- */

/* Open n connections, each versioned and attached, with no client library:
 * its per-connection buffers would dwarf what is measured. */
static int idle_conns(const char *addr, const char *aname, const char *uname, pid_t pid,
		      unsigned n, double wait)
{
	np_addr a;
	char err[256];
	if (np_addr_parse(addr, &a, err, sizeof err) < 0)
		die("%s", err);
	int *fds = calloc(n, sizeof *fds);
	if (!fds)
		die("out of memory");
	long rss0 = nb_proc_rss_kb(pid);
	uint8_t buf[512];
	unsigned ok = 0;
	for (unsigned i = 0; i < n; i++) {
		int wfd;
		if (np_dial(&a, &fds[i], &wfd, err, sizeof err) < 0) {
			fprintf(stderr, "ninep-bench: connection %u: %s\n", i, err);
			break;
		}
		np_fcall v = {.type = NP_TVERSION, .tag = NP_NOTAG,
			      .version = {8192, np_strz("9P2000.L")}};
		np_fcall at = {.type = NP_TATTACH, .tag = 1,
			       .tattach = {1, NP_NOFID, np_strz(uname), np_strz(aname), (uint32_t)getuid()}};
		int bad = 0;
		for (int step = 0; step < 2 && !bad; step++) {
			int len = np_encode(step ? &at : &v, NP_9P2000L, buf, sizeof buf);
			if (len < 0 || write(fds[i], buf, (size_t)len) != len) {
				bad = 1;
				break;
			}
			/* Read one reply frame. */
			size_t got = 0, want = 4;
			while (got < want) {
				ssize_t r = read(fds[i], buf + got, want - got);
				if (r <= 0) {
					bad = 1;
					break;
				}
				got += (size_t)r;
				if (got == 4) {
					want = np_frame_size(buf);
					if (want > sizeof buf || want < 7) {
						bad = 1;
						break;
					}
				}
			}
			uint8_t want_type = step ? NP_RATTACH : NP_RVERSION;
			if (!bad && buf[4] != want_type)
				bad = 1;
		}
		if (bad) {
			fprintf(stderr, "ninep-bench: connection %u: version/attach failed\n", i);
			close(fds[i]);
			break;
		}
		ok++;
	}
	long rss1 = nb_proc_rss_kb(pid);
	struct timespec ts = {(time_t)wait, (long)((wait - (double)(time_t)wait) * 1e9)};
	nanosleep(&ts, NULL);
	long rss2 = nb_proc_rss_kb(pid);
	printf("idle connections to %s (server pid %ld): %u of %u opened\n", addr, (long)pid, ok, n);
	printf("  server RSS: before %ld KiB, after connecting %ld KiB, after %.1f s idle %ld KiB\n",
	       rss0, rss1, wait, rss2);
	if (ok)
		printf("  per idle connection: %.2f KiB just connected, %.2f KiB after the idle trim"
		       " (target < 64 KiB)\n",
		       (double)(rss1 - rss0) / ok, (double)(rss2 - rss0) / ok);
	for (unsigned i = 0; i < ok; i++)
		close(fds[i]);
	free(fds);
	return ok == n ? 0 : 1;
}

/* ---- the main loop -------------------------------------------------------- */

struct addr_ctx {
	char addr[NP_ADDR_STRMAX];
	char label[NP_ADDR_STRMAX + 200]; /* what the reports call it */
	np_addr parsed;
	const char *aname;
	pid_t pid;
	volatile const uint64_t *allocs;
	struct nb_target *t;
};

static void pin_all(struct addr_ctx *ad, unsigned na, struct nb_raw **raws, unsigned nraw, int cpu)
{
	for (unsigned i = 0; i < na; i++)
		if (ad[i].pid > 0)
			nb_pin_proc(ad[i].pid, cpu);
	for (unsigned i = 0; i < nraw; i++)
		nb_pin_proc(nb_raw_pid(raws[i]), cpu);
}

int main(int argc, char **argv)
{
	enum { O_WARMUP = 1000, O_BASELINE, O_PIN, O_CPUS, O_SPID, O_SPAWN, O_ALLOC, O_PRELOAD,
	       O_IDLE, O_IDLEWAIT, O_FSIZE, O_TMP, O_JSON, O_SVG };
	static const struct option lo[] = {
		{"warmup", required_argument, NULL, O_WARMUP},
		{"baseline", no_argument, NULL, O_BASELINE},
		{"pin", required_argument, NULL, O_PIN},
		{"cpus", required_argument, NULL, O_CPUS},
		{"server-pid", required_argument, NULL, O_SPID},
		{"spawn", required_argument, NULL, O_SPAWN},
		{"alloc", no_argument, NULL, O_ALLOC},
		{"alloc-preload", required_argument, NULL, O_PRELOAD},
		{"idle-conns", required_argument, NULL, O_IDLE},
		{"idle-wait", required_argument, NULL, O_IDLEWAIT},
		{"file-size", required_argument, NULL, O_FSIZE},
		{"tmpdir", required_argument, NULL, O_TMP},
		{"json", required_argument, NULL, O_JSON},
		{"svg", required_argument, NULL, O_SVG},
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	struct nb_cfg cfg = {.size = 4096, .depth = 1, .conns = 1, .duration = 1, .warmup = 0.3,
			     .runs = 10, .file_size = 64ull << 20, .cpu_client = 0, .cpu_server = 1};
	const char *anames[MAXADDR] = {NULL, NULL}, *spawns[MAXADDR] = {NULL, NULL};
	pid_t spids[MAXADDR] = {0, 0};
	unsigned nanames = 0, nspawn = 0, nspid = 0, idle = 0;
	double idle_wait = 3.5;
	const char *pins = "same", *json = NULL, *svg = NULL, *preload = NB_ALLOC_PRELOAD;
	const char *tmpdir = access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp";
	int alloc = 0, c;
	uint32_t msize_opt = 0;
	struct passwd *pw = getpwuid(getuid());
	cfg.uname = pw ? pw->pw_name : "root";

	while ((c = getopt_long(argc, argv, "w:s:m:q:c:t:n:r:A:u:h", lo, NULL)) != -1) {
		switch (c) {
		case 'w': add_workloads(&cfg, optarg); break;
		case 's': cfg.size = (uint32_t)parse_u("-s", optarg); break;
		case 'm': msize_opt = (uint32_t)parse_u("-m", optarg); break;
		case 'q': cfg.depth = (unsigned)parse_u("-q", optarg); break;
		case 'c': cfg.conns = (unsigned)parse_u("-c", optarg); break;
		case 't': cfg.duration = parse_d("-t", optarg); break;
		case 'n': cfg.count = parse_u("-n", optarg); break;
		case 'r': cfg.runs = (unsigned)parse_u("-r", optarg); break;
		case 'A':
			if (nanames == MAXADDR)
				die("-A: at most %d", MAXADDR);
			anames[nanames++] = optarg;
			break;
		case 'u': cfg.uname = optarg; break;
		case O_WARMUP: cfg.warmup = parse_d("--warmup", optarg); break;
		case O_BASELINE: cfg.baseline = 1; break;
		case O_PIN: pins = optarg; break;
		case O_CPUS:
			if (sscanf(optarg, "%d,%d", &cfg.cpu_client, &cfg.cpu_server) != 2)
				die("--cpus: expected C,S");
			break;
		case O_SPID:
			if (nspid == MAXADDR)
				die("--server-pid: at most %d", MAXADDR);
			spids[nspid++] = (pid_t)parse_u("--server-pid", optarg);
			break;
		case O_SPAWN:
			if (nspawn == MAXADDR)
				die("--spawn: at most %d", MAXADDR);
			spawns[nspawn++] = optarg;
			break;
		case O_ALLOC: alloc = 1; break;
		case O_PRELOAD: preload = optarg; break;
		case O_IDLE: idle = (unsigned)parse_u("--idle-conns", optarg); break;
		case O_IDLEWAIT: idle_wait = parse_d("--idle-wait", optarg); break;
		case O_FSIZE: cfg.file_size = parse_u("--file-size", optarg); break;
		case O_TMP: tmpdir = optarg; break;
		case O_JSON: json = optarg; break;
		case O_SVG: svg = optarg; break;
		case 'h': usage(stdout); return 0;
		default: usage(stderr); return 2;
		}
	}
	unsigned na = (unsigned)(argc - optind);
	if (na > MAXADDR)
		die("at most %d addresses", MAXADDR);
	if (na < nspawn)
		na = nspawn;
	if (!na) {
		usage(stderr);
		return 2;
	}
	if (!cfg.nwl)
		add_workloads(&cfg, "write");
	if (!cfg.depth || cfg.depth > NB_MAXDEPTH || !cfg.conns || cfg.conns > NB_MAXCONNS || !cfg.runs)
		die("-q 1..%d, -c 1..%d, -r >= 1", NB_MAXDEPTH, NB_MAXCONNS);
	if (cfg.file_size < 2 * (uint64_t)(msize_opt ? msize_opt : 1u << 20))
		die("--file-size must hold two messages of the msize");
	if (alloc && nspawn < na)
		die("--alloc needs --spawn for every address");
	signal(SIGPIPE, SIG_IGN);

	/* Raise the descriptor limit: idle connections and many spawned
	 * servers' connections need it (inherited by spawned servers, which
	 * may hold more than one descriptor per connection: a passthrough
	 * server keeps the root fid's O_PATH descriptor too). */
	struct rlimit rl;
	if (getrlimit(RLIMIT_NOFILE, &rl) == 0) {
		rlim_t want = 3 * (rlim_t)idle + 1024;
		if (rl.rlim_max < want)
			rl.rlim_max = want;
		if (rl.rlim_cur < want)
			rl.rlim_cur = want;
		setrlimit(RLIMIT_NOFILE, &rl);
	}

	struct addr_ctx ad[MAXADDR];
	memset(ad, 0, sizeof ad);
	for (unsigned i = 0; i < na; i++) {
		const char *given = optind + (int)i < argc ? argv[optind + (int)i] : "unix:{sock}";
		ad[i].aname = anames[nanames > 1 ? i : 0] ? anames[nanames > 1 ? i : 0] : "";
		if (i < nspawn) {
			struct nb_spawned *sp = nb_spawn(spawns[i], given, tmpdir, i,
							 alloc ? preload : NULL, ad[i].addr, sizeof ad[i].addr);
			if (!sp)
				die("could not start '%s'", spawns[i]);
			ad[i].pid = nb_spawn_pid(sp);
			ad[i].allocs = nb_spawn_alloc_counters(sp);
			ad[i].aname = nb_spawn_subst_aname(sp, ad[i].aname);
		} else {
			snprintf(ad[i].addr, sizeof ad[i].addr, "%s", given);
		}
		char err[256];
		if (np_addr_parse(ad[i].addr, &ad[i].parsed, err, sizeof err) < 0)
			die("%s", err);
		if (!ad[i].pid && i < nspid)
			ad[i].pid = spids[i];
		if (!ad[i].pid && ad[i].parsed.kind == NP_ADDR_UNIX) {
			pid_t p = nb_unix_peer_pid(ad[i].addr);
			if (p > 0)
				ad[i].pid = p;
		}
		/* Spawned servers are named by their program (their socket paths
		 * are temporary); given addresses by themselves. */
		if (i < nspawn) {
			char prog[128] = "server";
			sscanf(spawns[i], "%127s", prog);
			const char *base = strrchr(prog, '/') ? strrchr(prog, '/') + 1 : prog;
			snprintf(ad[i].label, sizeof ad[i].label, "%s%s (%s)", base,
				 strstr(spawns[i], "--ramfs") ? " --ramfs" : "",
				 ad[i].parsed.kind == NP_ADDR_TCP ? "tcp" : "unix");
		} else {
			snprintf(ad[i].label, sizeof ad[i].label, "%.*s", (int)sizeof ad[i].addr, ad[i].addr);
		}
		if (!ad[i].pid)
			fprintf(stderr, "ninep-bench: %s: server process unknown (give --server-pid):"
					" no server CPU figures\n", ad[i].addr);
	}

	if (idle) {
		int rc = 0;
		for (unsigned i = 0; i < na; i++) {
			if (ad[i].pid <= 0)
				die("--idle-conns needs the server pid of %s", ad[i].addr);
			rc |= idle_conns(ad[i].addr, ad[i].aname, cfg.uname, ad[i].pid, idle, idle_wait);
		}
		nb_spawn_kill_all();
		return rc;
	}

	/* Raw echo peers: one per transport kind among the addresses. */
	struct nb_raw *raws[MAXADDR] = {NULL, NULL};
	int raw_of[MAXADDR] = {-1, -1};
	unsigned nraw = 0;
	if (cfg.baseline) {
		for (unsigned i = 0; i < na; i++) {
			for (unsigned j = 0; j < i; j++)
				if (ad[j].parsed.kind == ad[i].parsed.kind)
					raw_of[i] = raw_of[j];
			if (raw_of[i] >= 0)
				continue;
			char err[256];
			raws[nraw] = nb_raw_start(&ad[i].parsed, tmpdir, err, sizeof err);
			if (!raws[nraw])
				die("baseline: %s", err);
			raw_of[i] = (int)nraw++;
		}
	}

	if (json && nb_json_open(json) < 0)
		die("%s: %s", json, strerror(errno));
	struct nb_result **all = NULL;
	size_t nall = 0;
	struct nb_shape *shape = malloc(sizeof *shape);
	int failed = 0;

	char *pdup = strdup(pins), *psave = NULL;
	for (char *pl = strtok_r(pdup, ",", &psave); pl; pl = strtok_r(NULL, ",", &psave)) {
		int ccpu, scpu;
		if (!strcmp(pl, "same"))
			ccpu = scpu = cfg.cpu_client;
		else if (!strcmp(pl, "split"))
			ccpu = cfg.cpu_client, scpu = cfg.cpu_server;
		else if (!strcmp(pl, "none"))
			ccpu = scpu = -1;
		else
			die("--pin: unknown placement '%s'", pl);
		nb_pin_self_thread(ccpu);
		for (unsigned wi = 0; wi < cfg.nwl; wi++) {
			enum nb_wl w = cfg.order[wi];
			struct nb_cfg wc = cfg;
			int seq = w == WL_SEQREAD || w == WL_SEQWRITE;
			wc.msize = msize_opt ? msize_opt : seq ? 1u << 20 : 65536;
			struct nb_result *r = calloc(1, sizeof *r);
			r->wl = w;
			r->placement = strdup(pl);
			r->size = cfg.size;
			r->depth = cfg.depth;
			r->conns = cfg.conns;
			r->reqs_per_op = nb_wl_reqs_per_op(w);
			int sidx[MAXADDR], ridx[MAXADDR] = {-1, -1}, ok = 1;
			for (unsigned i = 0; i < na && ok; i++) {
				char err[512];
				wc.aname = ad[i].aname;
				if (!ad[i].t && !(ad[i].t = nb_target_open(ad[i].addr, &wc, err, sizeof err)))
					die("%s", err);
				if (nb_target_setup(ad[i].t, w, wc.msize, err, sizeof err) < 0) {
					fprintf(stderr, "ninep-bench: %s\n", err);
					ok = 0;
					break;
				}
				if (cfg.baseline && ridx[raw_of[i]] < 0) {
					struct nb_series *s = &r->s[r->nseries];
					ridx[raw_of[i]] = (int)r->nseries++;
					s->label = strdup(ad[i].parsed.kind == NP_ADDR_UNIX ? "raw unix echo"
											  : "raw tcp echo");
					s->is_raw = 1;
					s->raw_index = -1;
				}
				struct nb_series *s = &r->s[r->nseries];
				sidx[i] = (int)r->nseries++;
				uint32_t ms = nb_target_msize(ad[i].t);
				if (i == 0)
					r->msize = ms;
				if (ms != r->msize) {
					char *l;
					if (asprintf(&l, "%s [msize %u]", ad[i].label, ms) < 0)
						die("out of memory");
					s->label = l;
				} else {
					s->label = strdup(ad[i].label);
				}
				s->raw_index = cfg.baseline ? ridx[raw_of[i]] : -1;
			}
			if (!ok) {
				failed = 1;
				for (unsigned i = 0; i < na; i++)
					nb_target_teardown(ad[i].t);
				continue;
			}
			for (unsigned i = 0; i < r->nseries; i++) {
				r->s[i].runs = calloc(cfg.runs, sizeof *r->s[i].runs);
				r->s[i].nruns = cfg.runs;
			}
			pin_all(ad, na, raws, nraw, scpu);
			/* Warm-up: pools fill, caches settle; address 0 gives the shape
			 * of one operation for the raw baseline. */
			shape->n = 0;
			for (unsigned i = 0; i < na; i++) {
				struct nb_run tmp;
				struct nb_mon none = {0};
				nb_target_run(ad[i].t, cfg.warmup > 0 ? cfg.warmup : 0.001, 0, ccpu, &none,
					      &tmp, i == 0 ? shape : NULL);
				nb_run_free(&tmp);
			}
			if (cfg.baseline && shape->n)
				for (unsigned k = 0; k < nraw; k++) {
					struct nb_run tmp;
					nb_raw_run(raws[k], shape, cfg.conns, cfg.depth,
						   cfg.warmup > 0 ? cfg.warmup : 0.001, 0, ccpu, &tmp);
					nb_run_free(&tmp);
				}
			for (unsigned run = 0; run < cfg.runs; run++) {
				for (unsigned i = 0; i < na; i++) {
					pin_all(ad, na, raws, nraw, scpu); /* servers may have new threads */
					if (cfg.baseline && (i == 0 || raw_of[i] != raw_of[0])) {
						int k = ridx[raw_of[i]];
						struct nb_run *u = &r->s[k].runs[run];
						if (!shape->n || nb_raw_run(raws[raw_of[i]], shape, cfg.conns, cfg.depth,
									    cfg.duration, cfg.count, ccpu, u) < 0)
							u->errors++;
						nb_run_merge(&r->s[k].all, u);
						nb_run_free(u);
					}
					struct nb_mon mon = {.pid = ad[i].pid, .allocs = ad[i].allocs};
					struct nb_run *u = &r->s[sidx[i]].runs[run];
					if (nb_target_run(ad[i].t, cfg.duration, cfg.count, ccpu, &mon, u, NULL) < 0)
						failed = 1;
					nb_run_merge(&r->s[sidx[i]].all, u);
					nb_run_free(u);
				}
			}
			for (unsigned i = 0; i < na; i++)
				nb_target_teardown(ad[i].t);
			nb_report_text(stdout, r);
			fflush(stdout);
			nb_json_add(r, &cfg);
			all = realloc(all, (nall + 1) * sizeof *all);
			all[nall++] = r;
		}
	}
	free(pdup);
	for (unsigned i = 0; i < na; i++)
		nb_target_close(ad[i].t);
	for (unsigned i = 0; i < nraw; i++)
		nb_raw_stop(raws[i]);
	if (json && nb_json_close() != 0)
		die("%s: %s", json, strerror(errno));
	if (svg && nb_svg_write(svg, all, nall) != 0)
		die("%s: %s", svg, strerror(errno));
	for (size_t i = 0; i < nall; i++) {
		for (unsigned j = 0; j < all[i]->nseries; j++) {
			free((char *)all[i]->s[j].label);
			free(all[i]->s[j].runs);
			nb_run_free(&all[i]->s[j].all);
		}
		free((char *)all[i]->placement);
		free(all[i]);
	}
	free(all);
	free(shape);
	nb_spawn_kill_all();
	return failed;
}

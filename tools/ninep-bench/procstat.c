/* Time, CPU and scheduler figures of this process and of another one, read
 * from /proc: schedstat is nanosecond-exact, unlike rusage ticks. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "bench.h"

uint64_t nb_now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

uint64_t nb_thread_cpu_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* Call fn for each task id of pid; returns tasks visited or -errno. */
static int each_task(pid_t pid, int (*fn)(pid_t pid, const char *tid, void *arg), void *arg)
{
	char path[64];
	snprintf(path, sizeof path, "/proc/%ld/task", (long)pid);
	DIR *d = opendir(path);
	if (!d)
		return -errno;
	int n = 0;
	struct dirent *e;
	while ((e = readdir(d))) {
		if (e->d_name[0] == '.')
			continue;
		if (fn(pid, e->d_name, arg) == 0)
			n++;
	}
	closedir(d);
	return n;
}

static int read_small(const char *path, char *buf, size_t cap)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	ssize_t r = read(fd, buf, cap - 1);
	int e = errno;
	close(fd);
	if (r < 0)
		return -e;
	buf[r] = 0;
	return (int)r;
}

static int add_schedstat(pid_t pid, const char *tid, void *arg)
{
	char path[320], buf[128];
	snprintf(path, sizeof path, "/proc/%ld/task/%s/schedstat", (long)pid, tid);
	if (read_small(path, buf, sizeof buf) < 0)
		return -1; /* the task exited meanwhile */
	*(uint64_t *)arg += strtoull(buf, NULL, 10);
	return 0;
}

int nb_proc_cpu_ns(pid_t pid, uint64_t *ns)
{
	*ns = 0;
	int n = each_task(pid, add_schedstat, ns);
	return n < 0 ? n : 0;
}

static int add_ctxsw(pid_t pid, const char *tid, void *arg)
{
	char path[320], buf[4096];
	snprintf(path, sizeof path, "/proc/%ld/task/%s/status", (long)pid, tid);
	if (read_small(path, buf, sizeof buf) < 0)
		return -1;
	uint64_t sum = 0;
	for (const char *k = buf; (k = strstr(k, "ctxt_switches:")); k++)
		sum += strtoull(k + strlen("ctxt_switches:"), NULL, 10);
	*(uint64_t *)arg += sum;
	return 0;
}

int nb_proc_ctxsw(pid_t pid, uint64_t *n)
{
	*n = 0;
	int r = each_task(pid, add_ctxsw, n);
	return r < 0 ? r : 0;
}

long nb_proc_rss_kb(pid_t pid)
{
	char path[64], buf[4096];
	snprintf(path, sizeof path, "/proc/%ld/status", (long)pid);
	int r = read_small(path, buf, sizeof buf);
	if (r < 0)
		return r;
	const char *k = strstr(buf, "VmRSS:");
	return k ? strtol(k + 6, NULL, 10) : -ENOENT;
}

static void cpuset_for(int cpu, cpu_set_t *set)
{
	CPU_ZERO(set);
	if (cpu >= 0) {
		CPU_SET(cpu, set);
		return;
	}
	long n = sysconf(_SC_NPROCESSORS_CONF);
	for (long i = 0; i < n && i < CPU_SETSIZE; i++)
		CPU_SET((int)i, set);
}

static int pin_task(pid_t pid, const char *tid, void *arg)
{
	(void)pid;
	cpu_set_t set;
	cpuset_for(*(int *)arg, &set);
	return sched_setaffinity((pid_t)strtol(tid, NULL, 10), sizeof set, &set) == 0 ? 0 : -1;
}

int nb_pin_proc(pid_t pid, int cpu)
{
	return each_task(pid, pin_task, &cpu);
}

int nb_pin_self_thread(int cpu)
{
	cpu_set_t set;
	cpuset_for(cpu, &set);
	return -pthread_setaffinity_np(pthread_self(), sizeof set, &set);
}

pid_t nb_unix_peer_pid(const char *addr)
{
	np_addr a;
	char err[128];
	int rfd, wfd;
	if (np_addr_parse(addr, &a, err, sizeof err) < 0 || a.kind != NP_ADDR_UNIX)
		return -EINVAL;
	int e = np_dial(&a, &rfd, &wfd, err, sizeof err);
	if (e < 0)
		return e;
	struct ucred cr;
	socklen_t len = sizeof cr;
	e = getsockopt(rfd, SOL_SOCKET, SO_PEERCRED, &cr, &len);
	int saved = errno;
	close(rfd);
	if (e < 0)
		return -saved;
	return cr.pid > 0 ? cr.pid : -ESRCH;
}

struct snap {
	struct nb_task_sample *v;
	size_t n, cap;
};

static int take_task(pid_t pid, const char *tid, void *arg)
{
	struct snap *sn = arg;
	char path[320], buf[4096];
	snprintf(path, sizeof path, "/proc/%ld/task/%s/schedstat", (long)pid, tid);
	if (read_small(path, buf, sizeof buf) < 0)
		return -1;
	struct nb_task_sample x = {(pid_t)strtol(tid, NULL, 10), strtoull(buf, NULL, 10), 0};
	if (add_ctxsw(pid, tid, &x.cs) < 0)
		return -1;
	if (sn->n == sn->cap) {
		size_t cap = sn->cap ? sn->cap * 2 : 64;
		struct nb_task_sample *nv = realloc(sn->v, cap * sizeof *nv);
		if (!nv)
			return -1;
		sn->v = nv;
		sn->cap = cap;
	}
	sn->v[sn->n++] = x;
	return 0;
}

void nb_mon_begin(struct nb_mon *m)
{
	if (m->pid <= 0)
		return;
	struct snap sn = {0};
	each_task(m->pid, take_task, &sn);
	m->t0 = sn.v;
	m->n0 = sn.n;
	if (m->allocs)
		m->al0 = m->allocs[0];
}

void nb_mon_end(struct nb_mon *m, struct nb_run *r)
{
	if (m->pid <= 0)
		return;
	struct snap sn = {0};
	if (each_task(m->pid, take_task, &sn) >= 0) {
		r->server_ns = r->server_cs = 0;
		for (size_t i = 0; i < sn.n; i++) {
			uint64_t ns0 = 0, cs0 = 0;
			for (size_t j = 0; j < m->n0; j++)
				if (m->t0[j].tid == sn.v[i].tid) {
					ns0 = m->t0[j].ns;
					cs0 = m->t0[j].cs;
					break;
				}
			r->server_ns += sn.v[i].ns - ns0;
			r->server_cs += sn.v[i].cs - cs0;
		}
		r->have_server = 1;
	}
	free(sn.v);
	free(m->t0);
	m->t0 = NULL;
	m->n0 = 0;
	if (m->allocs) {
		r->allocs = m->allocs[0] - m->al0;
		r->have_allocs = 1;
	}
}

/* Spawned servers: placeholders, environment, readiness, clean stop. */
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "bench.h"
#include "spawn.h"

struct nb_spawned {
	pid_t pid;
	char sock[256], dir[256], port[16], allocf[256], log[256];
	volatile uint64_t *counters;
	char *aname;
	struct nb_spawned *next;
};

static struct nb_spawned *spawned;

static int free_port(char *out, size_t n)
{
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	struct sockaddr_in sin = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	socklen_t len = sizeof sin;
	if (fd < 0 || bind(fd, (struct sockaddr *)&sin, sizeof sin) < 0 ||
	    getsockname(fd, (struct sockaddr *)&sin, &len) < 0) {
		if (fd >= 0)
			close(fd);
		return -1;
	}
	snprintf(out, n, "%u", ntohs(sin.sin_port));
	close(fd);
	return 0;
}

/* Replace every {sock}, {dir}, {port} of in; a new string. */
static char *subst(const struct nb_spawned *s, const char *in)
{
	size_t cap = strlen(in) * 2 + 1024, len = 0;
	char *out = malloc(cap);
	if (!out)
		return NULL;
	while (*in) {
		const char *v = NULL;
		size_t skip = 0;
		if (!strncmp(in, "{sock}", 6))
			v = s->sock, skip = 6;
		else if (!strncmp(in, "{dir}", 5))
			v = s->dir, skip = 5;
		else if (!strncmp(in, "{port}", 6))
			v = s->port, skip = 6;
		size_t add = v ? strlen(v) : 1;
		if (len + add + 1 > cap) {
			cap = (len + add + 1) * 2;
			char *n = realloc(out, cap);
			if (!n) {
				free(out);
				return NULL;
			}
			out = n;
		}
		if (v) {
			memcpy(out + len, v, add);
			in += skip;
		} else {
			out[len] = *in++;
		}
		len += add;
	}
	out[len] = 0;
	return out;
}

/* Ready when a 9P version exchange succeeds (the socket file alone may
 * exist before the server accepts). */
static int wait_ready(struct nb_spawned *s, const char *addr)
{
	for (int i = 0; i < 200; i++) {
		int st;
		if (waitpid(s->pid, &st, WNOHANG) == s->pid) {
			fprintf(stderr, "ninep-bench: server exited (status %d) before answering\n", st);
			s->pid = 0;
			return -1;
		}
		np_client *c;
		struct np_client_opts o = {.msize = 8192, .dialect = -1};
		if (np_client_connect(addr, &o, &c, NULL, 0) == 0) {
			np_client_free(c);
			return 0;
		}
		struct timespec ts = {0, 50000000};
		nanosleep(&ts, NULL);
	}
	fprintf(stderr, "ninep-bench: %s: no answer after 10 s\n", addr);
	return -1;
}

struct nb_spawned *nb_spawn(const char *cmd, const char *addr_tmpl, const char *tmpdir,
			    unsigned idx, const char *preload, char *addr_out, size_t n)
{
	struct nb_spawned *s = calloc(1, sizeof *s);
	if (!s)
		return NULL;
	long me = (long)getpid();
	snprintf(s->sock, sizeof s->sock, "%s/nbench.%ld.%u.sock", tmpdir, me, idx);
	snprintf(s->dir, sizeof s->dir, "%s/nbench.%ld.%u.d", tmpdir, me, idx);
	if (free_port(s->port, sizeof s->port) < 0 || (mkdir(s->dir, 0755) < 0 && errno != EEXIST)) {
		fprintf(stderr, "ninep-bench: spawn setup: %s\n", strerror(errno));
		free(s);
		return NULL;
	}
	char *full = subst(s, cmd), *addr = subst(s, addr_tmpl);
	if (!full || !addr)
		return NULL;
	snprintf(addr_out, n, "%s", addr);
	if (preload) {
		if (!*preload || access(preload, R_OK) < 0) {
			fprintf(stderr, "ninep-bench: --alloc: no allocator at '%s'\n", preload);
			return NULL;
		}
		snprintf(s->allocf, sizeof s->allocf, "%s/nbench.%ld.%u.alloc", tmpdir, me, idx);
		int fd = open(s->allocf, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
		if (fd < 0 || ftruncate(fd, 4096) < 0) {
			fprintf(stderr, "ninep-bench: %s: %s\n", s->allocf, strerror(errno));
			return NULL;
		}
		void *p = mmap(NULL, 4096, PROT_READ, MAP_SHARED, fd, 0);
		close(fd);
		if (p == MAP_FAILED)
			return NULL;
		s->counters = p;
	}
	fflush(NULL);
	snprintf(s->log, sizeof s->log, "%s/nbench.%ld.%u.log", tmpdir, me, idx);
	s->pid = fork();
	if (s->pid == 0) {
		/* The server's chatter goes to a log, not into the report. */
		int lfd = open(s->log, O_WRONLY | O_CREAT | O_TRUNC, 0644);
		if (lfd >= 0) {
			dup2(lfd, 1);
			dup2(lfd, 2);
			close(lfd);
		}
		if (preload) {
			setenv("LD_PRELOAD", preload, 1);
			setenv("NB_ALLOC_FILE", s->allocf, 1);
		}
		size_t len = strlen(full) + 8;
		char *sh = malloc(len);
		snprintf(sh, len, "exec %s", full); /* the shell becomes the server */
		execl("/bin/sh", "sh", "-c", sh, (char *)NULL);
		_exit(127);
	}
	if (s->pid < 0)
		return NULL;
	s->next = spawned;
	spawned = s;
	fprintf(stderr, "ninep-bench: spawned pid %ld: %s (log %s)\n", (long)s->pid, full, s->log);
	free(full);
	if (wait_ready(s, addr) < 0) {
		free(addr);
		return NULL;
	}
	free(addr);
	return s;
}

pid_t nb_spawn_pid(const struct nb_spawned *s)
{
	return s->pid;
}

volatile const uint64_t *nb_spawn_alloc_counters(const struct nb_spawned *s)
{
	return s->counters;
}

const char *nb_spawn_subst_aname(const struct nb_spawned *s, const char *aname)
{
	struct nb_spawned *w = (struct nb_spawned *)s;
	free(w->aname);
	w->aname = subst(s, aname);
	return w->aname ? w->aname : aname;
}

void nb_spawn_kill_all(void)
{
	struct nb_spawned *s;
	while ((s = spawned)) {
		spawned = s->next;
		if (s->pid > 0) {
			kill(s->pid, SIGTERM);
			int st, i;
			for (i = 0; i < 40 && waitpid(s->pid, &st, WNOHANG) == 0; i++) {
				struct timespec ts = {0, 50000000};
				nanosleep(&ts, NULL);
			}
			if (i == 40) {
				kill(s->pid, SIGKILL);
				waitpid(s->pid, &st, 0);
			}
			s->pid = 0;
		}
		unlink(s->sock);
		rmdir(s->dir);
		if (s->allocf[0])
			unlink(s->allocf);
		if (s->counters)
			munmap((void *)s->counters, 4096);
		free(s->aname);
		free(s);
	}
}

/* ctlserver: a small control/status file server built on ramfs synthetic
 * files.
 *
 *   ctlserver ADDRESS            e.g. unix:/tmp/ctl.sock or tcp:127.0.0.1:5640
 *
 * Files:
 *   /status   uptime, request and connection counts (a snapshot per open)
 *   /ctl      write a command: "echo TEXT" sets /echo, "stop" stops the server
 *   /echo     the last echoed text
 *   /README   what is written above
 */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "ninep/ramfs.h"
#include "ninep/server.h"

struct app {
	np_server *srv;
	struct timespec start;
	pthread_mutex_t mu;     /* guards msg and commands */
	char msg[256];
	unsigned long commands;
};

struct text {
	size_t len;
	char s[1024];
};

/* Serve bytes of a per-open text snapshot. */
static int text_read(const struct text *t, uint64_t off, uint8_t *buf, uint32_t count, uint32_t *got)
{
	if (off >= t->len) {
		*got = 0;
		return 0;
	}
	size_t n = t->len - (size_t)off;
	if (n > count)
		n = count;
	memcpy(buf, t->s + off, n);
	*got = (uint32_t)n;
	return 0;
}

static void text_free(void *arg, void *state)
{
	(void)arg;
	free(state);
}

/* /status: rendered at open, so that a reader sees one consistent text
 * however it splits its reads. */
static int status_open(np_req *r, void *arg, uint32_t flags)
{
	struct app *a = arg;
	(void)flags;
	struct text *t = malloc(sizeof(*t));
	if (!t)
		return ENOMEM;
	struct timespec now;
	clock_gettime(CLOCK_MONOTONIC, &now);
	struct np_server_stats st;
	np_server_stats(a->srv, &st);
	pthread_mutex_lock(&a->mu);
	unsigned long commands = a->commands;
	pthread_mutex_unlock(&a->mu);
	int n = snprintf(t->s, sizeof(t->s),
			 "uptime %ld\nrequests %llu\nerrors %llu\nconnections %llu\nopen %llu\ncommands %lu\n",
			 (long)(now.tv_sec - a->start.tv_sec), (unsigned long long)st.requests,
			 (unsigned long long)st.errors, (unsigned long long)st.conns_accepted,
			 (unsigned long long)st.conns_open, commands);
	t->len = n < 0 ? 0 : (size_t)n < sizeof(t->s) ? (size_t)n : sizeof(t->s) - 1;
	*np_synth_state(r) = t;
	return 0;
}

static int status_read(np_req *r, void *arg, uint64_t off, uint8_t *buf, uint32_t count, uint32_t *got)
{
	(void)arg;
	return text_read(*np_synth_state(r), off, buf, count, got);
}

static int echo_open(np_req *r, void *arg, uint32_t flags)
{
	struct app *a = arg;
	(void)flags;
	struct text *t = malloc(sizeof(*t));
	if (!t)
		return ENOMEM;
	pthread_mutex_lock(&a->mu);
	int n = snprintf(t->s, sizeof(t->s), "%s\n", a->msg);
	pthread_mutex_unlock(&a->mu);
	t->len = n < 0 ? 0 : (size_t)n < sizeof(t->s) ? (size_t)n : sizeof(t->s) - 1;
	*np_synth_state(r) = t;
	return 0;
}

/* /ctl: one command per write; a trailing newline is ignored. */
static int ctl_write(np_req *r, void *arg, uint64_t off, const uint8_t *data, uint32_t count,
		     uint32_t *wrote)
{
	struct app *a = arg;
	char cmd[256];
	(void)r;
	(void)off;
	if (count >= sizeof(cmd))
		return EMSGSIZE;
	memcpy(cmd, data, count);
	cmd[count] = '\0';
	size_t len = strcspn(cmd, "\n");
	cmd[len] = '\0';
	if (strncmp(cmd, "echo ", 5) == 0) {
		pthread_mutex_lock(&a->mu);
		snprintf(a->msg, sizeof(a->msg), "%s", cmd + 5);
		a->commands++;
		pthread_mutex_unlock(&a->mu);
	} else if (strcmp(cmd, "stop") == 0) {
		/* the main thread stops the server: a handler must not, as
		 * stopping joins the thread it runs on */
		kill(getpid(), SIGTERM);
	} else {
		return EINVAL;
	}
	*wrote = count;
	return 0;
}

static const struct np_synth_ops status_ops = {.open = status_open, .read = status_read, .clunk = text_free};
static const struct np_synth_ops echo_ops = {.open = echo_open, .read = status_read, .clunk = text_free};
static const struct np_synth_ops ctl_ops = {.write = ctl_write};

static const char readme[] =
	"/status  uptime and counters\n"
	"/ctl     write \"echo TEXT\" or \"stop\"\n"
	"/echo    the last echoed text\n";

int main(int argc, char **argv)
{
	if (argc != 2) {
		fprintf(stderr, "usage: %s ADDRESS\n", argv[0]);
		return 2;
	}
	static struct app a = {.mu = PTHREAD_MUTEX_INITIALIZER, .msg = "hello"};
	clock_gettime(CLOCK_MONOTONIC, &a.start);

	struct np_ramfs_opts ro = {.root_mode = 0555};
	np_ramfs *fs = np_ramfs_new(&ro);
	if (!fs || np_ramfs_add_file(fs, "/status", 0444, &status_ops, &a) ||
	    np_ramfs_add_file(fs, "/echo", 0444, &echo_ops, &a) ||
	    np_ramfs_add_file(fs, "/ctl", 0222, &ctl_ops, &a) ||
	    np_ramfs_add_static(fs, "/README", 0444, readme, sizeof(readme) - 1)) {
		fprintf(stderr, "ctlserver: cannot build the file tree\n");
		return 1;
	}

	/* signals go to the main thread only: block them before any thread */
	sigset_t sigs;
	sigemptyset(&sigs);
	sigaddset(&sigs, SIGINT);
	sigaddset(&sigs, SIGTERM);
	pthread_sigmask(SIG_BLOCK, &sigs, NULL);

	struct np_server_opts so = {.loops = 1, .workers = 1};
	a.srv = np_server_new(&np_ramfs_ops, fs, &so);
	char err[256];
	if (!a.srv || np_server_listen(a.srv, argv[1], err, sizeof(err))) {
		fprintf(stderr, "ctlserver: %s\n", a.srv ? err : "cannot create the server");
		return 1;
	}
	if (np_server_start(a.srv)) {
		fprintf(stderr, "ctlserver: cannot start\n");
		return 1;
	}
	int sig;
	sigwait(&sigs, &sig);
	np_server_stop(a.srv);
	np_server_wait(a.srv);
	np_server_free(a.srv);
	np_ramfs_free(fs);
	return 0;
}

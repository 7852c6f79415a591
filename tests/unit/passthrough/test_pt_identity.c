/* Identity modes: multi-user (each request as the attaching user), squash,
 * allow_users, and the per-thread switching.  Needs root (to switch and to
 * create the two throw-away users); skipped otherwise. */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <pwd.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "pt_harness.h"

static char user_a[32], user_b[32];
static uid_t uid_a, uid_b;
static gid_t gid_a, gid_b;
static int have_users;

static void drop_users(void)
{
	char cmd[128];
	for (int i = 0; i < 2; i++) {
		const char *u = i ? user_b : user_a;
		if (!u[0])
			continue;
		snprintf(cmd, sizeof(cmd), "userdel %s >/dev/null 2>&1; groupdel %s >/dev/null 2>&1", u, u);
		if (system(cmd) < 0)
			continue;
	}
}

static int make_user(const char *name, uid_t *uid, gid_t *gid)
{
	char cmd[128];
	snprintf(cmd, sizeof(cmd), "useradd -M -U -s /usr/sbin/nologin %s >/dev/null 2>&1", name);
	if (system(cmd) != 0)
		return -1;
	struct passwd *pw = getpwnam(name);
	if (!pw)
		return -1;
	*uid = pw->pw_uid;
	*gid = pw->pw_gid;
	return 0;
}

static int group_setup(void **state)
{
	(void)state;
	if (geteuid() != 0)
		return 0;
	snprintf(user_a, sizeof(user_a), "nptA%d", (int)getpid());
	snprintf(user_b, sizeof(user_b), "nptB%d", (int)getpid());
	if (make_user(user_a, &uid_a, &gid_a) == 0 && make_user(user_b, &uid_b, &gid_b) == 0)
		have_users = 1;
	return 0;
}

static int group_teardown(void **state)
{
	(void)state;
	np_passthrough_thread_reset();
	drop_users();
	return 0;
}

struct t {
	struct h h;
};

static int setup_mode(void **state, const struct np_passthrough_opts *o)
{
	struct t *t = calloc(1, sizeof(*t));
	assert_non_null(t);
	assert_int_equal(h_setup(&t->h, o), 0);
	/* Let the users reach and write the export. */
	assert_int_equal(chmod(t->h.base, 0755), 0);
	assert_int_equal(chmod(t->h.root, 0777), 0);
	*state = t;
	return 0;
}

static int setup_multi(void **state)
{
	struct np_passthrough_opts o = {.identity = NP_PT_ID_MULTI_USER};
	return setup_mode(state, &o);
}

static int teardown(void **state)
{
	struct t *t = *state;
	h_teardown(&t->h);
	free(t);
	return 0;
}

#define NEED_USERS()                                          \
	do {                                                  \
		if (geteuid() != 0 || !have_users) {          \
			skip();                               \
			return;                               \
		}                                             \
	} while (0)

static np_fid *attach_as(struct t *t, const char *uname, uint32_t n_uname, uint32_t num)
{
	np_fid *f = h_fid(&t->h, num);
	assert_int_equal(h_attach(&t->h, f, uname, n_uname, ""), 0);
	return f;
}

static void test_multi_user(void **state)
{
	NEED_USERS();
	struct t *t = *state;
	np_fid *ra = attach_as(t, user_a, NP_NONUNAME, 1); /* by name */
	np_fid *rb = attach_as(t, "", uid_b, 2);            /* by number */
	assert_int_equal(ra->uid, uid_a);
	assert_int_equal(rb->uid, uid_b);

	/* Files are created by their users. */
	np_fid *fa = h_walkto(&t->h, ra, "");
	assert_int_equal(h_lcreate(&t->h, fa, "a_secret", NP_L_O_RDWR, 0600, NP_NONUNAME, NULL), 0);
	uint32_t n;
	assert_int_equal(h_write(&t->h, fa, 0, "mine", 4, &n), 0);
	np_fid *fb = h_walkto(&t->h, rb, "");
	assert_int_equal(h_lcreate(&t->h, fb, "b_file", NP_L_O_RDWR, 0644, NP_NONUNAME, NULL), 0);
	assert_int_equal(h_mkdir(&t->h, ra, "a_dir", 0700, NP_NONUNAME, NULL), 0);
	np_passthrough_thread_reset();
	struct stat st;
	assert_int_equal(stat(h_in(&t->h, "a_secret"), &st), 0);
	assert_int_equal(st.st_uid, uid_a);
	assert_int_equal(st.st_gid, gid_a);
	assert_int_equal(stat(h_in(&t->h, "b_file"), &st), 0);
	assert_int_equal(st.st_uid, uid_b);
	assert_int_equal(st.st_gid, gid_b);
	assert_int_equal(stat(h_in(&t->h, "a_dir"), &st), 0);
	assert_int_equal(st.st_uid, uid_a);

	/* B cannot read A's 0600 file, nor enter A's 0700 directory, nor
	 * remove or chown A's things; A can read its own. */
	np_fid *x = h_walkto(&t->h, rb, "a_secret");
	assert_non_null(x);
	assert_int_equal(h_lopen(&t->h, x, NP_L_O_RDONLY, NULL), EACCES);
	assert_int_equal(h_setattr(&t->h, x, NP_SETATTR_MODE, 0666, 0, 0, 0, 0, 0, 0, 0), EPERM);
	assert_int_equal(h_setattr(&t->h, x, NP_SETATTR_SIZE, 0, 0, 0, 0, 0, 0, 0, 0), EACCES);
	h_clunk(&t->h, x);
	np_fid *y = h_fid(&t->h, 9);
	int nw;
	assert_int_equal(h_walk(&t->h, rb, y, "a_dir/x", &nw, NULL), -1);
	free(y);
	np_fid *ad = h_walkto(&t->h, rb, "a_dir");
	assert_int_equal(h_mkdir(&t->h, ad, "intruder", 0755, NP_NONUNAME, NULL), EACCES);
	h_clunk(&t->h, ad);
	x = h_walkto(&t->h, ra, "a_secret");
	assert_int_equal(h_lopen(&t->h, x, NP_L_O_RDONLY, NULL), 0);
	char buf[8];
	assert_int_equal(h_read(&t->h, x, 0, buf, sizeof(buf), &n), 0);
	assert_int_equal(n, 4);
	h_clunk(&t->h, x);
	/* A may not give its file away. */
	x = h_walkto(&t->h, ra, "a_secret");
	assert_int_equal(h_setattr(&t->h, x, NP_SETATTR_UID, 0, uid_b, 0, 0, 0, 0, 0, 0), EPERM);
	/* The requested gid is applied only when the user is in it. */
	h_clunk(&t->h, x);
	x = h_walkto(&t->h, ra, "");
	assert_int_equal(h_lcreate(&t->h, x, "a_gid0", NP_L_O_RDWR, 0644, 0, NULL), 0);
	h_clunk(&t->h, x);
	np_passthrough_thread_reset();
	assert_int_equal(stat(h_in(&t->h, "a_gid0"), &st), 0);
	assert_int_equal(st.st_gid, gid_a);

	/* Root attaching stays root. */
	np_fid *rr = attach_as(t, "root", 0, 3);
	x = h_walkto(&t->h, rr, "a_secret");
	assert_int_equal(h_lopen(&t->h, x, NP_L_O_RDONLY, NULL), 0);
	h_clunk(&t->h, x);
	x = h_walkto(&t->h, rr, "");
	assert_int_equal(h_lcreate(&t->h, x, "r_file", NP_L_O_RDWR, 0644, gid_b, NULL), 0);
	h_clunk(&t->h, x);
	np_passthrough_thread_reset();
	assert_int_equal(stat(h_in(&t->h, "r_file"), &st), 0);
	assert_int_equal(st.st_uid, 0);
	assert_int_equal(st.st_gid, gid_b);

	/* Unknown users are refused. */
	np_fid *u = h_fid(&t->h, 4);
	assert_int_equal(h_attach(&t->h, u, "", 3999999999u, ""), EACCES);
	assert_int_equal(h_attach(&t->h, u, "no-such-user-np", NP_NONUNAME, ""), EACCES);
	free(u);
	h_clunk(&t->h, fa);
	h_clunk(&t->h, fb);
	h_clunk(&t->h, ra);
	h_clunk(&t->h, rb);
	h_clunk(&t->h, rr);
}

/* /proc/thread-self/status "Uid:" line's fourth field: the fsuid. */
static uid_t my_fsuid(void)
{
	FILE *f = fopen("/proc/thread-self/status", "r");
	assert_non_null(f);
	char line[256];
	unsigned a = 0, b = 0, c = 0, d = ~0u;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "Uid: %u %u %u %u", &a, &b, &c, &d) == 4)
			break;
	fclose(f);
	return d;
}

struct peer {
	pthread_barrier_t go, done;
	uid_t seen;
};

static void *peer_main(void *arg)
{
	struct peer *p = arg;
	pthread_barrier_wait(&p->go);
	p->seen = my_fsuid();
	pthread_barrier_wait(&p->done);
	return NULL;
}

static void test_per_thread(void **state)
{
	NEED_USERS();
	struct t *t = *state;
	np_passthrough_thread_reset();
	struct peer p;
	pthread_barrier_init(&p.go, NULL, 2);
	pthread_barrier_init(&p.done, NULL, 2);
	pthread_t th;
	assert_int_equal(pthread_create(&th, NULL, peer_main, &p), 0);
	np_fid *ra = attach_as(t, user_a, NP_NONUNAME, 1);
	np_fcall a;
	assert_int_equal(h_getattr(&t->h, ra, &a), 0);
	/* This thread now runs as A; the other is untouched. */
	assert_int_equal(my_fsuid(), uid_a);
	pthread_barrier_wait(&p.go);
	pthread_barrier_wait(&p.done);
	pthread_join(th, NULL);
	assert_int_equal(p.seen, 0);
	/* A request of the server's own identity (another instance in
	 * server mode) switches back. */
	struct h h2;
	assert_int_equal(h_setup(&h2, NULL), 0);
	np_fid *r2 = h_fid(&h2, 1);
	assert_int_equal(h_attach(&h2, r2, "", NP_NONUNAME, ""), 0);
	assert_int_equal(h_getattr(&h2, r2, &a), 0);
	assert_int_equal(my_fsuid(), 0);
	h_clunk(&h2, r2);
	h_teardown(&h2);
	assert_int_equal(h_getattr(&t->h, ra, &a), 0);
	assert_int_equal(my_fsuid(), uid_a);
	np_passthrough_thread_reset();
	assert_int_equal(my_fsuid(), 0);
	h_clunk(&t->h, ra);
	pthread_barrier_destroy(&p.go);
	pthread_barrier_destroy(&p.done);
}

static void test_allow_users(void **state)
{
	NEED_USERS();
	struct t *t = *state;
	uid_t allow[] = {uid_a};
	struct np_passthrough_opts o = {.identity = NP_PT_ID_MULTI_USER, .allow_users = allow,
					.n_allow_users = 1};
	assert_int_equal(h_reopen(&t->h, &o), 0);
	np_fid *f = h_fid(&t->h, 1);
	assert_int_equal(h_attach(&t->h, f, user_b, NP_NONUNAME, ""), EACCES);
	assert_int_equal(h_attach(&t->h, f, "", uid_b, ""), EACCES);
	assert_int_equal(h_attach(&t->h, f, "root", 0, ""), EACCES);
	assert_int_equal(h_attach(&t->h, f, user_a, NP_NONUNAME, ""), 0);
	h_clunk(&t->h, f);
	/* The same filter in server mode. */
	struct np_passthrough_opts o2 = {.allow_users = allow, .n_allow_users = 1};
	assert_int_equal(h_reopen(&t->h, &o2), 0);
	f = h_fid(&t->h, 1);
	assert_int_equal(h_attach(&t->h, f, "", uid_b, ""), EACCES);
	assert_int_equal(h_attach(&t->h, f, "", uid_a, ""), 0);
	h_clunk(&t->h, f);
}

static void test_squash(void **state)
{
	NEED_USERS();
	struct t *t = *state;
	struct np_passthrough_opts o = {.identity = NP_PT_ID_SQUASH, .squash_uid = uid_b,
					.squash_gid = gid_b};
	assert_int_equal(h_reopen(&t->h, &o), 0);
	np_fid *f = attach_as(t, "root", 0, 1);
	np_fid *d = h_walkto(&t->h, f, "");
	assert_int_equal(h_lcreate(&t->h, d, "squashed", NP_L_O_RDWR, 0600, NP_NONUNAME, NULL), 0);
	h_clunk(&t->h, d);
	np_passthrough_thread_reset();
	struct stat st;
	assert_int_equal(stat(h_in(&t->h, "squashed"), &st), 0);
	assert_int_equal(st.st_uid, uid_b);
	assert_int_equal(st.st_gid, gid_b);
	/* Root's files are out of reach for the squashed user. */
	close(open(h_in(&t->h, "rootonly"), O_CREAT | O_WRONLY, 0600));
	np_fid *x = h_walkto(&t->h, f, "rootonly");
	assert_int_equal(h_lopen(&t->h, x, NP_L_O_RDONLY, NULL), EACCES);
	h_clunk(&t->h, x);
	h_clunk(&t->h, f);
}

static void test_unprivileged_modes_refused(void **state)
{
	(void)state;
	if (geteuid() == 0) {
		skip();
		return;
	}
	struct np_passthrough_opts o = {.root = "/tmp", .identity = NP_PT_ID_MULTI_USER};
	np_passthrough *fs;
	char err[128];
	assert_int_equal(np_passthrough_new(&o, &fs, err, sizeof(err)), EPERM);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_multi_user, setup_multi, teardown),
		cmocka_unit_test_setup_teardown(test_per_thread, setup_multi, teardown),
		cmocka_unit_test_setup_teardown(test_allow_users, setup_multi, teardown),
		cmocka_unit_test_setup_teardown(test_squash, setup_multi, teardown),
		cmocka_unit_test(test_unprivileged_modes_refused),
	};
	umask(022);
	return cmocka_run_group_tests_name("passthrough_identity", tests, group_setup, group_teardown);
}

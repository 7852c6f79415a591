/* The 9P side of the benchmark: prepare files on a server, then drive one
 * workload over N connections with exactly q requests in flight on each
 * (asynchronous submits whose callbacks issue the next step at once). */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <string.h>
#include <unistd.h>

#include "bench.h"

struct nb_conn;

struct slot {
	struct nb_conn *cn;
	unsigned idx;
	np_cfid *pfid;       /* persistent open fid (I/O, getattr, readdir) */
	uint32_t tfid;       /* transient fid (walk-clunk, open-close, create) */
	unsigned step;
	int busy;            /* an operation is under way */
	uint64_t t_sub;
	uint32_t tsize;
	uint64_t off;
	char name[48];
};

struct nb_conn {
	struct nb_target *t;
	unsigned idx;
	np_client *c;
	np_cfid *root, *dir;
	struct slot *slots;
	pthread_t th;
	int cpu;
	struct nb_run run;
	uint64_t started, limit;   /* operations started; limit 0 = timed */
	unsigned active;
	int err;                   /* first error: stop this run */
	uint64_t t0, t1, cpu0, cpu1;
	struct nb_shape *shape;    /* recording slot 0's next operation */
	int shape_state;           /* 0 idle, 1 armed, 2 recording */
};

struct nb_target {
	char addr[NP_ADDR_STRMAX];
	struct nb_cfg cfg;
	np_client *setup;
	np_cfid *root, *work;
	char workname[64];
	enum nb_wl wl;
	struct nb_conn *conns;
	unsigned nconns;
	uint32_t msize, iosize;
	enum np_dialect dialect;
	uint8_t *wbuf;
	volatile int stop;
	pthread_barrier_t go;
	char errmsg[NP_ADDR_STRMAX + 256];
	int have_big, have_dir;
};

static const char *const wl_names[WL_COUNT] = {
	"write", "read", "getattr", "walk-clunk", "open-close",
	"create-unlink", "readdir", "seqwrite", "seqread",
};

const char *nb_wl_name(enum nb_wl w)
{
	return w < WL_COUNT ? wl_names[w] : "?";
}

int nb_wl_parse(const char *s, enum nb_wl *w)
{
	for (int i = 0; i < WL_COUNT; i++)
		if (!strcmp(s, wl_names[i])) {
			*w = (enum nb_wl)i;
			return 0;
		}
	return -EINVAL;
}

unsigned nb_wl_reqs_per_op(enum nb_wl w)
{
	switch (w) {
	case WL_WALKCLUNK: return 2;
	case WL_OPENCLOSE: return 3;
	case WL_CREATEUNLINK: return 3;
	case WL_READDIR: return 0;
	default: return 1;
	}
}

const char *nb_target_desc(const struct nb_target *t)
{
	return t->addr;
}

uint32_t nb_target_msize(const struct nb_target *t)
{
	return t->msize;
}

static int connect_one(struct nb_target *t, np_client **c, np_cfid **root, char *err, size_t n)
{
	struct np_client_opts o = {.msize = t->cfg.msize, .dialect = NP_9P2000L,
				   .max_tags = t->cfg.depth + 8};
	int e = np_client_connect(t->addr, &o, c, err, n);
	if (e < 0)
		return e;
	e = np_client_attach(*c, t->cfg.uname, (uint32_t)getuid(), t->cfg.aname, root);
	if (e < 0) {
		snprintf(err, n, "%s: attach '%s': %s", t->addr, t->cfg.aname, strerror(-e));
		np_client_free(*c);
		*c = NULL;
	}
	return e;
}

struct nb_target *nb_target_open(const char *addr, const struct nb_cfg *cfg, char *err, size_t n)
{
	struct nb_target *t = calloc(1, sizeof *t);
	if (!t) {
		snprintf(err, n, "out of memory");
		return NULL;
	}
	snprintf(t->addr, sizeof t->addr, "%s", addr);
	t->cfg = *cfg;
	if (connect_one(t, &t->setup, &t->root, err, n) < 0) {
		free(t);
		return NULL;
	}
	t->msize = np_client_msize(t->setup);
	t->dialect = np_client_dialect(t->setup);
	static unsigned seq;
	snprintf(t->workname, sizeof t->workname, "nbench.%ld.%u", (long)getpid(), seq++);
	int e = np_cfid_mkdir(t->root, t->workname, 0755, (uint32_t)getgid(), NULL);
	if (e == 0)
		e = np_client_walk_path(t->root, t->workname, &t->work);
	if (e < 0) {
		snprintf(err, n, "%s: mkdir %s: %s", addr, t->workname, strerror(-e));
		np_cfid_clunk(t->root);
		np_client_free(t->setup);
		free(t);
		return NULL;
	}
	return t;
}

/* Create (or truncate) `name` in the work directory and write len bytes. */
static int make_file(struct nb_target *t, const char *name, uint64_t len)
{
	np_cfid *f;
	int e = np_cfid_walk(t->work, 0, NULL, &f);
	if (e < 0)
		return e;
	e = np_cfid_create(f, name, O_RDWR | O_TRUNC, 0644, (uint32_t)getgid());
	if (e == -EEXIST) {
		np_cfid_clunk(f);
		if ((e = np_client_walk_path(t->work, name, &f)) < 0)
			return e;
		e = np_cfid_open(f, O_RDWR | O_TRUNC);
	}
	static uint8_t chunk[1 << 20];
	memset(chunk, 'b', sizeof chunk);
	for (uint64_t off = 0; e == 0 && off < len;) {
		size_t k = len - off < sizeof chunk ? (size_t)(len - off) : sizeof chunk;
		ssize_t w = np_cfid_pwrite(f, chunk, k, off);
		if (w < 0)
			e = (int)w;
		else if (w == 0)
			e = -EIO;
		else
			off += (uint64_t)w;
	}
	np_cfid_clunk(f);
	return e;
}

static int make_dir10k(struct nb_target *t)
{
	int e = np_cfid_mkdir(t->work, "dir10k", 0755, (uint32_t)getgid(), NULL);
	if (e < 0)
		return e;
	np_cfid *d;
	if ((e = np_client_walk_path(t->work, "dir10k", &d)) < 0)
		return e;
	for (unsigned i = 0; i < NB_DIRENTS && e == 0; i++) {
		char name[32];
		np_cfid *f;
		snprintf(name, sizeof name, "entry-%05u", i);
		if ((e = np_cfid_walk(d, 0, NULL, &f)) < 0)
			break;
		e = np_cfid_create(f, name, O_RDONLY, 0644, (uint32_t)getgid());
		np_cfid_clunk(f);
	}
	np_cfid_clunk(d);
	return e;
}

static int open_slot(struct nb_conn *cn, struct slot *s, const char *name, int flags)
{
	int e = np_client_walk_path(cn->dir, name, &s->pfid);
	if (e == 0 && flags >= 0)
		e = np_cfid_open(s->pfid, flags);
	return e;
}

int nb_target_setup(struct nb_target *t, enum nb_wl w, uint32_t msize, char *err, size_t n)
{
	int e = 0;
	t->wl = w;
	t->cfg.msize = msize;
	free(t->wbuf);
	t->wbuf = malloc(msize > t->cfg.size ? msize : t->cfg.size);
	if (!t->wbuf)
		return -ENOMEM;
	memset(t->wbuf, 'w', msize > t->cfg.size ? msize : t->cfg.size);
	if (w == WL_READ || w == WL_WRITE || w == WL_GETATTR || w == WL_WALKCLUNK ||
	    w == WL_OPENCLOSE)
		e = make_file(t, "f", t->cfg.size);
	else if (w == WL_SEQREAD && !t->have_big) {
		e = make_file(t, "big", t->cfg.file_size);
		t->have_big = e == 0;
	} else if (w == WL_SEQWRITE)
		e = make_file(t, "seqw", 0);
	else if (w == WL_READDIR && !t->have_dir) {
		e = make_dir10k(t);
		t->have_dir = e == 0;
	}
	if (e < 0) {
		snprintf(err, n, "%s: preparing %s: %s", t->addr, nb_wl_name(w), strerror(-e));
		return e;
	}
	t->nconns = t->cfg.conns;
	t->conns = calloc(t->nconns, sizeof *t->conns);
	if (!t->conns)
		return -ENOMEM;
	for (unsigned i = 0; i < t->nconns; i++) {
		struct nb_conn *cn = &t->conns[i];
		cn->t = t;
		cn->idx = i;
		if ((e = connect_one(t, &cn->c, &cn->root, err, n)) < 0)
			goto fail;
		/* What the server granted decides the I/O size of every stream. */
		t->msize = np_client_msize(cn->c);
		t->iosize = t->msize - NP_IOHDRSZ;
		if ((e = np_client_walk_path(cn->root, t->workname, &cn->dir)) < 0)
			goto failmsg;
		cn->slots = calloc(t->cfg.depth, sizeof *cn->slots);
		if (!cn->slots) {
			e = -ENOMEM;
			goto failmsg;
		}
		for (unsigned k = 0; k < t->cfg.depth; k++) {
			struct slot *s = &cn->slots[k];
			s->cn = cn;
			s->idx = k;
			s->tfid = NB_FIDBASE + k;
			snprintf(s->name, sizeof s->name, "c%u.%u.%ld", i, k, (long)getpid());
			switch (w) {
			case WL_WRITE: e = open_slot(cn, s, "f", O_RDWR); break;
			case WL_READ: e = open_slot(cn, s, "f", O_RDONLY); break;
			case WL_GETATTR: e = open_slot(cn, s, "f", -1); break;
			case WL_SEQWRITE: e = open_slot(cn, s, "seqw", O_RDWR); break;
			case WL_SEQREAD: e = open_slot(cn, s, "big", O_RDONLY); break;
			case WL_READDIR: e = open_slot(cn, s, "dir10k", O_RDONLY | O_DIRECTORY); break;
			default: break;
			}
			if (e < 0)
				goto failmsg;
			/* Spread sequential streams so slots do not write the same range. */
			if (w == WL_SEQWRITE || w == WL_SEQREAD)
				s->off = ((uint64_t)t->iosize * (k + (uint64_t)i * t->cfg.depth)) %
					 (t->cfg.file_size - t->iosize);
		}
	}
	return 0;
failmsg:
	snprintf(err, n, "%s: connection %u setup for %s: %s", t->addr, 0u, nb_wl_name(w),
		 strerror(-e));
fail:
	nb_target_teardown(t);
	return e;
}

void nb_target_teardown(struct nb_target *t)
{
	for (unsigned i = 0; t->conns && i < t->nconns; i++) {
		struct nb_conn *cn = &t->conns[i];
		for (unsigned k = 0; cn->slots && k < t->cfg.depth; k++)
			if (cn->slots[k].pfid)
				np_cfid_clunk(cn->slots[k].pfid);
		free(cn->slots);
		if (cn->dir)
			np_cfid_clunk(cn->dir);
		if (cn->root)
			np_cfid_clunk(cn->root);
		if (cn->c)
			np_client_free(cn->c);
		nb_run_free(&cn->run);
	}
	free(t->conns);
	t->conns = NULL;
	t->nconns = 0;
}

static void remove_tree(struct nb_target *t)
{
	if (t->have_dir) {
		np_cfid *d;
		if (np_client_walk_path(t->work, "dir10k", &d) == 0) {
			for (unsigned i = 0; i < NB_DIRENTS; i++) {
				char name[32];
				snprintf(name, sizeof name, "entry-%05u", i);
				np_cfid_unlinkat(d, name, 0);
			}
			np_cfid_clunk(d);
		}
		np_cfid_unlinkat(t->work, "dir10k", NP_AT_REMOVEDIR);
	}
	const char *files[] = {"f", "big", "seqw"};
	for (size_t i = 0; i < sizeof files / sizeof *files; i++)
		np_cfid_unlinkat(t->work, files[i], 0);
	np_cfid_clunk(t->work);
	np_cfid_unlinkat(t->root, t->workname, NP_AT_REMOVEDIR);
}

void nb_target_close(struct nb_target *t)
{
	if (!t)
		return;
	nb_target_teardown(t);
	remove_tree(t);
	np_cfid_clunk(t->root);
	np_client_free(t->setup);
	free(t->wbuf);
	free(t);
}

/* ---- the per-step state machine ---------------------------------------- */

static void build(struct slot *s, np_fcall *f)
{
	struct nb_target *t = s->cn->t;
	uint32_t dirfid = s->cn->dir->fid;
	memset(f, 0, sizeof *f);
	switch (t->wl) {
	case WL_WRITE:
		*f = (np_fcall){.type = NP_TWRITE, .twrite = {s->pfid->fid, 0, t->cfg.size, t->wbuf}};
		break;
	case WL_READ:
		*f = (np_fcall){.type = NP_TREAD, .tread = {s->pfid->fid, 0, t->cfg.size}};
		break;
	case WL_GETATTR:
		*f = (np_fcall){.type = NP_TGETATTR, .tgetattr = {s->pfid->fid, NP_GETATTR_BASIC}};
		break;
	case WL_SEQWRITE:
		*f = (np_fcall){.type = NP_TWRITE, .twrite = {s->pfid->fid, s->off, t->iosize, t->wbuf}};
		break;
	case WL_SEQREAD:
		*f = (np_fcall){.type = NP_TREAD, .tread = {s->pfid->fid, s->off, t->iosize}};
		break;
	case WL_READDIR:
		*f = (np_fcall){.type = NP_TREADDIR, .tread = {s->pfid->fid, s->off, t->iosize}};
		break;
	case WL_WALKCLUNK:
	case WL_OPENCLOSE:
		if (s->step == 0) {
			f->type = NP_TWALK;
			f->twalk.fid = dirfid;
			f->twalk.newfid = s->tfid;
			f->twalk.nwname = 1;
			f->twalk.wname[0] = np_strz("f");
		} else if (t->wl == WL_OPENCLOSE && s->step == 1) {
			*f = (np_fcall){.type = NP_TLOPEN, .tlopen = {s->tfid, NP_L_O_RDONLY}};
		} else {
			*f = (np_fcall){.type = NP_TCLUNK, .tclunk = {s->tfid}};
		}
		break;
	case WL_CREATEUNLINK:
		if (s->step == 0) {
			f->type = NP_TWALK;
			f->twalk.fid = dirfid;
			f->twalk.newfid = s->tfid;
		} else if (s->step == 1) {
			*f = (np_fcall){.type = NP_TLCREATE,
					.tlcreate = {s->tfid, np_strz(s->name), NP_L_O_RDWR, 0644,
						     (uint32_t)getgid()}};
		} else {
			*f = (np_fcall){.type = NP_TREMOVE, .tclunk = {s->tfid}};
		}
		break;
	default:
		break;
	}
}

/* Sequential I/O moves on by one piece, back to the start before the
 * piece would run past the end of the file. */
static void seq_step(struct slot *s, const struct nb_target *t)
{
	s->off += t->iosize;
	if (s->off + t->iosize > t->cfg.file_size)
		s->off = 0;
}

/* After a reply: 1 when the operation has another step. */
static int advance(struct slot *s, const np_fcall *r)
{
	struct nb_target *t = s->cn->t;
	switch (t->wl) {
	case WL_READ:
	case WL_SEQREAD:
		s->cn->run.bytes += r->rread.count;
		if (t->wl == WL_SEQREAD)
			seq_step(s, t);
		return 0;
	case WL_WRITE:
	case WL_SEQWRITE:
		s->cn->run.bytes += r->rwrite.count;
		if (t->wl == WL_SEQWRITE)
			seq_step(s, t);
		return 0;
	case WL_READDIR: {
		if (r->rread.count == 0) {
			s->off = 0;
			return 0;
		}
		uint32_t pos = 0;
		np_dirent de;
		int k;
		while ((k = np_dirent_next(r->rread.data, r->rread.count, &pos, &de)) == 1) {
			s->off = de.offset;
			s->cn->run.bytes++; /* entries */
		}
		return 1;
	}
	case WL_WALKCLUNK:
		return ++s->step < 2;
	case WL_OPENCLOSE:
	case WL_CREATEUNLINK:
		return ++s->step < 3;
	default:
		return 0;
	}
}

static void on_reply(np_creq *r, void *arg);

static void issue(struct slot *s)
{
	struct nb_conn *cn = s->cn;
	np_fcall f;
	build(s, &f);
	s->tsize = (uint32_t)np_fcall_size(&f, cn->t->dialect);
	s->t_sub = nb_now_ns();
	int e = np_client_submit(cn->c, &f, on_reply, s, NULL);
	if (e < 0) {
		if (!cn->err)
			cn->err = e;
		s->busy = 0;
		cn->active--;
	}
}

static int may_start(struct nb_conn *cn)
{
	if (cn->err || cn->t->stop)
		return 0;
	return !cn->limit || cn->started < cn->limit;
}

static void start_op(struct slot *s)
{
	struct nb_conn *cn = s->cn;
	s->step = 0;
	s->busy = 1;
	cn->started++;
	cn->active++;
	if (s->idx == 0 && cn->shape_state == 1) {
		cn->shape->n = 0;
		cn->shape_state = 2;
	}
	issue(s);
}

static void on_reply(np_creq *r, void *arg)
{
	struct slot *s = arg;
	struct nb_conn *cn = s->cn;
	nb_lat_add(&cn->run, nb_now_ns() - s->t_sub);
	cn->run.reqs++;
	int e = np_creq_error(r);
	const np_fcall *rf = np_creq_reply(r);
	if (e || !rf) {
		if (!cn->err) {
			cn->err = e ? e : -EIO;
			snprintf(cn->t->errmsg, sizeof cn->t->errmsg, "%s: %s step %u: %s", cn->t->addr,
				 nb_wl_name(cn->t->wl), s->step, strerror(e ? -e : EIO));
		}
		s->busy = 0;
		cn->active--;
		return;
	}
	if (s->idx == 0 && cn->shape_state == 2 && cn->shape->n < 4096) {
		struct nb_exch *x = &cn->shape->e[cn->shape->n++];
		x->tsize = s->tsize;
		x->rsize = (uint32_t)np_fcall_size(rf, cn->t->dialect);
	}
	if (advance(s, rf)) {
		issue(s);
		return;
	}
	cn->run.ops++;
	if (s->idx == 0 && cn->shape_state == 2)
		cn->shape_state = 0;
	cn->active--;
	s->busy = 0;
	if (may_start(cn))
		start_op(s);
}

static void *conn_main(void *arg)
{
	struct nb_conn *cn = arg;
	struct nb_target *t = cn->t;
	nb_pin_self_thread(cn->cpu);
	pthread_barrier_wait(&t->go);
	cn->cpu0 = nb_thread_cpu_ns();
	cn->t0 = nb_now_ns();
	for (unsigned k = 0; k < t->cfg.depth && may_start(cn); k++)
		start_op(&cn->slots[k]);
	while (cn->active > 0) {
		int r = np_client_poll(cn->c, -1);
		if (r < 0) {
			if (!cn->err) {
				cn->err = r;
				snprintf(t->errmsg, sizeof t->errmsg, "%s: connection lost: %s", t->addr,
					 strerror(-r));
			}
			break;
		}
	}
	cn->t1 = nb_now_ns();
	cn->cpu1 = nb_thread_cpu_ns();
	pthread_barrier_wait(&t->go);
	return NULL;
}

int nb_target_run(struct nb_target *t, double secs, uint64_t count, int cpu,
		  struct nb_mon *mon, struct nb_run *out, struct nb_shape *shape)
{
	memset(out, 0, sizeof *out);
	t->stop = 0;
	t->errmsg[0] = 0;
	pthread_barrier_init(&t->go, NULL, t->nconns + 1);
	for (unsigned i = 0; i < t->nconns; i++) {
		struct nb_conn *cn = &t->conns[i];
		nb_run_free(&cn->run);
		memset(&cn->run, 0, sizeof cn->run);
		cn->started = 0;
		cn->active = 0;
		cn->err = 0;
		cn->cpu = cpu;
		cn->limit = count ? (count + t->nconns - 1) / t->nconns : 0;
		cn->shape = i == 0 ? shape : NULL;
		cn->shape_state = cn->shape ? 1 : 0;
		if (pthread_create(&cn->th, NULL, conn_main, cn) != 0) {
			/* Cannot happen in practice; fail the run cleanly. */
			fprintf(stderr, "ninep-bench: pthread_create failed\n");
			exit(1);
		}
	}
	nb_mon_begin(mon);
	pthread_barrier_wait(&t->go);
	if (!count) {
		struct timespec ts = {(time_t)secs, (long)((secs - (double)(time_t)secs) * 1e9)};
		while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
			;
		t->stop = 1;
	}
	pthread_barrier_wait(&t->go);
	nb_mon_end(mon, out);
	uint64_t first = UINT64_MAX, last = 0;
	int err = 0;
	for (unsigned i = 0; i < t->nconns; i++) {
		struct nb_conn *cn = &t->conns[i];
		pthread_join(cn->th, NULL);
		if (cn->t0 < first)
			first = cn->t0;
		if (cn->t1 > last)
			last = cn->t1;
		out->client_ns += cn->cpu1 - cn->cpu0;
		nb_run_merge(out, &cn->run);
		if (cn->err && !err)
			err = cn->err;
	}
	pthread_barrier_destroy(&t->go);
	out->secs = (double)(last - first) / 1e9;
	if (err) {
		out->errors++;
		fprintf(stderr, "ninep-bench: %s\n", t->errmsg[0] ? t->errmsg : strerror(-err));
	}
	return err;
}

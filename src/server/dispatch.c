/* Request dispatch and completion: the session rules of 9P that every backend
 * would otherwise get wrong in its own way (fids, tags, flush, version). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "compat.h"
#include "srv.h"

#define REQ_POOL_MAX 32

/* ---- request pool and tag table (loop thread) ---- */

static struct np_sreq *req_get(struct np_conn *c)
{
	struct np_sreq *q = c->reqfree;
	if (q) {
		c->reqfree = q->next;
		c->nreqfree--;
	} else {
		q = malloc(sizeof *q);
		if (!q)
			return NULL;
	}
	memset(q, 0, sizeof *q);
	q->pub.conn = c;
	q->pub.fs = c->srv->fs;
	q->pub.dialect = c->dialect;
	q->pub.msize = c->msize;
	q->op = NP_OP_COUNT;
	return q;
}

static void req_put(struct np_conn *c, struct np_sreq *q)
{
	if (c->nreqfree < REQ_POOL_MAX) {
		q->next = c->reqfree;
		c->reqfree = q;
		c->nreqfree++;
	} else {
		free(q);
	}
}

void np_req_pool_trim(struct np_conn *c, uint32_t keep)
{
	while (c->nreqfree > keep) {
		struct np_sreq *q = c->reqfree;
		c->reqfree = q->next;
		c->nreqfree--;
		free(q);
	}
}

static struct np_sreq *tag_find(struct np_conn *c, uint16_t tag)
{
	for (struct np_sreq *q = c->tags[tag % NP_TAGHASH]; q; q = q->hnext)
		if (q->pub.ifcall.tag == tag)
			return q;
	return NULL;
}

static void tag_add(struct np_conn *c, struct np_sreq *q)
{
	struct np_sreq **b = &c->tags[q->pub.ifcall.tag % NP_TAGHASH];
	q->hnext = *b;
	*b = q;
	q->in_tags = 1;
	c->ntags++;
}

static void tag_del(struct np_conn *c, struct np_sreq *q)
{
	if (!q->in_tags)
		return;
	for (struct np_sreq **pp = &c->tags[q->pub.ifcall.tag % NP_TAGHASH]; *pp;
	     pp = &(*pp)->hnext)
		if (*pp == q) {
			*pp = q->hnext;
			break;
		}
	q->in_tags = 0;
	c->ntags--;
}

/* ---- replies ---- */

static void trace(struct np_conn *c, const char *dir, const np_fcall *f)
{
	char line[512];
	np_fcall_format(line, sizeof line, f, c->dialect);
	np_log(c->srv, 2, "conn %u %s %s", c->id, dir, line);
}

static void enqueue_tx(struct np_conn *c, np_buf *b)
{
	b->next = NULL;
	b->off = 0;
	if (c->txtail)
		c->txtail->next = b;
	else
		c->txhead = b;
	c->txtail = b;
	c->ntx++;
	np_loop_mark_dirty(c);
}

/* Encode q's reply (or its error) into its reply buffer and queue it. */
static void send_reply(struct np_conn *c, struct np_sreq *q)
{
	np_fcall *r = &q->pub.ofcall;
	np_fcall ef;
	np_buf *b = q->rbuf;
	size_t cap = b->cap < c->msize ? b->cap : c->msize;
	int n = 0;

	if (q->err == 0) {
		n = np_encode(r, c->dialect, b->data, cap);
		if (n < 0) {
			/* The handler produced more than msize allows. */
			np_log(c->srv, 0, "conn %u: %s reply does not fit msize %u", c->id,
			       np_type_name(r->type), c->msize);
			q->err = EMSGSIZE;
		}
	}
	if (q->err) {
		memset(&ef, 0, sizeof ef);
		ef.tag = r->tag;
		np_compat_error(&ef, c->dialect, q->err);
		r = &ef;
		n = np_encode(r, c->dialect, b->data, cap);
		atomic_fetch_add_explicit(&c->srv->st_errors, 1, memory_order_relaxed);
	}
	if (c->srv->o.trace)
		trace(c, "->", r);
	b->len = (uint32_t)n;
	q->rbuf = NULL;
	enqueue_tx(c, b);
}

/* ---- completion ---- */

static void put_fid(struct np_conn *c, np_fid *f)
{
	if (f)
		np_fid_put(c, np_sfid_of(f));
}

static void drop_newfid(struct np_conn *c, struct np_sreq *q)
{
	if (!q->pub.newfid)
		return; /* the request failed before creating it */
	struct np_sfid *nf = np_sfid_of(q->pub.newfid);
	if (!nf->live) {
		np_fid_unhash(c, nf);
		np_fid_put(c, nf); /* the table's reference */
	}
}

/* Fid state changes once a request succeeded or failed (loop thread). */
static void post_process(struct np_conn *c, struct np_sreq *q, int ok)
{
	np_req *r = &q->pub;
	switch (r->ifcall.type) {
	case NP_TATTACH:
		if (ok) {
			np_sfid_of(r->newfid)->live = 1;
			r->newfid->qid = r->ofcall.rattach.qid;
		} else {
			drop_newfid(c, q);
		}
		break;
	case NP_TWALK: {
		uint16_t nw = r->ifcall.twalk.nwname;
		int full = ok && r->ofcall.rwalk.nwqid == nw;
		if (r->newfid == r->fid) {
			if (full && nw)
				r->fid->qid = r->ofcall.rwalk.wqid[nw - 1];
		} else if (full) {
			np_sfid_of(r->newfid)->live = 1;
			r->newfid->qid = nw ? r->ofcall.rwalk.wqid[nw - 1] : r->fid->qid;
		} else {
			drop_newfid(c, q);
		}
		break;
	}
	case NP_TXATTRWALK:
		if (ok) {
			np_sfid_of(r->newfid)->live = 1;
			r->newfid->opened = 1;
		} else {
			drop_newfid(c, q);
		}
		break;
	case NP_TLOPEN:
	case NP_TOPEN:
	case NP_TLCREATE:
	case NP_TCREATE:
		if (ok) {
			r->fid->opened = 1;
			r->fid->qid = r->ofcall.ropen.qid;
			/* Topen/Tcreate: np_compat_post records the translated flags. */
			if (r->ifcall.type == NP_TLOPEN)
				r->fid->open_flags = r->ifcall.tlopen.flags;
			else if (r->ifcall.type == NP_TLCREATE)
				r->fid->open_flags = r->ifcall.tlcreate.flags;
		}
		break;
	case NP_TXATTRCREATE:
		if (ok)
			r->fid->opened = 1;
		break;
	default:
		break;
	}
	if (c->dialect != NP_9P2000L)
		np_compat_post(c, q, ok);
}

void np_req_release(struct np_sreq *q)
{
	struct np_conn *c = q->pub.conn;
	if (q->compat)
		np_compat_release(q);
	if (q->rbuf)
		np_buf_put(q->rbuf);
	if (q->fbuf)
		np_buf_put(q->fbuf);
	if (q->drop_table_ref)
		put_fid(c, q->pub.fid);
	put_fid(c, q->pub.fid);
	if (q->pub.newfid != q->pub.fid)
		put_fid(c, q->pub.newfid);
	put_fid(c, q->pub.fid2);
	req_put(c, q);
}

static void finish_version(struct np_conn *c);

/* The request is done (its handler returned or responded, or it was
 * cancelled).  Loop thread only. */
void np_complete(struct np_sreq *q)
{
	struct np_conn *c = q->pub.conn;
	int ok = q->err == 0;

	atomic_store(&q->state, NP_RS_DONE);
	if (q->err == 0 && q->pub.ifcall.type == NP_TWALK && q->pub.ifcall.twalk.nwname &&
	    q->pub.ofcall.rwalk.nwqid == 0)
		q->err = ENOENT, ok = 0; /* a walk that went nowhere is an error */
	post_process(c, q, ok);
	tag_del(c, q);
	if (!q->discard && !c->closing)
		send_reply(c, q);
	/* Rflush for every Tflush that waited on this request, in order. */
	struct np_sreq *f = q->flushers;
	q->flushers = NULL;
	while (f) {
		struct np_sreq *nx = f->next;
		f->err = 0;
		f->discard |= q->discard;
		np_complete(f);
		f = nx;
	}
	np_req_release(q);
	c->outstanding--;
	if (c->version_req && c->outstanding == 1)
		finish_version(c);
	if (c->closing)
		np_conn_maybe_free(c);
	else if (c->rd_paused || c->eof)
		np_conn_update_events(c);
	if (c->eof)
		np_loop_mark_dirty(c); /* maybe the last one: finish there */
}

/* Called by handlers (NP_ASYNC) and workers, from any thread. */
void np_respond(np_req *r, int err)
{
	struct np_sreq *q = np_sreq_of(r);
	if (q->sub) {
		np_compat_sub_respond(q->sub, err); /* an adapter's composite step */
		return;
	}
	struct np_loop *l = r->conn->loop;
	q->err = err;
	struct np_sreq *old = atomic_load_explicit(&l->done, memory_order_relaxed);
	do {
		q->dnext = old;
	} while (!atomic_compare_exchange_weak_explicit(&l->done, &old, q, memory_order_release,
							memory_order_relaxed));
	if (!old)
		np_loop_wake(l);
}

int np_req_flushed(const np_req *r)
{
	return atomic_load_explicit(&((const struct np_sreq *)r)->flushed, memory_order_relaxed);
}

const np_peer *np_conn_peer(const np_conn *c)
{
	return &c->peer;
}

/* ---- Tversion and Tflush: the core's own messages ---- */

/* Abandon every request in flight: queued ones are cancelled, running ones
 * finish but their replies (and any Rflush waiting on them) are dropped. */
static void abort_inflight(struct np_conn *c, struct np_sreq *except)
{
	for (int i = 0; i < NP_TAGHASH; i++) {
		struct np_sreq *q = c->tags[i], *nx;
		for (; q; q = nx) {
			nx = q->hnext;
			if (q == except)
				continue;
			int expect = NP_RS_QUEUED;
			atomic_compare_exchange_strong(&q->state, &expect, NP_RS_CANCELLED);
			atomic_store(&q->flushed, 1);
			q->discard = 1;
			for (struct np_sreq *f = q->flushers; f; f = f->next)
				f->discard = 1;
			tag_del(c, q);
		}
	}
}

static void finish_version(struct np_conn *c);

/* Disconnect: nothing in flight will be answered. */
void np_conn_abort(struct np_conn *c)
{
	abort_inflight(c, NULL);
	if (c->version_req && c->outstanding == 1)
		finish_version(c);
}

static void finish_version(struct np_conn *c)
{
	struct np_sreq *q = c->version_req;
	c->version_req = NULL;
	np_fid_clunk_all(c);
	int d = np_dialect_parse(q->pub.ofcall.version.version.s, q->pub.ofcall.version.version.len);
	c->msize = d >= 0 ? q->pub.ofcall.version.msize : c->srv->o.msize; /* "unknown": no session, and the reply must fit */
	np_bufcache_set_msize(c->bc, c->msize);
	c->versioned = d >= 0;
	if (d >= 0)
		c->dialect = (enum np_dialect)d;
	q->err = 0;
	/* np_complete() would recurse into us via outstanding; finish here. */
	atomic_store(&q->state, NP_RS_DONE);
	tag_del(c, q);
	if (!c->closing)
		send_reply(c, q);
	np_req_release(q);
	c->outstanding--;
	np_conn_update_events(c); /* reading was held while the session drained */
}

static void do_version(struct np_conn *c, struct np_sreq *q)
{
	np_fcall *t = &q->pub.ifcall;
	np_fcall *r = &q->pub.ofcall;
	uint32_t msize = t->version.msize < c->srv->o.msize ? t->version.msize : c->srv->o.msize;
	int d = np_dialect_parse(t->version.version.s, t->version.version.len);

	r->version.msize = msize;
	if (d < 0 || msize < NP_MIN_MSIZE) {
		/* "unknown" tells the client we share no protocol; an msize too
		 * small for a header and an iounit is the same for us. */
		r->version.version = np_strz("unknown");
	} else {
		r->version.version = np_strz(np_dialect_name((enum np_dialect)d));
	}
	abort_inflight(c, q);
	c->version_req = q;
	if (c->outstanding == 1)
		finish_version(c);
}

static void do_flush(struct np_conn *c, struct np_sreq *q)
{
	struct np_sreq *o = tag_find(c, q->pub.ifcall.tflush.oldtag);
	if (!o || o == q) {
		np_complete(q); /* nothing to flush: Rflush at once */
		return;
	}
	atomic_store(&o->flushed, 1);
	int expect = NP_RS_QUEUED;
	/* Clunk and remove are never abandoned, even before they start: the
	 * fid is already gone from the table. */
	if (o->op != NP_OP_CLUNK && o->op != NP_OP_REMOVE &&
	    atomic_compare_exchange_strong(&o->state, &expect, NP_RS_CANCELLED)) {
		o->discard = 1;
		tag_del(c, o); /* the client may reuse the tag after Rflush */
		np_complete(q);
		return;
	}
	/* Running: its reply goes first, then ours. */
	q->next = NULL;
	struct np_sreq **pp = &o->flushers;
	while (*pp)
		pp = &(*pp)->next;
	*pp = q;
}

/* ---- fid resolution ---- */

static int use_fid(struct np_conn *c, uint32_t fid, np_fid **out)
{
	struct np_sfid *f = np_fid_lookup(c, fid);
	if (!f || !f->live)
		return EBADF;
	f->refs++;
	*out = &f->pub;
	return 0;
}

static int new_fid(struct np_conn *c, uint32_t fid, np_fid **out)
{
	int err = 0;
	struct np_sfid *f = np_fid_create(c, fid, &err);
	if (!f)
		return err;
	f->refs++; /* the request's */
	*out = &f->pub;
	return 0;
}

/* Resolve the fids a message names and check the session rules.  Returns the
 * handler to run (and sets q->op), or NULL with *err set. */
static np_handler prepare(struct np_conn *c, struct np_sreq *q, int *err)
{
	const struct np_fs_ops *ops = c->srv->ops;
	np_req *r = &q->pub;
	np_fcall *t = &r->ifcall;
	int e = 0;

#define NEED(fidno, slot) do { if ((e = use_fid(c, (fidno), &r->slot))) goto fail; } while (0)
	switch (t->type) {
	case NP_TAUTH:
		q->op = NP_OP_AUTH;
		if (!ops->auth) {
			/* No authentication required.  ENOENT is what diod answers,
			 * and what diod's client tools take as "go on and attach". */
			e = ENOENT;
			goto fail;
		}
		if ((e = new_fid(c, t->tauth.afid, &r->newfid)))
			goto fail;
		return ops->auth;
	case NP_TATTACH:
		q->op = NP_OP_ATTACH;
		if (t->tattach.afid != NP_NOFID) {
			if (!ops->auth) {
				e = EINVAL; /* no authentication here, so no afid */
				goto fail;
			}
			NEED(t->tattach.afid, fid2);
		}
		if ((e = new_fid(c, t->tattach.fid, &r->newfid)))
			goto fail;
		r->newfid->uid = t->tattach.n_uname;
		return ops->attach;
	case NP_TWALK:
		q->op = NP_OP_WALK;
		NEED(t->twalk.fid, fid);
		if (t->twalk.newfid == t->twalk.fid) {
			r->newfid = r->fid;
		} else {
			if ((e = new_fid(c, t->twalk.newfid, &r->newfid)))
				goto fail;
			r->newfid->uid = r->fid->uid;
			r->newfid->user = r->fid->user;
		}
		r->ofcall.rwalk.nwqid = 0;
		return ops->walk;
	case NP_TXATTRWALK:
		q->op = NP_OP_XATTRWALK;
		NEED(t->txattrwalk.fid, fid);
		if ((e = new_fid(c, t->txattrwalk.newfid, &r->newfid)))
			goto fail;
		r->newfid->uid = r->fid->uid;
		r->newfid->user = r->fid->user;
		return ops->xattrwalk;
	case NP_TCLUNK:
	case NP_TREMOVE: {
		struct np_sfid *f = np_fid_lookup(c, t->tclunk.fid);
		q->op = t->type == NP_TCLUNK ? NP_OP_CLUNK : NP_OP_REMOVE;
		if (!f || !f->live) {
			e = EBADF;
			goto fail;
		}
		/* Gone from the table at once; released when the last request
		 * using it finishes. */
		np_fid_unhash(c, f);
		f->refs++;
		r->fid = &f->pub;
		q->drop_table_ref = 1;
		if (t->type == NP_TCLUNK && f->rclose && c->dialect != NP_9P2000L)
			return np_compat_prepare(c, q, err); /* ORCLOSE: remove too */
		return t->type == NP_TCLUNK ? ops->clunk : ops->remove;
	}
	case NP_TLOPEN:
		q->op = NP_OP_LOPEN;
		NEED(t->tlopen.fid, fid);
		if (r->fid->opened) {
			e = EBADF;
			goto fail;
		}
		return ops->lopen;
	case NP_TLCREATE:
		q->op = NP_OP_LCREATE;
		NEED(t->tlcreate.fid, fid);
		if (r->fid->opened) {
			e = EBADF;
			goto fail;
		}
		return ops->lcreate;
	case NP_TREAD:
	case NP_TREADDIR:
	case NP_TWRITE:
		q->op = t->type == NP_TREAD ? NP_OP_READ : t->type == NP_TWRITE ? NP_OP_WRITE : NP_OP_READDIR;
		NEED(t->tread.fid, fid); /* fid is first in all three */
		if (!r->fid->opened) {
			e = EBADF;
			goto fail;
		}
		if (t->type == NP_TREAD && c->dialect != NP_9P2000L && (r->fid->qid.type & NP_QTDIR))
			return np_compat_prepare(c, q, err); /* directory read as stat entries */
		if (t->type != NP_TWRITE) {
			uint32_t room = q->rbuf->cap - NP_RREAD_DATA;
			uint32_t max = c->msize - NP_IOHDRSZ;
			uint32_t n = t->tread.count;
			if (n > max)
				n = max; /* clients may ask for more than fits: clamp */
			if (n > room)
				n = room;
			r->ofcall.rread.data = q->rbuf->data + NP_RREAD_DATA;
			r->ofcall.rread.count = n;
		}
		return t->type == NP_TREAD ? ops->read : t->type == NP_TWRITE ? ops->write : ops->readdir;
	case NP_TGETATTR:
		q->op = NP_OP_GETATTR;
		NEED(t->tgetattr.fid, fid);
		return ops->getattr;
	case NP_TSETATTR:
		q->op = NP_OP_SETATTR;
		NEED(t->tsetattr.fid, fid);
		return ops->setattr;
	case NP_TSTATFS:
		q->op = NP_OP_STATFS;
		NEED(t->tclunk.fid, fid);
		return ops->statfs;
	case NP_TREADLINK: {
		q->op = NP_OP_READLINK;
		NEED(t->tclunk.fid, fid);
		uint32_t room = q->rbuf->cap - 9;
		r->ofcall.rreadlink.target.s = (const char *)q->rbuf->data + 9;
		r->ofcall.rreadlink.target.len = (uint16_t)(room > 0xFFFF ? 0xFFFF : room);
		return ops->readlink;
	}
	case NP_TXATTRCREATE:
		q->op = NP_OP_XATTRCREATE;
		NEED(t->txattrcreate.fid, fid);
		if (r->fid->opened) {
			e = EBADF;
			goto fail;
		}
		return ops->xattrcreate;
	case NP_TFSYNC:
		q->op = NP_OP_FSYNC;
		NEED(t->tfsync.fid, fid);
		return ops->fsync;
	case NP_TLOCK:
		q->op = NP_OP_LOCK;
		NEED(t->tlock.fid, fid);
		return ops->lock;
	case NP_TGETLOCK:
		q->op = NP_OP_GETLOCK;
		NEED(t->tgetlock.fid, fid);
		return ops->getlock;
	case NP_TSYMLINK:
		q->op = NP_OP_SYMLINK;
		NEED(t->tsymlink.fid, fid);
		return ops->symlink;
	case NP_TMKNOD:
		q->op = NP_OP_MKNOD;
		NEED(t->tmknod.dfid, fid);
		return ops->mknod;
	case NP_TMKDIR:
		q->op = NP_OP_MKDIR;
		NEED(t->tmkdir.dfid, fid);
		return ops->mkdir;
	case NP_TLINK:
		q->op = NP_OP_LINK;
		NEED(t->tlink.dfid, fid);
		NEED(t->tlink.fid, fid2);
		return ops->link;
	case NP_TRENAME:
		q->op = NP_OP_RENAME;
		NEED(t->trename.fid, fid);
		NEED(t->trename.dfid, fid2);
		return ops->rename;
	case NP_TRENAMEAT:
		q->op = NP_OP_RENAMEAT;
		NEED(t->trenameat.olddirfid, fid);
		NEED(t->trenameat.newdirfid, fid2);
		return ops->renameat;
	case NP_TUNLINKAT:
		q->op = NP_OP_UNLINKAT;
		NEED(t->tunlinkat.dirfid, fid);
		return ops->unlinkat;
	default:
		/* 9P2000 and 9P2000.u messages are served by the adapter. */
		return np_compat_prepare(c, q, err);
	}
#undef NEED
fail:
	*err = e;
	return NULL;
}

/* ---- the entry point: one whole frame from the wire ---- */

static void reply_now(struct np_sreq *q, int err)
{
	q->err = err;
	np_complete(q);
}

void np_dispatch(struct np_conn *c, const uint8_t *frame, uint32_t len)
{
	np_server *s = c->srv;
	struct np_sreq *q = req_get(c);
	np_decode_error de = {0};

	if (!q) {
		np_conn_close(c, "out of memory");
		return;
	}
	atomic_fetch_add_explicit(&s->st_requests, 1, memory_order_relaxed);
	c->active = 1;
	c->outstanding++;
	int derr = np_decode(frame, len, c->dialect, c->versioned ? c->msize : 0, &q->pub.ifcall, &de);
	np_fcall *t = &q->pub.ifcall;
	if (derr < 0) {
		/* The frame boundary is sound (the loop checked size), so the
		 * peer gets an error for this tag and the session goes on. */
		t->type = frame[4];
		t->tag = (uint16_t)(frame[5] | frame[6] << 8);
		np_log(s, 1, "conn %u: bad %s (type %u) tag %u: field %s: %s", c->id,
		       np_type_name(t->type) ? np_type_name(t->type) : "message", t->type, t->tag,
		       de.field ? de.field : "?", strerror(de.err));
	}
	q->pub.ofcall.type = (uint8_t)(t->type + 1);
	q->pub.ofcall.tag = t->tag;
	if (s->o.trace && derr == 0)
		trace(c, "<-", t);

	/* Tags: a duplicate in flight would make replies ambiguous.  Only a
	 * Tversion that decodes may reuse one: it discards everything in
	 * flight; an undecodable one is answered like any other request. */
	if ((t->type != NP_TVERSION || derr < 0) && tag_find(c, t->tag)) {
		c->outstanding--;
		req_put(c, q);
		np_conn_close(c, "duplicate tag in flight");
		return;
	}
	q->rbuf = np_buf_get(c->bc, derr < 0 ? NP_BUF_SMALL : np_reply_bufsize(t, c->versioned ? c->msize : NP_BUF_SMALL));
	if (!q->rbuf) {
		c->outstanding--;
		req_put(c, q);
		np_conn_close(c, "out of memory");
		return;
	}
	tag_add(c, q);
	if (derr < 0) {
		reply_now(q, -derr);
		return;
	}
	if (t->type == NP_TVERSION) {
		do_version(c, q);
		return;
	}
	if (!c->versioned) {
		reply_now(q, EPROTO); /* no session before Tversion */
		return;
	}
	if (t->type == NP_TFLUSH) {
		do_flush(c, q);
		return;
	}
	if (t->type >= 128 || (t->type & 1)) {
		reply_now(q, EOPNOTSUPP); /* an R-message sent as a request */
		return;
	}

	int err = 0;
	np_handler h = prepare(c, q, &err);
	if (!h) {
		/* No handler: the backend does not do this.  A clunk needs none:
		 * the core releases the fid. */
		if (!err && q->op != NP_OP_CLUNK)
			err = EOPNOTSUPP;
		reply_now(q, err);
		return;
	}
	uint64_t need = q->need_ops ? q->need_ops : NP_OP_BIT(q->op);
	if ((s->ops->inline_ops & need) == need) {
		atomic_store(&q->state, NP_RS_RUNNING);
		err = h(&q->pub);
		if (err != NP_ASYNC) {
			reply_now(q, err);
			return;
		}
		/* Going asynchronous: the frame is about to be reused, so the
		 * request takes its own copy and its views are re-pointed. */
		q->fbuf = np_buf_get(c->bc, len);
		if (q->fbuf) {
			memcpy(q->fbuf->data, frame, len);
			np_decode(q->fbuf->data, len, c->dialect, c->msize, t, NULL);
		} else {
			/* Without a copy the views must stay where they are: stop
			 * reading (the receive buffer is never reused) and let the
			 * connection go once the handler responds. */
			np_conn_close(c, "out of memory");
		}
		return;
	}
	q->fbuf = np_buf_get(c->bc, len);
	if (!q->fbuf) {
		reply_now(q, ENOMEM);
		return;
	}
	memcpy(q->fbuf->data, frame, len);
	np_decode(q->fbuf->data, len, c->dialect, c->msize, t, NULL);
	q->handler = h;
	np_workers_submit(s, q);
}

/* libFuzzer target: a whole 9P session against an in-process server.
 *
 * One np_server per process (loops=1, workers=1, the backend from
 * fuzz_server_*.c), kept alive by an idle connection; each input is one new
 * connection on a socketpair (np_server_add_fds), so inputs cost no thread
 * start-up.  Input:
 *
 *   byte 0: bits 0-1  0: send the frames as they are; 1/2/3: first send a
 *                     Tversion of 9P2000 / 9P2000.u / 9P2000.L ourselves
 *           bits 2-3  that Tversion's msize: 65536, 8192, 4096, 200000
 *           bit  4    raw: send the rest byte for byte (framing errors)
 *           bits 5-7  backend options (see the backend)
 *   then frames: size[4] type[1] tag[2] body.  Unless raw, each frame's
 *   size field is repaired: at least 7, at most what is left of the input
 *   and at most the server's msize, and rewritten to the length used, so a
 *   mutation inside a frame cannot derail the framing of the whole input.
 *
 * The target writes everything, waits until every frame has its reply (or
 * no reply came for IDLE_MS: flushed or discarded requests get none), shuts
 * its write side down (the server sees EOF after the last frame and ends
 * the session, dropping what is still in flight) and reads until EOF.
 * Every reply must: be framed within the msize in force, decode in the
 * dialect the replies so far negotiated (Rversion switches it, in stream
 * order), carry the tag of a frame we sent that has no reply yet, and be that
 * frame's R-type or the dialect's error type, with the counts the client
 * checks (np_client_parse_reply: Rread <= Tread count, 1 <= Rwalk nwqid <=
 * nwname...).  After EOF the target waits until the server has freed the
 * connection (so every fid of the session is destroyed) and lets the backend
 * verify and reset the export; a session that neither ends nor answers
 * aborts.  Leaks are LeakSanitizer's: nothing of a session survives it.
 * FUZZ_TRACE=1 in the environment prints every reply (to study an input). */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "client/reply.h"
#include "fuzz_server.h"
#include "ninep/proto.h"
#include "ninep/server.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define SRV_MSIZE 65536u
#define STALL_MS 5000 /* no progress for this long: the server hangs */
#define IDLE_MS 3     /* all sent, replies missing, none for this long: end */

static np_server *srv;
static int keep_fd = -1;
static int trace;

/* The server's log would print a line per closed connection and bad
 * frame: most inputs produce some, and they are expected. */
static void quiet_log(void *arg, int level, const char *msg)
{
	(void)arg;
	(void)level;
	(void)msg;
}

static void teardown(void)
{
	np_server_free(srv);
	srv = NULL;
	if (keep_fd >= 0)
		close(keep_fd);
	fuzz_backend.fini();
}

static void setup(void)
{
	const struct np_fs_ops *ops;
	void *fs;
	if (fuzz_backend.init(&ops, &fs) != 0) {
		fprintf(stderr, "fuzz-server-%s: backend set-up failed\n", fuzz_backend.name);
		abort();
	}
	struct np_server_opts o = {
		.msize = SRV_MSIZE,
		.loops = 1,
		.workers = 1,
		.max_fids = 64,     /* small limits so inputs can reach them */
		.max_inflight = 16,
		.log = quiet_log,
	};
	srv = np_server_new(ops, fs, &o);
	int sv[2];
	if (!srv || socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) < 0)
		abort();
	/* A server without listeners ends with its last session: an idle
	 * connection keeps this one up between inputs. */
	if (np_server_add_fds(srv, sv[1], sv[1], "keepalive") < 0 || np_server_start(srv) < 0)
		abort();
	keep_fd = sv[0];
	const char *t = getenv("FUZZ_TRACE");
	trace = t && *t && *t != '0';
	atexit(teardown);
}

static uint64_t now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

/* ---- what we sent ---- */

struct sent {
	struct np_expect ex;
	uint16_t tag;
	uint8_t answered;
};

struct session {
	uint8_t *out;
	size_t outlen;
	struct sent *sent;
	size_t nsent;
	/* the reply stream's state */
	enum np_dialect d;
	uint32_t msize;
	size_t nreplies;
	uint64_t last_reply; /* ms */
};

static uint32_t le32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static void put_le32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)v;
	p[1] = (uint8_t)(v >> 8);
	p[2] = (uint8_t)(v >> 16);
	p[3] = (uint8_t)(v >> 24);
}

/* What the reply to this frame must agree with, read from the raw bytes
 * (the counts sit at the same offsets in every dialect; a frame that does
 * not decode gets an error reply, whose checks do not use them). */
static void note_sent(struct session *s, const uint8_t *f, uint32_t len)
{
	struct sent *e = &s->sent[s->nsent++];
	memset(e, 0, sizeof *e);
	e->tag = (uint16_t)(f[5] | f[6] << 8);
	e->ex.ttype = f[4];
	if (f[4] == NP_TWALK && len >= 17)
		e->ex.nwname = (uint16_t)(f[15] | f[16] << 8);
	if ((f[4] == NP_TREAD || f[4] == NP_TREADDIR || f[4] == NP_TWRITE) && len >= 23)
		e->ex.count = le32(f + 19);
}

static void add_version(struct session *s, unsigned dialect, unsigned msel)
{
	static const uint32_t msizes[] = {65536, 8192, 4096, 200000};
	const char *v = np_dialect_name((enum np_dialect)(dialect - 1));
	np_fcall t = {.type = NP_TVERSION, .tag = NP_NOTAG};
	t.version.msize = msizes[msel];
	t.version.version = np_strz(v);
	int n = np_encode(&t, NP_9P2000, s->out + s->outlen, 64);
	if (n < 0)
		abort();
	note_sent(s, s->out + s->outlen, (uint32_t)n);
	s->outlen += (size_t)n;
}

/* Lay out the byte stream to send (see the top of the file). */
static void build(struct session *s, const uint8_t *data, size_t size)
{
	unsigned hdr = data[0];
	const uint8_t *p = data + 1;
	size_t rem = size - 1;
	s->out = malloc(size + 64);
	/* one entry per 7 input bytes at most, plus the Tversion */
	s->sent = malloc((size / NP_HDRSZ + 2) * sizeof *s->sent);
	if (!s->out || !s->sent)
		abort();
	if (hdr & 3)
		add_version(s, hdr & 3, (hdr >> 2) & 3);
	if (hdr & 0x10) {
		/* The server splits the stream by the size fields as they are;
		 * every whole frame it may see could be answered. */
		memcpy(s->out + s->outlen, p, rem);
		const uint8_t *f = s->out + s->outlen;
		s->outlen += rem;
		while (rem >= NP_HDRSZ) {
			uint32_t n = le32(f);
			if (n < NP_HDRSZ || n > rem)
				break;
			note_sent(s, f, n);
			f += n;
			rem -= n;
		}
		return;
	}
	while (rem >= NP_HDRSZ) {
		uint32_t n = le32(p);
		if (n < NP_HDRSZ)
			n = NP_HDRSZ;
		if (n > rem)
			n = (uint32_t)rem;
		if (n > SRV_MSIZE)
			n = SRV_MSIZE;
		uint8_t *f = s->out + s->outlen;
		memcpy(f, p, n);
		put_le32(f, n);
		note_sent(s, f, n);
		s->outlen += n;
		p += n;
		rem -= n;
	}
	/* A trailing partial frame: the server must drop it at EOF. */
	memcpy(s->out + s->outlen, p, rem);
	s->outlen += rem;
}

/* ---- what came back ---- */

static void die(const struct session *s, const uint8_t *f, uint32_t len, const char *what)
{
	char line[512] = "";
	np_fcall rc;
	if (len >= NP_HDRSZ && np_decode(f, len, s->d, s->msize, &rc, NULL) == 0)
		np_fcall_format(line, sizeof line, &rc, s->d);
	fprintf(stderr, "fuzz-server-%s: reply %zu (%s, msize %u, %u bytes, type %u, tag %u): %s%s%s\n",
		fuzz_backend.name, s->nreplies, np_dialect_name(s->d), s->msize, len,
		len > 4 ? f[4] : 0, len > 6 ? (unsigned)(f[5] | f[6] << 8) : 0, what,
		*line ? ": " : "", line);
	abort();
}

static void check_reply(struct session *s, const uint8_t *f, uint32_t len)
{
	uint16_t tag = (uint16_t)(f[5] | f[6] << 8);
	np_fcall rc;
	size_t i;
	int tagged = 0;

	for (i = 0; i < s->nsent; i++) {
		struct sent *e = &s->sent[i];
		if (e->answered || e->tag != tag)
			continue;
		tagged = 1;
		if (np_client_parse_reply(f, len, s->d, s->msize, &e->ex, &rc) == 0)
			break;
	}
	if (i == s->nsent) {
		np_decode_error de = {0};
		if (np_decode(f, len, s->d, s->msize, &rc, &de) < 0) {
			char why[128];
			snprintf(why, sizeof why, "does not decode (field %s at %u: %s)",
				 de.field ? de.field : "?", de.offset, strerror(de.err));
			die(s, f, len, why);
		}
		die(s, f, len, tagged ? "is neither the R-type of its request nor an error"
				      : "answers no unanswered request with its tag");
	}
	s->sent[i].answered = 1;
	if (trace) {
		char line[512];
		np_fcall_format(line, sizeof line, &rc, s->d);
		fprintf(stderr, "<- %s\n", line);
	}
	if ((rc.type == NP_RLERROR && s->d != NP_9P2000L) ||
	    (rc.type == NP_RERROR && s->d == NP_9P2000L))
		die(s, f, len, "error reply of another dialect");
	if (rc.type == NP_RLERROR || rc.type == NP_RERROR) {
		if (np_reply_errno(&rc, s->d) <= 0)
			die(s, f, len, "error reply without an error");
	}
	if (rc.type == NP_RVERSION) {
		/* The session's dialect and msize change here, in stream order. */
		int d = np_dialect_parse(rc.version.version.s, rc.version.version.len);
		if (rc.version.msize > SRV_MSIZE)
			die(s, f, len, "Rversion offers more than the server's msize");
		if (d >= 0) {
			if (rc.version.msize < NP_MIN_MSIZE)
				die(s, f, len, "Rversion accepts an msize below the minimum");
			s->d = (enum np_dialect)d;
			s->msize = rc.version.msize;
		} else {
			s->msize = SRV_MSIZE;
		}
	}
	s->nreplies++;
	s->last_reply = now_ms();
}

/* Take every whole reply off the front of buf; returns the bytes used. */
static size_t take_replies(struct session *s, const uint8_t *buf, size_t len)
{
	size_t used = 0;
	while (len - used >= 4) {
		uint32_t n = le32(buf + used);
		if (n < NP_HDRSZ || n > s->msize)
			die(s, buf + used, (uint32_t)(len - used < 16 ? len - used : 16),
			    "frame size outside [7, msize]");
		if (len - used < n)
			break;
		check_reply(s, buf + used, n);
		used += n;
	}
	return used;
}

/* Feed the stream and read replies until the server closes the session. */
static void run_session(struct session *s, int fd)
{
	/* kept across inputs: a fresh 128 KiB block each time is an mmap */
	static uint8_t in[2 * SRV_MSIZE + 64];
	size_t cap = sizeof in, have = 0, sent = 0;
	int wr_open = 1;
	uint64_t last = now_ms();
	s->last_reply = last;
	for (;;) {
		int all_out = wr_open && sent == s->outlen;
		if (all_out && (s->nreplies >= s->nsent || now_ms() - s->last_reply >= IDLE_MS)) {
			shutdown(fd, SHUT_WR); /* the end of the session */
			wr_open = all_out = 0;
		}
		struct pollfd pf = {.fd = fd,
				    .events = POLLIN | (wr_open && !all_out ? POLLOUT : 0)};
		int r = poll(&pf, 1, all_out ? 1 : 100);
		if (r < 0 && errno != EINTR)
			abort();
		if (r <= 0) {
			if (all_out)
				continue;
			if (now_ms() - last > STALL_MS) {
				fprintf(stderr, "fuzz-server-%s: session stalled: %zu of %zu bytes sent, "
					"%zu replies, no EOF\n", fuzz_backend.name, sent, s->outlen,
					s->nreplies);
				abort();
			}
			continue;
		}
		last = now_ms();
		if (wr_open && !all_out && (pf.revents & (POLLOUT | POLLERR | POLLHUP))) {
			ssize_t n = send(fd, s->out + sent, s->outlen - sent, MSG_NOSIGNAL | MSG_DONTWAIT);
			if (n > 0)
				sent += (size_t)n;
			else if (n < 0 && errno != EAGAIN && errno != EINTR)
				sent = s->outlen; /* the server closed early: stop sending */
		}
		if (pf.revents & (POLLIN | POLLERR | POLLHUP)) {
			ssize_t n = recv(fd, in + have, cap - have, MSG_DONTWAIT);
			if (n == 0 || (n < 0 && errno != EAGAIN && errno != EINTR))
				break; /* EOF (or a reset after an early close) */
			if (n > 0) {
				have += (size_t)n;
				size_t used = take_replies(s, in, have);
				memmove(in, in + used, have - used);
				have -= used;
			}
		}
	}
	/* A partial reply may be left: a closing connection drops what it has
	 * not written yet (the session ends at our EOF, not at the last reply). */
}

/* The connection is gone from the server once only the keepalive is open:
 * every fid of the session has been destroyed by then. */
static void wait_quiet(void)
{
	uint64_t start = now_ms();
	struct np_server_stats st;
	for (;;) {
		np_server_stats(srv, &st);
		if (st.conns_open <= 1)
			return;
		if (now_ms() - start > STALL_MS) {
			fprintf(stderr, "fuzz-server-%s: session closed but never freed (%llu open)\n",
				fuzz_backend.name, (unsigned long long)st.conns_open);
			abort();
		}
		struct timespec ts = {0, 20000};
		nanosleep(&ts, NULL);
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 1)
		return 0;
	if (!srv)
		setup();
	struct session s = {.d = NP_9P2000, .msize = SRV_MSIZE};
	build(&s, data, size);

	int sv[2];
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) < 0)
		abort();
	fcntl(sv[0], F_SETFL, fcntl(sv[0], F_GETFL) | O_NONBLOCK);
	fuzz_backend.begin((unsigned)data[0] >> 5);
	if (np_server_add_fds(srv, sv[1], sv[1], "fuzz") < 0)
		abort();
	run_session(&s, sv[0]);
	close(sv[0]);
	wait_quiet();
	fuzz_backend.end();
	free(s.out);
	free(s.sent);
	return 0;
}

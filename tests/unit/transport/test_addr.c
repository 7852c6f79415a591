/* Address strings: what parses into what, what is refused and with which
 * message, and that formatting gives back the same address. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>
#include <linux/vm_sockets.h>

#include "ninep/transport.h"

struct good {
	const char *in;
	enum np_addr_kind kind;
	const char *path_or_host; /* unix path / tcp host */
	int abstract;
	const char *port;         /* tcp */
	uint32_t cid, vport;      /* vsock */
	int rfd, wfd;             /* fd, stdio */
	const char *canon;        /* np_addr_format of the result */
};

static const struct good goods[] = {
	{ "unix:/run/ninep.sock", NP_ADDR_UNIX, "/run/ninep.sock", 0, NULL, 0, 0, -1, -1, "unix:/run/ninep.sock" },
	{ "unix:rel/sock", NP_ADDR_UNIX, "rel/sock", 0, NULL, 0, 0, -1, -1, "unix:rel/sock" },
	{ "unix:@ninep", NP_ADDR_UNIX, "ninep", 1, NULL, 0, 0, -1, -1, "unix:@ninep" },
	{ "unix:@a:b@c", NP_ADDR_UNIX, "a:b@c", 1, NULL, 0, 0, -1, -1, "unix:@a:b@c" },
	{ "tcp:127.0.0.1:564", NP_ADDR_TCP, "127.0.0.1", 0, "564", 0, 0, -1, -1, "tcp:127.0.0.1:564" },
	{ "tcp:[::1]:564", NP_ADDR_TCP, "::1", 0, "564", 0, 0, -1, -1, "tcp:[::1]:564" },
	{ "tcp:[::]:0", NP_ADDR_TCP, "::", 0, "0", 0, 0, -1, -1, "tcp:[::]:0" },
	{ "tcp:[fe80::1%lo]:5640", NP_ADDR_TCP, "fe80::1%lo", 0, "5640", 0, 0, -1, -1, "tcp:[fe80::1%lo]:5640" },
	{ "tcp:[::ffff:10.0.0.1]:1", NP_ADDR_TCP, "::ffff:10.0.0.1", 0, "1", 0, 0, -1, -1, "tcp:[::ffff:10.0.0.1]:1" },
	{ "tcp:localhost:65535", NP_ADDR_TCP, "localhost", 0, "65535", 0, 0, -1, -1, "tcp:localhost:65535" },
	{ "tcp:my-host.example_1.org:ninep-svc", NP_ADDR_TCP, "my-host.example_1.org", 0, "ninep-svc", 0, 0, -1, -1, "tcp:my-host.example_1.org:ninep-svc" },
	{ "tcp:h:00564", NP_ADDR_TCP, "h", 0, "564", 0, 0, -1, -1, "tcp:h:564" },
	{ "vsock:any:564", NP_ADDR_VSOCK, NULL, 0, NULL, VMADDR_CID_ANY, 564, -1, -1, "vsock:any:564" },
	{ "vsock:host:5640", NP_ADDR_VSOCK, NULL, 0, NULL, VMADDR_CID_HOST, 5640, -1, -1, "vsock:host:5640" },
	{ "vsock:local:1", NP_ADDR_VSOCK, NULL, 0, NULL, VMADDR_CID_LOCAL, 1, -1, -1, "vsock:local:1" },
	{ "vsock:2:7", NP_ADDR_VSOCK, NULL, 0, NULL, VMADDR_CID_HOST, 7, -1, -1, "vsock:host:7" },
	{ "vsock:3:1234", NP_ADDR_VSOCK, NULL, 0, NULL, 3, 1234, -1, -1, "vsock:3:1234" },
	{ "vsock:4294967295:4294967295", NP_ADDR_VSOCK, NULL, 0, NULL, VMADDR_CID_ANY, 4294967295u, -1, -1, "vsock:any:4294967295" },
	{ "fd:3,4", NP_ADDR_FD, NULL, 0, NULL, 0, 0, 3, 4, "fd:3,4" },
	{ "fd:0,0", NP_ADDR_FD, NULL, 0, NULL, 0, 0, 0, 0, "fd:0,0" },
	{ "fd:2147483647,07", NP_ADDR_FD, NULL, 0, NULL, 0, 0, 2147483647, 7, "fd:2147483647,7" },
	{ "stdio", NP_ADDR_STDIO, NULL, 0, NULL, 0, 0, 0, 1, "stdio" },
};

static void test_parse_good(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof goods / sizeof goods[0]; i++) {
		const struct good *g = &goods[i];
		char err[256] = "", out[NP_ADDR_STRMAX];
		np_addr a, b;

		int rc = np_addr_parse(g->in, &a, err, sizeof err);
		if (rc != 0)
			fail_msg("%s: %s", g->in, err);
		assert_int_equal(a.kind, g->kind);
		switch (g->kind) {
		case NP_ADDR_UNIX:
			assert_string_equal(a.path, g->path_or_host);
			assert_int_equal(a.abstract, g->abstract);
			break;
		case NP_ADDR_TCP:
			assert_string_equal(a.host, g->path_or_host);
			assert_string_equal(a.port, g->port);
			break;
		case NP_ADDR_VSOCK:
			assert_int_equal(a.cid, g->cid);
			assert_int_equal(a.vport, g->vport);
			break;
		default:
			break;
		}
		assert_int_equal(a.rfd, g->rfd);
		assert_int_equal(a.wfd, g->wfd);

		/* Format gives the canonical string, which parses back to the
		 * very same address. */
		rc = np_addr_format(&a, out, sizeof out);
		assert_int_equal(rc, (int)strlen(g->canon));
		assert_string_equal(out, g->canon);
		assert_int_equal(np_addr_parse(out, &b, err, sizeof err), 0);
		assert_memory_equal(&a, &b, sizeof a);
	}
}

struct badcase {
	const char *in;
	const char *msg; /* the exact message */
};

static const struct badcase bads[] = {
	{ "", "bad address '': want unix:PATH, tcp:HOST:PORT, vsock:CID:PORT, fd:RFD,WFD or stdio" },
	{ "/tmp/sock", "bad address '/tmp/sock': want unix:PATH, tcp:HOST:PORT, vsock:CID:PORT, fd:RFD,WFD or stdio" },
	{ "stdiox", "bad address 'stdiox': want unix:PATH, tcp:HOST:PORT, vsock:CID:PORT, fd:RFD,WFD or stdio" },
	{ "stdio:", "bad address 'stdio:': stdio takes no arguments" },
	{ "udp:1.2.3.4:5", "bad address 'udp:1.2.3.4:5': unknown transport 'udp' (want unix, tcp, vsock, fd or stdio)" },
	{ "UNIX:/x", "bad address 'UNIX:/x': unknown transport 'UNIX' (want unix, tcp, vsock, fd or stdio)" },
	{ "unix:", "bad address 'unix:': empty socket path" },
	{ "unix:@", "bad address 'unix:@': empty abstract socket name" },
	{ "tcp:localhost", "bad address 'tcp:localhost': missing port" },
	{ "tcp:localhost:", "bad address 'tcp:localhost:': missing port" },
	{ "tcp::564", "bad address 'tcp::564': missing host" },
	{ "tcp:", "bad address 'tcp:': missing port" },
	{ "tcp:h:65536", "bad address 'tcp:h:65536': port '65536' out of range (0-65535)" },
	{ "tcp:h:99999999999999999999999", "bad address 'tcp:h:99999999999999999999999': port '99999999999999999999999' out of range (0-65535)" },
	{ "tcp:h:564x", "bad address 'tcp:h:564x': bad port '564x'" },
	/* A leading digit means a number; so 9pfs, the one service name
	 * that starts with a digit, is not taken: write 564. */
	{ "tcp:h:9pfs", "bad address 'tcp:h:9pfs': bad port '9pfs'" },
	{ "tcp:h:-1", "bad address 'tcp:h:-1': bad port '-1'" },
	{ "tcp:h: 564", "bad address 'tcp:h: 564': bad port ' 564'" },
	{ "tcp:h:+564", "bad address 'tcp:h:+564': bad port '+564'" },
	{ "tcp:h:ninep/tcp", "bad address 'tcp:h:ninep/tcp': bad port 'ninep/tcp'" },
	{ "tcp:::1:564", "bad address 'tcp:::1:564': IPv6 literals need brackets, as in tcp:[::1]:564" },
	{ "tcp:[::1:564", "bad address 'tcp:[::1:564': missing ']'" },
	{ "tcp:[::1]", "bad address 'tcp:[::1]': missing port" },
	{ "tcp:[::1]:", "bad address 'tcp:[::1]:': missing port" },
	{ "tcp:[::1]x564", "bad address 'tcp:[::1]x564': expected ':' after ']'" },
	{ "tcp:[]:564", "bad address 'tcp:[]:564': missing host" },
	{ "tcp:[localhost]:564", "bad address 'tcp:[localhost]:564': 'localhost' is not an IPv6 address" },
	{ "tcp:[fe80::1%]:564", "bad address 'tcp:[fe80::1%]:564': 'fe80::1%' is not an IPv6 address" },
	{ "tcp:bad host:1", "bad address 'tcp:bad host:1': bad character ' ' in host" },
	{ "tcp:a/b:1", "bad address 'tcp:a/b:1': bad character '/' in host" },
	{ "vsock:3", "bad address 'vsock:3': missing port" },
	{ "vsock:3:", "bad address 'vsock:3:': missing port" },
	{ "vsock:x:1", "bad address 'vsock:x:1': bad CID 'x' (want a number, any, host or local)" },
	{ "vsock::1", "bad address 'vsock::1': bad CID '' (want a number, any, host or local)" },
	{ "vsock:-1:1", "bad address 'vsock:-1:1': bad CID '-1' (want a number, any, host or local)" },
	{ "vsock:4294967296:1", "bad address 'vsock:4294967296:1': CID '4294967296' out of range" },
	{ "vsock:3:4294967296", "bad address 'vsock:3:4294967296': port '4294967296' out of range" },
	{ "vsock:3:12a", "bad address 'vsock:3:12a': bad port '12a'" },
	{ "vsock:3:1:2", "bad address 'vsock:3:1:2': bad port '1:2'" },
	{ "fd:3", "bad address 'fd:3': want fd:RFD,WFD" },
	{ "fd:", "bad address 'fd:': want fd:RFD,WFD" },
	{ "fd:-1,2", "bad address 'fd:-1,2': negative descriptor '-1'" },
	{ "fd:3,-4", "bad address 'fd:3,-4': negative descriptor '-4'" },
	{ "fd:3,4x", "bad address 'fd:3,4x': bad descriptor '4x'" },
	{ "fd:,4", "bad address 'fd:,4': bad descriptor ''" },
	{ "fd:3,4,5", "bad address 'fd:3,4,5': bad descriptor '4,5'" },
	{ "fd:3,2147483648", "bad address 'fd:3,2147483648': descriptor '2147483648' out of range" },
};

static void test_parse_bad(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof bads / sizeof bads[0]; i++) {
		char err[256] = "";
		np_addr a;

		memset(&a, 0x5a, sizeof a);
		int rc = np_addr_parse(bads[i].in, &a, err, sizeof err);
		if (rc != -EINVAL)
			fail_msg("'%s' gave %d, want -EINVAL", bads[i].in, rc);
		assert_string_equal(err, bads[i].msg);
		/* Nothing half-parsed is left behind. */
		assert_int_equal(a.path[0], 0);
		assert_int_equal(a.host[0], 0);
		assert_int_equal(a.rfd, -1);
	}
}

/* sun_path holds 108 bytes: 107 of path plus the NUL, or the leading NUL
 * plus 107 of abstract name. */
static void test_parse_unix_length(void **state)
{
	char s[300], err[256], want[400];
	np_addr a;

	(void)state;
	strcpy(s, "unix:/");
	memset(s + 6, 'p', 106);
	s[112] = '\0'; /* a 107-byte path */
	assert_int_equal(np_addr_parse(s, &a, err, sizeof err), 0);
	assert_int_equal(strlen(a.path), 107);
	strcat(s, "q");
	assert_int_equal(np_addr_parse(s, &a, err, sizeof err), -EINVAL);
	snprintf(want, sizeof want, "bad address '%s': socket path longer than 107 bytes", s);
	assert_string_equal(err, want);

	strcpy(s, "unix:@");
	memset(s + 6, 'n', 107);
	s[113] = '\0';
	assert_int_equal(np_addr_parse(s, &a, err, sizeof err), 0);
	assert_int_equal(a.abstract, 1);
	assert_int_equal(strlen(a.path), 107);
	strcat(s, "n");
	assert_int_equal(np_addr_parse(s, &a, err, sizeof err), -EINVAL);
	snprintf(want, sizeof want, "bad address '%s': abstract name longer than 107 bytes", s);
	assert_string_equal(err, want);
}

static void test_parse_host_length(void **state)
{
	char s[400], err[512], want[600];
	np_addr a;

	(void)state;
	strcpy(s, "tcp:");
	memset(s + 4, 'h', 255);
	strcpy(s + 259, ":564");
	assert_int_equal(np_addr_parse(s, &a, err, sizeof err), 0);
	assert_int_equal(strlen(a.host), 255);
	char out[NP_ADDR_STRMAX];
	assert_int_equal(np_addr_format(&a, out, sizeof out), (int)strlen(s));
	assert_string_equal(out, s);

	memset(s + 4, 'h', 256);
	strcpy(s + 260, ":564");
	assert_int_equal(np_addr_parse(s, &a, err, sizeof err), -EINVAL);
	snprintf(want, sizeof want, "bad address '%s': host longer than 255 bytes", s);
	assert_string_equal(err, want);
}

static void test_parse_err_buffer(void **state)
{
	char err[8];
	np_addr a;

	(void)state;
	/* No message buffer at all is fine. */
	assert_int_equal(np_addr_parse("tcp:x", &a, NULL, 0), -EINVAL);
	/* A short one is filled and terminated, never overrun. */
	memset(err, 'z', sizeof err);
	assert_int_equal(np_addr_parse("tcp:x", &a, err, sizeof err), -EINVAL);
	assert_string_equal(err, "bad add");
	assert_int_equal(np_addr_parse(NULL, &a, err, sizeof err), -EINVAL);
	assert_int_equal(np_addr_parse("stdio", NULL, err, sizeof err), -EINVAL);
}

static void test_format_small_buffer(void **state)
{
	char out[8];
	np_addr a;

	(void)state;
	assert_int_equal(np_addr_parse("unix:/tmp/socket", &a, NULL, 0), 0);
	assert_int_equal(np_addr_format(&a, out, sizeof out), -ENOSPC);
	assert_string_equal(out, "unix:/t");
	assert_int_equal(np_addr_format(&a, out, 0), -ENOSPC);

	/* Exactly enough room. */
	char fit[17];
	assert_int_equal(np_addr_format(&a, fit, sizeof fit), 16);
	assert_string_equal(fit, "unix:/tmp/socket");

	memset(&a, 0, sizeof a);
	a.kind = (enum np_addr_kind)99;
	assert_int_equal(np_addr_format(&a, out, sizeof out), -EINVAL);
	assert_string_equal(out, "");
}

/* A hand-built address (not from the parser) formats the same way. */
static void test_format_built(void **state)
{
	char out[NP_ADDR_STRMAX];
	np_addr a;

	(void)state;
	memset(&a, 0, sizeof a);
	a.kind = NP_ADDR_TCP;
	strcpy(a.host, "2001:db8::7");
	strcpy(a.port, "5640");
	assert_int_equal(np_addr_format(&a, out, sizeof out), 22);
	assert_string_equal(out, "tcp:[2001:db8::7]:5640");

	memset(&a, 0, sizeof a);
	a.kind = NP_ADDR_FD;
	a.rfd = 5;
	a.wfd = 6;
	np_addr_format(&a, out, sizeof out);
	assert_string_equal(out, "fd:5,6");

	memset(&a, 0, sizeof a);
	a.kind = NP_ADDR_VSOCK;
	a.cid = 42;
	a.vport = 564;
	np_addr_format(&a, out, sizeof out);
	assert_string_equal(out, "vsock:42:564");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parse_good),
		cmocka_unit_test(test_parse_bad),
		cmocka_unit_test(test_parse_unix_length),
		cmocka_unit_test(test_parse_host_length),
		cmocka_unit_test(test_parse_err_buffer),
		cmocka_unit_test(test_format_small_buffer),
		cmocka_unit_test(test_format_built),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}

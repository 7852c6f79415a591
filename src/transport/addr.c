/* Transport addresses: parsing "unix:/p", "tcp:h:p", ... into np_addr and
 * rendering them back.  Parsing is strict so that a typo is reported at
 * startup, naming the address, rather than surfacing later as an odd bind or
 * connect failure. */
#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include <linux/vm_sockets.h>

#include "ninep/transport.h"
#include "tr.h"

void np_tr_err(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;

	if (!err || errlen == 0)
		return;
	va_start(ap, fmt);
	vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
}

const char *np_tr_str(const np_addr *a, char *buf, size_t n)
{
	if (np_addr_format(a, buf, n) < 0 && n > 0)
		snprintf(buf, n, "(bad address)");
	return buf;
}

/* Report a parse error naming the whole address. */
__attribute__((format(printf, 4, 5)))
static int bad(const char *s, char *err, size_t errlen, const char *fmt, ...)
{
	char why[160];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(why, sizeof why, fmt, ap);
	va_end(ap);
	np_tr_err(err, errlen, "bad address '%s': %s", s, why);
	return -EINVAL;
}

/* Strict unsigned decimal: digits only (no sign, space or junk), <= max.
 * Returns 0, -1 when not a number, -2 when out of range. */
static int parse_uint(const char *p, size_t len, unsigned long long max,
		      unsigned long long *out)
{
	unsigned long long v = 0;

	if (len == 0)
		return -1;
	for (size_t i = 0; i < len; i++) {
		if (p[i] < '0' || p[i] > '9')
			return -1;
		if (v > (max - (unsigned)(p[i] - '0')) / 10)
			return -2;
		v = v * 10 + (unsigned)(p[i] - '0');
	}
	*out = v;
	return 0;
}

static int parse_unix(const char *s, const char *rest, np_addr *a, char *err,
		      size_t errlen)
{
	const size_t max = sizeof a->path - 1; /* sun_path is 108 bytes */
	size_t len;

	a->kind = NP_ADDR_UNIX;
	if (rest[0] == '@') {
		a->abstract = 1;
		rest++;
		len = strlen(rest);
		if (len == 0)
			return bad(s, err, errlen, "empty abstract socket name");
		if (len > max)
			return bad(s, err, errlen, "abstract name longer than %zu bytes", max);
	} else {
		len = strlen(rest);
		if (len == 0)
			return bad(s, err, errlen, "empty socket path");
		if (len > max)
			return bad(s, err, errlen, "socket path longer than %zu bytes", max);
	}
	memcpy(a->path, rest, len + 1);
	return 0;
}

static int is_host_char(char c)
{
	return isalnum((unsigned char)c) || c == '-' || c == '.' || c == '_';
}

/* An IPv6 literal, optionally with a %zone (fe80::1%eth0). */
static int is_ipv6_literal(const char *h)
{
	char tmp[INET6_ADDRSTRLEN];
	unsigned char bin[16];
	const char *zone = strchr(h, '%');
	size_t len = zone ? (size_t)(zone - h) : strlen(h);

	if (len >= sizeof tmp)
		return 0;
	memcpy(tmp, h, len);
	tmp[len] = '\0';
	if (inet_pton(AF_INET6, tmp, bin) != 1)
		return 0;
	if (zone) {
		if (zone[1] == '\0')
			return 0;
		for (const char *z = zone + 1; *z; z++)
			if (!is_host_char(*z))
				return 0;
	}
	return 1;
}

static int parse_port(const char *s, const char *port, np_addr *a, char *err,
		      size_t errlen)
{
	size_t len = strlen(port);
	unsigned long long v = 0;

	if (len == 0)
		return bad(s, err, errlen, "missing port");
	if (isdigit((unsigned char)port[0])) {
		int rc = parse_uint(port, len, ULLONG_MAX, &v);

		if (rc == -1)
			return bad(s, err, errlen, "bad port '%s'", port);
		if (rc == -2 || v > 65535)
			return bad(s, err, errlen, "port '%s' out of range (0-65535)", port);
		snprintf(a->port, sizeof a->port, "%llu", v);
		return 0;
	}
	/* A service name from /etc/services, resolved by getaddrinfo.  A
	 * leading digit always means a number, so junk after one ("564x")
	 * is an error rather than an unknown service. */
	if (!isalpha((unsigned char)port[0]))
		return bad(s, err, errlen, "bad port '%s'", port);
	for (size_t i = 0; i < len; i++)
		if (!isalnum((unsigned char)port[i]) && port[i] != '-' && port[i] != '_')
			return bad(s, err, errlen, "bad port '%s'", port);
	if (len >= sizeof a->port)
		return bad(s, err, errlen, "service name '%s' too long", port);
	memcpy(a->port, port, len + 1);
	return 0;
}

static int parse_tcp(const char *s, const char *rest, np_addr *a, char *err,
		     size_t errlen)
{
	const char *host, *port;
	size_t hlen;

	a->kind = NP_ADDR_TCP;
	if (rest[0] == '[') {
		const char *close = strchr(rest, ']');

		if (!close)
			return bad(s, err, errlen, "missing ']'");
		host = rest + 1;
		hlen = (size_t)(close - host);
		if (close[1] == '\0')
			return bad(s, err, errlen, "missing port");
		if (close[1] != ':')
			return bad(s, err, errlen, "expected ':' after ']'");
		port = close + 2;
		if (hlen == 0)
			return bad(s, err, errlen, "missing host");
		if (hlen >= sizeof a->host)
			return bad(s, err, errlen, "host longer than %zu bytes", sizeof a->host - 1);
		memcpy(a->host, host, hlen);
		a->host[hlen] = '\0';
		if (!is_ipv6_literal(a->host))
			return bad(s, err, errlen, "'%s' is not an IPv6 address", a->host);
	} else {
		const char *colon = strchr(rest, ':');

		if (!colon)
			return bad(s, err, errlen, "missing port");
		if (strchr(colon + 1, ':'))
			return bad(s, err, errlen, "IPv6 literals need brackets, as in tcp:[::1]:564");
		host = rest;
		hlen = (size_t)(colon - host);
		port = colon + 1;
		if (hlen == 0)
			return bad(s, err, errlen, "missing host");
		if (hlen >= sizeof a->host)
			return bad(s, err, errlen, "host longer than %zu bytes", sizeof a->host - 1);
		for (size_t i = 0; i < hlen; i++)
			if (!is_host_char(host[i]))
				return bad(s, err, errlen, "bad character '%c' in host", host[i]);
		memcpy(a->host, host, hlen);
		a->host[hlen] = '\0';
	}
	return parse_port(s, port, a, err, errlen);
}

static int parse_vsock(const char *s, const char *rest, np_addr *a, char *err,
		       size_t errlen)
{
	const char *colon = strchr(rest, ':');
	unsigned long long v = 0;
	size_t clen;
	int rc;

	a->kind = NP_ADDR_VSOCK;
	if (!colon)
		return bad(s, err, errlen, "missing port");
	clen = (size_t)(colon - rest);
	if (clen == 3 && !strncmp(rest, "any", 3)) {
		a->cid = VMADDR_CID_ANY;
	} else if (clen == 4 && !strncmp(rest, "host", 4)) {
		a->cid = VMADDR_CID_HOST;
	} else if (clen == 5 && !strncmp(rest, "local", 5)) {
		a->cid = VMADDR_CID_LOCAL;
	} else {
		rc = parse_uint(rest, clen, UINT32_MAX, &v);
		if (rc == -2)
			return bad(s, err, errlen, "CID '%.*s' out of range", (int)clen, rest);
		if (rc < 0)
			return bad(s, err, errlen, "bad CID '%.*s' (want a number, any, host or local)",
				   (int)clen, rest);
		a->cid = (uint32_t)v;
	}
	if (colon[1] == '\0')
		return bad(s, err, errlen, "missing port");
	rc = parse_uint(colon + 1, strlen(colon + 1), UINT32_MAX, &v);
	if (rc == -2)
		return bad(s, err, errlen, "port '%s' out of range", colon + 1);
	if (rc < 0)
		return bad(s, err, errlen, "bad port '%s'", colon + 1);
	a->vport = (uint32_t)v;
	return 0;
}

static int parse_one_fd(const char *s, const char *p, size_t len, int *fd,
			char *err, size_t errlen)
{
	unsigned long long v = 0;
	int rc;

	if (len > 0 && p[0] == '-')
		return bad(s, err, errlen, "negative descriptor '%.*s'", (int)len, p);
	rc = parse_uint(p, len, INT_MAX, &v);
	if (rc == -2)
		return bad(s, err, errlen, "descriptor '%.*s' out of range", (int)len, p);
	if (rc < 0)
		return bad(s, err, errlen, "bad descriptor '%.*s'", (int)len, p);
	*fd = (int)v;
	return 0;
}

static int parse_fd(const char *s, const char *rest, np_addr *a, char *err,
		    size_t errlen)
{
	const char *comma = strchr(rest, ',');
	int rc;

	a->kind = NP_ADDR_FD;
	if (!comma)
		return bad(s, err, errlen, "want fd:RFD,WFD");
	rc = parse_one_fd(s, rest, (size_t)(comma - rest), &a->rfd, err, errlen);
	if (rc == 0)
		rc = parse_one_fd(s, comma + 1, strlen(comma + 1), &a->wfd, err, errlen);
	return rc;
}

int np_addr_parse(const char *s, np_addr *a, char *err, size_t errlen)
{
	const char *colon;
	size_t slen;
	int rc;

	if (!a)
		return -EINVAL;
	memset(a, 0, sizeof *a);
	a->rfd = a->wfd = -1;
	if (!s) {
		np_tr_err(err, errlen, "bad address: none given");
		return -EINVAL;
	}
	if (!strcmp(s, "stdio")) {
		a->kind = NP_ADDR_STDIO;
		a->rfd = 0;
		a->wfd = 1;
		return 0;
	}
	colon = strchr(s, ':');
	if (!colon)
		return bad(s, err, errlen, "want unix:PATH, tcp:HOST:PORT, vsock:CID:PORT, fd:RFD,WFD or stdio");
	slen = (size_t)(colon - s);
	if (slen == 4 && !strncmp(s, "unix", 4))
		rc = parse_unix(s, colon + 1, a, err, errlen);
	else if (slen == 3 && !strncmp(s, "tcp", 3))
		rc = parse_tcp(s, colon + 1, a, err, errlen);
	else if (slen == 5 && !strncmp(s, "vsock", 5))
		rc = parse_vsock(s, colon + 1, a, err, errlen);
	else if (slen == 2 && !strncmp(s, "fd", 2))
		rc = parse_fd(s, colon + 1, a, err, errlen);
	else if (slen == 5 && !strncmp(s, "stdio", 5))
		rc = bad(s, err, errlen, "stdio takes no arguments");
	else
		rc = bad(s, err, errlen, "unknown transport '%.*s' (want unix, tcp, vsock, fd or stdio)",
			 (int)slen, s);
	if (rc < 0) {
		/* Leave no half-parsed address behind. */
		memset(a, 0, sizeof *a);
		a->rfd = a->wfd = -1;
	}
	return rc;
}

static void cid_str(uint32_t cid, char *buf, size_t n)
{
	if (cid == VMADDR_CID_ANY)
		snprintf(buf, n, "any");
	else if (cid == VMADDR_CID_HOST)
		snprintf(buf, n, "host");
	else if (cid == VMADDR_CID_LOCAL)
		snprintf(buf, n, "local");
	else
		snprintf(buf, n, "%u", cid);
}

/* Returns the length written (like snprintf), -ENOSPC when out was too
 * small (the text is truncated but terminated), -EINVAL for a bad kind. */
int np_addr_format(const np_addr *a, char *out, size_t n)
{
	char cid[16];
	int len;

	if (!a || !out)
		return -EINVAL;
	switch (a->kind) {
	case NP_ADDR_UNIX:
		len = snprintf(out, n, "unix:%s%.*s", a->abstract ? "@" : "",
			       (int)sizeof a->path, a->path);
		break;
	case NP_ADDR_TCP:
		if (memchr(a->host, ':', strnlen(a->host, sizeof a->host)))
			len = snprintf(out, n, "tcp:[%.*s]:%.*s", (int)sizeof a->host, a->host,
				       (int)sizeof a->port, a->port);
		else
			len = snprintf(out, n, "tcp:%.*s:%.*s", (int)sizeof a->host, a->host,
				       (int)sizeof a->port, a->port);
		break;
	case NP_ADDR_VSOCK:
		cid_str(a->cid, cid, sizeof cid);
		len = snprintf(out, n, "vsock:%s:%u", cid, a->vport);
		break;
	case NP_ADDR_FD:
		len = snprintf(out, n, "fd:%d,%d", a->rfd, a->wfd);
		break;
	case NP_ADDR_STDIO:
		len = snprintf(out, n, "stdio");
		break;
	default:
		if (n > 0)
			out[0] = '\0';
		return -EINVAL;
	}
	if (len < 0)
		return -EINVAL;
	if ((size_t)len >= n)
		return -ENOSPC;
	return len;
}

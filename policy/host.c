/*
 * host.c - URLs and hosts as a browser reads them, for the egress checks.
 *
 * A URL here is hostile input: it is parsed the way the WHATWG URL
 * standard (and so Chromium) parses it, so that the host we check is the
 * host the browser connects to: tabs and newlines anywhere are dropped,
 * any run of '/' and '\' after "http:" is skipped, the authority ends at
 * '/', '\', '?' or '#', userinfo ends at the last '@', the host is
 * percent-decoded, mapped through IDNA (UTS #46, when libidn2 is built
 * in; otherwise non-ASCII hosts are refused), lowercased, and a host that
 * ends in a number is an IPv4 address in any of its encodings.
 * Pure functions; thread-safe.
 */
#include "policy/policy-private.h"

#include <arpa/inet.h>
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifdef GB_HAVE_IDN2
#include <idn2.h>
#endif

#define AUTHORITY_MAX 2048

/* The class of a scheme name (lowercase): http and ws are HTTP, https and
 * wss are HTTPS, anything else NONE. */
int policy_scheme_class(const char *scheme)
{
	int c = POLICY_SCHEME_NONE;

	if (!strcmp(scheme, "http") || !strcmp(scheme, "ws"))
		c = POLICY_SCHEME_HTTP;
	else if (!strcmp(scheme, "https") || !strcmp(scheme, "wss"))
		c = POLICY_SCHEME_HTTPS;
	return c;
}

/* 80 for HTTP, 443 for HTTPS, 0 otherwise. */
int policy_scheme_default_port(int scheme_class)
{
	return scheme_class == POLICY_SCHEME_HTTP    ? 80
	       : scheme_class == POLICY_SCHEME_HTTPS ? 443
	                                             : 0;
}

/* 1 for the characters a browser refuses in a domain (WHATWG forbidden
 * domain code points, ASCII part). */
static int forbidden_in_domain(unsigned char c)
{
	return c <= 0x20 || c == 0x7f || strchr("#%/:<>?@[\\]^|", c) != NULL;
}

/* Percent-decodes in[0..len) into out (outlen bytes, NUL-terminated).
 * Invalid escapes stay as they are (and the '%' then makes the host
 * invalid). Returns the decoded length, or -1 when it does not fit. */
static long percent_decode(const char *in, size_t len, char *out, size_t outlen)
{
	size_t i = 0;
	size_t n = 0;

	while (i < len && n + 1 < outlen) {
		unsigned char c = (unsigned char)in[i];

		if (c == '%' && i + 2 < len && isxdigit((unsigned char)in[i + 1]) &&
		    isxdigit((unsigned char)in[i + 2])) {
			char hex[3] = { in[i + 1], in[i + 2], '\0' };

			out[n++] = (char)strtol(hex, NULL, 16);
			i += 3;
		} else {
			out[n++] = (char)c;
			i++;
		}
	}
	if (outlen)
		out[n] = '\0';
	return i < len ? -1 : (long)n;
}

/* Maps a non-ASCII host (UTF-8, NUL-terminated in buf) to its ASCII form
 * in place. Returns 0, or -1 with why. */
static int host_to_ascii(char *buf, size_t buflen, char *why, size_t whylen)
{
	int rc = -1;
#ifdef GB_HAVE_IDN2
	char *ascii = NULL;

	if (idn2_to_ascii_8z(buf, &ascii, IDN2_NFC_INPUT | IDN2_NONTRANSITIONAL) != IDN2_OK ||
	    !ascii) {
		snprintf(why, whylen, "it is not a valid internationalised domain name");
		goto out;
	}
	if (strlen(ascii) >= buflen) {
		snprintf(why, whylen, "the host is too long");
		goto out;
	}
	memcpy(buf, ascii, strlen(ascii) + 1);
	rc = 0;
out:
	if (ascii)
		idn2_free(ascii);
#else
	(void)buf;
	(void)buflen;
	snprintf(why, whylen,
	         "non-ASCII host names are not supported here: give the punycode "
	         "form (xn--...)");
#endif
	return rc;
}

/* Checks that name is a DNS name we accept: labels of 1..63 of
 * [a-z0-9-_], 253 bytes at most. */
static int valid_name(const char *name, char *why, size_t whylen)
{
	size_t len = strlen(name);
	size_t label = 0;
	size_t i;
	int rc = -1;

	if (len == 0 || len > 253) {
		snprintf(why, whylen, len ? "the host is too long" : "the host is empty");
		goto out;
	}
	for (i = 0; i <= len; i++) {
		unsigned char c = (unsigned char)name[i];

		if (c == '.' || c == '\0') {
			if (label == 0 || label > 63) {
				snprintf(why, whylen, "the host has an empty or overlong label");
				goto out;
			}
			label = 0;
		} else if (isalnum(c) || c == '-' || c == '_') {
			label++;
		} else {
			snprintf(why, whylen,
			         "the host contains a character that no host name has");
			goto out;
		}
	}
	rc = 0;
out:
	return rc;
}

/* Parses an IPv6 literal in[0..len) without its brackets. */
static int parse_v6(const char *in, size_t len, struct policy_ip *ip)
{
	char buf[INET6_ADDRSTRLEN + 1];
	int rc = -1;

	if (len == 0 || len >= sizeof(buf) || strspn(in, "0123456789abcdefABCDEF:.") < len)
		goto out;
	memcpy(buf, in, len);
	buf[len] = '\0';
	if (inet_pton(AF_INET6, buf, ip->b) == 1)
		rc = 0;
out:
	return rc;
}

/*
 * Normalises the host in[0..len) (as it appears in a URL, brackets
 * included for IPv6) into out: an address as canonical text ("10.0.0.1",
 * "fe80::1") with *is_ip and *ip set, or a lowercase ASCII name without
 * a trailing dot. Returns 0, or -1 with why ("the host ends in a number
 * but is not an IPv4 address").
 */
int policy_host_normalize(const char *in, size_t len, char *out, size_t outlen, int *is_ip,
                          struct policy_ip *ip, char *why, size_t whylen)
{
	char buf[4 * POLICY_HOST_MAX];
	long decoded;
	size_t i;
	size_t n;
	int v4;
	int rc = -1;

	*is_ip = 0;
	memset(ip, 0, sizeof(*ip));
	if (len && in[0] == '[') {
		if (len < 3 || in[len - 1] != ']' || parse_v6(in + 1, len - 2, ip) < 0) {
			snprintf(why, whylen, "the host is not a valid IPv6 address");
			goto out;
		}
		*is_ip = 1;
		policy_ip_format(ip, out, outlen);
		rc = 0;
		goto out;
	}
	decoded = len < sizeof(buf) ? percent_decode(in, len, buf, sizeof(buf)) : -1;
	if (decoded < 0) {
		snprintf(why, whylen, "the host is too long");
		goto out;
	}
	if (strlen(buf) != (size_t)decoded) {
		snprintf(why, whylen, "the host contains a NUL byte");
		goto out;
	}
	for (i = 0; buf[i]; i++)
		if ((unsigned char)buf[i] >= 0x80)
			break;
	if (buf[i] && host_to_ascii(buf, sizeof(buf), why, whylen) < 0)
		goto out;
	for (i = 0; buf[i]; i++) {
		unsigned char c = (unsigned char)buf[i];

		if (c >= 0x80 || forbidden_in_domain(c)) {
			snprintf(why, whylen,
			         "the host contains a character that no host name has");
			goto out;
		}
		buf[i] = (char)tolower(c);
	}
	v4 = policy_ipv4_host(buf, ip);
	if (v4 < 0) {
		snprintf(why, whylen, "the host ends in a number but is not a valid IPv4 address");
		goto out;
	}
	if (v4 == 1) {
		*is_ip = 1;
		policy_ip_format(ip, out, outlen);
		rc = 0;
		goto out;
	}
	n = strlen(buf);
	if (n > 1 && buf[n - 1] == '.')
		buf[--n] = '\0';
	if (valid_name(buf, why, whylen) < 0)
		goto out;
	if (n >= outlen) {
		snprintf(why, whylen, "the host is too long");
		goto out;
	}
	memcpy(out, buf, n + 1);
	rc = 0;
out:
	return rc;
}

/* Parses a port of s[0..len): digits only, 1..65535. Returns the port,
 * or -1. */
int policy_parse_port(const char *s, size_t len)
{
	long v = len == 0 || len > 15 ? 65536 : 0; /* leading zeros are allowed, within reason */
	size_t i;

	for (i = 0; i < len && v <= 65535; i++)
		v = isdigit((unsigned char)s[i]) ? v * 10 + (s[i] - '0') : 65536;
	return v > 0 && v <= 65535 ? (int)v : -1;
}

/*
 * Splits an authority "host[:port]" (no userinfo) of text[0..len) and
 * normalises the host into host. *port is the port given, or 0 when
 * there is none. Returns 0, or -1 with why.
 */
int policy_parse_authority(const char *text, size_t len, char *host, size_t hostlen, int *port,
                           int *is_ip, struct policy_ip *ip, char *why, size_t whylen)
{
	size_t hlen = len;
	const char *colon = NULL;
	int rc = -1;

	*port = 0;
	if (len && text[0] == '[') {
		const char *close = memchr(text, ']', len);

		if (!close) {
			snprintf(why, whylen, "the IPv6 address has no closing ']'");
			goto out;
		}
		hlen = (size_t)(close - text) + 1;
		if (hlen < len) {
			if (text[hlen] != ':') {
				snprintf(why, whylen,
				         "unexpected characters after the IPv6 address");
				goto out;
			}
			colon = text + hlen;
		}
	} else {
		colon = memchr(text, ':', len);
		if (colon)
			hlen = (size_t)(colon - text);
	}
	if (colon && colon + 1 < text + len) {
		*port = policy_parse_port(colon + 1, (size_t)(text + len - colon - 1));
		if (*port < 0) {
			snprintf(why, whylen, "the port is not a number from 1 to 65535");
			goto out;
		}
	}
	if (hlen == 0) {
		snprintf(why, whylen, "the URL has no host");
		goto out;
	}
	rc = policy_host_normalize(text, hlen, host, hostlen, is_ip, ip, why, whylen);
out:
	return rc;
}

/* 1 for the characters a browser drops anywhere in a URL. */
static int dropped(char c)
{
	return c == '\t' || c == '\n' || c == '\r';
}

/*
 * Parses url into out. The scheme is always filled in when there is
 * one; for schemes other than http, https, ws and wss nothing else is
 * (scheme_class NONE, host ""), and 0 is returned: the caller refuses
 * the scheme. Returns -1 with why when url is no absolute URL or its
 * authority is invalid.
 */
int policy_url_parse(const char *url, struct policy_url *out, char *why, size_t whylen)
{
	char auth[AUTHORITY_MAX];
	size_t alen = 0;
	size_t n = 0;
	const char *p;
	size_t at_off = 0;
	size_t i;
	int port = 0;
	int rc = -1;

	memset(out, 0, sizeof(*out));
	if (!url || strlen(url) > POLICY_URL_MAX) {
		snprintf(why, whylen, url ? "the URL is too long" : "no URL");
		goto out;
	}
	p = url;
	while (*p && (unsigned char)*p <= ' ')
		p++;
	/* scheme */
	for (; *p && *p != ':'; p++) {
		unsigned char c = (unsigned char)*p;

		if (dropped(*p))
			continue;
		if (!(isalnum(c) || c == '+' || c == '-' || c == '.') ||
		    n + 1 >= sizeof(out->scheme) || (n == 0 && !isalpha(c))) {
			snprintf(why, whylen, "it is not an absolute URL");
			goto out;
		}
		out->scheme[n++] = (char)tolower(c);
	}
	out->scheme[n] = '\0';
	if (*p != ':' || n == 0) {
		snprintf(why, whylen, "it is not an absolute URL");
		goto out;
	}
	p++;
	out->scheme_class = policy_scheme_class(out->scheme);
	if (out->scheme_class == POLICY_SCHEME_NONE) {
		rc = 0;
		goto out;
	}
	while (*p == '/' || *p == '\\' || dropped(*p))
		p++;
	/* authority: up to '/', '\', '?', '#' */
	for (; *p && !strchr("/\\?#", *p); p++) {
		if (dropped(*p))
			continue;
		if (alen + 1 >= sizeof(auth)) {
			snprintf(why, whylen, "the URL's host part is too long");
			goto out;
		}
		if (*p == '@')
			at_off = alen + 1;
		auth[alen++] = *p;
	}
	auth[alen] = '\0';
	out->path = p;
	for (i = at_off; i < alen; i++)
		if ((unsigned char)auth[i] <= ' ' && auth[i] != '\0')
			break;
	if (i < alen) {
		snprintf(why, whylen, "the host contains a space or control character");
		goto out;
	}
	if (policy_parse_authority(auth + at_off, alen - at_off, out->host, sizeof(out->host),
	                           &port, &out->is_ip, &out->ip, why, whylen) < 0)
		goto out;
	out->port = port ? port : policy_scheme_default_port(out->scheme_class);
	rc = 0;
out:
	return rc;
}

/*
 * addr.c - IP addresses for the egress policy: parsing (strict literals
 * for config, the WHATWG IPv4 forms a URL may use: 2852039166,
 * 0xa9fea9fe, 0251.0376.0251.0376, 169.254.43518), the ranges that are
 * refused always or unless named, and CIDR ranges.
 *
 * Every address is kept as 16 bytes, IPv4 as IPv4-mapped IPv6, so that
 * ::ffff:169.254.169.254 and 169.254.169.254 are one and the same thing.
 * Addresses that carry an IPv4 address (IPv4-compatible, NAT64, 6to4) are
 * classified by the address they carry. Pure functions; thread-safe.
 */
#include "policy/policy-private.h"

#include <arpa/inet.h>
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const unsigned char v4_mapped_prefix[12] = { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff };

/* Sets ip to the IPv4-mapped form of a (host byte order). */
static void ip_from_v4(uint32_t a, struct policy_ip *ip)
{
	memcpy(ip->b, v4_mapped_prefix, 12);
	ip->b[12] = (unsigned char)(a >> 24);
	ip->b[13] = (unsigned char)(a >> 16);
	ip->b[14] = (unsigned char)(a >> 8);
	ip->b[15] = (unsigned char)a;
}

/* The four bytes at b as a host-order IPv4 address. */
static uint32_t v4_at(const unsigned char *b)
{
	return (uint32_t)b[0] << 24 | (uint32_t)b[1] << 16 | (uint32_t)b[2] << 8 | (uint32_t)b[3];
}

/* 1 when ip is an IPv4 address (stored IPv4-mapped). */
int policy_ip_is_v4(const struct policy_ip *ip)
{
	return memcmp(ip->b, v4_mapped_prefix, 12) == 0;
}

/* Reads an AF_INET or AF_INET6 sockaddr (borrowed) into out. Returns 0,
 * or -POLICY_EINVAL for any other family. */
int policy_ip_from_sockaddr(const struct sockaddr *sa, struct policy_ip *out)
{
	int rc = -POLICY_EINVAL;

	if (!sa)
		goto out;
	if (sa->sa_family == AF_INET) {
		const struct sockaddr_in *in = (const struct sockaddr_in *)(const void *)sa;

		ip_from_v4(ntohl(in->sin_addr.s_addr), out);
		rc = 0;
	} else if (sa->sa_family == AF_INET6) {
		const struct sockaddr_in6 *in6 = (const struct sockaddr_in6 *)(const void *)sa;

		memcpy(out->b, in6->sin6_addr.s6_addr, 16);
		rc = 0;
	}
out:
	return rc;
}

/* Builds the sockaddr to connect to ip:port into ss: AF_INET for IPv4,
 * AF_INET6 otherwise. */
void policy_ip_to_sockaddr(const struct policy_ip *ip, int port, struct sockaddr_storage *ss,
                           socklen_t *len)
{
	memset(ss, 0, sizeof(*ss));
	if (policy_ip_is_v4(ip)) {
		struct sockaddr_in *in = (struct sockaddr_in *)(void *)ss;

		in->sin_family = AF_INET;
		in->sin_port = htons((uint16_t)port);
		in->sin_addr.s_addr = htonl(v4_at(ip->b + 12));
		*len = sizeof(*in);
	} else {
		struct sockaddr_in6 *in6 = (struct sockaddr_in6 *)(void *)ss;

		in6->sin6_family = AF_INET6;
		in6->sin6_port = htons((uint16_t)port);
		memcpy(in6->sin6_addr.s6_addr, ip->b, 16);
		*len = sizeof(*in6);
	}
}

/* Writes ip as text ("10.0.0.1", "fe80::1") into buf. */
void policy_ip_format(const struct policy_ip *ip, char *buf, size_t buflen)
{
	char tmp[INET6_ADDRSTRLEN];

	if (policy_ip_is_v4(ip))
		inet_ntop(AF_INET, ip->b + 12, tmp, sizeof(tmp));
	else
		inet_ntop(AF_INET6, ip->b, tmp, sizeof(tmp));
	snprintf(buf, buflen, "%s", tmp);
}

/* ---- classes --------------------------------------------------------------- */

struct v4_range {
	uint32_t net;
	int prefix;
	enum policy_addr_class cls;
};

/* Most specific first: the first match wins. */
static const struct v4_range v4_ranges[] = {
	{ 0xA9FEA9FEu, 32, POLICY_ADDR_METADATA },   /* 169.254.169.254: AWS, GCP, Azure, ... */
	{ 0xA9FEAA02u, 32, POLICY_ADDR_METADATA },   /* 169.254.170.2: ECS task metadata */
	{ 0x646464C8u, 32, POLICY_ADDR_METADATA },   /* 100.100.100.200: Alibaba Cloud */
	{ 0x00000000u, 8, POLICY_ADDR_UNSPECIFIED }, /* 0/8: "this network"; 0.0.0.0 is local */
	{ 0x7F000000u, 8, POLICY_ADDR_LOOPBACK },    /* 127/8 */
	{ 0xA9FE0000u, 16, POLICY_ADDR_LINK_LOCAL }, /* 169.254/16 */
	{ 0x0A000000u, 8, POLICY_ADDR_PRIVATE },     /* 10/8 */
	{ 0xAC100000u, 12, POLICY_ADDR_PRIVATE },    /* 172.16/12 */
	{ 0xC0A80000u, 16, POLICY_ADDR_PRIVATE },    /* 192.168/16 */
	{ 0x64400000u, 10, POLICY_ADDR_PRIVATE },    /* 100.64/10: shared (carrier-grade NAT) */
	{ 0xC0000000u, 24, POLICY_ADDR_SPECIAL },    /* 192.0.0/24: protocol assignments */
	{ 0xC0000200u, 24, POLICY_ADDR_SPECIAL },    /* 192.0.2/24: documentation */
	{ 0xC0586300u, 24, POLICY_ADDR_SPECIAL },    /* 192.88.99/24: 6to4 relays */
	{ 0xC6120000u, 15, POLICY_ADDR_SPECIAL },    /* 198.18/15: benchmarking */
	{ 0xC6336400u, 24, POLICY_ADDR_SPECIAL },    /* 198.51.100/24: documentation */
	{ 0xCB007100u, 24, POLICY_ADDR_SPECIAL },    /* 203.0.113/24: documentation */
	{ 0xE0000000u, 4, POLICY_ADDR_MULTICAST },   /* 224/4 */
	{ 0xF0000000u, 4, POLICY_ADDR_RESERVED },    /* 240/4, 255.255.255.255 */
};

/* The class of a host-order IPv4 address. */
static enum policy_addr_class v4_class(uint32_t a)
{
	enum policy_addr_class c = POLICY_ADDR_PUBLIC;
	size_t i;

	for (i = 0; i < sizeof(v4_ranges) / sizeof(v4_ranges[0]); i++) {
		uint32_t mask = v4_ranges[i].prefix ? ~0u << (32 - v4_ranges[i].prefix) : 0;

		if ((a & mask) == v4_ranges[i].net) {
			c = v4_ranges[i].cls;
			break;
		}
	}
	return c;
}

/* 1 when the first `bits` bits of a and b agree. */
static int prefix_equal(const unsigned char *a, const unsigned char *b, int bits)
{
	int full = bits / 8;
	int rest = bits % 8;
	unsigned char mask = (unsigned char)(0xff << (8 - rest));

	return memcmp(a, b, (size_t)full) == 0 && (!rest || (a[full] & mask) == (b[full] & mask));
}

struct v6_range {
	unsigned char net[16];
	int prefix;
	enum policy_addr_class cls;
};

/* Most specific first; ranges carrying IPv4 are handled in code. */
static const struct v6_range v6_ranges[] = {
	{ { 0xfd, 0x00, 0x0e, 0xc2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x02, 0x54 },
	  128,
	  POLICY_ADDR_METADATA },                                /* fd00:ec2::254: AWS */
	{ { 0xfe, 0x80 }, 10, POLICY_ADDR_LINK_LOCAL },          /* fe80::/10 */
	{ { 0xfe, 0xc0 }, 10, POLICY_ADDR_PRIVATE },             /* fec0::/10: site-local */
	{ { 0xfc, 0x00 }, 7, POLICY_ADDR_PRIVATE },              /* fc00::/7: unique local */
	{ { 0xff, 0x00 }, 8, POLICY_ADDR_MULTICAST },            /* ff00::/8 */
	{ { 0x20, 0x01, 0x0d, 0xb8 }, 32, POLICY_ADDR_SPECIAL }, /* 2001:db8::/32: docs */
	{ { 0x20, 0x01, 0x00, 0x00 }, 32, POLICY_ADDR_SPECIAL }, /* 2001::/32: Teredo */
	{ { 0x20, 0x01, 0x00, 0x02, 0, 0 },
	  48,
	  POLICY_ADDR_SPECIAL },                                 /* 2001:2::/48: benchmarking */
	{ { 0x20, 0x01, 0x00, 0x10 }, 28, POLICY_ADDR_SPECIAL }, /* 2001:10::/28: ORCHID */
	{ { 0x20, 0x01, 0x00, 0x20 }, 28, POLICY_ADDR_SPECIAL }, /* 2001:20::/28: ORCHIDv2 */
	{ { 0x01, 0x00, 0, 0, 0, 0, 0, 0 }, 64, POLICY_ADDR_SPECIAL }, /* 100::/64: discard */
};

/* The class of ip, following embedded IPv4 addresses (mapped,
 * compatible, NAT64, 6to4). Anything outside 2000::/3 that no rule names
 * is reserved. */
enum policy_addr_class policy_ip_class(const struct policy_ip *ip)
{
	static const unsigned char zero[16];
	static const unsigned char nat64[12] = { 0x00, 0x64, 0xff, 0x9b };
	static const unsigned char nat64_local[6] = { 0x00, 0x64, 0xff, 0x9b, 0x00, 0x01 };
	enum policy_addr_class c = POLICY_ADDR_PUBLIC;
	size_t i;

	if (policy_ip_is_v4(ip) || memcmp(ip->b, nat64, 12) == 0) {
		c = v4_class(v4_at(ip->b + 12));
	} else if (memcmp(ip->b, zero, 16) == 0) {
		c = POLICY_ADDR_UNSPECIFIED;
	} else if (memcmp(ip->b, zero, 15) == 0 && ip->b[15] == 1) {
		c = POLICY_ADDR_LOOPBACK;
	} else if (memcmp(ip->b, zero, 12) == 0) { /* ::a.b.c.d, deprecated, never routed */
		c = v4_class(v4_at(ip->b + 12));
		if (c == POLICY_ADDR_PUBLIC)
			c = POLICY_ADDR_RESERVED;
	} else if (memcmp(ip->b, nat64_local, 6) == 0) {
		c = v4_class(v4_at(ip->b + 12));
		if (c == POLICY_ADDR_PUBLIC)
			c = POLICY_ADDR_SPECIAL;
	} else if (ip->b[0] == 0x20 && ip->b[1] == 0x02) { /* 2002::/16 6to4 */
		c = v4_class(v4_at(ip->b + 2));
	} else {
		for (i = 0; i < sizeof(v6_ranges) / sizeof(v6_ranges[0]); i++)
			if (prefix_equal(ip->b, v6_ranges[i].net, v6_ranges[i].prefix))
				break;
		if (i < sizeof(v6_ranges) / sizeof(v6_ranges[0]))
			c = v6_ranges[i].cls;
		else if ((ip->b[0] & 0xe0) != 0x20) /* not 2000::/3 global unicast */
			c = POLICY_ADDR_RESERVED;
	}
	return c;
}

/* 1 for the classes no policy can allow. */
int policy_class_always_refused(enum policy_addr_class c)
{
	return c >= POLICY_ADDR_LINK_LOCAL;
}

/* The rule name that refuses class c ("addr-link-local"). */
const char *policy_class_rule(enum policy_addr_class c)
{
	switch (c) {
	case POLICY_ADDR_PUBLIC:
		return "";
	case POLICY_ADDR_LOOPBACK:
		return "addr-loopback";
	case POLICY_ADDR_PRIVATE:
		return "addr-private";
	case POLICY_ADDR_SPECIAL:
		return "addr-special";
	case POLICY_ADDR_LINK_LOCAL:
		return "addr-link-local";
	case POLICY_ADDR_METADATA:
		return "addr-metadata";
	case POLICY_ADDR_UNSPECIFIED:
		return "addr-unspecified";
	case POLICY_ADDR_MULTICAST:
		return "addr-multicast";
	case POLICY_ADDR_RESERVED:
		return "addr-reserved";
	}
	return "addr-reserved";
}

/* Words for messages: "a link-local address". */
const char *policy_class_words(enum policy_addr_class c)
{
	switch (c) {
	case POLICY_ADDR_PUBLIC:
		return "a public address";
	case POLICY_ADDR_LOOPBACK:
		return "a loopback address";
	case POLICY_ADDR_PRIVATE:
		return "a private-network address";
	case POLICY_ADDR_SPECIAL:
		return "a special-purpose address";
	case POLICY_ADDR_LINK_LOCAL:
		return "a link-local address";
	case POLICY_ADDR_METADATA:
		return "a cloud metadata address";
	case POLICY_ADDR_UNSPECIFIED:
		return "an unspecified (0.0.0.0 or ::) address";
	case POLICY_ADDR_MULTICAST:
		return "a multicast address";
	case POLICY_ADDR_RESERVED:
		return "a reserved address";
	}
	return "a reserved address";
}

/* ---- parsing ----------------------------------------------------------------- */

/* Parses a strict address literal: dotted-quad IPv4 (no leading zeros)
 * or IPv6, with or without brackets, no zone. Returns 0 or -POLICY_EINVAL. */
int policy_ip_parse_literal(const char *text, struct policy_ip *out)
{
	char buf[INET6_ADDRSTRLEN + 2];
	unsigned char v4[4];
	size_t len = strlen(text);
	int rc = -POLICY_EINVAL;

	if (len >= sizeof(buf))
		goto out;
	if (len >= 2 && text[0] == '[' && text[len - 1] == ']') {
		memcpy(buf, text + 1, len - 2);
		buf[len - 2] = '\0';
		if (inet_pton(AF_INET6, buf, out->b) == 1)
			rc = 0;
		goto out;
	}
	if (inet_pton(AF_INET, text, v4) == 1) {
		ip_from_v4(v4_at(v4), out);
		rc = 0;
	} else if (inet_pton(AF_INET6, text, out->b) == 1) {
		rc = 0;
	}
out:
	return rc;
}

/* Parses one WHATWG IPv4 number (decimal, 0-prefixed octal, 0x hex; empty
 * after 0x is 0) of s[0..len). Returns 0 with *out, or -1. Values above
 * 2^32 fail. */
static int ipv4_number(const char *s, size_t len, uint64_t *out)
{
	unsigned radix = 10;
	uint64_t v = 0;
	size_t i;
	int rc = -1;

	if (len == 0)
		goto out;
	if (len >= 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
		radix = 16;
		s += 2;
		len -= 2;
	} else if (len >= 2 && s[0] == '0') {
		radix = 8;
		s++;
		len--;
	}
	for (i = 0; i < len; i++) {
		unsigned char c = (unsigned char)s[i];
		unsigned d = 99;

		if (isdigit(c))
			d = (unsigned)(c - '0');
		else if (isxdigit(c))
			d = (unsigned)(tolower(c) - 'a' + 10);
		if (d >= radix)
			goto out;
		v = v * radix + d;
		if (v > 0xFFFFFFFFull)
			goto out;
	}
	*out = v;
	rc = 0;
out:
	return rc;
}

/* 1 when the last label of host (a trailing dot ignored) is a number in
 * the WHATWG sense: all decimal digits, or 0x followed by hex digits. Such
 * a host must parse as IPv4 or is invalid. */
static int ends_in_number(const char *host)
{
	size_t len = strlen(host);
	size_t start;
	uint64_t v;

	if (len && host[len - 1] == '.')
		len--;
	start = len;
	while (start > 0 && host[start - 1] != '.')
		start--;
	return start < len && (strspn(host + start, "0123456789") >= len - start ||
	                       (len - start >= 2 && host[start] == '0' &&
	                        (host[start + 1] == 'x' || host[start + 1] == 'X') &&
	                        ipv4_number(host + start, len - start, &v) == 0));
}

/*
 * The WHATWG URL standard's IPv4 parser, as browsers apply it to hosts:
 * 1 to 4 dot-separated numbers, each decimal, octal or hex, the last one
 * filling the remaining bytes. Returns 1 with *out (host order) when host
 * is an IPv4 address, 0 when it is not a number at all (a name), -1 when
 * it ends in a number but is no valid address (refuse it).
 */
UNITTEST int policy_ipv4_parse_whatwg(const char *host, uint32_t *out)
{
	uint64_t parts[4];
	size_t n = 0;
	size_t len = strlen(host);
	const char *p = host;
	uint64_t v;
	size_t i;
	int rc = 0;

	if (!ends_in_number(host))
		goto out;
	rc = -1;
	if (len && host[len - 1] == '.')
		len--;
	while (p <= host + len) {
		const char *dot = memchr(p, '.', (size_t)(host + len - p));
		size_t plen = dot ? (size_t)(dot - p) : (size_t)(host + len - p);

		if (n == 4 || ipv4_number(p, plen, &parts[n]) < 0)
			goto out;
		n++;
		if (!dot)
			break;
		p = dot + 1;
	}
	for (i = 0; i + 1 < n; i++)
		if (parts[i] > 255)
			goto out;
	if (parts[n - 1] >= (1ull << (8 * (5 - n))))
		goto out;
	v = parts[n - 1];
	for (i = 0; i + 1 < n; i++)
		v += parts[i] << (8 * (3 - i));
	*out = (uint32_t)v;
	rc = 1;
out:
	return rc;
}

/* Called by host.c: the IPv4 interpretation of a host as a policy_ip.
 * Same returns as policy_ipv4_parse_whatwg. */
int policy_ipv4_host(const char *host, struct policy_ip *out)
{
	uint32_t a = 0;
	int rc = policy_ipv4_parse_whatwg(host, &a);

	if (rc == 1)
		ip_from_v4(a, out);
	return rc;
}

/* ---- ranges ------------------------------------------------------------------ */

/* 1 when ip lies in r. */
int policy_range_contains(const struct policy_range *r, const struct policy_ip *ip)
{
	return prefix_equal(r->ip.b, ip->b, r->prefix);
}

/* Parses "10.0.0.0/8", "fd12::/16", "127.0.0.1" or "::1" (a single address
 * is /32 or /128). Host bits must be zero. Returns 0 or -POLICY_EINVAL. */
int policy_range_parse(const char *text, struct policy_range *out)
{
	char addr[INET6_ADDRSTRLEN + 2];
	const char *slash = strchr(text, '/');
	size_t alen = slash ? (size_t)(slash - text) : strlen(text);
	long prefix;
	char *end = NULL;
	int v4;
	int rc = -POLICY_EINVAL;
	struct policy_ip masked;

	if (alen == 0 || alen >= sizeof(addr))
		goto out;
	memcpy(addr, text, alen);
	addr[alen] = '\0';
	if (policy_ip_parse_literal(addr, &out->ip) < 0)
		goto out;
	v4 = policy_ip_is_v4(&out->ip) && strchr(addr, ':') == NULL;
	if (!slash) {
		out->prefix = 128;
		rc = 0;
		goto out;
	}
	if (!isdigit((unsigned char)slash[1]) || strlen(slash + 1) > 3)
		goto out;
	prefix = strtol(slash + 1, &end, 10);
	if (*end || prefix > (v4 ? 32 : 128))
		goto out;
	out->prefix = (int)prefix + (v4 ? 96 : 0);
	masked = out->ip;
	{
		int bit;

		for (bit = out->prefix; bit < 128; bit++)
			masked.b[bit / 8] &= (unsigned char)~(0x80 >> (bit % 8));
	}
	if (memcmp(masked.b, out->ip.b, 16) != 0)
		goto out;
	rc = 0;
out:
	return rc;
}

/* The always-refused ranges, for config checks. Built once. */
static const char *const always_refused_text[] = {
	"0.0.0.0/8", "169.254.0.0/16", "100.100.100.200", "224.0.0.0/4", "240.0.0.0/4",
	"::/128",    "fe80::/10",      "fd00:ec2::254",   "ff00::/8",
};

/* 1 when r overlaps a range that is always refused; its text goes to
 * *what ("169.254.0.0/16"). */
int policy_range_overlaps_refused(const struct policy_range *r, const char **what)
{
	size_t i;
	int overlaps = 0;

	for (i = 0; !overlaps && i < sizeof(always_refused_text) / sizeof(always_refused_text[0]);
	     i++) {
		struct policy_range bad;
		int shorter;

		if (policy_range_parse(always_refused_text[i], &bad) < 0)
			continue;
		shorter = r->prefix < bad.prefix ? r->prefix : bad.prefix;
		overlaps = prefix_equal(r->ip.b, bad.ip.b, shorter);
		if (overlaps)
			*what = always_refused_text[i];
	}
	return overlaps;
}

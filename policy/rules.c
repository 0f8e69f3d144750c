/*
 * rules.c - the egress policy: config parsing, host patterns, per-session
 * narrowing, and the checks on URLs and addresses (policy/egress.h).
 *
 * A policy is a stack of layers (the tenant's, then each narrowing): a
 * request passes only if every layer lets it through, so a narrowing can
 * take away and never add. Within a layer, deny patterns are checked
 * first, then the allowlist, then the default. Addresses are checked
 * against the ranges of addr.c: the always-refused ones first, then the
 * loopback, private and special ones, which each layer must name.
 * Resolver overrides belong to the tenant's layer only.
 *
 * Messages for the agent name the host, the rule and, for a deny match,
 * that one pattern; never any other policy entry.
 */
#include "policy/policy-private.h"

#include "common/util.h"

#include <arpa/inet.h>
#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* Writes a formatted message into buf (if buf and buflen). */
static void set_msg(char *buf, size_t buflen, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void set_msg(char *buf, size_t buflen, const char *fmt, ...)
{
	va_list ap;

	if (!buf || !buflen)
		return;
	va_start(ap, fmt);
	vsnprintf(buf, buflen, fmt, ap);
	va_end(ap);
}

/* Copies at most max bytes of s into out (outlen bytes) with every byte
 * that is not printable ASCII, and '"', replaced by '?': hostile text made
 * safe to quote in a message or a log. */
static void printable(const char *s, size_t max, char *out, size_t outlen)
{
	size_t i;

	for (i = 0; s && s[i] && i < max && i + 1 < outlen; i++) {
		unsigned char c = (unsigned char)s[i];

		out[i] = (c < 0x20 || c >= 0x7f || c == '"') ? '?' : (char)c;
	}
	if (outlen)
		out[i] = '\0';
}

/* ---- patterns ---------------------------------------------------------------- */

/*
 * Parses a pattern "[scheme://]host[:port]" (host: a name, "*.name", "*",
 * or an address literal; port: a number or "*" for every port) into out.
 * Without a port, a pattern means the default ports of the schemes it
 * allows, as an origin does: 80 and 443, or the one of its scheme
 * (portless is then set; parse_patterns makes a portless deny pattern
 * cover every port). Returns 0, or -POLICY_EINVAL with why ("write
 * \"foo.test\" or \"*.foo.test\"").
 */
UNITTEST int policy_pattern_parse(const char *text, struct policy_pattern *out, char *why,
                                  size_t whylen)
{
	char buf[POLICY_HOST_MAX + 24];
	const char *p;
	const char *sep = strstr(text, "://");
	const char *hostpart;
	size_t hlen;
	size_t len = strlen(text);
	int port = 0;
	int rc = -POLICY_EINVAL;

	memset(out, 0, sizeof(*out));
	out->scheme = POLICY_SCHEME_ANY;
	if (len > POLICY_HOST_MAX + 16) {
		set_msg(why, whylen, "it is too long");
		goto out;
	}
	memcpy(buf, text, len + 1);
	if (len > 2 && buf[len - 2] == ':' && buf[len - 1] == '*') {
		out->any_port = 1;
		buf[len - 2] = '\0';
	}
	p = buf;
	if (sep) {
		char scheme[16];
		size_t slen = (size_t)(sep - text);
		size_t i;

		if (slen == 0 || slen >= sizeof(scheme)) {
			set_msg(why, whylen, "the scheme must be http, https, ws or wss");
			goto out;
		}
		for (i = 0; i < slen; i++)
			scheme[i] = (char)tolower((unsigned char)text[i]);
		scheme[slen] = '\0';
		out->scheme = policy_scheme_class(scheme);
		if (out->scheme == POLICY_SCHEME_NONE) {
			set_msg(why, whylen, "the scheme must be http, https, ws or wss");
			goto out;
		}
		p = buf + slen + 3;
	}
	if (strpbrk(p, "/?#@\\")) {
		set_msg(why, whylen,
		        "a pattern names a host, with an optional scheme and port: no "
		        "path, query or user");
		goto out;
	}
	hostpart = p;
	if (p[0] == '*' && (p[1] == '\0' || p[1] == ':')) {
		out->any_host = 1;
		if (p[1] == ':') {
			port = policy_parse_port(p + 2, strlen(p + 2));
			if (port <= 0 || out->any_port) {
				set_msg(why, whylen,
				        "the port is not a number from 1 to 65535 (or \"*\" for "
				        "every port)");
				goto out;
			}
		}
	} else {
		int wild = p[0] == '*' && p[1] == '.';

		if (wild)
			hostpart = p + 2;
		if (strchr(hostpart, '*')) {
			set_msg(why, whylen,
			        "'*' may only stand alone, start the pattern as \"*.\" or be the "
			        "port (\":*\")");
			goto out;
		}
		hlen = strlen(hostpart);
		if (hlen == 0 || hostpart[hlen - 1] == ':') {
			set_msg(why, whylen, hlen ? "the port is empty" : "the host is empty");
			goto out;
		}
		if (policy_parse_authority(hostpart, hlen, out->host, sizeof(out->host), &port,
		                           &out->is_ip, &out->ip, why, whylen) < 0)
			goto out;
		if (port && out->any_port) {
			set_msg(why, whylen, "the pattern has two ports");
			goto out;
		}
		if (wild && out->is_ip) {
			set_msg(why, whylen, "\"*.\" must be followed by a name, not an address");
			goto out;
		}
		out->wildcard = wild;
	}
	out->portless = !port && !out->any_port;
	if (out->portless && out->scheme != POLICY_SCHEME_ANY)
		port = policy_scheme_default_port(out->scheme);
	out->port = port;
	{
		const char *sch = out->scheme == POLICY_SCHEME_HTTP    ? "http://"
		                  : out->scheme == POLICY_SCHEME_HTTPS ? "https://"
		                                                       : "";
		int v6 = out->is_ip && !policy_ip_is_v4(&out->ip);
		char portbuf[16] = "";

		if (out->any_port)
			snprintf(portbuf, sizeof(portbuf), ":*");
		else if (out->port)
			snprintf(portbuf, sizeof(portbuf), ":%d", out->port);
		snprintf(out->text, sizeof(out->text), "%s%s%s%s%s%s", sch,
		         out->any_host   ? "*"
		         : out->wildcard ? "*."
		                         : "",
		         v6 ? "[" : "", out->any_host ? "" : out->host, v6 ? "]" : "", portbuf);
	}
	rc = 0;
out:
	return rc;
}

/* 1 when pat allows port for a request of scheme_class (POLICY_SCHEME_ANY
 * when unknown, as for CONNECT): its port, every port for ":*", and for a
 * pattern without port or scheme the default port of the request's scheme
 * (80 or 443 when unknown). */
int policy_pattern_port_ok(const struct policy_pattern *pat, int scheme_class, int port)
{
	int ok;

	if (pat->any_port)
		ok = 1;
	else if (pat->port)
		ok = pat->port == port;
	else if (port == 80)
		ok = scheme_class != POLICY_SCHEME_HTTPS;
	else
		ok = port == 443 && scheme_class != POLICY_SCHEME_HTTP;
	return ok;
}

/* 1 when the host of pat matches host (normalised). */
static int pattern_host_ok(const struct policy_pattern *pat, const char *host)
{
	size_t hl = strlen(host);
	size_t pl = strlen(pat->host);

	if (pat->any_host)
		return 1;
	if (!pat->wildcard)
		return strcmp(pat->host, host) == 0;
	return hl > pl + 1 && host[hl - pl - 1] == '.' && strcmp(host + hl - pl, pat->host) == 0;
}

/* 1 when pat matches a request for host (normalised) on port with the
 * given scheme class (POLICY_SCHEME_ANY when unknown, as for CONNECT). */
UNITTEST int policy_pattern_match(const struct policy_pattern *pat, int scheme_class,
                                  const char *host, int port)
{
	return pattern_host_ok(pat, host) && policy_pattern_port_ok(pat, scheme_class, port) &&
	       (pat->scheme == POLICY_SCHEME_ANY || scheme_class == POLICY_SCHEME_ANY ||
	        pat->scheme == scheme_class);
}

int policy_host_pattern_check(const char *pattern, char *why, size_t whylen)
{
	struct policy_pattern pat;

	if (!pattern) {
		set_msg(why, whylen, "no pattern given");
		return -POLICY_EINVAL;
	}
	return policy_pattern_parse(pattern, &pat, why, whylen);
}

int policy_url_matches_host_pattern(const char *pattern, const char *url)
{
	struct policy_pattern pat;
	struct policy_url u;
	char why[200];

	if (!pattern || !url || policy_pattern_parse(pattern, &pat, why, sizeof(why)) < 0 ||
	    policy_url_parse(url, &u, why, sizeof(why)) < 0 || u.scheme_class == POLICY_SCHEME_NONE)
		return 0;
	/* a secret's host names the site on whatever port egress lets it be reached */
	if (pat.portless && pat.scheme == POLICY_SCHEME_ANY)
		pat.any_port = 1;
	return policy_pattern_match(&pat, u.scheme_class, u.host, u.port);
}

/* ---- config ------------------------------------------------------------------ */

/* Frees what a layer owns. */
static void layer_free(struct policy_layer *l)
{
	free(l->allow);
	free(l->deny);
	free(l->private_ok);
	memset(l, 0, sizeof(*l));
}

/* Parses the array of patterns at key ("allow" or "deny") of obj into
 * *list. Returns 0, or a negative code with err. */
static int parse_patterns(const json_t *obj, const char *key, struct policy_pattern **list,
                          size_t *n, char *err, size_t errlen)
{
	const json_t *arr = json_object_get(obj, key);
	size_t i;
	int rc = 0;

	*list = NULL;
	*n = 0;
	if (!arr)
		goto out;
	if (!json_is_array(arr)) {
		set_msg(err, errlen,
		        "egress.%s must be an array of host patterns such as "
		        "[\"shop.test\", \"*.example.com\"]",
		        key);
		rc = -POLICY_EINVAL;
		goto out;
	}
	if (json_array_size(arr) > POLICY_MAX_PATTERNS) {
		set_msg(err, errlen, "egress.%s has %zu patterns: at most %d are allowed", key,
		        json_array_size(arr), POLICY_MAX_PATTERNS);
		rc = -POLICY_EINVAL;
		goto out;
	}
	*list = calloc(json_array_size(arr) + 1, sizeof(**list));
	if (!*list) {
		rc = -POLICY_ENOMEM;
		goto out;
	}
	for (i = 0; i < json_array_size(arr); i++) {
		const json_t *v = json_array_get(arr, i);
		char why[200] = "";
		char shown[120];

		if (!json_is_string(v)) {
			set_msg(err, errlen,
			        "egress.%s[%zu] must be a string such as \"shop.test\"", key, i);
			rc = -POLICY_EINVAL;
			goto out;
		}
		if (policy_pattern_parse(json_string_value(v), &(*list)[i], why, sizeof(why)) < 0) {
			printable(json_string_value(v), 100, shown, sizeof(shown));
			set_msg(
			    err, errlen,
			    "egress.%s[%zu]: \"%s\" is not a host pattern: %s (write "
			    "\"shop.test\", \"*.example.com\" or \"https://api.example.com:8443\")",
			    key, i, shown, why);
			rc = -POLICY_EINVAL;
			goto out;
		}
		/* what is denied without a port is denied on every port */
		if (!strcmp(key, "deny") && (*list)[i].portless) {
			(*list)[i].any_port = 1;
			(*list)[i].port = 0;
		}
		(*n)++;
	}
out:
	return rc;
}

/*
 * Parses one allow_private entry, "address[/prefix][:port]" ("127.0.0.1",
 * "127.0.0.1:8080", "10.1.0.0/16:*", "::1", "[::1]:8080", "[fd12::]/16:*":
 * an IPv6 address with a port goes in brackets), into out. Returns 0 or -1.
 */
static int private_entry_parse(const char *text, struct policy_private *out)
{
	char addr[INET6_ADDRSTRLEN + 8];
	const char *colon = NULL;
	size_t alen;
	int rc = -1;

	memset(out, 0, sizeof(*out));
	if (text[0] == '[') {
		const char *close = strchr(text, ']');
		const char *after;

		if (!close || (size_t)(close - text - 1) >= sizeof(addr))
			goto out;
		alen = (size_t)(close - text - 1);
		memcpy(addr, text + 1, alen);
		after = close + 1;
		if (*after == '/') {
			const char *c2 = strchr(after, ':');
			size_t plen = c2 ? (size_t)(c2 - after) : strlen(after);

			if (alen + plen >= sizeof(addr))
				goto out;
			memcpy(addr + alen, after, plen);
			alen += plen;
			after += plen;
		}
		if (*after && *after != ':')
			goto out;
		colon = *after ? after : NULL;
	} else {
		const char *first = strchr(text, ':');

		/* one colon: IPv4 with a port; more: an IPv6 address without one */
		if (first && !strchr(first + 1, ':'))
			colon = first;
		alen = colon ? (size_t)(colon - text) : strlen(text);
		if (alen >= sizeof(addr))
			goto out;
		memcpy(addr, text, alen);
	}
	addr[alen] = '\0';
	if (colon && !strcmp(colon + 1, "*")) {
		out->any_port = 1;
	} else if (colon) {
		out->port = policy_parse_port(colon + 1, strlen(colon + 1));
		if (out->port <= 0)
			goto out;
	}
	if (policy_range_parse(addr, &out->range) < 0)
		goto out;
	rc = 0;
out:
	return rc;
}

/* 1 when the allow_private entry e covers ip on port. */
static int private_entry_match(const struct policy_private *e, const struct policy_ip *ip, int port)
{
	return policy_range_contains(&e->range, ip) &&
	       (e->any_port || (e->port ? e->port == port : port == 80 || port == 443));
}

/* Parses egress.allow_private into the layer. */
static int parse_private(const json_t *obj, struct policy_layer *l, char *err, size_t errlen)
{
	const json_t *arr = json_object_get(obj, "allow_private");
	size_t i;
	int rc = 0;

	if (!arr)
		goto out;
	l->private_restricts = 1;
	if (!json_is_array(arr) || json_array_size(arr) > POLICY_MAX_RANGES) {
		set_msg(err, errlen,
		        "egress.allow_private must be an array of at most %d addresses "
		        "or CIDR ranges with optional ports, such as [\"127.0.0.1:8080\", "
		        "\"10.1.0.0/16\"]",
		        POLICY_MAX_RANGES);
		rc = -POLICY_EINVAL;
		goto out;
	}
	l->private_ok = calloc(json_array_size(arr) + 1, sizeof(*l->private_ok));
	if (!l->private_ok) {
		rc = -POLICY_ENOMEM;
		goto out;
	}
	for (i = 0; i < json_array_size(arr); i++) {
		const json_t *v = json_array_get(arr, i);
		struct policy_private *e = &l->private_ok[i];
		const struct policy_range *r = &e->range;
		const char *what = NULL;
		char shown[120];

		if (!json_is_string(v) || private_entry_parse(json_string_value(v), e) < 0) {
			printable(json_is_string(v) ? json_string_value(v) : "", 100, shown,
			          sizeof(shown));
			set_msg(err, errlen,
			        "egress.allow_private[%zu]: \"%s\" is not an address or CIDR "
			        "range with an optional port: write \"127.0.0.1:8080\", "
			        "\"10.1.0.0/16\" (ports 80 and 443), \"[::1]:8080\" or "
			        "\"fd12::/16\"; \":*\" means every port",
			        i, shown);
			rc = -POLICY_EINVAL;
			goto out;
		}
		if (policy_range_overlaps_refused(r, &what)) {
			printable(json_string_value(v), 100, shown, sizeof(shown));
			set_msg(err, errlen,
			        "egress.allow_private[%zu]: \"%s\" covers %s, which is always "
			        "refused (link-local, cloud metadata, unspecified, multicast or "
			        "reserved): "
			        "list only loopback, private or special-purpose addresses",
			        i, shown, what);
			rc = -POLICY_EINVAL;
			goto out;
		}
		l->nprivate_ok++;
	}
out:
	return rc;
}

/* Parses one override value (a literal or an array of them) into o. */
static int parse_override(const char *key, const json_t *v, struct policy_host_override *o,
                          char *err, size_t errlen)
{
	size_t i;
	size_t n = json_is_array(v) ? json_array_size(v) : 1;
	int rc = -POLICY_EINVAL;
	char shown[120];

	printable(key, 100, shown, sizeof(shown));
	if (n == 0 || n > POLICY_MAX_HOST_ADDRS) {
		set_msg(err, errlen, "egress.hosts[\"%s\"] must be 1 to %d addresses", shown,
		        POLICY_MAX_HOST_ADDRS);
		goto out;
	}
	for (i = 0; i < n; i++) {
		const json_t *a = json_is_array(v) ? json_array_get(v, i) : v;

		if (!json_is_string(a) ||
		    policy_ip_parse_literal(json_string_value(a), &o->addrs[i]) < 0) {
			set_msg(err, errlen,
			        "egress.hosts[\"%s\"] must be an IP address such as "
			        "\"127.0.0.1\" or \"::1\", or an array of them",
			        shown);
			goto out;
		}
	}
	o->naddrs = n;
	rc = 0;
out:
	return rc;
}

/* Parses egress.hosts into p. */
static int parse_hosts(const json_t *obj, struct policy_egress *p, char *err, size_t errlen)
{
	const json_t *hosts = json_object_get(obj, "hosts");
	const char *key;
	json_t *v;
	int rc = 0;

	if (!hosts)
		goto out;
	if (!json_is_object(hosts) || json_object_size(hosts) > POLICY_MAX_HOSTS) {
		set_msg(err, errlen,
		        "egress.hosts must be an object of at most %d names mapped to "
		        "addresses, such as {\"shop.test\": \"127.0.0.1\"}",
		        POLICY_MAX_HOSTS);
		rc = -POLICY_EINVAL;
		goto out;
	}
	p->hosts = calloc(json_object_size(hosts) + 1, sizeof(*p->hosts));
	if (!p->hosts) {
		rc = -POLICY_ENOMEM;
		goto out;
	}
	json_object_foreach((json_t *)hosts, key, v)
	{
		struct policy_host_override *o = &p->hosts[p->nhosts];
		char why[200] = "";
		char shown[120];
		int is_ip = 0;
		struct policy_ip ip;

		printable(key, 100, shown, sizeof(shown));
		if (policy_host_normalize(key, strlen(key), o->host, sizeof(o->host), &is_ip, &ip,
		                          why, sizeof(why)) < 0 ||
		    is_ip) {
			set_msg(err, errlen, "egress.hosts: \"%s\" is not a host name%s%s", shown,
			        is_ip ? "" : ": ", is_ip ? " (it is an address)" : why);
			rc = -POLICY_EINVAL;
			goto out;
		}
		if (policy_egress_override(p, o->host)) {
			set_msg(err, errlen, "egress.hosts: \"%s\" is listed twice", shown);
			rc = -POLICY_EINVAL;
			goto out;
		}
		rc = parse_override(key, v, o, err, errlen);
		if (rc < 0)
			goto out;
		p->nhosts++;
	}
out:
	return rc;
}

/* Parses a config object into the layer l of p; session layers refuse
 * "hosts" and restrict private addresses only when they list them. */
static int parse_layer(const json_t *obj, struct policy_egress *p, struct policy_layer *l,
                       int is_session, char *err, size_t errlen)
{
	static const char *const known[] = { "allow", "deny", "default", "allow_private", "hosts" };
	const json_t *def;
	const char *key;
	json_t *v;
	int rc = 0;

	l->scope = is_session ? "session" : "tenant";
	l->private_restricts = !is_session;
	if (!obj)
		goto out;
	if (!json_is_object(obj)) {
		set_msg(err, errlen,
		        "the egress policy must be a JSON object such as "
		        "{\"allow\": [\"shop.test\"]}");
		rc = -POLICY_EINVAL;
		goto out;
	}
	json_object_foreach((json_t *)obj, key, v)
	{
		size_t i;
		char shown[80];

		for (i = 0; i < sizeof(known) / sizeof(known[0]); i++)
			if (!strcmp(key, known[i]))
				break;
		if (i == sizeof(known) / sizeof(known[0])) {
			printable(key, 60, shown, sizeof(shown));
			set_msg(err, errlen,
			        "egress.%s is not a known key: use allow, deny, default, "
			        "allow_private or hosts",
			        shown);
			rc = -POLICY_EINVAL;
			goto out;
		}
	}
	rc = parse_patterns(obj, "allow", &l->allow, &l->nallow, err, errlen);
	if (rc < 0)
		goto out;
	rc = parse_patterns(obj, "deny", &l->deny, &l->ndeny, err, errlen);
	if (rc < 0)
		goto out;
	l->default_deny = json_object_get(obj, "allow") != NULL;
	def = json_object_get(obj, "default");
	if (def) {
		const char *s = json_string_value(def);

		if (!s || (strcmp(s, "allow") && strcmp(s, "deny"))) {
			set_msg(err, errlen, "egress.default must be \"allow\" or \"deny\"");
			rc = -POLICY_EINVAL;
			goto out;
		}
		if (!strcmp(s, "allow") && l->default_deny) {
			set_msg(err, errlen,
			        "egress.default is \"allow\" but egress.allow is set, which "
			        "would make the allowlist mean nothing: drop one of them");
			rc = -POLICY_EINVAL;
			goto out;
		}
		l->default_deny = !strcmp(s, "deny");
	}
	rc = parse_private(obj, l, err, errlen);
	if (rc < 0)
		goto out;
	if (json_object_get(obj, "hosts") && is_session) {
		set_msg(err, errlen,
		        "egress.hosts: resolver overrides belong in the tenant's policy, "
		        "not a session's");
		rc = -POLICY_EINVAL;
		goto out;
	}
	if (!is_session)
		rc = parse_hosts(obj, p, err, errlen);
out:
	return rc;
}

int policy_egress_parse(const json_t *json, struct policy_egress **out, char *err, size_t errlen)
{
	struct policy_egress *p = NULL;
	int rc;

	*out = NULL;
	p = calloc(1, sizeof(*p));
	if (!p) {
		rc = -POLICY_ENOMEM;
		goto out;
	}
	p->nlayers = 1;
	rc = parse_layer(json, p, &p->layers[0], 0, err, errlen);
	if (rc < 0)
		goto out;
	*out = p;
	p = NULL;
out:
	if (rc == -POLICY_ENOMEM)
		set_msg(err, errlen, "out of memory while reading the egress policy");
	policy_egress_free(p);
	return rc;
}

/* Copies n elements of size sz from src into a new array at *dst. */
static int dup_array(void **dst, const void *src, size_t n, size_t sz)
{
	*dst = calloc(n + 1, sz);
	if (*dst && n)
		memcpy(*dst, src, n * sz);
	return *dst ? 0 : -POLICY_ENOMEM;
}

int policy_egress_narrow(const struct policy_egress *base, const json_t *json,
                         struct policy_egress **out, char *err, size_t errlen)
{
	struct policy_egress *p = NULL;
	size_t i;
	int rc = -POLICY_ENOMEM;

	*out = NULL;
	if (!base || (json && base->nlayers >= POLICY_MAX_LAYERS)) {
		set_msg(err, errlen,
		        base ? "this policy has been narrowed %d times already: narrow "
		               "the tenant's policy instead"
		             : "no policy to narrow",
		        POLICY_MAX_LAYERS - 1);
		rc = -POLICY_EINVAL;
		goto out;
	}
	p = calloc(1, sizeof(*p));
	if (!p)
		goto out;
	for (i = 0; i < base->nlayers; i++) {
		const struct policy_layer *b = &base->layers[i];
		struct policy_layer *l = &p->layers[i];

		*l = *b;
		l->allow = NULL;
		l->deny = NULL;
		l->private_ok = NULL;
		p->nlayers = i + 1;
		if (dup_array((void **)&l->allow, b->allow, b->nallow, sizeof(*b->allow)) < 0 ||
		    dup_array((void **)&l->deny, b->deny, b->ndeny, sizeof(*b->deny)) < 0 ||
		    dup_array((void **)&l->private_ok, b->private_ok, b->nprivate_ok,
		              sizeof(*b->private_ok)) < 0)
			goto out;
	}
	if (dup_array((void **)&p->hosts, base->hosts, base->nhosts, sizeof(*base->hosts)) < 0)
		goto out;
	p->nhosts = base->nhosts;
	memcpy(p->source, base->source, sizeof(p->source));
	if (json) {
		p->nlayers++;
		rc = parse_layer(json, p, &p->layers[p->nlayers - 1], 1, err, errlen);
		if (rc < 0)
			goto out;
	}
	*out = p;
	p = NULL;
	rc = 0;
out:
	if (rc == -POLICY_ENOMEM)
		set_msg(err, errlen, "out of memory while narrowing the egress policy");
	policy_egress_free(p);
	return rc;
}

void policy_egress_set_source(struct policy_egress *p, const char *source)
{
	if (p)
		printable(source ? source : "", sizeof(p->source) - 1, p->source,
		          sizeof(p->source));
}

void policy_egress_free(struct policy_egress *p)
{
	size_t i;

	if (!p)
		return;
	for (i = 0; i < POLICY_MAX_LAYERS; i++)
		layer_free(&p->layers[i]);
	free(p->hosts);
	free(p);
}

/* ---- checks ------------------------------------------------------------------ */

/* The override for host (normalised), or NULL. */
const struct policy_host_override *policy_egress_override(const struct policy_egress *p,
                                                          const char *host)
{
	const struct policy_host_override *found = NULL;
	size_t i;

	for (i = 0; p && !found && i < p->nhosts; i++)
		if (!strcmp(p->hosts[i].host, host))
			found = &p->hosts[i];
	return found;
}

/* Starts a decision: allowed, with host and no rule. */
static void decision_init(struct policy_decision *d, const char *host)
{
	memset(d, 0, sizeof(*d));
	d->allowed = 1;
	if (host)
		printable(host, sizeof(d->host) - 1, d->host, sizeof(d->host));
}

/* Marks d refused by rule of scope. */
static void refuse(struct policy_decision *d, const char *rule, const char *scope)
{
	d->allowed = 0;
	snprintf(d->rule, sizeof(d->rule), "%s", rule);
	snprintf(d->scope, sizeof(d->scope), "%s", scope ? scope : "");
}

/* "shop.test" or "[::1]" for messages. */
static void host_for_msg(const char *host, char *out, size_t outlen)
{
	if (strchr(host, ':'))
		snprintf(out, outlen, "[%s]", host);
	else
		snprintf(out, outlen, "%s", host);
}

/* "shop.test:8080", "shop.test" (ports 80 and 443) or "[::1]:8080": the
 * entry that would name host (normalised) on port, for the lines that
 * refusals suggest. */
static void entry_for(const char *host, int port, char *out, size_t outlen)
{
	int v6 = strchr(host, ':') != NULL;

	if (port == 80 || port == 443)
		snprintf(out, outlen, "%s%s%s", v6 ? "[" : "", host, v6 ? "]" : "");
	else
		snprintf(out, outlen, "%s%s%s:%d", v6 ? "[" : "", host, v6 ? "]" : "", port);
}

/*
 * Appends to msg (msglen bytes, holding a message already) what lifts a
 * refusal by the layer of scope: for the tenant's, the line to add to
 * (verb "add") or take out of (verb "remove") the list key of its policy,
 * naming the file when p knows it; for a session's, that its narrowing
 * refuses it.
 */
static void append_fix(const struct policy_egress *p, const char *scope, const char *verb,
                       const char *key, const char *entry, char *msg, size_t msglen)
{
	size_t n = strlen(msg);

	if (n + 1 >= msglen)
		return;
	if (!strcmp(scope, "session")) {
		snprintf(
		    msg + n, msglen - n,
		    ": this session's narrowing (browser_session action \"narrow\") refuses it "
		    "until the session ends");
		return;
	}
	if (!strcmp(verb, "remove"))
		snprintf(msg + n, msglen - n,
		         ". To lift it, remove \"%s\" from \"egress\": {\"%s\": [...]} in %s",
		         entry, key, p && p->source[0] ? p->source : "the tenant's policy");
	else
		snprintf(msg + n, msglen - n,
		         ". To allow it, add to %s: \"egress\": {\"%s\": [\"%s\"]}",
		         p && p->source[0] ? p->source : "the tenant's policy", key, entry);
}

/*
 * Checks host:port (normalised; scheme_class ANY when unknown) against
 * the deny, allow and default rules of every layer. url (may be NULL) is
 * only for the caller's records. Returns 0 or -POLICY_EREFUSED; d is
 * filled in.
 */
int policy_egress_check_target(const struct policy_egress *p, int scheme_class, const char *host,
                               int is_ip, const struct policy_ip *ip, int port, const char *url,
                               struct policy_decision *d)
{
	char hp[POLICY_HOST_MAX + 16];
	char entry[POLICY_HOST_MAX + 16];
	size_t li;
	size_t i;
	int rc = 0;

	(void)url;
	/* an address no policy can allow is named as such, before any list */
	if (is_ip && policy_class_always_refused(policy_ip_class(ip))) {
		rc = policy_egress_check_ip(p, host, ip, port, d);
		goto out;
	}
	decision_init(d, host);
	host_for_msg(d->host, hp, sizeof(hp));
	entry_for(d->host, port, entry, sizeof(entry));
	if (is_ip)
		policy_ip_format(ip, d->addr, sizeof(d->addr));
	for (li = 0; p && li < p->nlayers; li++) {
		const struct policy_layer *l = &p->layers[li];
		int allowed = !l->default_deny;
		int host_listed = 0;

		for (i = 0; i < l->ndeny; i++) {
			if (!policy_pattern_match(&l->deny[i], scheme_class, d->host, port))
				continue;
			refuse(d, "egress-deny", l->scope);
			snprintf(d->pattern, sizeof(d->pattern), "%s", l->deny[i].text);
			set_msg(
			    d->message, sizeof(d->message),
			    "%s:%d is refused by the deny rule \"%s\" of the %s's egress policy "
			    "(rule egress-deny)",
			    hp, port, l->deny[i].text, l->scope);
			d->fix_at = strlen(d->message);
			append_fix(p, l->scope, "remove", "deny", l->deny[i].text, d->message,
			           sizeof(d->message));
			rc = -POLICY_EREFUSED;
			goto out;
		}
		for (i = 0; !allowed && i < l->nallow; i++) {
			allowed = policy_pattern_match(&l->allow[i], scheme_class, d->host, port);
			host_listed |=
			    l->allow[i].portless && pattern_host_ok(&l->allow[i], d->host);
		}
		if (!allowed) {
			refuse(d, "egress-not-allowed", l->scope);
			if (host_listed)
				set_msg(d->message, sizeof(d->message),
				        "%s port %d is not allowed by the %s's egress policy (rule "
				        "egress-not-allowed): a pattern without a port allows only "
				        "ports 80 and 443",
				        hp, port, l->scope);
			else
				set_msg(
				    d->message, sizeof(d->message),
				    "%s:%d is not allowed by the %s's egress policy (rule "
				    "egress-not-allowed): only the hosts it lists can be reached",
				    hp, port, l->scope);
			d->fix_at = strlen(d->message);
			append_fix(p, l->scope, "add", "allow", entry, d->message,
			           sizeof(d->message));
			rc = -POLICY_EREFUSED;
			goto out;
		}
	}
out:
	return rc;
}

/* 1 when layer l names ip on port: an allow_private entry holds it, or
 * an allow pattern is that very address on that port. */
static int layer_names_ip(const struct policy_layer *l, const struct policy_ip *ip, int port)
{
	size_t i;
	int named = !l->private_restricts;

	for (i = 0; !named && i < l->nprivate_ok; i++)
		named = private_entry_match(&l->private_ok[i], ip, port);
	for (i = 0; !named && i < l->nallow; i++)
		named = l->allow[i].is_ip && !memcmp(l->allow[i].ip.b, ip->b, 16) &&
		        policy_pattern_port_ok(&l->allow[i], POLICY_SCHEME_ANY, port);
	return named;
}

/*
 * Checks one address host resolved to (host may be NULL, or the address
 * itself for literals) for a connection to port (0 when unknown: then
 * only entries for every port name it). Returns 0 or -POLICY_EREFUSED;
 * d is filled in.
 */
int policy_egress_check_ip(const struct policy_egress *p, const char *host,
                           const struct policy_ip *ip, int port, struct policy_decision *d)
{
	enum policy_addr_class c = policy_ip_class(ip);
	char what[POLICY_HOST_MAX + 120];
	char hp[POLICY_HOST_MAX + 16];
	char entry[80];
	size_t li;
	int rc = 0;

	decision_init(d, host);
	policy_ip_format(ip, d->addr, sizeof(d->addr));
	if (!d->host[0])
		snprintf(d->host, sizeof(d->host), "%s", d->addr);
	host_for_msg(d->host, hp, sizeof(hp));
	if (!strcmp(d->host, d->addr))
		snprintf(what, sizeof(what), "%s", hp);
	else
		snprintf(what, sizeof(what), "%s (resolved to %s)", hp, d->addr);
	if (port > 0)
		snprintf(what + strlen(what), sizeof(what) - strlen(what), " port %d", port);
	if (port > 0)
		entry_for(d->addr, port, entry, sizeof(entry));
	else
		snprintf(entry, sizeof(entry), "%s%s%s:*", strchr(d->addr, ':') ? "[" : "", d->addr,
		         strchr(d->addr, ':') ? "]" : "");
	if (c == POLICY_ADDR_PUBLIC)
		goto out;
	if (policy_class_always_refused(c)) {
		refuse(d, policy_class_rule(c), "");
		set_msg(
		    d->message, sizeof(d->message),
		    "connection to %s refused: %s is never reachable from the browser (rule %s)",
		    what, policy_class_words(c), d->rule);
		rc = -POLICY_EREFUSED;
		goto out;
	}
	for (li = 0; li < (p ? p->nlayers : 1); li++) {
		const char *scope = p ? p->layers[li].scope : "tenant";

		if (p && layer_names_ip(&p->layers[li], ip, port))
			continue;
		refuse(d, policy_class_rule(c), scope);
		set_msg(
		    d->message, sizeof(d->message),
		    "connection to %s refused: %s is reachable only when the %s's egress policy "
		    "names it (rule %s)",
		    what, policy_class_words(c), scope, d->rule);
		d->fix_at = strlen(d->message);
		append_fix(p, scope, "add", "allow_private", entry, d->message, sizeof(d->message));
		rc = -POLICY_EREFUSED;
		goto out;
	}
out:
	return rc;
}

/* The port of sa (AF_INET or AF_INET6), or 0. */
static int port_of(const struct sockaddr *sa)
{
	int port = 0;

	if (sa->sa_family == AF_INET)
		port = ntohs(((const struct sockaddr_in *)(const void *)sa)->sin_port);
	else if (sa->sa_family == AF_INET6)
		port = ntohs(((const struct sockaddr_in6 *)(const void *)sa)->sin6_port);
	return port;
}

int policy_egress_check_addr(const struct policy_egress *p, const char *host,
                             const struct sockaddr *sa, struct policy_decision *d)
{
	struct policy_ip ip;
	char norm[POLICY_HOST_MAX + 1] = "";
	const char *h = NULL;
	int rc;

	if (policy_ip_from_sockaddr(sa, &ip) < 0) {
		decision_init(d, host);
		refuse(d, "addr-reserved", "");
		set_msg(d->message, sizeof(d->message),
		        "connection refused: only IPv4 and IPv6 "
		        "addresses can be reached (rule addr-reserved)");
		rc = -POLICY_EREFUSED;
		goto out;
	}
	if (host) {
		int is_ip = 0;
		struct policy_ip hip;
		char why[160];

		if (policy_host_normalize(host, strlen(host), norm, sizeof(norm), &is_ip, &hip, why,
		                          sizeof(why)) == 0)
			h = norm;
	}
	rc = policy_egress_check_ip(p, h, &ip, port_of(sa), d);
out:
	return rc;
}

/* 1 when url is about:blank or about:srcdoc (any case, with or without a
 * query or fragment, leading spaces and controls skipped as browsers do):
 * an empty document or an iframe's srcdoc, which reach no network. */
static int is_about_local(const char *url)
{
	static const char *const names[] = { "blank", "srcdoc" };
	size_t i;
	size_t n;

	while (url && *url && (unsigned char)*url <= ' ')
		url++;
	if (!url || strncasecmp(url, "about:", 6) != 0)
		return 0;
	url += 6;
	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		n = strlen(names[i]);
		if (!strncasecmp(url, names[i], n) &&
		    (url[n] == '\0' || url[n] == '?' || url[n] == '#'))
			return 1;
	}
	return 0;
}

int policy_egress_check_url(const struct policy_egress *p, const char *url,
                            struct policy_decision *d)
{
	struct policy_url u;
	char why[200] = "";
	char shown[220];
	const struct policy_host_override *o;
	size_t i;
	int rc = -POLICY_EREFUSED;

	decision_init(d, NULL);
	printable(url ? url : "", 200, shown, sizeof(shown));
	if (is_about_local(url)) {
		rc = 0;
		goto out;
	}
	if (policy_url_parse(url, &u, why, sizeof(why)) < 0) {
		refuse(d, "url-invalid", "");
		set_msg(d->message, sizeof(d->message), "\"%s\" was refused: %s (rule url-invalid)",
		        shown, why);
		goto out;
	}
	if (u.scheme_class == POLICY_SCHEME_NONE) {
		char rule[32];

		snprintf(rule, sizeof(rule), "scheme-%s", u.scheme);
		refuse(d, rule, "");
		set_msg(d->message, sizeof(d->message),
		        "%s: URLs are refused (rule %s): only http, "
		        "https, ws and wss reach the network (and about:blank, which reaches "
		        "nothing)",
		        u.scheme, d->rule);
		goto out;
	}
	rc = policy_egress_check_target(p, u.scheme_class, u.host, u.is_ip, &u.ip, u.port, url, d);
	if (rc < 0)
		goto out;
	if (u.is_ip) {
		rc = policy_egress_check_ip(p, u.host, &u.ip, u.port, d);
		goto out;
	}
	o = policy_egress_override(p, u.host);
	for (i = 0; o && i < o->naddrs; i++) {
		rc = policy_egress_check_ip(p, u.host, &o->addrs[i], u.port, d);
		if (rc < 0)
			goto out;
	}
	decision_init(d, u.host);
out:
	return rc;
}

/* ---- refusal records --------------------------------------------------------- */

/* Sets key to s in obj when s is non-empty; text that is not UTF-8 is
 * stored with its odd bytes as '?'. Returns 0 or -1. */
static int put_str(json_t *obj, const char *key, const char *s)
{
	json_t *v = NULL;
	char *copy = NULL;
	size_t len;
	int rc = 0;

	if (!s || !*s)
		goto out;
	v = json_string(s);
	if (!v) {
		len = strlen(s);
		copy = malloc(len + 1);
		if (!copy) {
			rc = -1;
			goto out;
		}
		printable(s, len, copy, len + 1);
		v = json_string(copy);
	}
	rc = json_object_set_new(obj, key, v);
out:
	free(copy);
	return rc;
}

json_t *policy_refusal_to_json(const struct policy_refusal *r)
{
	json_t *o = json_object();
	int bad = 0;

	if (!o || !r)
		goto out;
	bad |= put_str(o, "time", r->time);
	bad |= put_str(o, "session", r->session);
	bad |= put_str(o, "target", r->target);
	bad |= put_str(o, "layer", r->layer);
	bad |= put_str(o, "method", r->method);
	bad |= put_str(o, "url", r->url);
	bad |= put_str(o, "host", r->host);
	bad |= put_str(o, "addr", r->addr);
	bad |= put_str(o, "rule", r->rule);
	bad |= put_str(o, "message", r->message);
	if (bad) {
		json_decref(o);
		o = NULL;
	}
out:
	return o;
}

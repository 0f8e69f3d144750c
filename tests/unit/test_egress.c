/*
 * test_egress.c - the egress policy: patterns, deny before allow, default
 * deny with an allowlist, refused address ranges in every encoding a URL
 * or a resolver can produce, per-session narrowing, and config errors
 * that say what to fix.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "policy/egress.h"
#include "policy/policy-private.h"

#include <arpa/inet.h>
#include <stdio.h>
#include <string.h>

/* Parses a JSON config into a policy; fails the test on error. */
static struct policy_egress *policy_from(const char *text)
{
	json_error_t jerr;
	json_t *j = text ? json_loads(text, 0, &jerr) : NULL;
	struct policy_egress *p = NULL;
	char err[512] = "";

	if (text && !j)
		fail_msg("bad JSON in test: %s", jerr.text);
	if (policy_egress_parse(j, &p, err, sizeof(err)) != 0)
		fail_msg("policy did not parse: %s", err);
	json_decref(j);
	return p;
}

/* Expects the config to be refused with an error containing want. */
static void assert_config_error(const char *text, const char *want)
{
	json_t *j = json_loads(text, 0, NULL);
	struct policy_egress *p = NULL;
	char err[512] = "";

	assert_non_null(j);
	assert_int_equal(policy_egress_parse(j, &p, err, sizeof(err)), -POLICY_EINVAL);
	assert_null(p);
	if (!strstr(err, want))
		fail_msg("config %s: error \"%s\" does not mention \"%s\"", text, err, want);
	json_decref(j);
}

/* Expects url to pass p. */
static void assert_url_allowed(const struct policy_egress *p, const char *url)
{
	struct policy_decision d;

	if (policy_egress_check_url(p, url, &d) != 0)
		fail_msg("%s refused (%s): %s", url, d.rule, d.message);
	assert_true(d.allowed);
	assert_string_equal(d.rule, "");
}

/* Expects url to be refused by rule. */
static void assert_url_refused(const struct policy_egress *p, const char *url, const char *rule)
{
	struct policy_decision d;

	if (policy_egress_check_url(p, url, &d) != -POLICY_EREFUSED)
		fail_msg("%s was allowed, expected rule %s", url, rule);
	assert_false(d.allowed);
	if (strcmp(d.rule, rule))
		fail_msg("%s refused by %s (%s), expected %s", url, d.rule, d.message, rule);
	assert_non_null(strstr(d.message, rule));
}

/* Checks a literal address (no host) against p. */
static int addr_check(const struct policy_egress *p, const char *text, char *rule)
{
	struct sockaddr_storage ss;
	struct policy_decision d;
	int rc;

	memset(&ss, 0, sizeof(ss));
	if (strchr(text, ':')) {
		struct sockaddr_in6 *in6 = (struct sockaddr_in6 *)&ss;

		in6->sin6_family = AF_INET6;
		in6->sin6_port = htons(443);
		assert_int_equal(inet_pton(AF_INET6, text, &in6->sin6_addr), 1);
	} else {
		struct sockaddr_in *in = (struct sockaddr_in *)&ss;

		in->sin_family = AF_INET;
		in->sin_port = htons(443);
		assert_int_equal(inet_pton(AF_INET, text, &in->sin_addr), 1);
	}
	rc = policy_egress_check_addr(p, "name.test", (struct sockaddr *)&ss, &d);
	strcpy(rule, d.rule);
	assert_int_equal(rc == 0, d.allowed);
	return rc;
}

static void assert_addr(const struct policy_egress *p, const char *text, const char *rule)
{
	char got[64];
	int rc = addr_check(p, text, got);

	if (strcmp(got, rule))
		fail_msg("%s: rule \"%s\", expected \"%s\"", text, got, rule);
	assert_int_equal(rc, rule[0] ? -POLICY_EREFUSED : 0);
}

static void test_patterns(void **state)
{
	struct policy_pattern pat;
	char why[200];

	(void)state;
	assert_int_equal(policy_pattern_parse("Shop.Test.", &pat, why, sizeof(why)), 0);
	assert_string_equal(pat.text, "shop.test");
	assert_true(policy_pattern_match(&pat, POLICY_SCHEME_HTTPS, "shop.test", 443));
	/* without a port: the default ports of the schemes, as an origin */
	assert_true(policy_pattern_match(&pat, POLICY_SCHEME_HTTP, "shop.test", 80));
	assert_false(policy_pattern_match(&pat, POLICY_SCHEME_HTTP, "shop.test", 8080));
	assert_false(policy_pattern_match(&pat, POLICY_SCHEME_HTTP, "shop.test", 443));
	assert_false(policy_pattern_match(&pat, POLICY_SCHEME_HTTPS, "shop.test", 80));
	assert_true(policy_pattern_match(&pat, POLICY_SCHEME_ANY, "shop.test", 80));
	assert_true(policy_pattern_match(&pat, POLICY_SCHEME_ANY, "shop.test", 443));
	assert_false(policy_pattern_match(&pat, POLICY_SCHEME_ANY, "shop.test", 8443));
	assert_true(pat.portless);

	/* ":*" is every port, and says so in the text */
	assert_int_equal(policy_pattern_parse("shop.test.:*", &pat, why, sizeof(why)), 0);
	assert_string_equal(pat.text, "shop.test:*");
	assert_true(policy_pattern_match(&pat, POLICY_SCHEME_HTTP, "shop.test", 8080));
	assert_true(policy_pattern_match(&pat, POLICY_SCHEME_HTTPS, "shop.test", 1));
	assert_int_equal(policy_pattern_parse("http://shop.test:*", &pat, why, sizeof(why)), 0);
	assert_true(policy_pattern_match(&pat, POLICY_SCHEME_HTTP, "shop.test", 8080));
	assert_false(policy_pattern_match(&pat, POLICY_SCHEME_HTTPS, "shop.test", 8080));
	assert_int_equal(policy_pattern_parse("[::1]:*", &pat, why, sizeof(why)), 0);
	assert_string_equal(pat.text, "[::1]:*");
	assert_true(policy_pattern_match(&pat, POLICY_SCHEME_HTTP, "::1", 9));
	assert_int_equal(policy_pattern_parse("*:*", &pat, why, sizeof(why)), 0);
	assert_true(pat.any_host && pat.any_port);
	assert_int_equal(policy_pattern_parse("http://shop.test", &pat, why, sizeof(why)), 0);
	assert_string_equal(pat.text, "http://shop.test:80");
	assert_false(policy_pattern_match(&pat, POLICY_SCHEME_ANY, "shop.test", 443));
	assert_int_equal(policy_pattern_parse("x.test:8080:*", &pat, why, sizeof(why)),
	                 -POLICY_EINVAL);
	assert_int_equal(policy_pattern_parse(":*", &pat, why, sizeof(why)), -POLICY_EINVAL);
	assert_int_equal(policy_pattern_parse("x.test:**", &pat, why, sizeof(why)), -POLICY_EINVAL);
	assert_int_equal(policy_pattern_parse("shop.test", &pat, why, sizeof(why)), 0);
	assert_false(policy_pattern_match(&pat, POLICY_SCHEME_HTTP, "www.shop.test", 80));
	assert_false(policy_pattern_match(&pat, POLICY_SCHEME_HTTP, "shop.test.evil", 80));

	assert_int_equal(policy_pattern_parse("*.Example.com", &pat, why, sizeof(why)), 0);
	assert_string_equal(pat.text, "*.example.com");
	assert_true(policy_pattern_match(&pat, POLICY_SCHEME_HTTP, "a.example.com", 80));
	assert_true(policy_pattern_match(&pat, POLICY_SCHEME_HTTP, "a.b.example.com", 80));
	assert_false(policy_pattern_match(&pat, POLICY_SCHEME_HTTP, "example.com", 80));
	assert_false(policy_pattern_match(&pat, POLICY_SCHEME_HTTP, "badexample.com", 80));

	/* a scheme without a port means that scheme's default port */
	assert_int_equal(policy_pattern_parse("HTTPS://api.example.org", &pat, why, sizeof(why)),
	                 0);
	assert_string_equal(pat.text, "https://api.example.org:443");
	assert_true(policy_pattern_match(&pat, POLICY_SCHEME_HTTPS, "api.example.org", 443));
	assert_false(policy_pattern_match(&pat, POLICY_SCHEME_HTTP, "api.example.org", 443));
	assert_false(policy_pattern_match(&pat, POLICY_SCHEME_HTTPS, "api.example.org", 8443));
	/* CONNECT does not know the scheme: only the port counts */
	assert_true(policy_pattern_match(&pat, POLICY_SCHEME_ANY, "api.example.org", 443));
	assert_false(policy_pattern_match(&pat, POLICY_SCHEME_ANY, "api.example.org", 80));

	assert_int_equal(policy_pattern_parse("wss://chat.test:8443", &pat, why, sizeof(why)), 0);
	assert_string_equal(pat.text, "https://chat.test:8443");

	assert_int_equal(policy_pattern_parse("[::1]:8080", &pat, why, sizeof(why)), 0);
	assert_true(pat.is_ip);
	assert_string_equal(pat.text, "[::1]:8080");
	assert_true(policy_pattern_match(&pat, POLICY_SCHEME_HTTP, "::1", 8080));
	assert_false(policy_pattern_match(&pat, POLICY_SCHEME_HTTP, "::1", 8081));

	assert_int_equal(policy_pattern_parse("*:8080", &pat, why, sizeof(why)), 0);
	assert_true(policy_pattern_match(&pat, POLICY_SCHEME_HTTP, "anything.test", 8080));
	assert_false(policy_pattern_match(&pat, POLICY_SCHEME_HTTP, "anything.test", 80));

	assert_int_equal(policy_pattern_parse("*foo.test", &pat, why, sizeof(why)), -POLICY_EINVAL);
	assert_int_equal(policy_pattern_parse("a.*.test", &pat, why, sizeof(why)), -POLICY_EINVAL);
	assert_int_equal(policy_pattern_parse("ftp://x.test", &pat, why, sizeof(why)),
	                 -POLICY_EINVAL);
	assert_int_equal(policy_pattern_parse("x.test/path", &pat, why, sizeof(why)),
	                 -POLICY_EINVAL);
	assert_int_equal(policy_pattern_parse("user@x.test", &pat, why, sizeof(why)),
	                 -POLICY_EINVAL);
	assert_int_equal(policy_pattern_parse("x.test:0", &pat, why, sizeof(why)), -POLICY_EINVAL);
	assert_int_equal(policy_pattern_parse("x.test:", &pat, why, sizeof(why)), -POLICY_EINVAL);
	assert_int_equal(policy_pattern_parse("*.10.0.0.1", &pat, why, sizeof(why)),
	                 -POLICY_EINVAL);
	assert_int_equal(policy_pattern_parse("", &pat, why, sizeof(why)), -POLICY_EINVAL);
}

static void test_deny_before_allow_and_defaults(void **state)
{
	struct policy_egress *p;

	(void)state;
	p = policy_from("{\"allow\": [\"*.example.com\", \"shop.test\"],"
	                " \"deny\": [\"ads.example.com\"]}");
	assert_url_allowed(p, "https://www.example.com/");
	assert_url_allowed(p, "http://SHOP.test./cart");
	assert_url_refused(p, "https://ads.example.com/x.js", "egress-deny");
	assert_url_refused(p, "https://example.com/", "egress-not-allowed");
	assert_url_refused(p, "https://elsewhere.test/", "egress-not-allowed");
	policy_egress_free(p);

	/* no allowlist: public hosts pass, deny still applies */
	p = policy_from("{\"deny\": [\"*.tracker.test\"]}");
	assert_url_allowed(p, "https://anything.test/");
	assert_url_refused(p, "https://a.tracker.test/", "egress-deny");
	assert_url_allowed(p, "https://tracker.test/");
	policy_egress_free(p);

	/* an empty allowlist, or default deny, allows nothing */
	p = policy_from("{\"allow\": []}");
	assert_url_refused(p, "https://anything.test/", "egress-not-allowed");
	policy_egress_free(p);
	p = policy_from("{\"default\": \"deny\"}");
	assert_url_refused(p, "https://anything.test/", "egress-not-allowed");
	policy_egress_free(p);

	/* NULL config: the default policy */
	p = policy_from(NULL);
	assert_url_allowed(p, "https://anything.test/");
	assert_url_refused(p, "http://127.0.0.1/", "addr-loopback");
	policy_egress_free(p);
}

static void test_schemes_and_ports(void **state)
{
	struct policy_egress *p;

	(void)state;
	p = policy_from("{\"allow\": [\"https://secure.test\", \"plain.test:8080\"]}");
	assert_url_allowed(p, "https://secure.test/");
	assert_url_allowed(p, "wss://secure.test/socket");
	assert_url_refused(p, "http://secure.test/", "egress-not-allowed");
	assert_url_refused(p, "https://secure.test:8443/", "egress-not-allowed");
	assert_url_allowed(p, "http://plain.test:8080/");
	assert_url_allowed(p, "ws://plain.test:8080/");
	assert_url_refused(p, "http://plain.test/", "egress-not-allowed");
	assert_url_refused(p, "file:///etc/passwd", "scheme-file");
	assert_url_refused(p, "javascript:alert(1)", "scheme-javascript");
	assert_url_refused(p, "data:text/html,hi", "scheme-data");
	assert_url_refused(p, "chrome://settings", "scheme-chrome");
	assert_url_refused(p, "ftp://secure.test/", "scheme-ftp");
	/* about:blank and a frame's about:srcdoc reach nothing; the rest of about: is refused */
	assert_url_allowed(p, "about:blank");
	assert_url_allowed(p, " ABOUT:blank#x");
	assert_url_allowed(p, "about:srcdoc");
	assert_url_refused(p, "about:settings", "scheme-about");
	assert_url_refused(p, "about:blank/../x", "scheme-about");
	policy_egress_free(p);
	/* even under default deny */
	p = policy_from("{\"default\": \"deny\"}");
	assert_url_allowed(p, "about:blank");
	policy_egress_free(p);
}

static void test_hostile_urls(void **state)
{
	struct policy_egress *p;

	(void)state;
	p = policy_from("{\"allow\": [\"shop.test\"]}");
	/* the host is what follows the last '@' of the authority */
	assert_url_refused(p, "http://shop.test@evil.test/", "egress-not-allowed");
	assert_url_refused(p, "http://shop.test:80@evil.test/", "egress-not-allowed");
	assert_url_refused(p, "http://a@shop.test@evil.test/", "egress-not-allowed");
	assert_url_allowed(p, "http://evil.test@shop.test/");
	/* '\' ends the authority like '/' for http(s) */
	assert_url_refused(p, "http://evil.test\\@shop.test/", "egress-not-allowed");
	assert_url_refused(p, "http:\\\\evil.test/", "egress-not-allowed");
	assert_url_refused(p, "http:evil.test/", "egress-not-allowed");
	assert_url_refused(p, "http:///evil.test/", "egress-not-allowed");
	assert_url_refused(p, "http://evil.test#@shop.test/", "egress-not-allowed");
	assert_url_refused(p, "http://evil.test?@shop.test/", "egress-not-allowed");
	/* tabs and newlines vanish; leading spaces are skipped */
	assert_url_allowed(p, "http://sh\top.te\nst/");
	assert_url_allowed(p, "  http://shop.test/");
	/* percent-encoding in the host is decoded */
	assert_url_allowed(p, "http://%73hop.test/");
	assert_url_refused(p, "http://shop.test%00.evil.test/", "url-invalid");
	assert_url_refused(p, "http://shop.test%2fx/", "url-invalid");
	/* malformed */
	assert_url_refused(p, "http://", "url-invalid");
	assert_url_refused(p, "http://[::1/", "url-invalid");
	assert_url_refused(p, "http://[::1]x/", "url-invalid");
	assert_url_refused(p, "http://shop.test:99999/", "url-invalid");
	assert_url_refused(p, "http://shop.test:8a/", "url-invalid");
	assert_url_refused(p, "http://sh op.test/", "url-invalid");
	assert_url_refused(p, "http://1.2.3.4.5/", "url-invalid");
	assert_url_refused(p, "http://256.1.1.1/", "url-invalid");
	assert_url_refused(p, "http://foo.0x/", "url-invalid");
	assert_url_refused(p, "http://[fe80::1%25eth0]/", "url-invalid");
	assert_url_refused(p, "shop.test/page", "url-invalid");
	assert_url_refused(p, "", "url-invalid");
	assert_url_refused(p, NULL, "url-invalid");
#ifndef GB_HAVE_IDN2
	assert_url_refused(p,
	                   "http://b\xc3\xbc"
	                   "cher.test/",
	                   "url-invalid");
#endif
	policy_egress_free(p);
}

static void test_numeric_hosts(void **state)
{
	struct policy_egress *p;
	uint32_t a = 0;
	static const char *const metadata[] = {
		"http://169.254.169.254/latest/meta-data/",
		"http://2852039166/",
		"http://0xa9fea9fe/",
		"http://0XA9FEA9FE/",
		"http://0251.0376.0251.0376/",
		"http://0xA9.0xFE.0xA9.0xFE/",
		"http://169.254.43518/",
		"http://169.16689662/",
		"http://169.254.169.254./",
		"http://%31%36%39.254.169.254/",
		"http://[::ffff:169.254.169.254]/",
		"http://[::ffff:a9fe:a9fe]/",
		"http://[0:0:0:0:0:ffff:a9fe:a9fe]/",
		"http://user:pw@169.254.169.254:80/",
		"http://[fd00:ec2::254]/",
		"http://[64:ff9b::a9fe:a9fe]/",
		"http://[2002:a9fe:a9fe::1]/",
		"http://100.100.100.200/",
	};
	size_t i;

	(void)state;
	assert_int_equal(policy_ipv4_parse_whatwg("2852039166", &a), 1);
	assert_int_equal(a, 0xA9FEA9FEu);
	assert_int_equal(policy_ipv4_parse_whatwg("0x7f.1", &a), 1);
	assert_int_equal(a, 0x7F000001u);
	assert_int_equal(policy_ipv4_parse_whatwg("0x", &a), 1);
	assert_int_equal(a, 0);
	assert_int_equal(policy_ipv4_parse_whatwg("shop.test", &a), 0);
	assert_int_equal(policy_ipv4_parse_whatwg("1.2.3.test", &a), 0);
	assert_int_equal(policy_ipv4_parse_whatwg("4294967296", &a), -1);
	assert_int_equal(policy_ipv4_parse_whatwg("1.256.1", &a), -1);
	assert_int_equal(policy_ipv4_parse_whatwg("09.1.1.1", &a), -1);
	assert_int_equal(policy_ipv4_parse_whatwg("test.1", &a), -1);

	/* even an allowlist of "*" cannot reach these */
	p = policy_from("{\"allow\": [\"*\"], \"allow_private\": [\"10.0.0.0/8\", \"127.0.0.1\"]}");
	for (i = 0; i < sizeof(metadata) / sizeof(metadata[0]); i++) {
		struct policy_decision d;

		if (policy_egress_check_url(p, metadata[i], &d) == 0)
			fail_msg("%s was allowed", metadata[i]);
		if (strcmp(d.rule, "addr-metadata") && strcmp(d.rule, "addr-link-local"))
			fail_msg("%s refused by %s, expected a metadata/link-local rule",
			         metadata[i], d.rule);
	}
	assert_url_refused(p, "http://0/", "addr-unspecified");
	assert_url_refused(p, "http://0.0.0.0:8080/", "addr-unspecified");
	assert_url_refused(p, "http://[::]/", "addr-unspecified");
	assert_url_refused(p, "http://[fe80::1]/", "addr-link-local");
	assert_url_refused(p, "http://224.0.0.1/", "addr-multicast");
	assert_url_refused(p, "http://255.255.255.255/", "addr-reserved");
	/* named private ranges pass in any encoding; others do not */
	assert_url_allowed(p, "http://10.1.2.3/");
	assert_url_allowed(p, "http://0x0a010203/");
	assert_url_allowed(p, "http://127.0.0.1/");
	assert_url_allowed(p, "http://127.1/");
	assert_url_allowed(p, "http://[::ffff:127.0.0.1]/");
	assert_url_refused(p, "http://127.0.0.2/", "addr-loopback");
	assert_url_refused(p, "http://[::1]/", "addr-loopback");
	assert_url_refused(p, "http://192.168.1.1/", "addr-private");
	assert_url_refused(p, "http://3232235777/", "addr-private");
	assert_url_refused(p, "http://172.16.0.1/", "addr-private");
	assert_url_refused(p, "http://100.64.0.1/", "addr-private");
	assert_url_refused(p, "http://[fc00::1]/", "addr-private");
	assert_url_refused(p, "http://192.0.2.1/", "addr-special");
	assert_url_allowed(p, "http://93.184.215.14/");
	assert_url_allowed(p, "http://[2606:2800:21f:cb07:6820:80da:af6b:8b2c]/");
#ifdef GB_HAVE_IDN2
	/* fullwidth digits and ideographic dots map to an address */
	{
		struct policy_decision d;

		assert_int_equal(policy_egress_check_url(
		                     p,
		                     "http://\xef\xbc\x91\xef\xbc\x96\xef\xbc\x99\xe3\x80\x82"
		                     "254.169.254/",
		                     &d),
		                 -POLICY_EREFUSED);
	}
#endif
	policy_egress_free(p);
}

static void test_address_ranges(void **state)
{
	struct policy_egress *p;

	(void)state;
	p = policy_from("{\"allow_private\": [\"10.1.0.0/16\", \"fd12::/16\"]}");
	assert_addr(p, "93.184.215.14", "");
	assert_addr(p, "2606:2800:21f:cb07::1", "");
	assert_addr(p, "169.254.169.254", "addr-metadata");
	assert_addr(p, "::ffff:169.254.169.254", "addr-metadata");
	assert_addr(p, "::169.254.169.254", "addr-metadata");
	assert_addr(p, "fd00:ec2::254", "addr-metadata");
	assert_addr(p, "169.254.1.1", "addr-link-local");
	assert_addr(p, "fe80::1", "addr-link-local");
	assert_addr(p, "febf::1", "addr-link-local");
	assert_addr(p, "127.0.0.1", "addr-loopback");
	assert_addr(p, "::ffff:127.0.0.1", "addr-loopback");
	assert_addr(p, "::1", "addr-loopback");
	assert_addr(p, "10.0.0.1", "addr-private");
	assert_addr(p, "10.1.200.3", "");
	assert_addr(p, "::ffff:10.1.200.3", "");
	assert_addr(p, "64:ff9b::10.0.0.1", "addr-private");
	assert_addr(p, "2002:0a00:0001::", "addr-private");
	assert_addr(p, "fd12:1::1", "");
	assert_addr(p, "fd13::1", "addr-private");
	assert_addr(p, "0.0.0.0", "addr-unspecified");
	assert_addr(p, "::", "addr-unspecified");
	assert_addr(p, "ff02::1", "addr-multicast");
	assert_addr(p, "240.0.0.1", "addr-reserved");
	assert_addr(p, "2001:db8::1", "addr-special");
	assert_addr(p, "4000::1", "addr-reserved");
	policy_egress_free(p);

	/* an allow pattern that is an address names that address */
	p = policy_from("{\"allow\": [\"10.0.0.5\", \"[fd00::5]:8080\"]}");
	assert_url_allowed(p, "http://10.0.0.5/");
	assert_url_refused(p, "http://10.0.0.6/", "egress-not-allowed");
	assert_url_allowed(p, "http://[fd00::5]:8080/");
	policy_egress_free(p);
}

static void test_overrides(void **state)
{
	struct policy_egress *p;
	struct policy_decision d;

	(void)state;
	/* a name overridden to loopback is refused unless the address is named */
	p = policy_from("{\"allow\": [\"shop.test\"], \"hosts\": {\"Shop.Test.\": \"127.0.0.1\"}}");
	assert_url_refused(p, "http://shop.test/", "addr-loopback");
	assert_int_equal(policy_egress_check_url(p, "http://shop.test/", &d), -POLICY_EREFUSED);
	assert_string_equal(d.addr, "127.0.0.1");
	assert_string_equal(d.host, "shop.test");
	assert_non_null(strstr(d.message, "shop.test (resolved to 127.0.0.1)"));
	assert_non_null(policy_egress_override(p, "shop.test"));
	policy_egress_free(p);

	p = policy_from("{\"allow\": [\"shop.test\"], \"allow_private\": [\"127.0.0.1\"],"
	                " \"hosts\": {\"shop.test\": \"127.0.0.1\"}}");
	assert_url_allowed(p, "http://shop.test/");
	policy_egress_free(p);

	/* metadata stays refused whatever names it */
	p = policy_from("{\"allow\": [\"meta.test\"], \"hosts\": {\"meta.test\": "
	                "[\"93.184.215.14\", \"169.254.169.254\"]}}");
	assert_url_refused(p, "http://meta.test/", "addr-metadata");
	policy_egress_free(p);
}

static void test_messages_do_not_leak(void **state)
{
	struct policy_egress *p;
	struct policy_decision d;

	(void)state;
	p = policy_from("{\"allow\": [\"secret-intranet.test\", \"shop.test\"],"
	                " \"deny\": [\"*.ads.test\", \"hidden-deny.test\"]}");
	assert_int_equal(policy_egress_check_url(p, "https://evil.test/", &d), -POLICY_EREFUSED);
	assert_null(strstr(d.message, "secret"));
	assert_null(strstr(d.message, "shop"));
	assert_null(strstr(d.message, "hidden"));
	assert_non_null(strstr(d.message, "evil.test"));
	assert_string_equal(d.scope, "tenant");
	assert_int_equal(policy_egress_check_url(p, "https://x.ads.test/", &d), -POLICY_EREFUSED);
	assert_string_equal(d.pattern, "*.ads.test");
	assert_non_null(strstr(d.message, "*.ads.test"));
	assert_null(strstr(d.message, "hidden"));
	assert_null(strstr(d.message, "secret"));
	policy_egress_free(p);
}

/* Narrows base with a session config; fails on error. */
static struct policy_egress *narrow(const struct policy_egress *base, const char *text)
{
	json_t *j = json_loads(text, 0, NULL);
	struct policy_egress *p = NULL;
	char err[512] = "";

	assert_non_null(j);
	if (policy_egress_narrow(base, j, &p, err, sizeof(err)) != 0)
		fail_msg("narrowing failed: %s", err);
	json_decref(j);
	return p;
}

static void test_narrowing(void **state)
{
	struct policy_egress *tenant;
	struct policy_egress *s;
	struct policy_egress *s2;
	struct policy_decision d;
	json_t *j;
	char err[512] = "";

	(void)state;
	tenant = policy_from("{\"allow\": [\"*.example.com\", \"shop.test\"],"
	                     " \"allow_private\": [\"127.0.0.1\"],"
	                     " \"hosts\": {\"shop.test\": \"127.0.0.1\"}}");
	s = narrow(tenant, "{\"allow\": [\"shop.test\", \"evil.test\"]}");
	assert_url_allowed(s, "http://shop.test/");
	assert_int_equal(policy_egress_check_url(s, "https://www.example.com/", &d),
	                 -POLICY_EREFUSED);
	assert_string_equal(d.rule, "egress-not-allowed");
	assert_string_equal(d.scope, "session");
	/* a session cannot add what the tenant does not allow */
	assert_int_equal(policy_egress_check_url(s, "https://evil.test/", &d), -POLICY_EREFUSED);
	assert_string_equal(d.scope, "tenant");

	/* narrowed again: deny on top, and the copy outlives its base */
	s2 = narrow(s, "{\"deny\": [\"shop.test\"]}");
	policy_egress_free(s);
	assert_int_equal(policy_egress_check_url(s2, "http://shop.test/", &d), -POLICY_EREFUSED);
	assert_string_equal(d.rule, "egress-deny");
	assert_string_equal(d.scope, "session");
	policy_egress_free(s2);

	/* private addresses: inherited unless the session lists its own */
	s = narrow(tenant, "{\"allow_private\": []}");
	assert_int_equal(policy_egress_check_url(s, "http://shop.test/", &d), -POLICY_EREFUSED);
	assert_string_equal(d.rule, "addr-loopback");
	assert_string_equal(d.scope, "session");
	policy_egress_free(s);
	s = narrow(tenant, "{\"deny\": [\"*.example.com\"]}");
	assert_url_allowed(s, "http://shop.test/");
	policy_egress_free(s);
	/* and it cannot name more than the tenant */
	s = narrow(tenant, "{\"allow_private\": [\"10.0.0.0/8\"]}");
	assert_url_refused(s, "http://10.0.0.1/", "egress-not-allowed");
	policy_egress_free(s);

	j = json_loads("{\"hosts\": {\"x.test\": \"10.0.0.1\"}}", 0, NULL);
	assert_int_equal(policy_egress_narrow(tenant, j, &s, err, sizeof(err)), -POLICY_EINVAL);
	assert_null(s);
	assert_non_null(strstr(err, "tenant's policy, not a session's"));
	json_decref(j);

	/* NULL: a plain copy */
	assert_int_equal(policy_egress_narrow(tenant, NULL, &s, err, sizeof(err)), 0);
	assert_url_allowed(s, "https://www.example.com/");
	policy_egress_free(s);
	policy_egress_free(tenant);
}

static void test_config_errors(void **state)
{
	(void)state;
	assert_config_error("[]", "must be a JSON object");
	assert_config_error("{\"alow\": [\"x.test\"]}", "egress.alow is not a known key");
	assert_config_error("{\"allow\": \"x.test\"}", "egress.allow must be an array");
	assert_config_error("{\"allow\": [\"ok.test\", 3]}", "egress.allow[1] must be a string");
	assert_config_error("{\"allow\": [\"ok.test\", \"*foo.test\"]}",
	                    "egress.allow[1]: \"*foo.test\" is not a host pattern");
	assert_config_error("{\"deny\": [\"http://x.test/path\"]}",
	                    "egress.deny[0]: \"http://x.test/path\" is not a host pattern");
	assert_config_error("{\"allow\": [\"ftp://x.test\"]}", "http, https, ws or wss");
	assert_config_error("{\"default\": \"maybe\"}", "egress.default must be");
	assert_config_error("{\"default\": \"allow\", \"allow\": [\"x.test\"]}",
	                    "drop one of them");
	assert_config_error("{\"allow_private\": [\"169.254.0.0/16\"]}", "always refused");
	assert_config_error("{\"allow_private\": [\"169.254.169.254\"]}", "always refused");
	assert_config_error("{\"allow_private\": [\"0.0.0.0/0\"]}", "always refused");
	assert_config_error("{\"allow_private\": [\"::/0\"]}", "always refused");
	assert_config_error("{\"allow_private\": [\"fe80::/64\"]}", "always refused");
	assert_config_error("{\"allow_private\": [\"10.0.0.1/8\"]}", "not an address or CIDR");
	assert_config_error("{\"allow_private\": [\"10.0.0.0/33\"]}", "not an address or CIDR");
	assert_config_error("{\"allow_private\": [\"localhost\"]}", "not an address or CIDR");
	assert_config_error("{\"allow_private\": \"10.0.0.0/8\"}", "must be an array");
	assert_config_error("{\"hosts\": [\"x\"]}", "egress.hosts must be an object");
	assert_config_error("{\"hosts\": {\"x.test\": \"not-an-ip\"}}",
	                    "egress.hosts[\"x.test\"] must be an IP address");
	assert_config_error("{\"hosts\": {\"x.test\": \"0x7f.1\"}}",
	                    "egress.hosts[\"x.test\"] must be an IP address");
	assert_config_error("{\"hosts\": {\"x.test\": []}}", "must be 1 to");
	assert_config_error("{\"hosts\": {\"10.0.0.1\": \"10.0.0.1\"}}", "is not a host name");
	assert_config_error("{\"hosts\": {\"a.test\": \"10.0.0.1\", \"A.TEST.\": \"10.0.0.2\"}}",
	                    "listed twice");
}

static void test_refusal_json(void **state)
{
	struct policy_refusal r;
	json_t *j;

	(void)state;
	memset(&r, 0, sizeof(r));
	r.time = "2026-11-29T18:20:01.123Z";
	r.session = "s1";
	r.layer = "proxy";
	r.url = "http://evil.test/\xff";
	r.host = "evil.test";
	r.addr = "";
	r.rule = "egress-not-allowed";
	r.message = "evil.test:80 is not allowed";
	j = policy_refusal_to_json(&r);
	assert_non_null(j);
	assert_string_equal(json_string_value(json_object_get(j, "layer")), "proxy");
	assert_string_equal(json_string_value(json_object_get(j, "url")), "http://evil.test/?");
	assert_null(json_object_get(j, "addr"));
	assert_null(json_object_get(j, "target"));
	json_decref(j);
}

/* A portless pattern on a loopback-mapped name means ports 80 and 443: another
 * port on the same address is refused, by the name and by the address, and
 * the message names the rule, the port and the line that would allow it. */
static void test_portless_means_default_ports(void **state)
{
	struct policy_egress *p;
	struct policy_egress *s;
	struct policy_decision d;

	(void)state;
	p = policy_from("{\"allow\": [\"shop.test\"], \"allow_private\": [\"127.0.0.1\"],"
	                " \"hosts\": {\"shop.test\": \"127.0.0.1\"}}");
	policy_egress_set_source(p, "/etc/glassbox/policy.json");
	assert_url_allowed(p, "http://shop.test/");
	assert_url_allowed(p, "https://shop.test./");
	assert_url_allowed(p, "wss://shop.test/socket");
	assert_url_refused(p, "http://shop.test:443/", "egress-not-allowed");
	assert_int_equal(policy_egress_check_url(p, "http://Shop.Test.:8080/x", &d),
	                 -POLICY_EREFUSED);
	assert_string_equal(d.rule, "egress-not-allowed");
	assert_string_equal(d.host, "shop.test");
	assert_non_null(strstr(d.message, "shop.test port 8080"));
	assert_non_null(strstr(d.message, "rule egress-not-allowed"));
	assert_non_null(strstr(d.message, "only ports 80 and 443"));
	assert_non_null(strstr(d.message, "\"egress\": {\"allow\": [\"shop.test:8080\"]}"));
	assert_non_null(strstr(d.message, "/etc/glassbox/policy.json"));
	/* the address of the name, on another port: not named by allow_private */
	assert_url_refused(p, "http://127.0.0.1:8080/", "egress-not-allowed");
	policy_egress_free(p);

	/* the allowlist names the port; allow_private does not */
	p = policy_from("{\"allow\": [\"shop.test:8080\"], \"allow_private\": [\"127.0.0.1\"],"
	                " \"hosts\": {\"shop.test\": \"127.0.0.1\"}}");
	assert_int_equal(policy_egress_check_url(p, "http://shop.test:8080/", &d),
	                 -POLICY_EREFUSED);
	assert_string_equal(d.rule, "addr-loopback");
	assert_non_null(strstr(d.message, "shop.test (resolved to 127.0.0.1) port 8080"));
	assert_non_null(strstr(d.message, "\"egress\": {\"allow_private\": [\"127.0.0.1:8080\"]}"));
	assert_non_null(strstr(d.message, "add to the tenant's policy"));
	assert_url_refused(p, "http://shop.test/", "egress-not-allowed");
	policy_egress_free(p);

	/* allow_private with a port, with ":*", and an allow literal with a port */
	p = policy_from("{\"allow_private\": [\"127.0.0.1:8080\", \"10.0.0.0/8:*\","
	                " \"[::1]:9000\", \"fd12::/16\"]}");
	assert_url_allowed(p, "http://127.0.0.1:8080/");
	assert_url_refused(p, "http://127.0.0.1:8081/", "addr-loopback");
	assert_url_refused(p, "http://127.0.0.1/", "addr-loopback");
	assert_url_allowed(p, "http://10.9.8.7:1/");
	assert_url_allowed(p, "http://[::1]:9000/");
	assert_url_refused(p, "http://[::1]:9001/", "addr-loopback");
	assert_url_allowed(p, "https://[fd12::1]/");
	assert_url_refused(p, "http://[fd12::1]:8080/", "addr-private");
	policy_egress_free(p);
	p = policy_from("{\"allow\": [\"127.0.0.1:8080\", \"[::1]\"]}");
	assert_url_allowed(p, "http://127.0.0.1:8080/");
	assert_url_allowed(p, "http://[::1]/");
	assert_url_refused(p, "http://127.0.0.1:8081/", "egress-not-allowed");
	assert_url_refused(p, "http://[::1]:8080/", "egress-not-allowed");
	policy_egress_free(p);
	/* the line to add is a valid entry for IPv6 too */
	p = policy_from("{\"allow\": [\"shop.test\"]}");
	assert_int_equal(policy_egress_check_url(p, "http://[fd00::1]/", &d), -POLICY_EREFUSED);
	assert_non_null(strstr(d.message, "{\"allow\": [\"[fd00::1]\"]}"));
	policy_egress_free(p);

	/* ":*": every port */
	p = policy_from("{\"allow\": [\"shop.test:*\"], \"allow_private\": [\"127.0.0.1:*\"],"
	                " \"hosts\": {\"shop.test\": \"127.0.0.1\"}}");
	assert_url_allowed(p, "http://shop.test:8080/");
	assert_url_allowed(p, "https://shop.test:1/");
	/* a session's narrowing keeps the source and says it is the session's */
	s = narrow(p, "{\"allow\": [\"shop.test\"]}");
	assert_int_equal(policy_egress_check_url(s, "http://shop.test:8080/", &d),
	                 -POLICY_EREFUSED);
	assert_string_equal(d.scope, "session");
	assert_non_null(strstr(d.message, "narrow"));
	policy_egress_free(s);
	policy_egress_free(p);

	/* a deny pattern without a port denies every port */
	p = policy_from("{\"deny\": [\"evil.test\", \"https://bad.test\"]}");
	assert_url_refused(p, "http://evil.test:8080/", "egress-deny");
	assert_url_refused(p, "http://evil.test./", "egress-deny");
	assert_url_refused(p, "https://bad.test:8443/", "egress-deny");
	assert_url_refused(p, "wss://bad.test:8443/", "egress-deny");
	assert_url_allowed(p, "http://bad.test:8080/");
	assert_int_equal(policy_egress_check_url(p, "https://evil.test/", &d), -POLICY_EREFUSED);
	assert_non_null(strstr(d.message, "remove \"evil.test\" from \"egress\": {\"deny\""));
	policy_egress_free(p);

	/* no allowlist: a public host on any port */
	p = policy_from(NULL);
	assert_url_allowed(p, "http://public.test:8080/");
	policy_egress_free(p);

	assert_config_error("{\"allow_private\": [\"127.0.0.1:0\"]}", "optional port");
	assert_config_error("{\"allow_private\": [\"127.0.0.1:x\"]}", "optional port");
	assert_config_error("{\"allow_private\": [\"::1:8080:\"]}", "optional port");
	assert_config_error("{\"allow_private\": [\"[::1]8080\"]}", "optional port");
	assert_config_error("{\"allow_private\": [\"169.254.0.0/16:*\"]}", "always refused");
	assert_config_error("{\"allow\": [\"shop.test:8080:*\"]}", "two ports");
}

/* Chromium's own requests: only the proxy's refusals, only its service hosts. */
static void test_browser_own_requests(void **state)
{
	(void)state;
	assert_true(policy_refusal_is_browser_own("proxy", "update.googleapis.com"));
	assert_true(policy_refusal_is_browser_own("proxy", "accounts.google.com"));
	assert_false(policy_refusal_is_browser_own("fetch", "update.googleapis.com"));
	assert_false(policy_refusal_is_browser_own("tool", "accounts.google.com"));
	assert_false(policy_refusal_is_browser_own("proxy", "fonts.googleapis.com"));
	assert_false(policy_refusal_is_browser_own("proxy", "evil.update.googleapis.com"));
	assert_false(policy_refusal_is_browser_own("proxy", NULL));
	assert_false(policy_refusal_is_browser_own(NULL, "accounts.google.com"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_patterns),
		cmocka_unit_test(test_deny_before_allow_and_defaults),
		cmocka_unit_test(test_schemes_and_ports),
		cmocka_unit_test(test_hostile_urls),
		cmocka_unit_test(test_numeric_hosts),
		cmocka_unit_test(test_address_ranges),
		cmocka_unit_test(test_overrides),
		cmocka_unit_test(test_messages_do_not_leak),
		cmocka_unit_test(test_narrowing),
		cmocka_unit_test(test_config_errors),
		cmocka_unit_test(test_refusal_json),
		cmocka_unit_test(test_portless_means_default_ports),
		cmocka_unit_test(test_browser_own_requests),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

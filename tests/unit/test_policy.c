/*
 * test_policy.c - tool URL checks: web pages pass, everything else is
 * refused with the rule that refused it.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "policy/policy.h"

#include <string.h>

static void assert_refused(const char *url, const char *want_rule)
{
	char rule[64] = "", err[256] = "";

	assert_int_equal(policy_check_tool_url(url, rule, sizeof(rule), err, sizeof(err)), -1);
	assert_string_equal(rule, want_rule);
	assert_true(strlen(err) > 10);
}

static void test_web_pages_pass(void **state)
{
	char rule[64], err[256];

	(void)state;
	assert_int_equal(policy_check_tool_url("http://shop.test/", rule, 64, err, 256), 0);
	assert_int_equal(policy_check_tool_url("HTTPS://Example.com/x?y#z", rule, 64, err, 256), 0);
	assert_int_equal(policy_check_tool_url("about:blank", rule, 64, err, 256), 0);
	assert_int_equal(policy_check_tool_url("About:Blank#top", rule, 64, err, 256), 0);
}

static void test_dangerous_schemes_refused(void **state)
{
	(void)state;
	assert_refused("file:///etc/passwd", "scheme-file");
	assert_refused("FILE:///etc/passwd", "scheme-file");
	assert_refused("  file:///etc/passwd", "scheme-file");
	assert_refused("chrome://version", "scheme-chrome");
	assert_refused("chrome-extension://abc/x.html", "scheme-chrome-extension");
	assert_refused("devtools://devtools/bundled/inspector.html", "scheme-devtools");
	assert_refused("view-source:http://shop.test/", "scheme-view-source");
	assert_refused("javascript:alert(1)", "scheme-javascript");
	assert_refused("data:text/html,<script>alert(1)</script>", "scheme-data");
	assert_refused("about:settings", "scheme-about");
	assert_refused("about:blankx", "scheme-about");
	/* srcdoc is a frame's document, not a page a tool opens */
	assert_refused("about:srcdoc", "scheme-about");
	assert_refused("ftp://example.com/", "scheme-ftp");
}

static void test_not_a_url(void **state)
{
	(void)state;
	assert_refused("shop.test/page", "url-invalid");
	assert_refused("", "url-invalid");
	assert_refused(":nothing", "url-invalid");
	assert_refused("1http://x", "url-invalid");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_web_pages_pass),
		cmocka_unit_test(test_dangerous_schemes_refused),
		cmocka_unit_test(test_not_a_url),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

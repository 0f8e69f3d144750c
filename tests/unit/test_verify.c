/*
 * test_verify.c - expectations: their validation, each check passing and
 * failing with what it observed, and the English explanation.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "verify/verify.h"

/* ---- helpers ------------------------------------------------------------ */

static json_t *parse(const char *text)
{
	json_error_t jerr;
	json_t *j = json_loads(text, 0, &jerr);

	if (!j)
		fail_msg("bad test JSON %s: %s", text, jerr.text);
	return j;
}

/* Validates text; returns the error message ("" when valid). */
static const char *validate(const char *text)
{
	static char err[512];
	json_t *j = parse(text);

	err[0] = '\0';
	if (verify_expect_validate(j, err, sizeof(err)) == 0)
		err[0] = '\0';
	else
		assert_true(err[0] != '\0');
	json_decref(j);
	return err;
}

static const struct verify_response responses[] = {
	{ .url = "https://app.test/api/items?page=1", .method = "GET", .status = 200 },
	{ .url = "https://app.test/api/save", .method = "POST", .status = 500 },
	{ .url = "https://app.test/api/save", .method = "POST", .status = 201 },
};

static struct verify_state page_state(void)
{
	struct verify_state st = {
		.url = "https://app.test/items/42",
		.title = "Edit item",
		.body_text = "Item 42\nName: Widget\nSaved at 10:02",
		.target_value = "Widget",
		.has_target_value = 1,
		.responses = responses,
		.n_responses = 3,
	};
	return st;
}

/* Runs expect against st; returns the verdicts (caller decrefs). */
static json_t *check(const char *expect_text, const struct verify_state *st, int *all_ok)
{
	json_t *expect = parse(expect_text);
	json_t *verdicts = NULL;

	assert_int_equal(verify_expect_check(expect, st, &verdicts, all_ok), 0);
	assert_non_null(verdicts);
	json_decref(expect);
	return verdicts;
}

/* The single verdict of a one-check expectation. */
static json_t *only_verdict(json_t *verdicts)
{
	assert_int_equal(json_array_size(verdicts), 1);
	return json_array_get(verdicts, 0);
}

static void assert_verdict(json_t *v, const char *check, int ok)
{
	assert_string_equal(json_string_value(json_object_get(v, "check")), check);
	assert_int_equal(json_is_true(json_object_get(v, "ok")), ok);
	assert_int_equal(json_is_false(json_object_get(v, "ok")), !ok);
	assert_non_null(json_object_get(v, "expected"));
	assert_non_null(json_object_get(v, "observed"));
}

static const char *observed_str(json_t *v)
{
	const char *s = json_string_value(json_object_get(v, "observed"));

	assert_non_null(s);
	return s;
}

/* ---- validation ----------------------------------------------------------- */

static void test_validate_accepts(void **state)
{
	(void)state;
	assert_string_equal(validate("{}"), "");
	assert_string_equal(
	    validate("{\"url\": \"https://a.test/\", \"urlContains\": \"/a\", "
	             "\"title\": \"\", \"text\": \"Saved\", \"textGone\": \"Saving\", "
	             "\"value\": \"\", \"target\": \"e12\", "
	             "\"response\": {\"url\": \"/api\", \"status\": 200}}"),
	    "");
	assert_string_equal(validate("{\"response\": {\"url\": \"\"}}"), "");
	assert_int_equal(verify_expect_validate(NULL, NULL, 0), 0);
}

static void test_validate_rejects(void **state)
{
	(void)state;
	assert_string_equal(validate("[]"),
	                    "expect must be an object such as {\"title\": \"Saved\"}");
	assert_string_equal(validate("{\"title\": 3}"), "expect.title must be a string");
	assert_string_equal(validate("{\"url\": null}"), "expect.url must be a string");
	assert_string_equal(validate("{\"urlContains\": [\"a\"]}"),
	                    "expect.urlContains must be a string");
	assert_string_equal(validate("{\"value\": 42}"), "expect.value must be a string");
	assert_string_equal(validate("{\"text\": true}"), "expect.text must be a string");
	assert_string_equal(validate("{\"text\": \"\"}"), "expect.text must not be empty");
	assert_string_equal(validate("{\"textGone\": \"\"}"), "expect.textGone must not be empty");
	assert_string_equal(validate("{\"Title\": \"x\"}"),
	                    "expect has an unknown key 'Title' (allowed: url, urlContains, title, "
	                    "text, textGone, value, target, response)");
	assert_string_equal(validate("{\"target\": \"e1\"}"),
	                    "expect.target names the element whose value to check: give "
	                    "expect.value too");
	assert_string_equal(validate("{\"target\": 1, \"value\": \"a\"}"),
	                    "expect.target must be a string");
	assert_string_equal(validate("{\"response\": \"/api\"}"),
	                    "expect.response must be an object like {\"url\": \"/api/save\", "
	                    "\"status\": 200}");
	assert_string_equal(validate("{\"response\": {\"status\": 200}}"),
	                    "expect.response.url is required: a part of the response's URL");
	assert_string_equal(validate("{\"response\": {\"url\": 5}}"),
	                    "expect.response.url must be a string");
	assert_string_equal(validate("{\"response\": {\"url\": \"/a\", \"status\": \"200\"}}"),
	                    "expect.response.status must be an integer");
	assert_string_equal(validate("{\"response\": {\"url\": \"/a\", \"status\": 200.0}}"),
	                    "expect.response.status must be an integer");
	assert_string_equal(validate("{\"response\": {\"url\": \"/a\", \"status\": 42}}"),
	                    "expect.response.status must be an HTTP status (100 to 599), not 42");
	assert_string_equal(validate("{\"response\": {\"url\": \"/a\", \"method\": \"GET\"}}"),
	                    "expect.response has an unknown key 'method' (allowed: url, status)");
}

static void test_validate_string_ceiling(void **state)
{
	char *big = malloc(VERIFY_MAX_STRING_BYTES + 2);
	json_t *expect;
	char err[256] = "";

	(void)state;
	assert_non_null(big);
	memset(big, 'a', VERIFY_MAX_STRING_BYTES + 1);
	big[VERIFY_MAX_STRING_BYTES + 1] = '\0';
	expect = json_pack("{s:s}", "text", big);
	assert_int_equal(verify_expect_validate(expect, err, sizeof(err)), -1);
	assert_string_equal(err, "expect.text is longer than 65536 bytes");
	json_decref(expect);
	big[VERIFY_MAX_STRING_BYTES] = '\0';
	expect = json_pack("{s:s}", "text", big);
	assert_int_equal(verify_expect_validate(expect, err, sizeof(err)), 0);
	json_decref(expect);
	free(big);
}

static void test_needs(void **state)
{
	json_t *e;

	(void)state;
	e = parse("{\"text\": \"a\"}");
	assert_true(verify_expect_needs_text(e));
	assert_false(verify_expect_needs_value(e));
	json_decref(e);
	e = parse("{\"textGone\": \"a\", \"value\": \"v\", \"target\": \"e3\"}");
	assert_true(verify_expect_needs_text(e));
	assert_true(verify_expect_needs_value(e));
	assert_string_equal(verify_expect_target(e), "e3");
	json_decref(e);
	e = parse("{\"title\": \"a\"}");
	assert_false(verify_expect_needs_text(e));
	assert_false(verify_expect_needs_value(e));
	assert_null(verify_expect_target(e));
	json_decref(e);
	assert_false(verify_expect_needs_text(NULL));
	assert_false(verify_expect_needs_value(NULL));
}

/* ---- checks ------------------------------------------------------------- */

static void test_check_empty_and_null(void **state)
{
	struct verify_state st = page_state();
	json_t *verdicts = NULL;
	int ok = 0;

	(void)state;
	assert_int_equal(verify_expect_check(NULL, &st, &verdicts, &ok), 0);
	assert_int_equal(ok, 1);
	assert_int_equal(json_array_size(verdicts), 0);
	json_decref(verdicts);
	verdicts = check("{}", &st, &ok);
	assert_int_equal(ok, 1);
	assert_int_equal(json_array_size(verdicts), 0);
	json_decref(verdicts);
}

static void test_check_url(void **state)
{
	struct verify_state st = page_state();
	json_t *verdicts;
	json_t *v;
	int ok;

	(void)state;
	verdicts = check("{\"url\": \"https://app.test/items/42\"}", &st, &ok);
	v = only_verdict(verdicts);
	assert_verdict(v, "url", 1);
	assert_int_equal(ok, 1);
	assert_string_equal(observed_str(v), "https://app.test/items/42");
	json_decref(verdicts);

	/* exact: a prefix is not enough */
	verdicts = check("{\"url\": \"https://app.test/items\"}", &st, &ok);
	v = only_verdict(verdicts);
	assert_verdict(v, "url", 0);
	assert_int_equal(ok, 0);
	assert_string_equal(json_string_value(json_object_get(v, "expected")),
	                    "https://app.test/items");
	assert_string_equal(observed_str(v), "https://app.test/items/42");
	json_decref(verdicts);

	verdicts = check("{\"urlContains\": \"/items/\"}", &st, &ok);
	assert_verdict(only_verdict(verdicts), "urlContains", 1);
	assert_int_equal(ok, 1);
	json_decref(verdicts);

	verdicts = check("{\"urlContains\": \"/orders/\"}", &st, &ok);
	assert_verdict(only_verdict(verdicts), "urlContains", 0);
	assert_int_equal(ok, 0);
	json_decref(verdicts);
}

static void test_check_title(void **state)
{
	struct verify_state st = page_state();
	json_t *verdicts;
	int ok;

	(void)state;
	verdicts = check("{\"title\": \"Edit item\"}", &st, &ok);
	assert_verdict(only_verdict(verdicts), "title", 1);
	assert_int_equal(ok, 1);
	json_decref(verdicts);

	verdicts = check("{\"title\": \"Edit\"}", &st, &ok);
	assert_verdict(only_verdict(verdicts), "title", 0);
	assert_string_equal(observed_str(only_verdict(verdicts)), "Edit item");
	assert_int_equal(ok, 0);
	json_decref(verdicts);
}

static void test_check_text(void **state)
{
	struct verify_state st = page_state();
	json_t *verdicts;
	int ok;

	(void)state;
	verdicts = check("{\"text\": \"Name: Widget\"}", &st, &ok);
	assert_verdict(only_verdict(verdicts), "text", 1);
	assert_string_equal(observed_str(only_verdict(verdicts)), "present");
	assert_int_equal(ok, 1);
	json_decref(verdicts);

	verdicts = check("{\"text\": \"Done\"}", &st, &ok);
	assert_verdict(only_verdict(verdicts), "text", 0);
	assert_string_equal(observed_str(only_verdict(verdicts)), "absent");
	assert_int_equal(ok, 0);
	json_decref(verdicts);

	verdicts = check("{\"textGone\": \"Saving\"}", &st, &ok);
	assert_verdict(only_verdict(verdicts), "textGone", 1);
	assert_string_equal(observed_str(only_verdict(verdicts)), "absent");
	assert_int_equal(ok, 1);
	json_decref(verdicts);

	verdicts = check("{\"textGone\": \"Saved at\"}", &st, &ok);
	assert_verdict(only_verdict(verdicts), "textGone", 0);
	assert_string_equal(observed_str(only_verdict(verdicts)), "present");
	assert_int_equal(ok, 0);
	json_decref(verdicts);
}

static void test_check_value(void **state)
{
	struct verify_state st = page_state();
	json_t *verdicts;
	json_t *v;
	int ok;

	(void)state;
	verdicts = check("{\"value\": \"Widget\"}", &st, &ok);
	v = only_verdict(verdicts);
	assert_verdict(v, "value", 1);
	assert_null(json_object_get(v, "target"));
	assert_int_equal(ok, 1);
	json_decref(verdicts);

	verdicts = check("{\"value\": \"Gadget\", \"target\": \"e7\"}", &st, &ok);
	v = only_verdict(verdicts);
	assert_verdict(v, "value", 0);
	assert_string_equal(observed_str(v), "Widget");
	assert_string_equal(json_string_value(json_object_get(v, "target")), "e7");
	assert_int_equal(ok, 0);
	json_decref(verdicts);

	/* an empty value is a value */
	st.target_value = "";
	verdicts = check("{\"value\": \"\"}", &st, &ok);
	assert_verdict(only_verdict(verdicts), "value", 1);
	json_decref(verdicts);
}

static void test_check_response(void **state)
{
	struct verify_state st = page_state();
	json_t *verdicts;
	json_t *v;
	int ok;

	(void)state;
	/* the second /api/save response has the status */
	verdicts = check("{\"response\": {\"url\": \"/api/save\", \"status\": 201}}", &st, &ok);
	v = only_verdict(verdicts);
	assert_verdict(v, "response", 1);
	assert_string_equal(observed_str(v), "POST https://app.test/api/save 201");
	{
		json_t *want = json_pack("{s:s, s:i}", "url", "/api/save", "status", 201);

		assert_true(json_equal(json_object_get(v, "expected"), want));
		json_decref(want);
	}
	assert_int_equal(ok, 1);
	json_decref(verdicts);

	/* without status: the first whose URL matches */
	verdicts = check("{\"response\": {\"url\": \"/api/save\"}}", &st, &ok);
	assert_string_equal(observed_str(only_verdict(verdicts)),
	                    "POST https://app.test/api/save 500");
	assert_int_equal(ok, 1);
	json_decref(verdicts);

	/* URL matches, status does not: show what was seen */
	verdicts = check("{\"response\": {\"url\": \"/api/items\", \"status\": 204}}", &st, &ok);
	v = only_verdict(verdicts);
	assert_verdict(v, "response", 0);
	assert_string_equal(observed_str(v), "GET https://app.test/api/items?page=1 200");
	assert_int_equal(ok, 0);
	json_decref(verdicts);

	verdicts = check("{\"response\": {\"url\": \"/api/delete\"}}", &st, &ok);
	v = only_verdict(verdicts);
	assert_verdict(v, "response", 0);
	assert_string_equal(observed_str(v), "no response matched");
	assert_int_equal(ok, 0);
	json_decref(verdicts);

	st.n_responses = 0;
	verdicts = check("{\"response\": {\"url\": \"\"}}", &st, &ok);
	assert_string_equal(observed_str(only_verdict(verdicts)), "no response matched");
	assert_int_equal(ok, 0);
	json_decref(verdicts);
}

static void test_check_order_and_all_ok(void **state)
{
	struct verify_state st = page_state();
	json_t *verdicts;
	int ok;
	static const char *const order[] = { "url",      "urlContains", "title",   "text",
		                             "textGone", "value",       "response" };
	size_t i;

	(void)state;
	verdicts = check("{\"response\": {\"url\": \"/api/save\", \"status\": 201}, "
	                 "\"value\": \"Widget\", \"textGone\": \"Saving\", \"text\": \"Widget\", "
	                 "\"title\": \"Edit item\", \"urlContains\": \"items\", "
	                 "\"url\": \"https://app.test/items/42\"}",
	                 &st, &ok);
	assert_int_equal(json_array_size(verdicts), 7);
	for (i = 0; i < 7; i++)
		assert_verdict(json_array_get(verdicts, i), order[i], 1);
	assert_int_equal(ok, 1);
	json_decref(verdicts);

	/* one failing check makes all_ok 0 */
	verdicts = check("{\"title\": \"Edit item\", \"text\": \"Nope\"}", &st, &ok);
	assert_int_equal(json_array_size(verdicts), 2);
	assert_verdict(json_array_get(verdicts, 0), "title", 1);
	assert_verdict(json_array_get(verdicts, 1), "text", 0);
	assert_int_equal(ok, 0);
	json_decref(verdicts);
}

static void test_check_state_not_gathered(void **state)
{
	struct verify_state st = { 0 };
	json_t *verdicts;
	size_t i;
	int ok;

	(void)state;
	verdicts = check("{\"url\": \"a\", \"title\": \"t\", \"text\": \"x\", \"textGone\": \"y\", "
	                 "\"value\": \"\"}",
	                 &st, &ok);
	assert_int_equal(json_array_size(verdicts), 5);
	for (i = 0; i < 5; i++) {
		json_t *v = json_array_get(verdicts, i);

		assert_true(json_is_false(json_object_get(v, "ok")));
		assert_true(json_is_null(json_object_get(v, "observed")));
	}
	assert_int_equal(ok, 0);
	json_decref(verdicts);
}

static void test_check_truncates_observed(void **state)
{
	struct verify_state st = page_state();
	char title[600];
	json_t *verdicts;
	const char *seen;
	size_t i;
	int ok;

	(void)state;
	/* 250 two-byte characters (é) */
	for (i = 0; i < 250; i++) {
		title[2 * i] = (char)0xc3;
		title[2 * i + 1] = (char)0xa9;
	}
	title[500] = '\0';
	st.title = title;
	verdicts = check("{\"title\": \"short\"}", &st, &ok);
	seen = observed_str(only_verdict(verdicts));
	assert_int_equal(strlen(seen), 200 * 2 + 3);
	assert_memory_equal(seen, title, 400);
	assert_string_equal(seen + 400, "\xe2\x80\xa6");
	json_decref(verdicts);

	/* exactly 200 characters: not cut */
	title[400] = '\0';
	verdicts = check("{\"title\": \"short\"}", &st, &ok);
	assert_string_equal(observed_str(only_verdict(verdicts)), title);
	json_decref(verdicts);

	/* the comparison uses the whole string */
	memset(title, 'x', 450);
	title[450] = '\0';
	{
		json_t *e = json_pack("{s:s}", "title", title);
		json_t *v = NULL;

		assert_int_equal(verify_expect_check(e, &st, &v, &ok), 0);
		assert_int_equal(ok, 1);
		json_decref(v);
		json_decref(e);
	}
}

static void test_check_invalid_expect(void **state)
{
	struct verify_state st = page_state();
	json_t *e = parse("{\"title\": 1}");
	json_t *verdicts = (json_t *)1;
	int ok = 1;

	(void)state;
	assert_int_equal(verify_expect_check(e, &st, &verdicts, &ok), -1);
	assert_null(verdicts);
	assert_int_equal(ok, 0);
	json_decref(e);
}

/* ---- explanation ------------------------------------------------------- */

static char *explain(const char *expect_text, const struct verify_state *st)
{
	int ok;
	json_t *verdicts = check(expect_text, st, &ok);
	char *text = verify_explain_failures(verdicts);

	json_decref(verdicts);
	return text;
}

static void test_explain(void **state)
{
	struct verify_state st = page_state();
	struct verify_state none = { 0 };
	char *text;

	(void)state;
	text = explain("{\"title\": \"Saved\", \"text\": \"Done\"}", &st);
	assert_string_equal(text, "expected title \"Saved\" but saw \"Edit item\"; expected text "
	                          "\"Done\" on the page but it is not there");
	free(text);

	text = explain("{\"url\": \"https://app.test/\", \"urlContains\": \"/orders\", "
	               "\"textGone\": \"Widget\", \"value\": \"Gadget\", \"target\": \"e7\", "
	               "\"response\": {\"url\": \"/api/items\", \"status\": 204}}",
	               &st);
	assert_string_equal(
	    text, "expected URL \"https://app.test/\" but saw \"https://app.test/items/42\"; "
	          "expected the URL to contain \"/orders\" but saw "
	          "\"https://app.test/items/42\"; "
	          "expected text \"Widget\" to be gone from the page but it is still there; "
	          "expected the value of \"e7\" to be \"Gadget\" but saw \"Widget\"; "
	          "expected a response whose URL contains \"/api/items\" with status 204 "
	          "but saw \"GET https://app.test/api/items?page=1 200\"");
	free(text);

	text = explain("{\"response\": {\"url\": \"/x\"}, \"value\": \"v\"}", &st);
	assert_string_equal(text, "expected value \"v\" but saw \"Widget\"; expected a response "
	                          "whose URL contains \"/x\" but no response matched");
	free(text);

	text = explain("{\"title\": \"T\", \"text\": \"a\", \"value\": \"v\"}", &none);
	assert_string_equal(text, "expected title \"T\" but the title could not be read; expected "
	                          "text \"a\" on the page but the page text could not be read; "
	                          "expected value \"v\" but the value could not be read");
	free(text);

	/* nothing failed */
	assert_null(explain("{\"title\": \"Edit item\"}", &st));
	assert_null(explain("{}", &st));
	assert_null(verify_explain_failures(NULL));
}

static void test_explain_quotes_and_other_checks(void **state)
{
	json_t *verdicts;
	char *text;

	(void)state;
	verdicts = parse("[{\"check\": \"title\", \"expected\": \"Say \\\"hi\\\"\", "
	                 "\"observed\": \"line1\\nline2\\\\\", \"ok\": false},"
	                 " {\"check\": \"no_console_errors\", \"expected\": 0, \"observed\": "
	                 "[\"TypeError: x\"], \"ok\": false},"
	                 " {\"check\": \"dialog\", \"expected\": null, \"observed\": null, "
	                 "\"ok\": true}]");
	text = verify_explain_failures(verdicts);
	assert_string_equal(text,
	                    "expected title \"Say \\\"hi\\\"\" but saw \"line1\\nline2\\\\\"; "
	                    "check \"no_console_errors\" failed: expected 0 but saw "
	                    "[\"TypeError: x\"]");
	assert_null(strchr(text, '\n'));
	free(text);
	json_decref(verdicts);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_validate_accepts),
		cmocka_unit_test(test_validate_rejects),
		cmocka_unit_test(test_validate_string_ceiling),
		cmocka_unit_test(test_needs),
		cmocka_unit_test(test_check_empty_and_null),
		cmocka_unit_test(test_check_url),
		cmocka_unit_test(test_check_title),
		cmocka_unit_test(test_check_text),
		cmocka_unit_test(test_check_value),
		cmocka_unit_test(test_check_response),
		cmocka_unit_test(test_check_order_and_all_ok),
		cmocka_unit_test(test_check_state_not_gathered),
		cmocka_unit_test(test_check_truncates_observed),
		cmocka_unit_test(test_check_invalid_expect),
		cmocka_unit_test(test_explain),
		cmocka_unit_test(test_explain_quotes_and_other_checks),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

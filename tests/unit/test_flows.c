/*
 * test_flows.c - the flow parser (good flows become the right tool calls;
 * bad ones get an error naming file, step and field), variables and
 * secrets, and the JUnit writer (its output validates against
 * fixtures/junit/junit.xsd with libxml2 and carries what CI shows).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "flows/flows-private.h"

#include <libxml/parser.h>
#include <libxml/xmlschemas.h>
#include <libxml/xpath.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Parses text as a flow named "t.json"; returns 0 or -1 with err. */
static int parse_text(const char *text, const struct flow_vars *vars, struct flow **f, char *err,
                      size_t errlen)
{
	json_error_t jerr;
	json_t *doc = json_loads(text, 0, &jerr);
	int rc;

	if (!doc) {
		snprintf(err, errlen, "test JSON: %s", jerr.text);
		return -2;
	}
	rc = flow_parse("t.json", doc, vars, f, err, errlen);
	json_decref(doc);
	return rc;
}

static void test_good_flow(void **state)
{
	const char *text = "{\"name\": \"checkout\", \"vars\": {\"BASE\": \"http://shop.test\"},"
	                   " \"secrets\": [\"PW\"], \"steps\": ["
	                   " {\"navigate\": \"${BASE}/shop/\", \"expect\": {\"title\": \"Shop\"}},"
	                   " {\"click\": {\"role\": \"button\", \"name\": \"Add \\\"deluxe\\\" to "
	                   "cart\"}, \"retries\": 2},"
	                   " {\"type\": {\"css\": \"#pw\"}, \"text\": \"${PW}\", \"expect\": "
	                   "{\"value\": \"${PW}\"}},"
	                   " {\"select\": {\"text\": \"Shipping\"}, \"values\": \"express\"},"
	                   " {\"press\": \"Enter\", \"name\": \"submit\"},"
	                   " {\"wait\": {\"text\": \"Thanks $${not a var}\"}},"
	                   " {\"evaluate\": \"() => 1\", \"target\": \"#total\", \"expect\": "
	                   "{\"target\": {\"role\": \"textbox\"}, \"value\": \"1\"}}"
	                   "]}";
	struct flow *f = NULL;
	char err[1024] = "";
	json_t *a;

	(void)state;
	setenv("PW", "hunter2-secret", 1);
	assert_int_equal(parse_text(text, NULL, &f, err, sizeof(err)), 0);
	assert_string_equal(flow_name(f), "checkout");
	assert_int_equal(flow_step_count(f), 7);
	assert_string_equal(flow_step_tool(f, 0), "browser_navigate");
	assert_string_equal(json_string_value(json_object_get(flow_step_args(f, 0), "url")),
	                    "http://shop.test/shop/");
	a = flow_step_args(f, 1);
	assert_string_equal(json_string_value(json_object_get(a, "target")),
	                    "role=button[name=\"Add \\\"deluxe\\\" to cart\"]");
	assert_int_equal(f->steps[1].retries, 2);
	assert_false(f->steps[1].secret);
	a = flow_step_args(f, 2);
	assert_string_equal(json_string_value(json_object_get(a, "target")), "css=#pw");
	assert_string_equal(json_string_value(json_object_get(a, "text")), "hunter2-secret");
	assert_true(f->steps[2].secret);
	assert_string_equal(flow_step_tool(f, 3), "browser_select_option");
	a = flow_step_args(f, 3);
	assert_string_equal(json_string_value(json_object_get(a, "target")), "text=\"Shipping\"");
	assert_string_equal(json_string_value(json_array_get(json_object_get(a, "values"), 0)),
	                    "express");
	assert_string_equal(json_string_value(json_object_get(flow_step_args(f, 4), "key")),
	                    "Enter");
	assert_string_equal(json_string_value(json_object_get(flow_step_args(f, 5), "text")),
	                    "Thanks ${not a var}");
	a = flow_step_args(f, 6);
	assert_string_equal(
	    json_string_value(json_object_get(json_object_get(a, "expect"), "target")),
	    "role=textbox");
	{
		char *r = flow_redact(f, "typed hunter2-secret, twice: hunter2-secret.");

		assert_string_equal(r, "typed [secret PW], twice: [secret PW].");
		free(r);
	}
	flow_free(f);
	unsetenv("PW");
}

/* Every bad input names the file, the step and the field, and what to do. */
static void test_bad_flows(void **state)
{
	static const struct {
		const char *text;
		const char *want;
	} cases[] = {
		{ "[]", "t.json: a flow is a JSON object" },
		{ "{\"steps\": [{\"navigate\": \"http://a.test/\"}]}",
		  "t.json: field \"name\": must be 1 to 100" },
		{ "{\"name\": \"x\", \"stpes\": []}",
		  "t.json: field \"stpes\": is not a flow field" },
		{ "{\"name\": \"x\", \"steps\": []}",
		  "field \"steps\": must be an array of 1 to 500 steps" },
		{ "{\"name\": \"x\", \"steps\": [{\"navigate\": \"http://a.test/\"}, {\"clik\": "
		  "\"#a\"}]}",
		  "t.json: step 2: names no action: give one of navigate, click" },
		{ "{\"name\": \"x\", \"steps\": [{\"click\": \"#a\", \"press\": \"Enter\"}]}",
		  "step 1: has both \"click\" and \"press\": one action per step" },
		{ "{\"name\": \"x\", \"steps\": [{\"click\": {\"role\": \"button\", \"label\": "
		  "\"Save\"}}]}",
		  "step 1 (click): field \"click\": a target is {\"role\": \"button\"" },
		{ "{\"name\": \"x\", \"steps\": [{\"click\": {\"role\": \"Button\"}}]}",
		  "step 1 (click): field \"click\": \"role\" must be an ARIA role in lowercase" },
		{ "{\"name\": \"x\", \"steps\": [{\"click\": \"#a\", \"text\": \"hi\"}]}",
		  "step 1 (click): field \"text\": is not a field of a click step" },
		{ "{\"name\": \"x\", \"steps\": [{\"type\": \"#a\"}]}",
		  "step 1 (type): field \"text\": a type step needs \"text\"" },
		{ "{\"name\": \"x\", \"steps\": [{\"type\": \"#a\", \"text\": \"a\", \"secret\": "
		  "\"PW\"}]}",
		  "step 1 (type): field \"secret\": a type step takes \"text\" or \"secret\", not "
		  "both" },
		{ "{\"name\": \"x\", \"steps\": [{\"type\": \"#a\", \"secret\": 7}]}",
		  "step 1 (type): field \"secret\": \"secret\" must be a string" },
		{ "{\"name\": \"x\", \"steps\": [{\"click\": \"#a\", \"retries\": 11}]}",
		  "step 1 (click): field \"retries\": must be an integer from 0 to 10" },
		{ "{\"name\": \"x\", \"steps\": [{\"click\": \"#a\", \"expect\": {\"titel\": "
		  "\"A\"}}]}",
		  "step 1 (click): field \"expect\": " },
		{ "{\"name\": \"x\", \"steps\": [{\"wait\": {\"text\": \"A\"}, \"expect\": "
		  "{\"title\": \"A\"}}]}",
		  "step 1 (wait): field \"expect\": a wait step checks what it waits for" },
		{ "{\"name\": \"x\", \"steps\": [{\"wait\": {\"txt\": \"A\"}}]}",
		  "step 1 (wait): field \"wait\": unknown key \"txt\"" },
		{ "{\"name\": \"x\", \"steps\": [{\"navigate\": \"${NOPE_NOT_SET}/a\"}]}",
		  "step 1 (navigate): field \"navigate\": variable ${NOPE_NOT_SET} is not set: "
		  "export it" },
		{ "{\"name\": \"x\", \"steps\": [{\"navigate\": \"${1X}\"}]}",
		  "field \"navigate\": \"${1X}\" is not a variable" },
		{ "{\"name\": \"x\", \"secrets\": [\"TOKEN\"], \"steps\": [{\"navigate\": "
		  "\"http://a.test/?t=${TOKEN}\"}]}",
		  "step 1 (navigate): field \"navigate\": secret ${TOKEN} may only be used in the "
		  "text of a type step" },
		{ "{\"name\": \"x\", \"secrets\": [\"TOKEN\"], \"vars\": {\"TOKEN\": \"abc\"}, "
		  "\"steps\": [{\"press\": \"a\"}]}",
		  "field \"secrets\": ${TOKEN} is a secret and has a default" },
		{ "{\"name\": \"x\", \"steps\": [{\"select\": \"#s\"}]}",
		  "step 1 (select): field \"values\": a select step needs \"values\"" },
		{ "{\"name\": \"x\", \"steps\": [{\"press\": \"\"}]}",
		  "step 1 (press): field \"press\": must be a non-empty string" },
		{ "{\"name\": \"x\", \"steps\": [{\"click\": \"#a\", \"expect\": {\"value\": "
		  "\"1\", \"target\": {\"css\": \"\"}}}]}",
		  "step 1 (click): field \"expect\": \"css\" must be a non-empty CSS selector" },
		{ "{\"name\": \"x\", \"steps\": [{\"click\": \"#a\", \"submit\": true}]}",
		  "step 1 (click): field \"submit\": is not a field of a click step" },
		{ "{\"name\": \"x\", \"steps\": [{\"navigate\": \"http://a.test/\", \"expect\": "
		  "{\"response\": {\"status\": 200}}}]}",
		  "step 1 (navigate): field \"expect\": " },
	};
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct flow *f = NULL;
		char err[1024] = "";

		if (parse_text(cases[i].text, NULL, &f, err, sizeof(err)) != -1 ||
		    !strstr(err, cases[i].want)) {
			print_error("case %zu: got \"%s\", want \"%s\"\n", i, err, cases[i].want);
			fail();
		}
		assert_null(f);
	}
}

static void test_vars_file(void **state)
{
	char path[] = "/tmp/test_flows_varsXXXXXX";
	int fd = mkstemp(path);
	struct flow_vars *v = NULL;
	struct flow *f = NULL;
	char err[512] = "";
	char *n, *val;
	FILE *fp;

	(void)state;
	assert_true(fd >= 0);
	fp = fdopen(fd, "w");
	fprintf(fp, "# shop\n\nBASE_URL=http://file.test\nexport PW='s3cret pass'\nEMPTY=\n");
	fclose(fp);
	setenv("BASE_URL", "http://env.test", 1);
	assert_int_equal(flow_vars_load(path, &v, err, sizeof(err)), 0);
	assert_string_equal(flow_vars_get(v, "BASE_URL"), "http://file.test"); /* file wins */
	assert_string_equal(flow_vars_get(v, "PW"), "s3cret pass");
	assert_string_equal(flow_vars_get(v, "EMPTY"), "");
	assert_int_equal(parse_text("{\"name\": \"v\", \"secrets\": [\"PW\"], \"steps\": ["
	                            "{\"navigate\": \"${BASE_URL}/\"},"
	                            "{\"type\": \"#p\", \"text\": \"${PW}\"}]}",
	                            v, &f, err, sizeof(err)),
	                 0);
	assert_string_equal(json_string_value(json_object_get(flow_step_args(f, 0), "url")),
	                    "http://file.test/");
	flow_free(f);
	flow_vars_free(v);
	unsetenv("BASE_URL");
	/* a malformed line is named */
	fp = fopen(path, "w");
	fprintf(fp, "OK=1\nnot a line\n");
	fclose(fp);
	assert_int_equal(flow_vars_load(path, &v, err, sizeof(err)), -1);
	assert_non_null(strstr(err, ":2: expected NAME=VALUE"));
	unlink(path);
	assert_int_equal(flow_vars_load("/nonexistent/vars", &v, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "cannot read the vars file /nonexistent/vars"));
	assert_int_equal(flow_vars_parse_line("  # c", &n, &val), 0);
	assert_int_equal(flow_vars_parse_line("9X=1", &n, &val), -1);
	assert_int_equal(flow_vars_parse_line("A=\"q\"\n", &n, &val), 1);
	assert_string_equal(val, "q");
	free(n);
	free(val);
}

/* A text that grows past the ceiling once a variable is substituted is
 * refused, whichever part of it crosses the ceiling: never a cut string
 * handed on as if whole. */
static void test_substitution_past_the_ceiling_is_refused(void **state)
{
	size_t big = FLOW_MAX_FILE_BYTES - 10;
	const char *tails[] = { "0123456789abcdefghij", "01234$${0123456789" };
	struct flow *f = NULL;
	char err[1024];
	char *value = malloc(big + 1);
	json_t *doc;
	size_t i;

	(void)state;
	assert_non_null(value);
	memset(value, 'v', big);
	value[big] = '\0';
	for (i = 0; i < sizeof(tails) / sizeof(tails[0]); i++) {
		char text[64];

		snprintf(text, sizeof(text), "${BIG}%s", tails[i]);
		doc = json_pack("{s:s, s:{s:s}, s:[{s:s, s:s}]}", "name", "big", "vars", "BIG",
		                value, "steps", "type", "#q", "text", text);
		assert_non_null(doc);
		err[0] = '\0';
		f = NULL;
		assert_int_equal(flow_parse("t.json", doc, NULL, &f, err, sizeof(err)), -1);
		assert_null(f);
		assert_non_null(strstr(err, "longer than"));
		json_decref(doc);
	}
	/* just under the ceiling is whole */
	value[big - 20] = '\0';
	doc = json_pack("{s:s, s:{s:s}, s:[{s:s, s:s}]}", "name", "big", "vars", "BIG", value,
	                "steps", "type", "#q", "text", "${BIG}0123456789abcdefghij");
	assert_int_equal(flow_parse("t.json", doc, NULL, &f, err, sizeof(err)), 0);
	assert_int_equal(strlen(json_string_value(json_object_get(flow_step_args(f, 0), "text"))),
	                 big);
	flow_free(f);
	json_decref(doc);
	free(value);
}

static void test_fixture_flows_parse(void **state)
{
	static const char *const names[] = { "checkout.json", "expect-fails.json", "blocked.json",
		                             "approval.json" };
	size_t i;

	(void)state;
	setenv("SHOP_URL", "http://shop.test:1", 1);
	setenv("SHOP_PASSWORD", "pw", 1);
	setenv("PARTNER_URL", "http://evil.test:1", 1);
	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		char path[1024], err[1024] = "";
		struct flow *f = NULL;

		snprintf(path, sizeof(path), "%s/flows/%s", FLOW_FIXTURES, names[i]);
		if (flow_load(path, NULL, &f, err, sizeof(err)) < 0) {
			print_error("%s\n", err);
			fail();
		}
		flow_free(f);
	}
	{
		char err[512] = "";
		struct flow *f = NULL;

		assert_int_equal(flow_load("/nonexistent.json", NULL, &f, err, sizeof(err)), -1);
		assert_non_null(strstr(err, "/nonexistent.json: cannot read the flow"));
	}
}

/* ---- JUnit ---------------------------------------------------------------- */

static xmlDocPtr write_and_validate(const struct flow_result *r, size_t n)
{
	char path[] = "/tmp/test_flows_junitXXXXXX";
	char xsd[1024], err[512] = "";
	xmlSchemaParserCtxtPtr pctx;
	xmlSchemaValidCtxtPtr vctx;
	xmlSchemaPtr schema;
	xmlDocPtr doc;
	int fd = mkstemp(path);

	assert_true(fd >= 0);
	close(fd);
	assert_int_equal(flow_junit_write(path, "glassbox run", r, n, 4.5, err, sizeof(err)), 0);
	doc = xmlReadFile(path, NULL, XML_PARSE_NONET);
	assert_non_null(doc);
	snprintf(xsd, sizeof(xsd), "%s/junit/junit.xsd", FLOW_FIXTURES);
	pctx = xmlSchemaNewParserCtxt(xsd);
	schema = xmlSchemaParse(pctx);
	assert_non_null(schema);
	vctx = xmlSchemaNewValidCtxt(schema);
	assert_int_equal(xmlSchemaValidateDoc(vctx, doc), 0);
	xmlSchemaFreeValidCtxt(vctx);
	xmlSchemaFree(schema);
	xmlSchemaFreeParserCtxt(pctx);
	unlink(path);
	return doc;
}

static char *xpath_string(xmlDocPtr doc, const char *expr)
{
	xmlXPathContextPtr ctx = xmlXPathNewContext(doc);
	xmlXPathObjectPtr o = xmlXPathEvalExpression(BAD_CAST expr, ctx);
	xmlChar *s = xmlXPathCastToString(o);
	char *out = strdup((const char *)s);

	xmlFree(s);
	xmlXPathFreeObject(o);
	xmlXPathFreeContext(ctx);
	return out;
}

static void assert_xpath(xmlDocPtr doc, const char *expr, const char *want)
{
	char *got = xpath_string(doc, expr);

	if (strcmp(got, want) != 0) {
		print_error("%s: got \"%s\", want \"%s\"\n", expr, got, want);
		free(got);
		fail();
	}
	free(got);
}

static void assert_xpath_contains(xmlDocPtr doc, const char *expr, const char *want)
{
	char *got = xpath_string(doc, expr);

	if (!strstr(got, want)) {
		print_error("%s: \"%s\" lacks \"%s\"\n", expr, got, want);
		free(got);
		fail();
	}
	free(got);
}

static void test_junit(void **state)
{
	struct flow_result r[3];
	xmlDocPtr doc;

	(void)state;
	memset(r, 0, sizeof(r));
	r[0].name = "checkout";
	r[0].path = "fixtures/flows/checkout.json";
	r[0].passed = 1;
	r[0].duration_ms = 1234;
	r[0].steps_total = r[0].steps_run = 5;
	r[0].screenshot = "/tmp/out-attachments/01-checkout/step-05.png";
	r[0].log = "step 1 navigate: passed\n";
	r[1].name = "expect fails";
	r[1].path = "flows/expect-fails.json";
	r[1].duration_ms = 2001;
	r[1].steps_total = 3;
	r[1].steps_run = 2;
	r[1].failed_step = 2;
	r[1].failed_tool = "browser_click";
	r[1].error_code = "expectation_failed";
	/* page text is hostile: controls, invalid UTF-8, markup */
	r[1].message = "step 2 click text=\"Pay\" failed: expected text \"Paid <b>\" \x01\xff\xfe";
	r[1].verdicts = json_pack("[{s:s, s:s, s:s, s:b}, {s:s, s:s, s:s, s:b}]", "check", "title",
	                          "expected", "Shop", "observed", "Shop", "ok", 1, "check", "text",
	                          "expected", "Order placed", "observed", "absent", "ok", 0);
	r[1].screenshot = "/tmp/out-attachments/02-expect-fails/step-02.png";
	r[1].log = "step 2 click: FAILED\n";
	r[2].name = "no browser";
	r[2].path = "b.json";
	r[2].error_code = "session_failed";
	r[2].message = "cannot start a session";
	doc = write_and_validate(r, 3);
	assert_xpath(doc, "string(/testsuites/testsuite/@tests)", "3");
	assert_xpath(doc, "string(/testsuites/testsuite/@failures)", "1");
	assert_xpath(doc, "string(/testsuites/testsuite/@errors)", "1");
	assert_xpath(doc, "string(/testsuites/testsuite/@time)", "4.500");
	assert_xpath(doc, "string(//testcase[1]/@name)", "checkout");
	assert_xpath(doc, "string(//testcase[1]/@classname)", "flows.checkout");
	assert_xpath(doc, "string(//testcase[1]/@time)", "1.234");
	assert_xpath(doc, "string(//testcase[1]/@file)", "fixtures/flows/checkout.json");
	assert_xpath(doc, "count(//testcase[1]/failure)", "0");
	assert_xpath(doc, "string(//testcase[1]/properties/property[@name='attachment']/@value)",
	             "/tmp/out-attachments/01-checkout/step-05.png");
	assert_xpath_contains(doc, "string(//testcase[1]/system-out)",
	                      "[[ATTACHMENT|/tmp/out-attachments/01-checkout/step-05.png]]");
	assert_xpath(doc, "string(//testcase[2]/failure/@type)", "expectation_failed");
	assert_xpath_contains(doc, "string(//testcase[2]/failure/@message)",
	                      "text: expected \"Order placed\", observed \"absent\"");
	assert_xpath_contains(doc, "string(//testcase[2]/failure/@message)", "Paid <b>");
	assert_xpath_contains(doc, "string(//testcase[2]/failure)",
	                      "check text: expected \"Order placed\", observed \"absent\"");
	assert_xpath_contains(doc, "string(//testcase[2]/failure)", "failed at step 2 of 3");
	assert_xpath(doc, "count(//testcase[3]/error)", "1");
	assert_xpath(doc, "count(//testcase[3]/properties)", "0");
	xmlFreeDoc(doc);
	json_decref(r[1].verdicts);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_good_flow),
		cmocka_unit_test(test_bad_flows),
		cmocka_unit_test(test_vars_file),
		cmocka_unit_test(test_fixture_flows_parse),
		cmocka_unit_test(test_junit),
		cmocka_unit_test(test_substitution_past_the_ceiling_is_refused),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

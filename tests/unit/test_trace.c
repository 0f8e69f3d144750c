/*
 * test_trace.c - the parts of trace/ that take hostile text from records:
 * the Playwright code of an action (every value a string literal, an
 * evaluate's function never code of the test, a record's own
 * playwright_code used as it is, a target only a snapshot ref names
 * refused), flow targets, HAR entries (credential query parameters
 * redacted, failures and blocked requests), times, and the zip writer
 * (read back with libarchive).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "trace/trace-private.h"

#include <archive.h>
#include <archive_entry.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A tool_call record with body (a JSON text). */
static json_t *record(const char *body)
{
	json_error_t jerr;
	json_t *b = json_loads(body, 0, &jerr);

	assert_non_null(b);
	return json_pack("{s:s, s:s, s:o, s:[]}", "kind", "tool_call", "time",
	                 "2026-03-01T12:00:01.500Z", "body", b, "artifacts");
}

/* The code of a record, freed by the caller; NULL allowed. */
static char *code_of(const char *body)
{
	json_t *rec = record(body);
	char *code = trace_playwright_code(rec);

	json_decref(rec);
	return code;
}

static void test_locators(void **state)
{
	char *c;

	(void)state;
	c = code_of("{\"tool\": \"browser_click\", \"arguments\": {\"target\": "
	            "\"role=button[name=\\\"Say \\\\\\\"hi\\\\\\\"\\\"]\"}}");
	assert_string_equal(c,
	                    "await page.getByRole(\"button\", { name: \"Say \\\"hi\\\"\", exact: "
	                    "true }).click();");
	free(c);
	c = code_of("{\"tool\": \"browser_click\", \"arguments\": {\"target\": "
	            "\"text=\\\"Checkout\\\"\"}}");
	assert_string_equal(c, "await page.getByText(\"Checkout\", { exact: true }).click();");
	free(c);
	c = code_of("{\"tool\": \"browser_hover\", \"arguments\": {\"target\": \"css=#menu\"}}");
	assert_string_equal(c, "await page.locator(\"#menu\").hover();");
	free(c);
	/* a ref: the element's role and name, or nothing that outlives the session */
	c = code_of("{\"tool\": \"browser_click\", \"arguments\": {\"target\": \"f1e12\"}, "
	            "\"element\": {\"role\": \"link\", \"name\": \"Next\"}}");
	assert_string_equal(
	    c, "await page.getByRole(\"link\", { name: \"Next\", exact: true }).click();");
	free(c);
	c = code_of("{\"tool\": \"browser_click\", \"arguments\": {\"target\": \"e7\"}, "
	            "\"element\": {\"description\": \"div\"}}");
	assert_null(c);
}

static void test_hostile_values_stay_strings(void **state)
{
	char *c;

	(void)state;
	/* a URL and typed text that try to end the string and run Node code */
	c = code_of("{\"tool\": \"browser_navigate\", \"arguments\": {\"url\": "
	            "\"http://a.test/\\\");require('child_process').exec('x');(\\\"\"}}");
	assert_string_equal(c, "await page.goto(\"http://a.test/\\\");require('child_process')."
	                       "exec('x');(\\\"\");");
	free(c);
	c = code_of("{\"tool\": \"browser_type\", \"arguments\": {\"target\": \"#q\", \"text\": "
	            "\"a\\nb`${x}`\", \"submit\": true}}");
	assert_string_equal(c, "await page.locator(\"#q\").fill(\"a\\nb`${x}`\");\n"
	                       "await page.locator(\"#q\").press('Enter');");
	free(c);
	/* an evaluate runs in the page from a string, never as the test's code */
	c = code_of("{\"tool\": \"browser_evaluate\", \"arguments\": {\"function\": "
	            "\"() => 1); process.exit(1); (() => 2\"}}");
	assert_string_equal(c, "await page.evaluate(\"(() => 1); process.exit(1); (() => 2)()\");");
	free(c);
	/* redacted text is read from the environment */
	c = code_of("{\"tool\": \"browser_type\", \"arguments\": {\"target\": \"#pw\", \"text\": "
	            "\"[redacted]\"}}");
	assert_string_equal(
	    c, "await page.locator(\"#pw\").fill(process.env[\"TYPED_SECRET\"] ?? '');");
	free(c);
	/* what the tool itself says it ran comes first */
	c = code_of("{\"tool\": \"browser_click\", \"playwright_code\": \"await "
	            "page.getByRole('button', { name: 'Submit' }).click();\", \"arguments\": "
	            "{\"target\": \"e3\"}}");
	assert_string_equal(c, "await page.getByRole('button', { name: 'Submit' }).click();");
	free(c);
	/* no Playwright equivalent */
	assert_null(code_of("{\"tool\": \"browser_snapshot\", \"arguments\": {}}"));
}

static void test_flow_targets(void **state)
{
	json_t *rec;
	json_t *t;

	(void)state;
	rec = record("{\"tool\": \"browser_click\", \"arguments\": {\"target\": \"e4\"}, "
	             "\"element\": {\"role\": \"button\", \"name\": \"Save\"}}");
	t = trace_flow_target(rec);
	assert_string_equal(json_string_value(json_object_get(t, "role")), "button");
	assert_string_equal(json_string_value(json_object_get(t, "name")), "Save");
	json_decref(t);
	json_decref(rec);
	rec = record("{\"tool\": \"browser_click\", \"arguments\": {\"target\": \"#save\"}}");
	t = trace_flow_target(rec);
	assert_string_equal(json_string_value(t), "#save");
	json_decref(t);
	json_decref(rec);
	rec = record("{\"tool\": \"browser_click\", \"arguments\": {\"target\": \"e4\"}}");
	assert_null(trace_flow_target(rec));
	json_decref(rec);
}

static void test_har_entries(void **state)
{
	json_t *rec = record(
	    "{\"tool\": \"browser_navigate\", \"responses\": [{\"url\": "
	    "\"http://a.test/x?q=1&Token=s3cret&password=hunter2#frag\", \"method\": \"GET\", "
	    "\"status\": 200, \"type\": \"Document\"}], \"failed_requests\": [{\"url\": "
	    "\"http://a.test/f\", \"method\": \"POST\", \"error\": \"net::ERR_FAILED\"}], "
	    "\"blocked\": [{\"url\": \"http://evil.test/\", \"rule\": \"deny evil.test\"}]}");
	json_t *list = trace_har_entries(rec, NULL, 1000, 3000, "page@s");
	json_t *e;
	char *text;

	(void)state;
	assert_int_equal(json_array_size(list), 3);
	e = json_array_get(list, 0);
	assert_string_equal(
	    json_string_value(json_object_get(json_object_get(e, "request"), "url")),
	    "http://a.test/x?q=1&Token=%5Bredacted%5D&password=%5Bredacted%5D#frag");
	text = json_dumps(list, 0);
	assert_null(strstr(text, "s3cret"));
	assert_null(strstr(text, "hunter2"));
	free(text);
	assert_string_equal(json_string_value(json_object_get(e, "_resourceType")), "document");
	assert_int_equal(json_integer_value(json_object_get(e, "time")), 2000);
	e = json_array_get(list, 1);
	assert_int_equal(
	    json_integer_value(json_object_get(json_object_get(e, "response"), "status")), 0);
	assert_string_equal(json_string_value(json_object_get(e, "_failureText")),
	                    "net::ERR_FAILED");
	e = json_array_get(list, 2);
	assert_string_equal(json_string_value(json_object_get(e, "_failureText")),
	                    "blocked by glassbox's policy: deny evil.test");
	json_decref(list);
	/* kept exchanges replace the responses: headers, MIME type, times */
	{
		json_error_t jerr;
		json_t *x = json_loads(
		    "[{\"method\": \"GET\", \"url\": \"http://a.test/y\", \"type\": \"Fetch\", "
		    "\"request_headers\": [{\"name\": \"Accept\", \"value\": \"*/*\"}], "
		    "\"started_ms\": 1500, \"status\": 201, \"status_text\": \"Created\", "
		    "\"mime_type\": \"application/json\", \"protocol\": \"http/1.1\", "
		    "\"response_headers\": [], \"encoded_bytes\": 42, \"ended_ms\": 1750}]",
		    0, &jerr);

		list = trace_har_entries(rec, x, 1000, 3000, "page@s");
		assert_int_equal(json_array_size(list), 2); /* the exchange, the blocked one */
		e = json_array_get(list, 0);
		assert_int_equal(json_integer_value(json_object_get(e, "time")), 250);
		assert_string_equal(json_string_value(json_object_get(
		                        json_object_get(e, "response"), "statusText")),
		                    "Created");
		assert_string_equal(
		    json_string_value(json_object_get(
		        json_object_get(json_object_get(e, "response"), "content"), "mimeType")),
		    "application/json");
		assert_string_equal(json_string_value(json_object_get(json_object_get(e, "request"),
		                                                      "httpVersion")),
		                    "HTTP/1.1");
		json_decref(list);
		json_decref(x);
	}
	json_decref(rec);
}

static void test_times(void **state)
{
	json_t *rec;
	char iso[40];
	int64_t s;
	int64_t e;

	(void)state;
	assert_int_equal(trace_time_ms("1970-01-01T00:00:01.5Z"), 1500);
	assert_int_equal(trace_time_ms("not a time"), 0);
	trace_time_iso(trace_time_ms("2026-03-01T12:00:01.500Z"), iso, sizeof(iso));
	assert_string_equal(iso, "2026-03-01T12:00:01.500Z");
	/* started_at_ms wins over the record's time; without it, time less duration */
	rec =
	    record("{\"tool\": \"browser_click\", \"duration_ms\": 200, \"started_at_ms\": 5000}");
	trace_action_times(rec, &s, &e);
	assert_int_equal(s, 5000);
	assert_int_equal(e, 5200);
	json_decref(rec);
	rec = record("{\"tool\": \"browser_click\", \"duration_ms\": 500}");
	trace_action_times(rec, &s, &e);
	assert_int_equal(e, trace_time_ms("2026-03-01T12:00:01.500Z"));
	assert_int_equal(e - s, 500);
	json_decref(rec);
}

static void test_zip_reads_back(void **state)
{
	struct trace_zip *z = trace_zip_new(1 << 20);
	struct archive *a = archive_read_new();
	struct archive_entry *entry;
	unsigned char *out = NULL;
	char err[256];
	char buf[64];
	size_t len = 0;
	int n = 0;
	int rc;

	(void)state;
	assert_non_null(z);
	assert_int_equal(trace_zip_add(z, "trace.trace", "{\"a\":1}\n", 8, err, sizeof(err)), 0);
	assert_int_equal(trace_zip_add(z, "trace.network", "", 0, err, sizeof(err)), 0);
	assert_int_equal(trace_zip_finish(z, &out, &len, err, sizeof(err)), 0);
	assert_true(len > 22 && out[0] == 'P' && out[1] == 'K');
	archive_read_support_format_zip(a);
	assert_int_equal(archive_read_open_memory(a, out, len), ARCHIVE_OK);
	while (archive_read_next_header(a, &entry) == ARCHIVE_OK) {
		if (!strcmp(archive_entry_pathname(entry), "trace.trace")) {
			la_ssize_t got = archive_read_data(a, buf, sizeof(buf));

			assert_int_equal(got, 8);
			assert_memory_equal(buf, "{\"a\":1}\n", 8);
		}
		n++;
	}
	assert_int_equal(n, 2);
	archive_read_free(a);
	free(out);
	/* past its ceiling: a clean error, nothing half-written handed out */
	out = NULL;
	z = trace_zip_new(64);
	memset(buf, 'x', sizeof(buf));
	rc = trace_zip_add(z, "big", buf, sizeof(buf), err, sizeof(err));
	if (rc == 0)
		rc = trace_zip_add(z, "big2", buf, sizeof(buf), err, sizeof(err));
	if (rc == 0) {
		rc = trace_zip_finish(z, &out, &len, err, sizeof(err));
		z = NULL;
	}
	assert_true(rc != 0);
	assert_null(out);
	assert_non_null(strstr(err, "too large"));
	trace_zip_free(z);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_locators),
		cmocka_unit_test(test_hostile_values_stay_strings),
		cmocka_unit_test(test_flow_targets),
		cmocka_unit_test(test_har_entries),
		cmocka_unit_test(test_times),
		cmocka_unit_test(test_zip_reads_back),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

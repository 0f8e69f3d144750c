/*
 * test_pagelog.c - the page log (actions/pagelog.c) fed CDP events as a
 * hostile page could make Chromium send them: levels, the ceilings of
 * both buffers (count and bytes), request numbers that survive eviction,
 * credential headers never kept, bounded strings.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "actions/pagelog.h"

static void console(struct act_pagelog *l, const char *type, const char *text)
{
	json_t *p = json_pack("{s:s, s:[{s:s, s:s}], s:f}", "type", type, "args", "type", "string",
	                      "value", text, "timestamp", 1.0);

	act_pagelog_event(l, "S1", "Runtime.consoleAPICalled", p);
	json_decref(p);
}

static void request(struct act_pagelog *l, const char *id, const char *url, json_t *headers,
                    const char *post)
{
	json_t *req = json_pack("{s:s, s:s, s:o}", "url", url, "method", post ? "POST" : "GET",
	                        "headers", headers ? headers : json_object());
	json_t *p;

	if (post)
		json_object_set_new(req, "postData", json_string(post));
	p = json_pack("{s:s, s:o, s:s, s:s}", "requestId", id, "request", req, "type", "Fetch",
	              "frameId", "F1");
	act_pagelog_event(l, "S1", "Network.requestWillBeSent", p);
	json_decref(p);
}

static void test_console_levels(void **state)
{
	struct act_pagelog *l = act_pagelog_new();
	size_t total, errors, warnings;
	json_t *got;

	(void)state;
	console(l, "log", "a log");
	console(l, "warning", "a warning");
	console(l, "error", "an error");
	console(l, "debug", "a detail");
	got = act_pagelog_console(l, "S1", ACT_CONSOLE_INFO, 0, &total, &errors, &warnings);
	assert_int_equal(json_array_size(got), 3);
	assert_int_equal(total, 4);
	assert_int_equal(errors, 1);
	assert_int_equal(warnings, 1);
	json_decref(got);
	got = act_pagelog_console(l, "S1", ACT_CONSOLE_ERROR, 0, &total, &errors, &warnings);
	assert_int_equal(json_array_size(got), 1);
	assert_string_equal(json_string_value(json_object_get(json_array_get(got, 0), "text")),
	                    "an error");
	json_decref(got);
	/* another page's session sees none of them */
	got = act_pagelog_console(l, "S2", ACT_CONSOLE_DEBUG, 1, &total, &errors, &warnings);
	assert_int_equal(json_array_size(got), 0);
	json_decref(got);
	assert_int_equal(act_console_level_parse("warning"), ACT_CONSOLE_WARNING);
	assert_int_equal(act_console_level_parse("loud"), -1);
	assert_int_equal(act_console_level_parse(NULL), -1);
	act_pagelog_free(l);
}

static void test_ceilings(void **state)
{
	struct act_pagelog *l = act_pagelog_new();
	size_t total, errors, warnings, hidden, i;
	char id[32], text[64];
	json_t *got, *first;
	char *big;

	(void)state;
	for (i = 0; i < ACT_PAGELOG_MAX_CONSOLE + 200; i++) {
		snprintf(text, sizeof(text), "message %zu", i);
		console(l, "log", text);
	}
	got = act_pagelog_console(l, "S1", ACT_CONSOLE_DEBUG, 1, &total, &errors, &warnings);
	assert_int_equal(json_array_size(got), ACT_PAGELOG_MAX_CONSOLE);
	assert_string_equal(json_string_value(json_object_get(json_array_get(got, 0), "text")),
	                    "message 200"); /* the oldest went first */
	json_decref(got);

	for (i = 0; i < ACT_PAGELOG_MAX_REQUESTS + 100; i++) {
		snprintf(id, sizeof(id), "R%zu", i);
		request(l, id, "http://shop.test/api", NULL, NULL);
	}
	got = act_pagelog_requests(l, "S1", 1, NULL, &hidden);
	assert_int_equal(json_array_size(got), ACT_PAGELOG_MAX_REQUESTS);
	first = json_array_get(got, 0);
	assert_int_equal(json_integer_value(json_object_get(first, "index")), 101);
	json_decref(got);
	assert_null(act_pagelog_request(l, 100)); /* evicted */
	assert_non_null(act_pagelog_request(l, 101));
	assert_string_equal(
	    json_string_value(json_object_get(act_pagelog_request(l, 600), "request_id")), "R599");
	assert_null(act_pagelog_request(l, 601));
	assert_null(act_pagelog_request(l, 0));

	/* the byte ceiling: large bodies push the oldest out long before the count */
	big = malloc(ACT_PAGELOG_MAX_POST_BYTES * 2);
	assert_non_null(big);
	memset(big, 'x', ACT_PAGELOG_MAX_POST_BYTES * 2 - 1);
	big[ACT_PAGELOG_MAX_POST_BYTES * 2 - 1] = '\0';
	for (i = 0; i < 300; i++) {
		snprintf(id, sizeof(id), "B%zu", i);
		request(l, id, "http://shop.test/up", NULL, big);
	}
	free(big);
	got = act_pagelog_requests(l, "S1", 1, NULL, &hidden);
	assert_true(json_array_size(got) < 300);
	assert_true(json_array_size(got) * ACT_PAGELOG_MAX_POST_BYTES <= ACT_PAGELOG_MAX_BYTES);
	json_decref(got);
	first = act_pagelog_request(l, 600 + 300);
	assert_non_null(first);
	assert_int_equal(json_string_length(json_object_get(first, "post_data")),
	                 ACT_PAGELOG_MAX_POST_BYTES);
	assert_true(json_is_true(json_object_get(first, "post_data_truncated")));
	act_pagelog_free(l);
}

static void test_credentials_never_kept(void **state)
{
	struct act_pagelog *l = act_pagelog_new();
	json_t *e, *h;
	json_t *resp;
	char *dump;

	(void)state;
	request(l, "R1", "http://shop.test/api",
	        json_pack("{s:s, s:s, s:s, s:i}", "Cookie", "sid=SECRET1", "authorization",
	                  "Bearer SECRET2", "Accept", "*/*", "X-Number", 5),
	        NULL);
	resp = json_pack("{s:s, s:{s:i, s:s, s:{s:s, s:s}}}", "requestId", "R1", "response",
	                 "status", 200, "url", "http://shop.test/api", "headers", "Set-Cookie",
	                 "sid=SECRET3", "Content-Type", "application/json");
	act_pagelog_event(l, "S1", "Network.responseReceived", resp);
	json_decref(resp);
	e = act_pagelog_request(l, 1);
	assert_non_null(e);
	h = json_object_get(e, "request_headers");
	assert_string_equal(json_string_value(json_object_get(h, "Cookie")), "[redacted]");
	assert_string_equal(json_string_value(json_object_get(h, "authorization")), "[redacted]");
	assert_string_equal(json_string_value(json_object_get(h, "Accept")), "*/*");
	assert_null(json_object_get(h, "X-Number")); /* not a string: dropped */
	assert_string_equal(json_string_value(json_object_get(
	                        json_object_get(e, "response_headers"), "Set-Cookie")),
	                    "[redacted]");
	dump = json_dumps(e, 0);
	assert_null(strstr(dump, "SECRET"));
	free(dump);
	assert_true(act_header_is_credential("PROXY-AUTHORIZATION"));
	assert_false(act_header_is_credential("Content-Type"));
	act_pagelog_free(l);
}

static void test_hostile_events(void **state)
{
	struct act_pagelog *l = act_pagelog_new();
	const char *bad[] = {
		"{}",
		"{\"requestId\": 5}",
		"{\"requestId\": \"R9\", \"request\": 7}",
		"{\"requestId\": \"R9\", \"request\": {\"url\": 5, \"headers\": []}}",
		"{\"type\": 7, \"args\": {}}",
		"{\"args\": [null, 3, {\"value\": {\"a\": [1, 2]}}, {\"description\": 4}]}",
		"{\"exceptionDetails\": 1}",
	};
	const char *methods[] = { "Network.requestWillBeSent", "Network.responseReceived",
		                  "Network.loadingFailed",     "Runtime.consoleAPICalled",
		                  "Runtime.exceptionThrown",   "Page.fileChooserOpened" };
	size_t i, k, total, errors, warnings;
	json_t *got;

	(void)state;
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		json_t *p = json_loads(bad[i], 0, NULL);

		assert_non_null(p);
		for (k = 0; k < sizeof(methods) / sizeof(methods[0]); k++) {
			act_pagelog_event(l, "S1", methods[k], p);
			act_pagelog_event(l, NULL, methods[k], p);
			act_pagelog_event(l, "", methods[k], p);
		}
		json_decref(p);
	}
	got = act_pagelog_console(l, "S1", ACT_CONSOLE_DEBUG, 1, &total, &errors, &warnings);
	assert_true(json_array_size(got) > 0);
	json_decref(got);
	act_pagelog_free(l);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_console_levels),
		cmocka_unit_test(test_ceilings),
		cmocka_unit_test(test_credentials_never_kept),
		cmocka_unit_test(test_hostile_events),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

/*
 * test_sessions_shared.c - on a shared browser (isolation "context") a
 * session sets up only the targets of its own browser context: every
 * other target attached at the browser's level is another session's (or
 * nobody's) and is let go of; a child attached under one of its own
 * targets, and every target of a browser of its own, are its own.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "sessions/sessions-private.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>

static int foreign(struct sess *s, const char *event_sid, const char *ctx)
{
	json_t *info = ctx ? json_pack("{s:s, s:s}", "type", "page", "browserContextId", ctx)
	                   : json_pack("{s:s}", "type", "page");
	int r = sess_foreign_target(s, event_sid, info);

	json_decref(info);
	return r;
}

static void test_own_browser_owns_every_target(void **state)
{
	struct sess *s = calloc(1, sizeof(*s));

	(void)state;
	assert_int_equal(foreign(s, NULL, "C1"), 0);
	assert_int_equal(foreign(s, NULL, NULL), 0);
	snprintf(s->context_id, sizeof(s->context_id), "C1"); /* adopted from the pool */
	assert_int_equal(foreign(s, NULL, "C2"), 0);
	free(s);
}

static void test_shared_browser_owns_its_context_only(void **state)
{
	struct sess *s = calloc(1, sizeof(*s));

	(void)state;
	s->host = (struct sess_host *)s;             /* any non-NULL host: not dereferenced */
	assert_int_equal(foreign(s, NULL, "C1"), 1); /* before its context exists */
	snprintf(s->context_id, sizeof(s->context_id), "C1");
	assert_int_equal(foreign(s, NULL, "C1"), 0);
	assert_int_equal(foreign(s, "", "C1"), 0);
	assert_int_equal(foreign(s, NULL, "C2"), 1);
	assert_int_equal(foreign(s, NULL, "C1x"), 1);
	assert_int_equal(foreign(s, NULL, NULL), 1); /* names no context: not its own */
	assert_int_equal(foreign(s, "", ""), 1);
	assert_int_equal(foreign(s, "PAGE-SESSION", "C2"), 0); /* under its own page */
	free(s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_own_browser_owns_every_target),
		cmocka_unit_test(test_shared_browser_owns_its_context_only),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

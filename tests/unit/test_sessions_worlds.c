/*
 * test_sessions_worlds.c - the isolated worlds remembered per frame are
 * found again, and forgotten when Runtime reports their context gone, when
 * the frame's contexts are cleared, or when the table is full.
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

static void event(struct sess *s, const char *sid, const char *method, json_t *params)
{
	sess_worlds_on_event(s, sid, method, params);
	json_decref(params);
}

static void test_remembered_world_is_found_per_frame(void **state)
{
	struct sess *s = calloc(1, sizeof(*s));

	(void)state;
	assert_int_equal(sess_world_find(s, "S1", "F1"), 0);
	sess_world_remember(s, "S1", "F1", 7);
	sess_world_remember(s, "S1", "F2", 8);
	sess_world_remember(s, "S2", "F1", 9);
	assert_int_equal(sess_world_find(s, "S1", "F1"), 7);
	assert_int_equal(sess_world_find(s, "S1", "F2"), 8);
	assert_int_equal(sess_world_find(s, "S2", "F1"), 9);
	sess_world_remember(s, "S1", "F1", 11); /* the frame's new document */
	assert_int_equal(sess_world_find(s, "S1", "F1"), 11);
	assert_int_equal(s->n_worlds, 3);
	free(s);
}

static void test_dead_contexts_are_forgotten(void **state)
{
	struct sess *s = calloc(1, sizeof(*s));

	(void)state;
	sess_world_remember(s, "S1", "F1", 7);
	sess_world_remember(s, "S1", "F2", 8);
	sess_world_remember(s, "S2", "F1", 7);
	/* the same id in another session is another context */
	event(s, "S1", "Runtime.executionContextDestroyed",
	      json_pack("{s:i}", "executionContextId", 7));
	assert_int_equal(sess_world_find(s, "S1", "F1"), 0);
	assert_int_equal(sess_world_find(s, "S1", "F2"), 8);
	assert_int_equal(sess_world_find(s, "S2", "F1"), 7);
	/* a navigation clears every context of the session */
	event(s, "S1", "Runtime.executionContextsCleared", json_object());
	assert_int_equal(sess_world_find(s, "S1", "F2"), 0);
	assert_int_equal(sess_world_find(s, "S2", "F1"), 7);
	/* other Runtime events and browser-level events change nothing */
	event(s, "S2", "Runtime.executionContextCreated", json_object());
	event(s, NULL, "Runtime.executionContextsCleared", json_object());
	assert_int_equal(sess_world_find(s, "S2", "F1"), 7);
	sess_world_forget(s, "S2", 0);
	assert_int_equal(s->n_worlds, 0);
	free(s);
}

static void test_full_table_drops_a_world_not_the_new_one(void **state)
{
	struct sess *s = calloc(1, sizeof(*s));
	char frame[32];
	int i;

	(void)state;
	for (i = 0; i < SESS_MAX_WORLDS + 5; i++) {
		snprintf(frame, sizeof(frame), "F%d", i);
		sess_world_remember(s, "S", frame, 100 + i);
		assert_int_equal(sess_world_find(s, "S", frame), 100 + i);
	}
	assert_int_equal(s->n_worlds, SESS_MAX_WORLDS);
	free(s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_remembered_world_is_found_per_frame),
		cmocka_unit_test(test_dead_contexts_are_forgotten),
		cmocka_unit_test(test_full_table_drops_a_world_not_the_new_one),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}

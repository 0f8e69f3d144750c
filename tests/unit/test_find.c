/*
 * test_find.c - browser_find's search of a snapshot text (actions/find.c):
 * literal text matches without case, a regex with its flags, each match
 * with its ref, role, name and ancestors; a bad or runaway pattern is a
 * message for the agent.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "actions/actions-private.h"

static const char snap[] = "- heading \"Catalogue\" [level=1] [ref=e2]\n"
                           "- list \"Products\" [ref=e3]:\n"
                           "  - listitem [ref=e4]:\n"
                           "    - text: Red apple\n"
                           "    - button \"Add red apple\" [ref=e5]\n"
                           "  - listitem [ref=e6]:\n"
                           "    - text: Green pear\n"
                           "    - button \"Add green pear\" [ref=e7]\n"
                           "- paragraph [ref=e8]: Order number ORD-2024-0042 is ready.\n";

static void test_text(void **state)
{
	struct gb_buf out;
	json_t *m = NULL;
	char err[256] = "";

	(void)state;
	gb_buf_init(&out, 1 << 16);
	assert_int_equal(
	    act_find_in_snapshot(snap, "GREEN PEAR", NULL, 0, &m, &out, err, sizeof(err)), 0);
	assert_int_equal(json_array_size(m), 2);
	assert_string_equal(json_string_value(json_object_get(json_array_get(m, 1), "ref")), "e7");
	assert_string_equal(json_string_value(json_object_get(json_array_get(m, 1), "role")),
	                    "button");
	assert_string_equal(json_string_value(json_object_get(json_array_get(m, 1), "name")),
	                    "Add green pear");
	assert_string_equal(json_string_value(json_object_get(json_array_get(m, 1), "path")),
	                    "list \"Products\" > listitem");
	assert_non_null(strstr(out.data, "- list \"Products\" [ref=e3]:"));
	json_decref(m);
	gb_buf_free(&out);
}

static void test_regex(void **state)
{
	struct gb_buf out;
	json_t *m = NULL;
	char err[256] = "";

	(void)state;
	gb_buf_init(&out, 1 << 16);
	assert_int_equal(
	    act_find_in_snapshot(snap, NULL, "/ord-\\d{4}-\\d+/i", 0, &m, &out, err, sizeof(err)),
	    0);
	assert_int_equal(json_array_size(m), 1);
	assert_string_equal(json_string_value(json_object_get(json_array_get(m, 0), "ref")), "e8");
	json_decref(m);
	/* without the flag, case counts */
	assert_int_equal(act_find_in_snapshot(snap, NULL, "ord-\\d", 0, &m, &out, err, sizeof(err)),
	                 0);
	assert_int_equal(json_array_size(m), 0);
	json_decref(m);
	gb_buf_free(&out);
}

/* The layout of Playwright MCP's browser_find: three lines of context, the
 * path from the root above them, "..." where off-path lines are skipped,
 * windows apart by "----". */
static void test_layout(void **state)
{
	static const char toolbar[] = "- main [ref=e2]:\n"
	                              "  - group \"Toolbar\" [ref=e3]:\n"
	                              "    - button \"One\" [ref=e4]\n"
	                              "    - button \"Two\" [ref=e5]\n"
	                              "    - button \"Three\" [ref=e6]\n"
	                              "    - button \"Four\" [ref=e7]\n"
	                              "  - group \"Content\" [ref=e8]:\n"
	                              "    - button \"Target Button\" [ref=e9]\n";
	struct gb_buf out;
	json_t *m = NULL;
	char err[256] = "";

	(void)state;
	gb_buf_init(&out, 1 << 16);
	assert_int_equal(
	    act_find_in_snapshot(toolbar, "target button", NULL, 0, &m, &out, err, sizeof(err)), 0);
	assert_string_equal(out.data, "- main [ref=e2]:\n"
	                              "  - group \"Toolbar\" [ref=e3]:\n"
	                              "    ...\n"
	                              "    - button \"Three\" [ref=e6]\n"
	                              "    - button \"Four\" [ref=e7]\n"
	                              "  - group \"Content\" [ref=e8]:\n"
	                              "    - button \"Target Button\" [ref=e9]");
	json_decref(m);
	gb_buf_free(&out);
	/* matches far apart: two windows, the second under its path, with an
	 * ellipsis where it skips lines that lead to no match */
	gb_buf_init(&out, 1 << 16);
	assert_int_equal(
	    act_find_in_snapshot(snap, NULL, "heading|ORD", 0, &m, &out, err, sizeof(err)), 0);
	assert_int_equal(json_array_size(m), 2);
	assert_string_equal(out.data, "- heading \"Catalogue\" [level=1] [ref=e2]\n"
	                              "- list \"Products\" [ref=e3]:\n"
	                              "  - listitem [ref=e4]:\n"
	                              "    - text: Red apple\n"
	                              "\n----\n\n"
	                              "- list \"Products\" [ref=e3]:\n"
	                              "  ...\n"
	                              "  - listitem [ref=e6]:\n"
	                              "    - text: Green pear\n"
	                              "    - button \"Add green pear\" [ref=e7]\n"
	                              "- paragraph [ref=e8]: Order number ORD-2024-0042 is ready.");
	json_decref(m);
	gb_buf_free(&out);
}

static void test_bad_patterns(void **state)
{
	struct gb_buf out;
	json_t *m = NULL;
	char err[256] = "";
	char *big;

	(void)state;
	gb_buf_init(&out, 1 << 16);
	assert_int_equal(act_find_in_snapshot(snap, NULL, "(", 0, &m, &out, err, sizeof(err)), -1);
	assert_null(m);
	assert_non_null(strstr(err, "invalid regular expression"));
	assert_int_equal(act_find_in_snapshot(snap, NULL, "/a/x", 0, &m, &out, err, sizeof(err)),
	                 -1);
	assert_non_null(strstr(err, "flag 'x'"));
	assert_int_equal(act_find_in_snapshot(snap, "", NULL, 0, &m, &out, err, sizeof(err)), -1);
	/* catastrophic backtracking ends in a clean error */
	big = malloc(20000);
	memset(big, 'a', 19998);
	big[19998] = '!';
	big[19999] = '\0';
	assert_int_equal(act_find_in_snapshot(big, NULL, "^(a+)+$", 0, &m, &out, err, sizeof(err)),
	                 -1);
	assert_non_null(strstr(err, "too long"));
	free(big);
	/* the whole search is bounded by the call's deadline */
	{
		struct gb_buf many;
		int i;

		gb_buf_init(&many, 1 << 20);
		for (i = 0; i < 1000; i++)
			gb_buf_appendf(&many, "- text: line %d\n", i);
		assert_int_equal(act_find_in_snapshot(many.data, NULL, "line 999", gb_now_ms() - 1,
		                                      &m, &out, err, sizeof(err)),
		                 -1);
		assert_non_null(strstr(err, "ran out of time"));
		assert_int_equal(act_find_in_snapshot(many.data, NULL, "line 999",
		                                      gb_now_ms() + 60000, &m, &out, err,
		                                      sizeof(err)),
		                 0);
		assert_int_equal(json_array_size(m), 1);
		json_decref(m);
		gb_buf_free(&many);
	}
	gb_buf_free(&out);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_text),
		cmocka_unit_test(test_regex),
		cmocka_unit_test(test_layout),
		cmocka_unit_test(test_bad_patterns),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}

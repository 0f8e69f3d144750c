/*
 * test_actions.c - the pure parts of the pipeline: what counts as a
 * snapshot ref, and how key names become CDP key events.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "actions/actions-private.h"

#include <string.h>


static void test_refs_and_selectors(void **state)
{
	(void)state;
	assert_true(act_is_ref("e5"));
	assert_true(act_is_ref("e123"));
	assert_true(act_is_ref("f1e2"));
	assert_true(act_is_ref("f12e345"));
	assert_false(act_is_ref("e"));
	assert_false(act_is_ref("f1"));
	assert_false(act_is_ref("fe2"));
	assert_false(act_is_ref("#save"));
	assert_false(act_is_ref("button"));
	assert_false(act_is_ref("e5 "));
	assert_false(act_is_ref("embed"));
	assert_false(act_is_ref(""));
}

static void test_named_keys(void **state)
{
	struct key_def k;
	char text[8], code[16];

	(void)state;
	assert_int_equal(act_lookup_key("Enter", &k, text, code), 0);
	assert_int_equal(k.vk, 13);
	assert_string_equal(k.text, "\r");
	assert_int_equal(act_lookup_key("ArrowDown", &k, text, code), 0);
	assert_int_equal(k.vk, 40);
	assert_null(k.text);
	assert_int_equal(act_lookup_key("F12", &k, text, code), 0);
	assert_int_equal(k.vk, 123);
	assert_int_equal(act_lookup_key("NoSuchKey", &k, text, code), -1);
}

static void test_character_keys(void **state)
{
	struct key_def k;
	char text[8], code[16];

	(void)state;
	assert_int_equal(act_lookup_key("a", &k, text, code), 0);
	assert_string_equal(k.key, "a");
	assert_string_equal(k.text, "a");
	assert_string_equal(k.code, "KeyA");
	assert_int_equal(k.vk, 'A');
	assert_int_equal(act_lookup_key("7", &k, text, code), 0);
	assert_string_equal(k.code, "Digit7");
	assert_int_equal(act_lookup_key("é", &k, text, code), 0);
	assert_string_equal(k.text, "é");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_refs_and_selectors),
		cmocka_unit_test(test_named_keys),
		cmocka_unit_test(test_character_keys),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

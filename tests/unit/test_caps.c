/*
 * test_caps.c - capability groups (actions/caps.c): the --caps list and
 * the policy's "caps" array turn groups on, every group is off unless
 * turned on, and an unknown name is an error that names the known ones.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <string.h>

#include "actions/actions.h"

static void test_off_unless_turned_on(void **state)
{
	(void)state;
	assert_int_equal(act_caps_allows(0, NULL), 1);
	assert_int_equal(act_caps_allows(0, "vision"), 0);
	assert_int_equal(act_caps_allows(0, "testing"), 0);
	assert_int_equal(act_caps_allows(~0u, "no-such-group"), 0);
}

static void test_list(void **state)
{
	unsigned mask = 0;
	char err[256] = "";

	(void)state;
	assert_int_equal(act_caps_parse_list("vision, testing", &mask, err, sizeof(err)), 0);
	assert_int_equal(act_caps_allows(mask, "vision"), 1);
	assert_int_equal(act_caps_allows(mask, "testing"), 1);
	assert_int_equal(act_caps_allows(mask, "pdf"), 0);
	mask = 0;
	assert_int_equal(act_caps_parse_list("", &mask, err, sizeof(err)), 0);
	assert_int_equal(act_caps_parse_list(NULL, &mask, err, sizeof(err)), 0);
	assert_int_equal(mask, 0);
	assert_int_equal(act_caps_parse_list("vision,visoin", &mask, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "\"visoin\""));
	assert_non_null(strstr(err, "vision, testing, pdf"));
	assert_int_equal(act_caps_parse_list("vision,,testing", &mask, err, sizeof(err)), -1);
}

static void test_json(void **state)
{
	json_t *caps = json_pack("[s]", "testing");
	json_t *bad = json_pack("[i]", 3);
	json_t *notarray = json_string("vision");
	unsigned mask = 0;
	char err[256] = "";

	(void)state;
	assert_int_equal(act_caps_parse_json(caps, &mask, err, sizeof(err)), 0);
	assert_int_equal(act_caps_allows(mask, "testing"), 1);
	assert_int_equal(act_caps_allows(mask, "vision"), 0);
	assert_int_equal(act_caps_parse_json(bad, &mask, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "policy.caps[0]"));
	assert_int_equal(act_caps_parse_json(notarray, &mask, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "must be an array"));
	json_decref(caps);
	json_decref(bad);
	json_decref(notarray);
}

static void test_config_union(void **state)
{
	struct act_config cfg = { 0 };
	unsigned mask = 0;
	char err[256] = "";

	(void)state;
	cfg.caps = "vision";
	cfg.tenant_policy = json_pack("{s:[s]}", "caps", "testing");
	assert_int_equal(act_caps_of_config(&cfg, &mask, err, sizeof(err)), 0);
	assert_int_equal(act_caps_allows(mask, "vision"), 1);
	assert_int_equal(act_caps_allows(mask, "testing"), 1);
	json_decref(cfg.tenant_policy);
	cfg.tenant_policy = json_pack("{s:[s]}", "caps", "telepathy");
	assert_int_equal(act_caps_of_config(&cfg, &mask, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "telepathy"));
	json_decref(cfg.tenant_policy);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_off_unless_turned_on),
		cmocka_unit_test(test_list),
		cmocka_unit_test(test_json),
		cmocka_unit_test(test_config_union),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}

/*
 * test_actions.c - the pure parts of the pipeline: what counts as a
 * snapshot ref, how key names become CDP key events, the scrubbing of
 * values typed from secrets, and the page_content policy.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "actions/actions-private.h"

#include <stdlib.h>
#include <string.h>

static void test_scrub_typed_secrets(void **state)
{
	static const char pw[] = "p@ss w/rd&\"1";
	struct act_session s;
	json_t *j;
	char *out;

	(void)state;
	memset(&s, 0, sizeof(s));
	assert_null(act_secrets_scrub_text(&s, "nothing typed yet"));
	act_secrets_remember(&s, "SHOP_PASSWORD", (const unsigned char *)pw, strlen(pw));
	act_secrets_remember(&s, "SHOP_PASSWORD", (const unsigned char *)pw, strlen(pw));
	assert_int_equal(s.n_typed_secrets, 1);
	/* raw, percent-encoded, form-encoded and JSON-escaped */
	out = act_secrets_scrub_text(&s, "a p@ss w/rd&\"1 b");
	assert_string_equal(out, "a [secret SHOP_PASSWORD] b");
	free(out);
	out = act_secrets_scrub_text(&s, "/login?pw=p%40ss%20w%2Frd%26%221&x=p%40ss+w%2Frd%26%221");
	assert_string_equal(out, "/login?pw=[secret SHOP_PASSWORD]&x=[secret SHOP_PASSWORD]");
	free(out);
	out = act_secrets_scrub_text(&s, "Result: \"p@ss w/rd&\\\"1\"");
	assert_string_equal(out, "Result: \"[secret SHOP_PASSWORD]\"");
	free(out);
	assert_null(act_secrets_scrub_text(&s, "p@ss w/rd"));
	j = json_pack("{s:[s, {s:s}], s:i}", "a", "x p@ss w/rd&\"1", "k",
	              "p@ss w/rd&\"1p@ss w/rd&\"1", "n", 3);
	act_secrets_scrub_json(&s, j);
	assert_string_equal(json_string_value(json_array_get(json_object_get(j, "a"), 0)),
	                    "x [secret SHOP_PASSWORD]");
	assert_string_equal(
	    json_string_value(json_object_get(json_array_get(json_object_get(j, "a"), 1), "k")),
	    "[secret SHOP_PASSWORD][secret SHOP_PASSWORD]");
	json_decref(j);
	act_secrets_stop(&s);
	assert_int_equal(s.n_typed_secrets, 0);
}

static void test_page_content_policy(void **state)
{
	struct act_session s;
	struct policy_tenant *t = NULL;
	char err[1024];
	json_t *p;

	(void)state;
	memset(&s, 0, sizeof(s));
	act_secrets_start(&s, NULL);
	assert_int_equal(s.hidden_text, SNAP_HIDDEN_FLAG);
	p = json_pack("{s:{s:s}}", "page_content", "hidden_text", "drop");
	assert_int_equal(policy_tenant_parse(p, NULL, &t, err, sizeof(err)), 0);
	act_secrets_start(&s, t);
	assert_int_equal(s.hidden_text, SNAP_HIDDEN_DROP);
	policy_tenant_unref(t);
	json_decref(p);
	/* the policy is checked once, up front (policy/tenant.h) */
	p = json_pack("{s:{s:s}}", "page_content", "hidden_text", "hide");
	assert_int_equal(policy_tenant_parse(p, NULL, &t, err, sizeof(err)), -POLICY_EINVAL);
	assert_non_null(strstr(err, "page_content.hidden_text must be \"flag\" or \"drop\""));
	json_decref(p);
	p = json_pack("{s:{s:b}}", "page_content", "hidden", 1);
	assert_int_equal(policy_tenant_parse(p, NULL, &t, err, sizeof(err)), -POLICY_EINVAL);
	assert_non_null(strstr(err, "page_content.hidden is not a setting"));
	json_decref(p);
}

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

/* Locators: what each one asks for, and a precise error for a bad one. */
static void test_locators(void **state)
{
	const char *kind;
	char *what, *name;
	char err[256];

	(void)state;
	assert_int_equal(act_parse_locator("role=button[name=\"Place \\\"order\\\"\"]", &kind,
	                                   &what, &name, err, sizeof(err)),
	                 1);
	assert_string_equal(kind, "role");
	assert_string_equal(what, "button");
	assert_string_equal(name, "Place \"order\"");
	free(what);
	free(name);
	assert_int_equal(act_parse_locator("role=link", &kind, &what, &name, err, sizeof(err)), 1);
	assert_string_equal(what, "link");
	assert_null(name);
	free(what);
	assert_int_equal(
	    act_parse_locator("text=\"Add to cart\"", &kind, &what, &name, err, sizeof(err)), 1);
	assert_string_equal(kind, "text");
	assert_string_equal(what, "Add to cart");
	free(what);
	assert_int_equal(act_parse_locator("text=Checkout", &kind, &what, &name, err, sizeof(err)),
	                 1);
	assert_string_equal(what, "Checkout");
	free(what);
	assert_int_equal(act_parse_locator("css=#pay > b", &kind, &what, &name, err, sizeof(err)),
	                 1);
	assert_string_equal(kind, "css");
	assert_string_equal(what, "#pay > b");
	free(what);
	/* plain CSS is not a locator */
	assert_int_equal(act_parse_locator("#save", &kind, &what, &name, err, sizeof(err)), 0);
	assert_int_equal(act_parse_locator("button.role", &kind, &what, &name, err, sizeof(err)),
	                 0);
	/* malformed ones say what to write */
	assert_int_equal(act_parse_locator("role=Button", &kind, &what, &name, err, sizeof(err)),
	                 -1);
	assert_non_null(strstr(err, "lowercase letters"));
	assert_int_equal(
	    act_parse_locator("role=button[label=\"x\"]", &kind, &what, &name, err, sizeof(err)),
	    -1);
	assert_non_null(strstr(err, "role=button[name=\"Save\"]"));
	assert_int_equal(
	    act_parse_locator("role=button[name=Save]", &kind, &what, &name, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "JSON string"));
	assert_int_equal(act_parse_locator("text=", &kind, &what, &name, err, sizeof(err)), -1);
	assert_int_equal(act_parse_locator("text=\"open", &kind, &what, &name, err, sizeof(err)),
	                 -1);
	assert_null(what);
	assert_null(name);
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
		cmocka_unit_test(test_locators),
		cmocka_unit_test(test_scrub_typed_secrets),
		cmocka_unit_test(test_page_content_policy),
		cmocka_unit_test(test_named_keys),
		cmocka_unit_test(test_character_keys),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

/*
 * test_registry.c - the tool descriptors and act_check_args(): every
 * descriptor whole (effect, policy kind, expect, idempotency key), the
 * names agents written for Playwright MCP call, the hints a client sees,
 * and the messages a model gets back when its arguments are wrong.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <sodium.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "actions/actions-private.h"
#include "common/util.h"
#include "policy/risk.h"

static const char *const expected_names[] = {
	"browser_navigate",
	"browser_navigate_back",
	"browser_snapshot",
	"browser_click",
	"browser_type",
	"browser_press_key",
	"browser_select_option",
	"browser_hover",
	"browser_evaluate",
	"browser_take_screenshot",
	"browser_handle_dialog",
	"browser_wait_for",
	"browser_tabs",
	"browser_close",
	"browser_session",
	"browser_fill_form",
	"browser_drag",
	"browser_find",
	"browser_resize",
	"browser_emulate_media",
	"browser_emulate",
	"browser_mouse_click_xy",
	"browser_mouse_move_xy",
	"browser_mouse_drag_xy",
	"browser_mouse_down",
	"browser_mouse_up",
	"browser_mouse_wheel",
	"browser_verify_element_visible",
	"browser_verify_text_visible",
	"browser_verify_list_visible",
	"browser_verify_value",
	"browser_generate_locator",
	"browser_file_upload",
	"browser_drop",
	"browser_console_messages",
	"browser_network_requests",
	"browser_network_request",
	"browser_pdf_save",
};
#define N_EXPECTED (sizeof(expected_names) / sizeof(expected_names[0]))

static const struct act_param *param(const struct act_def *def, const char *name)
{
	size_t i;

	for (i = 0; i < def->n_params; i++) {
		if (!strcmp(def->params[i].name, name))
			return &def->params[i];
	}
	return NULL;
}

/* Runs act_check_args on a JSON text; returns its rc and leaves the message. */
static int check(const char *tool, const char *json, char *err, size_t errlen)
{
	const struct act_def *def = act_tool_find(tool);
	json_error_t jerr;
	json_t *args = NULL;
	int rc;

	assert_non_null(def);
	if (json) {
		args = json_loads(json, 0, &jerr);
		assert_non_null(args);
	}
	err[0] = '\0';
	rc = act_check_args(def, args, err, errlen);
	json_decref(args);
	return rc;
}

static void test_table_names_and_order(void **state)
{
	size_t i;

	(void)state;
	assert_int_equal(act_tool_count(), N_EXPECTED);
	for (i = 0; i < N_EXPECTED; i++) {
		assert_non_null(act_tool_at(i));
		assert_string_equal(act_tool_at(i)->name, expected_names[i]);
		assert_ptr_equal(act_tool_find(expected_names[i]), act_tool_at(i));
		assert_non_null(act_tool_at(i)->title);
		assert_true(strlen(act_tool_at(i)->description) > 40);
	}
	assert_null(act_tool_at(N_EXPECTED));
	assert_null(act_tool_find("browser_teleport"));
	assert_null(act_tool_find(""));
	assert_null(act_tool_find(NULL));
}

/* Every descriptor is whole, and the pipeline's guarantees follow from it:
 * an effect and a policy kind (or a reason for an exemption, only for
 * tools that read), code to run, `expect` accepted exactly by the tools
 * that check it (and only those have the post-observation that checks
 * it), an idempotency key on everything that can change something. */
static void test_every_descriptor_is_whole(void **state)
{
	size_t i;
	const struct act_def *d;

	(void)state;
	for (i = 0; (d = i < act_tool_count() ? act_tool_at(i)
	                                      : act_internal_tool_at(i - act_tool_count()));
	     i++) {
		print_message("%s\n", d->name);
		assert_int_not_equal(d->effect, ACT_EFFECT_UNSET);
		assert_true(d->policy.set);
		assert_non_null(d->impl);
		assert_non_null(d->impl->run);
		if (d->policy.exempt) {
			/* only a tool that reads may skip the risk rules, with its reason */
			assert_int_equal(d->effect, ACT_EFFECT_READ);
			assert_true(strlen(d->policy.exempt) > 20);
		} else {
			assert_true(d->policy.kind >= 0 && d->policy.kind < POLICY_ACT_KIND_COUNT);
		}
		if (d->effect == ACT_EFFECT_READ)
			assert_non_null(d->policy.exempt);
		/* expect: accepted if and only if checked, and checked only after an
		 * action on the page (post-observe) */
		assert_int_equal(param(d, "expect") != NULL, d->checks_expect != 0);
		if (d->checks_expect) {
			assert_int_equal(d->effect, ACT_EFFECT_PAGE);
			assert_int_equal(param(d, "expect")->type, ACT_T_OBJECT);
		}
		/* anything with side effects takes an idempotency key */
		assert_int_equal(param(d, "operation_id") != NULL, d->effect != ACT_EFFECT_READ);
		if (param(d, "operation_id")) {
			assert_int_equal(param(d, "operation_id")->type, ACT_T_STRING);
			assert_false(param(d, "operation_id")->required);
		}
		assert_int_equal(act_def_read_only(d), d->effect == ACT_EFFECT_READ);
		/* a capability group is one that can be turned on */
		if (d->caps) {
			unsigned bit;

			assert_int_equal(act_caps_bit(d->caps, &bit), 0);
		}
	}
	assert_int_equal(act_tool_find("browser_evaluate")->effect, ACT_EFFECT_PAGE);
	assert_int_equal(act_tool_find("browser_click")->effect, ACT_EFFECT_PAGE);
	assert_int_equal(act_tool_find("browser_tabs")->effect, ACT_EFFECT_PAGE);
	assert_int_equal(act_tool_find("browser_close")->effect, ACT_EFFECT_LIFECYCLE);
	assert_int_equal(act_tool_find("browser_snapshot")->effect, ACT_EFFECT_READ);
	/* the CLI's tools are never offered to agents */
	assert_null(act_tool_find("glassbox_profile_export"));
	assert_non_null(act_internal_tool_find("glassbox_profile_export"));
	assert_int_equal(act_internal_tool_find("glassbox_profile_import")->effect,
	                 ACT_EFFECT_LIFECYCLE);
}

static void test_table_playwright_parameters(void **state)
{
	const struct act_def *click = act_tool_find("browser_click");
	const struct act_def *type = act_tool_find("browser_type");
	const struct act_def *tabs = act_tool_find("browser_tabs");
	const struct act_param *p;

	(void)state;
	p = param(click, "target");
	assert_non_null(p);
	assert_true(p->required);
	assert_string_equal(
	    p->description,
	    "Exact target element reference from the page snapshot, or a unique "
	    "element selector: CSS, or a locator such as role=button[name=\"Save\"] "
	    "or text=\"Save\" (searched in the page and its frames)");
	assert_false(param(click, "element")->required);
	assert_string_equal(param(click, "button")->enum_values[2], "middle");
	assert_null(param(click, "button")->enum_values[3]);
	assert_int_equal(param(click, "modifiers")->type, ACT_T_STRING_ARRAY);
	assert_int_equal(param(click, "doubleClick")->type, ACT_T_BOOLEAN);
	/* browser_type: exactly one of text and secret */
	assert_false(param(type, "text")->required);
	assert_false(param(type, "secret")->required);
	assert_string_equal(type->one_of[0], "text");
	assert_string_equal(type->one_of[1], "secret");
	assert_null(type->one_of[2]);
	assert_non_null(param(type, "submit"));
	assert_non_null(param(type, "slowly"));
	assert_true(param(tabs, "action")->required);
	assert_int_equal(param(tabs, "index")->type, ACT_T_INTEGER);
	assert_true(param(act_tool_find("browser_navigate"), "url")->required);
	assert_true(param(act_tool_find("browser_press_key"), "key")->required);
	assert_true(param(act_tool_find("browser_select_option"), "values")->required);
	assert_true(param(act_tool_find("browser_evaluate"), "function")->required);
	assert_false(param(act_tool_find("browser_evaluate"), "target")->required);
	assert_true(param(act_tool_find("browser_handle_dialog"), "accept")->required);
	assert_int_equal(param(act_tool_find("browser_wait_for"), "time")->type, ACT_T_NUMBER);
	assert_int_equal(param(act_tool_find("browser_snapshot"), "maxChars")->type, ACT_T_INTEGER);
	/* expect, operation_id and approval */
	assert_int_equal(act_tool_find("browser_navigate_back")->n_params, 3);
	assert_int_equal(param(act_tool_find("browser_click"), "approval")->type, ACT_T_STRING);
}

static void test_check_accepts_valid_arguments(void **state)
{
	char err[256];

	(void)state;
	assert_int_equal(check("browser_click", "{\"target\":\"e5\"}", err, sizeof(err)), 0);
	assert_int_equal(
	    check("browser_click",
	          "{\"target\":\"e5\",\"element\":\"Save button\",\"doubleClick\":true,"
	          "\"button\":\"right\",\"modifiers\":[\"Shift\",\"ControlOrMeta\"],"
	          "\"expect\":{\"urlContains\":\"/saved\"},\"operation_id\":\"op-1\"}",
	          err, sizeof(err)),
	    0);
	assert_int_equal(check("browser_navigate_back", NULL, err, sizeof(err)), 0);
	assert_int_equal(check("browser_close", "{}", err, sizeof(err)), 0);
	assert_int_equal(
	    check("browser_type", "{\"target\":\"#q\",\"text\":\"\"}", err, sizeof(err)), 0);
	assert_int_equal(
	    check("browser_select_option", "{\"target\":\"e3\",\"values\":[]}", err, sizeof(err)),
	    0);
	assert_int_equal(check("browser_wait_for", "{\"time\":2.5}", err, sizeof(err)), 0);
	assert_int_equal(check("browser_wait_for", "{\"time\":0}", err, sizeof(err)), 0);
	assert_int_equal(check("browser_wait_for", "{\"time\":30}", err, sizeof(err)), 0);
	/* JSON Schema counts 2.0 as an integer */
	assert_int_equal(
	    check("browser_tabs", "{\"action\":\"select\",\"index\":2.0}", err, sizeof(err)), 0);
	assert_int_equal(check("browser_snapshot", "{\"maxChars\":5000}", err, sizeof(err)), 0);
}

static void test_check_required(void **state)
{
	char err[256];

	(void)state;
	assert_int_equal(check("browser_click", "{}", err, sizeof(err)), -1);
	assert_string_equal(err, "argument 'target' is required: pass a ref from browser_snapshot "
	                         "(e.g. \"e5\") or a CSS selector");
	assert_int_equal(check("browser_click", NULL, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "'target' is required"));
	assert_int_equal(check("browser_navigate", "{}", err, sizeof(err)), -1);
	assert_non_null(strstr(err, "argument 'url' is required"));
	assert_int_equal(check("browser_type", "{\"target\":\"e1\"}", err, sizeof(err)), -1);
	assert_string_equal(err, "browser_type takes exactly one of 'text' or 'secret' (got none)");
	assert_int_equal(check("browser_type",
	                       "{\"target\":\"e1\",\"text\":\"a\",\"secret\":\"S\"}", err,
	                       sizeof(err)),
	                 -1);
	assert_string_equal(err, "browser_type takes exactly one of 'text' or 'secret' (got more "
	                         "than one)");
	assert_int_equal(check("browser_type", "{\"target\":\"e1\",\"secret\":\"SHOP_PASSWORD\"}",
	                       err, sizeof(err)),
	                 0);
	assert_int_equal(check("browser_tabs", "{\"index\":1}", err, sizeof(err)), -1);
	assert_string_equal(err,
	                    "argument 'action' is required: pass one of list, new, select, close");
}

static void test_check_types(void **state)
{
	char err[256];

	(void)state;
	assert_int_equal(check("browser_click", "{\"target\":5}", err, sizeof(err)), -1);
	assert_string_equal(err, "argument 'target' must be a string (got integer)");
	assert_int_equal(check("browser_click", "{\"target\":null}", err, sizeof(err)), -1);
	assert_string_equal(err, "argument 'target' must be a string (got null)");
	assert_int_equal(
	    check("browser_click", "{\"target\":\"e1\",\"doubleClick\":\"yes\"}", err, sizeof(err)),
	    -1);
	assert_string_equal(err, "argument 'doubleClick' must be a boolean (true or false) "
	                         "(got string)");
	assert_int_equal(check("browser_wait_for", "{\"time\":\"5\"}", err, sizeof(err)), -1);
	assert_string_equal(err, "argument 'time' must be a number (got string)");
	assert_int_equal(check("browser_snapshot", "{\"maxChars\":1000.5}", err, sizeof(err)), -1);
	assert_string_equal(err, "argument 'maxChars' must be an integer (got 1000.5)");
	assert_int_equal(
	    check("browser_click", "{\"target\":\"e1\",\"expect\":[]}", err, sizeof(err)), -1);
	assert_string_equal(err, "argument 'expect' must be an object (got array)");
	assert_int_equal(check("browser_select_option", "{\"target\":\"e1\",\"values\":\"red\"}",
	                       err, sizeof(err)),
	                 -1);
	assert_string_equal(err, "argument 'values' must be an array of strings (got string)");
	assert_int_equal(check("browser_select_option",
	                       "{\"target\":\"e1\",\"values\":[\"red\",7]}", err, sizeof(err)),
	                 -1);
	assert_string_equal(err, "argument 'values' must be an array of strings: item 1 is not a "
	                         "string (got integer)");
}

static void test_check_enums(void **state)
{
	char err[256];

	(void)state;
	assert_int_equal(
	    check("browser_click", "{\"target\":\"e1\",\"button\":\"center\"}", err, sizeof(err)),
	    -1);
	assert_string_equal(err, "argument 'button' must be one of left, right, middle");
	assert_int_equal(check("browser_click",
	                       "{\"target\":\"e1\",\"modifiers\":[\"Shift\",\"Ctrl\"]}", err,
	                       sizeof(err)),
	                 -1);
	assert_string_equal(err, "argument 'modifiers' item 1 must be one of Alt, Control, "
	                         "ControlOrMeta, Meta, Shift");
	assert_int_equal(check("browser_take_screenshot", "{\"type\":\"gif\"}", err, sizeof(err)),
	                 -1);
	assert_string_equal(err, "argument 'type' must be one of png, jpeg, webp");
	assert_int_equal(check("browser_take_screenshot", "{\"type\":\"jpeg\"}", err, sizeof(err)),
	                 0);
	assert_int_equal(check("browser_tabs", "{\"action\":\"open\"}", err, sizeof(err)), -1);
	assert_string_equal(err, "argument 'action' must be one of list, new, select, close");
}

static void test_check_ranges(void **state)
{
	char err[256];

	(void)state;
	assert_int_equal(check("browser_wait_for", "{\"time\":45}", err, sizeof(err)), -1);
	assert_string_equal(err, "argument 'time' must be between 0 and 30 (got 45)");
	assert_int_equal(check("browser_wait_for", "{\"time\":-1}", err, sizeof(err)), -1);
	assert_int_equal(
	    check("browser_tabs", "{\"action\":\"close\",\"index\":-1}", err, sizeof(err)), -1);
	assert_string_equal(err, "argument 'index' must be between 0 and 1000 (got -1)");
	assert_int_equal(check("browser_snapshot", "{\"maxChars\":10}", err, sizeof(err)), -1);
	assert_non_null(strstr(err, "argument 'maxChars' must be between 100 and"));
}

static void test_check_unknown_and_shape(void **state)
{
	const struct act_def *click = act_tool_find("browser_click");
	char err[256];
	json_t *arr;

	(void)state;
	assert_int_equal(
	    check("browser_click", "{\"target\":\"e1\",\"ref\":\"e1\"}", err, sizeof(err)), -1);
	assert_string_equal(err, "unknown argument 'ref': browser_click accepts target, element, "
	                         "doubleClick, button, modifiers, expect, operation_id, approval");
	/* read-only tools take no idempotency key */
	assert_int_equal(check("browser_snapshot", "{\"operation_id\":\"x\"}", err, sizeof(err)),
	                 -1);
	assert_non_null(strstr(err, "unknown argument 'operation_id'"));
	assert_int_equal(check("browser_take_screenshot", "{\"expect\":{}}", err, sizeof(err)), -1);

	arr = json_array();
	assert_int_equal(act_check_args(click, arr, err, sizeof(err)), -1);
	assert_string_equal(err, "arguments of browser_click must be a JSON object (got array)");
	json_decref(arr);
	assert_int_equal(act_check_args(NULL, NULL, err, sizeof(err)), -1);

	/* a short buffer truncates but stays a string; no buffer is fine too */
	assert_int_equal(check("browser_click", "{}", err, 10), -1);
	assert_int_equal(strlen(err), 9);
	assert_int_equal(act_check_args(click, NULL, NULL, 0), -1);
}

/* schema's "$id" is urn:glassbox:tool-result: and the first 16 hex digits
 * of the SHA-256 of the rest of it, as canonical JSON. */
static void expect_named_by_content(const json_t *schema)
{
	unsigned char digest[crypto_hash_sha256_BYTES];
	char hex[2 * crypto_hash_sha256_BYTES + 1];
	char want[64];
	json_t *rest = json_deep_copy(schema);
	char *text;

	assert_int_equal(json_object_del(rest, "$id"), 0);
	text = json_dumps(rest, JSON_COMPACT | JSON_SORT_KEYS);
	crypto_hash_sha256(digest, (const unsigned char *)text, strlen(text));
	gb_hex(digest, sizeof(digest), hex);
	snprintf(want, sizeof(want), "urn:glassbox:tool-result:%.16s", hex);
	assert_string_equal(json_string_value(json_object_get(schema, "$id")), want);
	free(text);
	json_decref(rest);
}

static void test_output_schema(void **state)
{
	json_t *schema = act_output_schema();
	json_t *props;
	json_t *req;
	static const char *const fields[] = {
		"operation_id",
		"tool",
		"ok",
		"error",
		"url_before",
		"url",
		"title",
		"navigated",
		"status",
		"responses",
		"failed_requests",
		"dialogs",
		"dialog_open",
		"console_errors",
		"dom_changed",
		"value",
		"result",
		"tabs",
		"verdicts",
		"evidence",
		"duration_ms",
		"profile",
		"profile_closed",
		"profiles",
		"downloads",
		"uploads",
		"messages",
		"requests",
		"request",
		"pdf",
		"wsEndpoint",
	};
	size_t i;

	(void)state;
	assert_non_null(schema);
	assert_string_equal(json_string_value(json_object_get(schema, "type")), "object");
	props = json_object_get(schema, "properties");
	assert_true(json_is_object(props));
	for (i = 0; i < sizeof(fields) / sizeof(fields[0]); i++)
		assert_non_null(json_object_get(props, fields[i]));
	assert_int_equal(json_object_size(props), sizeof(fields) / sizeof(fields[0]));
	req = json_object_get(schema, "required");
	assert_int_equal(json_array_size(req), 3);
	assert_string_equal(json_string_value(json_array_get(req, 0)), "operation_id");
	assert_string_equal(json_string_value(json_array_get(req, 1)), "tool");
	assert_string_equal(json_string_value(json_array_get(req, 2)), "ok");
	assert_string_equal(
	    json_string_value(json_object_get(json_object_get(props, "status"), "type")),
	    "integer");
	assert_string_equal(
	    json_string_value(json_object_get(
	        json_object_get(json_object_get(props, "console_errors"), "items"), "type")),
	    "string");
	assert_string_equal(
	    json_string_value(json_object_get(
	        json_object_get(
	            json_object_get(json_object_get(json_object_get(props, "evidence"), "items"),
	                            "properties"),
	            "size"),
	        "type")),
	    "integer");
	expect_named_by_content(schema);
	json_decref(schema);
}

/* An array of objects (browser_fill_form's fields) is checked item by
 * item, member by member, each error naming fields[i].member; a nullable
 * parameter takes null (browser_emulate_media clears with it). */
static void test_check_object_arrays_and_null(void **state)
{
	char err[512];

	(void)state;
	assert_int_equal(check("browser_fill_form",
	                       "{\"fields\":[{\"name\":\"A\",\"type\":\"textbox\","
	                       "\"target\":\"e1\",\"value\":\"x\"}]}",
	                       err, sizeof(err)),
	                 0);
	assert_int_equal(check("browser_fill_form",
	                       "{\"fields\":[{\"name\":\"A\",\"type\":\"textbox\","
	                       "\"target\":\"e1\",\"value\":\"x\"},{\"name\":\"B\","
	                       "\"type\":\"dial\",\"target\":\"e2\",\"value\":\"1\"}]}",
	                       err, sizeof(err)),
	                 -1);
	assert_non_null(strstr(err, "'fields[1].type' must be one of textbox"));
	assert_int_equal(check("browser_fill_form",
	                       "{\"fields\":[{\"name\":\"A\",\"type\":\"textbox\","
	                       "\"target\":\"e1\",\"value\":\"x\",\"colour\":1}]}",
	                       err, sizeof(err)),
	                 -1);
	assert_non_null(strstr(err, "unknown member 'colour' in 'fields[0]'"));
	assert_int_equal(check("browser_fill_form", "{\"fields\":[]}", err, sizeof(err)), -1);
	assert_non_null(strstr(err, "at least 1 item"));
	assert_int_equal(check("browser_fill_form", "{\"fields\":[3]}", err, sizeof(err)), -1);
	assert_non_null(strstr(err, "'fields[0]' must be an object"));
	assert_int_equal(check("browser_emulate_media", "{\"colorScheme\":null}", err, sizeof(err)),
	                 0);
	assert_int_equal(
	    check("browser_emulate_media", "{\"colorScheme\":\"purple\"}", err, sizeof(err)), -1);
	assert_int_equal(
	    check("browser_resize", "{\"width\":null,\"height\":500}", err, sizeof(err)), -1);
}

/* docs/tools.md lists every tool under its own heading (with its
 * capability group), and every parameter of it in that section. */
static void test_every_tool_is_documented(void **state)
{
	FILE *f = fopen(TOOLS_DOC, "r");
	static char doc[1 << 20];
	size_t len;
	size_t i, k;

	(void)state;
	assert_non_null(f);
	len = fread(doc, 1, sizeof(doc) - 1, f);
	fclose(f);
	doc[len] = '\0';
	for (i = 0; i < act_tool_count(); i++) {
		const struct act_def *d = act_tool_at(i);
		char heading[160], want[160];
		const char *start, *end;

		snprintf(heading, sizeof(heading), "\n### `%s`", d->name);
		start = strstr(doc, heading);
		if (!start)
			fail_msg("docs/tools.md has no section \"### `%s`\"", d->name);
		end = strstr(start + 1, "\n### ");
		end = end ? end : doc + len;
		if (d->caps) {
			snprintf(want, sizeof(want), "### `%s` (group `%s`)", d->name, d->caps);
			if (strncmp(start + 1, want, strlen(want)) != 0)
				fail_msg("docs/tools.md: %s must say its group: \"%s\"", d->name,
				         want);
		}
		for (k = 0; k < d->n_params; k++) {
			const char *hit;

			snprintf(want, sizeof(want), "`%s`", d->params[k].name);
			hit = strstr(start, want);
			if (!hit || hit > end)
				fail_msg("docs/tools.md: the section of %s does not name its "
				         "parameter %s",
				         d->name, want);
		}
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_table_names_and_order),
		cmocka_unit_test(test_every_descriptor_is_whole),
		cmocka_unit_test(test_table_playwright_parameters),
		cmocka_unit_test(test_check_accepts_valid_arguments),
		cmocka_unit_test(test_check_required),
		cmocka_unit_test(test_check_types),
		cmocka_unit_test(test_check_enums),
		cmocka_unit_test(test_check_ranges),
		cmocka_unit_test(test_check_unknown_and_shape),
		cmocka_unit_test(test_output_schema),
		cmocka_unit_test(test_check_object_arrays_and_null),
		cmocka_unit_test(test_every_tool_is_documented),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

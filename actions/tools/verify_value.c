/*
 * verify_value.c - browser_verify_value (testing): a field holds a value
 * (a checkbox or radio button: checked or not), re-read from the page.
 */
#include "actions/actions-private.h"
#include "actions/codegen.h"
#include "actions/tools/params.h"

#include <string.h>

/* What the field holds, read in the isolated world: {value, label?,
 * checked?}; label is the selected option's text of a <select>. */
static const char held_js[] =
    "function() { const el = this.nodeType === 1 ? this : this.parentElement;"
    " const out = { value: 'value' in el && el.tagName !== 'BUTTON' ? String(el.value) : "
    "(el.innerText || '') };"
    " if (el.tagName === 'SELECT') out.label = [...el.selectedOptions].map(o => "
    "o.label.trim()).join(', ');"
    " if ('checked' in el && (el.type === 'checkbox' || el.type === 'radio')) out.checked = "
    "el.checked;"
    " else if (el.hasAttribute('aria-checked')) out.checked = el.getAttribute('aria-checked') "
    "=== 'true';"
    " return out; }";

static const char *const field_types[] = { "textbox",  "checkbox", "radio",
	                                   "combobox", "slider",   NULL };

static int verify_value_run(struct act_ctx *ctx)
{
	const char *type = json_string_value(json_object_get(ctx->args, "type"));
	const char *want = json_string_value(json_object_get(ctx->args, "value"));
	int checkable = !strcmp(type, "checkbox") || !strcmp(type, "radio");
	json_t *held = NULL;
	const char *got;
	const char *label;
	int ok;
	int rc;

	if (checkable && strcmp(want, "true") && strcmp(want, "false"))
		return act_fail(ctx, "bad_arguments",
		                "the value of a %s is \"true\" or \"false\" (got \"%.40s\")", type,
		                want);
	rc = act_call_in_isolated_world(ctx, held_js, &held, "reading the value");
	if (rc < 0)
		goto out;
	if (checkable) {
		if (!json_is_boolean(json_object_get(held, "checked"))) {
			rc = act_fail(ctx, "wrong_field_type",
			              "%s is not a checkbox or radio button: give its type",
			              ctx->target.description);
			goto out;
		}
		got = json_is_true(json_object_get(held, "checked")) ? "true" : "false";
		label = NULL;
	} else {
		got = json_string_value(json_object_get(held, "value"));
		label = json_string_value(json_object_get(held, "label"));
	}
	/* a combobox matches its option's value or its text */
	ok = !strcmp(got, want) || (label && !strcmp(label, want));
	act_add_verdict(ctx, "value", json_string(want), json_string(label ? label : got), ok);
	if (!ok) {
		gb_buf_appendf(&ctx->text, "- %s holds \"%.200s\"%s%.200s%s, not \"%.200s\"",
		               ctx->target.description, got, label ? " (" : "", label ? label : "",
		               label ? ")" : "", want);
		rc = act_fail(ctx, "verification_failed",
		              "Expected value \"%.200s\", but got \"%.200s\"", want, got);
		ctx->error_plain = 1;
		goto out;
	}
	gb_buf_appendf(&ctx->text, "Verified: %s holds \"%.200s\"", ctx->target.description, want);
	gb_buf_appendf(&ctx->result, "Done");
out:
	json_decref(held);
	return rc;
}

/* await expect(<locator>).toHaveValue('<value>'); or .toBeChecked(), in the
 * language of the code shown. */
static void verify_value_code(struct act_ctx *ctx)
{
	const char *type = json_string_value(json_object_get(ctx->args, "type"));
	const char *want = json_string_value(json_object_get(ctx->args, "value"));
	struct act_code_target t;

	act_code_target_of(ctx, &t);
	if (!strcmp(type, "checkbox") || !strcmp(type, "radio"))
		act_code_expect(&ctx->code, &t, NULL,
		                strcmp(want, "true") ? ACT_ASSERT_NOT_CHECKED : ACT_ASSERT_CHECKED,
		                NULL);
	else
		act_code_expect(&ctx->code, &t, NULL, ACT_ASSERT_VALUE, want);
}

static const struct act_param params[] = {
	{ .name = "type",
	  .type = ACT_T_STRING,
	  .required = 1,
	  .description = "Type of the element",
	  .enum_values = field_types },
	{ .name = "element",
	  .type = ACT_T_STRING,
	  .required = 1,
	  .description = "Human-readable element description" },
	{ .name = "target",
	  .type = ACT_T_STRING,
	  .required = 1,
	  .description = "Exact target element reference from the page snapshot" },
	{ .name = "value",
	  .type = ACT_T_STRING,
	  .required = 1,
	  .description = "Value to verify. For checkbox, use \"true\" or \"false\"." },
};

static const struct act_tool_impl impl = {
	.run = verify_value_run,
	.needs_target = 1,
	.code = verify_value_code,
};

const struct act_def act_tool_verify_value = {
	.name = "browser_verify_value",
	.title = "Verify value",
	.description = "Verify element value, re-read from the page: a textbox's or slider's "
	               "value, a combobox's selected option (value or text), whether a checkbox "
	               "or radio button is checked. The verdict is in structuredContent.verdicts; "
	               "a failed verification is an error.",
	PARAMS(params),
	.effect = ACT_EFFECT_READ,
	.policy = ACT_POLICY_EXEMPT("reads the page only: a verification"),
	.caps = "testing",
	.impl = &impl,
};

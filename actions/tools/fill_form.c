/*
 * fill_form.c - browser_fill_form: several fields in one call (textbox,
 * checkbox, radio, combobox, slider), each put in as its own tool would
 * (browser_type, a real click, browser_select_option) and re-read.
 *
 * Every field is resolved and gated (as a typed text, a click or a
 * selection, with its own value) before any is touched: one refusal
 * leaves the whole form as it was. Fields are then filled in order; the
 * first that does not take its value stops the call, which fails naming
 * it; each field has its verdict in structuredContent.fields.
 */
#include "actions/actions-private.h"
#include "actions/codegen.h"
#include "actions/tools/params.h"

#include "policy/risk.h"
#include "secrets/secrets.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* a field's bit in ctx->sensitive_fields */
_Static_assert(ACT_MAX_PARTS <= 64, "sensitive_fields has a bit per field");

static const char *const field_types[] = { "textbox",  "checkbox", "radio",
	                                   "combobox", "slider",   NULL };

/* The target of field i: "target", else "ref" (Playwright MCP's older name). */
static const char *field_target(json_t *field)
{
	const char *t = json_string_value(json_object_get(field, "target"));

	return t ? t : json_string_value(json_object_get(field, "ref"));
}

/* The checks act_check_args cannot make: one of target or ref; a
 * checkbox's or radio's value "true" or "false". */
static int check_fields(struct act_ctx *ctx, json_t *fields)
{
	json_t *f;
	size_t i;

	json_array_foreach(fields, i, f)
	{
		const char *name = json_string_value(json_object_get(f, "name"));
		const char *type = json_string_value(json_object_get(f, "type"));
		const char *value = json_string_value(json_object_get(f, "value"));
		int has_target = json_object_get(f, "target") != NULL;
		int has_ref = json_object_get(f, "ref") != NULL;

		if (has_target == has_ref)
			return act_fail(ctx, "bad_arguments",
			                "fields[%zu] (\"%.100s\") takes exactly one of 'target' or "
			                "'ref' (got %s): pass the ref from browser_snapshot or a "
			                "selector as target",
			                i, name, has_target ? "both" : "none");
		if ((!strcmp(type, "checkbox") || !strcmp(type, "radio")) &&
		    strcmp(value, "true") && strcmp(value, "false"))
			return act_fail(
			    ctx, "bad_arguments",
			    "fields[%zu] (\"%.100s\") is a %s: its value must be \"true\" "
			    "or \"false\" (got \"%.40s\")",
			    i, name, type, value);
	}
	return 0;
}

/* How the risk rules see a field of type. */
static int kind_of_field(const char *type)
{
	if (!strcmp(type, "combobox"))
		return POLICY_ACT_SELECT;
	if (!strcmp(type, "checkbox") || !strcmp(type, "radio"))
		return POLICY_ACT_CLICK;
	return POLICY_ACT_TYPE;
}

/* Prefixes the call's error with the field it is about. */
static void name_the_field(struct act_ctx *ctx, size_t i, size_t n, const char *name)
{
	char prefix[160];
	size_t len = strlen(ctx->error);
	int k = snprintf(prefix, sizeof(prefix), "field \"%.100s\" (%zu of %zu): ", name, i + 1, n);

	if (k <= 0 || (size_t)k >= sizeof(prefix))
		return;
	if ((size_t)k + len >= sizeof(ctx->error))
		len = sizeof(ctx->error) - (size_t)k - 1;
	memmove(ctx->error + k, ctx->error, len);
	memcpy(ctx->error, prefix, (size_t)k);
	ctx->error[(size_t)k + len] = '\0';
}

/* Resolves and gates every field before anything is filled. */
static int fill_form_gate(struct act_ctx *ctx)
{
	json_t *fields = json_object_get(ctx->args, "fields");
	json_t *f;
	size_t i;

	if (check_fields(ctx, fields) < 0)
		return -1;
	json_array_foreach(fields, i, f)
	{
		struct act_gate_part part = { 0 };

		part.kind = kind_of_field(json_string_value(json_object_get(f, "type")));
		part.value = json_string_value(json_object_get(f, "value"));
		if (act_resolve_target(ctx, field_target(f)) < 0 ||
		    act_target_node(ctx, &ctx->part_nodes[i]) < 0 ||
		    act_gate_check_part(ctx, &part) < 0) {
			name_the_field(ctx, i, json_array_size(fields),
			               json_string_value(json_object_get(f, "name")));
			return -1;
		}
	}
	ctx->has_target = 0;
	return 0;
}

/* The field's target (just resolved again) is the node it was gated on:
 * 0, or -1 with the action failed target_changed. */
static int same_node(struct act_ctx *ctx, size_t i, const char *name)
{
	int node = 0;

	if (act_target_node(ctx, &node) < 0)
		return -1;
	if (node != ctx->part_nodes[i])
		return act_fail(ctx, "target_changed",
		                "%s is another element than the one checked before filling began "
		                "(the page changed): take a new snapshot and fill \"%.100s\" again",
		                ctx->target.description, name);
	return 0;
}

/* Fills one field (ctx->target resolved); 0 or -1 with the action failed. */
static int fill_one(struct act_ctx *ctx, const char *type, const char *value)
{
	json_t *values;
	int rc;

	if (!strcmp(type, "checkbox") || !strcmp(type, "radio"))
		return act_field_set_checked(ctx, !strcmp(value, "true"), type);
	if (!strcmp(type, "combobox")) {
		values = json_pack("[s]", value);
		rc = act_field_select(ctx, values);
		json_decref(values);
		return rc;
	}
	/* as Playwright MCP: a value that names a --secrets file's secret types it */
	if (secret_env_has(ctx->as->env_secrets, value))
		return act_type_secret(ctx, value, 0);
	return act_field_fill_text(ctx, value, 0, 0);
}

/* The Playwright code of the field just filled (ctx->target), as Playwright
 * MCP writes fill_form's: fill, check/uncheck, selectOption; a value that
 * went into a password field shows as process.env['PASSWORD']. */
static void field_code(struct act_ctx *ctx, const char *type, const char *value,
                       int sensitive_before)
{
	struct act_code_args a = { 0 };
	struct act_code_target t;

	act_code_target_of(ctx, &t);
	if (!strcmp(type, "checkbox") || !strcmp(type, "radio")) {
		act_code_call(&ctx->code, &t, strcmp(value, "true") ? "uncheck" : "check", "");
	} else if (!strcmp(type, "combobox")) {
		a.list = &value;
		a.n_list = 1;
		act_code_action(&ctx->code, &t, "selectOption", &a);
	} else {
		a.text = value;
		if (ctx->sensitive && !sensitive_before)
			a.secret = secret_env_has(ctx->as->env_secrets, value) ? value : "PASSWORD";
		act_code_action(&ctx->code, &t, "fill", &a);
	}
}

/* The verdict of a field that was filled (or failed), taking what the
 * field helper left in out (value, expected, observed). */
static json_t *field_verdict(struct act_ctx *ctx, json_t *f, int sensitive_before)
{
	const char *value = json_string_value(json_object_get(f, "value"));
	const char *type = json_string_value(json_object_get(f, "type"));
	json_t *observed = json_object_get(ctx->out, "observed");
	json_t *held = json_object_get(ctx->out, "value");
	int secret = ctx->sensitive && !sensitive_before;
	json_t *v;

	v = json_pack("{s:s, s:s, s:s, s:b}", "name", json_string_value(json_object_get(f, "name")),
	              "type", type, "target", field_target(f), "ok", !ctx->failed);
	json_object_set_new(v, "status", json_string(ctx->failed ? "failed" : "filled"));
	json_object_set_new(v, "expected", json_string(secret ? "[redacted]" : value));
	if (secret)
		json_object_set_new(v, "observed", json_string("[redacted]"));
	else if (!strcmp(type, "combobox") && !ctx->failed)
		json_object_set_new(v, "observed", json_string(value)); /* matched by label */
	else if (observed)
		json_object_set(v, "observed", observed);
	else if (held)
		json_object_set(v, "observed", held);
	if (!strcmp(type, "combobox") && held)
		json_object_set(v, "selected", held);
	if (ctx->failed)
		json_object_set_new(
		    v, "error",
		    json_pack("{s:s, s:s}", "code", ctx->error_code, "message", ctx->error));
	json_object_del(ctx->out, "value");
	json_object_del(ctx->out, "expected");
	json_object_del(ctx->out, "observed");
	return v;
}

static int fill_form_run(struct act_ctx *ctx)
{
	json_t *fields = json_object_get(ctx->args, "fields");
	json_t *verdicts = json_array();
	size_t n = json_array_size(fields);
	size_t i, filled = 0;
	int rc = 0;

	for (i = 0; i < n; i++) {
		json_t *f = json_array_get(fields, i);
		const char *name = json_string_value(json_object_get(f, "name"));
		int sensitive_before = ctx->sensitive;

		if (rc < 0) {
			json_array_append_new(
			    verdicts,
			    json_pack("{s:s, s:s, s:s, s:b, s:s}", "name", name, "type",
			              json_string_value(json_object_get(f, "type")), "target",
			              field_target(f), "ok", 0, "status", "not_attempted"));
			continue;
		}
		rc = act_resolve_target(ctx, field_target(f));
		if (rc == 0)
			rc = same_node(ctx, i, name);
		if (rc == 0 && !ctx->as->no_code)
			act_code_probe(ctx); /* before the field changes */
		if (rc == 0)
			rc = fill_one(ctx, json_string_value(json_object_get(f, "type")),
			              json_string_value(json_object_get(f, "value")));
		if (rc == 0 && !ctx->failed)
			filled++;
		if (rc == 0 && !ctx->failed && !ctx->as->no_code)
			field_code(ctx, json_string_value(json_object_get(f, "type")),
			           json_string_value(json_object_get(f, "value")),
			           sensitive_before);
		if (ctx->sensitive && !sensitive_before)
			ctx->sensitive_fields |= 1ull << i;
		json_array_append_new(verdicts, field_verdict(ctx, f, sensitive_before));
		if (rc < 0)
			name_the_field(ctx, i, n, name);
	}
	ctx->has_target = 0;
	json_object_set_new(ctx->out, "fields", verdicts);
	if (rc == 0)
		gb_buf_appendf(&ctx->text, "Filled %zu field%s, each re-read from the page", filled,
		               filled == 1 ? "" : "s");
	return rc;
}

static const struct act_param field_members[] = {
	{ .name = "target",
	  .type = ACT_T_STRING,
	  .description = TARGET_DESC ". Give target or ref" },
	{ .name = "ref",
	  .type = ACT_T_STRING,
	  .description = "The same as target (the name older Playwright MCP clients use)" },
	{ .name = "element", .type = ACT_T_STRING, .description = ELEMENT_DESC },
	{ .name = "name",
	  .type = ACT_T_STRING,
	  .required = 1,
	  .description = "Human-readable field name" },
	{ .name = "type",
	  .type = ACT_T_STRING,
	  .required = 1,
	  .description = "Type of the field",
	  .enum_values = field_types },
	{ .name = "value",
	  .type = ACT_T_STRING,
	  .required = 1,
	  .description = "Value to fill in the field. If the field is a checkbox or a radio "
	                 "button, the value should be `true` or `false`. If the field is a "
	                 "combobox, the value should be the text of the option." },
};

static const struct act_param params[] = {
	{ .name = "fields",
	  .type = ACT_T_OBJECT_ARRAY,
	  .required = 1,
	  .description = "Fields to fill in",
	  .items = field_members,
	  .n_items = sizeof(field_members) / sizeof(field_members[0]),
	  .min_items = 1,
	  .max_items = ACT_MAX_PARTS },
	P_EXPECT,
	P_OPERATION_ID,
};

static const struct act_tool_impl impl = {
	.gate_parts = fill_form_gate,
	.run = fill_form_run,
	.no_snapshot = act_no_snapshot,
};

const struct act_def act_tool_fill_form = {
	.name = "browser_fill_form",
	.title = "Fill form",
	.description =
	    "Fill multiple form fields in one call: textboxes and sliders are typed or filled as "
	    "browser_type does, checkboxes and radio buttons are clicked when not already in the "
	    "state asked for, comboboxes get the option with that text. Every field is checked "
	    "against the tenant's risk rules before any is touched. Each field is re-read from "
	    "the page and has its verdict in structuredContent.fields; the first field that does "
	    "not take its value stops the call, which fails naming it (the fields after it are "
	    "not_attempted). Password values never appear in the result. Records evidence.",
	PARAMS(params),
	.effect = ACT_EFFECT_PAGE,
	.policy = ACT_POLICY(POLICY_ACT_TYPE),
	.checks_expect = 1,
	.impl = &impl,
};

/*
 * tool_input.c - browser_click, browser_hover, browser_type,
 * browser_press_key and browser_select_option: input on one element, each
 * after the actionability checks, each re-reading what it changed.
 */
#include "actions/actions-private.h"

#include "cdp/cdp.h"
#include "sessions/sessions.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char value_js[] = "function() { return 'value' in this && this.tagName !== 'BUTTON' ? "
                               "String(this.value) : (this.textContent || ''); }";

static int click_run(struct act_ctx *ctx)
{
	const char *button = json_string_value(json_object_get(ctx->args, "button"));
	int dbl = json_is_true(json_object_get(ctx->args, "doubleClick"));
	int mods = act_modifiers_from_json(json_object_get(ctx->args, "modifiers"));
	json_t *info = NULL;
	double x, y;
	int rc;

	int landed;
	int c;

	if (!button)
		button = "left";
	rc = act_actionable(ctx, "click", &x, &y, &info);
	if (rc < 0)
		goto out;
	/* the press, then where it landed read back, then the release: a
	 * missed press is still released, so the page is not left with a
	 * button held down */
	rc = act_mouse_down(ctx, x, y, button, 1, mods);
	if (rc < 0)
		goto out;
	landed = act_click_landed(ctx, x, y, 0);
	rc = act_mouse_up(ctx, x, y, button, 1, mods);
	if (rc == 0 && landed == 0 && !strcmp(button, "left"))
		landed = act_click_landed(ctx, x, y, 1);
	for (c = 2; rc == 0 && dbl && c <= 2; c++) {
		rc = act_mouse_down(ctx, x, y, button, c, mods);
		if (rc == 0)
			rc = act_mouse_up(ctx, x, y, button, c, mods);
	}
	if (rc == 0 && landed < 0)
		rc = -1;
	if (rc == 0)
		gb_buf_appendf(&ctx->text, "%s %s", dbl ? "Double-clicked" : "Clicked",
		               ctx->target.description);
out:
	json_decref(info);
	return rc;
}

static int hover_run(struct act_ctx *ctx)
{
	json_t *info = NULL;
	double x, y;
	int rc;

	rc = act_actionable(ctx, "hover", &x, &y, &info);
	if (rc == 0)
		rc = act_mouse_move(ctx, x, y);
	if (rc == 0)
		gb_buf_appendf(&ctx->text, "Hovered over %s", ctx->target.description);
	json_decref(info);
	return rc;
}

/* Re-reads the target's value into out.value; password values never
 * leave the page. */
static int reread_value(struct act_ctx *ctx, const char *typed)
{
	json_t *value = NULL;
	int rc;

	rc = act_call_on_target(ctx, value_js, NULL, &value, "re-reading the field");
	if (rc < 0)
		goto out;
	if (ctx->sensitive) {
		json_object_set_new(ctx->out, "value", json_string("••••"));
		gb_buf_appendf(&ctx->text, "\n- value re-read: %s",
		               typed && json_is_string(value) &&
		                       !strcmp(json_string_value(value), typed)
		                   ? "matches what was typed (hidden: password field)"
		                   : "hidden (password field)");
	} else if (json_is_string(value)) {
		json_object_set(ctx->out, "value", value);
		gb_buf_appendf(&ctx->text, "\n- value re-read: \"%.300s\"%s",
		               json_string_value(value),
		               typed && strcmp(json_string_value(value), typed) != 0
		                   ? " (differs from what was typed)"
		                   : "");
	}
out:
	json_decref(value);
	return rc;
}

static int type_run(struct act_ctx *ctx)
{
	const char *text = json_string_value(json_object_get(ctx->args, "text"));
	const char *secret = json_string_value(json_object_get(ctx->args, "secret"));
	int submit = json_is_true(json_object_get(ctx->args, "submit"));
	int slowly = json_is_true(json_object_get(ctx->args, "slowly"));
	json_t *info = NULL;
	double x, y;
	int rc;

	if (secret) {
		if (slowly)
			return act_fail(
			    ctx, "bad_arguments",
			    "slowly cannot be used with secret: a "
			    "secret is inserted in one step, right after its field is checked");
		return act_type_secret(ctx, secret, submit);
	}
	rc = act_actionable(ctx, "type", &x, &y, &info);
	if (rc < 0)
		goto out;
	ctx->sensitive = json_is_true(json_object_get(info, "password")) || ctx->call->secret_text;
	if (text && text[0])
		rc = act_type_text(ctx, text, slowly);
	else
		rc = act_press_key(ctx, "Backspace", 0);
	if (rc < 0)
		goto out;
	gb_buf_appendf(&ctx->text, "Typed %s into %s", ctx->sensitive ? "[redacted]" : "the text",
	               ctx->target.description);
	rc = reread_value(ctx, text);
	if (rc == 0 && submit) {
		rc = act_press_key(ctx, "Enter", 0);
		gb_buf_appendf(&ctx->text, "\n- submitted with Enter");
	}
out:
	json_decref(info);
	return rc;
}

static int press_key_run(struct act_ctx *ctx)
{
	const char *key = json_string_value(json_object_get(ctx->args, "key"));
	int rc = act_press_key(ctx, key, 0);

	if (rc == 0)
		gb_buf_appendf(&ctx->text, "Pressed %s", key);
	return rc;
}

/* Matches first, then selects: assigning selected = false in a single
 * select makes the browser re-select its first option. */
static const char select_js[] =
    "function(values) { const opts = [...this.options];"
    " const want = opts.filter(o => values.includes(o.value) || values.includes(o.label.trim()));"
    " if (!want.length) return { error: opts.map(o => o.value).slice(0, 20) };"
    " if (this.multiple) opts.forEach(o => { o.selected = want.includes(o); }); else "
    "want[0].selected = true;"
    " this.dispatchEvent(new Event('input', { bubbles: true })); this.dispatchEvent(new "
    "Event('change', { bubbles: true }));"
    " return { selected: opts.filter(o => o.selected).map(o => o.value) }; }";

static int select_run(struct act_ctx *ctx)
{
	json_t *values = json_object_get(ctx->args, "values");
	json_t *info = NULL, *res = NULL;
	char *avail = NULL;
	double x, y;
	int rc;

	rc = act_actionable(ctx, "select", &x, &y, &info);
	if (rc < 0)
		goto out;
	rc = act_call_on_target(ctx, select_js, json_pack("[{s:O}]", "value", values), &res,
	                        "selecting options");
	if (rc < 0)
		goto out;
	if (json_object_get(res, "error")) {
		char *asked = json_dumps(values, JSON_COMPACT);

		avail = json_dumps(json_object_get(res, "error"), JSON_COMPACT);
		rc = act_fail(ctx, "no_such_option",
		              "no option of %s matches %.300s: the options are %.500s",
		              ctx->target.description, asked ? asked : "[]", avail ? avail : "[]");
		free(asked);
		goto out;
	}
	{
		json_t *sel = json_object_get(res, "selected");
		struct gb_buf joined;
		size_t i;

		gb_buf_init(&joined, 1 << 16);
		for (i = 0; i < json_array_size(sel); i++)
			gb_buf_appendf(&joined, "%s%s", i ? "," : "",
			               gb_or(json_string_value(json_array_get(sel, i)), ""));
		json_object_set_new(ctx->out, "value", json_string(joined.data ? joined.data : ""));
		gb_buf_free(&joined);
	}
	avail = json_dumps(json_object_get(res, "selected"), JSON_COMPACT);
	gb_buf_appendf(&ctx->text, "Selected %s in %s", avail ? avail : "",
	               ctx->target.description);
out:
	free(avail);
	json_decref(info);
	json_decref(res);
	return rc;
}

const struct act_tool_impl act_tool_click = { "browser_click", NULL, click_run, 1 };
const struct act_tool_impl act_tool_hover = { "browser_hover", NULL, hover_run, 1 };
const struct act_tool_impl act_tool_type = { "browser_type", NULL, type_run, 1 };
const struct act_tool_impl act_tool_press_key = { "browser_press_key", NULL, press_key_run, 0 };
const struct act_tool_impl act_tool_select = { "browser_select_option", NULL, select_run, 1 };

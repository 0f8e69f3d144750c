/*
 * click.c - browser_click: a click on one element, read back where it landed.
 */
#include "actions/actions-private.h"
#include "actions/codegen.h"
#include "actions/tools/params.h"

#include "cdp/cdp.h"
#include "policy/risk.h"
#include "sessions/sessions.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int click_run(struct act_ctx *ctx)
{
	const char *button = json_string_value(json_object_get(ctx->args, "button"));
	int dbl = json_is_true(json_object_get(ctx->args, "doubleClick"));
	int mods = act_modifiers_from_json(json_object_get(ctx->args, "modifiers"));
	json_t *info = NULL;
	char done[300];
	double x, y;
	int rc;

	if (!button)
		button = "left";
	rc = act_actionable(ctx, "click", &x, &y, &info);
	json_decref(info);
	if (rc < 0)
		return rc;
	snprintf(done, sizeof(done), "%s %s", dbl ? "Double-clicked" : "Clicked",
	         ctx->target.description);
	/* one left click: where it went is judged while the page settles */
	if (!dbl && !strcmp(button, "left"))
		return act_click_once(ctx, x, y, mods, done);
	rc = act_click_at(ctx, x, y, button, dbl ? 2 : 1, mods, 0);
	if (rc == 0)
		gb_buf_appendf(&ctx->text, "%s", done);
	return rc;
}

static const char *const button_values[] = { "left", "right", "middle", NULL };
static const char *const modifier_values[] = { "Alt",  "Control", "ControlOrMeta",
	                                       "Meta", "Shift",   NULL };

static const struct act_param params[] = {
	P_TARGET,
	P_ELEMENT,
	{ .name = "doubleClick",
	  .type = ACT_T_BOOLEAN,
	  .description = "Whether to perform a double click instead of a single click" },
	{ .name = "button",
	  .type = ACT_T_STRING,
	  .description = "Button to click, defaults to left",
	  .enum_values = button_values },
	{ .name = "modifiers",
	  .type = ACT_T_STRING_ARRAY,
	  .description = "Modifier keys to press",
	  .enum_values = modifier_values },
	P_EXPECT,
	P_OPERATION_ID,
};

/* .click() / .dblclick(), with button and modifiers as Playwright's
 * generator writes its options. */
static void click_code(struct act_ctx *ctx)
{
	json_t *mods = json_object_get(ctx->args, "modifiers");
	struct act_code_args a = { 0 };
	struct act_code_target t;
	const char *list[8];
	size_t i;

	for (i = 0; i < json_array_size(mods) && i < 8; i++)
		list[i] = json_string_value(json_array_get(mods, i));
	a.list = list;
	a.n_list = i;
	a.button = json_string_value(json_object_get(ctx->args, "button"));
	act_code_target_of(ctx, &t);
	act_code_action(
	    &ctx->code, &t,
	    json_is_true(json_object_get(ctx->args, "doubleClick")) ? "dblclick" : "click", &a);
}

static const struct act_tool_impl impl = {
	.run = click_run,
	.needs_target = 1,
	.precheck = "click",
	.code = click_code,
};

const struct act_def act_tool_click = {
	.name = "browser_click",
	.title = "Click",
	.description =
	    "Click an element, given by a ref from browser_snapshot or a unique selector. Before "
	    "clicking it checks that the element is attached, visible, stable, enabled and "
	    "actually receives the click (not covered by another element); then it reads back "
	    "where the click really landed (a click that reached something else fails with "
	    "error.code missed, naming it); afterwards it waits, "
	    "bounded, for what the click started (navigation, requests). Reports navigation, "
	    "responses, dialogs, console errors and whether the DOM changed, and records a "
	    "screenshot as evidence. Pass `expect` to verify the outcome.",
	PARAMS(params),
	.effect = ACT_EFFECT_PAGE,
	.policy = ACT_POLICY(POLICY_ACT_CLICK),
	.checks_expect = 1,
	.impl = &impl,
};

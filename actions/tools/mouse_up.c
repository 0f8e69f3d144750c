/*
 * mouse_up.c - browser_mouse_up (vision): a button released where the
 * mouse is, gated as a click on the element there (a release completes
 * one).
 */
#include "actions/actions-private.h"
#include "actions/tools/params.h"

#include "policy/risk.h"

#include <string.h>

static int up_gate(struct act_ctx *ctx)
{
	return act_point_target(ctx, ctx->as->mouse_x, ctx->as->mouse_y);
}

/* A release where the press was (browser_mouse_down, the mouse not moved
 * since) completes a click: where its click event went is read back
 * against the pressed element. Elsewhere it ends a drag: only released. */
static int up_run(struct act_ctx *ctx)
{
	const char *button = json_string_value(json_object_get(ctx->args, "button"));
	double x = ctx->as->mouse_x, y = ctx->as->mouse_y;
	int clicked = ctx->as->mouse_pressed;
	int rc = 0;

	if (clicked)
		rc = act_point_rearm(ctx, x, y, 1);
	if (rc == 0)
		rc = act_mouse_up(ctx, x, y, button ? button : "left", 1, 0);
	ctx->as->mouse_pressed = 0;
	ctx->as->mouse_held[0] = '\0';
	if (rc == 0 && clicked && (!button || !strcmp(button, "left")))
		rc = act_click_landed(ctx, x, y, 1);
	if (rc == 0)
		gb_buf_appendf(&ctx->text, "Released the %s button over %s",
		               button ? button : "left", ctx->target.description);
	return rc;
}

static const char *const button_values[] = { "left", "right", "middle", NULL };

static const struct act_param params[] = {
	{ .name = "button",
	  .type = ACT_T_STRING,
	  .description = "Button to release, defaults to left",
	  .enum_values = button_values },
	P_EXPECT,
	P_OPERATION_ID,
};

/* // Press mouse up
 * await page.mouse.up({ button }); */
static void up_code(struct act_ctx *ctx)
{
	static const char *const keys[] = { "button", NULL };

	gb_buf_appendf(&ctx->code, "// Press mouse up\nawait page.mouse.up(");
	act_code_options(&ctx->code, ctx->args, keys);
	gb_buf_appendf(&ctx->code, ");\n");
}

static const struct act_tool_impl impl = {
	.gate = up_gate,
	.run = up_run,
	.code = up_code,
};

const struct act_def act_tool_mouse_up = {
	.name = "browser_mouse_up",
	.title = "Press mouse up",
	.description = "Release the mouse button where the mouse is (see browser_mouse_move_xy), "
	               "checked against the risk rules as a click on the element there. Records "
	               "evidence.",
	PARAMS(params),
	.effect = ACT_EFFECT_PAGE,
	.policy = ACT_POLICY(POLICY_ACT_CLICK),
	.caps = "vision",
	.checks_expect = 1,
	.impl = &impl,
};

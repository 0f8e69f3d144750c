/*
 * mouse_down.c - browser_mouse_down (vision): a button pressed where the
 * mouse is, gated as a click on the element there; where the press
 * landed is read back.
 */
#include "actions/actions-private.h"
#include "actions/tools/params.h"

#include "policy/risk.h"

#include <stdio.h>

static int down_gate(struct act_ctx *ctx)
{
	return act_point_target(ctx, ctx->as->mouse_x, ctx->as->mouse_y);
}

static int down_run(struct act_ctx *ctx)
{
	const char *button = json_string_value(json_object_get(ctx->args, "button"));
	double x = ctx->as->mouse_x, y = ctx->as->mouse_y;
	int rc;

	rc = act_point_rearm(ctx, x, y, 0);
	if (rc == 0)
		rc = act_mouse_down(ctx, x, y, button ? button : "left", 1, 0);
	if (rc == 0)
		rc = act_click_landed(ctx, x, y, 0);
	ctx->as->mouse_pressed = rc == 0;
	if (rc == 0)
		snprintf(ctx->as->mouse_held, sizeof(ctx->as->mouse_held), "%s",
		         button ? button : "left");
	if (rc == 0)
		gb_buf_appendf(&ctx->text, "Pressed the %s button on %s", button ? button : "left",
		               ctx->target.description);
	return rc;
}

static const char *const button_values[] = { "left", "right", "middle", NULL };

static const struct act_param params[] = {
	{ .name = "button",
	  .type = ACT_T_STRING,
	  .description = "Button to press, defaults to left",
	  .enum_values = button_values },
	P_EXPECT,
	P_OPERATION_ID,
};

/* // Press mouse down
 * await page.mouse.down({ button }); */
static void down_code(struct act_ctx *ctx)
{
	static const char *const keys[] = { "button", NULL };

	gb_buf_appendf(&ctx->code, "// Press mouse down\nawait page.mouse.down(");
	act_code_options(&ctx->code, ctx->args, keys);
	gb_buf_appendf(&ctx->code, ");\n");
}

static const struct act_tool_impl impl = {
	.gate = down_gate,
	.run = down_run,
	.code = down_code,
};

const struct act_def act_tool_mouse_down = {
	.name = "browser_mouse_down",
	.title = "Press mouse down",
	.description = "Press mouse down where the mouse is (see browser_mouse_move_xy). Checked "
	               "against the risk rules as a click on the element there; where the press "
	               "landed is read back. Records evidence.",
	PARAMS(params),
	.effect = ACT_EFFECT_PAGE,
	.policy = ACT_POLICY(POLICY_ACT_CLICK),
	.caps = "vision",
	.checks_expect = 1,
	.impl = &impl,
};

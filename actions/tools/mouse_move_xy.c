/*
 * mouse_move_xy.c - browser_mouse_move_xy (vision): the mouse moved to a
 * point, gated as a hover over the element found there.
 */
#include "actions/actions-private.h"
#include "actions/tools/params.h"

#include "policy/risk.h"

static int move_xy_gate(struct act_ctx *ctx)
{
	return act_point_target(ctx, json_number_value(json_object_get(ctx->args, "x")),
	                        json_number_value(json_object_get(ctx->args, "y")));
}

static int move_xy_run(struct act_ctx *ctx)
{
	double x = json_number_value(json_object_get(ctx->args, "x"));
	double y = json_number_value(json_object_get(ctx->args, "y"));
	/* between browser_mouse_down and _up the button stays held, as in a drag */
	int rc = ctx->as->mouse_held[0] ? act_mouse_move_held(ctx, x, y, ctx->as->mouse_held)
	                                : act_mouse_move(ctx, x, y);

	if (rc == 0) {
		act_point_moved(ctx, x, y);
		gb_buf_appendf(&ctx->text, "Moved the mouse over %s", ctx->target.description);
	}
	return rc;
}

static const struct act_param params[] = {
	{ .name = "x", .type = ACT_T_NUMBER, .required = 1, .description = "X coordinate" },
	{ .name = "y", .type = ACT_T_NUMBER, .required = 1, .description = "Y coordinate" },
	P_EXPECT,
	P_OPERATION_ID,
};

/* // Move mouse to (x, y)
 * await page.mouse.move(x, y); */
static void move_xy_code(struct act_ctx *ctx)
{
	json_t *x = json_object_get(ctx->args, "x"), *y = json_object_get(ctx->args, "y");
	struct gb_buf *b = &ctx->code;

	gb_buf_appendf(b, "// Move mouse to (");
	act_code_number(b, x);
	gb_buf_appendf(b, ", ");
	act_code_number(b, y);
	gb_buf_appendf(b, ")\nawait page.mouse.move(");
	act_code_number(b, x);
	gb_buf_appendf(b, ", ");
	act_code_number(b, y);
	gb_buf_appendf(b, ");\n");
}

static const struct act_tool_impl impl = {
	.gate = move_xy_gate,
	.run = move_xy_run,
	.code = move_xy_code,
	.no_snapshot = act_no_snapshot,
};

const struct act_def act_tool_mouse_move_xy = {
	.name = "browser_mouse_move_xy",
	.title = "Move mouse",
	.description = "Move mouse to a given position (CSS pixels in the viewport), checked "
	               "against the risk rules as a hover over the element found there. "
	               "browser_mouse_down, _up and _wheel act where it was left.",
	PARAMS(params),
	.effect = ACT_EFFECT_PAGE,
	.policy = ACT_POLICY(POLICY_ACT_HOVER),
	.caps = "vision",
	.checks_expect = 1,
	.impl = &impl,
};

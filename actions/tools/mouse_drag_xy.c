/*
 * mouse_drag_xy.c - browser_mouse_drag_xy (vision): a drag with the left
 * button between two points, gated on the elements found at both, with
 * the drop verdict of browser_drag.
 */
#include "actions/actions-private.h"
#include "actions/tools/params.h"

#include "policy/risk.h"

#include <stdio.h>

static double arg(struct act_ctx *ctx, const char *name)
{
	return json_number_value(json_object_get(ctx->args, name));
}

static int drag_xy_gate(struct act_ctx *ctx)
{
	return act_point_target(ctx, arg(ctx, "startX"), arg(ctx, "startY"));
}

static int drag_xy_run(struct act_ctx *ctx)
{
	double x0 = arg(ctx, "startX"), y0 = arg(ctx, "startY");
	double x1 = arg(ctx, "endX"), y1 = arg(ctx, "endY");
	char start[sizeof(ctx->target.description)];
	int rc;

	snprintf(start, sizeof(start), "%s", ctx->target.description);
	rc = act_point_target(ctx, x1, y1);
	if (rc == 0)
		rc = act_drag_onto(ctx, x0, y0, x1, y1, start);
	act_point_moved(ctx, x1, y1);
	ctx->as->mouse_pressed = 0;
	return rc;
}

static const struct act_param params[] = {
	{ .name = "startX",
	  .type = ACT_T_NUMBER,
	  .required = 1,
	  .description = "Start X coordinate" },
	{ .name = "startY",
	  .type = ACT_T_NUMBER,
	  .required = 1,
	  .description = "Start Y coordinate" },
	{ .name = "endX", .type = ACT_T_NUMBER, .required = 1, .description = "End X coordinate" },
	{ .name = "endY", .type = ACT_T_NUMBER, .required = 1, .description = "End Y coordinate" },
	P_EXPECT,
	P_OPERATION_ID,
};

/* // Drag mouse from (startX, startY) to (endX, endY), as four calls. */
static void drag_xy_code(struct act_ctx *ctx)
{
	json_t *sx = json_object_get(ctx->args, "startX"),
	       *sy = json_object_get(ctx->args, "startY");
	json_t *ex = json_object_get(ctx->args, "endX"), *ey = json_object_get(ctx->args, "endY");
	struct gb_buf *b = &ctx->code;

	gb_buf_appendf(b, "// Drag mouse from (");
	act_code_number(b, sx);
	gb_buf_appendf(b, ", ");
	act_code_number(b, sy);
	gb_buf_appendf(b, ") to (");
	act_code_number(b, ex);
	gb_buf_appendf(b, ", ");
	act_code_number(b, ey);
	gb_buf_appendf(b, ")\nawait page.mouse.move(");
	act_code_number(b, sx);
	gb_buf_appendf(b, ", ");
	act_code_number(b, sy);
	gb_buf_appendf(b, ");\nawait page.mouse.down();\nawait page.mouse.move(");
	act_code_number(b, ex);
	gb_buf_appendf(b, ", ");
	act_code_number(b, ey);
	gb_buf_appendf(b, ");\nawait page.mouse.up();\n");
}

static const struct act_tool_impl impl = {
	.gate = drag_xy_gate,
	.run = drag_xy_run,
	.code = drag_xy_code,
};

const struct act_def act_tool_mouse_drag_xy = {
	.name = "browser_mouse_drag_xy",
	.title = "Drag mouse",
	.description =
	    "Drag left mouse button to a given position: press at the start, move in steps, "
	    "release at the end (an HTML5 drag the page starts is carried as a browser would). "
	    "The elements at both points are checked against the risk rules; the element at the "
	    "end must have seen the drop or the release (structuredContent.drop), else the call "
	    "fails with error.code not_dropped. Records evidence.",
	PARAMS(params),
	.effect = ACT_EFFECT_PAGE,
	.policy = ACT_POLICY(POLICY_ACT_DRAG),
	.caps = "vision",
	.checks_expect = 1,
	.impl = &impl,
};

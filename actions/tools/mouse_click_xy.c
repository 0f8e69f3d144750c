/*
 * mouse_click_xy.c - browser_mouse_click_xy (vision): a click at a point.
 * Gated on the element found there, like any click; its landing read back.
 */
#include "actions/actions-private.h"
#include "actions/tools/params.h"

#include "policy/risk.h"

static int click_xy_gate(struct act_ctx *ctx)
{
	return act_point_target(ctx, json_number_value(json_object_get(ctx->args, "x")),
	                        json_number_value(json_object_get(ctx->args, "y")));
}

static int click_xy_run(struct act_ctx *ctx)
{
	double x = json_number_value(json_object_get(ctx->args, "x"));
	double y = json_number_value(json_object_get(ctx->args, "y"));
	const char *button = json_string_value(json_object_get(ctx->args, "button"));
	json_t *count = json_object_get(ctx->args, "clickCount");
	json_t *delay = json_object_get(ctx->args, "delay");
	int n = count ? (int)json_integer_value(count) : 1;
	int rc;

	rc = act_point_rearm(ctx, x, y, 0);
	if (rc == 0)
		rc = act_click_at(ctx, x, y, button ? button : "left", n, 0,
		                  delay ? (int)json_integer_value(delay) : 0);
	act_point_moved(ctx, x, y);
	ctx->as->mouse_pressed = 0;
	if (rc == 0)
		gb_buf_appendf(&ctx->text, "Clicked %s%s", ctx->target.description,
		               n > 1 ? (n == 2 ? " twice" : " several times") : "");
	return rc;
}

static const char *const button_values[] = { "left", "right", "middle", NULL };

static const struct act_param params[] = {
	{ .name = "x",
	  .type = ACT_T_NUMBER,
	  .required = 1,
	  .description = "X coordinate, in CSS pixels from the viewport's left edge" },
	{ .name = "y",
	  .type = ACT_T_NUMBER,
	  .required = 1,
	  .description = "Y coordinate, in CSS pixels from the viewport's top edge" },
	{ .name = "button",
	  .type = ACT_T_STRING,
	  .description = "Button to click, defaults to left",
	  .enum_values = button_values },
	{ .name = "clickCount",
	  .type = ACT_T_INTEGER,
	  .description = "Number of clicks, defaults to 1",
	  .minimum = 1,
	  .maximum = 3,
	  .has_range = 1 },
	{ .name = "delay",
	  .type = ACT_T_INTEGER,
	  .description = "Time to wait between mouse down and mouse up in milliseconds, defaults "
	                 "to 0",
	  .minimum = 0,
	  .maximum = 10000,
	  .has_range = 1 },
	P_EXPECT,
	P_OPERATION_ID,
};

/* // Click mouse at coordinates (x, y)
 * await page.mouse.click(x, y, { button, clickCount, delay }); */
static void click_xy_code(struct act_ctx *ctx)
{
	static const char *const keys[] = { "button", "clickCount", "delay", NULL };
	json_t *x = json_object_get(ctx->args, "x"), *y = json_object_get(ctx->args, "y");
	struct gb_buf *b = &ctx->code;

	gb_buf_appendf(b, "// Click mouse at coordinates (");
	act_code_number(b, x);
	gb_buf_appendf(b, ", ");
	act_code_number(b, y);
	gb_buf_appendf(b, ")\nawait page.mouse.click(");
	act_code_number(b, x);
	gb_buf_appendf(b, ", ");
	act_code_number(b, y);
	if (json_object_get(ctx->args, "button") || json_object_get(ctx->args, "clickCount") ||
	    json_object_get(ctx->args, "delay"))
		gb_buf_appendf(b, ", ");
	act_code_options(b, ctx->args, keys);
	gb_buf_appendf(b, ");\n");
}

static const struct act_tool_impl impl = {
	.gate = click_xy_gate,
	.run = click_xy_run,
	.code = click_xy_code,
};

const struct act_def act_tool_mouse_click_xy = {
	.name = "browser_mouse_click_xy",
	.title = "Click",
	.description =
	    "Click mouse button at a given position (CSS pixels in the viewport, as in a "
	    "screenshot). The element found at that point is checked against the tenant's risk "
	    "rules like any click, and where the click landed is read back (a click that reached "
	    "something else fails with error.code missed). Records evidence.",
	PARAMS(params),
	.effect = ACT_EFFECT_PAGE,
	.policy = ACT_POLICY(POLICY_ACT_CLICK),
	.caps = "vision",
	.checks_expect = 1,
	.impl = &impl,
};

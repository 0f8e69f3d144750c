/*
 * mouse_button.c - browser_mouse_down and browser_mouse_up (vision): a
 * button pressed or released where the mouse is (browser_mouse_move_xy
 * left it), each gated as a click on the element there, with where it
 * landed read back. The two share the gate, the button parameter and the
 * descriptor; only what they send and read back differs.
 */
#include "actions/actions-private.h"
#include "actions/tools/params.h"

#include "policy/risk.h"

#include <stdio.h>
#include <string.h>

/* Both are gated on the element where the mouse is. */
static int button_gate(struct act_ctx *ctx)
{
	return act_point_target(ctx, ctx->as->mouse_x, ctx->as->mouse_y);
}

/* The button the call names (borrowed from its arguments), left when none. */
static const char *button_of(const struct act_ctx *ctx)
{
	const char *button = json_string_value(json_object_get(ctx->args, "button"));

	return button ? button : "left";
}

static int down_run(struct act_ctx *ctx)
{
	const char *button = button_of(ctx);
	double x = ctx->as->mouse_x, y = ctx->as->mouse_y;
	int rc;

	rc = act_point_rearm(ctx, x, y, 0);
	if (rc == 0)
		rc = act_mouse_down(ctx, x, y, button, 1, 0);
	if (rc == 0)
		rc = act_click_landed(ctx, x, y, 0);
	ctx->as->mouse_pressed = rc == 0;
	if (rc == 0) {
		snprintf(ctx->as->mouse_held, sizeof(ctx->as->mouse_held), "%s", button);
		gb_buf_appendf(&ctx->text, "Pressed the %s button on %s", button,
		               ctx->target.description);
	}
	return rc;
}

/* A release where the press was (browser_mouse_down, the mouse not moved
 * since) completes a click: where its click event went is read back
 * against the pressed element. Elsewhere it ends a drag: only released. */
static int up_run(struct act_ctx *ctx)
{
	const char *button = button_of(ctx);
	double x = ctx->as->mouse_x, y = ctx->as->mouse_y;
	int clicked = ctx->as->mouse_pressed;
	int rc = 0;

	if (clicked)
		rc = act_point_rearm(ctx, x, y, 1);
	if (rc == 0)
		rc = act_mouse_up(ctx, x, y, button, 1, 0);
	ctx->as->mouse_pressed = 0;
	ctx->as->mouse_held[0] = '\0';
	if (rc == 0 && clicked && !strcmp(button, "left"))
		rc = act_click_landed(ctx, x, y, 1);
	if (rc == 0)
		gb_buf_appendf(&ctx->text, "Released the %s button over %s", button,
		               ctx->target.description);
	return rc;
}

static const char *const button_values[] = { "left", "right", "middle", NULL };

/* The parameters of either: the button (described as pressed or
 * released), expect, operation_id and approval. */
#define BUTTON_PARAMS(what)                                      \
	{ .name = "button",                                      \
	  .type = ACT_T_STRING,                                  \
	  .description = "Button to " what ", defaults to left", \
	  .enum_values = button_values },                        \
	    P_EXPECT, P_OPERATION_ID

static const struct act_param down_params[] = { BUTTON_PARAMS("press") };
static const struct act_param up_params[] = { BUTTON_PARAMS("release") };

/* // Press mouse down|up
 * await page.mouse.down|up({ button }); */
static void button_code(struct act_ctx *ctx, const char *what)
{
	static const char *const keys[] = { "button", NULL };

	gb_buf_appendf(&ctx->code, "// Press mouse %s\nawait page.mouse.%s(", what, what);
	act_code_options(&ctx->code, ctx->args, keys);
	gb_buf_appendf(&ctx->code, ");\n");
}

static void down_code(struct act_ctx *ctx)
{
	button_code(ctx, "down");
}

static void up_code(struct act_ctx *ctx)
{
	button_code(ctx, "up");
}

static const struct act_tool_impl down_impl = {
	.gate = button_gate, .run = down_run, .code = down_code, .no_snapshot = act_no_snapshot
};
static const struct act_tool_impl up_impl = {
	.gate = button_gate, .run = up_run, .code = up_code, .no_snapshot = act_no_snapshot
};

/* What the two descriptors have in common: a click on the page. */
#define BUTTON_TOOL                                                                          \
	.effect = ACT_EFFECT_PAGE, .policy = ACT_POLICY(POLICY_ACT_CLICK), .caps = "vision", \
	.checks_expect = 1

const struct act_def act_tool_mouse_down = {
	.name = "browser_mouse_down",
	.title = "Press mouse down",
	.description = "Press mouse down where the mouse is (see browser_mouse_move_xy). Checked "
	               "against the risk rules as a click on the element there; where the press "
	               "landed is read back. Records evidence.",
	PARAMS(down_params),
	BUTTON_TOOL,
	.impl = &down_impl,
};

const struct act_def act_tool_mouse_up = {
	.name = "browser_mouse_up",
	.title = "Press mouse up",
	.description = "Release the mouse button where the mouse is (see browser_mouse_move_xy), "
	               "checked against the risk rules as a click on the element there. Records "
	               "evidence.",
	PARAMS(up_params),
	BUTTON_TOOL,
	.impl = &up_impl,
};

/*
 * mouse_wheel.c - browser_mouse_wheel (vision): a wheel turn where the
 * mouse is; the page's scroll position is re-read once it came to rest.
 */
#include "actions/actions-private.h"
#include "actions/tools/params.h"

#include "policy/risk.h"

/* The page's scroll position once it stopped moving (smooth scrolling
 * takes a few frames), waiting at most about a second. */
static const char scroll_js[] =
    "(async () => { const frame = () => new Promise(f => { requestAnimationFrame(() => f()); "
    "setTimeout(f, 100); });"
    " let last = [scrollX, scrollY];"
    " for (let i = 0; i < 20; i++) { await frame(); const now = [scrollX, scrollY];"
    "  if (now[0] === last[0] && now[1] === last[1] && i > 1) break; last = now; }"
    " return { x: scrollX, y: scrollY }; })()";

static int wheel_gate(struct act_ctx *ctx)
{
	return act_point_target(ctx, ctx->as->mouse_x, ctx->as->mouse_y);
}

static int wheel_run(struct act_ctx *ctx)
{
	double dx = json_number_value(json_object_get(ctx->args, "deltaX"));
	double dy = json_number_value(json_object_get(ctx->args, "deltaY"));
	json_t *before = NULL, *after = NULL;
	int moved;
	int rc;

	rc = act_page_eval(ctx, scroll_js, &before, "reading the scroll position");
	if (rc == 0)
		rc = act_mouse_wheel(ctx, ctx->as->mouse_x, ctx->as->mouse_y, dx, dy);
	if (rc == 0)
		rc = act_page_eval(ctx, scroll_js, &after, "re-reading the scroll position");
	if (rc < 0)
		goto out;
	moved = !json_equal(before, after);
	json_object_set_new(after, "moved", json_boolean(moved));
	json_object_set(ctx->out, "scroll", after);
	gb_buf_appendf(&ctx->text,
	               "Turned the wheel by (%g, %g) over %s: the page %s (scroll "
	               "position %g, %g, re-read)",
	               dx, dy, ctx->target.description, moved ? "scrolled" : "did not scroll",
	               json_number_value(json_object_get(after, "x")),
	               json_number_value(json_object_get(after, "y")));
out:
	json_decref(before);
	json_decref(after);
	return rc;
}

static const struct act_param params[] = {
	{ .name = "deltaX", .type = ACT_T_NUMBER, .description = "X delta, defaults to 0" },
	{ .name = "deltaY", .type = ACT_T_NUMBER, .description = "Y delta, defaults to 0" },
	P_EXPECT,
	P_OPERATION_ID,
};

/* // Scroll mouse wheel
 * await page.mouse.wheel(deltaX, deltaY); */
static void wheel_code(struct act_ctx *ctx)
{
	struct gb_buf *b = &ctx->code;

	gb_buf_appendf(b, "// Scroll mouse wheel\nawait page.mouse.wheel(");
	act_code_number(b, json_object_get(ctx->args, "deltaX"));
	gb_buf_appendf(b, ", ");
	act_code_number(b, json_object_get(ctx->args, "deltaY"));
	gb_buf_appendf(b, ");\n");
}

static const struct act_tool_impl impl = {
	.gate = wheel_gate,
	.run = wheel_run,
	.code = wheel_code,
	.no_snapshot = act_no_snapshot,
};

const struct act_def act_tool_mouse_wheel = {
	.name = "browser_mouse_wheel",
	.title = "Scroll mouse wheel",
	.description = "Scroll mouse wheel where the mouse is (see browser_mouse_move_xy). The "
	               "page's scroll position is re-read once it came to rest "
	               "(structuredContent.scroll: x, y, moved). Records evidence.",
	PARAMS(params),
	.effect = ACT_EFFECT_PAGE,
	.policy = ACT_POLICY(POLICY_ACT_OTHER),
	.caps = "vision",
	.checks_expect = 1,
	.impl = &impl,
};

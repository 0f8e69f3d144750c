/*
 * resize.c - browser_resize: the page's viewport set to a width and a
 * height, then re-read from the page.
 */
#include "actions/actions-private.h"
#include "actions/tools/params.h"

#include "policy/risk.h"

#include <stdio.h>

static int resize_run(struct act_ctx *ctx)
{
	int width = (int)json_number_value(json_object_get(ctx->args, "width"));
	int height = (int)json_number_value(json_object_get(ctx->args, "height"));
	json_t *res = NULL, *seen = NULL;
	int w, h;
	int rc;

	rc = act_cdp(ctx, ctx->psid, "Emulation.setDeviceMetricsOverride",
	             json_pack("{s:i, s:i, s:i, s:b}", "width", width, "height", height,
	                       "deviceScaleFactor", 0, "mobile", 0),
	             &res, "resizing the viewport");
	if (rc < 0)
		goto out;
	rc = act_page_eval(ctx, "({ width: innerWidth, height: innerHeight })", &seen,
	                   "re-reading the viewport");
	if (rc < 0)
		goto out;
	w = (int)json_integer_value(json_object_get(seen, "width"));
	h = (int)json_integer_value(json_object_get(seen, "height"));
	json_object_set_new(ctx->out, "viewport", json_pack("{s:i, s:i}", "width", w, "height", h));
	if (w != width || h != height) {
		json_object_set_new(ctx->out, "expected",
		                    json_pack("{s:i, s:i}", "width", width, "height", height));
		rc = act_fail(ctx, "viewport_not_set",
		              "the page's viewport is %dx%d, not %dx%d as asked: the browser did "
		              "not take that size",
		              w, h, width, height);
		goto out;
	}
	gb_buf_appendf(&ctx->text, "Resized the viewport to %dx%d (re-read from the page)", w, h);
out:
	json_decref(res);
	json_decref(seen);
	return rc;
}

static const struct act_param params[] = {
	{ .name = "width",
	  .type = ACT_T_INTEGER,
	  .required = 1,
	  .description = "Width of the browser window (the page's viewport), in CSS pixels",
	  .minimum = 100,
	  .maximum = 10000,
	  .has_range = 1 },
	{ .name = "height",
	  .type = ACT_T_INTEGER,
	  .required = 1,
	  .description = "Height of the browser window (the page's viewport), in CSS pixels",
	  .minimum = 100,
	  .maximum = 10000,
	  .has_range = 1 },
	P_EXPECT,
	P_OPERATION_ID,
};

/* await page.setViewportSize({ width: W, height: H }); (as Playwright MCP
 * writes it, in JavaScript whatever the language: a page-level line) */
static void resize_code(struct act_ctx *ctx)
{
	gb_buf_appendf(&ctx->code, "await page.setViewportSize({ width: %d, height: %d });\n",
	               (int)json_number_value(json_object_get(ctx->args, "width")),
	               (int)json_number_value(json_object_get(ctx->args, "height")));
}

static const struct act_tool_impl impl = {
	.run = resize_run,
	.code = resize_code,
	.no_snapshot = act_no_snapshot,
};

const struct act_def act_tool_resize = {
	.name = "browser_resize",
	.title = "Resize browser window",
	.description =
	    "Resize the browser window: the current tab's viewport becomes width x height CSS "
	    "pixels (responsive layouts re-render), verified by re-reading it from the page "
	    "(structuredContent.viewport). Records evidence.",
	PARAMS(params),
	.effect = ACT_EFFECT_PAGE,
	.policy = ACT_POLICY(POLICY_ACT_OTHER),
	.checks_expect = 1,
	.impl = &impl,
};

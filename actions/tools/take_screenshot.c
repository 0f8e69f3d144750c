/*
 * take_screenshot.c - browser_take_screenshot: a screenshot of the viewport, the full page or one element, kept as evidence.
 */
#include "actions/actions-private.h"
#include "actions/tools/params.h"

#include "cdp/cdp.h"
#include "policy/risk.h"
#include "sessions/sessions.h"

#include <sodium.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int screenshot_run(struct act_ctx *ctx)
{
	int full = json_is_true(json_object_get(ctx->args, "fullPage"));
	json_t *params = act_png_params();
	char *masked = NULL;
	json_t *res = NULL, *metrics = NULL;
	const char *b64;
	char sha[65];
	int rc = 0;

	if (ctx->has_target) {
		json_t *info = NULL;

		rc = act_call_on_target(
		    ctx,
		    "function() { this.scrollIntoView({block: 'center'}); "
		    "const r = this.getBoundingClientRect(); return {x: r.left + "
		    "scrollX, y: r.top + scrollY, w: r.width, h: r.height, "
		    "sx: scrollX, sy: scrollY}; }",
		    NULL, &info, "measuring the element");
		ctx->shot_dx = json_number_value(json_object_get(info, "sx")) -
		               json_number_value(json_object_get(info, "x"));
		ctx->shot_dy = json_number_value(json_object_get(info, "sy")) -
		               json_number_value(json_object_get(info, "y"));
		if (rc == 0)
			json_object_set_new(params, "clip",
			                    json_pack("{s:O, s:O, s:O, s:O, s:i}", "x",
			                              json_object_get(info, "x"), "y",
			                              json_object_get(info, "y"), "width",
			                              json_object_get(info, "w"), "height",
			                              json_object_get(info, "h"), "scale", 1));
		json_decref(info);
	} else if (full) {
		rc = act_cdp(ctx, ctx->psid, "Page.getLayoutMetrics", NULL, &metrics,
		             "measuring the page");
		if (rc == 0) {
			json_t *size = json_object_get(metrics, "cssContentSize");
			json_t *vv = json_object_get(metrics, "cssVisualViewport");

			ctx->shot_dx = json_number_value(json_object_get(vv, "pageX"));
			ctx->shot_dy = json_number_value(json_object_get(vv, "pageY"));
			json_object_set_new(params, "captureBeyondViewport", json_true());
			json_object_set_new(params, "clip",
			                    json_pack("{s:i, s:i, s:O, s:O, s:i}", "x", 0, "y", 0,
			                              "width", json_object_get(size, "width"),
			                              "height", json_object_get(size, "height"),
			                              "scale", 1));
		}
	}
	if (rc < 0) {
		json_decref(params);
		goto out;
	}
	rc = act_cdp(ctx, ctx->psid, "Page.captureScreenshot", params, &res,
	             "taking the screenshot");
	if (rc < 0)
		goto out;
	b64 = json_string_value(json_object_get(res, "data"));
	json_object_set_new(ctx->out, "url", json_string(sess_page_url(ctx->page)));
	gb_buf_appendf(&ctx->text, "Took a screenshot of %s",
	               ctx->has_target ? ctx->target.description
	               : full          ? "the full page"
	                               : "the viewport");
	rc = act_store_png(ctx, b64, "screenshot", sha);
	if (rc == 0 && ctx->shot_masked) {
		/* the model sees the masked image too */
		size_t n = sodium_base64_ENCODED_LEN(ctx->shot_len, sodium_base64_VARIANT_ORIGINAL);

		masked = malloc(n);
		if (masked)
			sodium_bin2base64(masked, n, ctx->shot_png, ctx->shot_len,
			                  sodium_base64_VARIANT_ORIGINAL);
		else
			rc = -1;
	}
	if (rc == 0)
		json_array_insert_new(ctx->content, 0,
		                      json_pack("{s:s, s:s, s:s}", "type", "image", "mimeType",
		                                "image/png", "data", masked ? masked : b64));
	else
		rc = act_fail(ctx, "evidence_failed",
		              "the screenshot could not be validated or stored");
out:
	free(masked);
	json_decref(metrics);
	json_decref(res);
	return rc;
}

static const char *const image_type_values[] = { "png", NULL };

static const struct act_param params[] = {
	P_TARGET_OPT,
	P_ELEMENT,
	{ .name = "fullPage",
	  .type = ACT_T_BOOLEAN,
	  .description = "When true, takes a screenshot of the full scrollable page, instead of "
	                 "the currently visible viewport. Cannot be used with element "
	                 "screenshots." },
	{ .name = "type",
	  .type = ACT_T_STRING,
	  .description = "Image format for the screenshot; only png is supported",
	  .enum_values = image_type_values },
};

static const struct act_tool_impl impl = {
	.run = screenshot_run,
	.needs_target = 2,
};

const struct act_def act_tool_take_screenshot = {
	.name = "browser_take_screenshot",
	.title = "Take a screenshot",
	.description =
	    "Take a PNG screenshot of the viewport, of the full page (`fullPage`) or of one "
	    "element (`target`). The image is returned inline and stored as evidence. Use "
	    "browser_snapshot to decide what to act on; screenshots are for looking and for the "
	    "record. Read-only.",
	PARAMS(params),
	.effect = ACT_EFFECT_READ,
	.policy = ACT_POLICY_EXEMPT("reads the page only: a screenshot changes nothing"),
	.impl = &impl,
};

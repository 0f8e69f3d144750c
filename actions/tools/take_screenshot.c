/*
 * take_screenshot.c - browser_take_screenshot: a screenshot of the viewport, the full page or one element, kept as evidence.
 */
#include "actions/actions-private.h"
#include "actions/codegen.h"
#include "actions/tools/params.h"

#include "cdp/cdp.h"
#include "policy/risk.h"
#include "sessions/sessions.h"

#include <math.h>
#include <sodium.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* The image type asked for: `type`, else the filename's extension, else png. */
static const char *image_type(struct act_ctx *ctx, const char *filename)
{
	const char *type = json_string_value(json_object_get(ctx->args, "type"));
	const char *ext = filename ? strrchr(filename, '.') : NULL;

	if (type)
		return type;
	if (ext && (!strcasecmp(ext, ".jpg") || !strcasecmp(ext, ".jpeg")))
		return "jpeg";
	if (ext && !strcasecmp(ext, ".webp"))
		return "webp";
	return "png";
}

/* The code Playwright MCP shows for it. */
static void screenshot_code(struct act_ctx *ctx, const char *type, const char *file,
                            const char *what, int full)
{
	const char *scale = json_string_value(json_object_get(ctx->args, "scale"));
	struct act_code_target t;
	struct gb_buf opts;

	gb_buf_init(&opts, 8192);
	gb_buf_appendf(&opts, "{\n%s  path: ", full ? "  fullPage: true,\n" : "");
	act_code_quote(&opts, file);
	gb_buf_appendf(&opts, ",\n  scale: ");
	act_code_quote(&opts, scale ? scale : "css");
	gb_buf_appendf(&opts, ",\n  type: ");
	act_code_quote(&opts, type);
	gb_buf_appendf(&opts, "\n}");
	gb_buf_appendf(&ctx->code, "// Screenshot %s and save it as %s\n", what, file);
	if (ctx->has_target) {
		act_code_target_of(ctx, &t);
		act_code_call(&ctx->code, &t, "screenshot", opts.data ? opts.data : "");
	} else {
		gb_buf_appendf(&ctx->code, "await page.screenshot(%s);\n",
		               opts.data ? opts.data : "");
	}
	gb_buf_free(&opts);
}

/* The pixel size of a base64 PNG, read from its IHDR; 0 or -1. */
static int png_size(const char *b64, double *w, double *h)
{
	char head[45];
	unsigned char *bytes = NULL;
	size_t n = 0;
	int rc = -1;

	if (!b64 || strlen(b64) < 44)
		return -1;
	memcpy(head, b64, 44);
	head[44] = '\0';
	if (evid_base64_decode(head, 44, &bytes, &n) == 0 && n >= 24) {
		*w = (double)((uint32_t)bytes[16] << 24 | (uint32_t)bytes[17] << 16 |
		              (uint32_t)bytes[18] << 8 | bytes[19]);
		*h = (double)((uint32_t)bytes[20] << 24 | (uint32_t)bytes[21] << 16 |
		              (uint32_t)bytes[22] << 8 | bytes[23]);
		rc = 0;
	}
	free(bytes);
	return rc;
}

/* A clip's scale (1 when it has none). */
static double clip_scale(json_t *clip)
{
	json_t *scale = json_object_get(clip, "scale");

	return json_is_number(scale) ? json_number_value(scale) : 1;
}

/* A capture clip at scale 1 from the members x, y, w and h of o (borrowed);
 * NULL when one is missing. */
static json_t *clip_of(json_t *o, const char *x, const char *y, const char *w, const char *h)
{
	return json_pack("{s:O, s:O, s:O, s:O, s:i}", "x", json_object_get(o, x), "y",
	                 json_object_get(o, y), "width", json_object_get(o, w), "height",
	                 json_object_get(o, h), "scale", 1);
}

/* Gives the capture parameters p (borrowed, changed) a clip when they
 * have none: the viewport, at its place in the page. 0, or -1 (the call
 * failed). */
static int viewport_clip(struct act_ctx *ctx, json_t *p)
{
	json_t *metrics = NULL, *vv;
	int rc = 0;

	if (json_object_get(p, "clip"))
		return 0;
	rc = act_cdp(ctx, ctx->psid, "Page.getLayoutMetrics", NULL, &metrics, "measuring the page");
	if (rc == 0) {
		vv = json_object_get(metrics, "cssVisualViewport");
		json_object_set_new(p, "clip",
		                    clip_of(vv, "pageX", "pageY", "clientWidth", "clientHeight"));
	}
	json_decref(metrics);
	return rc;
}

/* The pages' device pixel ratio in force: the emulated viewport's
 * (--config's deviceScaleFactor, browser_emulate), else 1. */
static double device_pixel_ratio(struct act_ctx *ctx)
{
	json_t *dsf =
	    json_object_get(json_object_get(ctx->as->emulation, "viewport"), "deviceScaleFactor");

	return json_is_number(dsf) && json_number_value(dsf) > 0 ? json_number_value(dsf) : 1;
}

/*
 * The image for the answer, when the one taken is larger than a model
 * takes in (more than 1568 pixels a side or 1.15 megapixels, as Playwright
 * MCP fits it): the same picture taken again, shrunk by the browser, in
 * the type asked for. base (borrowed) is the capture's parameters, w and
 * h its pixel size. *out: new reference to the capture's result, or NULL
 * when the image fits. 0, or -1 (the call failed).
 */
static int fit_for_answer(struct act_ctx *ctx, json_t *base, const char *type, double w, double h,
                          json_t **out)
{
	double shrink = 1568 / w;
	json_t *p = NULL, *clip;
	int rc = 0;

	*out = NULL;
	shrink = 1568 / h < shrink ? 1568 / h : shrink;
	if (sqrt(1.15 * 1024 * 1024 / (w * h)) < shrink)
		shrink = sqrt(1.15 * 1024 * 1024 / (w * h));
	if (shrink >= 1)
		goto out;
	p = json_deep_copy(base);
	rc = viewport_clip(ctx, p);
	if (rc < 0)
		goto out;
	clip = json_object_get(p, "clip");
	/* the image's size is the clip's times its scale: floored, as
	 * Playwright MCP sizes it */
	json_object_set_new(clip, "scale", json_real(clip_scale(clip) * floor(w * shrink) / w));
	json_object_set_new(p, "format", json_string(type));
	if (!strcmp(type, "jpeg"))
		json_object_set_new(p, "quality", json_integer(90));
	rc = act_cdp(ctx, ctx->psid, "Page.captureScreenshot", p, out, "taking the screenshot");
	p = NULL;
out:
	json_decref(p);
	return rc;
}

static int screenshot_run(struct act_ctx *ctx)
{
	int full = json_is_true(json_object_get(ctx->args, "fullPage"));
	const char *filename = json_string_value(json_object_get(ctx->args, "filename"));
	const char *type = image_type(ctx, filename && *filename ? filename : NULL);
	const char *what;
	json_t *params = NULL;
	char *masked = NULL;
	char path[4096] = "";
	char link[4200] = "";
	unsigned char *img = NULL;
	size_t img_len = 0;
	json_t *res = NULL, *metrics = NULL, *other = NULL, *fit = NULL, *base = NULL;
	double w = 0, h = 0;
	const char *b64;
	const char *shown;
	char sha[65];
	int rc = 0;

	if (filename && !*filename)
		filename = NULL; /* "" is no name, as Playwright MCP takes it */
	if (full && ctx->has_target)
		return act_fail(ctx, "bad_arguments",
		                "fullPage cannot be used with element screenshots. Pass either "
		                "fullPage (the whole page) or target (one element)");
	if (filename && act_output_path(ctx, filename, path, sizeof(path)) < 0)
		return -1;
	params = act_png_params();
	if (ctx->has_target) {
		json_t *info = NULL;

		rc = act_call_in_isolated_world(
		    ctx,
		    "function() { this.scrollIntoView({block: 'center'}); "
		    "const r = this.getBoundingClientRect(); return {x: r.left + "
		    "scrollX, y: r.top + scrollY, w: r.width, h: r.height, "
		    "sx: scrollX, sy: scrollY}; }",
		    &info, "measuring the element");
		ctx->shot_dx = json_number_value(json_object_get(info, "sx")) -
		               json_number_value(json_object_get(info, "x"));
		ctx->shot_dy = json_number_value(json_object_get(info, "sy")) -
		               json_number_value(json_object_get(info, "y"));
		if (rc == 0)
			json_object_set_new(params, "clip", clip_of(info, "x", "y", "w", "h"));
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
	/* scale css (the default): CSS pixels, whatever the device pixel ratio */
	if (rc == 0 && device_pixel_ratio(ctx) != 1 &&
	    strcmp(gb_or(json_string_value(json_object_get(ctx->args, "scale")), "css"), "css") ==
	        0) {
		rc = viewport_clip(ctx, params);
		if (rc == 0)
			json_object_set_new(json_object_get(params, "clip"), "scale",
			                    json_real(clip_scale(json_object_get(params, "clip")) /
			                              device_pixel_ratio(ctx)));
	}
	if (rc < 0) {
		json_decref(params);
		goto out;
	}
	base = json_deep_copy(params);
	/* the same picture in the format asked for, taken before the PNG
	 * (whose params the capture takes) */
	if (strcmp(type, "png") != 0) {
		json_t *p2 = json_deep_copy(params);

		json_object_set_new(p2, "format", json_string(type));
		if (!strcmp(type, "jpeg"))
			json_object_set_new(p2, "quality", json_integer(90));
		rc = act_cdp(ctx, ctx->psid, "Page.captureScreenshot", p2, &other,
		             "taking the screenshot");
		if (rc < 0) {
			json_decref(params);
			goto out;
		}
	}
	rc = act_cdp(ctx, ctx->psid, "Page.captureScreenshot", params, &res,
	             "taking the screenshot");
	if (rc < 0)
		goto out;
	b64 = json_string_value(json_object_get(res, "data"));
	json_object_set_new(ctx->out, "url", json_string(sess_page_url(ctx->page)));
	what = ctx->has_target ? "element" : full ? "full page" : "viewport";
	gb_buf_appendf(&ctx->text, "Took a screenshot of %s",
	               ctx->has_target ? ctx->target.description
	               : full          ? "the full page"
	                               : "the viewport");
	rc = act_store_png(ctx, b64, "screenshot", sha);
	/* the image itself is the answer's attachment (as Playwright MCP
	 * returns it); its evidence is named in ### Evidence and
	 * structuredContent.evidence */
	if (rc == 0 && json_array_size(ctx->content))
		json_array_remove(ctx->content, json_array_size(ctx->content) - 1);
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
	if (rc < 0) {
		rc = act_fail(ctx, "evidence_failed",
		              "the screenshot could not be validated or stored");
		goto out;
	}
	shown = masked ? masked : b64;
	if (strcmp(type, "png") != 0 && ctx->shot_masked) {
		/* only the PNG has the secret's field painted over */
		gb_buf_appendf(&ctx->text,
		               "\n- returned as png, not %s: the page shows a field that "
		               "received a secret, painted over in the png only",
		               type);
		type = "png";
	} else if (strcmp(type, "png") != 0) {
		shown = json_string_value(json_object_get(other, "data"));
	}
	if (!shown || evid_base64_decode(shown, strlen(shown), &img, &img_len) < 0) {
		rc = act_fail(ctx, "evidence_failed", "the %s screenshot could not be decoded",
		              type);
		goto out;
	}
	/* the file Playwright MCP writes: the name asked for, else page-<time> */
	if (filename) {
		rc = act_output_write(ctx, path, img, img_len);
		snprintf(link, sizeof(link), "%s", filename);
	} else if (ctx->as->output_dir) {
		rc = act_output_new_file(ctx, ctx->has_target ? "element" : "page", type, img,
		                         img_len, link, sizeof(link));
	}
	if (rc < 0)
		goto out;
	if (link[0])
		gb_buf_appendf(&ctx->result, "- [Screenshot of %s](%s)", what, link);
	if (!ctx->as->no_code)
		screenshot_code(ctx, type, link[0] ? link : "page.png", what, full);
	/* asked to save it: the image stays in the file, as Playwright MCP
	 * does; and none when the server omits images. One too large for a
	 * model is shrunk (the file and the evidence keep it whole), unless
	 * fields that received a secret are painted over in it: a second
	 * capture would show them. */
	if (!filename && !ctx->as->omit_images && !ctx->shot_masked && png_size(b64, &w, &h) == 0) {
		rc = fit_for_answer(ctx, base, type, w, h, &fit);
		if (rc < 0)
			goto out;
		if (json_string_value(json_object_get(fit, "data")))
			shown = json_string_value(json_object_get(fit, "data"));
	}
	if (!filename && !ctx->as->omit_images)
		json_array_insert_new(ctx->content, 0,
		                      json_pack("{s:s, s:s+, s:s}", "type", "image", "mimeType",
		                                "image/", type, "data", shown));
out:
	free(img);
	free(masked);
	json_decref(fit);
	json_decref(base);
	json_decref(metrics);
	json_decref(other);
	json_decref(res);
	return rc;
}

static const char *const image_type_values[] = { "png", "jpeg", "webp", NULL };
static const char *const scale_values[] = { "css", "device", NULL };

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
	  .description = "Image format for the screenshot. If unset, inferred from the filename "
	                 "extension, otherwise png. The evidence kept is always a validated PNG",
	  .enum_values = image_type_values },
	{ .name = "filename",
	  .type = ACT_T_STRING,
	  .description = "File name to save the screenshot to, in the server's output directory "
	                 "(--output-dir); the image is then not returned inline. A plain file "
	                 "name. Default: page-{timestamp}.{png|jpeg|webp} there when the server "
	                 "has an output directory" },
	{ .name = "scale",
	  .type = ACT_T_STRING,
	  .description = "Image resolution scale: css (CSS pixels, the default) or device "
	                 "(device pixels: larger when the device pixel ratio is above 1)",
	  .enum_values = scale_values },
};

static const struct act_tool_impl impl = {
	.run = screenshot_run,
	.needs_target = 2,
};

const struct act_def act_tool_take_screenshot = {
	.name = "browser_take_screenshot",
	.title = "Take a screenshot",
	.description =
	    "Take a screenshot (png, jpeg or webp) of the viewport, of the full page (`fullPage`) "
	    "or of one element (`target`). The image is returned inline (or saved to "
	    "`filename`) and a PNG is stored as evidence. Use "
	    "browser_snapshot to decide what to act on; screenshots are for looking and for the "
	    "record. Read-only.",
	PARAMS(params),
	.effect = ACT_EFFECT_READ,
	.policy = ACT_POLICY_EXEMPT("reads the page only: a screenshot changes nothing"),
	.impl = &impl,
};

/*
 * emulate_media.c - browser_emulate_media: CSS media features (colour
 * scheme, reduced motion, forced colours, contrast) and the media type
 * emulated for the session's pages, each re-read with matchMedia.
 *
 * Omitted parameters keep what an earlier call set, null clears it: the
 * session keeps the emulation in force (as->media), since the browser
 * takes the whole set at once.
 */
#include "actions/actions-private.h"
#include "actions/tools/params.h"

#include "policy/risk.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Parameter -> CSS media feature. */
static const struct {
	const char *param;
	const char *feature;
} features[] = {
	{ "colorScheme", "prefers-color-scheme" },
	{ "reducedMotion", "prefers-reduced-motion" },
	{ "forcedColors", "forced-colors" },
	{ "contrast", "prefers-contrast" },
};
#define N_FEATURES (sizeof(features) / sizeof(features[0]))

/* Reads what matchMedia says of each query (a JSON array of strings,
 * borrowed): *matched a new array of booleans. */
static int match_media(struct act_ctx *ctx, json_t *queries, json_t **matched)
{
	char *list = json_dumps(queries, JSON_COMPACT);
	struct gb_buf js;
	int rc;

	gb_buf_init(&js, 1 << 16);
	gb_buf_appendf(&js, "(%s).map((q) => matchMedia(q).matches)", list ? list : "[]");
	rc = act_page_eval(ctx, js.data ? js.data : "[]", matched, "re-reading the media features");
	gb_buf_free(&js);
	free(list);
	return rc;
}

static int emulate_media_run(struct act_ctx *ctx)
{
	json_t *state = ctx->as->media ? json_deep_copy(ctx->as->media) : json_object();
	json_t *list = json_array(), *queries = json_array();
	json_t *res = NULL, *matched = NULL, *v;
	const char *media;
	size_t i, given = 0;
	int all = 1;
	int rc = -1;

	for (i = 0; i <= N_FEATURES; i++) {
		const char *param = i < N_FEATURES ? features[i].param : "media";

		v = json_object_get(ctx->args, param);
		if (!v)
			continue;
		given++;
		if (json_is_null(v))
			json_object_del(state, param);
		else
			json_object_set(state, param, v);
	}
	if (!given) {
		rc = act_fail(ctx, "bad_arguments",
		              "specify at least one media feature to emulate: colorScheme, "
		              "reducedMotion, forcedColors, contrast or media (null clears one)");
		goto out;
	}
	for (i = 0; i < N_FEATURES; i++) {
		const char *value = json_string_value(json_object_get(state, features[i].param));
		char q[96];

		json_array_append_new(list, json_pack("{s:s, s:s}", "name", features[i].feature,
		                                      "value", value ? value : ""));
		if (!value)
			continue;
		snprintf(q, sizeof(q), "(%s: %s)", features[i].feature, value);
		json_array_append_new(queries, json_string(q));
	}
	media = json_string_value(json_object_get(state, "media"));
	if (media)
		json_array_append_new(queries, json_string(media));
	rc = act_cdp(ctx, ctx->psid, "Emulation.setEmulatedMedia",
	             json_pack("{s:s, s:O}", "media", media ? media : "", "features", list), &res,
	             "emulating the media features");
	if (rc < 0)
		goto out;
	json_decref(ctx->as->media);
	ctx->as->media = json_incref(state);
	json_object_set(ctx->out, "media", state);
	rc = match_media(ctx, queries, &matched);
	if (rc < 0)
		goto out;
	for (i = 0; i < json_array_size(queries); i++) {
		int ok = json_is_true(json_array_get(matched, i));

		all = act_add_verdict(ctx, "matchMedia", json_incref(json_array_get(queries, i)),
		                      json_boolean(ok), ok) &&
		      all;
	}
	if (!all) {
		rc = act_fail(ctx, "media_not_applied",
		              "the page does not match every emulated media feature (see "
		              "structuredContent.verdicts): the browser did not apply them");
		goto out;
	}
	{
		char *shown = json_dumps(state, JSON_COMPACT);

		gb_buf_appendf(&ctx->text, "Emulating %s; %zu media quer%s re-read with matchMedia",
		               shown ? shown : "{}", json_array_size(queries),
		               json_array_size(queries) == 1 ? "y" : "ies");
		free(shown);
	}
out:
	json_decref(state);
	json_decref(list);
	json_decref(queries);
	json_decref(res);
	json_decref(matched);
	return rc;
}

static const char *const scheme_values[] = { "light", "dark", NULL };
static const char *const motion_values[] = { "reduce", "no-preference", NULL };
static const char *const forced_values[] = { "active", "none", NULL };
static const char *const contrast_values[] = { "more", "no-preference", NULL };
static const char *const media_values[] = { "screen", "print", NULL };

static const struct act_param params[] = {
	{ .name = "colorScheme",
	  .type = ACT_T_STRING,
	  .description = "Emulates the prefers-color-scheme media feature (null clears it)",
	  .enum_values = scheme_values,
	  .nullable = 1 },
	{ .name = "reducedMotion",
	  .type = ACT_T_STRING,
	  .description = "Emulates the prefers-reduced-motion media feature (null clears it)",
	  .enum_values = motion_values,
	  .nullable = 1 },
	{ .name = "forcedColors",
	  .type = ACT_T_STRING,
	  .description = "Emulates the forced-colors media feature (null clears it)",
	  .enum_values = forced_values,
	  .nullable = 1 },
	{ .name = "contrast",
	  .type = ACT_T_STRING,
	  .description = "Emulates the prefers-contrast media feature (null clears it)",
	  .enum_values = contrast_values,
	  .nullable = 1 },
	{ .name = "media",
	  .type = ACT_T_STRING,
	  .description = "Changes the CSS media type of the page (null clears it)",
	  .enum_values = media_values,
	  .nullable = 1 },
	P_EXPECT,
	P_OPERATION_ID,
};

static const struct act_tool_impl impl = {
	.run = emulate_media_run,
};

const struct act_def act_tool_emulate_media = {
	.name = "browser_emulate_media",
	.title = "Emulate media features",
	.description =
	    "Emulate CSS media features for the page, for example switch between the light and "
	    "dark color scheme. Omitted parameters are left unchanged; null clears an override. "
	    "Each feature in force is re-read with matchMedia (structuredContent.verdicts); one "
	    "the page does not match fails the call. Records evidence.",
	PARAMS(params),
	.effect = ACT_EFFECT_PAGE,
	.policy = ACT_POLICY(POLICY_ACT_OTHER),
	.checks_expect = 1,
	.impl = &impl,
};

/*
 * screencast.c - a session recording: frames of the page while each
 * page-changing action runs, when the tenant's policy asks for it
 * ("screencast": true or {"fps", "max_width", "max_height",
 * "max_frames"}; off by default). The action joins its page's one
 * screencast (cdp_cast_join, shared with the web console's live view, so
 * neither stops the other's frames) for PNG frames no larger than
 * max_width x max_height, at most fps a second; max_frames an action are
 * kept.
 * They go with the action's record to the keeper, which stores each as a
 * "screencast_frame" artifact (PNG, validated like every screenshot) and
 * lists them in the record's body (screencast: [{sha256, at_ms, width,
 * height}]), so the trail signs them and the trace and the report show
 * them as a filmstrip. Frames are not masked like screenshots: an action
 * that typed a secret or a password, or ran while a field that received a
 * secret is on the page, keeps none (body.screencast_withheld says so).
 *
 * Worker thread only (the frame listener runs inside cdp calls on it);
 * the keeper's part runs on the keeper thread.
 */
#include "actions/actions-private.h"

#include "cdp/cdp.h"
#include "common/log.h"
#include "evidence/evidence.h"
#include "policy/tenant.h"

#include <stdlib.h>
#include <string.h>

/* cdp_cast_fn: keeps one frame (a PNG, at most fps a second: the shared
 * screencast paces them), up to max_frames an action. */
static void on_frame(void *user, const char *data, int png, json_t *metadata)
{
	struct act_screencast *c = user;
	double ts = json_number_value(json_object_get(metadata, "timestamp"));
	int64_t at_ms = ts > 0 ? (int64_t)(ts * 1000.0) : gb_wall_ms();

	if (!png || json_array_size(c->frames) >= (size_t)c->max_frames)
		return;
	json_array_append_new(c->frames,
	                      json_pack("{s:s, s:I}", "png", data, "at_ms", (json_int_t)at_ms));
}

void act_screencast_start(struct act_ctx *ctx)
{
	const struct policy_tenant_settings *s = policy_tenant_settings(ctx->as->tenant_policy);
	struct act_screencast *c = &ctx->cast;
	struct cdp_cast_want want = { 0 };
	int rc;

	memset(c, 0, sizeof(*c));
	if (!s->screencast_fps || !ctx->cdp || !ctx->psid)
		return;
	c->cdp = ctx->cdp;
	c->max_frames = s->screencast_max_frames;
	c->frames = json_array();
	want.png = 1;
	want.max_width = s->screencast_max_width;
	want.max_height = s->screencast_max_height;
	want.fps = s->screencast_fps;
	/* the page's one screencast, shared with the console's live view */
	rc = cdp_cast_join(ctx->cdp, ctx->psid, &want, on_frame, c);
	c->consumer = rc > 0 ? rc : 0;
}

void act_screencast_stop(struct act_ctx *ctx)
{
	struct act_screencast *c = &ctx->cast;

	if (!c->consumer)
		return;
	cdp_cast_leave(c->cdp, c->consumer);
	c->consumer = 0;
}

json_t *act_screencast_take(struct act_ctx *ctx, json_t *body)
{
	json_t *frames = ctx->cast.frames;

	ctx->cast.frames = NULL;
	/* frames are not masked as screenshots are: none is kept of an action
	 * that typed a secret or a password, or of a page that may show one */
	if (frames && (ctx->sensitive || ctx->as->n_masked_fields)) {
		json_object_set_new(body, "screencast_withheld",
		                    json_string("the action typed a secret or a password, or the "
		                                "page has a field that received one: its frames "
		                                "are not kept"));
		json_decref(frames);
		frames = NULL;
	}
	if (frames && !json_array_size(frames)) {
		json_decref(frames);
		frames = NULL;
	}
	return frames;
}

void act_screencast_keep(struct evid_store *store, const struct evid_meta *base, json_t *frames,
                         json_t *artifacts, json_t *body)
{
	struct evid_meta meta = *base;
	json_t *listed = json_array();
	json_t *f;
	size_t i;

	meta.kind = EVID_KIND_SCREENCAST_FRAME;
	meta.mime = "image/png";
	json_array_foreach(frames, i, f)
	{
		const char *b64 = json_string_value(json_object_get(f, "png"));
		unsigned char *png = NULL;
		struct evid_png_info info;
		struct evid_ref ref;
		char err[512];
		size_t len = 0;

		if (!b64 || evid_base64_decode(b64, strlen(b64), &png, &len) != 0 ||
		    evid_png_check(png, len, &info, err, sizeof(err)) != 0 ||
		    evid_store_put(store, &meta, png, len, &ref, err, sizeof(err)) != 0) {
			GB_LOGD("actions", "a screencast frame of %s was not kept",
			        gb_or(base->operation_id, "an action"));
			free(png);
			continue;
		}
		free(png);
		json_array_append_new(artifacts, evid_artifact_json(EVID_KIND_SCREENCAST_FRAME,
		                                                    "image/png", &ref, 1));
		json_array_append_new(listed,
		                      json_pack("{s:s, s:O, s:i, s:i}", "sha256", ref.sha256,
		                                "at_ms", json_object_get(f, "at_ms"), "width",
		                                (int)info.width, "height", (int)info.height));
	}
	if (json_array_size(listed))
		json_object_set_new(body, "screencast", listed);
	else
		json_decref(listed);
}

/*
 * approval_evidence.c - what the person who decides an approval looks at:
 * a screenshot of the page as the action would find it, with the target
 * element outlined (the annotated copy), kept as evidence of the
 * operation that asked and named in an "approval_requested" record of the
 * session's chain. The web console shows it beside the approval.
 *
 * Runs on the worker while the call fails with approval_required; nothing
 * here fails the call: when the page cannot be captured, the approval
 * stands without a picture (logged).
 */
#include "actions/actions-private.h"

#include "cdp/cdp.h"
#include "common/log.h"
#include "evidence/audit.h"
#include "evidence/evidence.h"
#include "store/store.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MOD "actions"
#define SHOT_MS 5000

/* The element's border box in the top-level viewport (CSS px). */
static const char box_js[] =
    "function() { const el = this.nodeType === 1 ? this : this.parentElement;"
    " const r = el.getBoundingClientRect(); let x = r.x, y = r.y, w = window;"
    " while (w !== w.top && w.frameElement) { const f = w.frameElement.getBoundingClientRect();"
    "  x += f.x; y += f.y; w = w.parent; }"
    " return { x, y, width: r.width, height: r.height, dpr: window.devicePixelRatio || 1 }; }";

/* Fills a's box from the call's target, when it has one, read in
 * glassbox's isolated world where the gate read its facts: a page cannot
 * have the person shown another element than the one held. */
static void target_box(struct act_ctx *ctx, struct evid_annotation *a)
{
	struct cdp_error e;
	json_t *res = NULL, *v;

	if (!ctx->has_target || !ctx->target.world_object_id[0])
		return;
	if (cdp_call(ctx->cdp, ctx->target.session_id, "Runtime.callFunctionOn",
	             json_pack("{s:s, s:s, s:b}", "objectId", ctx->target.world_object_id,
	                       "functionDeclaration", box_js, "returnByValue", 1),
	             SHOT_MS, &res, &e) == 0) {
		v = json_object_get(json_object_get(res, "result"), "value");
		if (json_is_object(v)) {
			a->has_box = 1;
			a->box_x = json_number_value(json_object_get(v, "x"));
			a->box_y = json_number_value(json_object_get(v, "y"));
			a->box_width = json_number_value(json_object_get(v, "width"));
			a->box_height = json_number_value(json_object_get(v, "height"));
			a->scale = json_number_value(json_object_get(v, "dpr"));
		}
	}
	json_decref(res);
}

/* See actions-private.h. */
void act_approval_evidence(struct act_ctx *ctx, const struct store_approval *approval)
{
	struct act_session *as = ctx->as;
	/* "session" is the browser session's id, as on the tool calls' records */
	const char *browser = ctx->sess ? sess_id(ctx->sess) : as->id;
	struct evid_meta meta = { .tenant = as->tenant,
		                  .session_id = browser,
		                  .operation_id = ctx->operation_id,
		                  .tool = ctx->def->name,
		                  .url = ctx->url_before };
	struct evid_action_evidence ev = { .meta = &meta };
	struct evid_audit_entry e = { 0 };
	struct cdp_error cerr;
	json_t *res = NULL, *artifacts = NULL, *body = NULL;
	char err[512];

	if (!ctx->cdp || !ctx->psid)
		return;
	target_box(ctx, &ev.annotation);
	if (cdp_call(ctx->cdp, ctx->psid, "Page.captureScreenshot", act_png_params(), SHOT_MS, &res,
	             &cerr) < 0) {
		GB_LOGW(MOD, "approval %s: no screenshot of the page: %s", approval->id,
		        cerr.message);
		goto out;
	}
	ev.screenshot_b64 = json_string_value(json_object_get(res, "data"));
	if (!ev.screenshot_b64 ||
	    evid_keep_action_evidence(as->store, &ev, &artifacts, err, sizeof(err)) < 0) {
		GB_LOGW(MOD, "approval %s: its screenshot could not be kept: %s", approval->id,
		        ev.screenshot_b64 ? err : "no data");
		if (!artifacts)
			goto out;
	}
	body =
	    json_pack("{s:s, s:s, s:s, s:s, s:s, s:s}", "approval_id", approval->id, "tool",
	              approval->tool, "rule", approval->rule, "fingerprint", approval->fingerprint,
	              "summary", approval->summary, "agent_session", as->id);
	e.tenant = as->tenant;
	e.kind = "approval_requested";
	e.actor.tenant = as->tenant;
	e.session_id = browser;
	e.operation_id = ctx->operation_id;
	e.body = body;
	e.artifacts = artifacts;
	if (as->audit && evid_audit_append(as->audit, &e, NULL, err, sizeof(err)) < 0)
		GB_LOGW(MOD, "approval %s: its record could not be kept: %s", approval->id, err);
out:
	json_decref(body);
	json_decref(artifacts);
	json_decref(res);
}

/*
 * code_target.c - the facts the Playwright locator of a call's target is
 * made from: the snapshot's role and name (and whether they name the
 * element alone), and, read from the page before the action changes it,
 * its test id, a unique text, a unique CSS selector and its iframe.
 */
#include "actions/actions-private.h"
#include "actions/codegen.h"

#include "cdp/cdp.h"
#include "sessions/sessions.h"

#include <string.h>

/* Read in the parent document on the iframe that holds the target: its
 * tag, and whether that tag finds more than one element there. */
static const char owner_js[] =
    "function() { return { frame: this.localName,"
    " frameFirst: this.ownerDocument.querySelectorAll(this.localName).length > 1 }; }";

/* A frame of another origin hides its frameElement from the target's
 * document: the iframe that holds the target is asked of its parent
 * instead (DOM.getFrameOwner in the page's session), into probe. */
static void probe_owner(struct act_ctx *ctx, json_t *probe)
{
	const struct snap_ref *ref =
	    ctx->target.ref[0] ? act_snapshot_find(&ctx->as->refs, ctx->target.ref) : NULL;
	const char *main = ctx->page ? sess_page_main_frame_id(ctx->page) : NULL;
	json_t *owner = NULL, *node = NULL, *res = NULL;
	const char *oid;
	struct cdp_error err;

	if (!ref || !ref->frame_id[0] || !main || !strcmp(ref->frame_id, main) ||
	    json_object_get(probe, "frame"))
		return;
	if (cdp_call(ctx->cdp, ctx->psid, "DOM.getFrameOwner",
	             json_pack("{s:s}", "frameId", ref->frame_id), act_left_ms(ctx), &owner,
	             &err) < 0 ||
	    cdp_call(ctx->cdp, ctx->psid, "DOM.resolveNode",
	             json_pack("{s:O}", "backendNodeId", json_object_get(owner, "backendNodeId")),
	             act_left_ms(ctx), &node, &err) < 0)
		goto out;
	oid = json_string_value(json_object_get(json_object_get(node, "object"), "objectId"));
	if (oid && cdp_call(ctx->cdp, ctx->psid, "Runtime.callFunctionOn",
	                    json_pack("{s:s, s:s, s:b}", "objectId", oid, "functionDeclaration",
	                              owner_js, "returnByValue", 1),
	                    act_left_ms(ctx), &res, &err) == 0) {
		json_t *v = json_object_get(json_object_get(res, "result"), "value");

		if (json_is_string(json_object_get(v, "frame")))
			json_object_update(probe, v);
	}
out:
	json_decref(owner);
	json_decref(node);
	json_decref(res);
}

/* The caller's own selector, when the code shows the target as given
 * rather than by a locator made for it; NULL otherwise. */
static const char *given_selector(const struct act_ctx *ctx)
{
	const char *given = json_string_value(json_object_get(ctx->args, "target"));

	return given && strcmp(given, ctx->target.ref) != 0 ? given : NULL;
}

/* 1 when the snapshot's role and name find the target alone: the locator
 * is then by role (or test id), never by text. */
static int role_names_it(const struct act_ctx *ctx, const struct snap_ref *ref)
{
	return ref && ref->role && ref->role[0] && ref->name && ref->name[0] &&
	       strcmp(ref->role, "generic") != 0 &&
	       act_snapshot_count_role(&ctx->as->refs, ref->role, ref->name) == 1;
}

void act_code_probe_ask(struct act_ctx *ctx)
{
	const struct snap_ref *ref =
	    ctx->target.ref[0] ? act_snapshot_find(&ctx->as->refs, ctx->target.ref) : NULL;
	/* in glassbox's world when the target has its object there: the page
	 * cannot steer the locator shown */
	const char *oid =
	    ctx->target.world_object_id[0] ? ctx->target.world_object_id : ctx->target.object_id;

	if (!ctx->has_target || !oid[0] || ctx->code_probe_call || given_selector(ctx))
		return;
	ctx->code_probe_call =
	    act_target_send(ctx, oid, act_code_probe_js,
	                    json_pack("[{s:s}, {s:b}]", "value", ctx->as->test_id_attribute,
	                              "value", !role_names_it(ctx, ref)),
	                    NULL);
}

void act_code_probe_take(struct act_ctx *ctx)
{
	struct cdp_error err;
	json_t *res = NULL;
	json_t *value;

	if (!ctx->code_probe_call)
		return;
	/* only the code shown loses a fact when this fails: the action goes on */
	if (cdp_await(ctx->cdp, ctx->code_probe_call, act_left_ms(ctx), &res, &err) == 0 &&
	    !json_object_get(res, "exceptionDetails")) {
		value = json_object_get(json_object_get(res, "result"), "value");
		if (json_is_object(value)) {
			json_decref(ctx->code_probe);
			ctx->code_probe = json_incref(value);
			probe_owner(ctx, ctx->code_probe);
		}
	}
	ctx->code_probe_call = 0;
	json_decref(res);
}

void act_code_probe(struct act_ctx *ctx)
{
	act_code_probe_ask(ctx);
	act_code_probe_take(ctx);
}

void act_code_target_of(const struct act_ctx *ctx, struct act_code_target *t)
{
	const struct snap_ref *ref =
	    ctx->target.ref[0] ? act_snapshot_find(&ctx->as->refs, ctx->target.ref) : NULL;
	json_t *p = ctx->code_probe;

	memset(t, 0, sizeof(*t));
	t->lang = ctx->as->code_lang;
	t->selector = given_selector(ctx);
	if (t->selector)
		return;
	if (ref) {
		t->role = ref->role;
		t->name = ref->name;
		t->role_unique = act_snapshot_count_role(&ctx->as->refs, ref->role, ref->name) == 1;
	}
	t->test_id = json_string_value(json_object_get(p, "testId"));
	t->text = json_string_value(json_object_get(p, "text"));
	t->css = json_string_value(json_object_get(p, "css"));
	t->frame = json_string_value(json_object_get(p, "frame"));
	t->frame_first = json_is_true(json_object_get(p, "frameFirst"));
}

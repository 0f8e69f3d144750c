/*
 * target.c - from the agent's `target` (a ref from the latest snapshot, a
 * locator by ARIA role and name or by visible text, or a CSS selector) to
 * exactly one live DOM node, and the actionability
 * checks before any input: attached, visible, stable, enabled, editable
 * for typing, and receiving the event at the click point.
 */
#include "actions/actions-private.h"

#include "cdp/cdp.h"
#include "sessions/sessions.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* 1 when t looks like a snapshot ref: e12 or f1e12. */
UNITTEST int act_is_ref(const char *t)
{
	const char *p = t;

	if (*p == 'f') {
		p++;
		if (!isdigit((unsigned char)*p))
			return 0;
		while (isdigit((unsigned char)*p))
			p++;
	}
	if (*p++ != 'e' || !isdigit((unsigned char)*p))
		return 0;
	while (isdigit((unsigned char)*p))
		p++;
	return *p == '\0';
}

static int resolve_ref(struct act_ctx *ctx, const char *target)
{
	const struct snap_ref *ref = act_snapshot_find(&ctx->as->refs, target);
	struct cdp_error err;
	json_t *res = NULL;
	const char *oid;
	int rc;

	if (!ref) {
		if (ctx->as->refs.n_refs == 0)
			return act_fail(ctx, "unknown_ref",
			                "ref %s is unknown: take a snapshot with "
			                "browser_snapshot and use a ref from it",
			                target);
		return act_fail(ctx, "stale_ref",
		                "ref %s is not in the latest snapshot: take a new "
		                "snapshot",
		                target);
	}
	rc = cdp_call(ctx->cdp, ref->session_id, "DOM.resolveNode",
	              json_pack("{s:i}", "backendNodeId", ref->backend_node_id), act_left_ms(ctx),
	              &res, &err);
	oid = json_string_value(json_object_get(json_object_get(res, "object"), "objectId"));
	if (rc < 0 || !oid) {
		json_decref(res);
		if (rc == -CDP_ECLOSED || rc == -CDP_ECANCELLED)
			return act_connection_failed(ctx, rc, "resolving the target");
		return act_fail(ctx, "stale_ref",
		                "ref %s is stale: the element it named (%s \"%.100s\") "
		                "is gone from the page; take a new snapshot",
		                target, gb_or(ref->role, ""), gb_or(ref->name, ""));
	}
	snprintf(ctx->target.session_id, sizeof(ctx->target.session_id), "%s", ref->session_id);
	snprintf(ctx->target.object_id, sizeof(ctx->target.object_id), "%s", oid);
	snprintf(ctx->target.ref, sizeof(ctx->target.ref), "%s", target);
	ctx->target.backend_node_id = ref->backend_node_id;
	snprintf(ctx->target.description, sizeof(ctx->target.description), "%s \"%.100s\" [%s]",
	         gb_or(ref->role, "element"), gb_or(ref->name, ""), target);
	json_decref(res);
	return 0;
}

/*
 * Finds the elements a CSS selector (kind "css") or a visible text (kind
 * "text") names, in the page and in every frame whose document it can
 * reach (same-origin frames, nested). A text matches an element whose
 * rendered text (or, for input buttons, value), with whitespace collapsed,
 * equals it exactly; of nested matches only the innermost counts. Returns
 * the element when exactly one matches, else the count, or 'invalid' for
 * bad CSS.
 */
static const char find_js[] =
    "((want, kind) => { const norm = (s) => (s || '').replace(/\\s+/g, ' ').trim();"
    " const docs = []; const walk = (d) => { docs.push(d);"
    "  for (const f of d.querySelectorAll('iframe, frame')) { try { if (f.contentDocument) "
    "walk(f.contentDocument); } catch (e) {} } };"
    " walk(document); let found = [];"
    " for (const d of docs) {"
    "  if (kind === 'css') { try { found.push(...d.querySelectorAll(want)); } catch (e) { return "
    "'invalid'; } continue; }"
    "  for (const el of d.querySelectorAll('body *')) {"
    "   const t = el.tagName === 'INPUT' && ['submit', 'button', 'reset'].includes(el.type) ? "
    "el.value : el.innerText;"
    "   if (norm(t) === want && (!el.checkVisibility || el.checkVisibility())) found.push(el); } }"
    " if (kind === 'text') found = found.filter((el) => !found.some((o) => o !== el && "
    "el.contains(o)));"
    " return found.length === 1 ? found[0] : found.length; })";

/* Resolves a CSS selector or a visible text (kind "css" / "text") to
 * exactly one element; what names it in messages is shown. */
static int resolve_in_documents(struct act_ctx *ctx, const char *kind, const char *want,
                                const char *shown)
{
	json_t *quoted = json_string(want);
	char *arg = quoted ? json_dumps(quoted, JSON_ENCODE_ANY) : NULL;
	struct gb_buf expr;
	json_t *res = NULL;
	json_t *obj;
	const char *oid;
	int css = !strcmp(kind, "css");
	int rc = -1;

	gb_buf_init(&expr, 1 << 17);
	gb_buf_appendf(&expr, "%s(%s, '%s')", find_js, arg ? arg : "\"\"", kind);
	if (act_cdp(ctx, ctx->psid, "Runtime.evaluate",
	            json_pack("{s:s}", "expression", expr.data ? expr.data : ""), &res,
	            "finding the target") < 0)
		goto out;
	obj = json_object_get(res, "result");
	oid = json_string_value(json_object_get(obj, "objectId"));
	if (json_is_string(json_object_get(obj, "value"))) {
		act_fail(ctx, "bad_target",
		         "target \"%.200s\" is neither a snapshot ref (e.g. e5), a "
		         "locator (role=button[name=\"Save\"], text=\"Save\") nor valid CSS",
		         shown);
		goto out;
	}
	if (!oid) {
		int n = (int)json_number_value(json_object_get(obj, "value"));

		if (n == 0 && css)
			act_fail(ctx, "no_match",
			         "no element matches \"%.200s\": take a snapshot and use "
			         "a ref, or fix the selector",
			         shown);
		else if (n == 0)
			act_fail(ctx, "no_match",
			         "no visible element has the text \"%.200s\" (whole "
			         "text, whitespace collapsed): check the page or use role= or CSS",
			         want);
		else
			act_fail(ctx, "ambiguous_target",
			         "\"%.200s\" matches %d elements: use a ref from "
			         "browser_snapshot or a more specific %s",
			         shown, n,
			         css ? "selector" : "locator (role= with a name, or CSS)");
		goto out;
	}
	snprintf(ctx->target.session_id, sizeof(ctx->target.session_id), "%s", ctx->psid);
	snprintf(ctx->target.object_id, sizeof(ctx->target.object_id), "%s", oid);
	if (css)
		snprintf(ctx->target.description, sizeof(ctx->target.description), "\"%.200s\"",
		         shown);
	else
		snprintf(ctx->target.description, sizeof(ctx->target.description),
		         "element with text \"%.180s\"", want);
	rc = 0;
out:
	gb_buf_free(&expr);
	free(arg);
	json_decref(quoted);
	json_decref(res);
	return rc;
}

static const char *frame_session(void *user, const char *frame_id)
{
	return sess_frame_session(user, frame_id);
}

/* Collapses runs of whitespace to one space and trims, into out. */
static void collapse_space(const char *s, char *out, size_t outlen)
{
	size_t n = 0;
	int space = 0;

	for (; s && *s && n + 1 < outlen; s++) {
		if (isspace((unsigned char)*s)) {
			space = n > 0;
			continue;
		}
		if (space && n + 2 < outlen)
			out[n++] = ' ';
		space = 0;
		out[n++] = *s;
	}
	out[n] = '\0';
}

/*
 * role=ROLE or role=ROLE[name="NAME"]: a fresh accessibility snapshot of
 * the page and all its frames (out-of-process ones too) replaces the refs,
 * and exactly one node must have that ARIA role (and that accessible
 * name, compared with whitespace collapsed); it is then resolved as its
 * ref would be. The agent's last snapshot text is left as it was.
 */
static int resolve_role(struct act_ctx *ctx, const char *role, const char *name, const char *shown)
{
	struct snap_options opt = { 0 };
	struct snap_refmap *map = &ctx->as->refs;
	char want[512], got[512];
	char found[16] = "";
	struct gb_buf others;
	char *yaml = NULL;
	char err[512] = "";
	size_t i, n = 0, n_role = 0;
	int truncated = 0;
	int rc = -1;

	gb_buf_init(&others, 1024);
	collapse_space(name, want, sizeof(want));
	opt.page_session_id = ctx->psid;
	opt.timeout_ms = act_left_ms(ctx);
	opt.frame_session = frame_session;
	opt.frame_session_user = ctx->sess;
	if (act_snapshot_take(ctx->cdp, &opt, map, &yaml, &truncated, err, sizeof(err)) < 0) {
		if (sess_check_alive(ctx->sess) < 0)
			act_connection_failed(ctx, -CDP_ECLOSED, "finding the target");
		else
			act_fail(ctx, "snapshot_failed", "cannot read the page to find %s: %s",
			         shown, err);
		goto out;
	}
	for (i = 0; i < map->n_refs; i++) {
		const struct snap_ref *r = &map->refs[i];

		if (!r->role || strcmp(r->role, role) != 0)
			continue;
		n_role++;
		collapse_space(r->name, got, sizeof(got));
		if (name && strcmp(got, want) != 0) {
			if (n_role <= 8)
				gb_buf_appendf(&others, "%s\"%.60s\"", others.len ? ", " : "", got);
			continue;
		}
		if (n++ == 0)
			snprintf(found, sizeof(found), "%s", r->ref);
	}
	if (n == 0 && name && n_role)
		act_fail(ctx, "no_match",
		         "no %s named \"%.200s\" on the page; the %ss there are "
		         "named %s",
		         role, want, role, others.data ? others.data : "");
	else if (n == 0)
		act_fail(ctx, "no_match",
		         "no element with role %s%s%.200s%s on the page: check the "
		         "role (ARIA, as browser_snapshot shows it) and the name",
		         role, name ? " and name \"" : "", name ? want : "", name ? "\"" : "");
	else if (n > 1)
		act_fail(ctx, "ambiguous_target",
		         "%.200s matches %zu elements: give a name, or a "
		         "more specific locator",
		         shown, n);
	else
		rc = resolve_ref(ctx, found);
out:
	free(yaml);
	gb_buf_free(&others);
	return rc;
}

/*
 * Splits a locator: "role=ROLE", "role=ROLE[name=\"NAME\"]" (NAME a JSON
 * string), "text=TEXT" or "text=\"TEXT\"" (JSON string), "css=SELECTOR".
 * Returns 1 with *kind ("role", "text", "css"), *what (role, text or
 * selector; new string) and *name (new string or NULL); 0 when target is
 * not a locator (plain CSS); -1 with err when it is a malformed one.
 */
UNITTEST int act_parse_locator(const char *target, const char **kind, char **what, char **name,
                               char *err, size_t errlen)
{
	const char *v;
	json_t *j = NULL;
	int rc = -1;

	*kind = NULL;
	*what = *name = NULL;
	if (!strncmp(target, "css=", 4)) {
		*kind = "css";
		*what = strdup(target + 4);
		return *what ? 1 : -1;
	}
	if (!strncmp(target, "text=", 5)) {
		v = target + 5;
		*kind = "text";
		if (*v == '"') {
			j = json_loads(v, JSON_DECODE_ANY, NULL);
			if (!json_is_string(j)) {
				snprintf(err, errlen,
				         "text=%.100s: a quoted text must be one JSON string", v);
				goto out;
			}
			v = json_string_value(j);
		}
		if (!*v) {
			snprintf(err, errlen,
			         "text= needs the text to find, such as text=\"Checkout\"");
			goto out;
		}
		*what = strdup(v);
		rc = *what ? 1 : -1;
		goto out;
	}
	if (strncmp(target, "role=", 5) != 0)
		return 0;
	*kind = "role";
	v = target + 5;
	{
		size_t n = strspn(v, "abcdefghijklmnopqrstuvwxyz");
		size_t len = strlen(v);

		if (n == 0 || (v[n] && v[n] != '[')) {
			snprintf(
			    err, errlen,
			    "%.100s: the role must be lowercase letters (an ARIA role "
			    "such as button, link, textbox), optionally followed by [name=\"...\"]",
			    target);
			goto out;
		}
		if (v[n] == '[') {
			if (strncmp(v + n, "[name=", 6) != 0 || len < n + 8 || v[len - 1] != ']') {
				snprintf(err, errlen,
				         "%.100s: write the name as role=%.*s[name=\"Save\"]",
				         target, (int)n, v);
				goto out;
			}
			j = json_loadb(v + n + 6, len - n - 7, JSON_DECODE_ANY, NULL);
			if (!json_is_string(j)) {
				snprintf(err, errlen,
				         "%.100s: the name must be a JSON string in double "
				         "quotes, such as [name=\"Save\"]",
				         target);
				goto out;
			}
			*name = strdup(json_string_value(j));
		}
		*what = strndup(v, n);
	}
	rc = *what ? 1 : -1;
out:
	json_decref(j);
	if (rc < 0) {
		free(*what);
		free(*name);
		*what = *name = NULL;
	}
	return rc;
}

int act_resolve_target(struct act_ctx *ctx, const char *target)
{
	const char *kind = NULL;
	char *what = NULL, *name = NULL;
	char err[256] = "";
	int rc;

	memset(&ctx->target, 0, sizeof(ctx->target));
	ctx->has_target = 0;
	if (act_is_ref(target)) {
		rc = resolve_ref(ctx, target);
		goto out;
	}
	rc = act_parse_locator(target, &kind, &what, &name, err, sizeof(err));
	if (rc < 0) {
		rc = act_fail(ctx, "bad_target", "%s", err[0] ? err : "out of memory");
		goto out;
	}
	if (rc == 0)
		rc = resolve_in_documents(ctx, "css", target, target);
	else if (!strcmp(kind, "role"))
		rc = resolve_role(ctx, what, name, target);
	else
		rc = resolve_in_documents(ctx, kind, what, target);
out:
	free(what);
	free(name);
	if (rc == 0)
		ctx->has_target = 1;
	return rc;
}

/*
 * The checks, run on the element in its own frame; for typing, the field
 * is then focused and its content selected (typing replaces it). Stability: when the
 * document runs animations, the box must not move across two frames;
 * without any, nothing moves it between frames, so no frame is waited for.
 * The hit test uses the element's frame-local centre; the caller gets the
 * top-level point from DOM.getContentQuads.
 */
static const char actionable_js[] =
    "async function(kind) {"
    " const el = this.nodeType === 1 ? this : this.parentElement;"
    " const desc = (n) => { if (!n) return 'nothing'; let s = n.tagName.toLowerCase();"
    "  if (n.id) s += '#' + n.id; else if (n.classList && n.classList.length) s += '.' + "
    "[...n.classList].join('.');"
    "  const t = (n.innerText || n.value || '').trim().slice(0, 40); if (t) s += ' \"' + t + '\"'; "
    "return s; };"
    " if (!el || !el.isConnected) return { error: 'detached' };"
    " const rect = () => { const r = el.getBoundingClientRect(); return [r.left, r.top, r.width, "
    "r.height]; };"
    " let r1 = rect();"
    " if (el.ownerDocument.getAnimations().length) {"
    "  await new Promise(f => requestAnimationFrame(() => requestAnimationFrame(f)));"
    "  const r2 = rect(); if (r2.some((v, i) => Math.abs(v - r1[i]) > 0.5)) return { error: "
    "'unstable', desc: desc(el) }; r1 = r2; }"
    " const st = getComputedStyle(el);"
    " if (r1[2] <= 0 || r1[3] <= 0 || st.visibility === 'hidden' || st.display === 'none' ||"
    "     (el.checkVisibility && !el.checkVisibility({ opacityProperty: false, visibilityProperty: "
    "true })))"
    "  return { error: 'hidden', desc: desc(el) };"
    " if (el.disabled || el.closest('fieldset[disabled]') || el.getAttribute('aria-disabled') === "
    "'true')"
    "  return { error: 'disabled', desc: desc(el) };"
    " const tag = el.tagName.toLowerCase(); const type = (el.type || '').toLowerCase();"
    " if (kind === 'type') { const textual = (tag === 'input' && "
    "!['button','submit','reset','checkbox','radio','file','image','color','range','hidden']."
    "includes(type)) || tag === 'textarea' || el.isContentEditable;"
    "  if (!textual || el.readOnly) return { error: 'not_editable', desc: desc(el) }; }"
    " if (kind === 'select' && tag !== 'select') return { error: 'not_select', desc: desc(el) };"
    " const cx = r1[0] + r1[2] / 2, cy = r1[1] + r1[3] / 2;"
    " const root = el.getRootNode(); const hit = (root.elementFromPoint ? root : "
    "el.ownerDocument).elementFromPoint(cx, cy);"
    " if (kind !== 'type' && kind !== 'select' && hit && hit !== el && !el.contains(hit) && "
    "!(hit.control === el))"
    "  return { error: 'covered', desc: desc(el), blocker: desc(hit), x: Math.round(cx), y: "
    "Math.round(cy) };"
    " if (kind !== 'type' && kind !== 'select' && !hit) return { error: 'offscreen', desc: "
    "desc(el) };"
    " if (kind === 'type') { el.focus(); if (typeof el.select === 'function' && typeof el.value "
    "=== 'string') el.select();"
    "  else { const r = document.createRange(); r.selectNodeContents(el); const s = "
    "getSelection(); s.removeAllRanges(); s.addRange(r); } }"
    " return { ok: true, desc: desc(el), tag, type, password: type === 'password',"
    "  autocomplete: el.getAttribute('autocomplete') || '' }; }";

/* The frame the target lives in and its backend node id: from its ref,
 * else from DOM.describeNode. Returns 0, or -1 with the action failed. */
static int target_frame(struct act_ctx *ctx, const struct snap_ref *ref, char *frame,
                        size_t framelen, int *backend, const char *doing)
{
	const char *sid = ctx->target.session_id;
	const char *found = NULL;
	json_t *node = NULL;

	*backend = ctx->target.backend_node_id;
	if (!*backend) {
		if (act_cdp(ctx, sid, "DOM.describeNode",
		            json_pack("{s:s}", "objectId", ctx->target.object_id), &node,
		            doing) < 0)
			return -1;
		*backend = (int)json_integer_value(
		    json_object_get(json_object_get(node, "node"), "backendNodeId"));
	}
	found = ref && ref->frame_id[0]   ? ref->frame_id
	        : !strcmp(sid, ctx->psid) ? sess_page_main_frame_id(ctx->page)
	                                  : NULL;
	snprintf(frame, framelen, "%s", gb_or(found, ""));
	json_decref(node);
	return 0;
}

/* The node as an object of glassbox's isolated world in frame: the world
 * made once per document (sessions/worlds.c), or made now when none lives
 * or the one known died meanwhile. Returns 0 with *obj (new reference),
 * -1 with the action failed. */
static int resolve_in_world(struct act_ctx *ctx, const char *frame, int backend, json_t **obj,
                            const char *doing)
{
	const char *sid = ctx->target.session_id;
	struct cdp_error err;
	json_t *world = NULL;
	long long context;
	int rc;

	*obj = NULL;
	/* events already received first: a context reported dead is not used */
	cdp_service(ctx->cdp, 0, NULL, NULL);
	context = sess_world_find(ctx->sess, sid, frame);
	if (context && cdp_call(ctx->cdp, sid, "DOM.resolveNode",
	                        json_pack("{s:i, s:I}", "backendNodeId", backend,
	                                  "executionContextId", (json_int_t)context),
	                        act_left_ms(ctx), obj, &err) == 0)
		return 0;
	if (context)
		sess_world_forget(ctx->sess, sid, context);
	if (act_cdp(ctx, sid, "Page.createIsolatedWorld",
	            json_pack("{s:s, s:s}", "frameId", frame, "worldName", "glassbox"), &world,
	            doing) < 0)
		return -1;
	context = (long long)json_integer_value(json_object_get(world, "executionContextId"));
	json_decref(world);
	rc = act_cdp(ctx, sid, "DOM.resolveNode",
	             json_pack("{s:i, s:I}", "backendNodeId", backend, "executionContextId",
	                       (json_int_t)context),
	             obj, doing);
	if (rc == 0)
		sess_world_remember(ctx->sess, sid, frame, context);
	return rc;
}

/*
 * Runs function on the target in an isolated world of its frame: the
 * page's scripts cannot redefine what it calls there (innerText,
 * getAttribute, the prototypes of form controls), so what it reads is what
 * the DOM holds, not what the page pretends. For facts a decision rests on.
 */
int act_call_in_isolated_world(struct act_ctx *ctx, const char *function, json_t **value,
                               const char *doing)
{
	const struct snap_ref *ref =
	    ctx->target.ref[0] ? act_snapshot_find(&ctx->as->refs, ctx->target.ref) : NULL;
	const char *sid = ctx->target.session_id;
	json_t *obj = NULL, *res = NULL, *exc;
	char frame[64];
	const char *oid;
	int backend;
	int rc = -1;

	*value = NULL;
	if (target_frame(ctx, ref, frame, sizeof(frame), &backend, doing) < 0)
		goto out;
	if (!frame[0] || !backend) {
		rc = act_call_on_target(ctx, function, NULL, value, doing);
		goto out;
	}
	if (resolve_in_world(ctx, frame, backend, &obj, doing) < 0)
		goto out;
	oid = json_string_value(json_object_get(json_object_get(obj, "object"), "objectId"));
	if (!oid) {
		rc = act_fail(ctx, "stale_ref", "%s is gone from the page: take a new snapshot",
		              ctx->target.description);
		goto out;
	}
	if (act_cdp(ctx, sid, "Runtime.callFunctionOn",
	            json_pack("{s:s, s:s, s:b}", "objectId", oid, "functionDeclaration", function,
	                      "returnByValue", 1),
	            &res, doing) < 0)
		goto out;
	exc = json_object_get(res, "exceptionDetails");
	if (exc) {
		rc = act_fail(ctx, "script_error", "failed while %s: %.300s", doing,
		              gb_or(json_string_value(json_object_get(exc, "text")), "exception"));
		goto out;
	}
	*value = json_object_get(json_object_get(res, "result"), "value");
	*value = *value ? json_incref(*value) : json_null();
	rc = 0;
out:
	json_decref(obj);
	json_decref(res);
	return rc;
}

/* One call on the page's session: a failure fails the action, or, when
 * quiet, is only returned. */
static int page_call(struct act_ctx *ctx, int quiet, const char *method, json_t *params,
                     json_t **res)
{
	struct cdp_error err;

	if (!quiet)
		return act_cdp(ctx, ctx->psid, method, params, res, "locating the iframe");
	return cdp_call(ctx->cdp, ctx->psid, method, params, act_left_ms(ctx), res, &err) < 0 ? -1
	                                                                                      : 0;
}

int act_frame_offset(struct act_ctx *ctx, const char *frame_id, int quiet, double *dx, double *dy)
{
	json_t *owner = NULL, *box = NULL;
	json_t *content;
	int rc = -1;

	*dx = *dy = 0;
	if (!frame_id || !frame_id[0])
		return 0;
	if (page_call(ctx, quiet, "DOM.getFrameOwner", json_pack("{s:s}", "frameId", frame_id),
	              &owner) < 0)
		goto out;
	if (page_call(ctx, quiet, "DOM.getBoxModel",
	              json_pack("{s:O}", "backendNodeId", json_object_get(owner, "backendNodeId")),
	              &box) < 0)
		goto out;
	content = json_object_get(json_object_get(box, "model"), "content");
	*dx = json_number_value(json_array_get(content, 0));
	*dy = json_number_value(json_array_get(content, 1));
	rc = 0;
out:
	json_decref(owner);
	json_decref(box);
	return rc;
}

static int explain_not_actionable(struct act_ctx *ctx, json_t *info)
{
	const char *e = json_string_value(json_object_get(info, "error"));
	const char *d = ctx->target.description;
	const char *ref = ctx->target.ref;

	if (!strcmp(e, "detached"))
		return act_fail(ctx, "stale_ref",
		                "%s%s is stale: the element is no longer in the page; "
		                "take a new snapshot",
		                ref[0] ? "ref " : "target ", ref[0] ? ref : d);
	if (!strcmp(e, "covered"))
		return act_fail(
		    ctx, "covered",
		    "%s is covered by %s at (%d, %d): close or remove what "
		    "is in the way first",
		    d,
		    gb_or(json_string_value(json_object_get(info, "blocker")), "another element"),
		    (int)json_number_value(json_object_get(info, "x")),
		    (int)json_number_value(json_object_get(info, "y")));
	if (!strcmp(e, "hidden"))
		return act_fail(ctx, "not_visible", "%s is not visible", d);
	if (!strcmp(e, "disabled"))
		return act_fail(ctx, "disabled", "%s is disabled", d);
	if (!strcmp(e, "not_editable"))
		return act_fail(ctx, "not_editable", "%s is not an editable field", d);
	if (!strcmp(e, "not_select"))
		return act_fail(ctx, "not_select", "%s is not a <select>", d);
	if (!strcmp(e, "unstable"))
		return act_fail(ctx, "not_stable", "%s is still moving (animating): try again", d);
	return act_fail(ctx, "not_actionable",
	                "%s is outside the page and cannot be scrolled into view", d);
}

int act_actionable(struct act_ctx *ctx, const char *kind, double *x, double *y, json_t **info)
{
	struct cdp_error err;
	uint64_t id_scroll = 0, id_quads = 0;
	json_t *quads = NULL;
	json_t *q;
	double dx = 0, dy = 0;
	int rc;

	*info = NULL;
	/* scroll, measure, check: queued together, run in this order */
	cdp_send(ctx->cdp, ctx->target.session_id, "DOM.scrollIntoViewIfNeeded",
	         json_pack("{s:s}", "objectId", ctx->target.object_id), &id_scroll);
	cdp_send(ctx->cdp, ctx->target.session_id, "DOM.getContentQuads",
	         json_pack("{s:s}", "objectId", ctx->target.object_id), &id_quads);
	rc = act_call_on_target(ctx, actionable_js, json_pack("[{s:s}]", "value", kind), info,
	                        "checking the target");
	cdp_await(ctx->cdp, id_scroll, act_left_ms(ctx), NULL, &err);
	if (cdp_await(ctx->cdp, id_quads, act_left_ms(ctx), &quads, &err) < 0)
		quads = NULL;
	if (rc < 0)
		goto out;
	if (!json_is_true(json_object_get(*info, "ok"))) {
		rc = explain_not_actionable(ctx, *info);
		goto out;
	}
	q = json_array_get(json_object_get(quads, "quads"), 0);
	if (json_array_size(q) != 8) {
		rc = act_fail(ctx, "not_visible", "%s has no box on screen",
		              ctx->target.description);
		goto out;
	}
	*x = (json_number_value(json_array_get(q, 0)) + json_number_value(json_array_get(q, 2)) +
	      json_number_value(json_array_get(q, 4)) + json_number_value(json_array_get(q, 6))) /
	     4;
	*y = (json_number_value(json_array_get(q, 1)) + json_number_value(json_array_get(q, 3)) +
	      json_number_value(json_array_get(q, 5)) + json_number_value(json_array_get(q, 7))) /
	     4;
	if (strcmp(ctx->target.session_id, ctx->psid) != 0 &&
	    act_frame_offset(ctx,
	                     act_snapshot_find(&ctx->as->refs, ctx->target.ref)
	                         ? act_snapshot_find(&ctx->as->refs, ctx->target.ref)->frame_id
	                         : NULL,
	                     0, &dx, &dy) == 0) {
		*x += dx;
		*y += dy;
	}
	{
		double minx = 1e9, miny = 1e9, maxx = -1e9, maxy = -1e9;
		int i;

		for (i = 0; i < 8; i += 2) {
			double qx = json_number_value(json_array_get(q, (size_t)i)) + dx;
			double qy = json_number_value(json_array_get(q, (size_t)i + 1)) + dy;

			minx = qx < minx ? qx : minx;
			maxx = qx > maxx ? qx : maxx;
			miny = qy < miny ? qy : miny;
			maxy = qy > maxy ? qy : maxy;
		}
		ctx->annotation.has_box = 1;
		ctx->annotation.box_x = minx;
		ctx->annotation.box_y = miny;
		ctx->annotation.box_width = maxx - minx;
		ctx->annotation.box_height = maxy - miny;
		if (strcmp(kind, "type") != 0 && strcmp(kind, "select") != 0) {
			ctx->annotation.has_point = 1;
			ctx->annotation.point_x = *x;
			ctx->annotation.point_y = *y;
		}
	}
	rc = 0;
out:
	json_decref(quads);
	return rc;
}

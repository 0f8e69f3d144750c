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

/* Asks, without waiting, for the ref's node in glassbox's isolated world
 * of its frame, when that world is known already; the call's id, or 0. */
static uint64_t ask_world_object(struct act_ctx *ctx, const struct snap_ref *ref)
{
	const char *frame = ref->frame_id[0] ? ref->frame_id
	                    : ctx->page && !strcmp(ref->session_id, ctx->psid)
	                        ? sess_page_main_frame_id(ctx->page)
	                        : NULL;
	long long context;
	uint64_t id = 0;

	if (!frame || !ref->backend_node_id)
		return 0;
	cdp_service(ctx->cdp, 0, NULL, NULL); /* a context reported dead is not used */
	context = sess_world_find(ctx->sess, ref->session_id, frame);
	if (context && cdp_send(ctx->cdp, ref->session_id, "DOM.resolveNode",
	                        json_pack("{s:i, s:I}", "backendNodeId", ref->backend_node_id,
	                                  "executionContextId", (json_int_t)context),
	                        &id) < 0)
		id = 0;
	return id;
}

/* Takes the answer to ask_world_object into ctx->target.world_object_id;
 * without one, the world is asked again when a check needs it. */
static void take_world_object(struct act_ctx *ctx, uint64_t id)
{
	struct cdp_error err;
	json_t *res = NULL;
	const char *oid;

	if (!id || cdp_await(ctx->cdp, id, act_left_ms(ctx), &res, &err) < 0)
		goto out;
	oid = json_string_value(json_object_get(json_object_get(res, "object"), "objectId"));
	if (oid)
		snprintf(ctx->target.world_object_id, sizeof(ctx->target.world_object_id), "%s",
		         oid);
out:
	json_decref(res);
}

/* The rest of ctx->target for ref (its objects are in already). */
static void note_ref_target(struct act_ctx *ctx, const struct snap_ref *ref, const char *target)
{
	snprintf(ctx->target.session_id, sizeof(ctx->target.session_id), "%s", ref->session_id);
	snprintf(ctx->target.ref, sizeof(ctx->target.ref), "%s", target);
	ctx->target.backend_node_id = ref->backend_node_id;
	snprintf(ctx->target.role, sizeof(ctx->target.role), "%s", gb_or(ref->role, ""));
	snprintf(ctx->target.name, sizeof(ctx->target.name), "%s", gb_or(ref->name, ""));
	snprintf(ctx->target.description, sizeof(ctx->target.description), "%s \"%.100s\" [%s]",
	         gb_or(ref->role, "element"), gb_or(ref->name, ""), target);
}

static int resolve_ref(struct act_ctx *ctx, const char *target)
{
	const struct snap_ref *ref = act_snapshot_find(&ctx->as->refs, target);
	struct cdp_error err;
	json_t *res = NULL;
	uint64_t world_call;
	const char *oid;
	int rc;

	if (!ref) {
		/* Playwright MCP's words first, then glassbox's */
		if (ctx->as->refs.n_refs == 0 && ctx->as->refs.n_issued == 0)
			return act_fail(ctx, "unknown_ref",
			                "Ref %s not found in the current page snapshot. Try "
			                "capturing new snapshot. No snapshot of this page was "
			                "shown yet: take one with browser_snapshot and use a ref "
			                "from it",
			                target);
		return act_fail(ctx, "stale_ref",
		                "Ref %s not found in the current page snapshot. Try capturing "
		                "new snapshot. No answer showed this ref for the page now open "
		                "(refs of a page that was left go with it)",
		                target);
	}
	if (act_prefetch_take(ctx, ref, ctx->target.object_id, sizeof(ctx->target.object_id),
	                      ctx->target.world_object_id,
	                      sizeof(ctx->target.world_object_id)) == 0) {
		note_ref_target(ctx, ref, target);
		return 0;
	}
	/* the page's object and glassbox's, in one round trip */
	world_call = ask_world_object(ctx, ref);
	rc = cdp_call(ctx->cdp, ref->session_id, "DOM.resolveNode",
	              json_pack("{s:i}", "backendNodeId", ref->backend_node_id), act_left_ms(ctx),
	              &res, &err);
	oid = json_string_value(json_object_get(json_object_get(res, "object"), "objectId"));
	if (rc < 0 || !oid) {
		if (world_call)
			cdp_forget(ctx->cdp, world_call);
		json_decref(res);
		if (rc == -CDP_ECLOSED || rc == -CDP_ECANCELLED)
			return act_connection_failed(ctx, rc, "resolving the target");
		return act_fail(ctx, "stale_ref",
		                "Ref %s not found in the current page snapshot. Try capturing "
		                "new snapshot. The element it named (%s \"%.100s\") is gone "
		                "from the page",
		                target, gb_or(ref->role, ""), gb_or(ref->name, ""));
	}
	snprintf(ctx->target.object_id, sizeof(ctx->target.object_id), "%s", oid);
	note_ref_target(ctx, ref, target);
	take_world_object(ctx, world_call);
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

/* The element found (oid, an object of glassbox's world) as the call's
 * target: its backend node and the page's own object of it, for what runs
 * in the page's world (a script on the element). 0, or -1 with the call
 * failed. */
static int take_found(struct act_ctx *ctx, const char *oid)
{
	json_t *node = NULL, *own = NULL;
	const char *own_oid;
	int backend;
	int rc = -1;

	if (act_cdp(ctx, ctx->psid, "DOM.describeNode", json_pack("{s:s}", "objectId", oid), &node,
	            "finding the target") < 0)
		goto out;
	backend = (int)json_integer_value(
	    json_object_get(json_object_get(node, "node"), "backendNodeId"));
	if (act_cdp(ctx, ctx->psid, "DOM.resolveNode", json_pack("{s:i}", "backendNodeId", backend),
	            &own, "finding the target") < 0)
		goto out;
	own_oid = json_string_value(json_object_get(json_object_get(own, "object"), "objectId"));
	if (!backend || !own_oid) {
		act_fail(ctx, "stale_ref", "the target left the page as it was found: try again");
		goto out;
	}
	snprintf(ctx->target.session_id, sizeof(ctx->target.session_id), "%s", ctx->psid);
	snprintf(ctx->target.object_id, sizeof(ctx->target.object_id), "%s", own_oid);
	snprintf(ctx->target.world_object_id, sizeof(ctx->target.world_object_id), "%s", oid);
	ctx->target.backend_node_id = backend;
	rc = 0;
out:
	json_decref(node);
	json_decref(own);
	return rc;
}

/* Resolves a CSS selector or a visible text (kind "css" / "text") to
 * exactly one element, searched in glassbox's world (a page cannot
 * redefine querySelectorAll or innerText there to point a locator at
 * another element); what names it in messages is shown. */
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
	if (act_page_world_object(ctx, expr.data ? expr.data : "", &res, "finding the target") < 0)
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
	if (take_found(ctx, oid) < 0)
		goto out;
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

const char *act_frame_session(void *user, const char *frame_id)
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
/* Takes a snapshot (the session's refs become its refs) and collects the
 * refs whose role is role and, when name is not NULL, whose name is name
 * (whitespace collapsed): the first max into refs, how many matched into
 * *n, how many of that role there are into *n_role and the first of their
 * names into others (may be NULL). Returns 0, or -1 with the action
 * failed (shown names what was looked for). */
static int match_role(struct act_ctx *ctx, const char *role, const char *name, const char *shown,
                      char (*refs)[16], size_t max, size_t *n, size_t *n_role,
                      struct gb_buf *others)
{
	struct snap_options opt = { 0 };
	struct snap_refmap *map = &ctx->as->refs;
	char want[512], got[512];
	char *yaml = NULL;
	char err[512] = "";
	int truncated = 0;
	size_t i;
	int rc = -1;

	*n = *n_role = 0;
	collapse_space(name, want, sizeof(want));
	opt.page_session_id = ctx->psid;
	opt.timeout_ms = act_left_ms(ctx);
	opt.frame_session = act_frame_session;
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
		(*n_role)++;
		collapse_space(r->name, got, sizeof(got));
		if (name && strcmp(got, want) != 0) {
			if (others && *n_role <= 8)
				gb_buf_appendf(others, "%s\"%.60s\"", others->len ? ", " : "", got);
			continue;
		}
		if (*n < max)
			snprintf(refs[*n], sizeof(refs[*n]), "%s", r->ref);
		(*n)++;
	}
	rc = 0;
out:
	free(yaml);
	return rc;
}

int act_role_refs(struct act_ctx *ctx, const char *role, const char *name, char (*refs)[16],
                  size_t max, size_t *n)
{
	size_t n_role;

	return match_role(ctx, role, name, role, refs, max, n, &n_role, NULL);
}

static int resolve_role(struct act_ctx *ctx, const char *role, const char *name, const char *shown)
{
	char want[512];
	char found[1][16];
	struct gb_buf others;
	size_t n = 0, n_role = 0;
	int rc = -1;

	gb_buf_init(&others, 1024);
	collapse_space(name, want, sizeof(want));
	if (match_role(ctx, role, name, shown, found, 1, &n, &n_role, &others) < 0)
		goto out;
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
		rc = resolve_ref(ctx, found[0]);
out:
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

	act_actionable_forget(ctx);
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
 * The checks, run on the element in its own frame, in glassbox's isolated
 * world (the page cannot redefine what they call). For typing, the field
 * is then focused and its content selected (typing replaces it).
 *
 * Stability is measured, not assumed: for a click or a hover the border
 * box is read again after the next animation frame (a timer fallback
 * where frames are throttled) and must not have moved; while it moves it
 * is read frame after frame, for at most 1.5 s. That catches CSS
 * animations and motion by script or timers alike.
 *
 * The hit test tries the centre of each of the element's client rects
 * (one per line box of a wrapped inline element, clipped to the
 * viewport), in order; the first one where the element (or something in
 * it, or a label of it) is on top is the click point, in frame-local
 * coordinates, returned with the border box measured then (bbox), from
 * which the caller maps it to the top-level viewport. "covered" names
 * what is on top of every one of those points.
 *
 * For a click, a one-shot capturing listener is then armed (window, and
 * the element's shadow root if any) that records where the first trusted
 * pointerdown or mousedown really landed; landed_js reads it back, and
 * the recorder tells it through SESS_PRESS_BINDING each time one of its
 * listeners saw the press (the window's, then the shadow root's: the last
 * word counts), so a click that replaces the document is still judged.
 */
/* desc(n): names an element for messages (tag#id "text"). */
#define DESC_JS                                                                                 \
	" const desc = (n) => { if (!n) return 'nothing'; if (n.nodeType !== 1) n = "           \
	"n.parentElement;"                                                                      \
	"  if (!n) return 'nothing'; let s = n.tagName.toLowerCase();"                          \
	"  if (n.id) s += '#' + n.id; else if (n.classList && n.classList.length) s += '.' + "  \
	"[...n.classList].join('.');"                                                           \
	"  const t = (n.innerText || n.value || '').trim().replace(/\\s+/g, ' ').slice(0, 40);" \
	"  if (t) s += ' \"' + t + '\"'; return s; };"
/* mine(n): n is el, inside it, or a label of it. */
#define MINE_JS                                                                                   \
	" const mine = (n) => { if (!n) return false; if (n.nodeType !== 1) n = n.parentElement;" \
	"  if (!n) return false; if (n === el || el.contains(n)) return true;"                    \
	"  const l = n.closest && n.closest('label'); return !!(l && l.control === el); };"

static const char actionable_head_js[] =
    "async function(kind) {"
    " const el = this.nodeType === 1 ? this : this.parentElement;" DESC_JS
    " if (!el || !el.isConnected) return { error: 'detached' };"
    " const rect = () => { const r = el.getBoundingClientRect(); return [r.left, r.top, r.width, "
    "r.height]; };"
    " const frame = () => new Promise(f => { requestAnimationFrame(() => f()); setTimeout(f, 100); "
    "});"
    " let r1 = rect();"
    " if (kind === 'click' || kind === 'hover') { const until = performance.now() + 1500;"
    "  for (;;) { await frame(); const r2 = rect(); const same = r2.every((v, i) => Math.abs(v - "
    "r1[i]) <= 0.5);"
    "   r1 = r2; if (same) break; if (!el.isConnected) return { error: 'detached' };"
    "   if (performance.now() > until) return { error: 'unstable', desc: desc(el) }; } }"
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
    "!['button','submit','reset','checkbox','radio','file','image','hidden']."
    "includes(type)) || tag === 'textarea' || el.isContentEditable;"
    "  if (!textual || el.readOnly) return { error: 'not_editable', desc: desc(el) }; }"
    " if (kind === 'select' && tag !== 'select') return { error: 'not_select', desc: desc(el) };";
static const char actionable_hit_js[] = MINE_JS
    " let point = null; const blockers = []; let bx = 0, by = 0, tried = 0;"
    " if (kind === 'click' || kind === 'hover') {"
    "  const win = el.ownerDocument.defaultView; const vw = win.innerWidth, vh = win.innerHeight;"
    "  const root = el.getRootNode(); const at = root.elementFromPoint ? root : el.ownerDocument;"
    "  for (const q of el.getClientRects()) {"
    "   const l = Math.max(q.left, 0), t = Math.max(q.top, 0), r = Math.min(q.right, vw), b = "
    "Math.min(q.bottom, vh);"
    "   if (r - l < 1 || b - t < 1) continue;"
    "   const cx = (l + r) / 2, cy = (t + b) / 2; const hit = at.elementFromPoint(cx, cy);"
    "   if (mine(hit)) { point = [cx, cy]; break; }"
    "   if (!tried++) { bx = cx; by = cy; }"
    "   const d = hit ? desc(hit) : ''; if (d && !blockers.includes(d)) blockers.push(d); }"
    "  if (!point && blockers.length) return { error: 'covered', desc: desc(el), blocker: "
    "blockers.join(' and '), x: Math.round(bx), y: Math.round(by) };"
    "  if (!point) return { error: 'offscreen', desc: desc(el) }; }";
/* The landing recorder on el (a click about to be made; landed_js reads
 * it back). */
#define LANDING_ARM_JS                                                                             \
	"  const win = el.ownerDocument.defaultView; if (win.__glassboxLanded) "                   \
	"win.__glassboxLanded.off();"                                                              \
	"  const rec = { press: { seen: false, inside: false }, click: { seen: false, inside: "    \
	"false "                                                                                   \
	"}, type: '', token: Math.random().toString(36).slice(2) };"                               \
	"  const note = (o, e) => { const path = e.composedPath(); const t = path[0] || e.target;" \
	"   o.seen = true; o.x = e.clientX; o.y = e.clientY; o.inside = o.inside || "              \
	"path.includes(el) "                                                                       \
	"|| mine(t);"                                                                              \
	"   const te = t && t.nodeType === 1 ? t : t && t.parentElement; o.hit = desc(te);"        \
	"   if (te) { const b = te.getBoundingClientRect(); o.box = [b.left, b.top, b.width, "     \
	"b.height]; } };"                                                                          \
	"  const on = (e) => { if (!e.isTrusted) return;"                                          \
	"   if (e.type === 'click') { if (!rec.click.ev || rec.click.ev === e) { rec.click.ev = "  \
	"e; "                                                                                      \
	"note(rec.click, e); } return; }"                                                          \
	"   if (rec.type && rec.type !== e.type) return; rec.type = e.type; note(rec.press, e);"   \
	"   const tell = globalThis." SESS_PRESS_BINDING ";"                                       \
	"   if (typeof tell === 'function') try { tell(JSON.stringify({ seen: true, "              \
	"inside: rec.press.inside, hit: rec.press.hit || '', x: rec.press.x, y: rec.press.y, "     \
	"box: rec.press.box || null, connected: el.isConnected, token: rec.token })); } catch "    \
	"(x) "                                                                                     \
	"{} };"                                                                                    \
	"  const where = [win]; const rn = el.getRootNode(); if (rn !== el.ownerDocument) "        \
	"where.push(rn);"                                                                          \
	"  const types = ['pointerdown', 'mousedown', 'click'];"                                   \
	"  for (const w of where) for (const ty of types) w.addEventListener(ty, on, true);"       \
	"  rec.off = () => { for (const w of where) for (const ty of types) "                      \
	"w.removeEventListener(ty, on, true); };"                                                  \
	"  win.__glassboxLanded = rec; }"

static const char actionable_arm_js[] =
    " if (kind === 'click' && !['iframe', 'frame', 'object', 'embed'].includes(tag)) "
    "{" LANDING_ARM_JS
    " if (kind === 'type') { el.focus(); if (typeof el.select === 'function' && typeof el.value "
    "=== 'string') { try { el.select(); } catch (e) {} }"
    "  else if (el.isContentEditable) { const r = el.ownerDocument.createRange(); "
    "r.selectNodeContents(el); const s = el.ownerDocument.getSelection(); s.removeAllRanges(); "
    "s.addRange(r); } }"
    " const w = el.ownerDocument.defaultView, vv = w.visualViewport;"
    " const top = w === w.top && (!vv || (vv.scale === 1 && !vv.offsetLeft && !vv.offsetTop));"
    " const inview = r1[0] >= 0 && r1[1] >= 0 && r1[0] + r1[2] <= w.innerWidth &&"
    "  r1[1] + r1[3] <= w.innerHeight;"
    " return { ok: true, desc: desc(el), tag, type, password: type === 'password', editable: "
    "!!el.isContentEditable,"
    "  autocomplete: el.getAttribute('autocomplete') || '', point, bbox: r1, top, inview, "
    "landing: kind === 'click' && !['iframe', 'frame', 'object', 'embed'].includes(tag),"
    "  token: kind === 'click' && w.__glassboxLanded ? w.__glassboxLanded.token : '' }; }";

/*
 * Reads back where the armed click landed, for phase "press" (the first
 * trusted pointerdown or mousedown) or "release" (the click event, which
 * goes where press and release have in common; the listener is then
 * removed): {seen, inside, hit, x, y, box, connected} in frame-local
 * coordinates, or null when nothing was armed.
 */
static const char landed_js[] =
    "function(phase) { const win = (this.ownerDocument || document).defaultView;"
    " const r = win.__glassboxLanded; if (!r) return null;"
    " if (phase === 'release') { r.off(); win.__glassboxLanded = null; }"
    " const o = phase === 'release' ? r.click : r.press;"
    " return { seen: o.seen, inside: o.inside, hit: o.hit || '', x: o.x, y: o.y, box: o.box || "
    "null, connected: this.isConnected }; }";

/* What is at a top-level viewport point, for naming what a click hit
 * outside the element's frame: {hit, box}. Only names; never a verdict. */
static const char at_point_js[] =
    "((x, y) => { let n = document.elementFromPoint(x, y); if (!n) return { hit: 'nothing' };"
    " let s = n.tagName.toLowerCase(); if (n.id) s += '#' + n.id; else if (n.classList.length) "
    "s += '.' + [...n.classList].join('.');"
    " const t = (n.innerText || '').trim().replace(/\\s+/g, ' ').slice(0, 40); if (t) s += ' \"' + "
    "t + '\"';"
    " const b = n.getBoundingClientRect(); return { hit: s, box: [b.left, b.top, b.width, "
    "b.height] }; })";

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
	long long context;

	*obj = NULL;
	context = act_frame_world(ctx, sid, frame, 0, doing);
	if (!context)
		return -1;
	if (cdp_call(ctx->cdp, sid, "DOM.resolveNode",
	             json_pack("{s:i, s:I}", "backendNodeId", backend, "executionContextId",
	                       (json_int_t)context),
	             act_left_ms(ctx), obj, &err) == 0)
		return 0;
	/* the world known died with its document meanwhile: the frame's own now */
	context = act_frame_world(ctx, sid, frame, 1, doing);
	if (!context)
		return -1;
	return act_cdp(ctx, sid, "DOM.resolveNode",
	               json_pack("{s:i, s:I}", "backendNodeId", backend, "executionContextId",
	                         (json_int_t)context),
	               obj, doing);
}

/*
 * The target as an object of the isolated world of its frame, into oid
 * (oidlen bytes); the page's own object when its frame is not known (a
 * target found by CSS in a frame without a ref). Resolved once per
 * target (ctx->target.world_object_id): the same node in the same world
 * for every check of the call, and gone with the world when its
 * document goes. Returns 0, or -1 with the action failed.
 */
static int isolated_object(struct act_ctx *ctx, char *oid, size_t oidlen, const char *doing)
{
	const struct snap_ref *ref =
	    ctx->target.ref[0] ? act_snapshot_find(&ctx->as->refs, ctx->target.ref) : NULL;
	json_t *obj = NULL;
	const char *got;
	char frame[64];
	int backend;
	int rc = -1;

	if (ctx->target.world_object_id[0]) {
		got = ctx->target.world_object_id;
		goto found;
	}
	if (target_frame(ctx, ref, frame, sizeof(frame), &backend, doing) < 0)
		goto out;
	if (!frame[0] || !backend) {
		got = ctx->target.object_id;
		goto found;
	}
	if (resolve_in_world(ctx, frame, backend, &obj, doing) < 0)
		goto out;
	got = json_string_value(json_object_get(json_object_get(obj, "object"), "objectId"));
	if (!got) {
		rc = act_fail(ctx, "stale_ref", "%s is gone from the page: take a new snapshot",
		              ctx->target.description);
		goto out;
	}
found:
	if (got != ctx->target.world_object_id)
		snprintf(ctx->target.world_object_id, sizeof(ctx->target.world_object_id), "%s",
		         got);
	if (oid != ctx->target.world_object_id)
		snprintf(oid, oidlen, "%s", got);
	rc = 0;
out:
	json_decref(obj);
	return rc;
}

/* Sends function to run on the object oid of the target's session
 * (arguments taken, may be NULL; returnByValue, awaitPromise): the call's
 * id, or 0 with the action failed. */
uint64_t act_target_send(struct act_ctx *ctx, const char *oid, const char *function,
                         json_t *arguments, int *rc)
{
	json_t *params;
	uint64_t id = 0;
	int sent;

	params = json_pack("{s:s, s:s, s:b, s:b}", "objectId", oid, "functionDeclaration", function,
	                   "returnByValue", 1, "awaitPromise", 1);
	if (arguments)
		json_object_set_new(params, "arguments", arguments);
	sent = cdp_send(ctx->cdp, ctx->target.session_id, "Runtime.callFunctionOn", params, &id);
	if (rc)
		*rc = sent;
	return sent < 0 ? 0 : id;
}

static uint64_t call_on_object_ask(struct act_ctx *ctx, const char *oid, const char *function,
                                   json_t *arguments, const char *doing)
{
	int rc;
	uint64_t id = act_target_send(ctx, oid, function, arguments, &rc);

	if (!id)
		act_connection_failed(ctx, rc, doing);
	return id;
}

/* The answer to call_on_object_ask (id): *value is a new reference. A
 * thrown exception fails the action. */
static int call_on_object_take(struct act_ctx *ctx, uint64_t id, json_t **value, const char *doing)
{
	json_t *res = NULL, *exc;
	int rc = -1;

	*value = NULL;
	if (act_cdp_await(ctx, id, &res, doing) < 0)
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
	json_decref(res);
	return rc;
}

/* Runs function on the object oid of the target's session (arguments
 * taken, may be NULL; returnByValue, awaitPromise); *value is a new
 * reference. A thrown exception fails the action. */
static int call_on_object(struct act_ctx *ctx, const char *oid, const char *function,
                          json_t *arguments, json_t **value, const char *doing)
{
	uint64_t id = call_on_object_ask(ctx, oid, function, arguments, doing);

	*value = NULL;
	return id ? call_on_object_take(ctx, id, value, doing) : -1;
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
	char oid[128];

	*value = NULL;
	if (isolated_object(ctx, oid, sizeof(oid), doing) < 0)
		return -1;
	return call_on_object(ctx, oid, function, NULL, value, doing);
}

uint64_t act_isolated_ask(struct act_ctx *ctx, const char *function, const char *doing)
{
	char oid[128];

	if (isolated_object(ctx, oid, sizeof(oid), doing) < 0)
		return 0;
	return call_on_object_ask(ctx, oid, function, NULL, doing);
}

int act_isolated_take(struct act_ctx *ctx, uint64_t id, json_t **value, const char *doing)
{
	return call_on_object_take(ctx, id, value, doing);
}

int act_call_isolated_args(struct act_ctx *ctx, const char *function, json_t *arguments,
                           json_t **value, const char *doing)
{
	char oid[128];

	*value = NULL;
	if (isolated_object(ctx, oid, sizeof(oid), doing) < 0) {
		json_decref(arguments);
		return -1;
	}
	return call_on_object(ctx, oid, function, arguments, value, doing);
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

/* See actions-private.h. */
int act_fail_gone(struct act_ctx *ctx)
{
	const char *ref = ctx->target.ref;

	if (ref[0])
		return act_fail(ctx, "stale_ref",
		                "Ref %s not found in the current page snapshot. Try capturing new "
		                "snapshot. The ref is stale: its element is no longer in the page",
		                ref);
	return act_fail(ctx, "stale_ref",
	                "target %s is stale: the element is no longer in the page; take a new "
	                "snapshot",
	                ctx->target.description);
}

/* How long a target that is there but not yet actionable (hidden,
 * disabled, read-only, covered, moving) is waited for, as Playwright's
 * default action timeout; never past the call's own deadline. */
#define ACTIONABLE_WAIT_MS 5000
/* The time kept after that wait for the rest of the call (its answer). */
#define ACTIONABLE_MARGIN_MS 500

/* Whether the check's error may go away by itself: the element is there
 * and may yet show, enable, become editable, come out from under another
 * or stop moving. A detached element or one of the wrong kind never will. */
static int may_become_actionable(const char *e)
{
	return !strcmp(e, "hidden") || !strcmp(e, "disabled") || !strcmp(e, "not_editable") ||
	       !strcmp(e, "covered") || !strcmp(e, "unstable");
}

/* Why the target is not actionable, as the call's error; waited_ms > 0:
 * it was waited for that long, said first in Playwright's words. */
static int explain_not_actionable(struct act_ctx *ctx, json_t *info, int waited_ms)
{
	const char *e = json_string_value(json_object_get(info, "error"));
	const char *d = ctx->target.description;
	char t[64] = "";

	if (waited_ms > 0)
		snprintf(t, sizeof(t), "Timeout %dms exceeded. ", waited_ms);

	if (!strcmp(e, "detached"))
		return act_fail_gone(ctx);
	if (!strcmp(e, "covered"))
		return act_fail(
		    ctx, "covered",
		    "%s%s is covered by %s at (%d, %d): close or remove what "
		    "is in the way first",
		    t, d,
		    gb_or(json_string_value(json_object_get(info, "blocker")), "another element"),
		    (int)json_number_value(json_object_get(info, "x")),
		    (int)json_number_value(json_object_get(info, "y")));
	if (!strcmp(e, "hidden"))
		return act_fail(ctx, "not_visible", "%s%s is not visible", t, d);
	if (!strcmp(e, "disabled"))
		return act_fail(ctx, "disabled", "%s%s is disabled", t, d);
	if (!strcmp(e, "not_editable"))
		return act_fail(ctx, "not_editable", "%s%s is not an editable field", t, d);
	if (!strcmp(e, "not_select"))
		return act_fail(ctx, "not_select", "%s is not a <select>", d);
	if (!strcmp(e, "unstable"))
		return act_fail(ctx, "not_stable", "%s%s is still moving (animating): try again", t,
		                d);
	return act_fail(ctx, "not_actionable",
	                "%s is outside the page and cannot be scrolled into view", d);
}

/* The union of the quads of a DOM.getContentQuads result: 0 with the
 * box, -1 when there is none. */
static int quads_box(json_t *quads, double *minx, double *miny, double *maxx, double *maxy)
{
	json_t *list = json_object_get(quads, "quads");
	size_t i, k;
	int any = 0;

	*minx = *miny = 1e9;
	*maxx = *maxy = -1e9;
	for (i = 0; i < json_array_size(list); i++) {
		json_t *q = json_array_get(list, i);

		if (json_array_size(q) != 8)
			continue;
		for (k = 0; k < 8; k += 2) {
			double qx = json_number_value(json_array_get(q, k));
			double qy = json_number_value(json_array_get(q, k + 1));

			*minx = qx < *minx ? qx : *minx;
			*maxx = qx > *maxx ? qx : *maxx;
			*miny = qy < *miny ? qy : *miny;
			*maxy = qy > *maxy ? qy : *maxy;
		}
		any = 1;
	}
	return any ? 0 : -1;
}

/* The actionability check's function, into fn (freed by the caller). */
static void actionable_function(struct gb_buf *fn)
{
	gb_buf_init(fn, 1 << 15);
	gb_buf_appendf(fn, "%s%s%s", actionable_head_js, actionable_hit_js, actionable_arm_js);
}

/* Scrolls the target into view and runs the actionability check on it
 * (*info: its result, new reference). 0, or -1 when the check could not
 * run (the call failed). */
static int check_actionable(struct act_ctx *ctx, const char *kind, json_t **info)
{
	struct cdp_error err;
	uint64_t id_scroll = 0;
	int rc;

	cdp_send(ctx->cdp, ctx->target.session_id, "DOM.scrollIntoViewIfNeeded",
	         json_pack("{s:s}", "objectId", ctx->target.object_id), &id_scroll);
	rc = isolated_object(ctx, ctx->target.world_object_id, sizeof(ctx->target.world_object_id),
	                     "checking the target");
	if (rc == 0) {
		struct gb_buf fn;

		actionable_function(&fn);
		rc = call_on_object(ctx, ctx->target.world_object_id, fn.data ? fn.data : "",
		                    json_pack("[{s:s}]", "value", kind), info,
		                    "checking the target");
		gb_buf_free(&fn);
	}
	cdp_await(ctx->cdp, id_scroll, act_left_ms(ctx), NULL, &err);
	return rc;
}

void act_actionable_ask(struct act_ctx *ctx, const char *kind)
{
	struct gb_buf fn;
	uint64_t id;

	if ((strcmp(kind, "click") != 0 && strcmp(kind, "hover") != 0) || !ctx->has_target ||
	    !ctx->target.world_object_id[0] || ctx->target.precheck_call)
		return;
	actionable_function(&fn);
	id = act_target_send(ctx, ctx->target.world_object_id, fn.data ? fn.data : "",
	                     json_pack("[{s:s}]", "value", kind), NULL);
	if (id) {
		ctx->target.precheck_call = id;
		snprintf(ctx->target.precheck_kind, sizeof(ctx->target.precheck_kind), "%s", kind);
	}
	gb_buf_free(&fn);
}

/* Takes away the landing recorder a click's check armed (no answer
 * awaited). */
static const char disarm_js[] =
    "function() { const w = (this.ownerDocument || document).defaultView;"
    " if (w.__glassboxLanded) { w.__glassboxLanded.off(); w.__glassboxLanded = null; } }";

void act_actionable_forget(struct act_ctx *ctx)
{
	uint64_t id;

	if (!ctx->target.precheck_call)
		return;
	cdp_forget(ctx->cdp, ctx->target.precheck_call);
	ctx->target.precheck_call = 0;
	/* never taken (the gate refused, or the call ended first): what the
	 * check armed goes, as a refused action leaves the page untouched */
	if (!strcmp(ctx->target.precheck_kind, "click") &&
	    (id = act_target_send(ctx, ctx->target.world_object_id, disarm_js, NULL, NULL)))
		cdp_forget(ctx->cdp, id);
}

/* The check asked before the gate, when it stands for one run now (see
 * act_actionable_ask): 1 with *info (new reference), else 0 (dropped). */
static int take_precheck(struct act_ctx *ctx, const char *kind, json_t **info)
{
	struct cdp_error err;
	json_t *res = NULL, *v;
	uint64_t id = ctx->target.precheck_call;
	int taken = 0;

	if (!id)
		return 0;
	ctx->target.precheck_call = 0;
	if (strcmp(kind, ctx->target.precheck_kind) != 0 || ctx->gate_asked) {
		cdp_forget(ctx->cdp, id);
		return 0;
	}
	if (cdp_await(ctx->cdp, id, act_left_ms(ctx), &res, &err) == 0 &&
	    !json_object_get(res, "exceptionDetails")) {
		v = json_object_get(json_object_get(res, "result"), "value");
		if (json_is_true(json_object_get(v, "ok")) &&
		    json_is_true(json_object_get(v, "top")) &&
		    json_is_true(json_object_get(v, "inview"))) {
			*info = json_incref(v);
			taken = 1;
		}
	}
	json_decref(res);
	return taken;
}

/*
 * The click point: the frame-local point the check chose (the centre of
 * the first client rect where the element is on top) mapped to the
 * top-level viewport. DOM.getContentQuads, read right after the check,
 * gives the element's box in the coordinates input uses (of the page, or
 * of an out-of-process frame, which then adds its iframe's offset); the
 * difference between that box and the one the check measured is the
 * frame's offset. An element of the top-level document, whose viewport is
 * not zoomed, has no offset: the box the check measured is used as is.
 */
int act_actionable(struct act_ctx *ctx, const char *kind, double *x, double *y, json_t **info)
{
	struct cdp_error err;
	int64_t wait_ms, wait_end;
	json_t *quads = NULL, *point, *bbox;
	double minx, miny, maxx, maxy;
	double dx = 0, dy = 0;
	const struct snap_ref *ref;
	int rc;

	*info = NULL;
	ctx->target.landing = 0;
	wait_ms = ctx->deadline_ms - ctx->started_ms;
	wait_ms = wait_ms < ACTIONABLE_WAIT_MS ? wait_ms : ACTIONABLE_WAIT_MS;
	wait_end = ctx->started_ms + wait_ms;
	if (wait_end > ctx->deadline_ms - ACTIONABLE_MARGIN_MS)
		wait_end = ctx->deadline_ms - ACTIONABLE_MARGIN_MS;
	for (;;) {
		const char *e;

		rc = take_precheck(ctx, kind, info) ? 0 : check_actionable(ctx, kind, info);
		if (rc < 0)
			goto out;
		if (json_is_true(json_object_get(*info, "ok")))
			break;
		e = gb_or(json_string_value(json_object_get(*info, "error")), "");
		if (!may_become_actionable(e)) {
			rc = explain_not_actionable(ctx, *info, 0);
			goto out;
		}
		if (gb_now_ms() >= wait_end) {
			rc = explain_not_actionable(ctx, *info, (int)wait_ms);
			goto out;
		}
		/* it may yet become actionable, as Playwright waits for it */
		json_decref(*info);
		*info = NULL;
		rc = cdp_service(ctx->cdp, 100, NULL, NULL);
		if (rc == -CDP_ECANCELLED) {
			rc = act_fail(ctx, "cancelled", "cancelled while waiting for %s",
			              ctx->target.description);
			goto out;
		}
		if (rc == -CDP_ECLOSED) {
			rc = act_connection_failed(ctx, rc, "waiting for the target");
			goto out;
		}
	}
	bbox = json_object_get(*info, "bbox");
	if (json_is_true(json_object_get(*info, "top")) && json_array_size(bbox) == 4) {
		/* in the top-level document, its viewport not zoomed: the box the
		 * check measured is in the coordinates input uses */
		minx = json_number_value(json_array_get(bbox, 0));
		miny = json_number_value(json_array_get(bbox, 1));
		maxx = minx + json_number_value(json_array_get(bbox, 2));
		maxy = miny + json_number_value(json_array_get(bbox, 3));
	} else if (cdp_call(ctx->cdp, ctx->target.session_id, "DOM.getContentQuads",
	                    json_pack("{s:s}", "objectId", ctx->target.object_id), act_left_ms(ctx),
	                    &quads, &err) < 0 ||
	           quads_box(quads, &minx, &miny, &maxx, &maxy) < 0) {
		rc = act_fail(ctx, "not_visible", "%s has no box on screen",
		              ctx->target.description);
		goto out;
	}
	ref = act_snapshot_find(&ctx->as->refs, ctx->target.ref);
	/* without the iframe's offset the point is off, and the landing check says so */
	if (strcmp(ctx->target.session_id, ctx->psid) != 0 &&
	    act_frame_offset(ctx, ref ? ref->frame_id : NULL, 1, &dx, &dy) < 0)
		dx = dy = 0;
	point = json_object_get(*info, "point");
	ctx->target.to_top_dx = dx;
	ctx->target.to_top_dy = dy;
	if (json_array_size(bbox) == 4) {
		ctx->target.to_top_dx += minx - json_number_value(json_array_get(bbox, 0));
		ctx->target.to_top_dy += miny - json_number_value(json_array_get(bbox, 1));
	}
	if (json_array_size(point) == 2) {
		*x = json_number_value(json_array_get(point, 0)) + ctx->target.to_top_dx;
		*y = json_number_value(json_array_get(point, 1)) + ctx->target.to_top_dy;
	} else {
		*x = (minx + maxx) / 2 + dx;
		*y = (miny + maxy) / 2 + dy;
	}
	ctx->target.landing = json_is_true(json_object_get(*info, "landing"));
	snprintf(ctx->target.landing_token, sizeof(ctx->target.landing_token), "%s",
	         gb_or(json_string_value(json_object_get(*info, "token")), ""));
	ctx->annotation.has_box = 1;
	ctx->annotation.box_x = minx + dx;
	ctx->annotation.box_y = miny + dy;
	ctx->annotation.box_width = maxx - minx;
	ctx->annotation.box_height = maxy - miny;
	if (strcmp(kind, "type") != 0 && strcmp(kind, "select") != 0) {
		ctx->annotation.has_point = 1;
		ctx->annotation.point_x = *x;
		ctx->annotation.point_y = *y;
	}
	rc = 0;
out:
	json_decref(quads);
	return rc;
}

/* Names what is at the top-level point (x, y) into hit (hitlen bytes),
 * and its box into the annotation; for a click that never reached the
 * element's frame. */
static void name_at_point(struct act_ctx *ctx, double x, double y, char *hit, size_t hitlen)
{
	struct cdp_error err;
	struct gb_buf expr;
	json_t *res = NULL, *v, *box;

	snprintf(hit, hitlen, "something outside the element's frame");
	gb_buf_init(&expr, 4096);
	gb_buf_appendf(&expr, "%s(%f, %f)", at_point_js, x, y);
	if (act_page_world_call(ctx, expr.data ? expr.data : "", act_left_ms(ctx), &res, &err) < 0)
		goto out;
	v = json_object_get(json_object_get(res, "result"), "value");
	if (json_is_string(json_object_get(v, "hit")))
		snprintf(hit, hitlen, "%s", json_string_value(json_object_get(v, "hit")));
	box = json_object_get(v, "box");
	if (json_array_size(box) == 4) {
		ctx->annotation.has_hit_box = 1;
		ctx->annotation.hit_x = json_number_value(json_array_get(box, 0));
		ctx->annotation.hit_y = json_number_value(json_array_get(box, 1));
		ctx->annotation.hit_width = json_number_value(json_array_get(box, 2));
		ctx->annotation.hit_height = json_number_value(json_array_get(box, 3));
	}
out:
	gb_buf_free(&expr);
	json_decref(res);
}

/* 1 when a dialog blocks the page: where the click landed is then not
 * read (the page answers nothing until the dialog is handled; the dialog
 * itself shows that the press reached a handler). */
static int landing_blocked(const struct act_ctx *ctx)
{
	return ctx->rec.dialog_opened || sess_page_dialog(ctx->page);
}

static const char blocked_note[] = "\n- where the click landed was not read back: a dialog "
                                   "opened";

/* Asks where the armed click landed (landed_js, for the press or the
 * release): the call's id, or 0 when it could not be sent. */
static uint64_t landing_ask(struct act_ctx *ctx, int released)
{
	return act_target_send(ctx, ctx->target.world_object_id, landed_js,
	                       json_pack("[{s:s}]", "value", released ? "release" : "press"), NULL);
}

/* The verdict on the answer to landing_ask (id; 0: never asked), or on
 * what the recorder told instead (told, borrowed; id is then dropped),
 * for a click at (x, y), as act_click_landed gives it; *note: a line for
 * the text on what could not be read ("" when none). */
static int landing_verdict(struct act_ctx *ctx, uint64_t id, json_t *told, double x, double y,
                           int released, const char **note)
{
	struct cdp_error err;
	json_t *res = NULL, *v, *box;
	char hit[256];
	int rc = 0;

	*note = "";
	ctx->target.landing = 0;
	if (told) {
		if (id)
			cdp_forget(ctx->cdp, id);
		v = told;
		goto judge;
	}
	if (!id || cdp_await(ctx->cdp, id, act_left_ms(ctx), &res, &err) < 0 ||
	    json_object_get(res, "exceptionDetails")) {
		if (sess_check_alive(ctx->sess) < 0) {
			rc = act_connection_failed(ctx, -CDP_ECLOSED,
			                           "reading where the click landed");
			goto out;
		}
		/* the document went away (a navigation the click started) */
		if (!released) {
			json_object_set_new(ctx->out, "landed", json_string("not read back"));
			*note = "\n- where the click landed was not read back: the page replaced "
			        "the document before it could be read";
		}
		goto out;
	}
	v = json_object_get(json_object_get(res, "result"), "value");
	if (!json_is_object(v)) {
		json_object_set_new(ctx->out, "landed", json_string("not read back"));
		*note = "\n- where the click landed was not read back: the element's document "
		        "changed";
		goto out;
	}
judge:
	if (released) {
		/* no click event (another button, or handlers that took the element
		 * away on the press): the press decided; else the click must be in it */
		if (!json_is_true(json_object_get(v, "seen")) ||
		    json_is_true(json_object_get(v, "inside")) ||
		    !json_is_true(json_object_get(v, "connected")))
			goto out;
	} else if (json_is_true(json_object_get(v, "inside"))) {
		json_object_set_new(ctx->out, "landed", json_string("on target"));
		ctx->target.landing = 1; /* the release is read back too */
		goto out;
	}
	if (json_is_true(json_object_get(v, "seen"))) {
		snprintf(hit, sizeof(hit), "%s",
		         gb_or(json_string_value(json_object_get(v, "hit")), "another element"));
		box = json_object_get(v, "box");
		if (json_array_size(box) == 4) {
			ctx->annotation.has_hit_box = 1;
			ctx->annotation.hit_x =
			    json_number_value(json_array_get(box, 0)) + ctx->target.to_top_dx;
			ctx->annotation.hit_y =
			    json_number_value(json_array_get(box, 1)) + ctx->target.to_top_dy;
			ctx->annotation.hit_width = json_number_value(json_array_get(box, 2));
			ctx->annotation.hit_height = json_number_value(json_array_get(box, 3));
		}
	} else {
		name_at_point(ctx, x, y, hit, sizeof(hit));
	}
	json_object_set_new(ctx->out, "landed", json_pack("{s:s}", "on", hit));
	if (released)
		rc = act_fail(ctx, "missed",
		              "the press at (%d, %d) landed on %s, but the click went to %s: the "
		              "element moved between press and release (see the screenshot); take "
		              "a new snapshot and try again",
		              (int)x, (int)y, ctx->target.description, hit);
	else
		rc = act_fail(ctx, "missed",
		              "the click at (%d, %d) landed on %s, not on %s: the element moved or "
		              "something else was on top when the click arrived (see the "
		              "screenshot); take a new snapshot and try again",
		              (int)x, (int)y, hit, ctx->target.description);
out:
	json_decref(res);
	return rc;
}

int act_click_landed(struct act_ctx *ctx, double x, double y, int released)
{
	const char *note = blocked_note;
	int rc = 0;

	if (!ctx->target.landing || !ctx->target.world_object_id[0])
		return 0;
	if (landing_blocked(ctx))
		ctx->target.landing = 0;
	else
		rc = landing_verdict(ctx, landing_ask(ctx, released), NULL, x, y, released, &note);
	gb_buf_appendf(&ctx->text, "%s", note);
	return rc;
}

/* Whether the armed click's landing can be read now: 1, else 0 (not
 * armed, or a dialog blocks the page: *note then says so). */
static int landing_readable(struct act_ctx *ctx, const char **note)
{
	*note = "";
	if (!ctx->target.landing || !ctx->target.world_object_id[0])
		return 0;
	if (!landing_blocked(ctx))
		return 1;
	*note = blocked_note;
	ctx->target.landing = 0;
	return 0;
}

/* Where the press landed as the landing recorder this click's check
 * armed told it (its token: not one an earlier action left in another
 * frame of the session), borrowed, or NULL. */
static json_t *press_told(struct act_ctx *ctx)
{
	const struct act_recorder *r = &ctx->rec;
	const char *token = json_string_value(json_object_get(r->pressed, "token"));

	if (!token || !ctx->target.landing_token[0] ||
	    strcmp(token, ctx->target.landing_token) != 0 ||
	    strcmp(r->pressed_session, ctx->target.session_id) != 0)
		return NULL;
	return r->pressed;
}

void act_click_press_ask(struct act_ctx *ctx)
{
	/* a dialog already open: act_click_release_take says so */
	ctx->target.press_call = 0;
	ctx->target.press_asked = ctx->target.landing && ctx->target.world_object_id[0];
	cdp_service(ctx->cdp, 0, NULL, NULL); /* what the recorder told, taken first */
	if (ctx->target.press_asked && !landing_blocked(ctx) && !press_told(ctx))
		ctx->target.press_call = landing_ask(ctx, 0);
}

int act_click_release_ask(struct act_ctx *ctx, double x, double y, const char *done)
{
	ctx->target.release_x = x;
	ctx->target.release_y = y;
	snprintf(ctx->target.release_done, sizeof(ctx->target.release_done), "%s", done);
	if (ctx->target.landing && ctx->target.world_object_id[0] && !landing_blocked(ctx))
		ctx->target.release_call = landing_ask(ctx, 1);
	ctx->after_settle = act_click_release_take;
	return 0;
}

void act_click_landing_forget(struct act_ctx *ctx)
{
	if (ctx->target.press_call)
		cdp_forget(ctx->cdp, ctx->target.press_call);
	if (ctx->target.release_call)
		cdp_forget(ctx->cdp, ctx->target.release_call);
	ctx->target.press_call = ctx->target.release_call = 0;
	ctx->target.press_asked = 0;
	ctx->target.release_done[0] = '\0';
}

/* cdp_service() stop condition: the reply to the call is in. */
static int reply_in(void *user)
{
	struct act_ctx *ctx = user;

	return cdp_reply_ready(ctx->cdp, ctx->target.release_call);
}

int act_click_release_take(struct act_ctx *ctx)
{
	double x = ctx->target.release_x, y = ctx->target.release_y;
	const char *press_note = "", *release_note = "";
	int rc = 0;

	if (!ctx->target.release_done[0])
		return 0;
	/* the release's read-back comes on the session after every word the
	 * recorder told of the press: the last of them is in once it is */
	if (ctx->target.release_call && !landing_blocked(ctx))
		cdp_service(ctx->cdp, act_left_ms(ctx), reply_in, ctx);
	if (ctx->target.press_asked) {
		if (landing_blocked(ctx)) {
			if (ctx->target.press_call)
				cdp_forget(ctx->cdp, ctx->target.press_call);
			press_note = blocked_note;
			ctx->target.landing = 0;
		} else {
			rc = landing_verdict(ctx, ctx->target.press_call, press_told(ctx), x, y, 0,
			                     &press_note);
		}
	}
	ctx->target.press_call = 0;
	ctx->target.press_asked = 0;
	if (rc == 0 && landing_readable(ctx, &release_note))
		rc = landing_verdict(ctx, ctx->target.release_call, NULL, x, y, 1, &release_note);
	else if (ctx->target.release_call)
		cdp_forget(ctx->cdp, ctx->target.release_call);
	ctx->target.release_call = 0;
	if (rc == 0)
		gb_buf_appendf(&ctx->text, "%s%s%s", ctx->target.release_done, press_note,
		               release_note);
	ctx->target.release_done[0] = '\0';
	return rc;
}

/* At a point: names the element (this) found there and arms the landing
 * recorder on it, as a click on it would, or (keep) leaves the one a
 * press armed in its window ({desc, tag, landing}). */
static const char point_arm_js[] =
    "function(keep) { const el = this.nodeType === 1 ? this : this.parentElement;" DESC_JS MINE_JS
    " const tag = el.tagName.toLowerCase();"
    " const landing = !['iframe', 'frame', 'object', 'embed'].includes(tag);"
    " if (landing && keep && el.ownerDocument.defaultView.__glassboxLanded) return { desc: "
    "desc(el), tag, landing };"
    " if (landing) {" LANDING_ARM_JS " return { desc: desc(el), tag, landing }; }";

int act_resolve_point(struct act_ctx *ctx, double x, double y, int arm)
{
	json_t *node = NULL, *obj = NULL, *info = NULL;
	const char *oid;
	int rc = -1;

	act_actionable_forget(ctx);
	memset(&ctx->target, 0, sizeof(ctx->target));
	ctx->has_target = 0;
	if (act_cdp(ctx, ctx->psid, "DOM.getNodeForLocation",
	            json_pack("{s:i, s:i, s:b, s:b}", "x", (int)x, "y", (int)y,
	                      "includeUserAgentShadowDOM", 0, "ignorePointerEventsNone", 1),
	            &node, "finding the element at the point") < 0)
		goto out;
	ctx->target.backend_node_id =
	    (int)json_integer_value(json_object_get(node, "backendNodeId"));
	if (act_cdp(ctx, ctx->psid, "DOM.resolveNode",
	            json_pack("{s:i}", "backendNodeId", ctx->target.backend_node_id), &obj,
	            "finding the element at the point") < 0)
		goto out;
	oid = json_string_value(json_object_get(json_object_get(obj, "object"), "objectId"));
	if (!oid) {
		rc = act_fail(ctx, "no_match",
		              "there is no element at (%d, %d): take a screenshot and use a point "
		              "inside the page",
		              (int)x, (int)y);
		goto out;
	}
	snprintf(ctx->target.session_id, sizeof(ctx->target.session_id), "%s", ctx->psid);
	snprintf(ctx->target.object_id, sizeof(ctx->target.object_id), "%s", oid);
	snprintf(ctx->target.description, sizeof(ctx->target.description),
	         "the element at (%d, %d)", (int)x, (int)y);
	ctx->has_target = 1;
	if (!arm) {
		rc = 0;
		goto out;
	}
	if (isolated_object(ctx, ctx->target.world_object_id, sizeof(ctx->target.world_object_id),
	                    "checking the element at the point") < 0 ||
	    call_on_object(ctx, ctx->target.world_object_id, point_arm_js,
	                   json_pack("[{s:b}]", "value", arm == 2), &info,
	                   "checking the element at the point") < 0)
		goto out;
	snprintf(ctx->target.description, sizeof(ctx->target.description), "%s at (%d, %d)",
	         gb_or(json_string_value(json_object_get(info, "desc")), "the element"), (int)x,
	         (int)y);
	ctx->target.landing = json_is_true(json_object_get(info, "landing"));
	ctx->annotation.has_point = 1;
	ctx->annotation.point_x = x;
	ctx->annotation.point_y = y;
	rc = 0;
out:
	json_decref(node);
	json_decref(obj);
	json_decref(info);
	return rc;
}

/* Visible as Playwright counts it: attached, a box of some size, not
 * hidden by visibility or display (here or in an ancestor). */
static const char visible_js[] =
    "function() { const el = this.nodeType === 1 ? this : this.parentElement;"
    " if (!el || !el.isConnected) return false; const r = el.getBoundingClientRect();"
    " return r.width > 0 && r.height > 0 && getComputedStyle(el).visibility !== 'hidden' &&"
    "  (!el.checkVisibility || el.checkVisibility({ visibilityProperty: true })); }";

int act_target_visible(struct act_ctx *ctx, int *visible)
{
	json_t *v = NULL;
	int rc = act_call_in_isolated_world(ctx, visible_js, &v, "checking whether it is visible");

	*visible = rc == 0 && json_is_true(v);
	json_decref(v);
	return rc;
}

int act_target_node(struct act_ctx *ctx, int *backend)
{
	char frame[64];

	if (target_frame(
	        ctx, ctx->target.ref[0] ? act_snapshot_find(&ctx->as->refs, ctx->target.ref) : NULL,
	        frame, sizeof(frame), backend, "identifying the element") < 0)
		return -1;
	ctx->target.backend_node_id = *backend;
	return 0;
}

/*
 * drag.c - a drag with the real mouse, from one point to another, and
 * what the drop target saw of it.
 *
 * Design note
 * - The gesture is a person's: the mouse moves to the start, presses,
 *   moves in steps (pointer-driven sortable lists and sliders need the
 *   intermediate moves) and releases over the end.
 * - HTML5 drag and drop: with Input.setInterceptDrags on, a drag the page
 *   starts (a dragstart it did not cancel) is handed to glassbox
 *   (Input.dragIntercepted) instead of the OS, and carried on with
 *   Input.dispatchDragEvent (dragEnter, dragOver, drop), as Playwright
 *   does in Chromium; the page sees trusted drag events.
 * - The verdict is read back from the page, never assumed: before the
 *   gesture a recorder is armed on the drop target in glassbox's isolated
 *   world (the page cannot fake what it records); after it, the drop
 *   target must have seen a trusted drop (HTML5) or the release of the
 *   button over it (pointer drags).
 */
#include "actions/actions-private.h"

#include "cdp/cdp.h"

#include <stdio.h>
#include <string.h>

/* Intermediate moves between the start and the end of a drag. */
#define DRAG_STEPS 10

/* Arms the recorder on the drop target (this): trusted dragstart anywhere
 * in its window (was an HTML5 drag started, and not cancelled?), drop and
 * dragover on the target, and the button's release over its box. */
static const char drop_arm_js[] =
    "function() { const el = this.nodeType === 1 ? this : this.parentElement;"
    " const win = el.ownerDocument.defaultView; if (win.__glassboxDrop) win.__glassboxDrop.off();"
    " const rec = { ds: null, drop: false, over: false, up: false, upInside: false, hit: '' };"
    " const within = (e) => { const r = el.getBoundingClientRect();"
    "  return e.clientX >= r.left && e.clientX <= r.right && e.clientY >= r.top && e.clientY <= "
    "r.bottom; };"
    " const name = (n) => { if (!n || n.nodeType !== 1) return ''; let s = "
    "n.tagName.toLowerCase();"
    "  if (n.id) s += '#' + n.id; const t = (n.innerText || '').trim().replace(/\\s+/g, ' "
    "').slice(0, 40);"
    "  return t ? s + ' \"' + t + '\"' : s; };"
    " const on = (e) => { if (!e.isTrusted) return; const inside = e.composedPath().includes(el);"
    "  if (e.type === 'dragstart') { if (!rec.ds) rec.ds = e; return; }"
    "  if (e.type === 'dragover' || e.type === 'dragenter') { rec.over = rec.over || inside; "
    "return; }"
    "  if (e.type === 'drop') { rec.drop = rec.drop || inside || within(e); if (!rec.drop) "
    "rec.hit = name(e.target); return; }"
    "  rec.up = true; if (inside || within(e)) rec.upInside = true; else rec.hit = "
    "name(e.target); };"
    " const types = ['dragstart', 'dragenter', 'dragover', 'drop', 'pointerup', 'mouseup'];"
    " for (const t of types) win.addEventListener(t, on, true);"
    " rec.off = () => { for (const t of types) win.removeEventListener(t, on, true); };"
    " win.__glassboxDrop = rec; return true; }";

/* Reads the recorder back (phase "final" removes it): {armed, html5,
 * drop, over, up, upInside, hit}. html5: a dragstart the page did not
 * cancel. */
static const char drop_read_js[] =
    "function(phase) { const win = (this.ownerDocument || document).defaultView;"
    " const r = win.__glassboxDrop; if (!r) return { armed: false };"
    " if (phase === 'final') { r.off(); win.__glassboxDrop = null; }"
    " return { armed: true, html5: !!(r.ds && !r.ds.defaultPrevented), drop: r.drop, over: "
    "r.over,"
    "  up: r.up, upInside: r.upInside, hit: r.hit }; }";

int act_drop_arm(struct act_ctx *ctx)
{
	json_t *v = NULL;
	int rc = act_call_in_isolated_world(ctx, drop_arm_js, &v, "watching the drop target");

	json_decref(v);
	return rc;
}

/* Reads the recorder on ctx->target; *seen is a new reference. */
static int drop_read(struct act_ctx *ctx, const char *phase, json_t **seen)
{
	return act_call_isolated_args(ctx, drop_read_js, json_pack("[{s:s}]", "value", phase), seen,
	                              "reading what the drop target saw");
}

/* One Input.dispatchDragEvent of type at (x, y) with the intercepted
 * drag's data (borrowed). */
static int drag_event(struct act_ctx *ctx, const char *type, double x, double y, json_t *data)
{
	json_t *res = NULL;
	int rc;

	act_observe_before_wait(ctx);
	rc = act_cdp(ctx, ctx->psid, "Input.dispatchDragEvent",
	             json_pack("{s:s, s:f, s:f, s:O}", "type", type, "x", x, "y", y, "data", data),
	             &res, "carrying the drag");

	json_decref(res);
	return rc;
}

int act_drag_gesture(struct act_ctx *ctx, double x0, double y0, double x1, double y1, int *html5)
{
	struct cdp_waiter *w = NULL;
	struct cdp_error err;
	json_t *ev = NULL, *data = NULL, *seen = NULL, *res = NULL;
	int decided = 0;
	int pressed = 0;
	int rc;
	int i;

	*html5 = 0;
	rc = act_cdp(ctx, ctx->psid, "Input.setInterceptDrags", json_pack("{s:b}", "enabled", 1),
	             &res, "preparing the drag");
	json_decref(res);
	res = NULL;
	if (rc < 0)
		goto out;
	rc = cdp_arm(ctx->cdp, ctx->psid, "Input.dragIntercepted", &w);
	if (rc < 0) {
		w = NULL;
		rc = act_fail(ctx, "browser_error", "cannot watch for the drag: %s",
		              cdp_strerror(rc));
		goto out;
	}
	act_ledger_running(ctx);
	rc = act_mouse_down(ctx, x0, y0, "left", 1, 0);
	if (rc < 0)
		goto out;
	pressed = 1;
	for (i = 1; i <= DRAG_STEPS && rc == 0; i++) {
		double x = x0 + (x1 - x0) * i / DRAG_STEPS;
		double y = y0 + (y1 - y0) * i / DRAG_STEPS;

		if (data) {
			rc = drag_event(ctx, "dragOver", x, y, data);
			continue;
		}
		rc = act_mouse_move_held(ctx, x, y, "left");
		if (rc < 0 || decided)
			continue;
		/* did the page start an HTML5 drag? Then it is ours to carry */
		json_decref(seen);
		seen = NULL;
		rc = drop_read(ctx, "step", &seen);
		if (rc < 0 || !json_is_true(json_object_get(seen, "html5")))
			continue;
		decided = 1;
		rc = cdp_wait_event(ctx->cdp, w, act_left_ms(ctx), &ev, &err);
		w = NULL; /* freed by the wait, whatever it returned */
		if (rc < 0) {
			rc = act_connection_failed(ctx, rc, "waiting for the page's drag to start");
			continue;
		}
		data = json_incref(json_object_get(ev, "data"));
		if (!json_is_object(data)) {
			rc = act_fail(ctx, "browser_error",
			              "the browser handed over a drag without data");
			continue;
		}
		*html5 = 1;
		rc = drag_event(ctx, "dragEnter", x, y, data);
	}
	if (rc == 0) {
		if (data)
			rc = drag_event(ctx, "drop", x1, y1, data);
		else
			rc = act_mouse_up(ctx, x1, y1, "left", 1, 0);
		pressed = 0;
	}
out:
	if (pressed && !data)
		act_mouse_up(ctx, x1, y1, "left", 1, 0); /* never leave the button held */
	if (w)
		cdp_disarm(ctx->cdp, w);
	if (cdp_is_open(ctx->cdp)) {
		cdp_call(ctx->cdp, ctx->psid, "Input.setInterceptDrags",
		         json_pack("{s:b}", "enabled", 0), act_left_ms(ctx), NULL, &err);
	}
	json_decref(ev);
	json_decref(data);
	json_decref(seen);
	return rc;
}

int act_drop_verdict(struct act_ctx *ctx, int html5)
{
	json_t *seen = NULL;
	const char *hit;
	int rc;

	rc = drop_read(ctx, "final", &seen);
	if (rc < 0)
		goto out;
	hit = gb_or(json_string_value(json_object_get(seen, "hit")), "");
	json_object_set_new(ctx->out, "drop",
	                    json_pack("{s:s, s:b, s:b}", "kind", html5 ? "html5" : "pointer",
	                              "seen",
	                              json_is_true(json_object_get(seen, "drop")) ||
	                                  json_is_true(json_object_get(seen, "upInside")),
	                              "accepted", json_is_true(json_object_get(seen, "drop"))));
	if (!json_is_true(json_object_get(seen, "armed"))) {
		rc = act_fail(ctx, "not_dropped",
		              "what %s saw could not be read back: its document changed during the "
		              "drag; take a snapshot to see the page as it is now",
		              ctx->target.description);
	} else if (html5 && !json_is_true(json_object_get(seen, "drop"))) {
		rc =
		    act_fail(ctx, "not_dropped",
		             "the page started an HTML5 drag, but %s did not take the drop%s%s (it "
		             "did not accept it in its dragover handler): drop on an element that "
		             "accepts it",
		             ctx->target.description, hit[0] ? ": it went to " : "", hit);
	} else if (!html5 && !json_is_true(json_object_get(seen, "upInside"))) {
		rc = act_fail(ctx, "not_dropped",
		              "the mouse button was released, but not over %s%s%s%s: it moved or "
		              "something was on top of it; take a new snapshot and try again",
		              ctx->target.description, hit[0] ? " (it went to " : "", hit,
		              hit[0] ? ")" : "");
	} else {
		gb_buf_appendf(&ctx->text, "\n- %s saw the %s", ctx->target.description,
		               html5 ? "drop (HTML5 drag and drop)" : "release over it");
	}
out:
	json_decref(seen);
	return rc;
}

int act_drag_onto(struct act_ctx *ctx, double x0, double y0, double x1, double y1, const char *from)
{
	int html5 = 0;
	/* the drop target is gated too: dropping onto something can be the
	 * risky part (a trash can, an "archive" column) */
	int rc = act_gate_check(ctx);

	if (rc == 0)
		rc = act_drop_arm(ctx);
	if (rc == 0)
		rc = act_drag_gesture(ctx, x0, y0, x1, y1, &html5);
	if (rc == 0) {
		gb_buf_appendf(&ctx->text, "Dragged %s onto %s", from, ctx->target.description);
		rc = act_drop_verdict(ctx, html5);
	}
	return rc;
}

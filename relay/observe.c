/*
 * observe.c - what a CDP client causes, for evidence and gates (relay.h,
 * docs/cdp.md).
 *
 * Design note
 * - Navigations are seen in the events the browser sends the client:
 *   Page.frameNavigated of a page's main frame (with the status of its
 *   last document response) is recorded, and the page is photographed at
 *   its next Page.loadEventFired: the camera (camera.c) is asked to, and
 *   takes it on a connection of its own while the client's messages flow.
 * - Input that acts on an element (mousePressed, mouseReleased,
 *   touchStart, keyDown, insertText) is held while the relay asks the
 *   page what element is at the point (or focused), then recorded with
 *   that element and, unless the tenant's policy turns cdp.gates off,
 *   classified by the tenant's risk rules (policy_risk_classify, the same
 *   rules the tools obey): held input is refused with a CDP error. An
 *   element that cannot be read while gates are on fails closed.
 * - A screenshot is kept at most every screenshot_every_s seconds of
 *   input. Typed text is never recorded: only its length.
 */
#include "relay/relay-private.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/log.h"
#include "common/util.h"
#include "policy/risk.h"

#define MOD "relay"

/* Reads the element at (x, y), or the focused one, in the page's main
 * world; never the value of a field (it may be a password). */
static const char probe_js[] =
    "(() => { const el = %s; if (!el) return null;"
    " const t = el.closest('button,a,input,select,textarea,summary,[role],label') || el;"
    " const tag = t.tagName.toLowerCase(); const type = (t.getAttribute('type') || '')"
    ".toLowerCase();"
    " const isBtn = tag === 'input' && ['submit','button','reset','image'].includes(type);"
    " const text = (tag === 'input' ? (isBtn ? t.value : '') : (t.innerText || ''))"
    ".trim().slice(0, 300);"
    " const implicit = tag === 'button' || isBtn ? 'button' : tag === 'a' && t.href ? 'link' :"
    " tag === 'input' || tag === 'textarea' ? 'textbox' : tag === 'select' ? 'combobox' : '';"
    " const form = t.form || t.closest('form');"
    " const submits = !!form && ((tag === 'button' && (t.type || 'submit') === 'submit') ||"
    " (tag === 'input' && (type === 'submit' || type === 'image')));"
    " return { tag, role: t.getAttribute('role') || implicit,"
    " name: (t.getAttribute('aria-label') || text || t.getAttribute('title') ||"
    " t.getAttribute('placeholder') || '').slice(0, 300), text,"
    " aria_label: t.getAttribute('aria-label') || '', title: t.getAttribute('title') || '',"
    " input_type: type, autocomplete: t.getAttribute('autocomplete') || '', submits,"
    " form_method: form ? (t.getAttribute('formmethod') || form.getAttribute('method') ||"
    " 'GET').toUpperCase() : '', form_action: form ? (t.formAction || form.action || '') : '',"
    " url: location.href }; })()";

/* See relay-private.h. */
struct relay_page *relay_page_by_sid(struct relay *r, const char *sid)
{
	size_t i;

	for (i = 0; sid && i < r->npages; i++)
		if (!strcmp(r->pages[i].sid, sid))
			return &r->pages[i];
	return NULL;
}

static void page_attached(struct relay *r, json_t *params)
{
	const char *sid = json_string_value(json_object_get(params, "sessionId"));
	json_t *info = json_object_get(params, "targetInfo");
	const char *type = json_string_value(json_object_get(info, "type"));
	struct relay_page *p;

	if (!sid || !type || strcmp(type, "page") || r->npages >= RELAY_MAX_PAGES ||
	    strlen(sid) >= RELAY_SID_MAX)
		return;
	p = &r->pages[r->npages++];
	memset(p, 0, sizeof(*p));
	snprintf(p->sid, sizeof(p->sid), "%s", sid);
	snprintf(p->target_id, sizeof(p->target_id), "%s",
	         gb_or(json_string_value(json_object_get(info, "targetId")), ""));
	snprintf(p->url, sizeof(p->url), "%s",
	         gb_or(json_string_value(json_object_get(info, "url")), ""));
}

static void page_detached(struct relay *r, json_t *params)
{
	struct relay_page *p =
	    relay_page_by_sid(r, json_string_value(json_object_get(params, "sessionId")));

	if (!p)
		return;
	relay_camera_forget(r->camera, p->target_id);
	*p = r->pages[--r->npages];
}

/* The events relay_observe_event reads; it ignores every other one. */
static const char *const observed[] = {
	"Target.attachedToTarget", "Target.detachedFromTarget", "Network.responseReceived",
	"Page.frameNavigated",     "Page.loadEventFired",
};

/* See relay-private.h. */
int relay_observe_wants(const char *method)
{
	size_t i;

	for (i = 0; i < sizeof(observed) / sizeof(observed[0]); i++)
		if (!strcmp(method, observed[i]))
			return 1;
	return 0;
}

/* See relay-private.h. */
void relay_observe_event(struct relay *r, const char *sid, const char *method, json_t *params)
{
	struct relay_page *p;
	json_t *frame;

	if (!strcmp(method, "Target.attachedToTarget")) {
		page_attached(r, params);
		return;
	}
	if (!strcmp(method, "Target.detachedFromTarget")) {
		page_detached(r, params);
		return;
	}
	p = relay_page_by_sid(r, sid);
	if (!p)
		return;
	if (!strcmp(method, "Network.responseReceived")) {
		if (!strcmp(gb_or(json_string_value(json_object_get(params, "type")), ""),
		            "Document") &&
		    !strcmp(gb_or(json_string_value(json_object_get(params, "frameId")), ""),
		            p->target_id))
			p->status = (int)json_integer_value(
			    json_object_get(json_object_get(params, "response"), "status"));
	} else if (!strcmp(method, "Page.frameNavigated")) {
		frame = json_object_get(params, "frame");
		if (json_object_get(frame, "parentId"))
			return;
		snprintf(p->url, sizeof(p->url), "%s",
		         gb_or(json_string_value(json_object_get(frame, "url")), ""));
		r->navigations++;
		relay_record(r, "cdp_navigation",
		             json_pack("{s:s, s:s, s:i}", "target", p->target_id, "url", p->url,
		                       "status", p->status));
		p->status = 0;
		p->shot_on_load = 1;
	} else if (!strcmp(method, "Page.loadEventFired") && p->shot_on_load) {
		p->shot_on_load = 0;
		relay_camera_request(r->camera, p->target_id, "navigation", p->url);
	}
}

/* What kind of input msg is, and its point. */
static int input_kind(json_t *msg, double *x, double *y)
{
	const char *method = json_string_value(json_object_get(msg, "method"));
	json_t *params = json_object_get(msg, "params");
	const char *type = gb_or(json_string_value(json_object_get(params, "type")), "");
	json_t *tp;

	*x = *y = 0;
	if (!strcmp(method, "Input.dispatchMouseEvent") &&
	    (!strcmp(type, "mousePressed") || !strcmp(type, "mouseReleased"))) {
		*x = json_number_value(json_object_get(params, "x"));
		*y = json_number_value(json_object_get(params, "y"));
		return RELAY_INPUT_POINTER;
	}
	if (!strcmp(method, "Input.dispatchTouchEvent") && !strcmp(type, "touchStart")) {
		tp = json_array_get(json_object_get(params, "touchPoints"), 0);
		*x = json_number_value(json_object_get(tp, "x"));
		*y = json_number_value(json_object_get(tp, "y"));
		return RELAY_INPUT_POINTER;
	}
	if (!strcmp(method, "Input.dispatchKeyEvent") &&
	    (!strcmp(type, "keyDown") || !strcmp(type, "rawKeyDown")))
		return RELAY_INPUT_KEY;
	if (!strcmp(method, "Input.insertText"))
		return RELAY_INPUT_TEXT;
	return RELAY_INPUT_NONE;
}

/* See relay-private.h. */
int relay_observe_hold_input(struct relay *r, json_t *msg, const char *raw, size_t len)
{
	const char *sid = gb_or(json_string_value(json_object_get(msg, "sessionId")), "");
	char expr[sizeof(probe_js) + 128];
	char where[96];
	double x, y;
	int kind = input_kind(msg, &x, &y);
	int64_t id;

	if (kind == RELAY_INPUT_NONE || !sid[0])
		return 0;
	if (kind == RELAY_INPUT_POINTER)
		snprintf(where, sizeof(where), "document.elementFromPoint(%.2f, %.2f)", x, y);
	else
		snprintf(where, sizeof(where), "document.activeElement");
	snprintf(expr, sizeof(expr), probe_js, where);
	id = relay_own_send(
	    r, sid, "Runtime.evaluate",
	    json_pack("{s:s, s:b, s:b}", "expression", expr, "returnByValue", 1, "silent", 1),
	    RELAY_OWN_PROBE);
	r->held.raw = id < 0 ? NULL : malloc(len ? len : 1);
	if (!r->held.raw) {
		/* the element cannot be asked for: with gates on, fail closed */
		relay_own_forget(r, id);
		if (!r->opt.gates)
			return 0;
		r->refused++;
		relay_reply_error(r, json_object_get(msg, "id"), sid, -32000,
		                  "glassbox refused this input (rule cdp.gates): the relay could "
		                  "not ask the page what element it acts on; try again");
		relay_record(r, "cdp_refused",
		             json_pack("{s:s, s:s, s:s}", "method",
		                       json_string_value(json_object_get(msg, "method")), "rule",
		                       "cdp.gates", "reason", "the element could not be probed"));
		return 1;
	}
	memcpy(r->held.raw, raw, len);
	r->held.len = len;
	r->held.msg = json_incref(msg);
	r->held.probe_id = id;
	r->held.deadline_ms = gb_now_ms() + RELAY_PROBE_TIMEOUT_MS;
	r->held.kind = kind;
	r->held.x = x;
	r->held.y = y;
	r->holding = 1;
	return 1;
}

/* j, or JSON null when it is NULL (borrowed either way). */
static json_t *or_null(json_t *j)
{
	return j ? j : json_null();
}

static void release_held(struct relay *r)
{
	json_decref(r->held.msg);
	free(r->held.raw);
	memset(&r->held, 0, sizeof(r->held));
	r->holding = 0;
}

/* The held input as a record's body: kind, point, element (never text). */
static json_t *input_body(struct relay *r, json_t *el)
{
	json_t *params = json_object_get(r->held.msg, "params");
	const char *type = json_string_value(json_object_get(params, "type"));
	const char *key = json_string_value(json_object_get(params, "key"));
	json_t *b =
	    json_pack("{s:s}", "method", json_string_value(json_object_get(r->held.msg, "method")));

	if (!b)
		return NULL;
	if (type)
		json_object_set_new(b, "kind", json_string(type));
	if (r->held.kind == RELAY_INPUT_POINTER)
		json_object_set_new(b, "point", json_pack("[f, f]", r->held.x, r->held.y));
	if (r->held.kind == RELAY_INPUT_KEY)
		json_object_set_new(b, "key",
		                    json_string(key && strlen(key) > 1 ? key : "[character]"));
	if (r->held.kind == RELAY_INPUT_TEXT)
		json_object_set_new(b, "length",
		                    json_integer((json_int_t)strlen(gb_or(
		                        json_string_value(json_object_get(params, "text")), ""))));
	json_object_set_new(b, "element",
	                    json_is_object(el)
	                        ? json_pack("{s:O, s:O, s:O}", "tag",
	                                    or_null(json_object_get(el, "tag")), "role",
	                                    or_null(json_object_get(el, "role")), "name",
	                                    or_null(json_object_get(el, "name")))
	                        : json_null());
	return b;
}

static const char *el_str(json_t *el, const char *key)
{
	const char *s = json_string_value(json_object_get(el, key));

	return s && s[0] ? s : NULL;
}

/* The risk rules' decision on the held input at el; 0 allowed. */
static int gate(struct relay *r, json_t *el, struct policy_risk_decision *d)
{
	struct policy_action_facts f;
	json_t *params = json_object_get(r->held.msg, "params");
	const char *key = json_string_value(json_object_get(params, "key"));

	memset(&f, 0, sizeof(f));
	memset(d, 0, sizeof(*d));
	f.kind = r->held.kind == RELAY_INPUT_POINTER ? POLICY_ACT_CLICK
	         : r->held.kind == RELAY_INPUT_KEY   ? POLICY_ACT_PRESS
	                                             : POLICY_ACT_TYPE;
	f.session_id = r->endpoint;
	f.page_url = el_str(el, "url");
	f.role = el_str(el, "role");
	f.name = el_str(el, "name");
	f.text = el_str(el, "text");
	f.aria_label = el_str(el, "aria_label");
	f.title = el_str(el, "title");
	f.tag = el_str(el, "tag");
	f.input_type = el_str(el, "input_type");
	f.autocomplete = el_str(el, "autocomplete");
	f.form_method = el_str(el, "form_method");
	f.form_action = el_str(el, "form_action");
	f.is_destructive_form = f.form_method && !strcmp(f.form_method, "DELETE");
	f.key = key;
	f.submits_form = json_is_true(json_object_get(el, "submits")) &&
	                 (f.kind == POLICY_ACT_CLICK || (key && !strcmp(key, "Enter")));
	if (!r->opt.risk || policy_risk_classify(r->opt.risk, &f, d) < 0)
		return 0;
	return d->verdict != POLICY_RISK_ALLOW;
}

/* Refuses the held input with msg; the record says why. */
static void refuse_held(struct relay *r, const char *rule, const char *msg, json_t *el)
{
	json_t *body = input_body(r, el);

	r->refused++;
	relay_reply_error(r, json_object_get(r->held.msg, "id"),
	                  json_string_value(json_object_get(r->held.msg, "sessionId")), -32000,
	                  msg);
	if (body) {
		json_object_set_new(body, "rule", json_string(rule));
		json_object_set_new(body, "reason", json_string(msg));
	}
	relay_record(r, "cdp_refused", body);
	release_held(r);
}

/* Forwards the held input, records it, and photographs the page when
 * screenshot_every_s have passed since the last screenshot. */
static void pass_held(struct relay *r, json_t *el)
{
	struct relay_page *p =
	    relay_page_by_sid(r, json_string_value(json_object_get(r->held.msg, "sessionId")));
	int64_t now = gb_now_ms();

	r->inputs++;
	relay_record(r, "cdp_input", input_body(r, el));
	relay_forward(r, r->held.msg, r->held.raw, r->held.len);
	if (p && now - r->last_shot_ms >= (int64_t)r->opt.screenshot_every_s * 1000) {
		r->last_shot_ms = now;
		relay_camera_request(r->camera, p->target_id, "input", p->url);
	}
	release_held(r);
}

static void probe_answered(struct relay *r, json_t *reply)
{
	json_t *res = json_object_get(json_object_get(reply, "result"), "result");
	json_t *el = json_object_get(res, "value");
	const char *err =
	    json_string_value(json_object_get(json_object_get(reply, "error"), "message"));
	struct policy_risk_decision d;
	char msg[POLICY_RISK_SUMMARY_MAX + 512];

	if (!r->opt.gates) {
		pass_held(r, json_is_object(el) ? el : NULL);
		return;
	}
	if (err || json_object_get(json_object_get(reply, "result"), "exceptionDetails")) {
		snprintf(msg, sizeof(msg),
		         "glassbox refused this input (rule cdp.gates): the element it acts on "
		         "could not be read (%.200s); try again once the page has loaded",
		         err ? err : "the page threw");
		refuse_held(r, "cdp.gates", msg, NULL);
		return;
	}
	if (json_is_object(el) && gate(r, el, &d)) {
		snprintf(msg, sizeof(msg),
		         "glassbox refused this input (rule cdp.gates, risk rule %s): %s needs a "
		         "person's approval, which a CDP client cannot ask for; do it with the "
		         "browser_* tools, or set cdp.gates to \"off\" in the tenant's policy",
		         d.rule, d.summary);
		refuse_held(r, d.rule, msg, el);
		return;
	}
	pass_held(r, json_is_object(el) ? el : NULL);
}

/* See relay-private.h. */
void relay_observe_own_reply(struct relay *r, const struct relay_own *own, json_t *reply)
{
	if (own->kind == RELAY_OWN_PROBE && r->holding && r->held.probe_id == own->id)
		probe_answered(r, reply);
}

/* See relay-private.h. */
void relay_observe_probe_timeout(struct relay *r)
{
	/* a late answer is dropped, and its slot does not stay taken */
	relay_own_forget(r, r->held.probe_id);
	if (!r->opt.gates) {
		pass_held(r, NULL);
		return;
	}
	refuse_held(r, "cdp.gates",
	            "glassbox refused this input (rule cdp.gates): the page did not say what "
	            "element it acts on in time (a dialog may be open); try again",
	            NULL);
}

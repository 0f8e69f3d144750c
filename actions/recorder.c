/*
 * recorder.c - what the page did while an action ran (responses, failed
 * requests, dialogs, console errors, main-frame navigation), and the
 * settle step that waits, bounded, for what the action started.
 *
 * Settling: the browser reports a page's network events on the same
 * session, in order, before the reply to a later command on it. So after
 * the input, one round trip into the page that first lets its queued
 * tasks run (setTimeout 0) guarantees that every request the action's
 * handlers started has been reported. We then wait for the navigation to
 * load and the requests in flight to finish, and repeat the round trip
 * until one finds nothing new: the handlers that consumed the responses
 * have run, and anything they started in turn is caught as well.
 */
#include "actions/actions-private.h"
#include "actions/pagelog.h"

#include "cdp/cdp.h"
#include "common/log.h"
#include "sessions/sessions.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SETTLE_NAV_MS 30000
/* after the main document's DOMContentLoaded, how long its load (images,
 * frames, subresources the action did not start) is waited for */
#define SETTLE_AFTER_DCL_MS 2000
#define PENDING_REPORTED 20
#define SETTLE_REQUESTS_MS 3000 /* all requests an action started, after any navigation */
#define OBSERVE_RESERVE_MS 2000 /* left for post-observe and evidence after settling */
#define SETTLE_ROUNDS 8
#define RECORD_MAX 200

static void append_bounded(json_t *arr, json_t *item)
{
	if (json_array_size(arr) < RECORD_MAX)
		json_array_append_new(arr, item);
	else
		json_decref(item);
}

static int is_main_frame(struct act_recorder *r, json_t *params)
{
	const char *fid = json_string_value(json_object_get(params, "frameId"));

	return fid && !strcmp(fid, r->main_frame_id);
}

/* icon: the request is the browser's fetch of the site's icon. */
static void on_network(struct act_recorder *r, const char *method, json_t *params, int icon)
{
	const char *rid = json_string_value(json_object_get(params, "requestId"));
	json_t *req;

	if (!rid)
		return;
	if (!strcmp(method, "Network.requestWillBeSent")) {
		json_t *redirect = json_object_get(params, "redirectResponse");
		json_t *request = json_object_get(params, "request");
		const char *type = json_string_value(json_object_get(params, "type"));

		if (redirect) {
			req = json_object_get(r->inflight, rid);
			append_bounded(
			    r->responses,
			    json_pack(
			        "{s:s?, s:s?, s:I, s:s?}", "url",
			        json_string_value(json_object_get(redirect, "url")), "method",
			        json_string_value(json_object_get(req, "method")), "status",
			        (json_int_t)json_number_value(json_object_get(redirect, "status")),
			        "type", json_string_value(json_object_get(params, "type"))));
		}
		/* streams that stay open by design are not waited for */
		if (type && (!strcmp(type, "EventSource") || !strcmp(type, "WebSocket"))) {
			r->events++;
			return;
		}
		/* a subresource requested while the main frame loads (an image, a
		 * font, a script) belongs to that load, not to what the action
		 * started; a fetch or XHR of the page's scripts is still waited for
		 * (the data a page loads on start). The site's icon, which the
		 * browser fetches once a page has loaded, is no page's: not waited
		 * for either (it took 20-120 ms after each navigation's load) */
		json_object_set_new(
		    r->inflight, rid,
		    json_pack("{s:s?, s:s?, s:s?, s:b, s:b}", "url",
		              json_string_value(json_object_get(request, "url")), "method",
		              json_string_value(json_object_get(request, "method")), "type",
		              json_string_value(json_object_get(params, "type")), "load",
		              (r->navigating &&
		               !(type && (!strcmp(type, "XHR") || !strcmp(type, "Fetch")))) ||
		                  icon,
		              "icon", icon));
		r->events++;
	} else if (!strcmp(method, "Network.responseReceived")) {
		json_t *resp = json_object_get(params, "response");
		const char *type = json_string_value(json_object_get(params, "type"));
		int status = (int)json_number_value(json_object_get(resp, "status"));

		req = json_object_get(r->inflight, rid);
		if (req)
			json_object_set_new(req, "status", json_integer(status));
		append_bounded(r->responses,
		               json_pack("{s:s?, s:s?, s:i, s:s?}", "url",
		                         json_string_value(json_object_get(resp, "url")), "method",
		                         json_string_value(json_object_get(req, "method")),
		                         "status", status, "type", type));
		if (type && !strcmp(type, "Document") && is_main_frame(r, params))
			r->main_status = status;
		r->events++;
	} else if (!strcmp(method, "Network.loadingFinished")) {
		json_object_del(r->inflight, rid);
		r->events++;
	} else if (!strcmp(method, "Network.loadingFailed")) {
		const char *error = json_string_value(json_object_get(params, "errorText"));

		req = json_object_get(r->inflight, rid);
		/* a response came and the browser dropped the body on purpose (a
		 * navigation answered 204 or turned into a download): not a failure */
		if (req && json_object_get(req, "status") && error &&
		    !strcmp(error, "net::ERR_ABORTED")) {
			json_object_del(r->inflight, rid);
			r->events++;
			return;
		}
		append_bounded(r->failed,
		               json_pack("{s:s?, s:s?, s:s?}", "url",
		                         json_string_value(json_object_get(req, "url")), "method",
		                         json_string_value(json_object_get(req, "method")), "error",
		                         json_string_value(json_object_get(params, "errorText"))));
		json_object_del(r->inflight, rid);
		r->events++;
	}
}

/* The network events of a request, recorded; those of the site's icon
 * are not counted as the page's activity (settling would go round once
 * more for a request no page made). */
static void on_request_event(struct act_recorder *r, const char *method, json_t *params)
{
	const char *rid = json_string_value(json_object_get(params, "requestId"));
	json_t *known = rid ? json_object_get(r->inflight, rid) : NULL;
	int icon =
	    known ? json_is_true(json_object_get(known, "icon"))
	          : !strcmp(method, "Network.requestWillBeSent") && act_request_is_favicon(params);
	unsigned events = r->events;

	on_network(r, method, params, icon);
	if (icon)
		r->events = events;
}

static void on_page(struct act_recorder *r, const char *method, json_t *params)
{
	if (!strcmp(method, "Page.frameRequestedNavigation") ||
	    !strcmp(method, "Page.frameStartedLoading")) {
		if (is_main_frame(r, params)) {
			r->navigating = 1;
			r->load_fired = 0;
			r->dcl_at_ms = 0;
			r->events++;
		}
	} else if (!strcmp(method, "Page.frameNavigated")) {
		json_t *frame = json_object_get(params, "frame");

		if (!json_object_get(frame, "parentId")) {
			/* a new document: whatever loaded before it, its own load is
			 * still to come, and it is read only after that */
			r->navigated = 1;
			r->navigating = 1;
			r->load_fired = 0;
			r->dcl_at_ms = 0;
			r->events++;
		}
	} else if (!strcmp(method, "Page.domContentEventFired")) {
		if (r->navigating && !r->dcl_at_ms) {
			r->dcl_at_ms = gb_now_ms();
			r->events++;
		}
	} else if (!strcmp(method, "Page.loadEventFired")) {
		r->load_fired = 1;
		r->navigating = 0;
		r->events++;
	} else if (!strcmp(method, "Page.frameStoppedLoading")) {
		if (is_main_frame(r, params) && r->navigating) {
			r->navigating = 0;
			r->events++;
		}
	} else if (!strcmp(method, "Page.navigatedWithinDocument")) {
		if (is_main_frame(r, params))
			r->events++;
	} else if (!strcmp(method, "Page.javascriptDialogOpening")) {
		append_bounded(r->dialogs,
		               json_pack("{s:s?, s:s?}", "type",
		                         json_string_value(json_object_get(params, "type")),
		                         "message",
		                         json_string_value(json_object_get(params, "message"))));
		r->dialog_opened = 1;
		r->events++;
	}
}

static void on_runtime(struct act_recorder *r, const char *method, json_t *params)
{
	char line[600];

	if (!strcmp(method, "Runtime.exceptionThrown")) {
		json_t *d = json_object_get(params, "exceptionDetails");
		const char *desc = json_string_value(
		    json_object_get(json_object_get(d, "exception"), "description"));

		snprintf(line, sizeof(line), "%.500s",
		         desc ? desc
		              : gb_or(json_string_value(json_object_get(d, "text")), "exception"));
		append_bounded(r->console_errors, json_string(line));
	} else if (!strcmp(method, "Runtime.consoleAPICalled")) {
		const char *type = json_string_value(json_object_get(params, "type"));
		json_t *arg0 = json_array_get(json_object_get(params, "args"), 0);
		const char *val = json_string_value(json_object_get(arg0, "value"));

		if (!type || strcmp(type, "error") != 0)
			return;
		if (!val)
			val = json_string_value(json_object_get(arg0, "description"));
		snprintf(line, sizeof(line), "%.500s", val ? val : "console.error");
		append_bounded(r->console_errors, json_string(line));
	}
}

/* The press a landing recorder told (Runtime.bindingCalled of
 * SESS_PRESS_BINDING, which only glassbox's isolated world has). */
static void on_pressed(struct act_recorder *r, const char *session_id, json_t *params)
{
	const char *name = json_string_value(json_object_get(params, "name"));
	const char *payload = json_string_value(json_object_get(params, "payload"));
	json_t *v;

	if (!name || strcmp(name, SESS_PRESS_BINDING) != 0 || !payload || !session_id)
		return;
	v = json_loads(payload, 0, NULL);
	if (!json_is_object(v)) {
		json_decref(v);
		return;
	}
	json_decref(r->pressed);
	r->pressed = v;
	snprintf(r->pressed_session, sizeof(r->pressed_session), "%s", session_id);
}

static void on_event(void *user, const char *session_id, const char *method, json_t *params)
{
	struct act_recorder *r = user;

	if (!strcmp(method, "Runtime.bindingCalled"))
		on_pressed(r, session_id, params);
	else if (!strncmp(method, "Network.", 8))
		on_request_event(r, method, params);
	else if (!session_id || strcmp(session_id, r->page_session) != 0)
		return; /* page-level events of other tabs are not this action's */
	else if (!strncmp(method, "Page.", 5))
		on_page(r, method, params);
	else if (!strncmp(method, "Runtime.", 8))
		on_runtime(r, method, params);
}

int act_recorder_start(struct act_recorder *r, struct cdp_conn *cdp, const char *page_session,
                       const char *main_frame_id)
{
	memset(r, 0, sizeof(*r));
	r->cdp = cdp;
	r->page_session = page_session;
	snprintf(r->main_frame_id, sizeof(r->main_frame_id), "%s", main_frame_id);
	r->responses = json_array();
	r->failed = json_array();
	r->dialogs = json_array();
	r->console_errors = json_array();
	r->inflight = json_object();
	r->listener = cdp_on(cdp, NULL, NULL, on_event, r);
	return r->listener > 0 ? 0 : -1;
}

void act_recorder_follow(struct act_recorder *r, const char *page_session,
                         const char *main_frame_id)
{
	if (r->listener <= 0)
		return;
	r->page_session = page_session;
	snprintf(r->main_frame_id, sizeof(r->main_frame_id), "%s", main_frame_id);
}

void act_recorder_stop(struct act_recorder *r)
{
	if (r->cdp && r->listener > 0)
		cdp_off(r->cdp, r->listener);
	r->listener = 0;
	json_decref(r->responses);
	json_decref(r->failed);
	json_decref(r->dialogs);
	json_decref(r->console_errors);
	json_decref(r->inflight);
	json_decref(r->pressed);
	memset(r, 0, sizeof(*r));
}

struct quiet_wait {
	struct act_recorder *r;
};

/* Requests in flight the settle step waits for: once the main frame has
 * loaded (or its bound after DOMContentLoaded passed), not the ones its
 * load made. */
static size_t awaited_requests(struct act_recorder *r)
{
	const char *rid;
	json_t *req;
	size_t n = 0;

	json_object_foreach(r->inflight, rid, req)
	{
		if (!json_is_true(json_object_get(req, "load")))
			n++;
	}
	return n;
}

static int is_quiet(void *user)
{
	struct act_recorder *r = user;

	return r->dialog_opened || (!r->navigating && awaited_requests(r) == 0);
}

/* cdp_service() stop condition of one wait: quiet, or DOMContentLoaded
 * came during it (the wait's bound is then that event's, set anew). */
struct settle_wait {
	struct act_recorder *r;
	int had_dcl;
};

static int wait_done(void *user)
{
	struct settle_wait *w = user;

	return is_quiet(w->r) || (w->r->navigating && w->r->dcl_at_ms && !w->had_dcl);
}

/* settle_timeout, with the requests still in flight (bounded), in the
 * result and one line of the text. */
static void report_pending(struct act_ctx *ctx, const char *why)
{
	struct act_recorder *r = &ctx->rec;
	json_t *list = json_array();
	const char *rid;
	json_t *req;
	size_t n = json_object_size(r->inflight);

	json_object_foreach(r->inflight, rid, req)
	{
		if (json_array_size(list) >= PENDING_REPORTED)
			break;
		json_array_append_new(
		    list,
		    json_pack("{s:s?, s:s?}", "url", json_string_value(json_object_get(req, "url")),
		              "type", json_string_value(json_object_get(req, "type"))));
	}
	json_object_set_new(ctx->out, "settle_timeout", json_true());
	json_object_set_new(ctx->out, "pending_requests", json_integer((json_int_t)n));
	json_object_set_new(ctx->out, "pending", list);
	gb_buf_appendf(
	    &ctx->text, "\n- settle: %s; %zu request%s still pending%s%.200s%s", why, n,
	    n == 1 ? "" : "s", n ? " (" : "",
	    n ? gb_or(json_string_value(json_object_get(json_array_get(list, 0), "url")), "") : "",
	    n > 1 ? ", ...)"
	    : n   ? ")"
	          : "");
}

char *act_settle_read_expression(const char *observe)
{
	char *js = NULL;

	if (!observe ||
	    asprintf(&js, "new Promise(r => setTimeout(r, 0)).then(() => %s)", observe) < 0)
		return NULL;
	return js;
}

/* One round trip into the page after its queued tasks ran, in
 * glassbox's world (a page cannot stall it by redefining setTimeout),
 * which re-reads the page then (observe): into ctx->settled_view, NULL
 * when the read threw or the expression could not be made. */
static int page_round_trip(struct act_ctx *ctx, const char *observe)
{
	struct cdp_error err;
	json_t *res = NULL;
	char *js = act_settle_read_expression(observe);
	int rc;

	json_decref(ctx->settled_view);
	ctx->settled_view = NULL;
	rc = act_page_world_call(ctx, js ? js : "new Promise(r => setTimeout(r, 0))",
	                         act_left_ms(ctx) < 2000 ? act_left_ms(ctx) : 2000, &res, &err);
	if (rc == 0 && js && !json_object_get(res, "exceptionDetails")) {
		ctx->settled_view = json_object_get(json_object_get(res, "result"), "value");
		if (!json_is_object(ctx->settled_view))
			ctx->settled_view = NULL;
		json_incref(ctx->settled_view);
	}
	free(js);
	json_decref(res);
	return rc;
}

void act_settle_offer(struct act_ctx *ctx, uint64_t call, unsigned events_before)
{
	if (ctx->offered_call)
		cdp_forget(ctx->cdp, ctx->offered_call);
	ctx->offered_call = call;
	ctx->offered_events = events_before;
}

/* cdp_service's stop: the offered re-read is in, or a dialog blocks the
 * page (which then answers nothing). */
static int offered_or_dialog(void *user)
{
	struct act_ctx *ctx = user;

	return cdp_reply_ready(ctx->cdp, ctx->offered_call) || ctx->rec.dialog_opened;
}

/* Takes the offered re-read as settling's last round trip when nothing
 * happened on the page since the script began: 1, else 0 (dropped). */
static int take_offered(struct act_ctx *ctx, int navigation_expected)
{
	struct act_recorder *r = &ctx->rec;
	struct cdp_error err;
	json_t *res = NULL;
	json_t *view;
	uint64_t id = ctx->offered_call;
	int taken = 0;

	if (!id)
		return 0;
	if (!navigation_expected && !offered_or_dialog(ctx))
		cdp_service(ctx->cdp, act_left_ms(ctx) < 2000 ? act_left_ms(ctx) : 2000,
		            offered_or_dialog, ctx);
	ctx->offered_call = 0;
	if (navigation_expected || r->dialog_opened || r->events != ctx->offered_events ||
	    !is_quiet(r) || !cdp_reply_ready(ctx->cdp, id)) {
		cdp_forget(ctx->cdp, id);
		return 0;
	}
	if (cdp_await(ctx->cdp, id, 0, &res, &err) < 0 || json_object_get(res, "exceptionDetails"))
		goto out;
	view = json_object_get(json_object_get(res, "result"), "value");
	if (!json_is_object(view))
		goto out;
	json_decref(ctx->settled_view);
	ctx->settled_view = json_incref(view);
	taken = 1;
out:
	json_decref(res);
	return taken;
}

int act_settle(struct act_ctx *ctx, int navigation_expected)
{
	act_step(ctx, ACT_STEP_SETTLE);
	struct act_recorder *r = &ctx->rec;
	int64_t nav_deadline = gb_now_ms() + SETTLE_NAV_MS;
	int64_t req_deadline = gb_now_ms() + SETTLE_REQUESTS_MS;
	char *observe = act_observe_expression(ctx);
	int settled = take_offered(ctx, navigation_expected);
	int loaded = 0;
	int round;
	int rc = 0;

	if (navigation_expected && !r->load_fired)
		r->navigating = 1;
	for (round = 0; !settled && round < SETTLE_ROUNDS; round++) {
		unsigned seen;
		int64_t limit;
		int64_t left;

		/* requests get their own bounded time once the navigation loaded */
		if (!r->navigating && r->load_fired && !loaded) {
			req_deadline = gb_now_ms() + SETTLE_REQUESTS_MS;
			loaded = 1;
		}
		limit = r->navigating ? nav_deadline : req_deadline;
		if (r->navigating && r->dcl_at_ms && r->dcl_at_ms + SETTLE_AFTER_DCL_MS < limit)
			limit = r->dcl_at_ms + SETTLE_AFTER_DCL_MS;
		left = limit - gb_now_ms();
		if (r->dialog_opened)
			break; /* the page is blocked until the dialog is handled */
		if (left > act_left_ms(ctx) - OBSERVE_RESERVE_MS)
			left = act_left_ms(ctx) - OBSERVE_RESERVE_MS;
		if (r->navigating && r->dcl_at_ms && left <= 0) {
			/* the document is there; its load waits on subresources the
			 * action did not start (an image that never comes): not waited for */
			report_pending(ctx, "the page's load did not end within 2 s of its "
			                    "DOMContentLoaded");
			r->navigating = 0;
			req_deadline = gb_now_ms() + SETTLE_REQUESTS_MS;
			loaded = 1;
			continue;
		}
		if (left <= 0) {
			report_pending(ctx, "the wait for the page ended at its bound");
			break;
		}
		if (!is_quiet(r)) {
			struct settle_wait w = { r, r->dcl_at_ms != 0 };

			rc = cdp_service(ctx->cdp, (int)(left > 0 ? left : 1), wait_done, &w);
			if (rc == -CDP_ECANCELLED || rc == -CDP_ECLOSED)
				break;
			if (rc == -CDP_ETIMEOUT && r->navigating && r->dcl_at_ms)
				continue; /* the bound after DOMContentLoaded: handled above */
			if (rc == -CDP_ETIMEOUT) {
				/* a long poll, an unread body or a stuck load: report, do not fail */
				report_pending(
				    ctx, "the page was still busy when the bounded wait ended");
				rc = 0;
				break;
			}
			if (!is_quiet(r))
				continue; /* DOMContentLoaded came: wait again, to its bound */
		}
		if (r->dialog_opened)
			break;
		seen = r->events;
		rc = page_round_trip(ctx, observe);
		if (rc < 0) {
			/* a navigation may have replaced the context; keep settling */
			if (rc == -CDP_ECLOSED || rc == -CDP_ECANCELLED)
				break;
			rc = 0;
			continue;
		}
		if (r->events == seen && is_quiet(r)) {
			settled = 1;
			break;
		}
	}
	free(observe);
	/* the page as the last round trip read it holds only if that trip
	 * ended the settling: nothing happened after it */
	if (!settled) {
		json_decref(ctx->settled_view);
		ctx->settled_view = NULL;
	}
	snprintf(ctx->settled_target, sizeof(ctx->settled_target), "%s",
	         ctx->page ? gb_or(sess_page_target_id(ctx->page), "") : "");
	ctx->settled_events = r->events;
	if (rc == -CDP_ECANCELLED)
		return act_fail(ctx, "cancelled", "cancelled while waiting for the page to settle");
	if (rc == -CDP_ECLOSED)
		return act_connection_failed(ctx, rc, "the page settled");
	return 0;
}

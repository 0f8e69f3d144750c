/*
 * pipeline.c - the one chain every tool call runs through:
 *
 *   resolve -> gate -> pre-observe -> execute -> settle -> post-observe
 *   -> record -> observation
 *
 * A tool file only supplies its gate and its execution; this file makes
 * sure the browser is there, the page is usable, the target resolves,
 * policy is asked, what happened is recorded and verified, evidence is
 * kept, and the result has the same shape for every tool. No tool can
 * skip a step.
 */
#include "actions/actions-private.h"
#include "actions/files-private.h"
#include "actions/pagelog.h"

#include "cdp/cdp.h"
#include "common/log.h"
#include "common/metrics.h"
#include "sessions/sessions.h"
#include "evidence/audit.h"
#include "profiles/profiles.h"
#include "verify/verify.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int act_fail(struct act_ctx *ctx, const char *code, const char *fmt, ...)
{
	va_list ap;

	if (ctx->failed)
		return -1; /* keep the first, most precise reason */
	ctx->failed = 1;
	snprintf(ctx->error_code, sizeof(ctx->error_code), "%s", code);
	va_start(ap, fmt);
	vsnprintf(ctx->error, sizeof(ctx->error), fmt, ap);
	va_end(ap);
	return -1;
}

int act_fail_timeout(struct act_ctx *ctx, const char *fmt, ...)
{
	char detail[sizeof(ctx->error)];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(detail, sizeof(detail), fmt, ap);
	va_end(ap);
	return act_fail(ctx, "timeout", "Timeout %lldms exceeded. %s",
	                (long long)(ctx->deadline_ms - ctx->started_ms), detail);
}

int act_left_ms(const struct act_ctx *ctx)
{
	int64_t left = ctx->deadline_ms - gb_now_ms();

	return left > 1 ? (int)left : 1;
}

/* What happens after a crash, for the error: the next call starts a new
 * browser; a profile that was open is not sealed. */
static void after_crash(const struct act_session *as, char *buf, size_t len)
{
	if (as->profile)
		snprintf(
		    buf, len,
		    "profile %s was not sealed: version %lld is kept. The next call "
		    "starts a new browser without it: open the profile again with browser_session",
		    prof_lease_info(as->profile)->name,
		    (long long)prof_lease_info(as->profile)->version);
	else
		snprintf(buf, len, "the next call starts a new browser");
}

/* Turns a failed CDP call into the action's error. */
static int cdp_failure(struct act_ctx *ctx, int rc, const struct cdp_error *err, const char *doing)
{
	char next[512];

	if (rc == -CDP_ECANCELLED)
		return act_fail(ctx, "cancelled", "cancelled while %s", doing);
	if (rc == -CDP_ECLOSED || sess_check_alive(ctx->sess) < 0) {
		sess_check_alive(ctx->sess);
		if (sess_over_limit(ctx->sess))
			return act_fail(ctx, "limit_exceeded",
			                "%s while %s; the next call starts a new "
			                "browser",
			                sess_failure(ctx->sess), doing);
		after_crash(ctx->as, next, sizeof(next));
		return act_fail(
		    ctx, "browser_crashed", "the browser crashed while %s (%s); %s", doing,
		    sess_failure(ctx->sess)[0] ? sess_failure(ctx->sess) : "connection lost", next);
	}
	if (rc == -CDP_ETIMEOUT)
		return act_fail_timeout(ctx, "The page did not answer while %s", doing);
	return act_fail(ctx, "browser_error", "failed while %s: %s", doing, err->message);
}

int act_cdp(struct act_ctx *ctx, const char *session_id, const char *method, json_t *params,
            json_t **result, const char *doing)
{
	struct cdp_error err = { 0 };
	int rc;

	rc = cdp_call(ctx->cdp, session_id, method, params, act_left_ms(ctx), result, &err);
	if (rc < 0)
		return cdp_failure(ctx, rc, &err, doing);
	return 0;
}

int act_cdp_await(struct act_ctx *ctx, uint64_t id, json_t **result, const char *doing)
{
	struct cdp_error err = { 0 };
	int rc;

	rc = cdp_await(ctx->cdp, id, act_left_ms(ctx), result, &err);
	if (rc < 0)
		return cdp_failure(ctx, rc, &err, doing);
	return 0;
}

int act_connection_failed(struct act_ctx *ctx, int rc, const char *doing)
{
	struct cdp_error err = { 0 };

	snprintf(err.message, sizeof(err.message), "%s", cdp_strerror(rc));
	return cdp_failure(ctx, rc, &err, doing);
}

json_t *act_png_params(void)
{
	return json_pack("{s:s, s:b}", "format", "png", "optimizeForSpeed", 1);
}

int act_runtime_value(struct act_ctx *ctx, json_t *res, json_t **value, const char *doing)
{
	json_t *exc = json_object_get(res, "exceptionDetails");
	json_t *obj;

	if (exc) {
		json_t *ex = json_object_get(exc, "exception");
		const char *desc = json_string_value(json_object_get(ex, "description"));

		if (!desc)
			desc = json_string_value(json_object_get(exc, "text"));
		return act_fail(ctx, "script_error", "the page threw while %s: %.400s", doing,
		                desc ? desc : "unknown exception");
	}
	obj = json_object_get(res, "result");
	if (value) {
		*value = json_object_get(obj, "value");
		if (*value)
			json_incref(*value);
		else
			*value = json_null();
	}
	return 0;
}

int act_call_on_target(struct act_ctx *ctx, const char *function, json_t *arguments, json_t **value,
                       const char *doing)
{
	json_t *res = NULL;
	json_t *params;
	int rc;

	params = json_pack("{s:s, s:s, s:b, s:b}", "objectId", ctx->target.object_id,
	                   "functionDeclaration", function, "returnByValue", 1, "awaitPromise", 1);
	if (arguments)
		json_object_set_new(params, "arguments", arguments);
	rc = act_cdp(ctx, ctx->target.session_id, "Runtime.callFunctionOn", params, &res, doing);
	if (rc == 0)
		rc = act_runtime_value(ctx, res, value, doing);
	json_decref(res);
	return rc;
}

int act_eval(struct act_ctx *ctx, const char *expression, json_t **value, const char *doing)
{
	json_t *res = NULL;
	int rc;

	rc = act_cdp(ctx, ctx->psid, "Runtime.evaluate",
	             json_pack("{s:s, s:b, s:b}", "expression", expression, "returnByValue", 1,
	                       "awaitPromise", 1),
	             &res, doing);
	if (rc == 0)
		rc = act_runtime_value(ctx, res, value, doing);
	json_decref(res);
	return rc;
}

/* j, or a new empty array standing in for a missing one (for "O"). */
static json_t *gb_or_json(json_t *j)
{
	static json_t *empty;

	if (j)
		return j;
	if (!empty)
		empty = json_array();
	return empty;
}

/* Tells the client how far the call got, when it asked for progress. */
static void progress(struct act_ctx *ctx, double step, const char *message)
{
	if (ctx->call->on_progress)
		ctx->call->on_progress(ctx->call, step, 4, message);
}

/* Where the session's browser came from: "pooled", "shared" (a context
 * of the tenant's shared browser) or "launched". */
static const char *browser_origin(const struct act_session *as)
{
	if (as->pooled)
		return "pooled";
	return as->shared ? "shared" : "launched";
}

int act_launch_browser(struct act_session *as, char *err, size_t errlen)
{
	struct sess_options opt = { 0 };

	opt.chromium_path = as->chromium_path;
	opt.run_dir = as->run_dir;
	opt.headed = !as->headless;
	opt.chromium_sandbox_off = as->chromium_sandbox_off;
	opt.viewport_width = as->viewport_width;
	opt.viewport_height = as->viewport_height;
	opt.cancel_flag = &as->cancel_flag;
	if (as->profile && !as->shared) {
		opt.user_data_dir = prof_lease_dir(as->profile);
		opt.close_grace_ms = 10000; /* let Chromium flush the profile's files */
	}
	act_egress_launch_options(as, &opt);
	act_browser_launch_args(as, &opt);
	if (as->shared) {
		/* isolation "context": a context of the tenant's shared browser,
		 * its profile (if any) loaded as the context's storage state */
		as->pooled = 0;
		if (act_shared_join(as, &opt, &as->sess, err, errlen) < 0)
			return -1;
	} else {
		as->sess = act_pool_take(as, &opt);
		as->pooled = as->sess != NULL;
		if (!as->sess && sess_launch(&opt, &as->sess, err, errlen) < 0)
			return -1;
	}
	act_egress_protect_port(as, sess_devtools_port(as->sess));
	if (act_egress_attach(as) < 0) {
		snprintf(err, errlen, "cannot watch the browser's requests");
		sess_close(as->sess);
		as->sess = NULL;
		return -1;
	}
	if (act_limits_apply(as, err, errlen) < 0 || act_browser_grant(as, err, errlen) < 0 ||
	    act_files_attach(as, err, errlen) < 0) {
		sess_close(as->sess);
		as->sess = NULL;
		return -1;
	}
	act_browser_fit_viewport(as);
	act_snapshot_forget(&as->refs);
	act_prefetch_drop(as);
	act_snapshot_view_free(&as->view);
	pthread_mutex_lock(&as->lock);
	as->wake_cdp = sess_cdp(as->sess);
	pthread_mutex_unlock(&as->lock);
	act_profile_browser_started(as);
	{
		struct evid_manifest_in m = { .chromium_version = sess_browser_version(as->sess),
			                      .launch_flags = sess_launch_flags(as->sess),
			                      .policy = as->policy,
			                      .config = as->policy };

		json_t *body = json_pack("{s:o, s:s, s:I, s:s}", "manifest", evid_manifest_new(&m),
		                         "agent_session", as->id, "time_to_ready_ms",
		                         (json_int_t)sess_time_to_ready_ms(as->sess), "browser",
		                         browser_origin(as));

		if (body && as->client_name[0])
			json_object_set_new(body, "client", json_string(as->client_name));
		if (body && as->flow_name[0])
			json_object_set_new(body, "flow", json_string(as->flow_name));
		act_keeper_record(as->keeper, EVID_AUDIT_SESSION_OPENED, sess_id(as->sess), NULL,
		                  body, 0);
	}
	return 0;
}

/* Makes sure a live browser with a current page is there. A browser that
 * died since the last call is reported once, cleaned up, and replaced on
 * the next call. */
static int ensure_browser(struct act_ctx *ctx)
{
	struct act_session *as = ctx->as;
	char err[512] = "";

	if (as->sess && sess_check_alive(as->sess) < 0 && sess_over_limit(as->sess)) {
		act_fail(ctx, "limit_exceeded", "%s; the next call starts a new browser",
		         sess_failure(as->sess));
		return -1;
	}
	if (as->sess && sess_check_alive(as->sess) < 0) {
		after_crash(as, err, sizeof(err));
		act_fail(ctx, "browser_crashed", "the browser crashed (%s); %s",
		         sess_failure(as->sess), err);
		return -1;
	}
	if (!as->sess) {
		progress(ctx, 0, "starting the browser");
		if (act_launch_browser(as, err, sizeof(err)) < 0)
			return act_fail(ctx, "launch_failed", "cannot start the browser: %s", err);
	}
	if (!as->reported_ready) {
		json_object_set_new(ctx->out, "time_to_ready_ms",
		                    json_integer(sess_time_to_ready_ms(as->sess)));
		json_object_set_new(ctx->out, "browser", json_string(browser_origin(as)));
		as->reported_ready = 1;
	}
	ctx->sess = as->sess;
	ctx->cdp = sess_cdp(as->sess);
	if (sess_page_count(ctx->sess) == 0 && sess_new_page(ctx->sess, err, sizeof(err)) < 0)
		return act_fail(ctx, "browser_error", "cannot open a tab: %s", err);
	ctx->page = sess_current_page(ctx->sess);
	ctx->psid = sess_page_session_id(ctx->page);
	return 0;
}

/* Drops a browser that failed during this call, so the next call starts
 * afresh; nothing is left behind. */
static void drop_failed_browser(struct act_session *as)
{
	if (!as->sess || sess_get_state(as->sess) != SESS_FAILED)
		return;
	act_close_browser(as, sess_failure(as->sess));
}

void act_close_browser(struct act_session *as, const char *reason)
{
	if (!as->sess)
		return;
	if (as->profile && !as->profile_closing) {
		/* not a close asked for: the profile is not sealed */
		json_decref(act_profile_close(as, 0, reason));
		return;
	}
	act_keeper_record(as->keeper, EVID_AUDIT_SESSION_CLOSED, sess_id(as->sess), NULL,
	                  json_pack("{s:s, s:i}", "reason", reason, "actions", as->operations), 0);
	pthread_mutex_lock(&as->lock);
	as->wake_cdp = NULL;
	pthread_mutex_unlock(&as->lock);
	sess_close(as->sess);
	as->sess = NULL;
	act_snapshot_forget(&as->refs);
	act_prefetch_drop(as);
	act_snapshot_view_free(&as->view);
}

/* before_screenshots: the page as it was before the action, kept beside
 * the evidence of the action (kind screenshot_before). */
static void capture_before(struct act_ctx *ctx)
{
	struct cdp_error err;
	json_t *res = NULL;
	const char *b64;

	/* optional evidence: a failure is noted, the action goes on */
	if (cdp_call(ctx->cdp, ctx->psid, "Page.captureScreenshot", act_png_params(),
	             act_left_ms(ctx), &res, &err) < 0) {
		char msg[sizeof(err.message) + 40];

		snprintf(msg, sizeof(msg), "no screenshot before acting: %s", err.message);
		act_add_evidence_error(ctx, msg);
		goto out;
	}
	b64 = json_string_value(json_object_get(res, "data"));
	if (b64 && evid_base64_decode(b64, strlen(b64), &ctx->before_png, &ctx->before_len) < 0)
		ctx->before_png = NULL;
	if (ctx->before_png && act_secrets_mask_png(ctx, &ctx->before_png, &ctx->before_len) < 0) {
		free(ctx->before_png); /* it would show a secret */
		ctx->before_png = NULL;
	}
out:
	json_decref(res);
}

#ifdef GB_UNITTEST_BUILD
void (*act_test_on_steps)(const char *tool, unsigned steps);
#endif

/* The usability checks every tool shares, before anything acts. */
static int check_page(struct act_ctx *ctx)
{
	const struct sess_dialog *d = sess_page_dialog(ctx->page);

	if (sess_page_crashed(ctx->page))
		return act_fail(ctx, "tab_crashed",
		                "the current tab crashed: open a new one with "
		                "browser_tabs (action \"new\") or close this one");
	if (d && !ctx->def->impl->with_dialog_open)
		return act_fail(
		    ctx, "dialog_open",
		    "a %s dialog is open (\"%.200s\"): call browser_handle_dialog first", d->type,
		    d->message ? d->message : "");
	/* (a chooser of an earlier browser went with it) */
	if (ctx->def->effect == ACT_EFFECT_PAGE && !ctx->def->impl->with_file_chooser_open &&
	    !strcmp(ctx->as->files_browser, sess_id(ctx->sess)) &&
	    act_pagelog_chooser_open(ctx->as->pagelog)) {
		/* Playwright MCP's words; what to do is in the modal state */
		gb_buf_appendf(&ctx->text,
		               "%s- a file chooser is open: answer it with "
		               "browser_file_upload (without paths to cancel it), "
		               "or navigate away",
		               ctx->text.len ? "\n" : "");
		return act_fail(ctx, "modal_state", "Tool \"%s\" does not handle the modal state.",
		                ctx->def->name);
	}
	return 0;
}

int act_outcome_unknown(const struct act_ctx *ctx)
{
	return ctx->failed && ctx->acted &&
	       (!strcmp(ctx->error_code, "browser_crashed") ||
	        !strcmp(ctx->error_code, "limit_exceeded") || !strcmp(ctx->error_code, "timeout") ||
	        !strcmp(ctx->error_code, "cancelled"));
}

/* For a replayed operation whose outcome is unknown: the page as it is
 * now, so the agent can reconcile instead of acting blindly. */
static void add_page_now(struct act_ctx *ctx, json_t *replay)
{
	json_t *sc = json_object_get(replay, "structuredContent");
	json_t *now = NULL;
	json_t *text;

	if (strcmp(gb_or(json_string_value(json_object_get(sc, "state")), ""), "unknown") != 0)
		return;
	if (ensure_browser(ctx) < 0 ||
	    act_page_eval(ctx, "({url: location.href, title: document.title})", &now,
	                  "re-reading the page") < 0)
		return;
	json_object_set(sc, "page_now", now);
	text = json_object_get(json_array_get(json_object_get(replay, "content"), 0), "text");
	if (json_is_string(text)) {
		char *t = NULL;

		if (asprintf(
		        &t,
		        "%s\nThis operation's outcome is unknown and it was not run again; the "
		        "page is now at %s (\"%s\"): take a snapshot before deciding what to do",
		        json_string_value(text),
		        gb_or(json_string_value(json_object_get(now, "url")), ""),
		        gb_or(json_string_value(json_object_get(now, "title")), "")) > 0)
			json_string_set(text, t);
		free(t);
	}
	json_decref(now);
}

/* Everything egress refused while the call ran: into the result
 * (`blocked`) and, one record each, into the audit log. The browser's own
 * requests (rule browser-background) go to the audit log only: `blocked`
 * is what the page tried. */
static void report_refusals(struct act_ctx *ctx)
{
	json_t *got = act_egress_take_refusals(ctx->as);
	json_t *blocked = json_object_get(ctx->out, "blocked");
	size_t shown = 0;
	size_t i;

	if (!got)
		return;
	act_secrets_scrub_json(ctx->as, got); /* a refused URL may carry a typed secret */
	for (i = 0; i < json_array_size(got); i++) {
		json_t *r = json_array_get(got, i);

		if (json_is_true(json_object_get(r, "browser_own"))) {
			act_keeper_record(
			    ctx->as->keeper, EVID_AUDIT_POLICY_REFUSAL,
			    ctx->sess ? sess_id(ctx->sess) : NULL, ctx->operation_id,
			    json_pack("{s:s, s:O}", "tool", ctx->def->name, "refusal", r), 0);
			continue;
		}
		if (!blocked) {
			blocked = json_array();
			json_object_set_new(ctx->out, "blocked", blocked);
		}
		json_array_append(blocked, r);
		if (shown++ < 10)
			gb_buf_appendf(&ctx->text, "\n- blocked: %.300s (rule %s, %s layer)",
			               gb_or(json_string_value(json_object_get(r, "url")), ""),
			               gb_or(json_string_value(json_object_get(r, "rule")), "?"),
			               gb_or(json_string_value(json_object_get(r, "layer")), "?"));
		act_keeper_record(ctx->as->keeper, EVID_AUDIT_POLICY_REFUSAL,
		                  ctx->sess ? sess_id(ctx->sess) : NULL, ctx->operation_id,
		                  json_pack("{s:s, s:O}", "tool", ctx->def->name, "refusal", r), 0);
	}
	json_decref(got);
}

/* With require_evidence, an action that changes the page is refused
 * before it acts when its evidence could not be kept. */
static int check_evidence_writable(struct act_ctx *ctx)
{
	char err[512];

	if (!ctx->as->require_evidence || ctx->def->effect != ACT_EFFECT_PAGE)
		return 0;
	if (evid_store_check_writable(ctx->as->store, ctx->as->tenant, err, sizeof(err)) < 0 ||
	    (ctx->as->audit &&
	     evid_audit_check_writable(ctx->as->audit, ctx->as->tenant, err, sizeof(err)) < 0))
		return act_fail(ctx, "evidence_unavailable",
		                "refused before acting: this tenant requires evidence and %s", err);
	return 0;
}

/* The names of the pipeline steps a call ran, in order (new array): the
 * record says which checks an action went through. */
static json_t *steps_json(unsigned steps)
{
	json_t *list = json_array();
	int s;

	for (s = 0; s < ACT_STEP_COUNT; s++)
		if (steps & ACT_STEP_BIT(s))
			json_array_append_new(list, json_string(act_step_name((enum act_step)s)));
	return list;
}

/* The audit record of the call into *a: what was asked (redacted), what
 * was acted on, what was observed, with its evidence (taken from ctx). */
static void build_record(struct act_ctx *ctx, struct act_keeper_action *a)
{
	json_t *body = json_deep_copy(ctx->out);
	json_t *element = NULL;
	char *dump;

	/* bounded: a large evaluate result is not copied into the log */
	dump = json_dumps(json_object_get(body, "result"), JSON_ENCODE_ANY | JSON_COMPACT);
	if (dump && strlen(dump) > 65536)
		json_object_set_new(body, "result",
		                    json_string("[more than 64 KiB: not recorded]"));
	free(dump);
	/* who asked: the MCP client, or the session's (a flow run) */
	if (ctx->call->client_name || ctx->as->client_name[0])
		json_object_set_new(body, "client",
		                    json_string(ctx->call->client_name ? ctx->call->client_name
		                                                       : ctx->as->client_name));
	if (ctx->as->flow_name[0])
		json_object_set_new(body, "flow", json_string(ctx->as->flow_name));
	if (ctx->has_target) {
		element = json_pack("{s:s, s:s}", "description", ctx->target.description, "ref",
		                    ctx->target.ref);
		if (ctx->target.role[0])
			json_object_set_new(element, "role", json_string(ctx->target.role));
		if (ctx->target.name[0])
			json_object_set_new(element, "name", json_string(ctx->target.name));
		if (ctx->frame_url[0])
			json_object_set_new(element, "frame_url", json_string(ctx->frame_url));
		if (ctx->annotation.has_box)
			json_object_set_new(
			    element, "box",
			    json_pack("[f, f, f, f]", ctx->annotation.box_x, ctx->annotation.box_y,
			              ctx->annotation.box_width, ctx->annotation.box_height));
		if (ctx->annotation.has_point)
			json_object_set_new(
			    element, "point",
			    json_pack("[f, f]", ctx->annotation.point_x, ctx->annotation.point_y));
		if (ctx->annotation.has_hit_box)
			json_object_set_new(
			    element, "hit_box",
			    json_pack("[f, f, f, f]", ctx->annotation.hit_x, ctx->annotation.hit_y,
			              ctx->annotation.hit_width, ctx->annotation.hit_height));
		json_object_set_new(body, "element", element);
	}
	json_object_set_new(body, "arguments", act_redacted_args(ctx));
	/* when it began, wall clock: the record is written later, off the path */
	json_object_set_new(body, "started_at_ms",
	                    json_integer(gb_wall_ms() - (gb_now_ms() - ctx->started_ms)));
	json_object_set_new(body, "steps", steps_json(ctx->steps));
	/* the Playwright code it ran (codegen.h), for a spec made of the session */
	if (ctx->code.len)
		json_object_set_new(body, "playwright_code", json_string(ctx->code.data));
	a->session_id = ctx->sess ? sess_id(ctx->sess) : NULL;
	a->operation_id = ctx->operation_id;
	a->tool = ctx->def->name;
	a->url = json_string_value(json_object_get(ctx->out, "url"));
	a->body = body;
	a->arguments = act_redacted_args(ctx);
	a->secret_text = ctx->sensitive;
	a->frames = act_screencast_take(ctx, body);
	if (ctx->shot_png || ctx->shot_deferred) {
		a->png = ctx->shot_png;
		a->png_len = ctx->shot_len;
		ctx->shot_png = NULL;
		a->before_png = ctx->before_png;
		a->before_len = ctx->before_len;
		ctx->before_png = NULL;
		a->annotation = ctx->annotation;
		a->snapshot_text = ctx->has_target ? ctx->as->last_snapshot : NULL;
		a->network_log =
		    json_pack("{s:O, s:O, s:o}", "responses",
		              gb_or_json(json_object_get(ctx->out, "responses")), "failed_requests",
		              gb_or_json(json_object_get(ctx->out, "failed_requests")), "exchanges",
		              act_netlog_take(ctx));
	}
}

/* See actions-private.h. */
void act_add_evidence_error(struct act_ctx *ctx, const char *msg)
{
	const char *had = json_string_value(json_object_get(ctx->out, "evidence_error"));
	json_t *list = json_object_get(ctx->out, "evidence_errors");

	if (!json_is_array(list)) {
		list = json_array();
		json_object_set_new(ctx->out, "evidence_errors", list);
	}
	json_array_append_new(list, json_string(msg));
	json_object_set_new(ctx->out, "evidence_error",
	                    had ? json_sprintf("%s; %s", had, msg) : json_string(msg));
}

/* 1 when the call answers before its evidence screenshot is in (policy
 * evidence.before_answer false, and the tenant does not require
 * evidence): the screenshot is taken right after, before the session's
 * next call. */
static int answers_first(const struct act_ctx *ctx)
{
	return act_answers_first(ctx->as);
}

/* Hands the record to the keeper. Before its answer (answered 0), a
 * call that can change something waits for its record to be written:
 * when it cannot be queued or written, the call's result says so. A
 * session that answers first (evidence.before_answer false) only queues
 * its records, before the answer or after it (answered 1, the deferred
 * screenshot's): neither the answer nor the session's next call waits for
 * the disk, and a record that could not be written is said in the first
 * answer that leaves once that is known (act_run_call and finish take
 * the keeper's error). */
static void queue_record(struct act_ctx *ctx, struct act_keeper_action *a, int answered)
{
	int wait = !answered && ctx->def->effect != ACT_EFFECT_READ && !answers_first(ctx);
	uint64_t ticket = 0;
	char err[512] = "";

	if (act_keeper_record_action(ctx->as->keeper, a, &ticket, err, sizeof(err)) == 0 &&
	    !(wait && act_keeper_wait(ctx->as->keeper, ticket, err, sizeof(err))))
		return;
	if (answered) {
		act_keeper_note_error(ctx->as->keeper, err);
		return;
	}
	act_add_evidence_error(ctx, err);
	json_object_set_new(ctx->out, "recorded", json_false());
	gb_buf_appendf(&ctx->text, "\nNote: %s", err);
}

/* After the answer: the deferred screenshot into the record (its entry
 * in the record's evidence gets the sha), then the record to the keeper;
 * a screenshot that could not be taken is said in the next answer and
 * the record keeps no image. */
static void keep_deferred_record(struct act_ctx *ctx, struct act_keeper_action *a)
{
	json_t *list = json_object_get(a->body, "evidence");
	json_t *entry = json_array_get(list, 0);
	char sha[65] = "";
	char uri[128];
	char err[512];

	if (act_collect_evidence(ctx, &a->png, &a->png_len, sha, err, sizeof(err)) < 0) {
		act_keeper_note_error(ctx->as->keeper, err);
		if (entry)
			json_object_set_new(entry, "error", json_string(err));
	} else if (entry) {
		snprintf(uri, sizeof(uri), "glassbox://artifact/%s", sha);
		json_object_set_new(entry, "sha256", json_string(sha));
		json_object_set_new(entry, "artifact", json_string(uri));
		json_object_set_new(entry, "size", json_integer((json_int_t)a->png_len));
		json_object_del(entry, "pending");
	}
	queue_record(ctx, a, 1);
	act_evidence_pending(ctx->as, NULL);
}

/* Every record or deferred screenshot of an earlier call that could not
 * be kept and was not said yet (one kept after its answer, or one that
 * no call waits for): said in this answer, beside what this call's own
 * evidence says (act_add_evidence_error), with a note for each in the text,
 * at its start (before: the call has not run yet) or at its end; those
 * beyond the keeper's bound are counted (evidence_errors_dropped). */
static void note_keeper_errors(struct act_ctx *ctx, int before)
{
	json_t *errors, *e;
	size_t dropped, i;
	char more[160];

	act_keeper_take_errors(ctx->as->keeper, &errors, &dropped);
	json_array_foreach(errors, i, e)
	{
		act_add_evidence_error(ctx, json_string_value(e));
		gb_buf_appendf(&ctx->text, before ? "Note: %s\n" : "\nNote: %s",
		               json_string_value(e));
	}
	if (dropped) {
		snprintf(more, sizeof(more),
		         "%zu more records or screenshots could not be kept (the service's log "
		         "names each)",
		         dropped);
		act_add_evidence_error(ctx, more);
		gb_buf_appendf(&ctx->text, before ? "Note: %s\n" : "\nNote: %s", more);
		json_object_set_new(ctx->out, "evidence_errors_dropped",
		                    json_integer((json_int_t)dropped));
	}
	json_decref(errors);
}

/* Assembles the CallToolResult and hands it to the transport. */
static void finish(struct act_ctx *ctx)
{
	struct act_keeper_action record = { 0 };
	json_t *result = json_object();
	json_t *content = json_array();
	json_t *kept = NULL;
	enum store_op_state state;
	char *text;

	json_object_set_new(ctx->out, "operation_id", json_string(ctx->operation_id));
	json_object_set_new(ctx->out, "tool", json_string(ctx->def->name));
	json_object_set_new(ctx->out, "ok", json_boolean(!ctx->failed));
	json_object_set_new(ctx->out, "duration_ms", json_integer(gb_now_ms() - ctx->started_ms));
	if (ctx->failed) {
		json_object_set_new(
		    ctx->out, "error",
		    json_pack("{s:s, s:s}", "code", ctx->error_code, "message", ctx->error));
		if (act_outcome_unknown(ctx))
			gb_buf_appendf(
			    &ctx->text,
			    "%sThe outcome is unknown: the input may have reached the "
			    "page. Do not repeat it blindly: take a snapshot and check first",
			    ctx->text.len ? "\n" : "");
	}
	report_refusals(ctx);
	act_files_answer(ctx);
	note_keeper_errors(ctx, 0);
	act_profile_note_url(ctx->as, json_string_value(json_object_get(ctx->out, "url")));
	/* nothing typed from a secret leaves: result, ledger, audit, evidence */
	act_secrets_scrub_call(ctx);
	state = act_ledger_outcome(ctx);
	act_step(ctx, ACT_STEP_RECORD);
	build_record(ctx, &record);
	if (!ctx->shot_deferred)
		queue_record(ctx, &record, 0);
	text = act_response_text(ctx);
	json_array_append_new(content, json_pack("{s:s, s:s}", "type", "text", "text", text));
	free(text);
	json_array_extend(content, ctx->content);
	json_object_set_new(result, "content", content);
	json_object_set(result, "structuredContent", ctx->out);
	if (ctx->failed)
		json_object_set_new(result, "isError", json_true());
	/* the transport may change the result it sends: the ledger keeps it as it is */
	if (ctx->in_ledger)
		kept = json_deep_copy(result);
#ifdef GB_UNITTEST_BUILD
	if (act_test_on_steps)
		act_test_on_steps(ctx->def->name, ctx->steps);
#endif
	ctx->call->on_done(ctx->call, result);
	ctx->answered_at_ms = gb_now_ms() - ctx->started_ms;
	/* after the answer (only what ctx owns is used: the call's arguments may
	 * be gone): a repeat under the same operation_id waits for this
	 * (store_op_begin), and the session's next call starts after it */
	act_ledger_finish(ctx, state, kept);
	json_decref(kept);
	/* the session's next call starts only after this: its screenshot
	 * shows the page as this answer reported it */
	if (ctx->shot_deferred)
		keep_deferred_record(ctx, &record);
}

void act_step(struct act_ctx *ctx, enum act_step step)
{
	if (!(ctx->steps & (1u << step)))
		ctx->step_at_ms[step] = gb_now_ms() - ctx->started_ms;
	ctx->steps |= 1u << step;
}

/* With GLASSBOX_LOG=debug, one line per call: when each step it ran
 * began, when the answer's snapshot began, when the answer left and when
 * the call ended (ms after it started), to see where a call spends its
 * time. Nothing of the page or the arguments is in it. */
static void log_timing(const struct act_ctx *ctx)
{
	char line[512];
	size_t used = 0;
	int s;

	for (s = 0; s < ACT_STEP_COUNT && used < sizeof(line); s++)
		if (ctx->steps & ACT_STEP_BIT(s))
			used += (size_t)snprintf(line + used, sizeof(line) - used, " %s@%lld",
			                         act_step_name((enum act_step)s),
			                         (long long)ctx->step_at_ms[s]);
	GB_LOGD("actions", "%s %s timing:%s snapshot@%lld answered@%lld end@%lld", ctx->def->name,
	        ctx->operation_id, line, (long long)ctx->snapshot_at_ms,
	        (long long)ctx->answered_at_ms, (long long)(gb_now_ms() - ctx->started_ms));
}

void act_ctx_follow_current_page(struct act_ctx *ctx)
{
	struct sess_page *now = ctx->sess ? sess_current_page(ctx->sess) : NULL;

	if (!now || now == ctx->page)
		return;
	ctx->page = now;
	ctx->psid = sess_page_session_id(now);
	act_recorder_follow(&ctx->rec, ctx->psid, sess_page_main_frame_id(now));
}

/* The gate step of the plan: the tenant's risk rules on the action. */
static int gate(struct act_ctx *ctx, unsigned plan)
{
	if (!(plan & ACT_STEP_BIT(ACT_STEP_GATE)))
		return 0;
	act_step(ctx, ACT_STEP_GATE);
	/* a tool acting on several elements gates each of them itself */
	return ctx->def->impl->gate_parts ? ctx->def->impl->gate_parts(ctx) : act_gate_check(ctx);
}

/* The ledger step of the plan: the operation is running from now on (a
 * retry is not run blindly again). */
static void ledger_running(struct act_ctx *ctx, unsigned plan)
{
	if (!(plan & ACT_STEP_BIT(ACT_STEP_LEDGER)))
		return;
	act_step(ctx, ACT_STEP_LEDGER);
	act_ledger_running(ctx);
}

/* The descriptor is whole: an effect, a policy kind or a reason for an
 * exemption, and code to run. A tool without one never runs: a missing
 * entry must not mean "ungated" or "no evidence". */
static int check_descriptor(struct act_ctx *ctx)
{
	const struct act_def *def = ctx->def;

	if (!def->impl || !def->impl->run)
		return act_fail(ctx, "unknown_tool", "%s has no implementation", def->name);
	if (def->effect == ACT_EFFECT_UNSET || !def->policy.set)
		return act_fail(ctx, "unknown_tool",
		                "%s is not described completely (its effect or policy kind is "
		                "missing), so it is not run",
		                def->name);
	if (!act_caps_allows(ctx->as->caps, def->caps)) {
		char why[512];

		return act_fail(ctx, "capability_off", "%s",
		                act_caps_refusal(def, why, sizeof(why)));
	}
	return 0;
}

void act_run_call(struct act_session *as, struct act_call *call)
{
	const struct act_def *def = call->def;
	const struct act_tool_impl *impl = def->impl;
	const unsigned plan = act_def_steps(def);
	json_t *expect = json_object_get(call->args, "expect");
	struct act_ctx ctx;
	const char *target;
	int defer_evidence = 0;
	char err[512];

	memset(&ctx, 0, sizeof(ctx));
	ctx.as = as;
	ctx.call = call;
	ctx.def = def;
	ctx.args = call->args;
	ctx.started_ms = gb_now_ms();
	ctx.snapshot_at_ms = -1;
	ctx.deadline_ms = ctx.started_ms + as->action_timeout_ms;
	ctx.out = json_object();
	ctx.content = json_array();
	gb_buf_init(&ctx.text, 1 << 20);
	gb_buf_init(&ctx.code, 1 << 23);
	gb_buf_init(&ctx.result, 1 << 22);
	gb_buf_init(&ctx.evidence, 1 << 16);
	gb_buf_init(&ctx.events, 1 << 16);
	as->operations++;
	if (call->operation_id && call->operation_id[0])
		snprintf(ctx.operation_id, sizeof(ctx.operation_id), "%.64s", call->operation_id);
	else {
		memcpy(ctx.operation_id, "op-", 3);
		gb_random_hex(ctx.operation_id + 3, 12);
	}

	note_keeper_errors(&ctx, 1);

	/* resolve */
	if (atomic_load(&call->cancelled)) {
		act_fail(&ctx, "cancelled", "cancelled before it started");
		goto done;
	}
	if (check_descriptor(&ctx) < 0)
		goto done;
	if (act_check_args(def, call->args, err, sizeof(err)) < 0 ||
	    (expect && verify_expect_validate(expect, err, sizeof(err)) < 0)) {
		act_fail(&ctx, "bad_arguments", "%s", err);
		goto done;
	}
	{
		json_t *replay = NULL;

		if (act_ledger_begin(&ctx, &replay) != 0) {
			if (replay) {
				/* a finished operation: its recorded result, nothing done again */
				add_page_now(&ctx, replay);
				call->on_done(call, replay);
				goto free;
			}
			goto done;
		}
	}
	if (def->effect == ACT_EFFECT_LIFECYCLE) {
		/* the browser may be absent or about to go: no page to observe */
		if (gate(&ctx, plan) < 0)
			goto done;
		ledger_running(&ctx, plan);
		act_step(&ctx, ACT_STEP_RUN);
		if (impl->run(&ctx) >= 0 && !ctx.failed && impl->code && !as->no_code)
			impl->code(&ctx);
		goto done;
	}
	if (check_evidence_writable(&ctx) < 0 || ensure_browser(&ctx) < 0 || check_page(&ctx) < 0 ||
	    act_files_begin(&ctx) < 0)
		goto done;
	snprintf(ctx.url_before, sizeof(ctx.url_before), "%s", sess_page_url(ctx.page));
	sess_set_busy(ctx.sess, 1);
	target = json_string_value(json_object_get(call->args, "target"));
	if (impl->needs_target && target && act_resolve_target(&ctx, target) < 0)
		goto release;
	if (ctx.has_target && !as->no_code)
		act_code_probe_ask(&ctx); /* read before the action changes the page */
	if (ctx.has_target && impl->precheck)
		act_actionable_ask(&ctx, impl->precheck);
	/* the DOM mark only reads the page too: asked with the gate's reads */
	if ((plan & ACT_STEP_BIT(ACT_STEP_OBSERVE_BEFORE)) && !sess_page_dialog(ctx.page))
		act_observe_before(&ctx);

	/* gate: a refused action leaves the page untouched */
	if ((impl->gate && impl->gate(&ctx) < 0) || gate(&ctx, plan) < 0)
		goto release;
	ledger_running(&ctx, plan);

	/* pre-observe: start recording what the page does, note its state */
	if (plan & ACT_STEP_BIT(ACT_STEP_OBSERVE_BEFORE)) {
		act_step(&ctx, ACT_STEP_OBSERVE_BEFORE);
		act_recorder_start(&ctx.rec, ctx.cdp, ctx.psid, sess_page_main_frame_id(ctx.page));
		act_screencast_start(&ctx);
		act_netlog_start(&ctx);
		if (!sess_page_dialog(ctx.page)) { /* a dialog blocks the page's script */
			if (ctx.gate_asked || !ctx.mark_call)
				act_observe_before(&ctx); /* a person took time: read it now */
			if (as->before_screenshots)
				capture_before(&ctx);
		}
	}

	/* execute, then settle (a tool that settled itself returns 1) */
	progress(&ctx, 1, "acting");
	act_step(&ctx, ACT_STEP_RUN);
	if (impl->run(&ctx) == 0 && (plan & ACT_STEP_BIT(ACT_STEP_SETTLE))) {
		progress(&ctx, 2, "waiting for the page to settle");
		act_settle(&ctx, 0);
	}
	if (ctx.after_settle)
		ctx.after_settle(&ctx); /* read back while the page settled */

	/* the downloads it started, and those of earlier calls that ended since */
	act_files_end(&ctx);

	/* post-observe, verify, record: on the tab shown now */
	if ((plan & ACT_STEP_BIT(ACT_STEP_OBSERVE_AFTER)) &&
	    sess_get_state(ctx.sess) != SESS_FAILED) {
		act_ctx_follow_current_page(&ctx);
		progress(&ctx, 3, "verifying and keeping evidence");
		act_step(&ctx, ACT_STEP_OBSERVE_AFTER);
		if (!impl->evidence_if_changed && !answers_first(&ctx))
			act_request_evidence(&ctx);
		act_observe_after(&ctx);
		if (!ctx.skip_evidence && (plan & ACT_STEP_BIT(ACT_STEP_EVIDENCE))) {
			act_step(&ctx, ACT_STEP_EVIDENCE);
			if (answers_first(&ctx))
				defer_evidence = 1;
			else
				act_record_evidence(&ctx);
		}
	}
	/* the answer: the code it ran and the page as it is now (snapshot_mode) */
	act_code_probe_take(&ctx);
	if (!ctx.failed && impl->code && !as->no_code)
		impl->code(&ctx);
	if (!ctx.failed && ((plan & ACT_STEP_BIT(ACT_STEP_OBSERVE_AFTER)) || impl->shows_page) &&
	    sess_get_state(ctx.sess) != SESS_FAILED &&
	    !(as->snapshot_mode == ACT_SNAPSHOT_FULL && impl->no_snapshot &&
	      impl->no_snapshot(&ctx))) {
		ctx.snapshot_at_ms = gb_now_ms() - ctx.started_ms;
		act_answer_snapshot(&ctx);
	}
	/* answering first, the screenshot is asked for once the page is re-read
	 * (it would slow the reads down): taken as the answer leaves */
	if (defer_evidence) {
		act_request_evidence(&ctx);
		if (!act_defer_evidence(&ctx))
			act_record_evidence(&ctx);
	}
release:
	if (ctx.shot_call && !ctx.shot_deferred) {
		cdp_forget(ctx.cdp, ctx.shot_call);
		act_shot_unwatch(&ctx);
	}
	if (ctx.mark_call)
		cdp_forget(ctx.cdp, ctx.mark_call);
	if (ctx.code_probe_call)
		cdp_forget(ctx.cdp, ctx.code_probe_call);
	act_actionable_forget(&ctx);
	act_click_landing_forget(&ctx);
	act_field_reread_forget(&ctx);
	act_recorder_stop(&ctx.rec);
	act_screencast_stop(&ctx);
	act_netlog_stop(&ctx);
	sess_set_busy(ctx.sess, 0);
done:
	finish(&ctx);
	act_prefetch_refs(as);
	gb_metrics_observe("glassbox_tool_latency_seconds", ctx.def->name,
	                   (double)(gb_now_ms() - ctx.started_ms) / 1000.0);
	log_timing(&ctx);
free:
	act_shot_unwatch(&ctx); /* a deferred screenshot's, once collected: a no-op */
	drop_failed_browser(as);
	json_decref(ctx.out);
	json_decref(ctx.content);
	json_decref(ctx.cast.frames);
	json_decref(ctx.netlog.order);
	free(ctx.shot_png);
	free(ctx.before_png);
	free(ctx.snapshot);
	json_decref(ctx.code_probe);
	json_decref(ctx.settled_view);
	if (ctx.offered_call)
		cdp_forget(ctx.cdp, ctx.offered_call);
	gb_buf_free(&ctx.text);
	gb_buf_free(&ctx.code);
	gb_buf_free(&ctx.result);
	gb_buf_free(&ctx.evidence);
	gb_buf_free(&ctx.events);
}

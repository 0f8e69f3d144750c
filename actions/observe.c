/*
 * observe.c - post-observe, verify and record: the state re-read after an
 * action, the caller's expectations checked against it, the evidence
 * screenshot stored, and the observation written for the model.
 */
#include "actions/actions-private.h"

#include "cdp/cdp.h"
#include "common/log.h"
#include "common/metrics.h"
#include "evidence/evidence.h"
#include "sessions/sessions.h"
#include "verify/verify.h"

#include <sodium.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define BODY_TEXT_MAX 200000

/* One round trip in glassbox's world: url, title, DOM mark, and the
 * visible text when an expectation needs it. */
static const char observe_js[] =
    "((wantText) => { const d = document;"
    " const r = { url: location.href, title: d.title, mark: %s };"
    " if (wantText) r.text = d.body ? d.body.innerText.slice(0, %d) : '';"
    " return r; })(%s)";

/* Pre-observe: asks for the DOM mark before acting, without waiting.
 * The page runs a session's scripts in the order they are sent, but the
 * renderer runs input ahead of them: act_observe_before_wait() has the
 * mark in before trusted input is sent; act_observe_after() collects
 * it. Asked again when one is on its way already. */
int act_observe_before(struct act_ctx *ctx)
{
	if (ctx->mark_call)
		cdp_forget(ctx->cdp, ctx->mark_call);
	ctx->mark_call = act_page_world_send(ctx, sess_dom_mark_js);
	return 0;
}

/* The mark asked for by act_observe_before(), or NULL (borrowed from
 * ctx->out). */
static const char *mark_before(struct act_ctx *ctx)
{
	struct cdp_error err;
	json_t *res = NULL;
	json_t *v;

	if (ctx->mark_call) {
		if (cdp_await(ctx->cdp, ctx->mark_call, act_left_ms(ctx), &res, &err) == 0) {
			v = json_object_get(json_object_get(res, "result"), "value");
			if (json_is_string(v))
				json_object_set_new(ctx->out, "_mark_before",
				                    json_string(json_string_value(v)));
		}
		ctx->mark_call = 0;
		json_decref(res);
	}
	return json_string_value(json_object_get(ctx->out, "_mark_before"));
}

/* cdp_service's stop: the mark is in, or a dialog stops the page. */
static int mark_or_dialog(void *user)
{
	struct act_ctx *ctx = user;

	return cdp_reply_ready(ctx->cdp, ctx->mark_call) || ctx->rec.dialog_opened ||
	       sess_page_dialog(ctx->page);
}

void act_observe_before_wait(struct act_ctx *ctx)
{
	if (!ctx->mark_call)
		return;
	if (!mark_or_dialog(ctx))
		cdp_service(ctx->cdp, act_left_ms(ctx), mark_or_dialog, ctx);
	if (cdp_reply_ready(ctx->cdp, ctx->mark_call))
		mark_before(ctx);
}

static void add_text_summary(struct act_ctx *ctx, json_t *responses)
{
	const char *url = json_string_value(json_object_get(ctx->out, "url"));
	size_t i, n = json_array_size(responses);

	if (url && strcmp(url, ctx->url_before) != 0)
		gb_buf_appendf(&ctx->text, "\n- url: %s (was %s)", url, ctx->url_before);
	else if (url)
		gb_buf_appendf(&ctx->text, "\n- url: %s (unchanged)", url);
	if (json_object_get(ctx->out, "status"))
		gb_buf_appendf(&ctx->text, "\n- status: %d",
		               (int)json_integer_value(json_object_get(ctx->out, "status")));
	if (json_string_value(json_object_get(ctx->out, "title")))
		gb_buf_appendf(&ctx->text, "\n- title: %s",
		               json_string_value(json_object_get(ctx->out, "title")));
	for (i = 0; i < n && i < 10; i++) {
		json_t *r = json_array_get(responses, i);
		const char *type = json_string_value(json_object_get(r, "type"));

		if (type && (!strcmp(type, "Image") || !strcmp(type, "Stylesheet") ||
		             !strcmp(type, "Font") || !strcmp(type, "Script")))
			continue;
		gb_buf_appendf(&ctx->text, "\n- response: %s %s -> %d",
		               gb_or(json_string_value(json_object_get(r, "method")), "GET"),
		               gb_or(json_string_value(json_object_get(r, "url")), ""),
		               (int)json_integer_value(json_object_get(r, "status")));
	}
	if (json_array_size(ctx->rec.failed))
		gb_buf_appendf(&ctx->text, "\n- failed requests: %zu",
		               json_array_size(ctx->rec.failed));
	for (i = 0; i < json_array_size(ctx->rec.dialogs); i++)
		gb_buf_appendf(
		    &ctx->text,
		    "\n- dialog opened: %s \"%.200s\" (handle it with browser_handle_dialog)",
		    json_string_value(json_object_get(json_array_get(ctx->rec.dialogs, i), "type")),
		    gb_or(json_string_value(
		              json_object_get(json_array_get(ctx->rec.dialogs, i), "message")),
		          ""));
	for (i = 0; i < json_array_size(ctx->rec.console_errors) && i < 5; i++)
		gb_buf_appendf(&ctx->text, "\n- console error: %.300s",
		               json_string_value(json_array_get(ctx->rec.console_errors, i)));
	if (json_is_true(json_object_get(ctx->out, "dom_changed")))
		gb_buf_appendf(&ctx->text, "\n- page changed");
}

/* Fills a verify_state's responses from the recorder. */
static struct verify_response *collect_responses(json_t *arr, size_t *n)
{
	struct verify_response *v;
	size_t i;

	*n = json_array_size(arr);
	v = calloc(*n ? *n : 1, sizeof(*v));
	for (i = 0; v && i < *n; i++) {
		json_t *r = json_array_get(arr, i);

		v[i].url = json_string_value(json_object_get(r, "url"));
		v[i].method = json_string_value(json_object_get(r, "method"));
		v[i].status = (int)json_integer_value(json_object_get(r, "status"));
	}
	return v;
}

/* Reads the value of expect.target (or the tool's own target). */
static void read_expected_target_value(struct act_ctx *ctx, json_t *expect, json_t **value)
{
	const char *t = json_string_value(json_object_get(expect, "target"));

	if (t && (!ctx->has_target || strcmp(t, ctx->target.ref) != 0)) {
		if (act_resolve_target(ctx, t) < 0)
			return;
	}
	if (!ctx->has_target)
		return;
	act_call_in_isolated_world(ctx,
	                           "function() { return 'value' in this ? String(this.value) : "
	                           "(this.textContent || ''); }",
	                           value, "reading the target's value");
}

/* How long the re-read and the screenshot of a page that navigated wait
 * for the new document's load event before they take it as it is. */
#define SHOT_LOAD_WAIT_MS 3000
/* How long a screenshot the browser refused waits for the navigation
 * that made the page refuse it to show. */
#define SHOT_NAV_WAIT_MS 1000

/* cdp_service's stop: the page navigated and its new document loaded. */
static int reread_page_loaded(void *user)
{
	const struct act_ctx *ctx = user;

	return ctx->rec.navigated && ctx->rec.load_fired;
}

/* The page re-read by js into *value. A page that navigates while it is
 * read (a click whose handler leaves the page) takes the context of the
 * read with it, and the browser answers "Inspected target navigated or
 * closed": the new document is read, once, when it has loaded (at most
 * SHOT_LOAD_WAIT_MS). A browser error is read again so; a timeout, a
 * cancellation or a crash stays. 0, or -1 with the call failed. */
static int reread_page(struct act_ctx *ctx, const char *js, json_t **value)
{
	int failed = ctx->failed;

	if (act_page_eval(ctx, js, value, "re-reading the page") == 0)
		return 0;
	if (failed || strcmp(ctx->error_code, "browser_error") != 0)
		return -1; /* cancelled, timed out, crashed: as it is */
	ctx->failed = 0;
	ctx->error[0] = '\0';
	ctx->error_code[0] = '\0';
	cdp_service(ctx->cdp,
	            act_left_ms(ctx) < SHOT_LOAD_WAIT_MS ? act_left_ms(ctx) : SHOT_LOAD_WAIT_MS,
	            reread_page_loaded, ctx);
	return act_page_eval(ctx, js, value, "re-reading the page");
}

char *act_observe_expression(const struct act_ctx *ctx)
{
	json_t *expect = json_object_get(ctx->args, "expect");
	char *js = NULL;

	if (asprintf(&js, observe_js, sess_dom_mark_js, BODY_TEXT_MAX,
	             expect && verify_expect_needs_text(expect) ? "true" : "false") < 0)
		return NULL;
	return js;
}

int act_observe_after(struct act_ctx *ctx)
{
	json_t *expect = json_object_get(ctx->args, "expect");
	struct verify_state st = { 0 };
	struct verify_response *resp = NULL;
	json_t *value = NULL;
	json_t *target_value = NULL;
	json_t *verdicts = NULL;
	char *js = NULL;
	const char *before;
	const char *mark;
	int all_ok = 1;

	if (sess_page_dialog(ctx->page)) {
		/* the page is blocked by its dialog: report what is known */
		value = json_pack("{s:s}", "url", sess_page_url(ctx->page));
	} else if (ctx->settled_view && ctx->page &&
	           !strcmp(ctx->settled_target, gb_or(sess_page_target_id(ctx->page), "-")) &&
	           ctx->settled_events == ctx->rec.events) {
		/* read by the round trip that ended settling: nothing came since */
		value = ctx->settled_view;
		ctx->settled_view = NULL;
	} else if (!(js = act_observe_expression(ctx))) {
		act_fail(ctx, "oom", "out of memory");
		goto out;
	} else if (reread_page(ctx, js, &value) < 0) {
		goto out;
	}
	json_object_set_new(ctx->out, "url_before", json_string(ctx->url_before));
	json_object_set(ctx->out, "url", json_object_get(value, "url"));
	json_object_set(ctx->out, "title", json_object_get(value, "title"));
	json_object_set_new(ctx->out, "navigated", json_boolean(ctx->rec.navigated));
	if (ctx->rec.navigated && ctx->rec.main_status)
		json_object_set_new(ctx->out, "status", json_integer(ctx->rec.main_status));
	before = mark_before(ctx);
	mark = json_string_value(json_object_get(value, "mark"));
	json_object_set_new(
	    ctx->out, "dom_changed",
	    json_boolean(ctx->rec.navigated || !before || !mark || strcmp(before, mark) != 0));
	json_object_del(ctx->out, "_mark_before");
	if (mark)
		json_object_set_new(ctx->out, "_mark_after", json_string(mark));
	json_object_set(ctx->out, "responses", ctx->rec.responses);
	json_object_set(ctx->out, "failed_requests", ctx->rec.failed);
	json_object_set(ctx->out, "dialogs", ctx->rec.dialogs);
	json_object_set(ctx->out, "console_errors", ctx->rec.console_errors);
	if (sess_page_dialog(ctx->page)) {
		const struct sess_dialog *d = sess_page_dialog(ctx->page);

		json_object_set_new(
		    ctx->out, "dialog_open",
		    json_pack("{s:s, s:s?}", "type", d->type, "message", d->message));
	}
	add_text_summary(ctx, ctx->rec.responses);

	if (expect) {
		if (verify_expect_needs_value(expect))
			read_expected_target_value(ctx, expect, &target_value);
		st.url = json_string_value(json_object_get(value, "url"));
		st.title = json_string_value(json_object_get(value, "title"));
		st.body_text = json_string_value(json_object_get(value, "text"));
		st.target_value = json_string_value(target_value);
		st.has_target_value = target_value && json_is_string(target_value);
		resp = collect_responses(ctx->rec.responses, &st.n_responses);
		st.responses = resp;
		verify_expect_check(expect, &st, &verdicts, &all_ok);
		if (ctx->sensitive && verdicts) {
			/* never echo what was typed into a password field */
			size_t i;

			for (i = 0; i < json_array_size(verdicts); i++) {
				json_t *v = json_array_get(verdicts, i);
				const char *check = json_string_value(json_object_get(v, "check"));

				if (check && !strcmp(check, "value")) {
					json_object_set_new(v, "expected",
					                    json_string("[redacted]"));
					json_object_set_new(v, "observed",
					                    json_string("[redacted]"));
				}
			}
		}
		/* after the tool's own verdicts, if it has any */
		if (json_is_array(json_object_get(ctx->out, "verdicts")))
			json_array_extend(json_object_get(ctx->out, "verdicts"), verdicts);
		else
			json_object_set(ctx->out, "verdicts", verdicts);
		if (!all_ok) {
			char *why = verify_explain_failures(verdicts);

			gb_metrics_counter_add("glassbox_verification_failures_total",
			                       ctx->def->name, 1);
			act_fail(ctx, "expectation_failed", "%s",
			         why ? why : "an expectation failed");
			free(why);
		} else {
			gb_buf_appendf(&ctx->text, "\n- expectations: %zu passed",
			               json_array_size(verdicts));
		}
	}
out:
	free(js);
	free(resp);
	json_decref(value);
	json_decref(target_value);
	json_decref(verdicts);
	return ctx->failed ? -1 : 0;
}

json_t *act_redacted_args(const struct act_ctx *ctx)
{
	json_t *copy = json_deep_copy(ctx->args ? ctx->args : json_object());
	json_t *expect = json_object_get(copy, "expect");

	json_t *fields = json_object_get(copy, "fields");
	size_t i;

	if (ctx->sensitive && json_object_get(copy, "text"))
		json_object_set_new(copy, "text", json_string("[redacted]"));
	/* browser_fill_form: the values that went into password fields */
	for (i = 0; i < json_array_size(fields) && i < ACT_MAX_PARTS; i++)
		if (ctx->sensitive_fields & (1ull << i))
			json_object_set_new(json_array_get(fields, i), "value",
			                    json_string("[redacted]"));
	/* the expected value of a secret field is the secret */
	if (ctx->sensitive && json_is_object(expect) && json_object_get(expect, "value"))
		json_object_set_new(expect, "value", json_string("[redacted]"));
	return copy;
}

int act_store_png(struct act_ctx *ctx, const char *b64, const char *kind, char *sha)
{
	unsigned char digest[crypto_hash_sha256_BYTES];
	unsigned char *png = NULL;
	json_t *list;
	size_t len = 0;
	char hex[65];
	char err[512] = "";
	char uri[128];
	int rc;

	/* The full PNG check (libpng decodes every row) runs in the record
	 * keeper, off the critical path: an invalid image is kept as invalid
	 * evidence there and reported with the next result. */
	rc = b64 ? evid_base64_decode(b64, strlen(b64), &png, &len) : -EVID_EBADB64;
	if (rc == 0 && act_secrets_mask_png(ctx, &png, &len) < 0) {
		/* a field that received a secret would show in it: not kept */
		free(png);
		act_add_evidence_error(ctx, "the screenshot shows a field that received a "
		                            "secret and could not be masked: it was not kept");
		gb_buf_appendf(&ctx->evidence,
		               "\n- evidence: no screenshot (a secret's field could not "
		               "be masked)");
		return -EVID_EINVAL;
	}
	if (rc < 0) {
		/* kept as invalid evidence by the record keeper, never dropped */
		act_add_evidence_error(ctx, rc == -EVID_EBADB64
		                                ? "the screenshot was not base64"
		                                : "the screenshot was not a valid PNG; it was "
		                                  "kept as invalid evidence");
		gb_buf_appendf(&ctx->evidence, "\n- evidence: the screenshot was invalid (%s)",
		               err[0] ? err : "not base64");
		if (png) {
			free(ctx->shot_png);
			ctx->shot_png = png;
			ctx->shot_len = len;
		}
		return rc;
	}
	crypto_hash_sha256(digest, png, len);
	gb_hex(digest, sizeof(digest), hex);
	snprintf(uri, sizeof(uri), "glassbox://artifact/%s", hex);
	if (sha)
		memcpy(sha, hex, sizeof(hex));
	list = json_object_get(ctx->out, "evidence");
	if (!list) {
		list = json_array();
		json_object_set_new(ctx->out, "evidence", list);
	}
	json_array_append_new(list,
	                      json_pack("{s:s, s:s, s:s, s:s, s:I}", "kind", kind, "sha256", hex,
	                                "uri", uri, "mime", "image/png", "size", (json_int_t)len));
	json_array_append_new(ctx->content,
	                      json_pack("{s:s, s:s, s:s, s:s}", "type", "resource_link", "uri", uri,
	                                "name", kind, "mimeType", "image/png"));
	gb_buf_appendf(&ctx->evidence, "\n- evidence: %s", uri);
	free(ctx->shot_png);
	ctx->shot_png = png;
	ctx->shot_len = len;
	return 0;
}

/* 1 when this action changed nothing a screenshot could show: only for
 * a tool whose descriptor says so (a script that may read without
 * writing). */
static int evidence_reusable(struct act_ctx *ctx)
{
	struct act_session *as = ctx->as;
	const char *mark = json_string_value(json_object_get(ctx->out, "_mark_after"));
	const char *url = json_string_value(json_object_get(ctx->out, "url"));

	if (!ctx->def->impl->evidence_if_changed || !as->last_shot_sha[0])
		return 0;
	/* before the page is re-read: decide from what the recorder saw */
	if (!mark)
		return 0;
	return !ctx->rec.navigated && json_array_size(ctx->rec.responses) == 0 &&
	       json_array_size(ctx->rec.dialogs) == 0 && !strcmp(mark, as->last_shot_mark) && url &&
	       !strcmp(url, as->last_shot_url);
}

/* Counts a main-frame navigation of the page while its screenshot waits:
 * the document it was asked of is gone, and will never paint. */
static void on_shot_page_event(void *user, const char *session_id, const char *method,
                               json_t *params)
{
	struct act_ctx *ctx = user;

	(void)session_id;
	if ((!strcmp(method, "Page.frameNavigated") &&
	     !json_object_get(json_object_get(params, "frame"), "parentId")) ||
	    !strcmp(method, "Runtime.executionContextsCleared"))
		ctx->shot_navigated++;
	else if (!strcmp(method, "Page.loadEventFired"))
		ctx->shot_loaded = ctx->shot_navigated;
}

void act_shot_unwatch(struct act_ctx *ctx)
{
	if (ctx->shot_watch > 0 && ctx->cdp)
		cdp_off(ctx->cdp, ctx->shot_watch);
	ctx->shot_watch = 0;
}

/* Asks for a screenshot of the page into ctx->shot_call, counting the
 * page's navigations from now on. Returns 0 or the cdp error. */
static int send_shot(struct act_ctx *ctx)
{
	uint64_t id;
	int rc;

	if (!ctx->shot_watch) {
		ctx->shot_navigated = 0;
		ctx->shot_loaded = 0;
		rc = cdp_on(ctx->cdp, ctx->psid, NULL, on_shot_page_event, ctx);
		ctx->shot_watch = rc > 0 ? rc : 0;
	}
	rc = cdp_send(ctx->cdp, ctx->psid, "Page.captureScreenshot", act_png_params(), &id);
	if (rc == 0)
		ctx->shot_call = id;
	return rc;
}

/* cdp_service's stop: the screenshot's reply, or a navigation since mark. */
struct shot_wait {
	struct act_ctx *ctx;
	int mark;
};

static int shot_settled(void *user)
{
	const struct shot_wait *w = user;

	return cdp_reply_ready(w->ctx->cdp, w->ctx->shot_call) || w->ctx->shot_navigated > w->mark;
}

/* cdp_service's stop: the page navigated since w->mark. */
static int shot_page_navigated(void *user)
{
	const struct shot_wait *w = user;

	return w->ctx->shot_navigated > w->mark;
}

/* cdp_service's stop: the document navigated to last has loaded. */
static int shot_page_loaded(void *user)
{
	const struct act_ctx *ctx = user;

	return ctx->shot_loaded >= ctx->shot_navigated;
}

/*
 * Collects ctx->shot_call into *res (new reference). A page that
 * navigates meanwhile (a click whose handler leaves the page) never
 * paints the document the screenshot was asked of: the request is
 * dropped at the navigation and the new document is asked once it has
 * loaded, so the capture ends as soon as the page does, not at the
 * call's deadline; a page that navigates once more fails it at once. A
 * capture the browser refuses is asked again once, as the new document
 * may not have been attached yet.
 * Returns 0, a negative cdp error, or -1 when the page navigated again,
 * with why in err (errlen bytes). shot_call is 0 after.
 */
static int await_shot(struct act_ctx *ctx, json_t **res, char *err, size_t errlen)
{
	struct cdp_error cerr = { 0 };
	struct shot_wait w = { ctx, 0 };
	int attempt, rc = 0;

	*res = NULL;
	for (attempt = 0; ctx->shot_call; attempt++) {
		rc = cdp_service(ctx->cdp, act_left_ms(ctx), shot_settled, &w);
		if (cdp_reply_ready(ctx->cdp, ctx->shot_call)) {
			rc = cdp_await(ctx->cdp, ctx->shot_call, 0, res, &cerr);
			ctx->shot_call = 0;
			if (rc < 0)
				snprintf(err, errlen, "%s", cerr.message);
			/* a capture the browser refused (a document in transition:
			 * "Not attached to an active page") is asked again once */
			if (rc != -CDP_EPROTOCOL || attempt > 0)
				break;
		} else {
			cdp_forget(ctx->cdp, ctx->shot_call);
			ctx->shot_call = 0;
			if (rc < 0) {
				snprintf(err, errlen, "%s", cdp_strerror(rc));
				break;
			}
			if (attempt > 0) {
				rc = -1;
				snprintf(err, errlen,
				         "the page navigated again while it was taken");
				break;
			}
		}
		/* refused before the page's navigation was seen (its document
		 * is being replaced; the events come next): that navigation is
		 * waited for, at most SHOT_NAV_WAIT_MS */
		if (ctx->shot_navigated == w.mark)
			cdp_service(ctx->cdp,
			            act_left_ms(ctx) < SHOT_NAV_WAIT_MS ? act_left_ms(ctx)
			                                                : SHOT_NAV_WAIT_MS,
			            shot_page_navigated, &w);
		/* navigated (or refused): the new document is asked once it has
		 * loaded, or as it is after SHOT_LOAD_WAIT_MS (at once when the
		 * page did not navigate) */
		rc = cdp_service(ctx->cdp,
		                 act_left_ms(ctx) < SHOT_LOAD_WAIT_MS ? act_left_ms(ctx)
		                                                      : SHOT_LOAD_WAIT_MS,
		                 shot_page_loaded, ctx);
		if (rc < 0 && rc != -CDP_ETIMEOUT) {
			snprintf(err, errlen, "%s", cdp_strerror(rc));
			break;
		}
		w.mark = ctx->shot_navigated;
		rc = send_shot(ctx);
		if (rc < 0) {
			snprintf(err, errlen, "%s", cdp_strerror(rc));
			break;
		}
	}
	act_shot_unwatch(ctx);
	return rc;
}

/* Asks for the evidence screenshot without waiting, so the browser
 * captures it while the page is re-read (the page no longer changes:
 * it has settled). act_record_evidence() collects it. */
void act_request_evidence(struct act_ctx *ctx)
{
	if (ctx->skip_evidence || sess_page_dialog(ctx->page) || evidence_reusable(ctx))
		return;
	send_shot(ctx);
}

/* Links the last evidence screenshot again: nothing the page shows has
 * changed since it was taken (same DOM mark and URL, no request, no
 * dialog), so it is the evidence of this action too. */
static int reuse_evidence(struct act_ctx *ctx)
{
	struct act_session *as = ctx->as;
	char uri[128];

	snprintf(uri, sizeof(uri), "glassbox://artifact/%s", as->last_shot_sha);
	json_object_set_new(ctx->out, "evidence",
	                    json_pack("[{s:s, s:s, s:s, s:s, s:b, s:s}]", "kind", "screenshot",
	                              "sha256", as->last_shot_sha, "uri", uri, "mime", "image/png",
	                              "unchanged", 1, "taken_by", as->last_shot_op));
	json_array_append_new(ctx->content,
	                      json_pack("{s:s, s:s, s:s, s:s}", "type", "resource_link", "uri", uri,
	                                "name", "screenshot", "mimeType", "image/png"));
	gb_buf_appendf(&ctx->evidence, "\n- evidence: %s (page unchanged since %s)", uri,
	               as->last_shot_op);
	return 0;
}

/* The URI of an operation's evidence screenshot before it is taken. */
static void deferred_uri(const struct act_ctx *ctx, char *uri, size_t len)
{
	snprintf(uri, len, "glassbox://evidence/%s/screenshot", ctx->operation_id);
}

/* Notes the screenshot sha as the session's last one: a later action
 * that changes nothing may reuse it. */
static void remember_shot(struct act_ctx *ctx, const char *sha, const char *mark)
{
	struct act_session *as = ctx->as;

	snprintf(as->last_shot_sha, sizeof(as->last_shot_sha), "%s", sha);
	snprintf(as->last_shot_op, sizeof(as->last_shot_op), "%s", ctx->operation_id);
	snprintf(as->last_shot_mark, sizeof(as->last_shot_mark), "%s", mark ? mark : "");
	snprintf(as->last_shot_url, sizeof(as->last_shot_url), "%s",
	         gb_or(json_string_value(json_object_get(ctx->out, "url")), ""));
}

void act_evidence_pending(struct act_session *s, const char *op)
{
	pthread_mutex_lock(&s->lock);
	snprintf(s->deferred_op, sizeof(s->deferred_op), "%s", op ? op : "");
	if (!op)
		pthread_cond_broadcast(&s->evidence_cond);
	pthread_mutex_unlock(&s->lock);
}

int act_defer_evidence(struct act_ctx *ctx)
{
	char uri[160];

	if (!ctx->shot_call || sess_page_dialog(ctx->page))
		return 0;
	deferred_uri(ctx, uri, sizeof(uri));
	json_object_set_new(ctx->out, "evidence",
	                    json_pack("[{s:s, s:s, s:s, s:b}]", "kind", "screenshot", "uri", uri,
	                              "mime", "image/png", "pending", 1));
	json_array_append_new(ctx->content,
	                      json_pack("{s:s, s:s, s:s, s:s}", "type", "resource_link", "uri", uri,
	                                "name", "screenshot", "mimeType", "image/png"));
	gb_buf_appendf(&ctx->evidence, "\n- evidence: %s (taken as this answer leaves)", uri);
	/* the state this answer reports is the one the screenshot shows: noted
	 * now (the result leaves with the answer), its sha once it is taken */
	remember_shot(ctx, "", json_string_value(json_object_get(ctx->out, "_mark_after")));
	json_object_del(ctx->out, "_mark_after");
	act_evidence_pending(ctx->as, ctx->operation_id);
	ctx->shot_deferred = 1;
	return 1;
}

int act_collect_evidence(struct act_ctx *ctx, unsigned char **png, size_t *len, char sha[65],
                         char *err, size_t errlen)
{
	unsigned char digest[crypto_hash_sha256_BYTES];
	struct cdp_error cerr = { 0 };
	json_t *res = NULL;
	const char *b64;
	int rc;

	*png = NULL;
	*len = 0;
	rc = await_shot(ctx, &res, cerr.message, sizeof(cerr.message));
	b64 = json_string_value(json_object_get(res, "data"));
	if (rc < 0 || !b64) {
		snprintf(err, errlen, "the evidence screenshot of %s could not be taken: %s",
		         ctx->operation_id, rc < 0 ? cerr.message : "the browser sent no image");
		rc = -1;
		goto out;
	}
	rc = evid_base64_decode(b64, strlen(b64), png, len);
	if (rc == 0 && act_secrets_mask_png(ctx, png, len) < 0) {
		snprintf(err, errlen,
		         "the evidence screenshot of %s shows a field that received a secret and "
		         "could not be masked: it was not kept",
		         ctx->operation_id);
		rc = -1;
		goto out;
	}
	if (rc < 0) {
		snprintf(err, errlen, "the evidence screenshot of %s was not base64",
		         ctx->operation_id);
		rc = -1;
		goto out;
	}
	crypto_hash_sha256(digest, *png, *len);
	gb_hex(digest, sizeof(digest), sha);
	snprintf(ctx->as->last_shot_sha, sizeof(ctx->as->last_shot_sha), "%s", sha);
out:
	if (rc < 0) {
		free(*png);
		*png = NULL;
		*len = 0;
	}
	json_decref(res);
	return rc;
}

/* Takes (or collects) the evidence screenshot after an action and stores
 * it. While a JS dialog is open the page cannot paint: the evidence then
 * waits for browser_handle_dialog, whose own evidence shows the outcome. */
int act_record_evidence(struct act_ctx *ctx)
{
	struct cdp_error err = { 0 };
	const char *mark = json_string_value(json_object_get(ctx->out, "_mark_after"));
	json_t *res = NULL;
	char sha[65];
	int rc;

	if (sess_page_dialog(ctx->page)) {
		gb_buf_appendf(&ctx->evidence, "\n- evidence: taken after the dialog is handled");
		return 0;
	}
	if (!ctx->shot_call && evidence_reusable(ctx)) {
		rc = reuse_evidence(ctx);
		goto out;
	}
	rc = ctx->shot_call ? 0 : send_shot(ctx);
	if (rc == 0)
		rc = await_shot(ctx, &res, err.message, sizeof(err.message));
	if (rc == -CDP_ECLOSED || rc == -CDP_ECANCELLED) {
		rc = act_connection_failed(ctx, rc, "taking the evidence screenshot");
		goto out;
	}
	if (rc < 0) {
		/* the action's outcome stands: only its screenshot is missing */
		char msg[sizeof(err.message) + 48];

		snprintf(msg, sizeof(msg), "the evidence screenshot could not be taken: %s",
		         err.message);
		act_add_evidence_error(ctx, msg);
		gb_buf_appendf(&ctx->evidence, "\n- evidence: no screenshot (%s)", err.message);
		goto out;
	}
	if (rc == 0)
		rc = act_store_png(ctx, json_string_value(json_object_get(res, "data")),
		                   "screenshot", sha);
	if (rc == 0)
		remember_shot(ctx, sha, mark);
out:
	json_object_del(ctx->out, "_mark_after");
	json_decref(res);
	return rc;
}

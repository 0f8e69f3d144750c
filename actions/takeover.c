/*
 * takeover.c - a person takes an agent session's browser from the web
 * console, acts in it, and hands it back (docs/console.md).
 *
 * Design note. The state is the session's console_live (console/live.h),
 * shared with the front. The worker calls act_takeover_service() between
 * calls (from its idle loop) to run the screencast, send a person's input
 * to the page and record the take-over's start and end; and
 * act_takeover_before_call() before each call: while a person has the
 * browser the call is refused with human_control, and the first answer
 * after a hand-back carries what the person did (URL, DOM digest,
 * requests before and after, and the evidence screenshot). Every step is
 * a record in the session's audit chain with actor "human", the person's
 * credential name as the actor's user and its id as the actor's token.
 * Text a person types into a password field is recorded as its length.
 * Worker thread only, except act_session_live and act_session_wake.
 */
#include "actions/actions-private.h"

#include "cdp/cdp.h"
#include "common/log.h"
#include "console/live.h"
#include "evidence/audit.h"
#include "evidence/evidence.h"
#include "sessions/sessions.h"

#include <sodium.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MOD "actions"
/* One CDP call of the console's work. */
#define TAKEOVER_CDP_MS 5000
/* Requests of the page remembered during a take-over. */
#define TAKEOVER_REQUESTS_MAX 50

static const char digest_js[] =
    "(() => { const e = document.documentElement; const s = e ? e.outerHTML : '';"
    " let h = 2166136261; for (let i = 0; i < s.length; i++) { h ^= s.charCodeAt(i);"
    " h = Math.imul(h, 16777619); } return (h >>> 0).toString(16) + ':' + s.length; })()";

/* Whether the focus is in a password field (or cannot be told). */
static const char password_focus_js[] =
    "(() => { let e = document.activeElement;"
    " while (e && e.contentDocument && e.contentDocument.activeElement)"
    "  e = e.contentDocument.activeElement;"
    " return !!e && (e.type === 'password' || e.autocomplete === 'current-password' ||"
    "  e.autocomplete === 'new-password'); })()";

/* See actions.h. */
struct console_live *act_session_live(struct act_session *s)
{
	return s->live;
}

/* See actions.h. */
void act_session_wake(struct act_session *s)
{
	pthread_mutex_lock(&s->lock);
	pthread_cond_signal(&s->cond);
	if (s->wake_cdp)
		cdp_wake(s->wake_cdp);
	pthread_mutex_unlock(&s->lock);
}

/* The browser's connection and page session, when it has a live one. */
static struct cdp_conn *live_page(struct act_session *s, const char **psid, const char **url)
{
	struct sess_page *page;

	*psid = NULL;
	*url = "";
	if (!s->sess || sess_get_state(s->sess) == SESS_FAILED || !cdp_is_open(sess_cdp(s->sess)))
		return NULL;
	page = sess_current_page(s->sess);
	if (!page)
		return NULL;
	*psid = sess_page_session_id(page);
	*url = sess_page_url(page);
	return sess_cdp(s->sess);
}

/* Evaluates expression on the current page in glassbox's world, where the
 * page's scripts cannot redefine what it reads; a new reference to its
 * value, or NULL. */
static json_t *evaluate(struct act_session *s, struct cdp_conn *cdp, const char *psid,
                        const char *expression)
{
	struct sess_page *page = sess_current_page(s->sess);
	struct cdp_error e;
	json_t *res = NULL, *v = NULL;

	if (act_world_call(cdp, s->sess, psid, page ? sess_page_main_frame_id(page) : NULL,
	                   expression, TAKEOVER_CDP_MS, &res, &e) == 0 &&
	    !json_object_get(res, "exceptionDetails"))
		v = json_incref(json_object_get(json_object_get(res, "result"), "value"));
	json_decref(res);
	return v;
}

/* Appends a record of kind (body taken) to the session's chain as the
 * person by / credential. */
static void record_human(struct act_session *s, const char *kind, const char *by,
                         const char *credential, json_t *body, json_t *artifacts)
{
	struct evid_audit_entry e = { 0 };
	char err[512];

	json_object_set_new(body, "actor", json_string("human"));
	json_object_set_new(body, "by", json_string(by));
	json_object_set_new(body, "credential", json_string(credential));
	json_object_set_new(body, "agent_session", json_string(s->id));
	e.tenant = s->tenant;
	e.kind = kind;
	e.actor.tenant = s->tenant;
	e.actor.user = by;
	e.actor.token = credential;
	e.session_id = s->sess ? sess_id(s->sess) : s->id; /* as the tool calls' records */
	e.body = body;
	e.artifacts = artifacts;
	act_keeper_flush(s->keeper); /* the agent's records first, in order */
	if (s->audit && evid_audit_append(s->audit, &e, NULL, err, sizeof(err)) < 0)
		GB_LOGW(MOD, "the record of %s (%s) could not be kept: %s", kind, by, err);
	json_decref(body);
}

/* cdp_event_fn: the page's requests while a person has the browser. */
static void on_request(void *user, const char *session_id, const char *method, json_t *params)
{
	struct act_session *s = user;
	json_t *req = json_object_get(params, "request");

	(void)session_id;
	(void)method;
	s->human_requests_seen++;
	if (json_array_size(s->human_requests) < TAKEOVER_REQUESTS_MAX)
		json_array_append_new(
		    s->human_requests,
		    json_pack("{s:s, s:s}", "method",
		              gb_or(json_string_value(json_object_get(req, "method")), ""), "url",
		              gb_or(json_string_value(json_object_get(req, "url")), "")));
}

/* A person took the browser: what the page was, and a listener for its
 * requests. */
static void began(struct act_session *s, struct cdp_conn *cdp, const char *psid, const char *url,
                  const char *by, const char *credential)
{
	json_t *digest = cdp ? evaluate(s, cdp, psid, digest_js) : NULL;

	json_decref(s->human_before);
	s->human_before =
	    json_pack("{s:s, s:s, s:I}", "url", url, "dom_digest",
	              gb_or(json_string_value(digest), ""), "began_ms", (json_int_t)gb_now_ms());
	json_decref(s->human_requests);
	s->human_requests = json_array();
	s->human_requests_seen = 0;
	s->human_events = 0;
	s->human_cdp = cdp;
	s->human_listener = cdp ? cdp_on(cdp, NULL, "Network.requestWillBeSent", on_request, s) : 0;
	record_human(
	    s, "human_control_began", by, credential,
	    json_pack("{s:s, s:s}", "url", url, "dom_digest", gb_or(json_string_value(digest), "")),
	    NULL);
	json_decref(digest);
}

/* The evidence screenshot at the hand-back, stored; its artifact entry
 * (new), or NULL. */
static json_t *keep_screenshot(struct act_session *s, struct cdp_conn *cdp, const char *psid,
                               const char *url)
{
	struct evid_meta meta = { .tenant = s->tenant,
		                  .kind = EVID_KIND_SCREENSHOT,
		                  .mime = "image/png",
		                  .session_id = s->id,
		                  .tool = "human_control",
		                  .url = url };
	struct cdp_error e;
	struct evid_ref ref;
	json_t *res = NULL, *artifact = NULL;
	unsigned char *png = NULL;
	size_t len = 0;
	const char *b64;
	char err[512];

	if (cdp_call(cdp, psid, "Page.captureScreenshot", act_png_params(), TAKEOVER_CDP_MS, &res,
	             &e) < 0)
		goto out;
	b64 = json_string_value(json_object_get(res, "data"));
	if (!b64 || evid_base64_decode(b64, strlen(b64), &png, &len) < 0)
		goto out;
	if (evid_store_put(s->store, &meta, png, len, &ref, err, sizeof(err)) == 0)
		artifact = evid_artifact_json(EVID_KIND_SCREENSHOT, "image/png", &ref, 1);
	else
		GB_LOGW(MOD, "the screenshot after a take-over could not be kept: %s", err);
out:
	free(png);
	json_decref(res);
	return artifact;
}

/* The browser was handed back: what changed, recorded, and kept for the
 * agent's next answer. */
static void ended(struct act_session *s, struct cdp_conn *cdp, const char *psid, const char *url,
                  const char *by, const char *credential)
{
	json_t *digest = cdp ? evaluate(s, cdp, psid, digest_js) : NULL;
	json_t *shot = cdp ? keep_screenshot(s, cdp, psid, url) : NULL;
	json_t *artifacts = json_array();
	json_t *note, *evidence = json_array();
	const char *before_digest =
	    json_string_value(json_object_get(s->human_before, "dom_digest"));
	const char *after_digest = gb_or(json_string_value(digest), "");
	char at[40];

	if (s->human_listener > 0 && s->human_cdp == cdp && cdp)
		cdp_off(cdp, s->human_listener);
	s->human_listener = 0;
	s->human_cdp = NULL;
	if (shot) {
		json_array_append(artifacts, shot);
		json_array_append_new(
		    evidence, json_pack("{s:s, s:s+}", "kind", EVID_KIND_SCREENSHOT, "uri",
		                        "glassbox://artifact/",
		                        json_string_value(json_object_get(shot, "sha256"))));
	}
	gb_utc_iso8601(at, sizeof(at));
	note = json_pack(
	    "{s:s, s:s, s:s, s:i, s:s, s:s, s:s, s:s, s:b, s:I, s:O, s:o}", "by", by, "credential",
	    credential, "ended_at", at, "events", s->human_events, "url_before",
	    gb_or(json_string_value(json_object_get(s->human_before, "url")), ""), "url_after", url,
	    "dom_digest_before", gb_or(before_digest, ""), "dom_digest_after", after_digest,
	    "dom_changed", !before_digest || strcmp(before_digest, after_digest) != 0,
	    "requests_seen", (json_int_t)s->human_requests_seen, "requests",
	    s->human_requests ? s->human_requests : json_array(), "evidence", evidence);
	record_human(s, "human_control_ended", by, credential, json_deep_copy(note), artifacts);
	json_decref(artifacts);
	json_decref(shot);
	json_decref(digest);
	json_decref(s->human_note);
	s->human_note = note;
}

/* One input event of the person, sent and recorded. */
static void send_input(struct act_session *s, struct cdp_conn *cdp, const char *psid,
                       const char *url, struct console_input *in)
{
	json_t *body =
	    json_pack("{s:s, s:s}", "type", console_input_kind_name(in->kind), "url", url);
	json_t *secret = NULL;
	char err[512] = "";
	int rc;

	if (in->kind == CONSOLE_INPUT_CLICK) {
		json_object_set_new(body, "x", json_real(in->x));
		json_object_set_new(body, "y", json_real(in->y));
	} else if (in->kind == CONSOLE_INPUT_KEY) {
		json_object_set_new(body, "key", json_string(in->key));
	} else {
		secret = cdp ? evaluate(s, cdp, psid, password_focus_js) : NULL;
		/* a password field, or one that could not be told: the length only */
		if (json_is_false(secret))
			json_object_set_new(body, "text", json_string(in->text));
		else
			json_object_set_new(body, "text_redacted", json_true());
		json_object_set_new(body, "length", json_integer((json_int_t)strlen(in->text)));
	}
	rc = cdp ? console_live_dispatch(cdp, psid, in, TAKEOVER_CDP_MS, err, sizeof(err)) : -1;
	if (!cdp)
		snprintf(err, sizeof(err), "the session has no browser open");
	json_object_set_new(body, "ok", json_boolean(rc == 0));
	if (rc < 0)
		json_object_set_new(body, "error", json_string(err));
	s->human_events++;
	record_human(s, "human_input", in->by, in->credential, body, NULL);
	json_decref(secret);
	sodium_memzero(in, sizeof(*in));
}

/* See actions-private.h. */
void act_takeover_service(struct act_session *s)
{
	struct console_input in;
	struct cdp_conn *cdp;
	const char *psid, *url;
	char by[CONSOLE_NAME_MAX], credential[CONSOLE_NAME_MAX];
	int b, e;

	if (!s->live)
		return;
	cdp = live_page(s, &psid, &url);
	if (strcmp(s->live_browser, s->sess ? sess_id(s->sess) : "") != 0) {
		/* another browser (or none): listeners on the old connection went with it,
		 * and a new connection at the same address must not lose its own */
		console_live_screencast(s->live, NULL, NULL);
		s->human_listener = 0;
		s->human_cdp = NULL;
		snprintf(s->live_browser, sizeof(s->live_browser), "%s",
		         s->sess ? sess_id(s->sess) : "");
	}
	console_live_set_page(s->live, url, s->sess ? sess_id(s->sess) : NULL);
	console_live_screencast(s->live, cdp, psid);
	console_live_take_transitions(s->live, &b, &e, by, sizeof(by), credential,
	                              sizeof(credential));
	if (b)
		began(s, cdp, psid, url, by, credential);
	while (console_live_pop_input(s->live, &in)) {
		send_input(s, cdp, psid, url, &in);
		cdp = live_page(s, &psid, &url); /* a click may have navigated */
	}
	if (e)
		ended(s, cdp, psid, url, by, credential);
}

/* The call being answered with the take-over's note, and its own
 * on_done (one call at a time runs on a worker). */
static __thread struct act_call *noted_call;
static __thread void (*noted_on_done)(struct act_call *, json_t *);
static __thread json_t *noted_note;

/* on_done of the first call after a hand-back: the answer says that a
 * person acted and what changed, then goes on to the transport. */
static void on_done_noted(struct act_call *call, json_t *result)
{
	json_t *sc = json_object_get(result, "structuredContent");
	json_t *content = json_object_get(result, "content");
	void (*done)(struct act_call *, json_t *) = noted_on_done;
	json_t *note = noted_note;
	const char *uri;
	char text[3072];

	if (call != noted_call || !done)
		return; /* not the call noted: cannot happen, one call runs at a time */
	noted_call = NULL;
	noted_on_done = NULL;
	noted_note = NULL;
	call->on_done = done;
	if (json_is_object(sc))
		json_object_set(sc, "human_control", note);
	snprintf(text, sizeof(text),
	         "Note: a person (%s) had the browser before this call and acted in it (%d "
	         "input events): the page went from %s to %s; the DOM %s (digest %s -> %s); %lld "
	         "requests were made. Take a snapshot before acting on earlier refs. Evidence: "
	         "%s",
	         json_string_value(json_object_get(note, "by")),
	         (int)json_integer_value(json_object_get(note, "events")),
	         json_string_value(json_object_get(note, "url_before")),
	         json_string_value(json_object_get(note, "url_after")),
	         json_is_true(json_object_get(note, "dom_changed")) ? "changed" : "did not change",
	         json_string_value(json_object_get(note, "dom_digest_before")),
	         json_string_value(json_object_get(note, "dom_digest_after")),
	         (long long)json_integer_value(json_object_get(note, "requests_seen")),
	         gb_or(json_string_value(json_object_get(
	                   json_array_get(json_object_get(note, "evidence"), 0), "uri")),
	               "none kept"));
	uri = json_string_value(
	    json_object_get(json_array_get(json_object_get(note, "evidence"), 0), "uri"));
	if (json_is_array(content)) {
		json_array_insert_new(content, 0,
		                      json_pack("{s:s, s:s}", "type", "text", "text", text));
		if (uri)
			json_array_insert_new(content, 1,
			                      json_pack("{s:s, s:s, s:s, s:s}", "type",
			                                "resource_link", "uri", uri, "name",
			                                "the page when the person handed it back",
			                                "mimeType", "image/png"));
	}
	json_decref(note);
	done(call, result);
}

/* See actions-private.h. */
int act_takeover_before_call(struct act_session *s, struct act_call *call)
{
	char by[CONSOLE_NAME_MAX], message[512];
	json_t *result;

	if (!s->live)
		return 0;
	act_takeover_service(s);
	if (console_live_human(s->live, by, sizeof(by))) {
		snprintf(message, sizeof(message),
		         "a person (%s) has the browser of this session in the web console: "
		         "nothing was done; retry later, once they hand it back",
		         by);
		result = json_pack(
		    "{s:[{s:s, s:s}], s:{s:b, s:s, s:{s:s, s:s}, s:{s:s, s:s}}, s:b}", "content",
		    "type", "text", "text", message, "structuredContent", "ok", 0, "tool",
		    call->def->name, "error", "code", "human_control", "message", message,
		    "human_control", "by", by, "state", "human", "isError", 1);
		call->on_done(call, result);
		return 1;
	}
	if (s->human_note) {
		noted_call = call;
		noted_on_done = call->on_done;
		noted_note = s->human_note;
		s->human_note = NULL;
		call->on_done = on_done_noted;
	}
	return 0;
}

/* See actions-private.h. */
void act_takeover_free(struct act_session *s)
{
	json_decref(s->human_note);
	json_decref(s->human_before);
	json_decref(s->human_requests);
	console_live_unref(s->live);
	s->live = NULL;
}

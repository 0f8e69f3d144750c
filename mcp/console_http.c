/*
 * console_http.c - the web console on the admin listener (docs/console.md):
 * login, the routes, approvals decided with the evidence in front of the
 * person, and taking over a session's browser. The pages themselves are
 * console_pages.c.
 *
 * Design note
 * - Threads: the front only. Nothing here waits on a browser: frames are
 *   copied from the session's console_live, input is queued for its
 *   worker (act_session_wake), decisions go to the store.
 * - Auth: a person logs in with the admin token or a console credential
 *   (console.h); the login is an HttpOnly, SameSite=Strict cookie scoped
 *   to /console. Every POST carries the login's CSRF token as the form
 *   field csrf, checked in constant time, or is refused (403). A
 *   credential of one tenant sees that tenant's sessions, approvals and
 *   trail only: another tenant's ids are "not found", as if unknown.
 * - A decision is taken through the service's own store handle and
 *   appended to the approval's own tenant's audit chain, with the
 *   credential's id (actor.token) and name (by, actor.user).
 * - Host must be a loopback name when the admin listener is on loopback,
 *   and a POST's Origin (when sent) this machine or listen.allowed_origins
 *   (the /mcp checks, http_headers.c): no DNS rebinding, no other site's
 *   forms.
 * - Responses carry a strict Content-Security-Policy (no inline script or
 *   style), nosniff, no referrer, no caching, no framing.
 * - Hostile input: bodies are bounded (max_body_bytes), forms parsed by
 *   libmicrohttpd's post processor into fixed fields, ids checked for
 *   their shape before any lookup.
 */
#include "mcp/console-private.h"
#include "mcp/http-headers.h"

#include <math.h>
#include <microhttpd.h>
#include <sodium.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/log.h"
#include "common/metrics.h"
#include "evidence/audit.h"
#include "evidence/evidence.h"
#include "evidence/index.h"
#include "store/store.h"

#define MOD "console"
#define PREFIX "/console"
#define COOKIE_NAME "gb_console"
#define FORM_FIELD_MAX 1024

static const char csp[] = "default-src 'none'; script-src 'self'; style-src 'self'; "
                          "img-src 'self' blob:; connect-src 'self'; form-action 'self'; "
                          "frame-ancestors 'none'; base-uri 'none'";

/* ---- responses ---------------------------------------------------------- */

/* The headers every console response carries. */
static void secure_headers(struct http_req *req)
{
	mcp_http_resp_header(&req->resp, "Content-Security-Policy", csp);
	mcp_http_resp_header(&req->resp, "X-Content-Type-Options", "nosniff");
	mcp_http_resp_header(&req->resp, "Referrer-Policy", "same-origin");
	mcp_http_resp_header(&req->resp, "Cache-Control", "no-store");
	mcp_http_resp_header(&req->resp, "X-Frame-Options", "DENY");
}

/* See console-private.h. */
void mcp_console_html(struct http_req *req, int status, struct gb_buf *page)
{
	secure_headers(req);
	mcp_http_respond(req, status, "text/html; charset=utf-8", page->data ? page->data : "",
	                 page->len);
	gb_buf_free(page);
}

/* See console-private.h. */
void mcp_console_json(struct http_req *req, int status, json_t *value)
{
	secure_headers(req);
	mcp_http_respond_json(req, status, value);
}

/* A JSON {"error": message}. */
static void json_error(struct http_req *req, int status, const char *message)
{
	mcp_console_json(req, status, json_pack("{s:s}", "error", message));
}

/* A 303 to location. */
static void redirect(struct http_req *req, const char *location)
{
	secure_headers(req);
	mcp_http_resp_header(&req->resp, "Location", location);
	mcp_http_respond(req, 303, "text/plain; charset=utf-8", "see other\n", 10);
}

/* See console-private.h. */
void mcp_console_error_page(struct http_req *req, const struct console_login *login, int status,
                            const char *message)
{
	struct gb_buf b;

	gb_buf_init(&b, 1 << 16);
	console_html_begin(&b, "Refused", login);
	gb_buf_appendf(&b, "<h1>Not done</h1><p class=\"error\">");
	console_html_text(&b, message);
	gb_buf_appendf(&b, "</p>");
	console_html_end(&b);
	mcp_console_html(req, status, &b);
}

/* ---- the request ------------------------------------------------------- */

/* The form fields the console reads. */
enum field { F_CSRF, F_TOKEN, F_REASON, F_KIND, F_X, F_Y, F_TEXT, F_KEY, F_COUNT };
static const char *const field_names[F_COUNT] = { "csrf", "token", "reason", "kind",
	                                          "x",    "y",     "text",   "key" };

struct form {
	char value[F_COUNT][FORM_FIELD_MAX + 1];
	size_t len[F_COUNT];
	int seen[F_COUNT];
	int too_long;
};

/* MHD_PostDataIterator: keeps the known fields (in pieces), bounded. */
static enum MHD_Result form_field(void *cls, enum MHD_ValueKind kind, const char *key,
                                  const char *filename, const char *content_type,
                                  const char *transfer_encoding, const char *data, uint64_t off,
                                  size_t size)
{
	struct form *f = cls;
	size_t i;

	(void)kind;
	(void)filename;
	(void)content_type;
	(void)transfer_encoding;
	(void)off;
	for (i = 0; i < F_COUNT; i++) {
		if (!key || strcmp(key, field_names[i]) != 0)
			continue;
		f->seen[i] = 1;
		if (f->len[i] + size > FORM_FIELD_MAX) {
			f->too_long = 1;
			return MHD_YES;
		}
		memcpy(f->value[i] + f->len[i], data, size);
		f->len[i] += size;
		f->value[i][f->len[i]] = '\0';
	}
	return MHD_YES;
}

/* Parses req's urlencoded body into f: 0, or -1 (the response is set). */
static int read_form(struct http_req *req, struct form *f)
{
	struct MHD_PostProcessor *pp;
	char ctype[128];
	enum MHD_Result rc;

	memset(f, 0, sizeof(*f));
	if (!mcp_http_header(req, "Content-Type", ctype, sizeof(ctype)) ||
	    strncmp(ctype, "application/x-www-form-urlencoded", 33) != 0) {
		json_error(req, 415, "send the form as application/x-www-form-urlencoded");
		return -1;
	}
	pp = MHD_create_post_processor(req->conn, 16 << 10, form_field, f);
	if (!pp) {
		json_error(req, 400, "the form could not be read");
		return -1;
	}
	rc = req->body.len ? MHD_post_process(pp, req->body.data, req->body.len) : MHD_YES;
	MHD_destroy_post_processor(pp);
	if (rc != MHD_YES || f->too_long) {
		json_error(req, 400,
		           "the form could not be read (a field is over 1024 bytes?): send "
		           "shorter values");
		return -1;
	}
	return 0;
}

/* The login the request's cookie names, or NULL. */
static struct console_login *request_login(struct mcp_console *c, struct http_req *req)
{
	const char *cookie = MHD_lookup_connection_value(req->conn, MHD_COOKIE_KIND, COOKIE_NAME);

	return cookie ? console_login_find(c->logins, cookie) : NULL;
}

/* Whether s is an id the console may look up: 1..max of [A-Za-z0-9_.-]. */
static int id_ok(const char *s, size_t max)
{
	size_t n = strlen(s);

	return n > 0 && n <= max &&
	       strspn(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.-") == n;
}

/* Splits "a/b/c" (after a prefix) into at most n parts in place. */
static size_t split_path(char *p, char **parts, size_t n)
{
	size_t k = 0;
	char *slash;

	while (p && *p && k < n) {
		parts[k++] = p;
		slash = strchr(p, '/');
		if (!slash)
			break;
		*slash = '\0';
		p = slash + 1;
	}
	return k;
}

/* ---- sessions ---------------------------------------------------------- */

/* See console-private.h. */
struct http_session *mcp_console_session(struct serve *s, const struct console_login *login,
                                         const char *id)
{
	struct http_session *hs;

	if (!id_ok(id, 64))
		return NULL;
	hs = hs_find(&s->table, id, NULL);
	if (hs && (hs->state != HS_OPEN || !console_cred_sees(&login->cred, hs->tenant->name))) {
		hs_unref(hs);
		hs = NULL;
	}
	return hs;
}

/* GET .../frame?after=N: the newest frame (image/jpeg, image/png while a
 * session recording shares the screencast), 204 when none is
 * newer; at most frames_per_second per login. */
static void get_frame(struct serve *s, struct http_req *req, struct console_login *login,
                      struct console_live *live, struct act_session *as)
{
	const char *after_s =
	    MHD_lookup_connection_value(req->conn, MHD_GET_ARGUMENT_KIND, "after");
	int64_t now = gb_now_ms();
	int64_t min_gap = 800 / s->cfg->console.frames_per_second;
	unsigned long long after = after_s ? strtoull(after_s, NULL, 10) : 0;
	unsigned char *image = NULL;
	const char *mime;
	size_t len = 0;
	uint64_t seq;
	int w, h;
	char num[32];

	if (now - login->last_frame_ms < min_gap) {
		req->resp.retry_after_s = 1;
		json_error(
		    req, 429,
		    "frames come at most console.frames_per_second times a second per viewer: "
		    "ask again later");
		return;
	}
	login->last_frame_ms = now;
	if (!console_live_frame(live, s->cfg->console.frames_per_second, (uint64_t)after, &image,
	                        &len, &mime, &seq, &w, &h)) {
		act_session_wake(as); /* start the screencast if it is not on */
		secure_headers(req);
		snprintf(num, sizeof(num), "%llu", (unsigned long long)seq);
		mcp_http_resp_header(&req->resp, "X-Frame-Seq", num);
		mcp_http_respond(req, 204, "", NULL, 0);
		return;
	}
	secure_headers(req);
	snprintf(num, sizeof(num), "%llu", (unsigned long long)seq);
	mcp_http_resp_header(&req->resp, "X-Frame-Seq", num);
	snprintf(num, sizeof(num), "%d", w);
	mcp_http_resp_header(&req->resp, "X-Css-Width", num);
	snprintf(num, sizeof(num), "%d", h);
	mcp_http_resp_header(&req->resp, "X-Css-Height", num);
	mcp_http_respond(req, 200, mime, (const char *)image, len);
	free(image);
}

/* One of a person's input events from the form. */
static int input_from_form(const struct form *f, const struct console_login *login,
                           struct console_input *in, char *err, size_t errlen)
{
	char *end;

	memset(in, 0, sizeof(*in));
	snprintf(in->by, sizeof(in->by), "%s", login->cred.name);
	snprintf(in->credential, sizeof(in->credential), "%s", login->cred.id);
	if (!strcmp(f->value[F_KIND], "click")) {
		in->kind = CONSOLE_INPUT_CLICK;
		in->x = strtod(f->value[F_X], &end);
		if (!f->len[F_X] || *end)
			goto bad_xy;
		in->y = strtod(f->value[F_Y], &end);
		if (!f->len[F_Y] || *end || !isfinite(in->x) || !isfinite(in->y) || in->x < 0 ||
		    in->y < 0 || in->x > 20000 || in->y > 20000)
			goto bad_xy;
		return 0;
	}
	if (!strcmp(f->value[F_KIND], "type")) {
		in->kind = CONSOLE_INPUT_TEXT;
		if (!f->len[F_TEXT] || f->len[F_TEXT] > CONSOLE_LIVE_TEXT_MAX) {
			snprintf(err, errlen, "text must be 1 to %d bytes", CONSOLE_LIVE_TEXT_MAX);
			return -1;
		}
		memcpy(in->text, f->value[F_TEXT], f->len[F_TEXT] + 1);
		return 0;
	}
	if (!strcmp(f->value[F_KIND], "key")) {
		in->kind = CONSOLE_INPUT_KEY;
		if (!f->len[F_KEY] || f->len[F_KEY] >= sizeof(in->key)) {
			snprintf(err, errlen,
			         "key must name a key: Enter, Tab, Backspace, Escape, "
			         "ArrowUp, ArrowDown, ArrowLeft, ArrowRight");
			return -1;
		}
		memcpy(in->key, f->value[F_KEY], f->len[F_KEY] + 1);
		return 0;
	}
	snprintf(err, errlen, "kind must be click (with x, y), type (with text) or key (with key)");
	return -1;
bad_xy:
	snprintf(err, errlen, "a click needs x and y: CSS pixels of the page, 0 to 20000");
	return -1;
}

/* POST .../take, .../release, .../input (the body is in). */
static void post_session(struct http_req *req, struct console_login *login, const char *what,
                         struct console_live *live, struct act_session *as, const struct form *f)
{
	struct console_input in;
	char err[512];
	int rc = -1;

	if (!login->cred.approver) {
		json_error(req, 403,
		           "a viewer cannot take over a session: log in with an approver's token");
		return;
	}
	if (!strcmp(what, "take"))
		rc = console_live_take(live, login->cred.name, login->cred.id, err, sizeof(err));
	else if (!strcmp(what, "release"))
		rc = console_live_release(live, err, sizeof(err));
	else if (input_from_form(f, login, &in, err, sizeof(err)) == 0) {
		rc = console_live_push_input(live, &in, err, sizeof(err));
		sodium_memzero(&in, sizeof(in));
	} else {
		json_error(req, 400, err);
		return;
	}
	if (rc < 0) {
		json_error(req, 409, err);
		return;
	}
	if (strcmp(what, "input") != 0)
		GB_LOGI(MOD, "%s %s session %s in the web console", login->cred.name,
		        !strcmp(what, "take") ? "took over" : "handed back", act_session_id(as));
	act_session_wake(as);
	if (!strcmp(what,
	            "input")) /* sent by the worker; its record says whether it reached the page */
		mcp_console_json(
		    req, 202,
		    json_pack("{s:b, s:o}", "queued", 1, "live", console_live_status(live)));
	else
		mcp_console_json(
		    req, 200, json_pack("{s:b, s:o}", "ok", 1, "live", console_live_status(live)));
}

/* /console/sessions/<id>[/<what>] */
static void route_session(struct serve *s, struct http_req *req, struct console_login *login,
                          const char *method, char *id, const char *what, const struct form *f)
{
	struct http_session *hs = mcp_console_session(s, login, id);
	struct act_session *as =
	    hs ? mcp_server_session(hs->srv, MCP_SESSION_IF_ANY, NULL, 0) : NULL;
	struct console_live *live = as ? act_session_live(as) : NULL;

	if (!hs) {
		if (what)
			json_error(req, 404,
			           "no such session (it may have ended): see /console/sessions");
		else
			mcp_console_error_page(req, login, 404,
			                       "no such session (it may have ended already)");
		goto out;
	}
	if (!what && !strcmp(method, "GET")) {
		mcp_console_live_page(s, req, login, hs, live);
	} else if (!live) {
		json_error(req, 409, "the session has not started its browser yet: try again soon");
	} else if (!strcmp(what, "frame") && !strcmp(method, "GET")) {
		get_frame(s, req, login, live, as);
	} else if (!strcmp(what, "status") && !strcmp(method, "GET")) {
		mcp_console_json(req, 200, mcp_console_live_status(s, login, hs, live));
	} else if ((!strcmp(what, "take") || !strcmp(what, "release") || !strcmp(what, "input")) &&
	           !strcmp(method, "POST")) {
		post_session(req, login, what, live, as, f);
	} else {
		json_error(req, 404, "not found: GET frame, status; POST take, release, input");
	}
out:
	hs_unref(hs);
}

/* ---- approvals --------------------------------------------------------- */

/* The decision's record in the approval's own tenant's chain. */
static void record_decision(struct mcp_console *c, const struct store_approval *a,
                            const struct console_login *login, int approve)
{
	struct evid_audit_entry e = { 0 };
	json_t *body;
	char at[40], err[512];

	if (!c->audit)
		return;
	store_time_iso8601(a->decided_ms, at, sizeof(at));
	body =
	    json_pack("{s:s, s:s, s:s, s:s, s:s, s:s, s:s, s:I, s:s, s:s, s:s, s:s}", "approval_id",
	              a->id, "event", approve ? "approved" : "denied", "by", login->cred.name,
	              "credential", login->cred.id, "channel", "web-console", "reason", a->reason,
	              "at", at, "at_ms", (json_int_t)a->decided_ms, "tool", a->tool, "rule",
	              a->rule, "fingerprint", a->fingerprint, "summary", a->summary);
	e.tenant = a->tenant;
	e.kind = approve ? EVID_AUDIT_APPROVAL_GRANTED : EVID_AUDIT_APPROVAL_DENIED;
	e.actor.tenant = a->tenant;
	e.actor.user = login->cred.name;
	e.actor.token = login->cred.id;
	e.session_id = a->session[0] ? a->session : NULL;
	e.operation_id = a->operation_id[0] ? a->operation_id : NULL;
	e.body = body;
	if (evid_audit_append(c->audit, &e, NULL, err, sizeof(err)) < 0)
		GB_LOGE(MOD, "the decision on approval %s was taken but not recorded: %s", a->id,
		        err);
	json_decref(body);
}

/* POST /console/approvals/<id>/approve|deny */
static void post_decision(struct serve *s, struct http_req *req, struct console_login *login,
                          const char *id, int approve, const struct form *f)
{
	struct store_decider who = { 0 };
	struct store_approval a;
	const char *tenant = login->cred.tenant[0] ? login->cred.tenant : NULL;
	char err[768], where[128];
	int rc;

	if (!login->cred.approver) {
		mcp_console_error_page(req, login, 403,
		                       "a viewer cannot decide approvals: log in with an "
		                       "approver's token");
		return;
	}
	if (!s->hooks || !s->hooks->store || !id_ok(id, STORE_ID_MAX) ||
	    store_approval_get(s->hooks->store, tenant, id, &a, err, sizeof(err)) < 0) {
		mcp_console_error_page(req, login, 404, "no such approval");
		return;
	}
	who.by = login->cred.name;
	who.channel = "web-console";
	who.reason = f->len[F_REASON] ? f->value[F_REASON] : NULL;
	who.uid = -1;
	rc = store_approval_decide(s->hooks->store, a.tenant, id, approve, &who, &a, err,
	                           sizeof(err));
	if (rc < 0) {
		mcp_console_error_page(req, login, rc == -STORE_ESTATE ? 409 : 400, err);
		return;
	}
	record_decision(s->console, &a, login, approve);
	GB_LOGI(MOD, "approval %s %s by %s (%s) in the web console", a.id,
	        approve ? "approved" : "denied", login->cred.name, login->cred.id);
	snprintf(where, sizeof(where), PREFIX "/approvals?decided=%s", a.id);
	redirect(req, where);
}

/* ---- login ------------------------------------------------------------- */

/* POST /console/login: token -> a new login and its cookie. */
static void post_login(struct serve *s, struct http_req *req, struct form *f)
{
	const struct console_cred *cred =
	    console_cred_for_token(&s->cfg->console, s->cfg->admin_token_sha256, f->value[F_TOKEN]);
	struct console_login *login;
	char cookie[160];

	sodium_memzero(f->value[F_TOKEN], sizeof(f->value[F_TOKEN]));
	if (!cred) {
		gb_metrics_counter_add("glassbox_auth_failures_total", NULL, 1);
		mcp_console_login_page(req, 401,
		                       "that token is not the admin token or a console "
		                       "credential's: check it and try again");
		return;
	}
	login = console_login_start(s->console->logins, cred);
	snprintf(cookie, sizeof(cookie),
	         COOKIE_NAME "=%s; Path=" PREFIX "; HttpOnly; SameSite=Strict; Max-Age=%d",
	         login->cookie, CONSOLE_LOGIN_IDLE_MS / 1000);
	mcp_http_resp_header(&req->resp, "Set-Cookie", cookie);
	GB_LOGI(MOD, "%s (%s) logged in to the web console", cred->name, cred->id);
	redirect(req, PREFIX "/sessions");
}

/* POST /console/logout */
static void post_logout(struct serve *s, struct http_req *req, struct console_login *login)
{
	console_login_end(s->console->logins, login);
	mcp_http_resp_header(&req->resp, "Set-Cookie",
	                     COOKIE_NAME "=; Path=" PREFIX
	                                 "; HttpOnly; SameSite=Strict; Max-Age=0");
	redirect(req, PREFIX "/login");
}

/* ---- routing ----------------------------------------------------------- */

/* Routes a console request; f is its form (POST) or NULL (GET). */
static void route(struct serve *s, struct http_req *req, const char *method, const char *path,
                  struct form *f)
{
	struct console_login *login = request_login(s->console, req);
	char rest[512];
	char *parts[4] = { 0 };
	size_t n;
	int api;

	snprintf(rest, sizeof(rest), "%s", path + strlen(PREFIX));
	n = split_path(rest[0] == '/' ? rest + 1 : rest, parts, 4);
	if (n >= 2 && !strcmp(parts[0], "assets") && !strcmp(method, "GET")) {
		mcp_console_asset(req, parts[1]);
		return;
	}
	if (n == 1 && !strcmp(parts[0], "login")) {
		if (f)
			post_login(s, req, f);
		else
			mcp_console_login_page(req, 200, NULL);
		return;
	}
	/* frames, status and the session's POSTs answer JSON to the page's script */
	api = n >= 3 && !strcmp(parts[0], "sessions");
	if (!login) {
		if (api || f)
			json_error(req, 401, "log in first: " PREFIX "/login");
		else
			redirect(req, PREFIX "/login");
		return;
	}
	if (f && !console_csrf_ok(login, f->value[F_CSRF])) {
		if (api)
			json_error(
			    req, 403,
			    "the CSRF token is missing or wrong: reload the page and try again");
		else
			mcp_console_error_page(
			    req, login, 403,
			    "the form's CSRF token is missing or wrong: reload the "
			    "page and try again");
		return;
	}
	if (n == 0 && !f) {
		redirect(req, PREFIX "/sessions");
	} else if (n == 1 && !strcmp(parts[0], "logout") && f) {
		post_logout(s, req, login);
	} else if (n == 1 && !strcmp(parts[0], "sessions") && !f) {
		mcp_console_sessions_page(s, req, login);
	} else if (n >= 2 && !strcmp(parts[0], "sessions") && n <= 3) {
		route_session(s, req, login, method, parts[1], n == 3 ? parts[2] : NULL, f);
	} else if (n == 1 && !strcmp(parts[0], "approvals") && !f) {
		mcp_console_approvals_page(s, req, login);
	} else if (n == 3 && !strcmp(parts[0], "approvals") && f &&
	           (!strcmp(parts[2], "approve") || !strcmp(parts[2], "deny"))) {
		post_decision(s, req, login, parts[1], !strcmp(parts[2], "approve"), f);
	} else if (n == 1 && !strcmp(parts[0], "trail") && !f) {
		mcp_console_trail_page(s, req, login);
	} else if (n == 3 && !strcmp(parts[0], "artifacts") && !f) {
		mcp_console_artifact(s, req, login, parts[1], parts[2]);
	} else {
		mcp_console_error_page(req, login, 404,
		                       "not found: see Sessions, Approvals and Trail above");
	}
}

/* See http-private.h. */
int mcp_console_handle(struct serve *s, struct http_req *req, const char *method, const char *path)
{
	char host[256], origin[256];

	if (strncmp(path, PREFIX, strlen(PREFIX)) != 0 ||
	    (path[strlen(PREFIX)] != '\0' && path[strlen(PREFIX)] != '/'))
		return 0;
	if (!s->console) {
		json_error(req, 503, "the web console could not start: see the service log");
		return 1;
	}
	if (!mcp_http_host_ok(mcp_http_header(req, "Host", host, sizeof(host)),
	                      mcp_http_is_loopback(s->cfg->admin_host))) {
		json_error(req, 403,
		           "the console listens on loopback: use http://127.0.0.1:PORT/console");
		return 1;
	}
	if (!strcmp(method, "POST") &&
	    !mcp_http_origin_ok(mcp_http_header(req, "Origin", origin, sizeof(origin)),
	                        s->cfg->origins, s->cfg->n_origins)) {
		json_error(req, 403, "a form of another site cannot post to the console");
		return 1;
	}
	if (strlen(path) >= sizeof(req->admin_path)) {
		json_error(req, 414, "the path is too long");
		return 1;
	}
	if (!strcmp(method, "POST")) {
		snprintf(req->admin_method, sizeof(req->admin_method), "%s", method);
		snprintf(req->admin_path, sizeof(req->admin_path), "%s", path);
		gb_buf_init(&req->body, s->cfg->max_body_bytes < (64u << 10)
		                            ? s->cfg->max_body_bytes
		                            : (64u << 10));
		req->body_on = 1;
		return 1;
	}
	if (strcmp(method, "GET") != 0 && strcmp(method, "HEAD") != 0) {
		snprintf(req->resp.allow, sizeof(req->resp.allow), "GET, POST");
		json_error(req, 405, "the console takes GET and POST");
		return 1;
	}
	route(s, req, "GET", path, NULL);
	return 1;
}

/* See http-private.h. */
void mcp_console_body(struct serve *s, struct http_req *req)
{
	struct form *f;

	if (req->too_large) {
		json_error(req, 413, "the form is too large");
		return;
	}
	f = calloc(1, sizeof(*f));
	if (!f) {
		json_error(req, 500, "out of memory");
		return;
	}
	if (read_form(req, f) == 0)
		route(s, req, req->admin_method, req->admin_path, f);
	sodium_memzero(f, sizeof(*f));
	free(f);
}

/* See http-private.h. */
struct mcp_console *mcp_console_start(struct serve *s)
{
	struct mcp_console *c = calloc(1, sizeof(*c));
	const char *data_dir = s->table.base ? s->table.base->data_dir : NULL;
	char err[512];

	if (!c || !data_dir)
		goto fail;
	c->data_dir = data_dir;
	c->logins = console_logins_new();
	if (!c->logins)
		goto fail;
	if (evid_audit_open(data_dir, &c->audit, err, sizeof(err)) < 0)
		GB_LOGW(MOD, "the console cannot record decisions: %s", err);
	if (evid_store_open_err(data_dir, &c->store, err, sizeof(err)) < 0)
		GB_LOGW(MOD, "the console cannot show evidence: %s", err);
	if (evid_index_open(data_dir, &c->index, err, sizeof(err)) < 0)
		GB_LOGW(MOD, "the console cannot find approvals' screenshots: %s", err);
	return c;
fail:
	GB_LOGE(MOD, "the web console could not start");
	mcp_console_stop(c);
	return NULL;
}

/* See http-private.h. */
void mcp_console_stop(struct mcp_console *c)
{
	if (!c)
		return;
	console_logins_free(c->logins);
	evid_audit_close(c->audit);
	evid_store_close(c->store);
	evid_index_close(c->index);
	free(c);
}

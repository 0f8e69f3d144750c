/*
 * console_pages.c - the web console's pages (docs/console.md): sessions,
 * a session's live view, pending approvals with the evidence, the trail;
 * and the evidence images and static files they use.
 *
 * Every text that comes from a page, an agent or a config goes through
 * console_html_text(); pages have no inline script or style. What a
 * login may not see (another tenant's) is left out, never greyed out.
 * Front thread.
 */
#include "mcp/console-private.h"

#include <microhttpd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "evidence/audit.h"
#include "evidence/evidence.h"
#include "evidence/index.h"
#include "store/store.h"

#define PAGE_MAX_BYTES ((size_t)4 << 20)
#define LIVE_ACTIONS 15
#define TRAIL_ROWS 300
#define APPROVALS_MAX 200

/* ---- small parts -------------------------------------------------------- */

/* Whether s is 64 lowercase hex digits (an artifact's id). */
static int sha_ok(const char *s)
{
	return s && strlen(s) == 64 && strspn(s, "0123456789abcdef") == 64;
}

/* "<td>text</td>" */
static void td(struct gb_buf *b, const char *cls, const char *text)
{
	gb_buf_appendf(b, "<td%s%s%s>", cls ? " class=\"" : "", cls ? cls : "", cls ? "\"" : "");
	console_html_text(b, text);
	gb_buf_appendf(b, "</td>");
}

/* A duration as "3m 12s". */
static void age_text(char *out, size_t len, int64_t ms)
{
	int64_t s = ms / 1000;

	if (s < 60)
		snprintf(out, len, "%llds", (long long)s);
	else if (s < 3600)
		snprintf(out, len, "%lldm %llds", (long long)(s / 60), (long long)(s % 60));
	else
		snprintf(out, len, "%lldh %lldm", (long long)(s / 3600), (long long)(s / 60 % 60));
}

/* The first image artifact of a record: its sha256 (borrowed), or NULL.
 * prefer: the kind to take when there are several. */
static const char *record_image(json_t *rec, const char *prefer)
{
	json_t *a;
	size_t i;
	const char *first = NULL, *kind, *mime;

	json_array_foreach(json_object_get(rec, "artifacts"), i, a)
	{
		kind = json_string_value(json_object_get(a, "kind"));
		mime = json_string_value(json_object_get(a, "mime"));
		if (!mime || strcmp(mime, "image/png") != 0 ||
		    json_is_false(json_object_get(a, "valid")))
			continue;
		if (kind && prefer && !strcmp(kind, prefer))
			return json_string_value(json_object_get(a, "sha256"));
		if (!first)
			first = json_string_value(json_object_get(a, "sha256"));
	}
	return first;
}

/* Who acted in a record: "human" (with by) or the agent. */
static const char *record_actor(json_t *rec, const char **by)
{
	json_t *body = json_object_get(rec, "body");

	*by = json_string_value(json_object_get(body, "by"));
	if (json_is_string(json_object_get(body, "actor")) &&
	    !strcmp(json_string_value(json_object_get(body, "actor")), "human"))
		return "human";
	return *by ? "person" : "agent";
}

/* ---- login ------------------------------------------------------------- */

/* See console-private.h. */
void mcp_console_login_page(struct http_req *req, int status, const char *error)
{
	struct gb_buf b;

	gb_buf_init(&b, 1 << 16);
	console_html_begin(&b, "Log in", NULL);
	gb_buf_appendf(&b, "<div class=\"login\"><h1>glassbox console</h1>");
	if (error) {
		gb_buf_appendf(&b, "<p class=\"error\">");
		console_html_text(&b, error);
		gb_buf_appendf(&b, "</p>");
	}
	gb_buf_appendf(&b, "<form method=\"post\" action=\"/console/login\">"
	                   "<label for=\"token\">Token (the admin token, or your console "
	                   "credential's)</label><input id=\"token\" name=\"token\" "
	                   "type=\"password\" autocomplete=\"off\" required>"
	                   "<button type=\"submit\">Log in</button></form></div>");
	console_html_end(&b);
	mcp_console_html(req, status, &b);
}

/* ---- sessions ---------------------------------------------------------- */

/* See console-private.h. */
void mcp_console_sessions_page(struct serve *s, struct http_req *req,
                               const struct console_login *login)
{
	struct http_session *hs;
	struct act_session *as;
	struct console_live *live;
	json_t *st;
	int64_t now = gb_now_ms();
	char age[32], calls[24], by[CONSOLE_NAME_MAX];
	struct gb_buf b;
	size_t shown = 0;

	gb_buf_init(&b, PAGE_MAX_BYTES);
	console_html_begin(&b, "Sessions", login);
	gb_buf_appendf(
	    &b, "<h1 data-refresh=\"5\">Sessions</h1><table id=\"sessions\"><tr><th>Session</th>"
	        "<th>Tenant</th><th>Client</th><th>URL</th><th>State</th><th>Age</th>"
	        "<th>Tool calls</th></tr>");
	for (hs = s->table.head; hs; hs = hs->next) {
		if (hs->state != HS_OPEN || !console_cred_sees(&login->cred, hs->tenant->name))
			continue;
		as = mcp_server_session(hs->srv, MCP_SESSION_IF_ANY, NULL, 0);
		live = as ? act_session_live(as) : NULL;
		st = live ? console_live_status(live) : NULL;
		gb_buf_appendf(&b,
		               "<tr data-session=\"%s\"><td class=\"mono\"><a "
		               "href=\"/console/sessions/%s\">%.12s</a></td>",
		               hs->id, hs->id, hs->id);
		td(&b, NULL, hs->tenant->name);
		td(&b, NULL, mcp_server_client(hs->srv));
		td(&b, "mono", st ? json_string_value(json_object_get(st, "url")) : "");
		if (live && console_live_human(live, by, sizeof(by))) {
			gb_buf_appendf(&b, "<td><span class=\"badge human\">a person: ");
			console_html_text(&b, by);
			gb_buf_appendf(&b, "</span></td>");
		} else {
			td(&b, NULL, mcp_server_busy(hs->srv) ? "busy" : "idle");
		}
		age_text(age, sizeof(age), now - hs->created_ms);
		td(&b, NULL, age);
		snprintf(calls, sizeof(calls), "%lu", hs->calls);
		td(&b, NULL, calls);
		gb_buf_appendf(&b, "</tr>");
		json_decref(st);
		shown++;
	}
	gb_buf_appendf(&b, "</table>");
	if (!shown)
		gb_buf_appendf(&b, "<p>No session is open%s.</p>",
		               login->cred.tenant[0] ? " for this tenant" : "");
	console_html_end(&b);
	mcp_console_html(req, 200, &b);
}

/* ---- a session's live view --------------------------------------------- */

/* See console-private.h. */
json_t *mcp_console_live_status(struct serve *s, const struct console_login *login,
                                struct http_session *hs, struct console_live *live)
{
	struct act_session *as = mcp_server_session(hs->srv, MCP_SESSION_IF_ANY, NULL, 0);
	struct evid_trail_query q = { .tenant = hs->tenant->name,
		                      .session = as ? act_session_id(as) : "-",
		                      .limit = LIVE_ACTIONS };
	json_t *st = console_live_status(live);
	json_t *recs = NULL, *rec, *actions = json_array();
	const char *sha, *by, *holder;
	char err[256], thumb[200];
	size_t i;

	holder = json_string_value(json_object_get(st, "credential"));
	if (evid_trail_search(s->console->data_dir, &q, &recs, err, sizeof(err)) == 0) {
		json_array_foreach(recs, i, rec)
		{
			json_t *body = json_object_get(rec, "body");
			json_t *a = json_pack(
			    "{s:s, s:s, s:s, s:s}", "time",
			    gb_or(json_string_value(json_object_get(rec, "time")), ""), "kind",
			    gb_or(json_string_value(json_object_get(rec, "kind")), ""), "verdict",
			    evid_trail_verdict(rec), "actor", record_actor(rec, &by));
			if (json_string_value(json_object_get(body, "tool")))
				json_object_set(a, "tool", json_object_get(body, "tool"));
			if (by)
				json_object_set_new(a, "by", json_string(by));
			sha = record_image(rec, EVID_KIND_ANNOTATED);
			if (sha && sha_ok(sha)) {
				snprintf(thumb, sizeof(thumb), "/console/artifacts/%s/%s",
				         hs->tenant->name, sha);
				json_object_set_new(a, "thumb", json_string(thumb));
			}
			json_array_append_new(actions, a);
		}
	}
	json_decref(recs);
	return json_pack("{s:o, s:b, s:o}", "live", st, "mine",
	                 holder && !strcmp(holder, login->cred.id), "actions", actions);
}

/* See console-private.h. */
void mcp_console_live_page(struct serve *s, struct http_req *req, const struct console_login *login,
                           struct http_session *hs, struct console_live *live)
{
	struct act_session *as = mcp_server_session(hs->srv, MCP_SESSION_IF_ANY, NULL, 0);
	struct gb_buf b;

	(void)live;
	gb_buf_init(&b, PAGE_MAX_BYTES);
	console_html_begin(&b, "Live view", login);
	gb_buf_appendf(&b, "<h1>Session <span class=\"mono\">%s</span> of ", hs->id);
	console_html_text(&b, hs->tenant->name);
	gb_buf_appendf(&b, "</h1><p>Client ");
	console_html_text(&b, mcp_server_client(hs->srv));
	gb_buf_appendf(&b,
	               " &middot; agent session <span class=\"mono\">%s</span> &middot; "
	               "<a href=\"/console/trail?tenant=",
	               as ? act_session_id(as) : "(not started)");
	console_url_part(&b, hs->tenant->name);
	gb_buf_appendf(&b, "&amp;session=%s\">its trail</a></p>", as ? act_session_id(as) : "");
	gb_buf_appendf(&b,
	               "<div class=\"live\" id=\"live\" data-base=\"/console/sessions/%s\" "
	               "data-fps=\"%d\"><div><img id=\"frame\" alt=\"the session's browser, "
	               "live\"></div><div class=\"panel\"><p><strong "
	               "id=\"state\">…</strong></p><p class=\"mono\" id=\"url\"></p>",
	               hs->id, s->cfg->console.frames_per_second);
	if (login->cred.approver)
		gb_buf_appendf(
		    &b,
		    "<p><button type=\"button\" class=\"agent-only\" "
		    "data-control=\"take\" id=\"take\">Take over</button> "
		    "<button type=\"button\" class=\"human-only\" data-control=\"release\" "
		    "id=\"release\">Hand back</button></p>"
		    "<form id=\"type-form\" class=\"human-only\"><input id=\"type-text\" "
		    "type=\"text\" maxlength=\"%d\" autocomplete=\"off\" placeholder=\"text "
		    "to type at the focus\"> <button type=\"submit\">Type</button></form>"
		    "<p class=\"human-only\"><button type=\"button\" "
		    "data-key=\"Enter\">Enter</button> <button type=\"button\" "
		    "data-key=\"Tab\">Tab</button> <button type=\"button\" "
		    "data-key=\"Backspace\">Backspace</button> <button type=\"button\" "
		    "data-key=\"Escape\">Esc</button></p><p class=\"human-only\">Click in "
		    "the picture to click in the page.</p>",
		    CONSOLE_LIVE_TEXT_MAX);
	else
		gb_buf_appendf(&b, "<p>You can watch; an approver can take over.</p><form "
		                   "id=\"type-form\" hidden><input id=\"type-text\"></form>");
	gb_buf_appendf(&b, "<p class=\"note\" id=\"note\"></p><h2>Recent actions</h2>"
	                   "<ul class=\"actions\" id=\"actions\"></ul></div></div>");
	console_html_end(&b);
	mcp_console_html(req, 200, &b);
}

/* ---- approvals --------------------------------------------------------- */

/* store_approval_cb: collects approvals. */
static int add_approval(const struct store_approval *a, void *user)
{
	json_array_append_new(user, store_approval_to_json(a));
	return 0;
}

/* evid_index_cb: the first row's sha256. */
static int first_sha(const struct evid_index_row *row, void *user)
{
	snprintf(user, 65, "%s", row->sha256);
	return 1;
}

/* One dt/dd pair. */
static void kv(struct gb_buf *b, const char *label, const char *value, const char *cls)
{
	gb_buf_appendf(b, "<dt>%s</dt><dd%s%s%s>", label, cls ? " class=\"" : "", cls ? cls : "",
	               cls ? "\"" : "");
	console_html_text(b, value);
	gb_buf_appendf(b, "</dd>");
}

/* One pending approval with its picture and, for an approver, the forms. */
static void render_approval(struct serve *s, struct gb_buf *b, const struct console_login *login,
                            json_t *a)
{
	struct evid_index_query q = { 0 };
	const char *id = json_string_value(json_object_get(a, "id"));
	const char *tenant = json_string_value(json_object_get(a, "tenant"));
	char sha[65] = "", err[256];
	const char *verb[2] = { "approve", "deny" };
	int i;

	q.tenant = tenant;
	q.operation_id = json_string_value(json_object_get(a, "operation_id"));
	q.kind = EVID_KIND_ANNOTATED;
	if (s->console->index && q.operation_id)
		evid_index_find(s->console->index, &q, first_sha, sha, err, sizeof(err));
	gb_buf_appendf(b, "<div class=\"approval\" data-approval=\"");
	console_html_text(b, id);
	gb_buf_appendf(b, "\"><div>");
	if (sha[0] && sha_ok(sha)) {
		gb_buf_appendf(b, "<a href=\"/console/artifacts/");
		console_url_part(b, tenant);
		gb_buf_appendf(b,
		               "/%s\"><img class=\"evidence\" alt=\"the element, outlined\" "
		               "src=\"/console/artifacts/",
		               sha);
		console_url_part(b, tenant);
		gb_buf_appendf(b, "/%s\"></a>", sha);
	} else {
		gb_buf_appendf(b, "<p>(no screenshot of the element was kept)</p>");
	}
	gb_buf_appendf(b, "</div><div><h2>");
	console_html_text(b, json_string_value(json_object_get(a, "summary")));
	gb_buf_appendf(b, "</h2><dl>");
	kv(b, "Approval", id, "mono");
	kv(b, "Tenant", tenant, NULL);
	kv(b, "Tool", json_string_value(json_object_get(a, "tool")), NULL);
	kv(b, "Rule", json_string_value(json_object_get(a, "rule")), NULL);
	kv(b, "Session", json_string_value(json_object_get(a, "session")), "mono");
	kv(b, "Operation", json_string_value(json_object_get(a, "operation_id")), "mono");
	kv(b, "Fingerprint", json_string_value(json_object_get(a, "fingerprint")), "mono");
	kv(b, "Asked at", json_string_value(json_object_get(a, "created_at")), NULL);
	kv(b, "Expires at", json_string_value(json_object_get(a, "expires_at")), "expires");
	gb_buf_appendf(b, "</dl>");
	for (i = 0; login->cred.approver && i < 2; i++) {
		gb_buf_appendf(b, "<form method=\"post\" action=\"/console/approvals/");
		console_html_text(b, id);
		gb_buf_appendf(b,
		               "/%s\"><input type=\"hidden\" name=\"csrf\" value=\"%s\">"
		               "<input type=\"text\" name=\"reason\" maxlength=\"%d\" "
		               "placeholder=\"reason (recorded)\"> <button type=\"submit\" "
		               "class=\"%s\">%s</button></form>",
		               verb[i], login->csrf, STORE_REASON_MAX, verb[i],
		               i ? "Deny" : "Approve");
	}
	gb_buf_appendf(b, "</div></div>");
}

/* See console-private.h. */
void mcp_console_approvals_page(struct serve *s, struct http_req *req,
                                const struct console_login *login)
{
	struct store_approval_query q = { .pending_only = 1, .limit = APPROVALS_MAX };
	const char *decided =
	    MHD_lookup_connection_value(req->conn, MHD_GET_ARGUMENT_KIND, "decided");
	json_t *list = json_array(), *a;
	struct store_approval done;
	char err[512];
	struct gb_buf b;
	size_t i;

	q.tenant = login->cred.tenant[0] ? login->cred.tenant : NULL;
	gb_buf_init(&b, PAGE_MAX_BYTES);
	console_html_begin(&b, "Approvals", login);
	gb_buf_appendf(&b, "<h1 data-refresh=\"5\">Pending approvals</h1>");
	if (decided && s->hooks && s->hooks->store && strlen(decided) <= STORE_ID_MAX &&
	    store_approval_get(s->hooks->store, q.tenant, decided, &done, err, sizeof(err)) == 0) {
		gb_buf_appendf(&b, "<p class=\"decided\" id=\"decided\">Approval ");
		console_html_text(&b, done.id);
		gb_buf_appendf(&b, " is %s (by ", store_approval_state_name(done.state));
		console_html_text(&b, done.decided_by);
		gb_buf_appendf(&b, ").</p>");
	}
	if (!s->hooks || !s->hooks->store ||
	    store_approval_list(s->hooks->store, &q, add_approval, list, err, sizeof(err)) != 0) {
		gb_buf_appendf(&b, "<p class=\"error\">The approvals could not be read: see the "
		                   "service log.</p>");
	} else if (!json_array_size(list)) {
		gb_buf_appendf(&b, "<p id=\"none\">Nothing is waiting for a decision.</p>");
	}
	json_array_foreach(list, i, a)
	{
		render_approval(s, &b, login, a);
	}
	json_decref(list);
	console_html_end(&b);
	mcp_console_html(req, 200, &b);
}

/* ---- the trail --------------------------------------------------------- */

/* A search field: <input name=... value=...>. */
static void search_field(struct gb_buf *b, const char *name, const char *value)
{
	gb_buf_appendf(b, "<label>%s <input name=\"%s\" value=\"", name, name);
	console_html_text(b, value);
	gb_buf_appendf(b, "\" size=\"14\"></label>");
}

/* One record as a row. */
static void trail_row(struct gb_buf *b, const char *tenant, json_t *rec)
{
	json_t *body = json_object_get(rec, "body");
	json_t *element = json_object_get(body, "element");
	const char *verdict = evid_trail_verdict(rec), *by, *sha;
	const char *actor = record_actor(rec, &by);
	const char *session;
	char seq[24], short_id[16];

	snprintf(seq, sizeof(seq), "%lld",
	         (long long)json_integer_value(json_object_get(rec, "seq")));
	gb_buf_appendf(b, "<tr>");
	td(b, NULL, seq);
	td(b, NULL, json_string_value(json_object_get(rec, "time")));
	session = json_string_value(json_object_get(rec, "session"));
	gb_buf_appendf(b, "<td class=\"mono\" title=\"");
	console_html_text(b, session);
	gb_buf_appendf(b, "\">");
	snprintf(short_id, sizeof(short_id), "%.12s", session ? session : "");
	console_html_text(b, short_id);
	gb_buf_appendf(b, "</td>");
	td(b, NULL, json_string_value(json_object_get(rec, "kind")));
	td(b, NULL, json_string_value(json_object_get(body, "tool")));
	gb_buf_appendf(
	    b, "<td><span class=\"badge %s\">",
	    !strcmp(verdict, "ok") ? "ok"
	    : gb_or(json_string_value(json_object_get(rec, "kind")), "")[0] &&
	            !strcmp(json_string_value(json_object_get(rec, "kind")), EVID_AUDIT_TOOL_CALL)
	        ? "bad"
	        : "");
	console_html_text(b, verdict);
	gb_buf_appendf(b, "</span></td><td>");
	console_html_text(b, actor);
	if (by) {
		gb_buf_appendf(b, ": ");
		console_html_text(b, by);
	}
	gb_buf_appendf(b, "</td>");
	td(b, "mono url",
	   json_string_value(json_object_get(body, "url"))
	       ? json_string_value(json_object_get(body, "url"))
	       : json_string_value(json_object_get(body, "url_after")));
	td(b, NULL,
	   json_string_value(json_object_get(element, "description"))
	       ? json_string_value(json_object_get(element, "description"))
	       : json_string_value(json_object_get(body, "summary")));
	gb_buf_appendf(b, "<td>");
	sha = record_image(rec, EVID_KIND_ANNOTATED);
	if (sha && sha_ok(sha)) {
		gb_buf_appendf(b, "<a href=\"/console/artifacts/");
		console_url_part(b, tenant);
		gb_buf_appendf(b,
		               "/%s\"><img class=\"thumb\" alt=\"evidence\" "
		               "src=\"/console/artifacts/",
		               sha);
		console_url_part(b, tenant);
		gb_buf_appendf(b, "/%s\"></a>", sha);
	}
	gb_buf_appendf(b, "</td></tr>");
}

/* The chain's verification (evid_audit_verify: hashes, signatures,
 * sequence, artifacts), as the report's header says it. */
static void verify_line(struct serve *s, struct gb_buf *b, const char *tenant)
{
	struct evid_verify_report rep;
	char line[1400], err[512];

	memset(&rep, 0, sizeof(rep));
	if (evid_audit_verify(s->console->data_dir, tenant, NULL, &rep, err, sizeof(err)) < 0)
		snprintf(line, sizeof(line), "%s: the chain could not be verified: %s", tenant,
		         err);
	else
		evid_verify_report_format(tenant, &rep, line, sizeof(line));
	gb_buf_appendf(b, "<p id=\"verified\" class=\"badge %s\">", rep.ok ? "ok" : "bad");
	console_html_text(b, line);
	gb_buf_appendf(b, "</p>");
}

/* See console-private.h. */
void mcp_console_trail_page(struct serve *s, struct http_req *req,
                            const struct console_login *login)
{
	struct evid_trail_query q = { .limit = TRAIL_ROWS };
	const char *arg[4];
	static const char *const names[4] = { "tenant", "session", "tool", "verdict" };
	json_t *recs = NULL, *rec;
	char err[512];
	struct gb_buf b;
	size_t i;

	for (i = 0; i < 4; i++) {
		arg[i] = MHD_lookup_connection_value(req->conn, MHD_GET_ARGUMENT_KIND, names[i]);
		if (arg[i] && (!arg[i][0] || strlen(arg[i]) > 128))
			arg[i] = NULL;
	}
	q.tenant = login->cred.tenant[0] ? login->cred.tenant : arg[0];
	if (!q.tenant && s->cfg->n_tenants)
		q.tenant = s->cfg->tenants[0].name;
	q.session = arg[1];
	q.tool = arg[2];
	q.verdict = arg[3];
	gb_buf_init(&b, PAGE_MAX_BYTES);
	console_html_begin(&b, "Trail", login);
	gb_buf_appendf(&b, "<h1>Trail</h1><form class=\"search\" method=\"get\" "
	                   "action=\"/console/trail\">");
	if (!login->cred.tenant[0]) {
		gb_buf_appendf(&b, "<label>tenant <select name=\"tenant\">");
		for (i = 0; i < s->cfg->n_tenants; i++) {
			gb_buf_appendf(&b, "<option%s>",
			               q.tenant && !strcmp(q.tenant, s->cfg->tenants[i].name)
			                   ? " selected"
			                   : "");
			console_html_text(&b, s->cfg->tenants[i].name);
			gb_buf_appendf(&b, "</option>");
		}
		gb_buf_appendf(&b, "</select></label>");
	}
	search_field(&b, "session", q.session);
	search_field(&b, "tool", q.tool);
	search_field(&b, "verdict", q.verdict);
	gb_buf_appendf(&b, "<button type=\"submit\">Search</button> <button type=\"submit\" "
	                   "name=\"verify\" value=\"1\">Verify the chain</button></form>");
	if (q.tenant && console_cred_sees(&login->cred, q.tenant) &&
	    MHD_lookup_connection_value(req->conn, MHD_GET_ARGUMENT_KIND, "verify"))
		verify_line(s, &b, q.tenant);
	if (!q.tenant || !console_cred_sees(&login->cred, q.tenant)) {
		gb_buf_appendf(&b, "<p>Choose a tenant.</p>");
	} else if (evid_trail_search(s->console->data_dir, &q, &recs, err, sizeof(err)) < 0) {
		gb_buf_appendf(&b, "<p class=\"error\">The trail could not be read: ");
		console_html_text(&b, err);
		gb_buf_appendf(&b, "</p>");
	} else {
		gb_buf_appendf(&b,
		               "<p>%zu record(s), newest first (verdict: ok, an error code such "
		               "as approval_required, or a record kind).</p><table "
		               "id=\"trail\"><tr><th>#</th><th>Time</th><th>Session</th><th>Kind"
		               "</th><th>Tool</th><th>Verdict</th><th>Actor</th><th>URL</th>"
		               "<th>Element / summary</th><th>Evidence</th></tr>",
		               json_array_size(recs));
		json_array_foreach(recs, i, rec)
		{
			trail_row(&b, q.tenant, rec);
		}
		gb_buf_appendf(&b, "</table>");
	}
	json_decref(recs);
	console_html_end(&b);
	mcp_console_html(req, 200, &b);
}

/* ---- images and files -------------------------------------------------- */

/* See console-private.h. */
void mcp_console_artifact(struct serve *s, struct http_req *req, const struct console_login *login,
                          const char *tenant, const char *sha256)
{
	unsigned char *data = NULL;
	size_t len = 0;
	char mime[64] = "";

	if (!console_cred_sees(&login->cred, tenant) || !sha_ok(sha256) || !s->console->store ||
	    evid_store_get(s->console->store, tenant, sha256, &data, &len, mime, sizeof(mime)) <
	        0 ||
	    (strcmp(mime, "image/png") != 0 && strcmp(mime, "image/jpeg") != 0)) {
		mcp_console_error_page(req, login, 404, "no such image");
		goto out;
	}
	mcp_http_resp_header(&req->resp, "X-Content-Type-Options", "nosniff");
	mcp_http_resp_header(&req->resp, "Content-Security-Policy", "default-src 'none'");
	mcp_http_resp_header(&req->resp, "Cache-Control", "private, max-age=3600");
	mcp_http_respond(req, 200, mime, (const char *)data, len);
out:
	free(data);
}

/* See console-private.h. */
void mcp_console_asset(struct http_req *req, const char *name)
{
	const char *ctype = NULL;
	size_t len = 0;
	const char *data = console_asset(name, &len, &ctype);

	if (!data) {
		mcp_console_json(req, 404, json_pack("{s:s}", "error", "no such file"));
		return;
	}
	mcp_http_resp_header(&req->resp, "X-Content-Type-Options", "nosniff");
	mcp_http_resp_header(&req->resp, "Cache-Control", "no-cache");
	mcp_http_respond(req, 200, ctype, data, len);
}

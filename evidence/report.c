/*
 * report.c - the HTML trail a reviewer opens in a browser: one
 * self-contained file (CSS inline, screenshots as data: URIs, no script
 * and a Content-Security-Policy that forbids any) built from a tenant's
 * audit log and artifacts.
 *
 * Steps: verify the tenant's whole chain (the header says whether it
 * holds, and if not, the first record that fails); read the day files in
 * order, keeping the records of the session or period asked for; note
 * which operations were approved or denied, so a tool call shows its
 * approval; render each record (report_render.c); put the page together.
 * Reads only; works on a read-only copy of the data dir. Page-derived
 * text is hostile: all of it is escaped (html.c).
 */
#include "evidence/report-private.h"

#include "evidence/evidence.h"

#include <dirent.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define PATH_BYTES 4096

static const char page_css[] =
    ":root{--ink:#1f2937;--muted:#6b7280;--line:#e5e7eb;--bg:#f5f6f8;--card:#fff;"
    "--ok:#15803d;--okbg:#dcfce7;--bad:#b91c1c;--badbg:#fee2e2;--warn:#b45309;"
    "--warnbg:#fef3c7;--accent:#1d4ed8;--accentbg:#dbeafe}\n"
    "*{box-sizing:border-box}\n"
    "body{margin:0;background:var(--bg);color:var(--ink);font:15px/1.5 system-ui,-apple-system,"
    "\"Segoe UI\",Roboto,\"Helvetica Neue\",Arial,sans-serif}\n"
    "main{max-width:1160px;margin:0 auto;padding:32px 24px 64px}\n"
    ".brand{font-size:12px;letter-spacing:.08em;text-transform:uppercase;color:var(--muted)}\n"
    "h1{font-size:26px;margin:4px 0 6px;font-weight:650}\n"
    ".sub{color:var(--muted);font-size:14px}\n"
    ".verdict{margin:18px 0 0;padding:12px 16px;border-radius:10px;font-weight:600}\n"
    ".verdict.ok{background:var(--okbg);color:var(--ok)}\n"
    ".verdict.bad{background:var(--badbg);color:var(--bad)}\n"
    ".verdict small{display:block;font-weight:400;margin-top:2px}\n"
    ".stats{display:flex;gap:12px;flex-wrap:wrap;margin:20px 0 28px}\n"
    ".stat{background:var(--card);border:1px solid var(--line);border-radius:10px;"
    "padding:10px 16px;min-width:130px;color:var(--muted);font-size:13px}\n"
    ".stat b{display:block;font-size:22px;color:var(--ink)}\n"
    "h2{font-size:17px;margin:0 0 12px}\n"
    "ol.timeline{list-style:none;padding:0;margin:0}\n"
    ".ev{background:var(--card);border:1px solid var(--line);border-left:4px solid #cbd5e1;"
    "border-radius:10px;padding:14px 18px;margin:0 0 12px;display:flex;gap:20px;"
    "flex-wrap:wrap}\n"
    ".ev .main{flex:1 1 460px;min-width:0}.ev .side{flex:0 1 440px}\n"
    ".ev.ok{border-left-color:var(--ok)}.ev.fail{border-left-color:var(--bad)}\n"
    ".ev.refused{border-left-color:var(--warn)}.ev.session{border-left-color:var(--accent)}\n"
    ".ev.approval{border-left-color:#7c3aed}\n"
    ".head{display:flex;gap:10px;align-items:baseline;flex-wrap:wrap;margin-bottom:6px}\n"
    ".tool{font-weight:650;font-family:ui-monospace,SFMono-Regular,Menlo,Consolas,monospace}\n"
    ".time,.seq,.muted{color:var(--muted);font-size:13px}\n"
    ".badge{font-size:12px;padding:1px 9px;border-radius:999px;font-weight:600}\n"
    ".badge.ok{background:var(--okbg);color:var(--ok)}.badge.bad{background:var(--badbg);"
    "color:var(--bad)}.badge.warn{background:var(--warnbg);color:var(--warn)}"
    ".badge.info{background:var(--accentbg);color:var(--accent)}\n"
    "dl.kv{display:grid;grid-template-columns:max-content 1fr;gap:3px 14px;margin:0;"
    "font-size:14px}\n"
    "dl.kv dt{color:var(--muted)}dl.kv dd{margin:0;overflow-wrap:anywhere;min-width:0}\n"
    ".url,.mono{font-family:ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;"
    "font-size:12.5px}\n"
    ".badtext{color:var(--bad)}\n"
    "ul.blocked{margin:0;padding-left:18px}\n"
    "table{border-collapse:collapse;font-size:13px;margin-top:10px;width:100%}\n"
    "th,td{text-align:left;padding:4px 10px 4px 0;border-bottom:1px solid var(--line);"
    "vertical-align:top;overflow-wrap:anywhere}th{color:var(--muted);font-weight:500}\n"
    ".shots{display:flex;gap:12px;flex-wrap:wrap}\n"
    ".shot{display:block;text-decoration:none;color:var(--muted);font-size:12px;"
    "text-align:center}\n"
    ".thumb{display:block;width:200px;border:1px solid var(--line);border-radius:6px;"
    "background-size:cover;background-position:top left;background-repeat:no-repeat;"
    "margin-bottom:3px}\n"
    ".shot:hover .thumb{border-color:var(--accent)}\n"

    ".lb{display:none;position:fixed;inset:0;background:rgba(17,24,39,.94);z-index:10;"
    "padding:28px;flex-direction:column;align-items:center;justify-content:center;gap:8px}\n"
    ".lb:target{display:flex}\n"
    ".lb .full{width:min(94vw,var(--w));max-height:86vh;background-size:contain;"
    "background-position:center;background-repeat:no-repeat}\n"
    ".lb .close{color:#fff;align-self:flex-end;text-decoration:none;font-size:14px}\n"
    ".lb .cap{color:#d1d5db;font-size:13px}\n"
    "details{margin-top:10px}summary{cursor:pointer;color:var(--accent);font-size:14px}\n"
    "pre{white-space:pre-wrap;overflow-wrap:anywhere;background:#f9fafb;border:1px solid "
    "var(--line);border-radius:6px;padding:10px;font-size:12px;max-height:420px;overflow:auto}\n"
    ".note{font-size:13px;color:var(--muted);margin:4px 0}.note.bad{color:var(--bad)}\n"
    "footer{color:var(--muted);font-size:12px;margin-top:32px}\n"
    "@media print{.lb{display:none!important}.ev{break-inside:avoid}}\n";

/* The session recording's filmstrip (C strings have a length limit). */
static const char film_css[] = ".film{display:flex;gap:4px;flex-wrap:wrap;margin-top:8px}\n"
                               ".film .thumb{width:96px}.film .shot{font-size:11px}\n";

void rpt_raw(struct report *r, const char *s)
{
	if (gb_buf_append(r->out, s, strlen(s)) != 0)
		r->oom = 1;
}

void rpt_printf(struct report *r, const char *fmt, ...)
{
	char line[2048];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	if (n < 0 || (size_t)n >= sizeof(line) || gb_buf_append(r->out, line, (size_t)n) != 0)
		r->oom = 1;
}

void rpt_text(struct report *r, const char *s)
{
	if (!s) {
		rpt_raw(r, "—");
		return;
	}
	if (evid_html_escape(r->out, s, strlen(s)) != 0)
		r->oom = 1;
}

/* ---- reading the records -------------------------------------------------- */

/* 1 when rec is of session: its "session", its agent session's id
 * (body.agent_session), or the session of the tool call whose operation
 * it names (a decision on an approval carries no browser session). */
static int of_session(const struct report *r, const struct evid_record *rec, const char *session)
{
	const char *agent = json_string_value(json_object_get(rec->body, "agent_session"));
	const char *op_session =
	    rec->operation ? json_string_value(json_object_get(r->op_session, rec->operation))
	                   : NULL;

	return (rec->session && !strcmp(rec->session, session)) ||
	       (agent && !strcmp(agent, session)) || (op_session && !strcmp(op_session, session));
}

/* 1 when rec belongs in the report. */
static int wanted(const struct report *r, const struct evid_record *rec)
{
	const struct evid_report_opts *o = r->opts;

	if (o->session_id && !of_session(r, rec, o->session_id))
		return 0;
	if (o->since && strcmp(rec->time, o->since) < 0)
		return 0;
	return 1;
}

/* First pass: approvals and denials by operation, and who drives each
 * session (the client and flow its session_opened record names). */
static int note_approval(const char *line, size_t len, unsigned long lineno, int complete,
                         int too_long, void *user)
{
	struct report *r = user;
	struct evid_record rec;
	json_t *list;
	json_t *entry;

	(void)lineno;
	if (!complete || too_long || evid_record_parse(line, len, &rec, NULL, 0) != 0)
		return 0;
	if (rec.operation && (!strcmp(rec.kind, EVID_AUDIT_APPROVAL_GRANTED) ||
	                      !strcmp(rec.kind, EVID_AUDIT_APPROVAL_DENIED))) {
		list = json_object_get(r->approvals, rec.operation);
		if (!list) {
			list = json_array();
			json_object_set_new(r->approvals, rec.operation, list);
		}
		entry = json_deep_copy(rec.body);
		if (entry) {
			json_object_set_new(entry, "kind", json_string(rec.kind));
			if (!json_object_get(entry, "at"))
				json_object_set_new(entry, "at", json_string(rec.time));
		}
		if (!entry || json_array_append_new(list, entry) != 0)
			r->oom = 1;
	}
	if (rec.session && rec.operation && !strcmp(rec.kind, EVID_AUDIT_TOOL_CALL) &&
	    json_object_set_new(r->op_session, rec.operation, json_string(rec.session)) != 0)
		r->oom = 1;
	if (rec.session && !strcmp(rec.kind, EVID_AUDIT_SESSION_OPENED)) {
		json_t *info = json_object();

		if (!info || json_object_set_new(r->session_info, rec.session, info) != 0)
			r->oom = 1;
		else {
			if (json_is_string(json_object_get(rec.body, "client")))
				json_object_set(info, "client",
				                json_object_get(rec.body, "client"));
			if (json_is_string(json_object_get(rec.body, "flow")))
				json_object_set(info, "flow", json_object_get(rec.body, "flow"));
		}
	}
	evid_record_free(&rec);
	return r->oom ? -EVID_ENOMEM : 0;
}

/* Second pass: renders each wanted record. */
static int render_line(const char *line, size_t len, unsigned long lineno, int complete,
                       int too_long, void *user)
{
	struct report *r = user;
	struct evid_record rec;
	json_t *sess;
	size_t i;
	int seen = 0;

	(void)lineno;
	if (!complete || too_long || evid_record_parse(line, len, &rec, NULL, 0) != 0) {
		r->unreadable++;
		return 0;
	}
	if (wanted(r, &rec)) {
		if (!r->shown)
			snprintf(r->first_time, sizeof(r->first_time), "%s", rec.time);
		snprintf(r->last_time, sizeof(r->last_time), "%s", rec.time);
		r->shown++;
		json_array_foreach(r->sessions, i, sess) seen |=
		    rec.session && !strcmp(json_string_value(sess), rec.session);
		if (rec.session && !seen)
			json_array_append_new(r->sessions, json_string(rec.session));
		rpt_render_record(r, &rec);
	}
	evid_record_free(&rec);
	return r->oom ? -EVID_ENOMEM : 0;
}

/* Runs cb over every day file of the tenant from the period's first day. */
static int each_line(struct report *r, evid_line_cb cb, char *err, size_t errlen)
{
	return evid_tenant_each_line(r->data_dir, r->tenant, r->opts->since, cb, r, err, errlen);
}

/* ---- the page ------------------------------------------------------------- */

/* The header: who, what, and whether the chain holds. */
static void render_header(struct report *r)
{
	char now[40];
	char where[160];
	char line[1536];

	gb_utc_iso8601(now, sizeof(now));
	rpt_raw(r, "<header><div class=\"brand\">glassbox · evidence trail</div><h1>");
	if (r->opts->session_id) {
		rpt_raw(r, "Session ");
		rpt_text(r, r->opts->session_id);
		rpt_raw(r, " · tenant ");
	} else {
		rpt_raw(r, "Tenant ");
	}
	rpt_text(r, r->tenant);
	rpt_raw(r, "</h1><div class=\"sub\">");
	if (r->shown) {
		rpt_text(r, r->first_time);
		rpt_raw(r, " → ");
		rpt_text(r, r->last_time);
		rpt_raw(r, " · ");
	}
	if (r->opts->since) {
		rpt_raw(r, "since ");
		rpt_text(r, r->opts->since);
		rpt_raw(r, " · ");
	}
	rpt_raw(r, "report generated ");
	rpt_text(r, now);
	rpt_raw(r, " (UTC)</div>");
	if (r->verify_ran && r->vrep.ok) {
		rpt_raw(r, "<div class=\"verdict ok\" id=\"chain\">✔ The audit chain verified");
		snprintf(line, sizeof(line),
		         "%llu records (seq %llu–%llu)%s, %llu artifacts checked "
		         "against their hashes, signatures by key %s.",
		         (unsigned long long)r->vrep.records, (unsigned long long)r->vrep.first_seq,
		         (unsigned long long)r->vrep.last_seq,
		         r->vrep.purged ? ", older records purged under retention" : "",
		         (unsigned long long)r->vrep.artifacts, r->vrep.key_id);
	} else if (r->verify_ran) {
		rpt_raw(r, "<div class=\"verdict bad\" id=\"chain\">✘ The audit chain did NOT "
		           "verify: do not rely on this trail");
		evid_verify_location(&r->vrep, where, sizeof(where));
		snprintf(line, sizeof(line), "First failure: record %llu (%s): %s — %s",
		         (unsigned long long)r->vrep.failed_seq, where,
		         evid_verify_failure_name(r->vrep.failure), r->vrep.reason);
	} else {
		rpt_raw(r, "<div class=\"verdict bad\" id=\"chain\">✘ The audit chain could not "
		           "be verified");
		snprintf(line, sizeof(line), "%s", r->verify_err);
	}
	rpt_raw(r, "<small>");
	rpt_text(r, line);
	rpt_raw(r, "</small></div></header>\n<section class=\"stats\">");
	rpt_printf(r, "<div class=\"stat\"><b>%zu</b>actions</div>", r->actions);
	rpt_printf(r, "<div class=\"stat\"><b>%zu</b>failed</div>", r->failed);
	rpt_printf(r, "<div class=\"stat\" id=\"stat-refused\"><b>%zu</b>refused by policy</div>",
	           r->refusals);
	rpt_printf(r, "<div class=\"stat\" id=\"stat-held\"><b>%zu</b>held for approval</div>",
	           r->held);
	rpt_printf(r, "<div class=\"stat\" id=\"stat-approvals\"><b>%zu</b>approvals decided</div>",
	           r->approvals_n);
	rpt_printf(r, "<div class=\"stat\"><b>%zu</b>blocked requests</div>", r->blocked);
	rpt_printf(r, "<div class=\"stat\"><b>%zu</b>sessions</div></section>\n",
	           json_array_size(r->sessions));
}

/* Appends a whole buffer to the page. */
static void rpt_buf(struct report *r, const struct gb_buf *b)
{
	if (b->len && gb_buf_append(r->out, b->data, b->len) != 0)
		r->oom = 1;
}

/* Puts the page together into *html. */
static int assemble(struct report *r, char **html, size_t *len, char *err, size_t errlen)
{
	struct gb_buf page;
	int rc = 0;

	gb_buf_init(&page, EVID_REPORT_MAX_BYTES);
	r->out = &page;
	rpt_raw(r, "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n"
	           "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; "
	           "img-src data:; style-src 'unsafe-inline'\">\n"
	           "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
	           "<meta name=\"generator\" content=\"glassbox " GLASSBOX_VERSION "\">\n<title>");
	rpt_raw(r, "glassbox evidence trail · ");
	rpt_text(r, r->opts->session_id ? r->opts->session_id : r->tenant);
	rpt_raw(r, "</title>\n<style>\n");
	rpt_raw(r, page_css);
	rpt_raw(r, film_css);
	rpt_buf(r, &r->styles);
	rpt_raw(r, "</style></head>\n<body><main>\n");
	render_header(r);
	if (r->unreadable)
		rpt_printf(r,
		           "<div class=\"note bad\">%zu lines of the log could not be read and "
		           "are not shown (see the chain verdict above).</div>",
		           r->unreadable);
	rpt_raw(r, "<h2>Timeline</h2><ol class=\"timeline\">\n");
	rpt_buf(r, &r->body);
	if (!r->shown)
		rpt_raw(r, "<li class=\"ev empty\">No records in this period.</li>");
	rpt_raw(r, "</ol>\n<footer>Each record is signed (Ed25519) and hash-chained; check the "
	           "trail yourself with <code>glassbox audit verify --tenant ");
	rpt_text(r, r->tenant);
	rpt_raw(r, " --pubkey audit.pub</code>. Screenshots open full size when clicked; "
	           "annotated copies outline the element acted on and mark the click point."
	           "</footer>\n</main></body></html>\n");
	r->out = &r->body;
	if (r->oom) {
		gb_set_error(err, errlen,
		             "the report would be larger than %u bytes or memory ran "
		             "out: narrow it with --session or --since",
		             EVID_REPORT_MAX_BYTES);
		gb_buf_free(&page);
		rc = -EVID_ENOMEM;
		goto out;
	}
	*len = page.len;
	*html = gb_buf_steal(&page);
out:
	return rc;
}

int evid_report_html(const char *data_dir, const struct evid_report_opts *opts, char **html,
                     size_t *len, char *err, size_t errlen)
{
	struct report r;
	int rc;

	*html = NULL;
	*len = 0;
	memset(&r, 0, sizeof(r));
	gb_buf_init(&r.body, EVID_REPORT_MAX_BYTES);
	gb_buf_init(&r.styles, EVID_REPORT_MAX_BYTES);
	r.out = &r.body;
	r.data_dir = data_dir;
	r.opts = opts;
	r.approvals = json_object();
	r.session_info = json_object();
	r.op_session = json_object();
	r.refused_ops = json_object();
	r.held_ops = json_object();
	r.sessions = json_array();
	if (!opts || !data_dir || (!opts->tenant && !opts->session_id)) {
		gb_set_error(err, errlen, "a report needs a tenant, a session, or both");
		rc = -EVID_EINVAL;
		goto out;
	}
	rc = evid_reader_tenant(data_dir, opts->tenant, opts->session_id, r.tenant,
	                        sizeof(r.tenant), err, errlen);
	if (rc != 0)
		goto out;
	r.verify_ran = evid_audit_verify(data_dir, r.tenant, opts->pubkey, &r.vrep, r.verify_err,
	                                 sizeof(r.verify_err)) == 0;
	if (opts->verified)
		*opts->verified = r.vrep;
	rc = each_line(&r, note_approval, err, errlen);
	if (rc == 0)
		rc = each_line(&r, render_line, err, errlen);
	if (rc == 0 && opts->session_id && !r.shown) {
		gb_set_error(err, errlen, "no records of session %.80s in tenant %s",
		             opts->session_id, r.tenant);
		rc = -EVID_ENOENT;
	}
	if (rc == 0)
		rc = assemble(&r, html, len, err, errlen);
out:
	gb_buf_free(&r.body);
	gb_buf_free(&r.styles);
	evid_keyset_free(&r.embedded);
	json_decref(r.approvals);
	json_decref(r.session_info);
	json_decref(r.op_session);
	json_decref(r.refused_ops);
	json_decref(r.held_ops);
	json_decref(r.sessions);
	return rc;
}

int evid_report_write(const char *data_dir, const struct evid_report_opts *opts,
                      const char *out_path, char *err, size_t errlen)
{
	char *html = NULL;
	size_t len = 0;
	int rc;

	if (!out_path || !out_path[0]) {
		gb_set_error(err, errlen, "no output file given: use -o trail.html");
		rc = -EVID_EINVAL;
		goto out;
	}
	rc = evid_report_html(data_dir, opts, &html, &len, err, errlen);
	if (rc == 0)
		rc = gb_fs_write_replace(out_path, html, len, err, errlen);
out:
	free(html);
	return rc;
}

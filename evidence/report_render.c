/*
 * report_render.c - one audit record as an entry of the report's
 * timeline: a tool call with its element, URLs, verdicts, approvals,
 * blocked requests and screenshots (thumbnails that open the full and
 * annotated images), a refusal, an approval, a session with its
 * environment manifest, or any other record in a generic form.
 *
 * Every string from a record goes through rpt_text() (escaped). Images
 * are embedded once each (content-addressed: the same screenshot twice
 * is one data: URI) as a CSS class; thumbnails and full views use the
 * class, so the report needs no script. Artifacts are read back and
 * checked against their hash; a missing or changed one is shown as such.
 */
#include "evidence/report-private.h"

#include "evidence/evidence.h"

#include <sodium.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define TEXT_SHOW_MAX_BYTES (64u * 1024u) /* snapshot text shown inline */
#define NETLOG_MAX_ROWS 300
#define ARGS_SHOW_MAX_BYTES 2048u

/* A member as a string, or NULL. */
static const char *str(json_t *obj, const char *name)
{
	return json_string_value(json_object_get(obj, name));
}

/* Compact JSON of j, escaped, cut at max bytes. */
static void rpt_json(struct report *r, json_t *j, size_t max)
{
	char *text = json_dumps(j, JSON_COMPACT | JSON_SORT_KEYS | JSON_ENCODE_ANY);
	size_t len;

	if (!text) {
		rpt_raw(r, "—");
		return;
	}
	len = strlen(text);
	if (len > max) {
		len = max;
		while (len > 0 && ((unsigned char)text[len] & 0xC0) == 0x80)
			len--; /* do not cut a UTF-8 sequence */
	}
	if (evid_html_escape(r->out, text, len) != 0)
		r->oom = 1;
	if (len < strlen(text))
		rpt_raw(r, " …");
	free(text);
}

/* A JSON value as short text: strings as they are, others as JSON. */
static void rpt_value(struct report *r, json_t *v)
{
	if (json_is_string(v))
		rpt_text(r, json_string_value(v));
	else if (!v || json_is_null(v))
		rpt_raw(r, "—");
	else
		rpt_json(r, v, 400);
}

/* ---- artifacts ----------------------------------------------------------- */

/* Embeds a PNG once, as CSS class i<sha>. 0, or -1 with why. */
static int embed_png(struct report *r, const char *sha, struct evid_png_info *info, char *why,
                     size_t whylen)
{
	unsigned char *data = NULL;
	size_t len = 0;
	char *b64 = NULL;
	char key[66];
	size_t b64len;
	int rc;

	rc = evid_artifact_load(r->data_dir, r->tenant, 1, sha, &data, &len, NULL, why, whylen);
	if (rc == 0)
		rc = evid_png_check(data, len, info, why, whylen);
	if (rc != 0)
		goto out;
	snprintf(key, sizeof(key), "v%s", sha);
	if (evid_keyset_has(&r->embedded, key))
		goto out;
	b64len = sodium_base64_ENCODED_LEN(len, sodium_base64_VARIANT_ORIGINAL);
	b64 = malloc(b64len);
	if (!b64 || evid_keyset_add(&r->embedded, key) < 0) {
		r->oom = 1;
		rc = -1;
		goto out;
	}
	sodium_bin2base64(b64, b64len, data, len, sodium_base64_VARIANT_ORIGINAL);
	if (gb_buf_appendf(&r->styles, ".i%s{background-image:url(\"data:image/png;base64,", sha) ||
	    gb_buf_append(&r->styles, b64, strlen(b64)) || gb_buf_append(&r->styles, "\")}\n", 4))
		r->oom = 1;
out:
	free(b64);
	free(data);
	return rc;
}

/* A thumbnail that opens the full image, and the full view itself (or
 * why the image cannot be shown). */
static void render_image(struct report *r, uint64_t seq, size_t idx, const char *label,
                         const char *sha)
{
	struct evid_png_info info;
	char why[512] = "";

	if (embed_png(r, sha, &info, why, sizeof(why)) != 0) {
		rpt_raw(r, "<div class=\"note bad\">");
		rpt_text(r, label);
		rpt_raw(r, ": ");
		rpt_text(r, why);
		rpt_raw(r, "</div>");
	} else {
		rpt_printf(r,
		           "<a class=\"shot\" href=\"#v%llu-%zu\"><span class=\"thumb i%s\" "
		           "style=\"aspect-ratio:%u/%u\"></span>",
		           (unsigned long long)seq, idx, sha, info.width, info.height);
		rpt_text(r, label);
		rpt_printf(r,
		           "</a><div class=\"lb\" id=\"v%llu-%zu\"><a class=\"close\" "
		           "href=\"#r%llu\">close ✕</a><div class=\"full i%s\" style=\"--w:%upx;"
		           "aspect-ratio:%u/%u\"></div><div class=\"cap\">",
		           (unsigned long long)seq, idx, (unsigned long long)seq, sha, info.width,
		           info.width, info.height);
		rpt_text(r, label);
		rpt_printf(r, " · %u × %u · sha256 %.16s…</div></div>", info.width, info.height,
		           sha);
	}
}

/* Loads artifact sha into *data (malloc'd, the caller's) and *len; when
 * it cannot, says why in a note and closes the <details> the caller
 * opened. Returns 0, or -1 with the note written. */
static int load_in_details(struct report *r, const char *sha, unsigned char **data, size_t *len)
{
	char why[512] = "";

	if (evid_artifact_load(r->data_dir, r->tenant, 1, sha, data, len, NULL, why, sizeof(why)) ==
	    0)
		return 0;
	rpt_raw(r, "<div class=\"note bad\">");
	rpt_text(r, why);
	rpt_raw(r, "</div></details>");
	return -1;
}

/* The first TEXT_SHOW_MAX_BYTES of data (borrowed), HTML-escaped, in a
 * <pre>. */
static void render_pre(struct report *r, const unsigned char *data, size_t len)
{
	rpt_raw(r, "<pre>");
	if (evid_html_escape(r->out, (const char *)data,
	                     len > TEXT_SHOW_MAX_BYTES ? TEXT_SHOW_MAX_BYTES : len) != 0)
		r->oom = 1;
	rpt_raw(r, "</pre>");
}

/* Snapshot text, inline in a details element. */
static void render_text_artifact(struct report *r, const char *label, const char *sha)
{
	unsigned char *data = NULL;
	size_t len = 0;

	rpt_raw(r, "<details><summary>");
	rpt_text(r, label);
	rpt_raw(r, "</summary>");
	if (load_in_details(r, sha, &data, &len) < 0)
		goto out;
	render_pre(r, data, len);
	if (len > TEXT_SHOW_MAX_BYTES)
		rpt_printf(r,
		           "<div class=\"note\">first %u of %zu bytes shown; the whole text is "
		           "artifact %s</div>",
		           TEXT_SHOW_MAX_BYTES, len, sha);
	rpt_raw(r, "</details>");
out:
	free(data);
}

/* The network log: a table of requests when it is an array of them. */
static void render_netlog(struct report *r, const char *sha)
{
	unsigned char *data = NULL;
	size_t len = 0;
	json_t *log = NULL;
	json_t *e;
	size_t i;

	rpt_raw(r, "<details><summary>Network log</summary>");
	if (load_in_details(r, sha, &data, &len) < 0)
		goto out;
	log = json_loadb((const char *)data, len, 0, NULL);
	if (!json_is_array(log)) {
		render_pre(r, data, len);
		rpt_raw(r, "</details>");
		goto out;
	}
	rpt_raw(r, "<table><tr><th>method</th><th>status</th><th>URL</th><th>note</th></tr>");
	json_array_foreach(log, i, e)
	{
		if (i >= NETLOG_MAX_ROWS) {
			rpt_printf(r, "<tr><td colspan=\"4\">… %zu more</td></tr>",
			           json_array_size(log) - i);
			break;
		}
		rpt_raw(r, "<tr><td>");
		rpt_value(r, json_object_get(e, "method"));
		rpt_raw(r, "</td><td>");
		rpt_value(r, json_object_get(e, "status"));
		rpt_raw(r, "</td><td class=\"url\">");
		rpt_value(r, json_object_get(e, "url"));
		rpt_raw(r, "</td><td>");
		rpt_text(r, str(e, "error") ? str(e, "error") : str(e, "blocked") ? "blocked" : "");
		rpt_raw(r, "</td></tr>");
	}
	rpt_raw(r, "</table></details>");
out:
	json_decref(log);
	free(data);
}

/* Every artifact of a record, by kind. */
/* The session recording's frames of the action, in time order, as a
 * strip of small thumbnails that open full size. */
static void render_filmstrip(struct report *r, const struct evid_record *rec)
{
	json_t *a;
	size_t i;
	size_t n = 0;
	char label[32];

	json_array_foreach(rec->artifacts, i, a)
	{
		const char *sha = str(a, "sha256");
		const char *kind = str(a, "kind");

		if (!kind || strcmp(kind, EVID_KIND_SCREENCAST_FRAME) != 0 ||
		    !evid_sha256_hex_is_valid(sha) || json_is_false(json_object_get(a, "valid")))
			continue;
		if (!n++)
			rpt_raw(r, "<div class=\"film\" title=\"session recording\">");
		snprintf(label, sizeof(label), "frame %zu", n);
		render_image(r, rec->seq, i, label, sha);
	}
	if (n)
		rpt_raw(r, "</div>");
}

static void render_artifacts(struct report *r, const struct evid_record *rec)
{
	json_t *a;
	size_t i;
	const char *kind;
	const char *sha;

	rpt_raw(r, "<div class=\"shots\">");
	json_array_foreach(rec->artifacts, i, a)
	{
		kind = str(a, "kind");
		sha = str(a, "sha256");
		if (!kind || !evid_sha256_hex_is_valid(sha))
			continue;
		if (json_is_false(json_object_get(a, "valid"))) {
			rpt_raw(r, "<div class=\"note bad\">");
			rpt_text(r, kind);
			rpt_raw(r, " kept as invalid evidence: ");
			rpt_text(r, str(a, "reason"));
			rpt_raw(r, "</div>");
		} else if (!strcmp(kind, EVID_KIND_SCREENSHOT)) {
			render_image(r, rec->seq, i, "after the action", sha);
		} else if (!strcmp(kind, EVID_KIND_ANNOTATED)) {
			render_image(r, rec->seq, i, "annotated", sha);
		} else if (!strcmp(kind, EVID_KIND_SCREENCAST_FRAME)) {
			continue; /* in the filmstrip below */
		} else if (json_is_string(json_object_get(a, "mime")) &&
		           !strcmp(str(a, "mime"), "image/png")) {
			render_image(r, rec->seq, i, kind, sha);
		}
	}
	rpt_raw(r, "</div>");
	render_filmstrip(r, rec);
	json_array_foreach(rec->artifacts, i, a)
	{
		kind = str(a, "kind");
		sha = str(a, "sha256");
		if (!kind || !evid_sha256_hex_is_valid(sha) ||
		    json_is_false(json_object_get(a, "valid")))
			continue;
		if (!strcmp(kind, EVID_KIND_SNAPSHOT))
			render_text_artifact(r, "Snapshot the agent acted on", sha);
		else if (!strcmp(kind, EVID_KIND_NETWORK_LOG))
			render_netlog(r, sha);
	}
}

/* ---- parts of an entry ---------------------------------------------------- */

/* The entry's first line: when, which record, what. */
static void render_head(struct report *r, const struct evid_record *rec, const char *title,
                        const char *badge_class, const char *badge)
{
	rpt_raw(r, "<div class=\"head\"><span class=\"tool\">");
	rpt_text(r, title);
	rpt_raw(r, "</span>");
	if (badge)
		rpt_printf(r, "<span class=\"badge %s\">%s</span>", badge_class, badge);
	rpt_raw(r, "<span class=\"time\">");
	rpt_text(r, rec->time);
	rpt_printf(r, "</span><span class=\"seq\">record %llu</span>",
	           (unsigned long long)rec->seq);
	if (rec->session) {
		rpt_raw(r, "<span class=\"seq\">session ");
		rpt_text(r, rec->session);
		rpt_raw(r, "</span>");
	}
	rpt_raw(r, "</div>");
}

/* One row of a definition list; skipped when v is absent. */
static void kv(struct report *r, const char *label, json_t *v, const char *cls)
{
	if (!v || json_is_null(v))
		return;
	rpt_printf(r, "<dt>%s</dt><dd%s%s%s>", label, cls ? " class=\"" : "", cls ? cls : "",
	           cls ? "\"" : "");
	rpt_value(r, v);
	rpt_raw(r, "</dd>");
}

/* The session's own facts (client, flow) from its session_opened record;
 * a record without a session (an approval's) belongs to the session of
 * its operation's tool call. */
static json_t *session_info(const struct report *r, const struct evid_record *rec)
{
	const char *session = rec->session;

	if (!session && rec->operation)
		session = json_string_value(json_object_get(r->op_session, rec->operation));
	return session ? json_object_get(r->session_info, session) : NULL;
}

/* Who acted, every part the record (or its session) names: the tenant,
 * the credential's id, the client that made the call, the user the
 * service ran as; a person's approval names the person. */
static void render_actor(struct report *r, const struct evid_record *rec)
{
	json_t *actor = json_object_get(rec->rec, "actor");
	json_t *info = session_info(r, rec);
	const char *tenant = str(actor, "tenant") ? str(actor, "tenant") : rec->tenant;
	const char *token = str(actor, "token");
	const char *user = str(actor, "user");
	const char *client =
	    str(rec->body, "client") ? str(rec->body, "client") : str(info, "client");

	rpt_raw(r, "<dt>Actor</dt><dd class=\"actor\">tenant ");
	rpt_text(r, tenant);
	rpt_raw(r, " · ");
	if (token) {
		rpt_raw(r, "credential <span class=\"mono\">");
		rpt_text(r, token);
		rpt_raw(r, "</span>");
	} else {
		rpt_raw(r, "<span class=\"muted\">no credential (local)</span>");
	}
	if (client) {
		rpt_raw(r, " · client ");
		rpt_text(r, client);
	}
	if (user && user[0]) {
		rpt_raw(r, " <span class=\"muted\">(service user ");
		rpt_text(r, user);
		rpt_raw(r, ")</span>");
	}
	rpt_raw(r, "</dd>");
}

/* The flow a record belongs to, when its session ran one. */
static void render_flow(struct report *r, const struct evid_record *rec)
{
	const char *flow =
	    str(rec->body, "flow") ? str(rec->body, "flow") : str(session_info(r, rec), "flow");

	if (!flow)
		return;
	rpt_raw(r, "<dt>Flow</dt><dd class=\"flow\">");
	rpt_text(r, flow);
	rpt_raw(r, "</dd>");
}

/* The element acted on: role "name" (ref), or what the target resolved to
 * (button "Save" [e5], "css=#save"). */
static void render_element(struct report *r, json_t *el)
{
	const char *ref;

	if (!json_is_object(el))
		return;
	ref = str(el, "ref") && str(el, "ref")[0] ? str(el, "ref") : NULL;
	rpt_raw(r, "<dt>Element</dt><dd class=\"element\">");
	if (str(el, "role")) {
		rpt_text(r, str(el, "role"));
		if (str(el, "name")) {
			rpt_raw(r, " “");
			rpt_text(r, str(el, "name"));
			rpt_raw(r, "”");
		}
		if (ref) {
			rpt_raw(r, " <span class=\"muted\">ref ");
			rpt_text(r, ref);
			rpt_raw(r, "</span>");
		}
	} else {
		rpt_text(r, str(el, "description") ? str(el, "description") : ref);
	}
	rpt_raw(r, "</dd>");
}

/* Counts the record's operation once in the set ops (or, without one,
 * the record itself); returns 1 when it was not counted before. */
static int count_once(struct report *r, json_t *ops, const struct evid_record *rec)
{
	char key[48];
	const char *k = rec->operation;

	if (!k) {
		snprintf(key, sizeof(key), "seq %llu", (unsigned long long)rec->seq);
		k = key;
	}
	if (json_object_get(ops, k))
		return 0;
	if (json_object_set_new(ops, k, json_true()) != 0)
		r->oom = 1;
	return 1;
}

/* Error codes of an action the policy did not let run. */
static int is_refusal_code(const char *code)
{
	static const char *const codes[] = { "url_refused", "forbidden", "approval_denied",
		                             "approval_refused" };
	size_t i;

	for (i = 0; code && i < sizeof(codes) / sizeof(codes[0]); i++)
		if (!strcmp(code, codes[i]))
			return 1;
	return 0;
}

/* Verdicts as a table. */
static void render_verdicts(struct report *r, json_t *verdicts)
{
	json_t *v;
	size_t i;
	int ok;

	if (!json_is_array(verdicts) || !json_array_size(verdicts))
		return;
	rpt_raw(r, "<table class=\"verdicts\"><tr><th>check</th><th>expected</th><th>observed</th>"
	           "<th></th></tr>");
	json_array_foreach(verdicts, i, v)
	{
		ok = json_is_true(json_object_get(v, "ok"));
		rpt_raw(r, "<tr><td>");
		rpt_value(r, json_object_get(v, "check"));
		rpt_raw(r, "</td><td>");
		rpt_value(r, json_object_get(v, "expected"));
		rpt_raw(r, "</td><td>");
		rpt_value(r, json_object_get(v, "observed"));
		rpt_printf(r, "</td><td><span class=\"badge %s\">%s</span></td></tr>",
		           ok ? "ok" : "bad", ok ? "pass" : "fail");
	}
	rpt_raw(r, "</table>");
}

/* Approvals of this operation: from the record and from approval records. */
static void render_approvals(struct report *r, const struct evid_record *rec)
{
	json_t *list = rec->operation ? json_object_get(r->approvals, rec->operation) : NULL;
	json_t *own = json_object_get(rec->body, "approval");
	json_t *a;
	size_t i;

	if (json_is_object(own)) {
		rpt_raw(r, "<dt>Approval</dt><dd>approved by ");
		rpt_value(r, json_object_get(own, "by"));
		rpt_raw(r, " at ");
		rpt_value(r, json_object_get(own, "at"));
		rpt_raw(r, "</dd>");
	}
	json_array_foreach(list, i, a)
	{
		rpt_raw(r, "<dt>Approval</dt><dd>");
		rpt_text(r, str(a, "kind") && !strcmp(str(a, "kind"), EVID_AUDIT_APPROVAL_DENIED)
		                ? "denied by "
		                : "approved by ");
		rpt_value(r, json_object_get(a, "by"));
		rpt_raw(r, " at ");
		rpt_value(r, json_object_get(a, "at"));
		rpt_raw(r, "</dd>");
	}
}

/* Requests the policy blocked during the action. */
static void render_blocked(struct report *r, json_t *blocked)
{
	json_t *b;
	size_t i;

	if (!json_is_array(blocked) || !json_array_size(blocked))
		return;
	r->blocked += json_array_size(blocked);
	rpt_raw(r, "<dt>Blocked</dt><dd><ul class=\"blocked\">");
	json_array_foreach(blocked, i, b)
	{
		rpt_raw(r, "<li><span class=\"url\">");
		rpt_value(r, json_is_object(b) ? json_object_get(b, "url") : b);
		rpt_raw(r, "</span>");
		if (json_is_object(b) && str(b, "reason")) {
			rpt_raw(r, " — ");
			rpt_text(r, str(b, "reason"));
		}
		rpt_raw(r, "</li>");
	}
	rpt_raw(r, "</ul></dd>");
}

/* ---- entries by kind ------------------------------------------------------ */

static void render_tool_call(struct report *r, const struct evid_record *rec)
{
	json_t *body = rec->body;
	json_t *okv = json_object_get(body, "ok");
	int ok = !json_is_false(okv);
	json_t *error = json_object_get(body, "error");

	r->actions++;
	if (!ok)
		r->failed++;
	if (is_refusal_code(str(error, "code")))
		r->refusals += (size_t)count_once(r, r->refused_ops, rec);
	if (str(error, "code") && !strcmp(str(error, "code"), "approval_required"))
		r->held += (size_t)count_once(r, r->held_ops, rec);
	rpt_printf(r, "<li class=\"ev %s\" id=\"r%llu\"><div class=\"main\">", ok ? "ok" : "fail",
	           (unsigned long long)rec->seq);
	render_head(r, rec, str(body, "tool") ? str(body, "tool") : "tool call", ok ? "ok" : "bad",
	            ok ? "ok" : "failed");
	rpt_raw(r, "<dl class=\"kv\">");
	render_actor(r, rec);
	render_flow(r, rec);
	render_element(r, json_object_get(body, "element"));
	kv(r, "Frame", json_object_get(json_object_get(body, "element"), "frame_url"), "url");
	kv(r, "URL before", json_object_get(body, "url_before"), "url");
	kv(r, "URL after", json_object_get(body, "url"), "url");
	kv(r, "Title", json_object_get(body, "title"), NULL);
	if (json_is_object(error)) {
		rpt_raw(r, "<dt>Error</dt><dd class=\"badtext\">");
		rpt_value(r, json_object_get(error, "message"));
		rpt_raw(r, "</dd>");
	}
	render_approvals(r, rec);
	render_blocked(r, json_object_get(body, "blocked"));
	kv(r, "Evidence", json_object_get(body, "evidence_error"), "badtext");
	if (json_object_size(json_object_get(body, "arguments"))) {
		rpt_raw(r, "<dt>Arguments</dt><dd class=\"mono\">");
		rpt_json(r, json_object_get(body, "arguments"), ARGS_SHOW_MAX_BYTES);
		rpt_raw(r, "</dd>");
	}
	rpt_raw(r, "</dl>");
	render_verdicts(r, json_object_get(body, "verdicts"));
	rpt_raw(r, "</div><div class=\"side\">");
	render_artifacts(r, rec);
	rpt_raw(r, "</div></li>\n");
}

static void render_refusal(struct report *r, const struct evid_record *rec)
{
	/* a request the egress layers refused nests its facts in "refusal" */
	json_t *d = json_is_object(json_object_get(rec->body, "refusal"))
	                ? json_object_get(rec->body, "refusal")
	                : rec->body;

	r->refusals += (size_t)count_once(r, r->refused_ops, rec);
	rpt_printf(r, "<li class=\"ev refused\" id=\"r%llu\"><div class=\"main\">",
	           (unsigned long long)rec->seq);
	render_head(r, rec, str(rec->body, "tool") ? str(rec->body, "tool") : "action", "warn",
	            "refused by policy");
	rpt_raw(r, "<dl class=\"kv\">");
	render_actor(r, rec);
	render_flow(r, rec);
	kv(r, "Rule", json_object_get(d, "rule"), NULL);
	kv(r, "Reason", json_object_get(d, "reason"), NULL);
	kv(r, "Why", json_object_get(d, "message"), NULL);
	kv(r, "Summary", json_object_get(d, "summary"), NULL);
	kv(r, "URL", json_object_get(d, "url"), "url");
	kv(r, "Host", json_object_get(d, "host"), "mono");
	kv(r, "Layer", json_object_get(d, "layer"), NULL);
	render_blocked(r, json_object_get(rec->body, "blocked"));
	rpt_raw(r, "</dl></div><div class=\"side\">");
	render_artifacts(r, rec);
	rpt_raw(r, "</div></li>\n");
}

/* The actor of a decision on an approval: a person, named by the channel
 * that decided ("human alice via the CLI", "human at client X"). */
static void render_person(struct report *r, const struct evid_record *rec)
{
	const char *by = str(rec->body, "by");
	const char *channel = str(rec->body, "channel");

	rpt_raw(r, "<dt>Actor</dt><dd class=\"actor\">human");
	if (by && by[0]) {
		rpt_raw(r, " ");
		rpt_text(r, by);
	}
	if (channel && channel[0]) {
		rpt_raw(r, " <span class=\"muted\">via ");
		rpt_text(r, channel);
		rpt_raw(r, "</span>");
	}
	rpt_raw(r, " · tenant ");
	rpt_text(r, rec->tenant);
	rpt_raw(r, "</dd>");
}

/* An approval's life (approval_event): asked for ("created": the action
 * held, who asked, the summary a person decides on), then spent by the
 * repeated call ("used") or expired. */
static void render_approval_request(struct report *r, const struct evid_record *rec)
{
	const char *event = gb_or(str(rec->body, "event"), "");
	int created = !strcmp(event, "created");

	if (created)
		r->held += (size_t)count_once(r, r->held_ops, rec);
	rpt_printf(r, "<li class=\"ev approval\" id=\"r%llu\"><div class=\"main\">",
	           (unsigned long long)rec->seq);
	if (created)
		render_head(r, rec, "approval requested", "warn", "held");
	else if (!strcmp(event, "used"))
		render_head(r, rec, "approval used", "info", "spent");
	else
		render_head(r, rec, "approval event", NULL, NULL); /* the event is shown below */
	rpt_raw(r, "<dl class=\"kv\">");
	render_actor(r, rec);
	if (!created)
		kv(r, "Event", json_object_get(rec->body, "event"), NULL);
	kv(r, "For", json_object_get(rec->body, "tool"), NULL);
	kv(r, "Summary", json_object_get(rec->body, "summary"), NULL);
	kv(r, "Rule", json_object_get(rec->body, "rule"), NULL);
	kv(r, "Approval", json_object_get(rec->body, "approval_id"), "mono");
	kv(r, "Operation", json_object_get(rec->rec, "operation"), "mono");
	rpt_raw(r, "</dl></div></li>\n");
}

static void render_approval(struct report *r, const struct evid_record *rec)
{
	int granted = !strcmp(rec->kind, EVID_AUDIT_APPROVAL_GRANTED);

	r->approvals_n++;
	rpt_printf(r, "<li class=\"ev approval\" id=\"r%llu\"><div class=\"main\">",
	           (unsigned long long)rec->seq);
	render_head(r, rec, granted ? "approval granted" : "approval denied",
	            granted ? "ok" : "bad", granted ? "approved" : "denied");
	rpt_raw(r, "<dl class=\"kv\">");
	render_person(r, rec);
	kv(r, "At", json_object_get(rec->body, "at"), NULL);
	kv(r, "For", json_object_get(rec->body, "tool"), NULL);
	kv(r, "Approval", json_object_get(rec->body, "approval_id"), "mono");
	kv(r, "Reason", json_object_get(rec->body, "reason"), NULL);
	kv(r, "Operation", json_object_get(rec->rec, "operation"), "mono");
	rpt_raw(r, "</dl></div></li>\n");
}

static void render_session(struct report *r, const struct evid_record *rec)
{
	json_t *m = json_object_get(rec->body, "manifest");
	int opened = !strcmp(rec->kind, EVID_AUDIT_SESSION_OPENED);

	rpt_printf(r, "<li class=\"ev session\" id=\"r%llu\"><div class=\"main\">",
	           (unsigned long long)rec->seq);
	render_head(r, rec, opened ? "session opened" : "session closed", "info",
	            opened ? "start" : "end");
	rpt_raw(r, "<dl class=\"kv\">");
	render_actor(r, rec);
	render_flow(r, rec);
	kv(r, "Reason", json_object_get(rec->body, "reason"), NULL);
	kv(r, "Profile", json_object_get(rec->body, "profile"), NULL);
	if (json_is_object(m)) {
		kv(r, "Chromium", json_object_get(m, "chromium_version"), NULL);
		kv(r, "glassbox", json_object_get(m, "glassbox_version"), NULL);
		kv(r, "Policy sha256", json_object_get(m, "policy_sha256"), "mono");
		kv(r, "Config sha256", json_object_get(m, "config_sha256"), "mono");
		if (json_is_array(json_object_get(m, "launch_flags"))) {
			rpt_raw(r, "<dt>Launch flags</dt><dd class=\"mono\">");
			rpt_json(r, json_object_get(m, "launch_flags"), 4096);
			rpt_raw(r, "</dd>");
		}
		kv(r, "Libraries", json_object_get(m, "libraries"), "mono");
	}
	rpt_raw(r, "</dl></div></li>\n");
}

static void render_other(struct report *r, const struct evid_record *rec)
{
	rpt_printf(r, "<li class=\"ev other\" id=\"r%llu\"><div class=\"main\">",
	           (unsigned long long)rec->seq);
	render_head(r, rec, rec->kind, NULL, NULL);
	rpt_raw(r, "<dl class=\"kv\">");
	render_actor(r, rec);
	if (json_object_size(rec->body)) {
		rpt_raw(r, "<dt>Details</dt><dd class=\"mono\">");
		rpt_json(r, rec->body, ARGS_SHOW_MAX_BYTES);
		rpt_raw(r, "</dd>");
	}
	rpt_raw(r, "</dl></div><div class=\"side\">");
	render_artifacts(r, rec);
	rpt_raw(r, "</div></li>\n");
}

void rpt_render_record(struct report *r, const struct evid_record *rec)
{
	if (!strcmp(rec->kind, EVID_AUDIT_TOOL_CALL))
		render_tool_call(r, rec);
	else if (!strcmp(rec->kind, EVID_AUDIT_POLICY_REFUSAL))
		render_refusal(r, rec);
	else if (!strcmp(rec->kind, EVID_AUDIT_APPROVAL_GRANTED) ||
	         !strcmp(rec->kind, EVID_AUDIT_APPROVAL_DENIED))
		render_approval(r, rec);
	else if (!strcmp(rec->kind, "approval_event") && str(rec->body, "event"))
		render_approval_request(r, rec);
	else if (!strcmp(rec->kind, EVID_AUDIT_SESSION_OPENED) ||
	         !strcmp(rec->kind, EVID_AUDIT_SESSION_CLOSED))
		render_session(r, rec);
	else
		render_other(r, rec);
}

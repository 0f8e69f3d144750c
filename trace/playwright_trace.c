/*
 * playwright_trace.c - a session as a Playwright trace (trace.zip, format
 * version 10, what `npx playwright show-trace` and trace.playwright.dev
 * open): trace.trace holds JSON lines (context-options, then per action
 * before / input / log / after, the page's console errors and a
 * screencast-frame before and after each action); trace.network holds
 * one resource-snapshot (a HAR entry, har.c) per request of an action;
 * resources/ holds the screenshots, each named by the sha256 the audit
 * record signs (resources/<sha256>.png), so a reviewer can match a
 * trace's image to the signed trail.
 *
 * Times: the trace's clock is milliseconds since the session's first
 * record. An action ends when its record was written and lasted its
 * recorded duration. Before an action, the page is shown by its own
 * "before" screenshot when the policy keeps them, otherwise by the
 * screenshot the previous action left (named so in its attachment).
 */
#include "trace/trace-private.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define TRACE_VERSION 10

struct build {
	const struct trace_session *s;
	struct trace_zip *zip;
	struct gb_buf events;  /* trace.trace */
	struct gb_buf network; /* trace.network */
	json_t *added;         /* sha256 -> 1: resources already in the zip */
	char page_id[300];
	int width;
	int height;
	char *err;
	size_t errlen;
	int rc;
};

/* Appends one JSON line (takes ev). */
static void emit(struct gb_buf *b, json_t *ev, struct build *bd)
{
	char *line = ev ? json_dumps(ev, JSON_COMPACT) : NULL;

	if (!line || gb_buf_append(b, line, strlen(line)) != 0 || gb_buf_append(b, "\n", 1) != 0) {
		if (bd->rc == 0)
			gb_set_error(bd->err, bd->errlen,
			             "the trace would be larger than %u bytes or memory ran out",
			             TRACE_MAX_EXPORT_BYTES);
		bd->rc = -ENOMEM;
	}
	free(line);
	json_decref(ev);
}

/* Milliseconds since the session's first record. */
static double at(const struct build *bd, int64_t wall_ms)
{
	return (double)(wall_ms - bd->s->first_ms);
}

/* Width and height of a PNG from its IHDR; 0 when it is not one. */
static void png_size(const unsigned char *png, size_t len, int *w, int *h)
{
	*w = 0;
	*h = 0;
	if (len < 24 || memcmp(png + 12, "IHDR", 4) != 0)
		return;
	*w = (int)((unsigned)png[16] << 24 | (unsigned)png[17] << 16 | (unsigned)png[18] << 8 |
	           png[19]);
	*h = (int)((unsigned)png[20] << 24 | (unsigned)png[21] << 16 | (unsigned)png[22] << 8 |
	           png[23]);
}

/* Puts the screenshot sha256 into resources/ once (viewport: it is of
 * the whole viewport, whose size the context's options state); its zip
 * path into path. 0, or -1 when it could not be read (the trace goes on without it;
 * a log line of the action says why). */
static int add_image(struct build *bd, const char *sha256, int viewport, char *path, size_t pathlen,
                     char *why, size_t whylen)
{
	unsigned char *png = NULL;
	size_t len = 0;
	int w;
	int h;
	int rc = 0;

	snprintf(path, pathlen, "resources/%s.png", sha256);
	if (json_object_get(bd->added, sha256))
		goto out;
	rc = trace_artifact_bytes(bd->s, sha256, &png, &len, why, whylen);
	if (rc != 0) {
		rc = -1;
		goto out;
	}
	png_size(png, len, &w, &h);
	if (viewport && !bd->width && w > 0) {
		bd->width = w;
		bd->height = h;
	}
	if (trace_zip_add(bd->zip, path, png, len, bd->err, bd->errlen) != 0)
		bd->rc = -EIO;
	json_object_set_new(bd->added, sha256, json_true());
out:
	free(png);
	return rc;
}

/* The sha256 of an action's screenshot: its artifact, or the earlier
 * screenshot its result names when the page had not changed. */
static const char *shot_of(const json_t *rec, const char *kind)
{
	json_t *a = trace_artifact(rec, kind);
	json_t *ev;
	size_t i;

	if (a)
		return json_string_value(json_object_get(a, "sha256"));
	if (strcmp(kind, "screenshot") != 0)
		return NULL;
	json_array_foreach(json_object_get(json_object_get(rec, "body"), "evidence"), i, ev)
	{
		const char *k = json_string_value(json_object_get(ev, "kind"));

		if (k && !strcmp(k, "screenshot"))
			return json_string_value(json_object_get(ev, "sha256"));
	}
	return NULL;
}

/* The method Playwright would call for tool (what the viewer's list shows
 * beside the title); the tool's own name for the others (the viewer hides
 * some of Playwright's methods, such as ariaSnapshot, from its list). */
static const char *method_of(const char *tool)
{
	static const char *const map[][2] = {
		{ "browser_navigate", "goto" },
		{ "browser_navigate_back", "goBack" },
		{ "browser_click", "click" },
		{ "browser_type", "fill" },
		{ "browser_select_option", "selectOption" },
		{ "browser_press_key", "press" },
		{ "browser_hover", "hover" },
		{ "browser_wait_for", "waitForSelector" },
		{ "browser_evaluate", "evaluateExpression" },
	};
	size_t i;

	for (i = 0; i < sizeof(map) / sizeof(map[0]); i++)
		if (!strcmp(tool, map[i][0]))
			return map[i][1];
	return tool;
}

/* "browser_click role=button[name=\"Save\"]": the action's title. */
static void title_of(const json_t *rec, char *buf, size_t buflen)
{
	json_t *body = json_object_get(rec, "body");
	json_t *args = json_object_get(body, "arguments");
	const char *tool = json_string_value(json_object_get(body, "tool"));
	const char *what = json_string_value(json_object_get(args, "target"));
	const char *desc =
	    json_string_value(json_object_get(json_object_get(body, "element"), "description"));

	if (!what)
		what = json_string_value(json_object_get(args, "url"));
	if (!what)
		what = json_string_value(json_object_get(args, "key"));
	if (desc && what && strcmp(desc, what) != 0)
		snprintf(buf, buflen, "%s %.300s (%.300s)", tool, what, desc);
	else
		snprintf(buf, buflen, "%s%s%.300s", tool, what ? " " : "", what ? what : "");
}

/* A filmstrip frame: a screenshot (width 0: the viewport's size) or a
 * screencast frame. */
static void emit_frame(struct build *bd, const char *path, double t, int width, int height)
{
	emit(&bd->events,
	     json_pack("{s:s, s:s, s:s, s:i, s:i, s:f}", "type", "screencast-frame", "pageId",
	               bd->page_id, "file", path, "width", width ? width : bd->width, "height",
	               width ? height : bd->height, "timestamp", t),
	     bd);
}

/* The session recording's frames of the action (body.screencast), in
 * the filmstrip between its before and after screenshots. */
static void emit_screencast(struct build *bd, const json_t *rec)
{
	json_t *frames = json_object_get(json_object_get(rec, "body"), "screencast");
	json_t *f;
	char path[300];
	char why[512];
	size_t i;

	json_array_foreach(frames, i, f)
	{
		const char *sha = json_string_value(json_object_get(f, "sha256"));

		if (sha && add_image(bd, sha, 0, path, sizeof(path), why, sizeof(why)) == 0)
			emit_frame(bd, path,
			           at(bd, (int64_t)json_integer_value(json_object_get(f, "at_ms"))),
			           (int)json_integer_value(json_object_get(f, "width")),
			           (int)json_integer_value(json_object_get(f, "height")));
	}
}

/* The log lines of an action: its verdicts, where its click landed, its
 * error. */
static void emit_logs(struct build *bd, const char *call_id, const json_t *rec, double t)
{
	json_t *body = json_object_get(rec, "body");
	json_t *v;
	size_t i;
	char line[2048];
	char *expected;
	char *observed;

	json_array_foreach(json_object_get(body, "verdicts"), i, v)
	{
		expected = json_dumps(json_object_get(v, "expected"), JSON_ENCODE_ANY);
		observed = json_dumps(json_object_get(v, "observed"), JSON_ENCODE_ANY);
		snprintf(line, sizeof(line), "%s verdict %s: expected %.800s, observed %.800s",
		         json_is_true(json_object_get(v, "ok")) ? "✔" : "✘",
		         gb_or(json_string_value(json_object_get(v, "check")), "?"),
		         gb_or(expected, "null"), gb_or(observed, "null"));
		free(expected);
		free(observed);
		emit(&bd->events,
		     json_pack("{s:s, s:s, s:f, s:s}", "type", "log", "callId", call_id, "time", t,
		               "message", line),
		     bd);
	}
	if (json_is_string(json_object_get(body, "landed"))) {
		snprintf(line, sizeof(line), "the click landed %.500s",
		         json_string_value(json_object_get(body, "landed")));
		emit(&bd->events,
		     json_pack("{s:s, s:s, s:f, s:s}", "type", "log", "callId", call_id, "time", t,
		               "message", line),
		     bd);
	}
}

/* {x, y, width, height} of a [x, y, w, h] array. */
static json_t *box_of(json_t *a)
{
	return json_pack("{s:f, s:f, s:f, s:f}", "x", json_number_value(json_array_get(a, 0)), "y",
	                 json_number_value(json_array_get(a, 1)), "width",
	                 json_number_value(json_array_get(a, 2)), "height",
	                 json_number_value(json_array_get(a, 3)));
}

/* The action's result as the viewer's Call tab shows it: what glassbox
 * verified and the evidence that proves it. */
static json_t *result_of(const json_t *rec)
{
	json_t *body = json_object_get(rec, "body");
	json_t *evidence = json_array();
	json_t *a;
	size_t i;

	json_array_foreach(json_object_get(rec, "artifacts"), i, a) json_array_append_new(
	    evidence, json_pack("{s:O, s:O}", "kind", json_object_get(a, "kind"), "sha256",
	                        json_object_get(a, "sha256")));
	return json_pack("{s:b, s:O?, s:O?, s:O?, s:O?, s:o, s:{s:O, s:O, s:O?}}", "ok",
	                 json_is_true(json_object_get(body, "ok")), "url",
	                 json_object_get(body, "url"), "title", json_object_get(body, "title"),
	                 "verdicts", json_object_get(body, "verdicts"), "blocked",
	                 json_object_get(body, "blocked"), "evidence", evidence, "record", "seq",
	                 json_object_get(rec, "seq"), "hash", json_object_get(rec, "hash"),
	                 "operation", json_object_get(rec, "operation"));
}

/* The attachment of a screenshot. */
static json_t *attachment(const char *name, const char *path)
{
	return json_pack("{s:s, s:s, s:s}", "name", name, "contentType", "image/png", "file", path);
}

static void emit_action(struct build *bd, size_t i, const json_t *rec, const char **prev_shot)
{
	json_t *body = json_object_get(rec, "body");
	json_t *args = json_object_get(body, "arguments");
	json_t *el = json_object_get(body, "element");
	json_t *error = json_object_get(body, "error");
	json_t *params = json_is_object(args) ? json_deep_copy(args) : json_object();
	json_t *attachments = json_array();
	json_t *after;
	json_t *c;
	const char *before_shot = shot_of(rec, "screenshot_before");
	const char *after_shot = shot_of(rec, "screenshot");
	const char *annotated = shot_of(rec, "annotated_screenshot");
	char call_id[32];
	char title[1024];
	char path[300];
	char why[512];
	int64_t start_ms;
	int64_t end_ms;
	double s;
	double e;
	size_t k;

	trace_action_times(rec, &start_ms, &end_ms);
	s = at(bd, start_ms);
	e = at(bd, end_ms);
	snprintf(call_id, sizeof(call_id), "call@%zu", i + 1);
	title_of(rec, title, sizeof(title));
	if (json_is_string(json_object_get(args, "target")))
		json_object_set(params, "selector", json_object_get(args, "target"));
	emit(&bd->events,
	     json_pack("{s:s, s:s, s:f, s:s, s:s, s:s, s:o, s:s}", "type", "before", "callId",
	               call_id, "startTime", s, "class", "Frame", "method",
	               method_of(json_string_value(json_object_get(body, "tool"))), "title", title,
	               "params", params, "pageId", bd->page_id),
	     bd);
	if (!before_shot)
		before_shot = *prev_shot;
	if (before_shot &&
	    add_image(bd, before_shot, 1, path, sizeof(path), why, sizeof(why)) == 0) {
		emit_frame(bd, path, s, 0, 0);
		json_array_append_new(attachments,
		                      attachment(shot_of(rec, "screenshot_before")
		                                     ? "screenshot before"
		                                     : "screenshot before (the previous action's)",
		                                 path));
	}
	if (json_is_array(json_object_get(el, "box"))) {
		json_t *input = json_pack("{s:s, s:s, s:o}", "type", "input", "callId", call_id,
		                          "box", box_of(json_object_get(el, "box")));
		json_t *pt = json_object_get(el, "point");

		if (json_is_array(pt))
			json_object_set_new(input, "point",
			                    json_pack("{s:f, s:f}", "x",
			                              json_number_value(json_array_get(pt, 0)), "y",
			                              json_number_value(json_array_get(pt, 1))));
		emit(&bd->events, input, bd);
	}
	emit_screencast(bd, rec);
	emit_logs(bd, call_id, rec, e);
	json_array_foreach(json_object_get(body, "console_errors"), k, c)
	    emit(&bd->events,
	         json_pack("{s:s, s:s, s:O, s:[], s:{s:s, s:i, s:i}, s:f, s:s}", "type", "console",
	                   "messageType", "error", "text", c, "args", "location", "url",
	                   gb_or(json_string_value(json_object_get(body, "url")), ""), "lineNumber",
	                   0, "columnNumber", 0, "time", e, "pageId", bd->page_id),
	         bd);
	if (after_shot && add_image(bd, after_shot, 1, path, sizeof(path), why, sizeof(why)) == 0) {
		emit_frame(bd, path, e, 0, 0);
		json_array_append_new(attachments, attachment("screenshot after", path));
		*prev_shot = after_shot;
	} else if (after_shot) {
		emit(&bd->events,
		     json_pack("{s:s, s:s, s:f, s:s}", "type", "log", "callId", call_id, "time", e,
		               "message", why),
		     bd);
	}
	if (annotated && add_image(bd, annotated, 1, path, sizeof(path), why, sizeof(why)) == 0)
		json_array_append_new(
		    attachments,
		    attachment("screenshot annotated (element and click point)", path));
	after = json_pack("{s:s, s:s, s:f, s:o, s:o}", "type", "after", "callId", call_id,
	                  "endTime", e, "result", result_of(rec), "attachments", attachments);
	if (json_is_object(error) || json_is_false(json_object_get(body, "ok")))
		json_object_set_new(
		    after, "error",
		    json_pack("{s:s, s:s}", "message",
		              gb_or(json_string_value(json_object_get(error, "message")),
		                    "the action failed"),
		              "name",
		              gb_or(json_string_value(json_object_get(error, "code")), "Error")));
	emit(&bd->events, after, bd);
	{
		json_t *exchanges = trace_exchanges(bd->s, rec);
		json_t *entries = trace_har_entries(rec, exchanges, start_ms, end_ms, bd->page_id);
		json_t *en;

		json_array_foreach(entries, k, en)
		{
			json_object_set_new(en, "_monotonicTime", json_real(s));
			emit(&bd->network,
			     json_pack("{s:s, s:O}", "type", "resource-snapshot", "snapshot", en),
			     bd);
		}
		json_decref(entries);
		json_decref(exchanges);
	}
}

int trace_build_playwright(const struct trace_session *s, unsigned char **out, size_t *len,
                           char *err, size_t errlen)
{
	struct build bd;
	struct gb_buf head;
	const char *prev_shot = NULL;
	json_t *rec;
	char title[600];
	char *line;
	size_t i;

	memset(&bd, 0, sizeof(bd));
	bd.s = s;
	bd.err = err;
	bd.errlen = errlen;
	bd.added = json_object();
	bd.zip = trace_zip_new(TRACE_MAX_EXPORT_BYTES);
	gb_buf_init(&bd.events, TRACE_MAX_EXPORT_BYTES);
	gb_buf_init(&bd.network, TRACE_MAX_EXPORT_BYTES);
	gb_buf_init(&head, TRACE_MAX_EXPORT_BYTES);
	snprintf(bd.page_id, sizeof(bd.page_id), "page@%s", s->session);
	if (!bd.zip || !bd.added) {
		gb_set_error(err, errlen, "out of memory starting the trace");
		bd.rc = -ENOMEM;
		goto out;
	}
	emit(&bd.events,
	     json_pack("{s:s, s:f, s:s, s:s, s:{s:s}}", "type", "event", "time", 0.0, "class",
	               "BrowserContext", "method", "page", "params", "pageId", bd.page_id),
	     &bd);
	json_array_foreach(s->actions, i, rec) emit_action(&bd, i, rec, &prev_shot);
	if (s->flow)
		snprintf(title, sizeof(title), "glassbox flow %.200s (session %.200s)", s->flow,
		         s->session);
	else
		snprintf(title, sizeof(title), "glassbox session %.200s", s->session);
	/* the context's options come first, once the viewport is known */
	line = json_dumps(
	    json_pack("{s:i, s:s, s:s, s:s, s:s, s:{s:{s:i, s:i}}, s:s, s:I, s:f, s:s, s:s, s:s}",
	              "version", TRACE_VERSION, "type", "context-options", "origin", "library",
	              "browserName", "chromium", "title", title, "options", "viewport", "width",
	              bd.width ? bd.width : 1280, "height", bd.height ? bd.height : 720, "platform",
	              "linux", "wallTime", (json_int_t)s->first_ms, "monotonicTime", 0.0,
	              "sdkLanguage", "javascript", "playwrightVersion",
	              "glassbox " GLASSBOX_VERSION, "contextId", s->session),
	    JSON_COMPACT);
	if (!line || gb_buf_appendf(&head, "%s\n", line) != 0) {
		gb_set_error(err, errlen, "out of memory building the trace");
		bd.rc = -ENOMEM;
	}
	free(line);
	if (bd.rc == 0 && bd.events.len &&
	    gb_buf_append(&head, bd.events.data, bd.events.len) != 0) {
		gb_set_error(err, errlen, "the trace would be larger than %u bytes",
		             TRACE_MAX_EXPORT_BYTES);
		bd.rc = -ENOMEM;
	}
	if (bd.rc == 0 &&
	    (trace_zip_add(bd.zip, "trace.trace", head.data, head.len, err, errlen) != 0 ||
	     trace_zip_add(bd.zip, "trace.network", bd.network.data, bd.network.len, err, errlen) !=
	         0))
		bd.rc = -EIO;
	if (bd.rc == 0) {
		bd.rc = trace_zip_finish(bd.zip, out, len, err, errlen) == 0 ? 0 : -EIO;
		bd.zip = NULL;
	}
out:
	gb_buf_free(&head);
	gb_buf_free(&bd.events);
	gb_buf_free(&bd.network);
	json_decref(bd.added);
	trace_zip_free(bd.zip);
	return bd.rc;
}

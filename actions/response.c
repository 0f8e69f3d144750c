/*
 * response.c - the answer's text, laid out as Playwright MCP lays it out.
 *
 * DESIGN
 *
 * An agent written for Playwright MCP reads sections, each a "### Title"
 * line and its lines, in this order:
 *   ### Ran Playwright code   ```js ... ``` (ctx->code, codegen.h; ```python,
 *                             ```java, ```csharp in those languages)
 *   ### Error                 the reason a call failed
 *   ### Result                what the tool returned (ctx->result)
 *   ### Open tabs             "- 0: (current) [title](url)", when more than one
 *   ### Page                  "- Page URL:", "- Page Title:", "- HTTP status: 402 Payment Required"
 *   ### Modal state           a dialog or a file chooser waiting to be handled
 *   ### Snapshot              ```yaml ... ``` (ctx->snapshot)
 *   ### Events                console entries and downloads since the last
 *                             answer (ctx->events, console_log.c, downloads.c)
 * then glassbox's own, which Playwright MCP has no word for:
 *   ### Verification          what was checked and found (ctx->text): url,
 *                             responses, verdicts, blocked requests, gates,
 *                             and the page-content marker
 *   ### Evidence              where the evidence is (ctx->evidence)
 * structuredContent is built elsewhere and is not touched here.
 *
 * Tabs and titles come from one Target.getTargets call; it is skipped when
 * no browser runs (nothing to show).
 */
#include "actions/actions-private.h"
#include "actions/codegen.h"
#include "actions/pagelog.h"

#include "cdp/cdp.h"
#include "sessions/sessions.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The standard reason phrase of an HTTP status, or "". */
static const char *reason_phrase(int status)
{
	static const struct {
		int code;
		const char *text;
	} phrases[] = {
		{ 100, "Continue" },
		{ 101, "Switching Protocols" },
		{ 204, "No Content" },
		{ 301, "Moved Permanently" },
		{ 302, "Found" },
		{ 303, "See Other" },
		{ 304, "Not Modified" },
		{ 307, "Temporary Redirect" },
		{ 308, "Permanent Redirect" },
		{ 400, "Bad Request" },
		{ 401, "Unauthorized" },
		{ 402, "Payment Required" },
		{ 403, "Forbidden" },
		{ 404, "Not Found" },
		{ 405, "Method Not Allowed" },
		{ 406, "Not Acceptable" },
		{ 408, "Request Timeout" },
		{ 409, "Conflict" },
		{ 410, "Gone" },
		{ 413, "Payload Too Large" },
		{ 415, "Unsupported Media Type" },
		{ 418, "I'm a Teapot" },
		{ 422, "Unprocessable Entity" },
		{ 429, "Too Many Requests" },
		{ 451, "Unavailable For Legal Reasons" },
		{ 500, "Internal Server Error" },
		{ 501, "Not Implemented" },
		{ 502, "Bad Gateway" },
		{ 503, "Service Unavailable" },
		{ 504, "Gateway Timeout" },
	};
	size_t i;

	for (i = 0; i < sizeof(phrases) / sizeof(phrases[0]); i++)
		if (phrases[i].code == status)
			return phrases[i].text;
	return "";
}

/* Starts a section. */
static void section(struct gb_buf *b, const char *title)
{
	gb_buf_appendf(b, "%s### %s\n", b->len ? "\n" : "", title);
}

/* Appends text without its trailing newlines. */
static void put_trimmed(struct gb_buf *b, const char *s, size_t n)
{
	while (n && (s[n - 1] == '\n' || s[n - 1] == ' '))
		n--;
	while (n && s[0] == '\n') {
		s++;
		n--;
	}
	gb_buf_append(b, s, n);
}

/* See actions-private.h. */
const char *act_tab_title(json_t *infos, const char *target_id, const char *url)
{
	const char *title = "";
	json_t *t;
	size_t i;

	json_array_foreach(infos, i, t)
	{
		if (strcmp(gb_or(json_string_value(json_object_get(t, "targetId")), ""),
		           gb_or(target_id, "")) != 0)
			continue;
		title = gb_or(json_string_value(json_object_get(t, "title")), "");
	}
	/* without a <title>, Chromium reports the URL, or it without its scheme */
	url = gb_or(url, "");
	if (!strcmp(title, url))
		return "";
	if (strstr(url, "://")) {
		const char *bare = strstr(url, "://") + 3;
		size_t n = strlen(bare);

		if (!strcmp(title, bare) || (n && bare[n - 1] == '/' && strlen(title) == n - 1 &&
		                             !strncmp(title, bare, n - 1)))
			return "";
	}
	return title;
}

/* ### Open tabs and ### Page. */
static void page_sections(struct act_ctx *ctx, struct gb_buf *b)
{
	struct sess *s = ctx->sess;
	struct sess_page *cur;
	struct cdp_error err;
	json_t *res = NULL;
	json_t *infos;
	json_t *status;
	const char *title, *seen_title;
	size_t i, n;

	if (!s || !ctx->cdp || sess_get_state(s) == SESS_FAILED || !sess_page_count(s))
		return;
	n = sess_page_count(s);
	/* one tab that this call re-read: its title is known; else the
	 * browser's titles of every tab */
	seen_title = n == 1 ? json_string_value(json_object_get(ctx->out, "title")) : NULL;
	if (!seen_title &&
	    cdp_call(ctx->cdp, NULL, "Target.getTargets", NULL,
	             act_left_ms(ctx) > 2000 ? act_left_ms(ctx) : 2000, &res, &err) < 0)
		res = NULL;
	infos = json_object_get(res, "targetInfos");
	if (n > 1) {
		section(b, "Open tabs");
		for (i = 0; i < n; i++) {
			struct sess_page *p = sess_page_at(s, i);

			gb_buf_appendf(
			    b, "%s- %zu:%s [%s](%s)%s", i ? "\n" : "", i,
			    i == sess_current_index(s) ? " (current)" : "",
			    act_tab_title(infos, sess_page_target_id(p), sess_page_url(p)),
			    sess_page_url(p), sess_page_crashed(p) ? " [crashed]" : "");
		}
	}
	cur = sess_current_page(s);
	if (!cur)
		goto out;
	section(b, "Page");
	gb_buf_appendf(b, "- Page URL: %s", sess_page_url(cur));
	title = seen_title ? seen_title
	                   : act_tab_title(infos, sess_page_target_id(cur), sess_page_url(cur));
	if (*title)
		gb_buf_appendf(b, "\n- Page Title: %s", title);
	if (sess_page_crashed(cur))
		gb_buf_appendf(b, "\n- Page status: crashed");
	status = json_object_get(ctx->out, "status");
	if (json_is_integer(status) &&
	    (json_integer_value(status) < 200 || json_integer_value(status) >= 300)) {
		int code = (int)json_integer_value(status);

		gb_buf_appendf(b, "\n- HTTP status: %d%s%s", code, *reason_phrase(code) ? " " : "",
		               reason_phrase(code));
	}
out:
	json_decref(res);
}

/* ### Modal state: a dialog waiting. */
static void modal_section(struct act_ctx *ctx, struct gb_buf *b)
{
	const struct sess_dialog *d = ctx->page ? sess_page_dialog(ctx->page) : NULL;
	char *clean;

	if (!ctx->sess || sess_get_state(ctx->sess) == SESS_FAILED)
		return;
	if (act_pagelog_chooser_open(ctx->as->pagelog)) {
		section(b, "Modal state");
		gb_buf_appendf(b, "- [File chooser]: can be handled by browser_file_upload");
	}
	if (!d)
		return;
	if (!act_pagelog_chooser_open(ctx->as->pagelog))
		section(b, "Modal state");
	else
		gb_buf_appendf(b, "\n");
	/* the message is the page's: a typed secret never shows */
	clean = act_secrets_scrub_text(ctx->as, d->message ? d->message : "");
	gb_buf_appendf(b,
	               "- [\"%s\" dialog with message \"%.500s\"]: can be handled by "
	               "browser_handle_dialog",
	               d->type, clean ? clean : gb_or(d->message, ""));
	free(clean);
}

/* The code fence's language, as Playwright MCP names it: js for
 * TypeScript, else the language's own name (a line that stays JavaScript
 * in another language's code is under that language's fence too). */
static const char *code_fence(int lang)
{
	switch (lang) {
	case ACT_CODE_PYTHON:
		return "python";
	case ACT_CODE_JAVA:
		return "java";
	case ACT_CODE_CSHARP:
		return "csharp";
	default:
		return "js";
	}
}

char *act_response_text(struct act_ctx *ctx)
{
	struct gb_buf b;
	char *text;

	gb_buf_init(&b, (4u << 20) + (2u << 20));
	if (ctx->code.len) {
		section(&b, "Ran Playwright code");
		gb_buf_appendf(&b, "```%s\n", code_fence(ctx->as->code_lang));
		put_trimmed(&b, ctx->code.data, ctx->code.len);
		gb_buf_appendf(&b, "\n```");
	}
	if (ctx->failed) {
		section(&b, "Error");
		gb_buf_appendf(&b, "%s%s", ctx->error_plain ? "" : "Error: ", ctx->error);
	}
	if (ctx->result.len) {
		section(&b, "Result");
		put_trimmed(&b, ctx->result.data, ctx->result.len);
	}
	page_sections(ctx, &b);
	modal_section(ctx, &b);
	if (ctx->snapshot && ctx->snapshot_is_link) {
		section(&b, "Snapshot");
		gb_buf_appendf(&b, "%s", ctx->snapshot);
	} else if (ctx->snapshot) {
		section(&b, "Snapshot");
		gb_buf_appendf(&b, "```yaml\n%s\n```", ctx->snapshot);
	}
	if (ctx->events.len) {
		section(&b, "Events");
		put_trimmed(&b, ctx->events.data, ctx->events.len);
	}
	if (ctx->text.len || ctx->content_marker[0]) {
		section(&b, "Verification");
		put_trimmed(&b, ctx->text.data ? ctx->text.data : "", ctx->text.len);
		if (ctx->content_marker[0])
			gb_buf_appendf(&b, "%s- page content: untrusted [marker %s]",
			               ctx->text.len ? "\n" : "", ctx->content_marker);
	}
	if (ctx->evidence.len) {
		section(&b, "Evidence");
		put_trimmed(&b, ctx->evidence.data, ctx->evidence.len);
	}
	text = gb_buf_steal(&b);
	gb_buf_free(&b);
	return text;
}

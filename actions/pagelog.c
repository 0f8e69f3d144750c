/*
 * pagelog.c - the console messages and network requests of a session's
 * pages, kept across calls in two bounded buffers (pagelog.h).
 *
 * One CDP listener on the browser's connection sees every page's
 * Runtime and Network events (the pages are set up with both enabled,
 * sessions/targets.c). Entries are JSON objects in arrays used as FIFOs:
 * when one is full, or both hold more than ACT_PAGELOG_MAX_BYTES, the
 * oldest entry goes. Requests are numbered from 1 in the order they
 * start, and keep their number while they are kept. A page's "last
 * navigation" is the start of its main frame's latest document request:
 * each entry records the navigation count of its page when it came.
 *
 * Events come in order with the replies on the same connection, and the
 * worker reads them only while it waits for the browser: a tool that
 * reads the log first makes one round trip into the page, so that every
 * event the page sent before is in.
 */
#include "actions/pagelog.h"

#include "cdp/cdp.h"
#include "common/unittest.h"
#include "common/util.h"
#include "sessions/sessions.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define TEXT_MAX 4000  /* one console message, characters */
#define URL_MAX 4096   /* a request's URL kept */
#define HEADERS_MAX 48 /* headers kept per request and direction */
#define HEADER_VALUE_MAX 1024
#define MAX_PAGES_TRACKED 128 /* navigation counts: every tab and frame session a browser keeps */

struct page_nav {
	char sid[64];
	unsigned navs;     /* main-frame document requests so far */
	double started_ms; /* wall time the latest of them started, 0 = unknown */
};

struct act_pagelog {
	struct cdp_conn *cdp;
	struct sess *sess; /* borrowed while attached */
	int listener;
	json_t *console;  /* [{level, type, text, url?, line?, time, sid, nav}] */
	json_t *requests; /* [{index, ..., sid, nav}] */
	json_t *by_id;    /* {requestId: entry (borrowed from requests)} */
	size_t bytes;     /* held by both, roughly */
	unsigned next_index;
	json_int_t console_seq; /* the number of the newest console entry; never reset */
	struct page_nav pages[MAX_PAGES_TRACKED];
	size_t n_pages;
	/* the file chooser opened last and not answered yet (chooser_node 0: none) */
	char chooser_sid[64];
	int chooser_node;
	int chooser_multiple;
};

static const char *const level_names[] = { "error", "warning", "info", "debug" };

int act_console_level_parse(const char *name)
{
	size_t i;

	for (i = 0; name && i < sizeof(level_names) / sizeof(level_names[0]); i++)
		if (!strcmp(name, level_names[i]))
			return (int)i;
	return -1;
}

int act_header_is_credential(const char *name)
{
	static const char *const names[] = {
		"cookie",         "set-cookie",   "authorization",        "proxy-authorization",
		"x-api-key",      "x-auth-token", "x-csrf-token",         "x-xsrf-token",
		"x-access-token", "api-key",      "x-amz-security-token",
	};
	size_t i;

	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (!strcasecmp(name, names[i]))
			return 1;
	return 0;
}

/* Roughly what an entry holds: its strings and a little per value. */
static size_t entry_bytes(json_t *j)
{
	const char *key;
	json_t *v;
	size_t i, n = 32;

	if (json_is_string(j))
		return n + json_string_length(j);
	if (json_is_object(j)) {
		json_object_foreach(j, key, v) n += strlen(key) + entry_bytes(v);
	} else if (json_is_array(j)) {
		json_array_foreach(j, i, v) n += entry_bytes(v);
	}
	return n;
}

static struct page_nav *page_nav(struct act_pagelog *l, const char *sid)
{
	size_t i;

	for (i = 0; i < l->n_pages; i++)
		if (!strcmp(l->pages[i].sid, sid))
			return &l->pages[i];
	if (l->n_pages == MAX_PAGES_TRACKED) /* the oldest tab's slot is reused */
		memmove(&l->pages[0], &l->pages[1], sizeof(l->pages[0]) * --l->n_pages);
	snprintf(l->pages[l->n_pages].sid, sizeof(l->pages[0].sid), "%s", sid);
	l->pages[l->n_pages].navs = 0;
	l->pages[l->n_pages].started_ms = 0;
	return &l->pages[l->n_pages++];
}

static void drop_oldest_request(struct act_pagelog *l)
{
	json_t *old = json_array_get(l->requests, 0);
	const char *rid = json_string_value(json_object_get(old, "request_id"));

	l->bytes -= entry_bytes(old) < l->bytes ? entry_bytes(old) : l->bytes;
	if (rid && json_object_get(l->by_id, rid) == old)
		json_object_del(l->by_id, rid);
	json_array_remove(l->requests, 0);
}

static void drop_oldest_console(struct act_pagelog *l)
{
	json_t *old = json_array_get(l->console, 0);

	l->bytes -= entry_bytes(old) < l->bytes ? entry_bytes(old) : l->bytes;
	json_array_remove(l->console, 0);
}

/* Keeps the buffers under their ceilings, the oldest going first. */
static void trim(struct act_pagelog *l)
{
	while (json_array_size(l->console) > ACT_PAGELOG_MAX_CONSOLE)
		drop_oldest_console(l);
	while (json_array_size(l->requests) > ACT_PAGELOG_MAX_REQUESTS)
		drop_oldest_request(l);
	while (l->bytes > ACT_PAGELOG_MAX_BYTES &&
	       (json_array_size(l->console) || json_array_size(l->requests))) {
		if (json_array_size(l->console) > json_array_size(l->requests))
			drop_oldest_console(l);
		else
			drop_oldest_request(l);
	}
}

/* A bounded copy of a string value. */
static json_t *bounded(const char *s, size_t max)
{
	size_t n = s ? strlen(s) : 0;

	return json_stringn(s ? s : "", n > max ? max : n);
}

/* Headers as kept: at most HEADERS_MAX, values bounded, credentials
 * replaced by "[redacted]". New object. */
static json_t *kept_headers(json_t *headers)
{
	json_t *out = json_object();
	const char *name;
	json_t *v;

	json_object_foreach(headers, name, v)
	{
		if (json_object_size(out) >= HEADERS_MAX)
			break;
		if (!json_is_string(v))
			continue;
		json_object_set_new(out, name,
		                    act_header_is_credential(name)
		                        ? json_string("[redacted]")
		                        : bounded(json_string_value(v), HEADER_VALUE_MAX));
	}
	return out;
}

/* 1 when the request of params is the document of its page's main frame. */
static int is_main_document(struct act_pagelog *l, const char *sid, json_t *params)
{
	const char *type = json_string_value(json_object_get(params, "type"));
	const char *fid = json_string_value(json_object_get(params, "frameId"));
	size_t i;

	if (!type || strcmp(type, "Document") || !fid || !l->sess)
		return 0;
	for (i = 0; i < sess_page_count(l->sess); i++) {
		struct sess_page *p = sess_page_at(l->sess, i);

		if (!strcmp(sess_page_session_id(p), sid))
			return !strcmp(sess_page_main_frame_id(p), fid);
	}
	return 0;
}

/* See pagelog.h. Playwright does not report it either, so the numbering
 * stays the same as its. */
int act_request_is_favicon(json_t *params)
{
	const char *type = json_string_value(json_object_get(params, "type"));
	const char *url =
	    json_string_value(json_object_get(json_object_get(params, "request"), "url"));
	const char *path = url ? strstr(url, "://") : NULL;

	if (!type || strcmp(type, "Other") || !path)
		return 0;
	path = strchr(path + 3, '/');
	return path && !strcmp(path, "/favicon.ico");
}

static void request_started(struct act_pagelog *l, const char *sid, json_t *params)
{
	const char *rid = json_string_value(json_object_get(params, "requestId"));
	json_t *request = json_object_get(params, "request");
	json_t *redirect = json_object_get(params, "redirectResponse");
	const char *post = json_string_value(json_object_get(request, "postData"));
	json_t *prev = rid ? json_object_get(l->by_id, rid) : NULL;
	struct page_nav *nav;
	json_t *e;

	if (!rid || !json_is_object(request) || (!prev && act_request_is_favicon(params)))
		return;
	if (prev && redirect) { /* the same id goes on after a redirect */
		json_object_set_new(prev, "status",
		                    json_integer((json_int_t)json_number_value(
		                        json_object_get(redirect, "status"))));
		json_object_set_new(prev, "finished", json_true());
	}
	nav = page_nav(l, sid);
	if (is_main_document(l, sid, params)) {
		nav->navs++;
		nav->started_ms = json_number_value(json_object_get(params, "wallTime")) * 1000.0;
		if (!strcmp(l->chooser_sid, sid))
			l->chooser_node = 0; /* its page goes away */
	}
	e = json_pack("{s:I, s:s, s:s, s:o, s:s, s:o, s:s, s:o, s:b, s:b, s:I}", "index",
	              (json_int_t)++l->next_index, "request_id", rid, "session_id", sid, "url",
	              bounded(json_string_value(json_object_get(request, "url")), URL_MAX),
	              "method", gb_or(json_string_value(json_object_get(request, "method")), "GET"),
	              "request_headers", kept_headers(json_object_get(request, "headers")), "type",
	              gb_or(json_string_value(json_object_get(params, "type")), "Other"), "time",
	              json_real(json_number_value(json_object_get(params, "wallTime"))),
	              "has_post_data",
	              post || json_is_true(json_object_get(request, "hasPostData")), "finished", 0,
	              "nav", (json_int_t)nav->navs);
	if (!e)
		return;
	if (post) {
		size_t n = strlen(post);

		json_object_set_new(e, "post_data", bounded(post, ACT_PAGELOG_MAX_POST_BYTES));
		if (n > ACT_PAGELOG_MAX_POST_BYTES)
			json_object_set_new(e, "post_data_truncated", json_true());
	}
	l->bytes += entry_bytes(e);
	json_array_append_new(l->requests, e);
	json_object_set(l->by_id, rid, e);
	trim(l);
}

static void on_network(struct act_pagelog *l, const char *sid, const char *method, json_t *params)
{
	const char *rid = json_string_value(json_object_get(params, "requestId"));
	json_t *e;

	if (!rid)
		return;
	if (!strcmp(method, "Network.requestWillBeSent")) {
		request_started(l, sid, params);
		return;
	}
	e = json_object_get(l->by_id, rid);
	if (!e)
		return;
	if (!strcmp(method, "Network.responseReceived")) {
		json_t *resp = json_object_get(params, "response");
		json_t *h = kept_headers(json_object_get(resp, "headers"));

		l->bytes += entry_bytes(h);
		json_object_set_new(
		    e, "status",
		    json_integer((json_int_t)json_number_value(json_object_get(resp, "status"))));
		json_object_set_new(
		    e, "status_text",
		    bounded(json_string_value(json_object_get(resp, "statusText")), 200));
		json_object_set_new(
		    e, "mime", bounded(json_string_value(json_object_get(resp, "mimeType")), 200));
		json_object_set_new(e, "response_headers", h);
		trim(l);
	} else if (!strcmp(method, "Network.loadingFinished")) {
		json_object_set_new(e, "finished", json_true());
		json_object_set_new(e, "encoded_bytes",
		                    json_integer((json_int_t)json_number_value(
		                        json_object_get(params, "encodedDataLength"))));
	} else if (!strcmp(method, "Network.loadingFailed")) {
		json_object_set_new(e, "finished", json_true());
		json_object_set_new(
		    e, "failed",
		    bounded(json_string_value(json_object_get(params, "errorText")), 200));
	}
}

/* The text of a console call: its arguments' values or descriptions,
 * separated by spaces, bounded. */
static void console_text(json_t *args, struct gb_buf *b)
{
	size_t i;
	json_t *a;

	json_array_foreach(args, i, a)
	{
		json_t *v = json_object_get(a, "value");
		const char *d = json_string_value(json_object_get(a, "description"));
		char *dump = NULL;

		if (i)
			gb_buf_appendf(b, " ");
		if (json_is_string(v))
			gb_buf_appendf(b, "%.*s", TEXT_MAX, json_string_value(v));
		else if (v && (dump = json_dumps(v, JSON_ENCODE_ANY | JSON_COMPACT)))
			gb_buf_appendf(b, "%.*s", TEXT_MAX, dump);
		else
			gb_buf_appendf(
			    b, "%.*s", TEXT_MAX,
			    d ? d : gb_or(json_string_value(json_object_get(a, "type")), ""));
		free(dump);
		if (b->len >= TEXT_MAX)
			break;
	}
}

static enum act_console_level level_of(const char *type)
{
	if (!type)
		return ACT_CONSOLE_INFO;
	if (!strcmp(type, "error") || !strcmp(type, "assert"))
		return ACT_CONSOLE_ERROR;
	if (!strcmp(type, "warning"))
		return ACT_CONSOLE_WARNING;
	if (!strcmp(type, "debug"))
		return ACT_CONSOLE_DEBUG;
	return ACT_CONSOLE_INFO;
}

static void add_console(struct act_pagelog *l, const char *sid, enum act_console_level level,
                        const char *type, const char *text, json_t *frame, double time)
{
	json_t *e =
	    json_pack("{s:s, s:s, s:o, s:f, s:s, s:I, s:I}", "level", level_names[level], "type",
	              type, "text", bounded(text, TEXT_MAX), "time", time, "sid", sid, "nav",
	              (json_int_t)page_nav(l, sid)->navs, "seq", (json_int_t)(l->console_seq + 1));
	const char *url = json_string_value(json_object_get(frame, "url"));

	if (!e)
		return;
	l->console_seq++;
	if (url && url[0]) {
		json_object_set_new(e, "url", bounded(url, URL_MAX));
		json_object_set_new(
		    e, "line",
		    json_integer(
		        (json_int_t)json_number_value(json_object_get(frame, "lineNumber")) + 1));
	}
	l->bytes += entry_bytes(e);
	json_array_append_new(l->console, e);
	trim(l);
}

static void on_runtime(struct act_pagelog *l, const char *sid, const char *method, json_t *params)
{
	struct gb_buf text;

	gb_buf_init(&text, TEXT_MAX + 16);
	if (!strcmp(method, "Runtime.consoleAPICalled")) {
		const char *type = gb_or(json_string_value(json_object_get(params, "type")), "log");
		json_t *frame = json_array_get(
		    json_object_get(json_object_get(params, "stackTrace"), "callFrames"), 0);

		console_text(json_object_get(params, "args"), &text);
		add_console(l, sid, level_of(type), type, text.data ? text.data : "", frame,
		            json_number_value(json_object_get(params, "timestamp")));
	} else if (!strcmp(method, "Runtime.exceptionThrown")) {
		json_t *d = json_object_get(params, "exceptionDetails");
		const char *desc = json_string_value(
		    json_object_get(json_object_get(d, "exception"), "description"));
		json_t *frame = json_array_get(
		    json_object_get(json_object_get(d, "stackTrace"), "callFrames"), 0);

		add_console(l, sid, ACT_CONSOLE_ERROR, "exception",
		            desc ? desc : gb_or(json_string_value(json_object_get(d, "text")), ""),
		            frame ? frame : d,
		            json_number_value(json_object_get(params, "timestamp")));
	}
	gb_buf_free(&text);
}

UNITTEST void act_pagelog_event(void *user, const char *session_id, const char *method,
                                json_t *params)
{
	struct act_pagelog *l = user;

	if (!session_id || !session_id[0])
		return;
	if (!strncmp(method, "Network.", 8)) {
		on_network(l, session_id, method, params);
	} else if (!strncmp(method, "Runtime.", 8)) {
		on_runtime(l, session_id, method, params);
	} else if (!strcmp(method, "Page.fileChooserOpened")) {
		const char *mode = json_string_value(json_object_get(params, "mode"));

		snprintf(l->chooser_sid, sizeof(l->chooser_sid), "%s", session_id);
		l->chooser_node = (int)json_integer_value(json_object_get(params, "backendNodeId"));
		l->chooser_multiple = mode && !strcmp(mode, "selectMultiple");
	}
}

int act_pagelog_chooser(struct act_pagelog *l, char *sid, size_t sidlen, int *backend_node_id,
                        int *multiple)
{
	if (!l->chooser_node)
		return 0;
	snprintf(sid, sidlen, "%s", l->chooser_sid);
	*backend_node_id = l->chooser_node;
	*multiple = l->chooser_multiple;
	return 1;
}

int act_pagelog_chooser_open(const struct act_pagelog *l)
{
	return l && l->chooser_node != 0;
}

void act_pagelog_chooser_done(struct act_pagelog *l)
{
	l->chooser_node = 0;
}

struct act_pagelog *act_pagelog_new(void)
{
	struct act_pagelog *l = calloc(1, sizeof(*l));

	if (!l)
		return NULL;
	l->console = json_array();
	l->requests = json_array();
	l->by_id = json_object();
	return l;
}

/* Drops what was kept; the listener went with the browser's connection. */
static void forget(struct act_pagelog *l)
{
	l->cdp = NULL;
	l->sess = NULL;
	l->listener = 0;
	json_array_clear(l->console);
	json_array_clear(l->requests);
	json_object_clear(l->by_id);
	l->bytes = 0;
	l->n_pages = 0;
	l->chooser_node = 0;
}

int act_pagelog_attach(struct act_pagelog *l, struct sess *s)
{
	forget(l);
	l->sess = s;
	l->cdp = sess_cdp(s);
	l->listener = cdp_on(l->cdp, NULL, NULL, act_pagelog_event, l);
	return l->listener > 0 ? 0 : -1;
}

void act_pagelog_free(struct act_pagelog *l)
{
	if (!l)
		return;
	json_decref(l->console);
	json_decref(l->requests);
	json_decref(l->by_id);
	free(l);
}

/* 1 when entry e (of page sid) is within the span asked for. */
static int in_span(struct act_pagelog *l, json_t *e, const char *psid, int all)
{
	const char *sid = json_string_value(json_object_get(e, "sid"));

	if (!sid)
		sid = json_string_value(json_object_get(e, "session_id"));
	if (!sid || strcmp(sid, psid))
		return 0;
	return all ||
	       (unsigned)json_integer_value(json_object_get(e, "nav")) == page_nav(l, psid)->navs;
}

json_t *act_pagelog_console(struct act_pagelog *l, const char *psid, enum act_console_level level,
                            int all, size_t *total, size_t *errors, size_t *warnings)
{
	json_t *out = json_array();
	json_t *e;
	size_t i;

	*total = *errors = *warnings = 0;
	json_array_foreach(l->console, i, e)
	{
		int lv;

		if (!in_span(l, e, psid, all))
			continue;
		lv = act_console_level_parse(json_string_value(json_object_get(e, "level")));
		(*total)++;
		*errors += lv == ACT_CONSOLE_ERROR;
		*warnings += lv == ACT_CONSOLE_WARNING;
		if (lv > (int)level)
			continue;
		json_array_append_new(
		    out, json_pack("{s:O, s:O, s:O, s:O*, s:O*, s:O}", "level",
		                   json_object_get(e, "level"), "type", json_object_get(e, "type"),
		                   "text", json_object_get(e, "text"), "url",
		                   json_object_get(e, "url"), "line", json_object_get(e, "line"),
		                   "time", json_object_get(e, "time")));
	}
	return out;
}

/* Playwright's rule: a fetch or XHR is always shown; anything else that
 * succeeded (a response under 400, no failure) is "static". */
static int is_static_success(json_t *e)
{
	const char *type = json_string_value(json_object_get(e, "type"));
	json_t *status = json_object_get(e, "status");

	if (type && (!strcmp(type, "Fetch") || !strcmp(type, "XHR")))
		return 0;
	return !json_object_get(e, "failed") && status && json_integer_value(status) < 400;
}

json_t *act_pagelog_requests(struct act_pagelog *l, const char *psid, int with_static,
                             const regex_t *filter, size_t *hidden_static)
{
	json_t *out = json_array();
	json_t *e;
	size_t i;

	*hidden_static = 0;
	json_array_foreach(l->requests, i, e)
	{
		json_t *line;

		if (!in_span(l, e, psid, 0))
			continue;
		if (!with_static && is_static_success(e)) {
			(*hidden_static)++;
			continue;
		}
		if (filter &&
		    regexec(filter, json_string_value(json_object_get(e, "url")), 0, NULL, 0) != 0)
			continue;
		line = json_pack("{s:O, s:O, s:O, s:O}", "index", json_object_get(e, "index"),
		                 "method", json_object_get(e, "method"), "url",
		                 json_object_get(e, "url"), "type", json_object_get(e, "type"));
		if (json_object_get(e, "status"))
			json_object_set(line, "status", json_object_get(e, "status"));
		if (json_object_get(e, "status_text"))
			json_object_set(line, "status_text", json_object_get(e, "status_text"));
		if (json_object_get(e, "failed"))
			json_object_set(line, "failed", json_object_get(e, "failed"));
		json_array_append_new(out, line);
	}
	return out;
}

json_int_t act_pagelog_console_each(struct act_pagelog *l, json_int_t after,
                                    void (*fn)(void *user, json_t *entry), void *user)
{
	json_t *e;
	size_t i;

	json_array_foreach(l->console, i, e)
	{
		if (json_integer_value(json_object_get(e, "seq")) > after)
			fn(user, e);
	}
	return l->console_seq > after ? l->console_seq : after;
}

double act_pagelog_nav_started_ms(struct act_pagelog *l, const char *sid, unsigned nav)
{
	size_t i;

	for (i = 0; i < l->n_pages; i++)
		if (!strcmp(l->pages[i].sid, sid))
			return l->pages[i].navs == nav ? l->pages[i].started_ms : 0;
	return 0;
}

json_t *act_pagelog_request(struct act_pagelog *l, unsigned index)
{
	json_t *first = json_array_get(l->requests, 0);
	size_t at;

	if (!first || index < (unsigned)json_integer_value(json_object_get(first, "index")))
		return NULL;
	/* numbers are consecutive in the buffer: the oldest kept is at 0 */
	at = index - (unsigned)json_integer_value(json_object_get(first, "index"));
	return json_array_get(l->requests, at);
}

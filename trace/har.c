/*
 * har.c - the network of a session as HAR 1.2 entries: one per request of
 * each action (the exchanges its network_log kept: method, URL, headers,
 * status, MIME type, bytes, times; for records from before they were
 * kept, the record's responses and failed requests), and one per request
 * the policy blocked. The trace's trace.network (playwright_trace.c)
 * holds the same entries. Header values that may carry a credential were
 * redacted when kept (actions/netlog.c); cookies are not kept, and text
 * response bodies only when the policy says har_bodies (content.text). Query parameters named like credentials
 * are redacted here, in the URL and in header values that are URLs
 * (Referer, Location).
 */
#include "trace/trace-private.h"

#include "evidence/audit.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define REDACTED "[redacted]"
#define REDACTED_IN_URL "%5Bredacted%5D" /* the same, as a URL carries it */

/* The URL with the values of credential-named query parameters replaced,
 * and its query as HAR name/value pairs (*query, a new array). */
static char *redacted_url(const char *url, json_t **query)
{
	struct gb_buf out;
	const char *q = strchr(url, '?');
	const char *end;
	const char *p;

	*query = json_array();
	gb_buf_init(&out, strlen(url) * 2 + 64);
	if (!q) {
		gb_buf_append(&out, url, strlen(url));
		return gb_buf_steal(&out);
	}
	end = strchr(q, '#');
	if (!end)
		end = q + strlen(q);
	gb_buf_append(&out, url, (size_t)(q - url) + 1);
	for (p = q + 1; p < end;) {
		const char *amp = memchr(p, '&', (size_t)(end - p));
		const char *stop = amp ? amp : end;
		const char *eq = memchr(p, '=', (size_t)(stop - p));
		char *name = strndup(p, (size_t)((eq ? eq : stop) - p));
		char *value = eq ? strndup(eq + 1, (size_t)(stop - eq - 1)) : strdup("");
		int secret = name && evid_is_credential_name(name);

		if (name && value) {
			json_array_append_new(*query, json_pack("{s:s, s:s}", "name", name, "value",
			                                        secret ? REDACTED : value));
			gb_buf_append(&out, name, strlen(name));
			if (eq)
				gb_buf_appendf(&out, "=%s", secret ? REDACTED_IN_URL : value);
		}
		free(name);
		free(value);
		if (amp)
			gb_buf_append(&out, "&", 1);
		p = amp ? amp + 1 : end;
	}
	gb_buf_append(&out, end, strlen(end));
	return gb_buf_steal(&out);
}

/* CDP's resource type ("Document") as Playwright names it ("document"). */
static json_t *resource_type(const char *type)
{
	char lower[32];
	size_t i;

	for (i = 0; type && type[i] && i + 1 < sizeof(lower); i++)
		lower[i] = (char)tolower((unsigned char)type[i]);
	lower[i] = '\0';
	return json_string(i ? lower : "other");
}

/* One entry: status 0 and failure for a request that got no response. */
static json_t *entry(const char *method, const char *url, int status, const char *type,
                     const char *failure, int64_t start_ms, int64_t time_ms, const char *pageref)
{
	char started[40];
	json_t *query = NULL;
	char *clean = redacted_url(url ? url : "", &query);
	json_t *e;

	trace_time_iso(start_ms, started, sizeof(started));
	e = json_pack("{s:s, s:s, s:I, s:{s:s, s:s, s:s, s:[], s:[], s:o, s:i, s:i},"
	              " s:{s:i, s:s, s:s, s:[], s:[], s:{s:i, s:s}, s:s, s:i, s:i},"
	              " s:{}, s:{s:i, s:I, s:i}, s:o}",
	              "pageref", pageref, "startedDateTime", started, "time", (json_int_t)time_ms,
	              "request", "method", method ? method : "GET", "url", clean, "httpVersion",
	              "HTTP/1.1", "cookies", "headers", "queryString", query, "headersSize", -1,
	              "bodySize", -1, "response", "status", status, "statusText",
	              failure ? failure : "", "httpVersion", status ? "HTTP/1.1" : "", "cookies",
	              "headers", "content", "size", 0, "mimeType", "x-unknown", "redirectURL", "",
	              "headersSize", -1, "bodySize", -1, "cache", "timings", "send", 0, "wait",
	              (json_int_t)time_ms, "receive", 0, "_resourceType", resource_type(type));
	free(clean);
	if (e && failure)
		json_object_set_new(e, "_failureText", json_string(failure));
	return e;
}

/* A copy of headers whose values that are URLs (Referer, Location) have
 * their credential query parameters redacted, as the request's URL. */
static json_t *redacted_headers(json_t *headers)
{
	json_t *out = json_array();
	json_t *h;
	size_t i;

	json_array_foreach(headers, i, h)
	{
		const char *v = gb_or(json_string_value(json_object_get(h, "value")), "");
		json_t *query = NULL;
		char *clean = NULL;

		if (!strncasecmp(v, "http://", 7) || !strncasecmp(v, "https://", 8))
			clean = redacted_url(v, &query);
		json_array_append_new(out,
		                      json_pack("{s:O, s:s}", "name", json_object_get(h, "name"),
		                                "value", clean ? clean : v));
		free(clean);
		json_decref(query);
	}
	return out;
}

/* The entry of one exchange the netlog kept (actions/netlog.c). */
static json_t *exchange_entry(json_t *x, int64_t start_ms, int64_t end_ms, const char *pageref)
{
	int64_t started = json_integer_value(json_object_get(x, "started_ms"));
	int64_t ended = json_integer_value(json_object_get(x, "ended_ms"));
	const char *error = json_string_value(json_object_get(x, "error"));
	const char *protocol = json_string_value(json_object_get(x, "protocol"));
	const char *mime = json_string_value(json_object_get(x, "mime_type"));
	json_t *e;
	json_t *resp;
	json_t *req;

	if (started < start_ms || started > end_ms)
		started = start_ms;
	if (ended < started)
		ended = started;
	e = entry(json_string_value(json_object_get(x, "method")),
	          json_string_value(json_object_get(x, "url")),
	          (int)json_integer_value(json_object_get(x, "status")),
	          json_string_value(json_object_get(x, "type")), error, started, ended - started,
	          pageref);
	if (!e)
		return NULL;
	req = json_object_get(e, "request");
	resp = json_object_get(e, "response");
	if (json_is_array(json_object_get(x, "request_headers")))
		json_object_set_new(req, "headers",
		                    redacted_headers(json_object_get(x, "request_headers")));
	if (json_is_array(json_object_get(x, "response_headers")))
		json_object_set_new(resp, "headers",
		                    redacted_headers(json_object_get(x, "response_headers")));
	if (!error)
		json_object_set_new(
		    resp, "statusText",
		    json_string(gb_or(json_string_value(json_object_get(x, "status_text")), "")));
	if (protocol && protocol[0] && !error) {
		char upper[32];
		size_t i;

		for (i = 0; protocol[i] && i + 1 < sizeof(upper); i++)
			upper[i] = (char)toupper((unsigned char)protocol[i]);
		upper[i] = '\0';
		json_object_set_new(req, "httpVersion", json_string(upper));
		json_object_set_new(resp, "httpVersion", json_string(upper));
	}
	if (mime && mime[0])
		json_object_set_new(json_object_get(resp, "content"), "mimeType",
		                    json_string(mime));
	if (json_is_string(json_object_get(x, "body_text"))) {
		json_t *content = json_object_get(resp, "content");

		json_object_set(content, "text", json_object_get(x, "body_text"));
		json_object_set_new(
		    content, "size",
		    json_integer((json_int_t)json_string_length(json_object_get(x, "body_text"))));
	} else if (json_is_string(json_object_get(x, "body_omitted"))) {
		json_object_set(json_object_get(resp, "content"), "comment",
		                json_object_get(x, "body_omitted"));
	}
	if (json_is_integer(json_object_get(x, "encoded_bytes")))
		json_object_set(resp, "_transferSize", json_object_get(x, "encoded_bytes"));
	return e;
}

json_t *trace_har_entries(const json_t *rec, const json_t *exchanges, int64_t start_ms,
                          int64_t end_ms, const char *pageref)
{
	json_t *body = json_object_get(rec, "body");
	json_t *list = json_array();
	int64_t span = end_ms > start_ms ? end_ms - start_ms : 0;
	json_t *r;
	size_t i;

	json_array_foreach(exchanges, i, r)
	{
		if (json_is_string(json_object_get(r, "url")))
			json_array_append_new(list, exchange_entry(r, start_ms, end_ms, pageref));
	}
	if (json_array_size(exchanges))
		goto blocked;
	json_array_foreach(json_object_get(body, "responses"), i, r)
	{
		const char *url = json_string_value(json_object_get(r, "url"));

		if (url)
			json_array_append_new(
			    list, entry(json_string_value(json_object_get(r, "method")), url,
			                (int)json_integer_value(json_object_get(r, "status")),
			                json_string_value(json_object_get(r, "type")), NULL,
			                start_ms, span, pageref));
	}
	json_array_foreach(json_object_get(body, "failed_requests"), i, r)
	{
		const char *url = json_string_value(json_object_get(r, "url"));

		if (url)
			json_array_append_new(
			    list,
			    entry(json_string_value(json_object_get(r, "method")), url, 0, NULL,
			          gb_or(json_string_value(json_object_get(r, "error")), "failed"),
			          start_ms, span, pageref));
	}
blocked:
	json_array_foreach(json_object_get(body, "blocked"), i, r)
	{
		const char *url = json_string_value(json_object_get(r, "url"));
		char why[600];

		snprintf(why, sizeof(why), "blocked by glassbox's policy: %.500s",
		         gb_or(json_string_value(json_object_get(r, "rule")),
		               gb_or(json_string_value(json_object_get(r, "reason")), "refused")));
		if (url)
			json_array_append_new(list,
			                      entry(NULL, url, 0, NULL, why, start_ms, 0, pageref));
	}
	return list;
}

int trace_build_har(const struct trace_session *s, unsigned char **out, size_t *len, char *err,
                    size_t errlen)
{
	char pageref[300];
	char started[40];
	json_t *entries = json_array();
	json_t *har;
	json_t *rec;
	size_t i;
	int rc = 0;

	snprintf(pageref, sizeof(pageref), "page@%s", s->session);
	json_array_foreach(s->actions, i, rec)
	{
		int64_t start_ms;
		int64_t end_ms;

		json_t *exchanges = trace_exchanges(s, rec);
		json_t *mine;

		trace_action_times(rec, &start_ms, &end_ms);
		mine = trace_har_entries(rec, exchanges, start_ms, end_ms, pageref);
		json_decref(exchanges);
		json_array_extend(entries, mine);
		json_decref(mine);
	}
	trace_time_iso(s->first_ms, started, sizeof(started));
	har = json_pack("{s:{s:s, s:{s:s, s:s}, s:[{s:s, s:s, s:s, s:{s:i, s:i}}], s:o, s:s}}",
	                "log", "version", "1.2", "creator", "name", "glassbox", "version",
	                GLASSBOX_VERSION, "pages", "startedDateTime", started, "id", pageref,
	                "title", s->session, "pageTimings", "onContentLoad", -1, "onLoad", -1,
	                "entries", entries, "comment",
	                "from glassbox's audit log: header values that may carry credentials "
	                "redacted; cookies and request bodies are not recorded");
	*out = (unsigned char *)(har ? json_dumps(har, JSON_INDENT(2)) : NULL);
	*len = *out ? strlen((char *)*out) : 0;
	if (!*out) {
		gb_set_error(err, errlen, "out of memory building the HAR file");
		rc = -ENOMEM;
	}
	json_decref(har);
	return rc;
}

/*
 * har.c - the network of a session as HAR 1.2 entries: one per response,
 * failed request and request the policy blocked, built from each action's
 * record (method, URL, status, resource type). The trace's trace.network
 * (playwright_trace.c) holds the same entries. glassbox records neither
 * headers, cookies nor bodies of the page's traffic: those members are
 * empty, so nothing of a cookie or an Authorization header can appear.
 * Query parameters named like credentials are redacted.
 */
#include "trace/trace-private.h"

#include "evidence/audit.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

json_t *trace_har_entries(const json_t *rec, int64_t start_ms, int64_t end_ms, const char *pageref)
{
	json_t *body = json_object_get(rec, "body");
	json_t *list = json_array();
	int64_t span = end_ms > start_ms ? end_ms - start_ms : 0;
	json_t *r;
	size_t i;

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

		json_t *mine;

		trace_action_times(rec, &start_ms, &end_ms);
		mine = trace_har_entries(rec, start_ms, end_ms, pageref);
		json_array_extend(entries, mine);
		json_decref(mine);
	}
	trace_time_iso(s->first_ms, started, sizeof(started));
	har = json_pack("{s:{s:s, s:{s:s, s:s}, s:[{s:s, s:s, s:s, s:{s:i, s:i}}], s:o, s:s}}",
	                "log", "version", "1.2", "creator", "name", "glassbox", "version",
	                GLASSBOX_VERSION, "pages", "startedDateTime", started, "id", pageref,
	                "title", s->session, "pageTimings", "onContentLoad", -1, "onLoad", -1,
	                "entries", entries, "comment",
	                "from glassbox's audit log; headers, cookies and bodies are not recorded");
	*out = (unsigned char *)(har ? json_dumps(har, JSON_INDENT(2)) : NULL);
	*len = *out ? strlen((char *)*out) : 0;
	if (!*out) {
		gb_set_error(err, errlen, "out of memory building the HAR file");
		rc = -ENOMEM;
	}
	json_decref(har);
	return rc;
}

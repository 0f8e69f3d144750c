/*
 * netlog.c - the exchanges of one action for its network_log evidence
 * (and so for HAR files and traces, trace/har.c): each request's method,
 * URL, resource type and headers, its response's status, status text,
 * MIME type, headers and bytes, and when it started and ended. Header
 * values that could carry a credential are replaced by "[redacted]"
 * before they are kept: names the audit log redacts (cookie, set-cookie,
 * authorization, ...) and any name with auth, cookie, token, key, secret,
 * session, csrf or password in it. Bodies are not kept.
 *
 * At most NETLOG_MAX exchanges an action, NETLOG_HEADERS headers each,
 * values cut at NETLOG_VALUE_BYTES. Worker thread only (the listener runs
 * inside cdp calls on it).
 */
#include "actions/actions-private.h"

#include "cdp/cdp.h"
#include "evidence/audit.h"

#include <stdio.h>
#include <string.h>
#include <strings.h>

#define NETLOG_MAX 200
#define NETLOG_HEADERS 64
#define NETLOG_VALUE_BYTES 2048
#define REDACTED "[redacted]"

/* 1 when a header named name may carry a credential. */
static int secret_header(const char *name)
{
	static const char *const parts[] = { "auth",    "cookie", "token",    "key", "secret",
		                             "session", "csrf",   "password", NULL };
	size_t i;

	if (evid_is_credential_name(name))
		return 1;
	for (i = 0; parts[i]; i++)
		if (strcasestr(name, parts[i]))
			return 1;
	return 0;
}

/* CDP's headers object as HAR's [{name, value}], redacted and capped. */
static json_t *headers_of(json_t *obj)
{
	json_t *list = json_array();
	const char *name;
	json_t *v;

	json_object_foreach(obj, name, v)
	{
		char value[NETLOG_VALUE_BYTES + 1];

		if (json_array_size(list) >= NETLOG_HEADERS)
			break;
		snprintf(value, sizeof(value), "%s",
		         secret_header(name) ? REDACTED : gb_or(json_string_value(v), ""));
		json_array_append_new(list, json_pack("{s:s, s:s}", "name", name, "value", value));
	}
	return list;
}

static void on_network(void *user, const char *session_id, const char *method, json_t *params)
{
	struct act_netlog *n = user;
	const char *rid = json_string_value(json_object_get(params, "requestId"));
	json_t *x;

	(void)session_id;
	if (!rid || strncmp(method, "Network.", 8) != 0)
		return;
	x = json_object_get(n->byid, rid);
	if (!strcmp(method, "Network.requestWillBeSent")) {
		json_t *req = json_object_get(params, "request");

		if (json_object_get(params, "redirectResponse"))
			return; /* the redirect's own response is in the action's responses */
		if (json_object_size(n->byid) >= NETLOG_MAX)
			return;
		json_object_set_new(
		    n->byid, rid,
		    json_pack("{s:s?, s:s?, s:s?, s:o, s:I}", "method",
		              json_string_value(json_object_get(req, "method")), "url",
		              json_string_value(json_object_get(req, "url")), "type",
		              json_string_value(json_object_get(params, "type")), "request_headers",
		              headers_of(json_object_get(req, "headers")), "started_ms",
		              (json_int_t)gb_wall_ms()));
		json_array_append(n->order, json_object_get(n->byid, rid));
	} else if (x && !strcmp(method, "Network.responseReceived")) {
		json_t *resp = json_object_get(params, "response");

		json_object_set_new(
		    x, "status",
		    json_integer((json_int_t)json_number_value(json_object_get(resp, "status"))));
		json_object_set_new(
		    x, "status_text",
		    json_string(gb_or(json_string_value(json_object_get(resp, "statusText")), "")));
		json_object_set_new(
		    x, "mime_type",
		    json_string(gb_or(json_string_value(json_object_get(resp, "mimeType")), "")));
		json_object_set_new(
		    x, "protocol",
		    json_string(gb_or(json_string_value(json_object_get(resp, "protocol")), "")));
		json_object_set_new(x, "response_headers",
		                    headers_of(json_object_get(resp, "headers")));
	} else if (x && !strcmp(method, "Network.loadingFinished")) {
		json_object_set_new(x, "encoded_bytes",
		                    json_integer((json_int_t)json_number_value(
		                        json_object_get(params, "encodedDataLength"))));
		json_object_set_new(x, "ended_ms", json_integer((json_int_t)gb_wall_ms()));
	} else if (x && !strcmp(method, "Network.loadingFailed")) {
		json_object_set_new(
		    x, "error",
		    json_string(
		        gb_or(json_string_value(json_object_get(params, "errorText")), "failed")));
		json_object_set_new(x, "ended_ms", json_integer((json_int_t)gb_wall_ms()));
	}
}

void act_netlog_start(struct act_ctx *ctx)
{
	struct act_netlog *n = &ctx->netlog;

	memset(n, 0, sizeof(*n));
	if (!ctx->cdp)
		return;
	n->cdp = ctx->cdp;
	n->byid = json_object();
	n->order = json_array();
	n->listener = cdp_on(ctx->cdp, NULL, NULL, on_network, n);
	if (n->listener < 0)
		n->listener = 0;
}

void act_netlog_stop(struct act_ctx *ctx)
{
	struct act_netlog *n = &ctx->netlog;

	if (n->listener)
		cdp_off(n->cdp, n->listener);
	n->listener = 0;
	json_decref(n->byid);
	n->byid = NULL;
}

json_t *act_netlog_take(struct act_ctx *ctx)
{
	json_t *order = ctx->netlog.order;

	ctx->netlog.order = NULL;
	return order ? order : json_array();
}

/*
 * netlog.c - the exchanges of one action for its network_log evidence
 * (and so for HAR files and traces, trace/har.c): each request's method,
 * URL, resource type and headers, its response's status, status text,
 * MIME type, headers and bytes, and when it started and ended. Header
 * values that could carry a credential are replaced by "[redacted]"
 * before they are kept: names the audit log redacts (cookie, set-cookie,
 * authorization, ...) and any name with auth, cookie, token, key, secret,
 * session, csrf or password in it. Bodies are kept only when the policy
 * asks ("har_bodies"): text responses up to its max_bytes, with the
 * session's secrets scrubbed, and none for an action where secrets are in
 * play; request bodies never (a form's body holds what was typed).
 *
 * At most NETLOG_MAX exchanges an action, NETLOG_HEADERS headers each,
 * values cut at NETLOG_VALUE_BYTES. Worker thread only (the listener runs
 * inside cdp calls on it).
 */
#include "actions/actions-private.h"

#include "cdp/cdp.h"
#include "common/log.h"
#include "evidence/audit.h"
#include "policy/tenant.h"

#include <stdio.h>
#include <stdlib.h>
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
		    json_pack("{s:s, s:s?, s:s?, s:s?, s:o, s:I}", "request_id", rid, "method",
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

/* 1 when a response of this MIME type is text a HAR can carry as is. */
static int text_mime(const char *mime)
{
	return mime && (!strncmp(mime, "text/", 5) || strstr(mime, "json") || strstr(mime, "xml") ||
	                strstr(mime, "javascript") || strstr(mime, "x-www-form-urlencoded"));
}

/* har_bodies: the text bodies of the action's finished responses, asked
 * for all at once and awaited within BODY_WAIT_MS; each at most max_bytes
 * (a larger one is left out and said so), the session's secrets scrubbed.
 * None when the action typed a secret or a password, or the page has a
 * field that received a secret: a body could echo it. */
#define BODY_WAIT_MS 2000
static void fetch_bodies(struct act_ctx *ctx, struct act_netlog *n, int max_bytes)
{
	uint64_t ids[NETLOG_MAX];
	json_t *who[NETLOG_MAX];
	int64_t deadline = gb_now_ms() + BODY_WAIT_MS;
	size_t k = 0;
	size_t i;
	json_t *x;

	if (ctx->sensitive || ctx->as->n_masked_fields) {
		json_array_foreach(n->order, i, x)
		{
			if (json_object_get(x, "ended_ms"))
				json_object_set_new(x, "body_omitted",
				                    json_string("secrets in play"));
		}
		return;
	}
	json_array_foreach(n->order, i, x)
	{
		const char *rid = json_string_value(json_object_get(x, "request_id"));

		if (k >= NETLOG_MAX || !rid || json_object_get(x, "error") ||
		    !json_object_get(x, "ended_ms") ||
		    !text_mime(json_string_value(json_object_get(x, "mime_type"))))
			continue;
		if (cdp_send(n->cdp, ctx->psid, "Network.getResponseBody",
		             json_pack("{s:s}", "requestId", rid), &ids[k]) == 0)
			who[k++] = x;
	}
	for (i = 0; i < k; i++) {
		int64_t left = deadline - gb_now_ms();
		json_t *res = NULL;
		struct cdp_error cerr;
		const char *body;
		char *clean;

		if (left <= 0 || cdp_await(n->cdp, ids[i], (int)left, &res, &cerr) != 0) {
			if (left <= 0)
				cdp_forget(n->cdp, ids[i]);
			else
				GB_LOGD("actions", "a response body was not kept: %s",
				        cerr.message);
			json_decref(res);
			continue;
		}
		body = json_string_value(json_object_get(res, "body"));
		if (body && !json_is_true(json_object_get(res, "base64Encoded"))) {
			if (strlen(body) > (size_t)max_bytes) {
				json_object_set_new(
				    who[i], "body_omitted",
				    json_string("larger than har_bodies.max_bytes"));
			} else {
				/* NULL: there was no secret in it */
				clean = act_secrets_scrub_text(ctx->as, body);
				json_object_set_new(who[i], "body_text",
				                    json_string(clean ? clean : body));
				free(clean);
			}
		}
		json_decref(res);
	}
}

void act_netlog_stop(struct act_ctx *ctx)
{
	struct act_netlog *n = &ctx->netlog;
	int max_bytes = policy_tenant_settings(ctx->as->tenant_policy)->har_body_max_bytes;

	if (n->listener)
		cdp_off(n->cdp, n->listener);
	if (n->listener && max_bytes && ctx->psid && cdp_is_open(n->cdp))
		fetch_bodies(ctx, n, max_bytes);
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

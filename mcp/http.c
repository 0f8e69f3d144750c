/*
 * http.c - MCP Streamable HTTP (2025-11-25) for `glassbox serve`: the
 * front thread, a libwebsockets HTTP server with two listeners (/mcp and
 * the admin one).
 *
 * Design note
 * - Threads: everything here runs on the front (the thread in
 *   mcp_http_serve), which never waits on a browser. Workers hand output
 *   over through http_session.c's queues and lws_cancel_service(); the
 *   front then asks for writable callbacks and writes.
 * - A POST carries one JSON-RPC message. Notifications and responses get
 *   202. A request's answer is application/json when its response is the
 *   only message, otherwise an SSE stream (progress, elicitation requests,
 *   then the response), sent with chunked encoding so the connection can
 *   be kept alive. GET gets 405 (no server-initiated stream); DELETE ends
 *   the session.
 * - Checks, in order: route (404/405), shutting down (503), Host and
 *   Origin (403), bearer token (401), MCP-Protocol-Version (400), Accept
 *   (406), Content-Type (415), body size (413), session (400/404),
 *   session limits (429). A tenant only ever finds its own sessions.
 * - A housekeeping timer (every HOUSEKEEPING_MS) expires sessions, sets
 *   gauges and drives the graceful stop.
 */
#include "mcp/http-private.h"

#include <errno.h>
#include <libwebsockets.h>
#include <sodium.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/log.h"
#include "common/metrics.h"
#include "mcp/http-headers.h"
#include "mcp/mcp-private.h"

#define MOD "serve"
#define HOUSEKEEPING_MS 250
/* After the last session closed, time for the last answers to go out. */
#define LAST_WRITES_MS 300

static lws_sorted_usec_list_t housekeeping_sul;
static struct serve *the_serve; /* the timer's; one service per process */

/* ---- responses ---------------------------------------------------------- */

/* Frees a fixed response's body and forgets it. */
static void resp_clear(struct fixed_resp *r)
{
	free(r->body);
	memset(r, 0, sizeof(*r));
}

/* Resets the per-request state (keep-alive reuses it). */
static void pss_reset(struct pss *pss)
{
	if (pss->st && pss->hs)
		hs_stream_release(pss->hs, pss->st);
	pss->st = NULL;
	hs_unref(pss->hs);
	pss->hs = NULL;
	if (pss->body_on)
		gb_buf_free(&pss->body);
	resp_clear(&pss->resp);
	memset(pss, 0, sizeof(*pss));
}

/* See http-private.h. */
void mcp_http_respond(struct lws *wsi, struct pss *pss, int status, const char *ctype,
                      const char *body, size_t len)
{
	struct fixed_resp *r = &pss->resp;

	free(r->body);
	r->body = NULL;
	r->status = status;
	snprintf(r->ctype, sizeof(r->ctype), "%s", ctype ? ctype : "");
	r->len = 0;
	if (body && len) {
		r->body = malloc(LWS_PRE + len);
		if (r->body) {
			memcpy(r->body + LWS_PRE, body, len);
			r->len = len;
		}
	}
	lws_callback_on_writable(wsi);
}

/* See http-private.h. */
void mcp_http_respond_json(struct lws *wsi, struct pss *pss, int status, json_t *value)
{
	char *text = value ? json_dumps(value, JSON_COMPACT) : NULL;

	mcp_http_respond(wsi, pss, status, "application/json", text ? text : "{}",
	                 text ? strlen(text) : 2);
	free(text);
	json_decref(value);
}

/* An HTTP error on /mcp: the body is a JSON-RPC error (id null) whose
 * message says what to do. */
static void respond_rpc_error(struct lws *wsi, struct pss *pss, int status, int code,
                              const char *message)
{
	gb_metrics_counter_add("glassbox_http_requests_total",
	                       status == 400   ? "400"
	                       : status == 401 ? "401"
	                       : status == 403 ? "403"
	                       : status == 404 ? "404"
	                       : status == 405 ? "405"
	                       : status == 406 ? "406"
	                       : status == 413 ? "413"
	                       : status == 415 ? "415"
	                       : status == 429 ? "429"
	                       : status == 503 ? "503"
	                                       : "other",
	                       1);
	mcp_http_respond_json(wsi, pss, status, mcp_jsonrpc_error(NULL, code, message, NULL));
}

/* Adds a header by name ("name:") unless value is empty. */
static int add_header(struct lws *wsi, const char *name, const char *value, unsigned char **p,
                      unsigned char *end)
{
	if (!value || !value[0])
		return 0;
	return lws_add_http_header_by_name(wsi, (const unsigned char *)name,
	                                   (const unsigned char *)value, (int)strlen(value), p,
	                                   end);
}

/* Writes the status line and headers. content_len < 0: none (chunked). */
static int write_headers(struct lws *wsi, int status, const char *ctype, long long content_len,
                         const struct fixed_resp *extra)
{
	unsigned char buf[LWS_PRE + 1024];
	unsigned char *start = buf + LWS_PRE, *p = start, *end = buf + sizeof(buf) - 1;
	char retry[16];

	if (lws_add_http_header_status(wsi, (unsigned int)status, &p, end))
		return -1;
	if (ctype && add_header(wsi, "content-type:", ctype, &p, end))
		return -1;
	if (content_len >= 0 &&
	    lws_add_http_header_content_length(wsi, (lws_filepos_t)content_len, &p, end))
		return -1;
	if (content_len < 0 && (add_header(wsi, "transfer-encoding:", "chunked", &p, end) ||
	                        add_header(wsi, "cache-control:", "no-cache", &p, end)))
		return -1;
	if (extra) {
		snprintf(retry, sizeof(retry), "%d", extra->retry_after_s);
		if (add_header(wsi, "mcp-session-id:", extra->session_id, &p, end) ||
		    (extra->retry_after_s > 0 && add_header(wsi, "retry-after:", retry, &p, end)) ||
		    add_header(wsi, "www-authenticate:", extra->www_authenticate, &p, end) ||
		    add_header(wsi, "allow:", extra->allow, &p, end))
			return -1;
	}
	if (lws_finalize_http_header(wsi, &p, end))
		return -1;
	return lws_write(wsi, start, (size_t)(p - start), LWS_WRITE_HTTP_HEADERS) < 0 ? -1 : 0;
}

/* Writes the fixed response; returns what the callback should return. */
static int write_fixed(struct lws *wsi, struct pss *pss)
{
	struct fixed_resp *r = &pss->resp;
	int close_after = r->close_after;

	if (write_headers(wsi, r->status, r->ctype[0] ? r->ctype : NULL, (long long)r->len, r) < 0)
		return -1;
	if (r->len &&
	    lws_write(wsi, (unsigned char *)r->body + LWS_PRE, r->len, LWS_WRITE_HTTP_FINAL) < 0)
		return -1;
	pss_reset(pss);
	if (close_after)
		return -1;
	return lws_http_transaction_completed(wsi) ? -1 : 0;
}

/* Writes what the stream of pss has queued: the first time, headers (JSON
 * when the response is the only message, else SSE); then events; the end
 * completes the transaction. */
static int write_stream(struct lws *wsi, struct pss *pss)
{
	struct hs_stream *st = pss->st;
	struct http_session *hs = pss->hs;
	struct hs_msg *msgs, *m;
	struct gb_buf out;
	struct fixed_resp extra;
	int done, error, empty, rc = 0;
	char *data;

	msgs = hs_stream_take(hs, st, &done, &error, &empty);
	memset(&extra, 0, sizeof(extra));
	if (st->is_initialize && !error)
		snprintf(extra.session_id, sizeof(extra.session_id), "%s", hs->id);
	if (st->is_initialize && done && error)
		hs_close(hs, "init_failed");
	if (!st->headers_sent) {
		if (!msgs && !done)
			goto out;
		if (done && (!msgs || empty)) {
			/* ended without a response (cancelled by the client) */
			hs_msgs_free(msgs);
			msgs = NULL;
			if (write_headers(wsi, 202, NULL, 0, NULL) < 0)
				rc = -1;
			goto finish;
		}
		if (done && !msgs->next) {
			data = malloc(LWS_PRE + msgs->len);
			if (!data || write_headers(wsi, 200, "application/json",
			                           (long long)msgs->len, &extra) < 0) {
				free(data);
				rc = -1;
				goto out;
			}
			memcpy(data + LWS_PRE, msgs->text, msgs->len);
			if (lws_write(wsi, (unsigned char *)data + LWS_PRE, msgs->len,
			              LWS_WRITE_HTTP_FINAL) < 0)
				rc = -1;
			free(data);
			goto finish;
		}
		if (write_headers(wsi, 200, "text/event-stream", -1, &extra) < 0) {
			rc = -1;
			goto out;
		}
		st->headers_sent = 1;
		st->sse = 1;
	}
	/* SSE events, each one HTTP chunk */
	gb_buf_init(&out, (size_t)1 << 30);
	gb_buf_appendf(&out, "%*s", LWS_PRE, ""); /* lws_write's headroom */
	for (m = msgs; m; m = m->next) {
		gb_buf_appendf(&out, "%zx\r\nevent: message\ndata: ", m->len + 23);
		gb_buf_append(&out, m->text, m->len);
		gb_buf_append(&out, "\n\n\r\n", 4);
	}
	if (done)
		gb_buf_append(&out, "0\r\n\r\n", 5);
	if (out.len > LWS_PRE && lws_write(wsi, (unsigned char *)out.data + LWS_PRE,
	                                   out.len - LWS_PRE, LWS_WRITE_HTTP) < 0)
		rc = -1;
	gb_buf_free(&out);
	if (!done || rc < 0)
		goto out;
finish:
	hs_msgs_free(msgs);
	msgs = NULL;
	pss_reset(pss);
	if (rc == 0)
		rc = lws_http_transaction_completed(wsi) ? -1 : 0;
	return rc;
out:
	hs_msgs_free(msgs);
	return rc;
}

/* ---- requests on /mcp --------------------------------------------------- */

/* Copies header tok (or custom header name, "x-y:") into buf; NULL when
 * absent or too long. */
static const char *header(struct lws *wsi, enum lws_token_indexes tok, const char *custom,
                          char *buf, size_t len)
{
	int n;

	if (custom) {
		n = lws_hdr_custom_length(wsi, custom, (int)strlen(custom));
		if (n <= 0 || (size_t)n >= len)
			return NULL;
		if (lws_hdr_custom_copy(wsi, buf, (int)len, custom, (int)strlen(custom)) < 0)
			return NULL;
		return buf;
	}
	n = lws_hdr_total_length(wsi, tok);
	if (n <= 0 || (size_t)n >= len)
		return NULL;
	if (lws_hdr_copy(wsi, buf, (int)len, tok) < 0)
		return NULL;
	return buf;
}

/* The request's method, from the URI token lws filled in. */
static const char *method_of(struct lws *wsi)
{
	if (lws_hdr_total_length(wsi, WSI_TOKEN_POST_URI))
		return "POST";
	if (lws_hdr_total_length(wsi, WSI_TOKEN_GET_URI))
		return "GET";
	if (lws_hdr_total_length(wsi, WSI_TOKEN_DELETE_URI))
		return "DELETE";
	if (lws_hdr_total_length(wsi, WSI_TOKEN_OPTIONS_URI))
		return "OPTIONS";
	if (lws_hdr_total_length(wsi, WSI_TOKEN_PUT_URI))
		return "PUT";
	if (lws_hdr_total_length(wsi, WSI_TOKEN_PATCH_URI))
		return "PATCH";
	return "OTHER";
}

/* Everything that needs only the headers. Returns 0 (go on: a POST then
 * reads its body) after maybe queuing a response, or -1 to close. */
static int mcp_headers(struct serve *s, struct lws *wsi, struct pss *pss, const char *path)
{
	const char *method = method_of(wsi);
	char host[256], origin[256], auth[600], version[40], accept[256], ctype[128], clen[32];
	const char *v;
	struct http_session *hs;

	pss->route = (int)mcp_http_route(method, path);
	if (pss->route == MCP_ROUTE_NOT_FOUND) {
		respond_rpc_error(wsi, pss, 404, -32000, "not found: MCP is served on /mcp");
		goto out;
	}
	if (pss->route == MCP_ROUTE_METHOD_NOT_ALLOWED || pss->route == MCP_ROUTE_GET) {
		snprintf(pss->resp.allow, sizeof(pss->resp.allow), "POST, DELETE");
		respond_rpc_error(
		    wsi, pss, 405, -32000,
		    "method not allowed: POST JSON-RPC messages to /mcp; glassbox sends "
		    "no server-initiated stream, so GET is not offered");
		goto out;
	}
	if (s->stopping || atomic_load(s->stop)) {
		respond_rpc_error(wsi, pss, 503, -32000,
		                  "the service is shutting down: try again "
		                  "later or elsewhere");
		goto out;
	}
	if (!mcp_http_host_ok(header(wsi, WSI_TOKEN_HOST, NULL, host, sizeof(host)),
	                      s->loopback_only) ||
	    !mcp_http_origin_ok(header(wsi, WSI_TOKEN_ORIGIN, NULL, origin, sizeof(origin)),
	                        (const char(*)[128])s->cfg->origins, s->cfg->n_origins)) {
		respond_rpc_error(wsi, pss, 403, -32000,
		                  "forbidden: this Host or Origin is not allowed (DNS rebinding "
		                  "protection); add the origin to listen.allowed_origins");
		goto out;
	}
	pss->tenant = mcp_auth_tenant(
	    s->cfg, header(wsi, WSI_TOKEN_HTTP_AUTHORIZATION, NULL, auth, sizeof(auth)));
	sodium_memzero(auth, sizeof(auth));
	if (!pss->tenant) {
		gb_metrics_counter_add("glassbox_auth_failures_total", NULL, 1);
		snprintf(pss->resp.www_authenticate, sizeof(pss->resp.www_authenticate),
		         "Bearer realm=\"glassbox\", error=\"invalid_token\"");
		respond_rpc_error(wsi, pss, 401, -32001,
		                  "unauthorized: send your tenant's token as Authorization: Bearer "
		                  "<token>");
		goto out;
	}
	if (!mcp_http_protocol_version_ok(
	        header(wsi, WSI_TOKEN_COUNT, "mcp-protocol-version:", version, sizeof(version)))) {
		respond_rpc_error(wsi, pss, 400, -32600,
		                  "unsupported MCP-Protocol-Version: glassbox speaks 2025-11-25, "
		                  "2025-06-18 and 2025-03-26");
		goto out;
	}
	v = header(wsi, WSI_TOKEN_COUNT, "mcp-session-id:", pss->session_id,
	           sizeof(pss->session_id));
	if (pss->route == MCP_ROUTE_DELETE) {
		hs = v ? hs_find(&s->table, v, pss->tenant) : NULL;
		if (!v)
			respond_rpc_error(wsi, pss, 400, -32000,
			                  "DELETE needs the Mcp-Session-Id header");
		else if (!hs)
			respond_rpc_error(wsi, pss, 404, -32001,
			                  "session not found: it ended or never "
			                  "existed; start a new one with initialize");
		else {
			hs_close(hs, "deleted");
			mcp_http_respond(wsi, pss, 200, NULL, NULL, 0);
		}
		hs_unref(hs);
		goto out;
	}
	/* POST */
	if (!mcp_http_accept_ok(header(wsi, WSI_TOKEN_HTTP_ACCEPT, NULL, accept, sizeof(accept)),
	                        1)) {
		respond_rpc_error(wsi, pss, 406, -32000,
		                  "not acceptable: Accept must list "
		                  "application/json and text/event-stream");
		goto out;
	}
	if (!mcp_http_content_type_ok(
	        header(wsi, WSI_TOKEN_HTTP_CONTENT_TYPE, NULL, ctype, sizeof(ctype)))) {
		respond_rpc_error(wsi, pss, 415, -32000,
		                  "unsupported media type: POST one JSON-RPC "
		                  "message as Content-Type: application/json");
		goto out;
	}
	if (header(wsi, WSI_TOKEN_HTTP_CONTENT_LENGTH, NULL, clen, sizeof(clen)) &&
	    strtoull(clen, NULL, 10) > s->cfg->max_body_bytes) {
		pss->resp.close_after = 1;
		respond_rpc_error(wsi, pss, 413, -32600,
		                  "the message is larger than this service "
		                  "accepts (limits.max_body_bytes); send a smaller one");
		goto out;
	}
	if (v) {
		pss->hs = hs_find(&s->table, v, pss->tenant);
		if (!pss->hs) {
			respond_rpc_error(wsi, pss, 404, -32001,
			                  "session not found: it ended or never "
			                  "existed; start a new one with initialize");
			goto out;
		}
	}
	gb_buf_init(&pss->body, s->cfg->max_body_bytes);
	pss->body_on = 1;
out:
	return 0;
}

/* A request without a session: only initialize opens one. */
static void post_new_session(struct serve *s, struct lws *wsi, struct pss *pss, struct mcp_msg *msg)
{
	enum hs_refusal why;
	char text[200];

	if (msg->kind != MCP_MSG_REQUEST || strcmp(msg->method, "initialize") != 0) {
		respond_rpc_error(
		    wsi, pss, 400, -32000,
		    "the Mcp-Session-Id header is required: "
		    "start a session with initialize and send its id with every request");
		return;
	}
	why = hs_admission(&s->table, pss->tenant);
	if (why != HS_OK) {
		gb_metrics_counter_add("glassbox_sessions_refused_total",
		                       why == HS_LIMIT_TOTAL ? "limit_total" : "limit_tenant", 1);
		pss->resp.retry_after_s = s->cfg->retry_after_s;
		snprintf(text, sizeof(text),
		         "too many sessions: %s; close one (DELETE) or retry "
		         "after %d s",
		         why == HS_LIMIT_TOTAL ? "the service is at its limit"
		                               : "your tenant is at its limit",
		         s->cfg->retry_after_s);
		respond_rpc_error(wsi, pss, 429, -32000, text);
		return;
	}
	pss->hs = hs_create(&s->table, pss->tenant);
	if (pss->hs)
		pss->st = hs_stream_open(pss->hs, msg->id, wsi);
	if (!pss->st) {
		respond_rpc_error(wsi, pss, 500, -32603,
		                  "the session could not be created (out of "
		                  "memory?); try again later");
		return;
	}
	pss->st->is_initialize = 1;
	mcp_server_handle_line(pss->hs->srv, pss->body.data, pss->body.len);
	lws_callback_on_writable(wsi);
}

/* A message for an existing session. */
static void post_in_session(struct serve *s, struct lws *wsi, struct pss *pss, struct mcp_msg *msg)
{
	struct http_session *hs = pss->hs;
	int budget = hs->tenant->tool_calls_per_session;
	char text[200];
	json_t *err;

	if (hs->state != HS_OPEN) {
		respond_rpc_error(wsi, pss, 404, -32001,
		                  "session not found: it ended; start a new "
		                  "one with initialize");
		return;
	}
	hs->last_active_ms = gb_now_ms();
	if (msg->kind != MCP_MSG_REQUEST) {
		mcp_server_handle_line(hs->srv, pss->body.data, pss->body.len);
		if (msg->kind == MCP_MSG_NOTIFICATION &&
		    !strcmp(msg->method, "notifications/cancelled"))
			hs_stream_cancel(hs, json_object_get(msg->params, "requestId"));
		gb_metrics_counter_add("glassbox_http_requests_total", "202", 1);
		mcp_http_respond(wsi, pss, 202, NULL, NULL, 0);
		return;
	}
	if (!strcmp(msg->method, "tools/call")) {
		if (budget > 0 && hs->calls >= (unsigned long)budget) {
			gb_metrics_counter_add("glassbox_tool_budget_exceeded_total", NULL, 1);
			snprintf(text, sizeof(text),
			         "tool call budget exhausted: this session may make "
			         "%d tool calls and has made them all; start a new session",
			         budget);
			err = mcp_jsonrpc_error(msg->id, -32000, text,
			                        json_pack("{s:s, s:i}", "reason",
			                                  "budget_exhausted", "budget", budget));
			mcp_http_respond_json(wsi, pss, 200, err);
			return;
		}
		hs->calls++;
	}
	pss->st = hs_stream_open(hs, msg->id, wsi);
	if (!pss->st) {
		mcp_http_respond_json(
		    wsi, pss, 200,
		    mcp_jsonrpc_error(msg->id, -32600,
		                      "this request id is already used by a request "
		                      "in progress: give each request a new id",
		                      NULL));
		return;
	}
	mcp_server_handle_line(hs->srv, pss->body.data, pss->body.len);
	lws_callback_on_writable(wsi);
}

/* The whole body is in: parse it and route the message. */
static void mcp_body_done(struct serve *s, struct lws *wsi, struct pss *pss)
{
	struct mcp_msg msg;

	if (pss->too_large) {
		pss->resp.close_after = 1;
		respond_rpc_error(wsi, pss, 413, -32600,
		                  "the message is larger than this service "
		                  "accepts (limits.max_body_bytes); send a smaller one");
		return;
	}
	switch (mcp_jsonrpc_parse(pss->body.data, pss->body.len, &msg)) {
	case MCP_MSG_EMPTY:
	case MCP_MSG_INVALID:
		respond_rpc_error(
		    wsi, pss, 400,
		    msg.kind == MCP_MSG_EMPTY ? MCP_ERR_INVALID_REQUEST : msg.error_code,
		    msg.kind == MCP_MSG_EMPTY ? "the body is empty: POST one JSON-RPC message"
		                              : msg.error);
		break;
	default:
		if (pss->hs)
			post_in_session(s, wsi, pss, &msg);
		else
			post_new_session(s, wsi, pss, &msg);
		if (pss->st) /* the answer may take as long as its call */
			lws_set_timeout(wsi, NO_PENDING_TIMEOUT, 0);
	}
	mcp_msg_clear(&msg);
}

/* ---- the callbacks ------------------------------------------------------ */

/* lws callback of the /mcp listener. Front thread. */
static int callback_mcp(struct lws *wsi, enum lws_callback_reasons reason, void *user, void *in,
                        size_t len)
{
	struct serve *s = the_serve;
	struct pss *pss = user;

	switch (reason) {
	case LWS_CALLBACK_HTTP:
		pss_reset(pss);
		return mcp_headers(s, wsi, pss, in ? (const char *)in : "");
	case LWS_CALLBACK_HTTP_BODY:
		if (pss->resp.status || !pss->body_on)
			return 0;
		if (gb_buf_append(&pss->body, in, len) < 0)
			pss->too_large = 1;
		return 0;
	case LWS_CALLBACK_HTTP_BODY_COMPLETION:
		if (!pss->resp.status && pss->body_on)
			mcp_body_done(s, wsi, pss);
		return 0;
	case LWS_CALLBACK_HTTP_WRITEABLE:
		if (pss->resp.status)
			return write_fixed(wsi, pss);
		if (pss->st)
			return write_stream(wsi, pss);
		return 0;
	case LWS_CALLBACK_CLOSED_HTTP:
		/* lws closes connections that never got per-session data too
		 * (at lws_context_destroy(), for one) */
		if (pss)
			pss_reset(pss);
		return 0;
	case LWS_CALLBACK_EVENT_WAIT_CANCELLED:
		if (s)
			hs_table_flush(&s->table);
		return 0;
	default:
		break;
	}
	return lws_callback_http_dummy(wsi, reason, user, in, len);
}

/* lws callback of the admin listener. Front thread. */
static int callback_admin(struct lws *wsi, enum lws_callback_reasons reason, void *user, void *in,
                          size_t len)
{
	struct pss *pss = user;

	switch (reason) {
	case LWS_CALLBACK_HTTP:
		pss_reset(pss);
		return mcp_admin_handle(the_serve, wsi, pss, method_of(wsi),
		                        in ? (const char *)in : "");
	case LWS_CALLBACK_HTTP_WRITEABLE:
		return pss->resp.status ? write_fixed(wsi, pss) : 0;
	case LWS_CALLBACK_CLOSED_HTTP:
		/* lws closes connections that never got per-session data too
		 * (at lws_context_destroy(), for one) */
		if (pss)
			pss_reset(pss);
		return 0;
	default:
		break;
	}
	return lws_callback_http_dummy(wsi, reason, user, in, len);
}

static const struct lws_protocols mcp_protocols[] = {
	{ "http", callback_mcp, sizeof(struct pss), 0, 0, NULL, 0 },
	{ NULL, NULL, 0, 0, 0, NULL, 0 },
};

static const struct lws_protocols admin_protocols[] = {
	{ "http", callback_admin, sizeof(struct pss), 0, 0, NULL, 0 },
	{ NULL, NULL, 0, 0, 0, NULL, 0 },
};

/* ---- housekeeping and the stop ------------------------------------------ */

/* Whether any session has a call in flight. */
static int any_busy(struct serve *s)
{
	size_t busy, idle, closing;

	hs_table_counts(&s->table, &busy, &idle, &closing);
	return busy > 0;
}

/* Every HOUSEKEEPING_MS on the front: TTLs, gauges, and the stop: after
 * SIGTERM, waits for calls in flight (up to the grace period), closes every
 * session, and ends the loop once the closer is done and the last answers
 * had time to go out. */
static void housekeeping(lws_sorted_usec_list_t *sul)
{
	struct serve *s = the_serve;
	int64_t now = gb_now_ms();
	size_t busy, idle, closing;

	if (atomic_load(s->stop) && !s->stopping) {
		s->stopping = 1;
		s->stop_deadline_ms = now + (int64_t)s->cfg->shutdown_grace_s * 1000;
		GB_LOGI(MOD, "stopping: no new requests; calls in flight have %d s to finish",
		        s->cfg->shutdown_grace_s);
	}
	if (s->stopping) {
		if (s->table.head && (!any_busy(s) || now >= s->stop_deadline_ms)) {
			if (any_busy(s))
				GB_LOGW(MOD,
				        "grace period over: cancelling the calls still running");
			while (s->table.head)
				hs_close(s->table.head, "shutdown");
		}
		hs_table_counts(&s->table, &busy, &idle, &closing);
		if (!s->table.head && closing == 0) {
			if (!s->closed_at_ms)
				s->closed_at_ms = now;
			else if (now - s->closed_at_ms >= LAST_WRITES_MS)
				s->finished = 1;
		}
	} else {
		hs_expire(&s->table, now);
	}
	mcp_admin_update_gauges(s);
	if (!s->finished)
		lws_sul_schedule(s->ctx, 0, sul, housekeeping, HOUSEKEEPING_MS * LWS_US_PER_MS);
	else
		lws_cancel_service(s->ctx);
}

/* Whether host is a loopback address or name. */
static int is_loopback(const char *host)
{
	return !strcmp(host, "127.0.0.1") || !strcmp(host, "localhost") || !strcmp(host, "::1") ||
	       !strncmp(host, "127.", 4);
}

/* A listener on host:port with protocols; NULL when it cannot bind. */
static struct lws_vhost *listen_on(struct lws_context *ctx, const char *name, const char *host,
                                   int port, const struct lws_protocols *protocols)
{
	struct lws_context_creation_info info;

	memset(&info, 0, sizeof(info));
	info.vhost_name = name;
	info.iface = host;
	info.port = port; /* 0: a free port, printed at start */
	info.protocols = protocols;
	if (!strchr(host, ':'))
		info.options = LWS_SERVER_OPTION_DISABLE_IPV6;
	info.keepalive_timeout = 60;
	return lws_create_vhost(ctx, &info);
}

/* See serve.h. */
int mcp_http_serve(const struct mcp_serve_config *cfg, const struct act_config *base,
                   const struct mcp_serve_hooks *hooks, const atomic_int *stop)
{
	struct lws_context_creation_info info;
	struct lws_vhost *vh, *admin = NULL;
	struct serve s;
	int rc = -1;

	memset(&s, 0, sizeof(s));
	s.cfg = cfg;
	s.hooks = hooks;
	s.stop = stop;
	s.loopback_only = is_loopback(cfg->host);
	hs_table_init(&s.table, cfg, base);
	the_serve = &s;

	lws_set_log_level(LLL_ERR, NULL);
	memset(&info, 0, sizeof(info));
	info.options = LWS_SERVER_OPTION_EXPLICIT_VHOSTS | LWS_SERVER_OPTION_DISABLE_IPV6;
	info.count_threads = 1;
	s.ctx = lws_create_context(&info);
	if (!s.ctx) {
		GB_LOGE(MOD, "could not create the HTTP service");
		goto out;
	}
	s.table.ctx = s.ctx;
	vh = listen_on(s.ctx, "mcp", cfg->host, cfg->port, mcp_protocols);
	if (!vh) {
		GB_LOGE(MOD, "cannot listen on %s:%d: is the port in use? set listen.port",
		        cfg->host, cfg->port);
		goto out;
	}
	if (cfg->admin_enabled) {
		admin =
		    listen_on(s.ctx, "admin", cfg->admin_host, cfg->admin_port, admin_protocols);
		if (!admin) {
			GB_LOGE(MOD, "cannot listen on %s:%d for the admin: set admin.port",
			        cfg->admin_host, cfg->admin_port);
			goto out;
		}
	}
	/* the lines tests and operators look for */
	fprintf(stderr, "glassbox serve: MCP on http://%s:%d/mcp\n", cfg->host,
	        lws_get_vhost_listen_port(vh));
	if (admin)
		fprintf(stderr, "glassbox serve: admin on http://%s:%d/\n", cfg->admin_host,
		        lws_get_vhost_listen_port(admin));
	fflush(stderr);
	lws_sul_schedule(s.ctx, 0, &housekeeping_sul, housekeeping,
	                 HOUSEKEEPING_MS * LWS_US_PER_MS);
	while (!s.finished) {
		if (lws_service(s.ctx, 0) < 0)
			break;
	}
	rc = s.finished ? 0 : -1;
	GB_LOGI(MOD, "every session is closed: exiting");
out:
	hs_table_shutdown(&s.table);
	if (s.ctx)
		lws_context_destroy(s.ctx);
	the_serve = NULL;
	return rc;
}

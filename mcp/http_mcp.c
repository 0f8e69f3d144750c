/*
 * http_mcp.c - the /mcp endpoint of `glassbox serve`: what a request must
 * carry, and where its JSON-RPC message goes (http-private.h).
 *
 * Design note
 * - Front thread only, called by http.c once the headers are in
 *   (mcp_http_mcp_headers) and once the body is (mcp_http_mcp_body).
 * - Checks, in order: route (404/405), shutting down (503), Host and
 *   Origin (403), bearer token (401), MCP-Protocol-Version (400), one
 *   Mcp-Session-Id at most (400), Accept (406), Content-Type (415), body
 *   size (413), session (400/404), session limits (429). A tenant only ever
 *   finds its own sessions.
 */
#include "mcp/http-private.h"

#include <sodium.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/metrics.h"
#include "mcp/http-headers.h"
#include "mcp/mcp-private.h"

#define SESSION_NOT_FOUND \
	"session not found: it ended or never existed; start a new one with initialize"

/* DELETE /mcp: ends the caller's session. */
static void delete_session(struct serve *s, struct http_req *req, const char *id)
{
	struct http_session *hs = id ? hs_find(&s->table, id, req->tenant) : NULL;

	if (!id)
		mcp_http_respond_rpc_error(req, 400, -32000,
		                           "DELETE needs the Mcp-Session-Id header");
	else if (!hs)
		mcp_http_respond_rpc_error(req, 404, -32001, SESSION_NOT_FOUND);
	else {
		hs_close(hs, "deleted");
		mcp_http_respond(req, 200, NULL, NULL, 0);
	}
	hs_unref(hs);
}

/* When id names another replica ("<replica>.<hex>"), answers 421 naming
 * the owner and returns 1: a session is served by the replica that owns
 * its browser, never by another. */
static int misdirected(struct serve *s, struct http_req *req, const char *id)
{
	const char *dot = strchr(id, '.');
	char text[400];
	size_t n;

	if (!s->cfg->replica_id[0] || !dot)
		return 0;
	n = (size_t)(dot - id);
	if (n == strlen(s->cfg->replica_id) && !strncmp(id, s->cfg->replica_id, n))
		return 0;
	gb_metrics_counter_add("glassbox_sessions_misdirected_total", NULL, 1);
	snprintf(text, sizeof(text),
	         "session %.*s... belongs to replica %.*s, not to this one (%s): send its requests "
	         "through the router, which routes by Mcp-Session-Id to the owner",
	         (int)(n < 64 ? n + 9 : 73), id, (int)(n < 64 ? n : 64), id, s->cfg->replica_id);
	mcp_http_respond_rpc_error(req, 421, -32001, text);
	return 1;
}

/* See http-private.h. */
void mcp_http_mcp_headers(struct serve *s, struct http_req *req, const char *method,
                          const char *path)
{
	char host[256], origin[256], auth[600], version[40], accept[256], ctype[128], clen[32];
	const char *v;

	req->route = (int)mcp_http_route(method, path);
	if (req->route == MCP_ROUTE_NOT_FOUND) {
		mcp_http_respond_rpc_error(req, 404, -32000, "not found: MCP is served on /mcp");
		goto out;
	}
	if (req->route == MCP_ROUTE_METHOD_NOT_ALLOWED || req->route == MCP_ROUTE_GET) {
		snprintf(req->resp.allow, sizeof(req->resp.allow), "POST, DELETE");
		mcp_http_respond_rpc_error(
		    req, 405, -32000,
		    "method not allowed: POST JSON-RPC messages to /mcp; glassbox sends "
		    "no server-initiated stream, so GET is not offered");
		goto out;
	}
	if (s->stopping || (atomic_load(s->stop) && s->cfg->drain_s == 0)) {
		mcp_http_respond_rpc_error(req, 503, -32000,
		                           "the service is shutting down: try again "
		                           "later or elsewhere");
		goto out;
	}
	if (!mcp_http_host_ok(mcp_http_header(req, "Host", host, sizeof(host)), s->loopback_only) ||
	    !mcp_http_origin_ok(mcp_http_header(req, "Origin", origin, sizeof(origin)),
	                        (const char(*)[128])s->cfg->origins, s->cfg->n_origins)) {
		mcp_http_respond_rpc_error(
		    req, 403, -32000,
		    "forbidden: this Host or Origin is not allowed (DNS rebinding "
		    "protection); add the origin to listen.allowed_origins");
		goto out;
	}
	req->tenant =
	    mcp_auth_tenant(s->cfg, mcp_http_header(req, "Authorization", auth, sizeof(auth)));
	sodium_memzero(auth, sizeof(auth));
	if (!req->tenant) {
		gb_metrics_counter_add("glassbox_auth_failures_total", NULL, 1);
		snprintf(req->resp.www_authenticate, sizeof(req->resp.www_authenticate),
		         "Bearer realm=\"glassbox\", error=\"invalid_token\"");
		mcp_http_respond_rpc_error(
		    req, 401, -32001,
		    "unauthorized: send your tenant's token as Authorization: Bearer <token>");
		goto out;
	}
	if (!mcp_http_protocol_version_ok(
	        mcp_http_header(req, "MCP-Protocol-Version", version, sizeof(version)))) {
		mcp_http_respond_rpc_error(req, 400, -32600,
		                           "unsupported MCP-Protocol-Version: glassbox speaks "
		                           "2025-11-25, 2025-06-18 and 2025-03-26");
		goto out;
	}
	if (mcp_http_header_count(req, "Mcp-Session-Id") > 1) {
		mcp_http_respond_rpc_error(req, 400, -32000,
		                           "the request carries Mcp-Session-Id more than once: "
		                           "send the one id of your session");
		goto out;
	}
	v = mcp_http_header(req, "Mcp-Session-Id", req->session_id, sizeof(req->session_id));
	if (v && misdirected(s, req, v))
		goto out;
	if (!v && (s->draining || atomic_load(s->stop))) {
		req->resp.retry_after_s = s->cfg->retry_after_s;
		mcp_http_respond_rpc_error(req, 503, -32000,
		                           "this replica is draining and takes no new sessions: "
		                           "start the session again (the router sends it to "
		                           "another replica)");
		goto out;
	}
	if (req->route == MCP_ROUTE_DELETE) {
		delete_session(s, req, v);
		goto out;
	}
	/* POST */
	if (!mcp_http_accept_ok(mcp_http_header(req, "Accept", accept, sizeof(accept)), 1)) {
		mcp_http_respond_rpc_error(req, 406, -32000,
		                           "not acceptable: Accept must list "
		                           "application/json and text/event-stream");
		goto out;
	}
	if (!mcp_http_content_type_ok(mcp_http_header(req, "Content-Type", ctype, sizeof(ctype)))) {
		mcp_http_respond_rpc_error(req, 415, -32000,
		                           "unsupported media type: POST one JSON-RPC "
		                           "message as Content-Type: application/json");
		goto out;
	}
	if (mcp_http_header(req, "Content-Length", clen, sizeof(clen)) &&
	    strtoull(clen, NULL, 10) > s->cfg->max_body_bytes) {
		req->resp.close_after = 1;
		mcp_http_respond_rpc_error(req, 413, -32600,
		                           "the message is larger than this service "
		                           "accepts (limits.max_body_bytes); send a smaller one");
		goto out;
	}
	if (v) {
		req->hs = hs_find(&s->table, v, req->tenant);
		if (!req->hs) {
			mcp_http_respond_rpc_error(req, 404, -32001, SESSION_NOT_FOUND);
			goto out;
		}
	}
	gb_buf_init(&req->body, s->cfg->max_body_bytes);
	req->body_on = 1;
out:
	return;
}

/* The 429 of a refused initialize: which limit, what holds it, how to
 * free it. */
static void refuse_capacity(struct serve *s, struct http_req *req, enum hs_refusal why,
                            const struct hs_capacity *cap)
{
	char text[600], expiry[96] = "", whose[160];

	gb_metrics_counter_add("glassbox_sessions_refused_total",
	                       why == HS_LIMIT_TOTAL ? "limit_total" : "limit_tenant", 1);
	req->resp.retry_after_s = s->cfg->retry_after_s;
	if (cap->next_expiry_s >= 0)
		snprintf(expiry, sizeof(expiry), "; the first idle one expires in %lld s",
		         (long long)cap->next_expiry_s);
	if (why == HS_LIMIT_TOTAL)
		snprintf(whose, sizeof(whose), "the service is at its limit (limits.max_sessions)");
	else
		snprintf(whose, sizeof(whose), "your tenant (%s) is at its limit (max_sessions %d)",
		         req->tenant->name, req->tenant->max_sessions);
	snprintf(text, sizeof(text),
	         "too many sessions: %s (%zu open, %zu of them idle, %zu still closing%s); "
	         "end the ones you no longer use with DELETE /mcp and their Mcp-Session-Id, "
	         "or retry after %d s",
	         whose, cap->open - cap->closing, cap->idle, cap->closing, expiry,
	         s->cfg->retry_after_s);
	mcp_http_respond_rpc_error(req, 429, -32000, text);
}

/* A request without a session: only initialize opens one. */
static void post_new_session(struct serve *s, struct http_req *req, struct mcp_msg *msg)
{
	struct hs_capacity cap;
	enum hs_refusal why;

	if (msg->kind != MCP_MSG_REQUEST || strcmp(msg->method, "initialize") != 0) {
		mcp_http_respond_rpc_error(
		    req, 400, -32000,
		    "the Mcp-Session-Id header is required: "
		    "start a session with initialize and send its id with every request");
		return;
	}
	why = hs_admission(&s->table, req->tenant, &cap);
	if (why != HS_OK) {
		refuse_capacity(s, req, why, &cap);
		return;
	}
	req->hs = hs_create(&s->table, req->tenant);
	if (req->hs)
		req->st = hs_stream_open(req->hs, msg->id, req);
	if (!req->st) {
		mcp_http_respond_rpc_error(req, 500, -32603,
		                           "the session could not be created (out of "
		                           "memory?); try again later");
		return;
	}
	req->st->is_initialize = 1;
	mcp_server_handle_line(req->hs->srv, req->body.data, req->body.len);
}

/* A message for an existing session. */
static void post_in_session(struct http_req *req, struct mcp_msg *msg)
{
	struct http_session *hs = req->hs;
	int budget = hs->tenant->tool_calls_per_session;
	char text[200];
	json_t *err;

	if (hs->state != HS_OPEN) {
		mcp_http_respond_rpc_error(req, 404, -32001,
		                           "session not found: it ended; start a new "
		                           "one with initialize");
		return;
	}
	hs->last_active_ms = gb_now_ms();
	if (msg->kind != MCP_MSG_REQUEST) {
		mcp_server_handle_line(hs->srv, req->body.data, req->body.len);
		if (msg->kind == MCP_MSG_NOTIFICATION &&
		    !strcmp(msg->method, "notifications/cancelled"))
			hs_stream_cancel(hs, json_object_get(msg->params, "requestId"));
		gb_metrics_counter_add("glassbox_http_requests_total", "202", 1);
		mcp_http_respond(req, 202, NULL, NULL, 0);
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
			mcp_http_respond_json(req, 200, err);
			return;
		}
		hs->calls++;
		hs->last_call_ms = hs->last_active_ms;
	}
	req->st = hs_stream_open(hs, msg->id, req);
	if (!req->st) {
		mcp_http_respond_json(
		    req, 200,
		    mcp_jsonrpc_error(msg->id, -32600,
		                      "this request id is already used by a request "
		                      "in progress: give each request a new id",
		                      NULL));
		return;
	}
	mcp_server_handle_line(hs->srv, req->body.data, req->body.len);
}

/* See http-private.h. */
void mcp_http_mcp_body(struct serve *s, struct http_req *req)
{
	struct mcp_msg msg;

	if (req->too_large) {
		req->resp.close_after = 1;
		mcp_http_respond_rpc_error(req, 413, -32600,
		                           "the message is larger than this service "
		                           "accepts (limits.max_body_bytes); send a smaller one");
		return;
	}
	switch (mcp_jsonrpc_parse(req->body.data, req->body.len, &msg)) {
	case MCP_MSG_EMPTY:
	case MCP_MSG_INVALID:
		mcp_http_respond_rpc_error(
		    req, 400, msg.kind == MCP_MSG_EMPTY ? MCP_ERR_INVALID_REQUEST : msg.error_code,
		    msg.kind == MCP_MSG_EMPTY ? "the body is empty: POST one JSON-RPC message"
		                              : msg.error);
		break;
	default:
		if (req->hs)
			post_in_session(req, &msg);
		else
			post_new_session(s, req, &msg);
	}
	mcp_msg_clear(&msg);
}

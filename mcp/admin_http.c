/*
 * admin_http.c - the admin listener of `glassbox serve`: /healthz,
 * /readyz (no token: they say nothing about tenants), and with the admin
 * bearer token GET /sessions, DELETE /sessions/<id>, GET /approvals and
 * GET /metrics (Prometheus text 0.0.4); /console... is the web console
 * (console_http.c), with its own login. Front thread.
 */
#include "mcp/http-private.h"

#include <sodium.h>
#include <string.h>

#include "common/metrics.h"

#define SESSIONS_PREFIX "/sessions/"
/* Ceiling on the /metrics page. */
#define METRICS_MAX_BYTES (4u << 20)

/* See http-private.h. */
void mcp_admin_update_gauges(struct serve *s)
{
	size_t busy, idle, closing;

	hs_table_counts(&s->table, &busy, &idle, &closing);
	gb_metrics_gauge_set("glassbox_sessions", "busy", (double)busy);
	gb_metrics_gauge_set("glassbox_sessions", "idle", (double)idle);
	gb_metrics_gauge_set("glassbox_sessions", "closing", (double)closing);
	gb_metrics_gauge_set("glassbox_cdp_sessions", NULL, (double)mcp_http_cdp_count(s));
}

/* A small JSON {"error": message}. */
static void respond_error(struct http_req *req, int status, const char *message)
{
	mcp_http_respond_json(req, status, json_pack("{s:s}", "error", message));
}

/* GET /approvals: the pending ones (also sets the gauge). */
static void get_approvals(struct serve *s, struct http_req *req)
{
	json_t *list = s->hooks && s->hooks->list_approvals
	                   ? s->hooks->list_approvals(s->hooks->user)
	                   : json_array();

	if (!list) {
		respond_error(req, 500, "the approvals could not be read: see the service log");
		return;
	}
	gb_metrics_gauge_set("glassbox_approvals_pending", NULL, (double)json_array_size(list));
	mcp_http_respond_json(req, 200, json_pack("{s:o}", "approvals", list));
}

/* GET /metrics. */
static void get_metrics(struct serve *s, struct http_req *req)
{
	json_t *pending =
	    s->hooks && s->hooks->list_approvals ? s->hooks->list_approvals(s->hooks->user) : NULL;
	struct gb_buf out;

	if (pending)
		gb_metrics_gauge_set("glassbox_approvals_pending", NULL,
		                     (double)json_array_size(pending));
	json_decref(pending);
	if (s->hooks && s->hooks->status)
		json_decref(s->hooks->status(s->hooks->user));
	mcp_admin_update_gauges(s);
	gb_buf_init(&out, METRICS_MAX_BYTES);
	if (gb_metrics_render(&out) < 0)
		respond_error(req, 500, "the metrics page grew past its ceiling");
	else
		mcp_http_respond(req, 200, "text/plain; version=0.0.4; charset=utf-8", out.data,
		                 out.len);
	gb_buf_free(&out);
}

/* See http-private.h. */
void mcp_admin_body(struct serve *s, struct http_req *req)
{
	mcp_console_body(s, req);
}

/* See http-private.h. */
void mcp_admin_handle(struct serve *s, struct http_req *req, const char *method, const char *path)
{
	char auth[600];
	struct http_session *hs;

	if (!strcmp(path, "/healthz")) {
		json_t *status =
		    s->hooks && s->hooks->status ? s->hooks->status(s->hooks->user) : NULL;

		if (!status)
			status = json_object();
		json_object_set_new(status, "status", json_string("ok"));
		json_object_set_new(status, "cdp_sessions",
		                    json_integer((json_int_t)mcp_http_cdp_count(s)));
		mcp_http_respond_json(req, 200, status);
		goto out;
	}
	if (mcp_console_handle(s, req, method, path))
		goto out;
	if (!strcmp(path, "/readyz")) {
		if (s->stopping || (atomic_load(s->stop) && s->cfg->drain_s == 0))
			mcp_http_respond(req, 503, "text/plain", "stopping\n", 9);
		else if (s->draining || atomic_load(s->stop))
			mcp_http_respond(req, 503, "text/plain", "draining\n", 9);
		else
			mcp_http_respond(req, 200, "text/plain", "ready\n", 6);
		goto out;
	}
	if (!mcp_http_header(req, "Authorization", auth, sizeof(auth)) ||
	    !mcp_auth_bearer_matches(auth, s->cfg->admin_token_sha256)) {
		sodium_memzero(auth, sizeof(auth));
		gb_metrics_counter_add("glassbox_auth_failures_total", NULL, 1);
		snprintf(req->resp.www_authenticate, sizeof(req->resp.www_authenticate),
		         "Bearer realm=\"glassbox-admin\"");
		respond_error(req, 401, "send the admin token as Authorization: Bearer <token>");
		goto out;
	}
	sodium_memzero(auth, sizeof(auth));
	if (!strcmp(method, "GET") && !strcmp(path, "/sessions")) {
		mcp_http_respond_json(req, 200,
		                      json_pack("{s:o}", "sessions", hs_table_list(&s->table)));
	} else if (!strcmp(method, "DELETE") &&
	           !strncmp(path, SESSIONS_PREFIX, strlen(SESSIONS_PREFIX))) {
		hs = hs_find(&s->table, path + strlen(SESSIONS_PREFIX), NULL);
		if (!hs) {
			respond_error(req, 404, "no such session (it may have ended already)");
			goto out;
		}
		hs_close(hs, "killed");
		mcp_http_respond_json(req, 200, json_pack("{s:s}", "closed", hs->id));
		hs_unref(hs);
	} else if (!strcmp(method, "GET") && !strcmp(path, "/approvals")) {
		get_approvals(s, req);
	} else if (!strcmp(method, "GET") && !strcmp(path, "/metrics")) {
		get_metrics(s, req);
	} else {
		respond_error(req, 404,
		              "not found: /healthz, /readyz, GET /sessions, DELETE "
		              "/sessions/<id>, GET /approvals, GET /metrics");
	}
out:
	return;
}

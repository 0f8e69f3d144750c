/*
 * http.c - the front of `glassbox serve`: MCP Streamable HTTP (2025-11-25),
 * the CDP endpoint's routes (http_cdp.c) and the admin listener, two
 * libmicrohttpd daemons run by one thread.
 *
 * Design note
 * - Threads: everything here runs on the front (the thread in
 *   mcp_http_serve), which never waits on a browser. It polls both
 *   daemons' epoll fds and an eventfd; workers queue output through
 *   http_session.c and write the eventfd (mcp_http_wake_front), and the
 *   front then resumes the requests that have output. No libmicrohttpd call
 *   is made from any other thread.
 * - The HTTP/1.1 parsing, chunked bodies, pipelining, Expect, timeouts and
 *   connection limits (total and per peer) are libmicrohttpd's; a request
 *   line or headers past CONN_MEMORY_BYTES are refused by it (414/431).
 *   On top: a 429 past limits.max_connections_per_peer (http_peers.c; twice
 *   that is refused at accept), one Content-Length at most, never both Content-Length and
 *   Transfer-Encoding (400: the shapes of request smuggling), and a body
 *   ceiling (413).
 * - A POST carries one JSON-RPC message. Notifications and responses get
 *   202. A request's answer is application/json when its response is the
 *   only message, otherwise an SSE stream (progress, elicitation requests,
 *   then the response). While the answer is not there the request is
 *   suspended: it costs no CPU, and its connection does not time out.
 * - Every refusal is a status with a short body that says what to do; a
 *   refusal made before the body was read closes the connection after it.
 * - A housekeeping pass (every HOUSEKEEPING_MS) expires sessions, sets
 *   gauges and drives the graceful stop.
 */
#include "mcp/http-private.h"

#include <errno.h>
#include <microhttpd.h>
#include <netdb.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "common/log.h"
#include "common/metrics.h"
#include "mcp/mcp-private.h"

#define MOD "serve"
#define HOUSEKEEPING_MS 250
/* After the last session closed, time for the last answers to go out. */
#define LAST_WRITES_MS 300
/* A connection's memory for its request line and headers. */
#define CONN_MEMORY_BYTES ((size_t)64 << 10)
/* The events of an SSE answer taken at once (one screenshot is a few MB). */
#define SSE_MAX_BYTES ((size_t)256 << 20)
/* A refused request's body is read and dropped up to this much more than
 * the body ceiling; past it the connection is closed. */
#define DISCARD_SLACK_BYTES ((size_t)1 << 20)

/* ---- responses ---------------------------------------------------------- */

/* Frees a fixed response's body and forgets it. */
static void resp_clear(struct fixed_resp *r)
{
	free(r->body);
	memset(r, 0, sizeof(*r));
}

/* See http-private.h. */
void mcp_http_respond(struct http_req *req, int status, const char *ctype, const char *body,
                      size_t len)
{
	struct fixed_resp *r = &req->resp;

	free(r->body);
	r->body = NULL;
	r->status = status;
	snprintf(r->ctype, sizeof(r->ctype), "%s", ctype ? ctype : "");
	r->len = 0;
	if (body && len) {
		r->body = malloc(len);
		if (r->body) {
			memcpy(r->body, body, len);
			r->len = len;
		}
	}
}

/* See http-private.h. */
void mcp_http_respond_json(struct http_req *req, int status, json_t *value)
{
	char *text = value ? json_dumps(value, JSON_COMPACT) : NULL;

	mcp_http_respond(req, status, "application/json", text ? text : "{}",
	                 text ? strlen(text) : 2);
	free(text);
	json_decref(value);
}

/* The metrics label of an HTTP status glassbox answers with. */
static const char *status_label(int status)
{
	static const int known[] = { 400, 401, 403, 404, 405, 406, 413, 415, 429, 500, 503 };
	static const char *const labels[] = { "400", "401", "403", "404", "405", "406",
		                              "413", "415", "429", "500", "503" };
	size_t i;

	for (i = 0; i < sizeof(known) / sizeof(known[0]); i++) {
		if (known[i] == status)
			return labels[i];
	}
	return "other";
}

/* See http-private.h. */
void mcp_http_respond_rpc_error(struct http_req *req, int status, int code, const char *message)
{
	gb_metrics_counter_add("glassbox_http_requests_total", status_label(status), 1);
	mcp_http_respond_json(req, status, mcp_jsonrpc_error(NULL, code, message, NULL));
}

/* Adds name: value to resp unless value is empty. */
static void add_header(struct MHD_Response *resp, const char *name, const char *value)
{
	if (value && value[0])
		MHD_add_response_header(resp, name, value);
}

/* See http-private.h. */
void mcp_http_resp_header(struct fixed_resp *r, const char *name, const char *value)
{
	if (r->n_hdr >= FIXED_RESP_HEADERS_MAX)
		return;
	snprintf(r->hdr[r->n_hdr].name, sizeof(r->hdr[0].name), "%s", name);
	snprintf(r->hdr[r->n_hdr].value, sizeof(r->hdr[0].value), "%s", value);
	r->n_hdr++;
}

/* The headers a response may carry besides its type. */
static void add_extra_headers(struct MHD_Response *resp, const struct fixed_resp *extra)
{
	char retry[16];
	size_t i;

	add_header(resp, "Mcp-Session-Id", extra->session_id);
	if (extra->retry_after_s > 0) {
		snprintf(retry, sizeof(retry), "%d", extra->retry_after_s);
		add_header(resp, "Retry-After", retry);
	}
	add_header(resp, "WWW-Authenticate", extra->www_authenticate);
	add_header(resp, "Allow", extra->allow);
	if (extra->close_after)
		add_header(resp, "Connection", "close");
	for (i = 0; i < extra->n_hdr && i < FIXED_RESP_HEADERS_MAX; i++)
		add_header(resp, extra->hdr[i].name, extra->hdr[i].value);
}

/* Queues resp (destroyed here) with status on req's connection. */
static enum MHD_Result queue(struct http_req *req, int status, struct MHD_Response *resp)
{
	enum MHD_Result rc;

	if (!resp)
		return MHD_NO;
	rc = MHD_queue_response(req->conn, (unsigned int)status, resp);
	MHD_destroy_response(resp);
	return rc;
}

/* Queues req's fixed response. */
static enum MHD_Result queue_fixed(struct http_req *req)
{
	struct fixed_resp *r = &req->resp;
	struct MHD_Response *resp;
	int status = r->status;

	resp = MHD_create_response_from_buffer(r->len, r->body ? r->body : (void *)"",
	                                       MHD_RESPMEM_MUST_COPY);
	if (resp) {
		add_header(resp, "Content-Type", r->ctype);
		add_extra_headers(resp, r);
	}
	resp_clear(r);
	return queue(req, status, resp);
}

/* ---- requests waiting for their answer ---------------------------------- */

/* Takes req off the event loop until mcp_http_wake. */
static void req_suspend(struct http_req *req)
{
	if (!req->suspended) {
		req->suspended = 1;
		MHD_suspend_connection(req->conn);
	}
}

/* See http-private.h. */
void mcp_http_wake(struct http_req *req)
{
	if (req->suspended) {
		req->suspended = 0;
		MHD_resume_connection(req->conn);
	}
}

/* See http-private.h. */
void mcp_http_wake_front(struct hs_table *t)
{
	uint64_t one = 1;
	ssize_t n;

	do
		n = write(t->wake_fd, &one, sizeof(one));
	while (n < 0 && errno == EINTR);
	/* EAGAIN: the counter is full, so the front is awake already */
}

/* Appends msgs as SSE events to req's buffer. */
static void sse_append(struct http_req *req, const struct hs_msg *msgs)
{
	const struct hs_msg *m;

	for (m = msgs; m; m = m->next) {
		if (gb_buf_append(&req->sse, "event: message\ndata: ", 21) < 0 ||
		    gb_buf_append(&req->sse, m->text, m->len) < 0 ||
		    gb_buf_append(&req->sse, "\n\n", 2) < 0)
			GB_LOGW(MOD, "an SSE answer grew past its ceiling: the client gets it cut");
	}
}

/* MHD_ContentReaderCallback of an SSE answer: the events queued so far;
 * suspends the request while there are none and more are to come. */
static ssize_t sse_read(void *cls, uint64_t pos, char *buf, size_t max)
{
	struct http_req *req = cls;
	struct hs_msg *msgs;
	int done, error, empty;
	size_t n;

	(void)pos;
	if (req->sse_off >= req->sse.len && !req->sse_end) {
		gb_buf_free(&req->sse);
		req->sse_off = 0;
		msgs = req->st ? hs_stream_take(req->hs, req->st, &done, &error, &empty) : NULL;
		if (!req->st)
			done = 1;
		sse_append(req, msgs);
		hs_msgs_free(msgs);
		req->sse_end = done;
	}
	if (req->sse_off >= req->sse.len) {
		if (req->sse_end)
			return MHD_CONTENT_READER_END_OF_STREAM;
		if (req->s->tearing_down)
			return MHD_CONTENT_READER_END_WITH_ERROR;
		req_suspend(req);
		return 0;
	}
	n = req->sse.len - req->sse_off;
	if (n > max)
		n = max;
	memcpy(buf, req->sse.data + req->sse_off, n);
	req->sse_off += n;
	return (ssize_t)n;
}

/* Answers the request of req->st once something is queued: 202 when it
 * ended without a response, JSON when the response is the only message,
 * otherwise an SSE stream; suspends it while nothing is queued. */
static enum MHD_Result answer_stream(struct http_req *req)
{
	struct hs_stream *st = req->st;
	struct http_session *hs = req->hs;
	struct MHD_Response *resp = NULL;
	struct hs_msg *msgs;
	struct fixed_resp extra;
	int done, error, empty, status = 200;

	msgs = hs_stream_take(hs, st, &done, &error, &empty);
	memset(&extra, 0, sizeof(extra));
	if (st->is_initialize && !error)
		snprintf(extra.session_id, sizeof(extra.session_id), "%s", hs->id);
	if (st->is_initialize && done && error)
		hs_close(hs, "init_failed");
	if (!msgs && !done) {
		if (req->s->tearing_down) {
			mcp_http_respond_rpc_error(req, 503, -32000,
			                           "the service stopped before this request "
			                           "finished; its outcome is unknown");
			return queue_fixed(req);
		}
		req_suspend(req);
		return MHD_YES;
	}
	if (done && (!msgs || empty)) {
		/* ended without a response (cancelled by the client) */
		status = 202;
		resp = MHD_create_response_from_buffer(0, (void *)"", MHD_RESPMEM_PERSISTENT);
	} else if (done && !msgs->next) {
		resp =
		    MHD_create_response_from_buffer(msgs->len, msgs->text, MHD_RESPMEM_MUST_COPY);
		if (resp)
			add_header(resp, "Content-Type", "application/json");
	} else {
		st->headers_sent = 1;
		st->sse = 1;
		gb_buf_init(&req->sse, SSE_MAX_BYTES);
		sse_append(req, msgs);
		req->sse_end = done;
		resp = MHD_create_response_from_callback(MHD_SIZE_UNKNOWN, 16 << 10, sse_read, req,
		                                         NULL);
		if (resp) {
			add_header(resp, "Content-Type", "text/event-stream");
			add_header(resp, "Cache-Control", "no-cache");
		}
	}
	if (resp)
		add_extra_headers(resp, &extra);
	hs_msgs_free(msgs);
	return queue(req, status, resp);
}

/* ---- the request's life ------------------------------------------------- */

/* A new request of s on conn, linked in s->reqs; NULL when out of memory. */
static struct http_req *req_new(struct serve *s, struct MHD_Connection *conn, int admin)
{
	struct http_req *req = calloc(1, sizeof(*req));

	if (!req)
		return NULL;
	req->s = s;
	req->conn = conn;
	req->admin = admin;
	req->next = s->reqs;
	if (s->reqs)
		s->reqs->prev = req;
	s->reqs = req;
	return req;
}

/* Unlinks and frees req: its stream is released, its session dropped. */
static void req_free(struct http_req *req)
{
	struct serve *s = req->s;

	if (req->prev)
		req->prev->next = req->next;
	else
		s->reqs = req->next;
	if (req->next)
		req->next->prev = req->prev;
	if (req->st && req->hs)
		hs_stream_release(req->hs, req->st);
	mcp_http_cdp_drop(req);
	hs_unref(req->hs);
	if (req->body_on)
		gb_buf_free(&req->body);
	gb_buf_free(&req->sse);
	resp_clear(&req->resp);
	free(req);
}

/* What count_header counts. */
struct header_count {
	const char *name;
	int n;
};

/* MHD_KeyValueIterator: counts the headers named cls->name. */
static enum MHD_Result count_header(void *cls, enum MHD_ValueKind kind, const char *key,
                                    const char *value)
{
	struct header_count *c = cls;

	(void)kind;
	(void)value;
	if (key && !strcasecmp(key, c->name))
		c->n++;
	return MHD_YES;
}

/* See http-private.h. */
int mcp_http_header_count(struct http_req *req, const char *name)
{
	struct header_count c = { name, 0 };

	MHD_get_connection_values(req->conn, MHD_HEADER_KIND, count_header, &c);
	return c.n;
}

/* See http-private.h. */
const char *mcp_http_header(struct http_req *req, const char *name, char *buf, size_t len)
{
	const char *v = MHD_lookup_connection_value(req->conn, MHD_HEADER_KIND, name);

	if (!v || strlen(v) >= len)
		return NULL;
	memcpy(buf, v, strlen(v) + 1);
	return buf;
}

/* The framing checks of every request: one Content-Length at most, never
 * both it and Transfer-Encoding, and no transfer coding but chunked.
 * Sets a 400 (the connection closes) and returns 1 when refused. */
static int framing_refused(struct http_req *req)
{
	const char *te = MHD_lookup_connection_value(req->conn, MHD_HEADER_KIND,
	                                             MHD_HTTP_HEADER_TRANSFER_ENCODING);
	int n_cl = mcp_http_header_count(req, MHD_HTTP_HEADER_CONTENT_LENGTH);
	const char *why = NULL;

	if (n_cl > 1)
		why = "the request carries Content-Length more than once: send exactly one";
	else if (te && n_cl)
		why = "the request carries both Content-Length and Transfer-Encoding: send one "
		      "of them";
	else if (te && strcasecmp(te, "chunked") != 0)
		why = "the only Transfer-Encoding accepted is chunked";
	if (!why)
		return 0;
	req->resp.close_after = 1;
	if (req->admin)
		mcp_http_respond_json(req, 400, json_pack("{s:s}", "error", why));
	else
		mcp_http_respond_rpc_error(req, 400, -32600, why);
	return 1;
}

/* More connections from req's address than limits.max_connections_per_peer:
 * sets a 429 (the connection closes) and returns 1. */
static int peer_refused(struct http_req *req)
{
	char peer[64], why[240];

	if (!mcp_http_peer_over_limit(req, peer, sizeof(peer)))
		return 0;
	snprintf(why, sizeof(why),
	         "too many connections from %s at once (limits.max_connections_per_peer %d): "
	         "reuse an open connection or close some",
	         peer, req->s->cfg->max_connections_per_peer);
	gb_metrics_counter_add("glassbox_http_connections_refused_total", NULL, 1);
	req->resp.close_after = 1;
	req->resp.retry_after_s = req->s->cfg->retry_after_s;
	if (req->admin)
		mcp_http_respond_json(req, 429, json_pack("{s:s}", "error", why));
	else
		mcp_http_respond_rpc_error(req, 429, -32000, why);
	return 1;
}

/* The request's body bytes: kept for a POST to /mcp, else read and
 * dropped up to a ceiling. Returns MHD_NO to close the connection. */
static enum MHD_Result take_body(struct http_req *req, const char *data, size_t len)
{
	size_t ceiling = req->s->cfg->max_body_bytes + DISCARD_SLACK_BYTES;

	if (req->body_on && !req->resp.status && !req->too_large &&
	    gb_buf_append(&req->body, data, len) == 0)
		return MHD_YES;
	if (req->body_on && !req->too_large) {
		req->too_large = 1;
		req->discarded = req->body.len;
	}
	req->discarded += len;
	return req->discarded > ceiling ? MHD_NO : MHD_YES;
}

/* MHD_AccessHandlerCallback of both listeners: called once the headers
 * are in, then with each piece of the body, then once more (and again
 * each time a suspended request is resumed). */
static enum MHD_Result on_request(struct serve *s, int admin, struct MHD_Connection *conn,
                                  const char *url, const char *method, const char *upload_data,
                                  size_t *upload_data_size, void **req_cls)
{
	struct http_req *req = *req_cls;

	if (!req) {
		req = req_new(s, conn, admin);
		if (!req)
			return MHD_NO;
		*req_cls = req;
		if (!framing_refused(req) && !peer_refused(req)) {
			if (admin)
				mcp_admin_handle(s, req, method, url ? url : "");
			else if (url && mcp_http_cdp_route(url))
				mcp_http_cdp_headers(s, req, method, url);
			else
				mcp_http_mcp_headers(s, req, method, url ? url : "");
		}
		/* refused before the body: answer now, the connection closes after */
		if (req->resp.status && req->resp.close_after)
			return queue_fixed(req);
		return MHD_YES;
	}
	if (*upload_data_size) {
		enum MHD_Result rc = take_body(req, upload_data, *upload_data_size);

		*upload_data_size = 0;
		return rc;
	}
	if (!req->dispatched) {
		req->dispatched = 1;
		if (!req->resp.status && req->body_on && admin)
			mcp_admin_body(s, req);
		else if (!req->resp.status && req->body_on)
			mcp_http_mcp_body(s, req);
	}
	if (req->resp.status)
		return queue_fixed(req);
	if (req->cdp_link) {
		if (req->upgrade_queued)
			return MHD_YES;
		req->upgrade_queued = 1;
		return mcp_http_cdp_queue_upgrade(req);
	}
	if (req->st)
		return answer_stream(req);
	mcp_http_respond_rpc_error(req, 500, -32603, "the request got no answer: try again");
	return queue_fixed(req);
}

/* on_request of the /mcp listener. */
static enum MHD_Result on_mcp_request(void *cls, struct MHD_Connection *conn, const char *url,
                                      const char *method, const char *version,
                                      const char *upload_data, size_t *upload_data_size,
                                      void **req_cls)
{
	(void)version;
	return on_request(cls, 0, conn, url, method, upload_data, upload_data_size, req_cls);
}

/* on_request of the admin listener. */
static enum MHD_Result on_admin_request(void *cls, struct MHD_Connection *conn, const char *url,
                                        const char *method, const char *version,
                                        const char *upload_data, size_t *upload_data_size,
                                        void **req_cls)
{
	(void)version;
	return on_request(cls, 1, conn, url, method, upload_data, upload_data_size, req_cls);
}

/* MHD_RequestCompletedCallback: the request is answered, or its
 * connection went away. */
static void on_completed(void *cls, struct MHD_Connection *conn, void **req_cls,
                         enum MHD_RequestTerminationCode toe)
{
	(void)cls;
	(void)conn;
	if (toe != MHD_REQUEST_TERMINATED_COMPLETED_OK)
		GB_LOGD(MOD, "a request ended before its answer was written (%d)", (int)toe);
	if (*req_cls)
		req_free(*req_cls);
	*req_cls = NULL;
}

/* libmicrohttpd's own messages (malformed requests, limits): debug. */
__attribute__((format(printf, 2, 0))) static void mhd_log(void *cls, const char *fmt, va_list ap)
{
	char line[512];
	size_t n;

	(void)cls;
	vsnprintf(line, sizeof(line), fmt, ap);
	n = strlen(line);
	if (n && line[n - 1] == '\n')
		line[n - 1] = '\0';
	GB_LOGD(MOD, "http: %s", line);
}

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
static void housekeeping(struct serve *s)
{
	int64_t now = gb_now_ms();
	size_t busy, idle, closing;

	mcp_http_cdp_reap(s);
	if (atomic_load(s->stop) && !s->stopping && !s->draining && s->cfg->drain_s > 0) {
		s->draining = 1;
		s->drain_deadline_ms = now + (int64_t)s->cfg->drain_s * 1000;
		GB_LOGI(MOD,
		        "draining: /readyz says 503, new sessions are refused; the open ones are "
		        "served for up to %d s",
		        s->cfg->drain_s);
	}
	if (s->draining && (!s->table.head || now >= s->drain_deadline_ms)) {
		if (s->table.head)
			GB_LOGW(MOD, "drain period over: stopping the sessions still open");
		s->draining = 0;
	}
	if (atomic_load(s->stop) && !s->stopping && !s->draining) {
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
		hs_expire(&s->table, now); /* while draining too */
	}
	mcp_admin_update_gauges(s);
}

/* Waits up to timeout_ms for either listener or the wake fd, then runs
 * both listeners. */
static void wait_and_run(struct serve *s, int64_t timeout_ms)
{
	struct MHD_Daemon *daemons[2] = { s->mcp, s->admin };
	const union MHD_DaemonInfo *info;
	struct pollfd fds[3];
	MHD_UNSIGNED_LONG_LONG t;
	nfds_t n = 0, i;
	uint64_t count;

	for (i = 0; i < 2; i++) {
		if (!daemons[i])
			continue;
		info = MHD_get_daemon_info(daemons[i], MHD_DAEMON_INFO_EPOLL_FD);
		fds[n].fd = info ? info->epoll_fd : -1;
		fds[n].events = POLLIN;
		fds[n++].revents = 0;
		if (MHD_get_timeout(daemons[i], &t) == MHD_YES && (int64_t)t < timeout_ms)
			timeout_ms = (int64_t)t;
	}
	fds[n].fd = s->table.wake_fd;
	fds[n].events = POLLIN;
	fds[n].revents = 0;
	if (poll(fds, n + 1, (int)(timeout_ms < 0 ? 0 : timeout_ms)) > 0 &&
	    (fds[n].revents & POLLIN)) {
		if (read(s->table.wake_fd, &count, sizeof(count)) < 0 && errno != EAGAIN)
			GB_LOGW(MOD, "the wake-up fd could not be read: %s", strerror(errno));
		hs_table_flush(&s->table);
		mcp_http_cdp_reap(s);
	}
	for (i = 0; i < 2; i++) {
		if (daemons[i])
			MHD_run(daemons[i]);
	}
}

/* A listener on host:port answering with handler; NULL when it cannot
 * bind (logged). *bound: the port it got. */
static struct MHD_Daemon *listen_on(struct serve *s, const char *host, int port,
                                    MHD_AccessHandlerCallback handler, int *bound)
{
	const struct mcp_serve_config *cfg = s->cfg;
	struct addrinfo hints, *ai = NULL;
	const union MHD_DaemonInfo *info;
	struct MHD_Daemon *d = NULL;
	unsigned int flags;
	char service[16];
	int err;

	memset(&hints, 0, sizeof(hints));
	hints.ai_family = strchr(host, ':') ? AF_INET6 : AF_INET;
	hints.ai_socktype = SOCK_STREAM;
	hints.ai_flags = AI_PASSIVE | AI_NUMERICSERV;
	snprintf(service, sizeof(service), "%d", port);
	err = getaddrinfo(host, service, &hints, &ai);
	if (err != 0 || !ai) {
		GB_LOGE(MOD, "cannot listen on %s: %s", host, gai_strerror(err));
		goto out;
	}
	flags = MHD_USE_EPOLL | MHD_ALLOW_SUSPEND_RESUME | MHD_USE_ERROR_LOG | MHD_ALLOW_UPGRADE;
	if (ai->ai_family == AF_INET6)
		flags |= MHD_USE_IPv6;
	d = MHD_start_daemon(
	    flags, (uint16_t)port, NULL, NULL, handler, s, MHD_OPTION_SOCK_ADDR, ai->ai_addr,
	    MHD_OPTION_LISTENING_ADDRESS_REUSE, (unsigned int)1, MHD_OPTION_CONNECTION_TIMEOUT,
	    (unsigned int)cfg->http_timeout_s, MHD_OPTION_CONNECTION_LIMIT,
	    (unsigned int)cfg->max_connections, MHD_OPTION_PER_IP_CONNECTION_LIMIT,
	    (unsigned int)cfg->max_connections_per_peer * 2, MHD_OPTION_CONNECTION_MEMORY_LIMIT,
	    CONN_MEMORY_BYTES, MHD_OPTION_NOTIFY_COMPLETED, on_completed, s,
	    MHD_OPTION_NOTIFY_CONNECTION, mcp_http_peer_notify, s, MHD_OPTION_EXTERNAL_LOGGER,
	    mhd_log, NULL, MHD_OPTION_END);
	if (!d)
		goto out;
	info = MHD_get_daemon_info(d, MHD_DAEMON_INFO_BIND_PORT);
	*bound = info ? (int)info->port : port;
out:
	if (ai)
		freeaddrinfo(ai);
	return d;
}

/* See http-private.h. */
int mcp_http_is_loopback(const char *host)
{
	return !strcmp(host, "127.0.0.1") || !strcmp(host, "localhost") || !strcmp(host, "::1") ||
	       !strncmp(host, "127.", 4);
}

/* After the loop: every request still waiting is resumed and ended, then
 * the listeners stop. */
static void stop_listeners(struct serve *s)
{
	struct http_req *req;
	int round;

	s->tearing_down = 1;
	for (round = 0; round < 3 && s->reqs; round++) {
		for (req = s->reqs; req; req = req->next)
			mcp_http_wake(req);
		if (s->mcp)
			MHD_run(s->mcp);
		if (s->admin)
			MHD_run(s->admin);
	}
	if (s->admin)
		MHD_stop_daemon(s->admin);
	if (s->mcp)
		MHD_stop_daemon(s->mcp);
	s->admin = s->mcp = NULL;
}

/* See serve.h. */
int mcp_http_serve(const struct mcp_serve_config *cfg, const struct act_config *base,
                   const struct mcp_serve_hooks *hooks, const atomic_int *stop)
{
	struct serve s;
	int64_t next_housekeeping;
	int rc = -1, port = 0, admin_port = 0;

	memset(&s, 0, sizeof(s));
	s.cfg = cfg;
	s.hooks = hooks;
	s.stop = stop;
	s.loopback_only = mcp_http_is_loopback(cfg->host);
	hs_table_init(&s.table, cfg, base);
	s.table.wake_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	if (s.table.wake_fd < 0) {
		GB_LOGE(MOD, "could not create the HTTP service: eventfd: %s", strerror(errno));
		goto out;
	}
	s.mcp = listen_on(&s, cfg->host, cfg->port, on_mcp_request, &port);
	s.bound_port = port;
	snprintf(s.table.cdp_base, sizeof(s.table.cdp_base), "ws://%s%s%s:%d",
	         strchr(cfg->host, ':') ? "[" : "", cfg->host, strchr(cfg->host, ':') ? "]" : "",
	         port);
	if (!s.mcp) {
		GB_LOGE(MOD, "cannot listen on %s:%d: is the port in use? set listen.port",
		        cfg->host, cfg->port);
		goto out;
	}
	if (cfg->admin_enabled) {
		s.admin =
		    listen_on(&s, cfg->admin_host, cfg->admin_port, on_admin_request, &admin_port);
		if (!s.admin) {
			GB_LOGE(MOD, "cannot listen on %s:%d for the admin: set admin.port",
			        cfg->admin_host, cfg->admin_port);
			goto out;
		}
	}
	if (s.admin)
		s.console = mcp_console_start(&s);
	/* the lines tests and operators look for */
	fprintf(stderr, "glassbox serve: MCP on http://%s:%d/mcp\n", cfg->host, port);
	if (s.admin)
		fprintf(stderr, "glassbox serve: admin on http://%s:%d/\n", cfg->admin_host,
		        admin_port);
	fflush(stderr);
	next_housekeeping = gb_now_ms() + HOUSEKEEPING_MS;
	while (!s.finished) {
		wait_and_run(&s, next_housekeeping - gb_now_ms());
		if (gb_now_ms() >= next_housekeeping) {
			housekeeping(&s);
			next_housekeeping = gb_now_ms() + HOUSEKEEPING_MS;
		}
	}
	rc = 0;
	GB_LOGI(MOD, "every session is closed: exiting");
out:
	hs_table_shutdown(&s.table);
	mcp_http_cdp_reap(&s); /* every relay ended with its session */
	stop_listeners(&s);
	mcp_console_stop(s.console);
	if (s.table.wake_fd >= 0)
		close(s.table.wake_fd);
	return rc;
}

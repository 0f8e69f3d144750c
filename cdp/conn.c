/*
 * conn.c - the websocket under a cdp_conn: lws context, connect, the lws
 * callback, the ordered write queue, close.
 */
#include "cdp/cdp-private.h"

#include "common/log.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int cdp_lws_callback(struct lws *wsi, enum lws_callback_reasons reason, void *user, void *in,
                            size_t len);

static const struct lws_protocols cdp_protocols[] = {
	{
	    .name = "cdp",
	    .callback = cdp_lws_callback,
	    .per_session_data_size = 0,
	    .rx_buffer_size = CDP_RX_CHUNK_BYTES,
	    .tx_packet_size = CDP_TX_CHUNK_BYTES,
	},
	{ .name = NULL, .callback = NULL },
};

/* No websocket PING/PONG liveness: on loopback a dead browser closes the
 * socket, and a hung one is caught by the deadline of the call waiting on
 * it. (lws 4.1's default pings after 300 s idle and hangs up 10 s later,
 * and an idle worker does not service its context in between.) */
static const lws_retry_bo_t cdp_no_validity = {
	.secs_since_valid_ping = 0,
	.secs_since_valid_hangup = 0,
};

/* Frees every queued outgoing message. */
static void cdp_out_free_all(struct cdp_conn *c)
{
	struct cdp_out *o;

	while (c->out_head) {
		o = c->out_head;
		c->out_head = o->next;
		free(o->buf);
		free(o);
	}
	c->out_tail = NULL;
	c->nout = 0;
}

/* Marks c closed (idempotent): forgets the socket, drops unsent messages
 * and any half-received one, and fails every call still waiting for a
 * reply with -CDP_ECLOSED. why (borrowed) is kept for error messages. */
void cdp_conn_closed(struct cdp_conn *c, const char *why)
{
	char reason[sizeof(c->close_reason) + 32];

	if (c->state == CDP_STATE_CLOSED)
		goto out;
	if (c->state == CDP_STATE_OPEN && !c->closing)
		GB_LOGI("cdp", "connection to %s closed: %s", c->endpoint, why);
	c->state = CDP_STATE_CLOSED;
	c->wsi = NULL;
	snprintf(c->close_reason, sizeof(c->close_reason), "%s", why);
	cdp_out_free_all(c);
	cdp_message_reset(c);
	snprintf(reason, sizeof(reason), "connection closed: %s", c->close_reason);
	cdp_calls_fail_all(c, -CDP_ECLOSED, reason);
out:
	return;
}

/* Queues one outgoing message: takes buf (LWS_PRE headroom + len bytes,
 * malloc'd) in every case, and asks lws to call back when writable. */
int cdp_out_push(struct cdp_conn *c, char *buf, size_t len, uint64_t id)
{
	struct cdp_out *o = NULL;
	int rc = 0;

	if (c->state != CDP_STATE_OPEN) {
		rc = -CDP_ECLOSED;
		goto out;
	}
	if (c->nout >= CDP_MAX_CALLS) {
		GB_LOGE("cdp", "%zu messages wait to be written to %s: the browser is not reading",
		        c->nout, c->endpoint);
		rc = -CDP_ENOMEM;
		goto out;
	}
	o = calloc(1, sizeof(*o));
	if (!o) {
		rc = -CDP_ENOMEM;
		goto out;
	}
	cdp_trace(c, '>', buf + LWS_PRE, len);
	o->id = id;
	o->len = len;
	o->buf = buf;
	buf = NULL;
	if (c->out_tail)
		c->out_tail->next = o;
	else
		c->out_head = o;
	c->out_tail = o;
	c->nout++;
	if (c->wsi)
		lws_callback_on_writable(c->wsi);
out:
	free(buf);
	return rc;
}

/* Writes the oldest queued message (one lws_write per WRITEABLE, so that
 * lws can buffer a partial send) and asks for another callback if more
 * are queued. Returns -1 to make lws close the connection on failure. */
static int cdp_out_write(struct cdp_conn *c, struct lws *wsi)
{
	struct cdp_out *o = c->out_head;
	int n;
	int rc = 0;

	if (!o)
		goto out;
	c->out_head = o->next;
	if (!c->out_head)
		c->out_tail = NULL;
	c->nout--;
	n = lws_write(wsi, (unsigned char *)o->buf + LWS_PRE, o->len, LWS_WRITE_TEXT);
	if (n < 0 || (size_t)n < o->len) {
		GB_LOGW("cdp", "write of call %llu to %s failed: closing",
		        (unsigned long long)o->id, c->endpoint);
		rc = -1;
	}
	c->progress++;
	free(o->buf);
	free(o);
	if (rc == 0 && c->out_head)
		lws_callback_on_writable(wsi);
out:
	return rc;
}

/* The one lws callback. Runs on the owning thread inside lws_service();
 * c is the context's user pointer. */
static int cdp_lws_callback(struct lws *wsi, enum lws_callback_reasons reason, void *user, void *in,
                            size_t len)
{
	struct cdp_conn *c = lws_context_user(lws_get_context(wsi));
	char why[128];
	int final;
	int rc = 0;

	(void)user;
	if (!c)
		goto out;
	switch (reason) {
	case LWS_CALLBACK_CLIENT_ESTABLISHED:
		if (wsi == c->wsi && c->state == CDP_STATE_CONNECTING)
			c->state = CDP_STATE_OPEN;
		break;
	case LWS_CALLBACK_CLIENT_CONNECTION_ERROR:
		if (in && len)
			snprintf(why, sizeof(why), "%.*s", len > 100 ? 100 : (int)len,
			         (const char *)in);
		else if (in)
			snprintf(why, sizeof(why), "%.100s", (const char *)in);
		else
			snprintf(why, sizeof(why), "connection failed");
		cdp_conn_closed(c, why);
		break;
	case LWS_CALLBACK_CLIENT_RECEIVE:
		if (wsi != c->wsi || c->state != CDP_STATE_OPEN)
			break;
		c->progress++;
		final = lws_is_final_fragment(wsi) && !lws_remaining_packet_payload(wsi);
		cdp_message_rx(c, in, len, final);
		break;
	case LWS_CALLBACK_CLIENT_WRITEABLE:
		if (wsi == c->wsi && c->state == CDP_STATE_OPEN)
			rc = cdp_out_write(c, wsi);
		break;
	case LWS_CALLBACK_WS_PEER_INITIATED_CLOSE:
		GB_LOGD("cdp", "%s sent a websocket close", c->endpoint);
		break;
	case LWS_CALLBACK_CLIENT_CLOSED:
	case LWS_CALLBACK_CLOSED:
		if (wsi == c->wsi)
			cdp_conn_closed(c, "the browser closed the connection");
		break;
	case LWS_CALLBACK_WSI_DESTROY:
		if (wsi == c->wsi)
			cdp_conn_closed(c, "the connection went away");
		break;
	default:
		break;
	}
out:
	return rc;
}

/* Resolves defaults and ceilings of the caller's options (may be NULL). */
static void cdp_options_resolve(struct cdp_options *dst, const struct cdp_options *src)
{
	memset(dst, 0, sizeof(*dst));
	if (src)
		*dst = *src;
	if (!dst->max_frame_bytes)
		dst->max_frame_bytes = CDP_DEFAULT_MAX_FRAME_BYTES;
	if (dst->max_frame_bytes > CDP_LIMIT_MAX_FRAME_BYTES)
		dst->max_frame_bytes = CDP_LIMIT_MAX_FRAME_BYTES;
	if (dst->connect_timeout_ms <= 0)
		dst->connect_timeout_ms = CDP_DEFAULT_CONNECT_TIMEOUT_MS;
}

/*
 * UNITTEST constructor: a conn in state OPEN with no socket and no lws
 * context. cdp_send() queues (nothing is ever written), the message
 * handler routes, waits time out at once. cdp_connect() builds on it;
 * unit tests and the fuzzer use it alone. opts may be NULL. On success
 * *out owns the conn (cdp_close() frees it).
 */
UNITTEST int cdp_conn_new(const struct cdp_options *opts, struct cdp_conn **out)
{
	struct cdp_conn *c;
	int rc = 0;

	*out = NULL;
	c = calloc(1, sizeof(*c));
	if (!c) {
		rc = -CDP_ENOMEM;
		goto out;
	}
	cdp_options_resolve(&c->opts, opts);
	c->state = CDP_STATE_OPEN;
	c->next_id = 1;
	snprintf(c->endpoint, sizeof(c->endpoint), "(no socket)");
	gb_buf_init(&c->rx, c->opts.max_frame_bytes);
	*out = c;
out:
	return rc;
}

static int cdp_connect_stop(struct cdp_conn *c, void *arg)
{
	(void)arg;
	return c->state != CDP_STATE_CONNECTING;
}

/* Splits ws://host:port/path into its parts (host and path copied into
 * the caller's buffers; path gets its leading '/'). Returns 0 or
 * -CDP_EINVAL with the reason in err. */
static int cdp_parse_ws_url(const char *ws_url, char *host, size_t host_len, int *port, char *path,
                            size_t path_len, struct cdp_error *err)
{
	char copy[512];
	const char *scheme = NULL;
	const char *h = NULL;
	const char *p = NULL;
	int rc = 0;

	if (strlen(ws_url) >= sizeof(copy)) {
		cdp_err_set(err, 0, "DevTools URL is longer than %zu bytes", sizeof(copy) - 1);
		rc = -CDP_EINVAL;
		goto out;
	}
	snprintf(copy, sizeof(copy), "%s", ws_url);
	if (lws_parse_uri(copy, &scheme, &h, port, &p) || strcmp(scheme, "ws") || !*h) {
		cdp_err_set(err, 0, "'%.200s' is not a ws://HOST:PORT/PATH DevTools URL", ws_url);
		rc = -CDP_EINVAL;
		goto out;
	}
	if (*port <= 0 || *port > 65535 || strlen(h) >= host_len || strlen(p) + 2 > path_len) {
		cdp_err_set(err, 0, "DevTools URL '%.200s' has a bad port or is too long", ws_url);
		rc = -CDP_EINVAL;
		goto out;
	}
	snprintf(host, host_len, "%s", h);
	snprintf(path, path_len, "/%s", p);
out:
	return rc;
}

/* libwebsockets' own messages, routed into glassbox's log. */
static void lws_log_to_gb(int level, const char *line)
{
	char msg[512];
	size_t n;

	snprintf(msg, sizeof(msg), "%s", line);
	n = strlen(msg);
	while (n && (msg[n - 1] == '\n' || msg[n - 1] == '\r'))
		msg[--n] = '\0';
	if (level & LLL_ERR)
		GB_LOGW("lws", "%s", msg);
	else
		GB_LOGD("lws", "%s", msg);
}

static void lws_log_setup(void)
{
	lws_set_log_level(LLL_ERR | LLL_WARN, lws_log_to_gb);
}

/* Connects to ws_url and completes the websocket handshake within
 * opts->connect_timeout_ms; see cdp.h. Returns 0, -CDP_EINVAL (bad URL),
 * -CDP_ECONNECT, -CDP_ECANCELLED or -CDP_ENOMEM, with the reason in err.
 * No Origin header is sent (Chromium refuses unknown origins). */
int cdp_connect(const char *ws_url, const struct cdp_options *opts, struct cdp_conn **out,
                struct cdp_error *err)
{
	struct lws_context_creation_info info;
	struct lws_client_connect_info cci;
	struct cdp_conn *c = NULL;
	char host[64];
	char host_header[96];
	char path[448];
	int port = 0;
	int rc;

	if (out)
		*out = NULL;
	if (!ws_url || !out) {
		cdp_err_set(err, 0, "cdp_connect: ws_url and out are required");
		rc = -CDP_EINVAL;
		goto out;
	}
	rc = cdp_parse_ws_url(ws_url, host, sizeof(host), &port, path, sizeof(path), err);
	if (rc < 0)
		goto out;
	{
		static pthread_once_t log_once = PTHREAD_ONCE_INIT;

		pthread_once(&log_once, lws_log_setup);
	}
	rc = cdp_conn_new(opts, &c);
	if (rc < 0) {
		cdp_err_set(err, 0, "out of memory");
		goto out;
	}
	c->state = CDP_STATE_CONNECTING;
	snprintf(c->endpoint, sizeof(c->endpoint), "%s:%d", host, port);
	snprintf(host_header, sizeof(host_header), "%s:%d", host, port);

	memset(&info, 0, sizeof(info));
	info.port = CONTEXT_PORT_NO_LISTEN;
	info.protocols = cdp_protocols;
	info.gid = -1;
	info.uid = -1;
	info.user = c;
	info.pt_serv_buf_size = (unsigned int)(CDP_RX_CHUNK_BYTES + LWS_PRE);
	info.fd_limit_per_thread = 8; /* one socket and the wake pipe: no ulimit-sized map */
	info.timeout_secs = (unsigned int)(c->opts.connect_timeout_ms + 999) / 1000;
	info.connect_timeout_secs = info.timeout_secs;
	c->ctx = lws_create_context(&info);
	if (!c->ctx) {
		cdp_err_set(err, 0, "could not create a libwebsockets context for %s", c->endpoint);
		rc = -CDP_ECONNECT;
		goto out;
	}

	memset(&cci, 0, sizeof(cci));
	cci.context = c->ctx;
	cci.address = host;
	cci.port = port;
	cci.path = path;
	cci.host = host_header;
	cci.origin = NULL;
	cci.protocol = NULL;
	cci.local_protocol_name = "cdp";
	cci.pwsi = &c->wsi;
	cci.retry_and_idle_policy = &cdp_no_validity;
	if (!lws_client_connect_via_info(&cci) && c->state == CDP_STATE_CONNECTING)
		cdp_conn_closed(c, "could not start the connection");

	rc = cdp_service_until(c, gb_now_ms() + c->opts.connect_timeout_ms, cdp_connect_stop, NULL);
	if (c->state == CDP_STATE_OPEN) {
		rc = 0;
	} else if (rc == -CDP_ECANCELLED) {
		cdp_err_set(err, 0, "connecting to %s was cancelled", c->endpoint);
	} else if (rc == -CDP_ETIMEOUT) {
		cdp_err_set(err, 0,
		            "no websocket handshake from %s within %d ms: is the browser up?",
		            c->endpoint, c->opts.connect_timeout_ms);
		rc = -CDP_ECONNECT;
	} else {
		cdp_err_set(err, 0, "could not connect to %s: %s; is the browser running?",
		            c->endpoint, c->close_reason);
		rc = -CDP_ECONNECT;
	}
out:
	if (rc < 0) {
		if (c)
			GB_LOGW("cdp", "connect to %s failed: %s", c->endpoint, cdp_strerror(rc));
		cdp_close(c);
	} else {
		GB_LOGD("cdp", "connected to %s", c->endpoint);
		cdp_trace_open(c);
		*out = c;
	}
	return rc;
}

/* Closes the socket, fails and frees every call, waiter and listener,
 * frees c. Must not be called from a listener or while another thread
 * may still call cdp_wake(c). NULL is a no-op. */
void cdp_close(struct cdp_conn *c)
{
	if (!c)
		goto out;
	if (cdp_in_callback(c)) {
		GB_LOGE("cdp", "cdp_close() called from inside a listener or predicate: ignored");
		goto out;
	}
	c->closing = 1; /* our own close: not worth an info line */
	cdp_conn_closed(c, "closed by cdp_close()");
	if (c->ctx) {
		lws_sul_cancel(&c->deadline_sul);
		lws_context_destroy(c->ctx); /* closes the socket */
		c->ctx = NULL;
	}
	cdp_calls_free_all(c);
	cdp_casts_free_all(c);
	cdp_events_free_all(c);
	gb_buf_free(&c->rx);
	cdp_trace_close(c);
	free(c);
out:
	return;
}

/* 1 while the websocket is open. */
int cdp_is_open(const struct cdp_conn *c)
{
	return c && c->state == CDP_STATE_OPEN;
}

/* Thread-safe wake-up of the owning thread's wait (lws_cancel_service);
 * the waiting call then re-checks the cancel flag. */
void cdp_wake(struct cdp_conn *c)
{
	if (c && c->ctx)
		lws_cancel_service(c->ctx);
}

/* Points the connection's waits at another cancel flag (NULL: none);
 * for a connection handed from one owning thread to another. Must be
 * called by the new owner before it waits. */
void cdp_set_cancel_flag(struct cdp_conn *c, const atomic_int *cancel_flag)
{
	if (c)
		c->opts.cancel_flag = cancel_flag;
}

/*
 * test_cdp.c - unit tests of cdp/: a fake browser (a libwebsockets server
 * on 127.0.0.1 in a test thread) replays the transcripts of fixtures/cdp
 * (format in fixtures/cdp/README.md) to a real cdp_conn; the message
 * handler and the skim are also fed directly.
 */
#include "cdp/cdp-private.h"

#include "common/log.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cmocka.h>

#ifndef CDP_FIXTURES_DIR
#error "CDP_FIXTURES_DIR must name fixtures/cdp"
#endif

#define WAIT_MS 10000 /* generous: only a broken client ever waits this long */

/* ---- the fake browser ------------------------------------------------ */

struct peer_frame {
	struct peer_frame *next;
	char *buf; /* LWS_PRE + len */
	size_t len;
	size_t sent;
	size_t fragment; /* 0 = one frame */
	int close;
};

struct peer {
	struct lws_context *ctx;
	pthread_t thread;
	int port;
	atomic_int stop; /* raised by peer_stop(), read by the peer thread */
	json_t *steps;   /* the transcript, all files in turn */
	size_t next;     /* next step to run */
	json_t *ids;     /* name -> id remembered by expect steps */
	struct lws *wsi;
	struct peer_frame *out_head;
	struct peer_frame *out_tail;
	struct gb_buf rx;
	int failures; /* read after the thread is joined */
	char failure[256];
};

static void peer_fail(struct peer *p, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void peer_fail(struct peer *p, const char *fmt, ...)
{
	va_list ap;

	if (!p->failures++) {
		va_start(ap, fmt);
		vsnprintf(p->failure, sizeof(p->failure), fmt, ap);
		va_end(ap);
	}
	p->next = json_array_size(p->steps); /* stop following the script */
}

static void peer_queue(struct peer *p, const char *text, size_t len, size_t fragment, int close)
{
	struct peer_frame *f = calloc(1, sizeof(*f));

	assert_non_null(f);
	f->buf = malloc(LWS_PRE + len + 1);
	assert_non_null(f->buf);
	memcpy(f->buf + LWS_PRE, text, len);
	f->len = len;
	f->fragment = fragment;
	f->close = close;
	if (p->out_tail)
		p->out_tail->next = f;
	else
		p->out_head = f;
	p->out_tail = f;
}

/* Replaces every string "$blob" inside v by n 'A's. */
static void peer_inflate(json_t *v, const char *blob)
{
	const char *key;
	json_t *child;
	size_t i;

	if (json_is_object(v)) {
		json_object_foreach(v, key, child)
		{
			if (json_is_string(child) && !strcmp(json_string_value(child), "$blob"))
				json_object_set_new(v, key, json_string(blob));
			else
				peer_inflate(child, blob);
		}
	} else if (json_is_array(v)) {
		json_array_foreach(v, i, child) peer_inflate(child, blob);
	}
}

/* Builds the text of a send step: id placeholder and blob resolved. */
static char *peer_render(struct peer *p, json_t *step)
{
	json_t *msg = json_deep_copy(json_object_get(step, "send"));
	json_t *id = json_object_get(msg, "id");
	json_t *known;
	char *blob = NULL;
	char *text;
	json_int_t n = json_integer_value(json_object_get(step, "blob"));

	if (json_is_string(id) && json_string_value(id)[0] == '$') {
		known = json_object_get(p->ids, json_string_value(id) + 1);
		if (!known)
			peer_fail(p, "no id remembered as %s", json_string_value(id));
		json_object_set(msg, "id", known ? known : json_integer(999999));
	}
	if (n > 0) {
		blob = malloc((size_t)n + 1);
		assert_non_null(blob);
		memset(blob, 'A', (size_t)n);
		blob[n] = '\0';
		peer_inflate(msg, blob);
		free(blob);
	}
	text = json_dumps(msg, JSON_COMPACT);
	assert_non_null(text);
	json_decref(msg);
	return text;
}

/* Runs every step up to the next expect. */
static void peer_advance(struct peer *p)
{
	json_t *step;
	const char *raw;
	char *text;
	size_t fragment;

	while (p->next < json_array_size(p->steps)) {
		step = json_array_get(p->steps, p->next);
		if (json_object_get(step, "expect"))
			break;
		p->next++;
		fragment = (size_t)json_integer_value(json_object_get(step, "fragment"));
		raw = json_string_value(json_object_get(step, "send_raw"));
		if (json_object_get(step, "send")) {
			text = peer_render(p, step);
			peer_queue(p, text, strlen(text), fragment, 0);
			free(text);
		} else if (raw) {
			peer_queue(p, raw, strlen(raw), fragment, 0);
		} else if (json_is_true(json_object_get(step, "close"))) {
			peer_queue(p, "", 0, 0, 1);
		} else {
			peer_fail(p, "step %zu is not expect, send, send_raw or close", p->next);
		}
	}
	if (p->wsi && p->out_head)
		lws_callback_on_writable(p->wsi);
}

/* A complete message from the client: it must be what the current expect
 * step names. */
static void peer_on_message(struct peer *p, const char *data, size_t len)
{
	json_t *msg = json_loadb(data, len, 0, NULL);
	json_t *step = json_array_get(p->steps, p->next);
	json_t *expect = json_object_get(step, "expect");
	const char *method = json_string_value(json_object_get(msg, "method"));
	const char *want = json_string_value(json_object_get(expect, "method"));
	const char *sid = json_string_value(json_object_get(msg, "sessionId"));
	const char *want_sid = json_string_value(json_object_get(expect, "sessionId"));
	const char *name = json_string_value(json_object_get(step, "as"));

	if (!msg || !json_is_integer(json_object_get(msg, "id")) || !method ||
	    !json_is_object(json_object_get(msg, "params"))) {
		peer_fail(p, "client sent a malformed message");
	} else if (!expect) {
		peer_fail(p, "client sent %s after the end of the transcript", method);
	} else if (strcmp(method, want)) {
		peer_fail(p, "client sent %s, transcript expects %s", method, want);
	} else if ((!sid) != (!want_sid) || (sid && strcmp(sid, want_sid))) {
		peer_fail(p, "%s came with sessionId %s, transcript expects %s", method,
		          sid ? sid : "(none)", want_sid ? want_sid : "(none)");
	} else {
		json_object_set(p->ids, name ? name : want, json_object_get(msg, "id"));
		p->next++;
		peer_advance(p);
	}
	json_decref(msg);
}

/* Writes (part of) the oldest queued frame. */
static int peer_write(struct peer *p, struct lws *wsi)
{
	struct peer_frame *f = p->out_head;
	size_t chunk;
	int flags;

	if (!f)
		return 0;
	if (f->close)
		return -1;
	chunk = f->len - f->sent;
	if (f->fragment && chunk > f->fragment)
		chunk = f->fragment;
	flags = f->sent ? LWS_WRITE_CONTINUATION : LWS_WRITE_TEXT;
	if (f->sent + chunk < f->len)
		flags |= LWS_WRITE_NO_FIN;
	if (lws_write(wsi, (unsigned char *)f->buf + LWS_PRE + f->sent, chunk,
	              (enum lws_write_protocol)flags) < (int)chunk)
		return -1;
	f->sent += chunk;
	if (f->sent == f->len) {
		p->out_head = f->next;
		if (!p->out_head)
			p->out_tail = NULL;
		free(f->buf);
		free(f);
	}
	if (p->out_head)
		lws_callback_on_writable(wsi);
	return 0;
}

static int peer_callback(struct lws *wsi, enum lws_callback_reasons reason, void *user, void *in,
                         size_t len)
{
	struct peer *p = lws_context_user(lws_get_context(wsi));

	(void)user;
	switch (reason) {
	case LWS_CALLBACK_ESTABLISHED:
		p->wsi = wsi;
		peer_advance(p);
		break;
	case LWS_CALLBACK_RECEIVE:
		gb_buf_append(&p->rx, in, len);
		if (lws_is_final_fragment(wsi) && !lws_remaining_packet_payload(wsi)) {
			peer_on_message(p, p->rx.data, p->rx.len);
			p->rx.len = 0;
		}
		break;
	case LWS_CALLBACK_SERVER_WRITEABLE:
		return peer_write(p, wsi);
	case LWS_CALLBACK_CLOSED:
		if (wsi == p->wsi)
			p->wsi = NULL;
		break;
	default:
		break;
	}
	return 0;
}

static const struct lws_protocols peer_protocols[] = {
	{ .name = "peer", .callback = peer_callback, .rx_buffer_size = 65536 },
	{ .name = NULL, .callback = NULL },
};

/* Appends the steps of fixtures/cdp/<name> to steps. */
static void peer_load(json_t *steps, const char *name)
{
	char path[512];
	char line[1 << 16];
	json_error_t jerr;
	json_t *step;
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", CDP_FIXTURES_DIR, name);
	f = fopen(path, "r");
	if (!f)
		fail_msg("cannot open fixture %s", path);
	while (fgets(line, sizeof(line), f)) {
		if (line[0] == '#' || line[0] == '\n')
			continue;
		step = json_loads(line, 0, &jerr);
		if (!step)
			fail_msg("%s:%d: %s", path, jerr.line, jerr.text);
		json_array_append_new(steps, step);
	}
	fclose(f);
}

static void *peer_thread(void *arg)
{
	struct peer *p = arg;

	while (!atomic_load(&p->stop))
		lws_service(p->ctx, 0);
	return NULL;
}

/* Starts a fake browser replaying the NULL-terminated list of fixtures. */
static struct peer *peer_start(const char *first, ...)
{
	struct lws_context_creation_info info;
	struct peer *p = calloc(1, sizeof(*p));
	const char *name;
	va_list ap;

	assert_non_null(p);
	p->steps = json_array();
	p->ids = json_object();
	gb_buf_init(&p->rx, 1 << 20);
	va_start(ap, first);
	for (name = first; name; name = va_arg(ap, const char *))
		peer_load(p->steps, name);
	va_end(ap);

	memset(&info, 0, sizeof(info));
	info.port = 0; /* the kernel picks one */
	info.iface = "127.0.0.1";
	info.protocols = peer_protocols;
	info.gid = -1;
	info.uid = -1;
	info.user = p;
	info.fd_limit_per_thread = 16;
	p->ctx = lws_create_context(&info);
	assert_non_null(p->ctx);
	p->port = lws_get_vhost_listen_port(lws_get_vhost_by_name(p->ctx, "default"));
	assert_true(p->port > 0);
	assert_int_equal(pthread_create(&p->thread, NULL, peer_thread, p), 0);
	return p;
}

/* Stops the peer; returns how many transcript steps were left unrun. */
static size_t peer_stop(struct peer *p)
{
	struct peer_frame *f;
	size_t left;

	atomic_store(&p->stop, 1);
	lws_cancel_service(p->ctx);
	pthread_join(p->thread, NULL);
	lws_context_destroy(p->ctx);
	if (p->failures)
		fail_msg("fake browser: %s", p->failure);
	left = json_array_size(p->steps) - p->next;
	while (p->out_head) {
		f = p->out_head;
		p->out_head = f->next;
		free(f->buf);
		free(f);
	}
	json_decref(p->steps);
	json_decref(p->ids);
	gb_buf_free(&p->rx);
	free(p);
	return left;
}

static struct cdp_conn *connect_to(struct peer *p, const struct cdp_options *opts)
{
	struct cdp_error err = { 0 };
	struct cdp_conn *c = NULL;
	char url[128];
	int rc;

	snprintf(url, sizeof(url), "ws://127.0.0.1:%d/devtools/browser/fake", p->port);
	rc = cdp_connect(url, opts, &c, &err);
	if (rc)
		fail_msg("cdp_connect: %s (%s)", err.message, cdp_strerror(rc));
	assert_true(cdp_is_open(c));
	return c;
}

/* ---- helpers --------------------------------------------------------- */

static int call_ok(struct cdp_conn *c, const char *sid, const char *method, json_t *params,
                   json_t **result)
{
	struct cdp_error err = { 0 };
	int rc = cdp_call(c, sid, method, params, WAIT_MS, result, &err);

	if (rc)
		fail_msg("%s: %s (%s)", method, err.message, cdp_strerror(rc));
	return rc;
}

/* Plays attach.jsonl: returns the sessionId (caller frees). */
static char *attach(struct cdp_conn *c)
{
	json_t *result = NULL;
	json_t *targets;
	char *sid;

	call_ok(c, NULL, "Target.getTargets", NULL, &result);
	targets = json_object_get(result, "targetInfos");
	assert_true(json_is_array(targets));
	assert_true(json_array_size(targets) >= 1);
	json_decref(result);
	call_ok(c, NULL, "Target.attachToTarget",
	        json_pack("{s:s, s:b}", "targetId", "page", "flatten", 1), &result);
	sid = strdup(json_string_value(json_object_get(result, "sessionId")));
	assert_non_null(sid);
	json_decref(result);
	return sid;
}

struct seen {
	int count;
	char session_id[CDP_NAME_MAX];
	char method[CDP_NAME_MAX];
};

static void on_event(void *user, const char *session_id, const char *method, json_t *params)
{
	struct seen *s = user;

	assert_non_null(session_id);
	assert_true(json_is_object(params));
	s->count++;
	snprintf(s->session_id, sizeof(s->session_id), "%s", session_id);
	snprintf(s->method, sizeof(s->method), "%s", method);
}

/* ---- tests against the fake browser ----------------------------------- */

/* Events are routed by sessionId and method; a waiter armed before the
 * command catches an event that arrives before cdp_wait_event(). */
static void test_events_routed_and_armed_wait(void **state)
{
	struct peer *p = peer_start("attach.jsonl", "navigate.jsonl", "evaluate.jsonl", NULL);
	struct cdp_conn *c = connect_to(p, NULL);
	struct seen attached = { 0 }, started = { 0 }, browser_only = { 0 }, other = { 0 },
	            any = { 0 };
	struct cdp_waiter *load = NULL;
	struct cdp_waiter *never = NULL;
	struct cdp_error err = { 0 };
	json_t *result = NULL;
	json_t *params = NULL;
	char *sid;

	(void)state;
	assert_true(cdp_on(c, NULL, "Target.attachedToTarget", on_event, &attached) > 0);
	sid = attach(c);
	/* the event came before the reply: it was dispatched first */
	assert_int_equal(attached.count, 1);
	assert_string_equal(attached.session_id, "");
	assert_true(strlen(sid) > 0);

	assert_true(cdp_on(c, sid, "Page.frameStartedLoading", on_event, &started) > 0);
	assert_true(cdp_on(c, "", NULL, on_event, &browser_only) > 0);
	assert_true(cdp_on(c, "OTHER-SESSION", NULL, on_event, &other) > 0);
	assert_true(cdp_on(c, sid, NULL, on_event, &any) > 0);
	assert_int_equal(cdp_arm(c, sid, "Page.loadEventFired", &load), 0);
	assert_int_equal(cdp_arm(c, "OTHER-SESSION", "Page.loadEventFired", &never), 0);

	call_ok(c, sid, "Page.enable", NULL, NULL);
	call_ok(c, sid, "Page.navigate", json_pack("{s:s}", "url", "data:text/html,x"), &result);
	assert_true(json_is_string(json_object_get(result, "frameId")));
	json_decref(result);
	/* by the time this reply is read, every navigation event has been */
	call_ok(c, sid, "Runtime.evaluate", json_pack("{s:s}", "expression", "6 * 7"), &result);
	assert_int_equal(
	    json_integer_value(json_object_get(json_object_get(result, "result"), "value")), 42);
	json_decref(result);

	/* timeout 0: no waiting at all, the event is already there */
	assert_int_equal(cdp_wait_event(c, load, 0, &params, &err), 0);
	assert_true(json_is_number(json_object_get(params, "timestamp")));
	json_decref(params);
	assert_int_equal(cdp_wait_event(c, never, 0, NULL, &err), -CDP_ETIMEOUT);
	assert_non_null(strstr(err.message, "Page.loadEventFired"));

	assert_int_equal(started.count, 1);
	assert_string_equal(started.session_id, sid);
	assert_int_equal(browser_only.count, 0);
	assert_int_equal(other.count, 0);
	assert_true(any.count >= 8);
	assert_int_equal(attached.count, 1);

	cdp_close(c);
	assert_int_equal(peer_stop(p), 0);
	free(sid);
}

/* Pipelined calls go out in order; out-of-order replies reach their own
 * caller, whichever is awaited first. */
static void test_out_of_order_replies(void **state)
{
	struct peer *p = peer_start("pipeline.jsonl", NULL);
	struct cdp_conn *c = connect_to(p, NULL);
	struct cdp_error err = { 0 };
	uint64_t a, b, d;
	json_t *result = NULL;

	(void)state;
	assert_int_equal(cdp_send(c, NULL, "Runtime.evaluate", NULL, &a), 0);
	assert_int_equal(cdp_send(c, NULL, "DOM.getDocument", NULL, &b), 0);
	assert_int_equal(cdp_send(c, NULL, "Page.getFrameTree", NULL, &d), 0);
	assert_true(a < b && b < d);

	assert_int_equal(cdp_await(c, b, WAIT_MS, &result, &err), 0);
	assert_string_equal(json_string_value(json_object_get(result, "which")), "second");
	json_decref(result);
	assert_int_equal(cdp_await(c, a, WAIT_MS, &result, &err), 0);
	assert_string_equal(json_string_value(json_object_get(result, "which")), "first");
	json_decref(result);
	assert_int_equal(cdp_await(c, d, 0, &result, &err), 0);
	assert_string_equal(json_string_value(json_object_get(result, "which")), "third");
	json_decref(result);
	/* a call ends with its await */
	assert_int_equal(cdp_await(c, d, 0, &result, &err), -CDP_EINVAL);
	assert_null(result);

	cdp_close(c);
	assert_int_equal(peer_stop(p), 0);
}

/* A CDP error reply is -CDP_EPROTOCOL with the browser's code and text;
 * the connection carries on. */
static void test_protocol_error(void **state)
{
	struct peer *p = peer_start("attach.jsonl", "error.jsonl", NULL);
	struct cdp_conn *c = connect_to(p, NULL);
	struct cdp_error err = { 0 };
	json_t *result = NULL;
	char *sid;
	int rc;

	(void)state;
	sid = attach(c);
	rc = cdp_call(c, sid, "Page.navigate", json_pack("{s:s}", "url", "not a url"), WAIT_MS,
	              &result, &err);
	assert_int_equal(rc, -CDP_EPROTOCOL);
	assert_null(result);
	assert_int_equal(err.code, -32000);
	assert_non_null(strstr(err.message, "Page.navigate"));
	assert_non_null(strstr(err.message, "Cannot navigate to invalid URL"));

	call_ok(c, NULL, "Browser.getVersion", NULL, &result);
	assert_true(json_is_string(json_object_get(result, "product")));
	json_decref(result);

	cdp_close(c);
	assert_int_equal(peer_stop(p), 0);
	free(sid);
}

/* A deadline returns -CDP_ETIMEOUT; the late reply is dropped and the
 * connection goes on. */
static void test_deadline(void **state)
{
	struct peer *p = peer_start("noreply.jsonl", NULL);
	struct cdp_conn *c = connect_to(p, NULL);
	struct cdp_waiter *w = NULL;
	struct cdp_error err = { 0 };
	json_t *result = NULL;

	(void)state;
	assert_int_equal(cdp_call(c, NULL, "Runtime.evaluate", NULL, 150, &result, &err),
	                 -CDP_ETIMEOUT);
	assert_null(result);
	assert_non_null(strstr(err.message, "Runtime.evaluate"));
	assert_non_null(strstr(err.message, "150 ms"));
	assert_true(cdp_is_open(c));

	assert_int_equal(cdp_arm(c, NULL, "Never.happens", &w), 0);
	assert_int_equal(cdp_wait_event(c, w, 100, NULL, &err), -CDP_ETIMEOUT);
	assert_int_equal(cdp_service(c, 50, NULL, NULL), -CDP_ETIMEOUT);

	call_ok(c, NULL, "Browser.getVersion", NULL, &result);
	assert_string_equal(json_string_value(json_object_get(result, "product")), "Fake/1.0");
	assert_null(json_object_get(result, "late"));
	json_decref(result);

	cdp_close(c);
	assert_int_equal(peer_stop(p), 0);
}

struct canceller {
	struct cdp_conn *c;
	atomic_int *flag;
};

static void *cancel_later(void *arg)
{
	struct canceller *k = arg;

	usleep(100 * 1000);
	atomic_store(k->flag, 1);
	cdp_wake(k->c);
	return NULL;
}

/* The cancel flag raised by another thread, plus cdp_wake(), ends a long
 * wait with -CDP_ECANCELLED. */
static void test_cancel_from_other_thread(void **state)
{
	static atomic_int cancel;
	struct peer *p = peer_start("noreply.jsonl", NULL);
	struct cdp_options opts = { .cancel_flag = &cancel };
	struct cdp_conn *c;
	struct canceller k;
	struct cdp_error err = { 0 };
	pthread_t thread;
	int rc;

	(void)state;
	cancel = 0;
	c = connect_to(p, &opts);
	k.c = c;
	k.flag = &cancel;
	assert_int_equal(pthread_create(&thread, NULL, cancel_later, &k), 0);
	rc = cdp_call(c, NULL, "Runtime.evaluate", NULL, 60000, NULL, &err);
	pthread_join(thread, NULL);
	assert_int_equal(rc, -CDP_ECANCELLED);
	assert_non_null(strstr(err.message, "cancelled"));
	assert_true(cdp_is_open(c));
	/* still raised: the next wait is cancelled before it starts */
	assert_int_equal(cdp_service(c, 60000, NULL, NULL), -CDP_ECANCELLED);

	cancel = 0;
	cdp_close(c);
	peer_stop(p);
}

/* The peer closing the socket fails every pending call at once; a reply
 * that arrived before the close is still returned; later calls fail at
 * once. */
static void test_peer_closes(void **state)
{
	struct peer *p = peer_start("close.jsonl", NULL);
	struct cdp_conn *c = connect_to(p, NULL);
	struct cdp_waiter *w = NULL;
	struct cdp_error err = { 0 };
	uint64_t a, b, d, e;
	json_t *result = NULL;

	(void)state;
	assert_int_equal(cdp_send(c, NULL, "Runtime.evaluate", NULL, &a), 0);
	assert_int_equal(cdp_send(c, NULL, "DOM.getDocument", NULL, &b), 0);
	assert_int_equal(cdp_send(c, NULL, "Page.getFrameTree", NULL, &d), 0);
	assert_int_equal(cdp_arm(c, NULL, "Page.loadEventFired", &w), 0);

	assert_int_equal(cdp_await(c, a, WAIT_MS, &result, &err), -CDP_ECLOSED);
	assert_non_null(strstr(err.message, "Runtime.evaluate"));
	assert_non_null(strstr(err.message, "closed"));
	assert_false(cdp_is_open(c));
	/* timeout 0: these were failed by the close itself */
	assert_int_equal(cdp_await(c, d, 0, &result, &err), -CDP_ECLOSED);
	assert_int_equal(cdp_await(c, b, 0, &result, &err), 0);
	assert_int_equal(
	    json_integer_value(json_object_get(json_object_get(result, "root"), "nodeId")), 1);
	json_decref(result);
	assert_int_equal(cdp_wait_event(c, w, WAIT_MS, NULL, &err), -CDP_ECLOSED);

	assert_int_equal(cdp_send(c, NULL, "Browser.getVersion", NULL, &e), -CDP_ECLOSED);
	assert_int_equal(cdp_call(c, NULL, "Browser.getVersion", NULL, WAIT_MS, &result, &err),
	                 -CDP_ECLOSED);
	assert_non_null(strstr(err.message, "Browser.getVersion"));
	assert_int_equal(cdp_service(c, WAIT_MS, NULL, NULL), -CDP_ECLOSED);

	cdp_close(c);
	assert_int_equal(peer_stop(p), 0);
}

/* A recorded screenshot over a small ceiling fails that call with
 * -CDP_ETOOBIG; the connection stays open and usable. */
static void test_oversized_screenshot(void **state)
{
	struct peer *p = peer_start("attach.jsonl", "screenshot.jsonl", "evaluate.jsonl", NULL);
	struct cdp_options opts = { .max_frame_bytes = 1024 };
	struct cdp_conn *c = connect_to(p, &opts);
	struct cdp_error err = { 0 };
	json_t *result = NULL;
	char *sid;

	(void)state;
	sid = attach(c);
	assert_int_equal(cdp_call(c, sid, "Page.captureScreenshot", NULL, WAIT_MS, &result, &err),
	                 -CDP_ETOOBIG);
	assert_null(result);
	assert_non_null(strstr(err.message, "Page.captureScreenshot"));
	assert_non_null(strstr(err.message, "1024-byte ceiling"));
	assert_true(cdp_is_open(c));
	call_ok(c, sid, "Runtime.evaluate", NULL, &result);
	assert_int_equal(
	    json_integer_value(json_object_get(json_object_get(result, "result"), "value")), 42);
	json_decref(result);

	cdp_close(c);
	assert_int_equal(peer_stop(p), 0);
	free(sid);
}

/* Fragmented messages around a 1 MiB ceiling: under it they are whole;
 * over it the call (id last) or the armed waiter (sessionId last) fails
 * with -CDP_ETOOBIG, nameless ones are dropped, and the connection goes
 * on. */
static void test_oversized_fragments(void **state)
{
	struct peer *p = peer_start("oversize.jsonl", NULL);
	struct cdp_options opts = { .max_frame_bytes = 1 << 20 };
	struct cdp_conn *c = connect_to(p, &opts);
	struct seen frames = { 0 };
	struct cdp_waiter *s1 = NULL;
	struct cdp_waiter *s2 = NULL;
	struct cdp_error err = { 0 };
	json_t *result = NULL;

	(void)state;
	assert_true(cdp_on(c, NULL, NULL, on_event, &frames) > 0);
	assert_int_equal(cdp_arm(c, "S1", "Page.screencastFrame", &s1), 0);
	assert_int_equal(cdp_arm(c, "S2", "Page.screencastFrame", &s2), 0);

	call_ok(c, NULL, "Page.captureScreenshot", NULL, &result);
	assert_int_equal(json_string_length(json_object_get(result, "data")), 600000);
	json_decref(result);

	assert_int_equal(cdp_call(c, NULL, "Page.captureScreenshot", NULL, WAIT_MS, &result, &err),
	                 -CDP_ETOOBIG);
	assert_non_null(strstr(err.message, "ceiling"));
	assert_true(cdp_is_open(c));

	call_ok(c, NULL, "Runtime.evaluate", NULL, &result);
	assert_int_equal(
	    json_integer_value(json_object_get(json_object_get(result, "result"), "value")), 42);
	json_decref(result);

	assert_int_equal(cdp_wait_event(c, s1, 0, NULL, &err), -CDP_ETOOBIG);
	assert_non_null(strstr(err.message, "Page.screencastFrame"));
	assert_int_equal(cdp_wait_event(c, s2, 0, NULL, &err), -CDP_ETIMEOUT);
	assert_int_equal(frames.count, 0);

	cdp_close(c);
	assert_int_equal(peer_stop(p), 0);
}

/* Malformed messages are dropped: no event is dispatched, the call is not
 * failed by a bad reply carrying its id, and the real reply arrives. */
static void test_malformed_ignored(void **state)
{
	struct peer *p = peer_start("malformed.jsonl", NULL);
	struct cdp_conn *c = connect_to(p, NULL);
	struct seen any = { 0 };
	json_t *result = NULL;

	(void)state;
	assert_true(cdp_on(c, NULL, NULL, on_event, &any) > 0);
	call_ok(c, NULL, "Runtime.evaluate", NULL, &result);
	assert_int_equal(
	    json_integer_value(json_object_get(json_object_get(result, "result"), "value")), 42);
	json_decref(result);
	assert_int_equal(any.count, 0);
	assert_true(cdp_is_open(c));

	cdp_close(c);
	assert_int_equal(peer_stop(p), 0);
}

static int load_seen(void *user)
{
	return ((struct seen *)user)->count > 0;
}

/* cdp_service() dispatches events until its predicate holds. */
static void test_service_until_done(void **state)
{
	struct peer *p = peer_start("attach.jsonl", "navigate.jsonl", NULL);
	struct cdp_conn *c = connect_to(p, NULL);
	struct seen load = { 0 };
	char *sid;

	(void)state;
	sid = attach(c);
	assert_true(cdp_on(c, sid, "Page.loadEventFired", on_event, &load) > 0);
	call_ok(c, sid, "Page.enable", NULL, NULL);
	call_ok(c, sid, "Page.navigate", json_pack("{s:s}", "url", "data:text/html,x"), NULL);
	assert_int_equal(cdp_service(c, WAIT_MS, load_seen, &load), 0);
	assert_int_equal(load.count, 1);
	/* already true on entry */
	assert_int_equal(cdp_service(c, WAIT_MS, load_seen, &load), 0);

	cdp_close(c);
	assert_int_equal(peer_stop(p), 0);
	free(sid);
}

/* Nothing listens: a clean -CDP_ECONNECT that names the endpoint. A bad
 * URL is -CDP_EINVAL. */
static void test_connect_failures(void **state)
{
	struct sockaddr_in sa;
	socklen_t sl = sizeof(sa);
	struct cdp_error err = { 0 };
	struct cdp_conn *c = (struct cdp_conn *)1;
	char url[128];
	int fd;

	(void)state;
	/* a port that was free a moment ago */
	fd = socket(AF_INET, SOCK_STREAM, 0);
	memset(&sa, 0, sizeof(sa));
	sa.sin_family = AF_INET;
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	assert_int_equal(bind(fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
	assert_int_equal(getsockname(fd, (struct sockaddr *)&sa, &sl), 0);
	close(fd);
	snprintf(url, sizeof(url), "ws://127.0.0.1:%d/devtools/browser/x", ntohs(sa.sin_port));
	assert_int_equal(cdp_connect(url, NULL, &c, &err), -CDP_ECONNECT);
	assert_null(c);
	assert_non_null(strstr(err.message, "127.0.0.1:"));

	assert_int_equal(cdp_connect("http://127.0.0.1:9222/x", NULL, &c, &err), -CDP_EINVAL);
	assert_int_equal(cdp_connect("ws://:9222/x", NULL, &c, &err), -CDP_EINVAL);
	assert_int_equal(cdp_connect("garbage", NULL, &c, &err), -CDP_EINVAL);
	assert_null(c);
}

/* ---- tests without a socket ------------------------------------------- */

static struct cdp_conn *detached(size_t max_frame_bytes)
{
	struct cdp_options opts = { .max_frame_bytes = max_frame_bytes };
	struct cdp_conn *c = NULL;

	assert_int_equal(cdp_conn_new(&opts, &c), 0);
	return c;
}

static int handle(struct cdp_conn *c, const char *text)
{
	return cdp_message_handle(c, text, strlen(text));
}

/* The handler accepts well-formed CDP and rejects the rest, whatever
 * it is. */
static void test_handler_types(void **state)
{
	static const char *const bad[] = {
		"",
		"{",
		"null",
		"\"str\"",
		"[]",
		"{}",
		"{\"id\":\"1\",\"result\":{}}",
		"{\"id\":1.0,\"result\":{}}",
		"{\"id\":-3,\"result\":{}}",
		"{\"id\":99999999999999999999999,\"result\":{}}",
		"{\"id\":1}",
		"{\"id\":1,\"result\":[]}",
		"{\"id\":1,\"result\":{},\"error\":{\"code\":1,\"message\":\"m\"}}",
		"{\"id\":1,\"error\":{\"code\":1}}",
		"{\"id\":1,\"error\":{\"code\":1.5,\"message\":\"m\"}}",
		"{\"id\":1,\"error\":{\"code\":1,\"message\":\"m\",\"data\":3}}",
		"{\"id\":1,\"error\":\"boom\"}",
		"{\"id\":1,\"result\":{},\"sessionId\":5}",
		"{\"id\":1,\"method\":\"A.b\",\"result\":{}}",
		"{\"method\":null}",
		"{\"method\":\"\"}",
		"{\"method\":\"A.b\",\"params\":\"x\"}",
		"{\"method\":\"A.b\",\"sessionId\":null}",
		"{\"method\":\"A.b\",\"method\":\"A.c\"}",
		"{\"method\":\"A.b\"} {}",
		"{\"method\":\"A.\\u0000b\"}",
	};
	struct cdp_conn *c = detached(0);
	struct seen any = { 0 };
	size_t i;

	(void)state;
	assert_true(cdp_on(c, NULL, NULL, on_event, &any) > 0);
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		if (handle(c, bad[i]) != -CDP_EBADMSG)
			fail_msg("accepted: %s", bad[i]);
	assert_int_equal(cdp_message_handle(c, "{\"method\":\"A.b\"}\0", 17), -CDP_EBADMSG);
	assert_int_equal(any.count, 0);

	assert_int_equal(handle(c, "{\"method\":\"A.b\"}"), 0);
	assert_int_equal(handle(c, " {\"method\":\"A.b\",\"params\":{},\"sessionId\":\"S\"}\n"), 0);
	assert_int_equal(handle(c, "{\"id\":77,\"result\":{}}"), 0); /* nobody waits: dropped */
	assert_int_equal(any.count, 2);
	assert_string_equal(any.session_id, "S");
	cdp_close(c);
}

/* Keeps the "text" param of the last event. */
static void on_text_event(void *user, const char *session_id, const char *method, json_t *params)
{
	const char *v = json_string_value(json_object_get(params, "text"));
	char *text = user;

	(void)session_id;
	(void)method;
	snprintf(text, 64, "%s", v ? v : "(none)");
}

/* A page's lone UTF-16 surrogate, which Chromium writes as \ud800, reaches
 * listeners as U+FFFD; a pair stays one character, and a message that is
 * malformed anyway is still dropped. */
static void test_handler_lone_surrogates(void **state)
{
	struct cdp_conn *c = detached(0);
	char text[64] = "";
	char fixed[] = "a\\ud800b \\udc00 \\\\ud800 \\ud83d\\ude00 \\ud800\\ud800";

	(void)state;
	assert_int_equal(cdp_json_fix_surrogates(fixed, strlen(fixed)), 4);
	assert_string_equal(fixed, "a\\ufffdb \\ufffd \\\\ud800 \\ud83d\\ude00 \\ufffd\\ufffd");
	assert_true(cdp_on(c, NULL, NULL, on_text_event, text) > 0);
	assert_int_equal(handle(c, "{\"method\":\"A.b\",\"params\":{\"text\":\"x\\ud800y\"}}"), 0);
	assert_string_equal(text, "x\xef\xbf\xbdy");
	assert_int_equal(handle(c, "{\"method\":\"A.b\",\"params\":{\"text\":\"\\ud83d\\ude00\"}}"),
	                 0);
	assert_string_equal(text, "\xf0\x9f\x98\x80");
	assert_int_equal(handle(c, "{\"method\":\"A.b\",\"params\":{\"text\":\"\\udfff\"}}"), 0);
	assert_string_equal(text, "\xef\xbf\xbd");
	assert_int_equal(handle(c, "{\"method\":\"A.b\",\"params\":{\"text\":\"\\ud800\"}"),
	                 -CDP_EBADMSG);
	assert_int_equal(handle(c, "{\"method\":\"A.b\",\"params\":{\"text\":\"\\ud8"),
	                 -CDP_EBADMSG);
	cdp_close(c);
}

/* Correlation without a socket: replies in any order, error replies,
 * calls that end with their await. */
static void test_handler_correlation(void **state)
{
	struct cdp_conn *c = detached(0);
	struct cdp_error err = { 0 };
	json_t *result = NULL;
	uint64_t a, b;
	char text[128];

	(void)state;
	assert_int_equal(cdp_send(c, "S", "A.one", json_pack("{s:i}", "x", 1), &a), 0);
	assert_int_equal(cdp_send(c, NULL, "A.two", NULL, &b), 0);
	assert_int_equal(cdp_send(c, NULL, "A.three", json_array(), &b), -CDP_EINVAL);
	assert_int_equal(cdp_send(c, NULL, "", NULL, &b), -CDP_EINVAL);
	assert_int_equal(cdp_send(c, NULL, "A.two", NULL, &b), 0);

	snprintf(text, sizeof(text),
	         "{\"id\":%llu,\"error\":{\"code\":-32601,\"message\":\"no such\",\"data\":\"d\"}}",
	         (unsigned long long)b);
	assert_int_equal(handle(c, text), 0);
	snprintf(text, sizeof(text), "{\"id\":%llu,\"result\":{\"v\":1},\"sessionId\":\"S\"}",
	         (unsigned long long)a);
	assert_int_equal(handle(c, text), 0);
	assert_int_equal(handle(c, text), 0); /* a duplicate reply is dropped */

	assert_int_equal(cdp_await(c, a, 0, &result, &err), 0);
	assert_int_equal(json_integer_value(json_object_get(result, "v")), 1);
	json_decref(result);
	assert_int_equal(cdp_await(c, b, 0, &result, &err), -CDP_EPROTOCOL);
	assert_int_equal(err.code, -32601);
	assert_string_equal(err.message, "A.two: no such (code -32601): d");

	/* no socket: a wait for a reply that never comes times out at once */
	assert_int_equal(cdp_send(c, NULL, "A.four", NULL, &a), 0);
	assert_int_equal(cdp_await(c, a, 0, &result, &err), -CDP_ETIMEOUT);
	assert_int_equal(cdp_send(c, NULL, "A.five", NULL, &a), 0);
	cdp_forget(c, a);
	assert_int_equal(cdp_await(c, a, 0, &result, &err), -CDP_EINVAL);
	cdp_close(c);
}

static int g_off_handle;

static void off_self(void *user, const char *session_id, const char *method, json_t *params)
{
	struct cdp_conn *c = user;

	(void)session_id;
	(void)method;
	(void)params;
	cdp_off(c, g_off_handle);
	/* waiting from inside a listener is refused */
	assert_int_equal(cdp_service(c, 0, NULL, NULL), -CDP_EINVAL);
}

/* Listeners may remove themselves while being called; filters match
 * NULL (any), "" (browser only) and exact sessions. */
static void test_listener_off_during_dispatch(void **state)
{
	struct cdp_conn *c = detached(0);
	struct seen rest = { 0 };
	int h;

	(void)state;
	g_off_handle = cdp_on(c, NULL, "A.b", off_self, c);
	assert_true(g_off_handle > 0);
	h = cdp_on(c, NULL, "A.b", on_event, &rest);
	assert_true(h > 0);
	assert_int_equal(handle(c, "{\"method\":\"A.b\"}"), 0);
	assert_int_equal(handle(c, "{\"method\":\"A.b\"}"), 0);
	assert_int_equal(rest.count, 2);
	cdp_off(c, h);
	assert_int_equal(handle(c, "{\"method\":\"A.b\"}"), 0);
	assert_int_equal(rest.count, 2);
	assert_int_equal(cdp_on(c, NULL, NULL, NULL, NULL), -CDP_EINVAL);
	cdp_close(c);
}

/* Fragments are assembled; past the ceiling nothing is stored and the
 * right call fails; the next message is handled normally. */
static void test_rx_ceiling(void **state)
{
	struct cdp_conn *c = detached(64);
	struct cdp_error err = { 0 };
	json_t *result = NULL;
	uint64_t a, b;
	char big[256];
	size_t i;

	(void)state;
	assert_int_equal(cdp_send(c, NULL, "A.small", NULL, &a), 0);
	assert_int_equal(cdp_send(c, NULL, "A.big", NULL, &b), 0);
	snprintf(big, sizeof(big), "{\"result\":{\"data\":\"%0100d\"},\"id\":%llu}", 0,
	         (unsigned long long)b);
	/* byte by byte: the skim must not depend on chunk boundaries */
	for (i = 0; big[i]; i++)
		cdp_message_rx(c, big + i, 1, big[i + 1] == '\0');
	assert_null(c->rx.data); /* nothing kept */
	snprintf(big, sizeof(big), "{\"id\":%llu,\"result\":{}}", (unsigned long long)a);
	cdp_message_rx(c, big, 5, 0);
	cdp_message_rx(c, big + 5, strlen(big) - 5, 1);
	assert_int_equal(cdp_await(c, a, 0, &result, &err), 0);
	json_decref(result);
	assert_int_equal(cdp_await(c, b, 0, &result, &err), -CDP_ETOOBIG);
	assert_non_null(strstr(err.message, "A.big"));
	assert_non_null(strstr(err.message, "64-byte ceiling"));

	/* outgoing messages have the same ceiling */
	assert_int_equal(cdp_send(c, NULL, "A.out",
	                          json_pack("{s:s}", "x",
	                                    "0123456789012345678901234567890123456789"
	                                    "0123456789012345678901234567890123456789"),
	                          &a),
	                 -CDP_ETOOBIG);
	cdp_close(c);
}

static void skim_all(struct cdp_skim *s, const char *text)
{
	size_t i;

	cdp_skim_init(s);
	for (i = 0; text[i]; i++)
		cdp_skim_feed(s, text + i, 1);
}

/* The skim names id / method / sessionId at the top level only, wherever
 * they are, and nothing when in doubt. */
static void test_skim(void **state)
{
	struct cdp_skim s;

	(void)state;
	skim_all(&s, "{\"result\":{\"id\":5,\"x\":\"}\\\"{\"},\"id\":12}");
	assert_true(s.ended && !s.bad);
	assert_int_equal(s.id_state, CDP_SKIM_COMPLETE);
	assert_int_equal(s.id, 12);
	assert_int_equal(s.method_state, CDP_SKIM_ABSENT);

	skim_all(&s, "{\"method\":\"Page.screencastFrame\",\"params\":{\"sessionId\":\"no\","
	             "\"method\":\"no\"},\"sessionId\":\"S1\"}");
	assert_int_equal(s.method_state, CDP_SKIM_COMPLETE);
	assert_string_equal(s.method, "Page.screencastFrame");
	assert_int_equal(s.session_state, CDP_SKIM_COMPLETE);
	assert_string_equal(s.session_id, "S1");
	assert_int_equal(s.id_state, CDP_SKIM_ABSENT);

	skim_all(&s, "{\"id\":-1}");
	assert_int_equal(s.id_state, CDP_SKIM_INVALID);
	skim_all(&s, "{\"id\":1.5}");
	assert_int_equal(s.id_state, CDP_SKIM_INVALID);
	skim_all(&s, "{\"id\":\"7\"}");
	assert_int_equal(s.id_state, CDP_SKIM_INVALID);
	skim_all(&s, "{\"id\":1,\"id\":2}");
	assert_int_equal(s.id_state, CDP_SKIM_INVALID);
	skim_all(&s, "{\"id\":99999999999999999999}");
	assert_int_equal(s.id_state, CDP_SKIM_INVALID);
	skim_all(&s, "{\"method\":\"A\\u0042\"}");
	assert_int_equal(s.method_state, CDP_SKIM_INVALID);
	skim_all(&s, "[{\"id\":1}]");
	assert_true(s.bad);
	skim_all(&s, "{\"id\":1}{\"id\":1}");
	assert_true(s.bad);
	skim_all(&s, "{\"id\":3");
	assert_false(s.ended);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_handler_types),
		cmocka_unit_test(test_handler_correlation),
		cmocka_unit_test(test_listener_off_during_dispatch),
		cmocka_unit_test(test_rx_ceiling),
		cmocka_unit_test(test_skim),
		cmocka_unit_test(test_connect_failures),
		cmocka_unit_test(test_events_routed_and_armed_wait),
		cmocka_unit_test(test_out_of_order_replies),
		cmocka_unit_test(test_protocol_error),
		cmocka_unit_test(test_deadline),
		cmocka_unit_test(test_cancel_from_other_thread),
		cmocka_unit_test(test_peer_closes),
		cmocka_unit_test(test_oversized_screenshot),
		cmocka_unit_test(test_oversized_fragments),
		cmocka_unit_test(test_malformed_ignored),
		cmocka_unit_test(test_handler_lone_surrogates),
		cmocka_unit_test(test_service_until_done),
	};

	lws_set_log_level(LLL_ERR, NULL);
	if (!getenv("GLASSBOX_LOG"))
		gb_log_set_level(GB_LOG_ERROR);
	return cmocka_run_group_tests(tests, NULL, NULL);
}

/*
 * relay.c - the policed CDP relay: its thread, its loop, and the path of
 * each message (relay.h, docs/cdp.md).
 *
 * Design note
 * - Owns: one thread per connected client, two websockets (wsio.c), the
 *   client's calls in flight, the relay's own calls (element probes) on
 *   ids the client cannot use, and the camera (camera.c): evidence
 *   screenshots on a third websocket and a thread of their own.
 * - Client -> browser: each message is parsed (jansson) and checked: an
 *   object with an integer id, a method, an optional sessionId and params.
 *   The allowlist (filter.c) forwards it as sent, rewrites it, or answers
 *   with a CDP error naming the rule; input that needs its element probed
 *   is held (observe.c) and nothing else is read from the client until it
 *   is decided, so the order of the client's commands is kept.
 * - Browser -> client: replies and events pass byte for byte; the relay
 *   looks at them for evidence (navigations, new targets) and takes the
 *   replies to its own calls out of the stream. Only those are parsed:
 *   the others are known by their first member (peek.c) and pass unread.
 * - Invariants: a message from a client never reaches the browser without
 *   passing relay_filter; a client sees no reply to a call it did not
 *   make; a failed client or browser ends this relay only.
 */
#include "relay/relay-private.h"

#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include "common/log.h"
#include "common/util.h"

#define MOD "relay"

/* ---- references and the stop ------------------------------------------ */

/* See relay.h. */
struct relay *relay_ref(struct relay *r)
{
	if (r)
		atomic_fetch_add(&r->refs, 1);
	return r;
}

static void relay_free(struct relay *r)
{
	size_t i;

	if (r->wake_fd >= 0)
		close(r->wake_fd);
	json_decref(r->held.msg);
	free(r->held.raw);
	while (r->backlog) {
		struct relay_backlog *b = r->backlog;

		r->backlog = b->next;
		free(b);
	}
	for (i = 0; i < r->ncontexts; i++)
		free(r->contexts[i]);
	pthread_mutex_destroy(&r->lock);
	pthread_cond_destroy(&r->cond);
	free(r->who);
	free(r->endpoint);
	free(r->extra);
	free(r);
}

/* See relay.h. */
void relay_unref(struct relay *r)
{
	if (r && atomic_fetch_sub(&r->refs, 1) == 1)
		relay_free(r);
}

/* See relay.h. */
void relay_stop(struct relay *r)
{
	uint64_t one = 1;

	if (!r || atomic_exchange(&r->stop, 1))
		return;
	if (write(r->wake_fd, &one, sizeof(one)) < 0 && errno != EAGAIN)
		GB_LOGW(MOD, "the relay could not be woken: %s", strerror(errno));
}

/* See relay.h. */
void relay_wait(struct relay *r)
{
	pthread_mutex_lock(&r->lock);
	while (!r->finished)
		pthread_cond_wait(&r->cond, &r->lock);
	pthread_mutex_unlock(&r->lock);
}

/* See relay.h. */
int relay_done(struct relay *r)
{
	int done;

	pthread_mutex_lock(&r->lock);
	done = r->finished;
	pthread_mutex_unlock(&r->lock);
	return done;
}

/* ---- messages ------------------------------------------------------------ */

/* See relay-private.h. */
void relay_record(struct relay *r, const char *kind, json_t *body)
{
	if (!body)
		return;
	json_object_set_new(body, "endpoint", json_string(r->endpoint));
	r->opt.hooks.record(r->opt.hooks.user, kind, body);
}

/* See relay-private.h. */
void relay_reply_error(struct relay *r, json_t *id, const char *sid, int code, const char *msg)
{
	json_t *m = json_pack("{s:{s:i, s:s}}", "error", "code", code, "message", msg);

	if (!m)
		return;
	if (id)
		json_object_set(m, "id", id);
	if (sid && sid[0])
		json_object_set_new(m, "sessionId", json_string(sid));
	relay_send_client_json(r, m);
	json_decref(m);
}

/* See relay-private.h. */
void relay_forward(struct relay *r, json_t *msg, const char *raw, size_t len)
{
	struct relay_call *c = &r->calls[r->ncalls++];
	char *text = NULL;

	c->id = json_integer_value(json_object_get(msg, "id"));
	snprintf(c->method, sizeof(c->method), "%s",
	         json_string_value(json_object_get(msg, "method")));
	snprintf(c->sid, sizeof(c->sid), "%s",
	         gb_or(json_string_value(json_object_get(msg, "sessionId")), ""));
	if (!raw) {
		text = json_dumps(msg, JSON_COMPACT);
		raw = text;
		len = text ? strlen(text) : 0;
	}
	if (raw)
		relay_send_browser(r, raw, len);
	free(text);
}

/* See relay-private.h. */
int64_t relay_own_send(struct relay *r, const char *sid, const char *method, json_t *params,
                       enum relay_own_kind kind)
{
	struct relay_own *o;
	char *text;
	json_t *m;
	int64_t id;

	if (r->nown >= RELAY_MAX_OWN) {
		json_decref(params);
		return -1;
	}
	id = RELAY_OWN_ID_BASE + r->next_own++;
	if (r->next_own > 1000000000LL)
		r->next_own = 0;
	m = json_pack("{s:I, s:s, s:o}", "id", (json_int_t)id, "method", method, "params",
	              params ? params : json_object());
	if (!m)
		return -1;
	if (sid && sid[0])
		json_object_set_new(m, "sessionId", json_string(sid));
	text = json_dumps(m, JSON_COMPACT);
	if (text)
		relay_send_browser(r, text, strlen(text));
	free(text);
	json_decref(m);
	o = &r->own[r->nown++];
	o->id = id;
	o->kind = kind;
	snprintf(o->sid, sizeof(o->sid), "%s", sid ? sid : "");
	return id;
}

/* See relay-private.h. */
void relay_own_forget(struct relay *r, int64_t id)
{
	size_t i;

	for (i = 0; i < r->nown; i++) {
		if (r->own[i].id == id) {
			r->own[i] = r->own[--r->nown];
			return;
		}
	}
}

/* The client's message is not one the relay can pass: a CDP error. */
static int check_shape(struct relay *r, json_t *m, const char **method, const char **sid)
{
	json_t *id = json_object_get(m, "id");
	json_t *params = json_object_get(m, "params");
	json_t *s = json_object_get(m, "sessionId");

	*method = json_string_value(json_object_get(m, "method"));
	*sid = s ? json_string_value(s) : "";
	if (!json_is_integer(id) || json_integer_value(id) < 0 ||
	    json_integer_value(id) > RELAY_CLIENT_ID_MAX) {
		relay_reply_error(r, json_is_integer(id) ? id : NULL, NULL, -32600,
		                  "glassbox: \"id\" must be a whole number from 0 to 999999999 "
		                  "(larger ids are the relay's own)");
		return -1;
	}
	if (!*method || !(*method)[0] || strlen(*method) >= 64) {
		relay_reply_error(
		    r, id, NULL, -32600,
		    "glassbox: \"method\" must be a string such as \"Page.navigate\"");
		return -1;
	}
	if (!*sid || strlen(*sid) >= RELAY_SID_MAX) {
		relay_reply_error(r, id, NULL, -32600,
		                  "glassbox: \"sessionId\" must be a string naming an attached "
		                  "session");
		return -1;
	}
	if (params && !json_is_object(params)) {
		relay_reply_error(r, id, *sid, -32602, "glassbox: \"params\" must be an object");
		return -1;
	}
	return 0;
}

/* The client's contexts, for the filter's scope. */
static void scope_of(struct relay *r, struct relay_scope *sc)
{
	sc->context_id = r->br.context_id;
	sc->proxy_server = r->br.proxy_server;
	sc->downloads_dir = r->br.downloads_dir;
	sc->client_contexts = (const char *const *)r->contexts;
	sc->n_client_contexts = r->ncontexts;
}

/* Takes one client message now (the relay can). */
static void take_client_message(struct relay *r, const uint8_t *data, size_t len)
{
	struct relay_scope sc;
	json_error_t je;
	json_t *m = json_loadb((const char *)data, len, JSON_REJECT_DUPLICATES, &je);
	json_t *params;
	const char *method, *sid;
	char rule[48], why[256], msg[600];
	enum relay_verdict v;

	r->messages++;
	if (!json_is_object(m)) {
		snprintf(msg, sizeof(msg),
		         "glassbox: the message is not a JSON object (%.120s, at byte %d): send "
		         "one CDP command per websocket message",
		         m ? "another JSON value" : je.text, m ? 0 : je.position);
		relay_reply_error(r, NULL, NULL, -32700, msg);
		goto out;
	}
	if (check_shape(r, m, &method, &sid) < 0)
		goto out;
	params = json_object_get(m, "params");
	scope_of(r, &sc);
	v = relay_filter(&sc, method, params, sid, rule, sizeof(rule), why, sizeof(why));
	if (v == RELAY_REFUSE) {
		r->refused++;
		snprintf(msg, sizeof(msg), "glassbox refused %s (rule %s): %s", method, rule, why);
		relay_reply_error(r, json_object_get(m, "id"), sid, -32000, msg);
		relay_record(
		    r, "cdp_refused",
		    json_pack("{s:s, s:s, s:s}", "method", method, "rule", rule, "reason", why));
		goto out;
	}
	if (v == RELAY_FORWARD && relay_observe_hold_input(r, m, (const char *)data, len))
		goto out;
	relay_forward(r, m, v == RELAY_FORWARD ? (const char *)data : NULL, len);
out:
	json_decref(m);
}

/* See relay-private.h. */
void relay_on_client_message(struct relay *r, const uint8_t *data, size_t len)
{
	struct relay_backlog *b;

	if (relay_client_readable(r)) {
		take_client_message(r, data, len);
		return;
	}
	b = malloc(sizeof(*b) + len);
	if (!b) {
		relay_reply_error(r, NULL, NULL, -32603, "glassbox: out of memory: send it again");
		return;
	}
	b->next = NULL;
	b->len = len;
	memcpy(b->data, data, len);
	if (r->backlog_tail)
		r->backlog_tail->next = b;
	else
		r->backlog = b;
	r->backlog_tail = b;
}

/* See relay-private.h. */
void relay_drain_backlog(struct relay *r)
{
	struct relay_backlog *b;

	while (r->backlog && !r->holding && r->ncalls < RELAY_MAX_INFLIGHT) {
		b = r->backlog;
		r->backlog = b->next;
		if (!r->backlog)
			r->backlog_tail = NULL;
		take_client_message(r, b->data, b->len);
		free(b);
	}
}

/* Notes what a reply to one of the client's calls says about its scope. */
static void after_reply(struct relay *r, const struct relay_call *c, json_t *reply)
{
	const char *ctx;

	if (!strcmp(c->method, "Target.createBrowserContext") &&
	    r->ncontexts < RELAY_MAX_CONTEXTS) {
		ctx = json_string_value(
		    json_object_get(json_object_get(reply, "result"), "browserContextId"));
		if (ctx)
			r->contexts[r->ncontexts++] = strdup(ctx);
	}
}

/* 1 when the reply to c tells the relay something (after_reply). */
static int reply_looked_at(const struct relay_call *c)
{
	return !strcmp(c->method, "Target.createBrowserContext");
}

/* Passes a browser message the relay has no need to read to the client
 * as it is, from its first member alone (peek.c), and returns 1; 0 when it
 * must be parsed: the relay's own replies, replies it looks at, events the
 * evidence needs, and any message peek does not recognise. */
static int pass_unread(struct relay *r, const uint8_t *data, size_t len)
{
	char method[64];
	int64_t id;
	size_t i;

	switch (relay_peek_browser(data, len, &id, method, sizeof(method))) {
	case RELAY_PEEK_EVENT:
		if (relay_observe_wants(method))
			return 0;
		break;
	case RELAY_PEEK_REPLY:
		if (id >= RELAY_OWN_ID_BASE)
			return 0;
		for (i = 0; i < r->ncalls && r->calls[i].id != id; i++)
			;
		if (i < r->ncalls) {
			if (reply_looked_at(&r->calls[i]))
				return 0;
			r->calls[i] = r->calls[--r->ncalls];
		}
		break;
	default:
		return 0;
	}
	relay_send_client(r, (const char *)data, len);
	return 1;
}

/* See relay-private.h. */
void relay_on_browser_message(struct relay *r, const uint8_t *data, size_t len)
{
	json_t *m = NULL;
	json_t *id;
	int64_t v;
	size_t i;

	if (pass_unread(r, data, len))
		return;
	m = json_loadb((const char *)data, len, 0, NULL);
	id = json_object_get(m, "id");
	if (!json_is_object(m)) {
		GB_LOGW(MOD, "the browser sent a message that is not JSON: dropped");
		goto out;
	}
	if (!id) {
		relay_observe_event(r,
		                    gb_or(json_string_value(json_object_get(m, "sessionId")), ""),
		                    gb_or(json_string_value(json_object_get(m, "method")), ""),
		                    json_object_get(m, "params"));
		relay_send_client(r, (const char *)data, len);
		goto out;
	}
	v = json_integer_value(id);
	if (v >= RELAY_OWN_ID_BASE) {
		for (i = 0; i < r->nown; i++) {
			if (r->own[i].id != v)
				continue;
			{
				struct relay_own own = r->own[i];

				r->own[i] = r->own[--r->nown];
				relay_observe_own_reply(r, &own, m);
			}
			break;
		}
		goto out;
	}
	for (i = 0; i < r->ncalls; i++) {
		if (r->calls[i].id != v)
			continue;
		if (reply_looked_at(&r->calls[i]))
			after_reply(r, &r->calls[i], m);
		r->calls[i] = r->calls[--r->ncalls];
		break;
	}
	relay_send_client(r, (const char *)data, len);
out:
	json_decref(m);
}

/* ---- the thread ---------------------------------------------------------- */

/* Writes what is queued to the client for up to ms (a close frame). */
static void flush_client(struct relay *r, int ms)
{
	int64_t deadline = gb_now_ms() + ms;
	struct pollfd p = { .fd = r->cfd, .events = POLLOUT };

	while (wslay_event_want_write(r->cws) && gb_now_ms() < deadline) {
		if (wslay_event_send(r->cws) != 0)
			break;
		if (wslay_event_want_write(r->cws))
			poll(&p, 1, 50);
	}
}

/* After the close frame: no more from us (FIN), and what the client still
 * sends is read and dropped until it closes too, for at most ms. Closing
 * with its bytes unread would reset the connection, and the client could
 * lose the close frame to that reset (a frame over the ceiling is cut off
 * while it is still being sent). */
static void linger_client(struct relay *r, int ms)
{
	int64_t deadline = gb_now_ms() + ms;
	struct pollfd p = { .fd = r->cfd, .events = POLLIN };
	char drop[16384];

	if (shutdown(r->cfd, SHUT_WR) < 0)
		return;
	while (gb_now_ms() < deadline) {
		ssize_t n;

		if (poll(&p, 1, (int)(deadline - gb_now_ms())) <= 0)
			break;
		n = read(r->cfd, drop, sizeof(drop));
		if (n <= 0 && !(n < 0 && (errno == EINTR || errno == EAGAIN)))
			break;
	}
}

/* Tells the client why the relay ends (close frame), and ends it. */
static void close_client(struct relay *r, uint16_t code, const char *reason)
{
	snprintf(r->end_reason, sizeof(r->end_reason), "%s", reason);
	wslay_event_queue_close(r->cws, code, (const uint8_t *)reason,
	                        strlen(reason) > 120 ? 120 : strlen(reason));
	flush_client(r, 1000);
	linger_client(r, RELAY_LINGER_MS);
}

/* The poll loop; returns when either side closed or the relay stopped. */
static void run_loop(struct relay *r)
{
	struct pollfd fds[3];
	int timeout;

	for (;;) {
		if (atomic_load(&r->stop)) {
			close_client(r, 1001, "the session ended");
			return;
		}
		if (!wslay_event_want_read(r->cws) && !wslay_event_want_write(r->cws)) {
			/* our close frame is out and the client has not answered it:
			 * wslay closes a message over the ceiling itself (1009) while
			 * the rest of it is still coming, which is drained, not reset */
			if (wslay_event_get_close_sent(r->cws) &&
			    !wslay_event_get_close_received(r->cws)) {
				if (wslay_event_get_status_code_sent(r->cws) == 1009)
					snprintf(r->end_reason, sizeof(r->end_reason),
					         "the client sent a message over %zu bytes",
					         r->opt.max_message_bytes);
				else
					snprintf(
					    r->end_reason, sizeof(r->end_reason),
					    "the client's websocket was closed (%u)",
					    (unsigned)wslay_event_get_status_code_sent(r->cws));
				linger_client(r, RELAY_LINGER_MS);
				return;
			}
			snprintf(r->end_reason, sizeof(r->end_reason), "the client closed");
			return;
		}
		if (!wslay_event_want_read(r->bws)) {
			close_client(r, 1011, "the browser closed its DevTools connection");
			return;
		}
		fds[0].fd = r->cfd;
		fds[0].events =
		    (short)((relay_client_readable(r) && wslay_event_want_read(r->cws) ? POLLIN
		                                                                       : 0) |
		            (wslay_event_want_write(r->cws) ? POLLOUT : 0));
		fds[1].fd = r->bfd;
		fds[1].events = (short)((relay_browser_readable(r) ? POLLIN : 0) |
		                        (wslay_event_want_write(r->bws) ? POLLOUT : 0));
		fds[2].fd = r->wake_fd;
		fds[2].events = POLLIN;
		fds[0].revents = fds[1].revents = fds[2].revents = 0;
		timeout = 1000;
		if (r->holding) {
			int64_t left = r->held.deadline_ms - gb_now_ms();

			timeout = left < 0 ? 0 : (left < 1000 ? (int)left : 1000);
		}
		if (r->extra_off < r->extra_len)
			timeout = 0;
		if (poll(fds, 3, timeout) < 0 && errno != EINTR) {
			snprintf(r->end_reason, sizeof(r->end_reason), "poll failed: %s",
			         strerror(errno));
			return;
		}
		if (r->holding && gb_now_ms() >= r->held.deadline_ms)
			relay_observe_probe_timeout(r);
		if ((fds[0].revents & (POLLIN | POLLHUP | POLLERR)) ||
		    r->extra_off < r->extra_len) {
			if (wslay_event_recv(r->cws) != 0) {
				snprintf(
				    r->end_reason, sizeof(r->end_reason),
				    "the client's connection failed or sent a frame over %zu bytes",
				    r->opt.max_message_bytes);
				wslay_event_queue_close(r->cws, 1009, NULL, 0);
				flush_client(r, 500);
				linger_client(r, RELAY_LINGER_MS);
				return;
			}
		}
		if (fds[1].revents & (POLLIN | POLLHUP | POLLERR)) {
			if (wslay_event_recv(r->bws) != 0) {
				close_client(r, 1011, "the browser closed its DevTools connection");
				return;
			}
		}
		relay_drain_backlog(r);
		if (wslay_event_want_write(r->bws) && wslay_event_send(r->bws) != 0) {
			close_client(r, 1011, "the browser's DevTools connection failed");
			return;
		}
		if (wslay_event_want_write(r->cws) && wslay_event_send(r->cws) != 0) {
			snprintf(r->end_reason, sizeof(r->end_reason), "the client went away");
			return;
		}
	}
}

static void *relay_main(void *arg)
{
	struct relay *r = arg;
	char err[512] = "";

	struct relay_camera_counts shots = { 0, 0, 0 };

	r->cfd = r->opt.client_fd;
	r->bfd = -1;
	r->br.fd = -1;
	r->br.camera_fd = -1;
	if (relay_ws_init(r, err, sizeof(err)) < 0) {
		snprintf(r->end_reason, sizeof(r->end_reason), "%s", err);
		goto out;
	}
	if (r->opt.hooks.browser(r->opt.hooks.user, &r->stop, &r->br, err, sizeof(err)) < 0) {
		close_client(r, 1011, err);
		goto out;
	}
	r->bfd = r->br.fd;
	if (relay_browser_handshake(r, err, sizeof(err)) < 0) {
		close_client(r, 1011, err);
		goto out;
	}
	/* no client without its evidence: the camera or nothing */
	if (relay_camera_start(r, r->br.camera_fd, &r->camera, err, sizeof(err)) < 0) {
		r->br.camera_fd = -1;
		close_client(r, 1011, err);
		goto out;
	}
	r->br.camera_fd = -1;
	relay_record(
	    r, "cdp_connected",
	    json_pack("{s:s, s:s}", "client", r->who, "browser_session", r->br.browser_session));
	GB_LOGI(MOD, "a CDP client (%s) is connected to session %.8s", r->who, r->endpoint);
	run_loop(r);
	relay_camera_stop(r->camera, RELAY_CAMERA_DRAIN_MS, &shots);
	r->camera = NULL;
	relay_record(
	    r, "cdp_disconnected",
	    json_pack("{s:s, s:I, s:I, s:I, s:I, s:I, s:I, s:I}", "reason", r->end_reason,
	              "messages", (json_int_t)r->messages, "refused", (json_int_t)r->refused,
	              "inputs", (json_int_t)r->inputs, "navigations", (json_int_t)r->navigations,
	              "screenshots", (json_int_t)shots.taken, "screenshots_joined",
	              (json_int_t)shots.joined, "screenshots_failed", (json_int_t)shots.failed));
	GB_LOGI(MOD, "the CDP client of session %.8s is gone: %s", r->endpoint, r->end_reason);
	goto done;
out:
	GB_LOGW(MOD, "the CDP client (%s) of session %.8s could not be served: %s", r->who,
	        r->endpoint, r->end_reason);
done:
	relay_camera_stop(r->camera, 0, NULL);
	r->camera = NULL;
	if (r->br.camera_fd >= 0)
		close(r->br.camera_fd);
	relay_ws_free(r);
	if (r->bfd >= 0)
		close(r->bfd);
	if (r->opt.hooks.ended)
		r->opt.hooks.ended(r->opt.hooks.user);
	pthread_mutex_lock(&r->lock);
	r->finished = 1;
	pthread_cond_broadcast(&r->cond);
	pthread_mutex_unlock(&r->lock);
	relay_unref(r);
	return NULL;
}

/* See relay.h. */
int relay_start(const struct relay_options *o, struct relay **out, char *err, size_t errlen)
{
	struct relay *r = calloc(1, sizeof(*r));
	pthread_attr_t attr;

	*out = NULL;
	if (!r) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	r->opt = *o;
	if (!r->opt.max_message_bytes)
		r->opt.max_message_bytes = RELAY_DEFAULT_MAX_MESSAGE;
	if (r->opt.screenshot_every_s < 1)
		r->opt.screenshot_every_s = 5;
	r->who = strdup(gb_or(o->who, "unknown"));
	r->endpoint = strdup(gb_or(o->endpoint, ""));
	if (o->extra_in_len) {
		r->extra = malloc(o->extra_in_len);
		if (r->extra) {
			memcpy(r->extra, o->extra_in, o->extra_in_len);
			r->extra_len = o->extra_in_len;
		}
	}
	atomic_init(&r->refs, 2); /* the caller's and the thread's */
	atomic_init(&r->stop, 0);
	pthread_mutex_init(&r->lock, NULL);
	pthread_cond_init(&r->cond, NULL);
	r->wake_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	pthread_attr_init(&attr);
	pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	if (r->wake_fd < 0 || !r->who || !r->endpoint ||
	    pthread_create(&r->thread, &attr, relay_main, r) != 0) {
		pthread_attr_destroy(&attr);
		snprintf(err, errlen, "the relay's thread could not be started");
		atomic_store(&r->refs, 1);
		relay_unref(r);
		return -1;
	}
	pthread_attr_destroy(&attr);
	*out = r;
	return 0;
}

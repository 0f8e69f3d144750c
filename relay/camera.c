/*
 * camera.c - the relay's evidence screenshots, off the client's frame path
 * (relay-private.h, docs/cdp.md).
 *
 * Design note
 * - Owns: one thread and one DevTools connection of its own to the
 *   session's browser (a second socket the browser hook handed over), on
 *   which it attaches to each page it photographs (Target.attachToTarget,
 *   flattened, once per page) and takes Page.captureScreenshot.
 * - Why a connection and a thread of its own: a screenshot takes Chromium
 *   tens of milliseconds and its reply is hundreds of kilobytes. Sent on
 *   the client's CDP session through the relay's socket, it put the
 *   client's next commands behind it (in the page's session and in the
 *   socket's stream) and had the relay's thread parse and decode it while
 *   the client's frames waited. Here the relay's thread only posts a
 *   request (relay_camera_request, never waits); nothing of the camera
 *   travels on the client's socket, the relay's browser socket or the
 *   client's sessions.
 * - Coalescing: one capture runs at a time; at most one request waits per
 *   page, and a newer one for that page joins it (the screenshot, taken
 *   later, shows the later state; a navigation's reason wins, since every
 *   navigation must have its screenshot). Requests wait in arrival order.
 *   A page that loads again while its capture runs supersedes it: Chromium
 *   may never answer a capture of a document it has left, and the new
 *   request shows the page as it is now; the capture left behind counts as
 *   joined, and its late answer (if any) is ignored.
 * - Threads: relay_camera_request, relay_camera_forget and
 *   relay_camera_stop are called from the relay's thread (the first two
 *   take c->lock); everything else runs on the camera's thread. The hooks it
 *   calls (screenshot, record) are thread-safe (relay.h).
 */
#include "relay/relay-private.h"

#include <errno.h>
#include <poll.h>
#include <sodium.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "common/log.h"
#include "common/util.h"

#define MOD "relay"
/* A capture (or the attach before it) that has not answered by then is
 * given up and recorded as failed evidence. */
#define CAMERA_CALL_TIMEOUT_MS 15000

/* A screenshot waiting to be taken. */
struct camera_request {
	char target_id[64];
	char why[32];
	char url[2048];
	uint64_t seq; /* arrival order */
	int used;
};

/* A page the camera is attached to. */
struct camera_page {
	char target_id[64];
	char sid[RELAY_SID_MAX];
};

enum camera_call { CAMERA_IDLE = 0, CAMERA_ATTACH, CAMERA_SHOT };

struct relay_camera {
	struct relay *r; /* borrowed: outlives the camera */
	pthread_t thread;
	pthread_mutex_t lock;
	int wake_fd; /* eventfd: a request or the stop */
	atomic_int stop;
	int64_t drain_until_ms; /* once stop rose: requests still taken until then */

	struct camera_request waiting[RELAY_MAX_PAGES]; /* {lock} */
	uint64_t next_seq;                              /* {lock} */
	unsigned long taken, joined, failed;            /* {lock} */

	/* the camera's thread only */
	int fd;
	wslay_event_context_ptr ws;
	struct relay_ws_plain plain;
	struct camera_page pages[RELAY_MAX_PAGES];
	size_t npages;
	enum camera_call call;
	int64_t call_id, next_id, call_deadline_ms;
	struct camera_request current;
};

static void wake(struct relay_camera *c)
{
	uint64_t one = 1;

	if (write(c->wake_fd, &one, sizeof(one)) < 0 && errno != EAGAIN)
		GB_LOGW(MOD, "the camera could not be woken: %s", strerror(errno));
}

/* See relay-private.h. */
void relay_camera_request(struct relay_camera *c, const char *target_id, const char *why,
                          const char *url)
{
	struct camera_request *q = NULL;
	size_t i;

	if (!c || !target_id || !target_id[0])
		return;
	pthread_mutex_lock(&c->lock);
	for (i = 0; i < RELAY_MAX_PAGES; i++) {
		if (c->waiting[i].used && !strcmp(c->waiting[i].target_id, target_id)) {
			q = &c->waiting[i];
			break;
		}
	}
	if (q) {
		/* joins the one that waits: one screenshot, taken later */
		c->joined++;
		if (strcmp(q->why, "navigation"))
			snprintf(q->why, sizeof(q->why), "%s", why);
		snprintf(q->url, sizeof(q->url), "%s", url ? url : "");
	} else {
		for (i = 0; i < RELAY_MAX_PAGES && c->waiting[i].used; i++)
			;
		if (i < RELAY_MAX_PAGES) {
			q = &c->waiting[i];
			q->used = 1;
			q->seq = c->next_seq++;
			snprintf(q->target_id, sizeof(q->target_id), "%s", target_id);
			snprintf(q->why, sizeof(q->why), "%s", why);
			snprintf(q->url, sizeof(q->url), "%s", url ? url : "");
		} else {
			c->failed++;
		}
	}
	pthread_mutex_unlock(&c->lock);
	if (q)
		wake(c);
	else
		relay_record(c->r, "evidence_failed",
		             json_pack("{s:s, s:s, s:s, s:s}", "what", "cdp screenshot",
		                       "screenshot", why, "url", url ? url : "", "reason",
		                       "too many pages wait for a screenshot"));
}

/* See relay-private.h. */
void relay_camera_forget(struct relay_camera *c, const char *target_id)
{
	size_t i;

	if (!c || !target_id)
		return;
	pthread_mutex_lock(&c->lock);
	for (i = 0; i < RELAY_MAX_PAGES; i++)
		if (c->waiting[i].used && !strcmp(c->waiting[i].target_id, target_id))
			c->waiting[i].used = 0;
	pthread_mutex_unlock(&c->lock);
}

/* 1 when a navigation of the page being captured waits: the capture in
 * flight is of a document the page has left. */
static int superseded(struct relay_camera *c)
{
	size_t i;
	int yes = 0;

	pthread_mutex_lock(&c->lock);
	for (i = 0; i < RELAY_MAX_PAGES && !yes; i++)
		yes = c->waiting[i].used && !strcmp(c->waiting[i].why, "navigation") &&
		      !strcmp(c->waiting[i].target_id, c->current.target_id);
	if (yes)
		c->joined++;
	pthread_mutex_unlock(&c->lock);
	return yes;
}

/* Takes the oldest waiting request into c->current; 0 when none waits. */
static int take_next(struct relay_camera *c)
{
	struct camera_request *best = NULL;
	size_t i;

	pthread_mutex_lock(&c->lock);
	for (i = 0; i < RELAY_MAX_PAGES; i++)
		if (c->waiting[i].used && (!best || c->waiting[i].seq < best->seq))
			best = &c->waiting[i];
	if (best) {
		c->current = *best;
		best->used = 0;
	}
	pthread_mutex_unlock(&c->lock);
	return best != NULL;
}

static struct camera_page *page_of(struct relay_camera *c, const char *target_id)
{
	size_t i;

	for (i = 0; i < c->npages; i++)
		if (!strcmp(c->pages[i].target_id, target_id))
			return &c->pages[i];
	return NULL;
}

static void drop_page(struct relay_camera *c, struct camera_page *p)
{
	*p = c->pages[--c->npages];
}

/* Sends a call of the camera's (params stolen) and waits for it. */
static void send_call(struct relay_camera *c, enum camera_call kind, const char *sid,
                      const char *method, json_t *params)
{
	json_t *m = json_pack("{s:I, s:s, s:o}", "id", (json_int_t)c->next_id, "method", method,
	                      "params", params ? params : json_object());
	char *text;

	if (m && sid)
		json_object_set_new(m, "sessionId", json_string(sid));
	text = m ? json_dumps(m, JSON_COMPACT) : NULL;
	json_decref(m);
	if (!text)
		return;
	relay_ws_queue_text(c->ws, text, strlen(text));
	free(text);
	c->call = kind;
	c->call_id = c->next_id++;
	c->call_deadline_ms = gb_now_ms() + CAMERA_CALL_TIMEOUT_MS;
}

/* Starts the capture of c->current: attaches first when needed. */
static void start_capture(struct relay_camera *c)
{
	struct camera_page *p = page_of(c, c->current.target_id);

	if (p)
		send_call(c, CAMERA_SHOT, p->sid, "Page.captureScreenshot",
		          json_pack("{s:s, s:b}", "format", "png", "optimizeForSpeed", 1));
	else
		send_call(c, CAMERA_ATTACH, NULL, "Target.attachToTarget",
		          json_pack("{s:s, s:b}", "targetId", c->current.target_id, "flatten", 1));
}

/* The screenshot could not be taken: recorded as failed evidence. */
static void capture_failed(struct relay_camera *c, const char *reason)
{
	pthread_mutex_lock(&c->lock);
	c->failed++;
	pthread_mutex_unlock(&c->lock);
	relay_record(c->r, "evidence_failed",
	             json_pack("{s:s, s:s, s:s, s:s}", "what", "cdp screenshot", "screenshot",
	                       c->current.why, "url", c->current.url, "reason", reason));
	c->call = CAMERA_IDLE;
}

/* Hands the PNG in reply's base64 to the screenshot hook. */
static void keep_shot(struct relay_camera *c, const char *b64)
{
	size_t b64len = strlen(b64), len = 0;
	unsigned char *png = malloc(b64len / 4 * 3 + 3);

	if (!png || sodium_base642bin(png, b64len / 4 * 3 + 3, b64, b64len, NULL, &len, NULL,
	                              sodium_base64_VARIANT_ORIGINAL) != 0) {
		free(png);
		capture_failed(c, png ? "the screenshot was not base64" : "out of memory");
		return;
	}
	pthread_mutex_lock(&c->lock);
	c->taken++;
	pthread_mutex_unlock(&c->lock);
	c->r->opt.hooks.screenshot(c->r->opt.hooks.user, c->current.why, c->current.url, png, len);
	c->call = CAMERA_IDLE;
}

/* One whole message from the browser (the camera's thread). */
static void on_message(void *user, const uint8_t *data, size_t len)
{
	struct relay_camera *c = user;
	json_t *m = json_loadb((const char *)data, len, 0, NULL);
	json_t *res = json_object_get(m, "result");
	const char *err =
	    json_string_value(json_object_get(json_object_get(m, "error"), "message"));
	const char *sid;
	struct camera_page *p;
	size_t i;

	if (!json_is_integer(json_object_get(m, "id")) ||
	    json_integer_value(json_object_get(m, "id")) != c->call_id || c->call == CAMERA_IDLE) {
		if (!strcmp(gb_or(json_string_value(json_object_get(m, "method")), ""),
		            "Target.detachedFromTarget")) {
			sid = json_string_value(
			    json_object_get(json_object_get(m, "params"), "sessionId"));
			for (i = 0; sid && i < c->npages; i++)
				if (!strcmp(c->pages[i].sid, sid)) {
					drop_page(c, &c->pages[i]);
					break;
				}
		}
		goto out;
	}
	if (c->call == CAMERA_ATTACH) {
		sid = json_string_value(json_object_get(res, "sessionId"));
		if (!sid || strlen(sid) >= RELAY_SID_MAX || c->npages >= RELAY_MAX_PAGES) {
			capture_failed(c, err ? err : "the page could not be attached to");
			goto out;
		}
		p = &c->pages[c->npages++];
		snprintf(p->target_id, sizeof(p->target_id), "%s", c->current.target_id);
		snprintf(p->sid, sizeof(p->sid), "%s", sid);
		start_capture(c);
		goto out;
	}
	if (!json_string_value(json_object_get(res, "data"))) {
		/* a page that went away: attach again next time */
		p = page_of(c, c->current.target_id);
		if (p)
			drop_page(c, p);
		capture_failed(c, err ? err : "no image");
		goto out;
	}
	keep_shot(c, json_string_value(json_object_get(res, "data")));
out:
	json_decref(m);
}

/* The camera's loop: takes requests one by one until the relay stops it
 * or the browser closes the connection. */
static void *camera_main(void *arg)
{
	struct relay_camera *c = arg;
	struct pollfd fds[2];
	uint64_t v;

	for (;;) {
		if (c->call == CAMERA_SHOT && superseded(c))
			c->call = CAMERA_IDLE;
		if (c->call == CAMERA_IDLE && take_next(c))
			start_capture(c);
		if (atomic_load(&c->stop) &&
		    (c->call == CAMERA_IDLE || gb_now_ms() > c->drain_until_ms))
			break;
		if (c->call != CAMERA_IDLE && gb_now_ms() > c->call_deadline_ms)
			capture_failed(c, "the browser did not answer in time");
		if (!wslay_event_want_read(c->ws))
			break;
		fds[0].fd = c->fd;
		fds[0].events = (short)(POLLIN | (wslay_event_want_write(c->ws) ? POLLOUT : 0));
		fds[1].fd = c->wake_fd;
		fds[1].events = POLLIN;
		fds[0].revents = fds[1].revents = 0;
		if (poll(fds, 2, atomic_load(&c->stop) ? 50 : 1000) < 0 && errno != EINTR)
			break;
		if ((fds[1].revents & POLLIN) && read(c->wake_fd, &v, sizeof(v)) < 0 &&
		    errno != EAGAIN)
			break;
		if ((fds[0].revents & (POLLIN | POLLHUP | POLLERR)) && wslay_event_recv(c->ws) != 0)
			break;
		if (wslay_event_want_write(c->ws) && wslay_event_send(c->ws) != 0)
			break;
	}
	if (c->call != CAMERA_IDLE)
		capture_failed(c, atomic_load(&c->stop) ? "the relay ended first"
		                                        : "the browser closed the connection");
	while (take_next(c))
		capture_failed(c, "the relay ended first");
	return NULL;
}

/* See relay-private.h. */
int relay_camera_start(struct relay *r, int fd, struct relay_camera **out, char *err, size_t errlen)
{
	struct relay_camera *c = calloc(1, sizeof(*c));

	*out = NULL;
	err[0] = '\0';
	if (!c) {
		snprintf(err, errlen, "out of memory");
		goto fail;
	}
	c->r = r;
	c->fd = fd;
	fd = -1;
	c->next_id = 1;
	atomic_init(&c->stop, 0);
	pthread_mutex_init(&c->lock, NULL);
	c->wake_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	c->plain.fd = c->fd;
	c->plain.on_message = on_message;
	c->plain.user = c;
	if (c->wake_fd < 0 || relay_ws_handshake(c->fd, r->br.devtools_url, err, errlen) < 0 ||
	    relay_ws_plain_init(&c->plain, &c->ws, err, errlen) < 0)
		goto fail_camera;
	if (pthread_create(&c->thread, NULL, camera_main, c) != 0) {
		snprintf(err, errlen, "the camera's thread could not be started");
		goto fail_camera;
	}
	*out = c;
	return 0;
fail_camera:
	if (!err[0])
		snprintf(err, errlen, "the camera could not be set up");
	if (c->ws)
		wslay_event_context_free(c->ws);
	if (c->wake_fd >= 0)
		close(c->wake_fd);
	if (c->fd >= 0)
		close(c->fd);
	pthread_mutex_destroy(&c->lock);
	free(c);
fail:
	if (fd >= 0)
		close(fd);
	return -1;
}

/* See relay-private.h. */
void relay_camera_stop(struct relay_camera *c, int drain_ms, struct relay_camera_counts *counts)
{
	if (!c)
		return;
	c->drain_until_ms = gb_now_ms() + drain_ms;
	atomic_store(&c->stop, 1);
	wake(c);
	pthread_join(c->thread, NULL);
	if (counts) {
		counts->taken = c->taken;
		counts->joined = c->joined;
		counts->failed = c->failed;
	}
	wslay_event_context_free(c->ws);
	close(c->wake_fd);
	close(c->fd);
	pthread_mutex_destroy(&c->lock);
	free(c);
}

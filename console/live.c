/*
 * live.c - the live state of one agent session for the web console
 * (live.h): the latest screencast frame, who has the browser, and a
 * person's input on its way to the page.
 *
 * Design note
 * - Threads: the front calls the console_live_* functions of the "front"
 *   part, the session's worker those of the "worker" part; every member
 *   is guarded by l->lock, which is never held across a CDP call or a
 *   wait. The frame listener runs on the worker (inside its CDP service).
 * - Viewers never slow the session: the worker keeps exactly one frame
 *   (the newest replaces the last), a viewer copies it; nothing queues
 *   per viewer. The screencast runs only while someone watched within
 *   CONSOLE_LIVE_VIEWER_IDLE_MS.
 * - Input is a bounded ring: a person's events beyond
 *   CONSOLE_LIVE_INPUT_MAX are refused, not queued.
 */
#include "console/live.h"

#include <pthread.h>
#include <sodium.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cdp/cdp.h"
#include "common/log.h"
#include "common/util.h"

#define MOD "console"
/* A screencast that could not be joined is tried again after this long. */
#define CAST_RETRY_MS 1000

enum control { CONTROL_AGENT, CONTROL_HUMAN };

struct console_live {
	atomic_int refs;
	pthread_mutex_t lock;
	/* the latest frame {lock} */
	unsigned char *frame;
	size_t frame_len;
	uint64_t frame_seq;
	int css_width;
	int css_height;
	int64_t viewer_ms;        /* {lock} a viewer last asked for a frame; 0: never */
	char url[2048];           /* {lock} */
	char browser_session[64]; /* {lock} */
	int frame_png;            /* {lock} the latest frame is a PNG (else a JPEG) */
	/* the screencast {lock}; cdp and page_sid are the worker's */
	struct cdp_conn *cast_cdp;
	char cast_sid[64];
	int cast_consumer; /* cdp_cast_join handle */
	int casting;
	int fps;                /* the viewers' frame rate: the live view's cap at the source */
	int64_t cast_failed_ms; /* a start failed then (no page yet): tried again a second later */
	/* who has the browser {lock} */
	enum control control;
	char by[CONSOLE_NAME_MAX];
	char credential[CONSOLE_NAME_MAX];
	int64_t since_ms;
	int began_unrecorded;
	int ended_unrecorded;
	char ended_by[CONSOLE_NAME_MAX];
	char ended_credential[CONSOLE_NAME_MAX];
	/* a person's input {lock} */
	struct console_input input[CONSOLE_LIVE_INPUT_MAX];
	size_t input_head;
	size_t input_count;
};

/* See live.h. */
struct console_live *console_live_new(void)
{
	struct console_live *l = calloc(1, sizeof(*l));

	if (!l)
		return NULL;
	atomic_init(&l->refs, 1);
	pthread_mutex_init(&l->lock, NULL);
	l->fps = 5;
	return l;
}

/* See live.h. */
void console_live_ref(struct console_live *l)
{
	atomic_fetch_add(&l->refs, 1);
}

/* See live.h. */
void console_live_unref(struct console_live *l)
{
	if (!l || atomic_fetch_sub(&l->refs, 1) != 1)
		return;
	pthread_mutex_destroy(&l->lock);
	free(l->frame);
	sodium_memzero(l->input, sizeof(l->input));
	free(l);
}

/* ---- the front --------------------------------------------------------- */

/* See live.h. */
int console_live_frame(struct console_live *l, int fps, uint64_t after, unsigned char **image,
                       size_t *len, const char **mime, uint64_t *seq, int *css_width,
                       int *css_height)
{
	int rc = 0;

	*image = NULL;
	*len = 0;
	*mime = "image/jpeg";
	pthread_mutex_lock(&l->lock);
	l->viewer_ms = gb_now_ms();
	l->fps = fps > 0 ? fps : 1;
	*seq = l->frame_seq;
	*css_width = l->css_width;
	*css_height = l->css_height;
	if (l->frame && l->frame_seq > after) {
		*image = malloc(l->frame_len);
		if (*image) {
			memcpy(*image, l->frame, l->frame_len);
			*len = l->frame_len;
			*mime = l->frame_png ? "image/png" : "image/jpeg";
			rc = 1;
		}
	}
	pthread_mutex_unlock(&l->lock);
	return rc;
}

/* See live.h. */
int console_live_take(struct console_live *l, const char *by, const char *credential, char *err,
                      size_t errlen)
{
	int rc = 0;

	pthread_mutex_lock(&l->lock);
	if (l->control == CONTROL_HUMAN) {
		snprintf(err, errlen, "%s has the browser already: ask them to hand it back",
		         l->by);
		rc = -1;
	} else {
		l->control = CONTROL_HUMAN;
		snprintf(l->by, sizeof(l->by), "%s", by);
		snprintf(l->credential, sizeof(l->credential), "%s", credential);
		l->since_ms = gb_now_ms();
		l->began_unrecorded = 1;
		l->input_count = 0;
	}
	pthread_mutex_unlock(&l->lock);
	return rc;
}

/* See live.h. */
int console_live_release(struct console_live *l, char *err, size_t errlen)
{
	int rc = 0;

	pthread_mutex_lock(&l->lock);
	if (l->control != CONTROL_HUMAN) {
		snprintf(err, errlen, "nobody has taken this session's browser: the agent has it");
		rc = -1;
	} else {
		l->control = CONTROL_AGENT;
		snprintf(l->ended_by, sizeof(l->ended_by), "%s", l->by);
		snprintf(l->ended_credential, sizeof(l->ended_credential), "%s", l->credential);
		l->ended_unrecorded = 1;
	}
	pthread_mutex_unlock(&l->lock);
	return rc;
}

/* See live.h. */
int console_live_push_input(struct console_live *l, const struct console_input *in, char *err,
                            size_t errlen)
{
	int rc = -1;

	pthread_mutex_lock(&l->lock);
	if (l->control != CONTROL_HUMAN)
		snprintf(err, errlen, "take the browser over first: the agent has it");
	else if (strcmp(l->credential, in->credential) != 0)
		snprintf(err, errlen, "%s has the browser: only they can act in it now", l->by);
	else if (l->input_count >= CONSOLE_LIVE_INPUT_MAX)
		snprintf(err, errlen,
		         "%d input events are still on their way to the page: wait a moment and "
		         "send again",
		         CONSOLE_LIVE_INPUT_MAX);
	else {
		l->input[(l->input_head + l->input_count) % CONSOLE_LIVE_INPUT_MAX] = *in;
		l->input_count++;
		rc = 0;
	}
	pthread_mutex_unlock(&l->lock);
	return rc;
}

/* See live.h. */
json_t *console_live_status(struct console_live *l)
{
	json_t *st;

	pthread_mutex_lock(&l->lock);
	st = json_pack("{s:s, s:s, s:s, s:I, s:b, s:i, s:i}", "url", l->url, "browser_session",
	               l->browser_session, "control",
	               l->control == CONTROL_HUMAN ? "human" : "agent", "frames",
	               (json_int_t)l->frame_seq, "screencast", l->casting, "css_width",
	               l->css_width, "css_height", l->css_height);
	if (st && l->control == CONTROL_HUMAN) {
		json_object_set_new(st, "by", json_string(l->by));
		json_object_set_new(st, "credential", json_string(l->credential));
		json_object_set_new(st, "for_ms", json_integer(gb_now_ms() - l->since_ms));
	}
	pthread_mutex_unlock(&l->lock);
	return st;
}

/* See live.h. */
int console_live_human(struct console_live *l, char *by, size_t bylen)
{
	int human;

	pthread_mutex_lock(&l->lock);
	human = l->control == CONTROL_HUMAN;
	if (human && by)
		snprintf(by, bylen, "%s", l->by);
	pthread_mutex_unlock(&l->lock);
	return human;
}

/* ---- the worker -------------------------------------------------------- */

/* Whether someone watched lately, under the lock. */
static int watched_locked(const struct console_live *l, int64_t now)
{
	return l->viewer_ms && now - l->viewer_ms < CONSOLE_LIVE_VIEWER_IDLE_MS;
}

/* See live.h. */
int console_live_has_work(struct console_live *l)
{
	int64_t now;
	int work;

	pthread_mutex_lock(&l->lock);
	now = gb_now_ms();
	work = l->input_count > 0 || l->began_unrecorded || l->ended_unrecorded ||
	       (watched_locked(l, now) != l->casting &&
	        (l->casting || now - l->cast_failed_ms >= CAST_RETRY_MS));
	pthread_mutex_unlock(&l->lock);
	return work;
}

/* See live.h. */
void console_live_set_page(struct console_live *l, const char *url, const char *browser_session)
{
	pthread_mutex_lock(&l->lock);
	snprintf(l->url, sizeof(l->url), "%s", url ? url : "");
	if (browser_session)
		snprintf(l->browser_session, sizeof(l->browser_session), "%s", browser_session);
	pthread_mutex_unlock(&l->lock);
}

/* cdp_cast_fn: keeps the frame, replacing the last one. */
static void on_frame(void *user, const char *b64, int png, json_t *meta)
{
	struct console_live *l = user;
	unsigned char *bin = NULL;
	size_t b64len, len = 0;

	b64len = strlen(b64);
	if (b64len / 4 * 3 > CONSOLE_LIVE_FRAME_MAX_BYTES)
		return; /* a frame past the ceiling is dropped */
	bin = malloc(b64len / 4 * 3 + 3);
	if (!bin || sodium_base642bin(bin, b64len / 4 * 3 + 3, b64, b64len, NULL, &len, NULL,
	                              sodium_base64_VARIANT_ORIGINAL) != 0) {
		free(bin);
		return;
	}
	pthread_mutex_lock(&l->lock);
	free(l->frame);
	l->frame = bin;
	l->frame_len = len;
	l->frame_png = png;
	l->frame_seq++;
	l->css_width = (int)json_number_value(json_object_get(meta, "deviceWidth"));
	l->css_height = (int)json_number_value(json_object_get(meta, "deviceHeight"));
	pthread_mutex_unlock(&l->lock);
}

/* See live.h. */
void console_live_screencast(struct console_live *l, struct cdp_conn *cdp, const char *page_sid)
{
	struct cdp_cast_want want = {
		.png = 0, .quality = 60, .max_width = 1280, .max_height = 1280
	};
	struct cdp_conn *old_cdp;
	int want_cast, casting, consumer;
	char old_sid[64];

	pthread_mutex_lock(&l->lock);
	old_cdp = l->cast_cdp;
	snprintf(old_sid, sizeof(old_sid), "%s", l->cast_sid);
	casting = l->casting;
	consumer = l->cast_consumer;
	want.fps = l->fps;
	want_cast = cdp && page_sid && watched_locked(l, gb_now_ms());
	pthread_mutex_unlock(&l->lock);

	if (casting && (old_cdp != cdp || !page_sid || strcmp(old_sid, page_sid) != 0)) {
		/* another browser or page: the old screencast went with it (the
		 * old conn may be gone: only the same conn is told) */
		if (old_cdp == cdp && cdp)
			cdp_cast_leave(cdp, consumer);
		casting = 0;
	}
	if (casting && !want_cast) {
		cdp_cast_leave(cdp, consumer);
		casting = 0;
	} else if (!casting && want_cast) {
		/* the page's one screencast, shared with a session recording */
		consumer = cdp_cast_join(cdp, page_sid, &want, on_frame, l);
		casting = consumer > 0;
	}
	pthread_mutex_lock(&l->lock);
	if (want_cast && !casting)
		l->cast_failed_ms = gb_now_ms();
	l->casting = casting;
	l->cast_consumer = casting ? consumer : 0;
	l->cast_cdp = casting ? cdp : NULL;
	snprintf(l->cast_sid, sizeof(l->cast_sid), "%s", casting ? page_sid : "");
	pthread_mutex_unlock(&l->lock);
}

/* See live.h. */
int console_live_pop_input(struct console_live *l, struct console_input *out)
{
	int rc = 0;

	pthread_mutex_lock(&l->lock);
	if (l->input_count) {
		*out = l->input[l->input_head];
		sodium_memzero(&l->input[l->input_head], sizeof(l->input[0]));
		l->input_head = (l->input_head + 1) % CONSOLE_LIVE_INPUT_MAX;
		l->input_count--;
		rc = 1;
	}
	pthread_mutex_unlock(&l->lock);
	return rc;
}

/* The keys a person may press from the console: name, code, keyCode, text. */
static const struct {
	const char *name;
	const char *code;
	int key_code;
	const char *text;
} keys[] = {
	{ "Enter", "Enter", 13, "\r" },         { "Tab", "Tab", 9, NULL },
	{ "Backspace", "Backspace", 8, NULL },  { "Escape", "Escape", 27, NULL },
	{ "ArrowUp", "ArrowUp", 38, NULL },     { "ArrowDown", "ArrowDown", 40, NULL },
	{ "ArrowLeft", "ArrowLeft", 37, NULL }, { "ArrowRight", "ArrowRight", 39, NULL },
};

/* One CDP call that must succeed; err names it. */
static int must(struct cdp_conn *cdp, const char *sid, const char *method, json_t *params,
                int timeout_ms, char *err, size_t errlen)
{
	struct cdp_error e;
	int rc = cdp_call(cdp, sid, method, params, timeout_ms, NULL, &e);

	if (rc < 0)
		snprintf(err, errlen, "%s failed: %s", method,
		         e.message[0] ? e.message : cdp_strerror(rc));
	return rc < 0 ? -1 : 0;
}

/* A key down and up of keys[i]. */
static int press_key(struct cdp_conn *cdp, const char *sid, size_t i, int timeout_ms, char *err,
                     size_t errlen)
{
	json_t *down =
	    json_pack("{s:s, s:s, s:s, s:i, s:i}", "type", keys[i].text ? "keyDown" : "rawKeyDown",
	              "key", keys[i].name, "code", keys[i].code, "windowsVirtualKeyCode",
	              keys[i].key_code, "nativeVirtualKeyCode", keys[i].key_code);

	if (down && keys[i].text)
		json_object_set_new(down, "text", json_string(keys[i].text));
	if (must(cdp, sid, "Input.dispatchKeyEvent", down, timeout_ms, err, errlen) < 0)
		return -1;
	return must(cdp, sid, "Input.dispatchKeyEvent",
	            json_pack("{s:s, s:s, s:s, s:i, s:i}", "type", "keyUp", "key", keys[i].name,
	                      "code", keys[i].code, "windowsVirtualKeyCode", keys[i].key_code,
	                      "nativeVirtualKeyCode", keys[i].key_code),
	            timeout_ms, err, errlen);
}

/* See live.h. */
int console_live_dispatch(struct cdp_conn *cdp, const char *page_sid,
                          const struct console_input *in, int timeout_ms, char *err, size_t errlen)
{
	const char *phase[] = { "mousePressed", "mouseReleased" };
	size_t i;

	switch (in->kind) {
	case CONSOLE_INPUT_CLICK:
		if (must(cdp, page_sid, "Input.dispatchMouseEvent",
		         json_pack("{s:s, s:f, s:f}", "type", "mouseMoved", "x", in->x, "y", in->y),
		         timeout_ms, err, errlen) < 0)
			return -1;
		for (i = 0; i < 2; i++) {
			if (must(cdp, page_sid, "Input.dispatchMouseEvent",
			         json_pack("{s:s, s:f, s:f, s:s, s:i, s:i}", "type", phase[i], "x",
			                   in->x, "y", in->y, "button", "left", "buttons",
			                   i == 0 ? 1 : 0, "clickCount", 1),
			         timeout_ms, err, errlen) < 0)
				return -1;
		}
		return 0;
	case CONSOLE_INPUT_TEXT:
		return must(cdp, page_sid, "Input.insertText", json_pack("{s:s}", "text", in->text),
		            timeout_ms, err, errlen);
	case CONSOLE_INPUT_KEY:
		for (i = 0; i < sizeof(keys) / sizeof(keys[0]); i++) {
			if (!strcmp(keys[i].name, in->key))
				return press_key(cdp, page_sid, i, timeout_ms, err, errlen);
		}
		snprintf(err, errlen, "unknown key %s", in->key);
		return -1;
	}
	snprintf(err, errlen, "unknown input kind %d", (int)in->kind);
	return -1;
}

/* See live.h. */
void console_live_take_transitions(struct console_live *l, int *began, int *ended, char *by,
                                   size_t bylen, char *credential, size_t credlen)
{
	pthread_mutex_lock(&l->lock);
	*began = l->began_unrecorded;
	*ended = l->ended_unrecorded;
	if (*ended) {
		snprintf(by, bylen, "%s", l->ended_by);
		snprintf(credential, credlen, "%s", l->ended_credential);
	} else {
		snprintf(by, bylen, "%s", l->by);
		snprintf(credential, credlen, "%s", l->credential);
	}
	l->began_unrecorded = 0;
	l->ended_unrecorded = 0;
	pthread_mutex_unlock(&l->lock);
}

/* See live.h. */
const char *console_input_kind_name(enum console_input_kind k)
{
	return k == CONSOLE_INPUT_CLICK ? "click" : k == CONSOLE_INPUT_TEXT ? "type" : "key";
}

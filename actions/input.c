/*
 * input.c - mouse and keyboard input through CDP's Input domain. Events
 * of one gesture are queued together (they run in order) and their
 * replies awaited afterwards; a JS dialog opened by the input blocks the
 * page, so the wait stops as soon as one opens.
 */
#include "actions/actions-private.h"

#include "cdp/cdp.h"
#include "sessions/sessions.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_EVENTS 512

static const struct key_def named_keys[] = {
	{ "Enter", "Enter", 13, "\r" },
	{ "Tab", "Tab", 9, NULL },
	{ "Escape", "Escape", 27, NULL },
	{ "Backspace", "Backspace", 8, NULL },
	{ "Delete", "Delete", 46, NULL },
	{ "ArrowUp", "ArrowUp", 38, NULL },
	{ "ArrowDown", "ArrowDown", 40, NULL },
	{ "ArrowLeft", "ArrowLeft", 37, NULL },
	{ "ArrowRight", "ArrowRight", 39, NULL },
	{ "Home", "Home", 36, NULL },
	{ "End", "End", 35, NULL },
	{ "PageUp", "PageUp", 33, NULL },
	{ "PageDown", "PageDown", 34, NULL },
	{ "Space", "Space", 32, " " },
	{ " ", "Space", 32, " " },
	{ "Insert", "Insert", 45, NULL },
	{ "Shift", "ShiftLeft", 16, NULL },
	{ "Control", "ControlLeft", 17, NULL },
	{ "Alt", "AltLeft", 18, NULL },
	{ "Meta", "MetaLeft", 91, NULL },
	{ "F1", "F1", 112, NULL },
	{ "F2", "F2", 113, NULL },
	{ "F3", "F3", 114, NULL },
	{ "F4", "F4", 115, NULL },
	{ "F5", "F5", 116, NULL },
	{ "F6", "F6", 117, NULL },
	{ "F7", "F7", 118, NULL },
	{ "F8", "F8", 119, NULL },
	{ "F9", "F9", 120, NULL },
	{ "F10", "F10", 121, NULL },
	{ "F11", "F11", 122, NULL },
	{ "F12", "F12", 123, NULL },
};

int act_modifiers_from_json(json_t *arr)
{
	size_t i;
	int m = 0;

	for (i = 0; i < json_array_size(arr); i++) {
		const char *s = json_string_value(json_array_get(arr, i));

		if (!s)
			continue;
		if (!strcmp(s, "Alt"))
			m |= 1;
		else if (!strcmp(s, "Control") || !strcmp(s, "ControlOrMeta"))
			m |= 2;
		else if (!strcmp(s, "Meta"))
			m |= 4;
		else if (!strcmp(s, "Shift"))
			m |= 8;
	}
	return m;
}

/* cdp_service() stop condition for input: every reply is in, or a
 * dialog opened (it blocks the page, and with it the remaining replies). */
struct input_wait {
	struct act_ctx *ctx;
	const uint64_t *ids;
	size_t n;
};

static int input_done(void *user)
{
	struct input_wait *w = user;
	size_t i;

	if (w->ctx->rec.dialog_opened || sess_page_dialog(w->ctx->page))
		return 1;
	for (i = 0; i < w->n; i++)
		if (!cdp_reply_ready(w->ctx->cdp, w->ids[i]))
			return 0;
	return 1;
}

/* Awaits the replies of ids[0..n); stops early when a dialog opened. */
static int await_input(struct act_ctx *ctx, const uint64_t *ids, size_t n, const char *doing)
{
	struct input_wait w = { ctx, ids, n };
	struct cdp_error err = { 0 };
	size_t i;
	int rc;

	rc = cdp_service(ctx->cdp, act_left_ms(ctx), input_done, &w);
	if (rc == 0 && !(ctx->rec.dialog_opened || sess_page_dialog(ctx->page))) {
		for (i = 0; i < n && rc == 0; i++)
			rc = cdp_await(ctx->cdp, ids[i], act_left_ms(ctx), NULL, &err);
		for (; i < n; i++)
			cdp_forget(ctx->cdp, ids[i]);
		if (rc == -CDP_EPROTOCOL)
			return act_fail(ctx, "browser_error", "failed while %s: %s", doing,
			                err.message);
	} else {
		for (i = 0; i < n; i++)
			cdp_forget(ctx->cdp, ids[i]);
	}
	if (rc == -CDP_ETIMEOUT)
		return act_fail_timeout(ctx, "The page did not answer while %s", doing);
	if (rc < 0)
		return act_connection_failed(ctx, rc, doing);
	return 0;
}

static int send_mouse(struct act_ctx *ctx, uint64_t *ids, size_t *n, const char *type, double x,
                      double y, const char *button, int buttons, int count, int modifiers)
{
	act_observe_before_wait(ctx);
	return cdp_send(ctx->cdp, ctx->psid, "Input.dispatchMouseEvent",
	                json_pack("{s:s, s:f, s:f, s:s, s:i, s:i, s:i}", "type", type, "x", x, "y",
	                          y, "button", button, "buttons", buttons, "clickCount", count,
	                          "modifiers", modifiers),
	                &ids[(*n)++]);
}

int act_mouse_move(struct act_ctx *ctx, double x, double y)
{
	uint64_t ids[1];
	size_t n = 0;

	send_mouse(ctx, ids, &n, "mouseMoved", x, y, "none", 0, 0, 0);
	return await_input(ctx, ids, n, "moving the mouse");
}

int act_mouse_move_held(struct act_ctx *ctx, double x, double y, const char *button)
{
	int mask = !strcmp(button, "right") ? 2 : !strcmp(button, "middle") ? 4 : 1;
	uint64_t ids[1];
	size_t n = 0;

	send_mouse(ctx, ids, &n, "mouseMoved", x, y, button, mask, 0, 0);
	return await_input(ctx, ids, n, "moving the mouse with the button held");
}

int act_mouse_wheel(struct act_ctx *ctx, double x, double y, double dx, double dy)
{
	uint64_t id;

	act_observe_before_wait(ctx);
	if (cdp_send(ctx->cdp, ctx->psid, "Input.dispatchMouseEvent",
	             json_pack("{s:s, s:f, s:f, s:f, s:f}", "type", "mouseWheel", "x", x, "y", y,
	                       "deltaX", dx, "deltaY", dy),
	             &id) < 0)
		return act_fail(ctx, "browser_error", "cannot send the wheel event");
	return await_input(ctx, &id, 1, "scrolling with the mouse wheel");
}

int act_mouse_click(struct act_ctx *ctx, double x, double y, const char *button, int count,
                    int modifiers)
{
	int mask = !strcmp(button, "right") ? 2 : !strcmp(button, "middle") ? 4 : 1;
	uint64_t ids[8];
	size_t n = 0;
	int c;

	send_mouse(ctx, ids, &n, "mouseMoved", x, y, "none", 0, 0, modifiers);
	for (c = 1; c <= count; c++) {
		send_mouse(ctx, ids, &n, "mousePressed", x, y, button, mask, c, modifiers);
		send_mouse(ctx, ids, &n, "mouseReleased", x, y, button, 0, c, modifiers);
	}
	return await_input(ctx, ids, n, "clicking");
}

int act_mouse_down(struct act_ctx *ctx, double x, double y, const char *button, int count,
                   int modifiers)
{
	int mask = !strcmp(button, "right") ? 2 : !strcmp(button, "middle") ? 4 : 1;
	uint64_t ids[2];
	size_t n = 0;

	if (count == 1)
		send_mouse(ctx, ids, &n, "mouseMoved", x, y, "none", 0, 0, modifiers);
	send_mouse(ctx, ids, &n, "mousePressed", x, y, button, mask, count, modifiers);
	return await_input(ctx, ids, n, "clicking");
}

int act_mouse_up(struct act_ctx *ctx, double x, double y, const char *button, int count,
                 int modifiers)
{
	uint64_t ids[1];
	size_t n = 0;

	send_mouse(ctx, ids, &n, "mouseReleased", x, y, button, 0, count, modifiers);
	return await_input(ctx, ids, n, "clicking");
}

int act_click_at(struct act_ctx *ctx, double x, double y, const char *button, int count,
                 int modifiers, int hold_ms)
{
	int landed;
	int rc;
	int c;

	/* the press, then where it landed read back, then the release: a
	 * missed press is still released, so the page is not left with a
	 * button held down */
	rc = act_mouse_down(ctx, x, y, button, 1, modifiers);
	if (rc < 0)
		return rc;
	landed = act_click_landed(ctx, x, y, 0);
	if (hold_ms > 0) {
		rc = cdp_service(ctx->cdp, hold_ms < act_left_ms(ctx) ? hold_ms : act_left_ms(ctx),
		                 NULL, NULL);
		if (rc == -CDP_ECANCELLED || rc == -CDP_ECLOSED)
			landed = act_connection_failed(ctx, rc, "holding the button down");
	}
	rc = act_mouse_up(ctx, x, y, button, 1, modifiers);
	if (rc == 0 && landed == 0 && !strcmp(button, "left"))
		landed = act_click_landed(ctx, x, y, 1);
	for (c = 2; rc == 0 && c <= count; c++) {
		rc = act_mouse_down(ctx, x, y, button, c, modifiers);
		if (rc == 0)
			rc = act_mouse_up(ctx, x, y, button, c, modifiers);
	}
	return rc == 0 && landed < 0 ? -1 : rc;
}

int act_click_once(struct act_ctx *ctx, double x, double y, int modifiers, const char *done)
{
	/* the press is released wherever it landed (as act_click_at releases
	 * a missed press): where it landed is told by the recorder as it
	 * arrives, or read back after */
	json_decref(ctx->rec.pressed);
	ctx->rec.pressed = NULL;
	if (act_mouse_click(ctx, x, y, "left", 1, modifiers) < 0)
		return -1;
	act_click_press_ask(ctx);
	return act_click_release_ask(ctx, x, y, done);
}

/* Fills a key_def for one key name: a named key or a single character;
 * text and code are the caller's buffers (8 and 16 bytes) for the latter. */
UNITTEST int act_lookup_key(const char *name, struct key_def *out, char *text, char *code)
{
	size_t i;

	for (i = 0; i < sizeof(named_keys) / sizeof(named_keys[0]); i++) {
		if (!strcmp(named_keys[i].key, name)) {
			*out = named_keys[i];
			return 0;
		}
	}
	if (strlen(name) == 1 || (((unsigned char)name[0] & 0x80) && strlen(name) <= 4)) {
		unsigned char c = (unsigned char)name[0];

		snprintf(text, 8, "%s", name);
		out->key = text;
		out->text = text;
		out->vk = 0;
		code[0] = '\0';
		if (c >= 'a' && c <= 'z') {
			out->vk = c - 'a' + 'A';
			snprintf(code, 16, "Key%c", c - 'a' + 'A');
		} else if (c >= 'A' && c <= 'Z') {
			out->vk = c;
			snprintf(code, 16, "Key%c", c);
		} else if (c >= '0' && c <= '9') {
			out->vk = c;
			snprintf(code, 16, "Digit%c", c);
		}
		out->code = code;
		return 0;
	}
	return -1;
}

static void send_key(struct act_ctx *ctx, uint64_t *ids, size_t *n, const struct key_def *k,
                     int modifiers)
{
	/* With Control/Alt/Meta held a key produces no text (shortcuts). */
	const char *text = (modifiers & 7) ? NULL : k->text;
	json_t *down = json_pack(
	    "{s:s, s:s, s:s, s:i, s:i}", "type", text ? "keyDown" : "rawKeyDown", "key", k->key,
	    "code", k->code ? k->code : "", "windowsVirtualKeyCode", k->vk, "modifiers", modifiers);

	if (text)
		json_object_set_new(down, "text", json_string(text));
	if (*n + 2 > MAX_EVENTS) {
		json_decref(down);
		return;
	}
	act_observe_before_wait(ctx);
	cdp_send(ctx->cdp, ctx->psid, "Input.dispatchKeyEvent", down, &ids[(*n)++]);
	cdp_send(ctx->cdp, ctx->psid, "Input.dispatchKeyEvent",
	         json_pack("{s:s, s:s, s:s, s:i, s:i}", "type", "keyUp", "key", k->key, "code",
	                   k->code ? k->code : "", "windowsVirtualKeyCode", k->vk, "modifiers",
	                   modifiers),
	         &ids[(*n)++]);
}

int act_press_key(struct act_ctx *ctx, const char *combo, int modifiers)
{
	uint64_t ids[16];
	struct key_def k;
	char buf[128];
	char text[8], code[16];
	char *part, *save = NULL, *last = NULL;
	size_t n = 0;

	snprintf(buf, sizeof(buf), "%s", combo);
	/* "Control+Shift+A": every part but the last is a modifier; "+" alone is a key */
	if (strcmp(buf, "+") != 0) {
		for (part = strtok_r(buf, "+", &save); part; part = strtok_r(NULL, "+", &save)) {
			if (last) {
				int m =
				    !strcmp(last, "Alt") ? 1
				    : (!strcmp(last, "Control") || !strcmp(last, "ControlOrMeta"))
				        ? 2
				    : !strcmp(last, "Meta")  ? 4
				    : !strcmp(last, "Shift") ? 8
				                             : -1;

				if (m < 0)
					return act_fail(ctx, "bad_arguments",
					                "\"%s\" in key \"%s\" is not a "
					                "modifier: use Alt, Control, Meta or Shift",
					                last, combo);
				modifiers |= m;
			}
			last = part;
		}
	} else {
		last = buf;
	}
	if (!last || act_lookup_key(last, &k, text, code) < 0)
		return act_fail(ctx, "bad_arguments",
		                "unknown key \"%s\": use a character or a name "
		                "such as Enter, Tab, Escape, ArrowDown, Backspace, F5",
		                combo);
	send_key(ctx, ids, &n, &k, modifiers);
	return await_input(ctx, ids, n, "pressing a key");
}

int act_type_text(struct act_ctx *ctx, const char *text, int slowly)
{
	uint64_t *ids;
	size_t n = 0;
	int rc;

	if (!slowly) {
		uint64_t id;

		act_observe_before_wait(ctx);
		if (cdp_send(ctx->cdp, ctx->psid, "Input.insertText",
		             json_pack("{s:s}", "text", text), &id) < 0)
			return act_fail(ctx, "browser_error", "cannot send the text");
		return await_input(ctx, &id, 1, "typing");
	}
	ids = calloc(MAX_EVENTS, sizeof(*ids));
	if (!ids)
		return act_fail(ctx, "oom", "out of memory");
	while (*text && n + 2 <= MAX_EVENTS) {
		struct key_def k;
		char ch[8], kt[8], code[16];
		size_t len = 1;

		while (((unsigned char)text[len] & 0xC0) == 0x80 && len < 4)
			len++;
		memcpy(ch, text, len);
		ch[len] = '\0';
		if (!strcmp(ch, "\n"))
			snprintf(ch, sizeof(ch), "Enter");
		if (act_lookup_key(ch, &k, kt, code) == 0)
			send_key(ctx, ids, &n, &k, 0);
		text += len;
		if (n + 2 > MAX_EVENTS || !*text) {
			rc = await_input(ctx, ids, n, "typing");
			n = 0;
			if (rc < 0) {
				free(ids);
				return rc;
			}
		}
	}
	free(ids);
	return 0;
}

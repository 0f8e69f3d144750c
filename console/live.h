/*
 * live.h - what the web console shares with one agent session's worker:
 * the latest screencast frame, who has the browser (the agent or a
 * person), and the person's input waiting to be sent to the page.
 *
 * One struct console_live per agent session, reference-counted: the
 * session holds one, each front request using it holds one. The front
 * (the admin listener's thread) reads frames, takes and hands back the
 * browser and queues input; the session's worker runs the screencast and
 * dispatches the input over CDP (console_live_screencast,
 * console_live_dispatch). Nothing here waits: a viewer copies the one
 * latest frame (older ones are dropped, never queued), input beyond
 * CONSOLE_LIVE_INPUT_MAX waiting events is refused.
 *
 * This header knows CDP and nothing of tools, tenants or HTTP; the pages
 * and their auth are console.h.
 */
#ifndef GB_CONSOLE_LIVE_H
#define GB_CONSOLE_LIVE_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

struct cdp_conn;
struct console_live;

/* Events of a person's input waiting at once, per session. */
#define CONSOLE_LIVE_INPUT_MAX 64
/* Longest text one input event types. */
#define CONSOLE_LIVE_TEXT_MAX 256
/* Largest screencast frame kept (a JPEG, or a PNG while recording). */
#define CONSOLE_LIVE_FRAME_MAX_BYTES ((size_t)4 << 20)
/* A viewer not seen for this long no longer keeps the screencast on. */
#define CONSOLE_LIVE_VIEWER_IDLE_MS 10000
/* Names and ids of who acts in the console. */
#define CONSOLE_NAME_MAX 64

enum console_input_kind {
	CONSOLE_INPUT_CLICK = 1, /* x, y in CSS pixels of the page's viewport */
	CONSOLE_INPUT_TEXT,      /* text inserted at the focus */
	CONSOLE_INPUT_KEY,       /* one named key: Enter, Tab, Backspace, Escape, Arrow* */
};

/* One input event of a person. */
struct console_input {
	enum console_input_kind kind;
	double x;
	double y;
	char text[CONSOLE_LIVE_TEXT_MAX + 1];
	char key[16];
	char by[CONSOLE_NAME_MAX];         /* the person's credential name */
	char credential[CONSOLE_NAME_MAX]; /* the credential's id */
};

/* "click", "type" or "key", for records. */
const char *console_input_kind_name(enum console_input_kind k);

/* A new live state (one reference), or NULL when out of memory. */
struct console_live *console_live_new(void);
/* Takes one more reference. Any thread. */
void console_live_ref(struct console_live *l);
/* Drops one; the last frees it. NULL is fine. Any thread. */
void console_live_unref(struct console_live *l);

/* ---- the front --------------------------------------------------------- */

/* Copies the latest frame when it is newer than after: 1 with *image
 * (malloc'd, the caller frees), *len, *mime ("image/jpeg", or
 * "image/png" while a session recording shares the page's screencast),
 * *seq and the page's CSS size the frame shows; 0 when there is none
 * newer. Either way the viewer is counted as watching (the worker keeps
 * the screencast on), and the browser sends at most fps frames a second
 * (the config's frames_per_second: the same bound at the source as for
 * each viewer; lower while a recording with a lower fps shares it). */
int console_live_frame(struct console_live *l, int fps, uint64_t after, unsigned char **image,
                       size_t *len, const char **mime, uint64_t *seq, int *css_width,
                       int *css_height);

/* A person takes the browser: from now on the agent's calls are refused
 * with human_control until console_live_release. 0, or -1 with err when
 * another person has it already. by and credential are copied. */
int console_live_take(struct console_live *l, const char *by, const char *credential, char *err,
                      size_t errlen);

/* Hands the browser back to the agent. 0, or -1 with err when no person
 * has it. The worker records the end and tells the agent in its next
 * answer. */
int console_live_release(struct console_live *l, char *err, size_t errlen);

/* Queues a person's input (copied) while that person has the browser.
 * 0, or -1 with err: nobody has taken the browser, another person has it,
 * or CONSOLE_LIVE_INPUT_MAX events are waiting already. */
int console_live_push_input(struct console_live *l, const struct console_input *in, char *err,
                            size_t errlen);

/* {url, browser_session, control: "agent"|"human", by?, credential?,
 * for_ms?, frames, screencast, css_width, css_height} as a new object. */
json_t *console_live_status(struct console_live *l);

/* 1 when a person has the browser, with their name in by (may be NULL). */
int console_live_human(struct console_live *l, char *by, size_t bylen);

/* ---- the worker -------------------------------------------------------- */

/* Work for the worker: the screencast is to be joined or left, input
 * waits, or a take-over began or ended and is not recorded yet. Cheap. */
int console_live_has_work(struct console_live *l);

/* Notes the page's URL and the browser session's id (the one the
 * session's tool-call records carry), for the console's lists. */
void console_live_set_page(struct console_live *l, const char *url, const char *browser_session);

/* Joins (cdp_cast_join) or leaves the screencast of cdp's page session
 * page_sid when it should, from whether anyone watched lately: the page's
 * one screencast, shared with a session recording, so neither stops the
 * other's frames. The frames are kept by the consumer's callback; one
 * over CONSOLE_LIVE_FRAME_MAX_BYTES is dropped. Call when the browser
 * changes with cdp NULL: the screencast is forgotten (the old conn is not
 * touched). */
void console_live_screencast(struct console_live *l, struct cdp_conn *cdp, const char *page_sid);

/* Takes the oldest queued input into *out: 1, or 0 when none. */
int console_live_pop_input(struct console_live *l, struct console_input *out);

/* Sends one input event to the page over CDP (Input.dispatchMouseEvent,
 * Input.insertText, Input.dispatchKeyEvent); timeout_ms per CDP call.
 * 0, or -1 with err. */
int console_live_dispatch(struct cdp_conn *cdp, const char *page_sid,
                          const struct console_input *in, int timeout_ms, char *err, size_t errlen);

/* Control transitions not recorded yet: *began (a person took the
 * browser) and *ended (it was handed back), with who into by/credential;
 * each is handed out once. */
void console_live_take_transitions(struct console_live *l, int *began, int *ended, char *by,
                                   size_t bylen, char *credential, size_t credlen);

#endif

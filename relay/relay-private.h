/*
 * relay-private.h - the insides of struct relay, shared by the files of
 * relay/ only. Everything below the locked members is touched by the
 * relay's thread alone.
 */
#ifndef GB_RELAY_PRIVATE_H
#define GB_RELAY_PRIVATE_H

#include "relay/relay.h"

#include <pthread.h>
#include <stdint.h>
#include <wslay/wslay.h>

/* Client ids are 0..RELAY_CLIENT_ID_MAX; the relay's own calls use ids
 * from RELAY_OWN_ID_BASE up (Chromium reads an id as a 32-bit int). */
#define RELAY_CLIENT_ID_MAX 999999999LL
#define RELAY_OWN_ID_BASE 1000000000LL
#define RELAY_MAX_INFLIGHT 512 /* client calls in flight: then it is not read */
#define RELAY_CLIENT_QUEUE_BYTES \
	((size_t)64 << 20) /* queued to the client: then the browser is not read */
#define RELAY_BROWSER_MAX_MESSAGE ((size_t)256 << 20)
#define RELAY_DEFAULT_MAX_MESSAGE ((size_t)16 << 20)
#define RELAY_MAX_OWN 32
#define RELAY_LINGER_MS 2000 /* after our close frame, the client's bytes dropped */
#define RELAY_MAX_PAGES 64
#define RELAY_MAX_CONTEXTS 32
#define RELAY_SID_MAX 64
#define RELAY_PROBE_TIMEOUT_MS 10000
#define RELAY_HANDSHAKE_TIMEOUT_MS 10000
/* When the client goes, the screenshots it caused are still taken for up
 * to this long. */
#define RELAY_CAMERA_DRAIN_MS 5000

/* A client call forwarded and not yet answered. */
struct relay_call {
	int64_t id;
	char method[64];
	char sid[RELAY_SID_MAX];
};

enum relay_own_kind { RELAY_OWN_PROBE };

/* A call of the relay's own on the client's session (an element probe;
 * screenshots are the camera's, camera.c). */
struct relay_own {
	int64_t id;
	enum relay_own_kind kind;
	char sid[RELAY_SID_MAX];
};

/* A page target the client is attached to. */
struct relay_page {
	char sid[RELAY_SID_MAX];
	char target_id[64];
	char url[2048];
	int status;       /* of the last document response of its main frame, or 0 */
	int shot_on_load; /* a navigation happened: screenshot at the next load */
};

/* A client message read while the relay could not take it yet (wslay
 * hands over every message of what one read brought in). */
struct relay_backlog {
	struct relay_backlog *next;
	size_t len;
	uint8_t data[];
};

/* Input held until its element was probed. */
struct relay_held {
	json_t *msg; /* owned: the client's message */
	char *raw;   /* owned: as sent */
	size_t len;
	int64_t probe_id;
	int64_t deadline_ms;
	int kind; /* RELAY_INPUT_* */
	double x, y;
};

enum {
	RELAY_INPUT_NONE = 0,
	RELAY_INPUT_POINTER, /* mousePressed, mouseReleased, touchStart */
	RELAY_INPUT_KEY,     /* keyDown, rawKeyDown */
	RELAY_INPUT_TEXT,    /* insertText */
};

struct relay_camera;

/* A websocket of the relay's own to the browser (the camera's): wslay
 * frames it on fd; on_message gets each whole message. */
struct relay_ws_plain {
	int fd;
	void (*on_message)(void *user, const uint8_t *data, size_t len);
	void *user;
};

struct relay {
	atomic_int refs;
	atomic_int stop;
	pthread_mutex_t lock;
	pthread_cond_t cond;
	int finished; /* {lock} the thread no longer calls hooks */
	int wake_fd;  /* eventfd: relay_stop wakes the thread */
	pthread_t thread;

	struct relay_options opt; /* strings below replace the borrowed ones */
	char *who;
	char *endpoint;
	char *extra;
	size_t extra_len, extra_off;

	/* the relay's thread only */
	struct relay_browser br;
	int cfd, bfd;
	wslay_event_context_ptr cws; /* server side, to the client */
	wslay_event_context_ptr bws; /* client side, to the browser */
	struct relay_call calls[RELAY_MAX_INFLIGHT];
	size_t ncalls;
	struct relay_own own[RELAY_MAX_OWN];
	size_t nown;
	int64_t next_own;
	struct relay_page pages[RELAY_MAX_PAGES];
	size_t npages;
	char *contexts[RELAY_MAX_CONTEXTS];
	size_t ncontexts;
	struct relay_camera *camera; /* evidence screenshots, on their own thread */
	struct relay_held held;
	int holding;
	struct relay_backlog *backlog, *backlog_tail; /* in arrival order */
	int64_t last_shot_ms;
	unsigned long messages, refused, inputs, navigations;
	char end_reason[200];
};

/* wsio.c: the two websockets (wslay) and the browser's handshake. */
int relay_ws_init(struct relay *r, char *err, size_t errlen);
int relay_browser_handshake(struct relay *r, char *err, size_t errlen);
/* The websocket handshake of a DevTools client on fd (made non-blocking)
 * to devtools_url's path; nothing past the response head is read. */
int relay_ws_handshake(int fd, const char *devtools_url, char *err, size_t errlen);
/* Sets up p's client-side framing (p borrowed: must outlive *ctx). */
int relay_ws_plain_init(struct relay_ws_plain *p, wslay_event_context_ptr *ctx, char *err,
                        size_t errlen);
/* Queues text as one text message on ctx. */
void relay_ws_queue_text(wslay_event_context_ptr ctx, const char *text, size_t len);
void relay_ws_free(struct relay *r);
void relay_send_client(struct relay *r, const char *text, size_t len);
void relay_send_browser(struct relay *r, const char *text, size_t len);
/* Sends msg (borrowed) to the client, encoded. */
void relay_send_client_json(struct relay *r, json_t *msg);
/* 1 when the client's socket may be read now (back-pressure). */
int relay_client_readable(struct relay *r);
/* 1 when the browser's socket may be read now (back-pressure). */
int relay_browser_readable(struct relay *r);

/* relay.c: what wsio.c hands over, one whole message each. A client
 * message that cannot be taken now (an input is held, or too many calls
 * are in flight) waits in the backlog; relay_drain_backlog takes them in
 * order once it can. */
void relay_on_client_message(struct relay *r, const uint8_t *data, size_t len);
void relay_drain_backlog(struct relay *r);
void relay_on_browser_message(struct relay *r, const uint8_t *data, size_t len);
/* Answers client call id (borrowed; may be NULL) on sid with a CDP error. */
void relay_reply_error(struct relay *r, json_t *id, const char *sid, int code, const char *msg);
/* Forwards a client message: raw as sent, or msg re-encoded when raw is NULL. */
void relay_forward(struct relay *r, json_t *msg, const char *raw, size_t len);
/* Sends a call of the relay's own; returns its id, or -1 when too many run. */
int64_t relay_own_send(struct relay *r, const char *sid, const char *method, json_t *params,
                       enum relay_own_kind kind);
/* Forgets the relay's own call id (its answer, if one comes, is dropped);
 * unknown ids are a no-op. */
void relay_own_forget(struct relay *r, int64_t id);
/* An audit record (body stolen). Any of the relay's threads. */
void relay_record(struct relay *r, const char *kind, json_t *body);

/* observe.c: what the client causes, for evidence and gates. */
/* 1 when relay_observe_event reads events of method (borrowed); the
 * others may pass without being parsed. */
int relay_observe_wants(const char *method);
void relay_observe_event(struct relay *r, const char *sid, const char *method, json_t *params);
/* Input that must be probed first: holds msg (borrowed; raw copied) and
 * returns 1; 0 when it is not such input. */
int relay_observe_hold_input(struct relay *r, json_t *msg, const char *raw, size_t len);
void relay_observe_own_reply(struct relay *r, const struct relay_own *own, json_t *reply);
/* The held input's probe did not answer in time: refuse it. */
void relay_observe_probe_timeout(struct relay *r);
struct relay_page *relay_page_by_sid(struct relay *r, const char *sid);

/* camera.c: evidence screenshots on a DevTools connection and a thread of
 * their own, so that none of it waits on or in the client's path. */
/* Connects on fd (taken) to the browser and starts the camera's thread. */
int relay_camera_start(struct relay *r, int fd, struct relay_camera **out, char *err,
                       size_t errlen);
/* Asks for a screenshot of page target_id (why: "navigation" or "input";
 * url: what it shows, for the record); returns at once. A request for a
 * page that already has one waiting joins it. Relay's thread. */
void relay_camera_request(struct relay_camera *c, const char *target_id, const char *why,
                          const char *url);
/* The page is gone: its waiting request is dropped. Relay's thread. */
void relay_camera_forget(struct relay_camera *c, const char *target_id);
/* What a camera did: screenshots kept, requests that joined a waiting
 * one, and screenshots that could not be taken. */
struct relay_camera_counts {
	unsigned long taken, joined, failed;
};
/* Takes what waits for up to drain_ms more, stops the thread, fills
 * *counts (may be NULL) and frees c. NULL is a no-op. */
void relay_camera_stop(struct relay_camera *c, int drain_ms, struct relay_camera_counts *counts);

#endif

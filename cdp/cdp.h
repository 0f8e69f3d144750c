/*
 * cdp.h - a Chrome DevTools Protocol client over one websocket
 * (libwebsockets).
 *
 * One struct cdp_conn is one websocket to a browser endpoint
 * (ws://127.0.0.1:PORT/devtools/browser/ID). It has its own libwebsockets
 * client context and is driven by exactly one thread, the session's
 * worker: every function here except cdp_wake() must be called from that
 * thread. Calls are correlated by id; events are routed by CDP sessionId
 * (flattened target sessions; NULL or "" is the browser session) and
 * method. Nothing is serviced in the background: the owning thread
 * services the connection inside cdp_await(), cdp_wait_event() and
 * cdp_service().
 *
 * Ownership follows jansson's words: a parameter documented "steals"
 * takes the reference, "borrows" does not; results handed out are new
 * references the caller must json_decref().
 */
#ifndef GB_CDP_H
#define GB_CDP_H

#include <jansson.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

struct cdp_conn;

/* Error codes returned (negated) by every function below. */
enum cdp_err {
	CDP_OK = 0,
	CDP_ECONNECT = 1,   /* could not connect or handshake */
	CDP_ECLOSED = 2,    /* the socket closed (browser gone): fails every pending call */
	CDP_ETIMEOUT = 3,   /* the deadline passed before the reply or event */
	CDP_ECANCELLED = 4, /* the cancel flag was raised while waiting */
	CDP_EPROTOCOL = 5,  /* the browser answered with a CDP "error" object */
	CDP_ETOOBIG = 6,    /* a frame exceeded max_frame_bytes; the call failed cleanly */
	CDP_EBADMSG = 7,    /* a frame that is not a valid CDP message */
	CDP_ENOMEM = 8,
	CDP_EINVAL = 9,
};

struct cdp_options {
	/* Ceiling for one message, incoming (assembled from its fragments) or
	 * outgoing; 0 = 64 MiB, at most 1 GiB. An incoming message over it is
	 * dropped as it streams in, never stored: the call it answers fails
	 * with -CDP_ETOOBIG (so does a waiter armed for an oversized event),
	 * and the connection stays open and usable. */
	size_t max_frame_bytes;
	int connect_timeout_ms; /* 0 = 10000 */
	/* Optional: raised (non-zero) by another thread to abort waits; the
	 * waiting call returns -CDP_ECANCELLED. Borrowed; must outlive conn. */
	const atomic_int *cancel_flag;
};

/* Details of a failed call; message is NUL-terminated, human-readable and
 * names the CDP method. Code is the CDP error code for CDP_EPROTOCOL. */
struct cdp_error {
	int code;
	char message[256];
};

/* Called for every event that matches a listener. Borrows params (and
 * must not modify it: waiters may hold the same object);
 * session_id is "" for the browser session (never NULL). Runs on the
 * owning thread, inside whichever cdp_* call is servicing. A listener may
 * call cdp_send(), cdp_forget(), cdp_on(), cdp_off() (even on itself) and
 * cdp_arm(), but must not wait (cdp_await/cdp_call/cdp_wait_event/
 * cdp_service are refused with -CDP_EINVAL), close the conn, or disarm a
 * waiter that is being waited for. */
typedef void (*cdp_event_fn)(void *user, const char *session_id, const char *method,
                             json_t *params);

/* Connects to ws_url (ws://127.0.0.1:PORT/PATH) and completes the
 * websocket handshake within connect_timeout_ms. On failure returns
 * -CDP_ECONNECT with a reason in err (-CDP_EINVAL for a URL that is not
 * ws://HOST:PORT/PATH, -CDP_ECANCELLED if the cancel flag rose). No
 * Origin header is sent. opts may be NULL (defaults); it is copied. */
int cdp_connect(const char *ws_url, const struct cdp_options *opts, struct cdp_conn **out,
                struct cdp_error *err);

/* Closes the socket, fails every pending call, frees everything. NULL is
 * a no-op. */
void cdp_close(struct cdp_conn *c);

/* Points waits at another cancel flag (NULL: none), for a connection
 * handed to a new owning thread; called by the new owner. */
void cdp_set_cancel_flag(struct cdp_conn *c, const atomic_int *cancel_flag);

/* 1 while the websocket is open, 0 once it closed for any reason. */
int cdp_is_open(const struct cdp_conn *c);

/* Queues {"id","method","params","sessionId"} for sending and returns at
 * once with the call's id in *id_out. params: steals (may be NULL = {}).
 * session_id: borrows (NULL or "" = browser target). Several sends may be
 * queued before awaiting their replies (pipelining); they are written in
 * order. Fails at once with -CDP_ECLOSED once the socket closed. */
int cdp_send(struct cdp_conn *c, const char *session_id, const char *method, json_t *params,
             uint64_t *id_out);

/* Services the connection until the reply to id arrives, the timeout
 * passes, the cancel flag rises or the socket closes. On success *result
 * (may be NULL if not wanted) is a new reference to the reply's "result".
 * Replies that arrive for other ids are kept until awaited or discarded
 * with cdp_forget(). Every return ends the call (a reply arriving after a
 * timeout or cancellation is dropped); a reply that arrived before the
 * socket closed is still returned. timeout_ms = 0 only looks at what is
 * already readable. Errors: -CDP_EPROTOCOL (err->code and message from
 * the browser), -CDP_ETIMEOUT, -CDP_ECANCELLED, -CDP_ECLOSED,
 * -CDP_ETOOBIG, -CDP_EINVAL (unknown id). */
int cdp_await(struct cdp_conn *c, uint64_t id, int timeout_ms, json_t **result,
              struct cdp_error *err);

/* 1 when the reply to id has arrived (or the call failed), so that
 * cdp_await() returns at once; 0 while pending or unknown. Lets a caller
 * service the connection with its own stop condition (cdp_service) and
 * collect the reply afterwards. */
int cdp_reply_ready(struct cdp_conn *c, uint64_t id);

/* Drops interest in a pending or arrived reply (e.g. fire-and-forget). */
void cdp_forget(struct cdp_conn *c, uint64_t id);

/* cdp_send + cdp_await. */
int cdp_call(struct cdp_conn *c, const char *session_id, const char *method, json_t *params,
             int timeout_ms, json_t **result, struct cdp_error *err);

/* Adds a listener for events whose sessionId equals session_id (NULL =
 * any session, "" = only the browser session, i.e. events without a
 * sessionId) and whose method equals method (NULL = any method). Both
 * are copied. Returns a handle > 0 for cdp_off(), or a negative error. */
int cdp_on(struct cdp_conn *c, const char *session_id, const char *method, cdp_event_fn fn,
           void *user);
void cdp_off(struct cdp_conn *c, int handle);

/* Waits are armed before the command that triggers them, so no event is
 * lost: cdp_arm() starts recording the first event that matches
 * (session_id, method) [NULL = any]; cdp_wait_event() services until it
 * has arrived (it may already have) and hands out a new reference to its
 * params. A waiter is freed by cdp_wait_event() (whatever it returns)
 * or cdp_disarm(); cdp_close() frees those left. Filters as for cdp_on().
 * An armed waiter takes only the first matching event; listeners still
 * see it too. */
struct cdp_waiter;
int cdp_arm(struct cdp_conn *c, const char *session_id, const char *method,
            struct cdp_waiter **out);
int cdp_wait_event(struct cdp_conn *c, struct cdp_waiter *w, int timeout_ms, json_t **params,
                   struct cdp_error *err);
void cdp_disarm(struct cdp_conn *c, struct cdp_waiter *w);

/* Services the connection (dispatching events to listeners) for up to
 * timeout_ms, returning earlier when done() returns non-zero (checked
 * after each dispatched message and each cdp_wake(); done may be NULL). Returns 0 when done()
 * became true, -CDP_ETIMEOUT when the time ran out, or -CDP_ECLOSED /
 * -CDP_ECANCELLED. timeout_ms = 0 handles only what is already readable. */
typedef int (*cdp_done_fn)(void *user);
int cdp_service(struct cdp_conn *c, int timeout_ms, cdp_done_fn done, void *user);

/* Thread-safe: wakes the owning thread out of a wait (used after raising
 * the cancel flag). The only function that may be called from another
 * thread; the caller must make sure c is not being closed meanwhile (hold
 * a reference on whatever owns it). */
void cdp_wake(struct cdp_conn *c);

/* ---- a page's screencast, shared by its consumers (screencast.c) ------- */

/* What one consumer of a page's screencast wants. */
struct cdp_cast_want {
	int png;       /* 1: PNG frames; 0: JPEG */
	int quality;   /* JPEG quality, 0..100 */
	int max_width; /* frames no larger than this (CSS pixels scaled down) */
	int max_height;
	int fps; /* at most this many frames a second to this consumer, >= 1 */
};

/* A frame for one consumer: data, the image in base64 (borrowed); png, 1
 * for a PNG (a consumer that wants PNG only ever gets those), else JPEG;
 * metadata, the frame's ScreencastFrameMetadata (borrowed). Runs on the
 * owning thread inside a cdp_* call, with a listener's rules (cdp_on);
 * it must not join or leave. */
typedef void (*cdp_cast_fn)(void *user, const char *data, int png, json_t *metadata);

/*
 * Joins the screencast of page session page_sid (copied), starting it
 * if it does not run. One Page.startScreencast runs per page whatever
 * the number of consumers: PNG when any consumer wants PNG, no larger
 * than the smallest size asked, and the browser is let send a frame no
 * more often than the lowest fps asked (the stricter cap); each consumer
 * also gets frames no more often than its own fps. A join restarts the
 * screencast, so the browser sends the page as it is at once. Frames
 * flow while the conn is serviced (any wait). Returns a handle > 0 for
 * cdp_cast_leave(), or -CDP_EINVAL, -CDP_ENOMEM, -CDP_ECLOSED.
 */
int cdp_cast_join(struct cdp_conn *c, const char *page_sid, const struct cdp_cast_want *want,
                  cdp_cast_fn fn, void *user);

/* Leaves a screencast: the last consumer to leave stops it; the others
 * keep their frames (the screencast restarts if what it must be
 * changed). An unknown handle is a no-op, and so is a handle of a conn
 * that was closed (cdp_close frees every screencast). */
void cdp_cast_leave(struct cdp_conn *c, int handle);

/* Human-readable name of an error code. */
const char *cdp_strerror(int err);

#endif

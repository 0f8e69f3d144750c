/*
 * cdp-private.h - the insides of struct cdp_conn, shared by the files of
 * cdp/ only. Other modules include cdp/cdp.h.
 *
 * Every .c file of cdp/ includes this header FIRST: it decides from whether
 * UNITTEST is already defined (by -DUNITTEST= on the command line of a
 * unit-test or fuzz build) whether to declare the UNITTEST helpers, and
 * only then includes common/unittest.h.
 *
 * Everything here is touched by the owning thread only, except what
 * cdp_wake() reads (conn->ctx, set once before the conn is shared).
 */
#ifndef GB_CDP_PRIVATE_H
#define GB_CDP_PRIVATE_H

#include "cdp/cdp.h"

#include <libwebsockets.h>
#include <stdarg.h>
#include <stdio.h>

#ifdef UNITTEST
#define CDP_UNITTEST_BUILD 1
#endif

#include "common/unittest.h"
#include "common/util.h"

/* Defaults and ceilings. */
#define CDP_DEFAULT_MAX_FRAME_BYTES ((size_t)64 << 20)
#define CDP_LIMIT_MAX_FRAME_BYTES ((size_t)1 << 30) /* lws_write takes an int */
#define CDP_DEFAULT_CONNECT_TIMEOUT_MS 10000
#define CDP_RX_CHUNK_BYTES ((size_t)128 * 1024)  /* lws rx buffer and socket reads */
#define CDP_TX_CHUNK_BYTES ((size_t)1024 * 1024) /* largest single send() */
#define CDP_RX_KEEP_BYTES ((size_t)256 * 1024)   /* assembly buffer kept between messages */
#define CDP_MAX_CALLS 4096                       /* calls in flight plus replies not yet awaited */
#define CDP_MAX_LISTENERS 1024
#define CDP_MAX_WAITERS 1024
#define CDP_NAME_MAX 128    /* copies of method names and sessionIds */
#define CDP_FINAL_PASSES 64 /* non-blocking service passes at a deadline */

enum cdp_state {
	CDP_STATE_CONNECTING,
	CDP_STATE_OPEN,
	CDP_STATE_CLOSED,
};

/* One call from cdp_send() until cdp_await() or cdp_forget() ends it. */
struct cdp_call {
	struct cdp_call *prev;
	struct cdp_call *next;
	uint64_t id;
	char method[CDP_NAME_MAX]; /* for error messages; may be truncated */
	int done;                  /* the reply arrived or the call failed */
	int rc;                    /* once done: 0 or -CDP_E* */
	json_t *result;            /* once done with rc 0: the reply's "result" (owned) */
	struct cdp_error err;      /* once done with rc != 0 */
};

/* One queued outgoing message: LWS_PRE bytes of headroom, then len bytes. */
struct cdp_out {
	struct cdp_out *next;
	uint64_t id;
	size_t len;
	char *buf;
};

struct cdp_listener {
	struct cdp_listener *next;
	int handle;
	int removed;      /* cdp_off() during dispatch: freed after it */
	char *session_id; /* NULL = any session, "" = browser session only */
	char *method;     /* NULL = any method */
	cdp_event_fn fn;
	void *user;
};

struct cdp_waiter {
	struct cdp_waiter *prev;
	struct cdp_waiter *next;
	char *session_id; /* as for listeners */
	char *method;
	int fired;      /* a matching event arrived (or an oversized one failed it) */
	int rc;         /* once fired: 0 or -CDP_ETOOBIG */
	json_t *params; /* once fired with rc 0 (owned) */
	struct cdp_error err;
};

/*
 * A streaming skim of a message too large to keep: bounded state that
 * notes the top-level "id", "method" and "sessionId" while the bytes flow
 * past, so that the call or waiter the message was meant for can fail
 * with -CDP_ETOOBIG. It is not a JSON validator: it only has to be right
 * for well-formed messages and harmless for anything else.
 */
enum cdp_skim_field {
	CDP_SKIM_NONE,
	CDP_SKIM_ID,
	CDP_SKIM_METHOD,
	CDP_SKIM_SESSION,
	CDP_SKIM_OTHER,
};

enum cdp_skim_value {
	CDP_SKIM_ABSENT = 0,
	CDP_SKIM_READING,
	CDP_SKIM_COMPLETE,
	CDP_SKIM_INVALID,
};

struct cdp_skim {
	unsigned depth; /* 0 outside the top-level object, 1 inside it */
	int bad;        /* not an object at the top: stop looking */
	int ended;      /* the top-level object closed */
	int in_string;
	int escape;
	int want_key;                /* at depth 1: the next string is a member name */
	int in_number;               /* reading the digits of "id" */
	enum cdp_skim_field field;   /* whose value is being read at depth 1 */
	enum cdp_skim_field capture; /* which string is being copied, if any */
	char key[16];
	size_t key_len;
	int key_invalid;
	enum cdp_skim_value id_state;
	uint64_t id;
	enum cdp_skim_value method_state;
	char method[CDP_NAME_MAX];
	size_t method_len;
	enum cdp_skim_value session_state;
	char session_id[CDP_NAME_MAX];
	size_t session_len;
};

struct cdp_conn {
	struct cdp_options opts; /* with defaults filled in */
	enum cdp_state state;
	int closing;            /* inside cdp_close() */
	char endpoint[96];      /* host:port, for messages */
	char close_reason[160]; /* why the connection closed or failed */

	struct lws_context *ctx; /* NULL for a conn made by cdp_conn_new() alone */
	struct lws *wsi;
	lws_sorted_usec_list_t deadline_sul; /* bounds lws_service()'s sleep */
	int servicing;                       /* inside a wait: no nesting */
	unsigned long progress;              /* bumped on every read or write callback */
	cdp_done_fn done_fn;                 /* cdp_service()'s predicate while it runs */
	void *done_user;
	int done_hit;

	uint64_t next_id;
	struct cdp_call *calls; /* in send order */
	struct cdp_call *calls_tail;
	size_t ncalls;
	struct cdp_out *out_head; /* written in order on CLIENT_WRITEABLE */
	struct cdp_out *out_tail;
	size_t nout;

	struct cdp_listener *listeners;
	int next_handle;
	int dispatching;
	struct cdp_waiter *waiters;
	size_t nwaiters;

	/* assembly of the incoming message */
	struct gb_buf rx;
	int rx_active;   /* inside a message (some fragments seen) */
	int rx_skipping; /* over the ceiling: bytes go to the skim, not rx */
	size_t rx_total; /* bytes of the current message so far */
	struct cdp_skim skim;

	struct cdp_cast *casts; /* screencast.c: one per page with consumers */
	int next_cast_handle;

	FILE *trace; /* trace.c: a copy of the traffic, or NULL */
};

/* trace.c: opens the traffic copy of c when GLASSBOX_CDP_TRACE is set. */
void cdp_trace_open(struct cdp_conn *c);
/* Appends one message: dir '>' sent, '<' received. */
void cdp_trace(struct cdp_conn *c, char dir, const char *msg, size_t len);
void cdp_trace_close(struct cdp_conn *c);

/* 1 inside the wait loop or an event dispatch: waits and cdp_close()
 * are refused there (listeners and predicates must not nest them). */
static inline int cdp_in_callback(const struct cdp_conn *c)
{
	return c->servicing || c->dispatching;
}

/* cdp.c */
void cdp_err_set(struct cdp_error *err, int cdp_code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
void cdp_err_copy(struct cdp_error *dst, const struct cdp_error *src);

/* conn.c */
void cdp_conn_closed(struct cdp_conn *c, const char *why);
int cdp_out_push(struct cdp_conn *c, char *buf, size_t len, uint64_t id);

/* service.c */
typedef int (*cdp_stop_fn)(struct cdp_conn *c, void *arg);
int cdp_service_until(struct cdp_conn *c, int64_t deadline_ms, cdp_stop_fn stop, void *arg);
void cdp_note_dispatched(struct cdp_conn *c);

/* calls.c */
struct cdp_call *cdp_calls_find(struct cdp_conn *c, uint64_t id);
void cdp_calls_deliver(struct cdp_conn *c, uint64_t id, json_t *result, json_t *error);
int cdp_calls_fail(struct cdp_conn *c, uint64_t id, int rc, const char *why);
void cdp_calls_fail_all(struct cdp_conn *c, int rc, const char *why);
void cdp_calls_free_all(struct cdp_conn *c);

/* events.c */
void cdp_events_dispatch(struct cdp_conn *c, const char *session_id, const char *method,
                         json_t *params);
int cdp_events_fail_waiters(struct cdp_conn *c, const char *session_id, const char *method, int rc,
                            const char *why);
void cdp_events_free_all(struct cdp_conn *c);

/* screencast.c */
/* Sends every acknowledgement of a screencast frame that came due. */
void cdp_casts_pump(struct cdp_conn *c);
/* Milliseconds from now until the next acknowledgement is due (0: now),
 * or -1 when none waits. */
int64_t cdp_casts_next_ms(const struct cdp_conn *c, int64_t now);
/* Frees every screencast (cdp_close: nothing is sent). */
void cdp_casts_free_all(struct cdp_conn *c);

/* message.c */
void cdp_message_rx(struct cdp_conn *c, const char *in, size_t len, int final);
void cdp_message_reset(struct cdp_conn *c);

/* surrogates.c */
/* Rewrites each \uXXXX escape of a lone UTF-16 surrogate in the JSON text
 * data (len bytes, need not be NUL-terminated) to \ufffd, in place (the
 * same length); a surrogate pair stays. Returns how many were rewritten. */
size_t cdp_json_fix_surrogates(char *data, size_t len);

/* skim.c */
void cdp_skim_init(struct cdp_skim *s);
void cdp_skim_feed(struct cdp_skim *s, const char *p, size_t len);

#ifdef CDP_UNITTEST_BUILD
/* UNITTEST helpers: static in normal builds, reachable from tests and the
 * fuzzer when the module is compiled with -DUNITTEST=. */
int cdp_conn_new(const struct cdp_options *opts, struct cdp_conn **out);
int cdp_message_handle(struct cdp_conn *c, const char *data, size_t len);
#endif

#endif

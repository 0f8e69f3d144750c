/*
 * http-private.h - what the pieces of `glassbox serve` share (serve.h has
 * the file map); not for other modules.
 */
#ifndef GB_MCP_HTTP_PRIVATE_H
#define GB_MCP_HTTP_PRIVATE_H

#include <jansson.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>

#include "actions/actions.h"
#include "common/util.h"
#include "mcp/serve.h"

struct lws;
struct lws_context;
struct mcp_server;

/* One outgoing message, encoded. */
struct hs_msg {
	char *text; /* owned: compact JSON, no newline */
	size_t len;
	struct hs_msg *next;
};

/* The answer to one POSTed request: the messages that belong to it, the
 * last being its response. */
struct hs_stream {
	json_t *id;          /* owned: the request's id */
	struct lws *wsi;     /* {hs->lock} the connection waiting, NULL once gone */
	struct hs_msg *head; /* {hs->lock} queued, not yet written */
	struct hs_msg *tail; /* {hs->lock} */
	int done;            /* {hs->lock} the response (or the end) is queued */
	int ended_empty;     /* {hs->lock} ended without a response (cancelled) */
	int response_error;  /* {hs->lock} the response is a JSON-RPC error */
	/* front thread only */
	int headers_sent;
	int sse;
	int is_initialize;
	struct hs_stream *next; /* {hs->lock} */
};

enum hs_state { HS_OPEN, HS_CLOSING };

/* One MCP session: an mcp_server (one act_session, one browser) for one
 * tenant. Reference-counted: the table holds one, each connection using it
 * one, the closer one. */
struct http_session {
	char id[65]; /* Mcp-Session-Id: 32 random bytes, hex */
	const struct mcp_tenant *tenant;
	struct act_config cfg; /* the tenant's view of the base config */
	struct mcp_server *srv;
	struct hs_table *table;
	pthread_mutex_t lock;
	int refs;                  /* {lock} */
	struct hs_stream *streams; /* {lock} */
	/* front thread only */
	enum hs_state state;
	int64_t created_ms;
	int64_t last_active_ms;
	unsigned long calls;       /* tools/call accepted */
	struct http_session *next; /* in the table */
	int cut_off;               /* closed by hard TTL or a kill: its profile is not
	                                  sealed (set before the closer thread sees it) */
};

/* The sessions of the service. Front thread only, except wake. */
struct hs_table {
	const struct mcp_serve_config *cfg;
	const struct act_config *base;
	struct lws_context *ctx; /* woken when a worker queues output */
	struct http_session *head;
	size_t count;
	/* the closer thread: frees sessions off the front */
	pthread_t closer;
	int closer_started;
	pthread_mutex_t close_lock;
	pthread_cond_t close_cond;
	struct http_session *close_queue; /* {close_lock} linked by next */
	size_t closing;                   /* {close_lock} queued or being freed */
	int closer_stop;                  /* {close_lock} */
};

int hs_table_init(struct hs_table *t, const struct mcp_serve_config *cfg,
                  const struct act_config *base);
/* Closes every session and waits until all are freed; stops the closer. */
void hs_table_shutdown(struct hs_table *t);

/* Why a new session is refused: 0 (it may start), or the limit reached. */
enum hs_refusal { HS_OK, HS_LIMIT_TOTAL, HS_LIMIT_TENANT };
enum hs_refusal hs_admission(struct hs_table *t, const struct mcp_tenant *tenant);

/* A new session for tenant, in the table; returns a counted reference
 * (the caller's), or NULL. */
struct http_session *hs_create(struct hs_table *t, const struct mcp_tenant *tenant);

/* The session with id that belongs to tenant (NULL: any tenant, for the
 * admin); a counted reference, or NULL. Another tenant's session is not
 * found, exactly like an unknown id. */
struct http_session *hs_find(struct hs_table *t, const char *id, const struct mcp_tenant *tenant);

/* Takes one more reference to hs (any thread). */
void hs_ref(struct http_session *hs);
/* Drops one; the last frees hs and its streams (its server is already
 * freed by then). NULL is fine. Any thread. */
void hs_unref(struct http_session *hs);

/* Takes hs out of the table, ends its pending answers with an error,
 * cancels its calls and hands it to the closer thread (which frees the
 * browser). reason: a metrics label. Idempotent. Front thread. */
void hs_close(struct http_session *hs, const char *reason);

/* Idle and hard TTLs: closes expired sessions. Front thread. */
void hs_expire(struct hs_table *t, int64_t now_ms);

/* A new stream for request id (borrowed, copied) on hs, waiting on wsi.
 * Returns NULL when out of memory or when a stream for an equal id is
 * still waiting (the caller answers 409-style). */
struct hs_stream *hs_stream_open(struct http_session *hs, json_t *id, struct lws *wsi);

/* Ends the stream of request id without a response (the client cancelled
 * it). Front thread. */
void hs_stream_cancel(struct http_session *hs, json_t *id);

/* Takes the queued messages of st (the caller frees them with
 * hs_msgs_free); *done: the stream has nothing more to come; *error: the
 * response was an error; *empty: it ended without one. */
struct hs_msg *hs_stream_take(struct http_session *hs, struct hs_stream *st, int *done, int *error,
                              int *empty);

/* The connection of st went away (or finished): st is detached, and
 * freed. Front thread. */
void hs_stream_release(struct http_session *hs, struct hs_stream *st);

/* Frees a list of messages. */
void hs_msgs_free(struct hs_msg *m);

/* Asks for a writable callback on every connection that has output
 * queued. Front thread (on LWS_CALLBACK_EVENT_WAIT_CANCELLED). */
void hs_table_flush(struct hs_table *t);

/* Counts for metrics and the admin: open sessions busy / idle, closing. */
void hs_table_counts(struct hs_table *t, size_t *busy, size_t *idle, size_t *closing);

/* GET /sessions on the admin listener: a new JSON array. */
json_t *hs_table_list(struct hs_table *t);

/* ---- http.c / admin_http.c ---------------------------------------------- */

/* The whole service: one per mcp_http_serve(). Front thread only. */
struct serve {
	const struct mcp_serve_config *cfg;
	const struct mcp_serve_hooks *hooks;
	struct hs_table table;
	struct lws_context *ctx;
	int loopback_only;        /* listening on loopback: Host is checked */
	int stopping;             /* SIGTERM: no new requests */
	int64_t stop_deadline_ms; /* calls in flight are cancelled after */
	int64_t closed_at_ms;     /* every session closed: exit soon after */
	int finished;             /* leave the service loop */
	const atomic_int *stop;   /* raised by the signal handler */
};

/* A fixed response (an error, an admin answer), written on the next
 * writable callback. */
struct fixed_resp {
	int status; /* 0: none pending */
	char ctype[64];
	char *body; /* owned, LWS_PRE bytes of headroom, or NULL */
	size_t len;
	char session_id[65];        /* Mcp-Session-Id to send, or "" */
	int retry_after_s;          /* Retry-After, or 0 */
	char www_authenticate[160]; /* or "" */
	char allow[48];             /* Allow (405), or "" */
	int close_after;            /* close the connection once written */
};

/* Per-connection state; reset between keep-alive requests. */
struct pss {
	int route; /* enum mcp_http_route, or admin's */
	const struct mcp_tenant *tenant;
	char session_id[80];
	struct gb_buf body;
	int body_on;
	int too_large;
	struct http_session *hs; /* counted reference, or NULL */
	struct hs_stream *st;    /* the answer this connection waits for */
	struct fixed_resp resp;
};

/* Queues a fixed response on wsi: body (borrowed, copied) of len bytes. */
void mcp_http_respond(struct lws *wsi, struct pss *pss, int status, const char *ctype,
                      const char *body, size_t len);

/* A JSON response: value stolen. */
void mcp_http_respond_json(struct lws *wsi, struct pss *pss, int status, json_t *value);

/* Handles a request on the admin listener (headers complete). Returns 0,
 * or -1 to close the connection. */
int mcp_admin_handle(struct serve *s, struct lws *wsi, struct pss *pss, const char *method,
                     const char *path);

/* Sets the gauges that are counted rather than updated (sessions by
 * state, approvals pending). */
void mcp_admin_update_gauges(struct serve *s);

#endif

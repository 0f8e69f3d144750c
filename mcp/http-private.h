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

#include <microhttpd.h>

#include "actions/actions.h"
#include "common/util.h"
#include "mcp/serve.h"

/* An Mcp-Session-Id: the replica id, a dot, 64 hex digits, NUL. */
#define HS_ID_BYTES (MCP_TENANT_NAME_MAX + 66)

struct MHD_Connection;
struct MHD_Daemon;
struct http_req;
struct http_peer;
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
	json_t *id;           /* owned: the request's id */
	struct http_req *req; /* {hs->lock} the request waiting, NULL once gone */
	struct hs_msg *head;  /* {hs->lock} queued, not yet written */
	struct hs_msg *tail;  /* {hs->lock} */
	int done;             /* {hs->lock} the response (or the end) is queued */
	int ended_empty;      /* {hs->lock} ended without a response (cancelled) */
	int response_error;   /* {hs->lock} the response is a JSON-RPC error */
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
	char id[HS_ID_BYTES]; /* Mcp-Session-Id: [<replica>.]<32 random bytes, hex> */
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
	int64_t last_call_ms;      /* the last tools/call accepted, or 0 */
	struct http_session *next; /* in the table */
	int cut_off;               /* closed by hard TTL or a kill: its profile is not
	                                  sealed (set before the closer thread sees it) */
	/* its CDP client (http_cdp.c): one at a time */
	struct relay *cdp_relay; /* {lock} the running relay (a counted reference), or NULL */
	int cdp_connecting;      /* {lock} a client's upgrade is under way */
	char cdp_url[300 + 8 + HS_ID_BYTES]; /* ws://HOST:PORT/cdp/<id> (cfg.cdp_endpoint) */
};

/* The sessions of the service. Front thread only, except wake. */
struct hs_table {
	const struct mcp_serve_config *cfg;
	const struct act_config *base;
	int wake_fd;        /* eventfd: a worker queued output (any thread writes) */
	char cdp_base[300]; /* ws://HOST:PORT of the listener, for CDP endpoints */
	struct http_session *head;
	size_t count;
	/* the closer thread: frees sessions off the front */
	pthread_t closer;
	int closer_started;
	pthread_mutex_t close_lock;
	pthread_cond_t close_cond;
	struct http_session *close_queue; /* {close_lock} linked by next */
	size_t closing;                   /* {close_lock} queued or being freed */
	/* {close_lock} the tenant of the session being freed (the session
	 * itself is gone before its count is) */
	const struct mcp_tenant *freeing_tenant;
	int closer_stop; /* {close_lock} */
};

int hs_table_init(struct hs_table *t, const struct mcp_serve_config *cfg,
                  const struct act_config *base);
/* Closes every session and waits until all are freed; stops the closer. */
void hs_table_shutdown(struct hs_table *t);

/* Why a new session is refused: 0 (it may start), or the limit reached. */
enum hs_refusal { HS_OK, HS_LIMIT_TOTAL, HS_LIMIT_TENANT };

/* What holds the capacity a refusal names (hs_admission fills it). */
struct hs_capacity {
	size_t open;           /* the sessions that count: the tenant's, or all */
	size_t idle;           /* of those, open with no call running */
	size_t closing;        /* of those, closed but their browser not yet gone */
	int64_t next_expiry_s; /* seconds until the first idle one expires, or -1 */
};

/* Whether tenant may open one more session. A closing session counts
 * against its own tenant and the service until its browser is gone. cap
 * (may be NULL) says what holds the limit that refused. */
enum hs_refusal hs_admission(struct hs_table *t, const struct mcp_tenant *tenant,
                             struct hs_capacity *cap);

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

/* Idle, unused and hard TTLs: closes expired sessions. Front thread. */
void hs_expire(struct hs_table *t, int64_t now_ms);

/* A new stream for request id (borrowed, copied) on hs, answered on req.
 * Returns NULL when out of memory or when a stream for an equal id is
 * still waiting (the caller answers 409-style). */
struct hs_stream *hs_stream_open(struct http_session *hs, json_t *id, struct http_req *req);

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

/* Wakes every request that has output queued (mcp_http_wake). Front
 * thread, after the wake fd fired. */
void hs_table_flush(struct hs_table *t);

/* Counts for metrics and the admin: open sessions busy / idle, closing. */
void hs_table_counts(struct hs_table *t, size_t *busy, size_t *idle, size_t *closing);

/* GET /sessions on the admin listener: a new JSON array. */
json_t *hs_table_list(struct hs_table *t);

/* ---- http.c, http_mcp.c, admin_http.c ---------------------------------- */

/* The whole service: one per mcp_http_serve(). Front thread only. */
struct serve {
	const struct mcp_serve_config *cfg;
	const struct mcp_serve_hooks *hooks;
	struct hs_table table;
	struct MHD_Daemon *mcp;      /* the /mcp listener */
	struct MHD_Daemon *admin;    /* the admin listener, or NULL */
	struct http_req *reqs;       /* every request alive, linked by next */
	struct http_peer *peers;     /* client addresses with connections open */
	int loopback_only;           /* listening on loopback: Host is checked */
	int draining;                /* SIGTERM with replica.drain_s: no new sessions */
	int64_t drain_deadline_ms;   /* the stop begins then at the latest */
	int stopping;                /* SIGTERM: no new requests */
	int tearing_down;            /* the loop is over: nothing waits any more */
	int64_t stop_deadline_ms;    /* calls in flight are cancelled after */
	int64_t closed_at_ms;        /* every session closed: exit soon after */
	int finished;                /* leave the service loop */
	int bound_port;              /* the port of the /mcp listener */
	struct cdp_link *cdp_links;  /* CDP clients connected (http_cdp.c) */
	const atomic_int *stop;      /* raised by the signal handler */
	struct mcp_console *console; /* the web console (console_http.c), or NULL */
};

#define FIXED_RESP_HEADERS_MAX 10

/* A fixed response (an error, an admin answer), queued once the request
 * is read. */
struct fixed_resp {
	int status; /* 0: none pending */
	char ctype[64];
	char *body; /* owned, or NULL */
	size_t len;
	char session_id[HS_ID_BYTES]; /* Mcp-Session-Id to send, or "" */
	int retry_after_s;            /* Retry-After, or 0 */
	char www_authenticate[160];   /* or "" */
	char allow[48];               /* Allow (405), or "" */
	int close_after;              /* close the connection once written */
	/* more headers (the console's: Set-Cookie, Location, CSP...) */
	struct {
		char name[32];
		char value[320];
	} hdr[FIXED_RESP_HEADERS_MAX];
	size_t n_hdr;
};

/* Adds header name: value (both copied, cut to fit) to r; ignored past
 * FIXED_RESP_HEADERS_MAX. */
void mcp_http_resp_header(struct fixed_resp *r, const char *name, const char *value);

/* One HTTP request, from its headers until its connection is done with
 * it (keep-alive gets a new one per request). Front thread only. */
struct http_req {
	struct serve *s;
	struct MHD_Connection *conn;
	int admin;      /* on the admin listener */
	int dispatched; /* the body is in and was handled */
	int suspended;  /* waiting for output (mcp_http_wake resumes it) */
	int route;      /* enum mcp_http_route */
	const struct mcp_tenant *tenant;
	char session_id[HS_ID_BYTES + 16];
	struct gb_buf body;
	int body_on;
	int too_large;
	size_t discarded;        /* body bytes read and dropped (a refused request) */
	struct http_session *hs; /* counted reference, or NULL */
	char admin_method[8];    /* an admin request with a body: its method and path */
	char admin_path[512];
	struct hs_stream *st; /* the answer this request waits for */
	struct fixed_resp resp;
	/* an SSE answer being written */
	struct gb_buf sse;
	size_t sse_off;
	int sse_end;
	struct http_req *next, *prev; /* in s->reqs */
	/* a websocket upgrade to queue (http_cdp.c) */
	struct cdp_link *cdp_link; /* until the relay takes it (or the request ends) */
	char cdp_accept[40];
	int upgrade_queued;
};

/* Sets req's fixed response: body (borrowed, copied) of len bytes. */
void mcp_http_respond(struct http_req *req, int status, const char *ctype, const char *body,
                      size_t len);

/* A JSON response: value stolen. */
void mcp_http_respond_json(struct http_req *req, int status, json_t *value);

/* An HTTP error on /mcp: the body is a JSON-RPC error (id null) whose
 * message (borrowed) says what to do; counted by status. */
void mcp_http_respond_rpc_error(struct http_req *req, int status, int code, const char *message);

/* Copies request header name ("Host") into buf; NULL when absent or
 * longer than len - 1. */
const char *mcp_http_header(struct http_req *req, const char *name, char *buf, size_t len);

/* How many times the request carries header name. */
int mcp_http_header_count(struct http_req *req, const char *name);

/* Resumes req if it is suspended waiting for output. Front thread. */
void mcp_http_wake(struct http_req *req);

/* Whether host is a loopback address or name. */
int mcp_http_is_loopback(const char *host);

/* Wakes the front from any thread (a worker queued output). */
void mcp_http_wake_front(struct hs_table *t);

/* MHD_NotifyConnectionCallback of both listeners (http_peers.c): counts
 * each connection of its client address in and out. cls: the serve. */
void mcp_http_peer_notify(void *cls, struct MHD_Connection *conn, void **socket_context,
                          enum MHD_ConnectionNotificationCode code);

/* Whether req's client address has more connections open than
 * limits.max_connections_per_peer; its text into name when so. */
int mcp_http_peer_over_limit(struct http_req *req, char *name, size_t len);

/* Everything /mcp needs from the headers (http_mcp.c): sets req's
 * response when the request is refused, else prepares it for its body. */
void mcp_http_mcp_headers(struct serve *s, struct http_req *req, const char *method,
                          const char *path);

/* The whole body of a POST to /mcp is in: parse it and route it. */
void mcp_http_mcp_body(struct serve *s, struct http_req *req);

/* Handles a request on the admin listener (headers complete): sets req's
 * response. */
void mcp_admin_handle(struct serve *s, struct http_req *req, const char *method, const char *path);

/* The whole body of an admin request is in (a console form). */
void mcp_admin_body(struct serve *s, struct http_req *req);

/* ---- console_http.c, console_pages.c ------------------------------------ */

struct mcp_console;
/* The console's state (logins, evidence handles); NULL when it cannot be
 * served (logged). Front thread. */
struct mcp_console *mcp_console_start(struct serve *s);
void mcp_console_stop(struct mcp_console *c);
/* 1 when path is the console's (/console...): the request is handled
 * (response set, or the body is awaited: req->body_on). */
int mcp_console_handle(struct serve *s, struct http_req *req, const char *method, const char *path);
/* A console request's body is in. */
void mcp_console_body(struct serve *s, struct http_req *req);

/* Sets the gauges that are counted rather than updated (sessions by
 * state, approvals pending). */
void mcp_admin_update_gauges(struct serve *s);

/* ---- http_cdp.c: POST /sessions, DELETE /sessions/<id>, GET /cdp/<id> -- */

struct cdp_link;

/* 1 when path is one of the CDP endpoint's. */
int mcp_http_cdp_route(const char *path);
/* Handles a CDP endpoint request once its headers are in: a fixed
 * response, or req->cdp_link for an upgrade to queue. Front thread. */
void mcp_http_cdp_headers(struct serve *s, struct http_req *req, const char *method,
                          const char *path);
/* Queues the 101 of req->cdp_link (the relay starts once it is out). */
enum MHD_Result mcp_http_cdp_queue_upgrade(struct http_req *req);
/* Drops an upgrade that was never queued (its request ended). */
void mcp_http_cdp_drop(struct http_req *req);
/* Closes the sockets of relays that ended and forgets them; keeps the
 * sessions of connected clients alive. Front thread. */
void mcp_http_cdp_reap(struct serve *s);
/* CDP clients connected now. Front thread. */
size_t mcp_http_cdp_count(struct serve *s);
/* Asks hs's relay to end (hs_close, front). */
void hs_cdp_stop(struct http_session *hs);
/* Stops hs's relay and waits until it no longer uses the session (the
 * closer thread, before the browser goes). */
void hs_cdp_end(struct http_session *hs);

#endif

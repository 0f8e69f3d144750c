/*
 * relay.h - a policed CDP relay: one websocket client (Playwright,
 * Puppeteer) driving one session's browser through glassbox
 * (docs/cdp.md).
 *
 * A struct relay owns one thread that moves CDP messages between the
 * client's socket (already upgraded to a websocket by the HTTP front) and
 * a second DevTools connection of its own to the session's browser. On
 * the way it filters methods against an allowlist (refusals are CDP
 * errors naming the rule), keeps the client's new targets and contexts on
 * the session's egress path, gates input at a point whose element the
 * risk rules would hold, and hands what it saw to the session's evidence
 * through the hooks below.
 *
 * Threads: relay_start, relay_stop, relay_wait, relay_done, relay_ref and
 * relay_unref may be called from any thread; the hooks run on the relay's
 * thread, except record and screenshot, which its camera thread (evidence
 * screenshots) calls too: they must be thread-safe. A relay is reference-counted; its thread holds one reference
 * until it ends.
 */
#ifndef GB_RELAY_H
#define GB_RELAY_H

#include <jansson.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

struct policy_risk;
struct relay;

/* Where the session's browser is, filled by the endpoint hook. */
struct relay_browser {
	char devtools_url[704];   /* ws://127.0.0.1:PORT/devtools/browser/ID */
	int fd;                   /* a connected socket to its port (taken), or -1 */
	int camera_fd;            /* a second one, for the evidence screenshots (taken), or -1 */
	char context_id[64];      /* the session's browser context, or "" (the default one) */
	char proxy_server[112];   /* forced on contexts the client creates, or "" */
	char downloads_dir[1100]; /* where downloads may be written */
	char browser_session[40]; /* the browser's session id, for records */
};

struct relay_hooks {
	void *user;
	/* Makes sure the browser runs and connects to it (on the relay's
	 * thread: it may wait, and should return early once *stop rises).
	 * Returns 0, or -1 with a reason the client is told. */
	int (*browser)(void *user, const atomic_int *stop, struct relay_browser *out, char *err,
	               size_t errlen);
	/* An audit record of kind (body stolen). */
	void (*record)(void *user, const char *kind, json_t *body);
	/* A screenshot to keep (png taken); why: "navigation" or "input". Taken
	 * on the relay's own DevTools connection, never the client's. */
	void (*screenshot)(void *user, const char *why, const char *url, unsigned char *png,
	                   size_t len);
	/* The relay's thread is about to end: nothing more will be called. */
	void (*ended)(void *user);
};

struct relay_options {
	int client_fd;        /* the client's socket, upgraded (borrowed: the front closes it) */
	const char *extra_in; /* bytes the front read past the handshake (copied) */
	size_t extra_in_len;
	const char *who;                /* the client, for records: tenant and peer (copied) */
	const char *endpoint;           /* the endpoint's session id, for records (copied) */
	const struct policy_risk *risk; /* the tenant's risk rules (borrowed; must outlive) */
	int gates;                      /* 1: input the risk rules hold is refused */
	int screenshot_every_s;         /* during input; >= 1 */
	size_t max_message_bytes;       /* client -> browser; 0 = 16 MiB */
	struct relay_hooks hooks;       /* copied */
};

/* Starts the relay's thread. Returns 0 with *out (the caller's
 * reference), or -1 with err. */
int relay_start(const struct relay_options *o, struct relay **out, char *err, size_t errlen);

/* Asks the relay to end (the client is sent a close frame); returns at
 * once. Idempotent. */
void relay_stop(struct relay *r);

/* Waits until the relay's thread no longer calls its hooks. */
void relay_wait(struct relay *r);

/* 1 once the relay's thread has ended. */
int relay_done(struct relay *r);

struct relay *relay_ref(struct relay *r);
/* Drops a reference; the last frees r. NULL is a no-op. */
void relay_unref(struct relay *r);

/* Sec-WebSocket-Accept for a client's Sec-WebSocket-Key (RFC 6455) into
 * out (at least 29 bytes). Returns 0, or -1 for a key that is not the
 * base64 of 16 bytes. */
int relay_ws_accept(const char *key, char *out, size_t outlen);

/* ---- a browser message's first member (peek.c) ----------------------- */

enum relay_peek {
	RELAY_PEEK_OTHER = 0, /* another shape: parse it whole */
	RELAY_PEEK_REPLY,     /* {"id":N,...}: *id is N */
	RELAY_PEEK_EVENT,     /* {"method":"M",...}: method is M */
};

/*
 * Reads what the browser message data (len bytes, borrowed) starts with,
 * and nothing past it: the id of a reply, or the method of an event
 * (NUL-terminated into method; one that does not fit is RELAY_PEEK_OTHER).
 * Pure. Only Chromium's own compact output is recognised; anything else
 * is RELAY_PEEK_OTHER, never a guess.
 */
enum relay_peek relay_peek_browser(const uint8_t *data, size_t len, int64_t *id, char *method,
                                   size_t methodlen);

/* ---- the allowlist (filter.c) ----------------------------------------- */

/* What the filter decided about one client message. */
enum relay_verdict {
	RELAY_FORWARD = 0, /* as sent */
	RELAY_REWRITTEN,   /* params changed to keep the boundary (forward the new form) */
	RELAY_REFUSE,      /* answered with a CDP error naming rule */
};

/* What the filter needs to know about the session. */
struct relay_scope {
	const char *context_id;    /* the session's browser context, or "" */
	const char *proxy_server;  /* the session's proxy, or "" */
	const char *downloads_dir; /* the only place downloads may go */
	/* contexts this client created (it may dispose of and use them) */
	const char *const *client_contexts;
	size_t n_client_contexts;
};

/*
 * Decides about method (borrowed) with params (a JSON object this may
 * change in place, for RELAY_REWRITTEN; may be NULL = {}) sent on CDP
 * session sid ("" = the browser target). On RELAY_REFUSE, rule names the
 * rule and why says what to do (both NUL-terminated). Pure: no I/O.
 */
enum relay_verdict relay_filter(const struct relay_scope *scope, const char *method, json_t *params,
                                const char *sid, char *rule, size_t rulelen, char *why,
                                size_t whylen);

/* The documented table (docs/cdp.md): a new JSON array of {domain,
 * relayed, rules}. */
json_t *relay_filter_table(void);

#endif

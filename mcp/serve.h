/*
 * serve.h - `glassbox serve`: MCP over Streamable HTTP for many tenants
 * (docs/service.md).
 *
 *   serve_config.c  the service's config file: listeners, limits, tenants
 *                   with hashed bearer tokens and their policies
 *   auth.c          bearer tokens: hashing and constant-time checks
 *   http.c          the front: libmicrohttpd listeners run by one thread,
 *                   requests, responses, SSE, the wake-up from workers
 *   http_mcp.c      /mcp: the checks on headers, bodies, sessions
 *   http_cdp.c      the CDP endpoint: POST /sessions, DELETE /sessions/<id>,
 *                   the websocket GET /cdp/<id> handed to a relay (relay/)
 *   http_session.c  the table of MCP sessions: ids, tenants, queues of
 *                   outgoing messages, limits, TTLs, closing off the front
 *   admin_http.c    the admin listener: health, sessions, approvals, metrics
 *   console_http.c  the web console on the admin listener: login, routes,
 *                   decisions, take-over (docs/console.md)
 *   console_pages.c its pages: sessions, live view, approvals, trail
 */
#ifndef GB_MCP_SERVE_H
#define GB_MCP_SERVE_H

#include "blob/blob.h"

#include <jansson.h>
#include <signal.h>
#include <stdatomic.h>
#include <stddef.h>

#include "console/console.h"

struct act_config;
struct store;
struct policy_tenant;

#define MCP_TENANT_NAME_MAX 64
#define MCP_ORIGINS_MAX 16

struct mcp_tenant {
	char name[MCP_TENANT_NAME_MAX]; /* [A-Za-z0-9_.-], 1..63 */
	unsigned char token_sha256[32]; /* SHA-256 of the bearer token */
	json_t *policy;                 /* owned: the tenant's policy, or NULL */
	char policy_source[320];        /* "tenants.<name>.policy of FILE", or "" */
	struct policy_tenant *parsed;   /* the policy parsed once for all the tenant's
	                                 * sessions (cli_policy_serve_prepare), or NULL */
	int max_sessions;               /* at once, this tenant */
	int tool_calls_per_session;     /* 0: no budget */
	int action_timeout_ms;          /* per tool call */
};

struct mcp_serve_config {
	char host[64];                      /* "127.0.0.1" unless configured */
	int port;                           /* 0: any free port */
	char origins[MCP_ORIGINS_MAX][128]; /* allowed Origin values besides
	                                     http://localhost|127.0.0.1[:port] */
	size_t n_origins;
	int admin_enabled;
	char admin_host[64];
	int admin_port;
	unsigned char admin_token_sha256[32];
	int max_sessions;             /* at once, all tenants */
	size_t max_body_bytes;        /* one POST body */
	int idle_ttl_s;               /* closed after this long without a request
	                                     or a running call */
	int hard_ttl_s;               /* closed this long after it started */
	int shared_browser_linger_s;  /* isolation "context": a tenant's shared browser
	                                     stays this long after its last session */
	int unused_ttl_s;             /* closed this long after it started when it
	                                     has made no tool call */
	int http_timeout_s;           /* a connection idle this long is closed
	                                     (a call in progress is not idle) */
	int max_connections;          /* HTTP connections at once, per listener */
	int max_connections_per_peer; /* of those, from one address */
	int shutdown_grace_s;         /* SIGTERM: calls in flight may finish this long */
	int retry_after_s;            /* Retry-After of a 429 */
	int prelaunch;                /* start a session's browser at initialize
	                                     (default), not at its first tool call */
	int warm_pool;                /* browsers kept launched for new sessions
	                                     (0 = none) */
	/* One replica of many (docs/deploy.md). */
	char replica_id[MCP_TENANT_NAME_MAX]; /* replica.id, else $GLASSBOX_REPLICA_ID; "":
	                                       * one machine, session ids name no replica */
	int drain_s;                          /* SIGTERM: /readyz says 503 and new sessions go
	                                     elsewhere; open ones are served this long (or
	                                     until they end) before the stop (0: none) */
	int audit_ship_interval_ms;           /* how often the audit trail is shipped */
	int has_object_store;                 /* object_store given: evidence is shipped there */
	struct blob_config object_store;      /* its settings and credentials */
	struct mcp_tenant *tenants;           /* owned */
	size_t n_tenants;
	/* "store": where the durable state is (docs/store.md); "" for SQLite
	 * in the data dir. The URL may hold a password: never log or echo it. */
	char store_postgres[2048];
	struct console_config console; /* the web console on the admin listener */
};

/*
 * Reads the config root (borrowed; docs/service.md has the schema) into a
 * new *out (free with mcp_serve_config_free). Unknown keys, wrong types,
 * bad hashes, duplicate tenants and out-of-range limits are refused.
 * Returns 0, or -1 with what is wrong and where in err.
 */
int mcp_serve_config_parse(json_t *root, struct mcp_serve_config **out, char *err, size_t errlen);
void mcp_serve_config_free(struct mcp_serve_config *c);

/* The tenant whose token is in an Authorization header value ("Bearer
 * <token>"; NULL or anything else: none). Every tenant's hash is compared
 * in constant time, whether or not one matched. Borrowed from c, or NULL. */
const struct mcp_tenant *mcp_auth_tenant(const struct mcp_serve_config *c,
                                         const char *authorization);

/* 1 when authorization carries a token whose SHA-256 is hash; constant
 * time. */
int mcp_auth_bearer_matches(const char *authorization, const unsigned char hash[32]);

/* Lowercase hex SHA-256 of token into hex (65 bytes). */
void mcp_auth_token_hash_hex(const char *token, char hex[65]);

/* What the service needs from outside mcp/. */
struct mcp_serve_hooks {
	/* Pending approvals for the admin listener: a new reference to a JSON
	 * array, or NULL on error. May be NULL. Front thread. */
	json_t *(*list_approvals)(void *user);
	/* The service's state for /healthz beyond "ok" (egress layers, warm
	 * pool), refreshing the gauges it knows of: a new reference to a JSON
	 * object, or NULL. May be NULL. Front thread. */
	json_t *(*status)(void *user);
	void *user;
	/* The approvals' store, for the web console's decisions (borrowed, thread-safe); NULL:
	 * the console lists and decides nothing. */
	struct store *store;
};

/*
 * Serves MCP over Streamable HTTP on cfg's listener (and the admin one)
 * until *stop becomes non-zero (a signal handler sets it), then shuts down
 * gracefully: no new requests, calls in flight get shutdown_grace_s to
 * finish and are cancelled after, every session is closed (browsers gone,
 * records flushed). base: the act_config every session starts from
 * (data_dir, chromium, headless); tenant, policy and timeout come from the
 * tenant. cfg, base and hooks are borrowed until it returns.
 * Returns 0 after a clean shutdown, -1 when the listeners could not start
 * (reason logged).
 */
int mcp_http_serve(const struct mcp_serve_config *cfg, const struct act_config *base,
                   const struct mcp_serve_hooks *hooks, const atomic_int *stop);

#endif

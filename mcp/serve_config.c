/*
 * serve_config.c - the config file of `glassbox serve` (serve.h; the
 * schema is in docs/service.md).
 *
 * Design note
 * - Input is hostile: every key is checked for its type and range, and
 *   unknown keys are refused (a typo must not silently weaken a limit).
 * - Errors name the key ("tenants.acme.token_sha256 must be 64 hex
 *   digits") and never echo a value that might be a secret.
 */
#include "mcp/serve.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define DEFAULT_PORT 8931
#define DEFAULT_ADMIN_PORT 8932

/* Writes the error and returns -1. */
static int fail(char *err, size_t errlen, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static int fail(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
	return -1;
}

/* Refuses keys of obj (named where) not in allowed (NULL-terminated). */
static int only_keys(json_t *obj, const char *where, const char *const *allowed, char *err,
                     size_t errlen)
{
	const char *key;
	json_t *v;
	size_t i;

	json_object_foreach(obj, key, v)
	{
		for (i = 0; allowed[i] && strcmp(allowed[i], key) != 0; i++)
			;
		if (!allowed[i])
			return fail(err, errlen, "%s: unknown key \"%.64s\" (see docs/service.md)",
			            where, key);
	}
	return 0;
}

/* An optional integer obj.key in [min, max] into *out (left alone when
 * absent). */
static int get_int(json_t *obj, const char *where, const char *key, long long min, long long max,
                   int *out, char *err, size_t errlen)
{
	json_t *v = json_object_get(obj, key);

	if (!v)
		return 0;
	if (!json_is_integer(v) || json_integer_value(v) < min || json_integer_value(v) > max)
		return fail(err, errlen, "%s.%s must be an integer from %lld to %lld", where, key,
		            min, max);
	*out = (int)json_integer_value(v);
	return 0;
}

/* An optional string obj.key of at most cap-1 bytes into out. */
static int get_str(json_t *obj, const char *where, const char *key, char *out, size_t cap,
                   char *err, size_t errlen)
{
	json_t *v = json_object_get(obj, key);

	if (!v)
		return 0;
	if (!json_is_string(v) || json_string_length(v) == 0 || json_string_length(v) >= cap)
		return fail(err, errlen, "%s.%s must be a non-empty string of at most %zu bytes",
		            where, key, cap - 1);
	snprintf(out, cap, "%s", json_string_value(v));
	return 0;
}

/* obj.key: 64 hex digits (a SHA-256) into hash; required. */
static int get_hash(json_t *obj, const char *where, const char *key, unsigned char hash[32],
                    char *err, size_t errlen)
{
	const char *hex = json_string_value(json_object_get(obj, key));
	size_t i;
	int hi, lo;

	if (!hex || strlen(hex) != 64)
		goto bad;
	for (i = 0; i < 32; i++) {
		hi = hex[2 * i] >= 'a' ? hex[2 * i] - 'a' + 10 : hex[2 * i] - '0';
		lo = hex[2 * i + 1] >= 'a' ? hex[2 * i + 1] - 'a' + 10 : hex[2 * i + 1] - '0';
		if (hi < 0 || hi > 15 || lo < 0 || lo > 15 ||
		    (hex[2 * i] > '9' && hex[2 * i] < 'a') ||
		    (hex[2 * i + 1] > '9' && hex[2 * i + 1] < 'a'))
			goto bad;
		hash[i] = (unsigned char)(hi << 4 | lo);
	}
	return 0;
bad:
	return fail(err, errlen,
	            "%s.%s must be the SHA-256 of the token as 64 lowercase hex digits (e.g. "
	            "printf %%s TOKEN | sha256sum)",
	            where, key);
}

/* Whether name is a usable tenant name: [A-Za-z0-9_.-]{1,63}, not "." or "..". */
static int tenant_name_ok(const char *name)
{
	size_t i, len = strlen(name);

	if (len == 0 || len >= MCP_TENANT_NAME_MAX || !strcmp(name, ".") || !strcmp(name, ".."))
		return 0;
	for (i = 0; i < len; i++) {
		char ch = name[i];

		if (!((ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') ||
		      (ch >= '0' && ch <= '9') || ch == '_' || ch == '.' || ch == '-'))
			return 0;
	}
	return 1;
}

/* listen: {host, port, allowed_origins}; absent: the defaults. */
static int parse_listen(json_t *v, struct mcp_serve_config *c, char *err, size_t errlen)
{
	static const char *const keys[] = { "host", "port", "allowed_origins", NULL };
	json_t *origins;
	json_t *o;
	size_t i;

	if (!v)
		return 0;
	if (!json_is_object(v))
		return fail(err, errlen, "listen must be an object {host, port, allowed_origins}");
	if (only_keys(v, "listen", keys, err, errlen) < 0 ||
	    get_str(v, "listen", "host", c->host, sizeof(c->host), err, errlen) < 0 ||
	    get_int(v, "listen", "port", 0, 65535, &c->port, err, errlen) < 0)
		return -1;
	origins = json_object_get(v, "allowed_origins");
	if (origins && (!json_is_array(origins) || json_array_size(origins) > MCP_ORIGINS_MAX))
		return fail(err, errlen,
		            "listen.allowed_origins must be an array of at most %d origins",
		            MCP_ORIGINS_MAX);
	json_array_foreach(origins, i, o)
	{
		if (!json_is_string(o) || json_string_length(o) == 0 ||
		    json_string_length(o) >= sizeof(c->origins[0]))
			return fail(err, errlen,
			            "listen.allowed_origins[%zu] must be an origin such as "
			            "\"https://app.example\"",
			            i);
		snprintf(c->origins[c->n_origins++], sizeof(c->origins[0]), "%s",
		         json_string_value(o));
	}
	return 0;
}

/* admin: {host, port, token_sha256}; present turns the admin listener on. */
/* "store": {"postgres": "postgresql://..."}. The URL is
 * checked for its form here and by libpq's parser at start; errors never
 * echo it (it may hold a password). */
static int parse_store(json_t *v, struct mcp_serve_config *c, char *err, size_t errlen)
{
	static const char *const keys[] = { "postgres", NULL };
	json_t *pg;
	size_t i;

	if (!v)
		return 0;
	if (!json_is_object(v))
		return fail(err, errlen,
		            "store must be an object {\"postgres\": \"postgresql://...\"}");
	if (only_keys(v, "store", keys, err, errlen) < 0)
		return -1;
	pg = json_object_get(v, "postgres");
	if (pg) {
		const char *url = json_string_value(pg);

		if (!json_is_string(pg) || json_string_length(pg) >= sizeof(c->store_postgres) ||
		    (strncmp(url, "postgresql://", 13) != 0 &&
		     strncmp(url, "postgres://", 11) != 0))
			return fail(
			    err, errlen,
			    "store.postgres must be a URL postgresql://USER@HOST:PORT/DATABASE "
			    "of at most %zu bytes (keep the password in PGPASSWORD or a "
			    "PGPASSFILE, not here)",
			    sizeof(c->store_postgres) - 1);
		for (i = 0; url[i]; i++)
			if ((unsigned char)url[i] < 0x21 || (unsigned char)url[i] == 0x7f)
				return fail(err, errlen,
				            "store.postgres must not hold spaces or control "
				            "characters: percent-encode them");
		snprintf(c->store_postgres, sizeof(c->store_postgres), "%s", url);
	}
	return 0;
}

static int parse_admin(json_t *v, struct mcp_serve_config *c, char *err, size_t errlen)
{
	static const char *const keys[] = { "host", "port", "token_sha256", NULL };

	if (!v)
		return 0;
	if (!json_is_object(v))
		return fail(err, errlen, "admin must be an object {host, port, token_sha256}");
	c->admin_enabled = 1;
	return only_keys(v, "admin", keys, err, errlen) < 0 ||
	               get_str(v, "admin", "host", c->admin_host, sizeof(c->admin_host), err,
	                       errlen) < 0 ||
	               get_int(v, "admin", "port", 0, 65535, &c->admin_port, err, errlen) < 0 ||
	               get_hash(v, "admin", "token_sha256", c->admin_token_sha256, err, errlen) < 0
	           ? -1
	           : 0;
}

/* limits: the service-wide values and the tenants' defaults. */
static int parse_limits(json_t *v, struct mcp_serve_config *c, struct mcp_tenant *defaults,
                        char *err, size_t errlen)
{
	static const char *const keys[] = { "max_sessions",
		                            "max_sessions_per_tenant",
		                            "max_body_bytes",
		                            "idle_ttl_s",
		                            "hard_ttl_s",
		                            "tool_calls_per_session",
		                            "action_timeout_ms",
		                            "shutdown_grace_s",
		                            "retry_after_s",
		                            "unused_ttl_s",
		                            "http_timeout_s",
		                            "max_connections",
		                            "max_connections_per_peer",
		                            "shared_browser_linger_s",
		                            NULL };
	int body = (int)c->max_body_bytes;

	if (!v)
		return 0;
	if (!json_is_object(v))
		return fail(err, errlen, "limits must be an object");
	if (only_keys(v, "limits", keys, err, errlen) < 0 ||
	    get_int(v, "limits", "max_sessions", 1, 100000, &c->max_sessions, err, errlen) < 0 ||
	    get_int(v, "limits", "max_sessions_per_tenant", 1, 100000, &defaults->max_sessions, err,
	            errlen) < 0 ||
	    get_int(v, "limits", "max_body_bytes", 1024, 64 << 20, &body, err, errlen) < 0 ||
	    get_int(v, "limits", "idle_ttl_s", 1, 7 * 86400, &c->idle_ttl_s, err, errlen) < 0 ||
	    get_int(v, "limits", "shared_browser_linger_s", 0, 3600, &c->shared_browser_linger_s,
	            err, errlen) < 0 ||
	    get_int(v, "limits", "hard_ttl_s", 1, 30 * 86400, &c->hard_ttl_s, err, errlen) < 0 ||
	    get_int(v, "limits", "tool_calls_per_session", 0, 100000000,
	            &defaults->tool_calls_per_session, err, errlen) < 0 ||
	    get_int(v, "limits", "action_timeout_ms", 100, 3600000, &defaults->action_timeout_ms,
	            err, errlen) < 0 ||
	    get_int(v, "limits", "shutdown_grace_s", 0, 3600, &c->shutdown_grace_s, err, errlen) <
	        0 ||
	    get_int(v, "limits", "retry_after_s", 1, 3600, &c->retry_after_s, err, errlen) < 0 ||
	    get_int(v, "limits", "unused_ttl_s", 1, 7 * 86400, &c->unused_ttl_s, err, errlen) < 0 ||
	    get_int(v, "limits", "http_timeout_s", 1, 3600, &c->http_timeout_s, err, errlen) < 0 ||
	    get_int(v, "limits", "max_connections", 1, 100000, &c->max_connections, err, errlen) <
	        0 ||
	    get_int(v, "limits", "max_connections_per_peer", 1, 100000,
	            &c->max_connections_per_peer, err, errlen) < 0)
		return -1;
	c->max_body_bytes = (size_t)body;
	return 0;
}

/* The "replica" object: {id, drain_s, audit_ship_interval_ms}; the id
 * falls back to $GLASSBOX_REPLICA_ID (a StatefulSet's pod name). */
static int parse_replica(json_t *v, struct mcp_serve_config *c, char *err, size_t errlen)
{
	static const char *const keys[] = { "id", "drain_s", "audit_ship_interval_ms", NULL };
	const char *env = getenv("GLASSBOX_REPLICA_ID");
	size_t i;

	if (v && !json_is_object(v))
		return fail(err, errlen,
		            "replica must be an object {id, drain_s, audit_ship_interval_ms}");
	if (v &&
	    (only_keys(v, "replica", keys, err, errlen) < 0 ||
	     get_str(v, "replica", "id", c->replica_id, sizeof(c->replica_id), err, errlen) < 0 ||
	     get_int(v, "replica", "drain_s", 0, 86400, &c->drain_s, err, errlen) < 0 ||
	     get_int(v, "replica", "audit_ship_interval_ms", 100, 600000,
	             &c->audit_ship_interval_ms, err, errlen) < 0))
		return -1;
	if (!c->replica_id[0] && env && env[0]) {
		if (strlen(env) >= sizeof(c->replica_id))
			return fail(err, errlen, "GLASSBOX_REPLICA_ID is longer than %zu bytes",
			            sizeof(c->replica_id) - 1);
		snprintf(c->replica_id, sizeof(c->replica_id), "%s", env);
	}
	/* it starts session ids ("<id>.<hex>") that a proxy routes by */
	for (i = 0; c->replica_id[i]; i++)
		if (!strchr("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-",
		            c->replica_id[i]))
			return fail(
			    err, errlen,
			    "the replica id (replica.id or GLASSBOX_REPLICA_ID) must be 1 to %zu "
			    "of A-Z a-z 0-9 _ -",
			    sizeof(c->replica_id) - 1);
	return 0;
}

/* One tenant: defaults from limits, then its own keys; its policy is
 * copied here and checked by actions/ (cmd_serve.c does so at start). */
static int parse_tenant(const char *name, json_t *v, const struct mcp_tenant *defaults,
                        struct mcp_tenant *t, char *err, size_t errlen)
{
	static const char *const keys[] = { "token_sha256",      "policy",
		                            "max_sessions",      "tool_calls_per_session",
		                            "action_timeout_ms", NULL };
	char where[96];
	json_t *policy;

	*t = *defaults;
	t->policy = NULL;
	if (!tenant_name_ok(name))
		return fail(err, errlen,
		            "tenant name \"%.64s\" must be 1 to 63 of A-Z a-z 0-9 _ . -", name);
	snprintf(t->name, sizeof(t->name), "%s", name);
	snprintf(where, sizeof(where), "tenants.%s", name);
	if (!json_is_object(v))
		return fail(err, errlen, "%s must be an object {token_sha256, policy, ...}", where);
	if (only_keys(v, where, keys, err, errlen) < 0 ||
	    get_hash(v, where, "token_sha256", t->token_sha256, err, errlen) < 0 ||
	    get_int(v, where, "max_sessions", 1, 100000, &t->max_sessions, err, errlen) < 0 ||
	    get_int(v, where, "tool_calls_per_session", 0, 100000000, &t->tool_calls_per_session,
	            err, errlen) < 0 ||
	    get_int(v, where, "action_timeout_ms", 100, 3600000, &t->action_timeout_ms, err,
	            errlen) < 0)
		return -1;
	policy = json_object_get(v, "policy");
	if (policy && !json_is_object(policy))
		return fail(err, errlen,
		            "%s.policy must be an object (the same JSON as glassbox mcp "
		            "--config)",
		            where);
	t->policy = policy ? json_deep_copy(policy) : NULL;
	return 0;
}

/* See serve.h. */
int mcp_serve_config_parse(json_t *root, struct mcp_serve_config **out, char *err, size_t errlen)
{
	static const char *const keys[] = { "listen",       "admin",     "limits",
		                            "tenants",      "prelaunch", "warm_pool",
		                            "object_store", "replica",   "store",
		                            "console",      NULL };
	struct mcp_tenant defaults = { .max_sessions = 8, .action_timeout_ms = 30000 };
	struct mcp_serve_config *c;
	json_t *tenants;
	const char *name;
	json_t *v;
	size_t i, j;
	int rc = -1;

	*out = NULL;
	c = calloc(1, sizeof(*c));
	if (!c)
		return fail(err, errlen, "out of memory");
	snprintf(c->host, sizeof(c->host), "127.0.0.1");
	snprintf(c->admin_host, sizeof(c->admin_host), "127.0.0.1");
	c->port = DEFAULT_PORT;
	c->admin_port = DEFAULT_ADMIN_PORT;
	c->max_sessions = 32;
	c->max_body_bytes = 4u << 20;
	c->idle_ttl_s = 900;
	c->shared_browser_linger_s = 10;
	c->hard_ttl_s = 4 * 3600;
	c->shutdown_grace_s = 20;
	c->retry_after_s = 5;
	c->unused_ttl_s = 60;
	c->http_timeout_s = 30;
	c->max_connections = 1000;
	c->max_connections_per_peer = 64;
	c->prelaunch = 1;
	if (!json_is_object(root)) {
		fail(err, errlen,
		     "the config must be a JSON object {listen, admin, limits, tenants}");
		goto out;
	}
	if (only_keys(root, "config", keys, err, errlen) < 0 ||
	    parse_listen(json_object_get(root, "listen"), c, err, errlen) < 0 ||
	    parse_admin(json_object_get(root, "admin"), c, err, errlen) < 0 ||
	    parse_store(json_object_get(root, "store"), c, err, errlen) < 0 ||
	    parse_limits(json_object_get(root, "limits"), c, &defaults, err, errlen) < 0 ||
	    console_config_parse(json_object_get(root, "console"), &c->console, err, errlen) < 0)
		goto out;
	c->audit_ship_interval_ms = 1000;
	if (parse_replica(json_object_get(root, "replica"), c, err, errlen) < 0)
		goto out;
	if (json_object_get(root, "object_store")) {
		if (blob_config_parse(json_object_get(root, "object_store"), "object_store",
		                      &c->object_store, err, errlen) < 0)
			goto out;
		c->has_object_store = 1;
	}
	if (c->console.n_creds && !c->admin_enabled) {
		fail(err, errlen,
		     "console.credentials need the admin listener: add admin {host, "
		     "port, token_sha256}");
		goto out;
	}
	if (json_object_get(root, "prelaunch") &&
	    !json_is_boolean(json_object_get(root, "prelaunch"))) {
		fail(err, errlen, "prelaunch must be true or false");
		goto out;
	}
	if (json_is_false(json_object_get(root, "prelaunch")))
		c->prelaunch = 0;
	v = json_object_get(root, "warm_pool");
	if (v && (!json_is_integer(v) || json_integer_value(v) < 0 || json_integer_value(v) > 64)) {
		fail(err, errlen, "warm_pool must be a number of browsers from 0 to 64");
		goto out;
	}
	c->warm_pool = v ? (int)json_integer_value(v) : 0;
	tenants = json_object_get(root, "tenants");
	if (!json_is_object(tenants) || json_object_size(tenants) == 0) {
		fail(err, errlen,
		     "tenants must be an object with at least one tenant: "
		     "{\"NAME\": {\"token_sha256\": \"...\", \"policy\": {...}}}");
		goto out;
	}
	c->tenants = calloc(json_object_size(tenants), sizeof(*c->tenants));
	if (!c->tenants) {
		fail(err, errlen, "out of memory");
		goto out;
	}
	json_object_foreach(tenants, name, v)
	{
		if (parse_tenant(name, v, &defaults, &c->tenants[c->n_tenants], err, errlen) < 0)
			goto out;
		c->n_tenants++;
	}
	for (i = 0; i < c->n_tenants; i++) {
		for (j = i + 1; j < c->n_tenants; j++) {
			if (!memcmp(c->tenants[i].token_sha256, c->tenants[j].token_sha256, 32)) {
				fail(err, errlen,
				     "tenants %s and %s have the same token: give each its own",
				     c->tenants[i].name, c->tenants[j].name);
				goto out;
			}
		}
	}
	if (c->admin_enabled && !strcmp(c->admin_host, c->host) && c->admin_port == c->port &&
	    c->port != 0) {
		fail(err, errlen, "admin.port must differ from listen.port");
		goto out;
	}
	*out = c;
	c = NULL;
	rc = 0;
out:
	mcp_serve_config_free(c);
	return rc;
}

/* See serve.h. */
void mcp_serve_config_free(struct mcp_serve_config *c)
{
	size_t i;

	if (!c)
		return;
	for (i = 0; i < c->n_tenants; i++)
		json_decref(c->tenants[i].policy);
	free(c->tenants);
	blob_config_wipe(&c->object_store);
	free(c);
}

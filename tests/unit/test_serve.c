/*
 * test_serve.c - the parts of `glassbox serve` that decide from text
 * alone: the config parser, bearer token checks, and the routing and
 * header checks of /mcp (Host, Origin, Accept, Content-Type,
 * MCP-Protocol-Version).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <string.h>

#include "mcp/http-headers.h"
#include "mcp/serve.h"

/* sha256("alpha-token") and sha256("beta-token") */
static char alpha_hash[65];
static char beta_hash[65];

static int setup(void **state)
{
	(void)state;
	mcp_auth_token_hash_hex("alpha-token", alpha_hash);
	mcp_auth_token_hash_hex("beta-token", beta_hash);
	return 0;
}

/* Parses text (printf format with the hashes); returns rc, fills err. */
static int parse(const char *text, struct mcp_serve_config **out, char *err, size_t errlen)
{
	json_error_t jerr;
	json_t *root = json_loads(text, 0, &jerr);
	int rc;

	assert_non_null(root);
	rc = mcp_serve_config_parse(root, out, err, errlen);
	json_decref(root);
	return rc;
}

static void test_config_full(void **state)
{
	struct mcp_serve_config *c = NULL;
	char text[2048], err[512];

	(void)state;
	snprintf(
	    text, sizeof(text),
	    "{\"listen\": {\"host\": \"0.0.0.0\", \"port\": 9000, \"allowed_origins\": "
	    "[\"https://app.example\"]},"
	    " \"admin\": {\"port\": 9001, \"token_sha256\": \"%s\"},"
	    " \"limits\": {\"max_sessions\": 10, \"max_sessions_per_tenant\": 3, "
	    "\"idle_ttl_s\": 60, \"hard_ttl_s\": 600, \"tool_calls_per_session\": 100, "
	    "\"action_timeout_ms\": 5000, \"max_body_bytes\": 2048, \"shutdown_grace_s\": 5, "
	    "\"retry_after_s\": 7, \"unused_ttl_s\": 30, \"http_timeout_s\": 9, "
	    "\"max_connections\": 200, \"max_connections_per_peer\": 20},"
	    " \"prelaunch\": false,"
	    " \"tenants\": {\"alpha\": {\"token_sha256\": \"%s\", \"policy\": {\"egress\": {}}},"
	    " \"beta\": {\"token_sha256\": \"%s\", \"max_sessions\": 1, "
	    "\"tool_calls_per_session\": 0}}}",
	    beta_hash, alpha_hash, beta_hash);
	/* the admin token may not equal a tenant's? it may; tenants may not share */
	assert_int_equal(parse(text, &c, err, sizeof(err)), 0);
	assert_string_equal(c->host, "0.0.0.0");
	assert_int_equal(c->port, 9000);
	assert_int_equal(c->n_origins, 1);
	assert_string_equal(c->origins[0], "https://app.example");
	assert_int_equal(c->admin_enabled, 1);
	assert_int_equal(c->admin_port, 9001);
	assert_string_equal(c->admin_host, "127.0.0.1");
	assert_int_equal(c->max_sessions, 10);
	assert_int_equal(c->idle_ttl_s, 60);
	assert_int_equal(c->hard_ttl_s, 600);
	assert_int_equal(c->max_body_bytes, 2048);
	assert_int_equal(c->shutdown_grace_s, 5);
	assert_int_equal(c->retry_after_s, 7);
	assert_int_equal(c->unused_ttl_s, 30);
	assert_int_equal(c->http_timeout_s, 9);
	assert_int_equal(c->max_connections, 200);
	assert_int_equal(c->max_connections_per_peer, 20);
	assert_int_equal(c->prelaunch, 0);
	assert_int_equal(c->n_tenants, 2);
	assert_string_equal(c->tenants[0].name, "alpha");
	assert_int_equal(c->tenants[0].max_sessions, 3); /* the limits' default */
	assert_int_equal(c->tenants[0].tool_calls_per_session, 100);
	assert_int_equal(c->tenants[0].action_timeout_ms, 5000);
	assert_non_null(json_object_get(c->tenants[0].policy, "egress"));
	assert_int_equal(c->tenants[1].max_sessions, 1);
	assert_int_equal(c->tenants[1].tool_calls_per_session, 0);
	assert_null(c->tenants[1].policy);
	assert_string_equal(c->store_postgres, ""); /* SQLite in the data dir */
	mcp_serve_config_free(c);

	snprintf(text, sizeof(text),
	         "{\"store\": {\"postgres\": \"postgresql://glassbox@db:5432/glassbox\"}, "
	         "\"tenants\": {\"t\": {\"token_sha256\": \"%s\"}}}",
	         alpha_hash);
	assert_int_equal(parse(text, &c, err, sizeof(err)), 0);
	assert_string_equal(c->store_postgres, "postgresql://glassbox@db:5432/glassbox");
	mcp_serve_config_free(c);
}

static void test_config_defaults(void **state)
{
	struct mcp_serve_config *c = NULL;
	char text[512], err[512];

	(void)state;
	snprintf(text, sizeof(text), "{\"tenants\": {\"t\": {\"token_sha256\": \"%s\"}}}",
	         alpha_hash);
	assert_int_equal(parse(text, &c, err, sizeof(err)), 0);
	assert_string_equal(c->host, "127.0.0.1"); /* loopback unless configured */
	assert_int_equal(c->port, 8931);
	assert_int_equal(c->admin_enabled, 0);
	assert_int_equal(c->prelaunch, 1);
	assert_true(c->max_sessions > 0 && c->idle_ttl_s > 0 && c->hard_ttl_s > 0);
	assert_true(c->max_body_bytes >= 1024);
	/* a session never used, an idle connection, one peer: each bounded */
	assert_int_equal(c->unused_ttl_s, 60);
	assert_int_equal(c->http_timeout_s, 30);
	assert_int_equal(c->max_connections, 1000);
	assert_int_equal(c->max_connections_per_peer, 64);
	assert_int_equal(c->tenants[0].tool_calls_per_session, 0);
	mcp_serve_config_free(c);
}

static void test_config_errors(void **state)
{
	static const struct {
		const char *json;   /* %s: alpha's hash, %s: beta's */
		const char *expect; /* in the message */
	} cases[] = {
		{ "[]", "JSON object" },
		{ "{\"tenants\": {}}", "at least one tenant" },
		{ "{\"tenant\": {}}", "unknown key \"tenant\"" },
		{ "{\"tenants\": {\"a\": {\"token_sha256\": \"abc\"}}}",
		  "tenants.a.token_sha256 must be" },
		{ "{\"tenants\": {\"a\": {\"token\": \"%s\"}}}", "unknown key \"token\"" },
		{ "{\"tenants\": {\"a\": {\"token_sha256\": \"%s\"}, \"b\": {\"token_sha256\": "
		  "\"%s\"}}}",
		  "the same token" },
		{ "{\"tenants\": {\"../x\": {\"token_sha256\": \"%s\"}}}", "tenant name" },
		{ "{\"tenants\": {\"a\": {\"token_sha256\": \"%s\", \"policy\": 3}}}",
		  "policy must be" },
		{ "{\"limits\": {\"max_sessions\": 0}, \"tenants\": {\"a\": {\"token_sha256\": "
		  "\"%s\"}}}",
		  "limits.max_sessions must be an integer from 1" },
		{ "{\"limits\": {\"idle_ttl\": 5}, \"tenants\": {\"a\": {\"token_sha256\": "
		  "\"%s\"}}}",
		  "unknown key \"idle_ttl\"" },
		{ "{\"limits\": {\"max_connections_per_peer\": 0}, \"tenants\": {\"a\": "
		  "{\"token_sha256\": \"%s\"}}}",
		  "limits.max_connections_per_peer must be an integer from 1" },
		{ "{\"limits\": {\"http_timeout_s\": \"9\"}, \"tenants\": {\"a\": "
		  "{\"token_sha256\": \"%s\"}}}",
		  "limits.http_timeout_s" },
		{ "{\"listen\": {\"port\": 70000}, \"tenants\": {\"a\": {\"token_sha256\": "
		  "\"%s\"}}}",
		  "listen.port" },
		{ "{\"admin\": {\"port\": 1}, \"tenants\": {\"a\": {\"token_sha256\": \"%s\"}}}",
		  "admin.token_sha256" },
		{ "{\"prelaunch\": 1, \"tenants\": {\"a\": {\"token_sha256\": \"%s\"}}}",
		  "prelaunch" },
		{ "{\"store\": \"pg\", \"tenants\": {\"a\": {\"token_sha256\": \"%s\"}}}",
		  "store must be an object" },
		{ "{\"store\": {\"postgress\": \"x\"}, \"tenants\": {\"a\": {\"token_sha256\": "
		  "\"%s\"}}}",
		  "store: unknown key \"postgress\"" },
		{ "{\"store\": {\"postgres\": \"mysql://u:hunter2@db/x\"}, \"tenants\": {\"a\": "
		  "{\"token_sha256\": \"%s\"}}}",
		  "store.postgres must be a URL postgresql://" },
		{ "{\"store\": {\"postgres\": \"postgresql://u:hunter2@db/x y\"}, \"tenants\": "
		  "{\"a\": {\"token_sha256\": \"%s\"}}}",
		  "percent-encode" },
	};
	struct mcp_serve_config *c;
	char text[1024], err[512];
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		snprintf(text, sizeof(text), cases[i].json, alpha_hash,
		         strstr(cases[i].json, "\"b\"") ? alpha_hash : beta_hash);
		c = (struct mcp_serve_config *)1;
		err[0] = '\0';
		assert_int_equal(parse(text, &c, err, sizeof(err)), -1);
		assert_null(c);
		if (!strstr(err, cases[i].expect)) {
			fprintf(stderr, "case %zu: \"%s\" lacks \"%s\"\n", i, err, cases[i].expect);
			fail();
		}
		/* no message echoes a hash, a token or a password */
		assert_null(strstr(err, alpha_hash));
		assert_null(strstr(err, "hunter2"));
	}
}

static void test_tokens(void **state)
{
	struct mcp_serve_config *c = NULL;
	char text[512], err[512];
	unsigned char raw[32];
	size_t i;

	(void)state;
	snprintf(
	    text, sizeof(text),
	    "{\"tenants\": {\"alpha\": {\"token_sha256\": \"%s\"}, \"beta\": {\"token_sha256\": "
	    "\"%s\"}}}",
	    alpha_hash, beta_hash);
	assert_int_equal(parse(text, &c, err, sizeof(err)), 0);
	assert_ptr_equal(mcp_auth_tenant(c, "Bearer alpha-token"), &c->tenants[0]);
	assert_ptr_equal(mcp_auth_tenant(c, "bearer beta-token"), &c->tenants[1]);
	assert_ptr_equal(mcp_auth_tenant(c, "Bearer  alpha-token "), &c->tenants[0]);
	assert_null(mcp_auth_tenant(c, NULL));
	assert_null(mcp_auth_tenant(c, ""));
	assert_null(mcp_auth_tenant(c, "Bearer "));
	assert_null(mcp_auth_tenant(c, "alpha-token"));
	assert_null(mcp_auth_tenant(c, "Basic alpha-token"));
	assert_null(mcp_auth_tenant(c, "Bearer alpha-token2"));
	assert_null(mcp_auth_tenant(c, "Bearer alpha-toke"));
	assert_null(mcp_auth_tenant(c, "Bearer ALPHA-TOKEN"));
	/* the hash itself is not a token */
	snprintf(text, sizeof(text), "Bearer %s", alpha_hash);
	assert_null(mcp_auth_tenant(c, text));
	for (i = 0; i < 32; i++)
		sscanf(alpha_hash + 2 * i, "%2hhx", &raw[i]);
	assert_int_equal(mcp_auth_bearer_matches("Bearer alpha-token", raw), 1);
	assert_int_equal(mcp_auth_bearer_matches("Bearer beta-token", raw), 0);
	mcp_serve_config_free(c);
}

static void test_routes(void **state)
{
	(void)state;
	assert_int_equal(mcp_http_route("POST", "/mcp"), MCP_ROUTE_POST);
	assert_int_equal(mcp_http_route("POST", "/mcp/"), MCP_ROUTE_POST);
	assert_int_equal(mcp_http_route("GET", "/mcp"), MCP_ROUTE_GET);
	assert_int_equal(mcp_http_route("DELETE", "/mcp"), MCP_ROUTE_DELETE);
	assert_int_equal(mcp_http_route("PUT", "/mcp"), MCP_ROUTE_METHOD_NOT_ALLOWED);
	assert_int_equal(mcp_http_route("OPTIONS", "/mcp"), MCP_ROUTE_METHOD_NOT_ALLOWED);
	assert_int_equal(mcp_http_route("POST", "/"), MCP_ROUTE_NOT_FOUND);
	assert_int_equal(mcp_http_route("POST", "/mcpx"), MCP_ROUTE_NOT_FOUND);
	assert_int_equal(mcp_http_route("POST", "/mcp/../admin"), MCP_ROUTE_NOT_FOUND);
	assert_int_equal(mcp_http_route(NULL, "/mcp"), MCP_ROUTE_NOT_FOUND);
}

static void test_origin_and_host(void **state)
{
	static const char allowed[2][128] = { "https://app.example", "http://10.0.0.5:8080" };

	(void)state;
	assert_true(mcp_http_origin_ok(NULL, allowed, 2));
	assert_true(mcp_http_origin_ok("", allowed, 2));
	assert_true(mcp_http_origin_ok("http://localhost:3000", allowed, 2));
	assert_true(mcp_http_origin_ok("http://127.0.0.1", allowed, 2));
	assert_true(mcp_http_origin_ok("https://[::1]:8443", allowed, 2));
	assert_true(mcp_http_origin_ok("https://app.example", allowed, 2));
	assert_true(mcp_http_origin_ok("http://10.0.0.5:8080", allowed, 2));
	assert_false(mcp_http_origin_ok("http://evil.example", allowed, 2));
	assert_false(mcp_http_origin_ok("http://localhost.evil.example", allowed, 2));
	assert_false(mcp_http_origin_ok("http://127.0.0.1.nip.io", allowed, 2));
	assert_false(mcp_http_origin_ok("https://app.example.evil", allowed, 2));
	assert_false(mcp_http_origin_ok("null", allowed, 2));
	assert_false(mcp_http_origin_ok("file://", allowed, 2));
	assert_false(mcp_http_origin_ok("http://localhost/x", allowed, 2));

	assert_true(mcp_http_host_ok("127.0.0.1:8931", 1));
	assert_true(mcp_http_host_ok("localhost", 1));
	assert_true(mcp_http_host_ok("[::1]:80", 1));
	assert_false(mcp_http_host_ok("evil.example.com", 1));
	assert_false(mcp_http_host_ok("localhost.evil.example", 1));
	assert_false(mcp_http_host_ok(NULL, 1));
	assert_true(mcp_http_host_ok("glassbox.internal:8931", 0));
}

static void test_accept_type_version(void **state)
{
	(void)state;
	assert_true(mcp_http_accept_ok("application/json, text/event-stream", 1));
	assert_true(mcp_http_accept_ok("text/event-stream;q=1,application/json;q=0.9", 1));
	assert_true(mcp_http_accept_ok("*/*", 1));
	assert_false(mcp_http_accept_ok("application/json", 1));
	assert_false(mcp_http_accept_ok("text/html", 1));
	assert_false(mcp_http_accept_ok("application/jsonx, text/event-stream", 1));
	assert_false(mcp_http_accept_ok(NULL, 1));
	assert_true(mcp_http_accept_ok("text/event-stream", 0));

	assert_true(mcp_http_content_type_ok("application/json"));
	assert_true(mcp_http_content_type_ok("application/json; charset=utf-8"));
	assert_false(mcp_http_content_type_ok("text/plain"));
	assert_false(mcp_http_content_type_ok(NULL));

	assert_true(mcp_http_protocol_version_ok(NULL));
	assert_true(mcp_http_protocol_version_ok("2025-11-25"));
	assert_true(mcp_http_protocol_version_ok("2025-06-18"));
	assert_true(mcp_http_protocol_version_ok("2025-03-26"));
	assert_false(mcp_http_protocol_version_ok("2099-01-01"));
	assert_false(mcp_http_protocol_version_ok("2025-11-25 "));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_config_full),
		cmocka_unit_test(test_config_defaults),
		cmocka_unit_test(test_config_errors),
		cmocka_unit_test(test_tokens),
		cmocka_unit_test(test_routes),
		cmocka_unit_test(test_origin_and_host),
		cmocka_unit_test(test_accept_type_version),
	};

	return cmocka_run_group_tests(tests, setup, NULL);
}

/*
 * test_relay.c - the CDP relay's allowlist (relay/filter.c), its
 * websocket accept key (relay/wsio.c) and its peek at browser messages
 * (relay/peek.c): pure decisions on messages.
 */
#include "relay/relay.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

static const char *const client_ctx[] = { "C1" };
static const struct relay_scope scope = {
	.context_id = "SESSCTX",
	.proxy_server = "http://127.0.0.1:4444",
	.downloads_dir = "/run/x/profile/Downloads",
	.client_contexts = client_ctx,
	.n_client_contexts = 1,
};

/* The filter's verdict on method with params (JSON text or NULL); rule out. */
static enum relay_verdict decide(const char *method, const char *params, char *rule, json_t **out)
{
	json_t *p = params ? json_loads(params, 0, NULL) : NULL;
	char why[256];
	enum relay_verdict v = relay_filter(&scope, method, p, "", rule, 48, why, sizeof(why));

	if (v == RELAY_REFUSE)
		assert_true(why[0] != '\0'); /* a refusal says what to do */
	if (out)
		*out = p;
	else
		json_decref(p);
	return v;
}

static void test_refusals_name_their_rule(void **state)
{
	static const struct {
		const char *method, *params, *rule;
	} cases[] = {
		{ "SystemInfo.getInfo", NULL, "domain-allowlist" },
		{ "Tracing.start", NULL, "domain-allowlist" },
		{ "Extensions.loadUnpacked", "{\"path\": \"/tmp\"}", "domain-allowlist" },
		{ "NoDot", NULL, "domain-allowlist" },
		{ ".x", NULL, "domain-allowlist" },
		{ "Browser.", NULL, "domain-allowlist" },
		{ "Browser.close", NULL, "browser-lifecycle" },
		{ "Browser.crash", NULL, "browser-lifecycle" },
		{ "Target.sendMessageToTarget", "{}", "nested-messages" },
		{ "Target.createBrowserContext", "{\"proxyServer\": \"http://x:1\"}",
		  "network-path" },
		{ "Target.createBrowserContext", "{\"proxyBypassList\": \"*\"}", "network-path" },
		{ "Network.loadNetworkResource", "{}", "network-path" },
		{ "Page.navigate", "{\"url\": \"file:///etc/passwd\"}", "url-scheme" },
		{ "Page.navigate", "{\"url\": \"javascript:alert(1)\"}", "url-scheme" },
		{ "Target.createTarget", "{\"url\": \"chrome://settings\"}", "url-scheme" },
		{ "Target.createTarget", "{\"url\": \"about:blank\", \"browserContextId\": \"X\"}",
		  "contexts" },
		{ "Target.disposeBrowserContext", "{\"browserContextId\": \"SESSCTX\"}",
		  "contexts" },
		{ "Target.disposeBrowserContext", "{\"browserContextId\": \"X\"}", "contexts" },
		{ "Target.disposeBrowserContext", "{}", "contexts" },
		{ "Page.setDownloadBehavior", "{\"behavior\": \"allow\"}", "downloads" },
		{ "Storage.getCookies", "{\"browserContextId\": \"X\"}", "storage-contexts" },
		{ "Browser.grantPermissions", "{\"browserContextId\": \"X\"}", "storage-contexts" },
	};
	char rule[48];
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		assert_int_equal(decide(cases[i].method, cases[i].params, rule, NULL),
		                 RELAY_REFUSE);
		assert_string_equal(rule, cases[i].rule);
	}
}

static void test_relayed_as_sent(void **state)
{
	char rule[48];

	(void)state;
	assert_int_equal(decide("Runtime.evaluate", "{\"expression\": \"1\"}", rule, NULL),
	                 RELAY_FORWARD);
	assert_int_equal(decide("Page.navigate", "{\"url\": \"https://shop.test/\"}", rule, NULL),
	                 RELAY_FORWARD);
	assert_int_equal(
	    decide("Target.disposeBrowserContext", "{\"browserContextId\": \"C1\"}", rule, NULL),
	    RELAY_FORWARD);
	assert_int_equal(decide("Storage.getCookies", "{}", rule, NULL), RELAY_FORWARD);
	assert_int_equal(
	    decide("Browser.setDownloadBehavior", "{\"behavior\": \"deny\"}", rule, NULL),
	    RELAY_FORWARD);
	assert_int_equal(decide("Fetch.enable", NULL, rule, NULL), RELAY_FORWARD);
}

static void test_rewrites_keep_the_session(void **state)
{
	char rule[48];
	json_t *p;

	(void)state;
	assert_int_equal(decide("Target.createTarget", "{\"url\": \"about:blank\"}", rule, &p),
	                 RELAY_REWRITTEN);
	assert_string_equal(json_string_value(json_object_get(p, "browserContextId")), "SESSCTX");
	json_decref(p);
	assert_int_equal(
	    decide("Target.createBrowserContext", "{\"disposeOnDetach\": true}", rule, &p),
	    RELAY_REWRITTEN);
	assert_string_equal(json_string_value(json_object_get(p, "proxyServer")),
	                    "http://127.0.0.1:4444");
	json_decref(p);
	assert_int_equal(decide("Browser.setDownloadBehavior",
	                        "{\"behavior\": \"allowAndName\", \"downloadPath\": \"/home/x\"}",
	                        rule, &p),
	                 RELAY_REWRITTEN);
	assert_string_equal(json_string_value(json_object_get(p, "downloadPath")),
	                    "/run/x/profile/Downloads");
	json_decref(p);
}

/* RFC 6455, section 1.3; anything but 16 bytes in base64 is refused. */
static void test_accept_key(void **state)
{
	char out[40];

	(void)state;
	assert_int_equal(relay_ws_accept("dGhlIHNhbXBsZSBub25jZQ==", out, sizeof(out)), 0);
	assert_string_equal(out, "s3pPLMBiTxaQ9kYGzzhZRbK+xOo=");
	assert_int_equal(relay_ws_accept("short", out, sizeof(out)), -1);
	assert_int_equal(relay_ws_accept("!!!!!!!!!!!!!!!!!!!!!!==", out, sizeof(out)), -1);
	assert_int_equal(relay_ws_accept(NULL, out, sizeof(out)), -1);
}

/* The peek of s (a string literal): its kind, id and method. */
static enum relay_peek peek(const char *s, int64_t *id, char *method, size_t methodlen)
{
	return relay_peek_browser((const uint8_t *)s, strlen(s), id, method, methodlen);
}

/* Chromium's compact replies and events are known by their first member;
 * every other shape is left to the whole parse, never guessed at. */
static void test_peek_browser_messages(void **state)
{
	char m[64];
	int64_t id;

	(void)state;
	assert_int_equal(peek("{\"id\":12,\"result\":{\"data\":\"iVBOR\"}}", &id, m, sizeof(m)),
	                 RELAY_PEEK_REPLY);
	assert_int_equal(id, 12);
	assert_int_equal(peek("{\"id\":0}", &id, m, sizeof(m)), RELAY_PEEK_REPLY);
	assert_int_equal(id, 0);
	assert_int_equal(peek("{\"id\":1000000007,\"error\":{}}", &id, m, sizeof(m)),
	                 RELAY_PEEK_REPLY);
	assert_int_equal(id, 1000000007);
	assert_int_equal(
	    peek("{\"method\":\"Page.loadEventFired\",\"params\":{},\"sessionId\":\"S\"}", &id, m,
	         sizeof(m)),
	    RELAY_PEEK_EVENT);
	assert_string_equal(m, "Page.loadEventFired");
	assert_int_equal(id, -1);
	/* other shapes: the relay parses them whole */
	assert_int_equal(peek("{ \"id\":12}", &id, m, sizeof(m)), RELAY_PEEK_OTHER);
	assert_int_equal(peek("{\"result\":{},\"id\":12}", &id, m, sizeof(m)), RELAY_PEEK_OTHER);
	assert_int_equal(peek("{\"id\":-1,\"result\":{}}", &id, m, sizeof(m)), RELAY_PEEK_OTHER);
	assert_int_equal(peek("{\"id\":1.5,\"result\":{}}", &id, m, sizeof(m)), RELAY_PEEK_OTHER);
	assert_int_equal(peek("{\"id\":\"7\"}", &id, m, sizeof(m)), RELAY_PEEK_OTHER);
	assert_int_equal(peek("{\"id\":}", &id, m, sizeof(m)), RELAY_PEEK_OTHER);
	assert_int_equal(peek("{\"id\":12", &id, m, sizeof(m)), RELAY_PEEK_OTHER);
	assert_int_equal(peek("{\"id\":1234567890123456789,\"result\":{}}", &id, m, sizeof(m)),
	                 RELAY_PEEK_OTHER);
	assert_int_equal(peek("{\"method\":\"Page.load\\u0045ventFired\"}", &id, m, sizeof(m)),
	                 RELAY_PEEK_OTHER);
	assert_int_equal(peek("{\"method\":\"\",\"params\":{}}", &id, m, sizeof(m)),
	                 RELAY_PEEK_OTHER);
	assert_int_equal(peek("{\"method\":\"Page.loadEventFired\"", &id, m, sizeof(m)),
	                 RELAY_PEEK_OTHER);
	assert_int_equal(peek("{\"method\":\"Page.loadEventFired\"x", &id, m, sizeof(m)),
	                 RELAY_PEEK_OTHER);
	assert_int_equal(peek("{\"method\":\"Page.loadEventFired\",\"params\":{}}", &id, m, 8),
	                 RELAY_PEEK_OTHER);
	assert_int_equal(peek("", &id, m, sizeof(m)), RELAY_PEEK_OTHER);
	assert_int_equal(peek("[1]", &id, m, sizeof(m)), RELAY_PEEK_OTHER);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_refusals_name_their_rule),
		cmocka_unit_test(test_relayed_as_sent),
		cmocka_unit_test(test_rewrites_keep_the_session),
		cmocka_unit_test(test_accept_key),
		cmocka_unit_test(test_peek_browser_messages),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

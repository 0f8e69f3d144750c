/*
 * test_policy_tenant.c - the tenant's whole policy, parsed once
 * (policy/tenant.h): defaults, every error at once, warnings, the hash,
 * narrowing and references.
 */
#include "policy/tenant.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

/* Parses text; fails the test on error. */
static struct policy_tenant *tenant_from(const char *text)
{
	json_t *j = text ? json_loads(text, 0, NULL) : NULL;
	struct policy_tenant *t = NULL;
	char err[2048] = "";

	if (text && !j)
		fail_msg("bad JSON in test: %s", text);
	if (policy_tenant_parse(j, "test.json", &t, err, sizeof(err)) != 0)
		fail_msg("policy did not parse: %s", err);
	json_decref(j);
	return t;
}

/* Parses text, expecting failure; returns the error text in err. */
static void tenant_error(const char *text, char *err, size_t errlen)
{
	json_t *j = json_loads(text, 0, NULL);
	struct policy_tenant *t = NULL;

	assert_non_null(j);
	assert_int_equal(policy_tenant_parse(j, NULL, &t, err, errlen), -POLICY_EINVAL);
	assert_null(t);
	json_decref(j);
}

static void test_defaults(void **state)
{
	struct policy_tenant *t;
	const struct policy_tenant_settings *s;
	struct policy_decision d;
	json_t *eff;

	(void)state;
	t = tenant_from(NULL);
	s = policy_tenant_settings(t);
	assert_int_equal(s->elicit_approvals, 0);
	assert_int_equal(s->hidden_text_drop, 0);
	assert_int_equal(s->browser_memory_mb, 0);
	assert_int_equal(s->require_evidence, 0);
	assert_int_equal(s->retention_days, 0);
	assert_int_equal(s->layer_tool, 1);
	assert_int_equal(s->layer_fetch, 1);
	assert_int_equal(s->layer_proxy, 1);
	assert_int_equal(s->layer_netns, -1);
	/* files: both allowed, each capped */
	assert_int_equal(s->uploads, 1);
	assert_int_equal(s->downloads, 1);
	assert_int_equal(s->upload_max_mb, POLICY_UPLOAD_MAX_MB_DEFAULT);
	assert_int_equal(s->download_max_mb, POLICY_DOWNLOAD_MAX_MB_DEFAULT);
	assert_non_null(policy_tenant_risk(t));
	assert_int_equal(policy_risk_approval_ttl_ms(policy_tenant_risk(t)), 300000);
	assert_int_equal(policy_egress_check_url(policy_tenant_egress(t), "https://any.test/", &d),
	                 0);
	assert_int_equal(json_array_size(policy_tenant_warnings(t)), 0);
	assert_int_equal(strncmp(policy_tenant_hash(t), "sha256:", 7), 0);
	assert_int_equal(strlen(policy_tenant_hash(t)), 7 + 64);
	eff = policy_tenant_effective(t);
	assert_non_null(eff);
	assert_string_equal(
	    json_string_value(json_object_get(json_object_get(eff, "page_content"), "hidden_text")),
	    "flag");
	assert_string_equal(
	    json_string_value(json_object_get(json_object_get(eff, "risk"), "evaluate")),
	    "approve");
	assert_string_equal(
	    json_string_value(json_object_get(json_object_get(eff, "egress"), "default")), "allow");
	assert_string_equal(json_string_value(json_object_get(eff, "retention_days")), "kept");
	assert_int_equal(
	    json_integer_value(json_object_get(json_object_get(eff, "files"), "download_max_mb")),
	    POLICY_DOWNLOAD_MAX_MB_DEFAULT);
	json_decref(eff);
	policy_tenant_unref(t);
}

static void test_values_and_effective(void **state)
{
	struct policy_tenant *t;
	const struct policy_tenant_settings *s;
	json_t *eff;
	json_t *allow;

	(void)state;
	t = tenant_from("{\"egress\": {\"allow\": [\"shop.test\", \"api.test:8443\", \"x.test:*\"],"
	                " \"deny\": [\"ads.test\"]},"
	                " \"approvals\": {\"elicitation\": true},"
	                " \"page_content\": {\"hidden_text\": \"drop\"},"
	                " \"limits\": {\"browser_memory_mb\": 512},"
	                " \"require_evidence\": true, \"retention_days\": 30,"
	                " \"files\": {\"uploads\": false, \"download_max_mb\": 8},"
	                " \"risk\": {\"evaluate\": \"allow\", \"approval_ttl_seconds\": 60}}");
	s = policy_tenant_settings(t);
	assert_int_equal(s->elicit_approvals, 1);
	assert_int_equal(s->hidden_text_drop, 1);
	assert_int_equal(s->browser_memory_mb, 512);
	assert_int_equal(s->require_evidence, 1);
	assert_int_equal(s->retention_days, 30);
	assert_int_equal(s->uploads, 0);
	assert_int_equal(s->downloads, 1);
	assert_int_equal(s->download_max_mb, 8);
	eff = policy_tenant_effective(t);
	assert_true(json_is_false(json_object_get(json_object_get(eff, "files"), "uploads")));
	allow = json_object_get(json_object_get(eff, "egress"), "allow");
	assert_int_equal(json_array_size(allow), 3);
	assert_string_equal(json_string_value(json_object_get(json_array_get(allow, 0), "ports")),
	                    "80, 443");
	assert_string_equal(json_string_value(json_object_get(json_array_get(allow, 1), "ports")),
	                    "8443");
	assert_string_equal(json_string_value(json_object_get(json_array_get(allow, 2), "ports")),
	                    "every port");
	assert_string_equal(
	    json_string_value(json_object_get(
	        json_array_get(json_object_get(json_object_get(eff, "egress"), "deny"), 0),
	        "ports")),
	    "every port");
	assert_int_equal(json_integer_value(
	                     json_object_get(json_object_get(eff, "risk"), "approval_ttl_seconds")),
	                 60);
	assert_string_equal(json_string_value(json_object_get(eff, "source")), "test.json");
	json_decref(eff);
	policy_tenant_unref(t);
}

static void test_every_error_at_once(void **state)
{
	char err[4096] = "";

	(void)state;
	tenant_error("{\"egress\": {\"allow\": [\"ok.test\", \"*foo.test\", \"bad/path\"],"
	             " \"allow_private\": [\"127.0.0.1:x\"]},"
	             " \"risk\": {\"evaluate\": \"sometimes\"},"
	             " \"limits\": {\"browser_memory_mb\": 1, \"cpu\": 2},"
	             " \"page_content\": {\"hidden_text\": \"hide\"},"
	             " \"approvals\": {\"elicitation\": \"yes\"},"
	             " \"retention_days\": 0,"
	             " \"files\": {\"upload_max_mb\": 65, \"downloads\": \"no\", \"dirs\": [],"
	             " \"upload_dirs\": [\"/srv/ok\", \"relative\", \"/srv/../etc\", \"/\", 3]}}",
	             err, sizeof(err));
	assert_non_null(
	    strstr(err, "policy.files.upload_max_mb must be a whole number from 1 to 64"));
	assert_non_null(strstr(err, "policy.files.downloads must be true or false"));
	assert_non_null(strstr(err, "policy.files.dirs is not a setting"));
	assert_null(strstr(err, "upload_dirs[0]"));
	assert_non_null(strstr(err, "policy.files.upload_dirs[1] must be an absolute dir"));
	assert_non_null(strstr(err, "policy.files.upload_dirs[2]"));
	assert_non_null(strstr(err, "policy.files.upload_dirs[3]"));
	assert_non_null(strstr(err, "policy.files.upload_dirs[4]"));
	assert_non_null(strstr(err, "policy.egress.allow[1]: \"*foo.test\" is not a host pattern"));
	assert_non_null(strstr(err, "policy.egress.allow[2]: \"bad/path\""));
	assert_null(strstr(err, "allow[0]"));
	assert_non_null(strstr(err, "policy.egress.allow_private[0]: \"127.0.0.1:x\""));
	assert_non_null(strstr(err, "policy.risk.evaluate"));
	assert_non_null(strstr(err, "policy.limits.cpu is not a setting"));
	assert_non_null(strstr(err, "policy.limits.browser_memory_mb must be a whole number"));
	assert_non_null(strstr(err, "policy.page_content.hidden_text must be"));
	assert_non_null(strstr(err, "policy.approvals.elicitation must be true or false"));
	assert_non_null(strstr(err, "policy.retention_days must be a whole number from 1"));

	/* a bad list entry and a bad resolver override: both named */
	tenant_error("{\"egress\": {\"allow\": [\"*foo\"], \"hosts\": {\"x.test\": \"nowhere\"}}}",
	             err, sizeof(err));
	assert_non_null(strstr(err, "policy.egress.allow[0]: \"*foo\""));
	assert_non_null(strstr(err, "policy.egress.hosts[\"x.test\"] must be an IP address"));
	tenant_error("[1]", err, sizeof(err));
	assert_non_null(strstr(err, "must be a JSON object"));
	tenant_error("{\"egress\": {\"alow\": []}}", err, sizeof(err));
	assert_non_null(strstr(err, "policy.egress.alow is not a known key"));
	tenant_error("{\"egress_layers\": {\"fetch\": 0, \"dns\": true}}", err, sizeof(err));
	assert_non_null(strstr(err, "policy.egress_layers.dns is not a setting"));
	/* a small buffer still ends in a NUL */
	tenant_error("{\"retention_days\": 0, \"require_evidence\": 1}", err, 20);
	assert_true(strlen(err) < 20);
}

static void test_warnings(void **state)
{
	struct policy_tenant *t;
	const json_t *w;
	char all[4096] = "";
	size_t i;

	(void)state;
	t = tenant_from(
	    "{\"egress\": {\"allow\": [\"shop.test:*\", \"pub.test:*\", \"127.0.0.1:*\","
	    " \"shop.test\"], \"allow_private\": [\"127.0.0.1:*\", \"10.0.0.1:8080\"],"
	    " \"hosts\": {\"shop.test\": \"127.0.0.1\"}},"
	    " \"egress_layers\": {\"fetch\": false}, \"comment\": \"x\"}");
	w = policy_tenant_warnings(t);
	for (i = 0; i < json_array_size(w); i++) {
		strncat(all, json_string_value(json_array_get(w, i)),
		        sizeof(all) - strlen(all) - 2);
		strcat(all, "\n");
	}
	assert_non_null(strstr(all, "policy.egress.allow[0]: \"shop.test:*\" allows every port"));
	assert_null(strstr(all, "allow[1]"));
	assert_non_null(strstr(all, "policy.egress.allow[2]: \"127.0.0.1:*\""));
	assert_null(strstr(all, "allow[3]"));
	assert_non_null(strstr(all, "policy.egress.allow_private[0]: every port"));
	assert_null(strstr(all, "allow_private[1]"));
	assert_non_null(strstr(all, "fetch OFF"));
	assert_non_null(strstr(all, "policy.comment is not a key glassbox knows"));
	policy_tenant_unref(t);
}

static void test_hash_narrow_and_refs(void **state)
{
	struct policy_tenant *a = tenant_from("{\"egress\": {\"allow\": [\"a.test\", \"b.test\"]},"
	                                      " \"require_evidence\": true}");
	struct policy_tenant *b =
	    tenant_from("{\"require_evidence\": true,"
	                "   \"egress\": {\"allow\": [\"a.test\", \"b.test\"]}}");
	struct policy_tenant *c = tenant_from("{\"egress\": {\"allow\": [\"b.test\", \"a.test\"]},"
	                                      " \"require_evidence\": true}");
	struct policy_tenant *n = NULL;
	struct policy_decision d;
	json_t *j = json_loads("{\"deny\": [\"b.test\"]}", 0, NULL);
	char err[512];

	(void)state;
	/* key order and spacing do not change the hash; the content does */
	assert_string_equal(policy_tenant_hash(a), policy_tenant_hash(b));
	assert_string_not_equal(policy_tenant_hash(a), policy_tenant_hash(c));
	assert_int_equal(policy_tenant_narrow(a, j, &n, err, sizeof(err)), 0);
	json_decref(j);
	/* the narrowing is a new object; the base is unchanged */
	assert_int_equal(policy_egress_check_url(policy_tenant_egress(a), "https://b.test/", &d),
	                 0);
	assert_int_equal(policy_egress_check_url(policy_tenant_egress(n), "https://b.test/", &d),
	                 -POLICY_EREFUSED);
	assert_string_equal(d.scope, "session");
	assert_int_equal(policy_tenant_settings(n)->require_evidence, 1);
	assert_ptr_equal(policy_tenant_risk(n), policy_tenant_risk(a));
	/* the narrowing keeps its base alive */
	policy_tenant_unref(a);
	assert_int_equal(policy_egress_check_url(policy_tenant_egress(n), "https://a.test/", &d),
	                 0);
	assert_int_equal(policy_risk_approval_ttl_ms(policy_tenant_risk(n)), 300000);
	assert_ptr_equal(policy_tenant_ref(n), n);
	policy_tenant_unref(n);
	policy_tenant_unref(n);
	policy_tenant_unref(b);
	policy_tenant_unref(c);
	policy_tenant_unref(NULL);
}

/* "caps": an array of names (which names exist, actions/caps.c checks). */
static void test_caps_shape(void **state)
{
	char err[2048];

	(void)state;
	policy_tenant_unref(tenant_from("{\"caps\": [\"vision\", \"testing\"]}"));
	policy_tenant_unref(tenant_from("{\"caps\": []}"));
	tenant_error("{\"caps\": \"vision\"}", err, sizeof(err));
	assert_non_null(strstr(err, "policy.caps must be an array"));
	tenant_error("{\"caps\": [\"vision\", 7]}", err, sizeof(err));
	assert_non_null(strstr(err, "policy.caps[1] must be a string"));
}

/* cdp: deny by default; "allow" or the object form; bad values named. */
static void test_cdp(void **state)
{
	struct policy_tenant *t;
	char err[2048] = "";

	(void)state;
	t = tenant_from("{}");
	assert_int_equal(policy_tenant_settings(t)->cdp_allow, 0);
	assert_int_equal(policy_tenant_settings(t)->cdp_gates, 1);
	assert_int_equal(policy_tenant_settings(t)->cdp_screenshot_every_s, 5);
	policy_tenant_unref(t);
	t = tenant_from("{\"cdp\": \"allow\"}");
	assert_int_equal(policy_tenant_settings(t)->cdp_allow, 1);
	assert_int_equal(policy_tenant_settings(t)->cdp_gates, 1);
	policy_tenant_unref(t);
	t = tenant_from("{\"cdp\": {\"access\": \"allow\", \"gates\": \"off\", "
	                "\"screenshot_every_s\": 30}}");
	assert_int_equal(policy_tenant_settings(t)->cdp_allow, 1);
	assert_int_equal(policy_tenant_settings(t)->cdp_gates, 0);
	assert_int_equal(policy_tenant_settings(t)->cdp_screenshot_every_s, 30);
	policy_tenant_unref(t);
	t = tenant_from("{\"cdp\": {\"gates\": \"off\"}}");
	assert_int_equal(policy_tenant_settings(t)->cdp_allow, 0); /* access still denies */
	policy_tenant_unref(t);
	tenant_error("{\"cdp\": \"yes\"}", err, sizeof(err));
	assert_non_null(strstr(err, "policy.cdp must be \"allow\" or \"deny\""));
	tenant_error("{\"cdp\": {\"gates\": false, \"access\": \"allow\"}}", err, sizeof(err));
	assert_non_null(strstr(err, "policy.cdp.gates must be \"on\" or \"off\""));
	tenant_error("{\"cdp\": {\"screenshot_every_s\": 0}}", err, sizeof(err));
	assert_non_null(strstr(err, "policy.cdp.screenshot_every_s must be a whole number"));
	tenant_error("{\"cdp\": {\"acess\": \"allow\"}}", err, sizeof(err));
	assert_non_null(strstr(err, "policy.cdp.acess is not a setting"));
	tenant_error("{\"cdp\": true}", err, sizeof(err));
	assert_non_null(strstr(err, "policy.cdp must be \"allow\", \"deny\" or an object"));
}

/* user_agent: not pinned by default; a one-line string pins it; shown
 * by the effective policy; anything else refused, naming the key. */
static void test_user_agent(void **state)
{
	struct policy_tenant *t;
	json_t *eff;
	char err[2048] = "";

	(void)state;
	t = tenant_from("{}");
	assert_string_equal(policy_tenant_settings(t)->user_agent, "");
	eff = policy_tenant_effective(t);
	assert_string_equal(json_string_value(json_object_get(eff, "user_agent")), "browser");
	json_decref(eff);
	policy_tenant_unref(t);
	t = tenant_from("{\"user_agent\": \"Mozilla/5.0 pinned/1.0\"}");
	assert_string_equal(policy_tenant_settings(t)->user_agent, "Mozilla/5.0 pinned/1.0");
	eff = policy_tenant_effective(t);
	assert_string_equal(json_string_value(json_object_get(eff, "user_agent")),
	                    "Mozilla/5.0 pinned/1.0");
	json_decref(eff);
	policy_tenant_unref(t);
	tenant_error("{\"user_agent\": \"\"}", err, sizeof(err));
	assert_non_null(strstr(err, "policy.user_agent must be a User-Agent string"));
	tenant_error("{\"user_agent\": \"a\\r\\nX: 1\"}", err, sizeof(err));
	assert_non_null(strstr(err, "policy.user_agent must be a User-Agent string"));
	tenant_error("{\"user_agent\": 7}", err, sizeof(err));
	assert_non_null(strstr(err, "policy.user_agent must be a User-Agent string"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_defaults),
		cmocka_unit_test(test_cdp),
		cmocka_unit_test(test_values_and_effective),
		cmocka_unit_test(test_every_error_at_once),
		cmocka_unit_test(test_warnings),
		cmocka_unit_test(test_hash_narrow_and_refs),
		cmocka_unit_test(test_caps_shape),
		cmocka_unit_test(test_user_agent),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

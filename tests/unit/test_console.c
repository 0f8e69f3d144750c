/*
 * test_console.c - the web console's parts that need no server: its
 * config, credentials, logins and CSRF tokens, HTML escaping, and the
 * live state an agent session shares with it (the one-frame slot, the
 * bounded input queue, who has the browser).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <sodium.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "console/console.h"
#include "console/live.h"

static char hash_a[65], hash_b[65];
static unsigned char admin_hash[32];

static void hex_sha(const char *token, char out[65])
{
	unsigned char h[32];

	crypto_hash_sha256(h, (const unsigned char *)token, strlen(token));
	sodium_bin2hex(out, 65, h, 32);
}

static int setup(void **state)
{
	(void)state;
	hex_sha("alice-token", hash_a);
	hex_sha("bob-token", hash_b);
	crypto_hash_sha256(admin_hash, (const unsigned char *)"admin-token", 11);
	return 0;
}

/* Parses a console object built from fmt with the hashes h1 and h2. */
static int parse_with(const char *fmt, const char *h1, const char *h2, struct console_config *c,
                      char *err, size_t errlen)
{
	char text[2048];
	json_t *v;
	int rc;

	snprintf(text, sizeof(text), fmt, h1, h2);
	v = json_loads(text, 0, NULL);
	assert_non_null(v);
	rc = console_config_parse(v, c, err, errlen);
	json_decref(v);
	return rc;
}

/* Parses a console object built from fmt (with alice's and bob's hashes). */
static int parse(const char *fmt, struct console_config *c, char *err, size_t errlen)
{
	return parse_with(fmt, hash_a, hash_b, c, err, errlen);
}

static void test_config(void **state)
{
	struct console_config c;
	char err[256];

	(void)state;
	assert_int_equal(console_config_parse(NULL, &c, err, sizeof(err)), 0);
	assert_int_equal(c.frames_per_second, CONSOLE_FPS_DEFAULT);
	assert_int_equal(parse("{\"frames_per_second\": 3, \"credentials\": ["
	                       "{\"id\": \"c-a\", \"name\": \"alice\", \"tenant\": \"acme\", "
	                       "\"role\": \"approver\", \"token_sha256\": \"%s\"},"
	                       "{\"id\": \"c-b\", \"name\": \"bob\", \"tenant\": \"beta\", "
	                       "\"role\": \"viewer\", \"token_sha256\": \"%s\"}]}",
	                       &c, err, sizeof(err)),
	                 0);
	assert_int_equal(c.n_creds, 2);
	assert_int_equal(c.frames_per_second, 3);
	assert_true(c.creds[0].approver);
	assert_false(c.creds[1].approver);

	assert_int_equal(parse("{\"credentials\": [{\"id\": \"c-a\", \"name\": \"a\", \"tenant\": "
	                       "\"acme\", \"role\": \"root\", \"token_sha256\": \"%s\"}]}",
	                       &c, err, sizeof(err)),
	                 -1);
	assert_non_null(strstr(err, "viewer"));
	assert_int_equal(parse("{\"credentials\": [{\"id\": \"c-a\", \"name\": \"a\", \"tenant\": "
	                       "\"acme\", \"role\": \"viewer\", \"token_sha256\": \"%s\"},"
	                       "{\"id\": \"c-a\", \"name\": \"b\", \"tenant\": \"acme\", \"role\": "
	                       "\"viewer\", \"token_sha256\": \"%s\"}]}",
	                       &c, err, sizeof(err)),
	                 -1);
	assert_non_null(strstr(err, "used twice"));
	assert_int_equal(
	    parse_with("{\"credentials\": [{\"id\": \"c-a\", \"name\": \"a\", "
	               "\"tenant\": \"acme\", \"role\": \"viewer\", \"token_sha256\": "
	               "\"%s\"}, {\"id\": \"c-b\", \"name\": \"b\", \"tenant\": \"acme\", "
	               "\"role\": \"viewer\", \"token_sha256\": \"%s\"}]}",
	               hash_a, hash_a, &c, err, sizeof(err)),
	    -1);
	assert_non_null(strstr(err, "has the token of"));
	assert_int_equal(parse("{\"frames_per_second\": 500}", &c, err, sizeof(err)), -1);
	assert_int_equal(parse("{\"credentials\": [], \"extra\": 1}", &c, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "unknown key"));
	assert_int_equal(parse("{\"credentials\": [{\"id\": \"c-a\", \"name\": \"a\\u0007\", "
	                       "\"tenant\": \"acme\", \"role\": \"viewer\", \"token_sha256\": "
	                       "\"%s\"}]}",
	                       &c, err, sizeof(err)),
	                 -1);
	assert_int_equal(parse("{\"credentials\": [{\"id\": \"c-a\", \"name\": \"a\", \"tenant\": "
	                       "\"acme\", \"role\": \"viewer\", \"token_sha256\": \"zz\"}]}",
	                       &c, err, sizeof(err)),
	                 -1);
	assert_null(strstr(err, "zz"));
}

static void test_credentials_and_logins(void **state)
{
	struct console_config c;
	const struct console_cred *cred;
	struct console_logins *l = console_logins_new();
	struct console_login *login, *again;
	char err[256], cookie[65];

	(void)state;
	assert_int_equal(parse("{\"credentials\": [{\"id\": \"c-a\", \"name\": \"alice\", "
	                       "\"tenant\": \"acme\", \"role\": \"approver\", \"token_sha256\": "
	                       "\"%s\"}]}",
	                       &c, err, sizeof(err)),
	                 0);
	cred = console_cred_for_token(&c, admin_hash, "admin-token");
	assert_non_null(cred);
	assert_string_equal(cred->id, "admin");
	assert_true(console_cred_sees(cred, "anything"));
	cred = console_cred_for_token(&c, admin_hash, "alice-token");
	assert_non_null(cred);
	assert_string_equal(cred->name, "alice");
	assert_true(console_cred_sees(cred, "acme"));
	assert_false(console_cred_sees(cred, "beta"));
	assert_null(console_cred_for_token(&c, admin_hash, "alice-token "));
	assert_null(console_cred_for_token(&c, admin_hash, ""));

	login = console_login_start(l, cred);
	assert_non_null(login);
	snprintf(cookie, sizeof(cookie), "%s", login->cookie);
	again = console_login_find(l, cookie);
	assert_ptr_equal(again, login);
	assert_true(console_csrf_ok(login, login->csrf));
	assert_false(console_csrf_ok(login, cookie));
	assert_false(console_csrf_ok(login, NULL));
	assert_false(console_csrf_ok(login, "short"));
	assert_null(console_login_find(l, "0000"));
	console_login_end(l, login);
	assert_null(console_login_find(l, cookie));
	console_logins_free(l);
}

static void test_html(void **state)
{
	struct gb_buf b;

	(void)state;
	gb_buf_init(&b, 4096);
	console_html_text(&b, "<img src=x onerror=\"a('b')\">&");
	assert_string_equal(b.data, "&lt;img src=x onerror=&quot;a(&#39;b&#39;)&quot;&gt;&amp;");
	gb_buf_free(&b);
	gb_buf_init(&b, 4096);
	console_url_part(&b, "a b&c/\"");
	assert_string_equal(b.data, "a%20b%26c%2F%22");
	gb_buf_free(&b);
}

static void test_live(void **state)
{
	struct console_live *l = console_live_new();
	struct console_input in, out;
	unsigned char *jpeg;
	const char *mime;
	size_t len, i;
	uint64_t seq;
	int w, h, began, ended;
	char err[256], by[CONSOLE_NAME_MAX], cred[CONSOLE_NAME_MAX];

	(void)state;
	assert_int_equal(console_live_frame(l, 5, 0, &jpeg, &len, &mime, &seq, &w, &h), 0);
	assert_null(jpeg);
	/* a viewer asked: the worker has the screencast to start */
	assert_true(console_live_has_work(l));

	memset(&in, 0, sizeof(in));
	in.kind = CONSOLE_INPUT_TEXT;
	snprintf(in.text, sizeof(in.text), "hello");
	snprintf(in.credential, sizeof(in.credential), "c-a");
	assert_int_equal(console_live_push_input(l, &in, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "take the browser over first"));
	assert_int_equal(console_live_release(l, err, sizeof(err)), -1);

	assert_int_equal(console_live_take(l, "alice", "c-a", err, sizeof(err)), 0);
	assert_int_equal(console_live_take(l, "bob", "c-b", err, sizeof(err)), -1);
	assert_non_null(strstr(err, "alice has the browser"));
	assert_true(console_live_human(l, by, sizeof(by)));
	assert_string_equal(by, "alice");
	for (i = 0; i < CONSOLE_LIVE_INPUT_MAX; i++)
		assert_int_equal(console_live_push_input(l, &in, err, sizeof(err)), 0);
	assert_int_equal(console_live_push_input(l, &in, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "wait a moment"));
	snprintf(in.credential, sizeof(in.credential), "c-b");
	assert_true(console_live_pop_input(l, &out));
	assert_string_equal(out.text, "hello");
	assert_int_equal(console_live_push_input(l, &in, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "only they can act"));
	while (console_live_pop_input(l, &out))
		;
	assert_int_equal(console_live_release(l, err, sizeof(err)), 0);
	assert_false(console_live_human(l, NULL, 0));
	console_live_take_transitions(l, &began, &ended, by, sizeof(by), cred, sizeof(cred));
	assert_true(began);
	assert_true(ended);
	assert_string_equal(by, "alice");
	assert_string_equal(cred, "c-a");
	console_live_take_transitions(l, &began, &ended, by, sizeof(by), cred, sizeof(cred));
	assert_false(began);
	assert_false(ended);
	console_live_unref(l);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_config),
		cmocka_unit_test(test_credentials_and_logins),
		cmocka_unit_test(test_html),
		cmocka_unit_test(test_live),
	};

	return cmocka_run_group_tests(tests, setup, NULL);
}

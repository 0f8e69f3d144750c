/*
 * test_actions.c - the pure parts of the pipeline: what counts as a
 * snapshot ref, how key names become CDP key events, the scrubbing of
 * values typed from secrets, and the page_content policy.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "actions/actions-private.h"
#include "evidence/audit.h"
#include "evidence/evidence.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void test_scrub_typed_secrets(void **state)
{
	static const char pw[] = "p@ss w/rd&\"1";
	struct act_session s;
	json_t *j;
	char *out;

	(void)state;
	memset(&s, 0, sizeof(s));
	assert_null(act_secrets_scrub_text(&s, "nothing typed yet"));
	act_secrets_remember(&s, "SHOP_PASSWORD", (const unsigned char *)pw, strlen(pw));
	act_secrets_remember(&s, "SHOP_PASSWORD", (const unsigned char *)pw, strlen(pw));
	assert_int_equal(s.n_typed_secrets, 1);
	/* raw, percent-encoded, form-encoded and JSON-escaped */
	out = act_secrets_scrub_text(&s, "a p@ss w/rd&\"1 b");
	assert_string_equal(out, "a [secret SHOP_PASSWORD] b");
	free(out);
	out = act_secrets_scrub_text(&s, "/login?pw=p%40ss%20w%2Frd%26%221&x=p%40ss+w%2Frd%26%221");
	assert_string_equal(out, "/login?pw=[secret SHOP_PASSWORD]&x=[secret SHOP_PASSWORD]");
	free(out);
	out = act_secrets_scrub_text(&s, "Result: \"p@ss w/rd&\\\"1\"");
	assert_string_equal(out, "Result: \"[secret SHOP_PASSWORD]\"");
	free(out);
	assert_null(act_secrets_scrub_text(&s, "p@ss w/rd"));
	j = json_pack("{s:[s, {s:s}], s:i}", "a", "x p@ss w/rd&\"1", "k",
	              "p@ss w/rd&\"1p@ss w/rd&\"1", "n", 3);
	act_secrets_scrub_json(&s, j);
	assert_string_equal(json_string_value(json_array_get(json_object_get(j, "a"), 0)),
	                    "x [secret SHOP_PASSWORD]");
	assert_string_equal(
	    json_string_value(json_object_get(json_array_get(json_object_get(j, "a"), 1), "k")),
	    "[secret SHOP_PASSWORD][secret SHOP_PASSWORD]");
	json_decref(j);
	act_secrets_stop(&s);
	assert_int_equal(s.n_typed_secrets, 0);
}

static void test_page_content_policy(void **state)
{
	struct act_session s;
	struct policy_tenant *t = NULL;
	char err[1024];
	json_t *p;

	(void)state;
	memset(&s, 0, sizeof(s));
	act_secrets_start(&s, NULL);
	assert_int_equal(s.hidden_text, SNAP_HIDDEN_FLAG);
	p = json_pack("{s:{s:s}}", "page_content", "hidden_text", "drop");
	assert_int_equal(policy_tenant_parse(p, NULL, &t, err, sizeof(err)), 0);
	act_secrets_start(&s, t);
	assert_int_equal(s.hidden_text, SNAP_HIDDEN_DROP);
	policy_tenant_unref(t);
	json_decref(p);
	/* the policy is checked once, up front (policy/tenant.h) */
	p = json_pack("{s:{s:s}}", "page_content", "hidden_text", "hide");
	assert_int_equal(policy_tenant_parse(p, NULL, &t, err, sizeof(err)), -POLICY_EINVAL);
	assert_non_null(strstr(err, "page_content.hidden_text must be \"flag\" or \"drop\""));
	json_decref(p);
	p = json_pack("{s:{s:b}}", "page_content", "hidden", 1);
	assert_int_equal(policy_tenant_parse(p, NULL, &t, err, sizeof(err)), -POLICY_EINVAL);
	assert_non_null(strstr(err, "page_content.hidden is not a setting"));
	json_decref(p);
}

static void test_refs_and_selectors(void **state)
{
	(void)state;
	assert_true(act_is_ref("e5"));
	assert_true(act_is_ref("e123"));
	assert_true(act_is_ref("f1e2"));
	assert_true(act_is_ref("f12e345"));
	assert_false(act_is_ref("e"));
	assert_false(act_is_ref("f1"));
	assert_false(act_is_ref("fe2"));
	assert_false(act_is_ref("#save"));
	assert_false(act_is_ref("button"));
	assert_false(act_is_ref("e5 "));
	assert_false(act_is_ref("embed"));
	assert_false(act_is_ref(""));
}

/* Locators: what each one asks for, and a precise error for a bad one. */
static void test_locators(void **state)
{
	const char *kind;
	char *what, *name;
	char err[256];

	(void)state;
	assert_int_equal(act_parse_locator("role=button[name=\"Place \\\"order\\\"\"]", &kind,
	                                   &what, &name, err, sizeof(err)),
	                 1);
	assert_string_equal(kind, "role");
	assert_string_equal(what, "button");
	assert_string_equal(name, "Place \"order\"");
	free(what);
	free(name);
	assert_int_equal(act_parse_locator("role=link", &kind, &what, &name, err, sizeof(err)), 1);
	assert_string_equal(what, "link");
	assert_null(name);
	free(what);
	assert_int_equal(
	    act_parse_locator("text=\"Add to cart\"", &kind, &what, &name, err, sizeof(err)), 1);
	assert_string_equal(kind, "text");
	assert_string_equal(what, "Add to cart");
	free(what);
	assert_int_equal(act_parse_locator("text=Checkout", &kind, &what, &name, err, sizeof(err)),
	                 1);
	assert_string_equal(what, "Checkout");
	free(what);
	assert_int_equal(act_parse_locator("css=#pay > b", &kind, &what, &name, err, sizeof(err)),
	                 1);
	assert_string_equal(kind, "css");
	assert_string_equal(what, "#pay > b");
	free(what);
	/* plain CSS is not a locator */
	assert_int_equal(act_parse_locator("#save", &kind, &what, &name, err, sizeof(err)), 0);
	assert_int_equal(act_parse_locator("button.role", &kind, &what, &name, err, sizeof(err)),
	                 0);
	/* malformed ones say what to write */
	assert_int_equal(act_parse_locator("role=Button", &kind, &what, &name, err, sizeof(err)),
	                 -1);
	assert_non_null(strstr(err, "lowercase letters"));
	assert_int_equal(
	    act_parse_locator("role=button[label=\"x\"]", &kind, &what, &name, err, sizeof(err)),
	    -1);
	assert_non_null(strstr(err, "role=button[name=\"Save\"]"));
	assert_int_equal(
	    act_parse_locator("role=button[name=Save]", &kind, &what, &name, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "JSON string"));
	assert_int_equal(act_parse_locator("text=", &kind, &what, &name, err, sizeof(err)), -1);
	assert_int_equal(act_parse_locator("text=\"open", &kind, &what, &name, err, sizeof(err)),
	                 -1);
	assert_null(what);
	assert_null(name);
}

static void test_named_keys(void **state)
{
	struct key_def k;
	char text[8], code[16];

	(void)state;
	assert_int_equal(act_lookup_key("Enter", &k, text, code), 0);
	assert_int_equal(k.vk, 13);
	assert_string_equal(k.text, "\r");
	assert_int_equal(act_lookup_key("ArrowDown", &k, text, code), 0);
	assert_int_equal(k.vk, 40);
	assert_null(k.text);
	assert_int_equal(act_lookup_key("F12", &k, text, code), 0);
	assert_int_equal(k.vk, 123);
	assert_int_equal(act_lookup_key("NoSuchKey", &k, text, code), -1);
}

static void test_character_keys(void **state)
{
	struct key_def k;
	char text[8], code[16];

	(void)state;
	assert_int_equal(act_lookup_key("a", &k, text, code), 0);
	assert_string_equal(k.key, "a");
	assert_string_equal(k.text, "a");
	assert_string_equal(k.code, "KeyA");
	assert_int_equal(k.vk, 'A');
	assert_int_equal(act_lookup_key("7", &k, text, code), 0);
	assert_string_equal(k.code, "Digit7");
	assert_int_equal(act_lookup_key("é", &k, text, code), 0);
	assert_string_equal(k.text, "é");
}

/* ---- queues that grow from outside have a ceiling ---------------------- */

/* A fresh data dir under /tmp (path at least 64 bytes). */
static void make_data_dir(char *path, size_t len)
{
	snprintf(path, len, "/tmp/gb-actions-XXXXXX"); /* mkdtemp fills in the Xs */
	assert_non_null(mkdtemp(path));
}

static void remove_data_dir(const char *path)
{
	char cmd[256];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", path);
	assert_int_equal(system(cmd), 0);
}

/* Lines in the tenant's audit day files. */
static size_t audit_lines(const char *data_dir, const char *tenant)
{
	char cmd[512];
	char out[64] = "";
	FILE *p;

	snprintf(cmd, sizeof(cmd), "cat '%s'/tenants/%s/audit/*.jsonl 2>/dev/null | wc -l",
	         data_dir, tenant);
	p = popen(cmd, "r");
	assert_non_null(p);
	assert_non_null(fgets(out, sizeof(out), p));
	pclose(p);
	return (size_t)strtoul(out, NULL, 10);
}

/* One tool call's record, with a screenshot of png_len bytes (not a PNG:
 * kept as invalid evidence) when png_len > 0. */
static int queue_action(struct act_keeper *k, const char *op, size_t png_len, uint64_t *ticket,
                        char *err, size_t errlen)
{
	struct act_keeper_action a = { 0 };

	a.operation_id = op;
	a.tool = "browser_click";
	a.body = json_pack("{s:s}", "tool", "browser_click");
	a.arguments = json_pack("{s:s}", "target", "e1");
	if (png_len) {
		a.png = calloc(1, png_len);
		assert_non_null(a.png);
		a.png_len = png_len;
	}
	return act_keeper_record_action(k, &a, ticket, err, errlen);
}

struct resume_later {
	struct act_keeper *k;
};

static void *resume_keeper(void *arg)
{
	struct resume_later *r = arg;

	usleep(200 * 1000);
	act_keeper_pause(r->k, 0);
	return NULL;
}

/* Every failure to keep evidence before the next answer is reported in
 * it, oldest first, once: none overwrites another. A call that waits for
 * its own record takes only its own error; beyond the bound (16) the
 * rest are counted. */
static void test_keeper_reports_every_error(void **state)
{
	struct evid_store *store = NULL;
	struct evid_audit *audit = NULL;
	struct act_keeper *k = NULL;
	json_t *errors = NULL;
	uint64_t tickets[3] = { 0 };
	size_t dropped = 99;
	char data[64];
	char err[512];
	char op[32];
	char why[64];
	int i;

	(void)state;
	make_data_dir(data, sizeof(data));
	assert_int_equal(evid_store_open_err(data, &store, err, sizeof(err)), 0);
	assert_int_equal(evid_audit_open(data, &audit, err, sizeof(err)), 0);
	assert_int_equal(act_keeper_start(store, audit, "acme", "u", NULL, NULL, &k), 0);
	assert_int_equal(act_keeper_take_errors(k, &errors, &dropped), 0);
	assert_null(errors);
	assert_int_equal(dropped, 0);
	/* three records whose screenshots are not PNGs, and a screenshot that
	 * could not be taken, all before the next answer */
	act_keeper_pause(k, 1);
	for (i = 0; i < 3; i++) {
		snprintf(op, sizeof(op), "op-bad-%d", i);
		assert_int_equal(queue_action(k, op, 64, &tickets[i], err, sizeof(err)), 0);
	}
	act_keeper_note_error(k, "the evidence screenshot of op-shot could not be taken");
	act_keeper_pause(k, 0);
	act_keeper_flush(k);
	/* the call that waits for op-bad-1's record gets its error, only */
	assert_int_equal(act_keeper_wait(k, tickets[1], err, sizeof(err)), 1);
	assert_non_null(strstr(err, "op-bad-1"));
	assert_int_equal(act_keeper_wait(k, tickets[1], err, sizeof(err)), 0); /* said once */
	/* the next answer: all the others, oldest first */
	assert_int_equal(act_keeper_take_errors(k, &errors, &dropped), 3);
	assert_int_equal(dropped, 0);
	assert_non_null(strstr(json_string_value(json_array_get(errors, 0)), "op-shot"));
	assert_non_null(strstr(json_string_value(json_array_get(errors, 1)), "op-bad-0"));
	assert_non_null(strstr(json_string_value(json_array_get(errors, 1)), "not a valid PNG"));
	assert_non_null(strstr(json_string_value(json_array_get(errors, 2)), "op-bad-2"));
	json_decref(errors);
	assert_int_equal(act_keeper_take_errors(k, &errors, &dropped), 0); /* said once */
	assert_null(errors);
	/* beyond the bound: the first 16 listed, the other 4 counted */
	for (i = 0; i < 20; i++) {
		snprintf(why, sizeof(why), "screenshot %d could not be taken", i);
		act_keeper_note_error(k, why);
	}
	assert_int_equal(act_keeper_take_errors(k, &errors, &dropped), 16);
	assert_int_equal(dropped, 4);
	assert_string_equal(json_string_value(json_array_get(errors, 0)),
	                    "screenshot 0 could not be taken");
	assert_string_equal(json_string_value(json_array_get(errors, 15)),
	                    "screenshot 15 could not be taken");
	json_decref(errors);
	assert_int_equal(act_keeper_take_errors(k, &errors, &dropped), 0);
	assert_int_equal(dropped, 0);
	/* a call that waits for its own record learns that it failed even
	 * when the list was full */
	for (i = 0; i < 16; i++)
		act_keeper_note_error(k, "a screenshot could not be taken");
	assert_int_equal(queue_action(k, "op-late", 64, &tickets[0], err, sizeof(err)), 0);
	act_keeper_flush(k);
	assert_int_equal(act_keeper_wait(k, tickets[0], err, sizeof(err)), 1);
	assert_non_null(strstr(err, "could not be kept"));
	assert_int_equal(act_keeper_wait(k, tickets[0], err, sizeof(err)), 0); /* said once */
	assert_int_equal(act_keeper_take_errors(k, &errors, &dropped), 16);
	assert_int_equal(dropped, 0); /* its own was said to its call */
	json_decref(errors);
	act_keeper_stop(k);
	evid_audit_close(audit);
	evid_store_close(store);
	remove_data_dir(data);
}

/* The record keeper's queue (it holds screenshots) never grows past its
 * ceiling: while the disk is behind, a worker waits for room; a job that
 * finds none in time is refused with an error that says so, and nothing
 * already queued is lost. */
static void test_keeper_queue_has_a_ceiling(void **state)
{
	struct evid_store *store = NULL;
	struct evid_audit *audit = NULL;
	struct act_keeper *k = NULL;
	struct resume_later r;
	char data[64];
	char err[512];
	char op[32];
	uint64_t ticket = 0;
	pthread_t t;
	int i;

	(void)state;
	make_data_dir(data, sizeof(data));
	assert_int_equal(evid_store_open_err(data, &store, err, sizeof(err)), 0);
	assert_int_equal(evid_audit_open(data, &audit, err, sizeof(err)), 0);
	assert_int_equal(act_keeper_start(store, audit, "acme", "u", NULL, NULL, &k), 0);
	act_keeper_pause(k, 1); /* the disk is stuck */
	act_keeper_set_limits(k, 3, 1024 * 1024, 0);
	for (i = 0; i < 3; i++) {
		snprintf(op, sizeof(op), "op-%d", i);
		assert_int_equal(queue_action(k, op, 0, &ticket, err, sizeof(err)), 0);
		assert_int_equal(ticket, (uint64_t)i + 1);
	}
	/* a fourth job: refused, and the error says why and what to do */
	err[0] = '\0';
	assert_int_equal(queue_action(k, "op-3", 0, &ticket, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "op-3"));
	assert_non_null(strstr(err, "behind (3 records"));
	assert_non_null(strstr(err, "check the disk"));
	/* a screenshot that would take the bytes past the ceiling: refused too */
	act_keeper_set_limits(k, 100, 1024 * 1024, 0);
	assert_int_equal(queue_action(k, "op-big", 2 * 1024 * 1024, &ticket, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "op-big"));
	/* other records (session events) are refused the same way, and reported */
	act_keeper_set_limits(k, 3, 1024 * 1024, 0);
	act_keeper_record(k, EVID_AUDIT_SESSION_OPENED, NULL, NULL, json_object(), 0);
	{
		json_t *errors;
		size_t dropped;

		assert_int_equal(act_keeper_take_errors(k, &errors, &dropped), 1);
		assert_int_equal(dropped, 0);
		assert_non_null(
		    strstr(json_string_value(json_array_get(errors, 0)), "session_opened record"));
		json_decref(errors);
	}
	/* back-pressure: with room to wait for, the worker waits until the
	 * disk catches up, and its job is kept */
	act_keeper_set_limits(k, 3, 1024 * 1024, 60000);
	r.k = k;
	assert_int_equal(pthread_create(&t, NULL, resume_keeper, &r), 0);
	assert_int_equal(queue_action(k, "op-4", 0, &ticket, err, sizeof(err)), 0);
	pthread_join(t, NULL);
	assert_int_equal(act_keeper_wait(k, ticket, err, sizeof(err)), 0);
	act_keeper_flush(k);
	assert_int_equal(audit_lines(data, "acme"), 4); /* op-0..2 and op-4 */
	/* a job always fits an empty queue, however large */
	act_keeper_set_limits(k, 1, 1024, 0);
	assert_int_equal(queue_action(k, "op-5", 64 * 1024, &ticket, err, sizeof(err)), 0);
	act_keeper_flush(k);
	assert_int_equal(audit_lines(data, "acme"), 5);
	act_keeper_stop(k);
	evid_audit_close(audit);
	evid_store_close(store);
	remove_data_dir(data);
}

/* Calls that wait in a session's mailbox, and the one that holds it up. */
struct mailbox {
	pthread_mutex_t lock;
	pthread_cond_t cond;
	int blocker_running; /* the first call's completion is on the worker */
	int release;         /* let it return */
	int done;            /* completions */
};

static struct mailbox box;

static void blocker_done(struct act_call *call, json_t *result)
{
	(void)call;
	json_decref(result);
	pthread_mutex_lock(&box.lock);
	box.blocker_running = 1;
	box.done++;
	pthread_cond_broadcast(&box.cond);
	while (!box.release)
		pthread_cond_wait(&box.cond, &box.lock);
	pthread_mutex_unlock(&box.lock);
}

static void queued_done(struct act_call *call, json_t *result)
{
	(void)call;
	json_decref(result);
	pthread_mutex_lock(&box.lock);
	box.done++;
	pthread_cond_broadcast(&box.cond);
	pthread_mutex_unlock(&box.lock);
}

/* A session's mailbox holds at most ACT_SESSION_MAX_QUEUED calls: one
 * more is refused (-EBUSY) without being queued, and once the worker
 * catches up calls are taken again. No browser is needed: the calls are
 * cancelled before they start, and the first one's completion holds the
 * worker. */
static void test_session_mailbox_has_a_ceiling(void **state)
{
	static struct act_call calls[ACT_SESSION_MAX_QUEUED + 3];
	struct act_config cfg = { 0 };
	struct act_session *s = NULL;
	json_t *args = json_object();
	char data[64];
	char err[512] = "";
	size_t i;

	(void)state;
	make_data_dir(data, sizeof(data));
	memset(&box, 0, sizeof(box));
	pthread_mutex_init(&box.lock, NULL);
	pthread_cond_init(&box.cond, NULL);
	cfg.data_dir = data;
	cfg.tenant = "acme";
	cfg.headless = 1;
	if (act_session_new(&cfg, &s, err, sizeof(err)) != 0)
		fail_msg("session: %s", err);
	for (i = 0; i < sizeof(calls) / sizeof(calls[0]); i++) {
		calls[i].def = act_tool_find("browser_click");
		calls[i].args = args;
		calls[i].cancelled = 1;
		calls[i].on_done = i == 0 ? blocker_done : queued_done;
	}
	assert_int_equal(act_session_submit(s, &calls[0]), 0);
	pthread_mutex_lock(&box.lock);
	while (!box.blocker_running)
		pthread_cond_wait(&box.cond, &box.lock);
	pthread_mutex_unlock(&box.lock);
	/* the worker is held: the mailbox fills to its ceiling, then refuses */
	for (i = 1; i <= ACT_SESSION_MAX_QUEUED; i++)
		assert_int_equal(act_session_submit(s, &calls[i]), 0);
	assert_int_equal(act_session_submit(s, &calls[i]), -EBUSY);
	/* released, the worker drains it; the refused call was never run */
	pthread_mutex_lock(&box.lock);
	box.release = 1;
	pthread_cond_broadcast(&box.cond);
	while (box.done < ACT_SESSION_MAX_QUEUED + 1)
		pthread_cond_wait(&box.cond, &box.lock);
	pthread_mutex_unlock(&box.lock);
	assert_int_equal(act_session_submit(s, &calls[i + 1]), 0);
	pthread_mutex_lock(&box.lock);
	while (box.done < ACT_SESSION_MAX_QUEUED + 2)
		pthread_cond_wait(&box.cond, &box.lock);
	pthread_mutex_unlock(&box.lock);
	act_session_free(s);
	assert_int_equal(box.done, ACT_SESSION_MAX_QUEUED + 2);
	json_decref(args);
	pthread_mutex_destroy(&box.lock);
	pthread_cond_destroy(&box.cond);
	remove_data_dir(data);
}

/* The inputs that take a value in their own format: what fits, what is
 * refused (naming the format), and which are filled rather than typed. */
static void test_input_value_formats(void **state)
{
	static const struct {
		const char *type, *text;
		int ok, fill;
		const char *says;
	} cases[] = {
		{ "date", "2024-05-31", 1, 1, NULL },
		{ "date", "31/05/2024", 0, 1, "date inputs take YYYY-MM-DD" },
		{ "date", "2024-5-31", 0, 1, "YYYY-MM-DD" },
		{ "date", "2024-05-31x", 0, 1, "YYYY-MM-DD" },
		{ "date", "", 1, 1, NULL },
		{ "time", "14:30", 1, 1, NULL },
		{ "time", "14:30:05", 1, 1, NULL },
		{ "time", "14:30:05.250", 1, 1, NULL },
		{ "time", "2:30 PM", 0, 1, "time inputs take HH:MM" },
		{ "datetime-local", "2024-05-31T14:30", 1, 1, NULL },
		{ "datetime-local", "2024-05-31 14:30", 0, 1, "YYYY-MM-DDTHH:MM" },
		{ "month", "2024-05", 1, 1, NULL },
		{ "month", "May 2024", 0, 1, "month inputs take YYYY-MM" },
		{ "week", "2024-W22", 1, 1, NULL },
		{ "week", "2024-22", 0, 1, "week inputs take YYYY-Www" },
		{ "color", "#1a2B3c", 1, 1, NULL },
		{ "color", "red", 0, 1, "color inputs take #rrggbb" },
		{ "color", "#12345", 0, 1, "#rrggbb" },
		{ "number", "42", 1, 0, NULL },
		{ "number", "-3.5e2", 1, 0, NULL },
		{ "number", "0x10", 0, 0, "number inputs take a number" },
		{ "number", " 4", 0, 0, "number" },
		{ "number", "forty", 0, 0, "number" },
		{ "range", "75", 1, 1, NULL },
		{ "range", "inf", 0, 1, "range inputs take a number" },
		{ "text", "anything at all", 1, 0, NULL },
		{ "email", "not checked here", 1, 0, NULL },
	};
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char says[160] = "";
		int fill = -1;
		int rc =
		    act_input_value_check(cases[i].type, cases[i].text, &fill, says, sizeof(says));

		if ((rc == 0) != cases[i].ok || fill != cases[i].fill)
			fail_msg("%s \"%s\": rc %d fill %d", cases[i].type, cases[i].text, rc,
			         fill);
		if (cases[i].says && !strstr(says, cases[i].says))
			fail_msg("%s \"%s\": says \"%s\"", cases[i].type, cases[i].text, says);
	}
}

/* What the browser writes back for a value is compared in its canonical
 * form: zero seconds and fractions of a time dropped, colours lowered. */
static void test_input_value_canonical(void **state)
{
	static const struct {
		const char *type, *in, *out;
	} cases[] = {
		{ "time", "14:30:00", "14:30" },
		{ "time", "14:30:00.000", "14:30" },
		{ "time", "14:30:05.000", "14:30:05" },
		{ "time", "14:30:05.250", "14:30:05.250" },
		{ "time", "14:30", "14:30" },
		{ "datetime-local", "2024-05-31T14:30:00", "2024-05-31T14:30" },
		{ "datetime-local", "2024-05-31T00:00", "2024-05-31T00:00" },
		{ "color", "#1A2b3C", "#1a2b3c" },
		{ "date", "2024-05-31", "2024-05-31" },
		{ "text", "14:30:00", "14:30:00" },
		{ "", "Mixed Case:00", "Mixed Case:00" },
	};
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char v[64];

		snprintf(v, sizeof(v), "%s", cases[i].in);
		act_input_value_canonical(cases[i].type, v);
		assert_string_equal(v, cases[i].out);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_refs_and_selectors),
		cmocka_unit_test(test_locators),
		cmocka_unit_test(test_scrub_typed_secrets),
		cmocka_unit_test(test_page_content_policy),
		cmocka_unit_test(test_named_keys),
		cmocka_unit_test(test_input_value_formats),
		cmocka_unit_test(test_input_value_canonical),
		cmocka_unit_test(test_character_keys),
		cmocka_unit_test(test_keeper_queue_has_a_ceiling),
		cmocka_unit_test(test_keeper_reports_every_error),
		cmocka_unit_test(test_session_mailbox_has_a_ceiling),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

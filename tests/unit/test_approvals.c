/*
 * test_approvals.c - approvals in the store (store/store.h): bound to one
 * fingerprint, used once, expiring, surviving a restart, and exactly one
 * winner when many threads race to use one.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "store/store-private.h"
#include "store/store.h"
#include "store_fixture.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define FP_A "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
#define FP_B "bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb"

/* A clock the tests move by hand (Unix ms). */
static int64_t fake_now_ms = 1800000000000;

static int64_t fake_clock(void)
{
	return __atomic_load_n(&fake_now_ms, __ATOMIC_SEQ_CST);
}

static void advance_ms(int64_t ms)
{
	__atomic_add_fetch(&fake_now_ms, ms, __ATOMIC_SEQ_CST);
}

struct fixture {
	char dir[64];
	struct store *st;
};

static struct store *open_store(const char *dir)
{
	struct store *st = NULL;
	char err[512] = "";

	if (store_open(dir, &st, err, sizeof(err)) != 0)
		fail_msg("store_open: %s", err);
	store_set_clock(st, fake_clock);
	return st;
}

static int setup(void **state)
{
	struct fixture *fx = calloc(1, sizeof(*fx));

	if (store_fixture_tmpdir("approvals", fx->dir, sizeof(fx->dir)) < 0)
		return -1;
	fx->st = open_store(fx->dir);
	*state = fx;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *fx = *state;

	store_close(fx->st);
	store_fixture_tmpdir_remove(fx->dir);
	free(fx);
	return 0;
}

/* Creates a pending approval of tenant "acme" bound to fp. */
static struct store_approval create(struct store *st, const char *fp, int64_t ttl_ms)
{
	struct store_approval_request req = {
		.tenant = "acme",
		.fingerprint = fp,
		.summary = "click button \"Delete all orders\" on http://shop.test/orders, submits "
		           "POST /orders/delete",
		.session = "s-1",
		.operation_id = "op-ask",
		.tool = "browser_click",
		.rule = "destructive-click",
		.ttl_ms = ttl_ms,
	};
	struct store_approval a;
	char err[512] = "";

	if (store_approval_create(st, &req, &a, err, sizeof(err)) != 0)
		fail_msg("store_approval_create: %s", err);
	return a;
}

static int decide(struct store *st, const char *id, int approve, char *err, size_t errlen)
{
	struct store_decider who = { .by = "alice",
		                     .channel = "admin-socket",
		                     .reason = approve ? NULL : "not today",
		                     .uid = 1000 };

	return store_approval_decide(st, NULL, id, approve, &who, NULL, err, errlen);
}

static int consume(struct store *st, const char *tenant, const char *id, const char *fp,
                   enum store_refusal *why, char *err, size_t errlen)
{
	return store_approval_consume(st, tenant, id, fp, "op-run", NULL, why, err, errlen);
}

/* ---- tests ------------------------------------------------------------------------- */

static void test_create_and_read(void **state)
{
	struct fixture *fx = *state;
	struct store_approval a = create(fx->st, FP_A, 0);
	struct store_approval b;
	char err[512];

	assert_int_equal(strncmp(a.id, "apr-", 4), 0);
	assert_int_equal(strlen(a.id), 24);
	assert_int_equal(a.state, STORE_APPROVAL_PENDING);
	assert_int_equal(a.expires_ms - a.created_ms, STORE_APPROVAL_TTL_DEFAULT_MS);
	assert_int_equal(store_approval_get(fx->st, "acme", a.id, &b, err, sizeof(err)), 0);
	assert_string_equal(b.fingerprint, FP_A);
	assert_string_equal(b.summary, a.summary);
	assert_string_equal(b.rule, "destructive-click");
	assert_int_equal(b.state, STORE_APPROVAL_PENDING);
	/* another tenant does not see it; an operator (NULL tenant) does */
	assert_int_equal(store_approval_get(fx->st, "other", a.id, &b, err, sizeof(err)),
	                 -STORE_ENOTFOUND);
	assert_int_equal(store_approval_get(fx->st, NULL, a.id, &b, err, sizeof(err)), 0);
}

static void test_bad_requests(void **state)
{
	struct fixture *fx = *state;
	struct store_approval_request req = { .tenant = "acme",
		                              .fingerprint = "xyz",
		                              .summary = "s" };
	struct store_approval a;
	char longsum[STORE_SUMMARY_MAX + 10];
	char err[512];

	assert_int_equal(store_approval_create(fx->st, &req, &a, err, sizeof(err)), -STORE_EINVAL);
	assert_non_null(strstr(err, "fingerprint"));
	req.fingerprint = FP_A;
	req.tenant = NULL;
	assert_int_equal(store_approval_create(fx->st, &req, &a, err, sizeof(err)), -STORE_EINVAL);
	assert_non_null(strstr(err, "tenant is required"));
	req.tenant = "acme";
	memset(longsum, 'x', sizeof(longsum) - 1);
	longsum[sizeof(longsum) - 1] = '\0';
	req.summary = longsum;
	assert_int_equal(store_approval_create(fx->st, &req, &a, err, sizeof(err)), -STORE_EINVAL);
	assert_non_null(strstr(err, "summary is longer"));
	assert_int_equal(decide(fx->st, "apr-'; DROP TABLE approvals;--", 1, err, sizeof(err)),
	                 -STORE_EINVAL);
}

static void test_approve_then_use_once(void **state)
{
	struct fixture *fx = *state;
	struct store_approval a = create(fx->st, FP_A, 0);
	struct store_approval used;
	enum store_refusal why;
	char err[512];

	assert_int_equal(decide(fx->st, a.id, 1, err, sizeof(err)), 0);
	assert_int_equal(store_approval_consume(fx->st, "acme", a.id, FP_A, "op-run", &used, &why,
	                                        err, sizeof(err)),
	                 0);
	assert_int_equal(why, STORE_REFUSE_NONE);
	assert_int_equal(used.state, STORE_APPROVAL_USED);
	assert_string_equal(used.decided_by, "alice");
	assert_string_equal(used.used_by_operation, "op-run");
	/* spent */
	assert_int_equal(consume(fx->st, "acme", a.id, FP_A, &why, err, sizeof(err)),
	                 -STORE_EREFUSED);
	assert_int_equal(why, STORE_REFUSE_USED);
	assert_non_null(strstr(err, "already used"));
	/* a decision cannot be changed afterwards */
	assert_int_equal(decide(fx->st, a.id, 0, err, sizeof(err)), -STORE_ESTATE);
}

static void test_approved_for_a_used_for_b(void **state)
{
	struct fixture *fx = *state;
	struct store_approval a = create(fx->st, FP_A, 0);
	struct store_approval now;
	enum store_refusal why;
	char err[512];

	assert_int_equal(decide(fx->st, a.id, 1, err, sizeof(err)), 0);
	assert_int_equal(consume(fx->st, "acme", a.id, FP_B, &why, err, sizeof(err)),
	                 -STORE_EREFUSED);
	assert_int_equal(why, STORE_REFUSE_MISMATCH);
	assert_non_null(strstr(err, "granted for another action"));
	assert_non_null(strstr(err, "Delete all orders"));
	/* not spent by the refusal */
	assert_int_equal(store_approval_get(fx->st, "acme", a.id, &now, err, sizeof(err)), 0);
	assert_int_equal(now.state, STORE_APPROVAL_APPROVED);
	/* and another tenant cannot use it even with the right fingerprint */
	assert_int_equal(consume(fx->st, "intruder", a.id, FP_A, &why, err, sizeof(err)),
	                 -STORE_EREFUSED);
	assert_int_equal(why, STORE_REFUSE_NOT_FOUND);
	/* the action it was granted for still can */
	assert_int_equal(consume(fx->st, "acme", a.id, FP_A, &why, err, sizeof(err)), 0);
}

static void test_pending_cannot_be_used(void **state)
{
	struct fixture *fx = *state;
	struct store_approval a = create(fx->st, FP_A, 0);
	enum store_refusal why;
	char err[512];

	assert_int_equal(consume(fx->st, "acme", a.id, FP_A, &why, err, sizeof(err)),
	                 -STORE_EREFUSED);
	assert_int_equal(why, STORE_REFUSE_PENDING);
	assert_non_null(strstr(err, "has not been decided yet"));
	assert_int_equal(decide(fx->st, a.id, 1, err, sizeof(err)), 0);
	assert_int_equal(consume(fx->st, "acme", a.id, FP_A, &why, err, sizeof(err)), 0);
}

static void test_deny(void **state)
{
	struct fixture *fx = *state;
	struct store_approval a = create(fx->st, FP_A, 0);
	enum store_refusal why;
	char err[512];

	assert_int_equal(decide(fx->st, a.id, 0, err, sizeof(err)), 0);
	assert_int_equal(consume(fx->st, "acme", a.id, FP_A, &why, err, sizeof(err)),
	                 -STORE_EREFUSED);
	assert_int_equal(why, STORE_REFUSE_DENIED);
	assert_non_null(strstr(err, "denied by alice: not today"));
	assert_int_equal(decide(fx->st, a.id, 1, err, sizeof(err)), -STORE_ESTATE);
	assert_non_null(strstr(err, "already denied by alice"));
}

static void test_expiry(void **state)
{
	struct fixture *fx = *state;
	struct store_approval p = create(fx->st, FP_A, 60000);
	struct store_approval q = create(fx->st, FP_B, 60000);
	struct store_approval r;
	enum store_refusal why;
	size_t n = 0;
	char err[512];

	/* q is approved at +30 s: usable for 60 s from then */
	advance_ms(30000);
	assert_int_equal(decide(fx->st, q.id, 1, err, sizeof(err)), 0);
	advance_ms(31000); /* +61 s: p's request expired, q still usable */
	assert_int_equal(consume(fx->st, "acme", p.id, FP_A, &why, err, sizeof(err)),
	                 -STORE_EREFUSED);
	assert_int_equal(why, STORE_REFUSE_EXPIRED);
	assert_int_equal(decide(fx->st, p.id, 1, err, sizeof(err)), -STORE_ESTATE);
	assert_non_null(strstr(err, "expired"));
	advance_ms(30000); /* +91 s: q expired unused */
	assert_int_equal(consume(fx->st, "acme", q.id, FP_B, &why, err, sizeof(err)),
	                 -STORE_EREFUSED);
	assert_int_equal(why, STORE_REFUSE_EXPIRED);
	assert_int_equal(store_approval_get(fx->st, NULL, q.id, &r, err, sizeof(err)), 0);
	assert_int_equal(r.state, STORE_APPROVAL_EXPIRED);
	/* the sweep has nothing left to do */
	assert_int_equal(store_approval_expire(fx->st, &n, err, sizeof(err)), 0);
	assert_int_equal(n, 0);
	p = create(fx->st, FP_A, 1000);
	advance_ms(1000);
	assert_int_equal(store_approval_expire(fx->st, &n, err, sizeof(err)), 0);
	assert_int_equal(n, 1);
}

struct collected {
	char lines[32][160];
	size_t n;
};

static int collect_event(const struct store_approval_event *ev, void *user)
{
	struct collected *c = user;

	if (c->n < 32)
		snprintf(c->lines[c->n++], sizeof(c->lines[0]), "%s|%s|%s|%s|%s", ev->event, ev->by,
		         ev->channel, ev->reason, ev->operation_id);
	return 0;
}

static int collect_approval(const struct store_approval *a, void *user)
{
	struct collected *c = user;

	if (c->n < 32)
		snprintf(c->lines[c->n++], sizeof(c->lines[0]), "%s|%s", a->tenant,
		         store_approval_state_name(a->state));
	return 0;
}

static void test_list(void **state)
{
	struct fixture *fx = *state;
	struct store_approval a = create(fx->st, FP_A, 0);
	struct store_approval_query q = { .pending_only = 1 };
	struct collected c = { 0 };
	char err[512];

	create(fx->st, FP_B, 0);
	assert_int_equal(decide(fx->st, a.id, 1, err, sizeof(err)), 0);
	assert_int_equal(store_approval_list(fx->st, &q, collect_approval, &c, err, sizeof(err)),
	                 0);
	assert_int_equal(c.n, 1);
	assert_string_equal(c.lines[0], "acme|pending");
	memset(&c, 0, sizeof(c));
	q.pending_only = 0;
	assert_int_equal(store_approval_list(fx->st, &q, collect_approval, &c, err, sizeof(err)),
	                 0);
	assert_int_equal(c.n, 2);
	memset(&c, 0, sizeof(c));
	q.tenant = "other";
	assert_int_equal(store_approval_list(fx->st, &q, collect_approval, &c, err, sizeof(err)),
	                 0);
	assert_int_equal(c.n, 0);
}

static void test_survives_reopen_with_history(void **state)
{
	struct fixture *fx = *state;
	struct store_approval a = create(fx->st, FP_A, 0);
	struct collected c = { 0 };
	enum store_refusal why;
	char err[512];

	assert_int_equal(decide(fx->st, a.id, 1, err, sizeof(err)), 0);
	assert_int_equal(consume(fx->st, "acme", a.id, FP_B, &why, err, sizeof(err)),
	                 -STORE_EREFUSED);
	store_close(fx->st);
	fx->st = open_store(fx->dir);
	assert_int_equal(consume(fx->st, "acme", a.id, FP_A, &why, err, sizeof(err)), 0);
	store_close(fx->st);
	fx->st = open_store(fx->dir);
	assert_int_equal(consume(fx->st, "acme", a.id, FP_A, &why, err, sizeof(err)),
	                 -STORE_EREFUSED);
	assert_int_equal(why, STORE_REFUSE_USED);
	assert_int_equal(store_approval_history(fx->st, a.id, collect_event, &c, err, sizeof(err)),
	                 0);
	assert_int_equal(c.n, 5);
	assert_string_equal(c.lines[0], "created||||op-ask");
	assert_string_equal(c.lines[1], "approved|alice|admin-socket||");
	assert_string_equal(c.lines[2], "refused|||mismatch|op-run");
	assert_string_equal(c.lines[3], "used||||op-run");
	assert_string_equal(c.lines[4], "refused|||used|op-run");
}

static void test_newer_schema_refused(void **state)
{
	struct fixture *fx = *state;
	struct store *st = NULL;
	char err[512] = "";

	store_close(fx->st);
	fx->st = NULL;
	assert_int_equal(store_fixture_exec("UPDATE store_schema SET version = version + 1000"), 0);
	assert_int_equal(store_open(fx->dir, &st, err, sizeof(err)), -STORE_EIO);
	assert_null(st);
	assert_non_null(strstr(err, "newer than this glassbox knows"));
	assert_non_null(strstr(err, "run the newer glassbox"));
	assert_int_equal(store_fixture_exec("UPDATE store_schema SET version = version - 1000"), 0);
	fx->st = open_store(fx->dir);
}

/* ---- the hook ------------------------------------------------------------------------- */

static void hook(void *user, const struct store_approval_event *ev)
{
	struct collected *c = user;

	if (c->n < 32)
		snprintf(c->lines[c->n++], sizeof(c->lines[0]), "%s|%s|%s|%s", ev->event, ev->by,
		         ev->approval ? store_approval_state_name(ev->approval->state) : "-",
		         ev->approval ? ev->approval->rule : "-");
}

static void test_hook(void **state)
{
	struct fixture *fx = *state;
	struct collected c = { 0 };
	struct store_approval a;
	enum store_refusal why;
	char err[512];

	store_set_approval_hook(fx->st, hook, &c);
	a = create(fx->st, FP_A, 1000);
	assert_int_equal(decide(fx->st, a.id, 1, err, sizeof(err)), 0);
	assert_int_equal(consume(fx->st, "acme", a.id, FP_B, &why, err, sizeof(err)),
	                 -STORE_EREFUSED);
	assert_int_equal(consume(fx->st, "acme", a.id, FP_A, &why, err, sizeof(err)), 0);
	a = create(fx->st, FP_A, 1000);
	advance_ms(2000);
	assert_int_equal(store_approval_expire(fx->st, NULL, err, sizeof(err)), 0);
	store_set_approval_hook(fx->st, NULL, NULL);
	assert_int_equal(c.n, 6);
	assert_string_equal(c.lines[0], "created||pending|destructive-click");
	assert_string_equal(c.lines[1], "approved|alice|approved|destructive-click");
	assert_string_equal(c.lines[2], "refused||approved|destructive-click");
	assert_string_equal(c.lines[3], "used||used|destructive-click");
	assert_string_equal(c.lines[4], "created||pending|destructive-click");
	assert_string_equal(c.lines[5], "expired||expired|destructive-click");
}

/* ---- waiting ------------------------------------------------------------------------- */

struct decider_arg {
	struct store *st;
	char id[STORE_ID_MAX + 1];
};

static void *decide_later(void *arg)
{
	struct decider_arg *d = arg;
	char err[512];

	usleep(50000);
	decide(d->st, d->id, 1, err, sizeof(err));
	return NULL;
}

static void test_wait_for_decision(void **state)
{
	struct fixture *fx = *state;
	struct store_approval a = create(fx->st, FP_A, 0);
	struct store_approval out;
	struct decider_arg d;
	pthread_t t;
	char err[512];

	/* nobody decides: returns still pending */
	assert_int_equal(store_approval_wait(fx->st, "acme", a.id, 50, &out, err, sizeof(err)), 0);
	assert_int_equal(out.state, STORE_APPROVAL_PENDING);
	/* decided by another thread while waiting */
	d.st = fx->st;
	snprintf(d.id, sizeof(d.id), "%s", a.id);
	assert_int_equal(pthread_create(&t, NULL, decide_later, &d), 0);
	assert_int_equal(store_approval_wait(fx->st, "acme", a.id, 10000, &out, err, sizeof(err)),
	                 0);
	pthread_join(t, NULL);
	assert_int_equal(out.state, STORE_APPROVAL_APPROVED);
	assert_string_equal(out.decided_by, "alice");
}

/* ---- racing ------------------------------------------------------------------------- */

#define RACERS 8

struct racer {
	struct store *st;
	const char *id;
	pthread_barrier_t *start;
	int rc;
	enum store_refusal why;
};

static void *race(void *arg)
{
	struct racer *r = arg;
	char err[512];

	pthread_barrier_wait(r->start);
	r->rc = consume(r->st, "acme", r->id, FP_A, &r->why, err, sizeof(err));
	return NULL;
}

/* Runs RACERS threads consuming id; each on its own handle when own. */
static void run_race(struct fixture *fx, int own)
{
	struct store_approval a = create(fx->st, FP_A, 0);
	struct racer racers[RACERS];
	pthread_t threads[RACERS];
	pthread_barrier_t start;
	int winners = 0;
	char err[512];
	int i;

	assert_int_equal(decide(fx->st, a.id, 1, err, sizeof(err)), 0);
	pthread_barrier_init(&start, NULL, RACERS);
	for (i = 0; i < RACERS; i++) {
		racers[i].st = own ? open_store(fx->dir) : fx->st;
		racers[i].id = a.id;
		racers[i].start = &start;
		assert_int_equal(pthread_create(&threads[i], NULL, race, &racers[i]), 0);
	}
	for (i = 0; i < RACERS; i++) {
		pthread_join(threads[i], NULL);
		if (racers[i].rc == 0) {
			winners++;
		} else {
			assert_int_equal(racers[i].rc, -STORE_EREFUSED);
			assert_int_equal(racers[i].why, STORE_REFUSE_USED);
		}
		if (own)
			store_close(racers[i].st);
	}
	pthread_barrier_destroy(&start);
	assert_int_equal(winners, 1);
}

static void test_concurrent_consume_one_winner(void **state)
{
	struct fixture *fx = *state;
	int round;

	for (round = 0; round < 10; round++) {
		run_race(fx, 0); /* one shared handle */
		run_race(fx, 1); /* a connection each: SQLite decides */
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_create_and_read, setup, teardown),
		cmocka_unit_test_setup_teardown(test_bad_requests, setup, teardown),
		cmocka_unit_test_setup_teardown(test_approve_then_use_once, setup, teardown),
		cmocka_unit_test_setup_teardown(test_approved_for_a_used_for_b, setup, teardown),
		cmocka_unit_test_setup_teardown(test_pending_cannot_be_used, setup, teardown),
		cmocka_unit_test_setup_teardown(test_deny, setup, teardown),
		cmocka_unit_test_setup_teardown(test_expiry, setup, teardown),
		cmocka_unit_test_setup_teardown(test_list, setup, teardown),
		cmocka_unit_test_setup_teardown(test_survives_reopen_with_history, setup, teardown),
		cmocka_unit_test_setup_teardown(test_newer_schema_refused, setup, teardown),
		cmocka_unit_test_setup_teardown(test_hook, setup, teardown),
		cmocka_unit_test_setup_teardown(test_wait_for_decision, setup, teardown),
		cmocka_unit_test_setup_teardown(test_concurrent_consume_one_winner, setup,
		                                teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

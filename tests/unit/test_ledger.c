/*
 * test_ledger.c - the operation ledger (store/store.h): operation ids as
 * idempotency keys, waiting for a call in flight, and what a restart
 * makes of operations a dead process left behind.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "store/sql.h"
#include "store/store.h"
#include "store_fixture.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

struct fixture {
	char dir[64];
	struct store *st;
	char hash[STORE_HASH_MAX + 1];
};

static struct store *open_store(const char *dir)
{
	struct store *st = NULL;
	char err[512] = "";

	if (store_open(dir, &st, err, sizeof(err)) != 0)
		fail_msg("store_open: %s", err);
	return st;
}

static int setup(void **state)
{
	struct fixture *fx = calloc(1, sizeof(*fx));
	json_t *args = json_pack("{s:s, s:s}", "target", "e12", "element", "Delete button");

	if (store_fixture_tmpdir("ledger", fx->dir, sizeof(fx->dir)) < 0)
		return -1;
	fx->st = open_store(fx->dir);
	if (store_args_hash(args, fx->hash) != 0)
		return -1;
	json_decref(args);
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

static struct store_op_request request(struct fixture *fx, const char *id)
{
	struct store_op_request r = { .tenant = "acme",
		                      .operation_id = id,
		                      .session = "s-1",
		                      .tool = "browser_click",
		                      .args_hash = fx->hash };

	return r;
}

/* Begins id and expects outcome; returns the op (store_op_clear it). */
static struct store_op begin(struct store *st, const struct store_op_request *r, int wait_ms,
                             enum store_op_outcome expected)
{
	enum store_op_outcome got = STORE_OP_IN_FLIGHT;
	struct store_op op;
	char err[512] = "";

	if (store_op_begin(st, r, wait_ms, &got, &op, err, sizeof(err)) != 0)
		fail_msg("store_op_begin: %s", err);
	if (got != expected)
		fail_msg("store_op_begin %s: outcome %d, expected %d (state %s)", r->operation_id,
		         got, expected, store_op_state_name(op.state));
	return op;
}

static void finish(struct store *st, const char *id, enum store_op_state state,
                   const json_t *result)
{
	char err[512] = "";

	if (store_op_finish(st, "acme", id, state, result, err, sizeof(err)) != 0)
		fail_msg("store_op_finish: %s", err);
}

static void mark_running(struct store *st, const char *id)
{
	char err[512] = "";

	if (store_op_mark_running(st, "acme", id, err, sizeof(err)) != 0)
		fail_msg("store_op_mark_running: %s", err);
}

/* ---- tests ------------------------------------------------------------------------- */

static void test_args_hash(void **state)
{
	char a[STORE_HASH_MAX + 1];
	char b[STORE_HASH_MAX + 1];
	json_t *x = json_loads("{\"target\": \"e1\", \"text\": \"hi\"}", 0, NULL);
	json_t *y =
	    json_loads("{\"text\": \"hi\", \"operation_id\": \"k\", \"approval\": \"apr-1\","
	               " \"target\": \"e1\"}",
	               0, NULL);
	json_t *z = json_loads("{\"text\": \"hj\", \"target\": \"e1\"}", 0, NULL);

	(void)state;
	assert_int_equal(store_args_hash(x, a), 0);
	assert_int_equal(strlen(a), 64);
	assert_int_equal(store_args_hash(y, b), 0);
	assert_string_equal(a, b); /* key order, operation_id and approval do not count */
	assert_int_equal(json_object_size(y), 4); /* the caller's object is untouched */
	assert_int_equal(store_args_hash(z, b), 0);
	assert_string_not_equal(a, b);
	assert_int_equal(store_args_hash(NULL, b), 0);
	json_decref(x);
	json_decref(y);
	json_decref(z);
}

static void test_replay_finished_returns_recorded_result(void **state)
{
	struct fixture *fx = *state;
	struct store_op_request r = request(fx, "client-key-1");
	json_t *result = json_pack("{s:[{s:s, s:s}], s:{s:b, s:s}}", "content", "type", "text",
	                           "text", "Clicked button \"Delete\"", "structuredContent", "ok",
	                           1, "url", "http://shop.test/orders");
	struct store_op op;

	op = begin(fx->st, &r, 0, STORE_OP_NEW);
	assert_string_equal(op.id, "client-key-1");
	assert_int_equal(op.state, STORE_OP_PENDING);
	store_op_clear(&op);
	mark_running(fx->st, "client-key-1");
	finish(fx->st, "client-key-1", STORE_OP_DONE, result);

	op = begin(fx->st, &r, 0, STORE_OP_FINISHED);
	assert_int_equal(op.state, STORE_OP_DONE);
	assert_int_equal(op.acted, 1);
	assert_int_equal(op.attempts, 1);
	assert_non_null(op.result);
	assert_true(json_equal(op.result, result));
	assert_true(op.finished_ms >= op.started_ms && op.started_ms >= op.created_ms);
	store_op_clear(&op);

	/* and after a restart */
	store_close(fx->st);
	fx->st = open_store(fx->dir);
	op = begin(fx->st, &r, 0, STORE_OP_FINISHED);
	assert_true(json_equal(op.result, result));
	store_op_clear(&op);
	json_decref(result);
}

static void test_generated_ids(void **state)
{
	struct fixture *fx = *state;
	struct store_op_request r = request(fx, NULL);
	struct store_op a = begin(fx->st, &r, 0, STORE_OP_NEW);
	struct store_op b = begin(fx->st, &r, 0, STORE_OP_NEW);

	assert_int_equal(strncmp(a.id, "op-", 3), 0);
	assert_int_equal(strlen(a.id), 27);
	assert_string_not_equal(a.id, b.id);
	store_op_clear(&a);
	store_op_clear(&b);
}

/* A new operation, as store_op_begin returns it, is the row it recorded. */
static void test_new_op_is_its_row(void **state)
{
	struct fixture *fx = *state;
	const char *keys[] = { NULL, "k-new" };
	size_t i;

	for (i = 0; i < 2; i++) {
		struct store_op_request r = request(fx, keys[i]);
		struct store_op a, b;
		char err[512] = "";

		if (!keys[i])
			r.session = NULL; /* a call outside a session */
		a = begin(fx->st, &r, 0, STORE_OP_NEW);
		if (store_op_get(fx->st, "acme", a.id, &b, err, sizeof(err)) != 0)
			fail_msg("store_op_get: %s", err);
		assert_string_equal(a.id, b.id);
		assert_string_equal(a.tenant, b.tenant);
		assert_string_equal(a.session, b.session);
		assert_string_equal(a.tool, b.tool);
		assert_string_equal(a.args_hash, b.args_hash);
		assert_int_equal(a.state, b.state);
		assert_int_equal(a.acted, b.acted);
		assert_int_equal(a.attempts, b.attempts);
		assert_int_equal(a.created_ms, b.created_ms);
		assert_int_equal(a.started_ms, b.started_ms);
		assert_int_equal(a.finished_ms, b.finished_ms);
		assert_null(a.result);
		assert_null(b.result);
		assert_string_equal(a.note, b.note);
		store_op_clear(&a);
		store_op_clear(&b);
	}
}

/* An operation under an id made for one call is written once it acts
 * (running, then finished) or once it ends without acting. */
static void test_record_new(void **state)
{
	struct fixture *fx = *state;
	struct store_op_request r = request(fx, "op-made-1");
	json_t *result = json_pack("{s:b}", "ok", 1);
	struct store_op op;
	char err[512] = "";

	assert_int_equal(store_op_record_new(fx->st, &r, STORE_OP_RUNNING, NULL, err, sizeof(err)),
	                 0);
	assert_int_equal(store_op_get(fx->st, "acme", "op-made-1", &op, err, sizeof(err)), 0);
	assert_int_equal(op.state, STORE_OP_RUNNING);
	assert_int_equal(op.acted, 1);
	assert_int_equal(op.attempts, 1);
	assert_true(op.started_ms > 0);
	assert_int_equal(op.finished_ms, 0);
	assert_string_equal(op.tool, "browser_click");
	store_op_clear(&op);
	/* the same id again is a conflict, never a second row */
	assert_int_equal(store_op_record_new(fx->st, &r, STORE_OP_RUNNING, NULL, err, sizeof(err)),
	                 -STORE_ECONFLICT);
	finish(fx->st, "op-made-1", STORE_OP_DONE, result);
	op = begin(fx->st, &r, 0, STORE_OP_FINISHED);
	assert_non_null(op.result);
	assert_true(json_equal(op.result, result));
	store_op_clear(&op);

	/* refused before it acted: recorded failed with its result, not acted */
	r.operation_id = "op-made-2";
	assert_int_equal(store_op_record_new(fx->st, &r, STORE_OP_FAILED, result, err, sizeof(err)),
	                 0);
	assert_int_equal(store_op_get(fx->st, "acme", "op-made-2", &op, err, sizeof(err)), 0);
	assert_int_equal(op.state, STORE_OP_FAILED);
	assert_int_equal(op.acted, 0);
	assert_int_equal(op.started_ms, 0);
	assert_true(op.finished_ms > 0);
	assert_true(json_equal(op.result, result));
	store_op_clear(&op);

	/* pending or unknown is not a state a new row starts in */
	r.operation_id = "op-made-3";
	assert_int_equal(store_op_record_new(fx->st, &r, STORE_OP_PENDING, NULL, err, sizeof(err)),
	                 -STORE_EINVAL);
	assert_int_equal(store_op_record_new(fx->st, &r, STORE_OP_UNKNOWN, NULL, err, sizeof(err)),
	                 -STORE_EINVAL);
	assert_int_equal(store_op_get(fx->st, "acme", "op-made-3", &op, err, sizeof(err)),
	                 -STORE_ENOTFOUND);
	json_decref(result);
}

static void test_same_id_other_call_conflicts(void **state)
{
	struct fixture *fx = *state;
	struct store_op_request r = request(fx, "k2");
	struct store_op_request other = r;
	enum store_op_outcome got;
	char hash[STORE_HASH_MAX + 1];
	json_t *args = json_pack("{s:s}", "target", "e13");
	struct store_op op = begin(fx->st, &r, 0, STORE_OP_NEW);
	char err[512];

	store_op_clear(&op);
	finish(fx->st, "k2", STORE_OP_DONE, NULL);
	assert_int_equal(store_args_hash(args, hash), 0);
	other.args_hash = hash;
	assert_int_equal(store_op_begin(fx->st, &other, 0, &got, &op, err, sizeof(err)),
	                 -STORE_ECONFLICT);
	assert_non_null(strstr(err, "already used for a different call"));
	other = r;
	other.tool = "browser_type";
	assert_int_equal(store_op_begin(fx->st, &other, 0, &got, &op, err, sizeof(err)),
	                 -STORE_ECONFLICT);
	/* other tenants have their own ids */
	other = r;
	other.tenant = "globex";
	op = begin(fx->st, &other, 0, STORE_OP_NEW);
	store_op_clear(&op);
	json_decref(args);
	/* ids are checked */
	other = r;
	other.operation_id = "bad id with spaces";
	assert_int_equal(store_op_begin(fx->st, &other, 0, &got, &op, err, sizeof(err)),
	                 -STORE_EINVAL);
}

static void test_failed_before_acting_may_run_again(void **state)
{
	struct fixture *fx = *state;
	struct store_op_request r = request(fx, "k3");
	json_t *needs_approval = json_pack("{s:s}", "status", "approval_required");
	json_t *failed = json_pack("{s:s}", "error", "timeout");
	struct store_op op;

	/* needed an approval: never acted */
	op = begin(fx->st, &r, 0, STORE_OP_NEW);
	store_op_clear(&op);
	finish(fx->st, "k3", STORE_OP_FAILED, needs_approval);
	/* the same call again (now with "approval" set): runs */
	op = begin(fx->st, &r, 0, STORE_OP_NEW);
	assert_int_equal(op.attempts, 2);
	assert_int_equal(op.state, STORE_OP_PENDING);
	assert_null(op.result);
	store_op_clear(&op);
	mark_running(fx->st, "k3");
	finish(fx->st, "k3", STORE_OP_FAILED, failed);
	/* failed after acting: the recorded failure, not a re-run */
	op = begin(fx->st, &r, 0, STORE_OP_FINISHED);
	assert_int_equal(op.state, STORE_OP_FAILED);
	assert_true(json_equal(op.result, failed));
	store_op_clear(&op);
	json_decref(needs_approval);
	json_decref(failed);
}

static void test_state_rules(void **state)
{
	struct fixture *fx = *state;
	struct store_op_request r = request(fx, "k4");
	struct store_op op = begin(fx->st, &r, 0, STORE_OP_NEW);
	char err[512];

	store_op_clear(&op);
	assert_int_equal(
	    store_op_finish(fx->st, "acme", "k4", STORE_OP_RUNNING, NULL, err, sizeof(err)),
	    -STORE_EINVAL);
	finish(fx->st, "k4", STORE_OP_DONE, NULL);
	assert_int_equal(
	    store_op_finish(fx->st, "acme", "k4", STORE_OP_DONE, NULL, err, sizeof(err)),
	    -STORE_ESTATE);
	assert_int_equal(store_op_mark_running(fx->st, "acme", "k4", err, sizeof(err)),
	                 -STORE_ESTATE);
	assert_int_equal(store_op_mark_running(fx->st, "acme", "nope", err, sizeof(err)),
	                 -STORE_ENOTFOUND);
	assert_int_equal(store_op_get(fx->st, "globex", "k4", &op, err, sizeof(err)),
	                 -STORE_ENOTFOUND);
}

struct runner {
	struct fixture *fx;
	int finished; /* set just before the result is recorded */
};

static void *finish_later(void *arg)
{
	struct runner *run = arg;
	json_t *result = json_pack("{s:s}", "text", "done by the first caller");

	usleep(150000);
	__atomic_store_n(&run->finished, 1, __ATOMIC_SEQ_CST);
	finish(run->fx->st, "k5", STORE_OP_DONE, result);
	json_decref(result);
	return NULL;
}

static void test_running_waits(void **state)
{
	struct fixture *fx = *state;
	struct store_op_request r = request(fx, "k5");
	struct runner run = { fx, 0 };
	struct store_op op = begin(fx->st, &r, 0, STORE_OP_NEW);
	pthread_t t;

	store_op_clear(&op);
	mark_running(fx->st, "k5");
	/* a repeat that will not wait long enough is told it is in flight */
	op = begin(fx->st, &r, 30, STORE_OP_IN_FLIGHT);
	assert_int_equal(op.state, STORE_OP_RUNNING);
	store_op_clear(&op);
	/* a repeat that waits gets the first caller's result, and does not run */
	assert_int_equal(pthread_create(&t, NULL, finish_later, &run), 0);
	op = begin(fx->st, &r, 10000, STORE_OP_FINISHED);
	assert_int_equal(__atomic_load_n(&run.finished, __ATOMIC_SEQ_CST), 1);
	pthread_join(t, NULL);
	assert_string_equal(json_string_value(json_object_get(op.result, "text")),
	                    "done by the first caller");
	store_op_clear(&op);
}

/* In a child process: begins "crash-running" (marked running) and
 * "crash-pending", writes its handle's instance to fd, then dies
 * without closing anything. */
static void crash_child(const char *dir, const char *hash, int fd)
{
	struct store_op_request r = {
		.tenant = "acme", .session = "s-1", .tool = "browser_click", .args_hash = hash
	};
	enum store_op_outcome got;
	struct store_op op;
	struct store *st = NULL;
	char err[512];

	if (store_open(dir, &st, err, sizeof(err)) != 0)
		_exit(2);
	r.operation_id = "crash-running";
	if (store_op_begin(st, &r, 0, &got, &op, err, sizeof(err)) != 0 || got != STORE_OP_NEW ||
	    store_op_mark_running(st, "acme", "crash-running", err, sizeof(err)) != 0)
		_exit(3);
	r.operation_id = "crash-pending";
	if (store_op_begin(st, &r, 0, &got, &op, err, sizeof(err)) != 0 || got != STORE_OP_NEW)
		_exit(4);
	if (write(fd, store_instance(st), 32) != 32)
		_exit(5);
	_exit(0);
}

static void run_crash_child(struct fixture *fx)
{
	char instance[33] = "";
	int fds[2];
	pid_t pid;
	int status = 0;

	assert_int_equal(pipe(fds), 0);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0)
		crash_child(fx->dir, fx->hash, fds[1]);
	close(fds[1]);
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 0);
	assert_int_equal(read(fds[0], instance, 32), 32);
	close(fds[0]);
	/* gone for every handle before the test goes on */
	assert_int_equal(store_fixture_wait_gone(fx->st, instance), 0);
}

static void test_restart_turns_running_into_unknown(void **state)
{
	struct fixture *fx = *state;
	struct store_op_request r = request(fx, "mine-running");
	struct store *again;
	struct store_op op;
	size_t unknown = 9;
	size_t abandoned = 9;

	/* an operation of a live handle (this process) is left alone */
	op = begin(fx->st, &r, 0, STORE_OP_NEW);
	store_op_clear(&op);
	mark_running(fx->st, "mine-running");

	run_crash_child(fx);
	again = open_store(fx->dir);
	store_recovered(again, &unknown, &abandoned);
	assert_int_equal(unknown, 1);
	assert_int_equal(abandoned, 1);

	r.operation_id = "crash-running";
	op = begin(again, &r, 0, STORE_OP_FINISHED);
	assert_int_equal(op.state, STORE_OP_UNKNOWN);
	assert_int_equal(op.acted, 1);
	assert_null(op.result);
	assert_non_null(strstr(op.note, "whether it took effect is unknown"));
	store_op_clear(&op);

	r.operation_id = "crash-pending";
	op = begin(again, &r, 0, STORE_OP_NEW); /* it did nothing: may run */
	assert_int_equal(op.attempts, 2);
	store_op_clear(&op);

	r.operation_id = "mine-running";
	op = begin(again, &r, 0, STORE_OP_IN_FLIGHT);
	assert_int_equal(op.state, STORE_OP_RUNNING);
	store_op_clear(&op);
	store_close(again);

	/* closing the handle ends its claim: the next open recovers it */
	store_close(fx->st);
	fx->st = open_store(fx->dir);
	store_recovered(fx->st, &unknown, NULL);
	assert_int_equal(unknown, 1);
	op = begin(fx->st, &r, 0, STORE_OP_FINISHED);
	assert_int_equal(op.state, STORE_OP_UNKNOWN);
	store_op_clear(&op);
}

static void test_waiter_notices_dead_owner(void **state)
{
	struct fixture *fx = *state;
	struct store_op_request r = request(fx, "crash-running");
	struct store_op op;

	/* fx->st was opened before the child ran and died */
	run_crash_child(fx);
	op = begin(fx->st, &r, 5000, STORE_OP_FINISHED);
	assert_int_equal(op.state, STORE_OP_UNKNOWN);
	store_op_clear(&op);
}

static void test_result_ceiling(void **state)
{
	struct fixture *fx = *state;
	struct store_op_request r = request(fx, "big");
	size_t n = STORE_RESULT_MAX_BYTES + 16;
	char *text = malloc(n + 1);
	json_t *result;
	struct store_op op = begin(fx->st, &r, 0, STORE_OP_NEW);

	store_op_clear(&op);
	memset(text, 'x', n);
	text[n] = '\0';
	result = json_pack("{s:s}", "screenshot", text);
	finish(fx->st, "big", STORE_OP_DONE, result);
	op = begin(fx->st, &r, 0, STORE_OP_FINISHED);
	assert_null(op.result);
	assert_non_null(strstr(op.note, "was not kept"));
	store_op_clear(&op);
	json_decref(result);
	free(text);
}

static void test_purge(void **state)
{
	struct fixture *fx = *state;
	struct store_op_request r = request(fx, "old");
	struct store_op op = begin(fx->st, &r, 0, STORE_OP_NEW);
	size_t removed = 0;
	char err[512];

	store_op_clear(&op);
	r.operation_id = "live";
	op = begin(fx->st, &r, 0, STORE_OP_NEW);
	store_op_clear(&op);
	finish(fx->st, "old", STORE_OP_DONE, NULL);
	assert_int_equal(store_op_purge(fx->st, INT64_MAX, &removed, err, sizeof(err)), 0);
	assert_int_equal(removed, 1); /* "live" is not finished */
	assert_int_equal(store_op_get(fx->st, "acme", "old", &op, err, sizeof(err)),
	                 -STORE_ENOTFOUND);
	assert_int_equal(store_op_get(fx->st, "acme", "live", &op, err, sizeof(err)), 0);
	store_op_clear(&op);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_args_hash),
		cmocka_unit_test_setup_teardown(test_replay_finished_returns_recorded_result, setup,
		                                teardown),
		cmocka_unit_test_setup_teardown(test_generated_ids, setup, teardown),
		cmocka_unit_test_setup_teardown(test_new_op_is_its_row, setup, teardown),
		cmocka_unit_test_setup_teardown(test_record_new, setup, teardown),
		cmocka_unit_test_setup_teardown(test_same_id_other_call_conflicts, setup, teardown),
		cmocka_unit_test_setup_teardown(test_failed_before_acting_may_run_again, setup,
		                                teardown),
		cmocka_unit_test_setup_teardown(test_state_rules, setup, teardown),
		cmocka_unit_test_setup_teardown(test_running_waits, setup, teardown),
		cmocka_unit_test_setup_teardown(test_restart_turns_running_into_unknown, setup,
		                                teardown),
		cmocka_unit_test_setup_teardown(test_waiter_notices_dead_owner, setup, teardown),
		cmocka_unit_test_setup_teardown(test_result_ceiling, setup, teardown),
		cmocka_unit_test_setup_teardown(test_purge, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

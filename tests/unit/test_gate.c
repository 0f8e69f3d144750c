/*
 * test_gate.c - the pipeline's gate step (policy/gate.h): classify, ask
 * for an approval, and run only the very action that was approved, once.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "store_fixture.h"
#include "policy/gate.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

struct fixture {
	char dir[64];
	struct store *st;
	struct policy_risk *rules;
};

static int setup(void **state)
{
	struct fixture *fx = calloc(1, sizeof(*fx));
	json_t *cfg = json_loads("{\"approval_ttl_seconds\": 120, \"rules\": [{\"name\": "
	                         "\"no-uploads\", \"decision\": \"forbid\", \"when\": {\"kind\": "
	                         "\"upload\"}}]}",
	                         0, NULL);
	char err[512] = "";

	if (store_fixture_tmpdir("gate", fx->dir, sizeof(fx->dir)) < 0)
		return -1;
	if (store_open(fx->dir, &fx->st, err, sizeof(err)) != 0)
		fail_msg("store_open: %s", err);
	if (policy_risk_parse(cfg, &fx->rules, err, sizeof(err)) != 0)
		fail_msg("policy_risk_parse: %s", err);
	json_decref(cfg);
	*state = fx;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *fx = *state;

	policy_risk_free(fx->rules);
	store_close(fx->st);
	store_fixture_tmpdir_remove(fx->dir);
	free(fx);
	return 0;
}

/* The "Delete all orders" button as the pipeline re-reads it. */
static struct policy_action_facts delete_button(void)
{
	struct policy_action_facts f;

	memset(&f, 0, sizeof(f));
	f.kind = POLICY_ACT_CLICK;
	f.session_id = "s-1";
	f.page_url = "http://shop.test/orders";
	f.frame_id = "F1";
	f.backend_node_id = 42;
	f.node_identity = "node-42";
	f.role = "button";
	f.name = "Delete all orders";
	f.text = "Delete all orders";
	f.tag = "button";
	f.submits_form = 1;
	f.form_method = "POST";
	f.form_action = "http://shop.test/orders/delete";
	return f;
}

static struct policy_gate_result gate(struct fixture *fx, const struct policy_action_facts *f,
                                      const char *op, const char *approval)
{
	struct policy_gate_request req = { .tenant = "acme",
		                           .operation_id = op,
		                           .tool = "browser_click",
		                           .approval_id = approval };
	struct policy_gate_result res;
	char err[512] = "";

	if (policy_gate_check(fx->st, fx->rules, f, &req, &res, err, sizeof(err)) != 0)
		fail_msg("policy_gate_check: %s", err);
	return res;
}

static void approve(struct fixture *fx, const char *id)
{
	struct store_decider who = { .by = "alice", .channel = "admin-socket", .uid = 0 };
	char err[512] = "";

	if (store_approval_decide(fx->st, NULL, id, 1, &who, NULL, err, sizeof(err)) != 0)
		fail_msg("store_approval_decide: %s", err);
}

static int count_cb(const struct store_approval *a, void *user)
{
	(void)a;
	(*(int *)user)++;
	return 0;
}

static int count_approvals(struct fixture *fx)
{
	struct store_approval_query q = { 0 };
	char err[256];
	int n = 0;

	assert_int_equal(store_approval_list(fx->st, &q, count_cb, &n, err, sizeof(err)), 0);
	return n;
}

static void test_allowed_proceeds_without_asking(void **state)
{
	struct fixture *fx = *state;
	struct policy_action_facts f = delete_button();
	struct policy_gate_result res;
	json_t *j;

	f.name = f.text = "Save";
	f.form_action = "http://shop.test/orders/save";
	res = gate(fx, &f, "op-1", NULL);
	assert_int_equal(res.outcome, POLICY_GATE_PROCEED);
	assert_int_equal(res.approval_used, 0);
	assert_int_equal(strlen(res.fingerprint), 64);
	assert_int_equal(count_approvals(fx), 0);
	j = policy_gate_result_json(&res);
	assert_string_equal(json_string_value(json_object_get(j, "status")), "allowed");
	json_decref(j);
}

static void test_approval_flow(void **state)
{
	struct fixture *fx = *state;
	struct policy_action_facts f = delete_button();
	struct policy_gate_result res;
	char id[STORE_ID_MAX + 1];
	json_t *j;

	/* 1. not run: an approval is asked for */
	res = gate(fx, &f, "op-1", NULL);
	assert_int_equal(res.outcome, POLICY_GATE_APPROVAL_REQUIRED);
	assert_string_equal(res.code, "approval_required");
	snprintf(id, sizeof(id), "%s", res.approval.id);
	assert_string_equal(res.approval.fingerprint, res.fingerprint);
	assert_int_equal(res.approval.expires_ms - res.approval.created_ms, 120000);
	assert_non_null(strstr(res.message, id));
	assert_non_null(strstr(res.message, "\"approval\""));
	j = policy_gate_result_json(&res);
	assert_string_equal(json_string_value(json_object_get(j, "status")), "approval_required");
	assert_string_equal(json_string_value(json_object_get(j, "approval_id")), id);
	assert_string_equal(
	    json_string_value(json_object_get(j, "summary")),
	    "click button \"Delete all orders\" on http://shop.test/orders, submits "
	    "POST /orders/delete");
	assert_string_equal(json_string_value(json_object_get(j, "fingerprint")), res.fingerprint);
	assert_non_null(json_string_value(json_object_get(j, "expires_at")));
	assert_string_equal(json_string_value(json_object_get(j, "rule")), "destructive-click");
	json_decref(j);

	/* 2. the agent repeats too early */
	res = gate(fx, &f, "op-1", id);
	assert_int_equal(res.outcome, POLICY_GATE_REFUSED);
	assert_string_equal(res.code, "approval_refused");
	assert_int_equal(res.refusal, STORE_REFUSE_PENDING);

	/* 3. a person approves; the same action runs, once */
	approve(fx, id);
	res = gate(fx, &f, "op-1", id);
	assert_int_equal(res.outcome, POLICY_GATE_PROCEED);
	assert_int_equal(res.approval_used, 1);
	assert_string_equal(res.approval.decided_by, "alice");
	j = policy_gate_result_json(&res);
	assert_string_equal(json_string_value(json_object_get(j, "status")), "approved");
	assert_string_equal(json_string_value(json_object_get(j, "decided_by")), "alice");
	json_decref(j);
	res = gate(fx, &f, "op-2", id);
	assert_int_equal(res.outcome, POLICY_GATE_REFUSED);
	assert_int_equal(res.refusal, STORE_REFUSE_USED);
}

static void test_approval_is_for_one_action_only(void **state)
{
	struct fixture *fx = *state;
	struct policy_action_facts f = delete_button();
	struct policy_action_facts other;
	struct policy_gate_result res;
	char id[STORE_ID_MAX + 1];
	json_t *j;

	res = gate(fx, &f, "op-1", NULL);
	snprintf(id, sizeof(id), "%s", res.approval.id);
	approve(fx, id);
	/* another button, the same words: refused and not spent */
	other = f;
	other.backend_node_id = 77;
	other.node_identity = "node-77";
	res = gate(fx, &other, "op-2", id);
	assert_int_equal(res.outcome, POLICY_GATE_REFUSED);
	assert_int_equal(res.refusal, STORE_REFUSE_MISMATCH);
	assert_non_null(strstr(res.message, "This call would: click button"));
	j = policy_gate_result_json(&res);
	assert_string_equal(json_string_value(json_object_get(j, "reason")), "mismatch");
	json_decref(j);
	/* the page moved on */
	other = f;
	other.page_url = "http://shop.test/orders?page=2";
	res = gate(fx, &other, "op-3", id);
	assert_int_equal(res.refusal, STORE_REFUSE_MISMATCH);
	/* another session */
	other = f;
	other.session_id = "s-2";
	res = gate(fx, &other, "op-4", id);
	assert_int_equal(res.refusal, STORE_REFUSE_MISMATCH);
	/* an id the tenant does not have */
	res = gate(fx, &f, "op-5", "apr-doesnotexist");
	assert_int_equal(res.refusal, STORE_REFUSE_NOT_FOUND);
	/* the approved action still goes through */
	res = gate(fx, &f, "op-6", id);
	assert_int_equal(res.outcome, POLICY_GATE_PROCEED);
}

static void test_typed_value_is_bound(void **state)
{
	struct fixture *fx = *state;
	struct policy_action_facts f;
	struct policy_gate_result res;
	char id[STORE_ID_MAX + 1];

	memset(&f, 0, sizeof(f));
	f.kind = POLICY_ACT_TYPE;
	f.session_id = "s-1";
	f.page_url = "https://shop.test/checkout";
	f.frame_id = "F1";
	f.backend_node_id = 9;
	f.role = "textbox";
	f.name = "Amount";
	f.autocomplete = "transaction-amount";
	f.value = (const unsigned char *)"10.00";
	f.value_len = 5;
	res = gate(fx, &f, "op-1", NULL);
	assert_int_equal(res.outcome, POLICY_GATE_APPROVAL_REQUIRED);
	assert_null(strstr(res.approval.summary, "10.00"));
	snprintf(id, sizeof(id), "%s", res.approval.id);
	approve(fx, id);
	f.value = (const unsigned char *)"9999.00"; /* not what was approved */
	f.value_len = 7;
	res = gate(fx, &f, "op-2", id);
	assert_int_equal(res.refusal, STORE_REFUSE_MISMATCH);
	f.value = (const unsigned char *)"10.00";
	f.value_len = 5;
	res = gate(fx, &f, "op-3", id);
	assert_int_equal(res.outcome, POLICY_GATE_PROCEED);
}

static void test_forbidden_cannot_be_approved(void **state)
{
	struct fixture *fx = *state;
	struct policy_action_facts f = delete_button();
	struct policy_gate_result res;

	f.kind = POLICY_ACT_UPLOAD;
	f.file_count = 1;
	res = gate(fx, &f, "op-1", NULL);
	assert_int_equal(res.outcome, POLICY_GATE_REFUSED);
	assert_string_equal(res.code, "forbidden");
	assert_string_equal(res.decision.rule, "no-uploads");
	assert_int_equal(count_approvals(fx), 0);
	res = gate(fx, &f, "op-1", "apr-whatever");
	assert_string_equal(res.code, "forbidden");
}

static void test_allowed_leaves_an_approval_unspent(void **state)
{
	struct fixture *fx = *state;
	struct policy_action_facts f = delete_button();
	struct policy_action_facts save = delete_button();
	struct policy_gate_result res;
	char id[STORE_ID_MAX + 1];

	res = gate(fx, &f, "op-1", NULL);
	snprintf(id, sizeof(id), "%s", res.approval.id);
	approve(fx, id);
	save.name = save.text = "Save";
	save.form_action = "http://shop.test/orders/save";
	res = gate(fx, &save, "op-2", id);
	assert_int_equal(res.outcome, POLICY_GATE_PROCEED);
	assert_int_equal(res.approval_used, 0);
	res = gate(fx, &f, "op-3", id);
	assert_int_equal(res.outcome, POLICY_GATE_PROCEED);
	assert_int_equal(res.approval_used, 1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_allowed_proceeds_without_asking, setup,
		                                teardown),
		cmocka_unit_test_setup_teardown(test_approval_flow, setup, teardown),
		cmocka_unit_test_setup_teardown(test_approval_is_for_one_action_only, setup,
		                                teardown),
		cmocka_unit_test_setup_teardown(test_typed_value_is_bound, setup, teardown),
		cmocka_unit_test_setup_teardown(test_forbidden_cannot_be_approved, setup, teardown),
		cmocka_unit_test_setup_teardown(test_allowed_leaves_an_approval_unspent, setup,
		                                teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

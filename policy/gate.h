/*
 * gate.h - the gate step of the pipeline (DESIGN.md): classify the action
 * (risk.h), and when it needs a person, either ask for an approval or use
 * the one the call names, bound to the action's fingerprint
 * (fingerprint.h) and kept in the store (store/store.h).
 *
 * What the pipeline does at the gate, after resolving the target and
 * re-reading its facts from the page:
 *
 *   struct policy_action_facts facts = {...};            // risk.h
 *   struct policy_gate_request req = {tenant, operation_id, tool,
 *                                     approval (the call's "approval" arg or NULL)};
 *   struct policy_gate_result res;
 *   rc = policy_gate_check(store, tenant_rules, &facts, &req, &res, err, sizeof(err));
 *   rc < 0                      -> the gate failed: refuse the call with err
 *   POLICY_GATE_PROCEED         -> run the action (res.approval_used: under
 *                                  approval res.approval.id, decided by
 *                                  res.approval.decided_by: put it in the audit record)
 *   POLICY_GATE_APPROVAL_REQUIRED, POLICY_GATE_REFUSED
 *                               -> do not touch the page; return an error result
 *                                  with code res.code, text res.message, and
 *                                  structuredContent member "gate":
 *                                  policy_gate_result_json(&res); finish the
 *                                  operation as failed (it never acted, so the
 *                                  same operation_id may be repeated with
 *                                  "approval" set)
 *
 * Nothing here touches the page or the browser. Thread-safe (the store
 * is; rules are immutable).
 */
#ifndef GB_POLICY_GATE_H
#define GB_POLICY_GATE_H

#include "policy/fingerprint.h"
#include "policy/risk.h"
#include "store/store.h"

#include <jansson.h>
#include <stddef.h>

enum policy_gate_outcome {
	POLICY_GATE_PROCEED = 0,       /* run it */
	POLICY_GATE_APPROVAL_REQUIRED, /* not run: a pending approval was created */
	POLICY_GATE_REFUSED, /* not run: forbidden, or the approval given cannot be used */
};

/* The call at the gate. Strings borrowed. */
struct policy_gate_request {
	const char *tenant;       /* required */
	const char *operation_id; /* this call's operation id (recorded with the approval) */
	const char *tool;         /* "browser_click" */
	const char *approval_id;  /* the call's "approval" argument, NULL or "" when absent */
};

struct policy_gate_result {
	enum policy_gate_outcome outcome;
	struct policy_risk_decision decision; /* verdict, rule, summary */
	char fingerprint[POLICY_FINGERPRINT_BYTES];
	/* for the tool's error, when not PROCEED: "approval_required", "forbidden",
	 * "approval_refused"; "" on PROCEED */
	char code[32];
	char message[2048];         /* for the agent: what, why, what to do */
	enum store_refusal refusal; /* approval_refused: why */
	/* APPROVAL_REQUIRED: the new pending approval; PROCEED with approval_used:
	 * the approval now spent; REFUSED with an approval: as it is */
	struct store_approval approval;
	int approval_used;
};

/*
 * Runs the gate for one action. st, rules, facts and req are borrowed.
 * Classifies facts with rules, computes the fingerprint, and:
 *   allow                        -> PROCEED (an approval given is left unused)
 *   forbid                       -> REFUSED, code "forbidden"
 *   approve, no approval given   -> creates a pending approval bound to the
 *                                   fingerprint, expiring after the rules'
 *                                   approval TTL -> APPROVAL_REQUIRED
 *   approve, approval given      -> store_approval_consume() with the
 *                                   fingerprint recomputed now: PROCEED with
 *                                   approval_used, or REFUSED with code
 *                                   "approval_refused" and res->refusal
 * Returns 0 with res filled in, or a negative error (-POLICY_EINVAL for a
 * fact that cannot be fingerprinted, or the store's -STORE_* code) with
 * err; res->outcome is then REFUSED.
 */
int policy_gate_check(struct store *st, const struct policy_risk *rules,
                      const struct policy_action_facts *facts,
                      const struct policy_gate_request *req, struct policy_gate_result *res,
                      char *err, size_t errlen);

/*
 * The gate's result as JSON, for the tool result's structuredContent:
 *   approval_required: {"status": "approval_required", "approval_id", "summary",
 *                       "fingerprint", "expires_at", "rule", "message"}
 *   forbidden:         {"status": "forbidden", "rule", "summary", "message"}
 *   approval_refused:  {"status": "approval_refused", "approval_id", "reason"
 *                       ("pending", "denied", "used", "expired", "mismatch",
 *                       "not_found"), "summary", "message"}
 *   proceed:           {"status": "allowed", "rule"} or, under an approval,
 *                      {"status": "approved", "rule", "approval_id",
 *                       "decided_by", "decided_at"}
 * New reference; NULL on allocation failure.
 */
json_t *policy_gate_result_json(const struct policy_gate_result *res);

#endif

/*
 * gate.c - the pipeline's gate step (gate.h): risk classification, then
 * an approval request or the use of an approval, bound to the action's
 * fingerprint. No page access; the facts are all it knows of the page.
 */
#include "policy/gate.h"

#include "common/log.h"
#include "common/util.h"

#include <stdio.h>
#include <string.h>

/* Fills res for a refusal with code and message. */
static void refuse(struct policy_gate_result *res, const char *code, const char *message)
{
	res->outcome = POLICY_GATE_REFUSED;
	snprintf(res->code, sizeof(res->code), "%s", code);
	snprintf(res->message, sizeof(res->message), "%s", message);
}

int policy_gate_check(struct store *st, const struct policy_risk *rules,
                      const struct policy_action_facts *facts,
                      const struct policy_gate_request *req, struct policy_gate_result *res,
                      char *err, size_t errlen)
{
	struct store_approval_request areq;
	char why[1024] = "";
	int rc = 0;

	memset(res, 0, sizeof(*res));
	res->outcome = POLICY_GATE_REFUSED;
	if (!st || !rules || !facts || !req || !req->tenant) {
		snprintf(err, errlen,
		         "the gate was called without its store, rules, facts or tenant: "
		         "this is a bug in glassbox");
		rc = -POLICY_EINVAL;
		goto out;
	}
	rc = policy_risk_classify(rules, facts, &res->decision);
	if (rc < 0) {
		snprintf(err, errlen, "%s", res->decision.message);
		goto out;
	}
	rc = policy_fingerprint(facts, res->fingerprint, err, errlen);
	if (rc < 0)
		goto out;

	if (res->decision.verdict == POLICY_RISK_ALLOW) {
		res->outcome = POLICY_GATE_PROCEED;
		goto out;
	}
	if (res->decision.verdict == POLICY_RISK_FORBID) {
		refuse(res, "forbidden", res->decision.message);
		goto out;
	}

	/* needs approval */
	if (req->approval_id && req->approval_id[0]) {
		rc = store_approval_consume(st, req->tenant, req->approval_id, res->fingerprint,
		                            req->operation_id, &res->approval, &res->refusal, why,
		                            sizeof(why));
		if (rc == 0) {
			res->outcome = POLICY_GATE_PROCEED;
			res->approval_used = 1;
			GB_LOGI("policy",
			        "tenant %s: approval %s used for %s (rule %s, approved by %s)",
			        req->tenant, res->approval.id, gb_or(req->tool, ""),
			        res->decision.rule, res->approval.decided_by);
			goto out;
		}
		if (rc == -STORE_EREFUSED) {
			rc = 0;
			refuse(res, "approval_refused", "");
			if (!res->approval.id[0]) /* not found: name the id the call gave */
				snprintf(res->approval.id, sizeof(res->approval.id), "%.64s",
				         req->approval_id);
			if (res->refusal == STORE_REFUSE_MISMATCH)
				snprintf(res->message, sizeof(res->message),
				         "%.900s. This call would: %.1000s", why,
				         res->decision.summary);
			else
				snprintf(res->message, sizeof(res->message), "%s", why);
			goto out;
		}
		snprintf(err, errlen, "%s", why);
		goto out;
	}
	memset(&areq, 0, sizeof(areq));
	areq.tenant = req->tenant;
	areq.fingerprint = res->fingerprint;
	areq.summary = res->decision.summary;
	areq.session = facts->session_id;
	areq.operation_id = req->operation_id;
	areq.tool = req->tool;
	areq.rule = res->decision.rule;
	areq.ttl_ms = policy_risk_approval_ttl_ms(rules);
	rc = store_approval_create(st, &areq, &res->approval, err, errlen);
	if (rc < 0)
		goto out;
	res->outcome = POLICY_GATE_APPROVAL_REQUIRED;
	snprintf(res->code, sizeof(res->code), "approval_required");
	snprintf(res->message, sizeof(res->message),
	         "not done: this action needs a person's approval (rule %s): %s. Approval %s is "
	         "waiting for a person (`glassbox approvals approve %s`, or the client's approval "
	         "prompt). Once it is approved, repeat this exact call with \"approval\": \"%s\"; "
	         "it is valid once, for this action only, for %lld seconds.",
	         res->decision.rule, res->decision.summary, res->approval.id, res->approval.id,
	         res->approval.id, (long long)(res->approval.ttl_ms / 1000));
out:
	return rc;
}

/* Sets key to s unless s is empty. */
static void set_str(json_t *o, const char *key, const char *s)
{
	if (s && s[0])
		json_object_set_new(o, key, json_string(s));
}

json_t *policy_gate_result_json(const struct policy_gate_result *res)
{
	char when[40];
	json_t *o;

	if (!res)
		return NULL;
	o = json_object();
	if (!o)
		return NULL;
	switch (res->outcome) {
	case POLICY_GATE_PROCEED:
		set_str(o, "status", res->approval_used ? "approved" : "allowed");
		set_str(o, "rule", res->decision.rule);
		if (res->approval_used) {
			set_str(o, "approval_id", res->approval.id);
			set_str(o, "decided_by", res->approval.decided_by);
			store_time_iso8601(res->approval.decided_ms, when, sizeof(when));
			set_str(o, "decided_at", when);
		}
		break;
	case POLICY_GATE_APPROVAL_REQUIRED:
		set_str(o, "status", "approval_required");
		set_str(o, "approval_id", res->approval.id);
		set_str(o, "summary", res->decision.summary);
		set_str(o, "fingerprint", res->fingerprint);
		store_time_iso8601(res->approval.expires_ms, when, sizeof(when));
		set_str(o, "expires_at", when);
		set_str(o, "rule", res->decision.rule);
		set_str(o, "message", res->message);
		break;
	case POLICY_GATE_REFUSED:
	default:
		set_str(o, "status", res->code[0] ? res->code : "refused");
		set_str(o, "rule", res->decision.rule);
		if (!strcmp(res->code, "approval_refused")) {
			set_str(o, "approval_id", res->approval.id);
			set_str(o, "reason", store_refusal_name(res->refusal));
		}
		set_str(o, "summary", res->decision.summary);
		set_str(o, "message", res->message);
		break;
	}
	return o;
}

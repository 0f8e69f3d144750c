/*
 * gates.c - the gate step and the operation ledger of the pipeline.
 *
 * Gate: before anything acts, the facts of the action are re-read from
 * the page (the target's role, name, visible text, aria-label, the form
 * it submits, the input type...) - never taken from the agent's words -
 * and classified by the tenant's risk rules: allowed, needs approval, or
 * forbidden. An approval is bound to the fingerprint of exactly this
 * action on exactly this node and is spent when used. When the tenant's
 * policy allows it ("approvals": {"elicitation": true}) and the client can
 * be asked (act_call.elicit), the person at the client decides there and
 * then, on the worker thread; the call goes on (or fails) with the answer.
 *
 * Ledger: every call is an operation in the embedded store; a client's
 * operation_id is an idempotency key, a finished operation returns its
 * recorded result, and one whose outcome could not be established is
 * `unknown` and never re-run blindly.
 */
#include "actions/actions-private.h"
#include "actions/files-private.h"

#include "cdp/cdp.h"
#include "common/log.h"
#include "evidence/audit.h"
#include "policy/admin.h"
#include "policy/gate.h"
#include "sessions/sessions.h"
#include "store/store.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* A decision on another tenant's approval, appended to that tenant's
 * chain (body taken). */
static void record_other_tenant(struct act_session *s, const char *tenant, const char *kind,
                                const char *operation, const char *by, json_t *body)
{
	struct evid_audit_entry e = { 0 };
	char err[512];

	e.tenant = tenant;
	e.kind = kind;
	e.actor.tenant = tenant;
	e.actor.user = by;
	e.operation_id = operation && operation[0] ? operation : NULL;
	e.body = body;
	if (s->audit && evid_audit_append(s->audit, &e, NULL, err, sizeof(err)) < 0)
		GB_LOGW("actions", "the decision on an approval of tenant %s was not recorded: %s",
		        tenant, err);
	json_decref(body);
}

/* Decisions on approvals go to the audit log, with who decided, when,
 * and what they decided on (evidence/audit.h: approval_id, tool,
 * fingerprint, by, at). A decision belongs to the call that asked for it. */
static void on_approval_event(void *user, const struct store_approval_event *ev)
{
	struct act_session *s = user;
	const struct store_approval *a = ev->approval;
	const char *operation = ev->operation_id;
	const char *kind;
	json_t *body;
	char at[40];

	if (!strcmp(ev->event, "approved"))
		kind = EVID_AUDIT_APPROVAL_GRANTED;
	else if (!strcmp(ev->event, "denied"))
		kind = EVID_AUDIT_APPROVAL_DENIED;
	else
		kind = "approval_event";
	if ((!operation || !operation[0]) && a && a->operation_id[0])
		operation = a->operation_id;
	store_time_iso8601(ev->time_ms, at, sizeof(at));
	body = json_pack("{s:s, s:s, s:s, s:s?, s:s?, s:s, s:I}", "approval_id", ev->approval_id,
	                 "event", ev->event, "by", ev->by ? ev->by : "", "channel", ev->channel,
	                 "reason", ev->reason, "at", at, "at_ms", (json_int_t)ev->time_ms);
	if (body && a) {
		json_object_set_new(body, "tool", json_string(a->tool));
		json_object_set_new(body, "rule", json_string(a->rule));
		json_object_set_new(body, "fingerprint", json_string(a->fingerprint));
		json_object_set_new(body, "summary", json_string(a->summary));
		if (a->session[0])
			json_object_set_new(body, "agent_session", json_string(a->session));
	}
	if (a && strcmp(a->tenant, s->tenant) != 0) {
		/* decided through a handle this session shares (the admin socket
		 * is served by the first session's store): the record belongs to
		 * the approval's own tenant's trail, not this session's */
		record_other_tenant(s, a->tenant, kind, operation, ev->by, body);
		return;
	}
	act_keeper_record(s->keeper, kind, NULL, operation, body, 0);
}

int act_gates_start(struct act_session *s, const struct policy_tenant *policy, char *err,
                    size_t errlen)
{
	struct policy_admin_options ao = { 0 };
	char gerr[512];

	if (store_open(s->data_dir, &s->db, gerr, sizeof(gerr)) < 0) {
		snprintf(err, errlen, "cannot open the store: %s", gerr);
		return -1;
	}
	store_set_approval_hook(s->db, on_approval_event, s);
	/* which replica owns this session (store.h, "the session registry") */
	if (store_session_claim(s->db, s->tenant, s->id, 0, gerr, sizeof(gerr)) < 0)
		GB_LOGW("actions", "session %s is not in the session registry: %s", s->id, gerr);
	/* parsed and checked once, with the rest of the policy (policy/tenant.h) */
	s->risk = policy_tenant_risk(policy);
	s->elicit_approvals = policy_tenant_settings(policy)->elicit_approvals;
	ao.data_dir = s->data_dir;
	if (policy_admin_start(s->db, &ao, &s->admin, gerr, sizeof(gerr)) < 0)
		GB_LOGW("actions",
		        "no admin socket (approvals go through the CLI's direct mode): %s", gerr);
	return 0;
}

void act_gates_stop(struct act_session *s)
{
	policy_admin_stop(s->admin);
	s->admin = NULL;
	s->risk = NULL; /* the session's tenant_policy owns it */
	if (s->db)
		store_session_release(s->db, s->id, NULL, 0);
	store_close(s->db);
	s->db = NULL;
}

/* ---- ledger -------------------------------------------------------------- */

int act_ledger_begin(struct act_ctx *ctx, json_t **replay)
{
	json_t *oid = json_object_get(ctx->args, "operation_id");
	struct store_op_request req = { 0 };
	enum store_op_outcome outcome;
	struct store_op op;
	char hash[STORE_HASH_MAX + 1];
	char err[512];
	int rc;

	*replay = NULL;
	if (ctx->def->effect == ACT_EFFECT_READ)
		return 0; /* it takes no operation_id: nothing to guard or replay */
	if (!json_is_string(oid)) {
		/* the pipeline's id, which nobody knows yet: written when it acts */
		store_args_hash(ctx->args, ctx->args_hash);
		ctx->in_ledger = 1;
		ctx->ledger_unwritten = 1;
		return 0;
	}
	memset(&op, 0, sizeof(op));
	store_args_hash(ctx->args, hash);
	req.tenant = ctx->as->tenant;
	req.operation_id = json_string_value(oid);
	req.session = ctx->as->id;
	req.tool = ctx->def->name;
	req.args_hash = hash;
	rc = store_op_begin(ctx->as->db, &req, act_left_ms(ctx), &outcome, &op, err, sizeof(err));
	if (rc < 0)
		return act_fail(ctx, "operation_refused", "%s", err);
	snprintf(ctx->operation_id, sizeof(ctx->operation_id), "%s", op.id);
	ctx->in_ledger = 1;
	if (outcome == STORE_OP_FINISHED) {
		ctx->in_ledger = 0; /* nothing to finish: it is recorded already */
		if (op.result) {
			*replay = json_deep_copy(op.result);
		} else {
			json_object_set_new(ctx->out, "state",
			                    json_string(store_op_state_name(op.state)));
			act_fail(ctx,
			         op.state == STORE_OP_UNKNOWN ? "outcome_unknown"
			                                      : "operation_failed",
			         "operation %s is %s: %s. It is not run again: take a snapshot to "
			         "see the "
			         "page as it is now",
			         op.id, store_op_state_name(op.state), op.note);
		}
	} else if (outcome == STORE_OP_IN_FLIGHT) {
		ctx->in_ledger = 0;
		act_fail(ctx, "operation_in_flight", "operation %s is still running: repeat later",
		         op.id);
	}
	store_op_clear(&op);
	return ctx->failed || *replay ? 1 : 0;
}

/* Writes the row of an operation under the pipeline's id in state
 * (running, or how it ended without acting). Returns store_op_record_new's. */
static int ledger_write_new(struct act_ctx *ctx, enum store_op_state state, const json_t *result,
                            char *err, size_t errlen)
{
	struct store_op_request req = { 0 };

	req.tenant = ctx->as->tenant;
	req.operation_id = ctx->operation_id;
	req.session = ctx->as->id;
	req.tool = ctx->def->name;
	req.args_hash = ctx->args_hash;
	ctx->ledger_unwritten = 0;
	return store_op_record_new(ctx->as->db, &req, state, result, err, errlen);
}

void act_ledger_running(struct act_ctx *ctx)
{
	char err[256];
	int rc;

	if (!ctx->in_ledger || ctx->acted)
		return;
	rc = ctx->ledger_unwritten ? ledger_write_new(ctx, STORE_OP_RUNNING, NULL, err, sizeof(err))
	                           : store_op_mark_running(ctx->as->db, ctx->as->tenant,
	                                                   ctx->operation_id, err, sizeof(err));
	if (rc == 0)
		ctx->acted = 1;
	else
		GB_LOGW("actions", "operation %s not marked running: %s", ctx->operation_id, err);
}

enum store_op_state act_ledger_outcome(struct act_ctx *ctx)
{
	if (!ctx->failed)
		return STORE_OP_DONE;
	if (!act_outcome_unknown(ctx))
		return STORE_OP_FAILED;
	/* failed after input reached the page and we cannot tell what it did */
	json_object_set_new(ctx->out, "state", json_string("unknown"));
	return STORE_OP_UNKNOWN;
}

void act_ledger_finish(struct act_ctx *ctx, enum store_op_state state, const json_t *result)
{
	char err[256];
	int rc;

	if (!ctx->in_ledger)
		return;
	rc = ctx->ledger_unwritten
	         ? ledger_write_new(ctx, state, result, err, sizeof(err))
	         : store_op_finish(ctx->as->db, ctx->as->tenant, ctx->operation_id, state, result,
	                           err, sizeof(err));
	if (rc < 0)
		GB_LOGW("actions", "operation %s not recorded: %s", ctx->operation_id, err);
	ctx->in_ledger = 0;
}

/* ---- gate ---------------------------------------------------------------- */

/* What the page says about the target, re-read now. */
static const char facts_js[] =
    "function() { const el = this.nodeType === 1 ? this : this.parentElement;"
    " const t = (s) => (s || '').replace(/\\s+/g, ' ').trim().slice(0, 500);"
    " const tag = el.tagName.toLowerCase(); const type = (el.getAttribute('type') || (tag === "
    "'button' ? 'submit' : '')).toLowerCase();"
    " const form = el.form || el.closest('form');"
    " const submits = !!form && ((tag === 'button' && type === 'submit') || (tag === 'input' && "
    "(type === 'submit' || type === 'image')));"
    /* a form's controls shadow its members (<input name=action>): read the
     * form through the prototypes; el.formAction is the page URL when the
     * button has no formaction attribute, so only read it when it has */
    " const ga = (e, n) => Element.prototype.getAttribute.call(e, n);"
    " const formAction = (f) => Object.getOwnPropertyDescriptor(HTMLFormElement.prototype, "
    "'action').get.call(f);"
    " const method = (ga(el, 'formmethod') || (form && ga(form, 'method')) || 'GET').toUpperCase();"
    " const action = (el.hasAttribute('formaction') ? el.formAction : (form && formAction(form))) "
    "|| '';"
    " const link = el.closest('a[href]');"
    " const flabel = form ? t(ga(form, 'aria-label') || "
    "(Element.prototype.querySelector.call(form, 'h1,h2,h3,legend') || {}).textContent) : '';"
    " return { tag, type: tag === 'input' ? (el.type || 'text') : '', text: t(el.innerText || "
    "el.textContent),"
    "  aria: el.getAttribute('aria-label') || '', title: el.getAttribute('title') || '',"
    "  autocomplete: el.getAttribute('autocomplete') || '', role: el.getAttribute('role') || '',"
    "  submits, method: submits ? method : '', action: submits ? action : '', form_label: flabel,"
    "  href: link ? link.href : '', download: !!(link && link.hasAttribute('download')),"
    "  frame: location.href, connected: el.isConnected }; }";

/* The value the action carries (hashed into the fingerprint, never kept). */
static char *value_of(struct act_ctx *ctx)
{
	json_t *a = ctx->args;
	json_t *values = json_object_get(a, "values");
	const char *keys[] = { "text", "secret", "key", "url", "function", "promptText" };
	struct gb_buf b;
	size_t i;

	gb_buf_init(&b, 1 << 22);
	for (i = 0; i < json_array_size(values); i++)
		gb_buf_appendf(&b, "%s%s", i ? "\n" : "",
		               gb_or(json_string_value(json_array_get(values, i)), ""));
	for (i = 0; i < sizeof(keys) / sizeof(keys[0]); i++)
		if (json_string_value(json_object_get(a, keys[i])))
			gb_buf_appendf(&b, "%s", json_string_value(json_object_get(a, keys[i])));
	if (json_is_boolean(json_object_get(a, "accept")))
		gb_buf_appendf(&b, "%s",
		               json_is_true(json_object_get(a, "accept")) ? "accept" : "dismiss");
	act_uploads_fingerprint(ctx, &b);
	return gb_buf_steal(&b);
}

/* Milliseconds since the epoch (approval expiries are wall-clock times). */
static int64_t wall_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* act_call.while_waiting while a person decides: the session goes on
 * reading its browser (events, new targets set up or let go of), without
 * waiting. */
static void keep_reading_browser(struct act_call *call)
{
	struct act_session *as = call->while_waiting_user;

	if (as->sess && cdp_is_open(sess_cdp(as->sess)))
		cdp_service(sess_cdp(as->sess), 0, NULL, NULL);
}

/* Asks the person at the client (act_call.elicit) to decide the pending
 * approval a (borrowed) for rule, with the summary a person would see in
 * `glassbox approvals`. Time spent waiting for the person is added to the
 * call's deadline. Returns 1 when approved here (decided in the store by
 * "mcp-elicitation:<client>"), 0 when the client was not asked or did not
 * answer (a stays pending), -1 when the person declined: a is denied and
 * the call has failed with approval_denied. */
static int ask_client(struct act_ctx *ctx, const struct store_approval *a, const char *rule)
{
	struct act_call *call = ctx->call;
	struct store_decider who = { .channel = "mcp-elicitation", .uid = -1 };
	json_t *schema = NULL;
	json_t *answer = NULL;
	const char *action;
	const char *how;
	char message[STORE_SUMMARY_MAX + 512];
	char expires[40];
	char by[STORE_BY_MAX + 1];
	char err[512];
	int64_t left_ms = a->expires_ms - wall_ms();
	int64_t asked_ms;
	int approve;
	int rc_elicit;
	int rc = 0;

	if (!ctx->as->elicit_approvals || !call || !call->elicit || left_ms <= 0)
		goto out;
	store_time_iso8601(a->expires_ms, expires, sizeof(expires));
	snprintf(message, sizeof(message),
	         "The browser agent wants to do something that needs your approval (rule %s):\n\n"
	         "%s\n\nApproval %s, open until %s. Approve only if this exactly is what you want "
	         "done; declining blocks it.",
	         rule, a->summary, a->id, expires);
	schema =
	    json_pack("{s:s, s:{s:{s:s, s:s, s:s}}, s:[s]}", "type", "object", "properties",
	              "approve", "type", "boolean", "title", "Approve this action?", "description",
	              "Yes runs it once, as described; no blocks it", "required", "approve");
	if (!schema)
		goto out;
	asked_ms = gb_now_ms();
	call->while_waiting = keep_reading_browser;
	call->while_waiting_user = ctx->as;
	rc_elicit = call->elicit(call, message, schema, left_ms > INT_MAX ? INT_MAX : (int)left_ms,
	                         &answer);
	call->while_waiting = NULL;
	if (rc_elicit < 0) {
		ctx->deadline_ms += gb_now_ms() - asked_ms;
		GB_LOGI("actions", "approval %s: no answer through the client; it stays pending",
		        a->id);
		goto out;
	}
	ctx->deadline_ms += gb_now_ms() - asked_ms; /* a person's time is not the page's */
	/* only an explicit yes approves; decline, cancel or anything else blocks */
	action = json_string_value(json_object_get(answer, "action"));
	approve = action && !strcmp(action, "accept") &&
	          json_is_true(json_object_get(json_object_get(answer, "content"), "approve"));
	snprintf(by, sizeof(by), "mcp-elicitation:%s", gb_or(call->client_name, "client"));
	who.by = by;
	who.reason = approve ? NULL : "declined through the client";
	if (store_approval_decide(ctx->as->db, ctx->as->tenant, a->id, approve, &who, NULL, err,
	                          sizeof(err)) < 0)
		GB_LOGW("actions", "approval %s: recording the client's answer failed: %s", a->id,
		        err);
	if (approve) {
		rc = 1; /* the gate, run again with the id, says whether it can be used */
		goto out;
	}
	if (!action || !strcmp(action, "accept"))
		how = "the person answered no";
	else if (!strcmp(action, "decline"))
		how = "the person declined";
	else
		how = "the person dismissed the question";
	rc = act_fail(ctx, "approval_denied",
	              "approval %s was declined through the client (%s), so nothing was done: %s. "
	              "Do not repeat this action; ask the user how to go on",
	              a->id, how, a->summary);
out:
	json_decref(schema);
	json_decref(answer);
	return rc;
}

/* The gate, with approval_id (NULL: the call's "approval" argument) as
 * the approval to use; may_ask: whether a pending approval may be put to
 * the client (once per call). */
static int gate_run(struct act_ctx *ctx, const struct act_gate_part *part, const char *approval_id,
                    int may_ask)
{
	struct policy_action_facts f = { 0 };
	struct policy_gate_request req = { 0 };
	struct policy_gate_result res;
	const struct snap_ref *ref = NULL;
	json_t *facts = NULL;
	json_t *gate;
	char identity[128];
	char *value = NULL;
	char err[512];
	int asked;
	int rc = 0;

	if (!part && ctx->def->policy.exempt)
		return 0; /* read-only tools: the descriptor says why */
	f.kind = (enum policy_action_kind)(part ? part->kind : ctx->def->policy.kind);
	f.session_id = ctx->as->id;
	f.page_url = ctx->page ? sess_page_url(ctx->page) : "";
	if (ctx->has_target) {
		/* in an isolated world: the page's scripts cannot fake these */
		rc = act_call_in_isolated_world(ctx, facts_js, &facts, "reading the target");
		if (rc < 0)
			goto out;
		/* a node that left the page is not gated (nor acted on): an
		 * approval given for it is not spent on a call that cannot act */
		if (!json_is_true(json_object_get(facts, "connected"))) {
			rc = act_fail_gone(ctx);
			goto out;
		}
		ref =
		    ctx->target.ref[0] ? act_snapshot_find(&ctx->as->refs, ctx->target.ref) : NULL;
		f.frame_id = ref ? ref->frame_id : "";
		f.backend_node_id = ctx->target.backend_node_id;
		snprintf(identity, sizeof(identity), "%s:%d:%s", ctx->target.session_id,
		         ctx->target.backend_node_id,
		         gb_or(json_string_value(json_object_get(facts, "tag")), ""));
		f.node_identity = identity;
		f.role = ref && ref->role ? ref->role
		                          : json_string_value(json_object_get(facts, "role"));
		f.name = ref && ref->name ? ref->name
		                          : json_string_value(json_object_get(facts, "text"));
		f.text = json_string_value(json_object_get(facts, "text"));
		f.aria_label = json_string_value(json_object_get(facts, "aria"));
		f.title = json_string_value(json_object_get(facts, "title"));
		f.tag = json_string_value(json_object_get(facts, "tag"));
		f.input_type = json_string_value(json_object_get(facts, "type"));
		f.autocomplete = json_string_value(json_object_get(facts, "autocomplete"));
		f.submits_form = json_is_true(json_object_get(facts, "submits"));
		f.form_method = json_string_value(json_object_get(facts, "method"));
		f.form_action = json_string_value(json_object_get(facts, "action"));
		f.form_label = json_string_value(json_object_get(facts, "form_label"));
		f.starts_download = json_is_true(json_object_get(facts, "download"));
		if (json_string_value(json_object_get(facts, "href")) &&
		    json_string_value(json_object_get(facts, "href"))[0])
			f.dest_url = json_string_value(json_object_get(facts, "href"));
		if (strcmp(gb_or(json_string_value(json_object_get(facts, "frame")), ""),
		           f.page_url)) {
			f.frame_url = json_string_value(json_object_get(facts, "frame"));
			snprintf(ctx->frame_url, sizeof(ctx->frame_url), "%s",
			         gb_or(f.frame_url, ""));
		}
	}
	if (f.kind == POLICY_ACT_NAVIGATE)
		f.dest_url = json_string_value(json_object_get(ctx->args, "url"));
	if (f.kind == POLICY_ACT_PRESS)
		f.key = json_string_value(json_object_get(ctx->args, "key"));
	if (f.kind == POLICY_ACT_DIALOG) {
		const struct sess_dialog *d = sess_page_dialog(ctx->page);

		f.dialog_accept = json_is_true(json_object_get(ctx->args, "accept"));
		f.text = d ? d->message : "";
	}
	value = part ? strdup(part->value ? part->value : "") : value_of(ctx);
	if (!value) {
		rc = act_fail(ctx, "oom", "out of memory");
		goto out;
	}
	f.value = (const unsigned char *)value;
	f.value_len = strlen(value);
	req.tenant = ctx->as->tenant;
	req.operation_id = ctx->operation_id;
	req.tool = ctx->def->name;
	req.approval_id =
	    approval_id ? approval_id : json_string_value(json_object_get(ctx->args, "approval"));
	if (policy_gate_check(ctx->as->db, ctx->as->risk, &f, &req, &res, err, sizeof(err)) < 0) {
		rc = act_fail(ctx, "gate_failed", "the action could not be classified: %s", err);
		goto out;
	}
	if (res.outcome == POLICY_GATE_PROCEED) {
		if (res.approval_used)
			json_object_set_new(ctx->out, "approval",
			                    json_pack("{s:s, s:s}", "id", res.approval.id, "by",
			                              res.approval.decided_by));
		goto out;
	}
	if (res.outcome == POLICY_GATE_APPROVAL_REQUIRED && may_ask) {
		ctx->gate_asked = 1;
		asked = ask_client(ctx, &res.approval, res.decision.rule);
		if (asked > 0) {
			/* approved at the client: the facts are re-read, the approval spent */
			rc = gate_run(ctx, part, res.approval.id, 0);
			goto out;
		}
		if (asked < 0) {
			gate = policy_gate_result_json(&res);
			json_object_set_new(gate, "status", json_string("approval_denied"));
			json_object_set_new(gate, "channel", json_string("mcp-elicitation"));
			json_object_set_new(gate, "message", json_string(ctx->error));
			json_object_set_new(ctx->out, "gate", gate);
			rc = -1;
			goto out;
		}
	}
	json_object_set_new(ctx->out, "gate", policy_gate_result_json(&res));
	if (res.outcome == POLICY_GATE_APPROVAL_REQUIRED && !ctx->as->flow_name[0])
		act_approval_evidence(ctx, &res.approval);
	if (!strcmp(res.code, "forbidden"))
		act_keeper_record(ctx->as->keeper, EVID_AUDIT_POLICY_REFUSAL,
		                  ctx->sess ? sess_id(ctx->sess) : NULL, ctx->operation_id,
		                  json_pack("{s:s, s:s, s:s}", "tool", ctx->def->name, "rule",
		                            res.decision.rule, "summary", res.decision.summary),
		                  0);
	if (res.outcome == POLICY_GATE_APPROVAL_REQUIRED && ctx->as->flow_name[0]) {
		/* a flow does not wait for a person: its result (and the record)
		 * says how to let it act instead */
		json_object_set_new(json_object_get(ctx->out, "gate"), "message",
		                    json_string("a flow does not wait for approvals"));
		rc = act_fail(ctx, res.code,
		              "not done: this action needs a person's approval (rule %s): %s; a "
		              "flow does not wait for approvals: pre-approve it with a risk rule "
		              "{\"decision\": \"allow\"} in the policy (--config)",
		              res.decision.rule, res.decision.summary);
		goto out;
	}
	rc = act_fail(ctx, res.code, "%s", res.message);
out:
	free(value);
	json_decref(facts);
	return rc;
}

int act_gate_check(struct act_ctx *ctx)
{
	return gate_run(ctx, NULL, NULL, 1);
}

int act_gate_check_part(struct act_ctx *ctx, const struct act_gate_part *part)
{
	return gate_run(ctx, part, NULL, 1);
}

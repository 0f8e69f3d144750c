/*
 * evaluate.c - browser_evaluate: a script run in the page, treated as an action that may change it.
 */
#include "actions/actions-private.h"
#include "actions/codegen.h"
#include "actions/tools/params.h"

#include "cdp/cdp.h"
#include "policy/risk.h"
#include "sessions/sessions.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define RESULT_TEXT_MAX 20000

static int evaluate_run(struct act_ctx *ctx)
{
	const char *fn = json_string_value(json_object_get(ctx->args, "function"));
	json_t *value = NULL;
	char *dump = NULL;
	struct gb_buf expr;
	int rc;

	gb_buf_init(&expr, 1 << 22);
	if (ctx->has_target) {
		gb_buf_appendf(&expr,
		               "async function(el) { const f = (%s); return typeof f === "
		               "'function' ? await f(el) : f; }",
		               fn);
		rc = act_call_on_target(ctx, expr.data ? expr.data : "",
		                        json_pack("[{s:s}]", "objectId", ctx->target.object_id),
		                        &value, "running the function");
	} else {
		gb_buf_appendf(&expr,
		               "(async () => { const f = (%s\n); return typeof f === "
		               "'function' ? await f() : f; })()",
		               fn);
		rc = act_eval(ctx, expr.data ? expr.data : "", &value, "running the function");
	}
	if (rc < 0)
		goto out;
	/* strings the page returns may carry a secret typed earlier */
	act_secrets_scrub_json(ctx->as, value);
	json_object_set(ctx->out, "result", value);
	/* as Playwright MCP shows it: JSON.stringify(result, null, 2) */
	dump = json_dumps(value, JSON_ENCODE_ANY | JSON_INDENT(2) | JSON_PRESERVE_ORDER);
	act_page_content_mark(ctx);
	gb_buf_appendf(&ctx->result, "%.*s%s", RESULT_TEXT_MAX, dump ? dump : "undefined",
	               dump && strlen(dump) > RESULT_TEXT_MAX ? "… (truncated)" : "");
	gb_buf_appendf(&ctx->text, "Ran the function");
out:
	free(dump);
	json_decref(value);
	gb_buf_free(&expr);
	return rc;
}

static const struct act_param params[] = {
	{ .name = "function",
	  .type = ACT_T_STRING,
	  .required = 1,
	  .description = "() => { /* code */ } or (element) => { /* code */ } when element is "
	                 "provided" },
	P_TARGET_OPT,
	P_ELEMENT,
	P_EXPECT,
	P_OPERATION_ID,
};

/* await page.evaluate('<fn>'); or on the element: await <locator>.evaluate('<fn>'); */
static void evaluate_code(struct act_ctx *ctx)
{
	const char *fn = json_string_value(json_object_get(ctx->args, "function"));
	struct act_code_target t;
	struct gb_buf arg;

	gb_buf_init(&arg, 1 << 22);
	act_code_quote(&arg, fn);
	if (ctx->has_target) {
		act_code_target_of(ctx, &t);
		act_code_call(&ctx->code, &t, "evaluate", arg.data ? arg.data : "''");
	} else {
		gb_buf_appendf(&ctx->code, "await page.evaluate(%s);\n",
		               arg.data ? arg.data : "''");
	}
	gb_buf_free(&arg);
}

static const struct act_tool_impl impl = {
	.evidence_if_changed = 1,
	.run = evaluate_run,
	.needs_target = 2,
	.code = evaluate_code,
};

const struct act_def act_tool_evaluate = {
	.name = "browser_evaluate",
	.title = "Evaluate JavaScript",
	.description =
	    "Evaluate a JavaScript function in the page, or on one element when `target` is "
	    "given, and return its JSON-serializable result (structuredContent.result). The "
	    "function can do anything the page can, so it is treated as state-changing: it runs "
	    "under the same policy, verification and evidence as a click.",
	PARAMS(params),
	.effect = ACT_EFFECT_PAGE,
	.policy = ACT_POLICY(POLICY_ACT_EVALUATE),
	.checks_expect = 1,
	.impl = &impl,
};

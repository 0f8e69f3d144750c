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

/* await page.evaluate('<fn>'); or on the element: await <locator>.evaluate('<fn>'); */
static void evaluate_code(struct act_ctx *ctx, int is_function)
{
	const char *fn = json_string_value(json_object_get(ctx->args, "function"));
	struct act_code_target t;
	struct gb_buf arg;

	gb_buf_init(&arg, 1 << 22);
	if (is_function) {
		act_code_quote(&arg, fn);
	} else {
		/* an expression, as Playwright MCP shows it: () => (expression) */
		struct gb_buf wrapped;

		gb_buf_init(&wrapped, 1 << 22);
		gb_buf_appendf(&wrapped, "() => (%s)", fn ? fn : "");
		act_code_quote(&arg, wrapped.data ? wrapped.data : "");
		gb_buf_free(&wrapped);
	}
	if (ctx->has_target) {
		act_code_target_of(ctx, &t);
		act_code_call(&ctx->code, &t, "evaluate", arg.data ? arg.data : "''");
	} else {
		gb_buf_appendf(&ctx->code, "await page.evaluate(%s);\n",
		               arg.data ? arg.data : "''");
	}
	gb_buf_free(&arg);
}

/* A script on its way and the re-read sent behind it. */
struct script_wait {
	struct act_ctx *ctx;
	uint64_t script;
	uint64_t reread;
	int reread_first; /* the re-read's answer came before the script's */
};

/* cdp_service's stop: the script's answer is in; notes whether the
 * re-read's came before it. */
static int script_answered(void *user)
{
	struct script_wait *w = user;

	if (cdp_reply_ready(w->ctx->cdp, w->script))
		return 1;
	if (w->reread && cdp_reply_ready(w->ctx->cdp, w->reread))
		w->reread_first = 1;
	return 0;
}

/*
 * Runs the function (or expression) fn in the page's world: *value is
 * {isFunction, value}. Right behind it goes the re-read of the page one
 * setTimeout(0) later, in glassbox's world; the renderer runs it once the
 * script's own run returned, so when its answer comes after the script's,
 * the script had ended: that re-read is offered to settling as its last
 * round trip (act_settle_offer), in the same round trip as the script.
 */
static int run_script(struct act_ctx *ctx, const char *fn, json_t **value)
{
	struct script_wait w = { ctx, 0, 0, 0 };
	unsigned events_before = ctx->rec.events;
	char *observe = act_observe_expression(ctx);
	char *reread = act_settle_read_expression(observe);
	struct gb_buf expr;
	json_t *res = NULL;
	int rc;

	gb_buf_init(&expr, 1 << 22);
	gb_buf_appendf(&expr,
	               "(async () => { const f = (%s\n); const isFunction = typeof f === "
	               "'function'; return { isFunction, value: isFunction ? await f() : await f "
	               "}; })()",
	               fn);
	rc = cdp_send(ctx->cdp, ctx->psid, "Runtime.evaluate",
	              json_pack("{s:s, s:b, s:b}", "expression", expr.data ? expr.data : "",
	                        "returnByValue", 1, "awaitPromise", 1),
	              &w.script);
	if (rc < 0) {
		rc = act_connection_failed(ctx, rc, "running the function");
		goto out;
	}
	if (reread)
		w.reread = act_page_world_send(ctx, reread);
	if (!script_answered(&w))
		cdp_service(ctx->cdp, act_left_ms(ctx), script_answered, &w);
	rc = act_cdp_await(ctx, w.script, &res, "running the function");
	if (rc == 0)
		rc = act_runtime_value(ctx, res, value, "running the function");
	if (rc == 0 && w.reread && !w.reread_first) {
		act_settle_offer(ctx, w.reread, events_before);
		w.reread = 0;
	}
out:
	if (w.reread)
		cdp_forget(ctx->cdp, w.reread);
	free(reread);
	free(observe);
	gb_buf_free(&expr);
	json_decref(res);
	return rc;
}

static int evaluate_run(struct act_ctx *ctx)
{
	const char *fn = json_string_value(json_object_get(ctx->args, "function"));
	const char *filename = json_string_value(json_object_get(ctx->args, "filename"));
	char path[4096];
	json_t *value = NULL;
	int is_function = 0;
	char *dump = NULL;
	struct gb_buf expr;
	int rc;

	gb_buf_init(&expr, 1 << 22);
	if (filename && act_output_path(ctx, filename, path, sizeof(path)) < 0) {
		rc = -1;
		goto out;
	}
	if (ctx->has_target) {
		gb_buf_appendf(
		    &expr,
		    "async function(el) { const f = (%s); const isFunction = typeof f === "
		    "'function'; return { isFunction, value: isFunction ? await f(el) : "
		    "await f }; }",
		    fn);
		rc = act_call_on_target(ctx, expr.data ? expr.data : "",
		                        json_pack("[{s:s}]", "objectId", ctx->target.object_id),
		                        &value, "running the function");
	} else {
		rc = run_script(ctx, fn, &value);
	}
	if (rc < 0)
		goto out;
	is_function = json_is_true(json_object_get(value, "isFunction"));
	{
		json_t *v = json_incref(json_object_get(value, "value"));

		json_decref(value);
		value = v ? v : json_null();
	}
	/* strings the page returns may carry a secret typed earlier */
	act_secrets_scrub_json(ctx->as, value);
	json_object_set(ctx->out, "result", value);
	/* as Playwright MCP shows it: JSON.stringify(result, null, 2) */
	dump = json_dumps(value, JSON_ENCODE_ANY | JSON_INDENT(2) | JSON_PRESERVE_ORDER);
	act_page_content_mark(ctx);
	if (filename) {
		/* the whole value, into the output directory; the answer links it */
		rc = act_output_write(ctx, path, dump ? dump : "undefined",
		                      strlen(dump ? dump : "undefined"));
		if (rc < 0)
			goto out;
		gb_buf_appendf(&ctx->result, "- [Evaluation result](%s)", filename);
	} else {
		gb_buf_appendf(&ctx->result, "%.*s%s", RESULT_TEXT_MAX, dump ? dump : "undefined",
		               dump && strlen(dump) > RESULT_TEXT_MAX ? "… (truncated)" : "");
	}
	gb_buf_appendf(&ctx->text, "Ran the function");
	if (!ctx->as->no_code)
		evaluate_code(ctx, is_function);
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
	{ .name = "filename",
	  .type = ACT_T_STRING,
	  .description = "Save the result to this file in the server's output directory "
	                 "(--output-dir) instead of returning it inline. A plain file name" },
};

static const struct act_tool_impl impl = {
	.evidence_if_changed = 1,
	.run = evaluate_run,
	.needs_target = 2,
	.with_file_chooser_open = 1,
	.no_snapshot = act_no_snapshot,
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

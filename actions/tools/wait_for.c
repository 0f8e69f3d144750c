/*
 * wait_for.c - browser_wait_for: waiting for text to appear or go, or for time to pass.
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

static const char wait_text_js[] =
    "new Promise(res => { const want = %s, t = %s;"
    " const ok = () => !!(document.body && document.body.innerText.includes(t)) === want;"
    " if (ok()) return res(true); const mo = new MutationObserver(() => { if (ok()) { "
    "mo.disconnect(); res(true); } });"
    " mo.observe(document, { subtree: true, childList: true, characterData: true, attributes: true "
    "});"
    " setTimeout(() => { mo.disconnect(); res(ok()); }, %d); })";

static int wait_for_run(struct act_ctx *ctx)
{
	json_t *time = json_object_get(ctx->args, "time");
	const char *text = json_string_value(json_object_get(ctx->args, "text"));
	const char *gone = json_string_value(json_object_get(ctx->args, "textGone"));
	int budget = act_left_ms(ctx) - 500;
	json_t *value = NULL;
	struct gb_buf js;
	int rc = 0;

	if (!time && !text && !gone)
		return act_fail(ctx, "bad_arguments", "pass one of 'text', 'textGone' or 'time'");
	if (time && (text || gone)) {
		/* the timeout of the text's wait, not a wait of its own */
		int ms = (int)(json_number_value(time) * 1000);

		if (ms < budget)
			budget = ms;
	} else if (time) {
		int ms = (int)(json_number_value(time) * 1000);

		rc = cdp_service(ctx->cdp, ms < budget ? ms : budget, NULL, NULL);
		if (rc == -CDP_ECANCELLED)
			return act_fail(ctx, "cancelled", "cancelled while waiting");
		if (rc == -CDP_ECLOSED)
			return act_connection_failed(ctx, rc, "waiting");
		gb_buf_appendf(&ctx->text, "Waited %.1f s", json_number_value(time));
		rc = 0;
	}
	if (text || gone) {
		json_t *q = json_string(text ? text : gone);
		char *quoted = json_dumps(q, JSON_ENCODE_ANY);

		gb_buf_init(&js, 1 << 16);
		gb_buf_appendf(&js, wait_text_js, text ? "true" : "false", quoted ? quoted : "\"\"",
		               budget > 0 ? budget : 1);
		free(quoted);
		json_decref(q);
		rc = act_page_eval(ctx, js.data ? js.data : "", &value, "waiting for the text");
		gb_buf_free(&js);
		if (rc == 0 && !json_is_true(value) && time)
			rc =
			    act_fail(ctx, "timeout", "Timeout %gs exceeded. The text \"%.200s\" %s",
			             json_number_value(time), text ? text : gone,
			             text ? "did not appear" : "did not go away");
		else if (rc == 0 && !json_is_true(value))
			rc = act_fail_timeout(ctx, "The text \"%.200s\" %s", text ? text : gone,
			                      text ? "did not appear" : "did not go away");
		else if (rc == 0)
			gb_buf_appendf(&ctx->text, "%sThe text \"%.200s\" %s",
			               ctx->text.len ? "\n" : "", text ? text : gone,
			               text ? "appeared" : "is gone");
	}
	json_object_set_new(ctx->out, "url", json_string(sess_page_url(ctx->page)));
	json_decref(value);
	return rc;
}

static const struct act_param params[] = {
	{ .name = "text", .type = ACT_T_STRING, .description = "The text to wait for" },
	{ .name = "textGone",
	  .type = ACT_T_STRING,
	  .description = "The text to wait for to disappear" },
	{ .name = "time",
	  .type = ACT_T_NUMBER,
	  .description = "The time to wait in seconds, at most 30. When combined with text or "
	                 "textGone, serves as a timeout for them instead of the default action "
	                 "timeout",
	  .minimum = 0,
	  .maximum = 30,
	  .has_range = 1 },
};

/* As Playwright MCP writes its waits (texts JSON-quoted). */
static void wait_for_code(struct act_ctx *ctx)
{
	json_t *time = json_object_get(ctx->args, "time");
	json_t *text = json_object_get(ctx->args, "text");
	json_t *gone = json_object_get(ctx->args, "textGone");
	char timeout[48] = "";
	char *q;

	if (json_is_number(time) && !json_is_string(text) && !json_is_string(gone))
		gb_buf_appendf(&ctx->code, "await new Promise(f => setTimeout(f, %g * 1000));\n",
		               json_number_value(time));
	else if (json_is_number(time))
		snprintf(timeout, sizeof(timeout), ", timeout: %g", json_number_value(time) * 1000);
	if (json_is_string(gone)) {
		q = json_dumps(gone, JSON_ENCODE_ANY);
		gb_buf_appendf(&ctx->code,
		               "await page.getByText(%s).first().waitFor({ state: 'hidden'%s });\n",
		               q ? q : "\"\"", timeout);
		free(q);
	}
	if (json_is_string(text)) {
		q = json_dumps(text, JSON_ENCODE_ANY);
		gb_buf_appendf(
		    &ctx->code,
		    "await page.getByText(%s).first().waitFor({ state: 'visible'%s });\n",
		    q ? q : "\"\"", timeout);
		free(q);
	}
}

static const struct act_tool_impl impl = {
	.run = wait_for_run,
	.shows_page = 1,
	.code = wait_for_code,
};

const struct act_def act_tool_wait_for = {
	.name = "browser_wait_for",
	.title = "Wait for",
	.description =
	    "Wait for text to appear or disappear on the page, or for a number of seconds to "
	    "pass; give at least one of text, textGone or time. With text or textGone, `time` is "
	    "the timeout. Reports what it observed. Read-only.",
	PARAMS(params),
	.effect = ACT_EFFECT_READ,
	.policy = ACT_POLICY_EXEMPT("reads the page only: it waits and looks"),
	.impl = &impl,
};

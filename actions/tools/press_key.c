/*
 * press_key.c - browser_press_key: a key pressed in the focused element.
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

static int press_key_run(struct act_ctx *ctx)
{
	const char *key = json_string_value(json_object_get(ctx->args, "key"));
	int rc = act_press_key(ctx, key, 0);

	if (rc == 0)
		gb_buf_appendf(&ctx->text, "Pressed %s", key);
	return rc;
}

static const struct act_param params[] = {
	{ .name = "key",
	  .type = ACT_T_STRING,
	  .required = 1,
	  .description = "Name of the key to press or a character to generate, such as "
	                 "`ArrowLeft` or `a`" },
	P_EXPECT,
	P_OPERATION_ID,
};

/* // Press <key>, then await page.keyboard.press('<key>'); */
static void press_key_code(struct act_ctx *ctx)
{
	const char *key = json_string_value(json_object_get(ctx->args, "key"));

	gb_buf_appendf(&ctx->code, "// Press %s\nawait page.keyboard.press(", key ? key : "");
	act_code_quote(&ctx->code, key);
	gb_buf_appendf(&ctx->code, ");\n");
}

/* As Playwright MCP: only Enter (which may submit) answers with the snapshot. */
static int press_key_no_snapshot(const struct act_ctx *ctx)
{
	const char *key = json_string_value(json_object_get(ctx->args, "key"));

	return !key || strcmp(key, "Enter") != 0;
}

static const struct act_tool_impl impl = {
	.run = press_key_run,
	.code = press_key_code,
	.no_snapshot = press_key_no_snapshot,
};

const struct act_def act_tool_press_key = {
	.name = "browser_press_key",
	.title = "Press a key",
	.description =
	    "Press a key on the keyboard in the focused element, such as `Enter`, `Escape`, "
	    "`ArrowDown` or `a`. Reports what the key started (navigation, requests, dialogs) "
	    "and "
	    "records evidence.",
	PARAMS(params),
	.effect = ACT_EFFECT_PAGE,
	.policy = ACT_POLICY(POLICY_ACT_PRESS),
	.checks_expect = 1,
	.impl = &impl,
};

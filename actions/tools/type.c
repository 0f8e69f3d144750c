/*
 * type.c - browser_type: text (or a stored secret) typed into one field, re-read from the page.
 */
#include "actions/actions-private.h"
#include "actions/codegen.h"
#include "actions/tools/params.h"

#include "cdp/cdp.h"
#include "policy/risk.h"
#include "secrets/secrets.h"
#include "sessions/sessions.h"

#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int type_run(struct act_ctx *ctx)
{
	const char *text = json_string_value(json_object_get(ctx->args, "text"));
	const char *secret = json_string_value(json_object_get(ctx->args, "secret"));
	int submit = json_is_true(json_object_get(ctx->args, "submit"));
	int slowly = json_is_true(json_object_get(ctx->args, "slowly"));
	int rc;

	/* as Playwright MCP: text that names a --secrets file's secret types it */
	if (!secret && secret_env_has(ctx->as->env_secrets, text))
		secret = text;
	if (secret) {
		if (slowly)
			return act_fail(
			    ctx, "bad_arguments",
			    "slowly cannot be used with secret: a "
			    "secret is inserted in one step, right after its field is checked");
		return act_type_secret(ctx, secret, submit);
	}
	/* without Enter to press after it, the value is judged once the page settled */
	rc = act_field_fill_text(ctx, text, slowly, !submit);
	if (rc == 0 && submit) {
		rc = act_press_key(ctx, "Enter", 0);
		gb_buf_appendf(&ctx->text, "\n- submitted with Enter");
	}
	return rc;
}

static const char *const type_one_of[] = { "text", "secret", NULL };

static const struct act_param params[] = {
	P_TARGET,
	P_ELEMENT,
	{ .name = "text",
	  .type = ACT_T_STRING,
	  .description = "Text to type into the element. Give either text or secret" },
	{ .name = "secret",
	  .type = ACT_T_STRING,
	  .description =
	      "Name of a secret of the tenant (e.g. \"SHOP_PASSWORD\") to type instead "
	      "of text: you never see its value. It is typed only if the field's frame "
	      "is on one of the secret's hosts and the field is a password, username, "
	      "email or one-time-code field (or a kind the secret allows); otherwise the "
	      "call is refused with the reason. Not with slowly" },
	{ .name = "submit",
	  .type = ACT_T_BOOLEAN,
	  .description = "Whether to submit entered text (press Enter after)" },
	{ .name = "slowly",
	  .type = ACT_T_BOOLEAN,
	  .description = "Whether to type one character at a time. Useful for triggering key "
	                 "handlers in the page. By default entire text is filled in at once." },
	P_EXPECT,
	P_OPERATION_ID,
};

/* .fill(text) or .pressSequentially(text), then .press('Enter') with
 * submit; a secret is written as its environment variable. */
static void type_code(struct act_ctx *ctx)
{
	struct act_code_args a = { 0 };
	struct act_code_args enter = { .text = "Enter" };
	struct act_code_target t;

	a.text = json_string_value(json_object_get(ctx->args, "text"));
	/* the secret typed: `secret`, or text naming a --secrets file's */
	a.secret = json_string_value(json_object_get(ctx->out, "secret"));
	if (ctx->sensitive && !a.secret) {
		/* typed into a password field: its value never shows */
		act_code_line(&ctx->code, "// typed into a password field: its value is not shown");
		a.secret = "TYPED_SECRET"; /* as the exports name it (docs/trace.md) */
	}
	act_code_target_of(ctx, &t);
	act_code_action(
	    &ctx->code, &t,
	    json_is_true(json_object_get(ctx->args, "slowly")) ? "pressSequentially" : "fill", &a);
	if (json_is_true(json_object_get(ctx->args, "submit")))
		act_code_action(&ctx->code, &t, "press", &enter);
}

/* As Playwright MCP: a fill answers without the snapshot; submit or
 * slowly (key by key, for pages that react to keys) with it. */
static int type_no_snapshot(const struct act_ctx *ctx)
{
	return !json_is_true(json_object_get(ctx->args, "submit")) &&
	       !json_is_true(json_object_get(ctx->args, "slowly"));
}

static const struct act_tool_impl impl = {
	.run = type_run,
	.needs_target = 1,
	.code = type_code,
	.no_snapshot = type_no_snapshot,
};

const struct act_def act_tool_type = {
	.name = "browser_type",
	.title = "Type text",
	.description =
	    "Type text into an editable element (input, textarea, contenteditable), replacing "
	    "its content. Checks that the element is visible, enabled and editable, then "
	    "re-reads "
	    "the field to verify the value (structuredContent.value; a value that did not stick "
	    "fails with error.code value_not_set; password fields are masked, "
	    "and typed text never appears in logs or evidence). Date, time, datetime-local, "
	    "month, week, range and color inputs take a value in their own format (date "
	    "YYYY-MM-DD, time HH:MM, datetime-local YYYY-MM-DDTHH:MM, month YYYY-MM, week "
	    "YYYY-Www, color #rrggbb) and are set as a user's choice sets them. `submit` presses "
	    "Enter "
	    "afterwards; `slowly` types key by key for pages that listen to key events. Pass "
	    "`secret` instead of `text` to type a stored secret (a password, a token) by name "
	    "without ever seeing it.",
	PARAMS(params),
	.one_of = type_one_of,
	.effect = ACT_EFFECT_PAGE,
	.policy = ACT_POLICY(POLICY_ACT_TYPE),
	.checks_expect = 1,
	.impl = &impl,
};

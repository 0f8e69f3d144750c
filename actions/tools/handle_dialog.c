/*
 * handle_dialog.c - browser_handle_dialog: the JavaScript dialog waiting on the page accepted or dismissed.
 */
#include "actions/actions-private.h"
#include "actions/tools/params.h"

#include "cdp/cdp.h"
#include "policy/risk.h"
#include "sessions/sessions.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int handle_dialog_run(struct act_ctx *ctx)
{
	const struct sess_dialog *d = sess_page_dialog(ctx->page);
	int accept = json_is_true(json_object_get(ctx->args, "accept"));
	const char *prompt = json_string_value(json_object_get(ctx->args, "promptText"));
	json_t *params;
	char type[16];
	int rc;

	if (!d)
		return act_fail(ctx, "no_dialog", "no dialog is open");
	snprintf(type, sizeof(type), "%s", d->type);
	params = json_pack("{s:b}", "accept", accept);
	if (prompt)
		json_object_set_new(params, "promptText", json_string(prompt));
	rc = act_cdp(ctx, ctx->psid, "Page.handleJavaScriptDialog", params, NULL,
	             "handling the dialog");
	if (rc == 0)
		gb_buf_appendf(&ctx->text, "%s the %s dialog", accept ? "Accepted" : "Dismissed",
		               type);
	return rc;
}

static const struct act_param params[] = {
	{ .name = "accept",
	  .type = ACT_T_BOOLEAN,
	  .required = 1,
	  .description = "Whether to accept the dialog." },
	{ .name = "promptText",
	  .type = ACT_T_STRING,
	  .description = "The text of the prompt in case of a prompt dialog." },
	P_EXPECT,
	P_OPERATION_ID,
};

static const struct act_tool_impl impl = {
	.with_dialog_open = 1,
	.run = handle_dialog_run,
	.no_snapshot = act_no_snapshot,
};

const struct act_def act_tool_handle_dialog = {
	.name = "browser_handle_dialog",
	.title = "Handle a dialog",
	.description =
	    "Accept or dismiss the JavaScript dialog (alert, confirm, prompt, beforeunload) that "
	    "is waiting on the page; a previous result's structuredContent.dialog_open shows it. "
	    "Other tools refuse to act while a dialog is open.",
	PARAMS(params),
	.effect = ACT_EFFECT_PAGE,
	.policy = ACT_POLICY(POLICY_ACT_DIALOG),
	.checks_expect = 1,
	.impl = &impl,
};

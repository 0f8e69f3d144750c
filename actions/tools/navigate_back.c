/*
 * navigate_back.c - browser_navigate_back: the current tab sent back in its history.
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

static int navigate_back_run(struct act_ctx *ctx)
{
	json_t *hist = NULL;
	json_t *entries;
	json_int_t index;
	int rc;

	rc = act_cdp(ctx, ctx->psid, "Page.getNavigationHistory", NULL, &hist,
	             "reading the history");
	if (rc < 0)
		goto out;
	index = json_integer_value(json_object_get(hist, "currentIndex"));
	entries = json_object_get(hist, "entries");
	if (index <= 0) {
		rc = act_fail(ctx, "no_history", "there is no previous page in this tab");
		goto out;
	}
	rc = act_cdp(ctx, ctx->psid, "Page.navigateToHistoryEntry",
	             json_pack("{s:O}", "entryId",
	                       json_object_get(json_array_get(entries, (size_t)index - 1), "id")),
	             NULL, "going back");
	if (rc < 0)
		goto out;
	gb_buf_appendf(&ctx->text, "Went back");
	rc = act_settle(ctx, 1);
	if (rc == 0)
		rc = 1;
out:
	json_decref(hist);
	return rc;
}

static const struct act_param params[] = {
	P_EXPECT,
	P_OPERATION_ID,
};

static void navigate_back_code(struct act_ctx *ctx)
{
	act_code_line(&ctx->code, "await page.goBack();");
}

static const struct act_tool_impl impl = {
	.run = navigate_back_run,
	.code = navigate_back_code,
	.with_file_chooser_open = 1,
};

const struct act_def act_tool_navigate_back = {
	.name = "browser_navigate_back",
	.title = "Go back",
	.description =
	    "Go back to the previous page in the current tab's history and wait for it to load. "
	    "Reports the URL before and after, so you can see whether it moved, and records "
	    "evidence.",
	PARAMS(params),
	.effect = ACT_EFFECT_PAGE,
	.policy = ACT_POLICY(POLICY_ACT_NAVIGATE),
	.checks_expect = 1,
	.impl = &impl,
};

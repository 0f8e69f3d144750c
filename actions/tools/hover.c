/*
 * hover.c - browser_hover: the mouse moved over one element.
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

static int hover_run(struct act_ctx *ctx)
{
	json_t *info = NULL;
	double x, y;
	int rc;

	rc = act_actionable(ctx, "hover", &x, &y, &info);
	if (rc == 0)
		rc = act_mouse_move(ctx, x, y);
	if (rc == 0)
		gb_buf_appendf(&ctx->text, "Hovered over %s", ctx->target.description);
	json_decref(info);
	return rc;
}

static const struct act_param params[] = {
	P_TARGET,
	P_ELEMENT,
	P_EXPECT,
	P_OPERATION_ID,
};

static void hover_code(struct act_ctx *ctx)
{
	struct act_code_target t;

	act_code_target_of(ctx, &t);
	act_code_action(&ctx->code, &t, "hover", NULL);
}

static const struct act_tool_impl impl = {
	.run = hover_run,
	.needs_target = 1,
	.precheck = "hover",
	.code = hover_code,
};

const struct act_def act_tool_hover = {
	.name = "browser_hover",
	.title = "Hover mouse",
	.description =
	    "Move the mouse over an element (after the same actionability checks as a click), "
	    "for example to open a menu or show a tooltip. Reports whether the DOM changed and "
	    "records evidence.",
	PARAMS(params),
	.effect = ACT_EFFECT_PAGE,
	.policy = ACT_POLICY(POLICY_ACT_HOVER),
	.checks_expect = 1,
	.impl = &impl,
};

/*
 * drag.c - browser_drag: drag and drop between two elements with the real
 * mouse (actions/drag.c); the verdict is what the drop target saw.
 */
#include "actions/actions-private.h"
#include "actions/tools/params.h"

#include "policy/risk.h"

#include <stdio.h>
#include <string.h>

/* The start element is the gated target: resolved here from startTarget. */
static int drag_gate(struct act_ctx *ctx)
{
	return act_resolve_target(ctx,
	                          json_string_value(json_object_get(ctx->args, "startTarget")));
}

static int drag_run(struct act_ctx *ctx)
{
	const char *end = json_string_value(json_object_get(ctx->args, "endTarget"));
	char start[sizeof(ctx->target.description)];
	json_t *info = NULL;
	double x0, y0, x1, y1;
	int rc;

	rc = act_actionable(ctx, "hover", &x0, &y0, &info);
	if (rc < 0)
		goto out;
	snprintf(start, sizeof(start), "%s", ctx->target.description);
	json_decref(info);
	info = NULL;
	rc = act_resolve_target(ctx, end);
	if (rc == 0)
		rc = act_actionable(ctx, "hover", &x1, &y1, &info);
	if (rc == 0)
		rc = act_drag_onto(ctx, x0, y0, x1, y1, start);
out:
	json_decref(info);
	return rc;
}

static const struct act_param params[] = {
	{ .name = "startElement",
	  .type = ACT_T_STRING,
	  .description = "Human-readable source element description used to obtain the "
	                 "permission to interact with the element" },
	{ .name = "startTarget", .type = ACT_T_STRING, .required = 1, .description = TARGET_DESC },
	{ .name = "endElement",
	  .type = ACT_T_STRING,
	  .description = "Human-readable target element description used to obtain the "
	                 "permission to interact with the element" },
	{ .name = "endTarget", .type = ACT_T_STRING, .required = 1, .description = TARGET_DESC },
	P_EXPECT,
	P_OPERATION_ID,
};

static const struct act_tool_impl impl = {
	.gate = drag_gate,
	.run = drag_run,
};

const struct act_def act_tool_drag = {
	.name = "browser_drag",
	.title = "Drag mouse",
	.description =
	    "Perform drag and drop between two elements with the real mouse: press on the start "
	    "element, move in steps, release over the end element. An HTML5 drag the page starts "
	    "is carried with drag events as a browser would. Both elements pass the actionability "
	    "checks and the tenant's risk rules. The verdict is read back from the page: the end "
	    "element saw the drop (HTML5) or the release over it (pointer-driven drags), "
	    "structuredContent.drop; otherwise the call fails with error.code not_dropped. "
	    "Records evidence.",
	PARAMS(params),
	.effect = ACT_EFFECT_PAGE,
	.policy = ACT_POLICY(POLICY_ACT_DRAG),
	.checks_expect = 1,
	.impl = &impl,
};

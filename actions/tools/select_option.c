/*
 * select_option.c - browser_select_option: options chosen in a <select>, re-read from the page.
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

static int select_run(struct act_ctx *ctx)
{
	return act_field_select(ctx, json_object_get(ctx->args, "values"));
}

static const struct act_param params[] = {
	P_TARGET,
	P_ELEMENT,
	{ .name = "values",
	  .type = ACT_T_STRING_ARRAY,
	  .required = 1,
	  .description = "Array of values to select in the dropdown. This can be a single value "
	                 "or multiple values." },
	P_EXPECT,
	P_OPERATION_ID,
};

/* .selectOption('v') for one value, .selectOption(['a', 'b']) for more. */
static void select_code(struct act_ctx *ctx)
{
	json_t *values = json_object_get(ctx->args, "values");
	struct act_code_args a = { 0 };
	struct act_code_target t;
	const char **list = calloc(json_array_size(values) + 1, sizeof(*list));
	size_t i;

	if (!list)
		return;
	for (i = 0; i < json_array_size(values); i++)
		list[i] = json_string_value(json_array_get(values, i));
	a.list = list;
	a.n_list = i;
	act_code_target_of(ctx, &t);
	act_code_action(&ctx->code, &t, "selectOption", &a);
	free(list);
}

static const struct act_tool_impl impl = {
	.run = select_run,
	.needs_target = 1,
	.code = select_code,
};

const struct act_def act_tool_select_option = {
	.name = "browser_select_option",
	.title = "Select option",
	.description =
	    "Select one or more options in a dropdown (<select>) by value or label, then re-read "
	    "the selection to verify it (structuredContent.value). Records evidence.",
	PARAMS(params),
	.effect = ACT_EFFECT_PAGE,
	.policy = ACT_POLICY(POLICY_ACT_SELECT),
	.checks_expect = 1,
	.impl = &impl,
};

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

/* Matches first, then selects: assigning selected = false in a single
 * select makes the browser re-select its first option. */
static const char select_js[] =
    "function(values) { const opts = [...this.options];"
    " const want = opts.filter(o => values.includes(o.value) || values.includes(o.label.trim()));"
    " if (!want.length) return { error: opts.map(o => o.value).slice(0, 20) };"
    " if (this.multiple) opts.forEach(o => { o.selected = want.includes(o); }); else "
    "want[0].selected = true;"
    " this.dispatchEvent(new Event('input', { bubbles: true })); this.dispatchEvent(new "
    "Event('change', { bubbles: true }));"
    " return { selected: opts.filter(o => o.selected).map(o => o.value), wanted: (this.multiple ? "
    "want : want.slice(0, 1)).map(o => o.value) }; }";

static int select_run(struct act_ctx *ctx)
{
	json_t *values = json_object_get(ctx->args, "values");
	json_t *info = NULL, *res = NULL;
	char *avail = NULL;
	double x, y;
	int rc;

	rc = act_actionable(ctx, "select", &x, &y, &info);
	if (rc < 0)
		goto out;
	rc = act_call_isolated_args(ctx, select_js, json_pack("[{s:O}]", "value", values), &res,
	                            "selecting options");
	if (rc < 0)
		goto out;
	if (json_object_get(res, "error")) {
		char *asked = json_dumps(values, JSON_COMPACT);

		avail = json_dumps(json_object_get(res, "error"), JSON_COMPACT);
		rc = act_fail(ctx, "no_such_option",
		              "no option of %s matches %.300s: the options are %.500s",
		              ctx->target.description, asked ? asked : "[]", avail ? avail : "[]");
		free(asked);
		goto out;
	}
	{
		json_t *sel = json_object_get(res, "selected");
		struct gb_buf joined;
		size_t i;

		gb_buf_init(&joined, 1 << 16);
		for (i = 0; i < json_array_size(sel); i++)
			gb_buf_appendf(&joined, "%s%s", i ? "," : "",
			               gb_or(json_string_value(json_array_get(sel, i)), ""));
		json_object_set_new(ctx->out, "value", json_string(joined.data ? joined.data : ""));
		gb_buf_free(&joined);
	}
	avail = json_dumps(json_object_get(res, "selected"), JSON_COMPACT);
	if (!json_equal(json_object_get(res, "selected"), json_object_get(res, "wanted"))) {
		char *wanted = json_dumps(json_object_get(res, "wanted"), JSON_COMPACT);

		/* re-read after input and change ran: the page put it back */
		json_object_set(ctx->out, "expected", json_object_get(res, "wanted"));
		json_object_set(ctx->out, "observed", json_object_get(res, "selected"));
		rc =
		    act_fail(ctx, "value_not_set",
		             "%s has %.300s selected, not %.300s as asked: the page changed the "
		             "selection back; check what it allows",
		             ctx->target.description, avail ? avail : "[]", wanted ? wanted : "[]");
		free(wanted);
		goto out;
	}
	gb_buf_appendf(&ctx->text, "Selected %s in %s", avail ? avail : "",
	               ctx->target.description);
out:
	free(avail);
	json_decref(info);
	json_decref(res);
	return rc;
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

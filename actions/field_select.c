/*
 * field_select.c - options chosen in a <select> the way
 * browser_select_option and browser_fill_form choose them: matched by
 * value or label, selected, input and change dispatched, then the
 * selection re-read from the page.
 */
#include "actions/actions-private.h"

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

int act_field_select(struct act_ctx *ctx, json_t *values)
{
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

/*
 * verify_list_visible.c - browser_verify_list_visible (testing): each of
 * the items is visible inside the list, one verdict per item.
 */
#include "actions/actions-private.h"
#include "actions/tools/params.h"

#include <stdlib.h>

/* For each item: a visible element inside the list whose text contains
 * it (whitespace collapsed, case-insensitive, as Playwright's getByText),
 * read in the isolated world: [{found, text}]. */
static const char items_js[] =
    "function(items) { const root = this.nodeType === 1 ? this : this.parentElement;"
    " const norm = (s) => (s || '').replace(/\\s+/g, ' ').trim().toLowerCase();"
    " const shown = (el) => { const r = el.getBoundingClientRect(); return r.width > 0 && "
    "r.height > 0 && getComputedStyle(el).visibility !== 'hidden'; };"
    " const all = [root, ...root.querySelectorAll('*')];"
    " return items.map((item) => { const want = norm(item);"
    "  const hit = all.filter((el) => norm(el.innerText).includes(want) && shown(el)).pop();"
    "  return hit ? { found: true, text: (hit.innerText || '').trim().slice(0, 200) } : { found: "
    "false }; }); }";

static int verify_list_run(struct act_ctx *ctx)
{
	json_t *items = json_object_get(ctx->args, "items");
	json_t *seen = NULL;
	const char *missing = NULL;
	size_t i;
	int rc;

	rc = act_call_isolated_args(ctx, items_js, json_pack("[{s:O}]", "value", items), &seen,
	                            "looking for the items");
	if (rc < 0)
		goto out;
	for (i = 0; i < json_array_size(items); i++) {
		json_t *one = json_array_get(seen, i);
		int found = json_is_true(json_object_get(one, "found"));

		act_add_verdict(ctx, "list_item_visible", json_incref(json_array_get(items, i)),
		                found ? json_incref(json_object_get(one, "text")) : NULL, found);
		if (!found && !missing)
			missing = json_string_value(json_array_get(items, i));
	}
	if (missing) {
		rc = act_fail(ctx, "verification_failed", "item \"%.200s\" is not visible in %s",
		              missing, ctx->target.description);
		goto out;
	}
	gb_buf_appendf(&ctx->text, "Verified: %zu item%s visible in %s", json_array_size(items),
	               json_array_size(items) == 1 ? "" : "s", ctx->target.description);
out:
	json_decref(seen);
	return rc;
}

static const struct act_param params[] = {
	{ .name = "element",
	  .type = ACT_T_STRING,
	  .required = 1,
	  .description = "Human-readable list description" },
	{ .name = "target",
	  .type = ACT_T_STRING,
	  .required = 1,
	  .description = "Exact target element reference that points to the list" },
	{ .name = "items",
	  .type = ACT_T_STRING_ARRAY,
	  .required = 1,
	  .description = "Items to verify" },
};

static const struct act_tool_impl impl = {
	.run = verify_list_run,
	.needs_target = 1,
};

const struct act_def act_tool_verify_list_visible = {
	.name = "browser_verify_list_visible",
	.title = "Verify list visible",
	.description = "Verify list is visible on the page: each item's text is visible inside "
	               "the list, one verdict per item (structuredContent.verdicts); a missing "
	               "item makes the result an error naming it.",
	PARAMS(params),
	.effect = ACT_EFFECT_READ,
	.policy = ACT_POLICY_EXEMPT("reads the page only: a verification"),
	.caps = "testing",
	.impl = &impl,
};

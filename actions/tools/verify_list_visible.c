/*
 * verify_list_visible.c - browser_verify_list_visible (testing): each of
 * the items is visible inside the list, one verdict per item.
 */
#include "actions/actions-private.h"
#include "actions/codegen.h"
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

/* await expect(page.locator('body')).toMatchAriaSnapshot(`- list: ...`);
 * with each item's text as found (seen, borrowed), as Playwright MCP
 * writes it. */
static void list_code(struct act_ctx *ctx, json_t *seen)
{
	struct gb_buf snap;
	const char *c;
	json_t *one;
	size_t i;

	gb_buf_init(&snap, 1 << 20);
	gb_buf_appendf(&snap, "(`\n  - list:");
	json_array_foreach(seen, i, one)
	{
		gb_buf_appendf(&snap, "\n    - listitem: \"");
		for (c = gb_or(json_string_value(json_object_get(one, "text")), ""); *c; c++) {
			if (*c == '"' || *c == '\\' || *c == '`')
				gb_buf_appendf(&snap, "\\%c", *c);
			else if (*c == '\n')
				gb_buf_appendf(&snap, "\\n");
			else
				gb_buf_appendf(&snap, "%c", *c);
		}
		gb_buf_appendf(&snap, "\"");
	}
	gb_buf_appendf(&snap, "\n  `)");
	if (snap.data) {
		gb_buf_appendf(&ctx->code,
		               "await expect(page.locator('body')).toMatchAriaSnapshot%s;\n",
		               snap.data);
	}
	gb_buf_free(&snap);
}

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
		gb_buf_appendf(&ctx->text, "- item \"%.200s\" is not visible in %s", missing,
		               ctx->target.description);
		rc = act_fail(ctx, "verification_failed", "Item \"%.200s\" not found", missing);
		ctx->error_plain = 1;
		goto out;
	}
	gb_buf_appendf(&ctx->text, "Verified: %zu item%s visible in %s", json_array_size(items),
	               json_array_size(items) == 1 ? "" : "s", ctx->target.description);
	gb_buf_appendf(&ctx->result, "Done");
	if (!ctx->as->no_code)
		list_code(ctx, seen);
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

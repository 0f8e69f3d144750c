/*
 * verify_text_visible.c - browser_verify_text_visible (testing): a text
 * is on the page where a person can see it: in a fresh snapshot, on a line
 * not marked [hidden-text].
 */
#include "actions/actions-private.h"
#include "actions/codegen.h"
#include "actions/tools/params.h"

#include <stdlib.h>
#include <string.h>

static int verify_text_run(struct act_ctx *ctx)
{
	const char *text = json_string_value(json_object_get(ctx->args, "text"));
	struct snap_stats stats = { 0 };
	struct gb_buf lines;
	json_t *matches = NULL, *m;
	const char *where = NULL;
	size_t i, hidden = 0;
	char *yaml = NULL;
	char err[512] = "";
	int truncated = 0;
	int rc;

	gb_buf_init(&lines, 1 << 20);
	rc = act_page_snapshot(ctx, NULL, 0, 0, 0, SNAP_HIDDEN_FLAG, &stats, &yaml, &truncated,
	                       NULL);
	if (rc < 0)
		goto out;
	if (act_find_in_snapshot(yaml, text, NULL, ctx->deadline_ms, &matches, &lines, err,
	                         sizeof(err)) < 0) {
		rc = act_fail(ctx, "bad_arguments", "%s", err);
		goto out;
	}
	json_array_foreach(matches, i, m)
	{
		const char *line = json_string_value(json_object_get(m, "line"));

		if (strstr(line, "[hidden-text]")) {
			hidden++;
			continue;
		}
		where = json_string_value(json_object_get(m, "ref"));
		if (!where)
			where = "";
		break;
	}
	act_add_verdict(ctx, "text_visible", json_string(text),
	                json_pack("{s:I, s:I}", "visible", (json_int_t)(where ? 1 : 0), "hidden",
	                          (json_int_t)hidden),
	                where != NULL);
	if (!where) {
		gb_buf_appendf(&ctx->text,
		               hidden
		                   ? "- \"%.200s\" is on the page only where a person cannot see it"
		                   : "- \"%.200s\" is not visible on the page",
		               text);
		rc = act_fail(ctx, "verification_failed", "Text not found");
		ctx->error_plain = 1;
		goto out;
	}
	/* the element that shows it, for the locator of the code shown */
	if (where[0] && !ctx->as->no_code) {
		if (act_resolve_target(ctx, where) == 0) {
			act_code_probe(ctx);
		} else { /* only the code shown loses a fact */
			ctx->failed = 0;
			ctx->error[0] = '\0';
			ctx->error_code[0] = '\0';
			ctx->has_target = 0;
		}
	}
	gb_buf_appendf(&ctx->text, "Verified: \"%.200s\" is visible%s%s", text,
	               where[0] ? " in " : "", where);
	gb_buf_appendf(&ctx->result, "Done");
out:
	free(yaml);
	json_decref(matches);
	gb_buf_free(&lines);
	return rc;
}

/* await expect(<locator>).toBeVisible(); as Playwright MCP writes it for
 * the element that shows the text: its role and name when the text is
 * its name (page.getByRole('heading', { name: 'Inner' })), else
 * page.getByText('<text>'); inside an iframe, through the frame's
 * locator (page.locator('iframe').contentFrame()...). */
static void verify_text_code(struct act_ctx *ctx)
{
	const char *text = json_string_value(json_object_get(ctx->args, "text"));
	struct act_code_target t;

	act_code_target_of(ctx, &t);
	if (!ctx->has_target)
		memset(&t, 0, sizeof(t));
	t.lang = ctx->as->code_lang;
	t.selector = NULL;
	t.test_id = NULL;
	t.css = NULL;
	if (!t.role || !t.name || !t.role_unique || !*t.name || strcmp(t.name, text) != 0)
		t.role = NULL;
	t.text = text;
	act_code_expect(&ctx->code, &t, NULL, ACT_ASSERT_VISIBLE, NULL);
}

static const struct act_param params[] = {
	{ .name = "text",
	  .type = ACT_T_STRING,
	  .required = 1,
	  .description = "TEXT to verify. Can be found in the snapshot like this: `- role "
	                 "\"Accessible Name\": {TEXT}` or like this: `- text: {TEXT}`" },
};

static const struct act_tool_impl impl = {
	.run = verify_text_run,
	.code = verify_text_code,
};

const struct act_def act_tool_verify_text_visible = {
	.name = "browser_verify_text_visible",
	.title = "Verify text visible",
	.description = "Verify text is visible on the page (case-insensitive; text a person "
	               "cannot see does not count). Prefer browser_verify_element_visible if "
	               "possible. The verdict is in structuredContent.verdicts; a failed "
	               "verification is an error.",
	PARAMS(params),
	.effect = ACT_EFFECT_READ,
	.policy = ACT_POLICY_EXEMPT("reads the page only: a verification"),
	.caps = "testing",
	.impl = &impl,
};

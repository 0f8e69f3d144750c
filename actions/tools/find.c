/*
 * find.c - browser_find: a fresh snapshot searched for text or a regular
 * expression (actions/find.c); the matches come with refs of that
 * snapshot, which the next call can use. (Its descriptor is
 * act_tool_find_in_page: act_tool_find is the lookup by name.)
 */
#include "actions/actions-private.h"
#include "actions/tools/params.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int find_run(struct act_ctx *ctx)
{
	const char *text = json_string_value(json_object_get(ctx->args, "text"));
	const char *regex = json_string_value(json_object_get(ctx->args, "regex"));
	struct snap_stats stats = { 0 };
	struct gb_buf snippets;
	json_t *matches = NULL;
	char *yaml = NULL;
	char err[512] = "";
	int truncated = 0;
	int rc;

	gb_buf_init(&snippets, 1 << 20);
	rc = act_snapshot_for_agent(ctx, NULL, 0, act_snapshot_hidden_mode(ctx), &stats, &yaml,
	                            &truncated);
	if (rc < 0)
		goto out;
	if (act_find_in_snapshot(yaml, text, regex, ctx->deadline_ms, &matches, &snippets, err,
	                         sizeof(err)) < 0) {
		rc = act_fail(ctx, "bad_arguments", "%s", err);
		goto out;
	}
	json_object_set_new(ctx->out, "url", json_string(sess_page_url(ctx->page)));
	json_object_set(ctx->out, "matches", matches);
	if (!json_array_size(matches)) {
		gb_buf_appendf(&ctx->result, "No matches found for %s%s%s on %s", text ? "\"" : "",
		               text ? text : regex, text ? "\"" : "", sess_page_url(ctx->page));
		goto out;
	}
	gb_buf_appendf(&ctx->result,
	               "Found %zu match%s for %s%s%s (refs usable by the next call):\n",
	               json_array_size(matches), json_array_size(matches) == 1 ? "" : "es",
	               text ? "\"" : "", text ? text : regex, text ? "\"" : "");
	act_page_content_mark(ctx);
	gb_buf_appendf(&ctx->result, "```yaml\n%s\n```", snippets.data ? snippets.data : "");
	free(ctx->as->last_snapshot);
	ctx->as->last_snapshot = yaml;
	yaml = NULL;
out:
	free(yaml);
	json_decref(matches);
	gb_buf_free(&snippets);
	return rc;
}

static const char *const find_one_of[] = { "text", "regex", NULL };

static const struct act_param params[] = {
	{ .name = "text",
	  .type = ACT_T_STRING,
	  .description = "Plain text to search for in the page snapshot (case-insensitive "
	                 "substring match). Provide either text or regex, not both." },
	{ .name = "regex",
	  .type = ACT_T_STRING,
	  .description = "Regular expression to search for in the page snapshot. Matching is "
	                 "case-sensitive by default; wrap the pattern in slashes to add flags, "
	                 "e.g. \"/error/i\" for case-insensitive. Provide either text or regex, "
	                 "not both." },
};

static const struct act_tool_impl impl = {
	.run = find_run,
};

const struct act_def act_tool_find_in_page = {
	.name = "browser_find",
	.title = "Find in page snapshot",
	.description =
	    "Search the accessibility snapshot of the current page for text or a regular "
	    "expression. Returns the matching snapshot lines under the path of their ancestors, "
	    "and structuredContent.matches with each match's ref, role and name: cheaper than "
	    "reading the whole snapshot when you only need to locate an element and its ref. "
	    "The refs are those of the snapshot just taken, usable by the next call.",
	PARAMS(params),
	.one_of = find_one_of,
	.effect = ACT_EFFECT_READ,
	.policy = ACT_POLICY_EXEMPT("reads the page's accessibility tree only"),
	.impl = &impl,
};

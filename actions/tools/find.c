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

/* The query as Playwright MCP names it: "text", or the regex as a
 * JavaScript RegExp prints ("/pattern/flags", without g). */
static void query_text(struct gb_buf *b, const char *text, const char *regex)
{
	const char *close = regex && regex[0] == '/' ? strrchr(regex + 1, '/') : NULL;
	const char *f;

	if (text) {
		gb_buf_appendf(b, "\"%s\"", text);
		return;
	}
	if (!close) {
		gb_buf_appendf(b, "/%s/", regex);
		return;
	}
	gb_buf_appendf(b, "%.*s", (int)(close - regex + 1), regex);
	for (f = close + 1; *f; f++)
		if (*f != 'g')
			gb_buf_appendf(b, "%c", *f);
}

static int find_run(struct act_ctx *ctx)
{
	const char *text = json_string_value(json_object_get(ctx->args, "text"));
	const char *regex = json_string_value(json_object_get(ctx->args, "regex"));
	struct snap_stats stats = { 0 };
	struct gb_buf snippets, query;
	json_t *matches = NULL;
	char *yaml = NULL;
	char err[512] = "";
	int truncated = 0;
	int rc;

	gb_buf_init(&snippets, 1 << 20);
	gb_buf_init(&query, 4096);
	if (!text && !regex) {
		rc = act_fail(ctx, "bad_arguments",
		              "Provide either \"text\" or \"regex\" to search for.");
		goto out;
	}
	if (text && regex) {
		rc = act_fail(ctx, "bad_arguments",
		              "Provide only one of \"text\" or \"regex\", not both.");
		goto out;
	}
	query_text(&query, text, regex);
	rc =
	    act_page_snapshot(ctx, NULL, 0, 0, 0, SNAP_HIDDEN_OFF, &stats, &yaml, &truncated, NULL);
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
		gb_buf_appendf(&ctx->result, "No matches found for %s.", query.data);
		goto out;
	}
	act_page_content_mark(ctx);
	gb_buf_appendf(&ctx->result, "Found %zu match%s for %s:\n\n%s", json_array_size(matches),
	               json_array_size(matches) == 1 ? "" : "es", query.data,
	               snippets.data ? snippets.data : "");
	free(ctx->as->last_snapshot);
	ctx->as->last_snapshot = yaml;
	yaml = NULL;
out:
	free(yaml);
	json_decref(matches);
	gb_buf_free(&snippets);
	gb_buf_free(&query);
	return rc;
}

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
	.effect = ACT_EFFECT_READ,
	.policy = ACT_POLICY_EXEMPT("reads the page's accessibility tree only"),
	.impl = &impl,
};

/*
 * console_messages.c - browser_console_messages: what the current page
 * wrote to its console and the exceptions it threw, from the session's
 * page log (actions/pagelog.c), at a level and above.
 */
#include "actions/actions-private.h"
#include "actions/console_log.h"
#include "actions/files-private.h"
#include "actions/pagelog.h"
#include "actions/tools/params.h"

#include "policy/risk.h"

#include <stdio.h>
#include <string.h>

static int console_run(struct act_ctx *ctx)
{
	const char *name = json_string_value(json_object_get(ctx->args, "level"));
	const char *filename = json_string_value(json_object_get(ctx->args, "filename"));
	int level = act_console_level_parse(name ? name : "info");
	int all = json_is_true(json_object_get(ctx->args, "all"));
	size_t total, errors, warnings, i;
	json_t *list, *m;
	struct gb_buf *text = &ctx->result;
	struct gb_buf saved;
	char path[4096];
	int rc = 0;

	if (filename && act_output_path(ctx, filename, path, sizeof(path)) < 0)
		return -1;
	if (act_page_sync(ctx) < 0)
		return -1;
	gb_buf_init(&saved, ctx->result.max_bytes);
	if (filename)
		text = &saved; /* the messages go into the file, the answer links it */
	list = act_pagelog_console(ctx->as->pagelog, ctx->psid, (enum act_console_level)level, all,
	                           &total, &errors, &warnings);
	act_secrets_scrub_json(ctx->as, list); /* a page may log what was typed */
	json_object_set_new(ctx->out, "url", json_string(sess_page_url(ctx->page)));
	json_object_set_new(ctx->out, "console",
	                    json_pack("{s:I, s:I, s:I, s:s, s:b}", "total", (json_int_t)total,
	                              "errors", (json_int_t)errors, "warnings",
	                              (json_int_t)warnings, "level", name ? name : "info", "all",
	                              all));
	json_object_set(ctx->out, "messages", list);
	gb_buf_appendf(text, "Total messages: %zu (Errors: %zu, Warnings: %zu)", total, errors,
	               warnings);
	if (json_array_size(list) != total)
		gb_buf_appendf(text, "\nReturning %zu messages for level \"%s\"",
		               json_array_size(list), name ? name : "info");
	if (json_array_size(list)) {
		act_page_content_mark(ctx);
		json_array_foreach(list, i, m)
		{
			/* Playwright MCP's line (the line counted from 0 as Playwright
			 * reports it; structuredContent's from 1) */
			gb_buf_appendf(text, "\n");
			act_console_format(text, m);
		}
	}
	if (filename) {
		char link[4400];

		gb_buf_appendf(text, "\n");
		rc = act_output_write(ctx, path, gb_or(saved.data, ""), saved.len);
		act_output_link(ctx, filename, link, sizeof(link));
		if (rc == 0)
			gb_buf_appendf(&ctx->result, "- [Console](%s)", link);
	}
	gb_buf_free(&saved);
	json_decref(list);
	return rc;
}

static const char *const level_values[] = { "error", "warning", "info", "debug", NULL };

static const struct act_param params[] = {
	{ .name = "level",
	  .type = ACT_T_STRING,
	  .description = "Level of the console messages to return. Each level includes the "
	                 "messages of more severe levels. Defaults to \"info\".",
	  .enum_values = level_values },
	{ .name = "all",
	  .type = ACT_T_BOOLEAN,
	  .description = "Return all console messages since the beginning of the session, not "
	                 "just since the last navigation. Defaults to false." },
	{ .name = "filename",
	  .type = ACT_T_STRING,
	  .description = "Filename to save the console messages to, in the server's output "
	                 "directory (--output-dir); a plain file name. If not provided, messages "
	                 "are returned as text." },
};

static const struct act_tool_impl impl = {
	.run = console_run,
};

const struct act_def act_tool_console_messages = {
	.name = "browser_console_messages",
	.title = "Get console messages",
	.description =
	    "Returns the console messages (and uncaught exceptions) of the current page "
	    "since its last navigation, at `level` and above. The session keeps the last "
	    "1000 messages. Read-only.",
	PARAMS(params),
	.effect = ACT_EFFECT_READ,
	.policy = ACT_POLICY_EXEMPT("reads what the page logged: nothing on the page changes"),
	.impl = &impl,
};

/*
 * network_requests.c - browser_network_requests: the numbered list of the
 * current page's requests since it loaded, from the session's page log
 * (actions/pagelog.c); browser_network_request shows one of them.
 */
#include "actions/actions-private.h"
#include "actions/files-private.h"
#include "actions/pagelog.h"
#include "actions/tools/params.h"

#include "policy/risk.h"

#include <regex.h>
#include <stdio.h>
#include <string.h>

#define FILTER_MAX 512

static int requests_run(struct act_ctx *ctx)
{
	const char *pattern = json_string_value(json_object_get(ctx->args, "filter"));
	int with_static = json_is_true(json_object_get(ctx->args, "static"));
	size_t hidden = 0, i;
	json_t *list, *r;
	regex_t re;
	int rc;

	if (pattern && strlen(pattern) > FILTER_MAX)
		return act_fail(ctx, "bad_arguments",
		                "argument 'filter' is longer than %d characters", FILTER_MAX);
	if (pattern) {
		rc = regcomp(&re, pattern, REG_EXTENDED | REG_NOSUB);
		if (rc != 0) {
			char why[200];

			regerror(rc, &re, why, sizeof(why));
			return act_fail(
			    ctx, "bad_arguments",
			    "argument 'filter' is not a regular expression (%s): give an "
			    "extended regex such as \"/api/.*user\"",
			    why);
		}
	}
	rc = act_page_sync(ctx);
	if (rc < 0)
		goto out;
	list = act_pagelog_requests(ctx->as->pagelog, ctx->psid, with_static, pattern ? &re : NULL,
	                            &hidden);
	act_secrets_scrub_json(ctx->as, list); /* a URL may carry what was typed */
	json_object_set_new(ctx->out, "url", json_string(sess_page_url(ctx->page)));
	json_object_set(ctx->out, "requests", list);
	json_object_set_new(ctx->out, "hidden_static", json_integer((json_int_t)hidden));
	act_page_content_mark(ctx);
	json_array_foreach(list, i, r)
	{
		gb_buf_appendf(&ctx->result, "%lld. [%s] %s",
		               (long long)json_integer_value(json_object_get(r, "index")),
		               json_string_value(json_object_get(r, "method")),
		               json_string_value(json_object_get(r, "url")));
		if (json_object_get(r, "status"))
			gb_buf_appendf(
			    &ctx->result, " => [%lld] %s",
			    (long long)json_integer_value(json_object_get(r, "status")),
			    gb_or(json_string_value(json_object_get(r, "status_text")), ""));
		else if (json_object_get(r, "failed"))
			gb_buf_appendf(&ctx->result, " => [FAILED] %s",
			               json_string_value(json_object_get(r, "failed")));
		gb_buf_appendf(&ctx->result, "\n");
	}
	if (hidden)
		gb_buf_appendf(
		    &ctx->result,
		    "\nNote: %zu static request%s not shown, run with \"static\": true to "
		    "see %s.",
		    hidden, hidden == 1 ? "" : "s", hidden == 1 ? "it" : "them");
	json_decref(list);
out:
	if (pattern)
		regfree(&re);
	return rc;
}

static const struct act_param params[] = {
	{ .name = "static",
	  .type = ACT_T_BOOLEAN,
	  .description = "Whether to include successful static resources like images, fonts, "
	                 "scripts, etc. Defaults to false." },
	{ .name = "filter",
	  .type = ACT_T_STRING,
	  .description = "Only return requests whose URL matches this regexp (e.g. "
	                 "\"/api/.*user\"; POSIX extended syntax)." },
};

static const struct act_tool_impl impl = {
	.run = requests_run,
};

const struct act_def act_tool_network_requests = {
	.name = "browser_network_requests",
	.title = "List network requests",
	.description = "Returns a numbered list of network requests since loading the page. Use "
	               "browser_network_request with the number to get full details. The session "
	               "keeps the last 500 requests; credential headers are never kept. Read-only.",
	PARAMS(params),
	.effect = ACT_EFFECT_READ,
	.policy = ACT_POLICY_EXEMPT("reads what the page requested: nothing on the page changes"),
	.impl = &impl,
};

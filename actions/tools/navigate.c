/*
 * navigate.c - browser_navigate: the current tab sent to a URL.
 */
#include "actions/actions-private.h"
#include "actions/codegen.h"
#include "actions/files-private.h"
#include "actions/tools/params.h"

#include "cdp/cdp.h"
#include "policy/risk.h"
#include "sessions/sessions.h"

#include "policy/policy.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

int act_page_url_check(struct act_ctx *ctx, const char *url)
{
	char rule[64], err[512];
	json_t *blocked = NULL;

	if (url && !strncasecmp(url, "data:", 5) &&
	    policy_tenant_settings(ctx->as->tenant_policy)->allow_data_urls)
		return 0; /* the policy allows top-level data: pages; no request leaves */
	if (policy_check_tool_url(url, rule, sizeof(rule), err, sizeof(err)) < 0) {
		json_object_set_new(ctx->out, "blocked",
		                    json_pack("[{s:s, s:s, s:s}]", "url", url ? url : "", "rule",
		                              rule, "layer", "tool"));
		return act_fail(ctx, "url_refused", "%s", err);
	}
	if (act_egress_check_url(ctx->as, url, &blocked, err, sizeof(err)) < 0) {
		json_object_set_new(ctx->out, "blocked", json_pack("[o]", blocked));
		return act_fail(ctx, "url_refused", "%s", err);
	}
	return 0;
}

/* Gate: tools refuse URLs that are not web pages (policy layer 1). */
static int navigate_gate(struct act_ctx *ctx)
{
	if (ctx->as->navigation_timeout_ms) /* --timeout-navigation: this call's deadline */
		ctx->deadline_ms = ctx->started_ms + ctx->as->navigation_timeout_ms;
	return act_page_url_check(ctx, json_string_value(json_object_get(ctx->args, "url")));
}

/* How long a navigation that ended without a document (net::ERR_ABORTED)
 * waits for the download it may have become (Playwright MCP's 3 s). */
#define NAVIGATE_DOWNLOAD_WAIT_MS 3000

int act_navigate_page(struct act_ctx *ctx, const char *url)
{
	const char *error_text;
	json_t *res = NULL;
	int rc, download = 0;

	rc = act_cdp(ctx, ctx->psid, "Page.navigate", json_pack("{s:s}", "url", url), &res,
	             "navigating");
	if (rc < 0)
		goto out;
	error_text = json_string_value(json_object_get(res, "errorText"));
	if (error_text && !strcmp(error_text, "net::ERR_ABORTED"))
		download = act_downloads_await_begin(ctx, NAVIGATE_DOWNLOAD_WAIT_MS);
	if (download < 0) {
		rc = act_fail(ctx, "download_refused",
		              "%.500s is a download, and it was refused (### Events and "
		              "structuredContent.downloads say why); the page stays as it was",
		              url);
		goto out;
	}
	if (download > 0) {
		/* the URL is a file: the browser downloads it, the page stays */
		gb_buf_appendf(&ctx->text,
		               "Navigated to %s: it is a download (the page stays as it was)", url);
		json_object_set_new(ctx->out, "navigation", json_string("download"));
		rc = 1;
		goto out;
	}
	if (error_text && error_text[0]) {
		rc = act_fail(ctx, "navigation_failed", "navigation to %.500s failed: %s", url,
		              error_text);
		goto out;
	}
	gb_buf_appendf(&ctx->text, "Navigated to %s", url);
	rc = act_settle(ctx, json_object_get(res, "loaderId") != NULL);
	ctx->rec.navigated |= json_object_get(res, "loaderId") != NULL;
	if (rc == 0)
		rc = 1; /* settled here: the pipeline must not settle again */
out:
	json_decref(res);
	return rc;
}

static int navigate_run(struct act_ctx *ctx)
{
	return act_navigate_page(ctx, json_string_value(json_object_get(ctx->args, "url")));
}

static const struct act_param params[] = {
	{ .name = "url",
	  .type = ACT_T_STRING,
	  .required = 1,
	  .description = "The URL to navigate to (http or https)" },
	P_EXPECT,
	P_OPERATION_ID,
};

/* await page.goto('<url>'); */
static void navigate_code(struct act_ctx *ctx)
{
	act_code_goto(&ctx->code, ctx->as->code_lang,
	              json_string_value(json_object_get(ctx->args, "url")));
}

static const struct act_tool_impl impl = {
	.gate = navigate_gate,
	.run = navigate_run,
	.code = navigate_code,
	.with_file_chooser_open = 1,
};

const struct act_def act_tool_navigate = {
	.name = "browser_navigate",
	.title = "Navigate to a URL",
	.description =
	    "Navigate the current tab to a URL and wait, bounded, for the page to load. Only "
	    "http and https: file:, chrome:, devtools:, javascript: and top-level data: URLs are "
	    "refused, and the tenant's network policy applies. Reports the final URL, the "
	    "main-document HTTP status, responses and console errors, and records a screenshot "
	    "as evidence. Take a browser_snapshot afterwards to get element refs.",
	PARAMS(params),
	.effect = ACT_EFFECT_PAGE,
	.policy = ACT_POLICY(POLICY_ACT_NAVIGATE),
	.checks_expect = 1,
	.impl = &impl,
};

/*
 * tabs.c - browser_tabs: tabs listed, opened, selected or closed.
 */
#include "actions/actions-private.h"
#include "actions/tools/params.h"

#include "cdp/cdp.h"
#include "policy/risk.h"
#include "sessions/sessions.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The tabs as they are now: structuredContent.tabs, and the answer's
 * ### Result as Playwright MCP lists them ("- 1: (current) [title](url)"). */
static int tabs_list(struct act_ctx *ctx)
{
	json_t *res = NULL;
	json_t *infos;
	json_t *tabs = json_array();
	size_t i, j;
	int rc;

	rc = act_cdp(ctx, NULL, "Target.getTargets", NULL, &res, "listing tabs");
	infos = json_object_get(res, "targetInfos");
	for (i = 0; rc == 0 && i < sess_page_count(ctx->sess); i++) {
		struct sess_page *p = sess_page_at(ctx->sess, i);
		const char *url = sess_page_url(p);
		const char *title = "";

		for (j = 0; j < json_array_size(infos); j++) {
			json_t *t = json_array_get(infos, j);

			if (!strcmp(gb_or(json_string_value(json_object_get(t, "targetId")), ""),
			            sess_page_target_id(p))) {
				title = gb_or(json_string_value(json_object_get(t, "title")), "");
				url = gb_or(json_string_value(json_object_get(t, "url")), url);
			}
		}
		json_array_append_new(
		    tabs, json_pack("{s:I, s:s, s:s, s:b}", "index", (json_int_t)i, "url", url,
		                    "title", title, "current", i == sess_current_index(ctx->sess)));
		gb_buf_appendf(&ctx->result, "%s- %zu:%s [%s](%s)", i ? "\n" : "", i,
		               i == sess_current_index(ctx->sess) ? " (current)" : "",
		               act_tab_title(infos, sess_page_target_id(p), url), url);
	}
	json_object_set_new(ctx->out, "tabs", tabs);
	json_decref(res);
	return rc;
}

/* Services events until the tab count is n (a closed tab detaches). */
struct count_wait {
	struct sess *s;
	size_t n;
};

static int count_reached(void *user)
{
	struct count_wait *w = user;

	return sess_page_count(w->s) == w->n;
}

static int tabs_run(struct act_ctx *ctx)
{
	const char *action = json_string_value(json_object_get(ctx->args, "action"));
	json_t *index = json_object_get(ctx->args, "index");
	char err[512];
	size_t i;

	if (!strcmp(action, "new")) {
		const char *url = json_string_value(json_object_get(ctx->args, "url"));
		int rc;

		if (sess_new_page(ctx->sess, err, sizeof(err)) < 0)
			return act_fail(ctx, "browser_error", "%s", err);
		gb_buf_appendf(&ctx->text, "Opened a new tab");
		if (url) {
			/* the new tab is current: the call goes on in it */
			act_ctx_follow_current_page(ctx);
			gb_buf_appendf(&ctx->text, "\n");
			rc = act_navigate_page(ctx, url);
			if (rc < 0 || tabs_list(ctx) < 0)
				return -1;
			return rc; /* settled with the navigation */
		}
	} else if (!strcmp(action, "select")) {
		if (!index)
			return act_fail(ctx, "bad_arguments",
			                "argument 'index' is required to select a tab");
		if (sess_select_page(ctx->sess, (size_t)json_integer_value(index), err,
		                     sizeof(err)) < 0)
			return act_fail(ctx, "no_such_tab", "%s", err);
		gb_buf_appendf(&ctx->text, "Selected tab %lld",
		               (long long)json_integer_value(index));
	} else if (!strcmp(action, "close")) {
		struct count_wait w = { ctx->sess, sess_page_count(ctx->sess) - 1 };

		i = index ? (size_t)json_integer_value(index) : sess_current_index(ctx->sess);
		if (sess_close_page(ctx->sess, i, err, sizeof(err)) < 0)
			return act_fail(ctx, "no_such_tab", "%s", err);
		cdp_service(ctx->cdp, 5000, count_reached, &w);
		gb_buf_appendf(&ctx->text, "Closed tab %zu", i);
		if (sess_page_count(ctx->sess) == 0 &&
		    sess_new_page(ctx->sess, err, sizeof(err)) < 0)
			return act_fail(ctx, "browser_error", "%s", err);
	}
	return tabs_list(ctx);
}

/* A URL only opens with a new tab, and passes the checks of
 * browser_navigate (policy layer 1, the tenant's egress) before the tab
 * is opened. */
static int tabs_gate(struct act_ctx *ctx)
{
	const char *action = json_string_value(json_object_get(ctx->args, "action"));
	const char *url = json_string_value(json_object_get(ctx->args, "url"));

	if (!url)
		return 0;
	if (strcmp(action, "new"))
		return act_fail(ctx, "bad_arguments",
		                "argument 'url' goes with action \"new\" (a tab opened at that "
		                "URL); to send the current tab elsewhere use browser_navigate");
	if (ctx->as->navigation_timeout_ms)
		ctx->deadline_ms = ctx->started_ms + ctx->as->navigation_timeout_ms;
	return act_page_url_check(ctx, url);
}

/* The risk rules on the tab change (kind other) and, for a URL, on the
 * navigation to it (kind navigate), as browser_navigate meets them. */
static int tabs_gate_parts(struct act_ctx *ctx)
{
	const struct act_gate_part navigation = { .kind = POLICY_ACT_NAVIGATE };

	if (act_gate_check(ctx) < 0)
		return -1;
	return json_object_get(ctx->args, "url") ? act_gate_check_part(ctx, &navigation) : 0;
}

static const char *const tabs_action_values[] = { "list", "new", "select", "close", NULL };

static const struct act_param params[] = {
	{ .name = "action",
	  .type = ACT_T_STRING,
	  .required = 1,
	  .description = "Operation to perform",
	  .enum_values = tabs_action_values },
	{ .name = "index",
	  .type = ACT_T_INTEGER,
	  .description = "Tab index, used for close/select. If omitted for close, current tab is "
	                 "closed.",
	  .minimum = 0,
	  .maximum = 1000,
	  .has_range = 1 },
	{ .name = "url",
	  .type = ACT_T_STRING,
	  .description = "URL to open in the new tab, used for new (http or https; checked as "
	                 "browser_navigate checks it)" },
	P_EXPECT,
	P_OPERATION_ID,
};

/* A listing changes nothing: the last screenshot stands for it (the
 * current tab may be behind a popup, where the browser draws no frames). */
/* As Playwright MCP: only a new tab opened at a URL answers with the
 * snapshot; listing, selecting and closing answer with the tabs. */
static int tabs_no_snapshot(const struct act_ctx *ctx)
{
	const char *action = json_string_value(json_object_get(ctx->args, "action"));

	return !action || strcmp(action, "new") != 0 || !json_object_get(ctx->args, "url");
}

static const struct act_tool_impl impl = {
	.no_snapshot = tabs_no_snapshot,
	.evidence_if_changed = 1,
	.with_dialog_open = 1,
	.gate = tabs_gate,
	.gate_parts = tabs_gate_parts,
	.run = tabs_run,
};

const struct act_def act_tool_tabs = {
	.name = "browser_tabs",
	.title = "Manage tabs",
	.description =
	    "List, open, select or close browser tabs. `new` opens a tab (at `url`, when given) "
	    "and "
	    "makes it current, "
	    "`select` switches to the tab at `index`, `close` closes the tab at `index` (or the "
	    "current one). Returns the tabs after the change (structuredContent.tabs).",
	PARAMS(params),
	.effect = ACT_EFFECT_PAGE,
	.policy = ACT_POLICY(POLICY_ACT_OTHER),
	.checks_expect = 1,
	.impl = &impl,
};

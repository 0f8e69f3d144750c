/*
 * tool_navigate.c - browser_navigate, browser_navigate_back, browser_tabs
 * and browser_close: moving between pages and tabs.
 */
#include "actions/actions-private.h"

#include "cdp/cdp.h"
#include "policy/policy.h"
#include "sessions/sessions.h"

#include <stdio.h>
#include <string.h>

/* Gate: tools refuse URLs that are not web pages (policy layer 1). */
static int navigate_gate(struct act_ctx *ctx)
{
	const char *url = json_string_value(json_object_get(ctx->args, "url"));
	char rule[64], err[512];

	json_t *blocked = NULL;

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

static int navigate_run(struct act_ctx *ctx)
{
	const char *url = json_string_value(json_object_get(ctx->args, "url"));
	const char *error_text;
	json_t *res = NULL;
	int rc;

	rc = act_cdp(ctx, ctx->psid, "Page.navigate", json_pack("{s:s}", "url", url), &res,
	             "navigating");
	if (rc < 0)
		goto out;
	error_text = json_string_value(json_object_get(res, "errorText"));
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

static int navigate_back_run(struct act_ctx *ctx)
{
	json_t *hist = NULL;
	json_t *entries;
	json_int_t index;
	int rc;

	rc = act_cdp(ctx, ctx->psid, "Page.getNavigationHistory", NULL, &hist,
	             "reading the history");
	if (rc < 0)
		goto out;
	index = json_integer_value(json_object_get(hist, "currentIndex"));
	entries = json_object_get(hist, "entries");
	if (index <= 0) {
		rc = act_fail(ctx, "no_history", "there is no previous page in this tab");
		goto out;
	}
	rc = act_cdp(ctx, ctx->psid, "Page.navigateToHistoryEntry",
	             json_pack("{s:O}", "entryId",
	                       json_object_get(json_array_get(entries, (size_t)index - 1), "id")),
	             NULL, "going back");
	if (rc < 0)
		goto out;
	gb_buf_appendf(&ctx->text, "Went back");
	rc = act_settle(ctx, 1);
	if (rc == 0)
		rc = 1;
out:
	json_decref(hist);
	return rc;
}

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
		const char *title = "";
		const char *url = sess_page_url(p);

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
		gb_buf_appendf(&ctx->text, "\n- %zu:%s [%s] (%s)", i,
		               i == sess_current_index(ctx->sess) ? " (current)" : "", title, url);
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
		if (sess_new_page(ctx->sess, err, sizeof(err)) < 0)
			return act_fail(ctx, "browser_error", "%s", err);
		gb_buf_appendf(&ctx->text, "Opened a new tab");
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
	} else {
		gb_buf_appendf(&ctx->text, "Tabs:");
	}
	if (strcmp(action, "list") != 0)
		gb_buf_appendf(&ctx->text, "\nTabs:");
	return tabs_list(ctx);
}

static int close_run(struct act_ctx *ctx)
{
	struct act_session *as = ctx->as;
	json_t *closed;

	if (as->profile) {
		/* a clean close: the profile's state is sealed as a new version */
		closed = act_profile_close(as, 1, "closed by browser_close");
		act_profile_describe_close(&ctx->text, closed);
		json_object_set_new(ctx->out, "profile_closed", closed);
	} else if (as->sess) {
		act_close_browser(as, "closed by browser_close");
		gb_buf_appendf(&ctx->text, "Closed the browser; the next call starts a new one");
	} else {
		gb_buf_appendf(&ctx->text, "No browser was open");
	}
	return 0;
}

const struct act_tool_impl act_tool_navigate = { "browser_navigate", navigate_gate, navigate_run,
	                                         0 };
const struct act_tool_impl act_tool_navigate_back = { "browser_navigate_back", NULL,
	                                              navigate_back_run, 0 };
const struct act_tool_impl act_tool_tabs = { "browser_tabs", NULL, tabs_run, 0 };
const struct act_tool_impl act_tool_close = { "browser_close", NULL, close_run, 0 };

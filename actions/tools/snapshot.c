/*
 * snapshot.c - browser_snapshot: the page (or one element's subtree) as an accessibility snapshot with refs.
 */
#include "actions/actions-private.h"
#include "actions/tools/params.h"

#include "cdp/cdp.h"
#include "policy/risk.h"
#include "sessions/sessions.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int snapshot_run(struct act_ctx *ctx)
{
	json_t *max = json_object_get(ctx->args, "maxChars");
	const char *target = json_string_value(json_object_get(ctx->args, "target"));
	const char *hidden = json_string_value(json_object_get(ctx->args, "hiddenText"));
	struct snap_stats stats = { 0 };
	struct snap_options opt = { 0 };
	char *clean;
	char id[17];
	struct snap_ref root;
	char *yaml = NULL;
	char err[512] = "";
	int truncated = 0;
	int rc;

	opt.page_session_id = ctx->psid;
	opt.max_chars = max ? (size_t)json_integer_value(max) : 0;
	opt.timeout_ms = act_left_ms(ctx);
	opt.frame_session = act_frame_session;
	opt.frame_session_user = ctx->sess;
	opt.hidden = hidden ? (!strcmp(hidden, "drop") ? SNAP_HIDDEN_DROP : SNAP_HIDDEN_FLAG)
	             : ctx->as->hidden_text ? (enum snap_hidden_mode)ctx->as->hidden_text
	                                    : SNAP_HIDDEN_FLAG;
	opt.stats = &stats;
	act_secrets_masked_ids(ctx->as, &opt);
	if (target && act_snapshot_find(&ctx->as->refs, target)) {
		root = *act_snapshot_find(&ctx->as->refs, target);
		root.role = NULL;
		root.name = NULL;
		opt.root = &root;
	} else if (target) {
		/* a CSS selector, or a ref the latest snapshot does not have */
		json_t *node = NULL;

		if (act_resolve_target(ctx, target) < 0)
			return -1;
		if (act_cdp(ctx, ctx->target.session_id, "DOM.describeNode",
		            json_pack("{s:s}", "objectId", ctx->target.object_id), &node,
		            "finding the subtree") < 0)
			return -1;
		memset(&root, 0, sizeof(root));
		snprintf(root.session_id, sizeof(root.session_id), "%s", ctx->target.session_id);
		root.backend_node_id = (int)json_integer_value(
		    json_object_get(json_object_get(node, "node"), "backendNodeId"));
		json_decref(node);
		opt.root = &root;
	}
	rc = act_snapshot_take(ctx->cdp, &opt, &ctx->as->refs, &yaml, &truncated, err, sizeof(err));
	if (rc < 0) {
		if (sess_check_alive(ctx->sess) < 0)
			return act_connection_failed(ctx, -CDP_ECLOSED, "taking the snapshot");
		return act_fail(ctx, "snapshot_failed", "cannot take the snapshot: %s", err);
	}
	json_object_set_new(ctx->out, "url", json_string(sess_page_url(ctx->page)));
	json_object_set_new(ctx->out, "truncated", json_boolean(truncated));
	json_object_set_new(ctx->out, "refs", json_integer((json_int_t)ctx->as->refs.n_refs));
	json_object_set_new(ctx->out, "hidden_text",
	                    json_pack("{s:s, s:I, s:I}", "mode",
	                              opt.hidden == SNAP_HIDDEN_DROP ? "drop" : "flag", "flagged",
	                              (json_int_t)stats.hidden_flagged, "dropped",
	                              (json_int_t)stats.hidden_dropped));
	json_object_set_new(ctx->out, "label_differs",
	                    json_integer((json_int_t)stats.label_differs));
	/* a value typed from a secret never enters the text kept as evidence */
	clean = act_secrets_scrub_text(ctx->as, yaml);
	if (clean) {
		free(yaml);
		yaml = clean;
	}
	gb_buf_appendf(&ctx->text, "- Page URL: %s\n", sess_page_url(ctx->page));
	act_page_content_open(ctx, "snapshot", id);
	gb_buf_appendf(&ctx->text, "- Snapshot:\n```yaml\n%s\n```", yaml);
	act_page_content_close(ctx, id);
	if (stats.hidden_flagged || stats.hidden_dropped || stats.label_differs)
		gb_buf_appendf(&ctx->text,
		               "\n- hidden text: %zu line(s) flagged, %zu left out "
		               "(hiddenText: \"%s\"); %zu label(s) differ from the visible text",
		               stats.hidden_flagged, stats.hidden_dropped,
		               opt.hidden == SNAP_HIDDEN_DROP ? "drop" : "flag",
		               stats.label_differs);
	free(ctx->as->last_snapshot);
	ctx->as->last_snapshot = yaml;
	return 0;
}

static const char *const hidden_text_values[] = { "flag", "drop", NULL };

static const struct act_param params[] = {
	P_TARGET_OPT,
	{ .name = "hiddenText",
	  .type = ACT_T_STRING,
	  .description = "Text on the page that a person would not see (hidden, off-screen, zero "
	                 "size, transparent): \"flag\" marks it [hidden-text], \"drop\" leaves it "
	                 "out. Default: the tenant's policy, else flag",
	  .enum_values = hidden_text_values },
	{ .name = "maxChars",
	  .type = ACT_T_INTEGER,
	  .description = "Longest snapshot text to return, in characters. Longer output is cut "
	                 "and ends with an explicit marker saying how much was left out. "
	                 "Default: the whole snapshot",
	  .minimum = 100,
	  .maximum = 10000000,
	  .has_range = 1 },
};

static const struct act_tool_impl impl = {
	.run = snapshot_run,
};

const struct act_def act_tool_snapshot = {
	.name = "browser_snapshot",
	.title = "Page snapshot",
	.description =
	    "Capture an accessibility snapshot of the current page (or of one element's subtree "
	    "with `target`): roles, names and refs such as [ref=e5]. Pass a ref as `target` to "
	    "browser_click, browser_type and the other element tools; take a new snapshot after "
	    "the page changes, because old refs go stale. Better than a screenshot for deciding "
	    "what to do. Read-only.",
	PARAMS(params),
	.effect = ACT_EFFECT_READ,
	.policy = ACT_POLICY_EXEMPT("reads the page only: nothing on the page changes"),
	.impl = &impl,
};

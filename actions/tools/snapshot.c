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
	json_t *depth = json_object_get(ctx->args, "depth");
	json_t *boxes = json_object_get(ctx->args, "boxes");
	const char *target = json_string_value(json_object_get(ctx->args, "target"));
	const char *hidden = json_string_value(json_object_get(ctx->args, "hiddenText"));
	const char *filename = json_string_value(json_object_get(ctx->args, "filename"));
	struct snap_stats stats = { 0 };
	struct snap_lines lines = { 0 };
	struct snap_ref root;
	const struct snap_ref *rootp = NULL;
	char *yaml = NULL;
	char path[1024];
	int truncated = 0;
	int mode = hidden ? (!strcmp(hidden, "drop") ? SNAP_HIDDEN_DROP : SNAP_HIDDEN_FLAG) : 0;
	int rc = -1;

	if (filename && act_output_path(ctx, filename, path, sizeof(path)) < 0)
		return -1;
	if (target && act_snapshot_find(&ctx->as->refs, target)) {
		root = *act_snapshot_find(&ctx->as->refs, target);
		root.role = NULL;
		root.name = NULL;
		rootp = &root;
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
		rootp = &root;
	}
	if (act_page_snapshot(ctx, rootp, max ? (size_t)json_integer_value(max) : 0,
	                      boxes ? json_is_true(boxes) : ctx->as->snapshot_boxes,
	                      depth ? (unsigned)json_integer_value(depth) : 0, mode, &stats, &yaml,
	                      &truncated, &lines) < 0)
		goto out;
	json_object_set_new(ctx->out, "url", json_string(sess_page_url(ctx->page)));
	if (stats.title_known)
		json_object_set_new(ctx->out, "title", json_string(stats.title));
	json_object_set_new(ctx->out, "truncated", json_boolean(truncated));
	json_object_set_new(ctx->out, "refs", json_integer((json_int_t)ctx->as->refs.n_refs));
	json_object_set_new(ctx->out, "hidden_text",
	                    json_pack("{s:s, s:I, s:I}", "mode",
	                              mode == SNAP_HIDDEN_DROP ||
	                                      (!mode && ctx->as->hidden_text == SNAP_HIDDEN_DROP)
	                                  ? "drop"
	                                  : "flag",
	                              "flagged", (json_int_t)stats.hidden_flagged, "dropped",
	                              (json_int_t)stats.hidden_dropped));
	json_object_set_new(ctx->out, "label_differs",
	                    json_integer((json_int_t)stats.label_differs));
	act_page_content_mark(ctx);
	if (filename) {
		if (act_output_write(ctx, path, yaml, strlen(yaml)) < 0)
			goto out;
		gb_buf_appendf(&ctx->result, "- [Snapshot](%s)", filename);
	} else {
		ctx->snapshot = strdup(yaml);
	}
	if (stats.hidden_flagged || stats.hidden_dropped || stats.label_differs)
		gb_buf_appendf(&ctx->text,
		               "- hidden text: %zu line(s) flagged, %zu left out; %zu label(s) "
		               "differ from the visible text",
		               stats.hidden_flagged, stats.hidden_dropped, stats.label_differs);
	/* the agent has seen the whole page: what changes is measured from here */
	if (!rootp && !truncated && !depth) {
		act_page_seen(ctx, yaml, &lines);
		yaml = NULL;
	} else {
		free(ctx->as->last_snapshot);
		ctx->as->last_snapshot = yaml;
		yaml = NULL;
	}
	rc = 0;
out:
	free(yaml);
	act_snapshot_lines_free(&lines);
	return rc;
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
	{ .name = "depth",
	  .type = ACT_T_INTEGER,
	  .description = "Limit the depth of the snapshot tree: nodes deeper than this are left "
	                 "out (their parents still show). Default: no limit",
	  .minimum = 1,
	  .maximum = 512,
	  .has_range = 1 },
	{ .name = "boxes",
	  .type = ACT_T_BOOLEAN,
	  .description =
	      "Include each element's bounding box as [box=x,y,width,height] (CSS "
	      "pixels in its frame's viewport). Default: the server's --snapshot-boxes" },
	{ .name = "filename",
	  .type = ACT_T_STRING,
	  .description = "Save the snapshot to this file in the server's output directory "
	                 "(--output-dir) instead of returning it inline. A plain file name" },
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

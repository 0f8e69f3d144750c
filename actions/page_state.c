/*
 * page_state.c - the page as an answer shows it: the snapshot that
 * browser_snapshot returns and that every action's answer carries
 * (snapshot_mode), and what the agent saw of it last.
 *
 * DESIGN
 *
 * One function takes a snapshot for the agent (act_page_snapshot): the
 * session's ref map, the fields that received a secret masked, the
 * session's hidden-text mode, the text scrubbed of typed secrets. The
 * explicit snapshot tool, browser_find, browser_verify_text_visible and
 * the answer of an action all use it, so refs from any answer resolve the
 * same way.
 *
 * After an action (act_answer_snapshot), snapshot_mode says what goes
 * into the answer: the whole snapshot (full), only what changed since the
 * last whole snapshot the agent saw (changed, snapshot_diff.c), or none.
 * Either way the session's view is then the page as it is now: the agent
 * has seen all of it, in this answer or an earlier one. In the full mode
 * a call whose Playwright MCP answer carries no snapshot (a fill without
 * submit, a key other than Enter: act_tool_impl.no_snapshot) answers
 * without one, as Playwright MCP does; the view stays the one shown last.
 */
#include "actions/actions-private.h"

#include "cdp/cdp.h"
#include "sessions/sessions.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int act_snapshot_mode_parse(const char *s)
{
	if (!s)
		return -1;
	if (!strcmp(s, "full"))
		return ACT_SNAPSHOT_FULL;
	if (!strcmp(s, "changed"))
		return ACT_SNAPSHOT_CHANGED;
	if (!strcmp(s, "none"))
		return ACT_SNAPSHOT_NONE;
	return -1;
}

enum snap_hidden_mode act_snapshot_hidden_mode(const struct act_ctx *ctx)
{
	return ctx->as->hidden_text ? (enum snap_hidden_mode)ctx->as->hidden_text
	                            : SNAP_HIDDEN_FLAG;
}

int act_page_snapshot(struct act_ctx *ctx, const struct snap_ref *root, size_t max_chars, int boxes,
                      unsigned depth, int hidden, struct snap_stats *stats, char **yaml,
                      int *truncated, struct snap_lines *lines)
{
	struct snap_options opt = { 0 };
	char err[512] = "";
	char *clean;
	int rc;

	*yaml = NULL;
	*truncated = 0;
	opt.page_session_id = ctx->psid;
	opt.root = root;
	opt.max_chars = max_chars;
	opt.max_depth = depth;
	opt.boxes = boxes;
	opt.timeout_ms = act_left_ms(ctx);
	opt.frame_session = act_frame_session;
	opt.frame_session_user = ctx->sess;
	opt.hidden = hidden ? (enum snap_hidden_mode)hidden : act_snapshot_hidden_mode(ctx);
	opt.stats = stats;
	opt.lines = lines;
	act_secrets_masked_ids(ctx->as, &opt);
	rc = act_snapshot_take(ctx->cdp, &opt, &ctx->as->refs, yaml, truncated, err, sizeof(err));
	if (rc < 0) {
		if (sess_check_alive(ctx->sess) < 0)
			return act_connection_failed(ctx, -CDP_ECLOSED, "taking the snapshot");
		return act_fail(ctx, "snapshot_failed", "cannot take the snapshot: %s", err);
	}
	/* a value typed from a secret never enters the text kept as evidence */
	clean = act_secrets_scrub_text(ctx->as, *yaml);
	if (clean) {
		free(*yaml);
		*yaml = clean;
	}
	return 0;
}

void act_page_seen(struct act_ctx *ctx, char *yaml, const struct snap_lines *lines)
{
	if (act_snapshot_view_set(&ctx->as->view, yaml, lines) < 0)
		act_snapshot_view_free(&ctx->as->view);
	free(ctx->as->last_snapshot);
	ctx->as->last_snapshot = yaml; /* taken */
}

int act_no_snapshot(const struct act_ctx *ctx)
{
	(void)ctx;
	return 1;
}

void act_answer_snapshot(struct act_ctx *ctx)
{
	struct snap_lines lines = { 0 };
	char *yaml = NULL;
	char *shown = NULL;
	int truncated = 0;
	int failed = ctx->failed;

	if (ctx->as->snapshot_mode == ACT_SNAPSHOT_NONE || ctx->snapshot || !ctx->sess ||
	    !ctx->page || sess_page_dialog(ctx->page) || sess_page_crashed(ctx->page))
		return;
	if (act_page_snapshot(ctx, NULL, 0, ctx->as->snapshot_boxes, 0, 0, NULL, &yaml, &truncated,
	                      &lines) < 0) {
		/* the action's outcome stands: the answer says the snapshot is missing */
		if (!failed) {
			ctx->failed = 0;
			gb_buf_appendf(&ctx->text, "\n- no snapshot after the action: %s",
			               ctx->error);
			ctx->error[0] = '\0';
			ctx->error_code[0] = '\0';
		}
		goto out;
	}
	if (ctx->as->snapshot_mode == ACT_SNAPSHOT_CHANGED) {
		shown = act_snapshot_changed(&ctx->as->view, yaml, &lines);
	} else if (ctx->as->output_dir) {
		/* as Playwright MCP with an output directory: the snapshot in a
		 * file there, the answer linking it */
		char link[4200];

		if (act_output_new_file(ctx, "page", "yml", yaml, strlen(yaml), link,
		                        sizeof(link)) < 0) {
			ctx->failed = 0;
			gb_buf_appendf(&ctx->text, "\n- no snapshot after the action: %s",
			               ctx->error);
			ctx->error[0] = '\0';
			ctx->error_code[0] = '\0';
			goto out;
		}
		if (asprintf(&shown, "- [Snapshot](%s)", link) < 0)
			shown = NULL;
		ctx->snapshot_is_link = 1;
	} else {
		shown = strdup(yaml);
	}
	if (!shown)
		goto out;
	act_page_content_mark(ctx);
	ctx->snapshot = shown;
	act_page_seen(ctx, yaml, &lines);
	yaml = NULL;
out:
	free(yaml);
	act_snapshot_lines_free(&lines);
}

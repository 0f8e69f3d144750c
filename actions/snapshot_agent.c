/*
 * snapshot_agent.c - a snapshot of the page as an agent is shown it (by
 * browser_snapshot and browser_find): the tenant's hidden-text mode, the
 * fields that received a secret masked, every value typed from a secret
 * scrubbed, and the session's refs replaced by the new ones.
 */
#include "actions/actions-private.h"

#include "cdp/cdp.h"
#include "sessions/sessions.h"

#include <stdio.h>
#include <stdlib.h>

enum snap_hidden_mode act_snapshot_hidden_mode(const struct act_ctx *ctx)
{
	return ctx->as->hidden_text ? (enum snap_hidden_mode)ctx->as->hidden_text
	                            : SNAP_HIDDEN_FLAG;
}

int act_snapshot_for_agent(struct act_ctx *ctx, const struct snap_ref *root, size_t max_chars,
                           enum snap_hidden_mode hidden, struct snap_stats *stats, char **yaml,
                           int *truncated)
{
	struct snap_options opt = { 0 };
	char err[512] = "";
	char *clean;

	*yaml = NULL;
	*truncated = 0;
	opt.page_session_id = ctx->psid;
	opt.root = root;
	opt.max_chars = max_chars;
	opt.timeout_ms = act_left_ms(ctx);
	opt.frame_session = act_frame_session;
	opt.frame_session_user = ctx->sess;
	opt.hidden = hidden;
	opt.stats = stats;
	act_secrets_masked_ids(ctx->as, &opt);
	if (act_snapshot_take(ctx->cdp, &opt, &ctx->as->refs, yaml, truncated, err, sizeof(err)) <
	    0) {
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

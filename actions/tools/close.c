/*
 * close.c - browser_close: the browser closed, leaving nothing behind.
 */
#include "actions/actions-private.h"
#include "actions/codegen.h"
#include "actions/tools/params.h"

#include "cdp/cdp.h"
#include "policy/risk.h"
#include "sessions/sessions.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

static const struct act_param params[] = {
	P_OPERATION_ID,
};

static void close_code(struct act_ctx *ctx)
{
	act_code_line(&ctx->code, "await page.close()");
}

static const struct act_tool_impl impl = {
	.run = close_run,
	.code = close_code,
};

const struct act_def act_tool_close = {
	.name = "browser_close",
	.title = "Close browser",
	.description =
	    "Close the browser: every tab, the Chromium process and its private profile "
	    "directory, leaving nothing behind. The next tool call starts a fresh browser.",
	PARAMS(params),
	.effect = ACT_EFFECT_LIFECYCLE,
	.policy = ACT_POLICY(POLICY_ACT_OTHER),
	.impl = &impl,
};

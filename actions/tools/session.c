/*
 * session.c - browser_session: the browser run on a saved profile of the tenant, and the session's egress narrowed.
 */
#include "actions/actions-private.h"
#include "actions/tools/params.h"

#include "cdp/cdp.h"
#include "policy/risk.h"
#include "sessions/sessions.h"

#include "profiles/profiles.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int session_open(struct act_ctx *ctx)
{
	struct act_session *as = ctx->as;
	const char *name = json_string_value(json_object_get(ctx->args, "profile"));
	const char *user = json_string_value(json_object_get(ctx->args, "user"));
	int readonly = json_is_true(json_object_get(ctx->args, "readonly"));
	int create = json_is_true(json_object_get(ctx->args, "create"));
	char err[1024] = "";
	int rc;

	if (!name)
		return act_fail(ctx, "bad_arguments",
		                "argument 'profile' is required to open: pass the profile's name");
	if (as->profile)
		return act_fail(ctx, "profile_open",
		                "profile %s is already open in this session: close it first "
		                "(browser_session with action \"close\")",
		                prof_lease_info(as->profile)->name);
	if (as->sess) {
		act_close_browser(as, "closed to start the browser on a profile");
		gb_buf_appendf(&ctx->text, "Closed the running browser (its tabs are gone).\n");
	}
	rc = act_profile_open(as, name, user, readonly, create, err, sizeof(err));
	if (rc < 0)
		return act_fail(ctx, act_profile_error_code(rc), "%s", err);
	if (act_launch_browser(as, err, sizeof(err)) < 0) {
		json_decref(act_profile_close(as, 0, "the browser did not start"));
		return act_fail(ctx, "launch_failed", "cannot start the browser on profile %s: %s",
		                name, err);
	}
	json_object_set_new(ctx->out, "profile", act_profile_lease_json(as->profile));
	gb_buf_appendf(
	    &ctx->text,
	    "Opened profile %s of user %s (version %lld%s); the browser runs "
	    "on it. Close it with browser_session action \"close\" to keep what changed.",
	    name, prof_lease_info(as->profile)->user,
	    (long long)prof_lease_info(as->profile)->version,
	    readonly ? ", read-only copy: nothing will be sealed back" : "");
	return 0;
}

static int session_close(struct act_ctx *ctx)
{
	json_t *save = json_object_get(ctx->args, "save");
	json_t *closed;

	if (!ctx->as->profile)
		return act_fail(ctx, "no_profile",
		                "no profile is open in this session: open one with "
		                "browser_session action \"open\"");
	closed = act_profile_close(ctx->as, save ? json_is_true(save) : 1,
	                           save && !json_is_true(save) ? "discarded by browser_session"
	                                                       : "closed by browser_session");
	act_profile_describe_close(&ctx->text, closed);
	json_object_set_new(ctx->out, "profile_closed", closed);
	if (json_is_true(json_object_get(closed, "error")))
		return act_fail(ctx, "profile_not_saved", "%s",
		                gb_or(json_string_value(json_object_get(closed, "reason")), ""));
	return 0;
}

static int session_status(struct act_ctx *ctx)
{
	struct act_session *as = ctx->as;

	if (as->profile)
		json_object_set_new(ctx->out, "profile", act_profile_lease_json(as->profile));
	if (as->profile_closed)
		json_object_set(ctx->out, "profile_closed", as->profile_closed);
	json_object_set_new(ctx->out, "browser_running", json_boolean(as->sess != NULL));
	if (as->profile)
		gb_buf_appendf(&ctx->text, "Profile %s of user %s is open (version %lld%s).",
		               prof_lease_info(as->profile)->name,
		               prof_lease_info(as->profile)->user,
		               (long long)prof_lease_info(as->profile)->version,
		               prof_lease_readonly(as->profile) ? ", read-only" : "");
	else
		gb_buf_appendf(&ctx->text, "No profile is open.");
	if (as->profile_closed) {
		gb_buf_appendf(&ctx->text, "\nLast close: ");
		act_profile_describe_close(&ctx->text, as->profile_closed);
	}
	return 0;
}

static int session_list(struct act_ctx *ctx)
{
	const char *user = json_string_value(json_object_get(ctx->args, "user"));
	json_t *list = NULL;
	json_t *p;
	char err[1024] = "";
	size_t i;
	int rc;

	rc = prof_list(ctx->as->data_dir, ctx->as->tenant, user, &list, err, sizeof(err));
	if (rc < 0)
		return act_fail(ctx, act_profile_error_code(rc), "%s", err);
	gb_buf_appendf(&ctx->text, "%zu profile(s):", json_array_size(list));
	json_array_foreach(list, i, p)
	    gb_buf_appendf(&ctx->text, "\n- %s (user %s, version %lld%s%s)",
	                   json_string_value(json_object_get(p, "name")),
	                   json_string_value(json_object_get(p, "user")),
	                   (long long)json_integer_value(json_object_get(p, "version")),
	                   json_is_true(json_object_get(p, "revoked")) ? ", revoked" : "",
	                   json_is_null(json_object_get(p, "held_by")) ? "" : ", in use");
	json_object_set_new(ctx->out, "profiles", list);
	return 0;
}

static int session_run(struct act_ctx *ctx)
{
	const char *action = json_string_value(json_object_get(ctx->args, "action"));

	if (!strcmp(action, "open"))
		return session_open(ctx);
	if (!strcmp(action, "close"))
		return session_close(ctx);
	if (!strcmp(action, "list"))
		return session_list(ctx);
	if (!strcmp(action, "narrow"))
		return act_egress_narrow_call(ctx);
	return session_status(ctx);
}

static const char *const session_action_values[] = { "open", "close",  "status",
	                                             "list", "narrow", NULL };

static const struct act_param params[] = {
	{ .name = "action",
	  .type = ACT_T_STRING,
	  .required = 1,
	  .description = "open: start the browser on a profile; close: close the browser and seal "
	                 "the profile's state as a new version (or discard it with save: false); "
	                 "status: the open profile and how the last one was closed; list: this "
	                 "tenant's profiles; narrow: restrict where this session's browser may go "
	                 "(egress)",
	  .enum_values = session_action_values },
	{ .name = "egress",
	  .type = ACT_T_OBJECT,
	  .description =
	      "narrow: {\"allow\"?: [host patterns], \"deny\"?: [host patterns], "
	      "\"allow_private\"?: [addresses]}; from now on a request must pass the "
	      "tenant's policy and this too, so it can only take away (docs/egress.md)" },
	{ .name = "profile",
	  .type = ACT_T_STRING,
	  .description = "The profile's name (open): letters, digits, '.', '_', '-'" },
	{ .name = "user",
	  .type = ACT_T_STRING,
	  .description = "Whose profile (open, list); default \"default\"" },
	{ .name = "readonly",
	  .type = ACT_T_BOOLEAN,
	  .description = "open: a private copy that is never sealed back; allowed while another "
	                 "session writes the profile" },
	{ .name = "create",
	  .type = ACT_T_BOOLEAN,
	  .description = "open: create the profile, empty, when it does not exist" },
	{ .name = "save",
	  .type = ACT_T_BOOLEAN,
	  .description = "close: seal the state as a new version (default true); false discards "
	                 "what changed" },
	P_OPERATION_ID,
};

static const struct act_tool_impl impl = {
	.run = session_run,
};

const struct act_def act_tool_session = {
	.name = "browser_session",
	.title = "Browser profile",
	.description =
	    "Run the browser on one of your tenant's saved profiles, so logins persist across "
	    "sessions. `open` starts the browser on the profile (closing a running one); `close` "
	    "closes the browser and seals the profile's state, encrypted, as a new version "
	    "(save: false discards the changes); `status` and `list` report. One session at a "
	    "time may write a profile: a second one is refused unless it asks for a read-only "
	    "copy. A browser that crashes is never sealed: the last good version stays. "
	    "`narrow` restricts where this session's browser may go, on top of the tenant's "
	    "policy.",
	PARAMS(params),
	.effect = ACT_EFFECT_LIFECYCLE,
	.policy = ACT_POLICY(POLICY_ACT_OTHER),
	.impl = &impl,
};

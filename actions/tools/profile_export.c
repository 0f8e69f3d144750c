/*
 * profile_export.c - glassbox profile export: a profile of the tenant as
 * Playwright's storageState, read in a Chromium cut off from the network
 * (storage_state.c). Driven by the CLI only, never offered to agents:
 * the state is the profile's secrets, so it leaves through
 * act_call.secret_out and is never recorded or returned.
 */
#include "actions/actions-private.h"
#include "actions/tools/params.h"

#include "evidence/audit.h"
#include "policy/risk.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_ORIGINS 500

static int export_run(struct act_ctx *ctx)
{
	struct act_session *as = ctx->as;
	const char *name = json_string_value(json_object_get(ctx->args, "profile"));
	const char *user = gb_or(json_string_value(json_object_get(ctx->args, "user")), "default");
	const char *to = gb_or(json_string_value(json_object_get(ctx->args, "to")), "stdout");
	json_t *list = json_object_get(ctx->args, "origins");
	const char *origins[MAX_ORIGINS + 1];
	struct act_config cfg = { 0 };
	json_t *state = NULL;
	char err[1024] = "";
	size_t i, n = json_array_size(list);

	if (n > MAX_ORIGINS)
		return act_fail(ctx, "bad_arguments", "at most %d origins (got %zu)", MAX_ORIGINS,
		                n);
	/* an export that cannot be recorded does not happen */
	if (!as->audit || evid_audit_check_writable(as->audit, as->tenant, err, sizeof(err)) < 0)
		return act_fail(ctx, "evidence_unavailable",
		                "refused: the export cannot be recorded in the audit trail: %s",
		                as->audit ? err : "the trail cannot be opened");
	act_keeper_record(as->keeper, EVID_AUDIT_PROFILE_EXPORTED, as->id, ctx->operation_id,
	                  json_pack("{s:s, s:s, s:s, s:I}", "profile", name, "user", user, "to", to,
	                            "origins", (json_int_t)n),
	                  0);
	act_keeper_flush(as->keeper);
	for (i = 0; i < n; i++)
		origins[i] = json_string_value(json_array_get(list, i));
	origins[n] = NULL;
	cfg.data_dir = as->data_dir;
	cfg.tenant = as->tenant;
	cfg.chromium_path = as->chromium_path;
	cfg.headless = 1;
	if (act_profile_export(&cfg, user, name, n ? origins : NULL, &state, err, sizeof(err)) < 0)
		return act_fail(ctx, "export_failed", "%s", err);
	json_object_set_new(
	    ctx->out, "cookies",
	    json_integer((json_int_t)json_array_size(json_object_get(state, "cookies"))));
	json_object_set_new(
	    ctx->out, "origins",
	    json_integer((json_int_t)json_array_size(json_object_get(state, "origins"))));
	gb_buf_appendf(&ctx->text, "Exported profile %s of user %s", name, user);
	ctx->call->secret_out = state;
	return 0;
}

static const struct act_param params[] = {
	{ .name = "profile",
	  .type = ACT_T_STRING,
	  .required = 1,
	  .description = "The profile's name" },
	{ .name = "user",
	  .type = ACT_T_STRING,
	  .description = "Whose profile; default \"default\"" },
	{ .name = "origins",
	  .type = ACT_T_STRING_ARRAY,
	  .description = "Origins whose localStorage to read besides those the profile recorded" },
	{ .name = "to",
	  .type = ACT_T_STRING,
	  .description = "Where the state goes, for the record" },
	P_OPERATION_ID,
};

static const struct act_tool_impl impl = {
	.run = export_run,
};

const struct act_def act_tool_profile_export = {
	.name = "glassbox_profile_export",
	.title = "Export a profile",
	.description =
	    "Export a profile of the tenant as Playwright storageState (glassbox profile "
	    "export).",
	PARAMS(params),
	.effect = ACT_EFFECT_LIFECYCLE,
	.policy = ACT_POLICY(POLICY_ACT_OTHER),
	.impl = &impl,
};

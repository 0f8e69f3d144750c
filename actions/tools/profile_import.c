/*
 * profile_import.c - glassbox profile import: a Playwright storageState
 * set into a profile of the tenant (created when missing) in a Chromium
 * cut off from the network, sealed as a new version (storage_state.c).
 * Driven by the CLI only, never offered to agents: the state arrives
 * through act_call.secret_in and is never recorded.
 */
#include "actions/actions-private.h"
#include "actions/tools/params.h"

#include "evidence/audit.h"

#include "policy/risk.h"

#include <stdio.h>
#include <string.h>

static int import_run(struct act_ctx *ctx)
{
	struct act_session *as = ctx->as;
	const char *name = json_string_value(json_object_get(ctx->args, "profile"));
	const char *user = gb_or(json_string_value(json_object_get(ctx->args, "user")), "default");
	json_t *state = ctx->call->secret_in;
	struct act_config cfg = { 0 };
	int64_t version = 0;
	char err[1024] = "";

	if (!json_is_object(state))
		return act_fail(ctx, "bad_arguments", "no storageState was given to import");
	cfg.data_dir = as->data_dir;
	cfg.tenant = as->tenant;
	cfg.chromium_path = as->chromium_path;
	cfg.headless = 1;
	if (act_profile_import(&cfg, user, name, state, &version, err, sizeof(err)) < 0)
		return act_fail(ctx, "import_failed", "%s", err);
	act_keeper_record(as->keeper, EVID_AUDIT_PROFILE_IMPORTED, as->id, ctx->operation_id,
	                  json_pack("{s:s, s:s, s:I, s:I, s:I}", "profile", name, "user", user,
	                            "version", (json_int_t)version, "cookies",
	                            (json_int_t)json_array_size(json_object_get(state, "cookies")),
	                            "origins",
	                            (json_int_t)json_array_size(json_object_get(state, "origins"))),
	                  0);
	json_object_set_new(ctx->out, "version", json_integer(version));
	gb_buf_appendf(&ctx->text, "Imported into profile %s of user %s: version %lld", name, user,
	               (long long)version);
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
	P_OPERATION_ID,
};

static const struct act_tool_impl impl = {
	.run = import_run,
};

const struct act_def act_tool_profile_import = {
	.name = "glassbox_profile_import",
	.title = "Import a profile",
	.description = "Import a Playwright storageState into a profile of the tenant (glassbox "
	               "profile import).",
	PARAMS(params),
	.effect = ACT_EFFECT_LIFECYCLE,
	.policy = ACT_POLICY(POLICY_ACT_OTHER),
	.impl = &impl,
};

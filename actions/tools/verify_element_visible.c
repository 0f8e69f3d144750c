/*
 * verify_element_visible.c - browser_verify_element_visible (testing): an
 * element with a role and an accessible name is on the page and visible,
 * as a verdict re-read from the page.
 */
#include "actions/actions-private.h"
#include "actions/codegen.h"
#include "actions/tools/params.h"

#include <stdio.h>

/* The most elements of one role and name looked at for a visible one. */
#define MAX_CANDIDATES 8

static int verify_element_run(struct act_ctx *ctx)
{
	const char *role = json_string_value(json_object_get(ctx->args, "role"));
	const char *name = json_string_value(json_object_get(ctx->args, "accessibleName"));
	char refs[MAX_CANDIDATES][16];
	json_t *expected = json_pack("{s:s, s:s}", "role", role, "accessibleName", name);
	size_t n = 0, i;
	int visible = 0;
	int rc;

	rc = act_role_refs(ctx, role, name, refs, MAX_CANDIDATES, &n);
	for (i = 0; rc == 0 && i < n && i < MAX_CANDIDATES && !visible; i++) {
		rc = act_resolve_target(ctx, refs[i]);
		if (rc == 0)
			rc = act_target_visible(ctx, &visible);
	}
	if (rc < 0) {
		json_decref(expected);
		return rc;
	}
	act_add_verdict(ctx, "element_visible", expected,
	                json_pack("{s:I, s:b}", "found", (json_int_t)n, "visible", visible),
	                visible);
	if (!visible && n) {
		gb_buf_appendf(&ctx->text, "- the %s \"%.200s\" is on the page but not visible",
		               role, name);
		return act_fail(ctx, "verification_failed",
		                "the %s \"%.200s\" is on the page but not visible", role, name);
	}
	if (!visible) {
		gb_buf_appendf(&ctx->text, "- no %s named \"%.200s\" is on the page", role, name);
		act_fail(ctx, "verification_failed",
		         "Element with role \"%.200s\" and accessible name \"%.200s\" not found",
		         role, name);
		ctx->error_plain = 1;
		return -1;
	}
	if (!ctx->as->no_code)
		act_code_probe(ctx); /* the locator of the element found */
	gb_buf_appendf(&ctx->text, "Verified: the %s \"%.200s\" is visible (%s)", role, name,
	               ctx->target.ref);
	gb_buf_appendf(&ctx->result, "Done");
	return 0;
}

/* await expect(<locator>).toBeVisible(); */
static void verify_element_code(struct act_ctx *ctx)
{
	struct act_code_target t;

	act_code_target_of(ctx, &t);
	act_code_expect(&ctx->code, &t, NULL, ACT_ASSERT_VISIBLE, NULL);
}

static const struct act_param params[] = {
	{ .name = "role",
	  .type = ACT_T_STRING,
	  .required = 1,
	  .description = "ROLE of the element. Can be found in the snapshot like this: `- {ROLE} "
	                 "\"Accessible Name\":`" },
	{ .name = "accessibleName",
	  .type = ACT_T_STRING,
	  .required = 1,
	  .description = "ACCESSIBLE_NAME of the element. Can be found in the snapshot like this: "
	                 "`- role \"{ACCESSIBLE_NAME}\"`" },
};

static const struct act_tool_impl impl = {
	.run = verify_element_run,
	.code = verify_element_code,
};

const struct act_def act_tool_verify_element_visible = {
	.name = "browser_verify_element_visible",
	.title = "Verify element visible",
	.description = "Verify element is visible on the page: an element with this role and "
	               "accessible name is there and visible, re-read from the page. The verdict "
	               "is in structuredContent.verdicts; a failed verification is an error.",
	PARAMS(params),
	.effect = ACT_EFFECT_READ,
	.policy = ACT_POLICY_EXEMPT("reads the page only: a verification"),
	.caps = "testing",
	.impl = &impl,
};

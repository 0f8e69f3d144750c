/*
 * generate_locator.c - browser_generate_locator (testing): a locator for
 * an element by its ARIA role and accessible name, checked to find exactly
 * that element again before it is handed out.
 */
#include "actions/actions-private.h"
#include "actions/tools/params.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The ref of the latest snapshot that names the target's node, or NULL. */
static const struct snap_ref *ref_of_target(struct act_ctx *ctx)
{
	size_t i;

	for (i = 0; i < ctx->as->refs.n_refs; i++) {
		const struct snap_ref *r = &ctx->as->refs.refs[i];

		if (r->backend_node_id == ctx->target.backend_node_id &&
		    !strcmp(r->session_id, ctx->target.session_id))
			return r;
	}
	return NULL;
}

/* s as a JavaScript string literal in single quotes, into out. */
static void js_quote(const char *s, struct gb_buf *out)
{
	gb_buf_appendf(out, "'");
	for (; *s; s++) {
		if (*s == '\'' || *s == '\\')
			gb_buf_appendf(out, "\\%c", *s);
		else
			gb_buf_append(out, s, 1);
	}
	gb_buf_appendf(out, "'");
}

static int generate_locator_run(struct act_ctx *ctx)
{
	const struct snap_ref *ref = ref_of_target(ctx);
	struct gb_buf locator, playwright;
	char role[64], *name = NULL;
	char found[2][16];
	int backend = ctx->target.backend_node_id;
	char *quoted = NULL;
	size_t n = 0;
	int unique;
	int rc = -1;

	gb_buf_init(&locator, 4096);
	gb_buf_init(&playwright, 4096);
	if (!ref || !ref->role || !ref->name || !ref->name[0]) {
		rc = act_fail(ctx, "no_locator",
		              "%s has no role and accessible name to find it by: use its ref, or a "
		              "CSS selector",
		              ctx->target.description);
		goto out;
	}
	snprintf(role, sizeof(role), "%s", ref->role);
	name = strdup(ref->name);
	if (!name) {
		rc = act_fail(ctx, "oom", "out of memory");
		goto out;
	}
	/* the locator must find exactly this element again (a new snapshot) */
	rc = act_role_refs(ctx, role, name, found, 2, &n);
	if (rc < 0)
		goto out;
	unique = n == 1 && act_snapshot_find(&ctx->as->refs, found[0]) &&
	         act_snapshot_find(&ctx->as->refs, found[0])->backend_node_id == backend;
	{
		json_t *jname = json_string(name);

		quoted = jname ? json_dumps(jname, JSON_ENCODE_ANY) : NULL;
		json_decref(jname);
	}
	gb_buf_appendf(&locator, "role=%s[name=%s]", role, quoted ? quoted : "\"\"");
	gb_buf_appendf(&playwright, "getByRole('%s', { name: ", role);
	js_quote(name, &playwright);
	gb_buf_appendf(&playwright, " })");
	act_add_verdict(ctx, "locator_unique", json_string(locator.data),
	                json_pack("{s:I}", "matches", (json_int_t)n), unique);
	if (!unique) {
		rc =
		    act_fail(ctx, "no_locator",
		             "%s matches %zu elements, not only %s: use its ref, or a CSS selector",
		             locator.data, n, ctx->target.description);
		goto out;
	}
	json_object_set_new(ctx->out, "locator", json_string(locator.data));
	json_object_set_new(ctx->out, "playwright", json_string(playwright.data));
	gb_buf_appendf(&ctx->text, "%s\n- as a target for glassbox: %s", playwright.data,
	               locator.data);
out:
	free(quoted);
	free(name);
	gb_buf_free(&locator);
	gb_buf_free(&playwright);
	return rc;
}

static const struct act_param params[] = {
	P_TARGET,
	P_ELEMENT,
};

static const struct act_tool_impl impl = {
	.run = generate_locator_run,
	.needs_target = 1,
};

const struct act_def act_tool_generate_locator = {
	.name = "browser_generate_locator",
	.title = "Create locator for element",
	.description =
	    "Generate locator for the given element to use in tests: by its ARIA role "
	    "and accessible name, as Playwright writes it (structuredContent.playwright, "
	    "getByRole(...)) and as a glassbox target (structuredContent.locator, "
	    "role=...[name=...]). It is checked to find exactly that element; when it "
	    "would find others too, the call fails.",
	PARAMS(params),
	.effect = ACT_EFFECT_READ,
	.policy = ACT_POLICY_EXEMPT("reads the page only: a locator"),
	.caps = "testing",
	.impl = &impl,
};

/*
 * verdict.c - a tool's own verdicts (the testing tools, emulate_media):
 * each check with what was expected and what the page showed, in
 * structuredContent.verdicts, the same shape as the verdicts of `expect`.
 */
#include "actions/actions-private.h"

int act_add_verdict(struct act_ctx *ctx, const char *check, json_t *expected, json_t *observed,
                    int ok)
{
	json_t *list = json_object_get(ctx->out, "verdicts");
	json_t *v = json_pack("{s:s, s:o, s:o, s:b}", "check", check, "expected",
	                      expected ? expected : json_null(), "observed",
	                      observed ? observed : json_null(), "ok", ok);

	if (!json_is_array(list)) {
		list = json_array();
		json_object_set_new(ctx->out, "verdicts", list);
	}
	json_array_append_new(list, v);
	return ok;
}

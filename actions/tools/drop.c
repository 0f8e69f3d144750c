/*
 * drop.c - browser_drop: files of the tenant's upload area, or data of
 * given MIME types, dropped onto an element as if dragged from outside
 * the page (trusted drag events, Input.dispatchDragEvent), then checked:
 * ok only when the page's drop event fired on the element, carrying them.
 */
#include "actions/actions-private.h"
#include "actions/codegen.h"
#include "actions/files-private.h"
#include "actions/tools/params.h"

#include "policy/risk.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define DROP_DATA_MAX (1u << 20) /* the data's strings together */

/* In glassbox's isolated world: the next drop event on the document,
 * whether it fell on the element, and what it carried. The page cannot
 * see or fake this record. */
static const char *const arm_js =
    "function() { const el = this; const rec = {seen: false};"
    " el.ownerDocument.addEventListener('drop', (e) => { rec.seen = true;"
    "  rec.trusted = e.isTrusted; rec.inside = el === e.target || el.contains(e.target);"
    "  rec.files = Array.from(e.dataTransfer.files, (f) => ({name: f.name, size: f.size}));"
    "  rec.types = Array.from(e.dataTransfer.types); }, {capture: true, once: true});"
    " globalThis.__glassboxDrop = rec; return true; }";
static const char *const read_js = "function() { return globalThis.__glassboxDrop || null; }";

/* The drag data: items from data (borrowed), the staged files. New. */
static json_t *drag_data(json_t *data, json_t *files)
{
	json_t *items = json_array();
	const char *mime;
	json_t *v;

	json_object_foreach(data, mime, v)
	    json_array_append_new(items, json_pack("{s:s, s:O}", "mimeType", mime, "data", v));
	/* "o" takes the reference: a borrowed files gets one of its own */
	return json_pack("{s:o, s:o, s:i}", "items", items, "files",
	                 files ? json_incref(files) : json_array(), "dragOperationsMask", 1);
}

static int check_data(struct act_ctx *ctx, json_t *data)
{
	size_t total = 0;
	const char *mime;
	json_t *v;

	json_object_foreach(data, mime, v)
	{
		if (!json_is_string(v))
			return act_fail(
			    ctx, "bad_arguments",
			    "argument 'data' maps MIME types to strings: data[\"%.80s\"] is "
			    "not a string",
			    mime);
		if (!mime[0] || strlen(mime) > 100 || strchr(mime, ' '))
			return act_fail(ctx, "bad_arguments",
			                "data key \"%.80s\" is not a MIME type such as text/plain",
			                mime);
		total += json_string_length(v);
	}
	if (total > DROP_DATA_MAX)
		return act_fail(ctx, "bad_arguments", "the data is larger than %u bytes",
		                DROP_DATA_MAX);
	return 0;
}

static int dispatch(struct act_ctx *ctx, const char *type, double x, double y, json_t *dd)
{
	act_observe_before_wait(ctx);
	return act_cdp(ctx, ctx->psid, "Input.dispatchDragEvent",
	               json_pack("{s:s, s:f, s:f, s:O, s:i}", "type", type, "x", x, "y", y, "data",
	                         dd, "modifiers", 0),
	               NULL, "dropping onto the element");
}

/* 1 when rec (the drop the page saw) carried the files of info (may be
 * NULL) and a type for each key of data (may be NULL). */
static int carried(json_t *rec, json_t *info, json_t *data)
{
	json_t *got = json_object_get(rec, "files");
	json_t *types = json_object_get(rec, "types");
	const char *mime;
	json_t *v;
	size_t i, k;

	json_object_foreach(data, mime, v)
	{
		for (k = 0; k < json_array_size(types); k++)
			if (!strcmp(gb_or(json_string_value(json_array_get(types, k)), ""), mime))
				break;
		if (k == json_array_size(types))
			return 0;
	}
	if (json_array_size(got) != json_array_size(info))
		return 0;
	for (i = 0; i < json_array_size(info); i++)
		if (strcmp(gb_or(json_string_value(json_object_get(json_array_get(got, i), "name")),
		                 ""),
		           json_string_value(json_object_get(json_array_get(info, i), "name"))))
			return 0;
	return 1;
}

static int drop_run(struct act_ctx *ctx)
{
	json_t *paths = json_object_get(ctx->args, "paths");
	json_t *data = json_object_get(ctx->args, "data");
	json_t *files = NULL, *info = NULL, *dd = NULL, *armed = NULL, *rec = NULL, *pos = NULL;
	double x, y;
	int rc = -1;

	if (!json_array_size(paths) && !json_object_size(data))
		return act_fail(ctx, "bad_arguments",
		                "At least one of \"paths\" or \"data\" must be provided.");
	if (data && check_data(ctx, data) < 0)
		return -1;
	if (json_array_size(paths) && act_uploads_stage(ctx, paths, &files, &info) < 0)
		return -1;
	if (act_actionable(ctx, "hover", &x, &y, &pos) < 0 ||
	    act_call_in_isolated_world(ctx, arm_js, &armed, "watching for the drop") < 0)
		goto out;
	dd = drag_data(data, files);
	if (dispatch(ctx, "dragEnter", x, y, dd) < 0 || dispatch(ctx, "dragOver", x, y, dd) < 0 ||
	    dispatch(ctx, "drop", x, y, dd) < 0)
		goto out;
	if (info)
		act_uploads_record(ctx, info, "drop");
	if (act_call_in_isolated_world(ctx, read_js, &rec, "reading the drop back") < 0)
		goto out;
	json_object_set(ctx->out, "drop", rec);
	if (!json_is_true(json_object_get(rec, "seen")) ||
	    !json_is_true(json_object_get(rec, "inside"))) {
		act_fail(ctx, "missed",
		         "the drop did not reach %s: %s; take a snapshot, check that nothing "
		         "covers it",
		         ctx->target.description,
		         json_is_true(json_object_get(rec, "seen"))
		             ? "it fell on another element"
		             : "no drop event fired (the page "
		               "did not accept the drag)");
		goto out;
	}
	if (!carried(rec, info, data)) {
		act_fail(ctx, "not_set", "the drop on %s did not carry the files and data given",
		         ctx->target.description);
		goto out;
	}
	gb_buf_appendf(&ctx->text, "Dropped %zu file%s and %zu data item%s onto %s",
	               json_array_size(info), json_array_size(info) == 1 ? "" : "s",
	               json_object_size(data), json_object_size(data) == 1 ? "" : "s",
	               ctx->target.description);
	rc = 0;
out:
	json_decref(pos);
	json_decref(armed);
	json_decref(rec);
	json_decref(dd);
	json_decref(files);
	json_decref(info);
	return rc;
}

static const struct act_param params[] = {
	P_TARGET,
	P_ELEMENT,
	{ .name = "paths",
	  .type = ACT_T_STRING_ARRAY,
	  .description = "Files to drop onto the element: names of files in the tenant's upload "
	                 "area (glassbox files put) or glassbox://upload/NAME; never paths on the "
	                 "host." },
	{ .name = "data",
	  .type = ACT_T_OBJECT,
	  .description =
	      "Data to drop, as a map of MIME type to string value (e.g. "
	      "{\"text/plain\": \"hello\", \"text/uri-list\": \"https://example.com\"})." },
	P_EXPECT,
	P_OPERATION_ID,
};

/* await <locator>.drop({ data: {...}, files: ... }); as Playwright MCP
 * writes it (one path as a string, several as an array). */
static void drop_code(struct act_ctx *ctx)
{
	json_t *paths = json_object_get(ctx->args, "paths");
	json_t *data = json_object_get(ctx->args, "data");
	struct act_code_target t;
	struct gb_buf loc;
	char *dump;
	size_t i;

	gb_buf_init(&loc, 1 << 16);
	act_code_target_of(ctx, &t);
	if (act_code_locator(&loc, &t) < 0)
		goto out;
	gb_buf_appendf(&ctx->code, "await %s.drop({", loc.data);
	if (json_object_size(data)) {
		dump = json_dumps(data, JSON_COMPACT | JSON_SORT_KEYS);
		gb_buf_appendf(&ctx->code, "\n  data: %s%s", dump ? dump : "{}",
		               json_array_size(paths) ? "," : "");
		free(dump);
	}
	if (json_array_size(paths) == 1) {
		gb_buf_appendf(&ctx->code, "\n  files: ");
		act_code_quote(&ctx->code, json_string_value(json_array_get(paths, 0)));
	} else if (json_array_size(paths)) {
		gb_buf_appendf(&ctx->code, "\n  files: [");
		for (i = 0; i < json_array_size(paths); i++) {
			gb_buf_appendf(&ctx->code, "%s", i ? ", " : "");
			act_code_quote(&ctx->code, json_string_value(json_array_get(paths, i)));
		}
		gb_buf_appendf(&ctx->code, "]");
	}
	gb_buf_appendf(&ctx->code, "\n});\n");
out:
	gb_buf_free(&loc);
}

static const struct act_tool_impl impl = {
	.run = drop_run,
	.needs_target = 1,
	.code = drop_code,
};

const struct act_def act_tool_drop = {
	.name = "browser_drop",
	.title = "Drop files or data onto an element",
	.description =
	    "Drop files or MIME-typed data onto an element, as if dragged from outside "
	    "the page. At least one of \"paths\" or \"data\" must be provided. Files come "
	    "from the tenant's upload area; ok only when the element's drop event saw "
	    "them.",
	PARAMS(params),
	.effect = ACT_EFFECT_PAGE,
	.policy = ACT_POLICY(POLICY_ACT_UPLOAD),
	.checks_expect = 1,
	.impl = &impl,
};

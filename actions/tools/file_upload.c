/*
 * file_upload.c - browser_file_upload: files of the tenant's upload area
 * set on the file input whose chooser the page opened (or on a file
 * input named by `target`), then read back from the input.
 *
 * The browser shows no chooser: a click on <input type=file> reports
 * Page.fileChooserOpened (sessions/targets.c), which the page log keeps
 * until this tool answers it. The input is resolved before the gate, so
 * the risk rules see the element (kind "upload"; a rule can forbid it on
 * a host), and the upload is an artifact named by the call's audit
 * record (actions/uploads.c).
 */
#include "actions/actions-private.h"
#include "actions/files-private.h"
#include "actions/pagelog.h"
#include "actions/tools/params.h"

#include "policy/risk.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* What the input is: {file: bool, multiple: bool, files: [{name, size}]}. */
static const char *const input_js =
    "function() { const f = this instanceof HTMLInputElement && this.type === 'file';"
    " return {file: f, multiple: f && this.multiple,"
    "  files: f ? Array.from(this.files, (x) => ({name: x.name, size: x.size})) : []}; }";

/* Before the gate: the input to set files on, as the call's target. */
static int upload_gate(struct act_ctx *ctx)
{
	json_t *res = NULL, *info = NULL;
	char sid[64];
	int node = 0, multiple = 0;
	int rc = 0;

	if (!ctx->has_target) {
		if (!act_pagelog_chooser(ctx->as->pagelog, sid, sizeof(sid), &node, &multiple))
			return act_fail(ctx, "no_file_chooser",
			                "The tool \"browser_file_upload\" can only be used when "
			                "there is related modal state present. No file chooser is "
			                "open: click the file input (or the control that opens it) "
			                "first, or name the input with `target`");
		if (act_cdp(ctx, sid, "DOM.resolveNode", json_pack("{s:i}", "backendNodeId", node),
		            &res, "finding the file input of the chooser") < 0)
			return -1;
		memset(&ctx->target, 0, sizeof(ctx->target));
		snprintf(ctx->target.session_id, sizeof(ctx->target.session_id), "%s", sid);
		snprintf(ctx->target.object_id, sizeof(ctx->target.object_id), "%s",
		         gb_or(json_string_value(
		                   json_object_get(json_object_get(res, "object"), "objectId")),
		               ""));
		ctx->target.backend_node_id = node;
		snprintf(ctx->target.description, sizeof(ctx->target.description),
		         "the file input whose chooser is open");
		ctx->has_target = 1;
		json_decref(res);
	}
	rc = act_call_in_isolated_world(ctx, input_js, &info, "reading the file input");
	if (rc == 0 && !json_is_true(json_object_get(info, "file")))
		rc =
		    act_fail(ctx, "bad_target",
		             "%s is not a file input (<input type=file>): name the input, or click "
		             "it to open its chooser",
		             ctx->target.description);
	json_decref(info);
	return rc;
}

/* 1 when the input now holds exactly the files of info, by name and size. */
static int input_holds(json_t *got, json_t *info)
{
	size_t i;

	if (json_array_size(got) != json_array_size(info))
		return 0;
	for (i = 0; i < json_array_size(info); i++) {
		json_t *g = json_array_get(got, i), *w = json_array_get(info, i);

		if (strcmp(gb_or(json_string_value(json_object_get(g, "name")), ""),
		           json_string_value(json_object_get(w, "name"))) ||
		    json_integer_value(json_object_get(g, "size")) !=
		        json_integer_value(json_object_get(w, "size")))
			return 0;
	}
	return 1;
}

static int upload_run(struct act_ctx *ctx)
{
	json_t *paths = json_object_get(ctx->args, "paths");
	const char *how = json_object_get(ctx->args, "target") ? "file_input" : "file_chooser";
	json_t *files = NULL, *info = NULL, *now = NULL;
	size_t i;
	int rc = -1;

	if (!paths) { /* Playwright: no paths cancels the chooser */
		char sid[64];
		int node, multiple;
		int open =
		    act_pagelog_chooser(ctx->as->pagelog, sid, sizeof(sid), &node, &multiple);

		act_pagelog_chooser_done(ctx->as->pagelog);
		gb_buf_appendf(&ctx->text, "%s; no file was set",
		               open ? "The file chooser was dismissed" : "No paths were given");
		json_object_set_new(ctx->out, "uploads", json_array());
		return 0;
	}
	if (act_uploads_stage(ctx, paths, &files, &info) < 0)
		return -1;
	if (act_call_in_isolated_world(ctx, input_js, &now, "reading the file input") < 0)
		goto out;
	if (json_array_size(files) > 1 && !json_is_true(json_object_get(now, "multiple"))) {
		act_fail(ctx, "bad_arguments",
		         "%s takes one file, and %zu were given: give one, or use an input with "
		         "the multiple attribute",
		         ctx->target.description, json_array_size(files));
		goto out;
	}
	json_decref(now);
	now = NULL;
	if (act_cdp(ctx, ctx->target.session_id, "DOM.setFileInputFiles",
	            json_pack("{s:O, s:s}", "files", files, "objectId", ctx->target.object_id),
	            NULL, "setting the files") < 0)
		goto out;
	act_pagelog_chooser_done(ctx->as->pagelog);
	act_uploads_record(ctx, info, how);
	/* ok only when the input holds them now, as re-read from the page */
	if (act_call_in_isolated_world(ctx, input_js, &now, "reading the files back") < 0)
		goto out;
	if (!input_holds(json_object_get(now, "files"), info)) {
		act_fail(ctx, "not_set",
		         "the files were handed to %s, but it does not hold them now (a script of "
		         "the page may have cleared it): take a snapshot and check",
		         ctx->target.description);
		goto out;
	}
	gb_buf_appendf(&ctx->text, "Set %zu file%s on %s:", json_array_size(info),
	               json_array_size(info) == 1 ? "" : "s", ctx->target.description);
	for (i = 0; i < json_array_size(info); i++) {
		json_t *f = json_array_get(info, i);

		gb_buf_appendf(&ctx->text, "\n- %s (%lld bytes, %s, sha256 %s)",
		               json_string_value(json_object_get(f, "name")),
		               (long long)json_integer_value(json_object_get(f, "size")),
		               json_string_value(json_object_get(f, "mime")),
		               json_string_value(json_object_get(f, "sha256")));
	}
	rc = 0;
out:
	json_decref(now);
	json_decref(files);
	json_decref(info);
	return rc;
}

static const struct act_param params[] = {
	{ .name = "paths",
	  .type = ACT_T_STRING_ARRAY,
	  .description = "The files to upload: names of files in the tenant's upload area (put "
	                 "there with `glassbox files put`), or their resource URIs "
	                 "glassbox://upload/NAME; a path on the host only inside a dir of the "
	                 "policy's files.upload_dirs. Can be single file or multiple files. If "
	                 "omitted, file chooser is cancelled." },
	{ .name = "target",
	  .type = ACT_T_STRING,
	  .description = "The file input to set the files on, when no file chooser is open (a "
	                 "ref from browser_snapshot or a selector); by default the input whose "
	                 "chooser the page opened" },
	P_ELEMENT,
	P_EXPECT,
	P_OPERATION_ID,
};

/* await fileChooser.setFiles(["..."]) as Playwright MCP writes it (the
 * paths as given, JSON). */
static void upload_code(struct act_ctx *ctx)
{
	json_t *paths = json_object_get(ctx->args, "paths");
	char *dump = paths ? json_dumps(paths, JSON_COMPACT) : NULL;

	gb_buf_appendf(&ctx->code, "await fileChooser.setFiles(%s)\n", dump ? dump : "undefined");
	free(dump);
}

static const struct act_tool_impl impl = {
	.gate = upload_gate,
	.code = upload_code,
	.run = upload_run,
	.needs_target = 2,
	.with_file_chooser_open = 1,
};

const struct act_def act_tool_file_upload = {
	.name = "browser_file_upload",
	.title = "Upload files",
	.description =
	    "Upload one or multiple files from the tenant's upload area to the file input whose "
	    "chooser is open (click the input first) or to the input named by `target`. The "
	    "files are read back from the input, hashed and recorded; policy can refuse uploads "
	    "(files.uploads) or hold them for approval on a host (risk kind \"upload\").",
	PARAMS(params),
	.effect = ACT_EFFECT_PAGE,
	.policy = ACT_POLICY(POLICY_ACT_UPLOAD),
	.checks_expect = 1,
	.impl = &impl,
};

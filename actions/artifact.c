/*
 * artifact.c - files a tool hands back (a PDF of the page, a request's
 * body): stored content-addressed as artifacts of the call, linked from
 * its result, named in the audit log; and the round trip that brings a
 * page's events in before a tool reads what the page did.
 */
#include "actions/actions-private.h"
#include "actions/files-private.h"

#include "evidence/audit.h"

#include <stdio.h>
#include <string.h>

int act_keep_artifact(struct act_ctx *ctx, const char *kind, const char *mime,
                      const unsigned char *data, size_t len, char *sha)
{
	struct evid_meta meta = { 0 };
	struct evid_ref ref;
	json_t *list, *args;
	char err[512], uri[96];
	int rc;

	args = act_redacted_args(ctx);
	meta.tenant = ctx->as->tenant;
	meta.kind = kind;
	meta.mime = mime;
	meta.session_id = ctx->sess ? sess_id(ctx->sess) : NULL;
	meta.operation_id = ctx->operation_id;
	meta.tool = ctx->def->name;
	meta.url = ctx->page ? sess_page_url(ctx->page) : NULL;
	meta.arguments = args;
	rc = evid_store_put(ctx->as->store, &meta, data, len, &ref, err, sizeof(err));
	json_decref(args);
	if (rc < 0)
		return act_fail(ctx, "evidence_failed", "the %s could not be kept: %s", kind, err);
	if (sha)
		snprintf(sha, 65, "%s", ref.sha256);
	snprintf(uri, sizeof(uri), "glassbox://artifact/%s", ref.sha256);
	list = json_object_get(ctx->out, "evidence");
	if (!list) {
		list = json_array();
		json_object_set_new(ctx->out, "evidence", list);
	}
	json_array_append_new(list, json_pack("{s:s, s:s, s:s, s:s, s:I}", "kind", kind, "sha256",
	                                      ref.sha256, "uri", uri, "mime", mime, "size",
	                                      (json_int_t)len));
	json_array_append_new(ctx->content,
	                      json_pack("{s:s, s:s, s:s, s:s}", "type", "resource_link", "uri", uri,
	                                "name", kind, "mimeType", mime));
	act_keeper_record_artifacts(ctx->as->keeper, EVID_AUDIT_EVIDENCE_KEPT, meta.session_id,
	                            ctx->operation_id,
	                            json_pack("{s:s, s:s}", "what", kind, "tool", ctx->def->name),
	                            json_pack("[o]", evid_artifact_json(kind, mime, &ref, 1)));
	return 0;
}

int act_page_sync(struct act_ctx *ctx)
{
	json_t *v = NULL;
	int rc = act_eval(ctx, "0", &v, "reading what the page did");

	json_decref(v);
	return rc;
}

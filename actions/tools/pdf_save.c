/*
 * pdf_save.c - browser_pdf_save: the current page printed as a PDF
 * (Page.printToPDF), kept as an artifact of the call and linked from its
 * result; nothing is written outside the data dir. Capability "pdf".
 */
#include "actions/actions-private.h"
#include "actions/files-private.h"
#include "actions/tools/params.h"

#include "policy/risk.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int pdf_run(struct act_ctx *ctx)
{
	const char *filename = json_string_value(json_object_get(ctx->args, "filename"));
	unsigned char *pdf = NULL;
	json_t *res = NULL;
	const char *b64;
	size_t len = 0;
	char sha[65];
	int rc;

	rc = act_cdp(ctx, ctx->psid, "Page.printToPDF",
	             json_pack("{s:b, s:b}", "printBackground", 1, "preferCSSPageSize", 1), &res,
	             "printing the page");
	if (rc < 0)
		goto out;
	b64 = json_string_value(json_object_get(res, "data"));
	if (!b64 || evid_base64_decode(b64, strlen(b64), &pdf, &len) < 0 || len < 5 ||
	    memcmp(pdf, "%PDF-", 5) != 0) {
		rc = act_fail(ctx, "browser_error", "the browser did not return a PDF");
		goto out;
	}
	rc = act_keep_artifact(ctx, "pdf", "application/pdf", pdf, len, sha);
	if (rc < 0)
		goto out;
	json_object_set_new(ctx->out, "url", json_string(sess_page_url(ctx->page)));
	json_object_set_new(ctx->out, "pdf",
	                    json_pack("{s:s, s:I, s:s, s:s+}", "name",
	                              filename ? filename : "page.pdf", "size", (json_int_t)len,
	                              "sha256", sha, "uri", "glassbox://artifact/", sha));
	gb_buf_appendf(&ctx->text, "Saved the page as a PDF (%zu bytes): glassbox://artifact/%s",
	               len, sha);
out:
	free(pdf);
	json_decref(res);
	return rc;
}

static const struct act_param params[] = {
	{ .name = "filename",
	  .type = ACT_T_STRING,
	  .description = "A name for the PDF (default page.pdf). It is kept as an artifact of "
	                 "the call, readable with resources/read; nothing is written to the "
	                 "host's file system." },
};

static const struct act_tool_impl impl = {
	.run = pdf_run,
};

const struct act_def act_tool_pdf_save = {
	.name = "browser_pdf_save",
	.title = "Save as PDF",
	.description = "Save page as PDF: the current page printed with its backgrounds, kept as "
	               "an artifact (glassbox://artifact/<sha256>) of the call. Read-only.",
	PARAMS(params),
	.effect = ACT_EFFECT_READ,
	.policy = ACT_POLICY_EXEMPT("prints the page to a file it keeps: nothing on the page "
	                            "changes"),
	.caps = "pdf",
	.impl = &impl,
};

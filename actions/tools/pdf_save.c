/*
 * pdf_save.c - browser_pdf_save: the current page printed as a PDF
 * (Page.printToPDF), kept as an artifact of the call and, when the server
 * has an output directory, written there too (output_dir.c); linked from
 * its result. Capability "pdf".
 */
#include "actions/actions-private.h"
#include "actions/codegen.h"
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
	char sha[65], path[4096], link[4096];
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
	/* with an output directory, the file goes there too (Playwright MCP's
	 * page-<time>.pdf, or the plain name given) */
	if (ctx->as->output_dir && filename) {
		rc = act_output_path(ctx, filename, path, sizeof(path));
		if (rc == 0)
			rc = act_output_write(ctx, path, pdf, len);
		if (rc == 0)
			act_output_link(ctx, filename, link, sizeof(link));
	} else if (ctx->as->output_dir) {
		rc = act_output_new_file(ctx, "page", "pdf", pdf, len, link, sizeof(link));
	} else {
		snprintf(link, sizeof(link), "glassbox://artifact/%s", sha);
	}
	if (rc < 0)
		goto out;
	gb_buf_appendf(&ctx->result, "- [Page as pdf](%s)", link);
	if (!ctx->as->no_code) {
		gb_buf_appendf(&ctx->code, "await page.pdf({\n  path: ");
		act_code_quote(&ctx->code, link);
		gb_buf_appendf(&ctx->code, "\n});\n");
	}
out:
	free(pdf);
	json_decref(res);
	return rc;
}

static const struct act_param params[] = {
	{ .name = "filename",
	  .type = ACT_T_STRING,
	  .description = "File name to save the pdf to, a plain name inside the server's output "
	                 "directory (--output-dir); defaults to page-{timestamp}.pdf there. The "
	                 "PDF is kept as an artifact of the call as well, readable with "
	                 "resources/read; without an output directory nothing is written to "
	                 "the host's file system." },
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

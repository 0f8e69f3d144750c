/*
 * network_request.c - browser_network_request: the headers and bodies of
 * one request of the page log (actions/pagelog.c), by the number
 * browser_network_requests shows. A body is stored as an artifact (at
 * most BODY_MAX bytes) and, when it is text, shown up to a bound. What
 * leaves is scrubbed: credential headers were never kept, and values
 * typed from secrets are replaced (act_secrets_scrub_*).
 */
#include "actions/actions-private.h"
#include "actions/files-private.h"
#include "actions/pagelog.h"
#include "actions/tools/params.h"

#include "cdp/cdp.h"
#include "policy/risk.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define BODY_MAX (4u * 1024u * 1024u) /* a body kept as an artifact */
#define BODY_TEXT_MAX 65536           /* a body shown when it is the part asked for */
#define BODY_PREVIEW 4096             /* a body shown with the full details */

static int is_textual(const char *mime)
{
	return mime && (!strncmp(mime, "text/", 5) || strstr(mime, "json") || strstr(mime, "xml") ||
	                strstr(mime, "javascript") || strstr(mime, "x-www-form-urlencoded"));
}

/* A body of e (borrowed): the request's (response 0) or the response's.
 * 0 with *data (malloc'd) and *len, 1 when there is none to show (why
 * says so), -1 with the call failed. */
static int fetch_body(struct act_ctx *ctx, json_t *e, int response, unsigned char **data,
                      size_t *len, char *why, size_t whylen)
{
	const char *sid = json_string_value(json_object_get(e, "session_id"));
	const char *rid = json_string_value(json_object_get(e, "request_id"));
	const char *post = json_string_value(json_object_get(e, "post_data"));
	struct cdp_error err = { 0 };
	json_t *res = NULL;
	const char *body;
	int rc = 1;

	*data = NULL;
	*len = 0;
	if (!response && post && !json_is_true(json_object_get(e, "post_data_truncated"))) {
		*len = strlen(post);
		*data = (unsigned char *)strdup(post);
		return *data ? 0 : act_fail(ctx, "browser_error", "out of memory");
	}
	if (!response && !json_is_true(json_object_get(e, "has_post_data"))) {
		snprintf(why, whylen, "the request has no body");
		return 1;
	}
	if (response && !json_object_get(e, "status")) {
		snprintf(why, whylen, "no response came");
		return 1;
	}
	if (cdp_call(ctx->cdp, sid,
	             response ? "Network.getResponseBody" : "Network.getRequestPostData",
	             json_pack("{s:s}", "requestId", rid), act_left_ms(ctx), &res, &err) < 0) {
		snprintf(why, whylen,
		         "the browser does not have it (%.200s): it keeps a body the page read, "
		         "while the page is open",
		         err.message);
		goto out;
	}
	body = json_string_value(json_object_get(res, response ? "body" : "postData"));
	if (!body) {
		snprintf(why, whylen, "the browser sent no body");
		goto out;
	}
	if (json_is_true(json_object_get(res, "base64Encoded"))) {
		if (evid_base64_decode(body, strlen(body), data, len) < 0) {
			snprintf(why, whylen, "the browser sent a body that is not base64");
			goto out;
		}
	} else {
		*len = strlen(body);
		*data = (unsigned char *)strdup(body);
	}
	rc = *data ? 0 : act_fail(ctx, "browser_error", "out of memory");
out:
	json_decref(res);
	return rc;
}

/* Shows one body: stored (bounded), scrubbed when it is text, its text
 * shown up to show bytes. */
static int show_body(struct act_ctx *ctx, json_t *e, int response, size_t show)
{
	const char *what = response ? "response body" : "request body";
	const char *mime =
	    response
	        ? gb_or(json_string_value(json_object_get(e, "mime")), "application/octet-stream")
	        : gb_or(json_string_value(
	                    json_object_get(json_object_get(e, "request_headers"), "Content-Type")),
	                "text/plain");
	unsigned char *data = NULL;
	char why[400] = "", sha[65];
	int truncated = 0;
	size_t len = 0;
	int rc;

	rc = fetch_body(ctx, e, response, &data, &len, why, sizeof(why));
	if (rc != 0) {
		if (rc > 0)
			gb_buf_appendf(&ctx->result, "\n  %s: none (%s)", what, why);
		return rc < 0 ? -1 : 0;
	}
	if (len > BODY_MAX) {
		len = BODY_MAX;
		truncated = 1;
	}
	if (is_textual(mime)) {
		char *text = strndup((const char *)data, len);
		char *clean = text ? act_secrets_scrub_text(ctx->as, text) : NULL;

		free(data);
		data = (unsigned char *)(clean ? clean : text);
		if (clean)
			free(text);
		if (!data)
			return act_fail(ctx, "browser_error", "out of memory");
		len = strlen((const char *)data);
	}
	rc = act_keep_artifact(ctx, response ? "network_response_body" : "network_request_body",
	                       is_textual(mime) ? "text/plain; charset=utf-8"
	                                        : "application/octet-stream",
	                       data, len, sha);
	if (rc == 0) {
		json_object_set_new(ctx->out, response ? "response_body" : "request_body",
		                    json_pack("{s:I, s:s, s:s, s:b}", "size", (json_int_t)len,
		                              "sha256", sha, "mime", mime, "truncated", truncated));
		gb_buf_appendf(&ctx->result, "\n  %s: %zu bytes%s (%s), glassbox://artifact/%s",
		               what, len, truncated ? " (cut at the limit)" : "", mime, sha);
		if (is_textual(mime) && show) {
			gb_buf_appendf(&ctx->result, "\n");
			act_page_content_mark(ctx);
			gb_buf_appendf(&ctx->result, "%.*s%s", (int)(len < show ? len : show),
			               (char *)data,
			               len > show ? "\n[... more in the artifact]" : "");
		}
	}
	free(data);
	return rc;
}

static void show_headers(struct act_ctx *ctx, const char *title, json_t *headers)
{
	const char *k;
	json_t *v;

	if (!json_object_size(headers))
		return;
	gb_buf_appendf(&ctx->result, "\n  %s", title);
	json_object_foreach(headers, k, v)
	    gb_buf_appendf(&ctx->result, "\n    %s: %s", k, json_string_value(v));
}

static int request_run(struct act_ctx *ctx)
{
	unsigned index = (unsigned)json_integer_value(json_object_get(ctx->args, "index"));
	const char *part = json_string_value(json_object_get(ctx->args, "part"));
	json_t *e, *copy;
	int rc = 0;

	if (act_page_sync(ctx) < 0)
		return -1;
	e = act_pagelog_request(ctx->as->pagelog, index);
	if (!e)
		return act_fail(ctx, "not_found",
		                "request #%u is not kept (the session keeps the last %d): use "
		                "browser_network_requests to see the numbers there are",
		                index, ACT_PAGELOG_MAX_REQUESTS);
	copy = json_deep_copy(e);
	json_object_del(copy, "request_id");
	json_object_del(copy, "session_id");
	json_object_del(copy, "nav");
	json_object_del(copy, "post_data");
	act_secrets_scrub_json(ctx->as, copy);
	json_object_set_new(ctx->out, "request", copy);
	gb_buf_appendf(&ctx->result, "#%u [%s] %s", index,
	               json_string_value(json_object_get(copy, "method")),
	               json_string_value(json_object_get(copy, "url")));
	if (json_object_get(copy, "status"))
		gb_buf_appendf(&ctx->result, "\n  status: [%lld] %s",
		               (long long)json_integer_value(json_object_get(copy, "status")),
		               gb_or(json_string_value(json_object_get(copy, "status_text")), ""));
	else if (json_object_get(copy, "failed"))
		gb_buf_appendf(&ctx->result, "\n  status: [FAILED] %s",
		               json_string_value(json_object_get(copy, "failed")));
	gb_buf_appendf(&ctx->result, "\n  type: %s",
	               json_string_value(json_object_get(copy, "type")));
	if (!part || !strcmp(part, "request-headers"))
		show_headers(ctx, "Request headers", json_object_get(copy, "request_headers"));
	if (!part || !strcmp(part, "response-headers"))
		show_headers(ctx, "Response headers", json_object_get(copy, "response_headers"));
	if (!part || !strcmp(part, "request-body"))
		rc = show_body(ctx, e, 0, part ? BODY_TEXT_MAX : BODY_PREVIEW);
	if (rc == 0 && (!part || !strcmp(part, "response-body")))
		rc = show_body(ctx, e, 1, part ? BODY_TEXT_MAX : BODY_PREVIEW);
	gb_buf_appendf(&ctx->result, "\n(Cookie, Set-Cookie, Authorization and other credential "
	                             "headers are never kept: their values show as [redacted].)");
	return rc;
}

static const char *const part_values[] = { "request-headers", "request-body", "response-headers",
	                                   "response-body", NULL };

static const struct act_param params[] = {
	{ .name = "index",
	  .type = ACT_T_INTEGER,
	  .required = 1,
	  .description = "1-based index of the request, as printed by browser_network_requests.",
	  .minimum = 1,
	  .maximum = 4294967295.0,
	  .has_range = 1 },
	{ .name = "part",
	  .type = ACT_T_STRING,
	  .description = "Return only this part of the request. Omit to return full details.",
	  .enum_values = part_values },
};

static const struct act_tool_impl impl = {
	.run = request_run,
};

const struct act_def act_tool_network_request = {
	.name = "browser_network_request",
	.title = "Show network request details",
	.description =
	    "Returns full details (headers and body) of a single network request, or a single "
	    "part if `part` is set. Use the number from browser_network_requests. Bodies are "
	    "stored as artifacts (at most 4 MiB, readable with resources/read); credential "
	    "headers and values typed from secrets never appear. Read-only.",
	PARAMS(params),
	.effect = ACT_EFFECT_READ,
	.policy = ACT_POLICY_EXEMPT("reads a request the page made: nothing on the page changes"),
	.impl = &impl,
};

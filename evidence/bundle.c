/*
 * bundle.c - the evidence of one state-changing action, kept in one
 * call: the screenshot after the action (or, when it is not a valid PNG,
 * the bytes as invalid evidence), an annotated copy showing the target's
 * box and the click point, the snapshot text the agent acted on, and the
 * action's network log. Every part is attempted even when another one
 * failed, so a reviewer gets all that could be kept, and the caller gets
 * the list for the audit record plus the first reason something was not
 * kept.
 */
#include "evidence/evidence-private.h"
#include "evidence/evidence.h"

#include "common/log.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MIME_PNG "image/png"
#define MIME_TEXT "text/plain; charset=utf-8"
#define MIME_JSON "application/json"

/* Progress of one bundle: the list and the worst outcome so far. */
struct bundle {
	struct evid_store *store;
	const struct evid_meta *base;
	json_t *list;
	int rc;           /* 0, -EVID_EBADPNG, or the first hard error */
	char first[1024]; /* the first hard error's reason */
};

/* Notes a failure: hard errors win over an invalid screenshot. */
static void note(struct bundle *b, int rc, const char *what, const char *why)
{
	if (rc == 0)
		return;
	if (rc == -EVID_EBADPNG) {
		if (b->rc == 0)
			b->rc = rc;
		return;
	}
	GB_LOGW("evidence", "%s of operation %s could not be kept: %s", what,
	        b->base->operation_id ? b->base->operation_id : "(none)", why);
	if (b->rc == 0 || b->rc == -EVID_EBADPNG) {
		b->rc = rc;
		snprintf(b->first, sizeof(b->first), "%s: %s", what, why);
	}
}

/* Stores one part; on success appends its entry to the list. Why it
 * failed goes to err (NULL: only noted). */
static int put_part(struct bundle *b, const char *kind, const char *mime, const unsigned char *data,
                    size_t len, char *err, size_t errlen)
{
	struct evid_meta meta = *b->base;
	struct evid_ref ref;
	char own[1024];
	int rc;

	if (!err) {
		err = own;
		errlen = sizeof(own);
	}
	meta.kind = kind;
	meta.mime = mime;
	err[0] = '\0';
	rc = evid_store_put(b->store, &meta, data, len, &ref, err, errlen);
	if (rc == 0 && json_array_append_new(b->list, evid_artifact_json(kind, mime, &ref, 1)) != 0)
		rc = -EVID_ENOMEM;
	if (rc != -EVID_EBADPNG)
		note(b, rc, kind, err);
	return rc;
}

/* Keeps bytes that failed validation, with the reason, and lists them. */
static void put_invalid(struct bundle *b, const char *kind, const unsigned char *data, size_t len,
                        const char *reason)
{
	struct evid_meta meta = *b->base;
	struct evid_ref ref;
	char err[1024] = "";
	json_t *entry;
	int rc;

	meta.kind = kind;
	meta.mime = MIME_PNG;
	rc = evid_store_put_invalid(b->store, &meta, data, len, reason, &ref, err, sizeof(err));
	if (rc == 0) {
		entry = evid_artifact_json(kind, MIME_PNG, &ref, 0);
		if (!entry || json_object_set_new(entry, "reason", json_string(reason)) != 0 ||
		    json_array_append_new(b->list, entry) != 0)
			rc = -EVID_ENOMEM;
	}
	note(b, rc ? rc : -EVID_EBADPNG, kind, err);
}

/* The screenshot and its annotated copy. */
static void keep_screenshot(struct bundle *b, const struct evid_action_evidence *ev)
{
	const unsigned char *png = ev->screenshot;
	size_t len = ev->screenshot_len;
	unsigned char *decoded = NULL;
	unsigned char *annotated = NULL;
	size_t annotated_len = 0;
	char why[1024] = "";
	int rc;

	if (!png && ev->screenshot_b64) {
		rc = evid_base64_decode(ev->screenshot_b64, strlen(ev->screenshot_b64), &decoded,
		                        &len);
		if (rc == -EVID_ENOMEM) {
			note(b, rc, EVID_KIND_SCREENSHOT, "out of memory decoding the screenshot");
			goto out;
		}
		if (rc != 0) {
			put_invalid(
			    b, EVID_KIND_SCREENSHOT, (const unsigned char *)ev->screenshot_b64,
			    strlen(ev->screenshot_b64), "the screenshot is not valid base64");
			goto out;
		}
		png = decoded;
	}
	if (!png)
		goto out;
	/* the store checks a PNG before it keeps it: one full decode */
	rc = put_part(b, EVID_KIND_SCREENSHOT, MIME_PNG, png, len, why, sizeof(why));
	if (rc == -EVID_EBADPNG) {
		put_invalid(b, EVID_KIND_SCREENSHOT, png, len, why);
		goto out;
	}
	if (rc != 0 || (!ev->annotation.has_box && !ev->annotation.has_point))
		goto out;
	rc = evid_png_annotate(png, len, &ev->annotation, &annotated, &annotated_len, why,
	                       sizeof(why));
	if (rc != 0) {
		note(b, rc == -EVID_EBADPNG ? -EVID_EINVAL : rc, EVID_KIND_ANNOTATED, why);
		goto out;
	}
	put_part(b, EVID_KIND_ANNOTATED, MIME_PNG, annotated, annotated_len, NULL, 0);
out:
	free(decoded);
	free(annotated);
}

int evid_keep_action_evidence(struct evid_store *s, const struct evid_action_evidence *ev,
                              json_t **artifacts, char *err, size_t errlen)
{
	struct bundle b;
	char *log_text = NULL;

	memset(&b, 0, sizeof(b));
	*artifacts = NULL;
	if (!s || !ev || !ev->meta || !ev->meta->tenant) {
		gb_set_error(err, errlen, "keeping evidence needs a store and the action's tenant");
		b.rc = -EVID_EINVAL;
		goto out;
	}
	b.store = s;
	b.base = ev->meta;
	b.list = json_array();
	if (!b.list) {
		gb_set_error(err, errlen, "out of memory keeping evidence");
		b.rc = -EVID_ENOMEM;
		goto out;
	}
	keep_screenshot(&b, ev);
	if (ev->snapshot_text)
		put_part(&b, EVID_KIND_SNAPSHOT, MIME_TEXT,
		         (const unsigned char *)ev->snapshot_text, strlen(ev->snapshot_text), NULL,
		         0);
	if (ev->network_log) {
		log_text = evid_json_canonical(ev->network_log);
		if (log_text)
			put_part(&b, EVID_KIND_NETWORK_LOG, MIME_JSON,
			         (const unsigned char *)log_text, strlen(log_text), NULL, 0);
		else
			note(&b, -EVID_ENOMEM, EVID_KIND_NETWORK_LOG, "out of memory");
	}
	if (b.rc == -EVID_EBADPNG)
		gb_set_error(err, errlen,
		             "the screenshot was not a valid PNG; it was kept as "
		             "invalid evidence");
	else if (b.rc != 0)
		gb_set_error(err, errlen, "evidence could not be kept: %s", b.first);
	*artifacts = b.list;
	b.list = NULL;
out:
	free(log_text);
	json_decref(b.list);
	return b.rc;
}

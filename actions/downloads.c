/*
 * downloads.c - every download a page starts lands in the session's
 * download area, and nowhere else (files-private.h).
 *
 * On each browser's launch, Browser.setDownloadBehavior points it at a
 * dir of the session only its browser can write (sessions/areas.c),
 * with "allowAndName": a file is named by its download's guid, never by
 * the name the page suggests, so a page cannot choose a path. The events
 * (Browser.downloadWillBegin, Browser.downloadProgress) are followed
 * here on the worker thread:
 *   - a download that begins is the running call's (or, when it is seen
 *     between calls, the last call that acted: events are read while the
 *     next call waits on the browser); its URL is checked against the
 *     egress policy once more, and refused downloads are cancelled;
 *   - one that grows past files.download_max_mb is cancelled;
 *   - one that completes is read back (bounded), hashed, MIME sniffed,
 *     stored as an artifact of the operation that caused it and removed
 *     from the area; its receipt goes to the audit log.
 * The end of each call reports the downloads it has not reported yet.
 * On a shared browser (isolation "context") the events of every context
 * reach every session: a session follows only the downloads of its own
 * pages' main frames and out-of-process iframes (a download from a frame
 * that shares its page's process is not reported there; its file stays
 * in the session's area, removed with it).
 */
#include "actions/actions-private.h"
#include "actions/files-private.h"

#include "cdp/cdp.h"
#include "common/fs.h"
#include "common/log.h"
#include "evidence/files.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

enum dl_state {
	DL_IN_PROGRESS,
	DL_COMPLETED, /* written by the browser, not kept yet */
	DL_KEPT,      /* stored as an artifact */
	DL_TOO_LARGE,
	DL_CANCELED,
	DL_REFUSED,
	DL_FAILED, /* completed, but could not be kept */
};

static const char *const state_names[] = { "in_progress", "completed", "completed", "too_large",
	                                   "canceled",    "refused",   "failed" };

struct dl_item {
	char guid[64];
	char url[2048];
	char name[256]; /* as the page suggested: reported, never a path */
	char operation_id[72];
	char tool[48];
	enum dl_state state;
	double received;
	char reason[600];
	char sha256[65];
	char mime[128];
	size_t size;
	char out_name[256]; /* its copy in the output directory, "" when none */
	int reported_state; /* -1: never reported; else the state last reported */
};

struct act_downloads {
	char dir[4096];
	struct cdp_conn *cdp;
	struct act_session *as; /* borrowed while attached */
	int listener;
	size_t max_bytes;
	int allowed;
	char current_op[72]; /* the call acting now, "" between calls */
	char current_tool[48];
	char last_op[72]; /* the last call that acted */
	char last_tool[48];
	struct dl_item items[ACT_DOWNLOADS_MAX];
	size_t n;
};

struct act_downloads *act_downloads_new(void)
{
	return calloc(1, sizeof(struct act_downloads));
}

static struct dl_item *find(struct act_downloads *d, const char *guid)
{
	size_t i;

	for (i = 0; guid && i < d->n; i++)
		if (!strcmp(d->items[i].guid, guid))
			return &d->items[i];
	return NULL;
}

static void cancel(struct act_downloads *d, const char *guid)
{
	uint64_t id;
	json_t *p = json_pack("{s:s}", "guid", guid);
	const char *ctx = sess_context_id(d->as->sess);

	if (ctx && ctx[0])
		json_object_set_new(p, "browserContextId", json_string(ctx));
	if (cdp_send(d->cdp, NULL, "Browser.cancelDownload", p, &id) == 0)
		cdp_forget(d->cdp, id);
}

/* The name a page suggested, made harmless for a report: no path, no
 * control characters, bounded. */
static void clean_name(const char *in, char *out, size_t len)
{
	const char *slash;
	size_t i, n = 0;

	in = in ? in : "";
	slash = strrchr(in, '/');
	if (slash)
		in = slash + 1;
	slash = strrchr(in, '\\');
	if (slash)
		in = slash + 1;
	for (i = 0; in[i] && n + 1 < len; i++)
		out[n++] = (unsigned char)in[i] < 0x20 || in[i] == 0x7f ? '_' : in[i];
	out[n] = '\0';
	if (!n)
		snprintf(out, len, "download");
}

static void will_begin(struct act_downloads *d, json_t *params)
{
	const char *guid = json_string_value(json_object_get(params, "guid"));
	const char *url = gb_or(json_string_value(json_object_get(params, "url")), "");
	struct dl_item *it;
	json_t *blocked = NULL;
	char err[512];
	size_t i;

	if (!guid || strlen(guid) >= sizeof(it->guid) || find(d, guid))
		return;
	/* on a shared browser every connection hears of every context's
	 * downloads: only those of the session's own frames are its own */
	if (sess_is_shared(d->as->sess) &&
	    !sess_frame_is_known(d->as->sess,
	                         json_string_value(json_object_get(params, "frameId"))))
		return;
	if (d->n == ACT_DOWNLOADS_MAX) { /* drop the oldest that was reported in its end state */
		for (i = 0; i < d->n; i++)
			if (d->items[i].state != DL_IN_PROGRESS &&
			    d->items[i].reported_state == (int)d->items[i].state)
				break;
		if (i == d->n) {
			cancel(d, guid);
			GB_LOGW("actions", "more than %d downloads at once: one was cancelled",
			        ACT_DOWNLOADS_MAX);
			return;
		}
		memmove(&d->items[i], &d->items[i + 1], sizeof(d->items[0]) * (d->n - i - 1));
		d->n--;
	}
	it = &d->items[d->n++];
	memset(it, 0, sizeof(*it));
	it->reported_state = -1;
	snprintf(it->guid, sizeof(it->guid), "%s", guid);
	snprintf(it->url, sizeof(it->url), "%s", url);
	clean_name(json_string_value(json_object_get(params, "suggestedFilename")), it->name,
	           sizeof(it->name));
	snprintf(it->operation_id, sizeof(it->operation_id), "%s",
	         d->current_op[0] ? d->current_op : d->last_op);
	snprintf(it->tool, sizeof(it->tool), "%s",
	         d->current_op[0] ? d->current_tool : d->last_tool);
	if (!d->allowed) {
		it->state = DL_REFUSED;
		snprintf(it->reason, sizeof(it->reason),
		         "this tenant's policy refuses downloads (files.downloads is false)");
		return; /* the browser denies it itself */
	}
	/* the egress layers stopped refused hosts before any byte came; a
	 * download of a page's own data (blob:, data:) has no host to ask */
	if ((!strncmp(url, "http://", 7) || !strncmp(url, "https://", 8)) &&
	    act_egress_check_url(d->as, url, &blocked, err, sizeof(err)) < 0) {
		it->state = DL_REFUSED;
		snprintf(it->reason, sizeof(it->reason), "%s", err);
		cancel(d, guid);
	}
	json_decref(blocked);
}

static void progress(struct act_downloads *d, json_t *params)
{
	struct dl_item *it = find(d, json_string_value(json_object_get(params, "guid")));
	const char *state = json_string_value(json_object_get(params, "state"));
	double total = json_number_value(json_object_get(params, "totalBytes"));

	if (!it || it->state != DL_IN_PROGRESS || !state)
		return;
	it->received = json_number_value(json_object_get(params, "receivedBytes"));
	if (it->received > (double)d->max_bytes || total > (double)d->max_bytes) {
		it->state = DL_TOO_LARGE;
		snprintf(it->reason, sizeof(it->reason),
		         "larger than this tenant's limit of %zu MiB (files.download_max_mb): "
		         "cancelled",
		         d->max_bytes >> 20);
		cancel(d, it->guid);
	} else if (!strcmp(state, "completed")) {
		it->state = DL_COMPLETED;
	} else if (!strcmp(state, "canceled")) {
		it->state = DL_CANCELED;
		snprintf(it->reason, sizeof(it->reason), "cancelled by the page or the browser");
	}
}

static void on_event(void *user, const char *session_id, const char *method, json_t *params)
{
	struct act_downloads *d = user;

	if (!strcmp(method, "Browser.downloadWillBegin"))
		will_begin(d, params);
	else if (!strcmp(method, "Browser.downloadProgress"))
		progress(d, params);
}

int act_downloads_attach(struct act_session *as, char *err, size_t errlen)
{
	struct act_downloads *d = as->downloads;
	const struct policy_tenant_settings *set = policy_tenant_settings(as->tenant_policy);
	struct cdp_error cerr = { 0 };
	const char *ctx;
	json_t *p;

	memset(d, 0, sizeof(*d)); /* the last browser's listener went with it */
	d->as = as;
	d->cdp = sess_cdp(as->sess);
	d->allowed = set->downloads;
	d->max_bytes = (size_t)set->download_max_mb << 20;
	if (sess_area_dir(as->sess, "downloads", d->dir, sizeof(d->dir), err, errlen) < 0)
		return -1;
	p = json_pack("{s:s, s:b}", "behavior", d->allowed ? "allowAndName" : "deny",
	              "eventsEnabled", 1);
	if (d->allowed)
		json_object_set_new(p, "downloadPath", json_string(d->dir));
	ctx = sess_context_id(as->sess);
	if (ctx && ctx[0])
		json_object_set_new(p, "browserContextId", json_string(ctx));
	if (cdp_call(d->cdp, NULL, "Browser.setDownloadBehavior", p, 10000, NULL, &cerr) < 0) {
		snprintf(err, errlen, "cannot point the browser's downloads at its area: %s",
		         cerr.message);
		return -1;
	}
	d->listener = cdp_on(d->cdp, "", NULL, on_event, d);
	if (d->listener <= 0) {
		snprintf(err, errlen, "cannot follow the browser's downloads");
		return -1;
	}
	return 0;
}

void act_downloads_free(struct act_downloads *d)
{
	free(d);
}

void act_downloads_call_begin(struct act_ctx *ctx)
{
	struct act_downloads *d = ctx->as->downloads;

	if (!d)
		return;
	snprintf(d->current_op, sizeof(d->current_op), "%s", ctx->operation_id);
	snprintf(d->current_tool, sizeof(d->current_tool), "%s", ctx->def->name);
}

/* The name a download gets in the output directory, as Playwright MCP
 * makes it from the one the page suggested: each run of characters other
 * than ASCII letters, digits and '-' becomes one '-', before and after
 * the last '.', which stays; never empty, never starting with '.'. */
static void output_name(const char *in, char *out, size_t len)
{
	const char *dot = strrchr(in, '.');
	size_t i, n = 0;
	int run = 0;

	for (i = 0; in[i] && n + 10 < len; i++) {
		unsigned char ch = (unsigned char)in[i];

		if (in + i == dot) {
			out[n++] = '.';
			run = 0;
		} else if ((ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') ||
		           (ch >= '0' && ch <= '9') || ch == '-') {
			out[n++] = (char)ch;
			run = 0;
		} else if (!run) {
			out[n++] = '-';
			run = 1;
		}
	}
	out[n] = '\0';
	if (!n || out[0] == '.') {
		memmove(out + 8, out, n + 1);
		memcpy(out, "download", 8);
	}
}

/* Copies a kept download into the output directory (Playwright MCP's
 * place for it), under output_name; a copy that cannot be written is
 * said in the answer, the download stays kept. */
static void copy_out(struct act_ctx *ctx, struct dl_item *it, const unsigned char *data, size_t len)
{
	char name[sizeof(it->out_name)];

	if (!ctx->as->output_dir)
		return;
	output_name(it->name, name, sizeof(name));
	if (act_output_save(ctx, name, 0, data, len) < 0) {
		gb_buf_appendf(&ctx->text,
		               "\n- download %.200s: not copied into the output directory "
		               "(%s)",
		               it->name, strerror(errno));
		return;
	}
	snprintf(it->out_name, sizeof(it->out_name), "%s", name);
}

/* Stores a completed download as an artifact of its operation, copies
 * it into the output directory, removes its file from the area and
 * queues its receipt. */
static void keep(struct act_ctx *ctx, struct act_downloads *d, struct dl_item *it)
{
	struct act_session *as = ctx->as;
	struct evid_meta meta = { 0 };
	struct evid_ref ref;
	unsigned char *data = NULL;
	char path[4200], err[512];
	size_t len = 0;
	int rc;

	snprintf(path, sizeof(path), "%s/%s", d->dir, it->guid);
	rc = gb_fs_read_file(path, d->max_bytes, &data, &len, err, sizeof(err));
	if (rc < 0) {
		it->state = DL_FAILED;
		snprintf(it->reason, sizeof(it->reason),
		         "the downloaded file could not be read: %s", err);
		goto out;
	}
	evid_sniff_mime(data, len, it->mime, sizeof(it->mime));
	meta.tenant = as->tenant;
	meta.kind = EVID_KIND_DOWNLOAD;
	/* a page's bytes are kept as they are, never checked as our own PNGs */
	meta.mime = strcmp(it->mime, "image/png") ? it->mime : "application/octet-stream";
	meta.session_id = as->sess ? sess_id(as->sess) : NULL;
	meta.operation_id = it->operation_id;
	meta.tool = it->tool;
	meta.url = it->url;
	if (evid_store_put(as->store, &meta, data, len, &ref, err, sizeof(err)) < 0) {
		it->state = DL_FAILED;
		snprintf(it->reason, sizeof(it->reason), "the download could not be kept: %s", err);
		goto out;
	}
	it->state = DL_KEPT;
	it->size = len;
	copy_out(ctx, it, data, len);
	snprintf(it->sha256, sizeof(it->sha256), "%s", ref.sha256);
	act_keeper_record_artifacts(
	    as->keeper, "download", meta.session_id, it->operation_id,
	    json_pack("{s:s, s:s, s:s, s:I, s:s, s:s}", "name", it->name, "url", it->url, "state",
	              "completed", "size", (json_int_t)len, "sha256", it->sha256, "mime", it->mime),
	    json_pack("[o]", evid_artifact_json(EVID_KIND_DOWNLOAD, meta.mime, &ref, 1)));
out:
	unlink(path);
	free(data);
}

/* 1 while a download of the running call is in progress. */
static int none_in_progress(void *user)
{
	struct act_downloads *d = user;
	size_t i;

	for (i = 0; i < d->n; i++)
		if (d->items[i].state == DL_IN_PROGRESS &&
		    !strcmp(d->items[i].operation_id, d->current_op))
			return 0;
	return 1;
}

/* 1 once a download of the running call has begun. */
static int one_began(void *user)
{
	struct act_downloads *d = user;
	size_t i;

	for (i = 0; i < d->n; i++)
		if (!strcmp(d->items[i].operation_id, d->current_op))
			return 1;
	return 0;
}

int act_downloads_await_begin(struct act_ctx *ctx, int wait_ms)
{
	struct act_downloads *d = ctx->as->downloads;
	size_t i;

	if (!d || !d->cdp || !d->current_op[0])
		return 0;
	if (wait_ms > act_left_ms(ctx) - 2000)
		wait_ms = act_left_ms(ctx) - 2000;
	cdp_service(d->cdp, 0, NULL, NULL); /* events already readable */
	if (!one_began(d) && wait_ms > 0)
		cdp_service(d->cdp, wait_ms, one_began, d);
	for (i = 0; i < d->n; i++)
		if (!strcmp(d->items[i].operation_id, d->current_op))
			return d->items[i].state == DL_REFUSED ? -1 : 1;
	return 0;
}

static json_t *report(const struct dl_item *it)
{
	json_t *j = json_pack("{s:s, s:s, s:s, s:s}", "name", it->name, "url", it->url, "state",
	                      state_names[it->state], "operation_id", it->operation_id);

	if (it->state == DL_KEPT) {
		char uri[96];

		snprintf(uri, sizeof(uri), "glassbox://artifact/%s", it->sha256);
		json_object_set_new(j, "size", json_integer((json_int_t)it->size));
		json_object_set_new(j, "sha256", json_string(it->sha256));
		json_object_set_new(j, "mime", json_string(it->mime));
		json_object_set_new(j, "uri", json_string(uri));
	} else if (it->reason[0]) {
		json_object_set_new(j, "reason", json_string(it->reason));
	}
	return j;
}

/* The receipt of a download that was not kept (refused, too large,
 * cancelled, failed), and what it left in the area removed. */
static void drop_unkept(struct act_session *as, struct act_downloads *d, struct dl_item *it)
{
	char path[4200];

	snprintf(path, sizeof(path), "%s/%s", d->dir, it->guid);
	unlink(path);
	act_keeper_record(as->keeper, "download", as->sess ? sess_id(as->sess) : NULL,
	                  it->operation_id,
	                  json_pack("{s:s, s:s, s:s, s:s}", "name", it->name, "url", it->url,
	                            "state", state_names[it->state], "reason", it->reason),
	                  0);
}

/* The answer's events for a download whose state changed, as Playwright
 * MCP writes them: "- Downloading file NAME ..." when it is first seen,
 * then "- Downloaded file NAME to "PATH"" with its copy in the output
 * directory (without one, its size and artifact), or why it did not
 * complete. */
static void events(struct act_ctx *ctx, const struct dl_item *it)
{
	struct gb_buf *b = &ctx->events;
	char link[4400];

	if (it->reported_state < 0)
		gb_buf_appendf(b, "%s- Downloading file %.200s ...", b->len ? "\n" : "", it->name);
	if (it->state == DL_IN_PROGRESS)
		return;
	if (b->len)
		gb_buf_appendf(b, "\n");
	if (it->state == DL_KEPT && it->out_name[0]) {
		act_output_link(ctx, it->out_name, link, sizeof(link));
		gb_buf_appendf(b, "- Downloaded file %.200s to \"%s\"", it->name, link);
	} else if (it->state == DL_KEPT) {
		gb_buf_appendf(b, "- Downloaded file %.200s (%zu bytes, glassbox://artifact/%s)",
		               it->name, it->size, it->sha256);
	} else {
		gb_buf_appendf(b, "- Download of file %.200s did not complete: %s (%.300s)",
		               it->name, state_names[it->state], it->reason);
	}
}

void act_downloads_call_end(struct act_ctx *ctx)
{
	struct act_session *as = ctx->as;
	struct act_downloads *d = as->downloads;
	json_t *list = NULL;
	size_t i;

	if (!d || !d->cdp)
		return;
	if (d->current_op[0]) {
		int wait = act_left_ms(ctx) - 2000;

		if (wait > ACT_DOWNLOAD_WAIT_MS)
			wait = ACT_DOWNLOAD_WAIT_MS;
		cdp_service(d->cdp, 0, NULL, NULL); /* events already readable */
		if (wait > 0 && !none_in_progress(d))
			cdp_service(d->cdp, wait, none_in_progress, d);
		snprintf(d->last_op, sizeof(d->last_op), "%s", d->current_op);
		snprintf(d->last_tool, sizeof(d->last_tool), "%s", d->current_tool);
		d->current_op[0] = '\0';
	}
	for (i = 0; i < d->n; i++) {
		struct dl_item *it = &d->items[i];
		json_t *r;

		if (it->state == DL_COMPLETED)
			keep(ctx, d, it);
		if (it->reported_state == (int)it->state)
			continue;
		if (it->state != DL_KEPT && it->state != DL_IN_PROGRESS)
			drop_unkept(as, d, it);
		if (!list) {
			list = json_array();
			json_object_set_new(ctx->out, "downloads", list);
		}
		r = report(it);
		json_array_append_new(list, r);
		gb_buf_appendf(&ctx->text, "\n- download %s: %.200s", state_names[it->state],
		               it->name);
		if (it->state == DL_KEPT)
			gb_buf_appendf(&ctx->text, " (%zu bytes, %s, %s)", it->size, it->mime,
			               json_string_value(json_object_get(r, "uri")));
		else if (it->reason[0])
			gb_buf_appendf(&ctx->text, " (%.300s)", it->reason);
		events(ctx, it);
		it->reported_state = (int)it->state;
	}
}

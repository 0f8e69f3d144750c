/*
 * evidence_fixture.h - helpers shared by the audit and report tests: a
 * private data dir per test, PNGs made with libpng, a real trail (a
 * session with tool calls whose evidence is kept through the same calls
 * the pipeline makes), and line-level edits of a day file for the tamper
 * drills. Include after cmocka.h.
 */
#ifndef GB_TEST_EVIDENCE_FIXTURE_H
#define GB_TEST_EVIDENCE_FIXTURE_H

#include <ftw.h>
#include <png.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "evidence/audit.h"
#include "evidence/evidence-private.h"
#include "evidence/evidence.h"

#define FX_UNUSED __attribute__((unused))
#define FX_MAX_RECORDS 64

struct fx {
	char root[256];
	char data[300];
	struct evid_store *store;
	struct evid_audit *audit;
	/* the trail built by fx_build_trail() */
	size_t nrec;
	char shot_sha[FX_MAX_RECORDS + 1][65]; /* by seq: the screenshot of a tool call */
	char snap_sha[FX_MAX_RECORDS + 1][65]; /* by seq: its snapshot text */
};

static int fx_rm_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	(void)flag;
	(void)ftw;
	chmod(path, 0700);
	return remove(path);
}

static FX_UNUSED void fx_rm_rf(const char *path)
{
	nftw(path, fx_rm_entry, 16, FTW_DEPTH | FTW_PHYS);
}

/* A fresh data dir with the store and the audit trail open. */
static FX_UNUSED struct fx *fx_new(void)
{
	struct fx *f = calloc(1, sizeof(*f));
	const char *tmp = getenv("TMPDIR");
	char err[1024] = "";

	assert_non_null(f);
	snprintf(f->root, sizeof(f->root), "%s/gb-evid-XXXXXX", tmp && tmp[0] ? tmp : "/tmp");
	assert_non_null(mkdtemp(f->root));
	snprintf(f->data, sizeof(f->data), "%s/data", f->root);
	if (evid_store_open_err(f->data, &f->store, err, sizeof(err)) != 0)
		fail_msg("store: %s", err);
	if (evid_audit_open(f->data, &f->audit, err, sizeof(err)) != 0)
		fail_msg("audit: %s", err);
	return f;
}

static FX_UNUSED void fx_free(struct fx *f)
{
	if (!f)
		return;
	evid_audit_close(f->audit);
	evid_store_close(f->store);
	fx_rm_rf(f->root);
	free(f);
}

/* ---- PNGs ------------------------------------------------------------------ */

/* An RGB PNG of w x h filled with (r, g, b) plus a small gradient, so that
 * different seeds give different bytes. Caller frees *out. */
static FX_UNUSED void fx_png(unsigned w, unsigned h, unsigned seed, unsigned char **out,
                             size_t *len)
{
	png_image img;
	unsigned char *px = malloc((size_t)w * h * 3);
	png_alloc_size_t size = 0;
	unsigned x;
	unsigned y;

	assert_non_null(px);
	for (y = 0; y < h; y++)
		for (x = 0; x < w; x++) {
			px[(y * w + x) * 3 + 0] = (unsigned char)(200 + (seed * 7) % 50);
			px[(y * w + x) * 3 + 1] = (unsigned char)(180 + (x + seed) % 60);
			px[(y * w + x) * 3 + 2] = (unsigned char)(190 + y % 50);
		}
	memset(&img, 0, sizeof(img));
	img.version = PNG_IMAGE_VERSION;
	img.width = w;
	img.height = h;
	img.format = PNG_FORMAT_RGB;
	assert_true(png_image_write_to_memory(&img, NULL, &size, 0, px, 0, NULL));
	*out = malloc(size);
	assert_non_null(*out);
	assert_true(png_image_write_to_memory(&img, *out, &size, 0, px, 0, NULL));
	*len = size;
	free(px);
}

/* Decodes a PNG to RGBA with libpng's simplified API. Caller frees. */
static FX_UNUSED unsigned char *fx_rgba(const unsigned char *png, size_t len, unsigned *w,
                                        unsigned *h)
{
	png_image img;
	unsigned char *px;

	memset(&img, 0, sizeof(img));
	img.version = PNG_IMAGE_VERSION;
	assert_true(png_image_begin_read_from_memory(&img, png, len));
	img.format = PNG_FORMAT_RGBA;
	px = malloc(PNG_IMAGE_SIZE(img));
	assert_non_null(px);
	assert_true(png_image_finish_read(&img, NULL, px, 0, NULL));
	*w = img.width;
	*h = img.height;
	return px;
}

/* ---- a trail ---------------------------------------------------------------- */

/* Appends a record; fails the test when it cannot. */
static FX_UNUSED uint64_t fx_append(struct fx *f, const char *tenant, const char *kind,
                                    const char *session, const char *op, json_t *body,
                                    json_t *artifacts)
{
	struct evid_audit_entry e;
	struct evid_audit_receipt rc;
	char err[1024] = "";

	memset(&e, 0, sizeof(e));
	e.tenant = tenant;
	e.kind = kind;
	e.actor.token = "tok-ci";
	e.actor.tenant = tenant;
	e.actor.user = "agent@example.com";
	e.session_id = session;
	e.operation_id = op;
	e.body = body;
	e.artifacts = artifacts;
	if (evid_audit_append(f->audit, &e, &rc, err, sizeof(err)) != 0)
		fail_msg("append %s: %s", kind, err);
	json_decref(body);
	return rc.seq;
}

/* One tool call with its whole evidence: screenshot, annotated copy,
 * snapshot text, network log. url may be hostile. Returns its seq. */
static FX_UNUSED uint64_t fx_tool_call(struct fx *f, const char *tenant, const char *session,
                                       unsigned i, const char *url, const char *name)
{
	struct evid_meta meta;
	struct evid_action_evidence ev;
	unsigned char *png = NULL;
	size_t len = 0;
	char op[32];
	char snap[256];
	char err[1024] = "";
	json_t *artifacts = NULL;
	json_t *netlog;
	json_t *body;
	uint64_t seq;
	size_t k;

	snprintf(op, sizeof(op), "op-%u", i);
	snprintf(snap, sizeof(snap), "- button \"%s\" [ref=e%u]\n- textbox \"Name\" [ref=e%u]\n",
	         name, i, i + 100);
	fx_png(64, 48, i + 1, &png, &len);
	netlog = json_pack("[{s:s, s:s, s:i}, {s:s, s:s, s:s}]", "method", "POST", "url", url,
	                   "status", 200, "method", "GET", "url", "https://tracker.example/pixel",
	                   "error", "blocked by policy");
	memset(&meta, 0, sizeof(meta));
	meta.tenant = tenant;
	meta.session_id = session;
	meta.operation_id = op;
	meta.tool = "browser_click";
	meta.url = url;
	memset(&ev, 0, sizeof(ev));
	ev.meta = &meta;
	ev.screenshot = png;
	ev.screenshot_len = len;
	ev.annotation.has_box = 1;
	ev.annotation.box_x = 10;
	ev.annotation.box_y = 8;
	ev.annotation.box_width = 30;
	ev.annotation.box_height = 12;
	ev.annotation.has_point = 1;
	ev.annotation.point_x = 25;
	ev.annotation.point_y = 14;
	ev.snapshot_text = snap;
	ev.network_log = netlog;
	if (evid_keep_action_evidence(f->store, &ev, &artifacts, err, sizeof(err)) != 0)
		fail_msg("evidence: %s", err);
	assert_int_equal(json_array_size(artifacts), 4);
	body = json_pack("{s:s, s:{s:s}, s:b, s:s, s:s, s:s, s:{s:s, s:s, s:s},"
	                 " s:[{s:s, s:s, s:s, s:b}], s:[{s:s, s:s}]}",
	                 "tool", "browser_click", "arguments", "ref", "e1", "ok", 1, "url_before",
	                 "https://app.example/form", "url", url, "title", name, "element", "role",
	                 "button", "name", name, "ref", "e1", "verdicts", "check", "url_changed",
	                 "expected", "yes", "observed", "yes", "ok", 1, "blocked", "url",
	                 "https://tracker.example/pixel", "reason", "host not allowed");
	assert_non_null(body);
	seq = fx_append(f, tenant, EVID_AUDIT_TOOL_CALL, session, op, body, artifacts);
	if (seq <= FX_MAX_RECORDS) {
		for (k = 0; k < json_array_size(artifacts); k++) {
			json_t *a = json_array_get(artifacts, k);
			const char *kind = json_string_value(json_object_get(a, "kind"));
			const char *sha = json_string_value(json_object_get(a, "sha256"));

			if (!strcmp(kind, EVID_KIND_SCREENSHOT))
				snprintf(f->shot_sha[seq], 65, "%s", sha);
			if (!strcmp(kind, EVID_KIND_SNAPSHOT))
				snprintf(f->snap_sha[seq], 65, "%s", sha);
		}
	}
	json_decref(artifacts);
	json_decref(netlog);
	free(png);
	return seq;
}

/* A session: opened (with its manifest), n tool calls, closed. Records
 * 1 .. n + 2. */
static FX_UNUSED void fx_build_trail(struct fx *f, const char *tenant, const char *session,
                                     unsigned n)
{
	struct evid_manifest_in in;
	json_t *flags = json_pack("[s, s]", "--headless=new", "--proxy-server=127.0.0.1:1");
	json_t *policy = json_pack("{s:[s]}", "allow", "app.example");
	unsigned i;

	memset(&in, 0, sizeof(in));
	in.chromium_version = "Chrome/156.0.8078.108";
	in.launch_flags = flags;
	in.policy = policy;
	fx_append(f, tenant, EVID_AUDIT_SESSION_OPENED, session, NULL,
	          json_pack("{s:o}", "manifest", evid_manifest_new(&in)), NULL);
	for (i = 0; i < n; i++)
		fx_tool_call(f, tenant, session, i, "https://app.example/saved", "Save");
	fx_append(f, tenant, EVID_AUDIT_SESSION_CLOSED, session, NULL,
	          json_pack("{s:s, s:i}", "reason", "client closed", "actions", (int)n), NULL);
	f->nrec = n + 2;
	json_decref(flags);
	json_decref(policy);
}

/* ---- the day file, line by line ---------------------------------------------- */

/* Path of the tenant's day file for today (UTC). */
static FX_UNUSED void fx_day_file(const struct fx *f, const char *tenant, char *buf, size_t buflen)
{
	char day[16];

	evid_day_of((int64_t)time(NULL), day, sizeof(day));
	snprintf(buf, buflen, "%s/tenants/%s/audit/%s.jsonl", f->data, tenant, day);
}

/* Reads a whole file (test data: small). Caller frees. */
static FX_UNUSED char *fx_read(const char *path, size_t *len)
{
	unsigned char *data = NULL;

	assert_int_equal(gb_fs_read_file(path, 64u << 20, &data, len, NULL, 0), 0);
	return (char *)data;
}

static FX_UNUSED void fx_write(const char *path, const char *data, size_t len)
{
	FILE *fp = fopen(path, "w");

	assert_non_null(fp);
	assert_int_equal(fwrite(data, 1, len, fp), len);
	assert_int_equal(fclose(fp), 0);
}

/* Splits text into at most max lines (pointers into text, NULs written). */
static FX_UNUSED size_t fx_lines(char *text, char **lines, size_t max)
{
	size_t n = 0;
	char *p = text;
	char *nl;

	while (*p && n < max) {
		nl = strchr(p, '\n');
		lines[n++] = p;
		if (!nl)
			break;
		*nl = '\0';
		p = nl + 1;
	}
	return n;
}

/* Writes lines back, each followed by '\n'. */
static FX_UNUSED void fx_write_lines(const char *path, char **lines, size_t n)
{
	FILE *fp = fopen(path, "w");
	size_t i;

	assert_non_null(fp);
	for (i = 0; i < n; i++)
		fprintf(fp, "%s\n", lines[i]);
	assert_int_equal(fclose(fp), 0);
}

#endif

/*
 * uploads.c - files handed to a page (browser_file_upload, browser_drop)
 * come from the tenant's upload area only (evidence/files.h), never from
 * a path the agent names on the host.
 *
 * A name is looked up in the area, its bytes read back through the store
 * (their hash checked), and copied into the session's uploads area
 * (sessions/areas.c): a dir its browser can read, where the copy has the
 * name the page sees. The browser is then given that copy's path. Each
 * file handed over is named, by its artifact, in an audit record.
 */
#include "actions/actions-private.h"
#include "actions/files-private.h"

#include "common/fs.h"
#include "evidence/files.h"

#include <errno.h>
#include <limits.h>
#include <sodium.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The upload area's name in path: "NAME" or "glassbox://upload/NAME". */
static const char *name_of(const char *path)
{
	size_t n = strlen(ACT_UPLOAD_URI_PREFIX);

	return strncmp(path, ACT_UPLOAD_URI_PREFIX, n) ? path : path + n;
}

/* Copies data into the uploads area as name; its path into out. */
static int stage_one(struct act_ctx *ctx, const char *dir, const char *name,
                     const unsigned char *data, size_t len, char *out, size_t outlen)
{
	char tmp[4200], err[512];

	if (gb_pathf(out, outlen, "%s/%s", dir, name) < 0)
		return act_fail(ctx, "browser_error", "the uploads area's path is too long");
	if (gb_fs_write_temp(dir, data, len, tmp, sizeof(tmp), err, sizeof(err)) < 0 ||
	    gb_fs_publish_replace(tmp, out, dir, err, sizeof(err)) < 0 ||
	    sess_area_give(ctx->sess, out, err, sizeof(err)) < 0)
		return act_fail(ctx, "browser_error", "cannot hand %s to the browser: %s", name,
		                err);
	return 0;
}

/* A file named by path under one of the policy's files.upload_dirs: its
 * real path (symlinks resolved) must be inside one of them, a regular
 * file of at most max bytes. 0 with *data (malloc'd), *len and its name
 * (the last component, a safe name); -1 with the call failed. */
static int read_from_dirs(struct act_ctx *ctx, const char *path, size_t max, unsigned char **data,
                          size_t *len, char *name, size_t namelen)
{
	const struct policy_tenant_settings *set = policy_tenant_settings(ctx->as->tenant_policy);
	char real[PATH_MAX], dir[PATH_MAX], err[512];
	const char *base;
	int i, inside = 0;

	if (!set->n_upload_dirs)
		return act_fail(
		    ctx, "bad_arguments",
		    "\"%.200s\" is a path: files come only from the tenant's upload "
		    "area, by name; its operator puts one there with `glassbox files put "
		    "%.200s --tenant %s` (or names its dir in the policy's "
		    "files.upload_dirs)",
		    path, path, ctx->as->tenant);
	if (!realpath(path, real))
		return act_fail(ctx, "not_found", "%.200s cannot be read: %s", path,
		                strerror(errno));
	for (i = 0; i < set->n_upload_dirs && !inside; i++) {
		size_t n;

		if (!realpath(set->upload_dirs[i], dir))
			continue;
		n = strlen(dir);
		inside = !strncmp(real, dir, n) && real[n] == '/';
	}
	base = strrchr(real, '/') + 1;
	if (!inside)
		return act_fail(
		    ctx, "bad_arguments",
		    "%.200s is not inside a dir of the policy's files.upload_dirs: only "
		    "files there (or of the upload area, by name) can be uploaded",
		    path);
	if (!gb_fs_name_is_safe(base))
		return act_fail(
		    ctx, "bad_arguments",
		    "%.200s: its file name is not 1..64 of A-Z a-z 0-9 . _ -: rename it, "
		    "or put it in the upload area with glassbox files put --name",
		    path);
	if (gb_fs_read_file(real, max, data, len, err, sizeof(err)) < 0)
		return act_fail(ctx, "not_found", "%.200s cannot be read: %s", path, err);
	snprintf(name, namelen, "%s", base);
	return 0;
}

/* The file of paths[i]: from the upload area by name, or from a
 * configured dir by path (then kept as an upload artifact too). Fills u
 * and *data. 0, or -1 with the call failed. */
static int load_one(struct act_ctx *ctx, size_t i, const char *path, size_t max,
                    struct evid_upload *u, unsigned char **data, size_t *len)
{
	struct evid_meta meta = { 0 };
	char err[1024];
	const char *name = name_of(path);

	*data = NULL;
	if (path[0] == '/') {
		if (read_from_dirs(ctx, path, max, data, len, u->name, sizeof(u->name)) < 0)
			return -1;
		evid_sniff_mime(*data, *len, u->mime, sizeof(u->mime));
		meta.tenant = ctx->as->tenant;
		meta.kind = EVID_KIND_UPLOAD;
		meta.mime = strcmp(u->mime, "image/png") ? u->mime : "application/octet-stream";
		meta.operation_id = ctx->operation_id;
		meta.tool = ctx->def->name;
		if (evid_store_put(ctx->as->store, &meta, *data, *len, &u->ref, err, sizeof(err)) <
		    0) {
			free(*data);
			*data = NULL;
			return act_fail(ctx, "evidence_failed", "%.200s could not be kept: %s",
			                path, err);
		}
		snprintf(u->sha256, sizeof(u->sha256), "%s", u->ref.sha256);
		u->size_bytes = *len;
		return 0;
	}
	if (strchr(name, '/'))
		return act_fail(
		    ctx, "bad_arguments",
		    "paths[%zu] \"%.200s\" is a path: files come only from the tenant's "
		    "upload area, by name; its operator puts one there with `glassbox "
		    "files put %.200s --tenant %s`",
		    i, path, path, ctx->as->tenant);
	if (evid_upload_find(ctx->as->store, ctx->as->tenant, name, u, err, sizeof(err)) < 0)
		return act_fail(ctx, "not_found", "paths[%zu]: %s", i, err);
	if (u->size_bytes > max)
		return 0; /* the caller refuses it */
	if (evid_upload_read(ctx->as->store, ctx->as->tenant, u, data, len, err, sizeof(err)) < 0)
		return act_fail(ctx, "not_found", "paths[%zu]: %s", i, err);
	return 0;
}

int act_uploads_stage(struct act_ctx *ctx, json_t *paths, json_t **files, json_t **info)
{
	const struct policy_tenant_settings *set = policy_tenant_settings(ctx->as->tenant_policy);
	size_t max = (size_t)set->upload_max_mb << 20;
	size_t total = 0, i;
	char dir[4096], err[1024], staged[4200];
	int rc = -1;

	*files = json_array();
	*info = json_array();
	if (!set->uploads) {
		act_fail(ctx, "uploads_refused",
		         "this tenant's policy refuses uploads (files.uploads is false): nothing "
		         "was handed to the page");
		goto out;
	}
	if (json_array_size(paths) > ACT_UPLOADS_MAX_FILES) {
		act_fail(ctx, "bad_arguments", "at most %d files per call", ACT_UPLOADS_MAX_FILES);
		goto out;
	}
	if (sess_area_dir(ctx->sess, "uploads", dir, sizeof(dir), err, sizeof(err)) < 0) {
		act_fail(ctx, "browser_error", "%s", err);
		goto out;
	}
	for (i = 0; i < json_array_size(paths); i++) {
		const char *path = gb_or(json_string_value(json_array_get(paths, i)), "");
		struct evid_upload u;
		unsigned char *data = NULL;
		size_t len = 0;
		int failed;

		memset(&u, 0, sizeof(u));
		if (load_one(ctx, i, path, max - total, &u, &data, &len) < 0)
			goto out;
		total += u.size_bytes;
		if (total > max) {
			free(data);
			act_fail(ctx, "too_large",
			         "the files are larger than this tenant's limit of %d MiB per call "
			         "(files.upload_max_mb): nothing was handed to the page",
			         set->upload_max_mb);
			goto out;
		}
		failed = stage_one(ctx, dir, u.name, data, len, staged, sizeof(staged)) < 0;
		free(data);
		if (failed)
			goto out;
		json_array_append_new(*files, json_string(staged));
		json_array_append_new(*info, json_pack("{s:s, s:I, s:s, s:s}", "name", u.name,
		                                       "size", (json_int_t)u.size_bytes, "sha256",
		                                       u.sha256, "mime", u.mime));
	}
	rc = 0;
out:
	if (rc < 0) {
		json_decref(*files);
		json_decref(*info);
		*files = *info = NULL;
	}
	return rc;
}

void act_uploads_record(struct act_ctx *ctx, json_t *info, const char *how)
{
	json_t *artifacts = json_array();
	json_t *f;
	size_t i;

	json_array_foreach(info, i, f)
	{
		struct evid_ref ref = { 0 };

		snprintf(ref.sha256, sizeof(ref.sha256), "%s",
		         json_string_value(json_object_get(f, "sha256")));
		ref.size_bytes = (size_t)json_integer_value(json_object_get(f, "size"));
		json_array_append_new(
		    artifacts,
		    evid_artifact_json(EVID_KIND_UPLOAD,
		                       json_string_value(json_object_get(f, "mime")), &ref, 1));
	}
	json_object_set(ctx->out, "uploads", info);
	act_keeper_record_artifacts(
	    ctx->as->keeper, "upload", ctx->sess ? sess_id(ctx->sess) : NULL, ctx->operation_id,
	    json_pack("{s:s, s:s, s:O}", "tool", ctx->def->name, "how", how, "files", info),
	    artifacts);
}

void act_uploads_fingerprint(struct act_ctx *ctx, struct gb_buf *b)
{
	json_t *paths = json_object_get(ctx->args, "paths");
	json_t *data = json_object_get(ctx->args, "data");
	char err[256];
	size_t i;

	for (i = 0; i < json_array_size(paths); i++) {
		const char *path = gb_or(json_string_value(json_array_get(paths, i)), "");
		struct evid_upload u;
		int found;

		if (path[0] == '/') { /* a file of a configured dir: its bytes now */
			unsigned char *bytes = NULL, digest[crypto_hash_sha256_BYTES];
			char hex[65] = "missing";
			size_t len = 0;

			if (gb_fs_read_file(path, EVID_UPLOAD_MAX_BYTES, &bytes, &len, err,
			                    sizeof(err)) == 0) {
				crypto_hash_sha256(digest, bytes, len);
				gb_hex(digest, sizeof(digest), hex);
			}
			free(bytes);
			gb_buf_appendf(b, "\nfile:%s:%s", path, hex);
			continue;
		}
		found = evid_upload_find(ctx->as->store, ctx->as->tenant, name_of(path), &u, err,
		                         sizeof(err)) == 0;
		gb_buf_appendf(b, "\nfile:%s:%s", name_of(path), found ? u.sha256 : "missing");
	}
	if (json_is_object(data)) {
		char *dump = json_dumps(data, JSON_COMPACT | JSON_SORT_KEYS);

		gb_buf_appendf(b, "\ndata:%s", dump ? dump : "");
		free(dump);
	}
}

/*
 * files.c - a tenant's upload area (files.h): entries naming artifacts of
 * kind "upload", and the MIME sniffing of outside files with libmagic.
 *
 * An entry is a small JSON file published atomically (temp file, fsync,
 * rename); its bytes are a content-addressed artifact, read back through
 * the store, which checks their hash. The libmagic handle is shared
 * under a mutex: a handle must not be used by two threads at once.
 */
#include "evidence/files.h"

#include "common/fs.h"
#include "common/util.h"
#include "evidence/evidence-private.h"

#include <dirent.h>
#include <errno.h>
#include <magic.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define ENTRY_MAX_BYTES 4096u

/* DATA/tenants/<tenant>/uploads into dir; -EVID_EINVAL with err when the
 * tenant or name is not a safe name. */
static int area_dir(struct evid_store *s, const char *tenant, char *dir, size_t len, char *err,
                    size_t errlen)
{
	if (!gb_fs_name_is_safe(tenant)) {
		gb_set_error(err, errlen, "'%.80s' is not a tenant name", tenant ? tenant : "");
		return -EVID_EINVAL;
	}
	if (gb_pathf(dir, len, "%s/tenants/%s/uploads", evid_store_data_dir(s), tenant) < 0) {
		gb_set_error(err, errlen, "the data dir's path is too long");
		return -EVID_EINVAL;
	}
	return 0;
}

static int check_name(const char *name, char *err, size_t errlen)
{
	if (gb_fs_name_is_safe(name))
		return 0;
	gb_set_error(err, errlen,
	             "'%.80s' is not a file name of the upload area: use 1..64 of A-Z a-z 0-9 "
	             ". _ - (not starting with '.')",
	             name ? name : "");
	return -EVID_EINVAL;
}

/* The upload area's dir into dir and the path of name's entry in it into
 * path (DATA/tenants/<tenant>/uploads/<name>.json); -EVID_EINVAL with err
 * when the tenant or name is not a safe name or a path is too long. */
static int entry_path(struct evid_store *s, const char *tenant, const char *name, char *dir,
                      size_t dirlen, char *path, size_t pathlen, char *err, size_t errlen)
{
	int rc;

	rc = area_dir(s, tenant, dir, dirlen, err, errlen);
	if (rc == 0)
		rc = check_name(name, err, errlen);
	if (rc == 0 && gb_pathf(path, pathlen, "%s/%s.json", dir, name) < 0) {
		gb_set_error(err, errlen, "the data dir's path is too long");
		rc = -EVID_EINVAL;
	}
	return rc;
}

void evid_sniff_mime(const unsigned char *data, size_t len, char *mime, size_t mime_len)
{
	static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
	static magic_t cookie;
	static int opened;
	const char *m = NULL;

	pthread_mutex_lock(&lock);
	if (!opened) {
		opened = 1;
		cookie = magic_open(MAGIC_MIME_TYPE | MAGIC_ERROR);
		if (cookie && magic_load(cookie, NULL) != 0) {
			magic_close(cookie);
			cookie = NULL;
		}
	}
	if (cookie && len)
		m = magic_buffer(cookie, data, len);
	snprintf(mime, mime_len, "%s", m ? m : "application/octet-stream");
	pthread_mutex_unlock(&lock);
}

/* Fills u from an entry's JSON (borrowed): 0, or -EVID_EIO when it is
 * not one. */
static int entry_from_json(json_t *j, struct evid_upload *u)
{
	const char *name = json_string_value(json_object_get(j, "name"));
	const char *sha = json_string_value(json_object_get(j, "sha256"));
	const char *mime = json_string_value(json_object_get(j, "mime"));
	json_t *size = json_object_get(j, "size");

	if (!name || !sha || !mime || !json_is_integer(size) || json_integer_value(size) < 0 ||
	    !gb_fs_name_is_safe(name) || !evid_sha256_hex_is_valid(sha))
		return -EVID_EIO;
	memset(u, 0, sizeof(*u));
	snprintf(u->name, sizeof(u->name), "%s", name);
	snprintf(u->sha256, sizeof(u->sha256), "%s", sha);
	snprintf(u->mime, sizeof(u->mime), "%s", mime);
	u->size_bytes = (size_t)json_integer_value(size);
	return 0;
}

/* Reads the entry at path into j (new reference): 0, -EVID_ENOENT or
 * -EVID_EIO with err. */
static int load_entry(const char *path, json_t **j, char *err, size_t errlen)
{
	unsigned char *buf = NULL;
	size_t len = 0;
	int rc;

	*j = NULL;
	rc = gb_fs_read_file(path, ENTRY_MAX_BYTES, &buf, &len, err, errlen);
	if (rc == -ENOENT)
		return -EVID_ENOENT;
	if (rc < 0)
		return -EVID_EIO;
	*j = json_loadb((const char *)buf, len, 0, NULL);
	free(buf);
	if (!json_is_object(*j)) {
		json_decref(*j);
		*j = NULL;
		gb_set_error(err, errlen, "%s is not an upload entry (JSON object)", path);
		return -EVID_EIO;
	}
	return 0;
}

int evid_upload_put(struct evid_store *s, const char *tenant, const char *name,
                    const unsigned char *data, size_t len, struct evid_upload *out, char *err,
                    size_t errlen)
{
	struct evid_upload u = { 0 };
	struct evid_meta meta = { 0 };
	char dir[4096], path[4200], tmp[4200], when[40];
	json_t *entry = NULL;
	char *text = NULL;
	int rc;

	rc = entry_path(s, tenant, name, dir, sizeof(dir), path, sizeof(path), err, errlen);
	if (rc < 0)
		goto out;
	if (len > EVID_UPLOAD_MAX_BYTES) {
		gb_set_error(err, errlen,
		             "%s is %zu bytes: the upload area takes files of at most %u bytes",
		             name, len, EVID_UPLOAD_MAX_BYTES);
		rc = -EVID_EINVAL;
		goto out;
	}
	snprintf(u.name, sizeof(u.name), "%s", name);
	evid_sniff_mime(data, len, u.mime, sizeof(u.mime));
	meta.tenant = tenant;
	meta.kind = EVID_KIND_UPLOAD;
	meta.mime = strcmp(u.mime, "image/png") ? u.mime : "application/octet-stream";
	meta.tool = "glassbox files put";
	rc = evid_store_put(s, &meta, data, len, &u.ref, err, errlen);
	if (rc < 0)
		goto out;
	snprintf(u.sha256, sizeof(u.sha256), "%s", u.ref.sha256);
	u.size_bytes = len;
	rc = gb_fs_mkdirs_abs(dir, err, errlen);
	if (rc < 0) {
		rc = -EVID_EIO;
		goto out;
	}
	gb_utc_iso8601(when, sizeof(when));
	entry = json_pack("{s:s, s:s, s:I, s:s, s:s}", "name", name, "sha256", u.sha256, "size",
	                  (json_int_t)len, "mime", u.mime, "added", when);
	text = entry ? json_dumps(entry, JSON_COMPACT | JSON_SORT_KEYS) : NULL;
	if (!text) {
		rc = -EVID_ENOMEM;
		goto out;
	}
	if (gb_fs_write_temp(dir, text, strlen(text), tmp, sizeof(tmp), err, errlen) < 0 ||
	    gb_fs_publish_replace(tmp, path, dir, err, errlen) < 0) {
		rc = -EVID_EIO;
		goto out;
	}
	if (out)
		*out = u;
	rc = 0;
out:
	free(text);
	json_decref(entry);
	return rc;
}

int evid_upload_find(struct evid_store *s, const char *tenant, const char *name,
                     struct evid_upload *out, char *err, size_t errlen)
{
	char dir[4096], path[4200];
	json_t *entry = NULL;
	int rc;

	rc = entry_path(s, tenant, name, dir, sizeof(dir), path, sizeof(path), err, errlen);
	if (rc < 0)
		goto out;
	rc = load_entry(path, &entry, err, errlen);
	if (rc == -EVID_ENOENT) {
		gb_set_error(err, errlen,
		             "no file '%s' in the upload area of tenant %s: put it there with "
		             "`glassbox files put FILE --name %s --tenant %s`",
		             name, tenant, name, tenant);
		goto out;
	}
	if (rc == 0 && entry_from_json(entry, out) < 0) {
		gb_set_error(err, errlen, "the upload entry %s is damaged: put the file again",
		             path);
		rc = -EVID_EIO;
	}
	if (rc == 0 && evid_artifact_path(evid_store_data_dir(s), tenant, 1, out->sha256,
	                                  out->ref.path, sizeof(out->ref.path)) < 0)
		rc = -EVID_EINVAL;
	if (rc == 0 && access(out->ref.path, R_OK) != 0) {
		gb_set_error(err, errlen,
		             "the bytes of '%s' are no longer in the store (purged?): put the file "
		             "again with glassbox files put",
		             name);
		rc = -EVID_ENOENT;
	}
	if (rc == 0) {
		snprintf(out->ref.sha256, sizeof(out->ref.sha256), "%s", out->sha256);
		out->ref.size_bytes = out->size_bytes;
	}
out:
	json_decref(entry);
	return rc;
}

int evid_upload_read(struct evid_store *s, const char *tenant, const struct evid_upload *u,
                     unsigned char **data, size_t *len, char *err, size_t errlen)
{
	return evid_store_read(s, tenant, u->sha256, data, len, NULL, 0, err, errlen);
}

static int by_name(const void *a, const void *b)
{
	return strcmp(json_string_value(json_object_get(*(json_t *const *)a, "name")),
	              json_string_value(json_object_get(*(json_t *const *)b, "name")));
}

json_t *evid_upload_list(struct evid_store *s, const char *tenant)
{
	char dir[4096], path[4400], err[256];
	json_t **items = NULL;
	json_t *list = json_array();
	struct dirent *de;
	size_t n = 0, cap = 0, i;
	DIR *d;

	if (!list || area_dir(s, tenant, dir, sizeof(dir), err, sizeof(err)) < 0)
		return list;
	d = opendir(dir);
	while (d && (de = readdir(d))) {
		size_t l = strlen(de->d_name);
		struct evid_upload u;
		json_t *entry = NULL;

		if (l < 6 || strcmp(de->d_name + l - 5, ".json") || de->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, de->d_name);
		if (load_entry(path, &entry, err, sizeof(err)) < 0 ||
		    entry_from_json(entry, &u) < 0) {
			json_decref(entry);
			continue;
		}
		if (n == cap) {
			json_t **more = realloc(items, (cap ? cap * 2 : 16) * sizeof(*items));

			if (!more) {
				json_decref(entry);
				break;
			}
			items = more;
			cap = cap ? cap * 2 : 16;
		}
		items[n++] = entry;
	}
	if (d)
		closedir(d);
	if (n)
		qsort(items, n, sizeof(*items), by_name);
	for (i = 0; i < n; i++)
		json_array_append_new(list, items[i]);
	free(items);
	return list;
}

int evid_upload_remove(struct evid_store *s, const char *tenant, const char *name, char *err,
                       size_t errlen)
{
	char dir[4096], path[4200];
	int rc;

	rc = entry_path(s, tenant, name, dir, sizeof(dir), path, sizeof(path), err, errlen);
	if (rc < 0)
		return rc;
	if (unlink(path) != 0) {
		if (errno == ENOENT) {
			gb_set_error(err, errlen, "no file '%s' in the upload area of tenant %s",
			             name, tenant);
			return -EVID_ENOENT;
		}
		gb_set_io_error(err, errlen, "remove", path, errno);
		return -EVID_EIO;
	}
	return gb_fs_sync_dir(dir, err, errlen) < 0 ? -EVID_EIO : 0;
}

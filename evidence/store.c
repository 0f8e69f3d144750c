/*
 * store.c - the content-addressed artifact store.
 *
 * DESIGN
 * What it owns: DATA/tenants/<tenant>/artifacts/ and .../invalid/. An
 * artifact is named by the sha256 of its bytes and lives at
 * <aa>/<sha256> (aa: the first two hex digits, so no directory grows
 * past a few thousand entries); each time it is stored, one JSON
 * metadata record is written beside it: <sha256>.json the first time,
 * <sha256>.<operation>.json afterwards. Bytes that failed validation are
 * kept the same way under invalid/, with valid:false and the reason.
 *
 * Threads: none of its own. Any thread may call any function at any
 * time; the handle is immutable after evid_store_open(), so there is no
 * lock. Concurrency is settled by the file system:
 *   - every file is written to a temp file in its final directory
 *     (.tmp.<random>, 0600), fsynced, then published, then the directory
 *     is fsynced;
 *   - the artifact is published with rename(): two workers storing the
 *     same bytes at once both rename identical content onto the same
 *     name, and a reader sees one whole file or none;
 *   - a metadata record is published with link(), which fails if the
 *     name exists: two records for the same bytes never overwrite one
 *     another; the loser tries the next name.
 * Each metadata record is also added to the artifact index (index.h,
 * SQLite today); the index is derived data, so a failure to update it is
 * logged and does not fail the put (evid_index_rebuild() catches up).
 *
 * Invariants: a file named <sha256> hashes to its name (evid_store_get
 * checks; evid_store_put repairs a file found altered); nothing outside
 * the tenant's directory is ever touched (tenant names are checked to be
 * one safe path component). A crash can leave a .tmp.* file behind; it
 * is never read and can be deleted.
 */
#include "evidence/evidence-private.h"
#include "evidence/evidence.h"
#include "evidence/index.h"

#include "common/log.h"
#include "common/util.h"

#include <errno.h>
#include <sodium.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define PATH_BYTES 4096

struct evid_store {
	char *data_dir;           /* immutable after open */
	struct evid_index *index; /* immutable after open; thread-safe itself */
};

/* Free space a tenant's artifacts need before an action that requires
 * evidence: a few screenshots' worth. */
#define STORE_MIN_FREE_BYTES (16ull * 1024ull * 1024ull)

/* Which tree of a tenant a file goes to. */
enum area { AREA_ARTIFACTS, AREA_INVALID };

/* Paths of one stored file: its directory (relative to the data dir and
 * absolute), the file and its first metadata record. */
struct paths {
	char rel_dir[256];
	char dir[PATH_BYTES];
	char file[PATH_BYTES];
	char meta[PATH_BYTES];
};

int evid_sha256_hex_is_valid(const char *hex)
{
	size_t i;

	if (!hex)
		return 0;
	for (i = 0; i < 64; i++)
		if (!((hex[i] >= '0' && hex[i] <= '9') || (hex[i] >= 'a' && hex[i] <= 'f')))
			return 0;
	return hex[64] == '\0';
}

void evid_sha256_hex(const unsigned char *data, size_t len, char hex[65])
{
	unsigned char digest[crypto_hash_sha256_BYTES];

	crypto_hash_sha256(digest, data, len);
	gb_hex(digest, sizeof(digest), hex);
}

const char *evid_strerror(int err)
{
	switch (err < 0 ? -err : err) {
	case EVID_OK:
		return "success";
	case EVID_EINVAL:
		return "invalid argument";
	case EVID_EBADPNG:
		return "invalid PNG";
	case EVID_EIO:
		return "the evidence store could not be written or read";
	case EVID_ENOENT:
		return "no such artifact";
	case EVID_ENOMEM:
		return "out of memory";
	case EVID_EBADB64:
		return "invalid base64";
	default:
		return "unknown evidence error";
	}
}

int evid_data_dir_prepare(const char *data_dir, char *err, size_t errlen)
{
	if (!data_dir || !data_dir[0]) {
		gb_set_error(err, errlen, "the data dir is not set: give one");
		return -EVID_EINVAL;
	}
	if (strlen(data_dir) > PATH_BYTES - 512) {
		gb_set_error(err, errlen,
		             "the data dir path is longer than %d bytes: choose a "
		             "shorter one",
		             PATH_BYTES - 512);
		return -EVID_EINVAL;
	}
	if (sodium_init() < 0) {
		gb_set_error(err, errlen, "libsodium could not be initialised");
		return -EVID_EIO;
	}
	return gb_fs_mkdirs_abs(data_dir, err, errlen);
}

int evid_store_open_err(const char *data_dir, struct evid_store **out, char *err, size_t errlen)
{
	struct evid_store *s = NULL;
	int rc = 0;

	*out = NULL;
	rc = evid_data_dir_prepare(data_dir, err, errlen);
	if (rc != 0)
		goto out;
	rc = gb_fs_mkdirs(data_dir, "tenants", err, errlen);
	if (rc != 0)
		goto out;
	s = calloc(1, sizeof(*s));
	if (s)
		s->data_dir = strdup(data_dir);
	if (!s || !s->data_dir) {
		gb_set_error(err, errlen, "out of memory opening the evidence store");
		rc = -EVID_ENOMEM;
		goto out;
	}
	rc = evid_index_open(data_dir, &s->index, err, errlen);
	if (rc != 0)
		goto out;
	*out = s;
	s = NULL;
out:
	evid_store_close(s);
	return rc;
}

int evid_store_open(const char *data_dir, struct evid_store **out)
{
	char err[512];
	int rc;

	rc = evid_store_open_err(data_dir, out, err, sizeof(err));
	if (rc != 0)
		GB_LOGE("evidence", "%s", err);
	return rc;
}

void evid_store_close(struct evid_store *s)
{
	if (!s)
		return;
	evid_index_close(s->index);
	free(s->data_dir);
	free(s);
}

/* Fills p for sha256 in tenant's area. The tenant must be safe. */
static int make_paths(const struct evid_store *s, const char *tenant, enum area area,
                      const char *sha256, struct paths *p, char *err, size_t errlen)
{
	const char *tree = area == AREA_INVALID ? "invalid" : "artifacts";
	int n1;
	int n2;
	int n3;
	int n4;
	int rc = 0;

	n1 = snprintf(p->rel_dir, sizeof(p->rel_dir), "tenants/%s/%s/%.2s", tenant, tree, sha256);
	n2 = snprintf(p->dir, sizeof(p->dir), "%s/%s", s->data_dir, p->rel_dir);
	n3 = snprintf(p->file, sizeof(p->file), "%s/%s", p->dir, sha256);
	n4 = snprintf(p->meta, sizeof(p->meta), "%s/%s.json", p->dir, sha256);
	if (n1 < 0 || n2 < 0 || n3 < 0 || n4 < 0 || (size_t)n1 >= sizeof(p->rel_dir) ||
	    (size_t)n2 >= sizeof(p->dir) || (size_t)n3 >= sizeof(p->file) ||
	    (size_t)n4 >= sizeof(p->meta)) {
		gb_set_error(err, errlen,
		             "the artifact path under %s is too long: choose a data "
		             "dir with a shorter path",
		             s->data_dir);
		rc = -EVID_EINVAL;
	}
	return rc;
}

/* Says why a tenant name is refused; the name is shown with anything
 * outside printable ASCII replaced by '?'. */
static void bad_tenant_error(const char *tenant, char *err, size_t errlen)
{
	char shown[81];
	size_t i;

	snprintf(shown, sizeof(shown), "%s", tenant ? tenant : "(none)");
	for (i = 0; shown[i]; i++)
		if ((unsigned char)shown[i] < 0x20 || (unsigned char)shown[i] > 0x7e)
			shown[i] = '?';
	gb_set_error(err, errlen,
	             "tenant name \"%s\" is not allowed: use 1 to %u of "
	             "A-Z a-z 0-9 . _ -, not starting with '.' and without \"..\"",
	             shown, EVID_MAX_NAME_BYTES);
}

/* Checks what every put needs: a store, a safe tenant, kind and mime,
 * bytes or none. */
static int check_put_args(const struct evid_store *s, const struct evid_meta *meta,
                          const unsigned char *data, size_t len, char *err, size_t errlen)
{
	int rc = -EVID_EINVAL;

	if (!s || !meta) {
		gb_set_error(err, errlen, "no store or no artifact description given");
		goto out;
	}
	if (!gb_fs_name_is_safe(meta->tenant)) {
		bad_tenant_error(meta->tenant, err, errlen);
		goto out;
	}
	if (!meta->kind || !meta->kind[0] || !meta->mime || !meta->mime[0]) {
		gb_set_error(err, errlen, "an artifact needs a kind and a mime type");
		goto out;
	}
	if (!data && len) {
		gb_set_error(err, errlen, "no bytes given for an artifact of %zu bytes", len);
		goto out;
	}
	rc = 0;
out:
	return rc;
}

/* The part of a metadata record's file name that stands for an
 * operation: the id itself when it is a safe name, else the first 16 hex
 * digits of its sha256, else (no id) random hex. */
static void operation_tag(const char *operation_id, char tag[EVID_MAX_NAME_BYTES + 1])
{
	char hex[65];

	if (gb_fs_name_is_safe(operation_id)) {
		snprintf(tag, EVID_MAX_NAME_BYTES + 1, "%s", operation_id);
	} else if (operation_id) {
		evid_sha256_hex((const unsigned char *)operation_id, strlen(operation_id), hex);
		snprintf(tag, EVID_MAX_NAME_BYTES + 1, "%.16s", hex);
	} else {
		gb_random_hex(tag, 8);
	}
}

/* A JSON string, or null for NULL. */
static json_t *string_or_null(const char *str)
{
	return str ? json_string(str) : json_null();
}

/* Builds the metadata record (new reference, NULL when out of memory or
 * when a string is not UTF-8: then err says which). */
static json_t *build_record(const struct evid_meta *meta, const char *sha256, size_t size,
                            const char *reason, size_t original_size, char *err, size_t errlen)
{
	char now[40];
	json_t *rec = NULL;
	json_t *args;
	int bad = 0;

	gb_utc_iso8601(now, sizeof(now));
	args = meta->arguments ? json_deep_copy(meta->arguments) : json_null();
	rec = json_pack("{s:s, s:s, s:s, s:I, s:s, s:o, s:o, s:o, s:o, s:o, s:s, s:b}", "sha256",
	                sha256, "kind", meta->kind, "mime", meta->mime, "size", (json_int_t)size,
	                "tenant", meta->tenant, "session", string_or_null(meta->session_id),
	                "operation", string_or_null(meta->operation_id), "tool",
	                string_or_null(meta->tool), "arguments", args ? args : json_null(), "url",
	                string_or_null(meta->url), "time", now, "valid", reason == NULL);
	if (!rec) {
		gb_set_error(err, errlen,
		             "cannot build the metadata record: a field is not valid "
		             "UTF-8 or memory ran out");
		goto out;
	}
	if (reason) {
		bad |= json_object_set_new(rec, "reason", json_string(reason));
		if (original_size != size) {
			bad |= json_object_set_new(rec, "truncated", json_true());
			bad |= json_object_set_new(rec, "original_size",
			                           json_integer((json_int_t)original_size));
		}
	}
	if (bad) {
		gb_set_error(err, errlen,
		             "cannot build the metadata record: the reason is not "
		             "valid UTF-8 or memory ran out");
		json_decref(rec);
		rec = NULL;
	}
out:
	return rec;
}

/* Publishes the record text under the first free name among
 * <sha>.json, <sha>.<tag>.json, <sha>.<tag>.<random>.json; that name
 * goes to name (PATH_BYTES). */
static int write_record(const struct paths *p, const char *sha256, const char *operation_id,
                        const char *text, char *name, char *err, size_t errlen)
{
	char tmp[PATH_BYTES];
	char tag[EVID_MAX_NAME_BYTES + 1];
	char rnd[17];
	int attempt;
	int n;
	int rc;

	rc = gb_fs_write_temp(p->dir, text, strlen(text), tmp, sizeof(tmp), err, errlen);
	if (rc != 0)
		goto out;
	operation_tag(operation_id, tag);
	for (attempt = 0; attempt < 8; attempt++) {
		if (attempt == 0) {
			n = snprintf(name, PATH_BYTES, "%s", p->meta);
		} else if (attempt == 1) {
			n = snprintf(name, PATH_BYTES, "%s/%s.%s.json", p->dir, sha256, tag);
		} else {
			gb_random_hex(rnd, 8);
			n = snprintf(name, PATH_BYTES, "%s/%s.%s.%s.json", p->dir, sha256, tag,
			             rnd);
		}
		if (n < 0 || (size_t)n >= PATH_BYTES) {
			gb_set_error(err, errlen, "the metadata path in %s is too long", p->dir);
			rc = -EVID_EINVAL;
			break;
		}
		rc = gb_fs_publish_new(tmp, name, p->dir, err, errlen);
		if (rc != 1)
			break;
	}
	if (rc == 1) {
		gb_set_error(err, errlen, "cannot find a free name for a metadata record in %s",
		             p->dir);
		rc = -EVID_EIO;
	}
	if (rc != 0)
		remove(tmp); /* publish_new keeps tmp on a clash and on our own errors */
out:
	return rc;
}

/* Makes p->file hold data: keeps an existing file that hashes to
 * sha256, otherwise writes the bytes and renames them into place. */
static int write_content(const struct paths *p, const char *sha256, const unsigned char *data,
                         size_t len, char *err, size_t errlen)
{
	unsigned char *old = NULL;
	size_t oldlen = 0;
	char oldhash[65];
	char tmp[PATH_BYTES];
	int rc;

	rc = gb_fs_read_file(p->file, EVID_MAX_ARTIFACT_BYTES, &old, &oldlen, NULL, 0);
	if (rc == 0) {
		evid_sha256_hex(old, oldlen, oldhash);
		if (!strcmp(oldhash, sha256))
			goto out; /* already stored: content-addressing dedupes */
		GB_LOGW("evidence",
		        "%s was altered (it hashes to %s): writing the good bytes again", p->file,
		        oldhash);
	}
	rc = gb_fs_write_temp(p->dir, data ? data : (const unsigned char *)"", len, tmp,
	                      sizeof(tmp), err, errlen);
	if (rc != 0)
		goto out;
	rc = gb_fs_publish_replace(tmp, p->file, p->dir, err, errlen);
out:
	free(old);
	return rc;
}

/* Adds the record just written to the index; a failure is logged only
 * (the record on disk is the truth and the index can be rebuilt). */
static void index_record(struct evid_store *s, const struct evid_meta *meta, json_t *rec,
                         const char *record_path)
{
	struct evid_index_row row;
	char err[1024];
	size_t skip = strlen(s->data_dir) + 1;

	memset(&row, 0, sizeof(row));
	row.tenant = meta->tenant;
	row.sha256 = json_string_value(json_object_get(rec, "sha256"));
	row.kind = meta->kind;
	row.mime = meta->mime;
	row.size_bytes = (size_t)json_integer_value(json_object_get(rec, "size"));
	row.session_id = meta->session_id;
	row.operation_id = meta->operation_id;
	row.tool = meta->tool;
	row.url = meta->url;
	row.time = json_string_value(json_object_get(rec, "time"));
	row.valid = json_is_true(json_object_get(rec, "valid"));
	row.reason = json_string_value(json_object_get(rec, "reason"));
	row.record = strlen(record_path) > skip ? record_path + skip : record_path;
	if (s->index && evid_index_add(s->index, &row, err, sizeof(err)) != 0)
		GB_LOGW("evidence", "artifact %s of %s was kept but not indexed: %s", row.sha256,
		        meta->tenant, err);
}

/* The metadata record of an artifact (*rec) and its text (*text), both
 * new and the caller's to free, even on failure. Arguments too large to
 * keep whole are kept cut, marked, hashed and measured (evid_json_fit)
 * rather than leaving no record at all. Returns 0, or a negative EVID_
 * error with err set; the text may still be over EVID_MAX_META_BYTES. */
static int meta_record(const struct evid_meta *meta, const char *sha256, size_t len,
                       const char *reason, size_t original_size, json_t **rec, char **text,
                       char *err, size_t errlen)
{
	struct evid_meta cut = *meta;
	json_t *fitted = NULL;
	int truncated, rc = 0;

	*rec = NULL;
	*text = NULL;
	for (;;) {
		*rec = build_record(&cut, sha256, len, reason, original_size, err, errlen);
		if (!*rec || (fitted &&
		              json_object_set_new(*rec, "arguments_truncated", json_true()) != 0)) {
			rc = -EVID_EINVAL;
			goto out;
		}
		*text = json_dumps(*rec, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
		if (!*text) {
			gb_set_error(err, errlen, "out of memory writing the metadata record");
			rc = -EVID_ENOMEM;
			goto out;
		}
		if (strlen(*text) <= EVID_MAX_META_BYTES || !meta->arguments || fitted)
			goto out;
		free(*text);
		*text = NULL;
		json_decref(*rec);
		*rec = NULL;
		fitted = evid_json_fit(meta->arguments, EVID_MAX_META_BYTES / 2, &truncated);
		if (!fitted) {
			gb_set_error(err, errlen, "out of memory writing the metadata record");
			rc = -EVID_ENOMEM;
			goto out;
		}
		cut.arguments = fitted;
	}
out:
	json_decref(fitted); /* build_record copied it */
	return rc;
}

/* The put shared by valid and invalid evidence. */
static int put_in(struct evid_store *s, enum area area, const struct evid_meta *meta,
                  const unsigned char *data, size_t len, const char *sha256, const char *reason,
                  size_t original_size, struct evid_ref *ref, char *err, size_t errlen)
{
	struct paths p;
	char record_path[PATH_BYTES];
	json_t *rec = NULL;
	char *text = NULL;
	int rc;

	rc = make_paths(s, meta->tenant, area, sha256, &p, err, errlen);
	if (rc != 0)
		goto out;
	rc = gb_fs_mkdirs(s->data_dir, p.rel_dir, err, errlen);
	if (rc != 0)
		goto out;
	rc = write_content(&p, sha256, data, len, err, errlen);
	if (rc != 0)
		goto out;
	rc = meta_record(meta, sha256, len, reason, original_size, &rec, &text, err, errlen);
	if (rc != 0)
		goto out;
	if (strlen(text) > EVID_MAX_META_BYTES) {
		gb_set_error(err, errlen,
		             "the metadata record is %zu bytes, more than the %u "
		             "allowed: its URL or names are too large",
		             strlen(text), EVID_MAX_META_BYTES);
		rc = -EVID_EINVAL;
		goto out;
	}
	rc = write_record(&p, sha256, meta->operation_id, text, record_path, err, errlen);
	if (rc != 0)
		goto out;
	index_record(s, meta, rec, record_path);
	if (ref) {
		const char *base = strrchr(record_path, '/');

		memcpy(ref->sha256, sha256, sizeof(ref->sha256));
		snprintf(ref->path, sizeof(ref->path), "%s", p.file);
		ref->size_bytes = len;
		snprintf(ref->meta_name, sizeof(ref->meta_name), "%s",
		         base ? base + 1 : record_path);
		evid_sha256_hex((const unsigned char *)text, strlen(text), ref->meta_sha256);
	}
out:
	free(text);
	json_decref(rec);
	return rc;
}

int evid_store_put(struct evid_store *s, const struct evid_meta *meta, const unsigned char *data,
                   size_t len, struct evid_ref *ref, char *err, size_t errlen)
{
	char sha256[65];
	int rc;

	rc = check_put_args(s, meta, data, len, err, errlen);
	if (rc != 0)
		goto out;
	if (len > EVID_MAX_ARTIFACT_BYTES) {
		gb_set_error(err, errlen, "an artifact of %zu bytes is more than the %u allowed",
		             len, EVID_MAX_ARTIFACT_BYTES);
		rc = -EVID_EINVAL;
		goto out;
	}
	evid_sha256_hex(data ? data : (const unsigned char *)"", len, sha256);
	if (!strcmp(meta->mime, "image/png")) {
		rc = evid_png_check_hashed(data, len, sha256, NULL, err, errlen);
		if (rc != 0)
			goto out;
	}
	rc = put_in(s, AREA_ARTIFACTS, meta, data, len, sha256, NULL, len, ref, err, errlen);
out:
	return rc;
}

int evid_store_put_invalid(struct evid_store *s, const struct evid_meta *meta,
                           const unsigned char *data, size_t len, const char *reason,
                           struct evid_ref *ref, char *err, size_t errlen)
{
	char *why = NULL; /* reason may be the caller's err buffer: keep a copy */
	char sha256[65];
	size_t kept = len;
	int rc;

	rc = check_put_args(s, meta, data, len, err, errlen);
	if (rc != 0)
		goto out;
	if (!reason || !reason[0]) {
		gb_set_error(err, errlen, "invalid evidence needs the reason it is invalid");
		rc = -EVID_EINVAL;
		goto out;
	}
	why = strdup(reason);
	if (!why) {
		gb_set_error(err, errlen, "out of memory recording invalid evidence");
		rc = -EVID_ENOMEM;
		goto out;
	}
	if (kept > EVID_MAX_ARTIFACT_BYTES)
		kept = EVID_MAX_ARTIFACT_BYTES;
	evid_sha256_hex(data ? data : (const unsigned char *)"", kept, sha256);
	rc = put_in(s, AREA_INVALID, meta, data, kept, sha256, why, len, ref, err, errlen);
out:
	free(why);
	return rc;
}

/* Copies the mime type recorded in the metadata at path into mime_out;
 * "application/octet-stream" when it cannot be read. */
static void read_mime(const char *path, char *mime_out, size_t mime_len)
{
	unsigned char *text = NULL;
	size_t len = 0;
	json_t *rec = NULL;
	json_t *mime;
	json_error_t jerr;
	char err[512];
	const char *value = "application/octet-stream";

	if (!mime_out || !mime_len)
		goto out;
	if (gb_fs_read_file(path, EVID_MAX_META_BYTES, &text, &len, err, sizeof(err)) != 0) {
		GB_LOGW("evidence", "metadata unreadable, serving as %s: %s", value, err);
		goto out;
	}
	rec = json_loadb((const char *)text, len, JSON_REJECT_DUPLICATES, &jerr);
	mime = rec ? json_object_get(rec, "mime") : NULL;
	if (json_is_string(mime))
		value = json_string_value(mime);
	else
		GB_LOGW("evidence", "%s has no mime type, serving as %s", path, value);
out:
	if (mime_out && mime_len)
		snprintf(mime_out, mime_len, "%s", value);
	json_decref(rec);
	free(text);
}

int evid_store_read(struct evid_store *s, const char *tenant, const char *sha256,
                    unsigned char **data, size_t *len, char *mime_out, size_t mime_len, char *err,
                    size_t errlen)
{
	struct paths p;
	unsigned char *buf = NULL;
	size_t buflen = 0;
	char actual[65];
	int rc;

	*data = NULL;
	*len = 0;
	if (!s || !gb_fs_name_is_safe(tenant)) {
		bad_tenant_error(tenant, err, errlen);
		rc = -EVID_EINVAL;
		goto out;
	}
	if (!evid_sha256_hex_is_valid(sha256)) {
		gb_set_error(err, errlen,
		             "\"%.80s\" is not an artifact id: expected 64 lowercase "
		             "hex digits",
		             sha256 ? sha256 : "(null)");
		rc = -EVID_EINVAL;
		goto out;
	}
	rc = make_paths(s, tenant, AREA_ARTIFACTS, sha256, &p, err, errlen);
	if (rc != 0)
		goto out;
	rc = gb_fs_read_file(p.file, EVID_MAX_ARTIFACT_BYTES, &buf, &buflen, err, errlen);
	if (rc == -EVID_ENOENT) {
		gb_set_error(err, errlen, "no artifact %s for tenant %s", sha256, tenant);
		goto out;
	}
	if (rc != 0)
		goto out;
	evid_sha256_hex(buf, buflen, actual);
	if (strcmp(actual, sha256) != 0) {
		gb_set_error(err, errlen,
		             "artifact %s was altered: its content hashes to %s, not "
		             "to its name; do not trust it (restore it from a backup or treat this "
		             "evidence as lost)",
		             p.file, actual);
		rc = -EVID_EIO;
		goto out;
	}
	read_mime(p.meta, mime_out, mime_len);
	*data = buf;
	*len = buflen;
	buf = NULL;
out:
	free(buf);
	return rc;
}

/* evid_index_find() callback: keeps the row's sha (the last one wins). */
static int keep_sha(const struct evid_index_row *row, void *user)
{
	snprintf(user, 65, "%s", row->sha256);
	return 0;
}

int evid_store_find_by_operation(struct evid_store *s, const char *tenant, const char *operation_id,
                                 const char *kind, char *sha256)
{
	struct evid_index_query q = { 0 };
	char err[256];

	sha256[0] = '\0';
	if (!s || !s->index || !gb_fs_name_is_safe(tenant) || !operation_id)
		return -EVID_EINVAL;
	q.tenant = tenant;
	q.operation_id = operation_id;
	q.kind = kind;
	if (evid_index_find(s->index, &q, keep_sha, sha256, err, sizeof(err)) != 0)
		return -EVID_EIO;
	return sha256[0] ? 0 : -EVID_ENOENT;
}

int evid_store_get(struct evid_store *s, const char *tenant, const char *sha256,
                   unsigned char **data, size_t *len, char *mime_out, size_t mime_len)
{
	char err[1024];
	int rc;

	err[0] = '\0';
	rc = evid_store_read(s, tenant, sha256, data, len, mime_out, mime_len, err, sizeof(err));
	if (rc == -EVID_EIO)
		GB_LOGE("evidence", "%s", err);
	return rc;
}

struct evid_index *evid_store_index(struct evid_store *s)
{
	return s ? s->index : NULL;
}

const char *evid_store_data_dir(const struct evid_store *s)
{
	return s->data_dir;
}

int evid_store_check_writable(struct evid_store *s, const char *tenant, char *err, size_t errlen)
{
	struct paths p;
	char rel[256];
	char why[1024] = "";
	int rc;

	if (!s || !gb_fs_name_is_safe(tenant)) {
		bad_tenant_error(tenant, err, errlen);
		rc = -EVID_EINVAL;
		goto out;
	}
	rc = make_paths(s, tenant, AREA_ARTIFACTS, EVID_ZERO_HASH, &p, err, errlen);
	if (rc != 0)
		goto out;
	snprintf(rel, sizeof(rel), "tenants/%s/artifacts", tenant);
	rc = gb_fs_mkdirs(s->data_dir, rel, why, sizeof(why));
	if (rc == 0) {
		snprintf(p.dir, sizeof(p.dir), "%s/%s", s->data_dir, rel);
		rc = gb_fs_check_writable(p.dir, STORE_MIN_FREE_BYTES, why, sizeof(why));
	}
	if (rc != 0)
		gb_set_error(err, errlen, "evidence could not be kept for tenant %s: %s", tenant,
		             why);
out:
	return rc;
}

json_t *evid_artifact_json(const char *kind, const char *mime, const struct evid_ref *ref,
                           int valid)
{
	json_t *a = json_pack("{s:s, s:s, s:s, s:I, s:b}", "kind", kind, "sha256", ref->sha256,
	                      "mime", mime, "size", (json_int_t)ref->size_bytes, "valid", valid);

	if (a && ref->meta_name[0] &&
	    (json_object_set_new(a, "meta", json_string(ref->meta_name)) != 0 ||
	     json_object_set_new(a, "meta_sha256", json_string(ref->meta_sha256)) != 0)) {
		json_decref(a);
		a = NULL;
	}
	return a;
}

/*
 * files.h - a tenant's upload area and the MIME sniffing of files that
 * come from outside (uploads, downloads).
 *
 * The upload area holds the only files a page may be given
 * (browser_file_upload, browser_drop): each is put there by the tenant's
 * operator (`glassbox files put`), never named by a host path. Layout:
 *
 *   DATA/tenants/<tenant>/uploads/<name>.json   {name, sha256, size, mime, added}
 *   DATA/tenants/<tenant>/artifacts/<aa>/<sha256>  the bytes (kind "upload")
 *
 * The bytes are an artifact of the store, so the audit record of the
 * call that uploads one can name it by hash and `audit verify` checks
 * it. Names are safe path components (gb_fs_name_is_safe: 1..64 of
 * [A-Za-z0-9._-]). Thread-safe: every call reads or publishes whole
 * files atomically.
 */
#ifndef GB_EVIDENCE_FILES_H
#define GB_EVIDENCE_FILES_H

#include "evidence/evidence.h"

#include <jansson.h>
#include <stddef.h>

/* The largest file the upload area takes (the store's ceiling). */
#define EVID_UPLOAD_MAX_BYTES EVID_MAX_ARTIFACT_BYTES

#define EVID_KIND_UPLOAD "upload" /* a file of the upload area */

/* One file of the upload area. */
struct evid_upload {
	char name[65];
	char sha256[65];
	size_t size_bytes;
	char mime[128];
	struct evid_ref ref; /* the artifact (filled by put and find) */
};

/*
 * Puts data[0..len) into tenant's upload area as name, replacing a file
 * of that name: the bytes stored as an artifact (kind "upload", MIME
 * sniffed), then the entry published atomically. data, name, tenant
 * borrowed. Returns 0 with *out filled (may be NULL), or a negative
 * evid_err with err ("'a/b' is not a file name: use 1..64 of A-Z a-z 0-9
 * . _ -").
 */
int evid_upload_put(struct evid_store *s, const char *tenant, const char *name,
                    const unsigned char *data, size_t len, struct evid_upload *out, char *err,
                    size_t errlen);

/* Finds name in tenant's upload area and checks its artifact is there:
 * 0 with *out, -EVID_ENOENT ("no file 'x' in the upload area of tenant
 * t: put it there with glassbox files put"), -EVID_EINVAL (bad name) or
 * -EVID_EIO, with err. */
int evid_upload_find(struct evid_store *s, const char *tenant, const char *name,
                     struct evid_upload *out, char *err, size_t errlen);

/* Reads the bytes of a file found with evid_upload_find (hash checked):
 * *data malloc'd. 0 or a negative evid_err with err. */
int evid_upload_read(struct evid_store *s, const char *tenant, const struct evid_upload *u,
                     unsigned char **data, size_t *len, char *err, size_t errlen);

/* The entries of tenant's upload area, sorted by name: a new array of
 * {name, sha256, size, mime, added}; NULL when out of memory. */
json_t *evid_upload_list(struct evid_store *s, const char *tenant);

/* Removes name from the upload area (the artifact stays: audit records
 * may name it). 0, -EVID_ENOENT or -EVID_EINVAL / -EVID_EIO with err. */
int evid_upload_remove(struct evid_store *s, const char *tenant, const char *name, char *err,
                       size_t errlen);

/* The MIME type of data[0..len) from its bytes alone (libmagic), e.g.
 * "application/pdf", "text/plain"; "application/octet-stream" when it
 * cannot be told. Thread-safe. */
void evid_sniff_mime(const unsigned char *data, size_t len, char *mime, size_t mime_len);

#endif

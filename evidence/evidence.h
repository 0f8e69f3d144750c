/*
 * evidence.h - what can be proven later: a content-addressed artifact
 * store under the data dir, PNG validation with libpng, and one JSON
 * metadata record per stored artifact.
 *
 * Layout (DESIGN.md):  DATA/tenants/<tenant>/artifacts/<aa>/<sha256>
 *                      DATA/tenants/<tenant>/artifacts/<aa>/<sha256>.json
 * Writes are atomic (temp file, fsync, rename). Every function is
 * thread-safe: workers of different sessions store concurrently.
 */
#ifndef GB_EVIDENCE_H
#define GB_EVIDENCE_H

#include <jansson.h>
#include <stddef.h>

struct evid_store;

enum evid_err {
	EVID_OK = 0,
	EVID_EINVAL = 1,  /* bad argument (e.g. tenant name with '/') */
	EVID_EBADPNG = 2, /* the bytes are not a valid, decodable PNG */
	EVID_EIO = 3,     /* the store could not be written (full disk, read-only...) */
	EVID_ENOENT = 4,  /* no such artifact */
	EVID_ENOMEM = 5,
	EVID_EBADB64 = 6, /* invalid base64 */
};

/* Opens (creating 0700 dirs as needed) the store rooted at data_dir.
 * data_dir: borrowed, copied. */
int evid_store_open(const char *data_dir, struct evid_store **out);
void evid_store_close(struct evid_store *s);

/* Facts about a PNG, filled by evid_png_check(). */
struct evid_png_info {
	unsigned width;
	unsigned height;
};

/* Fully decodes png[0..len) with libpng (signature, IHDR, every row, CRCs)
 * and fills info. Returns 0, or -EVID_EBADPNG with the reason in err. */
int evid_png_check(const unsigned char *png, size_t len, struct evid_png_info *info, char *err,
                   size_t errlen);

/* Decodes standard base64 (as CDP sends screenshots) into a malloc'd
 * buffer the caller frees. Returns 0 or -EVID_EBADB64. */
int evid_base64_decode(const char *b64, size_t b64len, unsigned char **out, size_t *outlen);

/* Describes one artifact to store. All strings borrowed. */
struct evid_meta {
	const char *tenant;       /* "local" in stdio mode */
	const char *kind;         /* "screenshot", ... */
	const char *mime;         /* "image/png" */
	const char *session_id;
	const char *operation_id;
	const char *tool;         /* e.g. "browser_click" */
	const char *url;          /* page URL when taken */
	json_t *arguments;        /* already redacted tool arguments; borrowed; may be NULL */
};

/* Result of storing: sha256 in hex, path of the artifact file, size. */
struct evid_ref {
	char sha256[65];
	char path[4096];
	size_t size_bytes;
};

/* Stores bytes content-addressed (sha256) with a metadata record
 * {sha256, kind, mime, size, tenant, session, operation, tool, arguments,
 * url, time}. If meta->mime is "image/png" the bytes are validated first;
 * an invalid PNG is not stored as an artifact but returns -EVID_EBADPNG
 * (the caller records it as invalid evidence). Storing the same bytes
 * twice keeps one file and writes a second metadata record
 * (<sha256>.<operation>.json). Returns 0 or a negative evid_err with a
 * reason in err. */
int evid_store_put(struct evid_store *s, const struct evid_meta *meta, const unsigned char *data,
                   size_t len, struct evid_ref *ref, char *err, size_t errlen);

/* Reads an artifact back by sha256 (hex) for the given tenant, checking
 * that its content still hashes to its name. *data is malloc'd. Returns
 * 0, -EVID_ENOENT, or -EVID_EIO if it was altered. mime_out (may be
 * NULL) receives the recorded mime type, at most mime_len bytes. */
int evid_store_get(struct evid_store *s, const char *tenant, const char *sha256,
                   unsigned char **data, size_t *len, char *mime_out, size_t mime_len);

const char *evid_strerror(int err);

#endif

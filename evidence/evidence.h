/*
 * evidence.h - what can be proven later: a content-addressed artifact
 * store under the data dir, PNG validation with libpng, and one JSON
 * metadata record per stored artifact.
 *
 * Layout (DESIGN.md):  DATA/tenants/<tenant>/artifacts/<aa>/<sha256>
 *                      DATA/tenants/<tenant>/artifacts/<aa>/<sha256>.json
 *                      DATA/tenants/<tenant>/invalid/<aa>/<sha256>[.json]
 * (<aa> is the first two hex digits of the sha256.) Directories are 0700,
 * files 0600. Writes are atomic (temp file in the same dir, fsync,
 * rename, fsync dir). Every function is thread-safe: workers of different
 * sessions store concurrently, even the same bytes at the same moment.
 *
 * Names that become path components (tenant) are 1..64 characters of
 * [A-Za-z0-9._-], do not start with '.' and contain no "..".
 */
#ifndef GB_EVIDENCE_H
#define GB_EVIDENCE_H

#include "common/fs.h"

#include <errno.h>
#include <jansson.h>
#include <stddef.h>

struct evid_store;

/* Ceilings on bytes that come from outside (CDP screenshots, callers). */
#define EVID_MAX_ARTIFACT_BYTES (64u * 1024u * 1024u)
#define EVID_MAX_BASE64_BYTES (((EVID_MAX_ARTIFACT_BYTES + 2u) / 3u) * 4u)
#define EVID_MAX_NAME_BYTES GB_FS_MAX_NAME_BYTES  /* tenant (and safe operation ids) */
#define EVID_PNG_MAX_SIDE 32768u                  /* width and height, pixels */
#define EVID_PNG_MAX_PIXELS (64u * 1024u * 1024u) /* width * height */

/* Errors are negated errno values, plus two of the evidence's own. */
enum evid_err {
	EVID_OK = 0,
	EVID_EINVAL = EINVAL, /* bad argument (e.g. tenant name with '/') */
	EVID_EIO = EIO,       /* the store could not be written (full disk, read-only...) */
	EVID_ENOENT = ENOENT, /* no such artifact */
	EVID_ENOMEM = ENOMEM,
	EVID_EBADPNG = 1001, /* the bytes are not a valid, decodable PNG */
	EVID_EBADB64 = 1002, /* invalid base64 */
};

/* Opens (creating 0700 dirs as needed) the store rooted at data_dir.
 * data_dir: borrowed, copied. Returns 0, -EVID_EINVAL, -EVID_ENOMEM, or
 * -EVID_EIO when the dirs cannot be created (the reason is logged; use
 * evid_store_open_err() to get it). */
int evid_store_open(const char *data_dir, struct evid_store **out);

/* Same as evid_store_open() with the reason for a failure in err
 * ("cannot create directory /x/tenants: Read-only file system; ..."). */
int evid_store_open_err(const char *data_dir, struct evid_store **out, char *err, size_t errlen);

/* Frees the handle (not the data). NULL is a no-op. No call on s may be
 * running or start afterwards. */
void evid_store_close(struct evid_store *s);

/* Facts about a PNG, filled by evid_png_check(). */
struct evid_png_info {
	unsigned width;
	unsigned height;
};

/* Fully decodes png[0..len) with libpng (signature, IHDR, every row, CRCs)
 * and fills info (may be NULL). Strict: CRC errors in any chunk, libpng's
 * "benign" errors (e.g. extra compressed data after the image; the one
 * exception is libpng's list of known-incorrect sRGB colour profiles),
 * a side over EVID_PNG_MAX_SIDE, more than
 * EVID_PNG_MAX_PIXELS pixels, and any byte after the IEND chunk (a
 * screenshot never has any; trailing bytes could hide a payload in
 * content that reviewers look at) all make it invalid. libpng warnings
 * (e.g. about an ancillary chunk) do not. Returns 0, or -EVID_EBADPNG
 * with the reason in err ("invalid PNG: IDAT: CRC error"), or
 * -EVID_ENOMEM. err may be NULL when errlen is 0. */
int evid_png_check(const unsigned char *png, size_t len, struct evid_png_info *info, char *err,
                   size_t errlen);

/* Decodes standard base64 (as CDP sends screenshots: '+', '/', '='
 * padding, no whitespace) into a malloc'd buffer the caller frees. b64
 * need not be NUL-terminated. Input longer than EVID_MAX_BASE64_BYTES, a
 * character outside the alphabet, or missing padding gives -EVID_EBADB64
 * (and *out NULL); -EVID_ENOMEM when out of memory. Empty input decodes
 * to an empty (non-NULL) buffer. */
int evid_base64_decode(const char *b64, size_t b64len, unsigned char **out, size_t *outlen);

/* Describes one artifact to store. All strings borrowed. tenant, kind
 * and mime are required; the others may be NULL (recorded as null). */
struct evid_meta {
	const char *tenant; /* "local" in stdio mode */
	const char *kind;   /* "screenshot", ... */
	const char *mime;   /* "image/png" */
	const char *session_id;
	const char *operation_id;
	const char *tool;  /* e.g. "browser_click" */
	const char *url;   /* page URL when taken */
	json_t *arguments; /* already redacted tool arguments; borrowed; may be NULL */
};

/* Result of storing: sha256 in hex, path of the artifact file, size, and
 * the metadata record written for it: its file name (beside the artifact)
 * and the sha256 of its bytes, so that an audit record can vouch for it. */
struct evid_ref {
	char sha256[65];
	char path[4096];
	size_t size_bytes;
	char meta_name[256]; /* "" when none was written */
	char meta_sha256[65];
};

/* Stores bytes content-addressed (sha256) with a metadata record
 * {sha256, kind, mime, size, tenant, session, operation, tool, arguments,
 * url, time, valid: true} (time: UTC ISO 8601). If meta->mime is
 * "image/png" the bytes are validated first; an invalid PNG is not stored
 * as an artifact but returns -EVID_EBADPNG (the caller records it with
 * evid_store_put_invalid()). Storing the same bytes twice keeps one file
 * and writes a second metadata record (<sha256>.<operation>.json; the
 * operation id is used as is when it is a safe name, otherwise as the
 * first 16 hex digits of its sha256; a further clash adds a random
 * suffix, so no record is ever overwritten). An artifact file found
 * altered on disk is replaced by the good bytes. len is at most
 * EVID_MAX_ARTIFACT_BYTES. meta, data: borrowed. Returns 0 or a negative
 * evid_err (-EVID_EINVAL, -EVID_EBADPNG, -EVID_EIO, -EVID_ENOMEM) with a
 * reason in err (may be NULL when errlen is 0); ref (may be NULL) is
 * filled on success. */
int evid_store_put(struct evid_store *s, const struct evid_meta *meta, const unsigned char *data,
                   size_t len, struct evid_ref *ref, char *err, size_t errlen);

/*
 * Records evidence that failed validation (a screenshot that is not a
 * valid PNG, base64 that did not decode: pass the base64 text itself as
 * data), so that nothing is silently dropped. The raw bytes are kept
 * content-addressed under DATA/tenants/<tenant>/invalid/<aa>/<sha256>,
 * with a metadata record beside it like evid_store_put()'s but with
 * valid: false and "reason": reason. Bytes beyond EVID_MAX_ARTIFACT_BYTES
 * are cut off: the record then says "truncated": true and
 * "original_size". Invalid evidence is never served by evid_store_get();
 * it is there for reviewers. meta, data, reason: borrowed (reason
 * required; it may be the same buffer as err, e.g. the err that
 * evid_store_put() filled). Returns 0 or a negative evid_err with a reason in err; ref
 * (may be NULL) receives the hash and path of the kept bytes.
 */
int evid_store_put_invalid(struct evid_store *s, const struct evid_meta *meta,
                           const unsigned char *data, size_t len, const char *reason,
                           struct evid_ref *ref, char *err, size_t errlen);

/* The sha256 (65 bytes) of the artifact of kind ("screenshot") that the
 * tenant's operation operation_id left, the latest when several did.
 * Returns 0, -EVID_ENOENT when it left none, -EVID_EINVAL / -EVID_EIO. */
int evid_store_find_by_operation(struct evid_store *s, const char *tenant, const char *operation_id,
                                 const char *kind, char *sha256);

/* Reads an artifact back by sha256 (64 lowercase hex digits) for the
 * given tenant, checking that its content still hashes to its name.
 * *data is malloc'd (the caller frees it). Returns 0, -EVID_EINVAL (bad
 * tenant or hash), -EVID_ENOENT, or -EVID_EIO if it was altered or cannot
 * be read (the reason is logged). mime_out (may be NULL) receives the
 * recorded mime type, at most mime_len bytes with the NUL
 * ("application/octet-stream" if its metadata record is unreadable). */
int evid_store_get(struct evid_store *s, const char *tenant, const char *sha256,
                   unsigned char **data, size_t *len, char *mime_out, size_t mime_len);

/* Same as evid_store_get() with the reason for a failure in err ("no
 * artifact 3fa1... for tenant acme"; "artifact ... was altered: ..."). */
int evid_store_read(struct evid_store *s, const char *tenant, const char *sha256,
                    unsigned char **data, size_t *len, char *mime_out, size_t mime_len, char *err,
                    size_t errlen);

/* A short English name for an evid_err, negative or not ("invalid PNG"). */

const char *evid_strerror(int err);

/* ---- artifact kinds ------------------------------------------------------ */

#define EVID_KIND_SCREENSHOT "screenshot"             /* image/png, after the action */
#define EVID_KIND_ANNOTATED "annotated_screenshot"    /* image/png, box + click point */
#define EVID_KIND_SNAPSHOT "snapshot_text"            /* text/plain; charset=utf-8 */
#define EVID_KIND_NETWORK_LOG "network_log"           /* application/json */
#define EVID_KIND_DOWNLOAD "download"                 /* the download's own type */
#define EVID_KIND_SCREENCAST_FRAME "screencast_frame" /* image/png, the session recording */

/* Checks, without storing, that tenant's artifacts can be written now:
 * the directory exists or can be created, a probe file can be written
 * and fsynced in it, and at least 16 MiB are free on its file system.
 * Call it before acting when the tenant's policy requires evidence.
 * Returns 0, -EVID_EINVAL (bad tenant) or -EVID_EIO with the reason in err
 * ("evidence could not be kept for tenant acme: cannot create ...: Read-only
 * file system; remount it read-write ..."). */
int evid_store_check_writable(struct evid_store *s, const char *tenant, char *err, size_t errlen);

/* {kind, sha256, mime, size, valid, meta?, meta_sha256?} for an audit
 * record's artifacts (new reference; NULL when out of memory): meta names
 * the artifact's metadata record and meta_sha256 hashes it, so that `audit
 * verify` notices an edited one. kind, mime borrowed. */
json_t *evid_artifact_json(const char *kind, const char *mime, const struct evid_ref *ref,
                           int valid);

/* ---- annotation (annotate.c) -------------------------------------------- */

/* What to draw on a screenshot, in CSS pixels of the page. */
struct evid_annotation {
	int has_box; /* the target element's border box */
	double box_x;
	double box_y;
	double box_width;
	double box_height;
	int has_point; /* where the pointer event was dispatched */
	double point_x;
	double point_y;
	int has_hit_box; /* what a missed click hit instead, when not the target */
	double hit_x;
	double hit_y;
	double hit_width;
	double hit_height;
	double scale; /* image pixels per CSS pixel (devicePixelRatio); 0 = 1 */
};

/* Colours and sizes of the drawing (image pixels at scale 1; thicker in
 * proportion to scale, rounded). The box outline is drawn outside the
 * box, so the element itself stays as it was; the click point is a
 * crosshair with a white core pixel at the point itself. */
#define EVID_ANNOT_BOX_RGB 0xE0, 0x1B, 0x5A   /* crimson */
#define EVID_ANNOT_BOX_PX 3                   /* outline thickness */
#define EVID_ANNOT_POINT_RGB 0x00, 0xA0, 0xFF /* azure */
#define EVID_ANNOT_POINT_ARM_PX 12            /* crosshair half-length */
#define EVID_ANNOT_POINT_PX 3                 /* crosshair arm thickness */

/* Decodes png (validated with evid_png_check first) to 8-bit RGBA, draws
 * the annotation clipped to the image (a box or point partly or wholly
 * outside is drawn where it falls inside, or not at all), and encodes a
 * new PNG of the same size into *out (malloc'd; the caller frees it).
 * png, a: borrowed. Returns 0, -EVID_EBADPNG (the input is not a valid
 * PNG, reason in err), -EVID_EINVAL (a NaN or absurd coordinate) or
 * -EVID_ENOMEM. */
int evid_png_annotate(const unsigned char *png, size_t len, const struct evid_annotation *a,
                      unsigned char **out, size_t *outlen, char *err, size_t errlen);

/* A rectangle in CSS pixels of a screenshot. */
struct evid_rect {
	double x;
	double y;
	double width;
	double height;
};

/*
 * A copy of png with each rect painted black (grown by one image pixel on
 * every side), for fields whose content must not be kept (a field that
 * received a secret). Coordinates are multiplied by scale (0 = 1). *out is
 * malloc'd. Returns 0, -EVID_EBADPNG (png invalid), -EVID_EINVAL (a rect
 * or the scale is not finite and sensible) or -EVID_ENOMEM, with err.
 */
int evid_png_mask(const unsigned char *png, size_t len, const struct evid_rect *rects,
                  size_t n_rects, double scale, unsigned char **out, size_t *outlen, char *err,
                  size_t errlen);

/* ---- the evidence of one state-changing action (bundle.c) ---------------- */

/* What a state-changing action leaves behind. All borrowed. */
struct evid_action_evidence {
	/* tenant, session_id, operation_id, tool, url, arguments (already
	 * redacted); kind and mime are ignored (set per artifact) */
	const struct evid_meta *meta;
	/* the screenshot after the action: PNG bytes, or the base64 text CDP
	 * sent (screenshot NULL); neither: no screenshot */
	const unsigned char *screenshot;
	size_t screenshot_len;
	const char *screenshot_b64;
	/* the target's box and the click point, drawn on an annotated copy;
	 * ignored when annotation.has_box and has_point are both 0 */
	struct evid_annotation annotation;
	const char *snapshot_text; /* the snapshot the agent acted on; NULL: none */
	json_t *network_log;       /* array/object of the action's requests; NULL: none */
};

/*
 * Keeps an action's evidence: the screenshot (validated; an invalid one
 * is kept with evid_store_put_invalid(), never dropped), an annotated
 * copy when there is a box or point, the snapshot text and the network
 * log. Each part is tried even when another failed. *artifacts (new
 * reference, never NULL on return unless out of memory) lists what was
 * kept as evid_artifact_json() objects, ready for the audit record's
 * artifacts. Returns 0 when everything was kept; -EVID_EBADPNG when the
 * screenshot was invalid and kept as invalid evidence (the rest kept);
 * -EVID_EIO when some evidence could not be kept (err: "evidence could
 * not be kept: ..." with the first reason: put it in the action's result,
 * and refuse further actions if the tenant requires evidence); or
 * -EVID_EINVAL / -EVID_ENOMEM.
 */
int evid_keep_action_evidence(struct evid_store *s, const struct evid_action_evidence *ev,
                              json_t **artifacts, char *err, size_t errlen);

#endif

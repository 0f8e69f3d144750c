/*
 * files-private.h - files that move between the tenant and the page:
 * the session's download area (downloads.c) and the files handed to a
 * page from the tenant's upload area (uploads.c). Private to actions/.
 */
#ifndef GB_ACTIONS_FILES_PRIVATE_H
#define GB_ACTIONS_FILES_PRIVATE_H

#include <jansson.h>
#include <stddef.h>

struct act_session;
struct act_ctx;
struct act_downloads;

/* ---- files.c: the hooks the pipeline calls -------------------------------- */

/* Attaches the page log and the download area to the session's browser
 * when they have not seen it yet (a new one): as soon as the browser is
 * there (act_launch_browser: for a pooled one, before the session's first
 * call) and, if that has not happened, before a call acts. Returns 0, or
 * -1 with why in err (the browser's downloads could not be confined). */
int act_files_attach(struct act_session *as, char *err, size_t errlen);

/* After the browser is there, before the call acts: attaches the page
 * log and the download area to a browser they have not seen yet (a new
 * one); a call that can change the page is the one downloads that begin
 * now belong to. Returns 0, or -1 with the call failed (the browser's
 * downloads could not be confined). */
int act_files_begin(struct act_ctx *ctx);
/* At the end of every call that reached the browser: its downloads
 * (act_downloads_call_end). */
void act_files_end(struct act_ctx *ctx);
/* Right before the answer of every call that reached the browser: the
 * console messages since the last call into their log files, and the
 * answer's events (act_console_log_end). */
void act_files_answer(struct act_ctx *ctx);

/* ---- downloads.c --------------------------------------------------------- */

/* Downloads a session keeps track of at once; more are refused. */
#define ACT_DOWNLOADS_MAX 32
/* How long, at most, the end of a call waits for its downloads to finish. */
#define ACT_DOWNLOAD_WAIT_MS 15000

/* A new, empty tracker (NULL when out of memory); freed with the session. */
struct act_downloads *act_downloads_new(void);
void act_downloads_free(struct act_downloads *d);

/*
 * On a freshly launched browser: makes the session's download area (a
 * dir only this session's browser can write, sessions/areas.c) and points
 * the browser at it with Browser.setDownloadBehavior ("allowAndName":
 * files are named by their guid, never by what the page suggests), or
 * "deny" when the policy's files.downloads is false; listens to its
 * download events. Returns 0, or -1 with err: the browser must not be
 * used, since its downloads would land where nobody keeps them. What
 * was followed of the browser before is dropped (its listener went with
 * its connection when it closed).
 */
int act_downloads_attach(struct act_session *as, char *err, size_t errlen);

/* Right before a call acts on the page: downloads that begin from now on
 * are this call's. */
void act_downloads_call_begin(struct act_ctx *ctx);
/* 1 when a download of the running call has begun, -1 when it began and
 * was refused (files.downloads, egress), 0 when none did, waiting for one
 * at most wait_ms (and the call's deadline): a navigation the browser
 * turned into a download ends without a document (net::ERR_ABORTED). */
int act_downloads_await_begin(struct act_ctx *ctx, int wait_ms);
/*
 * At the end of every call: when it acted, waits (bounded by
 * ACT_DOWNLOAD_WAIT_MS and the call's deadline) for the downloads it
 * started to end; keeps each finished download as an artifact of the
 * operation that caused it (kind "download": sha256, MIME sniffed, size
 * capped by files.download_max_mb) with a receipt in the audit log
 * (kind "download"), and reports every download not reported before in
 * the result's `downloads`: [{name, size, sha256, mime, uri, url, state,
 * operation_id}] (state "completed"; or "too_large", "canceled",
 * "refused", "failed" with a reason; "in_progress" when still running:
 * reported again once it ends).
 */
void act_downloads_call_end(struct act_ctx *ctx);

/* ---- artifact.c ---------------------------------------------------------- */

/* Stores data[0..len) (borrowed) as an artifact of the call (kind, mime),
 * links it from the result (`evidence`, a resource_link) and names it in
 * an audit record (evidence_kept), for tools whose output is a file (a
 * PDF, a request's body). sha (65 bytes, may be NULL) receives its hash.
 * Returns 0, or -1 with the call failed (evidence_failed). */
int act_keep_artifact(struct act_ctx *ctx, const char *kind, const char *mime,
                      const unsigned char *data, size_t len, char *sha);

/* One round trip into the call's page, so that every event its page sent
 * before (console messages, requests, file choosers) has been read.
 * Returns 0, or -1 with the call failed. */
int act_page_sync(struct act_ctx *ctx);

/* ---- uploads.c ----------------------------------------------------------- */

/* Files one call may hand to a page. */
#define ACT_UPLOADS_MAX_FILES 16

/*
 * Finds each of paths (borrowed: an array of strings, each the NAME of a
 * file of the tenant's upload area or its resource URI
 * "glassbox://upload/NAME"; never a path on the host) and copies it into
 * the session's uploads area, which only its browser can read. *files: a
 * new array of the copies' paths, for the browser; *info: a new array of
 * {name, size, sha256, mime}. Refused when the policy's files.uploads is
 * false, or the files together are larger than files.upload_max_mb.
 * Returns 0, or -1 with the call failed (bad_arguments, not_found,
 * uploads_refused, too_large) and a message that says what to do.
 */
int act_uploads_stage(struct act_ctx *ctx, json_t *paths, json_t **files, json_t **info);

/* What a call hands to the page, for the fingerprint an approval is
 * bound to: each name of `paths` with the sha256 of its file in the
 * upload area now (another file under the same name is another action),
 * and `data` (sorted, compact), appended to b. */
struct gb_buf;
void act_uploads_fingerprint(struct act_ctx *ctx, struct gb_buf *b);

/* The receipt of files handed to the page (info as act_uploads_stage
 * made it, borrowed): one audit record of kind "upload" naming each
 * file's artifact, and `uploads` in the result. how: "file_chooser",
 * "file_input" or "drop". */
void act_uploads_record(struct act_ctx *ctx, json_t *info, const char *how);

#endif

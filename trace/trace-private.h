/*
 * trace-private.h - shared by the exporters of trace/: the session read
 * back (session.c), HAR entries (har.c), the zip writer (zip.c), the
 * Playwright code of an action (codegen.c), and the builders of each
 * format (playwright_trace.c, har.c, test_export.c).
 */
#ifndef GB_TRACE_PRIVATE_H
#define GB_TRACE_PRIVATE_H

#include "trace/trace.h"

#include "common/fs.h"
#include "common/util.h"

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

/* A session read back from the audit log. */
struct trace_session {
	const struct trace_export_opts *opts;
	char tenant[256];
	char session[256];
	json_t *records;  /* every record of the session, in chain order (owned) */
	json_t *actions;  /* its tool_call records (references into records) */
	const char *flow; /* the flow its session_opened names; NULL */
	int64_t first_ms; /* wall time of its first record */
	int64_t last_ms;  /* and of its last */
};

/* Reads the session opts names (by id, or the newest run of opts->flow)
 * into s. 0, or a negative code with err. trace_session_free() always. */
int trace_session_load(const struct trace_export_opts *opts, struct trace_session *s, char *err,
                       size_t errlen);
void trace_session_free(struct trace_session *s);

/* Milliseconds since the epoch of an ISO 8601 UTC time
 * ("2026-03-01T12:00:00.123Z"); 0 when it does not parse. */
int64_t trace_time_ms(const char *iso);
/* The ISO 8601 UTC form of ms, into buf (at least 32 bytes). */
void trace_time_iso(int64_t ms, char *buf, size_t buflen);

/* When an action ran, in wall milliseconds: from its started_at_ms for
 * its duration_ms (a record without started_at_ms: it ended when it was
 * written). */
void trace_action_times(const json_t *rec, int64_t *start_ms, int64_t *end_ms);

/* The artifact of kind in rec's artifacts (borrowed), or NULL. */
json_t *trace_artifact(const json_t *rec, const char *kind);

/* Reads an artifact of the session's tenant, checked against its hash.
 * 0 or a negative code with err; *data is malloc'd. */
int trace_artifact_bytes(const struct trace_session *s, const char *sha256, unsigned char **data,
                         size_t *len, char *err, size_t errlen);

/* The HAR 1.2 entries (a new array) of the requests one action made: its
 * exchanges when the network_log has them (borrowed; may be NULL),
 * otherwise its recorded responses and failed requests, and its blocked
 * requests, timed within [start_ms, end_ms]; pageref names the page. Query parameters named like
 * credentials are redacted as the audit log redacts members. */
json_t *trace_har_entries(const json_t *rec, const json_t *exchanges, int64_t start_ms,
                          int64_t end_ms, const char *pageref);

/* The exchanges (headers, MIME types, sizes, times) of rec's network_log
 * artifact, a new reference; NULL when it has none (records from before
 * they were kept, an unreadable artifact). */
json_t *trace_exchanges(const struct trace_session *s, const json_t *rec);

/* ---- the zip writer (zip.c) ---------------------------------------------- */

struct trace_zip;

/* A new zip archive in memory, at most max_bytes. NULL when out of memory. */
struct trace_zip *trace_zip_new(size_t max_bytes);
/* Adds a file (name borrowed, data copied). 0, or -1 with err. */
int trace_zip_add(struct trace_zip *z, const char *name, const void *data, size_t len, char *err,
                  size_t errlen);
/* Ends the archive and hands its bytes over (*out malloc'd); frees z.
 * 0, or -1 with err. */
int trace_zip_finish(struct trace_zip *z, unsigned char **out, size_t *len, char *err,
                     size_t errlen);
/* Frees an unfinished archive. NULL is a no-op. */
void trace_zip_free(struct trace_zip *z);

/* ---- the Playwright code of an action (codegen.c) ------------------------ */

/* The Playwright statements (malloc'd, one or more lines, each ending in
 * ';') that do what the tool_call record rec did: its playwright_code
 * member when it has one, otherwise rendered from its tool, arguments and
 * element. NULL when the action has no Playwright equivalent (a snapshot,
 * a screenshot) or its target cannot be named without a snapshot ref. */
char *trace_playwright_code(const json_t *rec);

/* The Playwright locator expression of rec's target
 * ("page.getByRole('button', { name: 'Save', exact: true })"), malloc'd;
 * NULL when it has none that outlives the session. */
char *trace_playwright_locator(const json_t *rec);

/* A JavaScript string literal of s (malloc'd). */
char *trace_js_string(const char *s);

/* The flow target of rec's element: its locator string when the call named
 * one, else role and name from the element; NULL when only a snapshot ref
 * names it (a new reference). */
json_t *trace_flow_target(const json_t *rec);

/* ---- the formats ---------------------------------------------------------- */

int trace_build_playwright(const struct trace_session *s, unsigned char **out, size_t *len,
                           char *err, size_t errlen);
int trace_build_har(const struct trace_session *s, unsigned char **out, size_t *len, char *err,
                    size_t errlen);
int trace_build_flow(const struct trace_session *s, unsigned char **out, size_t *len, char *err,
                     size_t errlen);
int trace_build_spec(const struct trace_session *s, unsigned char **out, size_t *len, char *err,
                     size_t errlen);

/* 1 when the tool_call record rec is one a test replays: a verified,
 * state-changing action that succeeded (navigate, click, type, select,
 * press, hover, wait, evaluate). */
int trace_is_replayable(const json_t *rec);

#endif

/*
 * trace.h - a session's evidence in the formats QA teams and reviewers
 * already read: a Playwright trace (trace.zip, opened by
 * `npx playwright show-trace`), a HAR 1.2 file, and the session turned
 * into a test (a glassbox flow, or a Playwright Test spec).
 *
 * Everything is built from the tenant's audit records and artifacts, read
 * back with evidence/'s reader (audit.h): what the trail holds is what is
 * exported, already redacted as the audit log redacts it, and nothing
 * else. Each export appends one signed "exported" record (what, which
 * session, the output's sha256) to the tenant's log.
 *
 * Thread safety: each call stands alone; they may run on any thread.
 */
#ifndef GB_TRACE_TRACE_H
#define GB_TRACE_TRACE_H

#include <jansson.h>
#include <stddef.h>

/* Largest export, bytes (a trace with its screenshots). */
#define TRACE_MAX_EXPORT_BYTES (512u * 1024u * 1024u)

/* The export formats, as `glassbox session export --as` names them. */
enum trace_format {
	TRACE_FORMAT_PLAYWRIGHT_TRACE, /* trace.zip */
	TRACE_FORMAT_HAR,              /* HAR 1.2 JSON */
	TRACE_FORMAT_FLOW,             /* a glassbox flow (JSON) */
	TRACE_FORMAT_SPEC,             /* a Playwright Test spec (TypeScript) */
};

/* What to export. Strings borrowed. */
struct trace_export_opts {
	const char *data_dir;      /* required */
	const char *tenant;        /* NULL: the tenant whose log has the session */
	const char *session;       /* the session id; or NULL with flow */
	const char *flow;          /* the newest run of the flow of that name */
	const char *agent_session; /* or the browser session of that act_session */
	enum trace_format format;
	const char *flow_name;          /* flow/spec: the test's name; NULL: from the session */
	int audit;                      /* 1: append the "exported" record */
	const char *output_description; /* the file, for that record */
};

/* Builds the export of opts->session (or the newest run of opts->flow)
 * into *out (malloc'd, *len bytes; text formats are NUL-terminated).
 * Returns 0, or a negative errno-style code with err saying what failed
 * and what to do ("no records of session s-1 in tenant local: ..."). */
int trace_export(const struct trace_export_opts *opts, unsigned char **out, size_t *len, char *err,
                 size_t errlen);

/* trace_export() written atomically to path ("-": standard output). */
int trace_export_write(const struct trace_export_opts *opts, const char *path, char *err,
                       size_t errlen);

/* ---- command line (cli.c) ----------------------------------------------- */

/* `glassbox trace export`, `glassbox har export`, `glassbox session
 * export`: argv[0] is "trace", "har" or "session". Returns the exit
 * status: 0 written, 2 usage error, 3 could not run (no such session, I/O). */
int trace_cli(int argc, char **argv, const char *data_dir);

#endif

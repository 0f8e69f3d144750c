/*
 * flow.h - end-to-end flows for QA teams: a JSON file of steps (navigate,
 * click, type, select, press, wait, evaluate) with targets by role and
 * name, by text or by CSS, and `expect` checks, run through the same
 * actions/ pipeline as the MCP tools (policy, approvals, verification,
 * evidence), reported as JUnit XML. docs/flows.md is the file format.
 *
 * A flow is a client of actions/, as mcp/ is: each run has its own
 * act_session (its own worker thread and browser), so flows run in
 * parallel from as many threads as the caller likes. A parsed flow is
 * immutable and may be read from several threads.
 *
 * Secrets: variables the flow names in "secrets" are substituted only
 * where actions/ redacts them (the text of a type step and its
 * expect.value); every string this module hands out (results, messages,
 * JUnit) has their values replaced by "[secret NAME]" as well.
 */
#ifndef GB_FLOW_H
#define GB_FLOW_H

#include "actions/actions.h"

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

/* ---- variables (vars.c) -------------------------------------------------- */

struct flow_vars;

/*
 * Loads the values of ${NAME} variables: from file (NULL: none; lines
 * NAME=VALUE, blank lines and lines starting with # ignored, a value may
 * be wrapped in double or single quotes), then from the environment.
 * A file value wins over the environment. Returns 0, or -1 with a message
 * naming the file and line in err.
 */
int flow_vars_load(const char *file, struct flow_vars **out, char *err, size_t errlen);
void flow_vars_free(struct flow_vars *v);

/* ---- a parsed flow (parse.c) ---------------------------------------------- */

struct flow;

/*
 * Reads and checks the flow file at path, substituting variables from
 * vars (borrowed; may be NULL: environment only). Returns 0 with *out, or
 * -1 with a message naming the file, the step and the field in err
 * ("shop.json: step 3 (type): field \"text\": variable ${PASSWORD} is not
 * set: export it or put it in the --vars file").
 */
int flow_load(const char *path, const struct flow_vars *vars, struct flow **out, char *err,
              size_t errlen);

/* The same over a parsed document (borrowed); path names it in messages. */
int flow_parse(const char *path, json_t *doc, const struct flow_vars *vars, struct flow **out,
               char *err, size_t errlen);

void flow_free(struct flow *f);

const char *flow_name(const struct flow *f);
const char *flow_path(const struct flow *f);
size_t flow_step_count(const struct flow *f);

/*
 * The tool call step i (0-based) runs: its tool ("browser_click") and
 * arguments (borrowed; variables substituted, secrets in clear: never
 * print them). For tests and tooling.
 */
const char *flow_step_tool(const struct flow *f, size_t i);
json_t *flow_step_args(const struct flow *f, size_t i);

/* A malloc'd copy of s with every secret value of f replaced by
 * "[secret NAME]"; NULL only when memory runs out. */
char *flow_redact(const struct flow *f, const char *s);

/* ---- running (run.c) ------------------------------------------------------ */

struct flow_run_opts {
	const struct act_config *cfg; /* borrowed: data dir, tenant, policy, browser */
	/* where the screenshots of this flow are copied (created), such as
	 * "out-attachments/checkout"; NULL: not copied */
	const char *attach_dir;
};

/* What one flow run did. Strings are malloc'd and already redacted. */
struct flow_result {
	char *name;
	char *path;
	int passed;
	int64_t started_ms; /* wall clock, ms since the epoch */
	int64_t duration_ms;
	size_t steps_total;
	size_t steps_run;    /* including the failed one */
	size_t failed_step;  /* 1-based; 0 when passed */
	char *failed_tool;   /* "browser_click" */
	char *error_code;    /* "expectation_failed", "approval_required", ... */
	char *message;       /* one line: step, what failed, expected vs observed */
	json_t *verdicts;    /* the failed step's verdicts (redacted), or NULL */
	json_t *steps;       /* [{step, tool, ok, duration_ms, attempts, text,
	                            error?, verdicts?, evidence?}] (redacted) */
	char *screenshot;    /* the copied screenshot of the failed step (or of the
	                            last step when passed); NULL when none */
	char *log;           /* the steps as text, for the JUnit system-out */
	char *agent_session; /* the act_session's id (its records name it) */
	char *trace;         /* the Playwright trace written for it, or NULL */
};

/*
 * Runs f in a new act_session (cfg) and waits for it: steps in order,
 * each retried up to its "retries" times when it fails, stopping at the
 * first step that still fails. Fills *res (cleared first). Returns 0 when
 * the flow ran (passed or not; see res->passed), -1 when the session
 * could not be created (res->message says why).
 */
int flow_run(const struct flow *f, const struct flow_run_opts *opts, struct flow_result *res);

void flow_result_clear(struct flow_result *res);

/* ---- JUnit XML (junit.c) --------------------------------------------------- */

/*
 * Writes the JUnit XML report of n results (borrowed) to path: one
 * <testsuite name=suite_name> with one <testcase> per flow (classname
 * "flows.<file name>", file the flow's path, time in seconds), a <failure> with the failed
 * check's expected and observed values, the screenshot as a
 * property "attachment" and as [[ATTACHMENT|path]] in <system-out>.
 * Written atomically (temporary file, then rename). Returns 0 or -1 with
 * the reason in err.
 */
int flow_junit_write(const char *path, const char *suite_name, const struct flow_result *results,
                     size_t n, double wall_seconds, char *err, size_t errlen);

#endif

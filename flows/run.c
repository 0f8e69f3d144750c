/*
 * run.c - one flow run: a new act_session (its own worker thread and
 * browser), each step submitted as an act_call exactly as an MCP client
 * submits a tool call, awaited, retried only as the step says, and the
 * run stopped at the first step that still fails, with its verdicts and
 * the screenshot of the page at that moment.
 *
 * Threads: flow_run() blocks its caller while the session's worker runs
 * each call (act_session_run). Several flow_run() may run at once on different threads (each
 * has its own session). Everything the result holds is redacted of the
 * flow's secret values.
 */
#include "flows/flows-private.h"

#include "common/log.h"
#include "common/util.h"

#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define STEP_TEXT_MAX 300 /* characters of a step's text in the log */

/* Submits one tool call (args borrowed) and waits for its result (new
 * reference; never NULL). */
static json_t *call_tool(struct act_session *s, const struct act_def *def, json_t *args, int secret)
{
	struct act_call call;

	memset(&call, 0, sizeof(call));
	call.def = def;
	call.args = args;
	call.client_name = "glassbox-run";
	call.secret_text = secret;
	return act_session_run(s, &call);
}

/* Replaces every string in j (in place) by its redacted copy. */
static void redact_json(const struct flow *f, json_t *j)
{
	const char *key;
	json_t *v;
	size_t i;

	if (json_is_string(j)) {
		char *r = flow_redact(f, json_string_value(j));

		if (r)
			json_string_set(j, r);
		free(r);
		return;
	}
	json_object_foreach(j, key, v) redact_json(f, v);
	json_array_foreach(j, i, v) redact_json(f, v);
}

/* Creates dir and its parents (0755: CI publishes them). */
static int make_dirs(const char *dir)
{
	char path[PATH_MAX];
	char *p;

	if (snprintf(path, sizeof(path), "%s", dir) >= (int)sizeof(path))
		return -1;
	for (p = path + 1; *p; p++) {
		if (*p != '/')
			continue;
		*p = '\0';
		if (mkdir(path, 0755) != 0 && errno != EEXIST)
			return -1;
		*p = '/';
	}
	return mkdir(path, 0755) != 0 && errno != EEXIST ? -1 : 0;
}

/* The URI of the last screenshot a result links, or NULL (borrowed). */
static const char *screenshot_uri(json_t *result)
{
	json_t *ev = json_object_get(json_object_get(result, "structuredContent"), "evidence");
	const char *uri = NULL;
	size_t i;

	for (i = 0; i < json_array_size(ev); i++) {
		json_t *e = json_array_get(ev, i);

		if (!strcmp(gb_or(json_string_value(json_object_get(e, "kind")), ""), "screenshot"))
			uri = json_string_value(json_object_get(e, "uri"));
	}
	return uri;
}

/* Copies the evidence screenshot uri to DIR/step-NN.png; the path goes
 * to res->screenshot. A failure is noted in the log, not fatal. */
static void copy_screenshot(struct act_session *s, const struct flow_run_opts *o, const char *uri,
                            size_t step, struct flow_result *res, struct gb_buf *log)
{
	unsigned char *png = NULL;
	char path[PATH_MAX], abs[PATH_MAX], mime[64], err[512];
	size_t len = 0;
	FILE *f = NULL;

	if (!o->attach_dir || !uri)
		return;
	if (make_dirs(o->attach_dir) < 0) {
		gb_buf_appendf(log, "note: cannot create %s: %s\n", o->attach_dir, strerror(errno));
		return;
	}
	if (act_session_read_artifact(s, uri, &png, &len, mime, sizeof(mime), err, sizeof(err)) <
	    0) {
		gb_buf_appendf(log, "note: cannot read the screenshot %s: %s\n", uri, err);
		return;
	}
	snprintf(path, sizeof(path), "%s/step-%02zu.png", o->attach_dir, step);
	f = fopen(path, "wb");
	if (!f || fwrite(png, 1, len, f) != len) {
		gb_buf_appendf(log, "note: cannot write %s: %s\n", path, strerror(errno));
		goto out;
	}
	free(res->screenshot);
	res->screenshot = strdup(realpath(path, abs) ? abs : path);
out:
	if (f)
		fclose(f);
	free(png);
}

/* The line under the answer's section title ("### Error"), or NULL. */
static const char *section_line(const char *t, const char *title)
{
	size_t n = strlen(title);
	const char *p = t;

	while (p && *p) {
		if (!strncmp(p, title, n) && p[n] == '\n')
			return p + n + 1;
		p = strchr(p, '\n');
		p = p ? p + 1 : NULL;
	}
	return NULL;
}

/* What a step did, in one line cut to STEP_TEXT_MAX bytes: the first line
 * of the answer's ### Error, else of its ### Verification (docs/tools.md,
 * the answer's layout), else its first line. */
static char *first_line(json_t *result)
{
	const char *t = json_string_value(
	    json_object_get(json_array_get(json_object_get(result, "content"), 0), "text"));
	const char *line;
	size_t n;

	t = gb_or(t, "");
	line = section_line(t, "### Error");
	if (!line)
		line = section_line(t, "### Verification");
	if (!line)
		line = t;
	n = strcspn(line, "\n");
	return strndup(line, n > STEP_TEXT_MAX ? STEP_TEXT_MAX : n);
}

/* The result's error code, or "". */
static const char *error_code(json_t *result)
{
	json_t *sc = json_object_get(result, "structuredContent");

	return gb_or(json_string_value(json_object_get(json_object_get(sc, "error"), "code")), "");
}

/* What a held step says in a flow: the tool's text tells an agent that
 * its approval is waiting for a person, but a flow does not wait, so it
 * says that instead (a new string; NULL when out of memory). */
static char *held_text(json_t *result)
{
	json_t *gate = json_object_get(json_object_get(result, "structuredContent"), "gate");
	char *out = NULL;

	if (asprintf(&out,
	             "not done: this action needs a person's approval (risk rule %s): %s; a "
	             "flow does not wait for approvals: pre-approve it with a risk rule "
	             "{\"decision\": \"allow\"} in the policy (--config)",
	             gb_or(json_string_value(json_object_get(gate, "rule")), "?"),
	             gb_or(json_string_value(json_object_get(gate, "summary")), "")) < 0)
		out = NULL;
	return out;
}

/* "click role=button[name=\"Save\"]": what step i does, for people. */
static char *describe_step(const struct flow_step *st)
{
	const char *what = json_string_value(json_object_get(st->args, "target"));
	char *out = NULL;

	if (!what)
		what = json_string_value(json_object_get(st->args, "url"));
	if (!what)
		what = json_string_value(json_object_get(st->args, "key"));
	if (!what && !strcmp(st->kind, "wait"))
		what = gb_or(json_string_value(json_object_get(st->args, "text")),
		             json_string_value(json_object_get(st->args, "textGone")));
	if (asprintf(&out, "%s%s%s%s%s%s", st->kind, what ? " " : "", what ? what : "",
	             st->label ? " (" : "", st->label ? st->label : "", st->label ? ")" : "") < 0)
		out = NULL;
	return out;
}

/* The failure's one-line message: the step and why; the failed checks'
 * expected and observed values when an expectation failed. */
static char *failure_message(const struct flow_step *st, size_t step, json_t *sc)
{
	json_t *err = json_object_get(sc, "error");
	char *what = describe_step(st);
	char *out = NULL;

	json_t *gate = json_object_get(sc, "gate");
	const char *code = gb_or(json_string_value(json_object_get(err, "code")), "error");

	/* a flow does not wait for a person: say how to pre-approve instead */
	if (!strcmp(code, "approval_required") && gate) {
		if (asprintf(
		        &out,
		        "step %zu %s failed: it needs a person's approval (risk rule %s): "
		        "%s; a flow does not wait for approvals: pre-approve this action with a "
		        "risk rule {\"decision\": \"allow\"} in the policy given with --config "
		        "(approval_required)",
		        step, gb_or(what, st->kind),
		        gb_or(json_string_value(json_object_get(gate, "rule")), "?"),
		        gb_or(json_string_value(json_object_get(gate, "summary")), "")) < 0)
			out = NULL;
		free(what);
		return out;
	}
	if (asprintf(&out, "step %zu %s failed: %s (%s)", step, gb_or(what, st->kind),
	             gb_or(json_string_value(json_object_get(err, "message")), "no reason given"),
	             code) < 0)
		out = NULL;
	free(what);
	return out;
}

/* Runs step st (index i) with its retries; returns the last result. */
static json_t *run_step(struct act_session *s, const struct flow *f, const struct flow_step *st,
                        size_t i, int *attempts, struct gb_buf *log)
{
	json_t *result = NULL;
	int a;

	for (a = 0; a <= st->retries; a++) {
		json_t *sc;

		if (a > 0) {
			char *line = first_line(result);
			char *red = flow_redact(f, line);

			gb_buf_appendf(log, "step %zu attempt %d failed (%s); retrying in %d ms\n",
			               i + 1, a, gb_or(red, ""), st->retry_delay_ms);
			free(line);
			free(red);
			json_decref(result);
			if (st->retry_delay_ms)
				usleep((useconds_t)st->retry_delay_ms * 1000);
		}
		result = call_tool(s, st->def, st->args, st->secret);
		sc = json_object_get(result, "structuredContent");
		*attempts = a + 1;
		if (json_is_true(json_object_get(sc, "ok")))
			break;
		/* a refusal by policy is not something a retry changes */
		if (!strcmp(gb_or(json_string_value(
		                      json_object_get(json_object_get(sc, "error"), "code")),
		                  ""),
		            "approval_required"))
			break;
	}
	return result;
}

/* Adds step i's summary to res->steps and the log (all redacted). */
static void note_step(const struct flow *f, const struct flow_step *st, size_t i, json_t *result,
                      int attempts, struct flow_result *res, struct gb_buf *log)
{
	json_t *sc = json_object_get(result, "structuredContent");
	int ok = json_is_true(json_object_get(sc, "ok"));
	int held = !strcmp(error_code(result), "approval_required");
	char *line = held ? held_text(result) : first_line(result);
	char *what = describe_step(st);
	json_t *entry;

	entry = json_pack("{s:I, s:s, s:s, s:s, s:b, s:I, s:i, s:s}", "step", (json_int_t)(i + 1),
	                  "kind", st->kind, "tool", st->def->name, "does", gb_or(what, st->kind),
	                  "ok", ok, "duration_ms",
	                  (json_int_t)json_integer_value(json_object_get(sc, "duration_ms")),
	                  "attempts", attempts, "text", gb_or(line, ""));
	if (entry) {
		if (json_object_get(sc, "error"))
			json_object_set(entry, "error", json_object_get(sc, "error"));
		if (json_object_get(sc, "verdicts"))
			json_object_set(entry, "verdicts", json_object_get(sc, "verdicts"));
		if (json_object_get(sc, "evidence"))
			json_object_set(entry, "evidence", json_object_get(sc, "evidence"));
		if (json_object_get(sc, "blocked"))
			json_object_set(entry, "blocked", json_object_get(sc, "blocked"));
		if (json_object_get(sc, "gate"))
			json_object_set(entry, "gate", json_object_get(sc, "gate"));
		{
			/* the members are shared with the result: redact a copy */
			json_t *copy = json_deep_copy(entry);

			json_decref(entry);
			entry = copy;
		}
		if (held && line)
			json_object_set_new(json_object_get(entry, "error"), "message",
			                    json_string(line));
		redact_json(f, entry);
		json_array_append_new(res->steps, entry);
	}
	{
		char *red = flow_redact(f, line);
		char *rwhat = flow_redact(f, what);

		gb_buf_appendf(log, "step %zu %s: %s in %lld ms (attempt %d): %s\n", i + 1,
		               gb_or(rwhat, ""), ok ? "passed" : "FAILED",
		               (long long)json_integer_value(json_object_get(sc, "duration_ms")),
		               attempts, gb_or(red, ""));
		free(red);
		free(rwhat);
	}
	free(line);
	free(what);
}

int flow_run(const struct flow *f, const struct flow_run_opts *opts, struct flow_result *res)
{
	struct act_config cfg = *opts->cfg;
	struct act_session *s = NULL;
	struct timespec wall;
	struct gb_buf log;
	char last_shot[128] = "";
	json_t *last = NULL;
	char err[512];
	int64_t t0 = gb_now_ms();
	size_t i;
	int rc = -1;

	memset(res, 0, sizeof(*res));
	gb_buf_init(&log, 1 << 20);
	clock_gettime(CLOCK_REALTIME, &wall);
	res->started_ms = (int64_t)wall.tv_sec * 1000 + wall.tv_nsec / 1000000;
	res->name = strdup(f->name);
	res->path = strdup(f->path);
	res->steps_total = f->n_steps;
	res->steps = json_array();
	if (f->action_timeout_ms)
		cfg.action_timeout_ms = f->action_timeout_ms;
	/* the trail names the run and the flow on each of its records */
	cfg.client_name = "glassbox-run";
	cfg.flow_name = flow_name(f);
	if (act_session_new(&cfg, &s, err, sizeof(err)) < 0) {
		res->error_code = strdup("session_failed");
		if (asprintf(&res->message, "cannot start a session for %s: %s", f->name, err) < 0)
			res->message = NULL;
		goto out;
	}
	res->agent_session = strdup(act_session_id(s));
	for (i = 0; i < f->n_steps; i++) {
		const struct flow_step *st = &f->steps[i];
		json_t *sc;
		int attempts = 0;

		json_decref(last);
		last = run_step(s, f, st, i, &attempts, &log);
		sc = json_object_get(last, "structuredContent");
		res->steps_run = i + 1;
		note_step(f, st, i, last, attempts, res, &log);
		if (screenshot_uri(last))
			snprintf(last_shot, sizeof(last_shot), "%s", screenshot_uri(last));
		if (json_is_true(json_object_get(sc, "ok")))
			continue;
		/* the first step that still fails ends the run */
		res->failed_step = i + 1;
		res->failed_tool = strdup(st->def->name);
		res->error_code = strdup(
		    gb_or(json_string_value(json_object_get(json_object_get(sc, "error"), "code")),
		          "error"));
		{
			char *m = failure_message(st, i + 1, sc);

			res->message = flow_redact(f, m);
			free(m);
		}
		if (json_object_get(sc, "verdicts")) {
			res->verdicts = json_deep_copy(json_object_get(sc, "verdicts"));
			redact_json(f, res->verdicts);
		}
		if (screenshot_uri(last)) {
			copy_screenshot(s, opts, screenshot_uri(last), i + 1, res, &log);
		} else {
			/* refused before acting (policy, a missing element): the page as it is */
			json_t *args = json_object();
			json_t *shot =
			    call_tool(s, act_tool_find("browser_take_screenshot"), args, 0);

			copy_screenshot(s, opts, screenshot_uri(shot), i + 1, res, &log);
			json_decref(shot);
			json_decref(args);
		}
		break;
	}
	if (!res->failed_step) {
		res->passed = 1;
		copy_screenshot(s, opts, last_shot[0] ? last_shot : NULL, f->n_steps, res, &log);
	}
	rc = 0;
out:
	json_decref(last);
	act_session_free(s);
	res->duration_ms = gb_now_ms() - t0;
	{
		char *text = gb_buf_steal(&log);

		res->log = flow_redact(f, text);
		free(text);
	}
	gb_buf_free(&log);
	return rc;
}

void flow_result_clear(struct flow_result *res)
{
	free(res->name);
	free(res->path);
	free(res->failed_tool);
	free(res->error_code);
	free(res->message);
	json_decref(res->verdicts);
	json_decref(res->steps);
	free(res->screenshot);
	free(res->log);
	free(res->agent_session);
	free(res->trace);
	memset(res, 0, sizeof(*res));
}

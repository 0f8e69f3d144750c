/*
 * test_export.c - a session turned into a test: its verified actions as a
 * glassbox flow (flows/, each step's passing verdicts as its expect
 * checks) or as a Playwright Test spec (the code each action ran,
 * codegen.c, then an expect() assertion per passing verdict).
 *
 * Only actions that succeeded and that a test can replay are kept (see
 * trace_is_replayable); snapshots, screenshots and failed calls are not
 * steps. An action whose target only a snapshot ref names (and no role)
 * cannot be replayed: the export refuses, naming it. Text the record
 * redacted (a typed password) becomes a variable the test reads from its
 * environment: ${TYPED_SECRET} in a flow, process.env.TYPED_SECRET in a
 * spec (or the secret's own name when the call typed a stored secret).
 */
#include "trace/trace-private.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define REDACTED "[redacted]"

/* 1 when a verdict passed and its expectation can be written again (not a
 * redacted value). */
static int usable_verdict(json_t *v)
{
	const char *expected = json_string_value(json_object_get(v, "expected"));

	return json_is_true(json_object_get(v, "ok")) &&
	       json_is_string(json_object_get(v, "check")) && json_object_get(v, "expected") &&
	       !(expected && !strcmp(expected, REDACTED));
}

/* The name a test gets: the option, the flow's, or the session's. */
static void test_name(const struct trace_session *s, char *buf, size_t buflen)
{
	const char *given = s->opts->flow_name;
	size_t i;

	if (given && given[0])
		snprintf(buf, buflen, "%.100s", given);
	else if (s->flow)
		snprintf(buf, buflen, "%.90s replayed", s->flow);
	else
		snprintf(buf, buflen, "session %.32s", s->session);
	/* a flow name is letters, digits, spaces, . _ - */
	for (i = 0; buf[i]; i++)
		if (!((buf[i] >= 'a' && buf[i] <= 'z') || (buf[i] >= 'A' && buf[i] <= 'Z') ||
		      (buf[i] >= '0' && buf[i] <= '9') || strchr(" ._-", buf[i])))
			buf[i] = '-';
}

/* Refuses an action a test cannot replay by name; -EINVAL with err. */
static int unnamed_target(const json_t *rec, size_t step, char *err, size_t errlen)
{
	json_t *body = json_object_get(rec, "body");

	gb_set_error(
	    err, errlen,
	    "action %zu (%s, operation %s) names its element only by the snapshot "
	    "ref %s, which a replay cannot find: act on it by role and name, text or "
	    "CSS (a locator such as role=button[name=\"Save\"]) to make it replayable",
	    step, gb_or(json_string_value(json_object_get(body, "tool")), "?"),
	    gb_or(json_string_value(json_object_get(rec, "operation")), "?"),
	    gb_or(json_string_value(json_object_get(json_object_get(body, "arguments"), "target")),
	          "?"));
	return -EINVAL;
}

/* ---- a glassbox flow ------------------------------------------------------ */

/* The flow step of one action (a new object), or NULL when the flow
 * format has none for it (hover). *needs_secret is set when it reads
 * ${TYPED_SECRET}. */
static json_t *flow_step(const json_t *rec, int *needs_secret)
{
	json_t *body = json_object_get(rec, "body");
	json_t *args = json_object_get(body, "arguments");
	const char *tool = json_string_value(json_object_get(body, "tool"));
	json_t *step = json_object();
	json_t *expect = json_object();
	json_t *v;
	size_t i;

	if (!strcmp(tool, "browser_navigate")) {
		json_object_set(step, "navigate", json_object_get(args, "url"));
	} else if (!strcmp(tool, "browser_click")) {
		json_object_set_new(step, "click", trace_flow_target(rec));
	} else if (!strcmp(tool, "browser_type")) {
		const char *text = json_string_value(json_object_get(args, "text"));

		json_object_set_new(step, "type", trace_flow_target(rec));
		if (json_is_string(json_object_get(args, "secret")))
			json_object_set(step, "secret", json_object_get(args, "secret"));
		else if (text && !strcmp(text, REDACTED)) {
			json_object_set_new(step, "text", json_string("${TYPED_SECRET}"));
			*needs_secret = 1;
		} else
			json_object_set_new(step, "text", json_string(text ? text : ""));
		if (json_is_true(json_object_get(args, "submit")))
			json_object_set_new(step, "submit", json_true());
		if (json_is_true(json_object_get(args, "slowly")))
			json_object_set_new(step, "slowly", json_true());
	} else if (!strcmp(tool, "browser_select_option")) {
		json_object_set_new(step, "select", trace_flow_target(rec));
		json_object_set(step, "values", json_object_get(args, "values"));
	} else if (!strcmp(tool, "browser_press_key")) {
		json_object_set(step, "press", json_object_get(args, "key"));
	} else if (!strcmp(tool, "browser_wait_for")) {
		json_t *w = json_object();

		if (json_object_get(args, "text"))
			json_object_set(w, "text", json_object_get(args, "text"));
		if (json_object_get(args, "textGone"))
			json_object_set(w, "textGone", json_object_get(args, "textGone"));
		if (json_object_get(args, "time"))
			json_object_set(w, "time", json_object_get(args, "time"));
		json_object_set_new(step, "wait", w);
	} else if (!strcmp(tool, "browser_evaluate")) {
		json_object_set(step, "evaluate", json_object_get(args, "function"));
		if (json_is_string(json_object_get(args, "target")))
			json_object_set_new(step, "target", trace_flow_target(rec));
	} else {
		json_decref(step);
		json_decref(expect);
		return NULL;
	}
	/* a wait's check is what it waits for: no expect on it */
	json_array_foreach(json_object_get(body, "verdicts"), i, v)
	{
		if (usable_verdict(v) && strcmp(tool, "browser_wait_for") != 0)
			json_object_set(expect, json_string_value(json_object_get(v, "check")),
			                json_object_get(v, "expected"));
	}
	if (json_object_size(expect))
		json_object_set(step, "expect", expect);
	json_decref(expect);
	return step;
}

int trace_build_flow(const struct trace_session *s, unsigned char **out, size_t *len, char *err,
                     size_t errlen)
{
	json_t *steps = json_array();
	json_t *flow = NULL;
	json_t *rec;
	json_t *step;
	char name[128];
	char desc[400];
	size_t i;
	size_t skipped = 0;
	struct gb_buf b;
	char *text;
	int needs_secret = 0;
	int rc = 0;

	gb_buf_init(&b, TRACE_MAX_EXPORT_BYTES);
	json_array_foreach(s->actions, i, rec)
	{
		const char *tool =
		    json_string_value(json_object_get(json_object_get(rec, "body"), "tool"));

		if (!trace_is_replayable(rec)) {
			skipped++;
			continue;
		}
		if (json_is_string(json_object_get(
		        json_object_get(json_object_get(rec, "body"), "arguments"), "target"))) {
			json_t *target = trace_flow_target(rec);

			if (!target) {
				rc = unnamed_target(rec, i + 1, err, errlen);
				goto out;
			}
			json_decref(target);
		}
		step = flow_step(rec, &needs_secret);
		if (!step) {
			gb_set_error(err, errlen,
			             "action %zu (%s) has no flow step: flows do not hover; "
			             "export it --as playwright instead",
			             i + 1, tool);
			rc = -EINVAL;
			goto out;
		}
		json_array_append_new(steps, step);
	}
	if (!json_array_size(steps)) {
		gb_set_error(err, errlen,
		             "session %s has no action that succeeded and can be replayed "
		             "(navigate, click, type, select, press, wait, evaluate)",
		             s->session);
		rc = -ENOENT;
		goto out;
	}
	test_name(s, name, sizeof(name));
	snprintf(desc, sizeof(desc),
	         "The verified actions of glassbox session %.64s (%zu steps; %zu calls that "
	         "failed or do not change the page left out).",
	         s->session, json_array_size(steps), skipped);
	flow = json_pack("{s:s, s:s, s:O}", "name", name, "description", desc, "steps", steps);
	if (needs_secret)
		json_object_set_new(flow, "secrets", json_pack("[s]", "TYPED_SECRET"));
	text = json_dumps(flow, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
	if (text && gb_buf_appendf(&b, "%s\n", text) == 0) {
		*len = b.len;
		*out = (unsigned char *)gb_buf_steal(&b);
	}
	free(text);
	if (!*out) {
		gb_set_error(err, errlen, "out of memory writing the flow");
		rc = -ENOMEM;
	}
out:
	gb_buf_free(&b);
	json_decref(steps);
	json_decref(flow);
	return rc;
}

/* ---- a Playwright Test spec ----------------------------------------------- */

/* Appends the expect() of one passing verdict; loc is the action's
 * locator (for value), may be NULL. */
static void spec_assert(struct gb_buf *b, json_t *v, const char *loc)
{
	const char *check = json_string_value(json_object_get(v, "check"));
	json_t *expected = json_object_get(v, "expected");
	char *lit = json_is_string(expected) ? trace_js_string(json_string_value(expected)) : NULL;

	if (!lit) {
		gb_buf_appendf(b, "  // verdict %s: not a string, not asserted\n", check);
	} else if (!strcmp(check, "title")) {
		gb_buf_appendf(b, "  await expect(page).toHaveTitle(%s);\n", lit);
	} else if (!strcmp(check, "url")) {
		gb_buf_appendf(b, "  await expect(page).toHaveURL(%s);\n", lit);
	} else if (!strcmp(check, "urlContains")) {
		gb_buf_appendf(b, "  await expect.poll(() => page.url()).toContain(%s);\n", lit);
	} else if (!strcmp(check, "text")) {
		gb_buf_appendf(b, "  await expect(page.locator('body')).toContainText(%s);\n", lit);
	} else if (!strcmp(check, "textGone")) {
		gb_buf_appendf(b, "  await expect(page.locator('body')).not.toContainText(%s);\n",
		               lit);
	} else if (!strcmp(check, "value") && loc) {
		gb_buf_appendf(b, "  await expect(%s).toHaveValue(%s);\n", loc, lit);
	} else {
		gb_buf_appendf(b, "  // verdict %s: checked by glassbox, no Playwright assertion\n",
		               check);
	}
	free(lit);
}

/* Appends code indented by two spaces, line by line. */
static void indented(struct gb_buf *b, const char *code)
{
	const char *p = code;

	while (*p) {
		size_t n = strcspn(p, "\n");

		gb_buf_appendf(b, "  %.*s\n", (int)n, p);
		p += n;
		if (*p == '\n')
			p++;
	}
}

int trace_build_spec(const struct trace_session *s, unsigned char **out, size_t *len, char *err,
                     size_t errlen)
{
	struct gb_buf b;
	json_t *rec;
	json_t *v;
	char name[128];
	char *lit;
	size_t i;
	size_t k;
	size_t steps = 0;
	int rc = 0;

	gb_buf_init(&b, TRACE_MAX_EXPORT_BYTES);
	test_name(s, name, sizeof(name));
	lit = trace_js_string(name);
	gb_buf_appendf(&b,
	               "// The verified actions of glassbox session %s, as a Playwright Test.\n"
	               "// Each step is the code the action ran; each assertion is a check\n"
	               "// glassbox verified on the page when the session ran.\n"
	               "import { test, expect } from '@playwright/test';\n\n"
	               "test(%s, async ({ page }) => {\n",
	               s->session, lit);
	free(lit);
	json_array_foreach(s->actions, i, rec)
	{
		json_t *body = json_object_get(rec, "body");
		char *code;
		char *loc;

		if (!trace_is_replayable(rec))
			continue;
		code = trace_playwright_code(rec);
		if (!code) {
			rc = unnamed_target(rec, i + 1, err, errlen);
			goto out;
		}
		loc = trace_playwright_locator(rec);
		gb_buf_appendf(&b, "%s  // %zu. %s\n", steps ? "\n" : "", i + 1,
		               json_string_value(json_object_get(body, "tool")));
		indented(&b, code);
		json_array_foreach(json_object_get(body, "verdicts"), k, v)
		{
			if (usable_verdict(v))
				spec_assert(&b, v, loc);
		}
		free(code);
		free(loc);
		steps++;
	}
	gb_buf_appendf(&b, "});\n");
	if (!steps) {
		gb_set_error(err, errlen,
		             "session %s has no action that succeeded and can be replayed",
		             s->session);
		rc = -ENOENT;
		goto out;
	}
	if (b.overflowed) {
		gb_set_error(err, errlen, "the spec would be larger than %u bytes",
		             TRACE_MAX_EXPORT_BYTES);
		rc = -ENOMEM;
		goto out;
	}
	*len = b.len;
	*out = (unsigned char *)gb_buf_steal(&b);
out:
	gb_buf_free(&b);
	return rc;
}

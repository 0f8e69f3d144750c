/*
 * codegen.c - the Playwright code of one recorded action, and the target
 * of its flow step. A record that carries playwright_code (the code the
 * action ran, written by the tool itself) is used as it is; otherwise the
 * code is rendered here from the record's tool, arguments and element.
 *
 * Everything taken from a record is untrusted text and enters the code
 * only as a JavaScript string literal (JSON-encoded): a URL, a name, a
 * key, even an evaluate's function, which runs in the page from a string
 * (page.evaluate(string)), never as code of the test itself.
 */
#include "trace/trace-private.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

char *trace_js_string(const char *s)
{
	json_t *j = json_string(s ? s : "");
	char *out = j ? json_dumps(j, JSON_ENCODE_ANY) : NULL;

	json_decref(j);
	return out;
}

/* 1 when target is a snapshot ref ("e12", "f1e3"): it names an element of
 * one snapshot of one session and cannot be replayed. */
static int is_ref(const char *t)
{
	const char *p = t;

	if (*p == 'f') {
		for (p++; isdigit((unsigned char)*p); p++)
			;
	}
	if (*p++ != 'e' || !isdigit((unsigned char)*p))
		return 0;
	while (isdigit((unsigned char)*p))
		p++;
	return *p == '\0';
}

/* The quoted value at *p ("..." with backslash escapes), malloc'd; *p moves
 * past it. NULL when p does not start a quoted string. */
static char *quoted(const char **p)
{
	struct gb_buf b;
	const char *s = *p;

	if (*s != '"')
		return NULL;
	gb_buf_init(&b, strlen(s) + 1);
	for (s++; *s && *s != '"'; s++) {
		if (*s == '\\' && s[1])
			s++;
		gb_buf_append(&b, s, 1);
	}
	if (*s != '"') {
		gb_buf_free(&b);
		return NULL;
	}
	*p = s + 1;
	gb_buf_append(&b, "", 0);
	return b.data ? gb_buf_steal(&b) : strdup("");
}

/* role=R[name="N"] into role and name (name may stay NULL). 0, or -1. */
static int parse_role(const char *t, char **role, char **name)
{
	const char *p = t + 5;
	size_t n = strcspn(p, "[");

	*role = NULL;
	*name = NULL;
	if (!n)
		return -1;
	*role = strndup(p, n);
	p += n;
	if (!*p)
		return 0;
	if (strncmp(p, "[name=", 6) != 0)
		goto bad;
	p += 6;
	*name = quoted(&p);
	if (*name && !strcmp(p, "]"))
		return 0;
bad:
	free(*role);
	free(*name);
	*role = NULL;
	*name = NULL;
	return -1;
}

/* page.getByRole(role, { name, exact: true }) (name may be NULL). */
static char *by_role(const char *role, const char *name)
{
	char *r = trace_js_string(role);
	char *n = name ? trace_js_string(name) : NULL;
	struct gb_buf b;

	gb_buf_init(&b, 1 << 16);
	if (n)
		gb_buf_appendf(&b, "page.getByRole(%s, { name: %s, exact: true })", r, n);
	else
		gb_buf_appendf(&b, "page.getByRole(%s)", r);
	free(r);
	free(n);
	return gb_buf_steal(&b);
}

/* A Playwright locator of target (a glassbox locator string or CSS). */
static char *locator_of_string(const char *t)
{
	struct gb_buf b;
	char *role = NULL;
	char *name = NULL;
	char *lit = NULL;
	char *out = NULL;
	const char *p;

	if (!strncmp(t, "role=", 5)) {
		if (parse_role(t, &role, &name) == 0)
			out = by_role(role, name);
		goto out;
	}
	gb_buf_init(&b, 1 << 16);
	if (!strncmp(t, "text=", 5)) {
		p = t + 5;
		name = quoted(&p);
		lit = trace_js_string(name && !*p ? name : t + 5);
		gb_buf_appendf(&b, "page.getByText(%s, { exact: true })", lit);
	} else {
		lit = trace_js_string(!strncmp(t, "css=", 4) ? t + 4 : t);
		gb_buf_appendf(&b, "page.locator(%s)", lit);
	}
	out = gb_buf_steal(&b);
out:
	free(role);
	free(name);
	free(lit);
	return out;
}

char *trace_playwright_locator(const json_t *rec)
{
	json_t *body = json_object_get(rec, "body");
	json_t *el = json_object_get(body, "element");
	const char *t =
	    json_string_value(json_object_get(json_object_get(body, "arguments"), "target"));
	const char *role = json_string_value(json_object_get(el, "role"));

	if (t && t[0] && !is_ref(t))
		return locator_of_string(t);
	if (role && role[0])
		return by_role(role, json_string_value(json_object_get(el, "name")));
	return NULL;
}

json_t *trace_flow_target(const json_t *rec)
{
	json_t *body = json_object_get(rec, "body");
	json_t *el = json_object_get(body, "element");
	const char *t =
	    json_string_value(json_object_get(json_object_get(body, "arguments"), "target"));
	const char *role = json_string_value(json_object_get(el, "role"));
	const char *name = json_string_value(json_object_get(el, "name"));

	if (t && t[0] && !is_ref(t))
		return json_string(t);
	if (role && role[0])
		return name ? json_pack("{s:s, s:s}", "role", role, "name", name)
		            : json_pack("{s:s}", "role", role);
	return NULL;
}

/* The text a type action typed, as JavaScript: a literal, or the
 * environment variable that holds a secret the record redacted. */
static char *typed_text(json_t *args)
{
	const char *text = json_string_value(json_object_get(args, "text"));
	const char *secret = json_string_value(json_object_get(args, "secret"));
	struct gb_buf b;
	char *lit;

	if (!secret && text && strcmp(text, "[redacted]") != 0)
		return trace_js_string(text);
	lit = trace_js_string(secret ? secret : "TYPED_SECRET");
	gb_buf_init(&b, 1 << 12);
	gb_buf_appendf(&b, "process.env[%s] ?? ''", lit);
	free(lit);
	return gb_buf_steal(&b);
}

/* The code of a page-wide action (no target); NULL when there is none. */
static void page_code(struct gb_buf *b, const char *tool, json_t *args)
{
	char *lit = NULL;

	if (!strcmp(tool, "browser_navigate")) {
		lit = trace_js_string(json_string_value(json_object_get(args, "url")));
		gb_buf_appendf(b, "await page.goto(%s);", lit);
	} else if (!strcmp(tool, "browser_navigate_back")) {
		gb_buf_appendf(b, "await page.goBack();");
	} else if (!strcmp(tool, "browser_press_key")) {
		lit = trace_js_string(json_string_value(json_object_get(args, "key")));
		gb_buf_appendf(b, "await page.keyboard.press(%s);", lit);
	} else if (!strcmp(tool, "browser_wait_for")) {
		const char *text = json_string_value(json_object_get(args, "text"));
		const char *gone = json_string_value(json_object_get(args, "textGone"));
		json_t *time = json_object_get(args, "time");

		if (text || gone) {
			lit = trace_js_string(text ? text : gone);
			gb_buf_appendf(b, "await page.getByText(%s).first().waitFor(%s);", lit,
			               text ? "" : "{ state: 'hidden' }");
		} else if (json_is_number(time)) {
			gb_buf_appendf(b, "await page.waitForTimeout(%.0f);",
			               json_number_value(time) * 1000.0);
		}
	} else if (!strcmp(tool, "browser_evaluate")) {
		struct gb_buf src;

		gb_buf_init(&src, 1 << 20);
		gb_buf_appendf(
		    &src, "(%s)()",
		    gb_or(json_string_value(json_object_get(args, "function")), "() => {}"));
		lit = trace_js_string(src.data);
		gb_buf_free(&src);
		gb_buf_appendf(b, "await page.evaluate(%s);", lit);
	}
	free(lit);
}

/* The code of an action on the element loc names. */
static void element_code(struct gb_buf *b, const char *tool, json_t *args, const char *loc)
{
	char *lit = NULL;

	if (!strcmp(tool, "browser_click")) {
		const char *button = json_string_value(json_object_get(args, "button"));

		lit = button ? trace_js_string(button) : NULL;
		gb_buf_appendf(b, "await %s.%s(%s%s%s);", loc,
		               json_is_true(json_object_get(args, "doubleClick")) ? "dblclick"
		                                                                  : "click",
		               lit ? "{ button: " : "", lit ? lit : "", lit ? " }" : "");
	} else if (!strcmp(tool, "browser_type")) {
		lit = typed_text(args);
		gb_buf_appendf(b, "await %s.%s(%s);", loc,
		               json_is_true(json_object_get(args, "slowly")) ? "pressSequentially"
		                                                             : "fill",
		               lit);
		if (json_is_true(json_object_get(args, "submit")))
			gb_buf_appendf(b, "\nawait %s.press('Enter');", loc);
	} else if (!strcmp(tool, "browser_select_option")) {
		json_t *values = json_object_get(args, "values");

		lit = json_dumps(values ? values : json_array(), JSON_ENCODE_ANY | JSON_COMPACT);
		gb_buf_appendf(b, "await %s.selectOption(%s);", loc, lit);
	} else if (!strcmp(tool, "browser_hover")) {
		gb_buf_appendf(b, "await %s.hover();", loc);
	} else if (!strcmp(tool, "browser_evaluate")) {
		lit = trace_js_string(json_string_value(json_object_get(args, "function")));
		gb_buf_appendf(
		    b, "await %s.evaluate((el, src) => (0, eval)('(' + src + ')')(el), %s);", loc,
		    lit);
	}
	free(lit);
}

char *trace_playwright_code(const json_t *rec)
{
	json_t *body = json_object_get(rec, "body");
	const char *given = json_string_value(json_object_get(body, "playwright_code"));
	const char *tool = json_string_value(json_object_get(body, "tool"));
	json_t *args = json_object_get(body, "arguments");
	char *loc = NULL;
	struct gb_buf b;

	if (given && given[0])
		return strdup(given);
	if (!tool)
		return NULL;
	gb_buf_init(&b, 1 << 21);
	if (json_is_string(json_object_get(args, "target"))) {
		loc = trace_playwright_locator(rec);
		if (loc)
			element_code(&b, tool, args, loc);
	} else {
		page_code(&b, tool, args);
	}
	free(loc);
	if (!b.len) {
		gb_buf_free(&b);
		return NULL;
	}
	return gb_buf_steal(&b);
}

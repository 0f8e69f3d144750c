/*
 * codegen.c - the Playwright code an action ran (see codegen.h).
 *
 * DESIGN
 *
 * The tools know what they did (click, fill, goto); this file knows how
 * Playwright writes it. The element's facts come from two places: the
 * snapshot (role and name, and whether another node has the same ones)
 * and one call into the page (act_code_probe_js: its test id, a unique
 * text, a unique CSS selector, the iframe that holds it). The order of
 * preference is Playwright's generator's: test id, role + name, text, CSS.
 *
 * Secrets: a value typed from a secret is written as process.env['NAME'];
 * its value never reaches this file.
 */
#include "actions/codegen.h"
#include "actions/actions.h"

#include <stdio.h>
#include <string.h>

/* Runs in the page with `this` = the element and two arguments, the
 * test-id attribute and whether a text locator may be needed (a scan of
 * every element's text, the costly part on a large page). Uniqueness is
 * checked the way the locator will match: test ids and texts within the
 * element's document. */
const char act_code_probe_js[] =
    "function(attr, wantText) {"
    " const el = this, doc = el.ownerDocument, out = {};"
    " const norm = s => (s || '').replace(/\\s+/g, ' ').trim();"
    " const tid = attr && el.getAttribute ? el.getAttribute(attr) : null;"
    " if (tid && doc.querySelectorAll('[' + CSS.escape(attr) + '=\"' + CSS.escape(tid) + "
    "'\"]').length === 1) out.testId = tid;"
    " const own = /^(SELECT|TEXTAREA|INPUT)$/.test(el.tagName) ? '' : norm(el.innerText);"
    " if (wantText && own && own.length <= 80) {"
    "  let n = 0;"
    "  for (const e of doc.body ? [doc.body, ...doc.body.querySelectorAll('*')] : [])"
    "   if (norm(e.innerText) === own && ![...e.children].some(c => norm(c.innerText) === own))"
    "    n++;"
    "  if (n === 1 && ![...el.children].some(c => norm(c.innerText) === own)) out.text = own;"
    " }"
    " const sel = e => {"
    "  if (e.id && doc.querySelectorAll('#' + CSS.escape(e.id)).length === 1)"
    "   return '#' + CSS.escape(e.id);"
    "  const parts = [];"
    "  for (let c = e; c && c.nodeType === 1 && c !== doc.documentElement; c = c.parentElement) {"
    "   if (c.id && doc.querySelectorAll('#' + CSS.escape(c.id)).length === 1) {"
    "    parts.unshift('#' + CSS.escape(c.id)); break; }"
    "   const tag = c.localName, p = c.parentElement;"
    "   const same = p ? [...p.children].filter(s => s.localName === tag) : [c];"
    "   parts.unshift(same.length > 1 ? tag + ':nth-of-type(' + (same.indexOf(c) + 1) + ')' : "
    "tag);"
    "  }"
    "  return parts.join(' > ');"
    " };"
    " out.css = sel(el);"
    " const fe = doc.defaultView && doc.defaultView.frameElement;"
    " if (fe) {"
    "  out.frame = fe.localName;"
    "  out.frameFirst = fe.ownerDocument.querySelectorAll(fe.localName).length > 1;"
    " }"
    " return out;"
    "}";

int act_code_quote(struct gb_buf *b, const char *s)
{
	const unsigned char *p;
	int rc = 0;

	rc |= gb_buf_append(b, "'", 1);
	for (p = (const unsigned char *)(s ? s : ""); *p && rc == 0; p++) {
		switch (*p) {
		case '\\':
			rc = gb_buf_append(b, "\\\\", 2);
			break;
		case '\'':
			rc = gb_buf_append(b, "\\'", 2);
			break;
		case '\n':
			rc = gb_buf_append(b, "\\n", 2);
			break;
		case '\r':
			rc = gb_buf_append(b, "\\r", 2);
			break;
		case '\t':
			rc = gb_buf_append(b, "\\t", 2);
			break;
		case '\b':
			rc = gb_buf_append(b, "\\b", 2);
			break;
		case '\f':
			rc = gb_buf_append(b, "\\f", 2);
			break;
		default:
			if (*p < 0x20)
				rc = gb_buf_appendf(b, "\\u%04x", *p);
			else
				rc = gb_buf_append(b, (const char *)p, 1);
		}
	}
	rc |= gb_buf_append(b, "'", 1);
	return rc ? -1 : 0;
}

static int locator_js(struct gb_buf *b, const struct act_code_target *t);

int act_code_lang_parse(const char *s)
{
	static const char *const names[] = { "typescript", "python", "java", "csharp" };
	size_t i;

	for (i = 0; s && i < sizeof(names) / sizeof(names[0]); i++)
		if (!strcmp(s, names[i]))
			return (int)i;
	return -1;
}

/* Appends s as a double-quoted string literal (Python, Java, C#), escaped
 * as JSON escapes it. */
static int quote2(struct gb_buf *b, const char *s)
{
	const unsigned char *p;
	int rc = gb_buf_append(b, "\"", 1);

	for (p = (const unsigned char *)(s ? s : ""); *p && rc == 0; p++) {
		if (*p == '"' || *p == '\\')
			rc = gb_buf_appendf(b, "\\%c", *p);
		else if (*p == '\n')
			rc = gb_buf_append(b, "\\n", 2);
		else if (*p == '\r')
			rc = gb_buf_append(b, "\\r", 2);
		else if (*p == '\t')
			rc = gb_buf_append(b, "\\t", 2);
		else if (*p < 0x20)
			rc = gb_buf_appendf(b, "\\u%04x", *p);
		else
			rc = gb_buf_append(b, (const char *)p, 1);
	}
	return rc | gb_buf_append(b, "\"", 1) ? -1 : 0;
}

/* See codegen.h. */
int act_code_string(struct gb_buf *b, int lang, const char *s)
{
	return lang == ACT_CODE_TYPESCRIPT ? act_code_quote(b, s) : quote2(b, s);
}

/* A string literal in lang. */
static int str(struct gb_buf *b, int lang, const char *s)
{
	return act_code_string(b, lang, s);
}

/* An ARIA role as Java (BUTTON, LIST_ITEM? no: LISTITEM) or C# (Button)
 * names its AriaRole constant: letters only, upper-cased or capitalised. */
static int role_const(struct gb_buf *b, int lang, const char *role)
{
	const char *p;
	int rc = 0;

	for (p = role; *p && rc == 0; p++) {
		char c = *p;

		if (lang == ACT_CODE_JAVA && c >= 'a' && c <= 'z')
			c = (char)(c - 'a' + 'A');
		else if (lang == ACT_CODE_CSHARP && p == role && c >= 'a' && c <= 'z')
			c = (char)(c - 'a' + 'A');
		rc = gb_buf_append(b, &c, 1);
	}
	return rc;
}

/* 1 when the role names the element before its text does, as in
 * Playwright's generator: a role with a name that finds it alone; a role
 * without a name only when no text finds it alone. */
static int role_first(const struct act_code_target *t)
{
	if (!t->role || !*t->role || !t->role_unique || !strcmp(t->role, "generic"))
		return 0;
	return (t->name && *t->name) || !t->text || !*t->text;
}

/* The locator in Python, Java or C#. */
static int locator_other(struct gb_buf *b, const struct act_code_target *t)
{
	const int py = t->lang == ACT_CODE_PYTHON, java = t->lang == ACT_CODE_JAVA;
	const char *by_role = py     ? ".get_by_role("
	                      : java ? ".getByRole(AriaRole."
	                             : ".GetByRole(AriaRole.";
	const char *by_test = py ? ".get_by_test_id(" : java ? ".getByTestId(" : ".GetByTestId(";
	const char *by_text = py ? ".get_by_text(" : java ? ".getByText(" : ".GetByText(";
	const char *loc = py || java ? ".locator(" : ".Locator(";
	int rc;

	rc = gb_buf_append(b, "page", 4);
	if (t->selector)
		return rc | gb_buf_appendf(b, "%s", loc) | str(b, t->lang, t->selector) |
		               gb_buf_append(b, ")", 1)
		           ? -1
		           : 0;
	if (t->frame) {
		rc |= gb_buf_appendf(b, "%s", loc) | str(b, t->lang, t->frame) |
		      gb_buf_append(b, ")", 1);
		if (t->frame_first)
			rc |= gb_buf_appendf(b, "%s", py ? ".first" : java ? ".first()" : ".First");
		rc |= gb_buf_appendf(b, "%s",
		                     py     ? ".content_frame"
		                     : java ? ".contentFrame()"
		                            : ".ContentFrame");
	}
	if (t->test_id && *t->test_id) {
		rc |= gb_buf_appendf(b, "%s", by_test) | str(b, t->lang, t->test_id) |
		      gb_buf_append(b, ")", 1);
	} else if (role_first(t)) {
		rc |= gb_buf_appendf(b, "%s", by_role);
		if (py)
			rc |= str(b, t->lang, t->role);
		else
			rc |= role_const(b, t->lang, t->role);
		if (t->name && *t->name) {
			if (py)
				rc |= gb_buf_append(b, ", name=", 7) | str(b, t->lang, t->name);
			else if (java)
				rc |= gb_buf_appendf(b, ", new Page.GetByRoleOptions().setName(") |
				      str(b, t->lang, t->name) | gb_buf_append(b, ")", 1);
			else
				rc |= gb_buf_appendf(b, ", new() { Name = ") |
				      str(b, t->lang, t->name) | gb_buf_append(b, " }", 2);
		}
		rc |= gb_buf_append(b, ")", 1);
	} else if (t->text && *t->text) {
		rc |= gb_buf_appendf(b, "%s", by_text) | str(b, t->lang, t->text) |
		      gb_buf_append(b, ")", 1);
	} else if (t->css && *t->css) {
		rc |= gb_buf_appendf(b, "%s", loc) | str(b, t->lang, t->css) |
		      gb_buf_append(b, ")", 1);
	} else {
		rc = -1;
	}
	return rc ? -1 : 0;
}

int act_code_locator(struct gb_buf *b, const struct act_code_target *t)
{
	if (t && t->lang != ACT_CODE_TYPESCRIPT)
		return locator_other(b, t);
	return locator_js(b, t);
}

/* The locator in JavaScript. */
static int locator_js(struct gb_buf *b, const struct act_code_target *t)
{
	int rc = -1;

	if (!t)
		goto out;
	if (t->selector) {
		rc = gb_buf_append(b, "page.locator(", 13) | act_code_quote(b, t->selector) |
		     gb_buf_append(b, ")", 1);
		goto out;
	}
	rc = gb_buf_append(b, "page", 4);
	if (t->frame) {
		rc |= gb_buf_append(b, ".locator(", 9) | act_code_quote(b, t->frame) |
		      gb_buf_append(b, ")", 1);
		if (t->frame_first)
			rc |= gb_buf_append(b, ".first()", 8);
		rc |= gb_buf_append(b, ".contentFrame()", 15);
	}
	if (t->test_id && *t->test_id) {
		rc |= gb_buf_append(b, ".getByTestId(", 13) | act_code_quote(b, t->test_id) |
		      gb_buf_append(b, ")", 1);
	} else if (role_first(t)) {
		rc |= gb_buf_append(b, ".getByRole(", 11) | act_code_quote(b, t->role);
		if (t->name && *t->name)
			rc |= gb_buf_append(b, ", { name: ", 10) | act_code_quote(b, t->name) |
			      gb_buf_append(b, " }", 2);
		rc |= gb_buf_append(b, ")", 1);
	} else if (t->text && *t->text) {
		rc |= gb_buf_append(b, ".getByText(", 11) | act_code_quote(b, t->text) |
		      gb_buf_append(b, ")", 1);
	} else if (t->css && *t->css) {
		rc |= gb_buf_append(b, ".locator(", 9) | act_code_quote(b, t->css) |
		      gb_buf_append(b, ")", 1);
	} else {
		rc = -1;
	}
out:
	return rc ? -1 : 0;
}

int act_code_call(struct gb_buf *b, const struct act_code_target *t, const char *method,
                  const char *args)
{
	size_t mark = b->len;
	int rc = gb_buf_append(b, "await ", 6);

	if (rc == 0 && locator_js(b, t) < 0)
		rc = -1;
	if (rc == 0)
		rc = gb_buf_appendf(b, ".%s(%s);\n", method, args ? args : "");
	if (rc < 0 && b->len >= mark) {
		b->len = mark; /* nothing half-written */
		if (b->data)
			b->data[mark] = '\0';
	}
	return rc;
}

int act_code_goto(struct gb_buf *b, int lang, const char *url)
{
	static const char *const open[] = { "await page.goto(", "page.goto(", "page.navigate(",
		                            "await page.GotoAsync(" };
	static const char *const close[] = { ");\n", ")\n", ");\n", ");\n" };

	if (lang < 0 || lang > ACT_CODE_CSHARP)
		lang = ACT_CODE_TYPESCRIPT;
	return gb_buf_appendf(b, "%s", open[lang]) | str(b, lang, url) |
	               gb_buf_appendf(b, "%s", close[lang])
	           ? -1
	           : 0;
}

/* A method name in lang: "pressSequentially" -> press_sequentially (Python),
 * PressSequentiallyAsync (C#); "dblclick" is DblClickAsync in C#. */
static int method_name(struct gb_buf *b, int lang, const char *m)
{
	const char *p;
	int rc = 0;

	if (lang == ACT_CODE_CSHARP && !strcmp(m, "dblclick"))
		return gb_buf_appendf(b, "DblClickAsync");
	for (p = m; *p && rc == 0; p++) {
		if (lang == ACT_CODE_PYTHON && *p >= 'A' && *p <= 'Z')
			rc = gb_buf_appendf(b, "_%c", *p - 'A' + 'a');
		else if (lang == ACT_CODE_CSHARP && p == m)
			rc = gb_buf_appendf(b, "%c", *p >= 'a' && *p <= 'z' ? *p - 'a' + 'A' : *p);
		else
			rc = gb_buf_append(b, p, 1);
	}
	if (lang == ACT_CODE_CSHARP)
		rc |= gb_buf_appendf(b, "Async");
	return rc;
}

/* The value typed, as a lookup of the secret's environment variable or a literal. */
static int value_in(struct gb_buf *b, int lang, const struct act_code_args *a)
{
	static const char *const env[] = { "process.env[", "os.environ[", "System.getenv(",
		                           "Environment.GetEnvironmentVariable(" };
	static const char *const env_end[] = { "]", "]", ")", ")" };

	if (!a->secret)
		return str(b, lang, a->text);
	return gb_buf_appendf(b, "%s", env[lang]) | str(b, lang, a->secret) |
	               gb_buf_appendf(b, "%s", env_end[lang])
	           ? -1
	           : 0;
}

/* The order Playwright's generator writes modifiers in (its mask's bits). */
static const char *const modifier_order[] = { "Alt", "ControlOrMeta", "Meta", "Shift" };

/* Whether the click's modifiers hold m ("Control" counts as ControlOrMeta). */
static int has_modifier(const struct act_code_args *a, const char *m)
{
	size_t i;

	for (i = 0; i < a->n_list; i++) {
		const char *have = !strcmp(a->list[i], "Control") ? "ControlOrMeta" : a->list[i];

		if (!strcmp(have, m))
			return 1;
	}
	return 0;
}

/* The arguments of a click: its button and modifiers ("Control" is
 * written ControlOrMeta, once each, in the order Playwright's generator
 * writes them). */
static int click_args(struct gb_buf *b, int lang, const struct act_code_args *a)
{
	int has_button = a->button && strcmp(a->button, "left") != 0;
	size_t n_written = 0;
	size_t i;
	int rc = 0;

	if (!has_button && !a->n_list)
		return 0;
	if (lang == ACT_CODE_TYPESCRIPT)
		rc |= gb_buf_appendf(b, "{\n");
	else if (lang == ACT_CODE_JAVA)
		rc |= gb_buf_appendf(b, "new Locator.ClickOptions()");
	else if (lang == ACT_CODE_CSHARP)
		rc |= gb_buf_appendf(b, "new() { ");
	if (has_button) {
		if (lang == ACT_CODE_TYPESCRIPT)
			rc |= gb_buf_appendf(b, "  button: ") | str(b, lang, a->button);
		else if (lang == ACT_CODE_PYTHON)
			rc |= gb_buf_appendf(b, "button=") | str(b, lang, a->button);
		else if (lang == ACT_CODE_JAVA)
			rc |= gb_buf_appendf(b, ".setButton(MouseButton.%s)",
			                     !strcmp(a->button, "right") ? "RIGHT" : "MIDDLE");
		else
			rc |= gb_buf_appendf(b, "Button = MouseButton.%s",
			                     !strcmp(a->button, "right") ? "Right" : "Middle");
	}
	if (a->n_list) {
		if (lang == ACT_CODE_TYPESCRIPT)
			rc |= gb_buf_appendf(b, "%s  modifiers: [", has_button ? ",\n" : "");
		else if (lang == ACT_CODE_PYTHON)
			rc |= gb_buf_appendf(b, "%smodifiers=[", has_button ? ", " : "");
		else if (lang == ACT_CODE_JAVA)
			rc |= gb_buf_appendf(b, ".setModifiers(Arrays.asList(");
		else
			rc |= gb_buf_appendf(b, "%sModifiers = new[] { ", has_button ? ", " : "");
		for (i = 0; i < sizeof(modifier_order) / sizeof(modifier_order[0]); i++) {
			const char *m = modifier_order[i];

			if (!has_modifier(a, m))
				continue;
			if (n_written++)
				rc |= gb_buf_appendf(b, ", ");
			if (lang == ACT_CODE_JAVA)
				rc |= gb_buf_appendf(b, "KeyboardModifier.%s",
				                     !strcmp(m, "ControlOrMeta") ? "CONTROLORMETA"
				                     : !strcmp(m, "Shift")       ? "SHIFT"
				                     : !strcmp(m, "Alt")         ? "ALT"
				                                                 : "META");
			else if (lang == ACT_CODE_CSHARP)
				rc |= gb_buf_appendf(b, "KeyboardModifier.%s", m);
			else
				rc |= str(b, lang, m);
		}
		rc |= gb_buf_appendf(b, "%s",
		                     lang == ACT_CODE_JAVA     ? "))"
		                     : lang == ACT_CODE_CSHARP ? " }"
		                                               : "]");
	}
	if (lang == ACT_CODE_TYPESCRIPT)
		rc |= gb_buf_appendf(b, "\n}");
	else if (lang == ACT_CODE_CSHARP)
		rc |= gb_buf_appendf(b, " }");
	return rc;
}

int act_code_action(struct gb_buf *b, const struct act_code_target *t, const char *action,
                    const struct act_code_args *a)
{
	static const struct act_code_args none = { 0 };
	int lang = t->lang < 0 || t->lang > ACT_CODE_CSHARP ? ACT_CODE_TYPESCRIPT : t->lang;
	size_t mark = b->len;
	size_t i;
	int rc = 0;

	if (!a)
		a = &none;
	if (lang == ACT_CODE_TYPESCRIPT || lang == ACT_CODE_CSHARP)
		rc |= gb_buf_append(b, "await ", 6);
	if (act_code_locator(b, t) < 0)
		rc = -1;
	rc |= gb_buf_append(b, ".", 1) | method_name(b, lang, action) | gb_buf_append(b, "(", 1);
	if (!strcmp(action, "click") || !strcmp(action, "dblclick")) {
		rc |= click_args(b, lang, a);
	} else if (!strcmp(action, "fill") || !strcmp(action, "pressSequentially")) {
		rc |= value_in(b, lang, a);
	} else if (!strcmp(action, "press")) {
		rc |= str(b, lang, a->text);
	} else if (!strcmp(action, "selectOption") && a->n_list == 1) {
		rc |= str(b, lang, a->list[0]);
	} else if (!strcmp(action, "selectOption")) {
		rc |= gb_buf_appendf(b, "%s",
		                     lang == ACT_CODE_JAVA     ? "new String[] {"
		                     : lang == ACT_CODE_CSHARP ? "new[] { "
		                                               : "[");
		for (i = 0; i < a->n_list; i++)
			rc |= gb_buf_appendf(b, "%s", i ? ", " : "") | str(b, lang, a->list[i]);
		rc |= gb_buf_appendf(b, "%s",
		                     lang == ACT_CODE_JAVA     ? "}"
		                     : lang == ACT_CODE_CSHARP ? " }"
		                                               : "]");
	}
	rc |= gb_buf_appendf(b, ")%s\n", lang == ACT_CODE_PYTHON ? "" : ";");
	if (rc && b->len >= mark) {
		b->len = mark; /* nothing half-written */
		if (b->data)
			b->data[mark] = '\0';
	}
	return rc ? -1 : 0;
}

int act_code_value(struct gb_buf *b, const char *text, const char *secret_name)
{
	if (secret_name)
		return gb_buf_append(b, "process.env[", 12) | act_code_quote(b, secret_name) |
		               gb_buf_append(b, "]", 1)
		           ? -1
		           : 0;
	return act_code_quote(b, text);
}

int act_code_line(struct gb_buf *b, const char *line)
{
	return gb_buf_appendf(b, "%s\n", line);
}

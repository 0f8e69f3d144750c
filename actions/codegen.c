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

#include <stdio.h>
#include <string.h>

/* Runs in the page with `this` = the element and one argument, the
 * test-id attribute. Uniqueness is checked the way the locator will
 * match: test ids and texts within the element's document. */
const char act_code_probe_js[] =
    "function(attr) {"
    " const el = this, doc = el.ownerDocument, out = {};"
    " const norm = s => (s || '').replace(/\\s+/g, ' ').trim();"
    " const tid = attr && el.getAttribute ? el.getAttribute(attr) : null;"
    " if (tid && doc.querySelectorAll('[' + CSS.escape(attr) + '=\"' + CSS.escape(tid) + "
    "'\"]').length === 1) out.testId = tid;"
    " const own = norm(el.innerText);"
    " if (own && own.length <= 80) {"
    "  let n = 0;"
    "  for (const e of doc.body ? doc.body.querySelectorAll('*') : [])"
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

int act_code_locator(struct gb_buf *b, const struct act_code_target *t)
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
	} else if (t->role && *t->role && t->role_unique && strcmp(t->role, "generic") != 0) {
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

	if (rc == 0 && act_code_locator(b, t) < 0)
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

int act_code_goto(struct gb_buf *b, const char *url)
{
	return gb_buf_append(b, "await page.goto(", 16) | act_code_quote(b, url) |
	               gb_buf_append(b, ");\n", 3)
	           ? -1
	           : 0;
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

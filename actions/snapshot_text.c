/*
 * snapshot_text.c - the small helpers of the snapshot: typed reads of AX
 * JSON, UTF-8 counting, whitespace normalization as Playwright does it,
 * and YAML quoting of keys and values. Pure functions.
 */
#include "actions/snapshot-private.h"

#include "cdp/cdp.h"
#include "common/log.h"
#include "common/util.h"

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* ---- small JSON and string helpers ------------------------------------- */

/* obj[k1][k2] as a string, or NULL. Borrows. */
const char *act_snap_jstr2(json_t *obj, const char *k1, const char *k2)
{
	return json_string_value(json_object_get(json_object_get(obj, k1), k2));
}

/* A node's role ("button", "StaticText"...), or "" when absent. */
const char *act_snap_ax_role(json_t *n)
{
	const char *r = act_snap_jstr2(n, "role", "value");

	return r ? r : "";
}

/* The value of property `name` of an AX node, or NULL. Borrows. */
json_t *act_snap_ax_prop(json_t *n, const char *name)
{
	json_t *props = json_object_get(n, "properties");
	json_t *p;
	json_t *found = NULL;
	size_t i;

	json_array_foreach(props, i, p)
	{
		const char *pn = json_string_value(json_object_get(p, "name"));

		if (!found && pn && !strcmp(pn, name))
			found = json_object_get(json_object_get(p, "value"), "value");
	}
	return found;
}

/* 1 when a property value is true or the token "true". */
int act_snap_jtrue(json_t *v)
{
	const char *s = json_string_value(v);

	return json_is_true(v) || (s && !strcmp(s, "true"));
}

/* The node's backendDOMNodeId, or 0 when absent or out of range. */
int act_snap_ax_backend(json_t *n)
{
	json_t *v = json_object_get(n, "backendDOMNodeId");
	json_int_t id = json_integer_value(v);

	return json_is_integer(v) && id > 0 && id <= INT32_MAX ? (int)id : 0;
}

/* strdup that passes NULL through. */
char *act_snap_xstrdup(const char *s)
{
	return s ? strdup(s) : NULL;
}

/* Number of UTF-8 code points in s[0..n). */
size_t act_snap_utf8_chars(const char *s, size_t n)
{
	size_t i;
	size_t c = 0;

	for (i = 0; i < n; i++)
		if (((unsigned char)s[i] & 0xc0) != 0x80)
			c++;
	return c;
}

/* Length in bytes of the whitespace character at s (JavaScript's \s:
 * ASCII and Unicode spaces), or 0. */
static size_t ws_len(const unsigned char *s)
{
	size_t n = 0;

	if (*s == ' ' || (*s >= '\t' && *s <= '\r'))
		n = 1;
	else if (s[0] == 0xc2 && s[1] == 0xa0)
		n = 2; /* U+00A0 */
	else if (s[0] == 0xe1 && s[1] == 0x9a && s[2] == 0x80)
		n = 3; /* U+1680 */
	else if (s[0] == 0xe2 && s[1] == 0x80 &&
	         ((s[2] >= 0x80 && s[2] <= 0x8a) || s[2] == 0xa8 || s[2] == 0xa9 || s[2] == 0xaf))
		n = 3; /* U+2000..200A, U+2028, U+2029, U+202F */
	else if (s[0] == 0xe2 && s[1] == 0x81 && s[2] == 0x9f)
		n = 3; /* U+205F */
	else if (s[0] == 0xe3 && s[1] == 0x80 && s[2] == 0x80)
		n = 3; /* U+3000 */
	else if (s[0] == 0xef && s[1] == 0xbb && s[2] == 0xbf)
		n = 3; /* U+FEFF */
	return n;
}

/* Length of an invisible character that Playwright drops (U+200B, U+00AD). */
static size_t invisible_len(const unsigned char *s)
{
	size_t n = 0;

	if (s[0] == 0xe2 && s[1] == 0x80 && s[2] == 0x8b)
		n = 3;
	else if (s[0] == 0xc2 && s[1] == 0xad)
		n = 2;
	return n;
}

/*
 * Playwright's normalizeWhiteSpace: drops U+200B and U+00AD, collapses
 * runs of whitespace into one space and trims. s[0..n) must be followed
 * by a NUL (the look-ahead reads up to 2 bytes past a lead byte, which a
 * NUL stops). Returns a malloc'd string, or NULL when out of memory.
 */
char *act_snap_normalize_ws(const char *s, size_t n)
{
	const unsigned char *p = (const unsigned char *)s;
	const unsigned char *end = p + n;
	char *out = malloc(n + 1);
	size_t o = 0;
	int pending_space = 0;
	size_t k;

	while (out && p < end) {
		k = invisible_len(p);
		if (k) {
			p += k;
			continue;
		}
		k = ws_len(p);
		if (k) {
			pending_space = o > 0;
			p += k;
			continue;
		}
		if (pending_space) {
			out[o++] = ' ';
			pending_space = 0;
		}
		out[o++] = (char)*p++;
	}
	if (out)
		out[o] = '\0';
	return out;
}

/* 1 when s is all "•" or "●" (how Chromium shows a password's value). */
int act_snap_all_bullets(const char *s)
{
	const unsigned char *p = (const unsigned char *)s;

	while (p[0] == 0xe2 && ((p[1] == 0x80 && p[2] == 0xa2) || (p[1] == 0x97 && p[2] == 0x8f)))
		p += 3;
	return *s && !*p;
}

/* ---- YAML -------------------------------------------------------------- */

/* 1 when JavaScript's Number(s) is not NaN (s has no surrounding spaces). */
static int js_is_number(const char *s)
{
	const char *p = s;
	int digits = 0;
	int number = 0;

	if (p[0] == '0' && p[1] && strchr("xXoObB", p[1])) {
		const char *set = strchr("xX", p[1])   ? "0123456789abcdefABCDEF"
		                  : strchr("oO", p[1]) ? "01234567"
		                                       : "01";

		number = p[2] && strspn(p + 2, set) == strlen(p + 2);
		goto out;
	}
	if (*p == '+' || *p == '-')
		p++;
	if (!strcmp(p, "Infinity")) {
		number = 1;
		goto out;
	}
	for (; *p >= '0' && *p <= '9'; p++)
		digits++;
	if (*p == '.')
		for (p++; *p >= '0' && *p <= '9'; p++)
			digits++;
	if (digits && (*p == 'e' || *p == 'E')) {
		p++;
		if (*p == '+' || *p == '-')
			p++;
		if (!(*p >= '0' && *p <= '9'))
			goto out;
		while (*p >= '0' && *p <= '9')
			p++;
	}
	number = digits && *p == '\0';
out:
	return number;
}

/* Playwright's yamlStringNeedsQuotes: 1 when s must be quoted to stay a
 * plain YAML string. */
int act_snap_needs_quotes(const char *s)
{
	static const char *const words[] = { "y",     "n",  "yes", "no",   "true",
		                             "false", "on", "off", "null", "~" };
	const unsigned char *p = (const unsigned char *)s;
	const char *unsigned_s = s + (s[0] == '+' || s[0] == '-');
	size_t n = strlen(s);
	size_t last = n;
	size_t i;
	int q;

	while (last > 0 && (p[last - 1] & 0xc0) == 0x80)
		last--; /* the start of the last code point */
	q = n == 0 || ws_len(p) || (last > 0 && ws_len(p + last - 1));
	for (i = 0; i < n && !q; i++) {
		unsigned char ch = p[i];

		q = ch <= 0x08 || ch == 0x0b || ch == 0x0c || (ch >= 0x0e && ch <= 0x1f) ||
		    ch == 0x7f ||
		    (ch == 0xc2 && p[i + 1] >= 0x80 && p[i + 1] <= 0x9f) || /* U+0080..U+009F */
		    ((ch == ':' || ch == '\n') && (p[i + 1] == '\0' || ws_len(p + i + 1))) ||
		    (ch == '#' && i > 0 && ws_len(p + i - 1)) || ch == '\n' || ch == '\r' ||
		    ch == '{' || ch == '}' || ch == '`';
	}
	q = q || strchr("-&*],?!>|@\"'#%[", p[0]) || js_is_number(s) ||
	    !strcasecmp(unsigned_s, ".inf") || !strcasecmp(unsigned_s, ".nan");
	for (i = 0; i < sizeof(words) / sizeof(words[0]) && !q; i++)
		q = !strcasecmp(s, words[i]);
	return q;
}

/* Appends s double-quoted with backslash escapes: JSON's \u00XX for other
 * control characters, or YAML's \xXX for them and for C1 controls. */
static int append_quoted(struct gb_buf *b, const char *s, int json)
{
	const unsigned char *p = (const unsigned char *)s;
	int rc = 0;

	rc |= gb_buf_append(b, "\"", 1);
	for (; *p && !rc; p++) {
		switch (*p) {
		case '\\':
			rc |= gb_buf_append(b, "\\\\", 2);
			break;
		case '"':
			rc |= gb_buf_append(b, "\\\"", 2);
			break;
		case '\b':
			rc |= gb_buf_append(b, "\\b", 2);
			break;
		case '\f':
			rc |= gb_buf_append(b, "\\f", 2);
			break;
		case '\n':
			rc |= gb_buf_append(b, "\\n", 2);
			break;
		case '\r':
			rc |= gb_buf_append(b, "\\r", 2);
			break;
		case '\t':
			rc |= gb_buf_append(b, "\\t", 2);
			break;
		default:
			if (json && *p < 0x20) {
				rc |= gb_buf_appendf(b, "\\u%04x", *p);
			} else if (!json && (*p < 0x20 || *p == 0x7f)) {
				rc |= gb_buf_appendf(b, "\\x%02x", *p);
			} else if (!json && *p == 0xc2 && p[1] >= 0x80 && p[1] <= 0x9f) {
				rc |= gb_buf_appendf(b, "\\x%02x", p[1]);
				p++;
			} else {
				rc |= gb_buf_append(b, (const char *)p, 1);
			}
		}
	}
	rc |= gb_buf_append(b, "\"", 1);
	return rc ? -1 : 0;
}

/* Appends s as a YAML value: plain, or double-quoted with escapes. */
int act_snap_yaml_value(struct gb_buf *b, const char *s)
{
	if (!act_snap_needs_quotes(s))
		return gb_buf_append(b, s, strlen(s)) < 0 ? -1 : 0;
	return append_quoted(b, s, 0);
}

/* Appends s as a YAML key: plain, or single-quoted with '' for '. */
int act_snap_yaml_key(struct gb_buf *b, const char *s)
{
	const char *p;
	int rc = 0;

	if (!act_snap_needs_quotes(s)) {
		rc = gb_buf_append(b, s, strlen(s));
		goto out;
	}
	rc |= gb_buf_append(b, "'", 1);
	for (p = s; *p && !rc; p++)
		rc |= *p == '\'' ? gb_buf_append(b, "''", 2) : gb_buf_append(b, p, 1);
	rc |= gb_buf_append(b, "'", 1);
out:
	return rc ? -1 : 0;
}

/* Appends s as a JSON string (JSON.stringify). */
int act_snap_json_quote(struct gb_buf *b, const char *s)
{
	return append_quoted(b, s, 1);
}

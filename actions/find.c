/*
 * find.c - searching a snapshot's text for a string or a regular
 * expression (browser_find): the matching lines, each with its ref, role
 * and name, and under the path of its ancestors, so that the agent can act
 * on a match without reading the whole snapshot.
 *
 * Design note
 * - Matching is PCRE2's (JavaScript-like syntax: \d, (?:), lookahead), with
 *   a match limit and a depth limit: the pattern comes from outside and a
 *   catastrophic one ends in a clean error, never a stuck worker.
 * - text is a case-insensitive literal; regex is "pattern" (case-sensitive)
 *   or "/pattern/flags" with flags among i, m, s, u (g is accepted and
 *   means nothing: every line is searched).
 * - Bounded in time as a whole too: past the call's deadline the search
 *   stops with a clean error.
 * - Pure: works on the snapshot text it is given (tested without a
 *   browser).
 */
#define PCRE2_CODE_UNIT_WIDTH 8
#include "actions/actions-private.h"

#include <pcre2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Limits that keep a hostile pattern from running long on one line. */
#define FIND_MATCH_LIMIT 200000
#define FIND_DEPTH_LIMIT 5000
/* The most matches reported; the text says when there were more. */
#define FIND_MAX_MATCHES 50
/* The longest snapshot line reported, in bytes. */
#define FIND_LINE_MAX 300

/* Compiles the query: 0 with *code, or -1 with a message in err. */
static int compile(const char *text, const char *regex, pcre2_code **code, char *err, size_t errlen)
{
	uint32_t options = PCRE2_UTF | PCRE2_MATCH_INVALID_UTF;
	const char *pattern = text;
	size_t len = text ? strlen(text) : 0;
	PCRE2_UCHAR msg[256];
	PCRE2_SIZE at = 0;
	int ecode = 0;

	*code = NULL;
	if (text) {
		options |= PCRE2_LITERAL | PCRE2_CASELESS;
	} else if (regex[0] == '/' && strrchr(regex + 1, '/')) {
		const char *close = strrchr(regex + 1, '/');
		const char *f;

		for (f = close + 1; *f; f++) {
			if (*f == 'i')
				options |= PCRE2_CASELESS;
			else if (*f == 'm')
				options |= PCRE2_MULTILINE;
			else if (*f == 's')
				options |= PCRE2_DOTALL;
			else if (*f != 'u' && *f != 'g') {
				snprintf(
				    err, errlen,
				    "regex flag '%c' is not supported: use i, m, s or u, as in "
				    "\"/error/i\"",
				    *f);
				return -1;
			}
		}
		pattern = regex + 1;
		len = (size_t)(close - pattern);
	} else {
		pattern = regex;
		len = strlen(regex);
	}
	if (len == 0) {
		snprintf(err, errlen, "the %s to find is empty: give some text",
		         text ? "text" : "regex");
		return -1;
	}
	*code = pcre2_compile((PCRE2_SPTR)pattern, len, options, &ecode, &at, NULL);
	if (!*code) {
		pcre2_get_error_message(ecode, msg, sizeof(msg));
		snprintf(err, errlen, "invalid regular expression at offset %zu: %s", (size_t)at,
		         (const char *)msg);
		return -1;
	}
	return 0;
}

/* The indentation of a snapshot line (spaces before "- "). */
static size_t indent_of(const char *line, size_t len)
{
	size_t n = 0;

	while (n < len && line[n] == ' ')
		n++;
	return n;
}

/* Parses "- role "name" [ref=e5]...": role, name and ref of a line (each
 * "" when absent) into the caller's buffers. */
static void parse_line(const char *line, size_t len, char *role, size_t rolelen, char *name,
                       size_t namelen, char *ref, size_t reflen)
{
	size_t i = indent_of(line, len);
	size_t k = 0;
	const char *r;

	role[0] = name[0] = ref[0] = '\0';
	if (i + 1 < len && line[i] == '-' && line[i + 1] == ' ')
		i += 2;
	while (i < len && k + 1 < rolelen && line[i] != ' ' && line[i] != ':' && line[i] != '"')
		role[k++] = line[i++];
	role[k] = '\0';
	if (i + 1 < len && line[i] == ' ' && line[i + 1] == '"') {
		i += 2;
		for (k = 0; i < len && line[i] != '"' && k + 1 < namelen; i++) {
			if (line[i] == '\\' && i + 1 < len)
				i++;
			name[k++] = line[i];
		}
		name[k] = '\0';
	}
	r = memmem(line, len, "[ref=", 5);
	if (r) {
		r += 5;
		for (k = 0; r < line + len && *r != ']' && k + 1 < reflen; r++)
			ref[k++] = *r;
		ref[k] = '\0';
	}
}

/* One line as a JSON string, cut at FIND_LINE_MAX bytes (on a character
 * boundary), leading spaces dropped. */
static json_t *line_json(const char *line, size_t len)
{
	size_t i = indent_of(line, len);
	size_t n = len - i;

	if (n > FIND_LINE_MAX) {
		n = FIND_LINE_MAX;
		while (n > 0 && ((unsigned char)line[i + n] & 0xC0) == 0x80)
			n--;
	}
	return json_stringn(line + i, n);
}

int act_find_in_snapshot(const char *yaml, const char *text, const char *regex, int64_t deadline_ms,
                         json_t **matches, struct gb_buf *snippets, char *err, size_t errlen)
{
	/* the start and length of each ancestor line, by depth */
	const char *stack[64];
	size_t stack_len[64];
	size_t stack_indent[64];
	size_t depth = 0;
	pcre2_code *code = NULL;
	pcre2_match_data *md = NULL;
	pcre2_match_context *mc = NULL;
	const char *line = yaml;
	size_t found = 0;
	size_t lines_seen = 0;
	int rc = -1;

	*matches = json_array();
	if (compile(text, regex, &code, err, errlen) < 0)
		goto out;
	md = pcre2_match_data_create_from_pattern(code, NULL);
	mc = pcre2_match_context_create(NULL);
	if (!md || !mc || !*matches) {
		snprintf(err, errlen, "out of memory");
		goto out;
	}
	pcre2_set_match_limit(mc, FIND_MATCH_LIMIT);
	pcre2_set_depth_limit(mc, FIND_DEPTH_LIMIT);
	while (line && *line) {
		const char *nl = strchr(line, '\n');
		size_t len = nl ? (size_t)(nl - line) : strlen(line);
		size_t ind = indent_of(line, len);
		int m;

		while (depth > 0 && stack_indent[depth - 1] >= ind)
			depth--;
		if (deadline_ms && (++lines_seen & 127) == 0 && gb_now_ms() > deadline_ms) {
			snprintf(err, errlen,
			         "the search ran out of time on this page: use a simpler regular "
			         "expression, or plain text");
			goto out;
		}
		m = pcre2_match(code, (PCRE2_SPTR)line, len, 0, 0, md, mc);
		if (m == PCRE2_ERROR_MATCHLIMIT || m == PCRE2_ERROR_DEPTHLIMIT) {
			snprintf(
			    err, errlen,
			    "the regular expression takes too long to match (it backtracks too "
			    "much): simplify it");
			goto out;
		}
		if (m >= 0 && found++ < FIND_MAX_MATCHES) {
			char role[64], name[512], ref[16];
			struct gb_buf path;
			json_t *match;
			size_t d;

			gb_buf_init(&path, 1 << 14);
			parse_line(line, len, role, sizeof(role), name, sizeof(name), ref,
			           sizeof(ref));
			gb_buf_appendf(snippets, "%s", found > 1 ? "\n----\n" : "");
			for (d = 0; d < depth; d++) {
				char arole[64], aname[512], aref[16];

				parse_line(stack[d], stack_len[d], arole, sizeof(arole), aname,
				           sizeof(aname), aref, sizeof(aref));
				gb_buf_appendf(&path, "%s%s%s%s%s", d ? " > " : "", arole,
				               aname[0] ? " \"" : "", aname, aname[0] ? "\"" : "");
				gb_buf_appendf(snippets, "%.*s\n", (int)stack_len[d], stack[d]);
			}
			gb_buf_appendf(snippets, "%.*s", (int)len, line);
			match = json_pack("{s:s, s:o, s:s}", "role", role, "line",
			                  line_json(line, len), "path", path.data ? path.data : "");
			if (name[0])
				json_object_set_new(match, "name", json_string(name));
			if (ref[0])
				json_object_set_new(match, "ref", json_string(ref));
			json_array_append_new(*matches, match);
			gb_buf_free(&path);
		}
		if (depth < sizeof(stack) / sizeof(stack[0])) {
			stack[depth] = line;
			stack_len[depth] = len;
			stack_indent[depth] = ind;
			depth++;
		}
		line = nl ? nl + 1 : NULL;
	}
	if (found > FIND_MAX_MATCHES)
		gb_buf_appendf(snippets, "\n----\n… %zu more matches not shown: narrow the search",
		               found - FIND_MAX_MATCHES);
	rc = 0;
out:
	pcre2_match_context_free(mc);
	pcre2_match_data_free(md);
	pcre2_code_free(code);
	if (rc < 0) {
		json_decref(*matches);
		*matches = NULL;
	}
	return rc;
}

/*
 * find.c - searching a snapshot's text for a string or a regular
 * expression (browser_find): the matching lines, each with its ref, role
 * and name, shown with three lines of context each side under the path of
 * its ancestors (Playwright MCP's layout), so that the agent can act on a
 * match without reading the whole snapshot.
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
/* Lines of context shown on each side of a match, like grep -C. */
#define FIND_CONTEXT 3

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

/* One line of the snapshot: where it starts, its length, its indentation. */
struct find_line {
	const char *at;
	size_t len;
	size_t indent;
};

/* Appends to out (up to max) the indices of the ancestors of line index,
 * nearest last: each earlier line less indented than the one after it,
 * as Playwright MCP's browser_find walks up. Returns how many. */
static size_t ancestors(const struct find_line *lines, size_t index, size_t *out, size_t max)
{
	size_t indent = lines[index].indent;
	size_t n = 0, i, k;

	for (i = index; i-- > 0 && indent > 0 && n < max;) {
		if (indent_of(lines[i].at, lines[i].len) == lines[i].len)
			continue; /* a blank line */
		if (lines[i].indent < indent) {
			out[n++] = i;
			indent = lines[i].indent;
		}
	}
	for (k = 0; k < n / 2; k++) {
		size_t t = out[k];

		out[k] = out[n - 1 - k];
		out[n - 1 - k] = t;
	}
	return n;
}

/* Appends the snippets of the matched lines: each window of FIND_CONTEXT
 * lines around the matches (overlapping windows merged) under the path of
 * its first line's ancestors, "..." where lines off the path are skipped,
 * windows apart by a "----" line; Playwright MCP's layout. */
static int snippets_of(const struct find_line *lines, size_t n_lines, const size_t *hits,
                       size_t n_hits, struct gb_buf *out)
{
	unsigned char *on_path = calloc(n_lines ? n_lines : 1, 1);
	size_t *idx = malloc(sizeof(*idx) * (n_lines + 64));
	size_t h = 0, windows = 0;
	size_t anc[64];
	int rc = -1;

	if (!on_path || !idx)
		goto out;
	for (h = 0; h < n_hits; h++) {
		size_t k, na = ancestors(lines, hits[h], anc, 64);

		on_path[hits[h]] = 1;
		for (k = 0; k < na; k++)
			on_path[anc[k]] = 1;
	}
	h = 0;
	while (h < n_hits) {
		size_t start = hits[h] > FIND_CONTEXT ? hits[h] - FIND_CONTEXT : 0;
		size_t end =
		    hits[h] + FIND_CONTEXT < n_lines ? hits[h] + FIND_CONTEXT : n_lines - 1;
		size_t n, i;

		/* coalesce the next matches whose windows touch this one */
		while (h + 1 < n_hits &&
		       (hits[h + 1] > FIND_CONTEXT ? hits[h + 1] - FIND_CONTEXT : 0) <= end + 1) {
			h++;
			end =
			    hits[h] + FIND_CONTEXT < n_lines ? hits[h] + FIND_CONTEXT : n_lines - 1;
		}
		h++;
		n = ancestors(lines, start, idx, 64);
		for (i = start; i <= end; i++)
			idx[n++] = i;
		gb_buf_appendf(out, "%s", windows++ ? "\n\n----\n\n" : "");
		for (i = 0; i < n; i++) {
			if (i > 0 && idx[i] > idx[i - 1] + 1 && !on_path[idx[i]] &&
			    !on_path[idx[i - 1]])
				gb_buf_appendf(out, "%*s...\n", (int)lines[idx[i]].indent, "");
			gb_buf_appendf(out, "%.*s%s", (int)lines[idx[i]].len, lines[idx[i]].at,
			               i + 1 < n ? "\n" : "");
		}
	}
	rc = 0;
out:
	free(on_path);
	free(idx);
	return rc;
}

int act_find_in_snapshot(const char *yaml, const char *text, const char *regex, int64_t deadline_ms,
                         json_t **matches, struct gb_buf *snippets, char *err, size_t errlen)
{
	struct find_line *lines = NULL;
	size_t *hits = NULL;
	size_t n_lines = 0, cap = 0, n_hits = 0, i;
	pcre2_code *code = NULL;
	pcre2_match_data *md = NULL;
	pcre2_match_context *mc = NULL;
	const char *line = yaml;
	size_t found = 0;
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

		if (n_lines == cap) {
			struct find_line *grown;

			cap = cap ? cap * 2 : 256;
			grown = realloc(lines, cap * sizeof(*lines));
			if (!grown) {
				snprintf(err, errlen, "out of memory");
				goto out;
			}
			lines = grown;
		}
		lines[n_lines].at = line;
		lines[n_lines].len = nl ? (size_t)(nl - line) : strlen(line);
		lines[n_lines].indent = indent_of(line, lines[n_lines].len);
		n_lines++;
		line = nl ? nl + 1 : NULL;
	}
	hits = malloc(sizeof(*hits) * (n_lines ? n_lines : 1));
	if (!hits) {
		snprintf(err, errlen, "out of memory");
		goto out;
	}
	for (i = 0; i < n_lines; i++) {
		int m;

		if (deadline_ms && ((i + 1) & 127) == 0 && gb_now_ms() > deadline_ms) {
			snprintf(err, errlen,
			         "the search ran out of time on this page: use a simpler regular "
			         "expression, or plain text");
			goto out;
		}
		m = pcre2_match(code, (PCRE2_SPTR)lines[i].at, lines[i].len, 0, 0, md, mc);
		if (m == PCRE2_ERROR_MATCHLIMIT || m == PCRE2_ERROR_DEPTHLIMIT) {
			snprintf(
			    err, errlen,
			    "the regular expression takes too long to match (it backtracks too "
			    "much): simplify it");
			goto out;
		}
		if (m >= 0 && found++ < FIND_MAX_MATCHES) {
			char role[64], name[512], ref[16];
			size_t anc[64], na, d;
			struct gb_buf path;
			json_t *match;

			hits[n_hits++] = i;
			gb_buf_init(&path, 1 << 14);
			parse_line(lines[i].at, lines[i].len, role, sizeof(role), name,
			           sizeof(name), ref, sizeof(ref));
			na = ancestors(lines, i, anc, 64);
			for (d = 0; d < na; d++) {
				char arole[64], aname[512], aref[16];

				parse_line(lines[anc[d]].at, lines[anc[d]].len, arole,
				           sizeof(arole), aname, sizeof(aname), aref, sizeof(aref));
				gb_buf_appendf(&path, "%s%s%s%s%s", d ? " > " : "", arole,
				               aname[0] ? " \"" : "", aname, aname[0] ? "\"" : "");
			}
			match = json_pack("{s:s, s:o, s:s}", "role", role, "line",
			                  line_json(lines[i].at, lines[i].len), "path",
			                  path.data ? path.data : "");
			if (name[0])
				json_object_set_new(match, "name", json_string(name));
			if (ref[0])
				json_object_set_new(match, "ref", json_string(ref));
			json_array_append_new(*matches, match);
			gb_buf_free(&path);
		}
	}
	if (snippets_of(lines, n_lines, hits, n_hits, snippets) < 0) {
		snprintf(err, errlen, "out of memory");
		goto out;
	}
	if (found > FIND_MAX_MATCHES)
		gb_buf_appendf(snippets,
		               "\n\n----\n\n… %zu more matches not shown: narrow the search",
		               found - FIND_MAX_MATCHES);
	rc = 0;
out:
	free(lines);
	free(hits);
	pcre2_match_context_free(mc);
	pcre2_match_data_free(md);
	pcre2_code_free(code);
	if (rc < 0) {
		json_decref(*matches);
		*matches = NULL;
	}
	return rc;
}

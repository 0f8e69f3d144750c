/*
 * explain.c - one English sentence for the verdicts that failed, for the
 * short text a model reads and for a person reading a report.
 */
#include "verify/verify-private.h"
#include "verify/verify.h"

#include "common/util.h"

#include <stdlib.h>
#include <string.h>

/* Ceiling on the whole sentence, bytes. */
#define EXPLAIN_MAX_BYTES (16u * 1024u)
#define ELLIPSIS "\xe2\x80\xa6"

/* Appends s as a double-quoted string: cut to VERIFY_OBSERVED_MAX_CHARS
 * characters (+ "…"), with '"' and '\' escaped and control characters
 * written as \n, \t or a space, so that the sentence stays on one line. */
static void append_quoted(struct gb_buf *b, const char *s)
{
	size_t len = strlen(s);
	size_t keep = verify_utf8_prefix_bytes(s, len, VERIFY_OBSERVED_MAX_CHARS);
	size_t i;
	size_t run = 0; /* start of the run of plain bytes not yet appended */

	gb_buf_append(b, "\"", 1);
	for (i = 0; i < keep; i++) {
		unsigned char c = (unsigned char)s[i];

		if (c >= 0x20 && c != '"' && c != '\\' && c != 0x7f)
			continue;
		gb_buf_append(b, s + run, i - run);
		run = i + 1;
		if (c == '"')
			gb_buf_append(b, "\\\"", 2);
		else if (c == '\\')
			gb_buf_append(b, "\\\\", 2);
		else if (c == '\n')
			gb_buf_append(b, "\\n", 2);
		else if (c == '\t')
			gb_buf_append(b, "\\t", 2);
		else
			gb_buf_append(b, " ", 1);
	}
	gb_buf_append(b, s + run, keep - run);
	if (keep < len)
		gb_buf_append(b, ELLIPSIS, strlen(ELLIPSIS));
	gb_buf_append(b, "\"", 1);
}

/* Appends any JSON value: strings quoted, other values as compact JSON
 * (quoted the same way, cut the same way). */
static void append_value(struct gb_buf *b, json_t *v)
{
	char *text = NULL;
	size_t len;
	size_t keep;

	if (json_is_string(v)) {
		append_quoted(b, json_string_value(v));
		goto out;
	}
	text = v ? json_dumps(v, JSON_COMPACT | JSON_ENCODE_ANY) : NULL;
	if (!text) {
		gb_buf_append(b, "nothing", 7);
		goto out;
	}
	/* compact JSON has no control characters; it is only cut */
	len = strlen(text);
	keep = verify_utf8_prefix_bytes(text, len, VERIFY_OBSERVED_MAX_CHARS);
	gb_buf_append(b, text, keep);
	if (keep < len)
		gb_buf_append(b, ELLIPSIS, strlen(ELLIPSIS));
out:
	free(text);
}

/* " but saw <observed>", or " but <unread>" when nothing was observed. */
static void append_saw(struct gb_buf *b, json_t *observed, const char *unread)
{
	if (!observed || json_is_null(observed)) {
		gb_buf_appendf(b, " but %s", unread);
	} else {
		gb_buf_append(b, " but saw ", 9);
		append_value(b, observed);
	}
}

/* The clause for a failed response check. */
static void explain_response(struct gb_buf *b, json_t *expected, json_t *observed)
{
	json_t *url = json_object_get(expected, "url");
	json_t *status = json_object_get(expected, "status");

	gb_buf_appendf(b, "expected a response whose URL contains ");
	append_value(b, url);
	if (json_is_integer(status))
		gb_buf_appendf(b, " with status %lld", (long long)json_integer_value(status));
	if (json_is_string(observed) && !strcmp(json_string_value(observed), "no response matched"))
		gb_buf_appendf(b, " but no response matched");
	else
		append_saw(b, observed, "no response was recorded");
}

/* The clause for one failed verdict. */
static void explain_one(struct gb_buf *b, json_t *verdict)
{
	const char *check = json_string_value(json_object_get(verdict, "check"));
	json_t *expected = json_object_get(verdict, "expected");
	json_t *observed = json_object_get(verdict, "observed");
	const char *target = json_string_value(json_object_get(verdict, "target"));

	if (!check)
		check = "(unnamed)";
	if (!strcmp(check, "url")) {
		gb_buf_appendf(b, "expected URL ");
		append_value(b, expected);
		append_saw(b, observed, "the URL could not be read");
	} else if (!strcmp(check, "urlContains")) {
		gb_buf_appendf(b, "expected the URL to contain ");
		append_value(b, expected);
		append_saw(b, observed, "the URL could not be read");
	} else if (!strcmp(check, "title")) {
		gb_buf_appendf(b, "expected title ");
		append_value(b, expected);
		append_saw(b, observed, "the title could not be read");
	} else if (!strcmp(check, "text")) {
		gb_buf_appendf(b, "expected text ");
		append_value(b, expected);
		gb_buf_appendf(b, " on the page but %s",
		               json_is_null(observed) ? "the page text could not be read"
		                                      : "it is not there");
	} else if (!strcmp(check, "textGone")) {
		gb_buf_appendf(b, "expected text ");
		append_value(b, expected);
		gb_buf_appendf(b, " to be gone from the page but %s",
		               json_is_null(observed) ? "the page text could not be read"
		                                      : "it is still there");
	} else if (!strcmp(check, "value")) {
		if (target) {
			gb_buf_appendf(b, "expected the value of ");
			append_quoted(b, target);
			gb_buf_appendf(b, " to be ");
		} else {
			gb_buf_appendf(b, "expected value ");
		}
		append_value(b, expected);
		append_saw(b, observed, "the value could not be read");
	} else if (!strcmp(check, "response")) {
		explain_response(b, expected, observed);
	} else {
		gb_buf_appendf(b, "check ");
		append_quoted(b, check);
		gb_buf_appendf(b, " failed: expected ");
		append_value(b, expected);
		append_saw(b, observed, "nothing was observed");
	}
}

char *verify_explain_failures(json_t *verdicts)
{
	struct gb_buf b;
	json_t *v;
	size_t i;
	int failed = 0;
	char *out = NULL;

	gb_buf_init(&b, EXPLAIN_MAX_BYTES);
	if (!json_is_array(verdicts))
		goto out;
	json_array_foreach(verdicts, i, v)
	{
		if (!json_is_false(json_object_get(v, "ok")))
			continue;
		if (failed++)
			gb_buf_append(&b, "; ", 2);
		explain_one(&b, v);
	}
	if (!failed)
		goto out;
	if (b.overflowed && !b.data)
		goto out; /* not even the first clause: out of memory */
	out = gb_buf_steal(&b);
out:
	gb_buf_free(&b);
	return out;
}

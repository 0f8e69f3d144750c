/*
 * check.c - compares an `expect` object with the state re-read after an
 * action and produces one verdict per check, with what was observed.
 */
#include "verify/verify-private.h"
#include "verify/verify.h"

#include <stdio.h>
#include <string.h>

#define ELLIPSIS "\xe2\x80\xa6" /* U+2026 */

/* A JSON string of s cut to VERIFY_OBSERVED_MAX_CHARS characters (+ "…");
 * null for NULL. New reference, NULL when out of memory. */
static json_t *observed_string(const char *s)
{
	char cut[VERIFY_OBSERVED_MAX_CHARS * 4 + sizeof(ELLIPSIS)];
	size_t len;
	size_t keep;
	json_t *j;

	if (!s)
		return json_null();
	len = strlen(s);
	keep = verify_utf8_prefix_bytes(s, len, VERIFY_OBSERVED_MAX_CHARS);
	if (keep == len) {
		j = json_stringn(s, len);
	} else {
		memcpy(cut, s, keep);
		memcpy(cut + keep, ELLIPSIS, sizeof(ELLIPSIS));
		j = json_string(cut);
	}
	if (!j) /* not UTF-8: the page sent something odd */
		j = json_string("(not valid UTF-8 text)");
	return j;
}

/* Appends {"check", "expected", "observed", "ok"} to verdicts; steals
 * expected and observed (either may be NULL after an allocation failure,
 * which fails the call). *verdict_out (may be NULL) borrows the verdict. */
static int add_verdict(json_t *verdicts, const char *check, json_t *expected, json_t *observed,
                       int ok, json_t **verdict_out)
{
	json_t *v = NULL;
	int rc = 0;

	if (!expected || !observed) {
		json_decref(expected);
		json_decref(observed);
		rc = -1;
		goto out;
	}
	v = json_pack("{s:s, s:o, s:o, s:b}", "check", check, "expected", expected, "observed",
	              observed, "ok", ok);
	if (!v || json_array_append_new(verdicts, v) != 0) {
		rc = -1;
		goto out;
	}
	if (verdict_out)
		*verdict_out = v;
out:
	return rc;
}

/* "METHOD url status" of one response; a long URL is cut (with "…") so
 * that the status stays visible. */
static json_t *describe_response(const struct verify_response *r)
{
	char line[VERIFY_OBSERVED_MAX_CHARS * 4 + 64];
	size_t urllen = strlen(r->url);
	size_t keep = verify_utf8_prefix_bytes(r->url, urllen, VERIFY_OBSERVED_MAX_CHARS - 40);
	json_t *j;

	snprintf(line, sizeof(line), "%.16s%s%.*s%s %d", r->method ? r->method : "",
	         r->method ? " " : "", (int)keep, r->url, keep < urllen ? ELLIPSIS : "", r->status);
	j = json_string(line);
	if (!j)
		j = json_string("(a response whose URL is not valid UTF-8)");
	return j;
}

/* The response check: which response matches, and what to show. */
static int check_response(json_t *verdicts, json_t *expect_response, const struct verify_state *st)
{
	const char *want_url = json_string_value(json_object_get(expect_response, "url"));
	json_t *status = json_object_get(expect_response, "status");
	const struct verify_response *full = NULL;
	const struct verify_response *url_only = NULL;
	const struct verify_response *r;
	json_t *observed;
	size_t i;

	for (i = 0; st->responses && i < st->n_responses && !full; i++) {
		r = &st->responses[i];
		if (!r->url || !strstr(r->url, want_url))
			continue;
		if (!status || json_integer_value(status) == r->status)
			full = r;
		else if (!url_only)
			url_only = r;
	}
	if (full)
		observed = describe_response(full);
	else if (url_only)
		observed = describe_response(url_only);
	else
		observed = json_string("no response matched");
	return add_verdict(verdicts, "response", json_deep_copy(expect_response), observed,
	                   full != NULL, NULL);
}

/* One string check: expected is expect[key]; observed is the state's
 * string; ok by exact match or by substring. Nothing when key is absent. */
static int check_string(json_t *verdicts, json_t *expect, const char *key, const char *seen,
                        int substring)
{
	json_t *want = json_object_get(expect, key);
	const char *w = json_string_value(want);
	int ok;
	int rc = 0;

	if (!want)
		goto out;
	if (substring)
		ok = seen && strstr(seen, w) != NULL;
	else
		ok = seen && strcmp(seen, w) == 0;
	rc = add_verdict(verdicts, key, json_incref(want), observed_string(seen), ok, NULL);
out:
	return rc;
}

/* text (present) or textGone (absent) in the page's text. */
static int check_text(json_t *verdicts, json_t *expect, const char *key, const char *body,
                      int want_present)
{
	json_t *want = json_object_get(expect, key);
	json_t *observed;
	int present;
	int rc = 0;

	if (!want)
		goto out;
	present = body && strstr(body, json_string_value(want)) != NULL;
	observed = body ? json_string(present ? "present" : "absent") : json_null();
	rc = add_verdict(verdicts, key, json_incref(want), observed,
	                 body && present == want_present, NULL);
out:
	return rc;
}

/* value against the target's value; names the target when expect does. */
static int check_value(json_t *verdicts, json_t *expect, const struct verify_state *st)
{
	json_t *want = json_object_get(expect, "value");
	const char *target = verify_expect_target(expect);
	const char *seen = st->has_target_value ? st->target_value : NULL;
	json_t *verdict = NULL;
	int rc = 0;

	if (!want)
		goto out;
	rc = add_verdict(verdicts, "value", json_incref(want), observed_string(seen),
	                 seen && !strcmp(seen, json_string_value(want)), &verdict);
	if (rc == 0 && target)
		rc = json_object_set_new(verdict, "target", json_string(target));
out:
	return rc;
}

int verify_expect_check(json_t *expect, const struct verify_state *st, json_t **verdicts_out,
                        int *all_ok)
{
	static const struct verify_state empty;
	json_t *verdicts = NULL;
	json_t *response;
	json_t *v;
	size_t i;
	int rc = 0;

	*verdicts_out = NULL;
	*all_ok = 0;
	if (!st)
		st = &empty;
	if (verify_expect_validate(expect, NULL, 0) != 0) {
		rc = -1;
		goto out;
	}
	verdicts = json_array();
	if (!verdicts) {
		rc = -1;
		goto out;
	}
	if (!expect)
		goto done;
	rc |= check_string(verdicts, expect, "url", st->url, 0);
	rc |= check_string(verdicts, expect, "urlContains", st->url, 1);
	rc |= check_string(verdicts, expect, "title", st->title, 0);
	rc |= check_text(verdicts, expect, "text", st->body_text, 1);
	rc |= check_text(verdicts, expect, "textGone", st->body_text, 0);
	rc |= check_value(verdicts, expect, st);
	response = json_object_get(expect, "response");
	if (response)
		rc |= check_response(verdicts, response, st);
	if (rc != 0) {
		rc = -1;
		goto out;
	}
done:
	*all_ok = 1;
	json_array_foreach(verdicts, i, v) if (!json_is_true(json_object_get(v, "ok"))) *all_ok = 0;
	*verdicts_out = verdicts;
	verdicts = NULL;
out:
	json_decref(verdicts);
	return rc;
}

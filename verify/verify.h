/*
 * verify.h - what did happen: the state re-read after an action, the
 * caller's expectations, and the verdicts that compare them.
 *
 * Pure functions over plain data: the actions layer gathers the state
 * from the browser; this module parses `expect`, checks it and explains
 * each check with the value it observed. Thread-safe (no globals).
 */
#ifndef GB_VERIFY_H
#define GB_VERIFY_H

#include <jansson.h>
#include <stddef.h>

/* One network response seen during an action. Strings borrowed. */
struct verify_response {
	const char *url;
	const char *method;
	int status;
};

/* The state re-read after an action. All members borrowed; any may be
 * NULL/0 when not gathered. target_value is the value of the expect's
 * target field, when the expectation names one (already masked by the
 * caller for password fields: it appears in verdicts). */
struct verify_state {
	const char *url;
	const char *title;
	const char *body_text; /* visible text of the page (innerText) */
	const char *target_value;
	int has_target_value;
	const struct verify_response *responses;
	size_t n_responses;
};

/* Longest string accepted in an expectation, bytes. */
#define VERIFY_MAX_STRING_BYTES (64u * 1024u)
/* Observed strings in verdicts are cut to this many characters + "…". */
#define VERIFY_OBSERVED_MAX_CHARS 200u

/*
 * Checks the shape of an `expect` object before anything runs: keys among
 * url, urlContains, title, text, textGone, value, target, response;
 * url/urlContains/title/text/textGone are strings; value is a string
 * (compared to the target's value; the target itself is named by the
 * tool's `target` or by expect.target); target is a non-empty string
 * naming the element whose value `value` checks (a snapshot ref such as
 * "e12" or a selector; the actions layer resolves it and fills
 * verify_state.target_value), and is only allowed together with value;
 * response is {"url": substring, "status": integer 100..599} (url
 * required, status optional). text and textGone must not be empty; no
 * string may be longer than VERIFY_MAX_STRING_BYTES. Unknown keys are
 * errors. expect (borrowed) may be NULL: nothing to check. Returns 0, or
 * -1 with a message such as "expect.response.status must be an integer"
 * in err (may be NULL when errlen is 0).
 */
int verify_expect_validate(json_t *expect, char *err, size_t errlen);

/* The element named by expect.target, or NULL (borrowed from expect). */
const char *verify_expect_target(json_t *expect);

/* 1 when the expectation needs the page's text (text/textGone). */
int verify_expect_needs_text(json_t *expect);
/* 1 when it needs a target's value (value). */
int verify_expect_needs_value(json_t *expect);

/*
 * Checks every expectation in expect (borrowed; validated) against st.
 * *verdicts_out is a new array of {"check": "url", "expected": ...,
 * "observed": ..., "ok": true|false}; *all_ok is 1 when every check
 * passed (and when expect is NULL or empty). Strings are compared exactly
 * for url and title, as substrings for urlContains, text (present in
 * body_text), textGone (absent) and response.url.
 *
 * Verdicts come in a fixed order (url, urlContains, title, text,
 * textGone, value, response) whatever the key order of expect. observed
 * is:
 *   url, urlContains: the page URL; title: the title; value: the
 *   target's value (the value verdict also has "target" when
 *   expect.target is given). Strings longer than
 *   VERIFY_OBSERVED_MAX_CHARS characters are cut and end with "…" (the
 *   comparison always uses the whole string).
 *   text, textGone: "present" or "absent".
 *   response: "METHOD url status" of the first response whose URL
 *   contains response.url and whose status matches; failing that, of
 *   the first whose URL matches (wrong status); else "no response
 *   matched". expected is a copy of expect.response.
 *   null whenever the state was not gathered (st member NULL, or
 *   has_target_value 0): the check then fails.
 * Returns 0, or -1 (with *verdicts_out NULL and *all_ok 0) when expect
 * fails verify_expect_validate() or memory runs out.
 */
int verify_expect_check(json_t *expect, const struct verify_state *st, json_t **verdicts_out,
                        int *all_ok);

/* A one-line English explanation of the failed verdicts (verdicts:
 * borrowed array; ok must be false to count as failed), e.g.
 * "expected title \"Saved\" but saw \"Edit\"; expected text \"Done\" on
 * the page but it is not there". Verdicts of other checks (built-in ones
 * from other modules) read "check \"name\" failed: expected ... but saw
 * ...". Quoted values are cut like observed strings; newlines appear as
 * \n. Caller frees. NULL when none failed (or out of memory). */
char *verify_explain_failures(json_t *verdicts);

#endif

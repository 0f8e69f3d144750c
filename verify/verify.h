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
 * target field, when the expectation names one. */
struct verify_state {
	const char *url;
	const char *title;
	const char *body_text; /* visible text of the page (innerText) */
	const char *target_value;
	int has_target_value;
	const struct verify_response *responses;
	size_t n_responses;
};

/*
 * Checks the shape of an `expect` object before anything runs: keys among
 * url, urlContains, title, text, textGone, value, response; url/urlContains/
 * title/text/textGone are strings; value is a string (compared to the
 * target's value; the target itself is named by the tool's `target` or by
 * expect.target); response is {"url": substring, "status": integer}
 * (status optional). Unknown keys are errors. Returns 0, or -1 with a
 * message such as "expect.response.status must be an integer" in err.
 */
int verify_expect_validate(json_t *expect, char *err, size_t errlen);

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
 */
int verify_expect_check(json_t *expect, const struct verify_state *st, json_t **verdicts_out,
                        int *all_ok);

/* A one-line English explanation of the failed verdicts, e.g.
 * "expected title \"Saved\" but saw \"Edit\"; expected text \"Done\" on
 * the page but it is not there". Caller frees. NULL when none failed. */
char *verify_explain_failures(json_t *verdicts);

#endif

/*
 * expect.c - the shape of an `expect` object.
 *
 * DESIGN
 * verify/ owns what an action is expected to do and whether it did: this
 * file checks an `expect` object from a tool call before anything runs
 * (the caller is told at once about a misspelt key instead of a check
 * that silently never happens), check.c compares it with the state the
 * actions layer re-read, and explain.c turns failed verdicts into one
 * English sentence. Everything is a pure function over jansson values:
 * no globals, no threads, no I/O; any thread may call anything.
 * Invariant: verify_expect_check() only ever sees an expect that
 * verify_expect_validate() accepts (it validates again itself).
 */
#include "verify/verify-private.h"
#include "verify/verify.h"

#include "common/fs.h"

#include <stdio.h>
#include <string.h>

#define ALLOWED_KEYS "url, urlContains, title, text, textGone, value, target, response"

size_t verify_utf8_prefix_bytes(const char *s, size_t len, size_t max_chars)
{
	size_t i;
	size_t chars = 0;

	for (i = 0; i < len; i++) {
		if (((unsigned char)s[i] & 0xC0) == 0x80)
			continue; /* continuation byte */
		if (chars == max_chars)
			return i;
		chars++;
	}
	return len;
}

/* Checks that value (the member `name` of expect, prefix "expect" or
 * "expect.response") is a string within the size ceiling, and not empty
 * when nonempty is set. */
static int check_string(const char *prefix, const char *name, json_t *value, int nonempty,
                        char *err, size_t errlen)
{
	int rc = 0;

	if (!json_is_string(value)) {
		gb_set_error(err, errlen, "%s.%s must be a string", prefix, name);
		rc = -1;
	} else if (json_string_length(value) > VERIFY_MAX_STRING_BYTES) {
		gb_set_error(err, errlen, "%s.%s is longer than %u bytes", prefix, name,
		             VERIFY_MAX_STRING_BYTES);
		rc = -1;
	} else if (nonempty && json_string_length(value) == 0) {
		gb_set_error(err, errlen, "%s.%s must not be empty", prefix, name);
		rc = -1;
	}
	return rc;
}

/* Checks expect.response: {"url": string, "status": integer 100..599}. */
static int check_response(json_t *response, char *err, size_t errlen)
{
	const char *key;
	json_t *value;
	json_int_t status;
	int rc = 0;

	if (!json_is_object(response)) {
		gb_set_error(err, errlen,
		             "expect.response must be an object like {\"url\": \"/api/save\", "
		             "\"status\": 200}");
		rc = -1;
		goto out;
	}
	json_object_foreach(response, key, value)
	{
		if (strcmp(key, "url") != 0 && strcmp(key, "status") != 0) {
			gb_set_error(err, errlen,
			             "expect.response has an unknown key '%.64s' (allowed: url, "
			             "status)",
			             key);
			rc = -1;
			goto out;
		}
	}
	value = json_object_get(response, "url");
	if (!value) {
		gb_set_error(err, errlen,
		             "expect.response.url is required: a part of the response's URL");
		rc = -1;
		goto out;
	}
	rc = check_string("expect.response", "url", value, 0, err, errlen);
	if (rc != 0)
		goto out;
	value = json_object_get(response, "status");
	if (!value)
		goto out;
	if (!json_is_integer(value)) {
		gb_set_error(err, errlen, "expect.response.status must be an integer");
		rc = -1;
		goto out;
	}
	status = json_integer_value(value);
	if (status < 100 || status > 599) {
		gb_set_error(err, errlen,
		             "expect.response.status must be an HTTP status (100 to 599), "
		             "not %lld",
		             (long long)status);
		rc = -1;
		goto out;
	}
out:
	return rc;
}

int verify_expect_validate(json_t *expect, char *err, size_t errlen)
{
	static const char *const string_keys[] = { "url", "urlContains", "title", "value" };
	static const char *const text_keys[] = { "text", "textGone", "target" };
	const char *key;
	json_t *value;
	size_t i;
	int known;
	int rc = 0;

	if (!expect)
		goto out;
	if (!json_is_object(expect)) {
		gb_set_error(err, errlen,
		             "expect must be an object such as {\"title\": \"Saved\"}");
		rc = -1;
		goto out;
	}
	json_object_foreach(expect, key, value)
	{
		known = 0;
		for (i = 0; i < sizeof(string_keys) / sizeof(string_keys[0]); i++) {
			if (!strcmp(key, string_keys[i])) {
				rc = check_string("expect", key, value, 0, err, errlen);
				known = 1;
			}
		}
		for (i = 0; i < sizeof(text_keys) / sizeof(text_keys[0]); i++) {
			if (!strcmp(key, text_keys[i])) {
				rc = check_string("expect", key, value, 1, err, errlen);
				known = 1;
			}
		}
		if (!strcmp(key, "response")) {
			rc = check_response(value, err, errlen);
			known = 1;
		}
		if (!known) {
			gb_set_error(err, errlen, "expect has an unknown key '%.64s' (allowed: %s)",
			             key, ALLOWED_KEYS);
			rc = -1;
		}
		if (rc != 0)
			goto out;
	}
	if (json_object_get(expect, "target") && !json_object_get(expect, "value")) {
		gb_set_error(err, errlen,
		             "expect.target names the element whose value to check: give "
		             "expect.value too");
		rc = -1;
		goto out;
	}
out:
	return rc;
}

const char *verify_expect_target(json_t *expect)
{
	return json_string_value(json_object_get(expect, "target"));
}

int verify_expect_needs_text(json_t *expect)
{
	return json_object_get(expect, "text") != NULL ||
	       json_object_get(expect, "textGone") != NULL;
}

int verify_expect_needs_value(json_t *expect)
{
	return json_object_get(expect, "value") != NULL;
}

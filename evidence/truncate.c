/*
 * truncate.c - fitting what goes into a record (an audit record's body,
 * an artifact's metadata) under the record's ceiling, so that a call
 * with very large arguments still leaves its record.
 *
 * A value that is cut is replaced by a marker object that says so and
 * still identifies what was there: {"truncated": true, "sha256": <hex of
 * its bytes>, "length": <bytes>} plus, for a string, "head": its first
 * EVID_TRUNCATE_HEAD_BYTES bytes (cut on a UTF-8 boundary). Nothing of a
 * cut value beyond its head is kept in clear. Values are cut in three
 * steps, each only when the one before was not enough: long strings
 * anywhere; then the largest members of the top-level object, whole;
 * then the whole value.
 */
#include "evidence/evidence-private.h"

#include <stdlib.h>
#include <string.h>

/* Strings longer than this are cut in the first step. */
#define TRUNCATE_STRING_BYTES 4096u

/* The marker for the bytes text[0..len) of a cut value; head_len bytes
 * of them are kept (0: none). New reference or NULL. */
static json_t *marker(const char *text, size_t len, size_t head_len)
{
	char hex[65];
	json_t *m;

	evid_sha256_hex((const unsigned char *)text, len, hex);
	m = json_pack("{s:b, s:s, s:I}", "truncated", 1, "sha256", hex, "length", (json_int_t)len);
	if (m && head_len && json_object_set_new(m, "head", json_stringn(text, head_len)) != 0) {
		json_decref(m);
		m = NULL;
	}
	return m;
}

/* How many of s's first n bytes to keep so that they end on a UTF-8
 * character boundary (s is valid UTF-8). */
static size_t utf8_prefix(const char *s, size_t n)
{
	while (n > 0 && ((unsigned char)s[n] & 0xC0u) == 0x80u)
		n--;
	return n;
}

/* The canonical text of any JSON value, not only of an object (the
 * same bytes evid_json_canonical() gives an object); malloc'd or NULL. */
static char *canonical_any(const json_t *v)
{
	return json_dumps(v, JSON_COMPACT | JSON_SORT_KEYS | JSON_ENCODE_ANY);
}

/* The marker of a whole JSON value (its canonical text). */
static json_t *value_marker(const json_t *v)
{
	char *text = canonical_any(v);
	json_t *m;

	if (!text)
		return NULL;
	m = marker(text, strlen(text), 0);
	free(text);
	return m;
}

/* Step 1, in place: every string longer than TRUNCATE_STRING_BYTES,
 * anywhere in j, becomes its marker. Sets *cut when one did. 0 or -1
 * (out of memory). */
static int cut_long_strings(json_t *j, int *cut)
{
	const char *key;
	json_t *v;
	json_t *m;
	void *tmp;
	size_t i;

	if (json_is_object(j)) {
		json_object_foreach_safe(j, tmp, key, v)
		{
			if (json_is_string(v) && json_string_length(v) > TRUNCATE_STRING_BYTES) {
				m = marker(
				    json_string_value(v), json_string_length(v),
				    utf8_prefix(json_string_value(v), EVID_TRUNCATE_HEAD_BYTES));
				if (!m || json_object_set_new(j, key, m) != 0)
					return -1;
				*cut = 1;
			} else if (cut_long_strings(v, cut) != 0) {
				return -1;
			}
		}
	} else if (json_is_array(j)) {
		json_array_foreach(j, i, v)
		{
			if (json_is_string(v) && json_string_length(v) > TRUNCATE_STRING_BYTES) {
				m = marker(
				    json_string_value(v), json_string_length(v),
				    utf8_prefix(json_string_value(v), EVID_TRUNCATE_HEAD_BYTES));
				if (!m || json_array_set_new(j, i, m) != 0)
					return -1;
				*cut = 1;
			} else if (cut_long_strings(v, cut) != 0) {
				return -1;
			}
		}
	}
	return 0;
}

/* The canonical size of j in bytes, or (size_t)-1 when out of memory. */
static size_t canonical_size(const json_t *j)
{
	char *text = canonical_any(j);
	size_t n;

	if (!text)
		return (size_t)-1;
	n = strlen(text);
	free(text);
	return n;
}

/* Step 2, in place: the largest member of object j that is not a marker
 * yet becomes its marker. 1 when one did, 0 when none was left, -1 out
 * of memory. */
static int cut_largest_member(json_t *j)
{
	const char *key;
	const char *largest = NULL;
	size_t largest_size = 0;
	size_t n;
	json_t *v;
	json_t *m;

	json_object_foreach(j, key, v)
	{
		if (json_is_true(json_object_get(v, "truncated")))
			continue;
		n = canonical_size(v);
		if (n == (size_t)-1)
			return -1;
		if (n > largest_size) {
			largest_size = n;
			largest = key;
		}
	}
	if (!largest || largest_size < 128)
		return 0; /* a marker would not be smaller */
	m = value_marker(json_object_get(j, largest));
	if (!m || json_object_set_new(j, largest, m) != 0)
		return -1;
	return 1;
}

json_t *evid_json_fit(const json_t *j, size_t max_bytes, int *truncated)
{
	json_t *copy = json_deep_copy(j);
	json_t *whole;
	size_t n;
	int cut = 0;
	int rc;

	*truncated = 0;
	if (!copy)
		goto oom;
	n = canonical_size(copy);
	if (n == (size_t)-1)
		goto oom;
	if (n <= max_bytes)
		return copy;
	if (cut_long_strings(copy, &cut) != 0)
		goto oom;
	*truncated = 1;
	while ((n = canonical_size(copy)) > max_bytes) {
		if (n == (size_t)-1)
			goto oom;
		rc = json_is_object(copy) ? cut_largest_member(copy) : 0;
		if (rc < 0)
			goto oom;
		if (rc == 0) {
			whole = value_marker(j);
			json_decref(copy);
			return whole;
		}
	}
	return copy;
oom:
	json_decref(copy);
	return NULL;
}

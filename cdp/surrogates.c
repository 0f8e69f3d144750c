/*
 * surrogates.c - lone UTF-16 surrogates in Chromium's JSON.
 *
 * DESIGN
 *
 * A page's JavaScript strings are UTF-16 and may hold a lone surrogate
 * (String.fromCharCode(0xD800)); Chromium writes such a character into
 * its CDP JSON as the escape \ud800, which is valid JSON but no Unicode
 * text, so jansson refuses the whole message. The escapes are rewritten
 * in place to \ufffd (the replacement character, the same six bytes), as
 * a browser shows an unpaired surrogate when it renders it; a proper
 * surrogate pair is kept. Only escapes change: the rest of the message is
 * left as Chromium sent it.
 */
#include "cdp/cdp-private.h"

#include <string.h>

/* The value of 4 hex digits at p (p has 4 bytes), or -1. */
static long hex4(const char *p)
{
	long v = 0;
	int i;

	for (i = 0; i < 4; i++) {
		char ch = p[i];

		v <<= 4;
		if (ch >= '0' && ch <= '9')
			v |= ch - '0';
		else if (ch >= 'a' && ch <= 'f')
			v |= ch - 'a' + 10;
		else if (ch >= 'A' && ch <= 'F')
			v |= ch - 'A' + 10;
		else
			return -1;
	}
	return v;
}

/* The code unit of a \uXXXX escape at data[i] (i + 6 <= len), or -1. */
static long escape_at(const char *data, size_t len, size_t i)
{
	if (i + 6 > len || data[i] != '\\' || data[i + 1] != 'u')
		return -1;
	return hex4(data + i + 2);
}

size_t cdp_json_fix_surrogates(char *data, size_t len)
{
	size_t fixed = 0;
	size_t i = 0;

	while (i + 1 < len) {
		long u, next;

		if (data[i] != '\\') {
			i++;
			continue;
		}
		u = escape_at(data, len, i);
		if (u < 0xD800 || u > 0xDFFF) {
			i += 2; /* another escape (\\, \", \n, ...) or a plain \uXXXX */
			continue;
		}
		next = u <= 0xDBFF ? escape_at(data, len, i + 6) : -1;
		if (next >= 0xDC00 && next <= 0xDFFF) {
			i += 12; /* a pair: one character */
			continue;
		}
		memcpy(data + i + 2, "fffd", 4);
		fixed++;
		i += 6;
	}
	return fixed;
}

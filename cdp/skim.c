/*
 * skim.c - what an oversized message was about, learnt while its bytes
 * stream past and are thrown away.
 *
 * A message over max_frame_bytes is never stored, so jansson cannot parse
 * it. The skim follows just enough JSON syntax (strings with escapes,
 * nesting depth, member names at depth 1) to note the top-level "id"
 * (a non-negative integer), "method" and "sessionId" (short strings
 * without escapes), wherever they are in the object (Chromium writes
 * "sessionId" after a huge "params"). Anything surprising marks the
 * field, or the whole skim, invalid: the result then names nothing and
 * the message is merely dropped. Memory is fixed; every byte is O(1).
 */
#include "cdp/cdp-private.h"

#include <string.h>

/* Resets s for a new message. */
void cdp_skim_init(struct cdp_skim *s)
{
	memset(s, 0, sizeof(*s));
}

/* The string that begins now at depth 1 is copied if it is a member name
 * or the value of "method"/"sessionId"; a second value for the same name
 * makes it ambiguous, hence invalid. */
static void cdp_skim_string_start(struct cdp_skim *s)
{
	s->in_string = 1;
	s->capture = CDP_SKIM_NONE;
	if (s->depth != 1) {
		/* nested: not ours */
	} else if (s->want_key) {
		s->capture = CDP_SKIM_OTHER; /* the member name */
		s->key_len = 0;
		s->key_invalid = 0;
	} else if (s->field == CDP_SKIM_METHOD) {
		s->capture = CDP_SKIM_METHOD;
		s->method_state =
		    s->method_state == CDP_SKIM_ABSENT ? CDP_SKIM_READING : CDP_SKIM_INVALID;
		s->method_len = 0;
	} else if (s->field == CDP_SKIM_SESSION) {
		s->capture = CDP_SKIM_SESSION;
		s->session_state =
		    s->session_state == CDP_SKIM_ABSENT ? CDP_SKIM_READING : CDP_SKIM_INVALID;
		s->session_len = 0;
	} else if (s->field == CDP_SKIM_ID) {
		s->id_state = CDP_SKIM_INVALID; /* "id" must be a number */
	}
}

/* Appends one byte to the string being captured, within its bounds. */
static void cdp_skim_capture_byte(struct cdp_skim *s, char ch)
{
	switch (s->capture) {
	case CDP_SKIM_OTHER:
		if (s->key_len + 1 < sizeof(s->key))
			s->key[s->key_len++] = ch;
		else
			s->key_invalid = 1;
		break;
	case CDP_SKIM_METHOD:
		if (s->method_state == CDP_SKIM_READING && s->method_len + 1 < sizeof(s->method))
			s->method[s->method_len++] = ch;
		else
			s->method_state = CDP_SKIM_INVALID;
		break;
	case CDP_SKIM_SESSION:
		if (s->session_state == CDP_SKIM_READING &&
		    s->session_len + 1 < sizeof(s->session_id))
			s->session_id[s->session_len++] = ch;
		else
			s->session_state = CDP_SKIM_INVALID;
		break;
	default:
		break;
	}
}

/* A backslash inside a captured string: names never need escapes. */
static void cdp_skim_capture_escape(struct cdp_skim *s)
{
	if (s->capture == CDP_SKIM_OTHER)
		s->key_invalid = 1;
	else if (s->capture == CDP_SKIM_METHOD)
		s->method_state = CDP_SKIM_INVALID;
	else if (s->capture == CDP_SKIM_SESSION)
		s->session_state = CDP_SKIM_INVALID;
}

/* The closing quote of a string. */
static void cdp_skim_string_end(struct cdp_skim *s)
{
	s->in_string = 0;
	switch (s->capture) {
	case CDP_SKIM_OTHER:
		s->key[s->key_len] = '\0';
		if (s->key_invalid)
			s->field = CDP_SKIM_OTHER;
		else if (!strcmp(s->key, "id"))
			s->field = CDP_SKIM_ID;
		else if (!strcmp(s->key, "method"))
			s->field = CDP_SKIM_METHOD;
		else if (!strcmp(s->key, "sessionId"))
			s->field = CDP_SKIM_SESSION;
		else
			s->field = CDP_SKIM_OTHER;
		break;
	case CDP_SKIM_METHOD:
		s->method[s->method_len] = '\0';
		if (s->method_state == CDP_SKIM_READING)
			s->method_state = s->method_len ? CDP_SKIM_COMPLETE : CDP_SKIM_INVALID;
		break;
	case CDP_SKIM_SESSION:
		s->session_id[s->session_len] = '\0';
		if (s->session_state == CDP_SKIM_READING)
			s->session_state = CDP_SKIM_COMPLETE;
		break;
	default:
		break;
	}
	s->capture = CDP_SKIM_NONE;
}

/* One digit of "id", or the end of its number. Returns 1 if ch was
 * consumed as a digit. */
static int cdp_skim_number(struct cdp_skim *s, char ch)
{
	unsigned d;
	int digit = ch >= '0' && ch <= '9';

	if (digit) {
		d = (unsigned)(ch - '0');
		if (s->id > (UINT64_C(0x7fffffffffffffff) - d) / 10)
			s->id_state = CDP_SKIM_INVALID;
		else if (s->id_state == CDP_SKIM_READING)
			s->id = s->id * 10 + d;
		goto out;
	}
	s->in_number = 0;
	if (ch == '.' || ch == 'e' || ch == 'E' || ch == '+' || ch == '-')
		s->id_state = CDP_SKIM_INVALID;
	else if (s->id_state == CDP_SKIM_READING)
		s->id_state = CDP_SKIM_COMPLETE;
out:
	return digit;
}

/* A byte outside strings: structure, separators, the start of "id". */
static void cdp_skim_structure(struct cdp_skim *s, char ch)
{
	switch (ch) {
	case '{':
	case '[':
		if (s->depth == 0 && (ch != '{' || s->ended)) {
			s->bad = 1; /* not an object, or something after it */
			break;
		}
		if (s->depth == 1 && !s->want_key && s->field == CDP_SKIM_ID)
			s->id_state = CDP_SKIM_INVALID;
		if (s->depth == 0)
			s->want_key = 1;
		s->depth++;
		break;
	case '}':
	case ']':
		if (s->depth == 0) {
			s->bad = 1;
			break;
		}
		s->depth--;
		if (s->depth == 0)
			s->ended = 1;
		break;
	case ':':
		if (s->depth == 1)
			s->want_key = 0;
		break;
	case ',':
		if (s->depth == 1) {
			s->want_key = 1;
			s->field = CDP_SKIM_NONE;
		}
		break;
	case '"':
		cdp_skim_string_start(s);
		break;
	case ' ':
	case '\t':
	case '\n':
	case '\r':
		break;
	default:
		if (s->depth == 0) {
			s->bad = 1; /* a scalar outside the object */
		} else if (s->depth == 1 && !s->want_key && s->field == CDP_SKIM_ID) {
			if (ch >= '0' && ch <= '9' && s->id_state == CDP_SKIM_ABSENT) {
				s->id_state = CDP_SKIM_READING;
				s->in_number = 1;
				s->id = (uint64_t)(ch - '0');
			} else {
				s->id_state = CDP_SKIM_INVALID; /* negative, literal, repeated */
			}
		}
		break;
	}
}

/* Feeds len more bytes of the message to s. */
void cdp_skim_feed(struct cdp_skim *s, const char *p, size_t len)
{
	size_t i;
	char ch;

	for (i = 0; i < len && !s->bad; i++) {
		ch = p[i];
		if (s->in_string) {
			if (s->escape)
				s->escape = 0;
			else if (ch == '\\') {
				s->escape = 1;
				cdp_skim_capture_escape(s);
			} else if (ch == '"')
				cdp_skim_string_end(s);
			else
				cdp_skim_capture_byte(s, ch);
			continue;
		}
		if (s->in_number && cdp_skim_number(s, ch))
			continue;
		cdp_skim_structure(s, ch);
	}
}

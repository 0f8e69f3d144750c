/*
 * html.c - text into HTML, safely. Everything the report shows that came
 * from a page (URLs, titles, element names, snapshot text, console
 * output) or from a log that may have been edited goes through here: the
 * five characters that matter in text and attribute values are escaped,
 * control characters and invalid UTF-8 become U+FFFD, so nothing can
 * open a tag, close an attribute or smuggle bytes past the parser.
 */
#include "evidence/evidence-private.h"

#include "common/util.h"

#include <string.h>

#define REPLACEMENT "\xEF\xBF\xBD" /* U+FFFD in UTF-8 */

/* Length of the valid UTF-8 sequence at s (1..4), or 0 when invalid. */
static size_t utf8_seq_len(const unsigned char *s, size_t left)
{
	size_t n;
	size_t i;
	unsigned cp;

	if (s[0] < 0x80)
		return 1;
	if (s[0] >= 0xC2 && s[0] <= 0xDF)
		n = 2;
	else if (s[0] >= 0xE0 && s[0] <= 0xEF)
		n = 3;
	else if (s[0] >= 0xF0 && s[0] <= 0xF4)
		n = 4;
	else
		return 0;
	if (n > left)
		return 0;
	for (i = 1; i < n; i++)
		if ((s[i] & 0xC0) != 0x80)
			return 0;
	cp = n == 2 ? (s[0] & 0x1Fu) : n == 3 ? (s[0] & 0x0Fu) : (s[0] & 0x07u);
	for (i = 1; i < n; i++)
		cp = (cp << 6) | (s[i] & 0x3Fu);
	if ((n == 3 && cp < 0x800) || (n == 4 && (cp < 0x10000 || cp > 0x10FFFF)) ||
	    (cp >= 0xD800 && cp <= 0xDFFF))
		return 0; /* overlong, out of range, or a surrogate */
	return n;
}

int evid_html_escape(struct gb_buf *b, const char *s, size_t len)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t i = 0;
	size_t run = 0; /* start of bytes copied as they are */
	size_t n;
	const char *rep;
	int rc = 0;

	while (i < len && rc == 0) {
		rep = NULL;
		n = 1;
		switch (p[i]) {
		case '&':
			rep = "&amp;";
			break;
		case '<':
			rep = "&lt;";
			break;
		case '>':
			rep = "&gt;";
			break;
		case '"':
			rep = "&quot;";
			break;
		case '\'':
			rep = "&#39;";
			break;
		case '\n':
		case '\t':
			break;
		default:
			if (p[i] < 0x20 || p[i] == 0x7f) {
				rep = REPLACEMENT;
				break;
			}
			n = utf8_seq_len(p + i, len - i);
			if (n == 0) {
				rep = REPLACEMENT;
				n = 1;
			}
		}
		if (rep) {
			if (i > run)
				rc |= gb_buf_append(b, s + run, i - run);
			rc |= gb_buf_append(b, rep, strlen(rep));
			run = i + n;
		}
		i += n;
	}
	if (rc == 0 && len > run)
		rc = gb_buf_append(b, s + run, len - run);
	return rc;
}

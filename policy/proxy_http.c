/*
 * proxy_http.c - HTTP/1.1 for the egress proxy: heads parsed strictly
 * (CRLF lines, token names, no obs-fold, bounded counts), body framing
 * followed byte by byte so that keep-alive and pipelining never let one
 * request's bytes be read as another's, and heads rewritten for the hop
 * (origin-form, a fresh Host, hop-by-hop and Proxy-* fields dropped).
 *
 * Ambiguous framing is refused rather than guessed: Transfer-Encoding
 * other than a lone "chunked" on a request, Transfer-Encoding together
 * with Content-Length, or two different Content-Lengths. Pure functions.
 */
#include "policy/proxy-private.h"

#include <ctype.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

/* The offset just past the blank line ending a head in buf[0..len), or 0
 * when the head is not complete yet. */
size_t proxy_http_head_end(const char *buf, size_t len)
{
	size_t i;
	size_t end = 0;

	for (i = 3; i < len; i++) {
		if (buf[i] == '\n' && buf[i - 1] == '\r' && buf[i - 2] == '\n' &&
		    buf[i - 3] == '\r') {
			end = i + 1;
			break;
		}
	}
	return end;
}

/* 1 for RFC 9110 tchar. */
static int is_tchar(unsigned char c)
{
	return isalnum(c) || (c && strchr("!#$%&'*+-.^_`|~", c));
}

/* Parses the header lines of buf from *pos up to the blank line. */
static int parse_fields(const char *buf, size_t len, size_t pos, struct proxy_head *h, char *why,
                        size_t whylen)
{
	int rc = -400;

	h->nheaders = 0;
	while (pos + 1 < len && !(buf[pos] == '\r' && buf[pos + 1] == '\n')) {
		const char *line = buf + pos;
		const char *eol = memchr(line, '\r', len - pos);
		const char *colon;
		const char *v;
		const char *ve;
		struct proxy_header *f;

		if (!eol || eol + 1 >= buf + len || eol[1] != '\n') {
			snprintf(why, whylen, "a header line does not end in CRLF");
			goto out;
		}
		if (h->nheaders == PROXY_MAX_HEADERS) {
			snprintf(why, whylen, "more than %d header fields", PROXY_MAX_HEADERS);
			rc = -431;
			goto out;
		}
		colon = memchr(line, ':', (size_t)(eol - line));
		if (!colon || colon == line) {
			snprintf(why, whylen, "a header line has no name (or is folded)");
			goto out;
		}
		for (v = line; v < colon; v++) {
			if (!is_tchar((unsigned char)*v)) {
				snprintf(why, whylen,
				         "a header name contains an invalid character");
				goto out;
			}
		}
		for (v = colon + 1; v < eol && (*v == ' ' || *v == '\t'); v++)
			;
		for (ve = eol; ve > v && (ve[-1] == ' ' || ve[-1] == '\t'); ve--)
			;
		{
			const char *q;

			for (q = v; q < ve; q++) {
				unsigned char c = (unsigned char)*q;

				if ((c < 0x20 && c != '\t') || c == 0x7f) {
					snprintf(why, whylen,
					         "a header value contains a control character");
					goto out;
				}
			}
		}
		f = &h->headers[h->nheaders++];
		f->name = line;
		f->name_len = (size_t)(colon - line);
		f->value = v;
		f->value_len = (size_t)(ve - v);
		pos = (size_t)(eol - buf) + 2;
	}
	if (pos + 1 >= len) {
		snprintf(why, whylen, "the head has no blank line");
		goto out;
	}
	h->head_len = pos + 2;
	rc = 0;
out:
	return rc;
}

/* Parses "HTTP/1.x" at p (8 bytes available); sets h->minor. */
static int parse_version(const char *p, struct proxy_head *h)
{
	int ok = memcmp(p, "HTTP/1.", 7) == 0 && (p[7] == '0' || p[7] == '1');

	if (ok)
		h->minor = p[7] - '0';
	return ok ? 0 : -1;
}

/*
 * Parses a complete request head buf[0..len) (len from
 * proxy_http_head_end). Returns 0, -400 (malformed) or -431 (too many
 * fields) with why. The request-target is checked to be visible ASCII.
 */
int proxy_http_parse_request(const char *buf, size_t len, struct proxy_head *h, char *why,
                             size_t whylen)
{
	const char *eol = memchr(buf, '\r', len);
	const char *sp1;
	const char *sp2;
	size_t i;
	int rc = -400;

	memset(h, 0, sizeof(*h));
	if (!eol || eol + 1 >= buf + len || eol[1] != '\n') {
		snprintf(why, whylen, "the request line does not end in CRLF");
		goto out;
	}
	sp1 = memchr(buf, ' ', (size_t)(eol - buf));
	if (!sp1 || sp1 == buf || (size_t)(sp1 - buf) >= sizeof(h->method)) {
		snprintf(why, whylen, "the request line has no valid method");
		goto out;
	}
	for (i = 0; buf + i < sp1; i++) {
		if (!is_tchar((unsigned char)buf[i])) {
			snprintf(why, whylen, "the method contains an invalid character");
			goto out;
		}
		h->method[i] = buf[i];
	}
	sp2 = memchr(sp1 + 1, ' ', (size_t)(eol - sp1 - 1));
	if (!sp2 || sp2 == sp1 + 1 || eol - sp2 != 9 || parse_version(sp2 + 1, h) < 0) {
		snprintf(why, whylen, "the request line is not \"METHOD target HTTP/1.1\"");
		goto out;
	}
	h->target = sp1 + 1;
	h->target_len = (size_t)(sp2 - sp1 - 1);
	if (h->target_len > PROXY_MAX_TARGET) {
		snprintf(why, whylen, "the request target is longer than %d bytes",
		         PROXY_MAX_TARGET);
		rc = -431;
		goto out;
	}
	for (i = 0; i < h->target_len; i++) {
		unsigned char c = (unsigned char)h->target[i];

		if (c <= 0x20 || c >= 0x7f) {
			snprintf(why, whylen,
			         "the request target contains a space or control character");
			goto out;
		}
	}
	rc = parse_fields(buf, len, (size_t)(eol - buf) + 2, h, why, whylen);
out:
	return rc;
}

/* Parses a complete response head. Returns 0 or -502 with why. */
int proxy_http_parse_response(const char *buf, size_t len, struct proxy_head *h, char *why,
                              size_t whylen)
{
	const char *eol = memchr(buf, '\r', len);
	int rc = -502;

	memset(h, 0, sizeof(*h));
	if (!eol || eol + 1 >= buf + len || eol[1] != '\n' || eol - buf < 12 ||
	    parse_version(buf, h) < 0 || buf[8] != ' ' || !isdigit((unsigned char)buf[9]) ||
	    !isdigit((unsigned char)buf[10]) || !isdigit((unsigned char)buf[11]) ||
	    (eol - buf > 12 && buf[12] != ' ')) {
		snprintf(why, whylen, "the upstream's status line is malformed");
		goto out;
	}
	h->status = (buf[9] - '0') * 100 + (buf[10] - '0') * 10 + (buf[11] - '0');
	h->reason = buf + 12;
	h->reason_len = (size_t)(eol - buf - 12);
	if (parse_fields(buf, len, (size_t)(eol - buf) + 2, h, why, whylen) < 0)
		goto out;
	rc = 0;
out:
	return rc;
}

/* The first field called name (case-insensitive), or NULL. */
const struct proxy_header *proxy_http_header(const struct proxy_head *h, const char *name)
{
	const struct proxy_header *found = NULL;
	size_t n = strlen(name);
	size_t i;

	for (i = 0; !found && i < h->nheaders; i++)
		if (h->headers[i].name_len == n && !strncasecmp(h->headers[i].name, name, n))
			found = &h->headers[i];
	return found;
}

/* 1 when any field called name holds token in its comma-separated list
 * (case-insensitive). */
int proxy_http_has_token(const struct proxy_head *h, const char *name, const char *token)
{
	size_t n = strlen(name);
	size_t tl = strlen(token);
	size_t i;
	int found = 0;

	for (i = 0; !found && i < h->nheaders; i++) {
		const char *v = h->headers[i].value;
		const char *end = v + h->headers[i].value_len;

		if (h->headers[i].name_len != n || strncasecmp(h->headers[i].name, name, n))
			continue;
		while (!found && v < end) {
			const char *comma = memchr(v, ',', (size_t)(end - v));
			const char *te = comma ? comma : end;
			const char *ts = v;

			while (ts < te && (*ts == ' ' || *ts == '\t'))
				ts++;
			while (te > ts && (te[-1] == ' ' || te[-1] == '\t'))
				te--;
			found = (size_t)(te - ts) == tl && !strncasecmp(ts, token, tl);
			v = comma ? comma + 1 : end;
		}
	}
	return found;
}

/* Reads every Content-Length field: they must agree and be digits only.
 * Returns 1 with *len, 0 when there is none, -1 when invalid. */
static int content_length(const struct proxy_head *h, uint64_t *len)
{
	size_t i;
	int seen = 0;
	int rc = 0;

	for (i = 0; i < h->nheaders; i++) {
		const struct proxy_header *f = &h->headers[i];
		uint64_t v = 0;
		size_t k;

		if (f->name_len != 14 || strncasecmp(f->name, "content-length", 14))
			continue;
		if (f->value_len == 0 || f->value_len > 18) {
			rc = -1;
			goto out;
		}
		for (k = 0; k < f->value_len; k++) {
			if (!isdigit((unsigned char)f->value[k])) {
				rc = -1;
				goto out;
			}
			v = v * 10 + (uint64_t)(f->value[k] - '0');
		}
		if (seen && v != *len) {
			rc = -1;
			goto out;
		}
		*len = v;
		seen = 1;
		rc = 1;
	}
out:
	return rc;
}

/* Counts the Transfer-Encoding fields of h. */
static size_t count_fields(const struct proxy_head *h, const char *name)
{
	size_t n = strlen(name);
	size_t i;
	size_t count = 0;

	for (i = 0; i < h->nheaders; i++)
		if (h->headers[i].name_len == n && !strncasecmp(h->headers[i].name, name, n))
			count++;
	return count;
}

/* Sets up b for the body of request h. Returns 0, or -400 / -501 with
 * why when the framing is ambiguous or unsupported. */
int proxy_http_request_body(const struct proxy_head *h, struct proxy_body *b, char *why,
                            size_t whylen)
{
	uint64_t len = 0;
	int cl = content_length(h, &len);
	size_t te = count_fields(h, "transfer-encoding");
	int rc = -400;

	memset(b, 0, sizeof(*b));
	if (cl < 0) {
		snprintf(why, whylen,
		         "Content-Length is invalid or given twice with different values");
		goto out;
	}
	if (te) {
		const struct proxy_header *f = proxy_http_header(h, "transfer-encoding");

		if (cl > 0) {
			snprintf(why, whylen, "both Transfer-Encoding and Content-Length are set");
			goto out;
		}
		if (te != 1 || f->value_len != 7 || strncasecmp(f->value, "chunked", 7)) {
			snprintf(why, whylen, "only \"Transfer-Encoding: chunked\" is supported");
			rc = -501;
			goto out;
		}
		b->kind = PROXY_BODY_CHUNKED;
	} else if (cl > 0 && len > 0) {
		b->kind = PROXY_BODY_LENGTH;
		b->remaining = len;
	} else {
		b->kind = PROXY_BODY_NONE;
		b->done = 1;
	}
	rc = 0;
out:
	return rc;
}

/* Sets up b for the body of response h to a req_method request. */
void proxy_http_response_body(const struct proxy_head *h, const char *req_method,
                              struct proxy_body *b)
{
	uint64_t len = 0;
	int cl = content_length(h, &len);

	memset(b, 0, sizeof(*b));
	if ((h->status >= 100 && h->status < 200) || h->status == 204 || h->status == 304 ||
	    !strcmp(req_method, "HEAD")) {
		b->kind = PROXY_BODY_NONE;
		b->done = 1;
	} else if (count_fields(h, "transfer-encoding")) {
		b->kind = proxy_http_has_token(h, "transfer-encoding", "chunked")
		              ? PROXY_BODY_CHUNKED
		              : PROXY_BODY_UNTIL_CLOSE;
	} else if (cl > 0) {
		b->kind = len ? PROXY_BODY_LENGTH : PROXY_BODY_NONE;
		b->remaining = len;
		b->done = len == 0;
	} else {
		b->kind = PROXY_BODY_UNTIL_CLOSE; /* also when Content-Length is invalid */
	}
}

enum {
	CH_SIZE = 0, /* hex digits of the chunk size */
	CH_EXT,      /* chunk extension up to CR */
	CH_SIZE_LF,
	CH_DATA,
	CH_DATA_CR,
	CH_DATA_LF,
	CH_TRAILER, /* start of a trailer line (or the final CRLF) */
	CH_TRAILER_LINE,
	CH_TRAILER_LF,
	CH_FINAL_LF,
};

/* Follows chunked framing over buf; returns the bytes that belong to the
 * body, or -1 on a syntax error. */
static long chunked_feed(struct proxy_body *b, const char *buf, size_t len)
{
	size_t i = 0;
	int bad = 0;

	while (i < len && !b->done && !bad) {
		unsigned char c = (unsigned char)buf[i];
		size_t take;

		switch (b->state) {
		case CH_SIZE:
			if (isxdigit(c) && b->digits < 15) {
				b->digits++;
				b->remaining =
				    b->remaining * 16 +
				    (uint64_t)(isdigit(c) ? c - '0' : tolower(c) - 'a' + 10);
			} else if (b->digits && (c == ';' || c == ' ' || c == '\t')) {
				b->state = CH_EXT;
			} else if (b->digits && c == '\r') {
				b->state = CH_SIZE_LF;
			} else {
				bad = 1;
			}
			i++;
			break;
		case CH_EXT:
			bad = ++b->line_len > PROXY_CHUNK_LINE_MAX ||
			      (c < 0x20 && c != '\t' && c != '\r');
			if (c == '\r')
				b->state = CH_SIZE_LF;
			i++;
			break;
		case CH_SIZE_LF:
			bad = c != '\n';
			b->line_len = 0;
			b->digits = 0;
			b->state = b->remaining ? CH_DATA : CH_TRAILER;
			i++;
			break;
		case CH_DATA:
			take = len - i < b->remaining ? len - i : (size_t)b->remaining;
			b->remaining -= take;
			i += take;
			if (!b->remaining)
				b->state = CH_DATA_CR;
			break;
		case CH_DATA_CR:
			bad = c != '\r';
			b->state = CH_DATA_LF;
			i++;
			break;
		case CH_DATA_LF:
			bad = c != '\n';
			b->state = CH_SIZE;
			i++;
			break;
		case CH_TRAILER:
			b->state = c == '\r' ? CH_FINAL_LF : CH_TRAILER_LINE;
			b->line_len = 1;
			i++;
			break;
		case CH_TRAILER_LINE:
			bad = ++b->line_len > PROXY_CHUNK_LINE_MAX;
			if (c == '\r')
				b->state = CH_TRAILER_LF;
			i++;
			break;
		case CH_TRAILER_LF:
			bad = c != '\n';
			b->state = CH_TRAILER;
			i++;
			break;
		case CH_FINAL_LF:
			bad = c != '\n';
			b->done = !bad;
			i++;
			break;
		default:
			bad = 1;
			break;
		}
	}
	return bad ? -1 : (long)i;
}

/*
 * Follows b's framing over the next bytes buf[0..len) of a message.
 * Returns how many of them belong to the body (the rest is the next
 * message), setting b->done at its end; -1 on broken chunked syntax.
 */
long proxy_body_feed(struct proxy_body *b, const char *buf, size_t len)
{
	long n = 0;

	if (b->done || b->kind == PROXY_BODY_NONE) {
		b->done = 1;
		goto out;
	}
	if (b->kind == PROXY_BODY_UNTIL_CLOSE) {
		n = (long)len;
	} else if (b->kind == PROXY_BODY_LENGTH) {
		n = (long)(len < b->remaining ? len : b->remaining);
		b->remaining -= (uint64_t)n;
		b->done = b->remaining == 0;
	} else {
		n = chunked_feed(b, buf, len);
	}
out:
	return n;
}

/* 1 when the client wants its connection kept after this request. */
int proxy_http_client_keepalive(const struct proxy_head *h)
{
	int close_asked = proxy_http_has_token(h, "connection", "close") ||
	                  proxy_http_has_token(h, "proxy-connection", "close");
	int keep_asked = proxy_http_has_token(h, "connection", "keep-alive") ||
	                 proxy_http_has_token(h, "proxy-connection", "keep-alive");

	return !close_asked && (h->minor == 1 || keep_asked);
}

/* 1 for a request that asks to switch protocols (WebSocket). */
int proxy_http_is_upgrade(const struct proxy_head *h)
{
	return h->minor == 1 && proxy_http_has_token(h, "connection", "upgrade") &&
	       proxy_http_header(h, "upgrade") != NULL;
}

/* 1 when field f must not cross the proxy: hop-by-hop fields, Proxy-*,
 * fields the message's Connection names, and those the proxy writes
 * itself (Host, Connection, Upgrade unless upgrading). */
static int hop_by_hop(const struct proxy_head *h, const struct proxy_header *f, int upgrade,
                      int is_request)
{
	static const char *const drop[] = { "connection", "keep-alive", "te", "trailer",
		                            "proxy-connection" };
	char name[64];
	size_t i;
	int hop = 0;

	if (f->name_len >= 6 && !strncasecmp(f->name, "proxy-", 6)) {
		hop = 1;
	} else if (is_request && f->name_len == 4 && !strncasecmp(f->name, "host", 4)) {
		hop = 1;
	} else if (f->name_len == 7 && !strncasecmp(f->name, "upgrade", 7)) {
		hop = !upgrade;
	} else {
		for (i = 0; i < sizeof(drop) / sizeof(drop[0]); i++)
			if (f->name_len == strlen(drop[i]) &&
			    !strncasecmp(f->name, drop[i], f->name_len))
				hop = 1;
		if (!hop && f->name_len < sizeof(name)) {
			memcpy(name, f->name, f->name_len);
			name[f->name_len] = '\0';
			for (i = 0; name[i]; i++)
				name[i] = (char)tolower((unsigned char)name[i]);
			/* framing stays, whatever Connection says */
			hop = strcmp(name, "content-length") && strcmp(name, "transfer-encoding") &&
			      proxy_http_has_token(h, "connection", name);
		}
	}
	return hop;
}

/* Appends every field of h that may cross the proxy to out. */
static int copy_fields(const struct proxy_head *h, int upgrade, int is_request, struct gb_buf *out)
{
	size_t i;
	int rc = 0;

	for (i = 0; i < h->nheaders && rc == 0; i++) {
		const struct proxy_header *f = &h->headers[i];

		if (hop_by_hop(h, f, upgrade, is_request))
			continue;
		rc |= gb_buf_append(out, f->name, f->name_len);
		rc |= gb_buf_append(out, ": ", 2);
		rc |= gb_buf_append(out, f->value, f->value_len);
		rc |= gb_buf_append(out, "\r\n", 2);
	}
	return rc;
}

/*
 * Writes the request head to send upstream into out: "METHOD origin-form
 * HTTP/1.1", Host: host_header, the end-to-end fields of h, and
 * "Connection: close" (or "Connection: Upgrade" with upgrade). Returns 0,
 * or -1 when out's ceiling is reached.
 */
int proxy_http_rewrite_request(const struct proxy_head *h, const char *origin_form,
                               size_t origin_len, const char *host_header, int upgrade,
                               struct gb_buf *out)
{
	int rc = 0;

	rc |= gb_buf_appendf(out, "%s ", h->method);
	if (origin_len == 0 || origin_form[0] != '/')
		rc |= gb_buf_append(out, "/", 1);
	rc |= gb_buf_append(out, origin_form, origin_len);
	rc |= gb_buf_appendf(out, " HTTP/1.1\r\nHost: %s\r\n", host_header);
	rc |= copy_fields(h, upgrade, 1, out);
	rc |= gb_buf_appendf(out, "Connection: %s\r\n\r\n", upgrade ? "Upgrade" : "close");
	return rc ? -1 : 0;
}

/*
 * Writes the response head to send to the client into out: the status
 * line, the end-to-end fields of h and our own Connection field
 * (keep-alive, close, or Upgrade for a 101). Returns 0 or -1.
 */
int proxy_http_rewrite_response(const struct proxy_head *h, int keepalive, int upgrade,
                                struct gb_buf *out)
{
	int rc = 0;

	rc |= gb_buf_appendf(out, "HTTP/1.1 %03d", h->status);
	rc |= gb_buf_append(out, h->reason, h->reason_len);
	rc |= gb_buf_append(out, "\r\n", 2);
	rc |= copy_fields(h, upgrade, 0, out);
	rc |= gb_buf_appendf(out, "Connection: %s\r\n\r\n",
	                     upgrade     ? "Upgrade"
	                     : keepalive ? "keep-alive"
	                                 : "close");
	return rc ? -1 : 0;
}

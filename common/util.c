/*
 * util.c - clocks, random ids and the bounded string buffer.
 */
#include "common/util.h"

#include <sodium.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

int64_t gb_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

int64_t gb_wall_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

struct timespec gb_deadline_in(clockid_t clock, int ms)
{
	struct timespec t;

	clock_gettime(clock, &t);
	t.tv_sec += ms / 1000;
	t.tv_nsec += (long)(ms % 1000) * 1000000L;
	if (t.tv_nsec >= 1000000000L) {
		t.tv_sec++;
		t.tv_nsec -= 1000000000L;
	}
	return t;
}

void gb_utc_iso8601(char *buf, size_t buflen)
{
	struct timespec ts;
	struct tm tm;
	char base[24];

	clock_gettime(CLOCK_REALTIME, &ts);
	gmtime_r(&ts.tv_sec, &tm);
	strftime(base, sizeof(base), "%Y-%m-%dT%H:%M:%S", &tm);
	snprintf(buf, buflen, "%s.%03ldZ", base, ts.tv_nsec / 1000000);
}

void gb_hex(const unsigned char *bin, size_t len, char *out)
{
	static const char digits[] = "0123456789abcdef";
	size_t i;

	for (i = 0; i < len; i++) {
		out[2 * i] = digits[bin[i] >> 4];
		out[2 * i + 1] = digits[bin[i] & 15];
	}
	out[2 * len] = '\0';
}

void gb_random_hex(char *buf, size_t nbytes)
{
	unsigned char raw[64];

	if (nbytes > sizeof(raw))
		nbytes = sizeof(raw);
	randombytes_buf(raw, nbytes);
	gb_hex(raw, nbytes, buf);
}

void gb_buf_init(struct gb_buf *b, size_t max_bytes)
{
	memset(b, 0, sizeof(*b));
	b->max_bytes = max_bytes;
}

int gb_buf_append(struct gb_buf *b, const char *s, size_t n)
{
	size_t need = b->len + n + 1;
	size_t cap;
	char *grown;

	if (b->overflowed || need > b->max_bytes + 1) {
		b->overflowed = 1;
		return -1;
	}
	if (need > b->cap) {
		cap = b->cap ? b->cap : 256;
		while (cap < need)
			cap *= 2;
		grown = realloc(b->data, cap);
		if (!grown) {
			b->overflowed = 1;
			return -1;
		}
		b->data = grown;
		b->cap = cap;
	}
	memcpy(b->data + b->len, s, n);
	b->len += n;
	b->data[b->len] = '\0';
	return 0;
}

int gb_buf_appendf(struct gb_buf *b, const char *fmt, ...)
{
	char small[512];
	char *big = NULL;
	va_list ap;
	int n;
	int rc;

	va_start(ap, fmt);
	n = vsnprintf(small, sizeof(small), fmt, ap);
	va_end(ap);
	if (n < 0)
		return -1;
	if ((size_t)n < sizeof(small))
		return gb_buf_append(b, small, (size_t)n);
	big = malloc((size_t)n + 1);
	if (!big)
		return -1;
	va_start(ap, fmt);
	vsnprintf(big, (size_t)n + 1, fmt, ap);
	va_end(ap);
	rc = gb_buf_append(b, big, (size_t)n);
	free(big);
	return rc;
}

char *gb_buf_steal(struct gb_buf *b)
{
	char *s = b->data;
	size_t max = b->max_bytes;

	if (!s)
		s = strdup("");
	gb_buf_init(b, max);
	return s;
}

void gb_buf_free(struct gb_buf *b)
{
	free(b->data);
	gb_buf_init(b, b->max_bytes);
}

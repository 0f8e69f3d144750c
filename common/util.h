/*
 * util.h - small helpers shared by every module: clocks, random ids,
 * bounded string building.
 */
#ifndef GB_UTIL_H
#define GB_UTIL_H

#include <stddef.h>
#include <stdint.h>
#include <time.h>

/* s, or fallback when s is NULL. */
static inline const char *gb_or(const char *s, const char *fallback)
{
	return s ? s : fallback;
}

/* Milliseconds on the monotonic clock; for deadlines and durations. */
int64_t gb_now_ms(void);
/* Milliseconds since the epoch (CLOCK_REALTIME), for records. */
int64_t gb_wall_ms(void);
/* The time ms (>= 0) from now on clock (CLOCK_MONOTONIC, CLOCK_REALTIME),
 * as pthread_cond_timedwait takes it for a condition on that clock. */
struct timespec gb_deadline_in(clockid_t clock, int ms);

/* Writes the current UTC time as "2026-11-29T18:20:01.123Z" into buf
 * (at least 32 bytes). */
void gb_utc_iso8601(char *buf, size_t buflen);

/* Fills buf with 2*nbytes lowercase hex characters of cryptographic
 * randomness (libsodium) and a terminating NUL; buf holds 2*nbytes+1. */
void gb_random_hex(char *buf, size_t nbytes);

/* Lowercase hex of bin[0..len) into out (2*len+1 bytes). */
void gb_hex(const unsigned char *bin, size_t len, char *out);

/* A growable string with a ceiling: appends fail with -1 once max_bytes
 * would be exceeded, and the buffer stays valid and NUL-terminated. */
struct gb_buf {
	char *data;
	size_t len;
	size_t cap;
	size_t max_bytes;
	int overflowed;
};

void gb_buf_init(struct gb_buf *b, size_t max_bytes);
int gb_buf_append(struct gb_buf *b, const char *s, size_t n);
int gb_buf_appendf(struct gb_buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Returns the string and gives ownership to the caller (free()); the
 * buffer is reset. Never NULL after init (an empty string at worst). */
char *gb_buf_steal(struct gb_buf *b);
void gb_buf_free(struct gb_buf *b);

#endif

/*
 * mem_stream.h - a growing in-memory byte stream with the write and read
 * callbacks the sealed-profile stream takes, for its tests and fuzzer.
 */
#ifndef GB_TEST_MEM_STREAM_H
#define GB_TEST_MEM_STREAM_H

#include <stdlib.h>
#include <string.h>
#include <sys/types.h>

struct mem {
	unsigned char *data;
	size_t len;
	size_t cap;
	size_t pos; /* where mem_read goes on */
};

/* Appends n bytes (grows the buffer). Returns 0. */
static inline int mem_write(void *user, const void *buf, size_t n)
{
	struct mem *m = user;

	if (m->len + n > m->cap) {
		m->cap = (m->len + n) * 2;
		m->data = realloc(m->data, m->cap);
	}
	memcpy(m->data + m->len, buf, n);
	m->len += n;
	return 0;
}

/* Reads up to n bytes from pos; 0 at the end. */
static inline ssize_t mem_read(void *user, void *buf, size_t n)
{
	struct mem *m = user;
	size_t left = m->len - m->pos;

	if (n > left)
		n = left;
	memcpy(buf, m->data + m->pos, n);
	m->pos += n;
	return (ssize_t)n;
}

#endif

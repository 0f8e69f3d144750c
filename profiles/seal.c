/*
 * seal.c - the sealed stream of a profile blob (format in
 * profiles-private.h): libsodium's crypto_secretstream_xchacha20poly1305
 * in chunks of PROF_CHUNK_BYTES, so a profile of any size is sealed and
 * opened with two chunk buffers of memory.
 *
 * The reader trusts nothing: each length is checked against its bounds
 * before anything is read, a chunk that does not authenticate ends the
 * stream with -EBADMSG, a stream that stops before its TAG_FINAL chunk is
 * truncated, and bytes after it are refused. Plaintext buffers are wiped
 * before they are freed.
 */
#include "profiles/profiles-private.h"

#include <errno.h>
#include <sodium.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define ABYTES crypto_secretstream_xchacha20poly1305_ABYTES
#define HEADER_BYTES crypto_secretstream_xchacha20poly1305_HEADERBYTES
#define AD_MAX 512

struct prof_sealer {
	crypto_secretstream_xchacha20poly1305_state st;
	prof_write_fn out;
	void *user;
	char ad[AD_MAX];
	size_t ad_len;
	unsigned char plain[PROF_CHUNK_BYTES];
	size_t fill;
	unsigned char cipher[4 + PROF_CHUNK_BYTES + ABYTES];
};

struct prof_unsealer {
	crypto_secretstream_xchacha20poly1305_state st;
	prof_read_fn in;
	void *user;
	char ad[AD_MAX];
	size_t ad_len;
	unsigned char plain[PROF_CHUNK_BYTES];
	size_t plain_len;
	size_t plain_pos;
	int final_seen;
	int failed;
	unsigned char cipher[PROF_CHUNK_BYTES + ABYTES];
};

/* Wipes (the stream state and plaintext are secrets) and frees. */
static void wipe_free(void *p, size_t n)
{
	sodium_memzero(p, n);
	free(p);
}

void prof_blob_ad(const char *tenant, const char *user, const char *id, int64_t version, char *ad,
                  size_t adlen)
{
	snprintf(ad, adlen, "glassbox profile|v1|%s|%s|%s|%lld", tenant, user, id,
	         (long long)version);
}

void prof_key_ad(const char *tenant, const char *user, const char *id, char *ad, size_t adlen)
{
	snprintf(ad, adlen, "glassbox profile key|v1|%s|%s|%s", tenant, user, id);
}

int prof_sealer_new(const unsigned char key[PROF_KEY_BYTES], const char *ad, prof_write_fn out,
                    void *user, struct prof_sealer **sealer)
{
	unsigned char head[PROF_BLOB_MAGIC_BYTES + HEADER_BYTES];
	struct prof_sealer *s;
	int rc;

	*sealer = NULL;
	if (strlen(ad) >= AD_MAX)
		return -EINVAL;
	s = calloc(1, sizeof(*s));
	if (!s)
		return -ENOMEM;
	s->out = out;
	s->user = user;
	s->ad_len = strlen(ad);
	memcpy(s->ad, ad, s->ad_len);
	memcpy(head, PROF_BLOB_MAGIC, PROF_BLOB_MAGIC_BYTES);
	crypto_secretstream_xchacha20poly1305_init_push(&s->st, head + PROF_BLOB_MAGIC_BYTES, key);
	rc = out(user, head, sizeof(head));
	if (rc < 0) {
		wipe_free(s, sizeof(*s));
		return rc;
	}
	*sealer = s;
	return 0;
}

/* Seals the buffered plaintext as one chunk with tag and writes it. */
static int push_chunk(struct prof_sealer *s, unsigned char tag)
{
	unsigned long long clen = 0;
	int rc;

	crypto_secretstream_xchacha20poly1305_push(&s->st, s->cipher + 4, &clen, s->plain, s->fill,
	                                           (const unsigned char *)s->ad, s->ad_len, tag);
	s->cipher[0] = (unsigned char)(clen >> 24);
	s->cipher[1] = (unsigned char)(clen >> 16);
	s->cipher[2] = (unsigned char)(clen >> 8);
	s->cipher[3] = (unsigned char)clen;
	sodium_memzero(s->plain, s->fill);
	s->fill = 0;
	rc = s->out(s->user, s->cipher, 4 + (size_t)clen);
	return rc < 0 ? rc : 0;
}

int prof_sealer_write(struct prof_sealer *s, const void *buf, size_t n)
{
	const unsigned char *p = buf;
	size_t take;
	int rc;

	while (n > 0) {
		take = PROF_CHUNK_BYTES - s->fill;
		if (take > n)
			take = n;
		memcpy(s->plain + s->fill, p, take);
		s->fill += take;
		p += take;
		n -= take;
		if (s->fill == PROF_CHUNK_BYTES) {
			rc = push_chunk(s, 0);
			if (rc < 0)
				return rc;
		}
	}
	return 0;
}

int prof_sealer_finish(struct prof_sealer *s)
{
	int rc = push_chunk(s, crypto_secretstream_xchacha20poly1305_TAG_FINAL);

	wipe_free(s, sizeof(*s));
	return rc;
}

void prof_sealer_free(struct prof_sealer *s)
{
	if (s)
		wipe_free(s, sizeof(*s));
}

/* Reads exactly n bytes: 1, 0 at a clean end before the first byte, or
 * -EBADMSG when the stream ends inside them (or the reader's error). */
static int read_exact(struct prof_unsealer *u, unsigned char *buf, size_t n)
{
	size_t got = 0;
	ssize_t r;

	while (got < n) {
		r = u->in(u->user, buf + got, n - got);
		if (r < 0)
			return (int)r;
		if (r == 0)
			return got == 0 ? 0 : -EBADMSG;
		got += (size_t)r;
	}
	return 1;
}

int prof_unsealer_new(const unsigned char key[PROF_KEY_BYTES], const char *ad, prof_read_fn in,
                      void *user, struct prof_unsealer **out)
{
	unsigned char head[PROF_BLOB_MAGIC_BYTES + HEADER_BYTES];
	struct prof_unsealer *u;
	int rc;

	*out = NULL;
	if (strlen(ad) >= AD_MAX)
		return -EINVAL;
	u = calloc(1, sizeof(*u));
	if (!u)
		return -ENOMEM;
	u->in = in;
	u->user = user;
	u->ad_len = strlen(ad);
	memcpy(u->ad, ad, u->ad_len);
	rc = read_exact(u, head, sizeof(head));
	if (rc == 0 || (rc == 1 && memcmp(head, PROF_BLOB_MAGIC, PROF_BLOB_MAGIC_BYTES) != 0))
		rc = -EBADMSG;
	if (rc == 1 && crypto_secretstream_xchacha20poly1305_init_pull(
	                   &u->st, head + PROF_BLOB_MAGIC_BYTES, key) != 0)
		rc = -EBADMSG;
	if (rc < 0) {
		wipe_free(u, sizeof(*u));
		return rc;
	}
	*out = u;
	return 0;
}

/* Reads and opens the next chunk into u->plain. */
static int pull_chunk(struct prof_unsealer *u)
{
	unsigned char len_be[4];
	unsigned long long plen = 0;
	unsigned char tag = 0;
	uint32_t clen;
	int rc;

	rc = read_exact(u, len_be, sizeof(len_be));
	if (rc == 0)
		return -EBADMSG; /* ended before the final chunk: truncated */
	if (rc < 0)
		return rc;
	clen = (uint32_t)len_be[0] << 24 | (uint32_t)len_be[1] << 16 | (uint32_t)len_be[2] << 8 |
	       len_be[3];
	if (clen < ABYTES || clen > PROF_CHUNK_BYTES + ABYTES)
		return -EBADMSG;
	rc = read_exact(u, u->cipher, clen);
	if (rc == 0)
		return -EBADMSG;
	if (rc < 0)
		return rc;
	if (crypto_secretstream_xchacha20poly1305_pull(&u->st, u->plain, &plen, &tag, u->cipher,
	                                               clen, (const unsigned char *)u->ad,
	                                               u->ad_len) != 0)
		return -EBADMSG;
	u->plain_len = (size_t)plen;
	u->plain_pos = 0;
	if (tag == crypto_secretstream_xchacha20poly1305_TAG_FINAL) {
		unsigned char extra;

		u->final_seen = 1;
		rc = read_exact(u, &extra, 1);
		if (rc != 0)
			return rc < 0 ? rc : -EBADMSG; /* bytes after the final chunk */
	}
	return 0;
}

ssize_t prof_unsealer_read(struct prof_unsealer *u, void *buf, size_t n)
{
	size_t take;
	int rc;

	if (u->failed)
		return -EBADMSG;
	while (u->plain_pos == u->plain_len) {
		if (u->final_seen)
			return 0;
		rc = pull_chunk(u);
		if (rc < 0) {
			u->failed = 1;
			sodium_memzero(u->plain, sizeof(u->plain));
			u->plain_len = u->plain_pos = 0;
			return rc;
		}
	}
	take = u->plain_len - u->plain_pos;
	if (take > n)
		take = n;
	memcpy(buf, u->plain + u->plain_pos, take);
	u->plain_pos += take;
	return (ssize_t)take;
}

void prof_unsealer_free(struct prof_unsealer *u)
{
	if (u)
		wipe_free(u, sizeof(*u));
}

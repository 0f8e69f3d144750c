/*
 * fuzz_profile.c - libFuzzer target for what a sealed profile blob is
 * parsed by: the sealed stream's framing (magic, header, chunk lengths,
 * tags, the end of the stream) and the archive entries it carries (paths,
 * kinds, links, sizes), which are unpacked into a scratch dir.
 *
 * Input: byte 0 picks the layer. Even: the rest is a sealed blob opened
 * with a fixed key (almost everything fails to authenticate; the framing
 * code runs on every shape of length and truncation). Odd: the rest is a
 * tar stream, sealed with that key and then unsealed and unpacked, as a
 * blob that authenticated would be.
 */
#include "profiles/profiles-private.h"

#include <errno.h>
#include <ftw.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

struct mem {
	uint8_t *data;
	size_t len;
	size_t cap;
	size_t pos;
};

static int mem_write(void *user, const void *buf, size_t n)
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

static ssize_t mem_read(void *user, void *buf, size_t n)
{
	struct mem *m = user;
	size_t left = m->len - m->pos;

	if (n > left)
		n = left;
	memcpy(buf, m->data + m->pos, n);
	m->pos += n;
	return (ssize_t)n;
}

static ssize_t unsealer_read(void *user, void *buf, size_t n)
{
	return prof_unsealer_read(user, buf, n);
}

static int rm_entry(const char *path, const struct stat *sb, int flag, struct FTW *ftw)
{
	(void)sb;
	(void)flag;
	(void)ftw;
	return remove(path);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const unsigned char key[PROF_KEY_BYTES] = {1, 2, 3, 4, 5, 6, 7, 8};
	static const char ad[] = "glassbox profile|v1|fuzz|user|id|1";
	struct prof_unsealer *u = NULL;
	struct prof_sealer *s = NULL;
	struct mem m = {0};
	char dir[] = "/tmp/gb-fuzz-profile-XXXXXX";
	char err[512];
	uint8_t buf[4096];

	if (size < 1)
		return 0;
	if ((data[0] & 1) == 0) {
		m.data = (uint8_t *)data + 1;
		m.len = size - 1;
		if (prof_unsealer_new(key, ad, mem_read, &m, &u) == 0) {
			while (prof_unsealer_read(u, buf, sizeof(buf)) > 0)
				;
			prof_unsealer_free(u);
		}
		return 0;
	}
	if (prof_sealer_new(key, ad, mem_write, &m, &s) != 0)
		return 0;
	prof_sealer_write(s, data + 1, size - 1);
	prof_sealer_finish(s);
	if (mkdtemp(dir) && prof_unsealer_new(key, ad, mem_read, &m, &u) == 0) {
		prof_extract(unsealer_read, u, dir, 1u << 20, err, sizeof(err));
		prof_unsealer_free(u);
	}
	nftw(dir, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
	free(m.data);
	return 0;
}

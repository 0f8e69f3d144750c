/*
 * fuzz_profile.c - libFuzzer target for what a sealed profile blob is
 * parsed by: the sealed stream's framing (magic, header, chunk lengths,
 * tags, the end of the stream) and the archive entries it carries (paths,
 * kinds, links, sizes), which are unpacked into a scratch dir.
 *
 * Input: byte 0 picks the layer (mod 4). 0: the rest is a sealed blob
 * opened with a fixed key (almost everything fails to authenticate; the
 * framing code runs on every shape of length and truncation). 1: the
 * rest is a tar stream, sealed with that key and then unsealed and
 * unpacked, as a blob that authenticated would be. 2: the rest is a list
 * of entries, one a line, "K path" with K f (file, the path as content),
 * d (dir), l (symlink to /), h (hard link to the previous path), p (fifo),
 * written as a well-formed tar by libarchive and then unpacked: every
 * path and kind reaches the entry checks. 3: the rest is a wrapped tenant
 * key file as read from an object store (prof_keys_open_tenant_text), opened
 * with the master key of a scratch data dir.
 */
#include "profiles/profiles-private.h"

#include <archive.h>
#include <archive_entry.h>
#include <errno.h>
#include <ftw.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../unit/mem_stream.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

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

static la_ssize_t tar_write(struct archive *a, void *user, const void *buf, size_t n)
{
	(void)a;
	mem_write(user, buf, n);
	return (la_ssize_t)n;
}

/* Builds a tar of the entries listed in text (see above) into out. */
static void entries_to_tar(const char *text, size_t len, struct mem *out)
{
	struct archive *a = archive_write_new();
	char line[1100];
	char prev[1100] = "";
	size_t i = 0, n;

	archive_write_set_format_pax_restricted(a);
	archive_write_open2(a, out, NULL, tar_write, NULL, NULL);
	while (i < len) {
		struct archive_entry *e;
		const char *nl = memchr(text + i, '\n', len - i);

		n = nl ? (size_t)(nl - (text + i)) : len - i;
		if (n >= 3 && n < sizeof(line)) {
			memcpy(line, text + i, n);
			line[n] = '\0';
			e = archive_entry_new();
			archive_entry_set_pathname(e, line + 2);
			archive_entry_set_perm(e, 0644);
			switch (line[0]) {
			case 'd':
				archive_entry_set_filetype(e, AE_IFDIR);
				break;
			case 'l':
				archive_entry_set_filetype(e, AE_IFLNK);
				archive_entry_set_symlink(e, "/");
				break;
			case 'h':
				archive_entry_set_filetype(e, AE_IFREG);
				archive_entry_set_hardlink(e, prev);
				break;
			case 'p':
				archive_entry_set_filetype(e, AE_IFIFO);
				break;
			default:
				archive_entry_set_filetype(e, AE_IFREG);
				archive_entry_set_size(e, (la_int64_t)(n - 2));
			}
			if (archive_write_header(a, e) == ARCHIVE_OK && line[0] == 'f')
				archive_write_data(a, line + 2, n - 2);
			archive_entry_free(e);
			memcpy(prev, line + 2, n - 1);
		}
		i += n + 1;
	}
	archive_write_close(a);
	archive_write_free(a);
}

static char keys_dir[] = "/tmp/gb-fuzz-profile-keys-XXXXXX";

static void remove_keys_dir(void)
{
	nftw(keys_dir, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
}

/* A scratch data dir with a master key, made once, removed at exit. */
static const char *key_data_dir(void)
{
	static int made;

	if (!made) {
		if (!mkdtemp(keys_dir) || prof_keys_init(keys_dir, NULL, 0) != 0)
			abort();
		atexit(remove_keys_dir);
		made = 1;
	}
	return keys_dir;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct mem tar = { 0 };
	static const unsigned char key[PROF_KEY_BYTES] = { 1, 2, 3, 4, 5, 6, 7, 8 };
	static const char ad[] = "glassbox profile|v1|fuzz|user|id|1";
	struct prof_unsealer *u = NULL;
	struct prof_sealer *s = NULL;
	struct mem m = { 0 };
	char dir[] = "/tmp/gb-fuzz-profile-XXXXXX";
	char err[512];
	uint8_t buf[4096];

	if (size < 1)
		return 0;
	if (data[0] % 4 == 3) {
		unsigned char tkey[PROF_KEY_BYTES];

		prof_keys_open_tenant_text(key_data_dir(), "fuzz", "the fuzzed key", data + 1,
		                           size - 1, tkey, err, sizeof(err));
		return 0;
	}
	if (data[0] % 4 == 0) {
		m.data = (uint8_t *)data + 1;
		m.len = size - 1;
		if (prof_unsealer_new(key, ad, mem_read, &m, &u) == 0) {
			while (prof_unsealer_read(u, buf, sizeof(buf)) > 0)
				;
			prof_unsealer_free(u);
		}
		return 0;
	}
	if (data[0] % 4 == 2)
		entries_to_tar((const char *)data + 1, size - 1, &tar);
	if (prof_sealer_new(key, ad, mem_write, &m, &s) != 0) {
		free(tar.data);
		return 0;
	}
	if (tar.data)
		prof_sealer_write(s, tar.data, tar.len);
	else
		prof_sealer_write(s, data + 1, size - 1);
	free(tar.data);
	prof_sealer_finish(s);
	if (mkdtemp(dir) && prof_unsealer_new(key, ad, mem_read, &m, &u) == 0) {
		prof_extract(unsealer_read, u, dir, 1u << 20, err, sizeof(err));
		prof_unsealer_free(u);
	}
	nftw(dir, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
	free(m.data);
	return 0;
}

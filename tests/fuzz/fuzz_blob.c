/*
 * fuzz_blob.c - libFuzzer target for what an object store sends back
 * (blob/s3_xml.c): each input is parsed as an S3 error body and as a
 * ListObjectsV2 page, and its first line is checked as an object key.
 * Checks that every key a listing hands out is a valid key, and that the
 * error code is one word.
 *
 *   CC=clang meson setup build-fuzz -Dfuzz=enabled
 *   ninja -C build-fuzz blob/fuzz_blob && build-fuzz/blob/fuzz_blob -max_total_time=30
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "blob/blob-private.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int on_key(const char *key, size_t size_bytes, void *user)
{
	(void)size_bytes;
	(void)user;
	if (!blob_key_is_valid(key))
		abort();
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char code[64], next[1024], line[BLOB_MAX_KEY_BYTES + 2];
	size_t n, i;

	blob_s3_error_code(data, size, code, sizeof(code));
	for (i = 0; code[i]; i++)
		if (!((code[i] >= 'A' && code[i] <= 'Z') || (code[i] >= 'a' && code[i] <= 'z') ||
		      (code[i] >= '0' && code[i] <= '9')))
			abort();
	blob_s3_list_page("p/", data, size, on_key, NULL, next, sizeof(next));
	if (strlen(next) >= sizeof(next))
		abort();
	for (n = 0; n < size && n < sizeof(line) - 1 && data[n] != '\n'; n++)
		line[n] = (char)data[n];
	line[n] = '\0';
	(void)blob_key_is_valid(line);
	return 0;
}

/*
 * base64.c - strict standard base64 (RFC 4648 alphabet with padding, no
 * whitespace), as CDP sends screenshots, decoded with libsodium.
 */
#include "evidence/evidence.h"

#include <sodium.h>
#include <stdlib.h>

int evid_base64_decode(const char *b64, size_t b64len, unsigned char **out, size_t *outlen)
{
	unsigned char *bin = NULL;
	const char *end = NULL;
	size_t maxlen;
	size_t binlen = 0;
	int rc = 0;

	*out = NULL;
	*outlen = 0;
	if ((!b64 && b64len) || b64len > EVID_MAX_BASE64_BYTES || b64len % 4 != 0) {
		rc = -EVID_EBADB64;
		goto out;
	}
	maxlen = b64len / 4 * 3;
	bin = malloc(maxlen ? maxlen : 1);
	if (!bin) {
		rc = -EVID_ENOMEM;
		goto out;
	}
	if (b64len && (sodium_base642bin(bin, maxlen, b64, b64len, NULL, &binlen, &end,
	                                 sodium_base64_VARIANT_ORIGINAL) != 0 ||
	               end != b64 + b64len)) {
		rc = -EVID_EBADB64;
		goto out;
	}
	*out = bin;
	*outlen = binlen;
	bin = NULL;
out:
	free(bin);
	return rc;
}

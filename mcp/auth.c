/*
 * auth.c - bearer tokens of `glassbox serve` (serve.h).
 *
 * Design note
 * - Tokens are never stored: the config holds their SHA-256. Tokens are
 *   long random strings, so a fast hash is enough; comparisons are
 *   constant-time (sodium_memcmp) and every tenant is compared on every
 *   request, so timing tells nothing about which one matched.
 * - Only the Authorization header carries a token ("Bearer <token>",
 *   scheme case-insensitive); nothing here logs a token.
 */
#include "mcp/serve.h"

#include <sodium.h>
#include <string.h>
#include <strings.h>

#include "common/util.h"

/* Bytes of a token beyond which it is refused unread. */
#define TOKEN_MAX_BYTES 512

/* SHA-256 of the token in an Authorization value; 0, or -1 when the value
 * is not "Bearer <token>". */
static int bearer_hash(const char *authorization, unsigned char out[32])
{
	const char *token;
	size_t len;

	if (!authorization || strncasecmp(authorization, "Bearer ", 7) != 0)
		return -1;
	token = authorization + 7;
	while (*token == ' ')
		token++;
	len = strlen(token);
	while (len && (token[len - 1] == ' ' || token[len - 1] == '\t'))
		len--;
	if (len == 0 || len > TOKEN_MAX_BYTES)
		return -1;
	crypto_hash_sha256(out, (const unsigned char *)token, len);
	return 0;
}

/* See serve.h. */
int mcp_auth_bearer_matches(const char *authorization, const unsigned char hash[32])
{
	unsigned char got[32];

	if (bearer_hash(authorization, got) < 0)
		return 0;
	return sodium_memcmp(got, hash, 32) == 0;
}

/* See serve.h. */
const struct mcp_tenant *mcp_auth_tenant(const struct mcp_serve_config *c,
                                         const char *authorization)
{
	const struct mcp_tenant *found = NULL;
	unsigned char got[32];
	size_t i;

	if (!c || bearer_hash(authorization, got) < 0)
		return NULL;
	for (i = 0; i < c->n_tenants; i++) {
		if (sodium_memcmp(got, c->tenants[i].token_sha256, 32) == 0 && !found)
			found = &c->tenants[i];
	}
	return found;
}

/* See serve.h. */
void mcp_auth_token_hash_hex(const char *token, char hex[65])
{
	unsigned char h[32];

	crypto_hash_sha256(h, (const unsigned char *)token, strlen(token));
	gb_hex(h, sizeof(h), hex);
}

/*
 * auth.c - who may use the web console (console.h): its config, the
 * credentials' tokens, the logins (an HttpOnly SameSite=Strict cookie)
 * and their CSRF tokens.
 *
 * Design note
 * - Tokens are never kept: the config holds their SHA-256, compared in
 *   constant time against every credential on each login. A login's
 *   cookie and CSRF token are 32 random bytes each; nothing here logs one.
 * - Logins are a fixed table (CONSOLE_LOGINS_MAX): a new one past it
 *   replaces the least recently used, so a flood of logins cannot grow
 *   memory. Front thread only.
 */
#include "console/console.h"

#include <sodium.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct console_logins {
	struct console_login slot[CONSOLE_LOGINS_MAX];
	int used[CONSOLE_LOGINS_MAX];
};

/* printf into err; returns -1. */
__attribute__((format(printf, 3, 4))) static int fail(char *err, size_t errlen, const char *fmt,
                                                      ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
	return -1;
}

/* A string member key of o, 1..max-1 printable bytes, into out. */
static int get_name(json_t *o, const char *where, const char *key, char *out, size_t max,
                    int required, char *err, size_t errlen)
{
	json_t *v = json_object_get(o, key);
	const char *s = json_string_value(v);
	size_t i;

	if (!v && !required)
		return 0;
	if (!s || !s[0] || strlen(s) >= max)
		return fail(err, errlen, "%s.%s must be a string of 1 to %zu characters", where,
		            key, max - 1);
	for (i = 0; s[i]; i++) {
		if ((unsigned char)s[i] < 0x20 || s[i] == 0x7f)
			return fail(err, errlen, "%s.%s must not hold control characters", where,
			            key);
	}
	snprintf(out, max, "%s", s);
	return 0;
}

/* Only the keys of allowed (NULL-terminated) in o. */
static int only_keys(json_t *o, const char *where, const char *const *allowed, char *err,
                     size_t errlen)
{
	const char *key;
	json_t *v;
	size_t i;

	json_object_foreach(o, key, v)
	{
		(void)v;
		for (i = 0; allowed[i] && strcmp(allowed[i], key); i++)
			;
		if (!allowed[i])
			return fail(err, errlen, "%s: unknown key \"%.64s\"", where, key);
	}
	return 0;
}

/* One credential: {id, name, tenant, role, token_sha256}. */
static int parse_cred(json_t *o, size_t i, struct console_cred *c, char *err, size_t errlen)
{
	static const char *const keys[] = { "id", "name", "tenant", "role", "token_sha256", NULL };
	const char *role, *hex;
	char where[64];
	size_t bin_len = 0;

	snprintf(where, sizeof(where), "console.credentials[%zu]", i);
	if (!json_is_object(o))
		return fail(err, errlen,
		            "%s must be an object {id, name, tenant, role, token_sha256}", where);
	if (only_keys(o, where, keys, err, errlen) < 0 ||
	    get_name(o, where, "id", c->id, sizeof(c->id), 1, err, errlen) < 0 ||
	    get_name(o, where, "name", c->name, sizeof(c->name), 1, err, errlen) < 0 ||
	    get_name(o, where, "tenant", c->tenant, sizeof(c->tenant), 1, err, errlen) < 0)
		return -1;
	role = json_string_value(json_object_get(o, "role"));
	if (!role || (strcmp(role, "viewer") && strcmp(role, "approver")))
		return fail(err, errlen, "%s.role must be \"viewer\" or \"approver\"", where);
	c->approver = !strcmp(role, "approver");
	hex = json_string_value(json_object_get(o, "token_sha256"));
	if (!hex || strlen(hex) != 64 ||
	    sodium_hex2bin(c->token_sha256, 32, hex, 64, NULL, &bin_len, NULL) != 0 ||
	    bin_len != 32)
		return fail(err, errlen,
		            "%s.token_sha256 must be the SHA-256 of the token as 64 hex digits "
		            "(printf %%s TOKEN | sha256sum)",
		            where);
	return 0;
}

/* See console.h. */
int console_config_parse(json_t *v, struct console_config *c, char *err, size_t errlen)
{
	static const char *const keys[] = { "frames_per_second", "credentials", NULL };
	json_t *creds, *fps, *o;
	size_t i, j;

	memset(c, 0, sizeof(*c));
	c->frames_per_second = CONSOLE_FPS_DEFAULT;
	if (!v)
		return 0;
	if (!json_is_object(v))
		return fail(err, errlen,
		            "console must be an object {frames_per_second, credentials}");
	if (only_keys(v, "console", keys, err, errlen) < 0)
		return -1;
	fps = json_object_get(v, "frames_per_second");
	if (fps) {
		if (!json_is_integer(fps) || json_integer_value(fps) < 1 ||
		    json_integer_value(fps) > CONSOLE_FPS_MAX)
			return fail(err, errlen, "console.frames_per_second must be 1 to %d",
			            CONSOLE_FPS_MAX);
		c->frames_per_second = (int)json_integer_value(fps);
	}
	creds = json_object_get(v, "credentials");
	if (creds && !json_is_array(creds))
		return fail(err, errlen, "console.credentials must be an array");
	if (json_array_size(creds) > CONSOLE_CREDS_MAX)
		return fail(err, errlen, "console.credentials holds at most %d entries",
		            CONSOLE_CREDS_MAX);
	json_array_foreach(creds, i, o)
	{
		if (parse_cred(o, i, &c->creds[i], err, errlen) < 0)
			return -1;
		for (j = 0; j < i; j++) {
			if (!strcmp(c->creds[j].id, c->creds[i].id) ||
			    !strcmp(c->creds[i].id, "admin"))
				return fail(err, errlen,
				            "console.credentials[%zu].id \"%s\" is used "
				            "twice (\"admin\" is the admin token's)",
				            i, c->creds[i].id);
			if (!sodium_memcmp(c->creds[j].token_sha256, c->creds[i].token_sha256, 32))
				return fail(err, errlen,
				            "console.credentials[%zu] has the token of [%zu]: give "
				            "each its own",
				            i, j);
		}
		c->n_creds = i + 1;
	}
	return 0;
}

/* See console.h. */
const struct console_cred *console_cred_for_token(const struct console_config *c,
                                                  const unsigned char admin_sha256[32],
                                                  const char *token)
{
	static const struct console_cred admin = { .id = "admin", .name = "admin", .approver = 1 };
	const struct console_cred *found = NULL;
	unsigned char got[32];
	size_t i, len = token ? strlen(token) : 0;

	if (len == 0 || len > 512)
		return NULL;
	crypto_hash_sha256(got, (const unsigned char *)token, len);
	if (sodium_memcmp(got, admin_sha256, 32) == 0)
		found = &admin;
	for (i = 0; c && i < c->n_creds; i++) {
		if (sodium_memcmp(got, c->creds[i].token_sha256, 32) == 0 && !found)
			found = &c->creds[i];
	}
	sodium_memzero(got, sizeof(got));
	return found;
}

/* See console.h. */
int console_cred_sees(const struct console_cred *cred, const char *tenant)
{
	return cred && (!cred->tenant[0] || (tenant && !strcmp(cred->tenant, tenant)));
}

/* See console.h. */
struct console_logins *console_logins_new(void)
{
	return calloc(1, sizeof(struct console_logins));
}

/* See console.h. */
void console_logins_free(struct console_logins *l)
{
	if (!l)
		return;
	sodium_memzero(l, sizeof(*l));
	free(l);
}

/* See console.h. */
struct console_login *console_login_start(struct console_logins *l, const struct console_cred *cred)
{
	size_t i, pick = 0;
	int64_t oldest = INT64_MAX;

	for (i = 0; i < CONSOLE_LOGINS_MAX; i++) {
		if (!l->used[i]) {
			pick = i;
			break;
		}
		if (l->slot[i].last_used_ms < oldest) {
			oldest = l->slot[i].last_used_ms;
			pick = i;
		}
	}
	memset(&l->slot[pick], 0, sizeof(l->slot[pick]));
	gb_random_hex(l->slot[pick].cookie, 32);
	gb_random_hex(l->slot[pick].csrf, 32);
	l->slot[pick].cred = *cred;
	l->slot[pick].last_used_ms = gb_now_ms();
	l->used[pick] = 1;
	return &l->slot[pick];
}

/* See console.h. */
struct console_login *console_login_find(struct console_logins *l, const char *cookie)
{
	struct console_login *found = NULL;
	int64_t now = gb_now_ms();
	size_t i;

	if (!cookie || strlen(cookie) != 64)
		return NULL;
	for (i = 0; i < CONSOLE_LOGINS_MAX; i++) {
		if (l->used[i] && sodium_memcmp(l->slot[i].cookie, cookie, 64) == 0 && !found)
			found = &l->slot[i];
	}
	if (found && now - found->last_used_ms > CONSOLE_LOGIN_IDLE_MS) {
		console_login_end(l, found);
		found = NULL;
	}
	if (found)
		found->last_used_ms = now;
	return found;
}

/* See console.h. */
void console_login_end(struct console_logins *l, struct console_login *login)
{
	size_t i = (size_t)(login - l->slot);

	if (i < CONSOLE_LOGINS_MAX) {
		sodium_memzero(login, sizeof(*login));
		l->used[i] = 0;
	}
}

/* See console.h. */
int console_csrf_ok(const struct console_login *login, const char *token)
{
	return login && token && strlen(token) == 64 && sodium_memcmp(login->csrf, token, 64) == 0;
}

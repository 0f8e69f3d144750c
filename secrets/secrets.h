/*
 * secrets.h - a tenant's secrets: values an agent may have typed into a
 * page without ever seeing them, each bound to the hosts it may be typed
 * on and to the kinds of field that may receive it.
 *
 * On disk: DATA/tenants/<tenant>/secrets/<NAME>.secret (0600), a JSON
 * object {"name", "version", "hosts", "fields", "created", "created_ms",
 * "sealed"}; "sealed" is the value sealed with the tenant's key
 * (profiles/keys.h) with additional data binding tenant, name, version,
 * hosts and fields: a value copied to another name, another tenant, or
 * whose hosts were widened in the file does not open.
 *
 * Thread-safe: every call reads or writes its own files; a set replaces
 * the file atomically (common/fs.h).
 */
#ifndef GB_SECRETS_H
#define GB_SECRETS_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

#define SECRET_NAME_MAX 64    /* bytes of a name: [A-Za-z0-9_-], starts with a letter */
#define SECRET_VALUE_MAX 4096 /* bytes of a value */
#define SECRET_MAX_HOSTS 16
#define SECRET_HOST_MAX 280 /* one host pattern, as written */
#define SECRET_MAX_FIELDS 8
#define SECRET_FIELD_MAX 24

/* What a secret says about itself: never the value. */
struct secret_meta {
	char name[SECRET_NAME_MAX + 1];
	unsigned version; /* 1 for the first set, + 1 for each later one */
	char hosts[SECRET_MAX_HOSTS][SECRET_HOST_MAX + 1];
	size_t n_hosts;
	char fields[SECRET_MAX_FIELDS][SECRET_FIELD_MAX + 1]; /* field kinds; 0 = the default */
	size_t n_fields;
	int64_t created_ms;
	char created[40]; /* ISO 8601, UTC */
	/* 1: from a --secrets file (secret_env_open), which names no hosts:
	 * it may be typed on any host and into any field (docs/secrets.md) */
	int unbound;
};

/* 1 when name is a valid secret name: 1..SECRET_NAME_MAX of [A-Za-z0-9_-],
 * starting with a letter ("SHOP_PASSWORD"). */
int secret_name_is_valid(const char *name);

/* The field kinds a secret may name in "fields", NULL-terminated:
 * password, username, email, one-time-code, text, textarea, any. */
const char *const *secret_field_kinds(void);

/*
 * Stores value[0..len) as tenant's secret name (borrowed strings),
 * replacing an earlier one (version + 1). hosts: 1..SECRET_MAX_HOSTS
 * egress-style patterns; fields: 0..SECRET_MAX_FIELDS kinds (0: the
 * default, password/username/email/one-time-code). The value must be
 * 1..SECRET_VALUE_MAX bytes of UTF-8 without NUL. Returns 0 with *meta
 * (may be NULL) filled, or a negative errno with what is wrong in err (the
 * value never appears in it).
 */
int secret_set(const char *data_dir, const char *tenant, const char *name, const char *const *hosts,
               size_t n_hosts, const char *const *fields, size_t n_fields,
               const unsigned char *value, size_t len, struct secret_meta *meta, char *err,
               size_t errlen);

/* tenant's secrets, by name: *out a new array of {name, version, hosts,
 * fields, created} (no values). A file that cannot be read is listed as
 * {name, error}. Returns 0 or a negative errno with err. */
int secret_list(const char *data_dir, const char *tenant, json_t **out, char *err, size_t errlen);

/* Deletes tenant's secret name. Returns 0, -ENOENT (no such secret) or
 * another negative errno, with err. */
int secret_delete(const char *data_dir, const char *tenant, const char *name, char *err,
                  size_t errlen);

/*
 * Opens tenant's secret name: *meta filled and *value malloc'd (len
 * bytes, NUL-terminated one byte past). The caller wipes it
 * (secret_value_free). Returns 0, -ENOENT (no such secret), -EBADMSG (the
 * file was altered, copied from another name or tenant, or sealed under
 * another key) or another negative errno, with err (never the value).
 */
int secret_open(const char *data_dir, const char *tenant, const char *name,
                struct secret_meta *meta, unsigned char **value, size_t *len, char *err,
                size_t errlen);

/* Wipes and frees a value from secret_open(); NULL is fine. */
void secret_value_free(unsigned char *value, size_t len);

/* ---- secrets from a dotenv file (env_file.c) ------------------------------ */

/* A dotenv file's secrets, in memory (opaque). */
struct secret_env;

/*
 * Reads the dotenv file at path (NAME=value lines, `#` comments, quoted
 * values) into *out. Refused (a negative errno, with the file and line
 * number in err, never a value): not a regular file, a symlink, writable
 * by others, a name secret_name_is_valid refuses or given twice, an empty
 * value, no entry at all. A file others may read is taken, with what to
 * do in warning ("" otherwise).
 */
int secret_env_load(const char *path, struct secret_env **out, char *warning, size_t warnlen,
                    char *err, size_t errlen);
/* How many secrets env holds (NULL: 0). */
size_t secret_env_count(const struct secret_env *env);
/* 1 when env (may be NULL) holds a secret called name (may be NULL). */
int secret_env_has(const struct secret_env *env, const char *name);
/* The secret name of env (borrowed; may be NULL): *meta filled (unbound,
 * fields "any") and *value a copy (len bytes, NUL-terminated one past)
 * that the caller wipes with secret_value_free. 0, -ENOENT or -ENOMEM. */
int secret_env_open(const struct secret_env *env, const char *name, struct secret_meta *meta,
                    unsigned char **value, size_t *len);
/* Wipes every value and frees env; NULL is fine. */
void secret_env_free(struct secret_env *env);

/* ---- where a secret may go ------------------------------------------------ */

/* 1 when url's host (scheme and port) matches one of meta's hosts
 * (policy_url_matches_host_pattern), or meta is unbound. */
int secret_host_allowed(const struct secret_meta *meta, const char *url);

/* The field as the page's DOM describes it (read in an isolated world). */
struct secret_field {
	const char *tag;          /* "input", "textarea", or another for contenteditable */
	const char *type;         /* input type, lowercase ("password"); "" otherwise */
	const char *autocomplete; /* the attribute as written; may be NULL */
};

/*
 * 1 when meta allows field to receive the secret: one of the field's
 * kinds is in meta's fields (or in the default set when it names none).
 * A field's kinds: password (type=password, autocomplete current-password
 * or new-password), username (autocomplete username), email (type=email,
 * autocomplete email), one-time-code (autocomplete one-time-code), text
 * (any other input), textarea, and any (every field). Otherwise 0 with a
 * reason in why ("a search field (type=search) is not a password,
 * username, email or one-time-code field").
 */
int secret_field_allowed(const struct secret_meta *meta, const struct secret_field *field,
                         char *why, size_t whylen);

#endif

/*
 * blob_config.c - the "object_store" config object (blob.h), and where
 * the S3 credentials come from: files named in the config (a Kubernetes
 * Secret mounted as files) or the AWS_* environment variables, never the
 * config itself. Errors name the key, never a value that may be secret.
 */
#include "blob/blob.h"

#include <errno.h>
#include <sodium.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/fs.h"

#define CRED_FILE_MAX_BYTES 4096u
#define DEFAULT_TIMEOUT_MS 30000

/* Refuses keys of obj not in allowed (NULL-terminated). */
static int only_keys(json_t *obj, const char *where, const char *const *allowed, char *err,
                     size_t errlen)
{
	const char *key;
	json_t *v;
	size_t i;

	json_object_foreach(obj, key, v)
	{
		for (i = 0; allowed[i] && strcmp(allowed[i], key) != 0; i++)
			;
		if (!allowed[i]) {
			gb_set_error(
			    err, errlen,
			    "%s: unknown key \"%.64s\" (credentials go in files named by "
			    "access_key_id_file and secret_access_key_file, or in "
			    "AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY; see docs/deploy.md)",
			    where, key);
			return -1;
		}
	}
	return 0;
}

/* An optional string obj.key of 1..cap-1 bytes into out. */
static int get_str(json_t *obj, const char *where, const char *key, char *out, size_t cap,
                   char *err, size_t errlen)
{
	json_t *v = json_object_get(obj, key);

	if (!v)
		return 0;
	if (!json_is_string(v) || json_string_length(v) == 0 || json_string_length(v) >= cap ||
	    strlen(json_string_value(v)) != json_string_length(v)) {
		gb_set_error(err, errlen, "%s.%s must be a non-empty string of at most %zu bytes",
		             where, key, cap - 1);
		return -1;
	}
	snprintf(out, cap, "%s", json_string_value(v));
	return 0;
}

/* Reads a credential from the file named by obj.key, else from the
 * environment variable env; a trailing newline is dropped. required: an
 * absent credential is an error. */
static int get_secret(json_t *obj, const char *where, const char *key, const char *env,
                      int required, char *out, size_t cap, char *err, size_t errlen)
{
	char path[1024] = "";
	char ferr[512];
	unsigned char *text = NULL;
	const char *val = NULL;
	size_t len = 0;
	int rc = -1;

	if (get_str(obj, where, key, path, sizeof(path), err, errlen) < 0)
		goto out;
	if (path[0]) {
		if (gb_fs_read_file(path, CRED_FILE_MAX_BYTES, &text, &len, ferr, sizeof(ferr)) !=
		    0) {
			gb_set_error(err, errlen, "%s.%s: %s", where, key, ferr);
			goto out;
		}
		while (len && (text[len - 1] == '\n' || text[len - 1] == '\r'))
			text[--len] = '\0';
		val = (const char *)text;
	} else {
		val = getenv(env);
		len = val ? strlen(val) : 0;
	}
	if (!val || len == 0) {
		if (required)
			gb_set_error(err, errlen,
			             "%s: no %s: name a file holding it in %s, or set %s", where,
			             env, key, env);
		rc = required ? -1 : 0;
		goto out;
	}
	if (len >= cap || strlen(val) != len) {
		gb_set_error(err, errlen, "%s: the %s (from %s) is longer than %zu bytes", where,
		             env, path[0] ? key : "the environment", cap - 1);
		goto out;
	}
	memcpy(out, val, len + 1);
	rc = 0;
out:
	if (text) {
		sodium_memzero(text, len);
		free(text);
	}
	return rc;
}

/* The "s3" object. */
static int parse_s3(json_t *s3, const char *where, struct blob_config *c, char *err, size_t errlen)
{
	static const char *const keys[] = { "endpoint",
		                            "bucket",
		                            "region",
		                            "prefix",
		                            "path_style",
		                            "timeout_ms",
		                            "access_key_id_file",
		                            "secret_access_key_file",
		                            "session_token_file",
		                            NULL };
	char w[256];
	json_t *v;
	size_t n;

	snprintf(w, sizeof(w), "%s.s3", where);
	if (!json_is_object(s3) || only_keys(s3, w, keys, err, errlen) < 0)
		goto bad;
	c->kind = BLOB_S3;
	snprintf(c->region, sizeof(c->region), "us-east-1");
	c->timeout_ms = DEFAULT_TIMEOUT_MS;
	if (get_str(s3, w, "endpoint", c->endpoint, sizeof(c->endpoint), err, errlen) < 0 ||
	    get_str(s3, w, "bucket", c->bucket, sizeof(c->bucket), err, errlen) < 0 ||
	    get_str(s3, w, "region", c->region, sizeof(c->region), err, errlen) < 0 ||
	    get_str(s3, w, "prefix", c->prefix, sizeof(c->prefix), err, errlen) < 0)
		return -1;
	if (strncmp(c->endpoint, "http://", 7) != 0 && strncmp(c->endpoint, "https://", 8) != 0) {
		gb_set_error(err, errlen, "%s.endpoint must be an http:// or https:// URL", w);
		return -1;
	}
	if (!c->bucket[0] ||
	    strspn(c->bucket, "abcdefghijklmnopqrstuvwxyz0123456789.-") != strlen(c->bucket)) {
		gb_set_error(err, errlen,
		             "%s.bucket must be a bucket name: lowercase letters, digits, . and -",
		             w);
		return -1;
	}
	n = strlen(c->prefix);
	if (n &&
	    (c->prefix[n - 1] != '/' || c->prefix[0] == '/' ||
	     strspn(c->prefix,
	            "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-/") != n)) {
		gb_set_error(err, errlen,
		             "%s.prefix must end in '/' and hold only A-Z a-z 0-9 . _ - /", w);
		return -1;
	}
	v = json_object_get(s3, "path_style");
	if (v && !json_is_boolean(v)) {
		gb_set_error(err, errlen, "%s.path_style must be true or false", w);
		return -1;
	}
	c->path_style = v ? json_is_true(v) : 0;
	v = json_object_get(s3, "timeout_ms");
	if (v && (!json_is_integer(v) || json_integer_value(v) < 100 ||
	          json_integer_value(v) > 600000)) {
		gb_set_error(err, errlen, "%s.timeout_ms must be an integer from 100 to 600000", w);
		return -1;
	}
	if (v)
		c->timeout_ms = (int)json_integer_value(v);
	if (get_secret(s3, w, "access_key_id_file", "AWS_ACCESS_KEY_ID", 1, c->access_key_id,
	               sizeof(c->access_key_id), err, errlen) < 0 ||
	    get_secret(s3, w, "secret_access_key_file", "AWS_SECRET_ACCESS_KEY", 1,
	               c->secret_access_key, sizeof(c->secret_access_key), err, errlen) < 0 ||
	    get_secret(s3, w, "session_token_file", "AWS_SESSION_TOKEN", 0, c->session_token,
	               sizeof(c->session_token), err, errlen) < 0)
		return -1;
	return 0;
bad:
	if (!json_is_object(s3))
		gb_set_error(err, errlen, "%s must be an object {endpoint, bucket, ...}", w);
	return -1;
}

/* See blob.h. */
int blob_config_parse(json_t *obj, const char *where, struct blob_config *c, char *err,
                      size_t errlen)
{
	static const char *const keys[] = { "dir", "s3", NULL };
	int rc = -1;

	memset(c, 0, sizeof(*c));
	if (!json_is_object(obj) || only_keys(obj, where, keys, err, errlen) < 0) {
		if (!json_is_object(obj))
			gb_set_error(err, errlen,
			             "%s must be an object: {\"dir\": \"/path\"} or {\"s3\": "
			             "{\"endpoint\": ..., \"bucket\": ...}}",
			             where);
		goto out;
	}
	if (!!json_object_get(obj, "dir") == !!json_object_get(obj, "s3")) {
		gb_set_error(err, errlen, "%s must have exactly one of dir and s3", where);
		goto out;
	}
	if (json_object_get(obj, "dir")) {
		c->kind = BLOB_FS;
		if (get_str(obj, where, "dir", c->dir, sizeof(c->dir), err, errlen) < 0)
			goto out;
		if (c->dir[0] != '/') {
			gb_set_error(err, errlen, "%s.dir must be an absolute path", where);
			goto out;
		}
		rc = 0;
		goto out;
	}
	rc = parse_s3(json_object_get(obj, "s3"), where, c, err, errlen);
out:
	if (rc != 0)
		blob_config_wipe(c);
	return rc;
}

/* See blob.h. */
int blob_config_load(const char *path, struct blob_config *c, char *err, size_t errlen)
{
	json_error_t jerr;
	json_t *root = json_load_file(path, JSON_REJECT_DUPLICATES, &jerr);
	char where[1200];
	int rc = -1;

	memset(c, 0, sizeof(*c));
	if (!root) {
		gb_set_error(err, errlen, "cannot read %s: %s (line %d)", path, jerr.text,
		             jerr.line);
		goto out;
	}
	if (!json_object_get(root, "object_store")) {
		gb_set_error(err, errlen,
		             "%s has no object_store: add {\"object_store\": {\"s3\": {...}}} "
		             "(docs/deploy.md)",
		             path);
		goto out;
	}
	snprintf(where, sizeof(where), "object_store of %s", path);
	rc = blob_config_parse(json_object_get(root, "object_store"), where, c, err, errlen);
out:
	json_decref(root);
	return rc;
}

/* See blob.h. */
void blob_config_wipe(struct blob_config *c)
{
	sodium_memzero(c->access_key_id, sizeof(c->access_key_id));
	sodium_memzero(c->secret_access_key, sizeof(c->secret_access_key));
	sodium_memzero(c->session_token, sizeof(c->session_token));
}

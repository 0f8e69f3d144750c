/*
 * blob.c - the blob interface (blob.h): key checks, the handle, and the
 * dispatch to the file system or S3 implementation.
 *
 * DESIGN
 * The handle is immutable once open, so any thread may call it. Every
 * key is checked here, once, before an implementation sees it: keys
 * become path components and URL paths, so no implementation has to
 * escape or second-guess them.
 */
#include "blob/blob-private.h"

#include <errno.h>
#include <sodium.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/fs.h"

/* See blob.h. */
int blob_key_is_valid(const char *key)
{
	size_t n, i, comp = 0;
	int ok = 1;

	n = key ? strlen(key) : 0;
	if (n == 0 || n > BLOB_MAX_KEY_BYTES || key[0] == '/' || key[n - 1] == '/')
		return 0;
	for (i = 0; i <= n && ok; i++) {
		char ch = key[i];

		if (ch == '/' || ch == '\0') {
			/* the component key[comp..i) */
			if (i == comp || (i - comp == 1 && key[comp] == '.') ||
			    (i - comp == 2 && key[comp] == '.' && key[comp + 1] == '.'))
				ok = 0;
			comp = i + 1;
			continue;
		}
		if (!((ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') ||
		      (ch >= '0' && ch <= '9') || ch == '.' || ch == '_' || ch == '-'))
			ok = 0;
	}
	return ok;
}

/* See blob.h. */
int blob_open(const struct blob_config *c, struct blob_store **out, char *err, size_t errlen)
{
	struct blob_store *b;
	int rc;

	*out = NULL;
	b = calloc(1, sizeof(*b));
	if (!b) {
		gb_set_error(err, errlen, "out of memory opening the object store");
		return -ENOMEM;
	}
	b->cfg = *c;
	if (c->kind == BLOB_FS) {
		b->ops = &blob_fs_ops;
		rc = blob_fs_init(b, err, errlen);
	} else if (c->kind == BLOB_S3) {
		b->ops = &blob_s3_ops;
		rc = blob_s3_init(b, err, errlen);
	} else {
		gb_set_error(err, errlen, "the object store has no kind: configure dir or s3");
		rc = -EINVAL;
	}
	if (rc != 0) {
		b->ops = NULL;
		blob_close(b);
		return rc;
	}
	*out = b;
	return 0;
}

/* See blob.h. */
void blob_close(struct blob_store *b)
{
	if (!b)
		return;
	if (b->ops && b->ops->close)
		b->ops->close(b);
	blob_config_wipe(&b->cfg);
	free(b);
}

/* See blob.h. */
const char *blob_describe(const struct blob_store *b)
{
	return b ? b->describe : "(no object store)";
}

/* -EINVAL with the reason when key is not valid, else 0. */
static int check_key(const char *key, char *err, size_t errlen)
{
	if (blob_key_is_valid(key))
		return 0;
	gb_set_error(err, errlen,
	             "\"%.80s\" is not an object key: use up to %u of A-Z a-z 0-9 . _ - and /, "
	             "with no empty, . or .. part",
	             key ? key : "(none)", BLOB_MAX_KEY_BYTES);
	return -EINVAL;
}

/* See blob.h. */
int blob_put(struct blob_store *b, const char *key, const void *data, size_t len, char *err,
             size_t errlen)
{
	int rc = check_key(key, err, errlen);

	return rc ? rc : b->ops->put(b, key, data, len, 0, err, errlen);
}

/* See blob.h. */
int blob_put_replace(struct blob_store *b, const char *key, const void *data, size_t len, char *err,
                     size_t errlen)
{
	int rc = check_key(key, err, errlen);

	return rc ? rc : b->ops->put(b, key, data, len, 1, err, errlen);
}

/* See blob.h. */
int blob_get(struct blob_store *b, const char *key, size_t max_bytes, unsigned char **data,
             size_t *len, char *err, size_t errlen)
{
	int rc = check_key(key, err, errlen);

	*data = NULL;
	*len = 0;
	return rc ? rc : b->ops->get(b, key, max_bytes, data, len, err, errlen);
}

/* See blob.h. */
int blob_delete(struct blob_store *b, const char *key, char *err, size_t errlen)
{
	int rc = check_key(key, err, errlen);

	return rc ? rc : b->ops->del(b, key, err, errlen);
}

/* See blob.h. */
int blob_list(struct blob_store *b, const char *prefix, blob_list_cb cb, void *user, char *err,
              size_t errlen)
{
	size_t i, n = prefix ? strlen(prefix) : 0;

	for (i = 0; i < n; i++) {
		if (prefix[i] != '/' && prefix[i] != '.' && prefix[i] != '_' && prefix[i] != '-' &&
		    !((prefix[i] >= 'a' && prefix[i] <= 'z') ||
		      (prefix[i] >= 'A' && prefix[i] <= 'Z') ||
		      (prefix[i] >= '0' && prefix[i] <= '9'))) {
			gb_set_error(err, errlen, "\"%.80s\" is not a key prefix", prefix);
			return -EINVAL;
		}
	}
	return b->ops->list(b, prefix ? prefix : "", cb, user, err, errlen);
}

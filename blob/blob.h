/*
 * blob.h - one interface to immutable, named byte objects, with two
 * implementations: a directory on a file system (blob_fs.c) and an S3-API
 * bucket (blob_s3.c, libcurl with CURLOPT_AWS_SIGV4).
 *
 * What goes through it: the evidence a replica ships so that the trail
 * can be verified without that replica's disk (evidence/audit_ship.c):
 * artifacts, their metadata records, audit segments and chain heads.
 *
 * Keys are 1..BLOB_MAX_KEY_BYTES of [A-Za-z0-9._-] and '/', with no empty,
 * "." or ".." component and no leading '/': they are used as they are in a
 * path and in a URL. Objects are written whole or not at all; a put never
 * replaces an object unless asked to (blob_put_replace, for a chain head).
 *
 * Threads: a handle may be used from any thread at once (the S3 side
 * makes one curl easy handle a call). Credentials are held in memory
 * only, never logged, never put in an error message.
 */
#ifndef GB_BLOB_H
#define GB_BLOB_H

#include <jansson.h>
#include <stddef.h>

struct blob_store;

#define BLOB_MAX_KEY_BYTES 512u
#define BLOB_EXISTS 1 /* blob_put: an object of that name is there already */

enum blob_kind { BLOB_FS = 1, BLOB_S3 = 2 };

/* Where objects go. Strings are copied by blob_open(). */
struct blob_config {
	enum blob_kind kind;
	char dir[1024]; /* BLOB_FS: the root directory (created 0700) */
	char endpoint
	    [512]; /* BLOB_S3: "https://s3.eu-west-1.amazonaws.com", "http://127.0.0.1:9000" */
	char bucket[64];  /* BLOB_S3 */
	char region[64];  /* BLOB_S3: signs with it ("us-east-1" unless configured) */
	char prefix[128]; /* every key is put under it ("" or ending in '/') */
	int path_style;   /* 1: endpoint/bucket/key (self-hosted stores); 0: bucket.endpoint/key */
	int timeout_ms;   /* one request, connect to last byte */
	char access_key_id[128];
	char secret_access_key[256];
	char session_token[2048]; /* "" unless temporary credentials */
};

/*
 * Reads an "object_store" config object (borrowed) into *c:
 *   {"dir": "/shared/glassbox"}
 *   {"s3": {"endpoint", "bucket", "region", "prefix", "path_style",
 *           "timeout_ms", "access_key_id_file", "secret_access_key_file",
 *           "session_token_file"}}
 * S3 credentials come from the *_file keys (a Kubernetes Secret mounted as
 * files), else from AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY and
 * AWS_SESSION_TOKEN; never from the config itself. where names the object
 * in errors ("object_store of /etc/glassbox.json"). Unknown keys are
 * refused. Returns 0, or -1 with what is wrong in err (never a secret).
 */
int blob_config_parse(json_t *obj, const char *where, struct blob_config *c, char *err,
                      size_t errlen);

/* Reads the "object_store" member of the JSON file path (a `glassbox
 * serve` config) with blob_config_parse(). Returns 0, or -1 with the
 * reason in err ("FILE has no object_store: ..."). */
int blob_config_load(const char *path, struct blob_config *c, char *err, size_t errlen);

/* Wipes the credentials in c. */
void blob_config_wipe(struct blob_config *c);

/* Opens a store (c borrowed, copied). BLOB_FS creates its directory.
 * Returns 0, or a negated errno with the reason in err. */
int blob_open(const struct blob_config *c, struct blob_store **out, char *err, size_t errlen);

/* Frees the handle and wipes its credentials. NULL is a no-op. */
void blob_close(struct blob_store *b);

/* "s3://bucket/prefix at http://host:port" or "dir /x": for messages. */
const char *blob_describe(const struct blob_store *b);

/* 1 when key is a valid key (see above). */
int blob_key_is_valid(const char *key);

/*
 * Stores data[0..len) (borrowed) as key, only if no object of that name
 * exists (S3: If-None-Match: *, after a HEAD, so that a store that does
 * not honour the condition still keeps what it has). Returns 0 when
 * stored, BLOB_EXISTS when an object of that name was there (nothing
 * written), or a negated errno: -EINVAL (bad key), -EACCES (the store
 * refused the credentials), -EIO (unreachable, or another refusal), with
 * the reason in err.
 */
int blob_put(struct blob_store *b, const char *key, const void *data, size_t len, char *err,
             size_t errlen);

/* Stores data as key, replacing what is there. Returns 0 or as blob_put. */
int blob_put_replace(struct blob_store *b, const char *key, const void *data, size_t len, char *err,
                     size_t errlen);

/* Reads object key into a malloc'd buffer (NUL-terminated one byte past
 * *len; the caller frees it) of at most max_bytes. Returns 0, -ENOENT (no
 * such object), -EFBIG (larger than max_bytes), or as blob_put. */
int blob_get(struct blob_store *b, const char *key, size_t max_bytes, unsigned char **data,
             size_t *len, char *err, size_t errlen);

/* Removes object key. Returns 0 when it is gone (S3 says so for a key it
 * never had too), -ENOENT when a store that can tell had no such object,
 * or as blob_put. */
int blob_delete(struct blob_store *b, const char *key, char *err, size_t errlen);

/* Called by blob_list for each key (borrowed; without the store's
 * prefix); a non-zero return stops the listing and is returned. */
typedef int (*blob_list_cb)(const char *key, size_t size_bytes, void *user);

/* Lists the keys that start with prefix (any string; "" for all), in
 * byte order. Returns 0, the callback's non-zero value, or as blob_put. */
int blob_list(struct blob_store *b, const char *prefix, blob_list_cb cb, void *user, char *err,
              size_t errlen);

#endif

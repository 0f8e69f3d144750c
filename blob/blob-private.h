/*
 * blob-private.h - what the two implementations of blob.h provide to
 * blob.c, which checks keys and dispatches.
 */
#ifndef GB_BLOB_PRIVATE_H
#define GB_BLOB_PRIVATE_H

#include "blob/blob.h"

struct blob_ops {
	int (*put)(struct blob_store *b, const char *key, const void *data, size_t len, int replace,
	           char *err, size_t errlen);
	int (*get)(struct blob_store *b, const char *key, size_t max_bytes, unsigned char **data,
	           size_t *len, char *err, size_t errlen);
	int (*del)(struct blob_store *b, const char *key, char *err, size_t errlen);
	int (*list)(struct blob_store *b, const char *prefix, blob_list_cb cb, void *user,
	            char *err, size_t errlen);
	void (*close)(struct blob_store *b);
};

/* The handle: immutable after blob_open(). */
struct blob_store {
	const struct blob_ops *ops;
	struct blob_config cfg;
	char describe[800]; /* fits every config: dir is cut at 780 bytes */
	void *impl;         /* the implementation's own state */
};

extern const struct blob_ops blob_fs_ops;
extern const struct blob_ops blob_s3_ops;

/* s3_xml.c: the S3 error code of an error body ("SignatureDoesNotMatch";
 * "" when there is none or it is not one word) into code. */
void blob_s3_error_code(const unsigned char *data, size_t len, char *code, size_t cap);

/* s3_xml.c: calls cb for each key of one ListObjectsV2 page (data, len:
 * the response body) that starts with prefix and is a valid key after it
 * (passed without it); fills next with the continuation token ("" on the
 * last page). Returns 0, the callback's non-zero value, or -EIO when the
 * body is not a listing. */
int blob_s3_list_page(const char *prefix, const unsigned char *data, size_t len, blob_list_cb cb,
                      void *user, char *next, size_t next_cap);

/* Each implementation's set-up of b (cfg and describe filled): 0 or a
 * negated errno with the reason. */
int blob_fs_init(struct blob_store *b, char *err, size_t errlen);
int blob_s3_init(struct blob_store *b, char *err, size_t errlen);

#endif

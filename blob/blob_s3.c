/*
 * blob_s3.c - the blob interface on an S3-API bucket (blob.h): AWS S3,
 * MinIO, Ceph radosgw, ... spoken with libcurl, each request signed with
 * Signature Version 4 (CURLOPT_AWS_SIGV4).
 *
 * DESIGN
 * One curl easy handle per call, so any thread may call at any time;
 * curl_global_init runs once, the first time a store is opened. A put is
 * a HEAD (an object of that name is kept as it is) and then a PUT with
 * If-None-Match: * (a store that honours it settles a race; 412 means
 * the other writer won). The body's sha256 is sent as
 * x-amz-content-sha256, so the signature covers the bytes. Listings are
 * ListObjectsV2 pages, read by s3_xml.c. Responses are read into buffers
 * with a ceiling. Credentials go to curl only; errors carry the store's
 * error code (SignatureDoesNotMatch, NoSuchBucket, ...) and never the
 * request's headers.
 */
#include "blob/blob-private.h"

#include <curl/curl.h>
#include <errno.h>
#include <pthread.h>
#include <sodium.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/fs.h"
#include "common/util.h"

#define URL_BYTES 2048
#define ERROR_BODY_MAX_BYTES (64u * 1024u)
#define LIST_BODY_MAX_BYTES (8u * 1024u * 1024u)
#define LIST_MAX_PAGES 100000

static pthread_once_t curl_once = PTHREAD_ONCE_INIT;
static int curl_ready;

static void curl_init_once(void)
{
	curl_ready = curl_global_init(CURL_GLOBAL_DEFAULT) == CURLE_OK;
}

/* See blob-private.h. */
int blob_s3_init(struct blob_store *b, char *err, size_t errlen)
{
	pthread_once(&curl_once, curl_init_once);
	if (!curl_ready) {
		gb_set_error(err, errlen, "libcurl could not be initialised");
		return -EIO;
	}
	snprintf(b->describe, sizeof(b->describe), "s3://%s/%s at %s", b->cfg.bucket, b->cfg.prefix,
	         b->cfg.endpoint);
	return 0;
}

/* The URL of key (NULL: the bucket itself, for listings), with query
 * (NULL: none) appended. */
static int object_url(const struct blob_store *b, const char *key, const char *query, char *url,
                      size_t cap)
{
	const char *ep = b->cfg.endpoint;
	const char *host = strstr(ep, "://") + 3;
	size_t n = strlen(ep);
	int rc;

	while (n > 0 && ep[n - 1] == '/')
		n--;
	if (b->cfg.path_style)
		rc = gb_pathf(url, cap, "%.*s/%s/%s%s%s%s", (int)n, ep, b->cfg.bucket,
		              key ? b->cfg.prefix : "", key ? key : "", query ? "?" : "",
		              query ? query : "");
	else
		rc = gb_pathf(url, cap, "%.*s%s.%.*s/%s%s%s%s", (int)(host - ep), ep, b->cfg.bucket,
		              (int)(n - (size_t)(host - ep)), host, key ? b->cfg.prefix : "",
		              key ? key : "", query ? "?" : "", query ? query : "");
	return rc;
}

/* A response body with a ceiling. */
struct body {
	unsigned char *data;
	size_t len, max;
	int too_large;
};

static size_t on_body(char *ptr, size_t size, size_t nmemb, void *user)
{
	struct body *bd = user;
	size_t n = size * nmemb;
	unsigned char *p;

	if (bd->len + n > bd->max) {
		bd->too_large = 1;
		return 0;
	}
	p = realloc(bd->data, bd->len + n + 1);
	if (!p)
		return 0;
	bd->data = p;
	memcpy(bd->data + bd->len, ptr, n);
	bd->len += n;
	bd->data[bd->len] = '\0';
	return n;
}

/* The bytes a PUT sends. */
struct upload {
	const unsigned char *data;
	size_t len, off;
};

static size_t on_read(char *buf, size_t size, size_t nitems, void *user)
{
	struct upload *u = user;
	size_t n = size * nitems;

	if (n > u->len - u->off)
		n = u->len - u->off;
	memcpy(buf, u->data + u->off, n);
	u->off += n;
	return n;
}

/* One request. */
struct req {
	const char *method; /* "GET", "PUT", "HEAD", "DELETE" */
	const char *key;    /* NULL: the bucket */
	const char *query;
	const void *data; /* PUT */
	size_t len;
	int if_none_match;
	size_t max_bytes; /* of the response body */
	struct body body; /* out: malloc'd */
	long status;      /* out: HTTP status, 0 when none came */
};

/* Runs r against the store. Returns 0 when a response came (r->status
 * says which), or -EIO with the reason (unreachable, timeout, too big). */
static int perform(struct blob_store *b, struct req *r, char *err, size_t errlen)
{
	char url[URL_BYTES], sigv4[128], hash_hdr[128], sha[65];
	char *token_hdr = NULL;
	unsigned char digest[32];
	struct curl_slist *hdrs = NULL;
	struct upload up = { r->data, r->len, 0 };
	CURL *c = NULL;
	CURLcode cc;
	int rc = -EIO;

	memset(&r->body, 0, sizeof(r->body));
	r->body.max = r->max_bytes;
	r->status = 0;
	if (object_url(b, r->key, r->query, url, sizeof(url)) < 0) {
		gb_set_error(err, errlen, "the URL of %s in %s is too long", r->key ? r->key : "",
		             b->describe);
		rc = -EINVAL;
		goto out;
	}
	c = curl_easy_init();
	if (!c) {
		gb_set_error(err, errlen, "out of memory starting a request to %s", b->describe);
		rc = -ENOMEM;
		goto out;
	}
	crypto_hash_sha256(digest, r->data ? r->data : (const void *)"", r->data ? r->len : 0);
	gb_hex(digest, sizeof(digest), sha);
	snprintf(hash_hdr, sizeof(hash_hdr), "x-amz-content-sha256: %s", sha);
	hdrs = curl_slist_append(hdrs, hash_hdr);
	if (r->if_none_match)
		hdrs = curl_slist_append(hdrs, "If-None-Match: *");
	if (b->cfg.session_token[0]) {
		size_t n = strlen(b->cfg.session_token) + 32;

		token_hdr = malloc(n);
		if (token_hdr) {
			snprintf(token_hdr, n, "x-amz-security-token: %s", b->cfg.session_token);
			hdrs = curl_slist_append(hdrs, token_hdr);
		}
	}
	snprintf(sigv4, sizeof(sigv4), "aws:amz:%s:s3", b->cfg.region);
	curl_easy_setopt(c, CURLOPT_URL, url);
	curl_easy_setopt(c, CURLOPT_PROTOCOLS_STR, "http,https");
	curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(c, CURLOPT_TIMEOUT_MS, (long)b->cfg.timeout_ms);
	curl_easy_setopt(c, CURLOPT_CONNECTTIMEOUT_MS, (long)b->cfg.timeout_ms);
	curl_easy_setopt(c, CURLOPT_AWS_SIGV4, sigv4);
	curl_easy_setopt(c, CURLOPT_USERNAME, b->cfg.access_key_id);
	curl_easy_setopt(c, CURLOPT_PASSWORD, b->cfg.secret_access_key);
	curl_easy_setopt(c, CURLOPT_HTTPHEADER, hdrs);
	curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, on_body);
	curl_easy_setopt(c, CURLOPT_WRITEDATA, &r->body);
	if (!strcmp(r->method, "PUT")) {
		curl_easy_setopt(c, CURLOPT_UPLOAD, 1L);
		curl_easy_setopt(c, CURLOPT_READFUNCTION, on_read);
		curl_easy_setopt(c, CURLOPT_READDATA, &up);
		curl_easy_setopt(c, CURLOPT_INFILESIZE_LARGE, (curl_off_t)r->len);
	} else if (!strcmp(r->method, "HEAD")) {
		curl_easy_setopt(c, CURLOPT_NOBODY, 1L);
	} else if (!strcmp(r->method, "DELETE")) {
		curl_easy_setopt(c, CURLOPT_CUSTOMREQUEST, "DELETE");
	}
	cc = curl_easy_perform(c);
	if (cc != CURLE_OK) {
		if (r->body.too_large) {
			gb_set_error(err, errlen,
			             "%s in %s is larger than the %zu bytes allowed here",
			             r->key ? r->key : "the listing", b->describe, r->max_bytes);
			rc = -EFBIG;
		} else {
			gb_set_error(err, errlen,
			             "cannot reach the object store %s: %s; check that it runs and "
			             "that object_store.s3.endpoint names it",
			             b->describe, curl_easy_strerror(cc));
		}
		goto out;
	}
	curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &r->status);
	rc = 0;
out:
	curl_easy_cleanup(c);
	curl_slist_free_all(hdrs);
	if (token_hdr) {
		sodium_memzero(token_hdr, strlen(token_hdr));
		free(token_hdr);
	}
	if (rc != 0) {
		free(r->body.data);
		r->body.data = NULL;
	}
	return rc;
}

/* Turns a refusal (status >= 300) into a negated errno and a message. */
static int refusal(const struct blob_store *b, const struct req *r, char *err, size_t errlen)
{
	char code[64];

	blob_s3_error_code(r->body.data, r->body.len, code, sizeof(code));
	if (r->status == 404 && r->key && strcmp(code, "NoSuchBucket") != 0) {
		gb_set_error(err, errlen, "no object %s in %s", r->key, b->describe);
		return -ENOENT;
	}
	if (r->status == 401 || r->status == 403) {
		gb_set_error(err, errlen,
		             "the object store %s refused the request (HTTP %ld%s%s): check the "
		             "access key id and secret (object_store.s3.*_file or AWS_*), the "
		             "region (%s) and that they may use the bucket",
		             b->describe, r->status, code[0] ? " " : "", code, b->cfg.region);
		return -EACCES;
	}
	gb_set_error(err, errlen, "the object store %s answered %s %s with HTTP %ld%s%s",
	             b->describe, r->method, r->key ? r->key : "(bucket)", r->status,
	             code[0] ? " " : "", code);
	return -EIO;
}

static int s3_put(struct blob_store *b, const char *key, const void *data, size_t len, int replace,
                  char *err, size_t errlen)
{
	struct req r;
	int rc;

	if (!replace) {
		memset(&r, 0, sizeof(r));
		r.method = "HEAD";
		r.key = key;
		r.max_bytes = ERROR_BODY_MAX_BYTES;
		rc = perform(b, &r, err, errlen);
		free(r.body.data);
		if (rc != 0)
			return rc;
		if (r.status == 200)
			return BLOB_EXISTS;
		if (r.status != 404)
			return refusal(b, &r, err, errlen);
	}
	memset(&r, 0, sizeof(r));
	r.method = "PUT";
	r.key = key;
	r.data = data;
	r.len = len;
	r.if_none_match = !replace;
	r.max_bytes = ERROR_BODY_MAX_BYTES;
	rc = perform(b, &r, err, errlen);
	if (rc != 0)
		goto out;
	if (r.status == 412 && !replace)
		rc = BLOB_EXISTS;
	else if (r.status < 200 || r.status >= 300)
		rc = refusal(b, &r, err, errlen);
out:
	free(r.body.data);
	return rc;
}

static int s3_get(struct blob_store *b, const char *key, size_t max_bytes, unsigned char **data,
                  size_t *len, char *err, size_t errlen)
{
	struct req r;
	int rc;

	memset(&r, 0, sizeof(r));
	r.method = "GET";
	r.key = key;
	r.max_bytes = max_bytes < ERROR_BODY_MAX_BYTES ? ERROR_BODY_MAX_BYTES : max_bytes;
	rc = perform(b, &r, err, errlen);
	if (rc != 0)
		goto out;
	if (r.status != 200) {
		rc = refusal(b, &r, err, errlen);
		goto out;
	}
	if (r.body.len > max_bytes) {
		gb_set_error(err, errlen, "object %s is larger than the %zu bytes allowed", key,
		             max_bytes);
		rc = -EFBIG;
		goto out;
	}
	if (!r.body.data) {
		r.body.data = malloc(1);
		if (!r.body.data) {
			rc = -ENOMEM;
			goto out;
		}
		r.body.data[0] = '\0';
	}
	*data = r.body.data;
	*len = r.body.len;
	r.body.data = NULL;
out:
	free(r.body.data);
	return rc;
}

static int s3_del(struct blob_store *b, const char *key, char *err, size_t errlen)
{
	struct req r;
	int rc;

	memset(&r, 0, sizeof(r));
	r.method = "DELETE";
	r.key = key;
	r.max_bytes = ERROR_BODY_MAX_BYTES;
	rc = perform(b, &r, err, errlen);
	if (rc == 0 && (r.status < 200 || r.status >= 300))
		rc = refusal(b, &r, err, errlen);
	free(r.body.data);
	return rc;
}

static int s3_list(struct blob_store *b, const char *prefix, blob_list_cb cb, void *user, char *err,
                   size_t errlen)
{
	char full[BLOB_MAX_KEY_BYTES + 256], query[3 * (BLOB_MAX_KEY_BYTES + 1024) + 64];
	char token[1024] = "";
	char *enc_prefix = NULL, *enc_token = NULL;
	struct req r;
	CURL *c = curl_easy_init();
	int pages = 0;
	int rc = 0;

	memset(&r, 0, sizeof(r));
	if (!c)
		return -ENOMEM;
	snprintf(full, sizeof(full), "%s%s", b->cfg.prefix, prefix);
	enc_prefix = curl_easy_escape(c, full, 0);
	if (!enc_prefix) {
		rc = -ENOMEM;
		goto out;
	}
	do {
		/* parameters in canonical (sorted) order, values encoded as SigV4 wants */
		curl_free(enc_token);
		enc_token = token[0] ? curl_easy_escape(c, token, 0) : NULL;
		snprintf(query, sizeof(query), "%s%s%slist-type=2&prefix=%s",
		         enc_token ? "continuation-token=" : "", enc_token ? enc_token : "",
		         enc_token ? "&" : "", enc_prefix);
		memset(&r, 0, sizeof(r));
		r.method = "GET";
		r.query = query;
		r.max_bytes = LIST_BODY_MAX_BYTES;
		rc = perform(b, &r, err, errlen);
		if (rc != 0)
			goto out;
		if (r.status != 200) {
			rc = refusal(b, &r, err, errlen);
			goto out;
		}
		rc = blob_s3_list_page(b->cfg.prefix, r.body.data, r.body.len, cb, user, token,
		                       sizeof(token));
		if (rc == -EIO)
			gb_set_error(err, errlen,
			             "the object store %s sent a listing that is not one",
			             b->describe);
		free(r.body.data);
		r.body.data = NULL;
	} while (rc == 0 && token[0] && ++pages < LIST_MAX_PAGES);
out:
	free(r.body.data);
	curl_free(enc_prefix);
	curl_free(enc_token);
	curl_easy_cleanup(c);
	return rc;
}

const struct blob_ops blob_s3_ops = {
	.put = s3_put,
	.get = s3_get,
	.del = s3_del,
	.list = s3_list,
	.close = NULL,
};

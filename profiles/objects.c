/*
 * objects.c - sealed profiles in the object store (blob/blob.h), so that
 * a profile sealed on one replica opens on any other.
 *
 * DESIGN
 * When the process has an object store (prof_use_object_store(), set by
 * `glassbox serve` with object_store configured), a save puts the sealed
 * bytes as
 *
 *   tenants/<t>/profiles/<id>/<sha256>     the sealed stream, named by
 *                                          the SHA-256 of its bytes
 *   tenants/<t>/keys/tenant.key            the tenant key, wrapped by the
 *                                          master key (a key file's bytes)
 *
 * with If-None-Match (a put never replaces), and the commit in the
 * metadata (meta.c: PostgreSQL when replicas share one) names the digest.
 * An open reads the object the metadata names and checks its digest
 * before it unseals a byte; the stream's own authentication (seal.c)
 * then binds it to tenant, user, profile and version. A profile whose
 * metadata names no digest is a file of the data dir (lease.c), as on
 * one machine.
 *
 * After each commit the versions before the previous one are removed
 * (prof_object_prune): the previous one stays, so that a replica that
 * read the metadata just before the commit still finds what it names.
 * Deleting or purging a profile removes all of its objects.
 *
 * The tenant key a profile's data key is wrapped by must be the same on
 * every replica: the first replica that needs one publishes its own
 * wrapped key file (created if missing), and every replica then opens the
 * published one with the master key they share (one Secret). A replica's
 * own key file stays what its other sealed stores (secrets) use.
 *
 * Threads: the handle is set before sessions start and cleared after they
 * end; blob handles may be used from any thread.
 */
#include "profiles/profiles-private.h"

#include "blob/blob.h"
#include "common/fs.h"
#include "common/log.h"
#include "common/util.h"

#include <errno.h>
#include <sodium.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define KEY_OBJECT_MAX_BYTES 4096u

/* Set before sessions start, cleared after they end (see above). */
static struct blob_store *objects;

void prof_use_object_store(struct blob_store *b)
{
	objects = b;
}

struct blob_store *prof_object_store(void)
{
	return objects;
}

/* The object key of a profile's sealed bytes. */
static int sealed_key(const char *tenant, const char *id, const char *sha256, char *key,
                      size_t keylen)
{
	int n = snprintf(key, keylen, "tenants/%s/profiles/%s/%s", tenant, id, sha256);

	return n < 0 || (size_t)n >= keylen ? -1 : 0;
}

/* The tenant key from the object store, publishing this data dir's when
 * the store has none yet. */
static int shared_tenant_key(const char *data_dir, const char *tenant,
                             unsigned char key[PROF_KEY_BYTES], char *err, size_t errlen)
{
	char okey[BLOB_MAX_KEY_BYTES + 1];
	char where[BLOB_MAX_KEY_BYTES + 900];
	unsigned char *text = NULL;
	size_t len = 0;
	int rc;

	snprintf(okey, sizeof(okey), "tenants/%s/keys/tenant.key", tenant);
	snprintf(where, sizeof(where), "the key of tenant %s in the object store (%s in %s)",
	         tenant, okey, blob_describe(objects));
	rc = blob_get(objects, okey, KEY_OBJECT_MAX_BYTES, &text, &len, err, errlen);
	if (rc == -ENOENT) {
		rc = prof_keys_tenant_file(data_dir, tenant, &text, &len, err, errlen);
		if (rc == 0)
			rc = blob_put(objects, okey, text, len, err, errlen);
		free(text);
		text = NULL;
		/* ours, or the one another replica put first */
		if (rc == 0 || rc == BLOB_EXISTS)
			rc =
			    blob_get(objects, okey, KEY_OBJECT_MAX_BYTES, &text, &len, err, errlen);
	}
	if (rc == 0)
		rc = prof_keys_open_tenant_text(data_dir, tenant, where, text, len, key, err,
		                                errlen);
	if (rc == -EBADMSG && err && strlen(err) + 1 < errlen)
		snprintf(err + strlen(err), errlen - strlen(err),
		         " (every replica must have the same master key: one Secret)");
	free(text);
	return rc;
}

int prof_tenant_key(const char *data_dir, const char *tenant, unsigned char key[PROF_KEY_BYTES],
                    char *err, size_t errlen)
{
	if (err && errlen)
		err[0] = '\0';
	if (!objects)
		return prof_keys_tenant_key(data_dir, tenant, key, err, errlen);
	return shared_tenant_key(data_dir, tenant, key, err, errlen);
}

int prof_object_put(const struct prof_info *p, int64_t version, const unsigned char *data,
                    size_t len, char sha256[65], char *err, size_t errlen)
{
	unsigned char digest[crypto_hash_sha256_BYTES];
	char key[BLOB_MAX_KEY_BYTES + 1];
	int rc;

	crypto_hash_sha256(digest, data, len);
	gb_hex(digest, sizeof(digest), sha256);
	if (sealed_key(p->tenant, p->id, sha256, key, sizeof(key)) < 0) {
		gb_set_error(err, errlen, "profile %s has no valid object key", p->name);
		return -PROF_EINVAL;
	}
	rc = blob_put(objects, key, data, len, err, errlen);
	if (rc == BLOB_EXISTS)
		rc = 0; /* the same bytes: the name is their digest */
	if (rc < 0) {
		/* err says what failed with the store and what to check */
		size_t n = err ? strlen(err) : 0;

		if (err && n + 1 < errlen)
			snprintf(err + n, errlen - n,
			         "; version %lld of profile %s of user %s was not saved, the "
			         "last good version stays",
			         (long long)version, p->name, p->user);
		return -PROF_EIO;
	}
	return 0;
}

int prof_object_reachable(const struct prof_info *p, char *err, size_t errlen)
{
	if (!p->sealed_sha256[0] || objects)
		return 0;
	gb_set_error(err, errlen,
	             "version %lld of profile %s of user %s is in the object store, and this "
	             "glassbox has none: run it with the object_store of the replicas' serve "
	             "config",
	             (long long)p->version, p->name, p->user);
	return -PROF_EIO;
}

int prof_object_get(const struct prof_info *p, unsigned char **data, size_t *len, char *err,
                    size_t errlen)
{
	unsigned char digest[crypto_hash_sha256_BYTES];
	char hex[65];
	char key[BLOB_MAX_KEY_BYTES + 1];
	char why[1024] = "";
	int rc;

	*data = NULL;
	*len = 0;
	rc = prof_object_reachable(p, err, errlen);
	if (rc < 0)
		return rc;
	if (strlen(p->sealed_sha256) != 64 ||
	    sealed_key(p->tenant, p->id, p->sealed_sha256, key, sizeof(key)) < 0 ||
	    !blob_key_is_valid(key)) {
		gb_set_error(err, errlen,
		             "the metadata of profile %s of user %s names no valid object (it "
		             "was altered): delete the profile",
		             p->name, p->user);
		return -PROF_EBADMSG;
	}
	rc = blob_get(objects, key, PROF_MAX_OBJECT_BYTES, data, len, why, sizeof(why));
	if (rc == -ENOENT) {
		gb_set_error(err, errlen,
		             "version %lld of profile %s of user %s is missing from the object "
		             "store (%s in %s): restore that object from a backup, or delete the "
		             "profile",
		             (long long)p->version, p->name, p->user, key, blob_describe(objects));
		return -PROF_EBADMSG;
	}
	if (rc < 0) {
		gb_set_error(err, errlen, "cannot read version %lld of profile %s of user %s: %s",
		             (long long)p->version, p->name, p->user, why);
		return rc == -EFBIG ? -PROF_EBADMSG : -PROF_EIO;
	}
	crypto_hash_sha256(digest, *data, *len);
	gb_hex(digest, sizeof(digest), hex);
	if (sodium_memcmp(hex, p->sealed_sha256, 64) != 0) {
		gb_set_error(
		    err, errlen,
		    "version %lld of profile %s of user %s does not open: its sealed object "
		    "%s in %s was altered (its SHA-256 is not the one the metadata records); "
		    "it is left as it is (restore it from a backup, or delete the profile)",
		    (long long)p->version, p->name, p->user, key, blob_describe(objects));
		free(*data);
		*data = NULL;
		*len = 0;
		return -PROF_EBADMSG;
	}
	return 0;
}

/* The keys blob_list finds under one profile's prefix. */
struct version_keys {
	char (*key)[BLOB_MAX_KEY_BYTES + 1];
	size_t n, cap;
};

/* blob_list callback: keeps a copy of key. */
static int add_version_key(const char *key, size_t size_bytes, void *user)
{
	struct version_keys *k = user;

	(void)size_bytes;
	if (k->n == k->cap) {
		size_t cap = k->cap ? k->cap * 2 : 8;
		void *grown = realloc(k->key, cap * sizeof(*k->key));

		if (!grown)
			return -ENOMEM;
		k->key = grown;
		k->cap = cap;
	}
	snprintf(k->key[k->n++], sizeof(k->key[0]), "%s", key);
	return 0;
}

/* 1 when the last part of key is digest (a non-empty one). */
static int names_digest(const char *key, const char *digest)
{
	const char *last = strrchr(key, '/');

	return digest && digest[0] && last && !strcmp(last + 1, digest);
}

void prof_object_prune(const char *tenant, const char *id, const char *keep_a, const char *keep_b)
{
	struct version_keys k = { 0 };
	char prefix[BLOB_MAX_KEY_BYTES + 1];
	char err[1024] = "";
	size_t i;
	int n;

	if (!objects)
		return;
	n = snprintf(prefix, sizeof(prefix), "tenants/%s/profiles/%s/", tenant, id);
	if (n < 0 || (size_t)n >= sizeof(prefix))
		return;
	if (blob_list(objects, prefix, add_version_key, &k, err, sizeof(err)) != 0) {
		GB_LOGW("profiles",
		        "cannot list the versions of profile %s (tenant %s) to remove "
		        "the superseded ones: %s",
		        id, tenant, err);
		goto out;
	}
	for (i = 0; i < k.n; i++) {
		if (names_digest(k.key[i], keep_a) || names_digest(k.key[i], keep_b))
			continue;
		if (blob_delete(objects, k.key[i], err, sizeof(err)) < 0)
			GB_LOGW("profiles", "cannot remove superseded version %s: %s", k.key[i],
			        err);
	}
out:
	free(k.key);
}

/* The tenant of a key "tenants/<t>/keys/tenant.key" into tenant, or 0. */
static int tenant_key_object(const char *key, char *tenant, size_t cap)
{
	static const char head[] = "tenants/", tail[] = "/keys/tenant.key";
	size_t n = strlen(key);

	if (n <= sizeof(head) - 1 + sizeof(tail) - 1 || strncmp(key, head, sizeof(head) - 1) ||
	    strcmp(key + n - (sizeof(tail) - 1), tail))
		return 0;
	n -= sizeof(head) - 1 + sizeof(tail) - 1;
	if (n >= cap || memchr(key + sizeof(head) - 1, '/', n))
		return 0;
	memcpy(tenant, key + sizeof(head) - 1, n);
	tenant[n] = '\0';
	return 1;
}

int prof_object_rewrap_tenant_keys(const char *data_dir, size_t *n, char *err, size_t errlen)
{
	struct version_keys k = { 0 };
	char tenant[BLOB_MAX_KEY_BYTES + 1];
	char where[BLOB_MAX_KEY_BYTES + 900];
	unsigned char *text = NULL;
	char *rewrapped = NULL;
	size_t i, len = 0;
	int rc;

	*n = 0;
	if (!objects)
		return 0;
	rc = blob_list(objects, "tenants/", add_version_key, &k, err, errlen);
	for (i = 0; rc == 0 && i < k.n; i++) {
		if (!tenant_key_object(k.key[i], tenant, sizeof(tenant)))
			continue;
		snprintf(where, sizeof(where),
		         "the key of tenant %s in the object store (%s in %s)", tenant, k.key[i],
		         blob_describe(objects));
		rc = blob_get(objects, k.key[i], KEY_OBJECT_MAX_BYTES, &text, &len, err, errlen);
		if (rc == 0)
			rc = prof_keys_rewrap_text(data_dir, tenant, where, text, len, &rewrapped,
			                           err, errlen);
		if (rc == 0 && rewrapped) {
			rc = blob_put_replace(objects, k.key[i], rewrapped, strlen(rewrapped), err,
			                      errlen);
			if (rc == 0)
				(*n)++;
		}
		free(text);
		text = NULL;
		free(rewrapped);
		rewrapped = NULL;
	}
	free(k.key);
	if (rc == -EBADMSG || rc == -ENOENT)
		return -PROF_EBADMSG;
	return rc < 0 ? -PROF_EIO : 0;
}

/*
 * keys.c - the audit signing key pair: DATA/keys/audit.key (the Ed25519
 * seed, JSON, 0600, in a 0700 dir) and DATA/keys/audit.pub (the public
 * key reviewers verify with).
 *
 * The pair is created on first use: the seed is written to a temp file
 * and linked into place only if no key exists yet, so two processes
 * starting at once agree on one pair (the loser reads the winner's). The
 * public file is derived from the secret one and rewritten when it is
 * missing or does not match. A key file that others can read is refused:
 * a leaked audit key lets anyone forge the trail.
 */
#include "evidence/audit.h"
#include "evidence/evidence-private.h"
#include "evidence/evidence.h"

#include "common/util.h"

#include <errno.h>
#include <fcntl.h>
#include <sodium.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define PATH_BYTES 4096
#define KEY_FILE_MAX_BYTES 4096u
#define B64_KEY_BYTES 100 /* base64 of 32 bytes is 44 characters */

struct key_paths {
	char dir[PATH_BYTES];
	char secret[PATH_BYTES];
	char pub[PATH_BYTES];
};

void evid_key_id(const unsigned char pk[32], char key_id[17])
{
	unsigned char digest[crypto_hash_sha256_BYTES];

	crypto_hash_sha256(digest, pk, 32);
	gb_hex(digest, 8, key_id);
}

/* Fills the paths of the key files under data_dir. */
static int key_paths(const char *data_dir, struct key_paths *p, char *err, size_t errlen)
{
	int n1 = snprintf(p->dir, sizeof(p->dir), "%s/keys", data_dir);
	int n2 = snprintf(p->secret, sizeof(p->secret), "%s/keys/audit.key", data_dir);
	int n3 = snprintf(p->pub, sizeof(p->pub), "%s/keys/audit.pub", data_dir);
	int rc = 0;

	if (n1 < 0 || n2 < 0 || n3 < 0 || (size_t)n2 >= sizeof(p->secret) ||
	    (size_t)n3 >= sizeof(p->pub)) {
		gb_set_error(err, errlen, "the data dir path %s is too long: choose a shorter one",
		             data_dir);
		rc = -EVID_EINVAL;
	}
	return rc;
}

/* Decodes a base64 member of obj that must hold exactly want bytes. */
static int b64_member(json_t *obj, const char *name, unsigned char *out, size_t want)
{
	const char *text = json_string_value(json_object_get(obj, name));
	size_t got = 0;
	int rc = -1;

	if (!text)
		goto out;
	if (sodium_base642bin(out, want, text, strlen(text), NULL, &got, NULL,
	                      sodium_base64_VARIANT_ORIGINAL) != 0)
		goto out;
	if (got != want)
		goto out;
	rc = 0;
out:
	return rc;
}

/* The public file's JSON text (malloc'd). */
static char *public_text(const unsigned char pk[32])
{
	char b64[B64_KEY_BYTES];
	char key_id[17];
	json_t *doc;
	char *text = NULL;

	sodium_bin2base64(b64, sizeof(b64), pk, 32, sodium_base64_VARIANT_ORIGINAL);
	evid_key_id(pk, key_id);
	doc = json_pack("{s:s, s:s, s:s, s:s}", "type", "ed25519", "use", "glassbox audit trail",
	                "public_key", b64, "key_id", key_id);
	if (doc)
		text = json_dumps(doc, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
	json_decref(doc);
	return text;
}

/* Writes text atomically to path (mode) in dir. */
static int write_file(const char *dir, const char *path, const char *text, mode_t mode, char *err,
                      size_t errlen)
{
	char tmp[PATH_BYTES];
	int rc;

	rc = gb_fs_write_temp(dir, text, strlen(text), tmp, sizeof(tmp), err, errlen);
	if (rc != 0)
		goto out;
	if (chmod(tmp, mode) != 0) {
		gb_set_io_error(err, errlen, "set the mode of", tmp, errno);
		unlink(tmp);
		rc = -EVID_EIO;
		goto out;
	}
	rc = gb_fs_publish_replace(tmp, path, dir, err, errlen);
out:
	return rc;
}

/* Makes audit.pub hold pk unless it already does. */
static int ensure_public(const struct key_paths *p, const unsigned char pk[32], char *err,
                         size_t errlen)
{
	unsigned char *old = NULL;
	size_t oldlen = 0;
	unsigned char have[32];
	json_t *doc = NULL;
	char *text = NULL;
	int rc = 0;

	if (gb_fs_read_file(p->pub, KEY_FILE_MAX_BYTES, &old, &oldlen, NULL, 0) == 0) {
		doc = json_loadb((const char *)old, oldlen, 0, NULL);
		if (doc && b64_member(doc, "public_key", have, sizeof(have)) == 0 &&
		    memcmp(have, pk, 32) == 0)
			goto out;
	}
	text = public_text(pk);
	if (!text) {
		gb_set_error(err, errlen, "out of memory writing %s", p->pub);
		rc = -EVID_ENOMEM;
		goto out;
	}
	rc = write_file(p->dir, p->pub, text, 0644, err, errlen);
out:
	free(text);
	json_decref(doc);
	free(old);
	return rc;
}

/* Reads the secret key file into kp. -EVID_ENOENT when there is none. */
static int load_secret(const struct key_paths *p, struct evid_keypair *kp, char *err, size_t errlen)
{
	unsigned char *text = NULL;
	size_t len = 0;
	unsigned char seed[32];
	struct stat st;
	json_t *doc = NULL;
	int rc;

	if (lstat(p->secret, &st) != 0) {
		rc = errno == ENOENT ? -EVID_ENOENT : -EVID_EIO;
		gb_set_io_error(err, errlen, "inspect", p->secret, errno);
		goto out;
	}
	if (S_ISREG(st.st_mode) && (st.st_mode & 077) != 0) {
		gb_set_error(
		    err, errlen,
		    "the audit key %s can be read by other users (mode %04o): "
		    "run chmod 600 on it, and treat the key as leaked if others had access "
		    "(move it aside to create a new one)",
		    p->secret, (unsigned)(st.st_mode & 07777));
		rc = -EVID_EIO;
		goto out;
	}
	rc = gb_fs_read_file(p->secret, KEY_FILE_MAX_BYTES, &text, &len, err, errlen);
	if (rc != 0)
		goto out;
	doc = json_loadb((const char *)text, len, 0, NULL);
	if (!doc || !json_is_string(json_object_get(doc, "type")) ||
	    strcmp(json_string_value(json_object_get(doc, "type")), "ed25519") != 0 ||
	    b64_member(doc, "seed", seed, sizeof(seed)) != 0) {
		gb_set_error(err, errlen,
		             "%s is not a glassbox audit key (expected JSON with type "
		             "\"ed25519\" and a base64 seed of 32 bytes): restore it from a backup",
		             p->secret);
		rc = -EVID_EIO;
		goto out;
	}
	crypto_sign_seed_keypair(kp->pk, kp->sk, seed);
	evid_key_id(kp->pk, kp->key_id);
out:
	sodium_memzero(seed, sizeof(seed));
	if (text)
		sodium_memzero(text, len);
	free(text);
	json_decref(doc);
	return rc;
}

/* Creates a new secret key file unless one appeared meanwhile. */
static int create_secret(const struct key_paths *p, char *err, size_t errlen)
{
	unsigned char seed[32];
	char b64[B64_KEY_BYTES];
	char tmp[PATH_BYTES];
	char *text = NULL;
	json_t *doc = NULL;
	int rc;

	randombytes_buf(seed, sizeof(seed));
	sodium_bin2base64(b64, sizeof(b64), seed, sizeof(seed), sodium_base64_VARIANT_ORIGINAL);
	doc = json_pack("{s:s, s:s, s:s}", "type", "ed25519", "use", "glassbox audit trail", "seed",
	                b64);
	text = doc ? json_dumps(doc, JSON_INDENT(2) | JSON_PRESERVE_ORDER) : NULL;
	if (!text) {
		gb_set_error(err, errlen, "out of memory creating the audit key");
		rc = -EVID_ENOMEM;
		goto out;
	}
	rc = gb_fs_write_temp(p->dir, text, strlen(text), tmp, sizeof(tmp), err, errlen);
	if (rc != 0)
		goto out;
	rc = gb_fs_publish_new(tmp, p->secret, p->dir, err, errlen);
	if (rc == 1) { /* another process created it first: use theirs */
		unlink(tmp);
		rc = 0;
	}
out:
	sodium_memzero(seed, sizeof(seed));
	sodium_memzero(b64, sizeof(b64));
	if (text)
		sodium_memzero(text, strlen(text));
	free(text);
	json_decref(doc);
	return rc;
}

int evid_keys_load_or_create(const char *data_dir, struct evid_keypair *kp, char *err,
                             size_t errlen)
{
	struct key_paths p;
	int rc;

	memset(kp, 0, sizeof(*kp));
	if (sodium_init() < 0) {
		gb_set_error(err, errlen, "libsodium could not be initialised");
		rc = -EVID_EIO;
		goto out;
	}
	rc = key_paths(data_dir, &p, err, errlen);
	if (rc != 0)
		goto out;
	rc = gb_fs_mkdirs(data_dir, "keys", err, errlen);
	if (rc != 0)
		goto out;
	rc = load_secret(&p, kp, err, errlen);
	if (rc == -EVID_ENOENT) {
		rc = create_secret(&p, err, errlen);
		if (rc == 0)
			rc = load_secret(&p, kp, err, errlen);
	}
	if (rc != 0)
		goto out;
	rc = ensure_public(&p, kp->pk, err, errlen);
out:
	if (rc != 0)
		sodium_memzero(kp, sizeof(*kp));
	return rc;
}

int evid_keys_load_public(const char *path, unsigned char pk[32], char key_id[17], char *err,
                          size_t errlen)
{
	unsigned char *text = NULL;
	size_t len = 0;
	json_t *doc = NULL;
	int rc;

	rc = gb_fs_read_file(path, KEY_FILE_MAX_BYTES, &text, &len, err, errlen);
	if (rc == -EVID_ENOENT)
		gb_set_error(err, errlen,
		             "no public key file %s: export one with `glassbox audit "
		             "export-key -o FILE` on the service's data dir",
		             path);
	if (rc != 0)
		goto out;
	doc = json_loadb((const char *)text, len, 0, NULL);
	if (!doc || b64_member(doc, "public_key", pk, 32) != 0) {
		gb_set_error(
		    err, errlen,
		    "%s is not a glassbox audit public key (expected JSON with "
		    "a base64 public_key of 32 bytes, as `glassbox audit export-key` writes)",
		    path);
		rc = -EVID_EINVAL;
		goto out;
	}
	if (key_id)
		evid_key_id(pk, key_id);
out:
	json_decref(doc);
	free(text);
	return rc;
}

int evid_keys_export_public(const char *data_dir, const char *out_path, char *err, size_t errlen)
{
	struct evid_keypair kp;
	char *text = NULL;
	FILE *fp = NULL;
	int rc;

	rc = evid_keys_load_or_create(data_dir, &kp, err, errlen);
	if (rc != 0)
		goto out;
	text = public_text(kp.pk);
	if (!text) {
		gb_set_error(err, errlen, "out of memory exporting the public key");
		rc = -EVID_ENOMEM;
		goto out;
	}
	if (!out_path || !strcmp(out_path, "-")) {
		if (printf("%s\n", text) < 0 || fflush(stdout) != 0) {
			gb_set_io_error(err, errlen, "write the public key to", "standard output",
			                errno);
			rc = -EVID_EIO;
		}
		goto out;
	}
	fp = fopen(out_path, "w");
	if (!fp) {
		gb_set_io_error(err, errlen, "create", out_path, errno);
		rc = -EVID_EIO;
		goto out;
	}
	if (fprintf(fp, "%s\n", text) < 0) {
		gb_set_io_error(err, errlen, "write", out_path, errno);
		rc = -EVID_EIO;
	}
	if (fclose(fp) != 0 && rc == 0) {
		gb_set_io_error(err, errlen, "write", out_path, errno);
		rc = -EVID_EIO;
	}
out:
	sodium_memzero(&kp, sizeof(kp));
	free(text);
	return rc;
}

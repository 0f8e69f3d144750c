/*
 * keys.h - the key hierarchy of the sealed stores (profiles, secrets).
 *
 *   master key   32 random bytes: DATA/keys/master.key (0600, created on
 *                first use), or the file named by $GLASSBOX_MASTER_KEY_FILE
 *   tenant key   32 random bytes per tenant, kept wrapped by the master
 *                key in DATA/keys/tenants/<tenant>.key; the additional data
 *                binds the tenant's name and the master key's id
 *   data keys    one per sealed object, wrapped by its tenant key by the
 *                store that owns the object (prof_seal_small)
 *
 * Rotating the master key re-wraps the tenant keys only; no sealed object
 * is re-encrypted. Key bytes never appear in logs or errors. Thread-safe
 * (each call reads the files it needs).
 */
#ifndef GB_PROFILES_KEYS_H
#define GB_PROFILES_KEYS_H

#include <stddef.h>

#define PROF_KEY_BYTES 32u

/* Bytes prof_seal_small() adds to the plaintext (nonce + tag). */
#define PROF_SEAL_OVERHEAD_BYTES (24u + 16u)

/* Creates the master key if there is none (and DATA/keys, 0700). A key
 * file that others may read, or of the wrong size, is refused. Returns 0
 * or a negative errno with the reason in err. */
int prof_keys_init(const char *data_dir, char *err, size_t errlen);

/* The 16 hex digits that name the current master key (a hash, not the
 * key), for status output. */
int prof_keys_master_id(const char *data_dir, char id[17], char *err, size_t errlen);

/*
 * Loads tenant's key into key, creating and wrapping a new one on the
 * tenant's first use. tenant must be a safe name (gb_fs_name_is_safe).
 * A wrapped key that does not open (altered, copied from another tenant,
 * wrapped by an unknown master key) is an error, never replaced.
 * Returns 0, -EINVAL (bad tenant name), -EACCES (unsafe permissions),
 * -EBADMSG (does not open), or -EIO, with the reason in err.
 */
int prof_keys_tenant_key(const char *data_dir, const char *tenant,
                         unsigned char key[PROF_KEY_BYTES], char *err, size_t errlen);

/*
 * The bytes of tenant's wrapped key file (DATA/keys/tenants/<t>.key,
 * created as prof_keys_tenant_key() does): a tenant key as it may be
 * shared with other replicas, readable only with the master key. *text
 * is malloc'd (the caller frees it). Returns 0 or as prof_keys_tenant_key.
 */
int prof_keys_tenant_file(const char *data_dir, const char *tenant, unsigned char **text,
                          size_t *len, char *err, size_t errlen);

/*
 * Opens a wrapped tenant key given as the bytes of a key file (text,
 * borrowed; e.g. read from an object store) with this data dir's master
 * key (or the old one of a rotation under way). where names the bytes in
 * errors. Returns 0, -EINVAL (bad tenant name), -EBADMSG (not a key file,
 * another tenant's, another master key's, altered), or as load errors.
 */
int prof_keys_open_tenant_text(const char *data_dir, const char *tenant, const char *where,
                               const unsigned char *text, size_t len,
                               unsigned char key[PROF_KEY_BYTES], char *err, size_t errlen);

/*
 * Replaces the master key by a new random one and re-wraps every tenant
 * key with it. Safe against a crash at any point: until it finishes the
 * previous key is kept as master.key.old and tenant keys wrapped by either
 * key open. Refused when the master key comes from
 * $GLASSBOX_MASTER_KEY_FILE (rotate it where it is kept) or while the
 * replicas' other key is configured. *n_tenants gets
 * the number of tenant keys re-wrapped. Returns 0 or a negative errno.
 */
int prof_keys_rotate(const char *data_dir, size_t *n_tenants, char *err, size_t errlen);

/*
 * Re-wraps every tenant key of the data dir with the current master key
 * (each opened with it or with the other one: $GLASSBOX_MASTER_KEY_OTHER_FILE,
 * DATA/keys/master.key.other or master.key.old). *n_tenants gets how many. Returns 0 or
 * a negative errno with err (a key no master key here opens stops it).
 */
int prof_keys_rewrap(const char *data_dir, size_t *n_tenants, char *err, size_t errlen);

/*
 * The tenant key file text[0..len) (read from where, named in errors)
 * wrapped by the current master key: *out (malloc'd, NUL-terminated) is
 * its new text when another key wrapped it, NULL when the current one
 * already does. Returns 0 or as prof_keys_open_tenant_text.
 */
int prof_keys_rewrap_text(const char *data_dir, const char *tenant, const char *where,
                          const unsigned char *text, size_t len, char **out, char *err,
                          size_t errlen);

/*
 * Seals plain[0..len) with key (XChaCha20-Poly1305, a random nonce) and
 * binds it to ad (a NUL-terminated string, e.g. "profile|acme|alice|id|3"):
 * *out (malloc'd, len + PROF_SEAL_OVERHEAD_BYTES bytes) = nonce ||
 * ciphertext || tag. Returns 0 or -ENOMEM.
 */
int prof_seal_small(const unsigned char key[PROF_KEY_BYTES], const char *ad,
                    const unsigned char *plain, size_t len, unsigned char **out, size_t *outlen);

/* Opens what prof_seal_small() sealed with the same key and ad. *out is
 * malloc'd (NUL-terminated one byte past *outlen; wipe it with
 * sodium_memzero before freeing when it holds a secret). Returns 0,
 * -EBADMSG (wrong key, other ad, altered or truncated), or -ENOMEM. */
int prof_open_small(const unsigned char key[PROF_KEY_BYTES], const char *ad,
                    const unsigned char *sealed, size_t len, unsigned char **out, size_t *outlen);

#endif

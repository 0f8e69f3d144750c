/*
 * keys.c - the master key and the wrapped tenant keys (see keys.h).
 *
 * Files (DATA/keys is 0700, every file 0600):
 *   master.key            64 hex digits and a newline
 *   master.key.old        the previous master key, only while a rotation
 *                         is under way (or was cut short by a crash)
 *   master.key.other      the other key of replicas rotating theirs (the
 *                         Secret's, copied here), as $GLASSBOX_MASTER_KEY_OTHER_FILE
 *   tenants/<t>.key       {"format": "glassbox-tenant-key", "version": 1,
 *                          "tenant": t, "master_id": id, "sealed": base64}
 *
 * A tenant file names the master key that wrapped it, so a reader picks
 * the current or the old key and a rotation cut short is finished by the
 * next one. When the master key comes from $GLASSBOX_MASTER_KEY_FILE (a
 * Secret shared by replicas), $GLASSBOX_MASTER_KEY_OTHER_FILE (or
 * DATA/keys/master.key.other, where replicas copy their Secret) may name a
 * second key that opens the tenant keys it wrapped and never wraps one:
 * the key coming in or going out while replicas rotate (docs/deploy.md),
 * and prof_keys_rewrap() brings every key to the current one. New files are published atomically (temp file, fsync, link or
 * rename, fsync the dir); two processes creating the same key at once
 * agree on the first one written.
 */
#include "profiles/keys.h"

#include "common/fs.h"
#include "common/util.h"

#include <dirent.h>
#include <errno.h>
#include <jansson.h>
#include <sodium.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define PATH_BYTES 4096
#define KEY_FILE_MAX_BYTES 4096u
#define MASTER_ENV "GLASSBOX_MASTER_KEY_FILE"
#define OTHER_ENV "GLASSBOX_MASTER_KEY_OTHER_FILE"
#define TENANT_FORMAT "glassbox-tenant-key"

/* A master key and its id. */
struct master {
	unsigned char key[PROF_KEY_BYTES];
	char id[17];
};

/* The id of a master key: the first 8 bytes of a keyed hash of a fixed
 * label, so it names the key without revealing anything about it. */
static void master_id(const unsigned char key[PROF_KEY_BYTES], char id[17])
{
	static const char label[] = "glassbox master key id";
	unsigned char digest[8];

	crypto_generichash(digest, sizeof(digest), (const unsigned char *)label, sizeof(label) - 1,
	                   key, PROF_KEY_BYTES);
	gb_hex(digest, sizeof(digest), id);
}

/* DATA/keys, created 0700 when missing. */
static int keys_dir(const char *data_dir, char *dir, size_t dirlen, char *err, size_t errlen)
{
	if (gb_pathf(dir, dirlen, "%s/keys", data_dir) < 0) {
		gb_set_error(err, errlen, "the data dir path %s is too long: choose a shorter one",
		             data_dir);
		return -EINVAL;
	}
	return gb_fs_mkdirs_abs(dir, err, errlen);
}

/* Refuses a key file that anyone but its owner may read or write. */
static int check_private(const char *path, char *err, size_t errlen)
{
	struct stat st;

	if (lstat(path, &st) != 0) {
		gb_set_io_error(err, errlen, "inspect", path, errno);
		return errno == ENOENT ? -ENOENT : -EIO;
	}
	if (!S_ISREG(st.st_mode)) {
		gb_set_error(err, errlen, "%s is not a regular file: replace it with the key file",
		             path);
		return -EACCES;
	}
	if (st.st_mode & 077) {
		gb_set_error(
		    err, errlen,
		    "%s may be read by other users: run chmod 600 on it (and treat the key "
		    "as exposed)",
		    path);
		return -EACCES;
	}
	return 0;
}

/* Reads a master key file (64 hex digits, optional newline). */
static int read_master_file(const char *path, struct master *m, char *err, size_t errlen)
{
	unsigned char *text = NULL;
	size_t len = 0;
	size_t bin_len = 0;
	int rc;

	rc = check_private(path, err, errlen);
	if (rc < 0)
		return rc;
	rc = gb_fs_read_file(path, KEY_FILE_MAX_BYTES, &text, &len, err, errlen);
	if (rc < 0)
		return rc;
	while (len && (text[len - 1] == '\n' || text[len - 1] == '\r'))
		len--;
	if (len != 2 * PROF_KEY_BYTES ||
	    sodium_hex2bin(m->key, PROF_KEY_BYTES, (const char *)text, len, NULL, &bin_len, NULL) !=
	        0 ||
	    bin_len != PROF_KEY_BYTES) {
		gb_set_error(err, errlen,
		             "%s is not a master key (it must hold 64 hex digits): restore it from "
		             "your backup",
		             path);
		rc = -EBADMSG;
	} else {
		master_id(m->key, m->id);
	}
	sodium_memzero(text, len);
	free(text);
	return rc;
}

/* Writes key as a new master key file at path: link (fail if present,
 * returning 1) or replace. */
static int write_master_file(const char *dir, const char *path, const unsigned char *key,
                             int replace, char *err, size_t errlen)
{
	char text[2 * PROF_KEY_BYTES + 2];
	char tmp[PATH_BYTES];
	int rc;

	sodium_bin2hex(text, sizeof(text), key, PROF_KEY_BYTES);
	strcat(text, "\n");
	rc = gb_fs_write_temp(dir, text, strlen(text), tmp, sizeof(tmp), err, errlen);
	sodium_memzero(text, sizeof(text));
	if (rc < 0)
		return rc;
	if (replace)
		return gb_fs_publish_replace(tmp, path, dir, err, errlen);
	rc = gb_fs_publish_new(tmp, path, dir, err, errlen);
	if (rc == 1)
		unlink(tmp);
	return rc;
}

/* Loads the current master key, creating DATA/keys/master.key on first
 * use unless $GLASSBOX_MASTER_KEY_FILE names the key. */
static int load_master(const char *data_dir, struct master *m, char *err, size_t errlen)
{
	const char *env = getenv(MASTER_ENV);
	char dir[PATH_BYTES];
	char path[PATH_BYTES];
	unsigned char fresh[PROF_KEY_BYTES];
	int rc;

	if (env && env[0]) {
		rc = read_master_file(env, m, err, errlen);
		if (rc == -ENOENT)
			gb_set_error(
			    err, errlen,
			    "the master key file %s named by $" MASTER_ENV
			    " does not exist: create it (32 random bytes as 64 hex digits, "
			    "mode 0600) or unset the variable",
			    env);
		return rc;
	}
	rc = keys_dir(data_dir, dir, sizeof(dir), err, errlen);
	if (rc < 0)
		return rc;
	if (gb_pathf(path, sizeof(path), "%s/master.key", dir) < 0) {
		gb_set_error(err, errlen, "the data dir path %s is too long", data_dir);
		return -EINVAL;
	}
	rc = read_master_file(path, m, err, errlen);
	if (rc != -ENOENT)
		return rc;
	randombytes_buf(fresh, sizeof(fresh));
	rc = write_master_file(dir, path, fresh, 0, err, errlen);
	sodium_memzero(fresh, sizeof(fresh));
	if (rc < 0)
		return rc;
	/* ours, or the one another process linked first */
	return read_master_file(path, m, err, errlen);
}

/* Loads the other key of replicas rotating theirs: $GLASSBOX_MASTER_KEY_OTHER_FILE
 * when set, else DATA/keys/master.key.other. 0, or -ENOENT when none. */
static int load_other_master(const char *data_dir, struct master *m, char *err, size_t errlen)
{
	const char *env = getenv(OTHER_ENV);
	char path[PATH_BYTES];

	if (env && env[0])
		return read_master_file(env, m, err, errlen);
	if (gb_pathf(path, sizeof(path), "%s/keys/master.key.other", data_dir) < 0)
		return -EINVAL;
	return read_master_file(path, m, err, errlen);
}

/* Loads the other key that opens tenant keys: the replicas' other key
 * (load_other_master), else DATA/keys/master.key.old. 0, or -ENOENT when
 * there is none (no rotation under way). */
static int load_old_master(const char *data_dir, struct master *m, char *err, size_t errlen)
{
	char path[PATH_BYTES];
	int rc = load_other_master(data_dir, m, err, errlen);

	if (rc != -ENOENT)
		return rc;
	if (gb_pathf(path, sizeof(path), "%s/keys/master.key.old", data_dir) < 0)
		return -EINVAL;
	return read_master_file(path, m, err, errlen);
}

int prof_keys_init(const char *data_dir, char *err, size_t errlen)
{
	struct master m;
	int rc = load_master(data_dir, &m, err, errlen);

	sodium_memzero(&m, sizeof(m));
	return rc;
}

int prof_keys_master_id(const char *data_dir, char id[17], char *err, size_t errlen)
{
	struct master m;
	int rc = load_master(data_dir, &m, err, errlen);

	if (rc == 0)
		memcpy(id, m.id, sizeof(m.id));
	sodium_memzero(&m, sizeof(m));
	return rc;
}

int prof_seal_small(const unsigned char key[PROF_KEY_BYTES], const char *ad,
                    const unsigned char *plain, size_t len, unsigned char **out, size_t *outlen)
{
	unsigned char *buf = malloc(len + PROF_SEAL_OVERHEAD_BYTES);
	unsigned long long clen = 0;

	*out = NULL;
	*outlen = 0;
	if (!buf)
		return -ENOMEM;
	randombytes_buf(buf, crypto_aead_xchacha20poly1305_ietf_NPUBBYTES);
	crypto_aead_xchacha20poly1305_ietf_encrypt(
	    buf + crypto_aead_xchacha20poly1305_ietf_NPUBBYTES, &clen, plain, len,
	    (const unsigned char *)ad, strlen(ad), NULL, buf, key);
	*out = buf;
	*outlen = crypto_aead_xchacha20poly1305_ietf_NPUBBYTES + (size_t)clen;
	return 0;
}

int prof_open_small(const unsigned char key[PROF_KEY_BYTES], const char *ad,
                    const unsigned char *sealed, size_t len, unsigned char **out, size_t *outlen)
{
	unsigned char *buf;
	unsigned long long plen = 0;

	*out = NULL;
	*outlen = 0;
	if (len < PROF_SEAL_OVERHEAD_BYTES)
		return -EBADMSG;
	buf = malloc(len - PROF_SEAL_OVERHEAD_BYTES + 1);
	if (!buf)
		return -ENOMEM;
	if (crypto_aead_xchacha20poly1305_ietf_decrypt(
	        buf, &plen, NULL, sealed + crypto_aead_xchacha20poly1305_ietf_NPUBBYTES,
	        len - crypto_aead_xchacha20poly1305_ietf_NPUBBYTES, (const unsigned char *)ad,
	        strlen(ad), sealed, key) != 0) {
		free(buf);
		return -EBADMSG;
	}
	buf[plen] = '\0';
	*out = buf;
	*outlen = (size_t)plen;
	return 0;
}

/* The additional data binding a wrapped tenant key to its tenant and to
 * the master key that wrapped it. */
static void tenant_ad(const char *tenant, const char *mid, char *ad, size_t adlen)
{
	snprintf(ad, adlen, "glassbox tenant key|v1|%s|%s", tenant, mid);
}

/* The path of tenant's wrapped key; its dir is created. */
static int tenant_path(const char *data_dir, const char *tenant, char *dir, size_t dirlen,
                       char *path, size_t pathlen, char *err, size_t errlen)
{
	int rc;

	if (!gb_fs_name_is_safe(tenant)) {
		gb_set_error(err, errlen,
		             "the tenant name must be 1 to %u letters, digits, '.', '_' or '-'",
		             GB_FS_MAX_NAME_BYTES);
		return -EINVAL;
	}
	rc = keys_dir(data_dir, dir, dirlen, err, errlen);
	if (rc < 0)
		return rc;
	if (gb_pathf(dir + strlen(dir), dirlen - strlen(dir), "/tenants") < 0 ||
	    gb_pathf(path, pathlen, "%s/%s.key", dir, tenant) < 0) {
		gb_set_error(err, errlen, "the data dir path %s is too long", data_dir);
		return -EINVAL;
	}
	return gb_fs_mkdirs_abs(dir, err, errlen);
}

/* The text of a tenant key file: tenant's key wrapped by m (malloc'd), or
 * NULL when out of memory. */
static char *wrapped_text(const char *tenant, const struct master *m,
                          const unsigned char key[PROF_KEY_BYTES])
{
	char ad[256];
	char b64[128];
	unsigned char *sealed = NULL;
	size_t sealed_len = 0;
	json_t *doc;
	char *text;

	tenant_ad(tenant, m->id, ad, sizeof(ad));
	if (prof_seal_small(m->key, ad, key, PROF_KEY_BYTES, &sealed, &sealed_len) < 0)
		return NULL;
	sodium_bin2base64(b64, sizeof(b64), sealed, sealed_len, sodium_base64_VARIANT_ORIGINAL);
	free(sealed);
	doc = json_pack("{s:s, s:i, s:s, s:s, s:s}", "format", TENANT_FORMAT, "version", 1,
	                "tenant", tenant, "master_id", m->id, "sealed", b64);
	text = doc ? json_dumps(doc, JSON_SORT_KEYS | JSON_INDENT(1)) : NULL;
	json_decref(doc);
	return text;
}

/* Writes tenant's key wrapped by m to a temp file in dir (path in tmp). */
static int write_wrapped(const char *dir, const char *tenant, const struct master *m,
                         const unsigned char key[PROF_KEY_BYTES], char *tmp, size_t tmplen,
                         char *err, size_t errlen)
{
	char *text = wrapped_text(tenant, m, key);
	int rc;

	if (!text)
		return -ENOMEM;
	rc = gb_fs_write_temp(dir, text, strlen(text), tmp, tmplen, err, errlen);
	free(text);
	return rc;
}

/* Opens the wrapped key text[0..len) (a tenant key file's bytes, read
 * from where: a path or an object, named in errors) with the current
 * master key m, or with the old one of a rotation under way. */
static int open_wrapped(const char *data_dir, const char *where, const unsigned char *text,
                        size_t len, const char *tenant, const struct master *m,
                        unsigned char key[PROF_KEY_BYTES], char *err, size_t errlen)
{
	json_t *doc = NULL;
	const char *mid;
	const char *b64;
	const char *who;
	unsigned char sealed[PROF_KEY_BYTES + PROF_SEAL_OVERHEAD_BYTES];
	size_t sealed_len = 0;
	unsigned char *plain = NULL;
	size_t plain_len = 0;
	struct master old;
	const struct master *with = m;
	char ad[256];
	int rc = -EBADMSG;

	memset(&old, 0, sizeof(old));
	doc = json_loadb((const char *)text, len, 0, NULL);
	mid = json_string_value(json_object_get(doc, "master_id"));
	b64 = json_string_value(json_object_get(doc, "sealed"));
	who = json_string_value(json_object_get(doc, "tenant"));
	if (!json_is_object(doc) || !mid || !b64 || !who ||
	    strcmp(gb_or(json_string_value(json_object_get(doc, "format")), ""), TENANT_FORMAT) !=
	        0) {
		gb_set_error(err, errlen,
		             "%s is not a tenant key file: restore it from your backup", where);
		goto out;
	}
	if (strcmp(who, tenant) != 0) {
		gb_set_error(err, errlen,
		             "%s belongs to another tenant: it was copied here; restore this "
		             "tenant's own key file",
		             where);
		goto out;
	}
	if (strcmp(mid, m->id) != 0) {
		if (load_old_master(data_dir, &old, NULL, 0) != 0 || strcmp(mid, old.id) != 0) {
			gb_set_error(
			    err, errlen,
			    "%s was wrapped by master key %s, which this data dir does not "
			    "have: restore that master key, or name it in $" OTHER_ENV
			    " while a rotation is under way",
			    where, mid);
			goto out;
		}
		with = &old;
	}
	if (sodium_base642bin(sealed, sizeof(sealed), b64, strlen(b64), NULL, &sealed_len, NULL,
	                      sodium_base64_VARIANT_ORIGINAL) != 0) {
		gb_set_error(err, errlen, "%s is damaged: restore it from your backup", where);
		goto out;
	}
	tenant_ad(tenant, with->id, ad, sizeof(ad));
	if (prof_open_small(with->key, ad, sealed, sealed_len, &plain, &plain_len) != 0 ||
	    plain_len != PROF_KEY_BYTES) {
		gb_set_error(err, errlen,
		             "%s does not open with the master key: it was altered or belongs "
		             "elsewhere; restore it from your backup",
		             where);
		goto out;
	}
	memcpy(key, plain, PROF_KEY_BYTES);
	rc = 0;
out:
	if (plain) {
		sodium_memzero(plain, plain_len);
		free(plain);
	}
	sodium_memzero(&old, sizeof(old));
	json_decref(doc);
	return rc;
}

/* Opens the wrapped key in path (open_wrapped). */
static int read_wrapped(const char *data_dir, const char *path, const char *tenant,
                        const struct master *m, unsigned char key[PROF_KEY_BYTES], char *err,
                        size_t errlen)
{
	unsigned char *text = NULL;
	size_t len = 0;
	int rc;

	rc = check_private(path, err, errlen);
	if (rc == 0)
		rc = gb_fs_read_file(path, KEY_FILE_MAX_BYTES, &text, &len, err, errlen);
	if (rc == 0)
		rc = open_wrapped(data_dir, path, text, len, tenant, m, key, err, errlen);
	free(text);
	return rc;
}

int prof_keys_tenant_key(const char *data_dir, const char *tenant,
                         unsigned char key[PROF_KEY_BYTES], char *err, size_t errlen)
{
	struct master m;
	char dir[PATH_BYTES];
	char path[PATH_BYTES];
	char tmp[PATH_BYTES];
	unsigned char fresh[PROF_KEY_BYTES];
	int rc;

	memset(&m, 0, sizeof(m));
	rc = tenant_path(data_dir, tenant, dir, sizeof(dir), path, sizeof(path), err, errlen);
	if (rc < 0)
		goto out;
	rc = load_master(data_dir, &m, err, errlen);
	if (rc < 0)
		goto out;
	rc = read_wrapped(data_dir, path, tenant, &m, key, err, errlen);
	if (rc != -ENOENT)
		goto out;
	randombytes_buf(fresh, sizeof(fresh));
	rc = write_wrapped(dir, tenant, &m, fresh, tmp, sizeof(tmp), err, errlen);
	sodium_memzero(fresh, sizeof(fresh));
	if (rc < 0)
		goto out;
	rc = gb_fs_publish_new(tmp, path, dir, err, errlen);
	if (rc == 1)
		unlink(tmp);
	if (rc < 0)
		goto out;
	/* ours, or the one another process published first */
	rc = read_wrapped(data_dir, path, tenant, &m, key, err, errlen);
out:
	sodium_memzero(&m, sizeof(m));
	return rc;
}

int prof_keys_tenant_file(const char *data_dir, const char *tenant, unsigned char **text,
                          size_t *len, char *err, size_t errlen)
{
	unsigned char key[PROF_KEY_BYTES];
	char dir[PATH_BYTES];
	char path[PATH_BYTES];
	int rc;

	*text = NULL;
	*len = 0;
	rc = prof_keys_tenant_key(data_dir, tenant, key, err, errlen);
	sodium_memzero(key, sizeof(key));
	if (rc == 0)
		rc = tenant_path(data_dir, tenant, dir, sizeof(dir), path, sizeof(path), err,
		                 errlen);
	if (rc == 0)
		rc = gb_fs_read_file(path, KEY_FILE_MAX_BYTES, text, len, err, errlen);
	return rc;
}

int prof_keys_open_tenant_text(const char *data_dir, const char *tenant, const char *where,
                               const unsigned char *text, size_t len,
                               unsigned char key[PROF_KEY_BYTES], char *err, size_t errlen)
{
	struct master m;
	int rc;

	memset(&m, 0, sizeof(m));
	if (!gb_fs_name_is_safe(tenant)) {
		gb_set_error(err, errlen,
		             "the tenant name must be 1 to %u letters, digits, '.', '_' or '-'",
		             GB_FS_MAX_NAME_BYTES);
		return -EINVAL;
	}
	rc = load_master(data_dir, &m, err, errlen);
	if (rc == 0)
		rc = open_wrapped(data_dir, where, text, len, tenant, &m, key, err, errlen);
	sodium_memzero(&m, sizeof(m));
	return rc;
}

/* Re-wraps every tenant key in DATA/keys/tenants with m (each opened with
 * m or the old key). */
static int rewrap_all(const char *data_dir, const struct master *m, size_t *n, char *err,
                      size_t errlen)
{
	char dir[PATH_BYTES];
	char path[PATH_BYTES];
	char tmp[PATH_BYTES];
	char tenant[GB_FS_MAX_NAME_BYTES + 1];
	unsigned char key[PROF_KEY_BYTES];
	struct dirent *de;
	DIR *d;
	size_t nlen;
	int rc = 0;

	*n = 0;
	if (gb_pathf(dir, sizeof(dir), "%s/keys/tenants", data_dir) < 0)
		return -EINVAL;
	d = opendir(dir);
	if (!d)
		return errno == ENOENT ? 0 : -EIO;
	while (rc == 0 && (de = readdir(d)) != NULL) {
		nlen = strlen(de->d_name);
		if (nlen <= 4 || nlen - 4 > GB_FS_MAX_NAME_BYTES ||
		    strcmp(de->d_name + nlen - 4, ".key") != 0)
			continue;
		memcpy(tenant, de->d_name, nlen - 4);
		tenant[nlen - 4] = '\0';
		if (!gb_fs_name_is_safe(tenant) ||
		    gb_pathf(path, sizeof(path), "%s/%s", dir, de->d_name) < 0)
			continue;
		rc = read_wrapped(data_dir, path, tenant, m, key, err, errlen);
		if (rc == 0)
			rc = write_wrapped(dir, tenant, m, key, tmp, sizeof(tmp), err, errlen);
		if (rc == 0)
			rc = gb_fs_publish_replace(tmp, path, dir, err, errlen);
		if (rc == 0)
			(*n)++;
	}
	sodium_memzero(key, sizeof(key));
	closedir(d);
	return rc;
}

int prof_keys_rewrap(const char *data_dir, size_t *n_tenants, char *err, size_t errlen)
{
	struct master m;
	int rc = load_master(data_dir, &m, err, errlen);

	*n_tenants = 0;
	if (rc == 0)
		rc = rewrap_all(data_dir, &m, n_tenants, err, errlen);
	sodium_memzero(&m, sizeof(m));
	return rc;
}

int prof_keys_rewrap_text(const char *data_dir, const char *tenant, const char *where,
                          const unsigned char *text, size_t len, char **out, char *err,
                          size_t errlen)
{
	unsigned char key[PROF_KEY_BYTES];
	struct master m;
	json_t *doc = json_loadb((const char *)text, len, 0, NULL);
	const char *mid = json_string_value(json_object_get(doc, "master_id"));
	int rc;

	*out = NULL;
	memset(&m, 0, sizeof(m));
	rc = load_master(data_dir, &m, err, errlen);
	if (rc == 0)
		rc = open_wrapped(data_dir, where, text, len, tenant, &m, key, err, errlen);
	if (rc < 0 || (mid && !strcmp(mid, m.id)))
		goto out; /* unopenable, or already the current key's */
	*out = wrapped_text(tenant, &m, key);
	if (!*out)
		rc = -ENOMEM;
out:
	sodium_memzero(key, sizeof(key));
	sodium_memzero(&m, sizeof(m));
	json_decref(doc);
	return rc;
}

int prof_keys_rotate(const char *data_dir, size_t *n_tenants, char *err, size_t errlen)
{
	struct master cur;
	struct master next;
	struct master old;
	char dir[PATH_BYTES];
	char path[PATH_BYTES];
	char old_path[PATH_BYTES];
	size_t n = 0;
	int rc;

	*n_tenants = 0;
	memset(&next, 0, sizeof(next));
	memset(&old, 0, sizeof(old));
	if (getenv(MASTER_ENV) && getenv(MASTER_ENV)[0]) {
		gb_set_error(err, errlen,
		             "the master key comes from $" MASTER_ENV
		             ": rotate it where it is kept, with $" OTHER_ENV
		             " and glassbox keys rewrap (docs/deploy.md, \"Rotating the master "
		             "key\"), not here");
		return -EPERM;
	}
	if (load_other_master(data_dir, &old, NULL, 0) != -ENOENT) {
		gb_set_error(err, errlen,
		             "a rotation of the replicas' master key is under way ($" OTHER_ENV
		             " or keys/master.key.other): finish it with glassbox keys rewrap "
		             "(docs/deploy.md, \"Rotating the master key\")");
		rc = -EPERM;
		goto out;
	}
	rc = load_master(data_dir, &cur, err, errlen);
	if (rc < 0)
		goto out;
	rc = keys_dir(data_dir, dir, sizeof(dir), err, errlen);
	if (rc < 0)
		goto out;
	if (gb_pathf(path, sizeof(path), "%s/master.key", dir) < 0 ||
	    gb_pathf(old_path, sizeof(old_path), "%s/master.key.old", dir) < 0) {
		rc = -EINVAL;
		goto out;
	}
	/* a rotation cut short: bring every tenant key to the current key first */
	if (load_old_master(data_dir, &old, NULL, 0) == 0) {
		rc = rewrap_all(data_dir, &cur, &n, err, errlen);
		if (rc < 0)
			goto out;
	}
	rc = write_master_file(dir, old_path, cur.key, 1, err, errlen);
	if (rc < 0)
		goto out;
	randombytes_buf(next.key, sizeof(next.key));
	master_id(next.key, next.id);
	rc = write_master_file(dir, path, next.key, 1, err, errlen);
	if (rc < 0)
		goto out;
	rc = rewrap_all(data_dir, &next, &n, err, errlen);
	if (rc < 0)
		goto out;
	if (unlink(old_path) != 0) {
		gb_set_io_error(err, errlen, "remove", old_path, errno);
		rc = -EIO;
		goto out;
	}
	rc = gb_fs_sync_dir(dir, err, errlen);
	*n_tenants = n;
out:
	sodium_memzero(&cur, sizeof(cur));
	sodium_memzero(&next, sizeof(next));
	sodium_memzero(&old, sizeof(old));
	return rc;
}

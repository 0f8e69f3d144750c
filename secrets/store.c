/*
 * store.c - the sealed store of a tenant's secrets.
 *
 * DESIGN
 * One file per secret: DATA/tenants/<tenant>/secrets/<NAME>.secret, a
 * JSON object whose "sealed" member is base64 of prof_seal_small() of the
 * value under the tenant's key. The additional data names everything the
 * value is bound to:
 *
 *   secret|<tenant>|<name>|<version>|<host>,<host>...|<field>,<field>...
 *
 * so a value moved to another file, tenant or version, or whose hosts or
 * fields were edited in the file, does not open. Metadata (name, hosts,
 * created) is readable without the key, for `glassbox secret list`.
 * Files are written whole and published atomically (0600). The value is
 * only ever in memory that is wiped before it is freed; it never enters
 * an error message or a log.
 */
#include "secrets/secrets.h"

#include "common/fs.h"
#include "common/util.h"
#include "policy/egress.h"
#include "profiles/keys.h"

#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <sodium.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define SECRET_FILE_MAX_BYTES (64u << 10)
#define SECRET_SUFFIX ".secret"

static const char *const field_kinds[] = { "password", "username", "email", "one-time-code",
	                                   "text",     "textarea", "any",   NULL };

const char *const *secret_field_kinds(void)
{
	return field_kinds;
}

int secret_name_is_valid(const char *name)
{
	size_t i;

	if (!name || !((name[0] >= 'A' && name[0] <= 'Z') || (name[0] >= 'a' && name[0] <= 'z')))
		return 0;
	for (i = 0; name[i]; i++) {
		char c = name[i];

		if (i >= SECRET_NAME_MAX)
			return 0;
		if (!((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
		      c == '_' || c == '-'))
			return 0;
	}
	return 1;
}

/* 1 when kind is one of field_kinds. */
static int is_field_kind(const char *kind)
{
	size_t i;

	for (i = 0; field_kinds[i]; i++)
		if (!strcmp(field_kinds[i], kind))
			return 1;
	return 0;
}

/* The secrets dir of tenant into buf. Returns 0 or -EINVAL with err. */
static int secrets_dir(const char *data_dir, const char *tenant, char *buf, size_t buflen,
                       char *err, size_t errlen)
{
	if (!data_dir || !tenant || !gb_fs_name_is_safe(tenant)) {
		gb_set_error(err, errlen,
		             "tenant \"%.64s\" is not a valid tenant name: use letters, "
		             "digits, '.', '_' and '-'",
		             tenant ? tenant : "");
		return -EINVAL;
	}
	if (gb_pathf(buf, buflen, "%s/tenants/%s/secrets", data_dir, tenant) < 0) {
		gb_set_error(err, errlen, "the data dir path %.200s is too long", data_dir);
		return -EINVAL;
	}
	return 0;
}

/* The file of secret name into buf; the name must be valid. */
static int secret_path(const char *data_dir, const char *tenant, const char *name, char *buf,
                       size_t buflen, char *err, size_t errlen)
{
	char dir[PATH_MAX];
	int rc;

	if (!secret_name_is_valid(name)) {
		gb_set_error(err, errlen,
		             "\"%.64s\" is not a valid secret name: 1 to %d letters, "
		             "digits, '_' or '-', starting with a letter (e.g. SHOP_PASSWORD)",
		             name ? name : "", SECRET_NAME_MAX);
		return -EINVAL;
	}
	rc = secrets_dir(data_dir, tenant, dir, sizeof(dir), err, errlen);
	if (rc < 0)
		return rc;
	if (gb_pathf(buf, buflen, "%s/%s" SECRET_SUFFIX, dir, name) < 0) {
		gb_set_error(err, errlen, "the data dir path %.200s is too long", data_dir);
		return -EINVAL;
	}
	return 0;
}

/* The additional data that binds a sealed value (see DESIGN). */
static void bind_ad(const char *tenant, const struct secret_meta *m, struct gb_buf *ad)
{
	size_t i;

	gb_buf_appendf(ad, "secret|%s|%s|%u|", tenant, m->name, m->version);
	for (i = 0; i < m->n_hosts; i++)
		gb_buf_appendf(ad, "%s%s", i ? "," : "", m->hosts[i]);
	gb_buf_appendf(ad, "|");
	for (i = 0; i < m->n_fields; i++)
		gb_buf_appendf(ad, "%s%s", i ? "," : "", m->fields[i]);
}

/* Parses a secret file's JSON (borrowed) into m. Returns 0, or -EBADMSG
 * with what is wrong; *sealed borrows the base64 text. */
static int parse_meta(json_t *j, const char *path, struct secret_meta *m, const char **sealed,
                      char *err, size_t errlen)
{
	json_t *hosts = json_object_get(j, "hosts");
	json_t *fields = json_object_get(j, "fields");
	const char *name = json_string_value(json_object_get(j, "name"));
	json_t *version = json_object_get(j, "version");
	size_t i;

	memset(m, 0, sizeof(*m));
	if (!json_is_object(j) || !secret_name_is_valid(name) || !json_is_integer(version) ||
	    json_integer_value(version) < 1 || json_integer_value(version) > UINT_MAX ||
	    !json_is_array(hosts) || json_array_size(hosts) < 1 ||
	    json_array_size(hosts) > SECRET_MAX_HOSTS ||
	    (fields && (!json_is_array(fields) || json_array_size(fields) > SECRET_MAX_FIELDS))) {
		gb_set_error(err, errlen,
		             "%s is not a secret file (name, version or hosts missing "
		             "or invalid): delete it and set the secret again",
		             path);
		return -EBADMSG;
	}
	snprintf(m->name, sizeof(m->name), "%s", name);
	m->version = (unsigned)json_integer_value(version);
	for (i = 0; i < json_array_size(hosts); i++) {
		const char *h = json_string_value(json_array_get(hosts, i));

		if (!h || strlen(h) > SECRET_HOST_MAX) {
			gb_set_error(err, errlen, "%s: hosts[%zu] is not a host pattern", path, i);
			return -EBADMSG;
		}
		snprintf(m->hosts[i], sizeof(m->hosts[i]), "%s", h);
	}
	m->n_hosts = json_array_size(hosts);
	for (i = 0; i < json_array_size(fields); i++) {
		const char *f = json_string_value(json_array_get(fields, i));

		if (!f || !is_field_kind(f)) {
			gb_set_error(err, errlen, "%s: fields[%zu] is not a field kind", path, i);
			return -EBADMSG;
		}
		snprintf(m->fields[i], sizeof(m->fields[i]), "%s", f);
	}
	m->n_fields = json_array_size(fields);
	m->created_ms = json_integer_value(json_object_get(j, "created_ms"));
	snprintf(m->created, sizeof(m->created), "%s",
	         gb_or(json_string_value(json_object_get(j, "created")), ""));
	*sealed = json_string_value(json_object_get(j, "sealed"));
	if (!*sealed) {
		gb_set_error(err, errlen,
		             "%s has no sealed value: delete it and set the secret again", path);
		return -EBADMSG;
	}
	return 0;
}

/* Reads and parses the file of secret name. *j: new reference. */
static int read_meta(const char *path, json_t **j, struct secret_meta *m, const char **sealed,
                     char *err, size_t errlen)
{
	unsigned char *data = NULL;
	json_error_t jerr;
	size_t len = 0;
	int rc;

	*j = NULL;
	rc = gb_fs_read_file(path, SECRET_FILE_MAX_BYTES, &data, &len, err, errlen);
	if (rc < 0)
		goto out;
	*j = json_loadb((const char *)data, len, JSON_REJECT_DUPLICATES, &jerr);
	if (!*j) {
		gb_set_error(err, errlen,
		             "%s is not valid JSON (%s): delete it and set the secret "
		             "again",
		             path, jerr.text);
		rc = -EBADMSG;
		goto out;
	}
	rc = parse_meta(*j, path, m, sealed, err, errlen);
out:
	free(data);
	return rc;
}

/* 1 when s[0..len) is UTF-8 without NUL or other control bytes than
 * tab and newline. */
static int value_is_text(const unsigned char *s, size_t len)
{
	size_t i;

	for (i = 0; i < len; i++)
		if (s[i] == 0 || (s[i] < 0x20 && s[i] != '\t' && s[i] != '\n'))
			return 0;
	{
		char *copy = malloc(len + 1);
		json_t *probe;
		int ok;

		if (!copy)
			return 0;
		memcpy(copy, s, len);
		copy[len] = '\0';
		probe = json_stringn(copy, len); /* NULL when not UTF-8 */
		ok = probe != NULL;
		json_decref(probe);
		sodium_memzero(copy, len);
		free(copy);
		return ok;
	}
}

/* Checks and copies the hosts and fields of a set into m. */
static int fill_binding(struct secret_meta *m, const char *const *hosts, size_t n_hosts,
                        const char *const *fields, size_t n_fields, char *err, size_t errlen)
{
	char why[256];
	size_t i, k;

	if (n_hosts < 1 || n_hosts > SECRET_MAX_HOSTS) {
		gb_set_error(err, errlen,
		             "a secret needs 1 to %d hosts it may be typed on (--hosts "
		             "shop.test,*.example.com)",
		             SECRET_MAX_HOSTS);
		return -EINVAL;
	}
	for (i = 0; i < n_hosts; i++) {
		if (!hosts[i] || strlen(hosts[i]) > SECRET_HOST_MAX ||
		    policy_host_pattern_check(hosts[i], why, sizeof(why)) < 0) {
			gb_set_error(err, errlen, "host \"%.100s\" is not a host pattern: %s",
			             hosts[i] ? hosts[i] : "",
			             hosts[i] && strlen(hosts[i]) <= SECRET_HOST_MAX ? why
			                                                             : "too long");
			return -EINVAL;
		}
		if (!strcmp(hosts[i], "*")) {
			gb_set_error(err, errlen,
			             "host \"*\" would let any page receive the secret: name "
			             "the hosts it belongs to");
			return -EINVAL;
		}
		snprintf(m->hosts[i], sizeof(m->hosts[i]), "%s", hosts[i]);
	}
	m->n_hosts = n_hosts;
	if (n_fields > SECRET_MAX_FIELDS) {
		gb_set_error(err, errlen, "at most %d field kinds", SECRET_MAX_FIELDS);
		return -EINVAL;
	}
	for (i = 0; i < n_fields; i++) {
		if (!fields[i] || !is_field_kind(fields[i])) {
			struct gb_buf kinds;

			gb_buf_init(&kinds, 512);
			for (k = 0; field_kinds[k]; k++)
				gb_buf_appendf(&kinds, "%s%s", k ? ", " : "", field_kinds[k]);
			gb_set_error(err, errlen, "field kind \"%.40s\" is unknown: use %s",
			             fields[i] ? fields[i] : "", kinds.data ? kinds.data : "");
			gb_buf_free(&kinds);
			return -EINVAL;
		}
		snprintf(m->fields[i], sizeof(m->fields[i]), "%s", fields[i]);
	}
	m->n_fields = n_fields;
	return 0;
}

int secret_set(const char *data_dir, const char *tenant, const char *name, const char *const *hosts,
               size_t n_hosts, const char *const *fields, size_t n_fields,
               const unsigned char *value, size_t len, struct secret_meta *meta, char *err,
               size_t errlen)
{
	unsigned char key[PROF_KEY_BYTES];
	struct secret_meta m, old;
	unsigned char *sealed = NULL;
	size_t sealed_len = 0;
	char path[PATH_MAX], dir[PATH_MAX], tmp[PATH_MAX];
	char rel[128];
	char *b64 = NULL;
	char *text = NULL;
	const char *old_sealed;
	json_t *oldj = NULL, *j = NULL, *arr;
	struct gb_buf ad;
	size_t b64len, i;
	char oerr[256];
	int rc;

	memset(&m, 0, sizeof(m));
	gb_buf_init(&ad, 1 << 14);
	rc = secret_path(data_dir, tenant, name, path, sizeof(path), err, errlen);
	if (rc < 0)
		goto out;
	if (!value || len < 1 || len > SECRET_VALUE_MAX || !value_is_text(value, len)) {
		gb_set_error(err, errlen,
		             "the value of %s must be 1 to %d bytes of text (UTF-8, no "
		             "NUL or control characters)",
		             name, SECRET_VALUE_MAX);
		rc = -EINVAL;
		goto out;
	}
	snprintf(m.name, sizeof(m.name), "%s", name);
	rc = fill_binding(&m, hosts, n_hosts, fields, n_fields, err, errlen);
	if (rc < 0)
		goto out;
	/* the next version: a sealed value of an earlier one never opens as this one */
	m.version = 1;
	if (read_meta(path, &oldj, &old, &old_sealed, oerr, sizeof(oerr)) == 0)
		m.version = old.version + 1;
	m.created_ms = gb_now_ms();
	gb_utc_iso8601(m.created, sizeof(m.created));
	rc = prof_keys_tenant_key(data_dir, tenant, key, err, errlen);
	if (rc < 0)
		goto out;
	bind_ad(tenant, &m, &ad);
	rc = prof_seal_small(key, ad.data ? ad.data : "", value, len, &sealed, &sealed_len);
	sodium_memzero(key, sizeof(key));
	if (rc < 0) {
		gb_set_error(err, errlen, "cannot seal %s: out of memory", name);
		goto out;
	}
	b64len = sodium_base64_ENCODED_LEN(sealed_len, sodium_base64_VARIANT_ORIGINAL);
	b64 = malloc(b64len);
	if (!b64) {
		rc = -ENOMEM;
		gb_set_error(err, errlen, "cannot seal %s: out of memory", name);
		goto out;
	}
	sodium_bin2base64(b64, b64len, sealed, sealed_len, sodium_base64_VARIANT_ORIGINAL);
	j = json_pack("{s:s, s:I, s:[], s:[], s:s, s:I, s:s}", "name", m.name, "version",
	              (json_int_t)m.version, "hosts", "fields", "created", m.created, "created_ms",
	              (json_int_t)m.created_ms, "sealed", b64);
	if (!j) {
		rc = -ENOMEM;
		gb_set_error(err, errlen, "cannot encode %s", name);
		goto out;
	}
	arr = json_object_get(j, "hosts");
	for (i = 0; i < m.n_hosts; i++)
		json_array_append_new(arr, json_string(m.hosts[i]));
	arr = json_object_get(j, "fields");
	for (i = 0; i < m.n_fields; i++)
		json_array_append_new(arr, json_string(m.fields[i]));
	text = json_dumps(j, JSON_INDENT(2));
	if (!text) {
		rc = -ENOMEM;
		gb_set_error(err, errlen, "cannot encode %s", name);
		goto out;
	}
	snprintf(rel, sizeof(rel), "tenants/%s/secrets", tenant);
	rc = secrets_dir(data_dir, tenant, dir, sizeof(dir), err, errlen);
	if (rc == 0)
		rc = gb_fs_mkdirs(data_dir, rel, err, errlen);
	if (rc == 0)
		rc = gb_fs_write_temp(dir, text, strlen(text), tmp, sizeof(tmp), err, errlen);
	if (rc == 0)
		rc = gb_fs_publish_replace(tmp, path, dir, err, errlen);
	if (rc == 0 && meta)
		*meta = m;
out:
	json_decref(oldj);
	json_decref(j);
	free(text);
	free(b64);
	free(sealed);
	gb_buf_free(&ad);
	return rc;
}

int secret_open(const char *data_dir, const char *tenant, const char *name,
                struct secret_meta *meta, unsigned char **value, size_t *len, char *err,
                size_t errlen)
{
	unsigned char key[PROF_KEY_BYTES];
	unsigned char *bin = NULL;
	const char *sealed;
	size_t binlen = 0, b64len;
	char path[PATH_MAX];
	struct gb_buf ad;
	json_t *j = NULL;
	int rc;

	*value = NULL;
	*len = 0;
	gb_buf_init(&ad, 1 << 14);
	rc = secret_path(data_dir, tenant, name, path, sizeof(path), err, errlen);
	if (rc < 0)
		goto out;
	rc = read_meta(path, &j, meta, &sealed, err, errlen);
	if (rc == -ENOENT) {
		gb_set_error(err, errlen,
		             "tenant %s has no secret %s: set it with `glassbox secret "
		             "set %s --hosts HOST --tenant %s` (value on stdin)",
		             tenant, name, name, tenant);
		goto out;
	}
	if (rc < 0)
		goto out;
	if (strcmp(meta->name, name) != 0) {
		gb_set_error(err, errlen,
		             "secret %s of tenant %s does not open: its file names "
		             "another secret (copied or altered); set it again",
		             name, tenant);
		rc = -EBADMSG;
		goto out;
	}
	b64len = strlen(sealed);
	bin = malloc(b64len + 1);
	if (!bin) {
		rc = -ENOMEM;
		goto out;
	}
	if (sodium_base642bin(bin, b64len + 1, sealed, b64len, NULL, &binlen, NULL,
	                      sodium_base64_VARIANT_ORIGINAL) != 0) {
		gb_set_error(err, errlen,
		             "secret %s of tenant %s does not open: its sealed value is "
		             "not base64 (altered); set it again",
		             name, tenant);
		rc = -EBADMSG;
		goto out;
	}
	rc = prof_keys_tenant_key(data_dir, tenant, key, err, errlen);
	if (rc < 0)
		goto out;
	bind_ad(tenant, meta, &ad);
	rc = prof_open_small(key, ad.data ? ad.data : "", bin, binlen, value, len);
	sodium_memzero(key, sizeof(key));
	if (rc == -EBADMSG)
		gb_set_error(
		    err, errlen,
		    "secret %s of tenant %s does not open: it was altered, "
		    "copied from another name or tenant, or sealed under another key; set it "
		    "again with `glassbox secret set`",
		    name, tenant);
	else if (rc < 0)
		gb_set_error(err, errlen, "cannot open secret %s: out of memory", name);
out:
	if (rc < 0) {
		*value = NULL;
		*len = 0;
	}
	json_decref(j);
	free(bin);
	gb_buf_free(&ad);
	return rc;
}

void secret_value_free(unsigned char *value, size_t len)
{
	if (!value)
		return;
	sodium_memzero(value, len);
	free(value);
}

int secret_delete(const char *data_dir, const char *tenant, const char *name, char *err,
                  size_t errlen)
{
	char path[PATH_MAX], dir[PATH_MAX];
	int rc;

	rc = secret_path(data_dir, tenant, name, path, sizeof(path), err, errlen);
	if (rc < 0)
		return rc;
	if (unlink(path) != 0) {
		rc = -errno;
		if (rc == -ENOENT)
			gb_set_error(err, errlen,
			             "tenant %s has no secret %s (see `glassbox secret "
			             "list --tenant %s`)",
			             tenant, name, tenant);
		else
			gb_set_io_error(err, errlen, "delete", path, errno);
		return rc;
	}
	secrets_dir(data_dir, tenant, dir, sizeof(dir), err, errlen);
	return gb_fs_sync_dir(dir, err, errlen);
}

/* For qsort: by name. */
static int by_name(const void *a, const void *b)
{
	return strcmp(json_string_value(json_object_get(*(json_t *const *)a, "name")),
	              json_string_value(json_object_get(*(json_t *const *)b, "name")));
}

int secret_list(const char *data_dir, const char *tenant, json_t **out, char *err, size_t errlen)
{
	char dir[PATH_MAX], path[PATH_MAX], name[SECRET_NAME_MAX + 1];
	json_t **items = NULL;
	size_t n = 0, cap = 0, i;
	struct dirent *de;
	DIR *d = NULL;
	int rc;

	*out = NULL;
	rc = secrets_dir(data_dir, tenant, dir, sizeof(dir), err, errlen);
	if (rc < 0)
		goto out;
	d = opendir(dir);
	if (!d) {
		if (errno == ENOENT) {
			*out = json_array();
			rc = 0;
		} else {
			rc = -errno;
			gb_set_io_error(err, errlen, "read", dir, errno);
		}
		goto out;
	}
	while ((de = readdir(d)) != NULL) {
		size_t l = strlen(de->d_name);
		size_t sl = strlen(SECRET_SUFFIX);
		struct secret_meta m;
		const char *sealed;
		json_t *j = NULL, *item;
		char ferr[512];

		if (l <= sl || l - sl > SECRET_NAME_MAX ||
		    strcmp(de->d_name + l - sl, SECRET_SUFFIX))
			continue;
		memcpy(name, de->d_name, l - sl);
		name[l - sl] = '\0';
		if (!secret_name_is_valid(name) ||
		    gb_pathf(path, sizeof(path), "%s/%s", dir, de->d_name) < 0)
			continue;
		if (read_meta(path, &j, &m, &sealed, ferr, sizeof(ferr)) == 0) {
			json_t *hosts = json_array(), *fields = json_array();

			for (i = 0; i < m.n_hosts; i++)
				json_array_append_new(hosts, json_string(m.hosts[i]));
			for (i = 0; i < m.n_fields; i++)
				json_array_append_new(fields, json_string(m.fields[i]));
			item = json_pack("{s:s, s:I, s:o, s:o, s:s}", "name", name, "version",
			                 (json_int_t)m.version, "hosts", hosts, "fields", fields,
			                 "created", m.created);
		} else {
			item = json_pack("{s:s, s:s}", "name", name, "error", ferr);
		}
		json_decref(j);
		if (!item)
			continue;
		if (n == cap) {
			json_t **grown = realloc(items, (cap ? cap * 2 : 16) * sizeof(*items));

			if (!grown) {
				json_decref(item);
				rc = -ENOMEM;
				gb_set_error(err, errlen, "out of memory listing %s", dir);
				goto out;
			}
			items = grown;
			cap = cap ? cap * 2 : 16;
		}
		items[n++] = item;
	}
	if (n)
		qsort(items, n, sizeof(*items), by_name);
	*out = json_array();
	for (i = 0; i < n; i++)
		json_array_append_new(*out, items[i]);
	n = 0;
	rc = 0;
out:
	for (i = 0; i < n; i++)
		json_decref(items[i]);
	free(items);
	if (d)
		closedir(d);
	return rc;
}

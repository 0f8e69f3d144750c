/*
 * profiles.c - the life of a profile outside a session: create, look up,
 * list, delete, revoke, and the sweeper of expired profiles (see
 * profiles.h; the metadata is in meta.c, the sealed blobs under
 * DATA/tenants/<t>/profiles/).
 *
 * Every operation is scoped to one tenant: lookups are by (tenant, user,
 * name) and nothing here ever reads another tenant's rows or files.
 */
#include "profiles/profiles-private.h"

#include "common/fs.h"
#include "common/log.h"
#include "common/util.h"

#include <dirent.h>
#include <errno.h>
#include <sodium.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* Checks the three names of a profile. */
static int check_names(const char *tenant, const char *user, const char *name, char *err,
                       size_t errlen)
{
	const char *what = !gb_fs_name_is_safe(tenant)         ? "tenant"
	                   : !gb_fs_name_is_safe(user)         ? "user"
	                   : name && !gb_fs_name_is_safe(name) ? "profile name"
	                                                       : NULL;

	if (!what)
		return 0;
	gb_set_error(err, errlen,
	             "the %s must be 1 to %u letters, digits, '.', '_' or '-' (not "
	             "starting with '.')",
	             what, GB_FS_MAX_NAME_BYTES);
	return -PROF_EINVAL;
}

/* "2026-11-29T18:20:01Z" for ms since the epoch. */
static void iso_time(int64_t ms, char *buf, size_t len)
{
	time_t t = (time_t)(ms / 1000);
	struct tm tm;

	gmtime_r(&t, &tm);
	strftime(buf, len, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

static json_t *time_or_null(int64_t ms)
{
	char buf[32];

	if (ms <= 0)
		return json_null();
	iso_time(ms, buf, sizeof(buf));
	return json_string(buf);
}

json_t *prof_info_json(const struct prof_info *p)
{
	json_t *held = json_null();

	if (p->held_pid > 0)
		held = json_pack("{s:s, s:I, s:o, s:b}", "holder", p->held_by, "pid",
		                 (json_int_t)p->held_pid, "since", time_or_null(p->held_since_ms),
		                 "alive", prof_pid_alive(p->held_pid));
	json_t *sealed_in = p->version == 0       ? json_null()
	                    : p->sealed_sha256[0] ? json_string("object_store")
	                                          : json_string("data_dir");

	return json_pack("{s:s, s:s, s:s, s:s, s:I, s:o, s:o, s:o, s:b, s:o, s:I, s:o, s:o}", "id",
	                 p->id, "tenant", p->tenant, "user", p->user, "name", p->name, "version",
	                 (json_int_t)p->version, "created", time_or_null(p->created_ms),
	                 "last_used", time_or_null(p->last_used_ms), "expires_at",
	                 time_or_null(p->expires_ms), "revoked", p->revoked, "revoked_at",
	                 time_or_null(p->revoked_ms), "size", (json_int_t)p->size_bytes, "held_by",
	                 held, "sealed_in", sealed_in);
}

int prof_blob_path(const char *data_dir, const char *tenant, const char *id, int64_t version,
                   char *path, size_t pathlen)
{
	return gb_pathf(path, pathlen, "%s/tenants/%s/profiles/%s.%lld.sealed", data_dir, tenant,
	                id, (long long)version);
}

void prof_remove_blobs(const char *data_dir, const char *tenant, const char *id,
                       int64_t keep_version)
{
	char dir[4096];
	char keep[128];
	char path[4096 + 256];
	char prefix[48];
	char dot_prefix[48];
	struct dirent *de;
	DIR *d;
	int removed = 0;

	if (gb_pathf(dir, sizeof(dir), "%s/tenants/%s/profiles", data_dir, tenant) < 0)
		return;
	snprintf(prefix, sizeof(prefix), "%s.", id);
	snprintf(dot_prefix, sizeof(dot_prefix), ".%s.", id);
	snprintf(keep, sizeof(keep), "%s.%lld.sealed", id, (long long)keep_version);
	d = opendir(dir);
	if (!d)
		return;
	while ((de = readdir(d)) != NULL) {
		if (strncmp(de->d_name, prefix, strlen(prefix)) != 0 &&
		    strncmp(de->d_name, dot_prefix, strlen(dot_prefix)) != 0)
			continue;
		if (keep_version >= 0 && !strcmp(de->d_name, keep))
			continue;
		if (gb_pathf(path, sizeof(path), "%s/%s", dir, de->d_name) == 0 &&
		    unlink(path) == 0)
			removed = 1;
	}
	closedir(d);
	if (removed)
		gb_fs_sync_dir(dir, NULL, 0);
}

/* 1 when p is past its expiry. */
static int expired(const struct prof_info *p, int64_t now)
{
	return p->expires_ms > 0 && now >= p->expires_ms;
}

int prof_sweep(const char *data_dir, size_t *n_purged, char *err, size_t errlen)
{
	struct prof_db *db = NULL;
	struct prof_info *all = NULL;
	int64_t now = prof_now_ms();
	size_t n = 0, i, purged = 0;
	int rc;

	if (n_purged)
		*n_purged = 0;
	rc = prof_db_open(data_dir, &db, err, errlen);
	if (rc == 0)
		rc = prof_db_list(db, NULL, NULL, &all, &n, err, errlen);
	for (i = 0; rc == 0 && i < n; i++) {
		if (!expired(&all[i], now) ||
		    (all[i].held_pid > 0 && prof_db_holder_alive(db, all[i].id)))
			continue;
		prof_remove_blobs(data_dir, all[i].tenant, all[i].id, -1);
		if (prof_db_delete(db, all[i].id, err, errlen) == 0) {
			prof_object_prune(all[i].tenant, all[i].id, NULL, NULL);
			purged++;
			GB_LOGI("profiles", "purged expired profile %s (tenant %s, user %s)",
			        all[i].id, all[i].tenant, all[i].user);
		}
	}
	if (n_purged)
		*n_purged = purged;
	free(all);
	prof_db_close(db);
	return rc;
}

int prof_create(const char *data_dir, const char *tenant, const char *user, const char *name,
                int64_t ttl_s, struct prof_info *out, char *err, size_t errlen)
{
	struct prof_db *db = NULL;
	struct prof_info p;
	unsigned char tkey[PROF_KEY_BYTES];
	unsigned char dkey[PROF_KEY_BYTES];
	unsigned char *wrapped = NULL;
	size_t wrapped_len = 0;
	char ad[512];
	int rc;

	memset(&p, 0, sizeof(p));
	rc = check_names(tenant, user, name, err, errlen);
	if (rc < 0)
		goto out;
	if (ttl_s < 0 || ttl_s > 100LL * 365 * 86400) {
		gb_set_error(err, errlen,
		             "the time to live must be 0 (never expires) or a number of "
		             "seconds up to 100 years");
		rc = -PROF_EINVAL;
		goto out;
	}
	prof_sweep(data_dir, NULL, NULL, 0);
	if (prof_tenant_key(data_dir, tenant, tkey, err, errlen) < 0) {
		rc = -PROF_EKEY;
		goto out;
	}
	gb_random_hex(p.id, 16);
	snprintf(p.tenant, sizeof(p.tenant), "%s", tenant);
	snprintf(p.user, sizeof(p.user), "%s", user);
	snprintf(p.name, sizeof(p.name), "%s", name);
	p.created_ms = prof_now_ms();
	p.expires_ms = ttl_s > 0 ? p.created_ms + ttl_s * 1000 : 0;
	randombytes_buf(dkey, sizeof(dkey));
	prof_key_ad(tenant, user, p.id, ad, sizeof(ad));
	rc = prof_seal_small(tkey, ad, dkey, sizeof(dkey), &wrapped, &wrapped_len);
	if (rc < 0) {
		rc = -PROF_ENOMEM;
		goto out;
	}
	rc = prof_db_open(data_dir, &db, err, errlen);
	if (rc == 0)
		rc = prof_db_insert(db, &p, wrapped, wrapped_len, err, errlen);
	if (rc == 0 && out)
		*out = p;
out:
	sodium_memzero(tkey, sizeof(tkey));
	sodium_memzero(dkey, sizeof(dkey));
	free(wrapped);
	prof_db_close(db);
	return rc;
}

/* Checks the names, opens the profile database (*db, closed by the
 * caller even on failure) and finds the profile in it. 0 or -PROF_*. */
static int open_profile(const char *data_dir, const char *tenant, const char *user,
                        const char *name, struct prof_db **db, struct prof_info *p, char *err,
                        size_t errlen)
{
	int rc = check_names(tenant, user, name, err, errlen);

	*db = NULL;
	if (rc == 0)
		rc = prof_db_open(data_dir, db, err, errlen);
	if (rc == 0)
		rc = prof_db_get(*db, tenant, user, name, p, NULL, NULL, err, errlen);
	return rc;
}

int prof_get(const char *data_dir, const char *tenant, const char *user, const char *name,
             struct prof_info *out, char *err, size_t errlen)
{
	struct prof_db *db;
	int rc = open_profile(data_dir, tenant, user, name, &db, out, err, errlen);

	prof_db_close(db);
	return rc;
}

int prof_list(const char *data_dir, const char *tenant, const char *user, json_t **out, char *err,
              size_t errlen)
{
	struct prof_db *db = NULL;
	struct prof_info *v = NULL;
	size_t n = 0, i;
	int rc;

	*out = NULL;
	rc = check_names(tenant, user ? user : tenant, NULL, err, errlen);
	if (rc < 0)
		return rc;
	prof_sweep(data_dir, NULL, NULL, 0);
	rc = prof_db_open(data_dir, &db, err, errlen);
	if (rc == 0)
		rc = prof_db_list(db, tenant, user, &v, &n, err, errlen);
	if (rc == 0) {
		*out = json_array();
		for (i = 0; i < n; i++)
			json_array_append_new(*out, prof_info_json(&v[i]));
	}
	free(v);
	prof_db_close(db);
	return rc;
}

int prof_delete(const char *data_dir, const char *tenant, const char *user, const char *name,
                char *err, size_t errlen)
{
	struct prof_db *db;
	struct prof_info p;
	int rc = open_profile(data_dir, tenant, user, name, &db, &p, err, errlen);

	if (rc == 0 && p.held_pid > 0 && prof_db_holder_alive(db, p.id)) {
		gb_set_error(err, errlen,
		             "profile %s of user %s is in use by %s (pid %lld): close "
		             "that session before deleting it",
		             name, user, p.held_by, (long long)p.held_pid);
		rc = -PROF_EBUSY;
	}
	if (rc == 0) {
		prof_remove_blobs(data_dir, tenant, p.id, -1);
		rc = prof_db_delete(db, p.id, err, errlen);
		if (rc == 0)
			prof_object_prune(tenant, p.id, NULL, NULL);
	}
	prof_db_close(db);
	return rc;
}

int prof_revoke(const char *data_dir, const char *tenant, const char *user, const char *name,
                char *err, size_t errlen)
{
	struct prof_db *db;
	struct prof_info p;
	int rc = open_profile(data_dir, tenant, user, name, &db, &p, err, errlen);

	if (rc == 0)
		rc = prof_db_revoke(db, p.id, prof_now_ms(), err, errlen);
	prof_db_close(db);
	return rc;
}

/* Used by lease.c: the names check and the time format. */
int prof_check_names(const char *tenant, const char *user, const char *name, char *err,
                     size_t errlen)
{
	return check_names(tenant, user, name, err, errlen);
}

void prof_iso_time(int64_t ms, char *buf, size_t len)
{
	iso_time(ms, buf, len);
}

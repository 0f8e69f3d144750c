/*
 * profiles.h - per-tenant encrypted browser profiles (docs/profiles.md).
 *
 * A profile is (tenant, user, name) -> the state of a Chromium
 * user-data-dir (cookies, Local Storage, IndexedDB, Service Worker
 * storage; caches are left out), or, for a session in isolation
 * "context", its browser context's storage state (one JSON file in the
 * dir: actions/context_profile.c), kept sealed at rest:
 *
 *   DATA/glassbox.db                        table prof_profiles (metadata)
 *   DATA/tenants/<t>/profiles/<id>.<v>.sealed  the state as a tar stream,
 *                        sealed with crypto_secretstream_xchacha20poly1305
 *                        under the profile's data key
 *
 * or, when the process has an object store (prof_use_object_store), the
 * sealed versions are objects named by their SHA-256 and the metadata
 * names the newest one (objects.c), so any replica opens the profile.
 *
 * The data key is random per profile, wrapped by the tenant key
 * (keys.h) and kept in the metadata; revoking a profile destroys it. The
 * additional data of every chunk binds tenant, user, profile id and
 * version, so a blob copied into another tenant's place, or an old
 * version put back, does not open.
 *
 * A session uses a profile through a lease: prof_lease_open() unseals the
 * newest version into a private 0700 dir (on tmpfs when /dev/shm can be
 * used) that Chromium takes as its user-data-dir; prof_lease_save() seals
 * the dir as the next version (temp file, fsync, link, fsync dir; the
 * previous version is removed only once the new one is committed);
 * prof_lease_close() wipes the dir and releases the hold. One writer per
 * profile: a writable lease holds the profile (holder, pid, since) until
 * it is closed; a hold whose process is gone is released by the next
 * open. Read-only leases hold nothing and can never be saved.
 *
 * Expired profiles (expires_at passed) refuse to open and are purged by
 * prof_sweep(), which every create and list runs first, and an open that
 * finds its profile expired runs after refusing it.
 *
 * Every function may be called from any thread (each opens what it needs);
 * a lease is used by one thread at a time. Errors are negated PROF_E*
 * codes with a sentence in err saying what failed and what to do; key
 * bytes, cookies and page data never appear in them.
 */
#ifndef GB_PROFILES_H
#define GB_PROFILES_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

struct blob_store;

enum {
	PROF_EINVAL = 1, /* a bad argument (name, ttl) */
	PROF_ENOTFOUND,  /* no such profile for this tenant and user */
	PROF_EEXIST,     /* a profile of that name exists already */
	PROF_EBUSY,      /* held by another live session */
	PROF_EREVOKED,   /* revoked: its data key is gone */
	PROF_EEXPIRED,   /* past expires_at */
	PROF_EBADMSG,    /* the sealed state does not open: altered, truncated, misplaced */
	PROF_EIO,        /* the disk or the database failed */
	PROF_ENOMEM,
	PROF_EKEY, /* the key hierarchy failed (see err) */
};

/* Largest state a profile may hold once unpacked (bytes). */
#define PROF_MAX_STATE_BYTES (2ull * 1024 * 1024 * 1024)

/* A profile's metadata. */
struct prof_info {
	char id[33];
	char tenant[65];
	char user[65];
	char name[65];
	int64_t version;      /* 0: never sealed (empty profile) */
	int64_t created_ms;   /* wall clock, ms since the epoch */
	int64_t last_used_ms; /* last open or save; 0 never */
	int64_t expires_ms;   /* 0: never */
	int revoked;
	int64_t revoked_ms;
	int64_t size_bytes; /* of the newest sealed blob */
	char held_by[128];  /* "" when free */
	int64_t held_pid;
	int64_t held_since_ms;
	char sealed_sha256[65]; /* the newest version's object in the object store; "" on disk */
};

/* The metadata as JSON (new reference): id, tenant, user, name, version,
 * created, last_used, expires_at (ISO 8601 or null), revoked, size,
 * held_by {holder, pid, since} or null, and sealed_in: where the newest
 * version is ("object_store", "data_dir"; null before the first). */
json_t *prof_info_json(const struct prof_info *p);

/* Creates an empty profile (version 0) with a fresh data key. ttl_s > 0
 * sets expires_at; 0 means it never expires. Returns 0, -PROF_EEXIST,
 * -PROF_EINVAL (names must be safe: gb_fs_name_is_safe), -PROF_EKEY or
 * -PROF_EIO. out may be NULL. */
int prof_create(const char *data_dir, const char *tenant, const char *user, const char *name,
                int64_t ttl_s, struct prof_info *out, char *err, size_t errlen);

/* Looks up tenant's profile (user, name). Returns 0 or -PROF_ENOTFOUND. */
int prof_get(const char *data_dir, const char *tenant, const char *user, const char *name,
             struct prof_info *out, char *err, size_t errlen);

/* tenant's profiles (of user, or of every user when user is NULL), as a
 * new JSON array of prof_info_json() objects, oldest first. */
int prof_list(const char *data_dir, const char *tenant, const char *user, json_t **out, char *err,
              size_t errlen);

/* Deletes the profile: its sealed blobs and its metadata. Refused with
 * -PROF_EBUSY while a live session holds it. */
int prof_delete(const char *data_dir, const char *tenant, const char *user, const char *name,
                char *err, size_t errlen);

/* Revokes the profile: its wrapped data key is destroyed, so no version
 * of it can be opened again; the metadata stays (revoked, revoked_ms)
 * until deleted. Allowed while held (the holder can no longer save). */
int prof_revoke(const char *data_dir, const char *tenant, const char *user, const char *name,
                char *err, size_t errlen);

/* Purges every expired profile not held by a live session (blobs and
 * metadata); *n_purged (may be NULL) gets how many. */
int prof_sweep(const char *data_dir, size_t *n_purged, char *err, size_t errlen);

/* Re-wraps every tenant key in the process's object store (set with
 * prof_use_object_store) with the current master key of data_dir
 * (prof_keys_rewrap_text); *n gets how many changed. Without an object
 * store it does nothing. Returns 0, or -PROF_EIO / -PROF_EBADMSG with err
 * at the first that fails. */
int prof_object_rewrap_tenant_keys(const char *data_dir, size_t *n, char *err, size_t errlen);

/*
 * Keeps sealed profiles in object store b (borrowed; NULL: the data dir
 * only) from now on: every later save puts the sealed bytes there
 * (tenants/<t>/profiles/<id>/<sha256>, never replaced) and the metadata
 * names them, so any replica sharing the store and the metadata database
 * opens the profile; the tenant key is shared there too, wrapped by the
 * master key (tenants/<t>/keys/tenant.key). Versions already committed
 * open from wherever they are. Call before sessions start, and with NULL
 * after they end and before b is closed.
 */
void prof_use_object_store(struct blob_store *b);

/* ---- leases: a profile unsealed for one session ----------------------- */

struct prof_lease;

struct prof_open_opts {
	const char *tenant; /* required */
	const char *user;   /* required */
	const char *name;   /* required */
	int readonly;       /* a copy that is never sealed back; holds nothing */
	int create;         /* create the profile when it does not exist */
	const char *holder; /* who holds it, for "in use by ..." (e.g. session id) */
};

/*
 * Unseals the newest version of the profile into a new private dir.
 * Refused when it does not exist (-PROF_ENOTFOUND), is revoked, expired,
 * or held by another live session (-PROF_EBUSY, unless readonly; err
 * names the holder and since when). A blob that does not open gives
 * -PROF_EBADMSG and leaves the profile as it is. Returns 0 with *out.
 */
int prof_lease_open(const char *data_dir, const struct prof_open_opts *o, struct prof_lease **out,
                    char *err, size_t errlen);

/* The unsealed dir (Chromium's user-data-dir). */
const char *prof_lease_dir(const struct prof_lease *l);
/* The profile as it was when opened (version = the version unsealed). */
const struct prof_info *prof_lease_info(const struct prof_lease *l);
int prof_lease_readonly(const struct prof_lease *l);

/*
 * Seals the dir as the next version and commits it (the browser using
 * the dir must be closed first). Refused for read-only leases, and when
 * the profile was revoked, deleted or taken over meanwhile; the last good
 * version then stays. *new_version (may be NULL) gets the version
 * written. Returns 0 or a negative PROF_E*.
 */
int prof_lease_save(struct prof_lease *l, int64_t *new_version, char *err, size_t errlen);

/* Wipes the dir, releases the hold and frees the lease. NULL is a no-op. */
void prof_lease_close(struct prof_lease *l);

#endif

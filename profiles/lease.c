/*
 * lease.c - a profile unsealed for one session (profiles.h, "leases").
 *
 * Open: hold (writable leases), unwrap the data key with the tenant key,
 * unseal the newest version into a fresh private dir, verify the stream
 * to its final chunk. Save: pack and seal the dir into a temp file in the
 * profile's dir, fsync, rename to <id>.<v+1>.sealed, fsync the dir, then
 * commit v+1 in the metadata only if the profile is still at v, held by
 * us and not revoked; the old version is removed after the commit. Until
 * then the last good version is what an open gets, whatever happens.
 * Close: wipe the dir, release the hold.
 *
 * A writable lease keeps its store handle open for as long as it holds
 * the profile: the hold names that handle (meta.c), and it is alive for
 * every other process and replica exactly as long as the handle is.
 *
 * The clear copy lives under /dev/shm/glassbox-<uid>/ (tmpfs: never on a
 * disk) when that can be made private to this user, else under
 * DATA/run/profiles/.
 */
#include "profiles/profiles-private.h"

#include "common/fs.h"
#include "common/log.h"
#include "common/util.h"

#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <sodium.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

struct prof_lease {
	char data_dir[4096];
	struct prof_info info;
	unsigned char key[PROF_KEY_BYTES];
	char dir[4096];
	int readonly;
	struct prof_db *db; /* the store handle the hold is named after; NULL without one */
	int64_t hold_pid;   /* 0: holds nothing */
	int64_t hold_since_ms;
};

/* ---- the private dir ------------------------------------------------------ */

/* A parent dir of leases: 0 when dir is (or was made) a dir owned by us,
 * not a link, that others may pass but not list or change (0711): a
 * browser running as a user of its own reaches its lease's 0700 dir, and
 * nothing else, through it. */
static int private_parent(const char *dir)
{
	struct stat st;

	if (mkdir(dir, 0711) != 0 && errno != EEXIST)
		return -1;
	if (lstat(dir, &st) != 0 || !S_ISDIR(st.st_mode) || st.st_uid != geteuid() ||
	    (st.st_mode & 066))
		return -1;
	if ((st.st_mode & 0777) != 0711 && chmod(dir, 0711) != 0)
		return -1;
	return 0;
}

/* Makes the lease's dir: on /dev/shm when possible, else DATA/run. */
static int make_dir(struct prof_lease *l, char *err, size_t errlen)
{
	char parent[4096];

	snprintf(parent, sizeof(parent), "/dev/shm/glassbox-%u", (unsigned)geteuid());
	if (access("/dev/shm", W_OK) != 0 || private_parent(parent) != 0) {
		if (gb_pathf(parent, sizeof(parent), "%s/run/profiles", l->data_dir) < 0 ||
		    gb_fs_mkdirs_abs(parent, err, errlen) < 0)
			return -PROF_EIO;
	}
	if (gb_pathf(l->dir, sizeof(l->dir), "%s/p-XXXXXX", parent) < 0 || !mkdtemp(l->dir)) {
		gb_set_io_error(err, errlen, "create a private dir in", parent, errno);
		l->dir[0] = '\0';
		return -PROF_EIO;
	}
	return 0;
}

static int remove_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	(void)flag;
	(void)ftw;
	if (remove(path) != 0 && errno != ENOENT)
		GB_LOGW("profiles", "cannot remove %s: %s", path, strerror(errno));
	return 0;
}

/* Removes the clear copy (on tmpfs its pages are freed with it). */
static void wipe_dir(struct prof_lease *l)
{
	if (l->dir[0])
		nftw(l->dir, remove_entry, 16, FTW_DEPTH | FTW_PHYS);
	l->dir[0] = '\0';
}

/* ---- streams over file descriptors ----------------------------------------- */

static int fd_write(void *user, const void *buf, size_t n)
{
	int fd = *(int *)user;
	const char *p = buf;
	ssize_t w;

	while (n > 0) {
		w = write(fd, p, n);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return w < 0 ? -errno : -EIO;
		p += w;
		n -= (size_t)w;
	}
	return 0;
}

static ssize_t fd_read(void *user, void *buf, size_t n)
{
	int fd = *(int *)user;
	ssize_t r;

	do {
		r = read(fd, buf, n);
	} while (r < 0 && errno == EINTR);
	return r < 0 ? -EIO : r;
}

static ssize_t unsealer_read(void *user, void *buf, size_t n)
{
	return prof_unsealer_read(user, buf, n);
}

static int sealer_write(void *user, const void *buf, size_t n)
{
	return prof_sealer_write(user, buf, n);
}

/* ---- open ------------------------------------------------------------------- */

/* Takes the profile's hold, or says who has it. */
static int take_hold(struct prof_db *db, struct prof_lease *l, const char *holder, char *err,
                     size_t errlen)
{
	const struct prof_info *p = &l->info;
	char since[32];
	int64_t now = prof_now_ms();
	int rc;

	if (p->held_pid > 0 && prof_db_holder_alive(db, p->id)) {
		prof_iso_time(p->held_since_ms, since, sizeof(since));
		gb_set_error(
		    err, errlen,
		    "profile %s of user %s is in use by %s (pid %lld) since %s: "
		    "one session at a time may write it; close that session first, or open a "
		    "read-only copy (readonly)",
		    p->name, p->user, p->held_by, (long long)p->held_pid, since);
		return -PROF_EBUSY;
	}
	if (p->held_pid > 0)
		GB_LOGI("profiles", "profile %s: releasing the stale hold of %s (pid %lld is gone)",
		        p->id, p->held_by, (long long)p->held_pid);
	rc = prof_db_hold(db, p->id, holder, (int64_t)getpid(), now, p->held_pid, p->held_since_ms,
	                  err, errlen);
	if (rc == 1) {
		gb_set_error(err, errlen,
		             "profile %s of user %s was just opened by another session: "
		             "close it first, or open a read-only copy (readonly)",
		             p->name, p->user);
		return -PROF_EBUSY;
	}
	if (rc < 0)
		return rc;
	l->hold_pid = getpid();
	l->hold_since_ms = now;
	return 0;
}

/* Opens the tenant key, then the profile's data key. */
static int unwrap_key(struct prof_lease *l, const unsigned char *wrapped, size_t wrapped_len,
                      char *err, size_t errlen)
{
	unsigned char tkey[PROF_KEY_BYTES];
	unsigned char *plain = NULL;
	size_t plain_len = 0;
	char ad[512];
	int rc = 0;

	if (prof_keys_tenant_key(l->data_dir, l->info.tenant, tkey, err, errlen) < 0)
		return -PROF_EKEY;
	prof_key_ad(l->info.tenant, l->info.user, l->info.id, ad, sizeof(ad));
	if (prof_open_small(tkey, ad, wrapped, wrapped_len, &plain, &plain_len) != 0 ||
	    plain_len != PROF_KEY_BYTES) {
		gb_set_error(err, errlen,
		             "the data key of profile %s of user %s does not open with "
		             "tenant %s's key: the metadata was altered or copied from elsewhere",
		             l->info.name, l->info.user, l->info.tenant);
		rc = -PROF_EBADMSG;
	} else {
		memcpy(l->key, plain, PROF_KEY_BYTES);
	}
	if (plain) {
		sodium_memzero(plain, plain_len);
		free(plain);
	}
	sodium_memzero(tkey, sizeof(tkey));
	return rc;
}

/* Unseals version l->info.version into l->dir and checks the stream to
 * its end. */
static int unseal_into_dir(struct prof_lease *l, char *err, size_t errlen)
{
	struct prof_unsealer *u = NULL;
	char path[4096];
	char ad[512];
	char xerr[512] = "";
	unsigned char rest[4096];
	ssize_t r;
	int fd;
	int rc;

	if (prof_blob_path(l->data_dir, l->info.tenant, l->info.id, l->info.version, path,
	                   sizeof(path)) < 0)
		return -PROF_EINVAL;
	fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0) {
		gb_set_error(
		    err, errlen,
		    "version %lld of profile %s of user %s is missing (%s): "
		    "restore DATA/tenants/%s/profiles/ from a backup, or delete the profile",
		    (long long)l->info.version, l->info.name, l->info.user, strerror(errno),
		    l->info.tenant);
		return -PROF_EBADMSG;
	}
	prof_blob_ad(l->info.tenant, l->info.user, l->info.id, l->info.version, ad, sizeof(ad));
	rc = prof_unsealer_new(l->key, ad, fd_read, &fd, &u);
	if (rc == 0)
		rc = prof_extract(unsealer_read, u, l->dir, PROF_MAX_STATE_BYTES, xerr,
		                  sizeof(xerr));
	while (rc == 0 && (r = prof_unsealer_read(u, rest, sizeof(rest))) != 0)
		if (r < 0)
			rc = (int)r;
	prof_unsealer_free(u);
	close(fd);
	sodium_memzero(rest, sizeof(rest));
	if (rc == -EBADMSG || rc == -EINVAL) {
		gb_set_error(
		    err, errlen,
		    "version %lld of profile %s of user %s does not open: its "
		    "sealed file was altered, truncated, or put there from another profile, "
		    "tenant or version; it is left as it is (restore it from a backup, or "
		    "delete the profile)",
		    (long long)l->info.version, l->info.name, l->info.user);
		return -PROF_EBADMSG;
	}
	if (rc < 0) {
		gb_set_error(err, errlen, "cannot unpack profile %s of user %s: %s", l->info.name,
		             l->info.user, xerr[0] ? xerr : strerror(-rc));
		return -PROF_EIO;
	}
	return 0;
}

int prof_lease_open(const char *data_dir, const struct prof_open_opts *o, struct prof_lease **out,
                    char *err, size_t errlen)
{
	struct prof_db *db = NULL;
	struct prof_lease *l = NULL;
	unsigned char *wrapped = NULL;
	size_t wrapped_len = 0;
	char holder[96];
	char when[32];
	int rc;

	*out = NULL;
	rc = prof_check_names(o->tenant, o->user, o->name, err, errlen);
	if (rc < 0)
		return rc;
	l = calloc(1, sizeof(*l));
	if (!l)
		return -PROF_ENOMEM;
	snprintf(l->data_dir, sizeof(l->data_dir), "%s", data_dir);
	l->readonly = o->readonly;
	rc = prof_db_open(data_dir, &db, err, errlen);
	if (rc < 0)
		goto out;
	rc = prof_db_get(db, o->tenant, o->user, o->name, &l->info, &wrapped, &wrapped_len, err,
	                 errlen);
	if (rc == -PROF_ENOTFOUND && o->create && !o->readonly) {
		rc = prof_create(data_dir, o->tenant, o->user, o->name, 0, NULL, err, errlen);
		if (rc == 0 || rc == -PROF_EEXIST)
			rc = prof_db_get(db, o->tenant, o->user, o->name, &l->info, &wrapped,
			                 &wrapped_len, err, errlen);
	}
	if (rc < 0)
		goto out;
	if (l->info.revoked || !wrapped) {
		prof_iso_time(l->info.revoked_ms, when, sizeof(when));
		gb_set_error(err, errlen,
		             "profile %s of user %s was revoked at %s: its data key is "
		             "destroyed and it cannot be opened again; create a new profile",
		             o->name, o->user, when);
		rc = -PROF_EREVOKED;
		goto out;
	}
	if (l->info.expires_ms > 0 && prof_now_ms() >= l->info.expires_ms) {
		prof_iso_time(l->info.expires_ms, when, sizeof(when));
		gb_set_error(err, errlen,
		             "profile %s of user %s expired at %s and can no longer be "
		             "opened; it is purged now",
		             o->name, o->user, when);
		rc = -PROF_EEXPIRED;
		goto out;
	}
	if (!o->readonly) {
		snprintf(holder, sizeof(holder), "%s",
		         o->holder && o->holder[0] ? o->holder : "glassbox");
		rc = take_hold(db, l, holder, err, errlen);
		if (rc < 0)
			goto out;
		l->db = db; /* the hold lives as long as this handle */
		db = NULL;
	}
	rc = unwrap_key(l, wrapped, wrapped_len, err, errlen);
	if (rc == 0)
		rc = make_dir(l, err, errlen);
	if (rc == 0 && l->info.version > 0)
		rc = unseal_into_dir(l, err, errlen);
	if (rc == 0)
		prof_db_touch(l->db ? l->db : db, l->info.id, prof_now_ms());
out:
	free(wrapped);
	prof_db_close(db);
	if (rc == -PROF_EEXPIRED)
		prof_sweep(data_dir, NULL, NULL, 0);
	if (rc < 0) {
		prof_lease_close(l);
		return rc;
	}
	*out = l;
	return 0;
}

const char *prof_lease_dir(const struct prof_lease *l)
{
	return l->dir;
}

const struct prof_info *prof_lease_info(const struct prof_lease *l)
{
	return &l->info;
}

int prof_lease_readonly(const struct prof_lease *l)
{
	return l->readonly;
}

/* ---- save ------------------------------------------------------------------- */

/* Seals l->dir into a new temp file in blob_dir (path in tmp). */
static int seal_to_temp(struct prof_lease *l, int64_t version, const char *blob_dir, char *tmp,
                        size_t tmplen, int64_t *size, char *err, size_t errlen)
{
	struct prof_sealer *s = NULL;
	char ad[512];
	char rnd[17];
	struct stat st;
	int fd;
	int rc;

	gb_random_hex(rnd, 8);
	if (gb_pathf(tmp, tmplen, "%s/.%s.%lld.%s.tmp", blob_dir, l->info.id, (long long)version,
	             rnd) < 0)
		return -PROF_EINVAL;
	fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0) {
		gb_set_io_error(err, errlen, "create", tmp, errno);
		return -PROF_EIO;
	}
	prof_blob_ad(l->info.tenant, l->info.user, l->info.id, version, ad, sizeof(ad));
	rc = prof_sealer_new(l->key, ad, fd_write, &fd, &s);
	if (rc == 0) {
		rc = prof_archive_dir(l->dir, sealer_write, s, NULL, err, errlen);
		if (rc == 0) {
			rc = prof_sealer_finish(s);
			s = NULL;
		}
	}
	prof_sealer_free(s);
	if (rc == 0 && fsync(fd) != 0)
		rc = -errno;
	if (rc == 0 && fstat(fd, &st) == 0)
		*size = (int64_t)st.st_size;
	close(fd);
	if (rc < 0) {
		if (err && !err[0])
			gb_set_io_error(err, errlen, "write the sealed profile", tmp, -rc);
		unlink(tmp);
		return -PROF_EIO;
	}
	return 0;
}

int prof_lease_save(struct prof_lease *l, int64_t *new_version, char *err, size_t errlen)
{
	char blob_dir[4096];
	char rel[256];
	char tmp[4096];
	char final[4096];
	int64_t version = l->info.version + 1;
	int64_t size = 0;
	int rc;

	if (err && errlen)
		err[0] = '\0';
	if (l->readonly || l->hold_pid == 0 || !l->db) {
		gb_set_error(err, errlen,
		             "profile %s was opened read-only: a read-only copy is never "
		             "sealed back",
		             l->info.name);
		return -PROF_EINVAL;
	}
	if (!l->dir[0]) {
		gb_set_error(err, errlen, "profile %s has no unsealed state to save", l->info.name);
		return -PROF_EINVAL;
	}
	snprintf(rel, sizeof(rel), "tenants/%s/profiles", l->info.tenant);
	rc = gb_fs_mkdirs(l->data_dir, rel, err, errlen);
	if (rc < 0 || gb_pathf(blob_dir, sizeof(blob_dir), "%s/%s", l->data_dir, rel) < 0 ||
	    prof_blob_path(l->data_dir, l->info.tenant, l->info.id, version, final, sizeof(final)) <
	        0) {
		rc = -PROF_EIO;
		goto out;
	}
	rc = seal_to_temp(l, version, blob_dir, tmp, sizeof(tmp), &size, err, errlen);
	if (rc < 0)
		goto out;
	/* a leftover <id>.<v+1> of a save that never committed is not a good
	 * version: replace it */
	if (gb_fs_publish_replace(tmp, final, blob_dir, err, errlen) < 0) {
		rc = -PROF_EIO;
		goto out;
	}
	rc = prof_db_commit(l->db, l->info.id, version, size, l->hold_pid, l->hold_since_ms,
	                    prof_now_ms(), err, errlen);
	if (rc != 0) {
		unlink(final);
		gb_fs_sync_dir(blob_dir, NULL, 0);
		if (rc == 1) {
			gb_set_error(
			    err, errlen,
			    "profile %s of user %s was not saved: it was revoked, "
			    "deleted or taken over while this session had it; version %lld stays "
			    "as it was",
			    l->info.name, l->info.user, (long long)l->info.version);
			rc = -PROF_EBUSY;
		}
		goto out;
	}
	prof_remove_blobs(l->data_dir, l->info.tenant, l->info.id, version);
	l->info.version = version;
	l->info.size_bytes = size;
	if (new_version)
		*new_version = version;
out:
	return rc;
}

void prof_lease_close(struct prof_lease *l)
{
	if (!l)
		return;
	wipe_dir(l);
	if (l->hold_pid > 0 && l->db)
		prof_db_release(l->db, l->info.id, l->hold_pid, l->hold_since_ms);
	prof_db_close(l->db); /* and with it the handle the hold was named after */
	sodium_memzero(l->key, sizeof(l->key));
	free(l);
}

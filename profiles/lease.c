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
 * With an object store (objects.c) the sealed temp file is put there as
 * an object named by its digest instead of being renamed, and the commit
 * names the digest; an open reads whichever the metadata names.
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

	if (prof_tenant_key(l->data_dir, l->info.tenant, tkey, err, errlen) < 0)
		return -PROF_EKEY;
	prof_key_ad(l->info.tenant, l->info.user, l->info.id, ad, sizeof(ad));
	if (prof_open_small(tkey, ad, wrapped, wrapped_len, &plain, &plain_len) != 0 ||
	    plain_len != PROF_KEY_BYTES) {
		gb_set_error(
		    err, errlen,
		    "the data key of profile %s of user %s does not open with "
		    "tenant %s's key: the metadata was altered or copied from elsewhere%s",
		    l->info.name, l->info.user, l->info.tenant,
		    prof_object_store()
		        ? ", or the profile was created by a glassbox without the object "
		          "store (under its data dir's tenant key instead of the shared one), "
		          "or the tenant key in the object store was replaced"
		        : "");
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

/* A sealed stream held in memory (a version read from the object store). */
struct mem_in {
	const unsigned char *data;
	size_t len;
	size_t pos;
};

static ssize_t mem_read(void *user, void *buf, size_t n)
{
	struct mem_in *m = user;

	if (n > m->len - m->pos)
		n = m->len - m->pos;
	memcpy(buf, m->data + m->pos, n);
	m->pos += n;
	return (ssize_t)n;
}

/* Opens version l->info.version's sealed bytes for reading: the object
 * the metadata names (its bytes in *mem, which the caller frees, read
 * through *mi), else the file of the data dir (*fd, which the caller
 * closes; -1 otherwise). Returns 0 or -PROF_* with err. */
static int open_sealed(struct prof_lease *l, struct mem_in *mi, unsigned char **mem, int *fd,
                       char *err, size_t errlen)
{
	char path[4096];
	int rc;

	*mem = NULL;
	*fd = -1;
	if (l->info.sealed_sha256[0]) {
		rc = prof_object_get(&l->info, mem, &mi->len, err, errlen);
		mi->data = *mem;
		mi->pos = 0;
		return rc;
	}
	if (prof_blob_path(l->data_dir, l->info.tenant, l->info.id, l->info.version, path,
	                   sizeof(path)) < 0)
		return -PROF_EINVAL;
	*fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	if (*fd < 0) {
		gb_set_error(
		    err, errlen,
		    "version %lld of profile %s of user %s is missing (%s): "
		    "restore DATA/tenants/%s/profiles/ from a backup, or delete the profile",
		    (long long)l->info.version, l->info.name, l->info.user, strerror(errno),
		    l->info.tenant);
		return -PROF_EBADMSG;
	}
	return 0;
}

/* Unseals version l->info.version into l->dir and checks the stream to
 * its end. */
static int unseal_into_dir(struct prof_lease *l, char *err, size_t errlen)
{
	struct prof_unsealer *u = NULL;
	struct mem_in mi = { 0 };
	unsigned char *mem = NULL;
	char ad[512];
	char xerr[512] = "";
	unsigned char rest[4096];
	ssize_t r;
	int fd = -1;
	int rc;

	rc = open_sealed(l, &mi, &mem, &fd, err, errlen);
	if (rc < 0)
		return rc;
	prof_blob_ad(l->info.tenant, l->info.user, l->info.id, l->info.version, ad, sizeof(ad));
	if (mem)
		rc = prof_unsealer_new(l->key, ad, mem_read, &mi, &u);
	else
		rc = prof_unsealer_new(l->key, ad, fd_read, &fd, &u);
	if (rc == 0)
		rc = prof_extract(unsealer_read, u, l->dir, PROF_MAX_STATE_BYTES, xerr,
		                  sizeof(xerr));
	while (rc == 0 && (r = prof_unsealer_read(u, rest, sizeof(rest))) != 0)
		if (r < 0)
			rc = (int)r;
	prof_unsealer_free(u);
	if (fd >= 0)
		close(fd);
	free(mem);
	sodium_memzero(rest, sizeof(rest));
	if (rc == -EBADMSG || rc == -EINVAL) {
		gb_set_error(err, errlen,
		             "version %lld of profile %s of user %s does not open: its "
		             "sealed %s was altered, truncated, or put there from another profile, "
		             "tenant or version; it is left as it is (restore it from a backup, or "
		             "delete the profile)",
		             (long long)l->info.version, l->info.name, l->info.user,
		             l->info.sealed_sha256[0] ? "object in the object store" : "file");
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
	rc = prof_object_reachable(&l->info, err, errlen);
	if (rc < 0)
		goto out;
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

/* Puts the sealed temp file tmp into the object store (sha256 gets the
 * digest that names it) and removes the file. */
static int publish_object(struct prof_lease *l, int64_t version, const char *tmp, int64_t size,
                          char sha256[65], char *err, size_t errlen)
{
	unsigned char *data = NULL;
	size_t len = 0;
	int rc = -PROF_EIO;

	if (size > (int64_t)PROF_MAX_OBJECT_BYTES)
		gb_set_error(err, errlen,
		             "profile %s of user %s is %lld MiB sealed, more than the %u MiB an "
		             "object of the object store may hold: it was not saved, the last "
		             "good version stays",
		             l->info.name, l->info.user, (long long)(size >> 20),
		             PROF_MAX_OBJECT_BYTES >> 20);
	else if (gb_fs_read_file(tmp, PROF_MAX_OBJECT_BYTES, &data, &len, err, errlen) == 0)
		rc = prof_object_put(&l->info, version, data, len, sha256, err, errlen);
	free(data);
	unlink(tmp);
	return rc;
}

/* Publishes the sealed temp file tmp as version: the object store's
 * object (sha256 filled) or DATA/tenants/<t>/profiles/<id>.<v>.sealed
 * (sha256 ""; its path in final). */
static int publish_version(struct prof_lease *l, int64_t version, const char *tmp, int64_t size,
                           const char *blob_dir, char *final, size_t finallen, char sha256[65],
                           char *err, size_t errlen)
{
	sha256[0] = '\0';
	final[0] = '\0';
	if (prof_object_store())
		return publish_object(l, version, tmp, size, sha256, err, errlen);
	if (prof_blob_path(l->data_dir, l->info.tenant, l->info.id, version, final, finallen) < 0) {
		unlink(tmp);
		return -PROF_EIO;
	}
	/* a leftover <id>.<v+1> of a save that never committed is not a good
	 * version: replace it */
	if (gb_fs_publish_replace(tmp, final, blob_dir, err, errlen) < 0) {
		final[0] = '\0';
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
	char sha256[65];
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
	if (rc < 0 || gb_pathf(blob_dir, sizeof(blob_dir), "%s/%s", l->data_dir, rel) < 0) {
		rc = -PROF_EIO;
		goto out;
	}
	rc = seal_to_temp(l, version, blob_dir, tmp, sizeof(tmp), &size, err, errlen);
	if (rc < 0)
		goto out;
	rc = publish_version(l, version, tmp, size, blob_dir, final, sizeof(final), sha256, err,
	                     errlen);
	if (rc < 0)
		goto out;
	rc = prof_db_commit(l->db, l->info.id, version, size, sha256[0] ? sha256 : NULL,
	                    l->hold_pid, l->hold_since_ms, prof_now_ms(), err, errlen);
	if (rc != 0) {
		/* an object put for it stays unnamed: it opens with this
		 * version's additional data only, which no commit names */
		if (final[0]) {
			unlink(final);
			gb_fs_sync_dir(blob_dir, NULL, 0);
		}
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
	/* the versions before it, and on disk every file once it is in the
	 * object store */
	prof_remove_blobs(l->data_dir, l->info.tenant, l->info.id, sha256[0] ? -1 : version);
	if (sha256[0])
		prof_object_prune(l->info.tenant, l->info.id, sha256, l->info.sealed_sha256);
	l->info.version = version;
	l->info.size_bytes = size;
	snprintf(l->info.sealed_sha256, sizeof(l->info.sealed_sha256), "%s", sha256);
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

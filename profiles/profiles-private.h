/*
 * profiles-private.h - the pieces of profiles/ behind profiles.h: the
 * sealed stream (seal.c), the archive of a user-data-dir (archive.c) and
 * the metadata table (meta.c). Private to profiles/ (and its tests).
 */
#ifndef GB_PROFILES_PRIVATE_H
#define GB_PROFILES_PRIVATE_H

#include "profiles/keys.h"
#include "profiles/profiles.h"

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct blob_store;

/* ---- the sealed stream (seal.c) ------------------------------------------
 * File format, version 1:
 *   "GBPROF\0\1"                   8 bytes: magic and format version
 *   secretstream header            24 bytes
 *   chunks, each:  u32 big-endian length L (17 .. PROF_CHUNK_BYTES + 17),
 *                  then L bytes of crypto_secretstream_xchacha20poly1305
 *                  ciphertext of up to PROF_CHUNK_BYTES of plaintext
 * The last chunk carries TAG_FINAL and nothing may follow it. Every chunk
 * is authenticated with the same additional data (prof_blob_ad()). */
#define PROF_CHUNK_BYTES (64u * 1024u)
#define PROF_BLOB_MAGIC "GBPROF\0\1"
#define PROF_BLOB_MAGIC_BYTES 8u

/* Moves bytes: returns n (all of them) or a negative errno. */
typedef int (*prof_write_fn)(void *user, const void *buf, size_t n);
/* Reads up to n bytes: returns the count (0 at end) or a negative errno. */
typedef ssize_t (*prof_read_fn)(void *user, void *buf, size_t n);

struct prof_sealer;
struct prof_unsealer;

/* Starts a sealed stream to out (borrowed callback): writes the header.
 * key and ad are copied. Returns 0 or a negative errno. */
int prof_sealer_new(const unsigned char key[PROF_KEY_BYTES], const char *ad, prof_write_fn out,
                    void *user, struct prof_sealer **sealer);
/* Buffers and seals data in PROF_CHUNK_BYTES chunks. */
int prof_sealer_write(struct prof_sealer *s, const void *buf, size_t n);
/* Seals the last chunk (TAG_FINAL) and frees s. Returns 0 or an error
 * from the writer. */
int prof_sealer_finish(struct prof_sealer *s);
/* Frees s without finishing (the output is then incomplete). NULL ok. */
void prof_sealer_free(struct prof_sealer *s);

/* Starts reading a sealed stream from in: checks the magic and reads the
 * header. Returns 0, -EBADMSG (not a sealed profile) or the reader's error. */
int prof_unsealer_new(const unsigned char key[PROF_KEY_BYTES], const char *ad, prof_read_fn in,
                      void *user, struct prof_unsealer **u);
/* Reads up to n bytes of plaintext. Returns the count, 0 once the final
 * chunk was read and nothing follows it, or -EBADMSG (a chunk does not
 * authenticate, a length is out of range, the stream ends before its
 * final chunk or goes on after it). */
ssize_t prof_unsealer_read(struct prof_unsealer *u, void *buf, size_t n);
/* Frees u (wiping its buffers). NULL ok. */
void prof_unsealer_free(struct prof_unsealer *u);

/* The additional data binding a blob to its place:
 * "glassbox profile|v1|<tenant>|<user>|<id>|<version>". */
void prof_blob_ad(const char *tenant, const char *user, const char *id, int64_t version, char *ad,
                  size_t adlen);
/* The additional data binding a wrapped data key to its profile. */
void prof_key_ad(const char *tenant, const char *user, const char *id, char *ad, size_t adlen);

/* ---- the archive of a user-data-dir (archive.c) -------------------------- */

/* 1 when a dir entry of a user-data-dir is left out of the archive
 * (caches, crash dumps, lock files, DevToolsActivePort). */
int prof_archive_skip(const char *name);

/* Writes dir's regular files and directories (symlinks and other kinds
 * are left out, as are prof_archive_skip() names) as a tar stream to out.
 * *bytes (may be NULL) gets the bytes of file content written. Returns 0
 * or a negative errno with the reason in err. */
int prof_archive_dir(const char *dir, prof_write_fn out, void *user, uint64_t *bytes, char *err,
                     size_t errlen);

/* Unpacks a tar stream from in into dir (an existing empty private dir):
 * regular files (0600) and directories (0700) only, relative paths of
 * safe components (no "..", no absolute path, no link of any kind), at
 * most max_bytes of content in all. Anything else is refused with
 * -EBADMSG; what was unpacked so far stays for the caller to remove.
 * Returns 0 or a negative errno with the reason in err. */
int prof_extract(prof_read_fn in, void *user, const char *dir, uint64_t max_bytes, char *err,
                 size_t errlen);

/* 1 when rel (a path inside an archive) is a relative path of safe
 * components; a single trailing '/' is allowed. */
int prof_archive_path_ok(const char *rel);

/* ---- sealed profiles in the object store (objects.c) --------------------- */

/* Most bytes of one sealed version in the object store (read and written
 * whole). */
#define PROF_MAX_OBJECT_BYTES (512u * 1024u * 1024u)

/* The process's object store (prof_use_object_store), or NULL. */
struct blob_store *prof_object_store(void);

/* tenant's key: the one shared through the object store when there is
 * one (published from this data dir the first time), else this data dir's
 * (prof_keys_tenant_key). Returns 0 or a negative errno with err. */
int prof_tenant_key(const char *data_dir, const char *tenant, unsigned char key[PROF_KEY_BYTES],
                    char *err, size_t errlen);

/* Puts version's sealed bytes (borrowed) of profile p as the object named
 * by their SHA-256 (hex into sha256), unless it is there. Returns 0,
 * -PROF_EINVAL or -PROF_EIO with err. */
int prof_object_put(const struct prof_info *p, int64_t version, const unsigned char *data,
                    size_t len, char sha256[65], char *err, size_t errlen);

/* 0 when p's newest version can be read here: a file of the data dir, or
 * an object and this process has the object store; else -PROF_EIO with
 * what to do in err. */
int prof_object_reachable(const struct prof_info *p, char *err, size_t errlen);

/* Reads the object p->sealed_sha256 names (version p->version) into a
 * malloc'd buffer and checks its digest. Returns 0, -PROF_EBADMSG
 * (missing, altered, too large, or a digest that names no object) or
 * -PROF_EIO (no object store here, or it failed), with err. */
int prof_object_get(const struct prof_info *p, unsigned char **data, size_t *len, char *err,
                    size_t errlen);

/* Removes from the object store every version of profile id of tenant
 * but the ones whose digests are keep_a and keep_b (NULL or "": none).
 * Without an object store it does nothing. A version that cannot be
 * removed is logged and left: it costs space, never a profile. */
void prof_object_prune(const char *tenant, const char *id, const char *keep_a, const char *keep_b);

/* ---- metadata (meta.c) --------------------------------------------------- */

struct prof_db;

/* Opens DATA/glassbox.db (creating table prof_profiles). */
int prof_db_open(const char *data_dir, struct prof_db **out, char *err, size_t errlen);
void prof_db_close(struct prof_db *db);

int prof_db_insert(struct prof_db *db, const struct prof_info *p, const unsigned char *wrapped,
                   size_t wrapped_len, char *err, size_t errlen);
/* Looks up by (tenant, user, name); *wrapped (may be NULL) gets a malloc'd
 * copy of the wrapped data key, NULL when revoked. */
int prof_db_get(struct prof_db *db, const char *tenant, const char *user, const char *name,
                struct prof_info *out, unsigned char **wrapped, size_t *wrapped_len, char *err,
                size_t errlen);
/* Every profile of tenant (and user, unless NULL); NULL tenant: every
 * profile of every tenant (for the sweeper). *out malloc'd. */
int prof_db_list(struct prof_db *db, const char *tenant, const char *user, struct prof_info **out,
                 size_t *n, char *err, size_t errlen);
int prof_db_delete(struct prof_db *db, const char *id, char *err, size_t errlen);
int prof_db_revoke(struct prof_db *db, const char *id, int64_t now_ms, char *err, size_t errlen);
/* Takes the hold for (holder, pid) when free, or held by a process that
 * is gone (stale_pid/stale_since name the hold being replaced; 0 when it
 * was free). Returns 0, or 1 when someone else got it first. */
int prof_db_hold(struct prof_db *db, const char *id, const char *holder, int64_t pid,
                 int64_t since_ms, int64_t stale_pid, int64_t stale_since_ms, char *err,
                 size_t errlen);
/* Releases the hold if (pid, since) still has it. */
int prof_db_release(struct prof_db *db, const char *id, int64_t pid, int64_t since_ms);
/* Commits version new_version if the profile is still at new_version - 1,
 * held by (pid, since) and not revoked. sealed_sha256 (borrowed) names
 * its object in the object store, NULL when it is a file of the data dir.
 * Returns 0, or 1 when it is not. */
int prof_db_commit(struct prof_db *db, const char *id, int64_t new_version, int64_t size,
                   const char *sealed_sha256, int64_t pid, int64_t since_ms, int64_t now_ms,
                   char *err, size_t errlen);
int prof_db_touch(struct prof_db *db, const char *id, int64_t now_ms);
/* 1 when the process recorded as holding profile id is alive (also when
 * that cannot be told: a live hold is never taken over). */
int prof_db_holder_alive(struct prof_db *db, const char *id);

/* 1 when process pid (of this machine) is alive. */
int prof_pid_alive(int64_t pid);

/* DATA/tenants/<t>/profiles/<id>.<version>.sealed into path. */
int prof_blob_path(const char *data_dir, const char *tenant, const char *id, int64_t version,
                   char *path, size_t pathlen);
/* Removes every blob of profile id (all versions, temp files too). */
void prof_remove_blobs(const char *data_dir, const char *tenant, const char *id,
                       int64_t keep_version);

/* Wall-clock milliseconds. */
int64_t prof_now_ms(void);

/* profiles.c: checks tenant, user and name (name may be NULL). */
int prof_check_names(const char *tenant, const char *user, const char *name, char *err,
                     size_t errlen);
/* "2026-11-29T18:20:01Z" for ms since the epoch. */
void prof_iso_time(int64_t ms, char *buf, size_t len);

#endif

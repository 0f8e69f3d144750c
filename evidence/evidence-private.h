/*
 * evidence-private.h - helpers shared by the files of evidence/ and
 * reachable from its unit test; other modules include evidence.h only.
 */
#ifndef GB_EVIDENCE_PRIVATE_H
#define GB_EVIDENCE_PRIVATE_H

#include "common/fs.h"
#include "common/unittest.h"

#include <jansson.h>
#include <pthread.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct stat;

struct evid_store;
struct evid_audit;
struct evid_png_info;

/* Largest metadata record read back or written, bytes. */
#define EVID_MAX_META_BYTES (1024u * 1024u)

/* 1 when hex is exactly 64 lowercase hex digits. */
int evid_sha256_hex_is_valid(const char *hex);

/* sha256 of data[0..len) as 64 lowercase hex digits + NUL into hex[65]. */
void evid_sha256_hex(const unsigned char *data, size_t len, char hex[65]);

/* ---- PNG validation (png.c) ---------------------------------------------- */

/* evid_png_check() of png[0..len), whose sha256 (hex) the caller computed
 * over those bytes: bytes that passed the full decode lately pass again
 * without another one (and fill info as it did). Anything else is decoded
 * whole, and remembered when it passes. sha256 not valid hex: a plain
 * evid_png_check(). Returns what evid_png_check() does. */
int evid_png_check_hashed(const unsigned char *png, size_t len, const char *sha256,
                          struct evid_png_info *info, char *err, size_t errlen);

#ifdef GB_UNITTEST_BUILD
/* png.c: how many full decodes evid_png_check() ran in this process */
unsigned long long evid_png_decodes(void);
#endif

/* ---- fitting a record under its ceiling (truncate.c) -------------------- */

/* Bytes of a cut string kept in clear, as its "head". */
#define EVID_TRUNCATE_HEAD_BYTES 256u

/*
 * A copy of j (borrowed) whose canonical JSON is at most max_bytes: j
 * itself when it fits (*truncated 0); otherwise (*truncated 1) with
 * values replaced by markers {"truncated": true, "sha256", "length"} (and
 * "head" for a string): first every string over 4 KiB, then the largest
 * members of a top-level object, then, if need be, j as a whole. New
 * reference, or NULL when out of memory.
 */
json_t *evid_json_fit(const json_t *j, size_t max_bytes, int *truncated);

/* ---- canonical JSON and the Ed25519 key pair (audit_record.c, keys.c) ---- */

struct evid_index;

/* The canonical text of j: JSON_COMPACT | JSON_SORT_KEYS, malloc'd (NULL
 * when out of memory). Hashes and signatures are computed over it. */
char *evid_json_canonical(const json_t *j);

/* The key pair the audit trail signs with. */
struct evid_keypair {
	unsigned char pk[32];
	unsigned char sk[64];
	char key_id[17];
};

/* Loads DATA/keys/audit.key, creating the pair on first use (two processes
 * racing agree on one), and (re)writes DATA/keys/audit.pub. Refuses a key
 * file readable by others. */
int evid_keys_load_or_create(const char *data_dir, struct evid_keypair *kp, char *err,
                             size_t errlen);

/* The first 8 bytes of sha256(pk) as 16 hex digits. */
void evid_key_id(const unsigned char pk[32], char key_id[17]);

/* ---- audit records (audit_record.c) ------------------------------------- */

#define EVID_ZERO_HASH "0000000000000000000000000000000000000000000000000000000000000000"

/* A parsed record line; members borrow from rec. */
struct evid_record {
	json_t *rec; /* owned */
	uint64_t seq;
	const char *time;
	const char *tenant;
	const char *kind;
	const char *session;   /* NULL when null */
	const char *operation; /* NULL when null */
	json_t *body;
	json_t *artifacts;
	const char *prev_hash;
	const char *key_id;
	const char *hash;
	const char *sig;
};

/* Parses one line (without its '\n') and checks every member's type and
 * that the line is in canonical form. 0, or -1 with why. */
int evid_record_parse(const char *line, size_t len, struct evid_record *r, char *why,
                      size_t whylen);

void evid_record_free(struct evid_record *r);

/* sha256 hex of the canonical JSON of rec without hash and sig; the
 * signature input (the same canonical bytes) is returned in *signed_text
 * when not NULL (malloc'd). 0 or -1 (out of memory). */
int evid_record_digest(json_t *rec, char hash[65], char **signed_text);

/* 1 when sig (base64) is pk's Ed25519 signature of text. */
int evid_sig_verify(const char *sig_b64, const char *text, const unsigned char pk[32]);

/* Signs text with kp into sig_b64 (at least 100 bytes). */
void evid_sig_make(const struct evid_keypair *kp, const char *text, char *sig_b64, size_t len);

/* ---- audit files (audit_files.c) ---------------------------------------- */

#define EVID_DAY_NAME_BYTES 32 /* "YYYY-MM-DD.jsonl" + NUL, with room */

/* DATA/tenants/<tenant>/audit into buf; -EVID_EINVAL for a bad tenant or
 * a path too long (err says which). */
int evid_audit_dir_path(const char *data_dir, const char *tenant, char *buf, size_t buflen,
                        char *err, size_t errlen);

/* 1 when name is "YYYY-MM-DD.jsonl". */
int evid_is_day_file(const char *name);

/* The day files in dir, sorted (oldest first), into a malloc'd array.
 * A missing dir gives -EVID_ENOENT. */
int evid_audit_list_days(const char *dir, char (**names)[EVID_DAY_NAME_BYTES], size_t *n, char *err,
                         size_t errlen);

/* Called for each line of a file: line (not NUL-terminated, without
 * '\n'), its 1-based number, complete (ended by '\n'), too_long (longer
 * than EVID_AUDIT_MAX_RECORD_BYTES: line then holds a prefix). Non-zero
 * stops the reading and is returned. */
typedef int (*evid_line_cb)(const char *line, size_t len, unsigned long lineno, int complete,
                            int too_long, void *user);

/* Reads path line by line with a bounded buffer. Returns 0, what cb
 * returned, or a negative evid_err with err. */
int evid_read_lines(const char *path, evid_line_cb cb, void *user, char *err, size_t errlen);

/* Runs cb over the lines of every day file of tenant's log, oldest first,
 * under the log's shared lock; since ("YYYY-MM-DD...", may be NULL) skips
 * the days before it. Returns 0, what cb returned, or a negative
 * evid_err with err (-EVID_ENOENT: the tenant has no log). records.c. */
int evid_tenant_each_line(const char *data_dir, const char *tenant, const char *since,
                          evid_line_cb cb, void *user, char *err, size_t errlen);

/* Takes a shared flock on dir/.lock when it exists (readers); returns the
 * fd to close, or -1 when there is no lock file. */
int evid_audit_lock_shared(const char *dir);

/* Path of an artifact (valid: artifacts/, else invalid/). */
int evid_artifact_path(const char *data_dir, const char *tenant, int valid, const char *sha256,
                       char *buf, size_t buflen);

/* Reads an artifact and checks that it hashes to sha256: 0, -EVID_ENOENT
 * (missing), -EVID_EIO (*changed, may be NULL, set to 1 when it does not
 * match its hash). */
int evid_artifact_load(const char *data_dir, const char *tenant, int valid, const char *sha256,
                       unsigned char **data, size_t *len, int *changed, char *err, size_t errlen);

/* A set of artifact keys: 'v' (valid) or 'i' (invalid) followed by the
 * sha256 hex (65 characters + NUL). Zero-initialise before use. */
struct evid_keyset {
	char (*slot)[66];
	size_t cap; /* a power of two */
	size_t n;
};

/* Adds key: 1 when it was there, 0 added, -1 out of memory. */
int evid_keyset_add(struct evid_keyset *s, const char *key);
int evid_keyset_has(const struct evid_keyset *s, const char *key);
void evid_keyset_free(struct evid_keyset *s);

/* ---- the signed head (audit_record.c) ----------------------------------- */

struct evid_head {
	uint64_t seq;
	char hash[65];
	char key_id[17];
};

/* Reads and checks DATA/.../audit/head.json: 0, -EVID_ENOENT, or
 * -EVID_EIO with why (bad signature, not JSON). pk NULL: no signature
 * check. */
int evid_head_read(const char *dir, const unsigned char *pk, struct evid_head *h, char *why,
                   size_t whylen);

/* Writes head.json atomically, signed with kp: a temp file, synced, then
 * renamed over it. The dir is synced only when head.json is new; a
 * replacement's rename becomes durable with the file system's next
 * commit, so after a crash head.json is this head or an earlier one. */
int evid_head_write(const char *dir, const char *tenant, const struct evid_keypair *kp,
                    uint64_t seq, const char *hash, char *err, size_t errlen);

/* ---- group commit of a tenant's log (audit_commit.c) -------------------- */

/* Called by the writer that made records up to seq durable, before any
 * of them is acknowledged, with the log's mutex released (calls are never
 * concurrent and seq only grows): audit.c writes head.json there. */
typedef void (*evid_commit_head_fn)(void *user, uint64_t seq, const char hash[65]);

/* A writer waiting in evid_commit_wait_locked() for its record: the
 * sync that covers it, or cuts it off, tells it here. */
struct evid_commit_waiter {
	uint64_t seq; /* its record */
	int outcome;  /* 0 not yet, 1 durable, -1 cut off */
	struct evid_commit_waiter *next;
};

/* The day file a tenant's records go to and how much of it is durable.
 * Every member is guarded by the tenant log's mutex, which each call
 * below is given or must hold. */
struct evid_commit {
	pthread_cond_t cond;            /* broadcast when a batch ends or is cut */
	int fd;                         /* the day file, O_APPEND; -1 */
	char file[EVID_DAY_NAME_BYTES]; /* its name; "" when none */
	char dir[4096];                 /* the audit dir it is in */
	char path[4096 + EVID_DAY_NAME_BYTES];
	uint64_t written_seq;               /* newest record written to fd */
	char written_hash[65];              /* its hash */
	off_t written_size;                 /* fd's size after it */
	uint64_t synced_seq;                /* newest record known durable */
	off_t synced_size;                  /* fd's size when it was */
	uint64_t gen;                       /* bumped when unsynced records are cut off */
	char cut_reason[512];               /* why they were */
	int cut;                            /* records were cut: the caller re-reads the tail */
	int syncing;                        /* a leader syncs, the mutex released */
	int draining;                       /* writers waiting to sync with the mutex kept */
	struct evid_commit_waiter *waiters; /* each told by the sync that settles it */
	evid_commit_head_fn head_fn;
	void *head_user;
};

/* Initialises c (no file open); head_fn may be NULL. */
void evid_commit_init(struct evid_commit *c, evid_commit_head_fn head_fn, void *head_user);

/* Closes the file and frees c's condition; nothing may be waiting. */
void evid_commit_destroy(struct evid_commit *c);

/* 1 when no record waits for a sync and no sync runs. */
int evid_commit_idle_locked(const struct evid_commit *c);

/* Makes every record written so far durable before returning, with the
 * mutex held again: waits for a running sync (the mutex is released
 * while it does), then syncs what is left without releasing it. Returns
 * 0, or -EVID_EIO when that sync failed (the records were cut off). */
int evid_commit_drain_locked(struct evid_commit *c, pthread_mutex_t *lock, char *err,
                             size_t errlen);

/* Makes dir/name (borrowed) the file records go to, opening (creating)
 * it unless it is already; a switch drains the old file first. *st is
 * the file's state now. Returns 0 or -EVID_EIO with err. */
int evid_commit_use_file_locked(struct evid_commit *c, pthread_mutex_t *lock, const char *dir,
                                const char *name, struct stat *st, char *err, size_t errlen);

/* Closes the file (re-read from disk next time); only when idle. */
void evid_commit_close_locked(struct evid_commit *c);

/* Appends line[0..len) (one whole record with its '\n') as record seq
 * with hash, without syncing; cut back off on failure, so the file holds
 * all of it or none. The first record of a new file makes its name
 * durable first. *after is the file's state after it, *gen what to pass
 * to evid_commit_wait_locked(). Returns 0 or -EVID_EIO with err. */
int evid_commit_write_locked(struct evid_commit *c, const char *line, size_t len, uint64_t seq,
                             const char hash[65], struct stat *after, uint64_t *gen, char *err,
                             size_t errlen);

/* Returns once record seq (written in gen) is durable: 0; or -EVID_EIO
 * with err when the sync that should have covered it failed and it was
 * cut off. Leads the next batch's sync itself when none runs (the mutex
 * is released while it syncs or waits). */
int evid_commit_wait_locked(struct evid_commit *c, pthread_mutex_t *lock, uint64_t gen,
                            uint64_t seq, char *err, size_t errlen);

#ifdef GB_UNITTEST_BUILD
/* Replaces the sync of a batch (NULL: fdatasync again); set it while no
 * log is written. */
void evid_commit_set_sync(int (*fn)(int fd));
#endif

/* ---- store internals shared with the audit side ------------------------- */

/* The index the store records into (NULL when it has none). */
struct evid_index *evid_store_index(struct evid_store *s);

/* The store's data dir. */
const char *evid_store_data_dir(const struct evid_store *s);

/* What opening the store or the audit trail on data_dir needs first: a
 * data dir that is set and leaves room for the paths below it, libsodium
 * initialised, and the dir created (with its parents). Returns 0, or a
 * negative code with err: -EVID_EINVAL (no dir, or too long a path),
 * -EVID_EIO (libsodium), or gb_fs_mkdirs_abs's. */
int evid_data_dir_prepare(const char *data_dir, char *err, size_t errlen);

/* ---- the audit handle internals (audit.c) ------------------------------- */

struct evid_audit_entry;
struct evid_audit_receipt;

/* The data dir and key pair of a handle. */
const char *evid_audit_data_dir(const struct evid_audit *a);

/* Runs fn with tenant's log locked (mutex and flock) and its tail loaded;
 * fn may call evid_audit_append_locked(). */
typedef int (*evid_audit_locked_fn)(struct evid_audit *a, const char *tenant, void *user, char *err,
                                    size_t errlen);
int evid_audit_with_lock(struct evid_audit *a, const char *tenant, evid_audit_locked_fn fn,
                         void *user, char *err, size_t errlen);

/* Appends with the tenant's lock held (inside evid_audit_with_lock());
 * allow_purge lets kind "purge" through. */
int evid_audit_append_locked(struct evid_audit *a, const struct evid_audit_entry *e,
                             int allow_purge, struct evid_audit_receipt *receipt, char *err,
                             size_t errlen);

/* Seconds since the epoch as the audit trail sees it (the real clock, or
 * a test's). */
int64_t evid_audit_now(const struct evid_audit *a);

/* "YYYY-MM-DD" of a UTC time into buf (at least 11 bytes). */
void evid_day_of(int64_t t, char *buf, size_t buflen);

/* ---- the object store's layout (ship_layout.c, ship.h) ----------------- */

/* Parses a segment's name, "<first:20>-<last:20>.jsonl". 0 or -1. */
int evid_segment_name_parse(const char *name, uint64_t *first, uint64_t *last);

/* The key of replica's segment first..last of tenant's chain into buf. */
void evid_segment_key(char *buf, size_t buflen, const char *tenant, const char *replica,
                      uint64_t first, uint64_t last);

/* The key of replica's shipped chain head of tenant into buf. */
void evid_segment_head_key(char *buf, size_t buflen, const char *tenant, const char *replica);

/* Called for each object a record references: rel, its path under a data
 * dir, and key, its key in the store (both borrowed). Non-zero stops. */
typedef int (*evid_object_fn)(void *user, const char *rel, const char *key, char *err,
                              size_t errlen);

/* Runs fn over the artifacts (and their metadata records, kept per
 * replica) that rec (borrowed), a record of tenant written by replica,
 * references; entries that name no valid sha256 are skipped. Returns 0
 * or what fn returned. */
int evid_record_objects(const json_t *rec, const char *tenant, const char *replica,
                        evid_object_fn fn, void *user, char *err, size_t errlen);

/* ---- HTML (html.c) ------------------------------------------------------ */

struct gb_buf;

/* Appends s[0..len) HTML-escaped (& < > " ' and control characters);
 * invalid UTF-8 becomes U+FFFD. */
int evid_html_escape(struct gb_buf *b, const char *s, size_t len);

#ifdef GB_UNITTEST_BUILD
/* audit.c: replaces the clock (NULL: the real one) */
void evid_audit_set_clock(struct evid_audit *a, int64_t (*now)(void));
#endif

#endif

/*
 * audit.c - appending to the per-tenant, hash-chained, signed audit log.
 *
 * DESIGN
 * What it owns: DATA/tenants/<t>/audit/ (day files, head.json, .lock) and
 * the audit key pair once loaded (keys.c reads it).
 *
 * Threads: none of its own; session workers append from their threads.
 * The handle keeps one struct tenant_log per tenant that has appended,
 * created on demand and kept until close. Each has a mutex that
 * serialises this process's appends, and an open .lock file that is
 * flock()ed from an append until every record this process wrote is
 * durable, so that another process (the CLI purging, a second replica on
 * the same disk) is serialised too and never reads a record that may
 * still be lost.
 *
 * Group commit (audit_commit.c): a record is built, signed and written
 * under the mutex; the fdatasync that makes it durable runs with the
 * mutex released and covers every record written by then, so concurrent
 * appends (several sessions, a CDP session's records) share one sync and
 * one head.json write. evid_audit_append() returns only once its own
 * record is durable. evid_audit_with_lock() (purge) first makes every
 * record durable and keeps the mutex until it is done.
 *
 * Invariants, for each tenant:
 *   - the log is the concatenation of its day files in name order; each
 *     record's seq is the previous one's + 1 and its prev_hash is the
 *     previous one's hash (64 zeros before the first), across files;
 *   - a record is in the file of its UTC day, or of a later day (when
 *     the clock went back, records go on in the newest file);
 *   - a line is written whole or not at all: one write() in O_APPEND,
 *     and if it fails half-way the file is cut back to its old size;
 *   - head.json names the newest acknowledged record; it is written after
 *     the record's sync and before it is acknowledged, so it never names
 *     more than the log holds. Its rename is made durable at once only
 *     when head.json is created; after a crash it may name an earlier
 *     record than the newest (never a later one).
 * The cached tail (seq, hash, file, size) is re-read from disk whenever
 * the file changed under us (another process appended).
 */
#include "evidence/audit.h"
#include "evidence/evidence-private.h"
#include "evidence/evidence.h"

#include "common/log.h"
#include "common/util.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sodium.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define PATH_BYTES 4096
#define SIG_B64_BYTES 100
#define REDACT_MAX_DEPTH 64
#define AUDIT_MIN_FREE_BYTES (1024ull * 1024ull)
#define TAIL_FIRST_READ_BYTES (64u * 1024u)

/* One tenant's log as this process knows it. */
struct tenant_log {
	struct tenant_log *next; /* {a->lock} */
	char tenant[EVID_MAX_NAME_BYTES + 1];
	char dir[PATH_BYTES];
	const struct evid_keypair *kp; /* immutable: the handle's */
	pthread_mutex_t lock;
	int lock_fd;                         /* {log->lock} .lock; -1 */
	int flocked;                         /* {log->lock} lock_fd is flocked by us */
	struct evid_commit commit;           /* {log->lock} the day file and its syncs */
	int loaded;                          /* {log->lock} the fields below are known */
	uint64_t last_seq;                   /* {log->lock} 0: empty log */
	char last_hash[65];                  /* {log->lock} */
	char last_file[EVID_DAY_NAME_BYTES]; /* {log->lock} "" when empty */
	dev_t dev;                           /* {log->lock} of last_file, as last seen */
	ino_t ino;                           /* {log->lock} */
	off_t size;                          /* {log->lock} */
};

struct evid_audit {
	char *data_dir;         /* immutable */
	struct evid_keypair kp; /* immutable */
	int64_t (*clock)(void); /* immutable after open (tests replace it) */
	pthread_mutex_t lock;
	struct tenant_log *logs; /* {a->lock} */
};

/* Names of body members that always hold credentials. */
static const char *const credential_names[] = {
	"password",      "passwd", "secret",     "token",       "api_key", "apikey",
	"authorization", "cookie", "set-cookie", "private_key", "otp",     NULL,
};

const char *evid_audit_data_dir(const struct evid_audit *a)
{
	return a->data_dir;
}

int64_t evid_audit_now(const struct evid_audit *a)
{
	return a && a->clock ? a->clock() : (int64_t)time(NULL);
}

void evid_day_of(int64_t t, char *buf, size_t buflen)
{
	time_t tt = (time_t)t;
	struct tm tm;

	gmtime_r(&tt, &tm);
	strftime(buf, buflen, "%Y-%m-%d", &tm);
}

#ifdef GB_UNITTEST_BUILD
void evid_audit_set_clock(struct evid_audit *a, int64_t (*now)(void))
{
	a->clock = now;
}
#endif

/* The record's time: the real clock to the millisecond, or a test's. */
static void record_time(const struct evid_audit *a, char *buf, size_t buflen)
{
	time_t t;
	struct tm tm;

	if (!a->clock) {
		gb_utc_iso8601(buf, buflen);
		return;
	}
	t = (time_t)a->clock();
	gmtime_r(&t, &tm);
	strftime(buf, buflen, "%Y-%m-%dT%H:%M:%S.000Z", &tm);
}

int evid_audit_open(const char *data_dir, struct evid_audit **out, char *err, size_t errlen)
{
	struct evid_audit *a = NULL;
	int rc;

	*out = NULL;
	rc = evid_data_dir_prepare(data_dir, err, errlen);
	if (rc != 0)
		goto out;
	a = calloc(1, sizeof(*a));
	if (a)
		a->data_dir = strdup(data_dir);
	if (!a || !a->data_dir) {
		gb_set_error(err, errlen, "out of memory opening the audit trail");
		rc = -EVID_ENOMEM;
		goto out;
	}
	pthread_mutex_init(&a->lock, NULL);
	rc = evid_keys_load_or_create(data_dir, &a->kp, err, errlen);
	if (rc != 0)
		goto out;
	*out = a;
	a = NULL;
out:
	evid_audit_close(a);
	return rc;
}

void evid_audit_close(struct evid_audit *a)
{
	struct tenant_log *log;

	if (!a)
		return;
	while (a->logs) {
		log = a->logs;
		a->logs = log->next;
		if (log->lock_fd >= 0)
			close(log->lock_fd); /* drops the flock with it */
		evid_commit_destroy(&log->commit);
		pthread_mutex_destroy(&log->lock);
		free(log);
	}
	if (a->data_dir)
		pthread_mutex_destroy(&a->lock);
	sodium_memzero(&a->kp, sizeof(a->kp));
	free(a->data_dir);
	free(a);
}

void evid_audit_public_key(const struct evid_audit *a, unsigned char pk[32], char key_id[17])
{
	memcpy(pk, a->kp.pk, 32);
	memcpy(key_id, a->kp.key_id, 17);
}

/* evid_commit_head_fn: head.json names record seq. A head that could
 * not be written leaves an earlier one, which is still true. */
static void write_head(void *user, uint64_t seq, const char hash[65])
{
	struct tenant_log *log = user;
	char herr[512];

	if (evid_head_write(log->dir, log->tenant, log->kp, seq, hash, herr, sizeof(herr)) != 0)
		GB_LOGW("evidence", "record %llu of %s was kept but its head was not updated: %s",
		        (unsigned long long)seq, log->tenant, herr);
}

/* Finds or creates the tenant's log state (tenant already checked). */
static struct tenant_log *get_log(struct evid_audit *a, const char *tenant, char *err,
                                  size_t errlen)
{
	struct tenant_log *log;

	pthread_mutex_lock(&a->lock);
	for (log = a->logs; log; log = log->next)
		if (!strcmp(log->tenant, tenant))
			goto out;
	log = calloc(1, sizeof(*log));
	if (!log) {
		gb_set_error(err, errlen, "out of memory opening the audit log of %s", tenant);
		goto out;
	}
	snprintf(log->tenant, sizeof(log->tenant), "%s", tenant);
	if (evid_audit_dir_path(a->data_dir, tenant, log->dir, sizeof(log->dir), err, errlen) !=
	    0) {
		free(log);
		log = NULL;
		goto out;
	}
	pthread_mutex_init(&log->lock, NULL);
	log->lock_fd = -1;
	log->kp = &a->kp;
	evid_commit_init(&log->commit, write_head, log);
	log->next = a->logs;
	a->logs = log;
out:
	pthread_mutex_unlock(&a->lock);
	return log;
}

/* ---- the tail ------------------------------------------------------------ */

/* Where the last complete line of a file's tail buffer is. */
struct tail_view {
	const char *line; /* NULL: no complete line */
	size_t len;
	size_t torn_at; /* offset in the buffer where a torn last line starts */
	int torn;       /* the file does not end with '\n' */
	int too_long;   /* the last complete line starts before the buffer */
};

/* Finds the last complete line in buf[0..len) (the end of a file). */
static void find_last_line(const char *buf, size_t len, int at_file_start, struct tail_view *v)
{
	size_t end = len;
	size_t start;

	memset(v, 0, sizeof(*v));
	if (len && buf[len - 1] != '\n') {
		v->torn = 1;
		while (end > 0 && buf[end - 1] != '\n')
			end--;
		v->torn_at = end;
	}
	if (end == 0)
		return; /* no '\n' at all */
	end--;          /* the '\n' ending the last complete line */
	start = end;
	while (start > 0 && buf[start - 1] != '\n')
		start--;
	if (start == 0 && !at_file_start) {
		v->too_long = 1; /* the line is longer than the buffer */
		return;
	}
	v->line = buf + start;
	v->len = end - start;
}

/* Cuts path to its first `to` bytes and syncs it. */
static int cut_file(const char *path, off_t to, char *err, size_t errlen)
{
	int fd = open(path, O_RDWR | O_NOFOLLOW | O_CLOEXEC);
	int rc = 0;

	if (fd < 0 || ftruncate(fd, to) != 0 || fsync(fd) != 0) {
		gb_set_io_error(err, errlen, "cut the partial record off", path, errno);
		rc = -EVID_EIO;
	}
	if (fd >= 0)
		close(fd);
	return rc;
}

/* Reads the last complete record of one day file into log. Returns 0 and
 * *found 0 for an empty file. A torn last line is cut off when head.json
 * shows it was never acknowledged (the head names the last whole record,
 * or an earlier one: an acknowledged record is whole on disk, and after a
 * crash the head may be older than the log); otherwise appending is
 * refused. A file that holds nothing but a torn line (a crash while the
 * first record of a new day file was written) is left as it is with
 * *torn_only 1: whether that record was acknowledged is told by the
 * records of the files before it (load_tail). */
static int read_file_tail(struct tenant_log *log, const char *name, const struct evid_head *head,
                          int have_head, int *found, int *torn_only, char *err, size_t errlen)
{
	char path[PATH_BYTES + EVID_DAY_NAME_BYTES];
	struct evid_record r = { 0 };
	struct tail_view v;
	struct stat st;
	char why[256];
	char *buf = NULL;
	size_t want;
	ssize_t got;
	off_t from;
	int fd = -1;
	int rc = 0;

	*found = 0;
	snprintf(path, sizeof(path), "%s/%s", log->dir, name);
	fd = open(path, O_RDWR | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0 || fstat(fd, &st) != 0) {
		gb_set_io_error(err, errlen, "open the audit log", path, errno);
		rc = -EVID_EIO;
		goto out;
	}
	if (st.st_size == 0)
		goto out;
	/* the end of the file: a small read first, all a record may take if
	 * the last line is longer */
	for (want = TAIL_FIRST_READ_BYTES;; want = EVID_AUDIT_MAX_RECORD_BYTES * 2u + 2u) {
		if (want > (size_t)st.st_size)
			want = (size_t)st.st_size;
		from = st.st_size - (off_t)want;
		free(buf);
		buf = malloc(want);
		if (!buf) {
			gb_set_error(err, errlen, "out of memory reading %s", path);
			rc = -EVID_ENOMEM;
			goto out;
		}
		got = pread(fd, buf, want, from);
		if (got != (ssize_t)want) {
			gb_set_io_error(err, errlen, "read the audit log", path,
			                got < 0 ? errno : EIO);
			rc = -EVID_EIO;
			goto out;
		}
		find_last_line(buf, want, from == 0, &v);
		if (v.line || from == 0 || want > TAIL_FIRST_READ_BYTES)
			break;
	}
	if (v.too_long) {
		/* no record is that long: the file is damaged, not empty */
		gb_set_error(err, errlen,
		             "the last line of %s is longer than %u bytes, more than any record "
		             "may be (the log is damaged): appending is refused; run `glassbox "
		             "audit verify --tenant %s` and move the damaged log aside after "
		             "investigating",
		             path, EVID_AUDIT_MAX_RECORD_BYTES * 2u + 1u, log->tenant);
		rc = -EVID_EIO;
		goto out;
	}
	if (v.line && evid_record_parse(v.line, v.len, &r, why, sizeof(why)) != 0) {
		gb_set_error(
		    err, errlen,
		    "the last record of %s is damaged (%s): appending is "
		    "refused; run `glassbox audit verify --tenant %s` and move the damaged "
		    "log aside after investigating",
		    path, why, log->tenant);
		rc = -EVID_EIO;
		goto out;
	}
	if (v.torn && !r.rec && from == 0) {
		*torn_only = 1;
		goto out;
	}
	if (v.torn) {
		if (!r.rec || !have_head || head->seq > r.seq ||
		    (head->seq == r.seq && strcmp(head->hash, r.hash) != 0)) {
			gb_set_error(err, errlen,
			             "%s ends inside a record that was acknowledged (the "
			             "log was truncated or damaged): appending is refused; run "
			             "`glassbox audit verify --tenant %s`",
			             path, log->tenant);
			rc = -EVID_EIO;
			goto out;
		}
		GB_LOGW("evidence",
		        "%s ends with an unacknowledged partial record (a crash while "
		        "writing): cutting it off",
		        path);
		rc = cut_file(path, from + (off_t)v.torn_at, err, errlen);
		if (rc == 0 && fstat(fd, &st) != 0) {
			gb_set_io_error(err, errlen, "read the audit log", path, errno);
			rc = -EVID_EIO;
		}
		if (rc != 0)
			goto out;
	}
	if (!r.rec)
		goto out; /* nothing whole in this file */
	*found = 1;
	log->last_seq = r.seq;
	snprintf(log->last_hash, sizeof(log->last_hash), "%s", r.hash);
	snprintf(log->last_file, sizeof(log->last_file), "%s", name);
	log->dev = st.st_dev;
	log->ino = st.st_ino;
	log->size = st.st_size;
out:
	evid_record_free(&r);
	free(buf);
	if (fd >= 0)
		close(fd);
	return rc;
}

/* Re-reads the tail of the log from disk: the newest day file that holds
 * a record. Refuses when head.json names more records than the log has
 * (records were removed from the end: appending would hide it). */
static int load_tail(struct tenant_log *log, const struct evid_keypair *kp, char *err,
                     size_t errlen)
{
	char(*names)[EVID_DAY_NAME_BYTES] = NULL;
	char torn_file[EVID_DAY_NAME_BYTES] = "";
	struct evid_head head;
	char why[256];
	size_t n = 0;
	size_t i;
	int have_head;
	int found = 0;
	int rc;

	log->loaded = 0;
	log->last_seq = 0;
	memcpy(log->last_hash, EVID_ZERO_HASH, 65);
	log->last_file[0] = '\0';
	rc = evid_head_read(log->dir, kp->pk, &head, why, sizeof(why));
	have_head = rc == 0;
	if (rc == -EVID_EIO) {
		gb_set_error(
		    err, errlen,
		    "the chain head of %s is damaged (%s): appending is "
		    "refused; run `glassbox audit verify --tenant %s`, then move %s/head.json "
		    "aside to go on",
		    log->tenant, why, log->tenant, log->dir);
		goto out;
	}
	rc = evid_audit_list_days(log->dir, &names, &n, err, errlen);
	if (rc != 0)
		goto out;
	for (i = n; i > 0 && !found; i--) {
		int torn_only = 0;

		rc = read_file_tail(log, names[i - 1], &head, have_head, &found, &torn_only, err,
		                    errlen);
		if (rc != 0)
			goto out;
		if (torn_only && !torn_file[0])
			snprintf(torn_file, sizeof(torn_file), "%s", names[i - 1]);
	}
	if (torn_file[0] && ((have_head && head.seq > log->last_seq) || (!have_head && found))) {
		gb_set_error(err, errlen,
		             "%s/%s holds only part of a record that may have been acknowledged "
		             "(the log was truncated or damaged): appending is refused; run "
		             "`glassbox audit verify --tenant %s`",
		             log->dir, torn_file, log->tenant);
		rc = -EVID_EIO;
		goto out;
	}
	if (torn_file[0]) {
		/* the record after the last whole one, never acknowledged */
		char path[PATH_BYTES + EVID_DAY_NAME_BYTES];

		snprintf(path, sizeof(path), "%s/%s", log->dir, torn_file);
		GB_LOGW("evidence",
		        "%s holds only an unacknowledged partial record (a crash while "
		        "writing): cutting it off",
		        path);
		rc = cut_file(path, 0, err, errlen);
		if (rc != 0)
			goto out;
	}
	if (have_head && head.seq > log->last_seq) {
		gb_set_error(err, errlen,
		             "the audit log of %s ends at record %llu but its head "
		             "says record %llu was written: records were removed from its end; "
		             "appending is refused; run `glassbox audit verify --tenant %s`",
		             log->tenant, (unsigned long long)log->last_seq,
		             (unsigned long long)head.seq, log->tenant);
		rc = -EVID_EIO;
		goto out;
	}
	log->loaded = 1;
out:
	free(names);
	return rc;
}

/* The day file the next record goes to: its UTC day, or the newest file's
 * day when the clock is behind it. */
static void target_file(const struct evid_audit *a, const struct tenant_log *log, char *name,
                        size_t namelen)
{
	char day[16];

	evid_day_of(evid_audit_now(a), day, sizeof(day));
	snprintf(name, namelen, "%s.jsonl", day);
	if (log->last_file[0] && strcmp(log->last_file, name) > 0)
		snprintf(name, namelen, "%s", log->last_file);
}

/* 1 when the files on disk may differ from what log remembers. */
static int tail_changed(const struct evid_audit *a, const struct tenant_log *log)
{
	char path[PATH_BYTES + EVID_DAY_NAME_BYTES];
	char target[EVID_DAY_NAME_BYTES];
	struct stat st;

	if (!log->loaded)
		return 1;
	if (log->last_file[0]) {
		snprintf(path, sizeof(path), "%s/%s", log->dir, log->last_file);
		if (stat(path, &st) != 0 || st.st_dev != log->dev || st.st_ino != log->ino ||
		    st.st_size != log->size)
			return 1;
	}
	target_file(a, log, target, sizeof(target));
	if (strcmp(target, log->last_file) != 0) {
		snprintf(path, sizeof(path), "%s/%s", log->dir, target);
		if (stat(path, &st) == 0 && st.st_size > 0)
			return 1;
	}
	return 0;
}

/* Re-reads the tail from disk once nothing waits for a sync: the files
 * changed under us, or unsynced records were cut off. */
static int reload_tail_locked(struct evid_audit *a, struct tenant_log *log, char *err,
                              size_t errlen)
{
	int rc;

	rc = evid_commit_drain_locked(&log->commit, &log->lock, err, errlen);
	if (rc != 0)
		goto out;
	evid_commit_close_locked(&log->commit);
	log->commit.cut = 0;
	rc = load_tail(log, &a->kp, err, errlen);
out:
	return rc;
}

/* Takes tenant's log: its mutex (held on return whenever *out is set,
 * even on failure), then the flock unless this process holds it already;
 * with exclusive, every record written is made durable first; then the
 * tail, re-read if the files changed. Returns 0 or a negative evid_err. */
static int lock_log(struct evid_audit *a, const char *tenant, int exclusive,
                    struct tenant_log **out, char *err, size_t errlen)
{
	struct tenant_log *log = NULL;
	char rel[128];
	char path[PATH_BYTES + 8];
	int rc;

	*out = NULL;
	if (!a) {
		gb_set_error(err, errlen, "the audit trail is not open");
		rc = -EVID_EINVAL;
		goto out;
	}
	rc = evid_audit_dir_path(a->data_dir, tenant, path, sizeof(path), err, errlen);
	if (rc != 0)
		goto out;
	log = get_log(a, tenant, err, errlen);
	if (!log) {
		rc = -EVID_ENOMEM;
		goto out;
	}
	pthread_mutex_lock(&log->lock);
	*out = log;
	snprintf(rel, sizeof(rel), "tenants/%s/audit", tenant);
	rc = gb_fs_mkdirs(a->data_dir, rel, err, errlen);
	if (rc != 0)
		goto out;
	if (log->lock_fd < 0) {
		snprintf(path, sizeof(path), "%s/.lock", log->dir);
		log->lock_fd = open(path, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
		if (log->lock_fd < 0) {
			gb_set_io_error(err, errlen, "open the audit lock", path, errno);
			rc = -EVID_EIO;
			goto out;
		}
	}
	while (!log->flocked && flock(log->lock_fd, LOCK_EX) != 0) {
		if (errno != EINTR) {
			gb_set_io_error(err, errlen, "lock the audit log", log->dir, errno);
			rc = -EVID_EIO;
			goto out;
		}
	}
	log->flocked = 1;
	if (exclusive) {
		rc = evid_commit_drain_locked(&log->commit, &log->lock, err, errlen);
		if (rc != 0)
			goto out;
	}
	if (log->commit.cut || tail_changed(a, log))
		rc = reload_tail_locked(a, log, err, errlen);
out:
	return rc;
}

/* Lets the log go: the flock once nothing of ours waits for a sync, then
 * the mutex. NULL is a no-op. */
static void unlock_log(struct tenant_log *log)
{
	if (!log)
		return;
	if (log->flocked && evid_commit_idle_locked(&log->commit)) {
		flock(log->lock_fd, LOCK_UN);
		log->flocked = 0;
	}
	pthread_mutex_unlock(&log->lock);
}

int evid_audit_with_lock(struct evid_audit *a, const char *tenant, evid_audit_locked_fn fn,
                         void *user, char *err, size_t errlen)
{
	struct tenant_log *log = NULL;
	int rc;

	rc = lock_log(a, tenant, 1, &log, err, errlen);
	if (rc == 0)
		rc = fn(a, tenant, user, err, errlen);
	unlock_log(log);
	return rc;
}

/* ---- building a record --------------------------------------------------- */

/* Contract in audit.h: the one list of credential names (above). */
int evid_is_credential_name(const char *key)
{
	size_t i;

	for (i = 0; credential_names[i]; i++)
		if (!strcasecmp(key, credential_names[i]))
			return 1;
	return 0;
}

/* Replaces credential members anywhere in j (modified in place); cuts
 * what is nested deeper than REDACT_MAX_DEPTH. */
static void redact(json_t *j, int depth)
{
	const char *key;
	json_t *v;
	void *tmp;
	size_t i;

	if (json_is_object(j)) {
		json_object_foreach_safe(j, tmp, key, v)
		{
			if (evid_is_credential_name(key) && !json_is_null(v))
				json_object_set_new(j, key, json_string("[redacted]"));
			else if (depth >= REDACT_MAX_DEPTH &&
			         (json_is_object(v) || json_is_array(v)))
				json_object_set_new(j, key, json_string("[nested too deep]"));
			else
				redact(v, depth + 1);
		}
	} else if (json_is_array(j)) {
		json_array_foreach(j, i, v)
		{
			if (depth >= REDACT_MAX_DEPTH && (json_is_object(v) || json_is_array(v)))
				json_array_set_new(j, i, json_string("[nested too deep]"));
			else
				redact(v, depth + 1);
		}
	}
}

/* The body as recorded: a copy, redacted. NULL when out of memory. */
static json_t *recorded_body(const struct evid_audit_entry *e)
{
	json_t *body = e->body ? json_deep_copy(e->body) : json_object();
	json_t *args;

	if (!body)
		return NULL;
	args = json_object_get(body, "arguments");
	if (e->secret_text && json_is_object(args)) {
		if (json_object_get(args, "text"))
			json_object_set_new(args, "text", json_string("[redacted]"));
		if (json_object_get(args, "value"))
			json_object_set_new(args, "value", json_string("[redacted]"));
	}
	redact(body, 0);
	return body;
}

/* 1 when kind is [a-z_]{1,32}. */
static int kind_is_valid(const char *kind)
{
	size_t i;

	if (!kind || !kind[0])
		return 0;
	for (i = 0; kind[i]; i++)
		if (i >= 32 || !(islower((unsigned char)kind[i]) || kind[i] == '_'))
			return 0;
	return 1;
}

/* Checks an entry before anything is built. */
static int check_entry(const struct evid_audit_entry *e, int allow_purge, char *err, size_t errlen)
{
	json_t *a;
	size_t i;
	int rc = -EVID_EINVAL;

	if (!e || !gb_fs_name_is_safe(e->tenant)) {
		gb_set_error(err, errlen, "an audit record needs a valid tenant name");
		goto out;
	}
	if (!kind_is_valid(e->kind)) {
		gb_set_error(err, errlen,
		             "audit record kind \"%.40s\" is not valid: use 1 to 32 of "
		             "a-z and _",
		             e->kind ? e->kind : "(none)");
		goto out;
	}
	if (!allow_purge && !strcmp(e->kind, EVID_AUDIT_PURGE)) {
		gb_set_error(err, errlen, "purge records are written by evid_audit_purge() only");
		goto out;
	}
	if ((e->body && !json_is_object(e->body)) ||
	    (e->artifacts && !json_is_array(e->artifacts))) {
		gb_set_error(err, errlen,
		             "an audit record's body must be an object and its "
		             "artifacts an array");
		goto out;
	}
	json_array_foreach(e->artifacts, i, a)
	{
		if (!json_is_string(json_object_get(a, "kind")) ||
		    !evid_sha256_hex_is_valid(json_string_value(json_object_get(a, "sha256")))) {
			gb_set_error(err, errlen,
			             "artifact %zu of the %s record has no kind or no "
			             "valid sha256: pass what evid_keep_action_evidence() or "
			             "evid_artifact_json() returned",
			             i, e->kind);
			goto out;
		}
	}
	rc = 0;
out:
	return rc;
}

/* A JSON string, or null for NULL. */
static json_t *str_or_null(const char *s)
{
	return s ? json_string(s) : json_null();
}

/* Builds the record without hash and sig (new reference or NULL); body
 * is taken (NULL: out of memory, the record is not built). */
static json_t *build_record(const struct evid_audit *a, const struct tenant_log *log,
                            const struct evid_audit_entry *e, json_t *body)
{
	char now[40];
	json_t *artifacts = e->artifacts ? json_deep_copy(e->artifacts) : json_array();
	json_t *actor;

	record_time(a, now, sizeof(now));
	actor = json_pack("{s:o, s:o, s:o}", "token", str_or_null(e->actor.token), "tenant",
	                  str_or_null(e->actor.tenant), "user", str_or_null(e->actor.user));
	return json_pack("{s:i, s:I, s:s, s:s, s:s, s:o, s:o, s:o, s:o, s:o, s:s, s:s}", "v", 1,
	                 "seq", (json_int_t)(log->last_seq + 1), "time", now, "tenant", e->tenant,
	                 "kind", e->kind, "actor", actor ? actor : json_null(), "session",
	                 str_or_null(e->session_id), "operation", str_or_null(e->operation_id),
	                 "body", body, "artifacts", artifacts ? artifacts : json_null(),
	                 "prev_hash", log->last_hash, "key_id", a->kp.key_id);
}

/* The signed line of the record of e with body (borrowed) as its body,
 * without its '\n', into *line (malloc'd; *len bytes) and its hash. */
static int sign_line(struct evid_audit *a, const struct tenant_log *log,
                     const struct evid_audit_entry *e, json_t *body, char **line, size_t *len,
                     char hash[65], char *err, size_t errlen)
{
	char sig[SIG_B64_BYTES];
	char *signed_text = NULL;
	json_t *rec;
	int rc = 0;

	*line = NULL;
	json_incref(body);
	rec = build_record(a, log, e, body);
	if (!rec) {
		gb_set_error(err, errlen,
		             "cannot build the audit record: a member is not valid "
		             "UTF-8 or memory ran out");
		rc = -EVID_EINVAL;
		goto out;
	}
	if (evid_record_digest(rec, hash, &signed_text) != 0)
		goto oom;
	evid_sig_make(&a->kp, signed_text, sig, sizeof(sig));
	if (json_object_set_new(rec, "hash", json_string(hash)) != 0 ||
	    json_object_set_new(rec, "sig", json_string(sig)) != 0)
		goto oom;
	*line = evid_json_canonical(rec);
	if (!*line)
		goto oom;
	*len = strlen(*line);
	goto out;
oom:
	gb_set_error(err, errlen, "out of memory writing an audit record");
	rc = -EVID_ENOMEM;
out:
	free(signed_text);
	json_decref(rec);
	return rc;
}

/* Room the rest of a record takes beside its body, at most: a bound for
 * fitting the body (the record is checked whole after). */
#define RECORD_FRAME_BYTES (64u * 1024u)

/* Where a record went: its seq and hash, and the commit generation to
 * wait in. */
struct written {
	uint64_t seq;
	char hash[65];
	uint64_t gen;
};

/* Builds, signs and writes the record of e to the log's day file, without
 * syncing it; log's mutex held and its tail loaded. Returns 0 or a
 * negative evid_err with err. */
static int write_record_locked(struct evid_audit *a, struct tenant_log *log,
                               const struct evid_audit_entry *e, int allow_purge, struct written *w,
                               char *err, size_t errlen)
{
	struct stat st;
	char name[EVID_DAY_NAME_BYTES];
	char hash[65];
	char *line = NULL;
	json_t *body = NULL;
	json_t *fitted = NULL;
	size_t len = 0;
	int truncated = 0;
	int rc;

	rc = check_entry(e, allow_purge, err, errlen);
	if (rc != 0)
		goto out;
	/* the file first: switching it may wait for a sync with the mutex
	 * released, and nothing below may see the tail change */
	for (;;) {
		target_file(a, log, name, sizeof(name));
		rc = evid_commit_use_file_locked(&log->commit, &log->lock, log->dir, name, &st, err,
		                                 errlen);
		if (rc != 0 || !log->commit.cut)
			break;
		rc = reload_tail_locked(a, log, err, errlen);
		if (rc != 0)
			break;
	}
	if (rc != 0)
		goto out;
	body = recorded_body(e);
	if (!body)
		goto oom;
	rc = sign_line(a, log, e, body, &line, &len, hash, err, errlen);
	if (rc != 0)
		goto out;
	if (len > EVID_AUDIT_MAX_RECORD_BYTES) {
		/* too large to keep whole (a long text typed, a large argument):
		 * kept with the large values cut, marked, hashed and measured,
		 * rather than not kept at all */
		free(line);
		line = NULL;
		fitted = evid_json_fit(body, EVID_AUDIT_MAX_RECORD_BYTES - RECORD_FRAME_BYTES,
		                       &truncated);
		if (!fitted || json_object_set_new(fitted, "truncated", json_true()) != 0)
			goto oom;
		rc = sign_line(a, log, e, fitted, &line, &len, hash, err, errlen);
		if (rc != 0)
			goto out;
	}
	if (len > EVID_AUDIT_MAX_RECORD_BYTES) {
		gb_set_error(err, errlen,
		             "the %s record is %zu bytes, more than the %u allowed, even with its "
		             "body cut: it names too many artifacts",
		             e->kind, len, EVID_AUDIT_MAX_RECORD_BYTES);
		rc = -EVID_EINVAL;
		goto out;
	}
	line[len] = '\n'; /* the NUL becomes the end of line; written as len + 1 bytes */
	rc = evid_commit_write_locked(&log->commit, line, len + 1, log->last_seq + 1, hash, &st,
	                              &w->gen, err, errlen);
	if (rc != 0)
		goto out;
	log->last_seq++;
	memcpy(log->last_hash, hash, sizeof(hash));
	snprintf(log->last_file, sizeof(log->last_file), "%s", name);
	log->dev = st.st_dev;
	log->ino = st.st_ino;
	log->size = st.st_size;
	w->seq = log->last_seq;
	memcpy(w->hash, hash, sizeof(hash));
	goto out;
oom:
	gb_set_error(err, errlen, "out of memory writing an audit record");
	rc = -EVID_ENOMEM;
out:
	free(line);
	json_decref(body);
	json_decref(fitted);
	return rc;
}

/* Fills receipt (may be NULL) from w. */
static void fill_receipt(struct evid_audit_receipt *receipt, const struct written *w)
{
	if (!receipt)
		return;
	receipt->seq = w->seq;
	memcpy(receipt->hash, w->hash, sizeof(w->hash));
}

int evid_audit_append_locked(struct evid_audit *a, const struct evid_audit_entry *e,
                             int allow_purge, struct evid_audit_receipt *receipt, char *err,
                             size_t errlen)
{
	struct tenant_log *log;
	struct written w = { 0 };
	int rc;

	rc = check_entry(e, allow_purge, err, errlen);
	if (rc != 0)
		goto out;
	log = get_log(a, e->tenant, err, errlen);
	rc = -EVID_ENOMEM;
	if (!log)
		goto out;
	/* exclusive (evid_audit_with_lock drained first): synced at once,
	 * the mutex kept */
	rc = write_record_locked(a, log, e, allow_purge, &w, err, errlen);
	if (rc == 0)
		rc = evid_commit_drain_locked(&log->commit, &log->lock, err, errlen);
	if (rc == 0)
		fill_receipt(receipt, &w);
out:
	return rc;
}

int evid_audit_append(struct evid_audit *a, const struct evid_audit_entry *entry,
                      struct evid_audit_receipt *receipt, char *err, size_t errlen)
{
	struct tenant_log *log = NULL;
	struct written w = { 0 };
	char why[1024] = "";
	int rc;

	rc = check_entry(entry, 0, err, errlen);
	if (rc != 0)
		goto out;
	rc = lock_log(a, entry->tenant, 0, &log, why, sizeof(why));
	if (rc == 0)
		rc = write_record_locked(a, log, entry, 0, &w, why, sizeof(why));
	if (rc == 0) /* group commit: returns once this record is durable */
		rc = evid_commit_wait_locked(&log->commit, &log->lock, w.gen, w.seq, why,
		                             sizeof(why));
	if (rc == 0)
		fill_receipt(receipt, &w);
	unlock_log(log);
	if (rc == -EVID_EIO)
		gb_set_error(err, errlen, "the audit record could not be kept: %s", why);
	else if (rc != 0)
		gb_set_error(err, errlen, "%s", why);
out:
	return rc;
}

int evid_audit_check_writable(struct evid_audit *a, const char *tenant, char *err, size_t errlen)
{
	char dir[PATH_BYTES];
	char rel[128];
	char why[1024] = "";
	int rc;

	rc = evid_audit_dir_path(a->data_dir, tenant, dir, sizeof(dir), err, errlen);
	if (rc != 0)
		goto out;
	snprintf(rel, sizeof(rel), "tenants/%s/audit", tenant);
	rc = gb_fs_mkdirs(a->data_dir, rel, why, sizeof(why));
	if (rc == 0)
		rc = gb_fs_check_writable(dir, AUDIT_MIN_FREE_BYTES, why, sizeof(why));
	if (rc != 0)
		gb_set_error(err, errlen, "the audit log of %s cannot be written: %s", tenant, why);
out:
	return rc;
}

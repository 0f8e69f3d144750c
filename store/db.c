/*
 * db.c - opening the store: which backend (store_configure), its schema
 * migrations, this handle's liveness claim, and the recovery of
 * operations that a dead process or replica left behind.
 *
 * Design note. One handle holds one connection of its backend
 * (store-sql.h: SQLite embedded, or PostgreSQL shared by replicas);
 * st->lock serialises every use of it, and st->changed (a condition
 * variable on that lock) lets a caller wait for another thread's change
 * without holding the lock. Every state change the store makes is one
 * conditional UPDATE or INSERT inside a transaction, so it happens once
 * whoever races for it, in this process, another one, or another replica.
 *
 * Migrations: table store_schema holds one row, the schema version.
 * store_open applies each numbered migration above it, in one
 * transaction with the version bump (which the backend serialises
 * between processes), so two processes opening at once cannot both
 * migrate. A version above ours is refused.
 *
 * Liveness: each handle claims its random instance name with the
 * backend (a flock()ed file, or a PostgreSQL advisory lock) until
 * store_close or its process's death. Operations record the instance
 * that owns them; a later store_open (or a waiter) that can take an
 * owner's claim knows that owner is dead and closes its operations
 * (running -> unknown, pending -> failed).
 */
#include "store/store-private.h"

#include "common/fs.h"

#include "common/log.h"
#include "common/util.h"

#include <errno.h>
#include <fcntl.h>
#include <libpq-fe.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/* ---- small helpers shared by the store's files ------------------------------ */

int store_set_error(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;

	if (err && errlen) {
		va_start(ap, fmt);
		vsnprintf(err, errlen, fmt, ap);
		va_end(ap);
	}
	return -STORE_EINVAL;
}

/* Checks a string argument against its ceiling; a required one must be
 * non-empty. Returns 0 or -STORE_EINVAL naming it. */
int store_check_text(const char *what, const char *s, size_t max, int required, char *err,
                     size_t errlen)
{
	if (!s) {
		if (required)
			return store_set_error(err, errlen, "%s is required", what);
		return 0;
	}
	if (required && !s[0])
		return store_set_error(err, errlen, "%s is required", what);
	if (strnlen(s, max + 1) > max)
		return store_set_error(err, errlen, "%s is longer than %zu bytes: shorten it", what,
		                       max);
	return 0;
}

/* Checks an id: 1..STORE_ID_MAX bytes of [A-Za-z0-9._:-]. */
int store_check_id(const char *what, const char *s, char *err, size_t errlen)
{
	size_t i;

	if (!s || !s[0])
		return store_set_error(err, errlen, "%s is required", what);
	for (i = 0; s[i]; i++) {
		char c = s[i];

		if (i >= STORE_ID_MAX ||
		    !((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
		      c == '.' || c == '_' || c == ':' || c == '-'))
			return store_set_error(err, errlen,
			                       "%s \"%.80s\" is not valid: use 1 to %d "
			                       "letters, digits, '.', '_', ':' or '-'",
			                       what, s, STORE_ID_MAX);
	}
	return 0;
}

/* The wall clock in Unix milliseconds. */
static int64_t realtime_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

int64_t store_now_ms(const struct store *st)
{
	return st->clock_ms ? st->clock_ms() : realtime_ms();
}

#ifdef GB_UNITTEST_BUILD
void store_set_clock(struct store *st, store_clock_fn fn)
{
	st->clock_ms = fn;
}
#endif

/* Waits for st->changed for at most wait_ms (> 0). Lock held; it is
 * released while waiting. Spurious wake-ups are the caller's to handle. */
void store_wait_changed_locked(struct store *st, int wait_ms)
{
	struct timespec ts = gb_deadline_in(CLOCK_MONOTONIC, wait_ms);

	pthread_cond_timedwait(&st->changed, &st->lock, &ts);
}

void store_time_iso8601(int64_t ms, char *buf, size_t buflen)
{
	time_t secs = (time_t)(ms / 1000);
	struct tm tm;
	char base[24];

	if (!buflen)
		return;
	buf[0] = '\0';
	if (ms <= 0 || !gmtime_r(&secs, &tm))
		return;
	strftime(base, sizeof(base), "%Y-%m-%dT%H:%M:%S", &tm);
	snprintf(buf, buflen, "%s.%03dZ", base, (int)(ms % 1000));
}

/* ---- liveness ----------------------------------------------------------------- */

/* 1 when owner is this handle or one that is alive. Lock held. */
int store_owner_alive_locked(struct store *st, const char *owner)
{
	if (!owner || !owner[0])
		return 0;
	return !strcmp(owner, st->instance) || !st->be->owner_is_dead(st, owner);
}

int store_is_sha256_hex(const char *s)
{
	size_t i;

	for (i = 0; s && s[i]; i++) {
		if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f')))
			return 0;
	}
	return s && i == 64;
}

/* If owner is a dead process, closes its operations: running -> unknown,
 * pending -> failed (it did nothing). Lock held. Returns 0 or -STORE_EIO. */
int store_recover_owner_locked(struct store *st, const char *owner, char *err, size_t errlen)
{
	static const char unknown_sql[] =
	    "UPDATE operations SET state = 'unknown', finished_at = ?2, note = ?3"
	    " WHERE owner = ?1 AND state = 'running'";
	static const char abandoned_sql[] =
	    "UPDATE operations SET state = 'failed', finished_at = ?2, note = ?3"
	    " WHERE owner = ?1 AND state = 'pending'";
	static const char unknown_note[] =
	    "the service stopped while this operation was acting on the page: whether it took "
	    "effect is unknown; look at the page before deciding to repeat it (with a new "
	    "operation_id)";
	static const char abandoned_note[] =
	    "the service stopped before this operation acted; nothing was done, and it may be "
	    "repeated";
	int64_t now = store_now_ms(st);
	int64_t unknown = 0;
	int64_t abandoned = 0;
	int rc = 0;

	if (!st->be->owner_is_dead(st, owner))
		return 0;
	rc = store_sql_begin_locked(st, "start recovering operations", err, errlen);
	if (rc < 0)
		return rc;
	{
		const struct store_sql_param p1[] = { SQL_TEXT(owner), SQL_INT(now),
			                              SQL_TEXT(unknown_note) };
		const struct store_sql_param p2[] = { SQL_TEXT(owner), SQL_INT(now),
			                              SQL_TEXT(abandoned_note) };

		rc = store_sql_exec_locked(st, "recover running operations", unknown_sql, p1, 3,
		                           &unknown, err, errlen);
		if (rc == 0)
			rc = store_sql_exec_locked(st, "recover pending operations", abandoned_sql,
			                           p2, 3, &abandoned, err, errlen);
	}
	if (rc == 0)
		rc = store_sql_commit_locked(st, "commit the recovered operations", err, errlen);
	else
		store_sql_rollback_locked(st);
	if (rc < 0)
		return rc;
	st->recovered_unknown += (size_t)unknown;
	st->recovered_abandoned += (size_t)abandoned;
	if (unknown || abandoned)
		GB_LOGW("store",
		        "instance %s is gone: %lld of its operation(s) that were running are now "
		        "'unknown', %lld pending ones 'failed'",
		        owner, (long long)unknown, (long long)abandoned);
	pthread_cond_broadcast(&st->changed);
	return 0;
}

/* Recovers the operations of every dead owner (at most 1000 owners with
 * unfinished operations are looked at per call). Lock held. */
static int recover_all_locked(struct store *st, char *err, size_t errlen)
{
	static const char owners_sql[] =
	    "SELECT DISTINCT owner FROM operations WHERE state IN ('pending', 'running')"
	    " AND owner IS NOT NULL LIMIT 1000";
	char(*owners)[STORE_INSTANCE_BYTES] = NULL;
	struct store_sql_rows *r = NULL;
	size_t n = 0;
	size_t i;
	int rc = 0;

	owners = calloc(1000, sizeof(*owners));
	if (!owners) {
		store_set_error(err, errlen, "out of memory recovering operations");
		rc = -STORE_ENOMEM;
		goto out;
	}
	rc = store_sql_query_locked(st, "find unfinished operations", owners_sql, NULL, 0, &r, err,
	                            errlen);
	while (rc == 0 && n < 1000) {
		rc = store_sql_next(st, r, err, errlen);
		if (rc != 1)
			break;
		store_sql_copy(st, r, 0, owners[n], sizeof(owners[n]));
		n++;
		rc = 0;
	}
	store_sql_done(st, r);
	if (rc < 0)
		goto out;
	rc = 0;
	for (i = 0; i < n; i++) {
		rc = store_recover_owner_locked(st, owners[i], err, errlen);
		if (rc < 0)
			goto out;
	}
out:
	free(owners);
	return rc;
}

/* ---- schema ------------------------------------------------------------------- */

/* Brings the schema up to the backend's newest version. Lock held (or not
 * yet shared). */
static int migrate_locked(struct store *st, char *err, size_t errlen)
{
	const int newest = (int)st->be->n_migrations;
	int64_t version = 0;
	int in_tx = 0;
	int rc;
	char sql[64];

	rc = store_sql_begin_migration_locked(st, err, errlen);
	if (rc < 0)
		goto out;
	in_tx = 1;
	rc = store_sql_exec_locked(st, "create the schema version table",
	                           "CREATE TABLE IF NOT EXISTS store_schema (version INTEGER NOT "
	                           "NULL)",
	                           NULL, 0, NULL, err, errlen);
	if (rc < 0)
		goto out;
	rc = store_sql_int_query_locked(st, "read the schema version",
	                                "SELECT version FROM store_schema LIMIT 1", NULL, 0,
	                                &version, err, errlen);
	if (rc == 0)
		rc = store_sql_exec_locked(st, "record the schema version",
		                           "INSERT INTO store_schema (version) VALUES (0)", NULL, 0,
		                           NULL, err, errlen);
	if (rc < 0)
		goto out;
	if (version > newest) {
		rc = store_set_error(err, errlen,
		                     "%s has schema version %lld, newer than this glassbox "
		                     "knows (%d): run the newer glassbox, or restore a backup made "
		                     "for this version",
		                     st->path, (long long)version, newest);
		rc = -STORE_EIO;
		goto out;
	}
	for (; version < newest; version++) {
		rc = store_sql_exec_locked(st, "migrate the schema", st->be->migrations[version],
		                           NULL, 0, NULL, err, errlen);
		if (rc < 0)
			goto out;
		GB_LOGI("store", "%s: schema migrated to version %lld", st->path,
		        (long long)version + 1);
	}
	snprintf(sql, sizeof(sql), "UPDATE store_schema SET version = %d", newest);
	rc =
	    store_sql_exec_locked(st, "record the schema version", sql, NULL, 0, NULL, err, errlen);
	if (rc < 0)
		goto out;
	rc = store_sql_commit_locked(st, "commit the schema", err, errlen);
	in_tx = 0;
out:
	if (in_tx)
		store_sql_rollback_locked(st);
	return rc;
}

/* ---- where the store is ---------------------------------------------------------- */

/* The process-wide location (store_configure), read by every store_open. */
static struct {
	char conninfo[STORE_CONNINFO_BYTES];
	char replica[STORE_REPLICA_MAX + 1];
} location;

/* 1 when s is a usable replica name: [A-Za-z0-9._-], 1..STORE_REPLICA_MAX. */
static int replica_name_ok(const char *s)
{
	size_t i;

	for (i = 0; s[i]; i++) {
		char c = s[i];

		if (i >= STORE_REPLICA_MAX ||
		    !((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
		      c == '.' || c == '_' || c == '-'))
			return 0;
	}
	return i > 0;
}

int store_configure(const struct store_location *loc, char *err, size_t errlen)
{
	char *perr = NULL;
	PQconninfoOption *opts;

	memset(&location, 0, sizeof(location));
	if (!loc)
		return 0;
	if (loc->replica && !replica_name_ok(loc->replica))
		return store_set_error(err, errlen,
		                       "store.replica must be 1 to %d letters, digits, '.', '_' or "
		                       "'-' (the pod name, for instance)",
		                       STORE_REPLICA_MAX);
	if (loc->postgres) {
		if (strncmp(loc->postgres, "postgresql://", 13) != 0 &&
		    strncmp(loc->postgres, "postgres://", 11) != 0)
			return store_set_error(err, errlen,
			                       "store.postgres must be a URL "
			                       "postgresql://USER@HOST:PORT/DATABASE");
		if (strlen(loc->postgres) >= sizeof(location.conninfo))
			return store_set_error(err, errlen,
			                       "store.postgres is longer than %zu bytes",
			                       sizeof(location.conninfo) - 1);
		/* libpq's own parser: what it refuses would fail at connect */
		opts = PQconninfoParse(loc->postgres, &perr);
		if (!opts) {
			store_set_error(err, errlen,
			                "store.postgres is not a valid PostgreSQL URL (%s): see "
			                "docs/store.md",
			                perr ? "check its syntax and parameter names"
			                     : "out of memory");
			PQfreemem(perr);
			return -STORE_EINVAL;
		}
		PQconninfoFree(opts);
		snprintf(location.conninfo, sizeof(location.conninfo), "%s", loc->postgres);
	}
	if (loc->replica)
		snprintf(location.replica, sizeof(location.replica), "%s", loc->replica);
	return 0;
}

const char *store_backend_name(const struct store *st)
{
	return st ? st->be->name : "";
}

const char *store_replica(const struct store *st)
{
	return st ? st->replica : "";
}

/* This machine's name as a replica name ("local" when it has none). */
static void default_replica(char *out, size_t outlen)
{
	char host[256] = "";

	if (gethostname(host, sizeof(host) - 1) != 0 || !replica_name_ok(host))
		snprintf(host, sizeof(host), "local");
	snprintf(out, outlen, "%s", host);
}

/* ---- open and close ------------------------------------------------------------ */

int store_open(const char *data_dir, struct store **out, char *err, size_t errlen)
{
	struct store *st = NULL;
	pthread_condattr_t ca;
	int n;
	int rc = 0;

	*out = NULL;
	if (!data_dir || !data_dir[0]) {
		rc = store_set_error(err, errlen, "no data dir given: pass --data-dir DIR");
		goto out;
	}
	st = calloc(1, sizeof(*st));
	if (!st) {
		store_set_error(err, errlen, "out of memory opening the store");
		rc = -STORE_ENOMEM;
		goto out;
	}
	st->instance_fd = -1;
	pthread_mutex_init(&st->lock, NULL);
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&st->changed, &ca);
	pthread_condattr_destroy(&ca);
	n = snprintf(st->path, sizeof(st->path), "%s/glassbox.db", data_dir);
	if (n < 0 || (size_t)n >= sizeof(st->path) - 64) {
		rc = store_set_error(err, errlen, "the data dir path %.200s is too long", data_dir);
		goto out;
	}
	snprintf(st->data_dir, sizeof(st->data_dir), "%s", data_dir);
	snprintf(st->lock_dir, sizeof(st->lock_dir), "%s/locks", data_dir);
	if (location.replica[0])
		snprintf(st->replica, sizeof(st->replica), "%s", location.replica);
	else
		default_replica(st->replica, sizeof(st->replica));
	st->be = &store_sql_sqlite;
	if (location.conninfo[0]) {
		st->be = &store_sql_postgres;
		snprintf(st->conninfo, sizeof(st->conninfo), "%s", location.conninfo);
	}
	gb_random_hex(st->instance, (STORE_INSTANCE_BYTES - 1) / 2);
	rc = st->be->connect(st, err, errlen);
	if (rc < 0)
		goto out;
	rc = migrate_locked(st, err, errlen);
	if (rc < 0)
		goto out;
	rc = st->be->claim_instance(st, err, errlen);
	if (rc < 0)
		goto out;
	rc = recover_all_locked(st, err, errlen);
	if (rc < 0)
		goto out;
	if (st->recovered_unknown || st->recovered_abandoned)
		GB_LOGW("store",
		        "%zu operation(s) left running by a stopped service are now "
		        "'unknown', %zu left pending are 'failed'",
		        st->recovered_unknown, st->recovered_abandoned);
	*out = st;
	st = NULL;
out:
	store_close(st);
	return rc;
}

void store_close(struct store *st)
{
	if (!st)
		return;
	if (st->be) {
		st->be->disconnect(st);
		st->be->release_instance(st);
	}
	pthread_cond_destroy(&st->changed);
	pthread_mutex_destroy(&st->lock);
	free(st);
}

void store_recovered(const struct store *st, size_t *unknown, size_t *abandoned)
{
	if (unknown)
		*unknown = st ? st->recovered_unknown : 0;
	if (abandoned)
		*abandoned = st ? st->recovered_abandoned : 0;
}

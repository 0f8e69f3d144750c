/*
 * db.c - the store's database: DATA/glassbox.db (SQLite, WAL mode), its
 * schema migrations, the liveness lock of this process, and the recovery
 * of operations that a dead process left behind.
 *
 * Design note. One handle holds one SQLite connection, opened without
 * SQLite's own mutex; st->lock serialises every use of it, and
 * st->changed (a condition variable on that lock) lets a caller wait for
 * another thread's change without holding the lock. Other processes share
 * the file through SQLite's locking (WAL, 5 s busy timeout); every state
 * change the store makes is one conditional UPDATE or INSERT inside
 * BEGIN IMMEDIATE ... COMMIT, so it happens once whoever races for it.
 *
 * Migrations: table store_schema holds one row, the schema version.
 * store_open applies each numbered migration above it, in one
 * transaction with the version bump, so two processes opening at once
 * cannot both migrate. A version above ours is refused.
 *
 * Liveness: each handle creates DATA/locks/<instance>.lock and holds
 * an exclusive flock() on it until store_close (or until the process
 * dies, when the kernel drops it). Operations record the instance that
 * owns them; a later store_open that can take an owner's lock knows that
 * owner is dead and closes its operations (running -> unknown, pending ->
 * failed). This works between processes of one machine; processes on
 * other machines sharing the file are never judged dead (use PostgreSQL
 * for several machines: DESIGN.md).
 */
#include "store/store-private.h"

#include "common/fs.h"

#include "common/log.h"
#include "common/db.h"
#include "common/util.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define BUSY_TIMEOUT_MS 5000

/* The migrations, in order: migrations[i] takes the schema from version
 * i to i + 1. Never edit one that has shipped; append a new one. */
static const char *const migrations[] = {
	/* 1: approvals, their events, the operation ledger */
	"CREATE TABLE approvals ("
	" id TEXT PRIMARY KEY,"
	" tenant TEXT NOT NULL, session TEXT, operation TEXT, tool TEXT, rule TEXT,"
	" fingerprint TEXT NOT NULL, summary TEXT NOT NULL,"
	" state TEXT NOT NULL CHECK (state IN ('pending','approved','denied','used','expired')),"
	" created_at INTEGER NOT NULL, expires_at INTEGER NOT NULL, ttl_ms INTEGER NOT NULL,"
	" decided_at INTEGER, decided_by TEXT, channel TEXT, decided_uid INTEGER, reason TEXT,"
	" used_at INTEGER, used_by_operation TEXT);"
	"CREATE INDEX approvals_tenant_state ON approvals(tenant, state, created_at);"
	"CREATE INDEX approvals_expiry ON approvals(state, expires_at);"
	"CREATE TABLE approval_events ("
	" seq INTEGER PRIMARY KEY AUTOINCREMENT,"
	" approval_id TEXT NOT NULL, tenant TEXT NOT NULL, time INTEGER NOT NULL,"
	" event TEXT NOT NULL, actor TEXT, channel TEXT, reason TEXT, operation TEXT);"
	"CREATE INDEX approval_events_id ON approval_events(approval_id, seq);"
	"CREATE TABLE operations ("
	" tenant TEXT NOT NULL, id TEXT NOT NULL, session TEXT, tool TEXT NOT NULL,"
	" args_hash TEXT NOT NULL,"
	" state TEXT NOT NULL CHECK (state IN ('pending','running','done','failed','unknown')),"
	" acted INTEGER NOT NULL DEFAULT 0, attempts INTEGER NOT NULL DEFAULT 1,"
	" owner TEXT, result TEXT, note TEXT,"
	" created_at INTEGER NOT NULL, started_at INTEGER, finished_at INTEGER,"
	" PRIMARY KEY (tenant, id));"
	"CREATE INDEX operations_owner ON operations(owner, state);"
	"CREATE INDEX operations_finished ON operations(finished_at);",
};

#define SCHEMA_VERSION ((int)(sizeof(migrations) / sizeof(migrations[0])))

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

/* Says what failed, with SQLite's message and advice. Lock held (or the
 * handle not yet shared). Returns -STORE_EIO. */
int store_db_error_locked(struct store *st, const char *doing, char *err, size_t errlen)
{
	int code = st->db ? sqlite3_errcode(st->db) : SQLITE_CANTOPEN;
	const char *advice = "check the data dir and the disk it is on";

	if (code == SQLITE_FULL)
		advice = "free space on that file system or move the data dir to a larger one";
	else if (code == SQLITE_READONLY || code == SQLITE_PERM || code == SQLITE_CANTOPEN)
		advice = "make the data dir writable by this user, or choose a writable one";
	else if (code == SQLITE_BUSY || code == SQLITE_LOCKED)
		advice = "another process holds the database too long: try again";
	else if (code == SQLITE_CORRUPT || code == SQLITE_NOTADB)
		advice =
		    "the database is damaged: stop glassbox, move glassbox.db aside and restore "
		    "it from a backup";
	store_set_error(err, errlen, "cannot %s in %s: %s; %s", doing, st->path,
	                st->db ? sqlite3_errmsg(st->db) : "cannot open", advice);
	return -STORE_EIO;
}

/* Binds a string or NULL. */
int store_bind_text(sqlite3_stmt *s, int i, const char *text)
{
	return text ? sqlite3_bind_text(s, i, text, -1, SQLITE_TRANSIENT) : sqlite3_bind_null(s, i);
}

/* Copies a text column into dst ("" for NULL), cut to fit. */
void store_copy_col(sqlite3_stmt *s, int col, char *dst, size_t dstlen)
{
	const char *v = (const char *)sqlite3_column_text(s, col);

	snprintf(dst, dstlen, "%s", v ? v : "");
}

/* Runs SQL without results. Lock held. */
int store_exec_locked(struct store *st, const char *sql, const char *doing, char *err,
                      size_t errlen)
{
	if (sqlite3_exec(st->db, sql, NULL, NULL, NULL) != SQLITE_OK)
		return store_db_error_locked(st, doing, err, errlen);
	return 0;
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

/* 1 when s is a plausible instance name (hex digits only), so that it can
 * go into a path. */
static int instance_name_ok(const char *s)
{
	size_t i;

	for (i = 0; s[i]; i++) {
		if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f')))
			return 0;
	}
	return i > 0 && i < STORE_INSTANCE_BYTES;
}

/* Creates dir with mode 0700 unless it exists; refuses a symlink. */
static int make_private_dir(const char *dir, char *err, size_t errlen)
{
	struct stat sb;

	if (mkdir(dir, 0700) != 0 && errno != EEXIST)
		goto fail;
	if (lstat(dir, &sb) != 0)
		goto fail;
	if (!S_ISDIR(sb.st_mode)) {
		store_set_error(err, errlen, "%s is not a directory: move it aside", dir);
		return -STORE_EIO;
	}
	return 0;
fail:
	store_set_error(err, errlen,
	                "cannot create %s: %s; make the data dir writable by this user", dir,
	                strerror(errno));
	return -STORE_EIO;
}

/* Takes this handle's liveness lock. */
static int take_instance_lock(struct store *st, const char *data_dir, char *err, size_t errlen)
{
	char path[STORE_PATH_BYTES + 64];
	int rc;
	int n;

	n = snprintf(path, sizeof(path), "%s/run", data_dir);
	if (n < 0 || (size_t)n >= sizeof(path))
		return store_set_error(err, errlen, "the data dir path %s is too long", data_dir);
	rc = make_private_dir(path, err, errlen);
	if (rc < 0)
		return rc;
	rc = make_private_dir(st->lock_dir, err, errlen);
	if (rc < 0)
		return rc;
	gb_random_hex(st->instance, (STORE_INSTANCE_BYTES - 1) / 2);
	snprintf(path, sizeof(path), "%s/%s.lock", st->lock_dir, st->instance);
	st->instance_fd = open(path, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (st->instance_fd < 0 || flock(st->instance_fd, LOCK_EX | LOCK_NB) != 0) {
		store_set_error(err, errlen,
		                "cannot create and lock %s: %s; make the data dir "
		                "writable by this user",
		                path, strerror(errno));
		return -STORE_EIO;
	}
	return 0;
}

/* 1 when the owner's lock can be taken (or is gone): that process is
 * dead. Removes the stale lock file. */
static int owner_is_dead(struct store *st, const char *owner)
{
	char path[STORE_PATH_BYTES + 64];
	int fd;
	int dead = 0;

	if (!instance_name_ok(owner) || !strcmp(owner, st->instance))
		return 0;
	snprintf(path, sizeof(path), "%s/%s.lock", st->lock_dir, owner);
	fd = open(path, O_RDWR | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return errno == ENOENT;
	if (flock(fd, LOCK_EX | LOCK_NB) == 0) {
		dead = 1;
		unlink(path);
	}
	close(fd);
	return dead;
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
	sqlite3_stmt *s = NULL;
	int64_t now = store_now_ms(st);
	int in_tx = 0;
	int rc = 0;

	if (!owner_is_dead(st, owner))
		goto out;
	rc = store_exec_locked(st, "BEGIN IMMEDIATE", "start recovering operations", err, errlen);
	if (rc < 0)
		goto out;
	in_tx = 1;
	if (sqlite3_prepare_v2(st->db, unknown_sql, -1, &s, NULL) != SQLITE_OK ||
	    store_bind_text(s, 1, owner) || sqlite3_bind_int64(s, 2, now) ||
	    store_bind_text(s, 3, unknown_note) || sqlite3_step(s) != SQLITE_DONE) {
		rc = store_db_error_locked(st, "recover running operations", err, errlen);
		goto out;
	}
	st->recovered_unknown += (size_t)sqlite3_changes(st->db);
	sqlite3_finalize(s);
	s = NULL;
	if (sqlite3_prepare_v2(st->db, abandoned_sql, -1, &s, NULL) != SQLITE_OK ||
	    store_bind_text(s, 1, owner) || sqlite3_bind_int64(s, 2, now) ||
	    store_bind_text(s, 3, abandoned_note) || sqlite3_step(s) != SQLITE_DONE) {
		rc = store_db_error_locked(st, "recover pending operations", err, errlen);
		goto out;
	}
	st->recovered_abandoned += (size_t)sqlite3_changes(st->db);
	rc = store_exec_locked(st, "COMMIT", "commit the recovered operations", err, errlen);
	if (rc == 0)
		in_tx = 0;
	pthread_cond_broadcast(&st->changed);
out:
	sqlite3_finalize(s);
	if (in_tx)
		sqlite3_exec(st->db, "ROLLBACK", NULL, NULL, NULL);
	return rc;
}

/* Recovers the operations of every dead owner (at most 1000 owners with
 * unfinished operations are looked at per call). Lock held. */
static int recover_all_locked(struct store *st, char *err, size_t errlen)
{
	static const char owners_sql[] =
	    "SELECT DISTINCT owner FROM operations WHERE state IN ('pending', 'running')"
	    " AND owner IS NOT NULL LIMIT 1000";
	char(*owners)[STORE_INSTANCE_BYTES] = NULL;
	sqlite3_stmt *s = NULL;
	size_t n = 0;
	size_t i;
	int rc = 0;

	owners = calloc(1000, sizeof(*owners));
	if (!owners) {
		store_set_error(err, errlen, "out of memory recovering operations");
		rc = -STORE_ENOMEM;
		goto out;
	}
	if (sqlite3_prepare_v2(st->db, owners_sql, -1, &s, NULL) != SQLITE_OK) {
		rc = store_db_error_locked(st, "find unfinished operations", err, errlen);
		goto out;
	}
	while (n < 1000 && sqlite3_step(s) == SQLITE_ROW) {
		store_copy_col(s, 0, owners[n], sizeof(owners[n]));
		n++;
	}
	sqlite3_finalize(s);
	s = NULL;
	for (i = 0; i < n; i++) {
		rc = store_recover_owner_locked(st, owners[i], err, errlen);
		if (rc < 0)
			goto out;
	}
out:
	sqlite3_finalize(s);
	free(owners);
	return rc;
}

/* ---- schema ------------------------------------------------------------------- */

/* Brings the schema up to SCHEMA_VERSION. Lock held (or not yet shared). */
static int migrate_locked(struct store *st, char *err, size_t errlen)
{
	sqlite3_stmt *s = NULL;
	int version = 0;
	int in_tx = 0;
	int step;
	int rc;
	char sql[64];

	rc = store_exec_locked(st, "BEGIN IMMEDIATE", "start the schema check", err, errlen);
	if (rc < 0)
		goto out;
	in_tx = 1;
	rc = store_exec_locked(st,
	                       "CREATE TABLE IF NOT EXISTS store_schema (version INTEGER NOT "
	                       "NULL)",
	                       "create the schema version table", err, errlen);
	if (rc < 0)
		goto out;
	if (sqlite3_prepare_v2(st->db, "SELECT version FROM store_schema LIMIT 1", -1, &s, NULL) !=
	    SQLITE_OK) {
		rc = store_db_error_locked(st, "read the schema version", err, errlen);
		goto out;
	}
	step = sqlite3_step(s);
	if (step == SQLITE_ROW) {
		version = sqlite3_column_int(s, 0);
	} else if (step == SQLITE_DONE) {
		rc = store_exec_locked(st, "INSERT INTO store_schema (version) VALUES (0)",
		                       "record the schema version", err, errlen);
		if (rc < 0)
			goto out;
	} else {
		rc = store_db_error_locked(st, "read the schema version", err, errlen);
		goto out;
	}
	sqlite3_finalize(s);
	s = NULL;
	if (version > SCHEMA_VERSION) {
		rc = store_set_error(err, errlen,
		                     "%s has schema version %d, newer than this glassbox "
		                     "knows (%d): run the newer glassbox, or restore a backup made "
		                     "for this version",
		                     st->path, version, SCHEMA_VERSION);
		rc = -STORE_EIO;
		goto out;
	}
	for (; version < SCHEMA_VERSION; version++) {
		rc = store_exec_locked(st, migrations[version], "migrate the schema", err, errlen);
		if (rc < 0)
			goto out;
		GB_LOGI("store", "%s: schema migrated to version %d", st->path, version + 1);
	}
	snprintf(sql, sizeof(sql), "UPDATE store_schema SET version = %d", SCHEMA_VERSION);
	rc = store_exec_locked(st, sql, "record the schema version", err, errlen);
	if (rc < 0)
		goto out;
	rc = store_exec_locked(st, "COMMIT", "commit the schema", err, errlen);
	if (rc == 0)
		in_tx = 0;
out:
	sqlite3_finalize(s);
	if (in_tx)
		sqlite3_exec(st->db, "ROLLBACK", NULL, NULL, NULL);
	return rc;
}

/* ---- open and close ------------------------------------------------------------ */

int store_open(const char *data_dir, struct store **out, char *err, size_t errlen)
{
	struct store *st = NULL;
	pthread_condattr_t ca;
	int made;
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
	snprintf(st->lock_dir, sizeof(st->lock_dir), "%s/locks", data_dir);
	made = gb_fs_create_db_file(st->path);
	if (made < 0) {
		store_set_error(err, errlen,
		                "cannot open %s: %s; make the data dir writable by this "
		                "user, or choose a writable one",
		                st->path, strerror(-made));
		rc = -STORE_EIO;
		goto out;
	}
	if (sqlite3_open_v2(st->path, &st->db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX, NULL) !=
	    SQLITE_OK) {
		rc = store_db_error_locked(st, "open the store", err, errlen);
		goto out;
	}
	sqlite3_busy_timeout(st->db, BUSY_TIMEOUT_MS);
	if (gb_db_exec_when_free(st->db, "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;",
	                         BUSY_TIMEOUT_MS) != SQLITE_OK) {
		rc = store_db_error_locked(st, "switch the store to WAL mode", err, errlen);
		goto out;
	}
	rc = migrate_locked(st, err, errlen);
	if (rc < 0)
		goto out;
	rc = take_instance_lock(st, data_dir, err, errlen);
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
	char path[STORE_PATH_BYTES + 64];

	if (!st)
		return;
	if (st->db)
		sqlite3_close(st->db);
	if (st->instance_fd >= 0) {
		snprintf(path, sizeof(path), "%s/%s.lock", st->lock_dir, st->instance);
		unlink(path);
		close(st->instance_fd);
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

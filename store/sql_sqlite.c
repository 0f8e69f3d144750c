/*
 * sql_sqlite.c - the store's embedded backend (store-sql.h): one SQLite
 * connection to DATA/glassbox.db in WAL mode, opened without SQLite's own
 * mutex (st->lock serialises it). Other processes on this machine share
 * the file through SQLite's locking (5 s busy timeout); writes run in
 * BEGIN IMMEDIATE, so a conditional UPDATE happens once whoever races.
 *
 * Liveness: each handle creates DATA/locks/<instance>.lock and holds an
 * exclusive flock() on it until it closes (or its process dies, when the
 * kernel drops it). An owner whose lock can be taken is gone. This works
 * between processes of one machine only; several machines share a
 * PostgreSQL database instead (sql_pg.c).
 */
#include "store/store-private.h"

#include "common/db.h"
#include "common/fs.h"
#include "common/util.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#define BUSY_TIMEOUT_MS 5000

/* The migrations, in order: migrations[i] takes the schema from version
 * i to i + 1. Never edit one that has shipped; append a new one (and its
 * twin in sql_pg.c). */
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
	/* 2: the session registry and the audit segment heads */
	"CREATE TABLE session_registry ("
	" session TEXT PRIMARY KEY, tenant TEXT NOT NULL, replica TEXT NOT NULL,"
	" instance TEXT NOT NULL, browser_pid INTEGER NOT NULL DEFAULT 0,"
	" created_at INTEGER NOT NULL, heartbeat_at INTEGER NOT NULL);"
	"CREATE INDEX session_registry_replica ON session_registry(replica, instance);"
	"CREATE TABLE audit_segments ("
	" seq INTEGER PRIMARY KEY AUTOINCREMENT,"
	" tenant TEXT NOT NULL, replica TEXT NOT NULL, segment TEXT NOT NULL,"
	" head_hash TEXT NOT NULL DEFAULT '', records INTEGER NOT NULL DEFAULT 0,"
	" opened_at INTEGER NOT NULL, updated_at INTEGER NOT NULL,"
	" UNIQUE (tenant, segment));"
	"CREATE INDEX audit_segments_tenant ON audit_segments(tenant, seq);",
	/* 3: profiles' metadata (made by profiles/meta.c before it was the
	 * store's) and the handle that holds each one for writing */
	"CREATE TABLE IF NOT EXISTS prof_profiles ("
	" id TEXT PRIMARY KEY, tenant TEXT NOT NULL, user TEXT NOT NULL, name TEXT NOT NULL,"
	" version INTEGER NOT NULL DEFAULT 0, created_ms INTEGER NOT NULL,"
	" last_used_ms INTEGER NOT NULL DEFAULT 0, expires_ms INTEGER NOT NULL DEFAULT 0,"
	" revoked INTEGER NOT NULL DEFAULT 0, revoked_ms INTEGER NOT NULL DEFAULT 0,"
	" size INTEGER NOT NULL DEFAULT 0, wrapped_key BLOB,"
	" held_by TEXT, held_pid INTEGER NOT NULL DEFAULT 0, held_start INTEGER NOT NULL DEFAULT 0,"
	" held_since_ms INTEGER NOT NULL DEFAULT 0,"
	" UNIQUE (tenant, user, name));"
	"ALTER TABLE prof_profiles ADD COLUMN held_instance TEXT;",
	/* 4: the artifact index (made by evidence/index.c before it was the
	 * store's) */
	"CREATE TABLE IF NOT EXISTS evid_artifacts ("
	" id INTEGER PRIMARY KEY,"
	" tenant TEXT NOT NULL, sha256 TEXT NOT NULL, kind TEXT NOT NULL, mime TEXT NOT NULL,"
	" size INTEGER NOT NULL, session TEXT, operation TEXT, tool TEXT, url TEXT,"
	" time TEXT NOT NULL, valid INTEGER NOT NULL, reason TEXT, record TEXT NOT NULL UNIQUE);"
	"CREATE INDEX IF NOT EXISTS evid_artifacts_time ON evid_artifacts(tenant, time);"
	"CREATE INDEX IF NOT EXISTS evid_artifacts_session ON evid_artifacts(tenant, session);"
	"CREATE INDEX IF NOT EXISTS evid_artifacts_sha ON evid_artifacts(tenant, sha256);",
	/* 5: where a profile's newest sealed version is in the object store
	 * (the SHA-256 of its bytes, which names the object) */
	"ALTER TABLE prof_profiles ADD COLUMN sealed_sha256 TEXT;",
};

struct store_sql_rows {
	sqlite3_stmt *s;
};

static sqlite3 *db_of(struct store *st)
{
	return st->conn;
}

/* Keeps SQLite's last failure for fail(). */
static void note_error(struct store *st)
{
	sqlite3 *db = db_of(st);

	st->last_code = db ? sqlite3_errcode(db) : SQLITE_CANTOPEN;
	snprintf(st->last_error, sizeof(st->last_error), "%s",
	         db ? sqlite3_errmsg(db) : "cannot open");
}

static int sqlite_fail(struct store *st, const char *doing, char *err, size_t errlen)
{
	int code = st->last_code;
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
	store_set_error(err, errlen, "cannot %s in %s: %s; %s", doing, st->path, st->last_error,
	                advice);
	return -STORE_EIO;
}

static int sqlite_connect(struct store *st, char *err, size_t errlen)
{
	sqlite3 *db = NULL;
	int made = gb_fs_create_db_file(st->path);

	if (made < 0) {
		store_set_error(err, errlen,
		                "cannot open %s: %s; make the data dir writable by this "
		                "user, or choose a writable one",
		                st->path, strerror(-made));
		return -STORE_EIO;
	}
	if (sqlite3_open_v2(st->path, &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX, NULL) !=
	    SQLITE_OK) {
		st->conn = db;
		note_error(st);
		return sqlite_fail(st, "open the store", err, errlen);
	}
	st->conn = db;
	sqlite3_busy_timeout(db, BUSY_TIMEOUT_MS);
	/* secure_delete: freed pages (a revoked profile's key) are zeroed */
	if (gb_db_exec_when_free(db,
	                         "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL; "
	                         "PRAGMA secure_delete=ON;",
	                         BUSY_TIMEOUT_MS) != SQLITE_OK) {
		note_error(st);
		return sqlite_fail(st, "switch the store to WAL mode", err, errlen);
	}
	return 0;
}

static void sqlite_disconnect(struct store *st)
{
	if (st->conn)
		sqlite3_close(db_of(st));
	st->conn = NULL;
}

static int sqlite_run(struct store *st, const char *sql, const struct store_sql_param *p, size_t n,
                      struct store_sql_rows **rows, int64_t *changes)
{
	sqlite3_stmt *s = NULL;
	size_t i;
	int bad = 0;
	int step;

	if (!p && !rows) {
		/* no parameters: may be several statements (migrations) */
		if (sqlite3_exec(db_of(st), sql, NULL, NULL, NULL) != SQLITE_OK)
			goto fail;
		if (changes)
			*changes = sqlite3_changes(db_of(st));
		return 0;
	}
	if (sqlite3_prepare_v2(db_of(st), sql, -1, &s, NULL) != SQLITE_OK)
		goto fail;
	for (i = 0; i < n; i++) {
		int col = (int)i + 1;

		if (p[i].type == STORE_SQL_TEXT)
			bad |= p[i].text
			           ? sqlite3_bind_text(s, col, p[i].text, -1, SQLITE_TRANSIENT)
			           : sqlite3_bind_null(s, col);
		else if (p[i].type == STORE_SQL_BLOB)
			bad |= p[i].blob ? sqlite3_bind_blob(s, col, p[i].blob,
			                                     (int)p[i].blob_bytes, SQLITE_TRANSIENT)
			                 : sqlite3_bind_null(s, col);
		else
			bad |= p[i].null ? sqlite3_bind_null(s, col)
			                 : sqlite3_bind_int64(s, col, p[i].i);
	}
	if (bad)
		goto fail;
	if (rows) {
		*rows = calloc(1, sizeof(**rows));
		if (!*rows)
			goto fail;
		(*rows)->s = s;
		return 0;
	}
	do {
		step = sqlite3_step(s);
	} while (step == SQLITE_ROW);
	if (step != SQLITE_DONE)
		goto fail;
	if (changes)
		*changes = sqlite3_changes(db_of(st));
	sqlite3_finalize(s);
	return 0;
fail:
	note_error(st);
	sqlite3_finalize(s);
	return -1;
}

static int sqlite_next(struct store *st, struct store_sql_rows *r)
{
	int step = sqlite3_step(r->s);

	if (step == SQLITE_ROW)
		return 1;
	if (step == SQLITE_DONE)
		return 0;
	note_error(st);
	return -1;
}

static const char *sqlite_text(struct store_sql_rows *r, int col)
{
	return (const char *)sqlite3_column_text(r->s, col);
}

static const unsigned char *sqlite_blob(struct store_sql_rows *r, int col, size_t *len)
{
	const unsigned char *b;

	*len = 0;
	if (sqlite3_column_type(r->s, col) == SQLITE_NULL)
		return NULL;
	b = sqlite3_column_blob(r->s, col);
	*len = (size_t)sqlite3_column_bytes(r->s, col);
	return b ? b : (const unsigned char *)"";
}

static void sqlite_done(struct store_sql_rows *r)
{
	sqlite3_finalize(r->s);
	free(r);
}

static int sqlite_begin(struct store *st, int migrating)
{
	(void)migrating; /* BEGIN IMMEDIATE already excludes every other writer */
	return sqlite_run(st, "BEGIN IMMEDIATE", NULL, 0, NULL, NULL);
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

static int sqlite_owner_is_dead(struct store *st, const char *owner);

/* Removes the lock files of handles that are gone (a killed process
 * leaves one per handle it had open; the operations they owned are
 * recovered all the same: a missing lock file is a dead owner). At most
 * 10000 entries are looked at. */
static void remove_stale_locks(struct store *st)
{
	DIR *d = opendir(st->lock_dir);
	struct dirent *e;
	char name[STORE_INSTANCE_BYTES];
	int seen = 0;

	while (d && seen++ < 10000 && (e = readdir(d)) != NULL) {
		size_t n = strlen(e->d_name);

		if (n != STORE_INSTANCE_BYTES - 1 + 5 || strcmp(e->d_name + n - 5, ".lock") != 0)
			continue;
		snprintf(name, sizeof(name), "%.*s", (int)(n - 5), e->d_name);
		sqlite_owner_is_dead(st, name); /* unlinks it when it is free */
	}
	if (d)
		closedir(d);
}

static int sqlite_claim_instance(struct store *st, char *err, size_t errlen)
{
	char path[STORE_PATH_BYTES + 64];
	char tmp[STORE_PATH_BYTES + 64];
	int rc;

	snprintf(path, sizeof(path), "%s/run", st->data_dir);
	rc = make_private_dir(path, err, errlen);
	if (rc < 0)
		return rc;
	rc = make_private_dir(st->lock_dir, err, errlen);
	if (rc < 0)
		return rc;
	/* locked under a temporary name, then named: a <instance>.lock is
	 * locked from the moment it exists, so remove_stale_locks never
	 * takes a new one for a dead one */
	snprintf(tmp, sizeof(tmp), "%s/%s.new", st->lock_dir, st->instance);
	snprintf(path, sizeof(path), "%s/%s.lock", st->lock_dir, st->instance);
	st->instance_fd = open(tmp, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (st->instance_fd < 0 || flock(st->instance_fd, LOCK_EX | LOCK_NB) != 0 ||
	    rename(tmp, path) != 0) {
		store_set_error(err, errlen,
		                "cannot create and lock %s: %s; make the data dir "
		                "writable by this user",
		                path, strerror(errno));
		unlink(tmp);
		return -STORE_EIO;
	}
	remove_stale_locks(st);
	return 0;
}

static int sqlite_owner_is_dead(struct store *st, const char *owner)
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

static void sqlite_release_instance(struct store *st)
{
	char path[STORE_PATH_BYTES + 64];

	if (st->instance_fd < 0)
		return;
	snprintf(path, sizeof(path), "%s/%s.lock", st->lock_dir, st->instance);
	unlink(path);
	close(st->instance_fd);
	st->instance_fd = -1;
}

const struct store_sql_backend store_sql_sqlite = {
	.name = "sqlite",
	.migrations = migrations,
	.n_migrations = sizeof(migrations) / sizeof(migrations[0]),
	.connect = sqlite_connect,
	.disconnect = sqlite_disconnect,
	.begin = sqlite_begin,
	.run = sqlite_run,
	.next = sqlite_next,
	.text = sqlite_text,
	.blob = sqlite_blob,
	.done = sqlite_done,
	.fail = sqlite_fail,
	.claim_instance = sqlite_claim_instance,
	.owner_is_dead = sqlite_owner_is_dead,
	.release_instance = sqlite_release_instance,
};

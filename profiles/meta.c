/*
 * meta.c - profiles' metadata in DATA/glassbox.db, table prof_profiles
 * (its own table, created if missing, beside store/'s):
 *
 *   id, tenant, user, name (unique per tenant and user), version,
 *   created_ms, last_used_ms, expires_ms, revoked, revoked_ms, size,
 *   wrapped_key (NULL once revoked), held_by, held_pid, held_start,
 *   held_since_ms
 *
 * Every change is one conditional UPDATE, so two processes racing for a
 * hold or a commit cannot both win (SQLite serialises writers; 5 s busy
 * timeout). A hold names its process by pid and the process's start time
 * (from /proc), so a recycled pid is not mistaken for the holder.
 */
#include "profiles/profiles-private.h"

#include "common/db.h"
#include "common/fs.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define BUSY_TIMEOUT_MS 5000
#define COLUMNS                                                                            \
	"id, tenant, user, name, version, created_ms, last_used_ms, expires_ms, revoked, " \
	"revoked_ms, size, held_by, held_pid, held_since_ms, wrapped_key"

struct prof_db {
	sqlite3 *db;
};

static const char schema[] =
    "CREATE TABLE IF NOT EXISTS prof_profiles ("
    " id TEXT PRIMARY KEY, tenant TEXT NOT NULL, user TEXT NOT NULL, name TEXT NOT NULL,"
    " version INTEGER NOT NULL DEFAULT 0, created_ms INTEGER NOT NULL,"
    " last_used_ms INTEGER NOT NULL DEFAULT 0, expires_ms INTEGER NOT NULL DEFAULT 0,"
    " revoked INTEGER NOT NULL DEFAULT 0, revoked_ms INTEGER NOT NULL DEFAULT 0,"
    " size INTEGER NOT NULL DEFAULT 0, wrapped_key BLOB,"
    " held_by TEXT, held_pid INTEGER NOT NULL DEFAULT 0, held_start INTEGER NOT NULL DEFAULT 0,"
    " held_since_ms INTEGER NOT NULL DEFAULT 0,"
    " UNIQUE (tenant, user, name));";

int64_t prof_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* The start time of process pid in clock ticks since boot (field 22 of
 * /proc/PID/stat), or 0 when it cannot be read. */
static int64_t process_start(int64_t pid)
{
	char path[64];
	char buf[1024];
	const char *p;
	long long start = 0;
	ssize_t n;
	int field;
	int fd;

	snprintf(path, sizeof(path), "/proc/%lld/stat", (long long)pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return 0;
	buf[n] = '\0';
	p = strrchr(buf, ')'); /* the command name may hold spaces */
	if (!p)
		return 0;
	/* after ") " comes field 3 */
	for (field = 3, p++; *p && field < 22; p++)
		if (*p == ' ' && p[1] != ' ')
			field++;
	if (field == 22)
		sscanf(p, "%lld", &start);
	return start;
}

int prof_pid_alive(int64_t pid)
{
	if (pid <= 0)
		return 0;
	return kill((pid_t)pid, 0) == 0 || errno == EPERM;
}

/* 1 when (pid, start) still names a live process. */
static int holder_alive(int64_t pid, int64_t start)
{
	return prof_pid_alive(pid) && (start == 0 || process_start(pid) == start);
}

static int db_error(struct prof_db *db, const char *doing, char *err, size_t errlen)
{
	gb_set_error(err, errlen,
	             "the profile metadata could not %s: %s; check that the data dir "
	             "is writable and not full",
	             doing, sqlite3_errmsg(db->db));
	return -PROF_EIO;
}

int prof_db_open(const char *data_dir, struct prof_db **out, char *err, size_t errlen)
{
	struct prof_db *db = calloc(1, sizeof(*db));
	char path[4096];
	struct stat st;
	int fd;
	int rc = 0;

	*out = NULL;
	if (!db)
		return -PROF_ENOMEM;
	if (gb_pathf(path, sizeof(path), "%s/glassbox.db", data_dir) < 0) {
		gb_set_error(err, errlen, "the data dir path %.200s is too long", data_dir);
		rc = -PROF_EINVAL;
		goto out;
	}
	if (gb_fs_mkdirs_abs(data_dir, err, errlen) < 0) {
		rc = -PROF_EIO;
		goto out;
	}
	/* Created 0600 here when missing (SQLite gives its -wal and -shm files
	 * the database's mode). Only then: closing a descriptor of a database
	 * this process has open through SQLite would drop SQLite's POSIX locks
	 * on it (and let another process corrupt it). */
	if (lstat(path, &st) != 0) {
		fd = open(path, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
		if (fd < 0) {
			gb_set_io_error(err, errlen, "open", path, errno);
			rc = -PROF_EIO;
			goto out;
		}
		close(fd);
	}
	if (sqlite3_open_v2(path, &db->db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_FULLMUTEX, NULL) !=
	    SQLITE_OK) {
		rc = db_error(db, "be opened", err, errlen);
		goto out;
	}
	sqlite3_busy_timeout(db->db, BUSY_TIMEOUT_MS);
	/* retried like the store's: the switch to WAL fails at once, without
	 * the busy handler, while another connection writes the new file */
	if (gb_db_exec_when_free(
	        db->db,
	        "PRAGMA journal_mode=WAL; PRAGMA synchronous=FULL; PRAGMA secure_delete=ON;",
	        BUSY_TIMEOUT_MS) != SQLITE_OK ||
	    gb_db_exec_when_free(db->db, schema, BUSY_TIMEOUT_MS) != SQLITE_OK) {
		rc = db_error(db, "be set up", err, errlen);
		goto out;
	}
	*out = db;
	db = NULL;
out:
	prof_db_close(db);
	return rc;
}

void prof_db_close(struct prof_db *db)
{
	if (!db)
		return;
	if (db->db)
		sqlite3_close(db->db);
	free(db);
}

/* Prepares sql; NULL after setting err. */
static sqlite3_stmt *prepare(struct prof_db *db, const char *sql, char *err, size_t errlen)
{
	sqlite3_stmt *st = NULL;

	if (sqlite3_prepare_v2(db->db, sql, -1, &st, NULL) != SQLITE_OK) {
		db_error(db, "be read", err, errlen);
		return NULL;
	}
	return st;
}

static void copy_text(char *dst, size_t dstlen, const unsigned char *src)
{
	snprintf(dst, dstlen, "%s", src ? (const char *)src : "");
}

/* Fills p from a row of COLUMNS. */
static void read_row(sqlite3_stmt *st, struct prof_info *p)
{
	memset(p, 0, sizeof(*p));
	copy_text(p->id, sizeof(p->id), sqlite3_column_text(st, 0));
	copy_text(p->tenant, sizeof(p->tenant), sqlite3_column_text(st, 1));
	copy_text(p->user, sizeof(p->user), sqlite3_column_text(st, 2));
	copy_text(p->name, sizeof(p->name), sqlite3_column_text(st, 3));
	p->version = sqlite3_column_int64(st, 4);
	p->created_ms = sqlite3_column_int64(st, 5);
	p->last_used_ms = sqlite3_column_int64(st, 6);
	p->expires_ms = sqlite3_column_int64(st, 7);
	p->revoked = sqlite3_column_int(st, 8);
	p->revoked_ms = sqlite3_column_int64(st, 9);
	p->size_bytes = sqlite3_column_int64(st, 10);
	copy_text(p->held_by, sizeof(p->held_by), sqlite3_column_text(st, 11));
	p->held_pid = sqlite3_column_int64(st, 12);
	p->held_since_ms = sqlite3_column_int64(st, 13);
}

int prof_db_insert(struct prof_db *db, const struct prof_info *p, const unsigned char *wrapped,
                   size_t wrapped_len, char *err, size_t errlen)
{
	sqlite3_stmt *st = prepare(db,
	                           "INSERT INTO prof_profiles (id, tenant, user, name, created_ms, "
	                           "expires_ms, wrapped_key) VALUES (?, ?, ?, ?, ?, ?, ?)",
	                           err, errlen);
	int r;
	int rc = 0;

	if (!st)
		return -PROF_EIO;
	sqlite3_bind_text(st, 1, p->id, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 2, p->tenant, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 3, p->user, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 4, p->name, -1, SQLITE_STATIC);
	sqlite3_bind_int64(st, 5, p->created_ms);
	sqlite3_bind_int64(st, 6, p->expires_ms);
	sqlite3_bind_blob(st, 7, wrapped, (int)wrapped_len, SQLITE_STATIC);
	r = sqlite3_step(st);
	if (r == SQLITE_CONSTRAINT) {
		gb_set_error(err, errlen,
		             "user %s of tenant %s already has a profile named %s: pick "
		             "another name, or delete that one first",
		             p->user, p->tenant, p->name);
		rc = -PROF_EEXIST;
	} else if (r != SQLITE_DONE) {
		rc = db_error(db, "be written", err, errlen);
	}
	sqlite3_finalize(st);
	return rc;
}

int prof_db_get(struct prof_db *db, const char *tenant, const char *user, const char *name,
                struct prof_info *out, unsigned char **wrapped, size_t *wrapped_len, char *err,
                size_t errlen)
{
	sqlite3_stmt *st = prepare(db,
	                           "SELECT " COLUMNS " FROM prof_profiles WHERE tenant = ? AND "
	                           "user = ? AND name = ?",
	                           err, errlen);
	int r;
	int rc = 0;

	if (wrapped) {
		*wrapped = NULL;
		*wrapped_len = 0;
	}
	if (!st)
		return -PROF_EIO;
	sqlite3_bind_text(st, 1, tenant, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 2, user, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 3, name, -1, SQLITE_STATIC);
	r = sqlite3_step(st);
	if (r == SQLITE_ROW) {
		read_row(st, out);
		if (wrapped && sqlite3_column_type(st, 14) == SQLITE_BLOB) {
			size_t n = (size_t)sqlite3_column_bytes(st, 14);

			*wrapped = malloc(n ? n : 1);
			if (*wrapped) {
				memcpy(*wrapped, sqlite3_column_blob(st, 14), n);
				*wrapped_len = n;
			} else {
				rc = -PROF_ENOMEM;
			}
		}
	} else if (r == SQLITE_DONE) {
		gb_set_error(err, errlen,
		             "user %s of tenant %s has no profile named %s: list them "
		             "with `glassbox profile list`, or create it",
		             user, tenant, name);
		rc = -PROF_ENOTFOUND;
	} else {
		rc = db_error(db, "be read", err, errlen);
	}
	sqlite3_finalize(st);
	return rc;
}

int prof_db_list(struct prof_db *db, const char *tenant, const char *user, struct prof_info **out,
                 size_t *n, char *err, size_t errlen)
{
	sqlite3_stmt *st = prepare(db,
	                           "SELECT " COLUMNS " FROM prof_profiles WHERE (?1 IS NULL OR "
	                           "tenant = ?1) AND (?2 IS NULL OR user = ?2) ORDER BY "
	                           "created_ms, name",
	                           err, errlen);
	struct prof_info *v = NULL;
	struct prof_info *grown;
	size_t cap = 0;
	int r;
	int rc = 0;

	*out = NULL;
	*n = 0;
	if (!st)
		return -PROF_EIO;
	sqlite3_bind_text(st, 1, tenant, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 2, user, -1, SQLITE_STATIC);
	while ((r = sqlite3_step(st)) == SQLITE_ROW) {
		if (*n == cap) {
			cap = cap ? cap * 2 : 16;
			grown = realloc(v, cap * sizeof(*v));
			if (!grown) {
				rc = -PROF_ENOMEM;
				goto out;
			}
			v = grown;
		}
		read_row(st, &v[(*n)++]);
	}
	if (r != SQLITE_DONE)
		rc = db_error(db, "be read", err, errlen);
out:
	sqlite3_finalize(st);
	if (rc < 0) {
		free(v);
		*n = 0;
		v = NULL;
	}
	*out = v;
	return rc;
}

/* Runs an UPDATE/DELETE whose parameters are bound by the caller: the
 * number of rows changed, or -PROF_EIO. */
static int run_change(struct prof_db *db, sqlite3_stmt *st, char *err, size_t errlen)
{
	int r = sqlite3_step(st);
	int rc;

	if (r != SQLITE_DONE)
		rc = db_error(db, "be written", err, errlen);
	else
		rc = sqlite3_changes(db->db);
	sqlite3_finalize(st);
	return rc;
}

int prof_db_delete(struct prof_db *db, const char *id, char *err, size_t errlen)
{
	sqlite3_stmt *st = prepare(db, "DELETE FROM prof_profiles WHERE id = ?", err, errlen);
	int rc;

	if (!st)
		return -PROF_EIO;
	sqlite3_bind_text(st, 1, id, -1, SQLITE_STATIC);
	rc = run_change(db, st, err, errlen);
	return rc < 0 ? rc : 0;
}

int prof_db_revoke(struct prof_db *db, const char *id, int64_t now_ms, char *err, size_t errlen)
{
	sqlite3_stmt *st = prepare(db,
	                           "UPDATE prof_profiles SET revoked = 1, revoked_ms = ?, "
	                           "wrapped_key = zeroblob(length(wrapped_key)) WHERE id = ?",
	                           err, errlen);
	int rc;

	if (!st)
		return -PROF_EIO;
	sqlite3_bind_int64(st, 1, now_ms);
	sqlite3_bind_text(st, 2, id, -1, SQLITE_STATIC);
	rc = run_change(db, st, err, errlen);
	if (rc < 0)
		return rc;
	/* overwrite first (secure_delete below makes SQLite clear freed pages
	 * too), then drop the key for good */
	st = prepare(db, "UPDATE prof_profiles SET wrapped_key = NULL WHERE id = ?", err, errlen);
	if (!st)
		return -PROF_EIO;
	sqlite3_bind_text(st, 1, id, -1, SQLITE_STATIC);
	rc = run_change(db, st, err, errlen);
	return rc < 0 ? rc : 0;
}

int prof_db_hold(struct prof_db *db, const char *id, const char *holder, int64_t pid,
                 int64_t since_ms, int64_t stale_pid, int64_t stale_since_ms, char *err,
                 size_t errlen)
{
	sqlite3_stmt *st = prepare(db,
	                           "UPDATE prof_profiles SET held_by = ?, held_pid = ?, "
	                           "held_start = ?, held_since_ms = ? WHERE id = ? AND held_pid "
	                           "= ? AND held_since_ms = ?",
	                           err, errlen);
	int rc;

	if (!st)
		return -PROF_EIO;
	sqlite3_bind_text(st, 1, holder, -1, SQLITE_STATIC);
	sqlite3_bind_int64(st, 2, pid);
	sqlite3_bind_int64(st, 3, process_start(pid));
	sqlite3_bind_int64(st, 4, since_ms);
	sqlite3_bind_text(st, 5, id, -1, SQLITE_STATIC);
	sqlite3_bind_int64(st, 6, stale_pid);
	sqlite3_bind_int64(st, 7, stale_since_ms);
	rc = run_change(db, st, err, errlen);
	if (rc < 0)
		return rc;
	return rc == 1 ? 0 : 1;
}

int prof_db_release(struct prof_db *db, const char *id, int64_t pid, int64_t since_ms)
{
	sqlite3_stmt *st = prepare(db,
	                           "UPDATE prof_profiles SET held_by = NULL, held_pid = 0, "
	                           "held_start = 0, held_since_ms = 0 WHERE id = ? AND held_pid "
	                           "= ? AND held_since_ms = ?",
	                           NULL, 0);
	int rc;

	if (!st)
		return -PROF_EIO;
	sqlite3_bind_text(st, 1, id, -1, SQLITE_STATIC);
	sqlite3_bind_int64(st, 2, pid);
	sqlite3_bind_int64(st, 3, since_ms);
	rc = run_change(db, st, NULL, 0);
	return rc < 0 ? rc : 0;
}

int prof_db_commit(struct prof_db *db, const char *id, int64_t new_version, int64_t size,
                   int64_t pid, int64_t since_ms, int64_t now_ms, char *err, size_t errlen)
{
	sqlite3_stmt *st = prepare(db,
	                           "UPDATE prof_profiles SET version = ?, size = ?, "
	                           "last_used_ms = ? WHERE id = ? AND version = ? AND held_pid = "
	                           "? AND held_since_ms = ? AND revoked = 0",
	                           err, errlen);
	int rc;

	if (!st)
		return -PROF_EIO;
	sqlite3_bind_int64(st, 1, new_version);
	sqlite3_bind_int64(st, 2, size);
	sqlite3_bind_int64(st, 3, now_ms);
	sqlite3_bind_text(st, 4, id, -1, SQLITE_STATIC);
	sqlite3_bind_int64(st, 5, new_version - 1);
	sqlite3_bind_int64(st, 6, pid);
	sqlite3_bind_int64(st, 7, since_ms);
	rc = run_change(db, st, err, errlen);
	if (rc < 0)
		return rc;
	return rc == 1 ? 0 : 1;
}

int prof_db_touch(struct prof_db *db, const char *id, int64_t now_ms)
{
	sqlite3_stmt *st =
	    prepare(db, "UPDATE prof_profiles SET last_used_ms = ? WHERE id = ?", NULL, 0);
	int rc;

	if (!st)
		return -PROF_EIO;
	sqlite3_bind_int64(st, 1, now_ms);
	sqlite3_bind_text(st, 2, id, -1, SQLITE_STATIC);
	rc = run_change(db, st, NULL, 0);
	return rc < 0 ? rc : 0;
}

int prof_db_holder_alive(struct prof_db *db, const char *id)
{
	sqlite3_stmt *st =
	    prepare(db, "SELECT held_pid, held_start FROM prof_profiles WHERE id = ?", NULL, 0);
	int alive = 0;

	if (!st)
		return 1; /* cannot tell: assume it is, never take a live hold */
	sqlite3_bind_text(st, 1, id, -1, SQLITE_STATIC);
	if (sqlite3_step(st) == SQLITE_ROW)
		alive = holder_alive(sqlite3_column_int64(st, 0), sqlite3_column_int64(st, 1));
	sqlite3_finalize(st);
	return alive;
}

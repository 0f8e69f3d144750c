/*
 * index.c - the artifact index in SQLite (DATA/glassbox.db, table
 * evid_artifacts, WAL mode). See index.h for the interface; nothing
 * outside this file knows it is SQLite.
 *
 * Threads: one connection per handle, opened without SQLite's own mutex;
 * ix->lock serialises every use of it (statements and error messages).
 * Other processes share the file through SQLite's locking with a busy
 * timeout. The index is derived data: the metadata records beside the
 * artifacts are the truth, and evid_index_rebuild() re-reads them.
 */
#include "evidence/index.h"
#include "evidence/evidence-private.h"
#include "evidence/evidence.h"

#include "common/db.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define PATH_BYTES 4096
#define BUSY_TIMEOUT_MS 5000

struct evid_index {
	pthread_mutex_t lock;
	sqlite3 *db; /* {ix->lock} */
	char path[PATH_BYTES];
};

static const char schema_sql[] =
    "CREATE TABLE IF NOT EXISTS evid_artifacts ("
    " id INTEGER PRIMARY KEY,"
    " tenant TEXT NOT NULL, sha256 TEXT NOT NULL, kind TEXT NOT NULL, mime TEXT NOT NULL,"
    " size INTEGER NOT NULL, session TEXT, operation TEXT, tool TEXT, url TEXT,"
    " time TEXT NOT NULL, valid INTEGER NOT NULL, reason TEXT, record TEXT NOT NULL UNIQUE);"
    "CREATE INDEX IF NOT EXISTS evid_artifacts_time ON evid_artifacts(tenant, time);"
    "CREATE INDEX IF NOT EXISTS evid_artifacts_session ON evid_artifacts(tenant, session);"
    "CREATE INDEX IF NOT EXISTS evid_artifacts_sha ON evid_artifacts(tenant, sha256);";

static const char insert_sql[] =
    "INSERT OR IGNORE INTO evid_artifacts (tenant, sha256, kind, mime, size, session,"
    " operation, tool, url, time, valid, reason, record)"
    " VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13)";

static const char find_sql[] =
    "SELECT tenant, sha256, kind, mime, size, session, operation, tool, url, time, valid,"
    " reason, record FROM evid_artifacts WHERE tenant = ?1"
    " AND (?2 IS NULL OR sha256 = ?2) AND (?3 IS NULL OR session = ?3)"
    " AND (?4 IS NULL OR operation = ?4) AND (?5 IS NULL OR kind = ?5)"
    " AND (?6 IS NULL OR time >= ?6) AND (?7 IS NULL OR time < ?7)"
    " ORDER BY time, id LIMIT ?8";

/* Says what failed, with SQLite's message and advice. Lock held. */
static int db_error_locked(struct evid_index *ix, const char *doing, char *err, size_t errlen)
{
	int code = ix->db ? sqlite3_errcode(ix->db) : SQLITE_CANTOPEN;
	const char *advice = "check the data dir and the disk it is on";

	if (code == SQLITE_FULL)
		advice = "free space on that file system or move the data dir to a larger one";
	else if (code == SQLITE_READONLY || code == SQLITE_PERM || code == SQLITE_CANTOPEN)
		advice = "make the data dir writable by this user, or choose a writable one";
	else if (code == SQLITE_BUSY || code == SQLITE_LOCKED)
		advice = "another process holds the database too long: try again";
	else if (code == SQLITE_CORRUPT || code == SQLITE_NOTADB)
		advice = "the index is damaged: move glassbox.db aside and rebuild the index";
	gb_set_error(err, errlen, "cannot %s in %s: %s; %s", doing, ix->path,
	             ix->db ? sqlite3_errmsg(ix->db) : "cannot open", advice);
	return -EVID_EIO;
}

int evid_index_open(const char *data_dir, struct evid_index **out, char *err, size_t errlen)
{
	struct evid_index *ix = NULL;
	int made;
	int n;
	int rc = 0;

	*out = NULL;
	ix = calloc(1, sizeof(*ix));
	if (!ix) {
		gb_set_error(err, errlen, "out of memory opening the artifact index");
		rc = -EVID_ENOMEM;
		goto out;
	}
	pthread_mutex_init(&ix->lock, NULL);
	n = snprintf(ix->path, sizeof(ix->path), "%s/glassbox.db", data_dir);
	if (n < 0 || (size_t)n >= sizeof(ix->path)) {
		gb_set_error(err, errlen, "the data dir path %s is too long", data_dir);
		rc = -EVID_EINVAL;
		goto out;
	}
	made = gb_fs_create_db_file(ix->path);
	if (made < 0) {
		gb_set_io_error(err, errlen, "open the artifact index", ix->path, -made);
		rc = -EVID_EIO;
		goto out;
	}
	if (sqlite3_open_v2(ix->path, &ix->db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX, NULL) !=
	    SQLITE_OK) {
		rc = db_error_locked(ix, "open the artifact index", err, errlen);
		goto out;
	}
	sqlite3_busy_timeout(ix->db, BUSY_TIMEOUT_MS);
	if (gb_db_exec_when_free(ix->db, "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;",
	                         BUSY_TIMEOUT_MS) != SQLITE_OK ||
	    gb_db_exec_when_free(ix->db, schema_sql, BUSY_TIMEOUT_MS) != SQLITE_OK) {
		rc = db_error_locked(ix, "create the artifact index", err, errlen);
		goto out;
	}
	*out = ix;
	ix = NULL;
out:
	evid_index_close(ix);
	return rc;
}

void evid_index_close(struct evid_index *ix)
{
	if (!ix)
		return;
	if (ix->db)
		sqlite3_close(ix->db);
	pthread_mutex_destroy(&ix->lock);
	free(ix);
}

/* Binds a string or NULL. */
static int bind_text(sqlite3_stmt *st, int i, const char *s)
{
	return s ? sqlite3_bind_text(st, i, s, -1, SQLITE_TRANSIENT) : sqlite3_bind_null(st, i);
}

/* Inserts row unless its record is there; *inserted (may be NULL) says
 * whether a row was added. */
static int add_row(struct evid_index *ix, const struct evid_index_row *row, int *inserted,
                   char *err, size_t errlen)
{
	sqlite3_stmt *st = NULL;
	int locked = 0;
	int bad = 0;
	int rc = 0;

	if (!ix || !row || !row->tenant || !row->sha256 || !row->kind || !row->mime || !row->time ||
	    !row->record) {
		gb_set_error(err, errlen,
		             "an index row needs tenant, sha256, kind, mime, time and "
		             "record");
		rc = -EVID_EINVAL;
		goto out;
	}
	pthread_mutex_lock(&ix->lock);
	locked = 1;
	if (sqlite3_prepare_v2(ix->db, insert_sql, -1, &st, NULL) != SQLITE_OK) {
		rc = db_error_locked(ix, "prepare an index insert", err, errlen);
		goto out;
	}
	bad |= bind_text(st, 1, row->tenant);
	bad |= bind_text(st, 2, row->sha256);
	bad |= bind_text(st, 3, row->kind);
	bad |= bind_text(st, 4, row->mime);
	bad |= sqlite3_bind_int64(st, 5, (sqlite3_int64)row->size_bytes);
	bad |= bind_text(st, 6, row->session_id);
	bad |= bind_text(st, 7, row->operation_id);
	bad |= bind_text(st, 8, row->tool);
	bad |= bind_text(st, 9, row->url);
	bad |= bind_text(st, 10, row->time);
	bad |= sqlite3_bind_int(st, 11, row->valid ? 1 : 0);
	bad |= bind_text(st, 12, row->reason);
	bad |= bind_text(st, 13, row->record);
	if (bad != SQLITE_OK || sqlite3_step(st) != SQLITE_DONE) {
		rc = db_error_locked(ix, "add an artifact to the index", err, errlen);
		goto out;
	}
	if (inserted)
		*inserted = sqlite3_changes(ix->db) > 0;
out:
	sqlite3_finalize(st);
	if (locked)
		pthread_mutex_unlock(&ix->lock);
	return rc;
}

int evid_index_add(struct evid_index *ix, const struct evid_index_row *row, char *err,
                   size_t errlen)
{
	return add_row(ix, row, NULL, err, errlen);
}

/* A text column, or NULL. */
static const char *col_text(sqlite3_stmt *st, int i)
{
	return (const char *)sqlite3_column_text(st, i);
}

int evid_index_find(struct evid_index *ix, const struct evid_index_query *q, evid_index_cb cb,
                    void *user, char *err, size_t errlen)
{
	struct evid_index_row row;
	sqlite3_stmt *st = NULL;
	int locked = 0;
	int bad = 0;
	int step;
	int rc = 0;

	if (!ix || !q || !q->tenant || !cb) {
		gb_set_error(err, errlen, "an index query needs a tenant and a callback");
		rc = -EVID_EINVAL;
		goto out;
	}
	pthread_mutex_lock(&ix->lock);
	locked = 1;
	if (sqlite3_prepare_v2(ix->db, find_sql, -1, &st, NULL) != SQLITE_OK) {
		rc = db_error_locked(ix, "prepare an index query", err, errlen);
		goto out;
	}
	bad |= bind_text(st, 1, q->tenant);
	bad |= bind_text(st, 2, q->sha256);
	bad |= bind_text(st, 3, q->session_id);
	bad |= bind_text(st, 4, q->operation_id);
	bad |= bind_text(st, 5, q->kind);
	bad |= bind_text(st, 6, q->since);
	bad |= bind_text(st, 7, q->before);
	bad |= sqlite3_bind_int64(st, 8, q->limit ? (sqlite3_int64)q->limit : -1);
	if (bad != SQLITE_OK) {
		rc = db_error_locked(ix, "prepare an index query", err, errlen);
		goto out;
	}
	for (;;) {
		step = sqlite3_step(st);
		if (step == SQLITE_DONE)
			break;
		if (step != SQLITE_ROW) {
			rc = db_error_locked(ix, "query the index", err, errlen);
			goto out;
		}
		memset(&row, 0, sizeof(row));
		row.tenant = col_text(st, 0);
		row.sha256 = col_text(st, 1);
		row.kind = col_text(st, 2);
		row.mime = col_text(st, 3);
		row.size_bytes = (size_t)sqlite3_column_int64(st, 4);
		row.session_id = col_text(st, 5);
		row.operation_id = col_text(st, 6);
		row.tool = col_text(st, 7);
		row.url = col_text(st, 8);
		row.time = col_text(st, 9);
		row.valid = sqlite3_column_int(st, 10);
		row.reason = col_text(st, 11);
		row.record = col_text(st, 12);
		if (cb(&row, user) != 0)
			break;
	}
out:
	sqlite3_finalize(st);
	if (locked)
		pthread_mutex_unlock(&ix->lock);
	return rc;
}

int evid_index_remove(struct evid_index *ix, const char *tenant, const char *sha256, char *err,
                      size_t errlen)
{
	sqlite3_stmt *st = NULL;
	int rc = 0;

	pthread_mutex_lock(&ix->lock);
	if (sqlite3_prepare_v2(ix->db,
	                       "DELETE FROM evid_artifacts WHERE tenant = ?1 AND sha256 = ?2", -1,
	                       &st, NULL) != SQLITE_OK ||
	    bind_text(st, 1, tenant) != SQLITE_OK || bind_text(st, 2, sha256) != SQLITE_OK ||
	    sqlite3_step(st) != SQLITE_DONE)
		rc = db_error_locked(ix, "remove an artifact from the index", err, errlen);
	sqlite3_finalize(st);
	pthread_mutex_unlock(&ix->lock);
	return rc;
}

/* ---- rebuild ------------------------------------------------------------ */

/* A string member or NULL. */
static const char *member(json_t *obj, const char *name)
{
	return json_string_value(json_object_get(obj, name));
}

/* Adds the row of one metadata record file (rel: path under data_dir). */
static int add_record_file(struct evid_index *ix, const char *data_dir, const char *rel,
                           size_t *added, char *err, size_t errlen)
{
	char path[PATH_BYTES];
	unsigned char *text = NULL;
	size_t len = 0;
	json_t *rec = NULL;
	struct evid_index_row row;
	int inserted = 0;
	int n;
	int rc = 0;

	n = snprintf(path, sizeof(path), "%s/%s", data_dir, rel);
	if (n < 0 || (size_t)n >= sizeof(path))
		goto out;
	if (gb_fs_read_file(path, EVID_MAX_META_BYTES, &text, &len, NULL, 0) != 0)
		goto out; /* unreadable records are skipped: the index is best effort */
	rec = json_loadb((const char *)text, len, JSON_REJECT_DUPLICATES, NULL);
	memset(&row, 0, sizeof(row));
	row.tenant = member(rec, "tenant");
	row.sha256 = member(rec, "sha256");
	row.kind = member(rec, "kind");
	row.mime = member(rec, "mime");
	row.size_bytes = (size_t)json_integer_value(json_object_get(rec, "size"));
	row.session_id = member(rec, "session");
	row.operation_id = member(rec, "operation");
	row.tool = member(rec, "tool");
	row.url = member(rec, "url");
	row.time = member(rec, "time");
	row.valid = json_is_true(json_object_get(rec, "valid"));
	row.reason = member(rec, "reason");
	row.record = rel;
	if (!row.tenant || !row.sha256 || !row.kind || !row.mime || !row.time)
		goto out;
	rc = add_row(ix, &row, &inserted, err, errlen);
	if (rc == 0 && inserted && added)
		(*added)++;
out:
	json_decref(rec);
	free(text);
	return rc;
}

/* 1 when name is "<64 hex>[.<anything>].json". */
static int is_record_name(const char *name)
{
	char sha[65];
	size_t len = strlen(name);

	if (len < 69 || strcmp(name + len - 5, ".json") != 0)
		return 0;
	memcpy(sha, name, 64);
	sha[64] = '\0';
	return evid_sha256_hex_is_valid(sha) && (name[64] == '.');
}

/* Walks <tree>/<aa>/ of tenant for metadata records. */
static int rebuild_tree(struct evid_index *ix, const char *data_dir, const char *tenant,
                        const char *tree, size_t *added, char *err, size_t errlen)
{
	char dir[PATH_BYTES];
	char sub[PATH_BYTES];
	char rel[PATH_BYTES];
	struct dirent *de;
	struct dirent *fe;
	DIR *d = NULL;
	DIR *f = NULL;
	int n;
	int rc = 0;

	n = snprintf(dir, sizeof(dir), "%s/tenants/%s/%s", data_dir, tenant, tree);
	d = n > 0 && (size_t)n < sizeof(dir) ? opendir(dir) : NULL;
	if (!d)
		goto out; /* nothing stored there */
	while (rc == 0) {
		de = readdir(d);
		if (!de)
			break;
		if (strlen(de->d_name) != 2 || de->d_name[0] == '.')
			continue;
		n = snprintf(sub, sizeof(sub), "%s/%s", dir, de->d_name);
		f = n > 0 && (size_t)n < sizeof(sub) ? opendir(sub) : NULL;
		if (!f)
			continue;
		while (rc == 0) {
			fe = readdir(f);
			if (!fe)
				break;
			if (!is_record_name(fe->d_name))
				continue;
			n = snprintf(rel, sizeof(rel), "tenants/%s/%s/%s/%s", tenant, tree,
			             de->d_name, fe->d_name);
			if (n < 0 || (size_t)n >= sizeof(rel))
				continue;
			rc = add_record_file(ix, data_dir, rel, added, err, errlen);
		}
		closedir(f);
		f = NULL;
	}
out:
	if (d)
		closedir(d);
	return rc;
}

int evid_index_rebuild(struct evid_index *ix, const char *data_dir, const char *tenant,
                       size_t *added, char *err, size_t errlen)
{
	int rc;

	if (added)
		*added = 0;
	if (!ix || !gb_fs_name_is_safe(tenant)) {
		gb_set_error(err, errlen,
		             "rebuilding the index needs an open index and a valid "
		             "tenant name");
		rc = -EVID_EINVAL;
		goto out;
	}
	rc = rebuild_tree(ix, data_dir, tenant, "artifacts", added, err, errlen);
	if (rc == 0)
		rc = rebuild_tree(ix, data_dir, tenant, "invalid", added, err, errlen);
out:
	return rc;
}

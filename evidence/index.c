/*
 * index.c - the artifact index, table evid_artifacts of the store
 * (store/sql.h: SQLite's DATA/glassbox.db, or the PostgreSQL database
 * replicas share; the store's migrations create it). See index.h for
 * the interface.
 *
 * Threads: one store handle per index handle; the store serialises its
 * statements. The index is derived data: the metadata records beside the
 * artifacts are the truth, and evid_index_rebuild() re-reads them.
 */
#include "evidence/index.h"
#include "evidence/evidence-private.h"
#include "evidence/evidence.h"

#include "store/sql.h"
#include "store/store.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define PATH_BYTES 4096

struct evid_index {
	struct store *st;
};

static const char insert_sql[] =
    "INSERT INTO evid_artifacts (tenant, sha256, kind, mime, size, session,"
    " operation, tool, url, time, valid, reason, record)"
    " VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13) ON CONFLICT DO NOTHING";

static const char find_sql[] =
    "SELECT tenant, sha256, kind, mime, size, session, operation, tool, url, time, valid,"
    " reason, record FROM evid_artifacts WHERE tenant = ?1"
    " AND (?2 IS NULL OR sha256 = ?2) AND (?3 IS NULL OR session = ?3)"
    " AND (?4 IS NULL OR operation = ?4) AND (?5 IS NULL OR kind = ?5)"
    " AND (?6 IS NULL OR time >= ?6) AND (?7 IS NULL OR time < ?7)"
    " ORDER BY time, id LIMIT ?8";

/* The store's error as an evidence error. */
static int db_rc(int rc)
{
	if (rc == 0)
		return 0;
	return rc == -STORE_ENOMEM ? -EVID_ENOMEM : -EVID_EIO;
}

int evid_index_open(const char *data_dir, struct evid_index **out, char *err, size_t errlen)
{
	struct evid_index *ix = NULL;
	int rc = 0;

	*out = NULL;
	ix = calloc(1, sizeof(*ix));
	if (!ix) {
		gb_set_error(err, errlen, "out of memory opening the artifact index");
		return -EVID_ENOMEM;
	}
	rc = db_rc(store_open(data_dir, &ix->st, err, errlen));
	if (rc < 0) {
		evid_index_close(ix);
		return rc;
	}
	*out = ix;
	return 0;
}

void evid_index_close(struct evid_index *ix)
{
	if (!ix)
		return;
	store_close(ix->st);
	free(ix);
}

/* Inserts row unless its record is there; *inserted (may be NULL) says
 * whether a row was added. */
static int add_row(struct evid_index *ix, const struct evid_index_row *row, int *inserted,
                   char *err, size_t errlen)
{
	int64_t changed = 0;
	int rc;

	if (!ix || !row || !row->tenant || !row->sha256 || !row->kind || !row->mime || !row->time ||
	    !row->record) {
		gb_set_error(err, errlen,
		             "an index row needs tenant, sha256, kind, mime, time and "
		             "record");
		return -EVID_EINVAL;
	}
	{
		const struct store_sql_param p[] = {
			SQL_TEXT(row->tenant),       SQL_TEXT(row->sha256),
			SQL_TEXT(row->kind),         SQL_TEXT(row->mime),
			SQL_INT(row->size_bytes),    SQL_TEXT(row->session_id),
			SQL_TEXT(row->operation_id), SQL_TEXT(row->tool),
			SQL_TEXT(row->url),          SQL_TEXT(row->time),
			SQL_INT(row->valid ? 1 : 0), SQL_TEXT(row->reason),
			SQL_TEXT(row->record),
		};

		rc = db_rc(store_sql_change(ix->st, "add an artifact to the index", insert_sql, p,
		                            13, &changed, err, errlen));
	}
	if (rc == 0 && inserted)
		*inserted = changed > 0;
	return rc;
}

int evid_index_add(struct evid_index *ix, const struct evid_index_row *row, char *err,
                   size_t errlen)
{
	return add_row(ix, row, NULL, err, errlen);
}

struct find_ctx {
	evid_index_cb cb;
	void *user;
};

static int find_row(const struct store_row *r, void *user)
{
	struct find_ctx *f = user;
	struct evid_index_row row;

	memset(&row, 0, sizeof(row));
	row.tenant = store_row_text(r, 0);
	row.sha256 = store_row_text(r, 1);
	row.kind = store_row_text(r, 2);
	row.mime = store_row_text(r, 3);
	row.size_bytes = (size_t)store_row_int(r, 4);
	row.session_id = store_row_text(r, 5);
	row.operation_id = store_row_text(r, 6);
	row.tool = store_row_text(r, 7);
	row.url = store_row_text(r, 8);
	row.time = store_row_text(r, 9);
	row.valid = (int)store_row_int(r, 10);
	row.reason = store_row_text(r, 11);
	row.record = store_row_text(r, 12);
	return f->cb(&row, f->user);
}

int evid_index_find(struct evid_index *ix, const struct evid_index_query *q, evid_index_cb cb,
                    void *user, char *err, size_t errlen)
{
	struct find_ctx f = { cb, user };

	if (!ix || !q || !q->tenant || !cb) {
		gb_set_error(err, errlen, "an index query needs a tenant and a callback");
		return -EVID_EINVAL;
	}
	{
		const struct store_sql_param p[] = {
			SQL_TEXT(q->tenant),     SQL_TEXT(q->sha256),
			SQL_TEXT(q->session_id), SQL_TEXT(q->operation_id),
			SQL_TEXT(q->kind),       SQL_TEXT(q->since),
			SQL_TEXT(q->before),     SQL_INT(q->limit ? (int64_t)q->limit : INT64_MAX),
		};

		return db_rc(store_sql_select(ix->st, "query the artifact index", find_sql, p, 8,
		                              find_row, &f, err, errlen));
	}
}

int evid_index_remove(struct evid_index *ix, const char *tenant, const char *sha256, char *err,
                      size_t errlen)
{
	const struct store_sql_param p[] = { SQL_TEXT(tenant), SQL_TEXT(sha256) };

	return db_rc(
	    store_sql_change(ix->st, "remove an artifact from the index",
	                     "DELETE FROM evid_artifacts WHERE tenant = ?1 AND sha256 = ?2", p, 2,
	                     NULL, err, errlen));
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

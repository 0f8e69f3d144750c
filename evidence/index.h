/*
 * index.h - the artifact index: one row per stored artifact record
 * (kind, mime, size, tenant, session, operation, tool, url, time, valid)
 * so that artifacts can be found without walking the store.
 *
 * Today it lives in SQLite (DATA/glassbox.db, WAL mode, table
 * evid_artifacts); this interface is all the rest of glassbox sees, so a
 * move to PostgreSQL replaces index.c alone. The index is derived data:
 * the metadata records beside the artifacts are the source of truth and
 * evid_index_rebuild() re-creates rows from them.
 *
 * Thread safety: one handle may be used from any number of threads (one
 * connection behind a mutex); other processes may use the same database
 * (SQLite locking, 5 s busy timeout).
 */
#ifndef GB_EVIDENCE_INDEX_H
#define GB_EVIDENCE_INDEX_H

#include <stddef.h>

struct evid_index;

/* One row. Strings borrowed (by add) or valid only during the callback
 * (by find); optional ones may be NULL. */
struct evid_index_row {
	const char *tenant; /* required */
	const char *sha256; /* required */
	const char *kind;   /* required */
	const char *mime;   /* required */
	size_t size_bytes;
	const char *session_id;
	const char *operation_id;
	const char *tool;
	const char *url;
	const char *time;   /* required: UTC ISO 8601 */
	int valid;          /* 0: kept under invalid/ */
	const char *reason; /* why invalid */
	const char *record; /* required: metadata record path relative to the data dir; unique */
};

/* Which rows evid_index_find() returns; NULL members do not filter. */
struct evid_index_query {
	const char *tenant; /* required */
	const char *sha256;
	const char *session_id;
	const char *operation_id;
	const char *kind;
	const char *since;  /* time >= since (ISO 8601 compares as text) */
	const char *before; /* time < before */
	size_t limit;       /* 0: no limit */
};

/* Called once per row, oldest first; return non-zero to stop. */
typedef int (*evid_index_cb)(const struct evid_index_row *row, void *user);

/* Opens (creating) DATA/glassbox.db and the table. data_dir borrowed.
 * Returns 0 or -EVID_EIO / -EVID_ENOMEM with the reason in err. */
int evid_index_open(const char *data_dir, struct evid_index **out, char *err, size_t errlen);

/* Closes the handle. NULL is a no-op. */
void evid_index_close(struct evid_index *ix);

/* Adds a row; a row with the same record path is left as it is.
 * Returns 0, -EVID_EINVAL (a required member missing) or -EVID_EIO. */
int evid_index_add(struct evid_index *ix, const struct evid_index_row *row, char *err,
                   size_t errlen);

/* Calls cb for each matching row. Returns 0 or -EVID_EIO / -EVID_EINVAL. */
int evid_index_find(struct evid_index *ix, const struct evid_index_query *q, evid_index_cb cb,
                    void *user, char *err, size_t errlen);

/* Removes every row of tenant's artifact sha256. Returns 0 or -EVID_EIO. */
int evid_index_remove(struct evid_index *ix, const char *tenant, const char *sha256, char *err,
                      size_t errlen);

/* Re-creates the rows of tenant from the metadata records on disk (rows
 * already there are kept). *added (may be NULL) receives the number of
 * rows added. Returns 0 or a negative evid_err. */
int evid_index_rebuild(struct evid_index *ix, const char *data_dir, const char *tenant,
                       size_t *added, char *err, size_t errlen);

#endif

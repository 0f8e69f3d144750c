/*
 * store-sql.h - the one seam between the store's rules and its database
 * engines (private to store/). approvals.c, ledger.c, segments.c and
 * registry.c write their SQL once, with ?1, ?2 ... parameters, in the
 * subset SQLite and PostgreSQL share (ON CONFLICT DO NOTHING, RETURNING,
 * CASE); a backend runs it. What differs per engine lives in its
 * backend file and nowhere else:
 *
 *   sql_sqlite.c  DATA/glassbox.db, WAL; liveness by flock() on
 *                 DATA/locks/<instance>.lock
 *   sql_pg.c      libpq; ?N becomes $N; liveness by a session-level
 *                 advisory lock held by each handle's connection
 *
 * and each keeps its own list of migrations (the same version number
 * means the same tables in both).
 *
 * Every function here is called with st->lock held (or before the handle
 * is shared).
 */
#ifndef GB_STORE_SQL_H
#define GB_STORE_SQL_H

#include "store/sql.h"

#include <stddef.h>
#include <stdint.h>

struct store;

/* The rows of one statement, read in order with store_sql_next. */
struct store_sql_rows;

/* What an engine provides. */
struct store_sql_backend {
	const char *name; /* "sqlite", "postgresql" */
	/* migrations[i] takes the schema from version i to i + 1 */
	const char *const *migrations;
	size_t n_migrations;
	/* opens st's connection (st->path / st->conninfo) */
	int (*connect)(struct store *st, char *err, size_t errlen);
	void (*disconnect)(struct store *st);
	/* starts a write transaction ("BEGIN IMMEDIATE" / "BEGIN"); with
	 * migrating, also serialises schema migrations between processes.
	 * Returns 0 or -1 (then fail says why) */
	int (*begin)(struct store *st, int migrating);
	/* runs sql with its parameters; *rows (when rows is non-NULL) reads
	 * the result, else *changes (may be NULL) gets the rows changed.
	 * Returns 0 or -1 (then fail says why) */
	int (*run)(struct store *st, const char *sql, const struct store_sql_param *p, size_t n,
	           struct store_sql_rows **rows, int64_t *changes);
	/* 1 with a row, 0 at the end, -1 on failure */
	int (*next)(struct store *st, struct store_sql_rows *r);
	const char *(*text)(struct store_sql_rows *r, int col); /* NULL for NULL */
	/* bytes of a BLOB / BYTEA column, NULL for NULL */
	const unsigned char *(*blob)(struct store_sql_rows *r, int col, size_t *len);
	void (*done)(struct store_sql_rows *r);
	/* writes what the last failure was, on what, and what to do; returns
	 * -STORE_EIO */
	int (*fail)(struct store *st, const char *doing, char *err, size_t errlen);
	/* takes this handle's liveness claim on st->instance */
	int (*claim_instance)(struct store *st, char *err, size_t errlen);
	/* 1 when the handle named owner is gone (its claim can be taken) */
	int (*owner_is_dead)(struct store *st, const char *owner);
	/* drops this handle's claim (store_close) */
	void (*release_instance)(struct store *st);
};

extern const struct store_sql_backend store_sql_sqlite;
extern const struct store_sql_backend store_sql_postgres;

/* Runs sql (no rows wanted); *changes may be NULL. doing names the step
 * for the error ("record an operation"). Returns 0 or -STORE_EIO. */
int store_sql_exec_locked(struct store *st, const char *doing, const char *sql,
                          const struct store_sql_param *p, size_t n, int64_t *changes, char *err,
                          size_t errlen);

/* Runs a query; read it with store_sql_next and end with store_sql_done.
 * Returns 0 or -STORE_EIO (*rows NULL). */
int store_sql_query_locked(struct store *st, const char *doing, const char *sql,
                           const struct store_sql_param *p, size_t n, struct store_sql_rows **rows,
                           char *err, size_t errlen);

/* 1 with the next row, 0 at the end, -STORE_EIO. */
int store_sql_next(struct store *st, struct store_sql_rows *r, char *err, size_t errlen);

/* Column col of the current row: text (NULL for NULL), integer (0 for
 * NULL), and whether it is NULL. Valid until the next store_sql_next. */
const char *store_sql_text(struct store *st, struct store_sql_rows *r, int col);
int64_t store_sql_int(struct store *st, struct store_sql_rows *r, int col);
int store_sql_is_null(struct store *st, struct store_sql_rows *r, int col);
const unsigned char *store_sql_blob(struct store *st, struct store_sql_rows *r, int col,
                                    size_t *len);
/* Copies column col into dst ("" for NULL), cut to fit. */
void store_sql_copy(struct store *st, struct store_sql_rows *r, int col, char *dst, size_t dstlen);

/* Ends a query. NULL is a no-op. */
void store_sql_done(struct store *st, struct store_sql_rows *r);

/* Runs the first row of a query into one integer: 1 with *value, 0 with
 * no row, -STORE_EIO. */
int store_sql_int_query_locked(struct store *st, const char *doing, const char *sql,
                               const struct store_sql_param *p, size_t n, int64_t *value, char *err,
                               size_t errlen);

/* BEGIN (a write transaction), COMMIT and ROLLBACK. rollback never fails. */
int store_sql_begin_locked(struct store *st, const char *doing, char *err, size_t errlen);
/* The same, serialising schema migrations between processes too. */
int store_sql_begin_migration_locked(struct store *st, char *err, size_t errlen);
int store_sql_commit_locked(struct store *st, const char *doing, char *err, size_t errlen);
void store_sql_rollback_locked(struct store *st);

#endif

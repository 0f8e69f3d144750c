/*
 * sql.c - the store's calls into its backend (store-sql.h): each wrapper
 * runs the backend's step and, when it fails, has the backend say what
 * failed and what to do.
 */
#include "store/store-private.h"

#include <stdio.h>
#include <stdlib.h>

int store_sql_exec_locked(struct store *st, const char *doing, const char *sql,
                          const struct store_sql_param *p, size_t n, int64_t *changes, char *err,
                          size_t errlen)
{
	if (changes)
		*changes = 0;
	if (st->be->run(st, sql, p, n, NULL, changes) < 0)
		return st->be->fail(st, doing, err, errlen);
	return 0;
}

int store_sql_query_locked(struct store *st, const char *doing, const char *sql,
                           const struct store_sql_param *p, size_t n, struct store_sql_rows **rows,
                           char *err, size_t errlen)
{
	*rows = NULL;
	if (st->be->run(st, sql, p, n, rows, NULL) < 0) {
		*rows = NULL;
		return st->be->fail(st, doing, err, errlen);
	}
	return 0;
}

int store_sql_next(struct store *st, struct store_sql_rows *r, char *err, size_t errlen)
{
	int rc = st->be->next(st, r);

	if (rc < 0)
		return st->be->fail(st, "read a result", err, errlen);
	return rc;
}

const char *store_sql_text(struct store *st, struct store_sql_rows *r, int col)
{
	return st->be->text(r, col);
}

int64_t store_sql_int(struct store *st, struct store_sql_rows *r, int col)
{
	const char *t = st->be->text(r, col);

	return t ? strtoll(t, NULL, 10) : 0;
}

int store_sql_is_null(struct store *st, struct store_sql_rows *r, int col)
{
	return st->be->text(r, col) == NULL;
}

void store_sql_copy(struct store *st, struct store_sql_rows *r, int col, char *dst, size_t dstlen)
{
	const char *t = st->be->text(r, col);

	snprintf(dst, dstlen, "%s", t ? t : "");
}

void store_sql_done(struct store *st, struct store_sql_rows *r)
{
	if (r)
		st->be->done(r);
}

int store_sql_int_query_locked(struct store *st, const char *doing, const char *sql,
                               const struct store_sql_param *p, size_t n, int64_t *value,
                               char *err, size_t errlen)
{
	struct store_sql_rows *r = NULL;
	int rc;

	*value = 0;
	rc = store_sql_query_locked(st, doing, sql, p, n, &r, err, errlen);
	if (rc < 0)
		return rc;
	rc = store_sql_next(st, r, err, errlen);
	if (rc == 1)
		*value = store_sql_int(st, r, 0);
	store_sql_done(st, r);
	return rc;
}

int store_sql_begin_locked(struct store *st, const char *doing, char *err, size_t errlen)
{
	if (st->be->begin(st, 0) < 0)
		return st->be->fail(st, doing, err, errlen);
	return 0;
}

int store_sql_begin_migration_locked(struct store *st, char *err, size_t errlen)
{
	if (st->be->begin(st, 1) < 0)
		return st->be->fail(st, "start the schema check", err, errlen);
	return 0;
}

int store_sql_commit_locked(struct store *st, const char *doing, char *err, size_t errlen)
{
	if (st->be->run(st, "COMMIT", NULL, 0, NULL, NULL) < 0) {
		int rc = st->be->fail(st, doing, err, errlen);

		store_sql_rollback_locked(st);
		return rc;
	}
	return 0;
}

void store_sql_rollback_locked(struct store *st)
{
	char saved[STORE_ERRMSG_BYTES];

	/* keep the failure that led here for the message */
	snprintf(saved, sizeof(saved), "%s", st->last_error);
	st->be->run(st, "ROLLBACK", NULL, 0, NULL, NULL);
	snprintf(st->last_error, sizeof(st->last_error), "%s", saved);
}

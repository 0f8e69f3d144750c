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
                               const struct store_sql_param *p, size_t n, int64_t *value, char *err,
                               size_t errlen)
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

const unsigned char *store_sql_blob(struct store *st, struct store_sql_rows *r, int col,
                                    size_t *len)
{
	return st->be->blob(r, col, len);
}

/* ---- sql.h: other modules' statements ---------------------------------------------- */

struct store_row {
	struct store *st;
	struct store_sql_rows *rows;
};

const char *store_row_text(const struct store_row *r, int col)
{
	return store_sql_text(r->st, r->rows, col);
}

int64_t store_row_int(const struct store_row *r, int col)
{
	return store_sql_int(r->st, r->rows, col);
}

const unsigned char *store_row_blob(const struct store_row *r, int col, size_t *len)
{
	return store_sql_blob(r->st, r->rows, col, len);
}

int store_sql_select(struct store *st, const char *doing, const char *sql,
                     const struct store_sql_param *p, size_t n, store_row_cb cb, void *user,
                     char *err, size_t errlen)
{
	struct store_row row = { st, NULL };
	int rc;

	if (!st || !cb)
		return store_set_error(err, errlen, "store_sql_select: missing argument");
	pthread_mutex_lock(&st->lock);
	rc = store_sql_query_locked(st, doing, sql, p, n, &row.rows, err, errlen);
	while (rc == 0) {
		rc = store_sql_next(st, row.rows, err, errlen);
		if (rc != 1)
			break;
		rc = cb(&row, user) ? 2 : 0;
	}
	store_sql_done(st, row.rows);
	pthread_mutex_unlock(&st->lock);
	return rc < 0 ? rc : 0;
}

int store_sql_change(struct store *st, const char *doing, const char *sql,
                     const struct store_sql_param *p, size_t n, int64_t *changes, char *err,
                     size_t errlen)
{
	int rc;

	if (!st)
		return store_set_error(err, errlen, "store_sql_change: missing argument");
	pthread_mutex_lock(&st->lock);
	rc = store_sql_exec_locked(st, doing, sql, p, n, changes, err, errlen);
	if (rc == 0)
		pthread_cond_broadcast(&st->changed);
	pthread_mutex_unlock(&st->lock);
	return rc;
}

const char *store_instance(const struct store *st)
{
	return st ? st->instance : "";
}

int store_owner_alive(struct store *st, const char *owner)
{
	int alive;

	if (!st)
		return 1;
	pthread_mutex_lock(&st->lock);
	alive = store_owner_alive_locked(st, owner);
	pthread_mutex_unlock(&st->lock);
	return alive;
}

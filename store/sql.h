/*
 * sql.h - the tables other modules keep in the store (profiles' metadata,
 * evidence's artifact index): they write their SQL once, with ?1, ?2 ...
 * parameters, in the subset SQLite and PostgreSQL share
 * (ON CONFLICT DO NOTHING, RETURNING, CASE; quote "user"), and run it on
 * a store handle, which owns the connection, the backend and the schema
 * (their tables are created by the store's migrations, store/db.c).
 * Where a statement must differ, store_backend_name() says which to use.
 *
 * Every function takes the handle's lock for the statement; a callback
 * runs with it held and must not call the store.
 */
#ifndef GB_STORE_SQL_PUBLIC_H
#define GB_STORE_SQL_PUBLIC_H

#include <stddef.h>
#include <stdint.h>

struct store;

/* One parameter: a string (NULL text binds SQL NULL), an integer, or
 * bytes. */
enum store_sql_type { STORE_SQL_TEXT = 0, STORE_SQL_INT, STORE_SQL_BLOB };

struct store_sql_param {
	enum store_sql_type type;
	const char *text; /* STORE_SQL_TEXT; NULL is SQL NULL */
	int64_t i;        /* STORE_SQL_INT */
	int null;         /* STORE_SQL_INT: bind NULL instead of i */
	const void *blob; /* STORE_SQL_BLOB; NULL is SQL NULL */
	size_t blob_bytes;
};

#define SQL_TEXT(s)                                 \
	{                                           \
		.type = STORE_SQL_TEXT, .text = (s) \
	}
#define SQL_INT(v)                                       \
	{                                                \
		.type = STORE_SQL_INT, .i = (int64_t)(v) \
	}
#define SQL_NULL_INT                             \
	{                                        \
		.type = STORE_SQL_INT, .null = 1 \
	}
#define SQL_BLOB(p, n)                                                 \
	{                                                              \
		.type = STORE_SQL_BLOB, .blob = (p), .blob_bytes = (n) \
	}

/* A row during a store_sql_select callback. */
struct store_row;

/* Column col: text (NULL for NULL), integer (0 for NULL), bytes (NULL
 * for NULL; *len gets the size). Valid during the callback only. */
const char *store_row_text(const struct store_row *r, int col);
int64_t store_row_int(const struct store_row *r, int col);
const unsigned char *store_row_blob(const struct store_row *r, int col, size_t *len);

/* Called once per row; return non-zero to stop. */
typedef int (*store_row_cb)(const struct store_row *r, void *user);

/* Runs a query and calls cb for each row. doing names it for the error
 * ("read a profile"). Returns 0 or -STORE_EIO / -STORE_ENOMEM with err. */
int store_sql_select(struct store *st, const char *doing, const char *sql,
                     const struct store_sql_param *p, size_t n, store_row_cb cb, void *user,
                     char *err, size_t errlen);

/* Runs an INSERT, UPDATE or DELETE; *changes (may be NULL) gets the
 * number of rows changed. Returns 0 or -STORE_EIO with err. */
int store_sql_change(struct store *st, const char *doing, const char *sql,
                     const struct store_sql_param *p, size_t n, int64_t *changes, char *err,
                     size_t errlen);

/* The name this handle's liveness claim is on (32 hex digits): record it
 * with a hold, and ask store_owner_alive about it later. */
const char *store_instance(const struct store *st);

/* 1 when owner is a store handle that is still open (this one, another
 * process's, another replica's with PostgreSQL); 0 when it is gone.
 * Cannot tell (the database fails) counts as alive. */
int store_owner_alive(struct store *st, const char *owner);

#endif

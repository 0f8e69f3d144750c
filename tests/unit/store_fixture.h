/*
 * store_fixture.h - runs a store test against either backend: SQLite in
 * the test's data dir (the default), or, when GB_TEST_POSTGRES names a
 * PostgreSQL server (a libpq URL; tests/postgres/run.sh starts a
 * throwaway one), a fresh schema of its own in that database, dropped
 * afterwards. Every store_open of the process, forked children included,
 * goes where store_fixture_begin pointed it.
 */
#ifndef GB_TEST_STORE_FIXTURE_H
#define GB_TEST_STORE_FIXTURE_H

#include "common/util.h"
#include "store/sql.h"
#include "store/store.h"

#include <ftw.h>
#include <libpq-fe.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static char store_fixture_schema[64];
static char store_fixture_url[2048];
static char store_fixture_dir[256];

/* The server's URL, or NULL for SQLite. */
static inline const char *store_fixture_server(void)
{
	const char *url = getenv("GB_TEST_POSTGRES");

	return url && url[0] ? url : NULL;
}

static inline void store_fixture_quiet(void *arg, const char *message)
{
	(void)arg;
	(void)message;
}

/* Runs sql against the server (PostgreSQL), without the test's schema
 * url names. Returns 0 or -1 (printed). */
static inline int store_fixture_pg_exec(const char *url, const char *sql)
{
	PGconn *c = PQconnectdb(url);
	PGresult *r = NULL;
	int rc = -1;

	if (PQstatus(c) == CONNECTION_OK) {
		PQsetNoticeProcessor(c, store_fixture_quiet, NULL);
		r = PQexec(c, sql);
		if (PQresultStatus(r) == PGRES_COMMAND_OK || PQresultStatus(r) == PGRES_TUPLES_OK)
			rc = 0;
		else
			fprintf(stderr, "store_fixture: %s: %s", sql, PQresultErrorMessage(r));
	} else {
		fprintf(stderr, "store_fixture: cannot connect to GB_TEST_POSTGRES: %s",
		        PQerrorMessage(c));
	}
	PQclear(r);
	PQfinish(c);
	return rc;
}

/* Points the store at a fresh database for the test whose data dir is
 * dir (borrowed; used by SQLite). Returns 0 or -1. */
static inline int store_fixture_begin(const char *dir)
{
	const char *server = store_fixture_server();
	struct store_location loc = { 0 };
	char sql[128];
	char rnd[17];
	char err[512] = "";

	snprintf(store_fixture_dir, sizeof(store_fixture_dir), "%s", dir);
	store_fixture_schema[0] = '\0';
	if (server) {
		gb_random_hex(rnd, 8);
		snprintf(store_fixture_schema, sizeof(store_fixture_schema), "gbt_%s", rnd);
		snprintf(sql, sizeof(sql), "CREATE SCHEMA %s", store_fixture_schema);
		if (store_fixture_pg_exec(server, sql) < 0)
			return -1;
		snprintf(store_fixture_url, sizeof(store_fixture_url),
		         "%s%soptions=-csearch_path%%3D%s", server, strchr(server, '?') ? "&" : "?",
		         store_fixture_schema);
		loc.postgres = store_fixture_url;
	}
	if (store_configure(server ? &loc : NULL, err, sizeof(err)) != 0) {
		fprintf(stderr, "store_fixture: %s\n", err);
		return -1;
	}
	return 0;
}

/* Drops the test's schema (PostgreSQL). */
static inline void store_fixture_end(void)
{
	char sql[128];

	if (!store_fixture_schema[0])
		return;
	snprintf(sql, sizeof(sql), "DROP SCHEMA %s CASCADE", store_fixture_schema);
	store_fixture_pg_exec(store_fixture_server(), sql);
	store_fixture_schema[0] = '\0';
}

/* Makes a fresh data dir /tmp/gb-<name>-XXXXXX into dir (dirlen bytes)
 * and points the process's stores at it (store_fixture_begin). Returns 0,
 * or -1. */
static inline int store_fixture_tmpdir(const char *name, char *dir, size_t dirlen)
{
	snprintf(dir, dirlen, "/tmp/gb-%s-XXXXXX", name);
	if (!mkdtemp(dir))
		return -1;
	return store_fixture_begin(dir);
}

static inline int store_fixture_rm_entry(const char *path, const struct stat *sb, int flag,
                                         struct FTW *ftw)
{
	(void)sb;
	(void)flag;
	(void)ftw;
	return remove(path);
}

/* Ends what store_fixture_tmpdir began (store_fixture_end) and removes dir
 * with everything below it; the stores on it are closed already. */
static inline void store_fixture_tmpdir_remove(const char *dir)
{
	store_fixture_end();
	nftw(dir, store_fixture_rm_entry, 16, FTW_DEPTH | FTW_PHYS);
}

/* Runs sql in the test's database directly, as another program would.
 * Returns 0 or -1. */
static inline int store_fixture_exec(const char *sql)
{
	char path[512];
	sqlite3 *db = NULL;
	int rc;

	if (store_fixture_schema[0])
		return store_fixture_pg_exec(store_fixture_url, sql);
	snprintf(path, sizeof(path), "%s/glassbox.db", store_fixture_dir);
	rc = sqlite3_open(path, &db) == SQLITE_OK &&
	             sqlite3_exec(db, sql, NULL, NULL, NULL) == SQLITE_OK
	         ? 0
	         : -1;
	sqlite3_close(db);
	return rc;
}

/* Waits (at most 10 s) until the store handle named instance, of a
 * process that was just killed, is seen as gone from st: PostgreSQL ends
 * a dead client's connection, and with it its claim, a moment after the
 * kernel closed the socket. Returns 0, or -1 if it stays alive. */
static inline int store_fixture_wait_gone(struct store *st, const char *instance)
{
	int i;

	for (i = 0; i < 100; i++) {
		if (!store_owner_alive(st, instance))
			return 0;
		usleep(100 * 1000);
	}
	return -1;
}

#endif

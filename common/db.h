/*
 * db.h - what every SQLite database of glassbox shares (header only: the
 * modules that use SQLite link it, the others need not).
 */
#ifndef GB_COMMON_DB_H
#define GB_COMMON_DB_H

#include "common/util.h"

#include <sqlite3.h>
#include <unistd.h>

/* Runs sql, again while another connection holds a lock it needs, for at
 * most timeout_ms: switching a database to WAL does not wait through the
 * busy handler, so connections that open a new database at once (flows
 * run with -j, sessions of one serve) would otherwise fail. Returns the
 * last SQLite code (SQLITE_OK on success). */
static inline int gb_db_exec_when_free(sqlite3 *db, const char *sql, int timeout_ms)
{
	int64_t until = gb_now_ms() + timeout_ms;
	int rc;

	while ((rc = sqlite3_exec(db, sql, NULL, NULL, NULL)) == SQLITE_BUSY ||
	       rc == SQLITE_LOCKED) {
		if (gb_now_ms() >= until)
			break;
		usleep(10000);
	}
	return rc;
}

#endif

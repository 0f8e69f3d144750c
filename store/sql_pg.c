/*
 * sql_pg.c - the store's shared backend (store-sql.h): one libpq
 * connection per handle to the PostgreSQL database named by
 * "store": {"postgres": "postgresql://..."}, behind st->lock. Several
 * replicas on several machines use one database; every rule that must
 * hold between them is a statement PostgreSQL makes atomic:
 *
 *   - a state change is one conditional UPDATE (... WHERE state =
 *     'approved' ...): under READ COMMITTED a second UPDATE of the same
 *     row waits for the first to commit, then re-checks its WHERE on the
 *     new row, so exactly one changes it;
 *   - a new row is INSERT ... ON CONFLICT DO NOTHING on a primary key;
 *   - migrations take a transaction-level advisory lock first, so two
 *     replicas starting together migrate once.
 *
 * Liveness: each handle takes a session-level advisory lock on a key
 * derived from its instance name and keeps it for as long as its
 * connection lives; PostgreSQL drops it when the connection ends (the
 * process exited or was killed, or its machine stopped answering TCP
 * keepalives). An owner whose lock can be taken is gone. A connection
 * that breaks is reset once per statement and the lock taken again.
 *
 * The conninfo may hold a password: it is never logged or put in an
 * error; errors name the database and host only.
 */
#include "store/store-private.h"

#include "common/log.h"

#include <libpq-fe.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define OID_BYTEA 17
#define OID_INT8 20
#define OID_TEXT 25
#define MAX_PARAMS 16
/* the key of the advisory lock that serialises migrations ("gbxmigr") */
#define MIGRATION_LOCK_KEY 0x6762786d696772LL

/* The migrations, in order, the same versions as sql_sqlite.c's in
 * PostgreSQL's words. Never edit one that has shipped; append. */
static const char *const migrations[] = {
	/* 1: approvals, their events, the operation ledger. rowid keeps the
	 * insertion order that SQLite's implicit rowid keeps. */
	"CREATE TABLE approvals ("
	" id TEXT PRIMARY KEY, rowid BIGSERIAL,"
	" tenant TEXT NOT NULL, session TEXT, operation TEXT, tool TEXT, rule TEXT,"
	" fingerprint TEXT NOT NULL, summary TEXT NOT NULL,"
	" state TEXT NOT NULL CHECK (state IN ('pending','approved','denied','used','expired')),"
	" created_at BIGINT NOT NULL, expires_at BIGINT NOT NULL, ttl_ms BIGINT NOT NULL,"
	" decided_at BIGINT, decided_by TEXT, channel TEXT, decided_uid BIGINT, reason TEXT,"
	" used_at BIGINT, used_by_operation TEXT);"
	"CREATE INDEX approvals_tenant_state ON approvals(tenant, state, created_at);"
	"CREATE INDEX approvals_expiry ON approvals(state, expires_at);"
	"CREATE TABLE approval_events ("
	" seq BIGSERIAL PRIMARY KEY,"
	" approval_id TEXT NOT NULL, tenant TEXT NOT NULL, time BIGINT NOT NULL,"
	" event TEXT NOT NULL, actor TEXT, channel TEXT, reason TEXT, operation TEXT);"
	"CREATE INDEX approval_events_id ON approval_events(approval_id, seq);"
	"CREATE TABLE operations ("
	" tenant TEXT NOT NULL, id TEXT NOT NULL, session TEXT, tool TEXT NOT NULL,"
	" args_hash TEXT NOT NULL,"
	" state TEXT NOT NULL CHECK (state IN ('pending','running','done','failed','unknown')),"
	" acted INTEGER NOT NULL DEFAULT 0, attempts INTEGER NOT NULL DEFAULT 1,"
	" owner TEXT, result TEXT, note TEXT,"
	" created_at BIGINT NOT NULL, started_at BIGINT, finished_at BIGINT,"
	" PRIMARY KEY (tenant, id));"
	"CREATE INDEX operations_owner ON operations(owner, state);"
	"CREATE INDEX operations_finished ON operations(finished_at);",
	/* 2: the session registry and the audit segment heads */
	"CREATE TABLE session_registry ("
	" session TEXT PRIMARY KEY, tenant TEXT NOT NULL, replica TEXT NOT NULL,"
	" instance TEXT NOT NULL, browser_pid BIGINT NOT NULL DEFAULT 0,"
	" created_at BIGINT NOT NULL, heartbeat_at BIGINT NOT NULL);"
	"CREATE INDEX session_registry_replica ON session_registry(replica, instance);"
	"CREATE TABLE audit_segments ("
	" seq BIGSERIAL PRIMARY KEY,"
	" tenant TEXT NOT NULL, replica TEXT NOT NULL, segment TEXT NOT NULL,"
	" head_hash TEXT NOT NULL DEFAULT '', records BIGINT NOT NULL DEFAULT 0,"
	" opened_at BIGINT NOT NULL, updated_at BIGINT NOT NULL,"
	" UNIQUE (tenant, segment));"
	"CREATE INDEX audit_segments_tenant ON audit_segments(tenant, seq);",
	/* 3: profiles' metadata and the handle that holds each one for
	 * writing */
	"CREATE TABLE prof_profiles ("
	" id TEXT PRIMARY KEY, tenant TEXT NOT NULL, \"user\" TEXT NOT NULL, name TEXT NOT NULL,"
	" version BIGINT NOT NULL DEFAULT 0, created_ms BIGINT NOT NULL,"
	" last_used_ms BIGINT NOT NULL DEFAULT 0, expires_ms BIGINT NOT NULL DEFAULT 0,"
	" revoked INTEGER NOT NULL DEFAULT 0, revoked_ms BIGINT NOT NULL DEFAULT 0,"
	" size BIGINT NOT NULL DEFAULT 0, wrapped_key BYTEA,"
	" held_by TEXT, held_pid BIGINT NOT NULL DEFAULT 0, held_start BIGINT NOT NULL DEFAULT 0,"
	" held_since_ms BIGINT NOT NULL DEFAULT 0, held_instance TEXT,"
	" UNIQUE (tenant, \"user\", name));",
	/* 4: the artifact index */
	"CREATE TABLE evid_artifacts ("
	" id BIGSERIAL PRIMARY KEY,"
	" tenant TEXT NOT NULL, sha256 TEXT NOT NULL, kind TEXT NOT NULL, mime TEXT NOT NULL,"
	" size BIGINT NOT NULL, session TEXT, operation TEXT, tool TEXT, url TEXT,"
	" time TEXT NOT NULL, valid INTEGER NOT NULL, reason TEXT, record TEXT NOT NULL UNIQUE);"
	"CREATE INDEX evid_artifacts_time ON evid_artifacts(tenant, time);"
	"CREATE INDEX evid_artifacts_session ON evid_artifacts(tenant, session);"
	"CREATE INDEX evid_artifacts_sha ON evid_artifacts(tenant, sha256);",
	/* 5: where a profile's newest sealed version is in the object store
	 * (the SHA-256 of its bytes, which names the object) */
	"ALTER TABLE prof_profiles ADD COLUMN sealed_sha256 TEXT;",
};

struct store_sql_rows {
	PGresult *res;
	int row;              /* the current row; -1 before the first */
	unsigned char *bytes; /* the last BYTEA column read (PQunescapeBytea) */
};

static PGconn *conn_of(struct store *st)
{
	return st->conn;
}

/* Keeps a failure for fail(): res's message and SQLSTATE, else the
 * connection's. Trailing newlines dropped. */
static void note_error(struct store *st, const PGresult *res)
{
	const char *msg = res ? PQresultErrorMessage(res) : "";
	const char *state = res ? PQresultErrorField(res, PG_DIAG_SQLSTATE) : NULL;
	size_t n;

	if (!msg[0])
		msg = st->conn ? PQerrorMessage(conn_of(st)) : "no connection";
	snprintf(st->last_error, sizeof(st->last_error), "%s", msg);
	n = strlen(st->last_error);
	while (n > 0 && (st->last_error[n - 1] == '\n' || st->last_error[n - 1] == ' '))
		st->last_error[--n] = '\0';
	snprintf(st->last_state, sizeof(st->last_state), "%s",
	         state ? state
	               : (st->conn && PQstatus(conn_of(st)) == CONNECTION_BAD ? "08000" : ""));
}

static int pg_fail(struct store *st, const char *doing, char *err, size_t errlen)
{
	const char *c = st->last_state;
	const char *advice = "see the PostgreSQL server's log";

	if (!strncmp(c, "08", 2))
		advice = "check that the PostgreSQL server of store.postgres is running and "
		         "reachable from here";
	else if (!strncmp(c, "28", 2))
		advice = "check the user and password of store.postgres";
	else if (!strncmp(c, "3D", 2))
		advice = "create that database first (createdb), or name an existing one";
	else if (!strncmp(c, "42", 2))
		advice = "the database's schema or permissions are not what this glassbox "
		         "expects: give its user the right to create tables, or run the glassbox "
		         "that made it";
	else if (!strncmp(c, "53", 2))
		advice = "the PostgreSQL server is out of disk, memory or connections: free some";
	else if (!strncmp(c, "57", 2) || !strncmp(c, "40", 2))
		advice = "the PostgreSQL server restarted or a transaction had to yield: try again";
	store_set_error(err, errlen, "cannot %s in %s: %s; %s", doing, st->path, st->last_error,
	                advice);
	return -STORE_EIO;
}

/* Notices (e.g. "relation already exists, skipping") are not errors. */
static void quiet_notice(void *arg, const char *message)
{
	(void)arg;
	GB_LOGD("store", "postgresql: %s", message);
}

static int pg_connect(struct store *st, char *err, size_t errlen)
{
	const char *keys[] = { "dbname", "application_name", "connect_timeout", NULL };
	const char *values[] = { st->conninfo, "glassbox", "10", NULL };
	PGconn *c = PQconnectdbParams(keys, values, 1);

	st->conn = c;
	if (!c) {
		store_set_error(err, errlen, "out of memory connecting to PostgreSQL");
		return -STORE_ENOMEM;
	}
	if (PQstatus(c) != CONNECTION_OK) {
		note_error(st, NULL);
		snprintf(st->last_state, sizeof(st->last_state), "08000");
		if (strstr(st->last_error, "password authentication failed"))
			snprintf(st->last_state, sizeof(st->last_state), "28P01");
		else if (strstr(st->last_error, "does not exist"))
			snprintf(st->last_state, sizeof(st->last_state), "3D000");
		snprintf(st->path, sizeof(st->path), "the PostgreSQL database of store.postgres");
		return pg_fail(st, "connect to the store", err, errlen);
	}
	PQsetNoticeProcessor(c, quiet_notice, NULL);
	snprintf(st->path, sizeof(st->path), "PostgreSQL database %s on %s", PQdb(c),
	         PQhost(c) && PQhost(c)[0] == '/' ? "a local socket" : PQhost(c));
	return 0;
}

static void pg_disconnect(struct store *st)
{
	if (st->conn)
		PQfinish(conn_of(st));
	st->conn = NULL;
}

/* Takes the advisory lock on key: 1 taken, 0 held by another session,
 * -1 on failure. */
static int try_lock(struct store *st, int64_t key)
{
	char text[32];
	const char *values[1] = { text };
	const Oid types[1] = { OID_INT8 };
	PGresult *res;
	int rc = -1;

	snprintf(text, sizeof(text), "%lld", (long long)key);
	res = PQexecParams(conn_of(st), "SELECT pg_try_advisory_lock($1)", 1, types, values, NULL,
	                   NULL, 0);
	if (PQresultStatus(res) == PGRES_TUPLES_OK && PQntuples(res) == 1)
		rc = PQgetvalue(res, 0, 0)[0] == 't';
	else
		note_error(st, res);
	PQclear(res);
	return rc;
}

/* A broken connection is reset once, and the liveness lock taken again
 * (the server dropped it with the old connection: other replicas may
 * already have closed this handle's running operations as unknown, and
 * its later changes to them are refused as it should be). */
static void reset_if_broken(struct store *st)
{
	if (!st->conn || PQstatus(conn_of(st)) != CONNECTION_BAD)
		return;
	GB_LOGW("store", "the connection to %s broke: reconnecting", st->path);
	PQreset(conn_of(st));
	if (PQstatus(conn_of(st)) == CONNECTION_OK && st->instance_key &&
	    try_lock(st, st->instance_key) != 1)
		GB_LOGW("store", "%s: cannot take this replica's liveness lock again", st->path);
}

/* A copy of sql with ?N written $N (free it), or NULL without memory. */
static char *to_dollars(const char *sql)
{
	size_t n = strlen(sql);
	char *out = malloc(n + 1);
	size_t i;

	for (i = 0; out && i <= n; i++)
		out[i] = (sql[i] == '?' && sql[i + 1] >= '0' && sql[i + 1] <= '9') ? '$' : sql[i];
	return out;
}

static int pg_run(struct store *st, const char *sql, const struct store_sql_param *p, size_t n,
                  struct store_sql_rows **rows, int64_t *changes)
{
	char *text = NULL;
	char ints[MAX_PARAMS][24];
	const char *values[MAX_PARAMS];
	int lengths[MAX_PARAMS];
	int formats[MAX_PARAMS];
	Oid types[MAX_PARAMS];
	ExecStatusType status;
	PGresult *res;
	size_t i;

	if (n > MAX_PARAMS) {
		snprintf(st->last_error, sizeof(st->last_error),
		         "a statement with too many parameters");
		st->last_state[0] = '\0';
		return -1;
	}
	text = to_dollars(sql);
	if (!text) {
		snprintf(st->last_error, sizeof(st->last_error), "out of memory");
		st->last_state[0] = '\0';
		return -1;
	}
	for (i = 0; i < n; i++) {
		lengths[i] = 0;
		formats[i] = 0;
		if (p[i].type == STORE_SQL_TEXT) {
			types[i] = OID_TEXT;
			values[i] = p[i].text;
		} else if (p[i].type == STORE_SQL_BLOB) {
			types[i] = OID_BYTEA;
			values[i] = p[i].blob;
			lengths[i] = (int)p[i].blob_bytes;
			formats[i] = 1;
		} else {
			types[i] = OID_INT8;
			snprintf(ints[i], sizeof(ints[i]), "%lld", (long long)p[i].i);
			values[i] = p[i].null ? NULL : ints[i];
		}
	}
	reset_if_broken(st);
	if (!p && !rows)
		res = PQexec(conn_of(st), text); /* may be several statements */
	else
		res = PQexecParams(conn_of(st), text, (int)n, types, values, lengths, formats, 0);
	free(text);
	status = PQresultStatus(res);
	if (status != PGRES_COMMAND_OK && status != PGRES_TUPLES_OK) {
		note_error(st, res);
		PQclear(res);
		return -1;
	}
	if (changes)
		*changes = strtoll(PQcmdTuples(res), NULL, 10);
	if (!rows) {
		PQclear(res);
		return 0;
	}
	*rows = calloc(1, sizeof(**rows));
	if (!*rows) {
		PQclear(res);
		snprintf(st->last_error, sizeof(st->last_error), "out of memory");
		st->last_state[0] = '\0';
		return -1;
	}
	(*rows)->res = res;
	(*rows)->row = -1;
	return 0;
}

static int pg_next(struct store *st, struct store_sql_rows *r)
{
	(void)st;
	if (r->row + 1 >= PQntuples(r->res))
		return 0;
	r->row++;
	return 1;
}

static const char *pg_text(struct store_sql_rows *r, int col)
{
	if (r->row < 0 || col >= PQnfields(r->res) || PQgetisnull(r->res, r->row, col))
		return NULL;
	return PQgetvalue(r->res, r->row, col);
}

static const unsigned char *pg_blob(struct store_sql_rows *r, int col, size_t *len)
{
	const char *t = pg_text(r, col);

	*len = 0;
	if (!t)
		return NULL;
	PQfreemem(r->bytes);
	r->bytes = PQunescapeBytea((const unsigned char *)t, len);
	return r->bytes;
}

static void pg_done(struct store_sql_rows *r)
{
	PQfreemem(r->bytes);
	PQclear(r->res);
	free(r);
}

static int pg_begin(struct store *st, int migrating)
{
	char sql[128];

	if (!migrating)
		return pg_run(st, "BEGIN", NULL, 0, NULL, NULL);
	snprintf(sql, sizeof(sql), "BEGIN; SELECT pg_advisory_xact_lock(%lld)",
	         (long long)MIGRATION_LOCK_KEY);
	return pg_run(st, sql, NULL, 0, NULL, NULL);
}

/* ---- liveness ----------------------------------------------------------------- */

/* The lock key of an instance name: its first 15 hex digits (a positive
 * 64-bit number), or 0 when it is not one. */
static int64_t instance_key(const char *instance)
{
	int64_t key = 0;
	size_t i;

	for (i = 0; i < 15; i++) {
		char c = instance[i];
		int d;

		if (c >= '0' && c <= '9')
			d = c - '0';
		else if (c >= 'a' && c <= 'f')
			d = c - 'a' + 10;
		else
			return 0;
		key = key * 16 + d;
	}
	return key ? key : 1;
}

static int pg_claim_instance(struct store *st, char *err, size_t errlen)
{
	int64_t key = instance_key(st->instance);
	int rc = try_lock(st, key);

	if (rc < 0)
		return pg_fail(st, "take this replica's liveness lock", err, errlen);
	if (rc == 0)
		return store_set_error(err, errlen,
		                       "another handle holds the liveness lock of instance %s: "
		                       "open the store again",
		                       st->instance);
	st->instance_key = key;
	return 0;
}

static int pg_owner_is_dead(struct store *st, const char *owner)
{
	int64_t key;
	char sql[96];
	int rc;

	if (strlen(owner) != STORE_INSTANCE_BYTES - 1 || !strcmp(owner, st->instance))
		return 0;
	key = instance_key(owner);
	if (!key || key == st->instance_key)
		return 0;
	rc = try_lock(st, key);
	if (rc != 1)
		return 0; /* alive, or cannot tell: never take a live owner's work */
	snprintf(sql, sizeof(sql), "SELECT pg_advisory_unlock(%lld)", (long long)key);
	pg_run(st, sql, NULL, 0, NULL, NULL);
	return 1;
}

static void pg_release_instance(struct store *st)
{
	st->instance_key = 0; /* the lock ends with the connection */
}

const struct store_sql_backend store_sql_postgres = {
	.name = "postgresql",
	.migrations = migrations,
	.n_migrations = sizeof(migrations) / sizeof(migrations[0]),
	.connect = pg_connect,
	.disconnect = pg_disconnect,
	.begin = pg_begin,
	.run = pg_run,
	.next = pg_next,
	.text = pg_text,
	.blob = pg_blob,
	.done = pg_done,
	.fail = pg_fail,
	.claim_instance = pg_claim_instance,
	.owner_is_dead = pg_owner_is_dead,
	.release_instance = pg_release_instance,
};

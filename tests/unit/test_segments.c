/*
 * test_segments.c - the store's audit segment heads and session registry
 * (store/store.h), against SQLite or PostgreSQL (store_fixture.h): the
 * order of segments, heads that only move by compare-and-set, one owner
 * per session, and a restarted replica finding the orphans of its dead
 * predecessor.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "store/sql.h"
#include "store/store.h"
#include "store_fixture.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#define H1 "1111111111111111111111111111111111111111111111111111111111111111"
#define H2 "2222222222222222222222222222222222222222222222222222222222222222"

struct fixture {
	char dir[64];
	struct store *st;
};

/* Opens a handle as replica (the fixture's database). */
static struct store *open_as(const char *dir, const char *replica)
{
	struct store_location loc = { .postgres = NULL, .replica = replica };
	struct store *st = NULL;
	char err[512] = "";

	if (store_fixture_server())
		loc.postgres = store_fixture_url;
	if (store_configure(&loc, err, sizeof(err)) != 0)
		fail_msg("store_configure: %s", err);
	if (store_open(dir, &st, err, sizeof(err)) != 0)
		fail_msg("store_open: %s", err);
	return st;
}

static int setup(void **state)
{
	struct fixture *fx = calloc(1, sizeof(*fx));

	if (store_fixture_tmpdir("segments", fx->dir, sizeof(fx->dir)) < 0)
		return -1;
	fx->st = open_as(fx->dir, "replica-1");
	*state = fx;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *fx = *state;

	store_close(fx->st);
	store_fixture_tmpdir_remove(fx->dir);
	free(fx);
	return 0;
}

struct seen {
	int n;
	char lines[8][256];
};

static int collect(const struct store_audit_segment *g, void *user)
{
	struct seen *s = user;

	if (s->n < 8)
		snprintf(s->lines[s->n++], sizeof(s->lines[0]), "%s|%s|%lld|%.4s", g->replica,
		         g->segment, (long long)g->records, g->head_hash);
	return 0;
}

static void test_segments_ordered_heads_forward(void **state)
{
	struct fixture *fx = *state;
	struct store *other = open_as(fx->dir, "replica-2");
	struct store_audit_segment g;
	struct seen seen = { 0 };
	char err[512] = "";

	assert_int_equal(store_audit_segment_register(fx->st, "acme", "acme/replica-1/0001", &g,
	                                              err, sizeof(err)),
	                 0);
	assert_int_equal(g.records, 0);
	assert_string_equal(g.head_hash, "");
	assert_int_equal(store_audit_segment_register(other, "acme", "acme/replica-2/0001", NULL,
	                                              err, sizeof(err)),
	                 0);
	/* a restart of replica-1 picks its segment up again, in its place */
	assert_int_equal(store_audit_segment_advance(fx->st, "acme", "acme/replica-1/0001", 0, 3,
	                                             H1, err, sizeof(err)),
	                 0);
	assert_int_equal(store_audit_segment_register(fx->st, "acme", "acme/replica-1/0001", &g,
	                                              err, sizeof(err)),
	                 0);
	assert_int_equal(g.records, 3);
	/* another replica cannot take it over, nor move its head */
	assert_int_equal(store_audit_segment_register(other, "acme", "acme/replica-1/0001", NULL,
	                                              err, sizeof(err)),
	                 -STORE_ECONFLICT);
	assert_non_null(strstr(err, "written by replica replica-1"));
	assert_int_equal(store_audit_segment_advance(other, "acme", "acme/replica-1/0001", 3, 4, H2,
	                                             err, sizeof(err)),
	                 -STORE_ESTATE);
	/* a writer that is behind is refused and told where the head is */
	assert_int_equal(store_audit_segment_advance(fx->st, "acme", "acme/replica-1/0001", 2, 4,
	                                             H2, err, sizeof(err)),
	                 -STORE_ESTATE);
	assert_non_null(strstr(err, "is at 3 records"));
	assert_int_equal(store_audit_segment_advance(fx->st, "acme", "acme/replica-1/0001", 3, 3,
	                                             H2, err, sizeof(err)),
	                 -STORE_EINVAL);
	assert_int_equal(store_audit_segment_advance(fx->st, "acme", "acme/replica-1/0001", 3, 5,
	                                             "not-a-hash", err, sizeof(err)),
	                 -STORE_EINVAL);
	assert_int_equal(store_audit_segment_advance(fx->st, "acme", "acme/replica-1/0001", 3, 5,
	                                             H2, err, sizeof(err)),
	                 0);
	assert_int_equal(
	    store_audit_segment_advance(fx->st, "acme", "nope", 0, 1, H2, err, sizeof(err)),
	    -STORE_ENOTFOUND);
	assert_int_equal(
	    store_audit_segment_register(fx->st, "acme", "../x", NULL, err, sizeof(err)),
	    -STORE_EINVAL);
	assert_int_equal(store_audit_segment_register(fx->st, "globex", "globex/replica-1/0001",
	                                              NULL, err, sizeof(err)),
	                 0);

	assert_int_equal(store_audit_segment_list(fx->st, "acme", collect, &seen, err, sizeof(err)),
	                 0);
	assert_int_equal(seen.n, 2);
	assert_string_equal(seen.lines[0], "replica-1|acme/replica-1/0001|5|2222");
	assert_string_equal(seen.lines[1], "replica-2|acme/replica-2/0001|0|");
	store_close(other);
}

struct reaped {
	int n;
	char session[STORE_SESSION_MAX + 1];
	long long pid;
};

static void on_orphan(const struct store_session *s, void *user)
{
	struct reaped *r = user;

	r->n++;
	snprintf(r->session, sizeof(r->session), "%s", s->session);
	r->pid = (long long)s->browser_pid;
}

/* In a child: replica-1 claims s-orphan, writes its instance to fd,
 * then dies. */
static void claim_and_die(const char *dir, int fd)
{
	struct store *st = open_as(dir, "replica-1");
	char err[512];

	if (store_session_claim(st, "acme", "s-orphan", 4242, err, sizeof(err)) != 0)
		_exit(3);
	if (write(fd, store_instance(st), 32) != 32)
		_exit(4);
	_exit(0);
}

static void test_registry_one_owner_and_reaping(void **state)
{
	struct fixture *fx = *state;
	struct store *other = open_as(fx->dir, "replica-2");
	struct store *restarted;
	struct store_session s;
	struct reaped r = { 0 };
	size_t n = 9;
	char err[512] = "";
	char dead[33] = "";
	int status = 0;
	int fds[2];
	pid_t pid;

	assert_int_equal(store_session_claim(fx->st, "acme", "s-1", 0, err, sizeof(err)), 0);
	assert_int_equal(store_session_claim(other, "acme", "s-1", 0, err, sizeof(err)),
	                 -STORE_ECONFLICT);
	assert_non_null(strstr(err, "on replica replica-1"));
	assert_int_equal(store_session_heartbeat(fx->st, "s-1", 777, err, sizeof(err)), 0);
	assert_int_equal(store_session_heartbeat(other, "s-1", 1, err, sizeof(err)),
	                 -STORE_ENOTFOUND);
	assert_int_equal(store_session_owner(other, "s-1", &s, err, sizeof(err)), 0);
	assert_string_equal(s.replica, "replica-1");
	assert_int_equal(s.browser_pid, 777);
	assert_int_equal(s.alive, 1);
	assert_int_equal(store_session_owner(other, "s-none", &s, err, sizeof(err)),
	                 -STORE_ENOTFOUND);

	assert_int_equal(pipe(fds), 0);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0)
		claim_and_die(fx->dir, fds[1]);
	close(fds[1]);
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	assert_int_equal(read(fds[0], dead, 32), 32);
	close(fds[0]);
	assert_int_equal(store_fixture_wait_gone(other, dead), 0);
	assert_int_equal(store_session_owner(other, "s-orphan", &s, err, sizeof(err)), 0);
	assert_int_equal(s.alive, 0);

	/* another replica leaves replica-1's orphans alone */
	assert_int_equal(store_session_reap(other, on_orphan, &r, &n, err, sizeof(err)), 0);
	assert_int_equal(n, 0);
	/* replica-1 started again finds its own orphan, not the live s-1 */
	restarted = open_as(fx->dir, "replica-1");
	assert_int_equal(store_session_reap(restarted, on_orphan, &r, &n, err, sizeof(err)), 0);
	assert_int_equal(n, 1);
	assert_int_equal(r.n, 1);
	assert_string_equal(r.session, "s-orphan");
	assert_int_equal(r.pid, 4242);
	assert_int_equal(store_session_owner(other, "s-orphan", &s, err, sizeof(err)),
	                 -STORE_ENOTFOUND);
	assert_int_equal(store_session_owner(other, "s-1", &s, err, sizeof(err)), 0);

	assert_int_equal(store_session_release(fx->st, "s-1", err, sizeof(err)), 0);
	assert_int_equal(store_session_claim(other, "acme", "s-1", 0, err, sizeof(err)), 0);
	store_close(restarted);
	store_close(other);
}

/* Where the store is: refused before connecting when malformed, and a
 * server that is not there is named with advice; neither echoes the
 * password. */
static void test_bad_locations(void **state)
{
	struct store_location loc = { 0 };
	struct store *st = NULL;
	char err[512] = "";

	(void)state;
	loc.postgres = "mysql://u:hunter2@db/x";
	assert_int_equal(store_configure(&loc, err, sizeof(err)), -STORE_EINVAL);
	assert_non_null(strstr(err, "must be a URL postgresql://"));
	loc.postgres = "postgresql://u:hunter2@db/x?no_such_parameter=1";
	assert_int_equal(store_configure(&loc, err, sizeof(err)), -STORE_EINVAL);
	assert_non_null(strstr(err, "not a valid PostgreSQL URL"));
	assert_null(strstr(err, "hunter2"));
	loc.postgres = NULL;
	loc.replica = "a/b";
	assert_int_equal(store_configure(&loc, err, sizeof(err)), -STORE_EINVAL);
	assert_non_null(strstr(err, "store.replica must be"));

	loc.replica = NULL;
	loc.postgres =
	    "postgresql://u:hunter2@/glassbox?host=/nonexistent-gb-dir&connect_timeout=5";
	assert_int_equal(store_configure(&loc, err, sizeof(err)), 0);
	assert_int_equal(store_open("/tmp", &st, err, sizeof(err)), -STORE_EIO);
	assert_null(st);
	assert_non_null(strstr(err, "cannot connect to the store"));
	assert_non_null(strstr(err, "running and reachable"));
	assert_null(strstr(err, "hunter2"));
	assert_int_equal(store_configure(NULL, err, sizeof(err)), 0);
}

struct count_ctx {
	int rows;
	int held_instance_null;
};

static int count_row(const struct store_row *r, void *user)
{
	struct count_ctx *c = user;

	c->rows++;
	c->held_instance_null += store_row_text(r, 1) == NULL;
	return 0;
}

/* A data dir written before the store had migrations 2 to 4 (profiles'
 * and the index's tables made by their modules, without held_instance)
 * is brought up to date, its rows kept. */
static void test_upgrade_keeps_old_tables(void **state)
{
	struct fixture *fx = *state;
	struct count_ctx c = { 0 };
	char err[512] = "";

	if (store_fixture_server())
		skip(); /* SQLite data dirs only */
	store_close(fx->st);
	fx->st = NULL;
	assert_int_equal(
	    store_fixture_exec(
	        "DROP TABLE session_registry; DROP TABLE audit_segments; DROP TABLE prof_profiles;"
	        " DROP TABLE evid_artifacts;"
	        "CREATE TABLE prof_profiles (id TEXT PRIMARY KEY, tenant TEXT NOT NULL, user TEXT "
	        "NOT"
	        " NULL, name TEXT NOT NULL, version INTEGER NOT NULL DEFAULT 0, created_ms INTEGER"
	        " NOT NULL, last_used_ms INTEGER NOT NULL DEFAULT 0, expires_ms INTEGER NOT NULL"
	        " DEFAULT 0, revoked INTEGER NOT NULL DEFAULT 0, revoked_ms INTEGER NOT NULL"
	        " DEFAULT 0, size INTEGER NOT NULL DEFAULT 0, wrapped_key BLOB, held_by TEXT,"
	        " held_pid INTEGER NOT NULL DEFAULT 0, held_start INTEGER NOT NULL DEFAULT 0,"
	        " held_since_ms INTEGER NOT NULL DEFAULT 0, UNIQUE (tenant, user, name));"
	        "INSERT INTO prof_profiles (id, tenant, user, name, created_ms) VALUES ('p1', "
	        "'acme',"
	        " 'alice', 'work', 1);"
	        "CREATE TABLE evid_artifacts (id INTEGER PRIMARY KEY, tenant TEXT NOT NULL, sha256"
	        " TEXT NOT NULL, kind TEXT NOT NULL, mime TEXT NOT NULL, size INTEGER NOT NULL,"
	        " session TEXT, operation TEXT, tool TEXT, url TEXT, time TEXT NOT NULL, valid"
	        " INTEGER NOT NULL, reason TEXT, record TEXT NOT NULL UNIQUE);"
	        "UPDATE store_schema SET version = 1;"),
	    0);
	fx->st = open_as(fx->dir, "replica-1");
	assert_int_equal(store_sql_select(fx->st, "read the profiles",
	                                  "SELECT name, held_instance FROM prof_profiles", NULL, 0,
	                                  count_row, &c, err, sizeof(err)),
	                 0);
	assert_int_equal(c.rows, 1);
	assert_int_equal(c.held_instance_null, 1);
	/* the tables of migrations 2 and 4 are there again */
	assert_int_equal(store_session_claim(fx->st, "acme", "s-1", 0, err, sizeof(err)), 0);
	assert_int_equal(store_sql_change(fx->st, "index an artifact",
	                                  "INSERT INTO evid_artifacts (tenant, sha256, kind, mime,"
	                                  " size, time, valid, record) VALUES ('acme', 'x', 'k',"
	                                  " 'm', 1, 't', 1, 'r')",
	                                  NULL, 0, NULL, err, sizeof(err)),
	                 0);
}

/* SQLite: the lock file a killed process's handle left is removed by the
 * next open; a live handle's stays. */
static void test_stale_lock_files_removed(void **state)
{
	struct fixture *fx = *state;
	struct store *again;
	char dead[33] = "";
	char path[256];
	char mine[256];
	int fds[2];
	int status = 0;
	pid_t pid;

	if (store_fixture_server())
		skip(); /* PostgreSQL's claims are advisory locks, not files */
	assert_int_equal(pipe(fds), 0);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		struct store *st = open_as(fx->dir, "replica-1");

		_exit(write(fds[1], store_instance(st), 32) == 32 ? 0 : 3);
	}
	close(fds[1]);
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	assert_int_equal(read(fds[0], dead, 32), 32);
	close(fds[0]);
	snprintf(path, sizeof(path), "%s/locks/%s.lock", fx->dir, dead);
	snprintf(mine, sizeof(mine), "%s/locks/%s.lock", fx->dir, store_instance(fx->st));
	assert_int_equal(access(path, F_OK), 0);
	again = open_as(fx->dir, "replica-1");
	assert_int_equal(access(path, F_OK), -1);
	assert_int_equal(access(mine, F_OK), 0);
	store_close(again);
}

/* A connection the server ends (a restart, a failover): the statement
 * that finds it broken fails with advice (never the URL), the next one
 * reconnects, and the handle's claim is taken again. */
static void test_connection_lost_and_back(void **state)
{
	struct fixture *fx = *state;
	struct store *other = open_as(fx->dir, "replica-2");
	struct store_session s;
	char err[512] = "";
	char sql[256];
	char key[16] = "";
	int rc;

	if (!store_fixture_server()) {
		store_close(other);
		skip(); /* PostgreSQL only */
	}
	assert_int_equal(store_session_claim(fx->st, "acme", "s-1", 0, err, sizeof(err)), 0);
	/* the server ends fx->st's connection: the one holding its claim (an
	 * advisory lock on its instance's first 15 hex digits) */
	snprintf(sql, sizeof(sql),
	         "SELECT pg_terminate_backend(pid) FROM pg_locks WHERE locktype = 'advisory'"
	         " AND ((classid::bigint << 32) | objid::bigint) = %lld",
	         strtoll(strncpy(key, store_instance(fx->st), 15), NULL, 16));
	assert_int_equal(store_fixture_exec(sql), 0);
	rc = store_session_heartbeat(fx->st, "s-1", 1, err, sizeof(err));
	if (rc != 0) {
		assert_int_equal(rc, -STORE_EIO);
		if (!strstr(err, "try again") && !strstr(err, "reachable"))
			fail_msg("no advice in: %s", err);
		assert_null(strstr(err, "postgresql://"));
	}
	assert_int_equal(store_session_heartbeat(fx->st, "s-1", 2, err, sizeof(err)), 0);
	/* another handle sees fx->st alive again: its claim was taken anew */
	assert_int_equal(store_session_owner(other, "s-1", &s, err, sizeof(err)), 0);
	assert_int_equal(s.alive, 1);
	assert_int_equal(s.browser_pid, 2);
	store_close(other);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_segments_ordered_heads_forward, setup,
		                                teardown),
		cmocka_unit_test_setup_teardown(test_registry_one_owner_and_reaping, setup,
		                                teardown),
		cmocka_unit_test(test_bad_locations),
		cmocka_unit_test_setup_teardown(test_upgrade_keeps_old_tables, setup, teardown),
		cmocka_unit_test_setup_teardown(test_stale_lock_files_removed, setup, teardown),
		cmocka_unit_test_setup_teardown(test_connection_lost_and_back, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

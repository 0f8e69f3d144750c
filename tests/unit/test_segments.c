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

#include "store/store.h"
#include "store_fixture.h"

#include <ftw.h>
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

static int rm_entry(const char *path, const struct stat *sb, int flag, struct FTW *ftw)
{
	(void)sb;
	(void)flag;
	(void)ftw;
	return remove(path);
}

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

	snprintf(fx->dir, sizeof(fx->dir), "/tmp/gb-segments-XXXXXX");
	if (!mkdtemp(fx->dir) || store_fixture_begin(fx->dir) < 0)
		return -1;
	fx->st = open_as(fx->dir, "replica-1");
	*state = fx;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *fx = *state;

	store_close(fx->st);
	store_fixture_end();
	nftw(fx->dir, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
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

/* In a child: replica-1 claims s-orphan, then dies. */
static void claim_and_die(const char *dir)
{
	struct store *st = open_as(dir, "replica-1");
	char err[512];

	if (store_session_claim(st, "acme", "s-orphan", 4242, err, sizeof(err)) != 0)
		_exit(3);
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
	int status = 0;
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

	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0)
		claim_and_die(fx->dir);
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
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

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_segments_ordered_heads_forward, setup,
		                                teardown),
		cmocka_unit_test_setup_teardown(test_registry_one_owner_and_reaping, setup,
		                                teardown),
		cmocka_unit_test(test_bad_locations),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

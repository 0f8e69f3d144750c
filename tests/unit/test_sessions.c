/*
 * test_sessions.c - launching real Chromium, readiness, crash detection
 * and close with zero residue; plus the pure helpers.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "cdp/cdp.h"
#include "common/util.h"
#include "sessions/sessions-private.h"
#include "proc_fixture.h"

#include <dirent.h>
#include <jansson.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

static char run_dir[256];

static int setup(void **state)
{
	(void)state;
	snprintf(run_dir, sizeof(run_dir), "/tmp/glassbox-test-sessions-XXXXXX");
	return mkdtemp(run_dir) ? 0 : -1;
}

static int teardown(void **state)
{
	(void)state;
	sess_remove_tree(run_dir);
	return 0;
}

/* Number of processes whose command line mentions needle. */
static int count_processes_with(const char *needle)
{
	DIR *d = opendir("/proc");
	struct dirent *e;
	int count = 0;

	while (d && (e = readdir(d))) {
		char path[300];
		char cmd[8192];
		size_t n;
		FILE *f;

		if (e->d_name[0] < '0' || e->d_name[0] > '9')
			continue;
		snprintf(path, sizeof(path), "/proc/%s/cmdline", e->d_name);
		f = fopen(path, "r");
		if (!f)
			continue;
		n = fread(cmd, 1, sizeof(cmd) - 1, f);
		fclose(f);
		for (size_t i = 0; i < n; i++)
			if (cmd[i] == '\0')
				cmd[i] = ' ';
		cmd[n] = '\0';
		if (strstr(cmd, needle))
			count++;
	}
	if (d)
		closedir(d);
	return count;
}

/* 1 when dir holds nothing but the run dir's .browsers-tag. */
static int dir_is_empty(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	int empty = 1;

	while (d && (e = readdir(d)))
		if (strcmp(e->d_name, ".") && strcmp(e->d_name, "..") &&
		    strcmp(e->d_name, ".browsers-tag"))
			empty = 0;
	if (d)
		closedir(d);
	return empty;
}

static void test_parse_devtools_port(void **state)
{
	char url[256];

	(void)state;
	assert_int_equal(
	    sess_parse_devtools_port("41234\n/devtools/browser/abc-123\n", url, sizeof(url)), 0);
	assert_string_equal(url, "ws://127.0.0.1:41234/devtools/browser/abc-123");
	assert_int_equal(sess_parse_devtools_port("0\n/devtools/browser/x", url, sizeof(url)), -1);
	assert_int_equal(sess_parse_devtools_port("99999\n/devtools/browser/x", url, sizeof(url)),
	                 -1);
	assert_int_equal(sess_parse_devtools_port("80\n/etc/passwd", url, sizeof(url)), -1);
	assert_int_equal(sess_parse_devtools_port("", url, sizeof(url)), -1);
}

static void test_argv(void **state)
{
	struct sess_options opt = { .run_dir = "/tmp",
		                    .viewport_width = 800,
		                    .viewport_height = 600,
		                    .host_resolver_rules = "MAP shop.test 127.0.0.1" };
	const char *args[64];
	char store[4][2048];
	int n, i, headless = 0, udd = 0, size = 0, rules = 0, bg = 0;

	(void)state;
	n = sess_build_argv(&opt, "/tmp/p", 0, args, store, 4);
	assert_true(n > 10);
	assert_null(args[n]);
	for (i = 0; i < n; i++) {
		headless |= !strcmp(args[i], "--headless");
		udd |= !strcmp(args[i], "--user-data-dir=/tmp/p");
		size |= !strcmp(args[i], "--window-size=800,600");
		rules |= !strcmp(args[i], "--host-resolver-rules=MAP shop.test 127.0.0.1");
		bg |= !strcmp(args[i], "--disable-background-networking");
	}
	assert_true(headless && udd && size && rules && bg);
	/* sandboxed (its own user): no --no-sandbox, unless the caller turns
	 * Chromium's own sandbox off */
	n = sess_build_argv(&opt, "/tmp/p", 1, args, store, 4);
	for (i = 0; i < n; i++)
		assert_string_not_equal(args[i], "--no-sandbox");
	opt.chromium_sandbox_off = 1;
	n = sess_build_argv(&opt, "/tmp/p", 1, args, store, 4);
	for (i = 0, bg = 0; i < n; i++)
		bg += !strcmp(args[i], "--no-sandbox");
	assert_int_equal(bg, 1);
}

static void test_launch_ready_close_leaves_nothing(void **state)
{
	struct sess_options opt = { .run_dir = run_dir };
	struct sess *s = NULL;
	char err[512] = "";
	char dir[4096];

	(void)state;
	assert_int_equal(sess_launch(&opt, &s, err, sizeof(err)), 0);
	assert_non_null(s);
	assert_int_equal(sess_get_state(s), SESS_READY);
	assert_true(sess_time_to_ready_ms(s) > 0);
	assert_int_equal(sess_page_count(s), 1);
	assert_non_null(sess_current_page(s));
	assert_string_equal(sess_page_url(sess_current_page(s)), "about:blank");
	assert_non_null(strstr(sess_browser_version(s), "Chrome"));
	assert_int_equal(sess_check_alive(s), 0);
	/* the session id names its dir, and its browser user's home */
	snprintf(dir, sizeof(dir), "%s", strrchr(sess_dir(s), '/') + 1);
	assert_true(count_processes_with(dir) > 0);

	/* a second tab, then select and close it */
	assert_int_equal(sess_new_page(s, err, sizeof(err)), 0);
	assert_int_equal(sess_page_count(s), 2);
	assert_int_equal(sess_current_index(s), 1);
	assert_int_equal(sess_select_page(s, 0, err, sizeof(err)), 0);
	assert_int_equal(sess_select_page(s, 7, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "there is no tab 7"));

	sess_close(s);
	assert_int_equal(count_processes_with(dir), 0);
	assert_int_equal(access(dir, F_OK), -1);
	assert_true(dir_is_empty(run_dir));
}

static void test_killed_browser_fails_with_reason(void **state)
{
	struct sess_options opt = { .run_dir = run_dir };
	struct cdp_error cerr;
	struct sess *s = NULL;
	char err[512] = "";
	char dir[4096];
	int rc;

	(void)state;
	assert_int_equal(sess_launch(&opt, &s, err, sizeof(err)), 0);
	snprintf(dir, sizeof(dir), "%s", strrchr(sess_dir(s), '/') + 1);
	kill(sess_pid(s), SIGKILL);
	rc = cdp_call(sess_cdp(s), NULL, "Browser.getVersion", NULL, 5000, NULL, &cerr);
	assert_int_equal(rc, -CDP_ECLOSED);
	assert_int_equal(sess_check_alive(s), -1);
	assert_int_equal(sess_get_state(s), SESS_FAILED);
	assert_non_null(strstr(sess_failure(s), "Chromium exited (killed by signal 9)"));
	sess_close(s);
	assert_int_equal(count_processes_with(dir), 0);
	assert_true(dir_is_empty(run_dir));
}

/* The real uid /proc reports for pid, or -1. */
static long uid_of(pid_t pid)
{
	char path[64], line[256];
	unsigned long uid;
	long found = -1;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	f = fopen(path, "r");
	while (f && fgets(line, sizeof(line), f))
		if (sscanf(line, "Uid: %lu", &uid) == 1)
			found = (long)uid;
	if (f)
		fclose(f);
	return found;
}

/* As root, each browser runs as a user of its own, with Chromium's sandbox
 * on, and its home goes with it. */
static void test_browsers_run_as_users_of_their_own(void **state)
{
	struct sess_options opt = { .run_dir = run_dir };
	struct sess *a = NULL, *b = NULL;
	char why[256], err[512] = "", home[1024];
	struct stat st;

	(void)state;
	if (!sess_browser_user_check(why, sizeof(why))) {
		assert_true(why[0] != 0);
		skip();
	}
	assert_int_equal(sess_launch(&opt, &a, err, sizeof(err)), 0);
	assert_int_equal(sess_launch(&opt, &b, err, sizeof(err)), 0);
	assert_true(a->browser_uid >= SESS_BROWSER_UID_BASE);
	assert_true(b->browser_uid >= SESS_BROWSER_UID_BASE);
	assert_true(a->browser_uid != b->browser_uid);
	assert_int_equal(uid_of(a->pid), (long)a->browser_uid);
	assert_int_equal(uid_of(b->pid), (long)b->browser_uid);
	/* sandboxed: no --no-sandbox */
	assert_true(proc_cmdline_has(a->pid, "--user-data-dir="));
	assert_false(proc_cmdline_has(a->pid, "--no-sandbox"));
	/* its home (and the profile in it) is its own, unreadable to others */
	assert_int_equal(stat(a->home, &st), 0);
	assert_int_equal(st.st_uid, a->browser_uid);
	assert_int_equal(st.st_mode & 0777, 0700);
	assert_non_null(strstr(a->profile_dir, a->home));
	snprintf(home, sizeof(home), "%s", a->home);
	sess_close(a);
	sess_close(b);
	assert_int_not_equal(stat(home, &st), 0);
	assert_true(dir_is_empty(run_dir));
}

static void test_bad_chromium_path_is_a_clear_error(void **state)
{
	struct sess_options opt = { .run_dir = run_dir, .chromium_path = "/nonexistent/chromium" };
	struct sess *s = NULL;
	char err[512] = "";

	(void)state;
	assert_int_equal(sess_launch(&opt, &s, err, sizeof(err)), -1);
	assert_null(s);
	assert_non_null(strstr(err, "/nonexistent/chromium"));
	assert_true(dir_is_empty(run_dir));
}

static void test_warm_pool_hands_over_a_ready_browser(void **state)
{
	struct sess_options opt = { .run_dir = run_dir };
	struct sess_pool *pool = NULL;
	atomic_int cancel = 0;
	struct sess *s;
	char err[256];

	(void)state;
	assert_int_equal(sess_pool_start(&opt, 1, 1, &pool), 0);
	assert_non_null(pool);
	s = sess_pool_take(pool, &cancel, 20000);
	assert_non_null(s);
	assert_int_equal(sess_get_state(s), SESS_READY);
	assert_int_equal(sess_check_alive(s), 0);
	/* the taker drives it now */
	assert_int_equal(sess_new_page(s, err, sizeof(err)), 0);
	/* one launch only: nothing more comes */
	assert_null(sess_pool_take(pool, &cancel, 1000));
	sess_close(s);
	sess_pool_stop(pool);
	assert_true(dir_is_empty(run_dir));
}

/* A replacement waits for a quiet moment after a take (it would take the
 * CPU the new session needs), but not when a taker waits for it. */
static void test_warm_pool_refills_after_a_quiet_moment(void **state)
{
	struct sess_options opt = { .run_dir = run_dir };
	struct sess_pool *pool = NULL;
	atomic_int cancel = 0;
	struct sess *a, *b;
	int64_t taken;
	int i;

	(void)state;
	assert_int_equal(sess_pool_start(&opt, 1, 0, &pool), 0);
	a = sess_pool_take(pool, &cancel, 20000);
	assert_non_null(a);
	taken = gb_now_ms();
	for (i = 0; i < 400 && sess_pool_ready(pool) == 0; i++)
		usleep(50000);
	assert_int_equal(sess_pool_ready(pool), 1);
	assert_true(gb_now_ms() - taken >= 1500);
	/* now empty again: a taker that waits gets the next launch */
	b = sess_pool_take(pool, &cancel, 0);
	assert_non_null(b);
	sess_close(b);
	b = sess_pool_take(pool, &cancel, 20000);
	assert_non_null(b);
	sess_close(b);
	sess_close(a);
	sess_pool_stop(pool);
	assert_int_equal(count_processes_with(run_dir), 0);
}

static void test_warm_pool_stop_closes_what_it_holds(void **state)
{
	struct sess_options opt = { .run_dir = run_dir };
	struct sess_pool *pool = NULL;
	int i;

	(void)state;
	assert_int_equal(sess_pool_start(&opt, 1, 0, &pool), 0);
	for (i = 0; i < 400 && sess_pool_ready(pool) == 0; i++)
		usleep(50000);
	assert_int_equal(sess_pool_ready(pool), 1);
	sess_pool_stop(pool);
	assert_int_equal(count_processes_with(run_dir), 0);
	assert_true(dir_is_empty(run_dir));
}

/* What a pool's namespace maker was asked for. */
struct netns_maker {
	int calls;
	int fd;   /* the last fd handed out */
	int fail; /* refuse to make one */
};

/* sess_netns_new_fn: an fd on this process's own network namespace (a
 * namespace the test may enter as root), or a failure. */
static int make_netns(void *user, int *fd_out, char *err, size_t errlen)
{
	struct netns_maker *m = user;

	m->calls++;
	if (m->fail) {
		snprintf(err, errlen, "no namespace for this test");
		return -1;
	}
	m->fd = open("/proc/self/ns/net", O_RDONLY | O_CLOEXEC);
	*fd_out = m->fd;
	return m->fd > 0 ? 0 : -1;
}

static void test_warm_pool_hands_over_a_browser_with_its_namespace(void **state)
{
	struct sess_options opt = { .run_dir = run_dir };
	struct netns_maker m = { 0 };
	struct sess_pool *pool = NULL;
	atomic_int cancel = 0;
	struct sess *s;
	int fd;

	(void)state;
	if (getuid() != 0)
		skip(); /* entering a namespace needs CAP_SYS_ADMIN */
	assert_int_equal(sess_pool_start_in_netns(&opt, 1, 1, make_netns, &m, &pool), 0);
	s = sess_pool_take(pool, &cancel, 20000);
	assert_non_null(s);
	assert_int_equal(m.calls, 1);
	/* the namespace goes to the taker, once */
	fd = sess_take_netns(s);
	assert_int_equal(fd, m.fd);
	assert_int_equal(sess_take_netns(s), 0);
	sess_close(s);
	assert_int_not_equal(fcntl(fd, F_GETFD), -1);
	close(fd);
	sess_pool_stop(pool);
	assert_true(dir_is_empty(run_dir));

	/* a browser the pool still holds closes its namespace with it */
	memset(&m, 0, sizeof(m));
	assert_int_equal(sess_pool_start_in_netns(&opt, 1, 1, make_netns, &m, &pool), 0);
	for (int i = 0; i < 400 && sess_pool_ready(pool) == 0; i++)
		usleep(50000);
	assert_int_equal(sess_pool_ready(pool), 1);
	sess_pool_stop(pool);
	assert_int_equal(fcntl(m.fd, F_GETFD), -1);
	assert_int_equal(count_processes_with(run_dir), 0);
	assert_true(dir_is_empty(run_dir));
}

static void test_warm_pool_without_a_namespace_launches_nothing(void **state)
{
	struct sess_options opt = { .run_dir = run_dir };
	struct netns_maker m = { .fail = 1 };
	struct sess_pool *pool = NULL;
	atomic_int cancel = 0;

	(void)state;
	assert_int_equal(sess_pool_start_in_netns(&opt, 1, 0, NULL, NULL, &pool), -1);
	assert_null(pool);
	assert_int_equal(sess_pool_start_in_netns(&opt, 1, 0, make_netns, &m, &pool), 0);
	/* the pool gives up after three failures in a row */
	assert_null(sess_pool_take(pool, &cancel, 20000));
	assert_int_equal(m.calls, 3);
	sess_pool_stop(pool);
	assert_true(dir_is_empty(run_dir));
}

/* What a pool's prepare hook did. */
struct readier {
	atomic_int calls;
	atomic_int setups; /* targets the pool's setup hook saw */
	int fail;          /* refuse to ready the browser */
	int fd;            /* the last socket handed to a browser */
};

/* sess_target_setup_fn of the pool: counts the targets it sets up. */
static void count_setup(void *user, struct sess *s, const char *session_id, const char *type)
{
	struct readier *r = user;

	(void)s;
	(void)session_id;
	(void)type;
	atomic_fetch_add(&r->setups, 1);
}

/* sess_pool_prepare_fn: a context whose proxy is a closed port, and a
 * socket for the browser to keep; or a failure. */
static int ready_browser(void *user, struct sess *s, int *proxy_fd, char *err, size_t errlen)
{
	struct readier *r = user;

	atomic_fetch_add(&r->calls, 1);
	if (r->fail) {
		snprintf(err, errlen, "this test readies nothing");
		return -1;
	}
	if (sess_prepare_context(s, "http://127.0.0.1:9", "<-loopback>", 30000, err, errlen) < 0)
		return -1;
	r->fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	*proxy_fd = r->fd;
	return r->fd > 0 ? 0 : -1;
}

/* Page targets of s's browser: how many, and how many in context ctx. */
static void page_targets(struct sess *s, const char *ctx, size_t *all, size_t *in_ctx)
{
	struct cdp_error cerr;
	json_t *res = NULL, *t;
	size_t i;

	*all = *in_ctx = 0;
	assert_int_equal(
	    cdp_call(sess_cdp(s), NULL, "Target.getTargets", json_object(), 20000, &res, &cerr), 0);
	json_array_foreach(json_object_get(res, "targetInfos"), i, t)
	{
		const char *type = json_string_value(json_object_get(t, "type"));
		const char *c = json_string_value(json_object_get(t, "browserContextId"));

		if (!type || strcmp(type, "page"))
			continue;
		(*all)++;
		if (c && !strcmp(c, ctx))
			(*in_ctx)++;
	}
	json_decref(res);
}

/* A pool with a prepare hook hands out only readied browsers: a context of
 * their own with its proxy and its one tab (set up by the pool's hook),
 * nothing left in the default context, the socket kept for the taker;
 * sess_adopt binds the taker's hook, once. */
static void test_warm_pool_readies_each_browser_before_handing_it_out(void **state)
{
	static struct readier r;
	struct sess_options opt = { .run_dir = run_dir,
		                    .on_target = count_setup,
		                    .on_target_user = &r };
	struct sess_pool_hooks hooks = { .prepare = ready_browser, .user = &r };
	struct sess_adopt_options ao = { .timeout_ms = 20000 };
	struct sess_pool *pool = NULL;
	atomic_int cancel = 0;
	size_t all, in_ctx;
	struct sess *s;
	char err[512];
	int fd;

	(void)state;
	memset(&r, 0, sizeof(r));
	assert_int_equal(sess_pool_start_hooks(&opt, 1, 1, &hooks, &pool), 0);
	s = sess_pool_take(pool, &cancel, 30000);
	assert_non_null(s);
	assert_int_equal(atomic_load(&r.calls), 1);
	assert_true(sess_context_id(s)[0] != 0);
	assert_string_equal(sess_context_proxy(s), "http://127.0.0.1:9");
	/* the readied tab was set up by the pool's hook while paused */
	assert_true(atomic_load(&r.setups) >= 1);
	page_targets(s, sess_context_id(s), &all, &in_ctx);
	assert_int_equal(in_ctx, 1);
	assert_int_equal(all, 1);
	fd = sess_take_proxy_fd(s);
	assert_int_equal(fd, r.fd);
	assert_int_equal(sess_take_proxy_fd(s), 0);
	close(fd);
	assert_int_equal(sess_adopt(s, &ao, err, sizeof(err)), 0);
	assert_int_equal(sess_adopt(s, &ao, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "already"));
	/* the taker's pages open in the readied context */
	assert_int_equal(sess_new_page(s, err, sizeof(err)), 0);
	page_targets(s, sess_context_id(s), &all, &in_ctx);
	assert_int_equal(in_ctx, 2);
	assert_int_equal(all, 2);
	sess_close(s);
	sess_pool_stop(pool);
	assert_int_equal(count_processes_with(run_dir), 0);
	assert_true(dir_is_empty(run_dir));

	/* a browser never readied cannot be adopted */
	assert_int_equal(sess_pool_start(&opt, 1, 1, &pool), 0);
	s = sess_pool_take(pool, &cancel, 30000);
	assert_non_null(s);
	assert_int_equal(sess_adopt(s, &ao, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "not readied"));
	sess_close(s);
	sess_pool_stop(pool);

	/* one the pool still holds closes its socket with it */
	memset(&r, 0, sizeof(r));
	assert_int_equal(sess_pool_start_hooks(&opt, 1, 1, &hooks, &pool), 0);
	for (int i = 0; i < 600 && sess_pool_ready(pool) == 0; i++)
		usleep(50000);
	assert_int_equal(sess_pool_ready(pool), 1);
	sess_pool_stop(pool);
	assert_int_equal(fcntl(r.fd, F_GETFD), -1);
	assert_int_equal(count_processes_with(run_dir), 0);
	assert_true(dir_is_empty(run_dir));
}

/* A browser whose readying fails is closed, never handed out half-ready;
 * the pool gives up after three in a row, leaving nothing. */
static void test_warm_pool_discards_a_browser_it_cannot_ready(void **state)
{
	static struct readier r;
	struct sess_options opt = { .run_dir = run_dir };
	struct sess_pool_hooks hooks = { .prepare = ready_browser, .user = &r };
	struct sess_pool *pool = NULL;
	atomic_int cancel = 0;

	(void)state;
	memset(&r, 0, sizeof(r));
	r.fail = 1;
	assert_int_equal(sess_pool_start_hooks(&opt, 1, 0, &hooks, &pool), 0);
	assert_null(sess_pool_take(pool, &cancel, 60000));
	assert_int_equal(atomic_load(&r.calls), 3);
	assert_int_equal(sess_pool_ready(pool), 0);
	assert_int_equal(count_processes_with(run_dir), 0);
	sess_pool_stop(pool);
	assert_true(dir_is_empty(run_dir));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parse_devtools_port),
		cmocka_unit_test(test_argv),
		cmocka_unit_test(test_launch_ready_close_leaves_nothing),
		cmocka_unit_test(test_killed_browser_fails_with_reason),
		cmocka_unit_test(test_browsers_run_as_users_of_their_own),
		cmocka_unit_test(test_bad_chromium_path_is_a_clear_error),
		cmocka_unit_test(test_warm_pool_hands_over_a_ready_browser),
		cmocka_unit_test(test_warm_pool_refills_after_a_quiet_moment),
		cmocka_unit_test(test_warm_pool_stop_closes_what_it_holds),
		cmocka_unit_test(test_warm_pool_hands_over_a_browser_with_its_namespace),
		cmocka_unit_test(test_warm_pool_without_a_namespace_launches_nothing),
		cmocka_unit_test(test_warm_pool_readies_each_browser_before_handing_it_out),
		cmocka_unit_test(test_warm_pool_discards_a_browser_it_cannot_ready),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}

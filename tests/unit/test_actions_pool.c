/*
 * test_actions_pool.c - agent sessions over a warm pool, with real
 * Chromium: a session's first navigate uses a pre-launched browser (its
 * result says "browser": "pooled"), the pool refills in the background so
 * the next session gets one too, a pooled browser goes out through the
 * session's own egress proxy (a name only that proxy can resolve loads),
 * a session whose launch options differ launches its own, and nothing is
 * left once the pool stops. A browser relaunched after the pooled one
 * crashed starts in the same namespace. Where this process can make network
 * namespaces (root: egress layer 4 on), every pooled browser runs in a
 * namespace of its own, none of them this process's, and a session with
 * layer 4 turned off does not take one.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "actions/actions.h"
#include "common/util.h"
#include "sessions/sessions.h"
#include "proc_fixture.h"

#include <arpa/inet.h>
#include <dirent.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

static char data_dir[256];
/* the test's sessions and pool: freed by teardown too, so a failed
 * assertion leaves no browser behind */
#define N_SESSIONS 5
static struct act_session *sessions[N_SESSIONS];
static struct act_pool *the_pool;
static int site_fd = -1;
static int site_port;
static pthread_t site_thread;

/* A one-page site on loopback: every request gets the same small page. */
static void *site_main(void *arg)
{
	static const char page[] = "<!doctype html><title>Pooled page</title><p>hello</p>";
	char req[4096], head[256];
	int c;

	(void)arg;
	while ((c = accept(site_fd, NULL, NULL)) >= 0) {
		ssize_t n = read(c, req, sizeof(req));

		(void)n;
		snprintf(head, sizeof(head),
		         "HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nContent-Length: %zu\r\n"
		         "Connection: close\r\n\r\n",
		         sizeof(page) - 1);
		if (write(c, head, strlen(head)) < 0 || write(c, page, sizeof(page) - 1) < 0)
			(void)0;
		close(c);
	}
	return NULL;
}

static int setup(void **state)
{
	struct sockaddr_in a = { .sin_family = AF_INET };
	socklen_t len = sizeof(a);

	(void)state;
	snprintf(data_dir, sizeof(data_dir), "/tmp/glassbox-test-pool-XXXXXX");
	if (!mkdtemp(data_dir))
		return -1;
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	site_fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (site_fd < 0 || bind(site_fd, (struct sockaddr *)&a, sizeof(a)) < 0 ||
	    listen(site_fd, 16) < 0 || getsockname(site_fd, (struct sockaddr *)&a, &len) < 0)
		return -1;
	site_port = ntohs(a.sin_port);
	return pthread_create(&site_thread, NULL, site_main, NULL);
}

static int teardown(void **state)
{
	char cmd[300];

	(void)state;
	for (size_t i = 0; i < N_SESSIONS; i++)
		act_session_free(sessions[i]);
	act_pool_stop(the_pool);
	shutdown(site_fd, SHUT_RDWR);
	close(site_fd);
	pthread_join(site_thread, NULL);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", data_dir);
	return system(cmd) == 0 ? 0 : -1;
}

/* One call, waited for. */
struct waited {
	struct act_call call;
	pthread_mutex_t lock;
	pthread_cond_t cond;
	json_t *result;
};

static void on_done(struct act_call *call, json_t *result)
{
	struct waited *w = (struct waited *)call;

	pthread_mutex_lock(&w->lock);
	w->result = result;
	pthread_cond_signal(&w->cond);
	pthread_mutex_unlock(&w->lock);
}

/* Runs tool with args (taken) on s; returns the structuredContent (new). */
static json_t *run(struct act_session *s, const char *tool, json_t *args)
{
	struct waited w;
	json_t *sc;

	memset(&w, 0, sizeof(w));
	pthread_mutex_init(&w.lock, NULL);
	pthread_cond_init(&w.cond, NULL);
	w.call.def = act_tool_find(tool);
	w.call.args = args;
	w.call.on_done = on_done;
	assert_int_equal(act_session_submit(s, &w.call), 0);
	pthread_mutex_lock(&w.lock);
	while (!w.result)
		pthread_cond_wait(&w.cond, &w.lock);
	pthread_mutex_unlock(&w.lock);
	sc = json_incref(json_object_get(w.result, "structuredContent"));
	json_decref(w.result);
	json_decref(args);
	pthread_mutex_destroy(&w.lock);
	pthread_cond_destroy(&w.cond);
	return sc;
}

static json_t *navigate(struct act_session *s, const char *host)
{
	char url[256];

	snprintf(url, sizeof(url), "http://%s:%d/", host, site_port);
	return run(s, "browser_navigate", json_pack("{s:s}", "url", url));
}

static void wait_ready(struct act_pool *p, size_t n)
{
	int64_t until = gb_now_ms() + 60000;

	while (act_pool_ready(p) < n && gb_now_ms() < until)
		usleep(20000);
	assert_true(act_pool_ready(p) >= n);
}

/* Directories left under run/ (the pool's browsers have theirs). */
static size_t run_dirs(void)
{
	char path[300];
	struct dirent *e;
	size_t n = 0;
	DIR *d;

	snprintf(path, sizeof(path), "%s/run", data_dir);
	d = opendir(path);
	if (!d)
		return 0;
	while ((e = readdir(d)) != NULL)
		if (e->d_name[0] != '.')
			n++;
	closedir(d);
	return n;
}

/* 1 when pid's cmdline names dir, or the homes of its browsers'
 * users (named by DATA/run/.browsers-tag). */
static int of_data_dir(pid_t pid, const char *dir)
{
	char path[4200], tag[16] = "", needle[64];
	FILE *f;

	if (proc_cmdline_has(pid, dir))
		return 1;
	snprintf(path, sizeof(path), "%s/run/.browsers-tag", dir);
	f = fopen(path, "r");
	if (!f)
		return 0;
	if (fscanf(f, "%8s", tag) != 1)
		tag[0] = '\0';
	fclose(f);
	snprintf(needle, sizeof(needle), "/tmp/gb-browsers/%s-", tag);
	return tag[0] && proc_cmdline_has(pid, needle);
}

/* The network namespace of pid ("net:[4026531840]"), or "" when gone. */
static void netns_of(const char *pid, char *out, size_t len)
{
	char path[300];
	ssize_t n;

	snprintf(path, sizeof(path), "/proc/%s/ns/net", pid);
	n = readlink(path, out, len - 1);
	out[n > 0 ? n : 0] = 0;
}

/* Checks every process of this test's browsers (each browser's process
 * group, found by its leader's --user-data-dir under data_dir): none is
 * in this process's network namespace. Returns the number of distinct
 * namespaces the browsers (the groups' leaders) are in: the processes
 * Chromium's own sandbox starts are in further, empty ones. */
static size_t browser_namespaces(void)
{
	char seen[16][64], mine[64], ns[64];
	size_t n_seen = 0, n_procs = 0, i;
	struct dirent *e;
	DIR *d = opendir("/proc");

	assert_non_null(d);
	netns_of("self", mine, sizeof(mine));
	assert_true(mine[0] != 0);
	while ((e = readdir(d)) != NULL) {
		pid_t pid = (pid_t)atoi(e->d_name);
		pid_t pgid = pid > 0 ? getpgid(pid) : -1;

		if (pid <= 0 || pgid <= 0 ||
		    (!of_data_dir(pid, data_dir) && !of_data_dir(pgid, data_dir)))
			continue;
		netns_of(e->d_name, ns, sizeof(ns));
		if (!ns[0])
			continue; /* ended since */
		n_procs++;
		if (!strcmp(ns, mine))
			fail_msg("browser process %d is in this process's network namespace %s",
			         (int)pid, ns);
		if (pid != pgid)
			continue;
		for (i = 0; i < n_seen && strcmp(seen[i], ns); i++)
			;
		if (i == n_seen && n_seen < 16)
			snprintf(seen[n_seen++], sizeof(seen[0]), "%s", ns);
	}
	closedir(d);
	assert_true(n_procs > 0);
	return n_seen;
}

/* A browser of this test (its process group leader) whose network
 * namespace is ns (NULL: any), or 0. */
static pid_t browser_leader(const char *ns)
{
	char its[64];
	struct dirent *e;
	pid_t found = 0;
	DIR *d = opendir("/proc");

	assert_non_null(d);
	while (!found && (e = readdir(d)) != NULL) {
		pid_t pid = (pid_t)atoi(e->d_name);

		if (pid <= 0 || getpgid(pid) != pid || !of_data_dir(pid, data_dir))
			continue;
		netns_of(e->d_name, its, sizeof(its));
		if (!ns || !strcmp(its, ns))
			found = pid;
	}
	closedir(d);
	return found;
}

/* Whether egress layer 4 is on in this process (root). */
static int netns_on(void)
{
	json_t *layers = act_egress_layers_active();
	int on = json_is_true(json_object_get(layers, "netns"));

	json_decref(layers);
	return on;
}

static void assert_page(json_t *sc, const char *browser)
{
	if (!json_is_true(json_object_get(sc, "ok"))) {
		char *dump = json_dumps(sc, JSON_INDENT(1));

		fail_msg("the navigate failed: %s", dump);
	}
	assert_string_equal(json_string_value(json_object_get(sc, "title")), "Pooled page");
	assert_string_equal(json_string_value(json_object_get(sc, "browser")), browser);
}

static void test_sessions_take_pre_launched_browsers(void **state)
{
	json_t *policy =
	    json_pack("{s:{s:[s], s:[s], s:{s:s, s:s}}, s:{s:s}}", "egress", "allow_private",
	              "127.0.0.1:*", "deny", "blocked.test", "hosts", "pooled.test", "127.0.0.1",
	              "blocked.test", "127.0.0.1", "risk", "evaluate", "allow");
	char js[256];
	json_t *blocked;
	/* without its proxy a browser in a namespace of its own reaches
	 * nothing: this drill turns layer 4 off too */
	json_t *no_proxy = json_pack("{s:{s:[s]}, s:{s:b, s:b}}", "egress", "allow_private",
	                             "127.0.0.1:*", "egress_layers", "proxy", 0, "netns", 0);
	json_t *no_netns = json_pack("{s:{s:[s]}, s:{s:b}}", "egress", "allow_private",
	                             "127.0.0.1:*", "egress_layers", "netns", 0);
	struct act_config cfg = { .data_dir = data_dir, .headless = 1 };
	struct act_session **a = &sessions[0], **b = &sessions[1], **c = &sessions[2];
	struct act_session **d = &sessions[3], **e = &sessions[4];
	char pooled_ns[64];
	pid_t pooled;
	int layer4 = netns_on();
	struct act_pool **pool = &the_pool;
	char err[512];
	json_t *sc;

	(void)state;
	assert_int_equal(act_pool_start(&cfg, 1, pool, err, sizeof(err)), 0);
	assert_non_null(*pool);
	assert_int_equal(act_pool_size(*pool), 1);
	wait_ready(*pool, 1);
	if (layer4)
		assert_int_equal(browser_namespaces(), 1);

	cfg.pool = *pool;
	cfg.tenant_policy = policy;
	pooled = browser_leader(NULL);
	assert_true(pooled > 0);
	assert_int_equal(act_session_new(&cfg, a, err, sizeof(err)), 0);
	/* pooled.test resolves only in this session's own proxy ("hosts"):
	 * the page loads only if the pooled browser goes through it */
	sc = navigate(*a, "pooled.test");
	assert_page(sc, "pooled");
	json_decref(sc);

	/* the pooled browser crashes: the next call says so, and the one
	 * after launches a new browser in the session's namespace (the pooled
	 * one's), where its proxy listens */
	snprintf(js, sizeof(js), "%d", (int)pooled);
	netns_of(js, pooled_ns, sizeof(pooled_ns));
	assert_int_equal(kill(-pooled, SIGKILL), 0);
	sc = navigate(*a, "pooled.test");
	assert_false(json_is_true(json_object_get(sc, "ok")));
	json_decref(sc);
	sc = navigate(*a, "pooled.test");
	assert_true(json_is_true(json_object_get(sc, "ok")));
	assert_string_equal(json_string_value(json_object_get(sc, "title")), "Pooled page");
	json_decref(sc);
	if (layer4)
		assert_true(browser_leader(pooled_ns) > 0);

	/* the pool refilled in the background: the next session's first
	 * navigate does not wait for a launch either; with layer 4 the new
	 * browser has a namespace of its own, apart from a's */
	wait_ready(*pool, 1);
	if (layer4)
		assert_int_equal(browser_namespaces(), 2);
	assert_int_equal(act_session_new(&cfg, b, err, sizeof(err)), 0);
	sc = navigate(*b, "pooled.test");
	assert_page(sc, "pooled");
	json_decref(sc);

	/* the session's own Fetch interception is on in the pooled browser: a
	 * page's request to a host its policy denies is refused there first */
	snprintf(js, sizeof(js), "() => fetch('http://blocked.test:%d/x').then(() => 1, () => 0)",
	         site_port);
	sc = run(*b, "browser_evaluate", json_pack("{s:s}", "function", js));
	blocked = json_array_get(json_object_get(sc, "blocked"), 0);
	assert_non_null(blocked);
	assert_string_equal(json_string_value(json_object_get(blocked, "layer")), "fetch");
	assert_non_null(strstr(json_string_value(json_object_get(blocked, "url")), "blocked.test"));
	json_decref(sc);

	/* other launch options (no proxy layer): a browser of its own */
	wait_ready(*pool, 1);
	cfg.tenant_policy = no_proxy;
	assert_int_equal(act_session_new(&cfg, c, err, sizeof(err)), 0);
	sc = navigate(*c, "127.0.0.1");
	assert_page(sc, "launched");
	json_decref(sc);
	assert_int_equal(act_pool_ready(*pool), 1);

	/* layer 4 turned off for a drill: a pooled browser in a namespace of
	 * its own could not reach the session's proxy, so it launches its own */
	if (layer4) {
		cfg.tenant_policy = no_netns;
		assert_int_equal(act_session_new(&cfg, d, err, sizeof(err)), 0);
		sc = navigate(*d, "127.0.0.1");
		assert_page(sc, "launched");
		json_decref(sc);
		assert_int_equal(act_pool_ready(*pool), 1);

		/* with layer 4 a session takes its pooled browser (and that
		 * browser's namespace) when it starts; one that ends without a
		 * call leaves nothing of it (checked below) */
		cfg.tenant_policy = policy;
		assert_int_equal(act_session_new(&cfg, e, err, sizeof(err)), 0);
		assert_int_equal(act_pool_ready(*pool), 0);
	}

	for (size_t i = 0; i < N_SESSIONS; i++) {
		act_session_free(sessions[i]);
		sessions[i] = NULL;
	}
	act_pool_stop(*pool);
	*pool = NULL;
	assert_int_equal(run_dirs(), 0);
	assert_int_equal(sess_residual_count(), 0);
	json_decref(policy);
	json_decref(no_proxy);
	json_decref(no_netns);
}

static void test_pool_of_size_zero_is_none(void **state)
{
	struct act_config cfg = { .data_dir = data_dir, .headless = 1 };
	struct act_pool *pool = (struct act_pool *)&cfg;
	char err[512];

	(void)state;
	assert_int_equal(act_pool_start(&cfg, 0, &pool, err, sizeof(err)), 0);
	assert_null(pool);
	assert_int_equal(act_pool_ready(NULL), 0);
	act_pool_stop(NULL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_pool_of_size_zero_is_none),
		cmocka_unit_test(test_sessions_take_pre_launched_browsers),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}

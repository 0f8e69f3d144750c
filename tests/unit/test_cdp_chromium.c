/*
 * test_cdp_chromium.c - cdp/ against a real headless Chromium: connect
 * through DevToolsActivePort, a few calls and an event, then the browser
 * is killed and calls must fail with -CDP_ECLOSED. Skipped when Chromium
 * is not installed (GLASSBOX_CHROMIUM overrides the binary).
 */
#include "cdp/cdp-private.h"

#include "common/log.h"

#include <fcntl.h>
#include <ftw.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#define WAIT_MS 15000

struct browser {
	pid_t pid; /* also its process group */
	char dir[64];
	char url[256];
};

static const char *chromium_path(void)
{
	const char *env = getenv("GLASSBOX_CHROMIUM");

	return env && *env ? env : "/usr/lib/chromium/chromium";
}

static int rm_entry(const char *path, const struct stat *sb, int flag, struct FTW *ftw)
{
	(void)sb;
	(void)flag;
	(void)ftw;
	return remove(path);
}

/* Reads DevToolsActivePort ("PORT\n/devtools/browser/ID") once both
 * lines are there. Returns 1 when url is filled. */
static int read_active_port(struct browser *b)
{
	char path[128];
	char text[256];
	char *nl;
	ssize_t n;
	int port;
	int fd;

	snprintf(path, sizeof(path), "%s/DevToolsActivePort", b->dir);
	fd = open(path, O_RDONLY);
	if (fd < 0)
		return 0;
	n = read(fd, text, sizeof(text) - 1);
	close(fd);
	if (n <= 0)
		return 0;
	text[n] = '\0';
	nl = strchr(text, '\n');
	if (!nl)
		return 0;
	nl[1 + strcspn(nl + 1, "\r\n")] = '\0'; /* end of the path line */
	port = atoi(text);
	/* the id is a 36-character UUID: shorter means the file is still being written */
	if (port <= 0 || strncmp(nl + 1, "/devtools/browser/", 18) || strlen(nl + 1) < 18 + 36)
		return 0;
	snprintf(b->url, sizeof(b->url), "ws://127.0.0.1:%d%s", port, nl + 1);
	return 1;
}

/* Starts Chromium in its own process group and waits (up to 30 s) for its
 * DevTools endpoint. */
static void browser_start(struct browser *b)
{
	struct timespec tick = { 0, 20 * 1000 * 1000 };
	char user_data[96];
	int64_t deadline;
	int status;
	int fd;

	memset(b, 0, sizeof(*b));
	snprintf(b->dir, sizeof(b->dir), "/tmp/gb-cdp-test-XXXXXX");
	assert_non_null(mkdtemp(b->dir));
	snprintf(user_data, sizeof(user_data), "--user-data-dir=%s", b->dir);
	b->pid = fork();
	assert_true(b->pid >= 0);
	if (b->pid == 0) {
		setpgid(0, 0);
		fd = open("/dev/null", O_RDWR);
		dup2(fd, 0);
		dup2(fd, 1);
		dup2(fd, 2);
		execl(chromium_path(), chromium_path(), "--headless", "--no-sandbox",
		      "--disable-gpu", "--remote-debugging-port=0", user_data,
		      "--disable-background-networking", "--disable-component-update",
		      "--no-first-run", "--disable-sync", "about:blank", (char *)NULL);
		_exit(127);
	}
	setpgid(b->pid, b->pid);
	deadline = gb_now_ms() + 30000;
	while (!read_active_port(b)) {
		if (waitpid(b->pid, &status, WNOHANG) == b->pid) {
			b->pid = 0;
			fail_msg("chromium exited before its DevTools endpoint was up");
		}
		if (gb_now_ms() > deadline)
			fail_msg("chromium's DevToolsActivePort did not appear within 30 s");
		nanosleep(&tick, NULL);
	}
}

/* Kills the browser's process group and reaps it. */
static void browser_kill(struct browser *b)
{
	if (b->pid > 0) {
		kill(-b->pid, SIGKILL);
		waitpid(b->pid, NULL, 0);
		b->pid = 0;
	}
}

static void browser_cleanup(struct browser *b)
{
	browser_kill(b);
	if (b->dir[0])
		nftw(b->dir, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
}

static int setup(void **state)
{
	static struct browser b;

	memset(&b, 0, sizeof(b));
	*state = &b;
	return 0;
}

/* Runs even when an assertion failed: no browser or directory is left. */
static int teardown(void **state)
{
	browser_cleanup(*state);
	return 0;
}

static int64_t int_at(json_t *v, const char *a, const char *b)
{
	return json_integer_value(json_object_get(json_object_get(v, a), b));
}

static void test_real_chromium(void **state)
{
	struct browser *b = *state;
	struct cdp_conn *c = NULL;
	struct cdp_error err = { 0 };
	struct cdp_waiter *load = NULL;
	json_t *result = NULL;
	json_t *info;
	char target[64] = "";
	char sid[64] = "";
	uint64_t id = 0;
	size_t i;
	int rc;

	if (access(chromium_path(), X_OK))
		skip();
	browser_start(b);
	rc = cdp_connect(b->url, NULL, &c, &err);
	if (rc)
		fail_msg("cdp_connect %s: %s", b->url, err.message);

	assert_int_equal(cdp_call(c, NULL, "Browser.getVersion", NULL, WAIT_MS, &result, &err), 0);
	assert_non_null(strstr(json_string_value(json_object_get(result, "product")), "Chrome"));
	json_decref(result);

	assert_int_equal(cdp_call(c, NULL, "Target.getTargets", NULL, WAIT_MS, &result, &err), 0);
	json_array_foreach(json_object_get(result, "targetInfos"), i, info)
	{
		if (!strcmp(json_string_value(json_object_get(info, "type")), "page"))
			snprintf(target, sizeof(target), "%s",
			         json_string_value(json_object_get(info, "targetId")));
	}
	json_decref(result);
	assert_true(target[0]);

	assert_int_equal(cdp_call(c, NULL, "Target.attachToTarget",
	                          json_pack("{s:s, s:b}", "targetId", target, "flatten", 1),
	                          WAIT_MS, &result, &err),
	                 0);
	snprintf(sid, sizeof(sid), "%s", json_string_value(json_object_get(result, "sessionId")));
	json_decref(result);
	assert_true(sid[0]);

	/* armed before the navigation that fires it */
	assert_int_equal(cdp_arm(c, sid, "Page.loadEventFired", &load), 0);
	assert_int_equal(cdp_call(c, sid, "Page.enable", NULL, WAIT_MS, NULL, &err), 0);
	assert_int_equal(cdp_call(c, sid, "Page.navigate",
	                          json_pack("{s:s}", "url", "data:text/html,<p>glassbox</p>"),
	                          WAIT_MS, NULL, &err),
	                 0);
	assert_int_equal(cdp_wait_event(c, load, WAIT_MS, NULL, &err), 0);

	assert_int_equal(
	    cdp_call(c, sid, "Runtime.evaluate",
	             json_pack("{s:s, s:b}", "expression", "6 * 7", "returnByValue", 1), WAIT_MS,
	             &result, &err),
	    0);
	assert_int_equal(int_at(result, "result", "value"), 42);
	json_decref(result);

	assert_int_equal(cdp_call(c, sid, "Page.captureScreenshot", NULL, WAIT_MS, &result, &err),
	                 0);
	assert_true(json_string_length(json_object_get(result, "data")) > 100);
	json_decref(result);

	assert_int_equal(cdp_call(c, sid, "Page.navigate", json_pack("{s:s}", "url", "not a url"),
	                          WAIT_MS, NULL, &err),
	                 -CDP_EPROTOCOL);
	assert_non_null(strstr(err.message, "Page.navigate"));

	/* the browser dies: the pending call and every later one fail */
	browser_kill(b);
	rc = cdp_send(c, sid, "Runtime.evaluate", json_pack("{s:s}", "expression", "1"), &id);
	if (rc == 0)
		rc = cdp_await(c, id, WAIT_MS, NULL, &err);
	assert_int_equal(rc, -CDP_ECLOSED);
	assert_false(cdp_is_open(c));
	assert_int_equal(cdp_call(c, NULL, "Browser.getVersion", NULL, WAIT_MS, NULL, &err),
	                 -CDP_ECLOSED);
	cdp_close(c);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_real_chromium, setup, teardown),
	};

	lws_set_log_level(LLL_ERR, NULL);
	if (!getenv("GLASSBOX_LOG"))
		gb_log_set_level(GB_LOG_ERROR);
	return cmocka_run_group_tests(tests, NULL, NULL);
}

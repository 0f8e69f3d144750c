/*
 * process.c - the Chromium process: flags, spawning it in its own process
 * group, waiting for its DevTools endpoint, and ending it with nothing
 * left behind (every process reaped, the private dir removed).
 */
#include "sessions/sessions-private.h"

#include "common/log.h"
#include "common/metrics.h"
#include "common/util.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <ftw.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

#define MAX_ARGS 64

/* Flags in the spirit of Playwright's: nothing that phones home, nothing
 * that throttles a page in the background, nothing that prompts. */
static const char *const base_flags[] = {
	"--disable-background-networking",
	"--disable-component-update",
	"--no-first-run",
	"--disable-sync",
	"--no-default-browser-check",
	"--disable-default-apps",
	"--disable-extensions",
	"--disable-breakpad",
	"--disable-client-side-phishing-detection",
	"--disable-component-extensions-with-background-pages",
	"--disable-background-timer-throttling",
	"--disable-backgrounding-occluded-windows",
	"--disable-renderer-backgrounding",
	"--disable-back-forward-cache",
	"--disable-hang-monitor",
	"--disable-ipc-flooding-protection",
	"--disable-popup-blocking",
	"--disable-prompt-on-repost",
	"--disable-dev-shm-usage",
	"--disable-field-trial-config",
	"--disable-search-engine-choice-screen",
	/* also no spare renderer, no network time queries (clients2.google.com),
	 * and no omnibox popup WebUI (Chromium 156 loads it into a renderer of its
	 * own for every window; headless never shows it) */
	("--disable-features=Translate,MediaRouter,OptimizationHints,AutofillServerCommunication,"
	 "CertificateTransparencyComponentUpdater,DialMediaRouteProvider,"
	 "InterestFeedContentSuggestions,SpareRendererForSitePerProcess,NetworkTimeServiceQuerying,"
	 "WebUIOmniboxPopup,WebUIOmniboxAimPopup"),
	"--metrics-recording-only",
	"--password-store=basic",
	"--use-mock-keychain",
	"--no-service-autorun",
	"--force-color-profile=srgb",
	"--disable-quic",
	"--mute-audio",
	"--hide-scrollbars",
	"--no-startup-window",
	"--remote-debugging-port=0",
	"--remote-debugging-address=127.0.0.1",
};

const char *sess_default_chromium(void)
{
	if (access("/usr/lib/chromium/chromium", X_OK) == 0)
		return "/usr/lib/chromium/chromium";
	return "/usr/bin/chromium";
}

/* Builds argv into args (at most MAX_ARGS); strings that need formatting
 * are written into store (each 2048 bytes). Returns the count. */
UNITTEST int sess_build_argv(const struct sess_options *opt, const char *profile_dir, int sandboxed,
                             const char **args, char store[][2048], int nstore)
{
	int n = 0;
	int k = 0;
	size_t i;

	args[n++] = opt->chromium_path ? opt->chromium_path : sess_default_chromium();
	for (i = 0; i < sizeof(base_flags) / sizeof(base_flags[0]); i++)
		args[n++] = base_flags[i];
	if (!opt->headed)
		args[n++] = "--headless";
	if (opt->chromium_sandbox_off || (!sandboxed && geteuid() == 0))
		args[n++] = "--no-sandbox";
	snprintf(store[k], 2048, "--user-data-dir=%s", profile_dir);
	args[n++] = store[k++];
	snprintf(store[k], 2048, "--window-size=%d,%d",
	         opt->viewport_width > 0 ? opt->viewport_width : 1280,
	         opt->viewport_height > 0 ? opt->viewport_height : 720);
	args[n++] = store[k++];
	if (opt->host_resolver_rules && k < nstore) {
		snprintf(store[k], 2048, "--host-resolver-rules=%s", opt->host_resolver_rules);
		args[n++] = store[k++];
	}
	if (opt->proxy_server && k < nstore) {
		snprintf(store[k], 2048, "--proxy-server=%s", opt->proxy_server);
		args[n++] = store[k++];
	}
	for (i = 0; opt->extra_args && opt->extra_args[i] && n < MAX_ARGS - 1; i++)
		args[n++] = opt->extra_args[i];
	args[n] = NULL;
	return n;
}

/* The environment of a browser with a user and home of its own: ours,
 * with HOME and TMPDIR in its home (environ itself otherwise). The
 * strings live in store; env holds at most max pointers. */
static char *const *browser_env(const struct sess *s, const char **env, size_t max,
                                char store[][1100])
{
	size_t n = 0, i;

	if (!s->browser_uid)
		return environ;
	snprintf(store[0], 1100, "HOME=%s", s->home);
	snprintf(store[1], 1100, "TMPDIR=%s", s->home);
	env[n++] = store[0];
	env[n++] = store[1];
	for (i = 0; environ[i] && n < max - 1; i++)
		if (strncmp(environ[i], "HOME=", 5) != 0 &&
		    strncmp(environ[i], "TMPDIR=", 7) != 0 && strncmp(environ[i], "XDG_", 4) != 0)
			env[n++] = environ[i];
	env[n] = NULL;
	return (char *const *)env;
}

/* Prefixes args with setpriv(1) switching to the browser's own user, when
 * it has one: into full (at most MAX_ARGS + 8). Returns the argv to run. */
static const char **as_browser_user(const struct sess *s, const char **args, const char **full,
                                    char store[][32])
{
	size_t n = 0, i;

	if (!s->browser_uid)
		return args;
	snprintf(store[0], 32, "--reuid=%u", (unsigned)s->browser_uid);
	snprintf(store[1], 32, "--regid=%u", (unsigned)s->browser_uid);
	full[n++] = SESS_SETPRIV;
	full[n++] = store[0];
	full[n++] = store[1];
	full[n++] = "--clear-groups";
	full[n++] = "--";
	for (i = 0; args[i]; i++)
		full[n++] = args[i];
	full[n] = NULL;
	return full;
}

int sess_spawn(struct sess *s, const struct sess_options *opt, char *err, size_t errlen)
{
	char store[4][2048];
	const char *args[MAX_ARGS];
	const char *full[MAX_ARGS + 8];
	char ids[2][32];
	const char *env[256];
	char env_store[2][1100];
	const char **argv;
	char *const *envp;
	posix_spawn_file_actions_t fa;
	posix_spawnattr_t attr;
	char log_path[1100];
	pid_t pid;
	int rc, n, i;

	/* Orphaned Chromium helpers are re-parented to us so we can reap them. */
	prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0);
	n = sess_build_argv(opt, s->profile_dir, s->browser_uid != 0, args, store, 4);
	s->flags = json_array();
	for (i = 1; i < n; i++)
		json_array_append_new(s->flags, json_string(args[i]));
	snprintf(log_path, sizeof(log_path), "%s/chromium.log", s->dir);
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
	posix_spawn_file_actions_addopen(&fa, 1, log_path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	posix_spawn_file_actions_adddup2(&fa, 1, 2);
	posix_spawnattr_init(&attr);
	posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGMASK);
	posix_spawnattr_setpgroup(&attr, 0);
	{
		sigset_t none;

		sigemptyset(&none);
		posix_spawnattr_setsigmask(&attr, &none);
	}
	if (s->browser_uid && access(args[0], X_OK) != 0) {
		/* setpriv would start, then fail to run it: say so now */
		snprintf(err, errlen,
		         "cannot start Chromium at %s: %s (install it with "
		         "'apt-get install chromium' or pass --chromium PATH)",
		         args[0], strerror(errno));
		posix_spawn_file_actions_destroy(&fa);
		posix_spawnattr_destroy(&attr);
		return -1;
	}
	argv = as_browser_user(s, args, full, ids);
	envp = browser_env(s, env, sizeof(env) / sizeof(env[0]), env_store);
	if (opt->netns_fd > 0)
		rc = sess_spawn_in_netns(opt->netns_fd, &pid, argv, envp, &fa, &attr);
	else
		rc = posix_spawn(&pid, argv[0], &fa, &attr, (char *const *)argv, envp);
	posix_spawn_file_actions_destroy(&fa);
	posix_spawnattr_destroy(&attr);
	if (rc != 0) {
		snprintf(err, errlen,
		         "cannot start Chromium at %s: %s (install it with "
		         "'apt-get install chromium' or pass --chromium PATH)",
		         args[0], strerror(rc));
		return -1;
	}
	s->pid = pid;
	s->pgid = pid;
	return 0;
}

/* Describes how a process ended, from a waitpid status. */
static void describe_exit(int status, char *buf, size_t len)
{
	if (WIFSIGNALED(status))
		snprintf(buf, len, "killed by signal %d", WTERMSIG(status));
	else
		snprintf(buf, len, "exit status %d", WEXITSTATUS(status));
}

int sess_process_exited(struct sess *s, char *why, size_t whylen)
{
	int status;
	pid_t r;

	if (s->pid <= 0)
		return 1;
	if (s->exited)
		goto exited;
	r = waitpid(s->pid, &status, WNOHANG);
	if (r == 0)
		return 0;
	s->exited = 1;
	s->exit_status = r == s->pid ? status : 0;
	sess_watch_detach(s); /* its pid may be reused from now on */
exited:
	if (why)
		describe_exit(s->exit_status, why, whylen);
	return 1;
}

/* Reads "PORT\n/devtools/browser/ID" into a ws:// URL. */
UNITTEST int sess_parse_devtools_port(const char *text, char *url, size_t urllen)
{
	char path[512];
	unsigned port;

	if (sscanf(text, "%u\n%511s", &port, path) != 2 || port == 0 || port > 65535 ||
	    strncmp(path, "/devtools/browser/", 18) != 0)
		return -1;
	snprintf(url, urllen, "ws://127.0.0.1:%u%s", port, path);
	return 0;
}

static int read_devtools_port(const char *profile_dir, char *url, size_t urllen)
{
	char path[1100];
	char text[600];

	snprintf(path, sizeof(path), "%s/DevToolsActivePort", profile_dir);
	if (sess_read_small_file(path, text, sizeof(text)) <= 0)
		return -1;
	return sess_parse_devtools_port(text, url, urllen);
}

int sess_wait_devtools(struct sess *s, int timeout_ms, const atomic_int *cancel, char *url,
                       size_t urllen, char *err, size_t errlen)
{
	int64_t deadline = gb_now_ms() + timeout_ms;
	char why[64];
	int ifd;
	int rc = -1;

	ifd = inotify_init1(IN_CLOEXEC | IN_NONBLOCK);
	if (ifd >= 0)
		inotify_add_watch(ifd, s->profile_dir, IN_CLOSE_WRITE | IN_MOVED_TO | IN_CREATE);
	for (;;) {
		struct pollfd pfd = { .fd = ifd, .events = POLLIN };
		char evbuf[4096];
		int64_t left;

		if (read_devtools_port(s->profile_dir, url, urllen) == 0) {
			rc = 0;
			goto out;
		}
		if (sess_process_exited(s, why, sizeof(why))) {
			snprintf(err, errlen,
			         "Chromium exited (%s) before DevTools was ready; its "
			         "output is in %s/chromium.log",
			         why, s->dir);
			goto out;
		}
		if (cancel && atomic_load(cancel)) {
			snprintf(err, errlen, "cancelled while Chromium was starting");
			goto out;
		}
		left = deadline - gb_now_ms();
		if (left <= 0) {
			snprintf(err, errlen, "Chromium did not open DevTools within %d ms",
			         timeout_ms);
			goto out;
		}
		/* inotify wakes us on the file; the 20 ms cap notices a dead child. */
		if (ifd >= 0) {
			if (poll(&pfd, 1, left < 20 ? (int)left : 20) > 0)
				while (read(ifd, evbuf, sizeof(evbuf)) > 0)
					;
		} else {
			usleep(5000);
		}
	}
out:
	if (ifd >= 0)
		close(ifd);
	return rc;
}

/* 1 if any process of process group pgid still exists. */
static int group_alive(pid_t pgid)
{
	return kill(-pgid, 0) == 0 || errno == EPERM;
}

void sess_kill_group(struct sess *s, int grace_ms)
{
	int64_t deadline = gb_now_ms() + grace_ms;
	int status;

	if (s->pid <= 0)
		return;
	while (!s->exited && gb_now_ms() < deadline) {
		if (waitpid(s->pid, &status, WNOHANG) == s->pid) {
			s->exited = 1;
			s->exit_status = status;
			break;
		}
		usleep(2000);
	}
	kill(-s->pgid, SIGKILL);
	if (!s->exited && waitpid(s->pid, &status, 0) == s->pid) {
		s->exited = 1;
		s->exit_status = status;
	}
	/* Reap helpers re-parented to us (we are a subreaper), bounded. */
	deadline = gb_now_ms() + 5000;
	while (gb_now_ms() < deadline) {
		pid_t r = waitpid(-s->pgid, &status, WNOHANG);

		if (r > 0)
			continue;
		if (!group_alive(s->pgid))
			break;
		kill(-s->pgid, SIGKILL);
		usleep(2000);
	}
	if (group_alive(s->pgid))
		gb_metrics_gauge_add("glassbox_residual_processes", NULL, 1);
	s->pid = 0;
}

static int remove_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	(void)flag;
	(void)ftw;
	if (remove(path) != 0 && errno != ENOENT)
		GB_LOGW("sessions", "cannot remove %s: %s", path, strerror(errno));
	return 0;
}

void sess_remove_tree(const char *dir)
{
	if (dir && dir[0])
		nftw(dir, remove_entry, 16, FTW_DEPTH | FTW_PHYS);
}

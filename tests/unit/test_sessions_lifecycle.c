/*
 * test_sessions_lifecycle.c - what /proc says about a process, the cgroup
 * layout of limited browsers (on a stand-in tree), the residue gauge, and
 * the reaping of orphans left by a dead glassbox (with stand-in browsers:
 * shells whose command line names a profile dir).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "common/util.h"
#include "sessions/sessions-private.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* orphans.c's owner record, as the parser fills it */
struct owner {
	pid_t pid;
	uint64_t start;
	pid_t pgid;
	char profile[1100];
};

static char tmp_dir[256];

static int setup(void **state)
{
	(void)state;
	snprintf(tmp_dir, sizeof(tmp_dir), "/tmp/glassbox-test-lifecycle-XXXXXX");
	return mkdtemp(tmp_dir) ? 0 : -1;
}

/* Stand-in processes of the watchdog test, ended by teardown whatever
 * happens (a failed assertion must not leave them holding the output). */
static pid_t hogs[3];

static int teardown(void **state)
{
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(hogs) / sizeof(hogs[0]); i++)
		if (hogs[i] > 0)
			kill(-hogs[i], SIGKILL);
	sess_remove_tree(tmp_dir);
	return 0;
}

static void write_text(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	assert_non_null(f);
	fputs(text, f);
	fclose(f);
}

static void read_text(const char *path, char *buf, size_t len)
{
	FILE *f = fopen(path, "r");
	size_t n;

	assert_non_null(f);
	n = fread(buf, 1, len - 1, f);
	buf[n] = '\0';
	fclose(f);
}

/* A stand-in browser: a shell in its own process group whose command
 * line carries --user-data-dir=profile; returns its pid. */
static pid_t start_fake_browser(const char *profile)
{
	char arg[1200];
	pid_t pid;

	snprintf(arg, sizeof(arg), "--user-data-dir=%s", profile);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		setpgid(0, 0);
		execl("/bin/sh", "sh", "-c", "sleep 60; true", arg, (char *)NULL);
		_exit(127);
	}
	setpgid(pid, pid);
	usleep(50000);
	return pid;
}

static void test_parse_proc_stat(void **state)
{
	struct sess_proc_stat st;

	(void)state;
	/* a comm with spaces and a ')' must not shift the fields */
	assert_int_equal(
	    sess_parse_proc_stat("1234 (we) ird (name) S 1 1200 1200 0 -1 4194560 10 0 "
	                         "0 0 150 25 0 0 20 0 3 0 987654 1000 100",
	                         &st),
	    0);
	assert_int_equal(st.state, 'S');
	assert_int_equal(st.ppid, 1);
	assert_int_equal(st.pgid, 1200);
	assert_int_equal(st.cpu_ticks, 175);
	assert_int_equal(st.start_ticks, 987654);
	assert_int_equal(sess_parse_proc_stat("garbage", &st), -1);
	assert_int_equal(sess_parse_proc_stat("1 (x) S 1", &st), -1);
	/* and this process reads as itself */
	assert_int_equal(sess_proc_stat(getpid(), &st), 0);
	assert_int_equal(st.pgid, getpgrp());
	assert_true(st.start_ticks > 0);
}

static void test_parse_pss(void **state)
{
	(void)state;
	assert_int_equal(sess_parse_pss_kb("55d0-7ffd ---p 00000000 00:00 0 [rollup]\n"
	                                   "Rss:              120 kB\nPss:               80 kB\n"
	                                   "Pss_Anon:          60 kB\n"),
	                 80);
	assert_int_equal(sess_parse_pss_kb("Rss: 5 kB\n"), 0);
	assert_true(sess_proc_pss_bytes(getpid()) > 0);
}

static void test_cmdline_match(void **state)
{
	static const char args[] = "/usr/lib/chromium/chromium\0--headless\0"
	                           "--user-data-dir=/d/run/ab/profile\0";
	static const char title[] = "/usr/lib/chromium/chromium --type=renderer "
	                            "--user-data-dir=/d/run/ab/profile --lang=en-US";

	(void)state;
	assert_true(
	    sess_cmdline_text_has(args, sizeof(args) - 1, "--user-data-dir=/d/run/ab/profile"));
	assert_true(
	    sess_cmdline_text_has(title, sizeof(title) - 1, "--user-data-dir=/d/run/ab/profile"));
	/* a longer path that starts the same is another browser */
	assert_false(sess_cmdline_text_has(args, sizeof(args) - 1, "--user-data-dir=/d/run/a"));
	assert_false(
	    sess_cmdline_text_has(args, sizeof(args) - 1, "--user-data-dir=/d/run/ab/profile2"));
	assert_false(sess_cmdline_text_has(args, sizeof(args) - 1, ""));
}

static void test_parse_owner(void **state)
{
	struct owner o;

	(void)state;
	assert_int_equal(sess_parse_owner("glassbox-owner 1\npid 42\nstart 777\npgid 50\n"
	                                  "profile /d/run/ab/profile\n",
	                                  &o),
	                 0);
	assert_int_equal(o.pid, 42);
	assert_int_equal(o.start, 777);
	assert_int_equal(o.pgid, 50);
	assert_string_equal(o.profile, "/d/run/ab/profile");
	assert_int_equal(sess_parse_owner("glassbox-owner 1\npid 42\n", &o), -1);
	assert_int_equal(sess_parse_owner("pid 42\nstart 7\n", &o), -1);
	assert_int_equal(sess_parse_owner("glassbox-owner 1\npid -3\nstart 7\n", &o), -1);
}

static void test_cgroup_layout(void **state)
{
	char root[512], base[1200], why[512], path[1400], text[256], err[512];
	pid_t child;
	int status;

	(void)state;
	snprintf(root, sizeof(root), "%s/cg", tmp_dir);
	assert_int_equal(sess_cgroup_prepare(root, base, sizeof(base), why, sizeof(why)), -1);
	assert_non_null(strstr(why, "is not a cgroup v2 dir"));
	mkdir(root, 0755);
	write_text(strcat(strcpy(path, root), "/cgroup.controllers"), "hugetlb pids\n");
	assert_int_equal(sess_cgroup_prepare(root, base, sizeof(base), why, sizeof(why)), -1);
	assert_non_null(strstr(why, "the memory and cpu controllers are not available"));
	assert_non_null(strstr(why, "hugetlb pids"));

	write_text(path, "cpuset cpu io memory pids\n");
	assert_int_equal(sess_cgroup_prepare(root, base, sizeof(base), why, sizeof(why)), 0);
	read_text(strcat(strcpy(path, root), "/cgroup.subtree_control"), text, sizeof(text));
	assert_string_equal(text, "+memory +cpu");
	read_text(strcat(strcpy(path, base), "/cgroup.subtree_control"), text, sizeof(text));
	assert_string_equal(text, "+memory +cpu");

	/* a browser's group moves into its own leaf with its limits */
	child = start_fake_browser("/nowhere/profile");
	assert_int_equal(sess_cgroup_enter(base, "s1", child, 640u << 20, 50, path, sizeof(path),
	                                   err, sizeof(err)),
	                 0);
	assert_non_null(strstr(path, "/glassbox/s1"));
	read_text(strcat(strcpy(text, path), "/memory.max"), err, sizeof(err));
	assert_string_equal(err, "671088640");
	read_text(strcat(strcpy(text, path), "/cpu.max"), err, sizeof(err));
	assert_string_equal(err, "50000 100000");
	assert_int_equal(sess_cgroup_oom_kills(path), 0);
	write_text(strcat(strcpy(text, path), "/memory.events"), "low 0\nhigh 0\nmax 3\noom 1\n"
	                                                         "oom_kill 2\n");
	assert_int_equal(sess_cgroup_oom_kills(path), 2);
	kill(-child, SIGKILL);
	waitpid(child, &status, 0);
}

static void test_residue_is_counted_until_gone(void **state)
{
	char dir[512];
	pid_t child;
	int status;

	(void)state;
	assert_int_equal(sess_residual_count(), 0);
	/* a clean close notes nothing */
	sess_note_residue(0, "/nonexistent/glassbox-dir");
	assert_int_equal(sess_residual_count(), 0);

	snprintf(dir, sizeof(dir), "%s/left", tmp_dir);
	mkdir(dir, 0700);
	child = start_fake_browser("/nowhere/profile");
	sess_note_residue(child, dir);
	/* the shell (and its sleep) plus the dir */
	assert_true(sess_residual_count() >= 2);
	kill(-child, SIGKILL);
	waitpid(child, &status, 0);
	usleep(50000);
	assert_int_equal(sess_residual_count(), 1);
	rmdir(dir);
	assert_int_equal(sess_residual_count(), 0);
}

/* Makes data/run/<name>/ with an owner file for (pid, start); returns the
 * stand-in browser started on its profile, or 0 when browser is 0. */
static pid_t make_session_dir(const char *data, const char *name, pid_t owner, uint64_t start,
                              int owner_file, int browser, char *dir, size_t dirlen)
{
	char path[1400], profile[1300], text[1600];
	pid_t b = 0;

	snprintf(path, sizeof(path), "%s/run", data);
	mkdir(path, 0700);
	snprintf(dir, dirlen, "%s/run/%s", data, name);
	snprintf(profile, sizeof(profile), "%s/profile", dir);
	assert_int_equal(mkdir(dir, 0700), 0);
	assert_int_equal(mkdir(profile, 0700), 0);
	if (browser)
		b = start_fake_browser(profile);
	if (owner_file) {
		snprintf(path, sizeof(path), "%s/owner", dir);
		snprintf(text, sizeof(text),
		         "glassbox-owner 1\npid %d\nstart %llu\npgid %d\nprofile %s\n", (int)owner,
		         (unsigned long long)start, (int)b, profile);
		write_text(path, text);
	}
	return b;
}

static void test_reap_orphans_spares_live_owners(void **state)
{
	struct sess_reap_report rep;
	struct sess_proc_stat self, gone_st;
	char data[512], dead_dir[1400], live_dir[1400], fresh_dir[1400];
	pid_t gone, orphan, kept;
	int status;
	struct stat st;

	(void)state;
	snprintf(data, sizeof(data), "%s/data", tmp_dir);
	mkdir(data, 0700);
	assert_int_equal(sess_reap_orphans(data, &rep), 0); /* no run dir yet */
	assert_int_equal(rep.dirs_removed, 0);

	/* a dead owner: a process that has exited */
	gone = fork();
	if (gone == 0)
		_exit(0);
	assert_int_equal(sess_proc_stat(gone, &gone_st), 0);
	waitpid(gone, &status, 0);
	assert_int_equal(sess_proc_stat(getpid(), &self), 0);

	orphan = make_session_dir(data, "dead", gone, gone_st.start_ticks, 1, 1, dead_dir,
	                          sizeof(dead_dir));
	/* this process is a live owner; a reused pid (right pid, wrong start)
	 * is not */
	kept = make_session_dir(data, "live", getpid(), self.start_ticks, 1, 1, live_dir,
	                        sizeof(live_dir));
	make_session_dir(data, "fresh", 0, 0, 0, 0, fresh_dir, sizeof(fresh_dir));

	assert_int_equal(sess_reap_orphans(data, &rep), 0);
	assert_int_equal(rep.browsers_killed, 1);
	assert_int_equal(rep.dirs_removed, 1);
	assert_int_equal(rep.live_skipped, 2);
	assert_int_equal(waitpid(orphan, &status, 0), orphan);
	assert_true(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
	assert_int_not_equal(stat(dead_dir, &st), 0);
	assert_int_equal(kill(kept, 0), 0);
	assert_int_equal(stat(live_dir, &st), 0);
	assert_int_equal(stat(fresh_dir, &st), 0);

	/* the same pid with another start time is someone else */
	sess_remove_tree(live_dir);
	make_session_dir(data, "reused", getpid(), self.start_ticks + 1, 1, 0, live_dir,
	                 sizeof(live_dir));
	assert_int_equal(sess_reap_orphans(data, &rep), 0);
	assert_int_equal(rep.dirs_removed, 1);
	assert_int_not_equal(stat(live_dir, &st), 0);
	kill(-kept, SIGKILL);
	waitpid(kept, &status, 0);
}

/* Browsers of the data dir that no live glassbox owns are counted (for
 * /healthz residual_processes): a dead owner's, one whose dir has no
 * owner; not a live owner's, nor one a close already noted. A browser
 * whose glassbox was killed between spawning it and recording its group
 * (the owner file says pgid 0) is reaped by its profile dir. */
static void test_unowned_browsers_are_counted_and_reaped(void **state)
{
	struct sess_reap_report rep;
	struct sess_proc_stat self, gone_st;
	char data[512], dir[4][1400], path[1500], text[1700];
	const char *ids[4] = { "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
		               "bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb",
		               "cccccccccccccccccccccccccccccccc",
		               "dddddddddddddddddddddddddddddddd" };
	pid_t gone, b[4];
	int status;

	(void)state;
	snprintf(data, sizeof(data), "%s/unowned", tmp_dir);
	assert_int_equal(mkdir(data, 0700), 0);
	assert_int_equal(sess_unowned_browsers(data), 0); /* no run dir yet */
	gone = fork();
	if (gone == 0)
		_exit(0);
	assert_int_equal(sess_proc_stat(gone, &gone_st), 0);
	waitpid(gone, &status, 0);
	assert_int_equal(sess_proc_stat(getpid(), &self), 0);

	b[0] =
	    make_session_dir(data, ids[0], gone, gone_st.start_ticks, 1, 1, dir[0], sizeof(dir[0]));
	b[1] = make_session_dir(data, ids[1], getpid(), self.start_ticks, 1, 1, dir[1],
	                        sizeof(dir[1]));
	b[2] = make_session_dir(data, ids[2], 0, 0, 0, 1, dir[2], sizeof(dir[2]));
	assert_int_equal(sess_unowned_browsers(data), 2); /* the dead owner's, the ownerless */
	/* what a close noted is counted there, not twice */
	sess_note_residue(b[2], "");
	assert_int_equal(sess_unowned_browsers(data), 1);
	kill(-b[2], SIGKILL);
	waitpid(b[2], &status, 0);
	usleep(50000);
	assert_int_equal(sess_residual_count(), 0);
	sess_remove_tree(dir[2]);

	/* killed mid-launch: recorded before the spawn, its group not yet */
	b[3] = make_session_dir(data, ids[3], 0, 0, 0, 1, dir[3], sizeof(dir[3]));
	snprintf(path, sizeof(path), "%s/owner", dir[3]);
	snprintf(text, sizeof(text),
	         "glassbox-owner 1\npid %d\nstart %llu\npgid 0\nprofile %s/profile\n", (int)gone,
	         (unsigned long long)gone_st.start_ticks, dir[3]);
	write_text(path, text);
	assert_int_equal(sess_unowned_browsers(data), 2);
	assert_int_equal(sess_reap_orphans(data, &rep), 0);
	assert_int_equal(rep.browsers_killed, 2);
	assert_int_equal(rep.dirs_removed, 2);
	assert_int_equal(waitpid(b[0], &status, 0), b[0]);
	assert_int_equal(waitpid(b[3], &status, 0), b[3]);
	assert_int_equal(sess_unowned_browsers(data), 0);
	assert_int_equal(kill(b[1], 0), 0); /* the live owner's is left alone */
	kill(-b[1], SIGKILL);
	waitpid(b[1], &status, 0);
}

/* sess_launch records the session dir's owner before it spawns the
 * browser: a stand-in browser finds the owner file, naming this process,
 * the moment it starts. */
static void test_owner_is_recorded_before_the_browser_starts(void **state)
{
	struct sess_options opt;
	struct sess *sess = NULL;
	char run[600], script[700], mark[700], text[2600], err[1024] = "";

	(void)state;
	snprintf(run, sizeof(run), "%s/launch-run", tmp_dir);
	snprintf(script, sizeof(script), "%s/fake-chromium", tmp_dir);
	snprintf(mark, sizeof(mark), "%s/owner-seen", tmp_dir);
	snprintf(text, sizeof(text),
	         "#!/bin/sh\n"
	         "if grep -qs '^pid %d$' %s/*/owner; then printf recorded > %s; "
	         "else printf missing > %s; fi\n"
	         "exit 3\n",
	         (int)getpid(), run, mark, mark);
	write_text(script, text);
	assert_int_equal(chmod(script, 0755), 0);
	memset(&opt, 0, sizeof(opt));
	opt.run_dir = run;
	opt.chromium_path = script;
	opt.ready_timeout_ms = 5000;
	assert_int_equal(sess_launch(&opt, &sess, err, sizeof(err)), -1); /* it exits at once */
	assert_null(sess);
	read_text(mark, text, sizeof(text));
	assert_string_equal(text, "recorded");
}

/* A stand-in browser that spins (mib == 0) or holds mib MiB it touched. */
static pid_t start_hog(unsigned mib)
{
	pid_t pid = fork();

	assert_true(pid >= 0);
	if (pid == 0) {
		volatile unsigned long x = 0;

		setpgid(0, 0);
		if (mib) {
			/* volatile: the compiler may not elide memory nobody reads */
			volatile char *p = malloc((size_t)mib << 20);
			size_t i;

			for (i = 0; p && i < ((size_t)mib << 20); i += 4096)
				p[i] = 1;
			pause();
		}
		for (;;)
			x = x * 31 + 7;
	}
	setpgid(pid, pid);
	return pid;
}

/* Waits up to ms for the watchdog to close s's group; 1 if it did. */
static int wait_over_limit(struct sess *s, int ms)
{
	int64_t until = gb_now_ms() + ms;

	while (!sess_over_limit(s) && gb_now_ms() < until)
		usleep(20000);
	return sess_over_limit(s);
}

static void test_watchdog_closes_what_goes_over(void **state)
{
	struct sess cpu = { .id = "cpu-hog" }, mem = { .id = "mem-hog" }, calm = { .id = "calm" };
	struct sess_limits cpu_lim = { .cpu_percent = 2, .cpu_window_ms = 1000 };
	struct sess_limits mem_lim = { .memory_bytes = 64u << 20 };
	char verdict[256], err[256];
	int status;

	(void)state;
	cpu.pid = cpu.pgid = start_hog(0);
	mem.pid = mem.pgid = start_hog(160);
	calm.pid = calm.pgid = start_fake_browser("/nowhere/profile");
	hogs[0] = cpu.pid;
	hogs[1] = mem.pid;
	hogs[2] = calm.pid;
	assert_int_equal(sess_apply_limits(&cpu, &cpu_lim, err, sizeof(err)), 0);
	assert_int_equal(sess_apply_limits(&mem, &mem_lim, err, sizeof(err)), 0);
	assert_int_equal(sess_apply_limits(&calm, &cpu_lim, err, sizeof(err)), 0);
	assert_int_equal(sess_apply_limits(&calm, &cpu_lim, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "it already is"));

	assert_true(wait_over_limit(&cpu, 15000));
	assert_true(sess_watch_verdict(&cpu, verdict, sizeof(verdict)));
	assert_non_null(strstr(verdict, "of a CPU core for 1 s, over this session's limit of 2%; "
	                                "it was closed"));
	assert_int_equal(waitpid(cpu.pid, &status, 0), cpu.pid);
	assert_true(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);

	assert_true(wait_over_limit(&mem, 15000));
	assert_true(sess_watch_verdict(&mem, verdict, sizeof(verdict)));
	assert_non_null(strstr(verdict, "over this session's limit of 64 MiB; it was closed"));
	assert_int_equal(strncmp(verdict, "the browser used ", 17), 0);
	assert_int_equal(waitpid(mem.pid, &status, 0), mem.pid);
	assert_true(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);

	/* a quiet browser under the same limits is left alone */
	assert_false(sess_over_limit(&calm));
	assert_int_equal(waitpid(calm.pid, &status, WNOHANG), 0);
	sess_watch_release(&cpu);
	sess_watch_release(&mem);
	sess_watch_release(&calm);
	kill(-calm.pgid, SIGKILL);
	waitpid(calm.pid, &status, 0);
	memset(hogs, 0, sizeof(hogs)); /* reaped: their pids may be reused */
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parse_proc_stat),
		cmocka_unit_test(test_parse_pss),
		cmocka_unit_test(test_cmdline_match),
		cmocka_unit_test(test_parse_owner),
		cmocka_unit_test(test_cgroup_layout),
		cmocka_unit_test(test_watchdog_closes_what_goes_over),
		cmocka_unit_test(test_residue_is_counted_until_gone),
		cmocka_unit_test(test_reap_orphans_spares_live_owners),
		cmocka_unit_test(test_unowned_browsers_are_counted_and_reaped),
		cmocka_unit_test(test_owner_is_recorded_before_the_browser_starts),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}

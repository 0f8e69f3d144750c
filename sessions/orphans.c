/*
 * orphans.c - browsers and private dirs left by a glassbox that died
 * without closing them (kill -9, a crash, a power cut).
 *
 * Each session dir under DATA/run holds an owner file, written before
 * Chromium is spawned (with the profile dir it will run on, pgid 0) and
 * again right after, with its process group (sess_write_owner):
 *
 *     glassbox-owner 1
 *     pid 4242              the glassbox process that owns the dir
 *     start 123456          its start time (clock ticks since boot)
 *     pgid 4250             the browser's process group
 *     profile /data/run/<id>/profile
 *
 * At start, sess_reap_orphans() reads each one. The owner runs when a
 * process with that pid exists *and* started at that time (a reused pid
 * starts later), and then the dir is left alone: two glassbox processes
 * may share a data dir. Otherwise every process whose command line has
 * --user-data-dir=<profile> (the browser and all its helpers) is ended
 * with its process group, and the dir (and its cgroup, if it had one) is
 * removed. So a glassbox killed while its browser was launching leaves a
 * record of it the next start acts on. A dir without an owner file (its
 * glassbox died between creating it and recording it, before any browser
 * was spawned, or is doing so right now) is left alone for a minute.
 *
 * sess_unowned_browsers() counts, for a health check, every process whose
 * command line runs on a profile of this data dir (under run/ or in a
 * browser user's home) and whose session dir names no live owner.
 */
#include "sessions/sessions-private.h"

#include "common/log.h"
#include "common/util.h"

#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define OWNER_FILE "owner"
#define NO_OWNER_GRACE_S 60

struct owner {
	pid_t pid;
	uint64_t start;
	pid_t pgid;
	char profile[1100];
};

int sess_write_owner(const char *dir, pid_t pgid, const char *profile_dir)
{
	struct sess_proc_stat self;
	char path[1100], tmp[1120];
	FILE *f;
	int rc = -1;

	if (sess_proc_stat(getpid(), &self) < 0)
		return -1;
	snprintf(path, sizeof(path), "%s/" OWNER_FILE, dir);
	snprintf(tmp, sizeof(tmp), "%s.tmp", path);
	f = fopen(tmp, "we");
	if (!f)
		return -1;
	fprintf(f, "glassbox-owner 1\npid %d\nstart %llu\npgid %d\nprofile %s\n", (int)getpid(),
	        (unsigned long long)self.start_ticks, (int)pgid, profile_dir);
	if (fclose(f) == 0 && rename(tmp, path) == 0)
		rc = 0;
	return rc;
}

/* Parses an owner file's text (borrowed). Returns 0 when it names an
 * owner (pid and start); the browser lines are optional. */
UNITTEST int sess_parse_owner(const char *text, struct owner *o)
{
	const char *line = text;
	int have_pid = 0, have_start = 0;

	memset(o, 0, sizeof(*o));
	if (strncmp(text, "glassbox-owner 1\n", 17) != 0)
		return -1;
	while (line && *line) {
		int v;
		unsigned long long u;

		if (sscanf(line, "pid %d", &v) == 1 && v > 0) {
			o->pid = (pid_t)v;
			have_pid = 1;
		} else if (sscanf(line, "start %llu", &u) == 1) {
			o->start = (uint64_t)u;
			have_start = 1;
		} else if (sscanf(line, "pgid %d", &v) == 1 && v > 1) {
			o->pgid = (pid_t)v;
		} else if (!strncmp(line, "profile ", 8)) {
			size_t n = strcspn(line + 8, "\n");

			if (n < sizeof(o->profile))
				snprintf(o->profile, sizeof(o->profile), "%.*s", (int)n, line + 8);
		}
		line = strchr(line, '\n');
		if (line)
			line++;
	}
	return have_pid && have_start ? 0 : -1;
}

static int read_owner(const char *dir, struct owner *o)
{
	char path[1420];
	char text[2048];

	snprintf(path, sizeof(path), "%s/" OWNER_FILE, dir);
	if (sess_read_small_file(path, text, sizeof(text)) <= 0)
		return -1;
	return sess_parse_owner(text, o);
}

/* 1 when the process that wrote o still runs (same pid, same start). */
static int owner_alive(const struct owner *o)
{
	struct sess_proc_stat st;

	return sess_proc_stat(o->pid, &st) == 0 && st.state != 'Z' && st.start_ticks == o->start;
}

struct browser_scan {
	char needle[1500]; /* --user-data-dir=<profile> */
	pid_t groups[64];  /* distinct process groups seen */
	size_t n_groups;
	size_t n_procs; /* live processes with the needle */
};

static int scan_browser(void *user, pid_t pid)
{
	struct browser_scan *b = user;
	struct sess_proc_stat st;
	size_t i;

	if (sess_proc_stat(pid, &st) < 0 || st.state == 'Z' ||
	    !sess_proc_cmdline_has(pid, b->needle))
		return 0;
	b->n_procs++;
	for (i = 0; i < b->n_groups; i++)
		if (b->groups[i] == st.pgid)
			return 0;
	if (b->n_groups < sizeof(b->groups) / sizeof(b->groups[0]))
		b->groups[b->n_groups++] = st.pgid;
	return 0;
}

/* Ends every process of the browser whose profile dir is profile (and
 * their process groups); returns the number of groups signalled. */
static unsigned kill_browser(const char *profile)
{
	struct browser_scan b;
	int64_t deadline = gb_now_ms() + 3000;
	unsigned killed = 0;
	size_t i;

	memset(&b, 0, sizeof(b));
	snprintf(b.needle, sizeof(b.needle), "--user-data-dir=%s", profile);
	sess_proc_foreach(scan_browser, &b);
	for (i = 0; i < b.n_groups; i++) {
		/* never our own group: only a browser's, which it leads */
		if (b.groups[i] <= 1 || b.groups[i] == getpgrp())
			continue;
		if (kill(-b.groups[i], SIGKILL) == 0)
			killed++;
	}
	/* wait, bounded, until none is left running (zombies are init's) */
	while (b.n_procs && gb_now_ms() < deadline) {
		usleep(10000);
		b.n_procs = 0;
		b.n_groups = 0;
		sess_proc_foreach(scan_browser, &b);
		for (i = 0; i < b.n_groups; i++)
			if (b.groups[i] > 1 && b.groups[i] != getpgrp())
				kill(-b.groups[i], SIGKILL);
	}
	if (b.n_procs)
		GB_LOGW("sessions", "%zu process(es) of the orphaned browser %s would not end",
		        b.n_procs, profile);
	return killed;
}

/* The orphan's cgroup (limits.c names it after the session), if any. */
static void remove_cgroup(const char *id)
{
	const char *base = sess_cgroup_base(NULL, 0);
	char path[1400];
	struct stat st;

	if (!base[0])
		return;
	snprintf(path, sizeof(path), "%s/%s", base, id);
	if (stat(path, &st) == 0)
		sess_cgroup_remove(path);
}

int sess_reap_orphans(const char *data_dir, struct sess_reap_report *rep)
{
	struct sess_reap_report local = { 0 };
	char run_dir[1024];
	struct dirent *e;
	DIR *d;

	if (!rep)
		rep = &local;
	memset(rep, 0, sizeof(*rep));
	if (strlen(data_dir) > 900)
		return -1;
	snprintf(run_dir, sizeof(run_dir), "%s/run", data_dir);
	d = opendir(run_dir);
	if (!d)
		return errno == ENOENT ? 0 : -1;
	while ((e = readdir(d)) != NULL) {
		char dir[1400];
		char profile[1420];
		char home[1024];
		struct owner o;
		struct stat st;

		if (e->d_name[0] == '.')
			continue;
		snprintf(dir, sizeof(dir), "%s/%s", run_dir, e->d_name);
		if (lstat(dir, &st) != 0 || !S_ISDIR(st.st_mode))
			continue;
		memset(&o, 0, sizeof(o));
		if (read_owner(dir, &o) == 0) {
			if (owner_alive(&o)) {
				rep->live_skipped++;
				continue;
			}
		} else if (time(NULL) - st.st_mtime < NO_OWNER_GRACE_S) {
			rep->live_skipped++;
			continue;
		}
		snprintf(profile, sizeof(profile), "%s/profile", dir);
		rep->browsers_killed += kill_browser(profile);
		/* the recorded path, in case the data dir was named differently */
		if (o.profile[0] && strcmp(o.profile, profile) != 0)
			rep->browsers_killed += kill_browser(o.profile);
		sess_remove_tree(dir);
		if (sess_browser_home_path(run_dir, e->d_name, home, sizeof(home)) == 0)
			sess_remove_tree(home);
		remove_cgroup(e->d_name);
		if (lstat(dir, &st) != 0)
			rep->dirs_removed++;
		else
			GB_LOGW("sessions", "cannot remove the orphaned dir %s", dir);
	}
	closedir(d);
	if (rep->browsers_killed || rep->dirs_removed)
		GB_LOGI("sessions",
		        "removed what a previous glassbox left: %u browser(s) ended, %u "
		        "dir(s) removed (%u in use by a running glassbox kept)",
		        rep->browsers_killed, rep->dirs_removed, rep->live_skipped);
	return 0;
}

/* ---- browsers no live session owns ------------------------------------- */

struct unowned_scan {
	const char *run_dir;
	char needles[2][1200]; /* "--user-data-dir=<run>/", "--user-data-dir=<home prefix>" */
	size_t n_needles;
	size_t n; /* processes counted */
};

/* The session id that follows needle in text[0..len) (NUL-separated
 * arguments, or one rewritten title), into id[33]; 0 when found. */
static int session_id_after(const char *text, size_t len, const char *needle, char id[33])
{
	size_t nlen = strlen(needle);
	size_t i;
	size_t k;

	for (i = 0; i + nlen <= len; i++) {
		if (text[i] != '-' || memcmp(text + i, needle, nlen) != 0)
			continue;
		for (k = 0; k < 32 && i + nlen + k < len &&
		            strchr("0123456789abcdef", text[i + nlen + k]) && text[i + nlen + k];
		     k++)
			id[k] = text[i + nlen + k];
		id[k] = '\0';
		if (k == 32)
			return 0;
	}
	return -1;
}

static int count_unowned(void *user, pid_t pid)
{
	struct unowned_scan *u = user;
	struct sess_proc_stat st;
	struct owner o;
	char path[64];
	char text[16384];
	char id[33];
	char dir[1200];
	ssize_t n;
	size_t i;

	if (pid == getpid())
		return 0;
	/* the command line first: most processes are not browsers of ours */
	snprintf(path, sizeof(path), "/proc/%d/cmdline", (int)pid);
	n = sess_read_small_file(path, text, sizeof(text));
	if (n <= 0)
		return 0;
	for (i = 0; i < u->n_needles; i++)
		if (session_id_after(text, (size_t)n, u->needles[i], id) == 0)
			break;
	if (i == u->n_needles || sess_proc_stat(pid, &st) < 0 || st.state == 'Z')
		return 0;
	snprintf(dir, sizeof(dir), "%s/%s", u->run_dir, id);
	if (read_owner(dir, &o) == 0 && owner_alive(&o))
		return 0; /* its session's glassbox runs: its own to close */
	if (sess_residue_noted(st.pgid))
		return 0; /* counted already, as what a close left */
	u->n++;
	return 0;
}

size_t sess_unowned_browsers(const char *data_dir)
{
	struct unowned_scan u;
	char run_dir[1024];
	char home[1100];
	char tag[1100];
	struct stat st;

	memset(&u, 0, sizeof(u));
	if (strlen(data_dir) > 900)
		return 0;
	snprintf(run_dir, sizeof(run_dir), "%s/run", data_dir);
	u.run_dir = run_dir;
	snprintf(u.needles[u.n_needles++], sizeof(u.needles[0]), "--user-data-dir=%s/", run_dir);
	/* browsers that run as users of their own have their profile in a home
	 * named by the run dir's tag (never made here: no tag, no such home) */
	snprintf(tag, sizeof(tag), "%s/.browsers-tag", run_dir);
	if (stat(tag, &st) == 0 && sess_browser_home_path(run_dir, "", home, sizeof(home)) == 0)
		snprintf(u.needles[u.n_needles++], sizeof(u.needles[0]), "--user-data-dir=%s",
		         home);
	sess_proc_foreach(count_unowned, &u);
	return u.n;
}

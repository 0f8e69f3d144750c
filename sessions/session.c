/*
 * session.c - the life of one browser session.
 *
 * Design: sess_launch() makes a private 0700 dir under the run dir, starts
 * Chromium in its own process group with its user-data-dir inside, waits
 * for DevToolsActivePort (inotify, no polling delay), connects the CDP
 * client, turns on auto-attach for every target and opens the first tab;
 * the session is READY when that tab is attached and set up. sess_close()
 * ends the process group, reaps every process and removes the dir: a
 * closed session leaves nothing behind. A session is driven by one thread.
 */
#include "sessions/sessions-private.h"

#include "cdp/cdp.h"
#include "common/fs.h"
#include "common/log.h"
#include "common/metrics.h"
#include "common/util.h"

#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static int make_private_dirs(struct sess *s, const char *run_dir, const char *user_data_dir,
                             char *err, size_t errlen)
{
	if (strlen(run_dir) > 900) {
		snprintf(err, errlen,
		         "the run dir path is too long (%zu bytes): use a shorter data dir",
		         strlen(run_dir));
		return -1;
	}
	if (mkdir(run_dir, 0700) != 0 && errno != EEXIST) {
		snprintf(err, errlen, "cannot create the run dir %s: %s", run_dir, strerror(errno));
		return -1;
	}
	if (user_data_dir && strlen(user_data_dir) >= sizeof(s->profile_dir)) {
		snprintf(err, errlen, "the user-data-dir path is too long (%zu bytes)",
		         strlen(user_data_dir));
		return -1;
	}
	snprintf(s->dir, sizeof(s->dir), "%s/%s", run_dir, s->id);
	if (user_data_dir)
		snprintf(s->profile_dir, sizeof(s->profile_dir), "%s", user_data_dir);
	else
		snprintf(s->profile_dir, sizeof(s->profile_dir), "%s/profile", s->dir);
	if (mkdir(s->dir, 0700) != 0 || (!user_data_dir && mkdir(s->profile_dir, 0700) != 0)) {
		snprintf(err, errlen, "cannot create the session dir %s: %s", s->dir,
		         strerror(errno));
		return -1;
	}
	return 0;
}

/* Gives the browser a user of its own and a home, when browsers run that
 * way (browser_user.c); a fresh profile then lives in that home, where
 * the user can reach it. Otherwise the browser runs as we do. Returns 0,
 * or -1 with err. */
static int give_browser_a_user(struct sess *s, const struct sess_options *opt, char *err,
                               size_t errlen)
{
	const char *chromium = opt->chromium_path ? opt->chromium_path : sess_default_chromium();
	int fresh_profile = opt->user_data_dir == NULL;
	static int told; /* said once per process; sessions start on several threads */
	char why[256];

	if (!sess_browser_user_check(why, sizeof(why))) {
		if (geteuid() == 0 && !__atomic_exchange_n(&told, 1, __ATOMIC_RELAXED))
			GB_LOGW("sessions", "Chromium runs as root without its sandbox: %s", why);
		return 0;
	}
	if (!sess_runnable_by_others(chromium)) {
		GB_LOGW("sessions",
		        "Chromium runs as root without its sandbox for session %s: other users may "
		        "not run %s (or reach it)",
		        s->id, chromium);
		return 0;
	}
	if (!fresh_profile && !sess_reachable_by_others(s->profile_dir)) {
		GB_LOGW("sessions",
		        "Chromium runs as root without its sandbox for session %s: a dir above its "
		        "profile (%s) does not let other users pass",
		        s->id, s->profile_dir);
		return 0;
	}
	s->browser_uid = sess_browser_uid_pick();
	if (!s->browser_uid) {
		snprintf(err, errlen, "no free uid for the browser's user above %u",
		         SESS_BROWSER_UID_BASE);
		return -1;
	}
	if (sess_browser_home_make(opt->run_dir, s->id, s->browser_uid, s->home, sizeof(s->home),
	                           err, errlen) < 0) {
		s->home[0] = '\0';
		return -1;
	}
	if (fresh_profile) {
		rmdir(s->profile_dir);
		if (gb_pathf(s->profile_dir, sizeof(s->profile_dir), "%s/profile", s->home) < 0 ||
		    mkdir(s->profile_dir, 0700) != 0) {
			gb_set_io_error(err, errlen, "create", s->profile_dir, errno);
			return -1;
		}
	}
	return 0;
}

void sess_read_version(struct sess *s, int timeout_ms)
{
	struct cdp_error cerr;
	json_t *res = NULL;

	if (cdp_call(s->cdp, NULL, "Browser.getVersion", NULL, timeout_ms, &res, &cerr) == 0)
		snprintf(s->browser_version, sizeof(s->browser_version), "%s",
		         gb_or(json_string_value(json_object_get(res, "product")), ""));
	json_decref(res);
}

/* Records the session dir's owner (this process) and the profile the
 * browser will run on, before it is spawned. */
static int record_owner(struct sess *s, char *err, size_t errlen)
{
	if (sess_write_owner(s->dir, 0, s->profile_dir) == 0)
		return 0;
	gb_set_io_error(err, errlen, "record the browser's owner before starting it in", s->dir,
	                errno);
	return -1;
}

/* After a failed launch step: names a crash in err when the browser is
 * the reason. */
static void name_crash(struct sess *s, char *err, size_t errlen)
{
	char why[64], detail[512];

	if (s->pid > 0 && sess_process_exited(s, why, sizeof(why))) {
		snprintf(detail, sizeof(detail), "%s", err);
		snprintf(err, errlen,
		         "the browser crashed while starting (Chromium exited, %s): %s", why,
		         detail);
	}
}

/* See sessions-private.h. */
struct sess *sess_alloc(sess_target_setup_fn on_target, void *on_target_user, int close_grace_ms,
                        char *err, size_t errlen)
{
	struct sess *s = calloc(1, sizeof(*s));

	if (!s) {
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	gb_random_hex(s->id, 16);
	s->state = SESS_PROVISIONING;
	s->started_ms = gb_now_ms();
	s->on_target = on_target;
	s->on_target_user = on_target_user;
	s->close_grace_ms = close_grace_ms;
	return s;
}

int sess_launch_process(const struct sess_options *opt, struct sess **out, char *err, size_t errlen)
{
	int timeout_ms = opt->ready_timeout_ms > 0 ? opt->ready_timeout_ms : 20000;
	char url[700];
	struct sess *s;
	int rc = -1;

	*out = NULL;
	s = sess_alloc(opt->on_target, opt->on_target_user,
	               opt->close_grace_ms > 0 ? opt->close_grace_ms : 2000, err, errlen);
	if (!s)
		return -1;
	if (make_private_dirs(s, opt->run_dir, opt->user_data_dir, err, errlen) < 0)
		goto out;
	/* recorded before anything is spawned, so that a crash at any point
	 * of the launch leaves a record the next start reaps by */
	if (record_owner(s, err, errlen) < 0)
		goto out;
	if (give_browser_a_user(s, opt, err, errlen) < 0)
		goto out;
	if (record_owner(s, err, errlen) < 0) /* its profile may have moved to a home */
		goto out;
	if (sess_write_preferences(s->profile_dir, err, errlen) < 0)
		goto out;
	if (s->browser_uid && sess_hand_over_tree(s->profile_dir, s->browser_uid) < 0) {
		gb_set_io_error(err, errlen, "hand over the profile dir", s->profile_dir, errno);
		goto out;
	}
	if (sess_spawn(s, opt, err, errlen) < 0)
		goto out;
	if (sess_write_owner(s->dir, s->pgid, s->profile_dir) < 0)
		GB_LOGW("sessions",
		        "cannot add the browser's process group to the owner file in %s: a "
		        "later start still finds it by its profile dir",
		        s->dir);
	s->state = SESS_STARTED;
	if (sess_wait_devtools(s, timeout_ms, opt->cancel_flag, url, sizeof(url), err, errlen) < 0)
		goto out;
	if (sscanf(url, "ws://127.0.0.1:%d/", &s->devtools_port) != 1)
		s->devtools_port = 0;
	snprintf(s->devtools_url, sizeof(s->devtools_url), "%s", url);
	*out = s;
	rc = 0;
out:
	if (rc < 0) {
		name_crash(s, err, errlen);
		sess_close(s);
	}
	return rc;
}

int sess_launch(const struct sess_options *opt, struct sess **out, char *err, size_t errlen)
{
	int timeout_ms = opt->ready_timeout_ms > 0 ? opt->ready_timeout_ms : 20000;
	struct cdp_options copt = { .cancel_flag = opt->cancel_flag };
	struct cdp_error cerr;
	struct sess *s;
	int rc = -1;

	*out = NULL;
	if (sess_launch_process(opt, &s, err, errlen) < 0)
		return -1;
	copt.connect_timeout_ms = timeout_ms;
	if ((opt->netns_fd > 0
	         ? sess_cdp_connect_in_netns(opt->netns_fd, s->devtools_url, &copt, &s->cdp, &cerr)
	         : cdp_connect(s->devtools_url, &copt, &s->cdp, &cerr)) < 0) {
		snprintf(err, errlen, "cannot connect to Chromium's DevTools at %s: %s",
		         s->devtools_url, cerr.message);
		goto out;
	}
	if (sess_targets_start(s) < 0) {
		snprintf(err, errlen, "cannot listen to Chromium's targets");
		goto out;
	}
	if (sess_open_page(s, timeout_ms, err, errlen) < 0)
		goto out;
	sess_read_version(s, timeout_ms);
	s->time_to_ready_ms = gb_now_ms() - s->started_ms;
	gb_metrics_observe("glassbox_session_time_to_ready_seconds", NULL,
	                   (double)s->time_to_ready_ms / 1000.0);
	s->state = SESS_READY;
	GB_LOGI("sessions", "session %s ready in %lld ms (%s)", s->id,
	        (long long)s->time_to_ready_ms, s->browser_version);
	*out = s;
	rc = 0;
out:
	if (rc < 0) {
		name_crash(s, err, errlen);
		sess_close(s);
	}
	return rc;
}

void sess_close(struct sess *s)
{
	struct cdp_error cerr;
	pid_t pgid;

	if (!s)
		return;
	if (s->host) { /* a context of a shared browser: that browser goes on */
		sess_host_leave(s);
		return;
	}
	if (s->state != SESS_FAILED)
		s->state = SESS_CLOSING;
	if (s->cdp && cdp_is_open(s->cdp) && !sess_process_exited(s, NULL, 0))
		cdp_call(s->cdp, NULL, "Browser.close", NULL, 2000, NULL, &cerr);
	sess_targets_stop(s);
	cdp_close(s->cdp);
	s->cdp = NULL;
	pgid = s->pgid;
	sess_watch_detach(s);
	sess_kill_group(s, s->close_grace_ms);
	sess_watch_release(s);
	sess_remove_tree(s->dir);
	if (s->home[0])
		sess_remove_tree(s->home);
	sess_note_residue(pgid, s->dir);
	s->state = SESS_CLOSED;
	if (s->netns_fd > 0)
		close(s->netns_fd);
	if (s->proxy_fd > 0)
		close(s->proxy_fd);
	json_decref(s->flags);
	free(s);
}

int sess_check_alive(struct sess *s)
{
	char why[64];
	char verdict[256];
	int64_t until;

	if (s->state == SESS_FAILED)
		return -1;
	if (s->cdp && cdp_is_open(s->cdp))
		cdp_service(s->cdp, 0, NULL, NULL); /* notice a close not yet read */
	if (s->host)
		return sess_host_check(s);
	if (s->cdp && cdp_is_open(s->cdp) && !sess_process_exited(s, why, sizeof(why)))
		return 0;
	/* The connection closed: the process is dying; give it a moment so the
	 * reason can name how it ended. */
	until = gb_now_ms() + 500;
	while (!sess_process_exited(s, why, sizeof(why)) && gb_now_ms() < until)
		usleep(5000);
	if (sess_watch_verdict(s, verdict, sizeof(verdict)))
		sess_fail(s, "%s", verdict);
	else if (sess_process_exited(s, why, sizeof(why)))
		sess_fail(s, "Chromium exited (%s)", why);
	else
		sess_fail(s, "the DevTools connection to Chromium closed");
	return -1;
}

enum sess_state sess_get_state(const struct sess *s)
{
	return s->state;
}

void sess_set_busy(struct sess *s, int busy)
{
	if (busy && s->state == SESS_READY)
		s->state = SESS_BUSY;
	else if (!busy && s->state == SESS_BUSY)
		s->state = SESS_READY;
}

const char *sess_state_name(enum sess_state st)
{
	static const char *const names[] = { "provisioning", "started", "ready", "busy",
		                             "closing",      "closed",  "failed" };

	return (unsigned)st < sizeof(names) / sizeof(names[0]) ? names[st] : "unknown";
}

const char *sess_failure(const struct sess *s)
{
	return s->failure;
}

const char *sess_id(const struct sess *s)
{
	return s->id;
}

struct cdp_conn *sess_cdp(struct sess *s)
{
	return s->cdp;
}

int sess_devtools_port(const struct sess *s)
{
	return s->devtools_port;
}

const char *sess_devtools_url(const struct sess *s)
{
	return s->devtools_url;
}

const char *sess_profile_dir(const struct sess *s)
{
	return s->profile_dir;
}

int64_t sess_time_to_ready_ms(const struct sess *s)
{
	return s->time_to_ready_ms;
}

int sess_pid(const struct sess *s)
{
	if (s->host)
		return sess_host_pid(s->host);
	return (int)s->pid;
}

const char *sess_dir(const struct sess *s)
{
	return s->dir;
}

json_t *sess_launch_flags(const struct sess *s)
{
	return s->flags;
}

const char *sess_browser_version(const struct sess *s)
{
	return s->browser_version;
}

size_t sess_page_count(const struct sess *s)
{
	return s->n_pages;
}

struct sess_page *sess_page_at(struct sess *s, size_t i)
{
	return i < s->n_pages ? s->pages[i] : NULL;
}

struct sess_page *sess_current_page(struct sess *s)
{
	return s->current < s->n_pages ? s->pages[s->current] : NULL;
}

size_t sess_current_index(const struct sess *s)
{
	return s->current;
}

/* 0 when tab index (0-based) is open, else -1 with err naming how many
 * are. */
static int check_tab(const struct sess *s, size_t index, char *err, size_t errlen)
{
	if (index < s->n_pages)
		return 0;
	snprintf(err, errlen, "there is no tab %zu: %zu tab(s) are open (0-based index)", index,
	         s->n_pages);
	return -1;
}

int sess_select_page(struct sess *s, size_t index, char *err, size_t errlen)
{
	struct cdp_error cerr;

	if (check_tab(s, index, err, errlen) < 0)
		return -1;
	s->current = index;
	cdp_call(s->cdp, s->pages[index]->session_id, "Page.bringToFront", NULL, 5000, NULL, &cerr);
	return 0;
}

int sess_new_page(struct sess *s, char *err, size_t errlen)
{
	return sess_open_page(s, 10000, err, errlen);
}

int sess_close_page(struct sess *s, size_t index, char *err, size_t errlen)
{
	struct cdp_error cerr;
	json_t *params;

	if (check_tab(s, index, err, errlen) < 0)
		return -1;
	params = json_pack("{s:s}", "targetId", s->pages[index]->target_id);
	if (cdp_call(s->cdp, NULL, "Target.closeTarget", params, 5000, NULL, &cerr) < 0) {
		snprintf(err, errlen, "cannot close tab %zu: %s", index, cerr.message);
		return -1;
	}
	return 0;
}

unsigned sess_pages_opened(const struct sess *s)
{
	return s->pages_opened;
}

const char *sess_page_session_id(const struct sess_page *p)
{
	return p->session_id;
}

const char *sess_page_target_id(const struct sess_page *p)
{
	return p->target_id;
}

const char *sess_page_url(const struct sess_page *p)
{
	return p->url ? p->url : "about:blank";
}

const char *sess_page_main_frame_id(const struct sess_page *p)
{
	return p->main_frame_id;
}

int sess_page_crashed(const struct sess_page *p)
{
	return p->crashed;
}

const struct sess_dialog *sess_page_dialog(const struct sess_page *p)
{
	return p->dialog_open ? &p->dialog : NULL;
}

unsigned sess_page_dialogs_seen(const struct sess_page *p)
{
	return p->dialogs_seen;
}

int sess_frame_is_known(struct sess *s, const char *frame_id)
{
	size_t i;

	if (!frame_id)
		return 0;
	for (i = 0; i < s->n_pages; i++)
		if (!strcmp(s->pages[i]->main_frame_id, frame_id) ||
		    !strcmp(s->pages[i]->target_id, frame_id))
			return 1;
	return sess_frame_session(s, frame_id) != NULL;
}

int sess_is_shared(const struct sess *s)
{
	return s->host != NULL;
}

const char *sess_frame_session(struct sess *s, const char *frame_id)
{
	size_t i;

	if (!frame_id)
		return NULL;
	for (i = 0; i < s->n_children; i++)
		if (!strcmp(s->children[i].target_id, frame_id))
			return s->children[i].session_id;
	return NULL;
}

/*
 * host.c - one Chromium that several sessions share, a browser context
 * each (isolation "context").
 *
 * Design: sess_host_launch() starts a browser as sess_launch does (its own
 * process group, private dir, user and network namespace) but keeps no
 * CDP connection to it: the browser has no page of its own. Each session
 * that joins it (sess_host_join) is a struct sess of its own with its own
 * CDP connection, its own browser context (Target.createBrowserContext,
 * with the session's own proxy as proxyServer, disposed when the
 * connection goes), its own private dir and areas, and its own target
 * setup. Every connection auto-attaches at the browser's level and so
 * sees every context's new targets paused: it sets up those of its own
 * context and lets go of the others at once (targets.c), so each target
 * is set up by its own session only and none stays paused.
 *
 * The host is reference-counted: each joined session holds a reference,
 * and so does whoever launched it (sess_host_unref drops that one); the
 * last reference ends the browser's process group and removes its dirs.
 * When the browser dies, each of its sessions turns FAILED with a reason
 * that says the shared browser ended (sess_host_check); whoever keeps the
 * host launches a new one for the next session (sess_host_exited).
 *
 * A headless host's windows are small (HOST_WINDOW_WIDTH x _HEIGHT): the
 * first tab of each context opens a window of that context, and a
 * window's surface costs the browser and GPU processes memory for every
 * session (about 5 and 4 MiB at 1280x720). Each tab's viewport is then
 * emulated at the sessions' size instead (Emulation.setDeviceMetrics-
 * Override, sent while the tab is paused: targets.c), so that the page,
 * its screenshots, boxes and input points are what a window of that size
 * would give. A headed host keeps windows of the viewport's size.
 *
 * Threads: sessions on one host run on their own workers; the host's
 * process state (the reaping of its leader) is guarded by h->lock, the
 * reference count is atomic. Everything else is immutable after launch.
 */
#include "sessions/sessions-private.h"

#include "cdp/cdp.h"
#include "common/fs.h"
#include "common/log.h"
#include "common/metrics.h"
#include "common/util.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* The window of a headless host's contexts (Chromium makes it at least
 * 500 wide): what a tab draws in is its emulated viewport. */
#define HOST_WINDOW_WIDTH 320
#define HOST_WINDOW_HEIGHT 200

struct sess_host {
	pthread_mutex_t lock;
	atomic_int refs;
	struct sess *proc; /* the browser: process, dirs, user; no CDP connection
	                    * ({lock} for its exit state) */
	int netns_fd;      /* the namespace it runs in (borrowed from the launcher), or 0 */
	char run_dir[1024];
	int emulated_width; /* the viewport its tabs emulate (a small window), or 0 */
	int emulated_height;
};

int sess_host_launch(const struct sess_options *opt, struct sess_host **out, char *err,
                     size_t errlen)
{
	struct sess_options o = *opt;
	struct sess_host *h;

	*out = NULL;
	if (opt->user_data_dir) {
		snprintf(err, errlen,
		         "a shared browser runs on no user-data-dir: a profile of a session in "
		         "it is its context's storage state");
		return -1;
	}
	if (strlen(opt->run_dir) >= sizeof(h->run_dir)) {
		snprintf(err, errlen, "the run dir path is too long: use a shorter data dir");
		return -1;
	}
	h = calloc(1, sizeof(*h));
	if (!h) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	o.on_target = NULL; /* it attaches to nothing: its sessions do */
	if (!opt->headed) {
		h->emulated_width = opt->viewport_width > 0 ? opt->viewport_width : 1280;
		h->emulated_height = opt->viewport_height > 0 ? opt->viewport_height : 720;
		o.viewport_width = HOST_WINDOW_WIDTH; /* the window's size (--window-size) */
		o.viewport_height = HOST_WINDOW_HEIGHT;
	}
	if (sess_launch_process(&o, &h->proc, err, errlen) < 0) {
		free(h);
		return -1;
	}
	pthread_mutex_init(&h->lock, NULL);
	atomic_init(&h->refs, 1);
	h->netns_fd = opt->netns_fd;
	snprintf(h->run_dir, sizeof(h->run_dir), "%s", opt->run_dir);
	h->proc->time_to_ready_ms = gb_now_ms() - h->proc->started_ms;
	GB_LOGI("sessions", "shared browser %s started in %lld ms (pid %d)", h->proc->id,
	        (long long)h->proc->time_to_ready_ms, (int)h->proc->pid);
	*out = h;
	return 0;
}

/* The targetId of a Target.createTarget reply (borrowed), or NULL. */
static const char *tid_or_null(json_t *res)
{
	return json_string_value(json_object_get(res, "targetId"));
}

/* Takes one more reference. */
static void host_ref(struct sess_host *h)
{
	atomic_fetch_add(&h->refs, 1);
}

void sess_host_unref(struct sess_host *h)
{
	if (!h || atomic_fetch_sub(&h->refs, 1) != 1)
		return;
	GB_LOGI("sessions", "shared browser %s: no session left, closing it", h->proc->id);
	/* no profile to flush: its contexts lived in memory */
	h->proc->close_grace_ms = 1;
	sess_close(h->proc);
	pthread_mutex_destroy(&h->lock);
	free(h);
}

int sess_host_exited(struct sess_host *h, char *why, size_t whylen)
{
	int exited;

	pthread_mutex_lock(&h->lock);
	exited = sess_process_exited(h->proc, why, whylen);
	pthread_mutex_unlock(&h->lock);
	return exited;
}

int sess_host_pid(struct sess_host *h)
{
	return (int)h->proc->pid;
}

/* The session's private dir under the run dir, and, when the browser has
 * a user of its own, a home for its areas inside that user's home (the
 * browser writes downloads there; each session's is its own). */
static int make_session_dirs(struct sess_host *h, struct sess *s, char *err, size_t errlen)
{
	if (gb_pathf(s->dir, sizeof(s->dir), "%s/%s", h->run_dir, s->id) < 0 ||
	    mkdir(s->dir, 0700) != 0) {
		gb_set_io_error(err, errlen, "create", s->dir, errno);
		s->dir[0] = '\0';
		return -1;
	}
	/* no process of its own: the owner file names none, and the host's
	 * own dir names the browser */
	if (sess_write_owner(s->dir, 0, h->proc->profile_dir) < 0) {
		gb_set_io_error(err, errlen, "record the owner of", s->dir, errno);
		return -1;
	}
	snprintf(s->profile_dir, sizeof(s->profile_dir), "%s", h->proc->profile_dir);
	s->browser_uid = h->proc->browser_uid;
	if (!h->proc->home[0])
		return 0;
	if (gb_pathf(s->home, sizeof(s->home), "%s/ctx-%s", h->proc->home, s->id) < 0 ||
	    mkdir(s->home, 0700) != 0 || chown(s->home, s->browser_uid, s->browser_uid) != 0) {
		gb_set_io_error(err, errlen, "create", s->home, errno);
		return -1;
	}
	return 0;
}

int sess_host_join(struct sess_host *h, const struct sess_join_options *o,
                   const atomic_int *cancel_flag, struct sess **out, char *err, size_t errlen)
{
	int timeout_ms = o->timeout_ms > 0 ? o->timeout_ms : 10000;
	struct cdp_options copt = { .cancel_flag = cancel_flag, .connect_timeout_ms = timeout_ms };
	struct cdp_error cerr;
	char why[64];
	struct sess *s;
	int rc = -1;

	*out = NULL;
	if (sess_host_exited(h, why, sizeof(why))) {
		snprintf(err, errlen, "the shared browser has exited (%s): start a new one", why);
		return -1;
	}
	s = sess_alloc(o->on_target, o->on_target_user, 1, err, errlen);
	if (!s)
		return -1;
	host_ref(h);
	s->host = h;
	snprintf(s->devtools_url, sizeof(s->devtools_url), "%s", h->proc->devtools_url);
	s->devtools_port = h->proc->devtools_port;
	s->flags = json_deep_copy(h->proc->flags);
	s->emulated_width = h->emulated_width;
	s->emulated_height = h->emulated_height;
	if (make_session_dirs(h, s, err, errlen) < 0)
		goto out;
	if ((h->netns_fd > 0
	         ? sess_cdp_connect_in_netns(h->netns_fd, s->devtools_url, &copt, &s->cdp, &cerr)
	         : cdp_connect(s->devtools_url, &copt, &s->cdp, &cerr)) < 0) {
		snprintf(err, errlen, "cannot connect to the shared browser's DevTools at %s: %s",
		         s->devtools_url, cerr.message);
		goto out;
	}
	s->state = SESS_STARTED;
	if (sess_targets_start(s) < 0) {
		snprintf(err, errlen, "cannot listen to the shared browser's targets");
		goto out;
	}
	if (sess_create_context(s, o->proxy_server, o->proxy_bypass_list, timeout_ms, err, errlen) <
	    0)
		goto out;
	if (o->prepare && o->prepare(o->prepare_user, s, err, errlen) < 0)
		goto out;
	if (sess_open_page(s, timeout_ms, err, errlen) < 0)
		goto out;
	sess_read_version(s, timeout_ms);
	s->time_to_ready_ms = gb_now_ms() - s->started_ms;
	gb_metrics_observe("glassbox_session_time_to_ready_seconds", NULL,
	                   (double)s->time_to_ready_ms / 1000.0);
	s->state = SESS_READY;
	GB_LOGI("sessions", "session %s ready in %lld ms in a context of shared browser %s", s->id,
	        (long long)s->time_to_ready_ms, h->proc->id);
	*out = s;
	rc = 0;
out:
	if (rc < 0)
		sess_close(s);
	return rc;
}

int sess_emulated_viewport(const struct sess *s, int *width, int *height)
{
	if (!s || !s->emulated_width)
		return 0;
	if (width)
		*width = s->emulated_width;
	if (height)
		*height = s->emulated_height;
	return 1;
}

json_t *sess_emulated_viewport_params(const struct sess *s)
{
	if (!sess_emulated_viewport(s, NULL, NULL))
		return NULL;
	/* deviceScaleFactor 0: the screen's own, as in a window of that size */
	return json_pack("{s:i, s:i, s:i, s:b}", "width", s->emulated_width, "height",
	                 s->emulated_height, "deviceScaleFactor", 0, "mobile", 0);
}

const char *sess_host_context_id(const struct sess *s)
{
	return s->host && s->context_id[0] ? s->context_id : NULL;
}

int sess_host_take_side_page(struct sess *s, const char *sid, const char *target_id)
{
	if (!s->side_wanted || s->side_target_id[0] || strlen(sid) >= sizeof(s->side_session_id) ||
	    strlen(target_id) >= sizeof(s->side_target_id))
		return 0;
	snprintf(s->side_target_id, sizeof(s->side_target_id), "%s", target_id);
	snprintf(s->side_session_id, sizeof(s->side_session_id), "%s", sid);
	s->side_wanted = 0;
	return 1;
}

/* cdp_service() predicate: the side page asked for has attached. */
static int side_attached(void *user)
{
	const struct sess *s = user;

	return s->side_target_id[0] != '\0';
}

int sess_host_open_side_page(struct sess *s, int timeout_ms, char *target_id, char *session_id,
                             char *err, size_t errlen)
{
	struct cdp_error cerr = { 0 };
	json_t *res = NULL;
	const char *tid;
	int rc = -1;

	if (!s->host || !s->context_id[0] || !s->cdp) {
		snprintf(err, errlen, "the session has no browser context of a shared browser");
		return -1;
	}
	if (s->side_wanted || s->side_target_id[0]) {
		snprintf(err, errlen, "the session's side page is already open");
		return -1;
	}
	s->side_wanted = 1;
	if (cdp_call(
	        s->cdp, NULL, "Target.createTarget",
	        json_pack("{s:s, s:s}", "url", "about:blank", "browserContextId", s->context_id),
	        timeout_ms, &res, &cerr) < 0) {
		snprintf(err, errlen, "cannot open a page in the session's context: %s",
		         cerr.message);
		goto out;
	}
	tid = json_string_value(json_object_get(res, "targetId"));
	if (!tid) {
		snprintf(err, errlen, "cannot open a page in the session's context: no target id");
		goto out;
	}
	if (!side_attached(s) && cdp_service(s->cdp, timeout_ms, side_attached, s) < 0) {
		snprintf(err, errlen, "the page opened in the session's context did not attach");
		goto out;
	}
	if (strcmp(s->side_target_id, tid) != 0) {
		/* a tab of the session opened at the same moment took its place */
		snprintf(err, errlen,
		         "another tab of the session opened meanwhile: close it and try again");
		goto out;
	}
	snprintf(target_id, SESS_ID_LEN, "%s", s->side_target_id);
	snprintf(session_id, SESS_ID_LEN, "%s", s->side_session_id);
	rc = 0;
out:
	s->side_wanted = 0;
	if (rc < 0 && tid_or_null(res))
		cdp_call(s->cdp, NULL, "Target.closeTarget",
		         json_pack("{s:s}", "targetId", tid_or_null(res)), timeout_ms, NULL, &cerr);
	if (rc < 0)
		s->side_target_id[0] = s->side_session_id[0] = '\0';
	json_decref(res);
	return rc;
}

int sess_host_is_side_page(const struct sess *s, const char *session_id)
{
	return s && session_id && s->side_session_id[0] && !strcmp(s->side_session_id, session_id);
}

void sess_host_close_side_page(struct sess *s)
{
	struct cdp_error cerr;

	if (!s->side_target_id[0])
		return;
	if (s->cdp && cdp_is_open(s->cdp))
		cdp_call(s->cdp, NULL, "Target.closeTarget",
		         json_pack("{s:s}", "targetId", s->side_target_id), 5000, NULL, &cerr);
	s->side_target_id[0] = s->side_session_id[0] = '\0';
}

void sess_host_leave(struct sess *s)
{
	struct sess_host *h = s->host;
	struct cdp_error cerr;

	if (s->state != SESS_FAILED)
		s->state = SESS_CLOSING;
	/* its pages go with its context; the connection's close would dispose
	 * of it too (disposeOnDetach), this says so at once */
	if (s->cdp && cdp_is_open(s->cdp) && s->context_id[0] && !sess_host_exited(h, NULL, 0))
		cdp_call(s->cdp, NULL, "Target.disposeBrowserContext",
		         json_pack("{s:s}", "browserContextId", s->context_id), 5000, NULL, &cerr);
	sess_targets_stop(s);
	cdp_close(s->cdp);
	s->cdp = NULL;
	if (s->home[0])
		sess_remove_tree(s->home);
	if (s->dir[0])
		sess_remove_tree(s->dir);
	sess_note_residue(0, s->dir);
	s->state = SESS_CLOSED;
	json_decref(s->flags);
	free(s);
	sess_host_unref(h);
}

int sess_host_check(struct sess *s)
{
	char why[64];
	int64_t until;

	if (s->cdp && cdp_is_open(s->cdp) && !sess_host_exited(s->host, why, sizeof(why)))
		return 0;
	/* the connection closed: the browser is likely dying; a moment lets
	 * the reason name how it ended */
	until = gb_now_ms() + 500;
	while (!sess_host_exited(s->host, why, sizeof(why)) && gb_now_ms() < until)
		usleep(5000);
	if (sess_host_exited(s->host, why, sizeof(why)))
		sess_fail(s,
		          "the shared browser of this session's tenant exited (%s); every session "
		          "in it failed, and the next call starts a new one",
		          why);
	else
		sess_fail(s, "the DevTools connection to the shared browser closed");
	return -1;
}

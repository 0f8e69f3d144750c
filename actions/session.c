/*
 * session.c - an agent's session: one worker thread that owns one
 * browser session and runs the agent's calls one at a time.
 *
 * Design (DESIGN.md, Concurrency): the transport's front thread queues
 * calls under s->lock and never waits on the browser; the worker pops
 * them and runs each through the pipeline as straight-line code. A
 * cancel raises s->cancel_flag, which every CDP wait of the running call
 * checks, and wakes the worker with cdp_wake() (the one cross-thread
 * libwebsockets call). The browser is launched lazily on the first call
 * and again after a crash has been reported.
 */
#include "actions/actions-private.h"
#include "actions/files-private.h"
#include "actions/console_log.h"
#include "actions/pagelog.h"

#include "cdp/cdp.h"
#include "common/log.h"
#include "console/live.h"
#include "evidence/audit.h"
#include "evidence/evidence.h"
#include "evidence/files.h"
#include "profiles/profiles.h"
#include "sessions/sessions.h"

#include <errno.h>
#include <malloc.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/stat.h>
#include <unistd.h>

static char *dup_or_null(const char *s)
{
	return s ? strdup(s) : NULL;
}

/* cdp_service() stop condition while idle: a call was queued, the
 * session is stopping, or the web console has work (takeover.c). */
static int work_waiting(void *user)
{
	struct act_session *s = user;
	int waiting;

	pthread_mutex_lock(&s->lock);
	waiting = s->head != NULL || s->stopping;
	pthread_mutex_unlock(&s->lock);
	return waiting || (s->live && console_live_has_work(s->live));
}

/* Between calls the worker keeps servicing its browser, so new targets
 * are set up and resumed, dialogs are noticed and events do not pile up;
 * act_session_submit() wakes it with cdp_wake(). Without a browser it
 * sleeps on the condition variable. */
static void idle_until_work(struct act_session *s)
{
	while (!work_waiting(s)) {
		if (s->sess && sess_get_state(s->sess) != SESS_FAILED &&
		    cdp_is_open(sess_cdp(s->sess))) {
			cdp_service(sess_cdp(s->sess), 10000, work_waiting, s);
			continue;
		}
		pthread_mutex_lock(&s->lock);
		while (!s->head && !s->stopping && !(s->live && console_live_has_work(s->live)))
			pthread_cond_wait(&s->cond, &s->lock);
		pthread_mutex_unlock(&s->lock);
	}
}

static void *worker_main(void *arg)
{
	struct act_session *s = arg;
	struct act_call *call;
	char err[512];
	int save, stop;

	/* a failed pre-launch is tried again, and reported, by the first call;
	 * a pooled browser held since the session started is adopted now, so
	 * the first call finds it ready */
	if ((s->prelaunch || s->pool_held) && act_launch_browser(s, err, sizeof(err)) < 0)
		GB_LOGW("actions", "the browser could not be started ahead of time: %s", err);
	for (;;) {
		idle_until_work(s);
		act_takeover_service(s);
		pthread_mutex_lock(&s->lock);
		call = s->head;
		if (!call) {
			stop = s->stopping;
			pthread_mutex_unlock(&s->lock);
			if (stop)
				break;
			continue; /* the console's work only */
		}
		s->head = call->next;
		if (!s->head)
			s->tail = NULL;
		s->queued--;
		s->running = call;
		atomic_store(&s->cancel_flag, atomic_load(&call->cancelled));
		pthread_mutex_unlock(&s->lock);

		if (!act_takeover_before_call(s, call))
			act_run_call(s, call);

		pthread_mutex_lock(&s->lock);
		s->running = NULL;
		atomic_store(&s->cancel_flag, 0);
		pthread_mutex_unlock(&s->lock);
	}
	pthread_mutex_lock(&s->lock);
	save = s->profile_save_at_end;
	pthread_mutex_unlock(&s->lock);
	if (s->profile)
		json_decref(act_profile_close(s, save, "the agent's session ended"));
	act_close_browser(s, "the agent's session ended");
	return NULL;
}

/* "retention_days": N in the policy: the tenant's trail older than N days
 * is purged (the purge writes its own record) by the record keeper. */
static void check_retention(struct act_session *s)
{
	int days = policy_tenant_settings(s->tenant_policy)->retention_days;

	if (days > 0)
		act_keeper_purge(s->keeper, (unsigned)days);
}

/* The name of the user this process runs as ($USER, else the password
 * database's, else "uid N"), for the audit trail's actor. */
static void run_as_user(char *out, size_t outlen)
{
	const char *env = getenv("USER");
	struct passwd pw;
	struct passwd *res = NULL;
	char buf[1024];

	if (env && env[0])
		snprintf(out, outlen, "%s", env);
	else if (getpwuid_r(geteuid(), &pw, buf, sizeof(buf), &res) == 0 && res)
		snprintf(out, outlen, "%s", res->pw_name);
	else
		snprintf(out, outlen, "uid %u", (unsigned)geteuid());
}

int act_session_new(const struct act_config *cfg, struct act_session **out, char *err,
                    size_t errlen)
{
	struct act_session *s;
	char user[64];
	char tenant_dir[4096];
	char aerr[512];
	char perr[2048];
	int rc = -1;

	*out = NULL;
	if (!cfg->data_dir || !cfg->data_dir[0]) {
		snprintf(err, errlen, "no data dir: set GLASSBOX_DATA_DIR or pass --data-dir");
		return -1;
	}
	s = calloc(1, sizeof(*s));
	if (!s) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	s->data_dir = strdup(cfg->data_dir);
	s->tenant = strdup(cfg->tenant ? cfg->tenant : "local");
	s->chromium_path = dup_or_null(cfg->chromium_path);
	s->headless = cfg->headless;
	s->chromium_sandbox_off = cfg->chromium_sandbox_off;
	s->env_secrets = cfg->env_secrets;
	s->viewport_width = cfg->viewport_width > 0 ? cfg->viewport_width : 1280;
	s->viewport_height = cfg->viewport_height > 0 ? cfg->viewport_height : 720;
	s->action_timeout_ms = cfg->action_timeout_ms > 0 ? cfg->action_timeout_ms : 30000;
	s->snapshot_mode = cfg->snapshot_mode;
	snprintf(s->test_id_attribute, sizeof(s->test_id_attribute), "%s",
	         cfg->test_id_attribute && *cfg->test_id_attribute ? cfg->test_id_attribute
	                                                           : "data-testid");
	s->output_dir = dup_or_null(cfg->output_dir);
	s->navigation_timeout_ms = cfg->navigation_timeout_ms;
	s->no_code = cfg->no_code;
	s->snapshot_boxes = cfg->snapshot_boxes;
	s->omit_images = cfg->omit_images;
	if (cfg->device_scale_factor > 0)
		s->emulation = json_pack("{s:{s:i, s:i, s:f}}", "viewport", "width",
		                         s->viewport_width, "height", s->viewport_height,
		                         "deviceScaleFactor", cfg->device_scale_factor);
	if (cfg->has_geolocation) {
		if (!s->emulation)
			s->emulation = json_object();
		json_object_set_new(s->emulation, "geolocation",
		                    json_pack("{s:f, s:f, s:f}", "latitude", cfg->geolocation[0],
		                              "longitude", cfg->geolocation[1], "accuracy",
		                              cfg->geolocation[2]));
	}
	s->code_lang = cfg->code_lang;
	s->user_agent = dup_or_null(cfg->user_agent);
	s->grant_permissions = dup_or_null(cfg->grant_permissions);
	s->prelaunch = cfg->prelaunch;
	/* a session that starts on a profile launches its browser on it */
	s->pool = cfg->profile ? NULL : cfg->pool;
	s->policy = cfg->tenant_policy ? json_deep_copy(cfg->tenant_policy) : json_object();
	snprintf(s->client_name, sizeof(s->client_name), "%s", gb_or(cfg->client_name, ""));
	snprintf(s->flow_name, sizeof(s->flow_name), "%s", gb_or(cfg->flow_name, ""));
	snprintf(s->cdp_endpoint, sizeof(s->cdp_endpoint), "%s", gb_or(cfg->cdp_endpoint, ""));
	gb_random_hex(s->id, 16);
	pthread_mutex_init(&s->lock, NULL);
	pthread_cond_init(&s->cond, NULL);
	s->live = console_live_new();
	pthread_cond_init(&s->evidence_cond, NULL);
	/* every error of the policy at once, before any part of it is used */
	if (cfg->policy)
		s->tenant_policy = policy_tenant_ref(cfg->policy);
	else if (policy_tenant_parse(cfg->tenant_policy, cfg->policy_source, &s->tenant_policy,
	                             perr, sizeof(perr)) < 0) {
		snprintf(err, errlen, "the policy is not valid: %s", perr);
		goto out;
	}
	if (act_caps_of_config(cfg, &s->caps, perr, sizeof(perr)) < 0) {
		snprintf(err, errlen, "the capability groups are not valid: %s", perr);
		goto out;
	}
	s->before_screenshots = policy_tenant_settings(s->tenant_policy)->before_screenshots;
	s->require_evidence = policy_tenant_settings(s->tenant_policy)->require_evidence;
	s->evidence_before_answer =
	    policy_tenant_settings(s->tenant_policy)->evidence_before_answer;
	/* a User-Agent the policy pins is the browser's, whatever the server's */
	if (policy_tenant_settings(s->tenant_policy)->user_agent[0]) {
		free(s->user_agent);
		s->user_agent = dup_or_null(policy_tenant_settings(s->tenant_policy)->user_agent);
	}
	if (mkdir(s->data_dir, 0700) != 0 && errno != EEXIST) {
		snprintf(err, errlen, "cannot create the data dir %s: %s", s->data_dir,
		         strerror(errno));
		goto out;
	}
	snprintf(s->run_dir, sizeof(s->run_dir), "%s/run", s->data_dir);
	snprintf(tenant_dir, sizeof(tenant_dir), "%s/tenants", s->data_dir);
	mkdir(tenant_dir, 0700);
	if (evid_store_open_err(s->data_dir, &s->store, aerr, sizeof(aerr)) < 0) {
		snprintf(err, errlen, "cannot open the evidence store under %s: %s", s->data_dir,
		         aerr);
		goto out;
	}
	if (evid_audit_open(s->data_dir, &s->audit, aerr, sizeof(aerr)) < 0) {
		snprintf(err, errlen, "cannot open the audit log: %s", aerr);
		goto out;
	}
	run_as_user(user, sizeof(user));
	if (act_keeper_start(s->store, s->audit, s->tenant, user,
	                     json_string_value(json_object_get(cfg->credentials, s->tenant)), s->id,
	                     &s->keeper) < 0) {
		snprintf(err, errlen, "cannot start the evidence writer thread");
		goto out;
	}
	if (act_answers_first(s))
		act_keeper_set_background(s->keeper); /* nothing waits for it */
	/* read before the egress layers: a shared browser refuses limits */
	act_limits_read(s, cfg, s->tenant_policy);
	if (policy_tenant_settings(s->tenant_policy)->isolation_context)
		s->pool = NULL; /* a pooled browser is one session's */
	if (act_egress_start(s, s->tenant_policy, err, errlen) < 0)
		goto out;
	if (act_gates_start(s, s->tenant_policy, err, errlen) < 0)
		goto out;
	act_secrets_start(s, s->tenant_policy);
	s->pagelog = act_pagelog_new();
	s->downloads = act_downloads_new();
	s->console_log =
	    act_console_log_new(act_console_level_parse(gb_or(cfg->console_level, "info")));
	if (!s->pagelog || !s->downloads || !s->console_log) {
		snprintf(err, errlen, "out of memory");
		goto out;
	}
	check_retention(s);
	s->profile_save_at_end = cfg->profile_save_at_end;
	if (cfg->profile &&
	    act_profile_open(s, cfg->profile, cfg->profile_user, cfg->profile_readonly,
	                     cfg->profile_create, err, errlen) < 0)
		goto out;
	if (pthread_create(&s->thread, NULL, worker_main, s) != 0) {
		snprintf(err, errlen, "cannot start the session's worker thread");
		goto out;
	}
	*out = s;
	rc = 0;
out:
	if (rc < 0) {
		act_pagelog_free(s->pagelog);
		act_downloads_free(s->downloads);
		act_console_log_free(s->console_log);
		prof_lease_close(s->profile);
		json_decref(s->profile_origins);
		json_decref(s->policy);
		act_gates_stop(s);
		act_egress_stop(s);
		policy_tenant_unref(s->tenant_policy);
		act_keeper_stop(s->keeper);
		evid_audit_close(s->audit);
		evid_store_close(s->store);
		free(s->data_dir);
		free(s->tenant);
		free(s->chromium_path);
		act_takeover_free(s);
		free(s);
	}
	return rc;
}

const char *act_session_id(const struct act_session *s)
{
	return s->id;
}

int act_session_submit(struct act_session *s, struct act_call *call)
{
	int rc = 0;

	call->next = NULL;
	pthread_mutex_lock(&s->lock);
	if (s->stopping) {
		rc = -ESHUTDOWN;
	} else if (s->queued >= ACT_SESSION_MAX_QUEUED) {
		rc = -EBUSY; /* a client that does not wait for its calls cannot grow it */
	} else {
		s->queued++;
		if (s->tail)
			s->tail->next = call;
		else
			s->head = call;
		s->tail = call;
		pthread_cond_signal(&s->cond);
		if (s->wake_cdp)
			cdp_wake(s->wake_cdp);
	}
	pthread_mutex_unlock(&s->lock);
	return rc;
}

void act_session_set_profile_end(struct act_session *s, int save)
{
	pthread_mutex_lock(&s->lock);
	s->profile_save_at_end = save;
	pthread_mutex_unlock(&s->lock);
}

void act_session_cancel(struct act_session *s, struct act_call *call)
{
	pthread_mutex_lock(&s->lock);
	atomic_store(&call->cancelled, 1);
	if (s->running == call) {
		atomic_store(&s->cancel_flag, 1);
		if (s->wake_cdp)
			cdp_wake(s->wake_cdp);
	}
	pthread_mutex_unlock(&s->lock);
}

/* One call in flight and its completion (act_session_run). */
struct waiter {
	pthread_mutex_t lock;
	pthread_cond_t cond;
	int done;
	json_t *result;
};

/* The worker's completion: hands result (taken) to the waiter. */
static void waiter_done(struct act_call *call, json_t *result)
{
	struct waiter *w = call->user;

	pthread_mutex_lock(&w->lock);
	w->result = result;
	w->done = 1;
	pthread_cond_signal(&w->cond);
	pthread_mutex_unlock(&w->lock);
}

json_t *act_session_run(struct act_session *s, struct act_call *call)
{
	struct waiter w;

	memset(&w, 0, sizeof(w));
	pthread_mutex_init(&w.lock, NULL);
	pthread_cond_init(&w.cond, NULL);
	call->on_done = waiter_done;
	call->user = &w;
	if (act_session_submit(s, call) < 0) {
		w.result = json_pack(
		    "{s:[{s:s, s:s}], s:{s:b, s:{s:s, s:s}}, s:b}", "content", "type", "text",
		    "text",
		    "Error: the session refused the call (it is stopping or its queue is full)",
		    "structuredContent", "ok", 0, "error", "code", "internal", "message",
		    "the session refused the call (it is stopping or its queue is full)", "isError",
		    1);
		goto out;
	}
	pthread_mutex_lock(&w.lock);
	while (!w.done)
		pthread_cond_wait(&w.cond, &w.lock);
	pthread_mutex_unlock(&w.lock);
out:
	pthread_mutex_destroy(&w.lock);
	pthread_cond_destroy(&w.cond);
	return w.result;
}

void act_session_free(struct act_session *s)
{
	if (!s)
		return;
	pthread_mutex_lock(&s->lock);
	s->stopping = 1;
	pthread_cond_broadcast(&s->cond);
	if (s->wake_cdp)
		cdp_wake(s->wake_cdp);
	pthread_mutex_unlock(&s->lock);
	pthread_join(s->thread, NULL);
	act_snapshot_forget(&s->refs);
	act_gates_stop(s);
	act_keeper_flush(s->keeper);
	act_keeper_stop(s->keeper);
	act_egress_stop(s);
	evid_audit_close(s->audit);
	evid_store_close(s->store);
	json_decref(s->policy);
	json_decref(s->media);
	json_decref(s->emulation);
	json_decref(s->profile_closed);
	json_decref(s->profile_origins);
	act_secrets_stop(s);
	act_pagelog_free(s->pagelog);
	act_downloads_free(s->downloads);
	act_console_log_free(s->console_log);
	act_cdp_note_free(s);
	policy_tenant_unref(s->tenant_policy);
	free(s->last_snapshot);
	act_takeover_free(s);
	act_snapshot_view_free(&s->view);
	free(s->output_dir);
	free(s->user_agent);
	free(s->grant_permissions);
	pthread_mutex_destroy(&s->lock);
	pthread_cond_destroy(&s->cond);
	pthread_cond_destroy(&s->evidence_cond);
	free(s->data_dir);
	free(s->tenant);
	free(s->chromium_path);
	free(s);
	/* A session's memory was spread over the allocator arenas of its
	 * threads (worker, record keeper, proxy); freed, it stays in those
	 * arenas and in the process's RSS. Give the free pages back to the
	 * system now, so that a long-running service's RSS follows its
	 * sessions (bench/README.md, "Memory returns"). */
	malloc_trim(0);
}

int act_browser_check(const struct act_config *cfg, char *version, size_t vlen, char *err,
                      size_t errlen)
{
	struct sess_options opt = { 0 };
	char run_dir[4096];
	struct sess *sess = NULL;

	snprintf(run_dir, sizeof(run_dir), "%s/run", cfg->data_dir);
	opt.run_dir = run_dir;
	opt.chromium_path = cfg->chromium_path;
	opt.headed = !cfg->headless;
	if (sess_launch(&opt, &sess, err, errlen) < 0)
		return -1;
	snprintf(version, vlen, "%s", sess_browser_version(sess));
	sess_close(sess);
	return 0;
}

/* A file of the tenant's upload area, by name (its hash checked). */
static int read_upload(struct act_session *s, const char *name, unsigned char **data, size_t *len,
                       char *mime, size_t mime_len, char *err, size_t errlen)
{
	struct evid_upload u;

	if (evid_upload_find(s->store, s->tenant, name, &u, err, errlen) < 0 ||
	    evid_upload_read(s->store, s->tenant, &u, data, len, err, errlen) < 0)
		return -1;
	snprintf(mime, mime_len, "%s", u.mime);
	return 0;
}

json_t *act_session_list_uploads(struct act_session *s)
{
	json_t *list = evid_upload_list(s->store, s->tenant);
	json_t *out = json_array();
	json_t *e;
	size_t i;

	json_array_foreach(list, i, e)
	{
		const char *name = json_string_value(json_object_get(e, "name"));
		char uri[128];

		snprintf(uri, sizeof(uri), "%s%s", ACT_UPLOAD_URI_PREFIX, name);
		json_array_append_new(
		    out,
		    json_pack("{s:s, s:s, s:s, s:O, s:O, s:s}", "uri", uri, "name", name,
		              "mimeType", json_string_value(json_object_get(e, "mime")), "size",
		              json_object_get(e, "size"), "sha256", json_object_get(e, "sha256"),
		              "description",
		              "a file of the upload area: pass its uri (or name) in the paths of "
		              "browser_file_upload or browser_drop"));
	}
	json_decref(list);
	return out;
}

/* Waits (bounded by the action timeout) while the worker still takes
 * the screenshot of operation op after its answer. */
static void wait_evidence_queued(struct act_session *s, const char *op)
{
	struct timespec until;

	clock_gettime(CLOCK_REALTIME, &until);
	until.tv_sec += s->action_timeout_ms / 1000 + 1;
	pthread_mutex_lock(&s->lock);
	while (!strcmp(s->deferred_op, op) &&
	       pthread_cond_timedwait(&s->evidence_cond, &s->lock, &until) == 0)
		;
	pthread_mutex_unlock(&s->lock);
}

int act_session_read_artifact(struct act_session *s, const char *uri, unsigned char **data,
                              size_t *len, char *mime, size_t mime_len, char *err, size_t errlen)
{
	static const char prefix[] = "glassbox://artifact/";
	static const char by_op[] = "glassbox://evidence/";
	char op_sha[65];
	const char *sha;
	int rc;

	if (!strncmp(uri, ACT_UPLOAD_URI_PREFIX, strlen(ACT_UPLOAD_URI_PREFIX)))
		return read_upload(s, uri + strlen(ACT_UPLOAD_URI_PREFIX), data, len, mime,
		                   mime_len, err, errlen);
	act_keeper_flush(s->keeper); /* it may still be on its way to disk */
	if (!strncmp(uri, by_op, sizeof(by_op) - 1)) {
		/* an operation's screenshot, linked before it was taken */
		const char *op = uri + sizeof(by_op) - 1;
		const char *slash = strchr(op, '/');
		char id[80];

		if (!slash || strcmp(slash, "/screenshot") != 0 ||
		    (size_t)(slash - op) >= sizeof(id)) {
			snprintf(err, errlen,
			         "unknown resource %.200s: an operation's evidence is "
			         "glassbox://evidence/<operation_id>/screenshot",
			         uri);
			return -1;
		}
		snprintf(id, sizeof(id), "%.*s", (int)(slash - op), op);
		wait_evidence_queued(s, id);
		act_keeper_flush(s->keeper);
		rc = evid_store_find_by_operation(s->store, s->tenant, id, "screenshot", op_sha);
		if (rc < 0) {
			snprintf(err, errlen, "operation %s has no screenshot: %s", id,
			         rc == -EVID_ENOENT ? "it was not taken or not kept (the answer "
			                              "after it said why)"
			                            : evid_strerror(rc));
			return -1;
		}
		sha = op_sha;
		goto read;
	}
	if (strncmp(uri, prefix, sizeof(prefix) - 1) != 0) {
		snprintf(err, errlen,
		         "unknown resource %.200s: evidence URIs look like "
		         "glassbox://artifact/<sha256>, files of the upload area "
		         "glassbox://upload/<name>",
		         uri);
		return -1;
	}
	sha = uri + sizeof(prefix) - 1;
	if (strlen(sha) != 64 || strspn(sha, "0123456789abcdef") != 64) {
		snprintf(err, errlen, "malformed artifact id in %.200s: expected 64 hex digits",
		         uri);
		return -1;
	}
read:
	rc = evid_store_get(s->store, s->tenant, sha, data, len, mime, mime_len);
	if (rc < 0) {
		snprintf(err, errlen, "artifact %s: %s", sha, evid_strerror(rc));
		return -1;
	}
	return 0;
}

/*
 * shared_browser.c - isolation "context": the sessions of one tenant
 * share one browser, each in a browser context of its own.
 *
 * A tenant whose policy says "isolation": "context" has one entry here
 * per launch configuration (Chromium, headless mode, viewport, User-Agent,
 * network namespace or not) while it
 * has sessions: its network namespace (egress layer 4, where the machine
 * allows: every session's proxy listens in it), a proxy that refuses
 * everything (the browser's own traffic outside any session's context
 * goes there), and the browser (sessions/host.c), launched by the first
 * session that needs one and again after it died. Each session keeps its
 * own proxy (its context's proxyServer), Fetch interception, download
 * area, evidence and audit trail: only the browser process is shared.
 * Sessions of different tenants never share an entry, so never a browser.
 *
 * The entry goes with its last session (act_shared_release), and the
 * browser with it once that session's context is closed; or, when a
 * linger is set (act_shared_set_linger_ms: glassbox serve's
 * limits.shared_browser_linger_s), it stays that long unused, so the
 * tenant's next session joins the running browser, and the reaper thread
 * ends it once the linger has passed with no session (act_shared_stop
 * ends those left at shutdown). Pooled browsers are never used here (a
 * pool's browser has a namespace of its own).
 *
 * Threads: sessions' workers join, act_session_new/free acquire and
 * release, the reaper ends lingering entries; the registry and each
 * entry's browser are guarded by registry_lock and e->lock (in that
 * order).
 */
#include "actions/actions-private.h"

#include "common/log.h"
#include "common/util.h"
#include "policy/egress.h"
#include "sessions/sessions.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define BYPASS_FLAG "--proxy-bypass-list="

struct act_shared {
	struct act_shared *next; /* {registry_lock} */
	char key[4096];          /* tenant and launch configuration */
	int refs;                /* {registry_lock} sessions holding the entry */
	int64_t idle_since_ms;   /* {registry_lock} lingering since (refs 0), or 0 */
	pthread_mutex_t lock;
	struct sess_host *host; /* {lock} the browser, or NULL until one is needed */
	int netns_fd;           /* layer 4: the browser's namespace (owned), or 0 */
	struct policy_egress *deny_all;
	struct policy_proxy *proxy; /* the browser's own traffic: refused */
	struct policy_chromium_flags flags;
	const char *extra[10]; /* the flags' extra, then the User-Agent flag */
	char user_agent_flag[600];
	const char *bypass; /* the proxy bypass list of the flags, or NULL */
};

static pthread_mutex_t registry_lock = PTHREAD_MUTEX_INITIALIZER;
static struct act_shared *registry; /* {registry_lock} */
static pthread_cond_t reaper_cond = PTHREAD_COND_INITIALIZER;
static int64_t linger_ms;   /* {registry_lock} 0: an entry goes with its last session */
static pthread_t reaper;    /* {registry_lock} valid while reaper_running */
static int reaper_running;  /* {registry_lock} */
static int reaper_stopping; /* {registry_lock} act_shared_stop was called */

/* Ends e's browser (drops the entry's reference), its proxy and its
 * namespace, and frees e. NULL is a no-op. */
static void shared_free(struct act_shared *e)
{
	if (!e)
		return;
	sess_host_unref(e->host);
	policy_proxy_stop(e->proxy);
	policy_egress_free(e->deny_all);
	if (e->netns_fd > 0)
		close(e->netns_fd);
	pthread_mutex_destroy(&e->lock);
	free(e);
}

/* A new entry with its namespace (when the session has layer 4) and its
 * refuse-all proxy (listening in that namespace). Returns NULL with err. */
static struct act_shared *shared_new(const struct act_session *as, const char *key, char *err,
                                     size_t errlen)
{
	struct policy_proxy_options po = { .session_id = "shared-browser" };
	json_t *deny = json_pack("{s:[s]}", "deny", "*");
	struct act_shared *e = calloc(1, sizeof(*e));
	char perr[512];
	size_t i;
	int ok = 0;

	if (!e) {
		snprintf(err, errlen, "out of memory");
		goto out;
	}
	pthread_mutex_init(&e->lock, NULL);
	snprintf(e->key, sizeof(e->key), "%s", key);
	if (as->layer_netns && policy_netns_create(&e->netns_fd, perr, sizeof(perr)) < 0) {
		e->netns_fd = 0;
		snprintf(err, errlen, "cannot isolate the shared browser (egress layer 4): %s",
		         perr);
		goto out;
	}
	if (e->netns_fd > 0 &&
	    policy_proxy_listen_in_netns(e->netns_fd, "127.0.0.1", 0, &po.listen_fd, perr,
	                                 sizeof(perr)) < 0) {
		snprintf(err, errlen, "cannot isolate the shared browser (egress layer 4): %s",
		         perr);
		goto out;
	}
	if (policy_egress_parse(deny, &e->deny_all, perr, sizeof(perr)) < 0 ||
	    policy_proxy_start(e->deny_all, &po, &e->proxy, perr, sizeof(perr)) < 0) {
		snprintf(err, errlen, "cannot start the shared browser's refuse-all proxy: %s",
		         perr);
		goto out;
	}
	policy_proxy_chromium_flags(e->proxy, &e->flags);
	for (i = 0; i < sizeof(e->extra) / sizeof(e->extra[0]) - 2 && e->flags.extra[i]; i++) {
		e->extra[i] = e->flags.extra[i];
		if (!strncmp(e->extra[i], BYPASS_FLAG, strlen(BYPASS_FLAG)))
			e->bypass = e->extra[i] + strlen(BYPASS_FLAG);
	}
	if (as->user_agent) { /* a launch flag: part of the entry's key */
		snprintf(e->user_agent_flag, sizeof(e->user_agent_flag), "--user-agent=%s",
		         as->user_agent);
		e->extra[i] = e->user_agent_flag;
	}
	ok = 1;
out:
	json_decref(deny);
	if (!ok) {
		shared_free(e);
		e = NULL;
	}
	return e;
}

int act_shared_acquire(struct act_session *as, char *err, size_t errlen)
{
	struct act_shared *e;
	char key[4096];
	int rc = -1;

	if (as->limits.memory_bytes || as->limits.cpu_percent) {
		snprintf(err, errlen,
		         "browser limits cannot be kept with \"isolation\": \"context\" (its "
		         "sessions share one browser, and a limit ends a browser): use "
		         "\"isolation\": \"process\", or no limits");
		return -1;
	}
	snprintf(key, sizeof(key), "%s\n%s\n%d\n%dx%d\n%d\n%s\n%d", as->tenant,
	         as->chromium_path ? as->chromium_path : "", as->headless, as->viewport_width,
	         as->viewport_height, as->layer_netns, as->user_agent ? as->user_agent : "",
	         as->chromium_sandbox_off);
	pthread_mutex_lock(&registry_lock);
	for (e = registry; e; e = e->next)
		if (!strcmp(e->key, key))
			break;
	if (!e) {
		e = shared_new(as, key, err, errlen);
		if (!e)
			goto out;
		e->next = registry;
		registry = e;
	}
	e->refs++;
	e->idle_since_ms = 0; /* a lingering browser is in use again */
	as->shared = e;
	if (e->netns_fd > 0) {
		/* the session's proxy listens in the shared browser's namespace */
		as->netns_fd = dup(e->netns_fd);
		if (as->netns_fd < 0) {
			as->netns_fd = 0;
			snprintf(err, errlen,
			         "cannot share the browser's network namespace: out of "
			         "file descriptors");
			goto out;
		}
	}
	rc = 0;
out:
	pthread_mutex_unlock(&registry_lock);
	return rc;
}

/* Takes e out of the registry. Called with registry_lock held. */
static void unlink_locked(struct act_shared *e)
{
	struct act_shared **pp;

	for (pp = &registry; *pp; pp = &(*pp)->next)
		if (*pp == e) {
			*pp = e->next;
			return;
		}
}

/* The reaper: ends the entries that lingered linger_ms unused, then sleeps
 * until the next one is due (or act_shared_stop). */
static void *reaper_main(void *arg)
{
	struct act_shared *e, *next, *gone;
	struct timespec until;
	int64_t now, due;
	int freed;

	(void)arg;
	pthread_mutex_lock(&registry_lock);
	while (!reaper_stopping) {
		gone = NULL;
		due = 0;
		now = gb_now_ms();
		for (e = registry; e; e = next) {
			next = e->next;
			if (e->refs > 0 || !e->idle_since_ms)
				continue;
			if (now - e->idle_since_ms >= linger_ms) {
				unlink_locked(e);
				e->next = gone;
				gone = e;
			} else if (!due || e->idle_since_ms + linger_ms < due) {
				due = e->idle_since_ms + linger_ms;
			}
		}
		pthread_mutex_unlock(&registry_lock);
		freed = gone != NULL;
		for (e = gone; e; e = next) {
			next = e->next;
			GB_LOGI("actions", "a shared browser lingered %lld ms unused: closing it",
			        (long long)linger_ms);
			shared_free(e);
		}
		pthread_mutex_lock(&registry_lock);
		if (reaper_stopping)
			break;
		/* entries released while the lock was let go (their signal came
		 * when no one waited) are not in `due`: look again before waiting */
		if (freed)
			continue;
		clock_gettime(CLOCK_REALTIME, &until);
		if (due) {
			int64_t wait_ms = due - gb_now_ms() + 1;

			if (wait_ms < 1)
				wait_ms = 1;
			until.tv_sec += (time_t)(wait_ms / 1000);
			until.tv_nsec += (long)(wait_ms % 1000) * 1000000L;
			if (until.tv_nsec >= 1000000000L) {
				until.tv_sec++;
				until.tv_nsec -= 1000000000L;
			}
			pthread_cond_timedwait(&reaper_cond, &registry_lock, &until);
		} else {
			pthread_cond_wait(&reaper_cond, &registry_lock);
		}
	}
	pthread_mutex_unlock(&registry_lock);
	return NULL;
}

void act_shared_set_linger_ms(int64_t ms)
{
	pthread_mutex_lock(&registry_lock);
	linger_ms = ms > 0 ? ms : 0;
	pthread_mutex_unlock(&registry_lock);
}

void act_shared_release(struct act_session *as)
{
	struct act_shared *e = as->shared;

	if (!e)
		return;
	as->shared = NULL;
	pthread_mutex_lock(&registry_lock);
	if (--e->refs > 0) {
		pthread_mutex_unlock(&registry_lock);
		return;
	}
	if (linger_ms > 0 && !reaper_stopping &&
	    (reaper_running || pthread_create(&reaper, NULL, reaper_main, NULL) == 0)) {
		/* the browser stays for the tenant's next session */
		reaper_running = 1;
		e->idle_since_ms = gb_now_ms();
		pthread_cond_signal(&reaper_cond);
		pthread_mutex_unlock(&registry_lock);
		return;
	}
	unlink_locked(e);
	pthread_mutex_unlock(&registry_lock);
	shared_free(e);
}

void act_shared_stop(void)
{
	struct act_shared *e, *next, *gone = NULL;
	int join;

	pthread_mutex_lock(&registry_lock);
	reaper_stopping = 1;
	join = reaper_running;
	reaper_running = 0;
	pthread_cond_signal(&reaper_cond);
	pthread_mutex_unlock(&registry_lock);
	if (join)
		pthread_join(reaper, NULL);
	pthread_mutex_lock(&registry_lock);
	for (e = registry; e; e = next) {
		next = e->next;
		if (e->refs > 0)
			continue;
		unlink_locked(e);
		e->next = gone;
		gone = e;
	}
	pthread_mutex_unlock(&registry_lock);
	for (e = gone; e; e = next) {
		next = e->next;
		shared_free(e);
	}
}

/* The entry's browser, launched (again) when there is none or it died.
 * Called with e->lock held. Returns it, or NULL with err. */
static struct sess_host *live_host_locked(struct act_shared *e, struct act_session *as, char *err,
                                          size_t errlen)
{
	struct sess_options opt = { 0 };
	char why[64];

	if (e->host && sess_host_exited(e->host, why, sizeof(why))) {
		GB_LOGW("actions",
		        "the shared browser of tenant %s exited (%s): a new one starts for the "
		        "next session",
		        as->tenant, why);
		sess_host_unref(e->host);
		e->host = NULL;
	}
	if (e->host)
		return e->host;
	opt.chromium_path = as->chromium_path;
	opt.run_dir = as->run_dir;
	opt.headed = !as->headless;
	opt.chromium_sandbox_off = as->chromium_sandbox_off;
	opt.viewport_width = as->viewport_width;
	opt.viewport_height = as->viewport_height;
	opt.cancel_flag = &as->cancel_flag;
	opt.netns_fd = e->netns_fd;
	opt.proxy_server = e->flags.proxy_server;
	opt.host_resolver_rules = e->flags.host_resolver_rules;
	opt.extra_args = e->extra;
	if (sess_host_launch(&opt, &e->host, err, errlen) < 0)
		e->host = NULL;
	return e->host;
}

int act_shared_join(struct act_session *as, const struct sess_options *opt, struct sess **out,
                    char *err, size_t errlen)
{
	struct act_shared *e = as->shared;
	struct sess_join_options ao = { 0 };
	struct sess_host *h;
	char herr[512];
	int rc = -1;

	*out = NULL;
	if (!as->proxy) {
		/* the context's proxy is the session's: without it the shared
		 * browser's refuse-all proxy would pass for the session's egress */
		snprintf(err, errlen,
		         "\"isolation\": \"context\" needs the egress proxy (egress layer "
		         "\"proxy\"): turn it back on or use \"isolation\": \"process\"");
		return -1;
	}
	pthread_mutex_lock(&e->lock);
	h = live_host_locked(e, as, herr, sizeof(herr));
	if (!h) {
		pthread_mutex_unlock(&e->lock);
		snprintf(err, errlen, "cannot start the tenant's shared browser: %s", herr);
		return -1;
	}
	ao.proxy_server = opt->proxy_server;
	ao.proxy_bypass_list = e->bypass;
	ao.on_target = opt->on_target;
	ao.on_target_user = opt->on_target_user;
	ao.timeout_ms = as->action_timeout_ms;
	if (as->profile) {
		ao.prepare = act_context_profile_load;
		ao.prepare_user = as;
	}
	/* joined under the lock: a browser that dies meanwhile is replaced
	 * once, not by every session at the same time */
	rc = sess_host_join(h, &ao, &as->cancel_flag, out, err, errlen);
	pthread_mutex_unlock(&e->lock);
	return rc;
}

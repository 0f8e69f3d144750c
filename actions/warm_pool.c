/*
 * warm_pool.c - browsers launched ahead of the sessions that will use
 * them, so a new session's first action does not wait for Chromium.
 *
 * What can be pooled: a browser's launch flags are fixed at launch, and a
 * session's egress layers need two things from them (actions/egress.c):
 * no local DNS (--host-resolver-rules) and its own proxy (--proxy-server,
 * a port per session). The first, with the other egress flags (WebRTC,
 * QUIC, bypass list), depends on no policy; the second does. So pooled
 * browsers are launched with the policy-independent flags and a proxy
 * that refuses everything (an egress policy denying "*"), and Fetch
 * interception armed on every target (a request waits, unanswered, for a
 * session to decide on it).
 *
 * Readied ahead (pool_prepare, on the pool's thread): each pooled browser
 * gets a listening socket for the proxy of the session that will take it
 * (on loopback; with layer 4 inside the browser's namespace) and a fresh
 * browser context whose proxy is that socket's address, with its first
 * tab open, attached and Fetch armed (sess_prepare_context); its blank tab
 * in the default context is closed. A browser whose readying fails is
 * closed, never handed out. What cannot be known in advance is bound when
 * a session takes the browser, before any of its requests can leave: the
 * session takes it when it is created (act_pool_hold), before its proxy
 * starts, and the proxy (with the tenant's rules, the session's refusals)
 * then listens on that very socket; the session's worker adopts it as soon
 * as it starts (act_pool_take, from act_launch_browser: the session's
 * target hook, its Fetch handler, the DevTools port refused, the limits,
 * downloads pointed at the session's area). A session
 * takes a pooled browser only when its launch options equal the pool's
 * but for the proxy (same Chromium, headless mode, viewport, resolver
 * rules and extra flags) and its proxy layer is on (a drill with the
 * Fetch layer off gets the readied tab's interception turned off); else,
 * or when the pool is empty, it launches its own as before. Sessions with a
 * browser profile must launch their own (the context is in-memory).
 *
 * Egress layer 4: where the process can make network namespaces, each
 * pooled browser is launched, and its DevTools port connected to, in a
 * fresh namespace of its own (hooks.netns_new, policy_netns_create), as a
 * session's own browser is. The session that holds it takes that
 * namespace too, which becomes the session's own: a browser relaunched
 * after a crash or a limit kill starts there, where the proxy listens. A
 * session never takes a browser later than its creation (its proxy
 * listens on its own socket by then), and one without layer 4 never takes
 * a browser from a pool that has it.
 *
 * Threads: the pool's own thread launches and readies (sessions/pool.c);
 * the thread in act_session_new holds and the session's worker (started
 * after) adopts; everything here is immutable after act_pool_start.
 */
#include "actions/actions-private.h"

#include "cdp/cdp.h"
#include "common/log.h"
#include "policy/egress.h"
#include "sessions/sessions.h"

#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#define BYPASS_FLAG "--proxy-bypass-list="
#define POOL_PREPARE_TIMEOUT_MS 30000

struct act_pool {
	struct sess_pool *sp;
	struct policy_egress *deny_all;
	struct policy_proxy *proxy;
	struct policy_chromium_flags flags;
	const char *extra[9];
	const char *bypass; /* the --proxy-bypass-list of the flags, for each context */
	char *chromium_path;
	int headless;
	int viewport_width;
	int viewport_height;
	char run_dir[4096];
	size_t size;
	int netns; /* each pooled browser has a network namespace of its own */
};

/* sess_netns_new_fn for the pool's thread: a fresh namespace (layer 4). */
static int pool_netns_new(void *user, int *fd_out, char *err, size_t errlen)
{
	(void)user;
	return policy_netns_create(fd_out, err, errlen) < 0 ? -1 : 0;
}

/* sess_pool_prepare_fn (pool's thread): a listening socket on loopback in
 * the browser's namespace for its future session's proxy, and the
 * browser's context with that proxy and its first tab. */
static int pool_prepare(void *user, struct sess *s, int *proxy_fd, char *err, size_t errlen)
{
	struct act_pool *p = user;
	struct sockaddr_in a;
	socklen_t len = sizeof(a);
	char perr[300], proxy[64];
	int fd = -1;
	int rc = -1;

	*proxy_fd = 0;
	if (policy_proxy_listen_in_netns(sess_netns_fd(s), "127.0.0.1", 0, &fd, perr,
	                                 sizeof(perr)) < 0) {
		snprintf(err, errlen, "no socket for its session's egress proxy: %s", perr);
		goto out;
	}
	if (getsockname(fd, (struct sockaddr *)&a, &len) < 0 || a.sin_family != AF_INET) {
		snprintf(err, errlen, "the socket for its session's egress proxy has no port");
		goto out;
	}
	snprintf(proxy, sizeof(proxy), "http://127.0.0.1:%d", ntohs(a.sin_port));
	if (sess_prepare_context(s, proxy, p->bypass, POOL_PREPARE_TIMEOUT_MS, err, errlen) < 0)
		goto out;
	*proxy_fd = fd;
	fd = -1;
	rc = 0;
out:
	if (fd >= 0)
		close(fd);
	return rc;
}

void act_pool_stop(struct act_pool *p)
{
	if (!p)
		return;
	sess_pool_stop(p->sp);
	policy_proxy_stop(p->proxy);
	policy_egress_free(p->deny_all);
	free(p->chromium_path);
	free(p);
}

int act_pool_start(const struct act_config *cfg, size_t size, struct act_pool **out, char *err,
                   size_t errlen)
{
	struct policy_proxy_options po = { .session_id = "warm-pool" };
	struct sess_pool_hooks hooks = { .prepare = pool_prepare };
	struct sess_options opt = { 0 };
	struct act_pool *p;
	json_t *deny = json_pack("{s:[s]}", "deny", "*");
	char perr[512];
	size_t i;
	int rc = -1;

	*out = NULL;
	if (size == 0) {
		json_decref(deny);
		return 0;
	}
	p = calloc(1, sizeof(*p));
	if (!p || !cfg->data_dir) {
		snprintf(err, errlen, p ? "the warm pool needs a data dir" : "out of memory");
		goto out;
	}
	p->size = size;
	p->chromium_path = cfg->chromium_path ? strdup(cfg->chromium_path) : NULL;
	p->headless = cfg->headless;
	p->viewport_width = cfg->viewport_width > 0 ? cfg->viewport_width : 1280;
	p->viewport_height = cfg->viewport_height > 0 ? cfg->viewport_height : 720;
	snprintf(p->run_dir, sizeof(p->run_dir), "%s/run", cfg->data_dir);
	if (policy_egress_parse(deny, &p->deny_all, perr, sizeof(perr)) < 0 ||
	    policy_proxy_start(p->deny_all, &po, &p->proxy, perr, sizeof(perr)) < 0) {
		snprintf(err, errlen, "cannot start the warm pool's refuse-all proxy: %s", perr);
		goto out;
	}
	policy_proxy_chromium_flags(p->proxy, &p->flags);
	for (i = 0; i < sizeof(p->extra) / sizeof(p->extra[0]) - 1 && p->flags.extra[i]; i++) {
		p->extra[i] = p->flags.extra[i];
		if (!strncmp(p->extra[i], BYPASS_FLAG, strlen(BYPASS_FLAG)))
			p->bypass = p->extra[i] + strlen(BYPASS_FLAG);
	}
	opt.chromium_path = p->chromium_path;
	opt.run_dir = p->run_dir;
	opt.headed = !p->headless;
	opt.viewport_width = p->viewport_width;
	opt.viewport_height = p->viewport_height;
	opt.proxy_server = p->flags.proxy_server;
	opt.host_resolver_rules = p->flags.host_resolver_rules;
	opt.extra_args = p->extra;
	opt.on_target = act_egress_setup_target; /* Fetch armed before any session */
	p->netns = policy_netns_available(NULL, 0);
	hooks.netns_new = p->netns ? pool_netns_new : NULL;
	hooks.user = p;
	if (sess_pool_start_hooks(&opt, size, 0, &hooks, &p->sp) < 0) {
		snprintf(err, errlen, "cannot start the warm pool's thread");
		goto out;
	}
	GB_LOGI("actions", "warm pool: keeping %zu browser(s) ready%s", size,
	        p->netns ? ", each in a network namespace of its own" : "");
	*out = p;
	rc = 0;
out:
	json_decref(deny);
	if (rc < 0)
		act_pool_stop(p);
	return rc;
}

size_t act_pool_ready(struct act_pool *p)
{
	return p ? sess_pool_ready(p->sp) : 0;
}

size_t act_pool_size(struct act_pool *p)
{
	return p ? p->size : 0;
}

static int same_str(const char *a, const char *b)
{
	return (!a && !b) || (a && b && !strcmp(a, b));
}

/* 1 when the session's config (Chromium, headless mode, viewport, egress
 * layers) matches the pool's: what can be known before its proxy starts.
 * The pool's browsers keep Chromium's sandbox as glassbox sets it. */
static int pool_fits_session(const struct act_pool *p, const struct act_session *as)
{
	return as->layer_proxy && !as->chromium_sandbox_off && as->layer_netns == p->netns &&
	       same_str(p->chromium_path, as->chromium_path) && p->headless == as->headless &&
	       p->viewport_width == as->viewport_width && p->viewport_height == as->viewport_height;
}

/* 1 when a browser launched with the pool's options, given opt's proxy
 * on its own context, is what the session would have launched (in the
 * namespace of opt->netns_fd, when the browser is the one it holds). */
static int pool_fits(const struct act_pool *p, const struct act_session *as,
                     const struct sess_options *opt)
{
	size_t i;

	if (!pool_fits_session(p, as) || !as->proxy || !opt->proxy_server || opt->user_data_dir ||
	    !same_str(p->flags.host_resolver_rules, opt->host_resolver_rules))
		return 0;
	for (i = 0; p->extra[i] || (opt->extra_args && opt->extra_args[i]); i++)
		if (!opt->extra_args || !same_str(p->extra[i], opt->extra_args[i]))
			return 0;
	return 1;
}

int act_pool_hold(struct act_session *as, int *listen_fd)
{
	struct act_pool *p = as->pool;
	struct sess *s;
	int lfd, nfd = 0;

	if (!p || as->pool_held || !pool_fits_session(p, as))
		return 0;
	s = sess_pool_take(p->sp, &as->cancel_flag, 0);
	if (!s)
		return 0;
	lfd = sess_take_proxy_fd(s);
	if (p->netns)
		nfd = sess_take_netns(s);
	if (lfd <= 0 || (p->netns && nfd <= 0)) {
		/* the pool readies none without them */
		GB_LOGW("actions",
		        "a pre-launched browser was not readied for a session: closing it");
		if (lfd > 0)
			close(lfd);
		if (nfd > 0)
			close(nfd);
		sess_close(s);
		return 0;
	}
	as->pool_held = s;
	if (p->netns)
		as->netns_fd = nfd;
	*listen_fd = lfd;
	return 1;
}

void act_pool_drop_held(struct act_session *as)
{
	sess_close(as->pool_held);
	as->pool_held = NULL;
}

struct sess *act_pool_take(struct act_session *as, const struct sess_options *opt)
{
	struct act_pool *p = as->pool;
	struct sess_adopt_options ao = { 0 };
	struct sess *s = as->pool_held;
	struct cdp_error cerr;
	char err[512];

	as->pool_held = NULL;
	if (!p || !s)
		return NULL;
	/* the context's proxy must be the session's own, which listens on
	 * the socket readied with it */
	if (!pool_fits(p, as, opt) || strcmp(sess_context_proxy(s), opt->proxy_server) != 0) {
		GB_LOGW("actions", "the held pre-launched browser does not fit the session's "
		                   "launch options: launching one instead");
		sess_close(s);
		return NULL;
	}
	ao.on_target = opt->on_target;
	ao.on_target_user = opt->on_target_user;
	ao.timeout_ms = as->action_timeout_ms;
	if (sess_adopt(s, &ao, err, sizeof(err)) < 0) {
		GB_LOGW("actions",
		        "a pre-launched browser could not be adopted (launching one "
		        "instead): %s",
		        err);
		sess_close(s);
		return NULL;
	}
	/* a drill with the Fetch layer off: the readied tab's interception
	 * goes (the session's later targets get none) */
	if (!as->layer_fetch && cdp_call(sess_cdp(s), sess_page_session_id(sess_current_page(s)),
	                                 "Fetch.disable", NULL, ao.timeout_ms, NULL, &cerr) < 0) {
		GB_LOGW("actions",
		        "a pre-launched browser could not be adopted (launching one "
		        "instead): cannot turn its Fetch layer off: %s",
		        cerr.message);
		sess_close(s);
		return NULL;
	}
	return s;
}

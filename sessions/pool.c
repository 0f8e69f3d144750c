/*
 * pool.c - a warm pool of pre-launched browsers, so that a new session's
 * first action does not wait for Chromium to start.
 *
 * Design: one pool thread keeps up to `size` READY sessions, launching
 * one at a time in the background. sess_pool_take() hands a ready session
 * to the caller's thread, which becomes its only driver (the pool thread
 * never touches a session after handing it over), and wakes the pool
 * thread to launch a replacement. Pooled browsers are launched with the
 * pool's options, which can hold nothing of a session's policy: a session
 * that takes one makes it its own with sess_adopt() (its setup hook, on
 * the browser context readied for it), and a session that needs other
 * launch flags or a profile launches its own. Sessions found dead in the
 * pool are closed and replaced.
 *
 * Readied ahead (hooks.prepare): a browser is ready only once its caller's
 * prepare hook readied it (a browser context for its future session, a
 * listening socket for that session's proxy, kept in s->proxy_fd until
 * sess_take_proxy_fd); one whose preparation fails is closed, never handed
 * out half-ready, and counts as a failed launch.
 *
 * Network namespaces (egress layer 4): a pool started with
 * hooks.netns_new gets a fresh namespace from it for each launch and
 * launches the browser inside it, exactly as sess_launch does for a
 * session's own namespace; the pooled session owns that fd (closed with
 * it) until sess_take_netns() hands it to the session that takes the
 * browser. sessions/ only holds the fd: making a namespace is policy/'s
 * job, reached through the callback.
 *
 * A replacement is launched only after a quiet moment (POOL_REFILL_QUIET_MS
 * since the last take), unless a taker is waiting: on a small machine a
 * launch takes much of the CPU the session that just took a browser needs
 * for its first navigation.
 */
#include "sessions/sessions-private.h"

#include "cdp/cdp.h"
#include "common/log.h"
#include "common/util.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

struct sess_pool {
	pthread_t thread;
	pthread_mutex_t lock;
	pthread_cond_t cond;
	struct sess_options opt; /* immutable after start */
	char *run_dir;
	char *chromium_path;
	char *host_resolver_rules;
	char *proxy_server;
	char **extra_args;   /* NULL-terminated copy */
	struct sess **ready; /* {lock} */
	size_t n_ready;      /* {lock} */
	size_t size;
	unsigned max_launches;        /* 0: refill forever */
	int stopping;                 /* {lock} */
	atomic_int cancel;            /* raised on stop to abort a launch */
	unsigned launched;            /* {lock} */
	unsigned failures;            /* {lock} consecutive launch failures */
	int64_t last_take_ms;         /* {lock} when a browser was last taken */
	unsigned waiters;             /* {lock} takers waiting for a launch */
	struct sess_pool_hooks hooks; /* immutable */
};

/* Launches one browser with the pool's options, in a namespace of its own
 * when the pool makes them (the session then owns that fd), and readies it
 * with the prepare hook; on any failure nothing is left. Pool thread. */
static int pool_launch(struct sess_pool *p, struct sess **out, char *err, size_t errlen)
{
	struct sess_options opt = p->opt;
	char why[400];
	int fd = 0;
	int rc;

	if (p->hooks.netns_new) {
		if (p->hooks.netns_new(p->hooks.user, &fd, err, errlen) < 0)
			return -1;
		opt.netns_fd = fd;
	}
	rc = sess_launch(&opt, out, err, errlen);
	if (rc < 0) {
		if (fd > 0)
			close(fd);
		return rc;
	}
	(*out)->netns_fd = fd;
	if (p->hooks.prepare &&
	    p->hooks.prepare(p->hooks.user, *out, &(*out)->proxy_fd, why, sizeof(why)) < 0) {
		snprintf(err, errlen, "a pre-launched browser could not be readied (closed): %s",
		         why);
		sess_close(*out);
		*out = NULL;
		return -1;
	}
	return 0;
}

#define POOL_REFILL_QUIET_MS 1500

/* Waits, lock held, until POOL_REFILL_QUIET_MS passed since the last take,
 * a taker waits, or the pool stops. */
static void wait_quiet(struct sess_pool *p)
{
	int64_t left;

	while (!p->stopping && !p->waiters &&
	       (left = p->last_take_ms + POOL_REFILL_QUIET_MS - gb_now_ms()) > 0) {
		struct timespec until = gb_deadline_in(CLOCK_REALTIME, (int)left);

		pthread_cond_timedwait(&p->cond, &p->lock, &until);
	}
}

static void *pool_main(void *arg)
{
	struct sess_pool *p = arg;
	char err[512];

	pthread_mutex_lock(&p->lock);
	for (;;) {
		struct sess *s = NULL;
		int rc;

		while (!p->stopping && (p->n_ready >= p->size ||
		                        (p->max_launches && p->launched >= p->max_launches)))
			pthread_cond_wait(&p->cond, &p->lock);
		wait_quiet(p);
		if (p->stopping)
			break;
		pthread_mutex_unlock(&p->lock);
		rc = pool_launch(p, &s, err, sizeof(err));
		if (rc == 0)
			cdp_set_cancel_flag(sess_cdp(s), NULL);
		pthread_mutex_lock(&p->lock);
		if (rc < 0) {
			GB_LOGW("sessions", "warm pool: %s", err);
			/* back off so a broken setup does not spin */
			if (++p->failures >= 3)
				break;
			continue;
		}
		p->failures = 0;
		p->launched++;
		if (p->stopping) {
			pthread_mutex_unlock(&p->lock);
			sess_close(s);
			pthread_mutex_lock(&p->lock);
			break;
		}
		p->ready[p->n_ready++] = s;
		pthread_cond_broadcast(&p->cond);
	}
	/* a taker waiting for a launch learns that none will come */
	pthread_cond_broadcast(&p->cond);
	pthread_mutex_unlock(&p->lock);
	return NULL;
}

static void free_args(char **args)
{
	size_t i;

	for (i = 0; args && args[i]; i++)
		free(args[i]);
	free(args);
}

/* A NULL-terminated copy of args (NULL for NULL). */
static char **copy_args(const char *const *args)
{
	size_t n = 0, i;
	char **out;

	if (!args)
		return NULL;
	while (args[n])
		n++;
	out = calloc(n + 1, sizeof(*out));
	for (i = 0; out && i < n; i++)
		out[i] = strdup(args[i]);
	return out;
}

int sess_pool_start_hooks(const struct sess_options *opt, size_t size, unsigned max_launches,
                          const struct sess_pool_hooks *hooks, struct sess_pool **out)
{
	struct sess_pool *p;

	*out = NULL;
	if (size == 0)
		return 0;
	p = calloc(1, sizeof(*p));
	if (!p)
		return -1;
	p->ready = calloc(size, sizeof(*p->ready));
	p->run_dir = strdup(opt->run_dir);
	p->chromium_path = opt->chromium_path ? strdup(opt->chromium_path) : NULL;
	p->host_resolver_rules = opt->host_resolver_rules ? strdup(opt->host_resolver_rules) : NULL;
	p->opt = *opt;
	p->opt.run_dir = p->run_dir;
	p->opt.chromium_path = p->chromium_path;
	p->opt.host_resolver_rules = p->host_resolver_rules;
	p->proxy_server = opt->proxy_server ? strdup(opt->proxy_server) : NULL;
	p->opt.proxy_server = p->proxy_server;
	p->extra_args = copy_args(opt->extra_args);
	p->opt.extra_args = (const char *const *)p->extra_args;
	p->opt.cancel_flag = &p->cancel;
	p->size = size;
	p->max_launches = max_launches;
	if (hooks)
		p->hooks = *hooks;
	pthread_mutex_init(&p->lock, NULL);
	pthread_cond_init(&p->cond, NULL);
	if (!p->ready || pthread_create(&p->thread, NULL, pool_main, p) != 0) {
		free(p->ready);
		free(p->run_dir);
		free(p->chromium_path);
		free(p->host_resolver_rules);
		free(p->proxy_server);
		free_args(p->extra_args);
		free(p);
		return -1;
	}
	*out = p;
	return 0;
}

int sess_pool_start(const struct sess_options *opt, size_t size, unsigned max_launches,
                    struct sess_pool **out)
{
	return sess_pool_start_hooks(opt, size, max_launches, NULL, out);
}

int sess_pool_start_in_netns(const struct sess_options *opt, size_t size, unsigned max_launches,
                             sess_netns_new_fn netns_new, void *user, struct sess_pool **out)
{
	struct sess_pool_hooks hooks = { .netns_new = netns_new, .user = user };

	if (!netns_new) {
		*out = NULL;
		return -1;
	}
	return sess_pool_start_hooks(opt, size, max_launches, &hooks, out);
}

int sess_take_netns(struct sess *s)
{
	int fd;

	if (!s)
		return 0;
	fd = s->netns_fd;
	s->netns_fd = 0;
	return fd;
}

int sess_netns_fd(const struct sess *s)
{
	return s ? s->netns_fd : 0;
}

int sess_take_proxy_fd(struct sess *s)
{
	int fd;

	if (!s)
		return 0;
	fd = s->proxy_fd;
	s->proxy_fd = 0;
	return fd;
}

struct sess *sess_pool_take(struct sess_pool *p, const atomic_int *cancel_flag, int wait_ms)
{
	struct sess *s = NULL;
	struct timespec until;
	int rc;

	if (!p)
		return NULL;
	until = gb_deadline_in(CLOCK_REALTIME, wait_ms > 0 ? wait_ms : 0);
	pthread_mutex_lock(&p->lock);
	for (;;) {
		while (p->n_ready > 0 && !s) {
			s = p->ready[--p->n_ready];
			if (sess_check_alive(s) < 0) {
				pthread_mutex_unlock(&p->lock);
				sess_close(s);
				pthread_mutex_lock(&p->lock);
				s = NULL;
			}
		}
		/* a launch in progress finishes sooner than a new one */
		if (s || wait_ms <= 0 || p->stopping || p->failures >= 3 ||
		    (p->max_launches && p->launched >= p->max_launches && !p->n_ready))
			break;
		p->waiters++;
		pthread_cond_broadcast(&p->cond); /* the pool thread skips its quiet wait */
		rc = pthread_cond_timedwait(&p->cond, &p->lock, &until);
		p->waiters--;
		if (rc != 0)
			break;
	}
	if (s)
		p->last_take_ms = gb_now_ms();
	pthread_cond_broadcast(&p->cond);
	pthread_mutex_unlock(&p->lock);
	if (s)
		cdp_set_cancel_flag(sess_cdp(s), cancel_flag);
	return s;
}

void sess_pool_stop(struct sess_pool *p)
{
	size_t i;

	if (!p)
		return;
	pthread_mutex_lock(&p->lock);
	p->stopping = 1;
	atomic_store(&p->cancel, 1);
	pthread_cond_broadcast(&p->cond);
	pthread_mutex_unlock(&p->lock);
	pthread_join(p->thread, NULL);
	for (i = 0; i < p->n_ready; i++)
		sess_close(p->ready[i]);
	pthread_mutex_destroy(&p->lock);
	pthread_cond_destroy(&p->cond);
	free(p->ready);
	free(p->run_dir);
	free(p->chromium_path);
	free(p->host_resolver_rules);
	free(p->proxy_server);
	free_args(p->extra_args);
	free(p);
}

size_t sess_pool_ready(struct sess_pool *p)
{
	size_t n;

	if (!p)
		return 0;
	pthread_mutex_lock(&p->lock);
	n = p->n_ready;
	pthread_mutex_unlock(&p->lock);
	return n;
}

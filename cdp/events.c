/*
 * events.c - events routed by CDP sessionId and method: listeners
 * (cdp_on/cdp_off) and one-shot waiters armed before the command that
 * triggers them (cdp_arm/cdp_wait_event/cdp_disarm).
 *
 * Filters: a NULL session_id matches any session, "" only the browser
 * session (messages without "sessionId"), anything else that exact
 * sessionId; a NULL method matches any method.
 */
#include "cdp/cdp-private.h"

#include "common/log.h"

#include <stdlib.h>
#include <string.h>

static int cdp_filter_matches(const char *want_session, const char *want_method,
                              const char *session_id, const char *method)
{
	return (!want_session || !strcmp(want_session, session_id)) &&
	       (!want_method || !strcmp(want_method, method));
}

/* strdup that keeps NULL as NULL; *ok becomes 0 when memory ran out. */
static char *cdp_dup_filter(const char *s, int *ok)
{
	char *d = NULL;

	if (s) {
		d = strdup(s);
		if (!d)
			*ok = 0;
	}
	return d;
}

/* Adds a listener; see cdp.h. Returns its handle (> 0), -CDP_EINVAL or
 * -CDP_ENOMEM (also past CDP_MAX_LISTENERS). */
int cdp_on(struct cdp_conn *c, const char *session_id, const char *method, cdp_event_fn fn,
           void *user)
{
	struct cdp_listener *l = NULL;
	struct cdp_listener **tail;
	int count = 0;
	int ok = 1;
	int rc;

	if (!c || !fn) {
		rc = -CDP_EINVAL;
		goto out;
	}
	for (tail = &c->listeners; *tail; tail = &(*tail)->next)
		count++;
	if (count >= CDP_MAX_LISTENERS || c->next_handle == INT32_MAX) {
		GB_LOGE("cdp", "too many event listeners (%d): remove some with cdp_off()", count);
		rc = -CDP_ENOMEM;
		goto out;
	}
	l = calloc(1, sizeof(*l));
	if (!l) {
		rc = -CDP_ENOMEM;
		goto out;
	}
	l->session_id = cdp_dup_filter(session_id, &ok);
	l->method = cdp_dup_filter(method, &ok);
	if (!ok) {
		rc = -CDP_ENOMEM;
		goto out;
	}
	l->fn = fn;
	l->user = user;
	l->handle = ++c->next_handle;
	*tail = l;
	rc = l->handle;
	l = NULL;
out:
	if (l) {
		free(l->session_id);
		free(l->method);
		free(l);
	}
	return rc;
}

static void cdp_listener_free(struct cdp_listener *l)
{
	free(l->session_id);
	free(l->method);
	free(l);
}

/* Frees the listeners that cdp_off() marked during a dispatch. */
static void cdp_listeners_sweep(struct cdp_conn *c)
{
	struct cdp_listener **pp = &c->listeners;
	struct cdp_listener *l;

	while (*pp) {
		l = *pp;
		if (l->removed) {
			*pp = l->next;
			cdp_listener_free(l);
		} else {
			pp = &l->next;
		}
	}
}

/* Removes listener handle; safe from inside a listener (even itself). */
void cdp_off(struct cdp_conn *c, int handle)
{
	struct cdp_listener *l;

	if (!c)
		goto out;
	for (l = c->listeners; l; l = l->next)
		if (l->handle == handle)
			l->removed = 1;
	if (!c->dispatching)
		cdp_listeners_sweep(c);
out:
	return;
}

/*
 * Routes one event: each armed, unfired waiter that matches takes a
 * reference to params; then each matching listener is called. session_id
 * is "" for the browser session; all arguments are borrowed. Listeners
 * added during the dispatch do not see this event; removed ones are
 * skipped and freed after it.
 */
void cdp_events_dispatch(struct cdp_conn *c, const char *session_id, const char *method,
                         json_t *params)
{
	struct cdp_waiter *w;
	struct cdp_listener *l;
	int last_handle = c->next_handle;

	GB_LOGD("cdp", "<- event %s%s%s", method, *session_id ? " session " : "", session_id);
	for (w = c->waiters; w; w = w->next) {
		if (w->fired || !cdp_filter_matches(w->session_id, w->method, session_id, method))
			continue;
		w->fired = 1;
		w->rc = 0;
		w->params = json_incref(params);
	}
	c->dispatching++;
	for (l = c->listeners; l; l = l->next) {
		if (l->removed || l->handle > last_handle ||
		    !cdp_filter_matches(l->session_id, l->method, session_id, method))
			continue;
		l->fn(l->user, session_id, method, params);
	}
	c->dispatching--;
	if (!c->dispatching)
		cdp_listeners_sweep(c);
}

/* Fails each armed, unfired waiter that matches (session_id, method) with
 * rc and why (borrowed): used when the event itself was too large to
 * keep. Returns how many waiters it failed. */
int cdp_events_fail_waiters(struct cdp_conn *c, const char *session_id, const char *method, int rc,
                            const char *why)
{
	struct cdp_waiter *w;
	int n = 0;

	for (w = c->waiters; w; w = w->next) {
		if (w->fired || !cdp_filter_matches(w->session_id, w->method, session_id, method))
			continue;
		w->fired = 1;
		w->rc = rc;
		cdp_err_set(&w->err, 0, "%s: %s", method, why);
		n++;
	}
	return n;
}

/* Arms a one-shot waiter; see cdp.h. On success *out belongs to c until
 * cdp_wait_event() or cdp_disarm() (or cdp_close()) frees it. */
int cdp_arm(struct cdp_conn *c, const char *session_id, const char *method, struct cdp_waiter **out)
{
	struct cdp_waiter *w = NULL;
	int ok = 1;
	int rc = 0;

	if (out)
		*out = NULL;
	if (!c || !out) {
		rc = -CDP_EINVAL;
		goto out;
	}
	if (c->nwaiters >= CDP_MAX_WAITERS) {
		GB_LOGE("cdp", "too many armed waiters (%zu): wait for or disarm them",
		        c->nwaiters);
		rc = -CDP_ENOMEM;
		goto out;
	}
	w = calloc(1, sizeof(*w));
	if (!w) {
		rc = -CDP_ENOMEM;
		goto out;
	}
	w->session_id = cdp_dup_filter(session_id, &ok);
	w->method = cdp_dup_filter(method, &ok);
	if (!ok) {
		rc = -CDP_ENOMEM;
		goto out;
	}
	w->next = c->waiters;
	if (c->waiters)
		c->waiters->prev = w;
	c->waiters = w;
	c->nwaiters++;
	*out = w;
	w = NULL;
out:
	if (w) {
		free(w->session_id);
		free(w->method);
		free(w);
	}
	return rc;
}

/* Unlinks and frees w and its params. */
static void cdp_waiter_free(struct cdp_conn *c, struct cdp_waiter *w)
{
	if (w->prev)
		w->prev->next = w->next;
	else
		c->waiters = w->next;
	if (w->next)
		w->next->prev = w->prev;
	c->nwaiters--;
	json_decref(w->params);
	free(w->session_id);
	free(w->method);
	free(w);
}

/* Disarms and frees w. NULL is a no-op. */
void cdp_disarm(struct cdp_conn *c, struct cdp_waiter *w)
{
	if (c && w)
		cdp_waiter_free(c, w);
}

static int cdp_waiter_stop(struct cdp_conn *c, void *arg)
{
	(void)c;
	return ((const struct cdp_waiter *)arg)->fired;
}

/* Waits for w's event (it may already have come); see cdp.h. Frees w in
 * every case. On success *params (may be NULL) is a new reference. */
int cdp_wait_event(struct cdp_conn *c, struct cdp_waiter *w, int timeout_ms, json_t **params,
                   struct cdp_error *err)
{
	const char *what;
	int rc;

	if (params)
		*params = NULL;
	if (!c || !w || timeout_ms < 0) {
		cdp_err_set(err, 0, "cdp_wait_event: needs a conn, a waiter and a timeout >= 0");
		rc = -CDP_EINVAL;
		goto out;
	}
	if (cdp_in_callback(c)) {
		cdp_err_set(err, 0, "cdp_wait_event: a listener or predicate must not wait");
		GB_LOGE("cdp", "cdp_wait_event() called from inside a listener: refused");
		rc = -CDP_EINVAL;
		goto out;
	}
	rc = cdp_service_until(c, gb_now_ms() + timeout_ms, cdp_waiter_stop, w);
	what = w->method ? w->method : "any event";
	if (w->fired) {
		rc = w->rc;
		if (rc == 0 && params) {
			*params = w->params;
			w->params = NULL;
		} else if (rc < 0) {
			cdp_err_copy(err, &w->err);
		}
	} else if (rc == -CDP_ETIMEOUT) {
		cdp_err_set(err, 0, "%s: no event within %d ms", what, timeout_ms);
	} else if (rc == -CDP_ECANCELLED) {
		cdp_err_set(err, 0, "%s: cancelled while waiting for the event", what);
	} else if (rc == -CDP_ECLOSED) {
		cdp_err_set(err, 0, "%s: connection closed: %s", what, c->close_reason);
	} else {
		cdp_err_set(err, 0, "%s: %s", what, cdp_strerror(rc));
	}
	cdp_waiter_free(c, w);
out:
	return rc;
}

/* Frees every listener and waiter (cdp_close). */
void cdp_events_free_all(struct cdp_conn *c)
{
	struct cdp_listener *l;

	while (c->listeners) {
		l = c->listeners;
		c->listeners = l->next;
		cdp_listener_free(l);
	}
	while (c->waiters)
		cdp_waiter_free(c, c->waiters);
}

/*
 * service.c - the one wait loop: services the conn's lws context until a
 * condition holds, its deadline passes, the cancel flag rises or the
 * socket closes. Also cdp_service().
 */
#include "cdp/cdp-private.h"

#include "common/log.h"

/* The deadline timer does nothing itself: being scheduled is what bounds
 * lws_service()'s poll() to the deadline. */
static void cdp_deadline_cb(lws_sorted_usec_list_t *sul)
{
	(void)sul;
}

static int cdp_cancelled(const struct cdp_conn *c)
{
	return c->opts.cancel_flag && atomic_load(c->opts.cancel_flag);
}

/* At the deadline: a few non-blocking passes, while they make progress,
 * so that what is already readable (a reply sitting in the socket) is
 * still handed over rather than timed out. */
static void cdp_final_passes(struct cdp_conn *c, cdp_stop_fn stop, void *arg)
{
	unsigned long before;
	int i;

	for (i = 0; i < CDP_FINAL_PASSES; i++) {
		if (!c->ctx || c->state == CDP_STATE_CLOSED || stop(c, arg))
			break;
		before = c->progress;
		if (lws_service(c->ctx, -1) < 0)
			cdp_conn_closed(c, "the event loop failed");
		if (c->progress == before)
			break;
	}
}

/*
 * Services c until stop(c, arg) is true (returns 0), deadline_ms on the
 * gb_now_ms() clock passes (-CDP_ETIMEOUT), the cancel flag is raised
 * (-CDP_ECANCELLED) or the socket is closed (-CDP_ECLOSED); stop is
 * checked first, so what arrived before a close is still reported. Sleeps
 * in poll() between events, never longer than the deadline. Refuses to
 * nest (-CDP_EINVAL): listeners and predicates must not wait.
 */
int cdp_service_until(struct cdp_conn *c, int64_t deadline_ms, cdp_stop_fn stop, void *arg)
{
	int64_t now;
	int64_t left_ms;
	int64_t ack_ms;
	int rc;

	if (cdp_in_callback(c)) {
		GB_LOGE("cdp", "a wait was started from inside a listener or predicate: refused");
		rc = -CDP_EINVAL;
		goto out;
	}
	c->servicing = 1;
	for (;;) {
		if (stop(c, arg)) {
			rc = 0;
			break;
		}
		if (c->state == CDP_STATE_CLOSED) {
			rc = -CDP_ECLOSED;
			break;
		}
		if (cdp_cancelled(c)) {
			rc = -CDP_ECANCELLED;
			break;
		}
		now = gb_now_ms();
		if (now >= deadline_ms || !c->ctx) {
			cdp_final_passes(c, stop, arg);
			if (stop(c, arg))
				rc = 0;
			else if (c->state == CDP_STATE_CLOSED)
				rc = -CDP_ECLOSED;
			else
				rc = -CDP_ETIMEOUT;
			break;
		}
		/* + 999 us: poll() takes whole ms, and waking just before the
		 * deadline would spin through zero-timeout polls */
		left_ms = deadline_ms - now;
		ack_ms = cdp_casts_next_ms(c, now);
		if (ack_ms >= 0 && ack_ms < left_ms)
			left_ms = ack_ms;
		lws_sul_schedule(c->ctx, 0, &c->deadline_sul, cdp_deadline_cb,
		                 (lws_usec_t)left_ms * LWS_US_PER_MS + 999);
		if (lws_service(c->ctx, 0) < 0)
			cdp_conn_closed(c, "the event loop failed");
		cdp_casts_pump(c); /* a screencast's acknowledgement that came due */
	}
	if (c->ctx)
		lws_sul_cancel(&c->deadline_sul);
	c->servicing = 0;
out:
	return rc;
}

/* Called by the message handler after each message it dispatched: runs
 * cdp_service()'s predicate, if one is active. */
void cdp_note_dispatched(struct cdp_conn *c)
{
	if (c->done_fn && !c->done_hit)
		c->done_hit = c->done_fn(c->done_user) != 0;
}

/* Also re-checked after every wake of the loop, so that a condition
 * another thread changed before calling cdp_wake() is noticed at once. */
static int cdp_done_stop(struct cdp_conn *c, void *arg)
{
	(void)arg;
	if (!c->done_hit && c->done_fn)
		c->done_hit = c->done_fn(c->done_user) != 0;
	return c->done_hit;
}

/* Services c for up to timeout_ms, dispatching events to listeners; see
 * cdp.h. done (may be NULL) is checked on entry, after each dispatched
 * message and after each wake (cdp_wake). */
int cdp_service(struct cdp_conn *c, int timeout_ms, cdp_done_fn done, void *user)
{
	int rc;

	if (!c || timeout_ms < 0) {
		rc = -CDP_EINVAL;
		goto out;
	}
	if (cdp_in_callback(c)) {
		GB_LOGE("cdp", "cdp_service() called from inside a listener or predicate: refused");
		rc = -CDP_EINVAL;
		goto out;
	}
	c->done_fn = done;
	c->done_user = user;
	c->done_hit = done ? done(user) != 0 : 0;
	rc = cdp_service_until(c, gb_now_ms() + timeout_ms, cdp_done_stop, NULL);
	c->done_fn = NULL;
	c->done_user = NULL;
	c->done_hit = 0;
out:
	return rc;
}

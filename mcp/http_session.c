/*
 * http_session.c - the MCP sessions of `glassbox serve` (http-private.h).
 *
 * Design note
 * - Owns: the table of sessions (front thread only), each session's
 *   mcp_server and the streams of answers waiting for their connections,
 *   and the closer thread.
 * - Threads: the front creates, finds, expires and closes sessions. The
 *   server's emit (hs_emit) runs on the front and on session workers: it
 *   queues the encoded message on the stream of the request it belongs to
 *   under hs->lock and wakes the front (mcp_http_wake_front), which then
 *   resumes the requests that have output (hs_table_flush). The closer thread
 *   frees closed sessions (mcp_server_free waits for the calls and closes
 *   the browser), so the front never waits on a browser.
 * - Invariants: a session in the table is HS_OPEN; a closed one is never
 *   handed a message again. A stream is freed by the front only, once it
 *   is done and written, or done and its connection is gone.
 */
#include "mcp/http-private.h"

#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>

#include "common/log.h"
#include "common/metrics.h"
#include "mcp/mcp-private.h"

#define MOD "serve"

/* The JSON-RPC error code of answers ended by the session's close. */
#define SESSION_CLOSED_CODE (-32000)

/* See http-private.h. */
void hs_msgs_free(struct hs_msg *m)
{
	struct hs_msg *next;

	for (; m; m = next) {
		next = m->next;
		free(m->text);
		free(m);
	}
}

/* Frees st and what it still has queued; st must be unlinked. */
static void stream_free(struct hs_stream *st)
{
	hs_msgs_free(st->head);
	json_decref(st->id);
	free(st);
}

/* Appends msg (borrowed) to st, encoded. */
static void stream_push_locked(struct hs_stream *st, json_t *msg)
{
	struct hs_msg *m = calloc(1, sizeof(*m));

	if (!m)
		return;
	m->text = mcp_jsonrpc_encode(msg, &m->len);
	if (!m->text) {
		free(m);
		return;
	}
	if (m->len && m->text[m->len - 1] == '\n')
		m->text[--m->len] = '\0';
	if (st->tail)
		st->tail->next = m;
	else
		st->head = m;
	st->tail = m;
}

/* mcp_emit_fn: queues msg on the stream of the request related names and
 * wakes the front. A message for no waiting request is dropped (its
 * client went away or the session is closing). */
static int hs_emit(void *user, json_t *msg, json_t *related)
{
	struct http_session *hs = user;
	struct hs_stream *st;
	int final = !json_object_get(msg, "method") && json_object_get(msg, "id");
	int rc = -1;

	pthread_mutex_lock(&hs->lock);
	for (st = hs->streams; related && st; st = st->next) {
		if (!st->done && json_equal(st->id, related))
			break;
	}
	if (related && st) {
		if (st->req) {
			stream_push_locked(st, msg);
			rc = 0;
		}
		if (final) {
			st->done = 1;
			st->response_error = json_object_get(msg, "error") != NULL;
		}
	}
	pthread_mutex_unlock(&hs->lock);
	if (rc == 0)
		mcp_http_wake_front(hs->table);
	else
		GB_LOGD(MOD, "session %.8s: a message for no waiting request was dropped", hs->id);
	return rc;
}

/* See http-private.h. */
int hs_table_init(struct hs_table *t, const struct mcp_serve_config *cfg,
                  const struct act_config *base)
{
	memset(t, 0, sizeof(*t));
	t->cfg = cfg;
	t->base = base;
	pthread_mutex_init(&t->close_lock, NULL);
	pthread_cond_init(&t->close_cond, NULL);
	return 0;
}

/* The closer thread: frees the sessions handed to it, one at a time. */
static void *closer_main(void *arg)
{
	struct hs_table *t = arg;
	struct http_session *hs;

	pthread_mutex_lock(&t->close_lock);
	for (;;) {
		while (!t->close_queue && !t->closer_stop)
			pthread_cond_wait(&t->close_cond, &t->close_lock);
		if (!t->close_queue)
			break;
		hs = t->close_queue;
		t->close_queue = hs->next;
		t->freeing_tenant = hs->tenant;
		pthread_mutex_unlock(&t->close_lock);
		hs_cdp_end(hs); /* its CDP client no longer uses the session */
		/* a session cut off does not seal its profile; a clean end does */
		mcp_server_set_profile_end(hs->srv, !hs->cut_off);
		mcp_server_free(hs->srv); /* waits for cancelled calls, closes the browser */
		hs->srv = NULL;
		GB_LOGI(MOD, "session %.8s of tenant %s closed", hs->id, hs->tenant->name);
		hs_unref(hs);
		pthread_mutex_lock(&t->close_lock);
		t->freeing_tenant = NULL;
		t->closing--;
		pthread_cond_broadcast(&t->close_cond);
	}
	pthread_mutex_unlock(&t->close_lock);
	return NULL;
}

/* Seconds until hs, open and idle, reaches its idle or unused TTL. */
static int64_t seconds_to_expiry(const struct hs_table *t, const struct http_session *hs,
                                 int64_t now_ms)
{
	int64_t at = hs->last_active_ms + (int64_t)t->cfg->idle_ttl_s * 1000;
	int64_t unused_at = hs->created_ms + (int64_t)t->cfg->unused_ttl_s * 1000;

	if (!hs->calls && unused_at < at)
		at = unused_at;
	return at > now_ms ? (at - now_ms + 999) / 1000 : 0;
}

/* Adds the open sessions of tenant (NULL: every tenant) to cap. */
static void count_open(struct hs_table *t, const struct mcp_tenant *tenant, int64_t now_ms,
                       struct hs_capacity *cap)
{
	struct http_session *hs;
	int64_t left;

	for (hs = t->head; hs; hs = hs->next) {
		if (tenant && hs->tenant != tenant)
			continue;
		cap->open++;
		if (mcp_server_busy(hs->srv))
			continue;
		cap->idle++;
		left = seconds_to_expiry(t, hs, now_ms);
		if (cap->next_expiry_s < 0 || left < cap->next_expiry_s)
			cap->next_expiry_s = left;
	}
}

/* Adds the closing sessions of tenant (NULL: every tenant) to cap. */
static void count_closing(struct hs_table *t, const struct mcp_tenant *tenant,
                          struct hs_capacity *cap)
{
	struct http_session *hs;

	pthread_mutex_lock(&t->close_lock);
	if (!tenant) {
		cap->closing = t->closing;
	} else {
		for (hs = t->close_queue; hs; hs = hs->next)
			cap->closing += hs->tenant == tenant;
		if (t->freeing_tenant == tenant)
			cap->closing++;
	}
	pthread_mutex_unlock(&t->close_lock);
	cap->open += cap->closing;
}

/* See http-private.h. */
enum hs_refusal hs_admission(struct hs_table *t, const struct mcp_tenant *tenant,
                             struct hs_capacity *cap)
{
	struct hs_capacity all = { 0, 0, 0, -1 }, mine = { 0, 0, 0, -1 };
	int64_t now = gb_now_ms();
	enum hs_refusal why = HS_OK;

	/* a closing session still has its browser: it counts, against its own
	 * tenant too, until it is gone */
	count_open(t, tenant, now, &mine);
	count_closing(t, tenant, &mine);
	if (mine.open >= (size_t)tenant->max_sessions) {
		why = HS_LIMIT_TENANT;
		if (cap)
			*cap = mine;
		goto out;
	}
	count_open(t, NULL, now, &all);
	count_closing(t, NULL, &all);
	if (all.open >= (size_t)t->cfg->max_sessions) {
		why = HS_LIMIT_TOTAL;
		if (cap)
			*cap = all;
	}
out:
	return why;
}

/* See http-private.h. */
struct http_session *hs_create(struct hs_table *t, const struct mcp_tenant *tenant)
{
	struct http_session *hs = calloc(1, sizeof(*hs));

	if (!hs)
		return NULL;
	if (!t->closer_started) {
		if (pthread_create(&t->closer, NULL, closer_main, t) != 0) {
			free(hs);
			return NULL;
		}
		t->closer_started = 1;
	}
	if (t->cfg->replica_id[0]) {
		/* the replica that owns it comes first: a proxy routes by it */
		size_t n = (size_t)snprintf(hs->id, sizeof(hs->id), "%s.", t->cfg->replica_id);

		gb_random_hex(hs->id + n, 32);
	} else {
		gb_random_hex(hs->id, 32);
	}
	hs->tenant = tenant;
	hs->table = t;
	hs->cfg = *t->base;
	hs->cfg.tenant = tenant->name;
	hs->cfg.tenant_policy = tenant->policy;
	hs->cfg.policy_source = tenant->policy_source[0] ? tenant->policy_source : NULL;
	hs->cfg.policy = tenant->parsed;
	hs->cfg.action_timeout_ms = tenant->action_timeout_ms;
	hs->cfg.prelaunch = t->cfg->prelaunch; /* the browser starts while the client initializes */
	snprintf(hs->cdp_url, sizeof(hs->cdp_url), "%s/cdp/%s", t->cdp_base, hs->id);
	hs->cfg.cdp_endpoint = hs->cdp_url;
	hs->cfg.profile_save_at_end = 1; /* unless cut off (hs_close) */
	pthread_mutex_init(&hs->lock, NULL);
	hs->refs = 2; /* the table's and the caller's */
	hs->created_ms = hs->last_active_ms = gb_now_ms();
	if (mcp_server_new(&hs->cfg, hs_emit, hs, &hs->srv) < 0) {
		pthread_mutex_destroy(&hs->lock);
		free(hs);
		return NULL;
	}
	hs->next = t->head;
	t->head = hs;
	t->count++;
	gb_metrics_counter_add("glassbox_sessions_opened_total", tenant->name, 1);
	GB_LOGI(MOD, "session %.8s opened for tenant %s", hs->id, tenant->name);
	return hs;
}

/* See http-private.h. */
struct http_session *hs_find(struct hs_table *t, const char *id, const struct mcp_tenant *tenant)
{
	struct http_session *hs;

	for (hs = t->head; id && hs; hs = hs->next) {
		if (!strcmp(hs->id, id) && (!tenant || hs->tenant == tenant)) {
			hs_ref(hs);
			return hs;
		}
	}
	return NULL;
}

/* See http-private.h. */
void hs_ref(struct http_session *hs)
{
	pthread_mutex_lock(&hs->lock);
	hs->refs++;
	pthread_mutex_unlock(&hs->lock);
}

/* See http-private.h. */
void hs_unref(struct http_session *hs)
{
	struct hs_stream *st, *next;
	int left;

	if (!hs)
		return;
	pthread_mutex_lock(&hs->lock);
	left = --hs->refs;
	pthread_mutex_unlock(&hs->lock);
	if (left > 0)
		return;
	for (st = hs->streams; st; st = next) {
		next = st->next;
		stream_free(st);
	}
	pthread_mutex_destroy(&hs->lock);
	free(hs);
}

static void flush_session(struct http_session *hs);

/* See http-private.h. */
void hs_close(struct http_session *hs, const char *reason)
{
	struct hs_table *t = hs->table;
	struct http_session **pp;
	struct hs_stream *st;
	json_t *err;

	if (hs->state != HS_OPEN)
		return;
	hs->state = HS_CLOSING;
	hs_cdp_stop(hs);
	hs->cut_off = !strcmp(reason, "hard_ttl") || !strcmp(reason, "killed") ||
	              !strcmp(reason, "init_failed");
	for (pp = &t->head; *pp; pp = &(*pp)->next) {
		if (*pp == hs) {
			*pp = hs->next;
			t->count--;
			break;
		}
	}
	hs->next = NULL;
	/* answers still waiting end with an error that says why */
	pthread_mutex_lock(&hs->lock);
	for (st = hs->streams; st; st = st->next) {
		if (st->done)
			continue;
		err = mcp_jsonrpc_error(st->id, SESSION_CLOSED_CODE,
		                        "the session was closed by the server before this request "
		                        "finished; its outcome is unknown: open a new session",
		                        json_pack("{s:s}", "reason", reason));
		if (st->req && err)
			stream_push_locked(st, err);
		json_decref(err);
		st->done = 1;
		st->response_error = 1;
	}
	pthread_mutex_unlock(&hs->lock);
	mcp_server_cancel_all(hs->srv);
	gb_metrics_counter_add("glassbox_sessions_closed_total", reason, 1);
	GB_LOGI(MOD, "closing session %.8s of tenant %s (%s)", hs->id, hs->tenant->name, reason);
	/* the answers ended above go out now: once queued, the closer may take
	 * the session before any later flush could see it */
	flush_session(hs);
	pthread_mutex_lock(&t->close_lock);
	hs->next = t->close_queue; /* the table's reference goes to the closer */
	t->close_queue = hs;
	t->closing++;
	pthread_cond_broadcast(&t->close_cond);
	pthread_mutex_unlock(&t->close_lock);
}

/* See http-private.h. */
void hs_expire(struct hs_table *t, int64_t now_ms)
{
	struct http_session *hs, *next;

	for (hs = t->head; hs; hs = next) {
		next = hs->next;
		if (now_ms - hs->created_ms >= (int64_t)t->cfg->hard_ttl_s * 1000) {
			hs_close(hs, "hard_ttl");
		} else if (mcp_server_busy(hs->srv)) {
			hs->last_active_ms = now_ms; /* a running call keeps it alive */
		} else if (now_ms - hs->last_active_ms >= (int64_t)t->cfg->idle_ttl_s * 1000) {
			hs_close(hs, "idle_ttl");
		} else if (!hs->calls &&
		           now_ms - hs->created_ms >= (int64_t)t->cfg->unused_ttl_s * 1000) {
			hs_close(hs, "unused_ttl"); /* initialized, then never used */
		}
	}
}

/* See http-private.h. */
void hs_table_shutdown(struct hs_table *t)
{
	while (t->head)
		hs_close(t->head, "shutdown");
	pthread_mutex_lock(&t->close_lock);
	t->closer_stop = 1;
	pthread_cond_broadcast(&t->close_cond);
	pthread_mutex_unlock(&t->close_lock);
	if (t->closer_started)
		pthread_join(t->closer, NULL);
	t->closer_started = 0;
	pthread_cond_destroy(&t->close_cond);
	pthread_mutex_destroy(&t->close_lock);
}

/* See http-private.h. */
struct hs_stream *hs_stream_open(struct http_session *hs, json_t *id, struct http_req *req)
{
	struct hs_stream *st;

	pthread_mutex_lock(&hs->lock);
	for (st = hs->streams; st; st = st->next) {
		if (!st->done && json_equal(st->id, id)) {
			pthread_mutex_unlock(&hs->lock);
			return NULL;
		}
	}
	st = calloc(1, sizeof(*st));
	if (st) {
		st->id = json_deep_copy(id);
		st->req = req;
		st->next = hs->streams;
		hs->streams = st;
	}
	pthread_mutex_unlock(&hs->lock);
	return st;
}

/* See http-private.h. */
void hs_stream_cancel(struct http_session *hs, json_t *id)
{
	struct hs_stream *st;

	pthread_mutex_lock(&hs->lock);
	for (st = hs->streams; st; st = st->next) {
		if (!st->done && json_equal(st->id, id)) {
			st->done = 1;
			st->ended_empty = 1;
			break;
		}
	}
	pthread_mutex_unlock(&hs->lock);
	hs_table_flush(hs->table);
}

/* See http-private.h. */
struct hs_msg *hs_stream_take(struct http_session *hs, struct hs_stream *st, int *done, int *error,
                              int *empty)
{
	struct hs_msg *m;

	pthread_mutex_lock(&hs->lock);
	m = st->head;
	st->head = st->tail = NULL;
	*done = st->done;
	*error = st->response_error;
	*empty = st->ended_empty;
	pthread_mutex_unlock(&hs->lock);
	return m;
}

/* Unlinks st from hs->streams. */
static void stream_unlink_locked(struct http_session *hs, struct hs_stream *st)
{
	struct hs_stream **pp;

	for (pp = &hs->streams; *pp; pp = &(*pp)->next) {
		if (*pp == st) {
			*pp = st->next;
			break;
		}
	}
}

/* See http-private.h. A stream whose response is still to come stays
 * listed, detached, so that the response is recognised and dropped. */
void hs_stream_release(struct http_session *hs, struct hs_stream *st)
{
	int free_it;

	pthread_mutex_lock(&hs->lock);
	st->req = NULL;
	free_it = st->done;
	if (free_it)
		stream_unlink_locked(hs, st);
	pthread_mutex_unlock(&hs->lock);
	if (free_it)
		stream_free(st);
}

/* Wakes the connections of one session's streams with output; frees
 * detached streams that are done. */
static void flush_session(struct http_session *hs)
{
	struct hs_stream *st, *next, *dead = NULL;

	pthread_mutex_lock(&hs->lock);
	for (st = hs->streams; st; st = next) {
		next = st->next;
		if (st->req && (st->head || st->done)) {
			mcp_http_wake(st->req);
		} else if (!st->req && st->done) {
			stream_unlink_locked(hs, st);
			st->next = dead;
			dead = st;
		}
	}
	pthread_mutex_unlock(&hs->lock);
	for (st = dead; st; st = next) {
		next = st->next;
		stream_free(st);
	}
}

/* See http-private.h. Closing sessions still have connections waiting
 * for their last error: they are reached through the close queue. */
void hs_table_flush(struct hs_table *t)
{
	struct http_session *hs;

	for (hs = t->head; hs; hs = hs->next)
		flush_session(hs);
	pthread_mutex_lock(&t->close_lock);
	for (hs = t->close_queue; hs; hs = hs->next)
		flush_session(hs);
	pthread_mutex_unlock(&t->close_lock);
}

/* See http-private.h. */
void hs_table_counts(struct hs_table *t, size_t *busy, size_t *idle, size_t *closing)
{
	struct http_session *hs;

	*busy = *idle = 0;
	for (hs = t->head; hs; hs = hs->next) {
		if (mcp_server_busy(hs->srv))
			(*busy)++;
		else
			(*idle)++;
	}
	pthread_mutex_lock(&t->close_lock);
	*closing = t->closing;
	pthread_mutex_unlock(&t->close_lock);
}

/* Wall-clock ISO 8601 of a monotonic time ms (now_ms ago relative). */
static json_t *iso_of(int64_t mono_ms, int64_t now_mono_ms)
{
	struct timespec ts;
	struct tm tm;
	char buf[40];
	time_t secs;

	clock_gettime(CLOCK_REALTIME, &ts);
	secs = ts.tv_sec - (time_t)((now_mono_ms - mono_ms) / 1000);
	gmtime_r(&secs, &tm);
	strftime(buf, sizeof(buf), "%Y-%m-%dT%H:%M:%SZ", &tm);
	return json_string(buf);
}

/* See http-private.h. */
json_t *hs_table_list(struct hs_table *t)
{
	struct http_session *hs;
	json_t *list = json_array();
	int64_t now = gb_now_ms();

	for (hs = t->head; list && hs; hs = hs->next) {
		json_array_append_new(
		    list,
		    json_pack("{s:s, s:s, s:s, s:o, s:o, s:I}", "id", hs->id, "tenant",
		              hs->tenant->name, "state", mcp_server_busy(hs->srv) ? "busy" : "idle",
		              "created", iso_of(hs->created_ms, now), "last_activity",
		              iso_of(hs->last_active_ms, now), "calls", (json_int_t)hs->calls));
	}
	return list;
}

/*
 * approvals.c - approvals bound to one action's fingerprint (store.h).
 *
 * Every change is one transaction (store_sql_begin_locked ... COMMIT) of a
 * conditional UPDATE and the INSERT of its event: consuming is
 *   UPDATE approvals SET state = 'used' ... WHERE id = ? AND tenant = ?
 *     AND state = 'approved' AND expires_at > now AND fingerprint = ?
 * and whoever's UPDATE changes the row has spent it; everyone else reads
 * the row back to say why not (the same with SQLite and PostgreSQL: a
 * concurrent UPDATE of the row waits for the first and re-checks its
 * WHERE, store-sql.h). Expiry is applied lazily at the start of
 * each transaction (and by store_approval_expire), so an expired approval
 * is never usable even if nobody swept it.
 *
 * The approval hook is called after the commit, with the store's lock
 * released: events are gathered in a list while the lock is held.
 */
#include "store/store-private.h"

#include "common/log.h"
#include "common/util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Largest number of rows list and history return. */
#define LIST_MAX 1000
#define LIST_DEFAULT 100
/* Expired approvals handled per sweep step. */
#define SWEEP_BATCH 200

#define APPROVAL_COLS                                                                          \
	"id, tenant, session, operation, tool, rule, fingerprint, summary, state, created_at," \
	" expires_at, ttl_ms, decided_at, decided_by, channel, decided_uid, reason, used_at,"  \
	" used_by_operation"

static const char *const state_names[] = { "pending", "approved", "denied", "used", "expired" };

const char *store_approval_state_name(enum store_approval_state s)
{
	if ((int)s < 0 || (size_t)s >= sizeof(state_names) / sizeof(state_names[0]))
		return "unknown";
	return state_names[s];
}

static enum store_approval_state state_from_text(const char *t)
{
	size_t i;

	for (i = 0; t && i < sizeof(state_names) / sizeof(state_names[0]); i++) {
		if (!strcmp(t, state_names[i]))
			return (enum store_approval_state)i;
	}
	return STORE_APPROVAL_EXPIRED; /* unreadable: treat as unusable */
}

const char *store_refusal_name(enum store_refusal r)
{
	switch (r) {
	case STORE_REFUSE_NONE:
		return "none";
	case STORE_REFUSE_NOT_FOUND:
		return "not_found";
	case STORE_REFUSE_PENDING:
		return "pending";
	case STORE_REFUSE_DENIED:
		return "denied";
	case STORE_REFUSE_USED:
		return "used";
	case STORE_REFUSE_EXPIRED:
		return "expired";
	case STORE_REFUSE_MISMATCH:
		return "mismatch";
	}
	return "unknown";
}

/* ---- events gathered for the hook ---------------------------------------------- */

struct fired {
	struct store_approval a;
	int64_t seq;
	int64_t time_ms;
	char event[16];
	char by[STORE_BY_MAX + 1];
	char channel[STORE_CHANNEL_MAX + 1];
	char reason[STORE_REASON_MAX + 1];
	char operation[STORE_ID_MAX + 1];
};

struct fire_list {
	struct fired *v;
	size_t n;
	size_t cap;
};

/* Calls the hook for each gathered event, then frees the list. Lock NOT
 * held. */
static void fire_all(struct store *st, struct fire_list *fl)
{
	size_t i;

	for (i = 0; st->hook && i < fl->n; i++) {
		struct fired *f = &fl->v[i];
		struct store_approval_event ev = {
			.seq = f->seq,
			.time_ms = f->time_ms,
			.approval_id = f->a.id,
			.tenant = f->a.tenant,
			.event = f->event,
			.by = f->by,
			.channel = f->channel,
			.reason = f->reason,
			.operation_id = f->operation,
			.approval = &f->a,
		};

		st->hook(st->hook_user, &ev);
	}
	free(fl->v);
	memset(fl, 0, sizeof(*fl));
}

/* ---- rows ------------------------------------------------------------------------- */

/* Fills a from a row selected with APPROVAL_COLS. */
static void read_row(struct store *st, struct store_sql_rows *r, struct store_approval *a)
{
	memset(a, 0, sizeof(*a));
	store_sql_copy(st, r, 0, a->id, sizeof(a->id));
	store_sql_copy(st, r, 1, a->tenant, sizeof(a->tenant));
	store_sql_copy(st, r, 2, a->session, sizeof(a->session));
	store_sql_copy(st, r, 3, a->operation_id, sizeof(a->operation_id));
	store_sql_copy(st, r, 4, a->tool, sizeof(a->tool));
	store_sql_copy(st, r, 5, a->rule, sizeof(a->rule));
	store_sql_copy(st, r, 6, a->fingerprint, sizeof(a->fingerprint));
	store_sql_copy(st, r, 7, a->summary, sizeof(a->summary));
	a->state = state_from_text(store_sql_text(st, r, 8));
	a->created_ms = store_sql_int(st, r, 9);
	a->expires_ms = store_sql_int(st, r, 10);
	a->ttl_ms = store_sql_int(st, r, 11);
	a->decided_ms = store_sql_int(st, r, 12);
	store_sql_copy(st, r, 13, a->decided_by, sizeof(a->decided_by));
	store_sql_copy(st, r, 14, a->channel, sizeof(a->channel));
	a->decided_uid = store_sql_is_null(st, r, 15) ? -1 : store_sql_int(st, r, 15);
	store_sql_copy(st, r, 16, a->reason, sizeof(a->reason));
	a->used_ms = store_sql_int(st, r, 17);
	store_sql_copy(st, r, 18, a->used_by_operation, sizeof(a->used_by_operation));
}

/* Reads approval id (of tenant, unless tenant is NULL). Lock held.
 * Returns 0, -STORE_ENOTFOUND (err set), -STORE_EIO. */
static int read_approval_locked(struct store *st, const char *tenant, const char *id,
                                struct store_approval *a, char *err, size_t errlen)
{
	static const char sql[] = "SELECT " APPROVAL_COLS " FROM approvals WHERE id = ?1"
	                          " AND (?2 IS NULL OR tenant = ?2)";
	const struct store_sql_param p[] = { SQL_TEXT(id), SQL_TEXT(tenant) };
	struct store_sql_rows *r = NULL;
	int rc;

	rc = store_sql_query_locked(st, "read an approval", sql, p, 2, &r, err, errlen);
	if (rc == 0)
		rc = store_sql_next(st, r, err, errlen);
	if (rc == 1) {
		read_row(st, r, a);
		rc = 0;
	} else if (rc == 0) {
		store_set_error(err, errlen,
		                "there is no approval %.80s%s: list them with `glassbox "
		                "approvals list`",
		                id, tenant ? " for this tenant" : "");
		rc = -STORE_ENOTFOUND;
	}
	store_sql_done(st, r);
	return rc;
}

/* Records one event of approval a (as it is after the event) and, when a
 * hook is set, gathers it for firing. Lock held, inside a transaction. */
static int record_event_locked(struct store *st, const struct store_approval *a, const char *event,
                               const char *by, const char *channel, const char *reason,
                               const char *operation, int64_t now, struct fire_list *fl, char *err,
                               size_t errlen)
{
	static const char sql[] =
	    "INSERT INTO approval_events (approval_id, tenant, time, event, actor, channel,"
	    " reason, operation) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8) RETURNING seq";
	const struct store_sql_param p[] = { SQL_TEXT(a->id),  SQL_TEXT(a->tenant),
		                             SQL_INT(now),     SQL_TEXT(event),
		                             SQL_TEXT(by),     SQL_TEXT(channel),
		                             SQL_TEXT(reason), SQL_TEXT(operation) };
	struct fired *f;
	int64_t seq = 0;
	int rc;

	rc = store_sql_int_query_locked(st, "record an approval event", sql, p, 8, &seq, err,
	                                errlen);
	if (rc < 0)
		return rc;
	rc = 0;
	if (!st->hook || !fl)
		goto out;
	if (fl->n == fl->cap) {
		size_t cap = fl->cap ? fl->cap * 2 : 4;
		struct fired *grown = realloc(fl->v, cap * sizeof(*grown));

		if (!grown) {
			GB_LOGW("store", "out of memory: the approval hook misses event %s of %s",
			        event, a->id);
			goto out;
		}
		fl->v = grown;
		fl->cap = cap;
	}
	f = &fl->v[fl->n++];
	memset(f, 0, sizeof(*f));
	f->a = *a;
	f->seq = seq;
	f->time_ms = now;
	snprintf(f->event, sizeof(f->event), "%s", event);
	snprintf(f->by, sizeof(f->by), "%s", by ? by : "");
	snprintf(f->channel, sizeof(f->channel), "%s", channel ? channel : "");
	snprintf(f->reason, sizeof(f->reason), "%s", reason ? reason : "");
	snprintf(f->operation, sizeof(f->operation), "%s", operation ? operation : "");
out:
	return rc;
}

/* Marks pending/approved approvals past their expiry as expired, with an
 * event each. Lock held, inside a transaction. *count (may be NULL) is
 * increased by the number expired. */
static int sweep_locked(struct store *st, int64_t now, size_t *count, struct fire_list *fl,
                        char *err, size_t errlen)
{
	static const char select_sql[] =
	    "SELECT " APPROVAL_COLS " FROM approvals WHERE state IN ('pending', 'approved')"
	    " AND expires_at <= ?1 LIMIT " STORE_STR(SWEEP_BATCH);
	static const char update_sql[] =
	    "UPDATE approvals SET state = 'expired' WHERE id = ?1"
	    " AND state IN ('pending', 'approved') AND expires_at <= ?2";
	struct store_approval *batch = NULL;
	struct store_sql_rows *r = NULL;
	size_t n;
	size_t i;
	int rc = 0;

	batch = calloc(SWEEP_BATCH, sizeof(*batch));
	if (!batch) {
		store_set_error(err, errlen, "out of memory expiring approvals");
		rc = -STORE_ENOMEM;
		goto out;
	}
	for (;;) {
		const struct store_sql_param sp[] = { SQL_INT(now) };

		n = 0;
		rc = store_sql_query_locked(st, "find expired approvals", select_sql, sp, 1, &r,
		                            err, errlen);
		while (rc == 0 && n < SWEEP_BATCH) {
			rc = store_sql_next(st, r, err, errlen);
			if (rc != 1)
				break;
			read_row(st, r, &batch[n++]);
			rc = 0;
		}
		store_sql_done(st, r);
		r = NULL;
		if (rc < 0)
			goto out;
		rc = 0;
		for (i = 0; i < n; i++) {
			const struct store_sql_param up[] = { SQL_TEXT(batch[i].id), SQL_INT(now) };
			int64_t changed = 0;

			rc = store_sql_exec_locked(st, "expire an approval", update_sql, up, 2,
			                           &changed, err, errlen);
			if (rc < 0)
				goto out;
			if (changed != 1)
				continue; /* another process expired it first */
			batch[i].state = STORE_APPROVAL_EXPIRED;
			rc = record_event_locked(st, &batch[i], "expired", NULL, NULL, NULL, NULL,
			                         now, fl, err, errlen);
			if (rc < 0)
				goto out;
			if (count)
				(*count)++;
		}
		if (n < SWEEP_BATCH)
			break;
	}
out:
	free(batch);
	return rc;
}

/* BEGIN IMMEDIATE + the expiry sweep. Lock held. */
static int begin_locked(struct store *st, int64_t now, struct fire_list *fl, char *err,
                        size_t errlen)
{
	int rc = store_sql_begin_locked(st, "start an approvals transaction", err, errlen);

	if (rc < 0)
		return rc;
	rc = sweep_locked(st, now, NULL, fl, err, errlen);
	if (rc < 0)
		store_sql_rollback_locked(st);
	return rc;
}

/* COMMIT when commit, else ROLLBACK (and drop gathered events). Lock
 * held. Returns 0 or -STORE_EIO. */
static int end_locked(struct store *st, int commit, struct fire_list *fl, char *err, size_t errlen)
{
	int rc;

	if (!commit) {
		store_sql_rollback_locked(st);
		fl->n = 0;
		return 0;
	}
	rc = store_sql_commit_locked(st, "commit an approvals change", err, errlen);
	if (rc < 0) {
		fl->n = 0;
		return rc;
	}
	pthread_cond_broadcast(&st->changed);
	return 0;
}

/* ---- create --------------------------------------------------------------------- */

int store_approval_create(struct store *st, const struct store_approval_request *req,
                          struct store_approval *out, char *err, size_t errlen)
{
	static const char sql[] =
	    "INSERT INTO approvals (id, tenant, session, operation, tool, rule, fingerprint,"
	    " summary, state, created_at, expires_at, ttl_ms)"
	    " VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, 'pending', ?9, ?10, ?11)";
	struct fire_list fl = { 0 };
	struct store_approval a;
	int64_t now;
	int commit = 0;
	int locked = 0;
	int rc = 0;

	if (!st || !req || !out) {
		rc = store_set_error(err, errlen, "store_approval_create: missing argument");
		goto out;
	}
	rc = store_check_text("tenant", req->tenant, STORE_TENANT_MAX, 1, err, errlen);
	if (rc == 0)
		rc = store_check_text("summary", req->summary, STORE_SUMMARY_MAX, 1, err, errlen);
	if (rc == 0)
		rc = store_check_text("session", req->session, STORE_SESSION_MAX, 0, err, errlen);
	if (rc == 0 && req->operation_id)
		rc = store_check_id("operation_id", req->operation_id, err, errlen);
	if (rc == 0)
		rc = store_check_text("tool", req->tool, STORE_TOOL_MAX, 0, err, errlen);
	if (rc == 0)
		rc = store_check_text("rule", req->rule, STORE_RULE_MAX, 0, err, errlen);
	if (rc == 0 && !store_is_sha256_hex(req->fingerprint))
		rc = store_set_error(err, errlen,
		                     "the fingerprint must be 64 lowercase hex digits "
		                     "(policy_fingerprint)");
	if (rc == 0 && (req->ttl_ms < 0 || req->ttl_ms > STORE_APPROVAL_TTL_MAX_MS))
		rc = store_set_error(err, errlen,
		                     "an approval's lifetime must be from 1 ms to 24 h");
	if (rc < 0)
		goto out;
	memset(&a, 0, sizeof(a));
	memcpy(a.id, "apr-", 4);
	gb_random_hex(a.id + 4, 10);
	snprintf(a.tenant, sizeof(a.tenant), "%s", req->tenant);
	snprintf(a.session, sizeof(a.session), "%s", gb_or(req->session, ""));
	snprintf(a.operation_id, sizeof(a.operation_id), "%s", gb_or(req->operation_id, ""));
	snprintf(a.tool, sizeof(a.tool), "%s", gb_or(req->tool, ""));
	snprintf(a.rule, sizeof(a.rule), "%s", gb_or(req->rule, ""));
	snprintf(a.fingerprint, sizeof(a.fingerprint), "%s", req->fingerprint);
	snprintf(a.summary, sizeof(a.summary), "%s", req->summary);
	a.state = STORE_APPROVAL_PENDING;
	a.decided_uid = -1;
	a.ttl_ms = req->ttl_ms ? req->ttl_ms : STORE_APPROVAL_TTL_DEFAULT_MS;

	pthread_mutex_lock(&st->lock);
	locked = 1;
	now = store_now_ms(st);
	a.created_ms = now;
	a.expires_ms = now + a.ttl_ms;
	rc = begin_locked(st, now, &fl, err, errlen);
	if (rc < 0)
		goto out;
	{
		const struct store_sql_param p[] = {
			SQL_TEXT(a.id),          SQL_TEXT(a.tenant),
			SQL_TEXT(req->session),  SQL_TEXT(req->operation_id),
			SQL_TEXT(req->tool),     SQL_TEXT(req->rule),
			SQL_TEXT(a.fingerprint), SQL_TEXT(a.summary),
			SQL_INT(a.created_ms),   SQL_INT(a.expires_ms),
			SQL_INT(a.ttl_ms),
		};

		rc = store_sql_exec_locked(st, "record an approval request", sql, p, 11, NULL, err,
		                           errlen);
	}
	if (rc == 0)
		rc = record_event_locked(st, &a, "created", NULL, NULL, NULL, req->operation_id,
		                         now, &fl, err, errlen);
	commit = rc == 0;
	if (end_locked(st, commit, &fl, err, errlen) < 0 && rc == 0)
		rc = -STORE_EIO;
	if (rc == 0)
		*out = a;
out:
	if (locked)
		pthread_mutex_unlock(&st->lock);
	if (st)
		fire_all(st, &fl);
	return rc;
}

/* ---- read ------------------------------------------------------------------------ */

/* Sweeps expiries, then reads approval id. Lock held. */
static int get_locked(struct store *st, const char *tenant, const char *id,
                      struct store_approval *out, struct fire_list *fl, char *err, size_t errlen)
{
	int rc = begin_locked(st, store_now_ms(st), fl, err, errlen);
	int rc2;

	if (rc < 0)
		return rc;
	rc = read_approval_locked(st, tenant, id, out, err, errlen);
	rc2 = end_locked(st, 1, fl, err, errlen);
	return rc < 0 ? rc : rc2;
}

int store_approval_get(struct store *st, const char *tenant, const char *id,
                       struct store_approval *out, char *err, size_t errlen)
{
	struct fire_list fl = { 0 };
	int rc;

	if (!st || !out)
		return store_set_error(err, errlen, "store_approval_get: missing argument");
	rc = store_check_id("approval id", id, err, errlen);
	if (rc < 0)
		return rc;
	pthread_mutex_lock(&st->lock);
	rc = get_locked(st, tenant, id, out, &fl, err, errlen);
	pthread_mutex_unlock(&st->lock);
	fire_all(st, &fl);
	return rc;
}

int store_approval_list(struct store *st, const struct store_approval_query *q,
                        store_approval_cb cb, void *user, char *err, size_t errlen)
{
	static const char sql[] =
	    "SELECT " APPROVAL_COLS " FROM approvals WHERE (?1 IS NULL OR tenant = ?1)"
	    " AND (?2 IS NULL OR session = ?2) AND (?3 = 0 OR state = 'pending')"
	    " ORDER BY created_at DESC, rowid DESC LIMIT ?4";
	struct fire_list fl = { 0 };
	struct store_approval *rows = NULL;
	struct store_sql_rows *r = NULL;
	size_t limit;
	size_t n = 0;
	size_t i;
	int rc = 0;

	if (!st || !q || !cb)
		return store_set_error(err, errlen, "store_approval_list: missing argument");
	limit = q->limit ? q->limit : LIST_DEFAULT;
	if (limit > LIST_MAX)
		limit = LIST_MAX;
	rows = calloc(limit, sizeof(*rows));
	if (!rows) {
		store_set_error(err, errlen, "out of memory listing approvals");
		return -STORE_ENOMEM;
	}
	pthread_mutex_lock(&st->lock);
	rc = begin_locked(st, store_now_ms(st), &fl, err, errlen);
	if (rc < 0)
		goto unlock;
	rc = end_locked(st, 1, &fl, err, errlen);
	if (rc < 0)
		goto unlock;
	{
		const struct store_sql_param p[] = { SQL_TEXT(q->tenant), SQL_TEXT(q->session),
			                             SQL_INT(q->pending_only ? 1 : 0),
			                             SQL_INT(limit) };

		rc = store_sql_query_locked(st, "list approvals", sql, p, 4, &r, err, errlen);
	}
	while (rc == 0 && n < limit) {
		rc = store_sql_next(st, r, err, errlen);
		if (rc != 1)
			break;
		read_row(st, r, &rows[n++]);
		rc = 0;
	}
	if (rc > 0)
		rc = 0;
	store_sql_done(st, r);
unlock:
	pthread_mutex_unlock(&st->lock);
	fire_all(st, &fl);
	for (i = 0; rc == 0 && i < n; i++) {
		if (cb(&rows[i], user))
			break;
	}
	free(rows);
	return rc;
}

/* ---- decide ---------------------------------------------------------------------- */

/* Explains why approval a (not pending, or expired) cannot be decided. */
static int cannot_decide(const struct store_approval *a, char *err, size_t errlen)
{
	char when[32];

	if (a->state == STORE_APPROVAL_EXPIRED) {
		store_time_iso8601(a->expires_ms, when, sizeof(when));
		store_set_error(err, errlen,
		                "approval %s expired at %s before anyone decided: the "
		                "agent has to ask again",
		                a->id, when);
	} else {
		store_time_iso8601(a->decided_ms, when, sizeof(when));
		store_set_error(err, errlen,
		                "approval %s was already %s by %s at %s: a decision cannot "
		                "be changed",
		                a->id, a->state == STORE_APPROVAL_DENIED ? "denied" : "approved",
		                a->decided_by[0] ? a->decided_by : "someone", when);
	}
	return -STORE_ESTATE;
}

int store_approval_decide(struct store *st, const char *tenant, const char *id, int approve,
                          const struct store_decider *who, struct store_approval *out, char *err,
                          size_t errlen)
{
	static const char sql[] =
	    "UPDATE approvals SET state = ?1, decided_at = ?2, decided_by = ?3, channel = ?4,"
	    " decided_uid = ?5, reason = ?6,"
	    " expires_at = CASE WHEN ?1 = 'approved' THEN ?2 + ttl_ms ELSE expires_at END"
	    " WHERE id = ?7 AND (?8 IS NULL OR tenant = ?8) AND state = 'pending'"
	    " AND expires_at > ?2";
	struct fire_list fl = { 0 };
	struct store_approval a;
	int64_t changed = 0;
	int64_t now;
	int commit = 0;
	int rc;

	if (!st || !who)
		return store_set_error(err, errlen, "store_approval_decide: missing argument");
	rc = store_check_id("approval id", id, err, errlen);
	if (rc == 0)
		rc = store_check_text("the decider's name", who->by, STORE_BY_MAX, 1, err, errlen);
	if (rc == 0)
		rc = store_check_text("the channel", who->channel, STORE_CHANNEL_MAX, 1, err,
		                      errlen);
	if (rc == 0)
		rc = store_check_text("the reason", who->reason, STORE_REASON_MAX, 0, err, errlen);
	if (rc < 0)
		return rc;
	pthread_mutex_lock(&st->lock);
	now = store_now_ms(st);
	rc = begin_locked(st, now, &fl, err, errlen);
	if (rc < 0)
		goto unlock;
	{
		struct store_sql_param p[] = {
			SQL_TEXT(approve ? "approved" : "denied"),
			SQL_INT(now),
			SQL_TEXT(who->by),
			SQL_TEXT(who->channel),
			SQL_INT(who->uid),
			SQL_TEXT(who->reason),
			SQL_TEXT(id),
			SQL_TEXT(tenant),
		};

		p[4].null = who->uid < 0;
		rc = store_sql_exec_locked(st, "record a decision", sql, p, 8, &changed, err,
		                           errlen);
	}
	if (rc < 0)
		goto end;
	if (changed == 1) {
		rc = read_approval_locked(st, tenant, id, &a, err, errlen);
		if (rc == 0)
			rc = record_event_locked(st, &a, approve ? "approved" : "denied", who->by,
			                         who->channel, who->reason, NULL, now, &fl, err,
			                         errlen);
		commit = rc == 0;
		goto end;
	}
	/* not decided: say why (commit the sweep's expiries all the same) */
	commit = 1;
	rc = read_approval_locked(st, tenant, id, &a, err, errlen);
	if (rc == 0)
		rc = cannot_decide(&a, err, errlen);
end:
	if (end_locked(st, commit, &fl, err, errlen) < 0 && rc == 0)
		rc = -STORE_EIO;
	if (rc == 0 && out)
		*out = a;
unlock:
	pthread_mutex_unlock(&st->lock);
	fire_all(st, &fl);
	return rc;
}

/* ---- consume --------------------------------------------------------------------- */

/* Says why approval a cannot be used (the conditional UPDATE did not
 * match it, so when it is approved and unexpired the fingerprint differs). */
static enum store_refusal refusal_of(const struct store_approval *a, int64_t now, char *err,
                                     size_t errlen)
{
	char when[32];

	switch (a->state) {
	case STORE_APPROVAL_PENDING:
		store_set_error(
		    err, errlen,
		    "approval %s has not been decided yet: a person must "
		    "approve it first (`glassbox approvals approve %s`); repeat this call "
		    "once it is approved",
		    a->id, a->id);
		return STORE_REFUSE_PENDING;
	case STORE_APPROVAL_DENIED:
		store_set_error(err, errlen,
		                "approval %s was denied by %s%s%.200s: do not repeat this "
		                "action",
		                a->id, a->decided_by[0] ? a->decided_by : "a person",
		                a->reason[0] ? ": " : "", a->reason);
		return STORE_REFUSE_DENIED;
	case STORE_APPROVAL_USED:
		store_time_iso8601(a->used_ms, when, sizeof(when));
		store_set_error(err, errlen,
		                "approval %s was already used (operation %s at %s): an "
		                "approval authorizes one action once; call the tool without "
		                "\"approval\" to ask for a new one",
		                a->id, a->used_by_operation[0] ? a->used_by_operation : "?", when);
		return STORE_REFUSE_USED;
	case STORE_APPROVAL_EXPIRED:
		store_set_error(err, errlen,
		                "approval %s has expired: call the tool without "
		                "\"approval\" to ask for a new one",
		                a->id);
		return STORE_REFUSE_EXPIRED;
	case STORE_APPROVAL_APPROVED:
	default:
		break;
	}
	if (a->expires_ms <= now) {
		store_set_error(err, errlen,
		                "approval %s has expired: call the tool without "
		                "\"approval\" to ask for a new one",
		                a->id);
		return STORE_REFUSE_EXPIRED;
	}
	store_set_error(
	    err, errlen,
	    "approval %s was granted for another action (%.300s); this "
	    "call is not that action: the page, the target or the value changed. The "
	    "approval was not used; call the tool without \"approval\" to ask for a new "
	    "one",
	    a->id, a->summary);
	return STORE_REFUSE_MISMATCH;
}

int store_approval_consume(struct store *st, const char *tenant, const char *id,
                           const char *fingerprint, const char *operation_id,
                           struct store_approval *out, enum store_refusal *why, char *err,
                           size_t errlen)
{
	static const char sql[] =
	    "UPDATE approvals SET state = 'used', used_at = ?1, used_by_operation = ?2"
	    " WHERE id = ?3 AND tenant = ?4 AND state = 'approved' AND expires_at > ?1"
	    " AND fingerprint = ?5";
	struct fire_list fl = { 0 };
	struct store_approval a;
	enum store_refusal r = STORE_REFUSE_NONE;
	int64_t changed = 0;
	int64_t now;
	int commit = 0;
	int rc;

	if (why)
		*why = STORE_REFUSE_NONE;
	if (!st || !fingerprint)
		return store_set_error(err, errlen, "store_approval_consume: missing argument");
	rc = store_check_text("tenant", tenant, STORE_TENANT_MAX, 1, err, errlen);
	if (rc == 0)
		rc = store_check_id("approval", id, err, errlen);
	if (rc == 0 && operation_id)
		rc = store_check_id("operation_id", operation_id, err, errlen);
	if (rc < 0)
		return rc;
	pthread_mutex_lock(&st->lock);
	now = store_now_ms(st);
	rc = begin_locked(st, now, &fl, err, errlen);
	if (rc < 0)
		goto unlock;
	{
		const struct store_sql_param p[] = { SQL_INT(now), SQL_TEXT(operation_id),
			                             SQL_TEXT(id), SQL_TEXT(tenant),
			                             SQL_TEXT(fingerprint) };

		rc = store_sql_exec_locked(st, "use an approval", sql, p, 5, &changed, err, errlen);
	}
	if (rc < 0)
		goto end;
	if (changed == 1) {
		rc = read_approval_locked(st, tenant, id, &a, err, errlen);
		if (rc == 0)
			rc = record_event_locked(st, &a, "used", NULL, NULL, NULL, operation_id,
			                         now, &fl, err, errlen);
		commit = rc == 0;
		goto end;
	}
	/* refused: say why, and record it (the approval stays as it was) */
	commit = 1;
	rc = read_approval_locked(st, tenant, id, &a, err, errlen);
	if (rc == -STORE_ENOTFOUND) {
		r = STORE_REFUSE_NOT_FOUND;
		store_set_error(err, errlen,
		                "there is no approval %.80s for this tenant: call the tool "
		                "without \"approval\" to ask for one",
		                id);
		rc = -STORE_EREFUSED;
		GB_LOGW("store",
		        "tenant %s tried to use approval %s, which is not theirs or does not "
		        "exist",
		        tenant, id);
		goto end;
	}
	if (rc < 0)
		goto end;
	r = refusal_of(&a, now, err, errlen);
	rc = record_event_locked(st, &a, "refused", NULL, NULL, store_refusal_name(r), operation_id,
	                         now, &fl, err, errlen);
	if (rc == 0)
		rc = -STORE_EREFUSED;
end:
	if (end_locked(st, commit, &fl, err, errlen) < 0 && (rc == 0 || rc == -STORE_EREFUSED))
		rc = -STORE_EIO;
	if ((rc == 0 || rc == -STORE_EREFUSED) && out && r != STORE_REFUSE_NOT_FOUND)
		*out = a;
	if (why)
		*why = r;
unlock:
	pthread_mutex_unlock(&st->lock);
	fire_all(st, &fl);
	return rc;
}

/* ---- expiry, waiting, history ------------------------------------------------------ */

int store_approval_expire(struct store *st, size_t *expired, char *err, size_t errlen)
{
	struct fire_list fl = { 0 };
	size_t n = 0;
	int rc;

	if (expired)
		*expired = 0;
	if (!st)
		return store_set_error(err, errlen, "store_approval_expire: missing argument");
	pthread_mutex_lock(&st->lock);
	rc = store_sql_begin_locked(st, "start expiring approvals", err, errlen);
	if (rc == 0) {
		rc = sweep_locked(st, store_now_ms(st), &n, &fl, err, errlen);
		if (end_locked(st, rc == 0, &fl, err, errlen) < 0 && rc == 0)
			rc = -STORE_EIO;
	}
	pthread_mutex_unlock(&st->lock);
	fire_all(st, &fl);
	if (expired && rc == 0)
		*expired = n;
	return rc;
}

int store_approval_wait(struct store *st, const char *tenant, const char *id, int timeout_ms,
                        struct store_approval *out, char *err, size_t errlen)
{
	struct fire_list fl = { 0 };
	int64_t deadline = gb_now_ms() + (timeout_ms > 0 ? timeout_ms : 0);
	int rc;

	if (!st || !out)
		return store_set_error(err, errlen, "store_approval_wait: missing argument");
	rc = store_check_id("approval id", id, err, errlen);
	if (rc < 0)
		return rc;
	pthread_mutex_lock(&st->lock);
	for (;;) {
		int64_t left;

		rc = get_locked(st, tenant, id, out, &fl, err, errlen);
		if (rc < 0 || out->state != STORE_APPROVAL_PENDING)
			break;
		left = deadline - gb_now_ms();
		if (left <= 0)
			break;
		/* woken by this process's decisions; polls for other processes' */
		store_wait_changed_locked(st, left < 200 ? (int)left : 200);
	}
	pthread_mutex_unlock(&st->lock);
	fire_all(st, &fl);
	return rc;
}

/* One row of history, copied out of the database. */
struct history_row {
	int64_t seq;
	int64_t time_ms;
	char approval_id[STORE_ID_MAX + 1];
	char tenant[STORE_TENANT_MAX + 1];
	char event[16];
	char by[STORE_BY_MAX + 1];
	char channel[STORE_CHANNEL_MAX + 1];
	char reason[STORE_REASON_MAX + 1];
	char operation[STORE_ID_MAX + 1];
};

int store_approval_history(struct store *st, const char *id, store_approval_event_cb cb, void *user,
                           char *err, size_t errlen)
{
	static const char sql[] =
	    "SELECT seq, time, approval_id, tenant, event, actor, channel, reason, operation"
	    " FROM approval_events WHERE approval_id = ?1 ORDER BY seq LIMIT " STORE_STR(LIST_MAX);
	struct history_row *rows = NULL;
	struct store_sql_rows *r = NULL;
	const struct store_sql_param p[] = { SQL_TEXT(id) };
	size_t n = 0;
	size_t i;
	int rc;

	if (!st || !cb)
		return store_set_error(err, errlen, "store_approval_history: missing argument");
	rc = store_check_id("approval id", id, err, errlen);
	if (rc < 0)
		return rc;
	rows = calloc(LIST_MAX, sizeof(*rows));
	if (!rows) {
		store_set_error(err, errlen, "out of memory reading an approval's history");
		return -STORE_ENOMEM;
	}
	pthread_mutex_lock(&st->lock);
	rc = store_sql_query_locked(st, "read an approval's history", sql, p, 1, &r, err, errlen);
	while (rc == 0 && n < LIST_MAX) {
		struct history_row *h;

		rc = store_sql_next(st, r, err, errlen);
		if (rc != 1)
			break;
		rc = 0;
		h = &rows[n++];
		h->seq = store_sql_int(st, r, 0);
		h->time_ms = store_sql_int(st, r, 1);
		store_sql_copy(st, r, 2, h->approval_id, sizeof(h->approval_id));
		store_sql_copy(st, r, 3, h->tenant, sizeof(h->tenant));
		store_sql_copy(st, r, 4, h->event, sizeof(h->event));
		store_sql_copy(st, r, 5, h->by, sizeof(h->by));
		store_sql_copy(st, r, 6, h->channel, sizeof(h->channel));
		store_sql_copy(st, r, 7, h->reason, sizeof(h->reason));
		store_sql_copy(st, r, 8, h->operation, sizeof(h->operation));
	}
	if (rc > 0)
		rc = 0;
	store_sql_done(st, r);
	pthread_mutex_unlock(&st->lock);
	for (i = 0; rc == 0 && i < n; i++) {
		struct store_approval_event ev = {
			.seq = rows[i].seq,
			.time_ms = rows[i].time_ms,
			.approval_id = rows[i].approval_id,
			.tenant = rows[i].tenant,
			.event = rows[i].event,
			.by = rows[i].by,
			.channel = rows[i].channel,
			.reason = rows[i].reason,
			.operation_id = rows[i].operation,
			.approval = NULL,
		};

		if (cb(&ev, user))
			break;
	}
	free(rows);
	return rc;
}

void store_set_approval_hook(struct store *st, store_approval_hook hook, void *user)
{
	if (!st)
		return;
	st->hook = hook;
	st->hook_user = user;
}

/* ---- JSON ------------------------------------------------------------------------ */

/* Sets key to s unless s is empty. */
static void set_str(json_t *o, const char *key, const char *s)
{
	if (s && s[0])
		json_object_set_new(o, key, json_string(s));
}

/* Sets key to the time ms unless it is 0. */
static void set_time(json_t *o, const char *key, int64_t ms)
{
	char buf[40];

	store_time_iso8601(ms, buf, sizeof(buf));
	set_str(o, key, buf);
}

json_t *store_approval_to_json(const struct store_approval *a)
{
	json_t *o;

	if (!a)
		return NULL;
	o = json_object();
	if (!o)
		return NULL;
	set_str(o, "id", a->id);
	set_str(o, "tenant", a->tenant);
	set_str(o, "session", a->session);
	set_str(o, "operation_id", a->operation_id);
	set_str(o, "tool", a->tool);
	set_str(o, "rule", a->rule);
	set_str(o, "fingerprint", a->fingerprint);
	set_str(o, "summary", a->summary);
	set_str(o, "state", store_approval_state_name(a->state));
	set_time(o, "created_at", a->created_ms);
	set_time(o, "expires_at", a->expires_ms);
	set_time(o, "decided_at", a->decided_ms);
	set_str(o, "decided_by", a->decided_by);
	set_str(o, "channel", a->channel);
	set_str(o, "reason", a->reason);
	set_time(o, "used_at", a->used_ms);
	set_str(o, "used_by_operation", a->used_by_operation);
	return o;
}

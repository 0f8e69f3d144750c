/*
 * registry.c - the session registry (store.h): which replica owns which
 * session. A claim is an INSERT on the session's primary key, so two
 * replicas can never both own one session; the row names the claiming
 * handle's instance, whose liveness the backend can tell (db.c), so the
 * orphans of a replica that died are found and handed back to it when
 * it starts again.
 */
#include "store/store-private.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SESSION_COLS "session, tenant, replica, instance, browser_pid, created_at, heartbeat_at"
#define REAP_MAX 1000

static void read_session(struct store *st, struct store_sql_rows *r, struct store_session *s)
{
	memset(s, 0, sizeof(*s));
	store_sql_copy(st, r, 0, s->session, sizeof(s->session));
	store_sql_copy(st, r, 1, s->tenant, sizeof(s->tenant));
	store_sql_copy(st, r, 2, s->replica, sizeof(s->replica));
	store_sql_copy(st, r, 3, s->instance, sizeof(s->instance));
	s->browser_pid = store_sql_int(st, r, 4);
	s->created_ms = store_sql_int(st, r, 5);
	s->heartbeat_ms = store_sql_int(st, r, 6);
}

/* Reads one session's row. Lock held. 0, -STORE_ENOTFOUND, -STORE_EIO. */
static int read_session_locked(struct store *st, const char *session, struct store_session *s,
                               char *err, size_t errlen)
{
	static const char sql[] =
	    "SELECT " SESSION_COLS " FROM session_registry WHERE session = ?1";
	const struct store_sql_param p[] = { SQL_TEXT(session) };
	struct store_sql_rows *r = NULL;
	int rc;

	rc = store_sql_query_locked(st, "read the session registry", sql, p, 1, &r, err, errlen);
	if (rc == 0)
		rc = store_sql_next(st, r, err, errlen);
	if (rc == 1) {
		read_session(st, r, s);
		rc = 0;
	} else if (rc == 0) {
		store_set_error(err, errlen, "session %.80s is not registered on any replica",
		                session);
		rc = -STORE_ENOTFOUND;
	}
	store_sql_done(st, r);
	return rc;
}

int store_session_claim(struct store *st, const char *tenant, const char *session,
                        int64_t browser_pid, char *err, size_t errlen)
{
	static const char sql[] =
	    "INSERT INTO session_registry (session, tenant, replica, instance, browser_pid,"
	    " created_at, heartbeat_at) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?6) ON CONFLICT DO NOTHING";
	struct store_session other;
	int64_t changed = 0;
	int rc;

	if (!st)
		return store_set_error(err, errlen, "store_session_claim: missing argument");
	rc = store_check_text("tenant", tenant, STORE_TENANT_MAX, 1, err, errlen);
	if (rc == 0)
		rc = store_check_text("session", session, STORE_SESSION_MAX, 1, err, errlen);
	if (rc < 0)
		return rc;
	pthread_mutex_lock(&st->lock);
	{
		const struct store_sql_param p[] = {
			SQL_TEXT(session),
			SQL_TEXT(tenant),
			SQL_TEXT(st->replica),
			SQL_TEXT(st->instance),
			SQL_INT(browser_pid > 0 ? browser_pid : 0),
			SQL_INT(store_now_ms(st)),
		};

		rc = store_sql_exec_locked(st, "claim a session", sql, p, 6, &changed, err, errlen);
	}
	if (rc == 0 && changed != 1) {
		rc = read_session_locked(st, session, &other, err, errlen);
		if (rc == 0) {
			store_set_error(err, errlen,
			                "session %.80s is already registered, on replica %s: a "
			                "session lives on one replica",
			                session, other.replica);
			rc = -STORE_ECONFLICT;
		}
	}
	pthread_mutex_unlock(&st->lock);
	return rc;
}

int store_session_heartbeat(struct store *st, const char *session, int64_t browser_pid, char *err,
                            size_t errlen)
{
	static const char sql[] = "UPDATE session_registry SET heartbeat_at = ?3,"
	                          " browser_pid = CASE WHEN ?4 >= 0 THEN ?4 ELSE browser_pid END"
	                          " WHERE session = ?1 AND instance = ?2";
	int64_t changed = 0;
	int rc;

	if (!st)
		return store_set_error(err, errlen, "store_session_heartbeat: missing argument");
	rc = store_check_text("session", session, STORE_SESSION_MAX, 1, err, errlen);
	if (rc < 0)
		return rc;
	pthread_mutex_lock(&st->lock);
	{
		const struct store_sql_param p[] = { SQL_TEXT(session), SQL_TEXT(st->instance),
			                             SQL_INT(store_now_ms(st)),
			                             SQL_INT(browser_pid) };

		rc = store_sql_exec_locked(st, "update a session's heartbeat", sql, p, 4, &changed,
		                           err, errlen);
	}
	pthread_mutex_unlock(&st->lock);
	if (rc == 0 && changed != 1) {
		store_set_error(err, errlen, "session %.80s is not registered by this replica",
		                session);
		rc = -STORE_ENOTFOUND;
	}
	return rc;
}

int store_session_release(struct store *st, const char *session, char *err, size_t errlen)
{
	static const char sql[] =
	    "DELETE FROM session_registry WHERE session = ?1 AND instance = ?2";
	int rc;

	if (!st)
		return store_set_error(err, errlen, "store_session_release: missing argument");
	rc = store_check_text("session", session, STORE_SESSION_MAX, 1, err, errlen);
	if (rc < 0)
		return rc;
	pthread_mutex_lock(&st->lock);
	{
		const struct store_sql_param p[] = { SQL_TEXT(session), SQL_TEXT(st->instance) };

		rc = store_sql_exec_locked(st, "release a session", sql, p, 2, NULL, err, errlen);
	}
	pthread_mutex_unlock(&st->lock);
	return rc;
}

int store_session_owner(struct store *st, const char *session, struct store_session *out, char *err,
                        size_t errlen)
{
	int rc;

	if (!st || !out)
		return store_set_error(err, errlen, "store_session_owner: missing argument");
	rc = store_check_text("session", session, STORE_SESSION_MAX, 1, err, errlen);
	if (rc < 0)
		return rc;
	pthread_mutex_lock(&st->lock);
	rc = read_session_locked(st, session, out, err, errlen);
	if (rc == 0)
		out->alive = store_owner_alive_locked(st, out->instance);
	pthread_mutex_unlock(&st->lock);
	return rc;
}

int store_session_reap(struct store *st, store_session_cb cb, void *user, size_t *reaped, char *err,
                       size_t errlen)
{
	static const char select_sql[] =
	    "SELECT " SESSION_COLS " FROM session_registry WHERE replica = ?1 AND instance <> ?2"
	    " ORDER BY created_at LIMIT " STORE_STR(REAP_MAX);
	static const char delete_sql[] =
	    "DELETE FROM session_registry WHERE session = ?1 AND instance = ?2";
	const struct store_sql_param p[] = { SQL_TEXT(st ? st->replica : NULL),
		                             SQL_TEXT(st ? st->instance : NULL) };
	struct store_session *v = NULL;
	struct store_sql_rows *r = NULL;
	size_t n = 0;
	size_t done = 0;
	size_t i;
	int rc;

	if (reaped)
		*reaped = 0;
	if (!st || !cb)
		return store_set_error(err, errlen, "store_session_reap: missing argument");
	v = calloc(REAP_MAX, sizeof(*v));
	if (!v) {
		store_set_error(err, errlen, "out of memory reading the session registry");
		return -STORE_ENOMEM;
	}
	pthread_mutex_lock(&st->lock);
	rc = store_sql_query_locked(st, "read the session registry", select_sql, p, 2, &r, err,
	                            errlen);
	while (rc == 0 && n < REAP_MAX) {
		rc = store_sql_next(st, r, err, errlen);
		if (rc != 1)
			break;
		rc = 0;
		read_session(st, r, &v[n]);
		if (!store_owner_alive_locked(st, v[n].instance))
			n++;
	}
	if (rc > 0)
		rc = 0;
	store_sql_done(st, r);
	pthread_mutex_unlock(&st->lock);
	for (i = 0; rc == 0 && i < n; i++) {
		const struct store_sql_param d[] = { SQL_TEXT(v[i].session),
			                             SQL_TEXT(v[i].instance) };

		cb(&v[i], user);
		pthread_mutex_lock(&st->lock);
		rc = store_sql_exec_locked(st, "remove a reaped session", delete_sql, d, 2, NULL,
		                           err, errlen);
		pthread_mutex_unlock(&st->lock);
		if (rc == 0)
			done++;
	}
	free(v);
	if (reaped)
		*reaped = done;
	return rc;
}

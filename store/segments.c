/*
 * segments.c - the heads of the audit segments (store.h, "audit segment
 * heads"): one row per (tenant, segment), ordered by seq, which the
 * database hands out (AUTOINCREMENT / BIGSERIAL) so that two replicas
 * registering at once get distinct places in the order. The head moves
 * by compare-and-set on the record count, one UPDATE: a writer that is
 * behind (a lost update, a second writer of one segment) is refused
 * instead of forking the chain.
 */
#include "store/store-private.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SEGMENT_COLS "seq, tenant, replica, segment, head_hash, records, opened_at, updated_at"
#define LIST_MAX 100000

/* Checks a segment name: 1..STORE_SEGMENT_MAX of [A-Za-z0-9._:/-], not
 * starting with '/' and without "..". */
static int check_segment(const char *s, char *err, size_t errlen)
{
	size_t i;

	if (!s || !s[0] || s[0] == '/' || strstr(s, ".."))
		goto bad;
	for (i = 0; s[i]; i++) {
		char c = s[i];

		if (i >= STORE_SEGMENT_MAX ||
		    !((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
		      c == '.' || c == '_' || c == ':' || c == '/' || c == '-'))
			goto bad;
	}
	return 0;
bad:
	return store_set_error(err, errlen,
	                       "the segment name \"%.80s\" is not valid: use 1 to %d letters, "
	                       "digits, '.', '_', ':', '/' or '-', not starting with '/', "
	                       "without \"..\"",
	                       s ? s : "", STORE_SEGMENT_MAX);
}

static void read_segment(struct store *st, struct store_sql_rows *r, struct store_audit_segment *g)
{
	memset(g, 0, sizeof(*g));
	g->seq = store_sql_int(st, r, 0);
	store_sql_copy(st, r, 1, g->tenant, sizeof(g->tenant));
	store_sql_copy(st, r, 2, g->replica, sizeof(g->replica));
	store_sql_copy(st, r, 3, g->segment, sizeof(g->segment));
	store_sql_copy(st, r, 4, g->head_hash, sizeof(g->head_hash));
	g->records = store_sql_int(st, r, 5);
	g->opened_ms = store_sql_int(st, r, 6);
	g->updated_ms = store_sql_int(st, r, 7);
}

/* Reads (tenant, segment). Lock held. 0, -STORE_ENOTFOUND, -STORE_EIO. */
static int read_segment_locked(struct store *st, const char *tenant, const char *segment,
                               struct store_audit_segment *g, char *err, size_t errlen)
{
	static const char sql[] =
	    "SELECT " SEGMENT_COLS " FROM audit_segments WHERE tenant = ?1 AND segment = ?2";
	const struct store_sql_param p[] = { SQL_TEXT(tenant), SQL_TEXT(segment) };
	struct store_sql_rows *r = NULL;
	int rc;

	rc = store_sql_query_locked(st, "read an audit segment", sql, p, 2, &r, err, errlen);
	if (rc == 0)
		rc = store_sql_next(st, r, err, errlen);
	if (rc == 1) {
		read_segment(st, r, g);
		rc = 0;
	} else if (rc == 0) {
		store_set_error(err, errlen, "tenant %s has no audit segment %.80s", tenant,
		                segment);
		rc = -STORE_ENOTFOUND;
	}
	store_sql_done(st, r);
	return rc;
}

int store_audit_segment_register(struct store *st, const char *tenant, const char *segment,
                                 struct store_audit_segment *out, char *err, size_t errlen)
{
	static const char sql[] =
	    "INSERT INTO audit_segments (tenant, replica, segment, head_hash, records, opened_at,"
	    " updated_at) VALUES (?1, ?2, ?3, '', 0, ?4, ?4) ON CONFLICT DO NOTHING";
	struct store_audit_segment g;
	int rc;

	if (!st)
		return store_set_error(err, errlen,
		                       "store_audit_segment_register: missing argument");
	rc = store_check_text("tenant", tenant, STORE_TENANT_MAX, 1, err, errlen);
	if (rc == 0)
		rc = check_segment(segment, err, errlen);
	if (rc < 0)
		return rc;
	pthread_mutex_lock(&st->lock);
	{
		const struct store_sql_param p[] = { SQL_TEXT(tenant), SQL_TEXT(st->replica),
			                             SQL_TEXT(segment), SQL_INT(store_now_ms(st)) };

		rc = store_sql_exec_locked(st, "register an audit segment", sql, p, 4, NULL, err,
		                           errlen);
	}
	if (rc == 0)
		rc = read_segment_locked(st, tenant, segment, &g, err, errlen);
	if (rc == 0 && strcmp(g.replica, st->replica) != 0) {
		store_set_error(err, errlen,
		                "audit segment %s of tenant %s is written by replica %s, not %s: "
		                "each replica writes segments of its own name",
		                segment, tenant, g.replica, st->replica);
		rc = -STORE_ECONFLICT;
	}
	pthread_mutex_unlock(&st->lock);
	if (rc == 0 && out)
		*out = g;
	return rc;
}

int store_audit_segment_advance(struct store *st, const char *tenant, const char *segment,
                                int64_t expected_records, int64_t records, const char *head_hash,
                                char *err, size_t errlen)
{
	static const char sql[] =
	    "UPDATE audit_segments SET records = ?4, head_hash = ?5, updated_at = ?6"
	    " WHERE tenant = ?1 AND segment = ?2 AND replica = ?3 AND records = ?7";
	struct store_audit_segment g;
	int64_t changed = 0;
	int rc;

	if (!st)
		return store_set_error(err, errlen,
		                       "store_audit_segment_advance: missing argument");
	rc = store_check_text("tenant", tenant, STORE_TENANT_MAX, 1, err, errlen);
	if (rc == 0)
		rc = check_segment(segment, err, errlen);
	if (rc == 0 && !store_is_sha256_hex(head_hash))
		rc = store_set_error(err, errlen, "the head hash must be 64 lowercase hex digits");
	if (rc == 0 && (expected_records < 0 || records <= expected_records))
		rc = store_set_error(err, errlen,
		                     "a segment's head only moves forward: %lld records after "
		                     "%lld",
		                     (long long)records, (long long)expected_records);
	if (rc < 0)
		return rc;
	pthread_mutex_lock(&st->lock);
	{
		const struct store_sql_param p[] = {
			SQL_TEXT(tenant),          SQL_TEXT(segment),   SQL_TEXT(st->replica),
			SQL_INT(records),          SQL_TEXT(head_hash), SQL_INT(store_now_ms(st)),
			SQL_INT(expected_records),
		};

		rc = store_sql_exec_locked(st, "advance an audit segment's head", sql, p, 7,
		                           &changed, err, errlen);
	}
	if (rc == 0 && changed != 1) {
		rc = read_segment_locked(st, tenant, segment, &g, err, errlen);
		if (rc == 0) {
			store_set_error(err, errlen,
			                "audit segment %s of tenant %s is at %lld records (replica "
			                "%s), not %lld: its head was moved by someone else; stop "
			                "writing it and open a new segment",
			                segment, tenant, (long long)g.records, g.replica,
			                (long long)expected_records);
			rc = -STORE_ESTATE;
		}
	}
	pthread_mutex_unlock(&st->lock);
	return rc;
}

int store_audit_segment_list(struct store *st, const char *tenant, store_audit_segment_cb cb,
                             void *user, char *err, size_t errlen)
{
	static const char sql[] = "SELECT " SEGMENT_COLS " FROM audit_segments WHERE tenant = ?1"
	                          " ORDER BY seq LIMIT " STORE_STR(LIST_MAX);
	const struct store_sql_param p[] = { SQL_TEXT(tenant) };
	struct store_audit_segment *v = NULL;
	struct store_sql_rows *r = NULL;
	size_t n = 0;
	size_t cap = 0;
	size_t i;
	int rc;

	if (!st || !cb)
		return store_set_error(err, errlen, "store_audit_segment_list: missing argument");
	rc = store_check_text("tenant", tenant, STORE_TENANT_MAX, 1, err, errlen);
	if (rc < 0)
		return rc;
	pthread_mutex_lock(&st->lock);
	rc = store_sql_query_locked(st, "list audit segments", sql, p, 1, &r, err, errlen);
	while (rc == 0) {
		rc = store_sql_next(st, r, err, errlen);
		if (rc != 1)
			break;
		rc = 0;
		if (n == cap) {
			size_t grown_cap = cap ? cap * 2 : 16;
			struct store_audit_segment *grown = realloc(v, grown_cap * sizeof(*v));

			if (!grown) {
				store_set_error(err, errlen,
				                "out of memory listing audit segments");
				rc = -STORE_ENOMEM;
				break;
			}
			v = grown;
			cap = grown_cap;
		}
		read_segment(st, r, &v[n++]);
	}
	store_sql_done(st, r);
	pthread_mutex_unlock(&st->lock);
	for (i = 0; rc == 0 && i < n; i++) {
		if (cb(&v[i], user))
			break;
	}
	free(v);
	return rc;
}

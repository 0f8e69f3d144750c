/*
 * ledger.c - the operation ledger (store.h): one row per tool call,
 * keyed by (tenant, operation id), so that a client's operation_id is an
 * idempotency key that survives a restart.
 *
 * States: pending (begun) -> running (marked just before acting) -> done
 * | failed | unknown. The row remembers whether the operation ever acted
 * (acted = 1 once running); that is what decides whether a failed
 * operation may run again under the same id.
 *
 * Waiting: a second caller with the id of an operation in flight waits
 * on st->changed, which store_op_finish broadcasts in this process, and
 * re-reads the row at least every 100 ms for other processes. While
 * waiting it checks every second whether the owner is a dead process of this
 * machine or, with PostgreSQL, replica (db.c) and, if so, closes the
 * operation for it.
 */
#include "store/store-private.h"

#include "common/log.h"
#include "common/util.h"

#include <assert.h>
#include <sodium.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define OP_COLS                                                                                 \
	"tenant, id, session, tool, args_hash, state, acted, attempts, created_at, started_at," \
	" finished_at, result, note, owner"

/* How often a waiter re-reads the row, and asks whether its owner is
 * alive, ms. */
#define POLL_MS 100
#define OWNER_CHECK_MS 1000

static const char *const op_state_names[] = { "pending", "running", "done", "failed", "unknown" };

const char *store_op_state_name(enum store_op_state s)
{
	if ((int)s < 0 || (size_t)s >= sizeof(op_state_names) / sizeof(op_state_names[0]))
		return "unknown";
	return op_state_names[s];
}

static enum store_op_state op_state_from_text(const char *t)
{
	size_t i;

	for (i = 0; t && i < sizeof(op_state_names) / sizeof(op_state_names[0]); i++) {
		if (!strcmp(t, op_state_names[i]))
			return (enum store_op_state)i;
	}
	return STORE_OP_UNKNOWN;
}

void store_op_clear(struct store_op *op)
{
	if (!op)
		return;
	json_decref(op->result);
	op->result = NULL;
}

/* Fills op from a row selected with OP_COLS; owner (may be NULL) receives
 * the owning instance. */
static void read_op_row(struct store *st, struct store_sql_rows *s, struct store_op *op,
                        char *owner, size_t ownerlen)
{
	const char *result;

	store_op_clear(op);
	memset(op, 0, sizeof(*op));
	store_sql_copy(st, s, 0, op->tenant, sizeof(op->tenant));
	store_sql_copy(st, s, 1, op->id, sizeof(op->id));
	store_sql_copy(st, s, 2, op->session, sizeof(op->session));
	store_sql_copy(st, s, 3, op->tool, sizeof(op->tool));
	store_sql_copy(st, s, 4, op->args_hash, sizeof(op->args_hash));
	op->state = op_state_from_text(store_sql_text(st, s, 5));
	op->acted = (int)store_sql_int(st, s, 6);
	op->attempts = (int)store_sql_int(st, s, 7);
	op->created_ms = store_sql_int(st, s, 8);
	op->started_ms = store_sql_int(st, s, 9);
	op->finished_ms = store_sql_int(st, s, 10);
	result = store_sql_text(st, s, 11);
	if (result) {
		json_error_t jerr;

		op->result = json_loads(result, JSON_DECODE_ANY, &jerr);
		if (!op->result)
			snprintf(op->note, sizeof(op->note),
			         "the recorded result could not be read back "
			         "(%s)",
			         jerr.text);
	}
	if (!op->note[0])
		store_sql_copy(st, s, 12, op->note, sizeof(op->note));
	if (owner)
		store_sql_copy(st, s, 13, owner, ownerlen);
}

/* Checks req's members (the id only when given, or when needs_id).
 * Returns 0 or -STORE_EINVAL (err set). */
static int check_request(const struct store_op_request *req, int needs_id, char *err, size_t errlen)
{
	int rc = store_check_text("tenant", req->tenant, STORE_TENANT_MAX, 1, err, errlen);

	if (rc == 0)
		rc = store_check_text("tool", req->tool, STORE_TOOL_MAX, 1, err, errlen);
	if (rc == 0)
		rc = store_check_text("session", req->session, STORE_SESSION_MAX, 0, err, errlen);
	if (rc == 0 && (needs_id || req->operation_id))
		rc = store_check_id("operation_id", req->operation_id, err, errlen);
	if (rc == 0 && !store_is_sha256_hex(req->args_hash))
		rc = store_set_error(err, errlen,
		                     "args_hash must be 64 lowercase hex digits (store_args_hash)");
	return rc;
}

/* Fills op as the row store_op_begin has just inserted for req under id. */
static void fill_new_op(struct store_op *op, const struct store_op_request *req, const char *id,
                        int64_t now)
{
	memset(op, 0, sizeof(*op));
	snprintf(op->tenant, sizeof(op->tenant), "%s", req->tenant);
	snprintf(op->id, sizeof(op->id), "%s", id);
	snprintf(op->session, sizeof(op->session), "%s", req->session ? req->session : "");
	snprintf(op->tool, sizeof(op->tool), "%s", req->tool);
	snprintf(op->args_hash, sizeof(op->args_hash), "%s", req->args_hash);
	op->state = STORE_OP_PENDING;
	op->attempts = 1;
	op->created_ms = now;
}

/* Reads one operation. Lock held. Returns 0, -STORE_ENOTFOUND (err set),
 * -STORE_EIO. */
static int read_op_locked(struct store *st, const char *tenant, const char *id, struct store_op *op,
                          char *owner, size_t ownerlen, char *err, size_t errlen)
{
	static const char sql[] =
	    "SELECT " OP_COLS " FROM operations WHERE tenant = ?1 AND id = ?2";
	const struct store_sql_param p[] = { SQL_TEXT(tenant), SQL_TEXT(id) };
	struct store_sql_rows *r = NULL;
	int rc;

	rc = store_sql_query_locked(st, "read an operation", sql, p, 2, &r, err, errlen);
	if (rc == 0)
		rc = store_sql_next(st, r, err, errlen);
	if (rc == 1) {
		read_op_row(st, r, op, owner, ownerlen);
		rc = 0;
	} else if (rc == 0) {
		store_set_error(err, errlen, "there is no operation %.80s", id);
		rc = -STORE_ENOTFOUND;
	}
	store_sql_done(st, r);
	return rc;
}

/* Runs one INSERT/UPDATE whose parameters are texts (NULL binds NULL)
 * then integers, ?1.. in that order, and returns the number of rows
 * changed in *changes. Lock held. */
static int run_locked(struct store *st, const char *sql, const char *doing, int *changes,
                      const char *const *texts, size_t ntexts, const int64_t *ints, size_t nints,
                      char *err, size_t errlen)
{
	struct store_sql_param p[8];
	int64_t changed = 0;
	size_t i;
	int rc;

	assert(ntexts + nints <= sizeof(p) / sizeof(p[0]));
	memset(p, 0, sizeof(p));
	for (i = 0; i < ntexts; i++)
		p[i].text = texts[i];
	for (i = 0; i < nints; i++) {
		p[ntexts + i].type = STORE_SQL_INT;
		p[ntexts + i].i = ints[i];
	}
	rc = store_sql_exec_locked(st, doing, sql, p, ntexts + nints, &changed, err, errlen);
	if (changes)
		*changes = (int)changed;
	return rc;
}

int store_op_begin(struct store *st, const struct store_op_request *req, int wait_ms,
                   enum store_op_outcome *outcome, struct store_op *op, char *err, size_t errlen)
{
	static const char insert_sql[] =
	    "INSERT INTO operations (tenant, id, session, tool, args_hash, state,"
	    " acted, attempts, owner, created_at) VALUES (?1, ?2, ?3, ?4, ?5, 'pending', 0, 1, ?6,"
	    " ?7) ON CONFLICT DO NOTHING";
	static const char rerun_sql[] =
	    "UPDATE operations SET state = 'pending', owner = ?3, attempts = attempts + 1,"
	    " result = NULL, note = NULL, started_at = NULL, finished_at = NULL, session = ?4"
	    " WHERE tenant = ?1 AND id = ?2 AND state = 'failed' AND acted = 0";
	char id[STORE_ID_MAX + 1];
	char owner[STORE_INSTANCE_BYTES + 8];
	int64_t deadline = gb_now_ms() + (wait_ms > 0 ? wait_ms : 0);
	int64_t next_owner_check_ms = 0;
	int changes = 0;
	int rc = 0;

	if (!st || !req || !outcome || !op)
		return store_set_error(err, errlen, "store_op_begin: missing argument");
	memset(op, 0, sizeof(*op));
	*outcome = STORE_OP_IN_FLIGHT;
	rc = check_request(req, 0, err, errlen);
	if (rc < 0)
		return rc;
	if (req->operation_id) {
		snprintf(id, sizeof(id), "%s", req->operation_id);
	} else {
		memcpy(id, "op-", 3);
		gb_random_hex(id + 3, 12);
	}

	pthread_mutex_lock(&st->lock);
	for (;;) {
		int64_t now = store_now_ms(st);
		int64_t left;

		rc = read_op_locked(st, req->tenant, id, op, owner, sizeof(owner), err, errlen);
		if (rc == -STORE_ENOTFOUND) {
			const char *texts[] = { req->tenant,    id,
				                req->session,   req->tool,
				                req->args_hash, st->instance };

			rc = run_locked(st, insert_sql, "record an operation", &changes, texts, 6,
			                &now, 1, err, errlen);
			if (rc < 0)
				break;
			if (changes == 1) {
				fill_new_op(op, req, id, now);
				*outcome = STORE_OP_NEW;
				break;
			}
			continue; /* another process inserted it first: look again */
		}
		if (rc < 0)
			break;
		if (strcmp(op->tool, req->tool) != 0 ||
		    strcmp(op->args_hash, req->args_hash) != 0) {
			store_set_error(
			    err, errlen,
			    "operation_id %s was already used for a different "
			    "call (%s with other arguments): use a new operation_id for a new "
			    "call",
			    id, op->tool);
			rc = -STORE_ECONFLICT;
			break;
		}
		if (op->state == STORE_OP_DONE || op->state == STORE_OP_UNKNOWN ||
		    (op->state == STORE_OP_FAILED && op->acted)) {
			*outcome = STORE_OP_FINISHED;
			break;
		}
		if (op->state == STORE_OP_FAILED) {
			/* failed before it acted: it may run again under the same id */
			const char *texts[] = { req->tenant, id, st->instance, req->session };

			rc = run_locked(st, rerun_sql, "restart an operation", &changes, texts, 4,
			                NULL, 0, err, errlen);
			if (rc < 0)
				break;
			if (changes == 1) {
				rc = read_op_locked(st, req->tenant, id, op, NULL, 0, err, errlen);
				*outcome = STORE_OP_NEW;
				break;
			}
			continue;
		}
		/* pending or running: its owner may be a dead process */
		if (gb_now_ms() >= next_owner_check_ms && strcmp(owner, st->instance) != 0) {
			/* again now and then: a killed process's claim may take a
			 * moment to go (PostgreSQL ends its connection after the
			 * kernel closes the socket) */
			next_owner_check_ms = gb_now_ms() + OWNER_CHECK_MS;
			rc = store_recover_owner_locked(st, owner, err, errlen);
			if (rc < 0)
				break;
			continue;
		}
		left = deadline - gb_now_ms();
		if (left <= 0) {
			*outcome = STORE_OP_IN_FLIGHT;
			break;
		}
		store_wait_changed_locked(st, left < POLL_MS ? (int)left : POLL_MS);
	}
	pthread_mutex_unlock(&st->lock);
	if (rc < 0)
		store_op_clear(op);
	return rc;
}

int store_op_mark_running(struct store *st, const char *tenant, const char *id, char *err,
                          size_t errlen)
{
	static const char sql[] =
	    "UPDATE operations SET state = 'running', acted = 1, started_at = ?4"
	    " WHERE tenant = ?1 AND id = ?2 AND owner = ?3 AND state = 'pending'";
	struct store_op op = { 0 };
	int changes = 0;
	int64_t now;
	int rc;

	if (!st)
		return store_set_error(err, errlen, "store_op_mark_running: missing argument");
	rc = store_check_text("tenant", tenant, STORE_TENANT_MAX, 1, err, errlen);
	if (rc == 0)
		rc = store_check_id("operation_id", id, err, errlen);
	if (rc < 0)
		return rc;
	pthread_mutex_lock(&st->lock);
	now = store_now_ms(st);
	{
		const char *texts[] = { tenant, id, st->instance };

		rc = run_locked(st, sql, "mark an operation running", &changes, texts, 3, &now, 1,
		                err, errlen);
	}
	if (rc == 0 && changes != 1) {
		rc = read_op_locked(st, tenant, id, &op, NULL, 0, err, errlen);
		if (rc == 0) {
			store_set_error(err, errlen,
			                "operation %s is %s, not pending in this process: it "
			                "cannot start acting",
			                id, store_op_state_name(op.state));
			rc = -STORE_ESTATE;
		}
	}
	pthread_mutex_unlock(&st->lock);
	store_op_clear(&op);
	return rc;
}

/* result as the text kept for a repeat (malloc'd), or NULL with note
 * saying why it is not kept (note "" when there is no result). */
static char *result_text(const json_t *result, char *note, size_t notelen)
{
	char *text;

	note[0] = '\0';
	if (!result)
		return NULL;
	text = json_dumps(result, JSON_COMPACT | JSON_ENCODE_ANY);
	if (!text) {
		snprintf(note, notelen, "the result could not be serialised and was not kept");
	} else if (strlen(text) > STORE_RESULT_MAX_BYTES) {
		snprintf(note, notelen,
		         "the result (%zu bytes) was larger than %u bytes and was not kept",
		         strlen(text), STORE_RESULT_MAX_BYTES);
		free(text);
		text = NULL;
	}
	return text;
}

int store_op_finish(struct store *st, const char *tenant, const char *id, enum store_op_state state,
                    const json_t *result, char *err, size_t errlen)
{
	static const char sql[] =
	    "UPDATE operations SET state = ?3, result = ?4, note = ?5, finished_at = ?6"
	    " WHERE tenant = ?1 AND id = ?2 AND state IN ('pending', 'running')";
	struct store_op op = { 0 };
	char note[STORE_NOTE_MAX + 1] = "";
	char *text = NULL;
	int changes = 0;
	int64_t now;
	int rc;

	if (!st)
		return store_set_error(err, errlen, "store_op_finish: missing argument");
	if (state != STORE_OP_DONE && state != STORE_OP_FAILED && state != STORE_OP_UNKNOWN)
		return store_set_error(err, errlen,
		                       "an operation finishes as done, failed or unknown, "
		                       "not %s",
		                       store_op_state_name(state));
	rc = store_check_text("tenant", tenant, STORE_TENANT_MAX, 1, err, errlen);
	if (rc == 0)
		rc = store_check_id("operation_id", id, err, errlen);
	if (rc < 0)
		return rc;
	text = result_text(result, note, sizeof(note));
	pthread_mutex_lock(&st->lock);
	now = store_now_ms(st);
	{
		const char *texts[] = { tenant, id, store_op_state_name(state), text,
			                note[0] ? note : NULL };

		rc = run_locked(st, sql, "record an operation's result", &changes, texts, 5, &now,
		                1, err, errlen);
	}
	if (rc == 0 && changes == 1) {
		pthread_cond_broadcast(&st->changed);
	} else if (rc == 0) {
		rc = read_op_locked(st, tenant, id, &op, NULL, 0, err, errlen);
		if (rc == 0) {
			store_set_error(err, errlen, "operation %s has already finished (%s)", id,
			                store_op_state_name(op.state));
			rc = -STORE_ESTATE;
		}
	}
	pthread_mutex_unlock(&st->lock);
	if (note[0])
		GB_LOGW("store", "operation %s: %s", id, note);
	store_op_clear(&op);
	free(text);
	return rc;
}

int store_op_record_new(struct store *st, const struct store_op_request *req,
                        enum store_op_state state, const json_t *result, char *err, size_t errlen)
{
	static const char sql[] =
	    "INSERT INTO operations (tenant, id, session, tool, args_hash, state, owner, result,"
	    " note, acted, attempts, created_at, started_at, finished_at)"
	    " VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, 1, ?11, ?12, ?13)"
	    " ON CONFLICT DO NOTHING";
	char note[STORE_NOTE_MAX + 1];
	char *text = NULL;
	int running = state == STORE_OP_RUNNING;
	int rc;

	if (!st || !req)
		return store_set_error(err, errlen, "store_op_record_new: missing argument");
	if (!running && state != STORE_OP_DONE && state != STORE_OP_FAILED)
		return store_set_error(err, errlen,
		                       "a new operation is recorded as running, done or failed, "
		                       "not %s",
		                       store_op_state_name(state));
	rc = check_request(req, 1, err, errlen);
	if (rc < 0)
		return rc;
	text = running ? NULL : result_text(result, note, sizeof(note));
	if (running)
		note[0] = '\0';
	pthread_mutex_lock(&st->lock);
	{
		int64_t now = store_now_ms(st);
		const struct store_sql_param p[] = {
			SQL_TEXT(req->tenant),
			SQL_TEXT(req->operation_id),
			SQL_TEXT(req->session),
			SQL_TEXT(req->tool),
			SQL_TEXT(req->args_hash),
			SQL_TEXT(store_op_state_name(state)),
			SQL_TEXT(st->instance),
			SQL_TEXT(text),
			SQL_TEXT(note[0] ? note : NULL),
			SQL_INT(running),
			SQL_INT(now),
			running ? (struct store_sql_param)SQL_INT(now)
			        : (struct store_sql_param)SQL_NULL_INT, /* started */
			running ? (struct store_sql_param)SQL_NULL_INT
			        : (struct store_sql_param)SQL_INT(now), /* finished */
		};
		int64_t changed = 0;

		rc = store_sql_exec_locked(st, "record an operation", sql, p, 13, &changed, err,
		                           errlen);
		if (rc == 0 && changed != 1) {
			store_set_error(err, errlen, "operation %s exists already",
			                req->operation_id);
			rc = -STORE_ECONFLICT;
		}
	}
	pthread_mutex_unlock(&st->lock);
	if (note[0])
		GB_LOGW("store", "operation %s: %s", req->operation_id, note);
	free(text);
	return rc;
}

int store_op_get(struct store *st, const char *tenant, const char *id, struct store_op *op,
                 char *err, size_t errlen)
{
	int rc;

	if (!st || !op)
		return store_set_error(err, errlen, "store_op_get: missing argument");
	memset(op, 0, sizeof(*op));
	rc = store_check_text("tenant", tenant, STORE_TENANT_MAX, 1, err, errlen);
	if (rc == 0)
		rc = store_check_id("operation_id", id, err, errlen);
	if (rc < 0)
		return rc;
	pthread_mutex_lock(&st->lock);
	rc = read_op_locked(st, tenant, id, op, NULL, 0, err, errlen);
	pthread_mutex_unlock(&st->lock);
	return rc;
}

int store_op_purge(struct store *st, int64_t before_ms, size_t *removed, char *err, size_t errlen)
{
	static const char sql[] = "DELETE FROM operations WHERE state IN ('done', 'failed', "
	                          "'unknown') AND finished_at < ?1";
	int changes = 0;
	int rc;

	if (removed)
		*removed = 0;
	if (!st)
		return store_set_error(err, errlen, "store_op_purge: missing argument");
	pthread_mutex_lock(&st->lock);
	rc = run_locked(st, sql, "purge old operations", &changes, NULL, 0, &before_ms, 1, err,
	                errlen);
	pthread_mutex_unlock(&st->lock);
	if (rc == 0 && removed)
		*removed = (size_t)changes;
	return rc;
}

int store_args_hash(const json_t *args, char out[STORE_HASH_MAX + 1])
{
	unsigned char digest[crypto_hash_sha256_BYTES];
	json_t *copy = NULL;
	char *text = NULL;
	int rc = 0;

	out[0] = '\0';
	if (!args || json_is_object(args))
		copy = args ? json_copy((json_t *)args) : json_object();
	else
		copy = json_incref((json_t *)args); /* not an object: hashed as it is */
	if (!copy) {
		rc = -STORE_ENOMEM;
		goto out;
	}
	if (json_is_object(copy)) {
		json_object_del(copy, "operation_id");
		json_object_del(copy, "approval");
	}
	text =
	    json_dumps(copy, JSON_COMPACT | JSON_SORT_KEYS | JSON_ENSURE_ASCII | JSON_ENCODE_ANY);
	if (!text) {
		rc = -STORE_ENOMEM;
		goto out;
	}
	crypto_hash_sha256(digest, (const unsigned char *)text, strlen(text));
	sodium_bin2hex(out, STORE_HASH_MAX + 1, digest, sizeof(digest));
out:
	free(text);
	json_decref(copy);
	return rc;
}

/*
 * store.h - glassbox's durable state: the approvals of the gate
 * (DESIGN.md, "Approval"), the operation ledger (DESIGN.md, "Operation"),
 * the session registry (which replica owns which session) and the heads
 * of the audit segments. Two backends, one set of rules (docs/store.md):
 * DATA/glassbox.db (SQLite, WAL), the embedded default, or a PostgreSQL
 * database shared by many replicas (store_configure). Nothing outside
 * store/ knows which one it is.
 *
 * Open one handle per data dir per process (store_open) and share it.
 * Thread safety: every function may be called from any thread at once;
 * the handle holds one connection behind a mutex, and the functions that
 * wait (store_op_begin, store_approval_wait) wait on a condition variable
 * without holding it. Other processes (the CLI, other service processes,
 * other replicas sharing a PostgreSQL database) may use the same
 * database at the same time: every state change is one conditional
 * UPDATE (or an INSERT on a unique key) inside a transaction, so
 * "exactly once" holds across processes and replicas too.
 *
 * Times are wall-clock milliseconds since the Unix epoch (they must
 * survive a restart); 0 means "not yet".
 *
 * Strings in results are copied into fixed arrays sized by the ceilings
 * below; requests with longer strings are refused with -STORE_EINVAL.
 */
#ifndef GB_STORE_H
#define GB_STORE_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

struct store;

/* Error codes (returned negated). */
enum {
	STORE_EINVAL = 1, /* a bad argument: see err */
	STORE_ENOMEM,
	STORE_EIO,       /* the database failed: see err for what to do */
	STORE_ENOTFOUND, /* no such approval or operation (for this tenant) */
	STORE_ESTATE,    /* not in a state that allows this (already decided, expired) */
	STORE_EREFUSED,  /* an approval cannot be used: see the refusal */
	STORE_ECONFLICT, /* an operation id reused for a different call */
};

/* Ceilings, bytes without the NUL. */
#define STORE_TENANT_MAX 64
#define STORE_ID_MAX 64 /* approval and operation ids */
#define STORE_SESSION_MAX 128
#define STORE_TOOL_MAX 64
#define STORE_RULE_MAX 64
#define STORE_HASH_MAX 64 /* hex SHA-256: fingerprints, args hashes */
#define STORE_SUMMARY_MAX 2048
#define STORE_BY_MAX 128     /* who decided */
#define STORE_CHANNEL_MAX 32 /* how: "admin-socket", "cli-direct", "mcp-elicitation" */
#define STORE_REASON_MAX 512
#define STORE_NOTE_MAX 512
#define STORE_RESULT_MAX_BYTES (8u * 1024u * 1024u) /* one operation's recorded result */
#define STORE_REPLICA_MAX 63                        /* a replica's name */
#define STORE_SEGMENT_MAX 128                       /* an audit segment's name */

/* Approval lifetime when the request gives none, and the longest allowed. */
#define STORE_APPROVAL_TTL_DEFAULT_MS (300 * 1000)
#define STORE_APPROVAL_TTL_MAX_MS (86400 * 1000)

/* ==== opening ================================================================= */

/* Where the store is. Strings borrowed. */
struct store_location {
	const char *postgres; /* "postgresql://USER@HOST:PORT/DB?..." (libpq's URL), or
	                       * NULL for DATA/glassbox.db (SQLite) */
	const char *replica;  /* this replica's name ([A-Za-z0-9._-], at most
	                       * STORE_REPLICA_MAX); NULL: the host name */
};

/*
 * Sets where every later store_open of this process goes (serve's
 * "store" config). Call it once at start, before any handle is open and
 * before threads; loc NULL goes back to SQLite and the host name. The
 * URL is checked (libpq's parser) but not connected to here, and never
 * logged or echoed in errors: it may hold a password. Returns 0 or
 * -STORE_EINVAL with the reason in err.
 */
int store_configure(const struct store_location *loc, char *err, size_t errlen);

/* "sqlite" or "postgresql". */
const char *store_backend_name(const struct store *st);

/* This handle's replica name. */
const char *store_replica(const struct store *st);

/*
 * Opens the store where store_configure said (by default, creating
 * 0600, DATA/glassbox.db) and brings its schema up to date (migrations
 * are numbered; table store_schema holds the version; a database written
 * by a newer glassbox is refused). data_dir borrowed. The handle claims
 * a random instance name for as long as it is open, so that others can
 * tell it is alive: with SQLite a flock()ed file in DATA/locks/ (0700),
 * with PostgreSQL an advisory lock held by its connection. On open,
 * operations left pending or running by a handle that is no longer alive
 * (a process of this machine, or with PostgreSQL a replica anywhere) are
 * closed: running ones become "unknown" (their outcome cannot be
 * established), pending ones "failed" having done nothing (see the
 * ledger below).
 * Returns 0 with *out, or -STORE_EINVAL / -STORE_ENOMEM / -STORE_EIO with
 * the reason in err ("cannot open /d/glassbox.db: ...; make the data dir
 * writable by this user").
 */
int store_open(const char *data_dir, struct store **out, char *err, size_t errlen);

/* Closes the handle (its lock file goes with it). No other thread may be
 * using it. NULL is a no-op. */
void store_close(struct store *st);

/* How many operations of dead processes store_open closed: *unknown were
 * running, *abandoned pending. Either pointer may be NULL. */
void store_recovered(const struct store *st, size_t *unknown, size_t *abandoned);

/* ==== approvals =============================================================== */
/*
 * An approval: pending -> approved | denied | expired; approved -> used |
 * expired. It is bound to one fingerprint (policy/fingerprint.h) and one
 * tenant, and used at most once. A pending request expires ttl after it
 * was created; once approved it stays usable for ttl after the decision.
 * Every change is recorded as an event (created, approved, denied,
 * expired, used, refused) with who, how and when: store_approval_history.
 */

enum store_approval_state {
	STORE_APPROVAL_PENDING = 0,
	STORE_APPROVAL_APPROVED,
	STORE_APPROVAL_DENIED,
	STORE_APPROVAL_USED,
	STORE_APPROVAL_EXPIRED,
};

struct store_approval {
	char id[STORE_ID_MAX + 1]; /* "apr-" + 20 hex digits */
	char tenant[STORE_TENANT_MAX + 1];
	char session[STORE_SESSION_MAX + 1];
	char operation_id[STORE_ID_MAX + 1]; /* the call that asked */
	char tool[STORE_TOOL_MAX + 1];
	char rule[STORE_RULE_MAX + 1]; /* the risk rule that asked for it */
	char fingerprint[STORE_HASH_MAX + 1];
	char summary[STORE_SUMMARY_MAX + 1]; /* what exactly would happen */
	enum store_approval_state state;
	int64_t created_ms;
	int64_t expires_ms;
	int64_t ttl_ms;
	int64_t decided_ms;
	char decided_by[STORE_BY_MAX + 1];
	char channel[STORE_CHANNEL_MAX + 1];
	int64_t decided_uid;               /* the deciding process's uid; -1 unknown */
	char reason[STORE_REASON_MAX + 1]; /* given with the decision, may be "" */
	int64_t used_ms;
	char used_by_operation[STORE_ID_MAX + 1];
};

/* "pending", "approved", "denied", "used", "expired". */
const char *store_approval_state_name(enum store_approval_state s);

/* A new approval request. Strings borrowed. */
struct store_approval_request {
	const char *tenant;       /* required */
	const char *fingerprint;  /* required: 64 hex digits */
	const char *summary;      /* required: shown to the person who decides */
	const char *session;      /* may be NULL */
	const char *operation_id; /* may be NULL */
	const char *tool;         /* may be NULL */
	const char *rule;         /* may be NULL */
	int64_t ttl_ms;           /* 0: STORE_APPROVAL_TTL_DEFAULT_MS; at most ..._MAX_MS */
};

/* Records a pending approval and fills *out. Returns 0, -STORE_EINVAL,
 * -STORE_EIO. Records event "created". */
int store_approval_create(struct store *st, const struct store_approval_request *req,
                          struct store_approval *out, char *err, size_t errlen);

/* Reads one approval. tenant NULL reads any tenant's (operators only: the
 * admin socket, the CLI); otherwise another tenant's id is not found.
 * Returns 0, -STORE_ENOTFOUND, -STORE_EIO. */
int store_approval_get(struct store *st, const char *tenant, const char *id,
                       struct store_approval *out, char *err, size_t errlen);

/* Which approvals store_approval_list returns, newest first. */
struct store_approval_query {
	const char *tenant;  /* NULL: every tenant */
	const char *session; /* NULL: every session */
	int pending_only;    /* 1: only those waiting for a decision */
	size_t limit;        /* 0: 100; at most 10000 */
};

/* Called once per approval; return non-zero to stop. a is valid during
 * the call only. */
typedef int (*store_approval_cb)(const struct store_approval *a, void *user);

int store_approval_list(struct store *st, const struct store_approval_query *q,
                        store_approval_cb cb, void *user, char *err, size_t errlen);

/* Who decides. Strings borrowed. */
struct store_decider {
	const char *by;      /* required: a person ("alice"), never the agent */
	const char *channel; /* required: "admin-socket", "cli-direct", "mcp-elicitation" */
	const char *reason;  /* may be NULL */
	int64_t uid;         /* the process's verified uid, -1 when unknown */
};

/*
 * Approves (approve = 1) or denies a pending approval. tenant as for
 * store_approval_get. Fills *out (may be NULL) with the approval after the
 * decision. Returns 0; -STORE_ENOTFOUND; -STORE_ESTATE when it is not
 * pending (err: "approval apr-... was already denied by bob at
 * 2026-...Z"), or has expired; -STORE_EINVAL; -STORE_EIO. Records event
 * "approved" or "denied".
 */
int store_approval_decide(struct store *st, const char *tenant, const char *id, int approve,
                          const struct store_decider *who, struct store_approval *out, char *err,
                          size_t errlen);

/* Why an approval could not be used. */
enum store_refusal {
	STORE_REFUSE_NONE = 0,
	STORE_REFUSE_NOT_FOUND, /* no such approval for this tenant */
	STORE_REFUSE_PENDING,   /* nobody has decided yet */
	STORE_REFUSE_DENIED,
	STORE_REFUSE_USED, /* spent by an earlier call */
	STORE_REFUSE_EXPIRED,
	STORE_REFUSE_MISMATCH, /* approved for another action (fingerprint differs) */
};

/* "not_found", "pending", "denied", "used", "expired", "mismatch". */
const char *store_refusal_name(enum store_refusal r);

/*
 * Uses an approval for the action whose fingerprint was just recomputed:
 * approved -> used, atomically and exactly once, only if it belongs to
 * tenant, is approved, unexpired, unused, and its fingerprint equals
 * fingerprint. operation_id (may be NULL) is recorded as the user.
 * Returns 0 when the approval is now spent (the action may run; *out
 * filled, may be NULL). Returns -STORE_EREFUSED with *why set and a
 * message for the agent in err when it cannot be used; a mismatch or an
 * early use (pending) does not spend it. Records event "used" or
 * "refused" (with the reason). -STORE_EINVAL / -STORE_EIO otherwise.
 */
int store_approval_consume(struct store *st, const char *tenant, const char *id,
                           const char *fingerprint, const char *operation_id,
                           struct store_approval *out, enum store_refusal *why, char *err,
                           size_t errlen);

/* Marks every pending or approved approval past its expiry as expired
 * (event "expired"). *expired (may be NULL) receives how many. Lookups
 * and decisions do this too, so calling it is only needed to have the
 * events recorded promptly (e.g. once a minute). */
int store_approval_expire(struct store *st, size_t *expired, char *err, size_t errlen);

/*
 * Waits up to timeout_ms for a pending approval to be decided (here, over
 * the admin socket, or by another process), then fills *out with it as
 * it is. Returns 0 (check out->state: still pending on timeout),
 * -STORE_ENOTFOUND, -STORE_EIO.
 */
int store_approval_wait(struct store *st, const char *tenant, const char *id, int timeout_ms,
                        struct store_approval *out, char *err, size_t errlen);

/* One recorded event. Strings valid during the callback only. */
struct store_approval_event {
	int64_t seq;
	int64_t time_ms;
	const char *approval_id;
	const char *tenant;
	const char *event;        /* created approved denied expired used refused */
	const char *by;           /* who decided; "" for created/expired/used/refused */
	const char *channel;      /* how */
	const char *reason;       /* decision reason, or why a use was refused */
	const char *operation_id; /* created, used, refused: the call */
	/* approval context (hook only; NULL in store_approval_history) */
	const struct store_approval *approval;
};

typedef int (*store_approval_event_cb)(const struct store_approval_event *ev, void *user);

/* Calls cb for each event of approval id (any tenant), oldest first. */
int store_approval_history(struct store *st, const char *id, store_approval_event_cb cb, void *user,
                           char *err, size_t errlen);

/*
 * Calls hook after each approval event this handle records (not those of
 * other processes), on the thread that caused it, with no lock of the
 * store held; the event carries the approval as it is after the event.
 * Meant for the audit log (evid_audit_append EVID_AUDIT_APPROVAL_GRANTED /
 * _DENIED) and for waking an MCP client. The hook must not call
 * store_set_approval_hook; it may call other store functions. Set it
 * before the handle is shared between threads. hook NULL removes it.
 */
typedef void (*store_approval_hook)(void *user, const struct store_approval_event *ev);
void store_set_approval_hook(struct store *st, store_approval_hook hook, void *user);

/* The approval as JSON for programs (admin socket, `approvals show
 * --json`, the approval_required result): {id, tenant, session,
 * operation_id, tool, rule, fingerprint, summary, state, created_at,
 * expires_at, decided_at, decided_by, channel, reason, used_at,
 * used_by_operation} with times as UTC ISO 8601; empty members omitted.
 * New reference; NULL on allocation failure. */
json_t *store_approval_to_json(const struct store_approval *a);

/* Writes ms (Unix epoch) as "2026-11-29T18:20:01.123Z" (buf >= 32 bytes);
 * "" for 0. */
void store_time_iso8601(int64_t ms, char *buf, size_t buflen);

/* ==== the operation ledger ====================================================== */
/*
 * Every tool call is an operation: pending (accepted, nothing done yet)
 * -> running (about to act on the page: input may have been dispatched)
 * -> done | failed | unknown (the outcome could not be established:
 * browser crashed or deadline passed after the input was dispatched; it
 * must never be re-run blindly).
 *
 * Around each tool call the pipeline does:
 *   store_op_begin()        before anything else; act on the outcome
 *   store_op_mark_running() right before the first input or navigation is
 *                           sent to the browser (after the gate)
 *   store_op_finish()       with the final state and the result it returns
 * A call without a client's operation_id has an id made for it, which
 * nobody can name before its answer: nothing can wait for it or repeat it
 * meanwhile, so its row is written once it is worth keeping
 * (store_op_record_new: running, or how it ended without acting) and
 * finished with store_op_finish.
 *
 * A client's operation_id is an idempotency key (per tenant): repeating a
 * finished call returns the recorded result without acting again;
 * repeating one still in flight waits for it; an operation that failed
 * before it acted (never marked running: refused by policy, needed an
 * approval, bad target) may be run again under the same id, which is how
 * a call repeated with "approval" set goes through.
 */

enum store_op_state {
	STORE_OP_PENDING = 0,
	STORE_OP_RUNNING,
	STORE_OP_DONE,
	STORE_OP_FAILED,
	STORE_OP_UNKNOWN,
};

/* "pending", "running", "done", "failed", "unknown". */
const char *store_op_state_name(enum store_op_state s);

struct store_op {
	char id[STORE_ID_MAX + 1];
	char tenant[STORE_TENANT_MAX + 1];
	char session[STORE_SESSION_MAX + 1];
	char tool[STORE_TOOL_MAX + 1];
	char args_hash[STORE_HASH_MAX + 1];
	enum store_op_state state;
	int acted;    /* it was marked running: input may have reached the page */
	int attempts; /* runs under this id (re-runs after failing before acting) */
	int64_t created_ms;
	int64_t started_ms; /* marked running */
	int64_t finished_ms;
	json_t *result; /* the recorded result (owned: store_op_clear), NULL if none */
	char note[STORE_NOTE_MAX + 1]; /* why it ended without a result of its own, e.g.
	                                * "the service stopped while this operation was
	                                * acting: ..." for operations recovered on open */
};

/* Drops op->result. Safe on a zeroed or cleared op. */
void store_op_clear(struct store_op *op);

struct store_op_request {
	const char *tenant;       /* required */
	const char *operation_id; /* the client's idempotency key, or NULL for a new id
	                           * ("op-" + 24 hex digits); [A-Za-z0-9._:-], 1..64 bytes */
	const char *session;      /* may be NULL */
	const char *tool;         /* required */
	const char *args_hash;    /* required: store_args_hash() of the arguments */
};

/* What store_op_begin found. */
enum store_op_outcome {
	STORE_OP_NEW = 0,   /* run the call now: the operation is pending and yours */
	STORE_OP_FINISHED,  /* do not run it: op holds the recorded state and result */
	STORE_OP_IN_FLIGHT, /* still pending/running elsewhere after wait_ms: tell the
	                     * client to repeat later; do not run it */
};

/*
 * Starts an operation or finds the one with the same id. On STORE_OP_NEW
 * the operation is recorded as pending, owned by this handle (op->id holds
 * its id). When the id exists and is still pending or running, waits up
 * to wait_ms for it to finish (woken at once when this process finishes
 * it; other processes' progress is polled). Fills *op in every case
 * (store_op_clear it). Returns 0 with *outcome; -STORE_ECONFLICT when the
 * id was used for another tool or other arguments (err: "operation_id x
 * was already used for a different call: use a new operation_id");
 * -STORE_EINVAL; -STORE_EIO.
 */
int store_op_begin(struct store *st, const struct store_op_request *req, int wait_ms,
                   enum store_op_outcome *outcome, struct store_op *op, char *err, size_t errlen);

/* pending -> running: call right before acting. Returns 0, -STORE_ENOTFOUND,
 * -STORE_ESTATE (not pending), -STORE_EIO. */
int store_op_mark_running(struct store *st, const char *tenant, const char *id, char *err,
                          size_t errlen);

/*
 * Records the end of an operation: state is STORE_OP_DONE, _FAILED or
 * _UNKNOWN; result (borrowed; may be NULL) is what the call returned and
 * what a repeat will get. A result larger than STORE_RESULT_MAX_BYTES is
 * not kept (note says so; op->result will be NULL). Wakes the callers
 * waiting in store_op_begin. Returns 0, -STORE_ENOTFOUND, -STORE_ESTATE
 * (already finished), -STORE_EINVAL, -STORE_EIO.
 */
int store_op_finish(struct store *st, const char *tenant, const char *id, enum store_op_state state,
                    const json_t *result, char *err, size_t errlen);

/*
 * Records the operation req->operation_id (an id made for this call
 * alone, not a client's) in one statement, owned by this handle: as
 * STORE_OP_RUNNING right before it acts (acted; store_op_finish ends it),
 * or as STORE_OP_DONE or _FAILED with result (borrowed; may be NULL) when
 * it ended without acting. Returns 0, -STORE_ECONFLICT (the id is taken),
 * -STORE_EINVAL, -STORE_EIO.
 */
int store_op_record_new(struct store *st, const struct store_op_request *req,
                        enum store_op_state state, const json_t *result, char *err, size_t errlen);

/* Reads one operation (store_op_clear it). Returns 0, -STORE_ENOTFOUND,
 * -STORE_EIO. */
int store_op_get(struct store *st, const char *tenant, const char *id, struct store_op *op,
                 char *err, size_t errlen);

/* Deletes finished operations that finished before before_ms (Unix ms).
 * *removed may be NULL. */
int store_op_purge(struct store *st, int64_t before_ms, size_t *removed, char *err, size_t errlen);

/*
 * The hash that decides whether two calls are "the same call": hex
 * SHA-256 of the canonical JSON (sorted keys, compact) of args without its
 * top-level members "operation_id" and "approval". args borrowed (NULL is
 * {}). Returns 0 or -STORE_ENOMEM.
 */
int store_args_hash(const json_t *args, char out[STORE_HASH_MAX + 1]);

/* ==== the session registry ======================================================= */
/*
 * Which replica owns which session: a session lives on the replica that
 * claimed it, and only there. The row names the replica and the handle
 * (instance) that claimed it; when that handle is gone (its process
 * died), the session is an orphan: store_session_reap hands the orphans
 * of this replica to the caller (to kill their browsers) and removes
 * them, so that a restarted replica cleans up after itself.
 */

struct store_session {
	char session[STORE_SESSION_MAX + 1];
	char tenant[STORE_TENANT_MAX + 1];
	char replica[STORE_REPLICA_MAX + 1];
	char instance[33];
	int64_t browser_pid; /* 0 when none yet */
	int64_t created_ms;
	int64_t heartbeat_ms; /* claimed, or last store_session_heartbeat */
	int alive;            /* the claiming handle is alive */
};

/* Claims session (new) for this handle's replica. Returns 0;
 * -STORE_ECONFLICT when it is registered already (err names the replica
 * that owns it); -STORE_EINVAL; -STORE_EIO. */
int store_session_claim(struct store *st, const char *tenant, const char *session,
                        int64_t browser_pid, char *err, size_t errlen);

/* Updates the browser pid (when >= 0) and the heartbeat of a session this
 * handle claimed. Returns 0, -STORE_ENOTFOUND (not ours), -STORE_EIO. */
int store_session_heartbeat(struct store *st, const char *session, int64_t browser_pid, char *err,
                            size_t errlen);

/* Removes a session this handle claimed (it ended). Not found is 0. */
int store_session_release(struct store *st, const char *session, char *err, size_t errlen);

/* Who owns session: fills *out (alive says whether its handle is).
 * Returns 0, -STORE_ENOTFOUND, -STORE_EIO. */
int store_session_owner(struct store *st, const char *session, struct store_session *out, char *err,
                        size_t errlen);

/* Called once per orphan; s valid during the call only. */
typedef void (*store_session_cb)(const struct store_session *s, void *user);

/* Hands each session of this replica whose handle is gone to cb, then
 * removes its row. *reaped (may be NULL) gets how many. Returns 0 or
 * -STORE_EIO. */
int store_session_reap(struct store *st, store_session_cb cb, void *user, size_t *reaped, char *err,
                       size_t errlen);

/* ==== audit segment heads ======================================================== */
/*
 * Each (tenant, replica) writes its own hash-chained, signed audit
 * segment; this table orders them per tenant and holds each one's head
 * (the hash of its last record and how many records it has), so that the
 * merged trail can be verified from the segments alone and a missing or
 * cut segment named. A segment is registered once (its order is fixed
 * then); its head only moves forward: store_audit_segment_advance is a
 * compare-and-set on the record count.
 */

struct store_audit_segment {
	int64_t seq; /* the order of segments: ascending within a tenant */
	char tenant[STORE_TENANT_MAX + 1];
	char replica[STORE_REPLICA_MAX + 1];
	char segment[STORE_SEGMENT_MAX + 1]; /* its name, e.g. the object key */
	char head_hash[STORE_HASH_MAX + 1];  /* "" while it has no record */
	int64_t records;
	int64_t opened_ms;
	int64_t updated_ms;
};

/*
 * Registers segment (a name unique within tenant, [A-Za-z0-9._:/-]) of
 * tenant written by this handle's replica, with no records. Registering
 * the same (tenant, segment) again from the same replica returns the
 * existing row (a restart picks its segment up again); from another
 * replica it is -STORE_ECONFLICT. Fills *out (may be NULL). Returns 0,
 * -STORE_ECONFLICT, -STORE_EINVAL, -STORE_EIO.
 */
int store_audit_segment_register(struct store *st, const char *tenant, const char *segment,
                                 struct store_audit_segment *out, char *err, size_t errlen);

/*
 * Moves the head of (tenant, segment) from expected_records to records
 * (> expected_records) with head_hash (64 hex digits) as its last hash,
 * only if it is still at expected_records and this handle's replica
 * writes it. Returns 0; -STORE_ESTATE when the head is elsewhere (err
 * says where: another writer, or a lost update); -STORE_ENOTFOUND;
 * -STORE_EINVAL; -STORE_EIO.
 */
int store_audit_segment_advance(struct store *st, const char *tenant, const char *segment,
                                int64_t expected_records, int64_t records, const char *head_hash,
                                char *err, size_t errlen);

/* Called once per segment, in order; return non-zero to stop. */
typedef int (*store_audit_segment_cb)(const struct store_audit_segment *s, void *user);

/* Calls cb for each segment of tenant in order (at most 100000).
 * Returns 0, -STORE_EINVAL, -STORE_EIO. */
int store_audit_segment_list(struct store *st, const char *tenant, store_audit_segment_cb cb,
                             void *user, char *err, size_t errlen);

#endif

/*
 * audit.h - the tamper-evident audit trail: per-tenant, append-only,
 * hash-chained JSON lines signed with the service's Ed25519 audit key;
 * its verifier, retention (purge), the environment manifest, the HTML
 * report, and the `glassbox audit` / `glassbox report` entry points.
 *
 * On disk (DESIGN.md):
 *   DATA/keys/audit.key                 Ed25519 seed, 0600, created on first use
 *   DATA/keys/audit.pub                 public key for reviewers (0644)
 *   DATA/tenants/<t>/audit/<date>.jsonl one record a line, UTC date of the record
 *   DATA/tenants/<t>/audit/head.json    signed (seq, hash) of the newest record
 *   DATA/tenants/<t>/audit/.lock        flock() between processes
 *
 * A record is one line of canonical JSON (jansson JSON_COMPACT |
 * JSON_SORT_KEYS) with the members
 *   v (1), seq (1, 2, ... per tenant, across day files and restarts),
 *   time (UTC ISO 8601), tenant, kind, actor {token, tenant, user},
 *   session, operation, body {...}, artifacts [...], prev_hash, key_id,
 *   hash, sig
 * hash = sha256 hex of the canonical JSON of the record without hash and
 * sig; sig = Ed25519 signature (base64) of those same bytes; prev_hash =
 * the previous record's hash (64 zeros for the first one). docs/evidence.md
 * describes the format for reviewers.
 *
 * Who calls what (the pipeline, mcp/ and cli/):
 *   - at start-up: evid_audit_open() once per data dir (it creates the key
 *     pair on first use); evid_audit_close() at shut-down.
 *   - session opened: evid_manifest_new() + evid_audit_append() of kind
 *     EVID_AUDIT_SESSION_OPENED with body {"manifest": <manifest>, ...}.
 *   - every tool call, after its result is known (also refused and failed
 *     ones): one EVID_AUDIT_TOOL_CALL record; its artifacts are what
 *     evid_keep_action_evidence() (evidence.h) returned.
 *   - policy refusals, approvals granted/denied, profile events, session
 *     closed: one record each (kinds below).
 *   - before acting, for tenants whose policy requires evidence:
 *     evid_store_check_writable() and evid_audit_check_writable(); refuse
 *     the action with their message when either fails.
 *   - daily (or from the CLI): evid_audit_purge() with the tenant's
 *     retention in days.
 *
 * Thread safety: every function may be called from any thread. Appends
 * to one tenant's log are serialised by a mutex per tenant (the sync that
 * makes them durable runs outside it, shared) and by a flock() on its
 * .lock file, held until this process's records are durable (other
 * processes, e.g. the CLI purging).
 */
#ifndef GB_EVIDENCE_AUDIT_H
#define GB_EVIDENCE_AUDIT_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

struct evid_audit;

/* Largest record line, bytes (canonical JSON with hash and sig). */
#define EVID_AUDIT_MAX_RECORD_BYTES (1024u * 1024u)
/* Largest report, bytes (images included). */
#define EVID_REPORT_MAX_BYTES (512u * 1024u * 1024u)

/* Record kinds. The body each one carries is listed; every member is
 * optional unless marked, and the report shows what it finds. */
#define EVID_AUDIT_SESSION_OPENED "session_opened" /* manifest (evid_manifest_new), profile */
#define EVID_AUDIT_SESSION_CLOSED "session_closed" /* reason, actions (count) */
/* tool (required), arguments (redacted), ok, error {code, message},
 * url_before, url, title, element {role, name, ref, box {x, y, width,
 * height}, point {x, y}}, verdicts [{check, expected, observed, ok}],
 * blocked [{url, reason}], approval {id, by, at}, evidence_error.
 * The action's structuredContent has most of these under the same names. */
#define EVID_AUDIT_TOOL_CALL "tool_call"
#define EVID_AUDIT_POLICY_REFUSAL "policy_refusal"     /* tool, arguments, rule, reason, url */
#define EVID_AUDIT_APPROVAL_GRANTED "approval_granted" /* approval_id, tool, fingerprint, by, at */
#define EVID_AUDIT_APPROVAL_DENIED "approval_denied"   /* same, plus reason */
#define EVID_AUDIT_PROFILE_OPENED "profile_opened"     /* profile, user, version */
#define EVID_AUDIT_PROFILE_SEALED "profile_sealed"
#define EVID_AUDIT_PROFILE_REVOKED "profile_revoked"
#define EVID_AUDIT_PROFILE_EXPORTED "profile_exported"
#define EVID_AUDIT_PROFILE_IMPORTED "profile_imported"
#define EVID_AUDIT_EVIDENCE_KEPT "evidence_kept"     /* what; artifacts outside a tool call */
#define EVID_AUDIT_EVIDENCE_FAILED "evidence_failed" /* reason: evidence that could not be kept */
#define EVID_AUDIT_PURGE "purge"                     /* written by evid_audit_purge() only */

/* Who did it. Strings borrowed; each may be NULL (recorded as null).
 * token is the id or name of the credential used, never its secret. */
struct evid_actor {
	const char *token;
	const char *tenant;
	const char *user;
};

/* One record to append. Everything is borrowed and copied. */
struct evid_audit_entry {
	const char *tenant; /* required; a safe name (evidence.h) */
	const char *kind;   /* required: EVID_AUDIT_*, or another [a-z_]{1,32} */
	struct evid_actor actor;
	const char *session_id;   /* may be NULL */
	const char *operation_id; /* may be NULL */
	json_t *body;             /* object or NULL ({}); see the kinds above */
	/* array of {kind, sha256, mime, size, valid} as returned by
	 * evid_keep_action_evidence() / evid_artifact_json(), or NULL. The
	 * verifier checks that each one exists and matches its hash. */
	json_t *artifacts;
	/* 1 when the action typed a secret (a password field, a value marked
	 * secret): body.arguments.text and body.arguments.value are replaced
	 * by "[redacted]". Whatever this says, members of body named like a
	 * credential (password, passwd, secret, token, api_key, apikey,
	 * authorization, cookie, set-cookie, private_key, otp; any case) are
	 * always redacted. */
	int secret_text;
};

/* 1 when key (a JSON member, a header, a query parameter) names a
 * credential, as the audit log's redaction reads it (any case): password,
 * token, authorization, cookie, set-cookie and the rest above. */
int evid_is_credential_name(const char *key);

/* What an append produced. */
struct evid_audit_receipt {
	uint64_t seq;
	char hash[65];
};

/* Opens the audit trail under data_dir (copied): loads DATA/keys/audit.key,
 * creating the key pair (0600 / 0644) on first use. Returns 0,
 * -EVID_EINVAL, -EVID_ENOMEM, or -EVID_EIO with the reason in err (e.g.
 * "DATA/keys/audit.key is readable by other users (mode 0644): chmod 600
 * it"). */
int evid_audit_open(const char *data_dir, struct evid_audit **out, char *err, size_t errlen);

/* Frees the handle and wipes the secret key. NULL is a no-op. No call on
 * a may be running or start afterwards. */
void evid_audit_close(struct evid_audit *a);

/* Appends one record to entry->tenant's log: the next seq, linked to the
 * newest record (read from disk on first use, so the chain continues
 * across restarts and across processes), hashed, signed, written with
 * one write(); returns only once the record is durable (fdatasync, then
 * head.json naming it; appends running at once share one sync). A
 * partial write, or a sync that fails, cuts the record back off, so the
 * log holds the whole line or nothing and never a record whose append
 * failed. The body is redacted as described above and
 * must be under EVID_AUDIT_MAX_RECORD_BYTES once written. receipt may be
 * NULL. Returns 0, -EVID_EINVAL (bad entry: err says which member),
 * -EVID_EIO (the log could not be written: full disk, read-only; err
 * says where and what to do), or -EVID_ENOMEM. */
int evid_audit_append(struct evid_audit *a, const struct evid_audit_entry *entry,
                      struct evid_audit_receipt *receipt, char *err, size_t errlen);

/* Checks, without appending, that tenant's audit log can be written now:
 * the directory exists or can be created, a probe file can be written
 * and fsynced there, and at least 1 MiB is free. Returns 0 or -EVID_EIO /
 * -EVID_EINVAL with the reason ("the audit log of acme cannot be written:
 * ... Read-only file system; ..."). */
int evid_audit_check_writable(struct evid_audit *a, const char *tenant, char *err, size_t errlen);

/* The public key (32 bytes) and its id (16 hex digits: the first 8 bytes
 * of its sha256) this handle signs with. */
void evid_audit_public_key(const struct evid_audit *a, unsigned char pk[32], char key_id[17]);

/* ---- keys (keys.c) ------------------------------------------------------ */

/* Writes the audit public key file (DATA/keys/audit.pub, creating the key
 * pair if there is none yet) to out_path, or to stdout when out_path is
 * NULL or "-". The file is JSON: {"type": "ed25519", "public_key":
 * base64, "key_id": hex}. Returns 0 or a negative evid_err with reason. */
int evid_keys_export_public(const char *data_dir, const char *out_path, char *err, size_t errlen);

/* Reads a public key file written by evid_keys_export_public(). Returns
 * 0, -EVID_ENOENT or -EVID_EINVAL ("FILE is not a glassbox audit public
 * key: ..."). key_id may be NULL. */
int evid_keys_load_public(const char *path, unsigned char pk[32], char key_id[17], char *err,
                          size_t errlen);

/* ---- the environment manifest (manifest.c) ------------------------------- */

/* Inputs of a session's environment manifest. All borrowed. */
struct evid_manifest_in {
	const char
	    *chromium_version; /* e.g. Browser.getVersion's product "Chrome/126.0.6478.126" */
	json_t *launch_flags;  /* array of strings; must not carry secrets */
	json_t *policy;        /* the effective policy: hashed, not copied; may be NULL */
	json_t *config;        /* the effective config: hashed, not copied; may be NULL */
};

/* Builds {glassbox_version, chromium_version, launch_flags,
 * policy_sha256, config_sha256, libraries {jansson, libpng, libsodium,
 * sqlite}} (a new reference; NULL when out of memory). The hashes are
 * sha256 of the canonical JSON (null when the input is NULL), so a
 * reviewer can tell whether two sessions ran under the same policy. */
json_t *evid_manifest_new(const struct evid_manifest_in *in);

/* ---- verification (audit_verify.c) -------------------------------------- */

enum evid_verify_failure {
	EVID_VERIFY_OK = 0,
	EVID_VERIFY_EDITED,           /* content, hash or signature does not match: edited */
	EVID_VERIFY_REMOVED,          /* a record is missing */
	EVID_VERIFY_REORDERED,        /* records are out of order */
	EVID_VERIFY_BROKEN_LINK,      /* prev_hash does not name the record before */
	EVID_VERIFY_WRONG_KEY,        /* signed by another key than the one given */
	EVID_VERIFY_TRUNCATED,        /* the log ends inside a record */
	EVID_VERIFY_ARTIFACT_MISSING, /* a referenced artifact is gone */
	EVID_VERIFY_ARTIFACT_CHANGED, /* a referenced artifact no longer matches its hash */
	EVID_VERIFY_BAD_PURGE,        /* a purged prefix without a valid purge record */
	EVID_VERIFY_UNREADABLE,       /* a file could not be read */
};

/* The outcome of verifying one tenant's chain. */
struct evid_verify_report {
	int ok;                           /* 1: the whole chain verified */
	enum evid_verify_failure failure; /* the first failure */
	uint64_t failed_seq;              /* the record named (the expected seq when unreadable) */
	char failed_file[128];            /* day file, e.g. "2026-03-01.jsonl" */
	unsigned long failed_line;        /* 1-based line in failed_file */
	char reason[1024];                /* what failed and why, for people */
	uint64_t records;                 /* records read */
	uint64_t first_seq;
	uint64_t last_seq;
	uint64_t artifacts;      /* distinct artifacts checked */
	int purged;              /* the chain starts after a purge */
	uint64_t purged_through; /* last purged seq when purged */
	char key_id[17];         /* the key the chain was checked against */
};

/* A short name for a failure kind ("edited", "removed", ...). */
const char *evid_verify_failure_name(enum evid_verify_failure f);

/*
 * Verifies tenant's whole chain under data_dir without writing anything
 * (a reviewer may run it on a read-only copy): every record parses and is
 * in canonical form, its hash matches its content, its signature verifies
 * with pubkey (32 bytes; NULL: DATA/keys/audit.pub), seqs run 1, 2, ...
 * without gap or reordering, each prev_hash names the record before,
 * head.json (signed) agrees with the last record, and every artifact a
 * record references exists and hashes to its name. A chain may start
 * after record 1 only if a valid purge record in it names the boundary.
 * Stops at the first failure. Returns 0 when verification ran (rep->ok
 * tells the outcome), or a negative evid_err when it could not (no audit
 * log for that tenant: -EVID_ENOENT; no public key; bad name) with err.
 */
int evid_audit_verify(const char *data_dir, const char *tenant, const unsigned char *pubkey,
                      struct evid_verify_report *rep, char *err, size_t errlen);

/* One line for people: "acme: chain verified: 120 records (seq 1..120),
 * 48 artifacts, key 1a2b..." or "acme: FAILED at record 7 (2026-03-01.jsonl
 * line 7): edited: ...". */
void evid_verify_report_format(const char *tenant, const struct evid_verify_report *rep, char *buf,
                               size_t buflen);

/* Where the failure is, for people: "2026-03-01.jsonl line 7", "head.json". */
void evid_verify_location(const struct evid_verify_report *rep, char *buf, size_t buflen);

/* The report as JSON (new reference), for programs and the HTML report. */
json_t *evid_verify_report_json(const char *tenant, const struct evid_verify_report *rep);

/* ---- retention (retention.c) -------------------------------------------- */

struct evid_purge_report {
	uint64_t purge_seq; /* seq of the purge record; 0 when nothing was due */
	uint64_t records_removed;
	uint64_t files_removed;
	uint64_t artifacts_removed;
	char cutoff[11]; /* "YYYY-MM-DD": day files before it were removed */
};

/*
 * Purges tenant's day files older than days (whole UTC days: files dated
 * before today - days), then artifacts no longer referenced by a kept
 * record and not stored since the cutoff, and their index rows. The purge
 * record (kind "purge", body {days, cutoff, files [{name, first_seq,
 * last_seq, last_hash, records}], artifacts}) is appended and fsynced
 * before anything is deleted; the verifier accepts the shortened chain
 * only because of it. Nothing due: no record, rep->purge_seq 0. days >= 1.
 * Returns 0 or a negative evid_err with the reason in err.
 */
int evid_audit_purge(struct evid_audit *a, const char *tenant, unsigned days,
                     struct evid_purge_report *rep, char *err, size_t errlen);

/* ---- report (report.c) -------------------------------------------------- */

struct evid_report_opts {
	const char *tenant;          /* required unless session_id is set (then searched) */
	const char *session_id;      /* one session, or NULL for all */
	const char *since;           /* "YYYY-MM-DD" or an ISO time (UTC); NULL = everything */
	const unsigned char *pubkey; /* 32 bytes, NULL = DATA/keys/audit.pub */
	/* may be NULL: receives the chain verification the header shows (ok
	 * 0 also when it could not run) */
	struct evid_verify_report *verified;
};

/*
 * Builds the self-contained HTML trail (CSS inline, screenshots inlined
 * as data: URIs, no script, a Content-Security-Policy that forbids any)
 * from the audit log and artifacts under data_dir: a header saying
 * whether the chain verified, each session's manifest, and a timeline of
 * records: tool, element, URL before/after, thumbnails that open the full
 * and annotated screenshots, verdicts, approvals, blocked requests and
 * refusals. All page-derived text is HTML-escaped. Reads only. *html is
 * malloc'd (NUL-terminated). Returns 0 or a negative evid_err with err
 * ("no records for session s-1 in tenant acme").
 */
int evid_report_html(const char *data_dir, const struct evid_report_opts *opts, char **html,
                     size_t *len, char *err, size_t errlen);

/* evid_report_html() written atomically to out_path (0600). */
int evid_report_write(const char *data_dir, const struct evid_report_opts *opts,
                      const char *out_path, char *err, size_t errlen);

/* ---- a session's records, read back (records.c) ------------------------ */

/* Finds the tenant whose log has a record of session, into tenant.
 * Returns 0, or -EVID_ENOENT with err saying what to do. */
int evid_session_tenant(const char *data_dir, const char *session, char *tenant, size_t tenantlen,
                        char *err, size_t errlen);

/* The tenant a reader of the trail works on, into out: tenant when given
 * (it must be a safe name: -EVID_EINVAL otherwise), else the one whose
 * log has a record of session (evid_session_tenant). */
int evid_reader_tenant(const char *data_dir, const char *tenant, const char *session, char *out,
                       size_t outlen, char *err, size_t errlen);

/* Every record of session in tenant's log, in chain order, as a new array
 * of the record objects (*records, the caller's reference). Returns 0,
 * -EVID_ENOENT (no log, or no record of the session: err says which), or
 * another negative evid_err. */
int evid_session_records(const char *data_dir, const char *tenant, const char *session,
                         json_t **records, char *err, size_t errlen);

/* The newest session of tenant whose session_opened record's body has
 * member equal to value (flow: a `glassbox run` flow's "name";
 * agent_session: an act_session's id), into session. 0 or -EVID_ENOENT. */
int evid_session_opened_by(const char *data_dir, const char *tenant, const char *member,
                           const char *value, char *session, size_t sessionlen, char *err,
                           size_t errlen);

/* Reads one of tenant's artifacts and checks that it still hashes to
 * sha256. *data is malloc'd (the caller frees it). Returns 0,
 * -EVID_ENOENT, or -EVID_EIO (changed, unreadable), with err. */
int evid_artifact_read(const char *data_dir, const char *tenant, const char *sha256,
                       unsigned char **data, size_t *len, char *err, size_t errlen);

/* ---- searching the trail (trail.c) --------------------------------------- */

/* Which records evid_trail_search() returns; NULL members do not filter. */
struct evid_trail_query {
	const char *tenant;  /* required */
	const char *session; /* the record's session (its browser session's id) or
	                          * its body.agent_session (its agent session's id) */
	const char *tool;    /* body.tool */
	const char *verdict; /* "ok", an error code ("approval_required"), or a
	                      * record kind for records that are not tool calls */
	const char *operation;
	size_t limit; /* 0: 200; at most 5000 */
};

/* The verdict of a record (borrowed from rec): "ok", body.error.code, or
 * the kind when it is not a tool call. */
const char *evid_trail_verdict(json_t *rec);

/*
 * The tenant's records that match q, newest first, as a new array of the
 * records as written ({seq, time, tenant, kind, actor, session, operation,
 * body, artifacts, ...}) in *out. Reads the day files newest first and
 * stops at the limit; a line still being written is skipped. Returns 0
 * (an empty array when the tenant has no trail yet) or a negative
 * evid_err with err.
 */
int evid_trail_search(const char *data_dir, const struct evid_trail_query *q, json_t **out,
                      char *err, size_t errlen);

/* ---- command line (cli.c) ----------------------------------------------- */

/*
 * `glassbox audit ...`: argv[0] is "audit", argv[1] the subcommand:
 *   verify [--tenant T] [--pubkey FILE] [--json]  every tenant when no --tenant
 *   export-key [-o FILE]                          the public key (stdout by default)
 *   purge --tenant T --days N
 * Prints results to stdout and errors to stderr. Returns the exit status:
 * 0 success, 1 verification failed, 2 usage error, 3 could not run.
 */
int evid_cli_audit(int argc, char **argv, const char *data_dir);

/*
 * `glassbox report --session ID [--tenant T] | --tenant T [--since DATE]
 * -o FILE [--pubkey FILE]`: argv[0] is "report". Same exit statuses;
 * writing a report whose chain did not verify still succeeds (the header
 * says so) but returns 1.
 */
int evid_cli_report(int argc, char **argv, const char *data_dir);

#endif

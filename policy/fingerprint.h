/*
 * fingerprint.h - the fingerprint of an action (DESIGN.md, chain step
 * "resolve"): what an approval is bound to. An approval authorises
 * exactly the action whose fingerprint, recomputed when the approved call
 * is repeated, equals the one the person saw.
 *
 * fingerprint = lowercase hex SHA-256 of the canonical JSON (jansson
 * JSON_COMPACT | JSON_SORT_KEYS | JSON_ENSURE_ASCII) of
 *
 *   {"v": 1, "session": S, "page_url": U, "frame": F,
 *    "node": {"backend_id": N, "identity": I},
 *    "role": R, "name": A, "kind": K, "value_sha256": H}
 *
 * from struct policy_action_facts (risk.h): session_id, page_url,
 * frame_id, backend_node_id, node_identity, role, name (the accessible
 * name), policy_action_kind_name(kind), and H = hex SHA-256 of the value
 * bytes. A NULL string is JSON null, and so is H when value is NULL (an
 * empty value hashes to the SHA-256 of nothing, which is not null). The
 * value itself is never part of the canonical text, so neither it nor
 * anything derived from it except its hash is ever stored.
 *
 * Consequences a pipeline should know: the page URL is compared exactly
 * (a changed query or fragment is another action); a re-rendered node
 * with a new backend id is another action; the same button with another
 * accessible name is another action. All of this is deliberate.
 *
 * Threads: pure; any thread.
 */
#ifndef GB_POLICY_FINGERPRINT_H
#define GB_POLICY_FINGERPRINT_H

#include "policy/risk.h"

#include <stddef.h>

/* Bytes of a fingerprint: 64 hex digits and the NUL. */
#define POLICY_FINGERPRINT_BYTES 65
/* Longest string fact that may go into a fingerprint, bytes. */
#define POLICY_FINGERPRINT_FACT_MAX (64u * 1024u)

/*
 * Computes the fingerprint of f (borrowed) into out (64 hex digits and a
 * NUL). Returns 0, -POLICY_EINVAL when a string fact is not valid UTF-8 or
 * longer than POLICY_FINGERPRINT_FACT_MAX (err says which), or
 * -POLICY_ENOMEM.
 */
int policy_fingerprint(const struct policy_action_facts *f, char out[POLICY_FINGERPRINT_BYTES],
                       char *err, size_t errlen);

/*
 * The canonical JSON text hashed by policy_fingerprint (for `approvals
 * show` and for tests); the value appears only as its hash. On success
 * *out is a new string (free()). Same errors.
 */
int policy_fingerprint_canonical(const struct policy_action_facts *f, char **out, char *err,
                                 size_t errlen);

#endif

/*
 * ship.h - the evidence a replica ships to the object store, so that the
 * trail can be verified without that replica's disk, and the verifier of
 * the merged trail read back from it.
 *
 * Objects (keys of blob.h, under the store's prefix):
 *   tenants/<t>/artifacts/<aa>/<sha256>                 artifact bytes (content-addressed)
 *   tenants/<t>/invalid/<aa>/<sha256>                   bytes that failed validation
 *   tenants/<t>/replicas/<r>/artifacts/<aa>/<meta>      metadata records (per replica)
 *   tenants/<t>/replicas/<r>/invalid/<aa>/<meta>
 *   tenants/<t>/replicas/<r>/audit/<first>-<last>.jsonl  a segment: records first..last
 *                                                       (seq, 20 digits) of r's chain
 *   tenants/<t>/replicas/<r>/audit/head.json            r's signed chain head, as shipped
 * Each (tenant, replica) has its own hash-chained, signed log (audit.h,
 * in the replica's data dir); a segment is a run of its lines, shipped
 * after the artifacts its records reference, and the head after the
 * segment, so the store never names more than it holds. Every object but
 * the head is put once and never replaced (If-None-Match).
 */
#ifndef GB_EVIDENCE_SHIP_H
#define GB_EVIDENCE_SHIP_H

#include <stddef.h>
#include <stdint.h>

struct blob_store;
struct evid_ship;
struct store;

/* Most records and bytes in one segment. */
#define EVID_SHIP_SEGMENT_MAX_RECORDS 1000u
#define EVID_SHIP_SEGMENT_MAX_BYTES (8u * 1024u * 1024u)

/*
 * Starts shipping the audit logs of data_dir (every tenant's) as replica
 * (a safe name) to store (borrowed; it must outlive the shipper), every
 * interval_ms on a thread of its own. What a replica shipped before
 * (found in the store) is not shipped again, so a restarted replica ships
 * what it had not. A failed pass is retried on the next one. Returns 0 or
 * a negated errno with the reason in err.
 */
int evid_ship_start(const char *data_dir, struct blob_store *store, const char *replica,
                    int interval_ms, struct evid_ship **out, char *err, size_t errlen);

/* Runs one pass now, on the caller's thread (serialised with the
 * shipper's own). Returns 0 when everything logged so far is in the
 * store, or a negated errno with the first reason in err. */
int evid_ship_now(struct evid_ship *s, char *err, size_t errlen);

/* Stops the thread after one last pass, and frees s. NULL is a no-op. */
void evid_ship_stop(struct evid_ship *s);

/* What evid_merged_verify found for one (tenant, replica). */
struct evid_merged_result {
	char tenant[65];
	char replica[65];
	int ok;
	uint64_t records;
	size_t segments;
	uint64_t artifacts;
	char segment[512]; /* the segment at fault ("" when none is) */
	char reason[1024];
};

/* Called for each (tenant, replica) verified. */
typedef void (*evid_merged_cb)(const struct evid_merged_result *r, void *user);

/*
 * Verifies the merged trail in store: for each tenant (or only tenant,
 * when not NULL) and each replica that shipped for it, that its segments
 * run from record 1 without a gap, each holds exactly the records its
 * name says, the shipped head names no record beyond them, and the chain
 * verifies as evid_audit_verify() does (hashes, links, signatures by pk,
 * every artifact and metadata record present and unchanged), from
 * copies in a private temp dir under tmp_root. With db (may be NULL:
 * the store whose audit segment table the replicas advanced, PostgreSQL
 * when they share one), each chain's row there must name no record
 * beyond what the object store holds, and the hash of the record it
 * names; a chain in the table with nothing in the object store fails
 * too. A missing or altered segment is named. Returns 0 when every chain
 * verified, 1 when one did not, or a negated errno (the store could not
 * be read) with err.
 */
int evid_merged_verify(struct blob_store *store, struct store *db, const char *tenant,
                       const unsigned char pk[32], const char *tmp_root, evid_merged_cb cb,
                       void *user, char *err, size_t errlen);

#endif

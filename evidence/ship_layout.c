/*
 * ship_layout.c - the object store's layout of ship.h, in one place for
 * the shipper (audit_ship.c) and the verifier of the merged trail
 * (audit_merged.c): a segment's name and key, the head's key, and the
 * objects one audit record references (its artifacts and metadata
 * records) with where each lives in a data dir and in the store.
 */
#include "evidence/evidence-private.h"
#include "evidence/ship.h"

#include "blob/blob.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define KEY_BYTES 512

/* See evidence-private.h. */
int evid_segment_name_parse(const char *name, uint64_t *first, uint64_t *last)
{
	char *end;

	if (strlen(name) != 47 || name[20] != '-' || strcmp(name + 41, ".jsonl") != 0)
		return -1;
	*first = strtoull(name, &end, 10);
	if (end != name + 20)
		return -1;
	*last = strtoull(name + 21, &end, 10);
	return end == name + 41 && *first >= 1 && *last >= *first ? 0 : -1;
}

/* See evidence-private.h. */
void evid_segment_key(char *buf, size_t buflen, const char *tenant, const char *replica,
                      uint64_t first, uint64_t last)
{
	snprintf(buf, buflen, "tenants/%s/replicas/%s/audit/%020" PRIu64 "-%020" PRIu64 ".jsonl",
	         tenant, replica, first, last);
}

/* See evidence-private.h. */
void evid_segment_head_key(char *buf, size_t buflen, const char *tenant, const char *replica)
{
	snprintf(buf, buflen, "tenants/%s/replicas/%s/audit/head.json", tenant, replica);
}

/* See evidence-private.h. */
int evid_record_objects(const json_t *rec, const char *tenant, const char *replica,
                        evid_object_fn fn, void *user, char *err, size_t errlen)
{
	char rel[KEY_BYTES], key[KEY_BYTES];
	const char *sha, *meta, *area;
	json_t *a;
	size_t i;
	int rc = 0;

	json_array_foreach(json_object_get(rec, "artifacts"), i, a)
	{
		sha = json_string_value(json_object_get(a, "sha256"));
		meta = json_string_value(json_object_get(a, "meta"));
		area = json_is_false(json_object_get(a, "valid")) ? "invalid" : "artifacts";
		if (!evid_sha256_hex_is_valid(sha) || strlen(sha) != 64)
			continue;
		/* the bytes: content-addressed, the same key in every replica */
		snprintf(rel, sizeof(rel), "tenants/%s/%s/%.2s/%s", tenant, area, sha, sha);
		rc = fn(user, rel, rel, err, errlen);
		/* the metadata record: one per replica that wrote it */
		if (rc == 0 && meta && strncmp(meta, sha, 64) == 0 && !strchr(meta, '/') &&
		    blob_key_is_valid(meta)) {
			snprintf(rel, sizeof(rel), "tenants/%s/%s/%.2s/%s", tenant, area, sha,
			         meta);
			snprintf(key, sizeof(key), "tenants/%s/replicas/%s/%s/%.2s/%s", tenant,
			         replica, area, sha, meta);
			rc = fn(user, rel, key, err, errlen);
		}
		if (rc != 0)
			break;
	}
	return rc;
}

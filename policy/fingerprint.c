/*
 * fingerprint.c - the canonical fingerprint of an action (fingerprint.h).
 * Pure; the value is hashed here and goes no further.
 */
#include "policy/fingerprint.h"

#include <jansson.h>
#include <sodium.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A string fact as JSON: null when absent. Returns -1 when it is too long
 * or not UTF-8 (what names it for the error). */
static int put_string(json_t *obj, const char *key, const char *value, char *err, size_t errlen)
{
	json_t *s;
	size_t len;

	if (!value)
		return json_object_set_new(obj, key, json_null()) == 0 ? 0 : -POLICY_ENOMEM;
	len = strnlen(value, POLICY_FINGERPRINT_FACT_MAX + 1);
	if (len > POLICY_FINGERPRINT_FACT_MAX) {
		snprintf(err, errlen,
		         "the action's %s is longer than %u bytes: it cannot be "
		         "fingerprinted",
		         key, POLICY_FINGERPRINT_FACT_MAX);
		return -POLICY_EINVAL;
	}
	s = json_stringn(value, len);
	if (!s) {
		snprintf(err, errlen,
		         "the action's %s is not valid UTF-8: it cannot be fingerprinted", key);
		return -POLICY_EINVAL;
	}
	return json_object_set_new(obj, key, s) == 0 ? 0 : -POLICY_ENOMEM;
}

int policy_fingerprint_canonical(const struct policy_action_facts *f, char **out, char *err,
                                 size_t errlen)
{
	unsigned char digest[crypto_hash_sha256_BYTES];
	char hex[2 * crypto_hash_sha256_BYTES + 1];
	json_t *o = NULL;
	json_t *node = NULL;
	int rc = 0;

	*out = NULL;
	if (!f) {
		snprintf(err, errlen, "no action to fingerprint");
		rc = -POLICY_EINVAL;
		goto out;
	}
	o = json_object();
	node = json_object();
	if (!o || !node) {
		rc = -POLICY_ENOMEM;
		goto out;
	}
	rc = json_object_set_new(o, "v", json_integer(1)) ? -POLICY_ENOMEM : 0;
	if (rc == 0)
		rc = put_string(o, "session", f->session_id, err, errlen);
	if (rc == 0)
		rc = put_string(o, "page_url", f->page_url, err, errlen);
	if (rc == 0)
		rc = put_string(o, "frame", f->frame_id, err, errlen);
	if (rc == 0)
		rc = json_object_set_new(node, "backend_id", json_integer(f->backend_node_id))
		         ? -POLICY_ENOMEM
		         : 0;
	if (rc == 0)
		rc = put_string(node, "identity", f->node_identity, err, errlen);
	if (rc == 0)
		rc = put_string(o, "role", f->role, err, errlen);
	if (rc == 0)
		rc = put_string(o, "name", f->name, err, errlen);
	if (rc == 0)
		rc = put_string(o, "kind", policy_action_kind_name(f->kind), err, errlen);
	if (rc < 0)
		goto out;
	if (f->value) {
		crypto_hash_sha256(digest, f->value, f->value_len);
		sodium_bin2hex(hex, sizeof(hex), digest, sizeof(digest));
		rc = put_string(o, "value_sha256", hex, err, errlen);
	} else {
		rc = put_string(o, "value_sha256", NULL, err, errlen);
	}
	if (rc < 0)
		goto out;
	rc = json_object_set(o, "node", node) ? -POLICY_ENOMEM : 0;
	if (rc < 0)
		goto out;
	*out = json_dumps(o, JSON_COMPACT | JSON_SORT_KEYS | JSON_ENSURE_ASCII);
	if (!*out)
		rc = -POLICY_ENOMEM;
out:
	if (rc == -POLICY_ENOMEM)
		snprintf(err, errlen, "out of memory computing the action's fingerprint");
	json_decref(node);
	json_decref(o);
	return rc;
}

int policy_fingerprint(const struct policy_action_facts *f, char out[POLICY_FINGERPRINT_BYTES],
                       char *err, size_t errlen)
{
	unsigned char digest[crypto_hash_sha256_BYTES];
	char *canon = NULL;
	int rc;

	out[0] = '\0';
	rc = policy_fingerprint_canonical(f, &canon, err, errlen);
	if (rc < 0)
		goto out;
	crypto_hash_sha256(digest, (const unsigned char *)canon, strlen(canon));
	sodium_bin2hex(out, POLICY_FINGERPRINT_BYTES, digest, sizeof(digest));
out:
	free(canon);
	return rc;
}

/*
 * audit_record.c - what one audit record is: its canonical text, its
 * hash and signature, the checks on a record read back, and the signed
 * head file that names the newest record (so that records cut off the
 * end of the log are noticed).
 *
 * Canonical text: jansson's JSON_COMPACT | JSON_SORT_KEYS. A record line
 * is the canonical text of the whole record; the hash and the signature
 * cover the canonical text of the record without "hash" and "sig". A line
 * that is not exactly the canonical text of what it parses to was edited.
 */
#include "evidence/audit.h"
#include "evidence/evidence-private.h"
#include "evidence/evidence.h"

#include "common/util.h"

#include <errno.h>
#include <sodium.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define PATH_BYTES 4096
#define HEAD_MAX_BYTES 4096u
#define SIG_B64_BYTES 100 /* base64 of 64 bytes is 88 characters */

char *evid_json_canonical(const json_t *j)
{
	return json_dumps(j, JSON_COMPACT | JSON_SORT_KEYS);
}

int evid_record_digest(json_t *rec, char hash[65], char **signed_text)
{
	json_t *copy = json_copy(rec);
	char *text = NULL;
	int rc = -1;

	if (signed_text)
		*signed_text = NULL;
	if (!copy)
		goto out;
	json_object_del(copy, "hash");
	json_object_del(copy, "sig");
	text = evid_json_canonical(copy);
	if (!text)
		goto out;
	evid_sha256_hex((const unsigned char *)text, strlen(text), hash);
	if (signed_text) {
		*signed_text = text;
		text = NULL;
	}
	rc = 0;
out:
	free(text);
	json_decref(copy);
	return rc;
}

int evid_sig_verify(const char *sig_b64, const char *text, const unsigned char pk[32])
{
	unsigned char sig[crypto_sign_BYTES];
	size_t got = 0;

	if (!sig_b64 || sodium_base642bin(sig, sizeof(sig), sig_b64, strlen(sig_b64), NULL, &got,
	                                  NULL, sodium_base64_VARIANT_ORIGINAL) != 0)
		return 0;
	if (got != sizeof(sig))
		return 0;
	return crypto_sign_verify_detached(sig, (const unsigned char *)text, strlen(text), pk) == 0;
}

void evid_sig_make(const struct evid_keypair *kp, const char *text, char *sig_b64, size_t len)
{
	unsigned char sig[crypto_sign_BYTES];

	crypto_sign_detached(sig, NULL, (const unsigned char *)text, strlen(text), kp->sk);
	sodium_bin2base64(sig_b64, len, sig, sizeof(sig), sodium_base64_VARIANT_ORIGINAL);
}

/* A string member, or NULL for a JSON null when nullable. Sets *bad when
 * the member is missing or of another type. */
static const char *str_member(json_t *obj, const char *name, int nullable, int *bad)
{
	json_t *v = json_object_get(obj, name);

	if (json_is_string(v))
		return json_string_value(v);
	if (nullable && json_is_null(v))
		return NULL;
	*bad = 1;
	return NULL;
}

/* 1 when s is exactly 16 lowercase hex digits. */
static int is_key_id(const char *s)
{
	size_t i;

	if (!s)
		return 0;
	for (i = 0; i < 16; i++)
		if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f')))
			return 0;
	return s[16] == '\0';
}

/* Checks the members of a parsed record and points r's fields at them. */
static int check_members(struct evid_record *r, char *why, size_t whylen)
{
	json_t *rec = r->rec;
	json_t *seq = json_object_get(rec, "seq");
	json_t *v = json_object_get(rec, "v");
	int bad = 0;
	int rc = -1;

	if (!json_is_integer(v) || json_integer_value(v) != 1) {
		gb_set_error(why, whylen, "its format version \"v\" is not 1");
		goto out;
	}
	if (!json_is_integer(seq) || json_integer_value(seq) < 1) {
		gb_set_error(why, whylen, "it has no valid \"seq\"");
		goto out;
	}
	r->seq = (uint64_t)json_integer_value(seq);
	r->time = str_member(rec, "time", 0, &bad);
	r->tenant = str_member(rec, "tenant", 0, &bad);
	r->kind = str_member(rec, "kind", 0, &bad);
	r->session = str_member(rec, "session", 1, &bad);
	r->operation = str_member(rec, "operation", 1, &bad);
	r->prev_hash = str_member(rec, "prev_hash", 0, &bad);
	r->key_id = str_member(rec, "key_id", 0, &bad);
	r->hash = str_member(rec, "hash", 0, &bad);
	r->sig = str_member(rec, "sig", 0, &bad);
	r->body = json_object_get(rec, "body");
	r->artifacts = json_object_get(rec, "artifacts");
	if (bad || !json_is_object(r->body) || !json_is_array(r->artifacts) ||
	    !json_is_object(json_object_get(rec, "actor"))) {
		gb_set_error(why, whylen, "a member is missing or has the wrong type");
		goto out;
	}
	if (!evid_sha256_hex_is_valid(r->hash) || !evid_sha256_hex_is_valid(r->prev_hash) ||
	    !is_key_id(r->key_id)) {
		gb_set_error(why, whylen, "its hash, prev_hash or key_id is not well-formed");
		goto out;
	}
	rc = 0;
out:
	return rc;
}

int evid_record_parse(const char *line, size_t len, struct evid_record *r, char *why, size_t whylen)
{
	json_error_t jerr;
	char *canon = NULL;
	int rc = -1;

	memset(r, 0, sizeof(*r));
	r->rec = json_loadb(line, len, JSON_REJECT_DUPLICATES, &jerr);
	if (!r->rec) {
		gb_set_error(why, whylen, "it is not valid JSON (%s at column %d)", jerr.text,
		             jerr.column);
		goto out;
	}
	if (!json_is_object(r->rec)) {
		gb_set_error(why, whylen, "it is not a JSON object");
		goto out;
	}
	if (check_members(r, why, whylen) != 0)
		goto out;
	canon = evid_json_canonical(r->rec);
	if (!canon) {
		gb_set_error(why, whylen, "out of memory");
		goto out;
	}
	if (strlen(canon) != len || memcmp(canon, line, len) != 0) {
		gb_set_error(why, whylen,
		             "its text is not in the canonical form it was written in");
		goto out;
	}
	rc = 0;
out:
	free(canon);
	if (rc != 0) {
		json_decref(r->rec);
		memset(r, 0, sizeof(*r));
	}
	return rc;
}

void evid_record_free(struct evid_record *r)
{
	if (!r)
		return;
	json_decref(r->rec);
	memset(r, 0, sizeof(*r));
}

/* ---- head.json ---------------------------------------------------------- */

/* The signed text of a head: its canonical JSON without "sig" (its
 * "hash" member names the newest record and is covered). */
static char *head_signed_text(json_t *doc)
{
	json_t *copy = json_copy(doc);
	char *text = NULL;

	if (copy) {
		json_object_del(copy, "sig");
		text = evid_json_canonical(copy);
	}
	json_decref(copy);
	return text;
}

int evid_head_read(const char *dir, const unsigned char *pk, struct evid_head *h, char *why,
                   size_t whylen)
{
	char path[PATH_BYTES];
	unsigned char *text = NULL;
	size_t len = 0;
	json_t *doc = NULL;
	json_t *seq;
	char *signed_text = NULL;
	const char *hash;
	const char *key_id;
	int rc;

	memset(h, 0, sizeof(*h));
	snprintf(path, sizeof(path), "%s/head.json", dir);
	rc = gb_fs_read_file(path, HEAD_MAX_BYTES, &text, &len, why, whylen);
	if (rc != 0)
		goto out;
	rc = -EVID_EIO;
	doc = json_loadb((const char *)text, len, JSON_REJECT_DUPLICATES, NULL);
	seq = json_object_get(doc, "seq");
	hash = json_string_value(json_object_get(doc, "hash"));
	key_id = json_string_value(json_object_get(doc, "key_id"));
	if (!json_is_integer(seq) || json_integer_value(seq) < 1 ||
	    !evid_sha256_hex_is_valid(hash) || !is_key_id(key_id)) {
		gb_set_error(why, whylen, "head.json is not a valid chain head (it was edited)");
		goto out;
	}
	if (pk) {
		signed_text = head_signed_text(doc);
		if (!signed_text) {
			gb_set_error(why, whylen, "out of memory");
			goto out;
		}
		if (!evid_sig_verify(json_string_value(json_object_get(doc, "sig")), signed_text,
		                     pk)) {
			gb_set_error(why, whylen,
			             "head.json's signature does not verify (it was edited, "
			             "or signed by another key)");
			goto out;
		}
	}
	h->seq = (uint64_t)json_integer_value(seq);
	snprintf(h->hash, sizeof(h->hash), "%s", hash);
	snprintf(h->key_id, sizeof(h->key_id), "%s", key_id);
	rc = 0;
out:
	free(signed_text);
	json_decref(doc);
	free(text);
	return rc;
}

int evid_head_write(const char *dir, const char *tenant, const struct evid_keypair *kp,
                    uint64_t seq, const char *hash, char *err, size_t errlen)
{
	char path[PATH_BYTES];
	char tmp[PATH_BYTES];
	char sig[SIG_B64_BYTES];
	char *signed_text = NULL;
	char *text = NULL;
	json_t *doc;
	int existed;
	int rc = -EVID_ENOMEM;

	doc = json_pack("{s:s, s:I, s:s, s:s}", "tenant", tenant, "seq", (json_int_t)seq, "hash",
	                hash, "key_id", kp->key_id);
	signed_text = doc ? head_signed_text(doc) : NULL;
	if (!signed_text)
		goto oom;
	evid_sig_make(kp, signed_text, sig, sizeof(sig));
	if (json_object_set_new(doc, "sig", json_string(sig)) != 0)
		goto oom;
	text = evid_json_canonical(doc);
	if (!text)
		goto oom;
	snprintf(path, sizeof(path), "%s/head.json", dir);
	existed = access(path, F_OK) == 0;
	rc = gb_fs_write_temp(dir, text, strlen(text), tmp, sizeof(tmp), err, errlen);
	if (rc != 0)
		goto out;
	if (!existed) {
		rc = gb_fs_publish_replace(tmp, path, dir, err, errlen); /* the dir synced */
		goto out;
	}
	/* replacing a head: its bytes are synced (never an empty head.json),
	 * the rename is not (the dir's sync cost as much as the record's):
	 * after a crash the head may be the one before, naming an earlier
	 * record, which stays true */
	if (rename(tmp, path) != 0) {
		gb_set_io_error(err, errlen, "rename a temp file to", path, errno);
		unlink(tmp);
		rc = -EVID_EIO;
	}
	goto out;
oom:
	gb_set_error(err, errlen, "out of memory writing the chain head");
out:
	free(text);
	free(signed_text);
	json_decref(doc);
	return rc;
}

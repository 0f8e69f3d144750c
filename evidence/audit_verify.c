/*
 * audit_verify.c - checks a tenant's whole audit chain and names the
 * first record that fails, and why.
 *
 * Two passes over the day files, under the log's shared lock (appends
 * wait; a reviewer's read-only copy has no lock and needs none):
 *   1. collect every seq that parses, and the boundaries named by purge
 *      records whose hash and signature hold (what a purge removed);
 *   2. walk the records in order and check, for each: it parses and is in
 *      canonical form (else: edited, or truncated for a torn last line),
 *      its hash, its key, its signature (edited / wrong key), its seq
 *      (a gap is "removed" when the missing seq is nowhere in the log and
 *      "reordered" when it is elsewhere), its prev_hash (broken link), and
 *      that its artifacts exist and still hash to their names.
 * The chain may start after record 1 only at a boundary a valid purge
 * record names. Finally head.json (signed) must not name more records
 * than the log holds: records cut off the end are "removed".
 * The order of the checks within a record matters: a changed byte is
 * reported as an edit before anything it might have made look like
 * (a changed seq is not a reordering).
 */
#include "evidence/audit.h"
#include "evidence/evidence-private.h"
#include "evidence/evidence.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define PATH_BYTES 4096

/* A boundary a purge record vouches for: the last purged record. */
struct boundary {
	uint64_t seq;
	char hash[65];
};

/* A growable set of seqs (sorted before lookups). */
struct seqset {
	uint64_t *v;
	size_t n;
	size_t cap;
};

struct vstate {
	const char *data_dir;
	const char *tenant;
	const unsigned char *pk;
	char key_id[17];
	struct evid_verify_report *rep;
	int oom;
	/* pass 1 */
	struct seqset seqs;
	struct boundary *bounds;
	size_t nbounds;
	size_t capbounds;
	/* pass 2 */
	const char *file;
	int last_file;
	int started;
	uint64_t expected;
	char prev_hash[65];
	struct evid_keyset checked;
	int have_head;
	struct evid_head head;
};

const char *evid_verify_failure_name(enum evid_verify_failure f)
{
	switch (f) {
	case EVID_VERIFY_OK:
		return "ok";
	case EVID_VERIFY_EDITED:
		return "edited";
	case EVID_VERIFY_REMOVED:
		return "removed";
	case EVID_VERIFY_REORDERED:
		return "reordered";
	case EVID_VERIFY_BROKEN_LINK:
		return "broken link";
	case EVID_VERIFY_WRONG_KEY:
		return "wrong key";
	case EVID_VERIFY_TRUNCATED:
		return "truncated";
	case EVID_VERIFY_ARTIFACT_MISSING:
		return "artifact missing";
	case EVID_VERIFY_ARTIFACT_CHANGED:
		return "artifact changed";
	case EVID_VERIFY_BAD_PURGE:
		return "removed without a purge record";
	case EVID_VERIFY_UNREADABLE:
		return "unreadable";
	}
	return "unknown";
}

/* ---- small sets ---------------------------------------------------------- */

static int seqset_add(struct seqset *s, uint64_t seq)
{
	uint64_t *grown;

	if (s->n == s->cap) {
		s->cap = s->cap ? s->cap * 2 : 1024;
		grown = realloc(s->v, s->cap * sizeof(*s->v));
		if (!grown)
			return -1;
		s->v = grown;
	}
	s->v[s->n++] = seq;
	return 0;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a;
	uint64_t y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

static int seqset_has(const struct seqset *s, uint64_t seq)
{
	return bsearch(&seq, s->v, s->n, sizeof(*s->v), cmp_u64) != NULL;
}

/* ---- failures ------------------------------------------------------------ */

/* Records the first failure; returns 1 so that line callbacks stop. */
static int fail(struct vstate *v, enum evid_verify_failure f, uint64_t seq, unsigned long line,
                const char *fmt, ...) __attribute__((format(printf, 5, 6)));

static int fail(struct vstate *v, enum evid_verify_failure f, uint64_t seq, unsigned long line,
                const char *fmt, ...)
{
	va_list ap;

	v->rep->ok = 0;
	v->rep->failure = f;
	v->rep->failed_seq = seq;
	v->rep->failed_line = line;
	snprintf(v->rep->failed_file, sizeof(v->rep->failed_file), "%s", v->file ? v->file : "");
	va_start(ap, fmt);
	vsnprintf(v->rep->reason, sizeof(v->rep->reason), fmt, ap);
	va_end(ap);
	return 1;
}

/* The seq a damaged line claims, when it still parses far enough; else
 * the seq expected there. */
static uint64_t claimed_seq(const struct vstate *v, const char *line, size_t len)
{
	json_t *j = json_loadb(line, len, 0, NULL);
	json_t *seq = json_object_get(j, "seq");
	uint64_t out = v->started ? v->expected : 0;

	if (json_is_integer(seq) && json_integer_value(seq) > 0)
		out = (uint64_t)json_integer_value(seq);
	json_decref(j);
	return out;
}

/* ---- pass 1 -------------------------------------------------------------- */

/* Checks a parsed record's hash and signature: 0 ok, 1 hash, 2 signature,
 * -1 out of memory. */
static int check_hash_sig(const struct evid_record *r, const unsigned char *pk)
{
	char hash[65];
	char *text = NULL;
	int rc = -1;

	if (evid_record_digest(r->rec, hash, &text) != 0)
		goto out;
	rc = strcmp(hash, r->hash) != 0 ? 1 : !evid_sig_verify(r->sig, text, pk) ? 2 : 0;
out:
	free(text);
	return rc;
}

/* Keeps the boundaries a valid purge record names. */
static void add_boundaries(struct vstate *v, const struct evid_record *r)
{
	json_t *files = json_object_get(r->body, "files");
	json_t *f;
	json_t *last;
	struct boundary *grown;
	const char *hash;
	size_t i;

	json_array_foreach(files, i, f)
	{
		last = json_object_get(f, "last_seq");
		hash = json_string_value(json_object_get(f, "last_hash"));
		if (!json_is_integer(last) || !evid_sha256_hex_is_valid(hash))
			continue;
		if (v->nbounds == v->capbounds) {
			v->capbounds = v->capbounds ? v->capbounds * 2 : 16;
			grown = realloc(v->bounds, v->capbounds * sizeof(*grown));
			if (!grown) {
				v->oom = 1;
				return;
			}
			v->bounds = grown;
		}
		v->bounds[v->nbounds].seq = (uint64_t)json_integer_value(last);
		memcpy(v->bounds[v->nbounds].hash, hash, 65);
		v->nbounds++;
	}
}

static int pass1_line(const char *line, size_t len, unsigned long lineno, int complete,
                      int too_long, void *user)
{
	struct vstate *v = user;
	struct evid_record r;

	(void)lineno;
	(void)complete;
	if (too_long || evid_record_parse(line, len, &r, NULL, 0) != 0)
		return 0;
	if (seqset_add(&v->seqs, r.seq) != 0)
		v->oom = 1;
	if (!strcmp(r.kind, EVID_AUDIT_PURGE) && !strcmp(r.tenant, v->tenant) &&
	    check_hash_sig(&r, v->pk) == 0)
		add_boundaries(v, &r);
	evid_record_free(&r);
	return v->oom ? -EVID_ENOMEM : 0;
}

/* The boundary (last purged seq) that vouches for a chain starting with
 * r, or 0 with *found 0. */
static uint64_t purge_boundary(const struct vstate *v, const struct evid_record *r, int *found)
{
	size_t i;

	*found = 0;
	for (i = 0; i < v->nbounds; i++) {
		if (v->bounds[i].seq + 1 == r->seq && !strcmp(v->bounds[i].hash, r->prev_hash)) {
			*found = 1;
			return v->bounds[i].seq;
		}
	}
	return 0;
}

/* ---- pass 2 -------------------------------------------------------------- */

/* Checks the first record: the start of the chain, or a purged prefix. */
static int check_start(struct vstate *v, const struct evid_record *r, unsigned long lineno)
{
	uint64_t through;
	uint64_t first_missing = 1;
	int found;
	size_t i;

	if (r->seq == 1) {
		if (strcmp(r->prev_hash, EVID_ZERO_HASH) != 0)
			return fail(v, EVID_VERIFY_BROKEN_LINK, 1, lineno,
			            "record 1's prev_hash is not "
			            "zeros: the start of the chain was replaced");
		return 0;
	}
	through = purge_boundary(v, r, &found);
	if (found) {
		v->rep->purged = 1;
		v->rep->purged_through = through;
		return 0;
	}
	for (i = 0; i < v->nbounds; i++)
		if (v->bounds[i].seq < r->seq && v->bounds[i].seq + 1 > first_missing)
			first_missing = v->bounds[i].seq + 1;
	if (seqset_has(&v->seqs, first_missing))
		return fail(
		    v, EVID_VERIFY_REORDERED, r->seq, lineno,
		    "record %llu comes first, but "
		    "record %llu, which belongs before it, is later in the log: records were "
		    "reordered",
		    (unsigned long long)r->seq, (unsigned long long)first_missing);
	if (first_missing + 1 == r->seq)
		return fail(
		    v, EVID_VERIFY_BAD_PURGE, first_missing, lineno,
		    "the chain starts at "
		    "record %llu: record %llu is gone and no valid purge record accounts for it "
		    "(it was removed)",
		    (unsigned long long)r->seq, (unsigned long long)first_missing);
	return fail(v, EVID_VERIFY_BAD_PURGE, first_missing, lineno,
	            "the chain starts at record "
	            "%llu: records %llu to %llu are gone and no valid purge record accounts for "
	            "them (they were removed)",
	            (unsigned long long)r->seq, (unsigned long long)first_missing,
	            (unsigned long long)(r->seq - 1));
}

/* Checks that r's seq follows the previous record's. */
static int check_order(struct vstate *v, const struct evid_record *r, unsigned long lineno)
{
	unsigned long long want = v->expected;
	unsigned long long got = r->seq;

	if (r->seq == v->expected)
		return 0;
	if (r->seq > v->expected && !seqset_has(&v->seqs, v->expected)) {
		if (got - want == 1)
			return fail(v, EVID_VERIFY_REMOVED, v->expected, lineno,
			            "record %llu is missing: "
			            "record %llu follows record %llu (it was removed)",
			            want, got, want - 1);
		return fail(v, EVID_VERIFY_REMOVED, v->expected, lineno,
		            "records %llu to %llu are "
		            "missing: record %llu follows record %llu (they were removed)",
		            want, got - 1, got, want - 1);
	}
	return fail(v, EVID_VERIFY_REORDERED, r->seq, lineno,
	            "record %llu is out of order: it "
	            "comes where record %llu belongs (records were reordered%s)",
	            got, want, r->seq < v->expected ? " or duplicated" : "");
}

/* The kind an artifact entry names, for messages. */
static const char *artifact_kind(json_t *a)
{
	const char *kind = json_string_value(json_object_get(a, "kind"));

	return kind ? kind : "artifact";
}

/* 1 when name can be the metadata record of artifact sha: "<sha>.json" or
 * "<sha>.<tag>[.<random>].json", one path component. */
static int meta_name_is_valid(const char *name, const char *sha)
{
	size_t n = name ? strlen(name) : 0;

	return n >= 69 && n < 256 && !strncmp(name, sha, 64) && name[64] == '.' &&
	       !strcmp(name + n - 5, ".json") && !strchr(name, '/') && !strstr(name, "..");
}

/* Checks the metadata record an artifact entry vouches for (meta,
 * meta_sha256: entries written before they were recorded have neither):
 * it exists and still hashes to what the record says. */
static int check_meta(struct vstate *v, const struct evid_record *r, unsigned long lineno,
                      json_t *a, const char *sha, int valid)
{
	const char *name = json_string_value(json_object_get(a, "meta"));
	const char *want = json_string_value(json_object_get(a, "meta_sha256"));
	char path[4600];
	char actual[65];
	char err[1024] = "";
	unsigned char *text = NULL;
	size_t len = 0;
	int rc = 0;

	if (!json_object_get(a, "meta") && !json_object_get(a, "meta_sha256"))
		goto out;
	if (!meta_name_is_valid(name, sha) || !evid_sha256_hex_is_valid(want)) {
		rc = fail(v, EVID_VERIFY_EDITED, r->seq, lineno,
		          "record %llu names a metadata record for %s %s that is not valid",
		          (unsigned long long)r->seq, artifact_kind(a), sha);
		goto out;
	}
	if (evid_artifact_path(v->data_dir, v->tenant, valid, sha, path, sizeof(path)) != 0 ||
	    strlen(path) + strlen(name) - 64 >= sizeof(path)) {
		rc = fail(v, EVID_VERIFY_UNREADABLE, r->seq, lineno,
		          "record %llu: the path of the metadata record of %s is too long",
		          (unsigned long long)r->seq, sha);
		goto out;
	}
	/* the record sits beside the artifact: .../<aa>/<name> */
	snprintf(path + strlen(path) - 64, sizeof(path) - (strlen(path) - 64), "%s", name);
	rc = gb_fs_read_file(path, EVID_MAX_META_BYTES, &text, &len, err, sizeof(err));
	if (rc == -EVID_ENOENT) {
		rc = fail(v, EVID_VERIFY_ARTIFACT_MISSING, r->seq, lineno,
		          "record %llu references the metadata record %s of %s %s, which is "
		          "missing",
		          (unsigned long long)r->seq, path, artifact_kind(a), sha);
		goto out;
	}
	if (rc != 0) {
		rc = fail(v, EVID_VERIFY_UNREADABLE, r->seq, lineno,
		          "record %llu references the metadata record %s, which cannot be read: "
		          "%s",
		          (unsigned long long)r->seq, path, err);
		goto out;
	}
	evid_sha256_hex(text, len, actual);
	if (strcmp(actual, want) != 0)
		rc = fail(v, EVID_VERIFY_ARTIFACT_CHANGED, r->seq, lineno,
		          "record %llu references the metadata record %s of %s %s, which was "
		          "changed: it now hashes to %s",
		          (unsigned long long)r->seq, path, artifact_kind(a), sha, actual);
out:
	free(text);
	return rc;
}

/* Checks that every artifact r references exists and matches its hash,
 * and so does the metadata record written for it. */
static int check_artifacts(struct vstate *v, const struct evid_record *r, unsigned long lineno)
{
	char key[66];
	char err[1024];
	unsigned char *data = NULL;
	size_t len = 0;
	const char *sha;
	json_t *a;
	size_t i;
	int changed = 0;
	int valid;
	int rc;

	json_array_foreach(r->artifacts, i, a)
	{
		sha = json_string_value(json_object_get(a, "sha256"));
		valid = !json_is_false(json_object_get(a, "valid"));
		if (!evid_sha256_hex_is_valid(sha))
			return fail(v, EVID_VERIFY_EDITED, r->seq, lineno,
			            "record %llu references an "
			            "artifact without a valid sha256",
			            (unsigned long long)r->seq);
		rc = check_meta(v, r, lineno, a, sha, valid);
		if (rc != 0)
			return rc;
		snprintf(key, sizeof(key), "%c%s", valid ? 'v' : 'i', sha);
		rc = evid_keyset_add(&v->checked, key);
		if (rc < 0) {
			v->oom = 1;
			return -EVID_ENOMEM;
		}
		if (rc == 1)
			continue;
		rc = evid_artifact_load(v->data_dir, v->tenant, valid, sha, &data, &len, &changed,
		                        err, sizeof(err));
		free(data);
		data = NULL;
		if (rc == -EVID_ENOENT)
			return fail(v, EVID_VERIFY_ARTIFACT_MISSING, r->seq, lineno,
			            "record %llu "
			            "references %s %s, which is missing: %s",
			            (unsigned long long)r->seq, artifact_kind(a), sha, err);
		if (rc == -EVID_EIO && changed)
			return fail(v, EVID_VERIFY_ARTIFACT_CHANGED, r->seq, lineno,
			            "record %llu "
			            "references %s %s, which was changed: %s",
			            (unsigned long long)r->seq, artifact_kind(a), sha, err);
		if (rc != 0)
			return fail(v, EVID_VERIFY_UNREADABLE, r->seq, lineno,
			            "record %llu references "
			            "%s %s, which cannot be read: %s",
			            (unsigned long long)r->seq, artifact_kind(a), sha, err);
		v->rep->artifacts++;
	}
	return 0;
}

static int pass2_line(const char *line, size_t len, unsigned long lineno, int complete,
                      int too_long, void *user)
{
	struct vstate *v = user;
	struct evid_record r = { 0 };
	uint64_t seq;
	char why[256];
	int rc;

	if (!complete) {
		seq = claimed_seq(v, line, len);
		rc = fail(v, EVID_VERIFY_TRUNCATED, seq, lineno,
		          "%s ends inside record %llu: the log "
		          "was truncated%s",
		          v->file, (unsigned long long)seq,
		          v->last_file ? "" : " (and is not the newest day file)");
		goto out;
	}
	if (too_long) {
		rc = fail(v, EVID_VERIFY_EDITED, v->started ? v->expected : 0, lineno,
		          "line %lu is "
		          "longer than any record can be: it was edited",
		          lineno);
		goto out;
	}
	if (evid_record_parse(line, len, &r, why, sizeof(why)) != 0) {
		seq = claimed_seq(v, line, len);
		rc = fail(v, EVID_VERIFY_EDITED, seq, lineno, "record %llu was edited: %s",
		          (unsigned long long)seq, why);
		goto out;
	}
	if (strcmp(r.tenant, v->tenant) != 0) {
		rc = fail(v, EVID_VERIFY_EDITED, r.seq, lineno,
		          "record %llu names tenant \"%.64s\", "
		          "not %s: it was edited or moved from another log",
		          (unsigned long long)r.seq, r.tenant, v->tenant);
		goto out;
	}
	rc = check_hash_sig(&r, v->pk);
	if (rc < 0) {
		v->oom = 1;
		rc = -EVID_ENOMEM;
		goto out;
	}
	if (rc == 1) {
		rc = fail(v, EVID_VERIFY_EDITED, r.seq, lineno,
		          "record %llu was edited: its content "
		          "does not match its hash",
		          (unsigned long long)r.seq);
		goto out;
	}
	if (strcmp(r.key_id, v->key_id) != 0) {
		rc = fail(v, EVID_VERIFY_WRONG_KEY, r.seq, lineno,
		          "record %llu was signed by key %s, "
		          "not by the key given (%s): verify with the service's audit.pub",
		          (unsigned long long)r.seq, r.key_id, v->key_id);
		goto out;
	}
	if (rc == 2) {
		rc = fail(v, EVID_VERIFY_EDITED, r.seq, lineno,
		          "record %llu was edited: its "
		          "signature does not verify",
		          (unsigned long long)r.seq);
		goto out;
	}
	rc = v->started ? check_order(v, &r, lineno) : check_start(v, &r, lineno);
	if (rc != 0)
		goto out;
	if (v->started && strcmp(r.prev_hash, v->prev_hash) != 0) {
		rc = fail(v, EVID_VERIFY_BROKEN_LINK, r.seq, lineno,
		          "record %llu does not link to "
		          "record %llu (its prev_hash differs): the record before it was replaced",
		          (unsigned long long)r.seq, (unsigned long long)(r.seq - 1));
		goto out;
	}
	if (v->have_head && r.seq == v->head.seq && strcmp(r.hash, v->head.hash) != 0) {
		rc = fail(v, EVID_VERIFY_EDITED, r.seq, lineno,
		          "record %llu is not the record the "
		          "chain head acknowledged: it was replaced",
		          (unsigned long long)r.seq);
		goto out;
	}
	rc = check_artifacts(v, &r, lineno);
	if (rc != 0)
		goto out;
	if (!v->started)
		v->rep->first_seq = r.seq;
	v->started = 1;
	v->expected = r.seq + 1;
	memcpy(v->prev_hash, r.hash, 65);
	v->rep->records++;
	v->rep->last_seq = r.seq;
out:
	evid_record_free(&r);
	return rc;
}

/* Checks head.json against the end of the chain. head_rc: what reading
 * it gave (0, -EVID_ENOENT, -EVID_EIO). */
static void check_head(struct vstate *v, int head_rc, const char *head_why)
{
	v->file = "head.json";
	if (head_rc == -EVID_EIO) {
		fail(v, EVID_VERIFY_EDITED, v->rep->last_seq, 0, "the chain head was edited: %s",
		     head_why);
		return;
	}
	if (!v->have_head && v->rep->records) {
		fail(v, EVID_VERIFY_TRUNCATED, v->rep->last_seq + 1, 0,
		     "the chain head (head.json) "
		     "cannot be trusted (%s): it cannot be told whether records were removed from "
		     "the end",
		     head_why);
		return;
	}
	if (v->have_head && v->head.seq == v->rep->last_seq + 1)
		fail(v, EVID_VERIFY_REMOVED, v->rep->last_seq + 1, 0,
		     "the log ends at record %llu "
		     "but the chain head says record %llu was written: it was removed from the end",
		     (unsigned long long)v->rep->last_seq, (unsigned long long)v->head.seq);
	else if (v->have_head && v->head.seq > v->rep->last_seq)
		fail(v, EVID_VERIFY_REMOVED, v->rep->last_seq + 1, 0,
		     "the log ends at record %llu "
		     "but the chain head says record %llu was written: records %llu to %llu were "
		     "removed from the end",
		     (unsigned long long)v->rep->last_seq, (unsigned long long)v->head.seq,
		     (unsigned long long)v->rep->last_seq + 1, (unsigned long long)v->head.seq);
}

/* Runs both passes over the day files. */
static int run_passes(struct vstate *v, const char *dir, char (*names)[EVID_DAY_NAME_BYTES],
                      size_t n, char *err, size_t errlen)
{
	char path[PATH_BYTES + EVID_DAY_NAME_BYTES];
	char head_why[256] = "it is missing";
	size_t i;
	int head_rc;
	int rc = 0;

	for (i = 0; i < n && rc == 0; i++) {
		snprintf(path, sizeof(path), "%s/%s", dir, names[i]);
		rc = evid_read_lines(path, pass1_line, v, err, errlen);
	}
	if (rc != 0)
		goto out;
	qsort(v->seqs.v, v->seqs.n, sizeof(*v->seqs.v), cmp_u64);
	head_rc = evid_head_read(dir, v->pk, &v->head, head_why, sizeof(head_why));
	if (head_rc == -EVID_ENOENT)
		snprintf(head_why, sizeof(head_why), "it is missing");
	v->have_head = head_rc == 0;
	for (i = 0; i < n && v->rep->ok; i++) {
		v->file = names[i];
		v->last_file = i + 1 == n;
		snprintf(path, sizeof(path), "%s/%s", dir, names[i]);
		rc = evid_read_lines(path, pass2_line, v, err, errlen);
		if (rc == 1)
			rc = 0; /* a failure was recorded */
		if (rc != 0)
			goto out;
	}
	if (v->rep->ok)
		check_head(v, head_rc, head_why);
out:
	return rc;
}

int evid_audit_verify(const char *data_dir, const char *tenant, const unsigned char *pubkey,
                      struct evid_verify_report *rep, char *err, size_t errlen)
{
	struct vstate v;
	char dir[PATH_BYTES];
	char keyfile[PATH_BYTES];
	unsigned char pk[32];
	char(*names)[EVID_DAY_NAME_BYTES] = NULL;
	size_t n = 0;
	int lock_fd = -1;
	int rc;

	memset(rep, 0, sizeof(*rep));
	memset(&v, 0, sizeof(v));
	rep->ok = 1;
	rc = evid_audit_dir_path(data_dir, tenant, dir, sizeof(dir), err, errlen);
	if (rc != 0)
		goto out;
	if (pubkey) {
		memcpy(pk, pubkey, 32);
	} else {
		snprintf(keyfile, sizeof(keyfile), "%s/keys/audit.pub", data_dir);
		rc = evid_keys_load_public(keyfile, pk, NULL, err, errlen);
		if (rc != 0)
			goto out;
	}
	v.data_dir = data_dir;
	v.tenant = tenant;
	v.pk = pk;
	v.rep = rep;
	evid_key_id(pk, v.key_id);
	memcpy(rep->key_id, v.key_id, sizeof(rep->key_id));
	lock_fd = evid_audit_lock_shared(dir);
	rc = evid_audit_list_days(dir, &names, &n, err, errlen);
	if (rc == -EVID_ENOENT)
		gb_set_error(err, errlen, "tenant %s has no audit log under %s", tenant, data_dir);
	if (rc != 0)
		goto out;
	rc = run_passes(&v, dir, names, n, err, errlen);
	if (rc == 0 && v.oom)
		rc = -EVID_ENOMEM;
	if (rc == -EVID_ENOMEM)
		gb_set_error(err, errlen, "out of memory verifying the audit log of %s", tenant);
out:
	if (rc != 0)
		rep->ok = 0;
	if (lock_fd >= 0)
		close(lock_fd);
	free(names);
	free(v.seqs.v);
	free(v.bounds);
	evid_keyset_free(&v.checked);
	return rc;
}

void evid_verify_location(const struct evid_verify_report *rep, char *buf, size_t buflen)
{
	if (rep->failed_line)
		snprintf(buf, buflen, "%s line %lu", rep->failed_file, rep->failed_line);
	else
		snprintf(buf, buflen, "%s", rep->failed_file[0] ? rep->failed_file : "the log");
}

void evid_verify_report_format(const char *tenant, const struct evid_verify_report *rep, char *buf,
                               size_t buflen)
{
	char where[160];
	char purged[64] = "";

	if (rep->purged)
		snprintf(purged, sizeof(purged), ", records up to %llu purged",
		         (unsigned long long)rep->purged_through);
	if (rep->ok) {
		snprintf(buf, buflen,
		         "%s: chain verified: %llu records (seq %llu..%llu%s), %llu "
		         "artifacts, key %s",
		         tenant, (unsigned long long)rep->records,
		         (unsigned long long)rep->first_seq, (unsigned long long)rep->last_seq,
		         purged, (unsigned long long)rep->artifacts, rep->key_id);
		return;
	}
	evid_verify_location(rep, where, sizeof(where));
	snprintf(buf, buflen, "%s: FAILED at record %llu (%s): %s: %s", tenant,
	         (unsigned long long)rep->failed_seq, where, evid_verify_failure_name(rep->failure),
	         rep->reason);
}

json_t *evid_verify_report_json(const char *tenant, const struct evid_verify_report *rep)
{
	json_t *j =
	    json_pack("{s:s, s:b, s:I, s:I, s:I, s:I, s:b, s:s}", "tenant", tenant, "ok", rep->ok,
	              "records", (json_int_t)rep->records, "first_seq", (json_int_t)rep->first_seq,
	              "last_seq", (json_int_t)rep->last_seq, "artifacts",
	              (json_int_t)rep->artifacts, "purged", rep->purged, "key_id", rep->key_id);

	if (j && rep->purged)
		json_object_set_new(j, "purged_through",
		                    json_integer((json_int_t)rep->purged_through));
	if (j && !rep->ok)
		json_object_set_new(j, "failure",
		                    json_pack("{s:s, s:I, s:s, s:I, s:s}", "kind",
		                              evid_verify_failure_name(rep->failure), "seq",
		                              (json_int_t)rep->failed_seq, "file", rep->failed_file,
		                              "line", (json_int_t)rep->failed_line, "reason",
		                              rep->reason));
	return j;
}

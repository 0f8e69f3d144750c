/*
 * audit_merged.c - verifying the merged trail from the object store
 * (ship.h): every (tenant, replica) chain, read back from its segments.
 *
 * DESIGN
 * The store is listed once. For each chain, the segment names must run
 * from record 1 to the last without a gap; each segment is read and must
 * hold exactly the records its name says; then the chain, its head and
 * the artifacts its records reference are copied into a private temp dir
 * laid out as a data dir, and evid_audit_verify() checks it, so the
 * merged trail is held to the same rules as one replica's. A failure
 * names the segment that holds (or should hold) the record at fault.
 * Nothing is written to the store.
 */
#include "evidence/audit.h"
#include "evidence/evidence-private.h"
#include "evidence/evidence.h"
#include "evidence/ship.h"

#include "blob/blob.h"
#include "common/fs.h"
#include "common/util.h"
#include "store/store.h"

#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <stdarg.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define PATH_BYTES 4096
#define KEY_BYTES 512
#define MAX_SEGMENTS_PER_CHAIN 1000000u

struct segment {
	uint64_t first, last;
	char key[KEY_BYTES];
};

/* One (tenant, replica) chain found in the listing. */
struct chain {
	struct chain *next;
	char tenant[EVID_MAX_NAME_BYTES + 1];
	char replica[EVID_MAX_NAME_BYTES + 1];
	struct segment *segs;
	size_t n, cap;
	int has_head;
	int in_table;           /* the segment table has its row */
	int64_t table_records;  /* that row's last record */
	char table_hash[65];    /* and its hash */
	char hash_at_table[65]; /* the hash of that record in the object store */
};

struct listing {
	const char *only; /* one tenant, or NULL */
	struct chain *chains;
	int oom;
};

/* Copies the path component of key starting at p into out (cap bytes);
 * returns a pointer past its '/', or NULL. */
static const char *component(const char *p, char *out, size_t cap)
{
	const char *slash = strchr(p, '/');
	size_t n = slash ? (size_t)(slash - p) : 0;

	if (!slash || n == 0 || n >= cap)
		return NULL;
	memcpy(out, p, n);
	out[n] = '\0';
	return slash + 1;
}

static struct chain *chain_of(struct listing *l, const char *tenant, const char *replica)
{
	struct chain *c;

	for (c = l->chains; c; c = c->next)
		if (!strcmp(c->tenant, tenant) && !strcmp(c->replica, replica))
			return c;
	c = calloc(1, sizeof(*c));
	if (!c)
		return NULL;
	snprintf(c->tenant, sizeof(c->tenant), "%s", tenant);
	snprintf(c->replica, sizeof(c->replica), "%s", replica);
	c->next = l->chains;
	l->chains = c;
	return c;
}

/* blob_list callback: keeps tenants/<t>/replicas/<r>/audit/<name>. */
static int on_key(const char *key, size_t size, void *user)
{
	struct listing *l = user;
	char tenant[EVID_MAX_NAME_BYTES + 1], replica[EVID_MAX_NAME_BYTES + 1], word[16];
	const char *p = key;
	struct chain *c;
	struct segment *segs;
	uint64_t first, last;

	(void)size;
	if (!(p = component(p, word, sizeof(word))) || strcmp(word, "tenants") ||
	    !(p = component(p, tenant, sizeof(tenant))) ||
	    !(p = component(p, word, sizeof(word))) || strcmp(word, "replicas") ||
	    !(p = component(p, replica, sizeof(replica))) ||
	    !(p = component(p, word, sizeof(word))) || strcmp(word, "audit") || strchr(p, '/'))
		return 0;
	if ((l->only && strcmp(l->only, tenant)) || !gb_fs_name_is_safe(tenant) ||
	    !gb_fs_name_is_safe(replica))
		return 0;
	c = chain_of(l, tenant, replica);
	if (!c)
		goto oom;
	if (!strcmp(p, "head.json")) {
		c->has_head = 1;
		return 0;
	}
	if (evid_segment_name_parse(p, &first, &last) != 0 || c->n >= MAX_SEGMENTS_PER_CHAIN)
		return 0;
	if (c->n == c->cap) {
		c->cap = c->cap ? c->cap * 2 : 16;
		segs = realloc(c->segs, c->cap * sizeof(*segs));
		if (!segs)
			goto oom;
		c->segs = segs;
	}
	c->segs[c->n].first = first;
	c->segs[c->n].last = last;
	snprintf(c->segs[c->n].key, sizeof(c->segs[c->n].key), "%s", key);
	c->n++;
	return 0;
oom:
	l->oom = 1;
	return -ENOMEM;
}

static int cmp_segments(const void *a, const void *b)
{
	const struct segment *x = a, *y = b;

	return x->first < y->first ? -1 : x->first > y->first;
}

static int remove_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	(void)flag;
	(void)ftw;
	remove(path);
	return 0;
}

/* Sets r failed on seg (NULL: none) with a reason. */
static void failed(struct evid_merged_result *r, const struct segment *seg, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void failed(struct evid_merged_result *r, const struct segment *seg, const char *fmt, ...)
{
	va_list ap;

	r->ok = 0;
	snprintf(r->segment, sizeof(r->segment), "%s", seg ? seg->key : "");
	va_start(ap, fmt);
	vsnprintf(r->reason, sizeof(r->reason), fmt, ap);
	va_end(ap);
}

/* Appends len bytes to root/rel (creating its dir). */
static int append_to(const char *root, const char *rel_dir, const char *name, const void *data,
                     size_t len, char *err, size_t errlen)
{
	char dir[PATH_BYTES], path[PATH_BYTES + 80];
	int fd, rc = 0;

	snprintf(dir, sizeof(dir), "%s/%s", root, rel_dir);
	rc = gb_fs_mkdirs_abs(dir, err, errlen);
	if (rc != 0)
		return rc;
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
	if (fd < 0 || write(fd, data, len) != (ssize_t)len) {
		gb_set_io_error(err, errlen, "write", path, errno);
		rc = -EIO;
	}
	if (fd >= 0)
		close(fd);
	return rc;
}

/* Copies object key (when the store has it) to root/rel. */
static int copy_object(struct blob_store *store, const char *key, const char *root, const char *rel,
                       char *err, size_t errlen)
{
	char dir[PATH_BYTES];
	unsigned char *data = NULL;
	size_t len = 0;
	char *slash;
	int rc;

	rc = blob_get(store, key, EVID_MAX_ARTIFACT_BYTES, &data, &len, err, errlen);
	if (rc == -ENOENT) {
		rc = 0; /* the verifier says what is missing */
		goto out;
	}
	if (rc != 0)
		goto out;
	snprintf(dir, sizeof(dir), "%s/%s", root, rel);
	slash = strrchr(dir, '/');
	*slash = '\0';
	rc = gb_fs_mkdirs_abs(dir, err, errlen);
	if (rc == 0) {
		char path[PATH_BYTES];
		int fd;

		snprintf(path, sizeof(path), "%s/%s", root, rel);
		fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
		if (fd < 0 || write(fd, data, len) != (ssize_t)len) {
			gb_set_io_error(err, errlen, "write", path, errno);
			rc = -EIO;
		}
		if (fd >= 0)
			close(fd);
	}
out:
	free(data);
	return rc;
}

/* Where copied objects go: the store and the mirror's root. */
struct copy_to {
	struct blob_store *store;
	const char *root;
};

/* evid_object_fn: copies one object a record references to the mirror. */
static int copy_referenced(void *user, const char *rel, const char *key, char *err, size_t errlen)
{
	const struct copy_to *to = user;

	return copy_object(to->store, key, to->root, rel, err, errlen);
}

/* Copies the artifacts and metadata records one record references. */
static int copy_artifacts(struct blob_store *store, const struct chain *c, json_t *rec,
                          const char *root, char *err, size_t errlen)
{
	struct copy_to to = { store, root };

	return evid_record_objects(rec, c->tenant, c->replica, copy_referenced, &to, err, errlen);
}

/* Reads one segment into the mirror: its lines must be records
 * seg->first..seg->last in order. 0, 1 (r failed), or a negated errno. */
static int copy_segment(struct blob_store *store, const struct chain *c, const struct segment *seg,
                        const char *root, struct evid_merged_result *r, char *err, size_t errlen)
{
	char audit_rel[PATH_BYTES], day[EVID_DAY_NAME_BYTES];
	unsigned char *data = NULL;
	const char *p, *end, *nl, *time;
	uint64_t want = seg->first;
	size_t len = 0;
	json_t *rec;
	int rc;

	rc = blob_get(store, seg->key, EVID_SHIP_SEGMENT_MAX_BYTES + EVID_AUDIT_MAX_RECORD_BYTES,
	              &data, &len, err, errlen);
	if (rc == -ENOENT) {
		failed(r, seg, "segment %s is listed but cannot be read: it was removed", seg->key);
		rc = 1;
	}
	if (rc != 0)
		goto out;
	snprintf(audit_rel, sizeof(audit_rel), "tenants/%s/audit", c->tenant);
	for (p = (const char *)data, end = p + len; p < end && rc == 0; p = nl + 1) {
		nl = memchr(p, '\n', (size_t)(end - p));
		if (!nl)
			nl = end;
		rec = json_loadb(p, (size_t)(nl - p), 0, NULL);
		time = json_string_value(json_object_get(rec, "time"));
		if (!json_is_integer(json_object_get(rec, "seq")) ||
		    (uint64_t)json_integer_value(json_object_get(rec, "seq")) != want || !time ||
		    strlen(time) < 10) {
			failed(r, seg,
			       "segment %s was altered: where record %" PRIu64
			       " should be it holds %s",
			       seg->key, want,
			       rec ? "another record" : "text that is not a record");
			json_decref(rec);
			rc = 1;
			break;
		}
		snprintf(day, sizeof(day), "%.10s.jsonl", time);
		if (!evid_is_day_file(day))
			snprintf(day, sizeof(day), "0000-00-00.jsonl");
		if (c->in_table && want == (uint64_t)c->table_records) {
			const char *h = json_string_value(json_object_get(rec, "hash"));

			snprintf(((struct chain *)c)->hash_at_table, 65, "%s", h ? h : "");
		}
		rc = append_to(root, audit_rel, day, p, (size_t)(nl - p), err, errlen);
		if (rc == 0)
			rc = append_to(root, audit_rel, day, "\n", 1, err, errlen);
		if (rc == 0)
			rc = copy_artifacts(store, c, rec, root, err, errlen);
		json_decref(rec);
		want++;
	}
	if (rc == 0 && want != seg->last + 1) {
		failed(r, seg,
		       "segment %s was altered: it should hold records %" PRIu64 " to %" PRIu64
		       " and ends at %" PRIu64,
		       seg->key, seg->first, seg->last, want - 1);
		rc = 1;
	}
	r->records += want - seg->first;
out:
	free(data);
	return rc;
}

/* The segment that holds seq, or NULL. */
static const struct segment *segment_of(const struct chain *c, uint64_t seq)
{
	size_t i;

	for (i = 0; i < c->n; i++)
		if (c->segs[i].first <= seq && seq <= c->segs[i].last)
			return &c->segs[i];
	return NULL;
}

/* Verifies one chain into r. 0, or a negated errno (store unreadable). */
static int verify_chain(struct blob_store *store, struct chain *c, const unsigned char pk[32],
                        const char *root, struct evid_merged_result *r, char *err, size_t errlen)
{
	struct evid_verify_report rep;
	char key[KEY_BYTES], rel[KEY_BYTES];
	const struct segment *at;
	uint64_t next = 1;
	size_t i;
	int rc = 0;

	qsort(c->segs, c->n, sizeof(*c->segs), cmp_segments);
	r->segments = c->n;
	for (i = 0; i < c->n; i++) {
		if (c->segs[i].first != next) {
			if (c->segs[i].first > next)
				failed(r, &c->segs[i],
				       "records %" PRIu64 " to %" PRIu64
				       " are in no segment: the segment before %s is missing",
				       next, c->segs[i].first - 1, c->segs[i].key);
			else
				failed(
				    r, &c->segs[i],
				    "segment %s overlaps the one before it (records from %" PRIu64
				    ")",
				    c->segs[i].key, c->segs[i].first);
			return 0;
		}
		next = c->segs[i].last + 1;
	}
	for (i = 0; i < c->n && rc == 0; i++)
		rc = copy_segment(store, c, &c->segs[i], root, r, err, errlen);
	if (rc == 1)
		return 0;
	if (rc != 0)
		return rc;
	evid_segment_head_key(key, sizeof(key), c->tenant, c->replica);
	snprintf(rel, sizeof(rel), "tenants/%s/audit/head.json", c->tenant);
	rc = copy_object(store, key, root, rel, err, errlen);
	if (rc != 0)
		return rc;
	if (c->n == 0) {
		failed(r, NULL,
		       c->in_table
		           ? "the segment table says this replica wrote %lld records, and "
		             "the object store holds none of its segments: they were removed"
		           : "the store holds a head for this chain but none of its segments",
		       (long long)c->table_records);
		return 0;
	}
	if (c->in_table && (uint64_t)c->table_records > c->segs[c->n - 1].last) {
		failed(
		    r, NULL,
		    "the segment table says this replica wrote records up to %lld and the object "
		    "store holds them up to %" PRIu64 ": the segments after %s are missing",
		    (long long)c->table_records, c->segs[c->n - 1].last, c->segs[c->n - 1].key);
		return 0;
	}
	if (c->in_table && c->table_records > 0 && strcmp(c->hash_at_table, c->table_hash) != 0) {
		at = segment_of(c, (uint64_t)c->table_records);
		failed(
		    r, at,
		    "segment %s was altered: record %lld does not have the hash the segment table "
		    "holds for it",
		    at ? at->key : "?", (long long)c->table_records);
		return 0;
	}
	rc = evid_audit_verify(root, c->tenant, pk, &rep, err, errlen);
	if (rc != 0) {
		failed(r, NULL, "%s", err);
		return 0;
	}
	r->artifacts = rep.artifacts;
	if (!rep.ok) {
		at = segment_of(c, rep.failed_seq);
		if (!at && rep.failure == EVID_VERIFY_REMOVED) {
			failed(r, NULL,
			       "%s: the segments after %s are missing (records %" PRIu64
			       " and later)",
			       evid_verify_failure_name(rep.failure), c->segs[c->n - 1].key,
			       c->segs[c->n - 1].last + 1);
			return 0;
		}
		failed(r, at, "%s%s%s: %s", at ? "segment " : "", at ? at->key : "",
		       at ? "" : "the chain", rep.reason);
		snprintf(r->reason + strlen(r->reason), sizeof(r->reason) - strlen(r->reason),
		         " (%s)", evid_verify_failure_name(rep.failure));
		return 0;
	}
	r->ok = 1;
	return 0;
}

/* store_audit_segment_cb: the rows "replicas/<r>/audit" of one tenant. */
struct table_walk {
	struct listing *l;
	const char *tenant;
};

static int on_row(const struct store_audit_segment *row, void *user)
{
	struct table_walk *w = user;
	char replica[EVID_MAX_NAME_BYTES + 1];
	const char *p = row->segment;
	struct chain *c;

	if (strncmp(p, "replicas/", 9) != 0 || !(p = component(p + 9, replica, sizeof(replica))) ||
	    strcmp(p, "audit") != 0 || !gb_fs_name_is_safe(replica))
		return 0;
	c = chain_of(w->l, w->tenant, replica);
	if (!c) {
		w->l->oom = 1;
		return -ENOMEM;
	}
	c->in_table = 1;
	c->table_records = row->records;
	snprintf(c->table_hash, sizeof(c->table_hash), "%s", row->head_hash);
	return 0;
}

/* Adds what the segment table holds for each tenant of the listing (and
 * for l->only) to it. */
static int read_table(struct store *db, struct listing *l, char *err, size_t errlen)
{
	char tenants[64][EVID_MAX_NAME_BYTES + 1];
	struct table_walk w = { l, NULL };
	struct chain *c;
	size_t n = 0, i;
	int rc = 0;

	if (l->only)
		snprintf(tenants[n++], sizeof(tenants[0]), "%s", l->only);
	for (c = l->chains; c && n < 64; c = c->next) {
		for (i = 0; i < n && strcmp(tenants[i], c->tenant) != 0; i++)
			;
		if (i == n)
			snprintf(tenants[n++], sizeof(tenants[0]), "%s", c->tenant);
	}
	for (i = 0; i < n && rc == 0; i++) {
		w.tenant = tenants[i];
		if (store_audit_segment_list(db, tenants[i], on_row, &w, err, errlen) != 0)
			rc = -EIO;
	}
	return rc;
}

/* See ship.h. */
int evid_merged_verify(struct blob_store *store, struct store *db, const char *tenant,
                       const unsigned char pk[32], const char *tmp_root, evid_merged_cb cb,
                       void *user, char *err, size_t errlen)
{
	struct listing l = { tenant, NULL, 0 };
	struct evid_merged_result r;
	char prefix[KEY_BYTES], tmp[PATH_BYTES], root[PATH_BYTES + 200];
	struct chain *c;
	int rc, any_failed = 0;

	if (tenant)
		snprintf(prefix, sizeof(prefix), "tenants/%s/replicas/", tenant);
	else
		snprintf(prefix, sizeof(prefix), "tenants/");
	rc = blob_list(store, prefix, on_key, &l, err, errlen);
	if (rc == 0 && db)
		rc = read_table(db, &l, err, errlen);
	if (rc != 0)
		goto out;
	if (!l.chains) {
		gb_set_error(err, errlen, "%s holds no audit segments%s%s", blob_describe(store),
		             tenant ? " of tenant " : "", tenant ? tenant : "");
		rc = -ENOENT;
		goto out;
	}
	snprintf(tmp, sizeof(tmp), "%s/glassbox-verify-XXXXXX", tmp_root);
	if (!mkdtemp(tmp)) {
		gb_set_io_error(err, errlen, "create a temp dir in", tmp_root, errno);
		rc = -EIO;
		goto out;
	}
	for (c = l.chains; c && rc == 0; c = c->next) {
		memset(&r, 0, sizeof(r));
		snprintf(r.tenant, sizeof(r.tenant), "%s", c->tenant);
		snprintf(r.replica, sizeof(r.replica), "%s", c->replica);
		snprintf(root, sizeof(root), "%s/%s.%s", tmp, c->tenant, c->replica);
		rc = gb_fs_mkdirs_abs(root, err, errlen);
		if (rc == 0)
			rc = verify_chain(store, c, pk, root, &r, err, errlen);
		if (rc == 0) {
			any_failed |= !r.ok;
			cb(&r, user);
		}
	}
	nftw(tmp, remove_entry, 16, FTW_DEPTH | FTW_PHYS);
	if (rc == 0)
		rc = any_failed ? 1 : 0;
out:
	while (l.chains) {
		c = l.chains;
		l.chains = c->next;
		free(c->segs);
		free(c);
	}
	if (l.oom && rc <= 0) {
		gb_set_error(err, errlen, "out of memory listing %s", blob_describe(store));
		rc = -ENOMEM;
	}
	return rc;
}

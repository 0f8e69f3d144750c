/*
 * audit_ship.c - shipping each tenant's audit log, and the evidence its
 * records reference, from this replica's data dir to the object store
 * (ship.h has the layout).
 *
 * DESIGN
 * Threads: one of its own, woken every interval (or by evid_ship_stop),
 * and callers of evid_ship_now(); a mutex serialises passes, so one pass
 * runs at a time and the state below needs no other lock.
 * Per tenant it keeps what it shipped (the last seq) and where it is in
 * the log (a day file and a byte offset), learnt from the store's
 * segment names the first time, so a restarted replica continues where
 * its last shipped segment ends.
 * A pass, for each tenant whose log grew: under the log's shared lock
 * (appenders hold it exclusively), read the head and the complete lines
 * after the cursor; then, unlocked, put each record's artifacts and
 * metadata records, then the segment, then the head, if the segment
 * reaches it. Nothing advances until every put succeeded: a failure is
 * retried whole on the next pass, and puts of what is there already are
 * no-ops (If-None-Match), so a retry never duplicates or replaces.
 * Last, the chain's row in the store's audit segment table (store.h:
 * PostgreSQL when replicas share one) moves to the new last record and
 * its hash, so the table never names a record the object store lacks,
 * and a segment deleted from the object store is found missing even when
 * it was the last one.
 */
#include "evidence/audit.h"
#include "evidence/evidence-private.h"
#include "evidence/evidence.h"
#include "evidence/ship.h"

#include "blob/blob.h"
#include "common/log.h"
#include "common/metrics.h"
#include "common/util.h"
#include "store/store.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define MOD "evidence"
#define PATH_BYTES 4096
#define KEY_BYTES 512

/* One tenant's progress. */
struct ship_tenant {
	struct ship_tenant *next;
	char name[EVID_MAX_NAME_BYTES + 1];
	int known;        /* shipped_seq was learnt from the store */
	uint64_t shipped; /* the last seq in the store */
	char file[EVID_DAY_NAME_BYTES];
	off_t offset;          /* in file: the lines before it are shipped or older */
	int registered;        /* its row in the segment table exists */
	int64_t table_records; /* what that row says */
};

struct evid_ship {
	char *data_dir;
	char replica[EVID_MAX_NAME_BYTES + 1];
	struct blob_store *store;
	struct store *db; /* the segment table's store; used under pass_lock */
	int interval_ms;
	pthread_mutex_t pass_lock; /* serialises passes; guards tenants */
	struct ship_tenant *tenants;
	pthread_mutex_t lock; /* guards stop */
	pthread_cond_t wake;
	int stop;
	int failing; /* the last pass failed: said once until one succeeds */
	pthread_t thread;
	int started;
};

/* What one pass of one tenant collected under the lock. */
struct batch {
	struct gb_buf lines; /* whole lines, '\n'-terminated */
	uint64_t first, last;
	size_t n;
	char file[EVID_DAY_NAME_BYTES];
	off_t offset;        /* the cursor after the batch */
	unsigned char *head; /* head.json's bytes when the batch reaches it */
	size_t head_len;
};

/* ---- what the store holds already ---------------------------------------- */

static int max_shipped(const char *key, size_t size, void *user)
{
	const char *name = strrchr(key, '/');
	uint64_t first, last;

	(void)size;
	if (name && evid_segment_name_parse(name + 1, &first, &last) == 0 &&
	    last > *(uint64_t *)user)
		*(uint64_t *)user = last;
	return 0;
}

/* Learns t->shipped from the store's segment names. */
static int learn_shipped(struct evid_ship *s, struct ship_tenant *t, char *err, size_t errlen)
{
	char prefix[KEY_BYTES];
	uint64_t last = 0;
	int rc;

	snprintf(prefix, sizeof(prefix), "tenants/%s/replicas/%s/audit/", t->name, s->replica);
	rc = blob_list(s->store, prefix, max_shipped, &last, err, errlen);
	if (rc == 0) {
		t->shipped = last;
		t->known = 1;
	}
	return rc;
}

/* ---- reading the log after the cursor ------------------------------------ */

/* The seq of one record line, or 0 when it is not a record. */
static uint64_t line_seq(const char *line, size_t len)
{
	json_t *j = json_loadb(line, len, 0, NULL);
	json_t *seq = json_object_get(j, "seq");
	uint64_t v = json_is_integer(seq) && json_integer_value(seq) > 0
	                 ? (uint64_t)json_integer_value(seq)
	                 : 0;

	json_decref(j);
	return v;
}

/* Adds the complete lines of dir/name from *offset (moved past each line
 * it consumed) with a seq after t->shipped to b, until b is full. Returns
 * 1 when b is full, 0 at the end of the file, or -EIO. */
static int read_from(const struct ship_tenant *t, const char *dir, const char *name, off_t *offset,
                     struct batch *b, char *err, size_t errlen)
{
	char path[PATH_BYTES + EVID_DAY_NAME_BYTES];
	char *buf = NULL;
	size_t have = 0, start, i;
	ssize_t n;
	uint64_t seq;
	int fd, rc = 0;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	if (fd < 0) {
		gb_set_io_error(err, errlen, "open", path, errno);
		return -EIO;
	}
	buf = malloc(EVID_SHIP_SEGMENT_MAX_BYTES + EVID_AUDIT_MAX_RECORD_BYTES);
	if (!buf) {
		rc = -ENOMEM;
		goto out;
	}
	for (;;) {
		n = pread(fd, buf + have,
		          EVID_SHIP_SEGMENT_MAX_BYTES + EVID_AUDIT_MAX_RECORD_BYTES - have,
		          *offset + (off_t)have);
		if (n < 0) {
			gb_set_io_error(err, errlen, "read", path, errno);
			rc = -EIO;
			goto out;
		}
		have += (size_t)n;
		/* the lines complete in buf[0..have) */
		for (start = 0, i = 0; i < have; i++) {
			if (buf[i] != '\n')
				continue;
			seq = line_seq(buf + start, i - start);
			if (seq > t->shipped && (b->n == 0 || seq == b->last + 1)) {
				if (b->n >= EVID_SHIP_SEGMENT_MAX_RECORDS ||
				    b->lines.len + (i + 1 - start) > EVID_SHIP_SEGMENT_MAX_BYTES) {
					rc = 1;
					break;
				}
				if (gb_buf_append(&b->lines, buf + start, i + 1 - start) < 0) {
					rc = -ENOMEM;
					break;
				}
				if (b->n++ == 0)
					b->first = seq;
				b->last = seq;
			}
			start = i + 1;
		}
		*offset += (off_t)start;
		if (rc != 0 || n == 0 || start == 0)
			break; /* full, end of file, or a partial line that does not fit */
		memmove(buf, buf + start, have - start);
		have -= start;
	}
out:
	free(buf);
	close(fd);
	return rc;
}

/* Collects t's unshipped lines into b, under the log's shared lock.
 * Returns 0 (b->n may be 0) or a negated errno. */
static int collect(struct evid_ship *s, struct ship_tenant *t, struct batch *b, char *err,
                   size_t errlen)
{
	char dir[PATH_BYTES], why[256];
	char(*names)[EVID_DAY_NAME_BYTES] = NULL;
	struct evid_head head;
	size_t n = 0, i;
	off_t offset;
	int lock_fd, rc;

	rc = evid_audit_dir_path(s->data_dir, t->name, dir, sizeof(dir), err, errlen);
	if (rc != 0)
		return rc;
	lock_fd = evid_audit_lock_shared(dir);
	if (evid_head_read(dir, NULL, &head, why, sizeof(why)) != 0 || head.seq <= t->shipped)
		goto out; /* nothing new (or no head yet) */
	rc = evid_audit_list_days(dir, &names, &n, err, errlen);
	if (rc != 0)
		goto out;
	snprintf(b->file, sizeof(b->file), "%s", t->file);
	b->offset = t->offset;
	for (i = 0; i < n && rc == 0; i++) {
		if (t->file[0] && strcmp(names[i], t->file) < 0)
			continue;
		offset = strcmp(names[i], t->file) == 0 ? t->offset : 0;
		rc = read_from(t, dir, names[i], &offset, b, err, errlen);
		snprintf(b->file, sizeof(b->file), "%s", names[i]);
		b->offset = offset;
	}
	if (rc == 1)
		rc = 0;
	if (rc == 0 && b->n && b->last == head.seq) {
		char path[PATH_BYTES + 16];

		snprintf(path, sizeof(path), "%s/head.json", dir);
		rc = gb_fs_read_file(path, 4096, &b->head, &b->head_len, err, errlen);
	}
out:
	if (lock_fd >= 0)
		close(lock_fd);
	free(names);
	return rc;
}

/* ---- putting --------------------------------------------------------------- */

/* Puts the local file rel (under the data dir) as key, unless the store
 * has it. A local file that is gone is skipped (the verifier will say). */
static int put_file(struct evid_ship *s, const char *rel, const char *key, char *err, size_t errlen)
{
	char path[PATH_BYTES];
	unsigned char *data = NULL;
	size_t len = 0;
	int rc;

	snprintf(path, sizeof(path), "%s/%s", s->data_dir, rel);
	rc = gb_fs_read_file(path, EVID_MAX_ARTIFACT_BYTES, &data, &len, err, errlen);
	if (rc == -ENOENT) {
		GB_LOGW(MOD, "%s is referenced by the audit log but missing: not shipped", rel);
		rc = 0;
		goto out;
	}
	if (rc == 0) {
		rc = blob_put(s->store, key, data, len, err, errlen);
		if (rc == BLOB_EXISTS)
			rc = 0;
	}
out:
	free(data);
	return rc;
}

/* evid_object_fn: puts one object a record references. */
static int put_object(void *user, const char *rel, const char *key, char *err, size_t errlen)
{
	return put_file(user, rel, key, err, errlen);
}

/* Puts the artifacts (and metadata records) one record line references. */
static int put_artifacts(struct evid_ship *s, const char *tenant, const char *line, size_t len,
                         char *err, size_t errlen)
{
	json_t *j = json_loadb(line, len, 0, NULL);
	int rc = evid_record_objects(j, tenant, s->replica, put_object, s, err, errlen);

	json_decref(j);
	return rc;
}

/* Puts what b holds: artifacts, the segment, the head. */
static int put_batch(struct evid_ship *s, const struct ship_tenant *t, const struct batch *b,
                     char *err, size_t errlen)
{
	char key[KEY_BYTES];
	const char *p = b->lines.data, *end = b->lines.data + b->lines.len, *nl;
	int rc = 0;

	for (; p < end && rc == 0; p = nl + 1) {
		nl = memchr(p, '\n', (size_t)(end - p));
		rc = put_artifacts(s, t->name, p, (size_t)(nl - p), err, errlen);
	}
	if (rc != 0)
		return rc;
	evid_segment_key(key, sizeof(key), t->name, s->replica, b->first, b->last);
	rc = blob_put(s->store, key, b->lines.data, b->lines.len, err, errlen);
	if (rc == BLOB_EXISTS)
		rc = 0; /* an earlier pass put it and stopped before moving on */
	if (rc == 0 && b->head) {
		evid_segment_head_key(key, sizeof(key), t->name, s->replica);
		rc = blob_put_replace(s->store, key, b->head, b->head_len, err, errlen);
	}
	return rc;
}

/* The "hash" of the last line in b. */
static void last_hash(const struct batch *b, char hash[65])
{
	const char *end = b->lines.data + b->lines.len - 1; /* its '\n' */
	const char *p = end;
	const char *h;
	json_t *j;

	while (p > b->lines.data && p[-1] != '\n')
		p--;
	j = json_loadb(p, (size_t)(end - p), 0, NULL);
	h = json_string_value(json_object_get(j, "hash"));
	snprintf(hash, 65, "%s", h ? h : "");
	json_decref(j);
}

/* Moves the chain's row in the segment table to b's last record. */
static int advance_head(struct evid_ship *s, struct ship_tenant *t, const struct batch *b,
                        char *err, size_t errlen)
{
	struct store_audit_segment row;
	char name[STORE_SEGMENT_MAX + 1], hash[65];
	int rc, tries;

	snprintf(name, sizeof(name), "replicas/%s/audit", s->replica);
	last_hash(b, hash);
	for (tries = 0; tries < 2; tries++) {
		if (!t->registered || tries > 0) {
			rc = store_audit_segment_register(s->db, t->name, name, &row, err, errlen);
			if (rc != 0)
				return -EIO;
			t->registered = 1;
			t->table_records = row.records;
		}
		if ((uint64_t)t->table_records >= b->last)
			return 0; /* shipped before, and recorded */
		rc = store_audit_segment_advance(s->db, t->name, name, t->table_records,
		                                 (int64_t)b->last, hash, err, errlen);
		if (rc == 0) {
			t->table_records = (int64_t)b->last;
			return 0;
		}
		if (rc != -STORE_ESTATE)
			return -EIO;
	}
	return -EIO;
}

/* Ships what t's log holds beyond what the store has, segment by segment. */
static int ship_tenant(struct evid_ship *s, struct ship_tenant *t, char *err, size_t errlen)
{
	struct batch b;
	int rc = 0;

	if (!t->known)
		rc = learn_shipped(s, t, err, errlen);
	while (rc == 0) {
		memset(&b, 0, sizeof(b));
		gb_buf_init(&b.lines, EVID_SHIP_SEGMENT_MAX_BYTES + EVID_AUDIT_MAX_RECORD_BYTES);
		rc = collect(s, t, &b, err, errlen);
		if (rc == 0 && b.n)
			rc = put_batch(s, t, &b, err, errlen);
		if (rc == 0 && b.n)
			rc = advance_head(s, t, &b, err, errlen);
		if (rc == 0 && b.n) {
			t->shipped = b.last;
			gb_metrics_counter_add("glassbox_audit_records_shipped_total", NULL,
			                       (double)b.n);
		}
		if (rc == 0) {
			snprintf(t->file, sizeof(t->file), "%s", b.file);
			t->offset = b.offset;
		}
		gb_buf_free(&b.lines);
		free(b.head);
		if (b.n == 0)
			break;
	}
	return rc;
}

/* The tenant's state, created on first sight; NULL when out of memory. */
static struct ship_tenant *tenant_state(struct evid_ship *s, const char *name)
{
	struct ship_tenant *t;

	for (t = s->tenants; t; t = t->next)
		if (!strcmp(t->name, name))
			return t;
	t = calloc(1, sizeof(*t));
	if (!t)
		return NULL;
	snprintf(t->name, sizeof(t->name), "%.64s", name);
	t->next = s->tenants;
	s->tenants = t;
	return t;
}

/* One pass over every tenant of the data dir. */
static int pass(struct evid_ship *s, char *err, size_t errlen)
{
	char path[PATH_BYTES];
	struct ship_tenant *t;
	struct dirent *e;
	DIR *d;
	int rc = 0, trc;

	snprintf(path, sizeof(path), "%s/tenants", s->data_dir);
	pthread_mutex_lock(&s->pass_lock);
	d = opendir(path);
	while (d && (e = readdir(d)) != NULL) {
		if (!gb_fs_name_is_safe(e->d_name))
			continue;
		t = tenant_state(s, e->d_name);
		if (!t) {
			rc = -ENOMEM;
			break;
		}
		trc = ship_tenant(s, t, rc == 0 ? err : NULL, rc == 0 ? errlen : 0);
		if (trc != 0 && rc == 0)
			rc = trc;
	}
	if (d)
		closedir(d);
	pthread_mutex_unlock(&s->pass_lock);
	return rc;
}

static void *ship_main(void *arg)
{
	struct evid_ship *s = arg;
	struct timespec until;
	char err[1024];
	int stop;

	for (;;) {
		err[0] = '\0';
		if (pass(s, err, sizeof(err)) != 0) {
			gb_metrics_counter_add("glassbox_audit_ship_failures_total", NULL, 1);
			if (!s->failing)
				GB_LOGW(MOD, "the audit trail could not be shipped (retrying): %s",
				        err);
			s->failing = 1;
		} else if (s->failing) {
			GB_LOGI(MOD, "the audit trail is shipped again to %s",
			        blob_describe(s->store));
			s->failing = 0;
		}
		pthread_mutex_lock(&s->lock);
		clock_gettime(CLOCK_REALTIME, &until);
		until.tv_sec += s->interval_ms / 1000;
		until.tv_nsec += (long)(s->interval_ms % 1000) * 1000000L;
		if (until.tv_nsec >= 1000000000L) {
			until.tv_sec++;
			until.tv_nsec -= 1000000000L;
		}
		if (!s->stop)
			pthread_cond_timedwait(&s->wake, &s->lock, &until);
		stop = s->stop;
		pthread_mutex_unlock(&s->lock);
		if (stop)
			break;
	}
	return NULL;
}

/* See ship.h. */
int evid_ship_start(const char *data_dir, struct blob_store *store, const char *replica,
                    int interval_ms, struct evid_ship **out, char *err, size_t errlen)
{
	struct evid_ship *s;

	*out = NULL;
	if (!gb_fs_name_is_safe(replica)) {
		gb_set_error(err, errlen,
		             "\"%.80s\" is not a replica id: use 1 to %u of A-Z a-z 0-9 . _ -",
		             replica ? replica : "(none)", EVID_MAX_NAME_BYTES);
		return -EINVAL;
	}
	s = calloc(1, sizeof(*s));
	if (!s || !(s->data_dir = strdup(data_dir))) {
		free(s);
		gb_set_error(err, errlen, "out of memory starting the audit shipper");
		return -ENOMEM;
	}
	snprintf(s->replica, sizeof(s->replica), "%s", replica);
	s->store = store;
	if (store_open(data_dir, &s->db, err, errlen) != 0) {
		free(s->data_dir);
		free(s);
		return -EIO;
	}
	s->interval_ms = interval_ms > 0 ? interval_ms : 1000;
	pthread_mutex_init(&s->pass_lock, NULL);
	pthread_mutex_init(&s->lock, NULL);
	pthread_cond_init(&s->wake, NULL);
	if (pthread_create(&s->thread, NULL, ship_main, s) != 0) {
		gb_set_error(err, errlen, "cannot start the audit shipper's thread");
		evid_ship_stop(s);
		return -EAGAIN;
	}
	s->started = 1;
	*out = s;
	return 0;
}

/* See ship.h. */
int evid_ship_now(struct evid_ship *s, char *err, size_t errlen)
{
	return pass(s, err, errlen);
}

/* See ship.h. */
void evid_ship_stop(struct evid_ship *s)
{
	struct ship_tenant *t;
	char err[1024] = "";

	if (!s)
		return;
	if (s->started) {
		pthread_mutex_lock(&s->lock);
		s->stop = 1;
		pthread_cond_signal(&s->wake);
		pthread_mutex_unlock(&s->lock);
		pthread_join(s->thread, NULL);
		if (pass(s, err, sizeof(err)) != 0)
			GB_LOGE(
			    MOD,
			    "the last records of the audit trail could not be shipped: %s; they "
			    "are in %s and are shipped at the next start",
			    err, s->data_dir);
	}
	while (s->tenants) {
		t = s->tenants;
		s->tenants = t->next;
		free(t);
	}
	pthread_cond_destroy(&s->wake);
	pthread_mutex_destroy(&s->lock);
	pthread_mutex_destroy(&s->pass_lock);
	store_close(s->db);
	free(s->data_dir);
	free(s);
}

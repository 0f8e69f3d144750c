/*
 * test_audit.c - the signed, hash-chained audit trail on a real trail
 * (a session whose tool calls kept screenshots, annotated copies,
 * snapshots and network logs): it verifies when untouched; each tamper
 * drill (an edited byte, a removed record, two swapped, a replaced or
 * removed artifact, a truncated log, a prefix removed without a purge)
 * is named by the seq of the failing record and the kind of failure;
 * concurrent appends from 8 threads through two handles keep one valid
 * chain; the chain continues across restarts; purge keeps it verifiable;
 * another key is refused; secrets are redacted; a store that turns
 * read-only mid-session makes the results say evidence was not kept.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/mount.h>
#include <sys/stat.h>

#include <cmocka.h>
#include <sodium.h>

#include "evidence_fixture.h"
#include "evidence/index.h"

#define TENANT "acme"
#define SESSION "s-1"
#define DAY 86400

static int setup(void **state)
{
	*state = fx_new();
	return 0;
}

static int teardown(void **state)
{
	fx_free(*state);
	return 0;
}

/* Verifies tenant with the trail's own key; fails the test if it cannot run. */
static struct evid_verify_report verify(struct fx *f, const char *tenant)
{
	struct evid_verify_report rep;
	char err[1024] = "";

	if (evid_audit_verify(f->data, tenant, NULL, &rep, err, sizeof(err)) != 0)
		fail_msg("verify could not run: %s", err);
	return rep;
}

/* Asserts that verification fails at seq with kind. */
static void expect_failure(struct fx *f, enum evid_verify_failure kind, uint64_t seq)
{
	struct evid_verify_report rep = verify(f, TENANT);
	char line[2048];

	evid_verify_report_format(TENANT, &rep, line, sizeof(line));
	print_message("    %s\n", line);
	assert_false(rep.ok);
	if (rep.failure != kind)
		fail_msg("expected \"%s\", got \"%s\": %s", evid_verify_failure_name(kind),
		         evid_verify_failure_name(rep.failure), rep.reason);
	assert_int_equal(rep.failed_seq, seq);
	assert_non_null(strstr(line, "FAILED at record"));
}

/* Reads today's day file into lines. */
static char *read_lines(struct fx *f, char *path, size_t pathlen, char **lines, size_t *n)
{
	size_t len;
	char *text;

	fx_day_file(f, TENANT, path, pathlen);
	text = fx_read(path, &len);
	*n = fx_lines(text, lines, FX_MAX_RECORDS);
	return text;
}

/* ---- the untouched trail --------------------------------------------------- */

static void test_trail_verifies(void **state)
{
	struct fx *f = *state;
	struct evid_verify_report rep;
	char path[512];
	char *lines[FX_MAX_RECORDS] = { 0 };
	char *text;
	size_t n;
	struct stat st;

	fx_build_trail(f, TENANT, SESSION, 5);
	rep = verify(f, TENANT);
	assert_true(rep.ok);
	assert_int_equal(rep.records, 7);
	assert_int_equal(rep.first_seq, 1);
	assert_int_equal(rep.last_seq, 7);
	/* distinct artifacts: 5 calls x (shot, annotated, snapshot), and one
	 * network log: the calls' logs are the same bytes, stored once */
	assert_int_equal(rep.artifacts, 16);
	assert_false(rep.purged);

	/* every line is canonical JSON with the documented members */
	text = read_lines(f, path, sizeof(path), lines, &n);
	assert_int_equal(n, 7);
	for (size_t i = 0; i < n; i++) {
		json_t *rec = json_loads(lines[i], 0, NULL);
		char *canon = evid_json_canonical(rec);

		assert_non_null(rec);
		assert_string_equal(canon, lines[i]);
		assert_int_equal(json_integer_value(json_object_get(rec, "seq")),
		                 (json_int_t)i + 1);
		assert_non_null(json_object_get(rec, "prev_hash"));
		assert_non_null(json_object_get(rec, "sig"));
		assert_string_equal(
		    json_string_value(json_object_get(json_object_get(rec, "actor"), "user")),
		    "agent@example.com");
		free(canon);
		json_decref(rec);
	}
	assert_non_null(strstr(lines[0], "\"chromium_version\":\"Chrome/156.0.8078.108\""));
	assert_non_null(strstr(lines[0], "\"policy_sha256\":\""));
	free(text);

	/* keys: secret 0600 in a 0700 dir, public key exported */
	snprintf(path, sizeof(path), "%s/keys/audit.key", f->data);
	assert_int_equal(stat(path, &st), 0);
	assert_int_equal(st.st_mode & 0777, 0600);
	snprintf(path, sizeof(path), "%s/keys", f->data);
	assert_int_equal(stat(path, &st), 0);
	assert_int_equal(st.st_mode & 0777, 0700);
	snprintf(path, sizeof(path), "%s/tenants/%s/audit/head.json", f->data, TENANT);
	assert_int_equal(stat(path, &st), 0);
}

/* ---- tamper drills ------------------------------------------------------------ */

static void test_drill_edit_one_byte(void **state)
{
	struct fx *f = *state;
	char path[512];
	char *lines[FX_MAX_RECORDS] = { 0 };
	char *text;
	char *p;
	size_t n;

	fx_build_trail(f, TENANT, SESSION, 5);
	text = read_lines(f, path, sizeof(path), lines, &n);
	p = strstr(lines[2], "\"title\":\"Save\""); /* record 3 */
	assert_non_null(p);
	p[10] = 'W'; /* "Save" -> "Wave": still valid JSON */
	fx_write_lines(path, lines, n);
	expect_failure(f, EVID_VERIFY_EDITED, 3);
	free(text);
}

static void test_drill_edit_breaks_json(void **state)
{
	struct fx *f = *state;
	char path[512];
	char *lines[FX_MAX_RECORDS] = { 0 };
	char *text;
	size_t n;

	fx_build_trail(f, TENANT, SESSION, 5);
	text = read_lines(f, path, sizeof(path), lines, &n);
	lines[3][0] = '['; /* record 4 no longer parses */
	fx_write_lines(path, lines, n);
	expect_failure(f, EVID_VERIFY_EDITED, 4);
	free(text);
}

static void test_drill_edit_signature(void **state)
{
	struct fx *f = *state;
	char path[512];
	char *lines[FX_MAX_RECORDS] = { 0 };
	char *text;
	char *p;
	size_t n;

	fx_build_trail(f, TENANT, SESSION, 5);
	text = read_lines(f, path, sizeof(path), lines, &n);
	p = strstr(lines[4], "\"sig\":\""); /* record 5 */
	assert_non_null(p);
	p[7] = p[7] == 'A' ? 'B' : 'A';
	fx_write_lines(path, lines, n);
	expect_failure(f, EVID_VERIFY_EDITED, 5);
	free(text);
}

static void test_drill_delete_record(void **state)
{
	struct fx *f = *state;
	char path[512];
	char *lines[FX_MAX_RECORDS] = { 0 };
	char *text;
	size_t n;

	fx_build_trail(f, TENANT, SESSION, 5);
	text = read_lines(f, path, sizeof(path), lines, &n);
	memmove(&lines[3], &lines[4], (n - 4) * sizeof(*lines)); /* record 4 gone */
	fx_write_lines(path, lines, n - 1);
	expect_failure(f, EVID_VERIFY_REMOVED, 4);
	free(text);
}

static void test_drill_swap_records(void **state)
{
	struct fx *f = *state;
	char path[512];
	char *lines[FX_MAX_RECORDS] = { 0 };
	char *text;
	char *tmp;
	size_t n;

	fx_build_trail(f, TENANT, SESSION, 5);
	text = read_lines(f, path, sizeof(path), lines, &n);
	tmp = lines[2];
	lines[2] = lines[3];
	lines[3] = tmp; /* order 1 2 4 3 5 ... */
	fx_write_lines(path, lines, n);
	expect_failure(f, EVID_VERIFY_REORDERED, 4);
	free(text);
}

static void test_drill_replace_artifact(void **state)
{
	struct fx *f = *state;
	char path[4200];
	unsigned char *other = NULL;
	size_t len = 0;

	fx_build_trail(f, TENANT, SESSION, 5);
	/* record 3's screenshot replaced by another valid PNG */
	assert_int_equal(evid_artifact_path(f->data, TENANT, 1, f->shot_sha[3], path, sizeof(path)),
	                 0);
	fx_png(64, 48, 999, &other, &len);
	fx_write(path, (const char *)other, len);
	expect_failure(f, EVID_VERIFY_ARTIFACT_CHANGED, 3);
	free(other);
}

static void test_drill_remove_artifact(void **state)
{
	struct fx *f = *state;
	char path[4200];

	fx_build_trail(f, TENANT, SESSION, 5);
	assert_int_equal(evid_artifact_path(f->data, TENANT, 1, f->snap_sha[5], path, sizeof(path)),
	                 0);
	assert_int_equal(unlink(path), 0);
	expect_failure(f, EVID_VERIFY_ARTIFACT_MISSING, 5);
}

/* The metadata record beside an artifact (its URL, tool, arguments, time)
 * is vouched for by the audit record: editing or removing it is named. */
static void test_drill_edit_artifact_metadata(void **state)
{
	struct fx *f = *state;
	char path[4200];
	json_t *meta;

	fx_build_trail(f, TENANT, SESSION, 5);
	assert_true(verify(f, TENANT).ok);
	assert_int_equal(evid_artifact_path(f->data, TENANT, 1, f->shot_sha[3], path, sizeof(path)),
	                 0);
	strcat(path, ".json");
	meta = json_load_file(path, JSON_PRESERVE_ORDER, NULL);
	assert_non_null(meta);
	assert_string_equal(json_string_value(json_object_get(meta, "url")),
	                    "https://app.example/saved");
	json_object_set_new(meta, "url", json_string("https://elsewhere.example/saved"));
	assert_int_equal(json_dump_file(meta, path, JSON_INDENT(2) | JSON_PRESERVE_ORDER), 0);
	json_decref(meta);
	expect_failure(f, EVID_VERIFY_ARTIFACT_CHANGED, 3);
	assert_non_null(strstr(verify(f, TENANT).reason, "metadata record"));
	assert_int_equal(unlink(path), 0);
	expect_failure(f, EVID_VERIFY_ARTIFACT_MISSING, 3);
}

/* A call whose arguments are larger than a record may be (a 2 MiB text)
 * still leaves its audit record and its artifact's metadata record: the
 * text is cut, marked truncated, with its sha256 and length, and nothing
 * of it beyond its head is kept in clear; the chain verifies. */
static void test_large_arguments_leave_a_truncated_record(void **state)
{
	struct fx *f = *state;
	size_t big = 2u * 1024u * 1024u;
	struct evid_meta meta;
	struct evid_action_evidence ev;
	unsigned char *png = NULL;
	size_t len = 0;
	size_t i;
	char hex[65];
	char path[4200];
	char err[1024] = "";
	char *textarg = malloc(big + 1);
	char *line;
	char *tail;
	json_t *args;
	json_t *artifacts = NULL;
	json_t *rec;
	json_t *m;
	uint64_t seq;

	assert_non_null(textarg);
	for (i = 0; i < big; i++) /* no 64-byte run of it repeats: each is findable */
		textarg[i] = (char)('a' + (i * 7 + i / 26 + i / 677) % 26);
	textarg[big] = '\0';
	evid_sha256_hex((const unsigned char *)textarg, big, hex);
	args = json_pack("{s:s, s:s}", "target", "e4", "text", textarg);
	fx_png(64, 48, 7, &png, &len);
	memset(&meta, 0, sizeof(meta));
	meta.tenant = TENANT;
	meta.session_id = SESSION;
	meta.operation_id = "op-big";
	meta.tool = "browser_type";
	meta.url = "https://app.example/form";
	meta.arguments = args;
	memset(&ev, 0, sizeof(ev));
	ev.meta = &meta;
	ev.screenshot = png;
	ev.screenshot_len = len;
	assert_int_equal(evid_keep_action_evidence(f->store, &ev, &artifacts, err, sizeof(err)), 0);
	seq = fx_append(
	    f, TENANT, EVID_AUDIT_TOOL_CALL, SESSION, "op-big",
	    json_pack("{s:s, s:O, s:b}", "tool", "browser_type", "arguments", args, "ok", 1),
	    artifacts);
	assert_int_equal(seq, 1);
	assert_true(verify(f, TENANT).ok);

	/* the audit record */
	fx_day_file(f, TENANT, path, sizeof(path));
	line = fx_read(path, &len);
	rec = json_loads(line, 0, NULL);
	assert_non_null(rec);
	assert_true(json_is_true(json_object_get(json_object_get(rec, "body"), "truncated")));
	m = json_object_get(json_object_get(json_object_get(rec, "body"), "arguments"), "text");
	assert_true(json_is_true(json_object_get(m, "truncated")));
	assert_string_equal(json_string_value(json_object_get(m, "sha256")), hex);
	assert_int_equal(json_integer_value(json_object_get(m, "length")), big);
	assert_string_equal(
	    json_string_value(json_object_get(
	        json_object_get(json_object_get(rec, "body"), "arguments"), "target")),
	    "e4");
	tail = strndup(textarg + EVID_TRUNCATE_HEAD_BYTES, 64);
	assert_null(strstr(line, tail));
	json_decref(rec);
	free(line);

	/* the screenshot's metadata record */
	assert_int_equal(evid_artifact_path(f->data, TENANT, 1,
	                                    json_string_value(json_object_get(
	                                        json_array_get(artifacts, 0), "sha256")),
	                                    path, sizeof(path)),
	                 0);
	strcat(path, ".json");
	line = fx_read(path, &len);
	rec = json_loads(line, 0, NULL);
	assert_non_null(rec);
	assert_true(json_is_true(json_object_get(rec, "arguments_truncated")));
	m = json_object_get(json_object_get(rec, "arguments"), "text");
	assert_string_equal(json_string_value(json_object_get(m, "sha256")), hex);
	assert_int_equal(json_integer_value(json_object_get(m, "length")), big);
	assert_null(strstr(line, tail));
	json_decref(rec);
	free(line);
	free(tail);
	json_decref(artifacts);
	json_decref(args);
	free(png);
	free(textarg);
}

/* evid_json_fit: a value that fits is kept whole; long strings are cut
 * first; many short ones that together are too large make the largest
 * member be cut whole; each cut is marked with its sha256 and length. */
static void test_fit_cuts_in_steps(void **state)
{
	char small[2048];
	char hex[65];
	char *text;
	json_t *args = json_pack("{s:s, s:[]}", "target", "e1", "values");
	json_t *fit;
	json_t *m;
	size_t i;
	int cut = -1;

	(void)state;
	fit = evid_json_fit(args, 1024, &cut);
	assert_int_equal(cut, 0);
	assert_true(json_equal(fit, args));
	json_decref(fit);
	/* 600 strings of 2 KiB: none long, together 1.2 MiB */
	memset(small, 'q', sizeof(small) - 1);
	small[sizeof(small) - 1] = '\0';
	for (i = 0; i < 600; i++)
		json_array_append_new(json_object_get(args, "values"), json_string(small));
	fit = evid_json_fit(args, 64 * 1024, &cut);
	assert_non_null(fit);
	assert_int_equal(cut, 1);
	assert_string_equal(json_string_value(json_object_get(fit, "target")), "e1");
	m = json_object_get(fit, "values");
	assert_true(json_is_true(json_object_get(m, "truncated")));
	text = json_dumps(json_object_get(args, "values"),
	                  JSON_COMPACT | JSON_SORT_KEYS | JSON_ENCODE_ANY);
	evid_sha256_hex((const unsigned char *)text, strlen(text), hex);
	assert_string_equal(json_string_value(json_object_get(m, "sha256")), hex);
	assert_int_equal(json_integer_value(json_object_get(m, "length")), strlen(text));
	free(text);
	json_decref(fit);
	/* not an object and too large: cut whole */
	fit = evid_json_fit(json_object_get(args, "values"), 1024, &cut);
	assert_non_null(fit);
	assert_int_equal(cut, 1);
	assert_true(json_is_true(json_object_get(fit, "truncated")));
	json_decref(fit);
	json_decref(args);
}

static void test_drill_truncate_log(void **state)
{
	struct fx *f = *state;
	char path[512];
	struct stat st;

	fx_build_trail(f, TENANT, SESSION, 5);
	fx_day_file(f, TENANT, path, sizeof(path));
	assert_int_equal(stat(path, &st), 0);
	assert_int_equal(truncate(path, st.st_size - 40), 0); /* inside record 7 */
	expect_failure(f, EVID_VERIFY_TRUNCATED, 7);
}

static void test_drill_truncate_whole_records(void **state)
{
	struct fx *f = *state;
	char path[512];
	char *lines[FX_MAX_RECORDS] = { 0 };
	char *text;
	size_t n;

	fx_build_trail(f, TENANT, SESSION, 5);
	text = read_lines(f, path, sizeof(path), lines, &n);
	fx_write_lines(path, lines, n - 2); /* records 6 and 7 cut off at a line end */
	expect_failure(f, EVID_VERIFY_REMOVED, 6);
	free(text);
}

static void test_drill_prefix_removed_without_purge(void **state)
{
	struct fx *f = *state;
	char path[512];
	char *lines[FX_MAX_RECORDS] = { 0 };
	char *text;
	size_t n;

	fx_build_trail(f, TENANT, SESSION, 5);
	text = read_lines(f, path, sizeof(path), lines, &n);
	fx_write_lines(path, lines + 2, n - 2); /* records 1 and 2 gone */
	expect_failure(f, EVID_VERIFY_BAD_PURGE, 1);
	free(text);
}

static void test_wrong_pubkey(void **state)
{
	struct fx *f = *state;
	struct evid_verify_report rep;
	unsigned char pk[32];
	unsigned char sk[64];
	unsigned char exported[32];
	char keyfile[512];
	char err[1024] = "";

	fx_build_trail(f, TENANT, SESSION, 2);
	crypto_sign_keypair(pk, sk);
	assert_int_equal(evid_audit_verify(f->data, TENANT, pk, &rep, err, sizeof(err)), 0);
	assert_false(rep.ok);
	assert_int_equal(rep.failure, EVID_VERIFY_WRONG_KEY);
	assert_int_equal(rep.failed_seq, 1);
	assert_non_null(strstr(rep.reason, "audit.pub"));

	/* the exported key verifies */
	snprintf(keyfile, sizeof(keyfile), "%s/exported.pub", f->root);
	assert_int_equal(evid_keys_export_public(f->data, keyfile, err, sizeof(err)), 0);
	assert_int_equal(evid_keys_load_public(keyfile, exported, NULL, err, sizeof(err)), 0);
	assert_int_equal(evid_audit_verify(f->data, TENANT, exported, &rep, err, sizeof(err)), 0);
	assert_true(rep.ok);

	/* a file that is not a key is refused clearly */
	fx_write(keyfile, "hello", 5);
	assert_int_equal(evid_keys_load_public(keyfile, exported, NULL, err, sizeof(err)),
	                 -EVID_EINVAL);
	assert_non_null(strstr(err, "export-key"));
}

/* ---- concurrency and restarts -------------------------------------------------- */

struct appender {
	struct fx *f;
	struct evid_audit *audit;
	int id;
	int n;
	uint64_t seqs[64];
	int failures;
};

static void *append_many(void *arg)
{
	struct appender *ap = arg;
	struct evid_audit_entry e;
	struct evid_audit_receipt rc;
	char op[32];
	char err[1024];
	json_t *body;
	int i;

	for (i = 0; i < ap->n; i++) {
		snprintf(op, sizeof(op), "t%d-%d", ap->id, i);
		body =
		    json_pack("{s:s, s:i, s:i}", "tool", "browser_type", "thread", ap->id, "i", i);
		memset(&e, 0, sizeof(e));
		e.tenant = TENANT;
		e.kind = EVID_AUDIT_TOOL_CALL;
		e.session_id = op;
		e.operation_id = op;
		e.body = body;
		if (evid_audit_append(ap->audit, &e, &rc, err, sizeof(err)) != 0)
			ap->failures++;
		else
			ap->seqs[i] = rc.seq;
		json_decref(body);
	}
	return NULL;
}

static int cmp_seq(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a;
	uint64_t y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

static void test_concurrent_appends(void **state)
{
	enum { THREADS = 8, EACH = 40 };
	struct fx *f = *state;
	struct evid_audit *second = NULL;
	struct appender ap[THREADS];
	pthread_t th[THREADS];
	uint64_t all[THREADS * EACH];
	struct evid_verify_report rep;
	char err[1024] = "";
	int i;
	int j;

	/* a second handle stands in for another process: it shares only the
	 * files and the flock */
	assert_int_equal(evid_audit_open(f->data, &second, err, sizeof(err)), 0);
	for (i = 0; i < THREADS; i++) {
		memset(&ap[i], 0, sizeof(ap[i]));
		ap[i].f = f;
		ap[i].audit = i % 2 ? second : f->audit;
		ap[i].id = i;
		ap[i].n = EACH;
		assert_int_equal(pthread_create(&th[i], NULL, append_many, &ap[i]), 0);
	}
	for (i = 0; i < THREADS; i++) {
		pthread_join(th[i], NULL);
		assert_int_equal(ap[i].failures, 0);
		for (j = 0; j < EACH; j++)
			all[i * EACH + j] = ap[i].seqs[j];
	}
	qsort(all, THREADS * EACH, sizeof(*all), cmp_seq);
	for (i = 0; i < THREADS * EACH; i++)
		assert_int_equal(all[i], (uint64_t)i + 1); /* each seq exactly once */
	rep = verify(f, TENANT);
	assert_true(rep.ok);
	assert_int_equal(rep.records, THREADS * EACH);
	evid_audit_close(second);
}

/* ---- group commit ---------------------------------------------------------- */

/* The test's sync: a slow disk (2 ms a sync) that counts its syncs and
 * knows how much of the log is durable: the bytes the file held when a
 * sync that succeeded began. fail_at > 0 makes that sync (1-based) fail. */
static pthread_mutex_t sync_lock = PTHREAD_MUTEX_INITIALIZER;
static off_t durable_bytes; /* {sync_lock} */
static int syncs;           /* {sync_lock} */
static int fail_at;         /* {sync_lock} */

static int slow_sync(int fd)
{
	struct timespec slow = { 0, 2 * 1000 * 1000 };
	struct stat st;
	int fail;

	if (fstat(fd, &st) != 0)
		return -1;
	pthread_mutex_lock(&sync_lock);
	fail = ++syncs == fail_at;
	pthread_mutex_unlock(&sync_lock);
	nanosleep(&slow, NULL);
	if (fail) {
		errno = EIO;
		return -1;
	}
	if (fdatasync(fd) != 0)
		return -1;
	pthread_mutex_lock(&sync_lock);
	if (st.st_size > durable_bytes)
		durable_bytes = st.st_size;
	pthread_mutex_unlock(&sync_lock);
	return 0;
}

static void reset_sync(int fail)
{
	pthread_mutex_lock(&sync_lock);
	durable_bytes = 0;
	syncs = 0;
	fail_at = fail;
	pthread_mutex_unlock(&sync_lock);
	evid_commit_set_sync(slow_sync);
}

/* 1 when the record with hash is within the first durable bytes of path. */
static int is_durable(const char *path, const char hash[65])
{
	char needle[80];
	char *buf;
	off_t n;
	int fd;
	int found = 0;

	pthread_mutex_lock(&sync_lock);
	n = durable_bytes;
	pthread_mutex_unlock(&sync_lock);
	snprintf(needle, sizeof(needle), "\"hash\":\"%s\"", hash);
	buf = malloc((size_t)n + 1);
	fd = open(path, O_RDONLY);
	if (buf && fd >= 0 && pread(fd, buf, (size_t)n, 0) == n)
		found = memmem(buf, (size_t)n, needle, strlen(needle)) != NULL;
	if (fd >= 0)
		close(fd);
	free(buf);
	return found;
}

struct committer {
	struct fx *f;
	const char *path;
	int id;
	int n;
	struct evid_audit_receipt acked[64];
	int nacked;
	char failed[64][65]; /* the start of each refusal's error */
	int nfailed;
	int not_durable;
};

static void *commit_many(void *arg)
{
	struct committer *c = arg;
	struct evid_audit_entry e;
	struct evid_audit_receipt rc;
	char err[1024];
	json_t *body;
	int i;

	for (i = 0; i < c->n; i++) {
		body =
		    json_pack("{s:s, s:i, s:i}", "tool", "browser_click", "thread", c->id, "i", i);
		memset(&e, 0, sizeof(e));
		e.tenant = TENANT;
		e.kind = EVID_AUDIT_TOOL_CALL;
		e.body = body;
		if (evid_audit_append(c->f->audit, &e, &rc, err, sizeof(err)) == 0) {
			/* acknowledged: already within what a finished sync covered */
			if (!is_durable(c->path, rc.hash))
				c->not_durable++;
			c->acked[c->nacked++] = rc;
		} else {
			snprintf(c->failed[c->nfailed++], 65, "%.64s", err);
		}
		json_decref(body);
	}
	return NULL;
}

/* Runs threads x each appends at once; returns the acknowledged count. */
static int run_committers(struct fx *f, const char *path, struct committer *c, int threads,
                          int each)
{
	pthread_t th[16];
	int acked = 0;
	int i;

	for (i = 0; i < threads; i++) {
		memset(&c[i], 0, sizeof(c[i]));
		c[i].f = f;
		c[i].path = path;
		c[i].id = i;
		c[i].n = each;
		assert_int_equal(pthread_create(&th[i], NULL, commit_many, &c[i]), 0);
	}
	for (i = 0; i < threads; i++) {
		pthread_join(th[i], NULL);
		assert_int_equal(c[i].not_durable, 0);
		acked += c[i].nacked;
	}
	return acked;
}

/* Every acknowledged record is in the log, once, at its seq. */
static void expect_acked_in_log(const char *path, struct committer *c, int threads)
{
	char needle[200];
	size_t len;
	char *text = fx_read(path, &len);
	int missing = 0;
	int i;
	int j;

	for (i = 0; i < threads; i++)
		for (j = 0; j < c[i].nacked; j++) {
			snprintf(needle, sizeof(needle), "\"hash\":\"%s\"", c[i].acked[j].hash);
			if (!text || !strstr(text, needle))
				missing++;
		}
	free(text);
	assert_int_equal(missing, 0);
}

/* Records appended at once by 8 threads share syncs, each one durable
 * when its append returns, and the chain stays whole. */
static void test_group_commit(void **state)
{
	enum { THREADS = 8, EACH = 30 };
	struct fx *f = *state;
	struct committer c[THREADS];
	struct evid_verify_report rep;
	char path[512];
	char head[600];
	json_t *doc;
	int acked;
	int n;

	fx_append(f, TENANT, EVID_AUDIT_SESSION_OPENED, SESSION, NULL, NULL, NULL); /* the file */
	fx_day_file(f, TENANT, path, sizeof(path));
	reset_sync(0);
	acked = run_committers(f, path, c, THREADS, EACH);
	evid_commit_set_sync(NULL);
	assert_int_equal(acked, THREADS * EACH);
	pthread_mutex_lock(&sync_lock);
	n = syncs;
	pthread_mutex_unlock(&sync_lock);
	print_message("    %d records, %d syncs\n", acked, n);
	assert_true(n < acked); /* batches formed: fewer syncs than records */
	expect_acked_in_log(path, c, THREADS);
	rep = verify(f, TENANT);
	assert_true(rep.ok);
	assert_int_equal(rep.records, acked + 1);
	snprintf(head, sizeof(head), "%s/tenants/%s/audit/head.json", f->data, TENANT);
	doc = json_load_file(head, 0, NULL);
	assert_int_equal(json_integer_value(json_object_get(doc, "seq")), acked + 1);
	json_decref(doc);
}

/* A sync that fails mid-batch: every writer of that batch gets the error,
 * none of its records stays in the log, nothing acknowledged is lost, and
 * the chain goes on. */
static void test_group_commit_failed_sync(void **state)
{
	enum { THREADS = 6, EACH = 12 };
	struct fx *f = *state;
	struct committer c[THREADS];
	struct evid_verify_report rep;
	char path[512];
	int acked;
	int failed = 0;
	int i;
	int j;

	fx_append(f, TENANT, EVID_AUDIT_SESSION_OPENED, SESSION, NULL, NULL, NULL);
	fx_day_file(f, TENANT, path, sizeof(path));
	reset_sync(4); /* the 4th sync fails */
	acked = run_committers(f, path, c, THREADS, EACH);
	evid_commit_set_sync(NULL);
	for (i = 0; i < THREADS; i++)
		failed += c[i].nfailed;
	print_message("    %d acknowledged, %d refused\n", acked, failed);
	assert_true(failed >= 1);
	assert_int_equal(acked + failed, THREADS * EACH);
	for (i = 0; i < THREADS; i++)
		for (j = 0; j < c[i].nfailed; j++)
			assert_non_null(
			    strstr(c[i].failed[j], "the audit record could not be kept"));
	expect_acked_in_log(path, c, THREADS);
	rep = verify(f, TENANT);
	assert_true(rep.ok);
	/* only the acknowledged records (and the first) are in the log */
	assert_int_equal(rep.records, acked + 1);
	assert_int_equal(rep.last_seq, acked + 1);
}

/* The group commit itself, driven step by step: a batch's first sync
 * waits until told (gate_open), the second succeeds, the third fails. */
static pthread_mutex_t gate_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t gate_cond = PTHREAD_COND_INITIALIZER;
static int gate_syncs; /* {gate_lock} */
static int gate_open;  /* {gate_lock} */

static int gated_sync(int fd)
{
	int n;

	pthread_mutex_lock(&gate_lock);
	n = ++gate_syncs;
	pthread_cond_broadcast(&gate_cond);
	while (n == 1 && !gate_open)
		pthread_cond_wait(&gate_cond, &gate_lock);
	pthread_mutex_unlock(&gate_lock);
	if (n == 3) {
		errno = EIO;
		return -1;
	}
	return fdatasync(fd);
}

struct commit_fx {
	pthread_mutex_t lock;
	struct evid_commit c;
	char dir[512];
};

struct commit_writer {
	struct commit_fx *x;
	uint64_t seq;
	int rc;
};

/* Writes record seq (one line) to x's file; x's mutex held. */
static uint64_t commit_write_locked(struct commit_fx *x, uint64_t seq)
{
	char line[80];
	char hash[65];
	char err[1024] = "";
	struct stat st;
	uint64_t gen = 0;
	int n;

	memset(hash, 'a' + (int)seq, 64);
	hash[64] = '\0';
	n = snprintf(line, sizeof(line), "{\"seq\":%llu}\n", (unsigned long long)seq);
	assert_int_equal(evid_commit_use_file_locked(&x->c, &x->lock, x->dir, "day.jsonl", &st, err,
	                                             sizeof(err)),
	                 0);
	assert_int_equal(evid_commit_write_locked(&x->c, line, (size_t)n, seq, hash, &st, &gen, err,
	                                          sizeof(err)),
	                 0);
	return gen;
}

/* An appending writer: writes its record and waits until it is durable. */
static void *commit_append(void *arg)
{
	struct commit_writer *w = arg;
	char err[1024] = "";
	uint64_t gen;

	pthread_mutex_lock(&w->x->lock);
	gen = commit_write_locked(w->x, w->seq);
	w->rc = evid_commit_wait_locked(&w->x->c, &w->x->lock, gen, w->seq, err, sizeof(err));
	pthread_mutex_unlock(&w->x->lock);
	return NULL;
}

/* A writer holding the log: drains (its sync covers the waiting record),
 * then writes one record more and drains again, which fails. */
static void *commit_drain_twice(void *arg)
{
	struct commit_writer *w = arg;
	char err[1024] = "";

	pthread_mutex_lock(&w->x->lock);
	assert_int_equal(evid_commit_drain_locked(&w->x->c, &w->x->lock, err, sizeof(err)), 0);
	commit_write_locked(w->x, w->seq);
	w->rc = evid_commit_drain_locked(&w->x->c, &w->x->lock, err, sizeof(err));
	pthread_mutex_unlock(&w->x->lock);
	return NULL;
}

/* Waits until x's commit has n waiters and d drainers. */
static void wait_commit_state(struct commit_fx *x, int n, int d)
{
	struct evid_commit_waiter *w;
	int have;

	for (;;) {
		pthread_mutex_lock(&x->lock);
		have = 0;
		for (w = x->c.waiters; w; w = w->next)
			have++;
		have = have == n && x->c.draining == d;
		pthread_mutex_unlock(&x->lock);
		if (have)
			return;
		sched_yield();
	}
}

/* A writer whose record a batch made durable is told so, even when a later
 * sync fails and cuts records off before it wakes: it waited while record
 * 1's sync ran, a drainer's sync then covered record 2, and the drainer's
 * next sync (of record 3) failed with the mutex kept throughout. */
static void test_group_commit_kept_then_later_cut(void **state)
{
	struct fx *f = *state;
	struct commit_fx x = { .lock = PTHREAD_MUTEX_INITIALIZER };
	struct commit_writer first = { .x = &x, .seq = 1 };
	struct commit_writer second = { .x = &x, .seq = 2 };
	struct commit_writer drainer = { .x = &x, .seq = 3 };
	pthread_t th[3];
	char path[600];
	char *text;
	size_t len;

	snprintf(x.dir, sizeof(x.dir), "%s", f->data);
	evid_commit_init(&x.c, NULL, NULL);
	gate_syncs = 0;
	gate_open = 0;
	evid_commit_set_sync(gated_sync);
	assert_int_equal(pthread_create(&th[0], NULL, commit_append, &first), 0);
	pthread_mutex_lock(&gate_lock);
	while (gate_syncs < 1) /* record 1's sync runs, the mutex released */
		pthread_cond_wait(&gate_cond, &gate_lock);
	pthread_mutex_unlock(&gate_lock);
	assert_int_equal(pthread_create(&th[1], NULL, commit_append, &second), 0);
	wait_commit_state(&x, 2, 0);
	assert_int_equal(pthread_create(&th[2], NULL, commit_drain_twice, &drainer), 0);
	wait_commit_state(&x, 2, 1);
	pthread_mutex_lock(&gate_lock);
	gate_open = 1;
	pthread_cond_broadcast(&gate_cond);
	pthread_mutex_unlock(&gate_lock);
	pthread_join(th[0], NULL);
	pthread_join(th[1], NULL);
	pthread_join(th[2], NULL);
	evid_commit_set_sync(NULL);
	assert_int_equal(gate_syncs, 3);
	assert_int_equal(first.rc, 0);
	assert_int_equal(second.rc, 0); /* kept by the drainer's first sync */
	assert_int_equal(drainer.rc, -EVID_EIO);
	snprintf(path, sizeof(path), "%s/day.jsonl", x.dir);
	text = fx_read(path, &len);
	assert_non_null(text);
	assert_string_equal(text, "{\"seq\":1}\n{\"seq\":2}\n"); /* 3 was cut off */
	free(text);
	evid_commit_destroy(&x.c);
}

static void test_restart_continues_chain(void **state)
{
	struct fx *f = *state;
	struct evid_verify_report rep;
	char path[512];
	char err[1024] = "";
	char *big;
	FILE *fp;

	fx_build_trail(f, TENANT, SESSION, 1); /* records 1..3 */
	evid_audit_close(f->audit);
	assert_int_equal(evid_audit_open(f->data, &f->audit, err, sizeof(err)), 0);
	assert_int_equal(fx_append(f, TENANT, EVID_AUDIT_SESSION_OPENED, "s-2", NULL, NULL, NULL),
	                 4);
	rep = verify(f, TENANT);
	assert_true(rep.ok);
	assert_int_equal(rep.last_seq, 4);

	/* a crash while writing left half a record (never acknowledged by the
	 * head): the next start cuts it off and the chain goes on */
	evid_audit_close(f->audit);
	fx_day_file(f, TENANT, path, sizeof(path));
	fp = fopen(path, "a");
	assert_non_null(fp);
	fputs("{\"actor\":{\"tenant\":\"acme\",\"tok", fp);
	fclose(fp);
	assert_int_equal(evid_audit_open(f->data, &f->audit, err, sizeof(err)), 0);
	assert_int_equal(fx_append(f, TENANT, EVID_AUDIT_SESSION_CLOSED, "s-2", NULL, NULL, NULL),
	                 5);
	rep = verify(f, TENANT);
	assert_true(rep.ok);
	assert_int_equal(rep.records, 5);

	/* a last record longer than the first read of the tail */
	big = calloc(1, 200 * 1024);
	assert_non_null(big);
	memset(big, 'x', 200 * 1024 - 1);
	assert_int_equal(fx_append(f, TENANT, EVID_AUDIT_EVIDENCE_KEPT, "s-2", NULL,
	                           json_pack("{s:s}", "what", big), NULL),
	                 6);
	free(big);
	evid_audit_close(f->audit);
	assert_int_equal(evid_audit_open(f->data, &f->audit, err, sizeof(err)), 0);
	assert_int_equal(fx_append(f, TENANT, EVID_AUDIT_SESSION_CLOSED, "s-3", NULL, NULL, NULL),
	                 7);
	assert_true(verify(f, TENANT).ok);
}

static void test_restart_refuses_cut_log(void **state)
{
	struct fx *f = *state;
	struct evid_audit_entry e;
	char path[512];
	char *lines[FX_MAX_RECORDS] = { 0 };
	char *text;
	char err[1024] = "";
	size_t n;

	fx_build_trail(f, TENANT, SESSION, 2); /* records 1..4 */
	evid_audit_close(f->audit);
	text = read_lines(f, path, sizeof(path), lines, &n);
	fx_write_lines(path, lines, n - 1); /* record 4 removed from the end */
	free(text);
	assert_int_equal(evid_audit_open(f->data, &f->audit, err, sizeof(err)), 0);
	memset(&e, 0, sizeof(e));
	e.tenant = TENANT;
	e.kind = EVID_AUDIT_SESSION_CLOSED;
	/* appending would overwrite the head and hide the cut: refused */
	assert_int_equal(evid_audit_append(f->audit, &e, NULL, err, sizeof(err)), -EVID_EIO);
	assert_non_null(strstr(err, "removed from its end"));
	assert_non_null(strstr(err, "glassbox audit verify"));
	expect_failure(f, EVID_VERIFY_REMOVED, 4);
}

/* A day file whose last line is longer than the tail is ever read (over
 * 2 MiB: no record is that long) is damaged, not empty: appending is
 * refused and names the file, even when head.json was moved aside and
 * cannot tell that records came before. */
static void test_restart_refuses_an_overlong_last_line(void **state)
{
	struct fx *f = *state;
	struct evid_audit_entry e;
	size_t big = 3u * 1024u * 1024u;
	char path[512];
	char head[600];
	char err[1024] = "";
	char *junk = malloc(big + 1);
	FILE *fp;
	int i;

	assert_non_null(junk);
	fx_build_trail(f, TENANT, SESSION, 1); /* records 1..3 */
	evid_audit_close(f->audit);
	f->audit = NULL;
	fx_day_file(f, TENANT, path, sizeof(path));
	memset(junk, 'x', big);
	junk[big] = '\n';
	fp = fopen(path, "a");
	assert_non_null(fp);
	assert_int_equal(fwrite(junk, 1, big + 1, fp), big + 1);
	fclose(fp);
	free(junk);
	for (i = 0; i < 2; i++) { /* with its head, then with the head moved aside */
		if (i == 1) {
			snprintf(head, sizeof(head), "%s/tenants/%s/audit/head.json", f->data,
			         TENANT);
			assert_int_equal(unlink(head), 0);
		}
		assert_int_equal(evid_audit_open(f->data, &f->audit, err, sizeof(err)), 0);
		memset(&e, 0, sizeof(e));
		e.tenant = TENANT;
		e.kind = EVID_AUDIT_SESSION_CLOSED;
		err[0] = '\0';
		assert_int_equal(evid_audit_append(f->audit, &e, NULL, err, sizeof(err)),
		                 -EVID_EIO);
		assert_non_null(strstr(err, "longer than"));
		assert_non_null(strstr(err, "glassbox audit verify"));
		evid_audit_close(f->audit);
		f->audit = NULL;
	}
	assert_int_equal(evid_audit_open(f->data, &f->audit, err, sizeof(err)), 0);
	assert_false(verify(f, TENANT).ok);
}

static void test_damaged_head(void **state)
{
	struct fx *f = *state;
	struct evid_audit_entry e;
	char path[512];
	char err[1024] = "";
	json_t *head;

	fx_build_trail(f, TENANT, SESSION, 1); /* records 1..3 */
	snprintf(path, sizeof(path), "%s/tenants/%s/audit/head.json", f->data, TENANT);
	head = json_load_file(path, 0, NULL);
	assert_int_equal(json_integer_value(json_object_get(head, "seq")), 3);
	json_object_set_new(head, "seq", json_integer(2)); /* claims record 2 is the newest */
	assert_int_equal(json_dump_file(head, path, JSON_COMPACT | JSON_SORT_KEYS), 0);
	json_decref(head);
	expect_failure(f, EVID_VERIFY_EDITED, 3);
	evid_audit_close(f->audit);
	assert_int_equal(evid_audit_open(f->data, &f->audit, err, sizeof(err)), 0);
	memset(&e, 0, sizeof(e));
	e.tenant = TENANT;
	e.kind = EVID_AUDIT_SESSION_CLOSED;
	assert_int_equal(evid_audit_append(f->audit, &e, NULL, err, sizeof(err)), -EVID_EIO);
	assert_non_null(strstr(err, "chain head of acme is damaged"));
}

/* ---- retention -------------------------------------------------------------- */

static int64_t fake_now;

static int64_t fake_clock(void)
{
	return fake_now;
}

/* Sets every file under dir to mtime t. */
static void age_tree(const char *dir, int64_t t)
{
	char cmd[1024];

	snprintf(cmd, sizeof(cmd), "find '%s' -type f -exec touch -d @%lld {} +", dir,
	         (long long)t);
	assert_int_equal(system(cmd), 0);
}

static int count_rows(const struct evid_index_row *row, void *user)
{
	(void)row;
	(*(int *)user)++;
	return 0;
}

static int index_rows(struct fx *f, const char *sha)
{
	struct evid_index_query q;
	char err[1024];
	int n = 0;

	memset(&q, 0, sizeof(q));
	q.tenant = TENANT;
	q.sha256 = sha;
	assert_int_equal(
	    evid_index_find(evid_store_index(f->store), &q, count_rows, &n, err, sizeof(err)), 0);
	return n;
}

/* Half a record, as a crash while writing it leaves it. */
#define TORN_LINE "{\"actor\":{\"tenant\":\"acme\",\"tok"

/* Writes text, without a newline, as the whole of today's day file. */
static void write_torn_day_file(struct fx *f, const char *text)
{
	char path[512];
	FILE *fp;

	fx_day_file(f, TENANT, path, sizeof(path));
	fp = fopen(path, "w");
	assert_non_null(fp);
	fputs(text, fp);
	fclose(fp);
}

/* A crash while the first record of a new day file was written leaves
 * that file holding half a line. Never acknowledged (the head names the
 * last record of the day before), it is cut off at the next start and the
 * chain goes on in that file; acknowledged (the head names it), appending
 * is refused and names the file. */
static void test_restart_after_a_torn_first_record_of_the_day(void **state)
{
	struct fx *f = *state;
	struct evid_verify_report rep;
	struct evid_audit_entry e;
	char path[512];
	char err[1024] = "";
	char *text;
	size_t len;
	int64_t now = (int64_t)time(NULL);

	evid_audit_set_clock(f->audit, fake_clock);
	fake_now = now - DAY;
	fx_append(f, TENANT, EVID_AUDIT_SESSION_OPENED, SESSION, NULL, NULL, NULL); /* 1 */
	fx_append(f, TENANT, EVID_AUDIT_SESSION_CLOSED, SESSION, NULL, NULL, NULL); /* 2 */
	evid_audit_close(f->audit);
	write_torn_day_file(f, TORN_LINE);
	assert_int_equal(evid_audit_open(f->data, &f->audit, err, sizeof(err)), 0);
	assert_int_equal(fx_append(f, TENANT, EVID_AUDIT_SESSION_OPENED, "s-2", NULL, NULL, NULL),
	                 3);
	rep = verify(f, TENANT);
	assert_true(rep.ok);
	assert_int_equal(rep.records, 3);
	fx_day_file(f, TENANT, path, sizeof(path));
	text = fx_read(path, &len);
	assert_non_null(text);
	/* record 3 alone: the half line is gone */
	assert_int_equal(fx_lines(text, (char *[FX_MAX_RECORDS]){ 0 }, FX_MAX_RECORDS), 1);
	free(text);

	/* record 3 was acknowledged: today's file cut back to half of it */
	evid_audit_close(f->audit);
	write_torn_day_file(f, TORN_LINE);
	assert_int_equal(evid_audit_open(f->data, &f->audit, err, sizeof(err)), 0);
	memset(&e, 0, sizeof(e));
	e.tenant = TENANT;
	e.kind = EVID_AUDIT_SESSION_CLOSED;
	assert_int_equal(evid_audit_append(f->audit, &e, NULL, err, sizeof(err)), -EVID_EIO);
	assert_non_null(strstr(err, "holds only part of a record"));
	assert_non_null(strstr(err, ".jsonl"));
	text = fx_read(path, &len);
	assert_string_equal(text, TORN_LINE); /* left as it was, for the investigation */
	free(text);
}

static void test_purge_then_verify(void **state)
{
	struct fx *f = *state;
	struct evid_purge_report pr;
	struct evid_verify_report rep;
	char dir[512];
	char path[4200];
	char old_shot[65];
	char new_shot[65];
	char err[1024] = "";
	uint64_t seq;
	int64_t now = (int64_t)time(NULL);

	evid_audit_set_clock(f->audit, fake_clock);
	fake_now = now - 100 * DAY;
	fx_append(f, TENANT, EVID_AUDIT_SESSION_OPENED, SESSION, NULL, NULL, NULL); /* 1 */
	fx_tool_call(f, TENANT, SESSION, 1, "https://app.example/a", "Old");        /* 2 */
	fake_now = now - 99 * DAY;
	seq = fx_tool_call(f, TENANT, SESSION, 2, "https://app.example/b", "Old"); /* 3 */
	memcpy(old_shot, f->shot_sha[seq], 65);
	snprintf(dir, sizeof(dir), "%s/tenants/%s/artifacts", f->data, TENANT);
	age_tree(dir, now - 99 * DAY);
	fake_now = now;
	seq = fx_tool_call(f, TENANT, SESSION, 3, "https://app.example/c", "New"); /* 4 */
	memcpy(new_shot, f->shot_sha[seq], 65);
	fx_append(f, TENANT, EVID_AUDIT_SESSION_CLOSED, SESSION, NULL, NULL, NULL); /* 5 */
	assert_true(verify(f, TENANT).ok);
	assert_int_equal(index_rows(f, old_shot), 1);

	assert_int_equal(evid_audit_purge(f->audit, TENANT, 30, &pr, err, sizeof(err)), 0);
	assert_int_equal(pr.purge_seq, 6);
	assert_int_equal(pr.files_removed, 2);
	assert_int_equal(pr.records_removed, 3);
	assert_int_equal(pr.artifacts_removed, 8); /* 2 old calls x 4 artifacts */

	rep = verify(f, TENANT);
	assert_true(rep.ok);
	assert_true(rep.purged);
	assert_int_equal(rep.purged_through, 3);
	assert_int_equal(rep.first_seq, 4);
	assert_int_equal(rep.last_seq, 6);
	assert_int_equal(evid_artifact_path(f->data, TENANT, 1, old_shot, path, sizeof(path)), 0);
	assert_int_not_equal(access(path, F_OK), 0);
	assert_int_equal(evid_artifact_path(f->data, TENANT, 1, new_shot, path, sizeof(path)), 0);
	assert_int_equal(access(path, F_OK), 0);
	assert_int_equal(index_rows(f, old_shot), 0);
	assert_int_equal(index_rows(f, new_shot), 1);

	/* nothing left to purge: no record */
	assert_int_equal(evid_audit_purge(f->audit, TENANT, 30, &pr, err, sizeof(err)), 0);
	assert_int_equal(pr.purge_seq, 0);

	/* the chain goes on after a purge */
	assert_int_equal(fx_append(f, TENANT, EVID_AUDIT_SESSION_OPENED, "s-2", NULL, NULL, NULL),
	                 7);
	assert_true(verify(f, TENANT).ok);
	assert_int_equal(evid_audit_purge(f->audit, TENANT, 0, &pr, err, sizeof(err)),
	                 -EVID_EINVAL);
}

static void test_purge_everything_starts_with_purge_record(void **state)
{
	struct fx *f = *state;
	struct evid_purge_report pr;
	struct evid_verify_report rep;
	char err[1024] = "";
	int64_t now = (int64_t)time(NULL);

	evid_audit_set_clock(f->audit, fake_clock);
	fake_now = now - 400 * DAY;
	fx_build_trail(f, TENANT, SESSION, 2); /* 1..4, all old */
	fake_now = now;
	assert_int_equal(evid_audit_purge(f->audit, TENANT, 365, &pr, err, sizeof(err)), 0);
	assert_int_equal(pr.purge_seq, 5);
	rep = verify(f, TENANT);
	assert_true(rep.ok);
	assert_true(rep.purged);
	assert_int_equal(rep.first_seq, 5); /* the chain starts with the purge record */
	assert_int_equal(rep.records, 1);
}

static void test_purge_record_is_required(void **state)
{
	struct fx *f = *state;
	char path[512];
	char day[16];
	int64_t now = (int64_t)time(NULL);

	evid_audit_set_clock(f->audit, fake_clock);
	fake_now = now - 100 * DAY;
	fx_append(f, TENANT, EVID_AUDIT_SESSION_OPENED, SESSION, NULL, NULL, NULL);
	fake_now = now;
	fx_append(f, TENANT, EVID_AUDIT_SESSION_CLOSED, SESSION, NULL, NULL, NULL);
	evid_day_of(now - 100 * DAY, day, sizeof(day));
	snprintf(path, sizeof(path), "%s/tenants/%s/audit/%s.jsonl", f->data, TENANT, day);
	assert_int_equal(unlink(path), 0); /* an old day file deleted by hand */
	expect_failure(f, EVID_VERIFY_BAD_PURGE, 1);
}

/* ---- redaction, invalid evidence, index --------------------------------------- */

static void test_redaction(void **state)
{
	struct fx *f = *state;
	struct evid_audit_entry e;
	char path[512];
	char err[1024] = "";
	char *text;
	size_t len;
	json_t *body;

	body =
	    json_pack("{s:s, s:{s:s, s:s}, s:{s:s, s:s}, s:s}", "tool", "browser_type", "arguments",
	              "ref", "e7", "text", "hunter2-typed", "headers", "Authorization",
	              "Bearer sekrit-token", "Accept", "text/html", "password", "pw-in-body");
	memset(&e, 0, sizeof(e));
	e.tenant = TENANT;
	e.kind = EVID_AUDIT_TOOL_CALL;
	e.body = body;
	e.secret_text = 1;
	assert_int_equal(evid_audit_append(f->audit, &e, NULL, err, sizeof(err)), 0);
	json_decref(body);
	fx_day_file(f, TENANT, path, sizeof(path));
	text = fx_read(path, &len);
	assert_null(strstr(text, "hunter2"));
	assert_null(strstr(text, "sekrit"));
	assert_null(strstr(text, "pw-in-body"));
	assert_non_null(strstr(text, "\"Accept\":\"text/html\""));
	assert_non_null(strstr(text, "\"text\":\"[redacted]\""));
	free(text);
	assert_true(verify(f, TENANT).ok);

	/* purge records come from retention only */
	e.kind = EVID_AUDIT_PURGE;
	e.body = NULL;
	assert_int_equal(evid_audit_append(f->audit, &e, NULL, err, sizeof(err)), -EVID_EINVAL);
	e.kind = "Bad Kind";
	assert_int_equal(evid_audit_append(f->audit, &e, NULL, err, sizeof(err)), -EVID_EINVAL);
	/* artifacts must name what they reference */
	e.kind = EVID_AUDIT_EVIDENCE_KEPT;
	e.artifacts = json_pack("[{s:s, s:s}]", "kind", "download", "sha256", "not-a-hash");
	assert_int_equal(evid_audit_append(f->audit, &e, NULL, err, sizeof(err)), -EVID_EINVAL);
	assert_non_null(strstr(err, "valid sha256"));
	json_decref(e.artifacts);
}

static void test_invalid_screenshot_is_kept(void **state)
{
	struct fx *f = *state;
	struct evid_meta meta;
	struct evid_action_evidence ev;
	json_t *artifacts = NULL;
	json_t *a;
	char err[1024] = "";
	char path[4200];
	const char *sha;

	memset(&meta, 0, sizeof(meta));
	meta.tenant = TENANT;
	meta.operation_id = "op-bad";
	memset(&ev, 0, sizeof(ev));
	ev.meta = &meta;
	ev.screenshot_b64 = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAAB"; /* a PNG cut short */
	ev.annotation.has_point = 1;
	assert_int_equal(evid_keep_action_evidence(f->store, &ev, &artifacts, err, sizeof(err)),
	                 -EVID_EBADPNG);
	assert_non_null(strstr(err, "kept as invalid evidence"));
	assert_int_equal(json_array_size(artifacts), 1); /* no annotated copy of a bad image */
	a = json_array_get(artifacts, 0);
	assert_true(json_is_false(json_object_get(a, "valid")));
	assert_non_null(strstr(json_string_value(json_object_get(a, "reason")), "invalid PNG"));
	sha = json_string_value(json_object_get(a, "sha256"));
	fx_append(f, TENANT, EVID_AUDIT_TOOL_CALL, SESSION, "op-bad",
	          json_pack("{s:s}", "tool", "browser_click"), artifacts);
	assert_true(verify(f, TENANT).ok);
	assert_int_equal(evid_artifact_path(f->data, TENANT, 0, sha, path, sizeof(path)), 0);
	assert_int_equal(unlink(path), 0);
	expect_failure(f, EVID_VERIFY_ARTIFACT_MISSING, 1);
	json_decref(artifacts);
}

static int collect_kinds(const struct evid_index_row *row, void *user)
{
	json_array_append_new(user, json_string(row->kind));
	return 0;
}

static void test_index_records_artifacts(void **state)
{
	struct fx *f = *state;
	struct evid_index_query q;
	struct evid_index *ix = NULL;
	json_t *kinds = json_array();
	char path[512];
	char err[1024] = "";
	size_t added = 0;

	fx_build_trail(f, TENANT, SESSION, 2);
	memset(&q, 0, sizeof(q));
	q.tenant = TENANT;
	q.operation_id = "op-1";
	assert_int_equal(
	    evid_index_find(evid_store_index(f->store), &q, collect_kinds, kinds, err, sizeof(err)),
	    0);
	assert_int_equal(json_array_size(kinds), 4);
	json_array_clear(kinds);
	q.operation_id = NULL;
	q.kind = EVID_KIND_ANNOTATED;
	assert_int_equal(
	    evid_index_find(evid_store_index(f->store), &q, collect_kinds, kinds, err, sizeof(err)),
	    0);
	assert_int_equal(json_array_size(kinds), 2);

	/* the index is derived: a new database is rebuilt from the records */
	evid_store_close(f->store);
	f->store = NULL;
	snprintf(path, sizeof(path), "%s/glassbox.db", f->data);
	unlink(path);
	snprintf(path, sizeof(path), "%s/glassbox.db-wal", f->data);
	unlink(path);
	snprintf(path, sizeof(path), "%s/glassbox.db-shm", f->data);
	unlink(path);
	assert_int_equal(evid_index_open(f->data, &ix, err, sizeof(err)), 0);
	assert_int_equal(evid_index_rebuild(ix, f->data, TENANT, &added, err, sizeof(err)), 0);
	assert_int_equal(added, 8);
	assert_int_equal(evid_index_rebuild(ix, f->data, TENANT, &added, err, sizeof(err)), 0);
	assert_int_equal(added, 0);
	evid_index_close(ix);
	assert_int_equal(evid_store_open_err(f->data, &f->store, err, sizeof(err)), 0);
	json_decref(kinds);
}

static void test_key_file_mode_checked(void **state)
{
	struct fx *f = *state;
	struct evid_audit *a = NULL;
	char path[512];
	char err[1024] = "";

	snprintf(path, sizeof(path), "%s/keys/audit.key", f->data);
	assert_int_equal(chmod(path, 0644), 0);
	assert_int_equal(evid_audit_open(f->data, &a, err, sizeof(err)), -EVID_EIO);
	assert_null(a);
	assert_non_null(strstr(err, "chmod 600"));
	assert_int_equal(chmod(path, 0600), 0);
	assert_int_equal(evid_audit_open(f->data, &a, err, sizeof(err)), 0);
	evid_audit_close(a);
}

/* ---- the store turns read-only mid-session ------------------------------------ */

/* Makes data read-only for this process: a read-only bind mount in a
 * private mount namespace when we may (root), chmod otherwise. Returns
 * 1 (mounted), 2 (chmod), or 0 (cannot here). */
static int make_read_only(const char *data)
{
	char cmd[1024];

	if (geteuid() != 0) {
		snprintf(cmd, sizeof(cmd), "find '%s' -type d -exec chmod 0500 {} +", data);
		return system(cmd) == 0 ? 2 : 0;
	}
	if (unshare(CLONE_NEWNS) != 0 || mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) != 0)
		return 0;
	if (mount(data, data, NULL, MS_BIND, NULL) != 0)
		return 0;
	if (mount(NULL, data, NULL, MS_REMOUNT | MS_BIND | MS_RDONLY, NULL) != 0) {
		umount(data);
		return 0;
	}
	return 1;
}

static void make_writable(const char *data, int how)
{
	char cmd[1024];

	if (how == 1) {
		assert_int_equal(umount(data), 0);
	} else if (how == 2) {
		snprintf(cmd, sizeof(cmd), "find '%s' -type d -exec chmod 0700 {} +", data);
		assert_int_equal(system(cmd), 0);
	}
}

static void test_store_read_only_mid_session(void **state)
{
	struct fx *f = *state;
	struct evid_meta meta;
	struct evid_action_evidence ev;
	struct evid_audit_entry e;
	unsigned char *png = NULL;
	size_t len = 0;
	json_t *artifacts = NULL;
	const char *why;
	char err[1024] = "";
	int how;

	fx_build_trail(f, TENANT, SESSION, 1); /* the session is under way */
	how = make_read_only(f->data);
	if (!how) {
		print_message(
		    "    cannot make the store read-only here (no mount namespace): skipped\n");
		skip();
	}
	why = how == 1 ? strerror(EROFS) : strerror(EACCES);

	/* before acting: the check a require_evidence tenant makes */
	assert_int_equal(evid_store_check_writable(f->store, TENANT, err, sizeof(err)), -EVID_EIO);
	print_message("    %s\n", err);
	assert_non_null(strstr(err, "evidence could not be kept for tenant acme"));
	assert_non_null(strstr(err, why));
	assert_int_equal(evid_audit_check_writable(f->audit, TENANT, err, sizeof(err)), -EVID_EIO);
	assert_non_null(strstr(err, why));

	/* after acting: the evidence and the audit record say they were not kept */
	fx_png(32, 32, 7, &png, &len);
	memset(&meta, 0, sizeof(meta));
	meta.tenant = TENANT;
	meta.operation_id = "op-ro";
	memset(&ev, 0, sizeof(ev));
	ev.meta = &meta;
	ev.screenshot = png;
	ev.screenshot_len = len;
	ev.snapshot_text = "- button \"Save\"";
	assert_int_equal(evid_keep_action_evidence(f->store, &ev, &artifacts, err, sizeof(err)),
	                 -EVID_EIO);
	print_message("    %s\n", err);
	assert_non_null(strstr(err, "evidence could not be kept"));
	assert_non_null(strstr(err, why));
	assert_int_equal(json_array_size(artifacts), 0);
	memset(&e, 0, sizeof(e));
	e.tenant = TENANT;
	e.kind = EVID_AUDIT_EVIDENCE_FAILED;
	assert_int_equal(evid_audit_append(f->audit, &e, NULL, err, sizeof(err)), -EVID_EIO);
	assert_non_null(strstr(err, "the audit record could not be kept"));
	assert_non_null(strstr(err, why));

	/* writable again: nothing was half-written, the chain goes on */
	make_writable(f->data, how);
	assert_int_equal(evid_store_check_writable(f->store, TENANT, err, sizeof(err)), 0);
	e.body = json_pack("{s:s}", "reason", "the store was read-only");
	assert_int_equal(evid_audit_append(f->audit, &e, NULL, err, sizeof(err)), 0);
	json_decref(e.body);
	assert_true(verify(f, TENANT).ok);
	json_decref(artifacts);
	free(png);
}

/* ---- the command line ----------------------------------------------------------- */

static int run_cli(int (*fn)(int, char **, const char *), const char *data, ...)
{
	char *argv[16];
	va_list ap;
	int argc = 0;

	va_start(ap, data);
	while (argc < 15) {
		argv[argc] = va_arg(ap, char *);
		if (!argv[argc])
			break;
		argc++;
	}
	va_end(ap);
	argv[argc] = NULL;
	return fn(argc, argv, data);
}

static void test_cli(void **state)
{
	struct fx *f = *state;
	char key[512];
	char path[512];
	char *lines[FX_MAX_RECORDS] = { 0 };
	char *text;
	size_t n;

	fx_build_trail(f, TENANT, SESSION, 2);
	fx_build_trail(f, "beta", "s-9", 1);
	snprintf(key, sizeof(key), "%s/audit.pub", f->root);
	assert_int_equal(run_cli(evid_cli_audit, f->data, "audit", "export-key", "-o", key, NULL),
	                 0);
	assert_int_equal(run_cli(evid_cli_audit, f->data, "audit", "verify", NULL), 0);
	assert_int_equal(run_cli(evid_cli_audit, f->data, "audit", "verify", "--tenant", TENANT,
	                         "--pubkey", key, "--json", NULL),
	                 0);
	text = read_lines(f, path, sizeof(path), lines, &n);
	memmove(&lines[1], &lines[2], (n - 2) * sizeof(*lines));
	fx_write_lines(path, lines, n - 1);
	free(text);
	assert_int_equal(run_cli(evid_cli_audit, f->data, "audit", "verify", "--pubkey", key, NULL),
	                 1);
	assert_int_equal(
	    run_cli(evid_cli_audit, f->data, "audit", "verify", "--tenant", "beta", NULL), 0);
	assert_int_equal(
	    run_cli(evid_cli_audit, f->data, "audit", "verify", "--tenant", "nobody", NULL), 3);
	assert_int_equal(
	    run_cli(evid_cli_audit, f->data, "audit", "purge", "--tenant", TENANT, NULL), 2);
	assert_int_equal(run_cli(evid_cli_audit, f->data, "audit", "purge", "--tenant", "beta",
	                         "--days", "30", NULL),
	                 0);
	assert_int_equal(run_cli(evid_cli_audit, f->data, "audit", "frobnicate", NULL), 2);
	assert_int_equal(run_cli(evid_cli_audit, f->data, "audit", NULL), 2);
}

/* The audit trail and the evidence store refuse a data dir that is not
 * set or too long the same way, naming what to do, and open nothing. */
static void test_open_refuses_bad_data_dir(void **state)
{
	struct evid_audit *a = (struct evid_audit *)1;
	struct evid_store *s = (struct evid_store *)1;
	char long_dir[3700];
	char err[512];

	(void)state;
	memset(long_dir, 'd', sizeof(long_dir) - 1);
	long_dir[0] = '/';
	long_dir[sizeof(long_dir) - 1] = '\0';
	err[0] = '\0';
	assert_int_equal(evid_audit_open("", &a, err, sizeof(err)), -EVID_EINVAL);
	assert_null(a);
	assert_string_equal(err, "the data dir is not set: give one");
	err[0] = '\0';
	assert_int_equal(evid_store_open_err(NULL, &s, err, sizeof(err)), -EVID_EINVAL);
	assert_null(s);
	assert_string_equal(err, "the data dir is not set: give one");
	a = (struct evid_audit *)1;
	err[0] = '\0';
	assert_int_equal(evid_audit_open(long_dir, &a, err, sizeof(err)), -EVID_EINVAL);
	assert_null(a);
	assert_non_null(strstr(err, "longer than 3584 bytes: choose a shorter one"));
	s = (struct evid_store *)1;
	err[0] = '\0';
	assert_int_equal(evid_store_open_err(long_dir, &s, err, sizeof(err)), -EVID_EINVAL);
	assert_null(s);
	assert_non_null(strstr(err, "longer than 3584 bytes: choose a shorter one"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_open_refuses_bad_data_dir),
		cmocka_unit_test_setup_teardown(test_trail_verifies, setup, teardown),
		cmocka_unit_test_setup_teardown(test_drill_edit_one_byte, setup, teardown),
		cmocka_unit_test_setup_teardown(test_drill_edit_breaks_json, setup, teardown),
		cmocka_unit_test_setup_teardown(test_drill_edit_signature, setup, teardown),
		cmocka_unit_test_setup_teardown(test_drill_delete_record, setup, teardown),
		cmocka_unit_test_setup_teardown(test_drill_swap_records, setup, teardown),
		cmocka_unit_test_setup_teardown(test_drill_replace_artifact, setup, teardown),
		cmocka_unit_test_setup_teardown(test_drill_remove_artifact, setup, teardown),
		cmocka_unit_test_setup_teardown(test_drill_truncate_log, setup, teardown),
		cmocka_unit_test_setup_teardown(test_drill_truncate_whole_records, setup, teardown),
		cmocka_unit_test_setup_teardown(test_drill_prefix_removed_without_purge, setup,
		                                teardown),
		cmocka_unit_test_setup_teardown(test_wrong_pubkey, setup, teardown),
		cmocka_unit_test_setup_teardown(test_concurrent_appends, setup, teardown),
		cmocka_unit_test_setup_teardown(test_group_commit, setup, teardown),
		cmocka_unit_test_setup_teardown(test_group_commit_failed_sync, setup, teardown),
		cmocka_unit_test_setup_teardown(test_group_commit_kept_then_later_cut, setup,
		                                teardown),
		cmocka_unit_test_setup_teardown(test_restart_continues_chain, setup, teardown),
		cmocka_unit_test_setup_teardown(test_restart_refuses_cut_log, setup, teardown),
		cmocka_unit_test_setup_teardown(test_damaged_head, setup, teardown),
		cmocka_unit_test_setup_teardown(test_drill_edit_artifact_metadata, setup, teardown),
		cmocka_unit_test(test_fit_cuts_in_steps),
		cmocka_unit_test_setup_teardown(test_large_arguments_leave_a_truncated_record,
		                                setup, teardown),
		cmocka_unit_test_setup_teardown(test_restart_refuses_an_overlong_last_line, setup,
		                                teardown),
		cmocka_unit_test_setup_teardown(test_restart_after_a_torn_first_record_of_the_day,
		                                setup, teardown),
		cmocka_unit_test_setup_teardown(test_purge_then_verify, setup, teardown),
		cmocka_unit_test_setup_teardown(test_purge_everything_starts_with_purge_record,
		                                setup, teardown),
		cmocka_unit_test_setup_teardown(test_purge_record_is_required, setup, teardown),
		cmocka_unit_test_setup_teardown(test_redaction, setup, teardown),
		cmocka_unit_test_setup_teardown(test_invalid_screenshot_is_kept, setup, teardown),
		cmocka_unit_test_setup_teardown(test_index_records_artifacts, setup, teardown),
		cmocka_unit_test_setup_teardown(test_key_file_mode_checked, setup, teardown),
		cmocka_unit_test_setup_teardown(test_cli, setup, teardown),
		/* last: it may leave this process in its own mount namespace */
		cmocka_unit_test_setup_teardown(test_store_read_only_mid_session, setup, teardown),
	};

	return cmocka_run_group_tests_name("audit", tests, NULL, NULL);
}

/*
 * audit_bench.c - what keeping an audit record costs: N tool_call records
 * appended one after the other by one thread (each append returns once
 * its record is durable), then N appended by T threads at once (sessions
 * writing at the same time), in a temporary data dir under $TMPDIR.
 * Prints one JSON line: the median and p95 of one append in microseconds
 * for each, and the wall time per record of the concurrent run.
 *
 *   build/evidence/audit_bench [N [T]]    (default 200 records, 8 threads)
 */
#include "bench/bench_util.h"
#include "evidence/audit.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct writer {
	struct evid_audit *audit;
	int id;
	size_t n;
	int64_t *us; /* n samples */
	int failed;
};

/* Appends one tool_call record like a click's; 0 or -1. */
static int append_one(struct evid_audit *a, int id, size_t i)
{
	struct evid_audit_entry e;
	char op[48];
	char err[1024];
	json_t *body;
	int rc;

	snprintf(op, sizeof(op), "op-%d-%zu", id, i);
	body = json_pack("{s:s, s:{s:s}, s:b, s:s, s:s}", "tool", "browser_click", "arguments",
	                 "ref", "e12", "ok", 1, "url_before", "https://shop.example/cart", "url",
	                 "https://shop.example/checkout");
	memset(&e, 0, sizeof(e));
	e.tenant = "bench";
	e.kind = EVID_AUDIT_TOOL_CALL;
	e.session_id = "s-bench";
	e.operation_id = op;
	e.body = body;
	rc = evid_audit_append(a, &e, NULL, err, sizeof(err));
	if (rc != 0)
		fprintf(stderr, "audit_bench: %s\n", err);
	json_decref(body);
	return rc == 0 ? 0 : -1;
}

static void *write_many(void *arg)
{
	struct writer *w = arg;
	int64_t t0;
	size_t i;

	for (i = 0; i < w->n && !w->failed; i++) {
		t0 = bench_now_us();
		if (append_one(w->audit, w->id, i) != 0)
			w->failed = 1;
		w->us[i] = bench_now_us() - t0;
	}
	return NULL;
}

int main(int argc, char **argv)
{
	size_t n = argc > 1 ? (size_t)strtoul(argv[1], NULL, 10) : 200;
	size_t threads = argc > 2 ? (size_t)strtoul(argv[2], NULL, 10) : 8;
	const char *tmp = getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp";
	struct writer w[64];
	pthread_t th[64];
	struct evid_audit *a = NULL;
	char dir[4096] = "";
	char err[1024];
	int64_t *seq_us;
	int64_t *all_us;
	int64_t t0;
	int64_t wall;
	size_t each;
	size_t i;
	size_t k = 0;
	int rc = 1, made = 0;

	if (n < 1 || threads < 1 || threads > 64) {
		fprintf(stderr, "usage: audit_bench [N >= 1 [T, 1 to 64]]\n");
		return 2;
	}
	each = (n + threads - 1) / threads;
	seq_us = calloc(n, sizeof(*seq_us));
	all_us = calloc(each * threads, sizeof(*all_us));
	snprintf(dir, sizeof(dir), "%s/gb-audit-bench-XXXXXX", tmp);
	made = seq_us && all_us && mkdtemp(dir);
	if (!made) {
		fprintf(stderr, "audit_bench: cannot make a temporary dir under %s\n", tmp);
		goto out;
	}
	if (evid_audit_open(dir, &a, err, sizeof(err)) != 0) {
		fprintf(stderr, "audit_bench: %s\n", err);
		goto out;
	}
	/* one writer: the first record creates the day file and head.json */
	for (i = 0; i < n; i++) {
		t0 = bench_now_us();
		if (append_one(a, 0, i) != 0)
			goto out;
		seq_us[i] = bench_now_us() - t0;
	}
	/* T writers at once */
	t0 = bench_now_us();
	for (i = 0; i < threads; i++) {
		w[i] = (struct writer){
			.audit = a, .id = (int)i + 1, .n = each, .us = all_us + i * each
		};
		if (pthread_create(&th[i], NULL, write_many, &w[i]) != 0) {
			fprintf(stderr, "audit_bench: cannot start a thread\n");
			threads = i;
			break;
		}
	}
	for (i = 0; i < threads; i++) {
		pthread_join(th[i], NULL);
		if (w[i].failed)
			goto out;
		k += w[i].n;
	}
	wall = bench_now_us() - t0;
	printf("{\"records\": %zu, \"threads\": %zu, \"sequential_us\": {\"median\": %lld, "
	       "\"p95\": %lld}, \"concurrent_us\": {\"median\": %lld, \"p95\": %lld}, "
	       "\"concurrent_wall_us_per_record\": %lld}\n",
	       n, threads, (long long)bench_quantile(seq_us, n, 0.5),
	       (long long)bench_quantile(seq_us, n, 0.95),
	       (long long)bench_quantile(all_us, k, 0.5),
	       (long long)bench_quantile(all_us, k, 0.95), (long long)(wall / (int64_t)k));
	rc = 0;
out:
	evid_audit_close(a);
	if (made)
		bench_rm_tree(dir);
	free(seq_us);
	free(all_us);
	return rc;
}

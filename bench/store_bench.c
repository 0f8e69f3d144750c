/*
 * store_bench.c - what the store costs a tool call, on the backend
 * GB_TEST_POSTGRES selects (SQLite in a temporary data dir without it):
 * the ledger's three statements around every call (begin, mark running,
 * finish) and an approval's life (create, decide, consume), N times
 * each; prints one JSON line with the median and p95 in microseconds.
 * bench/store.sh runs it on both backends and gives the ratio.
 */
#include "bench/bench_util.h"
#include "common/log.h"
#include "store/store.h"
#include "tests/unit/store_fixture.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define FP "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"

/* One tool call's ledger: begin, mark running, finish. */
static int ledger_call(struct store *st, size_t i, const char *hash, char *err, size_t errlen)
{
	struct store_op_request r = {
		.tenant = "acme", .session = "s-1", .tool = "browser_click", .args_hash = hash
	};
	enum store_op_outcome got;
	struct store_op op;
	char id[32];
	int rc;

	snprintf(id, sizeof(id), "bench-%zu", i);
	r.operation_id = id;
	rc = store_op_begin(st, &r, 0, &got, &op, err, errlen);
	store_op_clear(&op);
	if (rc == 0)
		rc = store_op_mark_running(st, "acme", id, err, errlen);
	if (rc == 0)
		rc = store_op_finish(st, "acme", id, STORE_OP_DONE, NULL, err, errlen);
	return rc;
}

/* One approval: asked for, approved, spent. */
static int approval_life(struct store *st, char *err, size_t errlen)
{
	struct store_approval_request req = { .tenant = "acme",
		                              .fingerprint = FP,
		                              .summary = "click button \"Delete all orders\"" };
	struct store_decider who = { .by = "alice", .channel = "admin-socket", .uid = -1 };
	struct store_approval a;
	enum store_refusal why;
	int rc;

	rc = store_approval_create(st, &req, &a, err, errlen);
	if (rc == 0)
		rc = store_approval_decide(st, "acme", a.id, 1, &who, NULL, err, errlen);
	if (rc == 0)
		rc = store_approval_consume(st, "acme", a.id, FP, "op-bench", NULL, &why, err,
		                            errlen);
	return rc;
}

int main(int argc, char **argv)
{
	size_t n = argc > 1 ? (size_t)strtoul(argv[1], NULL, 10) : 200;
	int64_t *ledger = calloc(n ? n : 1, sizeof(*ledger));
	int64_t *approval = calloc(n ? n : 1, sizeof(*approval));
	char dir[] = "/tmp/gb-store-bench-XXXXXX";
	char hash[STORE_HASH_MAX + 1];
	char err[512] = "";
	struct store *st = NULL;
	json_t *args = json_pack("{s:s}", "target", "e1");
	size_t i;
	int rc = 1;

	gb_log_set_level(GB_LOG_WARN);
	if (!n || !ledger || !approval || !mkdtemp(dir) || store_fixture_begin(dir) < 0 ||
	    store_args_hash(args, hash) != 0 || store_open(dir, &st, err, sizeof(err)) != 0) {
		fprintf(stderr, "store_bench: cannot start: %s\n", err);
		goto out;
	}
	for (i = 0; i < n; i++) {
		int64_t t0 = bench_now_us();

		if (ledger_call(st, i, hash, err, sizeof(err)) != 0)
			goto fail;
		ledger[i] = bench_now_us() - t0;
		t0 = bench_now_us();
		if (approval_life(st, err, sizeof(err)) != 0)
			goto fail;
		approval[i] = bench_now_us() - t0;
	}
	printf("{\"backend\": \"%s\", \"n\": %zu, \"ledger_call_us\": {\"median\": %lld, \"p95\": "
	       "%lld}, \"approval_us\": {\"median\": %lld, \"p95\": %lld}}\n",
	       store_backend_name(st), n, (long long)bench_quantile(ledger, n, 0.5),
	       (long long)bench_quantile(ledger, n, 0.95),
	       (long long)bench_quantile(approval, n, 0.5),
	       (long long)bench_quantile(approval, n, 0.95));
	rc = 0;
	goto out;
fail:
	fprintf(stderr, "store_bench: %s\n", err);
out:
	store_close(st);
	store_fixture_end();
	bench_rm_tree(dir);
	json_decref(args);
	free(ledger);
	free(approval);
	return rc;
}

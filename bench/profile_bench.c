/*
 * profile_bench.c - what keeping sealed profiles in the object store
 * costs a session's profile open and save:
 *
 *   profile_bench N SIZE_KIB [CONFIG]
 *
 * N rounds (after one that makes version 1) on one profile of a temporary data dir (SQLite metadata):
 * open it for writing (unwrap, read, unseal), write SIZE_KIB of random
 * bytes into its dir (incompressible, as a browser's databases are after
 * sealing), seal and commit it as the next version, close. With CONFIG
 * (a serve config whose object_store names the bucket) the versions go to
 * the object store, else to the data dir. Prints one JSON line with the
 * medians and p95 of open and save in microseconds. bench/profiles.mjs
 * runs it both ways against a local S3-API server and gives the ratio.
 */
#include "bench/bench_util.h"
#include "blob/blob.h"
#include "common/log.h"
#include "profiles/profiles.h"

#include <fcntl.h>
#include <sodium.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Writes size bytes of random data as dir/State. */
static int write_state(const char *dir, size_t size)
{
	char path[4200];
	unsigned char *buf = malloc(size ? size : 1);
	int fd;
	int rc = -1;

	if (!buf)
		return -1;
	randombytes_buf(buf, size);
	snprintf(path, sizeof(path), "%s/State", dir);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd >= 0 && write(fd, buf, size) == (ssize_t)size)
		rc = 0;
	if (fd >= 0)
		close(fd);
	free(buf);
	return rc;
}

int main(int argc, char **argv)
{
	size_t n = argc > 1 ? (size_t)strtoul(argv[1], NULL, 10) : 20;
	size_t kib = argc > 2 ? (size_t)strtoul(argv[2], NULL, 10) : 1024;
	const char *config = argc > 3 ? argv[3] : NULL;
	int64_t *opens = calloc(n ? n : 1, sizeof(*opens));
	int64_t *saves = calloc(n ? n : 1, sizeof(*saves));
	struct prof_open_opts o = {
		.tenant = "acme", .user = "alice", .name = "bench", .create = 1, .holder = "bench"
	};
	struct blob_config cfg;
	struct blob_store *objects = NULL;
	struct prof_lease *l = NULL;
	char dir[] = "/tmp/gb-profile-bench-XXXXXX";
	char err[1024] = "";
	size_t i;
	int rc = 1;

	memset(&cfg, 0, sizeof(cfg));
	gb_log_set_level(GB_LOG_WARN);
	if (sodium_init() < 0 || !n || !opens || !saves || !mkdtemp(dir)) {
		fprintf(stderr, "profile_bench: cannot start\n");
		goto out;
	}
	if (config && (blob_config_load(config, &cfg, err, sizeof(err)) != 0 ||
	               blob_open(&cfg, &objects, err, sizeof(err)) != 0))
		goto fail;
	prof_use_object_store(objects);
	/* round 0 makes version 1 (an empty profile opens without reading
	 * anything) and is not counted */
	for (i = 0; i <= n; i++) {
		int64_t t0 = bench_now_us();
		int64_t opened, saved;

		if (prof_lease_open(dir, &o, &l, err, sizeof(err)) != 0)
			goto fail;
		opened = bench_now_us() - t0;
		if (write_state(prof_lease_dir(l), kib * 1024) != 0) {
			snprintf(err, sizeof(err), "cannot write the profile's state");
			goto fail;
		}
		t0 = bench_now_us();
		if (prof_lease_save(l, NULL, err, sizeof(err)) != 0)
			goto fail;
		saved = bench_now_us() - t0;
		prof_lease_close(l);
		l = NULL;
		if (i > 0) {
			opens[i - 1] = opened;
			saves[i - 1] = saved;
		}
	}
	printf("{\"where\": \"%s\", \"n\": %zu, \"size_kib\": %zu, \"open_us\": {\"median\": %lld, "
	       "\"p95\": %lld}, \"save_us\": {\"median\": %lld, \"p95\": %lld}}\n",
	       objects ? "object_store" : "data_dir", n, kib,
	       (long long)bench_quantile(opens, n, 0.5), (long long)bench_quantile(opens, n, 0.95),
	       (long long)bench_quantile(saves, n, 0.5), (long long)bench_quantile(saves, n, 0.95));
	rc = 0;
	goto out;
fail:
	fprintf(stderr, "profile_bench: %s\n", err);
out:
	prof_lease_close(l);
	prof_use_object_store(NULL);
	blob_close(objects);
	blob_config_wipe(&cfg);
	bench_rm_tree(dir);
	free(opens);
	free(saves);
	return rc;
}

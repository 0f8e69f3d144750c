/*
 * cmd_keys.c - `glassbox keys init | rotate | rewrap`: the master key of
 * the sealed stores (profiles/keys.h). Prints the key's id, never the key.
 */
#include "blob/blob.h"
#include "cli/commands.h"
#include "profiles/keys.h"
#include "profiles/profiles.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void usage(FILE *out)
{
	fprintf(
	    out,
	    "usage: glassbox keys COMMAND [--data-dir DIR]\n"
	    "\n"
	    "  init     create the master key (DATA/keys/master.key, 0600) if there is none\n"
	    "           and print its id; $GLASSBOX_MASTER_KEY_FILE names a key kept elsewhere\n"
	    "  rotate   replace the master key and re-wrap every tenant key with it (sealed\n"
	    "           profiles are not re-encrypted)\n"
	    "  rewrap [--store CONFIG]\n"
	    "           re-wrap every tenant key of the data dir, and with --store every one\n"
	    "           in the replicas' object store, with the current master key (opened\n"
	    "           with it or with $GLASSBOX_MASTER_KEY_OTHER_FILE)\n");
}

/* `keys rewrap`: the data dir's tenant keys, then the object store's. */
static int rewrap(const char *data_dir, const char *store)
{
	struct blob_store *objects = NULL;
	char id[17];
	char err[1024] = "";
	size_t local = 0, shared = 0;
	int rc = 1;

	if (store && cli_use_replicas_store("glassbox keys rewrap", store, &objects) < 0) {
		rc = 2;
		goto out;
	}
	if (prof_keys_master_id(data_dir, id, err, sizeof(err)) < 0 ||
	    prof_keys_rewrap(data_dir, &local, err, sizeof(err)) < 0 ||
	    prof_object_rewrap_tenant_keys(data_dir, &shared, err, sizeof(err)) < 0) {
		fprintf(stderr, "glassbox keys rewrap: %s\n", err);
		goto out;
	}
	printf("tenant keys wrapped by master key %s: %zu of the data dir", id, local);
	if (store)
		printf(", %zu re-wrapped in the object store %s", shared, blob_describe(objects));
	printf("\n");
	rc = 0;
out:
	prof_use_object_store(NULL);
	blob_close(objects);
	return rc;
}

int cli_cmd_keys(int argc, char **argv, const char *default_data_dir)
{
	const char *data_dir = default_data_dir;
	const char *cmd = NULL;
	const char *store = NULL;
	char id[17];
	char err[1024] = "";
	size_t n = 0;
	int i;

	for (i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--data-dir") && i + 1 < argc)
			data_dir = argv[++i];
		else if (!strcmp(argv[i], "--store") && i + 1 < argc)
			store = argv[++i];
		else if (!cmd && argv[i][0] != '-')
			cmd = argv[i];
		else {
			fprintf(stderr, "glassbox keys: unknown or incomplete argument '%s'\n\n",
			        argv[i]);
			usage(stderr);
			return 2;
		}
	}
	if (!cmd || (strcmp(cmd, "init") && strcmp(cmd, "rotate") && strcmp(cmd, "rewrap"))) {
		usage(cmd ? stderr : stdout);
		return 2;
	}
	if (store && strcmp(cmd, "rewrap") != 0) {
		fprintf(stderr, "glassbox keys %s: --store is for rewrap only\n", cmd);
		return 2;
	}
	if (!strcmp(cmd, "rewrap"))
		return rewrap(data_dir, store);
	if (!strcmp(cmd, "rotate") && getenv("GLASSBOX_REPLICA_ID") &&
	    getenv("GLASSBOX_REPLICA_ID")[0]) {
		fprintf(stderr,
		        "glassbox keys rotate: this is replica %s, whose master key every replica "
		        "shares: rotate it in their Secret with glassbox keys rewrap "
		        "(docs/deploy.md, \"Rotating the master key\")\n",
		        getenv("GLASSBOX_REPLICA_ID"));
		return 1;
	}
	if (!strcmp(cmd, "rotate") && prof_keys_rotate(data_dir, &n, err, sizeof(err)) < 0) {
		fprintf(stderr, "glassbox keys rotate: %s\n", err);
		return 1;
	}
	if (prof_keys_init(data_dir, err, sizeof(err)) < 0 ||
	    prof_keys_master_id(data_dir, id, err, sizeof(err)) < 0) {
		fprintf(stderr, "glassbox keys %s: %s\n", cmd, err);
		return 1;
	}
	if (!strcmp(cmd, "rotate"))
		printf("master key rotated: new key %s; %zu tenant key(s) re-wrapped\n", id, n);
	else
		printf("master key %s ready (data dir %s)\n", id, data_dir);
	return 0;
}

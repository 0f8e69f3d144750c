/*
 * replicas_store.c - the replicas' stores for a command run beside them
 * (`glassbox profile ... --store`, `glassbox keys rewrap --store`): the
 * PostgreSQL metadata and the object store of their serve config.
 */
#include "blob/blob.h"
#include "cli/commands.h"
#include "profiles/profiles.h"

#include <jansson.h>
#include <stdio.h>
#include <string.h>

/* Points the store and profiles at the replicas' of serve config path:
 * its store.postgres (when it has one) and its object_store (*objects,
 * closed by the caller). Returns 0 or -1 with the reason printed. */
int cli_use_replicas_store(const char *command, const char *path, struct blob_store **objects)
{
	struct blob_config cfg;
	json_error_t jerr;
	json_t *root = json_load_file(path, JSON_REJECT_DUPLICATES, &jerr);
	json_t *store = json_object_get(root, "store");
	const char *url = json_string_value(json_object_get(store, "postgres"));
	char err[1024];
	int rc = -1;

	memset(&cfg, 0, sizeof(cfg));
	if (!root) {
		fprintf(stderr, "%s: cannot read the config %s: %s (line %d)\n", command, path,
		        jerr.text, jerr.line);
		goto out;
	}
	if (store && !url) {
		fprintf(stderr,
		        "%s: the store of %s names no postgres URL: give the "
		        "replicas' serve config\n",
		        command, path);
		goto out;
	}
	if (url && cli_store_configure(url, NULL) < 0)
		goto out;
	if (blob_config_load(path, &cfg, err, sizeof(err)) != 0 ||
	    blob_open(&cfg, objects, err, sizeof(err)) != 0) {
		fprintf(stderr, "%s: %s\n", command, err);
		goto out;
	}
	prof_use_object_store(*objects);
	rc = 0;
out:
	blob_config_wipe(&cfg);
	json_decref(root);
	return rc;
}

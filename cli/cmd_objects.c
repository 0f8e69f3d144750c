/*
 * cmd_objects.c - `glassbox objects check | ls | get | put`: the object
 * store a service config names (object_store), seen from the command
 * line, so an operator can tell that the endpoint, bucket and
 * credentials work before the service relies on them.
 */
#include "cli/commands.h"

#include "blob/blob.h"
#include "common/fs.h"
#include "common/util.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define OBJECT_MAX_BYTES (512u * 1024u * 1024u)

static const char usage[] = "usage: glassbox objects check --config FILE\n"
                            "       glassbox objects ls [PREFIX] --config FILE\n"
                            "       glassbox objects get KEY [-o FILE] --config FILE\n"
                            "       glassbox objects put KEY FILE --config FILE\n";

static int print_key(const char *key, size_t size, void *user)
{
	(void)user;
	printf("%zu\t%s\n", size, key);
	return 0;
}

/* check: put a probe object, read it back, find it in a listing. */
static int found_probe(const char *key, size_t size, void *user)
{
	(void)size;
	return !strcmp(key, (const char *)user) ? 1 : 0;
}

static int check(struct blob_store *b, char *err, size_t errlen)
{
	char key[128], body[64];
	unsigned char *data = NULL;
	size_t len = 0;
	int rc;

	gb_random_hex(body, 16);
	snprintf(key, sizeof(key), "probe/%s", body);
	rc = blob_put(b, key, body, strlen(body), err, errlen);
	if (rc == 0)
		rc = blob_get(b, key, sizeof(body), &data, &len, err, errlen);
	if (rc == 0 && (len != strlen(body) || memcmp(data, body, len) != 0)) {
		gb_set_error(err, errlen, "%s gave back other bytes than were put in %s",
		             blob_describe(b), key);
		rc = -EIO;
	}
	free(data);
	if (rc == 0) {
		rc = blob_list(b, "probe/", found_probe, key, err, errlen);
		if (rc == 0) {
			gb_set_error(err, errlen, "%s does not list the object %s it just stored",
			             blob_describe(b), key);
			rc = -EIO;
		} else if (rc == 1) {
			rc = 0;
		}
	}
	if (rc == 0)
		printf("ok: %s stores, reads back and lists objects (probe %s)\n", blob_describe(b),
		       key);
	return rc;
}

/* See commands.h. */
int cli_cmd_objects(int argc, char **argv)
{
	const char *config = NULL, *out = NULL, *pos[3] = { NULL, NULL, NULL };
	struct blob_config cfg;
	struct blob_store *b = NULL;
	unsigned char *data = NULL;
	size_t len = 0;
	char err[1024] = "";
	FILE *f;
	int i, npos = 0, rc = 2;

	memset(&cfg, 0, sizeof(cfg));
	for (i = 1; i < argc; i++) {
		if ((!strcmp(argv[i], "--config") || !strcmp(argv[i], "-o")) && i + 1 < argc) {
			if (!strcmp(argv[i], "--config"))
				config = argv[++i];
			else
				out = argv[++i];
		} else if (argv[i][0] == '-' || npos == 3) {
			fprintf(stderr, "glassbox objects: unexpected argument %s\n\n%s", argv[i],
			        usage);
			goto out;
		} else {
			pos[npos++] = argv[i];
		}
	}
	if (!config || !pos[0] || (!strcmp(pos[0], "get") && npos != 2) ||
	    (!strcmp(pos[0], "put") && npos != 3) || (!strcmp(pos[0], "check") && npos != 1) ||
	    (!strcmp(pos[0], "ls") && npos > 2)) {
		fprintf(stderr, "%s", usage);
		goto out;
	}
	rc = 1;
	if (blob_config_load(config, &cfg, err, sizeof(err)) < 0 ||
	    blob_open(&cfg, &b, err, sizeof(err)) < 0)
		goto fail;
	if (!strcmp(pos[0], "check")) {
		if (check(b, err, sizeof(err)) != 0)
			goto fail;
	} else if (!strcmp(pos[0], "ls")) {
		if (blob_list(b, pos[1] ? pos[1] : "", print_key, NULL, err, sizeof(err)) != 0)
			goto fail;
	} else if (!strcmp(pos[0], "get")) {
		if (blob_get(b, pos[1], OBJECT_MAX_BYTES, &data, &len, err, sizeof(err)) != 0)
			goto fail;
		f = out ? fopen(out, "wb") : stdout;
		if (!f || fwrite(data, 1, len, f) != len || (out && fclose(f) != 0)) {
			gb_set_error(err, sizeof(err), "cannot write %s", out ? out : "stdout");
			goto fail;
		}
	} else if (!strcmp(pos[0], "put")) {
		if (gb_fs_read_file(pos[2], OBJECT_MAX_BYTES, &data, &len, err, sizeof(err)) != 0)
			goto fail;
		i = blob_put(b, pos[1], data, len, err, sizeof(err));
		if (i < 0)
			goto fail;
		printf(i == BLOB_EXISTS ? "exists: %s is kept as it is\n" : "stored: %s\n", pos[1]);
	} else {
		fprintf(stderr, "glassbox objects: unknown subcommand %s\n\n%s", pos[0], usage);
		rc = 2;
		goto out;
	}
	rc = 0;
	goto out;
fail:
	fprintf(stderr, "glassbox objects: %s\n", err);
out:
	free(data);
	blob_close(b);
	blob_config_wipe(&cfg);
	return rc;
}

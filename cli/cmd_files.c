/*
 * cmd_files.c - `glassbox files`: a tenant's upload area (evidence/files.h),
 * the only place browser_file_upload and browser_drop take files from.
 *
 *   glassbox files put FILE [--name NAME] [--tenant T] [--json]
 *   glassbox files list [--tenant T] [--json]
 *   glassbox files rm NAME [--tenant T]
 *
 * A file put there is stored as an artifact (sha256, MIME sniffed) and
 * recorded in the tenant's audit log (kind "upload_added", naming the
 * artifact); a file removed is recorded too ("upload_removed").
 */
#include "cli/commands.h"

#include "common/fs.h"
#include "common/util.h"
#include "evidence/audit.h"
#include "evidence/evidence.h"
#include "evidence/files.h"

#include <jansson.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Appends one audit record of kind with body (taken) and artifacts
 * (taken, may be NULL). Returns 0, or -1 with the reason printed. */
static int record(const char *data_dir, const char *tenant, const char *kind, json_t *body,
                  json_t *artifacts)
{
	struct evid_audit_entry e = { 0 };
	struct evid_audit *a = NULL;
	struct passwd *pw = getpwuid(getuid());
	char err[1024];
	int rc = -1;

	if (evid_audit_open(data_dir, &a, err, sizeof(err)) < 0)
		goto out;
	e.tenant = tenant;
	e.kind = kind;
	e.actor.tenant = tenant;
	e.actor.user = pw ? pw->pw_name : NULL;
	e.actor.token = "glassbox files";
	e.body = body;
	e.artifacts = artifacts;
	if (evid_audit_append(a, &e, NULL, err, sizeof(err)) < 0)
		goto out;
	rc = 0;
out:
	if (rc < 0)
		fprintf(stderr, "glassbox: the audit record was not written: %s\n", err);
	evid_audit_close(a);
	json_decref(body);
	json_decref(artifacts);
	return rc;
}

/* The last path component of path. */
static const char *base_name(const char *path)
{
	const char *slash = strrchr(path, '/');

	return slash ? slash + 1 : path;
}

static int cmd_put(struct evid_store *s, const char *data_dir, const char *tenant, const char *file,
                   const char *name, int as_json)
{
	struct evid_upload u;
	unsigned char *data = NULL;
	char err[1024];
	size_t len = 0;
	int rc = 1;

	if (!name)
		name = base_name(file);
	if (!gb_fs_name_is_safe(name)) {
		fprintf(stderr,
		        "glassbox: '%s' is not a file name of the upload area (1..64 of A-Z a-z "
		        "0-9 . _ -): give one with --name\n",
		        name);
		return 2;
	}
	if (gb_fs_read_file(file, EVID_UPLOAD_MAX_BYTES, &data, &len, err, sizeof(err)) < 0) {
		fprintf(stderr, "glassbox: cannot put %s: %s (at most %u bytes)\n", file, err,
		        EVID_UPLOAD_MAX_BYTES);
		return 1;
	}
	if (evid_upload_put(s, tenant, name, data, len, &u, err, sizeof(err)) < 0) {
		fprintf(stderr, "glassbox: %s\n", err);
		goto out;
	}
	if (record(data_dir, tenant, "upload_added",
	           json_pack("{s:s, s:s, s:I, s:s}", "name", u.name, "sha256", u.sha256, "size",
	                     (json_int_t)u.size_bytes, "mime", u.mime),
	           json_pack("[o]", evid_artifact_json(EVID_KIND_UPLOAD, u.mime, &u.ref, 1))) < 0)
		goto out;
	if (as_json)
		printf("{\"name\": \"%s\", \"sha256\": \"%s\", \"size\": %zu, \"mime\": \"%s\"}\n",
		       u.name, u.sha256, u.size_bytes, u.mime);
	else
		printf("%s (%zu bytes, %s, sha256 %s) is in the upload area of tenant %s\n", u.name,
		       u.size_bytes, u.mime, u.sha256, tenant);
	rc = 0;
out:
	free(data);
	return rc;
}

static int cmd_list(struct evid_store *s, const char *tenant, int as_json)
{
	json_t *list = evid_upload_list(s, tenant);
	size_t i;

	if (!list) {
		fprintf(stderr, "glassbox: out of memory\n");
		return 1;
	}
	if (as_json) {
		json_dumpf(list, stdout, JSON_INDENT(2));
		printf("\n");
	} else if (!json_array_size(list)) {
		printf("the upload area of tenant %s is empty: add a file with glassbox files put "
		       "FILE\n",
		       tenant);
	} else {
		printf("%-32s %10s  %-24s %s\n", "NAME", "BYTES", "MIME", "SHA256");
	}
	for (i = 0; !as_json && i < json_array_size(list); i++) {
		json_t *e = json_array_get(list, i);

		printf("%-32s %10lld  %-24s %s\n", json_string_value(json_object_get(e, "name")),
		       (long long)json_integer_value(json_object_get(e, "size")),
		       json_string_value(json_object_get(e, "mime")),
		       json_string_value(json_object_get(e, "sha256")));
	}
	json_decref(list);
	return 0;
}

static int cmd_rm(struct evid_store *s, const char *data_dir, const char *tenant, const char *name)
{
	char err[1024];

	if (evid_upload_remove(s, tenant, name, err, sizeof(err)) < 0) {
		fprintf(stderr, "glassbox: %s\n", err);
		return 1;
	}
	if (record(data_dir, tenant, "upload_removed", json_pack("{s:s}", "name", name), NULL) < 0)
		return 1;
	printf("%s removed from the upload area of tenant %s (its artifact stays)\n", name, tenant);
	return 0;
}

int cli_cmd_files(int argc, char **argv, const char *data_dir)
{
	const char *tenant = "local";
	const char *name = NULL;
	const char *arg = NULL;
	struct evid_store *s = NULL;
	char err[1024];
	int as_json = 0;
	int rc = 2;
	int i;

	if (argc < 2) {
		cli_help_command(stderr, "files");
		return 2;
	}
	for (i = 2; i < argc; i++) {
		const char *a = argv[i];
		const char *v = i + 1 < argc ? argv[i + 1] : NULL;

		if (!strcmp(a, "--tenant") && v) {
			tenant = v;
			i++;
		} else if (!strcmp(a, "--name") && v) {
			name = v;
			i++;
		} else if (!strcmp(a, "--json")) {
			as_json = 1;
		} else if (a[0] != '-' && !arg) {
			arg = a;
		} else {
			fprintf(stderr, "glassbox: unknown or incomplete option '%s'\n\n", a);
			cli_help_command(stderr, "files");
			return 2;
		}
	}
	if (!gb_fs_name_is_safe(tenant)) {
		fprintf(stderr, "glassbox: \"%s\" is not a valid tenant name\n", tenant);
		return 2;
	}
	if (strcmp(argv[1], "put") && strcmp(argv[1], "list") && strcmp(argv[1], "rm")) {
		fprintf(stderr, "glassbox: unknown files command '%s'\n\n", argv[1]);
		cli_help_command(stderr, "files");
		return 2;
	}
	if (strcmp(argv[1], "list") != 0 && !arg) {
		fprintf(stderr, "glassbox: files %s needs %s\n", argv[1],
		        !strcmp(argv[1], "put") ? "the FILE to put" : "the NAME to remove");
		return 2;
	}
	if (gb_fs_mkdirs_abs(data_dir, err, sizeof(err)) < 0 ||
	    evid_store_open_err(data_dir, &s, err, sizeof(err)) < 0) {
		fprintf(stderr, "glassbox: %s\n", err);
		return 1;
	}
	if (!strcmp(argv[1], "put"))
		rc = cmd_put(s, data_dir, tenant, arg, name, as_json);
	else if (!strcmp(argv[1], "list"))
		rc = cmd_list(s, tenant, as_json);
	else
		rc = cmd_rm(s, data_dir, tenant, arg);
	evid_store_close(s);
	return rc;
}

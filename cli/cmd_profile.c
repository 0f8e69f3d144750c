/*
 * cmd_profile.c - `glassbox profile list | show | create | delete |
 * revoke | export | import`: a tenant's encrypted browser profiles
 * (profiles/profiles.h, docs/profiles.md) from the command line.
 *
 * Every command is scoped to one tenant (--tenant, default "local", the
 * tenant of `glassbox mcp`) and, except list, one user (--user, default
 * "default"). Revoke, export and import are recorded in the tenant's
 * audit trail. An export carries the profile's cookies: it is written to
 * a new 0600 file or to stdout, never anywhere else.
 *
 * --store CONFIG reaches the profiles of replicas: the metadata in the
 * config's store.postgres, the sealed versions in its object_store.
 */
#include "actions/actions.h"
#include "blob/blob.h"
#include "cli/commands.h"
#include "common/fs.h"
#include "common/util.h"
#include "evidence/audit.h"
#include "profiles/profiles.h"

#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define MAX_ORIGINS 64
#define IMPORT_MAX_BYTES (64u * 1024u * 1024u)

struct args {
	const char *data_dir;
	const char *cmd;
	const char *name;
	const char *file;
	const char *tenant;
	const char *user;
	const char *out;
	const char *chromium;
	const char *store; /* a serve config: its store.postgres and object_store */
	const char *origins[MAX_ORIGINS + 1];
	size_t n_origins;
	long long ttl_s;
	int json;
};

static void usage(FILE *out)
{
	fprintf(
	    out,
	    "usage: glassbox profile COMMAND [--tenant T] [--user U] [--data-dir DIR]\n"
	    "                                [--store CONFIG]\n"
	    "\n"
	    "  list [--json]                   the tenant's profiles (of --user, if given)\n"
	    "  show NAME                       one profile's metadata (JSON)\n"
	    "  create NAME [--ttl SECONDS]     an empty profile; --ttl: it expires then\n"
	    "  delete NAME                     its sealed state and metadata\n"
	    "  revoke NAME                     destroy its data key: it can never be opened again\n"
	    "  export NAME [-o FILE] [--origin URL]...\n"
	    "                                  Playwright storageState JSON (cookies and\n"
	    "                                  localStorage) to a new 0600 FILE or stdout\n"
	    "  import NAME FILE|-              a storageState into the profile (created if\n"
	    "                                  missing), sealed as a new version\n"
	    "\n"
	    "--tenant defaults to \"local\" (the tenant of `glassbox mcp`), --user to\n"
	    "\"default\". export and import run Chromium (--chromium PATH) with no network.\n"
	    "--store CONFIG: the replicas' profiles, from the store.postgres and object_store\n"
	    "of their serve config (every replica needs this data dir's master key).\n");
}

static int parse(int argc, char **argv, const char *default_data_dir, struct args *a)
{
	int i;

	memset(a, 0, sizeof(*a));
	a->data_dir = default_data_dir;
	a->tenant = "local";
	a->chromium = getenv("GLASSBOX_CHROMIUM");
	for (i = 1; i < argc; i++) {
		const char *o = argv[i];
		const char *v = i + 1 < argc ? argv[i + 1] : NULL;

		if (!strcmp(o, "--data-dir") && v) {
			a->data_dir = v;
			i++;
		} else if (!strcmp(o, "--tenant") && v) {
			a->tenant = v;
			i++;
		} else if (!strcmp(o, "--user") && v) {
			a->user = v;
			i++;
		} else if ((!strcmp(o, "-o") || !strcmp(o, "--out")) && v) {
			a->out = v;
			i++;
		} else if (!strcmp(o, "--store") && v) {
			a->store = v;
			i++;
		} else if (!strcmp(o, "--chromium") && v) {
			a->chromium = v;
			i++;
		} else if (!strcmp(o, "--ttl") && v) {
			char *end = NULL;

			a->ttl_s = strtoll(v, &end, 10);
			if (!end || *end || a->ttl_s <= 0) {
				fprintf(stderr,
				        "glassbox profile: --ttl takes a number of seconds > 0\n");
				return -1;
			}
			i++;
		} else if (!strcmp(o, "--origin") && v) {
			if (a->n_origins == MAX_ORIGINS) {
				fprintf(stderr, "glassbox profile: at most %d --origin\n",
				        MAX_ORIGINS);
				return -1;
			}
			a->origins[a->n_origins++] = v;
			i++;
		} else if (!strcmp(o, "--json")) {
			a->json = 1;
		} else if (o[0] == '-' && strcmp(o, "-") != 0) {
			fprintf(stderr, "glassbox profile: unknown or incomplete option '%s'\n\n",
			        o);
			usage(stderr);
			return -1;
		} else if (!a->cmd) {
			a->cmd = o;
		} else if (!a->name) {
			a->name = o;
		} else if (!a->file) {
			a->file = o;
		} else {
			fprintf(stderr, "glassbox profile: unexpected argument '%s'\n\n", o);
			usage(stderr);
			return -1;
		}
	}
	return 0;
}

/* Appends one record to the tenant's audit trail; the action fails when
 * it cannot be recorded (exports and revocations must be). */
static int record(const struct args *a, const char *kind, json_t *body)
{
	struct evid_audit *audit = NULL;
	struct evid_audit_entry e = { 0 };
	char err[1024] = "";
	int rc;

	rc = evid_audit_open(a->data_dir, &audit, err, sizeof(err));
	if (rc == 0) {
		e.tenant = a->tenant;
		e.kind = kind;
		e.actor.tenant = a->tenant;
		e.actor.user = getenv("USER");
		e.actor.token = "cli";
		e.body = body;
		rc = evid_audit_append(audit, &e, NULL, err, sizeof(err));
	}
	if (rc < 0)
		fprintf(stderr, "glassbox profile: cannot record this in the audit trail: %s\n",
		        err);
	evid_audit_close(audit);
	json_decref(body);
	return rc;
}

static void print_json(json_t *j)
{
	char *text = json_dumps(j, JSON_INDENT(2) | JSON_SORT_KEYS);

	if (text)
		printf("%s\n", text);
	free(text);
}

static int cmd_list(const struct args *a)
{
	json_t *list = NULL;
	json_t *p;
	char err[1024] = "";
	size_t i;

	if (prof_list(a->data_dir, a->tenant, a->user, &list, err, sizeof(err)) < 0) {
		fprintf(stderr, "glassbox profile list: %s\n", err);
		return 1;
	}
	if (a->json) {
		print_json(list);
	} else {
		printf("%-24s %-16s %7s %10s  %s\n", "NAME", "USER", "VERSION", "SIZE", "STATE");
		json_array_foreach(list, i, p) printf(
		    "%-24s %-16s %7lld %10lld  %s\n", json_string_value(json_object_get(p, "name")),
		    json_string_value(json_object_get(p, "user")),
		    (long long)json_integer_value(json_object_get(p, "version")),
		    (long long)json_integer_value(json_object_get(p, "size")),
		    json_is_true(json_object_get(p, "revoked"))    ? "revoked"
		    : !json_is_null(json_object_get(p, "held_by")) ? "in use"
		                                                   : "ready");
	}
	json_decref(list);
	return 0;
}

/* Writes text to a new 0600 file (refusing to replace one) or stdout. */
static int write_secret_output(const char *path, const char *text)
{
	size_t len = strlen(text);
	int fd = STDOUT_FILENO;
	int rc = 0;

	if (path && strcmp(path, "-") != 0) {
		fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
		if (fd < 0) {
			fprintf(stderr, "glassbox profile export: cannot create %s: %s%s\n", path,
			        strerror(errno),
			        errno == EEXIST
			            ? " (an export is never written over a file: choose a "
			              "new name)"
			            : "");
			return -1;
		}
	}
	if (write(fd, text, len) != (ssize_t)len || write(fd, "\n", 1) != 1 ||
	    (fd != STDOUT_FILENO && fsync(fd) != 0)) {
		fprintf(stderr, "glassbox profile export: cannot write %s: %s\n",
		        path ? path : "stdout", strerror(errno));
		rc = -1;
	}
	if (fd != STDOUT_FILENO)
		close(fd);
	return rc;
}

/* Runs the CLI-only tool (an act_internal_tool_find name) through the
 * pipeline in a session of the tenant with no browser of its own: the
 * gate, the ledger and the audit record apply as to any tool. args is
 * taken; secret_in borrowed; *secret_out (may be NULL) the tool's secret
 * result; *version (may be NULL) the version it reports. Returns 0, or -1 after saying why on stderr (prefix: the
 * command). */
static int run_tool(const struct args *a, const char *prefix, const char *tool, json_t *args,
                    json_t *secret_in, json_t **secret_out, json_int_t *version)
{
	struct act_config cfg;
	struct act_session *s = NULL;
	struct act_call call;
	json_t *result = NULL;
	json_t *sc;
	char err[1024] = "";
	int rc = -1;

	memset(&cfg, 0, sizeof(cfg));
	cfg.data_dir = a->data_dir;
	cfg.tenant = a->tenant;
	cfg.chromium_path = a->chromium;
	cfg.headless = 1;
	cfg.client_name = "glassbox profile";
	memset(&call, 0, sizeof(call));
	call.def = act_internal_tool_find(tool);
	call.args = args;
	call.secret_in = secret_in;
	call.client_name = "glassbox profile";
	if (act_session_new(&cfg, &s, err, sizeof(err)) < 0) {
		fprintf(stderr, "%s: %s\n", prefix, err);
		goto out;
	}
	result = act_session_run(s, &call);
	sc = json_object_get(result, "structuredContent");
	if (version)
		*version = json_integer_value(json_object_get(sc, "version"));
	if (json_is_true(json_object_get(sc, "ok")))
		rc = 0;
	else
		fprintf(stderr, "%s: %s\n", prefix,
		        gb_or(json_string_value(
		                  json_object_get(json_object_get(sc, "error"), "message")),
		              "failed"));
out:
	if (secret_out)
		*secret_out = call.secret_out;
	else
		json_decref(call.secret_out);
	act_session_free(s);
	json_decref(result);
	json_decref(args);
	return rc;
}

static int cmd_export(const struct args *a, const char *user)
{
	json_t *state = NULL;
	json_t *origins = json_array();
	char *text = NULL;
	size_t i;
	int rc = 1;

	for (i = 0; i < a->n_origins; i++)
		json_array_append_new(origins, json_string(a->origins[i]));
	if (run_tool(a, "glassbox profile export", "glassbox_profile_export",
	             json_pack("{s:s, s:s, s:o, s:s}", "profile", a->name, "user", user, "origins",
	                       origins, "to", a->out && strcmp(a->out, "-") ? a->out : "stdout"),
	             NULL, &state, NULL) < 0)
		goto out;
	text = json_dumps(state, JSON_INDENT(2));
	if (text && write_secret_output(a->out, text) == 0)
		rc = 0;
	if (rc == 0 && a->out && strcmp(a->out, "-"))
		fprintf(stderr,
		        "exported profile %s of user %s: %zu cookie(s), %zu origin(s) -> %s\n",
		        a->name, user, json_array_size(json_object_get(state, "cookies")),
		        json_array_size(json_object_get(state, "origins")), a->out);
out:
	if (text) {
		memset(text, 0, strlen(text));
		free(text);
	}
	json_decref(state);
	return rc;
}

static int cmd_import(const struct args *a, const char *user)
{
	unsigned char *text = NULL;
	size_t len = 0;
	json_t *state = NULL;
	json_error_t jerr;
	json_int_t version = 0;
	char err[1024] = "";
	int rc = 1;

	if (!a->file) {
		fprintf(stderr, "glassbox profile import: give the storageState file (or - for "
		                "stdin)\n");
		return 2;
	}
	if (!strcmp(a->file, "-"))
		state = json_loadf(stdin, JSON_REJECT_DUPLICATES, &jerr);
	else if (gb_fs_read_file(a->file, IMPORT_MAX_BYTES, &text, &len, err, sizeof(err)) == 0)
		state = json_loadb((const char *)text, len, JSON_REJECT_DUPLICATES, &jerr);
	else {
		fprintf(stderr, "glassbox profile import: %s\n", err);
		return 1;
	}
	if (!state) {
		fprintf(stderr, "glassbox profile import: %s is not JSON: %s (line %d)\n", a->file,
		        jerr.text, jerr.line);
		goto out;
	}
	if (run_tool(a, "glassbox profile import", "glassbox_profile_import",
	             json_pack("{s:s, s:s}", "profile", a->name, "user", user), state, NULL,
	             &version) < 0)
		goto out;
	printf("imported into profile %s of user %s: version %lld\n", a->name, user,
	       (long long)version);
	rc = 0;
out:
	if (text) {
		memset(text, 0, len);
		free(text);
	}
	json_decref(state);
	return rc;
}

/* Runs the command of the arguments (the store and the profiles' object
 * store configured). Returns the exit status. */
static int run_command(const struct args *in)
{
	struct args a = *in;
	struct prof_info info;
	const char *user;
	json_t *shown;
	char err[1024] = "";

	if (!a.cmd || !strcmp(a.cmd, "help")) {
		usage(a.cmd ? stdout : stderr);
		return a.cmd ? 0 : 2;
	}
	user = a.user ? a.user : "default";
	if (!strcmp(a.cmd, "list"))
		return cmd_list(&a);
	if (strcmp(a.cmd, "show") && strcmp(a.cmd, "create") && strcmp(a.cmd, "delete") &&
	    strcmp(a.cmd, "revoke") && strcmp(a.cmd, "export") && strcmp(a.cmd, "import")) {
		fprintf(stderr, "glassbox profile: unknown command '%s'\n\n", a.cmd);
		usage(stderr);
		return 2;
	}
	if (!a.name) {
		fprintf(stderr, "glassbox profile %s: give the profile's name\n", a.cmd);
		return 2;
	}
	if (!strcmp(a.cmd, "show")) {
		if (prof_get(a.data_dir, a.tenant, user, a.name, &info, err, sizeof(err)) < 0)
			goto failed;
		shown = prof_info_json(&info);
		print_json(shown);
		json_decref(shown);
		return 0;
	}
	if (!strcmp(a.cmd, "create")) {
		if (prof_create(a.data_dir, a.tenant, user, a.name, a.ttl_s, &info, err,
		                sizeof(err)) < 0)
			goto failed;
		printf("created profile %s of user %s (tenant %s)\n", a.name, user, a.tenant);
		return 0;
	}
	if (!strcmp(a.cmd, "delete")) {
		if (prof_delete(a.data_dir, a.tenant, user, a.name, err, sizeof(err)) < 0)
			goto failed;
		printf("deleted profile %s of user %s\n", a.name, user);
		return 0;
	}
	if (!strcmp(a.cmd, "revoke")) {
		if (prof_revoke(a.data_dir, a.tenant, user, a.name, err, sizeof(err)) < 0)
			goto failed;
		record(&a, EVID_AUDIT_PROFILE_REVOKED,
		       json_pack("{s:s, s:s}", "profile", a.name, "user", user));
		printf("revoked profile %s of user %s: its data key is destroyed\n", a.name, user);
		return 0;
	}
	if (!strcmp(a.cmd, "export"))
		return cmd_export(&a, user);
	return cmd_import(&a, user);
failed:
	fprintf(stderr, "glassbox profile %s: %s\n", a.cmd, err);
	return 1;
}

int cli_cmd_profile(int argc, char **argv, const char *default_data_dir)
{
	struct blob_store *objects = NULL;
	struct args a;
	int rc;

	if (parse(argc, argv, default_data_dir, &a) < 0)
		return 2;
	if (a.store && a.cmd && strcmp(a.cmd, "help") != 0 &&
	    cli_use_replicas_store("glassbox profile", a.store, &objects) < 0) {
		blob_close(objects);
		return 2;
	}
	rc = run_command(&a);
	prof_use_object_store(NULL);
	blob_close(objects);
	return rc;
}

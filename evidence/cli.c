/*
 * cli.c - `glassbox audit ...` and `glassbox report ...`: argument
 * parsing and output for people; the work is done by the library
 * functions of audit.h. Exit statuses: 0 success, 1 the chain did not
 * verify, 2 usage error, 3 could not run (I/O, missing key, no log).
 */
#include "evidence/audit.h"
#include "evidence/evidence-private.h"
#include "evidence/evidence.h"
#include "evidence/ship.h"

#include "blob/blob.h"
#include "store/store.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define EXIT_VERIFY_FAILED 1
#define EXIT_USAGE 2
#define EXIT_CANNOT_RUN 3
#define PATH_BYTES 4096

static const char audit_usage[] =
    "usage: glassbox audit verify [--tenant T] [--pubkey FILE] [--json]\n"
    "       glassbox audit verify --store CONFIG [--tenant T] [--pubkey FILE] [--json]\n"
    "       glassbox audit export-key [-o FILE]\n"
    "       glassbox audit purge --tenant T --days N\n"
    "\n"
    "  verify      check every tenant's audit chain (or one): order, hashes, signatures,\n"
    "              and that each artifact a record references exists and is unchanged;\n"
    "              names the first record that fails and exits 1; with --store, the\n"
    "              merged trail of every replica in the object store CONFIG names,\n"
    "              naming a missing or altered segment\n"
    "  export-key  write the public key reviewers verify with (stdout by default)\n"
    "  purge       remove the tenant's records and artifacts older than N days; a signed\n"
    "              purge record is written first so the shortened chain still verifies\n";

static const char report_usage[] =
    "usage: glassbox report --session ID [--tenant T] -o FILE [--pubkey FILE]\n"
    "       glassbox report --tenant T [--since YYYY-MM-DD] -o FILE [--pubkey FILE]\n"
    "\n"
    "  writes one self-contained HTML file: a timeline of actions with screenshots,\n"
    "  approvals, refusals and blocked requests, headed by whether the chain verified\n";

/* Options shared by the subcommands. */
struct cli_opts {
	const char *tenant;
	const char *pubkey_file;
	const char *out;
	const char *session;
	const char *since;
	const char *days;
	const char *store;
	int json;
};

/* Parses --name value pairs from argv[first..]. 0 or EXIT_USAGE. */
static int parse_opts(int argc, char **argv, int first, struct cli_opts *o, const char *usage)
{
	const char *a;
	const char *v;
	int i;

	int rc = 0;

	memset(o, 0, sizeof(*o));
	for (i = first; i < argc && rc == 0; i++) {
		a = argv[i];
		v = i + 1 < argc ? argv[i + 1] : NULL;
		if (!strcmp(a, "--json")) {
			o->json = 1;
			continue;
		}
		if (!v) {
			fprintf(stderr, "glassbox: %s needs a value\n\n%s", a, usage);
			rc = EXIT_USAGE;
			break;
		}
		if (!strcmp(a, "--tenant"))
			o->tenant = v;
		else if (!strcmp(a, "--pubkey"))
			o->pubkey_file = v;
		else if (!strcmp(a, "-o") || !strcmp(a, "--output"))
			o->out = v;
		else if (!strcmp(a, "--session"))
			o->session = v;
		else if (!strcmp(a, "--since"))
			o->since = v;
		else if (!strcmp(a, "--days"))
			o->days = v;
		else if (!strcmp(a, "--store"))
			o->store = v;
		else {
			fprintf(stderr, "glassbox: unknown option '%s'\n\n%s", a, usage);
			rc = EXIT_USAGE;
		}
		i++;
	}
	return rc;
}

/* Loads --pubkey when given. 0, or EXIT_CANNOT_RUN after printing why. */
static int load_pubkey(const struct cli_opts *o, unsigned char pk[32], int *have)
{
	char err[1024];

	*have = 0;
	if (!o->pubkey_file)
		return 0;
	if (evid_keys_load_public(o->pubkey_file, pk, NULL, err, sizeof(err)) != 0) {
		fprintf(stderr, "glassbox: %s\n", err);
		return EXIT_CANNOT_RUN;
	}
	*have = 1;
	return 0;
}

/* Verifies one tenant and prints the outcome; returns its exit status. */
static int verify_one(const char *data_dir, const char *tenant, const unsigned char *pk, int json,
                      json_t *all)
{
	struct evid_verify_report rep;
	char err[1024];
	char line[2048];

	if (evid_audit_verify(data_dir, tenant, pk, &rep, err, sizeof(err)) != 0) {
		fprintf(stderr, "glassbox: %s: cannot verify: %s\n", tenant, err);
		if (json)
			json_array_append_new(all, json_pack("{s:s, s:b, s:s}", "tenant", tenant,
			                                     "ok", 0, "error", err));
		return EXIT_CANNOT_RUN;
	}
	if (json) {
		json_array_append_new(all, evid_verify_report_json(tenant, &rep));
	} else {
		evid_verify_report_format(tenant, &rep, line, sizeof(line));
		printf("%s\n", line);
	}
	return rep.ok ? 0 : EXIT_VERIFY_FAILED;
}

/* 1 when path is a directory. */
static int is_dir(const char *path)
{
	struct stat st;

	return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

/* Worst of two exit statuses (cannot run > failed > ok). */
static int worse(int a, int b)
{
	return a > b ? a : b;
}

/* evid_merged_cb: prints (or collects) one chain's outcome. */
struct merged_out {
	int json;
	json_t *all;
	int count;
};

static void print_merged(const struct evid_merged_result *r, void *user)
{
	struct merged_out *m = user;

	m->count++;
	if (m->json) {
		json_array_append_new(
		    m->all, json_pack("{s:s, s:s, s:b, s:I, s:I, s:I, s:s, s:s}", "tenant",
		                      r->tenant, "replica", r->replica, "ok", r->ok, "records",
		                      (json_int_t)r->records, "segments", (json_int_t)r->segments,
		                      "artifacts", (json_int_t)r->artifacts, "segment", r->segment,
		                      "reason", r->reason));
		return;
	}
	if (r->ok)
		printf("%s (replica %s): chain verified: %llu records in %zu segments, %llu "
		       "artifacts\n",
		       r->tenant, r->replica, (unsigned long long)r->records, r->segments,
		       (unsigned long long)r->artifacts);
	else
		printf("%s (replica %s): FAILED: %s\n", r->tenant, r->replica, r->reason);
}

/* Opens the store of config's "store": {"postgres": URL}, whose audit
 * segment table the replicas advanced; *db stays NULL when the config
 * names none (each replica then had its own). 0, or EXIT_CANNOT_RUN
 * after printing why. */
static int open_segment_table(const char *config, const char *data_dir, struct store **db)
{
	struct store_location loc = { NULL, NULL };
	json_t *root = json_load_file(config, 0, NULL);
	const char *url =
	    json_string_value(json_object_get(json_object_get(root, "store"), "postgres"));
	char err[1024];
	int rc = 0;

	*db = NULL;
	if (!url)
		goto out;
	loc.postgres = url;
	if (store_configure(&loc, err, sizeof(err)) != 0 ||
	    store_open(data_dir, db, err, sizeof(err)) != 0) {
		fprintf(stderr, "glassbox: cannot open the store of %s: %s\n", config, err);
		rc = EXIT_CANNOT_RUN;
	}
out:
	json_decref(root);
	return rc;
}

/* audit verify --store CONFIG: the merged trail in the object store. */
static int verify_merged(const struct cli_opts *o, const unsigned char *given_pk,
                         const char *data_dir)
{
	struct merged_out m = { o->json, json_array(), 0 };
	struct blob_config cfg;
	struct blob_store *b = NULL;
	struct store *db = NULL;
	unsigned char pk[32];
	char err[1024], keyfile[PATH_BYTES];
	const char *tmp = getenv("TMPDIR");
	int rc = EXIT_CANNOT_RUN;

	if (given_pk) {
		memcpy(pk, given_pk, 32);
	} else {
		snprintf(keyfile, sizeof(keyfile), "%s/keys/audit.pub", data_dir);
		if (evid_keys_load_public(keyfile, pk, NULL, err, sizeof(err)) != 0) {
			fprintf(stderr, "glassbox: %s (give the replicas' key with --pubkey)\n",
			        err);
			goto out;
		}
	}
	if (blob_config_load(o->store, &cfg, err, sizeof(err)) != 0 ||
	    blob_open(&cfg, &b, err, sizeof(err)) != 0) {
		blob_config_wipe(&cfg);
		fprintf(stderr, "glassbox: %s\n", err);
		goto out;
	}
	blob_config_wipe(&cfg);
	if (open_segment_table(o->store, data_dir, &db) != 0)
		goto out;
	rc = evid_merged_verify(b, db, o->tenant, pk, tmp && tmp[0] ? tmp : "/tmp", print_merged,
	                        &m, err, sizeof(err));
	if (rc < 0) {
		fprintf(stderr, "glassbox: cannot verify the merged trail: %s\n", err);
		rc = EXIT_CANNOT_RUN;
	} else {
		rc = rc ? EXIT_VERIFY_FAILED : 0;
	}
	if (o->json) {
		json_dumpf(m.all, stdout, JSON_INDENT(2));
		printf("\n");
	}
out:
	json_decref(m.all);
	blob_close(b);
	store_close(db);
	return rc;
}

static int cmd_verify(int argc, char **argv, const char *data_dir)
{
	struct cli_opts o;
	unsigned char pk[32];
	char tenants[PATH_BYTES];
	char audit_dir[PATH_BYTES];
	struct dirent *de;
	json_t *all = json_array();
	DIR *d = NULL;
	int have = 0;
	int count = 0;
	int rc;

	rc = parse_opts(argc, argv, 2, &o, audit_usage);
	if (rc == 0)
		rc = load_pubkey(&o, pk, &have);
	if (rc != 0)
		goto out;
	if (o.store) {
		rc = verify_merged(&o, have ? pk : NULL, data_dir);
		goto out;
	}
	if (o.tenant) {
		rc = verify_one(data_dir, o.tenant, have ? pk : NULL, o.json, all);
		count = 1;
		goto print;
	}
	snprintf(tenants, sizeof(tenants), "%s/tenants", data_dir);
	d = opendir(tenants);
	while (d) {
		de = readdir(d);
		if (!de)
			break;
		if (!gb_fs_name_is_safe(de->d_name) ||
		    evid_audit_dir_path(data_dir, de->d_name, audit_dir, sizeof(audit_dir), NULL,
		                        0) ||
		    !is_dir(audit_dir))
			continue;
		rc = worse(rc, verify_one(data_dir, de->d_name, have ? pk : NULL, o.json, all));
		count++;
	}
	if (!count) {
		fprintf(stderr,
		        "glassbox: no audit logs under %s/tenants: nothing to verify (check "
		        "--data-dir)\n",
		        data_dir);
		rc = EXIT_CANNOT_RUN;
	}
print:
	if (o.json) {
		json_dumpf(all, stdout, JSON_INDENT(2));
		printf("\n");
	}
out:
	if (d)
		closedir(d);
	json_decref(all);
	return rc;
}

static int cmd_export_key(int argc, char **argv, const char *data_dir)
{
	struct cli_opts o;
	char err[1024];
	int rc;

	rc = parse_opts(argc, argv, 2, &o, audit_usage);
	if (rc != 0)
		goto out;
	if (evid_keys_export_public(data_dir, o.out, err, sizeof(err)) != 0) {
		fprintf(stderr, "glassbox: cannot export the audit public key: %s\n", err);
		rc = EXIT_CANNOT_RUN;
		goto out;
	}
	if (o.out && strcmp(o.out, "-") != 0)
		fprintf(stderr, "glassbox: audit public key written to %s\n", o.out);
out:
	return rc;
}

static int cmd_purge(int argc, char **argv, const char *data_dir)
{
	struct cli_opts o;
	struct evid_audit *a = NULL;
	struct evid_purge_report rep;
	char err[1024];
	char *end = NULL;
	unsigned long days = 0;
	int rc;

	rc = parse_opts(argc, argv, 2, &o, audit_usage);
	if (rc != 0)
		goto out;
	if (o.days)
		days = strtoul(o.days, &end, 10);
	if (!o.tenant || !o.days || !end || *end || days < 1 || days > 365000) {
		fprintf(stderr,
		        "glassbox: purge needs --tenant T and --days N (N a whole number of "
		        "days, 1 or more)\n\n%s",
		        audit_usage);
		rc = EXIT_USAGE;
		goto out;
	}
	if (evid_audit_open(data_dir, &a, err, sizeof(err)) != 0 ||
	    evid_audit_purge(a, o.tenant, (unsigned)days, &rep, err, sizeof(err)) != 0) {
		fprintf(stderr, "glassbox: cannot purge %s: %s\n", o.tenant, err);
		rc = EXIT_CANNOT_RUN;
		goto out;
	}
	if (!rep.purge_seq)
		printf("%s: nothing older than %s to purge\n", o.tenant, rep.cutoff);
	else
		printf(
		    "%s: purged %llu records in %llu day files and %llu artifacts from before %s "
		    "(purge record %llu)\n",
		    o.tenant, (unsigned long long)rep.records_removed,
		    (unsigned long long)rep.files_removed,
		    (unsigned long long)rep.artifacts_removed, rep.cutoff,
		    (unsigned long long)rep.purge_seq);
out:
	evid_audit_close(a);
	return rc;
}

int evid_cli_audit(int argc, char **argv, const char *data_dir)
{
	const char *sub = argc > 1 ? argv[1] : NULL;
	int rc = EXIT_USAGE;

	if (!data_dir || !data_dir[0])
		fprintf(stderr, "glassbox: no data dir: give --data-dir\n");
	else if (!sub)
		fputs(audit_usage, stderr);
	else if (!strcmp(sub, "help") || !strcmp(sub, "--help") || !strcmp(sub, "-h"))
		rc = fputs(audit_usage, stdout) < 0 ? EXIT_CANNOT_RUN : 0;
	else if (!strcmp(sub, "verify"))
		rc = cmd_verify(argc, argv, data_dir);
	else if (!strcmp(sub, "export-key"))
		rc = cmd_export_key(argc, argv, data_dir);
	else if (!strcmp(sub, "purge"))
		rc = cmd_purge(argc, argv, data_dir);
	else
		fprintf(stderr, "glassbox: unknown audit command '%s'\n\n%s", sub, audit_usage);
	return rc;
}

int evid_cli_report(int argc, char **argv, const char *data_dir)
{
	struct cli_opts o;
	struct evid_report_opts ro;
	struct evid_verify_report vrep;
	unsigned char pk[32];
	char err[1024];
	int have = 0;
	int rc;

	if (argc > 1 && (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h"))) {
		rc = fputs(report_usage, stdout) < 0 ? EXIT_CANNOT_RUN : 0;
		goto out;
	}
	rc = parse_opts(argc, argv, 1, &o, report_usage);
	if (rc != 0)
		goto out;
	if ((!o.session && !o.tenant) || !o.out || !data_dir || !data_dir[0]) {
		fprintf(stderr,
		        "glassbox: report needs --session ID or --tenant T, and -o FILE\n\n%s",
		        report_usage);
		rc = EXIT_USAGE;
		goto out;
	}
	rc = load_pubkey(&o, pk, &have);
	if (rc != 0)
		goto out;
	memset(&ro, 0, sizeof(ro));
	ro.tenant = o.tenant;
	ro.session_id = o.session;
	ro.since = o.since;
	ro.pubkey = have ? pk : NULL;
	ro.verified = &vrep;
	if (evid_report_write(data_dir, &ro, o.out, err, sizeof(err)) != 0) {
		fprintf(stderr, "glassbox: cannot write the report: %s\n", err);
		rc = EXIT_CANNOT_RUN;
		goto out;
	}
	fprintf(stderr, "glassbox: report written to %s; the chain %s\n", o.out,
	        vrep.ok ? "verified" : "did NOT verify (the report says where it fails)");
	rc = vrep.ok ? 0 : EXIT_VERIFY_FAILED;
out:
	return rc;
}

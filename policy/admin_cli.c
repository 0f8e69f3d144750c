/*
 * admin_cli.c - `glassbox approvals list | show ID | approve ID | deny ID`
 * (admin.h): builds the admin request, sends it to the running service's
 * admin socket or, when no service is running, serves it against the
 * database directly, and prints the answer for a person.
 *
 * Everything printed that came from a page (summaries quote page text)
 * or from another process goes through print_safe(), which shows control
 * and bidi characters as '?', so no page can move the cursor, recolour,
 * hide or reorder what the person reads before deciding.
 */
#include "policy/admin.h"

#include <errno.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define EXIT_OK 0
#define EXIT_REFUSED 1
#define EXIT_USAGE 2
#define EXIT_FAILED 3

#define REQUEST_TIMEOUT_MS 15000

struct cli_args {
	const char *cmd;
	const char *id;
	const char *tenant;
	const char *reason;
	const char *by;
	int all;
	int json;
};

static void usage(FILE *out)
{
	fprintf(
	    out,
	    "usage: glassbox approvals COMMAND [options]\n"
	    "\n"
	    "  list [--tenant T] [--all] [--json]      approvals waiting for a decision\n"
	    "                                          (--all: every state)\n"
	    "  show ID [--json]                        one approval and its history\n"
	    "  approve ID [--reason TEXT] [--by NAME]  let that one action run, once\n"
	    "  deny ID [--reason TEXT] [--by NAME]     refuse it\n"
	    "\n"
	    "Talks to the running service through DATA/run/admin.sock; when none is\n"
	    "running, works on DATA/glassbox.db directly. Root or the data dir's owner only.\n");
}

/* Prints s with control characters (C0, DEL, C1) and bidi controls shown
 * as '?'. */
static void print_safe(FILE *out, const char *s)
{
	const unsigned char *p = (const unsigned char *)(s ? s : "");

	while (*p) {
		if (*p < 0x20 || *p == 0x7F) {
			fputc('?', out);
			p++;
		} else if (p[0] == 0xC2 && p[1] >= 0x80 && p[1] <= 0x9F) { /* C1 */
			fputc('?', out);
			p += 2;
		} else if (p[0] == 0xE2 && p[1] == 0x80 && p[2] >= 0xAA && p[2] <= 0xAE) {
			fputc('?', out); /* U+202A..U+202E embeddings and overrides */
			p += 3;
		} else if (p[0] == 0xE2 && p[1] == 0x81 && p[2] >= 0xA6 && p[2] <= 0xA9) {
			fputc('?', out); /* U+2066..U+2069 isolates */
			p += 3;
		} else if (p[0] == 0xE2 && p[1] == 0x80 && (p[2] == 0x8E || p[2] == 0x8F)) {
			fputc('?', out); /* LRM, RLM */
			p += 3;
		} else {
			fputc(*p, out);
			p++;
		}
	}
}

/* A member's string, or "". */
static const char *str(const json_t *o, const char *key)
{
	const char *s = json_string_value(json_object_get(o, key));

	return s ? s : "";
}

/* Parses "2026-11-29T18:20:01.123Z" into Unix seconds; 0 when it is not. */
static time_t parse_iso(const char *s)
{
	struct tm tm;
	const char *rest;

	memset(&tm, 0, sizeof(tm));
	rest = strptime(s, "%Y-%m-%dT%H:%M:%S", &tm);
	if (!rest)
		return 0;
	return timegm(&tm);
}

/* Appends " (in 4m 12s)" or " (3m ago)" for an ISO time. */
static void print_relative(FILE *out, const char *iso)
{
	time_t t = parse_iso(iso);
	long d;

	if (!t)
		return;
	d = (long)(t - time(NULL));
	if (d >= 0)
		fprintf(out, " (in %ldm %02lds)", d / 60, d % 60);
	else
		fprintf(out, " (%ldm %02lds ago)", -d / 60, -d % 60);
}

static void print_field(FILE *out, const char *label, const char *value)
{
	if (!value || !value[0])
		return;
	fprintf(out, "%-12s", label);
	print_safe(out, value);
	fputc('\n', out);
}

/* One approval in a list: a heading line, then the summary indented. */
static void print_item(FILE *out, const json_t *a)
{
	const char *state = str(a, "state");

	print_safe(out, str(a, "id"));
	fprintf(out, "  ");
	print_safe(out, state);
	fprintf(out, "  tenant ");
	print_safe(out, str(a, "tenant"));
	if (str(a, "session")[0]) {
		fprintf(out, "  session ");
		print_safe(out, str(a, "session"));
	}
	if (!strcmp(state, "pending") || !strcmp(state, "approved")) {
		fprintf(out, "  expires");
		print_relative(out, str(a, "expires_at"));
	}
	fprintf(out, "\n    ");
	print_safe(out, str(a, "summary"));
	fprintf(out, "\n");
	if (str(a, "rule")[0] || str(a, "tool")[0]) {
		fprintf(out, "    rule ");
		print_safe(out, str(a, "rule"));
		fprintf(out, ", tool ");
		print_safe(out, str(a, "tool"));
		fprintf(out, "\n");
	}
	if (str(a, "decided_by")[0]) {
		fprintf(out, "    %s by ", !strcmp(state, "denied") ? "denied" : "approved");
		print_safe(out, str(a, "decided_by"));
		fprintf(out, " at ");
		print_safe(out, str(a, "decided_at"));
		fprintf(out, "\n");
	}
}

static void print_list(FILE *out, const json_t *resp, int all)
{
	const json_t *arr = json_object_get(resp, "approvals");
	size_t i;

	if (json_array_size(arr) == 0) {
		fprintf(out,
		        all ? "No approvals.\n" : "No approvals are waiting for a decision.\n");
		return;
	}
	fprintf(out, "%zu %s:\n\n", json_array_size(arr),
	        all ? "approval(s)" : "approval(s) waiting for a decision");
	for (i = 0; i < json_array_size(arr); i++) {
		print_item(out, json_array_get(arr, i));
		fputc('\n', out);
	}
	if (!all)
		fprintf(out,
		        "Decide with: glassbox approvals approve ID | deny ID [--reason TEXT]\n");
}

static void print_show(FILE *out, const json_t *resp)
{
	const json_t *a = json_object_get(resp, "approval");
	const json_t *events = json_object_get(resp, "events");
	const char *state = str(a, "state");
	size_t i;

	print_field(out, "approval", str(a, "id"));
	fprintf(out, "%-12s", "state");
	print_safe(out, state);
	if (!strcmp(state, "pending") || !strcmp(state, "approved")) {
		fprintf(out, ", expires ");
		print_safe(out, str(a, "expires_at"));
		print_relative(out, str(a, "expires_at"));
	}
	fputc('\n', out);
	print_field(out, "summary", str(a, "summary"));
	print_field(out, "tenant", str(a, "tenant"));
	print_field(out, "session", str(a, "session"));
	print_field(out, "operation", str(a, "operation_id"));
	print_field(out, "tool", str(a, "tool"));
	print_field(out, "rule", str(a, "rule"));
	print_field(out, "fingerprint", str(a, "fingerprint"));
	print_field(out, "created", str(a, "created_at"));
	if (str(a, "decided_at")[0]) {
		fprintf(out, "%-12s", "decided");
		print_safe(out, str(a, "decided_at"));
		fprintf(out, " by ");
		print_safe(out, str(a, "decided_by"));
		fprintf(out, " via ");
		print_safe(out, str(a, "channel"));
		fputc('\n', out);
	}
	print_field(out, "reason", str(a, "reason"));
	if (str(a, "used_at")[0]) {
		fprintf(out, "%-12s", "used");
		print_safe(out, str(a, "used_at"));
		fprintf(out, " by operation ");
		print_safe(out, str(a, "used_by_operation"));
		fputc('\n', out);
	}
	fprintf(out, "\nhistory:\n");
	for (i = 0; i < json_array_size(events); i++) {
		const json_t *e = json_array_get(events, i);

		fprintf(out, "  ");
		print_safe(out, str(e, "time"));
		fprintf(out, "  %-9s", str(e, "event"));
		if (str(e, "by")[0]) {
			fprintf(out, " by ");
			print_safe(out, str(e, "by"));
		}
		if (str(e, "channel")[0]) {
			fprintf(out, " via ");
			print_safe(out, str(e, "channel"));
		}
		if (str(e, "operation_id")[0]) {
			fprintf(out, " (operation ");
			print_safe(out, str(e, "operation_id"));
			fprintf(out, ")");
		}
		if (str(e, "reason")[0]) {
			fprintf(out, ": ");
			print_safe(out, str(e, "reason"));
		}
		fputc('\n', out);
	}
}

static void print_decided(FILE *out, const json_t *resp, int approve)
{
	const json_t *a = json_object_get(resp, "approval");

	fprintf(out, approve ? "Approved " : "Denied ");
	print_safe(out, str(a, "id"));
	fprintf(out, ": ");
	print_safe(out, str(a, "summary"));
	fputc('\n', out);
	if (approve) {
		fprintf(out, "It may be used once, for exactly that action, until ");
		print_safe(out, str(a, "expires_at"));
		print_relative(out, str(a, "expires_at"));
		fprintf(out, ".\n");
	}
}

/* Who is deciding: $SUDO_USER under sudo, else the login name. */
static void default_by(char *buf, size_t buflen)
{
	const char *sudo_user = getenv("SUDO_USER");
	struct passwd pw;
	struct passwd *res = NULL;
	char pwbuf[1024];

	if (getuid() == 0 && sudo_user && sudo_user[0]) {
		snprintf(buf, buflen, "%.100s (via sudo)", sudo_user);
		return;
	}
	if (getpwuid_r(getuid(), &pw, pwbuf, sizeof(pwbuf), &res) == 0 && res)
		snprintf(buf, buflen, "%.120s", res->pw_name);
	else
		snprintf(buf, buflen, "uid %u", (unsigned)getuid());
}

static int parse_args(int argc, char **argv, struct cli_args *a)
{
	int i;

	memset(a, 0, sizeof(*a));
	if (argc < 2)
		return -1;
	a->cmd = argv[1];
	for (i = 2; i < argc; i++) {
		const char *arg = argv[i];
		const char *v = i + 1 < argc ? argv[i + 1] : NULL;

		if (!strcmp(arg, "--tenant") && v) {
			a->tenant = v;
			i++;
		} else if (!strcmp(arg, "--reason") && v) {
			a->reason = v;
			i++;
		} else if (!strcmp(arg, "--by") && v) {
			a->by = v;
			i++;
		} else if (!strcmp(arg, "--data-dir") && v) {
			i++; /* resolved by the caller and passed as data_dir */
		} else if (!strcmp(arg, "--all")) {
			a->all = 1;
		} else if (!strcmp(arg, "--json")) {
			a->json = 1;
		} else if (arg[0] != '-' && !a->id) {
			a->id = arg;
		} else {
			fprintf(stderr,
			        "glassbox approvals: unknown or incomplete argument '%s'\n\n", arg);
			return -1;
		}
	}
	if (!strcmp(a->cmd, "list"))
		return a->id || a->reason || a->by ? -1 : 0;
	if (!strcmp(a->cmd, "show"))
		return a->id && !a->reason && !a->by && !a->tenant && !a->all ? 0 : -1;
	if (!strcmp(a->cmd, "approve") || !strcmp(a->cmd, "deny"))
		return a->id && !a->tenant && !a->all ? 0 : -1;
	fprintf(stderr, "glassbox approvals: unknown command '%s'\n\n", a->cmd);
	return -1;
}

/* Builds the request for the parsed arguments. */
static json_t *build_request(const struct cli_args *a)
{
	char by[160];
	json_t *req = json_object();

	json_object_set_new(req, "op", json_string(a->cmd));
	if (!strcmp(a->cmd, "list")) {
		if (a->tenant)
			json_object_set_new(req, "tenant", json_string(a->tenant));
		json_object_set_new(req, "all", json_boolean(a->all));
		json_object_set_new(req, "limit", json_integer(1000));
		return req;
	}
	json_object_set_new(req, "id", json_string(a->id));
	if (!strcmp(a->cmd, "approve") || !strcmp(a->cmd, "deny")) {
		if (a->by)
			snprintf(by, sizeof(by), "%s", a->by);
		else
			default_by(by, sizeof(by));
		json_object_set_new(req, "by", json_string(by));
		if (a->reason)
			json_object_set_new(req, "reason", json_string(a->reason));
	}
	return req;
}

/* Serves req against the database itself (no service running). */
static int serve_direct(const char *data_dir, const json_t *req, json_t **resp, char *err,
                        size_t errlen)
{
	struct store *st = NULL;
	struct stat sb;
	int rc;

	if (stat(data_dir, &sb) != 0 || !S_ISDIR(sb.st_mode)) {
		snprintf(err, errlen,
		         "there is no glassbox data dir at %s: pass --data-dir DIR or "
		         "set GLASSBOX_DATA_DIR",
		         data_dir);
		return -1;
	}
	rc = store_open(data_dir, &st, err, errlen);
	if (rc < 0)
		return -1;
	*resp = policy_admin_handle(st, req, "cli-direct", (int64_t)getuid());
	store_close(st);
	if (!*resp) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	return 0;
}

int policy_cli_approvals(int argc, char **argv, const char *data_dir)
{
	struct cli_args a;
	char path[4096];
	char err[1024] = "";
	json_t *req = NULL;
	json_t *resp = NULL;
	int status = EXIT_OK;
	int rc;

	if (argc >= 2 &&
	    (!strcmp(argv[1], "help") || !strcmp(argv[1], "--help") || !strcmp(argv[1], "-h"))) {
		usage(stdout);
		goto out;
	}
	if (parse_args(argc, argv, &a) < 0) {
		usage(stderr);
		status = EXIT_USAGE;
		goto out;
	}
	if (!data_dir || !data_dir[0]) {
		fprintf(stderr, "glassbox approvals: no data dir: pass --data-dir DIR\n");
		status = EXIT_USAGE;
		goto out;
	}
	req = build_request(&a);
	if (!req) {
		fprintf(stderr, "glassbox approvals: out of memory\n");
		status = EXIT_FAILED;
		goto out;
	}
	snprintf(path, sizeof(path), "%s/run/admin.sock", data_dir);
	rc = policy_admin_request(path, req, REQUEST_TIMEOUT_MS, &resp, err, sizeof(err));
	if (rc == -POLICY_EREFUSED)
		rc = serve_direct(data_dir, req, &resp, err, sizeof(err));
	if (rc < 0) {
		fprintf(stderr, "glassbox approvals: %s\n", err);
		status = EXIT_FAILED;
		goto out;
	}
	if (!json_is_true(json_object_get(resp, "ok"))) {
		const json_t *e = json_object_get(resp, "error");
		const char *code = str(e, "code");

		fprintf(stderr, "glassbox approvals %s: ", a.cmd);
		print_safe(stderr, str(e, "message"));
		fputc('\n', stderr);
		status = (!strcmp(code, "not_found") || !strcmp(code, "conflict")) ? EXIT_REFUSED
		         : !strcmp(code, "bad_request")                            ? EXIT_USAGE
		                                                                   : EXIT_FAILED;
		goto out;
	}
	if (a.json) {
		char *text = json_dumps(resp, JSON_INDENT(2) | JSON_ENSURE_ASCII);

		if (text)
			printf("%s\n", text);
		free(text);
	} else if (!strcmp(a.cmd, "list")) {
		print_list(stdout, resp, a.all);
	} else if (!strcmp(a.cmd, "show")) {
		print_show(stdout, resp);
	} else {
		print_decided(stdout, resp, !strcmp(a.cmd, "approve"));
	}
out:
	json_decref(req);
	json_decref(resp);
	return status;
}

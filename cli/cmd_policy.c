/*
 * cmd_policy.c - `glassbox policy check FILE`: reads a tenant's policy
 * (or each tenant's, in a service config of glassbox serve), and prints
 * the effective policy with every default shown, its hash and its
 * warnings, or every error in it. Also the warnings that init and serve
 * print at start (cli_policy_warn, cli_policy_serve_prepare).
 */
#include "cli/commands.h"
#include "mcp/serve.h"
#include "policy/tenant.h"

#include <jansson.h>
#include <stdio.h>
#include <string.h>

/* The usage of `glassbox policy` (help.c has its text). */
static void policy_usage(FILE *f)
{
	cli_help_command(f, "policy");
}

/* Checks one policy; prints it (text) or appends it to out (json).
 * Returns 0 when valid, -1 otherwise. */
static int check_one(const json_t *policy, const char *source, json_t *out)
{
	struct policy_tenant *t = NULL;
	char err[8192] = "";
	json_t *eff;
	const json_t *w;
	char *text;
	size_t i;
	int rc = -1;

	if (policy_tenant_parse(policy, source, &t, err, sizeof(err)) < 0) {
		if (out) {
			json_t *errors = json_array();
			char *line = strtok(err, "\n");

			for (; line; line = strtok(NULL, "\n"))
				json_array_append_new(errors, json_string(line));
			json_array_append_new(
			    out, json_pack("{s:s, s:o}", "source", source, "errors", errors));
		} else {
			printf("%s: NOT VALID\n%s\n", source, err);
		}
		goto out;
	}
	eff = policy_tenant_effective(t);
	w = policy_tenant_warnings(t);
	if (out) {
		json_array_append_new(out, json_pack("{s:s, s:o, s:O}", "source", source,
		                                     "effective", eff, "warnings", w));
	} else {
		text = json_dumps(eff, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
		printf("%s: valid (%s)\n%s\n", source, policy_tenant_hash(t), text ? text : "");
		free(text);
		json_decref(eff);
		for (i = 0; i < json_array_size(w); i++)
			printf("warning: %s\n", json_string_value(json_array_get(w, i)));
		if (!json_array_size(w))
			printf("no warnings\n");
	}
	rc = 0;
out:
	policy_tenant_unref(t);
	return rc;
}

int cli_cmd_policy(int argc, char **argv)
{
	const char *file = NULL;
	json_error_t jerr;
	json_t *root = NULL;
	json_t *out = NULL;
	const json_t *tenants;
	int as_json = 0;
	int bad = 0;
	int i;
	int rc = 2;

	if (argc >= 2 && (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h"))) {
		policy_usage(stdout);
		rc = 0;
		goto out;
	}
	if (argc < 2 || strcmp(argv[1], "check") != 0) {
		policy_usage(stderr);
		goto out;
	}
	for (i = 2; i < argc; i++) {
		if (!strcmp(argv[i], "--json")) {
			as_json = 1;
		} else if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
			policy_usage(stdout);
			rc = 0;
			goto out;
		} else if (!file && argv[i][0] != '-') {
			file = argv[i];
		} else {
			fprintf(stderr, "glassbox policy check: unknown or extra argument '%s'\n\n",
			        argv[i]);
			policy_usage(stderr);
			goto out;
		}
	}
	if (!file) {
		fprintf(stderr, "glassbox policy check: name the policy file to check\n\n");
		policy_usage(stderr);
		goto out;
	}
	root = json_load_file(file, JSON_REJECT_DUPLICATES, &jerr);
	if (!root) {
		fprintf(stderr, "glassbox policy check: cannot read %s: %s (line %d, column %d)\n",
		        file, jerr.text, jerr.line, jerr.column);
		goto out;
	}
	out = as_json ? json_array() : NULL;
	tenants = json_object_get(root, "tenants");
	if (json_is_object(tenants)) {
		const char *name;
		json_t *v;
		char source[400];

		json_object_foreach((json_t *)tenants, name, v)
		{
			snprintf(source, sizeof(source), "tenants.%.64s.policy of %.300s", name,
			         file);
			bad |= check_one(json_object_get(v, "policy"), source, out) < 0;
		}
	} else {
		bad |= check_one(root, file, out) < 0;
	}
	if (as_json) {
		json_t *doc = json_pack("{s:b, s:o}", "valid", !bad, "policies", out);
		char *text = json_dumps(doc, JSON_INDENT(2) | JSON_PRESERVE_ORDER);

		out = NULL;
		printf("%s\n", text ? text : "{}");
		free(text);
		json_decref(doc);
	}
	rc = bad ? 2 : 0;
out:
	json_decref(out);
	json_decref(root);
	return rc;
}

/* Prints the warnings about policy (borrowed) with prefix; errors are
 * left to whoever starts sessions with it. */
static void warn_policy(const char *prefix, const json_t *policy, const char *source)
{
	struct policy_tenant *t = NULL;
	const json_t *w;
	char err[512];
	size_t i;

	if (policy_tenant_parse(policy, source, &t, err, sizeof(err)) < 0)
		return;
	w = policy_tenant_warnings(t);
	for (i = 0; i < json_array_size(w); i++)
		fprintf(stderr, "%s: warning: %s (in %s)\n", prefix,
		        json_string_value(json_array_get(w, i)), source);
	policy_tenant_unref(t);
}

void cli_policy_warn(const char *prefix, const json_t *policy, const char *source)
{
	if (policy)
		warn_policy(prefix, policy, source ? source : "the policy");
}

void cli_policy_serve_prepare(struct mcp_serve_config *cfg, const char *config_path)
{
	char err[512];
	size_t i;

	for (i = 0; i < cfg->n_tenants; i++) {
		struct mcp_tenant *t = &cfg->tenants[i];

		snprintf(t->policy_source, sizeof(t->policy_source), "tenants.%s.policy of %.200s",
		         t->name, config_path ? config_path : "the embedded local config");
		if (t->policy)
			warn_policy("glassbox serve", t->policy, t->policy_source);
		/* parsed once for all its sessions; one that does not parse is left
		 * to the start's check, which names the tenant and stops */
		t->parsed = NULL;
		if (policy_tenant_parse(t->policy, t->policy_source, &t->parsed, err, sizeof(err)) <
		    0)
			t->parsed = NULL;
	}
}

void cli_policy_serve_release(struct mcp_serve_config *cfg)
{
	size_t i;

	for (i = 0; cfg && i < cfg->n_tenants; i++) {
		policy_tenant_unref(cfg->tenants[i].parsed);
		cfg->tenants[i].parsed = NULL;
	}
}

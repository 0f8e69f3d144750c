/*
 * cmd_run.c - `glassbox run FLOW...`: QA flows (flows/) run in their own
 * sessions, -j N at a time, with a JUnit XML report, the screenshots of
 * failed steps beside it, and optionally the HTML trail of the run.
 *
 * Everything is checked before any browser starts: options, the policy,
 * the vars file and every flow; bad input exits 2 with a message naming
 * the file, step and field. Then 0 when every flow passed, 1 otherwise.
 */
#include "cli/commands.h"

#include "actions/actions.h"
#include "common/fs.h"
#include "common/util.h"
#include "evidence/audit.h"
#include "flows/flow.h"
#include "policy/tenant.h"
#include "trace/trace.h"

#include <errno.h>
#include <jansson.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define RUN_MAX_FLOWS 1000
#define RUN_MAX_JOBS 32

struct run_opts {
	char data_dir[PATH_MAX];
	const char *chromium;
	const char *config_path;
	const char *vars_path;
	const char *junit_path;
	const char *report_path;
	const char *trace_dir;
	const char *profile;
	const char *profile_user;
	int save_profile;
	int headed;
	int jobs;
	const char **flow_paths;
	size_t n_flows;
};

/* The shared state of the worker threads. */
struct run_pool {
	pthread_mutex_t lock;
	size_t next; /* {lock} the next flow to run */
	struct flow **flows;
	struct flow_result *results;
	size_t n;
	const struct act_config *cfg;
	char attach_base[PATH_MAX]; /* "" when no JUnit is written */
};

/* The command's help. */
static void run_usage(FILE *out)
{
	fprintf(
	    out,
	    "usage: glassbox run FLOW... [-j N] [--junit FILE] [--report FILE] [--vars FILE]\n"
	    "                    [--config POLICY] [--profile NAME [--user U] [--save-profile]]\n"
	    "                    [--data-dir DIR]\n"
	    "                    [--chromium PATH] [--headed]\n"
	    "\n"
	    "Runs each flow (a JSON file, see docs/flows.md) in its own browser session\n"
	    "through the same pipeline as the MCP tools: policy, approvals, verification\n"
	    "and signed evidence. Exit status: 0 every flow passed, 1 a flow failed,\n"
	    "2 bad input (a flow, the vars file, the policy or an option).\n"
	    "\n"
	    "  -j N             run N flows at once (1..%d, default 1)\n"
	    "  --junit FILE     write JUnit XML; screenshots go to FILE's name without\n"
	    "                   .xml + \"-attachments/\"\n"
	    "  --report FILE    write the HTML trail of the run's sessions\n"
	    "  --trace DIR      write each flow's Playwright trace to DIR/NN-name.zip\n"
	    "  --vars FILE      NAME=VALUE lines for ${NAME} (before the environment)\n"
	    "  --config POLICY  the tenant's policy (default $GLASSBOX_CONFIG)\n"
	    "  --profile NAME   start every flow from the tenant's saved browser profile\n"
	    "                   NAME (docs/profiles.md), each on a read-only copy\n"
	    "  --user U         the profile's user (default \"default\")\n"
	    "  --save-profile   one flow only: run it on the profile itself (created when\n"
	    "                   missing) and seal its state as a new version when it ends\n"
	    "                   cleanly\n",
	    RUN_MAX_JOBS);
}

/* Reads the options into o: 0, 1 after printing the help, -1 after
 * printing what is wrong. o->flow_paths borrows from argv. */
static int parse_run_opts(int argc, char **argv, const char *default_data_dir, struct run_opts *o)
{
	int i;

	memset(o, 0, sizeof(*o));
	snprintf(o->data_dir, sizeof(o->data_dir), "%s", default_data_dir);
	o->jobs = 1;
	if (getenv("GLASSBOX_CHROMIUM"))
		o->chromium = getenv("GLASSBOX_CHROMIUM");
	if (getenv("GLASSBOX_CONFIG") && getenv("GLASSBOX_CONFIG")[0])
		o->config_path = getenv("GLASSBOX_CONFIG");
	o->flow_paths = calloc((size_t)argc, sizeof(*o->flow_paths));
	if (!o->flow_paths)
		return -1;
	for (i = 2; i < argc; i++) {
		const char *a = argv[i];
		const char *v = i + 1 < argc ? argv[i + 1] : NULL;

		if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
			run_usage(stdout);
			return 1;
		}
		if (a[0] != '-') {
			o->flow_paths[o->n_flows++] = a;
			continue;
		}
		if (!v && strcmp(a, "--headed") != 0 && strcmp(a, "--save-profile") != 0) {
			fprintf(stderr, "glassbox run: option %s needs a value\n\n", a);
			goto bad;
		}
		if (!strcmp(a, "-j") || !strcmp(a, "--jobs")) {
			char *end;
			long n = strtol(v, &end, 10);

			if (*end || n < 1 || n > RUN_MAX_JOBS) {
				fprintf(
				    stderr,
				    "glassbox run: -j %s: give a number of parallel sessions from "
				    "1 to %d\n",
				    v, RUN_MAX_JOBS);
				return -1;
			}
			o->jobs = (int)n;
		} else if (!strcmp(a, "--junit")) {
			o->junit_path = v;
		} else if (!strcmp(a, "--report")) {
			o->report_path = v;
		} else if (!strcmp(a, "--trace")) {
			o->trace_dir = v;
		} else if (!strcmp(a, "--vars")) {
			o->vars_path = v;
		} else if (!strcmp(a, "--config")) {
			o->config_path = v;
		} else if (!strcmp(a, "--profile")) {
			o->profile = v;
		} else if (!strcmp(a, "--data-dir")) {
			snprintf(o->data_dir, sizeof(o->data_dir), "%s", v);
		} else if (!strcmp(a, "--chromium")) {
			o->chromium = v;
		} else if (!strcmp(a, "--user")) {
			o->profile_user = v;
		} else if (!strcmp(a, "--save-profile")) {
			o->save_profile = 1;
			continue;
		} else if (!strcmp(a, "--headed")) {
			o->headed = 1;
			continue;
		} else {
			fprintf(stderr, "glassbox run: unknown option '%s'\n\n", a);
			goto bad;
		}
		i++;
	}
	if (o->n_flows == 0) {
		fprintf(stderr, "glassbox run: give at least one flow file\n\n");
		goto bad;
	}
	if (o->n_flows > RUN_MAX_FLOWS) {
		fprintf(stderr, "glassbox run: at most %d flows per run\n", RUN_MAX_FLOWS);
		return -1;
	}
	return 0;
bad:
	run_usage(stderr);
	return -1;
}

/*
 * --profile NAME [--user U] [--save-profile]: checked before anything
 * starts. Every flow gets a read-only copy of the saved profile (so flows
 * can run in parallel and each starts from the same state); with
 * --save-profile the one flow of the run holds the profile and seals it
 * when it ends cleanly. Returns 0 or -1 after saying what is wrong.
 */
static int check_profile(const struct run_opts *o)
{
	if (!o->profile) {
		if (o->save_profile || o->profile_user) {
			fprintf(stderr,
			        "glassbox run: --save-profile and --user need --profile NAME\n");
			return -1;
		}
		return 0;
	}
	if (!gb_fs_name_is_safe(o->profile) ||
	    (o->profile_user && !gb_fs_name_is_safe(o->profile_user))) {
		fprintf(stderr,
		        "glassbox run: --profile %.80s: profile and user names are 1 to 64 "
		        "letters, digits, '.', '_' or '-'\n",
		        o->profile);
		return -1;
	}
	if (o->save_profile && o->n_flows != 1) {
		fprintf(stderr,
		        "glassbox run: --save-profile saves what one flow did: give one flow "
		        "(%zu given)\n",
		        o->n_flows);
		return -1;
	}
	return 0;
}

/* Puts the profile options into cfg (strings borrowed from o). */
static void apply_profile(const struct run_opts *o, struct act_config *cfg)
{
	cfg->profile = o->profile;
	cfg->profile_user = o->profile_user;
	cfg->profile_readonly = !o->save_profile;
	cfg->profile_create = o->save_profile;
	cfg->profile_save_at_end = o->save_profile;
}

/* The policy file (NULL: none) as a new reference; -1 after saying why. */
static int load_policy(const char *path, json_t **out)
{
	json_error_t jerr;

	*out = NULL;
	if (!path)
		return 0;
	*out = json_load_file(path, JSON_REJECT_DUPLICATES, &jerr);
	if (!json_is_object(*out)) {
		fprintf(stderr, "glassbox run: cannot use the config %s: %s\n", path,
		        *out ? "it must be a JSON object" : jerr.text);
		json_decref(*out);
		*out = NULL;
		return -1;
	}
	return 0;
}

/* base/NN-name<suffix> for flow i (its screenshots' dir, its trace), name
 * made file-safe; "" when it would be too long. */
static void flow_file(const struct run_pool *pool, size_t i, const char *base, const char *suffix,
                      char *out, size_t outlen)
{
	char name[128];
	size_t k;

	snprintf(name, sizeof(name), "%s", flow_name(pool->flows[i]));
	for (k = 0; name[k]; k++)
		if (name[k] == ' ' || name[k] == '/')
			name[k] = '-';
	if (snprintf(out, outlen, "%s/%02zu-%s%s", base, i + 1, name, suffix) >= (int)outlen)
		out[0] = '\0'; /* too long: nothing rather than the wrong place */
}

/* Writes each flow's Playwright trace to DIR/NN-name.zip (trace/), noting
 * its path in the result for the JUnit file. 0, or -1 when one could not
 * be written (said on stderr). */
static int write_traces(struct run_pool *pool, const struct run_opts *o)
{
	char dir[PATH_MAX];
	char cwd[PATH_MAX];
	char path[PATH_MAX];
	char abs[PATH_MAX];
	char err[1024];
	size_t i;
	int rc = 0;

	if (o->trace_dir[0] == '/' || !getcwd(cwd, sizeof(cwd)))
		snprintf(dir, sizeof(dir), "%s", o->trace_dir);
	else if (snprintf(dir, sizeof(dir), "%s/%s", cwd, o->trace_dir) >= (int)sizeof(dir))
		dir[0] = '\0';
	if (!dir[0] || gb_fs_mkdirs_abs(dir, err, sizeof(err)) < 0) {
		fprintf(stderr, "glassbox run: cannot create the trace dir %s: %s\n", o->trace_dir,
		        dir[0] ? err : "the path is too long");
		return -1;
	}
	for (i = 0; i < pool->n; i++) {
		struct flow_result *r = &pool->results[i];
		struct trace_export_opts t = { 0 };

		if (!r->agent_session)
			continue; /* its session never started: nothing was recorded */
		flow_file(pool, i, o->trace_dir, ".zip", path, sizeof(path));
		t.data_dir = o->data_dir;
		t.tenant = "local";
		t.agent_session = r->agent_session;
		t.format = TRACE_FORMAT_PLAYWRIGHT_TRACE;
		t.audit = 1;
		t.output_description = path;
		if (!path[0] || trace_export_write(&t, path, err, sizeof(err)) < 0) {
			fprintf(stderr, "glassbox run: trace of %s: %s\n", r->name,
			        path[0] ? err : "the path would be too long");
			rc = -1;
			continue;
		}
		r->trace = strdup(realpath(path, abs) ? abs : path);
		printf("Trace: %s\n", path);
	}
	return rc;
}

/* A pool thread: takes the next flow until none is left, runs it, and
 * prints its line (one printf, so lines of parallel flows do not mix). */
static void *worker(void *arg)
{
	struct run_pool *pool = arg;

	for (;;) {
		struct flow_run_opts ro = { .cfg = pool->cfg };
		char dir[PATH_MAX];
		size_t i;

		pthread_mutex_lock(&pool->lock);
		i = pool->next++;
		pthread_mutex_unlock(&pool->lock);
		if (i >= pool->n)
			break;
		if (pool->attach_base[0]) {
			flow_file(pool, i, pool->attach_base, "", dir, sizeof(dir));
			ro.attach_dir = dir[0] ? dir : NULL;
		}
		flow_run(pool->flows[i], &ro, &pool->results[i]);
		if (pool->results[i].passed)
			printf("PASS %s (%s) in %.1f s\n", pool->results[i].name,
			       pool->results[i].path,
			       (double)pool->results[i].duration_ms / 1000.0);
		else
			printf("FAIL %s (%s) in %.1f s: %s\n%s%s%s%s", pool->results[i].name,
			       pool->results[i].path, (double)pool->results[i].duration_ms / 1000.0,
			       gb_or(pool->results[i].message, "failed"),
			       gb_or(pool->results[i].log, ""),
			       pool->results[i].screenshot ? "screenshot: " : "",
			       pool->results[i].screenshot ? pool->results[i].screenshot : "",
			       pool->results[i].screenshot ? "\n" : "");
		fflush(stdout);
	}
	return NULL;
}

/* Runs every flow, jobs at a time; returns the number that failed. */
static size_t run_all(struct run_pool *pool, int jobs)
{
	pthread_t threads[RUN_MAX_JOBS];
	int started = 0, k;
	size_t i, failed = 0;

	for (k = 0; k < jobs && (size_t)k < pool->n; k++) {
		if (pthread_create(&threads[k], NULL, worker, pool) != 0)
			break;
		started++;
	}
	if (started == 0)
		worker(pool);
	for (k = 0; k < started; k++)
		pthread_join(threads[k], NULL);
	for (i = 0; i < pool->n; i++)
		failed += !pool->results[i].passed;
	return failed;
}

/* See commands.h. */
int cli_cmd_run(int argc, char **argv, const char *default_data_dir)
{
	struct run_opts o;
	struct run_pool pool;
	struct flow_vars *vars = NULL;
	struct act_config cfg;
	json_t *policy = NULL;
	struct policy_tenant *parsed = NULL;
	char perr[4096];
	char err[1024], since[40];
	int64_t t0;
	size_t i, failed;
	int rc = 2, r;

	memset(&pool, 0, sizeof(pool));
	pthread_mutex_init(&pool.lock, NULL);
	r = parse_run_opts(argc, argv, default_data_dir, &o);
	if (r != 0) {
		rc = r > 0 ? 0 : 2;
		goto out;
	}
	if (check_profile(&o) < 0 || load_policy(o.config_path, &policy) < 0)
		goto out;
	/* parsed once, for every flow's session; every error in it at once */
	if (policy_tenant_parse(policy, o.config_path, &parsed, perr, sizeof(perr)) < 0) {
		fprintf(stderr, "glassbox run: the policy %s is not valid:\n%s\n",
		        o.config_path ? o.config_path : "(none)", perr);
		goto out;
	}
	cli_policy_warn("glassbox run", policy, o.config_path);
	if (flow_vars_load(o.vars_path, &vars, err, sizeof(err)) < 0) {
		fprintf(stderr, "glassbox run: %s\n", err);
		goto out;
	}
	pool.flows = calloc(o.n_flows, sizeof(*pool.flows));
	pool.results = calloc(o.n_flows, sizeof(*pool.results));
	if (!pool.flows || !pool.results)
		goto out;
	for (i = 0; i < o.n_flows; i++) {
		if (flow_load(o.flow_paths[i], vars, &pool.flows[i], err, sizeof(err)) < 0) {
			fprintf(stderr, "glassbox run: %s\n", err);
			goto out;
		}
		pool.n = i + 1;
	}
	if (gb_fs_mkdirs_abs(o.data_dir, err, sizeof(err)) < 0) {
		fprintf(stderr, "glassbox run: cannot create the data dir %s: %s\n", o.data_dir,
		        err);
		goto out;
	}
	if (o.junit_path) {
		const char *dot = strrchr(o.junit_path, '.');
		size_t stem = dot && !strcmp(dot, ".xml") ? (size_t)(dot - o.junit_path)
		                                          : strlen(o.junit_path);

		snprintf(pool.attach_base, sizeof(pool.attach_base), "%.*s-attachments", (int)stem,
		         o.junit_path);
	}
	memset(&cfg, 0, sizeof(cfg));
	cfg.data_dir = o.data_dir;
	cfg.tenant = "local";
	cfg.chromium_path = o.chromium;
	apply_profile(&o, &cfg);
	cfg.headless = !o.headed;
	cfg.tenant_policy = policy;
	cfg.policy_source = o.config_path;
	cfg.policy = parsed;
	pool.cfg = &cfg;
	gb_utc_iso8601(since, sizeof(since));
	t0 = gb_now_ms();
	failed = run_all(&pool, o.jobs);
	printf("%zu flow%s: %zu passed, %zu failed (%.1f s)\n", pool.n, pool.n == 1 ? "" : "s",
	       pool.n - failed, failed, (double)(gb_now_ms() - t0) / 1000.0);
	rc = failed ? 1 : 0;
	if (o.trace_dir && write_traces(&pool, &o) < 0)
		rc = 1;
	if (o.junit_path) {
		if (flow_junit_write(o.junit_path, "glassbox run", pool.results, pool.n,
		                     (double)(gb_now_ms() - t0) / 1000.0, err, sizeof(err)) < 0) {
			fprintf(stderr, "glassbox run: JUnit report: %s\n", err);
			rc = 1;
		} else {
			printf("JUnit: %s\n", o.junit_path);
		}
	}
	if (o.report_path) {
		struct evid_report_opts ro = { .tenant = "local", .since = since };

		if (evid_report_write(o.data_dir, &ro, o.report_path, err, sizeof(err)) < 0) {
			fprintf(stderr, "glassbox run: HTML report: %s\n", err);
			rc = 1;
		} else {
			printf("HTML report: %s\n", o.report_path);
		}
	}
out:
	for (i = 0; i < pool.n; i++) {
		flow_result_clear(&pool.results[i]);
		flow_free(pool.flows[i]);
	}
	free(pool.flows);
	free(pool.results);
	free(o.flow_paths);
	flow_vars_free(vars);
	json_decref(policy);
	policy_tenant_unref(parsed);
	pthread_mutex_destroy(&pool.lock);
	return rc;
}

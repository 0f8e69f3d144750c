/*
 * main.c - the glassbox binary: subcommands over the modules.
 *
 *   glassbox mcp [options]     MCP over stdio (one local tenant)
 *   glassbox serve [options]   MCP over Streamable HTTP for tenants (cmd_serve.c)
 *   glassbox init [options]    create the data dir and check the browser
 *   glassbox approvals ...     list, show, approve or deny held actions
 *   glassbox audit ...         verify the signed trail, export the key, purge
 *   glassbox report ...        an HTML report of the trail for reviewers
 *   glassbox run FLOW...       QA flows with JUnit XML (cmd_run.c)
 *   glassbox profile ...       a tenant's encrypted browser profiles (cmd_profile.c)
 *   glassbox keys ...          the master key of the sealed stores (cmd_keys.c)
 *   glassbox secret ...        set, list or delete a tenant's secrets
 *   glassbox files ...         the upload area of a tenant (cmd_files.c)
 *   glassbox version           (also --version)
 *   glassbox help [COMMAND]    the help of every command is in help.c;
 *                              COMMAND --help and -h print it too
 */
#include "actions/actions.h"
#include "cli/commands.h"
#include "common/fs.h"
#include "common/log.h"
#include "evidence/audit.h"
#include "mcp/mcp.h"
#include "policy/admin.h"
#include "secrets/secrets.h"
#include "sessions/sessions.h"
#include "store/store.h"
#include "trace/trace.h"

#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

struct cli_opts {
	char data_dir[PATH_MAX];
	const char *chromium;
	const char *config_path; /* --config, else $GLASSBOX_CONFIG */
	int config_from_env;     /* config_path is $GLASSBOX_CONFIG's */
	const char *policy_path; /* serve --policy */
	int headed;
	const char *tenant;
	int tenant_from_flag; /* --tenant, not $GLASSBOX_TENANT */
	struct cli_pw pw;     /* Playwright MCP's options (mcp) */
};

/* Says that option a of command is unknown or misses its value, with the
 * command's help on stderr. */
static void bad_option(const char *command, const char *a)
{
	fprintf(stderr, "glassbox %s: unknown or incomplete option '%s'\n\n", command, a);
	cli_help_command(stderr, command);
}

/* Picks the data dir: flag, then environment, then the XDG default. */
static void default_data_dir(struct cli_opts *o)
{
	const char *env = getenv("GLASSBOX_DATA_DIR");
	const char *xdg = getenv("XDG_DATA_HOME");
	const char *home = getenv("HOME");

	if (env && env[0])
		snprintf(o->data_dir, sizeof(o->data_dir), "%s", env);
	else if (xdg && xdg[0])
		snprintf(o->data_dir, sizeof(o->data_dir), "%s/glassbox", xdg);
	else
		snprintf(o->data_dir, sizeof(o->data_dir), "%s/.local/share/glassbox",
		         home ? home : "/tmp");
}

static int parse_opts(int argc, char **argv, struct cli_opts *o)
{
	int i;

	memset(o, 0, sizeof(*o));
	cli_pw_init(&o->pw);
	default_data_dir(o);
	if (getenv("GLASSBOX_CHROMIUM"))
		o->chromium = getenv("GLASSBOX_CHROMIUM");
	if (getenv("GLASSBOX_CONFIG") && getenv("GLASSBOX_CONFIG")[0]) {
		o->config_path = getenv("GLASSBOX_CONFIG");
		o->config_from_env = 1;
	}
	if (getenv("GLASSBOX_TENANT") && getenv("GLASSBOX_TENANT")[0])
		o->tenant = getenv("GLASSBOX_TENANT");
	for (i = 2; i < argc; i++) {
		const char *a = argv[i];
		const char *v = i + 1 < argc ? argv[i + 1] : NULL;

		if (!strcmp(a, "--data-dir") && v) {
			snprintf(o->data_dir, sizeof(o->data_dir), "%s", v);
			i++;
		} else if (!strcmp(a, "--chromium") && v) {
			o->chromium = v;
			i++;
		} else if (!strcmp(a, "--config") && v) {
			o->config_path = v;
			o->config_from_env = 0;
			i++;
		} else if (!strncmp(a, "--config=", 9) && a[9]) {
			o->config_path = a + 9;
			o->config_from_env = 0;
		} else if (!strcmp(a, "--policy") && v && !strcmp(argv[1], "serve")) {
			o->policy_path = v;
			i++;
		} else if (!strcmp(a, "--headed")) {
			o->headed = 1;
		} else if (!strcmp(a, "--tenant") && v) {
			o->tenant = v;
			o->tenant_from_flag = 1;
			i++;
		} else if (!strcmp(argv[1], "mcp")) {
			int rc = cli_pw_flag("mcp", argc, argv, &i, &o->pw);

			if (rc < 0)
				return -1;
			if (rc > 0) {
				bad_option(argv[1], a);
				return -1;
			}
		} else {
			bad_option(argv[1], a);
			return -1;
		}
	}
	if (o->pw.headless == 0)
		o->headed = 1;
	if (o->tenant && !gb_fs_name_is_safe(o->tenant)) {
		fprintf(stderr,
		        "glassbox: the tenant name must be 1 to %u letters, digits, '.', '_' "
		        "or '-'\n",
		        GB_FS_MAX_NAME_BYTES);
		return -1;
	}
	return 0;
}

/* Creates the data dir and its parents (0700); 0, or -1 after saying why. */
static int make_data_dir(const char *dir)
{
	char err[512];

	if (gb_fs_mkdirs_abs(dir, err, sizeof(err)) < 0) {
		fprintf(stderr, "glassbox: cannot create the data dir %s: %s\n", dir, err);
		return -1;
	}
	return 0;
}

/* Loads the policy file (NULL path: none). Returns 0, or -1 after
 * printing what is wrong with it. *out: new reference or NULL. */
static int load_config(const char *path, json_t **out)
{
	json_error_t jerr;

	*out = NULL;
	if (!path)
		return 0;
	*out = json_load_file(path, JSON_REJECT_DUPLICATES, &jerr);
	if (!*out) {
		fprintf(stderr, "glassbox: cannot read the config %s: %s (line %d, column %d)\n",
		        path, jerr.text, jerr.line, jerr.column);
		return -1;
	}
	if (!json_is_object(*out)) {
		fprintf(stderr, "glassbox: the config %s must be a JSON object\n", path);
		json_decref(*out);
		*out = NULL;
		return -1;
	}
	return 0;
}

static void fill_config(const struct cli_opts *o, json_t *policy, struct act_config *cfg)
{
	memset(cfg, 0, sizeof(*cfg));
	cfg->data_dir = o->data_dir;
	cfg->tenant = o->tenant ? o->tenant : "local";
	cfg->chromium_path = o->chromium;
	cfg->headless = !o->headed;
	cfg->tenant_policy = policy;
	cfg->policy_source = o->config_path;
}

/* The write end of the pipe SIGTERM and SIGINT wake `glassbox mcp` with. */
static int stop_pipe_w = -1;

static void on_stop_signal(int sig)
{
	char c = (char)sig;
	int saved = errno;

	if (write(stop_pipe_w, &c, 1) < 0) {
		/* the pipe is full: a stop is already pending */
	}
	errno = saved;
}

/* Makes SIGTERM and SIGINT end `glassbox mcp` as end of input does (calls
 * finish, an open profile is sealed, the browser closes): returns the
 * pipe's read end, or -1 (then the signals keep their default action). */
static int stop_on_signals(void)
{
	struct sigaction sa;
	int fds[2];

	if (pipe2(fds, O_CLOEXEC | O_NONBLOCK) != 0)
		return -1;
	stop_pipe_w = fds[1];
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_stop_signal;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	return fds[0];
}

static int cmd_mcp(const struct cli_opts *o)
{
	struct secret_env *env_secrets = NULL;
	struct act_config cfg;
	json_t *policy = NULL;
	int rc;

	struct cli_opts eff = *o;

	if (make_data_dir(o->data_dir) < 0)
		return 1;
	if (load_config(o->config_path, &policy) < 0)
		return 2;
	if (policy && cli_pw_is_config(policy)) {
		/* Playwright MCP's config: its options; the policy stays $GLASSBOX_CONFIG's */
		if (cli_pw_config(o->config_path, policy, &eff.pw) < 0) {
			json_decref(policy);
			return 2;
		}
		json_decref(policy);
		policy = NULL;
		eff.config_path = getenv("GLASSBOX_CONFIG");
		if (eff.config_path && !eff.config_path[0])
			eff.config_path = NULL;
		if (eff.pw.headless == 0)
			eff.headed = 1;
		if (load_config(eff.config_path, &policy) < 0)
			return 2;
	}
	o = &eff;
	/* browsers and dirs a previous glassbox left when it died */
	sess_reap_orphans(o->data_dir, NULL);
	fill_config(o, policy, &cfg);
	cli_pw_fill(&o->pw, &cfg);
	cli_pw_say_sandbox(&o->pw);
	if (cfg.grant_permissions) {
		const char *p = cfg.grant_permissions;

		while (*p) {
			char name[64];
			size_t len = strcspn(p, ",");

			snprintf(name, sizeof(name), "%.*s", (int)len, p);
			if (!act_permission_known(name)) {
				fprintf(
				    stderr,
				    "glassbox mcp: --grant-permissions: \"%s\" is not a permission "
				    "glassbox can grant (geolocation, notifications, camera, "
				    "microphone, clipboard-read, clipboard-write, ...)\n",
				    name);
				json_decref(policy);
				return 2;
			}
			p += len;
			p += *p == ',';
		}
	}
	if (o->pw.secrets_path[0]) {
		char warning[PATH_MAX + 128];
		char err[PATH_MAX + 256];

		/* in memory for the server's lifetime (docs/secrets.md) */
		if (secret_env_load(o->pw.secrets_path, &env_secrets, warning, sizeof(warning), err,
		                    sizeof(err)) < 0) {
			fprintf(stderr, "glassbox mcp: --secrets: %s\n", err);
			json_decref(policy);
			return 2;
		}
		if (warning[0])
			fprintf(stderr, "glassbox mcp: --secrets: %s\n", warning);
		cfg.env_secrets = env_secrets;
	}
	/* one session per stdio server: its browser starts while the client
	 * is still initializing */
	cfg.prelaunch = 1;
	/* the client closing stdin is a clean end: an open profile is sealed */
	cfg.profile_save_at_end = 1;
	json_decref(act_egress_layers_active()); /* says now if browsers cannot be isolated */
	GB_LOGI("cli", "MCP over stdio; data dir %s", o->data_dir);
	rc = mcp_stdio_serve_until(&cfg, STDIN_FILENO, STDOUT_FILENO, stop_on_signals()) == 0 ? 0
	                                                                                      : 1;
	json_decref(policy);
	secret_env_free(env_secrets);
	return rc;
}

/* Creates DIR/run (0700) if missing and checks that this user may write
 * in the data dir, so that a data dir it cannot use is named as such
 * rather than reported as a browser that does not start. 0, or -1 after
 * saying what to do. */
static int check_data_dir_writable(const char *dir)
{
	char run_dir[PATH_MAX];
	int n = snprintf(run_dir, sizeof(run_dir), "%s/run", dir);
	int rc = -1;

	if (n < 0 || (size_t)n >= sizeof(run_dir)) {
		fprintf(stderr, "glassbox: the data dir path %s is too long\n", dir);
		goto out;
	}
	if ((mkdir(run_dir, 0700) != 0 && errno != EEXIST) || access(dir, W_OK) != 0 ||
	    access(run_dir, W_OK) != 0) {
		fprintf(stderr,
		        "glassbox: the data dir %s is not writable by this user (%s): make it "
		        "writable (chown or chmod), or pick another with --data-dir DIR or "
		        "$GLASSBOX_DATA_DIR\n",
		        dir, strerror(errno));
		goto out;
	}
	rc = 0;
out:
	return rc;
}

static int cmd_init(const struct cli_opts *o)
{
	struct act_config cfg;
	char self[PATH_MAX];
	char version[64];
	char err[512];
	ssize_t n;

	if (make_data_dir(o->data_dir) < 0 || check_data_dir_writable(o->data_dir) < 0)
		return 1;
	if (o->config_path) {
		json_t *policy = NULL;

		if (load_config(o->config_path, &policy) < 0)
			return 2;
		cli_policy_warn("glassbox init", policy, o->config_path);
		json_decref(policy);
	}
	fill_config(o, NULL, &cfg);
	if (act_browser_check(&cfg, version, sizeof(version), err, sizeof(err)) < 0) {
		fprintf(stderr, "glassbox: Chromium does not start here: %s\n", err);
		return 1;
	}
	printf("Chromium works: %s\n", version);
	{
		json_t *layers = act_egress_layers_active();
		json_t *off = json_object_get(layers, "netns_off");

		printf("Browsers in their own network namespace (egress layer 4): %s%s\n",
		       json_is_true(json_object_get(layers, "netns")) ? "yes" : "no: ",
		       off ? json_string_value(off) : "");
		json_decref(layers);
	}
	{
		char why[256];
		int on = sess_browser_sandboxed(why, sizeof(why));

		printf("Chromium's sandbox: %s%s\n",
		       on ? "on: " : "off, the browser runs as root: ", why);
	}
	n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	self[n > 0 ? n : 0] = '\0';
	printf("glassbox %s: data dir %s (tenant \"local\")\n\n"
	       "Connect an MCP client by adding this server to its configuration:\n\n"
	       "{\n"
	       "  \"mcpServers\": {\n"
	       "    \"glassbox\": {\n"
	       "      \"command\": \"%s\",\n"
	       "      \"args\": [\"mcp\", \"--data-dir\", \"%s\"]\n"
	       "    }\n"
	       "  }\n"
	       "}\n",
	       GLASSBOX_VERSION, o->data_dir, self, o->data_dir);
	return 0;
}

/* `glassbox serve`: --config is the service's config; the local tenant's
 * policy is --policy, else $GLASSBOX_CONFIG (a tenant policy, as for
 * `glassbox mcp`). A service config gives each of its tenants a policy:
 * with it, serve refuses --policy and says that it does not use
 * $GLASSBOX_CONFIG, rather than drop either unsaid. */
static int cmd_serve(const struct cli_opts *o)
{
	struct cli_serve_args a = { .data_dir = o->data_dir,
		                    .chromium = o->chromium,
		                    .headed = o->headed };

	if (o->config_path && !o->config_from_env)
		a.config_path = o->config_path;
	if (o->policy_path) {
		a.policy_path = o->policy_path;
	} else if (o->config_path && o->config_from_env) {
		a.policy_path = o->config_path;
		a.policy_from_env = 1;
	}
	if (a.config_path && a.policy_path && !a.policy_from_env) {
		fprintf(stderr,
		        "glassbox serve: --policy sets the policy of the local tenant, which "
		        "--config %s replaces: put the policy in that file's "
		        "tenants.NAME.policy (docs/service.md), or drop --config\n",
		        a.config_path);
		return 2;
	}
	if (a.config_path && a.policy_from_env) {
		/* the service config gives each tenant its policy */
		fprintf(stderr,
		        "glassbox serve: not using $GLASSBOX_CONFIG (%s), a tenant policy: the "
		        "service config %s gives each tenant its policy (tenants.NAME.policy)\n",
		        a.policy_path, a.config_path);
		a.policy_path = NULL;
		a.policy_from_env = 0;
	}
	if (o->tenant_from_flag) {
		fprintf(stderr, "glassbox serve: --tenant is for `glassbox mcp`; serve's tenants "
		                "are those of --config FILE (without it, \"local\")\n");
		return 2;
	}
	if (make_data_dir(o->data_dir) < 0)
		return 1;
	return cli_cmd_serve(&a);
}

/* `glassbox audit|report|approvals|secret|trace|har|session [--data-dir DIR] ...`: the evidence and
 * approval command lines, with the data dir picked as for every command. */
static int cmd_evidence(int argc, char **argv)
{
	struct cli_opts o;
	char **rest = calloc((size_t)argc + 1, sizeof(*rest));
	int n = 0, i, rc;

	memset(&o, 0, sizeof(o));
	default_data_dir(&o);
	for (i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--data-dir") && i + 1 < argc) {
			snprintf(o.data_dir, sizeof(o.data_dir), "%s", argv[++i]);
			continue;
		}
		rest[n++] = argv[i];
	}
	if (!strcmp(argv[1], "audit"))
		rc = evid_cli_audit(n, rest, o.data_dir);
	else if (!strcmp(argv[1], "report"))
		rc = evid_cli_report(n, rest, o.data_dir);
	else if (!strcmp(argv[1], "secret"))
		rc = cli_cmd_secret(n, rest, o.data_dir);
	else if (!strcmp(argv[1], "trace") || !strcmp(argv[1], "har") ||
	         !strcmp(argv[1], "session"))
		rc = trace_cli(n, rest, o.data_dir);
	else if (!strcmp(argv[1], "files"))
		rc = cli_cmd_files(n, rest, o.data_dir);
	else
		rc = policy_cli_approvals(n, rest, o.data_dir);
	free(rest);
	return rc;
}

/* 1 when a command's arguments ask for its help: --help or -h anywhere,
 * or "help" right after the command (`glassbox profile help`). */
static int wants_help(int argc, char **argv)
{
	int i;

	if (argc > 2 && !strcmp(argv[2], "help"))
		return 1;
	for (i = 2; i < argc; i++)
		if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h"))
			return 1;
	return 0;
}

/* `glassbox help [COMMAND | --markdown]`. */
static int cmd_help(int argc, char **argv)
{
	if (argc < 3 || (!strcmp(argv[1], "help") && argc == 3 &&
	                 (!strcmp(argv[2], "--help") || !strcmp(argv[2], "-h")))) {
		if (argc < 3)
			cli_help_general(stdout);
		else
			cli_help_command(stdout, "help");
		return 0;
	}
	if (!strcmp(argv[2], "--markdown")) {
		cli_help_markdown(stdout);
		return 0;
	}
	if (cli_help_command(stdout, argv[2]) < 0) {
		fprintf(stderr, "glassbox help: there is no command '%s'\n\n", argv[2]);
		cli_help_general(stderr);
		return 2;
	}
	return 0;
}

/* See commands.h. */
int cli_store_configure(const char *postgres_url, const char *replica)
{
	const char *env = getenv("GLASSBOX_STORE_POSTGRES");
	struct store_location loc = { .postgres = postgres_url,
		                      .replica =
		                          replica ? replica : getenv("GLASSBOX_REPLICA_ID") };
	char err[512];

	if (!loc.postgres && env && env[0])
		loc.postgres = env;
	if (loc.replica && !loc.replica[0])
		loc.replica = NULL;
	if (store_configure(&loc, err, sizeof(err)) != 0) {
		fprintf(stderr, "glassbox: %s (from %s)\n", err,
		        postgres_url ? "the config's store.postgres"
		                     : "$GLASSBOX_STORE_POSTGRES or $GLASSBOX_REPLICA_ID");
		return -1;
	}
	return 0;
}

int main(int argc, char **argv)
{
	struct cli_opts o;

	signal(SIGPIPE, SIG_IGN);
	if (argc < 2) {
		cli_help_general(stderr);
		return 2;
	}
	if (!strcmp(argv[1], "help") || !strcmp(argv[1], "--help") || !strcmp(argv[1], "-h"))
		return cmd_help(argc, argv);
	if (cli_help_has(argv[1]) && wants_help(argc, argv)) {
		cli_help_command(stdout, argv[1]);
		return 0;
	}
	if (!strcmp(argv[1], "version") || !strcmp(argv[1], "--version") ||
	    !strcmp(argv[1], "-V")) {
		printf("glassbox %s\n", GLASSBOX_VERSION);
		return 0;
	}
	if (cli_store_configure(NULL, NULL) < 0)
		return 2;
	if (!strcmp(argv[1], "profile") || !strcmp(argv[1], "keys")) {
		default_data_dir(&o);
		return !strcmp(argv[1], "profile") ? cli_cmd_profile(argc - 1, argv + 1, o.data_dir)
		                                   : cli_cmd_keys(argc - 1, argv + 1, o.data_dir);
	}
	if (!strcmp(argv[1], "audit") || !strcmp(argv[1], "report") ||
	    !strcmp(argv[1], "approvals") || !strcmp(argv[1], "secret") ||
	    !strcmp(argv[1], "trace") || !strcmp(argv[1], "har") || !strcmp(argv[1], "session") ||
	    !strcmp(argv[1], "files"))
		return cmd_evidence(argc, argv);
	if (!strcmp(argv[1], "policy"))
		return cli_cmd_policy(argc - 1, argv + 1);
	if (!strcmp(argv[1], "objects"))
		return cli_cmd_objects(argc - 1, argv + 1);
	if (!strcmp(argv[1], "tools"))
		return cli_cmd_tools(argc - 1, argv + 1);
	if (!strcmp(argv[1], "run")) {
		memset(&o, 0, sizeof(o));
		default_data_dir(&o);
		return cli_cmd_run(argc, argv, o.data_dir);
	}
	if (parse_opts(argc, argv, &o) < 0)
		return 2;
	if (!strcmp(argv[1], "mcp"))
		return cmd_mcp(&o);
	if (!strcmp(argv[1], "init"))
		return cmd_init(&o);
	if (!strcmp(argv[1], "serve"))
		return cmd_serve(&o);
	fprintf(stderr, "glassbox: unknown command '%s'\n\n", argv[1]);
	cli_help_general(stderr);
	return 2;
}

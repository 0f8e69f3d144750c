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
 *   glassbox version
 */
#include "actions/actions.h"
#include "cli/commands.h"
#include "common/fs.h"
#include "common/log.h"
#include "evidence/audit.h"
#include "mcp/mcp.h"
#include "policy/admin.h"
#include "sessions/sessions.h"

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
	const char *config_path;
	int headed;
	const char *tenant;
};

static void usage(FILE *out)
{
	fprintf(
	    out,
	    "usage: glassbox COMMAND [options]\n"
	    "\n"
	    "commands:\n"
	    "  mcp        serve the browser tools over MCP on stdin/stdout\n"
	    "  serve      serve them over MCP Streamable HTTP to the tenants of --config FILE\n"
	    "             (docs/service.md); without it, one tenant \"local\" on 127.0.0.1\n"
	    "  init       create the data dir, check that Chromium starts, print a client config\n"
	    "  approvals  list [--all] | show ID | approve ID [--reason R] | deny ID [--reason R]\n"
	    "  audit      verify [--tenant T] [--pubkey FILE] [--json] | export-key [-o FILE] |\n"
	    "             purge --tenant T --days N\n"
	    "  report     --session ID | --tenant T [--since DATE] -o FILE: the trail as HTML\n"
	    "  run        FLOW... [-j N] [--junit FILE] [--report FILE] [--vars FILE]\n"
	    "             [--profile NAME]: QA flows, see docs/flows.md and glassbox run --help\n"
	    "  profile    list | show | create | delete | revoke | export | import: encrypted\n"
	    "             browser profiles (glassbox profile help; docs/profiles.md)\n"
	    "  keys       init | rotate: the master key of the sealed profiles\n"
	    "  secret     set NAME --hosts H1,H2 [--fields K] [--tenant T] [--from-file F] |\n"
	    "             list [--tenant T] [--json] | delete NAME [--tenant T]\n"
	    "  policy     check FILE [--json]: the effective policy (defaults shown) and its\n"
	    "             warnings, or every error in it (docs/egress.md)\n"
	    "  version    print the version\n"
	    "\n"
	    "options:\n"
	    "  --data-dir DIR            state, evidence and run dirs (default "
	    "$GLASSBOX_DATA_DIR,\n"
	    "                            else $XDG_DATA_HOME/glassbox or ~/.local/share/glassbox)\n"
	    "  --chromium PATH           the Chromium binary (default /usr/lib/chromium/chromium)\n"
	    "  --config FILE             the tenant's policy (default $GLASSBOX_CONFIG): JSON "
	    "with\n"
	    "                            \"egress\" (allowed hosts, resolver overrides, see\n"
	    "                            docs/egress.md), \"require_evidence\", "
	    "\"before_screenshots\"\n"
	    "  --headed                  show the browser window (needs a display)\n"
	    "  --tenant T                the tenant `glassbox mcp` serves (default "
	    "$GLASSBOX_TENANT,\n"
	    "                            else \"local\"): its profiles, evidence and audit "
	    "trail\n");
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
	default_data_dir(o);
	if (getenv("GLASSBOX_CHROMIUM"))
		o->chromium = getenv("GLASSBOX_CHROMIUM");
	if (getenv("GLASSBOX_CONFIG") && getenv("GLASSBOX_CONFIG")[0])
		o->config_path = getenv("GLASSBOX_CONFIG");
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
			i++;
		} else if (!strcmp(a, "--headed")) {
			o->headed = 1;
		} else if (!strcmp(a, "--tenant") && v) {
			o->tenant = v;
			i++;
		} else {
			fprintf(stderr, "glassbox: unknown or incomplete option '%s'\n\n", a);
			usage(stderr);
			return -1;
		}
	}
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
	struct act_config cfg;
	json_t *policy = NULL;
	int rc;

	if (make_data_dir(o->data_dir) < 0)
		return 1;
	if (load_config(o->config_path, &policy) < 0)
		return 2;
	/* browsers and dirs a previous glassbox left when it died */
	sess_reap_orphans(o->data_dir, NULL);
	fill_config(o, policy, &cfg);
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
	return rc;
}

static int cmd_init(const struct cli_opts *o)
{
	struct act_config cfg;
	char self[PATH_MAX];
	char version[64];
	char err[512];
	ssize_t n;

	if (make_data_dir(o->data_dir) < 0)
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
	printf("glassbox %s: data dir %s (tenant \"local\", default policy)\n\n"
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

/* `glassbox serve`: its --config is the service's (never $GLASSBOX_CONFIG,
 * which is a tenant policy). */
static int cmd_serve(const struct cli_opts *o, int argc, char **argv)
{
	struct cli_serve_args a = { .data_dir = o->data_dir,
		                    .chromium = o->chromium,
		                    .headed = o->headed };
	int i;

	for (i = 2; i + 1 < argc; i++) {
		if (!strcmp(argv[i], "--config"))
			a.config_path = argv[i + 1];
	}
	if (make_data_dir(o->data_dir) < 0)
		return 1;
	return cli_cmd_serve(&a);
}

/* `glassbox audit|report|approvals [--data-dir DIR] ...`: the evidence and
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
	else
		rc = policy_cli_approvals(n, rest, o.data_dir);
	free(rest);
	return rc;
}

int main(int argc, char **argv)
{
	struct cli_opts o;

	signal(SIGPIPE, SIG_IGN);
	if (argc < 2 || !strcmp(argv[1], "help") || !strcmp(argv[1], "--help") ||
	    !strcmp(argv[1], "-h")) {
		usage(argc < 2 ? stderr : stdout);
		return argc < 2 ? 2 : 0;
	}
	if (!strcmp(argv[1], "version") || !strcmp(argv[1], "--version")) {
		printf("glassbox %s\n", GLASSBOX_VERSION);
		return 0;
	}
	if (!strcmp(argv[1], "profile") || !strcmp(argv[1], "keys")) {
		default_data_dir(&o);
		return !strcmp(argv[1], "profile") ? cli_cmd_profile(argc - 1, argv + 1, o.data_dir)
		                                   : cli_cmd_keys(argc - 1, argv + 1, o.data_dir);
	}
	if (!strcmp(argv[1], "audit") || !strcmp(argv[1], "report") ||
	    !strcmp(argv[1], "approvals") || !strcmp(argv[1], "secret"))
		return cmd_evidence(argc, argv);
	if (!strcmp(argv[1], "policy"))
		return cli_cmd_policy(argc - 1, argv + 1);
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
		return cmd_serve(&o, argc, argv);
	fprintf(stderr, "glassbox: unknown command '%s'\n\n", argv[1]);
	usage(stderr);
	return 2;
}

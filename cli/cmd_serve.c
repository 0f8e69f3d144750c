/*
 * cmd_serve.c - `glassbox serve [--config FILE]`: MCP over Streamable
 * HTTP for the tenants of the config (docs/service.md).
 *
 * Without --config it serves one tenant, "local", on 127.0.0.1:8931: its
 * token is generated on the first start, printed once, and only its
 * SHA-256 is kept, in DATA/serve-local.json (0600). Delete that file to
 * get a new token.
 *
 * SIGTERM and SIGINT stop it gracefully (mcp_http_serve); the exit status
 * is 0 after a clean stop, 1 when it could not start, 2 for a bad config.
 */
#include "cli/commands.h"

#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <limits.h>
#include <signal.h>
#include <sodium.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "actions/actions.h"
#include "common/log.h"
#include "common/metrics.h"
#include "common/util.h"
#include "mcp/serve.h"
#include "sessions/sessions.h"
#include "store/store.h"

static volatile sig_atomic_t stop_requested;

static void on_stop_signal(int sig)
{
	(void)sig;
	stop_requested = 1;
}

/* The embedded defaults: reads DATA/serve-local.json, or creates it with a
 * new token (printed once to stderr). Returns a new config root or NULL. */
static json_t *local_config(const char *data_dir)
{
	char path[PATH_MAX];
	char token[65];
	char hex[65];
	json_t *root = NULL;
	json_error_t jerr;
	char *text = NULL;
	FILE *f;
	int fd;

	snprintf(path, sizeof(path), "%s/serve-local.json", data_dir);
	root = json_load_file(path, JSON_REJECT_DUPLICATES, &jerr);
	if (root) {
		fprintf(stderr,
		        "glassbox serve: tenant \"local\" with the token printed when %s was "
		        "created (delete that file for a new token)\n",
		        path);
		goto out;
	}
	gb_random_hex(token, 32);
	mcp_auth_token_hash_hex(token, hex);
	root = json_pack("{s:{s:s, s:i}, s:{s:{s:s}}}", "listen", "host", "127.0.0.1", "port", 8931,
	                 "tenants", "local", "token_sha256", hex);
	text = root ? json_dumps(root, JSON_INDENT(2)) : NULL;
	fd = text ? open(path, O_WRONLY | O_CREAT | O_EXCL, 0600) : -1;
	f = fd >= 0 ? fdopen(fd, "w") : NULL;
	if (!f || fputs(text, f) < 0 || fclose(f) != 0) {
		fprintf(stderr, "glassbox serve: cannot write %s: %s\n", path, strerror(errno));
		if (fd >= 0 && !f)
			close(fd);
		json_decref(root);
		root = NULL;
		goto out;
	}
	fprintf(stderr,
	        "glassbox serve: tenant \"local\" created; its token (shown only now, only its "
	        "hash is kept in %s):\n\n    %s\n\n"
	        "Connect an MCP client to http://127.0.0.1:8931/mcp with the header\n"
	        "    Authorization: Bearer %s\n\n",
	        path, token, token);
out:
	sodium_memzero(token, sizeof(token));
	free(text);
	return root;
}

/* What the admin hooks read: the store, the warm pool, the egress layers. */
struct serve_state {
	struct store *store;
	struct act_pool *pool; /* NULL: no warm pool */
	json_t *egress_layers; /* act_egress_layers_active() at start */
};

/* mcp_serve_hooks.list_approvals: the pending approvals of every tenant,
 * newest first. */
static int add_approval(const struct store_approval *a, void *user)
{
	json_array_append_new(user, store_approval_to_json(a));
	return 0;
}

static json_t *list_approvals(void *user)
{
	struct store_approval_query q = { .pending_only = 1, .limit = 1000 };
	json_t *list = json_array();
	char err[256];

	struct serve_state *st = user;

	if (list && store_approval_list(st->store, &q, add_approval, list, err, sizeof(err)) != 0) {
		GB_LOGE("cli", "listing approvals failed: %s", err);
		json_decref(list);
		list = NULL;
	}
	return list;
}

/* mcp_serve_hooks.status: the egress layers, the browsers' sandbox and the warm pool, for
 * /healthz; refreshes the pool's gauge. */
static json_t *serve_status(void *user)
{
	struct serve_state *st = user;
	size_t ready = act_pool_ready(st->pool);

	char why[256];
	int sandboxed = sess_browser_sandboxed(why, sizeof(why));

	gb_metrics_gauge_set("glassbox_warm_pool_ready", NULL, (double)ready);
	return json_pack("{s:O, s:{s:b, s:s}, s:{s:I, s:I}, s:I}", "egress_layers",
	                 st->egress_layers, "browser_sandbox", "on", sandboxed, "why", why,
	                 "warm_pool", "size", (json_int_t)act_pool_size(st->pool), "ready",
	                 (json_int_t)ready, "residual_processes",
	                 (json_int_t)sess_residual_count());
}

/* Ends the browsers and removes the run dirs a glassbox killed earlier
 * left in data_dir (never those of one still running; the reaper logs what
 * it removed). */
static void reap_orphans(const char *data_dir)
{
	if (sess_reap_orphans(data_dir, NULL) < 0)
		GB_LOGW("cli", "the run dirs of %s could not be checked for orphaned browsers",
		        data_dir);
}

/* Opens (and frees) a session of each tenant without a browser, so a
 * policy that act_session_new() refuses stops the start with the tenant
 * named, instead of failing each of its sessions later. Returns 0 or -1. */
static int check_policies(const struct mcp_serve_config *cfg, const struct act_config *base)
{
	struct act_session *as = NULL;
	struct act_config c;
	char err[512];
	size_t i;

	for (i = 0; i < cfg->n_tenants; i++) {
		c = *base;
		c.tenant = cfg->tenants[i].name;
		c.tenant_policy = cfg->tenants[i].policy;
		c.prelaunch = 0;
		err[0] = '\0';
		if (act_session_new(&c, &as, err, sizeof(err)) != 0) {
			fprintf(stderr,
			        "glassbox serve: the policy of tenant %s is not valid: %s\n",
			        cfg->tenants[i].name, err[0] ? err : "(no reason given)");
			return -1;
		}
		act_session_free(as);
		as = NULL;
	}
	return 0;
}

/* See commands.h. */
int cli_cmd_serve(const struct cli_serve_args *a)
{
	struct mcp_serve_config *cfg = NULL;
	struct mcp_serve_hooks hooks = { .list_approvals = list_approvals, .status = serve_status };
	struct serve_state st = { 0 };
	struct act_config base;
	struct store *store = NULL;
	struct sigaction sa;
	json_error_t jerr;
	json_t *root = NULL;
	char err[512];
	int rc = 2;

	if (a->config_path) {
		root = json_load_file(a->config_path, JSON_REJECT_DUPLICATES, &jerr);
		if (!root) {
			fprintf(stderr,
			        "glassbox serve: cannot read the config %s: %s (line %d, column "
			        "%d)\n",
			        a->config_path, jerr.text, jerr.line, jerr.column);
			goto out;
		}
	} else {
		root = local_config(a->data_dir);
		if (!root) {
			rc = 1;
			goto out;
		}
	}
	if (mcp_serve_config_parse(root, &cfg, err, sizeof(err)) < 0) {
		fprintf(stderr, "glassbox serve: the config %s is not valid: %s\n",
		        a->config_path ? a->config_path : "(embedded)", err);
		goto out;
	}
	cli_policy_serve_prepare(cfg, a->config_path);
	rc = 1;
	if (store_open(a->data_dir, &store, err, sizeof(err)) != 0) {
		fprintf(stderr, "glassbox serve: cannot open the store in %s: %s\n", a->data_dir,
		        err);
		goto out;
	}
	st.store = store;
	hooks.user = &st;
	memset(&base, 0, sizeof(base));
	base.data_dir = a->data_dir;
	base.chromium_path = a->chromium;
	base.headless = !a->headed;
	if (check_policies(cfg, &base) < 0) {
		rc = 2;
		goto out;
	}
	reap_orphans(a->data_dir);
	st.egress_layers = act_egress_layers_active(); /* says once when layer 4 is off */
	if (act_pool_start(&base, (size_t)cfg->warm_pool, &st.pool, err, sizeof(err)) < 0) {
		fprintf(stderr, "glassbox serve: cannot start the warm pool: %s\n", err);
		goto out;
	}
	base.pool = st.pool;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_stop_signal;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	GB_LOGI("cli", "glassbox serve: %zu tenant(s); data dir %s", cfg->n_tenants, a->data_dir);
	rc = mcp_http_serve(cfg, &base, &hooks, &stop_requested) == 0 ? 0 : 1;
out:
	act_pool_stop(st.pool); /* after mcp_http_serve freed every session */
	json_decref(st.egress_layers);
	store_close(store);
	cli_policy_serve_release(cfg);
	mcp_serve_config_free(cfg);
	json_decref(root);
	return rc;
}

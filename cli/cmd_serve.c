/*
 * cmd_serve.c - `glassbox serve [--config FILE]`: MCP over Streamable
 * HTTP for the tenants of the config (docs/service.md).
 *
 * Without --config it serves one tenant, "local", on 127.0.0.1:8931: its
 * token is generated on the first start, printed once, and only its
 * SHA-256 is kept, in DATA/serve-local.json (0600). Delete that file to
 * get a new token. Its policy is the file --policy (or $GLASSBOX_CONFIG)
 * names, read at each start and never copied into serve-local.json.
 *
 * SIGTERM and SIGINT stop it gracefully (mcp_http_serve); the exit status
 * is 0 after a clean stop, 1 when it could not start, 2 for a bad config.
 */
#include "cli/commands.h"

#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <sodium.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "actions/actions.h"
#include "blob/blob.h"
#include "common/log.h"
#include "common/metrics.h"
#include "common/util.h"
#include "evidence/ship.h"
#include "mcp/serve.h"
#include "profiles/profiles.h"
#include "sessions/sessions.h"
#include "store/store.h"

/* Set by the handler, read by the front thread: any thread may take the
 * signal, so an atomic (lock-free, safe in a handler), not a sig_atomic_t. */
static atomic_int stop_requested;

static void on_stop_signal(int sig)
{
	(void)sig;
	atomic_store(&stop_requested, 1);
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

/* Reads the local tenant's policy from the JSON file a->policy_path
 * before anything is created, or says that it has the default policy.
 * Returns 0 with *out a new reference (NULL: the default), or -1 after
 * saying what is wrong with the file. */
static int load_local_policy(const struct cli_serve_args *a, json_t **out)
{
	json_error_t jerr;
	int rc = -1;

	*out = NULL;
	if (!a->policy_path) {
		fprintf(stderr, "glassbox serve: tenant \"local\" has the default policy: public "
		                "hosts allowed, private and loopback addresses refused (--policy "
		                "FILE sets another)\n");
		rc = 0;
		goto out;
	}
	*out = json_load_file(a->policy_path, JSON_REJECT_DUPLICATES, &jerr);
	if (!*out) {
		fprintf(stderr,
		        "glassbox serve: cannot read the policy %s%s: %s (line %d, column %d)\n",
		        a->policy_path, a->policy_from_env ? " ($GLASSBOX_CONFIG)" : "", jerr.text,
		        jerr.line, jerr.column);
		goto out;
	}
	if (!json_is_object(*out)) {
		fprintf(stderr, "glassbox serve: the policy %s must be a JSON object\n",
		        a->policy_path);
		json_decref(*out);
		*out = NULL;
		goto out;
	}
	fprintf(stderr, "glassbox serve: tenant \"local\" has the policy %s%s\n", a->policy_path,
	        a->policy_from_env ? " (from $GLASSBOX_CONFIG)" : "");
	rc = 0;
out:
	return rc;
}

/* Tenant name -> the id of its credential, for the audit trail's actor:
 * "sha256:" and the first 12 hex digits of the token's SHA-256, which the
 * service config lists (never the token). A new object, or NULL. */
static json_t *credential_ids(const struct mcp_serve_config *cfg)
{
	json_t *ids = json_object();
	char id[32];
	size_t i, k;

	for (i = 0; ids && i < cfg->n_tenants; i++) {
		memcpy(id, "sha256:", 7);
		for (k = 0; k < 6; k++)
			snprintf(id + 7 + 2 * k, sizeof(id) - 7 - 2 * k, "%02x",
			         cfg->tenants[i].token_sha256[k]);
		json_object_set_new(ids, cfg->tenants[i].name, json_string(id));
	}
	return ids;
}

/* What the admin hooks read: the store, the warm pool, the egress layers. */
struct serve_state {
	struct store *store;
	struct act_pool *pool; /* NULL: no warm pool */
	json_t *egress_layers; /* act_egress_layers_active() at start */
	const char *data_dir;  /* borrowed */
	/* the unowned browsers of the data dir, counted at most once a second
	 * (a walk of /proc) */
	pthread_mutex_t unowned_lock;
	int64_t unowned_at_ms; /* {unowned_lock} when last counted; 0: never */
	size_t unowned;        /* {unowned_lock} */
};

#define UNOWNED_RECOUNT_MS 1000

/* The browsers of the data dir no live session owns (sess_unowned_browsers),
 * counted again when the last count is over UNOWNED_RECOUNT_MS old. */
static size_t unowned_browsers(struct serve_state *st)
{
	int64_t now = gb_now_ms();
	size_t n;

	pthread_mutex_lock(&st->unowned_lock);
	if (!st->unowned_at_ms || now - st->unowned_at_ms >= UNOWNED_RECOUNT_MS) {
		st->unowned = sess_unowned_browsers(st->data_dir);
		st->unowned_at_ms = now;
	}
	n = st->unowned;
	pthread_mutex_unlock(&st->unowned_lock);
	return n;
}

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
	                 (json_int_t)(sess_residual_count() + unowned_browsers(st)));
}

/* Ends the browsers and removes the run dirs a glassbox killed earlier
 * left in data_dir (never those of one still running; the reaper logs what
 * it removed). */
/* Names an orphan of this replica's last run in the log. */
static void on_registry_orphan(const struct store_session *s, void *user)
{
	(void)user;
	GB_LOGI("cli", "session %s of tenant %s ended with the last run of replica %s", s->session,
	        s->tenant, s->replica);
}

/* Ends the browsers the last run of this data dir left, and removes the
 * sessions of this replica's dead runs from the session registry. */
static void reap_orphans(const char *data_dir, struct store *store)
{
	char err[512];

	if (sess_reap_orphans(data_dir, NULL) < 0)
		GB_LOGW("cli", "the run dirs of %s could not be checked for orphaned browsers",
		        data_dir);
	if (store_session_reap(store, on_registry_orphan, NULL, NULL, err, sizeof(err)) < 0)
		GB_LOGW("cli", "the session registry could not be cleaned: %s", err);
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

/* Opens the object store, keeps sealed profiles in it and starts shipping
 * the audit trail to it as replica (the store's name for this replica).
 * Returns 0 (nothing to do without an object store) or -1 with the reason
 * printed. */
static int start_shipping(const struct mcp_serve_config *cfg, const char *data_dir,
                          const char *replica, struct blob_store **store, struct evid_ship **ship)
{
	char err[1024];

	if (!cfg->has_object_store)
		return 0;
	if (blob_open(&cfg->object_store, store, err, sizeof(err)) != 0 ||
	    evid_ship_start(data_dir, *store, replica, cfg->audit_ship_interval_ms, ship, err,
	                    sizeof(err)) != 0) {
		fprintf(stderr, "glassbox serve: cannot ship evidence to the object store: %s\n",
		        err);
		return -1;
	}
	prof_use_object_store(*store);
	GB_LOGI("cli",
	        "shipping the audit trail to %s as replica %s every %d ms; sealed profiles "
	        "are kept there",
	        blob_describe(*store), replica, cfg->audit_ship_interval_ms);
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
	struct blob_store *objects = NULL;
	struct evid_ship *ship = NULL;
	struct sigaction sa;
	json_error_t jerr;
	json_t *root = NULL;
	json_t *local_policy = NULL;
	json_t *credentials = NULL;
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
		if (load_local_policy(a, &local_policy) < 0)
			goto out;
		root = local_config(a->data_dir);
		if (!root) {
			rc = 1;
			goto out;
		}
		if (local_policy)
			json_object_set(json_object_get(json_object_get(root, "tenants"), "local"),
			                "policy", local_policy);
	}
	if (mcp_serve_config_parse(root, &cfg, err, sizeof(err)) < 0) {
		fprintf(stderr, "glassbox serve: the config %s is not valid: %s\n",
		        a->config_path ? a->config_path : "(embedded)", err);
		goto out;
	}
	cli_policy_serve_prepare(cfg, a->config_path);
	rc = 1;
	/* every store handle of this process (sessions, profiles, the artifact
	 * index) goes there; the config's store wins over the environment's, and
	 * replica.id (else $GLASSBOX_REPLICA_ID, else the host name) names it */
	if (cli_store_configure(cfg->store_postgres[0] ? cfg->store_postgres : NULL,
	                        cfg->replica_id[0] ? cfg->replica_id : NULL) < 0)
		goto out;
	if (store_open(a->data_dir, &store, err, sizeof(err)) != 0) {
		fprintf(stderr, "glassbox serve: cannot open the store in %s: %s\n", a->data_dir,
		        err);
		goto out;
	}
	st.store = store;
	st.data_dir = a->data_dir;
	pthread_mutex_init(&st.unowned_lock, NULL);
	hooks.user = &st;
	hooks.store = store;
	memset(&base, 0, sizeof(base));
	base.data_dir = a->data_dir;
	base.chromium_path = a->chromium;
	base.headless = !a->headed;
	credentials = credential_ids(cfg);
	base.credentials = credentials;
	if (check_policies(cfg, &base) < 0) {
		rc = 2;
		goto out;
	}
	reap_orphans(a->data_dir, store);
	st.egress_layers = act_egress_layers_active(); /* says once when layer 4 is off */
	if (act_pool_start(&base, (size_t)cfg->warm_pool, &st.pool, err, sizeof(err)) < 0) {
		fprintf(stderr, "glassbox serve: cannot start the warm pool: %s\n", err);
		goto out;
	}
	base.pool = st.pool;
	act_shared_set_linger_ms((int64_t)cfg->shared_browser_linger_s * 1000);
	if (start_shipping(cfg, a->data_dir, store_replica(store), &objects, &ship) < 0)
		goto out;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_stop_signal;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	GB_LOGI("cli", "glassbox serve: %zu tenant(s); data dir %s; store %s, replica %s",
	        cfg->n_tenants, a->data_dir, store_backend_name(store), store_replica(store));
	rc = mcp_http_serve(cfg, &base, &hooks, &stop_requested) == 0 ? 0 : 1;
out:
	act_pool_stop(st.pool);      /* after mcp_http_serve freed every session */
	act_shared_stop();           /* the shared browsers left lingering */
	evid_ship_stop(ship);        /* after the last records: ships them */
	prof_use_object_store(NULL); /* every session (and its lease) is gone */
	blob_close(objects);
	json_decref(st.egress_layers);
	if (st.data_dir) /* the lock was made with it */
		pthread_mutex_destroy(&st.unowned_lock);
	store_close(store);
	cli_policy_serve_release(cfg);
	mcp_serve_config_free(cfg);
	json_decref(credentials);
	json_decref(local_policy);
	json_decref(root);
	return rc;
}

/*
 * storage_state.c - a profile to and from Playwright's storageState JSON
 * ({"cookies": [...], "origins": [{"origin", "localStorage": [{"name",
 * "value"}]}]}), through a real Chromium running on the profile.
 *
 * The state is read and written through the browser's page
 * (storage_page.c: cookies over CDP, each origin's local storage on an
 * empty page answered without any network). The browser is also given
 * a proxy that refuses everything and a resolver that resolves nothing,
 * so nothing can leave the machine. A profile that keeps a browser
 * context's storage state (isolation "context", context_profile.c) is
 * that JSON already: export reads it without a browser.
 *
 * Export reads a read-only copy (nothing is sealed back); the origins
 * read are those the profile recorded (glassbox-origins.json, kept by
 * sessions that visited them) plus those the caller names. Import opens
 * the profile for writing (creating it), sets everything, closes the
 * browser cleanly and seals a new version.
 */
#include "actions/actions-private.h"

#include "cdp/cdp.h"
#include "common/fs.h"
#include "common/log.h"
#include "profiles/profiles.h"
#include "sessions/sessions.h"

#include <sodium.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define STEP_TIMEOUT_MS 15000

struct browser {
	struct prof_lease *lease;
	struct sess *sess;
	struct act_storage_page page;
};

/* Starts Chromium on the lease's dir, cut off from the network, with the
 * interceptor on its page. */
static int start_browser(const struct act_config *cfg, struct browser *b, char *err, size_t errlen)
{
	static const char *const no_network[] = { "--host-resolver-rules=MAP * ~NOTFOUND", NULL };
	struct sess_options opt = { 0 };
	char run_dir[4096];

	if (gb_pathf(run_dir, sizeof(run_dir), "%s/run", cfg->data_dir) < 0) {
		snprintf(err, errlen, "the data dir path is too long");
		return -1;
	}
	opt.run_dir = run_dir;
	opt.chromium_path = cfg->chromium_path;
	opt.headed = !cfg->headless;
	opt.proxy_server = "http://127.0.0.1:9"; /* refuses: nothing leaves */
	opt.extra_args = no_network;
	opt.user_data_dir = prof_lease_dir(b->lease);
	opt.close_grace_ms = 10000;
	if (sess_launch(&opt, &b->sess, err, errlen) < 0)
		return -1;
	act_profile_restore_session_cookies(sess_cdp(b->sess), prof_lease_dir(b->lease));
	return act_storage_page_start(&b->page, sess_cdp(b->sess),
	                              sess_page_session_id(sess_current_page(b->sess)), NULL, 0,
	                              err, errlen);
}

static void stop_browser(struct browser *b)
{
	act_storage_page_stop(&b->page);
	sess_close(b->sess); /* Browser.close: Chromium flushes the profile */
	b->sess = NULL;
}

int act_profile_export(const struct act_config *cfg, const char *user, const char *name,
                       const char *const *origins, json_t **state, char *err, size_t errlen)
{
	struct prof_open_opts o = { 0 };
	struct browser b;
	json_t *origins_to_read = NULL;
	size_t i;
	int rc = -1;

	*state = NULL;
	memset(&b, 0, sizeof(b));
	o.tenant = cfg->tenant ? cfg->tenant : "local";
	o.user = user;
	o.name = name;
	o.readonly = 1;
	if (prof_lease_open(cfg->data_dir, &o, &b.lease, err, errlen) < 0)
		goto out;
	if (act_context_profile_kind(b.lease) == ACT_PROFILE_STORAGE_STATE) {
		/* a context's storage state: the JSON itself, no browser */
		rc = act_context_profile_read(b.lease, state, err, errlen);
		goto out;
	}
	origins_to_read = act_profile_known_origins(prof_lease_dir(b.lease));
	for (i = 0; origins && origins[i]; i++) {
		if (!act_storage_is_origin(origins[i])) {
			snprintf(err, errlen,
			         "%.200s is not an origin: give scheme://host[:port], e.g. "
			         "https://example.com",
			         origins[i]);
			goto out;
		}
		json_array_append_new(origins_to_read, json_string(origins[i]));
	}
	if (start_browser(cfg, &b, err, errlen) < 0 ||
	    act_storage_read(&b.page, origins_to_read, state, err, errlen) < 0)
		goto out;
	rc = 0;
out:
	stop_browser(&b);
	prof_lease_close(b.lease);
	json_decref(origins_to_read);
	return rc;
}

int act_profile_import(const struct act_config *cfg, const char *user, const char *name,
                       json_t *state, int64_t *version, char *err, size_t errlen)
{
	struct prof_open_opts o = { 0 };
	struct browser b;
	json_t *cdp_cookies = NULL;
	json_t *visited = json_object();
	int rc = -1;

	memset(&b, 0, sizeof(b));
	if (act_storage_check(state, &cdp_cookies, err, errlen) < 0)
		goto out;
	o.tenant = cfg->tenant ? cfg->tenant : "local";
	o.user = user;
	o.name = name;
	o.create = 1;
	o.holder = "glassbox profile import";
	if (prof_lease_open(cfg->data_dir, &o, &b.lease, err, errlen) < 0)
		goto out;
	if (act_context_profile_kind(b.lease) == ACT_PROFILE_STORAGE_STATE) {
		/* a context's storage state: replaced by the JSON, no browser */
		if (act_context_profile_write(b.lease, state, err, errlen) < 0 ||
		    prof_lease_save(b.lease, version, err, errlen) < 0)
			goto out;
		rc = 0;
		goto out;
	}
	if (start_browser(cfg, &b, err, errlen) < 0 ||
	    act_storage_write(&b.page, state, visited, err, errlen) < 0)
		goto out;
	/* keep the session cookies and the origins with the profile */
	act_profile_keep_side_state(sess_cdp(b.sess), prof_lease_dir(b.lease), visited);
	stop_browser(&b);
	if (prof_lease_save(b.lease, version, err, errlen) < 0)
		goto out;
	rc = 0;
out:
	stop_browser(&b);
	prof_lease_close(b.lease);
	json_decref(visited);
	json_decref(cdp_cookies);
	return rc;
}

/*
 * storage_state.c - a profile to and from Playwright's storageState JSON
 * ({"cookies": [...], "origins": [{"origin", "localStorage": [{"name",
 * "value"}]}]}), through a real Chromium running on the profile.
 *
 * Cookies go through Storage.getCookies / Storage.setCookies. Local
 * storage is per origin: the page is sent to the origin with every
 * request paused (Fetch, request stage) and answered by us with an empty
 * page, so the origin's storage can be read or written by script without
 * any network; every other request is failed. The browser is also given
 * a proxy that refuses everything and a resolver that resolves nothing,
 * so nothing can leave the machine.
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
#define MAX_ORIGINS 500
#define BLANK_PAGE "<!doctype html><title>glassbox storage</title>"

/* The interceptor's state: the origin being visited. */
struct intercept {
	struct cdp_conn *cdp;
	char origin[512];
};

/* Answers a paused request of the current origin with the blank page,
 * fails every other one. */
static void on_paused(void *user, const char *session_id, const char *method, json_t *params)
{
	struct intercept *ic = user;
	const char *id = json_string_value(json_object_get(params, "requestId"));
	const char *url =
	    json_string_value(json_object_get(json_object_get(params, "request"), "url"));
	char body[128];
	size_t olen = strlen(ic->origin);
	uint64_t call;

	(void)method;
	if (!id)
		return;
	if (url && !strncmp(url, ic->origin, olen) && (url[olen] == '/' || url[olen] == '\0') &&
	    json_is_string(json_object_get(params, "resourceType")) &&
	    !strcmp(json_string_value(json_object_get(params, "resourceType")), "Document")) {
		sodium_bin2base64(body, sizeof(body), (const unsigned char *)BLANK_PAGE,
		                  strlen(BLANK_PAGE), sodium_base64_VARIANT_ORIGINAL);
		if (cdp_send(ic->cdp, session_id, "Fetch.fulfillRequest",
		             json_pack("{s:s, s:i, s:[{s:s, s:s}], s:s}", "requestId", id,
		                       "responseCode", 200, "responseHeaders", "name",
		                       "Content-Type", "value", "text/html; charset=utf-8", "body",
		                       body),
		             &call) == 0)
			cdp_forget(ic->cdp, call);
		return;
	}
	if (cdp_send(ic->cdp, session_id, "Fetch.failRequest",
	             json_pack("{s:s, s:s}", "requestId", id, "errorReason", "BlockedByClient"),
	             &call) == 0)
		cdp_forget(ic->cdp, call);
}

/* 1 when s is an http(s) origin: scheme://host[:port], nothing after. */
static int is_origin(const char *s)
{
	const char *host;

	if (!s || strlen(s) >= 500)
		return 0;
	if (!strncmp(s, "http://", 7))
		host = s + 7;
	else if (!strncmp(s, "https://", 8))
		host = s + 8;
	else
		return 0;
	return host[0] && strcspn(host, "/?#@ \\") == strlen(host);
}

struct browser {
	struct prof_lease *lease;
	struct sess *sess;
	struct cdp_conn *cdp;
	const char *psid;
	struct intercept ic;
	int listener;
};

/* Starts Chromium on the lease's dir, cut off from the network, with the
 * interceptor on its page. */
static int start_browser(const struct act_config *cfg, struct browser *b, char *err, size_t errlen)
{
	static const char *const no_network[] = { "--host-resolver-rules=MAP * ~NOTFOUND", NULL };
	struct sess_options opt = { 0 };
	struct cdp_error cerr;
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
	b->cdp = sess_cdp(b->sess);
	act_profile_restore_session_cookies(b->cdp, prof_lease_dir(b->lease));
	b->psid = sess_page_session_id(sess_current_page(b->sess));
	b->ic.cdp = b->cdp;
	b->listener = cdp_on(b->cdp, b->psid, "Fetch.requestPaused", on_paused, &b->ic);
	if (b->listener < 0 || cdp_call(b->cdp, b->psid, "Fetch.enable",
	                                json_pack("{s:[{s:s}]}", "patterns", "urlPattern", "*"),
	                                STEP_TIMEOUT_MS, NULL, &cerr) < 0) {
		snprintf(err, errlen, "cannot intercept the browser's requests: %s", cerr.message);
		return -1;
	}
	return 0;
}

/* Sends the page to origin (answered by the interceptor) and waits for it. */
static int visit_origin(struct browser *b, const char *origin, char *err, size_t errlen)
{
	struct cdp_waiter *w = NULL;
	struct cdp_error cerr = { 0 };
	json_t *res = NULL;
	char url[520];
	int rc = -1;

	snprintf(b->ic.origin, sizeof(b->ic.origin), "%s", origin);
	snprintf(url, sizeof(url), "%s/", origin);
	if (cdp_arm(b->cdp, b->psid, "Page.loadEventFired", &w) < 0)
		goto out;
	if (cdp_call(b->cdp, b->psid, "Page.navigate", json_pack("{s:s}", "url", url),
	             STEP_TIMEOUT_MS, &res, &cerr) < 0 ||
	    json_object_get(res, "errorText")) {
		snprintf(
		    err, errlen, "cannot open origin %s in the browser: %s", origin,
		    cerr.message[0]
		        ? cerr.message
		        : gb_or(json_string_value(json_object_get(res, "errorText")), "failed"));
		cdp_disarm(b->cdp, w);
		goto out;
	}
	json_decref(res);
	res = NULL;
	if (cdp_wait_event(b->cdp, w, STEP_TIMEOUT_MS, NULL, &cerr) < 0) {
		snprintf(err, errlen, "origin %s did not load: %s", origin, cerr.message);
		goto out;
	}
	rc = 0;
out:
	json_decref(res);
	return rc;
}

/* Evaluates expression in the page; *value a new reference. */
static int page_eval(struct browser *b, const char *expression, json_t **value, char *err,
                     size_t errlen)
{
	struct cdp_error cerr;
	json_t *res = NULL;
	int rc = -1;

	*value = NULL;
	if (cdp_call(b->cdp, b->psid, "Runtime.evaluate",
	             json_pack("{s:s, s:b}", "expression", expression, "returnByValue", 1),
	             STEP_TIMEOUT_MS, &res, &cerr) < 0) {
		snprintf(err, errlen, "the page did not answer: %s", cerr.message);
	} else if (json_object_get(res, "exceptionDetails")) {
		snprintf(err, errlen, "the page's script failed while reading its storage");
	} else {
		*value = json_incref(json_object_get(json_object_get(res, "result"), "value"));
		rc = *value ? 0 : -1;
	}
	json_decref(res);
	return rc;
}

static void stop_browser(struct browser *b)
{
	if (b->sess && b->listener > 0)
		cdp_off(b->cdp, b->listener);
	sess_close(b->sess); /* Browser.close: Chromium flushes the profile */
	b->sess = NULL;
}

/* A CDP cookie as Playwright writes it (new reference). */
static json_t *cookie_to_playwright(json_t *c)
{
	json_t *out = json_object();
	json_t *expires = json_object_get(c, "expires");
	const char *same_site = json_string_value(json_object_get(c, "sameSite"));

	json_object_set(out, "name", json_object_get(c, "name"));
	json_object_set(out, "value", json_object_get(c, "value"));
	json_object_set(out, "domain", json_object_get(c, "domain"));
	json_object_set(out, "path", json_object_get(c, "path"));
	json_object_set_new(out, "expires",
	                    json_is_true(json_object_get(c, "session")) || !json_is_number(expires)
	                        ? json_integer(-1)
	                        : json_real(json_number_value(expires)));
	json_object_set_new(out, "httpOnly",
	                    json_boolean(json_is_true(json_object_get(c, "httpOnly"))));
	json_object_set_new(out, "secure",
	                    json_boolean(json_is_true(json_object_get(c, "secure"))));
	json_object_set_new(out, "sameSite", json_string(same_site ? same_site : "Lax"));
	return out;
}

/* A Playwright cookie as a CDP CookieParam (new reference), or NULL with
 * a reason when it is not one. */
static json_t *cookie_from_playwright(json_t *c, size_t i, char *err, size_t errlen)
{
	const char *name = json_string_value(json_object_get(c, "name"));
	const char *value = json_string_value(json_object_get(c, "value"));
	const char *domain = json_string_value(json_object_get(c, "domain"));
	const char *path = json_string_value(json_object_get(c, "path"));
	const char *same_site = json_string_value(json_object_get(c, "sameSite"));
	json_t *expires = json_object_get(c, "expires");
	json_t *out;

	if (!json_is_object(c) || !name || !value || !domain || !domain[0]) {
		snprintf(err, errlen, "cookies[%zu] needs string members name, value and domain",
		         i);
		return NULL;
	}
	if (same_site && strcmp(same_site, "Strict") && strcmp(same_site, "Lax") &&
	    strcmp(same_site, "None")) {
		snprintf(err, errlen, "cookies[%zu].sameSite must be Strict, Lax or None", i);
		return NULL;
	}
	out = json_pack("{s:s, s:s, s:s, s:s, s:b, s:b}", "name", name, "value", value, "domain",
	                domain, "path", path ? path : "/", "httpOnly",
	                json_is_true(json_object_get(c, "httpOnly")), "secure",
	                json_is_true(json_object_get(c, "secure")));
	if (same_site)
		json_object_set_new(out, "sameSite", json_string(same_site));
	if (json_is_number(expires) && json_number_value(expires) > 0)
		json_object_set_new(out, "expires", json_real(json_number_value(expires)));
	return out;
}

static const char read_storage_js[] =
    "(() => { const out = []; for (let i = 0; i < localStorage.length; i++) { "
    "const k = localStorage.key(i); out.push({name: k, value: localStorage.getItem(k)}); } "
    "return out; })()";

int act_profile_export(const struct act_config *cfg, const char *user, const char *name,
                       const char *const *origins, json_t **state, char *err, size_t errlen)
{
	struct prof_open_opts o = { 0 };
	struct browser b;
	struct cdp_error cerr;
	json_t *res = NULL;
	json_t *cookies = json_array();
	json_t *out_origins = json_array();
	json_t *origins_to_read = NULL;
	json_t *items = NULL;
	json_t *c;
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
	origins_to_read = act_profile_known_origins(prof_lease_dir(b.lease));
	for (i = 0; origins && origins[i]; i++) {
		if (!is_origin(origins[i])) {
			snprintf(err, errlen,
			         "%.200s is not an origin: give scheme://host[:port], e.g. "
			         "https://example.com",
			         origins[i]);
			goto out;
		}
		json_array_append_new(origins_to_read, json_string(origins[i]));
	}
	if (start_browser(cfg, &b, err, errlen) < 0)
		goto out;
	if (cdp_call(b.cdp, NULL, "Storage.getCookies", NULL, STEP_TIMEOUT_MS, &res, &cerr) < 0) {
		snprintf(err, errlen, "cannot read the profile's cookies: %s", cerr.message);
		goto out;
	}
	json_array_foreach(json_object_get(res, "cookies"), i, c)
	    json_array_append_new(cookies, cookie_to_playwright(c));
	json_array_foreach(origins_to_read, i, c)
	{
		const char *origin = json_string_value(c);
		size_t j;
		int dup = 0;

		if (!is_origin(origin) || i >= MAX_ORIGINS)
			continue;
		for (j = 0; j < i; j++)
			dup |= !strcmp(
			    origin,
			    gb_or(json_string_value(json_array_get(origins_to_read, j)), ""));
		if (dup)
			continue;
		if (visit_origin(&b, origin, err, errlen) < 0 ||
		    page_eval(&b, read_storage_js, &items, err, errlen) < 0)
			goto out;
		if (json_array_size(items) > 0)
			json_array_append_new(out_origins, json_pack("{s:s, s:O}", "origin", origin,
			                                             "localStorage", items));
		json_decref(items);
		items = NULL;
	}
	*state = json_pack("{s:O, s:O}", "cookies", cookies, "origins", out_origins);
	rc = 0;
out:
	stop_browser(&b);
	prof_lease_close(b.lease);
	json_decref(items);
	json_decref(origins_to_read);
	json_decref(res);
	json_decref(cookies);
	json_decref(out_origins);
	return rc;
}

/* Checks the shape of a storageState document before anything runs. */
static int check_state(json_t *state, json_t **cdp_cookies, char *err, size_t errlen)
{
	json_t *c;
	json_t *o;
	json_t *item;
	size_t i, j;

	*cdp_cookies = json_array();
	if (!json_is_object(state) || !json_is_array(json_object_get(state, "cookies")) ||
	    !json_is_array(json_object_get(state, "origins"))) {
		snprintf(err, errlen,
		         "not a storageState: expected {\"cookies\": [...], \"origins\": "
		         "[...]} as Playwright writes it");
		return -1;
	}
	json_array_foreach(json_object_get(state, "cookies"), i, c)
	{
		json_t *p = cookie_from_playwright(c, i, err, errlen);

		if (!p)
			return -1;
		json_array_append_new(*cdp_cookies, p);
	}
	json_array_foreach(json_object_get(state, "origins"), i, o)
	{
		const char *origin = json_string_value(json_object_get(o, "origin"));

		if (!is_origin(origin) || !json_is_array(json_object_get(o, "localStorage")) ||
		    i >= MAX_ORIGINS) {
			snprintf(err, errlen,
			         "origins[%zu] needs \"origin\" (scheme://host[:port]) and "
			         "\"localStorage\" (an array)",
			         i);
			return -1;
		}
		json_array_foreach(json_object_get(o, "localStorage"), j,
		                   item) if (!json_is_string(json_object_get(item, "name")) ||
		                             !json_is_string(json_object_get(item, "value")))
		{
			snprintf(err, errlen,
			         "origins[%zu].localStorage[%zu] needs string members "
			         "name and value",
			         i, j);
			return -1;
		}
	}
	return 0;
}

int act_profile_import(const struct act_config *cfg, const char *user, const char *name,
                       json_t *state, int64_t *version, char *err, size_t errlen)
{
	struct prof_open_opts o = { 0 };
	struct browser b;
	struct cdp_error cerr;
	json_t *cdp_cookies = NULL;
	json_t *visited = json_object();
	json_t *origin;
	json_t *count = NULL;
	char *items = NULL;
	char *js = NULL;
	size_t i;
	int rc = -1;

	memset(&b, 0, sizeof(b));
	if (check_state(state, &cdp_cookies, err, errlen) < 0)
		goto out;
	o.tenant = cfg->tenant ? cfg->tenant : "local";
	o.user = user;
	o.name = name;
	o.create = 1;
	o.holder = "glassbox profile import";
	if (prof_lease_open(cfg->data_dir, &o, &b.lease, err, errlen) < 0)
		goto out;
	if (start_browser(cfg, &b, err, errlen) < 0)
		goto out;
	if (json_array_size(cdp_cookies) > 0 &&
	    cdp_call(b.cdp, NULL, "Storage.setCookies", json_pack("{s:O}", "cookies", cdp_cookies),
	             STEP_TIMEOUT_MS, NULL, &cerr) < 0) {
		snprintf(err, errlen, "the browser refused the cookies: %s", cerr.message);
		goto out;
	}
	json_array_foreach(json_object_get(state, "origins"), i, origin)
	{
		const char *name_of = json_string_value(json_object_get(origin, "origin"));

		items = json_dumps(json_object_get(origin, "localStorage"), JSON_COMPACT);
		if (!items ||
		    asprintf(&js,
		             "(() => { const items = %s; for (const it of items) "
		             "localStorage.setItem(it.name, it.value); return items.length; "
		             "})()",
		             items) < 0) {
			js = NULL;
			snprintf(err, errlen, "out of memory");
			goto out;
		}
		if (visit_origin(&b, name_of, err, errlen) < 0 ||
		    page_eval(&b, js, &count, err, errlen) < 0)
			goto out;
		json_object_set_new(visited, name_of, json_true());
		json_decref(count);
		count = NULL;
		free(items);
		free(js);
		items = js = NULL;
	}
	/* leave the origin so its storage is committed, then keep the session
	 * cookies and the origins with the profile */
	visit_origin(&b, "http://glassbox.invalid", err, errlen);
	act_profile_keep_side_state(b.cdp, prof_lease_dir(b.lease), visited);
	stop_browser(&b);
	if (prof_lease_save(b.lease, version, err, errlen) < 0)
		goto out;
	rc = 0;
out:
	stop_browser(&b);
	prof_lease_close(b.lease);
	json_decref(count);
	free(items);
	free(js);
	json_decref(visited);
	json_decref(cdp_cookies);
	return rc;
}

/*
 * storage_page.c - a browser context's storage as Playwright's
 * storageState JSON ({"cookies": [...], "origins": [{"origin",
 * "localStorage": [{"name", "value"}]}]}), read and written through one
 * page of that context.
 *
 * Cookies go through Storage.getCookies / Storage.setCookies (of the
 * given browser context, or the browser's default one). Local storage is
 * per origin: the page is sent to the origin with every request paused
 * (Fetch, request stage) and answered here with an empty page, so the
 * origin's storage can be read or written by script without any network;
 * every other request is failed. Used by storage_state.c (a profile's
 * user-data-dir, through a browser of its own) and context_profile.c (a
 * context-mode session's profile, through a side page of its context).
 *
 * Cookie values and storage items are secrets: no log line or error here
 * carries them.
 */
#include "actions/actions-private.h"

#include "cdp/cdp.h"
#include "common/log.h"

#include <sodium.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define STEP_TIMEOUT_MS 15000
#define MAX_ORIGINS 500
#define BLANK_PAGE "<!doctype html><title>glassbox storage</title>"

/* Answers a paused request of the current origin with the blank page,
 * fails every other one. */
static void on_paused(void *user, const char *session_id, const char *method, json_t *params)
{
	struct act_storage_page *sp = user;
	const char *id = json_string_value(json_object_get(params, "requestId"));
	const char *url =
	    json_string_value(json_object_get(json_object_get(params, "request"), "url"));
	char body[128];
	size_t olen = strlen(sp->origin);
	uint64_t call;

	(void)method;
	if (!id)
		return;
	if (url && olen && !strncmp(url, sp->origin, olen) &&
	    (url[olen] == '/' || url[olen] == '\0') &&
	    json_is_string(json_object_get(params, "resourceType")) &&
	    !strcmp(json_string_value(json_object_get(params, "resourceType")), "Document")) {
		sodium_bin2base64(body, sizeof(body), (const unsigned char *)BLANK_PAGE,
		                  strlen(BLANK_PAGE), sodium_base64_VARIANT_ORIGINAL);
		if (cdp_send(sp->cdp, session_id, "Fetch.fulfillRequest",
		             json_pack("{s:s, s:i, s:[{s:s, s:s}], s:s}", "requestId", id,
		                       "responseCode", 200, "responseHeaders", "name",
		                       "Content-Type", "value", "text/html; charset=utf-8", "body",
		                       body),
		             &call) == 0)
			cdp_forget(sp->cdp, call);
		return;
	}
	if (cdp_send(sp->cdp, session_id, "Fetch.failRequest",
	             json_pack("{s:s, s:s}", "requestId", id, "errorReason", "BlockedByClient"),
	             &call) == 0)
		cdp_forget(sp->cdp, call);
}

int act_storage_is_origin(const char *s)
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

int act_storage_page_start(struct act_storage_page *sp, struct cdp_conn *cdp, const char *psid,
                           const char *context_id, int resume, char *err, size_t errlen)
{
	struct cdp_error cerr = { 0 };

	memset(sp, 0, sizeof(*sp));
	sp->cdp = cdp;
	snprintf(sp->psid, sizeof(sp->psid), "%s", psid);
	if (context_id)
		snprintf(sp->context_id, sizeof(sp->context_id), "%s", context_id);
	sp->listener = cdp_on(cdp, sp->psid, "Fetch.requestPaused", on_paused, sp);
	if (sp->listener < 0 ||
	    cdp_call(cdp, sp->psid, "Fetch.enable",
	             json_pack("{s:[{s:s}]}", "patterns", "urlPattern", "*"), STEP_TIMEOUT_MS, NULL,
	             &cerr) < 0 ||
	    cdp_call(cdp, sp->psid, "Page.enable", NULL, STEP_TIMEOUT_MS, NULL, &cerr) < 0 ||
	    (resume && cdp_call(cdp, sp->psid, "Runtime.runIfWaitingForDebugger", NULL,
	                        STEP_TIMEOUT_MS, NULL, &cerr) < 0)) {
		snprintf(err, errlen, "cannot intercept the storage page's requests: %s",
		         cerr.message[0] ? cerr.message : "no listener");
		return -1;
	}
	return 0;
}

void act_storage_page_stop(struct act_storage_page *sp)
{
	if (sp->cdp && sp->listener > 0)
		cdp_off(sp->cdp, sp->listener);
	sp->listener = 0;
	sp->cdp = NULL;
}

/* Sends the page to origin (answered by the interceptor) and waits for it. */
static int visit_origin(struct act_storage_page *sp, const char *origin, char *err, size_t errlen)
{
	struct cdp_waiter *w = NULL;
	struct cdp_error cerr = { 0 };
	json_t *res = NULL;
	char url[520];
	int rc = -1;

	snprintf(sp->origin, sizeof(sp->origin), "%s", origin);
	snprintf(url, sizeof(url), "%s/", origin);
	if (cdp_arm(sp->cdp, sp->psid, "Page.loadEventFired", &w) < 0)
		goto out;
	if (cdp_call(sp->cdp, sp->psid, "Page.navigate", json_pack("{s:s}", "url", url),
	             STEP_TIMEOUT_MS, &res, &cerr) < 0 ||
	    json_object_get(res, "errorText")) {
		snprintf(
		    err, errlen, "cannot open origin %s in the browser: %s", origin,
		    cerr.message[0]
		        ? cerr.message
		        : gb_or(json_string_value(json_object_get(res, "errorText")), "failed"));
		cdp_disarm(sp->cdp, w);
		goto out;
	}
	json_decref(res);
	res = NULL;
	if (cdp_wait_event(sp->cdp, w, STEP_TIMEOUT_MS, NULL, &cerr) < 0) {
		snprintf(err, errlen, "origin %s did not load: %s", origin, cerr.message);
		goto out;
	}
	rc = 0;
out:
	json_decref(res);
	return rc;
}

/* Evaluates expression in the page; *value a new reference. */
static int page_eval(struct act_storage_page *sp, const char *expression, json_t **value, char *err,
                     size_t errlen)
{
	struct cdp_error cerr;
	json_t *res = NULL;
	int rc = -1;

	*value = NULL;
	if (cdp_call(sp->cdp, sp->psid, "Runtime.evaluate",
	             json_pack("{s:s, s:b}", "expression", expression, "returnByValue", 1),
	             STEP_TIMEOUT_MS, &res, &cerr) < 0) {
		snprintf(err, errlen, "the page did not answer: %s", cerr.message);
	} else if (json_object_get(res, "exceptionDetails")) {
		snprintf(err, errlen, "the page's script failed while using its storage");
	} else {
		*value = json_incref(json_object_get(json_object_get(res, "result"), "value"));
		rc = *value ? 0 : -1;
	}
	json_decref(res);
	return rc;
}

/* Storage.getCookies/setCookies params for sp's context (new reference). */
static json_t *cookie_params(const struct act_storage_page *sp, json_t *cookies)
{
	json_t *p = json_object();

	if (cookies)
		json_object_set(p, "cookies", cookies);
	if (sp->context_id[0])
		json_object_set_new(p, "browserContextId", json_string(sp->context_id));
	return p;
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

int act_storage_check(json_t *state, json_t **cdp_cookies, char *err, size_t errlen)
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

		if (!act_storage_is_origin(origin) ||
		    !json_is_array(json_object_get(o, "localStorage")) || i >= MAX_ORIGINS) {
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

static const char read_storage_js[] =
    "(() => { const out = []; for (let i = 0; i < localStorage.length; i++) { "
    "const k = localStorage.key(i); out.push({name: k, value: localStorage.getItem(k)}); } "
    "return out; })()";

int act_storage_read(struct act_storage_page *sp, json_t *origins, json_t **state, char *err,
                     size_t errlen)
{
	struct cdp_error cerr;
	json_t *res = NULL;
	json_t *cookies = json_array();
	json_t *out_origins = json_array();
	json_t *items = NULL;
	json_t *c;
	size_t i;
	int rc = -1;

	*state = NULL;
	if (cdp_call(sp->cdp, NULL, "Storage.getCookies", cookie_params(sp, NULL), STEP_TIMEOUT_MS,
	             &res, &cerr) < 0) {
		snprintf(err, errlen, "cannot read the cookies: %s", cerr.message);
		goto out;
	}
	json_array_foreach(json_object_get(res, "cookies"), i, c)
	    json_array_append_new(cookies, cookie_to_playwright(c));
	json_array_foreach(origins, i, c)
	{
		const char *origin = json_string_value(c);
		size_t j;
		int dup = 0;

		if (!act_storage_is_origin(origin) || i >= MAX_ORIGINS)
			continue;
		for (j = 0; j < i; j++)
			dup |= !strcmp(origin,
			               gb_or(json_string_value(json_array_get(origins, j)), ""));
		if (dup)
			continue;
		if (visit_origin(sp, origin, err, errlen) < 0 ||
		    page_eval(sp, read_storage_js, &items, err, errlen) < 0)
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
	json_decref(items);
	json_decref(res);
	json_decref(cookies);
	json_decref(out_origins);
	return rc;
}

int act_storage_write(struct act_storage_page *sp, json_t *state, json_t *visited, char *err,
                      size_t errlen)
{
	struct cdp_error cerr;
	json_t *cdp_cookies = NULL;
	json_t *origin;
	json_t *count = NULL;
	char *items = NULL;
	char *js = NULL;
	size_t i;
	int rc = -1;

	if (act_storage_check(state, &cdp_cookies, err, errlen) < 0)
		goto out;
	if (json_array_size(cdp_cookies) > 0 &&
	    cdp_call(sp->cdp, NULL, "Storage.setCookies", cookie_params(sp, cdp_cookies),
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
		if (visit_origin(sp, name_of, err, errlen) < 0 ||
		    page_eval(sp, js, &count, err, errlen) < 0)
			goto out;
		if (visited)
			json_object_set_new(visited, name_of, json_true());
		json_decref(count);
		count = NULL;
		free(items);
		free(js);
		items = js = NULL;
	}
	/* leave the last origin so that its storage is committed */
	if (json_array_size(json_object_get(state, "origins")) > 0)
		visit_origin(sp, "http://glassbox.invalid", err, errlen);
	err[0] = '\0';
	rc = 0;
out:
	json_decref(count);
	free(items);
	free(js);
	json_decref(cdp_cookies);
	return rc;
}

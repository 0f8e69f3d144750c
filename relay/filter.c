/*
 * filter.c - the allowlist of the CDP relay (relay.h, docs/cdp.md).
 *
 * Design note
 * - The model is an allowlist of domains: a method of a domain not listed
 *   as relayed is refused (rule "domain-allowlist"). Inside relayed
 *   domains, a few methods would change the browser's network path, its
 *   lifecycle, or reach past the session; each has a rule of its own that
 *   refuses it, or rewrites its parameters so that it stays inside the
 *   session (new tabs in the session's context, new contexts on its
 *   proxy, downloads in its own dir).
 * - Pure and table-driven: no I/O, no state beyond the scope it is given.
 */
#include "relay/relay.h"

#include <stdio.h>
#include <string.h>

/* The domains relayed. Everything else is refused. */
static const char *const relayed_domains[] = {
	"Accessibility",
	"Animation",
	"Audits",
	"BackgroundService",
	"Browser",
	"CacheStorage",
	"Console",
	"CSS",
	"Database",
	"Debugger",
	"DeviceOrientation",
	"DOM",
	"DOMDebugger",
	"DOMSnapshot",
	"DOMStorage",
	"Emulation",
	"EventBreakpoints",
	"Fetch",
	"HeadlessExperimental",
	"HeapProfiler",
	"IndexedDB",
	"Input",
	"Inspector",
	"IO",
	"LayerTree",
	"Log",
	"Media",
	"Network",
	"Overlay",
	"Page",
	"Performance",
	"PerformanceTimeline",
	"Preload",
	"Profiler",
	"Runtime",
	"Schema",
	"Security",
	"ServiceWorker",
	"Storage",
	"Target",
	"WebAudio",
	"WebAuthn",
};

/* Methods of relayed domains that are refused, with their rule. */
static const struct {
	const char *method;
	const char *rule;
	const char *why;
} refused[] = {
	{ "Browser.close", "browser-lifecycle",
	  "the browser belongs to the session: end it with DELETE /sessions/ID" },
	{ "Browser.crash", "browser-lifecycle", "the browser belongs to the session" },
	{ "Browser.crashGpuProcess", "browser-lifecycle", "the browser belongs to the session" },
	{ "Browser.executeBrowserCommand", "browser-lifecycle",
	  "browser commands are not relayed" },
	{ "Browser.getBrowserCommandLine", "system", "the browser's command line is not shown" },
	{ "Browser.getHistograms", "system", "browser internals are not shown" },
	{ "Browser.getHistogram", "system", "browser internals are not shown" },
	{ "Browser.addPrivacySandboxEnrollmentOverride", "system", "not relayed" },
	{ "Target.sendMessageToTarget", "nested-messages",
	  "it would carry messages past the filter: use flattened sessions (sessionId)" },
	{ "Target.exposeDevToolsProtocol", "nested-messages",
	  "it would give a page the protocol itself" },
	{ "Target.setRemoteLocations", "network-path", "the browser discovers no remote targets" },
	{ "Target.openDevTools", "browser-lifecycle", "no DevTools window is opened" },
	{ "Network.loadNetworkResource", "network-path",
	  "the browser process would fetch the URL itself: load it in a page instead" },
	{ "Network.setCookieControls", "network-path", "cookie controls are the session's" },
	{ "Page.setDownloadBehavior", "downloads",
	  "deprecated: use Browser.setDownloadBehavior, whose path stays in the session" },
	{ "Storage.clearDataForOrigin", "storage-contexts",
	  "it reaches every context: clear with Network or Storage.clearCookies instead" },
	{ "Storage.clearDataForStorageKey", "storage-contexts", "it reaches every context" },
};

static int in_list(const char *const *list, size_t n, const char *s, size_t len)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (strlen(list[i]) == len && !strncmp(list[i], s, len))
			return 1;
	return 0;
}

/* 1 when ctx (may be NULL) is the session's context or one the client created. */
static int own_context(const struct relay_scope *sc, const char *ctx)
{
	size_t i;

	if (!ctx)
		return 1;
	if (sc->context_id[0] && !strcmp(ctx, sc->context_id))
		return 1;
	for (i = 0; i < sc->n_client_contexts; i++)
		if (!strcmp(ctx, sc->client_contexts[i]))
			return 1;
	return 0;
}

/* 1 when url may be opened by the client: http(s) and about:blank only
 * (egress layer 1, as for the tools). */
static int url_ok(const char *url)
{
	return !url || !url[0] || !strncmp(url, "http://", 7) || !strncmp(url, "https://", 8) ||
	       !strcmp(url, "about:blank");
}

static enum relay_verdict refuse(char *rule, size_t rulelen, char *why, size_t whylen,
                                 const char *r, const char *w)
{
	snprintf(rule, rulelen, "%s", r);
	snprintf(why, whylen, "%s", w);
	return RELAY_REFUSE;
}

/* See relay.h. */
enum relay_verdict relay_filter(const struct relay_scope *sc, const char *method, json_t *params,
                                const char *sid, char *rule, size_t rulelen, char *why,
                                size_t whylen)
{
	const char *dot = strchr(method, '.');
	const char *s;
	size_t i;

	(void)sid;
	rule[0] = why[0] = '\0';
	if (!dot || dot == method || !dot[1])
		return refuse(rule, rulelen, why, whylen, "domain-allowlist",
		              "a method is named Domain.method");
	if (!in_list(relayed_domains, sizeof(relayed_domains) / sizeof(relayed_domains[0]), method,
	             (size_t)(dot - method)))
		return refuse(rule, rulelen, why, whylen, "domain-allowlist",
		              "its domain is not relayed (docs/cdp.md lists the domains that are)");
	for (i = 0; i < sizeof(refused) / sizeof(refused[0]); i++)
		if (!strcmp(method, refused[i].method))
			return refuse(rule, rulelen, why, whylen, refused[i].rule, refused[i].why);

	if (!strcmp(method, "Target.createBrowserContext")) {
		if (json_object_get(params, "proxyServer") ||
		    json_object_get(params, "proxyBypassList"))
			return refuse(rule, rulelen, why, whylen, "network-path",
			              "a context's proxy is the session's: leave proxyServer out");
		if (!sc->proxy_server[0] || !params)
			return RELAY_FORWARD;
		json_object_set_new(params, "proxyServer", json_string(sc->proxy_server));
		json_object_set_new(params, "proxyBypassList", json_string("<-loopback>"));
		return RELAY_REWRITTEN;
	}
	if (!strcmp(method, "Target.createTarget")) {
		s = json_string_value(json_object_get(params, "url"));
		if (!url_ok(s))
			return refuse(rule, rulelen, why, whylen, "url-scheme",
			              "only http, https and about:blank are opened");
		s = json_string_value(json_object_get(params, "browserContextId"));
		if (s && !own_context(sc, s))
			return refuse(rule, rulelen, why, whylen, "contexts",
			              "that browser context is not this session's");
		if (!s && sc->context_id[0] && params) {
			json_object_set_new(params, "browserContextId",
			                    json_string(sc->context_id));
			return RELAY_REWRITTEN;
		}
		return RELAY_FORWARD;
	}
	if (!strcmp(method, "Target.disposeBrowserContext")) {
		s = json_string_value(json_object_get(params, "browserContextId"));
		if (!s || (sc->context_id[0] && !strcmp(s, sc->context_id)) || !own_context(sc, s))
			return refuse(rule, rulelen, why, whylen, "contexts",
			              "only contexts this client created may be disposed of");
		return RELAY_FORWARD;
	}
	if (!strcmp(method, "Page.navigate")) {
		s = json_string_value(json_object_get(params, "url"));
		if (!url_ok(s))
			return refuse(rule, rulelen, why, whylen, "url-scheme",
			              "only http, https and about:blank are opened");
		return RELAY_FORWARD;
	}
	if (!strcmp(method, "Browser.setDownloadBehavior")) {
		s = json_string_value(json_object_get(params, "behavior"));
		if (!own_context(sc,
		                 json_string_value(json_object_get(params, "browserContextId"))))
			return refuse(rule, rulelen, why, whylen, "contexts",
			              "that browser context is not this session's");
		if (!s || !strcmp(s, "deny") || !strcmp(s, "default"))
			return RELAY_FORWARD;
		if (!params)
			return RELAY_FORWARD;
		/* downloads stay in the browser's own dir, removed with the session */
		json_object_set_new(params, "downloadPath", json_string(sc->downloads_dir));
		return RELAY_REWRITTEN;
	}
	if (!strncmp(method, "Storage.", 8) || !strcmp(method, "Browser.grantPermissions") ||
	    !strcmp(method, "Browser.resetPermissions") ||
	    !strcmp(method, "Browser.setPermission")) {
		if (!own_context(sc,
		                 json_string_value(json_object_get(params, "browserContextId"))))
			return refuse(rule, rulelen, why, whylen, "storage-contexts",
			              "that browser context is not this session's");
	}
	return RELAY_FORWARD;
}

/* See relay.h. */
json_t *relay_filter_table(void)
{
	json_t *out = json_array();
	size_t i;

	for (i = 0; i < sizeof(relayed_domains) / sizeof(relayed_domains[0]); i++)
		json_array_append_new(out, json_string(relayed_domains[i]));
	return out;
}

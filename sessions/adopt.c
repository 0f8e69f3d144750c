/*
 * adopt.c - a pre-launched browser becomes one session's own.
 *
 * A warm pool launches browsers before anyone asks for them, so nothing
 * of a session's policy can be on their command line: their flags are the
 * policy-independent ones (no local DNS, WebRTC proxied only, QUIC off,
 * and a proxy that refuses everything). While a browser waits in the pool,
 * sess_prepare_context() readies everything that can be known in advance:
 * a fresh browser context whose proxy is the address where its future
 * session's egress proxy will listen (Target.createBrowserContext
 * proxyServer; popups and frames stay in their opener's context), and one
 * tab in it, attached and set up (while paused) by the pool's target hook;
 * the browser's blank tab in the default context is closed, so nothing of
 * a session runs outside that context. No session has used the context:
 * it holds no one's cookies, storage or cache. sess_adopt() then only
 * binds what belongs to the session that takes the browser (its target
 * hook for every target from then on) and checks that the tab answers.
 */
#include "sessions/sessions-private.h"

#include "cdp/cdp.h"
#include "common/log.h"
#include "common/util.h"

#include <jansson.h>
#include <stdio.h>
#include <string.h>

/* The tabs being closed (their target ids), for old_tabs_gone. */
struct old_tabs {
	struct sess *s;
	char ids[SESS_MAX_PAGES][SESS_ID_LEN];
	size_t n;
};

/* cdp_service() predicate: none of the old tabs is attached any more. */
static int old_tabs_gone(void *user)
{
	struct old_tabs *o = user;
	size_t i;

	for (i = 0; i < o->n; i++)
		if (sess_page_by_target(o->s, o->ids[i]))
			return 0;
	return 1;
}

/* See sessions-private.h. */
int sess_create_context(struct sess *s, const char *proxy_server, const char *proxy_bypass_list,
                        int timeout_ms, char *err, size_t errlen)
{
	struct cdp_error cerr;
	json_t *params = json_pack("{s:b}", "disposeOnDetach", 1), *res = NULL;
	const char *ctx;
	int rc = -1;

	if (proxy_server) {
		json_object_set_new(params, "proxyServer", json_string(proxy_server));
		json_object_set_new(params, "proxyBypassList",
		                    json_string(proxy_bypass_list ? proxy_bypass_list : ""));
	}
	if (cdp_call(s->cdp, NULL, "Target.createBrowserContext", params, timeout_ms, &res, &cerr) <
	    0) {
		snprintf(err, errlen, "cannot create the session's browser context: %s",
		         cerr.message);
		goto out;
	}
	ctx = json_string_value(json_object_get(res, "browserContextId"));
	if (!ctx || strlen(ctx) >= sizeof(s->context_id)) {
		snprintf(err, errlen,
		         "cannot create the session's browser context: Chromium returned no "
		         "usable id");
		goto out;
	}
	snprintf(s->context_id, sizeof(s->context_id), "%s", ctx);
	rc = 0;
out:
	json_decref(res);
	return rc;
}

int sess_prepare_context(struct sess *s, const char *proxy_server, const char *proxy_bypass_list,
                         int timeout_ms, char *err, size_t errlen)
{
	struct old_tabs old = { .s = s };
	struct cdp_error cerr;
	size_t i;
	int rc = -1;

	if (s->context_id[0] || s->state != SESS_READY || !proxy_server ||
	    strlen(proxy_server) >= sizeof(s->context_proxy)) {
		snprintf(err, errlen, "this browser cannot be readied for a session: %s",
		         s->context_id[0]         ? "it already was"
		         : !proxy_server          ? "no proxy given"
		         : s->state != SESS_READY ? sess_state_name(s->state)
		                                  : "the proxy's address is too long");
		return -1;
	}
	if (sess_create_context(s, proxy_server, proxy_bypass_list, timeout_ms, err, errlen) < 0)
		goto out;
	snprintf(s->context_proxy, sizeof(s->context_proxy), "%s", proxy_server);
	old.n = s->n_pages;
	for (i = 0; i < old.n; i++)
		snprintf(old.ids[i], sizeof(old.ids[i]), "%s", s->pages[i]->target_id);
	if (sess_open_page(s, timeout_ms, err, errlen) < 0)
		goto out;
	for (i = 0; i < old.n; i++)
		if (cdp_call(s->cdp, NULL, "Target.closeTarget",
		             json_pack("{s:s}", "targetId", old.ids[i]), timeout_ms, NULL,
		             &cerr) < 0) {
			snprintf(err, errlen,
			         "cannot close the pre-launched browser's blank tab: %s",
			         cerr.message);
			goto out;
		}
	/* ready only once they are gone: the context's tab is the only one */
	if (!old_tabs_gone(&old) &&
	    (cdp_service(s->cdp, timeout_ms, old_tabs_gone, &old) < 0 || !old_tabs_gone(&old))) {
		snprintf(err, errlen, "the pre-launched browser's blank tab did not close");
		goto out;
	}
	rc = 0;
out:
	return rc;
}

const char *sess_context_proxy(const struct sess *s)
{
	return s->context_proxy;
}

int sess_adopt(struct sess *s, const struct sess_adopt_options *o, char *err, size_t errlen)
{
	int timeout_ms = o->timeout_ms > 0 ? o->timeout_ms : 10000;
	int64_t started = gb_now_ms();
	struct sess_page *p = sess_current_page(s);
	struct cdp_error cerr;

	if (s->adopted || !s->context_id[0] || s->state != SESS_READY || !p) {
		snprintf(err, errlen, "this browser cannot be adopted: %s",
		         s->adopted               ? "it already was"
		         : !s->context_id[0]      ? "it was not readied for a session"
		         : s->state != SESS_READY ? sess_state_name(s->state)
		                                  : "its tab is gone");
		return -1;
	}
	s->on_target = o->on_target;
	s->on_target_user = o->on_target_user;
	if (cdp_call(s->cdp, p->session_id, "Runtime.evaluate",
	             json_pack("{s:s}", "expression", "0"), timeout_ms, NULL, &cerr) < 0) {
		snprintf(err, errlen, "the pre-launched browser's tab does not answer: %s",
		         cerr.message);
		return -1;
	}
	s->adopted = 1;
	s->time_to_ready_ms = gb_now_ms() - started;
	GB_LOGI("sessions", "session %s: a pre-launched browser adopted in %lld ms", s->id,
	        (long long)s->time_to_ready_ms);
	return 0;
}

const char *sess_context_id(const struct sess *s)
{
	return s->context_id;
}

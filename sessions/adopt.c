/*
 * adopt.c - a pre-launched browser becomes one session's own.
 *
 * A warm pool launches browsers before anyone asks for them, so nothing
 * of a session's policy can be on their command line: their flags are the
 * policy-independent ones (no local DNS, WebRTC proxied only, QUIC off,
 * and a proxy that refuses everything). sess_adopt() gives the browser to
 * a session: from then on every new target gets the session's setup hook
 * (e.g. Fetch interception, while it is paused), and the session's pages
 * live in a fresh browser context whose proxy is the session's own egress
 * proxy (Target.createBrowserContext proxyServer; popups and frames stay
 * in their opener's context). The pool's blank tab in the default context
 * is closed, so nothing of the session runs outside that context.
 */
#include "sessions/sessions-private.h"

#include "cdp/cdp.h"
#include "common/log.h"
#include "common/util.h"

#include <jansson.h>
#include <stdio.h>
#include <string.h>

int sess_adopt(struct sess *s, const struct sess_adopt_options *o, char *err, size_t errlen)
{
	char old[SESS_MAX_PAGES][SESS_ID_LEN];
	int timeout_ms = o->timeout_ms > 0 ? o->timeout_ms : 10000;
	int64_t started = gb_now_ms();
	struct cdp_error cerr;
	json_t *params, *res = NULL;
	const char *ctx;
	size_t n_old, i;
	int rc = -1;

	if (s->context_id[0] || s->state != SESS_READY) {
		snprintf(err, errlen, "this browser cannot be adopted: %s",
		         s->context_id[0] ? "it already was" : sess_state_name(s->state));
		return -1;
	}
	s->on_target = o->on_target;
	s->on_target_user = o->on_target_user;
	params = json_pack("{s:b}", "disposeOnDetach", 1);
	if (o->proxy_server) {
		json_object_set_new(params, "proxyServer", json_string(o->proxy_server));
		json_object_set_new(params, "proxyBypassList",
		                    json_string(o->proxy_bypass_list ? o->proxy_bypass_list : ""));
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
		         "cannot create the session's browser context: Chromium returned "
		         "no usable id");
		goto out;
	}
	snprintf(s->context_id, sizeof(s->context_id), "%s", ctx);
	n_old = s->n_pages;
	for (i = 0; i < n_old; i++)
		snprintf(old[i], sizeof(old[i]), "%s", s->pages[i]->target_id);
	if (sess_open_page(s, timeout_ms, err, errlen) < 0)
		goto out;
	for (i = 0; i < n_old; i++)
		if (cdp_call(s->cdp, NULL, "Target.closeTarget",
		             json_pack("{s:s}", "targetId", old[i]), timeout_ms, NULL, &cerr) < 0) {
			snprintf(err, errlen,
			         "cannot close the pre-launched browser's blank tab: %s",
			         cerr.message);
			goto out;
		}
	s->time_to_ready_ms = gb_now_ms() - started;
	GB_LOGI("sessions", "session %s: a pre-launched browser adopted in %lld ms", s->id,
	        (long long)s->time_to_ready_ms);
	rc = 0;
out:
	json_decref(res);
	return rc;
}

const char *sess_context_id(const struct sess *s)
{
	return s->context_id;
}

/*
 * egress.c - where a session's browser may go, enforced in three layers
 * that each hold alone (DESIGN.md, Security layers):
 *
 *   1. tools: browser_navigate checks the URL against the policy first;
 *   2. CDP Fetch: every target (page, iframe, worker, popup) is set up
 *      with Fetch interception while still paused, and each request is
 *      checked before it leaves; a refused one fails as BlockedByClient;
 *   3. the egress proxy: Chromium reaches the network only through it
 *      (--proxy-server, no local DNS, QUIC off, WebRTC proxied); it
 *      resolves names itself and checks every address.
 *   4. the network namespace, where the process may create one (root):
 *      Chromium is started in a namespace of its own with nothing but
 *      loopback; the proxy listens inside it and connects out from the
 *      service's namespace, so the proxy is the browser's only route, and
 *      the DevTools port lives on that namespace's loopback, where only
 *      the CDP connection (opened from inside, sessions/netns.c) and the
 *      browser itself are.
 *
 * Whatever the policy allows, no layer lets a page reach the browser's own
 * DevTools port on loopback (rule "devtools-port").
 *
 * Refusals from the proxy thread and from the worker land in one queue
 * (s->refusals, under s->lock); the pipeline drains it into the result of
 * the action during which they happened, and into the audit log.
 */
#include "actions/actions-private.h"

#include "cdp/cdp.h"
#include "common/log.h"
#include "common/metrics.h"
#include "evidence/audit.h"
#include "policy/egress.h"
#include "policy/policy.h"
#include "sessions/sessions.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define REFUSALS_MAX 500

/* Queues a refusal for the running (or next) action. Any thread. */
static void queue_refusal(struct act_session *s, const struct policy_refusal *r)
{
	json_t *j = policy_refusal_to_json(r);
	int own = policy_refusal_is_browser_own(r->layer, r->host);

	/* the browser's own requests: counted and audited under their own rule
	 * ("browser-background", the policy's rule kept), not the page's */
	gb_metrics_counter_add("glassbox_egress_blocked_total",
	                       own ? "browser-background" : r->layer, 1);
	if (!j)
		return;
	if (own) {
		json_object_set_new(j, "policy_rule", json_string(r->rule));
		json_object_set_new(j, "rule", json_string("browser-background"));
		json_object_set_new(j, "browser_own", json_true());
	}
	pthread_mutex_lock(&s->lock);
	if (json_array_size(s->refusals) < REFUSALS_MAX)
		json_array_append_new(s->refusals, j);
	else
		json_decref(j);
	pthread_mutex_unlock(&s->lock);
}

static void on_proxy_refusal(void *user, const struct policy_refusal *r)
{
	queue_refusal(user, r);
}

/* The layers of "egress_layers" (default all on; netns only where the
 * process may create a namespace, and an explicit true where it cannot is
 * an error). Turning a layer off is for drills that prove each of the
 * others holds alone; never for production policies. */
static int read_layers(struct act_session *s, const struct policy_tenant *policy, char *err,
                       size_t errlen)
{
	const struct policy_tenant_settings *st = policy_tenant_settings(policy);
	char why[300];

	s->layer_tool = st->layer_tool;
	s->layer_fetch = st->layer_fetch;
	s->layer_proxy = st->layer_proxy;
	s->layer_netns = policy_netns_available(why, sizeof(why));
	if (st->layer_netns > 0 && !s->layer_netns) {
		snprintf(err, errlen,
		         "\"egress_layers\": netns is true but this process cannot put "
		         "browsers in a network namespace: %s",
		         why);
		return -1;
	}
	if (st->layer_netns == 0)
		s->layer_netns = 0;
	if (!s->layer_tool || !s->layer_fetch || !s->layer_proxy || st->layer_netns == 0)
		GB_LOGW("actions",
		        "egress layers turned off by the policy: tool %s, fetch %s, proxy %s, "
		        "netns %s",
		        s->layer_tool ? "on" : "OFF", s->layer_fetch ? "on" : "OFF",
		        s->layer_proxy ? "on" : "OFF", s->layer_netns ? "on" : "OFF");
	return 0;
}

/* Layer 4: the session's network namespace, and the proxy's listening
 * socket inside it (o->listen_fd). Both are those of the pooled browser
 * the session holds (act_pool_hold), when it took one; the namespace is
 * that of the tenant's shared browser in isolation "context"
 * (act_shared_acquire); else new ones. A
 * failure here is an error, not a quiet fallback: the process could make
 * namespaces when it started. */
static int start_netns(struct act_session *s, struct policy_proxy_options *o, char *err,
                       size_t errlen)
{
	char perr[300];
	int rc = -1;

	if (!s->layer_netns)
		return 0;
	if (s->netns_fd <= 0 && policy_netns_create(&s->netns_fd, perr, sizeof(perr)) < 0) {
		s->netns_fd = 0;
		snprintf(err, errlen, "cannot isolate the browser (egress layer 4): %s", perr);
		goto out;
	}
	if (s->layer_proxy && o->listen_fd <= 0 &&
	    policy_proxy_listen_in_netns(s->netns_fd, "127.0.0.1", 0, &o->listen_fd, perr,
	                                 sizeof(perr)) < 0) {
		snprintf(err, errlen, "cannot isolate the browser (egress layer 4): %s", perr);
		goto out;
	}
	rc = 0;
out:
	return rc;
}

int act_egress_start(struct act_session *s, const struct policy_tenant *policy, char *err,
                     size_t errlen)
{
	struct policy_proxy_options o = { 0 };
	char perr[512];
	int rc = -1;

	s->refusals = json_array();
	if (read_layers(s, policy, err, errlen) < 0)
		goto out;
	if (policy_tenant_settings(policy)->isolation_context &&
	    act_shared_acquire(s, err, errlen) < 0)
		goto out;
	/* the session's own copy of the tenant's rules (parsed once, with the
	 * rest of the policy), which its narrowings replace */
	if (policy_egress_narrow(policy_tenant_egress(policy), NULL, &s->egress, perr,
	                         sizeof(perr)) < 0) {
		snprintf(err, errlen, "cannot copy the egress policy: %s", perr);
		goto out;
	}
	o.session_id = s->id;
	o.on_refusal = on_proxy_refusal;
	o.user = s;
	/* a pooled browser readied for a proxy on o.listen_fd (and, with layer
	 * 4, in its namespace), taken before the proxy starts there */
	if (s->layer_proxy)
		act_pool_hold(s, &o.listen_fd);
	if (start_netns(s, &o, err, errlen) < 0)
		goto out;
	if (!s->layer_proxy) {
		rc = 0;
		goto out;
	}
	if (policy_proxy_start(s->egress, &o, &s->proxy, perr, sizeof(perr)) < 0) {
		snprintf(err, errlen, "cannot start the egress proxy: %s", perr);
		goto out;
	}
	policy_proxy_chromium_flags(s->proxy, &s->proxy_flags);
	rc = 0;
out:
	return rc;
}

void act_egress_stop(struct act_session *s)
{
	act_pool_drop_held(s);
	policy_proxy_stop(s->proxy);
	s->proxy = NULL;
	if (s->netns_fd > 0)
		close(s->netns_fd);
	s->netns_fd = 0;
	act_shared_release(s);
	policy_egress_free(s->egress);
	s->egress = NULL;
	while (s->n_egress_retired > 0)
		policy_egress_free(s->egress_retired[--s->n_egress_retired]);
	json_decref(s->refusals);
	s->refusals = NULL;
}

int act_egress_narrow_call(struct act_ctx *ctx)
{
	struct act_session *s = ctx->as;
	json_t *egress = json_object_get(ctx->args, "egress");
	struct policy_egress *narrowed = NULL;
	char perr[512];

	if (!json_is_object(egress))
		return act_fail(ctx, "bad_arguments",
		                "narrow needs \"egress\": {\"allow\"?: [...], \"deny\"?: [...]}");
	/* at most POLICY_MAX_LAYERS - 1 narrowings succeed: egress_retired holds them */
	if (policy_egress_narrow(s->egress, egress, &narrowed, perr, sizeof(perr)) < 0)
		return act_fail(ctx, "bad_arguments", "the narrowing is not valid: %s", perr);
	/* the proxy's thread may be checking a request with the current policy
	 * right now: it is kept until the session ends */
	s->egress_retired[s->n_egress_retired++] = s->egress;
	s->egress = narrowed;
	if (s->proxy)
		policy_proxy_set_policy(s->proxy, narrowed);
	json_object_set(ctx->out, "egress_narrowed", egress);
	gb_buf_appendf(&ctx->text, "This session's egress is narrowed: from now on a request must "
	                           "pass the tenant's policy and this one");
	return 0;
}

void act_egress_setup_target(void *user, struct sess *sess, const char *session_id,
                             const char *type)
{
	struct act_session *s = user;
	uint64_t id;

	if ((!s || s->layer_fetch) &&
	    cdp_send(sess_cdp(sess), session_id, "Fetch.enable",
	             json_pack("{s:[{s:s, s:s}]}", "patterns", "urlPattern", "*", "requestStage",
	                       "Request"),
	             &id) == 0)
		cdp_forget(sess_cdp(sess), id);
	if (s)
		act_emulation_setup_target(s, sess, session_id, type);
}

/* Decides on url: the policy, then the DevTools port of the session's
 * browser, refused on loopback whatever the policy says. Worker only. */
static void decide(struct act_session *s, const char *url, struct policy_decision *d)
{
	int port = s->sess ? sess_devtools_port(s->sess) : 0;

	if (policy_egress_check_url(s->egress, url, d) < 0 || port <= 0 ||
	    !policy_url_is_loopback_port(s->egress, url, port))
		return;
	d->allowed = 0;
	snprintf(d->rule, sizeof(d->rule), "devtools-port");
	snprintf(d->message, sizeof(d->message),
	         "%.300s is refused: port %d is the browser's own DevTools port, which no page may "
	         "reach (rule devtools-port)",
	         url, port);
}

/* Fetch.requestPaused: lets the request go on, or fails it and records
 * the refusal. Runs on the worker inside whatever is servicing. */
static void on_request_paused(void *user, const char *session_id, const char *method,
                              json_t *params)
{
	struct act_session *s = user;
	const char *rid = json_string_value(json_object_get(params, "requestId"));
	json_t *request = json_object_get(params, "request");
	const char *url = json_string_value(json_object_get(request, "url"));
	struct policy_decision d = { 0 };
	uint64_t id;
	int rc;

	(void)method;
	if (!rid || !s->sess || sess_host_is_side_page(s->sess, session_id))
		return; /* a side page answers its own requests (context_profile.c) */
	if (url)
		decide(s, url, &d);
	if (url && d.allowed) {
		rc = cdp_send(sess_cdp(s->sess), session_id, "Fetch.continueRequest",
		              json_pack("{s:s}", "requestId", rid), &id);
	} else {
		struct policy_refusal r = { 0 };
		char when[40];

		gb_utc_iso8601(when, sizeof(when));
		r.time = when;
		r.session = s->id;
		r.target = session_id ? session_id : "";
		r.layer = "fetch";
		r.method = gb_or(json_string_value(json_object_get(request, "method")), "");
		r.url = url ? url : "";
		r.host = d.host;
		r.addr = "";
		r.rule = d.rule[0] ? d.rule : "url-invalid";
		r.message = d.message;
		queue_refusal(s, &r);
		rc = cdp_send(
		    sess_cdp(s->sess), session_id, "Fetch.failRequest",
		    json_pack("{s:s, s:s}", "requestId", rid, "errorReason", "BlockedByClient"),
		    &id);
	}
	if (rc == 0)
		cdp_forget(sess_cdp(s->sess), id);
}

void act_egress_launch_options(struct act_session *s, struct sess_options *opt)
{
	size_t i;

	/* every target: Fetch interception (layer 2) and browser_emulate's settings */
	opt->on_target = act_egress_setup_target;
	opt->on_target_user = s;
	opt->netns_fd = s->netns_fd;
	if (!s->proxy)
		return;
	opt->proxy_server = s->proxy_flags.proxy_server;
	opt->host_resolver_rules = s->proxy_flags.host_resolver_rules;
	for (i = 0; i < sizeof(s->proxy_flags.extra) / sizeof(s->proxy_flags.extra[0]) - 1 &&
	            s->proxy_flags.extra[i];
	     i++)
		s->extra_args[i] = s->proxy_flags.extra[i];
	s->extra_args[i] = NULL;
	opt->extra_args = s->extra_args;
}

int act_egress_attach(struct act_session *s)
{
	if (!s->layer_fetch)
		return 0;
	return cdp_on(sess_cdp(s->sess), NULL, "Fetch.requestPaused", on_request_paused, s) > 0
	           ? 0
	           : -1;
}

int act_egress_check_url(struct act_session *s, const char *url, json_t **blocked, char *err,
                         size_t errlen)
{
	struct policy_decision d = { 0 };

	*blocked = NULL;
	if (!s->layer_tool)
		return 0;
	decide(s, url, &d);
	if (d.allowed)
		return 0;
	gb_metrics_counter_add("glassbox_egress_blocked_total", "tool", 1);
	*blocked = json_pack("{s:s, s:s, s:s, s:s}", "url", url, "host", d.host, "rule",
	                     d.rule[0] ? d.rule : "url-invalid", "layer", "tool");
	snprintf(err, errlen, "%s", d.message[0] ? d.message : "this URL is not allowed");
	return -1;
}

void act_egress_protect_port(struct act_session *s, int port)
{
	if (s->proxy && policy_proxy_refuse_port(s->proxy, port) < 0)
		GB_LOGW("actions", "the egress proxy cannot refuse the DevTools port %d", port);
}

json_t *act_egress_take_refusals(struct act_session *s)
{
	json_t *out = NULL;

	pthread_mutex_lock(&s->lock);
	if (s->refusals && json_array_size(s->refusals)) {
		out = s->refusals;
		s->refusals = json_array();
	}
	pthread_mutex_unlock(&s->lock);
	return out;
}

json_t *act_egress_layers_active(void)
{
	char why[300];
	int netns = policy_netns_available(why, sizeof(why));
	json_t *j =
	    json_pack("{s:b, s:b, s:b, s:b}", "tool", 1, "fetch", 1, "proxy", 1, "netns", netns);

	if (j && !netns)
		json_object_set_new(j, "netns_off", json_string(why));
	return j;
}

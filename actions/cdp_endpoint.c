/*
 * cdp_endpoint.c - the session's side of the policed CDP endpoint
 * (docs/cdp.md): browser_session {"action": "cdp"}, and what the relay
 * (relay/) asks of the session from its own thread.
 *
 * Design note
 * - The worker runs the "cdp" action like any call: it checks the
 *   tenant's policy (cdp: allow), makes sure the browser runs, and notes
 *   under s->lock how a second DevTools client reaches it (URL, network
 *   namespace as a dup'd fd, browser context, proxy). The relay's thread
 *   reads that note (act_session_cdp_endpoint), queueing the same action
 *   first, so a relaunched browser is noted again before it is used.
 * - Evidence goes through the session's record keeper (thread-safe):
 *   records and screenshots of a CDP client are signed and chained like
 *   tool calls.
 */
#include "actions/actions-private.h"

#include "common/log.h"
#include "policy/tenant.h"
#include "sessions/sessions.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* How a second DevTools client reaches the running browser. {s->lock} */
struct act_cdp_note {
	struct act_cdp_endpoint ep; /* fd unused */
	int netns_fd;               /* a dup of the browser's namespace, or -1 */
	int valid;
};

/* Writes the note of the browser that runs now (worker thread). */
static void note_endpoint(struct act_session *as)
{
	struct act_cdp_note *n;
	int fd = as->netns_fd > 0 ? dup(as->netns_fd) : -1;

	pthread_mutex_lock(&as->lock);
	if (!as->cdp_note)
		as->cdp_note = calloc(1, sizeof(*as->cdp_note));
	n = as->cdp_note;
	if (n) {
		if (n->valid && n->netns_fd >= 0)
			close(n->netns_fd);
		memset(&n->ep, 0, sizeof(n->ep));
		snprintf(n->ep.devtools_url, sizeof(n->ep.devtools_url), "%s",
		         sess_devtools_url(as->sess));
		n->ep.port = sess_devtools_port(as->sess);
		n->ep.fd = -1;
		n->ep.camera_fd = -1;
		n->netns_fd = fd;
		fd = -1;
		snprintf(n->ep.context_id, sizeof(n->ep.context_id), "%s",
		         sess_context_id(as->sess));
		snprintf(n->ep.proxy_server, sizeof(n->ep.proxy_server), "%s",
		         as->proxy ? as->proxy_flags.proxy_server : "");
		snprintf(n->ep.downloads_dir, sizeof(n->ep.downloads_dir), "%s/Downloads",
		         sess_profile_dir(as->sess));
		snprintf(n->ep.browser_session, sizeof(n->ep.browser_session), "%s",
		         sess_id(as->sess));
		n->valid = 1;
	}
	pthread_mutex_unlock(&as->lock);
	if (fd >= 0)
		close(fd);
}

/* See actions-private.h. */
int act_cdp_run(struct act_ctx *ctx)
{
	struct act_session *as = ctx->as;
	char err[512] = "";

	if (!policy_tenant_settings(as->tenant_policy)->cdp_allow)
		return act_fail(
		    ctx, "policy_refused",
		    "this tenant's policy does not offer a CDP endpoint (cdp is \"deny\" "
		    "by default): set \"cdp\": \"allow\" in %s",
		    policy_tenant_source(as->tenant_policy)[0]
		        ? policy_tenant_source(as->tenant_policy)
		        : "the tenant's policy");
	if (!as->cdp_endpoint[0])
		return act_fail(ctx, "unsupported",
		                "the CDP endpoint is offered by `glassbox serve` only: run the "
		                "service and call this on its /mcp endpoint");
	if (as->sess && sess_check_alive(as->sess) < 0)
		act_close_browser(as, "the browser died before a CDP client connected");
	if (!as->sess && act_launch_browser(as, err, sizeof(err)) < 0)
		return act_fail(ctx, "launch_failed", "cannot start the browser: %s", err);
	if (sess_page_count(as->sess) == 0 && sess_new_page(as->sess, err, sizeof(err)) < 0)
		return act_fail(ctx, "launch_failed", "cannot open a tab: %s", err);
	note_endpoint(as);
	json_object_set_new(ctx->out, "wsEndpoint", json_string(as->cdp_endpoint));
	gb_buf_appendf(&ctx->text,
	               "CDP endpoint: %s (connect with Playwright's connectOverCDP or "
	               "Puppeteer's connect; authenticate with ?token=<your tenant token> or "
	               "Authorization: Bearer). One client at a time; docs/cdp.md lists what "
	               "is relayed.",
	               as->cdp_endpoint);
	return 0;
}

/* The relay's call of the action, waited for on its own thread. */
struct endpoint_wait {
	pthread_mutex_t lock;
	pthread_cond_t cond;
	int done;
	int failed;
	char error[512];
};

static void endpoint_done(struct act_call *call, json_t *result)
{
	struct endpoint_wait *w = call->user;
	const char *msg = NULL;
	json_t *c;

	pthread_mutex_lock(&w->lock);
	w->failed = json_is_true(json_object_get(result, "isError"));
	c = json_array_get(json_object_get(result, "content"), 0);
	msg = json_string_value(json_object_get(c, "text"));
	snprintf(w->error, sizeof(w->error), "%s", msg ? msg : "the browser could not be started");
	w->done = 1;
	pthread_cond_signal(&w->cond);
	pthread_mutex_unlock(&w->lock);
	json_decref(result);
}

/* See actions.h. */
int act_session_cdp_endpoint(struct act_session *s, int timeout_ms, const atomic_int *stop,
                             struct act_cdp_endpoint *out, char *err, size_t errlen)
{
	struct endpoint_wait w = { .done = 0 };
	struct act_call call;
	int netns = -1;
	int64_t deadline = gb_now_ms() + timeout_ms;
	int cancelled = 0;
	int rc = -1;

	memset(&call, 0, sizeof(call));
	memset(out, 0, sizeof(*out));
	out->fd = -1;
	out->camera_fd = -1;
	pthread_mutex_init(&w.lock, NULL);
	pthread_cond_init(&w.cond, NULL);
	call.def = act_tool_find("browser_session");
	call.args = json_pack("{s:s}", "action", "cdp");
	call.on_done = endpoint_done;
	call.client_name = "cdp";
	call.user = &w;
	if (act_session_submit(s, &call) != 0) {
		snprintf(err, errlen, "the session is busy or ending: try again");
		goto out;
	}
	pthread_mutex_lock(&w.lock);
	while (!w.done) {
		struct timespec ts;

		clock_gettime(CLOCK_REALTIME, &ts);
		ts.tv_nsec += 100 * 1000000L;
		if (ts.tv_nsec >= 1000000000L) {
			ts.tv_sec++;
			ts.tv_nsec -= 1000000000L;
		}
		pthread_cond_timedwait(&w.cond, &w.lock, &ts);
		if (!cancelled && ((stop && atomic_load(stop)) || gb_now_ms() > deadline)) {
			cancelled = 1;
			pthread_mutex_unlock(&w.lock);
			act_session_cancel(s, &call);
			pthread_mutex_lock(&w.lock);
		}
	}
	pthread_mutex_unlock(&w.lock);
	if (w.failed || cancelled) {
		snprintf(err, errlen, "%s",
		         cancelled ? "the browser did not start in time" : w.error);
		goto out;
	}
	pthread_mutex_lock(&s->lock);
	if (s->cdp_note && s->cdp_note->valid) {
		*out = s->cdp_note->ep;
		netns = s->cdp_note->netns_fd >= 0 ? dup(s->cdp_note->netns_fd) : -1;
		rc = 0;
	}
	pthread_mutex_unlock(&s->lock);
	if (rc < 0)
		snprintf(err, errlen, "the browser's DevTools endpoint is not known");
	else
		rc = sess_devtools_socket(netns, out->port, &out->fd, err, errlen);
	if (rc == 0) {
		out->camera_fd = -1;
		rc = sess_devtools_socket(netns, out->port, &out->camera_fd, err, errlen);
		if (rc < 0) {
			close(out->fd);
			out->fd = -1;
		}
	}
	if (netns >= 0)
		close(netns);
out:
	json_decref(call.args);
	pthread_mutex_destroy(&w.lock);
	pthread_cond_destroy(&w.cond);
	return rc;
}

/* See actions.h. */
void act_session_cdp_record(struct act_session *s, const char *kind, const char *browser_session,
                            json_t *body)
{
	act_keeper_record(s->keeper, kind, browser_session, NULL, body, 0);
}

/* See actions.h. */
void act_session_cdp_screenshot(struct act_session *s, const char *browser_session, const char *why,
                                const char *url, unsigned char *png, size_t len)
{
	struct act_keeper_action a;
	char op[72];
	uint64_t ticket;
	char err[256];

	/* each screenshot is an operation of its own, as a tool call is */
	memset(&a, 0, sizeof(a));
	memcpy(op, "op-", 3);
	gb_random_hex(op + 3, 12);
	a.session_id = browser_session;
	a.operation_id = op;
	a.tool = "cdp";
	a.url = url;
	a.body =
	    json_pack("{s:s, s:s, s:s}", "source", "cdp", "screenshot", why, "url", url ? url : "");
	a.arguments = json_object();
	a.png = png;
	a.png_len = len;
	if (act_keeper_record_action(s->keeper, &a, &ticket, err, sizeof(err)) < 0)
		GB_LOGW("actions", "a CDP screenshot could not be kept: %s", err);
}

/* See actions.h. */
const struct policy_tenant *act_session_policy(const struct act_session *s)
{
	return s->tenant_policy;
}

/* See actions-private.h. */
void act_cdp_note_free(struct act_session *s)
{
	if (!s->cdp_note)
		return;
	if (s->cdp_note->valid && s->cdp_note->netns_fd >= 0)
		close(s->cdp_note->netns_fd);
	free(s->cdp_note);
	s->cdp_note = NULL;
}

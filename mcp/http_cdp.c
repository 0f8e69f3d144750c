/*
 * http_cdp.c - the CDP endpoint of `glassbox serve` (docs/cdp.md):
 * POST /sessions and DELETE /sessions/<id> on the serve front, and the
 * websocket GET /cdp/<id> that hands a Playwright or Puppeteer client to a
 * relay (relay/relay.h) driving that session's browser.
 *
 * Design note
 * - Front thread: routes, authenticates (bearer header, or ?token= for
 *   clients that cannot set headers), checks the tenant's policy (cdp:
 *   allow; default deny) and answers the websocket upgrade (101) through
 *   libmicrohttpd, which then hands over the socket. Another tenant's
 *   session is not found, exactly like an unknown id (404).
 * - One client at a time per session: hs->cdp_relay is set while a relay
 *   runs. The relay's thread does the rest (it may wait for the browser);
 *   when it ends it wakes the front, which closes the socket through
 *   libmicrohttpd (mcp_http_cdp_reap). Closing the session stops the
 *   relay; the closer waits for it (hs_cdp_end) before the browser goes.
 */
#include "mcp/http-private.h"

#include <netdb.h>
#include <netinet/in.h>
#include <sodium.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "common/log.h"
#include "common/metrics.h"
#include "mcp/http-headers.h"
#include "mcp/mcp-private.h"
#include "policy/tenant.h"
#include "relay/relay.h"

#define MOD "serve"
#define CDP_PREFIX "/cdp/"
#define SESSIONS_PATH "/sessions"
#define CDP_NOT_FOUND "no such session: it ended or never existed; start one with POST /sessions"
/* How long a connecting client may wait for the session's browser. */
#define CDP_BROWSER_WAIT_MS 60000

/* One connected client: the front's side of a relay. */
struct cdp_link {
	struct serve *s;
	struct http_session *hs; /* counted reference */
	struct act_session *as;  /* the session's, alive until the relay ended */
	struct relay *relay;     /* counted reference */
	struct MHD_UpgradeResponseHandle *urh;
	char browser_session[40]; /* relay thread only */
	struct cdp_link *next;    /* in s->cdp_links, front only */
};

/* See http-private.h. */
int mcp_http_cdp_route(const char *path)
{
	return !strncmp(path, CDP_PREFIX, strlen(CDP_PREFIX)) || !strcmp(path, SESSIONS_PATH) ||
	       !strncmp(path, SESSIONS_PATH "/", strlen(SESSIONS_PATH) + 1);
}

static void respond_error(struct http_req *req, int status, const char *message)
{
	mcp_http_respond_json(req, status, json_pack("{s:s}", "error", message));
}

/* Whether the tenant's policy offers CDP endpoints. */
static int tenant_allows_cdp(const struct mcp_tenant *t)
{
	struct policy_tenant *p = NULL;
	char err[256];
	int allow = 0;

	if (t->parsed)
		return policy_tenant_settings(t->parsed)->cdp_allow;
	if (policy_tenant_parse(t->policy, NULL, &p, err, sizeof(err)) == 0)
		allow = policy_tenant_settings(p)->cdp_allow;
	policy_tenant_unref(p);
	return allow;
}

/* The tenant of req: its bearer header, or ?token= (websocket clients
 * that cannot send headers). NULL answers 401. */
static const struct mcp_tenant *authenticate(struct serve *s, struct http_req *req, int query_ok)
{
	char auth[600];
	const char *token =
	    query_ok ? MHD_lookup_connection_value(req->conn, MHD_GET_ARGUMENT_KIND, "token")
	             : NULL;
	const struct mcp_tenant *t;

	if (mcp_http_header(req, "Authorization", auth, sizeof(auth)))
		t = mcp_auth_tenant(s->cfg, auth);
	else if (token && strlen(token) < sizeof(auth) - 8) {
		snprintf(auth, sizeof(auth), "Bearer %s", token);
		t = mcp_auth_tenant(s->cfg, auth);
	} else
		t = NULL;
	sodium_memzero(auth, sizeof(auth));
	if (!t) {
		gb_metrics_counter_add("glassbox_auth_failures_total", NULL, 1);
		snprintf(req->resp.www_authenticate, sizeof(req->resp.www_authenticate),
		         "Bearer realm=\"glassbox\", error=\"invalid_token\"");
		respond_error(req, 401,
		              query_ok ? "unauthorized: send your tenant's token as Authorization: "
		                         "Bearer <token> or ?token=<token>"
		                       : "unauthorized: send your tenant's token as Authorization: "
		                         "Bearer <token>");
	}
	return t;
}

/* The session's websocket URL, for a client that reached us at host. */
static void ws_url(struct serve *s, struct http_req *req, const char *id, char *out, size_t len)
{
	char host[256];

	if (!mcp_http_header(req, "Host", host, sizeof(host)))
		snprintf(host, sizeof(host), "%s:%d", s->cfg->host, s->bound_port);
	snprintf(out, len, "ws://%s" CDP_PREFIX "%s", host, id);
}

/* POST /sessions: a new session whose CDP endpoint the client connects to. */
static void post_session(struct serve *s, struct http_req *req, const struct mcp_tenant *t)
{
	struct hs_capacity cap = { .next_expiry_s = -1 };
	struct http_session *hs;
	char url[400], expires[40], err[256];
	time_t at;
	struct tm tm;
	int ttl;

	if (!tenant_allows_cdp(t)) {
		respond_error(req, 403,
		              "this tenant's policy does not offer CDP endpoints (cdp is \"deny\" "
		              "by default): set \"cdp\": \"allow\" in its policy");
		return;
	}
	if (hs_admission(&s->table, t, &cap) != HS_OK) {
		req->resp.retry_after_s = cap.next_expiry_s > 0 ? (int)cap.next_expiry_s : 5;
		respond_error(req, 429,
		              "too many sessions open: end one with DELETE /sessions/<id> or wait "
		              "for one to expire");
		return;
	}
	hs = hs_create(&s->table, t);
	if (!hs) {
		respond_error(req, 500, "the session could not be created: see the service log");
		return;
	}
	hs->cfg.prelaunch = 1; /* the browser starts before the client connects */
	if (!mcp_server_act_session(hs->srv, err, sizeof(err)))
		GB_LOGW(MOD, "session %.8s: %s", hs->id, err);
	ws_url(s, req, hs->id, url, sizeof(url));
	ttl = s->cfg->unused_ttl_s < s->cfg->hard_ttl_s ? s->cfg->unused_ttl_s : s->cfg->hard_ttl_s;
	at = time(NULL) + ttl;
	gmtime_r(&at, &tm);
	strftime(expires, sizeof(expires), "%Y-%m-%dT%H:%M:%SZ", &tm);
	mcp_http_respond_json(
	    req, 201,
	    json_pack("{s:s, s:s, s:s}", "id", hs->id, "wsEndpoint", url, "expires_at", expires));
	hs_unref(hs);
}

/* DELETE /sessions/<id>: ends the session (and its CDP client). */
static void delete_session(struct serve *s, struct http_req *req, const struct mcp_tenant *t,
                           const char *id)
{
	struct http_session *hs = hs_find(&s->table, id, t);

	if (!hs) {
		respond_error(req, 404, CDP_NOT_FOUND);
		return;
	}
	hs_close(hs, "deleted");
	mcp_http_respond_json(req, 200, json_pack("{s:s}", "closed", hs->id));
	hs_unref(hs);
}

/* ---- the relay's hooks (on its thread) ---------------------------------- */

static int hook_browser(void *user, const atomic_int *stop, struct relay_browser *out, char *err,
                        size_t errlen)
{
	struct cdp_link *l = user;
	struct act_cdp_endpoint ep;

	if (act_session_cdp_endpoint(l->as, CDP_BROWSER_WAIT_MS, stop, &ep, err, errlen) < 0)
		return -1;
	memset(out, 0, sizeof(*out));
	snprintf(out->devtools_url, sizeof(out->devtools_url), "%s", ep.devtools_url);
	out->fd = ep.fd;
	out->camera_fd = ep.camera_fd;
	snprintf(out->context_id, sizeof(out->context_id), "%s", ep.context_id);
	snprintf(out->proxy_server, sizeof(out->proxy_server), "%s", ep.proxy_server);
	snprintf(out->downloads_dir, sizeof(out->downloads_dir), "%s", ep.downloads_dir);
	snprintf(out->browser_session, sizeof(out->browser_session), "%s", ep.browser_session);
	snprintf(l->browser_session, sizeof(l->browser_session), "%s", ep.browser_session);
	return 0;
}

static void hook_record(void *user, const char *kind, json_t *body)
{
	struct cdp_link *l = user;

	act_session_cdp_record(l->as, kind, l->browser_session[0] ? l->browser_session : NULL,
	                       body);
}

static void hook_screenshot(void *user, const char *why, const char *url, unsigned char *png,
                            size_t len)
{
	struct cdp_link *l = user;

	act_session_cdp_screenshot(l->as, l->browser_session, why, url, png, len);
}

static void hook_ended(void *user)
{
	struct cdp_link *l = user;

	mcp_http_wake_front(&l->s->table);
}

/* ---- the upgrade ------------------------------------------------------- */

/* Forgets a link whose relay never started: the session may be connected
 * to again. */
static void link_abandon(struct cdp_link *l)
{
	pthread_mutex_lock(&l->hs->lock);
	l->hs->cdp_connecting = 0;
	pthread_mutex_unlock(&l->hs->lock);
	hs_unref(l->hs);
	free(l);
}

/* MHD_UpgradeHandler: the 101 is out; the socket is the relay's to use. */
static void on_upgraded(void *cls, struct MHD_Connection *conn, void *req_cls, const char *extra_in,
                        size_t extra_in_size, MHD_socket sock,
                        struct MHD_UpgradeResponseHandle *urh)
{
	struct cdp_link *l = cls;
	struct http_req *req = req_cls;
	const union MHD_ConnectionInfo *ci =
	    MHD_get_connection_info(conn, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
	const struct policy_tenant *pol;
	struct relay_options o;
	char who[160], peer[64] = "unknown", err[256];

	if (req)
		req->cdp_link = NULL; /* the link is the relay's now */
	l->urh = urh;
	if (l->hs->state != HS_OPEN) {
		/* closed while the 101 went out: its browser may be gone already */
		MHD_upgrade_action(urh, MHD_UPGRADE_ACTION_CLOSE);
		link_abandon(l);
		return;
	}
	pol = act_session_policy(l->as);
	if (ci && ci->client_addr &&
	    getnameinfo(ci->client_addr,
	                ci->client_addr->sa_family == AF_INET6 ? sizeof(struct sockaddr_in6)
	                                                       : sizeof(struct sockaddr_in),
	                peer, sizeof(peer), NULL, 0, NI_NUMERICHOST) != 0)
		snprintf(peer, sizeof(peer), "unknown");
	snprintf(who, sizeof(who), "tenant %s from %s", l->hs->tenant->name, peer);
	memset(&o, 0, sizeof(o));
	o.client_fd = sock;
	o.extra_in = extra_in;
	o.extra_in_len = extra_in_size;
	o.who = who;
	o.endpoint = l->hs->id;
	o.risk = policy_tenant_risk(pol);
	o.gates = policy_tenant_settings(pol)->cdp_gates;
	o.screenshot_every_s = policy_tenant_settings(pol)->cdp_screenshot_every_s;
	o.hooks.user = l;
	o.hooks.browser = hook_browser;
	o.hooks.record = hook_record;
	o.hooks.screenshot = hook_screenshot;
	o.hooks.ended = hook_ended;
	if (relay_start(&o, &l->relay, err, sizeof(err)) < 0) {
		GB_LOGW(MOD, "session %.8s: %s", l->hs->id, err);
		MHD_upgrade_action(urh, MHD_UPGRADE_ACTION_CLOSE);
		link_abandon(l);
		return;
	}
	pthread_mutex_lock(&l->hs->lock);
	l->hs->cdp_connecting = 0;
	l->hs->cdp_relay = relay_ref(l->relay);
	pthread_mutex_unlock(&l->hs->lock);
	l->hs->calls++; /* a session a client connected to was used */
	l->next = l->s->cdp_links;
	l->s->cdp_links = l;
	gb_metrics_counter_add("glassbox_cdp_connections_total", l->hs->tenant->name, 1);
}

/* GET /cdp/<id>: checks, then the 101 once the request is in. */
static void get_cdp(struct serve *s, struct http_req *req, const struct mcp_tenant *t,
                    const char *id)
{
	char upgrade[64], connection[128], version[16], key[64], accept[40];
	struct http_session *hs;
	struct cdp_link *l;
	char err[256];

	if (!mcp_http_header(req, "Upgrade", upgrade, sizeof(upgrade)) ||
	    strcasecmp(upgrade, "websocket") ||
	    !mcp_http_header(req, "Connection", connection, sizeof(connection)) ||
	    !strcasestr(connection, "upgrade")) {
		respond_error(req, 426,
		              "the CDP endpoint is a websocket: connect with Playwright's "
		              "connectOverCDP, Puppeteer's connect or another websocket client");
		return;
	}
	if (!mcp_http_header(req, "Sec-WebSocket-Version", version, sizeof(version)) ||
	    strcmp(version, "13") || !mcp_http_header(req, "Sec-WebSocket-Key", key, sizeof(key)) ||
	    relay_ws_accept(key, accept, sizeof(accept)) < 0) {
		respond_error(req, 400,
		              "a websocket handshake needs Sec-WebSocket-Version: 13 and a "
		              "Sec-WebSocket-Key of 16 bytes in base64");
		return;
	}
	if (!tenant_allows_cdp(t)) {
		respond_error(req, 403,
		              "this tenant's policy does not offer CDP endpoints (cdp is \"deny\" "
		              "by default): set \"cdp\": \"allow\" in its policy");
		return;
	}
	hs = hs_find(&s->table, id, t);
	if (!hs) {
		respond_error(req, 404, CDP_NOT_FOUND);
		return;
	}
	pthread_mutex_lock(&hs->lock);
	if (hs->cdp_relay || hs->cdp_connecting) {
		pthread_mutex_unlock(&hs->lock);
		respond_error(req, 409,
		              "a CDP client is already connected to this session: one at a time; "
		              "close it first");
		hs_unref(hs);
		return;
	}
	hs->cdp_connecting = 1;
	pthread_mutex_unlock(&hs->lock);
	l = calloc(1, sizeof(*l));
	if (l)
		l->as = mcp_server_act_session(hs->srv, err, sizeof(err));
	if (!l || !l->as) {
		pthread_mutex_lock(&hs->lock);
		hs->cdp_connecting = 0;
		pthread_mutex_unlock(&hs->lock);
		free(l);
		hs_unref(hs);
		respond_error(req, 500, "the session's browser could not be set up: see the log");
		return;
	}
	l->s = s;
	l->hs = hs;
	snprintf(req->cdp_accept, sizeof(req->cdp_accept), "%s", accept);
	req->cdp_link = l;
}

/* See http-private.h. */
enum MHD_Result mcp_http_cdp_queue_upgrade(struct http_req *req)
{
	struct cdp_link *l = req->cdp_link;
	struct MHD_Response *resp = MHD_create_response_for_upgrade(on_upgraded, l);
	enum MHD_Result rc = MHD_NO;

	/* req->cdp_link stays set until on_upgraded takes the link: a
	 * connection that fails before the 101 is out drops it (req_free) */
	if (resp) {
		MHD_add_response_header(resp, "Upgrade", "websocket");
		MHD_add_response_header(resp, "Sec-WebSocket-Accept", req->cdp_accept);
		rc = MHD_queue_response(req->conn, MHD_HTTP_SWITCHING_PROTOCOLS, resp);
		MHD_destroy_response(resp);
	}
	if (rc != MHD_YES) {
		req->cdp_link = NULL;
		link_abandon(l);
	}
	return rc;
}

/* See http-private.h. */
void mcp_http_cdp_drop(struct http_req *req)
{
	struct cdp_link *l = req->cdp_link;

	if (!l)
		return;
	req->cdp_link = NULL;
	link_abandon(l);
}

/* See http-private.h. */
void mcp_http_cdp_headers(struct serve *s, struct http_req *req, const char *method,
                          const char *path)
{
	char host[256], origin[256];
	const struct mcp_tenant *t;
	int is_cdp = !strncmp(path, CDP_PREFIX, strlen(CDP_PREFIX));
	const char *id = is_cdp ? path + strlen(CDP_PREFIX) : path + strlen(SESSIONS_PATH);

	if (s->stopping || atomic_load(s->stop)) {
		respond_error(req, 503,
		              "the service is shutting down: try again later or elsewhere");
		return;
	}
	if (!mcp_http_host_ok(mcp_http_header(req, "Host", host, sizeof(host)), s->loopback_only) ||
	    !mcp_http_origin_ok(mcp_http_header(req, "Origin", origin, sizeof(origin)),
	                        (const char(*)[128])s->cfg->origins, s->cfg->n_origins)) {
		respond_error(req, 403,
		              "forbidden: this Host or Origin is not allowed (DNS rebinding "
		              "protection); add the origin to listen.allowed_origins");
		return;
	}
	t = authenticate(s, req, is_cdp);
	if (!t)
		return;
	if (is_cdp && !strcmp(method, "GET") && id[0] && !strchr(id, '/'))
		get_cdp(s, req, t, id);
	else if (!is_cdp && !strcmp(method, "POST") && !id[0])
		post_session(s, req, t);
	else if (!is_cdp && !strcmp(method, "DELETE") && id[0] == '/' && id[1] &&
	         !strchr(id + 1, '/'))
		delete_session(s, req, t, id + 1);
	else {
		snprintf(req->resp.allow, sizeof(req->resp.allow), "%s",
		         is_cdp ? "GET" : (id[0] ? "DELETE" : "POST"));
		respond_error(req, 405,
		              "use POST /sessions, DELETE /sessions/<id>, or a websocket GET "
		              "/cdp/<id>");
	}
}

/* See http-private.h. */
void mcp_http_cdp_reap(struct serve *s)
{
	struct cdp_link **pp = &s->cdp_links, *l;
	int64_t now = gb_now_ms();

	while ((l = *pp)) {
		if (!relay_done(l->relay)) {
			l->hs->last_active_ms = now; /* a connected client keeps it alive */
			pp = &l->next;
			continue;
		}
		*pp = l->next;
		MHD_upgrade_action(l->urh, MHD_UPGRADE_ACTION_CLOSE);
		pthread_mutex_lock(&l->hs->lock);
		if (l->hs->cdp_relay == l->relay) {
			relay_unref(l->hs->cdp_relay);
			l->hs->cdp_relay = NULL;
		}
		pthread_mutex_unlock(&l->hs->lock);
		l->hs->last_active_ms = now;
		relay_unref(l->relay);
		hs_unref(l->hs);
		free(l);
	}
}

/* See http-private.h. */
size_t mcp_http_cdp_count(struct serve *s)
{
	struct cdp_link *l;
	size_t n = 0;

	for (l = s->cdp_links; l; l = l->next)
		n += !relay_done(l->relay);
	return n;
}

/* See http-private.h. */
void hs_cdp_stop(struct http_session *hs)
{
	pthread_mutex_lock(&hs->lock);
	relay_stop(hs->cdp_relay);
	pthread_mutex_unlock(&hs->lock);
}

/* See http-private.h. */
void hs_cdp_end(struct http_session *hs)
{
	struct relay *r;

	pthread_mutex_lock(&hs->lock);
	r = relay_ref(hs->cdp_relay);
	pthread_mutex_unlock(&hs->lock);
	if (!r)
		return;
	relay_stop(r);
	relay_wait(r);
	relay_unref(r);
}

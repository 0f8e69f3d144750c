/*
 * proxy.c - the per-session egress proxy (DESIGN.md security layer 3).
 *
 * Chromium is launched with this proxy as its only way out; the proxy
 * checks each request's host with the session's egress policy, resolves
 * names itself (resolver overrides first), checks every address before
 * connecting, and relays bytes. Refusals answer 403 and are reported
 * through on_refusal.
 *
 * Threads: one loop thread per proxy owns every connection and all of
 * struct proxy_conn; a resolver thread (proxy_resolve.c) runs getaddrinfo
 * off the loop. The only state touched by other threads: the counters
 * (atomics), px->stopping (atomic), the wake pipe and the refused ports
 * (under px->ports_lock).
 *
 * A connection goes HEAD (reading a request head) → RESOLVING →
 * CONNECTING → FORWARD (relaying one request and its response) or TUNNEL
 * (CONNECT, or after a 101) → back to HEAD when both sides kept the
 * connection, or CLOSING (flush what we owe the client, then a short
 * lingering close so that our last response is not lost to a reset).
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

#define MOD "policy"

#define PROXY_DEFAULT_MAX_CONNS 64
#define PROXY_LIMIT_MAX_CONNS 4096
#define PROXY_DEFAULT_HEADER_TIMEOUT_MS 15000
#define PROXY_DEFAULT_CONNECT_TIMEOUT_MS 10000
#define PROXY_DEFAULT_IDLE_TIMEOUT_MS 120000
#define PROXY_LINGER_MS 2000
#define PROXY_IO_CHUNK (64u * 1024u) /* relay buffer per direction, at least */
#define PROXY_URL_SHOWN 2048         /* URL bytes kept for refusal records */

enum conn_state {
	CS_HEAD = 0,
	CS_RESOLVING,
	CS_CONNECTING,
	CS_FORWARD,
	CS_TUNNEL,
	CS_CLOSING,
	CS_DEAD,
};

/* Bytes waiting to be written to one side. */
struct pbuf {
	char *data;
	size_t off; /* first unsent byte */
	size_t len; /* end of data */
	size_t cap;
};

struct proxy_conn {
	uint64_t id;
	int cfd;            /* client */
	int ufd;            /* upstream, -1 when none */
	enum conn_state state;
	int64_t state_ms;   /* when the state (or the connect attempt) began */
	int64_t active_ms;  /* last byte either way */
	int64_t head_ms;    /* first byte of the current request head, or 0 */
	int pidx;           /* poll slots, -1 when not polled */
	int uidx;

	char *cin;          /* request head being read, then pipelined bytes */
	size_t cin_len;
	char *uin;          /* response head being read */
	size_t uin_len;
	struct pbuf up;     /* to upstream */
	struct pbuf down;   /* to client */

	/* the request in progress */
	char method[24];
	char host[POLICY_HOST_MAX + 1];
	char url[PROXY_URL_SHOWN];
	int port;
	int is_connect;
	int upgrade;
	int keepalive;
	struct proxy_body req_body;
	struct proxy_body resp_body;
	int resp_started;   /* response head passed to the client */
	struct policy_ip addrs[POLICY_MAX_HOST_ADDRS];
	size_t naddrs;
	size_t next_addr;
	int last_errno;
	int client_eof;
	int upstream_eof;
	int down_shut;      /* shutdown(cfd, SHUT_WR) done */
	int up_shut;
};

struct policy_proxy {
	const struct policy_egress *policy; /* borrowed */
	struct policy_proxy_options o;
	char session[128];
	char listen_text[80];               /* "127.0.0.1" or "[::1]" */
	int port;
	int lfd;
	int wake[2];
	pthread_t thread;
	int thread_started;
	atomic_int stopping;
	struct proxy_resolver *resolver;
	struct proxy_conn **conns;          /* loop thread only */
	size_t nconns;
	uint64_t next_id;
	size_t buf_cap;
	struct pollfd *pfds;
	struct proxy_conn **pconn;          /* which conn each poll slot belongs to */

	_Atomic uint64_t bytes_up;
	_Atomic uint64_t bytes_down;
	_Atomic uint64_t connections;
	_Atomic uint64_t connections_open;
	_Atomic uint64_t requests;
	_Atomic uint64_t refused;
	_Atomic uint64_t over_limit;

	pthread_mutex_t ports_lock;
	int ports_lock_made;
	int refused_ports[POLICY_PROXY_REFUSED_PORTS]; /* {ports_lock} 0 = free */
	size_t next_port_slot;                         /* {ports_lock} the oldest, when full */
};

/* ---- small helpers ----------------------------------------------------------- */

/* Appends n bytes to b; returns 0, or -1 when they do not fit. */
static int pbuf_add(struct pbuf *b, const char *s, size_t n)
{
	int rc = -1;

	if (b->off && b->len + n > b->cap) {
		memmove(b->data, b->data + b->off, b->len - b->off);
		b->len -= b->off;
		b->off = 0;
	}
	if (b->len + n > b->cap)
		goto out;
	memcpy(b->data + b->len, s, n);
	b->len += n;
	rc = 0;
out:
	return rc;
}

/* Bytes waiting in b. */
static size_t pbuf_pending(const struct pbuf *b)
{
	return b->len - b->off;
}

/* Room left in b, counting what a compaction would free. */
static size_t pbuf_room(const struct pbuf *b)
{
	return b->cap - pbuf_pending(b);
}

/* Closes *fd if open and marks it closed. */
static void close_fd(int *fd)
{
	if (*fd >= 0)
		close(*fd);
	*fd = -1;
}

/* Copies s into out with bytes that are not printable ASCII as '?'. */
static void shown_copy(const char *s, size_t len, char *out, size_t outlen)
{
	size_t i;

	for (i = 0; i < len && i + 1 < outlen; i++) {
		unsigned char c = (unsigned char)s[i];

		out[i] = (c < 0x20 || c >= 0x7f) ? '?' : (char)c;
	}
	if (outlen)
		out[i] = '\0';
}

/* Sets the connection's state and the time it began. */
static void set_state(struct proxy_conn *c, enum conn_state st)
{
	c->state = st;
	c->state_ms = gb_now_ms();
}

/* ---- refusals and error replies ---------------------------------------------- */

/* Reports a refusal through the callback. */
static void report(struct policy_proxy *px, const char *method, const char *url,
                   const char *host, const char *addr, const char *rule, const char *message)
{
	struct policy_refusal r;
	struct timespec ts;
	char when[40];

	atomic_fetch_add(&px->refused, 1);
	GB_LOGD(MOD, "egress proxy refused %s %s (rule %s)", method, host, rule);
	if (!px->o.on_refusal)
		return;
	clock_gettime(CLOCK_REALTIME, &ts);
	gb_utc_iso8601(when, sizeof(when));
	memset(&r, 0, sizeof(r));
	r.time_unix_ms = (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
	r.time = when;
	r.session = px->session;
	r.target = "";
	r.layer = "proxy";
	r.method = method;
	r.url = url;
	r.host = host;
	r.addr = addr;
	r.rule = rule;
	r.message = message;
	px->o.on_refusal(px->o.user, &r);
}

/* Queues a complete error response for the client and moves to CLOSING.
 * rule (may be NULL) goes in an X-Glassbox-Rule field. */
static void reply_error(struct proxy_conn *c, int status, const char *reason, const char *rule,
                        const char *text)
{
	char head[512];
	char body[700];
	int blen;
	int hlen;

	blen = snprintf(body, sizeof(body), "glassbox egress proxy: %s\n", text);
	if (blen < 0 || (size_t)blen >= sizeof(body))
		blen = (int)sizeof(body) - 1;
	hlen = snprintf(head, sizeof(head),
	                "HTTP/1.1 %d %s\r\nContent-Type: text/plain; charset=utf-8\r\n"
	                "Content-Length: %d\r\nCache-Control: no-store\r\n%s%s%sConnection: close"
	                "\r\n\r\n",
	                status, reason, blen, rule ? "X-Glassbox-Rule: " : "", rule ? rule : "",
	                rule ? "\r\n" : "");
	/* after part of a response went out, closing is the only signal left */
	if (!c->resp_started && hlen > 0 && (size_t)hlen < sizeof(head) &&
	    pbuf_room(&c->down) >= (size_t)hlen + (size_t)blen) {
		pbuf_add(&c->down, head, (size_t)hlen);
		pbuf_add(&c->down, body, (size_t)blen);
		c->resp_started = 1;
	}
	close_fd(&c->ufd);
	c->keepalive = 0;
	set_state(c, CS_CLOSING);
}

/* Refuses the request in progress with decision d: 403, a record. */
static void refuse(struct policy_proxy *px, struct proxy_conn *c, const struct policy_decision *d)
{
	report(px, c->method, c->url, d->host[0] ? d->host : c->host, d->addr, d->rule, d->message);
	reply_error(c, 403, "Forbidden", d->rule, d->message);
}

/* ---- connecting upstream ----------------------------------------------------- */

static void on_connected(struct policy_proxy *px, struct proxy_conn *c);

/* Tries the next address; on none left, answers 502. */
static void connect_next(struct policy_proxy *px, struct proxy_conn *c)
{
	char msg[400];
	int started = 0;

	close_fd(&c->ufd);
	while (!started && c->next_addr < c->naddrs) {
		struct sockaddr_storage ss;
		socklen_t sslen;
		int fd;

		policy_ip_to_sockaddr(&c->addrs[c->next_addr++], c->port, &ss, &sslen);
		fd = socket(ss.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
		if (fd < 0) {
			c->last_errno = errno;
		} else if (connect(fd, (struct sockaddr *)&ss, sslen) == 0) {
			c->ufd = fd;
			started = 1;
			on_connected(px, c);
		} else if (errno == EINPROGRESS) {
			c->ufd = fd;
			started = 1;
			set_state(c, CS_CONNECTING);
		} else {
			c->last_errno = errno;
			close(fd);
		}
	}
	if (started)
		goto out;
	snprintf(msg, sizeof(msg), "cannot connect to %s port %d: %s", c->host, c->port,
	         strerror(c->last_errno ? c->last_errno : ECONNREFUSED));
	reply_error(c, 502, "Bad Gateway", NULL, msg);
out:
	return;
}

/* Whether port is one of the refused loopback ports. Any thread. */
static int port_refused(struct policy_proxy *px, int port)
{
	int found = 0;
	size_t i;

	pthread_mutex_lock(&px->ports_lock);
	for (i = 0; i < POLICY_PROXY_REFUSED_PORTS; i++)
		if (px->refused_ports[i] == port)
			found = 1;
	pthread_mutex_unlock(&px->ports_lock);
	return found;
}

/* Fills d with the "devtools-port" refusal of a connection to ip:port. */
static void devtools_refusal(const char *host, const struct policy_ip *ip, int port,
                             struct policy_decision *d)
{
	memset(d, 0, sizeof(*d));
	snprintf(d->rule, sizeof(d->rule), "devtools-port");
	snprintf(d->host, sizeof(d->host), "%s", host);
	policy_ip_format(ip, d->addr, sizeof(d->addr));
	snprintf(d->message, sizeof(d->message),
	         "connection to %.200s (resolved to %s) port %d refused: it is the browser's own "
	         "DevTools port, which no page may reach (rule devtools-port)",
	         host, d->addr, port);
}

/* Called with the addresses of the request's host: checks every one of
 * them, then connects. */
static void have_addresses(struct policy_proxy *px, struct proxy_conn *c)
{
	struct policy_decision d;
	size_t i;

	for (i = 0; i < c->naddrs; i++) {
		if (policy_ip_class(&c->addrs[i]) == POLICY_ADDR_LOOPBACK &&
		    port_refused(px, c->port)) {
			devtools_refusal(c->host, &c->addrs[i], c->port, &d);
			refuse(px, c, &d);
			goto out;
		}
		if (policy_egress_check_ip(px->policy, c->host, &c->addrs[i], &d) < 0) {
			refuse(px, c, &d);
			goto out;
		}
	}
	c->next_addr = 0;
	c->last_errno = 0;
	connect_next(px, c);
out:
	return;
}

/* The upstream connection is up: a tunnel gets its 200, a request starts
 * flowing (its head is queued already). */
static void on_connected(struct policy_proxy *px, struct proxy_conn *c)
{
	static const char established[] = "HTTP/1.1 200 Connection established\r\n\r\n";

	(void)px;
	c->active_ms = gb_now_ms();
	if (!c->is_connect) {
		set_state(c, CS_FORWARD);
		goto out;
	}
	pbuf_add(&c->down, established, sizeof(established) - 1);
	c->resp_started = 1;
	if (c->cin_len && pbuf_add(&c->up, c->cin, c->cin_len) == 0)
		c->cin_len = 0;
	set_state(c, CS_TUNNEL);
out:
	return;
}

/* Looks the host up: a literal or an override now, DNS through the
 * resolver thread otherwise. */
static void start_resolve(struct policy_proxy *px, struct proxy_conn *c, int is_ip,
                          const struct policy_ip *ip)
{
	const struct policy_host_override *o = policy_egress_override(px->policy, c->host);
	char msg[400];

	if (is_ip) {
		c->addrs[0] = *ip;
		c->naddrs = 1;
		have_addresses(px, c);
	} else if (o) {
		memcpy(c->addrs, o->addrs, o->naddrs * sizeof(o->addrs[0]));
		c->naddrs = o->naddrs;
		have_addresses(px, c);
	} else if (proxy_resolver_submit(px->resolver, c->id, c->host) == 0) {
		set_state(c, CS_RESOLVING);
	} else {
		snprintf(msg, sizeof(msg), "cannot resolve %s now: too many lookups in progress",
		         c->host);
		reply_error(c, 503, "Service Unavailable", NULL, msg);
	}
}

/* A lookup ended: goes on with the connection it was for, if still there. */
static void on_resolved(struct policy_proxy *px, const struct proxy_resolved *r)
{
	struct proxy_conn *c = NULL;
	char msg[400];
	size_t i;

	for (i = 0; i < px->nconns; i++)
		if (px->conns[i]->id == r->conn_id)
			c = px->conns[i];
	if (!c || c->state != CS_RESOLVING)
		goto out; /* the connection went away meanwhile */
	if (r->rc != 0) {
		snprintf(msg, sizeof(msg), "cannot resolve %s: %s", c->host, r->error);
		reply_error(c, 502, "Bad Gateway", NULL, msg);
		goto out;
	}
	memcpy(c->addrs, r->addrs, r->naddrs * sizeof(r->addrs[0]));
	c->naddrs = r->naddrs;
	have_addresses(px, c);
out:
	return;
}

/* ---- requests ---------------------------------------------------------------- */

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
	shown_copy(h->target, h->target_len, c->url, sizeof(c->url));
	if (policy_parse_authority(h->target, h->target_len, c->host, sizeof(c->host), &c->port,
	                           &is_ip, &ip, why, sizeof(why)) < 0 ||
	    c->port == 0) {
		snprintf(msg, sizeof(msg), "CONNECT needs host:port: %s",
		         why[0] ? why : "the port is missing");
		reply_error(c, 400, "Bad Request", NULL, msg);
	} else if (policy_egress_check_target(px->policy, POLICY_SCHEME_ANY, c->host, is_ip, &ip,
	                                      c->port, c->url, &d) < 0) {
		refuse(px, c, &d);
	} else {
		start_resolve(px, c, is_ip, &ip);
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
	shown_copy(h->target, h->target_len, c->url, sizeof(c->url));
	if (strncasecmp(target, "http://", 7) != 0) {
		reply_error(c, 400, "Bad Request", NULL,
		            target[0] == '/' ? "this is a proxy: send absolute-form requests "
		                               "(GET http://host/path) or CONNECT"
		                             : "only http:// requests are forwarded; use CONNECT for "
		                               "https and wss");
		goto out;
	}
	if (policy_url_parse(target, &u, why, sizeof(why)) < 0) {
		char msg[300];

		snprintf(msg, sizeof(msg), "the request target is not a valid URL: %s", why);
		reply_error(c, 400, "Bad Request", NULL, msg);
		goto out;
	}
	snprintf(c->host, sizeof(c->host), "%s", u.host);
	c->port = u.port;
	if (policy_egress_check_url(px->policy, target, &d) < 0) {
		refuse(px, c, &d);
		goto out;
	}
	status = proxy_http_request_body(h, &c->req_body, why, sizeof(why));
	if (status < 0) {
		reply_error(c, -status, status == -501 ? "Not Implemented" : "Bad Request", NULL, why);
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
		snprintf(hosthdr + strlen(hosthdr), sizeof(hosthdr) - strlen(hosthdr), ":%d", u.port);
	if (proxy_http_rewrite_request(h, path, plen, hosthdr, c->upgrade, &out) < 0 ||
	    pbuf_add(&c->up, out.data, out.len) < 0) {
		reply_error(c, 431, "Request Header Fields Too Large", NULL,
		            "the request head is too large");
		goto out;
	}
	start_resolve(px, c, u.is_ip, &u.ip);
out:
	gb_buf_free(&out);
}

/* Feeds bytes of the request body from cin into up; what is left in cin
 * is the next (pipelined) request. Returns 0 or -1 on broken framing. */
static int body_from_cin(struct proxy_conn *c)
{
	long n;
	size_t room = pbuf_room(&c->up);
	size_t take = c->cin_len < room ? c->cin_len : room;
	int rc = 0;

	if (c->req_body.done || !take)
		goto out;
	n = proxy_body_feed(&c->req_body, c->cin, take);
	if (n < 0) {
		rc = -1;
		goto out;
	}
	pbuf_add(&c->up, c->cin, (size_t)n);
	memmove(c->cin, c->cin + n, c->cin_len - (size_t)n);
	c->cin_len -= (size_t)n;
out:
	return rc;
}

/* Tries to parse a request head out of cin and act on it. The head
 * leaves cin first: what stays is the body and any pipelined request. */
static void try_head(struct policy_proxy *px, struct proxy_conn *c)
{
	struct proxy_head *h = NULL;
	char *head = NULL;
	char why[200] = "";
	size_t end;
	int rc;

	end = proxy_http_head_end(c->cin, c->cin_len);
	if (!end) {
		if (c->cin_len >= px->o.max_header_bytes)
			reply_error(c, 431, "Request Header Fields Too Large", NULL,
			            "the request head is larger than the proxy accepts");
		goto out;
	}
	h = calloc(1, sizeof(*h));
	head = malloc(end);
	if (!h || !head) {
		reply_error(c, 503, "Service Unavailable", NULL, "out of memory");
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
		reply_error(c, -rc, rc == -431 ? "Request Header Fields Too Large" : "Bad Request",
		            NULL, why);
		goto out;
	}
	snprintf(c->method, sizeof(c->method), "%s", h->method);
	if (!strcmp(h->method, "CONNECT"))
		handle_connect(px, c, h);
	else
		handle_forward(px, c, h);
	if (c->state != CS_CLOSING && !c->is_connect && body_from_cin(c) < 0)
		reply_error(c, 400, "Bad Request", NULL, "the chunked request body is malformed");
out:
	free(head);
	free(h);
}

/* The response (and the request) is over: back to HEAD when the
 * connection may be kept, else close after the flush. */
static void exchange_done(struct policy_proxy *px, struct proxy_conn *c)
{
	close_fd(&c->ufd);
	if (!c->keepalive || c->client_eof || !c->req_body.done ||
	    c->resp_body.kind == PROXY_BODY_UNTIL_CLOSE) {
		set_state(c, CS_CLOSING);
		return;
	}
	set_state(c, CS_HEAD);
	c->resp_started = 0;
	c->head_ms = c->cin_len ? gb_now_ms() : 0;
	if (c->cin_len)
		try_head(px, c);
}

/* Parses the response head in uin, passes it on rewritten, and starts
 * relaying its body. */
static void try_response_head(struct policy_proxy *px, struct proxy_conn *c)
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
			reply_error(c, 502, "Bad Gateway", NULL, "the upstream's response head is too large");
		goto out;
	}
	h = calloc(1, sizeof(*h));
	if (!h || proxy_http_parse_response(c->uin, end, h, why, sizeof(why)) < 0) {
		reply_error(c, 502, "Bad Gateway", NULL, h ? why : "out of memory");
		goto out;
	}
	if (h->status == 101 && c->upgrade) {
		if (proxy_http_rewrite_response(h, 0, 1, &out) < 0 ||
		    pbuf_add(&c->down, out.data, out.len) < 0) {
			reply_error(c, 502, "Bad Gateway", NULL, "the upstream's response head is too large");
			goto out;
		}
		c->resp_started = 1;
		rest = c->uin_len - end;
		if (rest)
			pbuf_add(&c->down, c->uin + end, rest);
		c->uin_len = 0;
		set_state(c, CS_TUNNEL);
		goto out;
	}
	if (h->status >= 100 && h->status < 200) { /* 100 Continue and friends: pass, read on */
		if (pbuf_add(&c->down, c->uin, end) < 0) {
			reply_error(c, 502, "Bad Gateway", NULL, "the upstream's response head is too large");
			goto out;
		}
		memmove(c->uin, c->uin + end, c->uin_len - end);
		c->uin_len -= end;
		if (c->uin_len)
			try_response_head(px, c);
		goto out;
	}
	proxy_http_response_body(h, c->method, &c->resp_body);
	if (c->resp_body.kind == PROXY_BODY_UNTIL_CLOSE)
		c->keepalive = 0;
	if (proxy_http_rewrite_response(h, c->keepalive, 0, &out) < 0 ||
	    pbuf_add(&c->down, out.data, out.len) < 0) {
		reply_error(c, 502, "Bad Gateway", NULL, "the upstream's response head is too large");
		goto out;
	}
	c->resp_started = 1;
	rest = c->uin_len - end;
	n = proxy_body_feed(&c->resp_body, c->uin + end, rest);
	if (n < 0) {
		c->keepalive = 0;
		set_state(c, CS_CLOSING);
		goto out;
	}
	pbuf_add(&c->down, c->uin + end, (size_t)n);
	c->uin_len = 0;
	if (c->resp_body.done)
		exchange_done(px, c);
out:
	free(h);
	gb_buf_free(&out);
}

/* ---- I/O --------------------------------------------------------------------- */

/* Writes what b holds to fd; counts it. Returns 0, or -1 on a hard error. */
static int flush(struct policy_proxy *px, struct proxy_conn *c, int fd, struct pbuf *b,
                 _Atomic uint64_t *counter)
{
	int rc = 0;

	while (pbuf_pending(b)) {
		ssize_t n = send(fd, b->data + b->off, pbuf_pending(b), MSG_NOSIGNAL);

		if (n < 0) {
			if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)
				rc = -1;
			break;
		}
		b->off += (size_t)n;
		atomic_fetch_add(counter, (uint64_t)n);
		c->active_ms = gb_now_ms();
	}
	if (!pbuf_pending(b))
		b->off = b->len = 0;
	(void)px;
	return rc;
}

/* Reads at most max bytes from fd into buf. Returns the count, 0 at EOF,
 * -1 when nothing is there now, -2 on a hard error. */
static ssize_t read_some(int fd, char *buf, size_t max)
{
	ssize_t n = recv(fd, buf, max, 0);

	if (n < 0)
		n = (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR) ? -1 : -2;
	return n;
}

/* The client has something for us. */
static void client_readable(struct policy_proxy *px, struct proxy_conn *c)
{
	char tmp[PROXY_IO_CHUNK];
	size_t max = 0;
	ssize_t n;
	long used;

	switch (c->state) {
	case CS_HEAD:
		max = px->o.max_header_bytes - c->cin_len;
		break;
	case CS_FORWARD:
		max = pbuf_room(&c->up);
		if (max > px->o.max_header_bytes - c->cin_len)
			max = px->o.max_header_bytes - c->cin_len;
		if (c->req_body.done)
			max = 0;
		break;
	case CS_TUNNEL:
		max = c->client_eof ? 0 : pbuf_room(&c->up);
		break;
	case CS_CLOSING: /* lingering: read and drop until EOF */
		max = sizeof(tmp);
		break;
	default:
		break;
	}
	if (max > sizeof(tmp))
		max = sizeof(tmp);
	if (!max)
		goto out;
	n = read_some(c->cfd, tmp, max);
	if (n == -1)
		goto out;
	if (n == -2 || (n == 0 && c->state != CS_TUNNEL)) {
		set_state(c, CS_DEAD); /* gone, or gone mid-request */
		goto out;
	}
	c->active_ms = gb_now_ms();
	if (c->state == CS_HEAD) {
		if (!c->cin_len)
			c->head_ms = c->active_ms;
		memcpy(c->cin + c->cin_len, tmp, (size_t)n);
		c->cin_len += (size_t)n;
		try_head(px, c);
	} else if (c->state == CS_FORWARD) {
		used = proxy_body_feed(&c->req_body, tmp, (size_t)n);
		if (used < 0) {
			set_state(c, CS_DEAD);
			goto out;
		}
		pbuf_add(&c->up, tmp, (size_t)used);
		memcpy(c->cin + c->cin_len, tmp + used, (size_t)(n - used)); /* pipelined */
		c->cin_len += (size_t)(n - used);
	} else if (c->state == CS_TUNNEL) {
		if (n == 0)
			c->client_eof = 1;
		else
			pbuf_add(&c->up, tmp, (size_t)n);
	}
out:
	return;
}

/* The upstream has something for us (or is connected). */
static void upstream_readable(struct policy_proxy *px, struct proxy_conn *c)
{
	char tmp[PROXY_IO_CHUNK];
	size_t max;
	ssize_t n;
	long used;

	if (c->state == CS_FORWARD && !c->resp_started) {
		n = read_some(c->ufd, c->uin + c->uin_len, px->o.max_header_bytes - c->uin_len);
		if (n == 0 || n == -2) {
			reply_error(c, 502, "Bad Gateway", NULL,
			            "the upstream closed the connection before it answered");
		} else if (n > 0) {
			c->uin_len += (size_t)n;
			c->active_ms = gb_now_ms();
			try_response_head(px, c);
		}
		goto out;
	}
	max = pbuf_room(&c->down) < sizeof(tmp) ? pbuf_room(&c->down) : sizeof(tmp);
	if (c->upstream_eof || !max)
		goto out;
	n = read_some(c->ufd, tmp, max);
	if (n == -1)
		goto out;
	if (n <= 0) {
		c->upstream_eof = 1;
		if (c->state == CS_FORWARD) {
			/* the end of an until-close body, or one cut short: either
			 * way the client learns of it by our close */
			c->keepalive = 0;
			c->resp_body.done = 1;
			exchange_done(px, c);
		}
		goto out;
	}
	c->active_ms = gb_now_ms();
	if (c->state == CS_TUNNEL) {
		pbuf_add(&c->down, tmp, (size_t)n);
		goto out;
	}
	used = proxy_body_feed(&c->resp_body, tmp, (size_t)n);
	if (used < 0) {
		c->keepalive = 0;
		close_fd(&c->ufd);
		set_state(c, CS_CLOSING);
		goto out;
	}
	pbuf_add(&c->down, tmp, (size_t)used);
	if (c->resp_body.done)
		exchange_done(px, c);
out:
	return;
}

/* A non-blocking connect finished, one way or the other. */
static void connect_finished(struct policy_proxy *px, struct proxy_conn *c)
{
	int err = 0;
	socklen_t len = sizeof(err);

	if (getsockopt(c->ufd, SOL_SOCKET, SO_ERROR, &err, &len) < 0)
		err = errno;
	if (err) {
		c->last_errno = err;
		connect_next(px, c);
	} else {
		on_connected(px, c);
	}
}

/* Half-closes and ends tunnels once a side is done and flushed. */
static void tunnel_progress(struct proxy_conn *c)
{
	if (c->client_eof && !pbuf_pending(&c->up) && !c->up_shut && c->ufd >= 0) {
		shutdown(c->ufd, SHUT_WR);
		c->up_shut = 1;
	}
	if (c->upstream_eof && !pbuf_pending(&c->down) && !c->down_shut) {
		shutdown(c->cfd, SHUT_WR);
		c->down_shut = 1;
	}
	if (c->up_shut && c->down_shut)
		set_state(c, CS_DEAD);
}

/* Services one connection after poll: reads, connects, writes, then the
 * state changes they lead to. */
static void service(struct policy_proxy *px, struct proxy_conn *c, short crev, short urev)
{
	int relaying;

	if (c->state == CS_CONNECTING && urev)
		connect_finished(px, c);
	if (crev & (POLLIN | POLLHUP | POLLERR))
		client_readable(px, c);
	relaying = c->ufd >= 0 && (c->state == CS_FORWARD || c->state == CS_TUNNEL);
	if (relaying && (urev & (POLLIN | POLLHUP | POLLERR)))
		upstream_readable(px, c);
	relaying = c->ufd >= 0 && (c->state == CS_FORWARD || c->state == CS_TUNNEL);
	if (relaying && flush(px, c, c->ufd, &c->up, &px->bytes_up) < 0) {
		if (c->state == CS_FORWARD && !c->resp_started)
			reply_error(c, 502, "Bad Gateway", NULL, "the upstream connection failed");
		else
			set_state(c, CS_DEAD);
	}
	if (c->state == CS_DEAD)
		goto out;
	if (flush(px, c, c->cfd, &c->down, &px->bytes_down) < 0) {
		set_state(c, CS_DEAD);
		goto out;
	}
	/* a request body that arrived with the head may fit now */
	if (c->state == CS_FORWARD && c->cin_len && !c->req_body.done && body_from_cin(c) < 0)
		set_state(c, CS_DEAD);
	if (c->state == CS_TUNNEL)
		tunnel_progress(c);
	if (c->state == CS_CLOSING && !pbuf_pending(&c->down) && !c->down_shut) {
		shutdown(c->cfd, SHUT_WR);
		c->down_shut = 1;
	}
out:
	return;
}

/* Deadline of c in ms on the monotonic clock. */
static int64_t deadline(const struct policy_proxy *px, const struct proxy_conn *c)
{
	int64_t at = 0;

	switch (c->state) {
	case CS_HEAD:
		at = c->cin_len ? c->head_ms + px->o.header_timeout_ms
		                : c->active_ms + px->o.idle_timeout_ms;
		break;
	case CS_RESOLVING:
	case CS_CONNECTING:
		at = c->state_ms + px->o.connect_timeout_ms;
		break;
	case CS_FORWARD:
	case CS_TUNNEL:
		at = c->active_ms + px->o.idle_timeout_ms;
		break;
	case CS_CLOSING:
		at = c->state_ms + PROXY_LINGER_MS;
		break;
	default:
		break;
	}
	return at;
}

/* Acts on a passed deadline. */
static void expire(struct policy_proxy *px, struct proxy_conn *c)
{
	char msg[400];

	switch (c->state) {
	case CS_HEAD:
		if (c->cin_len)
			reply_error(c, 408, "Request Timeout", NULL,
			            "the request head did not arrive in time");
		else
			set_state(c, CS_DEAD);
		break;
	case CS_RESOLVING:
		snprintf(msg, sizeof(msg), "resolving %s took too long", c->host);
		reply_error(c, 504, "Gateway Timeout", NULL, msg);
		break;
	case CS_CONNECTING:
		c->last_errno = ETIMEDOUT;
		connect_next(px, c);
		break;
	case CS_FORWARD:
		if (!c->resp_started) {
			snprintf(msg, sizeof(msg), "%s did not answer in time", c->host);
			reply_error(c, 504, "Gateway Timeout", NULL, msg);
		} else {
			set_state(c, CS_DEAD);
		}
		break;
	default:
		set_state(c, CS_DEAD);
		break;
	}
}

/* Frees a connection and closes its sockets. */
static void conn_free(struct policy_proxy *px, struct proxy_conn *c)
{
	close_fd(&c->cfd);
	close_fd(&c->ufd);
	free(c->cin);
	free(c->uin);
	free(c->up.data);
	free(c->down.data);
	free(c);
	atomic_fetch_sub(&px->connections_open, 1);
}

/* Turns a client away at the connection limit. */
static void over_limit(struct policy_proxy *px, int fd)
{
	char msg[200];
	char resp[400];
	int n;

	snprintf(msg, sizeof(msg), "this session already has %d connections open, the most its "
	         "egress proxy allows (rule proxy-connection-limit)", px->o.max_connections);
	n = snprintf(resp, sizeof(resp), "HTTP/1.1 503 Service Unavailable\r\nContent-Type: "
	             "text/plain\r\nContent-Length: %zu\r\nX-Glassbox-Rule: proxy-connection-limit"
	             "\r\nConnection: close\r\n\r\n%s\n", strlen(msg) + 1, msg);
	atomic_fetch_add(&px->over_limit, 1);
	report(px, "", "", "", "", "proxy-connection-limit", msg);
	if (n > 0 && send(fd, resp, (size_t)n, MSG_NOSIGNAL | MSG_DONTWAIT) < 0) {
		/* the client is gone or full: closing is all that is left */
	}
	close(fd);
}

/* Accepts every pending client. */
static void accept_all(struct policy_proxy *px)
{
	int i;

	for (i = 0; i < 64; i++) {
		struct proxy_conn *c;
		int fd = accept4(px->lfd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);

		if (fd < 0)
			break;
		atomic_fetch_add(&px->connections, 1);
		if (px->nconns >= (size_t)px->o.max_connections) {
			over_limit(px, fd);
			continue;
		}
		c = calloc(1, sizeof(*c));
		if (c) {
			c->cin = malloc(px->o.max_header_bytes);
			c->uin = malloc(px->o.max_header_bytes);
			c->up.data = malloc(px->buf_cap);
			c->down.data = malloc(px->buf_cap);
		}
		if (!c || !c->cin || !c->uin || !c->up.data || !c->down.data) {
			if (c) {
				free(c->cin);
				free(c->uin);
				free(c->up.data);
				free(c->down.data);
				free(c);
			}
			close(fd);
			continue;
		}
		c->up.cap = c->down.cap = px->buf_cap;
		c->id = ++px->next_id;
		c->cfd = fd;
		c->ufd = -1;
		c->keepalive = 1;
		c->active_ms = gb_now_ms();
		set_state(c, CS_HEAD);
		px->conns[px->nconns++] = c;
		atomic_fetch_add(&px->connections_open, 1);
	}
}

/* Poll events wanted on the client socket. */
static short client_events(const struct policy_proxy *px, const struct proxy_conn *c)
{
	short ev = 0;

	if (pbuf_pending(&c->down))
		ev |= POLLOUT;
	switch (c->state) {
	case CS_HEAD:
		if (c->cin_len < px->o.max_header_bytes)
			ev |= POLLIN;
		break;
	case CS_FORWARD:
		if (!c->req_body.done && pbuf_room(&c->up) && c->cin_len < px->o.max_header_bytes)
			ev |= POLLIN;
		break;
	case CS_TUNNEL:
		if (!c->client_eof && pbuf_room(&c->up))
			ev |= POLLIN;
		break;
	case CS_CLOSING:
		if (!pbuf_pending(&c->down))
			ev |= POLLIN;
		break;
	default:
		break;
	}
	return ev;
}

/* Poll events wanted on the upstream socket. */
static short upstream_events(const struct proxy_conn *c)
{
	short ev = 0;

	if (c->state == CS_CONNECTING) {
		ev = POLLOUT;
	} else if (c->state == CS_FORWARD || c->state == CS_TUNNEL) {
		if (pbuf_pending(&c->up))
			ev |= POLLOUT;
		if (!c->upstream_eof && (!c->resp_started || pbuf_room(&c->down)))
			ev |= POLLIN;
	}
	return ev;
}

/* The loop thread. */
static void *proxy_main(void *arg)
{
	struct policy_proxy *px = arg;
	struct proxy_resolved res;
	size_t i;

	while (!atomic_load(&px->stopping)) {
		nfds_t n = 0;
		int64_t now = gb_now_ms();
		int64_t next = now + 1000;
		int rc;

		px->pfds[n].fd = px->wake[0];
		px->pfds[n++].events = POLLIN;
		px->pfds[n].fd = px->lfd;
		px->pfds[n++].events = POLLIN;
		for (i = 0; i < px->nconns; i++) {
			struct proxy_conn *c = px->conns[i];
			int64_t dl = deadline(px, c);
			short ev = client_events(px, c);

			if (dl < next)
				next = dl;
			/* a slot with no events is off: a hang-up there would spin */
			c->pidx = (int)n;
			px->pfds[n].fd = ev ? c->cfd : -1;
			px->pfds[n].revents = 0;
			px->pfds[n++].events = ev;
			c->uidx = -1;
			if (c->ufd >= 0) {
				ev = upstream_events(c);
				c->uidx = (int)n;
				px->pfds[n].fd = ev ? c->ufd : -1;
				px->pfds[n].revents = 0;
				px->pfds[n++].events = ev;
			}
		}
		rc = poll(px->pfds, n, next > now ? (int)(next - now) : 0);
		if (rc < 0 && errno != EINTR) {
			GB_LOGE(MOD, "egress proxy: poll failed: %s", strerror(errno));
			break;
		}
		if (rc > 0 && (px->pfds[0].revents & POLLIN)) {
			char drain[64];

			while (read(px->wake[0], drain, sizeof(drain)) > 0)
				;
		}
		while (px->resolver && proxy_resolver_take(px->resolver, &res) == 1)
			on_resolved(px, &res);
		now = gb_now_ms();
		for (i = 0; i < px->nconns; i++) {
			struct proxy_conn *c = px->conns[i];
			short crev = rc > 0 ? px->pfds[c->pidx].revents : 0;
			short urev = rc > 0 && c->uidx >= 0 ? px->pfds[c->uidx].revents : 0;

			if (crev || urev)
				service(px, c, crev, urev);
			if (c->state != CS_DEAD && deadline(px, c) <= now)
				expire(px, c);
		}
		/* drop the dead */
		for (i = 0; i < px->nconns;) {
			if (px->conns[i]->state == CS_DEAD) {
				conn_free(px, px->conns[i]);
				px->conns[i] = px->conns[--px->nconns];
			} else {
				i++;
			}
		}
		if (rc > 0 && (px->pfds[1].revents & POLLIN))
			accept_all(px);
	}
	for (i = 0; i < px->nconns; i++)
		conn_free(px, px->conns[i]);
	px->nconns = 0;
	return NULL;
}

/* ---- public API -------------------------------------------------------------- */

/* Fills in the defaults and checks the ceilings of px->o. */
static int options_check(struct policy_proxy *px, char *err, size_t errlen)
{
	struct policy_proxy_options *o = &px->o;
	int rc = -POLICY_EINVAL;

	if (!o->max_connections)
		o->max_connections = PROXY_DEFAULT_MAX_CONNS;
	if (!o->header_timeout_ms)
		o->header_timeout_ms = PROXY_DEFAULT_HEADER_TIMEOUT_MS;
	if (!o->connect_timeout_ms)
		o->connect_timeout_ms = PROXY_DEFAULT_CONNECT_TIMEOUT_MS;
	if (!o->idle_timeout_ms)
		o->idle_timeout_ms = PROXY_DEFAULT_IDLE_TIMEOUT_MS;
	if (!o->max_header_bytes)
		o->max_header_bytes = PROXY_DEFAULT_HEADER_BYTES;
	if (o->max_connections < 0 || o->max_connections > PROXY_LIMIT_MAX_CONNS ||
	    o->header_timeout_ms < 0 || o->connect_timeout_ms < 0 || o->idle_timeout_ms < 0 ||
	    o->max_header_bytes < 1024 || o->max_header_bytes > PROXY_LIMIT_HEADER_BYTES ||
	    o->listen_port < 0 || o->listen_port > 65535) {
		snprintf(err, errlen, "egress proxy options out of range: max_connections 1..%d, "
		         "timeouts >= 0, max_header_bytes 1 KiB..1 MiB, listen_port 0..65535",
		         PROXY_LIMIT_MAX_CONNS);
		goto out;
	}
	px->buf_cap = o->max_header_bytes + 4096 > PROXY_IO_CHUNK ? o->max_header_bytes + 4096
	                                                          : PROXY_IO_CHUNK;
	rc = 0;
out:
	return rc;
}

/* Opens px->lfd: the given socket, or a new one on listen_addr:port.
 * Learns the port either way. */
static int open_listener(struct policy_proxy *px, char *err, size_t errlen)
{
	const char *addr = px->o.listen_addr ? px->o.listen_addr : "127.0.0.1";
	struct sockaddr_storage ss;
	socklen_t sslen = sizeof(ss);
	struct policy_ip ip;
	int one = 1;
	int rc = -POLICY_ESYS;

	if (px->lfd >= 0) {
		fcntl(px->lfd, F_SETFL, fcntl(px->lfd, F_GETFL) | O_NONBLOCK);
	} else {
		if (policy_ip_parse_literal(addr, &ip) < 0) {
			snprintf(err, errlen, "egress proxy listen address \"%.64s\" is not an IP address",
			         addr);
			rc = -POLICY_EINVAL;
			goto out;
		}
		policy_ip_to_sockaddr(&ip, px->o.listen_port, &ss, &sslen);
		px->lfd = socket(ss.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
		if (px->lfd < 0 || setsockopt(px->lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) < 0 ||
		    bind(px->lfd, (struct sockaddr *)&ss, sslen) < 0 || listen(px->lfd, 128) < 0) {
			snprintf(err, errlen, "cannot listen on %s port %d for the egress proxy: %s", addr,
			         px->o.listen_port, strerror(errno));
			goto out;
		}
	}
	sslen = sizeof(ss);
	if (getsockname(px->lfd, (struct sockaddr *)&ss, &sslen) < 0 ||
	    policy_ip_from_sockaddr((struct sockaddr *)&ss, &ip) < 0) {
		snprintf(err, errlen, "the egress proxy's listening socket is not a TCP/IP socket");
		goto out;
	}
	px->port = ntohs(ss.ss_family == AF_INET ? ((struct sockaddr_in *)(void *)&ss)->sin_port
	                                         : ((struct sockaddr_in6 *)(void *)&ss)->sin6_port);
	{
		char text[INET6_ADDRSTRLEN];

		policy_ip_format(&ip, text, sizeof(text));
		if (policy_ip_is_v4(&ip))
			snprintf(px->listen_text, sizeof(px->listen_text), "%s", text);
		else
			snprintf(px->listen_text, sizeof(px->listen_text), "[%s]", text);
	}
	rc = 0;
out:
	return rc;
}

int policy_proxy_start(const struct policy_egress *p, const struct policy_proxy_options *o,
                       struct policy_proxy **out, char *err, size_t errlen)
{
	struct policy_proxy *px = NULL;
	int rc = -POLICY_EINVAL;

	*out = NULL;
	if (!p || !o) {
		snprintf(err, errlen, "policy_proxy_start needs a policy and options");
		goto out;
	}
	rc = -POLICY_ENOMEM;
	px = calloc(1, sizeof(*px));
	if (!px) {
		snprintf(err, errlen, "out of memory starting the egress proxy");
		if (o->listen_fd > 0)
			close(o->listen_fd); /* taken over even on failure */
		goto out;
	}
	px->policy = p;
	px->o = *o;
	px->lfd = o->listen_fd > 0 ? o->listen_fd : -1; /* owned from here on */
	px->wake[0] = px->wake[1] = -1;
	pthread_mutex_init(&px->ports_lock, NULL);
	px->ports_lock_made = 1;
	snprintf(px->session, sizeof(px->session), "%s", o->session_id ? o->session_id : "");
	px->o.session_id = px->session;
	px->o.listen_addr = NULL;
	rc = options_check(px, err, errlen);
	if (rc < 0)
		goto out;
	px->o.listen_addr = o->listen_addr;
	rc = open_listener(px, err, errlen);
	px->o.listen_addr = NULL;
	if (rc < 0)
		goto out;
	rc = -POLICY_ENOMEM;
	px->conns = calloc((size_t)px->o.max_connections + 1, sizeof(*px->conns));
	px->pfds = calloc(2 * (size_t)px->o.max_connections + 2, sizeof(*px->pfds));
	if (!px->conns || !px->pfds) {
		snprintf(err, errlen, "out of memory starting the egress proxy");
		goto out;
	}
	rc = -POLICY_ESYS;
	if (pipe2(px->wake, O_NONBLOCK | O_CLOEXEC) < 0) {
		snprintf(err, errlen, "cannot create the egress proxy's wake pipe: %s", strerror(errno));
		goto out;
	}
	if (proxy_resolver_new(px->wake[1], (size_t)px->o.max_connections, &px->resolver) < 0) {
		snprintf(err, errlen, "out of memory starting the egress proxy");
		rc = -POLICY_ENOMEM;
		goto out;
	}
	if (pthread_create(&px->thread, NULL, proxy_main, px) != 0) {
		snprintf(err, errlen, "cannot start the egress proxy thread");
		goto out;
	}
	px->thread_started = 1;
	*out = px;
	px = NULL;
	rc = 0;
out:
	policy_proxy_stop(px);
	return rc;
}

void policy_proxy_stop(struct policy_proxy *px)
{
	char one = 1;

	if (!px)
		return;
	atomic_store(&px->stopping, 1);
	if (px->wake[1] >= 0 && write(px->wake[1], &one, 1) < 0) {
		/* full: the loop wakes anyway */
	}
	if (px->thread_started)
		pthread_join(px->thread, NULL);
	proxy_resolver_free(px->resolver);
	close_fd(&px->lfd);
	close_fd(&px->wake[0]);
	close_fd(&px->wake[1]);
	free(px->conns);
	free(px->pfds);
	if (px->ports_lock_made)
		pthread_mutex_destroy(&px->ports_lock);
	free(px);
}

int policy_proxy_refuse_port(struct policy_proxy *px, int port)
{
	size_t i;
	int rc = -POLICY_EINVAL;

	if (!px || port < 1 || port > 65535)
		goto out;
	rc = 0;
	pthread_mutex_lock(&px->ports_lock);
	for (i = 0; i < POLICY_PROXY_REFUSED_PORTS; i++)
		if (px->refused_ports[i] == port)
			goto unlock;
	px->refused_ports[px->next_port_slot] = port;
	px->next_port_slot = (px->next_port_slot + 1) % POLICY_PROXY_REFUSED_PORTS;
unlock:
	pthread_mutex_unlock(&px->ports_lock);
out:
	return rc;
}

int policy_url_is_loopback_port(const struct policy_egress *p, const char *url, int port)
{
	const struct policy_host_override *o;
	struct policy_url u;
	char why[200];
	size_t len;
	size_t i;
	int hit = 0;

	if (!url || port < 1 || policy_url_parse(url, &u, why, sizeof(why)) < 0 || u.port != port)
		goto out;
	len = strlen(u.host);
	if (u.is_ip) {
		hit = policy_ip_class(&u.ip) == POLICY_ADDR_LOOPBACK;
		goto out;
	}
	if (!strcmp(u.host, "localhost") ||
	    (len > 10 && !strcmp(u.host + len - 10, ".localhost"))) {
		hit = 1;
		goto out;
	}
	o = p ? policy_egress_override(p, u.host) : NULL;
	for (i = 0; o && i < o->naddrs; i++)
		if (policy_ip_class(&o->addrs[i]) == POLICY_ADDR_LOOPBACK)
			hit = 1;
out:
	return hit;
}

int policy_proxy_port(const struct policy_proxy *px)
{
	return px ? px->port : 0;
}

void policy_proxy_get_stats(const struct policy_proxy *px, struct policy_proxy_stats *st)
{
	memset(st, 0, sizeof(*st));
	if (!px)
		return;
	st->bytes_up = atomic_load(&px->bytes_up);
	st->bytes_down = atomic_load(&px->bytes_down);
	st->connections = atomic_load(&px->connections);
	st->connections_open = atomic_load(&px->connections_open);
	st->requests = atomic_load(&px->requests);
	st->refused = atomic_load(&px->refused);
	st->over_limit = atomic_load(&px->over_limit);
}

void policy_proxy_chromium_flags(const struct policy_proxy *px,
                                 struct policy_chromium_flags *flags)
{
	const char *host = px ? px->listen_text : "127.0.0.1";

	memset(flags, 0, sizeof(*flags));
	snprintf(flags->proxy_server, sizeof(flags->proxy_server), "http://%s:%d", host,
	         px ? px->port : 0);
	snprintf(flags->host_resolver_rules, sizeof(flags->host_resolver_rules),
	         "MAP * ~NOTFOUND , EXCLUDE %s", host);
	flags->extra[0] = "--proxy-bypass-list=<-loopback>";
	flags->extra[1] = "--webrtc-ip-handling-policy=disable_non_proxied_udp";
	flags->extra[2] = "--disable-quic";
	flags->extra[3] = NULL;
}

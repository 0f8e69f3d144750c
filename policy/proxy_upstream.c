/*
 * proxy_upstream.c - from a checked host to an upstream connection:
 * resolving (address literals and overrides at once, DNS on the resolver
 * thread), checking every address with the policy and the browser's
 * DevTools port, connecting to each in turn. Loop thread only, except
 * policy_url_is_loopback_port (pure) and port_refused (under ports_lock).
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

static void on_connected(struct policy_proxy *px, struct proxy_conn *c);

/* Tries the next address; on none left, answers 502. */
void proxy_connect_next(struct policy_proxy *px, struct proxy_conn *c)
{
	char msg[400];
	int started = 0;

	proxy_close_fd(&c->ufd);
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
			proxy_set_state(c, CS_CONNECTING);
		} else {
			c->last_errno = errno;
			close(fd);
		}
	}
	if (started)
		goto out;
	snprintf(msg, sizeof(msg), "cannot connect to %s port %d: %s", c->host, c->port,
	         strerror(c->last_errno ? c->last_errno : ECONNREFUSED));
	proxy_reply_error(c, 502, "Bad Gateway", NULL, msg);
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
			proxy_refuse(px, c, &d);
			goto out;
		}
		if (policy_egress_check_ip(proxy_policy(px), c->host, &c->addrs[i], c->port, &d) <
		    0) {
			proxy_refuse(px, c, &d);
			goto out;
		}
	}
	c->next_addr = 0;
	c->last_errno = 0;
	proxy_connect_next(px, c);
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
		proxy_set_state(c, CS_FORWARD);
		goto out;
	}
	proxy_pbuf_add(&c->down, established, sizeof(established) - 1);
	c->resp_started = 1;
	if (c->cin_len && proxy_pbuf_add(&c->up, c->cin, c->cin_len) == 0)
		c->cin_len = 0;
	proxy_set_state(c, CS_TUNNEL);
out:
	return;
}

/* Looks the host up: a literal or an override now, DNS through the
 * resolver thread otherwise. */
void proxy_start_resolve(struct policy_proxy *px, struct proxy_conn *c, int is_ip,
                         const struct policy_ip *ip)
{
	const struct policy_host_override *o = policy_egress_override(proxy_policy(px), c->host);
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
		proxy_set_state(c, CS_RESOLVING);
	} else {
		snprintf(msg, sizeof(msg), "cannot resolve %s now: too many lookups in progress",
		         c->host);
		proxy_reply_error(c, 503, "Service Unavailable", NULL, msg);
	}
}

/* A lookup ended: goes on with the connection it was for, if still there. */
void proxy_on_resolved(struct policy_proxy *px, const struct proxy_resolved *r)
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
		proxy_reply_error(c, 502, "Bad Gateway", NULL, msg);
		goto out;
	}
	memcpy(c->addrs, r->addrs, r->naddrs * sizeof(r->addrs[0]));
	c->naddrs = r->naddrs;
	have_addresses(px, c);
out:
	return;
}

/* A non-blocking connect finished, one way or the other. */
void proxy_connect_finished(struct policy_proxy *px, struct proxy_conn *c)
{
	int err = 0;
	socklen_t len = sizeof(err);

	if (getsockopt(c->ufd, SOL_SOCKET, SO_ERROR, &err, &len) < 0)
		err = errno;
	if (err) {
		c->last_errno = err;
		proxy_connect_next(px, c);
	} else {
		on_connected(px, c);
	}
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

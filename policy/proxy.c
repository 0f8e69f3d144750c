/*
 * proxy.c - the per-session egress proxy (DESIGN.md security layer 3).
 *
 * Chromium is launched with this proxy as its only way out; the proxy
 * checks each request's host with the session's egress policy, resolves
 * names itself (resolver overrides first), checks every address before
 * connecting, and relays bytes. Refusals answer 403 and are reported
 * through on_refusal.
 *
 * The pieces: this file starts and stops a proxy and answers the public
 * API; proxy_loop.c is the loop thread (accepting, polling, timeouts);
 * proxy_io.c relays bytes; proxy_request.c reads request and response
 * heads (HTTP forward, CONNECT tunnels, WebSocket upgrades);
 * proxy_upstream.c resolves, checks and connects; proxy_reply.c refuses,
 * answers errors and counts refusals; proxy_http.c parses HTTP/1.1.
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
		snprintf(err, errlen,
		         "egress proxy options out of range: max_connections 1..%d, "
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
			snprintf(err, errlen,
			         "egress proxy listen address \"%.64s\" is not an IP address",
			         addr);
			rc = -POLICY_EINVAL;
			goto out;
		}
		policy_ip_to_sockaddr(&ip, px->o.listen_port, &ss, &sslen);
		px->lfd = socket(ss.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
		if (px->lfd < 0 ||
		    setsockopt(px->lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) < 0 ||
		    bind(px->lfd, (struct sockaddr *)&ss, sslen) < 0 || listen(px->lfd, 128) < 0) {
			snprintf(err, errlen,
			         "cannot listen on %s port %d for the egress proxy: %s", addr,
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
		snprintf(err, errlen, "cannot create the egress proxy's wake pipe: %s",
		         strerror(errno));
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

void policy_proxy_set_policy(struct policy_proxy *px, const struct policy_egress *p)
{
	__atomic_store_n(&px->policy, p, __ATOMIC_RELEASE);
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
	proxy_close_fd(&px->lfd);
	proxy_close_fd(&px->wake[0]);
	proxy_close_fd(&px->wake[1]);
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

void policy_proxy_chromium_flags(const struct policy_proxy *px, struct policy_chromium_flags *flags)
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

/*
 * proxy_loop.c - the egress proxy's loop thread: accepting clients (and
 * turning them away at the connection limit), one poll() over every
 * socket, servicing each connection after poll, deadlines (head, connect,
 * idle, linger) and freeing connections. Runs on the loop thread only.
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

/* Services one connection after poll: reads, connects, writes, then the
 * state changes they lead to. */
static void service(struct policy_proxy *px, struct proxy_conn *c, short crev, short urev)
{
	int relaying;

	if (c->state == CS_CONNECTING && urev)
		proxy_connect_finished(px, c);
	if (crev & (POLLIN | POLLHUP | POLLERR))
		proxy_client_readable(px, c);
	relaying = c->ufd >= 0 && (c->state == CS_FORWARD || c->state == CS_TUNNEL);
	if (relaying && (urev & (POLLIN | POLLHUP | POLLERR)))
		proxy_upstream_readable(px, c);
	relaying = c->ufd >= 0 && (c->state == CS_FORWARD || c->state == CS_TUNNEL);
	if (relaying && proxy_flush(px, c, c->ufd, &c->up, &px->bytes_up) < 0) {
		if (c->state == CS_FORWARD && !c->resp_started)
			proxy_reply_error(c, 502, "Bad Gateway", NULL,
			                  "the upstream connection failed");
		else
			proxy_set_state(c, CS_DEAD);
	}
	if (c->state == CS_DEAD)
		goto out;
	if (proxy_flush(px, c, c->cfd, &c->down, &px->bytes_down) < 0) {
		proxy_set_state(c, CS_DEAD);
		goto out;
	}
	/* a request body that arrived with the head may fit now */
	if (c->state == CS_FORWARD && c->cin_len && !c->req_body.done && proxy_body_from_cin(c) < 0)
		proxy_set_state(c, CS_DEAD);
	if (c->state == CS_TUNNEL)
		proxy_tunnel_progress(c);
	if (c->state == CS_CLOSING && !proxy_pbuf_pending(&c->down) && !c->down_shut) {
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
			proxy_reply_error(c, 408, "Request Timeout", NULL,
			                  "the request head did not arrive in time");
		else
			proxy_set_state(c, CS_DEAD);
		break;
	case CS_RESOLVING:
		snprintf(msg, sizeof(msg), "resolving %s took too long", c->host);
		proxy_reply_error(c, 504, "Gateway Timeout", NULL, msg);
		break;
	case CS_CONNECTING:
		c->last_errno = ETIMEDOUT;
		proxy_connect_next(px, c);
		break;
	case CS_FORWARD:
		if (!c->resp_started) {
			snprintf(msg, sizeof(msg), "%s did not answer in time", c->host);
			proxy_reply_error(c, 504, "Gateway Timeout", NULL, msg);
		} else {
			proxy_set_state(c, CS_DEAD);
		}
		break;
	default:
		proxy_set_state(c, CS_DEAD);
		break;
	}
}

/* Frees a connection and closes its sockets. */
static void conn_free(struct policy_proxy *px, struct proxy_conn *c)
{
	proxy_close_fd(&c->cfd);
	proxy_close_fd(&c->ufd);
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

	snprintf(msg, sizeof(msg),
	         "this session already has %d connections open, the most its "
	         "egress proxy allows (rule proxy-connection-limit)",
	         px->o.max_connections);
	n = snprintf(resp, sizeof(resp),
	             "HTTP/1.1 503 Service Unavailable\r\nContent-Type: "
	             "text/plain\r\nContent-Length: %zu\r\nX-Glassbox-Rule: proxy-connection-limit"
	             "\r\nConnection: close\r\n\r\n%s\n",
	             strlen(msg) + 1, msg);
	atomic_fetch_add(&px->over_limit, 1);
	proxy_report(px, "", "", "", "", "proxy-connection-limit", msg);
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
		proxy_set_state(c, CS_HEAD);
		px->conns[px->nconns++] = c;
		atomic_fetch_add(&px->connections_open, 1);
	}
}

/* Poll events wanted on the client socket. */
static short client_events(const struct policy_proxy *px, const struct proxy_conn *c)
{
	short ev = 0;

	if (proxy_pbuf_pending(&c->down))
		ev |= POLLOUT;
	switch (c->state) {
	case CS_HEAD:
		if (c->cin_len < px->o.max_header_bytes)
			ev |= POLLIN;
		break;
	case CS_FORWARD:
		if (!c->req_body.done && proxy_pbuf_room(&c->up) &&
		    c->cin_len < px->o.max_header_bytes)
			ev |= POLLIN;
		break;
	case CS_TUNNEL:
		if (!c->client_eof && proxy_pbuf_room(&c->up))
			ev |= POLLIN;
		break;
	case CS_CLOSING:
		if (!proxy_pbuf_pending(&c->down))
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
		if (proxy_pbuf_pending(&c->up))
			ev |= POLLOUT;
		if (!c->upstream_eof && (!c->resp_started || proxy_pbuf_room(&c->down)))
			ev |= POLLIN;
	}
	return ev;
}

/* The loop thread. */
void *proxy_main(void *arg)
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
			proxy_on_resolved(px, &res);
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

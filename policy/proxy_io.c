/*
 * proxy_io.c - moving bytes for the egress proxy: reading from the client
 * and the upstream into bounded buffers, flushing them (and counting
 * bytes up and down), and half-closing tunnels once a side is done. Loop
 * thread only.
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

/* Writes what b holds to fd; counts it. Returns 0, or -1 on a hard error. */
int proxy_flush(struct policy_proxy *px, struct proxy_conn *c, int fd, struct pbuf *b,
                _Atomic uint64_t *counter)
{
	int rc = 0;

	while (proxy_pbuf_pending(b)) {
		ssize_t n = send(fd, b->data + b->off, proxy_pbuf_pending(b), MSG_NOSIGNAL);

		if (n < 0) {
			if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)
				rc = -1;
			break;
		}
		b->off += (size_t)n;
		atomic_fetch_add(counter, (uint64_t)n);
		c->active_ms = gb_now_ms();
	}
	if (!proxy_pbuf_pending(b))
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
void proxy_client_readable(struct policy_proxy *px, struct proxy_conn *c)
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
		max = proxy_pbuf_room(&c->up);
		if (max > px->o.max_header_bytes - c->cin_len)
			max = px->o.max_header_bytes - c->cin_len;
		if (c->req_body.done)
			max = 0;
		break;
	case CS_TUNNEL:
		max = c->client_eof ? 0 : proxy_pbuf_room(&c->up);
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
		proxy_set_state(c, CS_DEAD); /* gone, or gone mid-request */
		goto out;
	}
	c->active_ms = gb_now_ms();
	if (c->state == CS_HEAD) {
		if (!c->cin_len)
			c->head_ms = c->active_ms;
		memcpy(c->cin + c->cin_len, tmp, (size_t)n);
		c->cin_len += (size_t)n;
		proxy_try_head(px, c);
	} else if (c->state == CS_FORWARD) {
		used = proxy_body_feed(&c->req_body, tmp, (size_t)n);
		if (used < 0) {
			proxy_set_state(c, CS_DEAD);
			goto out;
		}
		proxy_pbuf_add(&c->up, tmp, (size_t)used);
		memcpy(c->cin + c->cin_len, tmp + used, (size_t)(n - used)); /* pipelined */
		c->cin_len += (size_t)(n - used);
	} else if (c->state == CS_TUNNEL) {
		if (n == 0)
			c->client_eof = 1;
		else
			proxy_pbuf_add(&c->up, tmp, (size_t)n);
	}
out:
	return;
}

/* The upstream has something for us (or is connected). */
void proxy_upstream_readable(struct policy_proxy *px, struct proxy_conn *c)
{
	char tmp[PROXY_IO_CHUNK];
	size_t max;
	ssize_t n;
	long used;

	if (c->state == CS_FORWARD && !c->resp_started) {
		n = read_some(c->ufd, c->uin + c->uin_len, px->o.max_header_bytes - c->uin_len);
		if (n == 0 || n == -2) {
			proxy_reply_error(c, 502, "Bad Gateway", NULL,
			                  "the upstream closed the connection before it answered");
		} else if (n > 0) {
			c->uin_len += (size_t)n;
			c->active_ms = gb_now_ms();
			proxy_try_response_head(px, c);
		}
		goto out;
	}
	max = proxy_pbuf_room(&c->down) < sizeof(tmp) ? proxy_pbuf_room(&c->down) : sizeof(tmp);
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
			proxy_exchange_done(px, c);
		}
		goto out;
	}
	c->active_ms = gb_now_ms();
	if (c->state == CS_TUNNEL) {
		proxy_pbuf_add(&c->down, tmp, (size_t)n);
		goto out;
	}
	used = proxy_body_feed(&c->resp_body, tmp, (size_t)n);
	if (used < 0) {
		c->keepalive = 0;
		proxy_close_fd(&c->ufd);
		proxy_set_state(c, CS_CLOSING);
		goto out;
	}
	proxy_pbuf_add(&c->down, tmp, (size_t)used);
	if (c->resp_body.done)
		proxy_exchange_done(px, c);
out:
	return;
}

/* Half-closes and ends tunnels once a side is done and flushed. */
void proxy_tunnel_progress(struct proxy_conn *c)
{
	if (c->client_eof && !proxy_pbuf_pending(&c->up) && !c->up_shut && c->ufd >= 0) {
		shutdown(c->ufd, SHUT_WR);
		c->up_shut = 1;
	}
	if (c->upstream_eof && !proxy_pbuf_pending(&c->down) && !c->down_shut) {
		shutdown(c->cfd, SHUT_WR);
		c->down_shut = 1;
	}
	if (c->up_shut && c->down_shut)
		proxy_set_state(c, CS_DEAD);
}

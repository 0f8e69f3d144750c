/*
 * wsio.c - the relay's two websockets, framed by wslay (relay-private.h).
 *
 * Design note
 * - A third websocket, the camera's (camera.c), is a plain client of the
 *   browser on its own thread: relay_ws_plain_init frames it.
 * - Why wslay: the HTTP front (libmicrohttpd) answers the client's upgrade
 *   and hands over a socket whose handshake is already done. libwebsockets
 *   can adopt a socket only before its HTTP handshake, so it cannot frame
 *   this one; wslay (Debian libwslay, the framing of nghttp2 and aria2)
 *   does no I/O of its own and frames any socket it is given. Using it on
 *   the browser side too keeps one poll loop per relay, with back-pressure
 *   on both sockets, and lets messages pass through byte for byte.
 * - Both sockets are non-blocking. The receive callbacks stop reading
 *   (WSLAY_ERR_WOULDBLOCK) when the other side cannot take more: the
 *   client is not read while RELAY_MAX_INFLIGHT of its calls are in flight
 *   or an input is held for its gate; the browser is not read while more
 *   than RELAY_CLIENT_QUEUE_BYTES wait for the client. A message over its
 *   ceiling closes that websocket with 1009 (wslay), never the service.
 */
#include "relay/relay-private.h"

#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sodium.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "common/util.h"

#include <libwebsockets.h>

/* See relay-private.h. */
int relay_client_readable(struct relay *r)
{
	return !r->holding && !r->backlog && r->ncalls < RELAY_MAX_INFLIGHT;
}

/* See relay-private.h. */
int relay_browser_readable(struct relay *r)
{
	return wslay_event_get_queued_msg_length(r->cws) < RELAY_CLIENT_QUEUE_BYTES;
}

/* recv() for wslay, on fd; would-block when there is nothing. */
static ssize_t sock_recv(wslay_event_context_ptr ctx, int fd, uint8_t *buf, size_t len)
{
	ssize_t n = recv(fd, buf, len, 0);

	if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)) {
		wslay_event_set_error(ctx, WSLAY_ERR_WOULDBLOCK);
		return -1;
	}
	if (n <= 0) {
		wslay_event_set_error(ctx, WSLAY_ERR_CALLBACK_FAILURE);
		return -1;
	}
	return n;
}

/* send() for wslay, on fd. wslay hands a frame's header and its payload
 * over in two calls, the header with WSLAY_MSG_MORE: passed on as
 * MSG_MORE, the kernel holds the header back until the payload joins it,
 * so that a message leaves as one segment (with TCP_NODELAY, two calls
 * were two segments, and two wake-ups of the reader, per message). The
 * payload's call carries no flag and pushes both out. */
static ssize_t sock_send(wslay_event_context_ptr ctx, int fd, const uint8_t *data, size_t len,
                         int flags)
{
	ssize_t n = send(fd, data, len, MSG_NOSIGNAL | ((flags & WSLAY_MSG_MORE) ? MSG_MORE : 0));

	if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)) {
		wslay_event_set_error(ctx, WSLAY_ERR_WOULDBLOCK);
		return -1;
	}
	if (n < 0) {
		wslay_event_set_error(ctx, WSLAY_ERR_CALLBACK_FAILURE);
		return -1;
	}
	return n;
}

static ssize_t client_recv(wslay_event_context_ptr ctx, uint8_t *buf, size_t len, int flags,
                           void *user)
{
	struct relay *r = user;
	size_t n;

	(void)flags;
	if (!relay_client_readable(r)) {
		wslay_event_set_error(ctx, WSLAY_ERR_WOULDBLOCK);
		return -1;
	}
	if (r->extra_off < r->extra_len) {
		n = r->extra_len - r->extra_off < len ? r->extra_len - r->extra_off : len;
		memcpy(buf, r->extra + r->extra_off, n);
		r->extra_off += n;
		return (ssize_t)n;
	}
	return sock_recv(ctx, r->cfd, buf, len);
}

static ssize_t client_send(wslay_event_context_ptr ctx, const uint8_t *data, size_t len, int flags,
                           void *user)
{
	return sock_send(ctx, ((struct relay *)user)->cfd, data, len, flags);
}

static void client_msg(wslay_event_context_ptr ctx, const struct wslay_event_on_msg_recv_arg *arg,
                       void *user)
{
	(void)ctx;
	if (arg->opcode == WSLAY_TEXT_FRAME || arg->opcode == WSLAY_BINARY_FRAME)
		relay_on_client_message(user, arg->msg, arg->msg_length);
}

static ssize_t browser_recv(wslay_event_context_ptr ctx, uint8_t *buf, size_t len, int flags,
                            void *user)
{
	struct relay *r = user;

	(void)flags;
	if (!relay_browser_readable(r)) {
		wslay_event_set_error(ctx, WSLAY_ERR_WOULDBLOCK);
		return -1;
	}
	return sock_recv(ctx, r->bfd, buf, len);
}

static ssize_t browser_send(wslay_event_context_ptr ctx, const uint8_t *data, size_t len, int flags,
                            void *user)
{
	return sock_send(ctx, ((struct relay *)user)->bfd, data, len, flags);
}

static int browser_mask(wslay_event_context_ptr ctx, uint8_t *buf, size_t len, void *user)
{
	(void)ctx;
	(void)user;
	randombytes_buf(buf, len);
	return 0;
}

static void browser_msg(wslay_event_context_ptr ctx, const struct wslay_event_on_msg_recv_arg *arg,
                        void *user)
{
	(void)ctx;
	if (arg->opcode == WSLAY_TEXT_FRAME || arg->opcode == WSLAY_BINARY_FRAME)
		relay_on_browser_message(user, arg->msg, arg->msg_length);
}

static ssize_t plain_recv(wslay_event_context_ptr ctx, uint8_t *buf, size_t len, int flags,
                          void *user)
{
	(void)flags;
	return sock_recv(ctx, ((struct relay_ws_plain *)user)->fd, buf, len);
}

static ssize_t plain_send(wslay_event_context_ptr ctx, const uint8_t *data, size_t len, int flags,
                          void *user)
{
	return sock_send(ctx, ((struct relay_ws_plain *)user)->fd, data, len, flags);
}

static void plain_msg(wslay_event_context_ptr ctx, const struct wslay_event_on_msg_recv_arg *arg,
                      void *user)
{
	struct relay_ws_plain *p = user;

	(void)ctx;
	if (arg->opcode == WSLAY_TEXT_FRAME || arg->opcode == WSLAY_BINARY_FRAME)
		p->on_message(p->user, arg->msg, arg->msg_length);
}

/* Non-blocking, and without Nagle's delay: CDP is many small messages,
 * each waited for, and a relay that holds them back for an ACK costs every
 * round trip tens of milliseconds. */
static int set_nonblocking(int fd)
{
	int fl = fcntl(fd, F_GETFL);
	int one = 1;

	if (setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one)) < 0 && errno != ENOTSUP &&
	    errno != EOPNOTSUPP)
		return -1;
	return fl < 0 ? -1 : fcntl(fd, F_SETFL, fl | O_NONBLOCK);
}

/* See relay-private.h. */
int relay_ws_init(struct relay *r, char *err, size_t errlen)
{
	static const struct wslay_event_callbacks ccb = { client_recv, client_send, NULL,      NULL,
		                                          NULL,        NULL,        client_msg };
	static const struct wslay_event_callbacks bcb = { browser_recv, browser_send, browser_mask,
		                                          NULL,         NULL,         NULL,
		                                          browser_msg };

	if (set_nonblocking(r->cfd) < 0 || wslay_event_context_server_init(&r->cws, &ccb, r) != 0) {
		snprintf(err, errlen, "the client's websocket could not be set up");
		return -1;
	}
	wslay_event_config_set_max_recv_msg_length(r->cws, r->opt.max_message_bytes);
	if (wslay_event_context_client_init(&r->bws, &bcb, r) != 0) {
		snprintf(err, errlen, "the browser's websocket could not be set up");
		return -1;
	}
	wslay_event_config_set_max_recv_msg_length(r->bws, RELAY_BROWSER_MAX_MESSAGE);
	return 0;
}

/* See relay-private.h. */
int relay_ws_plain_init(struct relay_ws_plain *p, wslay_event_context_ptr *ctx, char *err,
                        size_t errlen)
{
	static const struct wslay_event_callbacks pcb = { plain_recv, plain_send, browser_mask,
		                                          NULL,       NULL,       NULL,
		                                          plain_msg };

	*ctx = NULL;
	if (set_nonblocking(p->fd) < 0 || wslay_event_context_client_init(ctx, &pcb, p) != 0) {
		snprintf(err, errlen, "the camera's websocket could not be set up");
		return -1;
	}
	wslay_event_config_set_max_recv_msg_length(*ctx, RELAY_BROWSER_MAX_MESSAGE);
	return 0;
}

/* See relay-private.h. */
void relay_ws_free(struct relay *r)
{
	if (r->cws)
		wslay_event_context_free(r->cws);
	if (r->bws)
		wslay_event_context_free(r->bws);
	r->cws = r->bws = NULL;
}

/* Waits up to the deadline for fd to be ready for events. */
static int wait_fd(int fd, short events, int64_t deadline_ms)
{
	struct pollfd p = { .fd = fd, .events = events };
	int64_t left = deadline_ms - gb_now_ms();

	if (left <= 0)
		return -1;
	return poll(&p, 1, (int)left) > 0 ? 0 : -1;
}

/* See relay-private.h. */
int relay_browser_handshake(struct relay *r, char *err, size_t errlen)
{
	return relay_ws_handshake(r->bfd, r->br.devtools_url, err, errlen);
}

/* See relay-private.h. */
int relay_ws_handshake(int fd, const char *devtools_url, char *err, size_t errlen)
{
	unsigned char key[16];
	char key64[32], req[512], resp[2048];
	const char *path = strstr(devtools_url, "/devtools/");
	int64_t deadline = gb_now_ms() + RELAY_HANDSHAKE_TIMEOUT_MS;
	size_t off = 0, got = 0;
	int n;

	if (!path || set_nonblocking(fd) < 0) {
		snprintf(err, errlen, "the browser's DevTools URL is not known");
		return -1;
	}
	randombytes_buf(key, sizeof(key));
	sodium_bin2base64(key64, sizeof(key64), key, sizeof(key), sodium_base64_VARIANT_ORIGINAL);
	n = snprintf(req, sizeof(req),
	             "GET %s HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\n"
	             "Connection: Upgrade\r\nSec-WebSocket-Key: %s\r\n"
	             "Sec-WebSocket-Version: 13\r\n\r\n",
	             path, key64);
	while (off < (size_t)n) {
		ssize_t w = send(fd, req + off, (size_t)n - off, MSG_NOSIGNAL);

		if (w > 0)
			off += (size_t)w;
		else if (w < 0 && errno != EAGAIN && errno != EINTR)
			goto fail;
		else if (wait_fd(fd, POLLOUT, deadline) < 0)
			goto fail;
	}
	/* read the response head byte by byte: nothing of the stream is taken */
	while (got < sizeof(resp) - 1) {
		ssize_t rd = recv(fd, resp + got, 1, 0);

		if (rd == 1) {
			got++;
			resp[got] = '\0';
			if (got >= 4 && !memcmp(resp + got - 4, "\r\n\r\n", 4))
				break;
		} else if (rd == 0 || (errno != EAGAIN && errno != EINTR)) {
			goto fail;
		} else if (wait_fd(fd, POLLIN, deadline) < 0) {
			goto fail;
		}
	}
	if (strncmp(resp, "HTTP/1.1 101", 12)) {
		snprintf(err, errlen, "the browser refused the DevTools connection");
		return -1;
	}
	return 0;
fail:
	snprintf(err, errlen, "the browser's DevTools handshake failed: %s",
	         errno ? strerror(errno) : "timed out");
	return -1;
}

/* See relay-private.h. */
void relay_ws_queue_text(wslay_event_context_ptr ctx, const char *text, size_t len)
{
	struct wslay_event_msg m = { WSLAY_TEXT_FRAME, (const uint8_t *)text, len };

	wslay_event_queue_msg(ctx, &m);
}

/* See relay-private.h. */
void relay_send_client(struct relay *r, const char *text, size_t len)
{
	relay_ws_queue_text(r->cws, text, len);
}

/* See relay-private.h. */
void relay_send_browser(struct relay *r, const char *text, size_t len)
{
	relay_ws_queue_text(r->bws, text, len);
}

/* See relay-private.h. */
void relay_send_client_json(struct relay *r, json_t *msg)
{
	char *text = json_dumps(msg, JSON_COMPACT);

	if (text)
		relay_send_client(r, text, strlen(text));
	free(text);
}

/* See relay.h. */
int relay_ws_accept(const char *key, char *out, size_t outlen)
{
	static const char guid[] = "258EAFA5-E914-47DA-95CA-C5AB0DC85B11";
	unsigned char raw[32], md[20];
	char joined[128];
	size_t klen = key ? strlen(key) : 0;
	size_t rawlen = 0;

	/* a key is the base64 of 16 bytes */
	if (klen != 24 ||
	    sodium_base642bin(raw, sizeof(raw), key, klen, NULL, &rawlen, NULL,
	                      sodium_base64_VARIANT_ORIGINAL) != 0 ||
	    rawlen != 16 || outlen < 29)
		return -1;
	snprintf(joined, sizeof(joined), "%s%s", key, guid);
	lws_SHA1((const unsigned char *)joined, strlen(joined), md);
	return lws_b64_encode_string((const char *)md, (int)sizeof(md), out, (int)outlen) > 0 ? 0
	                                                                                      : -1;
}

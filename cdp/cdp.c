/*
 * cdp.c - the Chrome DevTools Protocol client: design note, error text and
 * the cdp_call() convenience.
 *
 * DESIGN
 *
 * What it owns. One struct cdp_conn is one websocket to a browser's
 * DevTools endpoint, with its own libwebsockets client context
 * (CONTEXT_PORT_NO_LISTEN, the default poll() loop). The conn owns the
 * pending calls, the queue of outgoing messages, the event listeners and
 * the armed waiters. Files, one job each:
 *   conn.c     context and websocket lifecycle, the lws callback, writes
 *   service.c  the wait loop: deadlines, cancellation, cdp_service()
 *   calls.c    ids, cdp_send/cdp_await/cdp_forget, replies
 *   events.c   listeners (cdp_on) and waiters (cdp_arm/cdp_wait_event)
 *   message.c  one incoming message: fragments, ceiling, parse, route
 *   skim.c     what an oversized message was about, without keeping it
 *   screencast.c  one screencast per page, shared by its consumers (cdp_cast_join)
 *
 * Threads. Nothing runs in the background. The owning thread services the
 * context inside cdp_await(), cdp_wait_event(), cdp_service() and
 * cdp_connect(); lws callbacks, listeners and the cdp_service() predicate
 * run on it, inside those calls. cdp_wake() is the one function another
 * thread may call: it is lws_cancel_service(), which makes poll() return.
 *
 * Waiting. lws_service() (4.1) sleeps until a network event or the next
 * lws_sul timer, so every wait schedules conn->deadline_sul at its
 * deadline and re-checks, after each wake: its condition, the socket
 * state, the cancel flag, the clock. No fixed sleeps, no polling: a
 * reply is handed back as soon as the read that carried it returns.
 *
 * Invariants.
 *   - Ids are unique per conn and increase; a reply whose id is not a
 *     pending call is dropped.
 *   - Outgoing messages are written in cdp_send() order, one per
 *     CLIENT_WRITEABLE, each with LWS_PRE headroom.
 *   - Once the socket closes (state CLOSED) every call without a reply
 *     is done with -CDP_ECLOSED, the outgoing queue is empty, and every
 *     later cdp_send() fails at once. Replies and events that arrived
 *     before the close can still be collected.
 *   - No incoming message is stored beyond opts.max_frame_bytes. A larger
 *     one is consumed and dropped as it streams in (nothing is kept but
 *     the skim's few hundred bytes); the call it answers fails with
 *     -CDP_ETOOBIG, or a waiter armed for it (an oversized event) fails
 *     with -CDP_ETOOBIG. The connection stays open and usable: the
 *     protocol stream is intact, only that one message is lost. A message
 *     that names neither a known call nor a waiter is logged and dropped.
 *   - A malformed message (not JSON, wrong types) is logged, without its
 *     body, and dropped (CDP_EBADMSG internally); it never fails a call.
 *   - Logs carry ids, method names and sizes, never message bodies.
 */
#include "cdp/cdp-private.h"

#include <stdio.h>
#include <string.h>

/* Fills err (which may be NULL) with cdp_code (the CDP error code for
 * -CDP_EPROTOCOL, else 0) and a formatted message, truncated to fit. */
void cdp_err_set(struct cdp_error *err, int cdp_code, const char *fmt, ...)
{
	va_list ap;

	if (!err)
		goto out;
	err->code = cdp_code;
	va_start(ap, fmt);
	vsnprintf(err->message, sizeof(err->message), fmt, ap);
	va_end(ap);
out:
	return;
}

/* Copies src into dst when dst is not NULL. */
void cdp_err_copy(struct cdp_error *dst, const struct cdp_error *src)
{
	if (dst)
		*dst = *src;
}

/* cdp_send() then cdp_await(); params is stolen, session_id borrowed. A
 * failure to send is described in err like any other. */
int cdp_call(struct cdp_conn *c, const char *session_id, const char *method, json_t *params,
             int timeout_ms, json_t **result, struct cdp_error *err)
{
	uint64_t id = 0;
	int rc;

	if (result)
		*result = NULL;
	rc = cdp_send(c, session_id, method, params, &id);
	if (rc < 0) {
		cdp_err_set(err, 0, "%s: could not send: %s", method ? method : "(no method)",
		            rc == -CDP_ECLOSED && c ? c->close_reason : cdp_strerror(rc));
		goto out;
	}
	rc = cdp_await(c, id, timeout_ms, result, err);
out:
	return rc;
}

/* A constant, human-readable name for a cdp error code (either sign). */
const char *cdp_strerror(int err)
{
	const char *s;

	if (err < 0)
		err = -err;
	switch ((enum cdp_err)err) {
	case CDP_OK:
		s = "success";
		break;
	case CDP_ECONNECT:
		s = "could not connect to the browser's DevTools endpoint";
		break;
	case CDP_ECLOSED:
		s = "the DevTools connection is closed (browser gone?)";
		break;
	case CDP_ETIMEOUT:
		s = "timed out waiting for the browser";
		break;
	case CDP_ECANCELLED:
		s = "cancelled";
		break;
	case CDP_EPROTOCOL:
		s = "the browser returned a protocol error";
		break;
	case CDP_ETOOBIG:
		s = "message exceeds the size ceiling";
		break;
	case CDP_EBADMSG:
		s = "malformed DevTools message";
		break;
	case CDP_ENOMEM:
		s = "out of memory or too many calls in flight";
		break;
	case CDP_EINVAL:
		s = "invalid argument";
		break;
	default:
		s = "unknown cdp error";
		break;
	}
	return s;
}

/*
 * proxy_reply.c - what the egress proxy says when it refuses or fails:
 * refusal records through on_refusal (and the refusal counter), error
 * responses with X-Glassbox-Rule, and the small buffer and state helpers
 * the other proxy files share. Loop thread only.
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

/* Appends n bytes to b; returns 0, or -1 when they do not fit. */
int proxy_pbuf_add(struct pbuf *b, const char *s, size_t n)
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
size_t proxy_pbuf_pending(const struct pbuf *b)
{
	return b->len - b->off;
}

/* Room left in b, counting what a compaction would free. */
size_t proxy_pbuf_room(const struct pbuf *b)
{
	return b->cap - proxy_pbuf_pending(b);
}

/* Closes *fd if open and marks it closed. */
void proxy_close_fd(int *fd)
{
	if (*fd >= 0)
		close(*fd);
	*fd = -1;
}

/* Copies s into out with bytes that are not printable ASCII as '?'. */
void proxy_shown_copy(const char *s, size_t len, char *out, size_t outlen)
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
void proxy_set_state(struct proxy_conn *c, enum conn_state st)
{
	c->state = st;
	c->state_ms = gb_now_ms();
}

/* Reports a refusal through the callback. */
void proxy_report(struct policy_proxy *px, const char *method, const char *url, const char *host,
                  const char *addr, const char *rule, const char *message)
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
void proxy_reply_error(struct proxy_conn *c, int status, const char *reason, const char *rule,
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
	    proxy_pbuf_room(&c->down) >= (size_t)hlen + (size_t)blen) {
		proxy_pbuf_add(&c->down, head, (size_t)hlen);
		proxy_pbuf_add(&c->down, body, (size_t)blen);
		c->resp_started = 1;
	}
	proxy_close_fd(&c->ufd);
	c->keepalive = 0;
	proxy_set_state(c, CS_CLOSING);
}

/* Refuses the request in progress with decision d: 403, a record. */
void proxy_refuse(struct policy_proxy *px, struct proxy_conn *c, const struct policy_decision *d)
{
	char shown[sizeof(d->message)];

	proxy_report(px, c->method, c->url, d->host[0] ? d->host : c->host, d->addr, d->rule,
	             d->message);
	/* the page gets what was refused and why, not how the policy could allow it */
	snprintf(shown, sizeof(shown), "%.*s",
	         (int)(d->fix_at && d->fix_at < sizeof(shown) ? d->fix_at : sizeof(shown) - 1),
	         d->message);
	proxy_reply_error(c, 403, "Forbidden", d->rule, shown);
}

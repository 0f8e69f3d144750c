/*
 * proxy-private.h - the pieces of the egress proxy, shared by the files
 * of policy/ only: HTTP/1.1 heads and body framing (proxy_http.c), the
 * resolver thread (proxy_resolve.c), and the proxy and its connections
 * (proxy.c, proxy_loop.c, proxy_io.c, proxy_request.c, proxy_upstream.c,
 * proxy_reply.c; see the design note in proxy.c).
 */
#ifndef GB_POLICY_PROXY_PRIVATE_H
#define GB_POLICY_PROXY_PRIVATE_H

#include "policy/policy-private.h"

#include "common/util.h"

#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#define PROXY_MAX_HEADERS 128  /* header fields in one head */
#define PROXY_MAX_TARGET 16384 /* request-target bytes */
#define PROXY_DEFAULT_HEADER_BYTES (32u * 1024u)
#define PROXY_LIMIT_HEADER_BYTES (1024u * 1024u)
#define PROXY_CHUNK_LINE_MAX 1024 /* a chunk-size line or a trailer line */

/* One header field, pointing into the buffer the head was parsed from. */
struct proxy_header {
	const char *name;
	size_t name_len;
	const char *value; /* without surrounding whitespace */
	size_t value_len;
};

/* A parsed request or response head. Pointers go into the parsed buffer. */
struct proxy_head {
	char method[24];    /* requests */
	const char *target; /* requests */
	size_t target_len;
	int status;         /* responses */
	const char *reason; /* responses: the status line after the code */
	size_t reason_len;
	int minor; /* HTTP/1.<minor> */
	struct proxy_header headers[PROXY_MAX_HEADERS];
	size_t nheaders;
	size_t head_len; /* bytes up to and including the blank line */
};

enum proxy_body_kind {
	PROXY_BODY_NONE = 0,
	PROXY_BODY_LENGTH,
	PROXY_BODY_CHUNKED,
	PROXY_BODY_UNTIL_CLOSE,
};

/* Where a message body ends, followed byte by byte (bodies are relayed,
 * never kept). */
struct proxy_body {
	int kind;           /* enum proxy_body_kind */
	uint64_t remaining; /* LENGTH: bytes left; CHUNKED: bytes left of this chunk */
	int state;          /* CHUNKED: where in the chunk syntax */
	size_t line_len;    /* CHUNKED: bytes of the current size or trailer line */
	int digits;         /* CHUNKED: hex digits seen in the size */
	int done;
};

/* proxy_http.c */
size_t proxy_http_head_end(const char *buf, size_t len);
int proxy_http_parse_request(const char *buf, size_t len, struct proxy_head *h, char *why,
                             size_t whylen);
int proxy_http_parse_response(const char *buf, size_t len, struct proxy_head *h, char *why,
                              size_t whylen);
const struct proxy_header *proxy_http_header(const struct proxy_head *h, const char *name);
int proxy_http_has_token(const struct proxy_head *h, const char *name, const char *token);
int proxy_http_request_body(const struct proxy_head *h, struct proxy_body *b, char *why,
                            size_t whylen);
void proxy_http_response_body(const struct proxy_head *h, const char *req_method,
                              struct proxy_body *b);
long proxy_body_feed(struct proxy_body *b, const char *buf, size_t len);
int proxy_http_client_keepalive(const struct proxy_head *h);
int proxy_http_is_upgrade(const struct proxy_head *h);
int proxy_http_rewrite_request(const struct proxy_head *h, const char *origin_form,
                               size_t origin_len, const char *host_header, int upgrade,
                               struct gb_buf *out);
int proxy_http_rewrite_response(const struct proxy_head *h, int keepalive, int upgrade,
                                struct gb_buf *out);

/* proxy_resolve.c: one resolver thread per proxy, started on first use. */
struct proxy_resolver;

struct proxy_resolved {
	uint64_t conn_id;
	int rc; /* 0, or an EAI_* code */
	size_t naddrs;
	struct policy_ip addrs[POLICY_MAX_HOST_ADDRS];
	char error[96];
};

int proxy_resolver_new(int wake_fd, size_t max_jobs, struct proxy_resolver **out);
int proxy_resolver_submit(struct proxy_resolver *r, uint64_t conn_id, const char *host);
int proxy_resolver_take(struct proxy_resolver *r, struct proxy_resolved *out);
void proxy_resolver_free(struct proxy_resolver *r);

/* ---- the proxy and its connections (proxy.c and proxy_*.c) ---- */

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
	int cfd; /* client */
	int ufd; /* upstream, -1 when none */
	enum conn_state state;
	int64_t state_ms;  /* when the state (or the connect attempt) began */
	int64_t active_ms; /* last byte either way */
	int64_t head_ms;   /* first byte of the current request head, or 0 */
	int pidx;          /* poll slots, -1 when not polled */
	int uidx;

	char *cin; /* request head being read, then pipelined bytes */
	size_t cin_len;
	char *uin; /* response head being read */
	size_t uin_len;
	struct pbuf up;   /* to upstream */
	struct pbuf down; /* to client */

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
	int resp_started; /* response head passed to the client */
	struct policy_ip addrs[POLICY_MAX_HOST_ADDRS];
	size_t naddrs;
	size_t next_addr;
	int last_errno;
	int client_eof;
	int upstream_eof;
	int down_shut; /* shutdown(cfd, SHUT_WR) done */
	int up_shut;
};

struct policy_proxy {
	const struct policy_egress *policy; /* borrowed */
	struct policy_proxy_options o;
	char session[128];
	char listen_text[80]; /* "127.0.0.1" or "[::1]" */
	int port;
	int lfd;
	int wake[2];
	pthread_t thread;
	int thread_started;
	atomic_int stopping;
	struct proxy_resolver *resolver;
	struct proxy_conn **conns; /* loop thread only */
	size_t nconns;
	uint64_t next_id;
	size_t buf_cap;
	struct pollfd *pfds;
	struct proxy_conn **pconn; /* which conn each poll slot belongs to */

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

/* proxy_reply.c: refusals, error replies, buffers */
/* Appends n bytes to b; returns 0, or -1 when they do not fit. */
int proxy_pbuf_add(struct pbuf *b, const char *s, size_t n);
/* Bytes waiting in b. */
size_t proxy_pbuf_pending(const struct pbuf *b);
/* Room left in b, counting what a compaction would free. */
size_t proxy_pbuf_room(const struct pbuf *b);
/* Closes *fd if open and marks it closed. */
void proxy_close_fd(int *fd);
/* Copies s into out with bytes that are not printable ASCII as '?'. */
void proxy_shown_copy(const char *s, size_t len, char *out, size_t outlen);
/* Sets the connection's state and the time it began. */
void proxy_set_state(struct proxy_conn *c, enum conn_state st);
/* Reports a refusal through the callback. */
/* The policy new requests are checked against (policy_proxy_set_policy). */
static inline const struct policy_egress *proxy_policy(struct policy_proxy *px)
{
	return __atomic_load_n(&px->policy, __ATOMIC_ACQUIRE);
}

void proxy_report(struct policy_proxy *px, const char *method, const char *url, const char *host,
                  const char *addr, const char *rule, const char *message);
/* Queues a complete error response for the client and moves to CLOSING.
 * rule (may be NULL) goes in an X-Glassbox-Rule field. */
void proxy_reply_error(struct proxy_conn *c, int status, const char *reason, const char *rule,
                       const char *text);
/* Refuses the request in progress with decision d: 403, a record. */
void proxy_refuse(struct policy_proxy *px, struct proxy_conn *c, const struct policy_decision *d);

/* proxy_upstream.c: resolving, checking, connecting */
/* Tries the next address; on none left, answers 502. */
void proxy_connect_next(struct policy_proxy *px, struct proxy_conn *c);
/* Looks the host up: a literal or an override now, DNS through the
 * resolver thread otherwise. */
void proxy_start_resolve(struct policy_proxy *px, struct proxy_conn *c, int is_ip,
                         const struct policy_ip *ip);
/* A lookup ended: goes on with the connection it was for, if still there. */
void proxy_on_resolved(struct policy_proxy *px, const struct proxy_resolved *r);
/* A non-blocking connect finished, one way or the other. */
void proxy_connect_finished(struct policy_proxy *px, struct proxy_conn *c);

/* proxy_request.c: request and response heads */
/* Feeds bytes of the request body from cin into up; what is left in cin
 * is the next (pipelined) request. Returns 0 or -1 on broken framing. */
int proxy_body_from_cin(struct proxy_conn *c);
/* Tries to parse a request head out of cin and act on it. The head
 * leaves cin first: what stays is the body and any pipelined request. */
void proxy_try_head(struct policy_proxy *px, struct proxy_conn *c);
/* The response (and the request) is over: back to HEAD when the
 * connection may be kept, else close after the flush. */
void proxy_exchange_done(struct policy_proxy *px, struct proxy_conn *c);
/* Parses the response head in uin, passes it on rewritten, and starts
 * relaying its body. */
void proxy_try_response_head(struct policy_proxy *px, struct proxy_conn *c);

/* proxy_io.c: relaying bytes */
/* Writes what b holds to fd; counts it. Returns 0, or -1 on a hard error. */
int proxy_flush(struct policy_proxy *px, struct proxy_conn *c, int fd, struct pbuf *b,
                _Atomic uint64_t *counter);
/* The client has something for us. */
void proxy_client_readable(struct policy_proxy *px, struct proxy_conn *c);
/* The upstream has something for us (or is connected). */
void proxy_upstream_readable(struct policy_proxy *px, struct proxy_conn *c);
/* Half-closes and ends tunnels once a side is done and flushed. */
void proxy_tunnel_progress(struct proxy_conn *c);

/* proxy_loop.c: the loop thread */
/* The loop thread. */
void *proxy_main(void *arg);

#endif

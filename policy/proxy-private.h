/*
 * proxy-private.h - the pieces of the egress proxy (proxy.c), shared by
 * the files of policy/ only: HTTP/1.1 heads and body framing
 * (proxy_http.c) and the resolver thread (proxy_resolve.c).
 */
#ifndef GB_POLICY_PROXY_PRIVATE_H
#define GB_POLICY_PROXY_PRIVATE_H

#include "policy/policy-private.h"

#include "common/util.h"

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>

#define PROXY_MAX_HEADERS 128           /* header fields in one head */
#define PROXY_MAX_TARGET 16384          /* request-target bytes */
#define PROXY_DEFAULT_HEADER_BYTES (32u * 1024u)
#define PROXY_LIMIT_HEADER_BYTES (1024u * 1024u)
#define PROXY_CHUNK_LINE_MAX 1024       /* a chunk-size line or a trailer line */

/* One header field, pointing into the buffer the head was parsed from. */
struct proxy_header {
	const char *name;
	size_t name_len;
	const char *value; /* without surrounding whitespace */
	size_t value_len;
};

/* A parsed request or response head. Pointers go into the parsed buffer. */
struct proxy_head {
	char method[24];   /* requests */
	const char *target; /* requests */
	size_t target_len;
	int status;        /* responses */
	const char *reason; /* responses: the status line after the code */
	size_t reason_len;
	int minor;         /* HTTP/1.<minor> */
	struct proxy_header headers[PROXY_MAX_HEADERS];
	size_t nheaders;
	size_t head_len;   /* bytes up to and including the blank line */
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
	int kind;            /* enum proxy_body_kind */
	uint64_t remaining;  /* LENGTH: bytes left; CHUNKED: bytes left of this chunk */
	int state;           /* CHUNKED: where in the chunk syntax */
	size_t line_len;     /* CHUNKED: bytes of the current size or trailer line */
	int digits;          /* CHUNKED: hex digits seen in the size */
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

#endif

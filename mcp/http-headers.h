/*
 * http-headers.h - request checks of `glassbox serve` that need only the
 * method, path and headers (http_headers.c). Strings are borrowed; NULL
 * means the header is absent.
 */
#ifndef GB_MCP_HTTP_HEADERS_H
#define GB_MCP_HTTP_HEADERS_H

#include <stddef.h>

enum mcp_http_route {
	MCP_ROUTE_NOT_FOUND,          /* 404 */
	MCP_ROUTE_METHOD_NOT_ALLOWED, /* 405 */
	MCP_ROUTE_POST,
	MCP_ROUTE_GET, /* no server-initiated stream: 405 */
	MCP_ROUTE_DELETE,
};

enum mcp_http_route mcp_http_route(const char *method, const char *path);

/* Host: any value unless the service listens on loopback only; then a
 * loopback name (localhost, 127.0.0.1, [::1]) with any port. */
int mcp_http_host_ok(const char *host, int loopback_only);

/* Origin: absent, one of allowed, or http(s)://localhost|127.0.0.1|[::1]
 * with any port. Anything else is a page elsewhere driving the user's
 * browser (DNS rebinding): 403. */
int mcp_http_origin_ok(const char *origin, const char (*allowed)[128], size_t n_allowed);

/* Accept of a POST must name application/json and text/event-stream (or
 * * / *); of a GET, text/event-stream. */
int mcp_http_accept_ok(const char *accept, int post);

/* Content-Type of a POST: application/json (parameters allowed). */
int mcp_http_content_type_ok(const char *ctype);

/* MCP-Protocol-Version: absent, or a revision glassbox speaks. */
int mcp_http_protocol_version_ok(const char *version);

#endif

/*
 * http_headers.c - the checks of `glassbox serve` that depend only on a
 * request's method, path and headers: which endpoint, Origin and Host
 * (DNS rebinding), Accept, Content-Type and MCP-Protocol-Version. Pure
 * functions over strings, so the unit tests cover every branch.
 */
#include "mcp/http-headers.h"

#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "mcp/mcp-private.h"

/* Whether host (a Host header value or an origin's host[:port]) names
 * this machine's loopback: localhost, 127.0.0.1 or [::1], any port. */
static int loopback_host(const char *host, size_t len)
{
	static const char *const names[] = { "localhost", "127.0.0.1", "[::1]" };
	size_t i, n;

	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		n = strlen(names[i]);
		if (len >= n && !strncasecmp(host, names[i], n) && (len == n || host[n] == ':'))
			return 1;
	}
	return 0;
}

/* See http-headers.h. */
int mcp_http_host_ok(const char *host, int loopback_only)
{
	if (!loopback_only)
		return 1;
	return host && loopback_host(host, strlen(host));
}

/* See http-headers.h. */
int mcp_http_origin_ok(const char *origin, const char (*allowed)[128], size_t n_allowed)
{
	const char *rest;
	size_t i;

	if (!origin || !origin[0])
		return 1; /* not a browser: nothing to rebind */
	for (i = 0; i < n_allowed; i++) {
		if (!strcmp(origin, allowed[i]))
			return 1;
	}
	if (!strncmp(origin, "http://", 7))
		rest = origin + 7;
	else if (!strncmp(origin, "https://", 8))
		rest = origin + 8;
	else
		return 0;
	return strchr(rest, '/') == NULL && loopback_host(rest, strlen(rest));
}

/* Whether the comma-separated list value has type (parameters and case
 * ignored; * / * does not count: MCP wants both named). */
static int list_has(const char *value, const char *type)
{
	size_t tlen = strlen(type);
	const char *p = value;

	while (p && *p) {
		while (*p == ' ' || *p == ',')
			p++;
		if (!strncasecmp(p, type, tlen) &&
		    (p[tlen] == '\0' || p[tlen] == ',' || p[tlen] == ';' || p[tlen] == ' '))
			return 1;
		p = strchr(p, ',');
	}
	return 0;
}

/* See http-headers.h. */
int mcp_http_accept_ok(const char *accept, int post)
{
	if (!accept)
		return 0;
	if (list_has(accept, "*/*"))
		return 1;
	if (post)
		return list_has(accept, "application/json") &&
		       list_has(accept, "text/event-stream");
	return list_has(accept, "text/event-stream");
}

/* See http-headers.h. */
int mcp_http_content_type_ok(const char *ctype)
{
	return ctype && list_has(ctype, "application/json");
}

/* See http-headers.h. */
int mcp_http_protocol_version_ok(const char *version)
{
	if (!version || !version[0])
		return 1; /* absent: the client is taken to speak 2025-03-26 */
	return !strcmp(mcp_negotiate_version(version), version);
}

/* See http-headers.h. */
enum mcp_http_route mcp_http_route(const char *method, const char *path)
{
	if (!method || !path)
		return MCP_ROUTE_NOT_FOUND;
	if (strcmp(path, "/mcp") != 0 && strcmp(path, "/mcp/") != 0)
		return MCP_ROUTE_NOT_FOUND;
	if (!strcmp(method, "POST"))
		return MCP_ROUTE_POST;
	if (!strcmp(method, "GET"))
		return MCP_ROUTE_GET;
	if (!strcmp(method, "DELETE"))
		return MCP_ROUTE_DELETE;
	return MCP_ROUTE_METHOD_NOT_ALLOWED;
}

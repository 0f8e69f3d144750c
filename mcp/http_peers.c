/*
 * http_peers.c - connections per client address on the listeners of
 * `glassbox serve` (http-private.h), for limits.max_connections_per_peer.
 *
 * Design note
 * - Front thread only: libmicrohttpd tells of each connection's start and
 *   end (MHD_OPTION_NOTIFY_CONNECTION), on the thread that runs it.
 * - One entry per address with connections open (both listeners); an
 *   entry goes with its last connection, so the table holds at most as
 *   many entries as there are connections. A connection's socket context
 *   points at its entry.
 * - The limit is answered with a 429 once a request arrives; a hard
 *   ceiling of twice the limit is libmicrohttpd's, at accept, for clients
 *   that never complete a request (slowloris).
 */
#include "mcp/http-private.h"

#include <arpa/inet.h>
#include <microhttpd.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>

/* One client address and its open connections. */
struct http_peer {
	int family;
	unsigned char addr[16];
	unsigned int conns;
	struct http_peer *next;
};

/* The address of sa into family and addr; 0, or -1 for another family. */
static int address_of(const struct sockaddr *sa, int *family, unsigned char addr[16])
{
	memset(addr, 0, 16);
	if (sa && sa->sa_family == AF_INET) {
		memcpy(addr, &((const struct sockaddr_in *)(const void *)sa)->sin_addr, 4);
		*family = AF_INET;
		return 0;
	}
	if (sa && sa->sa_family == AF_INET6) {
		memcpy(addr, &((const struct sockaddr_in6 *)(const void *)sa)->sin6_addr, 16);
		*family = AF_INET6;
		return 0;
	}
	return -1;
}

/* See http-private.h. */
void mcp_http_peer_notify(void *cls, struct MHD_Connection *conn, void **socket_context,
                          enum MHD_ConnectionNotificationCode code)
{
	struct serve *s = cls;
	const union MHD_ConnectionInfo *info;
	struct http_peer *p, **pp;
	unsigned char addr[16];
	int family;

	if (code == MHD_CONNECTION_NOTIFY_CLOSED) {
		p = *socket_context;
		*socket_context = NULL;
		if (!p || --p->conns > 0)
			return;
		for (pp = &s->peers; *pp; pp = &(*pp)->next) {
			if (*pp == p) {
				*pp = p->next;
				break;
			}
		}
		free(p);
		return;
	}
	info = MHD_get_connection_info(conn, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
	if (!info || address_of(info->client_addr, &family, addr) < 0)
		return;
	for (p = s->peers; p; p = p->next) {
		if (p->family == family && !memcmp(p->addr, addr, sizeof(addr)))
			break;
	}
	if (!p) {
		p = calloc(1, sizeof(*p));
		if (!p)
			return; /* uncounted: libmicrohttpd's ceiling still holds */
		p->family = family;
		memcpy(p->addr, addr, sizeof(addr));
		p->next = s->peers;
		s->peers = p;
	}
	p->conns++;
	*socket_context = p;
}

/* See http-private.h. */
int mcp_http_peer_over_limit(struct http_req *req, char *name, size_t len)
{
	const union MHD_ConnectionInfo *info =
	    MHD_get_connection_info(req->conn, MHD_CONNECTION_INFO_SOCKET_CONTEXT);
	const struct http_peer *p = info ? info->socket_context : NULL;

	if (!p || p->conns <= (unsigned int)req->s->cfg->max_connections_per_peer)
		return 0;
	if (!inet_ntop(p->family, p->addr, name, (socklen_t)len))
		snprintf(name, len, "your address");
	return 1;
}

/*
 * policy-private.h - the insides of the egress policy and its proxy,
 * shared by the files of policy/ only. Other modules include
 * policy/policy.h and policy/egress.h.
 */
#ifndef GB_POLICY_PRIVATE_H
#define GB_POLICY_PRIVATE_H

#include "common/unittest.h"
#include "policy/egress.h"

#include <netinet/in.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

/* Ceilings on what a config may hold. */
#define POLICY_MAX_PATTERNS 1024 /* per list */
#define POLICY_MAX_RANGES 256    /* allow_private entries */
#define POLICY_MAX_HOSTS 256     /* resolver overrides */
#define POLICY_MAX_HOST_ADDRS 8  /* addresses per override */
#define POLICY_HOST_MAX 254      /* a DNS name, or the text of an address */
#define POLICY_URL_MAX 8192      /* longest URL checked */
#define POLICY_SOURCE_MAX 320    /* policy_egress_set_source */

/* Schemes as a proxy sees them: ws is http, wss is https. */
enum policy_scheme {
	POLICY_SCHEME_NONE = 0,
	POLICY_SCHEME_HTTP = 1,
	POLICY_SCHEME_HTTPS = 2,
	POLICY_SCHEME_ANY = 3,
};

/* One IP address, v4 stored as v4-mapped v6. */
struct policy_ip {
	unsigned char b[16];
};

/* A CIDR range. */
struct policy_range {
	struct policy_ip ip;
	int prefix; /* 0..128, counted on the v6 form */
};

/* What an address is, for the refused ranges. */
enum policy_addr_class {
	POLICY_ADDR_PUBLIC = 0,
	/* Refused unless the policy names them. */
	POLICY_ADDR_LOOPBACK,
	POLICY_ADDR_PRIVATE,
	POLICY_ADDR_SPECIAL, /* documentation, benchmarking, protocol ranges */
	/* Always refused. */
	POLICY_ADDR_LINK_LOCAL,
	POLICY_ADDR_METADATA,
	POLICY_ADDR_UNSPECIFIED,
	POLICY_ADDR_MULTICAST,
	POLICY_ADDR_RESERVED,
};

/* A host pattern: [scheme://]host[:port]. */
struct policy_pattern {
	char text[POLICY_HOST_MAX + 32]; /* as written, normalised: for messages */
	char host[POLICY_HOST_MAX + 1];  /* normalised; without "*." for wildcards */
	int wildcard;                    /* "*.host": strict subdomains of host */
	int any_host;                    /* "*" */
	int is_ip;                       /* host is an address literal */
	struct policy_ip ip;             /* when is_ip */
	int scheme;                      /* enum policy_scheme; ANY when omitted */
	int port;                        /* the port written (or the scheme's default when
	                                  * only a scheme is); 0: none, see any_port */
	int any_port;                    /* ":*" (and every deny pattern without a port) */
	int portless;                    /* no port was written */
};

/* One allow_private entry: address[/prefix][:port]. */
struct policy_private {
	struct policy_range range;
	int port;     /* 0: the default ports (80 and 443), unless any_port */
	int any_port; /* ":*" */
};

/* One resolver override. */
struct policy_host_override {
	char host[POLICY_HOST_MAX + 1];
	size_t naddrs;
	struct policy_ip addrs[POLICY_MAX_HOST_ADDRS];
};

/* One level of policy: the tenant's, or a session's narrowing. */
struct policy_layer {
	const char *scope; /* "tenant" or "session" (static strings) */
	struct policy_pattern *allow;
	size_t nallow;
	struct policy_pattern *deny;
	size_t ndeny;
	int default_deny;      /* nothing matched the allowlist (or there is none) → deny */
	int private_restricts; /* 0: this layer adds no restriction on private addresses */
	struct policy_private *private_ok;
	size_t nprivate_ok;
};

struct policy_egress {
	struct policy_layer layers[POLICY_MAX_LAYERS];
	size_t nlayers;
	struct policy_host_override *hosts; /* the tenant's, kept by narrowings */
	size_t nhosts;
	char source[POLICY_SOURCE_MAX]; /* where the tenant's policy is written, for the
	                                 * lines refusals suggest; "" when unknown */
};

/* A parsed URL, pointing into nothing: every field is a copy. */
struct policy_url {
	char scheme[16];                /* lowercase, no ':' */
	int scheme_class;               /* enum policy_scheme */
	char host[POLICY_HOST_MAX + 1]; /* normalised: lowercase ASCII, no trailing dot;
	                                 * addresses in canonical text, v6 without brackets */
	int is_ip;
	struct policy_ip ip;
	int port;         /* explicit or the scheme's default */
	const char *path; /* into the input: from the first '/', '?' or '#' after the authority */
};

/* addr.c */
int policy_ip_from_sockaddr(const struct sockaddr *sa, struct policy_ip *out);
void policy_ip_to_sockaddr(const struct policy_ip *ip, int port, struct sockaddr_storage *ss,
                           socklen_t *len);
int policy_ip_is_v4(const struct policy_ip *ip);
void policy_ip_format(const struct policy_ip *ip, char *buf, size_t buflen);
enum policy_addr_class policy_ip_class(const struct policy_ip *ip);
int policy_class_always_refused(enum policy_addr_class c);
const char *policy_class_rule(enum policy_addr_class c);
const char *policy_class_words(enum policy_addr_class c);
int policy_range_contains(const struct policy_range *r, const struct policy_ip *ip);
int policy_range_parse(const char *text, struct policy_range *out);
int policy_range_overlaps_refused(const struct policy_range *r, const char **what);
int policy_ip_parse_literal(const char *text, struct policy_ip *out);
int policy_ipv4_host(const char *host, struct policy_ip *out);
#ifdef GB_UNITTEST_BUILD
int policy_ipv4_parse_whatwg(const char *host, uint32_t *out);
#endif

/* host.c */
int policy_host_normalize(const char *in, size_t len, char *out, size_t outlen, int *is_ip,
                          struct policy_ip *ip, char *why, size_t whylen);
int policy_url_parse(const char *url, struct policy_url *out, char *why, size_t whylen);
int policy_scheme_class(const char *scheme);
int policy_scheme_default_port(int scheme_class);
int policy_parse_port(const char *s, size_t len);
int policy_parse_authority(const char *text, size_t len, char *host, size_t hostlen, int *port,
                           int *is_ip, struct policy_ip *ip, char *why, size_t whylen);

/* rules.c */
int policy_egress_check_target(const struct policy_egress *p, int scheme_class, const char *host,
                               int is_ip, const struct policy_ip *ip, int port, const char *url,
                               struct policy_decision *d);
const struct policy_host_override *policy_egress_override(const struct policy_egress *p,
                                                          const char *host);
int policy_egress_check_ip(const struct policy_egress *p, const char *host,
                           const struct policy_ip *ip, int port, struct policy_decision *d);
int policy_pattern_port_ok(const struct policy_pattern *pat, int scheme_class, int port);
#ifdef GB_UNITTEST_BUILD
int policy_pattern_parse(const char *text, struct policy_pattern *out, char *why, size_t whylen);
int policy_pattern_match(const struct policy_pattern *pat, int scheme_class, const char *host,
                         int port);
#endif

#endif

/*
 * egress.h - where a tenant's browser may go (DESIGN.md, security layers
 * 2 and 3): the egress policy, the checks on URLs and addresses, and the
 * per-session egress proxy that Chromium is confined to.
 *
 * Config (the "egress" object of a tenant's JSON config; docs/egress.md):
 *
 *   {
 *     "allow": ["shop.test", "*.example.com", "https://api.example.org:8443", "[::1]:8080"],
 *     "deny": ["ads.example.com", "*.tracker.test"],
 *     "default": "deny",
 *     "allow_private": ["127.0.0.1:8080", "10.1.0.0/16", "[::1]:*", "fd12:3456::/32"],
 *     "hosts": {"shop.test": "127.0.0.1", "dual.test": ["127.0.0.1", "::1"]}
 *   }
 *
 * Every key is optional; unknown keys are an error. A pattern is
 * [scheme://]host[:port]: host is a name ("shop.test"), "*.name" (every
 * subdomain of name at any depth, not name itself), "*" (any host), or an
 * address literal ("10.0.0.5", "[::1]"); port is a number or "*" (every
 * port). Matching is case-insensitive and ignores a trailing dot. scheme
 * is http or https (ws and wss count as http and https). A pattern
 * without a port means the default ports of the schemes it allows, as an
 * origin does: 80 and 443, or its scheme's; in "deny", every port. "deny"
 * is checked first. "default" is "deny" when "allow" is set (and must then
 * be) and "allow" otherwise (any public host, any port). "allow_private"
 * lists the loopback, private and special-purpose addresses or CIDR
 * ranges that may be connected to, as address[/prefix][:port] (without a
 * port: 80 and 443; "[::1]:8080" for IPv6 with a port); an allow pattern
 * that is an address literal also names its address, on its ports.
 * Link-local (169.254/16, fe80::/10), cloud metadata (169.254.169.254,
 * fd00:ec2::254, 100.100.100.200), unspecified, multicast and reserved
 * addresses are refused whatever the config says (listing one is an
 * error). "hosts" maps names to addresses the proxy uses instead of DNS.
 *
 * A session may narrow its tenant's policy (policy_egress_narrow) with an
 * object of the same shape without "hosts": a request must then pass the
 * tenant's rules and the session's.
 *
 * Threads: a struct policy_egress is immutable once built; the checks may
 * run on any number of threads at once.
 */
#ifndef GB_POLICY_EGRESS_H
#define GB_POLICY_EGRESS_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

struct policy_egress;
struct policy_proxy;

/* Error codes (returned negated). */
enum {
	POLICY_EINVAL = 1, /* a bad argument or config: see err */
	POLICY_ENOMEM,
	POLICY_EREFUSED, /* the check refused: see the decision */
	POLICY_ESYS,     /* a system call failed: see err */
};

/* The outcome of a check. Filled in on allow and on refusal. */
struct policy_decision {
	int allowed;       /* 1 or 0 */
	char rule[48];     /* the refusing rule: "egress-deny", "egress-not-allowed",
	                    * "addr-link-local", "addr-metadata", "addr-loopback",
	                    * "addr-private", "addr-special", "addr-unspecified",
	                    * "addr-multicast", "addr-reserved", "scheme-<name>",
	                    * "url-invalid", "devtools-port" (the browser's own
	                    * DevTools port, see policy_proxy_refuse_port); "" when
	                    * allowed */
	char scope[16];    /* "tenant" or "session": whose rule refused; "" otherwise */
	char pattern[288]; /* for "egress-deny": the deny pattern that matched, else "" */
	char host[256];    /* the normalised host checked ("" if the URL had none) */
	char addr[64];     /* the address checked ("" if none) */
	char message[768]; /* for the agent: what was refused (host, port) and by which
	                    * rule, naming no other policy entry, and the line that would
	                    * lift it */
	size_t fix_at;     /* where in message that line starts (0: none): what a page
	                    * is shown ends there */
};

/*
 * Parses an egress config object (shape above). json borrowed; NULL means
 * the default policy: any public host, no private addresses, no
 * overrides. On success *out is a new policy (policy_egress_free). On
 * error returns -POLICY_EINVAL with what is wrong and where in err
 * ("egress.allow[2]: \"*foo.test\" is not a host pattern: write
 * \"foo.test\" or \"*.foo.test\""), or -POLICY_ENOMEM.
 */
int policy_egress_parse(const json_t *json, struct policy_egress **out, char *err, size_t errlen);

/*
 * A session's narrowing of base: a new policy that allows only what both
 * base and json allow. json (borrowed) has the config shape without
 * "hosts"; NULL gives a plain copy. base is borrowed and may be freed
 * afterwards. Errors as policy_egress_parse ("egress.hosts: resolver
 * overrides belong in the tenant's policy, not a session's").
 */
/* A policy's layers: the tenant's and at most POLICY_MAX_LAYERS - 1
 * narrowings. */
#define POLICY_MAX_LAYERS 4

int policy_egress_narrow(const struct policy_egress *base, const json_t *json,
                         struct policy_egress **out, char *err, size_t errlen);

/* Frees p. NULL is a no-op. */
void policy_egress_free(struct policy_egress *p);

/*
 * Where the tenant's policy is written ("/etc/glassbox/policy.json", or
 * "tenants.acme.policy of /etc/glassbox/serve.json"; copied, at most 319
 * bytes; NULL or "" for unknown), for the lines that refusals suggest
 * ("add \"127.0.0.1:8080\" to \"egress\": {\"allow_private\": [...]} in
 * FILE"). Narrowings keep it. Call before the policy is shared.
 */
void policy_egress_set_source(struct policy_egress *p, const char *source);

/*
 * Checks a URL a request or a navigation goes to (layer 2, and layer 3's
 * first step): the scheme (http, https, ws, wss only; about:blank and
 * about:srcdoc pass, as they reach no network), the host against
 * deny, allow and default, and, when the host is an address literal in
 * any encoding (0xa9fea9fe, 2852039166, [::ffff:169.254.169.254]) or has a
 * resolver override, that address against the refused ranges. A name
 * without an override is not resolved here: the proxy checks what it
 * resolves to. Returns 0 when allowed, -POLICY_EREFUSED with the decision
 * filled in otherwise. d is always filled in.
 */
int policy_egress_check_url(const struct policy_egress *p, const char *url,
                            struct policy_decision *d);

/*
 * Checks one address that host (for messages and for address literals
 * named by an allow pattern; may be NULL) resolved to, before connecting:
 * always-refused ranges, then loopback/private/special ranges unless the
 * policy names the address on the port of sa (a port of 0, unknown, is
 * named only by an entry for every port). sa is AF_INET or AF_INET6
 * (v4-mapped v6 is checked as the v4 address it carries). Returns 0 or -POLICY_EREFUSED;
 * d is always filled in.
 */
int policy_egress_check_addr(const struct policy_egress *p, const char *host,
                             const struct sockaddr *sa, struct policy_decision *d);

/* ---- refusals -------------------------------------------------------------- */

/*
 * One refusal, as the proxy (or the CDP Fetch layer) reports it. Strings
 * are borrowed for the duration of the callback only: copy what you keep.
 */
struct policy_refusal {
	int64_t time_unix_ms; /* wall clock */
	const char *time;     /* the same as "2026-11-29T18:20:01.123Z" */
	const char *session;  /* the session id given in the proxy options, or "" */
	const char *target;   /* CDP target id (Fetch layer), "" for the proxy */
	const char *layer;    /* "proxy" (or "fetch", "tool") */
	const char *method;   /* "GET", "CONNECT", ... or "" */
	const char *url;      /* absolute URL, or "host:port" for CONNECT, or "" */
	const char *host;     /* normalised host, or "" */
	const char *addr;     /* resolved address refused, or "" */
	const char *rule;     /* as in struct policy_decision, or "proxy-connection-limit" */
	const char *message;  /* safe for the agent */
};

/*
 * 1 when a refusal by layer ("proxy", "fetch", "tool") of a request to
 * host (normalised) is of a request Chromium makes on its own, for no
 * page (component updates, network time, account checks: a fixed list of
 * the hosts of its services), 0 otherwise. Only the proxy sees those: a
 * refusal by any other layer is a page's. With the Fetch layer off, a
 * page's request to one of those hosts counts as the browser's too (it is
 * refused all the same). Pure and thread-safe.
 */
int policy_refusal_is_browser_own(const char *layer, const char *host);

/* Called for each refusal. See struct policy_proxy_options for the thread. */
typedef void (*policy_refusal_fn)(void *user, const struct policy_refusal *r);

/*
 * The refusal as a JSON object for the session's record and the action's
 * result: {"time", "session", "target", "layer", "method", "url", "host",
 * "addr", "rule", "message"} (empty strings are omitted). New reference;
 * NULL on allocation failure.
 */
json_t *policy_refusal_to_json(const struct policy_refusal *r);

/* ---- the per-session egress proxy (layer 3) ------------------------------ */

struct policy_proxy_options {
	const char *session_id;       /* put in refusals; copied; NULL = "" */
	const char *listen_addr;      /* IPv4 or IPv6 literal; NULL = "127.0.0.1" */
	int listen_port;              /* 0 = ephemeral */
	int listen_fd;                /* > 0: a listening socket to use instead (taken over,
	                               * closed by policy_proxy_stop), e.g. one made by
	                               * policy_proxy_listen_in_netns() */
	int max_connections;          /* client connections at once; 0 = 64 */
	int header_timeout_ms;        /* a request head must arrive within; 0 = 15000 */
	int connect_timeout_ms;       /* per upstream address; 0 = 10000 */
	int idle_timeout_ms;          /* no byte either way (tunnels, keep-alive); 0 = 120000 */
	size_t max_header_bytes;      /* request or response head; 0 = 32 KiB, at most 1 MiB */
	policy_refusal_fn on_refusal; /* may be NULL */
	void *user;                   /* passed to on_refusal */
};

/* Counters of one proxy (one session). */
struct policy_proxy_stats {
	uint64_t bytes_up;         /* client to upstream, request heads included */
	uint64_t bytes_down;       /* upstream to client */
	uint64_t connections;      /* client connections accepted */
	uint64_t connections_open; /* client connections open now */
	uint64_t requests;         /* requests and CONNECTs parsed */
	uint64_t refused;          /* refusals reported */
	uint64_t over_limit;       /* connections turned away at the limit */
};

/*
 * Starts an egress proxy for one session: an HTTP/1.1 forward proxy
 * (absolute-form requests, rewritten to origin-form, Proxy-* headers
 * dropped; WebSocket Upgrade tunnelled after the 101) and CONNECT tunnels,
 * on its own thread with a poll() loop (plus one resolver thread, started
 * on the first name that needs DNS). Each request's host is checked with
 * the rules of p; the proxy resolves names itself (the overrides of p,
 * else getaddrinfo), checks every address with policy_egress_check_addr
 * and refuses the whole request if any address is refused; refusals get
 * 403 and a one-line body naming the rule. p is borrowed and must outlive
 * the proxy; o is copied. on_refusal is called on the proxy's thread,
 * while no lock of the proxy is held: it must not block for long and
 * must not call policy_proxy_stop. No request or response body is ever
 * logged or put in a refusal.
 *
 * Returns 0 with *out, or -POLICY_EINVAL / -POLICY_ESYS / -POLICY_ENOMEM
 * with err ("cannot listen on 127.0.0.1:8080: Address in use").
 */
int policy_proxy_start(const struct policy_egress *p, const struct policy_proxy_options *o,
                       struct policy_proxy **out, char *err, size_t errlen);

/*
 * Stops the proxy: closes the listening socket and every connection, joins
 * its threads, frees px. No fd or thread is left. NULL is a no-op. Must
 * not be called from on_refusal.
 */
void policy_proxy_stop(struct policy_proxy *px);

/* Makes p (borrowed; it must outlive the proxy or the next call) the
 * policy the proxy checks new requests against, e.g. a session's
 * narrowing. Thread-safe: a check under way finishes with the policy it
 * started with, so the caller keeps the previous one until the proxy
 * stops. */
void policy_proxy_set_policy(struct policy_proxy *px, const struct policy_egress *p);

/* The port the proxy listens on. */
int policy_proxy_port(const struct policy_proxy *px);

/* Copies the counters (atomic reads; any thread). */
void policy_proxy_get_stats(const struct policy_proxy *px, struct policy_proxy_stats *st);

/*
 * The Chromium flags that confine a browser to this proxy, for
 * sess_options: proxy_server ("http://127.0.0.1:41234"),
 * host_resolver_rules (every name NOTFOUND except the proxy's address:
 * Chromium resolves nothing itself) and extra, a NULL-terminated list of
 * further flags (--proxy-bypass-list=<-loopback> so that loopback goes
 * through the proxy too, WebRTC limited to proxied traffic, QUIC off).
 * Pointers into flags stay valid while flags does.
 */
struct policy_chromium_flags {
	char proxy_server[112];
	char host_resolver_rules[160];
	const char *extra[8];
};
void policy_proxy_chromium_flags(const struct policy_proxy *px,
                                 struct policy_chromium_flags *flags);

/*
 * Refuses every connection to a loopback address (127.0.0.0/8, ::1, in
 * any form the policy reads as loopback) on port, whatever the policy
 * allows: rule "devtools-port". For the browser's own DevTools port, which
 * no page may reach (DESIGN.md, security layer 4). The proxy keeps the
 * last POLICY_PROXY_REFUSED_PORTS ports given (a relaunched browser has a
 * new port); giving one twice keeps it once. Thread-safe: any thread, while
 * the proxy runs; requests resolved afterwards are checked against it.
 * Returns 0, or -POLICY_EINVAL for a NULL px or a port outside 1..65535.
 */
#define POLICY_PROXY_REFUSED_PORTS 8
int policy_proxy_refuse_port(struct policy_proxy *px, int port);

/*
 * Whether url (http, https, ws or wss) goes to a loopback destination on
 * port: an address literal in any spelling that is loopback, "localhost"
 * or a name under ".localhost" (browsers resolve those to loopback
 * themselves), or a name whose resolver override in p (may be NULL) has a
 * loopback address. For the layers that see URLs rather than addresses
 * (CDP Fetch, tools), to refuse the DevTools port as the proxy does.
 * Pure and thread-safe. Returns 1 or 0 (0 for a URL that does not parse).
 */
int policy_url_is_loopback_port(const struct policy_egress *p, const char *url, int port);

/*
 * Creates a listening TCP socket on addr:port (NULL addr: 127.0.0.1) inside
 * the network namespace netns_fd (an open /proc/<pid>/ns/net or
 * /run/netns/<name>), from a short-lived thread, so that the calling
 * thread's namespace is untouched. Pass the socket as listen_fd: Chromium
 * in that namespace reaches the proxy, and the proxy connects upstream
 * from glassbox's own namespace. Needs CAP_SYS_ADMIN over the namespace.
 * netns_fd <= 0: in this process's own namespace (no privilege), e.g. a
 * socket readied before the proxy that will take it starts.
 * Returns 0 with *fd_out, or -POLICY_ESYS with err.
 */
int policy_proxy_listen_in_netns(int netns_fd, const char *addr, int port, int *fd_out, char *err,
                                 size_t errlen);

/* ---- the browser's network namespace (layer 4) ---------------------------- */

/*
 * Creates a network namespace with nothing in it but loopback (up), from a
 * short-lived thread: the calling thread's namespace is untouched. *fd_out
 * is an open fd on it (O_CLOEXEC; the caller owns it and closes it: the
 * namespace goes away with its last fd and process). Give it to
 * policy_proxy_listen_in_netns() and to sess_options.netns_fd. Needs
 * CAP_SYS_ADMIN. Returns 0, or -POLICY_ESYS with err ("cannot create a
 * network namespace: Operation not permitted (run glassbox as root ...)").
 */
int policy_netns_create(int *fd_out, char *err, size_t errlen);

/*
 * Whether this process can create network namespaces: tried once per
 * process (the first call; later calls return the same answer), and when
 * it cannot, logged once as a warning ("egress layer 4 is off: ...").
 * Returns 1, or 0 with the reason in why (may be NULL). Thread-safe.
 */
int policy_netns_available(char *why, size_t whylen);
/*
 * Host patterns outside an egress policy (a secret's hosts, for one):
 * the same syntax and matching as egress.allow ("shop.test",
 * "*.example.com", "https://shop.test:8443"). Checks pattern: 0, or
 * -POLICY_EINVAL with why ("'*' may only stand alone or start the pattern
 * as \"*.\""). Pure and thread-safe.
 */
int policy_host_pattern_check(const char *pattern, char *why, size_t whylen);

/* 1 when url (http, https, ws or wss) goes to a host, port and scheme
 * that pattern matches; 0 when not, or when url or pattern does not
 * parse. Unlike egress.allow, a pattern without scheme and port matches
 * every port (a secret names a site; egress decides its ports). Pure and
 * thread-safe. */
int policy_url_matches_host_pattern(const char *pattern, const char *url);

#endif

/*
 * console.h - the web console's parts that know nothing of HTTP servers:
 * its config (credentials and limits), who is logged in (cookie sessions
 * with CSRF tokens), HTML escaping and the page shell, and the static
 * assets (docs/console.md). mcp/console_http.c serves it on the admin
 * listener; live.h is what it shares with an agent session's worker.
 *
 * Threads: everything here is used by the front only.
 */
#ifndef GB_CONSOLE_H
#define GB_CONSOLE_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

#include "common/util.h"
#include "console/live.h"

#define CONSOLE_CREDS_MAX 64
/* People logged in at once; the oldest login goes past it. */
#define CONSOLE_LOGINS_MAX 256
/* A login lasts this long without use. */
#define CONSOLE_LOGIN_IDLE_MS (8 * 3600 * 1000)
#define CONSOLE_FPS_DEFAULT 5
#define CONSOLE_FPS_MAX 30

/* Who may use the console: the admin token (every tenant, approver), or
 * one of console.credentials. */
struct console_cred {
	char id[CONSOLE_NAME_MAX];   /* recorded as the actor's token */
	char name[CONSOLE_NAME_MAX]; /* recorded as who decided / acted */
	char tenant[64];             /* "" : every tenant (the admin) */
	int approver;                /* 0: viewer (sees only); 1: also decides, takes over */
	unsigned char token_sha256[32];
};

struct console_config {
	int frames_per_second; /* per viewer */
	struct console_cred creds[CONSOLE_CREDS_MAX];
	size_t n_creds;
};

/*
 * Reads the config's "console" object (borrowed; may be NULL: defaults,
 * no credentials but the admin token) into c: {frames_per_second?,
 * credentials: [{id, name, tenant, role: "viewer"|"approver",
 * token_sha256}]}. Unknown keys, wrong types, duplicate ids or tokens are
 * refused. 0, or -1 with what is wrong in err.
 */
int console_config_parse(json_t *v, struct console_config *c, char *err, size_t errlen);

/* The credential whose token is token (compared as SHA-256, in constant
 * time against every one, the admin's first: admin_sha256). Borrowed from
 * c, or a static admin credential; NULL when none matches. */
const struct console_cred *console_cred_for_token(const struct console_config *c,
                                                  const unsigned char admin_sha256[32],
                                                  const char *token);

/* Whether cred may see tenant's sessions, approvals and trail. */
int console_cred_sees(const struct console_cred *cred, const char *tenant);

/* One person logged in. */
struct console_login {
	char cookie[65]; /* the session cookie: 32 random bytes, hex */
	char csrf[65];   /* every state change carries it */
	struct console_cred cred;
	int64_t last_used_ms;
	int64_t last_frame_ms; /* for the viewer's frame rate */
};

struct console_logins;

struct console_logins *console_logins_new(void);
void console_logins_free(struct console_logins *l);
/* A new login for cred (copied); borrowed from l, or NULL. */
struct console_login *console_login_start(struct console_logins *l,
                                          const struct console_cred *cred);
/* The login whose cookie is cookie (constant-time compares), still
 * fresh; its last use is now. Borrowed, or NULL. */
struct console_login *console_login_find(struct console_logins *l, const char *cookie);
/* Ends the login (logout). */
void console_login_end(struct console_logins *l, struct console_login *login);
/* 1 when token is the login's CSRF token (constant time). */
int console_csrf_ok(const struct console_login *login, const char *token);

/* ---- HTML (html.c) ----------------------------------------------------- */

/* Appends s HTML-escaped (text and attribute values); NULL is "". */
void console_html_text(struct gb_buf *b, const char *s);
/* Appends s percent-encoded for a query value. */
void console_url_part(struct gb_buf *b, const char *s);
/* The page's head and navigation (title escaped), for the logged-in
 * login (NULL: the login page). */
void console_html_begin(struct gb_buf *b, const char *title, const struct console_login *login);
void console_html_end(struct gb_buf *b);

/* ---- assets (assets.c) ------------------------------------------------- */

/* The static file named name ("console.js", "console.css"): its bytes and
 * type, or NULL. */
const char *console_asset(const char *name, size_t *len, const char **ctype);

#endif

/*
 * console-private.h - what console_http.c (routes, auth, decisions) and
 * console_pages.c (the pages) share. Front thread only.
 */
#ifndef GB_MCP_CONSOLE_PRIVATE_H
#define GB_MCP_CONSOLE_PRIVATE_H

#include "console/console.h"
#include "mcp/http-private.h"
#include "mcp/mcp-private.h"

struct evid_audit;
struct evid_store;
struct evid_index;

/* The console's state: one per service. */
struct mcp_console {
	const char *data_dir; /* borrowed from the base config */
	struct console_logins *logins;
	struct evid_audit *audit; /* decisions are appended here; NULL: not recorded */
	struct evid_store *store; /* evidence shown; NULL: none */
	struct evid_index *index; /* finds an approval's screenshot; NULL: none */
};

/* An HTML page (page freed) with the console's headers. */
void mcp_console_html(struct http_req *req, int status, struct gb_buf *page);
/* JSON (value stolen) with the console's headers. */
void mcp_console_json(struct http_req *req, int status, json_t *value);
/* A page saying what was refused (message escaped). */
void mcp_console_error_page(struct http_req *req, const struct console_login *login, int status,
                            const char *message);

/* The open session with MCP id that login may see: a counted reference,
 * or NULL (unknown, closing, or another tenant's: alike). */
struct http_session *mcp_console_session(struct serve *s, const struct console_login *login,
                                         const char *id);

/* The pages (console_pages.c). */
void mcp_console_login_page(struct http_req *req, int status, const char *error);
void mcp_console_sessions_page(struct serve *s, struct http_req *req,
                               const struct console_login *login);
void mcp_console_live_page(struct serve *s, struct http_req *req, const struct console_login *login,
                           struct http_session *hs, struct console_live *live);
/* {live: console_live_status, mine, actions: [...]}: a new object. */
json_t *mcp_console_live_status(struct serve *s, const struct console_login *login,
                                struct http_session *hs, struct console_live *live);
void mcp_console_approvals_page(struct serve *s, struct http_req *req,
                                const struct console_login *login);
void mcp_console_trail_page(struct serve *s, struct http_req *req,
                            const struct console_login *login);
/* An image artifact of tenant (PNG or JPEG only). */
void mcp_console_artifact(struct serve *s, struct http_req *req, const struct console_login *login,
                          const char *tenant, const char *sha256);
/* A static file of the console. */
void mcp_console_asset(struct http_req *req, const char *name);

#endif

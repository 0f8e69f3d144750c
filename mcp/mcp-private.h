/*
 * mcp-private.h - the pieces of mcp/ that its transports share; not for
 * other modules.
 *
 *   jsonrpc.c  line framing, parsing and classifying messages, building
 *              responses and notifications, version negotiation (pure:
 *              no threads, no I/O; fuzzed by tests/fuzz/fuzz_jsonrpc.c)
 *   schema.c   tool descriptions and JSON Schemas from the tool table
 *   server.c   MCP method dispatch over an act_session; transport-neutral
 *   stdio.c    the stdio transport: reader loop, serialized writer
 */
#ifndef GB_MCP_PRIVATE_H
#define GB_MCP_PRIVATE_H

#include <jansson.h>
#include <stddef.h>

#include "mcp/mcp.h"

struct act_config;
struct act_def;

/* ---- jsonrpc.c ---------------------------------------------------------- */

enum mcp_error_code {
	MCP_ERR_PARSE = -32700,
	MCP_ERR_INVALID_REQUEST = -32600,
	MCP_ERR_METHOD_NOT_FOUND = -32601,
	MCP_ERR_INVALID_PARAMS = -32602,
	MCP_ERR_INTERNAL = -32603,
	MCP_ERR_RESOURCE_NOT_FOUND = -32002, /* MCP 2025-11-25 resources/read */
};

enum mcp_msg_kind {
	MCP_MSG_EMPTY,        /* a blank line: ignored */
	MCP_MSG_INVALID,      /* answer with error_code/error, to id (or null) */
	MCP_MSG_REQUEST,      /* method + id: must be answered */
	MCP_MSG_NOTIFICATION, /* method, no id: never answered */
	MCP_MSG_RESPONSE,     /* a response from the client to a request of ours:
	                         never answered */
};

struct mcp_msg {
	enum mcp_msg_kind kind;
	json_t *root;       /* owned: the parsed line, or NULL */
	json_t *id;         /* borrowed from root: a string or integer id, or NULL */
	const char *method; /* borrowed from root, or NULL */
	json_t *params;     /* borrowed: requests: an object or NULL; notifications:
	                       whatever was sent, or NULL */
	json_t *result;     /* MCP_MSG_RESPONSE, borrowed: the result of a
	                       well-formed success response, else NULL */
	json_t *rpc_error;  /* MCP_MSG_RESPONSE, borrowed: the error object of a
	                       well-formed error response, else NULL; result and
	                       rpc_error both NULL: a malformed response */
	int error_code;     /* MCP_MSG_INVALID: an enum mcp_error_code */
	char error[256];    /* MCP_MSG_INVALID: what was wrong and what to send */
};

/* Parses and classifies one line (line[0..len), no newline, need not be
 * NUL-terminated) into msg, which the caller releases with
 * mcp_msg_clear(). Returns msg->kind. */
enum mcp_msg_kind mcp_jsonrpc_parse(const char *line, size_t len, struct mcp_msg *msg);
void mcp_msg_clear(struct mcp_msg *msg);

/* {"jsonrpc":"2.0","id":id,"result":result}: id borrowed, result stolen.
 * New reference. */
json_t *mcp_jsonrpc_result(json_t *id, json_t *result);

/* {"jsonrpc":"2.0","id":id or null,"error":{code,message,data?}}: id
 * borrowed (NULL = null), data stolen (may be NULL). New reference. */
json_t *mcp_jsonrpc_error(json_t *id, int code, const char *message, json_t *data);

/* {"jsonrpc":"2.0","method":method,"params":params}: params stolen (may
 * be NULL). New reference. */
json_t *mcp_jsonrpc_notification(const char *method, json_t *params);

/* {"jsonrpc":"2.0","id":id,"method":method,"params":params}: a request of
 * the server's to the client. id borrowed, params stolen (may be NULL).
 * New reference. */
json_t *mcp_jsonrpc_request(json_t *id, const char *method, json_t *params);

/* msg (borrowed) as one compact line ending in '\n' (malloc'd, *len
 * bytes), or NULL when it cannot be encoded. */
char *mcp_jsonrpc_encode(json_t *msg, size_t *len);

/* Replaces every byte of s that is not printable ASCII with '?': for
 * client-supplied text echoed in messages and logs. */
void mcp_ascii_only(char *s);

/* The protocol revision to answer a client that asked for requested
 * (NULL allowed): requested itself when supported, else the latest.
 * Static string. */
const char *mcp_negotiate_version(const char *requested);

/* Splits a byte stream into lines of at most max_bytes (the newline not
 * counted). A longer line is reported once through on_overflow and its
 * bytes are dropped up to its newline; the reader never holds more than
 * max_bytes. Lines are handed to on_line (borrowed for the call only). */
typedef void (*mcp_line_fn)(void *user, const char *line, size_t len);
typedef void (*mcp_overflow_fn)(void *user, size_t max_bytes);

struct mcp_line_reader {
	char *buf; /* the partial line so far */
	size_t len;
	size_t cap;
	size_t max_bytes;
	int skipping; /* dropping an oversized line up to its newline */
};

void mcp_lines_init(struct mcp_line_reader *r, size_t max_bytes);
void mcp_lines_feed(struct mcp_line_reader *r, const char *data, size_t n, mcp_line_fn on_line,
                    mcp_overflow_fn on_overflow, void *user);
/* End of input: hands over a last line that had no newline. */
void mcp_lines_finish(struct mcp_line_reader *r, mcp_line_fn on_line, void *user);
void mcp_lines_free(struct mcp_line_reader *r);

/* ---- schema.c ----------------------------------------------------------- */

/* The inputSchema of def: type object, properties, required, enum,
 * minimum/maximum, additionalProperties false. New reference. */
json_t *mcp_schema_input(const struct act_def *def);

/* The Tool object of def as a client of protocol revision version sees
 * it (outputSchema and title only from 2025-06-18; outputSchema, shared
 * and not modified, only when output_schema is not NULL: the server's
 * results carry structuredContent). New reference. */
json_t *mcp_schema_tool(const struct act_def *def, const char *version, json_t *output_schema);

/* The result of tools/list: {"tools": [...]}, the tools whose capability
 * group is on in caps (actions/caps.c; core tools always), each with its
 * outputSchema when output_schema is 1 (mcp_schema_tool). New reference. */
json_t *mcp_schema_tools_list(const char *version, unsigned caps, int output_schema);

/* ---- server.c ----------------------------------------------------------- */

/* Hands one message (borrowed) to the transport, which writes it whole.
 * related (borrowed, may be NULL) is the id of the client's request the
 * message belongs to: the request's own response, its progress, a question
 * asked while it runs; NULL for a message tied to no request. Called from
 * the front and from session worker threads, so it must be thread-safe.
 * Returns 0, or -1 when the message could not be sent. */
typedef int (*mcp_emit_fn)(void *user, json_t *msg, json_t *related);

struct mcp_server;

/* A server for one client connection. cfg is borrowed until
 * mcp_server_free(); emit is how it answers. Returns 0 or -ENOMEM. */
int mcp_server_new(const struct act_config *cfg, mcp_emit_fn emit, void *emit_user,
                   struct mcp_server **out);

/* Handles one incoming line (borrowed). Front thread only. */
void mcp_server_handle_line(struct mcp_server *srv, const char *line, size_t len);

/* Answers a line that exceeded max_bytes. Front thread only. */
void mcp_server_line_too_long(struct mcp_server *srv, size_t max_bytes);

/* The end of input: waits until every call in flight has been answered;
 * a call waiting for the client's answer to a question (act_call.elicit)
 * gets none. Front thread only. */
void mcp_server_drain(struct mcp_server *srv);

/* Cancels every call in flight (they get no response) and ends questions
 * to the client; returns at once. Any thread but a session worker. */
void mcp_server_cancel_all(struct mcp_server *srv);

/* How the session's open browser profile ends when srv is freed (see
 * act_session_set_profile_end); no-op without a session. Any thread but a
 * session worker, before mcp_server_free. */
void mcp_server_set_profile_end(struct mcp_server *srv, int save);

/* 1 while some call is in flight (queued, running or being answered). Any
 * thread. */
int mcp_server_busy(struct mcp_server *srv);

/* How mcp_server_session() finds the server's act_session. */
enum mcp_session_use {
	MCP_SESSION_IF_ANY, /* the one it has, or NULL before it has one */
	MCP_SESSION_CREATE, /* created on first use (its browser then starts if
	                     * cfg->prelaunch); NULL with err when it cannot be */
};
/* The server's act_session (the agent session), borrowed until
 * mcp_server_free, or NULL (see use; err may be NULL with
 * MCP_SESSION_IF_ANY). Front thread only. */
struct act_session *mcp_server_session(struct mcp_server *srv, enum mcp_session_use use, char *err,
                                       size_t errlen);
/* The client's name (clientInfo.name), "" if none. */
const char *mcp_server_client(const struct mcp_server *srv);

/* Drains, frees the act_session (closing its browser) and the server.
 * NULL is fine. Front thread only. */
void mcp_server_free(struct mcp_server *srv);

#endif

/*
 * jsonrpc.c - JSON-RPC 2.0 as MCP uses it: newline-delimited framing with
 * a ceiling, parsing and classifying one message, building responses and
 * notifications, and protocol version negotiation.
 *
 * Pure code: no threads, no I/O, no globals that change. Everything here
 * sees hostile input and is fuzzed (tests/fuzz/fuzz_jsonrpc.c).
 *
 * MCP narrows JSON-RPC: ids are strings or integers (never null), params
 * are objects, and batches are not supported (since 2025-06-18).
 */
#include "mcp/mcp-private.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Newest first; the first one is what unknown versions get. */
static const char *const supported_versions[] = {
	MCP_PROTOCOL_LATEST,
	"2025-06-18",
	"2025-03-26",
};

/* A partial-line buffer larger than this is released once its line is
 * handled, so one big message does not pin memory for the connection. */
#define LINE_BUF_KEEP_BYTES (256u * 1024u)

/* ---- versions ----------------------------------------------------------- */

/* See mcp-private.h. */
const char *mcp_negotiate_version(const char *requested)
{
	const char *chosen = supported_versions[0];
	size_t i;

	if (!requested)
		goto out;
	for (i = 0; i < sizeof(supported_versions) / sizeof(supported_versions[0]); i++) {
		if (!strcmp(requested, supported_versions[i])) {
			chosen = supported_versions[i];
			break;
		}
	}
out:
	return chosen;
}

/* ---- parsing ------------------------------------------------------------ */

/* See mcp-private.h. */
void mcp_ascii_only(char *s)
{
	for (; *s; s++) {
		if ((unsigned char)*s < 0x20 || (unsigned char)*s > 0x7e)
			*s = '?';
	}
}

/* Marks msg invalid with code and a message (printable ASCII only). */
static void invalid(struct mcp_msg *msg, int code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void invalid(struct mcp_msg *msg, int code, const char *fmt, ...)
{
	va_list ap;

	msg->kind = MCP_MSG_INVALID;
	msg->error_code = code;
	va_start(ap, fmt);
	vsnprintf(msg->error, sizeof(msg->error), fmt, ap);
	va_end(ap);
	mcp_ascii_only(msg->error);
}

/* Whether s[0..len) is only JSON whitespace. */
static int is_blank(const char *s, size_t len)
{
	size_t i;

	for (i = 0; i < len; i++) {
		if (s[i] != ' ' && s[i] != '\t' && s[i] != '\r' && s[i] != '\n')
			return 0;
	}
	return 1;
}

/* Fills msg->result or msg->rpc_error of a response (msg->root has no
 * "method" and has "result" or "error"): only for "jsonrpc": "2.0" with a
 * usable id and exactly one of the two, the error being an object. */
static void classify_response(struct mcp_msg *msg, json_t *version)
{
	json_t *result = json_object_get(msg->root, "result");
	json_t *error = json_object_get(msg->root, "error");

	if (!json_is_string(version) || strcmp(json_string_value(version), "2.0") != 0 || !msg->id)
		return;
	if (result && !error)
		msg->result = result;
	else if (json_is_object(error) && !result)
		msg->rpc_error = error;
}

/* See mcp-private.h. The checks, in order: the line is JSON; it is one
 * object (arrays are batches, refused); "jsonrpc" is "2.0"; then a
 * message with "method" is a request (with a string or integer "id") or a
 * notification (no "id"), and one without is a response (whose result or
 * error is only picked out when it is well-formed). An id that is
 * valid is kept even when the rest is not, so the error reaches the
 * request it belongs to. */
enum mcp_msg_kind mcp_jsonrpc_parse(const char *line, size_t len, struct mcp_msg *msg)
{
	json_error_t jerr;
	json_t *version;
	json_t *method;
	json_t *id;
	json_t *params;

	memset(msg, 0, sizeof(*msg));
	if (is_blank(line, len)) {
		msg->kind = MCP_MSG_EMPTY;
		goto out;
	}
	msg->root = json_loadb(line, len, JSON_REJECT_DUPLICATES | JSON_DECODE_ANY, &jerr);
	if (!msg->root) {
		invalid(msg, MCP_ERR_PARSE,
		        "parse error at line %d, column %d: %s; send one JSON-RPC message per line",
		        jerr.line, jerr.column, jerr.text);
		goto out;
	}
	if (json_is_array(msg->root)) {
		invalid(msg, MCP_ERR_INVALID_REQUEST,
		        "JSON-RPC batches are not supported: send one message per line");
		goto out;
	}
	if (!json_is_object(msg->root)) {
		invalid(msg, MCP_ERR_INVALID_REQUEST,
		        "invalid request: a JSON-RPC message must be a JSON object");
		goto out;
	}

	id = json_object_get(msg->root, "id");
	if (id && (json_is_string(id) || json_is_integer(id)))
		msg->id = id;
	method = json_object_get(msg->root, "method");
	version = json_object_get(msg->root, "jsonrpc");
	/* Whatever a client's response looks like, it is never answered: an
	 * error for an error could bounce back and forth for ever. */
	if (!method &&
	    (json_object_get(msg->root, "result") || json_object_get(msg->root, "error"))) {
		msg->kind = MCP_MSG_RESPONSE;
		classify_response(msg, version);
		goto out;
	}

	if (!json_is_string(version) || strcmp(json_string_value(version), "2.0") != 0) {
		invalid(msg, MCP_ERR_INVALID_REQUEST,
		        "invalid request: \"jsonrpc\" must be \"2.0\"");
		goto out;
	}
	if (id && !msg->id) {
		invalid(msg, MCP_ERR_INVALID_REQUEST,
		        "invalid request: \"id\" must be a string or an integer");
		goto out;
	}
	if (!method) {
		invalid(msg, MCP_ERR_INVALID_REQUEST, "invalid request: \"method\" is missing");
		goto out;
	}
	if (!json_is_string(method)) {
		invalid(msg, MCP_ERR_INVALID_REQUEST,
		        "invalid request: \"method\" must be a string");
		goto out;
	}
	msg->method = json_string_value(method);
	params = json_object_get(msg->root, "params");
	if (!msg->id) {
		msg->kind = MCP_MSG_NOTIFICATION;
		msg->params = params;
		goto out;
	}
	if (params && !json_is_object(params) && !json_is_null(params)) {
		invalid(msg, MCP_ERR_INVALID_PARAMS,
		        "invalid params: \"params\" must be an object");
		goto out;
	}
	msg->params = json_is_object(params) ? params : NULL;
	msg->kind = MCP_MSG_REQUEST;
out:
	return msg->kind;
}

/* Releases what msg owns; msg can be parsed into again. */
void mcp_msg_clear(struct mcp_msg *msg)
{
	json_decref(msg->root);
	memset(msg, 0, sizeof(*msg));
}

/* ---- building ----------------------------------------------------------- */

/* See mcp-private.h. */
json_t *mcp_jsonrpc_result(json_t *id, json_t *result)
{
	json_t *msg = json_object();

	json_object_set_new(msg, "jsonrpc", json_string("2.0"));
	json_object_set(msg, "id", id ? id : json_null());
	json_object_set_new(msg, "result", result ? result : json_object());
	return msg;
}

/* See mcp-private.h. */
json_t *mcp_jsonrpc_error(json_t *id, int code, const char *message, json_t *data)
{
	json_t *msg = json_object();
	json_t *err = json_object();

	json_object_set_new(err, "code", json_integer(code));
	/* message may carry bytes a client sent; keep the response valid */
	if (json_object_set_new(err, "message", json_string(message)) < 0)
		json_object_set_new(err, "message", json_string("invalid message text"));
	if (data)
		json_object_set_new(err, "data", data);
	json_object_set_new(msg, "jsonrpc", json_string("2.0"));
	json_object_set(msg, "id", id ? id : json_null());
	json_object_set_new(msg, "error", err);
	return msg;
}

/* See mcp-private.h. */
json_t *mcp_jsonrpc_notification(const char *method, json_t *params)
{
	json_t *msg = json_object();

	json_object_set_new(msg, "jsonrpc", json_string("2.0"));
	json_object_set_new(msg, "method", json_string(method));
	if (params)
		json_object_set_new(msg, "params", params);
	return msg;
}

/* See mcp-private.h. */
json_t *mcp_jsonrpc_request(json_t *id, const char *method, json_t *params)
{
	json_t *msg = mcp_jsonrpc_notification(method, params);

	json_object_set(msg, "id", id);
	return msg;
}

/* See mcp-private.h. Compact encoding escapes every control character in
 * strings, so the only newline is the one appended. */
char *mcp_jsonrpc_encode(json_t *msg, size_t *len)
{
	char *text;
	char *line = NULL;
	size_t n;

	text = json_dumps(msg, JSON_COMPACT);
	if (!text)
		goto out;
	n = strlen(text);
	line = realloc(text, n + 2);
	if (!line) {
		free(text);
		goto out;
	}
	line[n] = '\n';
	line[n + 1] = '\0';
	*len = n + 1;
out:
	return line;
}

/* ---- line framing ------------------------------------------------------- */

/* See mcp-private.h. */
void mcp_lines_init(struct mcp_line_reader *r, size_t max_bytes)
{
	memset(r, 0, sizeof(*r));
	r->max_bytes = max_bytes;
}

/* Frees the partial-line buffer when it grew beyond LINE_BUF_KEEP_BYTES. */
static void release_big_buffer(struct mcp_line_reader *r)
{
	if (r->cap > LINE_BUF_KEEP_BYTES) {
		free(r->buf);
		r->buf = NULL;
		r->cap = 0;
	}
}

/* Appends data[0..n) to the partial line; the caller has checked that the
 * total stays within max_bytes. Returns 0 or -1 when out of memory. */
static int append(struct mcp_line_reader *r, const char *data, size_t n)
{
	size_t need = r->len + n;
	size_t cap;
	char *grown;

	if (need > r->cap) {
		cap = r->cap ? r->cap : 4096;
		while (cap < need)
			cap *= 2;
		if (cap > r->max_bytes)
			cap = r->max_bytes;
		grown = realloc(r->buf, cap);
		if (!grown)
			return -1;
		r->buf = grown;
		r->cap = cap;
	}
	memcpy(r->buf + r->len, data, n);
	r->len = need;
	return 0;
}

/* See mcp-private.h. A line that arrives whole in data is handed over
 * without a copy. Running out of memory for a line is handled like an
 * oversized line: reported, skipped. */
void mcp_lines_feed(struct mcp_line_reader *r, const char *data, size_t n, mcp_line_fn on_line,
                    mcp_overflow_fn on_overflow, void *user)
{
	const char *nl;
	size_t take;
	size_t step;

	while (n) {
		nl = memchr(data, '\n', n);
		take = nl ? (size_t)(nl - data) : n;
		step = nl ? take + 1 : take;
		if (r->skipping) {
			if (nl)
				r->skipping = 0;
		} else if (take > r->max_bytes - r->len) {
			r->len = 0;
			release_big_buffer(r);
			on_overflow(user, r->max_bytes);
			r->skipping = !nl;
		} else if (nl && !r->len) {
			on_line(user, data, take);
		} else if (append(r, data, take) < 0) {
			r->len = 0;
			release_big_buffer(r);
			on_overflow(user, r->max_bytes);
			r->skipping = !nl;
		} else if (nl) {
			on_line(user, r->buf, r->len);
			r->len = 0;
			release_big_buffer(r);
		}
		data += step;
		n -= step;
	}
}

/* See mcp-private.h. */
void mcp_lines_finish(struct mcp_line_reader *r, mcp_line_fn on_line, void *user)
{
	if (!r->skipping && r->len)
		on_line(user, r->buf, r->len);
	r->len = 0;
	r->skipping = 0;
}

/* See mcp-private.h. */
void mcp_lines_free(struct mcp_line_reader *r)
{
	free(r->buf);
	memset(r, 0, sizeof(*r));
}

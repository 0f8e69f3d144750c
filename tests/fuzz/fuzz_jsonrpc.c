/*
 * fuzz_jsonrpc.c - libFuzzer target for what an MCP client controls: the
 * byte stream split into lines (with a small ceiling, so oversized lines
 * are reached), each line parsed, classified and dispatched by the server,
 * with the real tool table and argument checks.
 *
 * act_session_* is a synchronous stand-in here: a submitted call reports
 * progress and completes inside act_session_submit(), which also checks
 * that the server copes with completion before submit returns. Some calls
 * first ask the client (act_call.elicit, 1 ms): no answer can come while
 * the front is busy, so the question must time out and be withdrawn.
 * Every message the server emits is checked: valid JSON-RPC 2.0, a
 * response only ever to a request (never to a notification) and related
 * to that request's id, and the
 * server's only request is elicitation/create. Every parsed message is
 * checked too: a response never has a method, and its result or error is
 * picked out only with an id, never both.
 *
 * Input: if the first byte is odd, an initialize line (declaring
 * elicitation) is fed first so that the fuzzer reaches the methods behind
 * it; responses in the input then meet a server that sends requests.
 *
 *   CC=clang meson setup build-fuzz -Dfuzz=enabled
 *   ninja -C build-fuzz mcp/fuzz_jsonrpc && build-fuzz/mcp/fuzz_jsonrpc -max_total_time=30
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "actions/actions.h"
#include "common/log.h"
#include "mcp/mcp-private.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Ceiling on a line in this target: small, so overflow paths run often. */
#define FUZZ_MAX_LINE_BYTES 512

struct act_session {
	int calls;
};

static struct act_session the_session;

int act_session_new(const struct act_config *cfg, struct act_session **out, char *err,
                    size_t errlen)
{
	*out = &the_session;
	return 0;
}

int act_session_submit(struct act_session *s, struct act_call *call)
{
	json_t *result;

	/* every few calls, refuse, as a session that is shutting down does */
	if (++s->calls % 7 == 0)
		return -1;
	if (call->on_progress) {
		call->on_progress(call, 1, 0, "started");
		call->on_progress(call, 0.5, 2, NULL); /* not increasing: must be dropped */
	}
	if (call->elicit && s->calls % 3 == 0) {
		json_t *schema = json_pack("{s:s, s:{}}", "type", "object", "properties");
		json_t *answer = NULL;

		/* the front is here, so nothing can answer: it times out */
		if (call->elicit(call, "Approve?", schema, 1, &answer) != -1 || answer)
			abort();
		json_decref(schema);
	}
	if (s->calls % 5 == 0)
		result = NULL; /* a broken result must still become a response */
	else
		result = json_pack("{s:[{s:s, s:s}, {s:s, s:s}], s:{s:s, s:s, s:b}}", "content",
		                   "type", "text", "text", "ok", "type", "resource_link", "uri",
		                   "glassbox://artifact/00", "structuredContent", "operation_id",
		                   call->operation_id ? call->operation_id : "op", "tool",
		                   call->def->name, "ok", 1);
	call->on_done(call, result);
	return 0;
}

void act_session_cancel(struct act_session *s, struct act_call *call)
{
	call->cancelled = 1;
}

void act_session_set_profile_end(struct act_session *s, int save)
{
	(void)s;
	(void)save;
}

void act_session_free(struct act_session *s)
{
	s->calls = 0;
}

json_t *act_session_list_uploads(struct act_session *s)
{
	(void)s;
	return json_array();
}

int act_session_read_artifact(struct act_session *s, const char *uri, unsigned char **data,
                              size_t *len, char *mime, size_t mime_len, char *err, size_t errlen)
{
	static const char text[] = "{\"a\":1}";

	if (uri[strlen(uri) - 1] == '0') {
		snprintf(err, errlen, "no such artifact");
		return -1;
	}
	*data = malloc(sizeof(text));
	if (!*data)
		return -1;
	memcpy(*data, text, sizeof(text));
	*len = sizeof(text) - 1;
	snprintf(mime, mime_len, "%s",
	         uri[strlen(uri) - 1] == '1' ? "application/json" : "image/png");
	return 0;
}

/* The line being dispatched: whether it may get a response. */
static int line_is_request;
static int responses_for_line;

static int fuzz_emit(void *user, json_t *msg, json_t *related)
{
	json_t *back;
	size_t len = 0;
	char *line;

	line = mcp_jsonrpc_encode(msg, &len);
	if (!line)
		abort();
	/* one line, and it parses back */
	if (memchr(line, '\n', len - 1) || line[len - 1] != '\n')
		abort();
	back = json_loadb(line, len, 0, NULL);
	if (!back || !json_is_object(back))
		abort();
	if (!json_is_string(json_object_get(back, "jsonrpc")) ||
	    strcmp(json_string_value(json_object_get(back, "jsonrpc")), "2.0") != 0)
		abort();
	if (json_object_get(back, "method")) {
		/* the server's only request: a question to the client */
		if (json_object_get(back, "id") &&
		    (strcmp(json_string_value(json_object_get(back, "method")),
		            "elicitation/create") ||
		     !json_is_string(json_object_get(back, "id"))))
			abort();
	} else {
		if (!json_object_get(back, "id"))
			abort();
		if (!json_object_get(back, "result") == !json_object_get(back, "error"))
			abort();
		/* a response belongs to its own request (the HTTP transport routes by it) */
		if (!json_is_null(json_object_get(back, "id")) &&
		    !json_equal(related, json_object_get(back, "id")))
			abort();
		responses_for_line++;
	}
	json_decref(back);
	free(line);
	return 0;
}

static void on_line(void *user, const char *line, size_t len)
{
	struct mcp_msg msg;
	enum mcp_msg_kind kind = mcp_jsonrpc_parse(line, len, &msg);

	if (kind == MCP_MSG_RESPONSE && (msg.method || (msg.result && msg.rpc_error) ||
	                                 ((msg.result || msg.rpc_error) && !msg.id)))
		abort();
	if (kind != MCP_MSG_RESPONSE && (msg.result || msg.rpc_error))
		abort();
	mcp_msg_clear(&msg);
	line_is_request = kind == MCP_MSG_REQUEST || kind == MCP_MSG_INVALID;
	responses_for_line = 0;
	mcp_server_handle_line(user, line, len);
	/* a request gets exactly one response (calls complete synchronously
	 * here); anything else gets none */
	if (responses_for_line != (line_is_request ? 1 : 0))
		abort();
}

static void on_overflow(void *user, size_t max_bytes)
{
	responses_for_line = 0;
	mcp_server_line_too_long(user, max_bytes);
	if (responses_for_line != 1)
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const char init[] = "{\"jsonrpc\":\"2.0\",\"id\":0,\"method\":\"initialize\","
	                           "\"params\":{\"protocolVersion\":\"2025-06-18\","
	                           "\"capabilities\":{\"elicitation\":{}}}}\n";
	static const struct act_config cfg = { .data_dir = "/nonexistent", .tenant = "fuzz" };
	struct mcp_line_reader reader;
	struct mcp_server *srv;

	gb_log_set_level(GB_LOG_ERROR); /* keep the fuzzer's output readable */
	if (mcp_server_new(&cfg, fuzz_emit, NULL, &srv) < 0)
		return 0;
	mcp_lines_init(&reader, FUZZ_MAX_LINE_BYTES);
	if (size && (data[0] & 1))
		mcp_lines_feed(&reader, init, sizeof(init) - 1, on_line, on_overflow, srv);
	mcp_lines_feed(&reader, (const char *)data, size, on_line, on_overflow, srv);
	mcp_lines_finish(&reader, on_line, srv);
	mcp_lines_free(&reader);
	mcp_server_free(srv);
	return 0;
}

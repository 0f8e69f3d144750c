/*
 * test_mcp.c - MCP over stdio as a client sees it: a pipe pair into
 * mcp_stdio_serve(), with the real tool table and a test double of
 * act_session_* (below) whose worker thread runs calls one at a time:
 *   browser_navigate        reports progress (1/2, 1/2 again, 2/2), then ok
 *   browser_wait_for        blocks until cancelled or `time` seconds pass
 *   browser_take_screenshot result with an image, a resource_link and
 *                           structuredContent
 *   browser_press_key       asks the client (call->elicit; 300 ms for key
 *                           "Short", else 10 s) and says what came back
 *   anything else           ok at once
 * Also the pure pieces: message classification, line framing, versions.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <sodium.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "actions/actions.h"
#include "mcp/mcp-private.h"
#include "mcp/mcp.h"

/* ---- the act_session test double --------------------------------------- */

#define ARTIFACT_OK            \
	"glassbox://artifact/" \
	"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
static const unsigned char fake_png[] = { 0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n', 0, 1, 2 };

struct act_session {
	pthread_t worker;
	pthread_mutex_t lock;
	pthread_cond_t cond;
	struct act_call *head; /* {lock} */
	struct act_call *tail; /* {lock} */
	int stopping;          /* {lock} */
};

static struct {
	pthread_mutex_t lock;
	int n_new;
	int n_submit;
	int n_cancel;
	int n_free;
	int n_done;
	int fail_new;
	char cancelled_tools[256];
	char last_operation_id[64];
} fake = { .lock = PTHREAD_MUTEX_INITIALIZER };

static void fake_reset(void)
{
	pthread_mutex_lock(&fake.lock);
	fake.n_new = fake.n_submit = fake.n_cancel = fake.n_free = fake.n_done = 0;
	fake.fail_new = 0;
	fake.cancelled_tools[0] = '\0';
	fake.last_operation_id[0] = '\0';
	pthread_mutex_unlock(&fake.lock);
}

static int fake_count(const int *counter)
{
	int v;

	pthread_mutex_lock(&fake.lock);
	v = *counter;
	pthread_mutex_unlock(&fake.lock);
	return v;
}

static json_t *ok_result(struct act_call *call, const char *text)
{
	return json_pack("{s:[{s:s, s:s}], s:{s:s, s:s, s:b}}", "content", "type", "text", "text",
	                 text, "structuredContent", "operation_id",
	                 call->operation_id ? call->operation_id : "op-fake", "tool",
	                 call->def->name, "ok", 1);
}

/* browser_press_key: puts a question to the client through call->elicit
 * and reports the outcome as the result's text: "cannot ask", "no answer"
 * or "action=<action> approve=<true|false|->". */
static json_t *elicit_result(struct act_call *call)
{
	const char *key = json_string_value(json_object_get(call->args, "key"));
	json_t *schema =
	    json_pack("{s:s, s:{s:{s:s, s:s}}, s:[s]}", "type", "object", "properties", "approve",
	              "type", "boolean", "title", "Approve this action?", "required", "approve");
	json_t *answer = NULL;
	json_t *approve;
	char text[128];

	if (!call->elicit) {
		snprintf(text, sizeof(text), "cannot ask");
	} else if (call->elicit(call, "Approve: click button \"Delete\"?", schema,
	                        key && !strcmp(key, "Short") ? 300 : 10000, &answer) < 0) {
		assert_null(answer);
		snprintf(text, sizeof(text), "no answer");
	} else {
		approve = json_object_get(json_object_get(answer, "content"), "approve");
		snprintf(text, sizeof(text), "action=%s approve=%s by=%s",
		         json_string_value(json_object_get(answer, "action")),
		         json_is_boolean(approve) ? (json_is_true(approve) ? "true" : "false")
		                                  : "-",
		         call->client_name ? call->client_name : "?");
	}
	json_decref(schema);
	json_decref(answer);
	return ok_result(call, text);
}

static json_t *cancelled_result(struct act_call *call)
{
	return json_pack("{s:[{s:s, s:s}], s:b}", "content", "type", "text", "text", "cancelled",
	                 "isError", 1);
}

/* Runs one call on the worker; s->lock not held. */
static void fake_run(struct act_session *s, struct act_call *call)
{
	const char *tool = call->def->name;
	struct timespec deadline;
	json_t *result;
	double secs;

	if (call->cancelled) {
		result = cancelled_result(call);
	} else if (!strcmp(tool, "browser_navigate")) {
		if (call->on_progress) {
			call->on_progress(call, 1, 2, "loading");
			call->on_progress(call, 1, 2,
			                  "loading again"); /* not increasing: dropped */
			call->on_progress(call, 2, 2, NULL);
		}
		result = ok_result(call, "navigated");
	} else if (!strcmp(tool, "browser_wait_for")) {
		secs = json_number_value(json_object_get(call->args, "time"));
		if (secs <= 0)
			secs = 10;
		clock_gettime(CLOCK_REALTIME, &deadline);
		deadline.tv_sec += (time_t)secs;
		deadline.tv_nsec += (long)((secs - (double)(time_t)secs) * 1e9);
		if (deadline.tv_nsec >= 1000000000L) {
			deadline.tv_sec++;
			deadline.tv_nsec -= 1000000000L;
		}
		pthread_mutex_lock(&s->lock);
		while (!call->cancelled) {
			if (pthread_cond_timedwait(&s->cond, &s->lock, &deadline) == ETIMEDOUT)
				break;
		}
		pthread_mutex_unlock(&s->lock);
		result = call->cancelled ? cancelled_result(call) : ok_result(call, "waited");
	} else if (!strcmp(tool, "browser_press_key")) {
		result = elicit_result(call);
	} else if (!strcmp(tool, "browser_take_screenshot")) {
		result = json_pack("{s:[{s:s, s:s}, {s:s, s:s, s:s}, {s:s, s:s, s:s, s:s}], "
		                   "s:{s:s, s:s, s:b}}",
		                   "content", "type", "text", "text", "screenshot taken", "type",
		                   "image", "mimeType", "image/png", "data", "iVBORw0KGgo=", "type",
		                   "resource_link", "uri", ARTIFACT_OK, "name", "screenshot",
		                   "mimeType", "image/png", "structuredContent", "operation_id",
		                   "op-shot", "tool", tool, "ok", 1);
	} else {
		result = ok_result(call, "done");
	}
	pthread_mutex_lock(&fake.lock);
	fake.n_done++;
	pthread_mutex_unlock(&fake.lock);
	call->on_done(call, result);
}

static void *fake_worker(void *arg)
{
	struct act_session *s = arg;
	struct act_call *call;

	for (;;) {
		pthread_mutex_lock(&s->lock);
		while (!s->head && !s->stopping)
			pthread_cond_wait(&s->cond, &s->lock);
		call = s->head;
		if (call) {
			s->head = call->next;
			if (!s->head)
				s->tail = NULL;
		}
		pthread_mutex_unlock(&s->lock);
		if (!call)
			break;
		fake_run(s, call);
	}
	return NULL;
}

int act_session_new(const struct act_config *cfg, struct act_session **out, char *err,
                    size_t errlen)
{
	struct act_session *s;

	assert_non_null(cfg);
	assert_string_equal(cfg->data_dir, "/nonexistent/test-data");
	pthread_mutex_lock(&fake.lock);
	fake.n_new++;
	if (fake.fail_new) {
		pthread_mutex_unlock(&fake.lock);
		snprintf(err, errlen, "data dir /nonexistent/test-data is not writable");
		return -1;
	}
	pthread_mutex_unlock(&fake.lock);
	s = calloc(1, sizeof(*s));
	assert_non_null(s);
	pthread_mutex_init(&s->lock, NULL);
	pthread_cond_init(&s->cond, NULL);
	assert_int_equal(pthread_create(&s->worker, NULL, fake_worker, s), 0);
	*out = s;
	return 0;
}

int act_session_submit(struct act_session *s, struct act_call *call)
{
	const char *op = call->operation_id;

	pthread_mutex_lock(&fake.lock);
	fake.n_submit++;
	snprintf(fake.last_operation_id, sizeof(fake.last_operation_id), "%s", op ? op : "");
	pthread_mutex_unlock(&fake.lock);
	call->next = NULL;
	pthread_mutex_lock(&s->lock);
	if (s->tail)
		s->tail->next = call;
	else
		s->head = call;
	s->tail = call;
	pthread_cond_broadcast(&s->cond);
	pthread_mutex_unlock(&s->lock);
	return 0;
}

void act_session_cancel(struct act_session *s, struct act_call *call)
{
	pthread_mutex_lock(&fake.lock);
	fake.n_cancel++;
	strncat(fake.cancelled_tools, call->def->name,
	        sizeof(fake.cancelled_tools) - strlen(fake.cancelled_tools) - 2);
	strcat(fake.cancelled_tools, " ");
	pthread_mutex_unlock(&fake.lock);
	pthread_mutex_lock(&s->lock);
	call->cancelled = 1;
	pthread_cond_broadcast(&s->cond);
	pthread_mutex_unlock(&s->lock);
}

void act_session_set_profile_end(struct act_session *s, int save)
{
	(void)s;
	(void)save;
}

void act_session_free(struct act_session *s)
{
	pthread_mutex_lock(&s->lock);
	s->stopping = 1;
	pthread_cond_broadcast(&s->cond);
	pthread_mutex_unlock(&s->lock);
	pthread_join(s->worker, NULL);
	pthread_cond_destroy(&s->cond);
	pthread_mutex_destroy(&s->lock);
	free(s);
	pthread_mutex_lock(&fake.lock);
	fake.n_free++;
	pthread_mutex_unlock(&fake.lock);
}

json_t *act_session_list_uploads(struct act_session *s)
{
	(void)s;
	return json_array();
}

int act_session_read_artifact(struct act_session *s, const char *uri, unsigned char **data,
                              size_t *len, char *mime, size_t mime_len, char *err, size_t errlen)
{
	if (strcmp(uri, ARTIFACT_OK) != 0) {
		snprintf(err, errlen, "no artifact with that sha256 in this tenant's store");
		return -1;
	}
	*data = malloc(sizeof(fake_png));
	memcpy(*data, fake_png, sizeof(fake_png));
	*len = sizeof(fake_png);
	snprintf(mime, mime_len, "image/png");
	return 0;
}

/* ---- a client on a pipe pair -------------------------------------------- */

static const struct act_config test_cfg = { .data_dir = "/nonexistent/test-data",
	                                    .tenant = "local",
	                                    .headless = 1 };

struct conn {
	int to_srv;   /* we write requests here */
	int from_srv; /* we read responses here */
	int srv_in;
	int srv_out;
	pthread_t thread;
	int rc;
	int stopped;
	char *buf;
	size_t len;
	size_t cap;
};

static void *serve_thread(void *arg)
{
	struct conn *c = arg;

	c->rc = mcp_stdio_serve(&test_cfg, c->srv_in, c->srv_out);
	return NULL;
}

static struct conn *conn_start(void)
{
	struct conn *c = calloc(1, sizeof(*c));
	int in[2];
	int out[2];

	assert_non_null(c);
	assert_int_equal(pipe(in), 0);
	assert_int_equal(pipe(out), 0);
	c->srv_in = in[0];
	c->to_srv = in[1];
	c->from_srv = out[0];
	c->srv_out = out[1];
	assert_int_equal(pthread_create(&c->thread, NULL, serve_thread, c), 0);
	return c;
}

static void conn_write(struct conn *c, const char *data, size_t len)
{
	ssize_t n;

	while (len) {
		n = write(c->to_srv, data, len);
		if (n < 0 && errno == EINTR)
			continue;
		assert_true(n > 0);
		data += n;
		len -= (size_t)n;
	}
}

static void conn_send(struct conn *c, const char *line)
{
	conn_write(c, line, strlen(line));
	conn_write(c, "\n", 1);
}

/* The next message from the server, or NULL after timeout_ms or at EOF. */
static json_t *conn_recv_ms(struct conn *c, int timeout_ms)
{
	struct pollfd pfd = { .fd = c->from_srv, .events = POLLIN };
	json_error_t jerr;
	json_t *msg = NULL;
	char *nl;
	size_t linelen;
	ssize_t n;

	for (;;) {
		nl = c->len ? memchr(c->buf, '\n', c->len) : NULL;
		if (nl) {
			linelen = (size_t)(nl - c->buf);
			msg = json_loadb(c->buf, linelen, 0, &jerr);
			if (!msg)
				fail_msg("server wrote a line that is not JSON: %s", jerr.text);
			memmove(c->buf, nl + 1, c->len - linelen - 1);
			c->len -= linelen + 1;
			return msg;
		}
		if (poll(&pfd, 1, timeout_ms) <= 0)
			return NULL;
		if (c->cap - c->len < 65536) {
			c->cap = c->cap ? c->cap * 2 : 131072;
			c->buf = realloc(c->buf, c->cap);
			assert_non_null(c->buf);
		}
		n = read(c->from_srv, c->buf + c->len, c->cap - c->len);
		if (n <= 0)
			return NULL;
		c->len += (size_t)n;
	}
}

static json_t *conn_recv(struct conn *c)
{
	json_t *msg = conn_recv_ms(c, 5000);

	if (!msg)
		fail_msg("no message from the server within 5 s");
	return msg;
}

/* Closes the server's input and waits for mcp_stdio_serve to return; the
 * output left can still be read up to EOF. Returns its return code. */
static int conn_stop(struct conn *c)
{
	if (!c->stopped) {
		close(c->to_srv);
		pthread_join(c->thread, NULL);
		close(c->srv_in);
		close(c->srv_out);
		c->stopped = 1;
	}
	return c->rc;
}

static void conn_free(struct conn *c)
{
	assert_int_equal(conn_stop(c), 0);
	close(c->from_srv);
	free(c->buf);
	free(c);
}

static json_int_t msg_id(json_t *msg)
{
	return json_integer_value(json_object_get(msg, "id"));
}

static int error_code(json_t *msg)
{
	return (int)json_integer_value(json_object_get(json_object_get(msg, "error"), "code"));
}

static const char *error_message(json_t *msg)
{
	return json_string_value(json_object_get(json_object_get(msg, "error"), "message"));
}

/* Sends a ping with id and checks that the very next message answers it:
 * proof that nothing else was written before. */
static void expect_ping_next(struct conn *c, int id)
{
	char line[128];
	json_t *msg;

	snprintf(line, sizeof(line), "{\"jsonrpc\":\"2.0\",\"id\":%d,\"method\":\"ping\"}", id);
	conn_send(c, line);
	msg = conn_recv(c);
	assert_int_equal(msg_id(msg), id);
	assert_true(json_is_object(json_object_get(msg, "result")));
	json_decref(msg);
}

/* initialize with version and the client's capabilities (JSON text);
 * returns the result (new reference). */
static json_t *initialize_caps(struct conn *c, const char *version, const char *caps)
{
	char line[512];
	json_t *msg;
	json_t *result;

	snprintf(line, sizeof(line),
	         "{\"jsonrpc\":\"2.0\",\"id\":0,\"method\":\"initialize\",\"params\":"
	         "{\"protocolVersion\":\"%s\",\"capabilities\":%s,"
	         "\"clientInfo\":{\"name\":\"test\",\"version\":\"1\"}}}",
	         version, caps);
	conn_send(c, line);
	msg = conn_recv(c);
	assert_int_equal(msg_id(msg), 0);
	result = json_incref(json_object_get(msg, "result"));
	assert_non_null(result);
	json_decref(msg);
	conn_send(c, "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}");
	return result;
}

static json_t *initialize(struct conn *c, const char *version)
{
	return initialize_caps(c, version, "{}");
}

static struct conn *conn_ready(const char *version)
{
	struct conn *c = conn_start();

	json_decref(initialize(c, version));
	return c;
}

static struct conn *conn_ready_caps(const char *version, const char *caps)
{
	struct conn *c = conn_start();

	json_decref(initialize_caps(c, version, caps));
	return c;
}

static void wait_for_count(const int *counter, int value)
{
	int i;

	for (i = 0; i < 500 && fake_count(counter) < value; i++)
		usleep(10000);
	assert_int_equal(fake_count(counter), value);
}

static int setup(void **state)
{
	(void)state;
	fake_reset();
	return 0;
}

/* ---- the pure layer ----------------------------------------------------- */

static enum mcp_msg_kind parse(const char *text, struct mcp_msg *msg)
{
	return mcp_jsonrpc_parse(text, strlen(text), msg);
}

static void test_jsonrpc_classify(void **state)
{
	struct mcp_msg m;

	(void)state;
	assert_int_equal(parse("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}", &m),
	                 MCP_MSG_REQUEST);
	assert_string_equal(m.method, "ping");
	assert_int_equal(json_integer_value(m.id), 1);
	assert_null(m.params);
	mcp_msg_clear(&m);

	assert_int_equal(
	    parse("{\"jsonrpc\":\"2.0\",\"id\":\"a\",\"method\":\"x\",\"params\":{}}", &m),
	    MCP_MSG_REQUEST);
	assert_string_equal(json_string_value(m.id), "a");
	assert_true(json_is_object(m.params));
	mcp_msg_clear(&m);

	assert_int_equal(parse("{\"jsonrpc\":\"2.0\",\"method\":\"notifications/x\"}", &m),
	                 MCP_MSG_NOTIFICATION);
	assert_null(m.id);
	mcp_msg_clear(&m);

	assert_int_equal(parse("{\"jsonrpc\":\"2.0\",\"id\":5,\"result\":{}}", &m),
	                 MCP_MSG_RESPONSE);
	assert_int_equal(json_integer_value(m.id), 5);
	assert_true(json_is_object(m.result));
	assert_null(m.rpc_error);
	assert_null(m.method);
	mcp_msg_clear(&m);
	assert_int_equal(parse("{\"jsonrpc\":\"2.0\",\"id\":\"elicit-1\",\"error\":"
	                       "{\"code\":-1,\"message\":\"no\"}}",
	                       &m),
	                 MCP_MSG_RESPONSE);
	assert_string_equal(json_string_value(m.id), "elicit-1");
	assert_null(m.result);
	assert_true(json_is_object(m.rpc_error));
	mcp_msg_clear(&m);
	/* malformed responses: still never answered, but carry no outcome */
	assert_int_equal(parse("{\"jsonrpc\":\"2.0\",\"id\":5,\"result\":{},\"error\":{}}", &m),
	                 MCP_MSG_RESPONSE);
	assert_null(m.result);
	assert_null(m.rpc_error);
	mcp_msg_clear(&m);
	assert_int_equal(parse("{\"id\":5,\"result\":{}}", &m), MCP_MSG_RESPONSE);
	assert_null(m.result);
	mcp_msg_clear(&m);
	assert_int_equal(parse("{\"jsonrpc\":\"2.0\",\"id\":5,\"error\":\"bad\"}", &m),
	                 MCP_MSG_RESPONSE);
	assert_null(m.rpc_error);
	mcp_msg_clear(&m);
	assert_int_equal(parse("{\"jsonrpc\":\"2.0\",\"id\":[5],\"result\":{}}", &m),
	                 MCP_MSG_RESPONSE);
	assert_null(m.id);
	assert_null(m.result);
	mcp_msg_clear(&m);
	/* a client's error about one of ours is never answered, whatever its id */
	assert_int_equal(parse("{\"jsonrpc\":\"2.0\",\"id\":null,\"error\":{}}", &m),
	                 MCP_MSG_RESPONSE);
	mcp_msg_clear(&m);

	assert_int_equal(parse("  \r", &m), MCP_MSG_EMPTY);
	mcp_msg_clear(&m);

	assert_int_equal(parse("{\"jsonrpc\":", &m), MCP_MSG_INVALID);
	assert_int_equal(m.error_code, MCP_ERR_PARSE);
	mcp_msg_clear(&m);
	assert_int_equal(parse("{\"a\":1,\"a\":2}", &m), MCP_MSG_INVALID);
	assert_int_equal(m.error_code, MCP_ERR_PARSE);
	mcp_msg_clear(&m);
	assert_int_equal(parse("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"} x", &m),
	                 MCP_MSG_INVALID);
	assert_int_equal(m.error_code, MCP_ERR_PARSE);
	mcp_msg_clear(&m);

	assert_int_equal(parse("[{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}]", &m),
	                 MCP_MSG_INVALID);
	assert_int_equal(m.error_code, MCP_ERR_INVALID_REQUEST);
	assert_non_null(strstr(m.error, "batches are not supported"));
	mcp_msg_clear(&m);
	assert_int_equal(parse("\"ping\"", &m), MCP_MSG_INVALID);
	assert_int_equal(m.error_code, MCP_ERR_INVALID_REQUEST);
	mcp_msg_clear(&m);

	assert_int_equal(parse("{\"jsonrpc\":\"1.0\",\"id\":3,\"method\":\"ping\"}", &m),
	                 MCP_MSG_INVALID);
	assert_int_equal(m.error_code, MCP_ERR_INVALID_REQUEST);
	assert_int_equal(json_integer_value(m.id), 3); /* the error still reaches id 3 */
	mcp_msg_clear(&m);
	assert_int_equal(parse("{\"jsonrpc\":\"2.0\",\"id\":null,\"method\":\"ping\"}", &m),
	                 MCP_MSG_INVALID);
	assert_null(m.id);
	mcp_msg_clear(&m);
	assert_int_equal(parse("{\"jsonrpc\":\"2.0\",\"id\":1.5,\"method\":\"ping\"}", &m),
	                 MCP_MSG_INVALID);
	mcp_msg_clear(&m);
	assert_int_equal(parse("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":7}", &m), MCP_MSG_INVALID);
	assert_int_equal(m.error_code, MCP_ERR_INVALID_REQUEST);
	mcp_msg_clear(&m);
	assert_int_equal(parse("{\"jsonrpc\":\"2.0\",\"id\":1}", &m), MCP_MSG_INVALID);
	mcp_msg_clear(&m);
	assert_int_equal(
	    parse("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"x\",\"params\":[1]}", &m),
	    MCP_MSG_INVALID);
	assert_int_equal(m.error_code, MCP_ERR_INVALID_PARAMS);
	mcp_msg_clear(&m);
}

static void test_jsonrpc_build(void **state)
{
	json_t *id = json_integer(4);
	json_t *msg;
	size_t len = 0;
	char *line;

	(void)state;
	msg = mcp_jsonrpc_error(id, MCP_ERR_METHOD_NOT_FOUND, "no \"x\"\nhere", NULL);
	line = mcp_jsonrpc_encode(msg, &len);
	assert_non_null(line);
	assert_int_equal(strlen(line), len);
	assert_string_equal(line, "{\"jsonrpc\":\"2.0\",\"id\":4,\"error\":{\"code\":-32601,"
	                          "\"message\":\"no \\\"x\\\"\\nhere\"}}\n");
	free(line);
	json_decref(msg);

	msg = mcp_jsonrpc_error(NULL, MCP_ERR_PARSE, "bad", json_pack("{s:i}", "k", 1));
	assert_true(json_is_null(json_object_get(msg, "id")));
	assert_int_equal(json_integer_value(json_object_get(
	                     json_object_get(json_object_get(msg, "error"), "data"), "k")),
	                 1);
	json_decref(msg);

	msg = mcp_jsonrpc_result(id, NULL);
	assert_true(json_is_object(json_object_get(msg, "result")));
	json_decref(msg);
	json_decref(id);

	assert_string_equal(mcp_negotiate_version("2025-11-25"), "2025-11-25");
	assert_string_equal(mcp_negotiate_version("2025-06-18"), "2025-06-18");
	assert_string_equal(mcp_negotiate_version("2025-03-26"), "2025-03-26");
	assert_string_equal(mcp_negotiate_version("2024-11-05"), MCP_PROTOCOL_LATEST);
	assert_string_equal(mcp_negotiate_version("2099-01-01"), MCP_PROTOCOL_LATEST);
	assert_string_equal(mcp_negotiate_version(NULL), MCP_PROTOCOL_LATEST);
}

struct collected {
	char lines[8][64];
	size_t n;
	size_t overflows;
};

static void collect_line(void *user, const char *line, size_t len)
{
	struct collected *col = user;

	assert_true(col->n < 8 && len < 64);
	memcpy(col->lines[col->n], line, len);
	col->lines[col->n][len] = '\0';
	col->n++;
}

static void collect_overflow(void *user, size_t max_bytes)
{
	struct collected *col = user;

	assert_int_equal(max_bytes, 8);
	col->overflows++;
}

static void test_line_reader(void **state)
{
	struct mcp_line_reader r;
	struct collected col;

	(void)state;
	memset(&col, 0, sizeof(col));
	mcp_lines_init(&r, 8);
	/* split across feeds, several per feed, an empty one */
	mcp_lines_feed(&r, "ab", 2, collect_line, collect_overflow, &col);
	mcp_lines_feed(&r, "c\nde\n\n12345678\n", 15, collect_line, collect_overflow, &col);
	assert_int_equal(col.n, 4);
	assert_string_equal(col.lines[0], "abc");
	assert_string_equal(col.lines[1], "de");
	assert_string_equal(col.lines[2], "");
	assert_string_equal(col.lines[3], "12345678"); /* exactly the limit: kept */
	assert_int_equal(col.overflows, 0);

	/* 9 bytes: reported once, skipped up to its newline, over several feeds */
	mcp_lines_feed(&r, "12345", 5, collect_line, collect_overflow, &col);
	mcp_lines_feed(&r, "6789", 4, collect_line, collect_overflow, &col);
	assert_int_equal(col.overflows, 1);
	assert_true(r.len <= 8);
	mcp_lines_feed(&r, "xxxxxxxxxxxxxxxxxxxx", 20, collect_line, collect_overflow, &col);
	mcp_lines_feed(&r, "yy\nok\n", 6, collect_line, collect_overflow, &col);
	assert_int_equal(col.overflows, 1);
	assert_int_equal(col.n, 5);
	assert_string_equal(col.lines[4], "ok");

	/* too long within one feed, with its newline in the same feed */
	mcp_lines_feed(&r, "123456789\nz\n", 12, collect_line, collect_overflow, &col);
	assert_int_equal(col.overflows, 2);
	assert_int_equal(col.n, 6);
	assert_string_equal(col.lines[5], "z");

	/* a last line without newline is handed over at the end */
	mcp_lines_feed(&r, "tail", 4, collect_line, collect_overflow, &col);
	assert_int_equal(col.n, 6);
	mcp_lines_finish(&r, collect_line, &col);
	assert_int_equal(col.n, 7);
	assert_string_equal(col.lines[6], "tail");
	mcp_lines_free(&r);
}

/* ---- over the pipes ----------------------------------------------------- */

static void test_initialize_versions(void **state)
{
	static const char *const asked[] = { "2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05",
		                             "1999-01-01" };
	static const char *const answered[] = { "2025-11-25", "2025-06-18", "2025-03-26",
		                                "2025-11-25", "2025-11-25" };
	struct conn *c;
	json_t *res;
	json_t *caps;
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(asked) / sizeof(asked[0]); i++) {
		c = conn_start();
		res = initialize(c, asked[i]);
		assert_string_equal(json_string_value(json_object_get(res, "protocolVersion")),
		                    answered[i]);
		assert_string_equal(
		    json_string_value(json_object_get(json_object_get(res, "serverInfo"), "name")),
		    "glassbox");
		assert_string_equal(json_string_value(json_object_get(
		                        json_object_get(res, "serverInfo"), "version")),
		                    GLASSBOX_VERSION);
		caps = json_object_get(res, "capabilities");
		assert_true(
		    json_is_false(json_object_get(json_object_get(caps, "tools"), "listChanged")));
		assert_true(json_is_object(json_object_get(caps, "resources")));
		assert_true(json_is_object(json_object_get(caps, "logging")));
		assert_null(json_object_get(caps, "prompts"));
		assert_true(strlen(json_string_value(json_object_get(res, "instructions"))) > 100);
		json_decref(res);

		/* one initialize per connection */
		conn_send(c, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\",\"params\":"
		             "{\"protocolVersion\":\"2025-11-25\"}}");
		res = conn_recv(c);
		assert_int_equal(error_code(res), MCP_ERR_INVALID_REQUEST);
		json_decref(res);
		conn_free(c);
	}
	assert_int_equal(fake_count(&fake.n_new), 0); /* no browser for any of this */
}

static void test_before_initialize(void **state)
{
	struct conn *c = conn_start();
	json_t *msg;

	(void)state;
	expect_ping_next(c, 1); /* ping is always served */
	conn_send(c, "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/list\"}");
	msg = conn_recv(c);
	assert_int_equal(msg_id(msg), 2);
	assert_int_equal(error_code(msg), MCP_ERR_INVALID_REQUEST);
	assert_non_null(strstr(error_message(msg), "send initialize first"));
	json_decref(msg);
	conn_send(c, "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"initialize\",\"params\":{}}");
	msg = conn_recv(c);
	assert_int_equal(error_code(msg), MCP_ERR_INVALID_PARAMS);
	assert_non_null(strstr(error_message(msg), "protocolVersion"));
	json_decref(msg);
	conn_free(c);
}

static json_t *tools_list(struct conn *c)
{
	json_t *msg;
	json_t *tools;

	conn_send(c, "{\"jsonrpc\":\"2.0\",\"id\":10,\"method\":\"tools/list\"}");
	msg = conn_recv(c);
	assert_int_equal(msg_id(msg), 10);
	tools = json_incref(json_object_get(json_object_get(msg, "result"), "tools"));
	assert_true(json_is_array(tools));
	assert_null(json_object_get(json_object_get(msg, "result"), "nextCursor"));
	json_decref(msg);
	return tools;
}

static json_t *find_tool(json_t *tools, const char *name)
{
	json_t *t;
	size_t i;

	json_array_foreach(tools, i, t)
	{
		if (!strcmp(json_string_value(json_object_get(t, "name")), name))
			return t;
	}
	fail_msg("tool %s not listed", name);
	return NULL;
}

static void test_tools_list_shapes(void **state)
{
	struct conn *c = conn_ready("2025-11-25");
	json_t *tools = tools_list(c);
	json_t *t;
	json_t *in;
	json_t *ann;
	json_t *props;
	json_t *out;
	const char *name;
	int ro;
	size_t i;

	size_t k = 0, n_core = 0;

	(void)state;
	/* no capability group is on: the core tools, in table order */
	for (i = 0; i < act_tool_count(); i++)
		n_core += act_tool_at(i)->caps == NULL;
	assert_int_equal(json_array_size(tools), n_core);
	json_array_foreach(tools, i, t)
	{
		name = json_string_value(json_object_get(t, "name"));
		while (act_tool_at(k)->caps)
			k++;
		assert_string_equal(name, act_tool_at(k++)->name);
		assert_non_null(json_string_value(json_object_get(t, "title")));
		assert_non_null(json_string_value(json_object_get(t, "description")));
		in = json_object_get(t, "inputSchema");
		assert_string_equal(json_string_value(json_object_get(in, "type")), "object");
		assert_true(json_is_object(json_object_get(in, "properties")));
		assert_true(json_is_false(json_object_get(in, "additionalProperties")));
		out = json_object_get(t, "outputSchema");
		assert_string_equal(json_string_value(json_object_get(out, "type")), "object");
		assert_int_equal(json_array_size(json_object_get(out, "required")), 3);
		ann = json_object_get(t, "annotations");
		ro = !strcmp(name, "browser_snapshot") ||
		     !strcmp(name, "browser_take_screenshot") ||
		     !strcmp(name, "browser_wait_for") || !strcmp(name, "browser_find") ||
		     !strcmp(name, "browser_console_messages") ||
		     !strcmp(name, "browser_network_requests") ||
		     !strcmp(name, "browser_network_request") || !strcmp(name, "browser_pdf_save");
		assert_int_equal(json_is_true(json_object_get(ann, "readOnlyHint")), ro);
		assert_int_equal(json_is_true(json_object_get(ann, "destructiveHint")), !ro);
		assert_true(json_is_false(json_object_get(ann, "idempotentHint")));
		assert_true(json_is_true(json_object_get(ann, "openWorldHint")));
		assert_non_null(json_string_value(json_object_get(ann, "title")));
	}

	in = json_object_get(find_tool(tools, "browser_click"), "inputSchema");
	assert_int_equal(json_array_size(json_object_get(in, "required")), 1);
	assert_string_equal(json_string_value(json_array_get(json_object_get(in, "required"), 0)),
	                    "target");
	props = json_object_get(in, "properties");
	assert_int_equal(json_array_size(json_object_get(json_object_get(props, "button"), "enum")),
	                 3);
	assert_string_equal(
	    json_string_value(json_object_get(
	        json_object_get(json_object_get(props, "modifiers"), "items"), "type")),
	    "string");
	assert_int_equal(
	    json_array_size(json_object_get(
	        json_object_get(json_object_get(props, "modifiers"), "items"), "enum")),
	    5);
	assert_string_equal(
	    json_string_value(json_object_get(json_object_get(props, "expect"), "type")), "object");

	props = json_object_get(
	    json_object_get(find_tool(tools, "browser_wait_for"), "inputSchema"), "properties");
	assert_int_equal(
	    json_integer_value(json_object_get(json_object_get(props, "time"), "minimum")), 0);
	assert_int_equal(
	    json_integer_value(json_object_get(json_object_get(props, "time"), "maximum")), 30);
	in = json_object_get(find_tool(tools, "browser_close"), "inputSchema");
	assert_null(json_object_get(in, "required"));
	json_decref(tools);
	conn_free(c);

	/* 2025-03-26 had no outputSchema or Tool.title */
	c = conn_ready("2025-03-26");
	tools = tools_list(c);
	json_array_foreach(tools, i, t)
	{
		assert_null(json_object_get(t, "outputSchema"));
		assert_null(json_object_get(t, "title"));
		assert_non_null(json_object_get(json_object_get(t, "annotations"), "title"));
	}
	json_decref(tools);
	conn_free(c);
}

static void test_bad_arguments_are_tool_errors(void **state)
{
	struct conn *c = conn_ready("2025-11-25");
	json_t *msg;
	json_t *res;
	json_t *sc;

	(void)state;
	conn_send(c, "{\"jsonrpc\":\"2.0\",\"id\":5,\"method\":\"tools/call\",\"params\":"
	             "{\"name\":\"browser_click\",\"arguments\":{\"target\":\"e5\","
	             "\"button\":\"center\",\"operation_id\":\"my-op\"}}}");
	msg = conn_recv(c);
	assert_int_equal(msg_id(msg), 5);
	res = json_object_get(msg, "result");
	assert_true(json_is_true(json_object_get(res, "isError")));
	assert_string_equal(json_string_value(json_object_get(
	                        json_array_get(json_object_get(res, "content"), 0), "text")),
	                    "### Error\nInvalid arguments for tool \"browser_click\": argument "
	                    "'button' must be one of left, right, middle");
	sc = json_object_get(res, "structuredContent");
	assert_true(json_is_false(json_object_get(sc, "ok")));
	assert_string_equal(json_string_value(json_object_get(sc, "tool")), "browser_click");
	assert_string_equal(json_string_value(json_object_get(sc, "operation_id")), "my-op");
	assert_string_equal(
	    json_string_value(json_object_get(json_object_get(sc, "error"), "code")),
	    "invalid_arguments");
	json_decref(msg);

	conn_send(c, "{\"jsonrpc\":\"2.0\",\"id\":6,\"method\":\"tools/call\",\"params\":"
	             "{\"name\":\"browser_click\"}}");
	msg = conn_recv(c);
	res = json_object_get(msg, "result");
	assert_true(json_is_true(json_object_get(res, "isError")));
	assert_non_null(strstr(json_string_value(json_object_get(
	                           json_array_get(json_object_get(res, "content"), 0), "text")),
	                       "argument 'target' is required: pass a ref from browser_snapshot"));
	/* Playwright MCP's words come first: what was expected, what came, where */
	assert_non_null(strstr(json_string_value(json_object_get(
	                           json_array_get(json_object_get(res, "content"), 0), "text")),
	                       "### Error\nInvalid arguments for tool \"browser_click\": Invalid "
	                       "input: expected string, received undefined\n  \u2192 at target\n"));
	/* a generated operation id still meets the output schema */
	assert_non_null(json_string_value(
	    json_object_get(json_object_get(res, "structuredContent"), "operation_id")));
	json_decref(msg);

	/* protocol-level mistakes are JSON-RPC errors */
	conn_send(c, "{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"tools/call\",\"params\":"
	             "{\"name\":\"browser_fly\",\"arguments\":{}}}");
	msg = conn_recv(c);
	assert_int_equal(msg_id(msg), 7);
	assert_int_equal(error_code(msg), MCP_ERR_INVALID_PARAMS);
	assert_non_null(strstr(error_message(msg), "unknown tool 'browser_fly'"));
	assert_non_null(strstr(error_message(msg), "tools/list"));
	json_decref(msg);
	conn_send(c, "{\"jsonrpc\":\"2.0\",\"id\":8,\"method\":\"tools/call\",\"params\":{}}");
	msg = conn_recv(c);
	assert_int_equal(error_code(msg), MCP_ERR_INVALID_PARAMS);
	json_decref(msg);
	conn_send(c, "{\"jsonrpc\":\"2.0\",\"id\":9,\"method\":\"tools/call\",\"params\":"
	             "{\"name\":\"browser_close\",\"arguments\":[1]}}");
	msg = conn_recv(c);
	assert_int_equal(error_code(msg), MCP_ERR_INVALID_PARAMS);
	json_decref(msg);

	conn_free(c);
	/* nothing reached a browser */
	assert_int_equal(fake_count(&fake.n_new), 0);
	assert_int_equal(fake_count(&fake.n_submit), 0);
}

static void test_protocol_errors(void **state)
{
	static const struct {
		const char *line;
		int code;
		int id; /* -1: null */
	} cases[] = {
		{ "{not json", MCP_ERR_PARSE, -1 },
		{ "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"", MCP_ERR_PARSE, -1 },
		{ "[{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}]", MCP_ERR_INVALID_REQUEST,
		  -1 },
		{ "[]", MCP_ERR_INVALID_REQUEST, -1 },
		{ "42", MCP_ERR_INVALID_REQUEST, -1 },
		{ "{\"jsonrpc\":\"1.0\",\"id\":3,\"method\":\"ping\"}", MCP_ERR_INVALID_REQUEST,
		  3 },
		{ "{\"id\":3,\"method\":\"ping\"}", MCP_ERR_INVALID_REQUEST, 3 },
		{ "{\"jsonrpc\":\"2.0\",\"id\":null,\"method\":\"ping\"}", MCP_ERR_INVALID_REQUEST,
		  -1 },
		{ "{\"jsonrpc\":\"2.0\",\"id\":4,\"method\":\"prompts/list\"}",
		  MCP_ERR_METHOD_NOT_FOUND, 4 },
		{ "{\"jsonrpc\":\"2.0\",\"id\":5,\"method\":\"ping\",\"params\":[]}",
		  MCP_ERR_INVALID_PARAMS, 5 },
		{ "{\"jsonrpc\":\"2.0\",\"id\":6,\"method\":\"logging/setLevel\",\"params\":"
		  "{\"level\":\"loud\"}}",
		  MCP_ERR_INVALID_PARAMS, 6 },
		{ "{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"resources/read\",\"params\":{}}",
		  MCP_ERR_INVALID_PARAMS, 7 },
	};
	struct conn *c = conn_ready("2025-11-25");
	json_t *msg;
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		conn_send(c, cases[i].line);
		msg = conn_recv(c);
		if (cases[i].id < 0)
			assert_true(json_is_null(json_object_get(msg, "id")));
		else
			assert_int_equal(msg_id(msg), cases[i].id);
		assert_int_equal(error_code(msg), cases[i].code);
		assert_true(strlen(error_message(msg)) > 10);
		assert_null(json_object_get(msg, "result"));
		json_decref(msg);
	}
	msg = NULL;
	conn_send(c, "{\"jsonrpc\":\"2.0\",\"id\":8,\"method\":\"logging/setLevel\",\"params\":"
	             "{\"level\":\"warning\"}}");
	msg = conn_recv(c);
	assert_true(json_is_object(json_object_get(msg, "result")));
	json_decref(msg);

	/* notifications, client responses and blank lines get no reply */
	conn_send(c, "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}");
	conn_send(c, "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/roots/list_changed\"}");
	conn_send(c, "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/cancelled\",\"params\":"
	             "{\"requestId\":12345}}");
	conn_send(c, "{\"jsonrpc\":\"2.0\",\"method\":\"tools/list\"}");
	conn_send(c, "{\"jsonrpc\":\"2.0\",\"method\":\"no/such\",\"params\":[1]}");
	conn_send(c, "{\"jsonrpc\":\"2.0\",\"id\":77,\"result\":{}}");
	conn_send(c, "{\"jsonrpc\":\"2.0\",\"id\":78,\"error\":{\"code\":1,\"message\":\"x\"}}");
	conn_send(c, "");
	conn_send(c, "\r");
	expect_ping_next(c, 99);
	conn_free(c);
}

static void test_oversized_line(void **state)
{
	struct conn *c = conn_ready("2025-11-25");
	const char *head = "{\"jsonrpc\":\"2.0\",\"id\":9,\"method\":\"ping\",\"params\":"
	                   "{\"_meta\":{\"pad\":\"";
	const char *tail = "\"}}}";
	size_t max = MCP_MAX_LINE_BYTES;
	char *big = malloc(max + 2);
	json_t *msg;

	(void)state;
	assert_non_null(big);
	/* one byte over the ceiling */
	memset(big, 'x', max + 1);
	big[max + 1] = '\n';
	conn_write(c, big, max + 2);
	msg = conn_recv(c);
	assert_true(json_is_null(json_object_get(msg, "id")));
	assert_int_equal(error_code(msg), MCP_ERR_INVALID_REQUEST);
	assert_non_null(strstr(error_message(msg), "message too large"));
	assert_int_equal(json_integer_value(json_object_get(
	                     json_object_get(json_object_get(msg, "error"), "data"), "max_bytes")),
	                 max);
	json_decref(msg);
	expect_ping_next(c, 10); /* the reader skipped to the next line */

	/* a valid request exactly at the ceiling is served */
	memcpy(big, head, strlen(head));
	memset(big + strlen(head), 'y', max - strlen(head) - strlen(tail));
	memcpy(big + max - strlen(tail), tail, strlen(tail));
	big[max] = '\n';
	conn_write(c, big, max + 1);
	msg = conn_recv(c);
	assert_int_equal(msg_id(msg), 9);
	assert_true(json_is_object(json_object_get(msg, "result")));
	json_decref(msg);
	free(big);
	conn_free(c);
}

static void test_call_progress_and_result(void **state)
{
	struct conn *c = conn_ready("2025-11-25");
	json_t *msg;
	json_t *params;
	json_t *sc;

	(void)state;
	conn_send(c,
	          "{\"jsonrpc\":\"2.0\",\"id\":20,\"method\":\"tools/call\",\"params\":"
	          "{\"name\":\"browser_navigate\",\"arguments\":{\"url\":\"https://example.com/\","
	          "\"operation_id\":\"nav-1\"},\"_meta\":{\"progressToken\":\"tok-1\"}}}");
	msg = conn_recv(c);
	assert_string_equal(json_string_value(json_object_get(msg, "method")),
	                    "notifications/progress");
	assert_null(json_object_get(msg, "id"));
	params = json_object_get(msg, "params");
	assert_string_equal(json_string_value(json_object_get(params, "progressToken")), "tok-1");
	assert_true(json_number_value(json_object_get(params, "progress")) == 1.0);
	assert_true(json_number_value(json_object_get(params, "total")) == 2.0);
	assert_string_equal(json_string_value(json_object_get(params, "message")), "loading");
	json_decref(msg);
	/* the repeated 1/2 is dropped: progress must increase */
	msg = conn_recv(c);
	params = json_object_get(msg, "params");
	assert_true(json_number_value(json_object_get(params, "progress")) == 2.0);
	assert_null(json_object_get(params, "message"));
	json_decref(msg);
	msg = conn_recv(c);
	assert_int_equal(msg_id(msg), 20);
	sc = json_object_get(json_object_get(msg, "result"), "structuredContent");
	assert_true(json_is_true(json_object_get(sc, "ok")));
	assert_string_equal(json_string_value(json_object_get(sc, "operation_id")), "nav-1");
	assert_string_equal(json_string_value(json_object_get(sc, "tool")), "browser_navigate");
	json_decref(msg);
	pthread_mutex_lock(&fake.lock);
	assert_string_equal(fake.last_operation_id, "nav-1");
	pthread_mutex_unlock(&fake.lock);

	/* no progressToken: no progress notifications; integer tokens work */
	conn_send(c,
	          "{\"jsonrpc\":\"2.0\",\"id\":21,\"method\":\"tools/call\",\"params\":"
	          "{\"name\":\"browser_navigate\",\"arguments\":{\"url\":\"https://a.test/\"}}}");
	msg = conn_recv(c);
	assert_int_equal(msg_id(msg), 21);
	assert_non_null(json_object_get(msg, "result"));
	json_decref(msg);
	conn_send(c, "{\"jsonrpc\":\"2.0\",\"id\":22,\"method\":\"tools/call\",\"params\":"
	             "{\"name\":\"browser_navigate\",\"arguments\":{\"url\":\"https://a.test/\"},"
	             "\"_meta\":{\"progressToken\":7}}}");
	msg = conn_recv(c);
	assert_int_equal(
	    json_integer_value(json_object_get(json_object_get(msg, "params"), "progressToken")),
	    7);
	json_decref(msg);
	json_decref(conn_recv(c));
	msg = conn_recv(c);
	assert_int_equal(msg_id(msg), 22);
	json_decref(msg);

	conn_free(c);
	/* one session for the connection, freed at the end */
	assert_int_equal(fake_count(&fake.n_new), 1);
	assert_int_equal(fake_count(&fake.n_free), 1);
}

static void test_cancellation(void **state)
{
	struct conn *c = conn_ready("2025-11-25");
	json_t *msg;

	(void)state;
	/* 30: running (blocks until cancelled); 31: queued behind it */
	conn_send(c, "{\"jsonrpc\":\"2.0\",\"id\":30,\"method\":\"tools/call\",\"params\":"
	             "{\"name\":\"browser_wait_for\",\"arguments\":{\"text\":\"never\"}}}");
	conn_send(c, "{\"jsonrpc\":\"2.0\",\"id\":31,\"method\":\"tools/call\",\"params\":"
	             "{\"name\":\"browser_click\",\"arguments\":{\"target\":\"e1\"}}}");
	/* the front answers while the worker is busy */
	expect_ping_next(c, 32);

	/* a duplicate id of a call in flight is refused */
	conn_send(c, "{\"jsonrpc\":\"2.0\",\"id\":30,\"method\":\"tools/call\",\"params\":"
	             "{\"name\":\"browser_snapshot\"}}");
	msg = conn_recv(c);
	assert_int_equal(msg_id(msg), 30);
	assert_int_equal(error_code(msg), MCP_ERR_INVALID_REQUEST);
	assert_non_null(strstr(error_message(msg), "already used"));
	json_decref(msg);

	conn_send(c, "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/cancelled\",\"params\":"
	             "{\"requestId\":31,\"reason\":\"changed my mind\"}}");
	conn_send(c, "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/cancelled\",\"params\":"
	             "{\"requestId\":30}}");
	/* a string id "30" is another request: nothing happens */
	conn_send(c, "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/cancelled\",\"params\":"
	             "{\"requestId\":\"30\"}}");
	wait_for_count(&fake.n_cancel, 2);
	wait_for_count(&fake.n_done, 2);
	pthread_mutex_lock(&fake.lock);
	assert_string_equal(fake.cancelled_tools, "browser_click browser_wait_for ");
	pthread_mutex_unlock(&fake.lock);
	expect_ping_next(c, 33);

	/* after EOF, nothing more was written: no response for 30 or 31 */
	assert_int_equal(conn_stop(c), 0);
	msg = conn_recv_ms(c, 1000);
	assert_null(msg);
	conn_free(c);
}

/* ---- elicitation: the server asks the client --------------------------- */

/* The text of a tool result message (the first content item). */
static const char *result_text(json_t *msg)
{
	return json_string_value(json_object_get(
	    json_array_get(json_object_get(json_object_get(msg, "result"), "content"), 0), "text"));
}

/* Sends tools/call browser_press_key {key} with id and returns the
 * elicitation/create request the worker sends (new reference). */
static json_t *call_and_expect_question(struct conn *c, int id, const char *key)
{
	char line[256];
	json_t *req;
	json_t *params;

	snprintf(line, sizeof(line),
	         "{\"jsonrpc\":\"2.0\",\"id\":%d,\"method\":\"tools/call\",\"params\":"
	         "{\"name\":\"browser_press_key\",\"arguments\":{\"key\":\"%s\"}}}",
	         id, key);
	conn_send(c, line);
	req = conn_recv(c);
	assert_string_equal(json_string_value(json_object_get(req, "method")),
	                    "elicitation/create");
	assert_true(json_is_string(json_object_get(req, "id")));
	params = json_object_get(req, "params");
	assert_string_equal(json_string_value(json_object_get(params, "message")),
	                    "Approve: click button \"Delete\"?");
	assert_string_equal(
	    json_string_value(json_object_get(
	        json_object_get(
	            json_object_get(json_object_get(params, "requestedSchema"), "properties"),
	            "approve"),
	        "type")),
	    "boolean");
	return req;
}

/* Answers the server's request req (borrowed) with body, the JSON text
 * after the id: "\"result\":{...}" or "\"error\":{...}". */
static void answer(struct conn *c, json_t *req, const char *body)
{
	char line[512];

	snprintf(line, sizeof(line), "{\"jsonrpc\":\"2.0\",\"id\":\"%s\",%s}",
	         json_string_value(json_object_get(req, "id")), body);
	conn_send(c, line);
}

/* Reads the response to tool call id and checks its text. */
static void expect_result_text(struct conn *c, int id, const char *text)
{
	json_t *msg = conn_recv(c);

	assert_int_equal(msg_id(msg), id);
	assert_string_equal(result_text(msg), text);
	json_decref(msg);
}

static void test_elicitation_round_trip(void **state)
{
	struct conn *c = conn_ready_caps("2025-11-25", "{\"elicitation\":{}}");
	json_t *req;
	json_t *req2;

	(void)state;
	req = call_and_expect_question(c, 60, "Enter");
	/* responses nobody waits for are ignored, and never answered; the
	 * front keeps serving while the worker waits */
	conn_send(c, "{\"jsonrpc\":\"2.0\",\"id\":\"elicit-999\",\"result\":"
	             "{\"action\":\"accept\",\"content\":{\"approve\":true}}}");
	conn_send(c, "{\"jsonrpc\":\"2.0\",\"id\":60,\"result\":{\"action\":\"accept\"}}");
	conn_send(c,
	          "{\"jsonrpc\":\"2.0\",\"id\":12345,\"error\":{\"code\":-1,\"message\":\"x\"}}");
	expect_ping_next(c, 61);

	answer(c, req, "\"result\":{\"action\":\"accept\",\"content\":{\"approve\":true}}");
	expect_result_text(c, 60, "action=accept approve=true by=test");
	/* the same answer again, late: ignored */
	answer(c, req, "\"result\":{\"action\":\"decline\"}");
	expect_ping_next(c, 62);

	/* each question has its own id */
	req2 = call_and_expect_question(c, 63, "Enter");
	assert_false(json_equal(json_object_get(req, "id"), json_object_get(req2, "id")));
	answer(c, req2, "\"result\":{\"action\":\"decline\"}");
	expect_result_text(c, 63, "action=decline approve=- by=test");
	json_decref(req);
	json_decref(req2);
	conn_free(c);
}

static void test_elicitation_needs_the_capability(void **state)
{
	static const struct {
		const char *version;
		const char *caps;
		int asks;
	} cases[] = {
		{ "2025-11-25", "{}", 0 },
		{ "2025-11-25", "{\"elicitation\":{\"url\":{}}}", 0 }, /* URL mode only */
		{ "2025-11-25", "{\"elicitation\":true}", 0 },
		{ "2025-03-26", "{\"elicitation\":{}}", 0 }, /* before elicitation existed */
		{ "2025-11-25", "{\"elicitation\":{\"form\":{},\"url\":{}}}", 1 },
		{ "2025-06-18", "{\"elicitation\":{}}", 1 },
	};
	struct conn *c;
	json_t *req;
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		c = conn_ready_caps(cases[i].version, cases[i].caps);
		if (!cases[i].asks) {
			conn_send(
			    c,
			    "{\"jsonrpc\":\"2.0\",\"id\":70,\"method\":\"tools/call\",\"params\":"
			    "{\"name\":\"browser_press_key\",\"arguments\":{\"key\":\"Enter\"}}}");
			expect_result_text(c, 70, "cannot ask");
		} else {
			req = call_and_expect_question(c, 70, "Enter");
			answer(c, req, "\"result\":{\"action\":\"cancel\"}");
			expect_result_text(c, 70, "action=cancel approve=- by=test");
			json_decref(req);
		}
		conn_free(c);
	}
}

static void test_elicitation_without_an_answer(void **state)
{
	static const char *const bad_answers[] = {
		"\"error\":{\"code\":-32601,\"message\":\"no elicitation here\"}",
		"\"result\":{\"action\":\"maybe\"}",
		"\"result\":{\"action\":\"accept\",\"content\":[true]}",
		"\"result\":\"accept\"",
		"\"result\":{},\"error\":{\"code\":1,\"message\":\"both\"}",
	};
	struct conn *c = conn_ready_caps("2025-11-25", "{\"elicitation\":{}}");
	json_t *req;
	json_t *msg;
	size_t i;

	(void)state;
	/* no answer in time: the question is withdrawn, the call goes on */
	req = call_and_expect_question(c, 80, "Short");
	msg = conn_recv(c);
	assert_string_equal(json_string_value(json_object_get(msg, "method")),
	                    "notifications/cancelled");
	assert_true(json_equal(json_object_get(json_object_get(msg, "params"), "requestId"),
	                       json_object_get(req, "id")));
	json_decref(msg);
	expect_result_text(c, 80, "no answer");
	answer(c, req, "\"result\":{\"action\":\"accept\",\"content\":{\"approve\":true}}");
	expect_ping_next(c, 81); /* the late answer was ignored */
	json_decref(req);

	/* an error, or a result that is not an ElicitResult, is no answer */
	for (i = 0; i < sizeof(bad_answers) / sizeof(bad_answers[0]); i++) {
		req = call_and_expect_question(c, 82, "Enter");
		answer(c, req, bad_answers[i]);
		expect_result_text(c, 82, "no answer");
		json_decref(req);
	}

	/* the tool call is cancelled: the question is withdrawn, no response */
	req = call_and_expect_question(c, 83, "Enter");
	conn_send(c, "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/cancelled\",\"params\":"
	             "{\"requestId\":83}}");
	msg = conn_recv(c);
	assert_string_equal(json_string_value(json_object_get(msg, "method")),
	                    "notifications/cancelled");
	assert_true(json_equal(json_object_get(json_object_get(msg, "params"), "requestId"),
	                       json_object_get(req, "id")));
	json_decref(msg);
	wait_for_count(&fake.n_done, 7);
	expect_ping_next(c, 84);
	json_decref(req);

	/* end of input: the waiting call is released at once and answered */
	req = call_and_expect_question(c, 85, "Enter");
	assert_int_equal(conn_stop(c), 0);
	expect_result_text(c, 85, "no answer");
	assert_null(conn_recv_ms(c, 500));
	json_decref(req);
	conn_free(c);
}

static void test_eof_waits_for_calls_in_flight(void **state)
{
	struct conn *c = conn_ready("2025-11-25");
	json_t *msg;

	(void)state;
	conn_send(c, "{\"jsonrpc\":\"2.0\",\"id\":40,\"method\":\"tools/call\",\"params\":"
	             "{\"name\":\"browser_wait_for\",\"arguments\":{\"time\":0.3}}}");
	conn_send(c, "{\"jsonrpc\":\"2.0\",\"id\":41,\"method\":\"tools/call\",\"params\":"
	             "{\"name\":\"browser_close\"}}");
	assert_int_equal(conn_stop(c), 0); /* returns only after both completed */
	assert_int_equal(fake_count(&fake.n_done), 2);
	assert_int_equal(fake_count(&fake.n_free), 1);
	msg = conn_recv(c);
	assert_int_equal(msg_id(msg), 40);
	assert_true(json_is_true(json_object_get(
	    json_object_get(json_object_get(msg, "result"), "structuredContent"), "ok")));
	json_decref(msg);
	msg = conn_recv(c);
	assert_int_equal(msg_id(msg), 41);
	json_decref(msg);
	assert_null(conn_recv_ms(c, 200));
	conn_free(c);
}

static void test_old_client_result_shape(void **state)
{
	struct conn *c = conn_ready("2025-03-26");
	json_t *msg;
	json_t *content;
	json_t *item;
	size_t i;
	int saw_json = 0;
	int saw_link = 0;

	(void)state;
	conn_send(c, "{\"jsonrpc\":\"2.0\",\"id\":50,\"method\":\"tools/call\",\"params\":"
	             "{\"name\":\"browser_take_screenshot\",\"arguments\":{}}}");
	msg = conn_recv(c);
	assert_null(json_object_get(json_object_get(msg, "result"), "structuredContent"));
	content = json_object_get(json_object_get(msg, "result"), "content");
	json_array_foreach(content, i, item)
	{
		const char *type = json_string_value(json_object_get(item, "type"));
		const char *text = json_string_value(json_object_get(item, "text"));

		assert_string_not_equal(type, "resource_link");
		if (text && strstr(text, "\"operation_id\":\"op-shot\""))
			saw_json = 1;
		if (text && strstr(text, ARTIFACT_OK) && strstr(text, "resources/read"))
			saw_link = 1;
	}
	assert_true(saw_json);
	assert_true(saw_link);
	json_decref(msg);
	conn_free(c);

	/* the current revision gets them as they are */
	c = conn_ready("2025-11-25");
	conn_send(c, "{\"jsonrpc\":\"2.0\",\"id\":51,\"method\":\"tools/call\",\"params\":"
	             "{\"name\":\"browser_take_screenshot\",\"arguments\":{}}}");
	msg = conn_recv(c);
	assert_non_null(json_object_get(json_object_get(msg, "result"), "structuredContent"));
	content = json_object_get(json_object_get(msg, "result"), "content");
	assert_int_equal(json_array_size(content), 3);
	assert_string_equal(json_string_value(json_object_get(json_array_get(content, 2), "type")),
	                    "resource_link");
	json_decref(msg);
	conn_free(c);
}

static void test_resources(void **state)
{
	struct conn *c = conn_ready("2025-11-25");
	unsigned char bin[64];
	size_t bin_len = 0;
	json_t *msg;
	json_t *item;
	const char *b64;

	(void)state;
	conn_send(c, "{\"jsonrpc\":\"2.0\",\"id\":60,\"method\":\"resources/read\",\"params\":"
	             "{\"uri\":\"" ARTIFACT_OK "\"}}");
	msg = conn_recv(c);
	assert_int_equal(msg_id(msg), 60);
	item = json_array_get(json_object_get(json_object_get(msg, "result"), "contents"), 0);
	assert_string_equal(json_string_value(json_object_get(item, "uri")), ARTIFACT_OK);
	assert_string_equal(json_string_value(json_object_get(item, "mimeType")), "image/png");
	b64 = json_string_value(json_object_get(item, "blob"));
	assert_non_null(b64);
	assert_int_equal(sodium_base642bin(bin, sizeof(bin), b64, strlen(b64), NULL, &bin_len, NULL,
	                                   sodium_base64_VARIANT_ORIGINAL),
	                 0);
	assert_int_equal(bin_len, sizeof(fake_png));
	assert_memory_equal(bin, fake_png, sizeof(fake_png));
	json_decref(msg);

	conn_send(c, "{\"jsonrpc\":\"2.0\",\"id\":61,\"method\":\"resources/read\",\"params\":"
	             "{\"uri\":\"glassbox://artifact/"
	             "bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb\"}}");
	msg = conn_recv(c);
	assert_int_equal(error_code(msg), MCP_ERR_RESOURCE_NOT_FOUND);
	assert_non_null(strstr(error_message(msg), "no artifact with that sha256"));
	json_decref(msg);
	conn_send(c, "{\"jsonrpc\":\"2.0\",\"id\":62,\"method\":\"resources/read\",\"params\":"
	             "{\"uri\":\"file:///etc/passwd\"}}");
	msg = conn_recv(c);
	assert_int_equal(error_code(msg), MCP_ERR_RESOURCE_NOT_FOUND);
	assert_non_null(strstr(error_message(msg), "glassbox://artifact/<sha256>"));
	assert_string_equal(json_string_value(json_object_get(
	                        json_object_get(json_object_get(msg, "error"), "data"), "uri")),
	                    "file:///etc/passwd");
	json_decref(msg);

	conn_send(c, "{\"jsonrpc\":\"2.0\",\"id\":63,\"method\":\"resources/list\"}");
	msg = conn_recv(c);
	assert_true(json_is_array(json_object_get(json_object_get(msg, "result"), "resources")));
	json_decref(msg);
	conn_send(c, "{\"jsonrpc\":\"2.0\",\"id\":64,\"method\":\"resources/templates/list\"}");
	msg = conn_recv(c);
	item =
	    json_array_get(json_object_get(json_object_get(msg, "result"), "resourceTemplates"), 0);
	assert_string_equal(json_string_value(json_object_get(item, "uriTemplate")),
	                    "glassbox://artifact/{sha256}");
	json_decref(msg);
	conn_free(c);
}

static void test_session_failure_is_a_tool_error(void **state)
{
	struct conn *c = conn_ready("2025-11-25");
	json_t *msg;
	json_t *res;

	(void)state;
	pthread_mutex_lock(&fake.lock);
	fake.fail_new = 1;
	pthread_mutex_unlock(&fake.lock);
	conn_send(c, "{\"jsonrpc\":\"2.0\",\"id\":70,\"method\":\"tools/call\",\"params\":"
	             "{\"name\":\"browser_snapshot\"}}");
	msg = conn_recv(c);
	res = json_object_get(msg, "result");
	assert_true(json_is_true(json_object_get(res, "isError")));
	assert_non_null(
	    strstr(json_string_value(
	               json_object_get(json_array_get(json_object_get(res, "content"), 0), "text")),
	           "could not start the browser session: data dir /nonexistent/test-data is not "
	           "writable"));
	json_decref(msg);

	/* the next call tries again */
	pthread_mutex_lock(&fake.lock);
	fake.fail_new = 0;
	pthread_mutex_unlock(&fake.lock);
	conn_send(c, "{\"jsonrpc\":\"2.0\",\"id\":71,\"method\":\"tools/call\",\"params\":"
	             "{\"name\":\"browser_snapshot\",\"arguments\":{}}}");
	msg = conn_recv(c);
	assert_int_equal(msg_id(msg), 71);
	assert_null(json_object_get(json_object_get(msg, "result"), "isError"));
	json_decref(msg);
	conn_free(c);
	assert_int_equal(fake_count(&fake.n_new), 2);
}

static void test_client_stops_reading(void **state)
{
	struct conn *c = conn_ready("2025-11-25");
	int i;

	(void)state;
	/* the client closes its end of our output: writes fail with EPIPE, the
	 * process gets no SIGPIPE, and the server reads on until EOF */
	close(c->from_srv);
	c->from_srv = open("/dev/null", 0);
	for (i = 0; i < 20; i++)
		conn_send(c, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}");
	conn_send(c, "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/call\",\"params\":"
	             "{\"name\":\"browser_close\"}}");
	assert_int_equal(conn_stop(c), 0);
	assert_int_equal(fake_count(&fake.n_done), 1);
	conn_free(c);
}

static void test_bad_serve_arguments(void **state)
{
	(void)state;
	assert_int_equal(mcp_stdio_serve(NULL, 0, 1), -EINVAL);
	assert_int_equal(mcp_stdio_serve(&test_cfg, -1, 1), -EINVAL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_jsonrpc_classify),
		cmocka_unit_test(test_jsonrpc_build),
		cmocka_unit_test(test_line_reader),
		cmocka_unit_test_setup(test_initialize_versions, setup),
		cmocka_unit_test_setup(test_before_initialize, setup),
		cmocka_unit_test_setup(test_tools_list_shapes, setup),
		cmocka_unit_test_setup(test_bad_arguments_are_tool_errors, setup),
		cmocka_unit_test_setup(test_protocol_errors, setup),
		cmocka_unit_test_setup(test_oversized_line, setup),
		cmocka_unit_test_setup(test_call_progress_and_result, setup),
		cmocka_unit_test_setup(test_cancellation, setup),
		cmocka_unit_test_setup(test_eof_waits_for_calls_in_flight, setup),
		cmocka_unit_test_setup(test_elicitation_round_trip, setup),
		cmocka_unit_test_setup(test_elicitation_needs_the_capability, setup),
		cmocka_unit_test_setup(test_elicitation_without_an_answer, setup),
		cmocka_unit_test_setup(test_old_client_result_shape, setup),
		cmocka_unit_test_setup(test_resources, setup),
		cmocka_unit_test_setup(test_session_failure_is_a_tool_error, setup),
		cmocka_unit_test_setup(test_client_stops_reading, setup),
		cmocka_unit_test_setup(test_bad_serve_arguments, setup),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

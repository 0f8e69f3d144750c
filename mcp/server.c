/*
 * server.c - MCP for one client connection: lifecycle, method dispatch,
 * and tool calls handed to an act_session. Transport-neutral: a transport
 * feeds it lines and gives it an emit function.
 *
 * Design note
 * - Owns: the connection's state (new -> initialized -> ready), the
 *   negotiated protocol version, the act_session (created on the first
 *   tool call or artifact read, freed last) and the tool calls in flight.
 * - Threads: the front (the transport's reader) runs every handler here.
 *   It answers initialize, ping, tools/list, the resources methods and logging
 *   itself and never waits on a browser: tools/call is queued with
 *   act_session_submit() and answered later from the session's worker
 *   thread, in on_call_done(); progress goes out from on_call_progress()
 *   on the same worker. emit is thread-safe and writes whole messages.
 * - Invariants: a call is in srv->inflight from submission until its
 *   response has been emitted, so an empty list means every response is
 *   out (mcp_server_drain). A cancelled call gets no response. Progress is
 *   sent only for a call in flight, only with increasing values. Nothing
 *   a worker touches is shared with the front except under srv->lock: the
 *   id, arguments and progress token of a call are private copies.
 * - Lifetimes: an in-flight entry is reference-counted: one reference for
 *   the list (dropped after the response), one for each front-side user
 *   (submission, cancellation); the last one frees it.
 * - Elicitation: when the client declared it (form mode, 2025-06-18 and
 *   later), calls carry act_call.elicit. The worker sends an
 *   elicitation/create request with an id of the server's ("elicit-N"),
 *   registered in its in-flight entry before it is written, and waits on
 *   srv->answered; the front routes each incoming response to the entry
 *   waiting for its id (unknown ids are ignored). A cancelled call and the
 *   end of input (mcp_server_drain) wake the waiter too; a waiter that
 *   gives up tells the client with notifications/cancelled.
 * - Logs (stderr) carry methods, tool names and ids, never arguments.
 */
#include "mcp/mcp-private.h"

#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <sodium.h>
#include <stdarg.h>
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "actions/actions.h"
#include "common/log.h"
#include "common/util.h"

#define MOD "mcp"

/* Artifacts larger than this are not sent inline by resources/read. */
#define MCP_MAX_ARTIFACT_BYTES (64u * 1024u * 1024u)

#define ARTIFACT_URI_PREFIX "glassbox://artifact/"
#define EVIDENCE_URI_PREFIX "glassbox://evidence/"

static const char instructions[] =
    "glassbox runs each browser tool as one verified operation in an isolated Chromium. "
    "Start with browser_navigate: its answer, like every action's, carries the page snapshot "
    "with element refs such as e5 (or only what changed, or none, as the server's "
    "snapshot mode says); pass a ref as `target` to browser_click, browser_type, "
    "browser_select_option or browser_hover. A ref from any answer works while its element "
    "is on the page; browser_snapshot shows the whole page again. Every "
    "result carries structuredContent: check `ok`, `verdicts`, `navigated` and "
    "`dialog_open`; pass `expect` (url, urlContains, title, text, textGone, value, response) "
    "to have the outcome checked for you. State-changing results link an evidence "
    "screenshot (glassbox://artifact/<sha256>) that resources/read returns. To retry a call "
    "whose outcome you did not see, send the same operation_id: a recorded operation is not "
    "run twice. High-impact actions (delete, pay, send, publish, ...) are held: the result is "
    "approval_required with an approval id; a person decides outside this conversation, then "
    "repeat the same call with `approval` set to that id. Nothing on the page can approve. "
    "Errors say what to do next, e.g. take a new snapshot or handle the dialog. ";

enum srv_state {
	SRV_NEW,         /* only initialize and ping are served */
	SRV_INITIALIZED, /* initialize answered */
	SRV_READY,       /* notifications/initialized received */
};

struct inflight {
	struct act_call call; /* handed to the session; call.user = this */
	struct mcp_server *srv;
	json_t *id;             /* private copy of the request id */
	json_t *args;           /* private copy; call.args and operation_id point in */
	json_t *progress_token; /* private copy, or NULL */
	double last_progress;   /* worker thread only */
	int sent_progress;      /* worker thread only */
	int refs;               /* {srv->lock} */
	int cancelled;          /* {srv->lock} the client cancelled: no response */
	int done;               /* {srv->lock} on_call_done has started */
	/* the elicitation/create the worker waits on, if any (elicit_call) */
	json_t *elicit_id;     /* {srv->lock} its id while waiting, else NULL */
	int elicit_answered;   /* {srv->lock} the client's response came */
	json_t *elicit_result; /* {srv->lock} its result (a private copy), or NULL
	                           for an error or a malformed response */
	struct inflight *next; /* {srv->lock} */
};

struct mcp_server {
	const struct act_config *cfg; /* borrowed until mcp_server_free */
	mcp_emit_fn emit;
	void *emit_user;
	/* front thread only */
	enum srv_state state;
	json_t *tools_list; /* cached tools/list result */
	unsigned caps;      /* capability groups on (immutable; actions/caps.c) */
	/* no outputSchema in tools/list and no structuredContent in results
	 * (act_config.no_structured_content or the policy's
	 * "structured_content": false; immutable) */
	int plain_results;
	struct act_session *session; /* NULL until first needed */
	char log_level[16];          /* logging/setLevel; nothing is sent as notifications */
	/* set by the front in initialize, before any call is submitted;
	 * read-only afterwards (workers read it) */
	char version[16];
	char client_name[64]; /* clientInfo.name, printable; "" if none */
	int client_elicits;   /* the client takes form elicitation requests */
	pthread_mutex_t lock;
	pthread_cond_t idle;         /* broadcast when inflight becomes empty */
	pthread_cond_t answered;     /* (CLOCK_MONOTONIC) broadcast when a response
	                                arrives, a call is cancelled or input ends */
	struct inflight *inflight;   /* {lock} */
	unsigned long requests_sent; /* {lock} numbers the server's requests */
	int input_closed;            /* {lock} no more messages will be read */
};

/* ---- small helpers ------------------------------------------------------ */

/* Whether s is valid UTF-8 (what a JSON string must be). */
static int utf8_valid(const char *s)
{
	json_t *probe = json_string(s);
	int ok = probe != NULL;

	json_decref(probe);
	return ok;
}

/* Emits msg (stolen) through the transport; related (borrowed, may be
 * NULL) is the id of the client's request it belongs to. */
static void emit_msg(struct mcp_server *srv, json_t *related, json_t *msg)
{
	if (!msg)
		return;
	if (srv->emit(srv->emit_user, msg, related) < 0)
		GB_LOGD(MOD, "a message could not be written: the client's output is gone");
	json_decref(msg);
}

/* Answers request id (borrowed) with result (stolen). */
static void reply_result(struct mcp_server *srv, json_t *id, json_t *result)
{
	emit_msg(srv, id, mcp_jsonrpc_result(id, result));
}

/* Answers request id (borrowed; NULL = null) with an error; data stolen. */
static void reply_error_data(struct mcp_server *srv, json_t *id, int code, json_t *data,
                             const char *fmt, ...) __attribute__((format(printf, 5, 6)));
static void reply_error_data(struct mcp_server *srv, json_t *id, int code, json_t *data,
                             const char *fmt, ...)
{
	char message[640];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(message, sizeof(message), fmt, ap);
	va_end(ap);
	if (!utf8_valid(message))
		mcp_ascii_only(message);
	emit_msg(srv, id, mcp_jsonrpc_error(id, code, message, data));
}

#define reply_error(srv, id, code, ...) reply_error_data(srv, id, code, NULL, __VA_ARGS__)

/* A printable, bounded copy of client-supplied text, for messages/logs. */
static void printable(const char *s, char *buf, size_t buflen)
{
	snprintf(buf, buflen, "%s", s ? s : "");
	mcp_ascii_only(buf);
}

/* The id as text for logs and messages. */
static void id_text(json_t *id, char *buf, size_t buflen)
{
	if (json_is_integer(id))
		snprintf(buf, buflen, "%" JSON_INTEGER_FORMAT, json_integer_value(id));
	else if (json_is_string(id))
		printable(json_string_value(id), buf, buflen);
	else
		snprintf(buf, buflen, "null");
}

/* Whether revision version is than or newer (dates compare as strings). */
static int version_at_least(const char *version, const char *than)
{
	return strcmp(version, than) >= 0;
}

/* A CallToolResult for a call that did not reach the browser: isError,
 * the message under "### Error" (Playwright MCP's layout) as text, and
 * structuredContent that meets the output
 * schema. args borrowed (its operation_id is reused when it has one).
 * New reference. */
static json_t *tool_error_result(const struct act_def *def, json_t *args, const char *code,
                                 const char *message)
{
	json_t *op = json_object_get(args, "operation_id");
	char safe[640];
	char shown[1400];
	char gen[40];
	json_t *sc;

	/* a message cut short by a buffer may end inside a UTF-8 sequence */
	if (!utf8_valid(message)) {
		printable(message, safe, sizeof(safe));
		message = safe;
	}
	if (!json_is_string(op)) {
		memcpy(gen, "op-", 3);
		gb_random_hex(gen + 3, 8);
		op = json_string(gen);
	} else {
		json_incref(op);
	}
	sc = json_pack("{s:o, s:s, s:b, s:{s:s, s:s}}", "operation_id", op, "tool", def->name, "ok",
	               0, "error", "code", code, "message", message);
	snprintf(shown, sizeof(shown), "### Error\n%s", message);
	return json_pack("{s:[{s:s, s:s}], s:o, s:b}", "content", "type", "text", "text", shown,
	                 "structuredContent", sc ? sc : json_object(), "isError", 1);
}

/* Whether content (an array) already has a text item equal to text. */
static int has_text_item(json_t *content, const char *text)
{
	json_t *item;
	size_t i;

	json_array_foreach(content, i, item)
	{
		if (json_is_string(json_object_get(item, "text")) &&
		    !strcmp(json_string_value(json_object_get(item, "text")), text))
			return 1;
	}
	return 0;
}

/* Shapes a CallToolResult (borrowed, changed in place) for the client's
 * protocol revision: content is always an array; before 2025-06-18 there
 * were no resource_link items and no structuredContent, so links become
 * text and the structured result is sent as JSON text. */
static void shape_result(json_t *result, const char *version)
{
	json_t *content = json_object_get(result, "content");
	const char *uri;
	const char *mime;
	json_t *sc;
	json_t *item;
	char line[512];
	char *text;
	size_t i;

	if (!json_is_array(content)) {
		content = json_array();
		json_object_set_new(result, "content", content);
	}
	if (version_at_least(version, "2025-06-18"))
		return;
	json_array_foreach(content, i, item)
	{
		if (!json_is_string(json_object_get(item, "type")) ||
		    strcmp(json_string_value(json_object_get(item, "type")), "resource_link") != 0)
			continue;
		uri = json_string_value(json_object_get(item, "uri"));
		mime = json_string_value(json_object_get(item, "mimeType"));
		snprintf(line, sizeof(line), "evidence: %s (%s; read it with resources/read)",
		         uri ? uri : "?", mime ? mime : "?");
		json_array_set_new(content, i,
		                   json_pack("{s:s, s:s}", "type", "text", "text", line));
	}
	sc = json_object_get(result, "structuredContent");
	if (sc) {
		text = json_dumps(sc, JSON_COMPACT);
		if (text && !has_text_item(content, text))
			json_array_append_new(
			    content, json_pack("{s:s, s:s}", "type", "text", "text", text));
		free(text);
		json_object_del(result, "structuredContent");
	}
}

/* Answers tools/call request id (borrowed) with a CallToolResult
 * (stolen), shaped for the client's revision and, when the server was
 * asked for plain results, without its structuredContent (tools/list then
 * declares no outputSchema either, so no tool promises one). */
static void reply_tool_result(struct mcp_server *srv, json_t *id, json_t *result)
{
	if (srv->plain_results)
		json_object_del(result, "structuredContent");
	shape_result(result, srv->version);
	reply_result(srv, id, result);
}

/* ---- the session -------------------------------------------------------- */

/* Creates the act_session on first use. Returns 0, or -1 with a reason in
 * err. Front thread only. */
static int ensure_session(struct mcp_server *srv, char *err, size_t errlen)
{
	int rc = 0;

	if (srv->session)
		goto out;
	err[0] = '\0';
	rc = act_session_new(srv->cfg, &srv->session, err, errlen);
	if (rc != 0) {
		srv->session = NULL;
		if (!err[0])
			snprintf(err, errlen, "act_session_new failed (%d)", rc);
		GB_LOGE(MOD, "could not create the browser session: %s", err);
		rc = -1;
	}
out:
	return rc;
}

/* See mcp-private.h. */
struct act_session *mcp_server_session(struct mcp_server *srv, enum mcp_session_use use, char *err,
                                       size_t errlen)
{
	if (use == MCP_SESSION_IF_ANY)
		return srv->session;
	return ensure_session(srv, err, errlen) == 0 ? srv->session : NULL;
}

/* ---- calls in flight ---------------------------------------------------- */

/* The call in flight with request id id (borrowed), or NULL; 5 and "5"
 * are different ids. */
static struct inflight *find_inflight_locked(struct mcp_server *srv, json_t *id)
{
	struct inflight *inf;

	/* a call that is done (its response is being written) no longer holds
	 * its id: the client may reuse it as soon as it has the response */
	for (inf = srv->inflight; inf; inf = inf->next) {
		if (!inf->done && json_equal(inf->id, id))
			return inf;
	}
	return NULL;
}

/* Takes inf out of the list (its reference is the caller's to drop) and
 * wakes mcp_server_drain() when the list becomes empty. */
static void unlink_inflight_locked(struct mcp_server *srv, struct inflight *inf)
{
	struct inflight **pp;

	for (pp = &srv->inflight; *pp; pp = &(*pp)->next) {
		if (*pp == inf) {
			*pp = inf->next;
			inf->next = NULL;
			break;
		}
	}
	if (!srv->inflight)
		pthread_cond_broadcast(&srv->idle);
}

/* Drops one reference; the last one frees the entry. Any thread. */
static void inflight_unref(struct inflight *inf)
{
	struct mcp_server *srv = inf->srv;
	int left;

	pthread_mutex_lock(&srv->lock);
	left = --inf->refs;
	pthread_mutex_unlock(&srv->lock);
	if (left > 0)
		return;
	json_decref(inf->id);
	json_decref(inf->args);
	json_decref(inf->progress_token);
	json_decref(inf->elicit_id);
	json_decref(inf->elicit_result);
	free(inf);
}

/* act_call.on_progress: notifications/progress for the call's token.
 * Worker thread. */
static void on_call_progress(struct act_call *call, double progress, double total,
                             const char *message)
{
	struct inflight *inf = call->user;
	struct mcp_server *srv = inf->srv;
	json_t *params;
	json_t *msg_text;
	int live;

	if (!inf->progress_token || !isfinite(progress))
		return;
	if (inf->sent_progress && !(progress > inf->last_progress))
		return; /* MCP: progress must increase */
	pthread_mutex_lock(&srv->lock);
	live = !inf->cancelled && !inf->done;
	pthread_mutex_unlock(&srv->lock);
	if (!live)
		return;
	inf->sent_progress = 1;
	inf->last_progress = progress;
	params = json_object();
	json_object_set(params, "progressToken", inf->progress_token);
	json_object_set_new(params, "progress", json_real(progress));
	if (isfinite(total) && total > 0)
		json_object_set_new(params, "total", json_real(total));
	if (message) {
		msg_text = json_string(message);
		if (msg_text)
			json_object_set_new(params, "message", msg_text);
	}
	emit_msg(srv, inf->id, mcp_jsonrpc_notification("notifications/progress", params));
}

/* Whether result (borrowed, from the client) is an ElicitResult we can
 * use: an object whose action is accept, decline or cancel, and whose
 * content, when present and not null, is an object. */
static int elicit_result_valid(json_t *result)
{
	const char *action = json_string_value(json_object_get(result, "action"));
	json_t *content = json_object_get(result, "content");

	if (!json_is_object(result) || !action)
		return 0;
	if (strcmp(action, "accept") != 0 && strcmp(action, "decline") != 0 &&
	    strcmp(action, "cancel") != 0)
		return 0;
	return !content || json_is_null(content) || json_is_object(content);
}

/* act_call.elicit (see actions.h): sends elicitation/create with a new id
 * of ours, then waits on srv->answered until handle_response() hands over
 * the client's answer, timeout_ms passes, the call is cancelled or input
 * ends. The id is registered before the request is written, so an answer
 * cannot arrive unclaimed. Worker thread. */
/* 1 when a is earlier than b. */
static int ts_before(const struct timespec *a, const struct timespec *b)
{
	return a->tv_sec < b->tv_sec || (a->tv_sec == b->tv_sec && a->tv_nsec < b->tv_nsec);
}

static int elicit_call(struct act_call *call, const char *message, json_t *requested_schema,
                       int timeout_ms, json_t **response)
{
	struct inflight *inf = call->user;
	struct mcp_server *srv = inf->srv;
	struct timespec deadline;
	json_t *request = NULL;
	json_t *params = NULL;
	json_t *text = NULL;
	json_t *answer = NULL;
	json_t *id = NULL;
	const char *why = NULL;
	char idbuf[48];
	char *safe = NULL;
	int answered = 0;
	int withdraw = 1;
	int rc = -1;

	*response = NULL;
	if (!message || !json_is_object(requested_schema) || timeout_ms <= 0)
		goto out;
	text = json_string(message);
	if (!text) {
		/* not valid UTF-8: show it as printable ASCII rather than not at all */
		safe = strdup(message);
		if (!safe)
			goto out;
		mcp_ascii_only(safe);
		text = json_string(safe);
	}
	params = json_pack("{s:o, s:O}", "message", text, "requestedSchema", requested_schema);
	text = NULL; /* stolen by json_pack, even when it fails */
	if (!params)
		goto out;
	deadline = gb_deadline_in(CLOCK_MONOTONIC, timeout_ms);

	pthread_mutex_lock(&srv->lock);
	if (srv->input_closed || inf->cancelled || inf->elicit_id) {
		pthread_mutex_unlock(&srv->lock);
		goto out;
	}
	snprintf(idbuf, sizeof(idbuf), "elicit-%lu", ++srv->requests_sent);
	inf->elicit_id = json_string(idbuf);
	inf->elicit_answered = 0;
	pthread_mutex_unlock(&srv->lock);
	id = json_string(idbuf);

	GB_LOGI(MOD, "%s: asking the client (elicitation %s)", call->def->name, idbuf);
	request = mcp_jsonrpc_request(id, "elicitation/create", params);
	params = NULL; /* stolen */
	if (!request || srv->emit(srv->emit_user, request, inf->id) < 0) {
		why = "the request could not be written";
		withdraw = 0;
	}

	pthread_mutex_lock(&srv->lock);
	while (!why && !inf->elicit_answered) {
		struct timespec slice = gb_deadline_in(CLOCK_MONOTONIC, 50);
		int last = !call->while_waiting || !ts_before(&slice, &deadline);

		if (inf->cancelled) {
			why = "the tool call was cancelled";
		} else if (srv->input_closed) {
			why = "the client closed the connection";
			withdraw = 0;
		} else if (pthread_cond_timedwait(&srv->answered, &srv->lock,
		                                  last ? &deadline : &slice) == ETIMEDOUT &&
		           !inf->elicit_answered) {
			if (last) {
				why = "no answer in time";
			} else {
				pthread_mutex_unlock(&srv->lock);
				call->while_waiting(call);
				pthread_mutex_lock(&srv->lock);
			}
		}
	}
	answered = inf->elicit_answered;
	answer = inf->elicit_result;
	inf->elicit_result = NULL;
	json_decref(inf->elicit_id);
	inf->elicit_id = NULL;
	inf->elicit_answered = 0;
	pthread_mutex_unlock(&srv->lock);

	if (!answered) {
		GB_LOGI(MOD, "elicitation %s ended without an answer: %s", idbuf, why);
		/* the client may still be showing the question: withdraw it */
		if (withdraw)
			emit_msg(srv, inf->id,
			         mcp_jsonrpc_notification(
			             "notifications/cancelled",
			             json_pack("{s:O, s:s}", "requestId", id, "reason", why)));
		goto out;
	}
	if (!elicit_result_valid(answer)) {
		GB_LOGW(MOD,
		        "elicitation %s: the client answered with an error or a result that is "
		        "not an ElicitResult",
		        idbuf);
		goto out;
	}
	*response = answer;
	answer = NULL;
	rc = 0;
out:
	json_decref(answer);
	json_decref(request);
	json_decref(params);
	json_decref(text);
	json_decref(id);
	free(safe);
	return rc;
}

/* act_call.on_done: the response, unless the client cancelled; then the
 * call leaves the list. Takes result. Worker thread. */
static void on_call_done(struct act_call *call, json_t *result)
{
	struct inflight *inf = call->user;
	struct mcp_server *srv = inf->srv;
	char idbuf[64];
	int cancelled;

	pthread_mutex_lock(&srv->lock);
	inf->done = 1;
	cancelled = inf->cancelled;
	pthread_mutex_unlock(&srv->lock);

	id_text(inf->id, idbuf, sizeof(idbuf));
	if (cancelled) {
		GB_LOGD(MOD, "%s (id %s) was cancelled by the client: no response", call->def->name,
		        idbuf);
		json_decref(result);
	} else {
		if (!json_is_object(result)) {
			json_decref(result);
			result =
			    tool_error_result(call->def, inf->args, "internal",
			                      "the call ended without a result (a glassbox bug); "
			                      "its outcome is unknown: take a new snapshot before "
			                      "acting again");
		}
		GB_LOGD(MOD, "%s (id %s) done%s", call->def->name, idbuf,
		        json_is_true(json_object_get(result, "isError")) ? " with an error" : "");
		reply_tool_result(srv, inf->id, result);
	}

	pthread_mutex_lock(&srv->lock);
	unlink_inflight_locked(srv, inf);
	pthread_mutex_unlock(&srv->lock);
	inflight_unref(inf);
}

/* ---- methods ------------------------------------------------------------ */

/* initialize: negotiates the protocol revision (the client's when we
 * speak it, else the latest), answers capabilities, serverInfo and
 * instructions. Once per connection; the first thing a client sends. */
static void handle_initialize(struct mcp_server *srv, struct mcp_msg *msg)
{
	json_t *requested = json_object_get(msg->params, "protocolVersion");
	json_t *client = json_object_get(msg->params, "clientInfo");
	json_t *elicitation =
	    json_object_get(json_object_get(msg->params, "capabilities"), "elicitation");
	json_t *server_info;
	json_t *caps;
	json_t *result;
	char name[64];
	char cversion[32];
	char asked[32];

	if (srv->state != SRV_NEW) {
		reply_error(
		    srv, msg->id, MCP_ERR_INVALID_REQUEST,
		    "initialize was already called on this connection: send it once, first");
		goto out;
	}
	if (!json_is_string(requested)) {
		reply_error(srv, msg->id, MCP_ERR_INVALID_PARAMS,
		            "initialize needs params.protocolVersion, e.g. \"%s\"",
		            MCP_PROTOCOL_LATEST);
		goto out;
	}
	snprintf(srv->version, sizeof(srv->version), "%s",
	         mcp_negotiate_version(json_string_value(requested)));

	caps = json_pack("{s:{s:b}, s:{s:b, s:b}, s:{}}", "tools", "listChanged", 0, "resources",
	                 "subscribe", 0, "listChanged", 0, "logging");
	server_info = json_pack("{s:s, s:s}", "name", "glassbox", "version", GLASSBOX_VERSION);
	if (version_at_least(srv->version, "2025-06-18"))
		json_object_set_new(server_info, "title", json_string("glassbox browser"));
	result = json_pack("{s:s, s:o, s:o, s:s+}", "protocolVersion", srv->version, "capabilities",
	                   caps, "serverInfo", server_info, "instructions", instructions,
	                   act_page_content_notice);
	srv->state = SRV_INITIALIZED;
	/* {} means form mode (2025-06-18); 2025-11-25 names the modes */
	srv->client_elicits =
	    version_at_least(srv->version, "2025-06-18") && json_is_object(elicitation) &&
	    (json_object_get(elicitation, "form") || !json_object_get(elicitation, "url"));

	printable(json_string_value(json_object_get(client, "name")), name, sizeof(name));
	snprintf(srv->client_name, sizeof(srv->client_name), "%s", name);
	printable(json_string_value(json_object_get(client, "version")), cversion,
	          sizeof(cversion));
	printable(json_string_value(requested), asked, sizeof(asked));
	GB_LOGI(MOD, "client %s %s: protocol %s (asked for %s)%s", name[0] ? name : "(unnamed)",
	        cversion, srv->version, asked,
	        srv->client_elicits ? "; it takes elicitation requests" : "");
	reply_result(srv, msg->id, result);
out:
	return;
}

/* ping: an empty result, at any time. */
static void handle_ping(struct mcp_server *srv, struct mcp_msg *msg)
{
	reply_result(srv, msg->id, json_object());
}

/* tools/list: every tool of the table, in one page; built once for the
 * negotiated revision and reused. */
static void handle_tools_list(struct mcp_server *srv, struct mcp_msg *msg)
{
	if (!srv->tools_list)
		srv->tools_list =
		    mcp_schema_tools_list(srv->version, srv->caps, !srv->plain_results);
	reply_result(srv, msg->id, json_incref(srv->tools_list));
}

/* tools/call: checks everything that needs no browser, then queues the
 * call; the response comes from on_call_done(). */
static void handle_tools_call(struct mcp_server *srv, struct mcp_msg *msg)
{
	json_t *name = json_object_get(msg->params, "name");
	json_t *args = json_object_get(msg->params, "arguments");
	json_t *token = json_object_get(json_object_get(msg->params, "_meta"), "progressToken");
	const struct act_def *def;
	struct inflight *inf = NULL;
	json_t *op;
	char err[512];
	char text[640];
	char idbuf[64];
	int duplicate;
	int rc;

	if (!json_is_string(name)) {
		reply_error(srv, msg->id, MCP_ERR_INVALID_PARAMS,
		            "tools/call needs params.name: the name of a tool from tools/list");
		goto out;
	}
	def = act_tool_find(json_string_value(name));
	if (!def) {
		printable(json_string_value(name), text, sizeof(text));
		reply_error(srv, msg->id, MCP_ERR_INVALID_PARAMS,
		            "unknown tool '%s': call tools/list for the tools glassbox offers",
		            text);
		goto out;
	}
	if (!act_caps_allows(srv->caps, def->caps)) {
		json_t *res = tool_error_result(def, args, "capability_off",
		                                act_caps_refusal(def, text, sizeof(text)));
		char *layout = NULL;

		/* Playwright MCP's words for a tool its caps leave out, then ours */
		if (asprintf(&layout, "### Error\nTool \"%s\" not found\n\n### Verification\n- %s",
		             def->name, text) >= 0)
			json_object_set_new(json_array_get(json_object_get(res, "content"), 0),
			                    "text", json_string(layout));
		free(layout);
		reply_tool_result(srv, msg->id, res);
		goto out;
	}
	if (json_is_null(args))
		args = NULL;
	if (args && !json_is_object(args)) {
		reply_error(srv, msg->id, MCP_ERR_INVALID_PARAMS,
		            "params.arguments of %s must be an object of named arguments",
		            def->name);
		goto out;
	}
	if (act_check_args(def, args, err, sizeof(err)) < 0) {
		/* Playwright MCP's words first, then which value to pass */
		char words[256];
		char said[1200];

		if (act_args_mismatch(def, args, words, sizeof(words)) < 0)
			words[0] = '\0';
		snprintf(said, sizeof(said), "Invalid arguments for tool \"%s\": %s%s%s", def->name,
		         words, words[0] ? "\n" : "", err);
		reply_tool_result(srv, msg->id,
		                  tool_error_result(def, args, "invalid_arguments", said));
		goto out;
	}

	id_text(msg->id, idbuf, sizeof(idbuf));
	pthread_mutex_lock(&srv->lock);
	duplicate = find_inflight_locked(srv, msg->id) != NULL;
	pthread_mutex_unlock(&srv->lock);
	if (duplicate) {
		reply_error(
		    srv, msg->id, MCP_ERR_INVALID_REQUEST,
		    "request id %s is already used by a call in progress: give each request "
		    "a new id",
		    idbuf);
		goto out;
	}
	if (ensure_session(srv, err, sizeof(err)) < 0) {
		snprintf(text, sizeof(text),
		         "could not start the browser session: %s; fix the "
		         "configuration and call again",
		         err);
		reply_tool_result(srv, msg->id,
		                  tool_error_result(def, args, "session_failed", text));
		goto out;
	}

	inf = calloc(1, sizeof(*inf));
	if (!inf) {
		reply_error(srv, msg->id, MCP_ERR_INTERNAL, "out of memory: try again later");
		goto out;
	}
	inf->srv = srv;
	inf->id = json_deep_copy(msg->id);
	inf->args = args ? json_deep_copy(args) : json_object();
	if (json_is_string(token) || json_is_integer(token))
		inf->progress_token = json_deep_copy(token);
	inf->refs = 2; /* the list's and ours */
	op = json_object_get(inf->args, "operation_id");
	inf->call.def = def;
	inf->call.args = inf->args;
	inf->call.operation_id = json_is_string(op) ? json_string_value(op) : NULL;
	inf->call.on_progress = inf->progress_token ? on_call_progress : NULL;
	inf->call.on_done = on_call_done;
	inf->call.elicit = srv->client_elicits ? elicit_call : NULL;
	inf->call.client_name = srv->client_name[0] ? srv->client_name : NULL;
	inf->call.user = inf;

	pthread_mutex_lock(&srv->lock);
	inf->next = srv->inflight;
	srv->inflight = inf;
	pthread_mutex_unlock(&srv->lock);

	GB_LOGD(MOD, "tools/call %s (id %s) queued", def->name, idbuf);
	rc = act_session_submit(srv->session, &inf->call);
	if (rc != 0) {
		GB_LOGE(MOD, "the session refused %s (id %s): %d", def->name, idbuf, rc);
		pthread_mutex_lock(&srv->lock);
		inf->done = 1;
		unlink_inflight_locked(srv, inf);
		pthread_mutex_unlock(&srv->lock);
		if (rc == -EBUSY)
			snprintf(text, sizeof(text),
			         "the browser session already has %d calls queued: nothing was "
			         "done; wait for earlier calls to finish, then call again",
			         ACT_SESSION_MAX_QUEUED);
		else
			snprintf(text, sizeof(text),
			         "the browser session did not accept the call (it is shutting "
			         "down); nothing was done: call again");
		reply_tool_result(srv, msg->id, tool_error_result(def, args, "not_queued", text));
		inflight_unref(inf); /* the list's */
	}
	inflight_unref(inf); /* ours: on_call_done may already have run */
out:
	return;
}

/* Whether uri is glassbox://artifact/ followed by 64 lowercase hex
 * digits, or glassbox://evidence/<operation_id>/screenshot (a screenshot
 * linked by the answer it followed). */
static int is_artifact_uri(const char *uri)
{
	size_t plen = strlen(ARTIFACT_URI_PREFIX);
	size_t elen = strlen(EVIDENCE_URI_PREFIX);
	size_t i, n;

	if (!strncmp(uri, EVIDENCE_URI_PREFIX, elen)) {
		const char *op = uri + elen;

		/* an operation id: letters, digits, '.', '_', '-' */
		for (n = 0; op[n] && (isalnum((unsigned char)op[n]) || strchr("._-", op[n])); n++)
			;
		return n > 0 && n <= 64 && !strcmp(op + n, "/screenshot");
	}
	if (strncmp(uri, ARTIFACT_URI_PREFIX, plen) != 0 || strlen(uri) != plen + 64)
		return 0;
	for (i = plen; uri[i]; i++) {
		if (!((uri[i] >= '0' && uri[i] <= '9') || (uri[i] >= 'a' && uri[i] <= 'f')))
			return 0;
	}
	return 1;
}

/* The contents item of an artifact: text for textual types that are valid
 * UTF-8, base64 blob otherwise. NULL when out of memory. */
static json_t *artifact_contents(const char *uri, const char *mime, const unsigned char *data,
                                 size_t len)
{
	json_t *item = json_pack("{s:s, s:s}", "uri", uri, "mimeType", mime);
	json_t *text = NULL;
	size_t b64len;
	char *b64 = NULL;

	if (!item)
		goto fail;
	if (!strncmp(mime, "text/", 5) || !strcmp(mime, "application/json"))
		text = json_stringn((const char *)data, len);
	if (text) {
		json_object_set_new(item, "text", text);
		goto out;
	}
	b64len = sodium_base64_ENCODED_LEN(len, sodium_base64_VARIANT_ORIGINAL);
	b64 = malloc(b64len);
	if (!b64)
		goto fail;
	sodium_bin2base64(b64, b64len, data, len, sodium_base64_VARIANT_ORIGINAL);
	json_object_set_new(item, "blob", json_string(b64));
	goto out;
fail:
	json_decref(item);
	item = NULL;
out:
	free(b64);
	return item;
}

/* resources/read: an evidence artifact by its glassbox://artifact/<sha256>
 * URI, read from the store on the front (a file read, no browser);
 * unknown or malformed URIs are -32002 (resource not found). */
static void handle_resources_read(struct mcp_server *srv, struct mcp_msg *msg)
{
	json_t *juri = json_object_get(msg->params, "uri");
	unsigned char *data = NULL;
	size_t len = 0;
	char mime[128];
	char err[512];
	char text[128];
	json_t *item;
	const char *uri;

	if (!json_is_string(juri)) {
		reply_error(srv, msg->id, MCP_ERR_INVALID_PARAMS,
		            "resources/read needs params.uri, e.g. \"" ARTIFACT_URI_PREFIX
		            "<sha256>\" from a tool result");
		goto out;
	}
	uri = json_string_value(juri);
	if (!is_artifact_uri(uri) &&
	    strncmp(uri, ACT_UPLOAD_URI_PREFIX, strlen(ACT_UPLOAD_URI_PREFIX)) != 0) {
		printable(uri, text, sizeof(text));
		reply_error_data(srv, msg->id, MCP_ERR_RESOURCE_NOT_FOUND,
		                 json_pack("{s:O}", "uri", juri),
		                 "resource not found: %s; glassbox serves " ARTIFACT_URI_PREFIX
		                 "<sha256> links from tool results and " ACT_UPLOAD_URI_PREFIX
		                 "<name> files of the upload area",
		                 text);
		goto out;
	}
	if (ensure_session(srv, err, sizeof(err)) < 0) {
		reply_error(srv, msg->id, MCP_ERR_INTERNAL,
		            "could not open the evidence store; see the server log");
		goto out;
	}
	mime[0] = '\0';
	err[0] = '\0';
	if (act_session_read_artifact(srv->session, uri, &data, &len, mime, sizeof(mime), err,
	                              sizeof(err)) != 0) {
		reply_error_data(srv, msg->id, MCP_ERR_RESOURCE_NOT_FOUND,
		                 json_pack("{s:O}", "uri", juri), "resource not found: %s: %s", uri,
		                 err[0] ? err : "no such artifact");
		goto out;
	}
	if (len > MCP_MAX_ARTIFACT_BYTES) {
		reply_error(srv, msg->id, MCP_ERR_INTERNAL,
		            "artifact %s is %zu bytes, more than the %u that resources/read sends",
		            uri, len, MCP_MAX_ARTIFACT_BYTES);
		goto out;
	}
	item = artifact_contents(uri, mime[0] ? mime : "application/octet-stream", data, len);
	if (!item) {
		reply_error(srv, msg->id, MCP_ERR_INTERNAL, "out of memory reading %s", uri);
		goto out;
	}
	reply_result(srv, msg->id, json_pack("{s:[o]}", "contents", item));
out:
	free(data);
}

/* resources/list: the files of the tenant's upload area (docs/files.md),
 * which browser_file_upload and browser_drop take; artifacts are not
 * listed but linked from results. */
static void handle_resources_list(struct mcp_server *srv, struct mcp_msg *msg)
{
	char err[512];

	if (ensure_session(srv, err, sizeof(err)) < 0) {
		reply_error(srv, msg->id, MCP_ERR_INTERNAL,
		            "could not open the upload area; see the server log");
		return;
	}
	reply_result(srv, msg->id,
	             json_pack("{s:o}", "resources", act_session_list_uploads(srv->session)));
}

/* resources/templates/list: the shape of artifact URIs. */
static void handle_resource_templates(struct mcp_server *srv, struct mcp_msg *msg)
{
	reply_result(srv, msg->id,
	             json_pack("{s:[{s:s, s:s, s:s, s:s}, {s:s, s:s, s:s, s:s}]}",
	                       "resourceTemplates", "uriTemplate", ARTIFACT_URI_PREFIX "{sha256}",
	                       "name", "artifact", "title", "Evidence artifact", "description",
	                       "A screenshot or other evidence stored by a tool call, by the "
	                       "sha256 of its content; tool results link to them",
	                       "uriTemplate", ACT_UPLOAD_URI_PREFIX "{name}", "name", "upload",
	                       "title", "File of the upload area", "description",
	                       "A file the tenant's operator put in the upload area (glassbox "
	                       "files put); browser_file_upload and browser_drop take its uri"));
}

/* logging/setLevel: accepts a syslog level name and remembers it. Logs go
 * to stderr only; no notifications/message are sent. */
static void handle_set_level(struct mcp_server *srv, struct mcp_msg *msg)
{
	static const char *const levels[] = { "debug", "info",     "notice", "warning",
		                              "error", "critical", "alert",  "emergency" };
	json_t *level = json_object_get(msg->params, "level");
	size_t i;

	for (i = 0; json_is_string(level) && i < sizeof(levels) / sizeof(levels[0]); i++) {
		if (!strcmp(json_string_value(level), levels[i])) {
			snprintf(srv->log_level, sizeof(srv->log_level), "%s", levels[i]);
			reply_result(srv, msg->id, json_object());
			goto out;
		}
	}
	reply_error(srv, msg->id, MCP_ERR_INVALID_PARAMS,
	            "params.level must be one of debug, info, notice, warning, error, critical, "
	            "alert, emergency");
out:
	return;
}

static const struct {
	const char *method;
	void (*handle)(struct mcp_server *srv, struct mcp_msg *msg);
	int before_initialize; /* served before initialize */
} methods[] = {
	{ "initialize", handle_initialize, 1 },
	{ "ping", handle_ping, 1 },
	{ "tools/list", handle_tools_list, 0 },
	{ "tools/call", handle_tools_call, 0 },
	{ "resources/list", handle_resources_list, 0 },
	{ "resources/templates/list", handle_resource_templates, 0 },
	{ "resources/read", handle_resources_read, 0 },
	{ "logging/setLevel", handle_set_level, 0 },
};

/* Runs the handler of a request's method; before initialize only
 * initialize and ping are served. Every path answers exactly once (tools/call
 * possibly later, from the worker). */
static void handle_request(struct mcp_server *srv, struct mcp_msg *msg)
{
	char text[96];
	size_t i;

	for (i = 0; i < sizeof(methods) / sizeof(methods[0]); i++) {
		if (strcmp(methods[i].method, msg->method) != 0)
			continue;
		if (srv->state == SRV_NEW && !methods[i].before_initialize)
			reply_error(
			    srv, msg->id, MCP_ERR_INVALID_REQUEST,
			    "the connection is not initialized: send initialize first, then "
			    "notifications/initialized");
		else
			methods[i].handle(srv, msg);
		goto out;
	}
	printable(msg->method, text, sizeof(text));
	reply_error(srv, msg->id, MCP_ERR_METHOD_NOT_FOUND,
	            "method '%s' is not supported: glassbox serves initialize, ping, tools/list, "
	            "tools/call, resources/list, resources/templates/list, resources/read and "
	            "logging/setLevel",
	            text);
out:
	return;
}

/* notifications/cancelled: the named request, if still queued or running,
 * is cancelled and will get no response. Unknown ids are ignored (the
 * call may just have finished). */
static void handle_cancelled(struct mcp_server *srv, struct mcp_msg *msg)
{
	json_t *rid = json_object_get(msg->params, "requestId");
	struct inflight *inf = NULL;
	char idbuf[64];

	if (!json_is_string(rid) && !json_is_integer(rid))
		goto out;
	id_text(rid, idbuf, sizeof(idbuf));
	pthread_mutex_lock(&srv->lock);
	inf = find_inflight_locked(srv, rid);
	if (inf && !inf->done && !inf->cancelled) {
		inf->cancelled = 1;
		inf->refs++;
		pthread_cond_broadcast(&srv->answered); /* a question to the client ends */
	} else {
		inf = NULL;
	}
	pthread_mutex_unlock(&srv->lock);
	if (!inf) {
		GB_LOGD(MOD, "cancel for id %s: nothing in flight", idbuf);
		goto out;
	}
	GB_LOGI(MOD, "cancelling %s (id %s) at the client's request", inf->call.def->name, idbuf);
	act_session_cancel(srv->session, &inf->call);
	inflight_unref(inf);
out:
	return;
}

/* A response from the client: handed to the call waiting for that id
 * (elicit_call), as a private copy of its result. Responses to ids we
 * are not waiting for (late, after a timeout; or made up) are ignored;
 * none is ever answered. */
static void handle_response(struct mcp_server *srv, struct mcp_msg *msg)
{
	const char *text = json_string_value(json_object_get(msg->rpc_error, "message"));
	struct inflight *inf;
	char idbuf[64];
	char why[160];

	id_text(msg->id, idbuf, sizeof(idbuf));
	pthread_mutex_lock(&srv->lock);
	for (inf = srv->inflight; msg->id && inf; inf = inf->next) {
		if (inf->elicit_id && !inf->elicit_answered && json_equal(inf->elicit_id, msg->id))
			break;
	}
	if (msg->id && inf) {
		inf->elicit_result = msg->result ? json_deep_copy(msg->result) : NULL;
		inf->elicit_answered = 1;
		pthread_cond_broadcast(&srv->answered);
	}
	pthread_mutex_unlock(&srv->lock);
	if (!msg->id || !inf) {
		GB_LOGD(MOD, "ignoring a response to id %s: no request of ours waits for it",
		        idbuf);
	} else if (!msg->result) {
		printable(text ? text : "a malformed response", why, sizeof(why));
		GB_LOGW(MOD, "the client answered request %s with an error: %s", idbuf, why);
	}
}

/* Notifications are never answered; unknown ones are ignored. */
static void handle_notification(struct mcp_server *srv, struct mcp_msg *msg)
{
	char text[96];

	if (!strcmp(msg->method, "notifications/initialized")) {
		if (srv->state == SRV_INITIALIZED)
			srv->state = SRV_READY;
	} else if (!strcmp(msg->method, "notifications/cancelled")) {
		handle_cancelled(srv, msg);
	} else {
		printable(msg->method, text, sizeof(text));
		GB_LOGD(MOD, "ignoring notification %s", text);
	}
}

/* ---- the connection ----------------------------------------------------- */

/* See mcp-private.h. */
int mcp_server_new(const struct act_config *cfg, mcp_emit_fn emit, void *emit_user,
                   struct mcp_server **out)
{
	struct mcp_server *srv;
	pthread_condattr_t cattr;
	int rc = 0;

	*out = NULL;
	srv = calloc(1, sizeof(*srv));
	if (!srv) {
		rc = -ENOMEM;
		goto out;
	}
	if (sodium_init() < 0)
		GB_LOGW(MOD, "libsodium did not initialize: generated ids may be weak");
	srv->cfg = cfg;
	{
		char err[512];

		/* fails closed: a list that cannot be read turns no group on, and
		 * the session, which reads it too, says why on the first call */
		if (act_caps_of_config(cfg, &srv->caps, err, sizeof(err)) < 0) {
			srv->caps = 0;
			GB_LOGW(MOD, "%s", err);
		}
	}
	srv->plain_results =
	    cfg->no_structured_content ||
	    json_is_false(json_object_get(cfg->tenant_policy, "structured_content"));
	srv->emit = emit;
	srv->emit_user = emit_user;
	snprintf(srv->version, sizeof(srv->version), "%s", MCP_PROTOCOL_LATEST);
	pthread_mutex_init(&srv->lock, NULL);
	pthread_cond_init(&srv->idle, NULL);
	pthread_condattr_init(&cattr);
	pthread_condattr_setclock(&cattr, CLOCK_MONOTONIC);
	pthread_cond_init(&srv->answered, &cattr);
	pthread_condattr_destroy(&cattr);
	if (cfg->prelaunch) {
		char err[512];

		/* the browser starts while the client is still initializing; a
		 * failure here is reported again by the first tool call */
		if (ensure_session(srv, err, sizeof(err)) < 0)
			GB_LOGW(MOD, "the session could not be prepared: %s", err);
	}
	*out = srv;
out:
	return rc;
}

/* See mcp-private.h. Every message gets exactly one outcome: ignored
 * (blank line, notification, client response), an error, or a result,
 * now or from a worker later. */
void mcp_server_handle_line(struct mcp_server *srv, const char *line, size_t len)
{
	struct mcp_msg msg;

	switch (mcp_jsonrpc_parse(line, len, &msg)) {
	case MCP_MSG_EMPTY:
		break;
	case MCP_MSG_INVALID:
		GB_LOGD(MOD, "bad message: %s", msg.error);
		reply_error(srv, msg.id, msg.error_code, "%s", msg.error);
		break;
	case MCP_MSG_RESPONSE:
		handle_response(srv, &msg);
		break;
	case MCP_MSG_NOTIFICATION:
		handle_notification(srv, &msg);
		break;
	case MCP_MSG_REQUEST:
		handle_request(srv, &msg);
		break;
	}
	mcp_msg_clear(&msg);
}

/* See mcp-private.h. The id of the skipped message is unknown, so the
 * error goes to id null. */
void mcp_server_line_too_long(struct mcp_server *srv, size_t max_bytes)
{
	GB_LOGW(MOD, "skipped a message longer than %zu bytes", max_bytes);
	reply_error_data(srv, NULL, MCP_ERR_INVALID_REQUEST,
	                 json_pack("{s:I}", "max_bytes", (json_int_t)max_bytes),
	                 "message too large: a message may be at most %zu bytes; it was skipped "
	                 "unread, so send it again smaller",
	                 max_bytes);
}

/* See mcp-private.h. Nothing more will be read, so questions to the
 * client waiting for an answer are released first (they fail). */
void mcp_server_drain(struct mcp_server *srv)
{
	pthread_mutex_lock(&srv->lock);
	srv->input_closed = 1;
	pthread_cond_broadcast(&srv->answered);
	while (srv->inflight)
		pthread_cond_wait(&srv->idle, &srv->lock);
	pthread_mutex_unlock(&srv->lock);
}

/* See mcp-private.h. Each call not yet done is marked cancelled under
 * the lock (so it gets no response), then cancelled in the session. */
void mcp_server_cancel_all(struct mcp_server *srv)
{
	struct inflight *to_cancel[64];
	struct inflight *inf;
	size_t n, i;

	do {
		n = 0;
		pthread_mutex_lock(&srv->lock);
		for (inf = srv->inflight; inf && n < sizeof(to_cancel) / sizeof(to_cancel[0]);
		     inf = inf->next) {
			if (inf->done || inf->cancelled)
				continue;
			inf->cancelled = 1;
			inf->refs++;
			to_cancel[n++] = inf;
		}
		pthread_cond_broadcast(&srv->answered);
		pthread_mutex_unlock(&srv->lock);
		for (i = 0; i < n; i++) {
			act_session_cancel(srv->session, &to_cancel[i]->call);
			inflight_unref(to_cancel[i]);
		}
	} while (n == sizeof(to_cancel) / sizeof(to_cancel[0]));
}

/* See mcp-private.h. */
int mcp_server_busy(struct mcp_server *srv)
{
	int busy;

	pthread_mutex_lock(&srv->lock);
	busy = srv->inflight != NULL;
	pthread_mutex_unlock(&srv->lock);
	return busy;
}

/* See mcp-private.h. */
void mcp_server_set_profile_end(struct mcp_server *srv, int save)
{
	if (srv && srv->session)
		act_session_set_profile_end(srv->session, save);
}

/* See mcp-private.h. */
void mcp_server_free(struct mcp_server *srv)
{
	if (!srv)
		return;
	mcp_server_drain(srv);
	if (srv->session)
		act_session_free(srv->session);
	json_decref(srv->tools_list);
	pthread_cond_destroy(&srv->idle);
	pthread_cond_destroy(&srv->answered);
	pthread_mutex_destroy(&srv->lock);
	free(srv);
}

/* See mcp-private.h. */
const char *mcp_server_client(const struct mcp_server *srv)
{
	return srv->client_name;
}

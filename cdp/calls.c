/*
 * calls.c - calls correlated by id: cdp_send(), cdp_await(), cdp_forget(),
 * and the delivery of replies and failures to them.
 */
#include "cdp/cdp-private.h"

#include "common/log.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The pending or answered call with this id, or NULL. Calls are few and
 * usually answered in order, so a list from the oldest is enough. */
struct cdp_call *cdp_calls_find(struct cdp_conn *c, uint64_t id)
{
	struct cdp_call *call;

	for (call = c->calls; call; call = call->next)
		if (call->id == id)
			break;
	return call;
}

/* Unlinks and frees one call and its result. */
static void cdp_call_free(struct cdp_conn *c, struct cdp_call *call)
{
	if (call->prev)
		call->prev->next = call->next;
	else
		c->calls = call->next;
	if (call->next)
		call->next->prev = call->prev;
	else
		c->calls_tail = call->prev;
	c->ncalls--;
	json_decref(call->result);
	free(call);
}

/* Frees every call, answered or not (cdp_close). */
void cdp_calls_free_all(struct cdp_conn *c)
{
	while (c->calls)
		cdp_call_free(c, c->calls);
}

/* Hands a reply to call id: result (borrowed, an object) on success, or
 * error (borrowed, an object with integer "code" and string "message",
 * optional string "data"), as checked by the message handler. A reply to
 * an id that is not pending is dropped. */
void cdp_calls_deliver(struct cdp_conn *c, uint64_t id, json_t *result, json_t *error)
{
	struct cdp_call *call = cdp_calls_find(c, id);
	json_t *data;

	if (!call || call->done) {
		GB_LOGD("cdp", "<- reply %llu: no such call pending: dropped",
		        (unsigned long long)id);
		goto out;
	}
	call->done = 1;
	if (result) {
		GB_LOGD("cdp", "<- reply %llu (%s)", (unsigned long long)id, call->method);
		call->rc = 0;
		call->result = json_incref(result);
		goto out;
	}
	data = json_object_get(error, "data");
	call->rc = -CDP_EPROTOCOL;
	cdp_err_set(&call->err, (int)json_integer_value(json_object_get(error, "code")),
	            "%s: %s (code %lld)%s%s", call->method,
	            json_string_value(json_object_get(error, "message")),
	            (long long)json_integer_value(json_object_get(error, "code")), data ? ": " : "",
	            data ? json_string_value(data) : "");
	GB_LOGD("cdp", "<- error reply %llu (%s), code %lld", (unsigned long long)id, call->method,
	        (long long)json_integer_value(json_object_get(error, "code")));
out:
	return;
}

/* Fails pending call id with rc and why (borrowed) appended to its method
 * name. Returns 1 if such a call was waiting, else 0. */
int cdp_calls_fail(struct cdp_conn *c, uint64_t id, int rc, const char *why)
{
	struct cdp_call *call = cdp_calls_find(c, id);
	int found = 0;

	if (!call || call->done)
		goto out;
	call->done = 1;
	call->rc = rc;
	cdp_err_set(&call->err, 0, "%s (id %llu): %s", call->method, (unsigned long long)id, why);
	found = 1;
out:
	return found;
}

/* Fails every call still waiting for its reply (the socket closed). */
void cdp_calls_fail_all(struct cdp_conn *c, int rc, const char *why)
{
	struct cdp_call *call;

	for (call = c->calls; call; call = call->next)
		cdp_calls_fail(c, call->id, rc, why);
}

/* json_dump_callback sink into a gb_buf (which enforces the ceiling). */
static int cdp_dump_to_buf(const char *buffer, size_t size, void *data)
{
	return gb_buf_append(data, buffer, size);
}

/* Builds {"id","method","params"[,"sessionId"]} as LWS_PRE headroom plus
 * compact JSON in *buf_out (malloc'd, taken by the caller). params is
 * stolen. Returns 0, -CDP_ETOOBIG or -CDP_ENOMEM. */
static int cdp_encode(struct cdp_conn *c, uint64_t id, const char *session_id, const char *method,
                      json_t *params, char **buf_out, size_t *len_out)
{
	static const char headroom[LWS_PRE];
	struct gb_buf buf;
	json_t *msg = NULL;
	int rc = 0;

	gb_buf_init(&buf, c->opts.max_frame_bytes + LWS_PRE);
	msg = json_object();
	if (!msg || json_object_set_new(msg, "id", json_integer((json_int_t)id)) ||
	    json_object_set_new(msg, "params", params ? params : json_object())) {
		params = NULL; /* set_new stole it, even on failure */
		rc = -CDP_ENOMEM;
		goto out;
	}
	params = NULL;
	/* json_string() refuses invalid UTF-8: the caller's mistake */
	if (json_object_set_new(msg, "method", json_string(method)) ||
	    (session_id && *session_id &&
	     json_object_set_new(msg, "sessionId", json_string(session_id)))) {
		rc = -CDP_EINVAL;
		goto out;
	}
	if (gb_buf_append(&buf, headroom, sizeof(headroom)) ||
	    json_dump_callback(msg, cdp_dump_to_buf, &buf, JSON_COMPACT)) {
		rc = -CDP_ETOOBIG;
		goto out;
	}
	*len_out = buf.len - LWS_PRE;
	*buf_out = gb_buf_steal(&buf);
out:
	json_decref(params);
	json_decref(msg);
	gb_buf_free(&buf);
	return rc;
}

/* Queues a call; see cdp.h. params: stolen (must be an object or NULL).
 * Returns 0 with the id in *id_out, or -CDP_EINVAL, -CDP_ECLOSED,
 * -CDP_ETOOBIG (the encoded message is over max_frame_bytes) or
 * -CDP_ENOMEM (also when CDP_MAX_CALLS calls are unclaimed). */
int cdp_send(struct cdp_conn *c, const char *session_id, const char *method, json_t *params,
             uint64_t *id_out)
{
	struct cdp_call *call = NULL;
	char *buf = NULL;
	size_t len = 0;
	uint64_t id;
	int rc;

	if (id_out)
		*id_out = 0;
	if (!c || !method || !*method || (params && !json_is_object(params))) {
		GB_LOGE("cdp", "cdp_send: needs a conn, a method and object params");
		rc = -CDP_EINVAL;
		goto out;
	}
	if (c->state != CDP_STATE_OPEN) {
		rc = -CDP_ECLOSED;
		goto out;
	}
	if (c->ncalls >= CDP_MAX_CALLS) {
		GB_LOGE("cdp", "%s: %zu calls are pending or unclaimed: await or forget them",
		        method, c->ncalls);
		rc = -CDP_ENOMEM;
		goto out;
	}
	id = c->next_id;
	rc = cdp_encode(c, id, session_id, method, params, &buf, &len);
	params = NULL;
	if (rc < 0) {
		GB_LOGW("cdp", "%s: could not encode the call: %s", method, cdp_strerror(rc));
		goto out;
	}
	call = calloc(1, sizeof(*call));
	if (!call) {
		rc = -CDP_ENOMEM;
		goto out;
	}
	call->id = id;
	snprintf(call->method, sizeof(call->method), "%s", method);
	rc = cdp_out_push(c, buf, len, id);
	buf = NULL;
	if (rc < 0)
		goto out;
	c->next_id++;
	call->prev = c->calls_tail;
	if (c->calls_tail)
		c->calls_tail->next = call;
	else
		c->calls = call;
	c->calls_tail = call;
	c->ncalls++;
	GB_LOGD("cdp", "-> call %llu %s%s%s", (unsigned long long)id, method,
	        session_id && *session_id ? " session " : "", session_id ? session_id : "");
	call = NULL;
	if (id_out)
		*id_out = id;
out:
	json_decref(params);
	free(buf);
	free(call);
	return rc;
}

static int cdp_call_stop(struct cdp_conn *c, void *arg)
{
	const struct cdp_call *call = cdp_calls_find(c, *(const uint64_t *)arg);

	return !call || call->done;
}

/* Waits for the reply to id; see cdp.h. Every return ends the call: a
 * reply arriving after a timeout or cancellation is dropped. */
int cdp_await(struct cdp_conn *c, uint64_t id, int timeout_ms, json_t **result,
              struct cdp_error *err)
{
	struct cdp_call *call;
	int rc;

	if (result)
		*result = NULL;
	if (!c || timeout_ms < 0) {
		cdp_err_set(err, 0, "cdp_await: needs a conn and a timeout >= 0");
		rc = -CDP_EINVAL;
		goto out;
	}
	if (cdp_in_callback(c)) {
		cdp_err_set(err, 0, "cdp_await: a listener or predicate must not wait");
		GB_LOGE("cdp", "cdp_await(%llu) called from inside a listener: refused",
		        (unsigned long long)id);
		rc = -CDP_EINVAL;
		goto out;
	}
	if (!cdp_calls_find(c, id)) {
		cdp_err_set(err, 0, "no call with id %llu is pending: already awaited or forgotten",
		            (unsigned long long)id);
		rc = -CDP_EINVAL;
		goto out;
	}
	rc = cdp_service_until(c, gb_now_ms() + timeout_ms, cdp_call_stop, &id);
	call = cdp_calls_find(c, id);
	if (!call) {
		cdp_err_set(err, 0, "call %llu was forgotten while awaited",
		            (unsigned long long)id);
		rc = -CDP_EINVAL;
		goto out;
	}
	if (call->done) {
		rc = call->rc;
		if (rc == 0 && result) {
			*result = call->result;
			call->result = NULL;
		} else if (rc < 0) {
			cdp_err_copy(err, &call->err);
		}
	} else if (rc == -CDP_ETIMEOUT) {
		cdp_err_set(err, 0, "%s (id %llu): no reply within %d ms", call->method,
		            (unsigned long long)id, timeout_ms);
	} else if (rc == -CDP_ECANCELLED) {
		cdp_err_set(err, 0, "%s (id %llu): cancelled while waiting for the reply",
		            call->method, (unsigned long long)id);
	} else if (rc == -CDP_ECLOSED) {
		cdp_err_set(err, 0, "%s (id %llu): connection closed: %s", call->method,
		            (unsigned long long)id, c->close_reason);
	} else {
		cdp_err_set(err, 0, "%s (id %llu): %s", call->method, (unsigned long long)id,
		            cdp_strerror(rc));
	}
	cdp_call_free(c, call);
out:
	return rc;
}

/* Drops call id, pending or answered; its reply, if it comes, is dropped. */
void cdp_forget(struct cdp_conn *c, uint64_t id)
{
	struct cdp_call *call;

	if (!c)
		goto out;
	call = cdp_calls_find(c, id);
	if (call)
		cdp_call_free(c, call);
out:
	return;
}

/* 1 when call id has its reply (or failed) and can be awaited without
 * waiting; 0 while it is pending or unknown. */
int cdp_reply_ready(struct cdp_conn *c, uint64_t id)
{
	struct cdp_call *call = c ? cdp_calls_find(c, id) : NULL;

	return call && call->done;
}

/*
 * message.c - one incoming message: its fragments assembled under the
 * max_frame_bytes ceiling, parsed with jansson with every type checked,
 * and routed to the call it answers or to the waiters and listeners of
 * its event. Hostile input: a malformed message is logged (without its
 * body) and dropped; an oversized one is skimmed and dropped (skim.c).
 */
#include "cdp/cdp-private.h"

#include "common/log.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Forgets the message being assembled (the socket closed under it). */
void cdp_message_reset(struct cdp_conn *c)
{
	c->rx_active = 0;
	c->rx_skipping = 0;
	c->rx_total = 0;
	gb_buf_free(&c->rx);
}

/* Checks a reply {"id", "result" | "error", ["sessionId"]} and hands it
 * to its call. Returns 0, or -CDP_EBADMSG with *why set. */
static int cdp_message_reply(struct cdp_conn *c, json_t *msg, json_t *id, const char **why)
{
	json_t *result = json_object_get(msg, "result");
	json_t *error = json_object_get(msg, "error");
	json_t *data;
	int rc = -CDP_EBADMSG;

	if (!json_is_integer(id) || json_integer_value(id) < 0) {
		*why = "\"id\" is not a non-negative integer";
		goto out;
	}
	if (!result == !error) {
		*why = "a reply needs exactly one of \"result\" and \"error\"";
		goto out;
	}
	if (result && !json_is_object(result)) {
		*why = "\"result\" is not an object";
		goto out;
	}
	if (error) {
		data = json_object_get(error, "data");
		if (!json_is_object(error) || !json_is_integer(json_object_get(error, "code")) ||
		    !json_is_string(json_object_get(error, "message")) ||
		    (data && !json_is_string(data))) {
			*why = "\"error\" is not {code: integer, message: string[, data: string]}";
			goto out;
		}
	}
	cdp_calls_deliver(c, (uint64_t)json_integer_value(id), result, error);
	rc = 0;
out:
	return rc;
}

/* Checks an event {"method", ["params"], ["sessionId"]} and dispatches
 * it. Returns 0, or -CDP_EBADMSG with *why set. */
static int cdp_message_event(struct cdp_conn *c, json_t *method, json_t *params,
                             const char *session_id, const char **why)
{
	json_t *empty = NULL;
	int rc = -CDP_EBADMSG;

	if (!json_is_string(method) || !json_string_length(method)) {
		*why = "\"method\" is not a non-empty string";
		goto out;
	}
	if (params && !json_is_object(params)) {
		*why = "\"params\" is not an object";
		goto out;
	}
	if (!params) {
		empty = json_object();
		if (!empty) {
			*why = "out of memory";
			goto out;
		}
		params = empty;
	}
	cdp_events_dispatch(c, session_id, json_string_value(method), params);
	rc = 0;
out:
	json_decref(empty);
	return rc;
}

/* A message jansson refused, parsed again with its lone surrogates
 * replaced (surrogates.c): a page's text may hold them. NULL when it has
 * none or is malformed anyway (the first parse's error stands). */
static json_t *parse_with_lone_surrogates(const char *data, size_t len)
{
	json_error_t again;
	json_t *msg = NULL;
	char *copy;

	if (!len || !memchr(data, '\\', len))
		return NULL;
	copy = malloc(len);
	if (!copy)
		return NULL;
	memcpy(copy, data, len);
	if (cdp_json_fix_surrogates(copy, len))
		msg = json_loadb(copy, len, JSON_REJECT_DUPLICATES, &again);
	free(copy);
	return msg;
}

/*
 * Handles one complete message of len bytes (need not be NUL-terminated):
 * parses it and routes it. Returns 0 when it was a well-formed CDP
 * message (even one nobody wanted), -CDP_EBADMSG when it was dropped as
 * malformed. UNITTEST: static in normal builds; unit tests and the fuzzer
 * feed it raw bytes.
 */
UNITTEST int cdp_message_handle(struct cdp_conn *c, const char *data, size_t len)
{
	json_error_t jerr;
	json_t *msg = NULL;
	json_t *id;
	json_t *method;
	json_t *session;
	const char *why = NULL;
	int rc = -CDP_EBADMSG;

	msg = json_loadb(data, len, JSON_REJECT_DUPLICATES, &jerr);
	if (!msg)
		msg = parse_with_lone_surrogates(data, len);
	if (!msg) {
		why = "not valid JSON";
		goto out;
	}
	if (!json_is_object(msg)) {
		why = "not a JSON object";
		goto out;
	}
	session = json_object_get(msg, "sessionId");
	if (session && !json_is_string(session)) {
		why = "\"sessionId\" is not a string";
		goto out;
	}
	id = json_object_get(msg, "id");
	method = json_object_get(msg, "method");
	if (id && method)
		why = "has both \"id\" and \"method\"";
	else if (id)
		rc = cdp_message_reply(c, msg, id, &why);
	else if (method)
		rc = cdp_message_event(c, method, json_object_get(msg, "params"),
		                       session ? json_string_value(session) : "", &why);
	else
		why = "has neither \"id\" nor \"method\"";
out:
	if (rc == 0)
		cdp_note_dispatched(c);
	else if (!msg)
		GB_LOGW("cdp", "dropped a malformed message of %zu bytes from %s: %s at byte %d",
		        len, c->endpoint, why, jerr.position);
	else
		GB_LOGW("cdp", "dropped a malformed message of %zu bytes from %s: %s", len,
		        c->endpoint, why);
	json_decref(msg);
	return rc;
}

/* A message went over the ceiling and was dropped: fails the call or the
 * waiters it was meant for, as far as the skim could tell. */
static void cdp_message_oversized(struct cdp_conn *c)
{
	const struct cdp_skim *s = &c->skim;
	char why[128];
	int usable = s->ended && !s->bad;

	snprintf(why, sizeof(why), "message of %zu bytes exceeds the %zu-byte ceiling", c->rx_total,
	         c->opts.max_frame_bytes);
	if (usable && s->id_state == CDP_SKIM_COMPLETE && s->method_state == CDP_SKIM_ABSENT) {
		if (cdp_calls_fail(c, s->id, -CDP_ETOOBIG, why))
			GB_LOGW("cdp", "reply %llu from %s dropped: %s", (unsigned long long)s->id,
			        c->endpoint, why);
		else
			GB_LOGW("cdp", "reply %llu (no such call pending) dropped: %s",
			        (unsigned long long)s->id, why);
	} else if (usable && s->method_state == CDP_SKIM_COMPLETE &&
	           s->id_state == CDP_SKIM_ABSENT && s->session_state != CDP_SKIM_INVALID &&
	           s->session_state != CDP_SKIM_READING) {
		GB_LOGW("cdp", "event %s from %s dropped: %s", s->method, c->endpoint, why);
		cdp_events_fail_waiters(c,
		                        s->session_state == CDP_SKIM_COMPLETE ? s->session_id : "",
		                        s->method, -CDP_ETOOBIG, why);
	} else {
		GB_LOGE("cdp", "unidentifiable %s from %s dropped", why, c->endpoint);
	}
	cdp_note_dispatched(c);
}

/*
 * Takes the next len bytes of the incoming message (borrowed); final
 * says they end it. Below the ceiling they are appended to c->rx and the
 * complete message is handled; past it, what was kept is skimmed and
 * freed and the rest is skimmed only, never stored.
 */
void cdp_message_rx(struct cdp_conn *c, const char *in, size_t len, int final)
{
	if (!c->rx_active) {
		c->rx_active = 1;
		c->rx_skipping = 0;
		c->rx_total = 0;
		c->rx.len = 0;
	}
	c->rx_total = len > SIZE_MAX - c->rx_total ? SIZE_MAX : c->rx_total + len;
	if (!c->rx_skipping && len && gb_buf_append(&c->rx, in, len) < 0) {
		GB_LOGW("cdp", "incoming message from %s passed %s: dropping it as it arrives",
		        c->endpoint,
		        c->rx_total > c->opts.max_frame_bytes ? "the size ceiling" : "free memory");
		c->rx_skipping = 1;
		cdp_skim_init(&c->skim);
		cdp_skim_feed(&c->skim, c->rx.data ? c->rx.data : "", c->rx.len);
		gb_buf_free(&c->rx);
		/* the bytes that did not fit are skimmed below */
	}
	if (c->rx_skipping && len)
		cdp_skim_feed(&c->skim, in, len);
	if (!final)
		goto out;
	if (c->rx_skipping)
		cdp_message_oversized(c);
	else {
		cdp_trace(c, '<', c->rx.data ? c->rx.data : "", c->rx.len);
		cdp_message_handle(c, c->rx.data ? c->rx.data : "", c->rx.len);
	}
	c->rx_active = 0;
	c->rx_skipping = 0;
	if (c->rx.cap > CDP_RX_KEEP_BYTES)
		gb_buf_free(&c->rx);
	else
		c->rx.len = 0;
out:
	return;
}

/*
 * page_world.c - reads of the page from glassbox's isolated world of its
 * main frame.
 *
 * What the pipeline re-reads to judge an action (the URL, the title, the
 * text an expectation looks for, whether the DOM changed) comes from this
 * world, never from the page's own: a page's scripts can redefine
 * document.title, innerText, outerHTML or setTimeout in their world, not
 * in this one. The world lives from each document's start (targets.c), so
 * a read finds its context known and costs one round trip.
 */
#include "actions/actions-private.h"

#include "cdp/cdp.h"
#include "sessions/sessions.h"

#include <stdio.h>
#include <string.h>

/* The context of the world in frame (a page's main frame) of CDP
 * session psid: the one known, or, when none is (or fresh asks for
 * another), the one Page.createIsolatedWorld answers. 0 when there is
 * none; *rc and err say why. */
static long long world_context(struct cdp_conn *cdp, struct sess *sess, const char *psid,
                               const char *frame, int fresh, int timeout_ms, int *rc,
                               struct cdp_error *err)
{
	json_t *world = NULL;
	long long context;

	*rc = 0;
	if (!frame || !frame[0]) {
		*rc = -CDP_EINVAL;
		snprintf(err->message, sizeof(err->message), "the page has no main frame");
		return 0;
	}
	/* events already received first: a context reported dead is not used */
	cdp_service(cdp, 0, NULL, NULL);
	context = sess_world_find(sess, psid, frame);
	if (context && !fresh)
		return context;
	if (context)
		sess_world_forget(sess, psid, context);
	*rc = cdp_call(cdp, psid, "Page.createIsolatedWorld",
	               json_pack("{s:s, s:s}", "frameId", frame, "worldName", SESS_WORLD_NAME),
	               timeout_ms, &world, err);
	context = *rc == 0
	              ? (long long)json_integer_value(json_object_get(world, "executionContextId"))
	              : 0;
	if (context) {
		sess_world_remember(sess, psid, frame, context);
	} else if (*rc == 0) {
		*rc = -CDP_EPROTOCOL;
		snprintf(err->message, sizeof(err->message),
		         "Page.createIsolatedWorld answered no execution context");
	}
	json_decref(world);
	return context;
}

/* Sends expression to context; its value comes by value, or, for an
 * object when by_value is 0, as an objectId of that world. */
static int send_in(struct cdp_conn *cdp, const char *psid, long long context,
                   const char *expression, int by_value, uint64_t *id)
{
	return cdp_send(cdp, psid, "Runtime.evaluate",
	                json_pack("{s:s, s:I, s:b, s:b}", "expression", expression, "contextId",
	                          (json_int_t)context, "returnByValue", by_value, "awaitPromise",
	                          1),
	                id);
}

/* act_world_call, the value as send_in() has it. */
static int world_call(struct cdp_conn *cdp, struct sess *sess, const char *psid, const char *frame,
                      const char *expression, int by_value, int timeout_ms, json_t **result,
                      struct cdp_error *err)
{
	int64_t until = gb_now_ms() + timeout_ms;
	long long context;
	int attempt;
	int rc = 0;

	*result = NULL;
	for (attempt = 0; attempt < 2; attempt++) {
		uint64_t id;
		int left = (int)(until - gb_now_ms());

		context =
		    world_context(cdp, sess, psid, frame, attempt, left > 1 ? left : 1, &rc, err);
		if (!context)
			break;
		rc = send_in(cdp, psid, context, expression, by_value, &id);
		if (rc == 0) {
			left = (int)(until - gb_now_ms());
			rc = cdp_await(cdp, id, left > 1 ? left : 1, result, err);
		}
		/* a world whose document went meanwhile: its frame's new one, once */
		if (rc != -CDP_EPROTOCOL)
			break;
	}
	return rc;
}

int act_world_call(struct cdp_conn *cdp, struct sess *sess, const char *psid, const char *frame,
                   const char *expression, int timeout_ms, json_t **result, struct cdp_error *err)
{
	return world_call(cdp, sess, psid, frame, expression, 1, timeout_ms, result, err);
}

/* The main frame of the call's page, or NULL. */
static const char *main_frame(const struct act_ctx *ctx)
{
	return ctx->page ? sess_page_main_frame_id(ctx->page) : NULL;
}

uint64_t act_page_world_send(struct act_ctx *ctx, const char *expression)
{
	struct cdp_error err = { 0 };
	uint64_t id = 0;
	long long context;
	int rc;

	context = world_context(ctx->cdp, ctx->sess, ctx->psid, main_frame(ctx), 0,
	                        act_left_ms(ctx), &rc, &err);
	if (!context || send_in(ctx->cdp, ctx->psid, context, expression, 1, &id) < 0)
		return 0;
	return id;
}

int act_page_world_call(struct act_ctx *ctx, const char *expression, int timeout_ms,
                        json_t **result, struct cdp_error *err)
{
	return act_world_call(ctx->cdp, ctx->sess, ctx->psid, main_frame(ctx), expression,
	                      timeout_ms, result, err);
}

/* Fails the call (doing) with what a world's call returned (rc < 0). */
static int world_failed(struct act_ctx *ctx, int rc, const struct cdp_error *err, const char *doing)
{
	if (rc == -CDP_EINVAL || rc == -CDP_EPROTOCOL)
		return act_fail(ctx, "browser_error", "failed while %s: %s", doing, err->message);
	return act_connection_failed(ctx, rc, doing);
}

long long act_frame_world(struct act_ctx *ctx, const char *sid, const char *frame, int fresh,
                          const char *doing)
{
	struct cdp_error err = { 0 };
	long long context;
	int rc;

	context =
	    world_context(ctx->cdp, ctx->sess, sid, frame, fresh, act_left_ms(ctx), &rc, &err);
	if (!context)
		world_failed(ctx, rc, &err, doing);
	return context;
}

/* world_call on the page's main frame within the call's time; a failure
 * fails the call (doing). */
static int page_world_run(struct act_ctx *ctx, const char *expression, int by_value, json_t **res,
                          const char *doing)
{
	struct cdp_error err = { 0 };
	int rc;

	rc = world_call(ctx->cdp, ctx->sess, ctx->psid, main_frame(ctx), expression, by_value,
	                act_left_ms(ctx), res, &err);
	return rc < 0 ? world_failed(ctx, rc, &err, doing) : 0;
}

int act_page_eval(struct act_ctx *ctx, const char *expression, json_t **value, const char *doing)
{
	json_t *res = NULL;
	int rc;

	*value = NULL;
	rc = page_world_run(ctx, expression, 1, &res, doing);
	if (rc == 0)
		rc = act_runtime_value(ctx, res, value, doing);
	json_decref(res);
	return rc;
}

int act_page_world_object(struct act_ctx *ctx, const char *expression, json_t **result,
                          const char *doing)
{
	*result = NULL;
	return page_world_run(ctx, expression, 0, result, doing);
}

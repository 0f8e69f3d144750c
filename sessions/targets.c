/*
 * targets.c - pages, out-of-process iframes and workers of a session.
 *
 * Every target is auto-attached paused (flattened sessions). The event
 * handler below queues its setup (domains enabled, nested auto-attach,
 * then the owner's hook, e.g. policy) and resumes it last, all without
 * waiting: CDP runs a session's commands in order, so the target cannot
 * run a script before its setup took effect.
 */
#include "sessions/sessions-private.h"

#include "cdp/cdp.h"
#include "common/log.h"
#include "common/util.h"

#include <jansson.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SESS_BODY_BUFFER_BYTES (32 * 1024 * 1024)
#define SESS_BODY_MAX_BYTES (4 * 1024 * 1024)

void sess_fail(struct sess *s, const char *fmt, ...)
{
	va_list ap;

	if (s->state == SESS_FAILED || s->state == SESS_CLOSED)
		return;
	va_start(ap, fmt);
	vsnprintf(s->failure, sizeof(s->failure), fmt, ap);
	va_end(ap);
	s->state = SESS_FAILED;
	GB_LOGW("sessions", "session %s failed: %s", s->id, s->failure);
}

/* Queues one command whose reply nobody waits for. */
static void send_forget(struct sess *s, const char *sid, const char *method, json_t *params)
{
	uint64_t id;

	if (cdp_send(s->cdp, sid, method, params, &id) == 0)
		cdp_forget(s->cdp, id);
}

/* The press binding (SESS_PRESS_BINDING) in glassbox's isolated world
 * of every document of the target, those to come included. */
static void add_press_binding(struct sess *s, const char *sid)
{
	send_forget(s, sid, "Runtime.addBinding",
	            json_pack("{s:s, s:s}", "name", SESS_PRESS_BINDING, "executionContextName",
	                      SESS_WORLD_NAME));
}

/* Glassbox's world in every document of the page's frames from its
 * start, the current one included, as Chromium reports it (worlds.c):
 * an action finds it there instead of asking for it. */
static void add_world(struct sess *s, const char *sid)
{
	send_forget(s, sid, "Page.addScriptToEvaluateOnNewDocument",
	            json_pack("{s:s, s:s, s:b}", "source", "", "worldName", SESS_WORLD_NAME,
	                      "runImmediately", 1));
}

static json_t *auto_attach_params(void)
{
	return json_pack("{s:b, s:b, s:b}", "autoAttach", 1, "waitForDebuggerOnStart", 1, "flatten",
	                 1);
}

/* A file chooser a page opens (a click on <input type=file>) is reported
 * as Page.fileChooserOpened instead of a dialog: files are set only by
 * browser_file_upload, from the tenant's upload area. */
static json_t *file_chooser_params(void)
{
	return json_pack("{s:b}", "enabled", 1);
}

/* Bodies the browser keeps for browser_network_request (it drops the
 * oldest beyond these): SESS_BODY_BUFFER_BYTES in all per page, and at
 * most SESS_BODY_MAX_BYTES of one response. */
static json_t *network_params(void)
{
	return json_pack("{s:i, s:i}", "maxTotalBufferSize", SESS_BODY_BUFFER_BYTES,
	                 "maxResourceBufferSize", SESS_BODY_MAX_BYTES);
}

static void free_page(struct sess_page *p)
{
	if (!p)
		return;
	free(p->url);
	free(p->dialog.message);
	free(p->dialog.default_prompt);
	free(p);
}

struct sess_page *sess_page_by_target(struct sess *s, const char *target_id)
{
	size_t i;

	for (i = 0; i < s->n_pages; i++)
		if (!strcmp(s->pages[i]->target_id, target_id))
			return s->pages[i];
	return NULL;
}

static struct sess_page *page_by_session(struct sess *s, const char *session_id)
{
	size_t i;

	if (!session_id)
		return NULL;
	for (i = 0; i < s->n_pages; i++)
		if (!strcmp(s->pages[i]->session_id, session_id))
			return s->pages[i];
	return NULL;
}

/* Queues the setup of a freshly attached, paused page and resumes it. */
static void setup_page(struct sess *s, const char *sid, const char *target_id, const char *url)
{
	struct sess_page *p;

	if (s->n_pages >= SESS_MAX_PAGES) {
		GB_LOGW("sessions", "more than %d tabs: closing the new one", SESS_MAX_PAGES);
		send_forget(s, NULL, "Target.closeTarget",
		            json_pack("{s:s}", "targetId", target_id));
		return;
	}
	p = calloc(1, sizeof(*p));
	if (!p)
		return;
	snprintf(p->target_id, sizeof(p->target_id), "%s", target_id);
	snprintf(p->session_id, sizeof(p->session_id), "%s", sid);
	snprintf(p->main_frame_id, sizeof(p->main_frame_id), "%s", target_id);
	p->url = strdup(url ? url : "about:blank");
	s->pages[s->n_pages++] = p;
	s->pages_opened++;

	send_forget(s, sid, "Page.enable", NULL);
	send_forget(s, sid, "Runtime.enable", NULL);
	add_press_binding(s, sid);
	add_world(s, sid);
	send_forget(s, sid, "Network.enable", network_params());
	send_forget(s, sid, "Inspector.enable", NULL);
	send_forget(s, sid, "Page.setInterceptFileChooserDialog", file_chooser_params());
	/* a headless page has the focus, as in a window in front (Playwright
	 * does the same): document.hasFocus() and the active element hold */
	send_forget(s, sid, "Emulation.setFocusEmulationEnabled", json_pack("{s:b}", "enabled", 1));
	/* a tab of a small window (host.c): the viewport it would have in a
	 * window of the session's size; before the owner's hook, whose own
	 * emulation (browser_emulate's viewport) then wins */
	if (s->emulated_width)
		send_forget(s, sid, "Emulation.setDeviceMetricsOverride",
		            sess_emulated_viewport_params(s));
	send_forget(s, sid, "Target.setAutoAttach", auto_attach_params());
	if (s->on_target)
		s->on_target(s->on_target_user, s, sid, "page");
	send_forget(s, sid, "Runtime.runIfWaitingForDebugger", NULL);
}

/* Sets up a child target (iframe, worker) and resumes it. */
static void setup_child(struct sess *s, const char *sid, const char *target_id, const char *type)
{
	struct sess_child *c;

	if (s->n_children < SESS_MAX_FRAMES) {
		c = &s->children[s->n_children++];
		snprintf(c->target_id, sizeof(c->target_id), "%s", target_id);
		snprintf(c->session_id, sizeof(c->session_id), "%s", sid);
		snprintf(c->type, sizeof(c->type), "%s", type);
	}
	if (!strcmp(type, "iframe")) {
		send_forget(s, sid, "Page.enable", NULL);
		send_forget(s, sid, "Runtime.enable", NULL);
		add_press_binding(s, sid);
		send_forget(s, sid, "Network.enable", network_params());
		send_forget(s, sid, "Page.setInterceptFileChooserDialog", file_chooser_params());
		send_forget(s, sid, "Target.setAutoAttach", auto_attach_params());
	} else if (strstr(type, "worker")) {
		send_forget(s, sid, "Network.enable", NULL);
	}
	if (s->on_target)
		s->on_target(s->on_target_user, s, sid, type);
	send_forget(s, sid, "Runtime.runIfWaitingForDebugger", NULL);
}

/* 1 when a target attached at the browser's level (event_sid NULL or
 * "") is not the session's: on a shared browser (host.c) every session's
 * connection sees every context's targets, and each holds them paused
 * until it lets them go. Only the session's own context is its own; a
 * target that names no context is not. */
UNITTEST int sess_foreign_target(const struct sess *s, const char *event_sid, json_t *info)
{
	const char *ctx = json_string_value(json_object_get(info, "browserContextId"));

	if (!s->host || (event_sid && event_sid[0]))
		return 0;
	return !s->context_id[0] || !ctx || strcmp(ctx, s->context_id) != 0;
}

static void on_attached(struct sess *s, const char *event_sid, json_t *params)
{
	const char *sid = json_string_value(json_object_get(params, "sessionId"));
	json_t *info = json_object_get(params, "targetInfo");
	const char *tid = json_string_value(json_object_get(info, "targetId"));
	const char *type = json_string_value(json_object_get(info, "type"));
	const char *url = json_string_value(json_object_get(info, "url"));

	if (!sid || !tid || !type)
		return;
	if (sess_foreign_target(s, event_sid, info)) {
		/* another session's: resumed at once (its own connection sets it
		 * up) and let go */
		send_forget(s, sid, "Runtime.runIfWaitingForDebugger", NULL);
		send_forget(s, NULL, "Target.detachFromTarget",
		            json_pack("{s:s}", "sessionId", sid));
		return;
	}
	if (!strcmp(type, "page") && (!event_sid || !event_sid[0]) &&
	    sess_host_take_side_page(s, sid, tid))
		return;
	if (!strcmp(type, "page"))
		setup_page(s, sid, tid, url);
	else
		setup_child(s, sid, tid, type);
}

static void on_detached(struct sess *s, json_t *params)
{
	const char *sid = json_string_value(json_object_get(params, "sessionId"));
	size_t i;

	if (!sid)
		return;
	for (i = 0; i < s->n_pages; i++) {
		if (strcmp(s->pages[i]->session_id, sid))
			continue;
		sess_world_forget(s, sid, 0);
		free_page(s->pages[i]);
		memmove(&s->pages[i], &s->pages[i + 1], (s->n_pages - i - 1) * sizeof(s->pages[0]));
		s->n_pages--;
		if (s->current > i || s->current >= s->n_pages)
			s->current = s->current > 0 ? s->current - 1 : 0;
		return;
	}
	for (i = 0; i < s->n_children; i++) {
		if (strcmp(s->children[i].session_id, sid))
			continue;
		sess_world_forget(s, sid, 0);
		memmove(&s->children[i], &s->children[i + 1],
		        (s->n_children - i - 1) * sizeof(s->children[0]));
		s->n_children--;
		return;
	}
}

static void set_str(char **dst, const char *src)
{
	free(*dst);
	*dst = src ? strdup(src) : NULL;
}

static void on_page_event(struct sess *s, struct sess_page *p, const char *method, json_t *params)
{
	if (!strcmp(method, "Page.frameNavigated")) {
		json_t *frame = json_object_get(params, "frame");

		if (json_object_get(frame, "parentId"))
			return;
		set_str(&p->url, json_string_value(json_object_get(frame, "url")));
		if (json_string_value(json_object_get(frame, "id")))
			snprintf(p->main_frame_id, sizeof(p->main_frame_id), "%s",
			         json_string_value(json_object_get(frame, "id")));
	} else if (!strcmp(method, "Page.navigatedWithinDocument")) {
		if (!strcmp(gb_or(json_string_value(json_object_get(params, "frameId")), ""),
		            p->main_frame_id))
			set_str(&p->url, json_string_value(json_object_get(params, "url")));
	} else if (!strcmp(method, "Page.javascriptDialogOpening")) {
		p->dialog_open = 1;
		p->dialogs_seen++;
		snprintf(p->dialog.type, sizeof(p->dialog.type), "%s",
		         gb_or(json_string_value(json_object_get(params, "type")), "alert"));
		set_str(&p->dialog.message, json_string_value(json_object_get(params, "message")));
		set_str(&p->dialog.default_prompt,
		        json_string_value(json_object_get(params, "defaultPrompt")));
	} else if (!strcmp(method, "Page.javascriptDialogClosed")) {
		p->dialog_open = 0;
	} else if (!strcmp(method, "Inspector.targetCrashed")) {
		p->crashed = 1;
		GB_LOGW("sessions", "a tab of session %s crashed", s->id);
	}
}

static void on_event(void *user, const char *session_id, const char *method, json_t *params)
{
	struct sess *s = user;
	struct sess_page *p;

	if (!strcmp(method, "Target.attachedToTarget"))
		on_attached(s, session_id, params);
	else if (!strcmp(method, "Target.detachedFromTarget"))
		on_detached(s, params);
	else if (!strncmp(method, "Runtime.executionContext", 24))
		sess_worlds_on_event(s, session_id, method, params);
	else if (!strncmp(method, "Page.", 5) || !strncmp(method, "Inspector.", 10)) {
		p = page_by_session(s, session_id);
		if (p)
			on_page_event(s, p, method, params);
	}
}

int sess_targets_start(struct sess *s)
{
	s->listener = cdp_on(s->cdp, NULL, NULL, on_event, s);
	if (s->listener < 0)
		return -1;
	send_forget(s, NULL, "Target.setAutoAttach", auto_attach_params());
	return 0;
}

void sess_targets_stop(struct sess *s)
{
	size_t i;

	if (s->cdp && s->listener > 0)
		cdp_off(s->cdp, s->listener);
	s->listener = 0;
	for (i = 0; i < s->n_pages; i++)
		free_page(s->pages[i]);
	s->n_pages = 0;
	s->n_children = 0;
	s->n_worlds = 0;
}

/* cdp_service() predicate: the page with the awaited target id exists. */
struct wait_page {
	struct sess *s;
	const char *target_id;
};

static int page_attached(void *user)
{
	struct wait_page *w = user;

	return sess_page_by_target(w->s, w->target_id) != NULL;
}

int sess_open_page(struct sess *s, int timeout_ms, char *err, size_t errlen)
{
	struct cdp_error cerr;
	struct wait_page w = { .s = s };
	struct sess_page *p;
	json_t *res = NULL;
	json_t *params;
	size_t i;
	int rc;

	params = json_pack("{s:s}", "url", "about:blank");
	if (s->context_id[0]) /* an adopted browser: the session's own context */
		json_object_set_new(params, "browserContextId", json_string(s->context_id));
	rc = cdp_call(s->cdp, NULL, "Target.createTarget", params, timeout_ms, &res, &cerr);
	if (rc < 0) {
		snprintf(err, errlen, "cannot open a tab: %s", cerr.message);
		goto out;
	}
	w.target_id = json_string_value(json_object_get(res, "targetId"));
	if (!w.target_id) {
		snprintf(err, errlen, "cannot open a tab: Chromium returned no target id");
		rc = -1;
		goto out;
	}
	rc = cdp_service(s->cdp, timeout_ms, page_attached, &w);
	p = sess_page_by_target(s, w.target_id);
	if (rc < 0 || !p) {
		snprintf(err, errlen, "the new tab was not attached: %s", cdp_strerror(rc));
		rc = -1;
		goto out;
	}
	/* Commands run in order per session: this reply means setup is done. */
	rc = cdp_call(s->cdp, p->session_id, "Runtime.evaluate",
	              json_pack("{s:s}", "expression", "0"), timeout_ms, NULL, &cerr);
	if (rc < 0) {
		snprintf(err, errlen, "the new tab could not be set up: %s", cerr.message);
		goto out;
	}
	for (i = 0; i < s->n_pages; i++)
		if (s->pages[i] == p)
			s->current = i;
	rc = 0;
out:
	json_decref(res);
	return rc;
}

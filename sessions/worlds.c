/*
 * worlds.c - the isolated worlds glassbox made, one per frame, kept while
 * they live.
 *
 * Every new document of a page's frames gets the world from its start
 * (targets.c adds it to each page), and Chromium reports
 * it (Runtime.executionContextCreated): that context is remembered, so an
 * action does not ask for it. Page.createIsolatedWorld, for a frame whose
 * world is not known, answers the frame's one world of that name. A world
 * is forgotten when Runtime reports its context destroyed or cleared, or
 * its target detached, so a context id is never used after it died (ids
 * can be reused by the next renderer process of the same target).
 *
 * The DOM mark: the first read of it in a world starts a MutationObserver
 * there, which the page cannot see or stop, watching every change of the
 * document (nodes, attributes, text) from then on. Two marks of one
 * document are equal when nothing changed between them; a mark of another
 * document or world differs. It costs next to nothing to read, however
 * large the page, and nothing is watched in a document nobody asked about.
 */
#include "sessions/sessions-private.h"

#include <jansson.h>
#include <stdio.h>
#include <string.h>

/* Starts watching in a world that is not yet, and returns "<world
 * id>:<n>", n counting the reads that found a change since the one
 * before. The observer stops at the first change it sees and watches
 * again at the next read, so a page that changes all the time costs one
 * callback between two reads. */
const char sess_dom_mark_js[] =
    "(() => { let m = globalThis.__glassboxDom;"
    " const watch = () => m.o.observe(document, { subtree: true, childList: true,"
    " attributes: true, characterData: true });"
    " if (!m) { m = { id: Math.random().toString(36).slice(2) + performance.timeOrigin, n: 0,"
    " dirty: false }; m.o = new MutationObserver(() => { m.dirty = true; m.o.disconnect(); });"
    " globalThis.__glassboxDom = m; watch(); }"
    " else { if (m.o.takeRecords().length) m.dirty = true;"
    " if (m.dirty) { m.n++; m.dirty = false; watch(); } }"
    " return m.id + ':' + m.n; })()";

long long sess_world_find(const struct sess *s, const char *session_id, const char *frame_id)
{
	size_t i;

	for (i = 0; i < s->n_worlds; i++)
		if (!strcmp(s->worlds[i].session_id, session_id) &&
		    !strcmp(s->worlds[i].frame_id, frame_id))
			return s->worlds[i].context_id;
	return 0;
}

/* Drops entry i (order does not matter). */
static void drop(struct sess *s, size_t i)
{
	s->worlds[i] = s->worlds[--s->n_worlds];
}

void sess_world_remember(struct sess *s, const char *session_id, const char *frame_id,
                         long long context_id)
{
	struct sess_world *w;
	size_t i;

	for (i = 0; i < s->n_worlds; i++)
		if (!strcmp(s->worlds[i].session_id, session_id) &&
		    !strcmp(s->worlds[i].frame_id, frame_id))
			break;
	if (i == s->n_worlds) {
		if (s->n_worlds == SESS_MAX_WORLDS)
			drop(s, 0); /* the oldest frame makes a new one when asked again */
		i = s->n_worlds++;
	}
	w = &s->worlds[i];
	snprintf(w->session_id, sizeof(w->session_id), "%s", session_id);
	snprintf(w->frame_id, sizeof(w->frame_id), "%s", frame_id);
	w->context_id = context_id;
}

void sess_world_forget(struct sess *s, const char *session_id, long long context_id)
{
	size_t i = 0;

	while (i < s->n_worlds) {
		if (!strcmp(s->worlds[i].session_id, session_id) &&
		    (context_id == 0 || s->worlds[i].context_id == context_id))
			drop(s, i);
		else
			i++;
	}
}

void sess_worlds_on_event(struct sess *s, const char *session_id, const char *method,
                          json_t *params)
{
	json_t *context = json_object_get(params, "context");
	json_t *aux = json_object_get(context, "auxData");
	const char *frame = json_string_value(json_object_get(aux, "frameId"));
	const char *name = json_string_value(json_object_get(context, "name"));

	if (!session_id)
		return;
	if (!strcmp(method, "Runtime.executionContextCreated") && frame && name &&
	    !strcmp(name, SESS_WORLD_NAME) && json_is_false(json_object_get(aux, "isDefault")) &&
	    json_is_integer(json_object_get(context, "id")))
		sess_world_remember(s, session_id, frame,
		                    (long long)json_integer_value(json_object_get(context, "id")));
	else if (!strcmp(method, "Runtime.executionContextDestroyed"))
		sess_world_forget(
		    s, session_id,
		    (long long)json_integer_value(json_object_get(params, "executionContextId")));
	else if (!strcmp(method, "Runtime.executionContextsCleared"))
		sess_world_forget(s, session_id, 0);
}

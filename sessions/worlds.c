/*
 * worlds.c - the isolated worlds glassbox made, one per frame, kept while
 * they live.
 *
 * Page.createIsolatedWorld makes a new V8 context on every call, kept
 * until the frame's document goes: asking for one per action would cost a
 * round trip and a context each time. The world is made once per document
 * and forgotten when Runtime reports its context destroyed or cleared, or
 * its target detached, so a context id is never used after it died (ids
 * can be reused by the next renderer process of the same target).
 * Chromium makes the world again in each new document of a frame it was
 * made in, and reports it (Runtime.executionContextCreated): that one is
 * remembered too, so the first action on a new page does not ask for it.
 */
#include "sessions/sessions-private.h"

#include <jansson.h>
#include <stdio.h>
#include <string.h>

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

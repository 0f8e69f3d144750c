/*
 * ref_prefetch.c - the objects of a snapshot's likely targets, asked for
 * while the agent reads the answer.
 *
 * An action on a ref starts by resolving it (DOM.resolveNode, in the
 * page's world and in glassbox's isolated world) before anything else can
 * be asked of the element. Once an answer with a new snapshot has left,
 * the first refs a person could act on (buttons, links, fields, ...) are
 * resolved without waiting, in an object group of their own; the next
 * action on one of them takes the replies, which are in by then. A reply
 * is taken only while the snapshot that numbered the ref is the latest
 * and the frame's isolated world is the one it was asked in (the same
 * document; a frame whose world is not known yet gets nothing asked);
 * otherwise, or when it failed, the ref is resolved as it would have
 * been. The group is released when the next snapshot's refs are asked
 * for.
 */
#include "actions/actions-private.h"

#include "cdp/cdp.h"

#include <stdio.h>
#include <string.h>

#define PREFETCH_GROUP "glassbox-prefetch"

/* The roles an agent acts on. */
static const char *const acted_roles[] = {
	"button",           "link",          "textbox",    "searchbox", "combobox",
	"checkbox",         "radio",         "switch",     "menuitem",  "tab",
	"option",           "slider",        "spinbutton", "listbox",   "treeitem",
	"menuitemcheckbox", "menuitemradio", NULL,
};

static int acted_role(const char *role)
{
	size_t i;

	for (i = 0; role && acted_roles[i]; i++)
		if (!strcmp(role, acted_roles[i]))
			return 1;
	return 0;
}

/* The frame a ref's isolated world belongs to (page: the current tab),
 * or NULL. */
static const char *ref_frame(struct sess_page *page, const struct snap_ref *ref)
{
	if (ref->frame_id[0])
		return ref->frame_id;
	return page && !strcmp(ref->session_id, sess_page_session_id(page))
	           ? sess_page_main_frame_id(page)
	           : NULL;
}

/* Releases the group of the last refs asked for in each session they were
 * in, and drops what they left unanswered. */
static void release(struct cdp_conn *cdp, struct act_prefetch *p)
{
	size_t i, j;

	for (i = 0; i < p->n; i++) {
		struct act_prefetched *e = &p->v[i];
		int seen = 0;

		if (e->page_call)
			cdp_forget(cdp, e->page_call);
		if (e->world_call)
			cdp_forget(cdp, e->world_call);
		for (j = 0; j < i && !seen; j++)
			seen = !strcmp(p->v[j].session_id, e->session_id);
		if (!seen) {
			uint64_t id = 0;

			if (cdp_send(cdp, e->session_id, "Runtime.releaseObjectGroup",
			             json_pack("{s:s}", "objectGroup", PREFETCH_GROUP), &id) == 0)
				cdp_forget(cdp, id);
		}
	}
	p->n = 0;
}

void act_prefetch_drop(struct act_session *as)
{
	as->prefetch.n = 0; /* the browser they were asked of is gone */
	as->prefetch.generation = 0;
}

/* Asks for ref's node in the page's world and in its frame's isolated
 * world, when that is known (e->page_call stays 0 otherwise). */
static void ask(struct sess *sess, struct cdp_conn *cdp, const struct snap_ref *ref,
                struct act_prefetched *e)
{
	const char *frame = ref_frame(sess_current_page(sess), ref);

	memset(e, 0, sizeof(*e));
	snprintf(e->ref, sizeof(e->ref), "%s", ref->ref);
	snprintf(e->session_id, sizeof(e->session_id), "%s", ref->session_id);
	e->backend_node_id = ref->backend_node_id;
	e->world = frame ? sess_world_find(sess, ref->session_id, frame) : 0;
	if (!e->world)
		return; /* nothing could tell later that its objects still stand */
	if (cdp_send(cdp, ref->session_id, "DOM.resolveNode",
	             json_pack("{s:i, s:s}", "backendNodeId", ref->backend_node_id, "objectGroup",
	                       PREFETCH_GROUP),
	             &e->page_call) < 0)
		e->page_call = 0;
	if (cdp_send(cdp, ref->session_id, "DOM.resolveNode",
	             json_pack("{s:i, s:I, s:s}", "backendNodeId", ref->backend_node_id,
	                       "executionContextId", (json_int_t)e->world, "objectGroup",
	                       PREFETCH_GROUP),
	             &e->world_call) < 0)
		e->world_call = 0;
}

void act_prefetch_refs(struct act_session *as)
{
	struct act_prefetch *p = &as->prefetch;
	const struct snap_refmap *map = &as->refs;
	struct cdp_conn *cdp = as->sess ? sess_cdp(as->sess) : NULL;
	size_t i;

	if (!cdp || sess_get_state(as->sess) == SESS_FAILED || map->generation == p->generation)
		return;
	release(cdp, p);
	p->generation = map->generation;
	cdp_service(cdp, 0, NULL, NULL); /* a world reported dead is not used */
	for (i = 0; i < map->n_refs && p->n < ACT_PREFETCH_MAX; i++) {
		const struct snap_ref *ref = &map->refs[i];

		if (!acted_role(ref->role) || !ref->backend_node_id)
			continue;
		ask(as->sess, cdp, ref, &p->v[p->n]);
		if (p->v[p->n].page_call)
			p->n++;
	}
}

/* Takes the object id of call into out (outlen bytes); 0 or -1. */
static int take_object(struct act_ctx *ctx, uint64_t call, char *out, size_t outlen)
{
	struct cdp_error err;
	json_t *res = NULL;
	const char *oid;
	int rc = -1;

	if (call && cdp_await(ctx->cdp, call, act_left_ms(ctx), &res, &err) == 0) {
		oid =
		    json_string_value(json_object_get(json_object_get(res, "object"), "objectId"));
		if (oid && strlen(oid) < outlen) {
			memcpy(out, oid, strlen(oid) + 1);
			rc = 0;
		}
	}
	json_decref(res);
	return rc;
}

int act_prefetch_take(struct act_ctx *ctx, const struct snap_ref *ref, char *object_id,
                      size_t object_len, char *world_object_id, size_t world_len)
{
	struct act_prefetch *p = &ctx->as->prefetch;
	const char *frame = ref_frame(ctx->page, ref);
	struct act_prefetched *e = NULL;
	size_t i;
	int rc;

	if (p->generation != ctx->as->refs.generation)
		return -1;
	for (i = 0; i < p->n && !e; i++)
		if (!strcmp(p->v[i].ref, ref->ref) &&
		    !strcmp(p->v[i].session_id, ref->session_id) &&
		    p->v[i].backend_node_id == ref->backend_node_id && p->v[i].page_call)
			e = &p->v[i];
	if (!e)
		return -1;
	cdp_service(ctx->cdp, 0, NULL, NULL); /* a world reported dead is not used */
	/* the frame's isolated world is the one it was asked in: the same
	 * document, so the page's object is of it too */
	if (e->world && frame && sess_world_find(ctx->sess, ref->session_id, frame) == e->world) {
		rc = take_object(ctx, e->page_call, object_id, object_len);
		if (rc < 0)
			cdp_forget(ctx->cdp, e->world_call);
		else if (take_object(ctx, e->world_call, world_object_id, world_len) < 0)
			world_object_id[0] = '\0';
	} else {
		rc = -1;
		cdp_forget(ctx->cdp, e->page_call);
		if (e->world_call)
			cdp_forget(ctx->cdp, e->world_call);
	}
	e->page_call = 0;
	e->world_call = 0;
	return rc;
}

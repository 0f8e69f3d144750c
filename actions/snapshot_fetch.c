/*
 * snapshot_fetch.c - the frames ("docs") of a snapshot and their CDP calls:
 * AX trees, frame trees and node descriptions, fetched in rounds of
 * pipelined calls (see the design note in snapshot.c). Every reply is
 * hostile input and type-checked.
 */
#include "actions/snapshot-private.h"

#include "cdp/cdp.h"
#include "common/log.h"
#include "common/util.h"

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* ---- docs and their index ---------------------------------------------- */

/* FNV-1a of a NUL-terminated string. */
static uint64_t hash_str(const char *s)
{
	uint64_t h = 1469598103934665603ull;

	while (*s)
		h = (h ^ (unsigned char)*s++) * 1099511628211ull;
	return h;
}

/* Indexes doc's nodes by nodeId. Returns 0, or -1 when out of memory. */
static int doc_index(struct snap_doc *doc)
{
	size_t i;
	size_t cap = 16;
	while (cap < doc->n_nodes * 2)
		cap *= 2;
	int rc = -1;

	doc->keys = calloc(doc->n_nodes ? doc->n_nodes : 1, sizeof(*doc->keys));
	doc->slots = calloc(cap, sizeof(*doc->slots));
	if (!doc->keys || !doc->slots)
		goto out;
	doc->n_slots = cap;
	for (i = 0; i < doc->n_nodes; i++) {
		const char *k =
		    json_string_value(json_object_get(json_array_get(doc->nodes, i), "nodeId"));
		size_t h;

		doc->keys[i] = k;
		if (!k)
			continue;
		h = (size_t)hash_str(k) & (cap - 1);
		while (doc->slots[h])
			h = (h + 1) & (cap - 1);
		doc->slots[h] = i + 1;
	}
	rc = 0;
out:
	return rc;
}

/* The index of the node with this nodeId, or -1. */
long act_snap_doc_find(const struct snap_doc *doc, const char *node_id)
{
	size_t h;
	long found = -1;

	if (!node_id || !doc->n_slots)
		goto out;
	h = (size_t)hash_str(node_id) & (doc->n_slots - 1);
	while (doc->slots[h] && found < 0) {
		size_t i = doc->slots[h] - 1;

		if (!strcmp(doc->keys[i], node_id))
			found = (long)i;
		h = (h + 1) & (doc->n_slots - 1);
	}
out:
	return found;
}

/* The doc for frame_id, or -1. */
static int doc_by_frame(const struct snap_ctx *x, const char *frame_id)
{
	size_t i;
	int found = -1;

	for (i = 0; i < x->n_docs && found < 0; i++)
		if (x->docs[i].frame_id && !strcmp(x->docs[i].frame_id, frame_id))
			found = (int)i;
	return found;
}

/*
 * Adds a doc to fetch (state DOC_WANTED). session_id and frame_id are
 * borrowed and copied; ids too long for struct snap_ref are refused.
 * Returns its index, or -1 when the frame ceiling is reached or ids are
 * unusable or memory is out.
 */
int act_snap_doc_add(struct snap_ctx *x, const char *session_id, const char *frame_id, int parent)
{
	struct snap_doc *doc;
	int d = -1;

	if (x->n_docs >= SNAP_MAX_FRAMES) {
		GB_LOGW("actions", "snapshot: more than %d frames, the rest are left out",
		        SNAP_MAX_FRAMES);
		goto out;
	}
	if (strlen(session_id) >= SNAP_ID_MAX || (frame_id && strlen(frame_id) >= SNAP_ID_MAX))
		goto out;
	doc = &x->docs[x->n_docs];
	memset(doc, 0, sizeof(*doc));
	doc->session_id = strdup(session_id);
	doc->frame_id = act_snap_xstrdup(frame_id);
	if (!doc->session_id || (frame_id && !doc->frame_id)) {
		free(doc->session_id);
		free(doc->frame_id);
		goto out;
	}
	doc->parent = parent;
	doc->state = DOC_WANTED;
	doc->prefix = -1;
	d = (int)x->n_docs++;
out:
	return d;
}

/* Frees what doc owns (not doc itself: docs live in snap_ctx). */
void act_snap_doc_free(struct snap_doc *doc)
{
	free(doc->session_id);
	free(doc->frame_id);
	free(doc->origin);
	json_decref(doc->result);
	free(doc->info);
	free(doc->keys);
	free(doc->slots);
}

/* "http://host:port" of an http(s) URL, malloc'd, or NULL. */
static char *url_origin(const char *url)
{
	const char *p = NULL;
	const char *end;
	char *origin = NULL;

	if (url && !strncmp(url, "http://", 7))
		p = url + 7;
	else if (url && !strncmp(url, "https://", 8))
		p = url + 8;
	if (!p)
		goto out;
	end = p + strcspn(p, "/?#");
	if (end > p)
		origin = strndup(url, (size_t)(end - url));
out:
	return origin;
}

/* The origin links of doc are relative to (about:srcdoc frames use their
 * parent's). Borrowed. */
const char *act_snap_doc_origin(const struct snap_ctx *x, size_t d)
{
	const char *origin = NULL;
	int hops = 0;
	int i = (int)d;

	while (i >= 0 && !origin && hops++ < SNAP_MAX_FRAMES) {
		origin = x->docs[i].origin;
		i = x->docs[i].parent;
	}
	return origin;
}

/* ---- fetch ------------------------------------------------------------- */

/* Queues one CDP call of this round. params: steals. Returns 0 or -1. */
static int call_send(struct snap_ctx *x, enum call_kind kind, size_t d, size_t node,
                     const char *method, json_t *params)
{
	struct snap_call *grown;
	uint64_t id = 0;
	int rc = -1;
	int sent;

	if (x->n_calls == x->cap_calls) {
		size_t cap = x->cap_calls ? x->cap_calls * 2 : 16;

		grown = realloc(x->calls, cap * sizeof(*grown));
		if (!grown) {
			json_decref(params);
			act_snap_errf(x, "out of memory while taking the snapshot");
			goto out;
		}
		x->calls = grown;
		x->cap_calls = cap;
	}
	sent = cdp_send(x->conn, x->docs[d].session_id, method, params, &id);
	if (sent < 0) {
		act_snap_errf(x, "could not send %s to the browser: %s", method,
		              cdp_strerror(-sent));
		goto out;
	}
	x->calls[x->n_calls].id = id;
	x->calls[x->n_calls].kind = kind;
	x->calls[x->n_calls].method = method;
	x->calls[x->n_calls].doc = d;
	x->calls[x->n_calls].node = node;
	x->n_calls++;
	rc = 0;
out:
	return rc;
}

/* Drops the replies of calls [from, n_calls) of this round. */
static void calls_forget(struct snap_ctx *x, size_t from)
{
	size_t i;

	for (i = from; i < x->n_calls; i++)
		cdp_forget(x->conn, x->calls[i].id);
	x->n_calls = 0;
}

/* Roles whose value is shown after a colon, as Playwright shows an
 * input's or textarea's value. */
static int is_value_role(const char *role)
{
	return !strcmp(role, "textbox") || !strcmp(role, "searchbox") ||
	       !strcmp(role, "spinbutton") || !strcmp(role, "slider") ||
	       !strcmp(role, "combobox") || act_snap_is_value_input_role(role);
}

int act_snap_is_value_input_role(const char *role)
{
	/* Chromium's roles of <input type=date|datetime-local|month|week|time|color> */
	return !strcmp(role, "Date") || !strcmp(role, "DateTime") || !strcmp(role, "InputTime") ||
	       !strcmp(role, "ColorWell");
}

const char *act_snap_ax_value(json_t *n, char *buf, size_t len)
{
	json_t *v = json_object_get(json_object_get(n, "value"), "value");
	double d;

	if (json_is_string(v))
		return json_string_value(v);
	if (!json_is_number(v))
		return NULL;
	d = json_number_value(v);
	if (d == (double)(long long)d && d > -1e15 && d < 1e15)
		snprintf(buf, len, "%lld", (long long)d);
	else
		snprintf(buf, len, "%.15g", d);
	return buf;
}

/* 1 for Chromium's roles of <iframe> and <frame>. */
int act_snap_is_iframe_role(const char *role)
{
	return !strcmp(role, "Iframe") || !strcmp(role, "IframePresentational");
}

/* 1 when a combobox is a native <select> (its options sit in a popup). */
static int has_popup_child(const struct snap_doc *doc, json_t *n)
{
	json_t *kids = json_object_get(n, "childIds");
	json_t *kid;
	size_t i;
	int popup = 0;

	json_array_foreach(kids, i, kid)
	{
		long k = act_snap_doc_find(doc, json_string_value(kid));

		if (k >= 0 && !strcmp(act_snap_ax_role(json_array_get(doc->nodes, (size_t)k)),
		                      "MenuListPopup"))
			popup = 1;
	}
	return popup;
}

/* 1 when AX node n of doc has a value to show after its key: inputs and
 * textareas, not a native <select> (which shows its options). */
int act_snap_shows_value(const struct snap_doc *doc, json_t *n, const char *role)
{
	return is_value_role(role) && !(!strcmp(role, "combobox") && has_popup_child(doc, n));
}

/*
 * Walks the nodes of doc d that will be rendered (from its root) and sends
 * DOM.describeNode for each iframe (to learn its frame) and for each node
 * that shows a non-empty value (to learn whether it is a password field)
 * which the layout of its session does not show as an input.
 * Returns 0 or -1 (error set).
 */
static int scan_node(struct snap_ctx *x, size_t d, size_t idx, unsigned depth)
{
	struct snap_doc *doc = &x->docs[d];
	json_t *n = json_array_get(doc->nodes, idx);
	const char *role = act_snap_ax_role(n);
	int ignored = json_is_true(json_object_get(n, "ignored"));
	int backend = act_snap_ax_backend(n);
	char num[64];
	const char *value = act_snap_ax_value(n, num, sizeof(num));
	json_t *kids = json_object_get(n, "childIds");
	json_t *kid;
	size_t i;
	int rc = 0;
	int pw;

	if (depth > SNAP_MAX_DEPTH || !strcmp(role, "InlineTextBox") || doc->info[idx].scanned)
		goto out;
	doc->info[idx].scanned = 1;
	if (!ignored && backend && act_snap_is_iframe_role(role)) {
		/* a frame's owner: its own children are not rendered */
		rc = call_send(x, CALL_DESCRIBE_FRAME, d, idx, "DOM.describeNode",
		               json_pack("{s:i}", "backendNodeId", backend));
		goto out;
	}
	if (!ignored && act_snap_shows_value(doc, n, role) && value && *value) {
		if (json_is_number(json_object_get(json_object_get(n, "value"), "value"))) {
			doc->info[idx].pw = PW_CLEAR; /* a number: no password field has one */
		} else if (act_snap_all_bullets(value)) {
			doc->info[idx].pw = PW_MASK;
		} else if (!backend) {
			doc->info[idx].pw = PW_HIDE;
		} else if ((pw = act_snap_is_password(x, d, backend)) >= 0) {
			doc->info[idx].pw =
			    pw ? PW_MASK : PW_CLEAR; /* the layout's attributes say */
		} else {
			doc->info[idx].pw = PW_PENDING;
			rc = call_send(x, CALL_DESCRIBE_PW, d, idx, "DOM.describeNode",
			               json_pack("{s:i}", "backendNodeId", backend));
		}
	}
	json_array_foreach(kids, i, kid)
	{
		long k = act_snap_doc_find(doc, json_string_value(kid));

		if (rc == 0 && k >= 0 && (size_t)k != idx)
			rc = scan_node(x, d, (size_t)k, depth + 1);
	}
out:
	return rc;
}

/*
 * Handles the getFullAXTree reply of doc d (res: borrowed; NULL when the
 * call failed with cerr): indexes the nodes, learns the frame id and
 * origin, finds the subtree root. Only the first doc's failure is fatal;
 * another frame that cannot be read is left empty. Returns 0 or -1.
 */
static int on_ax(struct snap_ctx *x, size_t d, json_t *res, const struct cdp_error *cerr)
{
	struct snap_doc *doc = &x->docs[d];
	json_t *nodes = json_object_get(res, "nodes");
	json_t *root;
	const char *fid;
	size_t i;
	int rc = -1;

	if (!json_is_array(nodes) || json_array_size(nodes) == 0) {
		if (d == 0) {
			act_snap_errf(x, "could not read the accessibility tree of the %s: %s",
			              x->subtree ? "target's frame" : "page",
			              res ? "the browser sent no nodes" : cerr->message);
			goto out;
		}
		GB_LOGD("actions", "snapshot: frame %s left empty: %s",
		        doc->frame_id ? doc->frame_id : "?", res ? "no nodes" : cerr->message);
		doc->state = DOC_FAILED;
		rc = 0;
		goto out;
	}
	doc->result = json_incref(res);
	doc->nodes = nodes;
	doc->n_nodes = json_array_size(nodes);
	doc->info = calloc(doc->n_nodes, sizeof(*doc->info));
	if (!doc->info || doc_index(doc) < 0)
		goto nomem;
	for (i = 0; i < doc->n_nodes; i++)
		doc->info[i].child_doc = -1;
	/* The root is the node without a parent (the first one, normally). */
	for (i = 0; i < doc->n_nodes; i++)
		if (!json_object_get(json_array_get(nodes, i), "parentId"))
			break;
	doc->root = i < doc->n_nodes ? i : 0;
	root = json_array_get(nodes, doc->root);
	fid = json_string_value(json_object_get(root, "frameId"));
	if (!doc->frame_id && fid && strlen(fid) < SNAP_ID_MAX)
		doc->frame_id = strdup(fid);
	doc->origin = url_origin(json_string_value(act_snap_ax_prop(root, "url")));
	if (d == 0 && !x->subtree && doc->frame_id && !x->main_frame_id) {
		x->main_frame_id = strdup(doc->frame_id);
		if (!x->main_frame_id)
			goto nomem;
	}
	if (x->subtree && x->root_doc < 0) {
		/* the root is in this frame, or (no frame given) in another frame
		 * of the same session, prefetched from the frame tree */
		for (i = 0; i < doc->n_nodes; i++)
			if (act_snap_ax_backend(json_array_get(nodes, i)) == x->root_backend)
				break;
		if (i < doc->n_nodes) {
			doc->root = i;
			doc->linked = 1;
			x->root_doc = (int)d;
		}
	}
	doc->state = DOC_READY;
	rc = 0;
	goto out;
nomem:
	act_snap_errf(x, "out of memory while reading the accessibility tree");
out:
	return rc;
}

/* Adds a doc (to prefetch) for every frame below frame tree node ft. */
static void tree_prefetch(struct snap_ctx *x, size_t d, json_t *ft, unsigned depth)
{
	json_t *kids = json_object_get(ft, "childFrames");
	json_t *kid;
	size_t i;

	json_array_foreach(kids, i, kid)
	{
		const char *fid = act_snap_jstr2(kid, "frame", "id");

		if (depth > SNAP_MAX_DEPTH)
			break;
		if (fid && doc_by_frame(x, fid) < 0)
			act_snap_doc_add(x, x->docs[d].session_id, fid, -1);
		tree_prefetch(x, d, kid, depth + 1);
	}
}

/* The frame tree node of frame_id below ft, or NULL. */
static json_t *tree_find(json_t *ft, const char *frame_id, unsigned depth)
{
	json_t *kids = json_object_get(ft, "childFrames");
	json_t *kid;
	json_t *hit = NULL;
	const char *fid = act_snap_jstr2(ft, "frame", "id");
	size_t i;

	if (fid && !strcmp(fid, frame_id))
		hit = ft;
	json_array_foreach(kids, i, kid)
	{
		if (hit || depth > SNAP_MAX_DEPTH)
			break;
		hit = tree_find(kid, frame_id, depth + 1);
	}
	return hit;
}

/* Notes the frames of the page's tree ft (borrowed) breadth first, the
 * order in which they attach on a page that declares them, which is the
 * order Playwright numbers frames in (its frame f1, f2, ...). */
static void note_frame_order(struct snap_ctx *x, json_t *ft)
{
	json_t *queue[SNAP_MAX_ORDERED_FRAMES];
	size_t head = 0, tail = 0, i;
	json_t *kid;

	x->frame_order = calloc(SNAP_MAX_ORDERED_FRAMES, sizeof(*x->frame_order));
	if (!x->frame_order)
		return;
	queue[tail++] = ft;
	while (head < tail && x->n_frame_order < SNAP_MAX_ORDERED_FRAMES) {
		json_t *f = queue[head++];
		const char *id = act_snap_jstr2(f, "frame", "id");

		snprintf(x->frame_order[x->n_frame_order++], SNAP_ID_MAX, "%s", id ? id : "");
		json_array_foreach(json_object_get(f, "childFrames"), i, kid)
		{
			if (tail == SNAP_MAX_ORDERED_FRAMES)
				break;
			if (json_is_object(kid))
				queue[tail++] = kid;
		}
	}
}

/* Handles a Page.getFrameTree reply: prefetches the frames below doc d,
 * and notes the page's main frame (the root of the page session's tree)
 * and the order of its frames. */
static void on_tree(struct snap_ctx *x, size_t d, json_t *res)
{
	json_t *ft = json_object_get(res, "frameTree");
	const char *top = act_snap_jstr2(ft, "frame", "id");
	json_t *mine;

	if (top && !json_object_get(json_object_get(ft, "frame"), "parentId") &&
	    !strcmp(x->docs[d].session_id,
	            x->opt->page_session_id ? x->opt->page_session_id : "")) {
		if (!x->main_frame_id)
			x->main_frame_id = strdup(top);
		if (!x->frame_order)
			note_frame_order(x, ft);
	}
	if (top && d == 0 && !x->subtree && !x->docs[d].frame_id && strlen(top) < SNAP_ID_MAX)
		x->docs[d].frame_id = strdup(top); /* an AX root without frameId */
	mine = ft && x->docs[d].frame_id ? tree_find(ft, x->docs[d].frame_id, 0) : NULL;
	if (mine)
		tree_prefetch(x, d, mine, 0);
}

/* Handles the describe of iframe node `node` of doc d (res borrowed):
 * links it to the doc of its frame, adding that doc when needed. */
static void on_describe_frame(struct snap_ctx *x, size_t d, size_t node, json_t *res)
{
	const char *fid = act_snap_jstr2(res, "node", "frameId");
	const char *session = NULL;
	int child = -1;

	if (!fid || strlen(fid) >= SNAP_ID_MAX)
		goto out;
	child = doc_by_frame(x, fid);
	if (child < 0) {
		/* not prefetched: out of process (its own session), or new */
		if (x->opt->frame_session)
			session = x->opt->frame_session(x->opt->frame_session_user, fid);
		if (!session || !*session)
			session = x->docs[d].session_id;
		child = act_snap_doc_add(x, session, fid, (int)d);
		if (child >= 0)
			x->docs[child].want_tree = 1;
	}
	/* one owner per frame */
	if (child < 0 || x->docs[child].linked || (size_t)child == d)
		goto out;
	x->docs[child].linked = 1;
	x->docs[child].parent = (int)d;
	x->docs[d].info[node].child_doc = child;
out:
	return;
}

/* Handles the describe of a node that shows a value (res borrowed, NULL
 * when it failed): a password field's value is masked, an unknown one is
 * left out. */
static void on_describe_pw(struct snap_ctx *x, size_t d, size_t node, json_t *res)
{
	json_t *attrs = json_object_get(json_object_get(res, "node"), "attributes");
	size_t i;
	unsigned char pw = res ? PW_CLEAR : PW_HIDE; /* unknown: shown as nothing */

	for (i = 0; i + 1 < json_array_size(attrs); i += 2) {
		const char *an = json_string_value(json_array_get(attrs, i));
		const char *av = json_string_value(json_array_get(attrs, i + 1));

		if (an && av && !strcasecmp(an, "type") && !strcasecmp(av, "password"))
			pw = PW_MASK;
	}
	x->docs[d].info[node].pw = pw;
}

/*
 * Awaits every call of this round in order and handles its reply. A
 * timeout, a closed socket or a cancellation ends the snapshot: the calls
 * not awaited yet are forgotten. Returns 0, or -1 with x->err set.
 */
static int calls_await(struct snap_ctx *x)
{
	size_t i;
	int rc = 0;

	for (i = 0; i < x->n_calls; i++) {
		struct snap_call *call = &x->calls[i];
		struct cdp_error cerr;
		json_t *res = NULL;
		int64_t left = x->deadline_ms - gb_now_ms();

		memset(&cerr, 0, sizeof(cerr));
		rc = cdp_await(x->conn, call->id,
		               left > 0 ? (int)(left < INT32_MAX ? left : INT32_MAX) : 1, &res,
		               &cerr);
		if (rc == -CDP_ETIMEOUT) {
			act_snap_errf(
			    x,
			    "the browser did not answer %s within %d ms: try again, or pass a "
			    "target to snapshot a smaller part of the page",
			    call->method, x->opt->timeout_ms);
			goto fatal;
		}
		if (rc == -CDP_ECLOSED || rc == -CDP_ECANCELLED || rc == -CDP_ENOMEM) {
			act_snap_errf(x, "%s failed: %s", call->method,
			              cerr.message[0] ? cerr.message : cdp_strerror(-rc));
			goto fatal;
		}
		if (rc < 0 && !cerr.message[0])
			snprintf(cerr.message, sizeof(cerr.message), "%s: %s", call->method,
			         cdp_strerror(-rc));
		switch (call->kind) {
		case CALL_AX:
			rc = on_ax(x, call->doc, rc < 0 ? NULL : res, &cerr);
			break;
		case CALL_TREE:
			if (rc == 0)
				on_tree(x, call->doc, res);
			rc = 0;
			break;
		case CALL_DESCRIBE_FRAME:
			if (rc == 0)
				on_describe_frame(x, call->doc, call->node, res);
			rc = 0;
			break;
		case CALL_DESCRIBE_PW:
			on_describe_pw(x, call->doc, call->node, rc < 0 ? NULL : res);
			rc = 0;
			break;
		}
		json_decref(res);
		if (rc < 0)
			goto fatal;
	}
	x->n_calls = 0;
	goto out;
fatal:
	calls_forget(x, i + 1);
	rc = -1;
out:
	return rc;
}

/*
 * Fetches every doc that will be rendered, in pipelined rounds (see the
 * design note). Returns 0, or -1 with the reason in x->err.
 */
int act_snap_fetch(struct snap_ctx *x)
{
	size_t d;
	int rc = -1;

	for (;;) {
		x->n_calls = 0;
		for (d = 0; d < x->n_docs; d++) {
			struct snap_doc *doc = &x->docs[d];

			if (doc->state == DOC_WANTED) {
				json_t *params = doc->frame_id
				                     ? json_pack("{s:s}", "frameId", doc->frame_id)
				                     : json_object();

				doc->state = DOC_FETCHING;
				if (call_send(x, CALL_AX, d, 0, "Accessibility.getFullAXTree",
				              params) < 0)
					goto out;
				if (doc->want_tree &&
				    call_send(x, CALL_TREE, d, 0, "Page.getFrameTree",
				              json_object()) < 0)
					goto out;
			} else if (doc->state == DOC_READY && doc->linked && !doc->scanned) {
				doc->scanned = 1;
				if (scan_node(x, d, doc->root, 0) < 0)
					goto out;
			}
		}
		if (x->n_calls == 0)
			break;
		if (calls_await(x) < 0)
			goto out;
	}
	if (x->root_doc < 0) {
		if (x->root_ref[0])
			act_snap_errf(
			    x,
			    "ref %s is stale: its element is no longer on the page; take a new "
			    "snapshot",
			    x->root_ref);
		else
			act_snap_errf(
			    x,
			    "the target's element is no longer on the page: take a new snapshot");
		goto out;
	}
	rc = 0;
out:
	if (rc < 0)
		calls_forget(x, 0);
	return rc;
}

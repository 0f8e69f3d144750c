/*
 * snapshot_hidden.c - which nodes of the snapshot a person would not see.
 *
 * A page can put text in its accessibility tree that nobody sees on
 * screen ("ignore previous instructions..." off-screen, transparent, in a
 * zero-size or clipped box) to steer an agent. Chromium's AX tree drops
 * display:none and visibility:hidden already; for the rest, one
 * DOMSnapshot.captureSnapshot per CDP session (it covers every frame of
 * that process) gives each rendered node its box and a few computed
 * styles. A node is hidden when
 *   - it or an ancestor has opacity 0, or a clip that leaves nothing
 *     (clip: rect(0 0 0 0), clip-path: inset(50%), or a box of at most
 *     1x1 pixel that hides its overflow: the "visually hidden" pattern);
 *   - its box lies entirely outside its document (off-screen), or
 *   - it is text whose box is empty (font-size 0) or whose colour is fully
 *     transparent.
 * The page's own request is sent before the accessibility trees are
 * fetched and runs alongside them; out-of-process frames' follow. The
 * result is a sorted list of backend node ids per session (and of the
 * elements with an empty box, which get no ref, as in Playwright). The reply
 * is hostile input: every array is type-checked and bounded; a reply
 * that does not parse notes nothing (text is then shown unflagged).
 */
#include "actions/snapshot-private.h"

#include "cdp/cdp.h"
#include "common/log.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define HIDDEN_MAX_NODES (1u << 22) /* nodes of one DOMSnapshot document */

/* The computed styles asked for, in this order (layout.styles indexes). */
static const char *const style_names[] = { "opacity",    "clip",       "clip-path",
	                                   "overflow-x", "overflow-y", "cursor" };
enum { ST_OPACITY, ST_CLIP, ST_CLIP_PATH, ST_OVERFLOW_X, ST_OVERFLOW_Y, ST_CURSOR, ST_COUNT };

/* For qsort and bsearch of backend ids. */
static int cmp_int(const void *a, const void *b)
{
	int x = *(const int *)a, y = *(const int *)b;

	return (x > y) - (x < y);
}

/* strings[idx] of a DOMSnapshot reply, or "". */
static const char *str_at(json_t *strings, json_t *idx)
{
	const char *s =
	    json_is_integer(idx)
	        ? json_string_value(json_array_get(strings, (size_t)json_integer_value(idx)))
	        : NULL;

	return s ? s : "";
}

/* 1 when a clip or clip-path value leaves nothing visible. */
static int clips_everything(const char *clip, const char *clip_path)
{
	return strstr(clip, "rect(0px, 0px, 0px, 0px)") || strstr(clip, "rect(0px 0px 0px 0px)") ||
	       strstr(clip_path, "inset(50%") || strstr(clip_path, "circle(0");
}

/* Appends id to the list *ids (n used, cap allocated); -1 when memory is out. */
static int push_id(int **ids, size_t *n, size_t *cap, int id)
{
	if (*n == *cap) {
		size_t nc = *cap ? *cap * 2 : 64;
		int *grown = realloc(*ids, nc * sizeof(**ids));

		if (!grown)
			return -1;
		*ids = grown;
		*cap = nc;
	}
	(*ids)[(*n)++] = id;
	return 0;
}

/* Notes the hidden nodes of one DOMSnapshot document into set->ids, and
 * the elements whose cursor is a pointer where their parent's is not
 * (where a click is offered: Playwright's [cursor=pointer]) into
 * set->pointer (both grown; caps in cap[0], cap[1]). */
/* Notes the box of layout node i (an element) in set->boxes. */
static int push_box(struct snap_hidden_set *set, size_t *cap, json_t *backend, size_t i, double x,
                    double y, double w, double h)
{
	json_t *bid = json_array_get(backend, i);
	struct snap_box *b;

	if (!json_is_integer(bid) || json_integer_value(bid) <= 0 ||
	    json_integer_value(bid) > INT32_MAX)
		return 0;
	if (set->n_boxes == *cap) {
		size_t n = *cap ? *cap * 2 : 256;
		struct snap_box *grown = realloc(set->boxes, n * sizeof(*grown));

		if (!grown)
			return -1;
		set->boxes = grown;
		*cap = n;
	}
	b = &set->boxes[set->n_boxes++];
	b->id = (int)json_integer_value(bid);
	b->x = (int)lround(x);
	b->y = (int)lround(y);
	b->w = (int)lround(w);
	b->h = (int)lround(h);
	return 0;
}

/* 1 when the attributes of a DOMSnapshot node (pairs of string indexes)
 * give it type password. */
static int is_password_type(json_t *attrs, json_t *strings)
{
	size_t i;

	for (i = 0; i + 1 < json_array_size(attrs); i += 2)
		if (!strcasecmp(str_at(strings, json_array_get(attrs, i)), "type") &&
		    !strcasecmp(str_at(strings, json_array_get(attrs, i + 1)), "password"))
			return 1;
	return 0;
}

/* Notes the input elements of one DOMSnapshot document, and which are
 * password fields (caps in cap[0], cap[1]). */
static int scan_inputs(json_t *nodes, json_t *strings, struct snap_hidden_set *set, size_t *cap)
{
	json_t *backend = json_object_get(nodes, "backendNodeId");
	json_t *name = json_object_get(nodes, "nodeName");
	json_t *attrs = json_object_get(nodes, "attributes");
	size_t i;

	for (i = 0; i < json_array_size(backend); i++) {
		json_t *bid = json_array_get(backend, i);
		int id;

		if (!json_is_integer(bid) || json_integer_value(bid) <= 0 ||
		    json_integer_value(bid) > INT32_MAX ||
		    strcasecmp(str_at(strings, json_array_get(name, i)), "input") != 0)
			continue;
		id = (int)json_integer_value(bid);
		if (push_id(&set->inputs, &set->n_inputs, &cap[0], id) < 0 ||
		    (is_password_type(json_array_get(attrs, i), strings) &&
		     push_id(&set->passwords, &set->n_passwords, &cap[1], id) < 0))
			return -1;
	}
	return 0;
}

static int scan_document(json_t *doc, json_t *strings, struct snap_hidden_set *set, size_t *cap)
{
	json_t *nodes = json_object_get(doc, "nodes");
	json_t *backend = json_object_get(nodes, "backendNodeId");
	json_t *parent = json_object_get(nodes, "parentIndex");
	json_t *type = json_object_get(nodes, "nodeType");
	json_t *layout = json_object_get(doc, "layout");
	json_t *lnode = json_object_get(layout, "nodeIndex");
	json_t *lstyles = json_object_get(layout, "styles");
	json_t *lbounds = json_object_get(layout, "bounds");
	json_t *lcolor = json_object_get(layout, "textColorOpacities");
	double sx = json_number_value(json_object_get(doc, "scrollOffsetX"));
	double sy = json_number_value(json_object_get(doc, "scrollOffsetY"));
	double cw = json_number_value(json_object_get(doc, "contentWidth"));
	double ch = json_number_value(json_object_get(doc, "contentHeight"));
	size_t count = json_array_size(backend);
	unsigned char *prop = NULL, *self = NULL, *ptr = NULL, *empty = NULL;
	size_t k, i;
	int rc = -1;

	if (!json_is_array(backend) || count > HIDDEN_MAX_NODES || !json_is_array(lnode) ||
	    scan_inputs(nodes, strings, set, &cap[4]) < 0)
		goto out;
	prop = calloc(count ? count : 1, 1);  /* hides the node and its subtree */
	self = calloc(count ? count : 1, 1);  /* hides the node alone */
	ptr = calloc(count ? count : 1, 1);   /* its cursor is a pointer */
	empty = calloc(count ? count : 1, 1); /* an element with an empty box */
	if (!prop || !self || !ptr || !empty)
		goto out;
	for (k = 0; k < json_array_size(lnode); k++) {
		json_t *ni = json_array_get(lnode, k);
		json_t *st = json_array_get(lstyles, k);
		json_t *b = json_array_get(lbounds, k);
		double x, y, w, h;
		int text;

		if (!json_is_integer(ni) || json_integer_value(ni) < 0 ||
		    (size_t)json_integer_value(ni) >= count || json_array_size(b) != 4)
			continue;
		i = (size_t)json_integer_value(ni);
		x = json_number_value(json_array_get(b, 0));
		y = json_number_value(json_array_get(b, 1));
		w = json_number_value(json_array_get(b, 2));
		h = json_number_value(json_array_get(b, 3));
		text = json_integer_value(json_array_get(type, i)) == 3;
		if (set->want_boxes && !text &&
		    push_box(set, &cap[2], backend, i, x - sx, y - sy, w, h) < 0)
			goto out;
		if (!text && (w <= 0 || h <= 0))
			empty[i] = 1;
		if (json_array_size(st) == ST_COUNT) {
			const char *ox = str_at(strings, json_array_get(st, ST_OVERFLOW_X));
			const char *oy = str_at(strings, json_array_get(st, ST_OVERFLOW_Y));
			int hides_overflow = (!strcmp(ox, "hidden") || !strcmp(ox, "clip")) &&
			                     (!strcmp(oy, "hidden") || !strcmp(oy, "clip"));

			if (!strcmp(str_at(strings, json_array_get(st, ST_OPACITY)), "0") ||
			    clips_everything(str_at(strings, json_array_get(st, ST_CLIP)),
			                     str_at(strings, json_array_get(st, ST_CLIP_PATH))) ||
			    (!text && hides_overflow && w <= 1 && h <= 1))
				prop[i] = 1;
			if (!text &&
			    !strcmp(str_at(strings, json_array_get(st, ST_CURSOR)), "pointer"))
				ptr[i] = 1;
		}
		if (cw > 0 && ch > 0 && w > 0 && h > 0 &&
		    (x + w <= 0 || y + h <= 0 || x >= cw || y >= ch))
			prop[i] = 1; /* off-screen, its subtree with it */
		if (text && (w < 1 || h < 1))
			self[i] = 1;
		if (text && json_is_number(json_array_get(lcolor, k)) &&
		    json_number_value(json_array_get(lcolor, k)) <= 0)
			self[i] = 1;
	}
	/* document order: a parent comes before its children */
	for (i = 0; i < count; i++) {
		json_t *p = json_array_get(parent, i);
		json_int_t pi = json_is_integer(p) ? json_integer_value(p) : -1;
		json_t *bid = json_array_get(backend, i);

		if (pi >= 0 && (size_t)pi < i && prop[pi])
			prop[i] = 1;
		if (!json_is_integer(bid) || json_integer_value(bid) <= 0 ||
		    json_integer_value(bid) > INT32_MAX)
			continue;
		if (ptr[i] && !(pi >= 0 && (size_t)pi < i && ptr[pi]) &&
		    push_id(&set->pointer, &set->n_pointer, &cap[1], (int)json_integer_value(bid)) <
		        0)
			goto out;
		if ((prop[i] || self[i]) &&
		    push_id(&set->ids, &set->n, &cap[0], (int)json_integer_value(bid)) < 0)
			goto out;
		if (empty[i] &&
		    push_id(&set->empty, &set->n_empty, &cap[3], (int)json_integer_value(bid)) < 0)
			goto out;
	}
	rc = 0;
out:
	free(prop);
	free(self);
	free(ptr);
	free(empty);
	return rc;
}

static int cmp_box(const void *a, const void *b)
{
	return cmp_int(&((const struct snap_box *)a)->id, &((const struct snap_box *)b)->id);
}

/* Parses one captureSnapshot reply into set. */
static void parse_reply(json_t *res, struct snap_hidden_set *set)
{
	json_t *docs = json_object_get(res, "documents");
	json_t *strings = json_object_get(res, "strings");
	json_t *first = json_array_get(docs, 0);
	size_t cap[6] = { 0, 0, 0, 0, 0, 0 }, i;

	if (json_is_integer(json_object_get(first, "title")) &&
	    json_is_integer(json_object_get(first, "frameId"))) {
		set->title = strdup(str_at(strings, json_object_get(first, "title")));
		set->frame_id = strdup(str_at(strings, json_object_get(first, "frameId")));
	}

	for (i = 0; i < json_array_size(docs); i++)
		if (scan_document(json_array_get(docs, i), strings, set, cap) < 0)
			break;
	/* a document left half read: what it would say of inputs is unknown */
	set->parsed = i == json_array_size(docs);
	if (set->n_inputs)
		qsort(set->inputs, set->n_inputs, sizeof(*set->inputs), cmp_int);
	if (set->n_passwords)
		qsort(set->passwords, set->n_passwords, sizeof(*set->passwords), cmp_int);
	if (set->n)
		qsort(set->ids, set->n, sizeof(*set->ids), cmp_int);
	if (set->n_pointer)
		qsort(set->pointer, set->n_pointer, sizeof(*set->pointer), cmp_int);
	if (set->n_empty)
		qsort(set->empty, set->n_empty, sizeof(*set->empty), cmp_int);
	if (set->n_boxes)
		qsort(set->boxes, set->n_boxes, sizeof(*set->boxes), cmp_box);
}

/* Notes session (once) and sends its captureSnapshot; the call is
 * awaited by act_snap_fetch_hidden(). */
static void send_capture(struct snap_ctx *x, const char *session_id)
{
	struct snap_hidden_set *set;
	json_t *styles;
	size_t s, k;

	for (s = 0; s < x->n_hidden; s++)
		if (!strcmp(x->hidden[s].session_id, session_id))
			return;
	if (x->n_hidden >= SNAP_MAX_FRAMES)
		return;
	set = &x->hidden[x->n_hidden++];
	memset(set, 0, sizeof(*set));
	snprintf(set->session_id, sizeof(set->session_id), "%s", session_id);
	set->want_boxes = x->opt->boxes;
	styles = json_array();
	for (k = 0; k < ST_COUNT; k++)
		json_array_append_new(styles, json_string(style_names[k]));
	if (cdp_send(
	        x->conn, set->session_id, "DOMSnapshot.captureSnapshot",
	        json_pack("{s:o, s:b}", "computedStyles", styles, "includeTextColorOpacities", 1),
	        &set->call_id) < 0)
		set->call_id = 0;
}

/* Awaits and reads the captureSnapshot of set, when it is on its way. */
static void await_capture(struct snap_ctx *x, struct snap_hidden_set *set)
{
	struct cdp_error err;
	json_t *res = NULL;
	int64_t left = x->deadline_ms - gb_now_ms();
	uint64_t id = set->call_id;

	if (!id)
		return;
	set->call_id = 0;
	if (cdp_await(x->conn, id, left > 1 ? (int)left : 1, &res, &err) == 0)
		parse_reply(res, set);
	else
		GB_LOGD("actions", "no layout for hidden text: %s", err.message);
	json_decref(res);
}

void act_snap_start_hidden(struct snap_ctx *x)
{
	if ((x->opt->hidden != SNAP_HIDDEN_OFF || x->opt->boxes) && x->n_docs)
		send_capture(x, x->docs[0].session_id);
}

const char *act_snap_main_title(const struct snap_ctx *x)
{
	size_t s;

	if (x->subtree || !x->main_frame_id)
		return NULL;
	for (s = 0; s < x->n_hidden; s++)
		if (x->hidden[s].title && x->hidden[s].frame_id &&
		    !strcmp(x->hidden[s].frame_id, x->main_frame_id))
			return x->hidden[s].title;
	return NULL;
}

void act_snap_fetch_hidden(struct snap_ctx *x)
{
	size_t d, s;

	if (x->opt->hidden == SNAP_HIDDEN_OFF && !x->opt->boxes)
		return;
	/* one call per distinct session (out-of-process frames have their own) */
	for (d = 0; d < x->n_docs; d++)
		send_capture(x, x->docs[d].session_id);
	for (s = 0; s < x->n_hidden; s++)
		await_capture(x, &x->hidden[s]);
}

int act_snap_is_password(struct snap_ctx *x, size_t d, int backend_id)
{
	struct snap_hidden_set *set = NULL;
	size_t s;

	for (s = 0; s < x->n_hidden && !set; s++)
		if (!strcmp(x->hidden[s].session_id, x->docs[d].session_id))
			set = &x->hidden[s];
	if (!set || !backend_id)
		return -1;
	await_capture(x, set);
	if (!set->parsed || !set->n_inputs ||
	    !bsearch(&backend_id, set->inputs, set->n_inputs, sizeof(int), cmp_int))
		return -1;
	return set->n_passwords &&
	       bsearch(&backend_id, set->passwords, set->n_passwords, sizeof(int), cmp_int) != NULL;
}

int act_snap_is_hidden(const struct snap_ctx *x, size_t d, int backend_id)
{
	size_t s;

	if (!backend_id || x->opt->hidden == SNAP_HIDDEN_OFF)
		return 0;
	for (s = 0; s < x->n_hidden; s++)
		if (!strcmp(x->hidden[s].session_id, x->docs[d].session_id))
			return x->hidden[s].n &&
			       bsearch(&backend_id, x->hidden[s].ids, x->hidden[s].n, sizeof(int),
			               cmp_int) != NULL;
	return 0;
}

const struct snap_box *act_snap_box(const struct snap_ctx *x, size_t d, int backend_id)
{
	struct snap_box key = { .id = backend_id };
	size_t s;

	for (s = 0; backend_id && s < x->n_hidden; s++)
		if (!strcmp(x->hidden[s].session_id, x->docs[d].session_id))
			return x->hidden[s].n_boxes
			           ? bsearch(&key, x->hidden[s].boxes, x->hidden[s].n_boxes,
			                     sizeof(key), cmp_box)
			           : NULL;
	return NULL;
}

int act_snap_is_pointer(const struct snap_ctx *x, size_t d, int backend_id)
{
	size_t s;

	if (!backend_id)
		return 0;
	for (s = 0; s < x->n_hidden; s++)
		if (!strcmp(x->hidden[s].session_id, x->docs[d].session_id))
			return x->hidden[s].n_pointer &&
			       bsearch(&backend_id, x->hidden[s].pointer, x->hidden[s].n_pointer,
			               sizeof(int), cmp_int) != NULL;
	return 0;
}

int act_snap_box_empty(const struct snap_ctx *x, size_t d, int backend_id)
{
	size_t s;

	if (!backend_id)
		return 0;
	for (s = 0; s < x->n_hidden; s++)
		if (!strcmp(x->hidden[s].session_id, x->docs[d].session_id))
			return x->hidden[s].n_empty &&
			       bsearch(&backend_id, x->hidden[s].empty, x->hidden[s].n_empty,
			               sizeof(int), cmp_int) != NULL;
	return 0;
}

void act_snap_hidden_free(struct snap_ctx *x)
{
	size_t s;

	for (s = 0; s < x->n_hidden; s++) {
		if (x->hidden[s].call_id)
			cdp_forget(x->conn, x->hidden[s].call_id); /* the snapshot failed first */
		free(x->hidden[s].ids);
		free(x->hidden[s].pointer);
		free(x->hidden[s].empty);
		free(x->hidden[s].boxes);
		free(x->hidden[s].inputs);
		free(x->hidden[s].passwords);
		free(x->hidden[s].title);
		free(x->hidden[s].frame_id);
	}
	x->n_hidden = 0;
}

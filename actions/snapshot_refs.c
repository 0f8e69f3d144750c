/*
 * snapshot_refs.c - refs numbered as Playwright numbers them.
 *
 * DESIGN
 *
 * Playwright's aria snapshot gives every element it shows the next number
 * of its frame's document ("e1" is the body, then document order), keeps
 * it on the element while role and name stay, and starts again at e1 in a
 * new document. Here the same holds with DOM.BackendNodeId as the
 * element's identity:
 *   - the map keeps every ref handed out (issued), oldest first, with its
 *     node; a node that comes back with the same role and name gets its
 *     ref again, looked up through an index built once per snapshot;
 *   - each frame prefix has a counter and the document it counts in
 *     (the backend id of its RootWebArea); a new document resets the
 *     counter and retires the refs of the old one;
 *   - numbers are taken while the tree is built (pre-order, before the
 *     children), so a wrapper that is unwrapped later keeps its number
 *     unused, as in Playwright.
 * Only a successful snapshot commits; on failure the map is as it was.
 * The refs kept have a ceiling (SNAP_MAX_ISSUED): the oldest go first.
 */
#include "actions/snapshot-private.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* FNV-1a of the session id mixed with the node id. */
static size_t ref_hash(const char *session_id, int backend_id)
{
	uint64_t h = 1469598103934665603ull;
	const unsigned char *p;

	for (p = (const unsigned char *)session_id; *p; p++)
		h = (h ^ *p) * 1099511628211ull;
	h ^= (uint64_t)(unsigned)backend_id * 0x9e3779b97f4a7c15ull;
	return (size_t)(h ^ (h >> 29));
}

/* 1 when prefix p's document was replaced in this snapshot. */
static int is_retired(const struct snap_ctx *x, int p)
{
	size_t i;

	for (i = 0; i < x->n_retired; i++)
		if (x->retired[i] == p)
			return 1;
	return 0;
}

/* The frame number in a ref ("f2e5" -> 2, "e5" -> 0). */
static int ref_prefix(const char *ref)
{
	long n = ref[0] == 'f' ? strtol(ref + 1, NULL, 10) : 0;

	return n > 0 && n < INT32_MAX ? (int)n : 0;
}

int act_snap_refs_seed(struct snap_ctx *x, const struct snap_refmap *prev)
{
	size_t i;
	int rc = -1;

	x->prev = prev;
	if (prev->n_counters) {
		x->counters = malloc(prev->n_counters * sizeof(*x->counters));
		if (!x->counters)
			goto out;
		memcpy(x->counters, prev->counters, prev->n_counters * sizeof(*x->counters));
		x->n_counters = prev->n_counters;
	}
	if (prev->n_issued) {
		x->n_ix_slots = 16;
		while (x->n_ix_slots < prev->n_issued * 2)
			x->n_ix_slots *= 2;
		x->ix_slots = calloc(x->n_ix_slots, sizeof(*x->ix_slots));
		if (!x->ix_slots)
			goto out;
		/* oldest first: a node's newest ref overwrites its older ones */
		for (i = 0; i < prev->n_issued; i++) {
			const struct snap_ref *r = &prev->issued[i];
			size_t mask = x->n_ix_slots - 1;
			size_t s = ref_hash(r->session_id, r->backend_node_id) & mask;

			while (x->ix_slots[s]) {
				const struct snap_ref *o = &prev->issued[x->ix_slots[s] - 1];

				if (o->backend_node_id == r->backend_node_id &&
				    !strcmp(o->session_id, r->session_id))
					break;
				s = (s + 1) & mask;
			}
			x->ix_slots[s] = i + 1;
		}
	}
	rc = 0;
out:
	if (rc < 0)
		act_snap_errf(x, "out of memory while numbering the snapshot");
	return rc;
}

/* The backend id of doc's document (its RootWebArea), or 0. */
static int doc_backend(const struct snap_doc *doc)
{
	json_t *n = json_array_get(doc->nodes, 0);

	return !strcmp(act_snap_ax_role(n), "RootWebArea") ? act_snap_ax_backend(n) : 0;
}

/* The counter of prefix p; NULL when memory is out. */
static struct snap_counter *counter_of(struct snap_ctx *x, int p)
{
	struct snap_counter *grown;
	size_t i;

	for (i = 0; i < x->n_counters; i++)
		if (x->counters[i].prefix == p)
			return &x->counters[i];
	grown = realloc(x->counters, (x->n_counters + 1) * sizeof(*grown));
	if (!grown)
		return NULL;
	x->counters = grown;
	memset(&grown[x->n_counters], 0, sizeof(*grown));
	grown[x->n_counters].prefix = p;
	return &grown[x->n_counters++];
}

void act_snap_refs_doc(struct snap_ctx *x, size_t d)
{
	int id = doc_backend(&x->docs[d]);
	int p = x->docs[d].prefix < 0 ? 0 : x->docs[d].prefix;
	struct snap_counter *c;

	if (!id || is_retired(x, p))
		return;
	c = counter_of(x, p);
	if (c && (c->doc_backend != id || strcmp(c->doc_session, x->docs[d].session_id) != 0)) {
		if (c->doc_backend && x->n_retired < SNAP_MAX_FRAMES)
			x->retired[x->n_retired++] = p;
		c->doc_backend = id;
		snprintf(c->doc_session, sizeof(c->doc_session), "%s", x->docs[d].session_id);
		c->last = 0;
	}
}

/* The ref node s had, when it keeps its role and name; NULL otherwise. */
static const struct snap_ref *old_ref(const struct snap_ctx *x, const char *session_id,
                                      const struct snode *s, int prefix)
{
	const struct snap_ref *r;
	size_t mask = x->n_ix_slots - 1;
	size_t slot;

	if (!x->n_ix_slots)
		return NULL;
	slot = ref_hash(session_id, s->backend_id) & mask;
	for (; x->ix_slots[slot]; slot = (slot + 1) & mask) {
		r = &x->prev->issued[x->ix_slots[slot] - 1];
		if (r->backend_node_id != s->backend_id || strcmp(r->session_id, session_id) != 0)
			continue;
		if (ref_prefix(r->ref) != prefix || is_retired(x, prefix) ||
		    strcmp(r->role, s->role) != 0 || strcmp(r->name, s->name ? s->name : "") != 0)
			return NULL;
		return r;
	}
	return NULL;
}

int act_snap_refs_assign(struct snap_ctx *x, struct snode *s)
{
	const struct snap_doc *doc = &x->docs[s->doc];
	int prefix = doc->prefix < 0 ? 0 : doc->prefix;
	const struct snap_ref *had;
	struct snap_counter *c;
	struct snap_ref *r;
	int rc = -1;

	s->ref[0] = '\0';
	if (!s->backend_id || (s->flags & SN_NOREF))
		return 0;
	had = old_ref(x, doc->session_id, s, prefix);
	if (had) {
		snprintf(s->ref, sizeof(s->ref), "%s", had->ref);
		return 0;
	}
	c = counter_of(x, prefix);
	if (!c)
		goto out;
	if (x->n_fresh == x->cap_fresh) {
		size_t cap = x->cap_fresh ? x->cap_fresh * 2 : 64;
		struct snap_ref *grown = realloc(x->fresh, cap * sizeof(*grown));

		if (!grown)
			goto out;
		x->fresh = grown;
		x->cap_fresh = cap;
	}
	c->last++;
	if (prefix > 0)
		snprintf(s->ref, sizeof(s->ref), "f%de%u", prefix, c->last);
	else
		snprintf(s->ref, sizeof(s->ref), "e%u", c->last);
	r = &x->fresh[x->n_fresh];
	memset(r, 0, sizeof(*r));
	snprintf(r->ref, sizeof(r->ref), "%s", s->ref);
	snprintf(r->session_id, sizeof(r->session_id), "%s", doc->session_id);
	snprintf(r->frame_id, sizeof(r->frame_id), "%s", doc->frame_id ? doc->frame_id : "");
	r->backend_node_id = s->backend_id;
	r->role = strdup(s->role);
	r->name = strdup(s->name ? s->name : "");
	if (!r->role || !r->name) {
		free(r->role);
		free(r->name);
		goto out;
	}
	x->n_fresh++;
	rc = 0;
out:
	if (rc < 0)
		act_snap_errf(x, "out of memory while numbering the snapshot");
	return rc;
}

void act_snap_refs_free_array(struct snap_ref *refs, size_t n)
{
	size_t i;

	for (i = 0; refs && i < n; i++) {
		free(refs[i].role);
		free(refs[i].name);
	}
	free(refs);
}

int act_snap_refs_commit(struct snap_ctx *x, struct snap_refmap *map)
{
	size_t keep = 0;
	size_t total;
	size_t skip;
	size_t i;
	struct snap_ref *all;

	for (i = 0; i < map->n_issued; i++)
		keep += !is_retired(x, ref_prefix(map->issued[i].ref));
	total = keep + x->n_fresh;
	all = malloc((total ? total : 1) * sizeof(*all));
	if (!all)
		return -1;
	/* the oldest beyond the ceiling go */
	skip = total > SNAP_MAX_ISSUED ? total - SNAP_MAX_ISSUED : 0;
	total = 0;
	for (i = 0; i < map->n_issued; i++) {
		struct snap_ref *r = &map->issued[i];

		if (is_retired(x, ref_prefix(r->ref)) || skip) {
			skip -= skip && !is_retired(x, ref_prefix(r->ref));
			free(r->role);
			free(r->name);
			continue;
		}
		all[total++] = *r;
	}
	for (i = 0; i < x->n_fresh; i++) {
		if (skip) {
			skip--;
			free(x->fresh[i].role);
			free(x->fresh[i].name);
			continue;
		}
		all[total++] = x->fresh[i];
	}
	free(map->issued);
	map->issued = all;
	map->n_issued = total;
	free(x->fresh);
	x->fresh = NULL;
	x->n_fresh = x->cap_fresh = 0;
	free(map->counters);
	map->counters = x->counters;
	map->n_counters = x->n_counters;
	x->counters = NULL;
	x->n_counters = 0;
	return 0;
}

void act_snap_refs_free(struct snap_ctx *x)
{
	act_snap_refs_free_array(x->fresh, x->n_fresh);
	x->fresh = NULL;
	x->n_fresh = 0;
	free(x->ix_slots);
	x->ix_slots = NULL;
	free(x->counters);
	x->counters = NULL;
}

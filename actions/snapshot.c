/*
 * snapshot.c - the page as the agent sees it: Chromium's accessibility
 * tree rendered as YAML in the shape of Playwright MCP's browser_snapshot,
 * and the map from each ref to the DOM node it names.
 *
 * DESIGN
 *
 * Fetch. Every frame is one "doc": a CDP session, a frame id and the nodes
 * of Accessibility.getFullAXTree for that frame. Docs are fetched in
 * rounds; each round pipelines every call that does not depend on another
 * (cdp_send all, then cdp_await each):
 *   round 1  getFullAXTree and Page.getFrameTree of the first doc;
 *   round 2  getFullAXTree of each same-process frame the frame tree
 *            listed (fetched before its owner iframe is known), and
 *            DOM.describeNode of the first doc's iframes (-> frame id) and
 *            of its nodes that show a value (-> is it a password field?);
 *   round n  the same for the docs linked to an iframe in round n-1.
 *            Out-of-process frames are not in the page's frame tree: the
 *            describe of their iframe names them, opt->frame_session gives
 *            their session, and their tree is fetched in the next round.
 * A page without iframes or filled fields costs one round trip.
 * Subtree: the first doc is the root's frame; a root known only by its
 * node (no frame id) is searched in every frame of its session.
 *
 * Build. The AX nodes become a tree of snodes the way Playwright builds its
 * aria tree ("ai" mode): ignored nodes vanish but keep their children,
 * StaticText becomes text, adjacent texts merge with whitespace collapsed,
 * a text equal to its node's name is dropped, nameless generics with a
 * single child collapse, iframes hold the tree of their frame.
 *
 * Render. One YAML line per node with its ref ("e1", "e2", ... in document
 * order per frame document, numbered by snapshot_refs.c, with "f<N>" in
 * front for the N-th child frame; a frame keeps its number from the
 * previous snapshot, so refs stay the same while the node lives). The
 * output has a ceiling (SNAP_MAX_YAML_BYTES) and max_chars cuts it at a
 * line boundary; only refs on lines that were kept enter the map.
 *
 * Threads: runs on the session's worker thread, which owns the cdp_conn.
 * Input: AX trees come from the page and are hostile; every JSON field is
 * type-checked; each AX node is visited once (cycles and shared children
 * stay linear); nesting depth, frame count and output size have ceilings.
 * Passwords: a value is shown only when DOM.describeNode says the field is
 * not a password (or masked "••••" when it is, or when Chromium already
 * shows bullets); a value that could not be checked is left out. Values
 * are never stored or logged.
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

/* Formats a message into the caller's err buffer (if any). */
void act_snap_errf(struct snap_ctx *x, const char *fmt, ...)
{
	va_list ap;

	if (!x->err || !x->errlen)
		return;
	va_start(ap, fmt);
	vsnprintf(x->err, x->errlen, fmt, ap);
	va_end(ap);
}

/* ---- entry points ------------------------------------------------------ */

/* The frame number in a ref ("f2e5" -> 2, "e5" -> 0). */
static int ref_prefix(const char *ref)
{
	long n = ref[0] == 'f' ? strtol(ref + 1, NULL, 10) : 0;

	return n > 0 && n < INT32_MAX ? (int)n : 0;
}

/*
 * Copies what is needed from the previous map (frame numbers) and from
 * opt->root (which may point into the map) before the map is replaced,
 * and adds the first doc. Returns 0 or -1.
 */
static int snap_seed(struct snap_ctx *x, const struct snap_refmap *map)
{
	const struct snap_options *opt = x->opt;
	const char *page = opt->page_session_id ? opt->page_session_id : "";
	size_t i;
	size_t j;
	int d;
	int rc = -1;

	x->old = calloc(map->n_refs ? map->n_refs : 1, sizeof(*x->old));
	if (!x->old) {
		act_snap_errf(x, "out of memory while taking the snapshot");
		goto out;
	}
	for (i = 0; i < map->n_refs; i++) {
		int p = ref_prefix(map->refs[i].ref);

		if (p > x->next_prefix)
			x->next_prefix = p;
		for (j = 0; j < x->n_old; j++)
			if (!strcmp(x->old[j].frame_id, map->refs[i].frame_id))
				break;
		if (j == x->n_old) {
			snprintf(x->old[j].frame_id, sizeof(x->old[j].frame_id), "%s",
			         map->refs[i].frame_id);
			x->old[j].prefix = p;
			x->n_old++;
		}
	}
	if (opt->root) {
		x->subtree = 1;
		x->root_backend = opt->root->backend_node_id;
		x->root_prefix = ref_prefix(opt->root->ref);
		snprintf(x->root_ref, sizeof(x->root_ref), "%s", opt->root->ref);
		d = act_snap_doc_add(x, opt->root->session_id[0] ? opt->root->session_id : page,
		                     opt->root->frame_id[0] ? opt->root->frame_id : NULL, -1);
	} else {
		d = act_snap_doc_add(x, page, NULL, -1);
	}
	if (d < 0) {
		act_snap_errf(x,
		              "cannot take the snapshot: the CDP session or frame id is invalid");
		goto out;
	}
	x->docs[0].linked = !x->subtree;
	x->docs[0].want_tree = 1;
	x->root_doc = x->subtree ? -1 : 0;
	rc = 0;
out:
	return rc;
}

/* Frees the context and all it holds; NULL is a no-op. */
static void snap_ctx_free(struct snap_ctx *x)
{
	size_t i;

	if (!x)
		return;
	for (i = 0; i < x->n_docs; i++)
		act_snap_doc_free(&x->docs[i]);
	for (i = 0; i < x->n_refs; i++) {
		free(x->refs[i].role);
		free(x->refs[i].name);
	}
	free(x->refs);
	free(x->calls);
	free(x->old);
	free(x->main_frame_id);
	free(x->frame_order);
	act_snap_refs_free(x);
	act_snapshot_lines_free(&x->lines_tab);
	act_snap_snode_free(x->frag);
	act_snap_hidden_free(x);
	gb_buf_free(&x->out);
	gb_buf_free(&x->line);
	free(x);
}

int act_snapshot_take(struct cdp_conn *c, const struct snap_options *opt, struct snap_refmap *map,
                      char **yaml_out, int *truncated, char *err, size_t errlen)
{
	struct snap_ctx *x = NULL;
	const char *title;
	unsigned generation;
	int rc = -1;

	if (err && errlen)
		err[0] = '\0';
	if (yaml_out)
		*yaml_out = NULL;
	if (truncated)
		*truncated = 0;
	if (!c || !opt || !map || !yaml_out || !truncated) {
		if (err && errlen)
			snprintf(err, errlen,
			         "act_snapshot_take: missing connection, options, map or output");
		goto out;
	}
	x = calloc(1, sizeof(*x));
	if (!x) {
		if (err && errlen)
			snprintf(err, errlen, "out of memory while taking the snapshot");
		goto out;
	}
	x->conn = c;
	x->opt = opt;
	x->err = err;
	x->errlen = errlen;
	x->deadline_ms = gb_now_ms() + (opt->timeout_ms > 0 ? opt->timeout_ms : 30000);
	x->limit_chars = opt->max_chars ? opt->max_chars : SIZE_MAX;
	gb_buf_init(&x->out, SNAP_MAX_YAML_BYTES + 256);
	gb_buf_init(&x->line, SNAP_MAX_YAML_BYTES);
	if (snap_seed(x, map) < 0 || act_snap_refs_seed(x, map) < 0)
		goto out;
	act_snap_start_hidden(x);
	if (act_snap_fetch(x) < 0)
		goto out;
	act_snap_fetch_hidden(x);
	if (act_snap_build(x) < 0 || act_snap_render(x) < 0)
		goto out;
	if (opt->stats) {
		opt->stats->hidden_flagged = x->n_hidden_flagged;
		opt->stats->hidden_dropped = x->n_hidden_dropped;
		opt->stats->label_differs = x->n_label_differs;
		title = act_snap_main_title(x);
		opt->stats->title_known = title && strlen(title) < sizeof(opt->stats->title);
		if (opt->stats->title_known)
			memcpy(opt->stats->title, title, strlen(title) + 1);
	}
	if (act_snap_refs_commit(x, map) < 0) {
		act_snap_errf(x, "out of memory while numbering the snapshot");
		goto out;
	}
	generation = map->generation;
	act_snapshot_clear(map);
	map->refs = x->refs;
	map->n_refs = x->n_refs;
	map->generation = generation + 1;
	x->refs = NULL;
	x->n_refs = 0;
	*yaml_out = gb_buf_steal(&x->out);
	if (!*yaml_out) {
		act_snap_errf(x, "out of memory while taking the snapshot");
		goto out;
	}
	*truncated = x->truncated;
	if (opt->lines) {
		act_snapshot_lines_free(opt->lines);
		*opt->lines = x->lines_tab;
		x->lines_tab.v = NULL;
		x->lines_tab.n = 0;
	}
	rc = 0;
out:
	snap_ctx_free(x);
	return rc;
}

const struct snap_ref *act_snapshot_find(const struct snap_refmap *map, const char *ref)
{
	const struct snap_ref *found = NULL;
	size_t i;

	for (i = 0; map && ref && !found && i < map->n_refs; i++)
		if (!strcmp(map->refs[i].ref, ref))
			found = &map->refs[i];
	for (i = map ? map->n_issued : 0; ref && !found && i > 0; i--)
		if (!strcmp(map->issued[i - 1].ref, ref))
			found = &map->issued[i - 1];
	return found;
}

size_t act_snapshot_count_role(const struct snap_refmap *map, const char *role, const char *name)
{
	size_t n = 0;
	size_t i;

	for (i = 0; map && role && i < map->n_refs; i++)
		if (map->refs[i].role && !strcmp(map->refs[i].role, role) &&
		    (!name || !*name || (map->refs[i].name && strcasestr(map->refs[i].name, name))))
			n++;
	return n;
}

void act_snapshot_lines_free(struct snap_lines *lines)
{
	if (!lines)
		return;
	free(lines->v);
	lines->v = NULL;
	lines->n = 0;
}

void act_snapshot_forget(struct snap_refmap *map)
{
	if (!map)
		return;
	act_snapshot_clear(map);
	act_snap_refs_free_array(map->issued, map->n_issued);
	map->issued = NULL;
	map->n_issued = 0;
	free(map->counters);
	map->counters = NULL;
	map->n_counters = 0;
}

void act_snapshot_clear(struct snap_refmap *map)
{
	size_t i;

	for (i = 0; map && i < map->n_refs; i++) {
		free(map->refs[i].role);
		free(map->refs[i].name);
	}
	if (map) {
		free(map->refs);
		map->refs = NULL;
		map->n_refs = 0; /* the generation stays: it only ever grows */
	}
}

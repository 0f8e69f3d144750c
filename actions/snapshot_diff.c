/*
 * snapshot_diff.c - snapshot_mode "changed": only what changed since the
 * last snapshot the agent saw.
 *
 * DESIGN
 *
 * The renderer hands over a line table (offset, depth, ref of each line),
 * so nothing here parses YAML. The view keeps, for each ref, a hash of its
 * own line and of its whole subtree, and for each line without a ref (a
 * text, a /url) a hash of the line with its parent's ref. Walking the new
 * snapshot from the top:
 *   - a subtree with the same hash under the same ref is left out: the
 *     agent has it, and its refs still resolve;
 *   - a ref the view does not have shows whole;
 *   - otherwise the node's line shows when it changed or when one of its
 *     text lines did (with those text lines under it), and its children
 *     are walked the same way, under its line when it shows, else at its
 *     own level.
 * Hashes are FNV-1a 64: a collision would hide a change, which the
 * agent's next whole snapshot (browser_snapshot) shows.
 */
#include "actions/snapshot-private.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static uint64_t fnv_more(uint64_t h, const char *s, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		h = (h ^ (unsigned char)s[i]) * 1099511628211ull;
	return h;
}

static uint64_t fnv(const char *s, size_t n)
{
	return fnv_more(1469598103934665603ull, s, n);
}

/* The line after the subtree of line i. */
static size_t subtree_end(const struct snap_lines *lines, size_t i)
{
	size_t j = i + 1;

	while (j < lines->n && lines->v[j].depth > lines->v[i].depth)
		j++;
	return j;
}

/* Line i without its indentation. */
static const char *bare(const char *yaml, const struct snap_line *l, size_t *len)
{
	size_t cut = (size_t)l->depth * 2;

	*len = l->len - cut;
	return yaml + l->off + cut;
}

/* The hash of line i and of its subtree (indentation relative to it). */
static void hashes(const char *yaml, const struct snap_lines *lines, size_t i, uint64_t *line,
                   uint64_t *tree)
{
	size_t end = subtree_end(lines, i);
	uint64_t h = 1469598103934665603ull;
	const char *s;
	size_t len, j;
	char d[16];

	s = bare(yaml, &lines->v[i], &len);
	*line = fnv(s, len);
	for (j = i; j < end; j++) {
		s = bare(yaml, &lines->v[j], &len);
		snprintf(d, sizeof(d), "%u|", lines->v[j].depth - lines->v[i].depth);
		h = fnv_more(fnv_more(h, d, strlen(d)), s, len);
		h = fnv_more(h, "\n", 1);
	}
	*tree = h;
}

/* The hash of a line without a ref under the node with ref parent. */
static uint64_t text_hash(const char *yaml, const struct snap_line *l, const char *parent)
{
	size_t len;
	const char *s = bare(yaml, l, &len);

	return fnv_more(fnv_more(fnv(parent, strlen(parent)), "\0", 1), s, len);
}

static int seen_cmp(const void *a, const void *b)
{
	return strcmp(((const struct snap_seen *)a)->ref, ((const struct snap_seen *)b)->ref);
}

static int u64_cmp(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* The view's entry of ref, or NULL. */
static const struct snap_seen *seen_find(const struct snap_view *view, const char *ref)
{
	struct snap_seen key;

	snprintf(key.ref, sizeof(key.ref), "%s", ref);
	return view->n ? bsearch(&key, view->v, view->n, sizeof(key), seen_cmp) : NULL;
}

static int text_seen(const struct snap_view *view, uint64_t h)
{
	return view->n_texts && bsearch(&h, view->texts, view->n_texts, sizeof(h), u64_cmp);
}

int act_snapshot_view_set(struct snap_view *view, const char *yaml, const struct snap_lines *lines)
{
	size_t i, n = 0, nt = 0;
	/* the parent of each depth, on the way down */
	const char *parents[SNAP_MAX_DEPTH + 2];

	act_snapshot_view_free(view);
	view->v = calloc(lines->n ? lines->n : 1, sizeof(*view->v));
	view->texts = calloc(lines->n ? lines->n : 1, sizeof(*view->texts));
	if (!view->v || !view->texts) {
		act_snapshot_view_free(view);
		return -1;
	}
	for (i = 0; i < lines->n; i++) {
		const struct snap_line *l = &lines->v[i];
		const char *parent =
		    l->depth && l->depth <= SNAP_MAX_DEPTH + 1 ? parents[l->depth - 1] : "";

		if (l->depth <= SNAP_MAX_DEPTH)
			parents[l->depth] = l->ref;
		if (!l->ref[0]) {
			view->texts[nt++] = text_hash(yaml, l, parent ? parent : "");
			continue;
		}
		snprintf(view->v[n].ref, sizeof(view->v[n].ref), "%s", l->ref);
		hashes(yaml, lines, i, &view->v[n].line_hash, &view->v[n].tree_hash);
		n++;
	}
	qsort(view->v, n, sizeof(*view->v), seen_cmp);
	qsort(view->texts, nt, sizeof(*view->texts), u64_cmp);
	view->n = n;
	view->n_texts = nt;
	return 0;
}

struct walk {
	const struct snap_view *view;
	const char *yaml;
	const struct snap_lines *lines;
	struct gb_buf *out;
	size_t kept;
	char *marks; /* per view entry: still shown */
};

/* Appends line j at depth base + (its depth - from). */
static void put_line(struct walk *w, size_t j, unsigned from, unsigned base)
{
	const struct snap_line *l = &w->lines->v[j];
	size_t len;
	const char *s = bare(w->yaml, l, &len);
	unsigned d = base + (l->depth - from);
	unsigned k;

	for (k = 0; k < d; k++)
		gb_buf_append(w->out, "  ", 2);
	gb_buf_append(w->out, s, len);
	gb_buf_append(w->out, "\n", 1);
}

/* Marks the view's refs in lines [i, end) as still shown. */
static void mark_shown(struct walk *w, size_t i, size_t end)
{
	for (; i < end; i++) {
		const struct snap_seen *s =
		    w->lines->v[i].ref[0] ? seen_find(w->view, w->lines->v[i].ref) : NULL;

		if (s && w->marks)
			w->marks[s - w->view->v] = 1;
	}
}

static void walk_node(struct walk *w, size_t i, unsigned base);

/* Walks the children of line i (or the top lines when i is SIZE_MAX). */
static void walk_kids(struct walk *w, size_t first, size_t end, unsigned depth, unsigned base,
                      const char *parent)
{
	size_t j = first;

	while (j < end) {
		const struct snap_line *l = &w->lines->v[j];
		size_t e = subtree_end(w->lines, j);

		if (l->depth == depth && !l->ref[0]) {
			if (!text_seen(w->view, text_hash(w->yaml, l, parent)))
				put_line(w, j, depth, base);
			else
				w->kept++;
		} else if (l->depth == depth) {
			walk_node(w, j, base);
		}
		j = e;
	}
}

/* 1 when a line without a ref directly under line i changed. */
static int texts_changed(struct walk *w, size_t i, size_t end)
{
	size_t j;

	for (j = i + 1; j < end; j++)
		if (w->lines->v[j].depth == w->lines->v[i].depth + 1 && !w->lines->v[j].ref[0] &&
		    !text_seen(w->view, text_hash(w->yaml, &w->lines->v[j], w->lines->v[i].ref)))
			return 1;
	return 0;
}

static void walk_node(struct walk *w, size_t i, unsigned base)
{
	const struct snap_line *l = &w->lines->v[i];
	const struct snap_seen *s = seen_find(w->view, l->ref);
	size_t end = subtree_end(w->lines, i);
	uint64_t lh, th;
	size_t j;
	int header;

	mark_shown(w, i, i + 1);
	if (!s) { /* new: whole */
		for (j = i; j < end; j++)
			put_line(w, j, l->depth, base);
		return;
	}
	hashes(w->yaml, w->lines, i, &lh, &th);
	if (th == s->tree_hash) {
		mark_shown(w, i, end);
		w->kept++;
		return;
	}
	header = lh != s->line_hash || texts_changed(w, i, end);
	if (header)
		put_line(w, i, l->depth, base);
	walk_kids(w, i + 1, end, l->depth + 1, header ? base + 1 : base, l->ref);
}

char *act_snapshot_changed(const struct snap_view *view, const char *yaml,
                           const struct snap_lines *lines)
{
	struct gb_buf body;
	struct gb_buf out;
	struct walk w = { 0 };
	size_t gone = 0;
	size_t i;
	char *text = NULL;

	if (!view || !view->n)
		return strdup(yaml);
	gb_buf_init(&body, SNAP_MAX_YAML_BYTES + 4096);
	gb_buf_init(&out, SNAP_MAX_YAML_BYTES + 8192);
	w.view = view;
	w.yaml = yaml;
	w.lines = lines;
	w.out = &body;
	w.marks = calloc(view->n, 1);
	walk_kids(&w, 0, lines->n, 0, 0, "");
	for (i = 0; w.marks && i < view->n; i++)
		gone += !w.marks[i];
	if (!body.len)
		gb_buf_appendf(&out, "# unchanged since the last snapshot: its refs stay valid");
	else
		gb_buf_appendf(&out,
		               "# only what changed since the last snapshot (%zu unchanged part%s "
		               "left out: their refs stay valid)",
		               w.kept, w.kept == 1 ? "" : "s");
	if (gone) {
		size_t listed = 0;

		gb_buf_appendf(&out, "\n# gone:");
		for (i = 0; i < view->n && listed < 50; i++)
			if (!w.marks[i]) {
				gb_buf_appendf(&out, " %s", view->v[i].ref);
				listed++;
			}
		if (gone > listed)
			gb_buf_appendf(&out, " and %zu more", gone - listed);
	}
	if (body.len) {
		body.data[--body.len] = '\0'; /* the last newline */
		gb_buf_appendf(&out, "\n");
		gb_buf_append(&out, body.data, body.len);
	}
	if (!out.overflowed && !body.overflowed)
		text = gb_buf_steal(&out);
	free(w.marks);
	gb_buf_free(&out);
	gb_buf_free(&body);
	return text;
}

void act_snapshot_view_free(struct snap_view *view)
{
	if (!view)
		return;
	free(view->v);
	free(view->texts);
	view->v = NULL;
	view->texts = NULL;
	view->n = 0;
	view->n_texts = 0;
}

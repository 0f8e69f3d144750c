/*
 * snapshot_diff.c - snapshot_mode "changed": only the subtrees that
 * changed since the last snapshot the agent saw.
 *
 * DESIGN
 *
 * The renderer hands over a line table (offset, depth, ref of each line),
 * so nothing here parses YAML. For each ref the view keeps two hashes: of
 * its own line and of its whole subtree (the line and those below it).
 * Walking the new snapshot in order:
 *   - a subtree with the same hash under the same ref is left out: the
 *     agent has it, and its refs still resolve;
 *   - a node whose own line is the same but whose subtree is not is left
 *     out itself and its children are walked, as long as each of them has
 *     a ref (a changed text without a ref of its own shows with its node);
 *   - anything else is shown whole, moved to the left edge.
 * Hashes are FNV-1a 64: a collision would hide a change, which the
 * agent's next whole snapshot (browser_snapshot) shows.
 */
#include "actions/snapshot-private.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static uint64_t fnv(const char *s, size_t n)
{
	uint64_t h = 1469598103934665603ull;
	size_t i;

	for (i = 0; i < n; i++)
		h = (h ^ (unsigned char)s[i]) * 1099511628211ull;
	return h;
}

/* The line after the subtree of line i. */
static size_t subtree_end(const struct snap_lines *lines, size_t i)
{
	size_t j = i + 1;

	while (j < lines->n && lines->v[j].depth > lines->v[i].depth)
		j++;
	return j;
}

/* The hash of line i without its indentation, and of its subtree. */
static void hashes(const char *yaml, const struct snap_lines *lines, size_t i, uint64_t *line,
                   uint64_t *tree)
{
	const struct snap_line *l = &lines->v[i];
	size_t end = subtree_end(lines, i);
	size_t cut = (size_t)l->depth * 2;
	const struct snap_line *last = &lines->v[end - 1];

	*line = fnv(yaml + l->off + cut, l->len - cut);
	/* the subtree's bytes, its indentation relative to its root */
	*tree = fnv(yaml + l->off, last->off + last->len - l->off) ^ (uint64_t)l->depth;
}

static int seen_cmp(const void *a, const void *b)
{
	return strcmp(((const struct snap_seen *)a)->ref, ((const struct snap_seen *)b)->ref);
}

/* The view's entry of ref (the view is sorted by ref), or NULL. */
static const struct snap_seen *seen_find(const struct snap_view *view, const char *ref)
{
	struct snap_seen key;

	snprintf(key.ref, sizeof(key.ref), "%s", ref);
	return view && view->n ? bsearch(&key, view->v, view->n, sizeof(key), seen_cmp) : NULL;
}

int act_snapshot_view_set(struct snap_view *view, const char *yaml, const struct snap_lines *lines)
{
	struct snap_seen *v;
	size_t i, n = 0;

	act_snapshot_view_free(view);
	v = calloc(lines->n ? lines->n : 1, sizeof(*v));
	if (!v)
		return -1;
	for (i = 0; i < lines->n; i++) {
		if (!lines->v[i].ref[0])
			continue;
		snprintf(v[n].ref, sizeof(v[n].ref), "%s", lines->v[i].ref);
		hashes(yaml, lines, i, &v[n].line_hash, &v[n].tree_hash);
		n++;
	}
	qsort(v, n, sizeof(*v), seen_cmp);
	view->v = v;
	view->n = n;
	return 0;
}

/* Appends lines [i, end) moved left by depth levels. */
static void emit(struct gb_buf *b, const char *yaml, const struct snap_lines *lines, size_t i,
                 size_t end, unsigned depth)
{
	for (; i < end; i++) {
		const struct snap_line *l = &lines->v[i];
		size_t cut = (size_t)(l->depth >= depth ? depth : l->depth) * 2;

		gb_buf_append(b, yaml + l->off + cut, l->len - cut);
		gb_buf_append(b, "\n", 1);
	}
}

/* 1 when every direct child of line i has a ref. */
static int kids_all_refs(const struct snap_lines *lines, size_t i)
{
	size_t end = subtree_end(lines, i);
	size_t j;

	for (j = i + 1; j < end; j++)
		if (lines->v[j].depth == lines->v[i].depth + 1 && !lines->v[j].ref[0])
			return 0;
	return 1;
}

char *act_snapshot_changed(const struct snap_view *view, const char *yaml,
                           const struct snap_lines *lines)
{
	struct gb_buf body;
	struct gb_buf out;
	size_t kept = 0, gone = 0;
	size_t i = 0;
	char *marks = NULL;
	char *text = NULL;

	if (!view || !view->n)
		return strdup(yaml);
	gb_buf_init(&body, SNAP_MAX_YAML_BYTES + 4096);
	gb_buf_init(&out, SNAP_MAX_YAML_BYTES + 8192);
	while (i < lines->n) {
		const struct snap_line *l = &lines->v[i];
		const struct snap_seen *s = l->ref[0] ? seen_find(view, l->ref) : NULL;
		size_t end = subtree_end(lines, i);
		uint64_t lh, th;

		if (s) {
			hashes(yaml, lines, i, &lh, &th);
			if (th == s->tree_hash) {
				kept++;
				i = end;
				continue;
			}
			if (lh == s->line_hash && end > i + 1 && kids_all_refs(lines, i)) {
				kept++;
				i++;
				continue;
			}
		}
		emit(&body, yaml, lines, i, end, l->depth);
		i = end;
	}
	marks = calloc(view->n, 1);
	for (i = 0; marks && i < lines->n; i++) {
		const struct snap_seen *s =
		    lines->v[i].ref[0] ? seen_find(view, lines->v[i].ref) : NULL;

		if (s)
			marks[s - view->v] = 1;
	}
	for (i = 0; marks && i < view->n; i++)
		gone += !marks[i];
	if (!body.len)
		gb_buf_appendf(&out, "# unchanged since the last snapshot: its refs stay valid");
	else
		gb_buf_appendf(&out,
		               "# changed since the last snapshot (%zu unchanged subtree%s left "
		               "out: their refs stay valid)",
		               kept, kept == 1 ? "" : "s");
	if (gone) {
		size_t listed = 0;

		gb_buf_appendf(&out, "\n# gone:");
		for (i = 0; i < view->n && listed < 50; i++)
			if (!marks[i]) {
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
	free(marks);
	gb_buf_free(&out);
	gb_buf_free(&body);
	return text;
}

void act_snapshot_view_free(struct snap_view *view)
{
	if (!view)
		return;
	free(view->v);
	view->v = NULL;
	view->n = 0;
}

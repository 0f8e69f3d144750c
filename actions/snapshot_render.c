/*
 * snapshot_render.c - the rendered tree becomes YAML lines in Playwright's
 * shape, with a ref per node; output is cut at max_chars (whole lines) or
 * at the byte ceiling, and only refs on kept lines enter the map.
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

/* ---- render ------------------------------------------------------------ */

/* The ref of node s ("e5", "f1e5") into out; 0, or -1 when it has none. */
static int node_ref(const struct snap_ctx *x, const struct snode *s, char *out, size_t outlen)
{
	int n = -1;

	(void)x;
	if (s->backend_id && !(s->flags & SN_NOREF) && s->ref[0])
		n = snprintf(out, outlen, "%s", s->ref);
	return n > 0 && (size_t)n < outlen ? 0 : -1;
}

/* Records ref for the line just written. Returns 0 or -1. */
static int ref_push(struct snap_ctx *x, const struct snode *s, const char *ref)
{
	const struct snap_doc *doc = &x->docs[s->doc];
	struct snap_ref *r;
	int rc = -1;

	if (x->n_refs == x->cap_refs) {
		size_t cap = x->cap_refs ? x->cap_refs * 2 : 64;
		struct snap_ref *grown = realloc(x->refs, cap * sizeof(*grown));

		if (!grown)
			goto out;
		x->refs = grown;
		x->cap_refs = cap;
	}
	r = &x->refs[x->n_refs];
	memset(r, 0, sizeof(*r));
	snprintf(r->ref, sizeof(r->ref), "%s", ref);
	snprintf(r->session_id, sizeof(r->session_id), "%s", doc->session_id);
	snprintf(r->frame_id, sizeof(r->frame_id), "%s", doc->frame_id ? doc->frame_id : "");
	r->backend_node_id = s->backend_id;
	r->role = strdup(s->role);
	r->name =
	    strdup(s->name && act_snap_utf8_chars(s->name, strlen(s->name)) <= SNAP_MAX_NAME_CHARS
	               ? s->name
	               : "");
	if (!r->role || !r->name) {
		free(r->role);
		free(r->name);
		goto out;
	}
	x->n_refs++;
	rc = 0;
out:
	return rc;
}

/* Empties the line buffer for reuse (keeps its memory). */
static void line_reset(struct gb_buf *b)
{
	b->len = 0;
	b->overflowed = 0;
	if (b->data)
		b->data[0] = '\0';
}

/* Appends two spaces per level. */
static int line_indent(struct gb_buf *b, unsigned depth)
{
	unsigned i;
	int rc = 0;

	for (i = 0; i < depth; i++)
		rc |= gb_buf_append(b, "  ", 2);
	return rc;
}

/* Notes the line about to be written at off (for opt->lines): its depth
 * is its indentation, which this file writes ("  " per level). */
static int line_note(struct snap_ctx *x, size_t off, const char *ref)
{
	struct snap_line *l;
	size_t sp = 0;

	if (x->lines_tab.n == x->cap_lines_tab) {
		size_t cap = x->cap_lines_tab ? x->cap_lines_tab * 2 : 256;
		struct snap_line *grown = realloc(x->lines_tab.v, cap * sizeof(*grown));

		if (!grown)
			return -1;
		x->lines_tab.v = grown;
		x->cap_lines_tab = cap;
	}
	while (sp < x->line.len && x->line.data[sp] == ' ')
		sp++;
	l = &x->lines_tab.v[x->lines_tab.n++];
	l->off = off;
	l->len = x->line.len;
	l->depth = (unsigned)(sp / 2);
	snprintf(l->ref, sizeof(l->ref), "%s", ref ? ref : "");
	return 0;
}

/*
 * Moves x->line into the output if it fits under max_chars and the byte
 * ceiling; otherwise marks the snapshot truncated and stops rendering.
 * A ref (may be NULL) is recorded only for a kept line. Returns 0, or -1
 * when memory is out.
 */
static int line_emit(struct snap_ctx *x, const struct snode *s, const char *ref)
{
	size_t chars = x->line.overflowed ? 0 : act_snap_utf8_chars(x->line.data, x->line.len);
	size_t sep = x->n_lines ? 1 : 0;
	int rc = 0;

	if (x->stopped)
		goto out;
	if (x->line.overflowed || x->out_chars + sep + chars > x->limit_chars ||
	    x->out.len + sep + x->line.len > SNAP_MAX_YAML_BYTES) {
		x->truncated = x->stopped = 1;
		goto out;
	}
	rc = -1;
	if ((sep && gb_buf_append(&x->out, "\n", 1) < 0) ||
	    (x->opt->lines && line_note(x, x->out.len, ref) < 0) ||
	    gb_buf_append(&x->out, x->line.data, x->line.len) < 0)
		goto out;
	x->out_chars += sep + chars;
	x->n_lines++;
	if (ref && ref_push(x, s, ref) < 0)
		goto out;
	rc = 0;
out:
	return rc;
}

/* Emits "- text: ..." (or "- text [hidden-text]: ..." for text a person
 * would not see) at depth. */
static int render_text(struct snap_ctx *x, const char *text, int hidden, unsigned depth)
{
	line_reset(&x->line);
	line_indent(&x->line, depth);
	if (hidden) {
		gb_buf_append(&x->line, "- text [hidden-text]: ", 22);
		x->n_hidden_flagged++;
	} else {
		gb_buf_append(&x->line, "- text: ", 8);
	}
	act_snap_yaml_value(&x->line, text);
	return line_emit(x, NULL, NULL);
}

/* Emits "- /name: value" at depth. */
static int render_prop(struct snap_ctx *x, const char *name, const char *value, unsigned depth)
{
	line_reset(&x->line);
	line_indent(&x->line, depth);
	gb_buf_appendf(&x->line, "- /%s: ", name);
	act_snap_yaml_value(&x->line, value);
	return line_emit(x, NULL, NULL);
}

/* Appends a NUL-terminated string (a failure marks b overflowed). */
static void buf_puts(struct gb_buf *b, const char *s)
{
	gb_buf_append(b, s, strlen(s));
}

/* The key of node s (role, "name", [states], [ref=...]) into key. */
static void node_key(struct gb_buf *key, const struct snode *s, const char *ref)
{
	gb_buf_append(key, s->role, strlen(s->role));
	if (s->name && act_snap_utf8_chars(s->name, strlen(s->name)) <= SNAP_MAX_NAME_CHARS) {
		gb_buf_append(key, " ", 1);
		act_snap_json_quote(key, s->name);
	}
	if (s->flags & SN_CHECKED_MIXED)
		buf_puts(key, " [checked=mixed]");
	if (s->flags & SN_CHECKED)
		buf_puts(key, " [checked]");
	if (s->flags & SN_DISABLED)
		buf_puts(key, " [disabled]");
	if (s->flags & SN_EXPANDED)
		buf_puts(key, " [expanded]");
	if (s->flags & SN_ACTIVE)
		buf_puts(key, " [active]");
	if (s->invalid)
		gb_buf_appendf(key, " [invalid=%s]", s->invalid);
	if (s->flags & SN_INVALID)
		buf_puts(key, " [invalid]");
	if (s->level)
		gb_buf_appendf(key, " [level=%d]", s->level);
	if (s->flags & SN_PRESSED_MIXED)
		buf_puts(key, " [pressed=mixed]");
	if (s->flags & SN_PRESSED)
		buf_puts(key, " [pressed]");
	if (s->flags & SN_SELECTED)
		buf_puts(key, " [selected]");
	if (s->flags & SN_HIDDEN)
		buf_puts(key, " [hidden-text]");
	if (s->visible) {
		buf_puts(key, " [label-differs, visible ");
		act_snap_json_quote(key, s->visible);
		buf_puts(key, "]");
	}
	if (ref)
		gb_buf_appendf(key, " [ref=%s]", ref);
	if (s->flags & SN_POINTER)
		buf_puts(key, " [cursor=pointer]");
}

/* Renders node s and its children at depth (Playwright's renderer). */
static int render_node(struct snap_ctx *x, const struct snode *s, unsigned depth)
{
	struct gb_buf key;
	char ref[sizeof(((struct snap_ref *)0)->ref)];
	/* a lone text goes on the node's line, unless only it is hidden */
	const char *text =
	    s->n_kids == 1 && s->kids[0].text && (!s->kids[0].hidden || (s->flags & SN_HIDDEN))
	        ? s->kids[0].text
	        : NULL;
	int has_ref = node_ref(x, s, ref, sizeof(ref)) == 0;
	/* at the depth limit a node shows no children (Playwright's depth) */
	int at_limit = x->opt->max_depth && depth >= x->opt->max_depth;
	const struct snap_box *box =
	    has_ref && x->opt->boxes ? act_snap_box(x, s->doc, s->backend_id) : NULL;
	size_t i;
	int rc = -1;

	gb_buf_init(&key, SNAP_MAX_YAML_BYTES);
	node_key(&key, s, has_ref ? ref : NULL);
	if (box)
		gb_buf_appendf(&key, " [box=%d,%d,%d,%d]", box->x, box->y, box->w, box->h);
	line_reset(&x->line);
	line_indent(&x->line, depth);
	gb_buf_append(&x->line, "- ", 2);
	if (key.overflowed)
		x->line.overflowed = 1;
	else
		act_snap_yaml_key(&x->line, key.data);
	if (text && !act_snap_has_props(s)) {
		gb_buf_append(&x->line, ": ", 2);
		act_snap_yaml_value(&x->line, text);
	} else if ((s->n_kids || act_snap_has_props(s)) && !at_limit) {
		gb_buf_append(&x->line, ":", 1);
	}
	if (line_emit(x, s, has_ref ? ref : NULL) < 0)
		goto out;
	if (s->flags & SN_HIDDEN)
		x->n_hidden_flagged++;
	if (!s->n_kids && !act_snap_has_props(s)) {
		rc = 0;
		goto out;
	}
	if (text && !act_snap_has_props(s)) {
		rc = 0;
		goto out;
	}
	if (at_limit) {
		rc = 0; /* at the depth limit: its children are left out */
		goto out;
	}
	if (s->url && render_prop(x, "url", s->url, depth + 1) < 0)
		goto out;
	if (s->placeholder && render_prop(x, "placeholder", s->placeholder, depth + 1) < 0)
		goto out;
	for (i = 0; i < s->n_kids && !x->stopped; i++) {
		if (s->kids[i].text &&
		    render_text(x, s->kids[i].text, s->kids[i].hidden && !(s->flags & SN_HIDDEN),
		                depth + 1) < 0)
			goto out;
		if (s->kids[i].node && render_node(x, s->kids[i].node, depth + 1) < 0)
			goto out;
	}
	rc = 0;
out:
	gb_buf_free(&key);
	return rc;
}

/* Renders the tree into x->out, cutting at max_chars or the ceiling, and
 * ends a cut text with the marker line. Returns 0 or -1 (out of memory). */
int act_snap_render(struct snap_ctx *x)
{
	size_t i;
	int rc = 0;

	for (i = 0; i < x->frag->n_kids && !x->stopped && rc == 0; i++) {
		if (x->frag->kids[i].text)
			rc = render_text(x, x->frag->kids[i].text, x->frag->kids[i].hidden, 0);
		else
			rc = render_node(x, x->frag->kids[i].node, 0);
	}
	if (rc == 0 && x->truncated)
		rc = gb_buf_appendf(&x->out,
		                    "%s- \xe2\x80\xa6 snapshot truncated at %zu characters: "
		                    "pass a target to see a subtree",
		                    x->n_lines ? "\n" : "", x->out_chars);
	if (rc < 0)
		act_snap_errf(x, "out of memory while rendering the snapshot");
	return rc;
}

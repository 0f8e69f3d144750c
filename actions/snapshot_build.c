/*
 * snapshot_build.c - the AX nodes of the fetched docs become the tree of
 * rendered nodes, by Playwright's rules ("ai" mode): ignored nodes vanish
 * but keep their children, texts merge, nameless generics collapse,
 * iframes hold their frame's tree; password values are masked.
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

/* ---- build ------------------------------------------------------------- */

/* A new node of doc d with this role (borrowed: static or the doc's
 * JSON); NULL when memory is out. */
static struct snode *snode_new(const char *role, size_t d)
{
	struct snode *s = calloc(1, sizeof(*s));

	if (s) {
		s->role = role;
		s->doc = d;
	}
	return s;
}

/* Frees s and its children; NULL is a no-op. */
void act_snap_snode_free(struct snode *s)
{
	size_t i;

	for (i = 0; s && i < s->n_kids; i++) {
		act_snap_snode_free(s->kids[i].node);
		free(s->kids[i].text);
	}
	if (s) {
		free(s->kids);
		free(s->name);
		free(s->url);
		free(s->placeholder);
		free(s->visible);
		free(s);
	}
}

/* Appends a child (takes node or text). Returns 0, or -1 (and frees it). */
static int kid_push(struct snode *s, struct snode *node, char *text)
{
	int rc = -1;

	if (s->n_kids == s->cap_kids) {
		size_t cap = s->cap_kids ? s->cap_kids * 2 : 4;
		struct sitem *grown = realloc(s->kids, cap * sizeof(*grown));

		if (!grown) {
			act_snap_snode_free(node);
			free(text);
			goto out;
		}
		s->kids = grown;
		s->cap_kids = cap;
	}
	s->kids[s->n_kids].node = node;
	s->kids[s->n_kids].text = text;
	s->kids[s->n_kids].hidden = 0;
	s->n_kids++;
	rc = 0;
out:
	return rc;
}

/* Appends a copy of text (borrowed) as a child. Returns 0 or -1. */
static int text_push(struct snode *s, const char *text)
{
	char *t = strdup(text);

	return t ? kid_push(s, NULL, t) : -1;
}

/* Appends a copy of text that a person would not see. Returns 0 or -1. */
static int hidden_text_push(struct snode *s, const char *text)
{
	int rc = text_push(s, text);

	if (rc == 0)
		s->kids[s->n_kids - 1].hidden = 1;
	return rc;
}

/* Playwright's mergeStringChildren: adjacent texts become one normalized
 * text; empty ones go; a lone text equal to the name goes. */
static int merge_texts(struct snode *s)
{
	struct gb_buf acc;
	size_t i;
	size_t o = 0;
	int hidden = 0;
	int rc = -1;

	gb_buf_init(&acc, SIZE_MAX / 2);
	for (i = 0; i <= s->n_kids; i++) {
		/* texts a person sees and texts nobody sees stay apart */
		if (i < s->n_kids && s->kids[i].text && acc.len && s->kids[i].hidden != hidden)
			goto flush;
		if (i < s->n_kids && s->kids[i].text) {
			hidden = s->kids[i].hidden;
			if (gb_buf_append(&acc, s->kids[i].text, strlen(s->kids[i].text)) < 0)
				goto out;
			free(s->kids[i].text);
			s->kids[i].text = NULL;
			continue;
		}
	flush:
		if (acc.len) {
			char *t = act_snap_normalize_ws(acc.data, acc.len);

			if (!t)
				goto out;
			acc.len = 0;
			acc.data[0] = '\0';
			if (*t) {
				/* o < i: the texts merged into t were at [o, i) */
				s->kids[o].node = NULL;
				s->kids[o].hidden = hidden;
				s->kids[o++].text = t;
			} else
				free(t);
			if (i < s->n_kids && s->kids[i].text) {
				i--; /* start the next run with this text */
				continue;
			}
		}
		if (i < s->n_kids)
			s->kids[o++] = s->kids[i];
	}
	s->n_kids = o;
	if (s->n_kids == 1 && s->kids[0].text && s->name && !strcmp(s->kids[0].text, s->name)) {
		free(s->kids[0].text);
		s->n_kids = 0;
	}
	rc = 0;
out:
	if (rc < 0) {
		/* keep the tree consistent: drop what was not moved yet */
		for (; i < s->n_kids; i++) {
			act_snap_snode_free(s->kids[i].node);
			free(s->kids[i].text);
		}
		s->n_kids = o;
	}
	gb_buf_free(&acc);
	return rc;
}

/* 1 when s has /url or /placeholder lines. */
int act_snap_has_props(const struct snode *s)
{
	return s->url || s->placeholder;
}

/* 1 for Playwright's role of a plain container. */
static int is_generic(const struct snode *s)
{
	return !strcmp(s->role, "generic");
}

/*
 * Playwright's exit rules for a finished node s whose children are built,
 * then appends it to parent (or its children, or nothing). Takes s.
 */
static int snode_finish(struct snode *s, struct snode *parent)
{
	struct snode *only;
	const char *text;
	size_t i;
	int rc = 0;

	if (merge_texts(s) < 0) {
		rc = -1;
		goto drop;
	}
	if (s->flags & SN_KEEP)
		goto keep;
	/* removeNamelessImages */
	if (!strcmp(s->role, "img") && !s->name && !s->n_kids)
		goto drop;
	/* inlineTextIntoGeneric */
	only = s->n_kids == 1 ? s->kids[0].node : NULL;
	if (is_generic(s) && !act_snap_has_props(s) && only && is_generic(only) && !only->name &&
	    !(only->flags & SN_ACTIVE) && !act_snap_has_props(only) && only->n_kids == 1 &&
	    only->kids[0].text) {
		s->kids[0].text = only->kids[0].text;
		s->kids[0].hidden = only->kids[0].hidden;
		s->kids[0].node = NULL;
		only->n_kids = 0;
		act_snap_snode_free(only);
	}
	/* removeNameRepeatingChild */
	if (parent->name && is_generic(s) && !(s->flags & SN_ACTIVE) && !act_snap_has_props(s)) {
		text = s->name ? (s->n_kids ? NULL : s->name)
		               : (s->n_kids == 1 && s->kids[0].text ? s->kids[0].text : NULL);
		if (text && !strcmp(text, parent->name))
			goto drop;
	}
	/* unwrapSingleChildGenerics */
	if (is_generic(s) && !s->name && s->n_kids <= 1) {
		int unwrap = 1;

		for (i = 0; i < s->n_kids; i++)
			if (!s->kids[i].node || !s->kids[i].node->backend_id ||
			    (s->kids[i].node->flags & SN_NOREF))
				unwrap = 0;
		if (unwrap) {
			for (i = 0; i < s->n_kids; i++)
				rc |= kid_push(parent, s->kids[i].node, NULL);
			s->n_kids = 0;
			goto drop;
		}
	}
keep:
	rc = kid_push(parent, s, NULL);
	goto out;
drop:
	act_snap_snode_free(s);
out:
	return rc;
}

/* Chromium's role as the ARIA role Playwright shows; NULL when the node
 * adds nothing of its own (its children go to its parent). */
static const char *aria_role(json_t *n)
{
	static const char *const transparent[] = { "RootWebArea",  "WebArea",   "none",
		                                   "presentation", "LabelText", "MenuListPopup",
		                                   "Legend" };
	const char *role = act_snap_ax_role(n);
	const char *type = act_snap_jstr2(n, "role", "type");
	const char *aria = role;
	size_t i;

	if (!strcmp(role, "image"))
		aria = "img";
	else if (act_snap_is_value_input_role(role))
		aria = "textbox";
	else if (!strcmp(role, "MenuListOption"))
		aria = "option";
	else if (!*role || (type && strcmp(type, "role") != 0))
		aria = "generic"; /* Chromium-only roles: Canvas, Pre, Video... */
	for (i = 0; i < sizeof(transparent) / sizeof(transparent[0]); i++)
		if (!strcmp(role, transparent[i]))
			aria = NULL;
	return aria;
}

/* 1 for the roles that are controls by themselves: a pointer cursor on
 * them says nothing new, so only other elements get [cursor=pointer]. */
static int is_interactive(const char *aria)
{
	static const char *const roles[] = {
		"button",        "link",
		"checkbox",      "radio",
		"textbox",       "searchbox",
		"combobox",      "option",
		"menuitem",      "tab",
		"switch",        "slider",
		"spinbutton",    "menuitemcheckbox",
		"menuitemradio", "treeitem",
		"listbox",       "iframe",
	};
	size_t i;

	for (i = 0; i < sizeof(roles) / sizeof(roles[0]); i++)
		if (!strcmp(aria, roles[i]))
			return 1;
	return 0;
}

/* The placeholder attribute of a textbox, from its name sources. */
static const char *ax_placeholder(json_t *n)
{
	json_t *sources = json_object_get(json_object_get(n, "name"), "sources");
	json_t *src;
	const char *found = NULL;
	size_t i;

	json_array_foreach(sources, i, src)
	{
		const char *type = json_string_value(json_object_get(src, "type"));
		const char *attr = json_string_value(json_object_get(src, "attribute"));
		const char *v = act_snap_jstr2(src, "attributeValue", "value");

		if (!found && type && attr && !strcmp(type, "placeholder") &&
		    !strcmp(attr, "placeholder"))
			found = v;
	}
	return found;
}

/* A link's URL as Playwright shows it: relative to the frame's origin when
 * it has the same one; data: URLs cut after the comma. Malloc'd. */
static char *link_url(const char *url, const char *origin)
{
	size_t n = origin ? strlen(origin) : 0;
	const char *comma = strncmp(url, "data:", 5) ? NULL : strchr(url, ',');
	char *out;

	if (comma) {
		out = malloc((size_t)(comma - url) + 1 + 4);
		if (out) {
			memcpy(out, url, (size_t)(comma - url) + 1);
			memcpy(out + (comma - url) + 1, "\xe2\x80\xa6", 4); /* … and its NUL */
		}
	} else if (n && !strncmp(url, origin, n) && url[n] == '/') {
		out = strdup(url + n);
	} else {
		out = strdup(url);
	}
	return out;
}

/* Reads an element's states from its AX properties into s. */
static void snode_states(struct snap_ctx *x, struct snode *s, json_t *n)
{
	const char *checked = json_string_value(act_snap_ax_prop(n, "checked"));
	const char *pressed = json_string_value(act_snap_ax_prop(n, "pressed"));
	const char *invalid = json_string_value(act_snap_ax_prop(n, "invalid"));
	json_t *level = act_snap_ax_prop(n, "level");

	if (checked && !strcmp(checked, "mixed"))
		s->flags |= SN_CHECKED_MIXED;
	else if (act_snap_jtrue(act_snap_ax_prop(n, "checked")))
		s->flags |= SN_CHECKED;
	if (act_snap_jtrue(act_snap_ax_prop(n, "disabled")))
		s->flags |= SN_DISABLED;
	if (act_snap_jtrue(act_snap_ax_prop(n, "expanded")))
		s->flags |= SN_EXPANDED;
	if (act_snap_jtrue(act_snap_ax_prop(n, "focused"))) {
		s->flags |= SN_ACTIVE;
		x->n_active++;
	}
	if (invalid && (!strcmp(invalid, "grammar") || !strcmp(invalid, "spelling")))
		s->invalid = !strcmp(invalid, "grammar") ? "grammar" : "spelling";
	else if (act_snap_jtrue(act_snap_ax_prop(n, "invalid")))
		s->flags |= SN_INVALID;
	if (pressed && !strcmp(pressed, "mixed"))
		s->flags |= SN_PRESSED_MIXED;
	else if (act_snap_jtrue(act_snap_ax_prop(n, "pressed")))
		s->flags |= SN_PRESSED;
	if (act_snap_jtrue(act_snap_ax_prop(n, "selected")))
		s->flags |= SN_SELECTED;
	if (!strcmp(s->role, "heading") && json_is_integer(level) &&
	    json_integer_value(level) > 0 && json_integer_value(level) < 100)
		s->level = (int)json_integer_value(level);
}

/* The place of frame_id in the page's frame tree (the main frame 0, its
 * frames breadth first from 1), or 0 when it is not there. */
static int frame_place(const struct snap_ctx *x, const char *frame_id)
{
	size_t i;

	for (i = 1; frame_id && i < x->n_frame_order; i++)
		if (!strcmp(x->frame_order[i], frame_id))
			return (int)i;
	return 0;
}

/* Assigns doc d its ref prefix: none for the main frame; a subtree's
 * frame keeps the prefix of its ref; a frame keeps its number from the
 * previous snapshot; a new frame gets its place in the page's frame tree
 * when that number is free (as Playwright numbers frames in the order
 * they attach, hidden ones too), else the next number. */
static void doc_prefix(struct snap_ctx *x, size_t d)
{
	struct snap_doc *doc = &x->docs[d];
	size_t i;

	if (doc->prefix >= 0)
		goto out;
	if ((!x->subtree && d == 0) ||
	    (doc->frame_id && x->main_frame_id && !strcmp(doc->frame_id, x->main_frame_id)))
		doc->prefix = 0;
	else if (x->subtree && (int)d == x->root_doc && x->root_prefix > 0)
		doc->prefix = x->root_prefix;
	for (i = 0; doc->prefix < 0 && doc->frame_id && i < x->n_old; i++)
		if (!strcmp(x->old[i].frame_id, doc->frame_id) && x->old[i].prefix > 0)
			doc->prefix = x->old[i].prefix;
	if (doc->prefix < 0) {
		int place = frame_place(x, doc->frame_id);

		doc->prefix = place > x->next_prefix ? place : x->next_prefix + 1;
		x->next_prefix = doc->prefix;
	}
out:
	return;
}

static int build_node(struct snap_ctx *x, size_t d, size_t idx, struct snode *parent,
                      unsigned depth);

/* 1 when node backend_id of doc d received a secret (opt->masked). */
static int is_masked(const struct snap_ctx *x, size_t d, int backend_id)
{
	size_t i;

	for (i = 0; backend_id && i < x->opt->n_masked; i++)
		if (x->opt->masked[i].backend_node_id == backend_id &&
		    !strcmp(x->opt->masked[i].session_id, x->docs[d].session_id))
			return 1;
	return 0;
}

/* Roles whose name a person reads as what the control does. */
static int is_labelled_control(const char *role)
{
	static const char *const roles[] = {
		"button",        "link",   "menuitem", "menuitemcheckbox",
		"menuitemradio", "tab",    "checkbox", "radio",
		"switch",        "option", NULL
	};
	size_t i;

	for (i = 0; roles[i]; i++)
		if (!strcmp(roles[i], role))
			return 1;
	return 0;
}

/* For a control whose accessible name (an aria-label, say "Cancel") says
 * something its visible text ("Delete") does not: keeps the visible text
 * in s->visible, for [label-differs, visible "Delete"]. Returns 0, or -1
 * when memory is out. */
static int note_label_differs(struct snap_ctx *x, struct snode *s)
{
	struct gb_buf seen;
	char *visible = NULL;
	size_t i;
	int rc = -1;

	if (!s->name || !is_labelled_control(s->role))
		return 0;
	gb_buf_init(&seen, 1 << 16);
	for (i = 0; i < s->n_kids; i++)
		if (s->kids[i].text && !s->kids[i].hidden)
			gb_buf_append(&seen, s->kids[i].text, strlen(s->kids[i].text));
	visible = act_snap_normalize_ws(seen.data ? seen.data : "", seen.len);
	if (!visible)
		goto out;
	if (*visible && !strcasestr(visible, s->name) && !strcasestr(s->name, visible)) {
		if (act_snap_utf8_chars(visible, strlen(visible)) > 100) {
			size_t cut = 100;

			while (cut > 0 && ((unsigned char)visible[cut] & 0xC0) == 0x80)
				cut--;
			visible[cut] = '\0';
		}
		s->visible = visible;
		visible = NULL;
		x->n_label_differs++;
	}
	rc = 0;
out:
	free(visible);
	gb_buf_free(&seen);
	return rc;
}

/* 1 when Chromium left AX node n out as the <label> of a control it
 * names (a checkbox's, a radio's): ignored for "labelFor". */
static int ignored_as_label(json_t *n)
{
	json_t *r;
	size_t i;

	json_array_foreach(json_object_get(n, "ignoredReasons"), i, r)
	{
		const char *why = json_string_value(json_object_get(r, "name"));

		if (why && !strcmp(why, "labelFor"))
			return 1;
	}
	return 0;
}

/* 1 when the <label> of AX node n (doc d) holds an element, not only
 * text: Playwright shows it as a generic of its own then (a label of
 * text alone is inline text, part of its parent's). */
static int label_holds_element(const struct snap_ctx *x, size_t d, json_t *n, unsigned depth)
{
	json_t *kid;
	size_t i;

	json_array_foreach(json_object_get(n, "childIds"), i, kid)
	{
		long k = act_snap_doc_find(&x->docs[d], json_string_value(kid));
		json_t *c = k >= 0 ? json_array_get(x->docs[d].nodes, (size_t)k) : NULL;
		const char *role = c ? act_snap_ax_role(c) : "";

		if (!c)
			continue;
		/* an ignored child (the label's own text, a wrapper) holds
		 * nothing of its own: what is below it counts */
		if (json_is_true(json_object_get(c, "ignored"))) {
			if (depth < 8 && label_holds_element(x, d, c, depth + 1))
				return 1;
			continue;
		}
		if (strcmp(role, "StaticText") != 0 && strcmp(role, "InlineTextBox") != 0 &&
		    strcmp(role, "LineBreak") != 0)
			return 1;
	}
	return 0;
}

/* Builds every child of AX node n (index self) of doc d into parent.
 * Returns 0, or -1 when memory is out. */
static int build_kids(struct snap_ctx *x, size_t d, json_t *n, size_t self, struct snode *parent,
                      unsigned depth)
{
	json_t *kids = json_object_get(n, "childIds");
	json_t *kid;
	size_t i;
	int rc = 0;

	json_array_foreach(kids, i, kid)
	{
		long k = act_snap_doc_find(&x->docs[d], json_string_value(kid));

		if (rc == 0 && k >= 0 && (size_t)k != self)
			rc = build_node(x, d, (size_t)k, parent, depth + 1);
	}
	return rc;
}

/* Builds the root of doc d (an iframe's frame) into parent. */
static int build_doc(struct snap_ctx *x, size_t d, struct snode *parent, unsigned depth)
{
	doc_prefix(x, d);
	act_snap_refs_doc(x, d);
	return build_node(x, d, x->docs[d].root, parent, depth);
}

/* The document's <body>: the last child with a DOM node of the ignored
 * <html> that is the RootWebArea's only child (ignored itself unless it
 * holds only text). Its index in doc, or -1 when not found. */
static long body_index(const struct snap_doc *doc, json_t *root)
{
	json_t *kids = json_object_get(root, "childIds");
	json_t *html;
	json_t *kid;
	long k;
	long found = -1;
	size_t i;

	if (json_array_size(kids) != 1)
		return -1;
	k = act_snap_doc_find(doc, json_string_value(json_array_get(kids, 0)));
	html = k >= 0 ? json_array_get(doc->nodes, (size_t)k) : NULL;
	if (!html || !json_is_true(json_object_get(html, "ignored")))
		return -1;
	json_array_foreach(json_object_get(html, "childIds"), i, kid)
	{
		k = act_snap_doc_find(doc, json_string_value(kid));
		if (k >= 0 && act_snap_ax_backend(json_array_get(doc->nodes, (size_t)k)))
			found = k;
	}
	return found;
}

/*
 * A frame's document as Playwright shows it: its body, a generic node
 * ([active] while the document has the focus) holding the page. Builds
 * it into parent; returns 1 when built, 0 when the body is not found
 * (the document's children then go to parent), -1 when memory is out.
 */
static int build_body(struct snap_ctx *x, size_t d, size_t idx, struct snode *parent,
                      unsigned depth)
{
	struct snap_doc *doc = &x->docs[d];
	json_t *n = json_array_get(doc->nodes, idx);
	long b = body_index(doc, n);
	json_t *body = b >= 0 ? json_array_get(doc->nodes, (size_t)b) : NULL;
	size_t active;
	struct snode *s;
	int rc = -1;

	if (!body || doc->info[b].built)
		return 0;
	doc->info[b].built = 1;
	s = snode_new("generic", d);
	if (!s)
		goto out;
	s->backend_id = act_snap_ax_backend(body);
	if (act_snap_box_empty(x, d, s->backend_id))
		s->flags |= SN_NOREF; /* no height (its children are positioned): no ref */
	active = x->n_active;
	if (act_snap_refs_assign(x, s) < 0 || build_kids(x, d, body, (size_t)b, s, depth) < 0) {
		act_snap_snode_free(s);
		goto out;
	}
	/* the body is the active element while nothing in it has the focus */
	if (act_snap_jtrue(act_snap_ax_prop(n, "focused")) && x->n_active == active)
		s->flags |= SN_ACTIVE;
	rc = snode_finish(s, parent) < 0 ? -1 : 1;
out:
	return rc;
}

/*
 * Adds what AX node idx of doc d contributes to parent: nothing, text,
 * its children (ignored and transparent nodes), or a node. Returns 0, or
 * -1 when memory is out.
 */
static int build_node(struct snap_ctx *x, size_t d, size_t idx, struct snode *parent,
                      unsigned depth)
{
	struct snap_doc *doc = &x->docs[d];
	json_t *n = json_array_get(doc->nodes, idx);
	const char *role = act_snap_ax_role(n);
	const char *name = act_snap_jstr2(n, "name", "value");
	char num[64];
	const char *value = act_snap_ax_value(n, num, sizeof(num));
	unsigned char pw = doc->info[idx].pw;
	const char *aria;
	struct snode *s = NULL;
	int child;
	int popup;
	int ignored;
	int rc = 0;

	if (depth > SNAP_MAX_DEPTH || !strcmp(role, "InlineTextBox") ||
	    !strcmp(role, "ListMarker") || doc->info[idx].built)
		goto out;
	doc->info[idx].built = 1;
	if (!strcmp(role, "StaticText") && !json_is_true(json_object_get(n, "ignored"))) {
		if (name && *name && act_snap_is_hidden(x, d, act_snap_ax_backend(n))) {
			if (x->opt->hidden == SNAP_HIDDEN_DROP)
				x->n_hidden_dropped++;
			else
				rc = hidden_text_push(parent, name);
		} else if (name && *name) {
			rc = text_push(parent, name);
		}
		goto out;
	}
	if (!strcmp(role, "LineBreak") && !json_is_true(json_object_get(n, "ignored"))) {
		rc = text_push(parent, "\n");
		goto out;
	}
	if (!strcmp(role, "RootWebArea") && idx == doc->root) {
		rc = build_body(x, d, idx, parent, depth);
		if (rc != 0) {
			rc = rc < 0 ? -1 : 0;
			goto out;
		}
	}
	aria = act_snap_is_iframe_role(role) ? "iframe" : aria_role(n);
	ignored = json_is_true(json_object_get(n, "ignored"));
	if (((!strcmp(role, "LabelText") || (ignored && ignored_as_label(n))) &&
	     label_holds_element(x, d, n, 0)) ||
	    (!strcmp(role, "form") && (!name || !*name))) {
		aria = "generic"; /* Playwright's: no role of their own */
		ignored = 0;
	}
	if (!aria || ignored) {
		/* no node of its own: its children go to the parent, set apart
		 * as Playwright sets apart the text of block elements */
		popup = !strcmp(role, "MenuListPopup");
		x->popup_depth += popup;
		rc = text_push(parent, " ");
		if (rc == 0)
			rc = build_kids(x, d, n, idx, parent, depth);
		if (rc == 0)
			rc = text_push(parent, " ");
		x->popup_depth -= popup;
		goto out;
	}
	rc = -1;
	s = snode_new(aria, d);
	if (!s)
		goto out;
	s->backend_id = act_snap_ax_backend(n);
	if (act_snap_is_hidden(x, d, s->backend_id) &&
	    !(x->subtree && (int)d == x->root_doc && idx == doc->root)) {
		if (x->opt->hidden == SNAP_HIDDEN_DROP) {
			/* nobody sees it, nor what it holds: left out */
			x->n_hidden_dropped++;
			rc = 0;
			goto out;
		}
		s->flags |= SN_HIDDEN;
	}
	if (x->popup_depth)
		s->flags |= SN_NOREF; /* a native <select>'s options cannot be clicked */
	if (x->subtree && (int)d == x->root_doc && idx == doc->root)
		s->flags |= SN_KEEP;
	else if (act_snap_box_empty(x, d, s->backend_id))
		s->flags |= SN_NOREF; /* nothing to click: Playwright numbers it not */
	if (!strcmp(aria, "iframe")) {
		/* Playwright shows no name for an iframe; its frame is inlined */
		child = doc->info[idx].child_doc;
		if (act_snap_refs_assign(x, s) < 0)
			goto out;
		if (child >= 0 && x->docs[child].state == DOC_READY &&
		    build_doc(x, (size_t)child, s, depth + 1) < 0)
			goto out;
		goto finish;
	}
	if (name && *name) {
		s->name = act_snap_normalize_ws(name, strlen(name));
		if (!s->name)
			goto out;
		if (!*s->name) {
			free(s->name);
			s->name = NULL;
		}
	}
	snode_states(x, s, n);
	if (act_snap_refs_assign(x, s) < 0)
		goto out;
	if (!is_interactive(aria) && act_snap_is_pointer(x, d, s->backend_id))
		s->flags |= SN_POINTER;
	if (!strcmp(aria, "link") && json_string_value(act_snap_ax_prop(n, "url"))) {
		s->url = link_url(json_string_value(act_snap_ax_prop(n, "url")),
		                  act_snap_doc_origin(x, d));
		if (!s->url)
			goto out;
	}
	if (!strcmp(aria, "textbox") && ax_placeholder(n) &&
	    !(s->name && !strcmp(ax_placeholder(n), s->name))) {
		s->placeholder = strdup(ax_placeholder(n));
		if (!s->placeholder)
			goto out;
	}
	if (act_snap_shows_value(doc, n, aria)) {
		/* an input shows its value, not its inner editor's nodes; a value
		 * not known to be clear (password, unchecked) is masked or left out */
		int masked = is_masked(x, d, s->backend_id);

		if (value && *value && (pw == PW_MASK || masked) &&
		    text_push(s, SNAP_PASSWORD_MASK) < 0)
			goto out;
		if (value && *value && pw == PW_CLEAR && !masked && text_push(s, value) < 0)
			goto out;
	} else if (build_kids(x, d, n, idx, s, depth) < 0) {
		goto out;
	} else if (x->opt->hidden != SNAP_HIDDEN_OFF && note_label_differs(x, s) < 0) {
		goto out;
	}
finish:
	rc = snode_finish(s, parent);
	s = NULL; /* taken */
out:
	act_snap_snode_free(s);
	return rc;
}

/* Builds the rendered tree from the root doc (and the frames it holds). */
int act_snap_build(struct snap_ctx *x)
{
	int rc = -1;

	x->frag = snode_new("fragment", 0);
	if (!x->frag || build_doc(x, (size_t)x->root_doc, x->frag, 0) < 0 ||
	    merge_texts(x->frag) < 0) {
		act_snap_errf(x, "out of memory while building the snapshot");
		goto out;
	}
	rc = 0;
out:
	return rc;
}

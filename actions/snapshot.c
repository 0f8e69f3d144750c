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
 * Render. One YAML line per node with its ref ("e<backendNodeId>", with
 * "f<N>" in front for the N-th child frame; a frame keeps its number from
 * the previous snapshot, so refs stay the same while the node lives). The
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
#include "actions/snapshot.h"

#include "cdp/cdp.h"
#include "common/log.h"
#include "common/unittest.h"
#include "common/util.h"

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define SNAP_MAX_FRAMES 64                 /* docs (frames) in one snapshot */
#define SNAP_MAX_DEPTH 512                 /* AX nesting that is rendered */
#define SNAP_MAX_YAML_BYTES (4u << 20)     /* ceiling of the rendered text */
#define SNAP_MAX_NAME_CHARS 900            /* longer names are not shown (as Playwright) */
#define SNAP_ID_MAX 64                     /* session and frame ids (struct snap_ref) */
#define SNAP_PASSWORD_MASK "\xe2\x80\xa2\xe2\x80\xa2\xe2\x80\xa2\xe2\x80\xa2" /* •••• */

/* Exported to the unit tests (UNITTEST is empty there, static here). */
UNITTEST int act_snap_needs_quotes(const char *s);
UNITTEST char *act_snap_normalize_ws(const char *s, size_t n);

/* ---- state ------------------------------------------------------------- */

enum doc_state { DOC_WANTED, DOC_FETCHING, DOC_READY, DOC_FAILED };

/* What a password check found for one node that shows a value. */
enum pw_state { PW_UNKNOWN = 0, PW_PENDING, PW_CLEAR, PW_MASK, PW_HIDE };

/* Per AX node of a doc (parallel to doc->nodes). */
struct ax_info {
	int child_doc;      /* Iframe: the doc of its frame, or -1 */
	unsigned char pw;   /* enum pw_state */
	unsigned char scanned; /* each node is scanned and built once, so that */
	unsigned char built;   /* a malformed tree (cycles, shared children) stays linear */
};

struct snap_doc {
	char *session_id;   /* CDP session that owns the frame */
	char *frame_id;     /* NULL until known (the main frame, from its AX root) */
	char *origin;       /* "http://host:port" of the frame's URL, or NULL */
	int parent;         /* doc of the owner iframe, -1 for the first doc */
	json_t *result;     /* getFullAXTree result (owned) */
	json_t *nodes;      /* its "nodes" (borrowed from result) */
	size_t n_nodes;
	struct ax_info *info;
	const char **keys;  /* nodeId of each node (borrowed) */
	size_t *slots;      /* open-addressing index nodeId -> node + 1 */
	size_t n_slots;
	size_t root;        /* node to render from */
	int state;          /* enum doc_state */
	int linked;         /* rendered: the first doc, or owned by an iframe */
	int scanned;        /* its describes were sent */
	int want_tree;      /* send Page.getFrameTree with its AX tree */
	int prefix;         /* ref prefix "f<N>"; 0 = none; -1 = not assigned yet */
};

enum call_kind { CALL_AX, CALL_TREE, CALL_DESCRIBE_FRAME, CALL_DESCRIBE_PW };

struct snap_call {
	uint64_t id;
	enum call_kind kind;
	const char *method;
	size_t doc;
	size_t node;
};

/* Node flags of the rendered tree. */
enum {
	SN_CHECKED = 1u << 0,
	SN_CHECKED_MIXED = 1u << 1,
	SN_DISABLED = 1u << 2,
	SN_EXPANDED = 1u << 3,
	SN_ACTIVE = 1u << 4,
	SN_INVALID = 1u << 5,
	SN_PRESSED = 1u << 6,
	SN_PRESSED_MIXED = 1u << 7,
	SN_SELECTED = 1u << 8,
	SN_NOREF = 1u << 9,
	SN_KEEP = 1u << 10, /* the subtree root: never collapsed */
};

struct snode;

/* A child of a rendered node: another node or a text (exactly one set). */
struct sitem {
	struct snode *node;
	char *text;
};

/* One node of the rendered tree (Playwright's aria node). */
struct snode {
	const char *role;   /* static, or borrowed from a doc's JSON */
	char *name;         /* whitespace-normalized; NULL = none */
	char *url;          /* link: /url prop */
	char *placeholder;  /* textbox: /placeholder prop */
	const char *invalid; /* "grammar" / "spelling" for [invalid=...], else NULL */
	unsigned flags;
	int level;
	int backend_id;     /* DOM.BackendNodeId; 0 = none */
	size_t doc;
	struct sitem *kids;
	size_t n_kids;
	size_t cap_kids;
};

struct snap_ctx {
	struct cdp_conn *conn;
	const struct snap_options *opt;
	int64_t deadline_ms;
	char *err;
	size_t errlen;

	/* subtree: the node to render, copied out of the caller's ref (whose
	 * ref and frame_id may be empty: a node found by selector) */
	int subtree;
	int root_backend;
	int root_prefix;
	char root_ref[sizeof(((struct snap_ref *)0)->ref)];
	int root_doc;        /* the doc rendered from; -1 until the subtree root is found */
	char *main_frame_id; /* the page's main frame (its refs have no prefix), or NULL */

	/* frame numbers of the previous snapshot, to keep refs stable */
	struct old_prefix {
		char frame_id[SNAP_ID_MAX];
		int prefix;
	} *old;
	size_t n_old;
	int next_prefix;

	struct snap_doc docs[SNAP_MAX_FRAMES];
	size_t n_docs;
	struct snap_call *calls;
	size_t n_calls;
	size_t cap_calls;

	struct snode *frag;  /* the rendered tree's root (its children are the top lines) */
	int popup_depth;     /* inside a native <select>'s popup: options get no ref */

	struct gb_buf out;
	struct gb_buf line;
	size_t out_chars;    /* characters (code points) kept in out */
	size_t n_lines;
	size_t limit_chars;  /* max_chars, or SIZE_MAX */
	int truncated;
	int stopped;

	struct snap_ref *refs;
	size_t n_refs;
	size_t cap_refs;
};

/* Formats a message into the caller's err buffer (if any). */
static void snap_errf(struct snap_ctx *x, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void snap_errf(struct snap_ctx *x, const char *fmt, ...)
{
	va_list ap;

	if (!x->err || !x->errlen)
		return;
	va_start(ap, fmt);
	vsnprintf(x->err, x->errlen, fmt, ap);
	va_end(ap);
}

/* ---- small JSON and string helpers ------------------------------------- */

/* obj[k1][k2] as a string, or NULL. Borrows. */
static const char *jstr2(json_t *obj, const char *k1, const char *k2)
{
	return json_string_value(json_object_get(json_object_get(obj, k1), k2));
}

/* A node's role ("button", "StaticText"...), or "" when absent. */
static const char *ax_role(json_t *n)
{
	const char *r = jstr2(n, "role", "value");

	return r ? r : "";
}

/* The value of property `name` of an AX node, or NULL. Borrows. */
static json_t *ax_prop(json_t *n, const char *name)
{
	json_t *props = json_object_get(n, "properties");
	json_t *p;
	json_t *found = NULL;
	size_t i;

	json_array_foreach(props, i, p) {
		const char *pn = json_string_value(json_object_get(p, "name"));

		if (!found && pn && !strcmp(pn, name))
			found = json_object_get(json_object_get(p, "value"), "value");
	}
	return found;
}

/* 1 when a property value is true or the token "true". */
static int jtrue(json_t *v)
{
	const char *s = json_string_value(v);

	return json_is_true(v) || (s && !strcmp(s, "true"));
}

/* The node's backendDOMNodeId, or 0 when absent or out of range. */
static int ax_backend(json_t *n)
{
	json_t *v = json_object_get(n, "backendDOMNodeId");
	json_int_t id = json_integer_value(v);

	return json_is_integer(v) && id > 0 && id <= INT32_MAX ? (int)id : 0;
}

/* strdup that passes NULL through. */
static char *xstrdup(const char *s)
{
	return s ? strdup(s) : NULL;
}

/* Number of UTF-8 code points in s[0..n). */
static size_t utf8_chars(const char *s, size_t n)
{
	size_t i;
	size_t c = 0;

	for (i = 0; i < n; i++)
		if (((unsigned char)s[i] & 0xc0) != 0x80)
			c++;
	return c;
}

/* Length in bytes of the whitespace character at s (JavaScript's \s:
 * ASCII and Unicode spaces), or 0. */
static size_t ws_len(const unsigned char *s)
{
	size_t n = 0;

	if (*s == ' ' || (*s >= '\t' && *s <= '\r'))
		n = 1;
	else if (s[0] == 0xc2 && s[1] == 0xa0)
		n = 2; /* U+00A0 */
	else if (s[0] == 0xe1 && s[1] == 0x9a && s[2] == 0x80)
		n = 3; /* U+1680 */
	else if (s[0] == 0xe2 && s[1] == 0x80 && ((s[2] >= 0x80 && s[2] <= 0x8a) || s[2] == 0xa8 ||
	                                          s[2] == 0xa9 || s[2] == 0xaf))
		n = 3; /* U+2000..200A, U+2028, U+2029, U+202F */
	else if (s[0] == 0xe2 && s[1] == 0x81 && s[2] == 0x9f)
		n = 3; /* U+205F */
	else if (s[0] == 0xe3 && s[1] == 0x80 && s[2] == 0x80)
		n = 3; /* U+3000 */
	else if (s[0] == 0xef && s[1] == 0xbb && s[2] == 0xbf)
		n = 3; /* U+FEFF */
	return n;
}

/* Length of an invisible character that Playwright drops (U+200B, U+00AD). */
static size_t invisible_len(const unsigned char *s)
{
	size_t n = 0;

	if (s[0] == 0xe2 && s[1] == 0x80 && s[2] == 0x8b)
		n = 3;
	else if (s[0] == 0xc2 && s[1] == 0xad)
		n = 2;
	return n;
}

/*
 * Playwright's normalizeWhiteSpace: drops U+200B and U+00AD, collapses
 * runs of whitespace into one space and trims. s[0..n) must be followed
 * by a NUL (the look-ahead reads up to 2 bytes past a lead byte, which a
 * NUL stops). Returns a malloc'd string, or NULL when out of memory.
 */
UNITTEST char *act_snap_normalize_ws(const char *s, size_t n)
{
	const unsigned char *p = (const unsigned char *)s;
	const unsigned char *end = p + n;
	char *out = malloc(n + 1);
	size_t o = 0;
	int pending_space = 0;
	size_t k;

	while (out && p < end) {
		k = invisible_len(p);
		if (k) {
			p += k;
			continue;
		}
		k = ws_len(p);
		if (k) {
			pending_space = o > 0;
			p += k;
			continue;
		}
		if (pending_space) {
			out[o++] = ' ';
			pending_space = 0;
		}
		out[o++] = (char)*p++;
	}
	if (out)
		out[o] = '\0';
	return out;
}

/* 1 when s is all "•" or "●" (how Chromium shows a password's value). */
static int all_bullets(const char *s)
{
	const unsigned char *p = (const unsigned char *)s;

	while (p[0] == 0xe2 && ((p[1] == 0x80 && p[2] == 0xa2) || (p[1] == 0x97 && p[2] == 0x8f)))
		p += 3;
	return *s && !*p;
}

/* ---- YAML -------------------------------------------------------------- */

/* 1 when JavaScript's Number(s) is not NaN (s has no surrounding spaces). */
static int js_is_number(const char *s)
{
	const char *p = s;
	int digits = 0;
	int number = 0;

	if (p[0] == '0' && p[1] && strchr("xXoObB", p[1])) {
		const char *set = strchr("xX", p[1]) ? "0123456789abcdefABCDEF"
		                  : strchr("oO", p[1]) ? "01234567" : "01";

		number = p[2] && strspn(p + 2, set) == strlen(p + 2);
		goto out;
	}
	if (*p == '+' || *p == '-')
		p++;
	if (!strcmp(p, "Infinity")) {
		number = 1;
		goto out;
	}
	for (; *p >= '0' && *p <= '9'; p++)
		digits++;
	if (*p == '.')
		for (p++; *p >= '0' && *p <= '9'; p++)
			digits++;
	if (digits && (*p == 'e' || *p == 'E')) {
		p++;
		if (*p == '+' || *p == '-')
			p++;
		if (!(*p >= '0' && *p <= '9'))
			goto out;
		while (*p >= '0' && *p <= '9')
			p++;
	}
	number = digits && *p == '\0';
out:
	return number;
}

/* Playwright's yamlStringNeedsQuotes: 1 when s must be quoted to stay a
 * plain YAML string. */
UNITTEST int act_snap_needs_quotes(const char *s)
{
	static const char *const words[] = {"y", "n", "yes", "no", "true", "false",
	                                    "on", "off", "null", "~"};
	const unsigned char *p = (const unsigned char *)s;
	const char *unsigned_s = s + (s[0] == '+' || s[0] == '-');
	size_t n = strlen(s);
	size_t last = n;
	size_t i;
	int q;

	while (last > 0 && (p[last - 1] & 0xc0) == 0x80)
		last--; /* the start of the last code point */
	q = n == 0 || ws_len(p) || (last > 0 && ws_len(p + last - 1));
	for (i = 0; i < n && !q; i++) {
		unsigned char ch = p[i];

		q = ch <= 0x08 || ch == 0x0b || ch == 0x0c || (ch >= 0x0e && ch <= 0x1f) || ch == 0x7f ||
		    (ch == 0xc2 && p[i + 1] >= 0x80 && p[i + 1] <= 0x9f) || /* U+0080..U+009F */
		    ((ch == ':' || ch == '\n') && (p[i + 1] == '\0' || ws_len(p + i + 1))) ||
		    (ch == '#' && i > 0 && ws_len(p + i - 1)) ||
		    ch == '\n' || ch == '\r' || ch == '{' || ch == '}' || ch == '`';
	}
	q = q || strchr("-&*],?!>|@\"'#%[", p[0]) || js_is_number(s) ||
	    !strcasecmp(unsigned_s, ".inf") || !strcasecmp(unsigned_s, ".nan");
	for (i = 0; i < sizeof(words) / sizeof(words[0]) && !q; i++)
		q = !strcasecmp(s, words[i]);
	return q;
}

/* Appends s as a YAML value: plain, or double-quoted with escapes. */
static int yaml_value(struct gb_buf *b, const char *s)
{
	const unsigned char *p = (const unsigned char *)s;
	int rc = 0;

	if (!act_snap_needs_quotes(s)) {
		rc = gb_buf_append(b, s, strlen(s));
		goto out;
	}
	rc |= gb_buf_append(b, "\"", 1);
	for (; *p && !rc; p++) {
		switch (*p) {
		case '\\': rc |= gb_buf_append(b, "\\\\", 2); break;
		case '"': rc |= gb_buf_append(b, "\\\"", 2); break;
		case '\b': rc |= gb_buf_append(b, "\\b", 2); break;
		case '\f': rc |= gb_buf_append(b, "\\f", 2); break;
		case '\n': rc |= gb_buf_append(b, "\\n", 2); break;
		case '\r': rc |= gb_buf_append(b, "\\r", 2); break;
		case '\t': rc |= gb_buf_append(b, "\\t", 2); break;
		default:
			if (*p < 0x20 || *p == 0x7f) {
				rc |= gb_buf_appendf(b, "\\x%02x", *p);
			} else if (*p == 0xc2 && p[1] >= 0x80 && p[1] <= 0x9f) {
				rc |= gb_buf_appendf(b, "\\x%02x", p[1]);
				p++;
			} else {
				rc |= gb_buf_append(b, (const char *)p, 1);
			}
		}
	}
	rc |= gb_buf_append(b, "\"", 1);
out:
	return rc ? -1 : 0;
}

/* Appends s as a YAML key: plain, or single-quoted with '' for '. */
static int yaml_key(struct gb_buf *b, const char *s)
{
	const char *p;
	int rc = 0;

	if (!act_snap_needs_quotes(s)) {
		rc = gb_buf_append(b, s, strlen(s));
		goto out;
	}
	rc |= gb_buf_append(b, "'", 1);
	for (p = s; *p && !rc; p++)
		rc |= *p == '\'' ? gb_buf_append(b, "''", 2) : gb_buf_append(b, p, 1);
	rc |= gb_buf_append(b, "'", 1);
out:
	return rc ? -1 : 0;
}

/* Appends s as a JSON string (JSON.stringify). */
static int json_quote(struct gb_buf *b, const char *s)
{
	const unsigned char *p = (const unsigned char *)s;
	int rc = 0;

	rc |= gb_buf_append(b, "\"", 1);
	for (; *p && !rc; p++) {
		switch (*p) {
		case '\\': rc |= gb_buf_append(b, "\\\\", 2); break;
		case '"': rc |= gb_buf_append(b, "\\\"", 2); break;
		case '\b': rc |= gb_buf_append(b, "\\b", 2); break;
		case '\f': rc |= gb_buf_append(b, "\\f", 2); break;
		case '\n': rc |= gb_buf_append(b, "\\n", 2); break;
		case '\r': rc |= gb_buf_append(b, "\\r", 2); break;
		case '\t': rc |= gb_buf_append(b, "\\t", 2); break;
		default:
			if (*p < 0x20)
				rc |= gb_buf_appendf(b, "\\u%04x", *p);
			else
				rc |= gb_buf_append(b, (const char *)p, 1);
		}
	}
	rc |= gb_buf_append(b, "\"", 1);
	return rc ? -1 : 0;
}

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
		const char *k = json_string_value(json_object_get(json_array_get(doc->nodes, i), "nodeId"));
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
static long doc_find(const struct snap_doc *doc, const char *node_id)
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
static int doc_add(struct snap_ctx *x, const char *session_id, const char *frame_id, int parent)
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
	doc->frame_id = xstrdup(frame_id);
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
static void doc_free(struct snap_doc *doc)
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
static const char *doc_origin(const struct snap_ctx *x, size_t d)
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
			snap_errf(x, "out of memory while taking the snapshot");
			goto out;
		}
		x->calls = grown;
		x->cap_calls = cap;
	}
	sent = cdp_send(x->conn, x->docs[d].session_id, method, params, &id);
	if (sent < 0) {
		snap_errf(x, "could not send %s to the browser: %s", method, cdp_strerror(-sent));
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
	       !strcmp(role, "spinbutton") || !strcmp(role, "slider") || !strcmp(role, "combobox");
}

/* 1 for Chromium's roles of <iframe> and <frame>. */
static int is_iframe_role(const char *role)
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

	json_array_foreach(kids, i, kid) {
		long k = doc_find(doc, json_string_value(kid));

		if (k >= 0 && !strcmp(ax_role(json_array_get(doc->nodes, (size_t)k)), "MenuListPopup"))
			popup = 1;
	}
	return popup;
}

/* 1 when AX node n of doc has a value to show after its key: inputs and
 * textareas, not a native <select> (which shows its options). */
static int shows_value(const struct snap_doc *doc, json_t *n, const char *role)
{
	return is_value_role(role) && !(!strcmp(role, "combobox") && has_popup_child(doc, n));
}

/*
 * Walks the nodes of doc d that will be rendered (from its root) and sends
 * DOM.describeNode for each iframe (to learn its frame) and for each node
 * that shows a non-empty value (to learn whether it is a password field).
 * Returns 0 or -1 (error set).
 */
static int scan_node(struct snap_ctx *x, size_t d, size_t idx, unsigned depth)
{
	struct snap_doc *doc = &x->docs[d];
	json_t *n = json_array_get(doc->nodes, idx);
	const char *role = ax_role(n);
	int ignored = json_is_true(json_object_get(n, "ignored"));
	int backend = ax_backend(n);
	const char *value = jstr2(n, "value", "value");
	json_t *kids = json_object_get(n, "childIds");
	json_t *kid;
	size_t i;
	int rc = 0;

	if (depth > SNAP_MAX_DEPTH || !strcmp(role, "InlineTextBox") || doc->info[idx].scanned)
		goto out;
	doc->info[idx].scanned = 1;
	if (!ignored && backend && is_iframe_role(role)) {
		/* a frame's owner: its own children are not rendered */
		rc = call_send(x, CALL_DESCRIBE_FRAME, d, idx, "DOM.describeNode",
		               json_pack("{s:i}", "backendNodeId", backend));
		goto out;
	}
	if (!ignored && shows_value(doc, n, role) && value && *value) {
		if (all_bullets(value)) {
			doc->info[idx].pw = PW_MASK;
		} else if (!backend) {
			doc->info[idx].pw = PW_HIDE;
		} else {
			doc->info[idx].pw = PW_PENDING;
			rc = call_send(x, CALL_DESCRIBE_PW, d, idx, "DOM.describeNode",
			               json_pack("{s:i}", "backendNodeId", backend));
		}
	}
	json_array_foreach(kids, i, kid) {
		long k = doc_find(doc, json_string_value(kid));

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
			snap_errf(x, "could not read the accessibility tree of the %s: %s",
			          x->subtree ? "target's frame" : "page",
			          res ? "the browser sent no nodes" : cerr->message);
			goto out;
		}
		GB_LOGD("actions", "snapshot: frame %s left empty: %s", doc->frame_id ? doc->frame_id : "?",
		        res ? "no nodes" : cerr->message);
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
	doc->origin = url_origin(json_string_value(ax_prop(root, "url")));
	if (d == 0 && !x->subtree && doc->frame_id && !x->main_frame_id) {
		x->main_frame_id = strdup(doc->frame_id);
		if (!x->main_frame_id)
			goto nomem;
	}
	if (x->subtree && x->root_doc < 0) {
		/* the root is in this frame, or (no frame given) in another frame
		 * of the same session, prefetched from the frame tree */
		for (i = 0; i < doc->n_nodes; i++)
			if (ax_backend(json_array_get(nodes, i)) == x->root_backend)
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
	snap_errf(x, "out of memory while reading the accessibility tree");
out:
	return rc;
}

/* Adds a doc (to prefetch) for every frame below frame tree node ft. */
static void tree_prefetch(struct snap_ctx *x, size_t d, json_t *ft, unsigned depth)
{
	json_t *kids = json_object_get(ft, "childFrames");
	json_t *kid;
	size_t i;

	json_array_foreach(kids, i, kid) {
		const char *fid = jstr2(kid, "frame", "id");

		if (depth > SNAP_MAX_DEPTH)
			break;
		if (fid && doc_by_frame(x, fid) < 0)
			doc_add(x, x->docs[d].session_id, fid, -1);
		tree_prefetch(x, d, kid, depth + 1);
	}
}

/* The frame tree node of frame_id below ft, or NULL. */
static json_t *tree_find(json_t *ft, const char *frame_id, unsigned depth)
{
	json_t *kids = json_object_get(ft, "childFrames");
	json_t *kid;
	json_t *hit = NULL;
	const char *fid = jstr2(ft, "frame", "id");
	size_t i;

	if (fid && !strcmp(fid, frame_id))
		hit = ft;
	json_array_foreach(kids, i, kid) {
		if (hit || depth > SNAP_MAX_DEPTH)
			break;
		hit = tree_find(kid, frame_id, depth + 1);
	}
	return hit;
}

/* Handles a Page.getFrameTree reply: prefetches the frames below doc d,
 * and notes the page's main frame (the root of the page session's tree). */
static void on_tree(struct snap_ctx *x, size_t d, json_t *res)
{
	json_t *ft = json_object_get(res, "frameTree");
	const char *top = jstr2(ft, "frame", "id");
	json_t *mine;

	if (top && !x->main_frame_id && !json_object_get(json_object_get(ft, "frame"), "parentId") &&
	    !strcmp(x->docs[d].session_id, x->opt->page_session_id ? x->opt->page_session_id : ""))
		x->main_frame_id = strdup(top);
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
	const char *fid = jstr2(res, "node", "frameId");
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
		child = doc_add(x, session, fid, (int)d);
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
		rc = cdp_await(x->conn, call->id, left > 0 ? (int)(left < INT32_MAX ? left : INT32_MAX) : 1,
		               &res, &cerr);
		if (rc == -CDP_ETIMEOUT) {
			snap_errf(x, "the browser did not answer %s within %d ms: try again, or pass a "
			          "target to snapshot a smaller part of the page", call->method,
			          x->opt->timeout_ms);
			goto fatal;
		}
		if (rc == -CDP_ECLOSED || rc == -CDP_ECANCELLED || rc == -CDP_ENOMEM) {
			snap_errf(x, "%s failed: %s", call->method,
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
static int snap_fetch(struct snap_ctx *x)
{
	size_t d;
	int rc = -1;

	for (;;) {
		x->n_calls = 0;
		for (d = 0; d < x->n_docs; d++) {
			struct snap_doc *doc = &x->docs[d];

			if (doc->state == DOC_WANTED) {
				json_t *params = doc->frame_id ? json_pack("{s:s}", "frameId", doc->frame_id)
				                               : json_object();

				doc->state = DOC_FETCHING;
				if (call_send(x, CALL_AX, d, 0, "Accessibility.getFullAXTree", params) < 0)
					goto out;
				if (doc->want_tree &&
				    call_send(x, CALL_TREE, d, 0, "Page.getFrameTree", json_object()) < 0)
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
			snap_errf(x, "ref %s is stale: its element is no longer on the page; take a new "
			          "snapshot", x->root_ref);
		else
			snap_errf(x, "the target's element is no longer on the page: take a new snapshot");
		goto out;
	}
	rc = 0;
out:
	if (rc < 0)
		calls_forget(x, 0);
	return rc;
}

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
static void snode_free(struct snode *s)
{
	size_t i;

	for (i = 0; s && i < s->n_kids; i++) {
		snode_free(s->kids[i].node);
		free(s->kids[i].text);
	}
	if (s) {
		free(s->kids);
		free(s->name);
		free(s->url);
		free(s->placeholder);
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
			snode_free(node);
			free(text);
			goto out;
		}
		s->kids = grown;
		s->cap_kids = cap;
	}
	s->kids[s->n_kids].node = node;
	s->kids[s->n_kids].text = text;
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

/* Playwright's mergeStringChildren: adjacent texts become one normalized
 * text; empty ones go; a lone text equal to the name goes. */
static int merge_texts(struct snode *s)
{
	struct gb_buf acc;
	size_t i;
	size_t o = 0;
	int rc = -1;

	gb_buf_init(&acc, SIZE_MAX / 2);
	for (i = 0; i <= s->n_kids; i++) {
		if (i < s->n_kids && s->kids[i].text) {
			if (gb_buf_append(&acc, s->kids[i].text, strlen(s->kids[i].text)) < 0)
				goto out;
			free(s->kids[i].text);
			s->kids[i].text = NULL;
			continue;
		}
		if (acc.len) {
			char *t = act_snap_normalize_ws(acc.data, acc.len);

			if (!t)
				goto out;
			acc.len = 0;
			acc.data[0] = '\0';
			if (*t) {
				/* o < i: the texts merged into t were at [o, i) */
				s->kids[o].node = NULL;
				s->kids[o++].text = t;
			} else
				free(t);
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
			snode_free(s->kids[i].node);
			free(s->kids[i].text);
		}
		s->n_kids = o;
	}
	gb_buf_free(&acc);
	return rc;
}

/* 1 when s has /url or /placeholder lines. */
static int has_props(const struct snode *s)
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
	if (is_generic(s) && !has_props(s) && only && is_generic(only) && !only->name &&
	    !(only->flags & SN_ACTIVE) && !has_props(only) && only->n_kids == 1 &&
	    only->kids[0].text) {
		s->kids[0].text = only->kids[0].text;
		s->kids[0].node = NULL;
		only->n_kids = 0;
		snode_free(only);
	}
	/* removeNameRepeatingChild */
	if (parent->name && is_generic(s) && !(s->flags & SN_ACTIVE) && !has_props(s)) {
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
	snode_free(s);
out:
	return rc;
}

/* Chromium's role as the ARIA role Playwright shows; NULL when the node
 * adds nothing of its own (its children go to its parent). */
static const char *aria_role(json_t *n)
{
	static const char *const transparent[] = {"RootWebArea", "WebArea", "none", "presentation",
	                                          "LabelText", "MenuListPopup", "Legend"};
	const char *role = ax_role(n);
	const char *type = jstr2(n, "role", "type");
	const char *aria = role;
	size_t i;

	if (!strcmp(role, "image"))
		aria = "img";
	else if (!strcmp(role, "MenuListOption"))
		aria = "option";
	else if (!*role || (type && strcmp(type, "role") != 0))
		aria = "generic"; /* Chromium-only roles: Canvas, Pre, Video... */
	for (i = 0; i < sizeof(transparent) / sizeof(transparent[0]); i++)
		if (!strcmp(role, transparent[i]))
			aria = NULL;
	return aria;
}

/* The placeholder attribute of a textbox, from its name sources. */
static const char *ax_placeholder(json_t *n)
{
	json_t *sources = json_object_get(json_object_get(n, "name"), "sources");
	json_t *src;
	const char *found = NULL;
	size_t i;

	json_array_foreach(sources, i, src) {
		const char *type = json_string_value(json_object_get(src, "type"));
		const char *attr = json_string_value(json_object_get(src, "attribute"));
		const char *v = jstr2(src, "attributeValue", "value");

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
static void snode_states(struct snode *s, json_t *n)
{
	const char *checked = json_string_value(ax_prop(n, "checked"));
	const char *pressed = json_string_value(ax_prop(n, "pressed"));
	const char *invalid = json_string_value(ax_prop(n, "invalid"));
	json_t *level = ax_prop(n, "level");

	if (checked && !strcmp(checked, "mixed"))
		s->flags |= SN_CHECKED_MIXED;
	else if (jtrue(ax_prop(n, "checked")))
		s->flags |= SN_CHECKED;
	if (jtrue(ax_prop(n, "disabled")))
		s->flags |= SN_DISABLED;
	if (jtrue(ax_prop(n, "expanded")))
		s->flags |= SN_EXPANDED;
	if (jtrue(ax_prop(n, "focused")))
		s->flags |= SN_ACTIVE;
	if (invalid && (!strcmp(invalid, "grammar") || !strcmp(invalid, "spelling")))
		s->invalid = !strcmp(invalid, "grammar") ? "grammar" : "spelling";
	else if (jtrue(ax_prop(n, "invalid")))
		s->flags |= SN_INVALID;
	if (pressed && !strcmp(pressed, "mixed"))
		s->flags |= SN_PRESSED_MIXED;
	else if (jtrue(ax_prop(n, "pressed")))
		s->flags |= SN_PRESSED;
	if (jtrue(ax_prop(n, "selected")))
		s->flags |= SN_SELECTED;
	if (!strcmp(s->role, "heading") && json_is_integer(level) && json_integer_value(level) > 0 &&
	    json_integer_value(level) < 100)
		s->level = (int)json_integer_value(level);
}

/* Assigns doc d its ref prefix: none for the main frame; a subtree's
 * frame keeps the prefix of its ref; a frame keeps its number from the
 * previous snapshot; new frames get new numbers. */
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
	if (doc->prefix < 0)
		doc->prefix = ++x->next_prefix;
out:
	return;
}

static int build_node(struct snap_ctx *x, size_t d, size_t idx, struct snode *parent,
                      unsigned depth);

/* Builds every child of AX node n (index self) of doc d into parent.
 * Returns 0, or -1 when memory is out. */
static int build_kids(struct snap_ctx *x, size_t d, json_t *n, size_t self, struct snode *parent,
                      unsigned depth)
{
	json_t *kids = json_object_get(n, "childIds");
	json_t *kid;
	size_t i;
	int rc = 0;

	json_array_foreach(kids, i, kid) {
		long k = doc_find(&x->docs[d], json_string_value(kid));

		if (rc == 0 && k >= 0 && (size_t)k != self)
			rc = build_node(x, d, (size_t)k, parent, depth + 1);
	}
	return rc;
}

/* Builds the root of doc d (an iframe's frame) into parent. */
static int build_doc(struct snap_ctx *x, size_t d, struct snode *parent, unsigned depth)
{
	doc_prefix(x, d);
	return build_node(x, d, x->docs[d].root, parent, depth);
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
	const char *role = ax_role(n);
	const char *name = jstr2(n, "name", "value");
	const char *value = jstr2(n, "value", "value");
	unsigned char pw = doc->info[idx].pw;
	const char *aria;
	struct snode *s = NULL;
	int child;
	int popup;
	int rc = 0;

	if (depth > SNAP_MAX_DEPTH || !strcmp(role, "InlineTextBox") || !strcmp(role, "ListMarker") ||
	    doc->info[idx].built)
		goto out;
	doc->info[idx].built = 1;
	if (!strcmp(role, "StaticText") && !json_is_true(json_object_get(n, "ignored"))) {
		if (name && *name)
			rc = text_push(parent, name);
		goto out;
	}
	if (!strcmp(role, "LineBreak") && !json_is_true(json_object_get(n, "ignored"))) {
		rc = text_push(parent, "\n");
		goto out;
	}
	aria = is_iframe_role(role) ? "iframe" : aria_role(n);
	if (!aria || json_is_true(json_object_get(n, "ignored"))) {
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
	s->backend_id = ax_backend(n);
	if (x->popup_depth)
		s->flags |= SN_NOREF; /* a native <select>'s options cannot be clicked */
	if (x->subtree && (int)d == x->root_doc && idx == doc->root)
		s->flags |= SN_KEEP;
	if (!strcmp(aria, "iframe")) {
		/* Playwright shows no name for an iframe; its frame is inlined */
		child = doc->info[idx].child_doc;
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
	snode_states(s, n);
	if (!strcmp(aria, "link") && json_string_value(ax_prop(n, "url"))) {
		s->url = link_url(json_string_value(ax_prop(n, "url")), doc_origin(x, d));
		if (!s->url)
			goto out;
	}
	if (!strcmp(aria, "textbox") && ax_placeholder(n) &&
	    !(s->name && !strcmp(ax_placeholder(n), s->name))) {
		s->placeholder = strdup(ax_placeholder(n));
		if (!s->placeholder)
			goto out;
	}
	if (shows_value(doc, n, aria)) {
		/* an input shows its value, not its inner editor's nodes; a value
		 * not known to be clear (password, unchecked) is masked or left out */
		if (value && *value && pw == PW_MASK && text_push(s, SNAP_PASSWORD_MASK) < 0)
			goto out;
		if (value && *value && pw == PW_CLEAR && text_push(s, value) < 0)
			goto out;
	} else if (build_kids(x, d, n, idx, s, depth) < 0) {
		goto out;
	}
finish:
	rc = snode_finish(s, parent);
	s = NULL; /* taken */
out:
	snode_free(s);
	return rc;
}

/* Builds the rendered tree from the root doc (and the frames it holds). */
static int snap_build(struct snap_ctx *x)
{
	int rc = -1;

	x->frag = snode_new("fragment", 0);
	if (!x->frag || build_doc(x, (size_t)x->root_doc, x->frag, 0) < 0 ||
	    merge_texts(x->frag) < 0) {
		snap_errf(x, "out of memory while building the snapshot");
		goto out;
	}
	rc = 0;
out:
	return rc;
}

/* ---- render ------------------------------------------------------------ */

/* The ref of node s ("e5", "f1e5") into out; 0, or -1 when it has none. */
static int node_ref(const struct snap_ctx *x, const struct snode *s, char *out, size_t outlen)
{
	int prefix = x->docs[s->doc].prefix;
	int n = -1;

	if (s->backend_id && !(s->flags & SN_NOREF) && prefix > 0)
		n = snprintf(out, outlen, "f%de%d", prefix, s->backend_id);
	else if (s->backend_id && !(s->flags & SN_NOREF))
		n = snprintf(out, outlen, "e%d", s->backend_id);
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
	r->name = strdup(s->name && utf8_chars(s->name, strlen(s->name)) <= SNAP_MAX_NAME_CHARS
	                 ? s->name : "");
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

/*
 * Moves x->line into the output if it fits under max_chars and the byte
 * ceiling; otherwise marks the snapshot truncated and stops rendering.
 * A ref (may be NULL) is recorded only for a kept line. Returns 0, or -1
 * when memory is out.
 */
static int line_emit(struct snap_ctx *x, const struct snode *s, const char *ref)
{
	size_t chars = x->line.overflowed ? 0 : utf8_chars(x->line.data, x->line.len);
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

/* Emits "- text: ..." at depth. */
static int render_text(struct snap_ctx *x, const char *text, unsigned depth)
{
	line_reset(&x->line);
	line_indent(&x->line, depth);
	gb_buf_append(&x->line, "- text: ", 8);
	yaml_value(&x->line, text);
	return line_emit(x, NULL, NULL);
}

/* Emits "- /name: value" at depth. */
static int render_prop(struct snap_ctx *x, const char *name, const char *value, unsigned depth)
{
	line_reset(&x->line);
	line_indent(&x->line, depth);
	gb_buf_appendf(&x->line, "- /%s: ", name);
	yaml_value(&x->line, value);
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
	if (s->name && utf8_chars(s->name, strlen(s->name)) <= SNAP_MAX_NAME_CHARS) {
		gb_buf_append(key, " ", 1);
		json_quote(key, s->name);
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
	if (ref)
		gb_buf_appendf(key, " [ref=%s]", ref);
}

/* Renders node s and its children at depth (Playwright's renderer). */
static int render_node(struct snap_ctx *x, const struct snode *s, unsigned depth)
{
	struct gb_buf key;
	char ref[sizeof(((struct snap_ref *)0)->ref)];
	const char *text = s->n_kids == 1 && s->kids[0].text ? s->kids[0].text : NULL;
	int has_ref = node_ref(x, s, ref, sizeof(ref)) == 0;
	size_t i;
	int rc = -1;

	gb_buf_init(&key, SNAP_MAX_YAML_BYTES);
	node_key(&key, s, has_ref ? ref : NULL);
	line_reset(&x->line);
	line_indent(&x->line, depth);
	gb_buf_append(&x->line, "- ", 2);
	if (key.overflowed)
		x->line.overflowed = 1;
	else
		yaml_key(&x->line, key.data);
	if (text && !has_props(s)) {
		gb_buf_append(&x->line, ": ", 2);
		yaml_value(&x->line, text);
	} else if (s->n_kids || has_props(s)) {
		gb_buf_append(&x->line, ":", 1);
	}
	if (line_emit(x, s, has_ref ? ref : NULL) < 0)
		goto out;
	if (!s->n_kids && !has_props(s)) {
		rc = 0;
		goto out;
	}
	if (text && !has_props(s)) {
		rc = 0;
		goto out;
	}
	if (s->url && render_prop(x, "url", s->url, depth + 1) < 0)
		goto out;
	if (s->placeholder && render_prop(x, "placeholder", s->placeholder, depth + 1) < 0)
		goto out;
	for (i = 0; i < s->n_kids && !x->stopped; i++) {
		if (s->kids[i].text && render_text(x, s->kids[i].text, depth + 1) < 0)
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
static int snap_render(struct snap_ctx *x)
{
	size_t i;
	int rc = 0;

	for (i = 0; i < x->frag->n_kids && !x->stopped && rc == 0; i++) {
		if (x->frag->kids[i].text)
			rc = render_text(x, x->frag->kids[i].text, 0);
		else
			rc = render_node(x, x->frag->kids[i].node, 0);
	}
	if (rc == 0 && x->truncated)
		rc = gb_buf_appendf(&x->out, "%s- \xe2\x80\xa6 snapshot truncated at %zu characters: "
		                    "pass a target to see a subtree", x->n_lines ? "\n" : "",
		                    x->out_chars);
	if (rc < 0)
		snap_errf(x, "out of memory while rendering the snapshot");
	return rc;
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
		snap_errf(x, "out of memory while taking the snapshot");
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
		d = doc_add(x, opt->root->session_id[0] ? opt->root->session_id : page,
		            opt->root->frame_id[0] ? opt->root->frame_id : NULL, -1);
	} else {
		d = doc_add(x, page, NULL, -1);
	}
	if (d < 0) {
		snap_errf(x, "cannot take the snapshot: the CDP session or frame id is invalid");
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
		doc_free(&x->docs[i]);
	for (i = 0; i < x->n_refs; i++) {
		free(x->refs[i].role);
		free(x->refs[i].name);
	}
	free(x->refs);
	free(x->calls);
	free(x->old);
	free(x->main_frame_id);
	snode_free(x->frag);
	gb_buf_free(&x->out);
	gb_buf_free(&x->line);
	free(x);
}

int act_snapshot_take(struct cdp_conn *c, const struct snap_options *opt, struct snap_refmap *map,
                      char **yaml_out, int *truncated, char *err, size_t errlen)
{
	struct snap_ctx *x = NULL;
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
			snprintf(err, errlen, "act_snapshot_take: missing connection, options, map or output");
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
	if (snap_seed(x, map) < 0 || snap_fetch(x) < 0 || snap_build(x) < 0 || snap_render(x) < 0)
		goto out;
	generation = map->generation;
	act_snapshot_clear(map);
	map->refs = x->refs;
	map->n_refs = x->n_refs;
	map->generation = generation + 1;
	x->refs = NULL;
	x->n_refs = 0;
	*yaml_out = gb_buf_steal(&x->out);
	if (!*yaml_out) {
		snap_errf(x, "out of memory while taking the snapshot");
		goto out;
	}
	*truncated = x->truncated;
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
	return found;
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

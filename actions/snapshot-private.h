/*
 * snapshot-private.h - the state of one snapshot while it is taken, and
 * the helpers its files share. Private to actions/snapshot*.c:
 *
 *   snapshot.c         entry points: seed, fetch, build, render; the ref map
 *   snapshot_fetch.c   the frames ("docs") and their CDP calls, in rounds
 *   snapshot_hidden.c  what a person would not see (DOMSnapshot layout)
 *   snapshot_build.c   AX nodes -> the tree of rendered nodes (Playwright's rules)
 *   snapshot_render.c  the tree -> YAML lines, refs, truncation
 *   snapshot_refs.c    ref numbering (e1, e2, ... per frame document) and the refs kept
 *   snapshot_text.c    JSON, UTF-8, whitespace and YAML quoting helpers
 */
#ifndef GB_ACT_SNAPSHOT_PRIVATE_H
#define GB_ACT_SNAPSHOT_PRIVATE_H

#include "actions/snapshot.h"
#include "common/util.h"

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

struct cdp_conn;
struct cdp_error;

#define SNAP_MAX_FRAMES 64             /* docs (frames) in one snapshot */
#define SNAP_MAX_DEPTH 512             /* AX nesting that is rendered */
#define SNAP_MAX_YAML_BYTES (4u << 20) /* ceiling of the rendered text */
#define SNAP_MAX_NAME_CHARS 900        /* longer names are not shown (as Playwright) */
#define SNAP_ID_MAX 64                 /* session and frame ids (struct snap_ref) */
#define SNAP_MAX_ORDERED_FRAMES 256    /* frames of a page's tree numbered by their place */
#define SNAP_PASSWORD_MASK "\xe2\x80\xa2\xe2\x80\xa2\xe2\x80\xa2\xe2\x80\xa2" /* •••• */

/* ---- state ------------------------------------------------------------- */

enum doc_state { DOC_WANTED, DOC_FETCHING, DOC_READY, DOC_FAILED };

/* What a password check found for one node that shows a value. */
enum pw_state { PW_UNKNOWN = 0, PW_PENDING, PW_CLEAR, PW_MASK, PW_HIDE };

/* Per AX node of a doc (parallel to doc->nodes). */
struct ax_info {
	int child_doc;         /* Iframe: the doc of its frame, or -1 */
	unsigned char pw;      /* enum pw_state */
	unsigned char scanned; /* each node is scanned and built once, so that */
	unsigned char built;   /* a malformed tree (cycles, shared children) stays linear */
};

struct snap_doc {
	char *session_id; /* CDP session that owns the frame */
	char *frame_id;   /* NULL until known (the main frame, from its AX root) */
	char *origin;     /* "http://host:port" of the frame's URL, or NULL */
	int parent;       /* doc of the owner iframe, -1 for the first doc */
	json_t *result;   /* getFullAXTree result (owned) */
	json_t *nodes;    /* its "nodes" (borrowed from result) */
	size_t n_nodes;
	struct ax_info *info;
	const char **keys; /* nodeId of each node (borrowed) */
	size_t *slots;     /* open-addressing index nodeId -> node + 1 */
	size_t n_slots;
	size_t root;   /* node to render from */
	int state;     /* enum doc_state */
	int linked;    /* rendered: the first doc, or owned by an iframe */
	int scanned;   /* its describes were sent */
	int want_tree; /* send Page.getFrameTree with its AX tree */
	int prefix;    /* ref prefix "f<N>"; 0 = none; -1 = not assigned yet */
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
	SN_KEEP = 1u << 10,    /* the subtree root: never collapsed */
	SN_HIDDEN = 1u << 11,  /* a person would not see it: [hidden-text] */
	SN_POINTER = 1u << 12, /* a pointer cursor on a non-interactive role: [cursor=pointer] */
};

struct snode;

/* A child of a rendered node: another node or a text (exactly one set). */
struct sitem {
	struct snode *node;
	char *text;
	int hidden; /* text a person would not see (snapshot_hidden.c) */
};

/* One node of the rendered tree (Playwright's aria node). */
struct snode {
	const char *role;    /* static, or borrowed from a doc's JSON */
	char *name;          /* whitespace-normalized; NULL = none */
	char *url;           /* link: /url prop */
	char *placeholder;   /* textbox: /placeholder prop */
	const char *invalid; /* "grammar" / "spelling" for [invalid=...], else NULL */
	unsigned flags;
	int level;
	int backend_id; /* DOM.BackendNodeId; 0 = none */
	size_t doc;
	struct sitem *kids;
	size_t n_kids;
	size_t cap_kids;
	char *visible; /* its visible text when its name says something else */
	char ref[16];  /* "e5", "f1e5"; "" = none (snapshot_refs.c) */
};

/* An element's box in its frame's viewport, CSS px, rounded
 * (getBoundingClientRect, as Playwright's [box=x,y,width,height]). */
struct snap_box {
	int id; /* backend node id */
	int x, y, w, h;
};

/* The nodes of one CDP session that a person would not see. */
struct snap_hidden_set {
	char session_id[SNAP_ID_MAX];
	int *ids; /* backend node ids, sorted */
	size_t n;
	int *pointer; /* elements that show a pointer cursor (their parent not), sorted */
	size_t n_pointer;
	int *empty; /* elements whose box is empty (no width or no height), sorted */
	size_t n_empty;
	struct snap_box *boxes; /* with opt->boxes: each element's box, sorted by id */
	size_t n_boxes;
	int want_boxes;
	/* input elements, and those of them whose type is password, sorted */
	int *inputs;
	size_t n_inputs;
	int *passwords;
	size_t n_passwords;
	int parsed;  /* its reply was read */
	char *title; /* the title of its first document, which is in frame_id */
	char *frame_id;
	uint64_t call_id; /* its captureSnapshot, until awaited; 0: none */
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
	} * old;
	size_t n_old;
	int next_prefix;
	/* the page's frames in the order Playwright numbers them (its frame
	 * tree breadth first, hidden frames too): a new frame's number */
	char (*frame_order)[SNAP_ID_MAX];
	size_t n_frame_order;

	struct snap_doc docs[SNAP_MAX_FRAMES];
	size_t n_docs;
	struct snap_call *calls;
	size_t n_calls;
	size_t cap_calls;

	struct snode *frag; /* the rendered tree's root (its children are the top lines) */
	int popup_depth;    /* inside a native <select>'s popup: options get no ref */
	size_t n_active;    /* nodes built with the focus ([active]) */

	struct gb_buf out;
	struct gb_buf line;
	struct snap_lines lines_tab; /* every kept line (opt->lines) */
	size_t cap_lines_tab;
	size_t out_chars; /* characters (code points) kept in out */
	size_t n_lines;
	size_t limit_chars; /* max_chars, or SIZE_MAX */
	int truncated;
	int stopped;

	struct snap_ref *refs;
	size_t n_refs;
	size_t cap_refs;

	/* numbering (snapshot_refs.c): the previous map's refs handed out,
	 * indexed by (session, node); the refs handed out now; the counters */
	const struct snap_refmap *prev;
	size_t *ix_slots; /* index into prev->issued + 1; 0 = empty */
	size_t n_ix_slots;
	struct snap_ref *fresh;
	size_t n_fresh;
	size_t cap_fresh;
	struct snap_counter *counters;
	size_t n_counters;
	int retired[SNAP_MAX_FRAMES]; /* frame prefixes whose document was replaced */
	size_t n_retired;

	struct snap_hidden_set hidden[SNAP_MAX_FRAMES];
	size_t n_hidden;
	size_t n_hidden_flagged; /* lines marked [hidden-text] */
	size_t n_hidden_dropped; /* texts and nodes left out */
	size_t n_label_differs;
};

/* ---- snapshot.c ---------------------------------------------------------- */

/* Formats a message into the caller's err buffer (if any). */
void act_snap_errf(struct snap_ctx *x, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* ---- snapshot_text.c: helpers --------------------------------------------- */

/* obj[k1][k2] as a string, or NULL. Borrows. */
const char *act_snap_jstr2(json_t *obj, const char *k1, const char *k2);
/* A node's role ("button", "StaticText"...), or "" when absent. */
const char *act_snap_ax_role(json_t *n);
/* The value of property `name` of an AX node, or NULL. Borrows. */
json_t *act_snap_ax_prop(json_t *n, const char *name);
/* 1 when a property value is true or the token "true". */
int act_snap_jtrue(json_t *v);
/* The node's backendDOMNodeId, or 0 when absent or out of range. */
int act_snap_ax_backend(json_t *n);
/* strdup that passes NULL through. */
char *act_snap_xstrdup(const char *s);
/* Number of UTF-8 code points in s[0..n). */
size_t act_snap_utf8_chars(const char *s, size_t n);
/* 1 when s is only bullets (a value Chromium already masks). */
int act_snap_all_bullets(const char *s);
/* s with whitespace collapsed and trimmed (malloc'd), or NULL. */
char *act_snap_normalize_ws(const char *s, size_t n);
/* 1 when s must be quoted as a YAML scalar. */
int act_snap_needs_quotes(const char *s);
/* Append s as a YAML mapping key / value / JSON-quoted string. */
int act_snap_yaml_key(struct gb_buf *b, const char *s);
int act_snap_yaml_value(struct gb_buf *b, const char *s);
int act_snap_json_quote(struct gb_buf *b, const char *s);

/* ---- snapshot_fetch.c ------------------------------------------------------ */

/* Adds a doc (frame) to fetch; returns its index or -1. */
int act_snap_doc_add(struct snap_ctx *x, const char *session_id, const char *frame_id, int parent);
/* The index of AX node node_id in doc, or -1. */
long act_snap_doc_find(const struct snap_doc *doc, const char *node_id);
/* Frees what a doc owns. */
void act_snap_doc_free(struct snap_doc *doc);
/* "http://host:port" of doc d's frame, or NULL. */
const char *act_snap_doc_origin(const struct snap_ctx *x, size_t d);
/* 1 for Chromium's roles of <iframe> and <frame>. */
int act_snap_is_iframe_role(const char *role);
/* 1 when AX node n of doc has a value to show after its key. */
int act_snap_shows_value(const struct snap_doc *doc, json_t *n, const char *role);
/* Fetches every doc in rounds of pipelined calls. Returns 0 or -1 (err set). */
int act_snap_fetch(struct snap_ctx *x);

/* ---- snapshot_hidden.c ------------------------------------------------------- */

/* With opt->hidden: sends the first frame's layout request, so that it
 * runs while the accessibility trees are fetched. */
void act_snap_start_hidden(struct snap_ctx *x);
/* With opt->hidden: reads the layout of every frame's process
 * (DOMSnapshot.captureSnapshot) and notes the nodes a person would not
 * see. Failures leave nothing noted (text is then shown unflagged). */
void act_snap_fetch_hidden(struct snap_ctx *x);
/* The main frame document's title from its layout reply, or NULL (a
 * subtree, or no layout read). */
const char *act_snap_main_title(const struct snap_ctx *x);
/* Whether node backend_id of doc d is a password field, from the layout
 * of its session when that was asked for (awaited here if it is still
 * on its way): 1 yes, 0 no, -1 unknown (not an input there, or no
 * layout). */
int act_snap_is_password(struct snap_ctx *x, size_t d, int backend_id);
/* 1 when node backend_id of doc d is not visible to a person. */
int act_snap_is_hidden(const struct snap_ctx *x, size_t d, int backend_id);
/* Frees what act_snap_fetch_hidden() noted. */
void act_snap_hidden_free(struct snap_ctx *x);
/* The box of element backend_id of doc d (opt->boxes), or NULL. */
const struct snap_box *act_snap_box(const struct snap_ctx *x, size_t d, int backend_id);
/* 1 when the element backend_id of doc d has an empty box (no width or no
 * height): Playwright gives it no ref (a click could not reach it), while
 * its children are shown. 0 when unknown (no layout was read). */
int act_snap_box_empty(const struct snap_ctx *x, size_t d, int backend_id);
/* 1 when the element backend_id of doc d shows a pointer cursor and its
 * parent does not (known with the hidden-text layout only). */
int act_snap_is_pointer(const struct snap_ctx *x, size_t d, int backend_id);
/* The value an AX node shows, as text: a string as it is, a number
 * (spinbutton, slider) formatted into buf (len bytes); NULL when none. */
const char *act_snap_ax_value(json_t *n, char *buf, size_t len);
/* 1 for Chromium's AX roles of the inputs that show a value in their own
 * format (date, time, datetime-local, month, week, color): rendered as
 * Playwright does, a textbox with its value, not their inner fields. */
int act_snap_is_value_input_role(const char *role);

/* ---- snapshot_refs.c: numbering ------------------------------------------------ */

#define SNAP_MAX_ISSUED 65536 /* refs kept for resolving; the oldest go first */

/* Copies the previous map's counters and indexes its refs. Returns 0 or -1. */
int act_snap_refs_seed(struct snap_ctx *x, const struct snap_refmap *prev);
/* Doc d is about to be built: a new document in its frame restarts the
 * numbering at e1 and retires the refs of the old one. */
void act_snap_refs_doc(struct snap_ctx *x, size_t d);
/* Gives node s (role and name set) its ref: the one it had, or the next
 * number of its frame. Returns 0 or -1 (out of memory). */
int act_snap_refs_assign(struct snap_ctx *x, struct snode *s);
/* Moves the refs handed out and the counters into map (on success).
 * Returns 0 or -1 (out of memory: map then keeps its old numbering). */
int act_snap_refs_commit(struct snap_ctx *x, struct snap_refmap *map);
/* Frees what numbering holds in x. */
void act_snap_refs_free(struct snap_ctx *x);
/* Frees an array of refs. */
void act_snap_refs_free_array(struct snap_ref *refs, size_t n);

/* ---- snapshot_build.c ---------------------------------------------------------- */

/* Frees s and its children; NULL is a no-op. */
void act_snap_snode_free(struct snode *s);
/* 1 when s has /url or /placeholder lines. */
int act_snap_has_props(const struct snode *s);
/* Builds the rendered tree from the root doc. Returns 0 or -1 (err set). */
int act_snap_build(struct snap_ctx *x);

/* ---- snapshot_render.c --------------------------------------------------------- */

/* Renders the tree into x->out. Returns 0 or -1 (err set). */
int act_snap_render(struct snap_ctx *x);

#endif

/*
 * snapshot.h - the page as the agent sees it: the accessibility tree
 * (CDP Accessibility + DOM) rendered as YAML in Playwright's shape,
 *
 *   - heading "Orders" [level=1] [ref=e3]
 *   - button "Save" [ref=e5]
 *   - textbox "Name" [ref=e6]: current value
 *   - link "Next page" [ref=e7]:
 *     - /url: /page2
 *   - iframe [ref=e8]:
 *     - button "Inside" [ref=f1e2]
 *
 * and the map from each ref to the DOM node it names. Private to actions/.
 *
 * Refs are numbered as Playwright numbers them: "e1", "e2", ... in
 * document order within each frame's document (the first snapshot of a
 * document starts at e1, the page's body), with "f<N>" in front for the
 * N-th child frame. A node keeps its ref while it lives and its role and
 * name stay the same (else it gets the next number); a new node gets the
 * next number; a new document in a frame starts again at e1. Every ref
 * handed out stays in the map (snap_refmap.issued) while its document
 * lives, so a ref from any answer resolves. A password field's
 * value is shown as "••••" whatever the AX tree says; a value that cannot
 * be checked is left out.
 */
#ifndef GB_ACT_SNAPSHOT_H
#define GB_ACT_SNAPSHOT_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

struct cdp_conn;

/* One ref of the latest snapshot: which node it names, and what the
 * agent was shown for it (to explain stale refs and to gate actions). */
struct snap_ref {
	char ref[16];        /* "e5", "f1e2" */
	char session_id[64]; /* CDP session of the frame's target */
	char frame_id[64];
	int backend_node_id; /* DOM.BackendNodeId */
	char *role;          /* "button" */
	char *name;          /* accessible name as shown */
};

/* The last ref number handed out in one frame's document. */
struct snap_counter {
	int prefix;      /* the frame's N of "f<N>", 0 for the main frame */
	int doc_backend; /* DOM.BackendNodeId of its document: a new document restarts at e1 */
	/* the CDP session the document is in: backend ids count per target,
	 * so another tab's document may have the same id */
	char doc_session[64];
	unsigned last;
};

struct snap_refmap {
	struct snap_ref *refs; /* the refs of the latest snapshot */
	size_t n_refs;
	unsigned generation;     /* increases with every snapshot */
	struct snap_ref *issued; /* every ref handed out whose document lives, oldest first */
	size_t n_issued;
	struct snap_counter *counters;
	size_t n_counters;
};

/* A field whose value is never shown (it received a secret). */
struct snap_masked {
	char session_id[64]; /* CDP session of its frame */
	int backend_node_id;
	char frame_id[64]; /* its frame ("" when unknown): places it in screenshots */
};

/* What to do with text a person would not see (hidden, off-screen, zero
 * size, transparent, clipped away). */
enum snap_hidden_mode {
	SNAP_HIDDEN_OFF = 0, /* not looked for */
	SNAP_HIDDEN_FLAG,    /* shown, marked [hidden-text] */
	SNAP_HIDDEN_DROP,    /* left out */
};

/* What a snapshot found besides its lines. */
struct snap_stats {
	size_t hidden_flagged; /* lines marked [hidden-text] */
	size_t hidden_dropped; /* hidden texts and nodes left out (SNAP_HIDDEN_DROP) */
	size_t label_differs;  /* controls marked [label-differs, ...] */
	/* the top-level document's title, as its layout reply gave it, when
	 * title_known (a whole-page snapshot that looked for hidden text or
	 * boxes, and a title that fits); "" for a page without one */
	char title[1024];
	int title_known;
};

/* One rendered line: where it is in the text, its depth (indentation / 2)
 * and its ref ("" for a text or property line). */
struct snap_line {
	size_t off;
	size_t len;
	unsigned depth;
	char ref[16];
};

struct snap_lines {
	struct snap_line *v;
	size_t n;
};

/* Maps a frame id to the CDP session that owns it (out-of-process
 * iframes have their own target session); returns NULL when the frame
 * belongs to the page's own session. */
typedef const char *(*snap_frame_session_fn)(void *user, const char *frame_id);
/* (NULL means: the session of the frame's parent frame.) */

struct snap_options {
	const char *page_session_id; /* the page target's CDP session */
	const struct snap_ref *root; /* subtree: NULL = whole page. May point into the
	                               * map being replaced. Needs session_id and
	                               * backend_node_id; ref and frame_id may be empty
	                               * (a node found by selector: it is then searched
	                               * in every frame of its session) */
	size_t max_chars;            /* 0 = unlimited; else cut with a marker line */
	unsigned max_depth; /* levels below the top lines rendered (Playwright's depth); 0 = all */
	int timeout_ms;     /* for the whole snapshot; <= 0 = 30000 */
	snap_frame_session_fn frame_session;
	void *frame_session_user;
	const struct snap_masked *masked; /* values shown as "••••" */
	size_t n_masked;
	/* hidden text: looked for with DOMSnapshot.captureSnapshot (one more
	 * call per frame) and flagged or dropped; a label that differs from the
	 * visible text of a button or link is flagged [label-differs, visible
	 * "..."] whenever this is not OFF */
	enum snap_hidden_mode hidden;
	int boxes;                /* show [box=x,y,width,height] after each ref */
	struct snap_stats *stats; /* filled on success when not NULL */
	struct snap_lines *lines; /* filled on success when not NULL (act_snapshot_lines_free) */
};

/*
 * Takes a snapshot of the page (all frames, iframes inlined under their
 * iframe node) and renders it. *yaml_out is malloc'd; *truncated is 1
 * when max_chars cut it (the text then ends with a line
 * "- … snapshot truncated at N characters: pass a target to see a subtree").
 * The previous contents of map are freed and replaced (generation + 1).
 * Returns 0, or -1 with a reason in err.
 *
 * Cutting: whole lines are kept while they fit in max_chars characters
 * (code points, newlines included); N is the number kept, the marker line
 * comes on top. The text also has a ceiling of 4 MiB, cut the same way.
 * Only refs on kept lines enter the map. On failure the map is left as it
 * was (a subtree whose root is gone fails: "ref e12 is stale ...").
 */
int act_snapshot_take(struct cdp_conn *c, const struct snap_options *opt, struct snap_refmap *map,
                      char **yaml_out, int *truncated, char *err, size_t errlen);

/* Looks up ref in map: the latest snapshot's refs, then every ref handed
 * out before whose document lives (the node may be gone: resolving it
 * says so). NULL when absent. Borrowed pointer into map. */
const struct snap_ref *act_snapshot_find(const struct snap_refmap *map, const char *ref);

/* Frees the latest snapshot's refs; the refs handed out before and the
 * numbering stay. The map can be reused. */
void act_snapshot_clear(struct snap_refmap *map);

/* Frees everything the map holds, numbering included (a closed tab). */
void act_snapshot_forget(struct snap_refmap *map);

/* How many refs of the latest snapshot have this role and a name that
 * contains name (case-insensitive; any name when name is NULL or ""), as
 * Playwright's getByRole matches. */
size_t act_snapshot_count_role(const struct snap_refmap *map, const char *role, const char *name);

/* Frees a line table; the table can be reused. */
void act_snapshot_lines_free(struct snap_lines *lines);

/* ---- what the agent saw (snapshot_diff.c) ------------------------------- */

/* Per ref of the last whole snapshot the agent was shown: a hash of its
 * own line and of its subtree's lines. */
struct snap_seen {
	char ref[16];
	uint64_t line_hash;
	uint64_t tree_hash;
};

struct snap_view {
	struct snap_seen *v; /* sorted by ref */
	size_t n;
	uint64_t *texts; /* lines without a ref: hash of (parent's ref, line), sorted */
	size_t n_texts;
};

/* Replaces view with what yaml (and its line table) shows. Returns 0 or
 * -1 (out of memory: the view is then empty, and the next answer whole). */
int act_snapshot_view_set(struct snap_view *view, const char *yaml, const struct snap_lines *lines);

/*
 * The part of yaml that changed since view: a subtree that shows the same
 * is left out (its refs stay valid); a new node shows whole; a node whose
 * own line or whose text lines changed shows its line and what changed
 * under it; a node whose line is the same shows only its changed
 * children. Changes keep their nesting and start at the left edge. A
 * first comment line says so, and which refs of view are gone. With an
 * empty view: yaml whole. Returns a malloc'd text, or NULL when memory is
 * out.
 */
char *act_snapshot_changed(const struct snap_view *view, const char *yaml,
                           const struct snap_lines *lines);

/* Frees the view; it can be reused. */
void act_snapshot_view_free(struct snap_view *view);

#endif

/*
 * actions-private.h - the pipeline's context and the helpers the tool
 * files share. Private to actions/.
 */
#ifndef GB_ACTIONS_PRIVATE_H
#define GB_ACTIONS_PRIVATE_H

#include "actions/actions.h"
#include "actions/snapshot.h"
#include "common/unittest.h"
#include "common/util.h"
#include "evidence/evidence.h"
#include "policy/egress.h"
#include "policy/tenant.h"
#include "sessions/sessions.h"
#include "store/store.h"

#include <jansson.h>
#include <pthread.h>

#define ACT_LAUNCH_ARGS_MAX 16 /* launch flags of a session's browser */
#include <stdint.h>

struct cdp_conn;
struct sess;
struct sess_options;
struct sess_page;
struct evid_audit;
struct act_keeper;
struct act_pagelog;
struct act_downloads;
struct act_console_log;
struct store;
struct policy_risk;
struct policy_admin;

#define ACT_PREFETCH_MAX 24 /* refs resolved ahead of an action (ref_prefetch.c) */

/* One ref resolved ahead: its calls, until taken or forgotten. */
struct act_prefetched {
	char ref[16];
	char session_id[64];
	int backend_node_id;
	long long world; /* the isolated world it was asked in; 0: not asked */
	uint64_t page_call;
	uint64_t world_call;
};

struct act_prefetch {
	unsigned generation; /* of the refs asked for (snap_refmap.generation) */
	struct act_prefetched v[ACT_PREFETCH_MAX];
	size_t n;
};

/* An agent's session: a worker thread, its queue and its browser. */
struct act_session {
	char id[33]; /* the agent session's id (browsers come and go) */
	char *data_dir;
	char *tenant;
	char *chromium_path;
	char run_dir[4096];
	int headless;
	int chromium_sandbox_off;             /* act_config's (immutable) */
	const struct secret_env *env_secrets; /* act_config's (borrowed, immutable) */
	int viewport_width;
	int viewport_height;
	int action_timeout_ms;
	int prelaunch;
	int require_evidence;       /* refuse to act when evidence cannot be kept */
	int evidence_before_answer; /* policy evidence.before_answer: the screenshot is
	                             * taken before the call answers (else right after) */
	int before_screenshots;     /* also keep a screenshot from before each action */
	json_t *policy;             /* the tenant's policy (a copy; hashed into the manifest) */
	struct policy_tenant *tenant_policy; /* the same, parsed and validated once */
	char client_name[64];                /* act_config.client_name, "" if none (immutable) */
	char flow_name[128];                 /* act_config.flow_name, "" if none (immutable) */
	int reported_ready;                  /* time_to_ready was in a result already */
	unsigned caps;                       /* capability groups on (caps.c; immutable) */
	/* the mouse as the vision tools left it (worker thread only) */
	double mouse_x;
	double mouse_y;
	int mouse_pressed;  /* browser_mouse_down pressed here (mouse_x, mouse_y) */
	char mouse_held[8]; /* the button browser_mouse_down holds down, "" if none */
	json_t *media;      /* the media emulation in force ({media?, colorScheme?, ...}; worker) */
	json_t *emulation;  /* browser_emulate's settings in force (emulation.c; worker) */

	/* egress (egress.c) */
	struct policy_egress *egress;
	/* policies replaced by a narrowing, kept until the session ends (the
	 * proxy may still be checking with one); worker thread only */
	struct policy_egress *egress_retired[POLICY_MAX_LAYERS];
	size_t n_egress_retired;
	struct policy_proxy *proxy;
	struct policy_chromium_flags proxy_flags;
	const char *extra_args[9];
	json_t *refusals; /* {lock} refusals not yet reported */
	/* gates (gates.c) */
	struct store *db;               /* thread-safe */
	const struct policy_risk *risk; /* immutable; borrowed from tenant_policy */
	struct policy_admin *admin;
	int elicit_approvals; /* policy approvals.elicitation: a person may decide at
	                              the MCP client (immutable) */
	int layer_tool;       /* enforcement layers on (1) or off for drills (0) */
	int layer_fetch;
	int layer_proxy;

	pthread_t thread;
	pthread_mutex_t lock;
	pthread_cond_t cond;
	struct act_call *head;     /* {lock} queued calls */
	struct act_call *tail;     /* {lock} */
	struct act_call *running;  /* {lock} */
	size_t queued;             /* {lock} calls in head..tail, at most ACT_SESSION_MAX_QUEUED */
	int stopping;              /* {lock} */
	atomic_int cancel_flag;    /* raised for the running call; read by cdp waits */
	struct cdp_conn *wake_cdp; /* {lock} the running browser's connection, for cdp_wake */
	/* {lock} the operation whose screenshot is being taken after its
	 * answer ("" when none); evidence_cond is signalled when it is queued */
	char deferred_op[72];
	pthread_cond_t evidence_cond;

	struct evid_store *store;  /* thread-safe */
	struct evid_audit *audit;  /* thread-safe; NULL when the log cannot be opened */
	struct act_keeper *keeper; /* thread-safe */

	/* worker thread only */
	struct sess *sess;
	struct snap_refmap refs;
	struct act_prefetch prefetch; /* its likely targets, resolved ahead */
	char *last_snapshot;          /* the latest snapshot text the agent saw */
	struct snap_view view; /* what the agent saw of the page last (snapshot_mode changed) */
	int snapshot_mode;     /* enum act_snapshot_mode (immutable) */
	char test_id_attribute[64];
	char *output_dir;          /* NULL = none (immutable) */
	int navigation_timeout_ms; /* 0 = action_timeout_ms (immutable) */
	int no_code;               /* answers show no code (immutable) */
	int snapshot_boxes;        /* snapshots show [box=...] (immutable) */
	int omit_images;           /* answers carry no image items (immutable) */
	int code_lang;             /* enum act_code_lang of the code shown (immutable) */
	char *user_agent;          /* NULL = Chromium's (immutable) */
	char *grant_permissions;   /* NULL = none (immutable) */
	char user_agent_flag[600];
	const char *launch_args[ACT_LAUNCH_ARGS_MAX];
	unsigned operations;
	/* the last evidence screenshot, reused while the page is unchanged */
	char last_shot_sha[65];
	char last_shot_op[72];
	char last_shot_mark[64];
	char last_shot_url[2048];

	/* egress layer 4 (egress.c) */
	int layer_netns; /* the browser runs in its own network namespace */
	int netns_fd;    /* that namespace (owned), 0 when none */
	/* the profile the browser runs on (profile.c); worker thread only */
	struct prof_lease *profile;
	json_t *profile_closed;  /* how the last profile was closed (saved or why not) */
	json_t *profile_origins; /* {origin: true} visited while it was open */
	int profile_closing;     /* act_profile_close() is closing the browser */
	int profile_save_at_end; /* {lock} seal the profile when the session ends */
	/* limits (limits.c; immutable after act_session_new) */
	struct sess_limits limits;
	/* the CDP endpoint (cdp_endpoint.c) */
	char cdp_endpoint[320];        /* act_config.cdp_endpoint, "" if none (immutable) */
	struct act_cdp_note *cdp_note; /* {lock} how a DevTools client reaches the browser */
	/* warm pool (warm_pool.c) */
	struct act_pool *pool; /* borrowed; NULL = none */
	int pooled;            /* worker only: the browser came from the pool */
	/* secrets and page content (secret_use.c); worker thread only */
	struct act_typed_secret *typed_secrets; /* values typed in this session, to scrub */
	size_t n_typed_secrets;
	struct snap_masked *masked_fields; /* fields that received a secret */
	size_t n_masked_fields;
	int hidden_text; /* enum snap_hidden_mode: policy page_content.hidden_text */
	/* the web console (takeover.c); live is shared with the front, the
	 * rest is the worker's */
	struct console_live *live;
	json_t *human_before;          /* the page when a person took the browser */
	json_t *human_requests;        /* the page's requests meanwhile */
	long long human_requests_seen; /* how many */
	int human_events;              /* the person's input events */
	struct cdp_conn *human_cdp;    /* where human_listener is */
	int human_listener;
	char live_browser[64];     /* the browser the console's listeners are on (sess_id) */
	json_t *human_note;        /* for the agent's next answer, or NULL */
	struct sess *pool_held;    /* a pooled browser taken (with its proxy's socket and
	                             * namespace) when the session started, adopted by the
	                             * worker when it starts (warm_pool.c); the worker's once
	                             * it runs; or NULL */
	struct act_shared *shared; /* isolation "context" (shared_browser.c): the tenant's
	                            * shared browser, counted; NULL: a browser of its own */
	/* files (files.c): the page log and the download area of the browser
	 * they follow (its sess id; "" none); worker thread only */
	struct act_pagelog *pagelog;
	struct act_downloads *downloads;
	struct act_console_log *console_log; /* the output directory's console-*.log */
	char files_browser[40];
};

/* profile.c */
struct prof_lease;
/* Opens the session's tenant's profile (user NULL: "default") for this
 * session; records profile_opened. Returns 0 or a negative PROF_E* with
 * the reason in err. */
int act_profile_open(struct act_session *as, const char *name, const char *user, int readonly,
                     int create, char *err, size_t errlen);
/* Closes the open profile: the browser first, then (save, browser alive,
 * writable) the state sealed as the next version, then the clear copy
 * wiped. Returns {name, user, version, saved, reason?, error?} (new
 * reference; also kept in as->profile_closed), or NULL when none is open. */
json_t *act_profile_close(struct act_session *as, int save, const char *why);
/* Sets the session cookies kept in dir (act_profile_keep_side_state) in
 * the browser of cdp. */
void act_profile_restore_session_cookies(struct cdp_conn *cdp, const char *dir);
/* After a browser started on the profile: restores its session cookies. */
void act_profile_browser_started(struct act_session *as);
/* Notes the origin of a page URL the session visited (for export). */
void act_profile_note_url(struct act_session *as, const char *url);
/* Keeps what Chromium does not write to disk but a profile needs, as
 * side files of dir (sealed with it): the browser's session cookies and
 * the origins visited ({origin: true}, borrowed) added to those known. */
void act_profile_keep_side_state(struct cdp_conn *cdp, const char *dir, json_t *visited);
/* The origins recorded in the profile dir (new array). */
json_t *act_profile_known_origins(const char *dir);
/* The settings storage_state.c runs its network-less Chromium with, for
 * the session's tenant (cfg zeroed by the caller; strings borrowed). */
void act_profile_storage_config(const struct act_session *as, struct act_config *cfg);
/* The error code a tool result carries for a PROF_E* error rc. */
const char *act_profile_error_code(int rc);
/* {name, user, version, readonly} of the open profile (new reference). */
json_t *act_profile_lease_json(const struct prof_lease *l);
/* One sentence for the model about a close result (borrowed). */
void act_profile_describe_close(struct gb_buf *text, json_t *closed);

/* storage_page.c: a browser context's storage as Playwright's
 * storageState, through one page of the context whose requests it
 * answers itself (no network). */
struct act_storage_page {
	struct cdp_conn *cdp; /* borrowed */
	char psid[64];        /* the page's CDP session */
	char context_id[64];  /* its browser context, "" for the default one */
	char origin[512];     /* the origin being visited */
	int listener;
};
/* 1 when s is an http(s) origin: scheme://host[:port], nothing after. */
int act_storage_is_origin(const char *s);
/* Intercepts every request of page psid (strings copied; cdp borrowed),
 * whose cookies are those of context_id (NULL: the browser's default
 * context), and resumes it when resume is set (a page paused before its
 * first script). Returns 0, or -1 with err. */
int act_storage_page_start(struct act_storage_page *sp, struct cdp_conn *cdp, const char *psid,
                           const char *context_id, int resume, char *err, size_t errlen);
/* Stops intercepting (the page stays). */
void act_storage_page_stop(struct act_storage_page *sp);
/* Checks the shape of a storageState (borrowed); *cdp_cookies gets its
 * cookies as CDP CookieParams (new reference, also on failure). */
int act_storage_check(json_t *state, json_t **cdp_cookies, char *err, size_t errlen);
/* Reads the cookies and the local storage of each origin in origins (an
 * array of strings, borrowed; others skipped) into *state (new). */
int act_storage_read(struct act_storage_page *sp, json_t *origins, json_t **state, char *err,
                     size_t errlen);
/* Writes state (borrowed, checked first) into the page's context; the
 * origins written are added to visited ({origin: true}) when not NULL. */
int act_storage_write(struct act_storage_page *sp, json_t *state, json_t *visited, char *err,
                      size_t errlen);

/* context_profile.c: a context-mode session's profile, its context's
 * storage state. */
enum { ACT_PROFILE_EMPTY, ACT_PROFILE_USER_DATA_DIR, ACT_PROFILE_STORAGE_STATE };
/* What the lease's dir holds: nothing yet, a Chromium user-data-dir or a
 * context's storage state. */
int act_context_profile_kind(const struct prof_lease *l);
/* Refuses (-1, err says what to do) a profile of the other kind than the
 * session's isolation mode keeps; 0 when it fits. */
int act_context_profile_check(const struct act_session *as, const struct prof_lease *l, char *err,
                              size_t errlen);
/* The storage state kept in the lease's dir (*state new, checked). */
int act_context_profile_read(const struct prof_lease *l, json_t **state, char *err, size_t errlen);
/* Replaces the storage state kept in the lease's dir with state (borrowed). */
int act_context_profile_write(const struct prof_lease *l, json_t *state, char *err, size_t errlen);
/* sess_join_options.prepare: loads the session's profile (user: the
 * act_session) into its new context before its first tab. */
int act_context_profile_load(void *user, struct sess *s, char *err, size_t errlen);
/* Reads the session's context into its profile's dir (before the seal). */
int act_context_profile_save(struct act_session *as, char *err, size_t errlen);

/* A resolved target element. */
struct act_target {
	char session_id[64]; /* CDP session of the element's frame */
	char object_id[128]; /* Runtime.RemoteObjectId */
	int backend_node_id;
	char ref[16];          /* "" for CSS selectors */
	char description[256]; /* 'button "Save"' */
	/* the ref's role and name when it was resolved (the ref may name
	 * another node once the page has changed) */
	char role[64];
	char name[256];
	/* set by act_actionable: the element in glassbox's isolated world, and
	 * what maps its frame's viewport to the top-level one */
	char world_object_id[128];
	double to_top_dx;
	double to_top_dy;
	int landing; /* a landing listener is armed (clicks) */
	/* the armed listener's token, which its words of the press carry ("":
	 * none known) */
	char landing_token[24];
	/* the actionability check asked before the gate (act_actionable_ask),
	 * not yet taken, and its kind */
	uint64_t precheck_call;
	char precheck_kind[8];
	/* where a click's press and its click event went, asked for and
	 * judged once the page settled (act_click_press_ask,
	 * act_click_release_ask): the calls, the click's point, and the line
	 * the text gets when both went to the target ("" when none) */
	uint64_t press_call;
	int press_asked;
	uint64_t release_call;
	double release_x;
	double release_y;
	char release_done[300];
};

/* What happened on the page while an action ran (recorder.c). */
struct act_recorder {
	struct cdp_conn *cdp;
	int listener;
	const char *page_session; /* borrowed */
	char main_frame_id[64];
	json_t *responses;      /* [{url, method, status, type}] */
	json_t *failed;         /* [{url, method, error}] */
	json_t *dialogs;        /* [{type, message}] */
	json_t *console_errors; /* ["..."] */
	json_t *inflight;       /* {requestId: {url, method, type}} */
	int navigating;         /* main frame navigation started, not yet loaded */
	int navigated;          /* a main-frame navigation happened */
	int load_fired;
	int64_t dcl_at_ms; /* the main document's DOMContentLoaded, while navigating; 0 = not yet */
	int main_status;   /* status of the main document, 0 if none */
	int dialog_opened;
	unsigned events; /* counts relevant events, to notice activity */
	/* where a click's trusted press landed, as its landing recorder last
	 * told it (SESS_PRESS_BINDING) in that CDP session: {seen, inside,
	 * hit, x, y, box, connected} as landed_js reads it, or NULL */
	json_t *pressed;
	char pressed_session[64];
};

/* The most elements one call acts on part by part (browser_fill_form's
 * fields). */
#define ACT_MAX_PARTS 64

/* Frames of the page while one action runs (screencast.c). */
struct act_screencast {
	struct cdp_conn *cdp;
	int consumer; /* cdp_cast_join handle; 0: not recording */
	int max_frames;
	json_t *frames; /* [{"png": base64, "at_ms"}] */
};

/* The exchanges of one action, for its network_log (netlog.c). */
struct act_netlog {
	struct cdp_conn *cdp;
	int listener;  /* cdp_on handle; 0: none */
	json_t *byid;  /* requestId -> exchange (in order too) */
	json_t *order; /* the exchanges, in the order they began */
};

/* The context of one call as it moves through the pipeline. */
struct act_ctx {
	struct act_session *as;
	struct act_call *call;
	const struct act_def *def;
	json_t *args; /* borrowed */
	struct sess *sess;
	struct cdp_conn *cdp;
	struct sess_page *page;
	const char *psid; /* page CDP session id */
	char operation_id[72];
	int64_t started_ms;
	int64_t deadline_ms;

	struct act_target target;
	int has_target;
	struct act_recorder rec;
	struct act_screencast cast;
	struct act_netlog netlog;

	json_t *out;            /* structuredContent being built */
	json_t *content;        /* extra content items (images, links) */
	struct gb_buf text;     /* glassbox's facts for the model (### Verification) */
	struct gb_buf code;     /* the Playwright code it ran (### Ran Playwright code) */
	struct gb_buf result;   /* what it returned (### Result) */
	struct gb_buf evidence; /* where its evidence is (### Evidence) */
	struct gb_buf events; /* console entries and downloads since the last answer (### Events) */
	char *snapshot;       /* the ### Snapshot section's text (owned), or NULL */
	int snapshot_is_link; /* it is a "- [Snapshot](file)" line, not YAML */
	char content_marker[17];  /* the marker of the page content in this answer, or "" */
	json_t *code_probe;       /* the target's locator facts, read before acting (owned) */
	uint64_t code_probe_call; /* their reading, asked for and not yet taken */
	int gate_asked;           /* the gate put the call to a person (gates.c) */
	/* a read-back asked for during the action, judged once the page
	 * settled (act_click_release_take, the typed value's); NULL: none */
	int (*after_settle)(struct act_ctx *ctx);
	/* the typed value's read-back (field_text.c): the call, and what to
	 * compare with (owned) */
	uint64_t reread_call;
	char *reread_typed;
	int reread_editable;
	char reread_type[32];
	int failed;
	char error_code[32];
	char error[1024];
	/* the error is a check's finding in Playwright MCP's words ("Text not
	 * found"), shown as it is, without the "Error: " of a failure */
	int error_plain;
	int sensitive; /* typed into a password field: redact */
	/* browser_fill_form: bit i set when fields[i] was a password field
	 * (its value is redacted from the record) */
	unsigned long long sensitive_fields;
	/* browser_fill_form: the node each field was gated on, checked again
	 * right before it is filled */
	int part_nodes[ACT_MAX_PARTS];
	int skip_evidence;
	unsigned char *shot_png; /* the evidence screenshot, for the record keeper */
	size_t shot_len;
	unsigned char *before_png; /* the screenshot before acting (before_screenshots) */
	size_t before_len;
	struct evid_annotation annotation; /* target box and click point */
	uint64_t shot_call;                /* evidence screenshot requested, not yet collected */
	/* while shot_call waits: a listener (cdp_on handle, 0 none) counting
	 * the page's main-frame navigations in shot_navigated (observe.c) */
	int shot_watch;
	int shot_navigated;
	int shot_loaded;    /* and the loads of the documents it navigated to */
	uint64_t mark_call; /* pre-action DOM mark requested, not yet collected */
	/* the page re-read by settling's last round trip (observe.c's
	 * re-read, owned), the tab it read and the recorder's count of events
	 * then; NULL when that trip did not end the settling */
	json_t *settled_view;
	char settled_target[64]; /* the target id of the tab it read */
	unsigned settled_events;
	/* a re-read of the page asked for right after the action's own script
	 * (act_settle_offer; 0: none), and the count of events before it */
	uint64_t offered_call;
	unsigned offered_events;
	int in_ledger;                      /* the operation is open in the ledger */
	int ledger_unwritten;               /* ... under the pipeline's id, with no row yet */
	char args_hash[STORE_HASH_MAX + 1]; /* its row's (the arguments may be gone by then) */
	int acted;                          /* marked running: input may have reached the page */
	char url_before[2048];
	/* the URL of the target's frame when it is not the page's (gates.c),
	 * "" otherwise: where the action happened, for the record */
	char frame_url[2048];
	/* where the screenshot being stored starts, in CSS px from the viewport's
	 * origin (full-page and element screenshots), to mask secret fields */
	double shot_dx;
	double shot_dy;
	int shot_masked;   /* the stored screenshot had fields masked */
	int shot_deferred; /* shot_call is collected after the answer (observe.c) */
	unsigned steps;    /* the pipeline steps it ran: 1u << enum act_step */
	/* when each step began, ms after started_ms (-1: not run), and when
	 * the answer's snapshot began and the answer left: the debug log's
	 * timing line of the call (pipeline.c) */
	int64_t step_at_ms[ACT_STEP_COUNT];
	int64_t snapshot_at_ms;
	int64_t answered_at_ms;
};

/*
 * One tool's code, the hooks of its descriptor (struct act_def.impl).
 * The pipeline calls them in its order (pipeline.c); which of its steps
 * run is decided by the descriptor's effect, never by the tool's name.
 */
struct act_tool_impl {
	/* optional: a check of the tool's own before the risk rules (e.g. a
	 * URL that is not a web page); 0 to go on, -1 with the call failed */
	int (*gate)(struct act_ctx *ctx);
	/* optional: a tool that acts on several elements gates each of them
	 * here (act_gate_check_part), in place of the one gate on `target`;
	 * 0 when all may go on, -1 with the call failed (nothing was done) */
	int (*gate_parts)(struct act_ctx *ctx);
	/* the action: 0 done (the pipeline settles), 1 done and settled
	 * here, -1 failed (ctx says why) */
	int (*run)(struct act_ctx *ctx);
	int needs_target; /* resolve `target` before running (1), optional (2) or not (0) */
	/* optional: the kind of actionability check ("click", "hover") run
	 * starts with on the target, asked while the gate reads the target
	 * (act_actionable_ask) */
	const char *precheck;
	/* the previous evidence screenshot stands for this call when the page
	 * visibly did not change (a script that only read) */
	int evidence_if_changed;
	/* runs while a JavaScript dialog waits (others are refused until it
	 * is handled) */
	int with_dialog_open;
	/* runs while a file chooser the page opened waits: it answers the
	 * chooser, takes its page away (a navigation) or runs a script, which
	 * a chooser does not stop. Others that change the page are input a
	 * person could not give with the chooser open: refused, as Playwright
	 * MCP refuses them, until it is answered */
	int with_file_chooser_open;
	/* reads only, yet its answer shows the page as an action's does
	 * (snapshot_mode): a wait that lets the page change */
	int shows_page;
	/* appends the Playwright code of the call to ctx->code (codegen.h);
	 * NULL: the tool shows none */
	void (*code)(struct act_ctx *ctx);
	/* optional: 1 when, in the full snapshot mode (the default), the
	 * call's answer carries no snapshot because Playwright MCP's answer to
	 * it carries none (a fill without submit, a key other than Enter, a
	 * script); its other sections and the refs shown before stay as they
	 * are. NULL: the answer carries the snapshot */
	int (*no_snapshot)(const struct act_ctx *ctx);
};

/* An act_tool_impl.no_snapshot for the tools whose answers never carry
 * the snapshot in Playwright MCP (browser_evaluate, browser_fill_form,
 * browser_handle_dialog, browser_resize, the mouse's moves, buttons and
 * wheel): 1. */
int act_no_snapshot(const struct act_ctx *ctx);

/* Notes that the call ran step (ctx->steps). */
void act_step(struct act_ctx *ctx, enum act_step step);
#ifdef GB_UNITTEST_BUILD
/* Called as each call finishes with the steps it ran (a bit per step). */
extern void (*act_test_on_steps)(const char *tool, unsigned steps);
#endif

/* The page's current tab for the call: ctx->page, psid (after a tool
 * changed tabs, so post-observe reads the tab now shown). */
void act_ctx_follow_current_page(struct act_ctx *ctx);

/* browser_options.c */
/* Adds the session's launch flags (--user-agent) to opt->extra_args. */
void act_browser_launch_args(struct act_session *as, struct sess_options *opt);
/* Grants the session's permissions in its new browser. Returns 0, or -1
 * with the reason in err. */
int act_browser_grant(struct act_session *as, char *err, size_t errlen);
/* Sizes the window of the session's page so that the page's viewport is
 * the session's viewport (width x height in CSS pixels): a window of that
 * size leaves the page less, by the height of the browser's own bars.
 * A browser that cannot is logged, and its viewport stays the window's
 * less the bars. A session whose tabs emulate their viewport (a shared
 * browser's small windows, sess_emulated_viewport) keeps its window. */
void act_browser_fit_viewport(struct act_session *as);

/* emulation.c */
/* A network preset of browser_emulate: throughput in bytes a second (-1:
 * not throttled), latency in ms. */
struct act_network_preset {
	const char *name;
	int offline;
	double download_bps;
	double upload_bps;
	double latency_ms;
};
/* The preset names, NULL-terminated, for the parameter's enum. */
extern const char *const act_network_preset_names[];
/* The preset called name (borrowed), or NULL. */
const struct act_network_preset *act_network_preset_find(const char *name);
/* The CDP commands (a new array of {method, params}) that put setting
 * (NULL: every setting present) of state (borrowed) in force on a target
 * of type ("page", "iframe", "...worker") of sess (borrowed, may be NULL);
 * a setting absent from state is cleared (the viewport: back to sess's
 * emulated one when it has one, sess_emulated_viewport). */
json_t *act_emulation_commands(const json_t *state, const char *setting, const char *type,
                               const struct sess *sess);
/* Sends as->emulation's commands to a target just attached, still paused
 * (never waits; the target hook of every browser of the session). */
void act_emulation_setup_target(struct act_session *as, struct sess *sess, const char *session_id,
                                const char *type);

/* page_state.c */
/* The hidden-text mode of the tenant's policy, else SNAP_HIDDEN_FLAG. */
enum snap_hidden_mode act_snapshot_hidden_mode(const struct act_ctx *ctx);
/* Takes a snapshot of the current page as the agent is shown it (root: a
 * subtree, or NULL; max_chars: 0 = whole; boxes: [box=...] after each ref;
 * depth: levels shown, 0 = all) into the session's ref map (the session's
 * refs become the new ones), with the session's secret masking and
 * hidden-text mode (hidden: SNAP_HIDDEN_OFF = act_snapshot_hidden_mode),
 * the text scrubbed of typed secrets. *yaml malloc'd (the caller's, NULL
 * on failure); stats and lines filled when not NULL. Returns 0, or -1 with
 * the call failed. */
int act_page_snapshot(struct act_ctx *ctx, const struct snap_ref *root, size_t max_chars, int boxes,
                      unsigned depth, int hidden, struct snap_stats *stats, char **yaml,
                      int *truncated, struct snap_lines *lines);

/* output_dir.c */
/* The path of filename in the session's output directory (--output-dir)
 * into path. filename must be a plain name: letters, digits, '.', '-',
 * '_', not starting with '.'. Returns 0, or -1 with the call failed (no
 * output directory, or a name that is not plain). */
int act_output_path(struct act_ctx *ctx, const char *filename, char *path, size_t pathlen);
/* Writes data to path (created or replaced; a symlink is refused). Returns
 * 0, or -1 with the call failed. */
int act_output_write(struct act_ctx *ctx, const char *path, const void *data, size_t len);
/* Writes data to a new file "<prefix>-<UTC time>.<ext>" of the output
 * directory; link (linklen bytes) receives its path as the agent names it
 * (relative to the server's working directory when inside it). Returns 0,
 * or -1 with the call failed. */
int act_output_new_file(struct act_ctx *ctx, const char *prefix, const char *ext, const void *data,
                        size_t len, char *link, size_t linklen);
/* A name "<prefix>-<UTC time>.<ext>" ("...-N.<ext>" when taken) that no
 * file of the output directory has yet, into name. Returns 0, or -1 when
 * there is no output directory (or no free name). */
int act_output_fresh_name(const struct act_ctx *ctx, const char *prefix, const char *ext,
                          char *name, size_t namelen);
/* Writes data to the output directory's file name (a plain name: no '/',
 * not starting with '.'), replacing it or (append) appended to it;
 * created when missing, never through a symlink. Returns 0, or -1 with
 * errno: the call does not fail for it. */
int act_output_save(const struct act_ctx *ctx, const char *name, int append, const void *data,
                    size_t len);
/* The path of the output directory's file name (a plain name) as the agent
 * names it, into link: relative to the server's working directory when
 * inside it. */
void act_output_link(const struct act_ctx *ctx, const char *name, char *link, size_t linklen);
/* The snapshot an action's answer carries (snapshot_mode), into
 * ctx->snapshot; a failure to take it is noted in the answer, the action's
 * outcome stands. */
void act_answer_snapshot(struct act_ctx *ctx);
/* Notes a whole, uncut snapshot as the one the agent saw last. */
void act_page_seen(struct act_ctx *ctx, char *yaml, const struct snap_lines *lines);

/* code_target.c */
struct act_code_target;
/* Reads, before the action, what the target's locator needs from the page
 * (act_code_probe_js); a failure leaves the code without that fact. */
void act_code_probe(struct act_ctx *ctx);
/* The same in two halves: asks without waiting (the page answers it
 * before anything sent after it), then takes the answer (a no-op when
 * nothing was asked). */
void act_code_probe_ask(struct act_ctx *ctx);
void act_code_probe_take(struct act_ctx *ctx);
/* The target of the call as codegen.h describes it (borrows from ctx). */
void act_code_target_of(const struct act_ctx *ctx, struct act_code_target *t);

/* code_tools.c */
/* What an assertion checks (act_code_expect). */
enum act_code_assertion {
	ACT_ASSERT_VISIBLE,     /* toBeVisible() */
	ACT_ASSERT_VALUE,       /* toHaveValue(value), toBeEmpty() for "" */
	ACT_ASSERT_CHECKED,     /* toBeChecked() */
	ACT_ASSERT_NOT_CHECKED, /* not.toBeChecked() */
};
/* Appends the assertion what (value: ACT_ASSERT_VALUE's, borrowed) on an
 * element in t->lang, as Playwright's generator writes it:
 * "await expect(<locator>).toHaveValue('x');", in Python
 * "expect(<locator>).to_have_value(\"x\")", in Java
 * "assertThat(<locator>).hasValue(\"x\");", in C#
 * "await Expect(<locator>).ToHaveValueAsync(\"x\");". The locator is the
 * expression given (borrowed, already in t->lang), or t's (codegen.h)
 * when it is NULL. Returns 0, or -1 with nothing appended (no locator for
 * t, buffer full). */
int act_code_expect(struct gb_buf *b, const struct act_code_target *t, const char *locator,
                    enum act_code_assertion what, const char *value);
/* Appends the options object of the keys of args (borrowed) that are set,
 * as Playwright's formatObject writes it: "{\n  button: 'right',\n  delay:
 * 20\n}"; keys in the order given (give them sorted), NULL-terminated.
 * Appends nothing when none is set. Returns how many it wrote, or -1. */
int act_code_options(struct gb_buf *b, json_t *args, const char *const *keys);
/* Appends a JSON number (borrowed) as JavaScript prints it ("0" when it is
 * not one). Returns 0 or -1. */
int act_code_number(struct gb_buf *b, json_t *v);

/* response.c */
/* The answer's text in Playwright MCP's layout: ### Ran Playwright code,
 * ### Error, ### Result, ### Open tabs, ### Page, ### Modal state,
 * ### Snapshot, then glassbox's ### Verification and ### Evidence.
 * Returns a malloc'd text (never NULL). */
char *act_response_text(struct act_ctx *ctx);
/* The title an answer shows for the tab of target_id, read from infos
 * (Target.getTargets' targetInfos, borrowed): "" when the page has none
 * (Chromium then reports its URL, or it without its scheme). Borrowed. */
const char *act_tab_title(json_t *infos, const char *target_id, const char *url);

/* page_content.c */
/* Notes that this answer hands page content to the model: the answer says
 * so with its marker (a random id the page cannot know, the same for the
 * whole answer), and structuredContent.page_content says so too. */
void act_page_content_mark(struct act_ctx *ctx);

/* recordkeeper.c */
struct act_keeper_action {
	const char *session_id;
	const char *operation_id;
	const char *tool;
	const char *url;
	json_t *body;        /* taken */
	json_t *arguments;   /* taken; already redacted */
	json_t *network_log; /* taken; may be NULL */
	unsigned char *png;  /* taken; may be NULL */
	size_t png_len;
	unsigned char *before_png; /* taken; may be NULL: the page before the action */
	size_t before_len;
	struct evid_annotation annotation;
	const char *snapshot_text; /* copied; may be NULL */
	json_t *frames;            /* taken; may be NULL: act_screencast_take() */
	int secret_text;
};
/* user: who runs the session's process; token: the id of the credential
 * the session came with (NULL: none); both copied into every record's
 * actor. agent_session: the agent session's id (NULL: none), copied into
 * the body of every record as "agent_session" (a record's "session" is
 * its browser session's id). */
int act_keeper_start(struct evid_store *store, struct evid_audit *audit, const char *tenant,
                     const char *user, const char *token, const char *agent_session,
                     struct act_keeper **out);
/* The session's calls never wait for their records (they answer before
 * their evidence): the keeper's thread runs at a lower priority from now
 * on, so that its PNG work does not take the CPU the browser needs. By
 * default it keeps the process's priority, as calls that wait for it do. */
void act_keeper_set_background(struct act_keeper *k);
/* 1 when the session's calls answer before their evidence screenshot is
 * in (policy evidence.before_answer false, and the tenant does not
 * require evidence): the screenshot is taken right after the answer, and
 * no call waits for its record. */
static inline int act_answers_first(const struct act_session *s)
{
	return !s->evidence_before_answer && !s->require_evidence;
}
/* Queues an audit record (body taken) of kind for the session. */
void act_keeper_record(struct act_keeper *k, const char *kind, const char *session_id,
                       const char *operation_id, json_t *body, int secret_text);
/* Queues an audit record of kind naming artifacts already stored (a
 * download's receipt, an upload): body and artifacts (an array of
 * evid_artifact_json objects) taken. */
void act_keeper_record_artifacts(struct act_keeper *k, const char *kind, const char *session_id,
                                 const char *operation_id, json_t *body, json_t *artifacts);
/* Queues a tool call's evidence and its audit record (everything in a
 * taken, also on failure), waiting for room when the queue is full.
 * Returns 0 with *ticket, or -1 with err when it could not be queued:
 * nothing of it will be kept. */
int act_keeper_record_action(struct act_keeper *k, const struct act_keeper_action *a,
                             uint64_t *ticket, char *err, size_t errlen);
/* Waits until the job of ticket is written; 1 with err (then not
 * reported again) when it could not be kept, 0 otherwise. */
int act_keeper_wait(struct act_keeper *k, uint64_t ticket, char *err, size_t errlen);
/* Queues the purge of the tenant's trail older than days. */
void act_keeper_purge(struct act_keeper *k, unsigned days);
/* Waits until everything queued is written. */
void act_keeper_flush(struct act_keeper *k);
/* Notes a failure to keep evidence that no call waits for: reported with
 * the next call's result (act_keeper_take_errors). */
void act_keeper_note_error(struct act_keeper *k, const char *why);
/* Hands out (once) every failure to keep evidence not yet reported, oldest
 * first: *errors a new array of their messages (NULL when there is none),
 * *dropped how many more there were beyond the keeper's bound (16), which
 * only the log names. Returns the array's size. */
size_t act_keeper_take_errors(struct act_keeper *k, json_t **errors, size_t *dropped);
void act_keeper_stop(struct act_keeper *k);

/* screencast.c: a session recording, when the policy asks for one. start
 * begins casting the page (no-op when off), stop ends it (idempotent),
 * take hands over the frames kept (a new reference, NULL: none; none
 * when secrets are in play, noted in body, borrowed). keep
 * (keeper thread) stores frames as screencast_frame artifacts under
 * meta, appends them to artifacts and lists them in body.screencast. */
void act_screencast_start(struct act_ctx *ctx);
void act_screencast_stop(struct act_ctx *ctx);
json_t *act_screencast_take(struct act_ctx *ctx, json_t *body);
struct evid_meta;
void act_screencast_keep(struct evid_store *store, const struct evid_meta *meta, json_t *frames,
                         json_t *artifacts, json_t *body);

/* netlog.c: each request and response of an action with its headers
 * (credential-like values redacted), for the network_log. start listens
 * (with the recorder), stop ends it (idempotent), take hands over the
 * exchanges (a new reference, an empty array when none). */
void act_netlog_start(struct act_ctx *ctx);
void act_netlog_stop(struct act_ctx *ctx);
json_t *act_netlog_take(struct act_ctx *ctx);

/* session.c */
/* Closes the session's browser (recorded with reason); no-op without one. */
void act_close_browser(struct act_session *as, const char *reason);

/* cdp_endpoint.c: browser_session {"action": "cdp"} (worker thread), and
 * the note's end (act_session_free). */
int act_cdp_run(struct act_ctx *ctx);
void act_cdp_note_free(struct act_session *s);

/* approval_evidence.c */
struct store_approval;
/* A pending approval's picture: the page with the target outlined, kept
 * as evidence of the call's operation with an approval_requested record.
 * Never fails the call. */
void act_approval_evidence(struct act_ctx *ctx, const struct store_approval *approval);

/* takeover.c */
/* The web console's work between calls: screencast, a person's input,
 * the take-over's records. Worker thread. */
void act_takeover_service(struct act_session *s);
/* Before a call runs: 1 when it was answered already (refused with
 * human_control: a person has the browser); 0 to run it (its answer then
 * carries what a person did, when one just handed the browser back). */
int act_takeover_before_call(struct act_session *s, struct act_call *call);
/* Frees the console's part of the session. */
void act_takeover_free(struct act_session *s);

/* pipeline.c: launches the session's browser (worker thread). */
int act_launch_browser(struct act_session *as, char *err, size_t errlen);

/* shared_browser.c */
struct act_shared;
/* Isolation "context": the session takes a reference to its tenant's
 * shared browser entry (made when it is the first), and, with egress layer
 * 4, that browser's network namespace (s->netns_fd, a dup it owns) for its
 * proxy to listen in. Refused with a reason when the session has browser
 * limits. Returns 0, or -1 with err. */
int act_shared_acquire(struct act_session *as, char *err, size_t errlen);
/* Drops the session's reference; the last one ends the shared browser. */
void act_shared_release(struct act_session *as);
/* A session on the tenant's shared browser (started, or started again
 * after it died), in a context of its own with opt's proxy and target
 * setup. Returns 0 with *out, or -1 with err. */
int act_shared_join(struct act_session *as, const struct sess_options *opt, struct sess **out,
                    char *err, size_t errlen);

/* warm_pool.c */
/* The pooled browser the session holds (act_pool_hold), adopted (its
 * target setup, on the context readied for the session's proxy) when it
 * fits opt (the launch options the session would use); NULL otherwise
 * (any held browser is closed): launch one. Worker thread. */
struct sess *act_pool_take(struct act_session *as, const struct sess_options *opt);
/* Takes a ready pooled browser that fits the session's config, before the
 * session's proxy starts: keeps it in as->pool_held, and hands over the
 * listening socket its browser context's proxy points at (*listen_fd, now
 * the caller's: the session's proxy listens there) and, with layer 4, its
 * namespace (as->netns_fd, owned). Returns 1 when it did, 0 when the
 * session makes its own (*listen_fd untouched). */
int act_pool_hold(struct act_session *as, int *listen_fd);
/* Closes the held pooled browser, if the worker never adopted it (zero
 * residue; its namespace fd stays the session's). */
void act_pool_drop_held(struct act_session *as);

/* limits.c */
/* Reads the browser limits from cfg and the policy's "limits" (borrowed)
 * into s->limits, the stricter of the two; -1 with err when invalid. */
void act_limits_read(struct act_session *s, const struct act_config *cfg,
                     const struct policy_tenant *policy);
/* Puts the session's current browser under its limits. */
int act_limits_apply(struct act_session *s, char *err, size_t errlen);

/* gates.c */
int act_gates_start(struct act_session *s, const struct policy_tenant *policy, char *err,
                    size_t errlen);
void act_gates_stop(struct act_session *s);
/* Opens the call's operation: 0 to run it; 1 when it must not run (failed,
 * or *replay holds the recorded result of a finished operation). A read
 * opens none: it takes no operation_id. Under the id the pipeline made
 * (no operation_id given), the row is written when the call acts or ends
 * (store_op_record_new). */
int act_ledger_begin(struct act_ctx *ctx, json_t **replay);
/* Right before the first input or navigation. */
void act_ledger_running(struct act_ctx *ctx);
/* 1 when the call failed after its input may have reached the page in a
 * way that leaves the outcome unknown (crash, deadline, cancel). */
int act_outcome_unknown(const struct act_ctx *ctx);
/* The state the call ends in: done, failed, or unknown (also set as
 * "state" in ctx->out, for the answer). */
enum store_op_state act_ledger_outcome(struct act_ctx *ctx);
/* Records state (act_ledger_outcome) and the result (borrowed). */
void act_ledger_finish(struct act_ctx *ctx, enum store_op_state state, const json_t *result);
/* The gate step: facts re-read from the page, classified; fails the call
 * with approval_required / forbidden / approval_refused. */
int act_gate_check(struct act_ctx *ctx);
/* One part of an action on several elements (a field of browser_fill_form):
 * the element is ctx->target, kind an enum policy_action_kind, value what
 * goes into it (borrowed; hashed into the fingerprint, never kept). */
struct act_gate_part {
	int kind;
	const char *value;
};
/* The gate step for that part alone, as act_gate_check for a whole call. */
int act_gate_check_part(struct act_ctx *ctx, const struct act_gate_part *part);

/* tools/navigate.c, for every tool that opens a URL */
/* The URL checks of policy layer 1 and the tenant's egress (a data: page
 * when the policy allows it): 0, or -1 with the call failed (url_refused,
 * out.blocked says by what). */
int act_page_url_check(struct act_ctx *ctx, const char *url);
/* The current page (ctx->page) sent to url and settled: 1 once settled
 * (the pipeline settles no more), -1 with the call failed. */
int act_navigate_page(struct act_ctx *ctx, const char *url);

/* egress.c */
int act_egress_start(struct act_session *s, const struct policy_tenant *policy, char *err,
                     size_t errlen);
void act_egress_stop(struct act_session *s);
/* browser_session "narrow": narrows the session's egress policy with
 * args.egress for every layer at once (tools, Fetch, the proxy's new
 * requests). */
int act_egress_narrow_call(struct act_ctx *ctx);
/* Fills the launch options: proxy, resolver rules, flags, target setup. */
void act_egress_launch_options(struct act_session *s, struct sess_options *opt);
/* Starts handling paused requests on the freshly launched browser. */
int act_egress_attach(struct act_session *s);
/* sess_target_setup_fn, on a target while it is paused: Fetch
 * interception (layer 2: every request waits for the session's decision)
 * when the session (user) has that layer, and browser_emulate's settings
 * (emulation.c); user NULL (a pooled browser, no session yet): Fetch
 * only. Queues, never waits. */
void act_egress_setup_target(void *user, struct sess *sess, const char *session_id,
                             const char *type);
/* The proxy refuses loopback on port (the browser's DevTools port) from
 * now on; the Fetch and tool layers read it from the session. */
void act_egress_protect_port(struct act_session *s, int port);
/* Tool layer: 0 when url may be opened; else -1, *blocked (new) and err. */
int act_egress_check_url(struct act_session *s, const char *url, json_t **blocked, char *err,
                         size_t errlen);
/* The refusals since the last call (new array), or NULL. */
json_t *act_egress_take_refusals(struct act_session *s);

/* pipeline.c */
void act_run_call(struct act_session *as, struct act_call *call);
/* Marks the call failed with a code ("stale_ref") and message; returns -1. */
int act_fail(struct act_ctx *ctx, const char *code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* Milliseconds left before the call's deadline (at least 1). */
int act_left_ms(const struct act_ctx *ctx);
/* Marks the call failed with code "stale_ref": its target (a ref, in
 * Playwright MCP's words first, or another target) left the page since
 * it was found. Returns -1. */
int act_fail_gone(struct act_ctx *ctx);
/* Marks the call failed with code "timeout": "Timeout Nms exceeded. "
 * (Playwright's words, N the call's whole time allowed), then the
 * message; returns -1. */
int act_fail_timeout(struct act_ctx *ctx, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
/* A CDP call on behalf of the action: fails the action with a message
 * naming what was being done when it fails. */
int act_cdp(struct act_ctx *ctx, const char *session_id, const char *method, json_t *params,
            json_t **result, const char *doing);
/* Awaits the reply to call id sent on ctx->cdp, failing the action as
 * act_cdp does. */
int act_cdp_await(struct act_ctx *ctx, uint64_t id, json_t **result, const char *doing);
/* Turns a failed wait (-CDP_E*) into the action's error: crashed browser,
 * cancel, timeout. Returns -1. */
int act_connection_failed(struct act_ctx *ctx, int rc, const char *doing);
/* Page.captureScreenshot parameters for evidence (new reference). */
json_t *act_png_params(void);
/* Runs a function on the target element (Runtime.callFunctionOn,
 * returnByValue, awaitPromise); *value is a new reference. */
int act_call_on_target(struct act_ctx *ctx, const char *function, json_t *arguments, json_t **value,
                       const char *doing);
/* Evaluates an expression in the page (returnByValue, awaitPromise). */
int act_eval(struct act_ctx *ctx, const char *expression, json_t **value, const char *doing);

/* ref_prefetch.c */
/* Once an answer has left: when the refs are new, asks the browser the
 * session runs now (without waiting) for the objects of the first ones a
 * person could act on. */
void act_prefetch_refs(struct act_session *as);
/* ref's objects asked for ahead, when they still stand: 0 with object_id
 * (the page's world) and world_object_id ("" when not known) filled; -1
 * when the ref must be resolved now. */
int act_prefetch_take(struct act_ctx *ctx, const struct snap_ref *ref, char *object_id,
                      size_t object_len, char *world_object_id, size_t world_len);
/* Forgets what was asked of a browser that is gone. */
void act_prefetch_drop(struct act_session *as);

/* target.c */
/* Resolves target to exactly one element (ctx->target): a snapshot ref
 * ("e12"), a locator ("role=button[name=\"Save\"]", "text=Checkout",
 * "css=#save") or a CSS selector; locators search the page and its
 * frames. Fails the call with no_match / ambiguous_target / stale_ref /
 * bad_target and a message saying what to do. */
int act_resolve_target(struct act_ctx *ctx, const char *target);
/* The target's DOM node (its backend node id, looked up when the target
 * came from a selector), for telling whether a later resolution found the
 * same one. Returns 0, or -1 with the action failed. */
int act_target_node(struct act_ctx *ctx, int *backend);
/* *visible: the target is attached, has a box of some size and is not
 * hidden (visibility, display), read in its isolated world. Returns 0, or
 * -1 with the action failed. */
int act_target_visible(struct act_ctx *ctx, int *visible);
/* Takes a snapshot and lists the refs of the elements with role and (name
 * not NULL) that accessible name, whitespace collapsed: the first max in
 * refs, *n how many there are. Returns 0, or -1 with the action failed. */
int act_role_refs(struct act_ctx *ctx, const char *role, const char *name, char (*refs)[16],
                  size_t max, size_t *n);
/* Runs function on the target in an isolated world of its frame (the
 * page's scripts cannot fake what it reads); *value is a new reference. */
int act_call_in_isolated_world(struct act_ctx *ctx, const char *function, json_t **value,
                               const char *doing);
/* The same with arguments (taken; a JSON array of CallArgument) and
 * promises awaited. */
/* Sends function to run on the object oid of the target's session
 * (arguments taken, may be NULL; returnByValue, awaitPromise), without
 * waiting: the call's id, or 0 when it could not be sent (*rc, when not
 * NULL: cdp_send's code). */
uint64_t act_target_send(struct act_ctx *ctx, const char *oid, const char *function,
                         json_t *arguments, int *rc);
/* act_call_in_isolated_world without waiting: the call's id, or 0 with
 * the action failed; act_isolated_take gives its *value as that does. */
uint64_t act_isolated_ask(struct act_ctx *ctx, const char *function, const char *doing);
int act_isolated_take(struct act_ctx *ctx, uint64_t id, json_t **value, const char *doing);
int act_call_isolated_args(struct act_ctx *ctx, const char *function, json_t *arguments,
                           json_t **value, const char *doing);
/* Actionability for kind "click"/"hover"/"type"/"select": fills x, y in
 * top-level viewport coordinates, *info (new reference) with tag/type. */
int act_actionable(struct act_ctx *ctx, const char *kind, double *x, double *y, json_t **info);

/* Asks, without waiting, for the actionability check of a click or a
 * hover (kind) on the target while the gate reads it: the check only
 * reads the page (the scrolling it may need comes after the gate). The
 * first act_actionable of that kind takes its answer when it found the
 * element ready in the top-level viewport, with nothing to scroll, and
 * no person was asked to approve the call meanwhile; otherwise it is
 * dropped and the check runs anew. No-op for other kinds. */
void act_actionable_ask(struct act_ctx *ctx, const char *kind);

/* Drops an actionability check asked for and never taken. */
void act_actionable_forget(struct act_ctx *ctx);
/* After the press (released 0) or the release (1) of a click at (x, y)
 * (top-level): reads back where the trusted press, then the click event,
 * really landed. 0 when on the target or inside it (or when it cannot be
 * read: a dialog opened, the document went away; the text says so); -1
 * with the action failed "missed", naming what it hit, with that
 * element's box in the annotation. */
int act_click_landed(struct act_ctx *ctx, double x, double y, int released);
/* Asks, without waiting, where the press of the click just made landed,
 * unless its landing recorder told it already (act_recorder.pressed);
 * its verdict is only read, with the release's, by
 * act_click_release_take. */
void act_click_press_ask(struct act_ctx *ctx);
/* Asks, without waiting, where the click just released at (x, y) went,
 * for act_click_release_take to judge while the page settles; done is the
 * line the text gets when the press and the click went to the target.
 * Returns 0. */
int act_click_release_ask(struct act_ctx *ctx, double x, double y, const char *done);
/* The verdicts on what act_click_press_ask and act_click_release_ask
 * asked, as act_click_landed gives them (the press's first); 0 when
 * nothing was asked. */
int act_click_release_take(struct act_ctx *ctx);
/* Drops what act_click_press_ask and act_click_release_ask asked. */
void act_click_landing_forget(struct act_ctx *ctx);
/* The element at the top-level viewport point (x, y) becomes the target
 * (ctx->target, described by what it is and the point), for the gate's
 * facts and for verdicts; arm 1: also arms the landing read-back of a
 * click there (act_click_landed); 2: the same, but a recorder a press
 * armed in that document is kept (a release read back against its press).
 * Fails the call with no_match when nothing is there. */
int act_resolve_point(struct act_ctx *ctx, double x, double y, int arm);
/* The CDP session of frame_id in the browser sess (a struct sess *), for
 * snapshot options (struct snap_options.frame_session). */
const char *act_frame_session(void *sess, const char *frame_id);
/* Offset (CSS px) of the content box of the iframe that holds frame_id
 * (an out-of-process frame) in its page; 0 with 0, 0 when frame_id is
 * NULL or empty, -1 when the frame has no owner box (the action then has
 * failed, unless quiet). */
int act_frame_offset(struct act_ctx *ctx, const char *frame_id, int quiet, double *dx, double *dy);

/* drag.c */
/* Arms a recorder on the drop target (ctx->target) of a drag about to
 * start. Returns 0, or -1 with the action failed. */
int act_drop_arm(struct act_ctx *ctx);
/* The drag, with the left button, from (x0, y0) to (x1, y1) (top-level
 * viewport), in steps, with ctx->target the armed drop target; an HTML5
 * drag the page starts is carried with drag events (*html5 = 1). Marks
 * the operation running before the press. Returns 0, or -1 with the
 * action failed (the button is never left held). */
int act_drag_gesture(struct act_ctx *ctx, double x0, double y0, double x1, double y1, int *html5);
/* The verdict, read back from the drop target (ctx->target): it saw the
 * drop (html5) or the release over it; out.drop says what it saw.
 * Returns 0, or -1 with the action failed "not_dropped". */
int act_drop_verdict(struct act_ctx *ctx, int html5);
/* The whole drop onto ctx->target (resolved; x1, y1 its point) of a drag
 * from (x0, y0), described as from: the drop target gated, armed, the
 * gesture, the verdict. Returns 0, or -1 with the action failed. */
int act_drag_onto(struct act_ctx *ctx, double x0, double y0, double x1, double y1,
                  const char *from);

/* field_text.c */
/* Types text (NULL or "" clears the field; slowly: key by key) into the
 * target after the actionability checks, or fills it for the inputs that
 * take a value in their own format, then re-reads it: out.value (masked
 * for a password field, which also sets ctx->sensitive). Fails the action
 * with bad_value_format before anything changed, value_not_set (expected
 * and observed in out) when the field holds something else, or the
 * checks' own errors. */
int act_field_fill_text(struct act_ctx *ctx, const char *text, int slowly, int reread_later);
/* With reread_later, the field is re-read at once but judged once the page
 * settled (ctx->after_settle); this drops that read-back when it was not
 * judged. */
void act_field_reread_forget(struct act_ctx *ctx);

/* field_select.c */
/* Selects the options of the target <select> matching values (borrowed:
 * an array of values or labels), then re-reads the selection: out.value.
 * Fails the action with no_such_option (naming the options there),
 * value_not_set, or the checks' own errors. */
int act_field_select(struct act_ctx *ctx, json_t *values);

/* field_check.c */
/* Sets the target (a checkbox or a radio button of kind want_kind:
 * "checkbox" or "radio") to checked (want 1) or not with a real click
 * when it is not so already, then re-reads it: out.value "true"/"false"
 * ("not re-read" when the click navigated away). Fails the action with
 * wrong_field_type, value_not_set (expected and observed in out), or the
 * click's own errors. */
int act_field_set_checked(struct act_ctx *ctx, int want, const char *want_kind);

/* pointer.c: the coordinate (vision) tools */
/* Fails the action with outside_viewport, naming the viewport's size,
 * unless (x, y) is inside it. */
int act_point_check(struct act_ctx *ctx, double x, double y);
/* act_point_check, then the element at (x, y) becomes the target (for the
 * gate). Returns 0, or -1 with the action failed. */
int act_point_target(struct act_ctx *ctx, double x, double y);
/* Right before acting: the element at (x, y) found again with its landing
 * armed (keep: a press's recorder kept, act_resolve_point arm 2); it must
 * be the one the gate saw, else the action fails with target_changed and
 * nothing is done. */
int act_point_rearm(struct act_ctx *ctx, double x, double y, int keep);
/* Notes where the session's mouse is now (browser_mouse_down, _up and
 * _wheel act there). */
void act_point_moved(struct act_ctx *ctx, double x, double y);

/* verdict.c */
/* Appends {check, expected, observed, ok} to out.verdicts (expected and
 * observed taken; NULL = null). Returns ok. */
int act_add_verdict(struct act_ctx *ctx, const char *check, json_t *expected, json_t *observed,
                    int ok);

/* find.c */
/* Searches the snapshot text yaml (borrowed) for text (a case-insensitive
 * literal) or regex ("pattern" or "/pattern/flags"; exactly one of the
 * two is non-NULL): *matches a new array of {role, name?, ref?, line,
 * path} (at most 50), and the matching lines with three lines of context
 * each side, under the path of their ancestors, appended to snippets as
 * Playwright MCP's browser_find lays them out; deadline_ms (gb_now_ms() time, 0 = none) bounds
 * the whole search. Returns 0, or -1 with a message for the agent in err
 * (invalid or runaway regex, out of time). */
int act_find_in_snapshot(const char *yaml, const char *text, const char *regex, int64_t deadline_ms,
                         json_t **matches, struct gb_buf *snippets, char *err, size_t errlen);

/* recorder.c */
int act_recorder_start(struct act_recorder *r, struct cdp_conn *cdp, const char *page_session,
                       const char *main_frame_id);
/* The page the recorder watches becomes another tab (page_session,
 * borrowed, and its main frame): the call goes on in it. A recorder not
 * started is left alone. */
void act_recorder_follow(struct act_recorder *r, const char *page_session,
                         const char *main_frame_id);
void act_recorder_stop(struct act_recorder *r);
/* Waits, bounded, for what the action started: a main-frame navigation
 * to load and requests in flight to finish, then for the page's own
 * handlers to run. The round trip that ends it re-reads the page
 * (ctx->settled_view), which act_observe_after() then takes. */
int act_settle(struct act_ctx *ctx, int navigation_expected);
/* What settling's last round trip runs in glassbox's world: observe (an
 * act_observe_expression, borrowed) one setTimeout(0) later, once the
 * page's queued tasks ran. New string, or NULL (observe NULL, no memory). */
char *act_settle_read_expression(const char *observe);
/* call: a re-read of the page (act_settle_read_expression, in glassbox's
 * world) sent right after the action's own script, whose reply came after
 * the script's: it ran once the script ended, as
 * settling's last round trip would. act_settle takes its answer in place
 * of that round trip when the recorder counted no event since
 * events_before and nothing is in flight; it is dropped otherwise. */
void act_settle_offer(struct act_ctx *ctx, uint64_t call, unsigned events_before);

/* input.c */
struct key_def {
	const char *key;
	const char *code;
	int vk;
	const char *text;
};
int act_mouse_click(struct act_ctx *ctx, double x, double y, const char *button, int count,
                    int modifiers);
int act_mouse_move(struct act_ctx *ctx, double x, double y);
/* A move to (x, y) with button ("left", "right", "middle") held down, as
 * a drag moves; awaited. */
int act_mouse_move_held(struct act_ctx *ctx, double x, double y, const char *button);
/* One wheel event at (x, y) scrolling by (dx, dy) CSS px; awaited. */
int act_mouse_wheel(struct act_ctx *ctx, double x, double y, double dx, double dy);
/* One press (move there, then press: count is the click count) and one
 * release, each awaited. */
int act_mouse_down(struct act_ctx *ctx, double x, double y, const char *button, int count,
                   int modifiers);
int act_mouse_up(struct act_ctx *ctx, double x, double y, const char *button, int count,
                 int modifiers);
/* A click of count (1 or more) at (x, y) on the target armed by
 * act_actionable or act_resolve_point: the first press, where it landed
 * read back (act_click_landed), hold_ms with the button down (0: none),
 * the release (and, for the left button, where the click event went),
 * then the further presses. Returns 0, or -1 with the action failed
 * ("missed" when it landed elsewhere). */
int act_click_at(struct act_ctx *ctx, double x, double y, const char *button, int count,
                 int modifiers, int hold_ms);
/* One click of the left button at (x, y), as act_click_at, but its
 * events sent together (the recorder tells where the press landed as it
 * arrives) and where its press and its click event went judged after the
 * page settled (act_click_press_ask, act_click_release_ask; the pipeline
 * takes them): done is the text's line once both went to the target. */
int act_click_once(struct act_ctx *ctx, double x, double y, int modifiers, const char *done);
int act_press_key(struct act_ctx *ctx, const char *key, int modifiers);
int act_type_text(struct act_ctx *ctx, const char *text, int slowly);
int act_modifiers_from_json(json_t *arr);

#ifdef GB_UNITTEST_BUILD
/* The record keeper's ceiling and longest wait for room; a paused
 * keeper writes nothing until resumed (or stopped). */
void act_keeper_set_limits(struct act_keeper *k, size_t max_jobs, size_t max_bytes, int wait_ms);
void act_keeper_pause(struct act_keeper *k, int paused);
void act_secrets_remember(struct act_session *s, const char *name, const unsigned char *value,
                          size_t len);
int act_is_ref(const char *t);
int act_input_value_check(const char *type, const char *text, int *fill, char *says, size_t len);
void act_input_value_canonical(const char *type, char *v);
int act_lookup_key(const char *name, struct key_def *out, char *text, char *code);
int act_parse_locator(const char *target, const char **kind, char **what, char **name, char *err,
                      size_t errlen);
#endif

/* The by-value result of a Runtime call's reply res (borrowed) into
 * *value (new reference, json null when absent; value may be NULL); an
 * exception the page threw fails the call (doing). 0 or -1. */
int act_runtime_value(struct act_ctx *ctx, json_t *res, json_t **value, const char *doing);

struct cdp_conn;
struct cdp_error;
/* page_world.c: reads from glassbox's isolated world of the main frame of
 * the call's page, which the page's scripts cannot redefine. */
/* Sends expression to run there (returnByValue, awaitPromise) without
 * waiting for it: the call's id, or 0 when it could not be sent. */
uint64_t act_page_world_send(struct act_ctx *ctx, const char *expression);
/* Runs expression in glassbox's world of frame (a page's main frame) of
 * CDP session psid within timeout_ms, made there when it is not known:
 * *result (new reference) is the reply's result. A world that went with
 * its document meanwhile is found again in the frame's new one, once.
 * Returns 0 or cdp_await()'s error (-CDP_EINVAL: no frame). */
int act_world_call(struct cdp_conn *cdp, struct sess *sess, const char *psid, const char *frame,
                   const char *expression, int timeout_ms, json_t **result, struct cdp_error *err);
/* The context of glassbox's world in frame of CDP session sid: the one
 * known, or (none known, or fresh set) the one Page.createIsolatedWorld
 * answers, remembered. 0 with the call failed (doing) when there is none. */
long long act_frame_world(struct act_ctx *ctx, const char *sid, const char *frame, int fresh,
                          const char *doing);
/* act_world_call on the main frame of the call's page. The call is not
 * failed. */
int act_page_world_call(struct act_ctx *ctx, const char *expression, int timeout_ms,
                        json_t **result, struct cdp_error *err);
/* act_page_world_call within the call's time, its value into *value (new
 * reference); a failure or an exception fails the call (doing). 0 or -1. */
int act_page_eval(struct act_ctx *ctx, const char *expression, json_t **value, const char *doing);
/* As act_page_eval, but an object the expression returns comes as an
 * objectId of glassbox's world: *result (new reference) is the reply's
 * result, an exception in it is the caller's to read. 0 or -1. */
int act_page_world_object(struct act_ctx *ctx, const char *expression, json_t **result,
                          const char *doing);

/* observe.c */
int act_observe_before(struct act_ctx *ctx);
/* Before trusted input: has the DOM mark act_observe_before() asked for
 * in (the renderer would run the input first). No-op when none is on its
 * way. */
void act_observe_before_wait(struct act_ctx *ctx);
/* The expression that re-reads the page after the action in glassbox's
 * world (url, title, DOM mark, and the text when an expectation needs
 * it; act_page_eval): new string. */
char *act_observe_expression(const struct act_ctx *ctx);
int act_observe_after(struct act_ctx *ctx);
int act_record_evidence(struct act_ctx *ctx);
void act_request_evidence(struct act_ctx *ctx);
/* Stops counting the page's navigations for the evidence screenshot
 * (idempotent; the call's end does it whatever happened). */
void act_shot_unwatch(struct act_ctx *ctx);

/* Adds msg to the call's evidence errors, never replacing one said
 * before: structuredContent.evidence_errors lists each, evidence_error
 * joins them ("; "). */
void act_add_evidence_error(struct act_ctx *ctx, const char *msg);
/* Validates and stores a base64 PNG from the page as evidence of kind,
 * links it from the result; fills sha (65 bytes) on success. */
int act_store_png(struct act_ctx *ctx, const char *b64, const char *kind, char *sha);
json_t *act_redacted_args(const struct act_ctx *ctx);
/* Answer first (policy evidence.before_answer false): when a screenshot
 * is on its way (shot_call), links it from the result by the operation
 * (glassbox://evidence/<operation>/screenshot, pending) and returns 1:
 * act_collect_evidence() takes it after the answer. 0 when the evidence
 * is to be taken now (reused, a dialog open, nothing requested). */
int act_defer_evidence(struct act_ctx *ctx);
/* Marks op (NULL: none) as the operation whose screenshot is being
 * taken after its answer; readers of its evidence wait until it is not. */
void act_evidence_pending(struct act_session *s, const char *op);
/* After the answer: waits for the deferred screenshot and hands it over
 * (*png malloc'd, sha filled), masked like any evidence. -1 with err
 * when there is none to keep (the next answer says so). */
int act_collect_evidence(struct act_ctx *ctx, unsigned char **png, size_t *len, char sha[65],
                         char *err, size_t errlen);

/* secret_use.c */
/* Reads the policy's "page_content" ({"hidden_text": "flag" | "drop"}). */
void act_secrets_start(struct act_session *s, const struct policy_tenant *policy);
/* Wipes the values typed in the session. */
void act_secrets_stop(struct act_session *s);
/* browser_type with `secret`: opens tenant's secret name, checks the
 * focused field (frame origin on its hosts, field kind) right before
 * Input.insertText, types it, presses Enter when submit. */
int act_type_secret(struct act_ctx *ctx, const char *name, int submit);
/* Text typed as such into a password field (browser_type): remembered
 * like a secret's value (name "typed password"), so that what the page
 * does with it later (a request's body, a script's result, a snapshot)
 * never leaves with it. Shorter than ACT_TYPED_PASSWORD_MIN: not
 * remembered (it would blank out ordinary text). */
#define ACT_TYPED_PASSWORD_MIN 4
void act_secrets_note_typed(struct act_session *s, const char *text);
/* text with every value typed in the session (and its URL and JSON
 * encodings) replaced by "[secret NAME]": malloc'd, or NULL when there
 * was nothing to replace. */
char *act_secrets_scrub_text(const struct act_session *s, const char *text);
/* The same in every string of j (borrowed), in place. */
void act_secrets_scrub_json(const struct act_session *s, json_t *j);
/* The same in the call's result, text and error, before they leave. */
void act_secrets_scrub_call(struct act_ctx *ctx);
/* Paints black over the fields that received a secret and show it (not
 * password fields, which show dots) in the screenshot *png, replacing it.
 * Returns 0 (nothing to mask, or masked), or -1 when it could not be
 * masked: the screenshot must then not be kept. */
int act_secrets_mask_png(struct act_ctx *ctx, unsigned char **png, size_t *len);
/* The fields to mask in a snapshot. */
void act_secrets_masked_ids(const struct act_session *s, struct snap_options *opt);

#endif

/*
 * actions.h - the browser tools and the one pipeline every one of them
 * runs through (DESIGN.md: resolve, gate, pre-observe, execute, settle,
 * post-observe, record, observation).
 *
 * Transports (mcp/, later flows/) see two things here:
 *   - the tool table: names, descriptions, parameters, output shape and
 *     hints, from which they generate schemas and check arguments;
 *   - an act_session: one agent's browser session with its own worker
 *     thread. Calls are queued to it and run one at a time; each call's
 *     completion is reported through a callback on the worker thread.
 */
#ifndef GB_ACTIONS_H
#define GB_ACTIONS_H

#include <jansson.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

struct policy_tenant;

/* ---- the tool table ---------------------------------------------------- */

enum act_param_type {
	ACT_T_STRING,
	ACT_T_BOOLEAN,
	ACT_T_NUMBER,
	ACT_T_INTEGER,
	ACT_T_OBJECT,       /* any JSON object (e.g. expect); checked by the tool */
	ACT_T_STRING_ARRAY, /* array of strings */
	ACT_T_OBJECT_ARRAY, /* array of objects, each checked against items */
};

struct act_param {
	const char *name;
	enum act_param_type type;
	int required;
	const char *description;
	const char *const *enum_values; /* NULL-terminated, strings only; or NULL */
	double minimum;                 /* numbers: used when has_range */
	double maximum;
	int has_range;
	int nullable; /* JSON null is accepted too (it clears a setting) */
	/* ACT_T_OBJECT_ARRAY: the members of each item (names, types,
	 * required, enums: checked as parameters are) */
	const struct act_param *items;
	size_t n_items;
	size_t min_items; /* arrays: the fewest items accepted */
	size_t max_items; /* arrays: the most items accepted; 0 = no limit */
};

/* What a tool can change; the pipeline runs its steps from this alone. */
enum act_effect {
	ACT_EFFECT_UNSET = 0, /* a descriptor must say: the table check refuses it */
	ACT_EFFECT_READ,      /* reads the page only: no gate, ledger or evidence */
	ACT_EFFECT_PAGE,      /* can change the page: gate, ledger, pre-observe, settle,
	                       * post-observe, verification and evidence */
	ACT_EFFECT_LIFECYCLE, /* starts, ends or reconfigures the browser or the
	                       * session: gate, ledger and its record */
};

/* How a tool meets the tenant's risk rules (policy/risk.h). There is no
 * default: a descriptor names a kind, or says why the tool is exempt. */
struct act_policy_spec {
	int set;            /* 1 when given; 0 is a table error */
	int kind;           /* enum policy_action_kind, when not exempt */
	const char *exempt; /* why the risk rules never see this tool; or NULL */
};
#define ACT_POLICY(k)                 \
	{                             \
		.set = 1, .kind = (k) \
	}
#define ACT_POLICY_EXEMPT(why)            \
	{                                 \
		.set = 1, .exempt = (why) \
	}

struct act_tool_impl; /* its hooks (actions-private.h) */

/* A tool's descriptor: everything about it, in its own file
 * (actions/tools/<name>.c), listed in actions/tools/all.c. */
struct act_def {
	const char *name;  /* "browser_click" */
	const char *title; /* "Click" */
	const char *description;
	const struct act_param *params;
	size_t n_params;
	/* NULL-terminated names of parameters of which exactly one must be
	 * given (browser_type: text or secret); or NULL */
	const char *const *one_of;
	enum act_effect effect;
	struct act_policy_spec policy;
	const char *caps;  /* capability group ("vision", "testing"); NULL = core */
	int checks_expect; /* takes `expect` and checks it after the action */
	const struct act_tool_impl *impl;
};

/* 1 when def only reads (readOnlyHint); otherwise it may change something. */
int act_def_read_only(const struct act_def *def);

/* The pipeline's steps (docs/internals/pipeline.md), in their order. */
enum act_step {
	ACT_STEP_GATE,           /* the tenant's risk rules classify the action */
	ACT_STEP_LEDGER,         /* the operation is marked running before it acts */
	ACT_STEP_OBSERVE_BEFORE, /* what the page does is recorded, its state noted */
	ACT_STEP_RUN,            /* the tool's own code */
	ACT_STEP_SETTLE,         /* bounded wait for what the action started */
	ACT_STEP_OBSERVE_AFTER,  /* the page re-read; verdicts and `expect` checked */
	ACT_STEP_EVIDENCE,       /* a screenshot kept (or the last one, unchanged) */
	ACT_STEP_RECORD,         /* the signed audit record of the call */
	ACT_STEP_COUNT
};
#define ACT_STEP_BIT(s) (1u << (s))

/* The steps a successful call of def runs (ACT_STEP_BIT flags), decided
 * by its effect and policy alone; a call that fails stops early but
 * still records. */
unsigned act_def_steps(const struct act_def *def);
/* "gate", "ledger", ...; "" for an unknown step. */
const char *act_step_name(enum act_step step);
/* "read", "page", "lifecycle"; "unset" for none. */
const char *act_effect_name(enum act_effect effect);

/* The tools, in a stable order. */
size_t act_tool_count(void);
const struct act_def *act_tool_at(size_t i);
const struct act_def *act_tool_find(const char *name);

/* The JSON Schema of every tool's structuredContent (new reference). */
json_t *act_output_schema(void);

/*
 * Checks args (borrowed; a JSON object or NULL = {}) against def's
 * parameter table: required present, types, enums, ranges, no unknown
 * names. Returns 0, or -1 with a message naming the argument and what is
 * wrong ("argument 'ref' is required", "argument 'button' must be one of
 * left, right, middle") in err.
 */
int act_check_args(const struct act_def *def, json_t *args, char *err, size_t errlen);
/*
 * The first argument of args (borrowed; NULL = {}) that is missing though
 * required, or of the wrong JSON type, in a schema validator's words, as
 * Playwright MCP reports it ("Invalid input: expected string, received
 * number" and "at url" on the next line) into out. Returns 0, or -1 when
 * no argument is missing or mistyped (the fault is elsewhere: an enum, a
 * range, an unknown name; act_check_args says which).
 */
int act_args_mismatch(const struct act_def *def, json_t *args, char *out, size_t outlen);

/* ---- sessions of agents ------------------------------------------------ */

struct secret_env;

/* Settings for a session; strings borrowed and copied. */
struct act_config {
	const char *data_dir;      /* required: evidence and run dirs live here */
	const char *tenant;        /* "local" in stdio mode */
	const char *chromium_path; /* NULL = default */
	int headless;              /* 1 unless debugging */
	/* 1: Chromium's own sandbox off (Playwright MCP's --no-sandbox);
	 * glassbox's browser user, network namespace, egress proxy and Fetch
	 * interception stay on (docs/isolation.md) */
	int chromium_sandbox_off;
	/* Secrets of a --secrets file (secrets/secrets.h), typed when
	 * browser_type's text is one's name; borrowed for the server's
	 * lifetime; NULL = none */
	const struct secret_env *env_secrets;
	/* 1: every page's geolocation is emulated from the start as
	 * browser_emulate's geolocation sets it (a Playwright MCP config's
	 * contextOptions.geolocation): latitude, longitude, accuracy (m) */
	int has_geolocation;
	double geolocation[3];
	int viewport_width;    /* 0 = 1280 */
	int viewport_height;   /* 0 = 720 */
	int action_timeout_ms; /* per tool call; 0 = 30000 */
	/* What each answer of a tool that can change the page carries
	 * (docs/tools.md): ACT_SNAPSHOT_FULL (default), _CHANGED, _NONE. */
	int snapshot_mode;
	const char *test_id_attribute; /* for the code shown (getByTestId); NULL = data-testid */
	/* A directory the tools also write their files to (screenshots,
	 * snapshots with a filename); NULL = none (artifact store only). */
	const char *output_dir;
	int navigation_timeout_ms; /* browser_navigate's own deadline; 0 = action_timeout_ms */
	const char *user_agent;    /* the browser's User-Agent; NULL = Chromium's */
	/* Permissions granted to every page, comma-separated Playwright names
	 * (geolocation, clipboard-read, ...; act_permission_known); NULL = none */
	const char *grant_permissions;
	int no_code;        /* answers show no "### Ran Playwright code" */
	int code_lang;      /* the language of that code: 0 TypeScript, 1 Python, 2 Java, 3 C# */
	int snapshot_boxes; /* snapshots show each element's [box=x,y,width,height] */
	/* 1: tools/list declares no outputSchema and results carry no
	 * structuredContent, as Playwright MCP answers (--no-structured-content;
	 * the policy's "structured_content": false does the same); 0 (default):
	 * both, as glassbox's own clients read them. */
	int no_structured_content;
	/* 1: screenshots are not returned as image items (Playwright MCP's
	 * --image-responses omit); they are still kept as evidence and
	 * written to the output dir. 0 (default): returned. */
	int omit_images;
	/* The pages' device pixel ratio (Playwright's contextOptions
	 * .deviceScaleFactor), emulated on every page with the viewport as
	 * browser_emulate's viewport is; 0 = the browser's own (1). */
	double device_scale_factor;
	/* The console messages the output directory's console-*.log files keep:
	 * "error", "warning", "info" or "debug" and the more severe; NULL =
	 * "info" (Playwright MCP's console.level). */
	const char *console_level;
	/* The tenant's policy (borrowed, read at act_session_new): {"egress": {...}
	 * (policy/egress.h), "require_evidence": bool, "before_screenshots":
	 * bool}; NULL = defaults. */
	json_t *tenant_policy;
	/* Where that policy is written, named by the refusals that a change to
	 * it would lift ("policy.json", "tenants.acme.policy of serve.json");
	 * borrowed; NULL = unknown. */
	const char *policy_source;
	/* The same policy parsed once by the caller for all its sessions
	 * (policy/tenant.h; borrowed: each session takes its own reference);
	 * NULL: each session parses tenant_policy itself. */
	struct policy_tenant *policy;
	int prelaunch; /* launch the browser as soon as the session exists */
	/* A browser profile of the tenant (docs/profiles.md) the session's
	 * browser runs on from the start; NULL = none (a fresh, empty one, or
	 * one opened later with the browser_session tool). Opened by
	 * act_session_new(), which fails when it cannot be (busy, revoked,
	 * expired, damaged). */
	const char *profile;
	const char *profile_user; /* NULL = "default" */
	int profile_readonly;     /* a copy that is never sealed back */
	int profile_create;       /* create the profile when it does not exist */
	/* 1: when the session ends with the profile still open and its browser
	 * alive, the state is sealed as a new version (a flow that ran to its
	 * end). 0: it is discarded unless closed with browser_session or
	 * browser_close (an agent that went away). */
	int profile_save_at_end;
	/* Ceilings for each browser of the session (0 = none); the policy's
	 * "limits" may set stricter ones (actions/limits.c). A browser over a
	 * limit is closed, the call fails with code "limit_exceeded", and the
	 * next call starts a new browser. */
	uint64_t browser_memory_limit_bytes;
	unsigned browser_cpu_limit_percent; /* percent of one core, over 5 s */
	/* A warm pool of pre-launched browsers (act_pool_start), borrowed: it
	 * must outlive the session; NULL = launch each browser when needed. */
	struct act_pool *pool;
	/* Who acts, for the audit trail's actor (docs/evidence.md). credentials
	 * (borrowed, read at act_session_new): tenant name -> the id of its
	 * credential (never the secret); NULL: none (stdio, flows).
	 * client_name: who drives the session when a call names no client
	 * (a flow run: "glassbox run"); flow_name: the flow it runs; both
	 * copied, NULL: none. */
	json_t *credentials;
	const char *client_name;
	const char *flow_name;
	/* Capability groups turned on (actions/caps.c): the server's --caps
	 * value, a comma-separated list ("vision,testing"; borrowed, read at
	 * act_session_new); NULL = none. The tenant policy's "caps" array adds
	 * to it. */
	const char *caps;
	/* The session's CDP endpoint as a client reaches it
	 * ("ws://HOST:PORT/cdp/<id>", docs/cdp.md), reported by
	 * browser_session {"action": "cdp"}; NULL: not offered (stdio, flows). */
	const char *cdp_endpoint;
};

enum act_snapshot_mode {
	ACT_SNAPSHOT_FULL = 0, /* the whole page snapshot */
	ACT_SNAPSHOT_CHANGED,  /* the subtrees changed since the last one the agent saw */
	ACT_SNAPSHOT_NONE,     /* none: the agent calls browser_snapshot */
};

/* "full" / "changed" / "none" -> enum act_snapshot_mode; -1 when unknown. */
int act_snapshot_mode_parse(const char *s);

/* Console levels, most severe first (act_config.console_level names them). */
enum act_console_level {
	ACT_CONSOLE_ERROR,
	ACT_CONSOLE_WARNING,
	ACT_CONSOLE_INFO,
	ACT_CONSOLE_DEBUG,
};
/* "error" | "warning" | "info" | "debug" -> enum act_console_level; -1 when none. */
int act_console_level_parse(const char *name);

/* "typescript" / "python" / "java" / "csharp" -> act_config.code_lang; -1 otherwise. */
int act_code_lang_parse(const char *s);

/* 1 when name is a permission act_config.grant_permissions can grant. */
int act_permission_known(const char *name);

/* The notice, given once at initialize (the server's instructions), that
 * page content in answers is data from the web page, never instructions
 * (page_content.c). */
extern const char act_page_content_notice[];

/* ---- capability groups (caps.c) ----------------------------------------- */

/* The group names this build knows, for messages: "vision, testing, pdf". */
const char *act_caps_known(void);
/* The bit of group in a mask: 0, or -1 when the group is unknown. */
int act_caps_bit(const char *group, unsigned *bit);
/* Adds the groups of a comma-separated list (the --caps flag; NULL or ""
 * = none) to *mask. Returns 0, or -1 with a message naming the unknown
 * group and the known ones in err. */
int act_caps_parse_list(const char *list, unsigned *mask, char *err, size_t errlen);
/* The same for a JSON array of names (policy "caps", borrowed; NULL =
 * none). */
int act_caps_parse_json(const json_t *caps, unsigned *mask, char *err, size_t errlen);
/* The groups in force for sessions of cfg: cfg->caps and the "caps" of
 * cfg->tenant_policy. Returns 0 with *mask, or -1 with the reason. */
int act_caps_of_config(const struct act_config *cfg, unsigned *mask, char *err, size_t errlen);
/* 1 when a tool of group (NULL = core) is on under mask, 0 when it is
 * off (an unknown group is always off). */
int act_caps_allows(unsigned mask, const char *group);
/* The refusal of def, a tool whose group is off, saying how to turn it on;
 * written to buf (len bytes), which is returned. */
const char *act_caps_refusal(const struct act_def *def, char *buf, size_t len);

/* ---- warm pool --------------------------------------------------------- */

struct act_pool;

/*
 * Starts keeping `size` browsers launched and READY in the background for
 * sessions whose config matches cfg (Chromium, headless, viewport; cfg
 * and its strings are copied) and that need no browser profile; refilled
 * as sessions take them. The first action of a session that takes one
 * does not wait for a launch (its result says "browser": "pooled"). Each
 * session still gets its own egress proxy, Fetch interception and limits
 * (actions/warm_pool.c explains how). Where egress layer 4 is available,
 * each pooled browser runs in a network namespace of its own, which the
 * session that takes it (when it is created) makes its own. size 0:
 * *out = NULL, no pool.
 * Returns 0, or -1 with the reason in err.
 */
int act_pool_start(const struct act_config *cfg, size_t size, struct act_pool **out, char *err,
                   size_t errlen);
/* Browsers ready to be taken now (for a warm-pool gauge). Thread-safe. */
size_t act_pool_ready(struct act_pool *p);
/* The size the pool refills to. */
size_t act_pool_size(struct act_pool *p);
/* Closes the browsers it holds (zero residue) and frees it, after every
 * session that uses it was freed. NULL is a no-op. */
void act_pool_stop(struct act_pool *p);

/* Isolation "context": a tenant's shared browser stays ms after its last
 * session has closed (0, the default: it ends with it), so that the
 * tenant's next session joins it instead of launching one. Call before
 * sessions start. */
void act_shared_set_linger_ms(int64_t ms);
/* Ends every shared browser that no session uses any more (those left
 * lingering) and stops their timer; call after every session is freed. */
void act_shared_stop(void);

struct act_session;

/* One tool call. The transport fills the request part, queues it with
 * act_session_submit() and is told on completion. */
struct act_call {
	/* request (set by the caller, borrowed until completion) */
	const struct act_def *def;
	json_t *args;             /* checked with act_check_args() */
	const char *operation_id; /* NULL: one is generated */
	/* progress: called on the worker thread with (progress, total, message);
	 * may be NULL */
	void (*on_progress)(struct act_call *call, double progress, double total,
	                    const char *message);
	/* completion: called once on the worker thread; result is a new reference
	 * to a CallToolResult object {content, structuredContent?, isError?}
	 * that the callee now owns */
	void (*on_done)(struct act_call *call, json_t *result);
	/*
	 * Asks the person at the client a question (MCP elicitation, form
	 * mode) and waits for the answer; NULL when the client cannot be
	 * asked. Called on the worker thread, at most once at a time per call.
	 * message and requested_schema (a flat JSON Schema object, see the MCP
	 * spec) are borrowed. Blocks until the client answers, timeout_ms
	 * passes (must be > 0), the call is cancelled or the client goes away.
	 * Returns 0 with *response a new reference to the client's result
	 * {"action": "accept" | "decline" | "cancel", "content"?: object}
	 * (action checked to be one of those, content to be an object when
	 * present; its members are the caller's to check: they come from
	 * outside). Returns -1 with *response NULL when there was no answer:
	 * timed out, cancelled, the client answered with an error, or it
	 * could not be asked.
	 */
	int (*elicit)(struct act_call *call, const char *message, json_t *requested_schema,
	              int timeout_ms, json_t **response);
	/* set by actions/ for the time of an elicit: called on the worker
	 * thread at least every 50 ms while elicit waits (never with a lock of
	 * the transport held), so the session keeps reading its browser (a
	 * shared browser's other sessions wait for it to let go of their new
	 * targets); NULL: none */
	void (*while_waiting)(struct act_call *call);
	void *while_waiting_user;
	/* the client's name (MCP clientInfo.name, printable ASCII) for
	 * records such as who decided an approval; NULL when unknown */
	const char *client_name;
	void *user;
	/* internal */
	atomic_int cancelled; /* raised by act_session_cancel(), from any thread */
	struct act_call *next;
	/* request: the `text` argument (and expect.value) is a secret, such as
	 * a flow's secret variable: handled as if typed into a password field,
	 * so it never appears in the result, the audit record or the logs */
	int secret_text;
	/* Tools driven by the glassbox CLI only (act_internal_tool_find): a
	 * value that carries secrets (a storageState), passed beside the
	 * arguments so that it is never recorded or returned. secret_in is
	 * borrowed; secret_out is set by the tool, a new reference the caller
	 * owns (NULL when none). */
	json_t *secret_in;
	json_t *secret_out;
};

/* A tool that the glassbox CLI drives through the pipeline but that is
 * never offered to agents (not in act_tool_at/act_tool_find): profile
 * export and import, whose data is the profile's secrets. NULL if none. */
const struct act_def *act_internal_tool_find(const char *name);
/* The i-th of those, or NULL past the last. */
const struct act_def *act_internal_tool_at(size_t i);

struct console_live;
/* The session's live state for the web console (console/live.h),
 * borrowed: it lives as long as the session (take a reference to keep
 * it longer). */
struct console_live *act_session_live(struct act_session *s);
/* Wakes the session's worker to do the console's work (any thread). */
void act_session_wake(struct act_session *s);

/* Creates a session (no browser yet: it is launched on the first call
 * that needs one, on the worker thread). */
int act_session_new(const struct act_config *cfg, struct act_session **out, char *err,
                    size_t errlen);

/* The agent session's id (borrowed, fixed for its life): its browser
 * sessions' session_opened records name it as agent_session. */
const char *act_session_id(const struct act_session *s);

/* Calls a session holds queued (not counting the one running): the
 * mailbox's ceiling. */
#define ACT_SESSION_MAX_QUEUED 64

/* Queues call; returns at once. The call runs after those queued before.
 * Returns 0; -EBUSY when ACT_SESSION_MAX_QUEUED calls are already queued
 * (the call was not queued: the caller says so and the client may call
 * again once earlier calls finished); -ESHUTDOWN when the session is
 * stopping. */
int act_session_submit(struct act_session *s, struct act_call *call);

/* Submits call (its on_done and user are set here) and waits for its
 * result: a new reference, never NULL (a refused submit is an error
 * result). For callers that act one call at a time (flows, the CLI). */
json_t *act_session_run(struct act_session *s, struct act_call *call);

/* Thread-safe: asks a queued or running call to stop. A queued call
 * completes with a "cancelled" error without running; a running one is
 * aborted at its next wait. */
void act_session_cancel(struct act_session *s, struct act_call *call);

/* How a profile still open when the session ends is closed: save 1 seals
 * its state as a new version (a clean end: the client closed the session
 * or went idle), 0 discards it (a session cut off: hard time limit,
 * killed). The default is act_config.profile_save_at_end. Thread-safe;
 * call it before act_session_free(). */
void act_session_set_profile_end(struct act_session *s, int save);

/* Lets queued calls finish, closes the browser (zero residue) and frees
 * the session, then hands the allocator's free pages back to the system
 * (malloc_trim). Must not be called from the worker thread. */
void act_session_free(struct act_session *s);

/* Launches Chromium as sessions would (in cfg's data dir), reads its
 * version into version, and closes it, leaving nothing behind: a check
 * that the machine can run sessions. Returns 0, or -1 with the reason. */
int act_browser_check(const struct act_config *cfg, char *version, size_t vlen, char *err,
                      size_t errlen);

/* Reads an evidence artifact linked from a result ("glassbox://artifact/
 * <sha256>") or a file of the tenant's upload area ("glassbox://upload/
 * <name>", docs/files.md): *data malloc'd, mime at most mime_len.
 * Thread-safe. Returns 0 or -1 with a reason in err. */
int act_session_read_artifact(struct act_session *s, const char *uri, unsigned char **data,
                              size_t *len, char *mime, size_t mime_len, char *err, size_t errlen);

/* The URI of a file of the upload area: this prefix and its name. */
#define ACT_UPLOAD_URI_PREFIX "glassbox://upload/"

/* The files of the tenant's upload area as MCP resources (a new array of
 * {uri: "glassbox://upload/<name>", name, mimeType, size, sha256,
 * description}), for resources/list. Thread-safe. */
json_t *act_session_list_uploads(struct act_session *s);

/*
 * The egress layers sessions of this process run with by default
 * (docs/egress.md): a new object {"tool": true, "fetch": true, "proxy":
 * true, "netns": true|false} plus, when netns is false, "netns_off": why
 * ("cannot create a network namespace: Operation not permitted (...)").
 * The first call tries to create a namespace (and logs once when it
 * cannot); call it at start to say so early. Thread-safe.
 */
json_t *act_egress_layers_active(void);
/* ---- profiles as Playwright storageState (storage_state.c) -------------- */

/*
 * Exports cfg->tenant's profile (user, name) as Playwright's storageState
 * ({"cookies": [...], "origins": [{"origin", "localStorage": [...]}]}):
 * a read-only copy is opened in a real Chromium cut off from the network;
 * localStorage is read for the origins the profile recorded and those in
 * origins (NULL-terminated "scheme://host[:port]", may be NULL). *state is
 * a new reference. The caller records the export (it carries secrets: it
 * goes to a 0600 file or stdout only). Returns 0, or -1 with the reason.
 */
int act_profile_export(const struct act_config *cfg, const char *user, const char *name,
                       const char *const *origins, json_t **state, char *err, size_t errlen);

/* Imports a storageState (borrowed, checked first) into cfg->tenant's
 * profile (user, name), created when missing: cookies and per-origin
 * localStorage are set in a real Chromium on the profile, which is then
 * closed and sealed as a new version (*version, may be NULL). Refused
 * while another session holds the profile. Returns 0, or -1 with the
 * reason. */
int act_profile_import(const struct act_config *cfg, const char *user, const char *name,
                       json_t *state, int64_t *version, char *err, size_t errlen);

/* ---- the CDP endpoint (cdp_endpoint.c, docs/cdp.md) ------------------- */

/* How a second DevTools client reaches a session's browser. */
struct act_cdp_endpoint {
	char devtools_url[704];   /* ws://127.0.0.1:PORT/devtools/browser/ID */
	int port;                 /* its port */
	int fd;                   /* a socket connected to that port (the caller's), or -1 */
	int camera_fd;            /* a second one, for the relay's evidence screenshots, or -1 */
	char context_id[64];      /* the browser context the session's pages open in, or "" */
	char proxy_server[112];   /* the session's egress proxy, or "" (layer off) */
	char downloads_dir[1100]; /* where downloads may go: inside the browser's own dir */
	char browser_session[40]; /* the browser's session id, for records */
};

/*
 * Makes sure s's browser runs (queueing browser_session {"action": "cdp"}
 * on its worker, which checks the tenant's policy), connects two sockets
 * to its DevTools port (inside its network namespace: fd and camera_fd,
 * both the caller's) and fills out. Waits up
 * to timeout_ms, or until *stop (may be NULL) rises. Any thread but the
 * session's worker. Returns 0, or -1 with the reason in err (the policy's
 * refusal, a launch failure).
 */
int act_session_cdp_endpoint(struct act_session *s, int timeout_ms, const atomic_int *stop,
                             struct act_cdp_endpoint *out, char *err, size_t errlen);

/* Queues an audit record of kind for the browser session (body stolen);
 * signed and chained like a tool call's. Any thread. */
void act_session_cdp_record(struct act_session *s, const char *kind, const char *browser_session,
                            json_t *body);

/* Keeps a screenshot (png of len bytes, taken) of url with its audit
 * record; why: "navigation" or "input". Any thread. */
void act_session_cdp_screenshot(struct act_session *s, const char *browser_session, const char *why,
                                const char *url, unsigned char *png, size_t len);

/* The tenant's parsed policy, borrowed while s lives. Any thread. */
const struct policy_tenant *act_session_policy(const struct act_session *s);

#endif

/*
 * sessions.h - one headless Chromium and everything it is showing.
 *
 * A struct sess owns a Chromium process group, its private 0700 run dir
 * (user-data-dir inside), the CDP connection to it, and the targets it
 * has: pages (tabs), out-of-process iframes and workers. Every new target
 * is auto-attached paused (waitForDebuggerOnStart), set up (domains
 * enabled, then the caller's setup hook, e.g. policy), and only then
 * resumed, so nothing of the page runs before the session's rules apply.
 *
 * Threads: a session is driven by one thread at a time (its worker); none
 * of these functions is thread-safe except through cdp_wake() on
 * sess_cdp().
 *
 * States: PROVISIONING -> STARTED (process up) -> READY (CDP connected, a
 * page attached and set up) <-> BUSY -> CLOSING -> CLOSED, or FAILED with
 * a reason (launch failure, Chromium died, connection lost).
 */
#ifndef GB_SESSIONS_H
#define GB_SESSIONS_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

struct cdp_conn;
struct sess;
struct sess_page;

enum sess_state {
	SESS_PROVISIONING,
	SESS_STARTED,
	SESS_READY,
	SESS_BUSY,
	SESS_CLOSING,
	SESS_CLOSED,
	SESS_FAILED,
};

/* Called for each newly attached target while it is still paused, after
 * the session's own setup commands were queued; may queue more commands
 * with cdp_send() (never wait). type is "page", "iframe", "worker", ... */
typedef void (*sess_target_setup_fn)(void *user, struct sess *s, const char *session_id,
                                     const char *type);

/* A field added here that changes how the browser is launched must also be
 * compared by actions/warm_pool.c (pool_fits), or a session may adopt a
 * pre-launched browser that lacks it. */
struct sess_options {
	const char *chromium_path; /* NULL: /usr/lib/chromium/chromium, else /usr/bin/chromium */
	const char *run_dir;       /* parent of the session's private dir; required */
	int headed;                /* 0: headless (default) */
	int viewport_width;        /* 0 = 1280 */
	int viewport_height;       /* 0 = 720 */
	const char *host_resolver_rules; /* --host-resolver-rules, or NULL */
	const char *proxy_server;        /* --proxy-server, or NULL */
	const char *const *extra_args;   /* NULL-terminated, or NULL */
	int ready_timeout_ms;            /* 0 = 20000 */
	const atomic_int *cancel_flag;   /* aborts waits; borrowed */
	sess_target_setup_fn on_target;  /* may be NULL */
	void *on_target_user;
	int netns_fd; /* > 0: Chromium is started, and its DevTools port
	                                  * connected to, inside this network namespace
	                                  * (egress layer 4; borrowed, see policy_netns_create) */
	/* Chromium's user-data-dir: an existing private (0700) dir the caller
	 * owns, e.g. an unsealed profile; it is left in place on close. NULL:
	 * a fresh one inside the session's private dir, removed on close. */
	const char *user_data_dir;
	int close_grace_ms; /* how long Browser.close may take; 0 = 2000 */
	/* 1: Chromium's own sandbox off (--no-sandbox) whoever it runs as; the
	 * browser's user, network namespace and proxy stay as they are */
	int chromium_sandbox_off;
};

/* A JS dialog waiting on a page. */
struct sess_dialog {
	char type[16]; /* alert, confirm, prompt, beforeunload */
	char *message;
	char *default_prompt;
};

/* 1 when browsers run with Chromium's sandbox on (as root: each as a user
 * of its own), 0 when they run as root without it; why says how, or why
 * not and what to do (browser_user.c). */
int sess_browser_sandboxed(char *why, size_t whylen);

/*
 * Launches Chromium and waits until READY (the first page attached and set
 * up). Measures time_to_ready. On failure returns -1 with a reason in err
 * ("Chromium exited with status 1 before DevTools was ready: see ...") and
 * leaves no process or dir behind.
 */
int sess_launch(const struct sess_options *opt, struct sess **out, char *err, size_t errlen);

/*
 * Closes the browser (Browser.close, then SIGKILL to the whole process
 * group), reaps every process, removes the private dir, frees s. Leaves
 * zero processes and zero files. NULL is a no-op.
 */
void sess_close(struct sess *s);

/* Re-checks the process and the connection; turns the session FAILED with
 * a reason if Chromium died or the socket closed. Returns 0 while usable,
 * -1 once FAILED. */
int sess_check_alive(struct sess *s);

enum sess_state sess_get_state(const struct sess *s);
void sess_set_busy(struct sess *s, int busy);
const char *sess_state_name(enum sess_state st);
/* Why the session FAILED ("Chromium exited (killed by signal 9)"), or "". */
const char *sess_failure(const struct sess *s);
const char *sess_id(const struct sess *s);
struct cdp_conn *sess_cdp(struct sess *s);
int64_t sess_time_to_ready_ms(const struct sess *s);
/* The port of Chromium's DevTools endpoint on 127.0.0.1 (0 if unknown):
 * no page may reach it (the egress layers refuse it). */
int sess_devtools_port(const struct sess *s);
int sess_pid(const struct sess *s);
/* The browser's DevTools websocket URL, ws://127.0.0.1:PORT/devtools/browser/ID
 * ("" if unknown); borrowed. */
const char *sess_devtools_url(const struct sess *s);
/* Chromium's user-data-dir (removed on close unless the caller owns it). */
const char *sess_profile_dir(const struct sess *s);
/* Opens a TCP connection to 127.0.0.1:port from inside the network
 * namespace netns_fd (borrowed; <= 0: this process's own), so that a
 * second DevTools client reaches a browser launched there (netns.c).
 * Returns 0 with *fd_out (a connected, blocking, close-on-exec socket, now
 * the caller's), or -1 with the reason in err. */
int sess_devtools_socket(int netns_fd, int port, int *fd_out, char *err, size_t errlen);
/* The session's private dir (removed on close). */
const char *sess_dir(const struct sess *s);
/* A dir of the session named name ("downloads", "uploads") that its
 * browser may read and write and no other session's browser can (its
 * user's home, or the private dir): created when missing, its path in
 * dir. Removed with the session. Returns 0, or -1 with err. */
int sess_area_dir(struct sess *s, const char *name, char *dir, size_t len, char *err,
                  size_t errlen);
/* Makes path (a file written into an area) 0600 and the browser's. */
int sess_area_give(struct sess *s, const char *path, char *err, size_t errlen);
/* The flags Chromium was launched with (array of strings; borrowed, owned
 * by the session): part of the environment manifest. */
struct json_t *sess_launch_flags(const struct sess *s);
/* "Chrome/156.0.8078.108", as the browser reported it. */
const char *sess_browser_version(const struct sess *s);

/* Pages (tabs), in the order they were opened. The current page is the
 * one tools act on. Pointers stay valid until the page closes. */
size_t sess_page_count(const struct sess *s);
struct sess_page *sess_page_at(struct sess *s, size_t i);
struct sess_page *sess_current_page(struct sess *s);
size_t sess_current_index(const struct sess *s);
int sess_select_page(struct sess *s, size_t index, char *err, size_t errlen);
/* Opens a new tab at about:blank, set up like every other, and makes it
 * current. */
int sess_new_page(struct sess *s, char *err, size_t errlen);
int sess_close_page(struct sess *s, size_t index, char *err, size_t errlen);
/* Counts pages opened since the session started (popups included). */
unsigned sess_pages_opened(const struct sess *s);

const char *sess_page_session_id(const struct sess_page *p);
const char *sess_page_target_id(const struct sess_page *p);
/* Main-frame URL as last reported by the page. */
const char *sess_page_url(const struct sess_page *p);
const char *sess_page_main_frame_id(const struct sess_page *p);
int sess_page_crashed(const struct sess_page *p);
/* The open dialog, or NULL. */
const struct sess_dialog *sess_page_dialog(const struct sess_page *p);
/* Dialogs that opened since the counter was last reset (for results). */
unsigned sess_page_dialogs_seen(const struct sess_page *p);

/* The name of glassbox's isolated world in each frame. */
#define SESS_WORLD_NAME "glassbox"
/* The binding the landing recorder of a click calls in that world when
 * the trusted press arrives (Runtime.bindingCalled): where the press
 * landed, known even when the click then replaces the document. */
#define SESS_PRESS_BINDING "__glassboxPressed"
/* An expression for glassbox's world of a page's main frame: the
 * document's DOM mark, a string that changes whenever the document does
 * (equal marks: no node, attribute or text changed between them;
 * worlds.c). */
extern const char sess_dom_mark_js[];
/* The execution context of the isolated world glassbox made in frame
 * frame_id of CDP session session_id, or 0 when none lives (worlds.c). */
long long sess_world_find(const struct sess *s, const char *session_id, const char *frame_id);
/* Remembers the world Page.createIsolatedWorld made in that frame. */
void sess_world_remember(struct sess *s, const char *session_id, const char *frame_id,
                         long long context_id);
/* Forgets the world with context_id in session_id (0: every world of it). */
void sess_world_forget(struct sess *s, const char *session_id, long long context_id);

/* The CDP session of an out-of-process iframe whose frame id is frame_id,
 * or NULL when the frame lives in its page's own session. */
const char *sess_frame_session(struct sess *s, const char *frame_id);

/* 1 when frame_id is the main frame of one of the session's pages or one
 * of its out-of-process iframes (a frame of the same process as its page
 * is not known here), else 0. */
int sess_frame_is_known(struct sess *s, const char *frame_id);

/* 1 when the session is a context of a shared browser (host.c): browser-
 * wide events of its connection (downloads) may be another session's. */
int sess_is_shared(const struct sess *s);

/* ---- warm pool ----------------------------------------------------------
 * Pre-launched browsers for sessions that need nothing special at launch.
 * Thread-safe. */
struct sess_pool;

/* Starts a pool thread that keeps `size` READY sessions launched with opt
 * (copied, extra_args included; opt->on_target, when set, sets up every
 * target of a pooled browser until sess_adopt replaces it), launching at
 * most max_launches in all (0: refill forever; 1: a single pre-launch, as
 * a one-session stdio server wants). size 0: *out = NULL, no pool.
 * Returns 0 or -1. */
int sess_pool_start(const struct sess_options *opt, size_t size, unsigned max_launches,
                    struct sess_pool **out);

/* Makes a fresh network namespace for one pooled browser: 0 with *fd_out
 * (an open fd on it, now the caller's), or -1 with the reason in err. */
typedef int (*sess_netns_new_fn)(void *user, int *fd_out, char *err, size_t errlen);

/* Readies a freshly launched pooled browser s before it may be handed out
 * (e.g. its browser context, sess_prepare_context): 0, with *proxy_fd a
 * listening socket s keeps for the proxy of the session that takes it (0:
 * none; s owns it until sess_take_proxy_fd), or -1 with the reason in err:
 * s is then closed, never handed out. */
typedef int (*sess_pool_prepare_fn)(void *user, struct sess *s, int *proxy_fd, char *err,
                                    size_t errlen);

/* What a pool does around each launch; every member may be NULL. */
struct sess_pool_hooks {
	sess_netns_new_fn netns_new;  /* a namespace per browser; NULL: this process's */
	sess_pool_prepare_fn prepare; /* NULL: handed out as launched */
	void *user;                   /* passed to both */
};

/* As sess_pool_start, with hooks (copied; called on the pool's thread, so
 * they must be thread-safe). With netns_new, each browser is launched, and
 * its DevTools port connected to, inside a network namespace of its own
 * made just before its launch (egress layer 4; opt->netns_fd is ignored);
 * the pooled session owns that namespace until sess_take_netns(), and
 * closing it closes the namespace's fd too. With prepare, a browser is
 * ready only once prepare succeeded on it. */
int sess_pool_start_hooks(const struct sess_options *opt, size_t size, unsigned max_launches,
                          const struct sess_pool_hooks *hooks, struct sess_pool **out);

/* sess_pool_start_hooks with netns_new (not NULL) as the only hook. */
int sess_pool_start_in_netns(const struct sess_options *opt, size_t size, unsigned max_launches,
                             sess_netns_new_fn netns_new, void *user, struct sess_pool **out);

/* The network namespace a pool launched s in, handed to the caller: the fd
 * (the caller now owns it and closes it after s is closed, e.g. to launch
 * s's successor in the same namespace), or 0 when s owns none. */
int sess_take_netns(struct sess *s);

/* The same namespace, borrowed (still s's), or 0. */
int sess_netns_fd(const struct sess *s);

/* The listening socket the pool's prepare hook left with s, handed to the
 * caller (who now owns it), or 0 when s keeps none. */
int sess_take_proxy_fd(struct sess *s);

/* Hands over a READY session (the caller's thread now drives it; its
 * waits watch cancel_flag), waiting up to wait_ms for a launch in
 * progress; NULL when none is ready (launch one yourself). */
struct sess *sess_pool_take(struct sess_pool *p, const atomic_int *cancel_flag, int wait_ms);

/* Number of ready sessions. */
size_t sess_pool_ready(struct sess_pool *p);

/*
 * Readies a pre-launched READY browser, before anyone takes it, for the
 * session that will: a new browser context whose proxy is proxy_server
 * (with proxy_bypass_list, e.g. "<-loopback>"; strings borrowed), and one
 * tab in it, attached and set up like every other (the on_target hook of
 * the moment); the browser's tabs outside that context are closed, so
 * nothing of a session will run there. timeout_ms bounds each step.
 * Returns 0, or -1 with the reason in err (close the browser then: it is
 * not ready for anyone).
 */
int sess_prepare_context(struct sess *s, const char *proxy_server, const char *proxy_bypass_list,
                         int timeout_ms, char *err, size_t errlen);

/* The proxy of the context sess_prepare_context made ("" when none). */
const char *sess_context_proxy(const struct sess *s);

struct sess_adopt_options {
	sess_target_setup_fn on_target; /* may be NULL */
	void *on_target_user;
	int timeout_ms; /* 0 = 10000 */
	/* called once the context exists and before its first tab opens (e.g.
	 * to load a profile's storage state into it, sess_host_open_side_page);
	 * may be NULL. Returns 0, or -1 with err: the join then fails. */
	int (*prepare)(void *user, struct sess *s, char *err, size_t errlen);
	void *prepare_user;
};

/*
 * Makes a browser readied with sess_prepare_context the caller's: every
 * target attached from now on gets o->on_target, and its tab in the
 * prepared context is checked to answer. time_to_ready becomes the time
 * this took. Returns 0, or -1 with the reason in err when s is not READY,
 * was not prepared, was adopted already, or its tab does not answer (the
 * browser should then be closed).
 */
int sess_adopt(struct sess *s, const struct sess_adopt_options *o, char *err, size_t errlen);

/* The browser context the session's pages open in ("" = the default). */
const char *sess_context_id(const struct sess *s);

/* ---- shared browsers (isolation "context") -------------------------------
 * One Chromium that several sessions share, each in a browser context of
 * its own with its own proxy, CDP connection, target setup and dirs
 * (host.c). A renderer exploit in one of its contexts reaches the others:
 * share a browser only among sessions that trust each other (one tenant). */
struct sess_host;

/* How a session joins a shared browser (strings borrowed). */
struct sess_join_options {
	const char *proxy_server;       /* its context's proxy: the session's own, or NULL */
	const char *proxy_bypass_list;  /* e.g. "<-loopback>", or NULL */
	sess_target_setup_fn on_target; /* may be NULL */
	void *on_target_user;
	int timeout_ms; /* 0 = 10000 */
	/* called once the context exists and before its first tab opens (e.g.
	 * to load a profile's storage state into it, sess_host_open_side_page);
	 * may be NULL. Returns 0, or -1 with err: the join then fails. */
	int (*prepare)(void *user, struct sess *s, char *err, size_t errlen);
	void *prepare_user;
};

/* Starts a browser to share (opt as for sess_launch; on_target and
 * user_data_dir unused: it opens no page and keeps no profile; its
 * netns_fd, when set, stays the caller's and must outlive the host).
 * Returns 0 with *out (one reference, the caller's), or -1 with err. */
int sess_host_launch(const struct sess_options *opt, struct sess_host **out, char *err,
                     size_t errlen);

/* A new session on h, READY: its own connection, a browser context whose
 * proxy is o->proxy_server, a blank tab in it set up with o->on_target
 * (strings borrowed; waits watch cancel_flag). The session holds a
 * reference to h until sess_close(), which closes its context and leaves
 * the browser running for the others. Returns 0, or -1 with err. */
int sess_host_join(struct sess_host *h, const struct sess_join_options *o,
                   const atomic_int *cancel_flag, struct sess **out, char *err, size_t errlen);

/* The browser context of a session on a shared browser (borrowed), or
 * NULL when the browser is its own. */
const char *sess_host_context_id(const struct sess *s);

/* Opens a blank page in s's context that s does not take as a tab (no
 * setup, no tab, no snapshots, no egress hook: its opener intercepts its
 * requests itself) and waits until it is attached, paused before its first
 * script, on s's connection; target_id and session_id (SESS_ID_LEN bytes
 * each) get its ids. The opener resumes it (Runtime.runIfWaitingForDebugger)
 * once set up, and closes it with sess_host_close_side_page. One at a time
 * per session. Returns 0, or -1 with err. */
int sess_host_open_side_page(struct sess *s, int timeout_ms, char *target_id, char *session_id,
                             char *err, size_t errlen);

/* 1 when session_id (borrowed, may be NULL) is s's open side page. */
int sess_host_is_side_page(const struct sess *s, const char *session_id);

/* Closes s's side page (a no-op when none is open). */
void sess_host_close_side_page(struct sess *s);

/* 1 when s's tabs have their viewport emulated at *width x *height (a
 * session on a headless shared browser, whose windows are smaller than
 * the viewport; each tab gets it while paused, before its first script),
 * 0 when the page's viewport is its window's. Whoever clears a viewport
 * emulation on such a tab puts this one back. width, height may be NULL. */
int sess_emulated_viewport(const struct sess *s, int *width, int *height);

/* The Emulation.setDeviceMetricsOverride parameters (a new reference) of
 * that viewport: its size, the real device pixel ratio, not mobile; NULL
 * when s has none. */
struct json_t *sess_emulated_viewport_params(const struct sess *s);

/* 1 when h's browser has exited (how, in why), else 0. Thread-safe. */
int sess_host_exited(struct sess_host *h, char *why, size_t whylen);

/* Drops a reference; the last one ends the browser (zero residue). NULL is
 * a no-op. Thread-safe. */
void sess_host_unref(struct sess_host *h);

/* Stops the pool thread and closes the ready sessions (zero residue). */
void sess_pool_stop(struct sess_pool *p);

/* ---- resource limits ---------------------------------------------------
 * Per-browser ceilings on memory and CPU. A watchdog thread measures each
 * limited browser's whole process tree (PSS from /proc/<pid>/smaps_rollup,
 * CPU time from /proc/<pid>/stat over a sliding window) and closes a
 * browser over its limit; the session then turns FAILED with a reason
 * that names the limit (sess_failure) and sess_over_limit() says so.
 * Where cgroup v2 is usable (memory and cpu controllers delegated and
 * writable), each limited browser also gets its own cgroup with memory.max
 * and cpu.max, so the kernel holds the line between two samples. */
struct sess_limits {
	uint64_t memory_bytes; /* PSS of the browser's tree; 0 = no limit */
	unsigned cpu_percent;  /* of one core, averaged over the window; 0 = no limit */
	int cpu_window_ms;     /* 0 = 5000 */
};

/* Puts s's browser under lim (copied) from now on; a session can be
 * limited once. Returns 0, or -1 with the reason in err. */
int sess_apply_limits(struct sess *s, const struct sess_limits *lim, char *err, size_t errlen);

/* 1 when the browser was closed for going over one of its limits. */
int sess_over_limit(struct sess *s);

/* "cgroup v2 (DIR) and watchdog" or "watchdog (WHY no cgroup)", for logs. */
void sess_limits_describe(char *buf, size_t len);

/* ---- residue and orphans ------------------------------------------------ */

/* Processes and dirs that closed sessions of this process left behind
 * (re-checked on each call: what has gone since is not counted). Zero
 * when every close was clean; for a "residual processes" gauge.
 * Thread-safe. */
size_t sess_residual_count(void);

/* Processes running on a browser profile of data_dir (under its run/, or
 * in a browser user's home named by it) whose session dir names no live
 * glassbox: orphans of a glassbox that died, mid-launch included, that no
 * reaper has ended yet; what sess_residual_count() counts already is not
 * counted again. With it, a "residual processes" gauge counts every
 * Chromium of the data dir that no live session owns. */
size_t sess_unowned_browsers(const char *data_dir);

struct sess_reap_report {
	unsigned browsers_killed; /* process groups of orphaned browsers ended */
	unsigned dirs_removed;    /* private run dirs removed */
	unsigned live_skipped;    /* dirs whose owner still runs: left alone */
};

/*
 * Finds what a glassbox that is no longer running left under
 * data_dir/run (borrowed): its browsers (each its own process group) and
 * private dirs, ends those browsers and removes those dirs. Each session
 * dir holds an owner file (pid and start time of the glassbox that made
 * it): a dir whose owner still runs is left alone, so another live
 * glassbox on the same data dir keeps its browsers; a reused pid does not
 * pass for its owner. A dir without an owner file is an orphan once it is
 * older than a minute. Fills rep (may be NULL); returns 0, or -1 when the
 * run dir cannot be read.
 */
int sess_reap_orphans(const char *data_dir, struct sess_reap_report *rep);

#endif

/*
 * sessions-private.h - the session's insides, shared by the files of
 * sessions/ only.
 */
#ifndef GB_SESSIONS_PRIVATE_H
#define GB_SESSIONS_PRIVATE_H

#include "common/unittest.h"
#include "sessions/sessions.h"

#include <jansson.h>
#include <spawn.h>
#include <stdint.h>
#include <sys/types.h>

#define SESS_MAX_PAGES 32
#define SESS_MAX_FRAMES 64
#define SESS_ID_LEN 64
#define SESS_MAX_WORLDS 64
#define SESS_BROWSER_UID_BASE 1900000000u
#define SESS_SETPRIV "/usr/bin/setpriv" /* starts a browser as its own user */
/* short: Chromium's singleton socket, TMPDIR/org.chromium.Chromium.XXXXXX/
 * SingletonSocket, must fit a unix socket path (107 bytes) */
#define SESS_BROWSER_HOME_BASE "/tmp/gb-browsers"

struct sess_page {
	char target_id[SESS_ID_LEN];
	char session_id[SESS_ID_LEN];
	char main_frame_id[SESS_ID_LEN];
	char *url;
	int crashed;
	int dialog_open;
	struct sess_dialog dialog;
	unsigned dialogs_seen;
};

/* An isolated world glassbox made in a frame (worlds.c). */
struct sess_world {
	char session_id[SESS_ID_LEN];
	char frame_id[SESS_ID_LEN];
	long long context_id;
};

/* An out-of-process iframe or a worker attached under a page. */
struct sess_child {
	char target_id[SESS_ID_LEN]; /* equals the frame id for iframes */
	char session_id[SESS_ID_LEN];
	char type[16];
};

struct sess {
	char id[33];
	char dir[1024];         /* private 0700 run dir */
	char profile_dir[1040]; /* user-data-dir inside it */
	uid_t browser_uid;      /* browser_user.c: its own user, 0: runs as we do */
	char home[1024];        /* that user's home, "" when none */
	char browser_version[64];
	enum sess_state state;
	char failure[256];
	pid_t pid;
	pid_t pgid;
	int exited;
	int exit_status;
	struct cdp_conn *cdp;
	int devtools_port;      /* Chromium's DevTools port on 127.0.0.1 */
	char devtools_url[704]; /* ws://127.0.0.1:PORT/devtools/browser/ID */
	struct json_t *flags;   /* the launch flags, for the environment manifest */
	int64_t started_ms;
	int64_t time_to_ready_ms;
	sess_target_setup_fn on_target;
	void *on_target_user;
	int listener;
	struct sess_page *pages[SESS_MAX_PAGES];
	size_t n_pages;
	size_t current;
	unsigned pages_opened;
	struct sess_child children[SESS_MAX_FRAMES];
	size_t n_children;
	struct sess_world worlds[SESS_MAX_WORLDS];
	size_t n_worlds;
	int close_grace_ms;           /* Browser.close to exit, before SIGKILL */
	struct sess_watch *watch;     /* limits.c: the watchdog's entry, or NULL */
	char context_id[SESS_ID_LEN]; /* adopt.c: the session's browser context, or "" */
	int netns_fd;                 /* pool.c: the network namespace the pool launched the browser
	                         * in (owned until sess_take_netns), 0 when none */
	int proxy_fd;                 /* pool.c: the listening socket readied for the adopter's
	                               * proxy (owned until sess_take_proxy_fd), 0 when none */
	char context_proxy[128];      /* adopt.c: the proxy of context_id, or "" */
	int adopted;                  /* adopt.c: sess_adopt succeeded */
	struct sess_host *host;       /* host.c: the shared browser this session has a
	                               * context of (a counted reference), or NULL when
	                               * the browser is its own */
	int side_wanted;              /* host.c: the next page of context_id is a side page */
	char side_target_id[SESS_ID_LEN];  /* host.c: the side page, or "" */
	char side_session_id[SESS_ID_LEN]; /* host.c: its CDP session, or "" */
	int emulated_width; /* host.c: each tab's viewport is emulated at this size (its window
	                      * is smaller, targets.c sets it), 0 when the window is the viewport */
	int emulated_height;
};

/* session.c */
/* Starts Chromium as sess_launch does, up to its DevTools endpoint
 * (s->devtools_url), without connecting to it: a session with no CDP
 * connection, STARTED. Returns 0, or -1 with err (nothing left behind). */
int sess_launch_process(const struct sess_options *opt, struct sess **out, char *err,
                        size_t errlen);
/* Reads the browser's version over s's connection into s. */
void sess_read_version(struct sess *s, int timeout_ms);

/* host.c */
/* 1 when a page attached at the browser's level (sid, target_id) was
 * asked for as a side page (sess_host_open_side_page): kept, paused, for
 * its opener and not set up as a tab. */
int sess_host_take_side_page(struct sess *s, const char *sid, const char *target_id);
/* Closes s's browser context and connection and removes its dirs, then
 * drops its reference to the shared browser (sess_close of such a s). */
void sess_host_leave(struct sess *s);
/* sess_check_alive of a session on a shared browser. */
int sess_host_check(struct sess *s);
/* The pid of h's browser (0 once it has been reaped at the end). */
int sess_host_pid(struct sess_host *h);

/* process.c */
int sess_spawn(struct sess *s, const struct sess_options *opt, char *err, size_t errlen);
int sess_wait_devtools(struct sess *s, int timeout_ms, const atomic_int *cancel, char *url,
                       size_t urllen, char *err, size_t errlen);
int sess_process_exited(struct sess *s, char *why, size_t whylen);
void sess_kill_group(struct sess *s, int grace_ms);
void sess_remove_tree(const char *dir);

/* Chromium's path when none is given: /usr/lib/chromium/chromium, else
 * /usr/bin/chromium. */
const char *sess_default_chromium(void);

#ifdef GB_UNITTEST_BUILD
int sess_build_argv(const struct sess_options *opt, const char *profile_dir, int sandboxed,
                    const char **args, char store[][2048], int nstore);
int sess_parse_devtools_port(const char *text, char *url, size_t urllen);
#endif

/* netns.c: the same as posix_spawn() and cdp_connect(), done on a short-lived
 * thread inside the network namespace netns_fd (borrowed), so that Chromium
 * and the DevTools socket live there. sess_spawn_in_netns returns 0 or an
 * errno like posix_spawn. */
int sess_spawn_in_netns(int netns_fd, pid_t *pid, const char *const *args, char *const *envp,
                        const posix_spawn_file_actions_t *fa, const posix_spawnattr_t *attr);
struct cdp_options;
struct cdp_error;
int sess_cdp_connect_in_netns(int netns_fd, const char *ws_url, const struct cdp_options *opts,
                              struct cdp_conn **out, struct cdp_error *err);

/* prefs.c: writes (or updates) Default/Preferences in profile_dir with the
 * preferences every session needs (network prediction off). Returns 0, or
 * -1 with err. */
int sess_write_preferences(const char *profile_dir, char *err, size_t errlen);
/* procfs.c */
struct sess_proc_stat {
	char state; /* R, S, Z, ... */
	pid_t ppid;
	pid_t pgid;
	uint64_t cpu_ticks;   /* utime + stime, in clock ticks */
	uint64_t start_ticks; /* since boot: with the pid, names one process */
};
int sess_proc_stat(pid_t pid, struct sess_proc_stat *st);
/* Reads at most len-1 bytes of path (not a symlink) into buf (len > 0),
 * NUL-terminated; returns the byte count or -1. */
ssize_t sess_read_small_file(const char *path, char *buf, size_t len);
uint64_t sess_proc_pss_bytes(pid_t pid);
/* 1 when one of pid's arguments equals needle exactly (also in a title
 * rewritten as one space-separated string). */
int sess_proc_cmdline_has(pid_t pid, const char *needle);
/* Calls fn for each process in /proc until it returns non-zero; returns
 * the count visited, or -1. */
int sess_proc_foreach(int (*fn)(void *user, pid_t pid), void *user);
#ifdef GB_UNITTEST_BUILD
int sess_parse_proc_stat(const char *text, struct sess_proc_stat *st);
uint64_t sess_parse_pss_kb(const char *text);
int sess_cmdline_text_has(const char *text, size_t n, const char *needle);
#endif

/* limits.c */
/* Called once the browser's leader was reaped: its pgid may be reused, so
 * the watchdog stops looking at it. */
void sess_watch_detach(struct sess *s);
/* Unregisters and frees s->watch (removes its cgroup); NULL is a no-op. */
void sess_watch_release(struct sess *s);
/* The limit verdict ("the browser used ..."), or NULL when none. */
int sess_watch_verdict(struct sess *s, char *buf, size_t len);

/* cgroup.c */
/* The cgroup v2 dir under which browsers get their own cgroup (memory
 * and cpu controllers enabled and writable), found once; "" with the
 * reason in why when cgroups cannot be used here. */
const char *sess_cgroup_base(char *why, size_t whylen);
/* Creates base/<id> with memory.max and cpu.max for lim and moves every
 * process of group pgid into it; path gets the dir. */
int sess_cgroup_enter(const char *base, const char *id, pid_t pgid, uint64_t memory_max_bytes,
                      unsigned cpu_percent, char *path, size_t pathlen, char *err, size_t errlen);
/* The number of processes the kernel ended in the cgroup for memory. */
unsigned sess_cgroup_oom_kills(const char *path);
/* Removes the (empty) cgroup dir. */
void sess_cgroup_remove(const char *path);
#ifdef GB_UNITTEST_BUILD
int sess_cgroup_prepare(const char *root, char *base, size_t baselen, char *why, size_t whylen);
#endif

/* orphans.c */
/* Writes the owner file of a session's dir (all borrowed): this process's
 * pid and start time, so a later glassbox can tell whether its owner still
 * runs, and the browser's process group and profile dir. */
int sess_write_owner(const char *dir, pid_t pgid, const char *profile_dir);
#ifdef GB_UNITTEST_BUILD
struct owner;
int sess_parse_owner(const char *text, struct owner *o);
#endif

/* session.c */
/* Notes what a close left behind (processes of pgid alive, dir present)
 * for sess_residual_count(). */
void sess_note_residue(pid_t pgid, const char *dir);
/* 1 when a close noted group pgid as left behind (residue.c). */
int sess_residue_noted(pid_t pgid);

/* targets.c */
/* browser_user.c. 1 when browsers are to run as users of their own with
 * their sandbox, else 0; why says which and why. */
int sess_browser_user_check(char *why, size_t whylen);
/* A uid no process uses, for one browser; 0 when none was found. */
uid_t sess_browser_uid_pick(void);
/* The home path of the browser user of session_id under run_dir.
 * Returns 0, or -1 (too long, or run_dir's tag cannot be made). */
int sess_browser_home_path(const char *run_dir, const char *session_id, char *home, size_t len);
/* Makes that home (0700, owned by uid). Returns 0 or -1 with err. */
int sess_browser_home_make(const char *run_dir, const char *session_id, uid_t uid, char *home,
                           size_t len, char *err, size_t errlen);
/* Hands dir and everything in it to uid. Returns 0 or -1. */
int sess_hand_over_tree(const char *dir, uid_t uid);
/* 1 when every dir above path lets others pass (o+x). */
int sess_reachable_by_others(const char *path);
/* 1 when others may run the program at path (and reach it). */
int sess_runnable_by_others(const char *path);

int sess_targets_start(struct sess *s);
#ifdef GB_UNITTEST_BUILD
int sess_foreign_target(const struct sess *s, const char *event_sid, json_t *info);
#endif
/* Forgets worlds whose contexts Runtime reports destroyed or cleared. */
void sess_worlds_on_event(struct sess *s, const char *session_id, const char *method,
                          json_t *params);
void sess_targets_stop(struct sess *s);
struct sess_page *sess_page_by_target(struct sess *s, const char *target_id);
int sess_open_page(struct sess *s, int timeout_ms, char *err, size_t errlen);
void sess_fail(struct sess *s, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* adopt.c: creates s's browser context (disposed with s's connection)
 * with proxy_server as its proxy (NULL: the browser's own), its id into
 * s->context_id. Returns 0 or -1 with err. */
int sess_create_context(struct sess *s, const char *proxy_server, const char *proxy_bypass_list,
                        int timeout_ms, char *err, size_t errlen);

/* session.c: a new session record, PROVISIONING, with a fresh id, its
 * target set-up and its close grace; NULL with err when out of memory. */
struct sess *sess_alloc(sess_target_setup_fn on_target, void *on_target_user, int close_grace_ms,
                        char *err, size_t errlen);

#endif

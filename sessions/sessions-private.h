/*
 * sessions-private.h - the session's insides, shared by the files of
 * sessions/ only.
 */
#ifndef GB_SESSIONS_PRIVATE_H
#define GB_SESSIONS_PRIVATE_H

#include "common/unittest.h"
#include "sessions/sessions.h"

#include <spawn.h>
#include <sys/types.h>

#define SESS_MAX_PAGES 32
#define SESS_MAX_FRAMES 64
#define SESS_ID_LEN 64

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
	char browser_version[64];
	enum sess_state state;
	char failure[256];
	pid_t pid;
	pid_t pgid;
	int exited;
	int exit_status;
	struct cdp_conn *cdp;
	int devtools_port;      /* Chromium's DevTools port on 127.0.0.1 */
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
	int close_grace_ms;     /* Browser.close to exit, before SIGKILL */
};

/* process.c */
int sess_spawn(struct sess *s, const struct sess_options *opt, char *err, size_t errlen);
int sess_wait_devtools(struct sess *s, int timeout_ms, const volatile int *cancel, char *url,
                       size_t urllen, char *err, size_t errlen);
int sess_process_exited(struct sess *s, char *why, size_t whylen);
void sess_kill_group(struct sess *s, int grace_ms);
void sess_remove_tree(const char *dir);

#ifdef GB_UNITTEST_BUILD
const char *sess_default_chromium(void);
int sess_build_argv(const struct sess_options *opt, const char *profile_dir, const char **args,
                    char store[][2048], int nstore);
int sess_parse_devtools_port(const char *text, char *url, size_t urllen);
#endif

/* netns.c: the same as posix_spawn() and cdp_connect(), done on a short-lived
 * thread inside the network namespace netns_fd (borrowed), so that Chromium
 * and the DevTools socket live there. sess_spawn_in_netns returns 0 or an
 * errno like posix_spawn. */
int sess_spawn_in_netns(int netns_fd, pid_t *pid, const char *const *args,
                        const posix_spawn_file_actions_t *fa, const posix_spawnattr_t *attr);
struct cdp_options;
struct cdp_error;
int sess_cdp_connect_in_netns(int netns_fd, const char *ws_url, const struct cdp_options *opts,
                              struct cdp_conn **out, struct cdp_error *err);

/* prefs.c: writes (or updates) Default/Preferences in profile_dir with the
 * preferences every session needs (network prediction off). Returns 0, or
 * -1 with err. */
int sess_write_preferences(const char *profile_dir, char *err, size_t errlen);

/* targets.c */
int sess_targets_start(struct sess *s);
void sess_targets_stop(struct sess *s);
struct sess_page *sess_page_by_target(struct sess *s, const char *target_id);
int sess_open_page(struct sess *s, int timeout_ms, char *err, size_t errlen);
void sess_fail(struct sess *s, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#endif

/*
 * context_profile.c - a profile of a session in isolation "context": its
 * browser context's storage state, sealed by the profile store.
 *
 * A context has no user-data-dir, so a profile opened by a context-mode
 * session keeps the context's storage state instead: one file,
 * STATE_FILE, in the lease's dir, Playwright's storageState JSON (every
 * cookie of the context, session cookies included, and the local storage
 * of each origin the profile knows). The profile store seals, versions,
 * holds and checks it as any profile (profiles/profiles.h); the kind of a
 * profile is what its sealed dir holds: that file (a storage state), a
 * Chromium user-data-dir, or nothing yet (a new profile, which takes the
 * kind of the first session that saves it).
 *
 * The state is loaded into the new context before its first tab opens
 * (the prepare hook of sess_host_join) and read back from it when the
 * profile is closed and sealed, both through a side page of the context
 * (sess_host_open_side_page) whose requests storage_page.c answers
 * without any network. Runs on the session's worker. Cookie values and
 * storage items never reach a log line or an error.
 */
#include "actions/actions-private.h"

#include "common/fs.h"
#include "common/log.h"
#include "profiles/profiles.h"
#include "sessions/sessions.h"

#include <dirent.h>
#include <sodium.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define STATE_FILE "glassbox-storage-state.json"
#define STATE_MAX_BYTES (64u * 1024u * 1024u)
#define STEP_TIMEOUT_MS 15000

int act_context_profile_kind(const struct prof_lease *l)
{
	DIR *d = opendir(prof_lease_dir(l));
	struct dirent *e;
	int kind = ACT_PROFILE_EMPTY;

	if (!d)
		return ACT_PROFILE_USER_DATA_DIR; /* unreadable: not ours to take */
	while ((e = readdir(d))) {
		if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
			continue;
		if (!strcmp(e->d_name, STATE_FILE)) {
			kind = ACT_PROFILE_STORAGE_STATE;
			break;
		}
		kind = ACT_PROFILE_USER_DATA_DIR;
	}
	closedir(d);
	return kind;
}

int act_context_profile_check(const struct act_session *as, const struct prof_lease *l, char *err,
                              size_t errlen)
{
	int kind = act_context_profile_kind(l);
	const char *name = prof_lease_info(l)->name;

	if (as->shared && kind == ACT_PROFILE_USER_DATA_DIR) {
		snprintf(err, errlen,
		         "profile %s is a browser profile (a user-data-dir, saved by a session in "
		         "\"isolation\": \"process\"), and this tenant's sessions run in "
		         "\"isolation\": \"context\", where a profile is a browser context's "
		         "storage state: open it with \"isolation\": \"process\", or export it "
		         "(glassbox profile export) and import the storageState into a new "
		         "profile opened in context mode",
		         name);
		return -1;
	}
	if (!as->shared && kind == ACT_PROFILE_STORAGE_STATE) {
		snprintf(err, errlen,
		         "profile %s keeps a browser context's storage state (saved by a session "
		         "in \"isolation\": \"context\"), and this session has a browser of its "
		         "own: open it from a tenant in \"isolation\": \"context\", or export it "
		         "(glassbox profile export) and import it into another profile",
		         name);
		return -1;
	}
	return 0;
}

int act_context_profile_read(const struct prof_lease *l, json_t **state, char *err, size_t errlen)
{
	char path[4200];
	unsigned char *text = NULL;
	size_t len = 0;
	json_t *cookies = NULL;
	json_error_t jerr;
	int rc = -1;

	*state = NULL;
	if (gb_pathf(path, sizeof(path), "%s/%s", prof_lease_dir(l), STATE_FILE) < 0 ||
	    gb_fs_read_file(path, STATE_MAX_BYTES, &text, &len, NULL, 0) < 0) {
		snprintf(err, errlen, "the storage state of profile %s cannot be read",
		         prof_lease_info(l)->name);
		goto out;
	}
	*state = json_loadb((const char *)text, len, 0, &jerr);
	if (!*state || act_storage_check(*state, &cookies, err, errlen) < 0) {
		/* the seal held, so a bug wrote it: the message names no value */
		snprintf(err, errlen,
		         "the storage state of profile %s is not a storageState: delete the "
		         "profile or import a good one",
		         prof_lease_info(l)->name);
		json_decref(*state);
		*state = NULL;
		goto out;
	}
	rc = 0;
out:
	json_decref(cookies);
	if (text)
		sodium_memzero(text, len);
	free(text);
	return rc;
}

int act_context_profile_write(const struct prof_lease *l, json_t *state, char *err, size_t errlen)
{
	const char *dir = prof_lease_dir(l);
	char path[4200];
	char tmp[4200];
	char *text = json_dumps(state, JSON_COMPACT);
	int rc = -1;

	if (!text) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	if (gb_pathf(path, sizeof(path), "%s/%s", dir, STATE_FILE) < 0 ||
	    gb_fs_write_temp(dir, text, strlen(text), tmp, sizeof(tmp), NULL, 0) < 0 ||
	    gb_fs_publish_replace(tmp, path, dir, NULL, 0) < 0)
		snprintf(err, errlen, "cannot write the storage state into the profile's dir");
	else
		rc = 0;
	sodium_memzero(text, strlen(text));
	free(text);
	return rc;
}

/* Opens a side page of the session's context and readies it for
 * storage_page.c (intercepted, resumed). */
static int side_page_open(struct sess *s, struct act_storage_page *sp, char *err, size_t errlen)
{
	char tid[64], sid[64];

	if (sess_host_open_side_page(s, STEP_TIMEOUT_MS, tid, sid, err, errlen) < 0)
		return -1;
	if (act_storage_page_start(sp, sess_cdp(s), sid, sess_host_context_id(s), 1, err, errlen) <
	    0) {
		act_storage_page_stop(sp);
		sess_host_close_side_page(s);
		return -1;
	}
	return 0;
}

static void side_page_close(struct sess *s, struct act_storage_page *sp)
{
	act_storage_page_stop(sp);
	sess_host_close_side_page(s);
}

int act_context_profile_load(void *user, struct sess *s, char *err, size_t errlen)
{
	struct act_session *as = user;
	struct act_storage_page sp;
	json_t *state = NULL;
	char why[512] = "";
	int rc = -1;

	memset(&sp, 0, sizeof(sp));
	if (!as->profile || act_context_profile_kind(as->profile) != ACT_PROFILE_STORAGE_STATE)
		return 0; /* a new profile: the context starts empty */
	if (act_context_profile_read(as->profile, &state, why, sizeof(why)) < 0)
		goto out;
	if (side_page_open(s, &sp, why, sizeof(why)) < 0)
		goto out;
	rc = act_storage_write(&sp, state, NULL, why, sizeof(why));
	side_page_close(s, &sp);
out:
	if (rc < 0)
		snprintf(err, errlen, "cannot load profile %s into the session's context: %s",
		         prof_lease_info(as->profile)->name, why);
	json_decref(state);
	return rc;
}

int act_context_profile_save(struct act_session *as, char *err, size_t errlen)
{
	struct act_storage_page sp;
	json_t *known = NULL;
	json_t *origins = json_array();
	json_t *state = NULL;
	json_t *o;
	const char *origin;
	json_t *v;
	size_t i;
	int rc = -1;

	memset(&sp, 0, sizeof(sp));
	/* the origins kept before and those visited since */
	if (act_context_profile_kind(as->profile) == ACT_PROFILE_STORAGE_STATE &&
	    act_context_profile_read(as->profile, &known, err, errlen) < 0)
		goto out;
	json_array_foreach(json_object_get(known, "origins"), i, o)
	    json_array_append(origins, json_object_get(o, "origin"));
	json_object_foreach(as->profile_origins, origin, v)
	    json_array_append_new(origins, json_string(origin));
	if (side_page_open(as->sess, &sp, err, errlen) < 0)
		goto out;
	rc = act_storage_read(&sp, origins, &state, err, errlen);
	side_page_close(as->sess, &sp);
	if (rc == 0)
		rc = act_context_profile_write(as->profile, state, err, errlen);
out:
	json_decref(state);
	json_decref(known);
	json_decref(origins);
	return rc;
}

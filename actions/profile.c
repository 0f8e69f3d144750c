/*
 * profile.c - a session's browser profile (profiles/profiles.h) and the
 * browser_session tool: open a profile of the caller's tenant, close it
 * (sealing the state as a new version, or discarding it), status, list.
 *
 * Design: the lease lives on the session (as->profile, worker thread
 * only; act_session_new() may open it before the worker starts). The
 * browser is launched with the lease's dir as user-data-dir. Closing
 * follows one order: Chromium is closed first (so its files are flushed
 * and still), then, only when the close was asked for and the browser
 * was alive until then, the dir is sealed as the next version, then the
 * clear copy is wiped. A browser that crashed, a session that ended
 * without a close, a read-only copy: nothing is sealed and the last good
 * version stays; the reason is kept in as->profile_closed and reported.
 *
 * Session cookies (no expiry) are not written to disk by Chromium; on a
 * sealing close they are read over CDP into glassbox-session-cookies.json
 * inside the dir (so they are sealed with the rest) and set again when a
 * browser starts on the profile. The origins the session's pages visited
 * go into glassbox-origins.json, for storageState export.
 *
 * In isolation "context" the profile is the context's storage state
 * instead (context_profile.c): loaded into the context when the session
 * joins the shared browser, read back from it before the browser is
 * closed, then sealed the same way.
 *
 * Every lookup is by the session's own tenant: no argument names a
 * tenant, so no call can reach another tenant's profiles.
 */
#include "actions/actions-private.h"

#include "cdp/cdp.h"
#include "common/fs.h"
#include "common/log.h"
#include "evidence/audit.h"
#include "profiles/profiles.h"
#include "sessions/sessions.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SESSION_COOKIES_FILE "glassbox-session-cookies.json"
#define ORIGINS_FILE "glassbox-origins.json"
#define SIDE_FILE_MAX_BYTES (8u * 1024u * 1024u)

void act_profile_storage_config(const struct act_session *as, struct act_config *cfg)
{
	cfg->data_dir = as->data_dir;
	cfg->tenant = as->tenant;
	cfg->chromium_path = as->chromium_path;
	cfg->headless = 1;
}

const char *act_profile_error_code(int rc)
{
	switch (-rc) {
	case PROF_EBUSY:
		return "profile_busy";
	case PROF_ENOTFOUND:
		return "profile_not_found";
	case PROF_EREVOKED:
		return "profile_revoked";
	case PROF_EEXPIRED:
		return "profile_expired";
	case PROF_EBADMSG:
		return "profile_damaged";
	case PROF_EINVAL:
		return "bad_arguments";
	case PROF_EEXIST:
		return "profile_exists";
	default:
		return "profile_error";
	}
}

json_t *act_profile_lease_json(const struct prof_lease *l)
{
	const struct prof_info *p = prof_lease_info(l);

	return json_pack("{s:s, s:s, s:I, s:b}", "name", p->name, "user", p->user, "version",
	                 (json_int_t)p->version, "readonly", prof_lease_readonly(l));
}

int act_profile_open(struct act_session *as, const char *name, const char *user, int readonly,
                     int create, char *err, size_t errlen)
{
	struct prof_open_opts o = { 0 };
	char holder[64];
	int rc;

	snprintf(holder, sizeof(holder), "session %s", as->id);
	o.tenant = as->tenant;
	o.user = user && user[0] ? user : "default";
	o.name = name;
	o.readonly = readonly;
	o.create = create;
	o.holder = holder;
	rc = prof_lease_open(as->data_dir, &o, &as->profile, err, errlen);
	if (rc < 0)
		return rc;
	if (act_context_profile_check(as, as->profile, err, errlen) < 0) {
		prof_lease_close(as->profile);
		as->profile = NULL;
		return -PROF_EINVAL;
	}
	json_decref(as->profile_origins);
	as->profile_origins = json_object();
	act_keeper_record(as->keeper, EVID_AUDIT_PROFILE_OPENED, NULL, NULL,
	                  json_pack("{s:o, s:s}", "profile", act_profile_lease_json(as->profile),
	                            "agent_session", as->id),
	                  0);
	return 0;
}

/* Reads a JSON side file of the profile dir (NULL when absent or bad). */
static json_t *read_side_file(const char *dir, const char *name)
{
	char path[4200];
	unsigned char *text = NULL;
	size_t len = 0;
	json_t *doc = NULL;

	if (gb_pathf(path, sizeof(path), "%s/%s", dir, name) == 0 &&
	    gb_fs_read_file(path, SIDE_FILE_MAX_BYTES, &text, &len, NULL, 0) == 0)
		doc = json_loadb((const char *)text, len, 0, NULL);
	free(text);
	return doc;
}

/* Writes doc (borrowed) as a side file of the profile dir. */
static int write_side_file(const char *dir, const char *name, json_t *doc)
{
	char path[4200];
	char tmp[4200];
	char *text = json_dumps(doc, JSON_COMPACT);
	int rc = -1;

	if (text && gb_pathf(path, sizeof(path), "%s/%s", dir, name) == 0 &&
	    gb_fs_write_temp(dir, text, strlen(text), tmp, sizeof(tmp), NULL, 0) == 0)
		rc = gb_fs_publish_replace(tmp, path, dir, NULL, 0);
	free(text);
	return rc;
}

void act_profile_restore_session_cookies(struct cdp_conn *cdp, const char *dir)
{
	json_t *cookies = read_side_file(dir, SESSION_COOKIES_FILE);
	struct cdp_error cerr;

	if (json_is_array(cookies) && json_array_size(cookies) > 0 &&
	    cdp_call(cdp, NULL, "Storage.setCookies", json_pack("{s:O}", "cookies", cookies), 10000,
	             NULL, &cerr) < 0)
		GB_LOGW("actions", "the profile's session cookies could not be restored: %s",
		        cerr.message);
	json_decref(cookies);
}

void act_profile_browser_started(struct act_session *as)
{
	if (as->profile && as->sess)
		act_profile_restore_session_cookies(sess_cdp(as->sess),
		                                    prof_lease_dir(as->profile));
}

void act_profile_note_url(struct act_session *as, const char *url)
{
	const char *p;
	char origin[512];
	size_t n;

	if (!as->profile || !url)
		return;
	if (!strncmp(url, "http://", 7))
		p = strchr(url + 7, '/');
	else if (!strncmp(url, "https://", 8))
		p = strchr(url + 8, '/');
	else
		return;
	n = p ? (size_t)(p - url) : strlen(url);
	if (n >= sizeof(origin) || json_object_size(as->profile_origins) >= 1000)
		return;
	memcpy(origin, url, n);
	origin[n] = '\0';
	json_object_set_new(as->profile_origins, origin, json_true());
}

void act_profile_keep_side_state(struct cdp_conn *cdp, const char *dir, json_t *visited)
{
	json_t *res = NULL;
	json_t *keep = json_array();
	json_t *known = read_side_file(dir, ORIGINS_FILE);
	json_t *origins = json_is_array(known) ? json_incref(known) : json_array();
	json_t *c;
	const char *o;
	json_t *v;
	size_t i;
	struct cdp_error cerr;

	if (cdp_call(cdp, NULL, "Storage.getCookies", NULL, 10000, &res, &cerr) == 0) {
		json_array_foreach(json_object_get(res, "cookies"), i,
		                   c) if (json_is_true(json_object_get(c, "session")))
		    json_array_append(keep, c);
		write_side_file(dir, SESSION_COOKIES_FILE, keep);
	}
	json_object_foreach(visited, o, v)
	{
		int seen = 0;

		json_array_foreach(origins, i, c) seen |=
		    !strcmp(gb_or(json_string_value(c), ""), o);
		if (!seen)
			json_array_append_new(origins, json_string(o));
	}
	write_side_file(dir, ORIGINS_FILE, origins);
	json_decref(origins);
	json_decref(known);
	json_decref(keep);
	json_decref(res);
}

json_t *act_profile_known_origins(const char *dir)
{
	json_t *known = read_side_file(dir, ORIGINS_FILE);

	if (json_is_array(known))
		return known;
	json_decref(known);
	return json_array();
}

json_t *act_profile_close(struct act_session *as, int save, const char *why)
{
	const struct prof_info *p;
	json_t *closed;
	char reason[600] = "";
	char err[1024] = "";
	char capture[1024] = "";
	int64_t version = 0;
	int alive;

	if (!as->profile)
		return NULL;
	p = prof_lease_info(as->profile);
	/* no browser: the state is what was unsealed, sealing it is harmless */
	alive = !as->sess || sess_check_alive(as->sess) == 0;
	if (!alive)
		snprintf(reason, sizeof(reason), "the browser crashed (%s)",
		         sess_failure(as->sess));
	if (save && alive && as->sess && !prof_lease_readonly(as->profile) && as->shared) {
		/* isolation "context": the profile is the context's storage state */
		if (act_context_profile_save(as, capture, sizeof(capture)) < 0 && !capture[0])
			snprintf(capture, sizeof(capture), "it could not be read");
	} else if (save && alive && as->sess && !prof_lease_readonly(as->profile)) {
		act_profile_keep_side_state(sess_cdp(as->sess), prof_lease_dir(as->profile),
		                            as->profile_origins);
	}
	/* Chromium first: its files flushed and closed before they are sealed */
	as->profile_closing = 1;
	act_close_browser(as, why);
	as->profile_closing = 0;
	closed = json_pack("{s:s, s:s, s:I, s:b}", "name", p->name, "user", p->user, "version",
	                   (json_int_t)p->version, "saved", 0);
	if (!alive) {
		json_object_set_new(
		    closed, "reason",
		    json_sprintf("%s: the state was not sealed, version %lld is kept", reason,
		                 (long long)p->version));
	} else if (!save) {
		json_object_set_new(closed, "reason", json_string(gb_or(why, "discarded")));
	} else if (prof_lease_readonly(as->profile)) {
		json_object_set_new(closed, "reason",
		                    json_string("a read-only copy is never sealed back"));
	} else if (capture[0]) {
		json_object_set_new(
		    closed, "reason",
		    json_sprintf("the context's storage state was not read (%s): nothing was "
		                 "sealed, version %lld is kept",
		                 capture, (long long)p->version));
		json_object_set_new(closed, "error", json_true());
	} else if (prof_lease_save(as->profile, &version, err, sizeof(err)) < 0) {
		json_object_set_new(closed, "reason", json_string(err));
		json_object_set_new(closed, "error", json_true());
	} else {
		json_object_set_new(closed, "saved", json_true());
		json_object_set_new(closed, "version", json_integer(version));
		json_object_set_new(closed, "size", json_integer(p->size_bytes));
		act_keeper_record(as->keeper, EVID_AUDIT_PROFILE_SEALED, NULL, NULL,
		                  json_pack("{s:s, s:s, s:I, s:I, s:s}", "profile", p->name, "user",
		                            p->user, "version", (json_int_t)version, "size",
		                            (json_int_t)p->size_bytes, "agent_session", as->id),
		                  0);
	}
	if (!json_is_true(json_object_get(closed, "saved")))
		GB_LOGI("actions", "profile %s of user %s closed without sealing: %s", p->name,
		        p->user, gb_or(json_string_value(json_object_get(closed, "reason")), ""));
	prof_lease_close(as->profile);
	as->profile = NULL;
	json_decref(as->profile_closed);
	as->profile_closed = json_deep_copy(closed);
	return closed;
}

void act_profile_describe_close(struct gb_buf *text, json_t *closed)
{
	if (!closed)
		return;
	if (json_is_true(json_object_get(closed, "saved")))
		gb_buf_appendf(text, "Closed the browser and sealed profile %s as version %lld.",
		               gb_or(json_string_value(json_object_get(closed, "name")), ""),
		               (long long)json_integer_value(json_object_get(closed, "version")));
	else
		gb_buf_appendf(text,
		               "Closed profile %s without sealing it (%s); version %lld is kept.",
		               gb_or(json_string_value(json_object_get(closed, "name")), ""),
		               gb_or(json_string_value(json_object_get(closed, "reason")), ""),
		               (long long)json_integer_value(json_object_get(closed, "version")));
}

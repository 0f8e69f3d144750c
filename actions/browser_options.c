/*
 * browser_options.c - what the server's Playwright MCP options change in
 * each browser a session launches: its User-Agent (a launch flag) and the
 * permissions granted to its pages (Browser.grantPermissions once it is
 * ready), and the size of its page's viewport.
 */
#include "actions/actions-private.h"

#include "cdp/cdp.h"
#include "common/log.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Playwright's permission names and Chromium's (CDP PermissionType). */
static const struct {
	const char *playwright;
	const char *cdp;
} permissions[] = {
	{ "geolocation", "geolocation" },
	{ "notifications", "notifications" },
	{ "camera", "videoCapture" },
	{ "microphone", "audioCapture" },
	{ "clipboard-read", "clipboardReadWrite" },
	{ "clipboard-write", "clipboardSanitizedWrite" },
	{ "midi", "midi" },
	{ "midi-sysex", "midiSysex" },
	{ "background-sync", "backgroundSync" },
	{ "accelerometer", "sensors" },
	{ "gyroscope", "sensors" },
	{ "magnetometer", "sensors" },
	{ "ambient-light-sensor", "sensors" },
	{ "payment-handler", "paymentHandler" },
	{ "storage-access", "storageAccess" },
	{ "local-fonts", "localFonts" },
};

static const char *cdp_permission(const char *name, size_t len)
{
	size_t i;

	for (i = 0; i < sizeof(permissions) / sizeof(permissions[0]); i++)
		if (strlen(permissions[i].playwright) == len &&
		    !strncmp(permissions[i].playwright, name, len))
			return permissions[i].cdp;
	return NULL;
}

int act_permission_known(const char *name)
{
	return name && cdp_permission(name, strlen(name)) != NULL;
}

void act_browser_launch_args(struct act_session *as, struct sess_options *opt)
{
	size_t i = 0;

	if (!as->user_agent)
		return;
	for (; opt->extra_args && opt->extra_args[i] && i + 2 < ACT_LAUNCH_ARGS_MAX; i++)
		as->launch_args[i] = opt->extra_args[i];
	snprintf(as->user_agent_flag, sizeof(as->user_agent_flag), "--user-agent=%s",
	         as->user_agent);
	as->launch_args[i++] = as->user_agent_flag;
	as->launch_args[i] = NULL;
	opt->extra_args = as->launch_args;
}

int act_browser_grant(struct act_session *as, char *err, size_t errlen)
{
	json_t *params;
	json_t *list;
	json_t *res = NULL;
	struct cdp_error cerr;
	const char *p;
	int rc = -1;

	if (!as->grant_permissions)
		return 0;
	list = json_array();
	for (p = as->grant_permissions; *p;) {
		size_t len = strcspn(p, ",");
		const char *c = cdp_permission(p, len);

		if (c)
			json_array_append_new(list, json_string(c));
		p += len;
		p += *p == ',';
	}
	params = json_pack("{s:o}", "permissions", list);
	/* a session in a context of its own (adopted from the pool, or on a
	 * shared browser) grants them there, not in the default context */
	if (sess_context_id(as->sess)[0])
		json_object_set_new(params, "browserContextId",
		                    json_string(sess_context_id(as->sess)));
	if (cdp_call(sess_cdp(as->sess), NULL, "Browser.grantPermissions", params, 10000, &res,
	             &cerr) < 0) {
		snprintf(err, errlen, "cannot grant the permissions %s: %s", as->grant_permissions,
		         cerr.message);
		goto out;
	}
	rc = 0;
out:
	json_decref(res);
	return rc;
}

/* See actions-private.h. */
void act_browser_fit_viewport(struct act_session *as)
{
	struct sess_page *page = sess_current_page(as->sess);
	struct cdp_error cerr = { 0 };
	json_t *win = NULL, *res = NULL;
	json_t *id;

	/* a small window whose tabs emulate the viewport stays small */
	if (!page || sess_emulated_viewport(as->sess, NULL, NULL))
		return;
	if (cdp_call(sess_cdp(as->sess), NULL, "Browser.getWindowForTarget",
	             json_pack("{s:s}", "targetId", sess_page_target_id(page)), 10000, &win,
	             &cerr) < 0)
		goto fail;
	id = json_object_get(win, "windowId");
	if (!json_is_integer(id) ||
	    cdp_call(sess_cdp(as->sess), NULL, "Browser.setContentsSize",
	             json_pack("{s:O, s:i, s:i}", "windowId", id, "width", as->viewport_width,
	                       "height", as->viewport_height),
	             10000, &res, &cerr) < 0)
		goto fail;
	goto out;
fail:
	GB_LOGW("actions",
	        "the page's viewport could not be set to %dx%d (%s): it is the window's less "
	        "the browser's own bars",
	        as->viewport_width, as->viewport_height, cerr.message);
out:
	json_decref(win);
	json_decref(res);
}

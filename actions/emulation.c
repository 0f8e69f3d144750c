/*
 * emulation.c - the environment browser_emulate sets for the session's
 * pages (network conditions, CPU throttling, geolocation, User-Agent,
 * viewport), kept in as->emulation and turned into CDP commands here, in
 * one place, for the tool (awaited, on the current tab) and for every
 * target attached later (sent while it is still paused, before its first
 * script: new tabs, popups, out-of-process frames, workers).
 *
 * State ({networkConditions?, cpuThrottlingRate?, geolocation?,
 * userAgent?, viewport?}): a setting absent is not emulated. Worker
 * thread only.
 */
#include "actions/actions-private.h"

#include "cdp/cdp.h"

#include <string.h>

/* Chrome DevTools MCP's network presets (Puppeteer's
 * PredefinedNetworkConditions): bytes per second, milliseconds. */
static const struct act_network_preset presets[] = {
	{ "No emulation", 0, -1, -1, 0 },
	{ "Offline", 1, -1, -1, 0 },
	{ "Slow 3G", 0, 500 * 1000 / 8 * 0.8, 500 * 1000 / 8 * 0.8, 400 * 5 },
	{ "Fast 3G", 0, 1.6 * 1000 * 1000 / 8 * 0.9, 750 * 1000 / 8 * 0.9, 150 * 3.75 },
	{ "Slow 4G", 0, 1.6 * 1000 * 1000 / 8 * 0.9, 750 * 1000 / 8 * 0.9, 150 * 3.75 },
	{ "Fast 4G", 0, 9 * 1000 * 1000 / 8 * 0.9, 1.5 * 1000 * 1000 / 8 * 0.9, 60 * 2.75 },
};
#define N_PRESETS (sizeof(presets) / sizeof(presets[0]))

const char *const act_network_preset_names[] = {
	"No emulation", "Offline", "Slow 3G", "Fast 3G", "Slow 4G", "Fast 4G", NULL,
};

const struct act_network_preset *act_network_preset_find(const char *name)
{
	size_t i;

	for (i = 0; name && i < N_PRESETS; i++)
		if (!strcmp(presets[i].name, name))
			return &presets[i];
	return NULL;
}

/* Appends {method, params (taken)} to cmds. */
static void add(json_t *cmds, const char *method, json_t *params)
{
	json_array_append_new(cmds, json_pack("{s:s, s:o}", "method", method, "params",
	                                      params ? params : json_object()));
}

static void network_commands(json_t *cmds, const json_t *state)
{
	const struct act_network_preset *p =
	    act_network_preset_find(json_string_value(json_object_get(state, "networkConditions")));

	if (!p)
		p = &presets[0];
	add(cmds, "Network.emulateNetworkConditions",
	    json_pack("{s:b, s:f, s:f, s:f}", "offline", p->offline, "latency", p->latency_ms,
	              "downloadThroughput", p->download_bps, "uploadThroughput", p->upload_bps));
}

static void geolocation_commands(json_t *cmds, const json_t *state)
{
	const json_t *g = json_object_get(state, "geolocation");

	if (!g) {
		add(cmds, "Emulation.clearGeolocationOverride", NULL);
		return;
	}
	add(cmds, "Emulation.setGeolocationOverride",
	    json_pack("{s:f, s:f, s:f}", "latitude",
	              json_number_value(json_object_get(g, "latitude")), "longitude",
	              json_number_value(json_object_get(g, "longitude")), "accuracy",
	              json_number_value(json_object_get(g, "accuracy"))));
}

static void viewport_commands(json_t *cmds, const json_t *state, const struct sess *sess)
{
	const json_t *v = json_object_get(state, "viewport");
	int touch = json_is_true(json_object_get(v, "hasTouch"));

	if (!v && sess_emulated_viewport(sess, NULL, NULL))
		/* a tab of a small window: the viewport of the session's size */
		add(cmds, "Emulation.setDeviceMetricsOverride",
		    sess_emulated_viewport_params(sess));
	else if (!v)
		add(cmds, "Emulation.clearDeviceMetricsOverride", NULL);
	else
		/* the screen is the emulated device's too (screen.width) */
		add(cmds, "Emulation.setDeviceMetricsOverride",
		    json_pack("{s:O, s:O, s:O, s:O, s:O, s:b}", "width",
		              json_object_get(v, "width"), "height", json_object_get(v, "height"),
		              "screenWidth", json_object_get(v, "width"), "screenHeight",
		              json_object_get(v, "height"), "deviceScaleFactor",
		              json_object_get(v, "deviceScaleFactor"), "mobile",
		              json_is_true(json_object_get(v, "isMobile"))));
	add(cmds, "Emulation.setTouchEmulationEnabled",
	    touch ? json_pack("{s:b, s:i}", "enabled", 1, "maxTouchPoints", 5)
	          : json_pack("{s:b}", "enabled", 0));
}

json_t *act_emulation_commands(const json_t *state, const char *setting, const char *type,
                               const struct sess *sess)
{
	int page = !strcmp(type, "page");
	int frame = page || !strcmp(type, "iframe");
	int worker = strstr(type, "worker") != NULL;
	json_t *cmds = json_array();
	const char *ua = json_string_value(json_object_get(state, "userAgent"));

#define WANTS(name) (setting ? !strcmp(setting, (name)) : json_object_get(state, (name)) != NULL)
	if ((frame || worker) && WANTS("networkConditions"))
		network_commands(cmds, state);
	if (page && WANTS("cpuThrottlingRate")) {
		double rate = json_number_value(json_object_get(state, "cpuThrottlingRate"));

		add(cmds, "Emulation.setCPUThrottlingRate",
		    json_pack("{s:f}", "rate", rate >= 1 ? rate : 1));
	}
	if (frame && WANTS("geolocation"))
		geolocation_commands(cmds, state);
	if ((frame || worker) && WANTS("userAgent"))
		add(cmds, frame ? "Emulation.setUserAgentOverride" : "Network.setUserAgentOverride",
		    json_pack("{s:s}", "userAgent", ua ? ua : ""));
	if (page && WANTS("viewport"))
		viewport_commands(cmds, state, sess);
#undef WANTS
	return cmds;
}

void act_emulation_setup_target(struct act_session *as, struct sess *sess, const char *session_id,
                                const char *type)
{
	json_t *cmds, *c;
	size_t i;
	uint64_t id;

	if (!as->emulation || !json_object_size(as->emulation))
		return;
	cmds = act_emulation_commands(as->emulation, NULL, type, sess);
	json_array_foreach(cmds, i, c)
	{
		if (cdp_send(sess_cdp(sess), session_id,
		             json_string_value(json_object_get(c, "method")),
		             json_incref(json_object_get(c, "params")), &id) == 0)
			cdp_forget(sess_cdp(sess), id);
	}
	json_decref(cmds);
}

/*
 * emulate.c - browser_emulate (Chrome DevTools MCP's emulate): network
 * conditions, CPU throttling, geolocation, User-Agent and viewport for
 * the session's pages, each re-read from the page after it is applied.
 *
 * Omitted parameters keep what an earlier call set; "No emulation", a
 * rate of 1 or null clears one. The settings are kept in as->emulation
 * and sent to every target attached later (emulation.c), so new tabs,
 * popups and frames get them before their first script; Chromium keeps
 * them across navigations of a tab. Geolocation is not a permission: the
 * page reads the position only where the server grants it
 * (--grant-permissions geolocation), and the call is refused before
 * anything changes where the page could not read it.
 */
#include "actions/actions-private.h"
#include "actions/tools/params.h"

#include "policy/risk.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define UA_MAX 1000

static const char *const settings[] = { "networkConditions", "cpuThrottlingRate", "geolocation",
	                                "userAgent", "viewport" };
#define N_SETTINGS (sizeof(settings) / sizeof(settings[0]))

/* Checks that obj (a member of args called name) has only the members
 * of allowed (NULL-terminated). Returns 0, or -1 with the call failed. */
static int only_members(struct act_ctx *ctx, const char *name, json_t *obj,
                        const char *const *allowed, const char *takes)
{
	const char *key;
	json_t *v;
	size_t i;

	json_object_foreach(obj, key, v)
	{
		for (i = 0; allowed[i] && strcmp(allowed[i], key); i++)
			;
		if (!allowed[i])
			return act_fail(ctx, "bad_arguments",
			                "unknown member '%.60s' in '%s': it takes %s", key, name,
			                takes);
	}
	return 0;
}

/* A number member of obj: *out (dflt when absent and not required).
 * Returns 0, or -1 with the call failed naming what is wrong. */
static int number_member(struct act_ctx *ctx, const char *name, json_t *obj, const char *member,
                         int required, int integer, double lo, double hi, double dflt, double *out)
{
	json_t *v = json_object_get(obj, member);
	double d;

	if (!v) {
		if (required)
			return act_fail(ctx, "bad_arguments", "'%s.%s' is required (%g to %g)",
			                name, member, lo, hi);
		*out = dflt;
		return 0;
	}
	d = json_number_value(v);
	if (!json_is_number(v) || (integer && d != floor(d)) || !(d >= lo && d <= hi))
		return act_fail(ctx, "bad_arguments", "'%s.%s' must be %s from %g to %g", name,
		                member, integer ? "an integer" : "a number", lo, hi);
	*out = d;
	return 0;
}

/* A boolean member of obj (false when absent). */
static int bool_member(struct act_ctx *ctx, const char *name, json_t *obj, const char *member,
                       int *out)
{
	json_t *v = json_object_get(obj, member);

	if (v && !json_is_boolean(v))
		return act_fail(ctx, "bad_arguments", "'%s.%s' must be true or false", name,
		                member);
	*out = json_is_true(v);
	return 0;
}

/* The geolocation argument (an object) as the state keeps it: *out new. */
static int parse_geolocation(struct act_ctx *ctx, json_t *g, json_t **out)
{
	static const char *const members[] = { "latitude", "longitude", "accuracy", NULL };
	double lat = 0, lon = 0, acc = 0;

	if (only_members(ctx, "geolocation", g, members, "latitude, longitude, accuracy") < 0 ||
	    number_member(ctx, "geolocation", g, "latitude", 1, 0, -90, 90, 0, &lat) < 0 ||
	    number_member(ctx, "geolocation", g, "longitude", 1, 0, -180, 180, 0, &lon) < 0 ||
	    number_member(ctx, "geolocation", g, "accuracy", 0, 0, 0, 1e7, 0, &acc) < 0)
		return -1;
	*out = json_pack("{s:f, s:f, s:f}", "latitude", lat, "longitude", lon, "accuracy", acc);
	return 0;
}

/* The viewport argument (an object) as the state keeps it: *out new. */
static int parse_viewport(struct act_ctx *ctx, json_t *v, json_t **out)
{
	static const char *const members[] = { "width",    "height",   "deviceScaleFactor",
		                               "isMobile", "hasTouch", NULL };
	double w = 0, h = 0, dsf = 1;
	int mobile = 0, touch = 0;

	if (only_members(ctx, "viewport", v, members,
	                 "width, height, deviceScaleFactor, isMobile, hasTouch") < 0 ||
	    number_member(ctx, "viewport", v, "width", 1, 1, 100, 10000, 0, &w) < 0 ||
	    number_member(ctx, "viewport", v, "height", 1, 1, 100, 10000, 0, &h) < 0 ||
	    number_member(ctx, "viewport", v, "deviceScaleFactor", 0, 0, 0.5, 10, 1, &dsf) < 0 ||
	    bool_member(ctx, "viewport", v, "isMobile", &mobile) < 0 ||
	    bool_member(ctx, "viewport", v, "hasTouch", &touch) < 0)
		return -1;
	*out =
	    json_pack("{s:I, s:I, s:f, s:b, s:b}", "width", (json_int_t)w, "height", (json_int_t)h,
	              "deviceScaleFactor", dsf, "isMobile", mobile, "hasTouch", touch);
	return 0;
}

/* What the tenant's policy says of the User-Agent: the one it pins, or
 * NULL when the agent may set any. */
static const char *pinned_user_agent(const struct act_ctx *ctx)
{
	const char *ua = policy_tenant_settings(ctx->as->tenant_policy)->user_agent;

	return ua[0] ? ua : NULL;
}

/* The state the call asks for: the session's, with each given setting
 * replaced or (null, "No emulation", rate 1) removed. Every value is
 * checked here, before anything changes. *out new. */
static int wanted_state(struct act_ctx *ctx, json_t **out)
{
	json_t *state = ctx->as->emulation ? json_deep_copy(ctx->as->emulation) : json_object();
	json_t *v, *parsed = NULL;
	const char *ua, *pin;
	size_t given = 0;
	int rc = -1;

	v = json_object_get(ctx->args, "networkConditions");
	if (v) {
		given++;
		if (json_is_null(v) || !strcmp(json_string_value(v), "No emulation"))
			json_object_del(state, "networkConditions");
		else
			json_object_set(state, "networkConditions", v);
	}
	v = json_object_get(ctx->args, "cpuThrottlingRate");
	if (v) {
		given++;
		if (json_is_null(v) || json_number_value(v) == 1)
			json_object_del(state, "cpuThrottlingRate");
		else
			json_object_set_new(state, "cpuThrottlingRate",
			                    json_real(json_number_value(v)));
	}
	v = json_object_get(ctx->args, "geolocation");
	if (v) {
		given++;
		if (json_is_null(v))
			json_object_del(state, "geolocation");
		else if (parse_geolocation(ctx, v, &parsed) < 0)
			goto out;
		else
			json_object_set_new(state, "geolocation", parsed);
	}
	v = json_object_get(ctx->args, "userAgent");
	if (v) {
		given++;
		ua = json_string_value(v);
		pin = pinned_user_agent(ctx);
		if (pin && (!ua || strcmp(ua, pin))) {
			rc = act_fail(
			    ctx, "user_agent_pinned",
			    "the tenant's policy pins the User-Agent (\"user_agent\" in %s): "
			    "it cannot be changed or cleared; leave userAgent out",
			    policy_tenant_source(ctx->as->tenant_policy)[0]
			        ? policy_tenant_source(ctx->as->tenant_policy)
			        : "the policy");
			goto out;
		}
		if (ua && (!*ua || strlen(ua) > UA_MAX || strpbrk(ua, "\r\n\t"))) {
			rc = act_fail(ctx, "bad_arguments",
			              "argument 'userAgent' must be 1 to %d characters on one line "
			              "(null restores the browser's own)",
			              UA_MAX);
			goto out;
		}
		if (ua)
			json_object_set(state, "userAgent", v);
		else
			json_object_del(state, "userAgent");
	}
	v = json_object_get(ctx->args, "viewport");
	if (v) {
		given++;
		if (json_is_null(v))
			json_object_del(state, "viewport");
		else if (parse_viewport(ctx, v, &parsed) < 0)
			goto out;
		else
			json_object_set_new(state, "viewport", parsed);
	}
	if (!given) {
		rc = act_fail(ctx, "bad_arguments",
		              "specify at least one of networkConditions, cpuThrottlingRate, "
		              "geolocation, userAgent or viewport (null or \"No emulation\" clears "
		              "one)");
		goto out;
	}
	*out = json_incref(state);
	rc = 0;
out:
	json_decref(state);
	return rc;
}

/* The gate hook: every value checked, and a geolocation the page could
 * not read refused, before the risk rules and before anything changes. */
static int emulate_gate(struct act_ctx *ctx)
{
	json_t *state = NULL, *seen = NULL, *g = json_object_get(ctx->args, "geolocation");
	const char *perm;
	int rc;

	rc = wanted_state(ctx, &state);
	if (rc < 0 || !json_is_object(g))
		goto out;
	rc =
	    act_page_eval(ctx,
	                  "(async () => ({ secure: isSecureContext, state: navigator.permissions ? "
	                  "(await navigator.permissions.query({ name: 'geolocation' })).state : "
	                  "'unavailable' }))()",
	                  &seen, "reading the page's geolocation permission");
	if (rc < 0)
		goto out;
	perm = json_string_value(json_object_get(seen, "state"));
	if (!json_is_true(json_object_get(seen, "secure"))) {
		rc =
		    act_fail(ctx, "geolocation_unavailable",
		             "this page is not a secure context (https or localhost), so it cannot "
		             "read a geolocation: open such a page first; nothing was changed");
		goto out;
	}
	if (!perm || strcmp(perm, "granted")) {
		rc = act_fail(ctx, "geolocation_not_permitted",
		              "the page's geolocation permission is \"%s\", so it cannot read the "
		              "position: the server grants it with --grant-permissions geolocation "
		              "(browser_emulate never grants permissions); nothing was changed",
		              perm ? perm : "unknown");
		goto out;
	}
out:
	json_decref(state);
	json_decref(seen);
	return rc;
}

/* Sends the commands of setting (its value in state) to the tab of CDP
 * session psid, awaiting each. */
static int apply_setting(struct act_ctx *ctx, const char *psid, json_t *state, const char *setting)
{
	json_t *cmds = act_emulation_commands(state, setting, "page", ctx->sess);
	json_t *c, *res = NULL;
	char doing[96];
	size_t i;
	int rc = 0;

	snprintf(doing, sizeof(doing), "emulating %s", setting);
	json_array_foreach(cmds, i, c)
	{
		rc = act_cdp(ctx, psid, json_string_value(json_object_get(c, "method")),
		             json_incref(json_object_get(c, "params")), &res, doing);
		json_decref(res);
		res = NULL;
		if (rc < 0)
			break;
	}
	json_decref(cmds);
	return rc;
}

/* Sends every setting the call gives to the tab of psid. */
static int apply_to_tab(struct act_ctx *ctx, const char *psid, json_t *state)
{
	size_t i;
	int rc = 0;

	for (i = 0; i < N_SETTINGS && rc == 0; i++)
		if (json_object_get(ctx->args, settings[i]))
			rc = apply_setting(ctx, psid, state, settings[i]);
	return rc;
}

#define READ_JS                                                                                    \
	"(async (geo) => { const c = navigator.connection || {}; const o = { userAgent: "          \
	"navigator.userAgent, onLine: navigator.onLine, rtt: c.rtt ?? null, downlink: c.downlink " \
	"?? null, innerWidth, innerHeight, screenWidth: screen.width, screenHeight: "              \
	"screen.height, devicePixelRatio, maxTouchPoints: navigator.maxTouchPoints }; if (geo) "   \
	"o.geolocation = await new Promise((r) => navigator.geolocation.getCurrentPosition((p) "   \
	"=> r({ latitude: p.coords.latitude, longitude: p.coords.longitude, accuracy: "            \
	"p.coords.accuracy }), (e) => r({ error: e.message || String(e.code) }), { maximumAge: "   \
	"0, timeout: 10000 })); return o; })(%s)"

static int near(json_t *a, json_t *b)
{
	return json_is_number(a) && json_is_number(b) &&
	       fabs(json_number_value(a) - json_number_value(b)) < 1e-6;
}

/* One verdict for setting, read back in seen (what the page reads, borrowed). */
static int check_setting(struct act_ctx *ctx, json_t *state, const char *setting, json_t *seen)
{
	json_t *want = json_object_get(state, setting);
	json_t *observed = NULL;
	int ok = 0;

	if (!strcmp(setting, "networkConditions")) {
		const char *name = want ? json_string_value(want) : "No emulation";
		const struct act_network_preset *p = act_network_preset_find(name);

		observed = json_pack("{s:O, s:O, s:O}", "onLine", json_object_get(seen, "onLine"),
		                     "rtt", json_object_get(seen, "rtt"), "downlink",
		                     json_object_get(seen, "downlink"));
		if (!want) {
			/* the page's own state comes back (offline where the
			 * machine has no network): Chromium's acceptance */
			want = json_pack("{s:s}", "preset", name);
			ok = 1;
		} else if (p && p->offline) {
			want = json_pack("{s:s, s:b}", "preset", name, "onLine", 0);
			ok = json_is_false(json_object_get(seen, "onLine"));
		} else {
			/* navigator.connection rounds and blurs what it reports:
			 * within a factor of 2 of the preset */
			double mbps = p ? p->download_bps * 8 / 1e6 : 0;
			double rtt = json_number_value(json_object_get(seen, "rtt"));
			double down = json_number_value(json_object_get(seen, "downlink"));

			want = json_pack("{s:s, s:b, s:f, s:f}", "preset", name, "onLine", 1, "rtt",
			                 p ? p->latency_ms : 0, "downlink", mbps);
			ok = p && json_is_true(json_object_get(seen, "onLine")) &&
			     rtt >= p->latency_ms / 2 && rtt <= p->latency_ms * 2 &&
			     down >= mbps / 2 && down <= mbps * 2;
		}
	} else if (!strcmp(setting, "cpuThrottlingRate")) {
		/* no page API reads it: Chromium's acceptance is what there is */
		observed = json_string("accepted by the browser (a page cannot read the rate)");
		want = json_real(want ? json_number_value(want) : 1);
		ok = 1;
	} else if (!strcmp(setting, "geolocation")) {
		json_t *g = json_object_get(seen, "geolocation");

		if (want) {
			observed = json_incref(g);
			ok =
			    near(json_object_get(g, "latitude"),
			         json_object_get(want, "latitude")) &&
			    near(json_object_get(g, "longitude"),
			         json_object_get(want, "longitude")) &&
			    near(json_object_get(g, "accuracy"), json_object_get(want, "accuracy"));
			json_incref(want);
		} else {
			observed = json_string("override cleared (accepted by the browser)");
			ok = 1;
		}
	} else if (!strcmp(setting, "userAgent")) {
		const char *ua = json_string_value(json_object_get(seen, "userAgent"));

		observed = json_string(ua ? ua : "");
		ok = ua && (want ? !strcmp(ua, json_string_value(want)) : 1);
		if (!want)
			want = json_string("the browser's own");
		else
			json_incref(want);
	} else {
		json_int_t iw = json_integer_value(json_object_get(seen, "innerWidth"));
		json_int_t ih = json_integer_value(json_object_get(seen, "innerHeight"));
		json_int_t sw = json_integer_value(json_object_get(seen, "screenWidth"));
		json_int_t sh = json_integer_value(json_object_get(seen, "screenHeight"));
		json_int_t touch = json_integer_value(json_object_get(seen, "maxTouchPoints"));
		double dpr = json_number_value(json_object_get(seen, "devicePixelRatio"));

		observed = json_pack("{s:I, s:I, s:I, s:I, s:f, s:I}", "innerWidth", iw,
		                     "innerHeight", ih, "screenWidth", sw, "screenHeight", sh,
		                     "devicePixelRatio", dpr, "maxTouchPoints", touch);
		if (want) {
			json_int_t w = json_integer_value(json_object_get(want, "width"));
			json_int_t h = json_integer_value(json_object_get(want, "height"));
			int mobile = json_is_true(json_object_get(want, "isMobile"));

			/* a mobile layout viewport follows the page's <meta viewport>;
			 * the screen is the device's */
			ok = sw == w && sh == h && (mobile || (iw == w && ih == h)) &&
			     fabs(dpr - json_number_value(
			                    json_object_get(want, "deviceScaleFactor"))) < 1e-6 &&
			     (touch > 0) == json_is_true(json_object_get(want, "hasTouch"));
			json_incref(want);
		} else {
			/* the window's own size comes back, whatever it is */
			ok = dpr == 1 && touch == 0;
			want = json_pack("{s:s, s:i, s:i}", "size", "the browser window's",
			                 "devicePixelRatio", 1, "maxTouchPoints", 0);
		}
	}
	return act_add_verdict(ctx, setting, want, observed, ok);
}

/* "Slow 3G (download 50000 B/s, ...)", "CPU 4x slower", ...: one line each. */
static void describe(struct act_ctx *ctx, json_t *state, const char *setting)
{
	json_t *v = json_object_get(state, setting);

	if (!strcmp(setting, "networkConditions")) {
		const struct act_network_preset *p =
		    act_network_preset_find(v ? json_string_value(v) : "No emulation");

		if (!v || p->offline || p->latency_ms <= 0)
			gb_buf_appendf(&ctx->result, "\n- Network: %s", p->name);
		else
			gb_buf_appendf(
			    &ctx->result,
			    "\n- Network: %s (download %.0f B/s, upload %.0f B/s, latency "
			    "%g ms)",
			    p->name, p->download_bps, p->upload_bps, p->latency_ms);
	} else if (!strcmp(setting, "cpuThrottlingRate")) {
		if (v)
			gb_buf_appendf(&ctx->result, "\n- CPU: %gx slowdown", json_number_value(v));
		else
			gb_buf_appendf(&ctx->result, "\n- CPU: no throttling");
	} else if (!strcmp(setting, "geolocation")) {
		if (v)
			gb_buf_appendf(&ctx->result, "\n- Geolocation: %g, %g (accuracy %g m)",
			               json_number_value(json_object_get(v, "latitude")),
			               json_number_value(json_object_get(v, "longitude")),
			               json_number_value(json_object_get(v, "accuracy")));
		else
			gb_buf_appendf(&ctx->result, "\n- Geolocation: no override");
	} else if (!strcmp(setting, "userAgent")) {
		if (v)
			gb_buf_appendf(&ctx->result, "\n- User-Agent: %s", json_string_value(v));
		else
			gb_buf_appendf(&ctx->result, "\n- User-Agent: the browser's own");
	} else if (v) {
		gb_buf_appendf(&ctx->result, "\n- Viewport: %lldx%lld, device scale factor %g%s%s",
		               (long long)json_integer_value(json_object_get(v, "width")),
		               (long long)json_integer_value(json_object_get(v, "height")),
		               json_number_value(json_object_get(v, "deviceScaleFactor")),
		               json_is_true(json_object_get(v, "isMobile")) ? ", mobile" : "",
		               json_is_true(json_object_get(v, "hasTouch")) ? ", touch" : "");
	} else {
		gb_buf_appendf(&ctx->result, "\n- Viewport: the browser window's");
	}
}

static int emulate_run(struct act_ctx *ctx)
{
	json_t *state = NULL, *seen = NULL;
	char js[sizeof(READ_JS) + 8];
	size_t i, t;
	int all = 1, rc;

	rc = wanted_state(ctx, &state);
	if (rc < 0)
		goto out;
	/* every open tab (the current one first); those opened later get
	 * them from the target hook */
	rc = apply_to_tab(ctx, ctx->psid, state);
	for (t = 0; rc == 0 && t < sess_page_count(ctx->sess); t++) {
		struct sess_page *page = sess_page_at(ctx->sess, t);

		if (page && !sess_page_crashed(page) &&
		    strcmp(sess_page_session_id(page), ctx->psid) != 0)
			rc = apply_to_tab(ctx, sess_page_session_id(page), state);
	}
	/* what was sent is in force for the targets attached from now on,
	 * even when a later command failed */
	json_decref(ctx->as->emulation);
	ctx->as->emulation = json_incref(state);
	json_object_set(ctx->out, "emulation", state);
	if (rc < 0)
		goto out;
	snprintf(js, sizeof(js), READ_JS,
	         json_is_object(json_object_get(ctx->args, "geolocation")) ? "true" : "false");
	rc = act_page_eval(ctx, js, &seen, "re-reading the emulated settings");
	if (rc < 0)
		goto out;
	gb_buf_appendf(&ctx->result, "Emulating:");
	for (i = 0; i < N_SETTINGS; i++) {
		if (!json_object_get(ctx->args, settings[i]))
			continue;
		all = check_setting(ctx, state, settings[i], seen) && all;
		describe(ctx, state, settings[i]);
	}
	if (!all) {
		rc = act_fail(ctx, "emulation_not_applied",
		              "the page does not see every setting as asked (see "
		              "structuredContent.verdicts): the browser did not apply them");
		goto out;
	}
	gb_buf_appendf(&ctx->text,
	               "Each setting re-read from the page (structuredContent.verdicts); "
	               "new tabs get the same settings");
out:
	json_decref(state);
	json_decref(seen);
	return rc;
}

static const struct act_param params[] = {
	{ .name = "networkConditions",
	  .type = ACT_T_STRING,
	  .description = "Throttles the network (Chrome DevTools MCP's presets: Slow 3G 50000 B/s "
	                 "down and up, 2000 ms latency; Fast 3G and Slow 4G 180000 down, 84375 "
	                 "up, 562.5 ms; Fast 4G 1012500 down, 168750 up, 165 ms) or takes the "
	                 "page offline. \"No emulation\" or null clears it. The egress policy "
	                 "still applies to every request",
	  .enum_values = act_network_preset_names,
	  .nullable = 1 },
	{ .name = "cpuThrottlingRate",
	  .type = ACT_T_NUMBER,
	  .description = "Slows the page's CPU by this factor (1 = no throttling, up to 20; null "
	                 "clears it)",
	  .minimum = 1,
	  .maximum = 20,
	  .has_range = 1,
	  .nullable = 1 },
	{ .name = "geolocation",
	  .type = ACT_T_OBJECT,
	  .description = "The position the page reads: {latitude: -90..90, longitude: "
	                 "-180..180, accuracy?: metres, default 0}; null clears it. The page "
	                 "needs the geolocation permission (the server's --grant-permissions "
	                 "geolocation) and a secure context; without them the call is refused",
	  .nullable = 1 },
	{ .name = "userAgent",
	  .type = ACT_T_STRING,
	  .description = "The User-Agent the page and its requests show (null restores the "
	                 "browser's own); refused when the tenant's policy pins one",
	  .nullable = 1 },
	{ .name = "viewport",
	  .type = ACT_T_OBJECT,
	  .description = "Device metrics: {width: 100..10000, height: 100..10000, "
	                 "deviceScaleFactor?: 0.5..10 (default 1), isMobile?: bool, hasTouch?: "
	                 "bool}; null returns to the browser window's size without touch",
	  .nullable = 1 },
	P_EXPECT,
	P_OPERATION_ID,
};

static const struct act_tool_impl impl = {
	.gate = emulate_gate,
	.run = emulate_run,
};

const struct act_def act_tool_emulate = {
	.name = "browser_emulate",
	.title = "Emulate network, CPU, geolocation, User-Agent, viewport",
	.description =
	    "Emulate the environment of the session's pages: network conditions (presets or "
	    "offline), CPU throttling, geolocation, User-Agent and viewport (size, scale, mobile, "
	    "touch). Omitted parameters are left unchanged; null (or \"No emulation\") clears a "
	    "setting. The settings stay in force across navigations and apply to tabs opened "
	    "later. Each one given is re-read from the page (structuredContent.verdicts); one the "
	    "page does not see fails the call. Records evidence.",
	PARAMS(params),
	.effect = ACT_EFFECT_PAGE,
	.policy = ACT_POLICY(POLICY_ACT_OTHER),
	.checks_expect = 1,
	.impl = &impl,
};

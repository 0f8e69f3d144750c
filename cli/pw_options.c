/*
 * pw_options.c - the server options Playwright MCP takes, for `glassbox
 * mcp`: flags (--snapshot-mode full, --snapshot-mode=full) and a --config
 * file with Playwright MCP's JSON keys.
 *
 * DESIGN
 *
 * An agent's MCP client configuration written for Playwright MCP passes
 * its flags to glassbox unchanged. Each one is honoured with the same
 * meaning, or refused at start with the reason (never silently ignored):
 * a server that runs in a way its user did not ask for is worse than one
 * that does not start. The same holds for each key of a Playwright MCP
 * config file. A --config file is Playwright MCP's when its top-level
 * keys are Playwright MCP's; otherwise it is glassbox's tenant policy.
 */
#include "cli/commands.h"
#include "common/fs.h"
#include "policy/egress.h"
#include "sessions/sessions.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* The flags and config keys glassbox refuses, with why. */
static const struct {
	const char *name;
	const char *why;
} refused[] = {
	{ "allow-unrestricted-file-access",
	  "tools never open file: URLs (a page could read this machine's files)" },
	{ "allowUnrestrictedFileAccess",
	  "tools never open file: URLs (a page could read this machine's files)" },
	{ "cdp-endpoint", "glassbox launches and isolates its own browser; it does not attach "
	                  "to one it did not start" },
	{ "extension", "glassbox launches and isolates its own browser; it does not attach to "
	               "a browser extension" },
	{ "user-data-dir", "a browser's state lives in sealed profiles (glassbox profile, "
	                   "browser_session); an unsealed directory is not opened" },
	{ "storage-state", "import a storage state into a profile with `glassbox profile "
	                   "import-state`" },
	{ "ignore-https-errors", "certificate errors are never ignored" },
	{ "proxy-server", "the browser reaches the network only through glassbox's egress "
	                  "proxy; name upstream rules in the policy (docs/egress.md)" },
	{ "allowed-origins", "egress is set in the tenant's policy (docs/egress.md, "
	                     "\"egress\"), not on the command line" },
	{ "blocked-origins", "egress is set in the tenant's policy (docs/egress.md, "
	                     "\"egress\"), not on the command line" },
	{ "port", "`glassbox mcp` serves stdio; use `glassbox serve` for HTTP" },
	{ "host", "`glassbox mcp` serves stdio; use `glassbox serve` for HTTP" },
	{ "device", "device emulation is not offered; use --viewport-size and --user-agent" },
	{ "save-trace", "every action is kept as signed evidence instead (docs/evidence.md)" },
	{ "save-session", "every action is kept as signed evidence instead (docs/evidence.md)" },
	{ "save-video", "every action is kept as signed evidence instead (docs/evidence.md)" },
	{ "init-script", "scripts are not injected into every page" },
};

static const char *refusal(const char *name)
{
	size_t i;

	for (i = 0; i < sizeof(refused) / sizeof(refused[0]); i++)
		if (!strcmp(refused[i].name, name))
			return refused[i].why;
	return NULL;
}

void cli_pw_init(struct cli_pw *o)
{
	memset(o, 0, sizeof(*o));
	o->snapshot_mode = -1;
	o->headless = -1;
	o->code_lang = -1;
}

/* A positive integer of milliseconds; -1 when not one. */
static int parse_ms(const char *v)
{
	char *end = NULL;
	long n;

	errno = 0;
	n = v ? strtol(v, &end, 10) : 0;
	if (!v || !*v || *end || errno || n <= 0 || n > 3600000)
		return -1;
	return (int)n;
}

/* "1280x720" or "1280,720" into w, h. Returns 0 or -1. */
static int parse_size(const char *v, int *w, int *h)
{
	char *end = NULL;
	long a, b;

	a = strtol(v, &end, 10);
	if (end == v || (*end != 'x' && *end != ','))
		return -1;
	v = end + 1;
	b = strtol(v, &end, 10);
	if (end == v || *end || a < 100 || a > 7680 || b < 100 || b > 4320)
		return -1;
	*w = (int)a;
	*h = (int)b;
	return 0;
}

/* With --vision, the "vision" group in o->caps too, whatever --caps or
 * "capabilities" list (their length leaves room for it). */
static void add_vision(struct cli_pw *o)
{
	size_t len = strlen(o->caps);

	if (o->vision)
		snprintf(o->caps + len, sizeof(o->caps) - len, "%svision", len ? "," : "");
}

/* Applies one option (name without dashes, value or NULL). Returns 0, or
 * -1 after printing why. */
static int apply(const char *command, const char *name, const char *v, struct cli_pw *o)
{
	const char *why = refusal(name);
	int n;

	if (why) {
		fprintf(stderr, "glassbox %s: --%s is not honoured: %s\n", command, name, why);
		return -1;
	}
	if (!strcmp(name, "snapshot-mode")) {
		n = v ? act_snapshot_mode_parse(!strcmp(v, "incremental") ? "changed" : v) : -1;
		if (n < 0)
			goto bad_value;
		o->snapshot_mode = n;
	} else if (!strcmp(name, "test-id-attribute")) {
		if (!v || !*v || strlen(v) >= sizeof(o->test_id_attribute) ||
		    strspn(v,
		           "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_:") !=
		        strlen(v))
			goto bad_value;
		snprintf(o->test_id_attribute, sizeof(o->test_id_attribute), "%s", v);
	} else if (!strcmp(name, "output-dir")) {
		char abs[PATH_MAX + 8];
		char cwd[PATH_MAX];
		char mkerr[256] = "";

		/* made when missing, as Playwright MCP makes it */
		if (v && *v && v[0] == '/')
			snprintf(abs, sizeof(abs), "%s", v);
		else if (v && *v && getcwd(cwd, sizeof(cwd)))
			snprintf(abs, sizeof(abs), "%s/%s", cwd, v);
		else
			abs[0] = '\0';
		if (abs[0])
			gb_fs_mkdirs_abs(abs, mkerr, sizeof(mkerr));
		if (!v || !*v || !realpath(v, o->output_dir)) {
			fprintf(stderr,
			        "glassbox %s: --output-dir %s: %s: give an existing directory\n",
			        command, v ? v : "", v && *v ? strerror(errno) : "missing");
			return -1;
		}
	} else if (!strcmp(name, "timeout-action")) {
		if ((o->action_timeout_ms = parse_ms(v)) < 0)
			goto bad_value;
	} else if (!strcmp(name, "timeout-navigation")) {
		if ((o->navigation_timeout_ms = parse_ms(v)) < 0)
			goto bad_value;
	} else if (!strcmp(name, "viewport-size")) {
		if (!v || parse_size(v, &o->viewport_width, &o->viewport_height) < 0)
			goto bad_value;
	} else if (!strcmp(name, "user-agent")) {
		if (!v || !*v || strlen(v) >= sizeof(o->user_agent) || strpbrk(v, "\r\n"))
			goto bad_value;
		snprintf(o->user_agent, sizeof(o->user_agent), "%s", v);
	} else if (!strcmp(name, "grant-permissions")) {
		if (!v || !*v || strlen(v) >= sizeof(o->grant_permissions))
			goto bad_value;
		snprintf(o->grant_permissions, sizeof(o->grant_permissions), "%s", v);
	} else if (!strcmp(name, "caps")) {
		if (!v || strlen(v) >= sizeof(o->caps) - sizeof(",vision"))
			goto bad_value;
		snprintf(o->caps, sizeof(o->caps), "%s", v);
		add_vision(o);
	} else if (!strcmp(name, "browser")) {
		/* glassbox drives Chromium; Chrome and Chromium mean the same here */
		if (!v || (strcmp(v, "chrome") != 0 && strcmp(v, "chromium") != 0 &&
		           strcmp(v, "chrome-for-testing") != 0)) {
			fprintf(stderr,
			        "glassbox %s: --browser %s is not honoured: glassbox drives "
			        "Chromium only (chrome or chromium)\n",
			        command, v ? v : "");
			return -1;
		}
	} else if (!strcmp(name, "codegen")) {
		if (v && !strcmp(v, "none")) {
			o->no_code = 1;
		} else {
			if ((n = act_code_lang_parse(v)) < 0)
				goto bad_value;
			o->code_lang = n;
			o->no_code = 0;
		}
	} else if (!strcmp(name, "console-level")) {
		if (!v || act_console_level_parse(v) < 0)
			goto bad_value;
		snprintf(o->console_level, sizeof(o->console_level), "%s", v);
	} else if (!strcmp(name, "snapshot-boxes")) {
		o->snapshot_boxes = 1;
	} else if (!strcmp(name, "image-responses")) {
		if (!v || (strcmp(v, "allow") != 0 && strcmp(v, "omit") != 0))
			goto bad_value;
		o->omit_images = !strcmp(v, "omit");
	} else if (!strcmp(name, "no-structured-content")) {
		o->no_structured_content = 1;
	} else if (!strcmp(name, "vision")) {
		/* Playwright MCP's older name for --caps vision, with --caps or without */
		o->vision = 1;
		add_vision(o);
	} else if (!strcmp(name, "secrets")) {
		/* read by cmd_mcp (secret_env_load): its refusals name the file */
		if (!v || !*v || strlen(v) >= sizeof(o->secrets_path))
			goto bad_value;
		snprintf(o->secrets_path, sizeof(o->secrets_path), "%s", v);
	} else if (!strcmp(name, "no-sandbox")) {
		/* Chromium's own sandbox, as Playwright MCP means it; glassbox's
		 * boundary around the browser stays (cli_pw_sandbox_note) */
		o->chromium_sandbox_off = 1;
	} else if (!strcmp(name, "isolated")) {
		o->isolated = 1; /* always so: each session has a fresh, private browser */
	} else if (!strcmp(name, "headless")) {
		o->headless = 1;
	} else if (!strcmp(name, "headed")) {
		o->headless = 0;
	} else {
		return 1; /* not one of Playwright MCP's */
	}
	return 0;
bad_value:
	fprintf(stderr, "glassbox %s: --%s %s: not a valid value (glassbox %s --help says which)\n",
	        command, name, v ? v : "(missing)", command);
	return -1;
}

/* 1 for the flags that take no value. */
static int is_switch(const char *name)
{
	return !strcmp(name, "isolated") || !strcmp(name, "headless") ||
	       !strcmp(name, "no-structured-content") || !strcmp(name, "vision") ||
	       !strcmp(name, "snapshot-boxes") || !strcmp(name, "headed") ||
	       !strcmp(name, "allow-unrestricted-file-access") ||
	       !strcmp(name, "ignore-https-errors") || !strcmp(name, "no-sandbox") ||
	       !strcmp(name, "save-trace") || !strcmp(name, "save-session") ||
	       !strcmp(name, "extension");
}

int cli_pw_flag(const char *command, int argc, char **argv, int *i, struct cli_pw *o)
{
	const char *a = argv[*i];
	const char *eq;
	char name[64];
	const char *v = NULL;
	int took_next = 0;
	int rc;

	if (strncmp(a, "--", 2) != 0)
		return 1;
	eq = strchr(a, '=');
	snprintf(name, sizeof(name), "%.*s", (int)(eq ? (size_t)(eq - a - 2) : strlen(a + 2)),
	         a + 2);
	if (eq) {
		v = eq + 1;
	} else if (!is_switch(name) && *i + 1 < argc) {
		v = argv[*i + 1];
		took_next = 1;
	}
	rc = apply(command, name, v, o);
	if (rc == 0 && took_next)
		(*i)++;
	return rc;
}

/* The keys of a Playwright MCP config file. */
static const char *const pw_keys[] = {
	"browser",
	"capabilities",
	"outputDir",
	"snapshot",
	"timeouts",
	"network",
	"server",
	"saveTrace",
	"saveSession",
	"saveVideo",
	"imageResponses",
	"codegen",
	"secrets",
	"allowUnrestrictedFileAccess",
	"testIdAttribute",
	"console",
	"sharedBrowserContext",
	"outputMaxSize",
	"extension",
	NULL,
};

int cli_pw_is_config(json_t *cfg)
{
	const char *key;
	json_t *v;
	size_t i;

	json_object_foreach(cfg, key, v)
	{
		for (i = 0; pw_keys[i]; i++)
			if (!strcmp(key, pw_keys[i]))
				return 1;
	}
	return 0;
}

/* Says that key of the config file is refused, and why. */
static int key_refused(const char *path, const char *key, const char *why)
{
	fprintf(stderr, "glassbox mcp: %s: \"%s\" is not honoured: %s\n", path, key, why);
	return -1;
}

/* Why a key of "browser.launchOptions" or "browser.contextOptions" that
 * glassbox does not take is refused; NULL for the ones it takes. */
static const struct {
	const char *key;
	const char *why;
} browser_refused[] = {
	{ "launchOptions.executablePath",
	  "name the browser with --chromium or $GLASSBOX_CHROMIUM" },
	{ "launchOptions.args", "glassbox sets Chromium's flags itself (docs/isolation.md)" },
	{ "launchOptions.ignoreDefaultArgs",
	  "glassbox sets Chromium's flags itself (docs/isolation.md)" },
	{ "launchOptions.proxy", "the browser reaches the network only through glassbox's egress "
	                         "proxy; name upstream rules in the policy (docs/egress.md)" },
	{ "launchOptions.env", "glassbox gives the browser an environment of its own" },
	{ "launchOptions.downloadsPath", "downloads go to the artifact store (docs/files.md)" },
	{ "launchOptions.tracesDir", "every action is kept as signed evidence instead "
	                             "(docs/evidence.md)" },
	{ "contextOptions.ignoreHTTPSErrors", "certificate errors are never ignored" },
	{ "contextOptions.proxy", "the browser reaches the network only through glassbox's egress "
	                          "proxy; name upstream rules in the policy (docs/egress.md)" },
	{ "contextOptions.storageState", "import a storage state into a profile with `glassbox "
	                                 "profile import-state`" },
	{ "contextOptions.recordVideo", "every action is kept as signed evidence instead "
	                                "(docs/evidence.md)" },
	{ "contextOptions.recordHar", "every action is kept as signed evidence instead "
	                              "(docs/evidence.md)" },
	{ "contextOptions.extraHTTPHeaders", "requests carry the headers the page gives them" },
	{ "contextOptions.httpCredentials", "credentials live in glassbox's encrypted secret store "
	                                    "(glassbox secret)" },
	{ "contextOptions.offline", "set it for the session with browser_emulate "
	                            "(networkConditions \"Offline\")" },
	{ "contextOptions.locale", "the browser's locale is not emulated" },
	{ "contextOptions.timezoneId", "the browser's time zone is not emulated" },
	{ "contextOptions.colorScheme", "set it for the session with browser_emulate_media "
	                                "(colorScheme)" },
	{ "contextOptions.javaScriptEnabled", "pages always run their scripts" },
	{ "contextOptions.bypassCSP", "a page's Content-Security-Policy is kept" },
	{ "contextOptions.serviceWorkers", "service workers are kept as Chromium runs them" },
	{ "contextOptions.isMobile", "device emulation is not offered; use --viewport-size and "
	                             "--user-agent" },
	{ "contextOptions.hasTouch", "device emulation is not offered; use --viewport-size and "
	                             "--user-agent" },
	{ "contextOptions.screen", "the screen is the viewport (--viewport-size)" },
	{ "contextOptions.baseURL", "tools take whole URLs" },
};

/* The "browser." key (e.g. "contextOptions.locale") refused, with why:
 * the reason of the table above, or the keys glassbox takes. */
static int browser_key_refused(const char *path, const char *key)
{
	char full[160];
	size_t i;

	snprintf(full, sizeof(full), "browser.%s", key);
	for (i = 0; i < sizeof(browser_refused) / sizeof(browser_refused[0]); i++)
		if (!strcmp(browser_refused[i].key, key))
			return key_refused(path, full, browser_refused[i].why);
	return key_refused(path, full,
	                   "glassbox launches and isolates its own Chromium; of \"browser\" it "
	                   "takes browserName, isolated, launchOptions.{headless, "
	                   "chromiumSandbox, channel} and contextOptions.{viewport, "
	                   "deviceScaleFactor, userAgent, permissions, geolocation}");
}

/* "browser.launchOptions" (o: the options set). 0, or -1 after saying why. */
static int launch_options(const char *path, json_t *lo, struct cli_pw *o)
{
	char full[160];
	const char *k;
	json_t *v;

	json_object_foreach(lo, k, v)
	{
		snprintf(full, sizeof(full), "browser.launchOptions.%s", k);
		if (!strcmp(k, "headless")) {
			if (!json_is_boolean(v))
				return key_refused(path, full, "it is true or false");
			o->headless = json_is_true(v);
		} else if (!strcmp(k, "chromiumSandbox")) {
			/* false: Chromium's own sandbox off, as --no-sandbox */
			if (!json_is_boolean(v))
				return key_refused(path, full, "it is true or false");
			o->chromium_sandbox_off = json_is_false(v);
		} else if (!strcmp(k, "channel")) {
			if (!json_is_string(v) ||
			    (strcmp(json_string_value(v), "chrome") != 0 &&
			     strcmp(json_string_value(v), "chromium") != 0 &&
			     strcmp(json_string_value(v), "chrome-for-testing")))
				return key_refused(
				    path, full,
				    "glassbox drives Chromium only (chrome or chromium)");
		} else {
			char sub[128];

			snprintf(sub, sizeof(sub), "launchOptions.%s", k);
			return browser_key_refused(path, sub);
		}
	}
	return 0;
}

/* "browser.contextOptions" (o: the options set). 0, or -1 after saying why. */
static int context_options(const char *path, json_t *co, struct cli_pw *o)
{
	char full[160];
	char num[32];
	const char *k;
	json_t *v;

	json_object_foreach(co, k, v)
	{
		snprintf(full, sizeof(full), "browser.contextOptions.%s", k);
		if (!strcmp(k, "viewport")) {
			json_t *w = json_object_get(v, "width");
			json_t *h = json_object_get(v, "height");

			if (json_is_null(v))
				continue; /* Playwright's "no fixed viewport": the window's */
			if (!json_is_object(v) || json_object_size(v) != 2 || !json_is_integer(w) ||
			    !json_is_integer(h))
				return key_refused(path, full,
				                   "it is {\"width\": N, \"height\": N}");
			snprintf(num, sizeof(num), "%lldx%lld", (long long)json_integer_value(w),
			         (long long)json_integer_value(h));
			if (apply("mcp", "viewport-size", num, o) < 0)
				return -1;
		} else if (!strcmp(k, "deviceScaleFactor")) {
			if (!json_is_number(v) || json_number_value(v) < 0.25 ||
			    json_number_value(v) > 5)
				return key_refused(path, full,
				                   "it must be a number from 0.25 to 5");
			o->device_scale_factor = json_number_value(v);
		} else if (!strcmp(k, "userAgent")) {
			if (!json_is_string(v))
				return key_refused(path, full, "it is a string");
			if (apply("mcp", "user-agent", json_string_value(v), o) < 0)
				return -1;
		} else if (!strcmp(k, "geolocation")) {
			/* emulated on every page, as browser_emulate's geolocation */
			json_t *lat = json_object_get(v, "latitude");
			json_t *lon = json_object_get(v, "longitude");
			json_t *acc = json_object_get(v, "accuracy");

			if (!json_is_object(v) || !json_is_number(lat) || !json_is_number(lon) ||
			    (acc && !json_is_number(acc)) ||
			    json_object_size(v) != 2u + (acc != NULL) ||
			    json_number_value(lat) < -90 || json_number_value(lat) > 90 ||
			    json_number_value(lon) < -180 || json_number_value(lon) > 180 ||
			    (acc && json_number_value(acc) < 0))
				return key_refused(path, full,
				                   "it is {\"latitude\": -90..90, \"longitude\": "
				                   "-180..180[, \"accuracy\": meters]}");
			o->has_geolocation = 1;
			o->geolocation[0] = json_number_value(lat);
			o->geolocation[1] = json_number_value(lon);
			o->geolocation[2] = acc ? json_number_value(acc) : 0;
		} else if (!strcmp(k, "permissions")) {
			/* the same as --grant-permissions: a list of Playwright's names */
			char list[sizeof(o->grant_permissions)] = "";
			size_t i;
			json_t *p;

			if (!json_is_array(v))
				return key_refused(path, full, "it lists permission names");
			json_array_foreach(v, i, p)
			{
				size_t len = strlen(list);

				if (!json_is_string(p) || !json_string_length(p) ||
				    strchr(json_string_value(p), ','))
					return key_refused(path, full, "it lists permission names");
				if (len + json_string_length(p) + 2 > sizeof(list))
					return key_refused(path, full, "the list is too long");
				snprintf(list + len, sizeof(list) - len, "%s%s", len ? "," : "",
				         json_string_value(p));
			}
			if (list[0] && apply("mcp", "grant-permissions", list, o) < 0)
				return -1;
		} else {
			char sub[128];

			snprintf(sub, sizeof(sub), "contextOptions.%s", k);
			return browser_key_refused(path, sub);
		}
	}
	return 0;
}

/* The "browser" key of a Playwright MCP config. 0, or -1 after saying why. */
static int browser_config(const char *path, json_t *b, struct cli_pw *o)
{
	json_t *lo = json_object_get(b, "launchOptions");
	json_t *co = json_object_get(b, "contextOptions");
	json_t *name = json_object_get(b, "browserName");
	const char *k;
	json_t *v;

	if (!json_is_object(b))
		return key_refused(path, "browser", "it is an object");
	json_object_foreach(b, k, v)
	{
		if (strcmp(k, "launchOptions") != 0 && strcmp(k, "contextOptions") != 0 &&
		    strcmp(k, "isolated") != 0 && strcmp(k, "browserName") != 0)
			return browser_key_refused(path, k);
	}
	if (name && (!json_is_string(name) || strcmp(json_string_value(name), "chromium") != 0))
		return key_refused(path, "browser.browserName", "glassbox drives Chromium only");
	if (lo && !json_is_object(lo))
		return key_refused(path, "browser.launchOptions", "it is an object");
	if (co && !json_is_object(co))
		return key_refused(path, "browser.contextOptions", "it is an object");
	if (launch_options(path, lo, o) < 0 || context_options(path, co, o) < 0)
		return -1;
	return 0;
}

int cli_pw_config(const char *path, json_t *cfg, struct cli_pw *o)
{
	const char *key;
	json_t *v;
	char num[32];

	json_object_foreach(cfg, key, v)
	{
		if (!strcmp(key, "browser")) {
			if (browser_config(path, v, o) < 0)
				return -1;
		} else if (!strcmp(key, "capabilities") && json_is_array(v)) {
			size_t i;
			json_t *c;

			o->caps[0] = '\0';
			json_array_foreach(v, i, c)
			{
				size_t len = strlen(o->caps);

				if (!json_is_string(c))
					return key_refused(path, key, "it lists capability names");
				if (len + strlen(json_string_value(c)) + sizeof(",vision") + 1 >
				    sizeof(o->caps))
					return key_refused(path, key, "the list is too long");
				snprintf(o->caps + len, sizeof(o->caps) - len, "%s%s",
				         len ? "," : "", json_string_value(c));
			}
			add_vision(o);
		} else if (!strcmp(key, "outputDir") && json_is_string(v)) {
			if (apply("mcp", "output-dir", json_string_value(v), o) < 0)
				return -1;
		} else if (!strcmp(key, "testIdAttribute") && json_is_string(v)) {
			if (apply("mcp", "test-id-attribute", json_string_value(v), o) < 0)
				return -1;
		} else if (!strcmp(key, "snapshot") && json_is_object(v)) {
			const char *mode = json_string_value(json_object_get(v, "mode"));

			if (json_is_true(json_object_get(v, "boxes")))
				o->snapshot_boxes = 1;
			if (mode && apply("mcp", "snapshot-mode", mode, o) < 0)
				return -1;
		} else if (!strcmp(key, "timeouts") && json_is_object(v)) {
			json_t *a = json_object_get(v, "action");
			json_t *n = json_object_get(v, "navigation");

			if (json_is_integer(a)) {
				snprintf(num, sizeof(num), "%lld",
				         (long long)json_integer_value(a));
				if (apply("mcp", "timeout-action", num, o) < 0)
					return -1;
			}
			if (json_is_integer(n)) {
				snprintf(num, sizeof(num), "%lld",
				         (long long)json_integer_value(n));
				if (apply("mcp", "timeout-navigation", num, o) < 0)
					return -1;
			}
		} else if (!strcmp(key, "imageResponses") && json_is_string(v)) {
			if (apply("mcp", "image-responses", json_string_value(v), o) < 0)
				return -1;
		} else if (!strcmp(key, "console") && json_is_object(v)) {
			json_t *level = json_object_get(v, "level");
			const char *k2;
			json_t *v2;

			json_object_foreach(v, k2, v2)
			{
				if (strcmp(k2, "level") != 0)
					return key_refused(path, k2,
					                   "of \"console\" glassbox takes level");
			}
			if (level &&
			    (!json_is_string(level) ||
			     apply("mcp", "console-level", json_string_value(level), o) < 0))
				return -1;
		} else if (!strcmp(key, "codegen") && json_is_string(v)) {
			if (apply("mcp", "codegen", json_string_value(v), o) < 0)
				return -1;
		} else if (!strcmp(key, "secrets")) {
			return key_refused(
			    path, key,
			    "name a dotenv file with --secrets FILE instead (its values "
			    "are held in memory, never in a config that others read), or "
			    "store them with `glassbox secret set`");
		} else if (refusal(key)) {
			return key_refused(path, key, refusal(key));
		} else {
			return key_refused(path, key,
			                   "glassbox does not offer it (docs/tools.md lists the "
			                   "Playwright MCP options it takes)");
		}
	}
	return 0;
}

void cli_pw_fill(const struct cli_pw *o, struct act_config *cfg)
{
	if (o->snapshot_mode >= 0)
		cfg->snapshot_mode = o->snapshot_mode;
	if (o->test_id_attribute[0])
		cfg->test_id_attribute = o->test_id_attribute;
	if (o->output_dir[0])
		cfg->output_dir = o->output_dir;
	if (o->action_timeout_ms)
		cfg->action_timeout_ms = o->action_timeout_ms;
	if (o->navigation_timeout_ms)
		cfg->navigation_timeout_ms = o->navigation_timeout_ms;
	if (o->viewport_width) {
		cfg->viewport_width = o->viewport_width;
		cfg->viewport_height = o->viewport_height;
	}
	if (o->user_agent[0])
		cfg->user_agent = o->user_agent;
	if (o->grant_permissions[0])
		cfg->grant_permissions = o->grant_permissions;
	if (o->caps[0])
		cfg->caps = o->caps; /* NULL: the core tools only, as Playwright MCP */
	if (o->headless >= 0)
		cfg->headless = o->headless;
	cfg->no_code = o->no_code;
	cfg->code_lang = o->code_lang >= 0 ? o->code_lang
	                 : act_code_lang_parse(getenv("PW_LANG_NAME")) >= 0
	                     ? act_code_lang_parse(getenv("PW_LANG_NAME"))
	                     : 0;
	cfg->snapshot_boxes = o->snapshot_boxes;
	cfg->no_structured_content = o->no_structured_content;
	cfg->omit_images = o->omit_images;
	cfg->device_scale_factor = o->device_scale_factor;
	cfg->chromium_sandbox_off = o->chromium_sandbox_off;
	if (o->has_geolocation) {
		cfg->has_geolocation = 1;
		memcpy(cfg->geolocation, o->geolocation, sizeof(cfg->geolocation));
	}
	if (o->console_level[0])
		cfg->console_level = o->console_level;
}

void cli_pw_say_sandbox(const struct cli_pw *o)
{
	char why[512] = "";
	int netns, uid;

	if (!o->chromium_sandbox_off)
		return;
	netns = policy_netns_available(NULL, 0);
	uid = sess_browser_sandboxed(why, sizeof(why)); /* as root: a user of its own */
	if (netns && uid) {
		fprintf(stderr,
		        "glassbox mcp: Chromium's sandbox is off (--no-sandbox); glassbox's "
		        "namespace, uid and egress proxy stay on\n");
		return;
	}
	fprintf(stderr,
	        "glassbox mcp: Chromium's sandbox is off (--no-sandbox); glassbox's egress proxy "
	        "and request interception stay on%s%s%s\n",
	        netns ? ", and its network namespace"
	              : "; the browser's network namespace is off "
	                "here (docs/egress.md, layer 4)",
	        uid ? ", and its uid" : "; the browser runs as root: ", uid ? "" : why);
}

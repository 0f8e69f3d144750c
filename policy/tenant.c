/*
 * tenant.c - a tenant's whole policy, parsed once (policy/tenant.h).
 *
 * Parsing validates every section and gathers every error before it
 * gives up, so that a person fixes a policy in one go. The egress and
 * risk sections are parsed by their own modules (rules.c, risk.c); their
 * list entries are checked one by one here, so that each bad entry is
 * named, not only the first. Once built, the object never changes: a
 * narrowing is a new object that shares the rest through a reference on
 * its base.
 */
#include "policy/policy-private.h"
#include "policy/tenant.h"

#include "common/util.h"

#include <sodium.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define ERRORS_MAX 40 /* errors reported at once; more are counted */

struct policy_tenant {
	atomic_int refs;
	struct policy_tenant *base; /* a narrowing's base (a reference), or NULL */
	struct policy_egress *egress;
	struct policy_risk *risk; /* owned unless base */
	json_t *written;          /* the policy as written (owned), {} for none */
	json_t *warnings;         /* array of strings */
	struct policy_tenant_settings settings;
	char hash[8 + 64 + 1];
	char source[POLICY_SOURCE_MAX];
};

/* Errors gathered while parsing. */
struct errors {
	char *buf;
	size_t len;
	size_t cap;
	int n;
};

static void add_error(struct errors *e, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void add_error(struct errors *e, const char *fmt, ...)
{
	va_list ap;
	int w;

	e->n++;
	if (e->n > ERRORS_MAX || !e->buf || e->len + 2 >= e->cap)
		return;
	if (e->len) {
		e->buf[e->len++] = '\n';
		e->buf[e->len] = '\0';
	}
	va_start(ap, fmt);
	w = vsnprintf(e->buf + e->len, e->cap - e->len, fmt, ap);
	va_end(ap);
	if (w > 0)
		e->len += (size_t)w < e->cap - e->len ? (size_t)w : e->cap - e->len - 1;
}

static const char *const known_keys[] = {
	"egress",
	"egress_layers",
	"risk",
	"approvals",
	"page_content",
	"limits",
	"require_evidence",
	"before_screenshots",
	"retention_days",
	"evidence",
	"allow_data_urls",
	"user_agent",
	"caps",
	"structured_content",
	"screencast",
	"har_bodies",
	"files",
	"cdp",
	"isolation",
};

/* ---- egress ------------------------------------------------------------------ */

/* Checks each entry of egress[key] alone, so that every bad one is named.
 * Returns how many errors it added. */
static int check_egress_list(const json_t *egress, const char *key, struct errors *e)
{
	const json_t *arr = json_object_get(egress, key);
	struct policy_egress *p = NULL;
	char err[600];
	size_t i;
	int n = 0;

	for (i = 0; json_is_array(arr) && i < json_array_size(arr); i++) {
		json_t *one = json_pack("{s:[O]}", key, json_array_get(arr, i));
		const char *rest;

		err[0] = '\0';
		if (one && policy_egress_parse(one, &p, err, sizeof(err)) < 0) {
			/* "egress.allow[0]: ..." names the entry as the only one */
			rest = strstr(err, "]");
			add_error(e, "policy.egress.%s[%zu]%s", key, i, rest ? rest + 1 : err);
			n++;
		}
		policy_egress_free(p);
		p = NULL;
		json_decref(one);
	}
	return n;
}

/* The egress section: its parse, and each list entry alone. */
static void parse_egress(struct policy_tenant *t, const json_t *egress, struct errors *e)
{
	char err[600] = "";
	int n = 0;

	if (policy_egress_parse(egress, &t->egress, err, sizeof(err)) == 0) {
		policy_egress_set_source(t->egress, t->source);
		return;
	}
	if (json_is_object(egress)) {
		json_t *others = json_deep_copy(egress);
		struct policy_egress *p = NULL;

		n += check_egress_list(egress, "allow", e);
		n += check_egress_list(egress, "deny", e);
		n += check_egress_list(egress, "allow_private", e);
		/* and what is wrong besides the list entries (hosts, default, keys) */
		if (n && others) {
			if (json_is_array(json_object_get(others, "allow")))
				json_object_set_new(others, "allow", json_array());
			if (json_is_array(json_object_get(others, "deny")))
				json_object_del(others, "deny");
			if (json_is_array(json_object_get(others, "allow_private")))
				json_object_del(others, "allow_private");
			err[0] = '\0';
			if (policy_egress_parse(others, &p, err, sizeof(err)) < 0)
				add_error(e, "policy.%s", err);
			policy_egress_free(p);
		}
		json_decref(others);
	}
	if (!n)
		add_error(e, "policy.%s", err);
}

/* ---- the smaller sections ---------------------------------------------------- */

/* Reads obj[key] as a boolean into *out (kept when absent). */
static void get_bool(const json_t *obj, const char *where, const char *key, int *out,
                     struct errors *e)
{
	const json_t *v = json_object_get(obj, key);

	if (!v)
		return;
	if (!json_is_boolean(v)) {
		add_error(e, "policy.%s%s%s must be true or false", where, where[0] ? "." : "",
		          key);
		return;
	}
	*out = json_is_true(v);
}

/* Reads obj[key] as a whole number in lo..hi into *out (kept when absent). */
static void get_int(const json_t *obj, const char *where, const char *key, int lo, int hi, int *out,
                    struct errors *e)
{
	const json_t *v = json_object_get(obj, key);

	if (!v)
		return;
	if (!json_is_integer(v) || json_integer_value(v) < lo || json_integer_value(v) > hi) {
		add_error(e, "policy.%s%s%s must be a whole number from %d to %d", where,
		          where[0] ? "." : "", key, lo, hi);
		return;
	}
	*out = (int)json_integer_value(v);
}

/* Checks that obj (at where) is an object whose keys are among keys[n]:
 * 1 when it is an object (its known keys are then read), else 0. */
static int check_object(const json_t *obj, const char *where, const char *const *keys, size_t n,
                        const char *example, struct errors *e)
{
	const char *key;
	json_t *v;
	size_t i;

	if (!obj)
		return 0;
	if (!json_is_object(obj)) {
		add_error(e, "policy.%s must be an object such as %s", where, example);
		return 0;
	}
	json_object_foreach((json_t *)obj, key, v)
	{
		for (i = 0; i < n && strcmp(key, keys[i]); i++)
			;
		if (i == n) {
			add_error(e, "policy.%s.%.64s is not a setting: use %s", where, key,
			          example);
		}
	}
	return 1;
}

/* files.upload_dirs: absolute dirs, without "..", whose files a tool may
 * name by path (docs/files.md). */
static void get_upload_dirs(const json_t *dirs, struct policy_tenant_settings *s, struct errors *e)
{
	const json_t *v;
	size_t i;

	if (!dirs)
		return;
	if (!json_is_array(dirs) || json_array_size(dirs) > POLICY_MAX_UPLOAD_DIRS) {
		add_error(e,
		          "policy.files.upload_dirs must be an array of at most %d absolute dirs",
		          POLICY_MAX_UPLOAD_DIRS);
		return;
	}
	json_array_foreach(dirs, i, v)
	{
		const char *d = json_string_value(v);

		if (!d || d[0] != '/' || strstr(d, "/..") ||
		    strlen(d) >= sizeof(s->upload_dirs[0]) || !strcmp(d, "/")) {
			add_error(
			    e,
			    "policy.files.upload_dirs[%zu] must be an absolute dir other than / "
			    "without \"..\" (such as \"/srv/invoices\")",
			    i);
			continue;
		}
		snprintf(s->upload_dirs[s->n_upload_dirs++], sizeof(s->upload_dirs[0]), "%s", d);
	}
}

/* "caps": the capability groups of tools turned on for the tenant, an
 * array of names; which names exist is the tools' business (actions/caps.c
 * checks them when a session starts), the shape is checked here. */
static void check_caps(const json_t *caps, struct errors *e)
{
	size_t i;

	if (!caps)
		return;
	if (!json_is_array(caps)) {
		add_error(e, "policy.caps must be an array of capability group names, such as "
		             "[\"vision\", \"testing\"]");
		return;
	}
	for (i = 0; i < json_array_size(caps); i++)
		if (!json_is_string(json_array_get(caps, i)))
			add_error(e, "policy.caps[%zu] must be a string, such as \"vision\"", i);
}

/* Reads obj[key], one of two words, into *out: 1 for yes, 0 for no (kept
 * when absent). */
/* user_agent: the User-Agent the tenant's pages show, pinned (no tool
 * may change it): one line of 1 to POLICY_USER_AGENT_MAX - 1 chars. */
static void get_user_agent(const json_t *v, struct policy_tenant_settings *s, struct errors *e)
{
	const char *ua = json_string_value(v);

	if (!v)
		return;
	if (!ua || !*ua || strlen(ua) >= POLICY_USER_AGENT_MAX || strpbrk(ua, "\r\n\t")) {
		add_error(e,
		          "policy.user_agent must be a User-Agent string of 1 to %d characters "
		          "on one line",
		          POLICY_USER_AGENT_MAX - 1);
		return;
	}
	snprintf(s->user_agent, sizeof(s->user_agent), "%s", ua);
}

static void get_word(const json_t *obj, const char *where, const char *key, const char *yes,
                     const char *no, int *out, struct errors *e)
{
	const json_t *v = json_object_get(obj, key);

	if (!v)
		return;
	if (!json_is_string(v) ||
	    (strcmp(json_string_value(v), yes) && strcmp(json_string_value(v), no))) {
		add_error(e, "policy.%s%s%s must be \"%s\" or \"%s\"", where, where[0] ? "." : "",
		          key, yes, no);
		return;
	}
	*out = !strcmp(json_string_value(v), yes);
}

/* "cdp": "allow" | "deny", or {"access", "gates", "screenshot_every_s"}
 * (docs/cdp.md). Defaults: deny, gates on, a screenshot every 5 s of input. */
static void parse_cdp(struct policy_tenant_settings *s, const json_t *json, struct errors *e)
{
	static const char *const cdp_keys[] = { "access", "gates", "screenshot_every_s" };
	const json_t *cdp = json_object_get(json, "cdp");

	s->cdp_allow = 0;
	s->cdp_gates = 1;
	s->cdp_screenshot_every_s = 5;
	if (json_is_string(cdp)) {
		get_word(json, "", "cdp", "allow", "deny", &s->cdp_allow, e);
		return;
	}
	if (cdp && !json_is_object(cdp)) {
		add_error(e, "policy.cdp must be \"allow\", \"deny\" or an object such as "
		             "{\"access\": \"allow\", \"gates\": \"on\"}");
		return;
	}
	if (!check_object(cdp, "cdp", cdp_keys, 3, "{\"access\": \"allow\", \"gates\": \"on\"}", e))
		return;
	get_word(cdp, "cdp", "access", "allow", "deny", &s->cdp_allow, e);
	get_word(cdp, "cdp", "gates", "on", "off", &s->cdp_gates, e);
	get_int(cdp, "cdp", "screenshot_every_s", 1, 3600, &s->cdp_screenshot_every_s, e);
}

static void parse_settings(struct policy_tenant *t, const json_t *json, struct errors *e)
{
	static const char *const layer_keys[] = { "tool", "fetch", "proxy", "netns" };
	static const char *const approval_keys[] = { "elicitation" };
	static const char *const page_keys[] = { "hidden_text" };
	static const char *const evidence_keys[] = { "before_answer" };
	static const char *const limit_keys[] = { "browser_memory_mb", "browser_cpu_percent",
		                                  "browser_cpu_window_s" };
	static const char *const cast_keys[] = { "fps", "max_width", "max_height", "max_frames" };
	static const char *const body_keys[] = { "max_bytes" };
	const json_t *cast = json_object_get(json, "screencast");
	static const char *const file_keys[] = { "uploads", "upload_max_mb", "downloads",
		                                 "download_max_mb", "upload_dirs" };
	struct policy_tenant_settings *s = &t->settings;
	const json_t *layers = json_object_get(json, "egress_layers");
	const json_t *approvals = json_object_get(json, "approvals");
	const json_t *page = json_object_get(json, "page_content");
	const json_t *limits = json_object_get(json, "limits");
	const json_t *evidence = json_object_get(json, "evidence");
	const json_t *files = json_object_get(json, "files");
	const char *key;
	json_t *v;

	s->layer_tool = s->layer_fetch = s->layer_proxy = 1;
	s->layer_netns = -1;
	if (check_object(layers, "egress_layers", layer_keys, 4, "{\"fetch\": false}", e)) {
		json_object_foreach((json_t *)layers, key, v)
		{
			if (!json_is_boolean(v)) {
				add_error(e, "policy.egress_layers.%s must be true or false", key);
				continue;
			}
			if (!strcmp(key, "tool"))
				s->layer_tool = json_is_true(v);
			else if (!strcmp(key, "fetch"))
				s->layer_fetch = json_is_true(v);
			else if (!strcmp(key, "proxy"))
				s->layer_proxy = json_is_true(v);
			else
				s->layer_netns = json_is_true(v);
		}
	}
	if (check_object(approvals, "approvals", approval_keys, 1, "{\"elicitation\": true}", e))
		get_bool(approvals, "approvals", "elicitation", &s->elicit_approvals, e);
	if (check_object(page, "page_content", page_keys, 1, "{\"hidden_text\": \"flag\"}", e)) {
		const json_t *h = json_object_get(page, "hidden_text");

		if (h && (!json_is_string(h) || (strcmp(json_string_value(h), "flag") &&
		                                 strcmp(json_string_value(h), "drop"))))
			add_error(e,
			          "policy.page_content.hidden_text must be \"flag\" or \"drop\"");
		else
			s->hidden_text_drop = h && !strcmp(json_string_value(h), "drop");
	}
	if (check_object(limits, "limits", limit_keys, 3,
	                 "{\"browser_memory_mb\": 512, \"browser_cpu_percent\": 80}", e)) {
		get_int(limits, "limits", "browser_memory_mb", 64, 1 << 20, &s->browser_memory_mb,
		        e);
		get_int(limits, "limits", "browser_cpu_percent", 1, 6400, &s->browser_cpu_percent,
		        e);
		get_int(limits, "limits", "browser_cpu_window_s", 1, 600, &s->browser_cpu_window_s,
		        e);
	}
	s->uploads = s->downloads = 1;
	s->upload_max_mb = POLICY_UPLOAD_MAX_MB_DEFAULT;
	s->download_max_mb = POLICY_DOWNLOAD_MAX_MB_DEFAULT;
	if (check_object(files, "files", file_keys, 5,
	                 "{\"uploads\": false, \"download_max_mb\": 8}", e)) {
		get_upload_dirs(json_object_get(files, "upload_dirs"), s, e);
		get_bool(files, "files", "uploads", &s->uploads, e);
		get_bool(files, "files", "downloads", &s->downloads, e);
		get_int(files, "files", "upload_max_mb", 1, POLICY_FILE_MAX_MB, &s->upload_max_mb,
		        e);
		get_int(files, "files", "download_max_mb", 1, POLICY_FILE_MAX_MB,
		        &s->download_max_mb, e);
	}
	s->evidence_before_answer = 1;
	if (check_object(evidence, "evidence", evidence_keys, 1, "{\"before_answer\": false}", e))
		get_bool(evidence, "evidence", "before_answer", &s->evidence_before_answer, e);
	get_bool(json, "", "require_evidence", &s->require_evidence, e);
	get_bool(json, "", "before_screenshots", &s->before_screenshots, e);
	get_bool(json, "", "allow_data_urls", &s->allow_data_urls, e);
	get_user_agent(json_object_get(json, "user_agent"), s, e);
	get_int(json, "", "retention_days", 1, 36500, &s->retention_days, e);
	check_caps(json_object_get(json, "caps"), e);
	/* structured_content: the MCP server reads it (mcp/server.c); its type is checked here */
	{
		int structured = 1;

		get_bool(json, "", "structured_content", &structured, e);
	}
	/* screencast: off unless asked; true or an object turns it on, capped */
	/* har_bodies: off unless asked; true or {"max_bytes"} keeps text bodies */
	s->har_body_max_bytes = 0;
	if (json_is_true(json_object_get(json, "har_bodies"))) {
		s->har_body_max_bytes = 65536;
	} else if (json_object_get(json, "har_bodies") &&
	           !json_is_false(json_object_get(json, "har_bodies")) &&
	           check_object(json_object_get(json, "har_bodies"), "har_bodies", body_keys, 1,
	                        "{\"max_bytes\": 65536} (or true)", e)) {
		s->har_body_max_bytes = 65536;
		get_int(json_object_get(json, "har_bodies"), "har_bodies", "max_bytes", 1, 1 << 20,
		        &s->har_body_max_bytes, e);
	}
	s->screencast_fps = 0;
	s->screencast_max_width = 640;
	s->screencast_max_height = 480;
	s->screencast_max_frames = 10;
	if (json_is_true(cast)) {
		s->screencast_fps = 1;
	} else if (cast && !json_is_false(cast) &&
	           check_object(cast, "screencast", cast_keys, 4,
	                        "{\"fps\": 1, \"max_width\": 640, \"max_height\": 480, "
	                        "\"max_frames\": 10} (or true)",
	                        e)) {
		s->screencast_fps = 1;
		get_int(cast, "screencast", "fps", 1, 5, &s->screencast_fps, e);
		get_int(cast, "screencast", "max_width", 160, 1920, &s->screencast_max_width, e);
		get_int(cast, "screencast", "max_height", 120, 1080, &s->screencast_max_height, e);
		get_int(cast, "screencast", "max_frames", 1, 60, &s->screencast_max_frames, e);
	}
	parse_cdp(s, json, e);
	/* isolation: "process" (the default: a browser per session) or
	 * "context" (the tenant's sessions share one, a context each) */
	get_word(json, "", "isolation", "context", "process", &s->isolation_context, e);
	if (s->isolation_context && (s->browser_memory_mb || s->browser_cpu_percent))
		add_error(e, "policy.limits cannot be kept with \"isolation\": \"context\" (its "
		             "sessions share one browser, and a limit ends a browser): drop "
		             "\"limits\" or use \"isolation\": \"process\"");
	if (s->isolation_context && s->cdp_allow)
		add_error(e, "policy.cdp \"allow\" cannot be combined with \"isolation\": "
		             "\"context\" (a DevTools client of a shared browser could reach the "
		             "other sessions' contexts): use \"isolation\": \"process\"");
	if (s->isolation_context && !s->layer_proxy)
		add_error(e, "policy.isolation \"context\" needs egress layer \"proxy\" (each "
		             "context's proxy is its session's): turn it back on or use "
		             "\"isolation\": \"process\"");
}

/* ---- warnings ------------------------------------------------------------------ */

static void warn(struct policy_tenant *t, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
static void warn(struct policy_tenant *t, const char *fmt, ...)
{
	char buf[600];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	json_array_append_new(t->warnings, json_string(buf));
}

/* 1 when ip is loopback or private (or special-purpose). */
static int is_inner(const struct policy_ip *ip)
{
	enum policy_addr_class c = policy_ip_class(ip);

	return c == POLICY_ADDR_LOOPBACK || c == POLICY_ADDR_PRIVATE || c == POLICY_ADDR_SPECIAL;
}

/* An allow pattern for every port that reaches a loopback or private
 * address: its own literal, or a resolver override of its host. */
static void warn_every_port(struct policy_tenant *t)
{
	const struct policy_layer *l = &t->egress->layers[0];
	const struct policy_host_override *o;
	size_t i, k;

	for (i = 0; i < l->nallow; i++) {
		const struct policy_pattern *pat = &l->allow[i];
		int inner = pat->is_ip && is_inner(&pat->ip);

		if (!pat->any_port)
			continue;
		for (k = 0; !inner && k < t->egress->nhosts; k++) {
			o = &t->egress->hosts[k];
			if (!pat->any_host && !pat->wildcard && strcmp(o->host, pat->host))
				continue;
			if (pat->wildcard &&
			    !(strlen(o->host) > strlen(pat->host) + 1 &&
			      o->host[strlen(o->host) - strlen(pat->host) - 1] == '.' &&
			      !strcmp(o->host + strlen(o->host) - strlen(pat->host), pat->host)))
				continue;
			for (size_t a = 0; !inner && a < o->naddrs; a++)
				inner = is_inner(&o->addrs[a]);
		}
		if (inner)
			warn(t,
			     "policy.egress.allow[%zu]: \"%s\" allows every port of a "
			     "loopback or "
			     "private address: a page can reach every service there; name "
			     "the "
			     "port (\"%s\" without \":*\", plus \":8080\")",
			     i, pat->text, pat->text);
	}
	for (i = 0; i < l->nprivate_ok; i++)
		if (l->private_ok[i].any_port)
			warn(t,
			     "policy.egress.allow_private[%zu]: every port of a loopback "
			     "or private "
			     "address is allowed: a page can reach every service there; "
			     "name the "
			     "port instead (\"127.0.0.1:8080\")",
			     i);
}

static void add_warnings(struct policy_tenant *t, const json_t *json)
{
	const struct policy_tenant_settings *s = &t->settings;
	const char *key;
	json_t *v;
	size_t i;

	json_object_foreach((json_t *)json, key, v)
	{
		for (i = 0; i < sizeof(known_keys) / sizeof(known_keys[0]); i++)
			if (!strcmp(key, known_keys[i]))
				break;
		if (i == sizeof(known_keys) / sizeof(known_keys[0]))
			warn(t, "policy.%.64s is not a key glassbox knows: it is ignored", key);
	}
	if (t->egress)
		warn_every_port(t);
	if (!s->layer_tool || !s->layer_fetch || !s->layer_proxy || s->layer_netns == 0)
		warn(t,
		     "policy.egress_layers turns egress layers off (tool %s, fetch %s, "
		     "proxy %s, "
		     "netns %s): for drills only, never for a production policy",
		     s->layer_tool ? "on" : "OFF", s->layer_fetch ? "on" : "OFF",
		     s->layer_proxy ? "on" : "OFF", s->layer_netns == 0 ? "OFF" : "on");
}

/* ---- the object ------------------------------------------------------------------ */

static void tenant_free(struct policy_tenant *t)
{
	if (!t)
		return;
	policy_egress_free(t->egress);
	if (t->base)
		policy_tenant_unref(t->base);
	else
		policy_risk_free(t->risk);
	json_decref(t->written);
	json_decref(t->warnings);
	free(t);
}

/* Fills t->hash from t->written. */
static int set_hash(struct policy_tenant *t)
{
	unsigned char h[crypto_hash_sha256_BYTES];
	char *text = json_dumps(t->written, JSON_SORT_KEYS | JSON_COMPACT);
	size_t i;

	if (!text)
		return -POLICY_ENOMEM;
	crypto_hash_sha256(h, (const unsigned char *)text, strlen(text));
	free(text);
	memcpy(t->hash, "sha256:", 7);
	for (i = 0; i < sizeof(h); i++)
		snprintf(t->hash + 7 + 2 * i, 3, "%02x", h[i]);
	return 0;
}

int policy_tenant_parse(const json_t *json, const char *source, struct policy_tenant **out,
                        char *err, size_t errlen)
{
	struct policy_tenant *t = NULL;
	struct errors e = { .buf = err, .cap = errlen };
	char rerr[600] = "";
	int rc = -POLICY_ENOMEM;

	*out = NULL;
	if (err && errlen)
		err[0] = '\0';
	t = calloc(1, sizeof(*t));
	if (!t)
		goto out;
	atomic_init(&t->refs, 1);
	snprintf(t->source, sizeof(t->source), "%s", source ? source : "");
	t->written = json ? json_deep_copy(json) : json_object();
	t->warnings = json_array();
	if (!t->written || !t->warnings)
		goto out;
	if (!json_is_object(t->written)) {
		add_error(&e, "policy: the policy must be a JSON object such as "
		              "{\"egress\": {\"allow\": [\"shop.example.com\"]}}");
		rc = -POLICY_EINVAL;
		goto out;
	}
	parse_egress(t, json_object_get(t->written, "egress"), &e);
	if (policy_risk_parse(json_object_get(t->written, "risk"), &t->risk, rerr, sizeof(rerr)) <
	    0)
		add_error(&e, "policy.%s", rerr);
	parse_settings(t, t->written, &e);
	if (e.n) {
		if (e.n > ERRORS_MAX)
			add_error(&e, "... and %d more errors", e.n - ERRORS_MAX);
		rc = -POLICY_EINVAL;
		goto out;
	}
	add_warnings(t, t->written);
	rc = set_hash(t);
	if (rc < 0)
		goto out;
	*out = t;
	t = NULL;
out:
	if (rc == -POLICY_ENOMEM && err && errlen)
		snprintf(err, errlen, "out of memory while reading the policy");
	tenant_free(t);
	return rc;
}

struct policy_tenant *policy_tenant_ref(struct policy_tenant *p)
{
	if (p)
		atomic_fetch_add(&p->refs, 1);
	return p;
}

void policy_tenant_unref(struct policy_tenant *p)
{
	if (p && atomic_fetch_sub(&p->refs, 1) == 1)
		tenant_free(p);
}

int policy_tenant_narrow(const struct policy_tenant *p, const json_t *egress,
                         struct policy_tenant **out, char *err, size_t errlen)
{
	struct policy_tenant *t = NULL;
	int rc = -POLICY_ENOMEM;

	*out = NULL;
	if (!p) {
		snprintf(err, errlen, "no policy to narrow");
		rc = -POLICY_EINVAL;
		goto out;
	}
	t = calloc(1, sizeof(*t));
	if (!t)
		goto out;
	atomic_init(&t->refs, 1);
	t->base = policy_tenant_ref((struct policy_tenant *)p);
	t->risk = p->risk;
	t->settings = p->settings;
	memcpy(t->hash, p->hash, sizeof(t->hash));
	memcpy(t->source, p->source, sizeof(t->source));
	t->written = json_incref(p->written);
	t->warnings = json_incref(p->warnings);
	rc = policy_egress_narrow(p->egress, egress, &t->egress, err, errlen);
	if (rc < 0)
		goto out;
	*out = t;
	t = NULL;
out:
	tenant_free(t);
	return rc;
}

const struct policy_egress *policy_tenant_egress(const struct policy_tenant *p)
{
	return p ? p->egress : NULL;
}

const struct policy_risk *policy_tenant_risk(const struct policy_tenant *p)
{
	return p ? p->risk : NULL;
}

const struct policy_tenant_settings *policy_tenant_settings(const struct policy_tenant *p)
{
	return p ? &p->settings : NULL;
}

const char *policy_tenant_hash(const struct policy_tenant *p)
{
	return p ? p->hash : "";
}

const char *policy_tenant_source(const struct policy_tenant *p)
{
	return p ? p->source : "";
}

const json_t *policy_tenant_warnings(const struct policy_tenant *p)
{
	return p ? p->warnings : NULL;
}

/* ---- the effective policy ---------------------------------------------------------- */

/* "80, 443", "80", "443", "8080" or "every port" for a pattern. */
static void pattern_ports(const struct policy_pattern *pat, int deny, char *out, size_t outlen)
{
	if (pat->any_port)
		snprintf(out, outlen, "every port");
	else if (pat->port)
		snprintf(out, outlen, "%d", pat->port);
	else
		snprintf(out, outlen, deny ? "every port" : "80, 443");
}

static json_t *patterns_json(const struct policy_pattern *list, size_t n, int deny)
{
	json_t *arr = json_array();
	char ports[32];
	size_t i;

	for (i = 0; arr && i < n; i++) {
		pattern_ports(&list[i], deny, ports, sizeof(ports));
		json_array_append_new(
		    arr, json_pack("{s:s, s:s}", "pattern", list[i].text, "ports", ports));
	}
	return arr;
}

static json_t *egress_json(const struct policy_tenant *t)
{
	const struct policy_layer *l = &t->egress->layers[0];
	const json_t *w = json_object_get(t->written, "egress");
	json_t *private_ok = json_array();
	json_t *hosts = json_object();
	json_t *j;
	char addr[64];
	char ports[32];
	size_t i, k;

	for (i = 0; private_ok && i < l->nprivate_ok; i++) {
		const struct policy_private *e = &l->private_ok[i];

		policy_ip_format(&e->range.ip, addr, sizeof(addr));
		if (e->any_port)
			snprintf(ports, sizeof(ports), "every port");
		else if (e->port)
			snprintf(ports, sizeof(ports), "%d", e->port);
		else
			snprintf(ports, sizeof(ports), "80, 443");
		json_array_append_new(private_ok,
		                      json_pack("{s:s, s:s}", "entry",
		                                gb_or(json_string_value(json_array_get(
		                                          json_object_get(w, "allow_private"), i)),
		                                      ""),
		                                "ports", ports));
	}
	for (i = 0; hosts && i < t->egress->nhosts; i++) {
		json_t *a = json_array();

		for (k = 0; a && k < t->egress->hosts[i].naddrs; k++) {
			policy_ip_format(&t->egress->hosts[i].addrs[k], addr, sizeof(addr));
			json_array_append_new(a, json_string(addr));
		}
		json_object_set_new(hosts, t->egress->hosts[i].host, a);
	}
	j = json_pack("{s:o, s:o, s:s, s:o, s:o}", "allow",
	              json_object_get(w, "allow") ? patterns_json(l->allow, l->nallow, 0)
	                                          : json_string("any public host, any port"),
	              "deny", patterns_json(l->deny, l->ndeny, 1), "default",
	              l->default_deny ? "deny" : "allow", "allow_private", private_ok, "hosts",
	              hosts);
	return j;
}

json_t *policy_tenant_effective(const struct policy_tenant *p)
{
	const struct policy_tenant_settings *s;
	const json_t *risk;
	json_t *j;
	json_t *r;

	if (!p)
		return NULL;
	s = &p->settings;
	risk = json_object_get(p->written, "risk");
	r = risk ? json_deep_copy(risk) : json_object();
	if (r) {
		if (!json_object_get(r, "evaluate"))
			json_object_set_new(r, "evaluate", json_string("approve"));
		if (!json_object_get(r, "default"))
			json_object_set_new(r, "default", json_string("allow"));
		if (!json_object_get(r, "defaults"))
			json_object_set_new(r, "defaults", json_true());
		json_object_set_new(r, "approval_ttl_seconds",
		                    json_integer(policy_risk_approval_ttl_ms(p->risk) / 1000));
		if (!json_object_get(r, "rules"))
			json_object_set_new(r, "rules", json_array());
	}
	j = json_pack(
	    "{s:s, s:s, s:o, s:{s:b, s:b, s:b, s:s}, s:o, s:{s:b}, s:{s:s}, "
	    "s:{s:o, s:o, s:o}, s:b, s:{s:b}, s:b, s:b, s:o, s:{s:b, s:i, s:b, s:i}, "
	    "s:{s:s, s:s, s:i}}",
	    "source", p->source[0] ? p->source : "(none: every default)", "hash", p->hash, "egress",
	    egress_json(p), "egress_layers", "tool", s->layer_tool, "fetch", s->layer_fetch,
	    "proxy", s->layer_proxy, "netns",
	    s->layer_netns < 0 ? "where the machine allows"
	    : s->layer_netns   ? "on"
	                       : "off",
	    "risk", r, "approvals", "elicitation", s->elicit_approvals, "page_content",
	    "hidden_text", s->hidden_text_drop ? "drop" : "flag", "limits", "browser_memory_mb",
	    s->browser_memory_mb ? json_integer(s->browser_memory_mb) : json_string("none"),
	    "browser_cpu_percent",
	    s->browser_cpu_percent ? json_integer(s->browser_cpu_percent) : json_string("none"),
	    "browser_cpu_window_s",
	    s->browser_cpu_window_s ? json_integer(s->browser_cpu_window_s)
	                            : json_string("default"),
	    "require_evidence", s->require_evidence, "evidence", "before_answer",
	    s->evidence_before_answer, "before_screenshots", s->before_screenshots,
	    "allow_data_urls", s->allow_data_urls, "retention_days",
	    s->retention_days ? json_integer(s->retention_days) : json_string("kept"), "files",
	    "uploads", s->uploads, "upload_max_mb", s->upload_max_mb, "downloads", s->downloads,
	    "download_max_mb", s->download_max_mb, "cdp", "access", s->cdp_allow ? "allow" : "deny",
	    "gates", s->cdp_gates ? "on" : "off", "screenshot_every_s", s->cdp_screenshot_every_s);
	if (j) {
		json_t *dirs = json_array();
		int i;

		for (i = 0; i < s->n_upload_dirs; i++)
			json_array_append_new(dirs, json_string(s->upload_dirs[i]));
		json_object_set_new(json_object_get(j, "files"), "upload_dirs", dirs);
	}
	if (j)
		json_object_set_new(
		    j, "screencast",
		    s->screencast_fps
		        ? json_pack("{s:i, s:i, s:i, s:i}", "fps", s->screencast_fps, "max_width",
		                    s->screencast_max_width, "max_height", s->screencast_max_height,
		                    "max_frames", s->screencast_max_frames)
		        : json_string("off"));
	if (j)
		json_object_set_new(j, "isolation",
		                    json_string(s->isolation_context ? "context" : "process"));
	if (j)
		json_object_set_new(j, "har_bodies",
		                    s->har_body_max_bytes
		                        ? json_pack("{s:i}", "max_bytes", s->har_body_max_bytes)
		                        : json_string("off"));
	if (j)
		json_object_set_new(j, "user_agent",
		                    json_string(s->user_agent[0] ? s->user_agent : "browser"));
	return j;
}

/*
 * tenant.h - a tenant's whole policy, parsed once: one typed, immutable,
 * reference-counted object holding the egress rules, the risk rules, the
 * approval, page-content, limit and evidence settings, each with its
 * defaults filled in, and the hash of the policy as written.
 *
 * The policy is the JSON object of `glassbox mcp --config FILE`, of
 * `glassbox run --config FILE` and of "tenants.<name>.policy" in the
 * service config of `glassbox serve`:
 *
 *   {
 *     "egress": {...},               policy/egress.h, docs/egress.md
 *     "egress_layers": {"tool": bool, "fetch": bool, "proxy": bool, "netns": bool},
 *     "risk": {...},                 policy/risk.h, docs/gates.md
 *     "approvals": {"elicitation": bool},                   default false
 *     "page_content": {"hidden_text": "flag" | "drop"},     default "flag"
 *     "limits": {"browser_memory_mb": 64.., "browser_cpu_percent": 1..6400,
 *                "browser_cpu_window_s": 1..600},           default none
 *     "require_evidence": bool,      default false
 *     "evidence": {"before_answer": bool},  default true
 *     "before_screenshots": bool,    default false
 *     "allow_data_urls": bool,       default false: top-level data: URLs refused
 *     "structured_content": bool,    default true: false drops tools' outputSchema
 *                                    and results' structuredContent (mcp/server.c)
 *     "user_agent": "...",           the User-Agent every page shows, pinned: no tool
 *                                    may change it; default the browser's own
 *     "retention_days": 1..36500     default: kept until purged by hand
 *     "screencast": true | {"fps": 1..5, "max_width": 160..1920,
 *                   "max_height": 120..1080, "max_frames": 1..60}   default off
 *     "har_bodies": true | {"max_bytes": 1..1048576}   default off
 *     "files": {"uploads": bool, "upload_max_mb": 1..64,     default true, 16
 *               "downloads": bool, "download_max_mb": 1..64, default true, 32
 *               "upload_dirs": ["/abs/dir", ...]}           default none
 *   }
 *
 * Threads: a struct policy_tenant never changes once parsed; any thread
 * may read it. References are atomic: take one with policy_tenant_ref for
 * as long as you keep the pointer, drop it with policy_tenant_unref.
 */
#ifndef GB_POLICY_TENANT_H
#define GB_POLICY_TENANT_H

#include "policy/egress.h"
#include "policy/risk.h"

#include <jansson.h>
#include <stddef.h>

struct policy_tenant;

#define POLICY_MAX_UPLOAD_DIRS 8
#define POLICY_USER_AGENT_MAX 512 /* the longest pinned User-Agent, with its NUL */

/* The settings outside egress and risk, defaults filled in. */
struct policy_tenant_settings {
	int elicit_approvals;       /* approvals.elicitation */
	int hidden_text_drop;       /* page_content.hidden_text is "drop" */
	int browser_memory_mb;      /* limits; 0: none */
	int browser_cpu_percent;    /* limits; 0: none */
	int browser_cpu_window_s;   /* limits; 0: the default window */
	int require_evidence;       /* refuse page-changing actions without evidence */
	int before_screenshots;     /* a screenshot before each page-changing action too */
	int evidence_before_answer; /* the evidence screenshot is in before the answer */
	int allow_data_urls;        /* browser_navigate may open top-level data: URLs */
	char user_agent[POLICY_USER_AGENT_MAX]; /* pinned User-Agent; "" = not pinned */
	int retention_days;                     /* 0: kept */
	/* screencast: frames of the page while each action runs, kept as
	 * evidence; fps 0: off (the default) */
	int screencast_fps;        /* 1..5 frames a second at most */
	int screencast_max_width;  /* 160..1920, default 640 */
	int screencast_max_height; /* 120..1080, default 480 */
	int screencast_max_frames; /* 1..60 per action, default 10 */
	/* har_bodies: text response bodies kept in each action's network_log,
	 * at most this many bytes each; 0: off (the default) */
	int har_body_max_bytes;
	int layer_tool, layer_fetch, layer_proxy; /* egress_layers; 1 unless turned off */
	int layer_netns; /* 1 asked on, 0 asked off, -1 where the machine allows */
	/* files: uploads from the upload area and downloads the pages start
	 * (docs/tools.md); each allowed unless turned off, each capped */
	int uploads;
	int upload_max_mb;
	int downloads;
	int download_max_mb;
	/* files.upload_dirs: dirs whose files tools may name by path */
	char upload_dirs[POLICY_MAX_UPLOAD_DIRS][1024];
	int n_upload_dirs;
	int cdp_allow;              /* cdp / cdp.access is "allow" (default deny) */
	int cdp_gates;              /* cdp.gates: 1 "on" (default), 0 "off" */
	int cdp_screenshot_every_s; /* cdp.screenshot_every_s: during input; default 5 */
	/* isolation: 1 "context" (the tenant's sessions share one browser, a
	 * browser context each), 0 "process" (the default: one each) */
	int isolation_context;
};

#define POLICY_UPLOAD_MAX_MB_DEFAULT 16
#define POLICY_DOWNLOAD_MAX_MB_DEFAULT 32
#define POLICY_FILE_MAX_MB 64 /* the artifact store's ceiling */

/*
 * Parses and validates the whole policy json (borrowed; NULL: every
 * default). source (copied; may be NULL) says where it is written, for
 * messages ("fixtures/policy/loopback.json"). Every error is reported at
 * once, one per line, each naming its place ("policy.egress.allow[2]:
 * \"*foo\" is not a host pattern: ..."). Returns 0 with *out (one
 * reference), or -POLICY_EINVAL with err, or -POLICY_ENOMEM.
 */
int policy_tenant_parse(const json_t *json, const char *source, struct policy_tenant **out,
                        char *err, size_t errlen);

/* Takes a reference; returns p. NULL is passed through. */
struct policy_tenant *policy_tenant_ref(struct policy_tenant *p);

/* Drops a reference; the last one frees p. NULL is a no-op. */
void policy_tenant_unref(struct policy_tenant *p);

/*
 * A new policy: p with its egress narrowed by egress (borrowed; the shape
 * of policy_egress_narrow). p is borrowed (the result keeps its own
 * reference on what it shares). Returns 0 with *out, or an error code as
 * policy_egress_narrow with err.
 */
int policy_tenant_narrow(const struct policy_tenant *p, const json_t *egress,
                         struct policy_tenant **out, char *err, size_t errlen);

/* The parts: borrowed, valid while the caller's reference is. */
const struct policy_egress *policy_tenant_egress(const struct policy_tenant *p);
const struct policy_risk *policy_tenant_risk(const struct policy_tenant *p);
const struct policy_tenant_settings *policy_tenant_settings(const struct policy_tenant *p);

/* "sha256:<64 hex>" of the policy as written (keys sorted, compact): the
 * same policy gives the same hash whatever its spacing or key order. The
 * environment manifest of each session (evidence/, policy_sha256) hashes
 * the same canonical form: the two agree. Borrowed. */
const char *policy_tenant_hash(const struct policy_tenant *p);

/* Where the policy is written, or "". Borrowed. */
const char *policy_tenant_source(const struct policy_tenant *p);

/*
 * The effective policy, every default shown, as JSON (a new reference;
 * NULL on allocation failure): what `glassbox policy check` prints.
 */
json_t *policy_tenant_effective(const struct policy_tenant *p);

/*
 * The warnings about p (borrowed array of strings): an allow pattern or
 * allow_private entry for every port (":*") that reaches a loopback or
 * private address, an egress layer turned off, a key glassbox does not
 * know. Empty when there is nothing to say.
 */
const json_t *policy_tenant_warnings(const struct policy_tenant *p);

#endif

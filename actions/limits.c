/*
 * limits.c - the memory and CPU limits of a session's browser.
 *
 * Two sources, the stricter wins: the operator's ceilings in act_config
 * (browser_memory_limit_bytes, browser_cpu_limit_percent: what `glassbox
 * serve` reads from its config) and the tenant policy's "limits" object:
 *
 *     "limits": {"browser_memory_mb": 512, "browser_cpu_percent": 80,
 *                "browser_cpu_window_s": 5}
 *
 * sessions/ keeps them (a cgroup v2 per browser where possible, else a
 * watchdog, see sessions/limits.c); this file reads the settings and puts
 * each browser the session launches or takes from the pool under them.
 */
#include "actions/actions-private.h"

#include "common/log.h"
#include "sessions/sessions.h"

#include <stdio.h>
#include <string.h>

/* The stricter of two limits where 0 means none. */
static uint64_t stricter(uint64_t a, uint64_t b)
{
	if (!a)
		return b;
	if (!b)
		return a;
	return a < b ? a : b;
}

void act_limits_read(struct act_session *s, const struct act_config *cfg,
                     const struct policy_tenant *policy)
{
	/* "limits", checked with the rest of the policy (policy/tenant.h) */
	const struct policy_tenant_settings *st = policy_tenant_settings(policy);
	uint64_t mem_mb = st ? (uint64_t)st->browser_memory_mb : 0;
	uint64_t cpu = st ? (uint64_t)st->browser_cpu_percent : 0;
	int window_s = st ? st->browser_cpu_window_s : 0;

	s->limits.memory_bytes = stricter(cfg->browser_memory_limit_bytes, mem_mb << 20);
	s->limits.cpu_percent = (unsigned)stricter(cfg->browser_cpu_limit_percent, cpu);
	s->limits.cpu_window_ms = window_s * 1000;
	if (s->limits.memory_bytes || s->limits.cpu_percent) {
		char how[600];

		sess_limits_describe(how, sizeof(how));
		GB_LOGI("actions",
		        "browser limits: memory %llu MiB, CPU %u%% of a core (0 = none); "
		        "kept by %s",
		        (unsigned long long)(s->limits.memory_bytes >> 20), s->limits.cpu_percent,
		        how);
	}
}

int act_limits_apply(struct act_session *s, char *err, size_t errlen)
{
	return sess_apply_limits(s->sess, &s->limits, err, errlen);
}

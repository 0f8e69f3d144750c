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

/* A whole number in [lo, hi] under key in obj, or 0 when absent. */
static int read_bounded(json_t *obj, const char *key, json_int_t lo, json_int_t hi, json_int_t *out,
                        char *err, size_t errlen)
{
	json_t *v = json_object_get(obj, key);

	*out = 0;
	if (!v)
		return 0;
	if (!json_is_integer(v) || json_integer_value(v) < lo || json_integer_value(v) > hi) {
		snprintf(err, errlen, "\"limits.%s\" must be a whole number from %lld to %lld", key,
		         (long long)lo, (long long)hi);
		return -1;
	}
	*out = json_integer_value(v);
	return 0;
}

/* The stricter of two limits where 0 means none. */
static uint64_t stricter(uint64_t a, uint64_t b)
{
	if (!a)
		return b;
	if (!b)
		return a;
	return a < b ? a : b;
}

int act_limits_read(struct act_session *s, const struct act_config *cfg, json_t *policy, char *err,
                    size_t errlen)
{
	json_t *limits = json_object_get(policy, "limits");
	json_int_t mem_mb = 0, cpu = 0, window_s = 0;
	const char *key;
	json_t *v;

	if (limits && !json_is_object(limits)) {
		snprintf(err, errlen,
		         "\"limits\" must be an object such as {\"browser_memory_mb\": "
		         "512, \"browser_cpu_percent\": 80}");
		return -1;
	}
	json_object_foreach(limits, key, v)
	{
		if (strcmp(key, "browser_memory_mb") && strcmp(key, "browser_cpu_percent") &&
		    strcmp(key, "browser_cpu_window_s")) {
			snprintf(err, errlen,
			         "unknown key \"limits.%.100s\": the limits are "
			         "browser_memory_mb, browser_cpu_percent and browser_cpu_window_s",
			         key);
			return -1;
		}
	}
	if (read_bounded(limits, "browser_memory_mb", 64, 1 << 20, &mem_mb, err, errlen) < 0 ||
	    read_bounded(limits, "browser_cpu_percent", 1, 6400, &cpu, err, errlen) < 0 ||
	    read_bounded(limits, "browser_cpu_window_s", 1, 600, &window_s, err, errlen) < 0)
		return -1;
	s->limits.memory_bytes = stricter(cfg->browser_memory_limit_bytes, (uint64_t)mem_mb << 20);
	s->limits.cpu_percent = (unsigned)stricter(cfg->browser_cpu_limit_percent, (uint64_t)cpu);
	s->limits.cpu_window_ms = (int)window_s * 1000;
	if (s->limits.memory_bytes || s->limits.cpu_percent) {
		char how[600];

		sess_limits_describe(how, sizeof(how));
		GB_LOGI("actions",
		        "browser limits: memory %llu MiB, CPU %u%% of a core (0 = none); "
		        "kept by %s",
		        (unsigned long long)(s->limits.memory_bytes >> 20), s->limits.cpu_percent,
		        how);
	}
	return 0;
}

int act_limits_apply(struct act_session *s, char *err, size_t errlen)
{
	return sess_apply_limits(s->sess, &s->limits, err, errlen);
}

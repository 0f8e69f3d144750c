/*
 * metrics.c - the metrics registry (see metrics.h).
 *
 * Design note
 * - Owns: one table of every metric glassbox exports (defs[]) and their
 *   values, in static storage; nothing is allocated.
 * - Threads: any thread updates; one mutex (lock) guards every value. An
 *   update is a table lookup by name plus a few additions, cheap enough
 *   for per-call sites.
 * - Invariants: a series' label value is at most LABEL_MAX-1 bytes of
 *   printable ASCII (others become '?'); a metric has at most
 *   GB_METRICS_MAX_SERIES series, the last one being "other" once full.
 */
#include "common/metrics.h"

#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "common/log.h"

#define LABEL_MAX 64
#define MAX_BUCKETS 12

enum metric_type { M_COUNTER, M_GAUGE, M_HISTOGRAM };

struct metric_def {
	const char *name;
	const char *help;
	enum metric_type type;
	const char *label;     /* label name, or NULL */
	const double *buckets; /* histograms: upper bounds, ascending */
	size_t n_buckets;
};

struct series {
	char label[LABEL_MAX];
	double value;                              /* counter, gauge; histogram: sum */
	unsigned long long count;                  /* histogram */
	unsigned long long in_bucket[MAX_BUCKETS]; /* histogram, not cumulative */
};

struct metric_values {
	struct series series[GB_METRICS_MAX_SERIES]; /* {lock} */
	size_t n;                                    /* {lock} */
};

static const double ready_buckets[] = { 0.1, 0.25, 0.5, 1, 2, 3, 5, 10, 20 };
static const double latency_buckets[] = { 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30 };

#define NB(b) (sizeof(b) / sizeof((b)[0]))

static const struct metric_def defs[] = {
	{ "glassbox_sessions", "MCP sessions of glassbox serve by state", M_GAUGE, "state", NULL,
	  0 },
	{ "glassbox_sessions_opened_total", "MCP sessions opened, by tenant", M_COUNTER, "tenant",
	  NULL, 0 },
	{ "glassbox_sessions_refused_total",
	  "Session starts refused, by reason (limit_total, limit_tenant, shutting_down)", M_COUNTER,
	  "reason", NULL, 0 },
	{ "glassbox_sessions_closed_total",
	  "MCP sessions closed, by reason (deleted, idle_ttl, unused_ttl, hard_ttl, killed, "
	  "shutdown, init_failed)",
	  M_COUNTER, "reason", NULL, 0 },
	{ "glassbox_http_requests_total", "HTTP requests answered on /mcp, by status code",
	  M_COUNTER, "code", NULL, 0 },
	{ "glassbox_http_connections_refused_total",
	  "Requests refused because their address had limits.max_connections_per_peer open",
	  M_COUNTER, NULL, NULL, 0 },
	{ "glassbox_auth_failures_total", "Requests refused for a missing or wrong bearer token",
	  M_COUNTER, NULL, NULL, 0 },
	{ "glassbox_session_time_to_ready_seconds",
	  "Time from launching Chromium until its first page is attached and set up", M_HISTOGRAM,
	  NULL, ready_buckets, NB(ready_buckets) },
	{ "glassbox_tool_latency_seconds", "Duration of tool calls, by tool", M_HISTOGRAM, "tool",
	  latency_buckets, NB(latency_buckets) },
	{ "glassbox_tool_budget_exceeded_total",
	  "Tool calls refused because the session's budget was "
	  "used up",
	  M_COUNTER, NULL, NULL, 0 },
	{ "glassbox_verification_failures_total", "Tool calls whose expectations failed, by tool",
	  M_COUNTER, "tool", NULL, 0 },
	{ "glassbox_egress_blocked_total",
	  "Requests refused by the egress policy, by layer (tool, fetch)", M_COUNTER, "layer", NULL,
	  0 },
	{ "glassbox_approvals_pending", "Approvals waiting for a decision", M_GAUGE, NULL, NULL,
	  0 },
	{ "glassbox_warm_pool_ready", "Launched browsers waiting in the warm pool", M_GAUGE, NULL,
	  NULL, 0 },
	{ "glassbox_cdp_sessions", "CDP clients connected to sessions' endpoints now", M_GAUGE,
	  NULL, NULL, 0 },
	{ "glassbox_cdp_connections_total", "CDP clients that connected, by tenant", M_COUNTER,
	  "tenant", NULL, 0 },
	{ "glassbox_residual_processes",
	  "Browser processes found still alive after their session closed (must stay 0)", M_GAUGE,
	  NULL, NULL, 0 },
};

#define N_DEFS (sizeof(defs) / sizeof(defs[0]))

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static struct metric_values values[N_DEFS];

/* The index of name in defs, or -1. */
static int find_def(const char *name)
{
	size_t i;

	for (i = 0; name && i < N_DEFS; i++) {
		if (!strcmp(defs[i].name, name))
			return (int)i;
	}
	return -1;
}

/* The series of defs[d] for label (NULL for metrics without a label),
 * created on first use; the "other" series once the table is full. */
static struct series *series_locked(int d, const char *label)
{
	struct metric_values *mv = &values[d];
	char clean[LABEL_MAX];
	size_t i;

	snprintf(clean, sizeof(clean), "%s", defs[d].label && label ? label : "");
	for (i = 0; clean[i]; i++) {
		if ((unsigned char)clean[i] < 0x20 || (unsigned char)clean[i] > 0x7e)
			clean[i] = '?';
	}
	for (i = 0; i < mv->n; i++) {
		if (!strcmp(mv->series[i].label, clean))
			return &mv->series[i];
	}
	if (mv->n >= GB_METRICS_MAX_SERIES - 1) {
		/* the last slot is "other", for every label value beyond the ceiling */
		if (mv->n == GB_METRICS_MAX_SERIES - 1) {
			memset(&mv->series[mv->n], 0, sizeof(mv->series[mv->n]));
			snprintf(mv->series[mv->n].label, LABEL_MAX, "other");
			mv->n++;
		}
		return &mv->series[GB_METRICS_MAX_SERIES - 1];
	}
	memset(&mv->series[mv->n], 0, sizeof(mv->series[mv->n]));
	snprintf(mv->series[mv->n].label, LABEL_MAX, "%s", clean);
	return &mv->series[mv->n++];
}

/* Applies one update to name/label: op 0 add, 1 set, 2 observe. */
static void update(const char *name, const char *label, int op, double v, enum metric_type want)
{
	int d = find_def(name);
	struct series *s;
	size_t b;

	if (d < 0 || defs[d].type != want || !isfinite(v)) {
		GB_LOGD("metrics", "ignored an update of %s (unknown, wrong type or not finite)",
		        name ? name : "(null)");
		return;
	}
	pthread_mutex_lock(&lock);
	s = series_locked(d, label);
	if (op == 0) {
		s->value += v;
	} else if (op == 1) {
		s->value = v;
	} else {
		s->value += v;
		s->count++;
		for (b = 0; b < defs[d].n_buckets; b++) {
			if (v <= defs[d].buckets[b]) {
				s->in_bucket[b]++;
				break;
			}
		}
	}
	pthread_mutex_unlock(&lock);
}

/* See metrics.h. */
void gb_metrics_counter_add(const char *name, const char *label, double v)
{
	if (v >= 0)
		update(name, label, 0, v, M_COUNTER);
}

/* See metrics.h. */
void gb_metrics_gauge_set(const char *name, const char *label, double v)
{
	update(name, label, 1, v, M_GAUGE);
}

/* See metrics.h. */
void gb_metrics_gauge_add(const char *name, const char *label, double delta)
{
	update(name, label, 0, delta, M_GAUGE);
}

/* See metrics.h. */
void gb_metrics_observe(const char *name, const char *label, double v)
{
	update(name, label, 2, v, M_HISTOGRAM);
}

/* Appends label value s escaped as the exposition format wants. */
static void append_escaped(struct gb_buf *out, const char *s)
{
	for (; *s; s++) {
		if (*s == '\\' || *s == '"')
			gb_buf_appendf(out, "\\%c", *s);
		else
			gb_buf_append(out, s, 1);
	}
}

/* {label="value"} (or {label="value",} when more follows), nothing for
 * metrics without a label and more == 0. */
static void append_labels(struct gb_buf *out, const struct metric_def *def, const struct series *s,
                          int more)
{
	if (!def->label) {
		gb_buf_append(out, more ? "{" : "", more ? 1 : 0);
		return;
	}
	gb_buf_appendf(out, "{%s=\"", def->label);
	append_escaped(out, s->label);
	gb_buf_append(out, more ? "\"," : "\"}", 2);
}

/* One series of a histogram: cumulative buckets, +Inf, sum, count. */
static void render_histogram(struct gb_buf *out, const struct metric_def *def,
                             const struct series *s)
{
	unsigned long long cumulative = 0;
	size_t b;

	for (b = 0; b < def->n_buckets; b++) {
		cumulative += s->in_bucket[b];
		gb_buf_appendf(out, "%s_bucket", def->name);
		append_labels(out, def, s, 1);
		gb_buf_appendf(out, "le=\"%g\"} %llu\n", def->buckets[b], cumulative);
	}
	gb_buf_appendf(out, "%s_bucket", def->name);
	append_labels(out, def, s, 1);
	gb_buf_appendf(out, "le=\"+Inf\"} %llu\n", s->count);
	gb_buf_appendf(out, "%s_sum", def->name);
	append_labels(out, def, s, 0);
	gb_buf_appendf(out, " %.6f\n", s->value);
	gb_buf_appendf(out, "%s_count", def->name);
	append_labels(out, def, s, 0);
	gb_buf_appendf(out, " %llu\n", s->count);
}

/* See metrics.h. */
int gb_metrics_render(struct gb_buf *out)
{
	static const char *const type_names[] = { "counter", "gauge", "histogram" };
	static const struct series zero;
	const struct series *s;
	size_t d, i, n;

	pthread_mutex_lock(&lock);
	for (d = 0; d < N_DEFS; d++) {
		gb_buf_appendf(out, "# HELP %s %s\n# TYPE %s %s\n", defs[d].name, defs[d].help,
		               defs[d].name, type_names[defs[d].type]);
		n = values[d].n;
		for (i = 0; i < (n ? n : (defs[d].label ? 0 : 1)); i++) {
			s = n ? &values[d].series[i] : &zero;
			if (defs[d].type == M_HISTOGRAM) {
				render_histogram(out, &defs[d], s);
				continue;
			}
			gb_buf_appendf(out, "%s", defs[d].name);
			append_labels(out, &defs[d], s, 0);
			gb_buf_appendf(out, " %.17g\n", s->value);
		}
	}
	pthread_mutex_unlock(&lock);
	return out->overflowed ? -1 : 0;
}

/* See metrics.h. */
void gb_metrics_reset(void)
{
	pthread_mutex_lock(&lock);
	memset(values, 0, sizeof(values));
	pthread_mutex_unlock(&lock);
}

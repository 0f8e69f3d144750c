/*
 * metrics.h - the process's Prometheus metrics: counters, gauges and
 * histograms with fixed buckets, at most one label each, rendered in the
 * text exposition format 0.0.4.
 *
 * Every metric is declared once, in the table in metrics.c (name, help,
 * type, label name, buckets), so an instrumented site is one line:
 *
 *   gb_metrics_observe("glassbox_tool_latency_seconds", def->name, secs);
 *
 * Thread-safe: any thread may update; rendering takes a consistent copy
 * under the same lock. A name that is not in the table is ignored (a bug,
 * logged at debug level). Each metric keeps at most GB_METRICS_MAX_SERIES
 * label values; later values are counted under the label value "other".
 */
#ifndef GB_METRICS_H
#define GB_METRICS_H

#include "common/util.h"

#define GB_METRICS_MAX_SERIES 48

/* Adds v (>= 0) to a counter. label: the label's value, or NULL for a
 * metric without a label. Strings are borrowed and copied. */
void gb_metrics_counter_add(const char *name, const char *label, double v);

/* Sets a gauge. */
void gb_metrics_gauge_set(const char *name, const char *label, double v);

/* Adds delta (may be negative) to a gauge. */
void gb_metrics_gauge_add(const char *name, const char *label, double delta);

/* Records one observation in a histogram. */
void gb_metrics_observe(const char *name, const char *label, double v);

/* Appends every metric to out in the text format 0.0.4 (HELP, TYPE, one
 * line per series; histograms as _bucket{le=...}, _sum, _count). Metrics
 * without a label are always rendered (0 before the first update).
 * Returns 0, or -1 when out hit its ceiling. */
int gb_metrics_render(struct gb_buf *out);

/* Forgets every value (tests). */
void gb_metrics_reset(void);

#endif

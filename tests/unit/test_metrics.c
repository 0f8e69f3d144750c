/*
 * test_metrics.c - the metrics registry: what Prometheus reads from
 * /metrics (text format 0.0.4), labels, histogram buckets, the series
 * ceiling, and updates from many threads at once.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/metrics.h"

/* The rendered page (malloc'd). */
static char *render(void)
{
	struct gb_buf b;

	gb_buf_init(&b, 4u << 20);
	assert_int_equal(gb_metrics_render(&b), 0);
	return gb_buf_steal(&b);
}

static int reset(void **state)
{
	(void)state;
	gb_metrics_reset();
	return 0;
}

static void assert_has(const char *page, const char *line)
{
	if (!strstr(page, line)) {
		fprintf(stderr, "missing: %s\n--- page ---\n%s\n", line, page);
		fail();
	}
}

static void test_help_type_and_zero_values(void **state)
{
	char *page;

	(void)state;
	page = render();
	assert_has(page, "# HELP glassbox_approvals_pending ");
	assert_has(page, "# TYPE glassbox_approvals_pending gauge\nglassbox_approvals_pending 0\n");
	assert_has(page, "# TYPE glassbox_tool_latency_seconds histogram\n");
	assert_has(page, "# TYPE glassbox_egress_blocked_total counter\n");
	/* unlabelled metrics show 0 before any update; labelled ones show nothing */
	assert_has(page, "glassbox_residual_processes 0\n");
	assert_has(page, "glassbox_session_time_to_ready_seconds_count 0\n");
	assert_null(strstr(page, "glassbox_tool_latency_seconds_count{"));
	free(page);
}

static void test_counters_gauges_labels(void **state)
{
	char *page;

	(void)state;
	gb_metrics_counter_add("glassbox_egress_blocked_total", "fetch", 1);
	gb_metrics_counter_add("glassbox_egress_blocked_total", "fetch", 2);
	gb_metrics_counter_add("glassbox_egress_blocked_total", "proxy", 1);
	gb_metrics_counter_add("glassbox_egress_blocked_total", "proxy", -5); /* ignored */
	gb_metrics_gauge_set("glassbox_warm_pool_ready", NULL, 4);
	gb_metrics_gauge_add("glassbox_warm_pool_ready", NULL, -1);
	gb_metrics_gauge_set("glassbox_sessions", "busy", 2);
	gb_metrics_counter_add("glassbox_verification_failures_total", "we\"ird\\tool\n", 1);
	gb_metrics_counter_add("no_such_metric", NULL, 1);             /* ignored */
	gb_metrics_gauge_set("glassbox_egress_blocked_total", "x", 9); /* wrong type: ignored */
	page = render();
	assert_has(page, "glassbox_egress_blocked_total{layer=\"fetch\"} 3\n");
	assert_has(page, "glassbox_egress_blocked_total{layer=\"proxy\"} 1\n");
	assert_null(strstr(page, "layer=\"x\""));
	assert_has(page, "glassbox_warm_pool_ready 3\n");
	assert_has(page, "glassbox_sessions{state=\"busy\"} 2\n");
	/* quotes and backslashes escaped, control characters replaced */
	assert_has(page, "glassbox_verification_failures_total{tool=\"we\\\"ird\\\\tool?\"} 1\n");
	assert_null(strstr(page, "no_such_metric"));
	free(page);
}

static void test_histogram(void **state)
{
	char *page;

	(void)state;
	gb_metrics_observe("glassbox_tool_latency_seconds", "browser_click", 0.02);
	gb_metrics_observe("glassbox_tool_latency_seconds", "browser_click", 0.3);
	gb_metrics_observe("glassbox_tool_latency_seconds", "browser_click", 0.5);
	gb_metrics_observe("glassbox_tool_latency_seconds", "browser_click", 99);
	page = render();
	assert_has(page,
	           "glassbox_tool_latency_seconds_bucket{tool=\"browser_click\",le=\"0.01\"} 0\n");
	assert_has(page,
	           "glassbox_tool_latency_seconds_bucket{tool=\"browser_click\",le=\"0.025\"} 1\n");
	assert_has(page,
	           "glassbox_tool_latency_seconds_bucket{tool=\"browser_click\",le=\"0.25\"} 1\n");
	assert_has(page,
	           "glassbox_tool_latency_seconds_bucket{tool=\"browser_click\",le=\"0.5\"} 3\n");
	assert_has(page,
	           "glassbox_tool_latency_seconds_bucket{tool=\"browser_click\",le=\"30\"} 3\n");
	assert_has(page,
	           "glassbox_tool_latency_seconds_bucket{tool=\"browser_click\",le=\"+Inf\"} 4\n");
	assert_has(page, "glassbox_tool_latency_seconds_sum{tool=\"browser_click\"} 99.820000\n");
	assert_has(page, "glassbox_tool_latency_seconds_count{tool=\"browser_click\"} 4\n");
	gb_metrics_observe("glassbox_session_time_to_ready_seconds", NULL, 1.5);
	free(page);
	page = render();
	assert_has(page, "glassbox_session_time_to_ready_seconds_bucket{le=\"2\"} 1\n");
	assert_has(page, "glassbox_session_time_to_ready_seconds_count 1\n");
	free(page);
}

static void test_series_ceiling(void **state)
{
	char label[32];
	char *page;
	int i;

	(void)state;
	for (i = 0; i < GB_METRICS_MAX_SERIES + 10; i++) {
		snprintf(label, sizeof(label), "tool%d", i);
		gb_metrics_counter_add("glassbox_verification_failures_total", label, 1);
	}
	page = render();
	assert_has(page, "{tool=\"tool0\"} 1\n");
	assert_has(page, "{tool=\"other\"} ");
	assert_null(strstr(page, "{tool=\"tool47\"}"));
	assert_has(page, "{tool=\"other\"} 11\n");
	free(page);
}

static void *hammer(void *arg)
{
	int i;

	(void)arg;
	for (i = 0; i < 10000; i++) {
		gb_metrics_counter_add("glassbox_tool_budget_exceeded_total", NULL, 1);
		gb_metrics_observe("glassbox_tool_latency_seconds", "browser_snapshot", 0.001);
	}
	return NULL;
}

static void test_threads(void **state)
{
	pthread_t t[4];
	char *page;
	int i;

	(void)state;
	for (i = 0; i < 4; i++)
		assert_int_equal(pthread_create(&t[i], NULL, hammer, NULL), 0);
	for (i = 0; i < 4; i++)
		pthread_join(t[i], NULL);
	page = render();
	assert_has(page, "glassbox_tool_budget_exceeded_total 40000\n");
	assert_has(page, "glassbox_tool_latency_seconds_count{tool=\"browser_snapshot\"} 40000\n");
	free(page);
}

static void test_ceiling_of_the_page(void **state)
{
	struct gb_buf b;

	(void)state;
	gb_buf_init(&b, 64);
	assert_int_equal(gb_metrics_render(&b), -1);
	gb_buf_free(&b);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup(test_help_type_and_zero_values, reset),
		cmocka_unit_test_setup(test_counters_gauges_labels, reset),
		cmocka_unit_test_setup(test_histogram, reset),
		cmocka_unit_test_setup(test_series_ceiling, reset),
		cmocka_unit_test_setup(test_threads, reset),
		cmocka_unit_test_setup(test_ceiling_of_the_page, reset),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

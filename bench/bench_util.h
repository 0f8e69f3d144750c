/*
 * bench_util.h - what the C benchmarks (profile_bench, store_bench) share:
 * a monotonic clock in microseconds, quantiles of the samples, and the
 * removal of their temporary data dir.
 */
#ifndef GB_BENCH_UTIL_H
#define GB_BENCH_UTIL_H

#include <stddef.h>
#include <stdint.h>

/* The monotonic clock in microseconds. */
int64_t bench_now_us(void);

/* Sorts the n samples of v (borrowed, reordered in place; n > 0) and
 * returns their q-quantile (0 <= q <= 1: 0.5 the median, 0.95 the p95). */
int64_t bench_quantile(int64_t *v, size_t n, double q);

/* Removes dir and everything below it, not following links; what cannot
 * be removed stays. */
void bench_rm_tree(const char *dir);

#endif

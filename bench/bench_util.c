/*
 * bench_util.c - the clock, quantiles and cleanup of the C benchmarks
 * (bench_util.h).
 */
#include "bench/bench_util.h"

#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

int64_t bench_now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

static int cmp64(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a;
	int64_t y = *(const int64_t *)b;

	return x < y ? -1 : x > y;
}

int64_t bench_quantile(int64_t *v, size_t n, double q)
{
	qsort(v, n, sizeof(*v), cmp64);
	return v[(size_t)(q * (double)(n - 1))];
}

static int rm_entry(const char *path, const struct stat *sb, int flag, struct FTW *ftw)
{
	(void)sb;
	(void)flag;
	(void)ftw;
	return remove(path);
}

void bench_rm_tree(const char *dir)
{
	nftw(dir, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
}

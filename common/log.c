/*
 * log.c - stderr logging with a level filter; lines are written whole so
 * that threads do not interleave inside a line.
 *
 * Any thread may log at any time, the first line included: the level is an
 * atomic, and GLASSBOX_LOG is read once (pthread_once) before the first line
 * or the first gb_log_set_level(), whichever comes first.
 */
#include "common/log.h"

#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static _Atomic int min_level = GB_LOG_INFO;
static pthread_once_t level_from_env_once = PTHREAD_ONCE_INIT;

/* Sets min_level from GLASSBOX_LOG; run once, through level_from_env_once. */
static void level_from_env(void)
{
	const char *env = getenv("GLASSBOX_LOG");

	if (!env)
		return;
	if (!strcmp(env, "debug"))
		atomic_store(&min_level, GB_LOG_DEBUG);
	else if (!strcmp(env, "info"))
		atomic_store(&min_level, GB_LOG_INFO);
	else if (!strcmp(env, "warn"))
		atomic_store(&min_level, GB_LOG_WARN);
	else if (!strcmp(env, "error"))
		atomic_store(&min_level, GB_LOG_ERROR);
}

void gb_log_set_level(enum gb_log_level level)
{
	/* The environment first, so that it can never override this later. */
	pthread_once(&level_from_env_once, level_from_env);
	atomic_store(&min_level, (int)level);
}

void gb_log_write(enum gb_log_level level, const char *module, const char *file, const char *func,
                  int line, const char *fmt, ...)
{
	static const char *const names[] = { "debug", "info", "warn", "error" };
	char msg[1024];
	char out[1400];
	va_list ap;
	int n;

	pthread_once(&level_from_env_once, level_from_env);
	if ((int)level < atomic_load(&min_level))
		return;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (level == GB_LOG_DEBUG) {
		struct timespec ts;

		clock_gettime(CLOCK_MONOTONIC, &ts);
		n = snprintf(out, sizeof(out), "glassbox %s %ld.%03ld [%s] %s\n", names[level],
		             (long)ts.tv_sec % 1000, ts.tv_nsec / 1000000, module, msg);
	} else if (level == GB_LOG_ERROR)
		n = snprintf(out, sizeof(out), "glassbox %s [%s] %s (%s:%s:%d)\n", names[level],
		             module, msg, file, func, line);
	else
		n = snprintf(out, sizeof(out), "glassbox %s [%s] %s\n", names[level], module, msg);
	if (n > 0)
		fwrite(out, 1, (size_t)n < sizeof(out) ? (size_t)n : sizeof(out) - 1, stderr);
}

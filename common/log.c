/*
 * log.c - stderr logging with a level filter; lines are written whole so
 * that threads do not interleave inside a line.
 */
#include "common/log.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static enum gb_log_level min_level = GB_LOG_INFO;
static int level_from_env_done;

static void level_from_env(void)
{
	const char *env = getenv("GLASSBOX_LOG");

	level_from_env_done = 1;
	if (!env)
		return;
	if (!strcmp(env, "debug"))
		min_level = GB_LOG_DEBUG;
	else if (!strcmp(env, "info"))
		min_level = GB_LOG_INFO;
	else if (!strcmp(env, "warn"))
		min_level = GB_LOG_WARN;
	else if (!strcmp(env, "error"))
		min_level = GB_LOG_ERROR;
}

void gb_log_set_level(enum gb_log_level level)
{
	level_from_env_done = 1;
	min_level = level;
}

void gb_log_write(enum gb_log_level level, const char *module, const char *file, const char *func,
                  int line, const char *fmt, ...)
{
	static const char *const names[] = { "debug", "info", "warn", "error" };
	char msg[1024];
	char out[1400];
	va_list ap;
	int n;

	if (!level_from_env_done)
		level_from_env();
	if (level < min_level)
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

/*
 * proc_fixture.h - reading other processes' command lines from /proc, for
 * the tests that find browsers by what their command line names.
 */
#ifndef GB_TEST_PROC_FIXTURE_H
#define GB_TEST_PROC_FIXTURE_H

#include <stdio.h>
#include <string.h>
#include <sys/types.h>

/* 1 when an argument of pid's command line contains needle (Chromium's
 * helpers rewrite theirs into one argument: it is searched too). */
static inline int proc_cmdline_has(pid_t pid, const char *needle)
{
	char path[64], buf[16384];
	size_t n, at;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/cmdline", (int)pid);
	f = fopen(path, "r");
	if (!f)
		return 0;
	n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = 0;
	for (at = 0; at < n; at += strlen(buf + at) + 1)
		if (strstr(buf + at, needle))
			return 1;
	return 0;
}

#endif

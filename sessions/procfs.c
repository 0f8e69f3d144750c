/*
 * procfs.c - what /proc says about a process: its group, state, CPU time,
 * start time, proportional memory (PSS) and command line. Shared by the
 * limits watchdog (measuring a browser's process tree) and the orphan
 * reaper (telling a live owner from a dead one whose pid was reused).
 *
 * Everything read here comes from files that other processes control in
 * part (a command line, a comm name with spaces or parentheses): parse
 * with bounds, never trust a field's position before the last ')'.
 */
#include "sessions/sessions-private.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

ssize_t sess_read_small_file(const char *path, char *buf, size_t len)
{
	ssize_t n, total = 0;
	int fd;

	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	if (fd < 0)
		return -1;
	while ((size_t)total < len - 1) {
		n = read(fd, buf + total, len - 1 - (size_t)total);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		total += n;
	}
	close(fd);
	buf[total] = '\0';
	return total;
}

/*
 * Parses the text of /proc/<pid>/stat (borrowed) into st. The comm field
 * may hold spaces and parentheses: fields are counted after the last ')'.
 * Returns 0, or -1 when the text is not a stat line.
 */
UNITTEST int sess_parse_proc_stat(const char *text, struct sess_proc_stat *st)
{
	const char *p = strrchr(text, ')');
	unsigned long long utime, stime, start;
	int ppid, pgrp;
	char state;

	memset(st, 0, sizeof(*st));
	if (!p || p[1] != ' ')
		return -1;
	/* state ppid pgrp session tty_nr tpgid flags minflt cminflt majflt
	 * cmajflt utime stime cutime cstime priority nice num_threads
	 * itrealvalue starttime */
	if (sscanf(
	        p + 2,
	        "%c %d %d %*d %*d %*d %*u %*u %*u %*u %*u %llu %llu %*d %*d %*d %*d %*d %*d %llu",
	        &state, &ppid, &pgrp, &utime, &stime, &start) != 6)
		return -1;
	st->state = state;
	st->ppid = (pid_t)ppid;
	st->pgid = (pid_t)pgrp;
	st->cpu_ticks = (uint64_t)utime + (uint64_t)stime;
	st->start_ticks = (uint64_t)start;
	return 0;
}

int sess_proc_stat(pid_t pid, struct sess_proc_stat *st)
{
	char path[64];
	char text[1024];

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	if (sess_read_small_file(path, text, sizeof(text)) <= 0)
		return -1;
	return sess_parse_proc_stat(text, st);
}

/* Sums the "Pss:" line of smaps_rollup text (kB); 0 when absent. */
UNITTEST uint64_t sess_parse_pss_kb(const char *text)
{
	const char *line = text;

	while (line && *line) {
		unsigned long long kb;

		if (!strncmp(line, "Pss:", 4) && sscanf(line + 4, "%llu", &kb) == 1)
			return (uint64_t)kb;
		line = strchr(line, '\n');
		if (line)
			line++;
	}
	return 0;
}

uint64_t sess_proc_pss_bytes(pid_t pid)
{
	char path[64];
	char text[2048];

	snprintf(path, sizeof(path), "/proc/%d/smaps_rollup", (int)pid);
	if (sess_read_small_file(path, text, sizeof(text)) <= 0)
		return 0;
	return sess_parse_pss_kb(text) * 1024;
}

/* 1 when needle is one whole argument of the command line text (n
 * bytes): arguments are NUL-separated, or, for a process that rewrote its
 * title as Chromium's helpers do, space-separated in one string. */
UNITTEST int sess_cmdline_text_has(const char *text, size_t n, const char *needle)
{
	size_t nlen = strlen(needle);
	const char *p = text, *end = text + n;

	while (nlen && (p = memmem(p, (size_t)(end - p), needle, nlen)) != NULL) {
		int starts = p == text || p[-1] == '\0' || p[-1] == ' ';
		int ends = p + nlen == end || p[nlen] == '\0' || p[nlen] == ' ';

		if (starts && ends)
			return 1;
		p++;
	}
	return 0;
}

int sess_proc_cmdline_has(pid_t pid, const char *needle)
{
	char path[64];
	char text[16384];
	ssize_t n;

	snprintf(path, sizeof(path), "/proc/%d/cmdline", (int)pid);
	n = sess_read_small_file(path, text, sizeof(text));
	if (n <= 0)
		return 0;
	return sess_cmdline_text_has(text, (size_t)n, needle);
}

int sess_proc_foreach(int (*fn)(void *user, pid_t pid), void *user)
{
	DIR *d = opendir("/proc");
	struct dirent *e;
	int n = 0;

	if (!d)
		return -1;
	while ((e = readdir(d)) != NULL) {
		char *end;
		long pid = strtol(e->d_name, &end, 10);

		if (*end || pid <= 0)
			continue;
		n++;
		if (fn(user, (pid_t)pid) != 0)
			break;
	}
	closedir(d);
	return n;
}

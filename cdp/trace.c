/*
 * trace.c - a copy of a connection's CDP traffic, for debugging and for
 * recording the replays the pipeline's tests run without a browser
 * (tests/replay/). Off unless GLASSBOX_CDP_TRACE names a directory: each
 * connection then writes DIR/cdp-<pid>-<n>.jsonl (0600), one message per
 * line, "> " before what was sent and "< " before what was received.
 * The traffic holds whatever the pages and tools exchange (typed text,
 * cookies): turn it on only with test data.
 */
#include "cdp/cdp-private.h"

#include "common/log.h"

#include <fcntl.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

void cdp_trace_open(struct cdp_conn *c)
{
	static atomic_uint counter;
	const char *dir = getenv("GLASSBOX_CDP_TRACE");
	char path[4096];
	int fd;

	if (!dir || !dir[0])
		return;
	snprintf(path, sizeof(path), "%s/cdp-%ld-%u.jsonl", dir, (long)getpid(),
	         atomic_fetch_add(&counter, 1));
	fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	if (fd < 0 || !(c->trace = fdopen(fd, "w"))) {
		GB_LOGW("cdp", "GLASSBOX_CDP_TRACE: cannot create %s", path);
		if (fd >= 0)
			close(fd);
		return;
	}
	GB_LOGW("cdp",
	        "tracing the CDP traffic of %s to %s (it holds what pages and tools exchange)",
	        c->endpoint, path);
}

void cdp_trace(struct cdp_conn *c, char dir, const char *msg, size_t len)
{
	if (!c->trace)
		return;
	fprintf(c->trace, "%c %.*s\n", dir, (int)len, msg);
	fflush(c->trace);
}

void cdp_trace_close(struct cdp_conn *c)
{
	if (c->trace)
		fclose(c->trace);
	c->trace = NULL;
}

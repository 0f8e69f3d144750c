/*
 * stdio.c - MCP over a pair of file descriptors: newline-delimited JSON-RPC
 * read from in_fd, written to out_fd.
 *
 * Design note
 * - The thread that calls mcp_stdio_serve() is the front: it reads lines
 *   (never more than MCP_MAX_LINE_BYTES of one) and hands them to the
 *   server (server.c), which answers what it can at once and queues tool
 *   calls to the session's worker thread.
 * - Writes come from the front and from the worker; out->lock makes each
 *   message one whole line on out_fd, never interleaved. A writer may
 *   block while the client does not read; nothing else is held meanwhile.
 * - If the client stops reading for good (EPIPE), output is dropped from
 *   then on; the SIGPIPE that write raises is blocked and consumed on the
 *   writing thread only, so the process's signal handling is untouched.
 * - End of file on in_fd: the server drains calls in flight and frees the
 *   session, then this returns.
 */
#include "mcp/mcp-private.h"

#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "actions/actions.h"
#include "common/log.h"

#define MOD "mcp"

/* Bytes read from in_fd at a time. */
#define READ_CHUNK_BYTES (64u * 1024u)

struct stdio_out {
	int fd;
	pthread_mutex_t lock;
	int broken; /* {lock} the reader of fd is gone: drop output */
};

/* Waits until fd is ready for events (for descriptors in non-blocking
 * mode). Returns 0, or -errno. */
static int wait_fd(int fd, short events)
{
	struct pollfd pfd = { .fd = fd, .events = events };
	int rc;

	do {
		rc = poll(&pfd, 1, -1);
	} while (rc < 0 && errno == EINTR);
	return rc < 0 ? -errno : 0;
}

/* Writes all of buf to fd. SIGPIPE is blocked on this thread for the
 * write and, if the write raised it, consumed before unblocking.
 * Returns 0, or -errno (-EPIPE when the reader is gone). */
static int write_all(int fd, const char *buf, size_t len)
{
	static const struct timespec no_wait = { 0, 0 };
	sigset_t pipe_set;
	sigset_t old_mask;
	sigset_t pending;
	int was_pending;
	ssize_t n;
	int rc = 0;

	sigemptyset(&pipe_set);
	sigaddset(&pipe_set, SIGPIPE);
	pthread_sigmask(SIG_BLOCK, &pipe_set, &old_mask);
	sigpending(&pending);
	was_pending = sigismember(&pending, SIGPIPE);

	while (len) {
		n = write(fd, buf, len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
			rc = wait_fd(fd, POLLOUT);
			if (rc < 0)
				break;
			continue;
		}
		if (n < 0) {
			rc = -errno;
			break;
		}
		buf += n;
		len -= (size_t)n;
	}

	if (rc == -EPIPE && !was_pending) {
		while (sigtimedwait(&pipe_set, NULL, &no_wait) < 0 && errno == EINTR)
			;
	}
	pthread_sigmask(SIG_SETMASK, &old_mask, NULL);
	return rc;
}

/* mcp_emit_fn: encodes msg (borrowed) on the calling thread, then writes
 * the line under out->lock; one stream carries every message, so related
 * is not needed. */
static int stdio_emit(void *user, json_t *msg, json_t *related)
{
	struct stdio_out *out = user;
	size_t len = 0;
	char *line;
	int rc = -1;

	line = mcp_jsonrpc_encode(msg, &len);
	if (!line) {
		GB_LOGE(MOD, "could not encode a message (out of memory?)");
		goto out;
	}
	pthread_mutex_lock(&out->lock);
	if (!out->broken) {
		rc = write_all(out->fd, line, len);
		if (rc < 0) {
			out->broken = 1;
			GB_LOGW(MOD, "writing to the client failed (%s): output stops here",
			        strerror(-rc));
		}
	}
	pthread_mutex_unlock(&out->lock);
	free(line);
out:
	return rc < 0 ? -1 : 0;
}

/* mcp_line_fn: one complete line to the server (user). */
static void on_line(void *user, const char *line, size_t len)
{
	mcp_server_handle_line(user, line, len);
}

/* mcp_overflow_fn: a line over the ceiling: the server answers it. */
static void on_overflow(void *user, size_t max_bytes)
{
	mcp_server_line_too_long(user, max_bytes);
}

/* See mcp.h. */
int mcp_stdio_serve(const struct act_config *cfg, int in_fd, int out_fd)
{
	return mcp_stdio_serve_until(cfg, in_fd, out_fd, -1);
}

/* Waits until in_fd has input or stop_fd (if >= 0) is readable: 0 to read,
 * 1 to stop. */
static int wait_input(int in_fd, int stop_fd)
{
	struct pollfd pfd[2] = { { .fd = in_fd, .events = POLLIN },
		                 { .fd = stop_fd, .events = POLLIN } };
	int rc;

	if (stop_fd < 0)
		return 0;
	do {
		rc = poll(pfd, 2, -1);
	} while (rc < 0 && errno == EINTR);
	return rc > 0 && pfd[1].revents ? 1 : 0;
}

int mcp_stdio_serve_until(const struct act_config *cfg, int in_fd, int out_fd, int stop_fd)
{
	struct stdio_out out = { .fd = out_fd };
	struct mcp_line_reader reader;
	struct mcp_server *srv = NULL;
	char *chunk = NULL;
	ssize_t n;
	int rc;

	pthread_mutex_init(&out.lock, NULL);
	mcp_lines_init(&reader, MCP_MAX_LINE_BYTES);
	if (!cfg || in_fd < 0 || out_fd < 0) {
		rc = -EINVAL;
		goto out;
	}
	chunk = malloc(READ_CHUNK_BYTES);
	if (!chunk) {
		rc = -ENOMEM;
		goto out;
	}
	rc = mcp_server_new(cfg, stdio_emit, &out, &srv);
	if (rc < 0)
		goto out;
	GB_LOGI(MOD, "serving MCP on stdio (glassbox %s, protocol %s)", GLASSBOX_VERSION,
	        MCP_PROTOCOL_LATEST);

	for (;;) {
		if (wait_input(in_fd, stop_fd)) {
			GB_LOGI(MOD, "asked to stop: finishing calls in flight");
			break;
		}
		n = read(in_fd, chunk, READ_CHUNK_BYTES);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
			rc = wait_fd(in_fd, POLLIN);
			if (rc < 0)
				break;
			continue;
		}
		if (n < 0) {
			rc = -errno;
			GB_LOGE(MOD, "reading the client's messages failed: %s", strerror(errno));
			break;
		}
		if (n == 0)
			break;
		mcp_lines_feed(&reader, chunk, (size_t)n, on_line, on_overflow, srv);
	}
	if (rc == 0)
		mcp_lines_finish(&reader, on_line, srv);
	GB_LOGI(MOD, "client closed the connection: finishing calls in flight");

out:
	mcp_server_free(srv); /* drains, then closes the browser */
	mcp_lines_free(&reader);
	free(chunk);
	pthread_mutex_destroy(&out.lock);
	return rc;
}

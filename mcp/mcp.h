/*
 * mcp.h - the Model Context Protocol front of glassbox: JSON-RPC 2.0
 * messages, one line each, between an agent and the browser tools of
 * actions/.
 *
 * Protocol: MCP 2025-11-25; 2025-06-18 and 2025-03-26 are negotiated with
 * clients that ask for them. Tools, their input schemas and their output
 * schema come from the tool table in actions/actions.h.
 */
#ifndef GB_MCP_H
#define GB_MCP_H

#include <stddef.h>

struct act_config;

/* The newest protocol revision spoken; answered to clients that ask for
 * one we do not know. */
#define MCP_PROTOCOL_LATEST "2025-11-25"

/* Ceiling on one incoming message (one line), in bytes, newline excluded.
 * A longer line gets an error response and is skipped up to its newline;
 * nothing beyond this is ever buffered. Override at build time with
 * -DMCP_MAX_LINE_BYTES=... */
#ifndef MCP_MAX_LINE_BYTES
#define MCP_MAX_LINE_BYTES (4u * 1024u * 1024u)
#endif

/*
 * Serves MCP over a pair of file descriptors (normally stdin and stdout)
 * until end of file on in_fd.
 *
 * The calling thread becomes the front: it reads and answers messages and
 * never waits on a browser. Tool calls run on the act_session's worker
 * thread (the session is created on the first call, with cfg) and their
 * responses are written from there; every message written is one whole
 * line. out_fd must carry nothing else (log to stderr). If the reader of
 * out_fd goes away, output is dropped (no SIGPIPE) and reading goes on.
 *
 * On end of file it waits for the calls in flight to complete, frees the
 * session (which closes the browser) and returns. cfg is borrowed until
 * then; the descriptors are borrowed and left open.
 *
 * Returns 0 after a clean end of file, -EINVAL on bad arguments, or a
 * negative errno when reading in_fd failed (after the same cleanup).
 */
int mcp_stdio_serve(const struct act_config *cfg, int in_fd, int out_fd);

/* The same, and it also ends, as on end of file, once stop_fd (e.g. the
 * read end of a pipe a signal handler writes to; -1: none) becomes
 * readable: calls in flight finish and the session closes cleanly. */
int mcp_stdio_serve_until(const struct act_config *cfg, int in_fd, int out_fd, int stop_fd);

#endif

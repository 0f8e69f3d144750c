/*
 * console_log.h - the console messages of a session's pages written as
 * Playwright MCP writes them into its output directory, and the
 * "### Events" line of each answer that points at the new ones
 * (console_log.c). Private to actions/.
 *
 * Threads: the session's worker only.
 */
#ifndef GB_ACTIONS_CONSOLE_LOG_H
#define GB_ACTIONS_CONSOLE_LOG_H

#include <jansson.h>

struct act_ctx;
struct act_console_log;
struct gb_buf;

/* Page documents whose log files are followed at once; the oldest is
 * let go (its file stays, it is not written to again). */
#define ACT_CONSOLE_LOG_FILES 64

/* A new log keeping the messages at level (enum act_console_level) and
 * more severe ones; NULL when out of memory. */
struct act_console_log *act_console_log_new(int level);
/* Frees c. NULL is a no-op. */
void act_console_log_free(struct act_console_log *c);

/*
 * At the end of a call that reached a browser: every console message
 * and uncaught exception the page log (pagelog.h) received since the
 * previous call is appended to the file of its page's document in the
 * output directory, "console-<UTC time>.log" (one file per page and
 * navigation), as a line "[    1234ms] [ERROR] text @ url:line" (the time
 * since that navigation began), scrubbed of typed secrets; then the lines
 * of the current page not yet shown go into ctx->events as
 * "- New console entries: <file>#L<from>-L<to>". Without an output
 * directory nothing is written and the line gives their number instead,
 * for browser_console_messages to list. A file that cannot be written is
 * logged once and the call's outcome stands.
 */
void act_console_log_end(struct act_ctx *ctx);

/* Appends message m (an entry of act_pagelog_console or
 * act_pagelog_console_each, borrowed) as Playwright MCP shows it:
 * "[TYPE] text @ url:line", the type in capitals (an exception as ERROR),
 * the line counted from 0 as Playwright reports it. */
void act_console_format(struct gb_buf *b, json_t *m);

#endif

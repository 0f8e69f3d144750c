/*
 * console_log.c - Playwright MCP's console log files and the answer's
 * "- New console entries: ..." event (console_log.h).
 *
 * DESIGN
 *
 * The page log (pagelog.c) numbers every console message it receives;
 * this log keeps the number of the last one it wrote, so each message is
 * written once, at the end of the first call after it came. A page's
 * document (its CDP session and navigation count) has a file of its own,
 * named when its first message is written; each file counts the lines
 * written and the lines an answer has shown, and an answer shows the
 * current page's lines in between. Console text is the page's: it goes
 * into the file scrubbed of typed secrets, and never into the answer
 * (which names the file and the lines only).
 */
#include "actions/console_log.h"

#include "actions/actions-private.h"
#include "actions/pagelog.h"
#include "common/log.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct clog_file {
	char sid[64];
	unsigned nav;
	char name[128]; /* in the output directory; "" until the first line, or without one */
	double start_ms;
	unsigned lines;          /* written (or, without an output directory, counted) */
	unsigned reported_lines; /* shown in an answer */
	unsigned entries;
	unsigned reported_entries;
	int failed; /* could not be written: not tried again */
};

struct act_console_log {
	json_int_t seq; /* the newest message written */
	int level;      /* enum act_console_level: kept at it and more severe */
	struct clog_file files[ACT_CONSOLE_LOG_FILES];
	size_t n;
};

struct act_console_log *act_console_log_new(int level)
{
	struct act_console_log *c = calloc(1, sizeof(*c));

	if (c)
		c->level = level;
	return c;
}

void act_console_log_free(struct act_console_log *c)
{
	free(c);
}

void act_console_format(struct gb_buf *b, json_t *m)
{
	const char *type = gb_or(json_string_value(json_object_get(m, "type")), "log");
	const char *c;

	if (!strcmp(type, "exception"))
		type = "error";
	gb_buf_appendf(b, "[");
	for (c = type; *c; c++)
		gb_buf_appendf(b, "%c", *c >= 'a' && *c <= 'z' ? *c - 'a' + 'A' : *c);
	gb_buf_appendf(b, "] %s", gb_or(json_string_value(json_object_get(m, "text")), ""));
	if (json_object_get(m, "url"))
		gb_buf_appendf(b, " @ %s:%lld", json_string_value(json_object_get(m, "url")),
		               (long long)json_integer_value(json_object_get(m, "line")) - 1);
}

/* The file of page sid's document nav, made when there is none (the
 * oldest followed is let go when all slots are taken). */
static struct clog_file *file_for(struct act_console_log *c, struct act_pagelog *l, const char *sid,
                                  unsigned nav, double first_ms)
{
	struct clog_file *f;
	size_t i;

	for (i = c->n; i > 0; i--)
		if (c->files[i - 1].nav == nav && !strcmp(c->files[i - 1].sid, sid))
			return &c->files[i - 1];
	if (c->n == ACT_CONSOLE_LOG_FILES)
		memmove(&c->files[0], &c->files[1], sizeof(c->files[0]) * --c->n);
	f = &c->files[c->n++];
	memset(f, 0, sizeof(*f));
	snprintf(f->sid, sizeof(f->sid), "%s", sid);
	f->nav = nav;
	f->start_ms = act_pagelog_nav_started_ms(l, sid, nav);
	if (f->start_ms <= 0 || f->start_ms > first_ms)
		f->start_ms = first_ms;
	return f;
}

struct flush {
	struct act_ctx *ctx;
	struct act_console_log *c;
};

/* Writes one message of the page log into its document's file. */
static void write_entry(void *user, json_t *e)
{
	struct flush *fl = user;
	struct act_ctx *ctx = fl->ctx;
	struct act_console_log *c = fl->c;
	const char *sid = json_string_value(json_object_get(e, "sid"));
	double at = json_number_value(json_object_get(e, "time"));
	struct clog_file *f;
	struct gb_buf line;
	char *clean;
	const char *text;
	unsigned n = 1;
	size_t i;

	if (!sid ||
	    act_console_level_parse(json_string_value(json_object_get(e, "level"))) > c->level)
		return;
	f = file_for(c, ctx->as->pagelog, sid,
	             (unsigned)json_integer_value(json_object_get(e, "nav")), at);
	gb_buf_init(&line, 64u << 10);
	gb_buf_appendf(&line, "[%8lldms] ", (long long)(at > f->start_ms ? at - f->start_ms : 0));
	act_console_format(&line, e);
	clean = act_secrets_scrub_text(ctx->as, line.data ? line.data : "");
	text = clean ? clean : gb_or(line.data, "");
	for (i = 0; text[i]; i++)
		n += text[i] == '\n';
	f->entries++;
	f->lines += n;
	if (ctx->as->output_dir && !f->failed) {
		if (!f->name[0] &&
		    act_output_fresh_name(ctx, "console", "log", f->name, sizeof(f->name)) < 0)
			f->failed = 1;
		if (!f->failed && (act_output_save(ctx, f->name, 1, text, strlen(text)) < 0 ||
		                   act_output_save(ctx, f->name, 1, "\n", 1) < 0)) {
			f->failed = 1;
			GB_LOGW("actions", "cannot write the console log %s/%s: %s",
			        ctx->as->output_dir, f->name, strerror(errno));
		}
	}
	free(clean);
	gb_buf_free(&line);
}

void act_console_log_end(struct act_ctx *ctx)
{
	struct act_console_log *c = ctx->as->console_log;
	struct flush fl = { ctx, c };
	struct gb_buf lines;
	size_t i;

	if (!c || !ctx->as->pagelog || !ctx->psid || !ctx->psid[0])
		return;
	c->seq = act_pagelog_console_each(ctx->as->pagelog, c->seq, write_entry, &fl);
	gb_buf_init(&lines, ctx->events.max_bytes);
	for (i = 0; i < c->n; i++) {
		struct clog_file *f = &c->files[i];
		char link[4300];

		if (strcmp(f->sid, ctx->psid) != 0 || f->entries == f->reported_entries)
			continue;
		if (lines.len)
			gb_buf_appendf(&lines, "\n");
		if (f->name[0] && !f->failed) {
			act_output_link(ctx, f->name, link, sizeof(link));
			gb_buf_appendf(&lines, "- New console entries: %s#L%u", link,
			               f->reported_lines + 1);
			if (f->lines > f->reported_lines + 1)
				gb_buf_appendf(&lines, "-L%u", f->lines);
		} else {
			gb_buf_appendf(
			    &lines,
			    "- New console entries: %u (browser_console_messages lists them)",
			    f->entries - f->reported_entries);
		}
		f->reported_lines = f->lines;
		f->reported_entries = f->entries;
	}
	/* first, as Playwright MCP lists them: the downloads come after */
	if (lines.len && ctx->events.len) {
		gb_buf_appendf(&lines, "\n");
		gb_buf_append(&lines, ctx->events.data, ctx->events.len);
	}
	if (lines.len) {
		gb_buf_free(&ctx->events);
		ctx->events = lines;
	} else {
		gb_buf_free(&lines);
	}
}

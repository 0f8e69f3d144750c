/*
 * files.c - the two hooks by which the pipeline runs the trackers of
 * what moves between a session's pages and the tenant: the page log
 * (pagelog.c: console messages, requests) and the download area
 * (downloads.c), and the console log files the answers point at
 * (console_log.c). Each follows one browser: when the session's browser is
 * one they have not seen (the first, or one launched after a crash or a
 * close), they attach to it before anything acts on it.
 */
#include "actions/actions-private.h"
#include "actions/console_log.h"
#include "actions/files-private.h"
#include "actions/pagelog.h"

#include <stdio.h>
#include <string.h>

int act_files_attach(struct act_session *as, char *err, size_t errlen)
{
	char why[512];

	if (!as->sess || !as->pagelog || !as->downloads ||
	    !strcmp(as->files_browser, sess_id(as->sess)))
		return 0;
	as->files_browser[0] = '\0';
	if (act_pagelog_attach(as->pagelog, as->sess) < 0) {
		snprintf(err, errlen, "cannot follow the browser's pages");
		return -1;
	}
	if (act_downloads_attach(as, why, sizeof(why)) < 0) {
		snprintf(err, errlen, "%s; the browser is not used without its download area", why);
		return -1;
	}
	snprintf(as->files_browser, sizeof(as->files_browser), "%s", sess_id(as->sess));
	return 0;
}

int act_files_begin(struct act_ctx *ctx)
{
	struct act_session *as = ctx->as;
	char err[600];

	if (act_files_attach(as, err, sizeof(err)) < 0)
		return act_fail(ctx, "browser_error", "%s", err);
	if (as->sess && as->pagelog && as->downloads && ctx->def->effect == ACT_EFFECT_PAGE)
		act_downloads_call_begin(ctx);
	return 0;
}

void act_files_end(struct act_ctx *ctx)
{
	struct act_session *as = ctx->as;

	if (as->sess && !strcmp(as->files_browser, sess_id(as->sess)))
		act_downloads_call_end(ctx);
}

void act_files_answer(struct act_ctx *ctx)
{
	struct act_session *as = ctx->as;

	if (as->sess && ctx->page && sess_get_state(as->sess) != SESS_FAILED &&
	    !strcmp(as->files_browser, sess_id(as->sess)))
		act_console_log_end(ctx);
}

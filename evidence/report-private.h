/*
 * report-private.h - shared by report.c (gathering the records, the
 * page around them) and report_render.c (one record as HTML).
 */
#ifndef GB_EVIDENCE_REPORT_PRIVATE_H
#define GB_EVIDENCE_REPORT_PRIVATE_H

#include "evidence/audit.h"
#include "evidence/evidence-private.h"
#include "evidence/evidence.h"

#include "common/util.h"

#include <jansson.h>
#include <stddef.h>

/* One report being built. */
struct report {
	const char *data_dir;
	char tenant[EVID_MAX_NAME_BYTES + 1];
	const struct evid_report_opts *opts;
	struct gb_buf *out;          /* where rpt_*() append: &body, then the page */
	struct gb_buf body;          /* the timeline */
	struct gb_buf styles;        /* one CSS rule per embedded image */
	struct evid_keyset embedded; /* images already in styles */
	json_t *approvals;           /* operation id -> [approval record bodies] */
	json_t *session_info;        /* session id -> {client, flow} of its session_opened */
	json_t *op_session;          /* operation id -> the session of its tool call */
	json_t *refused_ops;         /* operation ids counted in refusals */
	json_t *held_ops;            /* operation ids counted in held */
	struct evid_verify_report vrep;
	int verify_ran;       /* vrep is meaningful */
	char verify_err[512]; /* why verification could not run */
	size_t shown;         /* records in the report */
	size_t actions;
	size_t failed;
	size_t refusals;    /* actions the policy refused or cut short */
	size_t held;        /* actions held for a person's approval */
	size_t approvals_n; /* approvals granted or denied */
	size_t blocked;
	size_t unreadable; /* lines that could not be parsed */
	json_t *sessions;  /* session ids seen, in order */
	char first_time[40];
	char last_time[40];
	int oom;
};

/* Appends trusted text (markup written here, numbers) to r->out. */
void rpt_raw(struct report *r, const char *s);
void rpt_printf(struct report *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Appends untrusted text, HTML-escaped; NULL appends "—". */
void rpt_text(struct report *r, const char *s);

/* Appends one record's timeline entry. */
void rpt_render_record(struct report *r, const struct evid_record *rec);

#endif

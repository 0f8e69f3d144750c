/*
 * session.c - the entry point of trace/: reads a session back from its
 * tenant's audit log, hands it to the builder of the format asked for,
 * and audits the export. What is exported is what the trail holds (its
 * records are redacted when written); nothing is read from a browser.
 */
#include "trace/trace-private.h"

#include "common/fs.h"
#include "evidence/audit.h"
#include "evidence/evidence.h"

#include <errno.h>
#include <sodium.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

int64_t trace_time_ms(const char *iso)
{
	struct tm tm;
	const char *rest;
	int64_t ms = 0;
	int digits = 0;

	if (!iso)
		return 0;
	memset(&tm, 0, sizeof(tm));
	rest = strptime(iso, "%Y-%m-%dT%H:%M:%S", &tm);
	if (!rest)
		return 0;
	if (*rest == '.') {
		for (rest++; *rest >= '0' && *rest <= '9'; rest++, digits++)
			if (digits < 3)
				ms = ms * 10 + (*rest - '0');
		for (; digits < 3; digits++)
			ms *= 10;
	}
	return (int64_t)timegm(&tm) * 1000 + ms;
}

void trace_time_iso(int64_t ms, char *buf, size_t buflen)
{
	time_t t = (time_t)(ms / 1000);
	struct tm tm;
	char base[24];

	gmtime_r(&t, &tm);
	strftime(base, sizeof(base), "%Y-%m-%dT%H:%M:%S", &tm);
	snprintf(buf, buflen, "%s.%03dZ", base, (int)(ms % 1000));
}

void trace_action_times(const json_t *rec, int64_t *start_ms, int64_t *end_ms)
{
	json_t *body = json_object_get(rec, "body");
	json_int_t d = json_integer_value(json_object_get(body, "duration_ms"));

	json_int_t started = json_integer_value(json_object_get(body, "started_at_ms"));

	if (d < 0)
		d = 0;
	if (started > 0) {
		*start_ms = started;
		*end_ms = started + d;
		return;
	}
	/* records written before started_at_ms: their time, less the duration */
	*end_ms = trace_time_ms(json_string_value(json_object_get(rec, "time")));
	if (d > *end_ms)
		d = 0;
	*start_ms = *end_ms - d;
}

json_t *trace_artifact(const json_t *rec, const char *kind)
{
	json_t *arts = json_object_get(rec, "artifacts");
	json_t *a;
	size_t i;

	json_array_foreach(arts, i, a)
	{
		const char *k = json_string_value(json_object_get(a, "kind"));

		if (k && !strcmp(k, kind) && json_is_true(json_object_get(a, "valid")))
			return a;
	}
	return NULL;
}

int trace_artifact_bytes(const struct trace_session *s, const char *sha256, unsigned char **data,
                         size_t *len, char *err, size_t errlen)
{
	return evid_artifact_read(s->opts->data_dir, s->tenant, sha256, data, len, err, errlen);
}

json_t *trace_exchanges(const struct trace_session *s, const json_t *rec)
{
	json_t *art = trace_artifact(rec, "network_log");
	const char *sha = json_string_value(json_object_get(art, "sha256"));
	unsigned char *data = NULL;
	json_t *log = NULL;
	json_t *out = NULL;
	char err[256];
	size_t len = 0;

	if (!sha || trace_artifact_bytes(s, sha, &data, &len, err, sizeof(err)) != 0)
		goto out;
	log = json_loadb((const char *)data, len, 0, NULL);
	out = json_object_get(log, "exchanges");
	if (json_is_array(out) && json_array_size(out))
		json_incref(out);
	else
		out = NULL;
out:
	json_decref(log);
	free(data);
	return out;
}

int trace_is_replayable(const json_t *rec)
{
	static const char *const tools[] = {
		"browser_navigate",      "browser_click",     "browser_type",
		"browser_select_option", "browser_press_key", "browser_hover",
		"browser_wait_for",      "browser_evaluate",  NULL
	};
	json_t *body = json_object_get(rec, "body");
	const char *tool = json_string_value(json_object_get(body, "tool"));
	size_t i;

	if (!tool || !json_is_true(json_object_get(body, "ok")))
		return 0;
	for (i = 0; tools[i]; i++)
		if (!strcmp(tool, tools[i]))
			return 1;
	return 0;
}

int trace_session_load(const struct trace_export_opts *opts, struct trace_session *s, char *err,
                       size_t errlen)
{
	json_t *rec;
	size_t i;
	int rc = 0;

	memset(s, 0, sizeof(*s));
	s->opts = opts;
	s->actions = json_array();
	if (!opts->data_dir || (!opts->session && !opts->flow && !opts->agent_session)) {
		gb_set_error(err, errlen, "no session given: use --session ID (or --flow NAME)");
		rc = -EINVAL;
		goto out;
	}
	if (opts->tenant || opts->session)
		rc = evid_reader_tenant(opts->data_dir, opts->tenant, opts->session, s->tenant,
		                        sizeof(s->tenant), err, errlen);
	else
		snprintf(s->tenant, sizeof(s->tenant), "local");
	if (rc == 0 && opts->session)
		snprintf(s->session, sizeof(s->session), "%s", opts->session);
	else if (rc == 0)
		rc = evid_session_opened_by(opts->data_dir, s->tenant,
		                            opts->agent_session ? "agent_session" : "flow",
		                            opts->agent_session ? opts->agent_session : opts->flow,
		                            s->session, sizeof(s->session), err, errlen);
	if (rc == 0)
		rc = evid_session_records(opts->data_dir, s->tenant, s->session, &s->records, err,
		                          errlen);
	if (rc != 0)
		goto out;
	json_array_foreach(s->records, i, rec)
	{
		const char *kind = json_string_value(json_object_get(rec, "kind"));
		int64_t t = trace_time_ms(json_string_value(json_object_get(rec, "time")));
		json_t *body = json_object_get(rec, "body");

		if (!s->first_ms || t < s->first_ms)
			s->first_ms = t;
		if (t > s->last_ms)
			s->last_ms = t;
		if (kind && !strcmp(kind, EVID_AUDIT_SESSION_OPENED) &&
		    json_is_string(json_object_get(body, "flow")))
			s->flow = json_string_value(json_object_get(body, "flow"));
		if (kind && !strcmp(kind, EVID_AUDIT_TOOL_CALL) &&
		    json_is_string(json_object_get(body, "tool"))) {
			int64_t start_ms;
			int64_t end_ms;

			json_array_append(s->actions, rec);
			/* a call that launched the browser began before the session's record */
			trace_action_times(rec, &start_ms, &end_ms);
			if (start_ms && start_ms < s->first_ms)
				s->first_ms = start_ms;
		}
	}
out:
	return rc;
}

void trace_session_free(struct trace_session *s)
{
	json_decref(s->actions);
	json_decref(s->records);
	s->actions = NULL;
	s->records = NULL;
}

/* The name of a format in the "exported" record. */
static const char *format_name(enum trace_format f)
{
	switch (f) {
	case TRACE_FORMAT_PLAYWRIGHT_TRACE:
		return "playwright_trace";
	case TRACE_FORMAT_HAR:
		return "har";
	case TRACE_FORMAT_FLOW:
		return "flow";
	case TRACE_FORMAT_SPEC:
		return "playwright_spec";
	}
	return "unknown";
}

/* Appends the signed record of this export to the tenant's log. */
static int audit_export(const struct trace_session *s, const unsigned char *out, size_t len,
                        char *err, size_t errlen)
{
	struct evid_audit_entry e = { 0 };
	struct evid_audit *a = NULL;
	unsigned char digest[crypto_hash_sha256_BYTES];
	char hex[65];
	int rc;

	crypto_hash_sha256(digest, out, len);
	gb_hex(digest, sizeof(digest), hex);
	rc = evid_audit_open(s->opts->data_dir, &a, err, errlen);
	if (rc != 0)
		goto out;
	e.tenant = s->tenant;
	e.kind = "exported";
	e.actor.tenant = s->tenant;
	e.actor.user = getenv("USER");
	e.actor.token = "cli";
	e.session_id = s->session;
	e.body = json_pack("{s:s, s:s?, s:s, s:I, s:I}", "format", format_name(s->opts->format),
	                   "output", s->opts->output_description, "sha256", hex, "bytes",
	                   (json_int_t)len, "actions", (json_int_t)json_array_size(s->actions));
	rc = evid_audit_append(a, &e, NULL, err, errlen);
	json_decref(e.body);
out:
	evid_audit_close(a);
	return rc;
}

int trace_export(const struct trace_export_opts *opts, unsigned char **out, size_t *len, char *err,
                 size_t errlen)
{
	struct trace_session s;
	int rc;

	*out = NULL;
	*len = 0;
	rc = trace_session_load(opts, &s, err, errlen);
	if (rc != 0)
		goto out;
	switch (opts->format) {
	case TRACE_FORMAT_PLAYWRIGHT_TRACE:
		rc = trace_build_playwright(&s, out, len, err, errlen);
		break;
	case TRACE_FORMAT_HAR:
		rc = trace_build_har(&s, out, len, err, errlen);
		break;
	case TRACE_FORMAT_FLOW:
		rc = trace_build_flow(&s, out, len, err, errlen);
		break;
	case TRACE_FORMAT_SPEC:
		rc = trace_build_spec(&s, out, len, err, errlen);
		break;
	}
	if (rc == 0 && opts->audit)
		rc = audit_export(&s, *out, *len, err, errlen);
	if (rc != 0) {
		free(*out);
		*out = NULL;
		*len = 0;
	}
out:
	trace_session_free(&s);
	return rc;
}

int trace_export_write(const struct trace_export_opts *opts, const char *path, char *err,
                       size_t errlen)
{
	unsigned char *data = NULL;
	size_t len = 0;
	int rc;

	rc = trace_export(opts, &data, &len, err, errlen);
	if (rc != 0)
		goto out;
	if (!strcmp(path, "-")) {
		rc = fwrite(data, 1, len, stdout) == len && fflush(stdout) == 0 ? 0 : -EIO;
		if (rc != 0)
			gb_set_error(err, errlen, "could not write the export to standard output");
		goto out;
	}
	rc = gb_fs_write_replace(path, data, len, err, errlen);
out:
	free(data);
	return rc;
}

/*
 * trail.c - searching a tenant's audit trail for the web console: the
 * records of a session, a tool or a verdict, newest first (audit.h).
 * Reads only; the chain's verification is audit_verify.c's job.
 */
#include "evidence/audit.h"
#include "evidence/evidence-private.h"
#include "evidence/evidence.h"

#include <stdlib.h>
#include <string.h>

#define TRAIL_LIMIT_DEFAULT 200
#define TRAIL_LIMIT_MAX 5000

/* What one day file's lines are matched against. */
struct trail_scan {
	const struct evid_trail_query *q;
	json_t *day; /* the matches of this file, oldest first */
};

/* See audit.h. */
const char *evid_trail_verdict(json_t *rec)
{
	const char *kind = json_string_value(json_object_get(rec, "kind"));
	json_t *body = json_object_get(rec, "body");
	const char *code;

	if (!kind || strcmp(kind, EVID_AUDIT_TOOL_CALL) != 0)
		return kind ? kind : "";
	if (json_is_true(json_object_get(body, "ok")))
		return "ok";
	code = json_string_value(json_object_get(json_object_get(body, "error"), "code"));
	return code ? code : "failed";
}

/* Whether want (NULL: anything) equals have. */
static int matches(const char *want, const char *have)
{
	return !want || !want[0] || (have && !strcmp(want, have));
}

/* evid_line_cb: keeps the complete lines that parse and match. */
static int scan_line(const char *line, size_t len, unsigned long lineno, int complete, int too_long,
                     void *user)
{
	struct trail_scan *sc = user;
	const struct evid_trail_query *q = sc->q;
	json_t *rec;

	(void)lineno;
	if (!complete || too_long || !len)
		return 0;
	rec = json_loadb(line, len, JSON_REJECT_DUPLICATES, NULL);
	if (!json_is_object(rec))
		goto drop;
	/* a session is named by its browser session's id (the records'
	 * "session") or by its agent session's (their body.agent_session) */
	if ((!matches(q->session, json_string_value(json_object_get(rec, "session"))) &&
	     !(q->session &&
	       matches(q->session, json_string_value(json_object_get(json_object_get(rec, "body"),
	                                                             "agent_session"))))) ||
	    !matches(q->operation, json_string_value(json_object_get(rec, "operation"))) ||
	    !matches(q->tool,
	             json_string_value(json_object_get(json_object_get(rec, "body"), "tool"))) ||
	    !matches(q->verdict, evid_trail_verdict(rec)))
		goto drop;
	json_array_append_new(sc->day, rec);
	return 0;
drop:
	json_decref(rec);
	return 0;
}

/* See audit.h. */
int evid_trail_search(const char *data_dir, const struct evid_trail_query *q, json_t **out,
                      char *err, size_t errlen)
{
	char(*days)[EVID_DAY_NAME_BYTES] = NULL;
	size_t n = 0, limit = q->limit ? q->limit : TRAIL_LIMIT_DEFAULT;
	struct trail_scan sc = { q, NULL };
	char dir[4096], path[4200];
	json_t *all = json_array();
	size_t i, j;
	int rc;

	*out = NULL;
	if (limit > TRAIL_LIMIT_MAX)
		limit = TRAIL_LIMIT_MAX;
	rc = evid_audit_dir_path(data_dir, q->tenant, dir, sizeof(dir), err, errlen);
	if (rc < 0)
		goto out;
	rc = evid_audit_list_days(dir, &days, &n, err, errlen);
	if (rc == -EVID_ENOENT) {
		rc = 0;
		n = 0;
	} else if (rc < 0) {
		goto out;
	}
	for (i = n; i-- > 0 && json_array_size(all) < limit;) {
		snprintf(path, sizeof(path), "%s/%s", dir, days[i]);
		sc.day = json_array();
		rc = evid_read_lines(path, scan_line, &sc, err, errlen);
		if (rc < 0 && rc != -EVID_ENOENT) {
			json_decref(sc.day);
			goto out;
		}
		rc = 0;
		for (j = json_array_size(sc.day); j-- > 0 && json_array_size(all) < limit;)
			json_array_append(all, json_array_get(sc.day, j));
		json_decref(sc.day);
	}
	*out = all;
	all = NULL;
out:
	free(days);
	json_decref(all);
	return rc;
}

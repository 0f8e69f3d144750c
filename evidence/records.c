/*
 * records.c - a session's records, read back for those who turn them
 * into other formats (a Playwright trace, a HAR file, a test): which
 * tenant's log holds a session, every record of it in chain order, the
 * newest session of a flow, and an artifact checked against its hash.
 * Reads only; works on a read-only copy of the data dir. Lines that do
 * not parse are skipped here: `glassbox audit verify` is the place that
 * names them.
 */
#include "evidence/audit.h"
#include "evidence/evidence-private.h"
#include "evidence/evidence.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define PATH_BYTES 4096

/* See evidence-private.h. */
int evid_tenant_each_line(const char *data_dir, const char *tenant, const char *since,
                          evid_line_cb cb, void *user, char *err, size_t errlen)
{
	char dir[PATH_BYTES];
	char path[PATH_BYTES + EVID_DAY_NAME_BYTES];
	char(*names)[EVID_DAY_NAME_BYTES] = NULL;
	size_t n = 0;
	size_t i;
	int lock_fd = -1;
	int rc;

	rc = evid_audit_dir_path(data_dir, tenant, dir, sizeof(dir), err, errlen);
	if (rc != 0)
		goto out;
	lock_fd = evid_audit_lock_shared(dir);
	rc = evid_audit_list_days(dir, &names, &n, err, errlen);
	if (rc == -EVID_ENOENT)
		gb_set_error(err, errlen, "tenant %s has no audit log under %s", tenant, data_dir);
	for (i = 0; i < n && rc == 0; i++) {
		if (since && strncmp(names[i], since, 10) < 0)
			continue; /* a whole day before the period */
		snprintf(path, sizeof(path), "%s/%s", dir, names[i]);
		rc = evid_read_lines(path, cb, user, err, errlen);
	}
out:
	if (lock_fd >= 0)
		close(lock_fd);
	free(names);
	return rc;
}

struct session_find {
	const char *session;
	int found;
};

static int find_session_line(const char *line, size_t len, unsigned long lineno, int complete,
                             int too_long, void *user)
{
	struct session_find *sf = user;
	struct evid_record rec;

	(void)lineno;
	if (!complete || too_long || evid_record_parse(line, len, &rec, NULL, 0) != 0)
		return 0;
	sf->found = rec.session && !strcmp(rec.session, sf->session);
	evid_record_free(&rec);
	return sf->found;
}

int evid_session_tenant(const char *data_dir, const char *session, char *tenant, size_t tenantlen,
                        char *err, size_t errlen)
{
	char tenants[PATH_BYTES];
	char dir[PATH_BYTES];
	char path[PATH_BYTES + EVID_DAY_NAME_BYTES];
	char(*names)[EVID_DAY_NAME_BYTES] = NULL;
	struct session_find sf = { session, 0 };
	struct dirent *de;
	size_t n = 0;
	size_t i;
	DIR *d;
	int rc = -EVID_ENOENT;

	snprintf(tenants, sizeof(tenants), "%s/tenants", data_dir);
	d = opendir(tenants);
	while (d && !sf.found) {
		de = readdir(d);
		if (!de)
			break;
		if (!gb_fs_name_is_safe(de->d_name) ||
		    evid_audit_dir_path(data_dir, de->d_name, dir, sizeof(dir), NULL, 0) != 0 ||
		    evid_audit_list_days(dir, &names, &n, NULL, 0) != 0)
			continue;
		for (i = n; i > 0 && !sf.found; i--) {
			snprintf(path, sizeof(path), "%s/%s", dir, names[i - 1]);
			evid_read_lines(path, find_session_line, &sf, NULL, 0);
		}
		free(names);
		names = NULL;
		if (sf.found)
			rc = gb_pathf(tenant, tenantlen, "%s", de->d_name) == 0 ? 0 : -EVID_EINVAL;
	}
	if (d)
		closedir(d);
	if (rc != 0)
		gb_set_error(err, errlen,
		             "no tenant under %s has a record of session %.80s: check "
		             "the session id, or give --tenant",
		             data_dir, session);
	return rc;
}

int evid_reader_tenant(const char *data_dir, const char *tenant, const char *session, char *out,
                       size_t outlen, char *err, size_t errlen)
{
	if (!tenant)
		return evid_session_tenant(data_dir, session, out, outlen, err, errlen);
	if (!gb_fs_name_is_safe(tenant) || gb_pathf(out, outlen, "%s", tenant) != 0) {
		gb_set_error(err, errlen, "\"%.80s\" is not a tenant name", tenant);
		return -EVID_EINVAL;
	}
	return 0;
}

struct session_collect {
	const char *session;
	json_t *records;
	int oom;
};

static int collect_line(const char *line, size_t len, unsigned long lineno, int complete,
                        int too_long, void *user)
{
	struct session_collect *sc = user;
	struct evid_record rec;

	(void)lineno;
	if (!complete || too_long || evid_record_parse(line, len, &rec, NULL, 0) != 0)
		return 0;
	if (rec.session && !strcmp(rec.session, sc->session) &&
	    json_array_append(sc->records, rec.rec) != 0)
		sc->oom = 1;
	evid_record_free(&rec);
	return sc->oom ? -EVID_ENOMEM : 0;
}

int evid_session_records(const char *data_dir, const char *tenant, const char *session,
                         json_t **records, char *err, size_t errlen)
{
	struct session_collect sc = { session, json_array(), 0 };
	int rc;

	*records = NULL;
	if (!session || !session[0] || !sc.records) {
		gb_set_error(err, errlen, "no session id given: use --session ID");
		rc = -EVID_EINVAL;
		goto out;
	}
	rc = evid_tenant_each_line(data_dir, tenant, NULL, collect_line, &sc, err, errlen);
	if (rc == 0 && json_array_size(sc.records) == 0) {
		gb_set_error(err, errlen,
		             "no records of session %.80s in tenant %s: check the session id "
		             "(glassbox report --tenant %s lists the sessions)",
		             session, tenant, tenant);
		rc = -EVID_ENOENT;
	}
	if (rc == -EVID_ENOMEM)
		gb_set_error(err, errlen, "out of memory reading the records of session %.80s",
		             session);
	if (rc == 0) {
		*records = sc.records;
		sc.records = NULL;
	}
out:
	json_decref(sc.records);
	return rc;
}

struct flow_find {
	const char *member;
	const char *value;
	char session[EVID_MAX_NAME_BYTES + 1];
};

static int flow_line(const char *line, size_t len, unsigned long lineno, int complete, int too_long,
                     void *user)
{
	struct flow_find *ff = user;
	struct evid_record rec;
	const char *flow;

	(void)lineno;
	if (!complete || too_long || evid_record_parse(line, len, &rec, NULL, 0) != 0)
		return 0;
	flow = json_string_value(json_object_get(rec.body, ff->member));
	if (rec.session && !strcmp(rec.kind, EVID_AUDIT_SESSION_OPENED) && flow &&
	    !strcmp(flow, ff->value))
		snprintf(ff->session, sizeof(ff->session), "%s", rec.session);
	evid_record_free(&rec);
	return 0;
}

int evid_session_opened_by(const char *data_dir, const char *tenant, const char *member,
                           const char *value, char *session, size_t sessionlen, char *err,
                           size_t errlen)
{
	struct flow_find ff;
	int rc;

	memset(&ff, 0, sizeof(ff));
	ff.member = member;
	ff.value = value;
	rc = evid_tenant_each_line(data_dir, tenant, NULL, flow_line, &ff, err, errlen);
	if (rc == 0 && !ff.session[0]) {
		if (!strcmp(member, "flow"))
			gb_set_error(err, errlen,
			             "no run of flow \"%.100s\" in tenant %s: check the flow's "
			             "name (its \"name\" member), or give --session ID",
			             value, tenant);
		else
			gb_set_error(err, errlen, "no session of tenant %s has %s \"%.100s\"",
			             tenant, member, value);
		rc = -EVID_ENOENT;
	}
	if (rc == 0 && gb_pathf(session, sessionlen, "%s", ff.session) != 0)
		rc = -EVID_EINVAL;
	return rc;
}

int evid_artifact_read(const char *data_dir, const char *tenant, const char *sha256,
                       unsigned char **data, size_t *len, char *err, size_t errlen)
{
	return evid_artifact_load(data_dir, tenant, 1, sha256, data, len, NULL, err, errlen);
}

/*
 * retention.c - purging a tenant's trail older than its retention.
 *
 * The log is append-only, so records go by whole day files: every file
 * dated before the cutoff (today - days, UTC) is removed, oldest first.
 * Before anything is removed, a purge record is appended and fsynced; it
 * names, for each file, its first and last seq and the last record's
 * hash. The verifier accepts a chain that starts at record N only when a
 * valid purge record names N-1 and the hash the first kept record links
 * to; since it lists every file, a purge interrupted half-way (some files
 * removed) still verifies, and running it again finishes it.
 *
 * Artifacts go when no kept record references them and none of their
 * files (the bytes and each metadata record) changed since the cutoff, so
 * an artifact stored again recently, or one the running pipeline has
 * stored but not yet logged, stays. Their index rows go with them.
 *
 * Runs with the tenant's log locked (evid_audit_with_lock), so appends by
 * this process and others wait until it is done.
 */
#include "evidence/audit.h"
#include "evidence/evidence-private.h"
#include "evidence/evidence.h"
#include "evidence/index.h"

#include "common/log.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define PATH_BYTES 4096
#define DAY_SECONDS 86400

/* What one purge does. */
struct purge_job {
	unsigned days;
	struct evid_purge_report *rep;
	char dir[PATH_BYTES];
	int64_t cutoff_time;     /* midnight UTC starting the cutoff day */
	json_t *files;           /* [{name, first_seq, last_seq, last_hash, records}] */
	struct evid_keyset kept; /* artifacts kept records reference */
	char (*due)[66];         /* artifact keys to remove */
	size_t ndue;
	size_t capdue;
};

/* What a scan of one day file finds. */
struct file_scan {
	struct purge_job *job;
	int collect_refs; /* add referenced artifacts to job->kept */
	uint64_t first_seq;
	uint64_t last_seq;
	uint64_t records;
	char last_hash[65];
	unsigned long bad_line; /* first line that does not parse (0: none) */
	int oom;
};

static int scan_line(const char *line, size_t len, unsigned long lineno, int complete, int too_long,
                     void *user)
{
	struct file_scan *fs = user;
	struct evid_record r;
	char key[66];
	json_t *a;
	size_t i;

	if (!complete || too_long || evid_record_parse(line, len, &r, NULL, 0) != 0) {
		fs->bad_line = lineno;
		return 1;
	}
	if (!fs->records)
		fs->first_seq = r.seq;
	fs->records++;
	fs->last_seq = r.seq;
	memcpy(fs->last_hash, r.hash, 65);
	json_array_foreach(fs->collect_refs ? r.artifacts : NULL, i, a)
	{
		const char *sha = json_string_value(json_object_get(a, "sha256"));

		if (!evid_sha256_hex_is_valid(sha))
			continue;
		snprintf(key, sizeof(key), "%c%s",
		         json_is_false(json_object_get(a, "valid")) ? 'i' : 'v', sha);
		if (evid_keyset_add(&fs->job->kept, key) < 0)
			fs->oom = 1;
	}
	evid_record_free(&r);
	return fs->oom ? -EVID_ENOMEM : 0;
}

/* Scans one day file; a damaged record stops the purge. */
static int scan_file(struct purge_job *job, const char *name, int collect_refs,
                     struct file_scan *fs, char *err, size_t errlen)
{
	char path[PATH_BYTES + EVID_DAY_NAME_BYTES];
	int rc;

	memset(fs, 0, sizeof(*fs));
	fs->job = job;
	fs->collect_refs = collect_refs;
	snprintf(path, sizeof(path), "%s/%s", job->dir, name);
	rc = evid_read_lines(path, scan_line, fs, err, errlen);
	if (rc == 1)
		gb_set_error(err, errlen,
		             "%s line %lu is damaged: nothing was purged; run "
		             "`glassbox audit verify` first",
		             path, fs->bad_line);
	if (rc == 1 || fs->oom)
		rc = fs->oom ? -EVID_ENOMEM : -EVID_EIO;
	return rc;
}

/* Newest mtime of the artifact file sha in dir and its metadata records
 * (<sha>.*), or -1 when the artifact file cannot be inspected. */
static int64_t newest_mtime(const char *dir, const char *sha, DIR *d)
{
	char path[PATH_BYTES + 128];
	struct dirent *de;
	struct stat st;
	int64_t newest = -1;

	for (;;) {
		de = readdir(d);
		if (!de)
			break;
		if (strncmp(de->d_name, sha, 64) != 0 ||
		    (de->d_name[64] != '\0' && de->d_name[64] != '.'))
			continue;
		if (gb_pathf(path, sizeof(path), "%s/%s", dir, de->d_name) != 0 ||
		    lstat(path, &st) != 0)
			continue;
		if ((int64_t)st.st_mtime > newest)
			newest = (int64_t)st.st_mtime;
	}
	return newest;
}

/* Adds an artifact key to the due list. */
static int add_due(struct purge_job *job, const char *key)
{
	char(*grown)[66];

	if (job->ndue == job->capdue) {
		job->capdue = job->capdue ? job->capdue * 2 : 64;
		grown = realloc(job->due, job->capdue * sizeof(*grown));
		if (!grown)
			return -EVID_ENOMEM;
		job->due = grown;
	}
	memcpy(job->due[job->ndue++], key, 66);
	return 0;
}

/* 1 when the artifact sha in dir, its bytes and each metadata record,
 * has not changed since the cutoff. */
static int unchanged_since_cutoff(const struct purge_job *job, const char *dir, const char *sha)
{
	DIR *d = opendir(dir);
	int64_t newest;

	if (!d)
		return 0;
	newest = newest_mtime(dir, sha, d);
	closedir(d);
	return newest >= 0 && newest < job->cutoff_time;
}

/* Adds the artifacts of one tree (artifacts/ or invalid/) that are due:
 * referenced by no kept record and unchanged since the cutoff. */
static int find_due_in(struct purge_job *job, const char *data_dir, const char *tenant, int valid)
{
	char tree[PATH_BYTES];
	char sub[PATH_BYTES + 8];
	char key[66];
	struct dirent *de;
	struct dirent *fe;
	DIR *t = NULL;
	DIR *d = NULL;
	int rc = 0;

	snprintf(tree, sizeof(tree), "%s/tenants/%s/%s", data_dir, tenant,
	         valid ? "artifacts" : "invalid");
	t = opendir(tree);
	if (!t)
		goto out;
	while (rc == 0) {
		de = readdir(t);
		if (!de)
			break;
		if (strlen(de->d_name) != 2 || de->d_name[0] == '.')
			continue;
		snprintf(sub, sizeof(sub), "%s/%s", tree, de->d_name);
		d = opendir(sub);
		while (d && rc == 0) {
			fe = readdir(d);
			if (!fe)
				break;
			if (!evid_sha256_hex_is_valid(fe->d_name))
				continue;
			key[0] = valid ? 'v' : 'i';
			memcpy(key + 1, fe->d_name, 65); /* 64 hex digits + NUL: checked */
			if (!evid_keyset_has(&job->kept, key) &&
			    unchanged_since_cutoff(job, sub, fe->d_name))
				rc = add_due(job, key);
		}
		if (d)
			closedir(d);
		d = NULL;
	}
out:
	if (t)
		closedir(t);
	return rc;
}

/* Removes one artifact: its bytes and all its metadata records. */
static int remove_artifact(const char *data_dir, const char *tenant, const char *key)
{
	char dir[PATH_BYTES];
	char path[PATH_BYTES + 128];
	struct dirent *de;
	DIR *d;
	int removed = 0;

	snprintf(dir, sizeof(dir), "%s/tenants/%s/%s/%.2s", data_dir, tenant,
	         key[0] == 'v' ? "artifacts" : "invalid", key + 1);
	d = opendir(dir);
	while (d) {
		de = readdir(d);
		if (!de)
			break;
		if (strncmp(de->d_name, key + 1, 64) != 0 ||
		    (de->d_name[64] != '\0' && de->d_name[64] != '.'))
			continue;
		if (gb_pathf(path, sizeof(path), "%s/%s", dir, de->d_name) == 0 &&
		    unlink(path) == 0 && de->d_name[64] == '\0')
			removed = 1;
	}
	if (d)
		closedir(d);
	return removed;
}

/* Removes the due artifacts and their index rows. */
static void remove_due(struct purge_job *job, const char *data_dir, const char *tenant)
{
	struct evid_index *ix = NULL;
	char err[1024];
	size_t i;

	if (evid_index_open(data_dir, &ix, err, sizeof(err)) != 0)
		GB_LOGW("evidence", "purge of %s: the index cannot be opened, its rows stay: %s",
		        tenant, err);
	for (i = 0; i < job->ndue; i++) {
		if (remove_artifact(data_dir, tenant, job->due[i]))
			job->rep->artifacts_removed++;
		if (ix && evid_index_remove(ix, tenant, job->due[i] + 1, err, sizeof(err)) != 0)
			GB_LOGW("evidence", "purge of %s: %s", tenant, err);
	}
	evid_index_close(ix);
}

/* Appends the purge record. */
static int write_purge_record(struct evid_audit *a, const char *tenant, struct purge_job *job,
                              char *err, size_t errlen)
{
	struct evid_audit_entry e;
	struct evid_audit_receipt receipt;
	json_t *body;
	int rc;

	body = json_pack("{s:I, s:s, s:O, s:I}", "days", (json_int_t)job->days, "cutoff",
	                 job->rep->cutoff, "files", job->files, "artifacts", (json_int_t)job->ndue);
	if (!body) {
		gb_set_error(err, errlen, "out of memory writing the purge record");
		rc = -EVID_ENOMEM;
		goto out;
	}
	memset(&e, 0, sizeof(e));
	e.tenant = tenant;
	e.kind = EVID_AUDIT_PURGE;
	e.actor.tenant = tenant;
	e.actor.user = "retention";
	e.body = body;
	rc = evid_audit_append_locked(a, &e, 1, &receipt, err, errlen);
	if (rc == 0)
		job->rep->purge_seq = receipt.seq;
out:
	json_decref(body);
	return rc;
}

/* Looks at every day file: the old ones are listed for removal, the
 * others give the artifacts that must stay. Returns how many are old. */
static int plan_files(struct purge_job *job, char (*names)[EVID_DAY_NAME_BYTES], size_t n,
                      size_t *nold, char *err, size_t errlen)
{
	struct file_scan fs;
	size_t i;
	int old;
	int rc = 0;

	*nold = 0;
	for (i = 0; i < n && rc == 0; i++) {
		old = strncmp(names[i], job->rep->cutoff, 10) < 0;
		rc = scan_file(job, names[i], !old, &fs, err, errlen);
		if (rc != 0 || !old)
			continue;
		(*nold)++;
		if (json_array_append_new(
		        job->files,
		        json_pack("{s:s, s:I, s:I, s:s, s:I}", "name", names[i], "first_seq",
		                  (json_int_t)fs.first_seq, "last_seq", (json_int_t)fs.last_seq,
		                  "last_hash", fs.records ? fs.last_hash : EVID_ZERO_HASH,
		                  "records", (json_int_t)fs.records)) != 0)
			rc = -EVID_ENOMEM;
		job->rep->records_removed += fs.records;
	}
	return rc;
}

static int purge_locked(struct evid_audit *a, const char *tenant, void *user, char *err,
                        size_t errlen)
{
	struct purge_job *job = user;
	char(*names)[EVID_DAY_NAME_BYTES] = NULL;
	char path[PATH_BYTES + EVID_DAY_NAME_BYTES];
	const char *data_dir = evid_audit_data_dir(a);
	size_t n = 0;
	size_t nold = 0;
	size_t i;
	int rc;

	rc = evid_audit_dir_path(data_dir, tenant, job->dir, sizeof(job->dir), err, errlen);
	if (rc == 0)
		rc = evid_audit_list_days(job->dir, &names, &n, err, errlen);
	if (rc == 0)
		rc = plan_files(job, names, n, &nold, err, errlen);
	if (rc == 0)
		rc = find_due_in(job, data_dir, tenant, 1);
	if (rc == 0)
		rc = find_due_in(job, data_dir, tenant, 0);
	if (rc != 0 || (nold == 0 && job->ndue == 0)) {
		job->rep->records_removed = 0;
		goto out;
	}
	rc = write_purge_record(a, tenant, job, err, errlen);
	if (rc != 0)
		goto out;
	for (i = 0; i < nold; i++) {
		snprintf(path, sizeof(path), "%s/%s", job->dir, names[i]);
		if (unlink(path) != 0) {
			gb_set_io_error(err, errlen, "remove the purged day file", path, errno);
			rc = -EVID_EIO; /* the purge record covers what is left: run it again */
			goto out;
		}
		job->rep->files_removed++;
	}
	remove_due(job, data_dir, tenant);
out:
	free(names);
	return rc;
}

int evid_audit_purge(struct evid_audit *a, const char *tenant, unsigned days,
                     struct evid_purge_report *rep, char *err, size_t errlen)
{
	struct purge_job job;
	char day[16];
	int64_t cutoff;
	int rc;

	memset(rep, 0, sizeof(*rep));
	memset(&job, 0, sizeof(job));
	if (!a || days < 1 || days > 365000) {
		gb_set_error(err, errlen, "retention must be 1 day or more (got %u)", days);
		rc = -EVID_EINVAL;
		goto out;
	}
	cutoff = evid_audit_now(a) - (int64_t)days * DAY_SECONDS;
	evid_day_of(cutoff, day, sizeof(day));
	memcpy(rep->cutoff, day, sizeof(rep->cutoff) - 1); /* "YYYY-MM-DD" */
	job.cutoff_time = cutoff - cutoff % DAY_SECONDS;
	job.days = days;
	job.rep = rep;
	job.files = json_array();
	if (!job.files) {
		gb_set_error(err, errlen, "out of memory purging");
		rc = -EVID_ENOMEM;
		goto out;
	}
	rc = evid_audit_with_lock(a, tenant, purge_locked, &job, err, errlen);
out:
	json_decref(job.files);
	evid_keyset_free(&job.kept);
	free(job.due);
	return rc;
}

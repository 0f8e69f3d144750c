/*
 * audit_files.c - reading the audit trail's files: where a tenant's log
 * is, which day files it has (in order), their lines (with a ceiling on
 * a line's length, whatever the file holds), the readers' shared lock,
 * and artifacts read back and checked against their hash. Used by the
 * appender (to find the tail), the verifier, retention and the report;
 * nothing here writes.
 */
#include "evidence/audit.h"
#include "evidence/evidence-private.h"
#include "evidence/evidence.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <unistd.h>

#define READ_CHUNK_BYTES 65536u

int evid_audit_dir_path(const char *data_dir, const char *tenant, char *buf, size_t buflen,
                        char *err, size_t errlen)
{
	int n;
	int rc = 0;

	if (!gb_fs_name_is_safe(tenant)) {
		gb_set_error(err, errlen,
		             "\"%.80s\" is not a tenant name: use 1 to %u of A-Z a-z "
		             "0-9 . _ -, not starting with '.'",
		             tenant ? tenant : "(none)", EVID_MAX_NAME_BYTES);
		rc = -EVID_EINVAL;
		goto out;
	}
	n = snprintf(buf, buflen, "%s/tenants/%s/audit", data_dir, tenant);
	if (n < 0 || (size_t)n >= buflen) {
		gb_set_error(err, errlen,
		             "the audit path under %s is too long: choose a data dir "
		             "with a shorter path",
		             data_dir);
		rc = -EVID_EINVAL;
	}
out:
	return rc;
}

int evid_is_day_file(const char *name)
{
	static const char pattern[] = "dddd-dd-dd.jsonl";
	size_t i;

	for (i = 0; pattern[i]; i++) {
		if (pattern[i] == 'd') {
			if (name[i] < '0' || name[i] > '9')
				return 0;
		} else if (name[i] != pattern[i]) {
			return 0;
		}
	}
	return name[i] == '\0';
}

/* qsort comparator for day file names. */
static int cmp_names(const void *a, const void *b)
{
	return strcmp((const char *)a, (const char *)b);
}

int evid_audit_list_days(const char *dir, char (**names)[EVID_DAY_NAME_BYTES], size_t *n, char *err,
                         size_t errlen)
{
	char(*list)[EVID_DAY_NAME_BYTES] = NULL;
	char(*grown)[EVID_DAY_NAME_BYTES];
	size_t count = 0;
	size_t cap = 0;
	struct dirent *de;
	DIR *d = NULL;
	int rc = 0;

	*names = NULL;
	*n = 0;
	d = opendir(dir);
	if (!d) {
		rc = errno == ENOENT ? -EVID_ENOENT : -EVID_EIO;
		gb_set_io_error(err, errlen, "list", dir, errno);
		goto out;
	}
	for (;;) {
		errno = 0;
		de = readdir(d);
		if (!de)
			break;
		if (!evid_is_day_file(de->d_name))
			continue;
		if (count == cap) {
			cap = cap ? cap * 2 : 64;
			grown = realloc(list, cap * sizeof(*list));
			if (!grown) {
				gb_set_error(err, errlen, "out of memory listing %s", dir);
				rc = -EVID_ENOMEM;
				goto out;
			}
			list = grown;
		}
		memcpy(list[count], de->d_name, strlen(de->d_name) + 1); /* 16 + NUL: checked */
		count++;
	}
	if (errno != 0) {
		gb_set_io_error(err, errlen, "list", dir, errno);
		rc = -EVID_EIO;
		goto out;
	}
	if (count)
		qsort(list, count, sizeof(*list), cmp_names);
	*names = list;
	*n = count;
	list = NULL;
out:
	free(list);
	if (d)
		closedir(d);
	return rc;
}

/* State of the bounded line reader. */
struct line_state {
	char *line;
	size_t len;
	int too_long;
	unsigned long lineno;
};

/* Adds data to the current line, keeping at most the ceiling. */
static void line_add(struct line_state *st, const char *data, size_t n)
{
	size_t room = EVID_AUDIT_MAX_RECORD_BYTES - st->len;

	if (n > room) {
		n = room;
		st->too_long = 1;
	}
	memcpy(st->line + st->len, data, n);
	st->len += n;
}

int evid_read_lines(const char *path, evid_line_cb cb, void *user, char *err, size_t errlen)
{
	struct line_state st = { 0 };
	char *chunk = NULL;
	const char *p;
	const char *nl;
	ssize_t got;
	size_t left;
	int fd = -1;
	int rc = 0;

	fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0) {
		rc = errno == ENOENT ? -EVID_ENOENT : -EVID_EIO;
		gb_set_io_error(err, errlen, "open", path, errno);
		goto out;
	}
	chunk = malloc(READ_CHUNK_BYTES);
	st.line = malloc(EVID_AUDIT_MAX_RECORD_BYTES + 1);
	if (!chunk || !st.line) {
		gb_set_error(err, errlen, "out of memory reading %s", path);
		rc = -EVID_ENOMEM;
		goto out;
	}
	for (;;) {
		got = read(fd, chunk, READ_CHUNK_BYTES);
		if (got < 0 && errno == EINTR)
			continue;
		if (got < 0) {
			gb_set_io_error(err, errlen, "read", path, errno);
			rc = -EVID_EIO;
			goto out;
		}
		if (got == 0)
			break;
		p = chunk;
		left = (size_t)got;
		while (left) {
			nl = memchr(p, '\n', left);
			if (!nl) {
				line_add(&st, p, left);
				break;
			}
			line_add(&st, p, (size_t)(nl - p));
			st.lineno++;
			st.line[st.len] = '\0';
			rc = cb(st.line, st.len, st.lineno, 1, st.too_long, user);
			if (rc != 0)
				goto out;
			st.len = 0;
			st.too_long = 0;
			left -= (size_t)(nl - p) + 1;
			p = nl + 1;
		}
	}
	if (st.len || st.too_long) { /* a last line without '\n' */
		st.lineno++;
		st.line[st.len] = '\0';
		rc = cb(st.line, st.len, st.lineno, 0, st.too_long, user);
	}
out:
	free(chunk);
	free(st.line);
	if (fd >= 0)
		close(fd);
	return rc;
}

int evid_audit_lock_shared(const char *dir)
{
	char path[4200];
	int fd;

	snprintf(path, sizeof(path), "%s/.lock", dir);
	fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return -1;
	while (flock(fd, LOCK_SH) != 0 && errno == EINTR)
		;
	return fd;
}

int evid_artifact_path(const char *data_dir, const char *tenant, int valid, const char *sha256,
                       char *buf, size_t buflen)
{
	int n;

	if (!gb_fs_name_is_safe(tenant) || !evid_sha256_hex_is_valid(sha256))
		return -EVID_EINVAL;
	n = snprintf(buf, buflen, "%s/tenants/%s/%s/%.2s/%s", data_dir, tenant,
	             valid ? "artifacts" : "invalid", sha256, sha256);
	return n < 0 || (size_t)n >= buflen ? -EVID_EINVAL : 0;
}

int evid_artifact_load(const char *data_dir, const char *tenant, int valid, const char *sha256,
                       unsigned char **data, size_t *len, int *changed, char *err, size_t errlen)
{
	char path[4200];
	char actual[65];
	unsigned char *buf = NULL;
	size_t buflen = 0;
	int rc;

	*data = NULL;
	*len = 0;
	if (changed)
		*changed = 0;
	rc = evid_artifact_path(data_dir, tenant, valid, sha256, path, sizeof(path));
	if (rc != 0) {
		gb_set_error(err, errlen, "\"%.80s\" is not an artifact id of a valid tenant",
		             sha256 ? sha256 : "(null)");
		goto out;
	}
	rc = gb_fs_read_file(path, EVID_MAX_ARTIFACT_BYTES, &buf, &buflen, err, errlen);
	if (rc == -EVID_ENOENT)
		gb_set_error(err, errlen, "%s was removed", path);
	if (rc != 0)
		goto out;
	evid_sha256_hex(buf, buflen, actual);
	if (strcmp(actual, sha256) != 0) {
		gb_set_error(err, errlen, "%s now hashes to %s", path, actual);
		if (changed)
			*changed = 1;
		rc = -EVID_EIO;
		goto out;
	}
	*data = buf;
	*len = buflen;
	buf = NULL;
out:
	free(buf);
	return rc;
}

/* ---- a set of artifact keys ---------------------------------------------- */

/* Index of key's slot, or of the empty slot where it goes. The hex digits
 * after the key's first character are uniform already. */
static size_t keyset_slot(const struct evid_keyset *s, const char *key)
{
	size_t h = 0;
	size_t i;
	char c;

	for (i = 1; i <= 8; i++) {
		c = key[i];
		h = h * 16 + (size_t)(c <= '9' ? c - '0' : c - 'a' + 10);
	}
	i = h & (s->cap - 1);
	while (s->slot[i][0] && strcmp(s->slot[i], key) != 0)
		i = (i + 1) & (s->cap - 1);
	return i;
}

int evid_keyset_add(struct evid_keyset *s, const char *key)
{
	struct evid_keyset bigger = { 0 };
	size_t i;

	if (s->n * 2 >= s->cap) {
		bigger.cap = s->cap ? s->cap * 2 : 256;
		bigger.slot = calloc(bigger.cap, sizeof(*bigger.slot));
		if (!bigger.slot)
			return -1;
		for (i = 0; i < s->cap; i++)
			if (s->slot[i][0])
				memcpy(bigger.slot[keyset_slot(&bigger, s->slot[i])], s->slot[i],
				       66);
		bigger.n = s->n;
		free(s->slot);
		*s = bigger;
	}
	i = keyset_slot(s, key);
	if (s->slot[i][0])
		return 1;
	memcpy(s->slot[i], key, 66);
	s->n++;
	return 0;
}

int evid_keyset_has(const struct evid_keyset *s, const char *key)
{
	return s->cap && s->slot[keyset_slot(s, key)][0];
}

void evid_keyset_free(struct evid_keyset *s)
{
	free(s->slot);
	memset(s, 0, sizeof(*s));
}

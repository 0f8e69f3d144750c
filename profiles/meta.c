/*
 * meta.c - profiles' metadata, table prof_profiles of the store
 * (store/sql.h: SQLite's DATA/glassbox.db, or the PostgreSQL database
 * replicas share; the store's migrations create it):
 *
 *   id, tenant, user, name (unique per tenant and user), version,
 *   created_ms, last_used_ms, expires_ms, revoked, revoked_ms, size,
 *   wrapped_key (NULL once revoked), held_by, held_pid, held_start,
 *   held_since_ms, held_instance, sealed_sha256 (the SHA-256 of the newest
 *   version's sealed bytes when they are in the object store: objects.c;
 *   NULL when they are a file of the data dir)
 *
 * Every change is one conditional UPDATE, so two processes (or two
 * replicas) racing for a hold or a commit cannot both win: the database
 * serialises the UPDATEs of one row and re-checks the WHERE of the
 * second. A hold names the store handle that took it (held_instance,
 * whose liveness the store can tell on any replica: store_owner_alive),
 * and for the people reading it the process by pid. Holds recorded
 * before held_instance existed are judged by pid and the process's start
 * time (from /proc), so a recycled pid is not mistaken for the holder.
 */
#include "profiles/profiles-private.h"

#include "common/fs.h"
#include "store/sql.h"
#include "store/store.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define COLUMNS                                                                                \
	"id, tenant, \"user\", name, version, created_ms, last_used_ms, expires_ms, revoked, " \
	"revoked_ms, size, held_by, held_pid, held_since_ms, wrapped_key, held_start, "        \
	"held_instance, sealed_sha256"

struct prof_db {
	struct store *st;
};

int64_t prof_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* The start time of process pid in clock ticks since boot (field 22 of
 * /proc/PID/stat), or 0 when it cannot be read. */
static int64_t process_start(int64_t pid)
{
	char path[64];
	char buf[1024];
	const char *p;
	long long start = 0;
	ssize_t n;
	int field;
	int fd;

	snprintf(path, sizeof(path), "/proc/%lld/stat", (long long)pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return 0;
	buf[n] = '\0';
	p = strrchr(buf, ')'); /* the command name may hold spaces */
	if (!p)
		return 0;
	/* after ") " comes field 3 */
	for (field = 3, p++; *p && field < 22; p++)
		if (*p == ' ' && p[1] != ' ')
			field++;
	if (field == 22)
		sscanf(p, "%lld", &start);
	return start;
}

int prof_pid_alive(int64_t pid)
{
	if (pid <= 0)
		return 0;
	return kill((pid_t)pid, 0) == 0 || errno == EPERM;
}

/* 1 when (pid, start) still names a live process. */
static int holder_alive(int64_t pid, int64_t start)
{
	return prof_pid_alive(pid) && (start == 0 || process_start(pid) == start);
}

/* The store's error as a profiles error. */
static int db_rc(int rc)
{
	if (rc == 0)
		return 0;
	return rc == -STORE_ENOMEM ? -PROF_ENOMEM : -PROF_EIO;
}

int prof_db_open(const char *data_dir, struct prof_db **out, char *err, size_t errlen)
{
	struct prof_db *db = calloc(1, sizeof(*db));
	int rc = 0;

	*out = NULL;
	if (!db)
		return -PROF_ENOMEM;
	if (gb_fs_mkdirs_abs(data_dir, err, errlen) < 0) {
		rc = -PROF_EIO;
		goto out;
	}
	rc = db_rc(store_open(data_dir, &db->st, err, errlen));
	if (rc < 0)
		goto out;
	/* a commit must survive a power cut: the old sealed version is
	 * removed right after it (PostgreSQL commits durably already) */
	if (!strcmp(store_backend_name(db->st), "sqlite"))
		rc = db_rc(store_sql_change(db->st, "make commits durable",
		                            "PRAGMA synchronous=FULL", NULL, 0, NULL, err, errlen));
	if (rc < 0)
		goto out;
	*out = db;
	db = NULL;
out:
	prof_db_close(db);
	return rc;
}

void prof_db_close(struct prof_db *db)
{
	if (!db)
		return;
	store_close(db->st);
	free(db);
}

static void copy_text(char *dst, size_t dstlen, const char *src)
{
	snprintf(dst, dstlen, "%s", src ? src : "");
}

/* Fills p from a row of COLUMNS. */
static void read_row(const struct store_row *r, struct prof_info *p)
{
	memset(p, 0, sizeof(*p));
	copy_text(p->id, sizeof(p->id), store_row_text(r, 0));
	copy_text(p->tenant, sizeof(p->tenant), store_row_text(r, 1));
	copy_text(p->user, sizeof(p->user), store_row_text(r, 2));
	copy_text(p->name, sizeof(p->name), store_row_text(r, 3));
	p->version = store_row_int(r, 4);
	p->created_ms = store_row_int(r, 5);
	p->last_used_ms = store_row_int(r, 6);
	p->expires_ms = store_row_int(r, 7);
	p->revoked = (int)store_row_int(r, 8);
	p->revoked_ms = store_row_int(r, 9);
	p->size_bytes = store_row_int(r, 10);
	copy_text(p->held_by, sizeof(p->held_by), store_row_text(r, 11));
	p->held_pid = store_row_int(r, 12);
	p->held_since_ms = store_row_int(r, 13);
	copy_text(p->sealed_sha256, sizeof(p->sealed_sha256), store_row_text(r, 17));
}

int prof_db_insert(struct prof_db *db, const struct prof_info *p, const unsigned char *wrapped,
                   size_t wrapped_len, char *err, size_t errlen)
{
	static const char sql[] =
	    "INSERT INTO prof_profiles (id, tenant, \"user\", name, created_ms, expires_ms,"
	    " wrapped_key) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7) ON CONFLICT DO NOTHING";
	const struct store_sql_param params[] = {
		SQL_TEXT(p->id),
		SQL_TEXT(p->tenant),
		SQL_TEXT(p->user),
		SQL_TEXT(p->name),
		SQL_INT(p->created_ms),
		SQL_INT(p->expires_ms),
		SQL_BLOB(wrapped, wrapped_len),
	};
	int64_t changed = 0;
	int rc;

	rc = db_rc(
	    store_sql_change(db->st, "record a profile", sql, params, 7, &changed, err, errlen));
	if (rc == 0 && changed != 1) {
		gb_set_error(err, errlen,
		             "user %s of tenant %s already has a profile named %s: pick "
		             "another name, or delete that one first",
		             p->user, p->tenant, p->name);
		rc = -PROF_EEXIST;
	}
	return rc;
}

/* One row into a prof_info and, when wanted, a copy of its key. */
struct get_ctx {
	struct prof_info *out;
	unsigned char **wrapped;
	size_t *wrapped_len;
	int found;
	int rc;
};

static int get_row(const struct store_row *r, void *user)
{
	struct get_ctx *g = user;
	const unsigned char *key;
	size_t n = 0;

	read_row(r, g->out);
	g->found = 1;
	if (!g->wrapped)
		return 1;
	key = store_row_blob(r, 14, &n);
	if (!key)
		return 1;
	*g->wrapped = malloc(n ? n : 1);
	if (!*g->wrapped) {
		g->rc = -PROF_ENOMEM;
		return 1;
	}
	memcpy(*g->wrapped, key, n);
	*g->wrapped_len = n;
	return 1;
}

int prof_db_get(struct prof_db *db, const char *tenant, const char *user, const char *name,
                struct prof_info *out, unsigned char **wrapped, size_t *wrapped_len, char *err,
                size_t errlen)
{
	static const char sql[] = "SELECT " COLUMNS " FROM prof_profiles WHERE tenant = ?1 AND"
	                          " \"user\" = ?2 AND name = ?3";
	const struct store_sql_param p[] = { SQL_TEXT(tenant), SQL_TEXT(user), SQL_TEXT(name) };
	struct get_ctx g = { out, wrapped, wrapped_len, 0, 0 };
	int rc;

	if (wrapped) {
		*wrapped = NULL;
		*wrapped_len = 0;
	}
	rc = db_rc(store_sql_select(db->st, "read a profile", sql, p, 3, get_row, &g, err, errlen));
	if (rc == 0)
		rc = g.rc;
	if (rc == 0 && !g.found) {
		gb_set_error(err, errlen,
		             "user %s of tenant %s has no profile named %s: list them "
		             "with `glassbox profile list`, or create it",
		             user, tenant, name);
		rc = -PROF_ENOTFOUND;
	}
	return rc;
}

struct list_ctx {
	struct prof_info *v;
	size_t n;
	size_t cap;
	int rc;
};

static int list_row(const struct store_row *r, void *user)
{
	struct list_ctx *l = user;

	if (l->n == l->cap) {
		size_t cap = l->cap ? l->cap * 2 : 16;
		struct prof_info *grown = realloc(l->v, cap * sizeof(*grown));

		if (!grown) {
			l->rc = -PROF_ENOMEM;
			return 1;
		}
		l->v = grown;
		l->cap = cap;
	}
	read_row(r, &l->v[l->n++]);
	return 0;
}

int prof_db_list(struct prof_db *db, const char *tenant, const char *user, struct prof_info **out,
                 size_t *n, char *err, size_t errlen)
{
	static const char sql[] = "SELECT " COLUMNS " FROM prof_profiles WHERE (?1 IS NULL OR"
	                          " tenant = ?1) AND (?2 IS NULL OR \"user\" = ?2) ORDER BY"
	                          " created_ms, name";
	const struct store_sql_param p[] = { SQL_TEXT(tenant), SQL_TEXT(user) };
	struct list_ctx l = { 0 };
	int rc;

	rc = db_rc(store_sql_select(db->st, "list profiles", sql, p, 2, list_row, &l, err, errlen));
	if (rc == 0)
		rc = l.rc;
	if (rc < 0) {
		free(l.v);
		l.v = NULL;
		l.n = 0;
	}
	*out = l.v;
	*n = l.n;
	return rc;
}

int prof_db_delete(struct prof_db *db, const char *id, char *err, size_t errlen)
{
	const struct store_sql_param p[] = { SQL_TEXT(id) };

	return db_rc(store_sql_change(db->st, "delete a profile",
	                              "DELETE FROM prof_profiles WHERE id = ?1", p, 1, NULL, err,
	                              errlen));
}

int prof_db_revoke(struct prof_db *db, const char *id, int64_t now_ms, char *err, size_t errlen)
{
	/* SQLite: overwrite the key in place first (secure_delete makes SQLite
	 * clear freed pages too), then drop it for good. PostgreSQL keeps
	 * old row versions until VACUUM: the key is dropped, and it is
	 * useless without the tenant key that wraps it (docs/store.md). */
	static const char overwrite_sql[] =
	    "UPDATE prof_profiles SET wrapped_key = zeroblob(length(wrapped_key)) WHERE id = ?1";
	static const char revoke_sql[] = "UPDATE prof_profiles SET revoked = 1, revoked_ms = ?2, "
	                                 "wrapped_key = NULL WHERE id = ?1";
	const struct store_sql_param p[] = { SQL_TEXT(id), SQL_INT(now_ms) };
	int rc = 0;

	if (!strcmp(store_backend_name(db->st), "sqlite"))
		rc = db_rc(store_sql_change(db->st, "revoke a profile", overwrite_sql, p, 1, NULL,
		                            err, errlen));
	if (rc == 0)
		rc = db_rc(store_sql_change(db->st, "revoke a profile", revoke_sql, p, 2, NULL, err,
		                            errlen));
	return rc;
}

int prof_db_hold(struct prof_db *db, const char *id, const char *holder, int64_t pid,
                 int64_t since_ms, int64_t stale_pid, int64_t stale_since_ms, char *err,
                 size_t errlen)
{
	static const char sql[] =
	    "UPDATE prof_profiles SET held_by = ?2, held_pid = ?4, held_start = ?5,"
	    " held_since_ms = ?6, held_instance = ?3 WHERE id = ?1 AND held_pid = ?7"
	    " AND held_since_ms = ?8";
	const struct store_sql_param p[] = {
		SQL_TEXT(id),
		SQL_TEXT(holder),
		SQL_TEXT(store_instance(db->st)),
		SQL_INT(pid),
		SQL_INT(process_start(pid)),
		SQL_INT(since_ms),
		SQL_INT(stale_pid),
		SQL_INT(stale_since_ms),
	};
	int64_t changed = 0;
	int rc;

	rc = db_rc(store_sql_change(db->st, "hold a profile", sql, p, 8, &changed, err, errlen));
	if (rc < 0)
		return rc;
	return changed == 1 ? 0 : 1;
}

int prof_db_release(struct prof_db *db, const char *id, int64_t pid, int64_t since_ms)
{
	static const char sql[] =
	    "UPDATE prof_profiles SET held_by = NULL, held_pid = 0, held_start = 0,"
	    " held_since_ms = 0, held_instance = NULL WHERE id = ?1 AND held_pid = ?2"
	    " AND held_since_ms = ?3 AND held_instance = ?4";
	const struct store_sql_param p[] = { SQL_TEXT(id), SQL_INT(pid), SQL_INT(since_ms),
		                             SQL_TEXT(store_instance(db->st)) };

	return db_rc(store_sql_change(db->st, "release a profile", sql, p, 4, NULL, NULL, 0));
}

int prof_db_commit(struct prof_db *db, const char *id, int64_t new_version, int64_t size,
                   const char *sealed_sha256, int64_t pid, int64_t since_ms, int64_t now_ms,
                   char *err, size_t errlen)
{
	static const char sql[] =
	    "UPDATE prof_profiles SET version = ?2, size = ?3, last_used_ms = ?4,"
	    " sealed_sha256 = ?9 WHERE id = ?1 AND version = ?5 AND held_pid = ?6"
	    " AND held_since_ms = ?7 AND held_instance = ?8 AND revoked = 0";
	const struct store_sql_param p[] = {
		SQL_TEXT(id),
		SQL_INT(new_version),
		SQL_INT(size),
		SQL_INT(now_ms),
		SQL_INT(new_version - 1),
		SQL_INT(pid),
		SQL_INT(since_ms),
		SQL_TEXT(store_instance(db->st)),
		SQL_TEXT(sealed_sha256),
	};
	int64_t changed = 0;
	int rc;

	rc = db_rc(
	    store_sql_change(db->st, "commit a profile version", sql, p, 9, &changed, err, errlen));
	if (rc < 0)
		return rc;
	return changed == 1 ? 0 : 1;
}

int prof_db_touch(struct prof_db *db, const char *id, int64_t now_ms)
{
	const struct store_sql_param p[] = { SQL_TEXT(id), SQL_INT(now_ms) };

	return db_rc(store_sql_change(db->st, "record a profile's use",
	                              "UPDATE prof_profiles SET last_used_ms = ?2 WHERE id = ?1", p,
	                              2, NULL, NULL, 0));
}

struct holder_ctx {
	int found;
	int64_t pid;
	int64_t start;
	char instance[64];
};

static int holder_row(const struct store_row *r, void *user)
{
	struct holder_ctx *h = user;

	h->found = 1;
	h->pid = store_row_int(r, 0);
	h->start = store_row_int(r, 1);
	copy_text(h->instance, sizeof(h->instance), store_row_text(r, 2));
	return 1;
}

int prof_db_holder_alive(struct prof_db *db, const char *id)
{
	const struct store_sql_param p[] = { SQL_TEXT(id) };
	struct holder_ctx h = { 0 };

	if (store_sql_select(db->st, "read a profile's hold",
	                     "SELECT held_pid, held_start, held_instance FROM prof_profiles"
	                     " WHERE id = ?1",
	                     p, 1, holder_row, &h, NULL, 0) < 0)
		return 1; /* cannot tell: assume it is, never take a live hold */
	if (!h.found || h.pid <= 0)
		return 0;
	if (h.instance[0])
		return store_owner_alive(db->st, h.instance);
	return holder_alive(h.pid, h.start);
}

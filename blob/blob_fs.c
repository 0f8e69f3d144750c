/*
 * blob_fs.c - the blob interface on a directory (blob.h): a key is a path
 * under the root. A put writes a temp file beside the object, fsyncs it
 * and publishes it with link() (fails if the name exists: never
 * replaces) or rename() (blob_put_replace), then fsyncs the directory.
 * The root may be a volume that several replicas mount.
 */
#include "blob/blob-private.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/fs.h"

#define PATH_BYTES 2048

/* See blob-private.h. */
int blob_fs_init(struct blob_store *b, char *err, size_t errlen)
{
	snprintf(b->describe, sizeof(b->describe), "dir %.780s", b->cfg.dir);
	return gb_fs_mkdirs_abs(b->cfg.dir, err, errlen);
}

/* The path of key into path. */
static int key_path(const struct blob_store *b, const char *key, char *path, size_t cap, char *err,
                    size_t errlen)
{
	if (gb_pathf(path, cap, "%s/%s", b->cfg.dir, key) < 0) {
		gb_set_error(err, errlen, "the path of %s under %s is too long", key, b->cfg.dir);
		return -EINVAL;
	}
	return 0;
}

static int fs_put(struct blob_store *b, const char *key, const void *data, size_t len, int replace,
                  char *err, size_t errlen)
{
	char path[PATH_BYTES], dir[PATH_BYTES], tmp[PATH_BYTES];
	char *slash;
	int rc;

	rc = key_path(b, key, path, sizeof(path), err, errlen);
	if (rc != 0)
		goto out;
	snprintf(dir, sizeof(dir), "%s", path);
	slash = strrchr(dir, '/');
	*slash = '\0';
	rc = gb_fs_mkdirs_abs(dir, err, errlen);
	if (rc != 0)
		goto out;
	if (!replace && access(path, F_OK) == 0) {
		rc = BLOB_EXISTS;
		goto out;
	}
	rc = gb_fs_write_temp(dir, data, len, tmp, sizeof(tmp), err, errlen);
	if (rc != 0)
		goto out;
	if (replace) {
		rc = gb_fs_publish_replace(tmp, path, dir, err, errlen);
		goto out;
	}
	rc = gb_fs_publish_new(tmp, path, dir, err, errlen);
	if (rc == 1) {
		unlink(tmp);
		rc = BLOB_EXISTS;
	}
out:
	return rc;
}

static int fs_get(struct blob_store *b, const char *key, size_t max_bytes, unsigned char **data,
                  size_t *len, char *err, size_t errlen)
{
	char path[PATH_BYTES];
	struct stat st;
	int rc;

	rc = key_path(b, key, path, sizeof(path), err, errlen);
	if (rc != 0)
		return rc;
	if (stat(path, &st) == 0 && S_ISREG(st.st_mode) && (size_t)st.st_size > max_bytes) {
		gb_set_error(err, errlen, "object %s is %lld bytes, more than the %zu allowed", key,
		             (long long)st.st_size, max_bytes);
		return -EFBIG;
	}
	rc = gb_fs_read_file(path, max_bytes, data, len, err, errlen);
	if (rc == -ENOENT)
		gb_set_error(err, errlen, "no object %s in %s", key, b->describe);
	return rc;
}

/* Keys found by the walk. */
struct keys {
	char **v;
	size_t n, cap;
};

static int keys_add(struct keys *k, const char *key)
{
	char **v;

	if (k->n == k->cap) {
		k->cap = k->cap ? k->cap * 2 : 64;
		v = realloc(k->v, k->cap * sizeof(*v));
		if (!v)
			return -ENOMEM;
		k->v = v;
	}
	k->v[k->n] = strdup(key);
	if (!k->v[k->n])
		return -ENOMEM;
	k->n++;
	return 0;
}

/* Adds the files under root/rel ("" for root) whose key starts with
 * prefix; temp files (".tmp.*") are not objects. */
static int walk(const char *root, const char *rel, const char *prefix, struct keys *k, int depth)
{
	char path[PATH_BYTES], key[PATH_BYTES];
	struct dirent *e;
	struct stat st;
	DIR *d;
	size_t n;
	int rc = 0;

	if (depth > 32 || gb_pathf(path, sizeof(path), "%s%s%s", root, rel[0] ? "/" : "", rel) < 0)
		return 0;
	d = opendir(path);
	if (!d)
		return errno == ENOENT || errno == ENOTDIR ? 0 : -EIO;
	while (rc == 0 && (e = readdir(d)) != NULL) {
		if (e->d_name[0] == '.')
			continue;
		if (gb_pathf(key, sizeof(key), "%s%s%s", rel, rel[0] ? "/" : "", e->d_name) < 0 ||
		    gb_pathf(path, sizeof(path), "%s/%s", root, key) < 0 || lstat(path, &st) != 0)
			continue;
		/* descend only where the prefix may still match */
		n = strlen(key);
		if (S_ISDIR(st.st_mode)) {
			if (strncmp(key, prefix, n < strlen(prefix) ? n : strlen(prefix)) == 0)
				rc = walk(root, key, prefix, k, depth + 1);
		} else if (S_ISREG(st.st_mode) && !strncmp(key, prefix, strlen(prefix)) &&
		           blob_key_is_valid(key)) {
			rc = keys_add(k, key);
		}
	}
	closedir(d);
	return rc;
}

/* Orders keys by byte value, as S3 lists them. */
static int cmp_keys(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static int fs_list(struct blob_store *b, const char *prefix, blob_list_cb cb, void *user, char *err,
                   size_t errlen)
{
	struct keys k = { 0 };
	struct stat st;
	char path[PATH_BYTES];
	size_t i;
	int rc;

	rc = walk(b->cfg.dir, "", prefix, &k, 0);
	if (rc != 0) {
		gb_set_error(err, errlen, "cannot list %s: %s", b->describe, strerror(-rc));
		goto out;
	}
	qsort(k.v, k.n, sizeof(*k.v), cmp_keys);
	for (i = 0; i < k.n && rc == 0; i++) {
		if (gb_pathf(path, sizeof(path), "%s/%s", b->cfg.dir, k.v[i]) < 0 ||
		    stat(path, &st) != 0)
			continue;
		rc = cb(k.v[i], (size_t)st.st_size, user);
	}
out:
	for (i = 0; i < k.n; i++)
		free(k.v[i]);
	free(k.v);
	return rc;
}

static int fs_del(struct blob_store *b, const char *key, char *err, size_t errlen)
{
	char path[PATH_BYTES], dir[PATH_BYTES];
	int rc = key_path(b, key, path, sizeof(path), err, errlen);

	if (rc != 0)
		return rc;
	if (unlink(path) != 0) {
		if (errno == ENOENT) {
			gb_set_error(err, errlen, "no object %s in %s", key, b->describe);
			return -ENOENT;
		}
		gb_set_io_error(err, errlen, "remove", path, errno);
		return -EIO;
	}
	snprintf(dir, sizeof(dir), "%s", path);
	*strrchr(dir, '/') = '\0';
	return gb_fs_sync_dir(dir, err, errlen) == 0 ? 0 : -EIO;
}

const struct blob_ops blob_fs_ops = {
	.put = fs_put,
	.get = fs_get,
	.del = fs_del,
	.list = fs_list,
	.close = NULL,
};

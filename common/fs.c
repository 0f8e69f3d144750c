/*
 * fs.c - crash-safe file operations shared by the stores (see fs.h).
 */
#include "common/fs.h"

#include "common/util.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#define PATH_BYTES 4096

void gb_set_error(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;

	if (!err || !errlen)
		return;
	va_start(ap, fmt);
	vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
}

int gb_pathf(char *buf, size_t buflen, const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(buf, buflen, fmt, ap);
	va_end(ap);
	if (n < 0 || (size_t)n >= buflen) {
		if (buflen)
			buf[0] = '\0';
		return -1;
	}
	return 0;
}

/* What a person can do about errnum when the store cannot be written. */
static const char *io_advice(int errnum)
{
	switch (errnum) {
	case ENOSPC:
	case EDQUOT:
		return "free space on that file system or move the data dir to a larger one";
	case EROFS:
		return "the file system is read-only: remount it read-write or choose a writable "
		       "data dir";
	case EACCES:
	case EPERM:
		return "give this user write access to the data dir (owned by it, mode 0700) or "
		       "choose another data dir";
	case ENOTDIR:
	case EEXIST:
		return "a file is in the way of the data dir's layout: move it aside or choose "
		       "another data dir";
	case ENAMETOOLONG:
		return "choose a data dir with a shorter path";
	case EMFILE:
	case ENFILE:
		return "raise the open-files limit (ulimit -n)";
	default:
		return "check the data dir and the disk it is on";
	}
}

void gb_set_io_error(char *err, size_t errlen, const char *what, const char *path, int errnum)
{
	char buf[128];
	const char *text = strerror_r(errnum, buf, sizeof(buf));

	gb_set_error(err, errlen, "cannot %s %s: %s; %s", what, path, text, io_advice(errnum));
}

/* fsyncs a directory so that a new or renamed entry in it is durable.
 * File systems that cannot fsync a directory (EINVAL) are accepted. */
int gb_fs_sync_dir(const char *dir, char *err, size_t errlen)
{
	int fd = -1;
	int rc = 0;

	fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0) {
		gb_set_io_error(err, errlen, "open directory", dir, errno);
		rc = -EIO;
		goto out;
	}
	if (fsync(fd) != 0 && errno != EINVAL && errno != EROFS) {
		gb_set_io_error(err, errlen, "sync directory", dir, errno);
		rc = -EIO;
		goto out;
	}
out:
	if (fd >= 0)
		close(fd);
	return rc;
}

/* Creates one directory (0700) unless it exists as a directory; when it
 * is created, its parent is fsynced. path is modified and restored. */
static int mkdir_one(char *path, char *err, size_t errlen)
{
	struct stat st;
	char *slash;
	int rc = 0;

	if (mkdir(path, 0700) == 0) {
		slash = strrchr(path, '/');
		if (slash && slash != path) {
			*slash = '\0';
			rc = gb_fs_sync_dir(path, err, errlen);
			*slash = '/';
		} else if (!slash) {
			rc = gb_fs_sync_dir(".", err, errlen);
		}
		goto out;
	}
	if (errno != EEXIST) {
		gb_set_io_error(err, errlen, "create directory", path, errno);
		rc = -EIO;
		goto out;
	}
	if (stat(path, &st) != 0) {
		gb_set_io_error(err, errlen, "inspect", path, errno);
		rc = -EIO;
		goto out;
	}
	if (!S_ISDIR(st.st_mode)) {
		gb_set_io_error(err, errlen, "create directory", path, ENOTDIR);
		rc = -EIO;
		goto out;
	}
out:
	return rc;
}

/* Creates each dir of path[from..] in turn, stopping at every '/'. */
static int mkdirs_from(char *path, size_t from, char *err, size_t errlen)
{
	size_t i;
	size_t len = strlen(path);
	int rc = 0;

	for (i = from; i <= len; i++) {
		if (path[i] != '/' && path[i] != '\0')
			continue;
		if (i == 0 || path[i - 1] == '/')
			continue; /* leading or repeated '/' */
		path[i] = '\0';
		rc = mkdir_one(path, err, errlen);
		path[i] = i == len ? '\0' : '/';
		if (rc != 0)
			goto out;
	}
out:
	return rc;
}

int gb_fs_mkdirs_abs(const char *path, char *err, size_t errlen)
{
	char buf[PATH_BYTES];
	int n;
	int rc = 0;

	n = snprintf(buf, sizeof(buf), "%s", path);
	if (n < 0 || (size_t)n >= sizeof(buf)) {
		gb_set_error(err, errlen, "the data dir path is longer than %d bytes",
		             PATH_BYTES - 1);
		rc = -EINVAL;
		goto out;
	}
	rc = mkdirs_from(buf, 0, err, errlen);
out:
	return rc;
}

int gb_fs_mkdirs(const char *base, const char *rel, char *err, size_t errlen)
{
	char buf[PATH_BYTES];
	size_t baselen = strlen(base);
	int n;
	int rc = 0;

	n = snprintf(buf, sizeof(buf), "%s/%s", base, rel);
	if (n < 0 || (size_t)n >= sizeof(buf)) {
		gb_set_error(err, errlen, "path %s/%s is longer than %d bytes", base, rel,
		             PATH_BYTES - 1);
		rc = -EINVAL;
		goto out;
	}
	rc = mkdirs_from(buf, baselen + 1, err, errlen);
out:
	return rc;
}

/* Writes all of data to fd, retrying on EINTR and short writes. */
static int write_all(int fd, const unsigned char *data, size_t len)
{
	size_t done = 0;
	ssize_t n;
	int rc = 0;

	while (done < len) {
		n = write(fd, data + done, len - done);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			if (n == 0)
				errno = EIO;
			rc = -1;
			goto out;
		}
		done += (size_t)n;
	}
out:
	return rc;
}

int gb_fs_write_temp(const char *dir, const void *data, size_t len, char *tmp, size_t tmplen,
                     char *err, size_t errlen)
{
	char rnd[17];
	int created = 0;
	int fd = -1;
	int n;
	int rc = 0;

	gb_random_hex(rnd, 8);
	n = snprintf(tmp, tmplen, "%s/.tmp.%s", dir, rnd);
	if (n < 0 || (size_t)n >= tmplen) {
		gb_set_error(err, errlen, "path %s/.tmp.%s is too long", dir, rnd);
		rc = -EINVAL;
		goto out;
	}
	fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0) {
		gb_set_io_error(err, errlen, "create", tmp, errno);
		rc = -EIO;
		goto out;
	}
	created = 1;
	if (write_all(fd, data, len) != 0) {
		gb_set_io_error(err, errlen, "write", tmp, errno);
		rc = -EIO;
		goto out;
	}
	if (fsync(fd) != 0) {
		gb_set_io_error(err, errlen, "sync", tmp, errno);
		rc = -EIO;
		goto out;
	}
	n = close(fd);
	fd = -1;
	if (n != 0) {
		gb_set_io_error(err, errlen, "close", tmp, errno);
		rc = -EIO;
		goto out;
	}
out:
	if (fd >= 0)
		close(fd);
	if (rc != 0 && created)
		unlink(tmp);
	return rc;
}

int gb_fs_publish_replace(const char *tmp, const char *final, const char *dir, char *err,
                          size_t errlen)
{
	int rc = 0;

	if (rename(tmp, final) != 0) {
		gb_set_io_error(err, errlen, "rename a temp file to", final, errno);
		unlink(tmp);
		rc = -EIO;
		goto out;
	}
	rc = gb_fs_sync_dir(dir, err, errlen);
out:
	return rc;
}

int gb_fs_write_replace(const char *path, const void *data, size_t len, char *err, size_t errlen)
{
	char dir[4096];
	char tmp[4096];
	char *slash;
	int rc;

	if (gb_pathf(dir, sizeof(dir), "%s", path) != 0) {
		gb_set_error(err, errlen, "the path %.80s... is too long", path);
		rc = -EINVAL;
		goto out;
	}
	slash = strrchr(dir, '/');
	if (slash == dir)
		dir[1] = '\0';
	else if (slash)
		*slash = '\0';
	else
		snprintf(dir, sizeof(dir), ".");
	rc = gb_fs_write_temp(dir, data, len, tmp, sizeof(tmp), err, errlen);
	if (rc == 0)
		rc = gb_fs_publish_replace(tmp, path, dir, err, errlen);
out:
	return rc;
}

int gb_fs_publish_new(const char *tmp, const char *final, const char *dir, char *err, size_t errlen)
{
	int rc = 0;

	if (link(tmp, final) != 0) {
		if (errno == EEXIST) {
			rc = 1;
			goto out;
		}
		gb_set_io_error(err, errlen, "link a temp file to", final, errno);
		unlink(tmp);
		rc = -EIO;
		goto out;
	}
	unlink(tmp);
	rc = gb_fs_sync_dir(dir, err, errlen);
out:
	return rc;
}

int gb_fs_read_file(const char *path, size_t max_bytes, unsigned char **out, size_t *len, char *err,
                    size_t errlen)
{
	struct stat st;
	unsigned char *buf = NULL;
	size_t size;
	size_t done = 0;
	ssize_t n;
	int fd = -1;
	int rc = 0;

	*out = NULL;
	*len = 0;
	fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0 && errno == ENOENT) {
		gb_set_error(err, errlen, "%s does not exist", path);
		rc = -ENOENT;
		goto out;
	}
	if (fd < 0) {
		gb_set_io_error(err, errlen, "open", path, errno);
		rc = -EIO;
		goto out;
	}
	if (fstat(fd, &st) != 0) {
		gb_set_io_error(err, errlen, "inspect", path, errno);
		rc = -EIO;
		goto out;
	}
	if (!S_ISREG(st.st_mode)) {
		gb_set_error(err, errlen, "%s is not a regular file: move it aside", path);
		rc = -EIO;
		goto out;
	}
	if (st.st_size < 0 || (unsigned long long)st.st_size > max_bytes) {
		gb_set_error(err, errlen, "%s is %lld bytes, more than the %zu allowed", path,
		             (long long)st.st_size, max_bytes);
		rc = -EIO;
		goto out;
	}
	size = (size_t)st.st_size;
	buf = malloc(size + 1);
	if (!buf) {
		gb_set_error(err, errlen, "out of memory reading %s (%zu bytes)", path, size);
		rc = -ENOMEM;
		goto out;
	}
	while (done < size) {
		n = read(fd, buf + done, size - done);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			gb_set_io_error(err, errlen, "read", path, errno);
			rc = -EIO;
			goto out;
		}
		if (n == 0) {
			gb_set_error(err, errlen, "%s shrank while it was read", path);
			rc = -EIO;
			goto out;
		}
		done += (size_t)n;
	}
	buf[size] = '\0';
	*out = buf;
	*len = size;
	buf = NULL;
out:
	free(buf);
	if (fd >= 0)
		close(fd);
	return rc;
}

int gb_fs_check_writable(const char *dir, unsigned long long min_free_bytes, char *err,
                         size_t errlen)
{
	static const char probe[] = "glassbox write probe\n";
	char tmp[PATH_BYTES];
	struct statvfs vfs;
	unsigned long long avail;
	int rc;

	rc = gb_fs_write_temp(dir, probe, sizeof(probe) - 1, tmp, sizeof(tmp), err, errlen);
	if (rc != 0)
		goto out;
	unlink(tmp);
	if (statvfs(dir, &vfs) != 0) {
		gb_set_io_error(err, errlen, "inspect the file system of", dir, errno);
		rc = -EIO;
		goto out;
	}
	avail = (unsigned long long)vfs.f_bavail * (unsigned long long)vfs.f_frsize;
	if (avail < min_free_bytes) {
		gb_set_error(err, errlen,
		             "only %llu bytes are free for %s, less than the %llu "
		             "needed: %s",
		             avail, dir, min_free_bytes,
		             "free space on that file system or move the data dir to a larger one");
		rc = -EIO;
	}
out:
	return rc;
}

int gb_fs_name_is_safe(const char *name)
{
	size_t i;
	char c;

	if (!name || !name[0] || name[0] == '.')
		return 0;
	for (i = 0; name[i]; i++) {
		if (i >= GB_FS_MAX_NAME_BYTES)
			return 0;
		c = name[i];
		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
		      c == '.' || c == '_' || c == '-'))
			return 0;
		if (c == '.' && name[i + 1] == '.')
			return 0;
	}
	return 1;
}

int gb_fs_create_db_file(const char *path)
{
	int fd;

	if (access(path, F_OK) == 0)
		return 0;
	fd = open(path, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0)
		return -errno;
	close(fd);
	return 0;
}

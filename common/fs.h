/*
 * fs.h - file operations for state that must survive a crash: private
 * directories, atomic publication of a file (temp file in the same
 * directory, write, fsync, rename or link, fsync the directory) and
 * bounded reads. Every error names the path, the system's reason and
 * what to do about it. Errors are negated errno values.
 */
#ifndef GB_FS_H
#define GB_FS_H

#include <stddef.h>

/* Longest name gb_fs_name_is_safe() accepts (tenants, users, ids). */
#define GB_FS_MAX_NAME_BYTES 64u

/* 1 when name is 1..GB_FS_MAX_NAME_BYTES of [A-Za-z0-9._-], does not
 * start with '.' and contains no "..": safe as one path component. */
int gb_fs_name_is_safe(const char *name);

/* Writes a formatted message into err (if err and errlen). */
void gb_set_error(char *err, size_t errlen, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* snprintf into buf for a path or a key: 0, or -1 (buf then holds "")
 * when it does not fit. */
int gb_pathf(char *buf, size_t buflen, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* Writes "cannot <what> <path>: <strerror(errnum)>; <what to do>" into err,
 * with advice chosen from errnum (full disk, read-only, permissions...). */
void gb_set_io_error(char *err, size_t errlen, const char *what, const char *path, int errnum);

/* Creates base/rel and every missing dir of rel below base (mode 0700),
 * fsyncing each parent that gained an entry. base must exist. Returns 0,
 * -EINVAL (path too long) or -EIO. */
int gb_fs_mkdirs(const char *base, const char *rel, char *err, size_t errlen);

/* Creates every missing dir of path (0700), from the root down. */
int gb_fs_mkdirs_abs(const char *path, char *err, size_t errlen);

/* Writes data[0..len) to a new temp file (0600) in dir and fsyncs it;
 * its path goes to tmp (tmplen bytes). Returns 0, -EINVAL or -EIO. */
int gb_fs_write_temp(const char *dir, const void *data, size_t len, char *tmp, size_t tmplen,
                     char *err, size_t errlen);

/* Renames tmp over final (atomic replace) and fsyncs dir. On failure tmp
 * is removed. Returns 0 or -EIO. */
int gb_fs_publish_replace(const char *tmp, const char *final, const char *dir, char *err,
                          size_t errlen);

/* Writes data[0..len) to path atomically: a temp file in path's dir
 * (the current dir when path names none), fsynced, renamed over path.
 * Returns 0, -EINVAL (path too long) or -EIO, with err. */
int gb_fs_write_replace(const char *path, const void *data, size_t len, char *err, size_t errlen);

/* Links tmp to final only if final does not exist yet (atomic), removes
 * tmp and fsyncs dir. Returns 0, 1 when final already exists (tmp is
 * kept for another try), or -EIO (tmp removed). */
int gb_fs_publish_new(const char *tmp, const char *final, const char *dir, char *err,
                      size_t errlen);

/* Fsyncs the directory dir (after an entry in it was added, renamed or
 * removed). Returns 0 or -EIO. */
int gb_fs_sync_dir(const char *dir, char *err, size_t errlen);

/* Creates the database file path, empty and 0600 (SQLite gives its -wal
 * and -shm files the database's mode), only when it does not exist: a
 * file that exists is never opened, since closing a descriptor of a
 * database this process has open through SQLite drops SQLite's POSIX
 * locks on it and another process could then corrupt it. Returns 0 or a
 * negated errno. */
int gb_fs_create_db_file(const char *path);

/* Reads a whole regular file (no symlink) of at most max_bytes into a
 * malloc'd buffer (NUL-terminated one byte past *len). Returns 0,
 * -ENOENT, -EIO (with reason), or -ENOMEM. */
int gb_fs_read_file(const char *path, size_t max_bytes, unsigned char **out, size_t *len, char *err,
                    size_t errlen);

/* Probes that dir can be written (a temp file written, fsynced, removed)
 * and that its file system has min_free_bytes available. */
int gb_fs_check_writable(const char *dir, unsigned long long min_free_bytes, char *err,
                         size_t errlen);

#endif

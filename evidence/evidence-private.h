/*
 * evidence-private.h - helpers shared by the files of evidence/ and
 * reachable from its unit test; other modules include evidence.h only.
 */
#ifndef GB_EVIDENCE_PRIVATE_H
#define GB_EVIDENCE_PRIVATE_H

#include <stddef.h>

/* Largest metadata record read back or written, bytes. */
#define EVID_MAX_META_BYTES (1024u * 1024u)

/* Writes a formatted message into err (if err and errlen). */
void evid_set_error(char *err, size_t errlen, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* Writes "cannot <what> <path>: <strerror(errnum)>; <what to do>" into err,
 * with advice chosen from errnum (full disk, read-only, permissions...). */
void evid_set_io_error(char *err, size_t errlen, const char *what, const char *path, int errnum);

/* 1 when name is 1..EVID_MAX_NAME_BYTES of [A-Za-z0-9._-], does not start
 * with '.' and contains no "..": safe as one path component. */
int evid_name_is_safe(const char *name);

/* 1 when hex is exactly 64 lowercase hex digits. */
int evid_sha256_hex_is_valid(const char *hex);

/* sha256 of data[0..len) as 64 lowercase hex digits + NUL into hex[65]. */
void evid_sha256_hex(const unsigned char *data, size_t len, char hex[65]);

/* ---- files (fsutil.c) ---------------------------------------------------- */

/* Creates base/rel and every missing dir of rel below base (mode 0700),
 * fsyncing each parent that gained an entry. base must exist. */
int evid_fs_mkdirs(const char *base, const char *rel, char *err, size_t errlen);

/* Creates every missing dir of path (0700), from the root down. */
int evid_fs_mkdirs_abs(const char *path, char *err, size_t errlen);

/* Writes data[0..len) to a new temp file (0600) in dir and fsyncs it;
 * its path goes to tmp (tmplen bytes). */
int evid_fs_write_temp(const char *dir, const void *data, size_t len, char *tmp, size_t tmplen,
                       char *err, size_t errlen);

/* Renames tmp over final (atomic replace) and fsyncs dir. On failure tmp
 * is removed. */
int evid_fs_publish_replace(const char *tmp, const char *final, const char *dir, char *err,
                            size_t errlen);

/* Links tmp to final only if final does not exist yet (atomic), removes
 * tmp and fsyncs dir. Returns 0, 1 when final already exists (tmp is
 * kept for another try), or -EVID_EIO (tmp removed). */
int evid_fs_publish_new(const char *tmp, const char *final, const char *dir, char *err,
                        size_t errlen);

/* Reads a whole regular file (no symlink) of at most max_bytes into a
 * malloc'd buffer (NUL-terminated one byte past *len). Returns 0,
 * -EVID_ENOENT, -EVID_EIO (with reason), or -EVID_ENOMEM. */
int evid_fs_read_file(const char *path, size_t max_bytes, unsigned char **out, size_t *len,
                      char *err, size_t errlen);

#endif

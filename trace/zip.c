/*
 * zip.c - a zip archive built in memory with libarchive (the format
 * Playwright's trace viewer reads: a central directory, deflated
 * entries). The buffer has a ceiling; exceeding it is a clean error.
 */
#include "trace/trace-private.h"

#include <archive.h>
#include <archive_entry.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

struct trace_zip {
	struct archive *a;
	struct gb_buf buf;
	int full; /* the ceiling was reached */
};

static la_ssize_t zip_write(struct archive *a, void *user, const void *data, size_t n)
{
	struct trace_zip *z = user;

	(void)a;
	if (gb_buf_append(&z->buf, (const char *)data, n) != 0) {
		z->full = 1;
		return -1;
	}
	return (la_ssize_t)n;
}

struct trace_zip *trace_zip_new(size_t max_bytes)
{
	struct trace_zip *z = calloc(1, sizeof(*z));

	if (!z)
		return NULL;
	gb_buf_init(&z->buf, max_bytes);
	z->a = archive_write_new();
	if (!z->a || archive_write_set_format_zip(z->a) != ARCHIVE_OK ||
	    archive_write_set_bytes_in_last_block(z->a, 1) != ARCHIVE_OK ||
	    archive_write_open(z->a, z, NULL, zip_write, NULL) != ARCHIVE_OK) {
		trace_zip_free(z);
		return NULL;
	}
	return z;
}

int trace_zip_add(struct trace_zip *z, const char *name, const void *data, size_t len, char *err,
                  size_t errlen)
{
	struct archive_entry *e = archive_entry_new();
	int rc = -1;

	if (!e)
		goto out;
	archive_entry_set_pathname(e, name);
	archive_entry_set_filetype(e, AE_IFREG);
	archive_entry_set_perm(e, 0644);
	archive_entry_set_size(e, (la_int64_t)len);
	archive_entry_set_mtime(e, time(NULL), 0);
	if (archive_write_header(z->a, e) != ARCHIVE_OK ||
	    (len && archive_write_data(z->a, data, len) != (la_ssize_t)len))
		goto out;
	rc = 0;
out:
	if (rc != 0)
		gb_set_error(err, errlen, "cannot add %s to the zip: %s", name,
		             z->full ? "the archive would be too large (narrow the export)"
		                     : gb_or(archive_error_string(z->a), "out of memory"));
	archive_entry_free(e);
	return rc;
}

int trace_zip_finish(struct trace_zip *z, unsigned char **out, size_t *len, char *err,
                     size_t errlen)
{
	int rc = -1;

	*out = NULL;
	*len = 0;
	if (archive_write_close(z->a) != ARCHIVE_OK) {
		gb_set_error(err, errlen, "cannot finish the zip: %s",
		             z->full ? "the archive would be too large (narrow the export)"
		                     : gb_or(archive_error_string(z->a), "write failed"));
		goto out;
	}
	*len = z->buf.len;
	*out = (unsigned char *)gb_buf_steal(&z->buf);
	rc = *out ? 0 : -1;
	if (rc != 0)
		gb_set_error(err, errlen, "out of memory finishing the zip");
out:
	trace_zip_free(z);
	return rc;
}

void trace_zip_free(struct trace_zip *z)
{
	if (!z)
		return;
	if (z->a)
		archive_write_free(z->a);
	gb_buf_free(&z->buf);
	free(z);
}

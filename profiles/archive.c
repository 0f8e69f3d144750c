/*
 * archive.c - a Chromium user-data-dir as a tar stream (libarchive, pax
 * format, no compression: the stream is sealed right after), and back.
 *
 * Packing walks the dir without following links and keeps regular files
 * and directories, leaving out what a browser rebuilds by itself (caches,
 * crash dumps, lock files, DevToolsActivePort). Unpacking treats the
 * stream as hostile even though it authenticated: only regular files and
 * directories, only relative paths of safe components, created with
 * O_EXCL | O_NOFOLLOW under a fresh private dir, with a ceiling on the
 * total size.
 */
#include "profiles/profiles-private.h"

#include "common/fs.h"

#include <archive.h>
#include <archive_entry.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define MAX_DEPTH 24
#define REL_MAX 1024
#define IO_BYTES (64u * 1024u)

/* Names left out wherever they appear: caches, crash dumps, locks. */
static const char *const skipped[] = {
	"Cache",
	"Code Cache",
	"GPUCache",
	"GrShaderCache",
	"ShaderCache",
	"GraphiteDawnCache",
	"DawnCache",
	"DawnGraphiteCache",
	"DawnWebGPUCache",
	"Crashpad",
	"BrowserMetrics",
	"BrowserMetrics-spare.pma",
	"component_crx_cache",
	"Safe Browsing",
	"optimization_guide_model_store",
	"DevToolsActivePort",
	"SingletonLock",
	"SingletonSocket",
	"SingletonCookie",
	"chrome_debug.log",
	"CrashpadMetrics-active.pma",
};

int prof_archive_skip(const char *name)
{
	size_t i;

	for (i = 0; i < sizeof(skipped) / sizeof(skipped[0]); i++)
		if (!strcmp(name, skipped[i]))
			return 1;
	return 0;
}

int prof_archive_path_ok(const char *rel)
{
	const char *p = rel;
	const char *slash;
	size_t len = strlen(rel);
	size_t n;

	if (len == 0 || len >= REL_MAX || rel[0] == '/')
		return 0;
	if (rel[len - 1] == '/')
		len--;
	while (p < rel + len) {
		slash = memchr(p, '/', (size_t)(rel + len - p));
		n = slash ? (size_t)(slash - p) : (size_t)(rel + len - p);
		if (n == 0 || (n == 1 && p[0] == '.') || (n == 2 && p[0] == '.' && p[1] == '.'))
			return 0;
		if (memchr(p, '\\', n) || memchr(p, '\0', n))
			return 0;
		p += n + (slash ? 1 : 0);
		if (slash && p == rel + len)
			return 0; /* "a//" */
	}
	return 1;
}

/* ---- packing -------------------------------------------------------------- */

struct pack {
	struct archive *a;
	prof_write_fn out;
	void *user;
	int out_rc;
	uint64_t bytes;
	unsigned char buf[IO_BYTES];
	char *err;
	size_t errlen;
};

static la_ssize_t pack_write(struct archive *a, void *user, const void *buf, size_t n)
{
	struct pack *p = user;
	int rc = p->out(p->user, buf, n);

	(void)a;
	if (rc < 0) {
		p->out_rc = rc;
		return -1;
	}
	return (la_ssize_t)n;
}

/* An entry header for rel (a dir or a regular file of size bytes). */
static int pack_header(struct pack *p, const char *rel, int is_dir, int64_t size)
{
	struct archive_entry *e = archive_entry_new();
	int rc;

	if (!e)
		return -ENOMEM;
	archive_entry_set_pathname(e, rel);
	archive_entry_set_filetype(e, is_dir ? AE_IFDIR : AE_IFREG);
	archive_entry_set_perm(e, is_dir ? 0700 : 0600);
	archive_entry_set_size(e, is_dir ? 0 : size);
	rc = archive_write_header(p->a, e);
	archive_entry_free(e);
	if (rc != ARCHIVE_OK) {
		gb_set_error(p->err, p->errlen, "cannot pack %s: %s", rel,
		             archive_error_string(p->a) ? archive_error_string(p->a)
		                                        : "write failed");
		return p->out_rc ? p->out_rc : -EIO;
	}
	return 0;
}

/* Packs the regular file fd (opened at rel, size bytes). */
static int pack_file(struct pack *p, int fd, const char *rel, int64_t size)
{
	int64_t left = size;
	ssize_t n;
	int rc = pack_header(p, rel, 0, size);

	while (rc == 0 && left > 0) {
		n = read(fd, p->buf,
		         left < (int64_t)sizeof(p->buf) ? (size_t)left : sizeof(p->buf));
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			/* shrank while packing: the header's size is padded with zeros */
			break;
		}
		if (archive_write_data(p->a, p->buf, (size_t)n) < 0) {
			gb_set_error(p->err, p->errlen, "cannot pack %s: the sealed output failed",
			             rel);
			rc = p->out_rc ? p->out_rc : -EIO;
			break;
		}
		p->bytes += (uint64_t)n;
		left -= n;
	}
	return rc;
}

/* Packs the entries of the dir open as dfd (at rel, "" for the top). */
static int pack_dir(struct pack *p, int dfd, const char *rel, int depth)
{
	DIR *d;
	struct dirent *de;
	struct stat st;
	char child[REL_MAX];
	int fd;
	int rc = 0;

	if (depth > MAX_DEPTH)
		return 0; /* deeper than any browser state: left out */
	d = fdopendir(dfd);
	if (!d) {
		close(dfd);
		return -EIO;
	}
	while (rc == 0 && (de = readdir(d)) != NULL) {
		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, "..") ||
		    prof_archive_skip(de->d_name))
			continue;
		if (gb_pathf(child, sizeof(child), "%s%s%s", rel, rel[0] ? "/" : "", de->d_name) <
		        0 ||
		    !prof_archive_path_ok(child))
			continue;
		if (fstatat(dirfd(d), de->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0)
			continue; /* gone meanwhile */
		if (!S_ISDIR(st.st_mode) && !S_ISREG(st.st_mode))
			continue; /* links, sockets, fifos */
		fd = openat(dirfd(d), de->d_name,
		            O_RDONLY | O_NOFOLLOW | O_CLOEXEC |
		                (S_ISDIR(st.st_mode) ? O_DIRECTORY : 0));
		if (fd < 0)
			continue;
		if (S_ISDIR(st.st_mode)) {
			rc = pack_header(p, child, 1, 0);
			if (rc == 0)
				rc = pack_dir(p, fd, child, depth + 1);
			else
				close(fd);
		} else {
			rc = pack_file(p, fd, child, (int64_t)st.st_size);
			close(fd);
		}
	}
	closedir(d);
	return rc;
}

int prof_archive_dir(const char *dir, prof_write_fn out, void *user, uint64_t *bytes, char *err,
                     size_t errlen)
{
	struct pack *p = calloc(1, sizeof(*p));
	int dfd;
	int rc;

	if (!p)
		return -ENOMEM;
	p->out = out;
	p->user = user;
	p->err = err;
	p->errlen = errlen;
	p->a = archive_write_new();
	if (!p->a) {
		free(p);
		return -ENOMEM;
	}
	archive_write_set_format_pax_restricted(p->a);
	archive_write_add_filter_none(p->a);
	archive_write_set_bytes_per_block(p->a, 10240);
	archive_write_set_bytes_in_last_block(p->a, 1);
	if (archive_write_open2(p->a, p, NULL, pack_write, NULL, NULL) != ARCHIVE_OK) {
		gb_set_error(err, errlen, "cannot start the archive of %s", dir);
		rc = -EIO;
		goto out;
	}
	dfd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (dfd < 0) {
		gb_set_io_error(err, errlen, "open the profile dir", dir, errno);
		rc = -EIO;
		goto out;
	}
	rc = pack_dir(p, dfd, "", 0);
	if (rc == 0 && archive_write_close(p->a) != ARCHIVE_OK) {
		gb_set_error(err, errlen, "cannot finish the archive of %s", dir);
		rc = p->out_rc ? p->out_rc : -EIO;
	}
	if (bytes)
		*bytes = p->bytes;
out:
	archive_write_free(p->a);
	free(p);
	return rc;
}

/* ---- unpacking ------------------------------------------------------------- */

struct unpack {
	prof_read_fn in;
	void *user;
	int in_rc;
	unsigned char buf[IO_BYTES];
};

static la_ssize_t unpack_read(struct archive *a, void *user, const void **buf)
{
	struct unpack *u = user;
	ssize_t n = u->in(u->user, u->buf, sizeof(u->buf));

	(void)a;
	*buf = u->buf;
	if (n < 0) {
		u->in_rc = (int)n;
		return -1;
	}
	return (la_ssize_t)n;
}

/* Creates the dirs of rel's parents under root (0700). */
static int make_parents(const char *root, const char *rel, char *err, size_t errlen)
{
	char parent[REL_MAX];
	char *slash;

	snprintf(parent, sizeof(parent), "%s", rel);
	slash = strrchr(parent, '/');
	if (!slash)
		return 0;
	*slash = '\0';
	return gb_fs_mkdirs(root, parent, err, errlen);
}

/* Writes the current entry's data to root/rel (a new file). */
static int unpack_file(struct archive *a, const char *root, const char *rel, uint64_t *total,
                       uint64_t max_bytes, char *err, size_t errlen)
{
	char path[4096];
	const void *block;
	size_t size;
	la_int64_t offset;
	int fd;
	int r;
	int rc = 0;

	if (make_parents(root, rel, err, errlen) < 0 ||
	    gb_pathf(path, sizeof(path), "%s/%s", root, rel) < 0)
		return -EIO;
	fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0) {
		if (errno == EEXIST) {
			gb_set_error(err, errlen, "the profile archive holds %s twice", rel);
			return -EBADMSG;
		}
		gb_set_io_error(err, errlen, "create", path, errno);
		return -EIO;
	}
	for (;;) {
		r = archive_read_data_block(a, &block, &size, &offset);
		if (r == ARCHIVE_EOF)
			break;
		if (r != ARCHIVE_OK) {
			gb_set_error(err, errlen, "the profile archive is damaged at %s", rel);
			rc = -EBADMSG;
			break;
		}
		*total += size;
		if (*total > max_bytes || offset < 0 || (uint64_t)offset + size > max_bytes) {
			gb_set_error(err, errlen, "the profile holds more than %llu bytes",
			             (unsigned long long)max_bytes);
			rc = -EBADMSG;
			break;
		}
		if (size && pwrite(fd, block, size, (off_t)offset) != (ssize_t)size) {
			gb_set_io_error(err, errlen, "write", path, errno);
			rc = -EIO;
			break;
		}
	}
	close(fd);
	return rc;
}

int prof_extract(prof_read_fn in, void *user, const char *dir, uint64_t max_bytes, char *err,
                 size_t errlen)
{
	struct unpack *u = calloc(1, sizeof(*u));
	struct archive *a = NULL;
	struct archive_entry *e;
	uint64_t total = 0;
	const char *rel;
	char relbuf[REL_MAX];
	int r;
	int rc = 0;

	if (!u)
		return -ENOMEM;
	u->in = in;
	u->user = user;
	a = archive_read_new();
	if (!a) {
		rc = -ENOMEM;
		goto out;
	}
	archive_read_support_format_tar(a);
	archive_read_support_filter_none(a);
	if (archive_read_open(a, u, NULL, unpack_read, NULL) != ARCHIVE_OK) {
		rc = u->in_rc ? u->in_rc : -EBADMSG;
		gb_set_error(err, errlen, "the profile's state is not an archive glassbox wrote");
		goto out;
	}
	for (;;) {
		r = archive_read_next_header(a, &e);
		if (r == ARCHIVE_EOF)
			break;
		if (r != ARCHIVE_OK) {
			rc = u->in_rc ? u->in_rc : -EBADMSG;
			gb_set_error(err, errlen, "the profile archive is damaged");
			goto out;
		}
		rel = archive_entry_pathname(e);
		if (!rel || !prof_archive_path_ok(rel) || archive_entry_hardlink(e) ||
		    archive_entry_symlink(e)) {
			gb_set_error(err, errlen,
			             "the profile archive holds an unsafe path or a link");
			rc = -EBADMSG;
			goto out;
		}
		snprintf(relbuf, sizeof(relbuf), "%s", rel);
		if (relbuf[strlen(relbuf) - 1] == '/')
			relbuf[strlen(relbuf) - 1] = '\0';
		if (archive_entry_filetype(e) == AE_IFDIR) {
			rc = gb_fs_mkdirs(dir, relbuf, err, errlen);
		} else if (archive_entry_filetype(e) == AE_IFREG) {
			rc = unpack_file(a, dir, relbuf, &total, max_bytes, err, errlen);
		} else {
			gb_set_error(err, errlen, "the profile archive holds a special file");
			rc = -EBADMSG;
		}
		if (rc < 0)
			goto out;
	}
out:
	if (a)
		archive_read_free(a);
	free(u);
	return rc;
}

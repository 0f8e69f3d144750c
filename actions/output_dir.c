/*
 * output_dir.c - files the tools write for the agent (a snapshot or a
 * screenshot with `filename`, a script's result) in the server's output
 * directory (--output-dir), besides the artifact store.
 *
 * A client names the file, so the name is hostile: only a plain name is
 * taken (no directory part, no leading dot), and the file is opened
 * without following a symlink, so nothing outside the directory is ever
 * written.
 */
#include "actions/actions-private.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

int act_output_path(struct act_ctx *ctx, const char *filename, char *path, size_t pathlen)
{
	const char *p;
	int n;

	if (!ctx->as->output_dir)
		return act_fail(ctx, "bad_arguments",
		                "filename needs an output directory: start the server with "
		                "--output-dir DIR (or outputDir in --config), or call without "
		                "filename to get the content inline");
	if (!filename || !*filename || filename[0] == '.' || strlen(filename) > 200)
		goto bad;
	for (p = filename; *p; p++)
		if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
		      (*p >= '0' && *p <= '9') || *p == '.' || *p == '-' || *p == '_'))
			goto bad;
	n = snprintf(path, pathlen, "%s/%s", ctx->as->output_dir, filename);
	if (n < 0 || (size_t)n >= pathlen)
		goto bad;
	return 0;
bad:
	return act_fail(ctx, "bad_arguments",
	                "filename \"%.100s\" is not a plain file name: use letters, digits, '.', "
	                "'-' and '_' only (no directory, not starting with '.'); the file goes "
	                "into the server's output directory",
	                filename ? filename : "");
}

/* Writes data to path, replaced or (append) appended to, created when
 * missing, never through a symlink. Returns 0, or -1 with errno. */
static int put_file(const char *path, int append, const void *data, size_t len)
{
	const char *p = data;
	int fd =
	    open(path, O_WRONLY | O_CREAT | (append ? O_APPEND : O_TRUNC) | O_NOFOLLOW | O_CLOEXEC,
	         0644);
	int rc = -1, saved;

	if (fd < 0)
		return -1;
	while (len) {
		ssize_t w = write(fd, p, len);

		if (w < 0 && errno == EINTR)
			continue;
		if (w == 0)
			errno = EIO;
		if (w <= 0)
			goto out;
		p += w;
		len -= (size_t)w;
	}
	rc = 0;
out:
	saved = errno;
	close(fd);
	errno = saved;
	return rc;
}

int act_output_write(struct act_ctx *ctx, const char *path, const void *data, size_t len)
{
	if (put_file(path, 0, data, len) < 0)
		return act_fail(ctx, "output_failed", "cannot write %s: %s", path, strerror(errno));
	return 0;
}

int act_output_fresh_name(const struct act_ctx *ctx, const char *prefix, const char *ext,
                          char *name, size_t namelen)
{
	char stamp[40];
	char path[4096];
	size_t i;
	int k;

	if (!ctx->as->output_dir)
		return -1;
	gb_utc_iso8601(stamp, sizeof(stamp));
	for (i = 0; stamp[i]; i++)
		if (stamp[i] == ':' || stamp[i] == '.')
			stamp[i] = '-';
	for (k = 0; k < 100; k++) {
		if (k)
			snprintf(name, namelen, "%s-%s-%d.%s", prefix, stamp, k, ext);
		else
			snprintf(name, namelen, "%s-%s.%s", prefix, stamp, ext);
		snprintf(path, sizeof(path), "%s/%s", ctx->as->output_dir, name);
		if (access(path, F_OK) != 0)
			return 0;
	}
	return -1;
}

int act_output_new_file(struct act_ctx *ctx, const char *prefix, const char *ext, const void *data,
                        size_t len, char *link, size_t linklen)
{
	char name[128];
	char path[4096];

	if (act_output_fresh_name(ctx, prefix, ext, name, sizeof(name)) < 0)
		return act_fail(ctx, "output_failed", "no output directory");
	snprintf(path, sizeof(path), "%s/%s", ctx->as->output_dir, name);
	if (act_output_write(ctx, path, data, len) < 0)
		return -1;
	act_output_link(ctx, name, link, linklen);
	return 0;
}

int act_output_save(const struct act_ctx *ctx, const char *name, int append, const void *data,
                    size_t len)
{
	char path[4096];

	if (!ctx->as->output_dir || !name[0] || name[0] == '.' || strchr(name, '/')) {
		errno = EINVAL;
		return -1;
	}
	snprintf(path, sizeof(path), "%s/%s", ctx->as->output_dir, name);
	return put_file(path, append, data, len);
}

void act_output_link(const struct act_ctx *ctx, const char *name, char *link, size_t linklen)
{
	char cwd[4096];
	size_t n = getcwd(cwd, sizeof(cwd)) ? strlen(cwd) : 0;

	if (n && !strcmp(ctx->as->output_dir, cwd))
		snprintf(link, linklen, "%s", name);
	else if (n && !strncmp(ctx->as->output_dir, cwd, n) && ctx->as->output_dir[n] == '/')
		snprintf(link, linklen, "%s/%s", ctx->as->output_dir + n + 1, name);
	else
		snprintf(link, linklen, "%s/%s", ctx->as->output_dir, name);
}

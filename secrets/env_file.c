/*
 * env_file.c - secrets from a dotenv file (`glassbox mcp --secrets FILE`,
 * Playwright MCP's flag), held in memory for the server's lifetime.
 *
 * DESIGN
 * The file is read once at start: NAME=value lines, blank lines and
 * `#` comments, a value optionally in single or double quotes, an
 * optional leading `export `. Names follow the store's rule
 * (secret_name_is_valid). The values stay in this process's memory only
 * (never written anywhere, wiped when freed); a line that cannot be read
 * is refused by its number, never by its content. Such a secret carries
 * no hosts or fields, as Playwright MCP's has none: it is "unbound"
 * (struct secret_meta), so it may be typed on any host the tenant's
 * egress policy lets the browser reach and into any editable field. The
 * file is refused when it is not a regular file or others may write it
 * (another user could choose what is typed); one that others may read is
 * taken with a warning.
 */
#include "secrets/secrets.h"

#include <errno.h>
#include <fcntl.h>
#include <sodium.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define ENV_FILE_MAX_BYTES (256u << 10)
#define ENV_MAX_SECRETS 256

struct secret_env_entry {
	char name[SECRET_NAME_MAX + 1];
	unsigned char *value; /* NUL-terminated one past len */
	size_t len;
};

struct secret_env {
	struct secret_env_entry *e;
	size_t n;
};

void secret_env_free(struct secret_env *env)
{
	size_t i;

	if (!env)
		return;
	for (i = 0; i < env->n; i++)
		secret_value_free(env->e[i].value, env->e[i].len);
	free(env->e);
	free(env);
}

/* Reads the whole file at path into a wiped-on-free buffer *data (len
 * bytes, NUL-terminated). 0, or a negative errno with err. */
static int read_file(const char *path, char **data, size_t *len, int *world_readable, char *err,
                     size_t errlen)
{
	struct stat st = { 0 };
	char *buf = NULL;
	size_t got = 0;
	ssize_t r;
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
	int rc = -EINVAL;

	if (fd < 0) {
		rc = -errno;
		snprintf(err, errlen, "cannot open %s: %s%s", path, strerror(errno),
		         errno == ELOOP ? " (a symlink: name the file itself)" : "");
		goto out;
	}
	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
		snprintf(err, errlen, "%s is not a regular file", path);
		goto out;
	}
	if (st.st_mode & (S_IWGRP | S_IWOTH)) {
		rc = -EPERM;
		snprintf(err, errlen,
		         "%s may be written by other users (mode %04o), who could choose what is "
		         "typed: chmod 600 it",
		         path, (unsigned)(st.st_mode & 07777));
		goto out;
	}
	if (st.st_size < 0 || (size_t)st.st_size > ENV_FILE_MAX_BYTES) {
		rc = -EFBIG;
		snprintf(err, errlen, "%s is larger than %u KiB", path, ENV_FILE_MAX_BYTES >> 10);
		goto out;
	}
	*world_readable = (st.st_mode & (S_IRGRP | S_IROTH)) != 0;
	buf = malloc((size_t)st.st_size + 1);
	if (!buf) {
		rc = -ENOMEM;
		snprintf(err, errlen, "out of memory");
		goto out;
	}
	while (got < (size_t)st.st_size && (r = read(fd, buf + got, (size_t)st.st_size - got)) > 0)
		got += (size_t)r;
	buf[got] = '\0';
	*data = buf;
	*len = got;
	buf = NULL;
	rc = 0;
out:
	if (buf) {
		sodium_memzero(buf, (size_t)st.st_size + 1);
		free(buf);
	}
	if (fd >= 0)
		close(fd);
	return rc;
}

/* Parses one line (NUL-terminated, no newline) into env. 0, 1 for a line
 * without an entry, or -1 with what is wrong in why. */
static int parse_line(char *line, struct secret_env *env, const char **why)
{
	struct secret_env_entry *e;
	char *eq, *name, *value, *end;
	size_t len, i;

	while (*line == ' ' || *line == '\t')
		line++;
	if (!*line || *line == '#' || *line == '\r')
		return 1;
	if (!strncmp(line, "export ", 7))
		line += 7;
	eq = strchr(line, '=');
	if (!eq) {
		*why = "it is not NAME=value";
		return -1;
	}
	name = line;
	for (end = eq; end > name && (end[-1] == ' ' || end[-1] == '\t'); end--)
		;
	*end = '\0';
	if (!secret_name_is_valid(name)) {
		*why =
		    "the name must be 1 to 64 letters, digits, '_' or '-', starting with a letter";
		return -1;
	}
	for (i = 0; i < env->n; i++)
		if (!strcmp(env->e[i].name, name)) {
			*why = "the name is given twice";
			return -1;
		}
	value = eq + 1;
	while (*value == ' ' || *value == '\t')
		value++;
	len = strlen(value);
	while (len && (value[len - 1] == '\r' || value[len - 1] == ' ' || value[len - 1] == '\t'))
		len--;
	if (len >= 2 && (value[0] == '"' || value[0] == '\'') && value[len - 1] == value[0]) {
		value++;
		len -= 2;
	}
	if (!len || len > SECRET_VALUE_MAX) {
		*why = "the value must be 1 to 4096 bytes";
		return -1;
	}
	if (env->n >= ENV_MAX_SECRETS) {
		*why = "the file holds more than 256 secrets";
		return -1;
	}
	e = &env->e[env->n];
	snprintf(e->name, sizeof(e->name), "%s", name);
	e->value = malloc(len + 1);
	if (!e->value) {
		*why = "out of memory";
		return -1;
	}
	memcpy(e->value, value, len);
	e->value[len] = '\0';
	e->len = len;
	env->n++;
	return 0;
}

int secret_env_load(const char *path, struct secret_env **out, char *warning, size_t warnlen,
                    char *err, size_t errlen)
{
	struct secret_env *env = NULL;
	char *data = NULL;
	size_t len = 0;
	int readable = 0;
	int rc, lineno = 0;
	char *line, *next;

	*out = NULL;
	if (warning && warnlen)
		warning[0] = '\0';
	rc = read_file(path, &data, &len, &readable, err, errlen);
	if (rc < 0)
		return rc;
	rc = -ENOMEM;
	env = calloc(1, sizeof(*env));
	if (!env || !(env->e = calloc(ENV_MAX_SECRETS, sizeof(*env->e)))) {
		snprintf(err, errlen, "out of memory");
		goto out;
	}
	rc = -EINVAL;
	for (line = data; line; line = next) {
		const char *why = NULL;

		next = strchr(line, '\n');
		if (next)
			*next++ = '\0';
		lineno++;
		if (parse_line(line, env, &why) < 0) {
			snprintf(err, errlen, "%s, line %d: %s", path, lineno, why);
			goto out;
		}
	}
	if (!env->n) {
		snprintf(err, errlen, "%s holds no NAME=value line", path);
		goto out;
	}
	if (readable && warning)
		snprintf(
		    warning, warnlen,
		    "%s may be read by other users: chmod 600 it (its values are typed all the "
		    "same)",
		    path);
	*out = env;
	env = NULL;
	rc = 0;
out:
	sodium_memzero(data, len);
	free(data);
	secret_env_free(env);
	return rc;
}

size_t secret_env_count(const struct secret_env *env)
{
	return env ? env->n : 0;
}

int secret_env_has(const struct secret_env *env, const char *name)
{
	size_t i;

	for (i = 0; env && name && i < env->n; i++)
		if (!strcmp(env->e[i].name, name))
			return 1;
	return 0;
}

int secret_env_open(const struct secret_env *env, const char *name, struct secret_meta *meta,
                    unsigned char **value, size_t *len)
{
	size_t i;

	for (i = 0; env && name && i < env->n; i++) {
		if (strcmp(env->e[i].name, name) != 0)
			continue;
		*value = malloc(env->e[i].len + 1);
		if (!*value)
			return -ENOMEM;
		memcpy(*value, env->e[i].value, env->e[i].len + 1);
		*len = env->e[i].len;
		memset(meta, 0, sizeof(*meta));
		snprintf(meta->name, sizeof(meta->name), "%s", name);
		meta->version = 1;
		snprintf(meta->fields[0], sizeof(meta->fields[0]), "any");
		meta->n_fields = 1;
		meta->unbound = 1;
		return 0;
	}
	return -ENOENT;
}

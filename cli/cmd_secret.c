/*
 * cmd_secret.c - `glassbox secret`: a tenant's secrets (secrets/).
 *
 *   glassbox secret set NAME --hosts H1,H2 [--fields K1,K2] [--tenant T] [--from-file F]
 *   glassbox secret list [--tenant T] [--json]
 *   glassbox secret delete NAME [--tenant T]
 *
 * A value is read from stdin (without echo on a terminal) or from a file,
 * never from the command line, where other users and shell histories see
 * it. One trailing newline is dropped. Nothing here prints a value.
 */
#include "cli/commands.h"

#include "common/fs.h"
#include "common/util.h"
#include "secrets/secrets.h"

#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <sodium.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <termios.h>
#include <unistd.h>

#define SECRET_READ_MAX (SECRET_VALUE_MAX + 2)

static void secret_usage(FILE *out)
{
	fprintf(
	    out,
	    "usage: glassbox secret set NAME --hosts H1[,H2...] [--fields K1[,K2...]] [--tenant "
	    "T]\n"
	    "                           [--from-file FILE]   (value on stdin unless --from-file)\n"
	    "       glassbox secret list [--tenant T] [--json]\n"
	    "       glassbox secret delete NAME [--tenant T]\n"
	    "\n"
	    "Hosts are patterns as in the egress allowlist (shop.test, *.example.com). Field "
	    "kinds\n"
	    "(default password,username,email,one-time-code): password, username, email,\n"
	    "one-time-code, text, textarea, any. The tenant defaults to \"local\".\n");
}

/* Splits a comma-separated list in place into items (at most max).
 * Returns the count, or -1 when there are more than max. */
static int split_list(char *s, const char **items, int max)
{
	int n = 0;
	char *save = NULL;
	char *p;

	for (p = strtok_r(s, ",", &save); p; p = strtok_r(NULL, ",", &save)) {
		while (*p == ' ')
			p++;
		if (!*p)
			continue;
		if (n == max)
			return -1;
		items[n++] = p;
	}
	return n;
}

/* Reads at most SECRET_READ_MAX bytes from fd into buf; *len the count.
 * Returns 0, or -1 when there is more (too long) or reading failed. */
static int read_all(int fd, unsigned char *buf, size_t *len)
{
	ssize_t r;

	*len = 0;
	for (;;) {
		r = read(fd, buf + *len, SECRET_READ_MAX + 1 - *len);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			return -1;
		if (r == 0)
			break;
		*len += (size_t)r;
		if (*len > SECRET_READ_MAX)
			return -1;
	}
	return 0;
}

/* Reads the value from path (NULL: stdin, prompting without echo on a
 * terminal) into buf, one trailing newline dropped. */
static int read_value(const char *path, unsigned char *buf, size_t *len)
{
	struct termios old, quiet;
	int tty = 0;
	int fd = STDIN_FILENO;
	int rc;

	if (path) {
		fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
		if (fd < 0) {
			fprintf(stderr, "glassbox: cannot read the value from %s: %s\n", path,
			        strerror(errno));
			return -1;
		}
	} else if (isatty(fd) && tcgetattr(fd, &old) == 0) {
		tty = 1;
		quiet = old;
		quiet.c_lflag &= ~(tcflag_t)ECHO;
		tcsetattr(fd, TCSAFLUSH, &quiet);
		fprintf(stderr, "value (not shown; end with Enter, then Ctrl-D): ");
	}
	rc = read_all(fd, buf, len);
	if (tty) {
		tcsetattr(fd, TCSAFLUSH, &old);
		fprintf(stderr, "\n");
	}
	if (path)
		close(fd);
	if (rc < 0) {
		fprintf(stderr,
		        "glassbox: the value is longer than %d bytes or could not be read\n",
		        SECRET_VALUE_MAX);
		return -1;
	}
	if (*len && buf[*len - 1] == '\n')
		(*len)--;
	if (*len && buf[*len - 1] == '\r')
		(*len)--;
	return 0;
}

static int cmd_set(const char *data_dir, const char *tenant, const char *name, char *hosts,
                   char *fields, const char *from_file)
{
	const char *host_list[SECRET_MAX_HOSTS + 1];
	const char *field_list[SECRET_MAX_FIELDS + 1];
	unsigned char *value = NULL;
	struct secret_meta m;
	char err[1024];
	size_t len = 0;
	int n_hosts, n_fields = 0;
	int rc = 1;

	if (!hosts) {
		fprintf(stderr, "glassbox: secret set needs --hosts: the hosts the secret may be "
		                "typed on (e.g. --hosts shop.test)\n");
		return 2;
	}
	n_hosts = split_list(hosts, host_list, SECRET_MAX_HOSTS);
	if (fields)
		n_fields = split_list(fields, field_list, SECRET_MAX_FIELDS);
	if (n_hosts < 0 || n_fields < 0) {
		fprintf(stderr, "glassbox: at most %d hosts and %d field kinds\n", SECRET_MAX_HOSTS,
		        SECRET_MAX_FIELDS);
		return 2;
	}
	if (sodium_init() < 0) {
		fprintf(stderr, "glassbox: libsodium cannot start\n");
		return 1;
	}
	value = sodium_malloc(SECRET_READ_MAX + 1);
	if (!value) {
		fprintf(stderr, "glassbox: out of memory\n");
		return 1;
	}
	if (read_value(from_file, value, &len) < 0)
		goto out;
	if (gb_fs_mkdirs_abs(data_dir, err, sizeof(err)) < 0) {
		fprintf(stderr, "glassbox: %s\n", err);
		goto out;
	}
	if (secret_set(data_dir, tenant, name, host_list, (size_t)n_hosts, field_list,
	               (size_t)n_fields, value, len, &m, err, sizeof(err)) < 0) {
		fprintf(stderr, "glassbox: %s\n", err);
		goto out;
	}
	printf("secret %s (version %u) of tenant %s: may be typed on %s%s%s\n", m.name, m.version,
	       tenant, hosts ? host_list[0] : "", n_hosts > 1 ? " and other hosts" : "",
	       n_fields ? "" : " (password, username, email and one-time-code fields)");
	rc = 0;
out:
	sodium_free(value);
	return rc;
}

static int cmd_list(const char *data_dir, const char *tenant, int as_json)
{
	json_t *list = NULL;
	char err[1024];
	size_t i, k;
	int rc = 1;

	if (secret_list(data_dir, tenant, &list, err, sizeof(err)) < 0) {
		fprintf(stderr, "glassbox: %s\n", err);
		return 1;
	}
	if (as_json) {
		json_dumpf(list, stdout, JSON_INDENT(2));
		printf("\n");
		rc = 0;
		goto out;
	}
	if (json_array_size(list) == 0)
		printf("tenant %s has no secrets\n", tenant);
	else
		printf("%-24s %-8s %-25s %s\n", "NAME", "VERSION", "CREATED", "HOSTS (FIELDS)");
	for (i = 0; i < json_array_size(list); i++) {
		json_t *s = json_array_get(list, i);
		json_t *hosts = json_object_get(s, "hosts");
		json_t *fields = json_object_get(s, "fields");

		if (json_object_get(s, "error")) {
			printf("%-24s unreadable: %s\n",
			       json_string_value(json_object_get(s, "name")),
			       json_string_value(json_object_get(s, "error")));
			continue;
		}
		printf("%-24s %-8d %-25.24s ", json_string_value(json_object_get(s, "name")),
		       (int)json_integer_value(json_object_get(s, "version")),
		       gb_or(json_string_value(json_object_get(s, "created")), ""));
		for (k = 0; k < json_array_size(hosts); k++)
			printf("%s%s", k ? "," : "", json_string_value(json_array_get(hosts, k)));
		if (json_array_size(fields)) {
			printf(" (");
			for (k = 0; k < json_array_size(fields); k++)
				printf("%s%s", k ? "," : "",
				       json_string_value(json_array_get(fields, k)));
			printf(")");
		}
		printf("\n");
	}
	rc = 0;
out:
	json_decref(list);
	return rc;
}

int cli_cmd_secret(int argc, char **argv, const char *data_dir)
{
	const char *tenant = "local";
	const char *from_file = NULL;
	const char *name = NULL;
	char *hosts = NULL, *fields = NULL;
	char err[512];
	int as_json = 0;
	int i;

	if (argc < 2 || !strcmp(argv[1], "--help") || !strcmp(argv[1], "help")) {
		secret_usage(argc < 2 ? stderr : stdout);
		return argc < 2 ? 2 : 0;
	}
	for (i = 2; i < argc; i++) {
		const char *a = argv[i];
		const char *v = i + 1 < argc ? argv[i + 1] : NULL;

		if (!strcmp(a, "--tenant") && v) {
			tenant = v;
			i++;
		} else if (!strcmp(a, "--hosts") && v) {
			hosts = argv[++i];
		} else if (!strcmp(a, "--fields") && v) {
			fields = argv[++i];
		} else if (!strcmp(a, "--from-file") && v) {
			from_file = v;
			i++;
		} else if (!strcmp(a, "--json")) {
			as_json = 1;
		} else if (!strcmp(a, "--value") || !strncmp(a, "--value=", 8)) {
			fprintf(stderr,
			        "glassbox: a secret's value is never taken from the command line "
			        "(other users and shell histories see it): pipe it on stdin or use "
			        "--from-file\n");
			return 2;
		} else if (a[0] != '-' && !name) {
			name = a;
		} else {
			fprintf(stderr, "glassbox: unknown or incomplete option '%s'\n\n", a);
			secret_usage(stderr);
			return 2;
		}
	}
	if (!gb_fs_name_is_safe(tenant)) {
		fprintf(stderr, "glassbox: \"%s\" is not a valid tenant name\n", tenant);
		return 2;
	}
	if (!strcmp(argv[1], "list"))
		return cmd_list(data_dir, tenant, as_json);
	if (strcmp(argv[1], "set") != 0 && strcmp(argv[1], "delete") != 0) {
		fprintf(stderr, "glassbox: unknown secret command '%s'\n\n", argv[1]);
		secret_usage(stderr);
		return 2;
	}
	if (!name) {
		fprintf(stderr,
		        "glassbox: secret %s needs the secret's NAME (e.g. SHOP_PASSWORD)\n",
		        argv[1]);
		return 2;
	}
	if (!strcmp(argv[1], "set"))
		return cmd_set(data_dir, tenant, name, hosts, fields, from_file);
	if (secret_delete(data_dir, tenant, name, err, sizeof(err)) < 0) {
		fprintf(stderr, "glassbox: %s\n", err);
		return 1;
	}
	printf("secret %s of tenant %s deleted\n", name, tenant);
	return 0;
}

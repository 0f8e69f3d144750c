/*
 * vars.c - the values of a flow's ${NAME} variables: a --vars file of
 * NAME=VALUE lines, then the environment. Values are secrets as far as
 * this file knows: none is ever logged or put in an error message.
 */
#include "flows/flows-private.h"

#include "common/util.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* 1 when name is [A-Za-z_][A-Za-z0-9_]*. */
static int valid_name(const char *s, size_t n)
{
	size_t i;

	if (n == 0 || isdigit((unsigned char)s[0]))
		return 0;
	for (i = 0; i < n; i++)
		if (!isalnum((unsigned char)s[i]) && s[i] != '_')
			return 0;
	return 1;
}

/*
 * Splits one line of a vars file. Returns 1 with *name and *value
 * (malloc'd), 0 for a blank or comment line, -1 for a malformed line.
 * "export NAME=VALUE" is accepted (shell files); a value wrapped in
 * matching quotes loses them, and is otherwise kept as written, spaces
 * inside included (only the line's end is trimmed).
 */
UNITTEST int flow_vars_parse_line(const char *line, char **name, char **value)
{
	const char *p = line, *eq, *v;
	size_t len;

	*name = *value = NULL;
	while (*p == ' ' || *p == '\t')
		p++;
	if (!*p || *p == '#' || *p == '\n' || *p == '\r')
		return 0;
	if (!strncmp(p, "export ", 7))
		p += 7;
	eq = strchr(p, '=');
	if (!eq || !valid_name(p, (size_t)(eq - p)))
		return -1;
	v = eq + 1;
	len = strlen(v);
	while (len && (v[len - 1] == '\n' || v[len - 1] == '\r'))
		len--;
	if (len >= 2 && (v[0] == '"' || v[0] == '\'') && v[len - 1] == v[0]) {
		v++;
		len -= 2;
	}
	if (len > FLOW_MAX_VALUE_BYTES)
		return -1;
	*name = strndup(p, (size_t)(eq - p));
	*value = strndup(v, len);
	if (!*name || !*value) {
		free(*name);
		free(*value);
		*name = *value = NULL;
		return -1;
	}
	return 1;
}

int flow_vars_load(const char *file, struct flow_vars **out, char *err, size_t errlen)
{
	struct flow_vars *v = calloc(1, sizeof(*v));
	FILE *f = NULL;
	char line[FLOW_MAX_VALUE_BYTES + 256];
	unsigned lineno = 0;
	int rc = -1;

	*out = NULL;
	if (!v) {
		snprintf(err, errlen, "out of memory");
		goto out;
	}
	if (!file) {
		rc = 0;
		goto out;
	}
	f = fopen(file, "r");
	if (!f) {
		snprintf(err, errlen, "cannot read the vars file %s: %s", file, strerror(errno));
		goto out;
	}
	v->names = calloc(FLOW_MAX_VARS, sizeof(char *));
	v->values = calloc(FLOW_MAX_VARS, sizeof(char *));
	if (!v->names || !v->values) {
		snprintf(err, errlen, "out of memory");
		goto out;
	}
	while (fgets(line, sizeof(line), f)) {
		char *name, *value;
		int r;

		lineno++;
		if (!strchr(line, '\n') && !feof(f)) {
			snprintf(err, errlen, "%s:%u: the line is longer than %u bytes", file,
			         lineno, FLOW_MAX_VALUE_BYTES);
			goto out;
		}
		r = flow_vars_parse_line(line, &name, &value);
		if (r == 0)
			continue;
		if (r < 0) {
			snprintf(err, errlen,
			         "%s:%u: expected NAME=VALUE (NAME made of letters, digits "
			         "and _, not starting with a digit; value at most %u bytes)",
			         file, lineno, FLOW_MAX_VALUE_BYTES);
			goto out;
		}
		if (v->n == FLOW_MAX_VARS) {
			free(name);
			free(value);
			snprintf(err, errlen, "%s:%u: more than %u variables", file, lineno,
			         FLOW_MAX_VARS);
			goto out;
		}
		v->names[v->n] = name;
		v->values[v->n++] = value;
	}
	rc = 0;
out:
	if (f)
		fclose(f);
	if (rc == 0)
		*out = v;
	else
		flow_vars_free(v);
	return rc;
}

void flow_vars_free(struct flow_vars *v)
{
	size_t i;

	if (!v)
		return;
	for (i = 0; i < v->n; i++) {
		free(v->names[i]);
		if (v->values[i])
			memset(v->values[i], 0, strlen(v->values[i]));
		free(v->values[i]);
	}
	free(v->names);
	free(v->values);
	free(v);
}

const char *flow_vars_get(const struct flow_vars *v, const char *name)
{
	size_t i;

	/* the last definition in the file wins, as in a shell */
	for (i = v ? v->n : 0; i > 0; i--)
		if (!strcmp(v->names[i - 1], name))
			return v->values[i - 1];
	return getenv(name);
}

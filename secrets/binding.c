/*
 * binding.c - where a secret may be typed: the hosts of its frame's
 * origin (egress-style patterns, matched by policy/) and the kinds of
 * field that may receive it. Pure and thread-safe.
 */
#include "secrets/secrets.h"

#include "policy/egress.h"

#include <stdio.h>
#include <string.h>
#include <strings.h>

/* The kinds a secret accepts when it names none. */
static const char *const default_fields[] = { "password", "username", "email", "one-time-code",
	                                      NULL };

int secret_host_allowed(const struct secret_meta *meta, const char *url)
{
	size_t i;

	if (!meta || !url)
		return 0;
	if (meta->unbound)
		return 1; /* a --secrets file's: the egress policy alone says where */
	for (i = 0; i < meta->n_hosts; i++)
		if (policy_url_matches_host_pattern(meta->hosts[i], url))
			return 1;
	return 0;
}

/* 1 when the space-separated token list ac holds token (ASCII
 * case-insensitive, as the HTML autocomplete attribute is read). */
static int has_token(const char *ac, const char *token)
{
	size_t tl = strlen(token);
	const char *p = ac;

	while (p && *p) {
		size_t l;

		while (*p == ' ' || *p == '\t' || *p == '\n')
			p++;
		l = strcspn(p, " \t\n");
		if (l == tl && !strncasecmp(p, token, tl))
			return 1;
		p += l;
	}
	return 0;
}

/* 1 when field is of kind (see secrets.h). */
static int field_is(const struct secret_field *f, const char *kind)
{
	const char *tag = f->tag ? f->tag : "";
	const char *type = f->type ? f->type : "";
	const char *ac = f->autocomplete ? f->autocomplete : "";
	int input = !strcasecmp(tag, "input");

	if (!strcmp(kind, "any"))
		return 1;
	if (!strcmp(kind, "password"))
		return (input && !strcasecmp(type, "password")) ||
		       has_token(ac, "current-password") || has_token(ac, "new-password");
	if (!strcmp(kind, "username"))
		return has_token(ac, "username");
	if (!strcmp(kind, "email"))
		return (input && !strcasecmp(type, "email")) || has_token(ac, "email");
	if (!strcmp(kind, "one-time-code"))
		return has_token(ac, "one-time-code");
	if (!strcmp(kind, "text"))
		return input;
	if (!strcmp(kind, "textarea"))
		return !strcasecmp(tag, "textarea");
	return 0;
}

int secret_field_allowed(const struct secret_meta *meta, const struct secret_field *field,
                         char *why, size_t whylen)
{
	const char *kinds[SECRET_MAX_FIELDS + 1];
	const char *const *allowed = default_fields;
	char list[256] = "";
	size_t i, used = 0;

	if (meta && meta->n_fields) {
		for (i = 0; i < meta->n_fields; i++)
			kinds[i] = meta->fields[i];
		kinds[i] = NULL;
		allowed = kinds;
	}
	for (i = 0; allowed[i]; i++)
		if (field_is(field, allowed[i]))
			return 1;
	for (i = 0; allowed[i]; i++) {
		int n = snprintf(list + used, sizeof(list) - used, "%s%s",
		                 i == 0           ? ""
		                 : allowed[i + 1] ? ", "
		                                  : " or ",
		                 allowed[i]);

		if (n < 0 || (size_t)n >= sizeof(list) - used)
			break;
		used += (size_t)n;
	}
	if (why && whylen)
		snprintf(why, whylen, "the field (<%.20s%s%.20s%s%s%.80s%s>) is not a %s field",
		         field->tag ? field->tag : "?",
		         field->type && field->type[0] ? " type=" : "",
		         field->type ? field->type : "",
		         field->autocomplete && field->autocomplete[0] ? " autocomplete=\"" : "",
		         "", field->autocomplete ? field->autocomplete : "",
		         field->autocomplete && field->autocomplete[0] ? "\"" : "", list);
	return 0;
}

/*
 * url.c - layer 1: tools refuse URLs whose scheme is not for web pages,
 * before anything reaches the browser.
 */
#include "policy/policy.h"

#include <ctype.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

/* Copies the lowercased scheme of url (without ':') into out; returns its
 * length, or 0 when the URL has no valid scheme. Leading spaces and
 * control characters, which browsers strip, are skipped. */
static size_t url_scheme(const char *url, char *out, size_t outlen)
{
	size_t n = 0;

	while (*url && (unsigned char)*url <= ' ')
		url++;
	while (url[n] && url[n] != ':') {
		unsigned char c = (unsigned char)url[n];

		if (!(isalnum(c) || c == '+' || c == '-' || c == '.') || n + 1 >= outlen)
			return 0;
		out[n] = (char)tolower(c);
		n++;
	}
	if (url[n] != ':' || n == 0 || !isalpha((unsigned char)out[0]))
		return 0;
	out[n] = '\0';
	return n;
}

int policy_check_tool_url(const char *url, char *rule, size_t rulelen, char *err, size_t errlen)
{
	char scheme[32];
	const char *rest;

	if (!url || !url_scheme(url, scheme, sizeof(scheme))) {
		snprintf(rule, rulelen, "url-invalid");
		snprintf(err, errlen,
		         "\"%.200s\" is not an absolute URL: pass one such as "
		         "https://example.com/",
		         url ? url : "");
		return -1;
	}
	if (!strcmp(scheme, "http") || !strcmp(scheme, "https"))
		return 0;
	rest = strchr(url, ':') + 1;
	if (!strcmp(scheme, "about") && !strncasecmp(rest, "blank", 5) &&
	    (rest[5] == '\0' || rest[5] == '?' || rest[5] == '#'))
		return 0;
	snprintf(rule, rulelen, "scheme-%s", scheme);
	/* Playwright MCP's words first, then glassbox's rule */
	snprintf(err, errlen,
	         "Access to \"%s:\" protocol is blocked. Attempted URL: \"%.200s\". %s: URLs "
	         "are refused (rule %s): only http and https pages (and about:blank) can be "
	         "opened%s",
	         scheme, url, scheme, rule,
	         !strcmp(scheme, "data") ? "; a tenant's policy allows data: pages with "
	                                   "\"allow_data_urls\": true"
	                                 : "");
	return -1;
}

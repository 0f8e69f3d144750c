/*
 * policy.h - what may happen. For now: which URLs a tool may navigate to
 * (layer 1 of DESIGN.md's security layers). Pure and thread-safe.
 */
#ifndef GB_POLICY_H
#define GB_POLICY_H

#include <stddef.h>

/*
 * Checks a URL a tool was asked to navigate to. Only http:, https: and
 * about:blank (any case, with a query or fragment) are allowed; file:, chrome:, chrome-extension:, devtools:,
 * view-source:, javascript:, data: and every other scheme are refused.
 * Returns 0 when allowed, or -1 with the refusing rule's name in rule
 * (e.g. "scheme-file") and a message for the agent in err ("file: URLs
 * are refused (rule scheme-file): only http and https pages (and
 * about:blank) can be opened").
 */
int policy_check_tool_url(const char *url, char *rule, size_t rulelen, char *err, size_t errlen);

#endif

/*
 * browser_own.c - which refusals are of requests Chromium makes on its
 * own, for no page: component updates, network time, account checks.
 * glassbox switches off at launch what a flag can switch off
 * (sessions/process.c); what is left is still refused like any request,
 * and counted and audited, but kept out of an action's "blocked" list,
 * which is about what the page did (docs/egress.md).
 */
#include "policy/policy-private.h"

#include <string.h>

/* The hosts of Chromium's own services, as its own requests reach the
 * egress proxy. Exact names: no page-facing host (fonts, APIs) is here. */
static const char *const browser_hosts[] = {
	"accounts.google.com",
	"update.googleapis.com",
	"clients1.google.com",
	"clients2.google.com",
	"clientservices.googleapis.com",
	"safebrowsing.googleapis.com",
	"sb-ssl.google.com",
	"redirector.gvt1.com",
	"edgedl.me.gvt1.com",
	"optimizationguide-pa.googleapis.com",
	"content-autofill.googleapis.com",
	"android.clients.google.com",
};

int policy_refusal_is_browser_own(const char *layer, const char *host)
{
	size_t i;
	int own = 0;

	/* a page's request passes a target's Fetch layer first: refused there,
	 * it is the page's, whatever its host */
	if (!layer || strcmp(layer, "proxy") != 0 || !host)
		goto out;
	for (i = 0; !own && i < sizeof(browser_hosts) / sizeof(browser_hosts[0]); i++)
		own = strcmp(host, browser_hosts[i]) == 0;
out:
	return own;
}

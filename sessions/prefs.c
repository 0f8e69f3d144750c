/*
 * prefs.c - the Chromium preferences every session's profile gets before
 * its browser starts (Default/Preferences in the user-data-dir), for what
 * has no command-line flag.
 *
 * Now one: "net.network_prediction_options": 2 (never predict). Without
 * it Chromium opens TCP connections ahead of time to the host of a
 * navigation, an iframe, a popup or a link the pointer is on, before any
 * request exists: CDP Fetch interception (egress layer 2) never sees
 * those, so a page could make the browser connect to a host the policy
 * refuses. The egress proxy and the network namespace stop them too; this
 * keeps layer 2 whole on its own (tests/integration/egress-fetch.test.mjs).
 */
#include "sessions/sessions-private.h"

#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#define PREFS_MAX_BYTES (4u * 1024u * 1024u) /* a Preferences file already there */

/* The preferences as they are (an existing file, read up to its ceiling)
 * or a new empty object. New reference, or NULL with err. */
static json_t *load_prefs(const char *path, char *err, size_t errlen)
{
	struct stat st;
	json_error_t jerr;
	json_t *prefs = NULL;

	if (stat(path, &st) != 0) {
		prefs = json_object();
		if (!prefs)
			snprintf(err, errlen, "out of memory");
		goto out;
	}
	if (st.st_size > (off_t)PREFS_MAX_BYTES) {
		snprintf(err, errlen,
		         "the profile's preferences %s are larger than %u bytes: remove the "
		         "file or use a fresh profile",
		         path, PREFS_MAX_BYTES);
		goto out;
	}
	prefs = json_load_file(path, 0, &jerr);
	if (!prefs || !json_is_object(prefs)) {
		snprintf(err, errlen,
		         "the profile's preferences %s are not a JSON object (%s): remove "
		         "the file or use a fresh profile",
		         path, prefs ? "not an object" : jerr.text);
		json_decref(prefs);
		prefs = NULL;
	}
out:
	return prefs;
}

int sess_write_preferences(const char *profile_dir, char *err, size_t errlen)
{
	char dir[1100];
	char path[1200];
	char tmp[1210];
	json_t *prefs = NULL;
	json_t *net;
	int rc = -1;

	snprintf(dir, sizeof(dir), "%s/Default", profile_dir);
	snprintf(path, sizeof(path), "%s/Preferences", dir);
	snprintf(tmp, sizeof(tmp), "%s.glassbox", path);
	if (mkdir(dir, 0700) != 0 && errno != EEXIST) {
		snprintf(err, errlen, "cannot create %s: %s", dir, strerror(errno));
		goto out;
	}
	prefs = load_prefs(path, err, errlen);
	if (!prefs)
		goto out;
	net = json_object_get(prefs, "net");
	if (!json_is_object(net)) {
		net = json_object();
		json_object_set_new(prefs, "net", net);
	}
	json_object_set_new(net, "network_prediction_options", json_integer(2));
	if (json_dump_file(prefs, tmp, JSON_COMPACT) != 0 || rename(tmp, path) != 0) {
		snprintf(err, errlen, "cannot write the profile's preferences %s: %s", path,
		         strerror(errno));
		remove(tmp);
		goto out;
	}
	rc = 0;
out:
	json_decref(prefs);
	return rc;
}

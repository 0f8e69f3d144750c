/*
 * manifest.c - a session's environment manifest: what ran (glassbox,
 * Chromium, the libraries that check and sign evidence), how Chromium
 * was launched, and fingerprints of the policy and config it ran under.
 * It goes into the session_opened record, so it is signed with the rest.
 */
#include "evidence/audit.h"
#include "evidence/evidence-private.h"

#include <png.h>
#include <sodium.h>
#include <sqlite3.h>
#include <stdlib.h>
#include <string.h>

#ifndef GLASSBOX_VERSION
#define GLASSBOX_VERSION "unknown"
#endif

/* sha256 of j's canonical JSON as a JSON string, or null. */
static json_t *canonical_hash(json_t *j)
{
	char hex[65];
	char *text;
	json_t *out;

	if (!j)
		return json_null();
	text = evid_json_canonical(j);
	if (!text)
		return NULL;
	evid_sha256_hex((const unsigned char *)text, strlen(text), hex);
	free(text);
	out = json_string(hex);
	return out;
}

json_t *evid_manifest_new(const struct evid_manifest_in *in)
{
	json_t *flags =
	    in && json_is_array(in->launch_flags) ? json_deep_copy(in->launch_flags) : json_array();
	json_t *libs;

	libs = json_pack("{s:s, s:s, s:s, s:s}", "jansson", JANSSON_VERSION, "libpng",
	                 png_get_libpng_ver(NULL), "libsodium", sodium_version_string(), "sqlite",
	                 sqlite3_libversion());
	return json_pack(
	    "{s:s, s:o, s:o, s:o, s:o, s:o}", "glassbox_version", GLASSBOX_VERSION,
	    "chromium_version",
	    in && in->chromium_version ? json_string(in->chromium_version) : json_null(),
	    "launch_flags", flags ? flags : json_null(), "policy_sha256",
	    canonical_hash(in ? in->policy : NULL), "config_sha256",
	    canonical_hash(in ? in->config : NULL), "libraries", libs ? libs : json_null());
}

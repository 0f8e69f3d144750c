/*
 * fuzz_relay.c - libFuzzer target for the CDP relay's allowlist
 * (relay/filter.c) on what a hostile client sends: any bytes parsed as a
 * CDP command; the filter decides without crashing, a refusal always
 * names its rule and says why, and a rewrite leaves params an object.
 * The same bytes as a browser message for relay/peek.c: whatever it reads
 * from the first member of a message that parses is what the parse says.
 *
 *   CC=clang meson setup build-fuzz -Dfuzz=enabled
 *   ninja -C build-fuzz relay/fuzz_relay && build-fuzz/relay/fuzz_relay -max_total_time=30
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "relay/relay.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const char *const mine[] = { "C1", "C2" };
	const struct relay_scope scope = { .context_id = "SESSCTX",
		                           .proxy_server = "http://127.0.0.1:1",
		                           .downloads_dir = "/tmp/d",
		                           .client_contexts = mine,
		                           .n_client_contexts = 2 };
	json_t *m = json_loadb((const char *)data, size, JSON_REJECT_DUPLICATES, NULL);
	json_t *params = json_object_get(m, "params");
	const char *method = json_string_value(json_object_get(m, "method"));
	char rule[48], why[256], peeked[64];
	enum relay_verdict v;
	enum relay_peek pk;
	int64_t id;

	if (method && (!params || json_is_object(params))) {
		v = relay_filter(&scope, method, params, "", rule, sizeof(rule), why, sizeof(why));
		if (v == RELAY_REFUSE && (!rule[0] || !why[0]))
			abort();
		if (v == RELAY_REWRITTEN && !json_is_object(params))
			abort();
	}
	pk = relay_peek_browser(data, size, &id, peeked, sizeof(peeked));
	if (json_is_object(m) && pk == RELAY_PEEK_REPLY &&
	    (!json_is_integer(json_object_get(m, "id")) ||
	     json_integer_value(json_object_get(m, "id")) != id))
		abort();
	if (json_is_object(m) && pk == RELAY_PEEK_EVENT && (!method || strcmp(method, peeked)))
		abort();
	json_decref(m);
	return 0;
}

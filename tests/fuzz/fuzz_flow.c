/*
 * fuzz_flow.c - libFuzzer target for the flow parser: any bytes, parsed
 * as JSON then as a flow (with a secret and variables in play), must give
 * a flow or an error, never a crash, a leak or an unbounded allocation.
 */
#include "flows/flows-private.h"

#include <stdint.h>
#include <stdlib.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct flow *f = NULL;
	char err[1024];
	json_t *doc;

	setenv("FUZZ_URL", "http://shop.test", 0);
	setenv("FUZZ_SECRET", "s3cret", 0);
	doc = json_loadb((const char *)data, size, JSON_REJECT_DUPLICATES, NULL);
	if (!doc)
		return 0;
	if (flow_parse("fuzz.json", doc, NULL, &f, err, sizeof(err)) == 0) {
		char *r = flow_redact(f, "a s3cret b");

		free(r);
		flow_free(f);
	}
	json_decref(doc);
	return 0;
}

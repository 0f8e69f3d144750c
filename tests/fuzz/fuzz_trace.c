/*
 * fuzz_trace.c - libFuzzer target for what trace/ reads from a record:
 * any bytes, parsed as JSON and taken as a tool_call record's body, go
 * through the Playwright code, the locator, the flow target and the HAR
 * entries of an action (with and without exchanges): never a crash, a
 * leak or an unbounded allocation.
 */
#include "trace/trace-private.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	json_t *body = json_loadb((const char *)data, size, JSON_DECODE_ANY, NULL);
	json_t *rec;
	json_t *out;
	char *s;

	if (!body)
		return 0;
	rec = json_pack("{s:s, s:s, s:o, s:[]}", "kind", "tool_call", "time",
	                "2026-03-01T12:00:00.000Z", "body", body, "artifacts");
	s = trace_playwright_code(rec);
	free(s);
	s = trace_playwright_locator(rec);
	free(s);
	json_decref(trace_flow_target(rec));
	out = trace_har_entries(rec, json_object_get(body, "exchanges"), 0, 1000, "page@fuzz");
	json_decref(out);
	json_decref(rec);
	return 0;
}

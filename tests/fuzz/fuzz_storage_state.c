/*
 * fuzz_storage_state.c - libFuzzer target for the storageState checks
 * (actions/storage_page.c, act_storage_check): what `glassbox profile
 * import` reads from a file a user hands it, and what a context-mode
 * profile's sealed state is parsed by once it authenticated.
 *
 * Input: any bytes, parsed as JSON and checked; a state that passes
 * yields CDP cookie parameters, which are walked.
 */
#include "actions/actions-private.h"

#include <stdint.h>
#include <stdlib.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	json_t *state = json_loadb((const char *)data, size, 0, NULL);
	json_t *cookies = NULL;
	json_t *c;
	char err[512];
	size_t i, n = 0;

	if (state && act_storage_check(state, &cookies, err, sizeof(err)) == 0)
		json_array_foreach(cookies, i, c) n += json_object_size(c);
	(void)n;
	json_decref(cookies);
	json_decref(state);
	return 0;
}

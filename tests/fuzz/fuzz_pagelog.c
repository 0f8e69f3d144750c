/*
 * fuzz_pagelog.c - libFuzzer target for actions/pagelog.c: the console
 * and network events a hostile page can make Chromium send, then every
 * query of the log over what was kept.
 *
 * Input: a JSON array of events [session, method, params] (session a
 * string or null); the queries then ask for each session seen, at every
 * level, with and without static requests and with a filter.
 */
#include "actions/pagelog.h"

#include <regex.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct act_pagelog *l;
	json_t *in = json_loadb((const char *)data, size, 0, NULL);
	json_t *ev, *got;
	size_t i, total, errors, warnings, hidden;
	unsigned idx;
	regex_t re;
	int lv;

	if (!json_is_array(in)) {
		json_decref(in);
		return 0;
	}
	l = act_pagelog_new();
	regcomp(&re, "api", REG_EXTENDED | REG_NOSUB);
	json_array_foreach(in, i, ev)
	{
		const char *method = json_string_value(json_array_get(ev, 1));

		if (method)
			act_pagelog_event(l, json_string_value(json_array_get(ev, 0)), method,
			                  json_array_get(ev, 2));
	}
	json_array_foreach(in, i, ev)
	{
		const char *sid = json_string_value(json_array_get(ev, 0));

		if (!sid)
			continue;
		for (lv = ACT_CONSOLE_ERROR; lv <= ACT_CONSOLE_DEBUG; lv++) {
			got = act_pagelog_console(l, sid, (enum act_console_level)lv, lv & 1,
			                          &total, &errors, &warnings);
			json_decref(got);
		}
		json_decref(act_pagelog_requests(l, sid, 0, NULL, &hidden));
		json_decref(act_pagelog_requests(l, sid, 1, &re, &hidden));
	}
	for (idx = 0; idx < 8; idx++)
		(void)act_pagelog_request(l, idx);
	regfree(&re);
	act_pagelog_free(l);
	json_decref(in);
	return 0;
}

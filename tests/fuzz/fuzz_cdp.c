/*
 * fuzz_cdp.c - libFuzzer target for the CDP message path: arbitrary bytes
 * go, on a conn without a socket (cdp_conn_new), through the fragment
 * assembler with a small ceiling (so the skim of oversized messages runs
 * too) and straight into the message handler, with calls pending and
 * waiters and a listener armed so that replies and events are routed.
 *
 * Input: byte 0 picks the ceiling, byte 1 the fragment size; the rest is
 * split at '\n' into messages.
 */
#include "cdp/cdp-private.h"

#include "common/log.h"

#include <stdint.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

struct fuzz_state {
	int events;
	struct cdp_conn *c;
};

static void fuzz_listener(void *user, const char *session_id, const char *method, json_t *params)
{
	struct fuzz_state *st = user;
	uint64_t id;

	st->events++;
	/* what a listener may do: send (bounded by CDP_MAX_CALLS) */
	if (session_id[0] && json_object_size(params) > 2 &&
	    !cdp_send(st->c, session_id, method, NULL, &id))
		cdp_forget(st->c, id);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fuzz_state st = { 0 };
	struct cdp_options opts = { 0 };
	struct cdp_waiter *w_any = NULL;
	struct cdp_waiter *w_load = NULL;
	struct cdp_error err;
	const char *p;
	const char *end;
	const char *nl;
	json_t *result = NULL;
	uint64_t ids[3] = { 0 };
	size_t chunk;
	size_t len;
	size_t off;
	size_t n;
	int i;

	gb_log_set_level((enum gb_log_level)(GB_LOG_ERROR + 1)); /* silence */
	if (size < 2)
		return 0;
	opts.max_frame_bytes = 16 + (size_t)data[0] * 8;
	chunk = 1 + (size_t)(data[1] % 64);
	if (cdp_conn_new(&opts, &st.c))
		return 0;
	for (i = 0; i < 3; i++)
		cdp_send(st.c, i == 1 ? "S" : NULL, "Fuzz.call", NULL, &ids[i]);
	cdp_arm(st.c, NULL, NULL, &w_any);
	cdp_arm(st.c, "S", "Page.loadEventFired", &w_load);
	cdp_on(st.c, NULL, NULL, fuzz_listener, &st);

	p = (const char *)data + 2;
	end = (const char *)data + size;
	while (p < end) {
		nl = memchr(p, '\n', (size_t)(end - p));
		len = nl ? (size_t)(nl - p) : (size_t)(end - p);
		/* the whole message to the handler, then in fragments */
		cdp_message_handle(st.c, p, len);
		for (off = 0; off < len || off == 0; off += n) {
			n = len - off < chunk ? len - off : chunk;
			cdp_message_rx(st.c, p + off, n, off + n >= len);
			if (!n)
				break;
		}
		p += len + (nl ? 1 : 0);
	}

	for (i = 0; i < 3; i++) {
		cdp_await(st.c, ids[i], 0, &result, &err);
		json_decref(result);
		result = NULL;
	}
	cdp_wait_event(st.c, w_any, 0, &result, &err);
	json_decref(result);
	cdp_disarm(st.c, w_load);
	cdp_close(st.c);
	return 0;
}

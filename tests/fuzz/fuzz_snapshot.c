/*
 * fuzz_snapshot.c - libFuzzer target for actions/snapshot.c: accessibility
 * trees, frame trees and DOM descriptions as a hostile page could make
 * Chromium report them, through the fetch rounds, the tree building and
 * the YAML rendering.
 *
 * Input: one JSON object; a CDP test double answers from it:
 *   "ax"    result of Accessibility.getFullAXTree without frameId
 *   "axf"   result of Accessibility.getFullAXTree with a frameId
 *   "tree"  result of Page.getFrameTree
 *   "desc"  array; DOM.describeNode of backend node k answers
 *           {"node": desc[k % size]}
 *   "dom"   result of DOMSnapshot.captureSnapshot (layout for hidden text)
 *   "hidden" 0, 1 or 2: enum snap_hidden_mode (off, flag, drop); "masked":
 *           a backend id whose value is masked
 *   "max"   max_chars; "root": backend id of a subtree root (optional)
 * A missing member makes that call fail like a CDP error. Seeds, from
 * the recorded fixtures in this shape: fixtures/ax/fuzz/ (pass it after a
 * scratch corpus directory, which libFuzzer then grows:
 * fuzz_snapshot corpus/ fixtures/ax/fuzz/).
 */
#include "actions/snapshot.h"
#include "cdp/cdp.h"
#include "common/log.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define FUZZ_MAX_PENDING 4096

static struct {
	json_t *in;
	struct {
		json_t *result;
		int live;
	} pending[FUZZ_MAX_PENDING];
	uint64_t next;
} F;

int cdp_send(struct cdp_conn *c, const char *session_id, const char *method, json_t *params,
             uint64_t *id_out)
{
	json_t *res = NULL;
	json_t *desc = json_object_get(F.in, "desc");
	size_t slot;

	(void)c;
	(void)session_id;
	if (F.next >= FUZZ_MAX_PENDING) {
		json_decref(params);
		return -CDP_ENOMEM;
	}
	if (!strcmp(method, "Accessibility.getFullAXTree"))
		res = json_object_get(F.in, json_object_get(params, "frameId") ? "axf" : "ax");
	else if (!strcmp(method, "Page.getFrameTree"))
		res = json_object_get(F.in, "tree");
	else if (!strcmp(method, "DOMSnapshot.captureSnapshot"))
		res = json_object_get(F.in, "dom");
	else if (!strcmp(method, "DOM.describeNode") && json_array_size(desc))
		res = json_pack("{s:O}", "node",
		                json_array_get(desc, (size_t)json_integer_value(
		                                         json_object_get(params, "backendNodeId")) %
		                                         json_array_size(desc)));
	else
		res = NULL;
	if (res && strcmp(method, "DOM.describeNode"))
		json_incref(res);
	slot = (size_t)F.next++;
	F.pending[slot].result = res;
	F.pending[slot].live = 1;
	json_decref(params);
	*id_out = slot + 1;
	return 0;
}

int cdp_await(struct cdp_conn *c, uint64_t id, int timeout_ms, json_t **result,
              struct cdp_error *err)
{
	size_t slot = (size_t)id - 1;
	int rc = 0;

	(void)c;
	(void)timeout_ms;
	if (id == 0 || slot >= F.next || !F.pending[slot].live)
		return -CDP_EINVAL;
	F.pending[slot].live = 0;
	if (!F.pending[slot].result) {
		snprintf(err->message, sizeof(err->message), "not in the input");
		rc = -CDP_EPROTOCOL;
	} else if (result) {
		*result = F.pending[slot].result;
		F.pending[slot].result = NULL;
	}
	json_decref(F.pending[slot].result);
	F.pending[slot].result = NULL;
	return rc;
}

void cdp_forget(struct cdp_conn *c, uint64_t id)
{
	size_t slot = (size_t)id - 1;

	(void)c;
	if (id && slot < F.next && F.pending[slot].live) {
		F.pending[slot].live = 0;
		json_decref(F.pending[slot].result);
		F.pending[slot].result = NULL;
	}
}

const char *cdp_strerror(int err)
{
	(void)err;
	return "cdp error";
}

static const char *fuzz_frame_session(void *user, const char *frame_id)
{
	(void)user;
	return frame_id[0] == 'O' ? "OOPIF" : NULL;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct snap_refmap map = { 0 };
	struct snap_options opt = { 0 };
	struct snap_ref root;
	struct snap_masked masked;
	char err[256];
	char *yaml = NULL;
	int truncated = 0;
	json_int_t max;
	size_t i;

	gb_log_set_level((enum gb_log_level)(GB_LOG_ERROR + 1)); /* silence */
	memset(&F, 0, sizeof(F));
	F.in = json_loadb((const char *)data, size, 0, NULL);
	if (!json_is_object(F.in))
		goto out;
	max = json_integer_value(json_object_get(F.in, "max"));
	opt.page_session_id = "S";
	opt.timeout_ms = 1000;
	opt.max_chars = max > 0 ? (size_t)max : 0;
	opt.frame_session = fuzz_frame_session;
	opt.hidden =
	    (enum snap_hidden_mode)(json_integer_value(json_object_get(F.in, "hidden")) & 3) % 3;
	masked.backend_node_id = (int)json_integer_value(json_object_get(F.in, "masked"));
	snprintf(masked.session_id, sizeof(masked.session_id), "S");
	opt.masked = &masked;
	opt.n_masked = 1;
	if (json_is_integer(json_object_get(F.in, "root"))) {
		memset(&root, 0, sizeof(root));
		snprintf(root.session_id, sizeof(root.session_id), "S");
		root.backend_node_id = (int)json_integer_value(json_object_get(F.in, "root"));
		opt.root = &root;
	}
	/* twice: the second snapshot reads the first one's frame numbers */
	for (i = 0; i < 2; i++) {
		if (act_snapshot_take((struct cdp_conn *)&F, &opt, &map, &yaml, &truncated, err,
		                      sizeof(err)) == 0 &&
		    (!yaml || (opt.max_chars && truncated && !strstr(yaml, "truncated"))))
			abort();
		free(yaml);
		yaml = NULL;
	}
	for (i = 0; i < F.next; i++)
		if (F.pending[i].live)
			abort(); /* a call neither awaited nor forgotten */
out:
	act_snapshot_clear(&map);
	json_decref(F.in);
	return 0;
}

/*
 * fuzz_admin.c - libFuzzer target for the admin socket's requests
 * (policy/admin.h): each input is one request line, handled against a
 * real store in a temporary data dir that holds a few approvals. Checks
 * that every answer is an object with a boolean "ok", and an error with a
 * code and a message when ok is false.
 *
 *   CC=clang meson setup build-fuzz -Dfuzz=enabled
 *   ninja -C build-fuzz store/fuzz_admin && build-fuzz/store/fuzz_admin -max_total_time=30
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/log.h"
#include "policy/admin.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static struct store *st;

static void init(void)
{
	static char dir[] = "/tmp/gb-fuzz-admin-XXXXXX";
	struct store_approval_request req = {
		.tenant = "acme",
		.fingerprint = "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
		.summary = "click button \"Delete\" on http://shop.test/",
	};
	struct store_approval a;
	char err[512];
	int i;

	gb_log_set_level(GB_LOG_ERROR);
	if (!mkdtemp(dir) || store_open(dir, &st, err, sizeof(err)) != 0)
		abort();
	for (i = 0; i < 4; i++)
		store_approval_create(st, &req, &a, err, sizeof(err));
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	json_t *req;
	json_t *resp;

	if (!st)
		init();
	req = json_loadb((const char *)data, size, JSON_REJECT_DUPLICATES, NULL);
	if (!req)
		return 0;
	resp = policy_admin_handle(st, req, "fuzz", 0);
	if (!json_is_object(resp) || !json_is_boolean(json_object_get(resp, "ok")))
		abort();
	if (!json_is_true(json_object_get(resp, "ok")) &&
	    (!json_string_value(json_object_get(json_object_get(resp, "error"), "code")) ||
	     !json_string_value(json_object_get(json_object_get(resp, "error"), "message"))))
		abort();
	json_decref(resp);
	json_decref(req);
	return 0;
}

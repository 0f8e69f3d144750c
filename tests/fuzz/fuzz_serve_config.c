/*
 * fuzz_serve_config.c - libFuzzer target for what an operator's config
 * file and an HTTP client's headers control in `glassbox serve`: the
 * config parser (every accepted config must be usable: tenants named,
 * limits in range) and the header checks of /mcp and bearer tokens.
 *
 * Input: first byte even: the rest is a config file; odd: the rest is
 * split at NUL bytes into header values fed to every check.
 *
 *   CC=clang meson setup build-fuzz -Dfuzz=enabled
 *   ninja -C build-fuzz mcp/fuzz_serve_config && build-fuzz/mcp/fuzz_serve_config -max_total_time=30
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "mcp/http-headers.h"
#include "mcp/serve.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void fuzz_config(const uint8_t *data, size_t size)
{
	struct mcp_serve_config *c = NULL;
	char err[512];
	json_t *root = json_loadb((const char *)data, size, 0, NULL);
	size_t i;

	if (mcp_serve_config_parse(root, &c, err, sizeof(err)) == 0) {
		if (!c || c->n_tenants == 0 || c->max_sessions < 1 || c->max_body_bytes < 1024)
			abort();
		for (i = 0; i < c->n_tenants; i++) {
			if (!c->tenants[i].name[0] || c->tenants[i].max_sessions < 1 ||
			    strchr(c->tenants[i].name, '/'))
				abort();
		}
	} else if (c || !err[0]) {
		abort();
	}
	mcp_serve_config_free(c);
	json_decref(root);
}

static void fuzz_headers(const uint8_t *data, size_t size)
{
	static const char allowed[1][128] = { "https://app.example" };
	char *copy = malloc(size + 1);
	const char *v;
	size_t off = 0;

	if (!copy)
		return;
	memcpy(copy, data, size);
	copy[size] = '\0';
	while (off <= size) {
		v = copy + off;
		(void)mcp_http_route("POST", v);
		(void)mcp_http_route(v, "/mcp");
		(void)mcp_http_host_ok(v, 1);
		(void)mcp_http_origin_ok(v, allowed, 1);
		(void)mcp_http_accept_ok(v, 1);
		(void)mcp_http_accept_ok(v, 0);
		(void)mcp_http_content_type_ok(v);
		(void)mcp_http_protocol_version_ok(v);
		(void)mcp_auth_bearer_matches(
		    v, (const unsigned char *)"0123456789abcdef0123456789abcdef");
		off += strlen(v) + 1;
	}
	free(copy);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size == 0)
		return 0;
	if (data[0] % 2 == 0)
		fuzz_config(data + 1, size - 1);
	else
		fuzz_headers(data + 1, size - 1);
	return 0;
}

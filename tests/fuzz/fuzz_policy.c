/*
 * fuzz_policy.c - libFuzzer target for a tenant's whole policy
 * (policy/tenant.h) and the egress checks it drives: the policy JSON
 * either parses or explains itself with every error named; a parsed
 * policy renders its effective form and warnings, and checks a URL and a
 * narrowing without crashing; a refusal always names its rule.
 *
 * Input: policy JSON, a NUL byte, then a URL (a NUL byte, then a session
 * narrowing's egress JSON).
 *
 *   CC=clang meson setup build-fuzz -Dfuzz=enabled
 *   ninja -C build-fuzz policy/fuzz_policy && build-fuzz/policy/fuzz_policy -max_total_time=30
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "policy/tenant.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const uint8_t *nul = memchr(data, 0, size);
	size_t cfg_len = nul ? (size_t)(nul - data) : size;
	struct policy_tenant *t = NULL;
	struct policy_tenant *n = NULL;
	struct policy_decision d;
	json_t *j = json_loadb((const char *)data, cfg_len, JSON_REJECT_DUPLICATES, NULL);
	json_t *narrow = NULL;
	json_t *eff;
	char err[4096];
	char *url = NULL;
	const char *rest = NULL;
	size_t rest_len = 0;
	int rc;

	if (!j)
		return 0;
	err[0] = '\0';
	rc = policy_tenant_parse(j, "fuzz.json", &t, err, sizeof(err));
	if (rc < 0) {
		if (!err[0] || strlen(err) >= sizeof(err)) {
			fprintf(stderr, "a refused policy without a reason\n");
			abort();
		}
		goto out;
	}
	eff = policy_tenant_effective(t);
	if (!eff || !policy_tenant_warnings(t) || strncmp(policy_tenant_hash(t), "sha256:", 7)) {
		fprintf(stderr, "a parsed policy without its effective form, warnings or hash\n");
		abort();
	}
	json_decref(eff);
	if (nul) {
		rest = (const char *)nul + 1;
		rest_len = size - cfg_len - 1;
		url = strndup(rest, rest_len);
	}
	if (url) {
		rc = policy_egress_check_url(policy_tenant_egress(t), url, &d);
		if (rc < 0 && (!d.rule[0] || !d.message[0] || d.allowed)) {
			fprintf(stderr, "a refusal without its rule or message: %s\n", url);
			abort();
		}
		if (strlen(url) < rest_len) {
			const char *nj = rest + strlen(url) + 1;

			narrow = json_loadb(nj, rest_len - strlen(url) - 1, 0, NULL);
			if (narrow && policy_tenant_narrow(t, narrow, &n, err, sizeof(err)) == 0) {
				rc = policy_egress_check_url(policy_tenant_egress(n), url, &d);
				if (rc < 0 && !d.rule[0]) {
					fprintf(stderr, "a narrowed refusal without its rule\n");
					abort();
				}
			}
		}
	}
out:
	policy_tenant_unref(n);
	policy_tenant_unref(t);
	json_decref(narrow);
	json_decref(j);
	free(url);
	return 0;
}

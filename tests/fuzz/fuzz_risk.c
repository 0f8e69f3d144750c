/*
 * fuzz_risk.c - libFuzzer target for what a tenant's config and a page
 * control in the risk classifier: the "risk" config object, and every
 * string fact of an action (all of which come from the page). Checks
 * that parsing either succeeds or explains itself, that classification
 * always decides, and that a summary never carries a control character.
 *
 * Input: config JSON, a NUL byte, then the facts separated by 0x01 (text,
 * name, aria-label, title, form action, form label, page URL, destination
 * URL, autocomplete, key, role, input type); the first byte after the NUL
 * picks the action kind and flags.
 *
 *   CC=clang meson setup build-fuzz -Dfuzz=enabled
 *   ninja -C build-fuzz store/fuzz_risk && build-fuzz/store/fuzz_risk -max_total_time=30
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "policy/fingerprint.h"
#include "policy/risk.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define NFIELDS 12

static void check_summary(const char *s)
{
	size_t i;

	for (i = 0; s[i]; i++) {
		unsigned char c = (unsigned char)s[i];

		if (c < 0x20 || c == 0x7F) {
			fprintf(stderr, "control character in summary: %s\n", s);
			abort();
		}
		if (c == 0xC2 && (unsigned char)s[i + 1] >= 0x80 &&
		    (unsigned char)s[i + 1] <= 0x9F) {
			fprintf(stderr, "C1 control character in summary: %s\n", s);
			abort();
		}
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const uint8_t *nul = memchr(data, 0, size);
	size_t cfg_len = nul ? (size_t)(nul - data) : size;
	char *fields[NFIELDS] = { 0 };
	char *copy = NULL;
	struct policy_risk *rules = NULL;
	struct policy_risk *shipped = NULL;
	struct policy_action_facts f;
	struct policy_risk_decision d;
	char fp[POLICY_FINGERPRINT_BYTES];
	char small[17];
	char err[512];
	json_t *cfg;
	size_t n = 0;
	size_t rest;
	char *p;

	cfg = json_loadb((const char *)data, cfg_len, 0, NULL);
	err[0] = '\0';
	if (policy_risk_parse(cfg, &rules, err, sizeof(err)) != 0 && !err[0])
		abort(); /* a refusal always says why */
	json_decref(cfg);
	if (policy_risk_parse(NULL, &shipped, err, sizeof(err)) != 0)
		abort();
	if (!nul || (size_t)(nul - data) + 1 >= size)
		goto out;
	rest = size - cfg_len - 2;
	copy = malloc(rest + 1);
	memcpy(copy, nul + 2, rest);
	copy[rest] = '\0';
	for (p = copy; n < NFIELDS; n++) {
		fields[n] = p;
		p = strchr(p, 0x01);
		if (!p)
			break;
		*p++ = '\0';
	}
	memset(&f, 0, sizeof(f));
	f.kind = (enum policy_action_kind)(nul[1] % POLICY_ACT_KIND_COUNT);
	f.submits_form = nul[1] & 0x10;
	f.is_destructive_form = nul[1] & 0x20;
	f.dialog_accept = nul[1] & 0x40;
	f.starts_download = nul[1] & 0x80;
	f.text = fields[0];
	f.name = fields[1];
	f.aria_label = fields[2];
	f.title = fields[3];
	f.form_action = fields[4];
	f.form_label = fields[5];
	f.page_url = fields[6];
	f.dest_url = fields[7];
	f.autocomplete = fields[8];
	f.key = fields[9];
	f.role = fields[10];
	f.input_type = fields[11];
	f.value = (const unsigned char *)copy;
	f.value_len = rest;
	f.file_count = rest;
	if (policy_risk_classify(shipped, &f, &d) != 0 || d.verdict > POLICY_RISK_FORBID)
		abort();
	check_summary(d.summary);
	if (rules && (policy_risk_classify(rules, &f, &d) != 0 || d.verdict > POLICY_RISK_FORBID))
		abort();
	policy_risk_summary(&f, small, sizeof(small));
	check_summary(small);
	policy_fingerprint(&f, fp, err, sizeof(err));
out:
	free(copy);
	policy_risk_free(rules);
	policy_risk_free(shipped);
	return 0;
}

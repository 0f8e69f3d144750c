/*
 * caps.c - capability groups: the opt-in sets of tools (Playwright MCP's
 * --caps), such as "vision" (coordinate-based mouse tools) and "testing"
 * (verifications and locators).
 *
 * Design note
 * - A tool belongs to one group or to none (core: always on). A group that
 *   is off hides its tools: absent from tools/list, refused if called.
 *   Every group is off unless turned on (fails closed).
 * - Groups are turned on by the server's --caps flag (a comma-separated
 *   list, parsed here) and by the "caps" key of the tenant's config (an
 *   array of names); the set in force is the union of both.
 * - An unknown group name is an error naming the known ones, never
 *   ignored: a typo must not silently leave a tool off (or on).
 * - Constant data and pure functions: callable from any thread.
 */
#include "actions/actions.h"

#include <stdio.h>
#include <string.h>

/* The known groups; a group's bit in a mask is 1 << its index. */
static const char *const group_names[] = { "vision", "testing", "pdf" };

#define N_GROUPS (sizeof(group_names) / sizeof(group_names[0]))

const char *act_caps_known(void)
{
	return "vision, testing, pdf";
}

int act_caps_bit(const char *group, unsigned *bit)
{
	size_t i;

	for (i = 0; group && i < N_GROUPS; i++) {
		if (!strcmp(group_names[i], group)) {
			*bit = 1u << i;
			return 0;
		}
	}
	return -1;
}

/* Adds the group name[0..len) to *mask; -1 with err when unknown. where
 * says where it was written, for the message. */
static int add_group(const char *name, size_t len, const char *where, unsigned *mask, char *err,
                     size_t errlen)
{
	char group[32];
	unsigned bit;

	if (len == 0 || len >= sizeof(group)) {
		snprintf(err, errlen,
		         "%s: \"%.*s\" is not a capability group: use a comma-separated list of %s",
		         where, (int)(len > 40 ? 40 : len), name, act_caps_known());
		return -1;
	}
	memcpy(group, name, len);
	group[len] = '\0';
	if (act_caps_bit(group, &bit) < 0) {
		snprintf(err, errlen, "%s: unknown capability group \"%s\": the groups are %s",
		         where, group, act_caps_known());
		return -1;
	}
	*mask |= bit;
	return 0;
}

int act_caps_parse_list(const char *list, unsigned *mask, char *err, size_t errlen)
{
	const char *p = list;

	while (p && *p) {
		const char *end = strchr(p, ',');
		size_t len = end ? (size_t)(end - p) : strlen(p);

		while (len && *p == ' ') {
			p++;
			len--;
		}
		while (len && p[len - 1] == ' ')
			len--;
		if (add_group(p, len, "--caps", mask, err, errlen) < 0)
			return -1;
		p = end ? end + 1 : p + strlen(p);
	}
	return 0;
}

int act_caps_parse_json(const json_t *caps, unsigned *mask, char *err, size_t errlen)
{
	size_t i;

	if (!caps)
		return 0;
	if (!json_is_array(caps)) {
		snprintf(err, errlen,
		         "policy.caps must be an array of capability group names, such as "
		         "[\"vision\", \"testing\"] (the groups are %s)",
		         act_caps_known());
		return -1;
	}
	for (i = 0; i < json_array_size(caps); i++) {
		const char *name = json_string_value(json_array_get(caps, i));

		if (!name) {
			snprintf(err, errlen, "policy.caps[%zu] must be a string: one of %s", i,
			         act_caps_known());
			return -1;
		}
		if (add_group(name, strlen(name), "policy.caps", mask, err, errlen) < 0)
			return -1;
	}
	return 0;
}

int act_caps_of_config(const struct act_config *cfg, unsigned *mask, char *err, size_t errlen)
{
	*mask = 0;
	if (act_caps_parse_list(cfg->caps, mask, err, errlen) < 0)
		return -1;
	return act_caps_parse_json(json_object_get(cfg->tenant_policy, "caps"), mask, err, errlen);
}

int act_caps_allows(unsigned mask, const char *group)
{
	unsigned bit;

	if (!group)
		return 1;
	if (act_caps_bit(group, &bit) < 0)
		return 0; /* a group this build does not know is never on */
	return (mask & bit) != 0;
}

const char *act_caps_refusal(const struct act_def *def, char *buf, size_t len)
{
	snprintf(buf, len,
	         "%s belongs to the capability group \"%s\", which is off: start glassbox with "
	         "--caps %s, or add \"caps\": [\"%s\"] to the policy",
	         def->name, def->caps ? def->caps : "core", def->caps ? def->caps : "core",
	         def->caps ? def->caps : "core");
	return buf;
}

/*
 * cmd_tools.c - `glassbox tools`: every browser tool with what its
 * descriptor says (effect, policy kind or exemption, capability group)
 * and the pipeline steps a call of it runs, as a text list, JSON, or the
 * Markdown table of docs/internals/pipeline.md (tests/check-pipeline-doc.sh
 * fails when the checked-in table differs).
 */
#include "actions/actions.h"
#include "cli/commands.h"
#include "policy/risk.h"

#include <jansson.h>
#include <stdio.h>
#include <string.h>

/* "click", or "exempt" when the tool never meets the risk rules. */
static const char *policy_of(const struct act_def *d)
{
	return d->policy.exempt ? "exempt"
	                        : policy_action_kind_name((enum policy_action_kind)d->policy.kind);
}

/* Every descriptor: the agents' tools, then the CLI's. */
static const struct act_def *tool_at(size_t i)
{
	return i < act_tool_count() ? act_tool_at(i) : act_internal_tool_at(i - act_tool_count());
}

static void print_markdown(void)
{
	const struct act_def *d;
	size_t i;
	int s;

	printf("| tool | effect | policy kind | caps |");
	for (s = 0; s < ACT_STEP_COUNT; s++)
		printf(" %s |", act_step_name((enum act_step)s));
	printf("\n|---|---|---|---|");
	for (s = 0; s < ACT_STEP_COUNT; s++)
		printf(":-:|");
	printf("\n");
	for (i = 0; (d = tool_at(i)); i++) {
		unsigned steps = act_def_steps(d);

		printf("| `%s`%s | %s | %s | %s |", d->name, i >= act_tool_count() ? " (CLI)" : "",
		       act_effect_name(d->effect), policy_of(d), d->caps ? d->caps : "core");
		for (s = 0; s < ACT_STEP_COUNT; s++)
			printf(" %s |", steps & ACT_STEP_BIT(s) ? "✓" : "");
		printf("\n");
	}
}

static json_t *tools_json(void)
{
	json_t *all = json_array();
	size_t i;
	int s;

	for (i = 0; i < act_tool_count(); i++) {
		const struct act_def *d = act_tool_at(i);
		unsigned steps = act_def_steps(d);
		json_t *list = json_array();

		for (s = 0; s < ACT_STEP_COUNT; s++)
			if (steps & ACT_STEP_BIT(s))
				json_array_append_new(list,
				                      json_string(act_step_name((enum act_step)s)));
		json_array_append_new(all, json_pack("{s:s, s:s, s:s, s:s*, s:s, s:b, s:o}", "name",
		                                     d->name, "effect", act_effect_name(d->effect),
		                                     "policy_kind", policy_of(d), "policy_exempt",
		                                     d->policy.exempt, "caps",
		                                     d->caps ? d->caps : "core", "checks_expect",
		                                     d->checks_expect, "steps", list));
	}
	return all;
}

int cli_cmd_tools(int argc, char **argv)
{
	json_t *all;
	size_t i;

	if (argc == 2 && !strcmp(argv[1], "--markdown")) {
		print_markdown();
		return 0;
	}
	if (argc == 2 && !strcmp(argv[1], "--json")) {
		all = tools_json();
		json_dumpf(all, stdout, JSON_INDENT(2));
		printf("\n");
		json_decref(all);
		return 0;
	}
	if (argc != 1) {
		fprintf(stderr, "glassbox tools: unexpected argument '%s'\n", argv[1]);
		cli_help_command(stderr, "tools");
		return 2;
	}
	for (i = 0; i < act_tool_count(); i++) {
		const struct act_def *d = act_tool_at(i);

		printf("%-26s %-9s %-9s %s\n", d->name, act_effect_name(d->effect), policy_of(d),
		       d->title);
	}
	return 0;
}
